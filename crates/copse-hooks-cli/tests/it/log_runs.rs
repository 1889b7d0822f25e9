//! Runs as a hook author reads them (issue 25): `log` and `show` name the tool call
//! beside the hook, always give the exit code, label timeouts with a hint, print short
//! unique ids that `show` accepts, follow new runs with `-f`, and reject an unknown
//! `--event` with a did-you-mean. Also `test --payload` merging over the fixture, a
//! Claude allow reason kept from the model, and `list` dropping a stale last error.

use std::io::BufRead as _;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::harness::Env;

fn gate(env: &Env, command: &str) -> Value {
    env.cmd()
        .gate("run_shell", &json!({"command": command}).to_string())
        .success()
        .json()
}

fn log_json(env: &Env, args: &[&str]) -> Vec<Value> {
    let v = env
        .cmd()
        .args(["--json", "log"])
        .args(args)
        .run()
        .success()
        .json();
    v["runs"].as_array().unwrap().clone()
}

/// Four Cursor hooks whose runs end each way: allow, deny by exit 2, a failing exit 3
/// and a timeout. Each leaves a marker, so a test sees that it really ran.
fn setup(env: &Env) {
    let marker = |name: &str| env.root().join(format!("ran-{name}")).display().to_string();
    let s = |name: &str, body: &str| {
        env.script(
            format!("home/.cursor/{name}.sh"),
            &format!("touch {}\n{body}", marker(name)),
        )
        .display()
        .to_string()
    };
    env.user_cursor(
        &json!({"hooks": {"beforeShellExecution": [
            {"command": s("allow", r#"cat >/dev/null; echo '{"permission":"allow"}'"#), "matcher": "^npm"},
            {"command": s("deny2", "cat >/dev/null; echo 'not here' >&2; exit 2"), "matcher": "^rm"},
            {"command": s("broken", "cat >/dev/null; echo 'oops' >&2; exit 3"), "matcher": "^make"},
            {"command": s("slow", "cat >/dev/null; sleep 5"), "matcher": "^sleep", "timeout": 0.2}
        ]}})
        .to_string(),
    );
}

/// Replaces `YYYY-MM-DD HH:MM:SS` and `HH:MM:SS` stamps with fixed text.
fn stamps(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let fits = |i: usize, shape: &str| {
        i + shape.len() <= chars.len()
            && shape.chars().zip(&chars[i..]).all(|(s, c)| match s {
                'd' => c.is_ascii_digit(),
                other => other == *c,
            })
    };
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if fits(i, "dddd-dd-dd dd:dd:dd") {
            out.push_str("[DATE]");
            i += 19;
        } else if fits(i, "dd:dd:dd") {
            out.push_str("[TIME]");
            i += 8;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// `log` text with each run's short id replaced by `[ID]`, durations by `N`, paths
/// by `[ROOT]` and stamps fixed.
fn stable(env: &Env, text: &str, runs: &[Value]) -> String {
    let mut text = text.replace(&env.root().display().to_string(), "[ROOT]");
    for r in runs {
        if let Some(s) = r["short_id"].as_str() {
            text = text.replace(s, "[ID]");
        }
        text = text.replace(r["run_id"].as_str().unwrap(), "[RUN]");
    }
    let text = stamps(&text);
    // Durations vary run to run.
    let mut out = String::new();
    for line in text.lines() {
        let mut words: Vec<String> = line.split(' ').map(str::to_owned).collect();
        for i in 1..words.len() {
            let number = words[i - 1].trim_start_matches('[');
            if (words[i] == "ms]" || words[i] == "ms")
                && !number.is_empty()
                && number.chars().all(|c| c.is_ascii_digit())
            {
                words[i - 1] = words[i - 1].replace(number, "N");
            }
        }
        for w in &mut words {
            if w.starts_with("local-") {
                *w = "[SESSION]".into();
            }
        }
        out.push_str(&words.join(" "));
        out.push('\n');
    }
    out
}

#[test]
fn log_shows_the_tool_call_exit_codes_and_short_ids() {
    let env = Env::new();
    setup(&env);
    gate(&env, "npm install");
    gate(&env, "rm -rf /tmp/x");
    gate(&env, "make\tall\x1b[31m");
    gate(&env, "sleep 9");
    for name in ["allow", "deny2", "broken", "slow"] {
        assert!(
            env.root().join(format!("ran-{name}")).exists(),
            "{name} ran"
        );
    }
    let runs = log_json(&env, &[]);
    assert_eq!(runs.len(), 4, "{runs:?}");
    let shorts: Vec<&str> = runs
        .iter()
        .map(|r| r["short_id"].as_str().unwrap())
        .collect();
    for s in &shorts {
        assert!(s.len() >= 7, "{s}");
        assert!(s.len() < 20, "short ids are short: {s}");
        assert!(s.bytes().all(|b| b.is_ascii_hexdigit()), "{s}");
    }
    let mut unique = shorts.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), 4, "short ids are unique");
    assert_eq!(runs[3]["tool"], "run_shell");
    assert_eq!(runs[3]["tool_input"], "npm install");
    assert_eq!(runs[1]["tool_input"], "make all\\u{1b}[31m");

    let text = env.cmd().args(["log"]).run().success().stdout();
    assert!(text.contains("exit 2"), "{text}");
    assert!(!text.contains("· exit ·"), "never a bare exit: {text}");
    insta::assert_snapshot!("log_runs_tool_calls", stable(&env, &text, &runs));

    // `show` takes the short id, a 7-character prefix of it, and the full id.
    for id in [
        shorts[2].to_string(),
        shorts[2][..7].to_string(),
        runs[2]["run_id"].as_str().unwrap().to_string(),
    ] {
        let v = env
            .cmd()
            .args(["--json", "show", &id])
            .run()
            .success()
            .json();
        assert_eq!(v["run_id"], runs[2]["run_id"], "{id}");
        assert_eq!(v["short_id"], shorts[2]);
        assert_eq!(v["exit_code"], 2);
        assert_eq!(v["tool_input"], "rm -rf /tmp/x");
    }
    let shown = env.cmd().args(["show", shorts[2]]).run().success().stdout();
    insta::assert_snapshot!("show_runs_exit_2", stable(&env, &shown, &runs));
}

#[test]
fn a_timed_out_run_is_labelled_timeout_with_a_hint() {
    let env = Env::new();
    setup(&env);
    gate(&env, "sleep 9");
    assert!(env.root().join("ran-slow").exists(), "the hook ran");
    let runs = log_json(&env, &[]);
    assert_eq!(runs[0]["failure"], "timeout");
    let text = env.cmd().args(["log"]).run().success().stdout();
    assert!(text.contains("· timeout ·"), "{text}");
    let shown = env.cmd().args(["show", "last"]).run().success().stdout();
    assert!(!shown.contains("parse failed"), "{shown}");
    assert!(shown.contains("[timeout]"), "{shown}");
    assert!(shown.contains("hint:"), "{shown}");
    // The header (what the killed hook printed depends on the shell).
    let header = shown.split("\n\n").next().unwrap();
    insta::assert_snapshot!("show_runs_timeout", stable(&env, header, &runs));
}

#[test]
fn an_ambiguous_run_id_lists_the_candidates() {
    let env = Env::new();
    setup(&env);
    gate(&env, "npm install");
    gate(&env, "npm ci");
    assert!(env.root().join("ran-allow").exists(), "the hook ran");
    let runs = log_json(&env, &[]);
    assert_eq!(runs.len(), 2);
    // Every run id starts with `r1`: a prefix both share.
    let r = env.cmd().args(["show", "r1"]).run();
    assert!(!r.out.status.success());
    let err = r.stderr();
    assert!(err.contains("ambiguous"), "{err}");
    for run in &runs {
        assert!(err.contains(run["run_id"].as_str().unwrap()), "{err}");
        assert!(err.contains(run["short_id"].as_str().unwrap()), "{err}");
    }
    let none = env.cmd().args(["show", "0000000"]).run();
    assert!(!none.out.status.success());
    assert!(
        none.stderr().contains("no run 0000000"),
        "{}",
        none.stderr()
    );
}

#[test]
fn log_rejects_an_unknown_event_with_a_did_you_mean() {
    let env = Env::new();
    setup(&env);
    gate(&env, "npm install");
    let r = env
        .cmd()
        .args(["log", "--event", "beforeShelExecution"])
        .run();
    assert!(!r.out.status.success(), "{}", r.stdout());
    insta::assert_snapshot!("log_unknown_event", r.stderr());
    let r = env.cmd().args(["log", "--event", "zzzz"]).run();
    assert!(!r.out.status.success());
    assert!(
        r.stderr().contains("unknown event \"zzzz\""),
        "{}",
        r.stderr()
    );
    // Known names still filter, wire and canonical, in every dialect.
    assert_eq!(
        log_json(&env, &["--event", "beforeShellExecution"]).len(),
        1
    );
    assert_eq!(log_json(&env, &["--event", "toolGate"]).len(), 1);
    assert_eq!(log_json(&env, &["--event", "PreToolUse"]).len(), 0);
}

/// Kills `pid` with KILL unless `done` is signalled within two minutes: a safety net so
/// a `log -f` that never prints fails the test instead of hanging it (not a timing
/// assertion: the test itself waits on output, not on time).
fn watchdog(pid: u32) -> std::sync::mpsc::Sender<()> {
    let (done, wait) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            wait.recv_timeout(std::time::Duration::from_secs(120))
        {
            // SAFETY: kill(2) on a child the test has not reaped yet (it is blocked
            // reading the child's output).
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    });
    done
}

#[test]
fn log_follow_prints_runs_as_they_are_recorded() {
    let env = Env::new();
    setup(&env);
    gate(&env, "npm install");
    let mut cmd = env.cmd().args(["log", "-f"]).cmd;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let done = watchdog(child.id());
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("run_shell npm install"), "{first}");
    // A run recorded while following appears.
    gate(&env, "rm -rf /tmp/y");
    assert!(env.root().join("ran-deny2").exists(), "the hook ran");
    let next = lines.next().unwrap().unwrap();
    assert!(next.contains("run_shell rm -rf /tmp/y"), "{next}");
    assert!(next.contains("exit 2"), "{next}");
    // INT ends it with the conventional status.
    // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped.
    let rc = unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(rc, 0);
    let status = child.wait().unwrap();
    done.send(()).unwrap();
    use std::os::unix::process::ExitStatusExt as _;
    assert!(
        status.code() == Some(130) || status.signal() == Some(libc::SIGINT),
        "{status:?}"
    );

    // A reader that goes away ends it too (SIGPIPE is ignored; the write fails).
    let mut cmd = env.cmd().args(["--json", "log", "-f"]).cmd;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let done = watchdog(child.id());
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    // With --json, one run object per line.
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(first["tool_input"], "npm install");
    assert!(first["short_id"].is_string(), "{first}");
    drop(lines);
    gate(&env, "npm ci");
    let status = child.wait().unwrap();
    done.send(()).unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn test_payload_is_merged_over_the_fixture() {
    let env = Env::new();
    let out = env.root().join("stdin.json");
    let hook = env.script(
        "home/.cursor/cat.sh",
        &format!(
            "cat > {}; echo '{{\"permission\":\"allow\"}}'",
            out.display()
        ),
    );
    let source = env.user_cursor(
        &json!({"hooks": {"beforeShellExecution": [{"command": hook.display().to_string()}]}})
            .to_string(),
    );
    env.cmd()
        .args(["test"])
        .arg(&source)
        .args(["beforeShellExecution"])
        .run()
        .success();
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    std::fs::remove_file(&out).unwrap();
    env.cmd()
        .args(["test"])
        .arg(&source)
        .args([
            "beforeShellExecution",
            "--payload",
            r#"{"command":"npm install","cwd":null}"#,
        ])
        .run()
        .success();
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(merged["command"], "npm install");
    assert!(merged.get("cwd").is_none(), "null removes a key: {merged}");
    let mut expected = fixture.clone();
    let obj = expected.as_object_mut().unwrap();
    obj.insert("command".into(), json!("npm install"));
    obj.remove("cwd");
    assert_eq!(merged, expected, "every other fixture field is kept");
    assert!(fixture.get("conversation_id").is_some(), "{fixture}");

    let bad = env
        .cmd()
        .args(["test"])
        .arg(&source)
        .args(["beforeShellExecution", "--payload", "{nope"])
        .run();
    assert!(!bad.out.status.success());
    assert!(
        bad.stderr().contains("--payload is not valid JSON"),
        "{}",
        bad.stderr()
    );
}

#[test]
fn a_claude_allow_reason_goes_to_the_user_only() {
    let env = Env::new();
    let marker = env.root().join("ran-allow");
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "permissionDecisionReason": "allowed: looks safe"}});
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "no network"}});
    let allow_hook = env.script(
        "home/.claude/allow.sh",
        &format!("touch {}; cat >/dev/null; echo '{allow}'", marker.display()),
    );
    let deny_hook = env.script(
        "home/.claude/deny.sh",
        &format!("cat >/dev/null; echo '{deny}'"),
    );
    let hooks = |cmds: &[&std::path::Path]| {
        json!({"hooks": {"PreToolUse": [{"hooks": cmds.iter().map(|c|
            json!({"type": "command", "command": c.display().to_string()})).collect::<Vec<_>>()}]}})
        .to_string()
    };
    env.write("home/.claude/settings.json", &hooks(&[&allow_hook]));
    let v = gate(&env, "curl example.com");
    assert!(marker.exists(), "the allow hook ran");
    assert_eq!(v["decision"], "allow", "{v}");
    assert!(
        !v.to_string().contains("\"agent_message\":\"allowed"),
        "the allow reason reached the model: {v}"
    );
    assert!(
        v.to_string().contains("allowed: looks safe"),
        "shown to the user: {v}"
    );

    // Beside another hook's deny, only the deny's reason reaches the model.
    std::fs::remove_file(&marker).unwrap();
    env.write(
        "home/.claude/settings.json",
        &hooks(&[&allow_hook, &deny_hook]),
    );
    let v = gate(&env, "curl example.com");
    assert!(marker.exists(), "the allow hook ran");
    assert_eq!(v["decision"], "deny", "{v}");
    assert_eq!(v["agent_message"], "no network", "{v}");
}

