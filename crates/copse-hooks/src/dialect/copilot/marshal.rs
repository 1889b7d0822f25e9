//! The exact stdin a Copilot hook reads: the camelCase payload of the GitHub hooks
//! reference, in its field order — `sessionId`, `timestamp` (Unix milliseconds),
//! `cwd`, then the event's own fields (`permissionRequest` starts with `hookName`
//! and sends `toolInput`). `toolArgs` is the tool's arguments as an object, as
//! Copilot CLI 1.0.102 sends it (older documentation showed a JSON string).

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use super::{copilot_args, tool_name};
use crate::dialect::{Context, HookSpec};
use crate::event::EventPayload;

/// Whether `toolArgs` is sent as a JSON string (Copilot CLI) rather than an object.
pub const TOOL_ARGS_AS_STRING: bool = false;

/// Copilot's `toolArgs` for a canonical input.
pub fn tool_args(tool_id: &str, input: &Map<String, Value>) -> Value {
    let args = Value::Object(copilot_args(tool_id, input));
    if TOOL_ARGS_AS_STRING {
        Value::String(args.to_string())
    } else {
        args
    }
}

/// Copilot's `sessionEnd` reason for a canonical one.
pub fn session_end_reason(reason: &str) -> &'static str {
    match reason {
        "aborted" | "abort" => "abort",
        "error" => "error",
        "timeout" => "timeout",
        "window_close" | "user_close" | "user_exit" | "prompt_input_exit" | "clear" => "user_exit",
        _ => "complete",
    }
}

/// Milliseconds since the epoch, now.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The stdin object for `hook` on `event`.
pub fn marshal(hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> Value {
    let root = ctx.root_for(hook);
    let host = &ctx.session.host;
    let transcript = || json!(host.transcript_path.clone().unwrap_or_default());
    let mut obj = Map::new();
    if hook.event == "permissionRequest" {
        obj.insert("hookName".into(), json!("permissionRequest"));
    }
    obj.insert("sessionId".into(), json!(ctx.session.conversation_id));
    obj.insert("timestamp".into(), json!(now_ms()));
    obj.insert(
        "cwd".into(),
        json!(root.map(|p| p.display().to_string()).unwrap_or_default()),
    );
    match (hook.event.as_str(), event) {
        ("sessionStart", EventPayload::SessionStart { first_turn }) => {
            obj.insert(
                "source".into(),
                json!(if *first_turn { "startup" } else { "resume" }),
            );
        }
        ("sessionEnd", EventPayload::SessionEnd { reason, .. }) => {
            obj.insert("reason".into(), json!(session_end_reason(reason)));
        }
        ("userPromptSubmitted", EventPayload::BeforeSubmitPrompt { prompt }) => {
            obj.insert("prompt".into(), json!(prompt));
        }
        ("preToolUse", EventPayload::ToolGate(call)) => {
            obj.insert("toolName".into(), json!(tool_name(&call.tool)));
            obj.insert("toolArgs".into(), tool_args(&call.tool, &call.input));
        }
        ("permissionRequest", EventPayload::PermissionRequest(call)) => {
            obj.insert("toolName".into(), json!(tool_name(&call.tool)));
            obj.insert("toolInput".into(), tool_args(&call.tool, &call.input));
            obj.insert("permissionSuggestions".into(), json!([]));
        }
        ("postToolUse", EventPayload::AfterToolUse(r)) => {
            obj.insert("toolName".into(), json!(tool_name(&r.tool)));
            obj.insert("toolArgs".into(), tool_args(&r.tool, &r.input));
            obj.insert(
                "toolResult".into(),
                json!({"resultType": "success", "textResultForLlm": r.output}),
            );
        }
        ("postToolUseFailure", EventPayload::AfterToolUse(r)) => {
            obj.insert("toolName".into(), json!(tool_name(&r.tool)));
            obj.insert("toolArgs".into(), tool_args(&r.tool, &r.input));
            obj.insert("error".into(), json!(r.output));
        }
        ("agentStop", EventPayload::Stop { .. }) => {
            obj.insert("transcriptPath".into(), transcript());
            obj.insert("stopReason".into(), json!("end_turn"));
            obj.insert(
                "stop_hook_active".into(),
                json!(host.loop_count.unwrap_or(0) > 0),
            );
        }
        ("subagentStart", EventPayload::SubagentStart { subagent_type }) => {
            obj.insert("transcriptPath".into(), transcript());
            obj.insert("agentName".into(), json!(subagent_type));
        }
        ("subagentStop", EventPayload::SubagentStop { subagent_type, .. }) => {
            obj.insert("transcriptPath".into(), transcript());
            obj.insert(
                "agentId".into(),
                json!(host.agent_id.clone().unwrap_or_default()),
            );
            obj.insert("agentType".into(), json!(subagent_type));
            obj.insert("agentName".into(), json!(subagent_type));
            obj.insert(
                "response".into(),
                json!(host.last_assistant_message.clone().unwrap_or_default()),
            );
            obj.insert("stopReason".into(), json!("end_turn"));
        }
        ("preCompact", EventPayload::PreCompact(c)) => {
            obj.insert("transcriptPath".into(), transcript());
            obj.insert("trigger".into(), json!(c.trigger));
            obj.insert("customInstructions".into(), json!(""));
        }
        (
            "notification",
            EventPayload::Notification {
                message,
                title,
                notification_type,
                ..
            },
        ) => {
            obj.insert("hook_event_name".into(), json!("Notification"));
            obj.insert("message".into(), json!(message));
            if let Some(t) = title {
                obj.insert("title".into(), json!(t));
            }
            obj.insert("notification_type".into(), json!(notification_type));
        }
        _ => {}
    }
    Value::Object(obj)
}
