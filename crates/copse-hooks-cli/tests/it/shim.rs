//! `copse-hooks shim` and `install` / `uninstall`: real shim processes, real hook
//! processes, real agent config files in a temp home.

use std::io::Write as _;
use std::process::{Output, Stdio};

use serde_json::{Value, json};

use crate::harness::{Env, redact};

const SID: &str = "5f0c9a2e-0000-4000-8000-000000000001";

/// Writes copse's settings: hooks on, the temp dir writable, and `extra`'s fields.
pub(crate) fn enabled(env: &Env, extra: Value) {
    let mut settings = json!({"cursorHooksEnabled": true, "sandboxWritablePaths": [env.root()]});
    for (k, v) in extra.as_object().unwrap() {
        settings[k] = v.clone();
    }
    env.write("copse/settings.json", &settings.to_string());
}

/// Writes copse's own user hook file with `hooks` as its events.
pub(crate) fn copse_hooks(env: &Env, hooks: Value) {
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": hooks}).to_string(),
    );
}

fn shim(env: &Env, agent: &str, payload: &str) -> Output {
    shim_with(env, agent, payload, &[])
}

fn claude(event: &str, extra: Value) -> String {
    let mut p = json!({"session_id": SID, "cwd": "/nonexistent", "hook_event_name": event});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p.to_string()
}

fn bash(command: &str) -> String {
    claude(
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": command}}),
    )
}

/// The answer on stdout as JSON, or `Null` when there is none.
pub(crate) fn stdout_json(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    if text.trim().is_empty() {
        return Value::Null;
    }
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// A hook command that denies a call mentioning `rm -rf`.
pub(crate) const DENY_RM: &str =
    r#"grep -q 'rm -rf' && printf '%s' '{"decision":"deny","agentMessage":"no rm -rf"}' || true"#;

#[test]
fn denies_and_allows_a_claude_shell_command() {
    let env = Env::new();
    enabled(&env, json!({}));
    copse_hooks(
        &env,
        json!({"toolGate": [{"command": DENY_RM, "matcher": "^run_shell$"}]}),
    );
    let out = shim(&env, "claude", &bash("rm -rf /"));
    assert_eq!(out.status.code(), Some(0));
    let answer = stdout_json(&out);
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecisionReason"],
        "no rm -rf"
    );
    let out = shim(&env, "claude", &bash("ls"));
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "no objection is no answer");
    // Both runs are in the audit log under the agent's session id.
    let log = env.cmd().args(["--json", "log"]).run().success().json();
    let runs = log["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r["session_id"] == SID));
}

#[test]
fn the_calling_agents_own_config_never_runs_but_another_agents_can() {
    let env = Env::new();
    let marker = env.root().join("claude-hook-ran");
    env.write(
        "home/.claude/settings.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "command": format!("touch {}; echo 'claude-format deny' >&2; exit 2", marker.display())}]}]}})
        .to_string(),
    );
    enabled(&env, json!({}));
    // Claude runs its own settings itself: the shim must not run them again.
    let out = shim(&env, "claude", &bash("ls"));
    assert!(out.stdout.is_empty());
    assert!(!marker.exists(), "the shim ran Claude's own hook");
    // Gemini with `also: ["claude"]` honours the Claude-format hook.
    enabled(&env, json!({"shim": {"gemini": {"also": ["claude"]}}}));
    let gemini = json!({"session_id": SID, "cwd": "/nonexistent", "hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command", "tool_input": {"command": "ls"}})
    .to_string();
    let out = shim(&env, "gemini", &gemini);
    let answer = stdout_json(&out);
    assert_eq!(answer["decision"], "deny");
    assert_eq!(answer["reason"], "claude-format deny");
    assert!(marker.exists());
}

#[test]
fn internal_errors_fail_closed_on_gated_events_and_are_recorded() {
    let env = Env::new();
    enabled(&env, json!({}));
    let out = shim(&env, "claude", "this is not json");
    assert_eq!(out.status.code(), Some(2));
    let missing_tool = claude("PreToolUse", json!({}));
    let out = shim(&env, "codex", &missing_tool);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tool_name"));
    // An observation with a bad payload is not blocked.
    let out = shim(&env, "claude", &claude("PostToolUse", json!({})));
    assert_eq!(out.status.code(), Some(0));
    // Corrupt settings: a gated event fails closed.
    env.write("copse/settings.json", "{corrupt");
    let out = shim(
        &env,
        "gemini",
        &json!({"session_id": SID, "hook_event_name": "BeforeAgent", "prompt": "hi"}).to_string(),
    );
    assert_eq!(out.status.code(), Some(2));
    let log = std::fs::read_to_string(env.copse_dir().join("shim-errors.log")).unwrap();
    insta::assert_snapshot!(redact(&strip_times(&log), &env.root()));
}

#[test]
fn a_panic_in_the_shim_unwinds_to_a_fail_closed_answer() {
    let env = Env::new();
    enabled(&env, json!({}));
    let marker = env.root().join("ran");
    copse_hooks(
        &env,
        json!({"toolGate": [{"command": format!("touch {}", marker.display())}]}),
    );
    let call = claude(
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "ls"}}),
    );
    // Control: without the seam the hook runs and the call is not blocked.
    let out = shim_with(&env, "claude", &call, IN_PROCESS);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(marker.exists(), "the control hook did not run");
    std::fs::remove_file(&marker).unwrap();
    // The seam panics before anything runs: the panic unwinds (the binary links its
    // unwinder statically, see build.rs) to the fail-closed answer, and is recorded.
    let mut vars = IN_PROCESS.to_vec();
    vars.push(("COPSE_SHIM_TEST_PANIC", "1"));
    let out = shim_with(&env, "claude", &call, &vars);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("internal error (panic)"));
    assert!(!marker.exists());
    let log = std::fs::read_to_string(env.copse_dir().join("shim-errors.log")).unwrap();
    assert!(log.contains("internal error (panic)"), "{log}");
}

