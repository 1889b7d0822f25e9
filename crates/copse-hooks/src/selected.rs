//! A selected hook: what the engine's selection hands the session to run. Its own
//! module so the session needs nothing of the engine's internals.

use std::sync::Arc;

use crate::dialect::{HookSpec, ParsedConfig};

/// A selected hook: its parsed config (kept alive) and its index in it.
#[derive(Debug, Clone)]
pub(crate) struct Selected {
    pub config: Arc<ParsedConfig>,
    pub index: usize,
}

impl Selected {
    pub fn hook(&self) -> &HookSpec {
        &self.config.hooks[self.index]
    }
}
