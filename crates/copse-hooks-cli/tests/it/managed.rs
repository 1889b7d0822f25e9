//! The managed policy layer through the binary: `COPSE_MANAGED_DIR` pointing at a
//! throwaway root-owned directory (honoured only because it is root's), managed
//! hooks running with hooks off, `allowManagedHooksOnly` in `gate --explain` and
//! `list`, the shim under Claude's managed-hooks-only rule, the redirect refused for
//! a directory a user made, and `doctor`'s "Managed policy" section.
//!
//! These need root (the layer must be owned by root) and a machine without a system
//! managed policy (a redirect never hides one); otherwise each test says why and
//! checks nothing.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{Env, redact};

/// Whether the tests can run here; otherwise prints why not.
pub(crate) fn runnable(test: &str) -> bool {
    if !rustix::process::geteuid().is_root() {
        println!("{test}: skipped — the managed layer must be owned by root and this is not root");
        return false;
    }
    for system in [
        "/etc/copse-hooks",
        "/etc/claude-code/managed-settings.json",
        "/etc/claude-code/managed-settings.d",
        "/etc/codex/requirements.toml",
    ] {
        if Path::new(system).exists() {
            println!("{test}: skipped — {system} exists, and COPSE_MANAGED_DIR never hides it");
            return false;
        }
    }
    true
}

/// `managed/` under the temp dir, root-owned `0755`.
pub(crate) fn managed(env: &Env) -> PathBuf {
    let dir = env.root().join("managed");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

pub(crate) fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
}

pub(crate) fn marker(env: &Env, name: &str) -> PathBuf {
    env.root().join("out").join(name)
}

pub(crate) fn touch(env: &Env, name: &str) -> String {
    std::fs::create_dir_all(env.root().join("out")).unwrap();
    format!("touch {}", marker(env, name).display())
}

pub(crate) fn copse_hooks(path: &Path, entries: Value) {
    write(
        path,
        &json!({"version": 1, "hooks": {"toolGate": entries}}).to_string(),
    );
}

/// Makes the managed dir: a gate touching marker `managed`, `allowManagedHooksOnly` at `settings`.
pub(crate) fn managed_only(env: &Env, settings: &str) -> PathBuf {
    let dir = managed(env);
    copse_hooks(
        &dir.join("hooks.json"),
        json!([{"command": touch(env, "managed")}]),
    );
    write(
        &dir.join(settings),
        &json!({"allowManagedHooksOnly": true}).to_string(),
    );
    dir
}

fn user_hooks(env: &Env, entries: Value) {
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": entries}}).to_string(),
    );
}