fn strip_times(log: &str) -> String {
    log.lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v["at_ms"] = json!(0);
            v.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn follow_ups_come_back_at_stop_within_the_budget_across_processes() {
    let env = Env::new();
    enabled(&env, json!({}));
    copse_hooks(
        &env,
        json!({"stop": [{"command": r#"printf '%s' '{"queueMessage":{"text":"run the tests"}}'"#}]}),
    );
    let stop = claude("Stop", json!({"stop_hook_active": false}));
    let mut continued = 0;
    for _ in 0..7 {
        let out = shim(&env, "claude", &stop);
        let answer = stdout_json(&out);
        if answer["decision"] == "block" {
            assert_eq!(answer["reason"], "run the tests");
            continued += 1;
        }
    }
    assert_eq!(continued, 5, "the continuation budget is 5 per human turn");
    // A human prompt starts a new turn tree: the held follow-ups and the next come back.
    shim(
        &env,
        "claude",
        &claude("UserPromptSubmit", json!({"prompt": "go on"})),
    );
    let answer = stdout_json(&shim(&env, "claude", &stop));
    assert_eq!(answer["decision"], "block");
    assert!(answer["reason"].as_str().unwrap().contains("run the tests"));
}

#[test]
fn session_start_environment_reaches_later_calls() {
    let env = Env::new();
    enabled(&env, json!({}));
    copse_hooks(
        &env,
        json!({
            "sessionStart": [{"command": r#"printf '%s' '{"sessionEnv":{"E2E_MODE":"strict"}}'"#}],
            "toolGate": [{"command": r#"[ "$E2E_MODE" = strict ] && printf '%s' '{"decision":"deny","agentMessage":"strict mode"}' || true"#}]
        }),
    );
    let out = shim(&env, "claude", &bash("ls"));
    assert!(out.stdout.is_empty(), "no session env before sessionStart");
    shim(
        &env,
        "claude",
        &claude("SessionStart", json!({"source": "startup"})),
    );
    let answer = stdout_json(&shim(&env, "claude", &bash("ls")));
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecisionReason"],
        "strict mode"
    );
    // Another session of the same agent does not see it.
    let other = bash("ls").replace(SID, "another-session");
    assert!(shim(&env, "claude", &other).stdout.is_empty());
    // Session end drops the session's state.
    let sessions = env.copse_dir().join("shim/sessions/claude");
    let count = || std::fs::read_dir(&sessions).unwrap().count();
    let before = count();
    shim(
        &env,
        "claude",
        &claude("SessionEnd", json!({"reason": "other"})),
    );
    assert_eq!(
        count(),
        before - 2,
        "the session's state and lock file are gone"
    );
}

#[test]
fn cursor_payloads_from_the_golden_fixture_are_answered_in_cursors_format() {
    let env = Env::new();
    enabled(&env, json!({}));
    copse_hooks(
        &env,
        json!({"toolGate": [{"command": r#"printf '%s' '{"decision":"deny","agentMessage":"no","userMessage":"blocked"}'"#}]}),
    );
    let golden: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../copse-hooks/tests/fixtures/wire-payloads.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let mut payload = golden["cursor"]["toolGate/beforeShellExecution/shell"].clone();
    payload["workspace_roots"] = json!([env.workspace()]);
    let answer = stdout_json(&shim(&env, "cursor", &payload.to_string()));
    assert_eq!(
        answer,
        json!({"permission": "deny", "user_message": "blocked", "agent_message": "no"})
    );
}

fn claude_settings() -> &'static str {
    // Four-space indentation and a key order that is not alphabetical.
    "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\n                \"matcher\": \"Bash\",\n                \"hooks\": [\n                    {\n                        \"type\": \"command\",\n                        \"command\": \"./guard.sh\"\n                    }\n                ]\n            }\n        ]\n    },\n    \"env\": {\n        \"A\": \"1\"\n    }\n}\n"
}

#[test]
fn install_is_idempotent_keeps_the_file_and_uninstall_restores_it() {
    let env = Env::new();
    let path = env.write("home/.claude/settings.json", claude_settings());
    let out = env
        .cmd()
        .args(["install", "--agent", "claude"])
        .run()
        .success();
    insta::assert_snapshot!("install_claude", out.redacted());
    let installed = std::fs::read_to_string(&path).unwrap();
    let v: Value = serde_json::from_str(&installed).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "hooks", "env"], "key order kept");
    assert!(installed.contains("\n    \"model\""), "indentation kept");
    let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "the user's hook stays, the shim is added");
    assert_eq!(v["hooks"].as_object().unwrap().len(), 12);
    // Again: nothing changes.
    env.cmd()
        .args(["install", "--agent", "claude"])
        .run()
        .success();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);
    let list = env.cmd().args(["list"]).run().success();
    let agents: String = list
        .redacted()
        .lines()
        .skip_while(|l| *l != "Agents:")
        .take_while(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!("list_agents", agents);
    let out = env
        .cmd()
        .args(["uninstall", "--agent", "claude"])
        .run()
        .success();
    insta::assert_snapshot!("uninstall_claude", out.redacted());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), claude_settings());
    assert!(
        std::fs::read_dir(env.copse_dir().join("backups/claude"))
            .unwrap()
            .next()
            .is_some(),
        "a backup was made"
    );
}

#[test]
fn uninstall_after_other_changes_removes_only_the_shim() {
    let env = Env::new();
    let path = env.write(
        "home/.gemini/settings.json",
        "{\"ui\": {\"theme\": \"dark\"}}\n",
    );
    env.cmd()
        .args(["install", "--agent", "gemini"])
        .run()
        .success();
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        v["hooks"]["BeforeTool"][0]["hooks"][0]["name"],
        "copse-hooks"
    );
    v["ui"]["theme"] = json!("light");
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    env.cmd()
        .args(["uninstall", "--agent", "gemini"])
        .run()
        .success();
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(after, json!({"ui": {"theme": "light"}}));
}

#[test]
fn adopt_moves_hooks_out_and_uninstall_puts_them_back_byte_identical() {
    let env = Env::new();
    let original = "{\n  \"version\": 1,\n  \"hooks\": {\n    \"beforeShellExecution\": [\n      {\n        \"command\": \"./guard.sh\"\n      }\n    ]\n  }\n}\n";
    let path = env.write("home/.cursor/hooks.json", original);
    env.cmd()
        .args(["install", "--agent", "cursor", "--adopt"])
        .run()
        .success();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(v["hooks"].get("beforeShellExecution").is_none());
    assert!(
        v["hooks"]["preToolUse"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with("shim --agent cursor --deadline 55")
    );
    assert_eq!(v["hooks"]["preToolUse"][0]["timeout"], 60);
    let adopted = env.copse_dir().join("adopted/cursor/hooks.json");
    let a: Value = serde_json::from_str(&std::fs::read_to_string(&adopted).unwrap()).unwrap();
    assert_eq!(
        a["hooks"]["beforeShellExecution"][0]["command"],
        "./guard.sh"
    );
    let list = env.cmd().args(["--json", "list"]).run().success().json();
    assert_eq!(
        list["agents"][0]["adopted_events"],
        json!(["beforeShellExecution"])
    );
    env.cmd()
        .args(["uninstall", "--agent", "cursor"])
        .run()
        .success();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    assert!(!adopted.exists());
}

#[test]
fn gemini_hooks_can_be_adopted_and_read_by_another_agents_shim() {
    let env = Env::new();
    let marker = env.root().join("gemini-hook-ran");
    let hook = format!(
        "touch {}; echo 'gemini-format deny' >&2; exit 2",
        marker.display()
    );
    let settings = json!({"hooks": {"BeforeTool": [{"matcher": "run_shell_command",
        "hooks": [{"type": "command", "command": hook}]}]}});
    let path = env.write("home/.gemini/settings.json", &settings.to_string());
    enabled(&env, json!({"shim": {"claude": {"also": ["gemini"]}}}));
    // Claude with `also: ["gemini"]` honours the Gemini-format hook.
    let answer = stdout_json(&shim(&env, "claude", &bash("ls")));
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(marker.exists(), "the Gemini-format hook did not run");
    std::fs::remove_file(&marker).unwrap();
    // --adopt moves it under copse, where the Gemini shim runs it with its dialect.
    env.cmd()
        .args(["install", "--agent", "gemini", "--adopt"])
        .run()
        .success();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let before_tool = v["hooks"]["BeforeTool"].as_array().unwrap();
    assert!(
        before_tool
            .iter()
            .all(|e| e.to_string().contains("shim --agent gemini")),
        "the adopted hook is still in Gemini's settings: {v}"
    );
    let adopted = env.copse_dir().join("adopted/gemini/settings.json");
    let a: Value = serde_json::from_str(&std::fs::read_to_string(&adopted).unwrap()).unwrap();
    assert_eq!(a["hooks"]["BeforeTool"][0]["matcher"], "run_shell_command");
    let gemini = json!({"session_id": SID, "cwd": "/nonexistent", "hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command", "tool_input": {"command": "ls"}})
    .to_string();
    let answer = stdout_json(&shim(&env, "gemini", &gemini));
    assert_eq!(answer["decision"], "deny");
    assert_eq!(answer["reason"], "gemini-format deny");
    assert!(marker.exists(), "the adopted Gemini hook did not run");
}

#[test]
fn hooks_run_unless_explicitly_disabled() {
    let env = Env::new();
    copse_hooks(
        &env,
        json!({"toolGate": [{"command": DENY_RM, "matcher": "^run_shell$"}]}),
    );
    // No enablement key at all: the shim's registration is the opt-in.
    env.write(
        "copse/settings.json",
        &json!({"sandboxWritablePaths": [env.root()]}).to_string(),
    );
    let answer = stdout_json(&shim(&env, "claude", &bash("rm -rf /")));
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    // `copse-hooks disable` turns them off in the agents too.
    env.cmd().args(["disable"]).run().success();
    let out = shim(&env, "claude", &bash("rm -rf /"));
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
}

// The daemon path (`shim/handle` on $COPSE_DIR/daemon.sock) and its fallbacks.

/// Starts the shim with `vars` set and `payload` written to its stdin (then closed);
/// `output` says whether its stdout and stderr are captured.
fn spawn_shim(
    env: &Env,
    agent: &str,
    payload: &str,
    vars: &[(&str, &str)],
    output: bool,
) -> std::process::Child {
    let mut cmd = env.cmd().args(["shim", "--agent", agent]);
    for (k, v) in vars {
        cmd = cmd.env(k, v);
    }
    let pipe = || {
        if output {
            Stdio::piped()
        } else {
            Stdio::null()
        }
    };
    let mut child = cmd
        .cmd
        .stdin(Stdio::piped())
        .stdout(pipe())
        .stderr(pipe())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    child
}

fn shim_with(env: &Env, agent: &str, payload: &str, vars: &[(&str, &str)]) -> Output {
    spawn_shim(env, agent, payload, vars, true)
        .wait_with_output()
        .unwrap()
}

const IN_PROCESS: &[(&str, &str)] = &[("COPSE_SHIM_DAEMON", "0")];

fn served(env: &Env, agent: &str) -> Value {
    let text =
        std::fs::read_to_string(env.copse_dir().join(format!("shim/served/{agent}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Waits for the daemon to record that it served `agent` (it does so after replying).
fn served_by_daemon(env: &Env, agent: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let path = env.copse_dir().join(format!("shim/served/{agent}.json"));
        if path.exists() && served(env, agent)["path"] == "daemon" {
            return true;
        }
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Stops the test's daemon (if one runs) when the test ends, pass or fail.
struct StopDaemon<'a>(&'a Env);

impl Drop for StopDaemon<'_> {
    fn drop(&mut self) {
        let _ = self.0.cmd().args(["daemon", "stop"]).run();
    }
}

fn daemon_pid(env: &Env) -> i32 {
    std::fs::read_to_string(env.copse_dir().join("daemon.sock.lock"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The daemon's connection threads (`/proc/PID/task` entries named so).
fn connection_threads(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim() == "copse-hooks-con")
        .count()
}

#[test]
fn the_daemon_reuses_its_connection_threads_and_an_idle_connection_blocks_no_call() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    enabled(&env, json!({}));
    copse_hooks(&env, json!({"toolGate": [{"command": DENY_RM}]}));
    // Control: the daemon serves the call and the hook denies.
    let out = shim(&env, "claude", &bash("rm -rf /tmp/x"));
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    assert!(served_by_daemon(&env, "claude"));
    let pid = daemon_pid(&env);
    // Twenty calls one after another: served by the threads already there.
    for _ in 0..20 {
        let out = shim(&env, "claude", &bash("rm -rf /tmp/x"));
        assert_eq!(
            stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
    }
    let threads = connection_threads(pid);
    assert!(
        (1..=4).contains(&threads),
        "{threads} connection threads after 21 sequential calls"
    );
    // A host that connects and says nothing holds one thread; calls go on.
    let idle =
        std::os::unix::net::UnixStream::connect(env.copse_dir().join("daemon.sock")).unwrap();
    for _ in 0..3 {
        let out = shim(&env, "claude", &bash("rm -rf /tmp/x"));
        assert_eq!(
            stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
    }
    drop(idle);
}

#[test]
fn the_daemon_is_started_on_demand_and_serves_the_call() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    enabled(&env, json!({}));
    copse_hooks(&env, json!({"toolGate": [{"command": DENY_RM}]}));
    assert!(!env.copse_dir().join("daemon.sock").exists());
    let out = shim(&env, "claude", &bash("rm -rf /tmp/x"));
    assert_eq!(out.status.code(), Some(0));
    let answer = stdout_json(&out);
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{answer}"
    );
    assert!(served_by_daemon(&env, "claude"));
    let status = env.cmd().args(["daemon", "status"]).run();
    assert!(
        status.stdout().starts_with("running"),
        "{}",
        status.stdout()
    );
    // The daemon recorded the run under the agent's session id.
    let log = env.cmd().args(["--json", "log"]).run().stdout();
    let runs: Value = serde_json::from_str(&log).unwrap();
    let text = runs.to_string();
    assert!(text.contains(SID) && text.contains("deny"), "{log}");
    // Turned off: the same call runs in-process, with the same answer.
    let out = shim_with(&env, "claude", &bash("rm -rf /tmp/x"), IN_PROCESS);
    assert_eq!(stdout_json(&out), answer);
    assert_eq!(served(&env, "claude")["path"], "in-process");
    assert_eq!(served(&env, "claude")["fallback"], "COPSE_SHIM_DAEMON=0");
    // The daemon a shim started answers `daemon stop` (it does not inherit the shim's
    // blocked termination signals).
    let stopped = env.cmd().args(["daemon", "stop"]).run();
    assert!(stopped.out.status.success(), "{}", stopped.stderr());
}

#[test]
fn both_paths_share_the_session_state() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    enabled(&env, json!({}));
    copse_hooks(
        &env,
        json!({
            "sessionStart": [{"command": r#"printf '%s' '{"sessionEnv":{"E2E_MODE":"strict"}}'"#}],
            "toolGate": [{"command": r#"[ "$E2E_MODE" = strict ] && printf '%s' '{"decision":"deny","agentMessage":"strict mode"}' || true"#}],
            "afterToolUse": [{"command": r#"printf '%s' '{"queueMessage":{"text":"run the tests"}}'"#}]
        }),
    );
    // sessionStart through the daemon, the gate in-process: the environment carries.
    shim(
        &env,
        "claude",
        &claude("SessionStart", json!({"source": "startup"})),
    );
    let answer = stdout_json(&shim_with(&env, "claude", &bash("ls"), IN_PROCESS));
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecisionReason"],
        "strict mode"
    );
    // A follow-up queued in-process comes back at a stop served by the daemon.
    shim_with(
        &env,
        "claude",
        &claude(
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": "ok"}),
        ),
        IN_PROCESS,
    );
    let answer = stdout_json(&shim(
        &env,
        "claude",
        &claude("Stop", json!({"stop_hook_active": false})),
    ));
    assert_eq!(answer["decision"], "block", "{answer}");
    assert_eq!(answer["reason"], "run the tests");
    assert!(served_by_daemon(&env, "claude"));
}

#[test]
fn no_daemon_to_be_had_falls_back_in_process() {
    let env = Env::new();
    enabled(&env, json!({}));
    copse_hooks(&env, json!({"toolGate": [{"command": DENY_RM}]}));
    // A directory where the socket should be: nothing can connect, and a daemon
    // cannot bind there.
    std::fs::create_dir_all(env.copse_dir().join("daemon.sock/x")).unwrap();
    let out = shim(&env, "claude", &bash("rm -rf /tmp/x"));
    let answer = stdout_json(&out);
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"],
        "deny",
        "{answer} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let served = served(&env, "claude");
    assert_eq!(served["path"], "in-process");
    assert!(
        served["fallback"]
            .as_str()
            .unwrap()
            .starts_with("no daemon: "),
        "{served}"
    );
}

#[test]
fn a_stale_socket_is_replaced_by_a_started_daemon() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    enabled(&env, json!({}));
    copse_hooks(&env, json!({"toolGate": [{"command": DENY_RM}]}));
    // A socket file nobody listens on (a killed daemon's).
    drop(std::os::unix::net::UnixListener::bind(env.copse_dir().join("daemon.sock")).unwrap());
    assert!(env.copse_dir().join("daemon.sock").exists());
    let answer = stdout_json(&shim(&env, "claude", &bash("rm -rf /tmp/x")));
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(served_by_daemon(&env, "claude"));
}

/// A fake daemon on the socket that reads one request and then does `then`.
fn fake_daemon(
    env: &Env,
    then: impl FnOnce(std::os::unix::net::UnixStream) + Send + 'static,
) -> std::thread::JoinHandle<Value> {
    use std::io::BufRead as _;
    let listener =
        std::os::unix::net::UnixListener::bind(env.copse_dir().join("daemon.sock")).unwrap();
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(&stream)
            .read_line(&mut line)
            .unwrap();
        then(stream);
        serde_json::from_str(&line).unwrap()
    })
}

#[test]
fn a_daemon_that_dies_mid_call_or_answers_garbage_fails_closed() {
    for (name, reply) in [
        ("closed", None),
        ("garbage", Some("this is not json\n")),
        (
            "error",
            Some(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}"#),
        ),
        ("no result", Some("{\"jsonrpc\":\"2.0\",\"id\":1}\n")),
    ] {
        for (payload, gated) in [
            (bash("ls"), true),
            (
                claude(
                    "PostToolUse",
                    json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": "ok"}),
                ),
                false,
            ),
        ] {
            let env = Env::new();
            enabled(&env, json!({}));
            let reply = reply.map(str::to_owned);
            let fake = fake_daemon(&env, move |mut s| {
                if let Some(r) = reply {
                    // The shim may hang up as soon as it has read a bad line, so a
                    // write that finds the socket closed is not this test's failure.
                    let _ = s.write_all(format!("{r}\n").as_bytes());
                }
            });
            let out = shim(&env, "claude", &payload);
            let request = fake.join().unwrap();
            assert_eq!(request["method"], "shim/handle");
            assert_eq!(request["params"]["agent"], "claude");
            let stderr = String::from_utf8_lossy(&out.stderr);
            if gated {
                assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
                assert!(stderr.contains("failing closed"), "{name}: {stderr}");
            } else {
                assert_eq!(out.status.code(), Some(0), "{name}: {stderr}");
                assert!(out.stdout.is_empty());
            }
            let log = std::fs::read_to_string(env.copse_dir().join("shim-errors.log")).unwrap();
            assert!(log.contains("daemon"), "{name}: {log}");
        }
    }
}

#[test]
fn the_shim_never_sends_llm_keys_to_the_daemon() {
    let env = Env::new();
    enabled(&env, json!({}));
    let fake = fake_daemon(&env, |_| {});
    shim_with(
        &env,
        "claude",
        &bash("ls"),
        &[
            ("ANTHROPIC_API_KEY", "sk-secret"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("CLAUDE_PROJECT_DIR", "/proj"),
        ],
    );
    let request = fake.join().unwrap();
    let env_sent = &request["params"]["env"];
    assert_eq!(env_sent["CLAUDE_PROJECT_DIR"], "/proj");
    assert!(env_sent.get("ANTHROPIC_API_KEY").is_none(), "{env_sent}");
    assert!(env_sent.get("OPENAI_API_KEY").is_none(), "{env_sent}");
    assert!(!request.to_string().contains("sk-secret"));
}

#[test]
fn an_older_daemon_without_shim_handle_means_in_process() {
    let env = Env::new();
    enabled(&env, json!({}));
    copse_hooks(&env, json!({"toolGate": [{"command": DENY_RM}]}));
    let fake = fake_daemon(&env, |mut s| {
        s.write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"method not found: shim/handle\"}}\n",
        )
        .unwrap();
    });
    let answer = stdout_json(&shim(&env, "claude", &bash("rm -rf /tmp/x")));
    fake.join().unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(served(&env, "claude")["path"], "in-process");
}

#[test]
fn a_daemon_killed_while_a_gated_hook_runs_fails_closed() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    enabled(&env, json!({}));
    let started = env.root().join("started");
    copse_hooks(
        &env,
        json!({"toolGate": [{"command": format!("touch {}; sleep 30", started.display())}]}),
    );
    // Warm the daemon with a call no hook matches.
    shim(
        &env,
        "claude",
        &claude("Notification", json!({"message": "hi"})),
    );
    let pid = daemon_pid(&env);
    let payload = bash("ls");
    let call = spawn_shim(&env, "claude", &payload, &[], true);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !started.exists() {
        assert!(std::time::Instant::now() < deadline, "the hook never ran");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = call.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("mid-call"));
}

#[test]
fn observations_run_detached_on_the_daemon_and_are_audited() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    enabled(&env, json!({}));
    let go = env.root().join("go");
    let done = env.root().join("done");
    copse_hooks(
        &env,
        json!({"notification": [{"command": format!(
            "while [ ! -e {go} ]; do sleep 0.02; done; touch {done}",
            go = go.display(),
            done = done.display()
        )}]}),
    );
    // The hook waits for `go`, which only exists after the shim has answered: the
    // shim returning at all shows the hook runs detached.
    let out = shim(
        &env,
        "claude",
        &claude("Notification", json!({"message": "hi"})),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(!done.exists());
    std::fs::write(&go, "").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let log = env.cmd().args(["--json", "log"]).run().stdout();
        if log.contains("notification") && log.contains(SID) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the detached run was not audited: {log}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(done.exists());
}

/// The binary's path and times out of an agents report.
fn redact_agents(text: &str, env: &Env) -> String {
    let exe = env!("CARGO_BIN_EXE_copse-hooks");
    let text = text.replace(exe, "[EXE]");
    let text = redact(&text, &env.root());
    text.lines()
        .map(|l| match l.find(" since ") {
            Some(i) => format!("{} since [TIME]", &l[..i]),
            None => l.to_string(),
        })
        .map(|l| match l.find("\"since_ms\": ") {
            Some(i) => format!("{}\"since_ms\": [MS]", &l[..i]),
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn doctor_and_list_show_each_agents_shim_adopted_hooks_and_serving_path() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    enabled(&env, json!({}));
    env.write(
        "home/.cursor/hooks.json",
        "{\"version\": 1, \"hooks\": {\"beforeShellExecution\": [{\"command\": \"./guard.sh\"}]}}\n",
    );
    for args in [
        &["install", "--agent", "cursor", "--adopt"][..],
        &["install", "--agent", "claude"][..],
        &["install", "--agent", "gemini"][..],
    ] {
        env.cmd().args(args).run().success();
    }
    // Claude's calls go to the daemon, Cursor's run in-process; Gemini's shim has not
    // been called.
    shim(&env, "claude", &bash("ls"));
    assert!(served_by_daemon(&env, "claude"));
    shim_with(
        &env,
        "cursor",
        &json!({"conversation_id": SID, "hook_event_name": "stop", "status": "completed"})
            .to_string(),
        IN_PROCESS,
    );
    let human = env.cmd().arg("doctor").run().success().stdout();
    let section: String = human
        .lines()
        .skip_while(|l| *l != "Agents")
        .take_while(|l| !l.starts_with("Most recent"))
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("doctor_agents_human", redact_agents(&section, &env));
    let json = env.cmd().args(["--json", "doctor"]).run().success().json();
    insta::assert_snapshot!(
        "doctor_agents_json",
        redact_agents(
            &serde_json::to_string_pretty(&json["agents"]).unwrap(),
            &env
        )
    );
    let list = env.cmd().args(["--json", "list"]).run().success().json();
    assert_eq!(list["agents"], json["agents"], "list and doctor agree");
    let list_human = env.cmd().arg("list").run().success().stdout();
    let agents: String = list_human
        .lines()
        .skip_while(|l| *l != "Agents:")
        .take_while(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("list_agents_human", redact_agents(&agents, &env));
}

/// Alive and not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| !rest.trim().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// The host pids whose command line is exactly `argv` (hooks run in their own pid
/// namespace with a private `/proc`: the pid a hook sees is not the host's, so the
/// test finds it by a unique command line in the host's `/proc`).
fn host_pids(argv: &[&str]) -> Vec<i32> {
    let want: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want))
        .filter(|pid| alive(*pid))
        .collect()
}

/// Waits (bounded) until `marker` exists and a process runs `argv`; its host pid.
fn wait_for_hook(marker: &std::path::Path, argv: &[&str]) -> i32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if marker.exists()
            && let Some(pid) = host_pids(argv).first()
        {
            return *pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the hook never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Waits (bounded) for every process running `argv` to be gone; whether they went
/// (what survived is killed, so the test leaves nothing behind).
fn gone(argv: &[&str]) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !host_pids(argv).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let left = host_pids(argv);
    for pid in &left {
        // SAFETY: clean up what this test's hook left.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    left.is_empty()
}

#[test]
fn a_terminated_in_process_shim_kills_its_hook_and_exits_128_plus_the_signal() {
    // The shim starts its signal handling only when the call runs in this process
    // (the daemon path runs no hook here): that late start must still catch TERM.
    let env = Env::new();
    enabled(&env, json!({}));
    let marker = env.root().join("hook-started");
    let argv = ["sleep", "1000.101"];
    copse_hooks(
        &env,
        json!({"toolGate": [{"command": format!(
            "touch {}; exec sleep 1000.101",
            marker.display()
        ), "matcher": "^run_shell$", "timeout": 600}]}),
    );
    let mut child = spawn_shim(&env, "claude", &bash("ls"), IN_PROCESS, false);
    let hook = wait_for_hook(&marker, &argv);
    assert!(alive(hook), "the hook is not running");
    // SAFETY: a plain kill of the child this test started.
    unsafe { libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{status:?}");
    assert!(gone(&argv), "the hook survived the shim's TERM");
}

// One overlay rule on every path: what a project `sessionStart` hook exports is kept
// per (scope, root) and filtered before it is stored; it never becomes the base
// environment of a later hook (issue 22, the shim's revival of the overlay escape).

/// A hook command that writes its environment to `file` (atomically) and says nothing.
fn dump_env(file: &std::path::Path) -> String {
    format!("env > {f}.tmp && mv {f}.tmp {f}; true", f = file.display())
}

/// A Claude payload whose `cwd` is the test's workspace (the shim's root).
fn claude_in(env: &Env, event: &str, extra: Value) -> String {
    let mut p: Value = serde_json::from_str(&claude(event, extra)).unwrap();
    p["cwd"] = json!(env.workspace());
    p.to_string()
}

fn env_names(file: &std::path::Path) -> std::collections::BTreeMap<String, String> {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("the hook did not run ({}): {e}", file.display()));
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A trusted project whose `sessionStart` hook exports `LD_PRELOAD` and a harmless
/// variable, a user `sessionStart` hook exporting a harmless variable, and gate hooks
/// (user sandboxed, user `sandbox: false`, project sandboxed) that record what they see.
fn overlay_scenario(env: &Env, vars: &[(&str, &str)]) {
    enabled(env, json!({}));
    let user = env.root().join("user-env.txt");
    let unsandboxed = env.root().join("nosandbox-env.txt");
    let project = env.root().join("project-env.txt");
    copse_hooks(
        env,
        json!({
            "sessionStart": [{"command": r#"printf '%s' '{"sessionEnv":{"USER_FLAG":"u1"}}'"#}],
            "toolGate": [
                {"command": dump_env(&user)},
                {"command": dump_env(&unsandboxed), "sandbox": false}
            ]
        }),
    );
    env.write(
        "ws/.copse/hooks.json",
        &json!({"version": 1, "hooks": {
            "sessionStart": [{"command": r#"printf '%s' '{"sessionEnv":{"LD_PRELOAD":"/tmp/copse-evil.so","BASH_ENV":"/tmp/copse-evil.sh","PROJ_FLAG":"p1"}}'"#}],
            "toolGate": [{"command": dump_env(&project)}]
        }})
        .to_string(),
    );
    env.cmd().args(["trust"]).run().success();
    let out = shim_with(
        env,
        "claude",
        &claude_in(env, "SessionStart", json!({"source": "startup"})),
        vars,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = shim_with(
        env,
        "claude",
        &claude_in(
            env,
            "PreToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"}}),
        ),
        vars,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // Controls: every gate hook ran and recorded its environment.
    let user = env_names(&user);
    let unsandboxed = env_names(&unsandboxed);
    let project = env_names(&project);
    for (who, seen) in [
        ("the user hook", &user),
        ("the sandbox:false hook", &unsandboxed),
        ("the project hook", &project),
    ] {
        assert!(!seen.contains_key("LD_PRELOAD"), "{who} saw LD_PRELOAD");
        assert!(!seen.contains_key("BASH_ENV"), "{who} saw BASH_ENV");
    }
    // The project's harmless variable reaches its own (sandboxed) hooks only.
    assert_eq!(project.get("PROJ_FLAG").map(String::as_str), Some("p1"));
    assert!(
        !user.contains_key("PROJ_FLAG"),
        "a project overlay reached a user hook"
    );
    assert!(!unsandboxed.contains_key("PROJ_FLAG"));
    // The user's reaches the user's sandboxed hooks, never an unsandboxed one.
    assert_eq!(user.get("USER_FLAG").map(String::as_str), Some("u1"));
    assert!(!project.contains_key("USER_FLAG"));
    assert!(!unsandboxed.contains_key("USER_FLAG"));
    // What was stored is per scope and root, already filtered.
    let dir = env.copse_dir().join("shim/sessions/claude");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let overlays = stored["overlays"].to_string();
    assert!(
        !overlays.contains("LD_PRELOAD") && !overlays.contains("BASH_ENV"),
        "{overlays}"
    );
    assert!(
        overlays.contains("PROJ_FLAG") && overlays.contains("\"project\""),
        "{overlays}"
    );
    assert!(stored.get("env").is_none(), "{stored}");
}

#[test]
fn a_project_session_start_overlay_never_reaches_user_or_unsandboxed_hooks_in_process() {
    let env = Env::new();
    overlay_scenario(&env, IN_PROCESS);
    assert_eq!(served(&env, "claude")["path"], "in-process");
}

#[test]
fn a_project_session_start_overlay_never_reaches_user_or_unsandboxed_hooks_via_the_daemon() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    overlay_scenario(&env, &[]);
    assert!(served_by_daemon(&env, "claude"));
}

#[test]
fn an_old_flat_session_environment_is_dropped_with_a_warning() {
    let env = Env::new();
    enabled(&env, json!({}));
    let user = env.root().join("user-env.txt");
    copse_hooks(&env, json!({"toolGate": [{"command": dump_env(&user)}]}));
    let start = claude_in(&env, "SessionStart", json!({"source": "startup"}));
    assert_eq!(
        shim_with(&env, "claude", &start, IN_PROCESS).status.code(),
        Some(0)
    );
    let dir = env.copse_dir().join("shim/sessions/claude");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    // What an older copse-hooks wrote: one flat map, scope unknown.
    std::fs::write(
        &file,
        r#"{"env":{"LD_PRELOAD":"/tmp/copse-evil.so","OLD_FLAG":"1"},"epoch":0,"used":0,"pending":[],"announced":[]}"#,
    )
    .unwrap();
    let gate = claude_in(
        &env,
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "ls"}}),
    );
    let out = shim_with(&env, "claude", &gate, IN_PROCESS);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let seen = env_names(&user);
    assert!(!seen.contains_key("LD_PRELOAD") && !seen.contains_key("OLD_FLAG"));
    let log = std::fs::read_to_string(env.copse_dir().join("shim-errors.log")).unwrap();
    assert!(
        log.contains("older copse-hooks") && log.contains("OLD_FLAG"),
        "{log}"
    );
    // The file was rewritten without it: the warning is given once.
    let stored = std::fs::read_to_string(&file).unwrap();
    assert!(!stored.contains("OLD_FLAG"), "{stored}");
}

// A deadline on every agent call: `shim --deadline SECONDS` answers the agent's block
// on a gated event (nothing on an observation) whatever is slow, logs why and kills
// the hooks it started; an agent that times out its hook would let the action through.

/// Starts `shim --agent AGENT --deadline SECS` (stdout and stderr captured).
fn spawn_shim_deadline(
    env: &Env,
    agent: &str,
    secs: &str,
    payload: &str,
    vars: &[(&str, &str)],
) -> std::process::Child {
    let mut cmd = env
        .cmd()
        .args(["shim", "--agent", agent, "--deadline", secs]);
    for (k, v) in vars {
        cmd = cmd.env(k, v);
    }
    let mut child = cmd
        .cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A refused command line exits before reading its stdin: a broken pipe is fine.
    let _ = child.stdin.take().unwrap().write_all(payload.as_bytes());
    child
}

/// Waits for the shim to exit; a shim still running after a generous bound (the
/// deadline under test is 1 s) is killed and the test fails rather than hangs.
fn finish(mut child: std::process::Child) -> Output {
    let bound = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > bound {
            let _ = child.kill();
            panic!("the shim outlived its deadline");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn shim_errors(env: &Env) -> String {
    std::fs::read_to_string(env.copse_dir().join("shim-errors.log")).unwrap_or_default()
}

#[test]
fn a_hook_that_never_ends_is_answered_with_a_block_at_the_deadline_and_killed() {
    let env = Env::new();
    enabled(&env, json!({}));
    let marker = env.root().join("hook-started");
    let argv = ["sleep", "1000.202"];
    copse_hooks(
        &env,
        json!({"toolGate": [{"command": format!("touch {}; exec sleep 1000.202", marker.display()),
            "timeout": 600}]}),
    );
    let child = spawn_shim_deadline(&env, "claude", "1", &bash("ls"), IN_PROCESS);
    // Control: the hook really ran (and was running when the deadline passed).
    wait_for_hook(&marker, &argv);
    let out = finish(child);
    assert_eq!(out.status.code(), Some(2), "the agent's block: {out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("deadline"), "{stderr}");
    assert!(gone(&argv), "the hook outlived the shim's deadline");
    let log = shim_errors(&env);
    assert!(
        log.contains("deadline of 1 s passed while running hooks in-process")
            && log.contains("PreToolUse"),
        "{log}"
    );
}

#[test]
fn an_observation_past_the_deadline_is_answered_with_nothing() {
    let env = Env::new();
    enabled(&env, json!({}));
    let marker = env.root().join("hook-started");
    let argv = ["sleep", "1000.303"];
    copse_hooks(
        &env,
        json!({"afterToolUse": [{"command": format!("touch {}; exec sleep 1000.303", marker.display()),
            "timeout": 600}]}),
    );
    let payload = claude(
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": "ok"}),
    );
    let child = spawn_shim_deadline(&env, "claude", "0.5", &payload, IN_PROCESS);
    wait_for_hook(&marker, &argv);
    let out = finish(child);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty());
    assert!(gone(&argv), "the hook outlived the shim's deadline");
    assert!(shim_errors(&env).contains("deadline of 0.5 s"));
}

/// A daemon started for a test that will SIGSTOP it, serving a Copse hook that denies
/// `rm`: resumed and stopped when the test ends, pass or fail.
struct DaemonToStop<'a>(&'a Env, i32);

impl<'a> DaemonToStop<'a> {
    fn start(env: &'a Env) -> Self {
        enabled(env, json!({}));
        copse_hooks(env, json!({"toolGate": [{"command": DENY_RM}]}));
        let started = env.cmd().args(["daemon", "start"]).run();
        assert!(started.out.status.success(), "{}", started.stderr());
        DaemonToStop(env, daemon_pid(env))
    }
}

impl Drop for DaemonToStop<'_> {
    fn drop(&mut self) {
        // SAFETY: a plain kill of the daemon this test started.
        unsafe { libc::kill(self.1, libc::SIGCONT) };
        let _ = self.0.cmd().args(["daemon", "stop"]).run();
    }
}

#[test]
fn a_stopped_daemon_is_answered_with_a_block_at_the_deadline() {
    let env = Env::new();
    let daemon = DaemonToStop::start(&env);
    let pid = daemon.1;
    // Control: the daemon serves the call (the hook runs there and denies).
    let out = finish(spawn_shim_deadline(
        &env,
        "claude",
        "30",
        &bash("rm -rf /tmp/x"),
        &[],
    ));
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    assert!(served_by_daemon(&env, "claude"));
    // SAFETY: a plain kill of the daemon this test started.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let out = finish(spawn_shim_deadline(&env, "claude", "1", &bash("ls"), &[]));
    assert_eq!(out.status.code(), Some(2), "block, not allow: {out:?}");
    let log = shim_errors(&env);
    assert!(log.contains("deadline of 1 s passed while"), "{log}");
}

#[test]
fn a_bad_deadline_is_refused_with_a_clear_error_and_the_agents_block() {
    let env = Env::new();
    for bad in ["0", "-1", "soon", "NaN", "inf"] {
        let out = finish(spawn_shim_deadline(
            &env,
            "claude",
            bad,
            &bash("ls"),
            IN_PROCESS,
        ));
        assert_eq!(out.status.code(), Some(2), "{bad}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--deadline"), "{bad}: {stderr}");
    }
}

#[test]
fn an_agent_that_never_closes_stdin_is_answered_with_a_block_at_the_deadline() {
    let env = Env::new();
    let _daemon = DaemonToStop::start(&env);
    // Control: with its payload sent and stdin closed, the call is served by the
    // daemon and denied by the hook.
    let out = finish(spawn_shim_deadline(
        &env,
        "claude",
        "30",
        &bash("rm -rf /tmp/x"),
        &[],
    ));
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    // Half a payload and a stdin left open: the deadline answers, not a hang.
    let mut child = env
        .cmd()
        .args(["shim", "--agent", "claude", "--deadline", "1"])
        .cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"hook_event_name\": \"PreToolUse\", ")
        .unwrap();
    let out = finish(child);
    drop(stdin);
    assert_eq!(out.status.code(), Some(2), "block, not allow: {out:?}");
    let log = shim_errors(&env);
    assert!(
        log.contains("deadline of 1 s passed while reading the payload"),
        "{log}"
    );
}

/// An installed agent config with this executable's path replaced by `[EXE]`.
fn installed_config(path: &std::path::Path) -> String {
    let exe = env!("CARGO_BIN_EXE_copse-hooks");
    std::fs::read_to_string(path).unwrap().replace(exe, "[EXE]")
}

#[test]
fn install_writes_an_explicit_timeout_and_a_shorter_deadline_for_every_agent() {
    let env = Env::new();
    let mut all = String::new();
    for (agent, file) in [
        ("claude", "home/.claude/settings.json"),
        ("gemini", "home/.gemini/settings.json"),
        ("codex", "home/.codex/hooks.json"),
        ("cursor", "home/.cursor/hooks.json"),
    ] {
        env.cmd()
            .args(["install", "--agent", agent])
            .run()
            .success();
        let path = env.root().join(file);
        let text = installed_config(&path);
        let v: Value = serde_json::from_str(&text).unwrap();
        // Every entry added carries the timeout (Gemini in milliseconds) and the
        // shim's deadline below it.
        for (event, entries) in v["hooks"].as_object().unwrap() {
            for e in entries.as_array().unwrap() {
                let hook = if agent == "cursor" { e } else { &e["hooks"][0] };
                let want = if agent == "gemini" { 60_000 } else { 60 };
                assert_eq!(hook["timeout"], want, "{agent} {event}");
                assert!(
                    hook["command"]
                        .as_str()
                        .unwrap()
                        .ends_with(&format!("shim --agent {agent} --deadline 55")),
                    "{agent} {event}"
                );
            }
        }
        let first = v["hooks"].as_object().unwrap().iter().next().unwrap();
        all.push_str(&format!(
            "{agent} {}: {}\n",
            first.0,
            serde_json::to_string(&first.1[0]).unwrap()
        ));
        // Uninstall still restores (here: removes) exactly what was there.
        env.cmd()
            .args(["uninstall", "--agent", agent])
            .run()
            .success();
        assert!(
            !path.exists(),
            "{agent}: install created it, uninstall removes it"
        );
    }
    insta::assert_snapshot!("install_entries_with_timeout_and_deadline", all);
}

#[test]
fn reinstalling_over_an_entry_without_a_deadline_brings_it_up_to_date() {
    let env = Env::new();
    let exe = env!("CARGO_BIN_EXE_copse-hooks");
    let old = json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command",
        "command": format!("{exe} shim --agent claude")}]}]}});
    let path = env.write("home/.claude/settings.json", &old.to_string());
    env.cmd()
        .args(["install", "--agent", "claude"])
        .run()
        .success();
    let v: Value = serde_json::from_str(&installed_config(&path)).unwrap();
    let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 1, "the old entry is replaced, not doubled: {v}");
    assert_eq!(
        pre[0]["hooks"][0],
        json!({"type": "command", "command": "[EXE] shim --agent claude --deadline 55", "timeout": 60, "onFailure": "block"}),
        "Claude Code itself blocks the call when the shim cannot answer"
    );
    env.cmd()
        .args(["uninstall", "--agent", "claude"])
        .run()
        .success();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), old.to_string());
}

