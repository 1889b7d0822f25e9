//! Claude Code: its hook payloads in, its hook answers out.
//!
//! Tool names come from the Claude dialect's table ([`crate::dialect::claude::tool_name`]),
//! read backwards. Answers follow Claude Code's hooks reference: `PreToolUse` speaks
//! through `hookSpecificOutput.permissionDecision` (never `allow` — a copse verdict of
//! "no objection" is not an approval, so Claude's own permission check still runs),
//! `UserPromptSubmit` and `Stop` through `decision: "block"` with a `reason`, context
//! through `hookSpecificOutput.additionalContext`, and a halt through
//! `continue: false` with a `stopReason`.

use serde_json::{Map, Value, json};

use super::{Answer, PayloadError, Reply, block_reason, blocks, join, specific, system_message};
use crate::dialect::claude;
use crate::event::{CanonicalEvent, Compaction, EventPayload, ToolCall, ToolResult, tool};
use crate::outcome::Decision;

/// The events the shim serves for Claude Code (what `install` registers).
pub const SERVED_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
    "Notification",
    "PermissionRequest",
];

/// The canonical event a Claude Code event is served as.
pub fn canonical_for(wire: &str) -> Option<CanonicalEvent> {
    claude::canonical_for(wire)
}

/// Canonical tool ids Claude has a name for, probed in this order when reading a
/// Claude tool name back.
const KNOWN_TOOLS: [&str; 6] = [
    tool::RUN_SHELL,
    tool::READ_FILE,
    tool::WRITE_FILE,
    tool::STR_REPLACE,
    tool::SEARCH_CODE,
    tool::EXPLORE,
];

/// A Claude (or Claude-shaped, as Codex sends) tool call as a canonical one: the tool
/// id and its canonical input. Unknown tools keep their name and input.
pub fn canonical_tool(name: &str, input: &Map<String, Value>) -> (String, Map<String, Value>) {
    if tool::is_mcp(name) {
        return (name.to_string(), input.clone());
    }
    let id = KNOWN_TOOLS
        .into_iter()
        .find(|id| claude::tool_name(id).as_deref() == Some(name))
        .or(if name == "Task" {
            Some(tool::EXPLORE)
        } else {
            None
        });
    let Some(id) = id else {
        return (name.to_string(), input.clone());
    };
    let mut out = input.clone();
    if let Some(p) = out.remove("file_path") {
        out.insert("path".into(), p);
    }
    if id == tool::SEARCH_CODE
        && let Some(p) = out.remove("pattern")
    {
        out.insert("query".into(), p);
    }
    (id.to_string(), out)
}

