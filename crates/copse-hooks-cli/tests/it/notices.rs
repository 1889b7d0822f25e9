//! Every verdict explains itself: one snapshot per notice kind, on stderr (human)
//! and in `--json` (`notices`, each with a stable `kind`).

use serde_json::{Value, json};

use crate::harness::{Env, Run};

fn kinds(v: &Value) -> Vec<String> {
    v["notices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["kind"].as_str().unwrap().to_string())
        .collect()
}

/// `gate run_shell` in human form: verdict on stdout, notices on stderr.
fn human(env: &Env, extra: &[&str]) -> Run {
    env.cmd()
        .args(extra)
        .args(["gate", "run_shell", "--input", r#"{"command":"ls"}"#])
        .run()
        .success()
}

fn json_gate(env: &Env, extra: &[&str]) -> Value {
    env.cmd()
        .args(extra)
        .args([
            "--json",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .run()
        .success()
        .json()
}

#[test]
fn hooks_off_says_how_to_turn_them_on() {
    let env = Env::new();
    env.user_cursor(r#"{"hooks":{"beforeShellExecution":[{"command":"echo hi"}]}}"#);
    let v = json_gate(&env, &[]);
    assert_eq!(kinds(&v), ["hooks_off"]);
    assert_eq!(v["version"], 1);
    insta::assert_snapshot!("notice_hooks_off", human(&env, &[]).redacted());
}

#[test]
fn recursion_guard_is_explained() {
    let env = Env::new();
    let r = env
        .cmd()
        .env("COPSE_HOOK_DEPTH", "1")
        .env("COPSE_HOOK_TOKEN", env.depth_token())
        .args([
            "--enable",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .run()
        .success();
    insta::assert_snapshot!("notice_recursion_guard", r.redacted());
    let v = env
        .cmd()
        .env("COPSE_HOOK_DEPTH", "1")
        .env("COPSE_HOOK_TOKEN", env.depth_token())
        .args([
            "--enable",
            "--json",
            "gate",
            "run_shell",
            "--input",
            "{\"command\": \"ls\"}",
        ])
        .run()
        .json();
    assert_eq!(kinds(&v), ["recursion_guard"]);
}

#[test]
fn untrusted_workspace_says_what_trusting_would_run() {
    let env = Env::new();
    env.project_cursor(r#"{"hooks":{"beforeShellExecution":[{"command":"./guard.sh"}]}}"#);
    let v = json_gate(&env, &["--enable"]);
    assert_eq!(kinds(&v), ["workspace_untrusted"]);
    assert!(
        v["notices"][0]["message"]
            .as_str()
            .unwrap()
            .contains("./guard.sh")
    );
    insta::assert_snapshot!(
        "notice_workspace_untrusted",
        human(&env, &["--enable"]).redacted()
    );
}

#[test]
fn changed_config_and_first_run_are_explained() {
    let env = Env::new();
    env.script("ws/.cursor/ok.sh", "cat >/dev/null");
    env.project_cursor(r#"{"hooks":{"beforeShellExecution":[{"command":".cursor/ok.sh"}]}}"#);
    env.cmd().args(["trust"]).run().success();
    insta::assert_snapshot!("notice_first_run", human(&env, &["--enable"]).redacted());
    // A one-shot gate notes a hook's first run once, not on every gate.
    let v = json_gate(&env, &["--enable"]);
    assert!(kinds(&v).is_empty(), "{v}");
    assert_eq!(v["runs"].as_array().unwrap().len(), 1, "{v}");
    env.project_cursor(
        r#"{"hooks":{"beforeShellExecution":[{"command":".cursor/ok.sh"},{"command":"true"}]}}"#,
    );
    let v = json_gate(&env, &["--enable"]);
    assert_eq!(kinds(&v), ["config_changed"], "{v}");
    insta::assert_snapshot!(
        "notice_config_changed",
        human(&env, &["--enable"]).redacted()
    );
}

#[test]
fn config_warnings_and_timeout_units() {
    let env = Env::new();
    env.user_cursor(
        r#"{"hooks":{"beforeShellExecuton":[{"command":"true"}],"beforeShellExecution":[{"command":"true","timeout":5000}]}}"#,
    );
    let v = json_gate(&env, &["--enable"]);
    assert_eq!(kinds(&v), ["timeout_units", "config_warning"], "{v}");
    insta::assert_snapshot!(
        "notice_config_warning",
        human(&env, &["--enable"]).redacted()
    );
}

#[test]
fn failed_runs_give_their_stderr_and_a_hint() {
    let env = Env::new();
    // Not executable: exit 126 suggests chmod +x.
    env.write("home/.cursor/noexec.sh", "#!/bin/sh\necho nope\n");
    // Exits 1 with a message on stderr.
    env.script(
        "home/.cursor/fail.sh",
        "cat >/dev/null; echo 'boom: config missing' >&2; exit 1",
    );
    env.user_cursor(&format!(
        r#"{{"hooks":{{"beforeShellExecution":[{{"command":"{}"}},{{"command":"{}"}}]}}}}"#,
        env.home().join(".cursor/noexec.sh").display(),
        env.home().join(".cursor/fail.sh").display()
    ));
    let v = json_gate(&env, &["--enable"]);
    assert_eq!(kinds(&v), ["hook_failed", "hook_failed"], "{v}");
    assert!(
        v["notices"][0]["hint"]
            .as_str()
            .unwrap()
            .contains("chmod +x"),
        "{v}"
    );
    assert!(
        v["notices"][1]["message"]
            .as_str()
            .unwrap()
            .contains("boom: config missing")
    );
    insta::assert_snapshot!("notice_hook_failed", human(&env, &["--enable"]).redacted());
}

/// A trusted workspace whose Cursor project hook `.cursor/log.sh` runs `body`, with no
/// extra writable paths (so `$HOME`, where `hook-logs/` exists, is outside the sandbox).
fn logging_hook(env: &Env, body: &str) {
    env.write(
        "copse/settings.json",
        &json!({"cursorHooksEnabled": true, "trustedWorkspaces": [env.workspace()]}).to_string(),
    );
    std::fs::create_dir_all(env.home().join("hook-logs")).unwrap();
    env.script("ws/.cursor/log.sh", body);
    env.project_cursor(r#"{"hooks":{"beforeShellExecution":[{"command":".cursor/log.sh"}]}}"#);
}

#[test]
fn a_sandbox_write_refusal_names_the_path_and_the_setting() {
    let env = Env::new();
    logging_hook(
        &env,
        &format!(
            "cat >/dev/null; echo x >> {}/hook-logs/a.log",
            env.home().display()
        ),
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
    let failed: Vec<&Value> = v["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["kind"] == "hook_failed")
        .collect();
    assert_eq!(failed.len(), 1, "{v}");
    let hint = failed[0]["hint"].as_str().unwrap();
    assert!(hint.contains("hook-logs/a.log"), "{hint}");
    assert!(hint.contains("sandboxWritablePaths"), "{hint}");
    let r = env
        .cmd()
        .args(["gate", "run_shell", "--input", r#"{"command":"ls"}"#])
        .run();
    insta::assert_snapshot!("notice_sandbox_refusal", r.redacted());
}

#[test]
fn a_sandbox_refusal_is_reported_when_the_hook_exits_0_with_the_narrowest_setting() {
    let env = Env::new();
    // A logging hook that exits 0 whatever happens; the marker in the workspace (which
    // it may write) proves it ran.
    logging_hook(
        &env,
        &format!(
            "cat >/dev/null; touch ran.marker; echo x >> {home}/hook-logs/a.log; echo y >> {home}/top.log; exit 0",
            home = env.home().display()
        ),
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
    assert!(
        env.workspace().join("ran.marker").exists(),
        "the hook did not run: {v}"
    );
    assert_eq!(v["decision"], "allow", "{v}");
    assert!(!env.home().join("hook-logs/a.log").exists());
    let refusals: Vec<&Value> = v["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["kind"] == "sandbox_refusal")
        .collect();
    assert_eq!(refusals.len(), 1, "one notice per run: {v}");
    let message = refusals[0]["message"].as_str().unwrap();
    assert!(message.contains("exited 0"), "{message}");
    assert!(message.contains("hook-logs/a.log"), "{message}");
    let hint = refusals[0]["hint"].as_str().unwrap();
    // The narrowest entry: the directory it wrote in, in the settings' own `~/` form,
    // never the whole home.
    assert!(hint.contains(r#""~/hook-logs""#), "{hint}");

    // A hook that writes straight into the home directory is told to use a directory
    // of its own, not to open the whole home.
    env.script(
        "ws/.cursor/log.sh",
        &format!(
            "cat >/dev/null; touch ran2.marker; echo y >> {}/top.log; exit 0",
            env.home().display()
        ),
    );
    env.cmd()
        .args(["trust", env.workspace().to_str().unwrap()])
        .run()
        .success();
    let r = env
        .cmd()
        .args(["gate", "run_shell", "--input", r#"{"command":"ls"}"#])
        .run();
    assert!(
        env.workspace().join("ran2.marker").exists(),
        "the hook did not run: {}",
        r.stderr()
    );
    assert!(
        r.stderr().contains("warning[sandbox_refusal]"),
        "{}",
        r.stderr()
    );
    assert!(
        r.stderr().contains("a directory of its own"),
        "{}",
        r.stderr()
    );
    insta::assert_snapshot!("notice_sandbox_refusal_exit_0", r.redacted());
}

#[test]
fn vendor_tool_names_are_aliases_with_a_note() {
    let env = Env::new();
    env.user_cursor(
        r#"{"hooks":{"beforeShellExecution":[{"command":"printf '{\"permission\":\"deny\"}'"}]}}"#,
    );
    for name in ["Bash", "Shell", "run_shell_command", "shell"] {
        let v = env
            .cmd()
            .args([
                "--enable",
                "--json",
                "gate",
                name,
                "--input",
                r#"{"command":"ls"}"#,
            ])
            .run()
            .success()
            .json();
        assert_eq!(v["decision"], "deny", "{name}: {v}");
        assert_eq!(v["notices"][0]["kind"], "tool_alias", "{name}");
    }
    env.write("ws/a.txt", "hello");
    let r = env
        .cmd()
        .args([
            "--enable",
            "gate",
            "Read",
            "--input",
            r#"{"file_path":"a.txt"}"#,
        ])
        .run();
    assert!(
        r.stderr().contains("Read is Claude Code's name"),
        "{}",
        r.stderr()
    );
    let r = env
        .cmd()
        .args(["--enable", "gate", "rnu_shell", "--input", "{}"])
        .run()
        .success();
    insta::assert_snapshot!("notice_unknown_tool", r.redacted());
}

#[test]
fn replay_carries_notices_too() {
    let env = Env::new();
    let file = env.write(
        "s.jsonl",
        "{\"event\":\"toolGate\",\"tool\":\"run_shell\",\"input\":{\"command\":\"ls\"}}\n",
    );
    let r = env
        .cmd()
        .args(["--json", "replay"])
        .arg(&file)
        .run()
        .success();
    let last: Value = serde_json::from_str(r.stdout().lines().last().unwrap()).unwrap();
    assert_eq!(kinds(&last), ["hooks_off"]);
    assert!(r.stderr().contains("warning[hooks_off]"));
}

#[test]
fn hostile_text_is_escaped_everywhere() {
    let env = Env::new();
    let evil = "printf '{\\\"permission\\\":\\\"deny\\\",\\\"user_message\\\":\\\"\\u001b[2Jgone\\\"}' # \u{1b}[2J\u{202e}";
    env.project_cursor(
        &json!({"hooks": {"beforeShellExecution": [{"command": evil, "matcher": "\u{1b}[31m"}]}})
            .to_string(),
    );
    let outputs = [
        env.cmd().args(["list"]).run(),
        env.cmd().args(["list", "--untrusted-preview"]).run(),
        env.cmd().args(["lint"]).run(),
        env.cmd()
            .args([
                "--enable",
                "--trust",
                "gate",
                "run_shell",
                "--input",
                r#"{"command":"ls"}"#,
            ])
            .run(),
        env.cmd()
            .args([
                "--enable",
                "--trust",
                "gate",
                "run_shell",
                "--input",
                "{\"command\":\"\u{1b}[2J\"}",
            ])
            .run(),
    ];
    for r in &outputs {
        let all = format!("{}{}", r.stdout(), r.stderr());
        assert!(!all.contains('\u{1b}'), "raw ESC in:\n{all}");
        assert!(!all.contains('\u{202e}'), "raw bidi override in:\n{all}");
    }
    assert!(outputs[0].stdout().contains("terminal control characters"));
    assert!(
        outputs[1].stdout().contains("OUTSIDE the sandbox")
            || outputs[1].stdout().contains("run in the sandbox")
    );
    assert!(outputs[1].stdout().contains("terminal control characters"));
    assert!(outputs[2].stdout().contains("terminal control characters"));
    insta::assert_snapshot!("hostile_list", outputs[0].redacted());
    insta::assert_snapshot!("hostile_gate", outputs[3].redacted());
}