#[test]
fn doctor_names_a_shim_installed_without_a_deadline_until_it_is_reinstalled() {
    let env = Env::new();
    env.cmd()
        .args(["install", "--agent", "claude"])
        .run()
        .success();
    // What an older install left: entries and a manifest without the deadline.
    let manifest = env.copse_dir().join("installed.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace(" --deadline 55", "")).unwrap();
    let settings = env.root().join("home/.claude/settings.json");
    let text = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(&settings, text.replace(" --deadline 55", "")).unwrap();
    let doctor = env.cmd().args(["--json", "doctor"]).run().success().json();
    assert!(
        doctor
            .to_string()
            .contains("has no --deadline (an older install)"),
        "{doctor}"
    );
    env.cmd()
        .args(["install", "--agent", "claude"])
        .run()
        .success();
    assert!(
        std::fs::read_to_string(&settings)
            .unwrap()
            .contains("--deadline 55")
    );
    let doctor = env.cmd().args(["--json", "doctor"]).run().success().json();
    assert!(
        !doctor.to_string().contains("has no --deadline"),
        "{doctor}"
    );
}

#[test]
fn doctor_and_lint_warn_about_a_hook_timeout_longer_than_the_shims_deadline() {
    let env = Env::new();
    env.cmd()
        .args(["install", "--agent", "claude"])
        .run()
        .success();
    copse_hooks(
        &env,
        json!({"toolGate": [{"command": "true", "timeout": 120}, {"command": "true", "timeout": 10}]}),
    );
    let doctor = env.cmd().args(["--json", "doctor"]).run().success().json();
    let text = doctor.to_string();
    assert!(
        text.contains("timeout of 120 s, longer than the claude shim's --deadline of 55 s"),
        "{text}"
    );
    assert!(!text.contains("timeout of 10 s"), "{text}");
    let human = env.cmd().args(["doctor"]).run().success().stdout();
    assert!(human.contains("--deadline of 55 s"), "{human}");
    let lint = env
        .cmd()
        .args(["lint"])
        .arg(env.copse_dir().join("hooks.json"))
        .run();
    let out = format!("{}{}", lint.stdout(), lint.stderr());
    assert!(
        out.contains("timeout 120 s is longer than the installed shim's --deadline of 55 s"),
        "{out}"
    );
    assert!(!out.contains("timeout 10 s"), "{out}");
}

/// Hook output with a terminal escape, a carriage return and bidi overrides.
const HOSTILE_MESSAGE: &str = r#"printf '%s' '{"decision":"deny","agentMessage":"a\u001b[2Jb\u202ec","userMessage":"u\u001b]0;x\u0007\u2066v\rw"}'"#;

fn escapes_hook_text(vars: &[(&str, &str)]) {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    enabled(&env, json!({}));
    copse_hooks(&env, json!({"toolGate": [{"command": HOSTILE_MESSAGE}]}));
    let out = shim_with(&env, "claude", &bash("ls"), vars);
    let answer = stdout_json(&out);
    // Control: the hook ran and denied.
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    let system = answer["systemMessage"].as_str().unwrap();
    for text in [reason, system] {
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)),
            "{text:?}"
        );
    }
    assert!(reason.contains(r"a\x1b[2Jb\u{202e}c"), "{reason}");
    assert_eq!(system, r"u\x1b]0;x\x07\u{2066}v\x0dw");
}

