//! The audit store through the CLI: every run recorded, `log`, `show`, last errors.

use serde_json::{Value, json};

use crate::harness::Env;

fn setup(env: &Env) {
    let s = |name: &str, body: &str| {
        env.script(format!("home/.cursor/{name}.sh"), body)
            .display()
            .to_string()
    };
    env.user_cursor(
        &json!({"hooks": {
            "beforeShellExecution": [
                {"command": s("deny", r#"cat >/dev/null; echo '{"permission":"deny","agent_message":"no","user_message":"blocked"}'"#), "matcher": "^rm"},
                {"command": s("ask", r#"cat >/dev/null; echo '{"permission":"ask"}'"#), "matcher": "^git push"},
                {"command": s("allow", r#"cat >/dev/null; echo '{"permission":"allow"}'"#), "matcher": "^ls"},
                {"command": s("none", "cat >/dev/null"), "matcher": "^echo"},
                {"command": s("slow", "sleep 5"), "matcher": "^sleep", "timeout": 0.2}
            ],
            "stop": [{"command": s("stop", r#"cat >/dev/null; echo '{"followup_message":"again"}'"#)}]
        }})
        .to_string(),
    );
}

fn gate(env: &Env, command: &str) {
    env.cmd()
        .gate("run_shell", &json!({"command": command}).to_string())
        .success();
}

fn log(env: &Env, args: &[&str]) -> Vec<Value> {
    let v = env
        .cmd()
        .args(["--json", "log"])
        .args(args)
        .run()
        .success()
        .json();
    v["runs"].as_array().unwrap().clone()
}

#[test]
fn every_outcome_is_recorded_and_queryable() {
    let env = Env::new();
    setup(&env);
    for c in ["rm -rf x", "git push", "ls", "echo hi", "sleep 1"] {
        gate(&env, c);
    }
    let file = env.write("s.jsonl", "{\"event\":\"stop\",\"status\":\"completed\"}\n");
    env.cmd()
        .args(["--enable", "replay"])
        .args([&file])
        .run()
        .success();
    let all = log(&env, &[]);
    let outcomes: Vec<&str> = all.iter().map(|r| r["outcome"].as_str().unwrap()).collect();
    assert_eq!(
        outcomes,
        ["none", "failed", "none", "allow", "ask", "deny"],
        "newest first"
    );
    assert_eq!(all[0]["event"], "stop", "detached runs are recorded");
    assert_eq!(log(&env, &["--decision", "deny"]).len(), 1);
    assert_eq!(log(&env, &["--failed"]).len(), 1);
    assert_eq!(log(&env, &["--failed"])[0]["failure"], "timeout");
    assert_eq!(log(&env, &["--event", "stop"]).len(), 1);
    assert_eq!(
        log(&env, &["--event", "toolGate"]).len(),
        5,
        "canonical names filter too"
    );
    assert_eq!(log(&env, &["--dialect", "claude"]).len(), 0);
    assert_eq!(log(&env, &["--limit", "2"]).len(), 2);
    assert_eq!(log(&env, &["--since", "1d"]).len(), 6);
    assert_eq!(log(&env, &["--since", "2999-01-01"]).len(), 0);
    let bad = env.cmd().args(["log", "--since", "yesterday"]).run();
    assert_eq!(bad.out.status.code(), Some(2));

    // `show` prints the chips and sections.
    let deny = &log(&env, &["--decision", "deny"])[0];
    let shown = env
        .cmd()
        .args(["show", deny["run_id"].as_str().unwrap()])
        .run()
        .success();
    let text = shown
        .redacted()
        .replace(deny["run_id"].as_str().unwrap(), "[RUN]")
        .replace(deny["short_id"].as_str().unwrap(), "[RUN]");
    let text = regex_free_dates(&text);
    let text = match text.find("local-") {
        Some(i) => {
            let end = text[i..].find(' ').map(|e| i + e).unwrap_or(text.len());
            format!("{}[SESSION]{}", &text[..i], &text[end..])
        }
        None => text,
    };
    insta::assert_snapshot!("show_deny", text);
    let v = env
        .cmd()
        .args(["--json", "show", deny["run_id"].as_str().unwrap()])
        .run()
        .success()
        .json();
    assert_eq!(v["agent_message"], "no");
    assert_eq!(v["exit_code"], 0);
    assert!(
        v["stdin"]
            .as_str()
            .unwrap()
            .contains("\"command\":\"rm -rf x\"")
    );
    let missing = env.cmd().args(["show", "r0-nope"]).run();
    assert_eq!(missing.out.status.code(), Some(2));
    assert!(
        missing.stderr().contains("no run r0-nope"),
        "{}",
        missing.stderr()
    );
}

/// Replaces `YYYY-MM-DD HH:MM:SS` with a fixed stamp.
fn regex_free_dates(text: &str) -> String {
    let shape = |w: &[char]| {
        w.iter().enumerate().all(|(j, c)| match j {
            4 | 7 => *c == '-',
            10 => *c == ' ',
            13 | 16 => *c == ':',
            _ => c.is_ascii_digit(),
        })
    };
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if i + 19 <= chars.len() && shape(&chars[i..i + 19]) {
            out.push_str("[DATE]");
            i += 19;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn list_shows_each_hooks_most_recent_error_across_sessions() {
    let env = Env::new();
    setup(&env);
    gate(&env, "sleep 1");
    let v = env.cmd().args(["--json", "list"]).run().success().json();
    let slow = v["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["command"].as_str().unwrap().ends_with("slow.sh"))
        .unwrap();
    assert_eq!(slow["last_error"], "timed out after 0.2s");
    let deny = v["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["command"].as_str().unwrap().ends_with("deny.sh"))
        .unwrap();
    assert_eq!(deny["last_error"], Value::Null);
    // A newer session without failures does not hide it (issue 12: the most recent
    // failure across sessions, as `doctor` shows it).
    gate(&env, "ls");
    let v = env.cmd().args(["--json", "list"]).run().success().json();
    let slow = v["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["command"].as_str().unwrap().ends_with("slow.sh"))
        .unwrap();
    assert_eq!(slow["last_error"], "timed out after 0.2s");
}

#[test]
fn dropped_detached_runs_are_recorded() {
    let env = Env::new();
    let hook = env
        .script("home/.cursor/slow.sh", "cat >/dev/null; sleep 0.05")
        .display()
        .to_string();
    let entries: Vec<Value> = (0..110).map(|_| json!({"command": hook})).collect();
    env.user_cursor(&json!({"hooks": {"afterAgentResponse": entries}}).to_string());
    let file = env.write(
        "s.jsonl",
        "{\"event\":\"afterAgentResponse\",\"text\":\"x\"}\n",
    );
    env.cmd()
        .args(["--enable", "replay"])
        .args([&file])
        .run()
        .success();
    let runs = log(&env, &["--limit", "500"]);
    assert_eq!(runs.len(), 110);
    assert_eq!(runs.iter().filter(|r| r["kind"] == "dropped").count(), 2);
}

#[test]
fn dry_run_and_read_commands_create_no_database() {
    let env = Env::new();
    setup(&env);
    env.cmd().args(["list"]).run().success();
    env.cmd().args(["log"]).run().success();
    assert!(!env.copse_dir().join("spine.db").exists());
}

#[test]
fn an_unusable_audit_store_degrades_to_a_warning() {
    let env = Env::new();
    setup(&env);
    // A directory where the database file should be: it cannot be opened.
    std::fs::create_dir_all(env.copse_dir().join("spine.db")).unwrap();
    let r = env
        .cmd()
        .gate("run_shell", r#"{"command":"rm -rf x"}"#)
        .success();
    assert_eq!(r.json()["decision"], "deny", "gating carries on");
    assert!(r.stderr().contains("audit store"), "{}", r.stderr());
}

#[test]
fn a_detached_claude_halt_reaches_the_host_and_is_recorded() {
    let env = Env::new();
    let hook = env
        .script(
            "home/.claude/post.sh",
            r#"cat >/dev/null; echo '{"continue": false, "stopReason": "stop everything"}'"#,
        )
        .display()
        .to_string();
    env.write(
        "home/.claude/settings.json",
        &json!({"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": hook}]}]}})
            .to_string(),
    );
    let file = env.write(
        "s.jsonl",
        "{\"event\":\"afterToolUse\",\"tool\":\"run_shell\",\"input\":{\"command\":\"ls\"},\"output\":\"a\"}\n",
    );
    let out = env
        .cmd()
        .args(["--enable", "replay"])
        .args([&file])
        .run()
        .success();
    // Claude's `continue: false` stops the run on every event: the host is told.
    assert!(
        out.stdout()
            .contains("Halted by a detached hook: stop everything"),
        "{}",
        out.stdout()
    );
    let runs = log(&env, &[]);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["kind"], "run", "{runs:?}");
    assert_eq!(runs[0]["event"], "PostToolUse");
}

#[test]
fn a_run_whose_process_escaped_its_group_is_stored_as_leaked() {
    let env = Env::new();
    let s = |name: &str, body: &str| {
        env.script(format!("home/.cursor/{name}.sh"), body)
            .display()
            .to_string()
    };
    // A `setsid` daemon that ignores TERM, then a hang: the run is killed at its
    // timeout while the daemon is still outside the group.
    let daemon = "cat >/dev/null; setsid sh -c 'trap \"\" TERM; exec sleep 1000' \
                  </dev/null >/dev/null 2>&1 & sleep 1000";
    env.user_cursor(
        &json!({"hooks": {"beforeShellExecution": [
            {"command": s("daemon", daemon), "matcher": "^daemon", "timeout": 0.5},
            {"command": s("slow", "sleep 5"), "matcher": "^sleep", "timeout": 0.2}
        ]}})
        .to_string(),
    );
    gate(&env, "sleep 1");
    gate(&env, "daemon");
    let failed = log(&env, &["--failed"]);
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert_eq!(failed[0]["failure"], "timeout");
    assert_eq!(failed[0]["leaked"], true, "the escape was not stored");
    assert_eq!(
        failed[1]["leaked"], false,
        "an ordinary timeout is not leaked"
    );
    let id = failed[0]["run_id"].as_str().unwrap();

    let shown = env
        .cmd()
        .args(["--json", "show", id])
        .run()
        .success()
        .json();
    assert_eq!(shown["leaked"], true);
    let shown = env.cmd().args(["show", id]).run().success();
    let first = shown
        .redacted()
        .lines()
        .next()
        .unwrap()
        .replace(failed[0]["short_id"].as_str().unwrap(), "[RUN]");
    insta::assert_snapshot!("show_leaked", first);

    let listed = env.cmd().args(["log", "--failed"]).run().success();
    let listed = regex_free_dates(&listed.redacted())
        .replace(failed[0]["short_id"].as_str().unwrap(), "[RUN]")
        .replace(failed[1]["short_id"].as_str().unwrap(), "[RUN2]");
    insta::assert_snapshot!("log_failed_leaked", listed);
}

/// A Claude `type: "http"` hook is recorded like a command run: its stdin is the
/// POSTed body, its stdout the response body, its exit code the HTTP status; a
/// failed request is recorded with its failure kind and no exit code.
#[test]
fn http_hook_runs_are_recorded_with_status_and_body() {
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/gate", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let answer = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on Fridays"}}"#;
            let mut out = stream;
            let _ = write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    let env = Env::new();
    env.write(
        "home/.claude/settings.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "http", "url": url},
            {"type": "http", "url": "http://127.0.0.1:9/refused"}
        ]}]}})
        .to_string(),
    );
    let v = env
        .cmd()
        .gate("run_shell", &json!({"command": "ls"}).to_string())
        .success()
        .json();
    assert_eq!(v["decision"], "deny", "{v}");
    let runs = log(&env, &["--dialect", "claude"]);
    assert_eq!(runs.len(), 2, "{runs:#?}");
    let ok = runs
        .iter()
        .find(|r| r["command"] == format!("http: {url}"))
        .unwrap();
    let shown = env
        .cmd()
        .args(["--json", "show", ok["run_id"].as_str().unwrap()])
        .run()
        .success()
        .json();
    assert_eq!(shown["exit_code"], 200);
    assert!(
        shown["stdout"].as_str().unwrap().contains("not on Fridays"),
        "{shown}"
    );
    assert!(
        shown["stdin"]
            .as_str()
            .unwrap()
            .contains("\"tool_name\":\"Bash\"")
    );
    let refused = runs
        .iter()
        .find(|r| r["command"] == "http: http://127.0.0.1:9/refused")
        .unwrap();
    assert_eq!(refused["failure"], "spawn", "{refused}");
}
