//! Adopted hooks see exactly what their agent sent: the payload bytes on stdin and the
//! agent's own environment (its vendor variables with the agent's values), with only
//! the LLM key scrub and what the sandbox and the recursion guard need added — through
//! a real shim, in-process and through the daemon. A Copse hook of the same call still
//! gets its canonical packet (the control).
//!
//! The payloads are the ones Claude Code 2.1.332, Gemini CLI 0.61.0 and Codex 0.171.0
//! wrote to their hooks (`/work/shared/spec/real-agent-payloads.md`, with `$TMP` the
//! scratch directory; spaced as recorded there, which no JSON encoder of ours would
//! reproduce); Cursor's is the documented `beforeShellExecution` sample of the golden
//! fixture (no recorded Cursor run).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::harness::Env;

/// One agent's call: its payload (with `$TMP` for the test's root), where its adopted
/// config lives and what it holds, and the environment the agent starts a hook with.
struct Case {
    agent: &'static str,
    payload: &'static str,
    adopted_file: &'static str,
    /// The adopted config, given the recording hook's command.
    adopted: fn(&str) -> Value,
    /// The variables the agent sets (beyond the harness's `PATH`, `HOME`,
    /// `COPSE_DIR`, `NO_COLOR`), given the test's root and the agent's project
    /// directory as the agent names it (through a symlink: never the canonical path
    /// copse-hooks would compute).
    vars: fn(&Path, &str) -> Vec<(&'static str, String)>,
    /// The project directory the payload's `cwd` names, under the root.
    project: &'static str,
    /// The hook's own variables (its config's per-hook `env`), which win over the
    /// agent's.
    own: &'static [(&'static str, &'static str)],
}

const CLAUDE_PRE_TOOL_USE: &str = r#"{"session_id": "c5e94aaf-d6db-4160-94da-186d6354d5f3", "transcript_path": "$TMP/home-claude-allowbash/.claude/projects/-TMP-proj-claude/c5e94aaf-d6db-4160-94da-186d6354d5f3.jsonl", "cwd": "$TMP/proj-claude", "prompt_id": "6398284c-f3b8-4808-be82-40c68a0d8d16", "permission_mode": "default", "effort": {"level": "medium"}, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "echo hello-from-mock > mock-ran.txt", "description": "mock command"}, "tool_use_id": "toolu_mock_msg_mock_10"}"#;

const GEMINI_BEFORE_TOOL: &str = r#"{"session_id": "4edcff26-2055-4e5d-9a5e-dd4d070a59a4", "transcript_path": "$TMP/home-gemini-mockyolo/.gemini/tmp/proj-gemini/chats/session-2026-12-02T16-30-4edcff26.jsonl", "cwd": "$TMP/proj-gemini", "hook_event_name": "BeforeTool", "timestamp": "2026-12-02T16:30:23.468Z", "tool_name": "run_shell_command", "tool_input": {"command": "echo hello-from-mock > mock-ran.txt", "description": "mock command"}}"#;

const CODEX_PRE_TOOL_USE: &str = r#"{"session_id": "01a2379c-a488-7af1-bac2-3cf47653815a", "turn_id": "01a2379c-a4a9-7cf3-9e2a-491b1dd5421c", "transcript_path": "$TMP/home-codex-mock/.codex/sessions/2026/12/02/rollout-2026-12-02T16-35-42-01a2379c-a488-7af1-bac2-3cf47653815a.jsonl", "cwd": "$TMP/proj-codex", "hook_event_name": "PreToolUse", "model": "mock-model", "permission_mode": "bypassPermissions", "tool_name": "Bash", "tool_input": {"command": "echo hello-from-mock > mock-ran.txt"}, "tool_use_id": "call_resp_mock_1"}"#;

/// Copilot CLI 1.0.102's `preToolUse` stdin (it names no event: the shim's entry says
/// which, in `COPSE_HOOKS_EVENT`).
const COPILOT_PRE_TOOL_USE: &str = r#"{"sessionId": "1fe0fd65-c25d-405b-9f81-fbe13bcbb954", "timestamp": 1796289060904, "cwd": "$TMP/proj", "toolName": "bash", "toolArgs": {"command": "echo hello-from-mock > mock-ran.txt", "description": "mock"}}"#;

const CURSOR_BEFORE_SHELL: &str = r#"{"conversation_id": "conv-fixture-1", "generation_id": "gen-fixture-1", "hook_event_name": "beforeShellExecution", "cursor_version": "1.7.2", "workspace_roots": ["$TMP/proj-cursor"], "user_email": "dev@example.com", "transcript_path": "$TMP/home/.cursor/projects/workspace/conv-fixture-1.jsonl", "model": "claude-sonnet-4", "model_id": "anthropic/claude-sonnet-4", "model_params": [{"id": "context", "value": "1m"}, {"id": "thinking", "value": "high"}], "command": "echo \"hello from a hook\"", "cwd": "$TMP/proj-cursor"}"#;

/// A Claude-shaped config (Claude Code, Codex): one hook on `event` for `matcher`.
fn claude_shaped(event: &str, matcher: &str, command: &str) -> Value {
    json!({"hooks": {event: [{"matcher": matcher,
        "hooks": [{"type": "command", "command": command}]}]}})
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            agent: "claude",
            payload: CLAUDE_PRE_TOOL_USE,
            adopted_file: "settings.json",
            adopted: |c| claude_shaped("PreToolUse", "Bash", c),
            vars: |_, project| {
                vec![
                    ("CLAUDE_PROJECT_DIR", project.to_string()),
                    ("CLAUDECODE", "1".into()),
                    ("CLAUDE_CODE_ENTRYPOINT", "sdk-cli".into()),
                    ("ANTHROPIC_API_KEY", "sk-ant-must-not-reach-a-hook".into()),
                ]
            },
            project: "proj-claude",
            own: &[],
        },
        Case {
            agent: "gemini",
            payload: GEMINI_BEFORE_TOOL,
            adopted_file: "settings.json",
            adopted: |c| {
                json!({"hooks": {"BeforeTool": [{"matcher": "run_shell_command",
                    "hooks": [{"name": "record", "type": "command", "command": c}]}]}})
            },
            vars: |root, project| {
                vec![
                    ("GEMINI_PROJECT_DIR", project.to_string()),
                    ("GEMINI_CWD", project.to_string()),
                    ("CLAUDE_PROJECT_DIR", project.to_string()),
                    (
                        "GEMINI_SESSION_ID",
                        "4edcff26-2055-4e5d-9a5e-dd4d070a59a4".into(),
                    ),
                    (
                        "GEMINI_PLANS_DIR",
                        root.join("home/.gemini/plans").display().to_string(),
                    ),
                    ("GEMINI_CLI_NO_RELAUNCH", "true".into()),
                    ("GEMINI_API_KEY", "must-not-reach-a-hook".into()),
                ]
            },
            project: "proj-gemini",
            own: &[],
        },
        Case {
            agent: "codex",
            payload: CODEX_PRE_TOOL_USE,
            adopted_file: "hooks.json",
            adopted: |c| claude_shaped("PreToolUse", "Bash", c),
            vars: |root, _| {
                vec![
                    ("CODEX_MANAGED_BY_NPM", "1".into()),
                    (
                        "CODEX_MANAGED_PACKAGE_ROOT",
                        root.join("npm/codex").display().to_string(),
                    ),
                    ("OPENAI_API_KEY", "sk-must-not-reach-a-hook".into()),
                ]
            },
            project: "proj-codex",
            own: &[],
        },
        Case {
            agent: "cursor",
            payload: CURSOR_BEFORE_SHELL,
            adopted_file: "hooks.json",
            adopted: |c| json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": c}]}}),
            vars: |_, project| {
                vec![
                    ("CURSOR_PROJECT_DIR", project.to_string()),
                    ("CLAUDE_PROJECT_DIR", project.to_string()),
                    // Not the payload's `cursor_version`, from which copse-hooks
                    // would compute it: the agent's value is the one the hook gets.
                    ("CURSOR_VERSION", "1.7.2-env".into()),
                    ("CURSOR_USER_EMAIL", "dev@example.com".into()),
                    ("OPENAI_API_KEY", "sk-must-not-reach-a-hook".into()),
                ]
            },
            project: "proj-cursor",
            own: &[],
        },
        Case {
            agent: "copilot",
            payload: COPILOT_PRE_TOOL_USE,
            adopted_file: "hooks.json",
            adopted: |c| {
                json!({"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": c,
                    "timeoutSec": 30, "env": {"COPSE_HOOKS_EVENT": "the-hooks-own", "HOOK_OWN": "1"}}]}})
            },
            vars: |root, project| {
                vec![
                    // What the shim's own entry sets (`install --agent copilot`).
                    ("COPSE_HOOKS_EVENT", "preToolUse".into()),
                    ("COPILOT_CLI", "1".into()),
                    (
                        "COPILOT_HOOK_DIR",
                        root.join("home/.copilot/hooks").display().to_string(),
                    ),
                    ("COPILOT_PROJECT_DIR", project.to_string()),
                    ("CLAUDE_PROJECT_DIR", project.to_string()),
                    ("OPENAI_API_KEY", "sk-must-not-reach-a-hook".into()),
                ]
            },
            project: "proj",
            own: &[("COPSE_HOOKS_EVENT", "the-hooks-own"), ("HOOK_OWN", "1")],
        },
    ]
}

