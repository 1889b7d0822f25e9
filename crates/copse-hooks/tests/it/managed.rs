//! The managed policy layer (`/etc/copse-hooks/`, the vendors' managed tiers), on a
//! throwaway root-owned directory: managed hooks run whatever the user turned off,
//! `allowManagedHooksOnly` (ours, Claude's, Codex's) skips every other hook and says
//! why, failure floors cannot be loosened, and a managed directory or file that is not
//! root's is refused without loosening anything.
//!
//! These need root (the layer must be owned by root); as another user each test says
//! so and passes without checking anything.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use copse_hooks::{
    Decision, EventPayload, ManagedPaths, ManagedPolicy, ManagedState, Scope, SessionIdentity,
    ToolCall, Verdict,
};
use serde_json::{Value, json};

use crate::fx::Fx;

/// Whether this process is root; otherwise prints why the test checks nothing.
fn root_or_skip(test: &str) -> bool {
    let root = rustix::process::geteuid().is_root();
    if !root {
        println!("{test}: skipped — the managed layer must be owned by root and this is not root");
    }
    root
}

/// The managed layer of a fixture: `managed/` (root-owned, `0755`).
fn managed_dir(fx: &Fx) -> PathBuf {
    let dir = fx.path("managed");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
}

/// A Copse hooks file with these `toolGate` entries.
fn copse_hooks(path: &Path, entries: Value) {
    write(
        path,
        &json!({"version": 1, "hooks": {"toolGate": entries}}).to_string(),
    );
}

fn policy(dir: &Path) -> ManagedPolicy {
    ManagedPolicy::load(&ManagedPaths::under(dir))
}

fn shell(fx: &Fx, policy: ManagedPolicy, enabled: bool) -> Verdict {
    fx.engine_with(|c| c.managed(policy).enabled(enabled))
        .session(SessionIdentity::new("conv-1"))
        .gate_tool(ToolCall::new(
            "run_shell",
            json!({"command": "ls"}).as_object().unwrap().clone(),
        ))
}

fn touch(fx: &Fx, name: &str) -> String {
    format!("touch {}", fx.at(&format!("out/{name}")))
}

fn ran(fx: &Fx, name: &str) -> bool {
    fx.path(&format!("out/{name}")).exists()
}

#[test]
fn managed_hooks_run_with_hooks_off_and_user_hooks_do_not() {
    if !root_or_skip("managed_hooks_run_with_hooks_off") {
        return;
    }
    let fx = Fx::new();
    let dir = managed_dir(&fx);
    copse_hooks(
        &dir.join("hooks.json"),
        json!([{"command": touch(&fx, "managed")}]),
    );
    copse_hooks(
        &dir.join("hooks.d/10-audit.json"),
        json!([{"command": touch(&fx, "dropin")}]),
    );
    fx.copse_user(json!({"toolGate": [{"command": touch(&fx, "user")}]}));
    let p = policy(&dir);
    assert_eq!(p.state, ManagedState::Valid);
    assert_eq!(p.hook_files.len(), 2);

    let v = shell(&fx, p, false);
    assert_eq!(v.runs.len(), 2, "{v:?}");
    assert!(v.runs.iter().all(|r| r.scope == Scope::Managed));
    assert!(ran(&fx, "managed") && ran(&fx, "dropin"));
    assert!(!ran(&fx, "user"), "hooks are off for the user's own hooks");

    // Control: with hooks on the user's hook runs too, after the managed ones.
    let v = shell(&fx, policy(&dir), true);
    assert_eq!(v.runs.len(), 3);
    assert_eq!(v.runs[2].scope, Scope::User);
    assert!(ran(&fx, "user"));
}

#[test]
fn a_users_disable_all_hooks_does_not_turn_managed_claude_hooks_off() {
    if !root_or_skip("disable_all_hooks_vs_managed") {
        return;
    }
    let fx = Fx::new();
    let dir = managed_dir(&fx);
    write(
        &dir.join("claude-code/managed-settings.json"),
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": touch(&fx, "claude-managed")}]}]}})
            .to_string(),
    );
    fx.claude_settings(
        "home/.claude/settings.json",
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": touch(&fx, "claude-user")}]}]}),
        json!({"disableAllHooks": true}),
    );
    let v = shell(&fx, policy(&dir), true);
    assert_eq!(v.runs.len(), 1, "{v:?}");
    assert!(ran(&fx, "claude-managed"));
    assert!(
        !ran(&fx, "claude-user"),
        "the user's disableAllHooks still covers their own"
    );
}

