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

/// A tiny JSON-RPC client over the daemon's socket.
struct Client {
    out: std::os::unix::net::UnixStream,
    input: std::io::BufReader<std::os::unix::net::UnixStream>,
    next: u64,
}

impl Client {
    fn connect(socket: &std::path::Path) -> Client {
        let stream = std::os::unix::net::UnixStream::connect(socket).unwrap();
        Client {
            input: std::io::BufReader::new(stream.try_clone().unwrap()),
            out: stream,
            next: 0,
        }
    }

    fn ok(&mut self, method: &str, params: Value) -> Value {
        use std::io::{BufRead, Write};
        self.next += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        writeln!(self.out, "{msg}").unwrap();
        loop {
            let mut line = String::new();
            self.input.read_line(&mut line).unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(self.next) {
                assert!(v.get("error").is_none(), "{v}");
                return v["result"].clone();
            }
        }
    }
}

/// Whether the process a hook recorded (see `crate::hook_pid`) still runs.
fn alive(recorded: &str) -> bool {
    crate::hook_pid::host_pid(recorded).is_some()
}

#[test]
fn the_daemon_serves_every_client_with_one_process_and_stops_it() {
    let env = Env::new();
    let pids = env.root().join("pids");
    // Records its host pid once per process, then denies every request.
    let hook = format!(
        r#"echo {} >> {}; {DENY_ALL}"#,
        crate::hook_pid::SELF_ID_SH,
        pids.display()
    );
    copse_hooks(
        &env,
        json!({"toolGate": [{"command": hook, "persistent": true}]}),
    );
    env.cmd()
        .args(["--enable", "daemon", "start"])
        .run()
        .success();
    let socket = env.copse_dir().join("daemon.sock");
    for conversation in ["conv-a", "conv-b", "conv-c"] {
        let mut c = Client::connect(&socket);
        c.ok(
            "initialize",
            json!({"workspaceRoots": [env.workspace()], "enabled": true}),
        );
        let sid =
            c.ok("session/open", json!({"conversationId": conversation}))["sessionId"].clone();
        let v = c.ok(
            "hooks/toolGate",
            json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}}),
        );
        assert_eq!(v["decision"], "deny", "{v}");
    }
    let started = std::fs::read_to_string(&pids).unwrap();
    let started: Vec<&str> = started.lines().collect();
    assert_eq!(
        started.len(),
        1,
        "one process served every client's session"
    );
    assert!(alive(started[0]));
    env.cmd().args(["daemon", "stop"]).run().success();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while alive(started[0]) {
        assert!(
            std::time::Instant::now() < deadline,
            "the persistent hook outlived the daemon"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
