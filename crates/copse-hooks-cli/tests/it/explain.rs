//! `gate --explain [--json]` and `replay --explain`: every configured hook for the
//! event with its verdict, or why it did not run, each reason from a real config.
//! Every test has a control: a hook that does run leaves a marker file, so a test
//! cannot pass because nothing ran at all.

use serde_json::{Value, json};

use crate::harness::{Env, Run};

/// A user Cursor hook that leaves `marker` and denies (the control).
fn control(env: &Env, marker: &str) -> String {
    let path = env.root().join(marker);
    format!(
        "cat >/dev/null; touch {}; echo '{{\"permission\":\"deny\",\"agent_message\":\"blocked\"}}'",
        path.display()
    )
}

fn explain_json(env: &Env, command: &str) -> Value {
    explain_cmd(env, command, &["--enable", "--json"])
        .success()
        .json()
}

fn explain_cmd(env: &Env, command: &str, global: &[&str]) -> Run {
    env.cmd()
        .args(global)
        .args(["gate", "run_shell", "--explain", "--input"])
        .arg(json!({ "command": command }).to_string())
        .run()
}

/// The explained hook whose command is `command`.
fn hook<'a>(v: &'a Value, command: &str) -> &'a Value {
    v["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["command"] == command)
        .unwrap_or_else(|| panic!("no hook `{command}` in {v:#}"))
}

fn ran(env: &Env, marker: &str) -> bool {
    env.root().join(marker).exists()
}

#[test]
fn ran_matcher_other_event_and_not_for_this_call() {
    let env = Env::new();
    let ctl = control(&env, "ran");
    env.user_cursor(
        &json!({"version": 1, "hooks": {
            "beforeShellExecution": [
                {"command": ctl},
                {"command": "echo never", "matcher": "^git "},
            ],
            "afterShellExecution": [{"command": "echo after"}],
            "beforeReadFile": [{"command": "echo read"}],
            "stop": [{"command": "echo stop"}],
        }})
        .to_string(),
    );
    let v = explain_json(&env, "npm install");
    assert!(ran(&env, "ran"), "the control hook really ran");
    // The typed shape (its schema, schemas/output/explain.schema.json, is generated
    // from this type and checked by copse-hooks-wire's schema test).
    let typed: copse_hooks_wire::output::ExplainOutput = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), v);
    assert_eq!(v["version"], 1);
    assert_eq!(v["event"], "toolGate");
    assert_eq!(v["tool"], "run_shell");
    assert_eq!(v["decision"], "deny", "the gate fields are all there");
    assert_eq!(v["runs"].as_array().unwrap().len(), 1);
    let c = hook(&v, &ctl);
    assert_eq!(c["status"], "ran");
    assert_eq!(c["verdict"], "deny — blocked");
    assert_eq!(c["reason"], Value::Null);
    let m = hook(&v, "echo never");
    assert_eq!(m["status"], "skipped");
    assert_eq!(m["reason"], "matcher_no_match");
    assert_eq!(m["subject"], "npm install");
    assert_eq!(m["matcher"], "^git");
    let a = hook(&v, "echo after");
    assert_eq!(a["reason"], "other_event");
    assert_eq!(a["runs_at"], "afterToolUse");
    assert_eq!(hook(&v, "echo read")["reason"], "not_for_this_call");
    // A hook of an unrelated event is not listed.
    assert!(v["hooks"].as_array().unwrap().len() == 4, "{v:#}");

    // The human form, escaped and readable.
    let out = explain_cmd(&env, "npm install", &["--enable"]).success();
    insta::assert_snapshot!("explain_human", out.redacted());
}