#[test]
fn allow_managed_hooks_only_skips_user_hooks_and_explain_says_why() {
    if !root_or_skip("allow_managed_hooks_only") {
        return;
    }
    let fx = Fx::new();
    let dir = managed_dir(&fx);
    write(
        &dir.join("settings.json"),
        &json!({"allowManagedHooksOnly": true}).to_string(),
    );
    copse_hooks(
        &dir.join("hooks.json"),
        json!([{"command": touch(&fx, "managed")}]),
    );
    fx.copse_user(json!({"toolGate": [{"command": touch(&fx, "user")}]}));
    let p = policy(&dir);
    assert!(p.allow_managed_hooks_only);

    let v = shell(&fx, p.clone(), true);
    assert!(ran(&fx, "managed"), "control: the managed hook ran");
    assert!(!ran(&fx, "user"));
    assert_eq!(v.runs.len(), 1);

    let engine = fx.engine_with(|c| c.managed(p.clone()));
    let call = EventPayload::ToolGate(ToolCall::new(
        "run_shell",
        json!({"command": "ls"}).as_object().unwrap().clone(),
    ));
    let explained = engine.explain_event(&call, &SessionIdentity::new("c"));
    let user = explained
        .hooks
        .iter()
        .find(|h| h.scope == Scope::User)
        .unwrap();
    assert_eq!(user.reason.as_ref().unwrap().code(), "managed_only");
    assert_eq!(
        user.reason_message().unwrap(),
        format!(
            "allowManagedHooksOnly: set by {}: only managed hooks run",
            dir.join("settings.json").display()
        )
    );
    let listing = engine.list();
    let listed = listing
        .hooks
        .iter()
        .find(|h| h.scope == Scope::User)
        .unwrap();
    assert!(!listed.active);
    assert!(
        listed
            .managed_only
            .as_deref()
            .unwrap()
            .contains("allowManagedHooksOnly")
    );
}

#[test]
fn a_user_cannot_loosen_a_managed_failure_floor() {
    if !root_or_skip("failure_floor") {
        return;
    }
    let fx = Fx::new();
    let dir = managed_dir(&fx);
    // The user's hook crashes and says a failure should let the call through; the
    // user's settings say the same for the whole dialect.
    fx.copse_user(json!({"toolGate": [{"command": "exit 1", "onFailure": "open"}]}));
    let loose = |p: ManagedPolicy| {
        fx.engine_with(|c| {
            c.managed(p)
                .failure_policy("copse", copse_hooks::FailurePolicy::Open)
        })
        .session(SessionIdentity::new("c"))
        .gate_tool(ToolCall::new(
            "run_shell",
            json!({"command": "ls"}).as_object().unwrap().clone(),
        ))
    };
    // Control: no floor, the failure is let through.
    let v = loose(policy(&dir));
    assert_eq!(v.effective_decision(), Decision::Allow);
    assert_eq!(v.runs.len(), 1, "the hook ran");

    write(
        &dir.join("settings.json"),
        &json!({"failurePolicy": {"toolGate": "closed"}}).to_string(),
    );
    let v = loose(policy(&dir));
    assert_eq!(v.runs.len(), 1, "the hook ran");
    assert_eq!(v.effective_decision(), Decision::Deny, "{v:?}");

    // An open floor changes nothing (a floor only tightens).
    write(
        &dir.join("settings.json"),
        &json!({"failurePolicy": {"*": "open"}}).to_string(),
    );
    assert_eq!(loose(policy(&dir)).effective_decision(), Decision::Allow);
}

#[test]
fn a_group_writable_managed_dir_is_refused_and_loosens_nothing() {
    if !root_or_skip("group_writable_dir") {
        return;
    }
    let fx = Fx::new();
    let dir = managed_dir(&fx);
    write(
        &dir.join("settings.json"),
        &json!({"failurePolicy": {}}).to_string(),
    );
    copse_hooks(
        &dir.join("hooks.json"),
        json!([{"command": touch(&fx, "managed")}]),
    );
    fx.copse_user(json!({"toolGate": [{"command": "exit 1", "onFailure": "open"}]}));
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o775)).unwrap();

    let p = policy(&dir);
    assert_eq!(p.state, ManagedState::Broken);
    assert!(
        p.warnings[0].starts_with("managed policy broken: the directory")
            && p.warnings[0].contains("writable by group or others (mode 775)"),
        "{:?}",
        p.warnings
    );
    let v = shell(&fx, p.clone(), true);
    assert!(
        !ran(&fx, "managed"),
        "a hook from a refused directory never runs"
    );
    assert_eq!(v.runs.len(), 1, "control: the user's hook ran");
    assert_eq!(
        v.effective_decision(),
        Decision::Deny,
        "broken: every failure fails closed"
    );
    let listing = fx.engine_with(|c| c.managed(p)).list();
    assert!(
        listing
            .warnings
            .iter()
            .any(|w| w.scope == Scope::Managed && w.message.contains("managed policy broken"))
    );
}

