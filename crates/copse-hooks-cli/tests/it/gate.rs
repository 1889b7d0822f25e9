//! `copse-hooks gate`: response forms, failures, policies, matchers, trust, env.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::Env;

fn cursor(event: &str, entries: Value) -> String {
    json!({"version": 1, "hooks": {event: entries}}).to_string()
}

fn shell(env: &Env, command: &str) -> Value {
    env.cmd()
        .gate("run_shell", &json!({"command": command}).to_string())
        .success()
        .json()
}

fn user_hook(env: &Env, event: &str, body: &str, extra: Value) -> Value {
    let script = env.script("home/.cursor/hooks/h.sh", body);
    let mut entry = json!({"command": script.display().to_string()});
    for (k, v) in extra.as_object().unwrap() {
        entry[k] = v.clone();
    }
    env.user_cursor(&cursor(event, json!([entry])));
    entry
}

#[test]
fn permission_forms_and_both_spellings() {
    let cases = [
        (
            r#"{"permission":"allow"}"#,
            "allow",
            Value::Null,
            Value::Null,
        ),
        (
            r#"{"permission":"deny","agent_message":"a","user_message":"u"}"#,
            "deny",
            json!("a"),
            json!("u"),
        ),
        (
            r#"{"permission":"deny","agentMessage":"A","userMessage":"U"}"#,
            "deny",
            json!("A"),
            json!("U"),
        ),
        (
            r#"{"permission":"ask","agent_message":"confirm"}"#,
            "ask",
            json!("confirm"),
            Value::Null,
        ),
        ("", "allow", Value::Null, Value::Null),
        ("{}", "allow", Value::Null, Value::Null),
    ];
    for (answer, decision, agent, user) in cases {
        let env = Env::new();
        user_hook(
            &env,
            "beforeShellExecution",
            &format!("cat >/dev/null; printf '%s' '{answer}'"),
            json!({}),
        );
        let v = shell(&env, "ls");
        assert_eq!(v["decision"], decision, "answer {answer}");
        assert_eq!(v["agent_message"], agent, "answer {answer}");
        assert_eq!(v["user_message"], user, "answer {answer}");
        assert_eq!(v["runs"].as_array().unwrap().len(), 1);
        assert_eq!(v["runs"][0]["failure"], Value::Null);
    }
}

#[test]
fn updated_input_is_reported_in_both_spellings() {
    for key in ["updated_input", "updatedInput"] {
        let env = Env::new();
        user_hook(
            &env,
            "preToolUse",
            &format!(
                r#"cat >/dev/null; echo '{{"permission":"allow","{key}":{{"command":"ls -la"}}}}'"#
            ),
            json!({}),
        );
        let v = shell(&env, "ls");
        assert_eq!(v["updated_input"], json!({"command": "ls -la"}), "{key}");
        assert_eq!(v["runs"][0]["event"], "preToolUse");
    }
}

#[test]
fn exit_2_denies_with_stderr_reason() {
    let env = Env::new();
    user_hook(
        &env,
        "beforeShellExecution",
        "echo 'not on my watch' >&2; exit 2",
        json!({}),
    );
    let v = shell(&env, "ls");
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["agent_message"], "not on my watch");
    assert_eq!(v["runs"][0]["outcome"], "deny");
    assert_eq!(v["runs"][0]["exit_code"], 2);
}

#[test]
fn nonzero_exit_with_valid_json_is_honoured() {
    let env = Env::new();
    user_hook(
        &env,
        "beforeShellExecution",
        r#"echo '{"permission":"ask"}'; exit 3"#,
        json!({}),
    );
    let v = shell(&env, "ls");
    assert_eq!(v["decision"], "ask");
    assert_eq!(v["runs"][0]["failure"], Value::Null);
    assert_eq!(v["runs"][0]["exit_code"], 3);
}

