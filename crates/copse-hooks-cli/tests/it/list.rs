//! `copse-hooks list`: hooks, their status and config warnings.

use serde_json::json;

use crate::harness::Env;

fn messy_env() -> Env {
    let env = Env::new();
    env.user_cursor(
        &json!({"version": 1, "hooks": {
            "beforeShellExecution": [
                {"command": "./guard.sh", "matcher": "rm -rf"},
                {"command": "./bad-matcher.sh", "matcher": "([oops"},
                {"matcher": "x"},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}
            ],
            "afterTabFileEdit": [{"command": "./tab.sh"}],
            "beforeshellexecution": [{"command": "./typo.sh"}],
            "PreToolUse": [{"command": "./claude-name.sh"}],
            "beforeReadFile": {"command": "./not-an-array.sh"},
            "preToolUse": [{"command": "./slow.sh", "timeout": -1, "failClosed": "yes"}]
        }})
        .to_string(),
    );
    env.project_cursor(
        &json!({"version": 1, "hooks": {"beforeMCPExecution": [{"command": ".cursor/mcp.sh", "failClosed": false}]}})
            .to_string(),
    );
    env.write("ws/.cursor/../other/.keep", "");
    env
}

#[test]
fn list_json_shows_hooks_status_and_warnings() {
    let env = messy_env();
    let v = env.cmd().args(["--json", "list"]).run().success().json();
    let hooks = v["hooks"].as_array().unwrap();
    let commands: Vec<&str> = hooks
        .iter()
        .map(|h| h["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        commands,
        [
            "./guard.sh",
            "./bad-matcher.sh",
            "./tab.sh",
            "./slow.sh",
            ".cursor/mcp.sh"
        ]
    );
    let guard = &hooks[0];
    assert_eq!(guard["dialect"], "cursor");
    assert_eq!(guard["scope"], "user");
    assert_eq!(guard["matcher"], "rm -rf");
    assert_eq!(guard["trusted"], true);
    assert_eq!(guard["enabled"], false);
    assert_eq!(guard["active"], false);
    assert_eq!(hooks[2]["supported"], false);
    let project = &hooks[4];
    assert_eq!(project["scope"], "project");
    assert_eq!(project["trusted"], false);
    assert_eq!(project["fail_closed"], false);
    let v = env
        .cmd()
        .args(["--json", "--enable", "--trust", "list"])
        .run()
        .success()
        .json();
    assert_eq!(v["hooks"][0]["active"], true);
    assert_eq!(
        v["hooks"][1]["active"], false,
        "an invalid matcher never runs"
    );
    assert_eq!(v["hooks"][4]["active"], true);
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .all(|w| w["source"].as_str().unwrap().ends_with("hooks.json"))
    );
}

#[test]
fn list_human_snapshot() {
    let env = messy_env();
    let out = env.cmd().args(["list"]).run().success();
    insta::assert_snapshot!("list_human", out.redacted());
    let out = env.cmd().args(["--json", "list"]).run().success();
    insta::assert_snapshot!("list_json", out.redacted());
}

#[test]
fn invalid_json_config_is_a_warning_and_other_configs_still_load() {
    let env = Env::new();
    env.user_cursor("{ \"hooks\": { \"beforeShellExecution\": [ }");
    env.project_cursor(
        &json!({"hooks": {"beforeShellExecution": [{"command": "ok.sh"}]}}).to_string(),
    );
    let v = env.cmd().args(["--json", "list"]).run().success().json();
    assert_eq!(v["hooks"].as_array().unwrap().len(), 1);
    let msg = v["warnings"][0]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("hooks.json is not valid JSON (line 1"),
        "{msg}"
    );
    env.user_cursor(&json!({"version": 1}).to_string());
    let v = env.cmd().args(["--json", "list"]).run().success().json();
    assert_eq!(
        v["warnings"][0]["message"],
        "hooks.json has no \"hooks\" object — file ignored"
    );
}

#[test]
fn failure_policy_and_auto_continue_settings_show_in_list() {
    let env = Env::new();
    env.write(
        "home/.claude/settings.json",
        &json!({"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],
            "SubagentStart": [{"hooks": [{"type": "command", "command": "note.sh"}]}],
        }})
        .to_string(),
    );
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": "cursor.sh"}]}})
            .to_string(),
    );
    env.write(
        env.copse_dir().join("settings.json"),
        &json!({"cursorHooksEnabled": true, "failurePolicy": {"claude": "open"}, "autoContinueFollowUps": true})
            .to_string(),
    );
    let out = env.cmd().args(["list"]).run().success();
    insta::assert_snapshot!("list_failure_policy", out.redacted());
    let v = env.cmd().args(["--json", "list"]).run().success().json();
    assert_eq!(v["failure_policy"], json!({"claude": "open"}));
    assert_eq!(v["auto_continue_follow_ups"], json!(true));
    let closed: Vec<(String, bool)> = v["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["command"].as_str().unwrap().to_string(),
                h["fail_closed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(closed.contains(&("guard.sh".to_string(), false)));
    assert!(closed.contains(&("note.sh".to_string(), false)));
    assert!(closed.contains(&("cursor.sh".to_string(), true)));
}

/// Claude `type: "http"` handlers are listed as supported hooks (`http: <url>`), with
/// warnings only where they cannot run: on SessionStart (command and mcp_tool only in
/// Claude Code), with a URL that is not http(s), or a header that is not a string.
/// The control character in a URL is escaped in both outputs.
#[test]
fn claude_http_hooks_in_list_and_lint() {
    let env = Env::new();
    env.write(
        "home/.claude/settings.json",
        &serde_json::to_string_pretty(&json!({"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{
                "type": "http",
                "url": "http://127.0.0.1:9/policy",
                "headers": {"Authorization": "Bearer $POLICY_TOKEN", "X-Retries": 3},
                "allowedEnvVars": ["POLICY_TOKEN"],
                "timeout": 5
            }]}],
            "SessionStart": [{"hooks": [{"type": "http", "url": "http://127.0.0.1:9/start"}]}],
            "PostToolUse": [{"hooks": [{"type": "http", "url": "file:///etc/\u{1b}[2Jpasswd"}]}]
        }}))
        .unwrap(),
    );
    let out = env.cmd().args(["list"]).run().success();
    insta::assert_snapshot!("list_claude_http", out.redacted());
    let v = env.cmd().args(["--json", "list"]).run().success().json();
    let hooks = v["hooks"].as_array().unwrap();
    let pre = hooks
        .iter()
        .find(|h| h["command"] == "http: http://127.0.0.1:9/policy")
        .unwrap();
    assert_eq!(pre["supported"], true);
    assert_eq!(pre["timeout_ms"], 5000);
    let r = env
        .cmd()
        .arg("lint")
        .arg(env.home().join(".claude/settings.json"))
        .run();
    insta::assert_snapshot!("lint_claude_http", r.redacted());
    assert!(!r.stdout().contains('\u{1b}'), "escaped: {}", r.stdout());
}
