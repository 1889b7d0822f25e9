//! The OpenAI Codex CLI dialect: Claude-shaped hooks in `hooks.json` or in the
//! `[hooks]` tables of `config.toml`, next to each config layer — system
//! (`/etc/codex/`), user (`$CODEX_HOME`, default `~/.codex/`) and project
//! (`<root>/.codex/`) — plus installed plugins'
//! `$CODEX_HOME/plugins/cache/<marketplace>/<plugin>/<version>/hooks/hooks.json`.
//!
//! Codex reuses Claude Code's shape (`{matcher?, hooks: [{type: "command", command,
//! timeout?}]}`, timeouts in seconds, default 600) and Claude's matcher rule (only
//! letters, digits, `_` and `|` is a set of exact names, anything else an unanchored
//! regex) — this module calls the Claude dialect for that rule and for the
//! Claude-shaped tool input, marked `CLAUDE-REUSE`. It diverges where Codex does:
//! its own 12 events, `turn_id`/`model`/`permission_mode` in the payloads, its tool
//! names (`Bash`, `apply_patch` also matched as `Write`/`Edit`, `mcp__s__t`), and a
//! strict answer parser: anything outside Codex's own output schema (a top-level
//! `"decision": "deny"`, `permissionDecision: "ask"`, `continue: false` on
//! PreToolUse, …) is a failed hook, which Codex lets through (fail-open) and the
//! host policy here denies (fail-closed) on gated events, unless the settings say
//! `"failurePolicy": {"codex": "open"}`. (It does not use
//! `claude::interpret_run`: that honours a JSON answer whatever the exit code and
//! accepts Claude's wider schema, where Codex fails the hook.)
//!
//! The files by concern: [`parse`] (JSON and TOML), [`marshal`], [`interpret`].

pub mod interpret;
pub mod marshal;
pub mod parse;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::{
    Adapter, Context, Dialect, HookSpec, Interpretation, ParsedConfig, ProcessResult, Scope,
};
use crate::event::{CanonicalEvent, EventPayload, tool};

/// Codex's default command-hook timeout (600 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The cap Codex puts on SessionEnd and Interrupt hooks (shutdown-bounded).
pub const SHUTDOWN_TIMEOUT_CAP: Duration = Duration::from_secs(3);

/// The 12 hook events Codex publishes (`HookEventName` in codex-rs `protocol`, and
/// the events Codex 0.171.0 accepts), in that release's order. Provenance in
/// [`crate::vendor::CODEX`].
pub const PUBLISHED_EVENTS: [&str; 12] = [
    "SessionStart",
    "SubagentStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "SubagentStop",
    "Stop",
    "Interrupt",
];

/// The canonical event a Codex wire event is wired to.
pub fn canonical_for(event: &str) -> Option<CanonicalEvent> {
    match event {
        "PreToolUse" => Some(CanonicalEvent::ToolGate),
        "PostToolUse" => Some(CanonicalEvent::AfterToolUse),
        "UserPromptSubmit" => Some(CanonicalEvent::BeforeSubmitPrompt),
        // Interrupt is the canonical stop of an aborted turn; Stop the others.
        "Stop" | "Interrupt" => Some(CanonicalEvent::Stop),
        "SubagentStart" => Some(CanonicalEvent::SubagentStart),
        "SubagentStop" => Some(CanonicalEvent::SubagentStop),
        "SessionStart" => Some(CanonicalEvent::SessionStart),
        "SessionEnd" => Some(CanonicalEvent::SessionEnd),
        "PreCompact" => Some(CanonicalEvent::PreCompact),
        "PermissionRequest" => Some(CanonicalEvent::PermissionRequest),
        _ => None,
    }
}

/// Why a published Codex event is not wired.
pub fn unsupported_reason(event: &str) -> Option<&'static str> {
    match event {
        "PostCompact" => Some("no canonical event after compaction yet"),
        _ => None,
    }
}

/// Whether `event` tests its group's matcher (`matcher_pattern_for_event`).
pub fn uses_matcher(event: &str) -> bool {
    !matches!(event, "UserPromptSubmit" | "Stop" | "Interrupt")
}

/// Whether an event is turn-scoped (its stdin carries `turn_id`).
pub fn turn_scoped(event: &str) -> bool {
    matches!(
        event,
        "PreToolUse"
            | "PermissionRequest"
            | "PostToolUse"
            | "PreCompact"
            | "PostCompact"
            | "UserPromptSubmit"
            | "SubagentStop"
            | "Stop"
            | "Interrupt"
    )
}

/// The snake_case label Codex uses in `[hooks.state]` keys.
pub fn state_label(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Codex's hook tool name for a canonical tool id and the extra names its matchers
/// also test (`apply_patch` answers to `Write` and `Edit`). `None`: Codex has no such
/// tool (it reads and searches through the shell).
pub fn tool_name(tool_id: &str) -> Option<(String, &'static [&'static str])> {
    if tool::is_mcp(tool_id) {
        return Some((tool_id.to_string(), &[]));
    }
    match tool_id {
        tool::RUN_SHELL => Some(("Bash".to_string(), &[])),
        tool::WRITE_FILE | tool::STR_REPLACE => {
            Some(("apply_patch".to_string(), &["Write", "Edit"]))
        }
        _ => None,
    }
}