#[test]
fn hook_text_the_shim_sends_is_escaped_in_process() {
    escapes_hook_text(IN_PROCESS);
}

/// Every string in a JSON answer, however nested.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

#[test]
fn hook_text_is_escaped_in_every_agents_answer() {
    let env = Env::new();
    enabled(&env, json!({}));
    copse_hooks(&env, json!({"toolGate": [{"command": HOSTILE_MESSAGE}]}));
    let payloads = [
        ("claude", bash("ls")),
        (
            "gemini",
            json!({"session_id": SID, "cwd": "/nonexistent", "hook_event_name": "BeforeTool",
                "tool_name": "run_shell_command", "tool_input": {"command": "ls"}})
            .to_string(),
        ),
        ("codex", bash("ls")),
        (
            "cursor",
            json!({"conversation_id": SID, "hook_event_name": "beforeShellExecution",
                "command": "ls", "cwd": "/nonexistent", "workspace_roots": []})
            .to_string(),
        ),
    ];
    for (agent, payload) in payloads {
        let out = shim_with(&env, agent, &payload, IN_PROCESS);
        let mut texts = vec![String::from_utf8_lossy(&out.stderr).into_owned()];
        strings(&stdout_json(&out), &mut texts);
        // Control: the hook's message reached the agent (escaped).
        assert!(
            texts.iter().any(|t| t.contains(r"a\x1b[2Jb\u{202e}c")),
            "{agent}: {texts:?}"
        );
        for t in &texts {
            assert!(
                !t.chars().any(|c| (c.is_control() && c != '\n' && c != '\t')
                    || ('\u{202a}'..='\u{202e}').contains(&c)
                    || ('\u{2066}'..='\u{2069}').contains(&c)),
                "{agent}: {t:?}"
            );
        }
    }
}

