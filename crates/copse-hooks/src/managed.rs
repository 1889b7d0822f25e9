//! The managed policy layer: what the machine's administrator sets in
//! `/etc/copse-hooks/` (root-owned), which user and project settings cannot loosen,
//! and the vendors' own managed tiers copse-hooks can read (Claude Code's
//! `managed-settings.json`, Codex's `requirements.toml`).
//!
//! * `settings.json`: `allowManagedHooksOnly` (only managed hooks run),
//!   `failurePolicy` floors (a dialect, canonical event or `"*"` → `closed`: a
//!   failure of such a hook fails closed whatever the hook or the user's settings
//!   say), `otel` (a pinned OTLP export), `requireSandbox`.
//! * `hooks.json` and `hooks.d/*.json`: managed hooks in the Copse format. They run
//!   first, are always trusted, and nothing but the administrator turns them off
//!   (not `copse-hooks disable`, not `cursorHooksEnabled: false`, not a vendor's
//!   `disableAllHooks` in a user or project file).
//!
//! Every file of the layer, and the directory, must be owned by root and not
//! writable by group or others ([`read_root_owned`]). A settings file that fails the
//! check, or is not valid, makes the layer *broken*: said loudly, and read in the way
//! that loosens nothing — every failure fails closed, the sandbox is required, and no
//! user gate is removed (`allowManagedHooksOnly` is not assumed, since it would skip
//! the user's own gates). A hooks file that fails the check is refused like any
//! config: none of its hooks run, and the warning says so.
//!
//! `COPSE_MANAGED_DIR` points the layer elsewhere, for tests only: it is honoured only
//! when no system managed path exists (it can never hide one) and when the directory
//! and every directory above it are owned by root and not writable by group or
//! others (a sticky root-owned directory such as `/tmp` aside) — an unprivileged user
//! cannot make such a directory, so the shipped binary cannot be redirected by one.
//! Under it, the vendors' tiers are read from `claude-code/` and
//! `codex/requirements.toml`.
//!
//! Provenance of the vendor tiers (checked 2026-12-03):
//! * Claude Code: <https://code.claude.com/docs/en/settings> (managed scope, Linux
//!   `/etc/claude-code/managed-settings.json` and `managed-settings.d/*.json`),
//!   <https://code.claude.com/docs/en/settings-reference> (`allowManagedHooksOnly`:
//!   only managed hooks run; `disableAllHooks` outside managed settings cannot
//!   disable managed hooks).
//! * Codex: <https://developers.openai.com/codex/enterprise/managed-configuration>
//!   (`/etc/codex/requirements.toml` on Unix), `openai/codex` `docs/config.md`
//!   "Lifecycle hooks" (top-level `allow_managed_hooks_only = true` keeps managed
//!   hooks from requirements and managed config layers, skips user, project and
//!   session hooks; only read from `requirements.toml`), openai/codex#18893 (`[hooks]`
//!   inline in `requirements.toml`), <https://developers.openai.com/codex/hooks>
//!   (`[features].hooks = false` in `requirements.toml` forces hooks off).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::fsread::{MAX_CONFIG_BYTES, ReadError};
use crate::outcome::FailurePolicy;
use crate::scope::{Dialect, Scope};

/// The managed layer's directory.
pub const SYSTEM_DIR: &str = "/etc/copse-hooks";
/// Claude Code's managed settings directory on Linux.
pub const CLAUDE_SYSTEM_DIR: &str = "/etc/claude-code";
/// Codex's system requirements file on Unix.
pub const CODEX_SYSTEM_REQUIREMENTS: &str = "/etc/codex/requirements.toml";
/// The test-only redirect of the layer (honoured only for a root-owned directory).
pub const DIR_VAR: &str = "COPSE_MANAGED_DIR";

/// Where the managed layer and the vendors' managed tiers are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ManagedPaths {
    /// The copse-hooks layer (`/etc/copse-hooks`).
    pub dir: PathBuf,
    /// Claude Code's managed settings directory (`/etc/claude-code`).
    pub claude_dir: PathBuf,
    /// Codex's requirements file (`/etc/codex/requirements.toml`).
    pub codex_requirements: PathBuf,
    /// Whether `COPSE_MANAGED_DIR` redirected these.
    pub redirected: bool,
}

