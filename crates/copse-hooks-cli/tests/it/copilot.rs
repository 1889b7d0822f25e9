//! GitHub Copilot CLI through the binary: `install` / `uninstall --agent copilot`
//! (user and project, idempotent, `--adopt` of Copilot's own hook files and their
//! byte-identical return), `shim --agent copilot` on payloads shaped as Copilot CLI
//! 1.0.102 sends them (deny, allow, fail-closed on an unmappable field, an event of
//! another agent's protocol), and `lint` / `list` of a Copilot hook file.

use std::process::Output;

use serde_json::{Value, json};

use crate::harness::{Env, redact};
use crate::shim::{DENY_RM, copse_hooks, enabled, stdout_json};

const SID: &str = "5f0c9a2e-0000-4000-8000-00000000c0p1";

/// A Copilot payload for `event` (camelCase, no event name: the entry's variable
/// names it).
fn payload(extra: Value) -> String {
    let mut p =
        json!({"sessionId": SID, "timestamp": 1_796_309_611_563_u64, "cwd": "/nonexistent"});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p.to_string()
}

fn bash(command: &str) -> String {
    payload(json!({"toolName": "bash", "toolArgs": {"command": command, "description": "run it"}}))
}

fn shim(env: &Env, event: Option<&str>, payload: &str) -> Output {
    let mut cmd = env
        .cmd()
        .args(["shim", "--agent", "copilot"])
        .env("COPSE_SHIM_DAEMON", "0");
    if let Some(e) = event {
        cmd = cmd.env("COPSE_HOOKS_EVENT", e);
    }
    cmd.run_with_stdin(payload.as_bytes()).out
}

