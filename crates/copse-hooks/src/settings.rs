//! User settings: `$COPSE_DIR/settings.json`.
//!
//! `cursorHooksEnabled` turns external hooks on (off by default); `trustedWorkspaces`
//! lists the workspace roots whose project hooks may run. Trusting through
//! [`Settings::trust`] pins the content of every project hook config (a SHA-256 per
//! candidate file, `null` for one that did not exist), so a config that later changes
//! — another branch, a pull — stops running until the user trusts again. A plain path
//! string (written by hand) trusts the root without pinning.
//!
//! A file that is not JSON at all is an error the caller reports; the safe reading of
//! it is the defaults (hooks off, nothing trusted), never "on". A wrong-typed or
//! unknown key is a warning naming the key and the file ([`Settings::warnings`]) and
//! the rest applies; a key meant to tighten (`requireSandbox`) that cannot be read
//! counts as tightened. The file is read without blocking, must be a regular file and
//! at most 1 MiB. Writes are atomic (a temporary file in the same directory, fsynced,
//! then renamed over the old one), `0600` in a `0700` directory, and
//! [`Settings::update`] holds an exclusive lock (`settings.lock`) across read, change
//! and write so concurrent updates are never lost.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A trusted workspace root, optionally pinned to its configs' content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum TrustedWorkspace {
    /// A workspace root as a plain path: trusted, not pinned (its configs' current
    /// content runs).
    Path(PathBuf),
    /// A workspace root pinned to the SHA-256 of each project config (and script) as
    /// it was when trusted, as `copse-hooks trust` writes it: a config that changed
    /// since stops running until it is trusted again.
    Pinned {
        /// The workspace root.
        path: PathBuf,
        /// Config path → SHA-256 (hex) of its bytes, or `null` when it did not exist.
        configs: BTreeMap<PathBuf, Option<String>>,
        /// Script path → SHA-256 (hex) of every workspace file the project hooks run
        /// (`null` when it did not exist or was not a readable regular file); absent in
        /// entries written before scripts were pinned.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scripts: Option<BTreeMap<PathBuf, Option<String>>>,
    },
}

impl TrustedWorkspace {
    /// The root.
    pub fn path(&self) -> &Path {
        match self {
            TrustedWorkspace::Path(p) => p,
            TrustedWorkspace::Pinned { path, .. } => path,
        }
    }

    /// The pins, when pinned.
    pub fn pins(&self) -> Option<&BTreeMap<PathBuf, Option<String>>> {
        match self {
            TrustedWorkspace::Path(_) => None,
            TrustedWorkspace::Pinned { configs, .. } => Some(configs),
        }
    }

    /// The pinned scripts, when scripts were pinned.
    pub fn script_pins(&self) -> Option<&BTreeMap<PathBuf, Option<String>>> {
        match self {
            TrustedWorkspace::Path(_) => None,
            TrustedWorkspace::Pinned { scripts, .. } => scripts.as_ref(),
        }
    }
}

/// Audit-store retention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetentionSettings {
    /// Keep at most this many runs (the newest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_runs: Option<u64>,
    /// Keep runs at most this many days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_age_days: Option<u64>,
    /// Keep the store under this many bytes (default 256 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
}

/// What a gated event gets when a config that would have judged it cannot run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RefusedConfigs {
    /// Deny it, naming the file and the command that fixes it.
    #[default]
    Block,
    /// Run the other hooks as if the file were absent (a notice still says why).
    Skip,
}