impl ManagedPaths {
    /// The system locations.
    pub fn system() -> ManagedPaths {
        ManagedPaths {
            dir: PathBuf::from(SYSTEM_DIR),
            claude_dir: PathBuf::from(CLAUDE_SYSTEM_DIR),
            codex_requirements: PathBuf::from(CODEX_SYSTEM_REQUIREMENTS),
            redirected: false,
        }
    }

    /// Every location under a directory `dir`, as the redirect reads it: the layer in
    /// `dir`, Claude's in `dir/claude-code`, Codex's requirements in
    /// `dir/codex/requirements.toml`. Whatever is read from there must still be
    /// owned by root ([`ManagedPolicy::load`]).
    pub fn under(dir: &Path) -> ManagedPaths {
        ManagedPaths {
            dir: dir.to_path_buf(),
            claude_dir: dir.join("claude-code"),
            codex_requirements: dir.join("codex").join("requirements.toml"),
            redirected: true,
        }
    }

    /// The locations for an environment: the system ones, or `COPSE_MANAGED_DIR`'s
    /// when it may be honoured (else a warning saying why it is ignored).
    pub fn from_env(env: &[(OsString, OsString)]) -> (ManagedPaths, Option<String>) {
        let Some(dir) = env
            .iter()
            .rev()
            .find(|(k, _)| k == DIR_VAR)
            .map(|(_, v)| v.as_os_str())
            .filter(|v| !v.is_empty())
        else {
            return (ManagedPaths::system(), None);
        };
        match redirect_refusal(Path::new(dir)) {
            None => (ManagedPaths::under(Path::new(dir)), None),
            Some(why) => (
                ManagedPaths::system(),
                Some(format!(
                    "{DIR_VAR}={} is ignored: {why}",
                    Path::new(dir).display()
                )),
            ),
        }
    }

    /// A process's own environment.
    pub fn from_process() -> (ManagedPaths, Option<String>) {
        let env: Vec<(OsString, OsString)> = std::env::var_os(DIR_VAR)
            .map(|v| (OsString::from(DIR_VAR), v))
            .into_iter()
            .collect();
        ManagedPaths::from_env(&env)
    }

    /// The managed hook files, in the order they run: the Copse `hooks.json` and
    /// `hooks.d/*.json` (sorted), Claude's `managed-settings.json` and
    /// `managed-settings.d/*.json`, Codex's `requirements.toml`. `dialects`: which
    /// vendors' managed hook files to include (the Copse ones always).
    /// `copse`: whether to include the Copse ones (not when the directory was
    /// refused).
    pub fn hook_locations(
        &self,
        copse: bool,
        dialects: impl Fn(Dialect) -> bool,
    ) -> Vec<(PathBuf, Dialect)> {
        let managed = |path: PathBuf, dialect: Dialect| (path, dialect);
        let mut out = vec![managed(self.dir.join("hooks.json"), Dialect::Copse)];
        out.extend(
            json_dropins(&self.dir.join("hooks.d"))
                .into_iter()
                .map(|p| managed(p, Dialect::Copse)),
        );
        if !copse {
            out.clear();
        }
        if dialects(Dialect::Claude) {
            out.extend(
                claude_files(&self.claude_dir)
                    .into_iter()
                    .map(|p| managed(p, Dialect::Claude)),
            );
        }
        if dialects(Dialect::Codex) {
            out.push(managed(self.codex_requirements.clone(), Dialect::Codex));
        }
        out
    }
}

/// Why `dir` may not redirect the managed layer (`None`: it may).
fn redirect_refusal(dir: &Path) -> Option<String> {
    let system = ManagedPaths::system();
    for existing in [
        system.dir.clone(),
        system.claude_dir.join("managed-settings.json"),
        system.claude_dir.join("managed-settings.d"),
        system.codex_requirements.clone(),
    ] {
        if std::fs::symlink_metadata(&existing).is_ok() {
            return Some(format!(
                "{} exists, and a redirect never hides the machine's managed policy",
                existing.display()
            ));
        }
    }
    if !dir.is_absolute() {
        return Some("not an absolute path".to_string());
    }
    let real = match std::fs::canonicalize(dir) {
        Ok(p) => p,
        Err(e) => return Some(format!("cannot be resolved ({e})")),
    };
    let mut at = Some(real.as_path());
    let mut first = true;
    while let Some(p) = at {
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) => return Some(format!("{} cannot be examined ({e})", p.display())),
        };
        if !meta.is_dir() {
            return Some(format!("{} is not a directory", p.display()));
        }
        if meta.uid() != 0 {
            return Some(format!(
                "{} is owned by uid {}, not root",
                p.display(),
                meta.uid()
            ));
        }
        let mode = meta.permissions().mode();
        // Above the layer, a sticky root-owned directory (`/tmp`) is safe: nobody but
        // root may rename root's entries in it.
        let sticky_ok = !first && mode & 0o1000 != 0;
        if mode & 0o022 != 0 && !sticky_ok {
            return Some(format!(
                "{} is writable by group or others (mode {:o})",
                p.display(),
                mode & 0o7777
            ));
        }
        first = false;
        at = p.parent();
    }
    None
}

