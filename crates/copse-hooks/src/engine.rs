//! The engine and its sessions: the host-facing entry points.
//!
//! An [`Engine`] is built once per host from an [`EngineConfig`] (where the user's
//! home is, which workspace roots exist and which are trusted, whether external hooks
//! are on). A [`Session`](crate::Session) carries the conversation identity and fires canonical
//! events. With hooks off, or inside a hook process (the recursion guard), a gate
//! returns at once without touching the disk.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

mod select;

pub(crate) use select::{Block, BlockWhy, Plan, Skip};

use crate::dialect::{ConfigWarning, Context, Dialect, HookMatcher, HookSpec, Scope};
use crate::discovery::{self, ConfigLocation, LoadedConfig, Registry};
use crate::env::{self, DEPTH_VAR, MAX_HOOK_DEPTH};
use crate::event::CanonicalEvent;
use crate::outcome::FailurePolicy;
use crate::run::SandboxConfig;
use crate::settings::TrustedWorkspace;
use crate::spawn::Limits;
use crate::spine::{Retention, Spine, SpineOptions};

/// How to build an engine.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EngineConfig {
    /// The user's home directory (locates `~/.cursor/hooks.json`).
    pub home: PathBuf,
    /// The copse data directory (`$COPSE_DIR`, default `~/.copse`).
    pub copse_dir: PathBuf,
    /// The workspace roots, in order.
    pub workspace_roots: Vec<PathBuf>,
    /// The workspace roots whose project hooks may run (pinned or not).
    pub trusted: Vec<TrustedWorkspace>,
    /// Whether external hooks run at all (off by default).
    pub hooks_enabled: bool,
    /// The environment hooks inherit (LLM keys are scrubbed from it).
    pub environment: Vec<(OsString, OsString)>,
    /// Output caps and grace periods.
    pub limits: Limits,
    /// Whether sessions keep every run record in memory ([`Session::runs`](crate::Session::runs)); off by
    /// default, since the audit store is where runs live.
    pub keep_session_runs: bool,
    /// Where to record every hook run (the audit store, `$COPSE_DIR/spine.db` in the
    /// CLI); `None` records nothing.
    pub spine_path: Option<PathBuf>,
    /// How long the audit store keeps runs.
    pub retention: Retention,
    /// Whether external hooks run in the OS sandbox (default on; only a Copse hook's
    /// `"sandbox": false` escapes it).
    pub sandbox: bool,
    /// Fail a run (failure kind `sandbox`) when the kernel does not enforce the sandbox,
    /// instead of running it unsandboxed.
    pub require_sandbox: bool,
    /// Further paths sandboxed hooks may write.
    pub sandbox_writable: Vec<PathBuf>,
    /// Unix sockets project hooks may use (setting `sandboxAllowedSockets`).
    pub sandbox_allowed_sockets: Vec<PathBuf>,
    /// Redact well-known secret shapes from what the audit store records (default on).
    pub redact_secrets: bool,
    /// The per-dialect failure policy (`"failurePolicy": {"claude": "open"}` in the
    /// settings): restores a vendor's own fail-open policy for that dialect's hooks
    /// where the vendor leaves it to the host. Absent dialects fail closed.
    pub failure_policy: std::collections::BTreeMap<String, FailurePolicy>,
    /// Whether stop follow-ups (Claude Stop/SubagentStop blocks, Cursor
    /// `followup_message`) continue the agent automatically within the continuation
    /// budget, as the vendors do, instead of waiting for a human (the default).
    pub auto_continue_follow_ups: bool,
    /// Gemini CLI's system settings file (`$GEMINI_CLI_SYSTEM_SETTINGS_PATH`, default
    /// `/etc/gemini-cli/settings.json`).
    pub gemini_system_settings: PathBuf,
    /// Codex's home (`$CODEX_HOME`); `None` means `<home>/.codex`.
    pub codex_home: Option<PathBuf>,
    /// Codex's system config layer (default `/etc/codex`).
    pub codex_system_dir: PathBuf,
    /// The config files to read, replacing the default discovery list (the shim reads
    /// the Copse configs, adopted hooks and chosen agents' configs, never the calling
    /// agent's own). Roots in it should be canonical.
    pub locations: Option<Vec<ConfigLocation>>,
    /// The `"otel"` object of the user's settings (`$COPSE_DIR/settings.json`); the
    /// `OTEL_*` variables in [`EngineConfig::environment`] win over it
    /// ([`crate::otel::ExportConfig::resolve`]).
    pub otel_settings: Option<serde_json::Value>,
    /// The `"otel"` object of the machine's managed settings: wins over the variables
    /// and the user's settings; they cannot change or turn off a pinned endpoint.
    pub otel_pinned: Option<serde_json::Value>,
    /// The agent this engine serves (`claude-code`, `cursor`, `codex`, …), when the
    /// host knows it: exported as `gen_ai.agent.name` on every gate.
    pub agent: Option<String>,
    /// The machine's managed policy (`/etc/copse-hooks/`, the vendors' managed tiers),
    /// read by [`EngineConfig::from_process`]: its hooks run first and whatever hooks
    /// are off, its floors and `allowManagedHooksOnly` are the last word.
    pub managed: Arc<crate::managed::ManagedPolicy>,
    /// The dialect of the agent the shim serves, when it serves one: that vendor's
    /// managed-hooks-only rule then covers every hook (the vendor would not have run
    /// the shim's user-level hooks either).
    pub serving: Option<Dialect>,
    /// The built-in guard's mode (`enforce` by default). It judges every tool gate
    /// whenever hooks are enabled or a managed layer exists.
    pub guard: crate::guard::GuardMode,
    /// What a gated event gets when a config whose hooks would have judged it cannot
    /// run (changed since trusted, a pinned script changed, refused for its owner or
    /// mode): `Block` (the default) denies it naming the file and the fix; `Skip` runs
    /// the other hooks as if the file were absent (settings `"refusedConfigs": "skip"`).
    pub refused_configs: crate::settings::RefusedConfigs,
}