/// The settings file's contents. Unknown keys are kept on rewrite.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    title = "copse-hooks settings",
    description = "$COPSE_DIR/settings.json (default ~/.copse/settings.json): whether hooks run, which workspaces are trusted, the sandbox and the audit store. Reference: docs/settings.md."
)]
#[non_exhaustive]
pub struct Settings {
    /// Whether external hooks run at all.
    #[serde(default)]
    pub cursor_hooks_enabled: bool,
    /// The built-in guard's mode (`enforce`, `observe`, `off`); absent: `enforce`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<crate::guard::GuardMode>,
    /// What a gated event gets when a config whose hooks would have judged it cannot
    /// run (changed since trusted, refused for owner or mode): `block` (absent: the
    /// default) or `skip` (the other hooks run as if the file were absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_configs: Option<RefusedConfigs>,
    /// Workspace roots whose project hooks may run.
    #[serde(default)]
    pub trusted_workspaces: Vec<TrustedWorkspace>,
    /// Fail a run (failure kind `sandbox`) when the kernel does not enforce the sandbox.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_sandbox: bool,
    /// Further paths sandboxed hooks may write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sandbox_writable_paths: Vec<PathBuf>,
    /// Unix sockets project hooks may use (by default they may create none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sandbox_allowed_sockets: Vec<PathBuf>,
    /// Whether hook runs are recorded in the audit store (default on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spine: Option<bool>,
    /// Audit-store retention.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention: Option<RetentionSettings>,
    /// Whether well-known secret token shapes are redacted from recorded streams
    /// (default on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redact_secrets: Option<bool>,
    /// Per-dialect failure policy, keyed by dialect name (`{"claude": "open"}`):
    /// restores that vendor's own fail-open policy. Absent dialects fail closed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failure_policy: BTreeMap<String, crate::outcome::FailurePolicy>,
    /// Whether stop follow-ups continue the agent automatically within the
    /// continuation budget (`"autoContinueFollowUps": true`); held for a human by
    /// default.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto_continue_follow_ups: bool,
    /// OpenTelemetry export of every gate (`{"endpoint": "http://collector:4318"}`);
    /// the standard `OTEL_*` variables win over it. Reference: docs/otel.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    // Kept as written: the engine reads it key by key (`otel::ExportConfig::resolve`),
    // so one bad key is a warning in doctor's OTLP section and the rest applies.
    #[schemars(with = "Option<crate::otel::OtelSettings>")]
    pub otel: Option<serde_json::Value>,
    /// Keys this version does not know, preserved.
    #[serde(flatten)]
    #[schemars(skip)]
    pub other: serde_json::Map<String, serde_json::Value>,
    /// What was wrong with the file (wrong-typed or unknown keys), one line each.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// Why settings could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// The file exists but could not be read.
    #[error("failed to read settings {path}: {cause}")]
    Read {
        /// The settings file.
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
    /// The settings lock could not be taken.
    #[error("failed to lock settings {path}: {cause}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
    /// The file exists but is not a regular file or is too large.
    #[error("settings file {path} {cause}; using safe defaults: hooks off, nothing trusted")]
    Unreadable {
        /// The settings file.
        path: PathBuf,
        /// Why.
        cause: crate::fsread::ReadError,
    },
    /// The file is owned by another user or writable by group or others: refused as
    /// ssh refuses such a key file, so nothing another user may have written applies.
    #[error(
        "settings file {path} {}; using safe defaults: hooks off, nothing trusted; fix it with `{}`",
        why.reason,
        why.fix
    )]
    Insecure {
        /// The settings file.
        path: PathBuf,
        /// Why, and the command that fixes it.
        why: crate::private::Insecure,
    },
    /// The file is not valid settings JSON.
    #[error(
        "settings file {path} is corrupt ({cause}); using safe defaults: hooks off, nothing trusted"
    )]
    Corrupt {
        /// The settings file.
        path: PathBuf,
        /// The parse error.
        cause: serde_json::Error,
    },
    /// The file could not be written.
    #[error("failed to write settings {path}: {cause}")]
    Write {
        /// The settings file.
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
}

/// The key an editor reads the settings file's JSON Schema from; allowed, not used.
pub(crate) const SCHEMA_KEY: &str = "$schema";

