//! Cursor: its hook payloads in, its hook answers out.
//!
//! Cursor's CLI is not in any registry, so this side is tested with the payloads its
//! docs publish (the golden fixtures). Tool gates answer `permission` (`allow` is
//! always written: Cursor rejects a `preToolUse` answer without it), with
//! `user_message` / `agent_message` on a deny; `beforeSubmitPrompt` answers
//! `continue: false` with a `user_message`; `stop` and `subagentStop` hand queued
//! follow-ups back as `followup_message`; `sessionStart` answers `additional_context`.

use serde_json::{Map, Value, json};

use super::{Answer, PayloadError, Reply, block_reason, blocks, join};
use crate::dialect::cursor;
use crate::event::{
    CanonicalEvent, Compaction, EventPayload, FileEdit, ToolCall, ToolResult, tool,
};
use crate::outcome::Decision;

/// The events the shim serves for Cursor (what `install` registers).
pub const SERVED_EVENTS: &[&str] = &[
    "sessionStart",
    "beforeSubmitPrompt",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "afterFileEdit",
    "stop",
    "subagentStart",
    "subagentStop",
    "preCompact",
    "afterAgentResponse",
    "afterAgentThought",
    "sessionEnd",
];

/// Canonical tool ids by Cursor tool type, probed in order when reading a
/// `preToolUse` payload back (the Cursor dialect's table, inverted).
const KNOWN_TOOLS: [&str; 6] = [
    tool::RUN_SHELL,
    tool::READ_FILE,
    tool::WRITE_FILE,
    tool::DELETE_FILE,
    tool::SEARCH_CODE,
    tool::EXPLORE,
];

fn canonical_tool(name: &str) -> String {
    if let Some(mcp) = name.strip_prefix("MCP:") {
        return mcp.to_string();
    }
    KNOWN_TOOLS
        .into_iter()
        .find(|id| cursor::tool_type(id) == name)
        .unwrap_or(name)
        .to_string()
}

fn tool_input(v: Option<&Value>) -> Map<String, Value> {
    match v {
        Some(Value::Object(o)) => o.clone(),
        // afterMCPExecution sends its input as a JSON string.
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_default(),
        _ => Map::new(),
    }
}

/// A gated Cursor call's `tool_input`: an object, or (as MCP calls may send it) a
/// string holding one; anything else is an error naming the field.
fn gated_input(wire: &str, obj: &Map<String, Value>) -> Result<Map<String, Value>, PayloadError> {
    if let Some(Value::String(s)) = obj.get("tool_input") {
        return match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(o)) => Ok(o),
            _ => Err(PayloadError::Malformed {
                event: wire.to_string(),
                field: "tool_input".into(),
                problem: "is a string that is not a JSON object".into(),
            }),
        };
    }
    super::gated_input(wire, obj)
}

/// Reads a Cursor payload.
pub fn event(wire: &str, obj: &Map<String, Value>) -> Result<Option<EventPayload>, PayloadError> {
    let Some(canonical) = cursor::canonical_for(wire) else {
        return Ok(None);
    };
    let text = |k: &str| super::str_of(obj, k);
    let missing = |field: &'static str| PayloadError::Field {
        event: wire.to_string(),
        field,
    };
    let event = match canonical {
        CanonicalEvent::ToolGate => EventPayload::ToolGate(tool_gate(wire, obj)?),
        CanonicalEvent::AfterToolUse => EventPayload::AfterToolUse(tool_result(wire, obj)),
        CanonicalEvent::BeforeSubmitPrompt => EventPayload::BeforeSubmitPrompt {
            prompt: obj
                .get("prompt")
                .and_then(Value::as_str)
                .ok_or_else(|| missing("prompt"))?
                .to_string(),
        },
        CanonicalEvent::AfterFileEdit => EventPayload::AfterFileEdit {
            file_path: text("file_path"),
            edits: obj
                .get("edits")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_object)
                        .map(|e| FileEdit {
                            old_string: super::str_of(e, "old_string"),
                            new_string: super::str_of(e, "new_string"),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        },
        CanonicalEvent::Stop => EventPayload::Stop {
            status: Some(text("status"))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "completed".into()),
        },
        CanonicalEvent::SubagentStart => EventPayload::SubagentStart {
            subagent_type: text("subagent_type"),
        },
        CanonicalEvent::SubagentStop => EventPayload::SubagentStop {
            subagent_type: text("subagent_type"),
            status: text("status"),
        },
        CanonicalEvent::SessionStart => EventPayload::SessionStart { first_turn: true },
        CanonicalEvent::SessionEnd => EventPayload::SessionEnd {
            reason: text("reason"),
            duration_ms: obj.get("duration_ms").and_then(Value::as_u64).unwrap_or(0),
        },
        CanonicalEvent::PreCompact => {
            let n = |k: &str| obj.get(k).and_then(Value::as_u64).unwrap_or(0);
            EventPayload::PreCompact(Compaction {
                trigger: text("trigger"),
                context_usage_percent: obj
                    .get("context_usage_percent")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0),
                context_tokens: n("context_tokens"),
                context_window_size: n("context_window_size"),
                message_count: n("message_count"),
                messages_to_compact: n("messages_to_compact"),
                is_first_compaction: obj.get("is_first_compaction") == Some(&Value::Bool(true)),
            })
        }
        CanonicalEvent::AfterAgentResponse => {
            EventPayload::AfterAgentResponse { text: text("text") }
        }
        CanonicalEvent::AfterAgentThought => EventPayload::AfterAgentThought {
            text: text("text"),
            duration_ms: obj.get("duration_ms").and_then(Value::as_u64),
        },
        // Cursor has neither event.
        CanonicalEvent::Notification | CanonicalEvent::PermissionRequest => {
            return Ok(None);
        }
    };
    Ok(Some(event))
}