#[test]
fn hook_text_the_shim_sends_is_escaped_via_the_daemon() {
    escapes_hook_text(&[]);
}

#[test]
fn a_hook_that_never_ends_on_the_daemon_is_answered_with_a_block_at_the_deadline() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    enabled(&env, json!({}));
    let marker = env.root().join("hook-started");
    let argv = ["sleep", "1000.404"];
    copse_hooks(
        &env,
        json!({"toolGate": [{"command": format!("touch {}; exec sleep 1000.404", marker.display()),
            "timeout": 600}]}),
    );
    let child = spawn_shim_deadline(&env, "claude", "1", &bash("ls"), &[]);
    // Control: the hook really ran (in the daemon).
    wait_for_hook(&marker, &argv);
    let out = finish(child);
    assert_eq!(out.status.code(), Some(2), "the agent's block: {out:?}");
    let log = shim_errors(&env);
    assert!(
        log.contains("deadline of 1 s passed while waiting for the daemon's answer"),
        "{log}"
    );
    // The shim hung up: the daemon cancels the call and kills its hook.
    assert!(
        gone(&argv),
        "the daemon's hook outlived the shim's deadline"
    );
}

#[test]
fn a_stopped_daemon_fails_closed_even_without_a_deadline() {
    // Older installs have no --deadline: a daemon seen stopped while the shim waits
    // still ends in the agent's block, not in the agent's timeout (which allows).
    let env = Env::new();
    let daemon = DaemonToStop::start(&env);
    let pid = daemon.1;
    // Control: the daemon serves the call.
    let out = shim(&env, "claude", &bash("rm -rf /tmp/x"));
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    assert!(served_by_daemon(&env, "claude"));
    // SAFETY: a plain kill of the daemon this test started.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let out = finish(spawn_shim(&env, "claude", &bash("ls"), &[], true));
    assert_eq!(out.status.code(), Some(2), "block, not allow: {out:?}");
    let log = shim_errors(&env);
    assert!(
        log.contains(&format!("the daemon (pid {pid}) is stopped")),
        "{log}"
    );
}

