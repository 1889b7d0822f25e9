//! The one fixture the engine's integration tests build on: a temp dir laid out as a
//! home, a workspace, a Copse data directory and an `out/` directory for what hooks
//! write; the vendor configs written into it in each dialect's real shape; and
//! engines and sessions over it.
//!
//! ```ignore
//! let fx = Fx::new(); // hooks on, nothing trusted, sandbox on, writable: the temp dir
//! fx.claude_user(json!({"PreToolUse": [group(Some("Bash"), &["exit 2"])]}));
//! let v = fx.session().gate_tool(call);
//!
//! let fx = Fx::builder().workspaces(&["ws", "ws2"]).trusted().keep_runs().build();
//! let engine = fx.engine_with(|c| c.failure_policy("claude", FailurePolicy::Open));
//! ```
//!
//! Every path an engine reads is inside the temp dir (the Gemini system settings, the
//! Codex home and system layer, the Copse data directory), so what the machine running
//! the tests has configured never reaches a test.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use copse_hooks::{
    Engine, EngineConfig, EngineConfigBuilder, Fired, Session, SessionIdentity, Verdict,
};
use serde_json::{Map, Value, json};

/// How a fixture's engines are set up; made by [`Fx::builder`], finished by
/// [`FxBuilder::build`].
#[must_use = "a builder makes no fixture until `build` is called"]
pub struct FxBuilder {
    roots: Vec<String>,
    trusted: bool,
    keep_runs: bool,
    sandbox: bool,
    writable: Option<String>,
    env: Vec<(OsString, OsString)>,
    identity: SessionIdentity,
}

impl FxBuilder {
    /// The workspace roots, relative to the temp dir, in order (default `["ws"]`);
    /// each is created. The first is [`Fx::ws`].
    pub fn workspaces(mut self, roots: &[&str]) -> Self {
        self.roots = roots.iter().map(|r| (*r).to_string()).collect();
        self
    }

    /// Every workspace root is trusted (unpinned) by [`Fx::engine`] and
    /// [`Fx::session`].
    pub fn trusted(mut self) -> Self {
        self.trusted = true;
        self
    }

    /// Sessions keep every run ([`Session::runs`]).
    pub fn keep_runs(mut self) -> Self {
        self.keep_runs = true;
        self
    }

    /// Whether hooks run in the OS sandbox (default on).
    pub fn sandbox(mut self, on: bool) -> Self {
        self.sandbox = on;
        self
    }

    /// The one path sandboxed hooks may write besides their own, relative to the temp
    /// dir (default: the whole temp dir, so hooks can leave observations anywhere in
    /// it; the sandbox itself is tested in `sandbox.rs`).
    pub fn writable(mut self, rel: &str) -> Self {
        self.writable = Some(rel.to_string());
        self
    }

    /// More variables in the environment hooks inherit (after this process's own).
    pub fn env(mut self, vars: &[(&str, &str)]) -> Self {
        self.env.extend(
            vars.iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        );
        self
    }

    /// The identity of [`Fx::session`]'s sessions (default `conv-1`, nothing else).
    pub fn identity(mut self, identity: SessionIdentity) -> Self {
        self.identity = identity;
        self
    }

    /// The fixture: a fresh temp dir with `home/`, `copse/`, `out/` and the workspace
    /// roots created.
    pub fn build(self) -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for d in ["home", "copse", "out"]
            .into_iter()
            .chain(self.roots.iter().map(String::as_str))
        {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        Fx {
            _dir: dir,
            root,
            opts: self,
        }
    }
}

/// A temp dir laid out for engine tests; removed on drop.
pub struct Fx {
    _dir: tempfile::TempDir,
    root: PathBuf,
    opts: FxBuilder,
}

impl Fx {
    /// The default fixture: one workspace `ws`, nothing trusted.
    pub fn new() -> Fx {
        Fx::builder().build()
    }

    /// A fixture set up one step at a time.
    pub fn builder() -> FxBuilder {
        FxBuilder {
            roots: vec!["ws".to_string()],
            trusted: false,
            keep_runs: false,
            sandbox: true,
            writable: None,
            env: Vec::new(),
            identity: SessionIdentity::new("conv-1"),
        }
    }

    // -----------------------------------------------------------------------------
    // Paths
    // -----------------------------------------------------------------------------

    /// The temp dir (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A path under the temp dir.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// An absolute path under the temp dir, as a string for commands.
    pub fn at(&self, rel: &str) -> String {
        self.path(rel).display().to_string()
    }

    /// The home directory (`home/`).
    pub fn home(&self) -> PathBuf {
        self.path("home")
    }

    /// The first workspace root (`ws/` unless [`FxBuilder::workspaces`] said otherwise).
    pub fn ws(&self) -> PathBuf {
        self.path(&self.opts.roots[0])
    }

