//! Agent input through `copse-hooks shim --agent NAME`: what we cannot map fails
//! closed (the agent's block, a reason naming the field, a line in
//! `shim-errors.log`), an event of another agent's protocol is reported as a
//! mis-registered shim, an unserved event is answered neutrally and recorded once,
//! the Claude-shaped family's tool names reach canonical-tool hooks, deny text goes
//! to the model and the user separately, and our own shim entries are never hooks.
//!
//! Every block is paired with a control: the same hook, given a readable payload,
//! runs (it leaves a marker), so a block cannot pass because no hook was configured.

use std::io::Write as _;
use std::process::{Output, Stdio};

use serde_json::{Value, json};

use crate::harness::Env;

const SID: &str = "5f0c9a2e-0000-4000-8000-0000000000b2";

/// Both serving paths: the daemon (started on demand) and in-process.
const PATHS: [&[(&str, &str)]; 2] = [&[], &[("COPSE_SHIM_DAEMON", "0")]];

/// Stops the test's daemon (if one runs) when the test ends, pass or fail.
struct StopDaemon<'a>(&'a Env);

impl Drop for StopDaemon<'_> {
    fn drop(&mut self) {
        let _ = self.0.cmd().args(["daemon", "stop"]).run();
    }
}

/// Hooks on, and one copse `toolGate` hook on the shell tool that leaves a marker
/// and denies `rm -rf` with separate agent and user messages.
fn setup(env: &Env) -> std::path::PathBuf {
    env.write(
        "copse/settings.json",
        &json!({"cursorHooksEnabled": true, "sandboxWritablePaths": [env.root()]}).to_string(),
    );
    let marker = env.root().join("gate-ran");
    let hook = format!(
        r#"touch {}; grep -q 'rm -rf' && printf '%s' '{{"decision":"deny","agentMessage":"agent: no rm -rf","userMessage":"user: a copse hook stopped rm -rf"}}' || true"#,
        marker.display()
    );
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [{"command": hook, "matcher": "^run_shell$"}]}})
            .to_string(),
    );
    marker
}

