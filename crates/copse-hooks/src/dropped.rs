//! A detached run the dispatcher dropped: the record the session keeps and the audit
//! store writes. Its own module so the audit store's records need not reach into the
//! session.

use std::path::PathBuf;
use std::time::SystemTime;

use serde::Serialize;

use crate::dialect::{Dialect, Scope};
use crate::event::CanonicalEvent;

/// A detached run that was dropped because the dispatcher's queue was full.
#[derive(Debug, Clone, Serialize)]
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
