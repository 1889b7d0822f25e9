//! A detached run the dispatcher dropped: the record the session keeps and the audit
//! store writes. Its own module so the audit store's records need not reach into the
//! session.

use std::path::PathBuf;
use std::time::SystemTime;

use serde::Serialize;

use crate::event::CanonicalEvent;
use crate::scope::{Dialect, Scope};

/// A detached run that was dropped because the dispatcher's queue was full.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct DroppedRun {
    /// The wire event.
    pub event: String,
    /// The canonical event.
    pub canonical: CanonicalEvent,
    /// The hook's dialect.
    pub dialect: Dialect,
    /// The hook's command.
    pub command: String,
    /// The config file.
    pub source: PathBuf,
    /// User or project.
    pub scope: Scope,
    /// When it was dropped.
    #[serde(skip)]
    pub at: SystemTime,
}

impl DroppedRun {
    /// A drop of the hook `command` (declared in `source`) for `event`, now.
    pub fn new(
        event: impl Into<String>,
        canonical: CanonicalEvent,
        dialect: Dialect,
        command: impl Into<String>,
        source: impl Into<PathBuf>,
        scope: Scope,
    ) -> Self {
        DroppedRun {
            event: event.into(),
            canonical,
            dialect,
            command: command.into(),
            source: source.into(),
            scope,
            at: SystemTime::now(),
        }
    }
}
