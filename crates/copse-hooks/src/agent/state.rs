//! What a shim session keeps between calls.
//!
//! Without a daemon every agent hook call is its own `copse-hooks shim` process, so
//! what a session must remember — the environment overlays its `sessionStart` hooks
//! exported (per scope and root, filtered before they are stored),
//! queued follow-ups and the continuation budget of the current turn tree, the
//! one-time notices already shown — lives in
//! `$COPSE_DIR/shim/sessions/<agent>/<sha256 of the session id>.json`. Every
//! read-modify-write holds an exclusive lock on a sibling `.lock` file, and writes are
//! atomic (a temporary file renamed over the old one), so concurrent calls of one
//! session (parallel tool calls) never lose each other's updates.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Agent;
pub use crate::overlay::StoredOverlay;

/// A follow-up waiting for the agent's next stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The text.
    pub text: String,
    /// The turn tree it was produced in.
    pub epoch: u64,
}

/// One agent session's persisted state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionState {
    /// Environment overlays exported by `sessionStart` hooks, per (scope, root) and
    /// already filtered (by the one overlay filter, `overlay::refusal`): handed back
    /// to the engine as overlays, never as a hook's base environment.
    #[serde(default)]
    pub overlays: Vec<StoredOverlay>,
    /// The flat `env` map older versions kept (scope unknown): read only so it can be
    /// dropped with a warning, never written or used.
    #[serde(default, rename = "env", skip_serializing)]
    pub legacy_env: BTreeMap<String, String>,
    /// The current turn tree (a human prompt starts the next).
    #[serde(default)]
    pub epoch: u64,
    /// Continuations handed back in the current turn tree.
    #[serde(default)]
    pub used: u32,
    /// Follow-ups not yet handed back.
    #[serde(default)]
    pub pending: Vec<Pending>,
    /// Notices already shown.
    #[serde(default)]
    pub announced: Vec<String>,
    /// The files the agent's tool calls wrote in this session, for the guard (running
    /// one of them later is asked about).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub written: Vec<String>,
}

/// Why the state could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// An I/O error on the state or lock file.
    #[error("session state {path}: {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        cause: std::io::Error,
    },
}

/// The state file of one (agent, session id).
pub fn state_path(copse_dir: &Path, agent: Agent, session_id: &str) -> PathBuf {
    let key = crate::settings::sha256_hex(session_id.as_bytes());
    copse_dir
        .join("shim")
        .join("sessions")
        .join(agent.as_str())
        .join(format!("{}.json", &key[..32]))
}

/// Holds the session's lock while it exists.
#[derive(Debug)]
pub struct Locked {
    path: PathBuf,
    _lock: File,
    /// The state as read.
    pub state: SessionState,
}

impl Locked {
    /// Locks the state at `path` (exclusive, blocking) and reads it. A missing or
    /// unreadable state file is a fresh session (the state only ever adds context;
    /// losing it cannot loosen a gate).
    pub fn open(path: &Path) -> Result<Locked, StateError> {
        let io = |source| StateError::Io {
            path: path.to_path_buf(),
            cause: source,
        };
        let dir = path.parent().unwrap_or_else(|| Path::new("."));
        std::fs::create_dir_all(dir).map_err(io)?;
        let lock_path = path.with_extension("lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io)?;
        lock.lock().map_err(io)?;
        let state = std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Ok(Locked {
            path: path.to_path_buf(),
            _lock: lock,
            state,
        })
    }

    /// Writes the state atomically (the lock stays held until drop).
    pub fn save(&self) -> Result<(), StateError> {
        let io = |source| StateError::Io {
            path: self.path.clone(),
            cause: source,
        };
        let dir = self.path.parent().unwrap_or_else(|| Path::new("."));
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            self.path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            std::process::id()
        ));
        let text = serde_json::to_vec(&self.state).map_err(|e| io(std::io::Error::other(e)))?;
        let write = || -> std::io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(&text)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
    }
}