/// The variables the harness starts every command with.
fn harness_vars(env: &Env) -> Vec<(&'static str, String)> {
    vec![
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("HOME", env.home().display().to_string()),
        ("COPSE_DIR", env.copse_dir().display().to_string()),
        ("NO_COLOR", "1".into()),
    ]
}

/// Runs the shim for `agent` with `payload` on stdin and `vars` set.
fn shim(env: &Env, agent: &str, payload: &[u8], vars: &[(&str, String)]) -> Output {
    let mut cmd = env.cmd().args(["shim", "--agent", agent]);
    for (k, v) in vars {
        cmd = cmd.env(k, v);
    }
    cmd.run_with_stdin(payload).out
}

/// `env`'s output as a map (values here hold no newline), without what the hook's
/// shell sets itself (`PWD`, `SHLVL`, `_`): an agent's `sh -c` adds those too.
fn parse_env(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| !matches!(*k, "PWD" | "SHLVL" | "_" | "OLDPWD"))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// What a recording hook saw: its stdin and its environment; the files are removed.
fn take(dir: &Path, name: &str) -> (Vec<u8>, BTreeMap<String, String>) {
    let stdin_path = dir.join(format!("{name}.stdin"));
    let env_path = dir.join(format!("{name}.env"));
    let stdin =
        std::fs::read(&stdin_path).unwrap_or_else(|e| panic!("the {name} hook did not run ({e})"));
    let vars = parse_env(&std::fs::read_to_string(&env_path).unwrap());
    std::fs::remove_file(stdin_path).unwrap();
    std::fs::remove_file(env_path).unwrap();
    (stdin, vars)
}