impl EngineConfig {
    /// This process's `$HOME` (`/` when unset), as [`EngineConfig::from_process`]
    /// reads it.
    pub fn process_home() -> PathBuf {
        std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from)
    }

    /// This process's copse data directory: `$COPSE_DIR` when set and non-empty,
    /// else `$HOME/.copse`, as [`EngineConfig::from_process`] reads it (without
    /// collecting the rest of the environment).
    pub fn process_copse_dir() -> PathBuf {
        std::env::var_os("COPSE_DIR")
            .filter(|v| !v.is_empty())
            .map_or_else(|| Self::process_home().join(".copse"), PathBuf::from)
    }

    /// A config for this process: `$HOME`, `$COPSE_DIR` (default `~/.copse`), this
    /// process's environment, hooks off, nothing trusted.
    pub fn from_process(workspace_roots: Vec<PathBuf>) -> EngineConfig {
        let managed = Arc::new(crate::managed::ManagedPolicy::from_process());
        EngineConfig {
            home: Self::process_home(),
            copse_dir: Self::process_copse_dir(),
            workspace_roots,
            trusted: Vec::new(),
            hooks_enabled: false,
            environment: std::env::vars_os().collect(),
            limits: Limits::default(),
            keep_session_runs: false,
            spine_path: None,
            retention: Retention::default(),
            sandbox: true,
            require_sandbox: false,
            sandbox_writable: Vec::new(),
            sandbox_allowed_sockets: Vec::new(),
            redact_secrets: true,
            failure_policy: std::collections::BTreeMap::new(),
            auto_continue_follow_ups: false,
            gemini_system_settings: std::env::var_os("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/etc/gemini-cli/settings.json")),
            codex_home: std::env::var_os("CODEX_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            codex_system_dir: PathBuf::from("/etc/codex"),
            locations: None,
            otel_settings: None,
            otel_pinned: managed.otel.clone(),
            agent: None,
            managed,
            serving: None,
            guard: crate::guard::GuardMode::Enforce,
            refused_configs: crate::settings::RefusedConfigs::Block,
        }
    }

    /// Where the Gemini CLI and Codex layers outside the home directory live.
    pub fn vendor_paths(&self) -> discovery::VendorPaths {
        discovery::VendorPaths {
            gemini_system_settings: self.gemini_system_settings.clone(),
            codex_home: self
                .codex_home
                .clone()
                .unwrap_or_else(|| self.home.join(".codex")),
            codex_system_dir: self.codex_system_dir.clone(),
            copilot_home: self
                .environment
                .iter()
                .find(|(k, v)| k == "COPILOT_HOME" && !v.is_empty())
                .map_or_else(|| self.home.join(".copilot"), |(_, v)| PathBuf::from(v)),
            copilot_policy_dir: PathBuf::from(discovery::COPILOT_POLICY_DIR),
        }
    }

    /// Turns external hooks on or off.
    pub fn enabled(mut self, on: bool) -> Self {
        self.hooks_enabled = on;
        self
    }

    /// Trusts a workspace root (unpinned: its configs' current content runs).
    pub fn trust(mut self, root: impl Into<PathBuf>) -> Self {
        self.trusted.push(TrustedWorkspace::Path(root.into()));
        self
    }

    /// Records every hook run in the audit store at `path`.
    pub fn spine(mut self, path: impl Into<PathBuf>) -> Self {
        self.spine_path = Some(path.into());
        self
    }

    /// Keeps every run record in sessions ([`Session::runs`](crate::Session::runs)).
    pub fn keep_runs(mut self) -> Self {
        self.keep_session_runs = true;
        self
    }

    /// Sets the home directory.
    pub fn home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = home.into();
        self
    }
}

pub use crate::scope::TrustState;

