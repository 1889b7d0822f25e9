//! [`EngineConfigBuilder`]: an [`EngineConfig`] set up one named step at a time.
//!
//! It starts from [`EngineConfig::from_process`]'s defaults (this process's `$HOME`,
//! `$COPSE_DIR` and environment; hooks off; nothing trusted; the sandbox on; secrets
//! redacted) so a host only names what differs.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::discovery::ConfigLocation;
use crate::engine::EngineConfig;
use crate::outcome::FailurePolicy;
use crate::settings::TrustedWorkspace;
use crate::spawn::Limits;
use crate::spine::Retention;

/// Builds an [`EngineConfig`]; made by [`EngineConfig::builder`].
///
/// ```
/// use copse_hooks::{Engine, EngineConfig};
///
/// let config = EngineConfig::builder()
///     .workspace_root("/work/project")
///     .home("/home/ada")
///     .enabled(true)
///     .trust("/work/project")
///     .build();
/// assert!(config.hooks_enabled);
/// let engine = Engine::new(config);
/// assert_eq!(engine.workspace_roots().len(), 1);
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct EngineConfigBuilder {
    config: EngineConfig,
}

impl EngineConfig {
    /// A builder starting from [`EngineConfig::from_process`] with no workspace root.
    pub fn builder() -> EngineConfigBuilder {
        EngineConfigBuilder {
            config: EngineConfig::from_process(Vec::new()),
        }
    }
}