fn shim(env: &Env, agent: &str, payload: &str, vars: &[(&str, &str)]) -> Output {
    let mut cmd = env.cmd().args(["shim", "--agent", agent]);
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
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn payload(event: &str, extra: Value) -> String {
    let mut p = json!({"session_id": SID, "cwd": "/nonexistent", "hook_event_name": event});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p.to_string()
}

fn stdout_json(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    if text.trim().is_empty() {
        return Value::Null;
    }
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn errors(env: &Env) -> Vec<Value> {
    std::fs::read_to_string(env.copse_dir().join("shim-errors.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn reset(env: &Env, marker: &std::path::Path) {
    let _ = std::fs::remove_file(marker);
    let _ = std::fs::remove_file(env.copse_dir().join("shim-errors.log"));
}

/// Asserts a fail-closed block naming `field`, recorded in the error log, with no
/// hook run.
fn assert_blocked(env: &Env, out: &Output, marker: &std::path::Path, field: &str, what: &str) {
    assert_eq!(out.status.code(), Some(2), "{what}: {}", stderr(out));
    assert!(out.stdout.is_empty(), "{what}: a block has no JSON answer");
    let err = stderr(out);
    assert!(
        err.contains(field),
        "{what}: the reason names `{field}`: {err}"
    );
    assert!(err.contains("failing closed"), "{what}: {err}");
    let log = errors(env);
    assert!(
        log.iter()
            .any(|l| l["error"].as_str().unwrap_or("").contains(field)),
        "{what}: shim-errors.log: {log:?}"
    );
    assert!(
        !marker.exists(),
        "{what}: no hook sees an input we cannot map"
    );
}

#[test]
fn claude_tool_calls_we_cannot_map_fail_closed_on_both_paths() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    let marker = setup(&env);
    for vars in PATHS {
        // Control: a readable payload reaches the hook, which denies.
        reset(&env, &marker);
        let ok = payload(
            "PreToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}),
        );
        let out = shim(&env, "claude", &ok, vars);
        assert_eq!(
            stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
            "deny",
            "{vars:?}: {}",
            stderr(&out)
        );
        assert!(marker.exists(), "{vars:?}: the control hook ran");
        let cases = [
            (
                json!({"tool_name": "Bash", "tool_input": {"command": ["rm", "-rf", "/"]}}),
                "tool_input.command",
                "an array",
            ),
            (
                json!({"tool_name": "Bash", "tool_input": "rm -rf /"}),
                "tool_input",
                "a string",
            ),
            (json!({"tool_name": "Bash"}), "tool_input", "is missing"),
            (
                json!({"tool_name": "Bash", "tool_input": {"command": 7}}),
                "tool_input.command",
                "a number",
            ),
            (
                json!({"tool_name": "Read", "tool_input": {"file_path": ["a", "b"]}}),
                "tool_input.file_path",
                "an array",
            ),
        ];
        for (extra, field, kind) in cases {
            for event in ["PreToolUse", "PermissionRequest"] {
                reset(&env, &marker);
                let out = shim(&env, "claude", &payload(event, extra.clone()), vars);
                let what = format!("{vars:?} {event} {extra}");
                assert_blocked(&env, &out, &marker, field, &what);
                assert!(stderr(&out).contains(kind), "{what}: {}", stderr(&out));
            }
        }
    }
}

#[test]
fn every_agents_gated_events_fail_closed_on_input_we_cannot_map() {
    let env = Env::new();
    let marker = setup(&env);
    let vars: &[(&str, &str)] = &[("COPSE_SHIM_DAEMON", "0")];
    let cases = [
        (
            "gemini",
            payload(
                "BeforeTool",
                json!({"tool_name": "run_shell_command", "tool_input": {"command": ["ls"]}}),
            ),
            "tool_input.command",
        ),
        (
            "gemini",
            payload(
                "BeforeTool",
                json!({"tool_name": "run_shell_command", "tool_input": "ls"}),
            ),
            "tool_input",
        ),
        (
            "gemini",
            payload(
                "BeforeTool",
                json!({"tool_name": "read_file", "tool_input": {"file_path": 3}}),
            ),
            "tool_input.file_path",
        ),
        (
            "codex",
            payload(
                "PreToolUse",
                json!({"tool_name": "Bash", "tool_input": {"command": ["ls"]}}),
            ),
            "tool_input.command",
        ),
        (
            "codex",
            payload("PreToolUse", json!({"tool_name": "Bash"})),
            "tool_input",
        ),
        (
            "cursor",
            payload(
                "preToolUse",
                json!({"tool_name": "Shell", "tool_input": {"command": ["ls"]}}),
            ),
            "tool_input.command",
        ),
        (
            "cursor",
            payload(
                "preToolUse",
                json!({"tool_name": "Shell", "tool_input": "ls"}),
            ),
            "tool_input",
        ),
        (
            "cursor",
            payload("beforeShellExecution", json!({"command": ["ls"]})),
            "command",
        ),
        (
            "cursor",
            payload("beforeReadFile", json!({"file_path": {"p": 1}})),
            "file_path",
        ),
    ];
    for (agent, p, field) in cases {
        reset(&env, &marker);
        let out = shim(&env, agent, &p, vars);
        assert_blocked(&env, &out, &marker, field, &format!("{agent} {p}"));
    }
    // Controls: the same agents' readable shell calls reach the hook.
    for (agent, p) in [
        (
            "gemini",
            payload(
                "BeforeTool",
                json!({"tool_name": "run_shell_command", "tool_input": {"command": "rm -rf /"}}),
            ),
        ),
        (
            "codex",
            payload(
                "PreToolUse",
                json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}),
            ),
        ),
        (
            "cursor",
            payload(
                "preToolUse",
                json!({"tool_name": "Shell", "tool_input": {"command": "rm -rf /"}}),
            ),
        ),
    ] {
        reset(&env, &marker);
        let out = shim(&env, agent, &p, vars);
        assert_eq!(out.status.code(), Some(0), "{agent}: {}", stderr(&out));
        assert!(marker.exists(), "{agent}: the control hook ran");
        assert!(errors(&env).is_empty(), "{agent}: {:?}", errors(&env));
    }
}

#[test]
fn an_event_of_another_agents_protocol_is_reported_as_a_mis_registered_shim() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    let marker = setup(&env);
    for vars in PATHS {
        // A Claude Code PreToolUse sent to `shim --agent gemini`: blocked, not allowed.
        reset(&env, &marker);
        let claude = payload(
            "PreToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"}}),
        );
        let out = shim(&env, "gemini", &claude, vars);
        assert_blocked(&env, &out, &marker, "PreToolUse", &format!("{vars:?}"));
        let err = stderr(&out);
        assert!(
            err.contains("claude hook event") && err.contains("registered in the wrong agent"),
            "{err}"
        );
        // A Cursor gate sent to the Claude shim, and a Gemini gate sent to Codex's.
        for (agent, p) in [
            (
                "claude",
                payload(
                    "beforeShellExecution",
                    json!({"command": "ls", "hook_event_name": "beforeShellExecution"}),
                ),
            ),
            (
                "codex",
                payload(
                    "BeforeTool",
                    json!({"tool_name": "run_shell_command", "tool_input": {"command": "ls"}}),
                ),
            ),
        ] {
            reset(&env, &marker);
            let out = shim(&env, agent, &p, vars);
            assert_eq!(out.status.code(), Some(2), "{agent}: {}", stderr(&out));
            assert!(stderr(&out).contains("wrong agent"), "{}", stderr(&out));
            assert_eq!(errors(&env).len(), 1);
        }
        // Another protocol's non-gated event (a Claude Stop at the Gemini shim) is
        // reported the same way but not blocked: a block there would keep the agent
        // going.
        reset(&env, &marker);
        let out = shim(&env, "gemini", &payload("Stop", json!({})), vars);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stderr(&out).contains("wrong agent"), "{}", stderr(&out));
        assert_eq!(errors(&env).len(), 1, "{:?}", errors(&env));
    }
}