/// Stops the test's daemon when the test ends, pass or fail.
struct StopDaemon<'a>(&'a Env);

impl Drop for StopDaemon<'_> {
    fn drop(&mut self) {
        let _ = self.0.cmd().args(["daemon", "stop"]).run();
    }
}

/// Waits for the daemon to record that it served `agent` (it does so after replying).
fn served_by_daemon(copse: &Path, agent: &str) -> bool {
    let path = copse.join(format!("shim/served/{agent}.json"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if text.contains("\"path\":\"daemon\"") {
            return true;
        }
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// How an adopted hook's environment differs from the agent's: names it has that the
/// agent did not set, names the agent set that it lacks, names whose value changed.
fn difference(
    agent: &BTreeMap<String, String>,
    hook: &BTreeMap<String, String>,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let added = hook
        .keys()
        .filter(|k| !agent.contains_key(*k))
        .cloned()
        .collect();
    let removed = agent
        .keys()
        .filter(|k| !hook.contains_key(*k))
        .cloned()
        .collect();
    let changed = agent
        .iter()
        .filter(|(k, v)| hook.get(*k).is_some_and(|h| h != *v))
        .map(|(k, _)| k.clone())
        .collect();
    (added, removed, changed)
}

#[test]
fn adopted_hooks_get_the_agents_bytes_and_environment_on_both_paths() {
    for case in cases() {
        let env = Env::new();
        let _stop = StopDaemon(&env);
        let root = env.root();
        let rec = root.join("rec");
        std::fs::create_dir_all(&rec).unwrap();
        let project = root.join(case.project);
        std::fs::create_dir_all(&project).unwrap();
        // The agent names its project through a symlink: copse-hooks would compute
        // the canonical path, so a value the hook sees is the agent's or ours.
        let named = root.join(format!("{}-as-named", case.project));
        std::os::unix::fs::symlink(&project, &named).unwrap();
        let named = named.display().to_string();
        env.write(
            "copse/settings.json",
            &json!({"sandboxWritablePaths": [root]}).to_string(),
        );
        let record = |name: &str| {
            format!(
                "cat > {dir}/{name}.stdin; env > {dir}/{name}.env",
                dir = rec.display()
            )
        };
        env.write(
            format!("copse/adopted/{}/{}", case.agent, case.adopted_file),
            &(case.adopted)(&record("adopted")).to_string(),
        );
        // The control: a Copse hook of the same call.
        env.write(
            "copse/hooks.json",
            &json!({"version": 1, "hooks": {"toolGate": [{"command": record("copse")}]}})
                .to_string(),
        );
        let payload = case.payload.replace("$TMP", &root.display().to_string());
        let mut vars = harness_vars(&env);
        vars.extend((case.vars)(&root, &named));

        let mut seen = Vec::new();
        for (path, extra) in [
            ("in-process", vec![("COPSE_SHIM_DAEMON", "0".to_string())]),
            ("daemon", vec![]),
        ] {
            let mut call_vars = vars.clone();
            call_vars.extend(extra);
            let agent_env: BTreeMap<String, String> = call_vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect();
            let out = shim(&env, case.agent, payload.as_bytes(), &call_vars);
            let what = format!("{} ({path})", case.agent);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{what}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let (stdin, hook_env) = take(&rec, "adopted");
            assert_eq!(
                String::from_utf8_lossy(&stdin),
                payload,
                "{what}: the adopted hook's stdin is not the agent's payload"
            );
            assert_eq!(stdin, payload.as_bytes(), "{what}");
            let (copse_stdin, _) = take(&rec, "copse");
            let copse: Value = serde_json::from_slice(&copse_stdin).unwrap();
            assert_eq!(
                copse["hook_event_name"], "toolGate",
                "{what}: the Copse hook's packet is its own: {copse}"
            );
            assert_ne!(copse_stdin, stdin, "{what}");
            let (added, removed, changed) = difference(&agent_env, &hook_env);
            let own: Vec<&str> = case.own.iter().map(|(k, _)| *k).collect();
            assert!(
                changed.iter().all(|c| own.contains(&c.as_str())),
                "{what}: the hook got other values than the agent's for {changed:?}"
            );
            for (name, value) in case.own {
                assert_eq!(
                    hook_env.get(*name).map(String::as_str),
                    Some(*value),
                    "{what}: the hook's own {name}"
                );
            }
            for (name, value) in (case.vars)(&root, &named) {
                if own.contains(&name) {
                } else if name.ends_with("_API_KEY") {
                    assert!(
                        !hook_env.contains_key(name),
                        "{what}: {name} reached a hook"
                    );
                } else {
                    assert_eq!(hook_env.get(name), Some(&value), "{what}: {name}");
                }
            }
            seen.push((path, stdin, added, removed, changed));
        }
        assert!(
            served_by_daemon(&env.copse_dir(), case.agent),
            "{}: the second call was not served by the daemon",
            case.agent
        );
        // Both paths: the same bytes, the same additions and removals.
        assert_eq!(seen[0].1, seen[1].1, "{}", case.agent);
        assert_eq!(seen[0].2, seen[1].2, "{}: added", case.agent);
        assert_eq!(seen[0].3, seen[1].3, "{}: removed", case.agent);
        assert_eq!(seen[0].4, seen[1].4, "{}: changed", case.agent);
        let (_, _, added, removed, changed) = &seen[0];
        insta::assert_snapshot!(
            format!("verbatim_env_{}", case.agent),
            format!("added: {added:?}\nremoved: {removed:?}\nchanged: {changed:?}\n")
        );
    }
}

const CLAUDE_SESSION_END: &str = r#"{"session_id": "c5e94aaf-d6db-4160-94da-186d6354d5f3", "transcript_path": "$TMP/home-claude-allowbash/.claude/projects/-TMP-proj-claude/c5e94aaf-d6db-4160-94da-186d6354d5f3.jsonl", "cwd": "$TMP/proj-claude", "prompt_id": "6398284c-f3b8-4808-be82-40c68a0d8d16", "hook_event_name": "SessionEnd", "reason": "other"}"#;

/// Waits (bounded) for a file a detached hook writes, and returns its bytes.
fn wait_for(path: &Path) -> Vec<u8> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        // The hook writes the marker after its stdin copy is complete.
        if path.with_extension("done").exists() {
            let bytes = std::fs::read(path).unwrap();
            std::fs::remove_file(path).unwrap();
            std::fs::remove_file(path.with_extension("done")).unwrap();
            return bytes;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} was never written",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn detached_runs_get_the_agents_bytes_too() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    let root = env.root();
    std::fs::create_dir_all(root.join("proj-claude")).unwrap();
    let record = |name: &str| {
        let file = root.join(name);
        format!(
            "cat > {}; touch {}",
            file.display(),
            file.with_extension("done").display()
        )
    };
    // An `async` PreToolUse hook (dispatched detached beside the blocking gate) and a
    // SessionEnd hook (an observation: the daemon answers at once and runs it
    // detached).
    let adopted = json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": record("async.stdin"), "async": true}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": record("end.stdin")}]}],
    }});
    env.write("copse/adopted/claude/settings.json", &adopted.to_string());
    let tmp = root.display().to_string();
    let in_process = vec![("COPSE_SHIM_DAEMON", "0".to_string())];
    // The in-process shim exits once it has answered, so only the daemon runs an
    // `async` hook to its end; a session end runs on both paths.
    for (path, payload, file) in [
        (&in_process, CLAUDE_SESSION_END, "end.stdin"),
        (&vec![], CLAUDE_PRE_TOOL_USE, "async.stdin"),
        (&vec![], CLAUDE_SESSION_END, "end.stdin"),
    ] {
        let payload = payload.replace("$TMP", &tmp);
        let out = shim(&env, "claude", payload.as_bytes(), path);
        assert_eq!(out.status.code(), Some(0), "{path:?} {file}");
        assert_eq!(
            String::from_utf8_lossy(&wait_for(&root.join(file))),
            payload,
            "{path:?}: {file}"
        );
    }
    assert!(served_by_daemon(&env.copse_dir(), "claude"));
}