#[test]
fn a_managed_hooks_file_not_owned_by_root_is_refused() {
    if !root_or_skip("not_root_owned_file") {
        return;
    }
    let fx = Fx::new();
    let dir = managed_dir(&fx);
    let foreign = dir.join("hooks.json");
    copse_hooks(&foreign, json!([{"command": touch(&fx, "foreign")}]));
    std::os::unix::fs::chown(&foreign, Some(4242), None).unwrap();
    copse_hooks(
        &dir.join("hooks.d/root.json"),
        json!([{"command": touch(&fx, "root")}]),
    );
    let p = policy(&dir);
    let v = shell(&fx, p.clone(), true);
    assert!(ran(&fx, "root"), "control: the root-owned file's hook ran");
    assert!(!ran(&fx, "foreign"));
    assert_eq!(v.runs.iter().filter(|r| !r.blocked).count(), 1);
    // The refused managed file blocks the gate with its fix: the administrator's
    // policy never silently becomes an allow.
    assert_eq!(
        v.decision,
        Some(copse_hooks::Decision::Deny),
        "{:?}",
        v.runs
    );
    assert!(v.runs.iter().any(|r| r.blocked && r.source == foreign));
    let listing = fx.engine_with(|c| c.managed(p)).list();
    assert!(
        listing.warnings.iter().any(|w| w.source == foreign
            && w.message
                .contains("is owned by uid 4242, and a managed file must be owned by root")),
        "{:?}",
        listing.warnings
    );

    // A settings file not owned by root breaks the layer: floors close.
    let settings = dir.join("settings.json");
    write(
        &settings,
        &json!({"allowManagedHooksOnly": false}).to_string(),
    );
    std::os::unix::fs::chown(&settings, Some(4242), None).unwrap();
    let p = policy(&dir);
    assert_eq!(p.state, ManagedState::Broken);
    assert!(!p.allow_managed_hooks_only, "no user gate is removed");
    assert!(p.require_sandbox);
    assert_eq!(
        p.floor(copse_hooks::Dialect::Cursor, None),
        Some(copse_hooks::FailurePolicy::Closed)
    );
}

#[test]
fn copse_managed_dir_is_ignored_unless_root_owned_all_the_way_up() {
    if !root_or_skip("managed_dir_redirect") {
        return;
    }
    if Path::new(copse_hooks::ManagedPaths::system().dir.as_path()).exists() {
        println!("skipped: this machine has /etc/copse-hooks, which a redirect never hides");
        return;
    }
    let fx = Fx::new();
    let dir = managed_dir(&fx);
    write(
        &dir.join("settings.json"),
        &json!({"allowManagedHooksOnly": true}).to_string(),
    );
    let env = |d: &Path| vec![("COPSE_MANAGED_DIR".into(), d.as_os_str().to_owned())];

    // Control: a root-owned directory is honoured.
    let p = ManagedPolicy::from_env(&env(&dir));
    assert!(p.redirected, "{:?}", p.warnings);
    assert!(p.allow_managed_hooks_only);

    // The attack: a directory an unprivileged user made, to switch the user's own
    // gates off with allowManagedHooksOnly.
    std::os::unix::fs::chown(&dir, Some(4242), None).unwrap();
    let p = ManagedPolicy::from_env(&env(&dir));
    assert!(!p.redirected);
    assert!(!p.allow_managed_hooks_only);
    assert!(
        p.warnings[0].contains("is ignored") && p.warnings[0].contains("owned by uid 4242"),
        "{:?}",
        p.warnings
    );

    // Root-owned, but beneath a directory the user owns (who could swap it).
    std::os::unix::fs::chown(&dir, Some(0), None).unwrap();
    let parent = fx.path("userland");
    std::fs::create_dir_all(&parent).unwrap();
    std::os::unix::fs::chown(&parent, Some(4242), None).unwrap();
    let inner = parent.join("managed");
    std::fs::create_dir_all(&inner).unwrap();
    write(
        &inner.join("settings.json"),
        &json!({"allowManagedHooksOnly": true}).to_string(),
    );
    let p = ManagedPolicy::from_env(&env(&inner));
    assert!(!p.redirected);
    assert!(!p.allow_managed_hooks_only);
}

