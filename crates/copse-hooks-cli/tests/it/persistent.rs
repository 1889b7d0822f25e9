//! Persistent hooks through the CLI: `test` speaks the protocol, and a hook that
//! crashed into the broken state shows in `list` and `doctor` (from the audit store).

use serde_json::{Value, json};

use crate::harness::Env;

fn copse_hooks(env: &Env, hooks: Value) {
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": hooks}).to_string(),
    );
}

/// A persistent sh hook: says hello, then denies every request with its id.
const DENY_ALL: &str = r#"printf '%s\n' '{"hello":{"protocol":1,"events":["toolGate"]}}'; while read -r line; do id=${line#*\"id\":}; id=${id%%,*}; printf '{"id":%s,"response":{"decision":"deny","agentMessage":"persistent no"}}\n' "$id"; done"#;

#[test]
fn test_runs_a_persistent_hook_over_the_protocol() {
    let env = Env::new();
    copse_hooks(
        &env,
        json!({"toolGate": [{"command": DENY_ALL, "persistent": true, "idleTimeout": 30}]}),
    );
    let source = env.copse_dir().join("hooks.json");
    let v = env
        .cmd()
        .args(["--json", "test"])
        .arg(&source)
        .arg("toolGate")
        .run()
        .success()
        .json();
    assert_eq!(v["persistent"], true);
    assert_eq!(v["summary"], "deny — persistent no");
    assert_eq!(v["exit_code"], 0);
    let out = env
        .cmd()
        .arg("test")
        .arg(&source)
        .arg("toolGate")
        .run()
        .success();
    assert!(
        out.stdout()
            .contains("persistent: started, sent this one request"),
        "{}",
        out.stdout()
    );
    let v = env.cmd().args(["--json", "list"]).run().success().json();
    assert_eq!(v["hooks"][0]["persistent"], true);
    assert_eq!(v["hooks"][0]["idle_timeout_ms"], 30000);
    assert!(v["hooks"][0].get("broken").is_none());
}

#[test]
fn a_broken_persistent_hook_shows_in_list_and_doctor() {
    let env = Env::new();
    copse_hooks(
        &env,
        json!({"toolGate": [{"command": "echo starting >&2; exit 3", "persistent": true}]}),
    );
    let gate = json!({"event": "toolGate", "tool": "run_shell", "input": {"command": "ls"}});
    let text: String = (0..4).map(|_| format!("{gate}\n")).collect();
    let file = env.write("session.jsonl", &text);
    env.cmd()
        .args(["--enable", "--json", "replay"])
        .arg(&file)
        .run()
        .success();
    let v = env.cmd().args(["--json", "list"]).run().success().json();
    let broken = v["hooks"][0]["broken"].as_str().unwrap();
    assert!(
        broken.starts_with("is broken: it failed 3 times in a row"),
        "{broken}"
    );
    let out = env.cmd().args(["list"]).run().success();
    insta::assert_snapshot!("persistent_list_broken", out.redacted());
    let v = env.cmd().args(["--json", "doctor"]).run().success().json();
    let p = &v["persistent"][0];
    assert_eq!(p["state"], "broken");
    assert_eq!(p["event"], "toolGate");
    assert_eq!(p["idle_timeout_ms"], 600000);
    let out = env.cmd().args(["doctor"]).run().success();
    assert!(
        out.stdout().contains("Persistent hooks"),
        "{}",
        out.stdout()
    );
    // The audit store has the broken runs.
    let v = env.cmd().args(["--json", "log"]).run().success().json();
    assert!(
        v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["failure"] == "broken"),
        "{v}"
    );
}

#[test]
fn lint_accepts_the_persistent_fields_and_flags_bad_values() {
    let env = Env::new();
    let path = env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [
            {"command": "./a", "persistent": true, "idleTimeout": 5},
            {"command": "./b", "persistent": "yes"},
            {"command": "./c", "idleTimeout": 5}
        ]}})
        .to_string(),
    );
    let out = env.cmd().arg("lint").arg(&path).run();
    insta::assert_snapshot!("persistent_lint", out.redacted());
}