/// A Claude-shaped payload (Claude Code and Codex share it) as a canonical event.
pub(crate) fn claude_shaped_event(
    wire: &str,
    obj: &Map<String, Value>,
) -> Result<Option<EventPayload>, PayloadError> {
    let Some(canonical) = claude::canonical_for(wire) else {
        return Ok(None);
    };
    let text = |k: &str| super::str_of(obj, k);
    let tool_call = || -> Result<(String, Map<String, Value>), PayloadError> {
        let name = obj
            .get("tool_name")
            .and_then(Value::as_str)
            .ok_or_else(|| PayloadError::Field {
                event: wire.to_string(),
                field: "tool_name",
            })?;
        let input = super::obj_of(obj, "tool_input");
        Ok(canonical_tool(name, &input))
    };
    let event = match canonical {
        CanonicalEvent::ToolGate => {
            let (tool, input) = tool_call()?;
            EventPayload::ToolGate(ToolCall::new(tool, input).with_tool_use_id(text("tool_use_id")))
        }
        CanonicalEvent::PermissionRequest => {
            let (tool, input) = tool_call()?;
            EventPayload::PermissionRequest(
                ToolCall::new(tool, input).with_tool_use_id(text("tool_use_id")),
            )
        }
        CanonicalEvent::Notification => EventPayload::Notification {
            message: text("message"),
            title: obj.get("title").and_then(Value::as_str).map(str::to_string),
            notification_type: text("notification_type"),
            details: Value::Null,
        },
        CanonicalEvent::AfterToolUse => {
            let (tool, input) = tool_call()?;
            let failed = wire == "PostToolUseFailure";
            let response = obj.get("tool_response");
            let output = if failed {
                text("error")
            } else if let Some(stdout) = response
                .and_then(|r| r.get("stdout"))
                .and_then(Value::as_str)
            {
                // Bash: what the command printed, stdout then stderr.
                let stderr = response
                    .and_then(|r| r.get("stderr"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                format!("{stdout}{stderr}")
            } else {
                super::output_text(response)
            };
            EventPayload::AfterToolUse(ToolResult {
                tool,
                input,
                output,
                is_error: failed,
                duration_ms: obj.get("duration_ms").and_then(Value::as_u64).unwrap_or(0),
                tool_call_id: text("tool_use_id"),
                response: response.filter(|r| !r.is_null()).cloned(),
            })
        }
        CanonicalEvent::BeforeSubmitPrompt => {
            let prompt =
                obj.get("prompt")
                    .and_then(Value::as_str)
                    .ok_or_else(|| PayloadError::Field {
                        event: wire.to_string(),
                        field: "prompt",
                    })?;
            EventPayload::BeforeSubmitPrompt {
                prompt: prompt.to_string(),
            }
        }
        CanonicalEvent::Stop => EventPayload::Stop {
            status: "completed".into(),
        },
        CanonicalEvent::SubagentStart => EventPayload::SubagentStart {
            subagent_type: text("agent_type"),
        },
        CanonicalEvent::SubagentStop => EventPayload::SubagentStop {
            subagent_type: text("agent_type"),
            status: "completed".into(),
        },
        CanonicalEvent::SessionStart => EventPayload::SessionStart {
            first_turn: matches!(text("source").as_str(), "startup" | ""),
        },
        CanonicalEvent::SessionEnd => EventPayload::SessionEnd {
            reason: text("reason"),
            duration_ms: 0,
        },
        CanonicalEvent::PreCompact => EventPayload::PreCompact(Compaction {
            trigger: text("trigger"),
            ..Compaction::default()
        }),
        CanonicalEvent::AfterFileEdit
        | CanonicalEvent::AfterAgentResponse
        | CanonicalEvent::AfterAgentThought => return Ok(None),
    };
    Ok(Some(event))
}

/// Reads a Claude Code payload.
pub fn event(wire: &str, obj: &Map<String, Value>) -> Result<Option<EventPayload>, PayloadError> {
    claude_shaped_event(wire, obj)
}

/// Claude's tool input for an `updatedInput`: canonical keys back to Claude's.
fn claude_input(call: &ToolCall, updated: &Map<String, Value>) -> Map<String, Value> {
    let mut merged = call.input.clone();
    merged.extend(updated.clone());
    match claude::claude_tool(&call.tool, &merged, None) {
        Some((_, input)) => input,
        None => merged,
    }
}

/// Writes a Claude Code answer.
pub fn answer(wire: &str, event: &EventPayload, reply: &Reply) -> Answer {
    let v = &reply.verdict;
    let mut out = Map::new();
    match event {
        EventPayload::ToolGate(call) => {
            let mut fields = Map::new();
            if let Some(h) = &v.halt {
                out.insert("continue".into(), json!(false));
                out.insert("stopReason".into(), json!(h.reason));
            }
            match v.decision {
                Some(Decision::Deny) => {
                    fields.insert("permissionDecision".into(), json!("deny"));
                    fields.insert(
                        "permissionDecisionReason".into(),
                        json!(block_reason(v, "this tool call")),
                    );
                }
                _ if v.halt.is_some() => {
                    fields.insert("permissionDecision".into(), json!("deny"));
                    fields.insert(
                        "permissionDecisionReason".into(),
                        json!(block_reason(v, "this tool call")),
                    );
                }
                Some(Decision::Ask) => {
                    fields.insert("permissionDecision".into(), json!("ask"));
                    if let Some(m) = join([v.agent_message.clone(), v.user_message.clone()]) {
                        fields.insert("permissionDecisionReason".into(), json!(m));
                    }
                }
                _ => {}
            }
            if !blocks(v)
                && let Some(u) = &v.updated_input
            {
                // Claude honours updatedInput only alongside a decision; "ask" keeps
                // the user in the loop (copse's Allow is never an approval).
                if !fields.contains_key("permissionDecision") {
                    fields.insert("permissionDecision".into(), json!("ask"));
                }
                fields.insert("updatedInput".into(), Value::Object(claude_input(call, u)));
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
        EventPayload::SessionStart { .. }
        | EventPayload::SubagentStart { .. }
        | EventPayload::AfterToolUse(_) => {
            if matches!(event, EventPayload::AfterToolUse(_))
                && let Some(h) = &v.halt
            {
                out.insert("continue".into(), json!(false));
                out.insert("stopReason".into(), json!(h.reason));
            }
            if let Some(c) = &v.inject_context {
                let mut fields = Map::new();
                fields.insert("additionalContext".into(), json!(c));
                out.insert("hookSpecificOutput".into(), specific(wire, fields));
            }
        }
        EventPayload::PermissionRequest(_) => {
            // Only here is a copse `Allow` an approval (the hook answers for the user).
            let decision = match v.decision {
                _ if blocks(v) => Some(json!({
                    "behavior": "deny",
                    "message": block_reason(v, "this tool call"),
                })),
                Some(Decision::Allow) => Some(json!({"behavior": "allow"})),
                _ => None,
            };
            if let Some(d) = decision {
                let mut fields = Map::new();
                fields.insert("decision".into(), d);
                out.insert("hookSpecificOutput".into(), specific(wire, fields));
            }
        }
        _ => {}
    }
    if let Some(m) = system_message(reply) {
        out.insert("systemMessage".into(), json!(m));
    }
    Answer::json(out)
}