/// The JSON Schema of the settings file (draft-07), generated from [`Settings`]: what
/// `schemas/settings.schema.json` holds and what `lint` checks a settings file against
/// (unknown keys are flagged, as `additionalProperties: false`, though the engine keeps
/// and ignores them).
pub fn settings_schema() -> serde_json::Value {
    use serde_json::Value;
    let generator = schemars::generate::SchemaSettings::draft07()
        .with_transform(schemars::transform::RecursiveTransform(
            |s: &mut schemars::Schema| {
                // Rust integer widths mean nothing to a settings author.
                s.remove("format");
                if let Some(Value::String(d)) = s.get_mut("description") {
                    *d = crate::dialect::copse::unwrap_paragraphs(d);
                }
            },
        ))
        .into_generator();
    let schema = generator.into_root_schema_for::<Settings>().to_value();
    let Value::Object(mut rest) = schema else {
        return schema;
    };
    if let Some(Value::Object(props)) = rest.get_mut("properties") {
        props.insert(
            SCHEMA_KEY.to_string(),
            serde_json::json!({
                "description": "The JSON Schema editors check this file against; copse-hooks ignores it.",
                "type": "string"
            }),
        );
    }
    rest.insert("additionalProperties".into(), Value::Bool(false));
    if let Some(Value::Object(defs)) = rest.get_mut("definitions")
        && let Some(Value::Object(retention)) = defs.get_mut("RetentionSettings")
    {
        retention.insert("additionalProperties".into(), Value::Bool(false));
    }
    if let Some(Value::Object(defs)) = rest.get_mut("definitions")
        && let Some(Value::Object(otel)) = defs.get_mut("OtelSettings")
    {
        otel.insert("additionalProperties".into(), Value::Bool(false));
    }
    // The identifying keys first, as schema files conventionally start.
    let mut ordered = serde_json::Map::new();
    for key in ["$schema", "title", "description"] {
        if let Some(v) = rest.remove(key) {
            ordered.insert(key.to_string(), v);
        }
    }
    ordered.extend(rest);
    Value::Object(ordered)
}

/// [`settings_schema`] as the committed file's text: pretty-printed, with a final
/// newline.
pub fn settings_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&settings_schema()).unwrap_or_default();
    text.push('\n');
    text
}

/// The project config files a workspace root may hold, in every dialect.
pub fn project_config_candidates(root: &Path) -> Vec<PathBuf> {
    vec![
        root.join(".cursor").join("hooks.json"),
        root.join(".claude").join("settings.json"),
        root.join(".claude").join("settings.local.json"),
        root.join(".copse").join("hooks.json"),
        root.join(".gemini").join("settings.json"),
        root.join(".codex").join("hooks.json"),
        root.join(".codex").join("config.toml"),
    ]
}

/// SHA-256 (hex) of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The pin of one config file: its hash, or `None` when it does not exist. The file
/// must be a regular file of at most 1 MiB.
pub fn pin_of(path: &Path) -> Result<Option<String>, std::io::Error> {
    match crate::fsread::read_optional(path, crate::fsread::MAX_CONFIG_BYTES) {
        Ok(bytes) => Ok(bytes.map(|b| sha256_hex(&b))),
        Err(crate::fsread::ReadError::Io(e)) => Err(e),
        Err(e) => Err(std::io::Error::other(format!("{}: {e}", path.display()))),
    }
}

/// Parses settings leniently: every key is read on its own, so one wrong-typed key is
/// a warning and the rest applies.
fn parse_lenient(path: &Path, bytes: &[u8]) -> Result<Settings, SettingsError> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|source| SettingsError::Corrupt {
            path: path.to_path_buf(),
            cause: source,
        })?;
    let serde_json::Value::Object(map) = value else {
        return Err(SettingsError::Corrupt {
            path: path.to_path_buf(),
            cause: <serde_json::Error as serde::de::Error>::custom(
                "the top level is not a JSON object",
            ),
        });
    };
    let mut warnings = Vec::new();
    let mut good = serde_json::Map::new();
    let mut require_unreadable = false;
    for (key, value) in map {
        // Editors read `$schema` (schemas/settings.schema.json); copse-hooks keeps it
        // on rewrite (with the other keys it does not use) and says nothing about it.
        if key == SCHEMA_KEY {
            good.insert(key, value);
            continue;
        }
        let mut one = serde_json::Map::new();
        one.insert(key.clone(), value);
        let probe = serde_json::Value::Object(one);
        match serde_json::from_value::<Settings>(probe.clone()) {
            Ok(parsed) => {
                if parsed.other.contains_key(&key) {
                    warnings.push(format!(
                        "unknown settings key \"{key}\" in {} (kept, not used)",
                        path.display()
                    ));
                }
                if let serde_json::Value::Object(m) = probe {
                    good.extend(m);
                }
            }
            Err(e) => {
                if key == "requireSandbox" {
                    require_unreadable = true;
                    warnings.push(format!(
                        "settings key \"{key}\" in {} is not valid ({e}); treated as true",
                        path.display()
                    ));
                } else {
                    warnings.push(format!(
                        "settings key \"{key}\" in {} is not valid ({e}); ignored",
                        path.display()
                    ));
                }
            }
        }
    }
    let mut settings: Settings =
        serde_json::from_value(serde_json::Value::Object(good)).map_err(|source| {
            SettingsError::Corrupt {
                path: path.to_path_buf(),
                cause: source,
            }
        })?;
    if require_unreadable {
        settings.require_sandbox = true;
    }
    settings.warnings = warnings;
    Ok(settings)
}