/// One discovered hook, as the Sources panel shows it.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct HookSummary {
    /// The dialect.
    pub dialect: Dialect,
    /// The event as written in the config.
    pub event: String,
    /// The canonical event it is wired to, when supported.
    pub canonical: Option<CanonicalEvent>,
    /// The matcher as written.
    pub matcher: Option<String>,
    /// Why the matcher does not compile (the hook never fires).
    pub matcher_error: Option<String>,
    /// The command.
    pub command: String,
    /// The config file.
    pub source: PathBuf,
    /// User or project.
    pub scope: Scope,
    /// 1-based position in its event's array.
    pub entry: usize,
    /// Whether copse-hooks wires this event.
    pub supported: bool,
    /// Whether its source is trusted (user configs always are).
    pub trusted: bool,
    /// `trusted`, `changed` (pinned content changed since trusted) or `untrusted`.
    pub trust: TrustState,
    /// Whether external hooks are enabled.
    pub enabled: bool,
    /// Whether it would run now (enabled, trusted, supported, valid matcher).
    pub active: bool,
    /// What a failure does.
    pub fail_closed: bool,
    /// Whether the hook runs in the sandbox (only the Copse dialect can opt out).
    pub sandboxed: bool,
    /// Whether the hook is a Claude `type: "http"` handler: an HTTP request made by
    /// copse-hooks itself, so no process and no sandbox.
    pub http: bool,
    /// The most recent failure recorded for this hook in the audit store, across
    /// sessions (what `doctor` shows too).
    pub last_error: Option<String>,
    /// The timeout in milliseconds.
    pub timeout_ms: u64,
    /// The workspace files a project hook's command runs, and whether each is as
    /// trusted (empty for user hooks and commands that run no workspace file).
    pub scripts: Vec<ScriptPin>,
    /// A Copse `"persistent": true` hook (one long-lived process).
    pub persistent: bool,
    /// A persistent hook's idle timeout in milliseconds (`None`: never stopped idle).
    pub idle_timeout_ms: Option<u64>,
    /// Why a persistent hook is broken (repeated crashes), as this engine or the audit
    /// store last saw it; its events resolve by the failure policy without starting it.
    pub broken: Option<String>,
    /// Why a managed-hooks-only rule keeps it from running, naming the file that set
    /// it (`allowManagedHooksOnly: set by /etc/copse-hooks/settings.json`).
    pub managed_only: Option<String>,
}

/// One workspace file a project hook runs, as trust sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScriptPin {
    /// The file.
    pub path: PathBuf,
    /// SHA-256 (hex) of its current content; `None` when it is missing or not a
    /// readable regular file of at most 1 MiB.
    pub sha256: Option<String>,
    /// Whether it is as trusted.
    pub state: ScriptState,
}

/// Whether a script is as trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScriptState {
    /// Its content is what was trusted.
    Pinned,
    /// It changed (or was removed, or became unreadable) since the root was trusted.
    Changed,
    /// The root is untrusted, or trusted without script pins.
    Unpinned,
}

/// What trusting a root pins, and the hooks it allows, from one read of each file:
/// the bytes hashed are the bytes parsed and shown.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TrustSnapshot {
    /// Config path → SHA-256 of its bytes (`None`: absent).
    pub configs: std::collections::BTreeMap<PathBuf, Option<String>>,
    /// Script path → SHA-256 of its bytes (`None`: absent or unreadable).
    pub scripts: std::collections::BTreeMap<PathBuf, Option<String>>,
    /// The root's project hooks and config warnings, from the same reads.
    pub listing: Listing,
    /// Files that could not be read as they are (these hooks will not run).
    pub problems: Vec<String>,
}

/// The current hash of a script: `Ok(None)` when it does not exist; `Err` when it
/// exists but is not a readable regular file of at most 1 MiB.
fn script_hash(path: &Path) -> Result<Option<String>, String> {
    match crate::fsread::read_optional(path, crate::fsread::MAX_CONFIG_BYTES) {
        Ok(b) => Ok(b.map(|b| crate::settings::sha256_hex(&b))),
        Err(e) => Err(format!("{} {e}", path.display())),
    }
}

/// Every discovered hook and every config warning.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Listing {
    /// The hooks, in configured order.
    pub hooks: Vec<HookSummary>,
    /// The warnings, in configured order.
    pub warnings: Vec<ConfigWarning>,
    /// The per-dialect failure policy from the settings (`failurePolicy`); dialects
    /// not named fail closed.
    pub failure_policy: std::collections::BTreeMap<String, FailurePolicy>,
    /// Whether stop follow-ups (Claude Stop/SubagentStop blocks, Cursor
    /// `followup_message`) continue the agent automatically within the continuation
    /// budget, as the vendors do, instead of waiting for a human (the default).
    pub auto_continue_follow_ups: bool,
}