/// Each failure kind under fail-closed (default) and fail-open.
#[test]
fn every_failure_kind_under_both_policies() {
    let failures: [(&str, &str, Value); 5] = [
        ("exit", "exit 7", json!({})),
        ("invalid_json", "echo 'this is not json'", json!({})),
        ("timeout", "sleep 30", json!({"timeout": 0.3})),
        (
            "oversize",
            "head -c 1100000 /dev/zero | tr '\\0' x",
            json!({}),
        ),
        ("spawn", "", json!({})),
    ];
    for (kind, body, extra) in failures {
        for fail_closed in [None, Some(true), Some(false)] {
            let env = Env::new();
            let mut extra = extra.clone();
            if let Some(fc) = fail_closed {
                extra["failClosed"] = json!(fc);
            }
            if kind == "spawn" {
                // A NUL byte cannot be passed to exec: the process never starts.
                let mut entry = json!({"command": "echo\u{0}hi"});
                for (k, v) in extra.as_object().unwrap() {
                    entry[k] = v.clone();
                }
                env.user_cursor(&cursor("beforeShellExecution", json!([entry])));
            } else {
                user_hook(&env, "beforeShellExecution", body, extra);
            }
            let v = shell(&env, "ls");
            let run = &v["runs"][0];
            assert_eq!(run["failure"], kind, "{kind} {fail_closed:?}: {v}");
            assert_eq!(run["outcome"], "failed");
            if fail_closed == Some(false) {
                assert_eq!(v["decision"], "allow", "{kind} fail-open: {v}");
                assert_eq!(v["agent_message"], Value::Null);
            } else {
                assert_eq!(v["decision"], "deny", "{kind} fail-closed: {v}");
                let msg = v["agent_message"].as_str().unwrap();
                assert!(msg.starts_with("hook \""), "{msg}");
                assert!(msg.contains("fails closed"), "{msg}");
            }
        }
    }
}

#[test]
fn timeout_kills_the_whole_group_including_grandchildren() {
    let env = Env::new();
    let pids = env.root().join("pids");
    user_hook(
        &env,
        "beforeShellExecution",
        &format!(
            // Each hook has its own pid namespace and /proc: see `crate::hook_pid`.
            "for i in 1 2; do sh -c 'echo {id} >> {p}; exec sleep 1000' & done; wait",
            id = crate::hook_pid::SELF_ID_SH,
            p = pids.display()
        ),
        json!({"timeout": 0.5}),
    );
    let start = Instant::now();
    let v = shell(&env, "ls");
    let elapsed = start.elapsed();
    assert_eq!(v["runs"][0]["failure"], "timeout");
    assert_eq!(v["decision"], "deny");
    assert!(elapsed < Duration::from_secs(5), "gate took {elapsed:?}");
    let text = std::fs::read_to_string(&pids).unwrap();
    assert_eq!(
        text.lines().count(),
        2,
        "control: both grandchildren ran: {text}"
    );
    for line in text.lines() {
        assert!(
            crate::hook_pid::host_pid(line).is_none(),
            "grandchild {line} survived the timeout"
        );
    }
}

#[test]
fn answer_is_prompt_even_when_a_background_child_holds_stdout() {
    let env = Env::new();
    user_hook(
        &env,
        "beforeShellExecution",
        r#"cat >/dev/null; echo '{"permission":"deny","agent_message":"bg"}'; sleep 1000 &"#,
        json!({"timeout": 20}),
    );
    let start = Instant::now();
    let v = shell(&env, "ls");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["agent_message"], "bg");
}

#[test]
fn hook_that_never_reads_a_multi_megabyte_payload() {
    let env = Env::new();
    let big = "x".repeat(6 * 1024 * 1024);
    env.write("ws/big.txt", &big);
    user_hook(
        &env,
        "beforeReadFile",
        r#"echo '{"permission":"allow"}'"#,
        json!({}),
    );
    let v = env
        .cmd()
        .gate("read_file", &json!({"path": "big.txt"}).to_string())
        .success()
        .json();
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["runs"][0]["failure"], Value::Null);
}