#[test]
fn list_drops_a_last_error_once_the_hook_succeeds() {
    let env = Env::new();
    let fixed = env.root().join("fixed");
    let ran = env.root().join("ran");
    let hook = env.script(
        "home/.cursor/flaky.sh",
        &format!(
            "cat >/dev/null; touch {ran}; if [ -e {fixed} ]; then echo '{{\"permission\":\"allow\"}}'; \
             else echo 'boom' >&2; exit 3; fi",
            ran = ran.display(),
            fixed = fixed.display()
        ),
    );
    env.user_cursor(
        &json!({"hooks": {"beforeShellExecution": [{"command": hook.display().to_string()}]}})
            .to_string(),
    );
    let last_error = || {
        let v = env.cmd().args(["--json", "list"]).run().success().json();
        v["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["command"].as_str().unwrap().ends_with("flaky.sh"))
            .unwrap()["last_error"]
            .clone()
    };
    gate(&env, "ls");
    assert!(ran.exists(), "the hook ran");
    assert_ne!(last_error(), Value::Null, "the failure is shown");
    std::fs::write(&fixed, "").unwrap();
    std::fs::remove_file(&ran).unwrap();
    gate(&env, "ls");
    assert!(ran.exists(), "the hook ran again");
    assert_eq!(last_error(), Value::Null, "a later success clears it");
}