#[test]
fn the_daemon_adds_no_copse_dir_the_agent_did_not_set() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = Env::new();
    let root = env.root();
    // Without `COPSE_DIR` the copse directory is `$HOME/.copse`.
    let copse = env.home().join(".copse");
    std::fs::create_dir_all(copse.join("adopted/claude")).unwrap();
    std::fs::set_permissions(&copse, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(
        copse.join("settings.json"),
        json!({"sandboxWritablePaths": [root]}).to_string(),
    )
    .unwrap();
    std::fs::set_permissions(
        copse.join("settings.json"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let record = format!("env > {}", root.join("hook.env").display());
    std::fs::write(
        copse.join("adopted/claude/settings.json"),
        claude_shaped("PreToolUse", "Bash", &record).to_string(),
    )
    .unwrap();
    struct Stop<'a>(&'a Env, std::path::PathBuf);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            let _ = self
                .0
                .cmd()
                .env("COPSE_DIR", &self.1)
                .args(["daemon", "stop"])
                .run();
        }
    }
    let _stop = Stop(&env, copse.clone());
    std::fs::create_dir_all(root.join("proj-claude")).unwrap();
    let payload = CLAUDE_PRE_TOOL_USE.replace("$TMP", &root.display().to_string());
    for daemon in ["0", "1"] {
        let mut cmd = env.cmd().args(["shim", "--agent", "claude"]);
        cmd.cmd.env_remove("COPSE_DIR");
        let out = cmd
            .env("COPSE_SHIM_DAEMON", daemon)
            .run_with_stdin(payload.as_bytes());
        assert_eq!(out.out.status.code(), Some(0), "{}", out.stderr());
        let seen = parse_env(&std::fs::read_to_string(root.join("hook.env")).unwrap());
        std::fs::remove_file(root.join("hook.env")).unwrap();
        assert_eq!(
            seen.get("HOME").map(String::as_str),
            Some(env.home().to_str().unwrap()),
            "COPSE_SHIM_DAEMON={daemon}: the hook ran with the agent's HOME"
        );
        assert!(
            !seen.contains_key("COPSE_DIR"),
            "COPSE_SHIM_DAEMON={daemon}: the hook sees a COPSE_DIR its agent did not set"
        );
    }
    assert!(served_by_daemon(&copse, "claude"));
}