impl Settings {
    /// The settings file inside a copse data directory.
    pub fn path_in(copse_dir: &Path) -> PathBuf {
        copse_dir.join("settings.json")
    }

    /// Loads settings; a missing file is the defaults. Wrong-typed and unknown keys
    /// are in [`Settings::warnings`].
    ///
    /// Loading also re-tightens the directory holding the file (`$COPSE_DIR`) and the
    /// audit store in it to the user's alone, every start: a hook that widened a mode
    /// gains nothing lasting. Each tightening is a line in [`Settings::warnings`].
    /// A file owned by another user or writable by group or others is
    /// [`SettingsError::Insecure`]: the caller uses the safe defaults.
    pub fn load(path: &Path) -> Result<Settings, SettingsError> {
        let tightened = path
            .parent()
            .map(crate::private::retighten)
            .unwrap_or_default();
        let read = match crate::fsread::read_config(path, crate::fsread::MAX_CONFIG_BYTES) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        };
        let mut loaded = match read {
            Ok(Some(bytes)) => parse_lenient(path, &bytes),
            Ok(None) => Ok(Settings::default()),
            Err(crate::fsread::ReadError::Insecure(why)) => Err(SettingsError::Insecure {
                path: path.to_path_buf(),
                why,
            }),
            Err(crate::fsread::ReadError::Io(source)) => Err(SettingsError::Read {
                path: path.to_path_buf(),
                cause: source,
            }),
            Err(source) => Err(SettingsError::Unreadable {
                path: path.to_path_buf(),
                cause: source,
            }),
        };
        if let Ok(settings) = &mut loaded {
            settings.warnings.splice(0..0, tightened);
        }
        loaded
    }

    /// Reads, changes and writes the settings under an exclusive lock
    /// (`settings.lock` beside the file), so concurrent updates are never lost.
    /// `change` gets the current settings (or the error reading them, to recover
    /// from) and returns whether to write, and a result. Returns the result and the
    /// notices (modes tightened).
    pub fn update<R>(
        path: &Path,
        change: impl FnOnce(
            Result<Settings, SettingsError>,
        ) -> Result<(Option<Settings>, R), SettingsError>,
    ) -> Result<(R, Vec<String>), SettingsError> {
        let dir = path.parent().unwrap_or_else(|| Path::new("."));
        let mut notices = Vec::new();
        let lock_path = dir.join("settings.lock");
        let lock_err = |source| SettingsError::Lock {
            path: lock_path.clone(),
            cause: source,
        };
        notices.extend(crate::private::ensure_dir(dir).map_err(lock_err)?);
        let lock = {
            use std::os::unix::fs::OpenOptionsExt as _;
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(crate::private::FILE_MODE)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(&lock_path)
                .map_err(lock_err)?
        };
        lock.lock().map_err(lock_err)?;
        // A file another user could have written is refused, not silently tightened:
        // tightening would adopt whatever they wrote.
        let insecure = std::fs::metadata(path)
            .ok()
            .and_then(|m| crate::private::insecurity(path, &m));
        if insecure.is_none()
            && let Ok(Some(n)) = crate::private::tighten_file(path)
        {
            notices.push(n);
        }
        let (new, result) = change(Settings::load(path))?;
        if let Some(new) = new {
            new.save(path)?;
        }
        // Dropping the file releases the lock.
        drop(lock);
        Ok((result, notices))
    }

    /// Writes the settings atomically: a temporary file in the same directory,
    /// fsynced, renamed over the old file.
    pub fn save(&self, path: &Path) -> Result<(), SettingsError> {
        let err = |source| SettingsError::Write {
            path: path.to_path_buf(),
            cause: source,
        };
        let dir = path.parent().unwrap_or_else(|| Path::new("."));
        crate::private::ensure_dir(dir).map_err(err)?;
        let mut text =
            serde_json::to_string_pretty(self).map_err(|e| err(std::io::Error::other(e)))?;
        text.push('\n');
        let tmp = dir.join(format!(
            ".settings.json.{}.{}.tmp",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        let write = || -> std::io::Result<()> {
            use std::os::unix::fs::OpenOptionsExt as _;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(crate::private::FILE_MODE)
                .open(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)?;
            if let Ok(d) = std::fs::File::open(dir) {
                // Persist the rename itself; failure here only weakens durability.
                let _ = d.sync_all();
            }
            Ok(())
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            err(e)
        })
    }

    /// Trusts `root`, pinning every project config candidate's current content.
    /// Replaces an earlier entry for the same root. Returns the pins.
    pub fn trust(
        &mut self,
        root: &Path,
    ) -> Result<BTreeMap<PathBuf, Option<String>>, std::io::Error> {
        let mut configs = BTreeMap::new();
        for candidate in project_config_candidates(root) {
            let pin = pin_of(&candidate)?;
            configs.insert(candidate, pin);
        }
        self.untrust(root);
        self.trusted_workspaces.push(TrustedWorkspace::Pinned {
            path: root.to_path_buf(),
            configs: configs.clone(),
            scripts: None,
        });
        Ok(configs)
    }

    /// Trusts `root` with pins computed elsewhere (see `Engine::trust_snapshot`, which
    /// hashes the very bytes it parses). Replaces an earlier entry for the same root.
    pub fn trust_pinned(
        &mut self,
        root: &Path,
        configs: BTreeMap<PathBuf, Option<String>>,
        scripts: BTreeMap<PathBuf, Option<String>>,
    ) {
        self.untrust(root);
        self.trusted_workspaces.push(TrustedWorkspace::Pinned {
            path: root.to_path_buf(),
            configs,
            scripts: Some(scripts),
        });
    }

    /// Removes every trust entry for `root`. Returns whether one existed.
    pub fn untrust(&mut self, root: &Path) -> bool {
        let before = self.trusted_workspaces.len();
        self.trusted_workspaces.retain(|t| t.path() != root);
        before != self.trusted_workspaces.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_unknown_keys_and_both_trust_forms() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(
            &path,
            r#"{"cursorHooksEnabled": true, "trustedWorkspaces": ["/a", {"path": "/b", "configs": {"/b/.cursor/hooks.json": null}}], "theme": "dark"}"#,
        )
        .unwrap();
        let mut s = Settings::load(&path).unwrap();
        assert!(s.cursor_hooks_enabled);
        assert_eq!(s.trusted_workspaces[0], TrustedWorkspace::Path("/a".into()));
        assert!(s.trusted_workspaces[1].pins().is_some());
        s.cursor_hooks_enabled = false;
        s.save(&path).unwrap();
        let again = Settings::load(&path).unwrap();
        assert_eq!(again, s);
        assert_eq!(again.other["theme"], "dark");
    }

    #[test]
    fn corrupt_is_an_error_missing_is_default() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        assert_eq!(Settings::load(&path).unwrap(), Settings::default());
        std::fs::write(&path, "{not json").unwrap();
        let err = Settings::load(&path).unwrap_err();
        assert!(err.to_string().contains("corrupt"));
        assert!(err.to_string().contains(&path.display().to_string()));
    }

    #[test]
    fn trust_pins_present_and_absent_configs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".cursor")).unwrap();
        std::fs::write(root.join(".cursor/hooks.json"), "{}").unwrap();
        let mut s = Settings::default();
        let pins = s.trust(root).unwrap();
        assert_eq!(
            pins[&root.join(".cursor/hooks.json")],
            Some(sha256_hex(b"{}"))
        );
        assert_eq!(pins[&root.join(".claude/settings.json")], None);
        s.trust(root).unwrap();
        assert_eq!(s.trusted_workspaces.len(), 1, "re-trusting replaces");
        assert!(s.untrust(root));
        assert!(s.trusted_workspaces.is_empty());
    }
}
