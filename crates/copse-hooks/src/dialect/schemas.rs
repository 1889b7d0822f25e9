//! Each vendor dialect's config schema and known keys, gathered from the serde
//! structs its parser reads: the published schemas (`schemas/dialects/`) and the keys
//! lint accepts without an "unknown key" warning.
//!
//! This sits above both [`spec`](super::spec) (the shared lenient vocabulary and the
//! schema generator) and the vendors' `parse` modules (which use `spec`), so neither
//! reaches back up to the other.

use std::sync::OnceLock;

use serde_json::Value;

use super::spec::{declared_keys, vendor_schema};
use super::{claude, codex, copilot, cursor, gemini};
use crate::dialect::Dialect;

/// Every vendor config schema: `(file name under schemas/dialects/, schema)`.
pub fn vendor_schemas() -> Vec<(&'static str, Value)> {
    vec![
        (
            "claude-settings-hooks.schema.json",
            vendor_schema::<claude::parse::SettingsFile>(),
        ),
        (
            "cursor-hooks.schema.json",
            vendor_schema::<cursor::parse::HooksFile>(),
        ),
        (
            "gemini-settings-hooks.schema.json",
            vendor_schema::<gemini::parse::SettingsFile>(),
        ),
        (
            "codex-hooks.schema.json",
            vendor_schema::<codex::parse::HooksFile>(),
        ),
        (
            "copilot-hooks.schema.json",
            vendor_schema::<copilot::parse::HooksFile>(),
        ),
    ]
}

/// The keys a vendor dialect's hook entries declare, from the same structs the
/// parser reads (Cursor: an entry; Claude: a handler; Gemini and Codex: a group or
/// a handler, which lint checks together). Copse has its own list.
pub fn entry_keys(dialect: Dialect) -> &'static [String] {
    static KEYS: OnceLock<[Vec<String>; 5]> = OnceLock::new();
    let keys = KEYS.get_or_init(|| {
        let union = |mut a: Vec<String>, b: Vec<String>| {
            for k in b {
                if !a.contains(&k) {
                    a.push(k);
                }
            }
            a
        };
        [
            declared_keys::<cursor::parse::Entry>(),
            declared_keys::<claude::parse::Handler>(),
            union(
                declared_keys::<gemini::parse::Definition>(),
                declared_keys::<gemini::parse::Handler>(),
            ),
            union(
                declared_keys::<codex::parse::Group>(),
                declared_keys::<codex::parse::Handler>(),
            ),
            declared_keys::<copilot::parse::Entry>(),
        ]
    });
    match dialect {
        Dialect::Cursor => &keys[0],
        Dialect::Claude => &keys[1],
        Dialect::Gemini => &keys[2],
        Dialect::Codex => &keys[3],
        Dialect::Copilot => &keys[4],
        Dialect::Copse => &[],
    }
}

/// The keys of a Claude matcher group (`matcher`, `hooks`), from the parser's struct;
/// empty for the other dialects (their group keys are in [`entry_keys`]).
pub fn group_keys(dialect: Dialect) -> &'static [String] {
    static KEYS: OnceLock<Vec<String>> = OnceLock::new();
    match dialect {
        Dialect::Claude => KEYS.get_or_init(declared_keys::<claude::parse::Group>),
        _ => &[],
    }
}