#[test]
fn an_adopted_hook_gets_no_session_overlay_its_agent_would_not_hand_it() {
    let env = Env::new();
    let root = env.root();
    std::fs::create_dir_all(root.join("proj-claude")).unwrap();
    let rec = root.join("rec");
    std::fs::create_dir_all(&rec).unwrap();
    env.write(
        "copse/settings.json",
        &json!({"sandboxWritablePaths": [root]}).to_string(),
    );
    let record = |name: &str| format!("env > {}/{name}.env", rec.display());
    // A Copse sessionStart hook exports a variable to the session's later hooks.
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {
            "sessionStart": [{"command": r#"printf '%s' '{"sessionEnv":{"OVERLAY_PROBE":"set"}}'"#}],
            "toolGate": [{"command": record("copse")}],
        }})
        .to_string(),
    );
    env.write(
        "copse/adopted/claude/settings.json",
        &claude_shaped("PreToolUse", "Bash", &record("adopted")).to_string(),
    );
    let tmp = root.display().to_string();
    let in_process = vec![("COPSE_SHIM_DAEMON", "0".to_string())];
    let start = CLAUDE_SESSION_END
        .replace(
            "\"SessionEnd\", \"reason\": \"other\"",
            "\"SessionStart\", \"source\": \"startup\"",
        )
        .replace("$TMP", &tmp);
    assert!(start.contains("SessionStart"));
    let out = shim(&env, "claude", start.as_bytes(), &in_process);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let call = CLAUDE_PRE_TOOL_USE.replace("$TMP", &tmp);
    let out = shim(&env, "claude", call.as_bytes(), &in_process);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let read = |name: &str| {
        parse_env(
            &std::fs::read_to_string(rec.join(format!("{name}.env")))
                .unwrap_or_else(|e| panic!("the {name} hook did not run ({e})")),
        )
    };
    // Control: the overlay exists — the Copse hook of the same call sees it.
    assert_eq!(
        read("copse").get("OVERLAY_PROBE").map(String::as_str),
        Some("set")
    );
    // Claude Code hands no hook what another hook exported: neither do we.
    assert_eq!(read("adopted").get("OVERLAY_PROBE"), None);
}
