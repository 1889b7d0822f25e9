//! The vendors' published hook-event lists, with their provenance.
//!
//! Each dialect records the events its vendor publishes (in the dialect module,
//! `PUBLISHED_EVENTS`) and, for each one it does not wire, a one-line reason
//! (`unsupported_reason`). The drift tests hold the two together: every published
//! event is wired or explicitly unsupported, and the recorded lists agree with the
//! upstream schemas kept outside this repository. `list` and `lint` use the lists to
//! tell "recognised, unsupported" from a typo.

use crate::dialect::{Dialect, claude, codex, copilot, cursor, gemini};
use crate::event::CanonicalEvent;

/// Where a recorded event list comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Provenance {
    /// The document or schema the list was taken from.
    pub source: &'static str,
    /// Its version, tag or commit.
    pub version: &'static str,
    /// When it was read.
    pub date: &'static str,
    /// What a reader should know about it.
    pub note: &'static str,
}

/// A vendor's event catalogue as this project records it.
#[derive(Debug, Clone, Copy)]
pub struct Catalogue {
    /// The dialect.
    pub dialect: Dialect,
    /// Every event the vendor publishes.
    pub published: &'static [&'static str],
    /// Where the list comes from.
    pub provenance: Provenance,
    /// The canonical event a published event is wired to.
    pub canonical_for: fn(&str) -> Option<CanonicalEvent>,
    /// Why a published event is not wired (`None` for wired events).
    pub unsupported_reason: fn(&str) -> Option<&'static str>,
}

/// Cursor: the 21 events of the official hooks documentation.
pub const CURSOR: Catalogue = Catalogue {
    dialect: Dialect::Cursor,
    published: &cursor::PUBLISHED_EVENTS,
    provenance: Provenance {
        source: "https://cursor.com/docs/hooks (official hooks documentation, \"Hook events\")",
        version: "the edition fetched 2026-08-24 (front matter source_url prod.cursor.com/docs/hooks)",
        date: "2026-12-02",
        note: "the community cursor-hooks JSON schema (npm cursor-hooks v1.1.6, commit cb2bda1e) lists only the 6 events of Cursor 1.7; the documentation is authoritative",
    },
    canonical_for: cursor::canonical_for,
    unsupported_reason: cursor::unsupported_reason,
};

/// Claude Code: the 31 events of the SchemaStore settings schema and hooks reference,
/// and the 2 model-switch events of v2.1.251.
pub const CLAUDE: Catalogue = Catalogue {
    dialect: Dialect::Claude,
    published: &claude::PUBLISHED_EVENTS,
    provenance: Provenance {
        source: "SchemaStore src/schemas/json/claude-code-settings.json ($id https://json.schemastore.org/claude-code-settings.json) and the Claude Code hooks reference",
        version: "hooks reference mirror commit 3f1ef7c2 (file last changed e7cbe5e9, 2026-08-22); schema as saved in shared/vendor-schemas",
        date: "2026-12-02",
        note: "the schema and the reference list the same 31 events; PreModelSwitch and PostModelSwitch (Claude Code v2.1.251, published 2026-08-28; read 2026-12-03 in the changelog summary at https://dev.to/ahab_indieseek/claude-code-21251-model-switch-cache-checklist-4bij) are newer than the saved schema",
    },
    canonical_for: claude::canonical_for,
    unsupported_reason: claude::unsupported_reason,
};

/// Gemini CLI: the 11 events of its `HookEventName` enum.
pub const GEMINI: Catalogue = Catalogue {
    dialect: Dialect::Gemini,
    published: &gemini::PUBLISHED_EVENTS,
    provenance: Provenance {
        source: "google-gemini/gemini-cli packages/core/src/hooks/types.ts (enum HookEventName, HOOKS_CONFIG_FIELDS) and docs/hooks/reference.md (https://geminicli.com/docs/hooks/reference); tool names from packages/core/src/tools/tool-names.ts (ALL_BUILTIN_TOOL_NAMES, TOOL_LEGACY_ALIASES)",
        version: "main as stored 2026-12-02 (tool-names.ts at 00068e9c; the shared contract snapshot at 5411f113, 2026-08-21); Gemini CLI 0.61.0 observed accepting the same 11 events",
        date: "2026-12-02",
        note: "the enum, the reference and the 0.61.0 binary agree on 11 events; grep_search replaced search_file_content (kept as a legacy alias upstream)",
    },
    canonical_for: gemini::canonical_for,
    unsupported_reason: gemini::unsupported_reason,
};

/// OpenAI Codex CLI: the 12 events of its `HookEventName`.
pub const CODEX: Catalogue = Catalogue {
    dialect: Dialect::Codex,
    published: &codex::PUBLISHED_EVENTS,
    provenance: Provenance {
        source: "openai/codex codex-rs/protocol HookEventName (as matched in codex-rs/hooks/src/events/common.rs matcher_pattern_for_event and engine/dispatcher.rs), codex-rs/config/src/hook_config.rs, and https://developers.openai.com/codex/hooks",
        version: "codex-rs main as stored 2026-12-02 (events/common.rs at 0b9770ed, engine/output_parser.rs at 0ea83813, engine/discovery.rs at 0082977c); Codex CLI 0.171.0 observed accepting the same 12 events",
        date: "2026-12-02",
        note: "older codex-rs (hook_config.rs at 012d0aa0) knew only 8 events; SessionEnd, SubagentStart, SubagentStop and Interrupt came later. StopFailure exists in the source tree but not in the 0.171.0 event list",
    },
    canonical_for: codex::canonical_for,
    unsupported_reason: codex::unsupported_reason,
};

/// GitHub Copilot CLI: the 14 events of the GitHub hooks reference and
/// `preMcpToolCall` of the 1.0.102 settings schema.
pub const COPILOT: Catalogue = Catalogue {
    dialect: Dialect::Copilot,
    published: &copilot::PUBLISHED_EVENTS,
    provenance: Provenance {
        source: "GitHub Docs \"GitHub Copilot hooks reference\" (https://docs.github.com/en/copilot/reference/hooks-reference; github/docs content/copilot/reference/hooks-reference.md) and the settings schema inside @github/copilot 1.0.102 (hooks.* keys)",
        version: "github/docs hooks-reference.md at 05da5bc3; @github/copilot-linux-x64 1.0.102 (build 638eca2df17)",
        date: "2026-12-03",
        note: "the reference lists 14 events; the 1.0.102 binary's settings schema also has preMcpToolCall (undocumented). PascalCase names select the VS Code-compatible payloads",
    },
    canonical_for: copilot::canonical_for,
    unsupported_reason: copilot::unsupported_reason,
};

/// The catalogue of a dialect with a published vendor list.
pub fn catalogue(dialect: Dialect) -> Option<&'static Catalogue> {
    match dialect {
        Dialect::Cursor => Some(&CURSOR),
        Dialect::Claude => Some(&CLAUDE),
        Dialect::Copse => None,
        Dialect::Gemini => Some(&GEMINI),
        Dialect::Codex => Some(&CODEX),
        Dialect::Copilot => Some(&COPILOT),
    }
}

/// Whether an event name is published by the vendor (wired or not).
pub fn is_published(dialect: Dialect, event: &str) -> bool {
    catalogue(dialect).is_some_and(|c| c.published.contains(&event))
}
