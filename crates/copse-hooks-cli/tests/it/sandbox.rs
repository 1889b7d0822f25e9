//! The sandbox as the CLI applies it: confinement per scope, the Copse escape, the
//! unenforced path (through the test seam) with and without `requireSandbox`, and
//! forged denials.

use serde_json::{Value, json};

use crate::harness::Env;

/// Settings with no extra writable paths: hooks get only what the sandbox grants.
fn strict(env: &Env, extra: Value) {
    let mut s = json!({"cursorHooksEnabled": true, "trustedWorkspaces": [env.workspace()]});
    for (k, v) in extra.as_object().unwrap() {
        s[k] = v.clone();
    }
    env.write("copse/settings.json", &s.to_string());
}

fn project_hook(env: &Env, body: &str) {
    env.script("ws/.cursor/h.sh", body);
    env.project_cursor(
        &json!({"hooks": {"beforeShellExecution": [{"command": ".cursor/h.sh"}]}}).to_string(),
    );
}

fn gate(env: &Env) -> Value {
    env.cmd()
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
fn project_hook_writes_inside_the_workspace_only() {
    let env = Env::new();
    strict(&env, json!({}));
    let inside = env.workspace().join("inside.txt");
    let home_file = env.home().join("escaped.txt");
    project_hook(
        &env,
        &format!(
            "cat >/dev/null; echo ok > {}; echo tmp > \"$TMPDIR/t\" || exit 3; echo x > {} 2>/dev/null || exit 4",
            inside.display(),
            home_file.display()
        ),
    );
    let v = gate(&env);
    let run = &v["runs"][0];
    assert!(
        inside.exists(),
        "a write inside the workspace must succeed: {v}"
    );
    assert!(!home_file.exists(), "a write to $HOME must be blocked");
    assert_eq!(
        run["exit_code"], 4,
        "the TMPDIR write worked, the $HOME write failed: {v}"
    );
    assert_eq!(run["sandbox"], "enforced");
    assert_eq!(v["decision"], "deny", "the failed hook fails closed");
}

#[test]
fn writes_to_tmp_outside_the_private_tmpdir_and_by_grandchildren_are_blocked() {
    let env = Env::new();
    strict(&env, json!({}));
    let outside = std::env::temp_dir().join(format!("copse-hooks-escape-{}", std::process::id()));
    let _ = std::fs::remove_file(&outside);
    project_hook(
        &env,
        &format!(
            "cat >/dev/null; sh -c 'sh -c \"echo x > {}\"' 2>/dev/null; echo '{{\"permission\":\"allow\"}}'",
            outside.display()
        ),
    );
    let v = gate(&env);
    assert!(!outside.exists(), "a grandchild escaped the sandbox: {v}");
    assert_eq!(v["decision"], "allow");
}

#[test]
fn user_hook_may_write_its_own_config_dir() {
    let env = Env::new();
    strict(&env, json!({}));
    let log = env.home().join(".cursor/hook.log");
    env.script(
        "home/.cursor/h.sh",
        "cat >/dev/null; echo logged >> hook.log",
    );
    env.user_cursor(
        &json!({"hooks": {"beforeShellExecution": [{"command": "./h.sh"}]}}).to_string(),
    );
    let v = gate(&env);
    assert_eq!(v["runs"][0]["failure"], Value::Null, "{v}");
    assert!(log.exists());
}

#[test]
fn copse_sandbox_false_runs_unconfined_and_is_listed() {
    let env = Env::new();
    strict(&env, json!({}));
    let escaped = env.home().join("escaped.txt");
    env.write(
        "ws/.copse/hooks.json",
        &json!({"hooks": {"toolGate": [{"command": format!("cat >/dev/null; echo x > {}", escaped.display()), "sandbox": false}]}}).to_string(),
    );
    let v = gate(&env);
    assert!(escaped.exists(), "sandbox:false must run unconfined: {v}");
    assert_eq!(v["runs"][0]["sandbox"], "off");
    let list = env.cmd().args(["--json", "list"]).run().success().json();
    let hook = list["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["dialect"] == "copse")
        .unwrap();
    assert_eq!(hook["sandboxed"], false);
    let preview = env
        .cmd()
        .args(["--json", "list", "--untrusted-preview"])
        .run()
        .success()
        .json();
    assert_eq!(preview["unsandboxed"].as_array().unwrap().len(), 1);
    let human = env.cmd().args(["list"]).run().success();
    assert!(human.stdout().contains("UNSANDBOXED"), "{}", human.stdout());
}

#[test]
fn unenforced_kernel_runs_unsandboxed_and_says_so() {
    let env = Env::new();
    strict(&env, json!({}));
    let escaped = env.home().join("escaped.txt");
    project_hook(
        &env,
        &format!("cat >/dev/null; echo x > {}", escaped.display()),
    );
    let r = env
        .cmd()
        .env("COPSE_HOOKS_SANDBOX_FORCE_ABI", "none")
        .args([
            "--json",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .run()
        .success();
    let v = r.json();
    assert!(
        escaped.exists(),
        "without enforcement the hook runs unsandboxed"
    );
    assert_eq!(v["runs"][0]["sandbox"], "unenforced");
    assert_eq!(
        r.stderr().matches("not enforced").count(),
        1,
        "said once: {}",
        r.stderr()
    );
    let log = env.cmd().args(["--json", "log"]).run().success().json();
    assert_eq!(log["runs"][0]["sandbox"], "unenforced");
    let list = env
        .cmd()
        .env("COPSE_HOOKS_SANDBOX_FORCE_ABI", "none")
        .args(["list"])
        .run()
        .success();
    assert!(
        list.stdout().contains("Sandbox NOT enforced"),
        "{}",
        list.stdout()
    );
}

#[test]
fn require_sandbox_fails_the_run_when_unenforced() {
    let env = Env::new();
    strict(&env, json!({"requireSandbox": true}));
    let marker = env.workspace().join("ran");
    project_hook(&env, &format!("cat >/dev/null; touch {}", marker.display()));
    let v = env
        .cmd()
        .env("COPSE_HOOKS_SANDBOX_FORCE_ABI", "none")
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
        !marker.exists(),
        "a required-but-missing sandbox must not run the hook"
    );
    assert_eq!(v["runs"][0]["failure"], "sandbox");
    assert_eq!(v["decision"], "deny");
    assert!(
        v["agent_message"]
            .as_str()
            .unwrap()
            .contains("sandbox is required"),
        "{v}"
    );
}

#[test]
fn a_forged_denial_is_not_a_sandbox_block() {
    let env = Env::new();
    strict(&env, json!({}));
    project_hook(
        &env,
        "cat >/dev/null; echo 'touch: cannot touch /x: Permission denied' >&2; echo 'Operation not permitted' >&2; exit 1",
    );
    let v = gate(&env);
    assert_eq!(v["runs"][0]["failure"], "exit");
    assert_eq!(v["runs"][0]["sandbox_blocked"], false);
    assert_eq!(v["runs"][0]["sandbox"], "enforced");
}