/// The `*.json` files of a drop-in directory, sorted by name (none when absent).
fn json_dropins(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension() == Some(OsStr::new("json")))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Claude Code's managed settings files: `managed-settings.json`, then the
/// `managed-settings.d/*.json` drop-ins in name order.
fn claude_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.join("managed-settings.json")];
    out.extend(json_dropins(&dir.join("managed-settings.d")));
    out
}

/// Why a managed file (or directory) with metadata `meta` must not be used: not
/// owned by root, or writable by group or others.
fn not_root_owned(path: &Path, meta: &std::fs::Metadata) -> Option<crate::private::Insecure> {
    let quoted = crate::private::shell_quote(path);
    if meta.uid() != 0 {
        return Some(crate::private::Insecure {
            reason: format!(
                "is owned by uid {}, and a managed file must be owned by root",
                meta.uid()
            ),
            fix: format!("sudo chown root {quoted}"),
        });
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Some(crate::private::Insecure {
            reason: format!("is writable by group or others (mode {:o})", mode & 0o777),
            fix: format!("sudo chmod go-w {quoted}"),
        });
    }
    None
}

/// Reads a managed file: opened without blocking, a regular file once open, at most
/// 1 MiB, owned by root and not writable by group or others (checked on the open
/// descriptor, so the bytes are those of the file checked).
pub(crate) fn read_root_owned(path: &Path) -> Result<Vec<u8>, ReadError> {
    crate::fsread::read_checked(path, MAX_CONFIG_BYTES, not_root_owned)
}

/// Whether the managed layer was found, and whether it can be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ManagedState {
    /// No managed directory: nothing is managed.
    #[default]
    Absent,
    /// Read and valid (or present with only hook files).
    Valid,
    /// Present but refused or invalid: read in the way that loosens nothing.
    Broken,
}

impl ManagedState {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            ManagedState::Absent => "absent",
            ManagedState::Valid => "valid",
            ManagedState::Broken => "broken",
        }
    }
}

/// A vendor's managed tier, as copse-hooks reads it.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct VendorTier {
    /// The files that exist (read or refused).
    pub files: Vec<PathBuf>,
    /// The vendor's managed-hooks-only switch is on.
    pub allow_managed_hooks_only: bool,
    /// The file that set it.
    pub set_by: Option<PathBuf>,
    /// Claude `disableAllHooks` in managed settings (it turns managed hooks off too);
    /// Codex `[features] hooks = false` in requirements.
    pub hooks_off: bool,
    /// Whether the tier has hooks of its own (run in managed scope).
    pub has_hooks: bool,
    /// What was wrong with its files.
    pub warnings: Vec<String>,
}

/// The machine's managed policy.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct ManagedPolicy {
    /// Where the copse-hooks layer was read from.
    pub dir: PathBuf,
    /// Whether `COPSE_MANAGED_DIR` redirected it (tests only).
    pub redirected: bool,
    /// Absent, valid or broken.
    pub state: ManagedState,
    /// `allowManagedHooksOnly`: only managed hooks run.
    pub allow_managed_hooks_only: bool,
    /// `failurePolicy` floors: a dialect name, canonical event name or `"*"` →
    /// `closed` (an `open` floor changes nothing).
    pub failure_floor: BTreeMap<String, FailurePolicy>,
    /// `otel`: the pinned OTLP export (the raw object; never printed whole, it may
    /// hold credentials).
    #[serde(skip)]
    pub otel: Option<serde_json::Value>,
    /// `requireSandbox`: fail a run when the kernel does not enforce the sandbox.
    pub require_sandbox: bool,
    /// The managed hook files that exist (`hooks.json`, `hooks.d/*.json`).
    pub hook_files: Vec<PathBuf>,
    /// What is wrong with the layer, one line each (said loudly by every host).
    pub warnings: Vec<String>,
    /// Claude Code's managed settings.
    pub claude: VendorTier,
    /// Codex's `requirements.toml`.
    pub codex: VendorTier,
    /// The paths read.
    #[serde(skip)]
    pub paths: Option<ManagedPaths>,
    /// Whether the layer's directory passed the ownership check (its hook files are
    /// read only then).
    #[serde(skip)]
    pub(crate) dir_ok: bool,
}

