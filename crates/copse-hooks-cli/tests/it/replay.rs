//! `copse-hooks replay`: the whole agent loop, end to end.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::Env;

fn replay(env: &Env, lines: &[Value]) -> (Vec<Value>, Value) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let file = env.write("session.jsonl", &text);
    let out = env
        .cmd()
        .args(["--enable", "--json", "replay"])
        .args([file])
        .run()
        .success();
    let mut values: Vec<Value> = out
        .stdout()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = values.pop().unwrap();
    (values, summary)
}

fn hooks(env: &Env, hooks: Value) {
    env.user_cursor(&json!({"version": 1, "hooks": hooks}).to_string());
}

fn script(env: &Env, name: &str, body: &str) -> String {
    env.script(format!("home/.cursor/{name}.sh"), body)
        .display()
        .to_string()
}

const SESSION: &str = r#"{"event":"session","conversation_id":"conv-fixture-1","model":{"model":"claude-sonnet-4","model_id":"anthropic/claude-sonnet-4","model_params":[{"id":"context","value":"1m"},{"id":"thinking","value":"high"}]}}"#;

/// The exact stdin of every Cursor event, from one fixed session.
#[test]
fn stdin_of_every_event() {
    let env = Env::new();
    let dir = env.root().join("stdin");
    std::fs::create_dir_all(&dir).unwrap();
    let events = [
        "beforeSubmitPrompt",
        "afterFileEdit",
        "stop",
        "afterShellExecution",
        "afterMCPExecution",
        "postToolUse",
        "postToolUseFailure",
        "subagentStart",
        "subagentStop",
        "sessionStart",
        "sessionEnd",
        "preCompact",
        "afterAgentResponse",
        "afterAgentThought",
    ];
    let mut config = serde_json::Map::new();
    for e in events {
        let cmd = script(
            &env,
            e,
            &format!("p=$(cat); echo \"$p\" >> {}/{e}.json", dir.display()),
        );
        config.insert(e.to_string(), json!([{"command": cmd}]));
    }
    hooks(&env, Value::Object(config));
    let lines: Vec<Value> = [
        SESSION,
        r#"{"event":"sessionStart"}"#,
        r#"{"event":"beforeSubmitPrompt","prompt":"Fix the failing test."}"#,
        r#"{"event":"afterFileEdit","file_path":"src/example.ts","edits":[{"old_string":"a","new_string":"b"}]}"#,
        r#"{"event":"afterToolUse","tool":"run_shell","input":{"command":"echo \"hello from a hook\""},"output":"hello from a hook\n","duration_ms":42,"tool_call_id":"call-shell-1"}"#,
        r#"{"event":"afterToolUse","tool":"mcp__example__run","input":{"query":"weather","limit":3},"output":"{\"result\":\"sunny\"}","duration_ms":108,"tool_call_id":"call-mcp-1"}"#,
        r#"{"event":"afterToolUse","tool":"run_shell","input":{"command":"exit 1"},"output":"Error: command failed","is_error":true,"duration_ms":21,"tool_call_id":"call-shell-failed-1"}"#,
        r#"{"event":"subagentStart","subagent_type":"explore"}"#,
        r#"{"event":"subagentStop","subagent_type":"explore","status":"completed"}"#,
        r#"{"event":"preCompact","trigger":"auto","context_usage_percent":91.5,"context_tokens":183000,"context_window_size":200000,"message_count":48,"messages_to_compact":40,"is_first_compaction":true}"#,
        r#"{"event":"afterAgentResponse","text":"Done: the test passes."}"#,
        r#"{"event":"afterAgentThought","text":"The assertion compares the wrong field.","duration_ms":850}"#,
        r#"{"event":"stop","status":"completed"}"#,
        r#"{"event":"sessionEnd","reason":"completed","duration_ms":60000}"#,
    ]
    .iter()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    replay(&env, &lines);
    let mut all = String::new();
    for e in events {
        let text = std::fs::read_to_string(dir.join(format!("{e}.json")))
            .unwrap_or_else(|_| panic!("{e} did not fire"));
        // Detached runs of one event may finish in any order: sort their payloads.
        let mut payloads: Vec<&str> = text.lines().collect();
        payloads.sort();
        let text = payloads.join("\n");
        all.push_str(&format!(
            "{e}:\n{}\n",
            text.replace(&env.root().display().to_string(), "[TMP]")
        ));
    }
    insta::assert_snapshot!("stdin_every_event", all);
}