/// The matcher subjects of `wire_event` for `event`: `None` when the hook does not
/// apply, `Some(vec![])` when the matcher is ignored.
pub fn subjects(wire_event: &str, event: &EventPayload) -> Option<Vec<String>> {
    let names = |id: &str| -> Option<Vec<String>> {
        let (name, aliases) = tool_name(id)?;
        Some(
            std::iter::once(name)
                .chain(aliases.iter().map(|a| (*a).to_string()))
                .collect(),
        )
    };
    let subjects = match (wire_event, event) {
        ("PreToolUse", EventPayload::ToolGate(call)) => names(&call.tool)?,
        ("PostToolUse", EventPayload::AfterToolUse(r)) => names(&r.tool)?,
        ("PermissionRequest", EventPayload::PermissionRequest(call)) => names(&call.tool)?,
        ("UserPromptSubmit", EventPayload::BeforeSubmitPrompt { .. }) => Vec::new(),
        ("Stop", EventPayload::Stop { status }) if status != "aborted" => Vec::new(),
        ("Interrupt", EventPayload::Stop { status }) if status == "aborted" => Vec::new(),
        ("SubagentStart", EventPayload::SubagentStart { subagent_type })
        | ("SubagentStop", EventPayload::SubagentStop { subagent_type, .. }) => {
            vec![subagent_type.clone()]
        }
        ("SessionStart", EventPayload::SessionStart { first_turn }) => {
            vec![if *first_turn { "startup" } else { "resume" }.to_string()]
        }
        // CLAUDE-REUSE: Codex names session-end reasons as Claude Code does.
        ("SessionEnd", EventPayload::SessionEnd { reason, .. }) => {
            vec![crate::dialect::claude::session_end_reason(reason).to_string()]
        }
        ("PreCompact", EventPayload::PreCompact(c)) => vec![c.trigger.clone()],
        _ => return None,
    };
    Some(subjects)
}

/// The plugin root of a plugin's `hooks/hooks.json` (`…/plugins/cache/…/hooks/hooks.json`).
pub fn plugin_root(source: &Path) -> Option<PathBuf> {
    let under_cache = source
        .ancestors()
        .any(|a| a.file_name().is_some_and(|n| n == "cache"))
        && source
            .ancestors()
            .any(|a| a.file_name().is_some_and(|n| n == "plugins"));
    let hooks_dir = source.parent()?;
    (under_cache && hooks_dir.file_name().is_some_and(|n| n == "hooks"))
        .then(|| hooks_dir.parent().map(Path::to_path_buf))
        .flatten()
}

/// The Codex adapter.
#[derive(Debug, Default, Clone, Copy)]
pub struct Codex;

impl Adapter for Codex {
    fn dialect(&self) -> Dialect {
        Dialect::Codex
    }

    fn parse(&self, text: &str, source: &Path, scope: Scope, root: Option<&Path>) -> ParsedConfig {
        parse::parse(text, source, scope, root)
    }

    fn applies(&self, hook: &HookSpec, event: &EventPayload, _ctx: &Context<'_>) -> bool {
        if hook.canonical != Some(event.event()) {
            return false;
        }
        match subjects(&hook.event, event) {
            None => false,
            Some(s) if s.is_empty() || !uses_matcher(&hook.event) => true,
            Some(s) => s.iter().any(|s| hook.matcher.test(s).fires()),
        }
    }

    fn match_subject(&self, hook: &HookSpec, event: &EventPayload) -> Option<String> {
        subjects(&hook.event, event)
            .filter(|s| !s.is_empty() && uses_matcher(&hook.event))
            .map(|s| s.join(", "))
    }

    fn marshal(&self, hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> Value {
        marshal::marshal(hook, event, ctx)
    }

    fn interpret(
        &self,
        hook: &HookSpec,
        event: &EventPayload,
        run: &ProcessResult<'_>,
    ) -> Interpretation {
        interpret::interpret(hook, event, run)
    }

    /// Codex runs hooks in the session's working directory.
    fn cwd(&self, hook: &HookSpec, ctx: &Context<'_>) -> PathBuf {
        ctx.root_for(hook)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| hook.cwd())
    }

    fn user_state_dir(&self, home: &Path, _copse_dir: &Path) -> PathBuf {
        home.join(".codex")
    }

    /// Plugin hooks get `PLUGIN_ROOT` and its `CLAUDE_PLUGIN_ROOT` alias; Codex sets
    /// nothing else for its hooks.
    fn vendor_env(&self, hook: &HookSpec, _ctx: &Context<'_>) -> Vec<(String, String)> {
        match plugin_root(&hook.source) {
            Some(root) => {
                let root = root.display().to_string();
                vec![
                    ("PLUGIN_ROOT".to_string(), root.clone()),
                    ("CLAUDE_PLUGIN_ROOT".to_string(), root),
                ]
            }
            None => Vec::new(),
        }
    }
}