impl ManagedPolicy {
    /// The policy of this process's machine (`COPSE_MANAGED_DIR` from its
    /// environment, under the rule above).
    pub fn from_process() -> ManagedPolicy {
        let (paths, warning) = ManagedPaths::from_process();
        let mut policy = ManagedPolicy::load(&paths);
        policy.warnings.splice(0..0, warning);
        policy
    }

    /// The policy for an environment `env` (an agent's, as the shim saw it).
    pub fn from_env(env: &[(OsString, OsString)]) -> ManagedPolicy {
        let (paths, warning) = ManagedPaths::from_env(env);
        let mut policy = ManagedPolicy::load(&paths);
        policy.warnings.splice(0..0, warning);
        policy
    }

    /// Reads the layer at `paths`. Checks ownership like the redirect does, so a
    /// test can load a throwaway root-owned directory directly.
    pub fn load(paths: &ManagedPaths) -> ManagedPolicy {
        let mut out = ManagedPolicy {
            dir: paths.dir.clone(),
            redirected: paths.redirected,
            paths: Some(paths.clone()),
            ..ManagedPolicy::default()
        };
        out.claude = read_claude(&paths.claude_dir);
        out.codex = read_codex(&paths.codex_requirements);
        let meta = match std::fs::metadata(&paths.dir) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return out,
            Err(e) => {
                out.broken(format!("{} cannot be examined ({e})", paths.dir.display()));
                return out;
            }
        };
        out.state = ManagedState::Valid;
        if !meta.is_dir() {
            out.broken(format!("{} is not a directory", paths.dir.display()));
            return out;
        }
        if let Some(why) = not_root_owned(&paths.dir, &meta) {
            out.broken(format!(
                "the directory {} {}; fix it with `{}`",
                paths.dir.display(),
                why.reason,
                why.fix
            ));
            return out;
        }
        out.dir_ok = true;
        let mut hook_files = vec![paths.dir.join("hooks.json")];
        hook_files.extend(json_dropins(&paths.dir.join("hooks.d")));
        out.hook_files = hook_files.into_iter().filter(|p| p.exists()).collect();
        let settings = paths.dir.join("settings.json");
        match read_root_owned(&settings) {
            Ok(bytes) => out.apply_settings(&settings, &bytes),
            Err(e) if e.is_not_found() => {}
            Err(ReadError::Insecure(why)) => out.broken(format!(
                "{} {} — refused; fix it with `{}`",
                settings.display(),
                why.reason,
                why.fix
            )),
            Err(e) => out.broken(format!("{} {e} — refused", settings.display())),
        }
        out
    }

    /// Marks the layer broken: every failure fails closed and the sandbox is
    /// required (what a broken file might have said, at its strictest, that removes
    /// no gate).
    fn broken(&mut self, why: String) {
        self.state = ManagedState::Broken;
        self.warnings.push(format!(
            "managed policy broken: {why}; until it is fixed every hook failure fails closed and the sandbox is required"
        ));
        self.failure_floor
            .insert("*".to_string(), FailurePolicy::Closed);
        self.require_sandbox = true;
    }

    fn apply_settings(&mut self, path: &Path, bytes: &[u8]) {
        let value: serde_json::Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(e) => {
                self.broken(format!("{} is not valid JSON ({e})", path.display()));
                return;
            }
        };
        let Some(map) = value.as_object() else {
            self.broken(format!("{} is not a JSON object", path.display()));
            return;
        };
        let mut bad = Vec::new();
        for (key, v) in map {
            match key.as_str() {
                "$schema" => {}
                "allowManagedHooksOnly" => match v.as_bool() {
                    Some(b) => self.allow_managed_hooks_only = b,
                    None => bad.push(format!("\"{key}\" must be true or false")),
                },
                "requireSandbox" => match v.as_bool() {
                    Some(b) => self.require_sandbox |= b,
                    None => bad.push(format!("\"{key}\" must be true or false")),
                },
                "otel" => {
                    if v.is_object() {
                        self.otel = Some(v.clone());
                    } else {
                        bad.push(format!("\"{key}\" must be an object"));
                    }
                }
                "failurePolicy" => match v.as_object() {
                    Some(floors) => {
                        for (name, p) in floors {
                            match p.as_str() {
                                Some("closed") => {
                                    self.failure_floor
                                        .insert(name.clone(), FailurePolicy::Closed);
                                }
                                Some("open") => {}
                                _ => bad.push(format!(
                                    "\"failurePolicy\".\"{name}\" must be \"closed\" or \"open\""
                                )),
                            }
                        }
                    }
                    None => bad.push(format!("\"{key}\" must be an object")),
                },
                // A managed file that cannot turn managed hooks off says so.
                "disableAllHooks" => self.warnings.push(format!(
                    "{}: \"disableAllHooks\" is not a managed setting (managed hooks always run; remove the hook files instead) — ignored",
                    path.display()
                )),
                other => self.warnings.push(format!(
                    "{}: unknown managed setting \"{other}\" — ignored",
                    path.display()
                )),
            }
        }
        if !bad.is_empty() {
            self.broken(format!("{}: {}", path.display(), bad.join("; ")));
        }
    }

    /// Whether any file of the layer exists (hooks or settings), the vendors' tiers
    /// included.
    pub fn present(&self) -> bool {
        self.state != ManagedState::Absent
            || !self.claude.files.is_empty()
            || !self.codex.files.is_empty()
    }

    /// The managed floor for a hook of `dialect` at canonical event `event`.
    pub fn floor(&self, dialect: Dialect, event: Option<&str>) -> Option<FailurePolicy> {
        let hit = |k: &str| self.failure_floor.get(k).copied();
        hit("*")
            .or_else(|| hit(dialect.as_str()))
            .or_else(|| event.and_then(hit))
    }

    /// The pinned OTLP endpoint's URL (`tracesEndpoint`, else `endpoint` +
    /// `/v1/traces`), for display: never the headers.
    pub fn pinned_endpoint(&self) -> Option<String> {
        let otel = self.otel.as_ref()?;
        if let Some(u) = otel.get("tracesEndpoint").and_then(|v| v.as_str()) {
            return Some(u.to_string());
        }
        otel.get("endpoint")
            .and_then(|v| v.as_str())
            .map(|u| format!("{}/v1/traces", u.trim_end_matches('/')))
    }

    /// Why a hook of `dialect` in `scope` may not run under a managed-hooks-only
    /// rule, naming the file that set it; `serving`: the agent the shim serves (its
    /// vendor's rule then covers every hook, since that vendor would not have run
    /// them). `system_codex`: whether the hook's file is in Codex's system layer
    /// (which Codex counts as managed).
    pub fn managed_only(
        &self,
        dialect: Dialect,
        scope: Scope,
        serving: Option<Dialect>,
        system_codex: bool,
    ) -> Option<String> {
        if scope == Scope::Managed {
            return None;
        }
        if self.allow_managed_hooks_only {
            return Some(format!(
                "allowManagedHooksOnly: set by {}",
                self.dir.join("settings.json").display()
            ));
        }
        let vendor = |tier: &VendorTier, d: Dialect| {
            (tier.allow_managed_hooks_only && (dialect == d || serving == Some(d))).then(|| {
                let key = if d == Dialect::Codex {
                    "allow_managed_hooks_only"
                } else {
                    "allowManagedHooksOnly"
                };
                let file = tier
                    .set_by
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                format!("{key}: set by {file}")
            })
        };
        if let Some(why) = vendor(&self.claude, Dialect::Claude) {
            return Some(why);
        }
        if system_codex && dialect == Dialect::Codex {
            return None;
        }
        vendor(&self.codex, Dialect::Codex)
    }
}