#[test]
fn before_submit_prompt_halts_and_injects() {
    let env = Env::new();
    let hook = script(
        &env,
        "prompt",
        r#"p=$(cat); case "$p" in
  *secret*) echo '{"continue":false,"userMessage":"no secrets","additional_context":"ignored"}' ;;
  *silent*) echo '{"continue":false}' ;;
  *) echo '{"continue":true,"additional_context":"remember the style guide","agent_message":"ok"}' ;;
esac"#,
    );
    hooks(
        &env,
        json!({"beforeSubmitPrompt": [{"command": hook, "matcher": "UserPromptSubmit"}]}),
    );
    let (out, _) = replay(
        &env,
        &[
            json!({"event": "beforeSubmitPrompt", "prompt": "my secret"}),
            json!({"event": "beforeSubmitPrompt", "prompt": "silent"}),
            json!({"event": "beforeSubmitPrompt", "prompt": "hello"}),
        ],
    );
    assert_eq!(out[0]["halt"], json!({"reason": "no secrets"}));
    assert_eq!(out[0]["user_message"], "no secrets");
    assert_eq!(
        out[0]["inject_context"],
        Value::Null,
        "no context when halting"
    );
    assert_eq!(
        out[1]["halt"]["reason"],
        "Prompt submission was blocked by a beforeSubmitPrompt hook."
    );
    assert_eq!(out[2]["halt"], Value::Null);
    assert_eq!(out[2]["inject_context"], "remember the style guide");
    assert_eq!(out[2]["agent_message"], "ok");
}

#[test]
fn after_file_edit_glob_and_matcher_must_both_pass() {
    let env = Env::new();
    let log = env.root().join("fired");
    let rec = |n: &str| {
        script(
            &env,
            n,
            &format!("cat >/dev/null; echo {n} >> {}", log.display()),
        )
    };
    hooks(
        &env,
        json!({"afterFileEdit": [
            {"command": rec("ts_glob"), "glob": "*.ts"},
            {"command": rec("src_glob_array"), "glob": ["src/**", "docs/*.md"]},
            {"command": rec("write_matcher"), "matcher": "Write"},
            {"command": rec("tab_matcher"), "matcher": "TabWrite"},
            {"command": rec("ts_and_tab"), "glob": "*.ts", "matcher": "TabWrite"},
            {"command": rec("no_filter")}
        ]}),
    );
    let fired = |path: &str| -> Vec<String> {
        let _ = std::fs::remove_file(&log);
        replay(
            &env,
            &[json!({"event": "afterFileEdit", "file_path": path})],
        );
        let mut v: Vec<String> = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        fired("src/deep/a.ts"),
        ["no_filter", "src_glob_array", "ts_glob", "write_matcher"]
    );
    assert_eq!(
        fired("docs/guide.md"),
        ["no_filter", "src_glob_array", "write_matcher"]
    );
    assert_eq!(fired("lib/x.rs"), ["no_filter", "write_matcher"]);
}

