//! The packet: the exact stdin bytes a hook receives, marshalled by its dialect.

use super::RunInput;
use crate::dialect::{Adapter, HookSpec};

/// The stdin bytes for `hook` (field order is the dialect's contract).
pub(crate) fn packet(adapter: &dyn Adapter, hook: &HookSpec, input: &RunInput<'_>) -> Vec<u8> {
    let value = adapter.marshal(hook, input.event, &input.ctx);
    // Serialising a `Value` cannot fail (all keys are strings).
    serde_json::to_vec(&value).unwrap_or_default()
}