#[test]
fn hooks_off_and_recursion_guard() {
    let env = Env::new();
    let ctl = control(&env, "ran");
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": ctl}]}}).to_string(),
    );
    let v = explain_cmd(&env, "ls", &["--json"]).success().json();
    assert_eq!(v["hooks_enabled"], false);
    assert_eq!(hook(&v, &ctl)["reason"], "hooks_off");
    assert!(!ran(&env, "ran"));

    let v = env
        .cmd()
        .env("COPSE_HOOK_DEPTH", "1")
        .env("COPSE_HOOK_TOKEN", env.depth_token())
        .args(["--enable", "--json", "gate", "run_shell", "--explain"])
        .args(["--input", r#"{"command":"ls"}"#])
        .run()
        .success()
        .json();
    assert_eq!(v["recursion_guard"], true);
    assert_eq!(hook(&v, &ctl)["reason"], "recursion_guard");
    assert!(!ran(&env, "ran"));

    // Control: the same config runs with hooks on outside a hook.
    let v = explain_json(&env, "ls");
    assert_eq!(hook(&v, &ctl)["status"], "ran");
    assert!(ran(&env, "ran"));
}

#[test]
fn untrusted_changed_config_and_changed_script() {
    let env = Env::new();
    let ctl = control(&env, "ran");
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": ctl}]}}).to_string(),
    );
    env.script("ws/.cursor/check.sh", "cat >/dev/null; echo '{}'");
    let project = env.project_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": "./.cursor/check.sh"},
            {"command": "echo project"},
        ]}})
        .to_string(),
    );
    let v = explain_json(&env, "ls");
    assert!(ran(&env, "ran"));
    let p = hook(&v, "echo project");
    assert_eq!(p["reason"], "untrusted");
    assert_eq!(p["file"], env.workspace().display().to_string());
    assert!(
        p["message"]
            .as_str()
            .unwrap()
            .contains(&format!("copse-hooks trust {}", env.workspace().display())),
        "{p:#}"
    );

    // Trusted: both project hooks run.
    env.cmd().args(["trust"]).run().success();
    let v = explain_json(&env, "ls");
    assert_eq!(hook(&v, "echo project")["status"], "ran");
    assert_eq!(hook(&v, "./.cursor/check.sh")["status"], "ran");

    // The script changed since trusted: only that hook stops.
    env.script("ws/.cursor/check.sh", "cat >/dev/null; echo '{}' # edited");
    let v = explain_json(&env, "ls");
    let s = hook(&v, "./.cursor/check.sh");
    assert_eq!(s["reason"], "script_changed", "{v:#}");
    assert_eq!(
        s["file"],
        env.workspace()
            .join(".cursor/check.sh")
            .display()
            .to_string()
    );
    assert_eq!(hook(&v, "echo project")["status"], "ran");

    // The config changed since trusted: every hook of it stops, naming the file.
    std::fs::write(
        &project,
        json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": "echo project"}]}})
            .to_string(),
    )
    .unwrap();
    let v = explain_json(&env, "ls");
    let p = hook(&v, "echo project");
    assert_eq!(p["reason"], "config_changed");
    assert_eq!(p["file"], project.display().to_string());
    assert_eq!(hook(&v, &ctl)["status"], "ran");
}

#[test]
fn claude_disable_all_hooks_and_if_condition() {
    let env = Env::new();
    let marker = env.root().join("claude-ran");
    let settings = env.write(
        "home/.claude/settings.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": format!("touch {}", marker.display())},
            {"type": "command", "command": "echo git-only", "if": "Bash(git *)"},
            {"type": "command", "command": "echo edits", "matcher": "Edit"},
        ]}, {"matcher": "Edit", "hooks": [{"type": "command", "command": "echo edit-matcher"}]}]}})
        .to_string(),
    );
    let v = explain_json(&env, "npm install");
    assert!(marker.exists(), "the control Claude hook ran");
    let c = hook(&v, "echo git-only");
    assert_eq!(c["reason"], "condition_false", "{v:#}");
    assert_eq!(c["condition"], "Bash(git *)");
    let m = hook(&v, "echo edit-matcher");
    assert_eq!(m["reason"], "matcher_no_match");
    assert_eq!(m["subject"], "Bash");

    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    doc["disableAllHooks"] = json!(true);
    std::fs::write(&settings, doc.to_string()).unwrap();
    let v = explain_json(&env, "npm install");
    let c = hook(&v, "echo git-only");
    assert_eq!(c["reason"], "claude_disabled");
    assert_eq!(c["file"], settings.display().to_string());
}

#[test]
fn gemini_and_codex_switches() {
    let env = Env::new();
    let ctl = control(&env, "ran");
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": ctl}]}}).to_string(),
    );
    let gemini = env.write(
        "home/.gemini/settings.json",
        &json!({"hooks": {"BeforeTool": [{"hooks": [
            {"name": "noisy", "type": "command", "command": "echo gemini"}
        ]}]}, "hooksConfig": {"disabled": ["noisy"]}})
        .to_string(),
    );
    let codex = env.write("home/.codex/config.toml", "[features]\nhooks = false\n");
    env.write(
        "home/.codex/hooks.json",
        &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "echo codex"}]}]}})
            .to_string(),
    );
    let v = explain_json(&env, "ls");
    assert!(ran(&env, "ran"));
    let g = hook(&v, "echo gemini");
    assert_eq!(g["reason"], "vendor_disabled", "{v:#}");
    assert!(
        g["message"]
            .as_str()
            .unwrap()
            .contains(&gemini.display().to_string())
    );
    let c = hook(&v, "echo codex");
    assert_eq!(c["reason"], "vendor_disabled", "{v:#}");
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .contains(&codex.display().to_string())
    );
}