#[test]
fn codex_permission_requests_are_answered_with_codex_decisions() {
    let env = Env::new();
    // A Claude-format PermissionRequest hook, honoured for Codex through `also`: it
    // denies `rm -rf` with a reason and approves anything else.
    let hook = r#"if grep -q 'rm -rf'; then printf '%s' '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no rm -rf here"}}}'; else printf '%s' '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'; fi"#;
    env.write(
        "home/.claude/settings.json",
        &json!({"hooks": {"PermissionRequest": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": hook}
        ]}]}})
        .to_string(),
    );
    enabled(&env, json!({"shim": {"codex": {"also": ["claude"]}}}));
    let request = |command: &str| {
        json!({"session_id": SID, "cwd": "/nonexistent", "hook_event_name": "PermissionRequest",
            "tool_name": "Bash", "tool_input": {"command": command}})
        .to_string()
    };
    let out = shim(&env, "codex", &request("rm -rf /"));
    assert_eq!(out.status.code(), Some(0));
    let answer = stdout_json(&out);
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"],
        "PermissionRequest"
    );
    assert_eq!(answer["hookSpecificOutput"]["decision"]["behavior"], "deny");
    assert_eq!(
        answer["hookSpecificOutput"]["decision"]["message"],
        "no rm -rf here"
    );
    // Codex reserves these: never sent.
    for reserved in ["updatedInput", "updatedPermissions", "interrupt"] {
        assert!(
            answer["hookSpecificOutput"]["decision"]
                .get(reserved)
                .is_none(),
            "{answer}"
        );
    }
    let out = shim(&env, "codex", &request("ls"));
    assert_eq!(out.status.code(), Some(0));
    let answer = stdout_json(&out);
    assert_eq!(
        answer["hookSpecificOutput"]["decision"],
        json!({"behavior": "allow"})
    );
    // No hook for the event: no answer, Codex's own approval flow goes on.
    env.write(
        "home/.claude/settings.json",
        &json!({"hooks": {}}).to_string(),
    );
    let out = shim(&env, "codex", &request("ls"));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
