//! Codex CLI: its hook payloads in, its hook answers out.
//!
//! Codex sends Claude-shaped payloads (`Bash` with `tool_input.command`, …), so the
//! reading side is Claude's. The answers follow Codex's own rules, which are
//! stricter: a top-level `decision` may only be `approve` or `block` — anything else
//! makes the whole answer "invalid" and the tool call runs (fail-open) — so a denied
//! tool call is answered with `hookSpecificOutput.permissionDecision: "deny"` alone.
//! Codex has no "ask" and no input rewrite for a non-interactive hook, so a verdict
//! that asks or rewrites the input is answered as a deny (it tightens, never loosens).
//!
//! `PermissionRequest` (Codex's approval prompt: PreToolUse's stdin without
//! `tool_use_id`) is answered like Claude Code's, `hookSpecificOutput.decision`
//! `{behavior: allow|deny, message?}`: only here does a copse `Allow` approve, and a
//! verdict without a decision leaves Codex's own approval flow alone. We never send
//! the fields Codex reserves (`updatedInput`, `updatedPermissions`, `interrupt`).
//!
//! The tool-name table is Claude's (Codex reports its shell tool as `Bash`).

use serde_json::{Map, Value, json};

use super::{Answer, PayloadError, Reply, block_reason, blocks, join, specific};
use crate::event::{CanonicalEvent, EventPayload};
use crate::outcome::Decision;

/// The events the shim serves for Codex (what `install` registers).
pub const SERVED_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
    "PermissionRequest",
];

/// The canonical event a Codex event is served as (Claude's names, Codex's subset).
pub fn canonical_for(wire: &str) -> Option<CanonicalEvent> {
    if SERVED_EVENTS.contains(&wire) {
        crate::dialect::claude::canonical_for(wire)
    } else {
        None
    }
}

/// Reads a Codex payload.
pub fn event(wire: &str, obj: &Map<String, Value>) -> Result<Option<EventPayload>, PayloadError> {
    if canonical_for(wire).is_none() {
        return Ok(None);
    }
    super::claude::claude_shaped_event(wire, obj)
}

/// Writes a Codex answer.
pub fn answer(wire: &str, event: &EventPayload, reply: &Reply) -> Answer {
    let v = &reply.verdict;
    let mut out = Map::new();
    match event {
        EventPayload::ToolGate(_) => {
            let reason = if blocks(v) {
                Some(block_reason(v, "this tool call"))
            } else if v.decision == Some(Decision::Ask) {
                Some(format!(
                    "a copse hook asks for confirmation, which Codex hooks cannot request: {}",
                    block_reason(v, "this tool call")
                ))
            } else if v.updated_input.is_some() {
                Some(
                    "a copse hook rewrote this tool call's input, which Codex hooks cannot apply"
                        .to_string(),
                )
            } else {
                None
            };
            let mut fields = Map::new();
            if let Some(r) = reason {
                fields.insert("permissionDecision".into(), json!("deny"));
                fields.insert("permissionDecisionReason".into(), json!(r));
            }
            if let Some(c) = &v.inject_context {
                fields.insert("additionalContext".into(), json!(c));
            }
            if !fields.is_empty() {
                out.insert("hookSpecificOutput".into(), specific(wire, fields));
            }
        }
        EventPayload::BeforeSubmitPrompt { .. } => {
            if blocks(v) {
                out.insert("decision".into(), json!("block"));
                out.insert("reason".into(), json!(block_reason(v, "the prompt")));
            } else if let Some(c) = &v.inject_context {
                let mut fields = Map::new();
                fields.insert("additionalContext".into(), json!(c));
                out.insert("hookSpecificOutput".into(), specific(wire, fields));
            }
        }
        EventPayload::Stop { .. } | EventPayload::SubagentStop { .. } => {
            if let Some(text) = join(reply.followups.iter().cloned().map(Some)) {
                out.insert("decision".into(), json!("block"));
                out.insert("reason".into(), json!(text));
            }
        }
        EventPayload::PermissionRequest(_) => {
            if let Some(d) = super::permission_decision(v) {
                let mut fields = Map::new();
                fields.insert("decision".into(), d);
                out.insert("hookSpecificOutput".into(), specific(wire, fields));
            }
        }
        EventPayload::SessionStart { .. } | EventPayload::AfterToolUse(_) => {
            if let Some(c) = &v.inject_context {
                let mut fields = Map::new();
                fields.insert("additionalContext".into(), json!(c));
                out.insert("hookSpecificOutput".into(), specific(wire, fields));
            }
        }
        _ => {}
    }
    let mut answer = Answer::json(out);
    // Codex is strict about its answer's fields: user-facing text goes to stderr.
    if let Some(m) = super::system_message(reply) {
        answer.stderr = format!("{m}\n");
    }
    answer
}
