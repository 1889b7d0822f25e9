//! `copse-hooks lint`: problems with positions, hints, levels and exit codes.

use serde_json::json;

use crate::harness::Env;

#[test]
fn lint_reports_positions_hints_and_exit_codes() {
    let env = Env::new();
    env.script("home/.cursor/ok.sh", "true");
    env.write("home/.cursor/not-exec.sh", "#!/bin/sh\ntrue\n");
    env.user_cursor(
        r#"{
  "version": 1,
  "hooks": {
    "beforeShellExecution": [
      { "command": "./ok.sh", "timeout": 5000 },
      { "command": "./missing.sh" },
      { "command": "./not-exec.sh", "matcher": "([bad" },
      { "matcher": "Bash", "hooks": [{ "type": "command", "command": "x" }] }
    ],
    "PreToolUse": [{ "command": "./ok.sh" }],
    "afterTabFileEdit": [{ "command": "./ok.sh" }]
  }
}
"#,
    );
    let r = env.cmd().args(["lint"]).run();
    assert_eq!(
        r.out.status.code(),
        Some(1),
        "errors exit 1:\n{}",
        r.stdout()
    );
    insta::assert_snapshot!("lint_human", r.redacted());
    let v = env.cmd().args(["--json", "lint"]).run().json();
    assert!(v["errors"].as_u64().unwrap() >= 4, "{v}");
    let problems = v["problems"].as_array().unwrap();
    let timeout = problems
        .iter()
        .find(|p| p["message"].as_str().unwrap().contains("milliseconds"))
        .unwrap();
    assert_eq!(timeout["level"], "warning");
    assert_eq!(timeout["line"], 5);
    assert!(problems.iter().any(|p| {
        p["message"]
            .as_str()
            .unwrap()
            .contains("Claude Code's nested")
    }));
    assert!(problems.iter().any(|p| {
        p["message"]
            .as_str()
            .unwrap()
            .contains("in .cursor/hooks.json use \"preToolUse\"")
    }));
    assert!(
        problems
            .iter()
            .any(|p| p["message"].as_str().unwrap().contains("does not exist"))
    );
    assert!(
        problems
            .iter()
            .any(|p| p["message"].as_str().unwrap().contains("not executable"))
    );
}

#[test]
fn clean_config_exits_zero_and_deny_warnings_fails_on_warnings() {
    let env = Env::new();
    env.script("home/.cursor/ok.sh", "true");
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": "./ok.sh"}]}})
            .to_string(),
    );
    let r = env.cmd().args(["lint"]).run().success();
    assert!(r.stdout().contains("no problems"), "{}", r.stdout());
    env.user_cursor(
        &json!({"version": 1, "hooks": {"workspaceOpen": [{"command": "./ok.sh"}]}}).to_string(),
    );
    let r = env.cmd().args(["lint"]).run();
    assert_eq!(
        r.out.status.code(),
        Some(0),
        "a warning alone passes:\n{}",
        r.stdout()
    );
    let r = env.cmd().args(["lint", "--deny-warnings"]).run();
    assert_eq!(r.out.status.code(), Some(1));
}

#[test]
fn lint_detects_dialect_by_path_and_shape() {
    let env = Env::new();
    let claude_shape = env.write(
        "elsewhere/my-hooks.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo ok"}]}]}}).to_string(),
    );
    let bad_json = env.write("ws/.claude/settings.json", "{ \"hooks\": ");
    let v = env
        .cmd()
        .args(["--json", "lint"])
        .args([&claude_shape, &bad_json])
        .run()
        .json();
    assert_eq!(v["files"][0]["dialect"], "claude");
    let p = &v["problems"][0];
    assert_eq!(p["level"], "error");
    assert!(
        p["message"].as_str().unwrap().starts_with("not valid JSON"),
        "{p}"
    );
    assert_eq!(p["line"], 1);
}

#[test]
fn lint_suggests_names_and_understands_settings_files() {
    let env = crate::harness::Env::new();
    env.write(
        "ws/.cursor/hooks.json",
        "{\n  \"version\": 1,\n  \"hooks\": {\n    \"beforeShellExecuton\": [{\"command\": \"true\"}],\n    \"preToolUse\": [{\"command\": \"true\", \"matcher\": \"Shel\", \"onFailure\": \"open\"}],\n    \"stop\": [{\"command\": \"printf '\\u001b[2J'\"}]\n  }\n}\n",
    );
    env.write(
        "ws/.claude/settings.json",
        "{\n  \"hooks\": {\n    \"PreToolUses\": [],\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]},\n      {\"matcher\": \"Bahs\", \"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]},\n      {\"matcher\": \"(\", \"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}\n    ]\n  }\n}\n",
    );
    env.write(
        "ws/.copse/hooks.json",
        "{\n  \"version\": 1,\n  \"hooks\": {\n    \"toolGate\": [{\"command\": \"true\", \"failClosed\": false, \"matcher\": \"^run_shel$\"}]\n  }\n}\n",
    );
    let settings = env.write(
        "ws/settings.json",
        "{\n  \"cursorHooksEnabled\": \"yes\",\n  \"trustedWorkspace\": [],\n  \"sandboxWritablePaths\": [\"~/no-such-dir\", \"relative\"],\n  \"retention\": {\"maxRun\": 5}\n}\n",
    );
    let r = env
        .cmd()
        .args([
            "lint",
            ".cursor/hooks.json",
            ".claude/settings.json",
            ".copse/hooks.json",
        ])
        .arg(&settings)
        .run();
    assert_eq!(r.out.status.code(), Some(1));
    insta::assert_snapshot!("lint_did_you_mean", r.redacted());
    // `list` gives the same level as `lint` for the same problem.
    let list = env.cmd().args(["--json", "list"]).run().success().json();
    let unknown = list["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| {
            w["message"]
                .as_str()
                .unwrap()
                .contains("beforeShellExecuton")
        })
        .unwrap();
    assert_eq!(unknown["level"], "error");
    assert!(
        r.stdout()
            .contains("error: Unknown hook event \"beforeShellExecuton\"")
    );
}

/// `lint` checks a settings file against the keys and types of the settings schema
/// (generated from the engine's settings types): every key the engine reads is known,
/// a misspelling of any of them gets a did-you-mean, and a value the engine would not
/// accept is an error saying why.
#[test]
fn lint_checks_settings_files_against_the_settings_schema() {
    let env = Env::new();
    env.write("home/.cache/hooks/.keep", "");
    let settings = env.write(
        "ws/settings.json",
        r#"{
  "$schema": "../schemas/settings.schema.json",
  "cursorHooksEnabled": true,
  "redactSecret": false,
  "autoContinueFollowUp": true,
  "sandboxAllowedSockets": ["/run/user/1000/bus"],
  "sandboxWritablePaths": ["~/.cache/hooks"],
  "failurePolicy": {"claude": "opne"},
  "spine": "yes",
  "retention": {"maxBytes": 1000000, "maxAgeDay": 3}
}
"#,
    );
    let r = env.cmd().arg("lint").arg(&settings).run();
    assert_eq!(r.out.status.code(), Some(1));
    insta::assert_snapshot!("lint_settings_schema", r.redacted());
    let ok = env.write(
        "ws2/settings.json",
        r#"{"$schema": "x", "redactSecrets": false, "failurePolicy": {"gemini": "open"}, "spine": null, "retention": {"maxBytes": 5}}"#,
    );
    let r = env.cmd().arg("lint").arg(&ok).run();
    assert_eq!(r.out.status.code(), Some(0), "{}", r.stdout());
}
