//! Settings, enablement, trust pinning, notices and the dry-run tester.

use serde_json::{Value, json};

use crate::harness::Env;

fn settings(env: &Env) -> Value {
    serde_json::from_str(&std::fs::read_to_string(env.copse_dir().join("settings.json")).unwrap())
        .unwrap()
}

fn project_hook(env: &Env, marker: &std::path::Path) {
    env.script(
        "ws/.cursor/p.sh",
        &format!("cat >/dev/null; echo run >> {}", marker.display()),
    );
    env.project_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": ".cursor/p.sh"}]}})
            .to_string(),
    );
}

fn gate_runs(env: &Env) -> (usize, String) {
    let r = env
        .cmd()
        .args([
            "--json",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .run()
        .success();
    (crate::harness::hooks_ran(&r.json()), r.stderr())
}

#[test]
fn enable_and_disable_round_trip() {
    let env = Env::new();
    let marker = env.root().join("ran");
    env.script("home/.cursor/h.sh", &format!("touch {}", marker.display()));
    env.user_cursor(
        &json!({"hooks": {"beforeShellExecution": [{"command": "./h.sh"}]}}).to_string(),
    );
    assert_eq!(gate_runs(&env).0, 0, "off by default");
    env.cmd().args(["enable"]).run().success();
    assert_eq!(settings(&env)["cursorHooksEnabled"], true);
    assert_eq!(gate_runs(&env).0, 1);
    assert!(marker.exists());
    env.cmd().args(["disable"]).run().success();
    assert_eq!(settings(&env)["cursorHooksEnabled"], false);
    assert_eq!(gate_runs(&env).0, 0);
}

#[test]
fn enabling_over_a_corrupt_settings_file_keeps_it_aside() {
    let env = Env::new();
    env.write("copse/settings.json", "{ broken");
    let r = env.cmd().args(["enable"]).run().success();
    assert!(r.stderr().contains("corrupt"), "{}", r.stderr());
    assert_eq!(settings(&env)["cursorHooksEnabled"], true);
    let aside: Vec<_> = std::fs::read_dir(env.copse_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("corrupt"))
        .collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(
        std::fs::read_to_string(aside[0].path()).unwrap(),
        "{ broken"
    );
}

#[test]
fn trust_pins_config_content() {
    let env = Env::new();
    let marker = env.root().join("ran");
    project_hook(&env, &marker);
    env.cmd().args(["enable"]).run().success();
    assert_eq!(gate_runs(&env).0, 0, "untrusted");
    let r = env.cmd().args(["trust"]).run().success();
    assert!(
        r.stdout().contains(".cursor/p.sh"),
        "trust shows what may now run:\n{}",
        r.stdout()
    );
    let pinned = &settings(&env)["trustedWorkspaces"][0];
    assert_eq!(pinned["path"], env.workspace().display().to_string());
    assert!(
        pinned["configs"][env
            .workspace()
            .join(".cursor/hooks.json")
            .display()
            .to_string()]
        .is_string()
    );
    let (runs, stderr) = gate_runs(&env);
    assert_eq!(runs, 1);
    assert!(
        stderr.contains("running project hook `.cursor/p.sh`"),
        "{stderr}"
    );

    // The config changes (a pull, another branch): its hooks stop.
    env.project_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": ".cursor/p.sh"}, {"command": "echo pwned"}]}})
            .to_string(),
    );
    let (runs, stderr) = gate_runs(&env);
    assert_eq!(runs, 0, "a changed config must not run");
    assert!(
        stderr.contains("changed since the workspace was trusted"),
        "{stderr}"
    );
    let list = env.cmd().args(["--json", "list"]).run().success().json();
    let project: Vec<&Value> = list["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["scope"] == "project")
        .collect();
    assert!(
        project
            .iter()
            .all(|h| h["trust"] == "changed" && h["active"] == false),
        "{list}"
    );
    let human = env.cmd().args(["list"]).run().success();
    assert!(
        human.stdout().contains("changed since trusted"),
        "{}",
        human.stdout()
    );

    // Trust again: it runs.
    env.cmd().args(["trust"]).run().success();
    assert_eq!(gate_runs(&env).0, 2);

    // A config that appears after trusting (another dialect's file) is a change too.
    env.write("ws/.claude/settings.json", &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "echo sneaky"}]}]}}).to_string());
    assert_eq!(gate_runs(&env).0, 2, "the new Claude config must not run");

    env.cmd().args(["untrust"]).run().success();
    assert_eq!(gate_runs(&env).0, 0);
    assert_eq!(settings(&env)["trustedWorkspaces"], json!([]));
}

#[test]
fn project_hook_notice_is_printed_once_per_session() {
    let env = Env::new();
    let marker = env.root().join("ran");
    project_hook(&env, &marker);
    let lines: String = (0..3)
        .map(|_| {
            json!({"event": "toolGate", "tool": "run_shell", "input": {"command": "ls"}})
                .to_string()
                + "\n"
        })
        .collect();
    let file = env.write("s.jsonl", &lines);
    let r = env
        .cmd()
        .args(["--enable", "--trust", "replay"])
        .args([&file])
        .run()
        .success();
    assert_eq!(
        r.stderr().matches("running project hook").count(),
        1,
        "{}",
        r.stderr()
    );
    assert_eq!(std::fs::read_to_string(&marker).unwrap().lines().count(), 3);
}