#[test]
fn claude_allow_managed_hooks_only_skips_user_claude_hooks() {
    if !root_or_skip("claude_allow_managed_hooks_only") {
        return;
    }
    let fx = Fx::new();
    let dir = managed_dir(&fx);
    write(
        &dir.join("claude-code/managed-settings.json"),
        &json!({"allowManagedHooksOnly": true, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": touch(&fx, "claude-managed")}]}]}})
            .to_string(),
    );
    fx.claude_user(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": touch(&fx, "claude-user")}]}]}));
    fx.copse_user(json!({"toolGate": [{"command": touch(&fx, "copse-user")}]}));
    let p = policy(&dir);
    assert!(p.claude.allow_managed_hooks_only);

    // `gate`: the vendor's rule covers its own dialect's hooks.
    shell(&fx, p.clone(), true);
    assert!(
        ran(&fx, "claude-managed"),
        "control: Claude's managed hook ran"
    );
    assert!(!ran(&fx, "claude-user"));
    assert!(
        ran(&fx, "copse-user"),
        "another dialect's hooks are not Claude's to refuse"
    );

    // Serving Claude as its shim: Claude would not have run a user-level hook, so the
    // shim runs none either.
    std::fs::remove_file(fx.path("out/copse-user")).unwrap();
    let v = fx
        .engine_with(|c| c.managed(p.clone()).serving(copse_hooks::Dialect::Claude))
        .session(SessionIdentity::new("c"))
        .gate_tool(ToolCall::new(
            "run_shell",
            json!({"command": "ls"}).as_object().unwrap().clone(),
        ));
    assert!(!ran(&fx, "copse-user"));
    assert!(!ran(&fx, "claude-user"));
    assert_eq!(v.runs.len(), 1, "{v:?}");
}

#[test]
fn codex_allow_managed_hooks_only_skips_user_codex_hooks() {
    if !root_or_skip("codex_allow_managed_hooks_only") {
        return;
    }
    let fx = Fx::new();
    let dir = managed_dir(&fx);
    write(
        &dir.join("codex/requirements.toml"),
        &format!(
            "allow_managed_hooks_only = true\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"{}\"\n",
            touch(&fx, "codex-managed")
        ),
    );
    fx.codex_user(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": touch(&fx, "codex-user")}]}]}));
    let p = policy(&dir);
    assert!(p.codex.allow_managed_hooks_only, "{:?}", p.codex);
    assert!(p.codex.has_hooks);
    shell(&fx, p.clone(), true);
    assert!(
        ran(&fx, "codex-managed"),
        "control: the requirements hook ran"
    );
    assert!(!ran(&fx, "codex-user"));

    let engine = fx.engine_with(|c| c.managed(p));
    let call = EventPayload::ToolGate(ToolCall::new(
        "run_shell",
        json!({"command": "ls"}).as_object().unwrap().clone(),
    ));
    let explained = engine.explain_event(&call, &SessionIdentity::new("c"));
    let user = explained
        .hooks
        .iter()
        .find(|h| h.scope == Scope::User)
        .unwrap();
    assert_eq!(
        user.reason_message().unwrap(),
        format!(
            "allow_managed_hooks_only: set by {}: only managed hooks run",
            dir.join("codex/requirements.toml").display()
        )
    );
}

#[test]
fn a_plugin_claudes_managed_settings_force_on_runs_under_allow_managed_hooks_only() {
    if !root_or_skip("claude_managed_plugin") {
        return;
    }
    let fx = Fx::new();
    let dir = managed_dir(&fx);
    let plugin = |name: &str| {
        let install = fx.path(&format!("home/.claude/plugins/cache/official/{name}/1.0.0"));
        fx.write_json(
            &format!("home/.claude/plugins/cache/official/{name}/1.0.0/hooks/hooks.json"),
            &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": touch(&fx, name)}
            ]}]}}),
        );
        (format!("{name}@official"), install)
    };
    let (forced, forced_at) = plugin("forced");
    let (chosen, chosen_at) = plugin("chosen");
    fx.write_json(
        "home/.claude/plugins/installed_plugins.json",
        &json!({"version": 2, "plugins": {
            forced.clone(): [{"scope": "user", "installPath": forced_at.display().to_string(), "version": "1.0.0"}],
            chosen.clone(): [{"scope": "user", "installPath": chosen_at.display().to_string(), "version": "1.0.0"}]
        }}),
    );
    write(
        &dir.join("claude-code/managed-settings.json"),
        &json!({"allowManagedHooksOnly": true, "enabledPlugins": {forced.clone(): true}})
            .to_string(),
    );
    // The user enables the other one, and tries to turn the forced one off.
    fx.claude_settings(
        "home/.claude/settings.json",
        json!({}),
        json!({"enabledPlugins": {chosen.clone(): true, forced.clone(): false}}),
    );
    let v = shell(&fx, policy(&dir), true);
    assert!(ran(&fx, "forced"), "the managed settings force it on");
    assert!(!ran(&fx, "chosen"), "the user's plugin is not managed");
    assert_eq!(v.runs.len(), 1);
    assert_eq!(
        v.runs[0].scope,
        Scope::User,
        "its hooks keep the plugin's own scope"
    );
}