#[test]
fn invalid_matcher_and_unparsable_config() {
    let env = Env::new();
    let ctl = control(&env, "ran");
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": ctl},
            {"command": "echo broken", "matcher": "("},
        ]}})
        .to_string(),
    );
    let broken = env.write("home/.claude/settings.json", "{\"hooks\": ");
    let v = explain_json(&env, "ls");
    assert!(ran(&env, "ran"));
    assert_eq!(hook(&v, "echo broken")["reason"], "matcher_invalid");
    let problems = v["problems"].as_array().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p["source"] == broken.display().to_string()),
        "{v:#}"
    );
}

#[test]
fn hostile_config_text_is_escaped_in_human_output() {
    let env = Env::new();
    let ctl = control(&env, "ran");
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": ctl},
            {"command": "echo \u{1b}[31mred", "matcher": "^x\u{1b}[2J"},
        ]}})
        .to_string(),
    );
    let out = explain_cmd(&env, "ls", &["--enable"]).success();
    assert!(ran(&env, "ran"));
    assert!(!out.stdout().contains('\u{1b}'), "{}", out.stdout());
}

#[test]
fn replay_explain_lists_hooks_per_event() {
    let env = Env::new();
    let ctl = control(&env, "ran");
    env.user_cursor(
        &json!({"version": 1, "hooks": {
            "beforeShellExecution": [{"command": ctl}, {"command": "echo never", "matcher": "^git "}],
        }})
        .to_string(),
    );
    let file = env.write(
        "events.jsonl",
        &format!(
            "{}\n",
            json!({"event": "toolGate", "tool": "run_shell", "input": {"command": "ls"}})
        ),
    );
    let out = env
        .cmd()
        .args(["--enable", "--json", "replay", "--explain"])
        .arg(&file)
        .run()
        .success();
    assert!(ran(&env, "ran"));
    let first: Value = serde_json::from_str(out.stdout().lines().next().unwrap()).unwrap();
    let e = &first["explain"];
    assert_eq!(e["event"], "toolGate");
    assert_eq!(hook(e, &ctl)["status"], "ran");
    assert_eq!(hook(e, "echo never")["reason"], "matcher_no_match");

    let out = env
        .cmd()
        .args(["--enable", "replay", "--explain"])
        .arg(&file)
        .run()
        .success();
    assert!(out.stdout().contains("hooks for toolGate (run_shell):"));
    assert!(out.stdout().contains("did not match \"ls\""));
}

#[test]
fn identical_claude_handler_runs_once() {
    let env = Env::new();
    let marker = env.root().join("claude-ran");
    let handler = format!("echo x >> {}", marker.display());
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": handler},
    ]}]}})
    .to_string();
    env.write("ws/.claude/settings.json", &settings);
    env.write("ws/.claude/settings.local.json", &settings);
    env.cmd().args(["trust"]).run().success();
    let v = explain_json(&env, "ls");
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap(),
        "x\n",
        "the handler really ran, once"
    );
    let statuses: Vec<(&Value, &Value)> = v["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (&h["status"], &h["reason"]))
        .collect();
    assert_eq!(
        statuses,
        vec![
            (&json!("ran"), &Value::Null),
            (&json!("skipped"), &json!("duplicate"))
        ],
        "{v:#}"
    );
}

#[test]
fn refused_config_is_a_problem_naming_the_fix() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let marker = env.root().join("claude-ran");
    env.write(
        "home/.claude/settings.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": format!("touch {}", marker.display())},
        ]}]}})
        .to_string(),
    );
    let cursor = env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": "echo refused"}]}})
            .to_string(),
    );
    std::fs::set_permissions(&cursor, std::fs::Permissions::from_mode(0o666)).unwrap();
    let v = explain_json(&env, "ls");
    assert!(marker.exists(), "the control Claude hook ran");
    let problem = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["source"] == cursor.display().to_string())
        .unwrap_or_else(|| panic!("{v:#}"));
    assert!(
        problem["message"].as_str().unwrap().contains("chmod"),
        "{problem:#}"
    );
    let out = explain_cmd(&env, "ls", &["--enable"]).success();
    assert!(
        out.stdout().contains("config problems:"),
        "{}",
        out.stdout()
    );
}