/// The prefix of a managed floor's key in the failure-policy map a run decides from
/// ([`with_floors`]; `dialect::effective_policy` reads it): `managed:*`,
/// `managed:claude`, `managed:toolGate`.
pub(crate) use crate::dialect::FLOOR_PREFIX;

/// The per-dialect failure policy `user` with the managed floors of `policy` folded
/// in under [`FLOOR_PREFIX`]: a floor closes a hook's policy whatever the hook, the
/// dialect setting or the vendor's default say.
pub(crate) fn with_floors(
    user: &BTreeMap<String, FailurePolicy>,
    policy: &ManagedPolicy,
) -> BTreeMap<String, FailurePolicy> {
    let mut out: BTreeMap<String, FailurePolicy> = user
        .iter()
        .filter(|(k, _)| !k.starts_with(FLOOR_PREFIX))
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    for (key, floor) in &policy.failure_floor {
        if *floor == FailurePolicy::Closed {
            out.insert(format!("{FLOOR_PREFIX}{key}"), FailurePolicy::Closed);
        }
    }
    out
}

/// Reads Claude Code's managed settings files (the first file that sets a key wins
/// within the managed tier; `allowManagedHooksOnly` true anywhere is honoured).
fn read_claude(dir: &Path) -> VendorTier {
    let mut tier = VendorTier::default();
    for path in claude_files(dir) {
        let bytes = match read_root_owned(&path) {
            Ok(b) => b,
            Err(e) if e.is_not_found() => continue,
            Err(e) => {
                tier.files.push(path.clone());
                tier.warnings
                    .push(format!("{} {e} — refused", path.display()));
                continue;
            }
        };
        tier.files.push(path.clone());
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            tier.warnings
                .push(format!("{} is not valid JSON — ignored", path.display()));
            continue;
        };
        if v.get("allowManagedHooksOnly") == Some(&serde_json::Value::Bool(true))
            && tier.set_by.is_none()
        {
            tier.allow_managed_hooks_only = true;
            tier.set_by = Some(path.clone());
        }
        if v.get("disableAllHooks") == Some(&serde_json::Value::Bool(true)) {
            tier.hooks_off = true;
        }
        if v.get("hooks")
            .is_some_and(|h| h.as_object().is_some_and(|m| !m.is_empty()))
        {
            tier.has_hooks = true;
        }
    }
    tier
}

