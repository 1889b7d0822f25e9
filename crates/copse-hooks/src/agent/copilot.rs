//! GitHub Copilot CLI: its hook payloads in, its hook answers out.
//!
//! Copilot's camelCase payloads do not name their event (only `notification` carries
//! `hook_event_name: "Notification"` and `permissionRequest` a `hookName`), so the
//! entries `install --agent copilot` writes set [`EVENT_VAR`] in their `env`, and the
//! shim stamps that name into the payload ([`stamp_event`]) before reading it.
//! Without it the payload cannot be placed and the shim fails closed.
//!
//! Tools: Copilot's names (`bash`, `view`, `create`, `edit`, …) and the dialect's
//! table ([`crate::dialect::copilot::TOOLS`]); `toolArgs` is an object (Copilot CLI
//! 1.0.102), a JSON string holding an object is read too. `permissionRequest` sends
//! `toolInput` instead (`file_path` for a file edit).
//!
//! Answers: `preToolUse` denies with `permissionDecision: "deny"` and the reason for
//! the model (Copilot shows it as "Denied by preToolUse hook: R"); an ask is
//! `permissionDecision: "ask"`. A copse `Allow` is never sent as Copilot's `allow`,
//! which would skip Copilot's own permission flow; a rewrite of the input is answered
//! as a deny (Copilot applies `modifiedArgs` only together with an `allow`).
//! `permissionRequest` answers `behavior` (only here does a copse `Allow` approve).
//! `userPromptSubmitted` blocks with `decision: "block"` (exit 2 does not block a
//! prompt in Copilot); `agentStop`/`subagentStop` hand follow-ups back as `decision:
//! "block"` with the follow-up as `reason`; context goes in `additionalContext`.

use serde_json::{Map, Value, json};

use super::{Answer, PayloadError, Reply, block_reason, blocks, join};
use crate::dialect::copilot::{canonical_tool, tool_name};
use crate::event::{CanonicalEvent, Compaction, EventPayload, ToolCall, ToolResult};
use crate::outcome::Decision;

/// The variable the installed entries set to the event they are registered on.
pub const EVENT_VAR: &str = "COPSE_HOOKS_EVENT";

/// The events the shim serves for Copilot CLI (what `install` registers).
pub const SERVED_EVENTS: &[&str] = &[
    "sessionStart",
    "userPromptSubmitted",
    "preToolUse",
    "permissionRequest",
    "postToolUse",
    "postToolUseFailure",
    "agentStop",
    "subagentStart",
    "subagentStop",
    "preCompact",
    "notification",
    "sessionEnd",
];

/// The canonical event a Copilot event is served as.
pub fn canonical_for(wire: &str) -> Option<CanonicalEvent> {
    if SERVED_EVENTS.contains(&wire) {
        crate::dialect::copilot::canonical_for(wire)
    } else {
        None
    }
}

