//! Gemini CLI: its hook payloads in, its hook answers out.
//!
//! Gemini's events have their own names (`BeforeTool`, `BeforeAgent`, `AfterAgent`, …)
//! and tools (`run_shell_command`, …). Answers use Gemini's flat `decision` (`deny`
//! blocks; `ask` forces a confirmation) with a `reason`; context goes in
//! `hookSpecificOutput.additionalContext`; an input rewrite in
//! `hookSpecificOutput.tool_input` (Gemini merges it into the arguments). At
//! `AfterAgent`, queued follow-ups are handed back as Gemini's retry: `decision:
//! "deny"` with the follow-up as the `reason`, which Gemini sends as a new prompt.
//!
//! The tool-name table below is this module's own (clearly marked); the lead unifies
//! it with the Gemini dialect's when that lands.

use serde_json::{Map, Value, json};

use super::{Answer, PayloadError, Reply, block_reason, blocks, join, specific};
use crate::event::{CanonicalEvent, Compaction, EventPayload, ToolCall, ToolResult, tool};
use crate::outcome::Decision;

/// The events the shim serves for Gemini CLI (what `install` registers).
pub const SERVED_EVENTS: &[&str] = &[
    "SessionStart",
    "BeforeAgent",
    "BeforeTool",
    "AfterTool",
    "AfterAgent",
    "PreCompress",
    "SessionEnd",
    "Notification",
];

/// The canonical event a Gemini CLI event is served as.
pub fn canonical_for(wire: &str) -> Option<CanonicalEvent> {
    Some(match wire {
        "SessionStart" => CanonicalEvent::SessionStart,
        "BeforeAgent" => CanonicalEvent::BeforeSubmitPrompt,
        "BeforeTool" => CanonicalEvent::ToolGate,
        "AfterTool" => CanonicalEvent::AfterToolUse,
        "AfterAgent" => CanonicalEvent::Stop,
        "PreCompress" => CanonicalEvent::PreCompact,
        "SessionEnd" => CanonicalEvent::SessionEnd,
        "Notification" => CanonicalEvent::Notification,
        _ => return None,
    })
}

// --- Gemini tool-name table (agent side; to be unified with the Gemini dialect) ---
/// Gemini's built-in tool names and the canonical ids they are, with the input keys
/// renamed from Gemini's to the canonical ones.
/// Input keys renamed from Gemini's (first) to the canonical ones (second).
type Renames = &'static [(&'static str, &'static str)];

const TOOLS: &[(&str, &str, Renames)] = &[
    ("run_shell_command", tool::RUN_SHELL, &[]),
    ("read_file", tool::READ_FILE, &[("file_path", "path")]),
    ("write_file", tool::WRITE_FILE, &[("file_path", "path")]),
    ("replace", tool::STR_REPLACE, &[("file_path", "path")]),
    (
        "search_file_content",
        tool::SEARCH_CODE,
        &[("pattern", "query"), ("dir_path", "path")],
    ),
    (
        "grep_search",
        tool::SEARCH_CODE,
        &[("pattern", "query"), ("dir_path", "path")],
    ),
    ("glob", "find_files", &[("dir_path", "path")]),
    ("list_directory", "list_dir", &[("dir_path", "path")]),
];
// --- end of the Gemini tool-name table ---

/// A Gemini tool call as a canonical one. Unknown tools keep their name and input.
pub fn canonical_tool(name: &str, input: &Map<String, Value>) -> (String, Map<String, Value>) {
    let Some((_, id, renames)) = TOOLS.iter().find(|(n, _, _)| *n == name) else {
        return (name.to_string(), input.clone());
    };
    let mut out = input.clone();
    for (from, to) in *renames {
        if let Some(v) = out.remove(*from) {
            out.insert((*to).to_string(), v);
        }
    }
    ((*id).to_string(), out)
}

/// Gemini's name for a canonical input key of the tool `name`, as the payload had it.
fn gemini_key(name: &str, input: &Map<String, Value>, canonical: &str) -> String {
    TOOLS
        .iter()
        .find(|(n, _, _)| *n == name)
        .and_then(|(_, _, renames)| {
            renames
                .iter()
                .find(|(from, to)| *to == canonical && input.contains_key(*from))
        })
        .map(|(from, _)| (*from).to_string())
        .unwrap_or_else(|| canonical.to_string())
}

/// Gemini's input keys for a canonical rewrite.
fn gemini_input(updated: &Map<String, Value>, original: &str) -> Map<String, Value> {
    let renames: &[(&str, &str)] = TOOLS
        .iter()
        .find(|(n, _, _)| *n == original)
        .map(|(_, _, r)| *r)
        .unwrap_or(&[]);
    updated
        .iter()
        .map(|(k, v)| {
            let key = renames
                .iter()
                .find(|(_, to)| to == k)
                .map(|(from, _)| (*from).to_string())
                .unwrap_or_else(|| k.clone());
            (key, v.clone())
        })
        .collect()
}