struct Inner {
    plugins: crate::dialect::claude::plugin::PluginCache,
    sandbox: Option<SandboxConfig>,
    spine: Option<Spine>,
    spine_warning: Option<String>,
    config: EngineConfig,
    roots: Vec<PathBuf>,
    trusted: Vec<TrustedWorkspace>,
    registry: Registry,
    base_env: Vec<(OsString, OsString)>,
    depth: u32,
    /// Whether the environment claimed a hook depth without our token (ignored).
    forged_depth: bool,
    /// The token the child depth carries (made once, at the first hook spawned).
    depth_token: std::sync::OnceLock<Option<String>>,
    /// The persistent hooks' processes, shared by every session; stopped on drop.
    persistent: crate::persistent::pool::Pool,
    /// The OTLP exporter, when the `OTEL_*` variables or the settings ask for one;
    /// flushed (bounded) on drop.
    otel: Option<Arc<crate::otel::Exporter>>,
    /// What was wrong with the `OTEL_*` variables or the `"otel"` settings.
    otel_warnings: Vec<String>,
    /// The per-dialect failure policy with the managed floors folded in (what a run
    /// and the listing decide a hook's policy from).
    run_policy: std::collections::BTreeMap<String, FailurePolicy>,
    /// Whether any managed hook file exists (they run with hooks off too).
    managed_hooks: bool,
    /// The built-in guard, loaded at the first gate.
    guard: std::sync::OnceLock<crate::guard::Guard>,
}

/// Every script pinned by a trusted root among `roots`, sorted and deduplicated.
fn pinned_scripts_of(trusted: &[TrustedWorkspace], roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = trusted
        .iter()
        .filter(|t| roots.iter().any(|r| r == t.path()))
        .filter_map(TrustedWorkspace::script_pins)
        .flat_map(|pins| pins.keys().cloned())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// `locations` with the managed hook files in front (they run first): the Copse ones
/// always, a vendor's only when `locations` reads that vendor's configs (the shim
/// never reads the calling agent's own, nor its managed tier).
fn with_managed(
    policy: &crate::managed::ManagedPolicy,
    locations: Vec<ConfigLocation>,
) -> Vec<ConfigLocation> {
    let Some(paths) = &policy.paths else {
        return locations;
    };
    let mut out: Vec<ConfigLocation> = paths
        .hook_locations(policy.dir_ok, |d| locations.iter().any(|l| l.dialect == d))
        .into_iter()
        // One that appears later is read by the next engine; none costs nothing.
        .filter(|(path, _)| path.exists())
        .map(|(path, dialect)| ConfigLocation {
            path,
            dialect,
            scope: Scope::Managed,
            root: None,
        })
        .collect();
    out.extend(locations);
    out
}

/// A hooks engine. Cheap to clone (shared).
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("roots", &self.inner.roots)
            .field("enabled", &self.inner.config.hooks_enabled)
            .finish_non_exhaustive()
    }
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