/// The payload with its event named in `hook_event_name`: `event` (the entry's
/// [`EVENT_VAR`]) when given, else the `hookName` Copilot sends on
/// `permissionRequest`; `Notification` is Copilot's own name for `notification`.
/// `None` when the payload is not a JSON object (it is read, and refused, as it is).
pub fn stamp_event(payload: &[u8], event: Option<&str>) -> Option<Vec<u8>> {
    let Ok(Value::Object(mut obj)) = serde_json::from_slice::<Value>(payload) else {
        return None;
    };
    let named = event
        .filter(|e| !e.is_empty())
        .map(str::to_string)
        .or_else(|| {
            obj.get("hookName")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .or_else(|| {
            (obj.get("hook_event_name").and_then(Value::as_str) == Some("Notification"))
                .then(|| "notification".to_string())
        })?;
    obj.insert("hook_event_name".into(), Value::String(named));
    serde_json::to_vec(&Value::Object(obj)).ok()
}

fn field(wire: &str, name: &'static str) -> PayloadError {
    PayloadError::Field {
        event: wire.to_string(),
        field: name,
    }
}

/// A tool event's arguments: an object, or a JSON string holding one.
fn args_of(
    wire: &str,
    obj: &Map<String, Value>,
    key: &str,
) -> Result<Map<String, Value>, PayloadError> {
    let malformed = |problem: String| PayloadError::Malformed {
        event: wire.to_string(),
        field: key.to_string(),
        problem,
    };
    match obj.get(key) {
        Some(Value::Object(o)) => Ok(o.clone()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(o)) => Ok(o),
            Ok(v) => Err(malformed(format!(
                "is a JSON string holding {}, not an object",
                super::kind_of(&v)
            ))),
            Err(_) => Err(malformed("is a string that is not JSON".into())),
        },
        Some(Value::Null) | None => Err(malformed("is missing".into())),
        Some(v) => Err(malformed(format!(
            "is {}, not an object",
            super::kind_of(v)
        ))),
    }
}

/// A gated tool call read strictly: the tool name, its arguments mapped to canonical
/// keys and checked against the tool's declared shape.
fn gated_call(wire: &str, obj: &Map<String, Value>, key: &str) -> Result<ToolCall, PayloadError> {
    let name = obj
        .get("toolName")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| field(wire, "toolName"))?;
    let mut args = args_of(wire, obj, key)?;
    // permissionRequest names a file edit's path `file_path`.
    if let Some(p) = args.remove("file_path") {
        args.entry("path").or_insert(p);
    }
    let (tool, input) = canonical_tool(name, &args);
    let call = ToolCall::new(tool, input);
    call.validate().map_err(|e| PayloadError::Malformed {
        event: wire.to_string(),
        field: match e.field.split('|').next() {
            Some(f) if !f.is_empty() => format!("{key}.{f}"),
            _ => key.to_string(),
        },
        problem: e.problem,
    })?;
    Ok(call)
}

/// Copilot's `sessionEnd` reason as a canonical one.
fn end_reason(reason: &str) -> String {
    match reason {
        "complete" => "completed",
        "abort" => "aborted",
        "user_exit" => "user_close",
        other => other,
    }
    .to_string()
}

/// Reads a Copilot CLI payload (its event already stamped, [`stamp_event`]).
pub fn event(wire: &str, obj: &Map<String, Value>) -> Result<Option<EventPayload>, PayloadError> {
    let Some(canonical) = canonical_for(wire) else {
        return Ok(None);
    };
    let text = |k: &str| super::str_of(obj, k);
    let event = match (wire, canonical) {
        (_, CanonicalEvent::ToolGate) => EventPayload::ToolGate(gated_call(wire, obj, "toolArgs")?),
        (_, CanonicalEvent::PermissionRequest) => {
            let key = if obj.contains_key("toolInput") {
                "toolInput"
            } else {
                "toolArgs"
            };
            EventPayload::PermissionRequest(gated_call(wire, obj, key)?)
        }
        (_, CanonicalEvent::AfterToolUse) => {
            let name = obj
                .get("toolName")
                .and_then(Value::as_str)
                .ok_or_else(|| field(wire, "toolName"))?;
            let args = args_of(wire, obj, "toolArgs").unwrap_or_default();
            let (tool, input) = canonical_tool(name, &args);
            let failed = wire == "postToolUseFailure";
            let output = if failed {
                super::output_text(obj.get("error"))
            } else {
                obj.get("toolResult")
                    .and_then(|r| r.get("textResultForLlm"))
                    .map(|t| super::output_text(Some(t)))
                    .unwrap_or_default()
            };
            EventPayload::AfterToolUse(ToolResult {
                tool,
                input,
                output,
                is_error: failed,
                duration_ms: 0,
                tool_call_id: String::new(),
                response: obj.get("toolResult").filter(|r| !r.is_null()).cloned(),
            })
        }
        (_, CanonicalEvent::BeforeSubmitPrompt) => EventPayload::BeforeSubmitPrompt {
            prompt: obj
                .get("prompt")
                .and_then(Value::as_str)
                .ok_or_else(|| field(wire, "prompt"))?
                .to_string(),
        },
        (_, CanonicalEvent::Stop) => EventPayload::Stop {
            status: "completed".into(),
        },
        (_, CanonicalEvent::SubagentStart) => EventPayload::SubagentStart {
            subagent_type: text("agentName"),
        },
        (_, CanonicalEvent::SubagentStop) => EventPayload::SubagentStop {
            subagent_type: text("agentName"),
            status: "completed".into(),
        },
        (_, CanonicalEvent::SessionStart) => EventPayload::SessionStart {
            first_turn: text("source") != "resume",
        },
        (_, CanonicalEvent::SessionEnd) => EventPayload::SessionEnd {
            reason: end_reason(&text("reason")),
            duration_ms: 0,
        },
        (_, CanonicalEvent::PreCompact) => EventPayload::PreCompact(Compaction {
            trigger: text("trigger"),
            ..Compaction::default()
        }),
        (_, CanonicalEvent::Notification) => EventPayload::Notification {
            message: text("message"),
            title: obj.get("title").and_then(Value::as_str).map(str::to_string),
            notification_type: text("notification_type"),
            details: Value::Null,
        },
        _ => return Ok(None),
    };
    Ok(Some(event))
}