#[test]
fn untrusted_preview_shows_what_trust_would_allow() {
    let env = Env::new();
    let marker = env.root().join("ran");
    project_hook(&env, &marker);
    let v = env
        .cmd()
        .args(["--json", "list", "--untrusted-preview"])
        .run()
        .success()
        .json();
    assert_eq!(v["hooks"].as_array().unwrap().len(), 1);
    assert_eq!(v["hooks"][0]["command"], ".cursor/p.sh");
    assert_eq!(v["unsandboxed"], json!([]));
    assert!(!marker.exists(), "the preview runs nothing");
    assert!(
        settings(&env).get("trustedWorkspaces").is_none(),
        "the preview trusts nothing"
    );
}

#[test]
fn dry_run_tester_prints_everything_and_records_nothing() {
    let env = Env::new();
    env.script(
        "home/.cursor/guard.sh",
        r#"cat >/dev/null; echo 'guard says no' >&2; echo '{"permission":"deny","agent_message":"not today"}'"#,
    );
    let cfg = env.user_cursor(
        &json!({"hooks": {
            "beforeShellExecution": [{"command": "./guard.sh", "matcher": "never-matches"}],
            "afterTabFileEdit": [{"command": "./tab.sh"}]
        }})
        .to_string(),
    );
    let r = env
        .cmd()
        .args(["test"])
        .args([&cfg])
        .args(["beforeShellExecution"])
        .run()
        .success();
    insta::assert_snapshot!("dry_run_human", r.redacted());
    let v = env
        .cmd()
        .args(["--json", "test"])
        .args([&cfg])
        .args(["beforeShellExecution"])
        .run()
        .success()
        .json();
    assert_eq!(v["summary"], "deny — not today");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["parse_ok"], true);
    assert_eq!(v["stderr"], "guard says no\n");
    let stdin: Value = serde_json::from_str(v["stdin"].as_str().unwrap()).unwrap();
    assert_eq!(stdin["hook_event_name"], "beforeShellExecution");
    assert_eq!(stdin["command"], "echo \"hello from a hook\"");
    // A given payload is merged over the fixture (issue 25): the field changes, the
    // rest of the fixture stays.
    let v = env
        .cmd()
        .args(["--json", "test"])
        .args([&cfg])
        .args([
            "beforeShellExecution",
            "--payload",
            r#"{"command":"rm -rf /"}"#,
        ])
        .run()
        .success()
        .json();
    let stdin: Value = serde_json::from_str(v["stdin"].as_str().unwrap()).unwrap();
    assert_eq!(stdin["command"], "rm -rf /");
    assert_eq!(stdin["hook_event_name"], "beforeShellExecution");
    // Errors name what exists.
    let r = env
        .cmd()
        .args(["test"])
        .args([&cfg])
        .args(["beforeShellExecution", "--entry", "2"])
        .run();
    assert_eq!(r.out.status.code(), Some(2));
    assert!(
        r.stderr()
            .contains("no hook for \"beforeShellExecution\" at entry 2"),
        "{}",
        r.stderr()
    );
    let r = env
        .cmd()
        .args(["test"])
        .args([&cfg])
        .args(["afterTabFileEdit"])
        .run();
    assert!(r.stderr().contains("not supported"), "{}", r.stderr());
    // The engine's state is left alone: nothing in the audit store, no settings written.
    assert!(!env.copse_dir().join("spine.db").exists());
    assert!(settings(&env).get("trustedWorkspaces").is_none());
    assert!(settings(&env).get("cursorHooksEnabled").is_none());
}

#[test]
fn dry_run_failures_are_summarised() {
    let env = Env::new();
    env.script("home/.cursor/bad.sh", "cat >/dev/null; echo not-json");
    let cfg =
        env.user_cursor(&json!({"hooks": {"preToolUse": [{"command": "./bad.sh"}]}}).to_string());
    let v = env
        .cmd()
        .args(["--json", "test"])
        .args([&cfg])
        .args(["preToolUse"])
        .run()
        .success()
        .json();
    assert_eq!(
        v["summary"],
        "failed — printed invalid JSON — response ignored"
    );
    assert_eq!(v["failure"], "invalid_json");
}

/// `test` says plainly that the hook really runs, and runs it with the hook's own
/// timeout (1 s here, not a fixed 15 s): the hook starts (its marker is written) and
/// is killed by that timeout.
#[test]
fn test_really_runs_the_hook_with_its_own_timeout() {
    let env = Env::new();
    let marker = env.root().join("started");
    env.script(
        "home/.cursor/slow.sh",
        &format!(
            "cat >/dev/null; echo started > {}; sleep 30",
            marker.display()
        ),
    );
    let cfg = env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": "./slow.sh", "timeout": 1}]}})
            .to_string(),
    );
    let r = env
        .cmd()
        .args(["test"])
        .arg(&cfg)
        .args(["beforeShellExecution"])
        .run()
        .success();
    let out = r.stdout();
    assert!(out.contains("the hook really runs"), "{out}");
    assert!(out.contains("timeout 1000 ms"), "{out}");
    assert!(out.contains("killed (timeout)"), "{out}");
    assert!(!out.contains("side effect"), "{out}");
    assert!(marker.exists(), "the hook really ran");

    std::fs::remove_file(&marker).unwrap();
    let v = env
        .cmd()
        .args(["--json", "test"])
        .arg(&cfg)
        .args(["beforeShellExecution"])
        .run()
        .success()
        .json();
    assert_eq!(v["timeout_ms"], 1000, "{v}");
    assert_eq!(v["failure"], "timeout", "{v}");
    assert_eq!(v["exit_code"], Value::Null, "{v}");
    assert!(marker.exists(), "the hook really ran");
}
