//! The vendors' published hook-event lists, with their provenance.
//!
//! Each dialect records the events its vendor publishes (in the dialect module,
//! `PUBLISHED_EVENTS`) and, for each one it does not wire, a one-line reason
//! (`unsupported_reason`). The drift tests hold the two together: every published
//! event is wired or explicitly unsupported, and the recorded lists agree with the
//! upstream schemas kept outside this repository. `list` and `lint` use the lists to
//! tell "recognised, unsupported" from a typo.

use crate::dialect::{Dialect, claude, cursor};
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

/// Claude Code: the 31 events of the SchemaStore settings schema and hooks reference.
pub const CLAUDE: Catalogue = Catalogue {
    dialect: Dialect::Claude,
    published: &claude::PUBLISHED_EVENTS,
    provenance: Provenance {
        source: "SchemaStore src/schemas/json/claude-code-settings.json ($id https://json.schemastore.org/claude-code-settings.json) and the Claude Code hooks reference",
        version: "hooks reference mirror commit 3f1ef7c2 (file last changed e7cbe5e9, 2026-08-22); schema as saved in shared/vendor-schemas",
        date: "2026-12-02",
        note: "the schema and the reference list the same 31 events",
    },
    canonical_for: claude::canonical_for,
    unsupported_reason: claude::unsupported_reason,
};

/// The catalogue of a dialect with a published vendor list.
pub fn catalogue(dialect: Dialect) -> Option<&'static Catalogue> {
    match dialect {
        Dialect::Cursor => Some(&CURSOR),
        Dialect::Claude => Some(&CLAUDE),
        Dialect::Copse => None,
    }
}

/// Whether an event name is published by the vendor (wired or not).
pub fn is_published(dialect: Dialect, event: &str) -> bool {
    catalogue(dialect).is_some_and(|c| c.published.contains(&event))
}