#[test]
fn stop_followup_is_held_with_loop_count_zero() {
    let env = Env::new();
    let seen = env.root().join("stop-stdin");
    let hook = script(
        &env,
        "stop",
        &format!(
            r#"cat > {}; echo '{{"followup_message":"run the tests again"}}'"#,
            seen.display()
        ),
    );
    hooks(
        &env,
        json!({"stop": [{"command": hook, "matcher": "Stop", "loop_limit": 3}]}),
    );
    let (out, summary) = replay(
        &env,
        &[
            json!({"event": "beforeSubmitPrompt", "prompt": "go"}),
            json!({"event": "stop", "status": "completed"}),
        ],
    );
    assert_eq!(out[1]["detached"], true);
    let stdin: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(stdin["loop_count"], 0);
    assert_eq!(stdin["status"], "completed");
    let queue = summary["queue"].as_array().unwrap();
    assert_eq!(queue.len(), 1);
    assert_eq!(queue[0]["text"], "run the tests again");
    assert_eq!(queue[0]["held"], true);
    assert_eq!(queue[0]["send_now"], false);
    assert_eq!(queue[0]["epoch"], 1);
    assert_eq!(
        queue[0]["origin"],
        json!({"dialect": "cursor", "event": "stop", "command": hook})
    );
}

#[test]
fn subagent_stop_followup_only_when_completed_and_start_ask_is_deny() {
    let env = Env::new();
    let stop = script(
        &env,
        "sstop",
        r#"cat >/dev/null; echo '{"followup_message":"review the subagent output"}'"#,
    );
    let start = script(
        &env,
        "sstart",
        r#"cat >/dev/null; echo '{"permission":"ask","user_message":"why?"}'"#,
    );
    hooks(
        &env,
        json!({
            "subagentStop": [{"command": stop, "matcher": "explore"}],
            "subagentStart": [{"command": start, "matcher": "^explore$"}]
        }),
    );
    let (out, summary) = replay(
        &env,
        &[
            json!({"event": "subagentStop", "subagent_type": "explore", "status": "error"}),
            json!({"event": "subagentStop", "subagent_type": "explore", "status": "aborted"}),
            json!({"event": "subagentStop", "subagent_type": "shell", "status": "completed"}),
            json!({"event": "subagentStop", "subagent_type": "explore", "status": "completed"}),
            json!({"event": "subagentStart", "subagent_type": "explore"}),
            json!({"event": "subagentStart", "subagent_type": "generalPurpose"}),
        ],
    );
    let queue = summary["queue"].as_array().unwrap();
    assert_eq!(queue.len(), 1, "{queue:?}");
    assert_eq!(queue[0]["held"], true);
    assert_eq!(
        out[4]["decision"], "deny",
        "ask counts as deny on subagentStart"
    );
    assert_eq!(out[4]["user_message"], "why?");
    assert_eq!(out[5]["decision"], "allow");
    assert_eq!(out[5]["runs"].as_array().unwrap().len(), 0);
}

#[test]
fn post_tool_use_context_is_a_budgeted_queued_message() {
    let env = Env::new();
    let hook = script(
        &env,
        "post",
        r#"cat >/dev/null; echo '{"additional_context":"lint the file","updated_mcp_tool_output":{"x":1}}'"#,
    );
    let fail = script(
        &env,
        "fail",
        r#"cat >/dev/null; echo '{"additional_context":"never read"}'"#,
    );
    hooks(
        &env,
        json!({"postToolUse": [{"command": hook}], "postToolUseFailure": [{"command": fail}]}),
    );
    let (_, summary) = replay(
        &env,
        &[
            json!({"event": "afterToolUse", "tool": "write_file", "input": {"path": "a"}, "output": "ok"}),
            json!({"event": "afterToolUse", "tool": "write_file", "input": {"path": "a"}, "output": "boom", "is_error": true}),
        ],
    );
    let queue = summary["queue"].as_array().unwrap();
    assert_eq!(queue.len(), 1);
    assert_eq!(queue[0]["text"], "lint the file");
    assert_eq!(queue[0]["held"], false);
    assert_eq!(summary["runs"].as_array().unwrap().len(), 2);
}

