//! Gemini CLI and Codex configs through the CLI: `gate`, `trust` pins, `list`,
//! `lint` with positions and hints, the `test` dry run and `log --dialect`.

use serde_json::{Value, json};

use crate::harness::Env;

fn gemini_user(env: &Env, hooks: Value) {
    env.write(
        "home/.gemini/settings.json",
        &serde_json::to_string_pretty(&json!({ "hooks": hooks })).unwrap(),
    );
}

#[test]
fn gemini_and_codex_hooks_gate_list_and_log() {
    let env = Env::new();
    let deny = env.script(
        "home/.gemini/hooks/deny.sh",
        r#"cat >/dev/null; echo '{"decision":"deny","reason":"gemini says no"}'"#,
    );
    gemini_user(
        &env,
        json!({"BeforeTool": [{"matcher": "run_shell_command", "hooks": [
            {"name": "guard", "type": "command", "command": deny.display().to_string(), "timeout": 5000}
        ]}]}),
    );
    let log = env.script("home/.codex/log.sh", "cat >/dev/null; exit 0");
    env.write(
        "home/.codex/config.toml",
        &format!(
            "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"{}\"\ntimeout = 10\n",
            log.display()
        ),
    );
    let v = env
        .cmd()
        .gate("run_shell", &json!({"command": "rm -rf /"}).to_string())
        .json();
    assert_eq!(v["decision"], "deny", "{v}");
    let runs = v["runs"].as_array().unwrap();
    let dialects: Vec<&str> = runs
        .iter()
        .map(|r| r["dialect"].as_str().unwrap())
        .collect();
    assert_eq!(dialects, ["gemini", "codex"]);

    let listing = env.cmd().args(["--json", "list"]).run().success().json();
    let hooks = listing["hooks"].as_array().unwrap();
    let find = |d: &str| hooks.iter().find(|h| h["dialect"] == d).unwrap().clone();
    assert_eq!(find("gemini")["event"], "BeforeTool");
    assert_eq!(find("gemini")["timeout_ms"], 5000);
    assert_eq!(find("codex")["timeout_ms"], 10_000);
    assert_eq!(find("codex")["matcher"], "Bash");

    for (dialect, event) in [("gemini", "BeforeTool"), ("codex", "PreToolUse")] {
        let v = env
            .cmd()
            .args(["--json", "log", "--dialect", dialect])
            .run()
            .success()
            .json();
        let runs = v["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1, "{dialect}: {v}");
        assert_eq!(runs[0]["dialect"], dialect);
        assert_eq!(runs[0]["event"], event);
    }
    let r = env.cmd().args(["log", "--dialect", "gemnii"]).run();
    assert_eq!(r.out.status.code(), Some(2));
    assert!(
        r.stderr().contains("invalid value 'gemnii' for '--dialect"),
        "{}",
        r.stderr()
    );
}

#[test]
fn trust_pins_gemini_and_codex_project_files() {
    let env = Env::new();
    let marker = env.root().join("ran");
    env.write(
        "ws/.gemini/settings.json",
        &json!({"hooks": {"BeforeTool": [{"hooks": [{"name": "m", "type": "command", "command": format!("touch {}", marker.display())}]}]}}).to_string(),
    );
    env.write(
        "ws/.codex/config.toml",
        "[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"true\"\n",
    );
    let gate = || {
        crate::harness::hooks_ran(
            &env.cmd()
                .gate("run_shell", &json!({"command": "ls"}).to_string())
                .json(),
        )
    };
    assert_eq!(gate(), 0, "untrusted");
    env.cmd().args(["trust"]).run().success();
    assert_eq!(gate(), 2);
    assert!(marker.exists());
    // A change to the pinned TOML file stops its hooks until trusted again.
    env.write(
        "ws/.codex/config.toml",
        "[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"exit 2\"\n",
    );
    assert_eq!(gate(), 1);
}

#[test]
fn lint_gemini_settings_with_positions_and_hints() {
    let env = Env::new();
    env.write(
        "ws/.gemini/settings.json",
        r#"{
  "general": { "maxAttempts": 1 },
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "Bash|write_file",
        "hooks": [
          { "name": "quick", "type": "command", "command": "true", "timeout": 30 }
        ]
      }
    ],
    "PreToolUse": [{ "hooks": [{ "type": "command", "command": "true" }] }],
    "SessionStart": [{ "matcher": "startup|resume", "hooks": [{ "name": "s", "type": "command", "command": "true" }] }],
    "BeforeModel": [{ "hooks": [{ "name": "m", "type": "command", "command": "true" }] }]
  }
}
"#,
    );
    let r = env.cmd().args(["lint", ".gemini/settings.json"]).run();
    assert_eq!(r.out.status.code(), Some(1), "{}", r.stdout());
    insta::assert_snapshot!("lint_gemini_human", r.redacted());
    let v = env
        .cmd()
        .args(["--json", "lint", ".gemini/settings.json"])
        .run()
        .json();
    assert_eq!(v["files"][0]["dialect"], "gemini");
    let problems = v["problems"].as_array().unwrap();
    let timeout = problems
        .iter()
        .find(|p| p["message"].as_str().unwrap().contains("milliseconds"))
        .unwrap();
    assert_eq!(timeout["level"], "warning");
    assert_eq!(timeout["line"], 8);
}

#[test]
fn lint_codex_toml_with_positions() {
    let env = Env::new();
    env.write(
        "ws/.codex/config.toml",
        r#"model = "gpt-5"

[[hooks.PreToolUse]]
matcher = "Bash"

[[hooks.PreToolUse.hooks]]
type = "command"
command = "./missing.sh"
timeout = 5000

[[hooks.AfterTool]]
[[hooks.AfterTool.hooks]]
type = "command"
command = "true"
"#,
    );
    let r = env.cmd().args(["lint", ".codex/config.toml"]).run();
    assert_eq!(r.out.status.code(), Some(1), "{}", r.stdout());
    insta::assert_snapshot!("lint_codex_human", r.redacted());
}

#[test]
fn dry_run_a_gemini_and_a_codex_hook() {
    let env = Env::new();
    let cfg = env.write(
        "home/.gemini/settings.json",
        &json!({"hooks": {"BeforeTool": [{"hooks": [{"name": "g", "type": "command", "command": "cat >/dev/null; echo blocked >&2; exit 2"}]}]}}).to_string(),
    );
    let v = env
        .cmd()
        .args(["--json", "test"])
        .args([&cfg])
        .args(["BeforeTool"])
        .run()
        .success()
        .json();
    assert_eq!(v["dialect"], "gemini");
    assert_eq!(v["summary"], "deny — blocked");
    let stdin: Value = serde_json::from_str(v["stdin"].as_str().unwrap()).unwrap();
    assert_eq!(stdin["tool_name"], "run_shell_command");
    assert_eq!(stdin["hook_event_name"], "BeforeTool");
    assert!(stdin["timestamp"].as_str().unwrap().ends_with('Z'));

    let cfg = env.write(
        "home/.codex/hooks.json",
        &json!({"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "cat >/dev/null"}]}]}}).to_string(),
    );
    let v = env
        .cmd()
        .args(["--json", "test"])
        .args([&cfg])
        .args(["PostToolUse"])
        .run()
        .success()
        .json();
    assert_eq!(v["dialect"], "codex");
    let stdin: Value = serde_json::from_str(v["stdin"].as_str().unwrap()).unwrap();
    assert_eq!(
        stdin["tool_name"], "Bash",
        "Codex has no read tool: the dry run uses a shell call"
    );
}
