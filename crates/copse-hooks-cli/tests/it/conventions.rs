//! The conventions of cargo, ripgrep and gh: exit codes, stdin and file input, quiet
//! broken pipes, completions and a man page, colours, strict filters, streaming.

use serde_json::Value;

use crate::harness::Env;

fn decide(env: &Env, decision: &str) {
    env.user_cursor(&format!(
        r#"{{"hooks":{{"beforeShellExecution":[{{"command":"printf '{{\"permission\":\"{decision}\"}}'"}}]}}}}"#
    ));
}

fn code(env: &Env, args: &[&str]) -> Option<i32> {
    env.cmd().args(args).run().out.status.code()
}

#[test]
fn gate_exit_code_maps_the_decision() {
    let env = Env::new();
    let gate = [
        "--enable",
        "gate",
        "run_shell",
        "--input",
        r#"{"command":"ls"}"#,
        "--exit-code",
    ];
    decide(&env, "allow");
    assert_eq!(code(&env, &gate), Some(0));
    decide(&env, "deny");
    assert_eq!(code(&env, &gate), Some(1));
    decide(&env, "ask");
    assert_eq!(code(&env, &gate), Some(3));
    // Without --exit-code a deny still exits 0.
    assert_eq!(code(&env, &gate[..5]), Some(0));
    // Usage and input errors exit 2, never 1 (a deny).
    assert_eq!(
        code(
            &env,
            &["gate", "run_shell", "--input", "{nope", "--exit-code"]
        ),
        Some(2)
    );
    assert_eq!(code(&env, &["gate", "--exit-code"]), Some(2));
    assert_eq!(
        code(
            &env,
            &["--workspace", "/nonexistent", "gate", "x", "--input", "{}"]
        ),
        Some(2)
    );
}

