//! User settings: `$COPSE_DIR/settings.json`.
//!
//! `cursorHooksEnabled` turns external hooks on (off by default) and
//! `trustedWorkspaces` lists the workspace roots whose project hooks may run. A
//! corrupt file is an error the caller reports; the safe reading of it is the
//! defaults (hooks off, nothing trusted), never "on".

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The settings file's contents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// Whether external hooks run at all.
    #[serde(default)]
    pub cursor_hooks_enabled: bool,
    /// Workspace roots whose project hooks may run.
    #[serde(default)]
    pub trusted_workspaces: Vec<PathBuf>,
}

/// Why settings could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file exists but could not be read.
    #[error("failed to read settings {path}: {source}")]
    Read {
        /// The settings file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid settings JSON.
    #[error(
        "settings file {path} is corrupt ({source}); using safe defaults: hooks off, nothing trusted"
    )]
    Corrupt {
        /// The settings file.
        path: PathBuf,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
}

impl Settings {
    /// The settings file inside a copse data directory.
    pub fn path_in(copse_dir: &Path) -> PathBuf {
        copse_dir.join("settings.json")
    }

    /// Loads settings; a missing file is the defaults.
    pub fn load(path: &Path) -> Result<Settings, SettingsError> {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|source| SettingsError::Corrupt {
                path: path.to_path_buf(),
                source,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Settings::default()),
            Err(source) => Err(SettingsError::Read {
                path: path.to_path_buf(),
                source,
            }),
        }
    }
}