impl EngineConfigBuilder {
    /// Adds a workspace root (roots keep the order they are added in).
    pub fn workspace_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.config.workspace_roots.push(root.into());
        self
    }

    /// Adds several workspace roots, in order.
    pub fn workspace_roots<I, P>(mut self, roots: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        self.config
            .workspace_roots
            .extend(roots.into_iter().map(Into::into));
        self
    }

    /// The user's home directory (locates `~/.cursor/hooks.json` and the like).
    pub fn home(mut self, home: impl Into<PathBuf>) -> Self {
        self.config.home = home.into();
        self
    }

    /// The copse data directory (default `$COPSE_DIR`, else `~/.copse`).
    pub fn copse_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config.copse_dir = dir.into();
        self
    }

    /// Whether external hooks run at all (off by default).
    pub fn enabled(mut self, on: bool) -> Self {
        self.config.hooks_enabled = on;
        self
    }

    /// The built-in guard's mode (`enforce` by default).
    pub fn guard(mut self, mode: crate::guard::GuardMode) -> Self {
        self.config.guard = mode;
        self
    }

    /// Trusts a workspace root, unpinned: its configs' current content runs.
    pub fn trust(mut self, root: impl Into<PathBuf>) -> Self {
        self.config
            .trusted
            .push(TrustedWorkspace::Path(root.into()));
        self
    }

    /// Trusts a workspace as the settings file records it (pinned or not).
    pub fn trusted(mut self, workspace: TrustedWorkspace) -> Self {
        self.config.trusted.push(workspace);
        self
    }

    /// The environment hooks inherit, replacing this process's (LLM provider keys are
    /// scrubbed from it either way).
    pub fn environment<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        self.config.environment = vars
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self
    }

    /// Output caps and grace periods of every hook process.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.config.limits = limits;
        self
    }

    /// Whether sessions keep every run record in memory (off by default).
    pub fn keep_runs(mut self, on: bool) -> Self {
        self.config.keep_session_runs = on;
        self
    }

    /// Records every hook run in the audit store at `path`.
    pub fn spine(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.spine_path = Some(path.into());
        self
    }

    /// How long the audit store keeps runs.
    pub fn retention(mut self, retention: Retention) -> Self {
        self.config.retention = retention;
        self
    }

    /// Whether external hooks run in the OS sandbox (on by default).
    pub fn sandbox(mut self, on: bool) -> Self {
        self.config.sandbox = on;
        self
    }

    /// Fail a run when the kernel does not enforce the sandbox, instead of running it
    /// unsandboxed (off by default).
    pub fn require_sandbox(mut self, on: bool) -> Self {
        self.config.require_sandbox = on;
        self
    }

    /// Lets sandboxed hooks write one more path.
    pub fn sandbox_writable(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.sandbox_writable.push(path.into());
        self
    }

    /// Lets project hooks connect to one more Unix socket.
    pub fn sandbox_allowed_socket(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.sandbox_allowed_sockets.push(path.into());
        self
    }

    /// Whether the audit store redacts well-known secret shapes (on by default).
    pub fn redact_secrets(mut self, on: bool) -> Self {
        self.config.redact_secrets = on;
        self
    }

    /// The failure policy of one dialect's hooks (`"claude"`, `"gemini"`, …), where the
    /// vendor leaves it to the host; dialects not named fail closed.
    pub fn failure_policy(mut self, dialect: impl Into<String>, policy: FailurePolicy) -> Self {
        self.config.failure_policy.insert(dialect.into(), policy);
        self
    }

    /// Whether stop follow-ups continue the agent automatically within the
    /// continuation budget (off by default: they wait for a human).
    pub fn auto_continue_follow_ups(mut self, on: bool) -> Self {
        self.config.auto_continue_follow_ups = on;
        self
    }

    /// Gemini CLI's system settings file.
    pub fn gemini_system_settings(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.gemini_system_settings = path.into();
        self
    }

    /// Codex's home (default `$CODEX_HOME`, else `<home>/.codex`).
    pub fn codex_home(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.codex_home = Some(path.into());
        self
    }

    /// Codex's system config layer (default `/etc/codex`).
    pub fn codex_system_dir(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.codex_system_dir = path.into();
        self
    }

    /// The config files to read, replacing the default discovery list.
    pub fn locations(mut self, locations: Vec<ConfigLocation>) -> Self {
        self.config.locations = Some(locations);
        self
    }

    /// The machine's managed policy (default: what
    /// [`EngineConfig::from_process`] read), e.g. one loaded from a throwaway
    /// root-owned directory with [`crate::ManagedPolicy::load`]. The pinned OTLP
    /// export follows it.
    pub fn managed(mut self, policy: crate::ManagedPolicy) -> Self {
        self.config.otel_pinned = policy.otel.clone();
        self.config.managed = std::sync::Arc::new(policy);
        self
    }

    /// The dialect of the agent this engine serves as the shim (its vendor's
    /// managed-hooks-only rule then covers every hook).
    pub fn serving(mut self, dialect: crate::Dialect) -> Self {
        self.config.serving = Some(dialect);
        self
    }

    /// The config.
    #[must_use]
    pub fn build(self) -> EngineConfig {
        self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every setter lands in its field; the rest keep `from_process`'s defaults.
    #[test]
    fn each_step_sets_its_field() {
        let defaults = EngineConfig::from_process(Vec::new());
        let c = EngineConfig::builder()
            .workspace_root("/w/a")
            .workspace_roots(["/w/b", "/w/c"])
            .home("/h")
            .copse_dir("/h/.copse-test")
            .enabled(true)
            .trust("/w/a")
            .trusted(TrustedWorkspace::Path("/w/b".into()))
            .environment([("PATH", "/bin")])
            .keep_runs(true)
            .spine("/h/spine.db")
            .sandbox(false)
            .require_sandbox(true)
            .sandbox_writable("/tmp/x")
            .sandbox_allowed_socket("/run/s")
            .redact_secrets(false)
            .failure_policy("claude", FailurePolicy::Open)
            .auto_continue_follow_ups(true)
            .gemini_system_settings("/etc/g.json")
            .codex_home("/h/.codex2")
            .codex_system_dir("/etc/c")
            .locations(Vec::new())
            .build();
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(c.workspace_roots, [p("/w/a"), p("/w/b"), p("/w/c")]);
        assert_eq!(c.home, p("/h"));
        assert_eq!(c.copse_dir, p("/h/.copse-test"));
        assert!(c.hooks_enabled);
        assert_eq!(c.trusted.len(), 2);
        assert_eq!(
            c.environment,
            [(OsString::from("PATH"), OsString::from("/bin"))]
        );
        assert!(c.keep_session_runs);
        assert_eq!(c.spine_path, Some(p("/h/spine.db")));
        assert!(!c.sandbox);
        assert!(c.require_sandbox);
        assert_eq!(c.sandbox_writable, [p("/tmp/x")]);
        assert_eq!(c.sandbox_allowed_sockets, [p("/run/s")]);
        assert!(!c.redact_secrets);
        assert_eq!(c.failure_policy.get("claude"), Some(&FailurePolicy::Open));
        assert!(c.auto_continue_follow_ups);
        assert_eq!(c.gemini_system_settings, p("/etc/g.json"));
        assert_eq!(c.codex_home, Some(p("/h/.codex2")));
        assert_eq!(c.codex_system_dir, p("/etc/c"));
        assert_eq!(c.locations.as_ref().map(Vec::len), Some(0));
        // Untouched: the defaults.
        assert_eq!(c.limits.stdout_cap, defaults.limits.stdout_cap);
        assert_eq!(c.retention, defaults.retention);

        let plain = EngineConfig::builder().build();
        assert!(!plain.hooks_enabled, "hooks are off unless turned on");
        assert!(plain.sandbox && plain.redact_secrets);
        assert!(plain.workspace_roots.is_empty() && plain.trusted.is_empty());
    }
}