#[test]
fn input_from_stdin_and_from_a_file() {
    let env = Env::new();
    env.user_cursor(
        r#"{"hooks":{"beforeShellExecution":[{"command":"grep -q 'rm -rf' && printf '{\"permission\":\"deny\"}' || true"}]}}"#,
    );
    let v = env
        .cmd()
        .args(["--enable", "--json", "gate", "run_shell", "--input", "-"])
        .run_with_stdin(br#"{"command":"rm -rf build"}"#)
        .success()
        .json();
    assert_eq!(v["decision"], "deny", "{v}");
    let file = env.write("call.json", r#"{"command":"ls"}"#);
    let v = env
        .cmd()
        .args(["--enable", "--json", "gate", "run_shell", "--input"])
        .arg(format!("@{}", file.display()))
        .run()
        .success()
        .json();
    assert_eq!(v["decision"], "allow", "{v}");
    let r = env
        .cmd()
        .args(["gate", "run_shell", "--input", "@/nonexistent.json"])
        .run();
    assert_eq!(r.out.status.code(), Some(2));
    assert!(
        r.stderr().contains("--input @/nonexistent.json"),
        "{}",
        r.stderr()
    );
    let r = env
        .cmd()
        .args(["gate", "run_shell", "--input", "@/dev"])
        .run();
    assert!(r.stderr().contains("not a regular file"), "{}", r.stderr());
}

#[test]
fn broken_pipes_end_quietly_on_every_command() {
    let env = Env::new();
    env.user_cursor(r#"{"hooks":{"beforeShellExecution":[{"command":"true"}]}}"#);
    let replay = env.write(
        "s.jsonl",
        "{\"event\":\"toolGate\",\"tool\":\"run_shell\",\"input\":{\"command\":\"ls\"}}\n",
    );
    env.cmd()
        .args([
            "--enable",
            "gate",
            "run_shell",
            "--input",
            "{\"command\": \"ls\"}",
        ])
        .run()
        .success();
    let replay = replay.display().to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec![
            "--enable",
            "gate",
            "run_shell",
            "--input",
            "{\"command\": \"ls\"}",
        ],
        vec![
            "--enable",
            "--json",
            "gate",
            "run_shell",
            "--input",
            "{\"command\": \"ls\"}",
        ],
        vec!["list"],
        vec!["--json", "list"],
        vec!["list", "--untrusted-preview"],
        vec!["lint"],
        vec!["log"],
        vec!["--json", "log"],
        vec!["show", "last"],
        vec!["--enable", "replay", &replay],
        vec!["demo"],
        vec!["--json", "demo"],
        vec!["sandbox", "check"],
        vec!["doctor"],
        vec!["--json", "doctor"],
        vec!["daemon", "status"],
        vec!["completions", "bash"],
        vec!["man"],
        vec!["--help"],
        vec!["test", "home/.cursor/hooks.json", "beforeShellExecution"],
    ];
    for args in commands {
        let mut cmd = env.cmd().args(&args);
        if args[0] == "test" {
            cmd.cmd.current_dir(env.root());
        }
        let (status, stderr) = cmd.run_with_closed_stdout();
        assert_ne!(status.code(), Some(101), "{args:?} panicked:\n{stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}:\n{stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?}:\n{stderr}");
    }
}

#[test]
fn completions_and_man_page() {
    let env = Env::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let r = env.cmd().args(["completions", shell]).run().success();
        assert!(r.stdout().contains("copse-hooks"), "{shell}");
        assert!(
            r.stdout().contains("exit-code"),
            "{shell}: flags are completed"
        );
    }
    assert_eq!(code(&env, &["completions", "tcsh"]), Some(2));
    let man = env.cmd().args(["man"]).run().success();
    assert!(
        man.stdout().starts_with(".ie") || man.stdout().contains(".TH copse-hooks"),
        "{}",
        man.stdout()
    );
    let help = env.cmd().args(["gate", "--help"]).run().success();
    assert!(help.stdout().contains("Examples:"), "{}", help.stdout());
}

#[test]
fn color_always_never_and_no_color() {
    let env = Env::new();
    decide(&env, "deny");
    let gate = [
        "--enable",
        "gate",
        "run_shell",
        "--input",
        "{\"command\": \"ls\"}",
    ];
    let always = env.cmd().args(["--color", "always"]).args(gate).run();
    assert!(
        always.stdout().contains("\u{1b}[31mdeny"),
        "{:?}",
        always.stdout()
    );
    let never = env.cmd().args(["--color", "never"]).args(gate).run();
    assert!(!never.stdout().contains('\u{1b}'));
    // Not a terminal and NO_COLOR set (the harness): plain.
    let auto = env.cmd().args(gate).run();
    assert!(!auto.stdout().contains('\u{1b}'));
    assert_eq!(code(&env, &["--color", "sometimes", "list"]), Some(2));
}

fn log_ids(env: &Env, args: &[&str]) -> Vec<String> {
    let v: Value = env
        .cmd()
        .args(["--json", "log"])
        .args(args)
        .run()
        .success()
        .json();
    v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn log_and_show_conventions() {
    let env = Env::new();
    decide(&env, "deny");
    for _ in 0..3 {
        env.cmd()
            .args([
                "--enable",
                "gate",
                "run_shell",
                "--input",
                "{\"command\": \"ls\"}",
            ])
            .run()
            .success();
    }
    assert_eq!(log_ids(&env, &["-n", "2"]).len(), 2);
    assert_eq!(log_ids(&env, &["--limit", "1"]).len(), 1);
    let newest = &log_ids(&env, &["-n", "1"])[0];
    let last: Value = env
        .cmd()
        .args(["--json", "show", "last"])
        .run()
        .success()
        .json();
    assert_eq!(&last["run_id"], newest);
    let prefix = &newest[..newest.len() - 2];
    let by_prefix: Value = env
        .cmd()
        .args(["--json", "show", prefix])
        .run()
        .success()
        .json();
    assert_eq!(&by_prefix["run_id"], newest);
    let missing = env.cmd().args(["show", "zz-no-such-run"]).run();
    assert_eq!(missing.out.status.code(), Some(2));
    assert!(missing.stderr().contains("no run zz-no-such-run"));
    // Filter values are checked by clap.
    let vim = env.cmd().args(["log", "--dialect", "vim"]).run();
    assert_eq!(vim.out.status.code(), Some(2));
    assert!(
        vim.stderr()
            .contains("possible values: cursor, claude, copse"),
        "{}",
        vim.stderr()
    );
    assert_eq!(code(&env, &["log", "--decision", "maybe"]), Some(2));
    // --since is strict.
    let bad = env.cmd().args(["log", "--since", "2026-02-31"]).run();
    assert_eq!(bad.out.status.code(), Some(2));
    assert!(bad.stderr().contains("2026-02-31"), "{}", bad.stderr());
    assert_eq!(log_ids(&env, &["--since", "2000-01-01T00:00Z"]).len(), 3);
    // Times are labelled.
    let utc = env.cmd().args(["log", "--utc"]).run().success();
    assert!(utc.stdout().contains(" UTC "), "{}", utc.stdout());
    let local = env.cmd().env("TZ", "UTC").args(["log"]).run().success();
    assert!(local.stdout().contains(" +00:00 "), "{}", local.stdout());
}

#[test]
fn replay_rejects_wrong_types_with_the_line_number() {
    let env = Env::new();
    let file = env.write(
        "bad.jsonl",
        "{\"event\":\"sessionStart\"}\n\n{\"event\":\"stop\",\"status\":5}\n",
    );
    let r = env.cmd().args(["replay"]).arg(&file).run();
    assert_eq!(r.out.status.code(), Some(2));
    assert!(r.stderr().contains("bad.jsonl:3"), "{}", r.stderr());
    assert!(
        r.stderr().contains("\"status\" must be a string, got 5"),
        "{}",
        r.stderr()
    );
    assert!(
        r.stdout().is_empty(),
        "nothing runs before the file is valid"
    );
    for (line, what) in [
        (
            "{\"event\":\"afterToolUse\",\"tool\":\"run_shell\",\"is_error\":\"yes\"}",
            "\"is_error\" must be true or false",
        ),
        (
            "{\"event\":\"preCompact\",\"context_usage_percent\":\"80\"}",
            "\"context_usage_percent\" must be a number",
        ),
        ("{\"event\":5}", "\"event\" must be a string"),
    ] {
        let file = env.write("bad2.jsonl", line);
        let r = env.cmd().args(["replay"]).arg(&file).run();
        assert!(
            r.stderr().contains("bad2.jsonl:1") && r.stderr().contains(what),
            "{}",
            r.stderr()
        );
    }
}

#[test]
fn replay_streams_each_line_as_it_completes() {
    use std::io::BufRead as _;
    let env = Env::new();
    let gate_file = env.root().join("go");
    // The hook on the second gate waits until the test has read the first line.
    env.user_cursor(&format!(
        r#"{{"hooks":{{"beforeShellExecution":[{{"command":"grep -q second && while [ ! -e {} ]; do sleep 0.02; done; true","timeout":60}}]}}}}"#,
        gate_file.display()
    ));
    let file = env.write(
        "s.jsonl",
        "{\"event\":\"toolGate\",\"tool\":\"run_shell\",\"input\":{\"command\":\"first\"}}\n{\"event\":\"toolGate\",\"tool\":\"run_shell\",\"input\":{\"command\":\"second\"}}\n",
    );
    let mut cmd = env
        .cmd()
        .args(["--enable", "--json", "replay"])
        .arg(&file)
        .cmd;
    cmd.stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let v: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["line"], 1, "line 1 is printed while line 2 still runs");
    std::fs::write(&gate_file, "").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(rest.lines().count(), 2, "line 2 and the summary: {rest}");
}

#[test]
fn workspace_option_names_the_root_to_trust() {
    let env = Env::new();
    let other = env.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let v: Value = env
        .cmd()
        .args(["--json", "--workspace"])
        .arg(&other)
        .arg("trust")
        .run()
        .success()
        .json();
    assert_eq!(v["trusted"], other.display().to_string());
    let v: Value = env
        .cmd()
        .args(["--json", "--workspace"])
        .arg(&other)
        .arg("untrust")
        .run()
        .success()
        .json();
    assert_eq!(v["was_trusted"], true);
}

#[test]
fn a_file_size_limit_neither_kills_the_gate_nor_hides_lost_records() {
    let env = Env::new();
    decide(&env, "deny");
    let script = format!(
        "ulimit -f 0; exec {} --enable gate run_shell --input '{{\"command\": \"ls\"}}'",
        env!("CARGO_BIN_EXE_copse-hooks")
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", env.home())
        .env("COPSE_DIR", env.copse_dir())
        .env("NO_COLOR", "1")
        .current_dir(env.workspace())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "SIGXFSZ must not kill it:\n{stderr}"
    );
    assert!(stdout.starts_with("deny run_shell"), "{stdout}");
    assert!(
        stderr
            .contains("warning[records_lost]: 1 hook run record of this command was not recorded"),
        "{stderr}"
    );
}

#[test]
fn gate_sessions_show_the_first_run_note_once() {
    let env = Env::new();
    env.script("ws/.cursor/ok.sh", "cat >/dev/null");
    env.project_cursor(r#"{"hooks":{"beforeShellExecution":[{"command":".cursor/ok.sh"}]}}"#);
    let gate = |session: &str| {
        env.cmd()
            .args([
                "--enable",
                "--trust",
                "gate",
                "run_shell",
                "--input",
                r#"{"command": "ls"}"#,
                "--session",
                session,
            ])
            .run()
            .success()
            .stderr()
    };
    assert!(gate("conv-1").contains("first run in this session"));
    assert!(!gate("conv-1").contains("first run in this session"));
    assert!(gate("conv-2").contains("first run in this session"));
}

#[test]
fn a_slow_hook_shows_a_progress_line_on_a_terminal() {
    // `script` gives the command a pseudo-terminal. The hook sleeps 1.5 s, so the
    // progress line (after 1 s) must have appeared, whatever the machine's speed.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: util-linux `script` is not installed");
        return;
    }
    let env = Env::new();
    env.user_cursor(
        r#"{"hooks":{"beforeShellExecution":[{"command":"cat >/dev/null; sleep 1.5"}]}}"#,
    );
    let line = format!(
        "{} --enable gate run_shell --input '{{\"command\": \"ls\"}}'",
        env!("CARGO_BIN_EXE_copse-hooks")
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", env.home())
        .env("COPSE_DIR", env.copse_dir())
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .current_dir(env.workspace())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("gating run_shell: waiting for hooks… 1s"),
        "{text:?}"
    );
    assert!(text.contains("allow run_shell (1 hook"), "{text:?}");
}

#[test]
fn help_snapshots() {
    let env = Env::new();
    let r = env
        .cmd()
        .args(["--help"])
        .env("COLUMNS", "100")
        .run()
        .success();
    insta::assert_snapshot!("help", r.stdout());
    let r = env
        .cmd()
        .args(["gate", "--help"])
        .env("COLUMNS", "100")
        .run()
        .success();
    insta::assert_snapshot!("help_gate", r.stdout());
}