#[test]
fn tool_output_is_capped_before_stdin() {
    let env = Env::new();
    let size = env.root().join("size");
    let hook = script(&env, "post", &format!("wc -c > {}", size.display()));
    hooks(&env, json!({"afterShellExecution": [{"command": hook}]}));
    let big = "y".repeat(3_000_000);
    replay(
        &env,
        &[
            json!({"event": "afterToolUse", "tool": "run_shell", "input": {"command": "yes"}, "output": big}),
        ],
    );
    let n: usize = std::fs::read_to_string(&size)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(n < 200_000, "stdin was {n} bytes");
}

#[test]
fn session_env_reaches_later_hooks_of_the_session_only() {
    let env = Env::new();
    let seen = env.root().join("seen");
    let start = script(
        &env,
        "start",
        r#"cat >/dev/null; sleep 0.4; echo '{"env":{"FROM_SESSION":"yes","COPSE_HOOK_DEPTH":"0"}}'"#,
    );
    let gate = script(
        &env,
        "gate",
        &format!(
            "echo \"$FROM_SESSION depth=$COPSE_HOOK_DEPTH\" >> {}",
            seen.display()
        ),
    );
    hooks(
        &env,
        json!({"sessionStart": [{"command": start}], "beforeShellExecution": [{"command": gate}]}),
    );
    // The gate fires right after sessionStart, while its hook is still running: it
    // waits for it, so the env is always there.
    replay(
        &env,
        &[
            json!({"event": "sessionStart"}),
            json!({"event": "toolGate", "tool": "run_shell", "input": {"command": "ls"}}),
        ],
    );
    assert_eq!(std::fs::read_to_string(&seen).unwrap(), "yes depth=1\n");
    // A second replay is another session: no env.
    std::fs::remove_file(&seen).unwrap();
    replay(
        &env,
        &[json!({"event": "toolGate", "tool": "run_shell", "input": {"command": "ls"}})],
    );
    assert_eq!(std::fs::read_to_string(&seen).unwrap(), " depth=1\n");
}

#[test]
fn slow_detached_hook_never_delays_the_caller() {
    let env = Env::new();
    let slow = script(&env, "slow", "cat >/dev/null; sleep 1.5");
    let gate = script(&env, "gate", "cat >/dev/null; date +%s.%N");
    hooks(
        &env,
        json!({"afterAgentResponse": [{"command": slow}], "preToolUse": [{"command": gate}]}),
    );
    let start = Instant::now();
    let (out, summary) = replay(
        &env,
        &[
            json!({"event": "afterAgentResponse", "text": "hi"}),
            json!({"event": "toolGate", "tool": "write_file", "input": {"path": "x"}}),
        ],
    );
    assert_eq!(out[0]["detached"], true);
    // The gate answered (its run is in the summary) and the whole replay still waited
    // for the detached hook at the end.
    let runs = summary["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(
        runs[0]["event"], "preToolUse",
        "the gate finished before the slow detached hook"
    );
    assert!(start.elapsed() >= Duration::from_millis(1400));
}

#[test]
fn replay_errors_name_the_line() {
    let env = Env::new();
    let file = env.write(
        "bad.jsonl",
        "{\"event\":\"stop\"}\n{\"event\":\"toolGate\"}\n",
    );
    let r = env.cmd().args(["replay"]).args([&file]).run();
    assert_eq!(r.out.status.code(), Some(2));
    assert!(r.stderr().contains("bad.jsonl:2"), "{}", r.stderr());
    assert!(r.stderr().contains("\"tool\""), "{}", r.stderr());
    let file = env.write("bad2.jsonl", "{\"event\":\"beforeSubmitPromt\"}\n");
    let r = env.cmd().args(["replay"]).args([&file]).run();
    assert!(
        r.stderr().contains("unknown event \"beforeSubmitPromt\""),
        "{}",
        r.stderr()
    );
}