#[test]
fn the_shim_denies_in_copilots_format_and_lets_the_rest_through() {
    let env = Env::new();
    enabled(&env, json!({}));
    let marker = env.root().join("ran");
    copse_hooks(
        &env,
        json!({"toolGate": [{"command": format!("touch {}; {DENY_RM}", marker.display()), "matcher": "run_shell"}]}),
    );
    let out = shim(&env, Some("preToolUse"), &bash("rm -rf /"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout_json(&out),
        json!({"permissionDecision": "deny", "permissionDecisionReason": "no rm -rf"})
    );
    // The control: the hook really ran, and an allowed call gets no answer (Copilot's
    // own permission flow goes on; a copse allow is never Copilot's "allow").
    assert!(marker.exists());
    std::fs::remove_file(&marker).unwrap();
    let out = shim(&env, Some("preToolUse"), &bash("ls"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout_json(&out), Value::Null);
    assert!(marker.exists());
    // toolArgs as a JSON string holding the object is read too.
    let as_string = payload(json!({"toolName": "bash", "toolArgs": "{\"command\":\"rm -rf /\"}"}));
    let out = shim(&env, Some("preToolUse"), &as_string);
    assert_eq!(stdout_json(&out)["permissionDecision"], "deny");
}

#[test]
fn unreadable_or_unnamed_payloads_fail_closed_and_foreign_events_are_named() {
    let env = Env::new();
    enabled(&env, json!({}));
    let mut lines = Vec::new();
    let mut record = |what: &str, out: &Output| {
        lines.push(format!(
            "{what}: exit {:?}\n  stdout: {}  stderr: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    };
    let array_args = payload(json!({"toolName": "bash", "toolArgs": ["rm", "-rf", "/"]}));
    record(
        "toolArgs an array",
        &shim(&env, Some("preToolUse"), &array_args),
    );
    let no_command = payload(json!({"toolName": "bash", "toolArgs": {"description": "x"}}));
    record("no command", &shim(&env, Some("preToolUse"), &no_command));
    record("no event named", &shim(&env, None, &bash("ls")));
    let claude = json!({"session_id": SID, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}});
    record(
        "a Claude Code payload",
        &shim(&env, None, &claude.to_string()),
    );
    let prompt = payload(json!({"prompt": "hi"}));
    record("a prompt with corrupt settings", &{
        env.write("copse/settings.json", "{corrupt");
        shim(&env, Some("userPromptSubmitted"), &prompt)
    });
    insta::assert_snapshot!(redact(&lines.join("\n"), &env.root()));
}

#[test]
fn permission_requests_and_prompts_are_answered_as_copilot_reads_them() {
    let env = Env::new();
    enabled(&env, json!({}));
    copse_hooks(
        &env,
        json!({
            "beforeSubmitPrompt": [{"command": "grep -q BLOCKME && printf '%s' '{\"continue\":false,\"userMessage\":\"not that\"}' || true"}],
        }),
    );
    // An adopted hook in Copilot's own format answers the permission request.
    env.write(
        "copse/adopted/copilot/hooks.json",
        &json!({"version": 1, "hooks": {"permissionRequest": [{"bash": "grep -q 'rm -rf' && printf '%s' '{\"behavior\":\"deny\",\"message\":\"no rm -rf\"}' || true", "matcher": "bash"}]}}).to_string(),
    );
    // Copilot 1.0.102 names this event itself (`hookName`) and sends `toolInput`.
    let perm = payload(
        json!({"hookName": "permissionRequest", "toolName": "bash", "toolInput": {"command": "rm -rf /"}, "permissionSuggestions": []}),
    );
    let out = shim(&env, None, &perm);
    assert_eq!(
        stdout_json(&out),
        json!({"behavior": "deny", "message": "no rm -rf"})
    );
    let out = shim(
        &env,
        Some("userPromptSubmitted"),
        &payload(json!({"prompt": "BLOCKME now"})),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "exit 2 would not block a prompt in Copilot"
    );
    assert_eq!(stdout_json(&out)["decision"], "block");
}

fn hooks_dir(env: &Env) -> std::path::PathBuf {
    env.home().join(".copilot/hooks")
}

fn files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read(e.path()).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn install_adopt_and_uninstall_leave_copilots_hooks_byte_identical() {
    let env = Env::new();
    let guard = "{\n  \"version\": 1,\n  \"hooks\": {\"preToolUse\": [{\"type\": \"command\", \"bash\": \"grep -q forbidden && printf '%s' '{\\\"permissionDecision\\\":\\\"deny\\\",\\\"permissionDecisionReason\\\":\\\"adopted says no\\\"}' || true\"}]}\n}\n";
    env.write("home/.copilot/hooks/guard.json", guard);
    let off = "{\"version\": 1, \"disableAllHooks\": true, \"hooks\": {\"preToolUse\": []}}\n";
    env.write("home/.copilot/hooks/off.json", off);
    let pristine = files(&hooks_dir(&env));
    let first = env
        .cmd()
        .args(["install", "--agent", "copilot", "--adopt"])
        .run()
        .success();
    let again = env
        .cmd()
        .args(["install", "--agent", "copilot"])
        .run()
        .success();
    let installed = std::fs::read_to_string(hooks_dir(&env).join("copse-hooks.json")).unwrap();
    let v: Value = serde_json::from_str(&installed).unwrap();
    assert_eq!(v["version"], 1);
    let entry = &v["hooks"]["preToolUse"][0];
    assert!(
        entry["bash"]
            .as_str()
            .unwrap()
            .ends_with(" shim --agent copilot --deadline 55"),
        "{entry}"
    );
    assert_eq!(entry["env"], json!({"COPSE_HOOKS_EVENT": "preToolUse"}));
    assert_eq!(entry["timeoutSec"], 60);
    // guard.json moved into copse-hooks' care; off.json (never runs) stayed.
    let names: Vec<String> = files(&hooks_dir(&env)).into_iter().map(|f| f.0).collect();
    assert_eq!(names, ["copse-hooks.json", "off.json"]);
    let adopted = env.copse_dir().join("adopted/copilot/hooks.json");
    assert!(adopted.exists());

    // The adopted hook runs through the shim, in Copilot's dialect.
    let out = shim(&env, Some("preToolUse"), &bash("echo forbidden"));
    assert_eq!(
        stdout_json(&out)["permissionDecisionReason"],
        "adopted says no"
    );

    let bye = env
        .cmd()
        .args(["uninstall", "--agent", "copilot"])
        .run()
        .success();
    assert_eq!(files(&hooks_dir(&env)), pristine, "byte-identical");
    assert!(!adopted.exists());
    insta::assert_snapshot!(format!(
        "{}\n{}\n{}",
        first.redacted(),
        again.redacted(),
        bye.redacted()
    ));
}

#[test]
fn project_install_writes_github_hooks_and_lint_and_list_read_it() {
    let env = Env::new();
    env.cmd()
        .args(["install", "--agent", "copilot", "--project"])
        .run()
        .success();
    let path = env.workspace().join(".github/hooks/copse-hooks.json");
    assert!(path.exists());
    env.write(
        "ws/.github/hooks/guard.json",
        "{\"version\": 1, \"hooks\": {\"preToolUse\": [{\"bash\": \"./guard.sh\", \"matcher\": \"bash\", \"timeoutSec\": 10, \"bogus\": 1}, {\"bash\": \"echo \\u001b[2Jhidden\"}], \"userPromptSubmit\": []}}\n",
    );
    let lint = env
        .cmd()
        .arg("lint")
        .arg(env.workspace().join(".github/hooks/guard.json"))
        .run();
    let list = env.cmd().args(["list"]).run();
    insta::assert_snapshot!(format!("{}\n---\n{}", lint.redacted(), list.redacted()));
    env.cmd()
        .args(["uninstall", "--agent", "copilot", "--project"])
        .run()
        .success();
    assert!(!path.exists());
}

#[test]
fn init_writes_a_working_first_copilot_hook() {
    let env = Env::new();
    let r = env
        .cmd()
        .args(["init", "--dialect", "copilot"])
        .run()
        .success();
    insta::assert_snapshot!(r.redacted());
    let script = std::fs::read_to_string(env.workspace().join(".github/hooks/guard.sh")).unwrap();
    insta::assert_snapshot!("init_copilot_script", script);
    env.cmd().args(["lint", "--deny-warnings"]).run().success();
    env.cmd().args(["trust"]).run().success();
    let gate = |command: &str| -> Value {
        env.cmd()
            .gate("run_shell", &json!({ "command": command }).to_string())
            .success()
            .json()
    };
    // The guard ran and denied; control: it ran and let a harmless command through.
    let v = gate("rm -rf /");
    assert_eq!(v["decision"], "deny", "{v}");
    assert_eq!(v["runs"].as_array().unwrap().len(), 1, "{v}");
    let v = gate("ls -la");
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["runs"].as_array().unwrap().len(), 1, "{v}");
}