impl Engine {
    /// Builds an engine. Nothing is read until an event fires (or [`Engine::list`]).
    pub fn new(config: EngineConfig) -> Engine {
        let roots: Vec<PathBuf> = config
            .workspace_roots
            .iter()
            .map(|p| canonical(p))
            .collect();
        let trusted: Vec<TrustedWorkspace> = config
            .trusted
            .iter()
            .map(|t| match t {
                TrustedWorkspace::Path(p) => TrustedWorkspace::Path(canonical(p)),
                TrustedWorkspace::Pinned {
                    path,
                    configs,
                    scripts,
                } => TrustedWorkspace::Pinned {
                    path: canonical(path),
                    configs: configs.clone(),
                    scripts: scripts.clone(),
                },
            })
            .collect();
        let var = |name: &str| {
            config
                .environment
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_os_str())
        };
        let claimed = env::verified_depth(var(DEPTH_VAR), var(env::TOKEN_VAR), &config.copse_dir);
        let depth = claimed.depth;
        let locations = with_managed(
            &config.managed,
            match &config.locations {
                Some(locations) => locations.clone(),
                None => discovery::locations_with(
                    &config.home,
                    &config.copse_dir,
                    &roots,
                    &config.vendor_paths(),
                ),
            },
        );
        // Managed hook files (ours, a vendor's managed tier) run whether hooks are on
        // or off; none means hooks off costs nothing, as before.
        let managed_hooks = locations.iter().any(|l| l.scope == Scope::Managed);
        let registry = Registry::new(locations);
        let base_env = env::scrubbed(config.environment.iter().cloned());
        let config_grace = config.limits.kill_grace;
        let (spine, spine_warning) = match &config.spine_path {
            Some(path) => {
                #[allow(unused_mut)] // changed only with the test seam
                let mut options = SpineOptions {
                    retention: config.retention,
                    redact_secrets: config.redact_secrets,
                    ..SpineOptions::default()
                };
                #[cfg(feature = "test-seams")]
                if let Some(ms) = std::env::var(crate::spine::FLUSH_INTERVAL_VAR)
                    .ok()
                    .and_then(|v| v.parse::<u64>().ok())
                {
                    options.flush_interval = std::time::Duration::from_millis(ms);
                }
                let (spine, warning) = Spine::open_with(path, options);
                (Some(spine), warning.map(|w| w.to_string()))
            }
            None => (None, None),
        };
        let sandbox = config.sandbox.then(|| SandboxConfig {
            sandbox: crate::sandbox::platform_sandbox(),
            require: config.require_sandbox || config.managed.require_sandbox,
            extra_writable: config
                .sandbox_writable
                .iter()
                .map(|p| canonical(p))
                .collect(),
            allowed_sockets: config.sandbox_allowed_sockets.clone(),
            // No hook may rewrite a script trust pinned (it would run unchecked
            // between the gate-time hash and the exec of a later run).
            extra_protected: pinned_scripts_of(&trusted, &roots),
            home: config.home.clone(),
            copse_dir: config.copse_dir.clone(),
        });
        let otel = crate::otel::ExportConfig::resolve(
            &config.environment,
            config.otel_settings.as_ref(),
            config.otel_pinned.as_ref(),
        );
        Engine {
            inner: Arc::new(Inner {
                otel: otel.config.map(crate::otel::Exporter::shared),
                otel_warnings: otel.warnings,
                run_policy: crate::managed::with_floors(&config.failure_policy, &config.managed),
                managed_hooks,
                guard: std::sync::OnceLock::new(),
                plugins: Default::default(),
                sandbox,
                spine,
                spine_warning,
                config,
                roots,
                trusted,
                registry,
                base_env,
                depth,
                forged_depth: claimed.forged,
                depth_token: std::sync::OnceLock::new(),
                persistent: crate::persistent::pool::Pool::new(config_grace),
            }),
        }
    }

    /// The engine's configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    /// How many times discovery touched the filesystem (a test seam: a gate with
    /// hooks off must not move it).
    pub fn config_file_accesses(&self) -> u64 {
        self.inner.registry.file_accesses()
    }

    /// The canonicalised workspace roots.
    pub fn workspace_roots(&self) -> &[PathBuf] {
        &self.inner.roots
    }

    /// Whether this process is itself inside a hook (hooks never run here).
    pub fn recursion_guard_tripped(&self) -> bool {
        self.inner.depth >= MAX_HOOK_DEPTH
    }

    /// This process's own hook depth (`COPSE_HOOK_DEPTH`; 0 outside any hook).
    pub fn hook_depth(&self) -> u32 {
        self.inner.depth
    }

    /// Whether a config location's root is trusted at all (before content pins).
    pub(crate) fn root_trusted(&self, loc: &ConfigLocation) -> bool {
        match (&loc.scope, &loc.root) {
            (Scope::Managed | Scope::User, _) => true,
            (Scope::Project, Some(root)) => self.inner.trusted.iter().any(|t| t.path() == root),
            (Scope::Project, None) => false,
        }
    }

    /// Whether a loaded config may run: user configs always; project configs when
    /// their root is trusted and (if pinned) their content is what was trusted.
    pub(crate) fn trust_state(&self, loaded: &LoadedConfig) -> TrustState {
        let loc = &loaded.location;
        let Some(root) = (match loc.scope {
            Scope::Managed | Scope::User => return TrustState::Trusted,
            Scope::Project => loc.root.as_ref(),
        }) else {
            return TrustState::Untrusted;
        };
        let entries: Vec<&TrustedWorkspace> = self
            .inner
            .trusted
            .iter()
            .filter(|t| t.path() == root)
            .collect();
        if entries.is_empty() {
            return TrustState::Untrusted;
        }
        let pinned_ok = |t: &TrustedWorkspace| match t.pins() {
            None => true,
            Some(pins) => {
                let expected = pins.get(&loc.path).cloned().flatten();
                expected == loaded.hash
            }
        };
        if entries.iter().any(|t| pinned_ok(t)) {
            TrustState::Trusted
        } else {
            TrustState::Changed
        }
    }

    /// The workspace files `hook` runs and their trust state (project hooks only).
    pub fn hook_scripts(&self, hook: &HookSpec) -> Vec<ScriptPin> {
        let (Scope::Project, Some(root)) = (hook.scope, hook.root.as_deref()) else {
            return Vec::new();
        };
        let root = canonical(root);
        let pins: Vec<_> = self
            .inner
            .trusted
            .iter()
            .filter(|t| t.path() == root)
            .filter_map(TrustedWorkspace::script_pins)
            .collect();
        crate::scripts::scripts_of(&hook.command, &root)
            .into_iter()
            .map(|path| {
                let current = script_hash(&path);
                let state = if pins.is_empty() {
                    ScriptState::Unpinned
                } else if pins.iter().any(|p| match (&current, p.get(&path)) {
                    (Ok(now), Some(pinned)) => now == pinned,
                    _ => false,
                }) {
                    ScriptState::Pinned
                } else {
                    ScriptState::Changed
                };
                ScriptPin {
                    sha256: current.ok().flatten(),
                    path,
                    state,
                }
            })
            .collect()
    }

    /// Every script pinned by a trusted root of this engine (for the sandbox to keep
    /// hooks from writing them).
    pub fn pinned_scripts(&self) -> Vec<PathBuf> {
        pinned_scripts_of(&self.inner.trusted, &self.inner.roots)
    }

    /// What trusting `root` (a canonical workspace root of this engine) would pin,
    /// and the hooks it would allow, from one read of each file.
    pub fn trust_snapshot(&self, root: &Path) -> TrustSnapshot {
        let configs = self
            .inner
            .registry
            .load(|loc| loc.scope == Scope::Project && loc.root.as_deref() == Some(root));
        let mut snapshot = TrustSnapshot {
            configs: Default::default(),
            scripts: Default::default(),
            listing: self.listing_of(&configs, &Default::default()),
            problems: Vec::new(),
        };
        // The workspace's guard policy is pinned like a hook config.
        let guard_policy = root.join(".copse").join(crate::guard::POLICY_FILE);
        let guard_pin = crate::settings::pin_of(&guard_policy).unwrap_or(None);
        snapshot.configs.insert(guard_policy, guard_pin);
        for loaded in &configs {
            snapshot
                .configs
                .insert(loaded.location.path.clone(), loaded.hash.clone());
            if loaded.exists && loaded.hash.is_none() {
                let why: Vec<&str> = loaded
                    .config
                    .warnings
                    .iter()
                    .map(|w| w.message.as_str())
                    .collect();
                snapshot.problems.push(format!(
                    "{} exists but {}; its hooks will not run",
                    loaded.location.path.display(),
                    if why.is_empty() {
                        "could not be read".to_string()
                    } else {
                        why.join("; ")
                    }
                ));
            }
            for hook in &loaded.config.hooks {
                for path in crate::scripts::scripts_of(&hook.command, root) {
                    if snapshot.scripts.contains_key(&path) {
                        continue;
                    }
                    let hash = match script_hash(&path) {
                        Ok(h) => h,
                        Err(e) => {
                            snapshot
                                .problems
                                .push(format!("script {e}: its hook will not run"));
                            None
                        }
                    };
                    snapshot.scripts.insert(path, hash);
                }
            }
        }
        snapshot
    }

    /// The built-in guard (its policy files are read on first use).
    pub fn guard(&self) -> &crate::guard::Guard {
        self.inner.guard.get_or_init(|| {
            let roots = self
                .inner
                .roots
                .iter()
                .map(|r| {
                    let trust = self
                        .inner
                        .trusted
                        .iter()
                        .find(|t| t.path() == r.as_path())
                        .map(|t| match t {
                            TrustedWorkspace::Path(_) => None,
                            TrustedWorkspace::Pinned { configs, .. } => Some(configs.clone()),
                        });
                    (r.clone(), trust)
                })
                .collect();
            crate::guard::Guard::load(&crate::guard::GuardSources {
                mode: self.inner.config.guard,
                copse_dir: self.inner.config.copse_dir.clone(),
                managed_dir: self.inner.config.managed.dir.clone(),
                managed_checked: true,
                roots,
                home: self.inner.config.home.clone(),
            })
        })
    }

    /// Whether the guard judges gates: hooks enabled, or a managed layer present
    /// (its guard rules hold with hooks off too). A recursion guard does not switch
    /// it off: it spawns nothing.
    pub fn guard_active(&self) -> bool {
        self.inner.config.hooks_enabled
            || self.inner.managed_hooks
            || self
                .inner
                .config
                .managed
                .dir
                .join(crate::guard::POLICY_FILE)
                .exists()
    }

    /// Whether hooks may run at all (enabled, or managed hooks may exist; and not
    /// inside a hook process).
    pub(crate) fn hooks_active(&self) -> bool {
        (self.inner.config.hooks_enabled && !self.recursion_guard_tripped())
            || self.inner.managed_hooks
    }

    /// Whether non-managed hooks may run here (on, and not inside one of our hooks).
    pub(crate) fn own_hooks_run(&self) -> bool {
        self.inner.config.hooks_enabled && !self.recursion_guard_tripped()
    }

    /// Whether even managed hooks stop here: a managed hook that starts an agent that
    /// calls us again is bounded at [`env::MAX_MANAGED_DEPTH`] (its gates denied).
    pub(crate) fn managed_too_deep(&self) -> bool {
        self.inner.depth >= env::MAX_MANAGED_DEPTH
    }

    /// The machine's managed policy.
    pub fn managed(&self) -> &crate::managed::ManagedPolicy {
        &self.inner.config.managed
    }

    /// Why the hooks of the config at `loc` may not run under a managed-hooks-only
    /// rule (copse-hooks' own, or the vendor's), naming the file that set it.
    pub(crate) fn managed_only_of(&self, loc: &ConfigLocation) -> Option<String> {
        let config = &self.inner.config;
        let m = &config.managed;
        // Nothing managed-only anywhere (the usual machine): no call per location.
        if !(m.allow_managed_hooks_only
            || m.claude.allow_managed_hooks_only
            || m.codex.allow_managed_hooks_only)
        {
            return None;
        }
        let system_codex = loc.dialect == Dialect::Codex
            && loc.path.parent() == Some(config.codex_system_dir.as_path());
        config
            .managed
            .managed_only(loc.dialect, loc.scope, config.serving, system_codex)
    }

    /// The config cache.
    pub(crate) fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The parsed hook files of Claude plugins.
    pub(crate) fn plugins(&self) -> &crate::dialect::claude::plugin::PluginCache {
        &self.inner.plugins
    }

    /// What every run of an event needs from the engine (the run stage's input): the
    /// one constructor the session's blocking and detached paths and dry runs share.
    pub(crate) fn run_input<'a>(
        &'a self,
        event: &'a crate::event::EventPayload,
        ctx: Context<'a>,
        session_env: Option<&'a crate::overlay::Overlays>,
        http_policy: Option<&'a crate::http::HttpPolicy>,
    ) -> crate::run::RunInput<'a> {
        crate::run::RunInput {
            event,
            ctx,
            base_env: &self.inner.base_env,
            session_env,
            child_depth: self.child_depth(),
            depth_token: self.depth_token(),
            limits: self.limits(),
            sandbox: self.sandbox_config(),
            failure_policy: &self.inner.run_policy,
            http_policy,
            persistent: Some(&self.inner.persistent),
        }
    }

    /// The OTLP exporter every gate is recorded to, when one is configured.
    pub fn otel(&self) -> Option<&crate::otel::Exporter> {
        self.inner.otel.as_deref()
    }

    /// What was wrong with the `OTEL_*` variables or the `"otel"` settings (empty
    /// when nothing was).
    pub fn otel_warnings(&self) -> &[String] {
        &self.inner.otel_warnings
    }

    pub(crate) fn child_depth(&self) -> u32 {
        self.inner.depth + 1
    }

    /// The token that proves the child depth is ours ([`env::TOKEN_VAR`]).
    pub(crate) fn depth_token(&self) -> Option<&str> {
        self.inner
            .depth_token
            .get_or_init(|| env::depth_token(&self.inner.config.copse_dir, self.child_depth()))
            .as_deref()
    }

    /// Whether this process's environment claimed a hook depth (`COPSE_HOOK_DEPTH`)
    /// without the token copse-hooks hands its own hooks: the claim was ignored.
    pub fn forged_hook_depth(&self) -> bool {
        self.inner.forged_depth
    }

    pub(crate) fn keeps_runs(&self) -> bool {
        self.inner.config.keep_session_runs
    }

    pub(crate) fn auto_continue_follow_ups(&self) -> bool {
        self.inner.config.auto_continue_follow_ups
    }

    pub(crate) fn limits(&self) -> crate::spawn::Limits {
        self.inner.config.limits
    }

    /// What the OS sandbox enforces on this machine (`None` when the host turned
    /// sandboxing off).
    pub fn sandbox_status(&self) -> Option<crate::sandbox::SandboxStatus> {
        self.inner.sandbox.as_ref().map(|s| s.sandbox.status())
    }

    /// The engine's persistent hook processes.
    pub(crate) fn persistent_pool(&self) -> &crate::persistent::pool::Pool {
        &self.inner.persistent
    }

    /// The state of every persistent hook this engine has started: running, stopped
    /// (idle, or its script changed), restarting after a crash, or broken.
    pub fn persistent_status(&self) -> Vec<crate::persistent::pool::PersistentStatus> {
        self.inner.persistent.status()
    }

    /// The pids of the running persistent hook processes.
    pub fn persistent_pids(&self) -> Vec<u64> {
        self.inner.persistent.pids()
    }

    /// Stops every persistent hook now (as dropping the engine does): stdin closed,
    /// a short grace, then the group killed. They restart on demand.
    pub fn stop_persistent(&self) {
        self.inner.persistent.shutdown();
    }

    pub(crate) fn sandbox_config(&self) -> Option<&SandboxConfig> {
        self.inner.sandbox.as_ref()
    }

    /// The audit store, when recording.
    pub fn spine(&self) -> Option<&Spine> {
        self.inner.spine.as_ref()
    }

    /// Why the audit store could not be opened (gating carries on without it), or its
    /// first runtime failure. Given once per call site; the engine never prints.
    pub fn spine_warning(&self) -> Option<String> {
        self.inner.spine_warning.clone().or_else(|| {
            self.inner
                .spine
                .as_ref()
                .and_then(|s| s.take_warning())
                .map(|w| w.to_string())
        })
    }

    /// Every audit-store warning (the open failure, then each runtime one not taken
    /// yet), in order: a host reports them all.
    pub fn spine_warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self.inner.spine_warning.iter().cloned().collect();
        if let Some(s) = &self.inner.spine {
            out.extend(s.take_warnings().into_iter().map(|w| w.to_string()));
        }
        out
    }

    /// Commits everything recorded so far (call before the host exits).
    pub fn flush_spine(&self) {
        if let Some(s) = &self.inner.spine {
            s.flush();
        }
    }

    /// Every declared hook (trusted or not) and every warning, for the Sources view,
    /// with each hook's last error from this engine's audit store.
    pub fn list(&self) -> Listing {
        self.list_with(self.inner.spine.as_ref())
    }

    /// [`Engine::list`], taking last errors from `spine` (the most recent failure
    /// recorded for each hook, across sessions).
    pub fn list_with(&self, spine: Option<&Spine>) -> Listing {
        let failures: std::collections::HashMap<(String, String, String), String> = spine
            .map(|s| {
                s.recent_failures()
                    .into_iter()
                    .map(|f| ((f.source, f.event, f.command), f.message))
                    .collect()
            })
            .unwrap_or_default();
        let configs = self.all_configs();
        let mut listing = self.listing_of(&configs, &failures);
        // Broken persistent hooks: this engine's own, then what the audit store saw
        // (another process's engine, e.g. the daemon).
        let mut broken: std::collections::HashMap<(String, String, String), String> = spine
            .map(|s| {
                s.broken_hooks()
                    .into_iter()
                    .map(|f| ((f.source, f.event, f.command), f.message))
                    .collect()
            })
            .unwrap_or_default();
        for st in self.persistent_status() {
            if let Some(reason) = st.reason.filter(|_| st.state == "broken") {
                broken.insert(
                    (
                        st.source.to_string_lossy().into_owned(),
                        st.event,
                        st.command,
                    ),
                    reason,
                );
            }
        }
        for h in listing.hooks.iter_mut().filter(|h| h.persistent) {
            h.broken = broken
                .get(&(
                    h.source.to_string_lossy().into_owned(),
                    h.event.clone(),
                    h.command.clone(),
                ))
                .cloned();
        }
        listing
    }

    fn listing_of(
        &self,
        configs: &[LoadedConfig],
        failures: &std::collections::HashMap<(String, String, String), String>,
    ) -> Listing {
        let enabled = self.inner.config.hooks_enabled;
        let switches = select::switches_of_trusted(self, configs);
        let mut hooks = Vec::new();
        let mut warnings = Vec::new();
        let managed = &self.inner.config.managed;
        for line in managed
            .warnings
            .iter()
            .chain(&managed.claude.warnings)
            .chain(&managed.codex.warnings)
        {
            warnings.push(ConfigWarning {
                source: managed.dir.clone(),
                scope: Scope::Managed,
                event: None,
                message: line.clone(),
            });
        }
        for loaded in configs {
            let config_trust = self.trust_state(loaded);
            let managed_only = self.managed_only_of(&loaded.location);
            for (index, hook) in loaded.config.hooks.iter().enumerate() {
                let scripts = self.hook_scripts(hook);
                let trust = if config_trust == TrustState::Trusted
                    && scripts.iter().any(|s| s.state == ScriptState::Changed)
                {
                    TrustState::Changed
                } else {
                    config_trust
                };
                let trusted = trust == TrustState::Trusted;
                let switched_off = switches.allows(hook, loaded.config.extra(index));
                if let Some(why) = &switched_off {
                    warnings.push(ConfigWarning {
                        source: hook.source.clone(),
                        scope: hook.scope,
                        event: Some(hook.event.clone()),
                        message: format!(
                            "\"{}\" entry {} hook `{}` is switched off: {why} — it never runs",
                            hook.event, hook.entry, hook.command
                        ),
                    });
                }
                let matcher_error = match &hook.matcher {
                    HookMatcher::Invalid(e) => Some(e.reason.clone()),
                    _ => None,
                };
                hooks.push(HookSummary {
                    dialect: hook.dialect,
                    event: hook.event.clone(),
                    canonical: hook.canonical,
                    matcher: hook.matcher_source.clone(),
                    active: (enabled || loaded.location.scope == Scope::Managed)
                        && managed_only.is_none()
                        && trusted
                        && hook.supported()
                        && matcher_error.is_none()
                        && !switches.all_off(hook)
                        && switched_off.is_none(),
                    matcher_error,
                    command: hook.command.clone(),
                    source: hook.source.clone(),
                    scope: hook.scope,
                    entry: hook.entry,
                    supported: hook.supported(),
                    trusted,
                    trust,
                    enabled,
                    fail_closed: crate::dialect::effective_policy(hook, &self.inner.run_policy)
                        == FailurePolicy::Closed,
                    sandboxed: hook.sandbox,
                    http: hook.options.http.is_some(),
                    last_error: failures
                        .get(&(
                            hook.source.to_string_lossy().into_owned(),
                            hook.event.clone(),
                            hook.command.clone(),
                        ))
                        .cloned(),
                    timeout_ms: u64::try_from(hook.timeout.as_millis()).unwrap_or(u64::MAX),
                    scripts,
                    persistent: hook.options.persistent.is_some(),
                    idle_timeout_ms: hook
                        .options
                        .persistent
                        .and_then(|p| p.idle_timeout)
                        .map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
                    broken: None,
                    managed_only: managed_only.clone(),
                });
            }
            warnings.extend(loaded.config.warnings.iter().cloned());
        }
        Listing {
            hooks,
            warnings,
            failure_policy: self.inner.config.failure_policy.clone(),
            auto_continue_follow_ups: self.inner.config.auto_continue_follow_ups,
        }
    }
}