#[test]
fn replay_end_to_end_snapshot() {
    let env = Env::new();
    let gate = script(
        &env,
        "gate",
        r#"cat >/dev/null; echo '{"permission":"deny","agent_message":"no rm"}'"#,
    );
    let stop = script(
        &env,
        "stop",
        r#"cat >/dev/null; echo '{"followup_message":"summarise"}'"#,
    );
    let post = script(
        &env,
        "post",
        r#"cat >/dev/null; echo '{"additional_context":"check the diff"}'"#,
    );
    hooks(
        &env,
        json!({
            "beforeShellExecution": [{"command": gate, "matcher": "^rm"}],
            "stop": [{"command": stop}],
            "postToolUse": [{"command": post}]
        }),
    );
    let lines: Vec<Value> = vec![
        serde_json::from_str(SESSION).unwrap(),
        json!({"event": "beforeSubmitPrompt", "prompt": "clean up"}),
        json!({"event": "toolGate", "tool": "run_shell", "input": {"command": "rm -rf build"}}),
        json!({"event": "afterToolUse", "tool": "run_shell", "input": {"command": "ls"}, "output": "a b"}),
        json!({"event": "stop", "status": "completed"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let file = env.write("session.jsonl", &text);
    let json_out = env
        .cmd()
        .args(["--enable", "--json", "replay"])
        .args([&file])
        .run()
        .success();
    // Detached runs finish in any order; the snapshot sorts nothing, so check the
    // order-independent parts and snapshot the human transcript.
    let last: Value = serde_json::from_str(json_out.stdout().lines().last().unwrap()).unwrap();
    assert_eq!(last["queue"].as_array().unwrap().len(), 2);
    let human = env
        .cmd()
        .args(["--enable", "replay"])
        .args([&file])
        .run()
        .success();
    let queue_sorted = {
        let text = human.redacted();
        let (head, tail) = text.split_once("Queue:").unwrap();
        let mut lines: Vec<&str> = tail.lines().collect();
        let runs = lines.pop().unwrap();
        lines.sort();
        format!("{head}Queue:{}\n{runs}\n", lines.join("\n"))
    };
    insta::assert_snapshot!("replay_human", queue_sorted);
    let stdout = json_out.stdout();
    let first_lines: Vec<&str> = stdout.lines().take(lines.len()).collect();
    let per_line = crate::harness::redact(&first_lines.join("\n"), &env.root());
    insta::assert_snapshot!("replay_json_lines", per_line);
}

#[test]
fn dispatcher_caps_running_and_records_drops() {
    let env = Env::new();
    let hook = script(&env, "slow", "cat >/dev/null; sleep 0.1");
    let entries: Vec<Value> = (0..110).map(|_| json!({"command": hook})).collect();
    hooks(&env, json!({"afterAgentResponse": entries}));
    let (out, summary) = replay(&env, &[json!({"event": "afterAgentResponse", "text": "x"})]);
    // 8 running + 100 waiting; the rest are dropped and recorded.
    assert_eq!(out[0]["dispatched"], 108);
    assert_eq!(out[0]["dropped"], 2);
    assert_eq!(summary["runs"].as_array().unwrap().len(), 108);
    let dropped = summary["dropped"].as_array().unwrap();
    assert_eq!(dropped.len(), 2);
    assert_eq!(dropped[0]["event"], "afterAgentResponse");
    assert_eq!(dropped[0]["command"], hook);
}

#[test]
fn late_detached_hook_reports_the_turn_it_belongs_to() {
    let env = Env::new();
    let seen = env.root().join("late");
    let start = script(&env, "start", "cat >/dev/null; sleep 0.5");
    let late = script(&env, "late", &format!("cat > {}", seen.display()));
    hooks(
        &env,
        json!({"sessionStart": [{"command": start}], "afterAgentResponse": [{"command": late}]}),
    );
    replay(
        &env,
        &[
            json!({"event": "sessionStart"}),
            json!({"event": "beforeSubmitPrompt", "prompt": "first"}),
            json!({"event": "afterAgentResponse", "text": "answer to first"}),
            json!({"event": "beforeSubmitPrompt", "prompt": "second"}),
        ],
    );
    let stdin: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(stdin["generation_id"], "gen-1");
    assert_eq!(stdin["text"], "answer to first");
}