/// The answer that blocks `wire` in Copilot, for a verdict or an internal error: a
/// deny with exit 2 on the tool events (Copilot denies on exit 2 and reads the
/// reason from the JSON), `decision: "block"` with exit 0 on a prompt (exit 2 does not
/// block a prompt).
pub fn block(wire: &str, reason: &str) -> Answer {
    let (obj, exit_code) = match wire {
        "preToolUse" => (
            json!({"permissionDecision": "deny", "permissionDecisionReason": reason}),
            2,
        ),
        "permissionRequest" => (json!({"behavior": "deny", "message": reason}), 2),
        "userPromptSubmitted" => (json!({"decision": "block", "reason": reason}), 0),
        _ => return Answer::block(reason),
    };
    Answer {
        stdout: format!("{obj}\n"),
        stderr: format!("{reason}\n"),
        exit_code,
    }
}

/// Writes a Copilot CLI answer.
pub fn answer(event: &EventPayload, reply: &Reply) -> Answer {
    let v = &reply.verdict;
    let mut out = Map::new();
    match event {
        EventPayload::ToolGate(call) => {
            if blocks(v) {
                out.insert("permissionDecision".into(), json!("deny"));
                out.insert(
                    "permissionDecisionReason".into(),
                    json!(block_reason(v, "this tool call")),
                );
            } else if v.updated_input.is_some() {
                // Copilot applies modifiedArgs only with an `allow`, which would skip
                // its own permission flow: the rewrite is refused instead.
                out.insert("permissionDecision".into(), json!("deny"));
                out.insert(
                    "permissionDecisionReason".into(),
                    json!(format!(
                        "a copse hook rewrote this {} call's input, which copse-hooks cannot apply in Copilot without approving the call",
                        tool_name(&call.tool)
                    )),
                );
            } else if v.decision == Some(Decision::Ask) {
                out.insert("permissionDecision".into(), json!("ask"));
                if let Some(m) = join([v.agent_message.clone(), v.user_message.clone()]) {
                    out.insert("permissionDecisionReason".into(), json!(m));
                }
            }
        }
        EventPayload::PermissionRequest(_) => {
            if blocks(v) {
                out.insert("behavior".into(), json!("deny"));
                out.insert("message".into(), json!(block_reason(v, "this tool call")));
                if v.halt.is_some() {
                    out.insert("interrupt".into(), json!(true));
                }
            } else if v.decision == Some(Decision::Allow) {
                out.insert("behavior".into(), json!("allow"));
            }
        }
        EventPayload::BeforeSubmitPrompt { .. } => {
            if blocks(v) {
                out.insert("decision".into(), json!("block"));
                out.insert("reason".into(), json!(block_reason(v, "the prompt")));
            } else if let Some(c) = &v.inject_context {
                out.insert("additionalContext".into(), json!(c));
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
            if let Some(c) = &v.inject_context {
                out.insert("additionalContext".into(), json!(c));
            }
        }
        _ => {}
    }
    let mut answer = Answer::json(out);
    // Copilot has no field for text to the user: it goes to stderr.
    if let Some(m) = super::system_message(reply) {
        answer.stderr = format!("{m}\n");
    }
    answer
}

/// The `*.json` hook files of a Copilot hooks directory, sorted by name (the order
/// Copilot loads them in): what `install --adopt` moves into copse-hooks' care.
pub fn hook_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    crate::discovery::json_files(dir)
}