/// The lines of `section` (a heading of `doctor`'s human output) up to the next one.
fn section(text: &str, heading: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        if line == heading {
            inside = true;
        } else if inside && !line.starts_with(' ') {
            break;
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn managed_hooks_run_with_hooks_off_and_allow_managed_hooks_only_is_explained() {
    if !runnable("managed_hooks_run_with_hooks_off") {
        return;
    }
    let env = Env::new();
    let dir = managed(&env);
    copse_hooks(
        &dir.join("hooks.json"),
        json!([{"command": touch(&env, "managed")}]),
    );
    user_hooks(&env, json!([{"command": touch(&env, "user")}]));
    // Hooks off (`copse-hooks disable`): the managed hook runs, the user's does not.
    env.cmd().arg("disable").run().success();
    env.cmd()
        .env("COPSE_MANAGED_DIR", &dir)
        .args([
            "--json",
            "gate",
            "run_shell",
            "--input",
            r#"{"command": "ls"}"#,
        ])
        .run()
        .success();
    assert!(marker(&env, "managed").exists());
    assert!(!marker(&env, "user").exists());

    // allowManagedHooksOnly, hooks on: still only the managed hook, and explain and
    // list say why the user's does not run.
    std::fs::remove_file(marker(&env, "managed")).unwrap();
    write(
        &dir.join("settings.json"),
        &json!({"allowManagedHooksOnly": true}).to_string(),
    );
    let out = env
        .cmd()
        .env("COPSE_MANAGED_DIR", &dir)
        .args(["--enable", "gate", "run_shell", "--explain", "--input"])
        .arg(r#"{"command": "ls"}"#)
        .run()
        .success();
    assert!(
        marker(&env, "managed").exists(),
        "control: the managed hook ran"
    );
    assert!(!marker(&env, "user").exists());
    insta::assert_snapshot!("managed_explain_human", out.redacted());

    let v = env
        .cmd()
        .env("COPSE_MANAGED_DIR", &dir)
        .args([
            "--enable",
            "--json",
            "gate",
            "run_shell",
            "--explain",
            "--input",
        ])
        .arg(r#"{"command": "ls"}"#)
        .run()
        .success()
        .json();
    let user = v["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["scope"] == "user")
        .unwrap();
    assert_eq!(user["reason"], "managed_only");
    let managed_hook = v["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["scope"] == "managed")
        .unwrap();
    assert_eq!(managed_hook["status"], "ran");

    let list = env
        .cmd()
        .env("COPSE_MANAGED_DIR", &dir)
        .args(["--enable", "list"])
        .run()
        .success();
    insta::assert_snapshot!("managed_list_human", list.redacted());
}

#[test]
fn a_redirect_to_a_directory_a_user_made_is_ignored() {
    if !runnable("redirect_attack") {
        return;
    }
    let env = Env::new();
    let dir = managed(&env);
    // The attack: a directory not owned by root that would switch the user's own
    // gates off.
    write(
        &dir.join("settings.json"),
        &json!({"allowManagedHooksOnly": true}).to_string(),
    );
    std::os::unix::fs::chown(&dir, Some(4242), Some(4242)).unwrap();
    user_hooks(&env, json!([{"command": touch(&env, "user")}]));
    let out = env
        .cmd()
        .env("COPSE_MANAGED_DIR", &dir)
        .gate("run_shell", r#"{"command": "ls"}"#)
        .success();
    assert!(marker(&env, "user").exists(), "the user's gate still ran");
    assert_eq!(out.json()["decision"], "allow");
    let doctor = env
        .cmd()
        .env("COPSE_MANAGED_DIR", &dir)
        .args(["--enable", "--json", "doctor"])
        .run()
        .success()
        .json();
    let managed = &doctor["managed"];
    assert_eq!(managed["state"], "absent");
    assert_eq!(managed["redirected"], false);
    let warning = managed["warnings"][0].as_str().unwrap();
    assert!(
        warning.contains("is ignored") && warning.contains("is owned by uid 4242, not root"),
        "{warning}"
    );
}

#[test]
fn the_shim_under_claudes_allow_managed_hooks_only_runs_only_managed_hooks() {
    if !runnable("shim_claude_managed_only") {
        return;
    }
    let env = Env::new();
    let dir = managed_only(&env, "claude-code/managed-settings.json");
    user_hooks(&env, json!([{"command": touch(&env, "user")}]));
    env.write(
        "copse/settings.json",
        &json!({"cursorHooksEnabled": true, "sandboxWritablePaths": [env.root()]}).to_string(),
    );
    let payload =
        json!({"session_id": "5f0c9a2e-0000-4000-8000-000000000002", "cwd": "/nonexistent",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})
        .to_string();
    let run = |agent: &str| {
        env.cmd()
            .env("COPSE_MANAGED_DIR", &dir)
            .env("COPSE_SHIM_DAEMON", "0")
            .args(["shim", "--agent", agent])
            .run_with_stdin(payload.as_bytes())
    };
    let out = run("claude");
    assert_eq!(out.out.status.code(), Some(0), "{}", out.stderr());
    assert!(
        marker(&env, "managed").exists(),
        "control: the managed hook ran"
    );
    assert!(
        !marker(&env, "user").exists(),
        "Claude would not run a user hook, so its shim does not either"
    );
    // Control: Claude's rule is Claude's; Codex's shim runs the user's hook.
    let codex = json!({"session_id": "s", "cwd": "/nonexistent", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "turn_id": "t", "model": "m",
        "transcript_path": null, "permission_mode": "default", "tool_use_id": "u"})
    .to_string();
    let out = env
        .cmd()
        .env("COPSE_MANAGED_DIR", &dir)
        .env("COPSE_SHIM_DAEMON", "0")
        .args(["shim", "--agent", "codex"])
        .run_with_stdin(codex.as_bytes());
    assert_eq!(out.out.status.code(), Some(0), "{}", out.stderr());
    assert!(marker(&env, "user").exists());
}

#[test]
fn doctor_shows_the_managed_layer() {
    if !runnable("doctor_managed") {
        return;
    }
    let env = Env::new();
    let dir = managed(&env);
    write(
        &dir.join("settings.json"),
        &json!({
            "allowManagedHooksOnly": false,
            "failurePolicy": {"toolGate": "closed", "claude": "closed"},
            "requireSandbox": true,
            "otel": {"tracesEndpoint": "http://127.0.0.1:9/v1/traces", "headers": {"authorization": "Bearer s3cret-managed"}}
        })
        .to_string(),
    );
    copse_hooks(&dir.join("hooks.json"), json!([{"command": "true"}]));
    copse_hooks(
        &dir.join("hooks.d/20-audit.json"),
        json!([{"command": "true"}]),
    );
    write(
        &dir.join("claude-code/managed-settings.json"),
        &json!({"allowManagedHooksOnly": true}).to_string(),
    );
    write(
        &dir.join("codex/requirements.toml"),
        "allow_managed_hooks_only = true\n[features]\nhooks = false\n",
    );
    let human = env
        .cmd()
        .env("COPSE_MANAGED_DIR", &dir)
        .args(["--enable", "doctor"])
        .run()
        .success();
    assert!(
        !human.stdout().contains("s3cret"),
        "headers are never shown"
    );
    insta::assert_snapshot!(
        "doctor_managed_human",
        section(&human.redacted(), "Managed policy")
    );
    let out = env
        .cmd()
        .env("COPSE_MANAGED_DIR", &dir)
        .args(["--enable", "--json", "doctor"])
        .run()
        .success();
    assert!(!out.stdout().contains("s3cret"), "headers are never shown");
    let v = out.json();
    assert_eq!(
        v["otel"]["traces_url"], "http://127.0.0.1:9/v1/traces",
        "the pinned endpoint is where spans go"
    );
    assert_eq!(
        v["sandbox"]["required"], true,
        "the managed requireSandbox is in force"
    );
    let managed_configs: Vec<&Value> = v["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["scope"] == "managed")
        .collect();
    let shown = json!({"managed": v["managed"], "managed_configs": managed_configs});
    let text = serde_json::to_string_pretty(&shown).unwrap();
    insta::assert_snapshot!("doctor_managed_json", redact(&text, &env.root()));
}

#[test]
fn a_broken_managed_settings_file_is_said_at_the_gate_and_fails_closed() {
    if !runnable("broken_settings") {
        return;
    }
    let env = Env::new();
    let dir = managed(&env);
    write(
        &dir.join("settings.json"),
        "{\"allowManagedHooksOnly\": tru",
    );
    // The user's hook crashes and asks to be let through.
    user_hooks(
        &env,
        json!([{"command": format!("{}; exit 1", touch(&env, "user")), "onFailure": "open"}]),
    );
    let v = env
        .cmd()
        .env("COPSE_MANAGED_DIR", &dir)
        .gate("run_shell", r#"{"command": "ls"}"#)
        .json();
    assert!(
        marker(&env, "user").exists(),
        "control: the user's hook ran"
    );
    assert_eq!(v["decision"], "deny", "broken: every failure fails closed");
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("managed policy broken:")),
        "{warnings:?}"
    );
    // Control: once the file is valid, the failure is let through again.
    write(&dir.join("settings.json"), "{}");
    let v = env
        .cmd()
        .env("COPSE_MANAGED_DIR", &dir)
        .gate("run_shell", r#"{"command": "ls"}"#)
        .json();
    assert_eq!(v["decision"], "allow");
}

#[test]
fn the_daemon_honours_the_managed_layer_as_the_in_process_shim_does() {
    if !runnable("daemon_managed_only") {
        return;
    }
    let env = Env::new();
    let dir = managed_only(&env, "settings.json");
    user_hooks(&env, json!([{"command": touch(&env, "user")}]));
    env.write(
        "copse/settings.json",
        &json!({"cursorHooksEnabled": true, "sandboxWritablePaths": [env.root()]}).to_string(),
    );
    struct Stop<'a>(&'a Env);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            let _ = self.0.cmd().args(["daemon", "stop"]).run();
        }
    }
    let _stop = Stop(&env);
    let payload =
        json!({"session_id": "5f0c9a2e-0000-4000-8000-000000000003", "cwd": "/nonexistent",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}})
        .to_string();
    // No COPSE_SHIM_DAEMON=0: the shim starts the daemon and forwards the call.
    let out = env
        .cmd()
        .env("COPSE_MANAGED_DIR", &dir)
        .args(["shim", "--agent", "claude"])
        .run_with_stdin(payload.as_bytes());
    assert_eq!(out.out.status.code(), Some(0), "{}", out.stderr());
    // The daemon records which path served the call after it has answered.
    let served = env.copse_dir().join("shim/served/claude.json");
    let by_daemon = (0..500).any(|_| {
        let text = std::fs::read_to_string(&served).unwrap_or_default();
        let done = serde_json::from_str::<Value>(&text).is_ok_and(|v| v["path"] == "daemon");
        if !done {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        done
    });
    assert!(by_daemon, "the call was not served by the daemon");
    assert!(
        marker(&env, "managed").exists(),
        "control: the managed hook ran in the daemon"
    );
    assert!(
        !marker(&env, "user").exists(),
        "allowManagedHooksOnly holds in the daemon too"
    );
}