/// Reads Codex's `requirements.toml`: `allow_managed_hooks_only`, `[hooks]`,
/// `[features] hooks`.
fn read_codex(path: &Path) -> VendorTier {
    let mut tier = VendorTier::default();
    let bytes = match read_root_owned(path) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => return tier,
        Err(e) => {
            tier.files.push(path.to_path_buf());
            tier.warnings
                .push(format!("{} {e} — refused", path.display()));
            return tier;
        }
    };
    tier.files.push(path.to_path_buf());
    let text = String::from_utf8_lossy(&bytes);
    let table = match toml::from_str::<toml::Table>(&text) {
        Ok(t) => t,
        Err(e) => {
            tier.warnings.push(format!(
                "{} is not valid TOML ({}) — ignored",
                path.display(),
                e.message()
            ));
            return tier;
        }
    };
    if table
        .get("allow_managed_hooks_only")
        .and_then(toml::Value::as_bool)
        == Some(true)
    {
        tier.allow_managed_hooks_only = true;
        tier.set_by = Some(path.to_path_buf());
    }
    if let Some(features) = table.get("features").and_then(toml::Value::as_table) {
        tier.hooks_off = ["hooks", "codex_hooks"]
            .iter()
            .any(|k| features.get(*k).and_then(toml::Value::as_bool) == Some(false));
    }
    tier.has_hooks = table
        .get("hooks")
        .and_then(toml::Value::as_table)
        .is_some_and(|h| {
            h.keys()
                .any(|k| k != "managed_dir" && k != "windows_managed_dir")
        });
    tier
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors_match_star_dialect_or_event() {
        let mut p = ManagedPolicy::default();
        assert_eq!(p.floor(Dialect::Claude, Some("toolGate")), None);
        p.failure_floor
            .insert("toolGate".into(), FailurePolicy::Closed);
        assert_eq!(
            p.floor(Dialect::Claude, Some("toolGate")),
            Some(FailurePolicy::Closed)
        );
        assert_eq!(p.floor(Dialect::Claude, Some("stop")), None);
        p.failure_floor.insert("*".into(), FailurePolicy::Closed);
        assert_eq!(p.floor(Dialect::Cursor, None), Some(FailurePolicy::Closed));
    }

    #[test]
    fn a_relative_redirect_is_refused() {
        let env = vec![(OsString::from(DIR_VAR), OsString::from("relative/dir"))];
        let (paths, warning) = ManagedPaths::from_env(&env);
        assert!(!paths.redirected);
        assert_eq!(paths.dir, PathBuf::from(SYSTEM_DIR));
        assert!(warning.is_some());
    }
}