/// The call a Cursor before-tool event gates: the shell, file-read and MCP events carry
/// their own fields; the generic `preToolUse` names the tool.
fn tool_gate(wire: &str, obj: &Map<String, Value>) -> Result<ToolCall, PayloadError> {
    let missing = |field: &'static str| PayloadError::Field {
        event: wire.to_string(),
        field,
    };
    let call = match wire {
        "beforeShellExecution" => {
            let mut input = Map::new();
            let command = obj
                .get("command")
                .and_then(Value::as_str)
                .ok_or_else(|| missing("command"))?;
            input.insert("command".into(), json!(command));
            if let Some(cwd) = obj.get("cwd") {
                input.insert("cwd".into(), cwd.clone());
            }
            ToolCall::new(tool::RUN_SHELL, input)
        }
        "beforeReadFile" => {
            let mut input = Map::new();
            let path = obj
                .get("file_path")
                .and_then(Value::as_str)
                .ok_or_else(|| missing("file_path"))?;
            input.insert("path".into(), json!(path));
            let mut call = ToolCall::new(tool::READ_FILE, input);
            call.file_content = obj
                .get("content")
                .and_then(Value::as_str)
                .map(str::to_string);
            call
        }
        "beforeMCPExecution" => {
            let name = obj
                .get("tool_name")
                .and_then(Value::as_str)
                .ok_or_else(|| missing("tool_name"))?;
            // Cursor names the tool and its server apart: the canonical id is
            // `mcp__<server>__<tool>`, what every MCP hook and the guard match.
            let tool = match obj.get("mcp_server_name").and_then(Value::as_str) {
                Some(server) if !server.is_empty() && !tool::is_mcp(name) => {
                    format!("mcp__{server}__{name}")
                }
                _ => name.to_string(),
            };
            ToolCall::new(tool, gated_input(wire, obj)?)
        }
        _ => {
            let name = obj
                .get("tool_name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| missing("tool_name"))?;
            let call = ToolCall::new(canonical_tool(name), gated_input(wire, obj)?);
            if call.tool == tool::RUN_SHELL {
                // The shell command is what every shell hook reads: it must be text.
                // (File tools keep Cursor's own keys, so only their object shape is
                // checked.)
                super::check_call(wire, &call, str::to_string)?;
            }
            call
        }
    };
    Ok(call)
}

/// The result a Cursor after-tool event reports (shell, MCP, or the generic
/// `postToolUse` / `postToolUseFailure`).
fn tool_result(wire: &str, obj: &Map<String, Value>) -> ToolResult {
    let text = |k: &str| super::str_of(obj, k);
    let duration_ms = obj.get("duration").and_then(Value::as_u64).unwrap_or(0);
    match wire {
        "afterShellExecution" => {
            let mut input = Map::new();
            input.insert("command".into(), json!(text("command")));
            ToolResult {
                tool: tool::RUN_SHELL.into(),
                input,
                output: text("output"),
                is_error: false,
                duration_ms,
                response: None,
                tool_call_id: String::new(),
            }
        }
        "afterMCPExecution" => ToolResult {
            tool: text("tool_name"),
            input: tool_input(obj.get("tool_input")),
            output: super::output_text(obj.get("result_json")),
            is_error: false,
            duration_ms,
            response: None,
            tool_call_id: String::new(),
        },
        _ => {
            let failed = wire == "postToolUseFailure";
            ToolResult {
                tool: canonical_tool(&text("tool_name")),
                input: tool_input(obj.get("tool_input")),
                output: if failed {
                    text("error_message")
                } else {
                    super::output_text(obj.get("tool_output"))
                },
                is_error: failed,
                duration_ms,
                tool_call_id: text("tool_use_id"),
                response: None,
            }
        }
    }
}

/// Writes a Cursor answer.
pub fn answer(_wire: &str, event: &EventPayload, reply: &Reply) -> Answer {
    let v = &reply.verdict;
    let mut out = Map::new();
    let user = super::system_message(reply);
    match event {
        EventPayload::ToolGate(_) | EventPayload::SubagentStart { .. } => {
            let permission = if blocks(v) {
                "deny"
            } else if v.decision == Some(Decision::Ask) {
                "ask"
            } else {
                "allow"
            };
            out.insert("permission".into(), json!(permission));
            if blocks(v) {
                let reason = block_reason(v, "this tool call");
                out.insert(
                    "user_message".into(),
                    json!(user.clone().unwrap_or(reason.clone())),
                );
                out.insert(
                    "agent_message".into(),
                    json!(v.agent_message.clone().unwrap_or(reason)),
                );
            } else {
                if let Some(u) = &user {
                    out.insert("user_message".into(), json!(u));
                }
                if let Some(a) = &v.agent_message {
                    out.insert("agent_message".into(), json!(a));
                }
                if let (EventPayload::ToolGate(_), Some(u)) = (event, &v.updated_input) {
                    out.insert("updated_input".into(), Value::Object(u.clone()));
                }
            }
        }
        EventPayload::BeforeSubmitPrompt { .. } => {
            if blocks(v) {
                out.insert("continue".into(), json!(false));
                out.insert("user_message".into(), json!(block_reason(v, "the prompt")));
            } else {
                out.insert("continue".into(), json!(true));
            }
        }
        EventPayload::Stop { .. } | EventPayload::SubagentStop { .. } => {
            if let Some(text) = join(reply.followups.iter().cloned().map(Some)) {
                out.insert("followup_message".into(), json!(text));
            }
        }
        EventPayload::SessionStart { .. } | EventPayload::AfterToolUse(_) => {
            if let Some(c) = &v.inject_context {
                out.insert("additional_context".into(), json!(c));
            }
        }
        _ => {}
    }
    Answer::json(out)
}