#[test]
fn read_file_sends_the_content() {
    let env = Env::new();
    env.write("ws/secret.pem", "-----BEGIN RSA PRIVATE KEY-----\nabc\n");
    user_hook(
        &env,
        "beforeReadFile",
        r#"if grep -q 'PRIVATE KEY'; then echo '{"permission":"deny","agent_message":"key"}'; fi"#,
        json!({}),
    );
    let v = env
        .cmd()
        .gate("read_file", r#"{"path":"secret.pem"}"#)
        .success()
        .json();
    assert_eq!(v["decision"], "deny");
    env.write("ws/plain.txt", "hello");
    let v = env
        .cmd()
        .gate("read_file", r#"{"path":"plain.txt"}"#)
        .success()
        .json();
    assert_eq!(v["decision"], "allow");
}

/// The matcher subject of each tool-gate event.
#[test]
fn matcher_subjects() {
    let env = Env::new();
    let log = env.root().join("fired");
    let rec = |name: &str| format!("cat >/dev/null; echo {name} >> {}", log.display());
    let s = |p: &str, body: String| {
        let path = env.script(format!("home/.cursor/{p}.sh"), &body);
        path.display().to_string()
    };
    let config = json!({"version": 1, "hooks": {
        "beforeShellExecution": [
            {"command": s("shell_git", rec("shell_git")), "matcher": "git (push|pull)"},
            {"command": s("shell_never", rec("shell_never")), "matcher": "^rm"},
            {"command": s("shell_lookaround", rec("shell_lookaround")), "matcher": "^(?!git status)"}
        ],
        "beforeMCPExecution": [
            {"command": s("mcp_db", rec("mcp_db")), "matcher": "db__query"}
        ],
        "beforeReadFile": [
            {"command": s("read_read", rec("read_read")), "matcher": "^Read$"},
            {"command": s("read_tab", rec("read_tab")), "matcher": "TabRead"}
        ],
        "preToolUse": [
            {"command": s("pre_shell", rec("pre_shell")), "matcher": "Shell"},
            {"command": s("pre_write", rec("pre_write")), "matcher": "^Write$"},
            {"command": s("pre_mcp", rec("pre_mcp")), "matcher": "MCP:mcp__db"},
            {"command": s("pre_task", rec("pre_task")), "matcher": "Task"}
        ]
    }});
    env.user_cursor(&config.to_string());
    let fired = |tool: &str, input: Value| -> Vec<String> {
        let _ = std::fs::remove_file(&log);
        env.cmd().gate(tool, &input.to_string()).success();
        let mut v: Vec<String> = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        fired("run_shell", json!({"command": "git push origin"})),
        ["pre_shell", "shell_git", "shell_lookaround"]
    );
    assert_eq!(
        fired("run_shell", json!({"command": "git status"})),
        ["pre_shell"]
    );
    assert_eq!(
        fired("mcp__db__query", json!({"sql": "select 1"})),
        ["mcp_db", "pre_mcp"]
    );
    assert_eq!(fired("mcp__web__fetch", json!({})), Vec::<String>::new());
    env.write("ws/a.txt", "a");
    assert_eq!(fired("read_file", json!({"path": "a.txt"})), ["read_read"]);
    assert_eq!(
        fired("str_replace", json!({"path": "a.txt"})),
        ["pre_write"]
    );
    assert_eq!(fired("explore", json!({"task": "x"})), ["pre_task"]);
}

#[test]
fn invalid_regex_skips_the_hook_and_warns() {
    let env = Env::new();
    let marker = env.root().join("ran");
    user_hook(
        &env,
        "beforeShellExecution",
        &format!("touch {}; exit 2", marker.display()),
        json!({"matcher": "([bad"}),
    );
    let v = shell(&env, "anything");
    assert_eq!(v["decision"], "allow");
    assert!(v["runs"].as_array().unwrap().is_empty());
    assert!(!marker.exists());
    let list = env.cmd().args(["--json", "list"]).run().success().json();
    let msg = list["warnings"][0]["message"].as_str().unwrap();
    assert!(msg.contains("not a valid regex"), "{msg}");
}

#[test]
fn untrusted_project_hooks_never_spawn_but_user_hooks_do() {
    let env = Env::new();
    let project_marker = env.root().join("project-ran");
    let user_marker = env.root().join("user-ran");
    env.script(
        "ws/.cursor/p.sh",
        &format!("touch {}", project_marker.display()),
    );
    env.project_cursor(&cursor(
        "beforeShellExecution",
        json!([{"command": ".cursor/p.sh"}]),
    ));
    user_hook(
        &env,
        "beforeShellExecution",
        &format!("touch {}", user_marker.display()),
        json!({}),
    );
    let v = shell(&env, "ls");
    assert_eq!(v["runs"].as_array().unwrap().len(), 1);
    assert_eq!(v["runs"][0]["scope"], "user");
    assert!(user_marker.exists());
    assert!(!project_marker.exists(), "an untrusted project hook ran");

    // Trusted for this invocation: it runs, in the workspace root.
    let v = env
        .cmd()
        .args(["--trust"])
        .gate("run_shell", r#"{"command":"ls"}"#)
        .success()
        .json();
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
    assert!(project_marker.exists());

    // Trusted through settings.
    std::fs::remove_file(&project_marker).unwrap();
    env.write(
        "copse/settings.json",
        &json!({"cursorHooksEnabled": true, "trustedWorkspaces": [env.workspace()], "sandboxWritablePaths": [env.root()]}).to_string(),
    );
    let v = env
        .cmd()
        .args([
            "--json",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .run()
        .success()
        .json();
    assert_eq!(v["runs"].as_array().unwrap().len(), 2, "{v}");
    assert!(project_marker.exists());
}

#[test]
fn hooks_off_means_no_spawn() {
    let env = Env::new();
    let marker = env.root().join("ran");
    user_hook(
        &env,
        "beforeShellExecution",
        &format!("touch {}; exit 2", marker.display()),
        json!({}),
    );
    let v = env
        .cmd()
        .args([
            "--json",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .run()
        .success()
        .json();
    assert_eq!(v["decision"], "allow");
    assert!(v["runs"].as_array().unwrap().is_empty());
    assert!(!marker.exists());
}

#[test]
fn corrupt_settings_are_reported_and_mean_hooks_off() {
    let env = Env::new();
    let marker = env.root().join("ran");
    user_hook(
        &env,
        "beforeShellExecution",
        &format!("touch {}", marker.display()),
        json!({}),
    );
    env.write("copse/settings.json", "{\"cursorHooksEnabled\": tru");
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
    assert!(r.stderr().contains("settings.json"), "{}", r.stderr());
    assert!(r.stderr().contains("corrupt"), "{}", r.stderr());
    assert!(!marker.exists());
}

#[test]
fn environment_is_scrubbed_and_depth_is_set() {
    let env = Env::new();
    let dump = env.root().join("env.txt");
    user_hook(
        &env,
        "beforeShellExecution",
        &format!("env > {}", dump.display()),
        json!({}),
    );
    env.cmd()
        .env("ANTHROPIC_API_KEY", "sk-ant-secret")
        .env("OPENAI_API_KEY", "sk-secret")
        .env("MISTRAL_CUSTOM_API_KEY", "m-secret")
        .env("GITHUB_TOKEN", "ghp_keep")
        .gate("run_shell", r#"{"command":"ls"}"#)
        .success();
    let text = std::fs::read_to_string(&dump).unwrap();
    assert!(
        !text.contains("secret"),
        "an LLM key reached the hook:\n{text}"
    );
    assert!(text.contains("GITHUB_TOKEN=ghp_keep"));
    assert!(text.contains("COPSE_HOOK_DEPTH=1"));
    assert!(text.contains(&format!("CURSOR_PROJECT_DIR={}", env.workspace().display())));
    assert!(text.contains(&format!("CLAUDE_PROJECT_DIR={}", env.workspace().display())));
}

#[test]
fn cwd_is_config_dir_for_user_hooks_and_root_for_project_hooks() {
    let env = Env::new();
    let out = env.root().join("cwd");
    user_hook(
        &env,
        "beforeShellExecution",
        &format!("pwd >> {}", out.display()),
        json!({}),
    );
    env.script("ws/.cursor/p.sh", &format!("pwd >> {}", out.display()));
    env.project_cursor(&cursor(
        "beforeShellExecution",
        json!([{"command": ".cursor/p.sh"}]),
    ));
    env.cmd()
        .args(["--trust"])
        .gate("run_shell", r#"{"command":"ls"}"#)
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    let mut want = vec![
        env.home().join(".cursor").display().to_string(),
        env.workspace().display().to_string(),
    ];
    want.sort();
    assert_eq!(lines, want);
}

#[test]
fn recursion_guard_runs_no_hooks_inside_a_hook() {
    let env = Env::new();
    let marker = env.root().join("ran");
    user_hook(
        &env,
        "beforeShellExecution",
        &format!("touch {}; exit 2", marker.display()),
        json!({}),
    );
    let v = env
        .cmd()
        .env("COPSE_HOOK_DEPTH", "1")
        .env("COPSE_HOOK_TOKEN", env.depth_token())
        .gate("run_shell", r#"{"command":"ls"}"#)
        .success()
        .json();
    assert_eq!(v["decision"], "allow");
    assert!(!marker.exists());
}

#[test]
fn merge_is_in_configured_order_not_completion_order() {
    let env = Env::new();
    let a = env.script("home/.cursor/a.sh", r#"sleep 0.6; echo '{"permission":"allow","agent_message":"first","updated_input":{"command":"a","x":1}}'"#);
    let b = env.script("home/.cursor/b.sh", r#"sleep 0.3; echo '{"permission":"ask","agent_message":"second","updated_input":{"command":"b"}}'"#);
    let c = env.script(
        "home/.cursor/c.sh",
        r#"echo '{"permission":"allow","agent_message":"third","updated_input":{"y":2}}'"#,
    );
    env.user_cursor(&cursor(
        "beforeShellExecution",
        json!([{"command": a.display().to_string()}, {"command": b.display().to_string()}, {"command": c.display().to_string()}]),
    ));
    let start = Instant::now();
    let v = shell(&env, "ls");
    assert!(
        start.elapsed() < Duration::from_millis(1500),
        "hooks did not run concurrently: {:?}",
        start.elapsed()
    );
    assert_eq!(v["decision"], "ask");
    assert_eq!(v["agent_message"], "first\n\nsecond\n\nthird");
    assert_eq!(v["updated_input"], json!({"command": "b", "x": 1, "y": 2}));
    let cmds: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["command"].as_str().unwrap())
        .collect();
    assert!(cmds[0].ends_with("a.sh") && cmds[1].ends_with("b.sh") && cmds[2].ends_with("c.sh"));
}

#[test]
fn deny_beats_allow_from_any_source() {
    let env = Env::new();
    user_hook(
        &env,
        "beforeShellExecution",
        r#"echo '{"permission":"allow"}'"#,
        json!({}),
    );
    env.script(
        "ws/.cursor/p.sh",
        r#"echo '{"permission":"deny","user_message":"project says no"}'"#,
    );
    env.project_cursor(&cursor("preToolUse", json!([{"command": ".cursor/p.sh"}])));
    let v = env
        .cmd()
        .args(["--trust"])
        .gate("run_shell", r#"{"command":"ls"}"#)
        .success()
        .json();
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["user_message"], "project says no");
}

#[test]
fn stdin_payloads_for_each_gate_event() {
    let env = Env::new();
    let dir = env.root().join("stdin");
    std::fs::create_dir_all(&dir).unwrap();
    let cap = |name: &str| {
        env.script(
            format!("home/.cursor/{name}.sh"),
            &format!("cat > {}/{name}.json", dir.display()),
        )
        .display()
        .to_string()
    };
    env.user_cursor(
        &json!({"version": 1, "hooks": {
            "beforeShellExecution": [{"command": cap("shell")}],
            "beforeMCPExecution": [{"command": cap("mcp")}],
            "beforeReadFile": [{"command": cap("read")}],
            "preToolUse": [{"command": cap("pre")}]
        }})
        .to_string(),
    );
    env.write("ws/README.md", "synthetic file bytes\n");
    env.cmd()
        .gate("run_shell", r#"{"command":"echo \"hello from a hook\""}"#)
        .success();
    env.cmd()
        .gate("mcp__example__run", r#"{"query":"weather","limit":3}"#)
        .success();
    env.cmd()
        .gate("read_file", r#"{"path":"README.md"}"#)
        .success();
    let read = |n: &str| -> String {
        let t = std::fs::read_to_string(dir.join(format!("{n}.json"))).unwrap();
        crate::harness::redact(&t, &env.root())
            .trim_end()
            .to_string()
    };
    insta::assert_snapshot!("stdin_before_shell", read("shell"));
    insta::assert_snapshot!("stdin_before_mcp", read("mcp"));
    insta::assert_snapshot!("stdin_before_read", read("read"));
    insta::assert_snapshot!("stdin_pre_tool_use_read", read("pre"));
}

#[test]
fn gate_human_and_json_output_snapshots() {
    let env = Env::new();
    let deny = env.script("home/.cursor/deny.sh", r#"echo '{"permission":"deny","agent_message":"force pushes need review","user_message":"Blocked a force push."}'"#);
    let slow = env.script("home/.cursor/slow.sh", "sleep 5");
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": deny.display().to_string(), "matcher": "--force"},
            {"command": slow.display().to_string(), "timeout": 0.2, "failClosed": false}
        ]}})
        .to_string(),
    );
    let human = env
        .cmd()
        .args([
            "--enable",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"git push --force"}"#,
        ])
        .run()
        .success();
    insta::assert_snapshot!("gate_human", human.redacted());
    let json = env
        .cmd()
        .gate("run_shell", r#"{"command":"git push --force"}"#)
        .success();
    insta::assert_snapshot!("gate_json", json.redacted());
}

#[test]
fn bad_input_is_a_clear_error() {
    let env = Env::new();
    let r = env
        .cmd()
        .args(["gate", "run_shell", "--input", "[1,2]"])
        .run();
    assert_eq!(r.out.status.code(), Some(2));
    assert!(
        r.stderr().contains("--input must be a JSON object"),
        "{}",
        r.stderr()
    );
    let r = env
        .cmd()
        .args(["gate", "run_shell", "--input", "{nope"])
        .run();
    assert_eq!(r.out.status.code(), Some(2));
    assert!(
        r.stderr().contains("--input is not valid JSON"),
        "{}",
        r.stderr()
    );
}

#[test]
fn gate_accepts_the_hosts_tool_use_id_and_session_fields() {
    let env = Env::new();
    let out = env.root().join("claude-stdin.json");
    env.write(
        "home/.claude/settings.json",
        &json!({"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": format!("cat > {}", out.display())}
        ]}]}})
        .to_string(),
    );
    env.cmd()
        .args(["--enable", "gate", "run_shell", "--input", r#"{"command":"ls"}"#])
        .args(["--tool-use-id", "toolu_host_7"])
        .args([
            "--session",
            r#"{"conversation_id":"c-9","transcript_path":"/t/c-9.jsonl","permission_mode":"plan"}"#,
        ])
        .run()
        .success();
    let stdin: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(stdin["tool_use_id"], json!("toolu_host_7"));
    assert_eq!(stdin["session_id"], json!("c-9"));
    assert_eq!(stdin["transcript_path"], json!("/t/c-9.jsonl"));
    assert_eq!(stdin["permission_mode"], json!("plan"));
    let bad = env
        .cmd()
        .args([
            "--enable",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .args(["--session", r#"{"permission_mode": 3}"#])
        .run();
    assert!(!bad.out.status.success());
    assert!(bad.stderr().contains("--session"), "{}", bad.stderr());
    let nul = env
        .cmd()
        .args([
            "--enable",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .args(["--session", r#"{"user_email": "a\u0000b"}"#])
        .run();
    assert_eq!(nul.out.status.code(), Some(2), "{}", nul.stderr());
    assert!(
        nul.stderr().contains("\"user_email\" contains a NUL byte"),
        "{}",
        nul.stderr()
    );
}

#[test]
fn mcp_tool_handlers_are_warned_about_in_gate_list_and_lint_and_never_run() {
    let env = Env::new();
    let marker = env.root().join("command-ran");
    let settings = env.write(
        "home/.claude/settings.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "mcp_tool", "server": "guard", "tool": "check"},
            {"type": "command", "command": format!("touch {}", marker.display())},
        ]}]}})
        .to_string(),
    );
    let want = "mcp_tool handlers are not supported yet: this hook does not run";
    let v = shell(&env, "ls");
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["runs"].as_array().unwrap().len(), 1, "{v:#}");
    assert!(marker.exists(), "the command hook beside it runs");
    assert!(v["warnings"].to_string().contains(want), "{v:#}");
    let list = env.cmd().args(["--json", "list"]).run().success().json();
    assert!(list["warnings"].to_string().contains(want), "{list:#}");
    assert!(
        list["hooks"].to_string().contains("mcp_tool: guard/check"),
        "{list:#}"
    );
    let lint = env
        .cmd()
        .args(["lint", &settings.display().to_string()])
        .run();
    assert!(lint.stdout().contains(want), "{}", lint.stdout());
}
