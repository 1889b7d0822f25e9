//! Where a hook comes from: the format that declared it ([`Dialect`]) and whether its
//! config file needs trust ([`Scope`]). A leaf module, so events, outcomes, notices
//! and queues can name a hook's origin without depending on the dialect adapters.

use serde::{Deserialize, Serialize};

/// A hook format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// Cursor's `hooks.json`.
    Cursor,
    /// Claude Code's `settings.json` hooks.
    Claude,
    /// This project's native format.
    Copse,
    /// Gemini CLI's `settings.json` hooks and extension
    /// `hooks/hooks.json`.
    Gemini,
    /// OpenAI Codex CLI's `hooks.json` and `[hooks]` in `config.toml`.
    Codex,
    /// GitHub Copilot CLI's version-1 hook files (`.github/hooks/*.json`,
    /// `~/.copilot/hooks/*.json`).
    Copilot,
}

impl Dialect {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Cursor => "cursor",
            Dialect::Claude => "claude",
            Dialect::Copse => "copse",
            Dialect::Gemini => "gemini",
            Dialect::Codex => "codex",
            Dialect::Copilot => "copilot",
        }
    }

    /// Every dialect, in discovery order.
    pub const ALL: [Dialect; 6] = [
        Dialect::Cursor,
        Dialect::Claude,
        Dialect::Copse,
        Dialect::Gemini,
        Dialect::Codex,
        Dialect::Copilot,
    ];

    /// Parses a lowercase dialect name.
    pub fn from_name(name: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.as_str() == name)
    }
}

/// Where a config file lives, which decides whether it needs trust.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Machine-level policy (`/etc/copse-hooks/`, a vendor's managed tier), owned by
    /// root: always trusted, runs first, never disabled by user or project settings.
    Managed,
    /// In the user's home: trusted, the user authored it.
    User,
    /// In a workspace: runs only when the workspace is trusted.
    Project,
}

impl Scope {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Managed => "managed",
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// Whether a config's hooks may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TrustState {
    /// A user config, or a trusted project config whose content is as trusted.
    Trusted,
    /// A pinned project config whose content changed since it was trusted.
    Changed,
    /// A project config in a root that is not trusted.
    Untrusted,
}

impl TrustState {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            TrustState::Trusted => "trusted",
            TrustState::Changed => "changed",
            TrustState::Untrusted => "untrusted",
        }
    }
}