    /// The Copse data directory (`copse/`).
    pub fn copse_dir(&self) -> PathBuf {
        self.path("copse")
    }

    // -----------------------------------------------------------------------------
    // Files
    // -----------------------------------------------------------------------------

    /// `rel` under the first workspace root, relative to the temp dir.
    fn in_ws(&self, rel: &str) -> String {
        format!("{}/{rel}", self.opts.roots[0])
    }

    /// Writes `text` at `rel` (parents created); returns the path.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Writes `doc` pretty-printed at `rel`.
    pub fn write_json(&self, rel: &str, doc: &Value) -> PathBuf {
        self.write(rel, &serde_json::to_string_pretty(doc).unwrap())
    }

    /// An executable `#!/bin/sh` script with this body; returns its path.
    pub fn script(&self, rel: &str, body: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let path = self.write(rel, &format!("#!/bin/sh\n{body}\n"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    /// `~/.cursor/hooks.json`: `{"version": 1, "hooks": …}` on one line.
    pub fn cursor_user(&self, hooks: Value) -> PathBuf {
        self.write(
            "home/.cursor/hooks.json",
            &json!({"version": 1, "hooks": hooks}).to_string(),
        )
    }

    /// A Claude Code settings file at `rel`: `hooks` among other keys, as real ones
    /// have, and `extra`'s keys (an object) over them.
    pub fn claude_settings(&self, rel: &str, hooks: Value, extra: Value) -> PathBuf {
        let doc = json!({"model": "sonnet", "permissions": {"allow": []}, "hooks": hooks});
        self.write_json(rel, &merged(doc, extra))
    }

    /// `~/.claude/settings.json`.
    pub fn claude_user(&self, hooks: Value) -> PathBuf {
        self.claude_settings("home/.claude/settings.json", hooks, json!({}))
    }

    /// `<ws>/.claude/settings.json`.
    pub fn claude_project(&self, hooks: Value) -> PathBuf {
        self.claude_settings(&self.in_ws(".claude/settings.json"), hooks, json!({}))
    }

    /// `<ws>/.claude/settings.local.json`.
    pub fn claude_local(&self, hooks: Value) -> PathBuf {
        self.claude_settings(&self.in_ws(".claude/settings.local.json"), hooks, json!({}))
    }

    /// A Copse `hooks.json` at `rel`.
    pub fn copse_config(&self, rel: &str, hooks: Value) -> PathBuf {
        let doc = json!({"$schema": "https://example.invalid/copse-hooks.schema.json", "version": 1, "hooks": hooks});
        self.write_json(rel, &doc)
    }

    /// `$COPSE_DIR/hooks.json`.
    pub fn copse_user(&self, hooks: Value) -> PathBuf {
        self.copse_config("copse/hooks.json", hooks)
    }

    /// `<ws>/.copse/hooks.json`.
    pub fn copse_project(&self, hooks: Value) -> PathBuf {
        self.copse_config(&self.in_ws(".copse/hooks.json"), hooks)
    }

    /// A Gemini CLI settings file at `rel`: `hooks` among other keys, as real ones
    /// have, and `extra`'s keys (an object) over them.
    pub fn gemini_settings(&self, rel: &str, hooks: Value, extra: Value) -> PathBuf {
        let doc = json!({"general": {"maxAttempts": 1}, "security": {"auth": {"selectedType": "gemini-api-key"}}, "hooks": hooks});
        self.write_json(rel, &merged(doc, extra))
    }

    /// `~/.gemini/settings.json`.
    pub fn gemini_user(&self, hooks: Value) -> PathBuf {
        self.gemini_settings("home/.gemini/settings.json", hooks, json!({}))
    }

    /// `<ws>/.gemini/settings.json`.
    pub fn gemini_project(&self, hooks: Value) -> PathBuf {
        self.gemini_settings(&self.in_ws(".gemini/settings.json"), hooks, json!({}))
    }

    /// The Gemini system settings (`etc/gemini-cli/settings.json`, where the engine
    /// looks for them).
    pub fn gemini_system(&self, hooks: Value) -> PathBuf {
        self.gemini_settings("etc/gemini-cli/settings.json", hooks, json!({}))
    }

    /// A Codex `hooks.json` (Claude's shape) at `rel`; the Codex home is
    /// `codex-home/`, its system layer `etc/codex/`.
    pub fn codex_hooks(&self, rel: &str, hooks: Value) -> PathBuf {
        self.write_json(rel, &json!({ "hooks": hooks }))
    }

    /// `$CODEX_HOME/hooks.json`.
    pub fn codex_user(&self, hooks: Value) -> PathBuf {
        self.codex_hooks("codex-home/hooks.json", hooks)
    }

    /// `<ws>/.codex/hooks.json`.
    pub fn codex_project(&self, hooks: Value) -> PathBuf {
        self.codex_hooks(&self.in_ws(".codex/hooks.json"), hooks)
    }

    // -----------------------------------------------------------------------------
    // Engines and sessions
    // -----------------------------------------------------------------------------

    /// The engine config of this fixture: hooks on, its workspaces (trusted if it
    /// was built so), every vendor location inside the temp dir.
    pub fn config(&self) -> EngineConfigBuilder {
        let o = &self.opts;
        let mut config = EngineConfig::builder()
            .workspace_roots(o.roots.iter().map(|r| self.path(r)))
            .home(self.home())
            .copse_dir(self.copse_dir())
            .enabled(true)
            .keep_runs(o.keep_runs)
            .sandbox(o.sandbox)
            .sandbox_writable(
                o.writable
                    .as_deref()
                    .map_or_else(|| self.root.clone(), |w| self.path(w)),
            )
            .gemini_system_settings(self.path("etc/gemini-cli/settings.json"))
            .codex_home(self.path("codex-home"))
            .codex_system_dir(self.path("etc/codex"));
        if !o.env.is_empty() {
            config = config.environment(std::env::vars_os().chain(o.env.iter().cloned()));
        }
        if o.trusted {
            for r in &o.roots {
                config = config.trust(self.path(r));
            }
        }
        config
    }

    /// An engine over [`Fx::config`].
    pub fn engine(&self) -> Engine {
        self.engine_with(|c| c)
    }

    /// An engine over [`Fx::config`] with the workspace trusted.
    pub fn trusted_engine(&self) -> Engine {
        self.engine_with(|c| c.trust(self.ws()))
    }

    /// An engine over [`Fx::config`] changed by `tweak`.
    pub fn engine_with(
        &self,
        tweak: impl FnOnce(EngineConfigBuilder) -> EngineConfigBuilder,
    ) -> Engine {
        Engine::new(tweak(self.config()).build())
    }

    /// A session of [`Fx::engine`] with the fixture's identity.
    pub fn session(&self) -> Session {
        self.engine().session(self.opts.identity.clone())
    }

    /// A session of [`Fx::trusted_engine`] with the fixture's identity.
    pub fn trusted_session(&self) -> Session {
        self.trusted_engine().session(self.opts.identity.clone())
    }

    /// A session of [`Fx::engine`] with this identity.
    pub fn session_as(&self, identity: SessionIdentity) -> Session {
        self.engine().session(identity)
    }

    /// A session with the fixture's identity of [`Fx::engine_with`].
    pub fn session_with(
        &self,
        tweak: impl FnOnce(EngineConfigBuilder) -> EngineConfigBuilder,
    ) -> Session {
        self.engine_with(tweak).session(self.opts.identity.clone())
    }
}

/// `doc` with `extra`'s keys (an object) set over its own.
fn merged(mut doc: Value, extra: Value) -> Value {
    let Value::Object(extra) = extra else {
        panic!("extra settings are an object: {extra}")
    };
    for (k, v) in extra {
        doc[k] = v;
    }
    doc
}

// ---------------------------------------------------------------------------------
// Small helpers the dialect tests share
// ---------------------------------------------------------------------------------

/// A JSON object as a map (tool inputs and the like).
pub fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

/// A command that prints this JSON on stdout and exits 0.
pub fn answer(v: Value) -> String {
    let text = v.to_string();
    assert!(!text.contains('\''), "keep test JSON free of single quotes");
    format!("printf '%s' '{text}'")
}

/// A JSON string literal (for building exact expected stdin).
pub fn lit(s: impl AsRef<str>) -> String {
    serde_json::to_string(s.as_ref()).unwrap()
}

/// The commands of a verdict's runs, in order.
pub fn commands(verdict: &Verdict) -> Vec<String> {
    verdict.runs.iter().map(|r| r.command.clone()).collect()
}

/// The verdict of a blocking event.
pub fn verdict(fired: Fired) -> Verdict {
    match fired {
        Fired::Verdict(v) => v,
        other => panic!("expected a verdict, got {other:?}"),
    }
}

/// The stdin run `i` of a verdict read, as JSON.
pub fn stdin_of(verdict: &Verdict, i: usize) -> Value {
    serde_json::from_slice(&verdict.runs[i].stdin).unwrap()
}

/// A matcher group of command handlers in Claude's shape (Codex's too).
pub fn group(matcher: Option<&str>, commands: &[&str]) -> Value {
    let hooks: Vec<Value> = commands
        .iter()
        .map(|c| json!({"type": "command", "command": c}))
        .collect();
    match matcher {
        Some(m) => json!({"matcher": m, "hooks": hooks}),
        None => json!({ "hooks": hooks }),
    }
}