/// The canonical id (`mcp__<server>__<tool>`) of the MCP tool a payload's
/// `mcp_context` names, when it names one.
fn mcp_id(obj: &Map<String, Value>) -> Option<String> {
    let ctx = obj.get("mcp_context")?.as_object()?;
    let server = ctx.get("server_name")?.as_str().filter(|s| !s.is_empty())?;
    let tool = ctx.get("tool_name")?.as_str().filter(|s| !s.is_empty())?;
    Some(format!("mcp__{server}__{tool}"))
}

/// Reads a Gemini CLI payload.
pub fn event(wire: &str, obj: &Map<String, Value>) -> Result<Option<EventPayload>, PayloadError> {
    let Some(canonical) = canonical_for(wire) else {
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
        let (tool, input) = canonical_tool(name, &super::obj_of(obj, "tool_input"));
        Ok((mcp_id(obj).unwrap_or(tool), input))
    };
    let event = match canonical {
        CanonicalEvent::ToolGate => {
            // Read strictly: an input we cannot map is blocked, never served as `{}`.
            let name = obj
                .get("tool_name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| PayloadError::Field {
                    event: wire.to_string(),
                    field: "tool_name",
                })?;
            let input = super::gated_input(wire, obj)?;
            let (tool, canonical_input) = canonical_tool(name, &input);
            // An MCP tool (`mcp_<server>_<tool>`, ambiguous when either has an
            // underscore): `mcp_context` names its server and tool apart.
            let tool = mcp_id(obj).unwrap_or(tool);
            let call = ToolCall::new(tool, canonical_input);
            super::check_call(wire, &call, |field| gemini_key(name, &input, field))?;
            EventPayload::ToolGate(call)
        }
        CanonicalEvent::AfterToolUse => {
            let (tool, input) = tool_call()?;
            let response = obj.get("tool_response");
            let output = response
                .and_then(|r| r.get("llmContent"))
                .map(|c| super::output_text(Some(c)))
                .unwrap_or_else(|| super::output_text(response));
            let is_error = response
                .and_then(|r| r.get("error"))
                .is_some_and(|e| !e.is_null());
            EventPayload::AfterToolUse(ToolResult {
                tool,
                input,
                output,
                is_error,
                duration_ms: 0,
                tool_call_id: String::new(),
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
        CanonicalEvent::Notification => EventPayload::Notification {
            message: text("message"),
            title: None,
            notification_type: text("notification_type"),
            details: obj.get("details").cloned().unwrap_or(Value::Null),
        },
        _ => return Ok(None),
    };
    Ok(Some(event))
}

/// Writes a Gemini CLI answer.
pub fn answer(wire: &str, event: &EventPayload, reply: &Reply) -> Answer {
    let v = &reply.verdict;
    let mut out = Map::new();
    let mut fields = Map::new();
    match event {
        EventPayload::ToolGate(call) => {
            if blocks(v) {
                out.insert("decision".into(), json!("deny"));
                out.insert("reason".into(), json!(block_reason(v, "this tool call")));
            } else {
                if v.decision == Some(Decision::Ask) {
                    out.insert("decision".into(), json!("ask"));
                    if let Some(m) = join([v.agent_message.clone(), v.user_message.clone()]) {
                        out.insert("reason".into(), json!(m));
                    }
                }
                if let Some(u) = &v.updated_input {
                    fields.insert(
                        "tool_input".into(),
                        Value::Object(gemini_input(u, gemini_name(&call.tool))),
                    );
                }
            }
        }
        EventPayload::BeforeSubmitPrompt { .. } if blocks(v) => {
            out.insert("decision".into(), json!("deny"));
            out.insert("reason".into(), json!(block_reason(v, "the prompt")));
        }
        EventPayload::Stop { .. } => {
            if let Some(text) = join(reply.followups.iter().cloned().map(Some)) {
                out.insert("decision".into(), json!("deny"));
                out.insert("reason".into(), json!(text));
            }
        }
        _ => {}
    }
    if !blocks(v)
        && let Some(c) = &v.inject_context
        && matches!(
            event,
            EventPayload::SessionStart { .. }
                | EventPayload::BeforeSubmitPrompt { .. }
                | EventPayload::AfterToolUse(_)
        )
    {
        fields.insert("additionalContext".into(), json!(c));
    }
    if !fields.is_empty() {
        out.insert("hookSpecificOutput".into(), specific(wire, fields));
    }
    if let Some(m) = super::system_message(reply) {
        out.insert("systemMessage".into(), json!(m));
    }
    Answer::json(out)
}

/// Gemini's name for a canonical tool id (the first in the table).
fn gemini_name(id: &str) -> &str {
    TOOLS
        .iter()
        .find(|(_, i, _)| *i == id)
        .map(|(n, _, _)| *n)
        .unwrap_or(id)
}