#[test]
fn unserved_events_are_answered_neutrally_and_recorded_once_per_agent_and_event() {
    let env = Env::new();
    let marker = setup(&env);
    let vars: &[(&str, &str)] = &[("COPSE_SHIM_DAEMON", "0")];
    for _ in 0..3 {
        for (agent, event) in [
            ("claude", "StopFailure"),
            ("claude", "SomeFutureEvent"),
            ("gemini", "BeforeModel"),
            ("codex", "Interrupt"),
            ("cursor", "workspaceOpen"),
        ] {
            let out = shim(&env, agent, &payload(event, json!({})), vars);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{agent} {event}: {}",
                stderr(&out)
            );
            assert!(out.stdout.is_empty(), "{agent} {event}: a neutral answer");
        }
    }
    let log = errors(&env);
    assert_eq!(log.len(), 5, "once per agent and event: {log:?}");
    let line = |agent: &str, event: &str| {
        log.iter()
            .find(|l| l["agent"] == agent && l["event"] == event)
            .unwrap_or_else(|| panic!("{agent} {event}: {log:?}"))["error"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(line("claude", "StopFailure").contains("not served"));
    assert!(line("claude", "SomeFutureEvent").contains("not an event of claude"));
    assert!(line("gemini", "BeforeModel").contains("not served"));
    // A name that is not a plain word cannot become a marker path.
    let out = shim(&env, "claude", &payload("../../x y", json!({})), vars);
    assert_eq!(out.status.code(), Some(0));
    assert!(!env.root().join("x y").exists());
    assert!(!marker.exists(), "no hook ran for an unserved event");
}

#[test]
fn claude_shaped_agents_tool_names_reach_canonical_tool_hooks() {
    let env = Env::new();
    let marker = setup(&env);
    let vars: &[(&str, &str)] = &[("COPSE_SHIM_DAEMON", "0")];
    let cases = [
        ("Bash", json!({"command": "rm -rf /"})),
        ("run_shell_command", json!({"command": "rm -rf /"})),
        ("Shell", json!({"command": "rm -rf /"})),
        ("shell", json!({"command": ["bash", "-lc", "rm -rf /"]})),
        ("local_shell", json!({"command": ["rm", "-rf", "/"]})),
        ("exec_command", json!({"cmd": "rm -rf /"})),
        ("execute_command", json!({"command": "rm -rf /"})),
        ("bash", json!({"command": "rm -rf /", "description": "x"})),
        ("powershell", json!({"command": "rm -rf /"})),
        ("Execute", json!({"command": "rm -rf /"})),
        ("launch-process", json!({"command": "rm -rf /"})),
    ];
    for (tool, input) in cases {
        reset(&env, &marker);
        let p = payload(
            "PreToolUse",
            json!({"tool_name": tool, "tool_input": input}),
        );
        let out = shim(&env, "claude", &p, vars);
        let answer = stdout_json(&out);
        assert_eq!(
            answer["hookSpecificOutput"]["permissionDecision"],
            "deny",
            "{tool}: {answer} {}",
            stderr(&out)
        );
        assert!(marker.exists(), "{tool}: the run_shell hook ran");
    }
    // A tool of no known vendor is matched as itself: the run_shell hook does not run.
    reset(&env, &marker);
    let p = payload(
        "PreToolUse",
        json!({"tool_name": "frobnicate", "tool_input": {"command": "rm -rf /"}}),
    );
    let out = shim(&env, "claude", &p, vars);
    assert_eq!(out.status.code(), Some(0));
    assert!(!marker.exists());
}

#[test]
fn the_model_gets_the_agent_message_and_the_user_the_user_message() {
    let env = Env::new();
    let _marker = setup(&env);
    let vars: &[(&str, &str)] = &[("COPSE_SHIM_DAEMON", "0")];
    let agent_text = "agent: no rm -rf";
    let user_text = "user: a copse hook stopped rm -rf";
    let claude = shim(
        &env,
        "claude",
        &payload(
            "PreToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}),
        ),
        vars,
    );
    let a = stdout_json(&claude);
    assert_eq!(
        a["hookSpecificOutput"]["permissionDecisionReason"],
        agent_text
    );
    assert_eq!(a["systemMessage"], user_text);
    let gemini = shim(
        &env,
        "gemini",
        &payload(
            "BeforeTool",
            json!({"tool_name": "run_shell_command", "tool_input": {"command": "rm -rf /"}}),
        ),
        vars,
    );
    let a = stdout_json(&gemini);
    assert_eq!(a["decision"], "deny");
    assert_eq!(
        a["reason"], agent_text,
        "the user message is not in the reason"
    );
    assert_eq!(a["systemMessage"], user_text);
    let codex = shim(
        &env,
        "codex",
        &payload(
            "PreToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}),
        ),
        vars,
    );
    let a = stdout_json(&codex);
    assert_eq!(
        a["hookSpecificOutput"]["permissionDecisionReason"],
        agent_text
    );
    assert_eq!(stderr(&codex).trim(), user_text);
    let cursor = shim(
        &env,
        "cursor",
        &payload(
            "preToolUse",
            json!({"tool_name": "Shell", "tool_input": {"command": "rm -rf /"}}),
        ),
        vars,
    );
    let a = stdout_json(&cursor);
    assert_eq!(a["agent_message"], agent_text);
    assert_eq!(a["user_message"], user_text);
}

#[test]
fn gate_and_list_never_treat_our_shim_entries_as_hooks() {
    let env = Env::new();
    let marker = env.root().join("claude-hook-ran");
    // An installed shim entry (any path, with a deadline) next to a real hook.
    env.write(
        "home/.claude/settings.json",
        &json!({"hooks": {"PreToolUse": [
            {"matcher": "*", "hooks": [{"type": "command",
                "command": "'/opt/some where/copse-hooks' shim --agent claude --deadline 55"}]},
            {"matcher": "*", "hooks": [{"type": "command",
                "command": "/usr/local/bin/copse-hooks shim --agent claude"}]},
            {"matcher": "Bash", "hooks": [{"type": "command",
                "command": format!("touch {}", marker.display())}]}
        ]}})
        .to_string(),
    );
    let listing = env.cmd().args(["--json", "list"]).run().success().json();
    let commands: Vec<String> = listing["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["command"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        commands.iter().all(|c| !c.contains("shim --agent")),
        "{commands:?}"
    );
    assert!(
        commands.iter().any(|c| c.contains("claude-hook-ran")),
        "control: the real hook is listed: {commands:?}"
    );
    let gate = env
        .cmd()
        .gate("run_shell", r#"{"command":"ls"}"#)
        .success()
        .json();
    let runs = gate["runs"].as_array().cloned().unwrap_or_default();
    assert!(
        runs.iter().all(|r| !r.to_string().contains("shim --agent")),
        "{gate}"
    );
    assert!(
        marker.exists(),
        "control: the real hook ran under gate: {gate}"
    );
}

#[test]
fn gate_rejects_the_inputs_the_shim_blocks() {
    let env = Env::new();
    let marker = setup(&env);
    for input in [
        r#"{"command":["rm","-rf","/"]}"#,
        r#""rm -rf /""#,
        r#"{"command":7}"#,
    ] {
        let _ = std::fs::remove_file(&marker);
        let run = env.cmd().gate("run_shell", input);
        let text = format!("{}{}", run.stdout(), run.stderr());
        assert!(
            !run.out.status.success() || text.contains("deny"),
            "{input}: {text}"
        );
        assert!(
            !marker.exists(),
            "{input}: no hook sees it under gate either"
        );
    }
    // Control.
    let run = env.cmd().gate("run_shell", r#"{"command":"rm -rf /"}"#);
    assert!(marker.exists(), "{}", run.stdout());
}

#[test]
fn doctor_shows_the_calls_that_failed_closed() {
    let env = Env::new();
    let marker = setup(&env);
    let vars: &[(&str, &str)] = &[("COPSE_SHIM_DAEMON", "0")];
    // Control: a clean log says nothing.
    let report = env.cmd().args(["--json", "doctor"]).run().success().json();
    let warnings = report["settings"]["warnings"].to_string();
    assert!(!warnings.contains("shim call"), "{warnings}");
    let p = payload(
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": ["rm", "-rf", "/"]}}),
    );
    let out = shim(&env, "claude", &p, vars);
    assert_blocked(&env, &out, &marker, "tool_input.command", "doctor");
    let report = env.cmd().args(["--json", "doctor"]).run().success().json();
    let warnings = report["settings"]["warnings"].to_string();
    assert!(
        warnings.contains("1 shim call(s) failed closed")
            && warnings.contains("shim claude PreToolUse")
            && warnings.contains("tool_input.command"),
        "{warnings}"
    );
    let human = env.cmd().args(["doctor"]).run().success().stdout();
    assert!(human.contains("tool_input.command"), "{human}");
}

/// Real agents' recorded payloads (see `_provenance` in the file).
const REAL: &str = include_str!("agent_input_payloads.json");

#[test]
fn real_agents_recorded_payloads_are_served_never_failed_closed() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    let marker = setup(&env);
    let real: Value = serde_json::from_str(REAL).unwrap();
    for vars in PATHS {
        for agent in ["claude", "gemini", "codex"] {
            for p in real[agent].as_array().unwrap() {
                reset(&env, &marker);
                let event = p["hook_event_name"].as_str().unwrap();
                let out = shim(&env, agent, &p.to_string(), vars);
                let what = format!("{vars:?} {agent} {event}");
                assert_eq!(out.status.code(), Some(0), "{what}: {}", stderr(&out));
                let log = errors(&env);
                assert!(
                    log.iter().all(|l| !l["error"]
                        .as_str()
                        .unwrap_or("")
                        .contains("failing closed")
                        && !l["error"].as_str().unwrap_or("").contains("wrong agent")),
                    "{what}: {log:?}"
                );
                let shell = p["tool_name"] == "Bash" || p["tool_name"] == "run_shell_command";
                if shell && matches!(event, "PreToolUse" | "BeforeTool") {
                    assert!(marker.exists(), "{what}: the run_shell hook ran");
                }
            }
        }
    }
}

#[test]
fn a_rewrite_of_a_family_tool_is_answered_in_that_agents_keys() {
    let env = Env::new();
    env.write(
        "copse/settings.json",
        &json!({"cursorHooksEnabled": true, "sandboxWritablePaths": [env.root()]}).to_string(),
    );
    let marker = env.root().join("rewrite-ran");
    let rewrite = |matcher: &str, updated: Value| {
        json!({"command": format!(
            "touch {}; printf '%s' '{}'",
            marker.display(),
            json!({"updatedInput": updated})
        ), "matcher": matcher})
    };
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [
            rewrite("^run_shell$", json!({"command": "echo safe"})),
            rewrite("^read_file$", json!({"path": "/safe/file"}))
        ]}})
        .to_string(),
    );
    let vars: &[(&str, &str)] = &[("COPSE_SHIM_DAEMON", "0")];
    let cases = [
        // Claude Code's own tool: Claude's keys, as before.
        (
            "Read",
            json!({"file_path": "/etc/passwd"}),
            json!({"file_path": "/safe/file"}),
        ),
        // Qwen Code (Gemini-named): its `file_path` back.
        (
            "read_file",
            json!({"file_path": "/etc/passwd"}),
            json!({"file_path": "/safe/file"}),
        ),
        // An older Qwen Code `absolute_path`; Copilot's `view` keeps `path`.
        (
            "read_file",
            json!({"absolute_path": "/etc/passwd"}),
            json!({"absolute_path": "/safe/file"}),
        ),
        (
            "view",
            json!({"path": "/etc/passwd"}),
            json!({"path": "/safe/file"}),
        ),
        (
            "exec_command",
            json!({"cmd": "rm -rf /", "yield_time_ms": 10}),
            json!({"cmd": "echo safe", "yield_time_ms": 10}),
        ),
    ];
    for (tool, input, want) in cases {
        let _ = std::fs::remove_file(&marker);
        let p = payload(
            "PreToolUse",
            json!({"tool_name": tool, "tool_input": input}),
        );
        let a = stdout_json(&shim(&env, "claude", &p, vars));
        assert!(marker.exists(), "{tool}: the rewriting hook ran");
        assert_eq!(
            a["hookSpecificOutput"]["permissionDecision"], "ask",
            "{tool}: {a}"
        );
        let got = &a["hookSpecificOutput"]["updatedInput"];
        for (k, v) in want.as_object().unwrap() {
            assert_eq!(&got[k], v, "{tool}: {a}");
        }
        assert!(
            got.get("path").is_none() || want.get("path").is_some(),
            "{tool}: no canonical key leaks back: {a}"
        );
    }
    // A new command for an argv tool cannot be said: tightened to a deny.
    let p = payload(
        "PreToolUse",
        json!({"tool_name": "shell", "tool_input": {"command": ["bash", "-lc", "rm -rf /"]}}),
    );
    let a = stdout_json(&shim(&env, "claude", &p, vars));
    assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "deny", "{a}");
    assert!(a["hookSpecificOutput"].get("updatedInput").is_none(), "{a}");
}
