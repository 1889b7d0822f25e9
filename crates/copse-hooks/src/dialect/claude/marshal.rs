//! The stdin Claude hooks receive, event by event.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::{claude_tool, session_end_reason, tool_name};
use crate::dialect::{Context, HookSpec};
use crate::event::{Compaction, EventPayload, SessionIdentity, ToolCall, ToolResult, tool};

/// Whether the agent is already continuing because of a stop hook this turn.
fn stop_hook_active(ctx: &Context<'_>) -> bool {
    ctx.session.host.loop_count.unwrap_or(0) > 0
}

/// A stable id for a subagent the host did not name (`agent-<hash>`), the same for
/// its start and its stop within a turn.
pub fn agent_id(session: &SessionIdentity, agent_type: &str) -> String {
    if let Some(id) = session.host.agent_id.as_ref().filter(|s| !s.is_empty()) {
        return id.clone();
    }
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (&session.conversation_id, &session.generation_id, agent_type).hash(&mut h);
    format!("agent-{:016x}", h.finish())
}

/// Claude's `tool_response` for a finished call: the host's structured result when
/// it gives one, else the shape Claude Code's own tool returns, built from the
/// canonical output (`Write`/`Edit` → `{filePath, …, success}`, `Read` →
/// `{type, file: {filePath, content}}`, `Bash` → `{stdout, stderr, interrupted,
/// isImage}`, an MCP tool → its JSON output).
pub fn tool_response(r: &ToolResult, claude_input: &Map<String, Value>) -> Value {
    if let Some(v) = &r.response {
        return v.clone();
    }
    let file_path = claude_input.get("file_path").cloned().unwrap_or(json!(""));
    match tool_name(&r.tool).as_deref() {
        Some("Write") => json!({
            "type": "create",
            "filePath": file_path,
            "content": claude_input.get("content").cloned().unwrap_or(json!("")),
            "success": true,
        }),
        Some("Edit") => json!({
            "filePath": file_path,
            "oldString": claude_input.get("old_string").cloned().unwrap_or(json!("")),
            "newString": claude_input.get("new_string").cloned().unwrap_or(json!("")),
            "replaceAll": false,
            "success": true,
        }),
        Some("Read") => json!({
            "type": "text",
            "file": { "filePath": file_path, "content": r.output },
        }),
        Some("Bash") => json!({
            "stdout": r.output,
            "stderr": "",
            "interrupted": false,
            "isImage": false,
        }),
        _ if tool::is_mcp(&r.tool) => {
            serde_json::from_str::<Value>(&r.output).unwrap_or_else(|_| json!(r.output))
        }
        _ => json!(r.output),
    }
}

/// The exact stdin object for a Claude hook (field order is part of the contract).
pub(super) fn marshal(hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> Value {
    let root = ctx.root_for(hook);
    let mut obj = envelope(hook, ctx, root);
    match (hook.event.as_str(), event) {
        ("PreToolUse", EventPayload::ToolGate(call)) => pre_tool_use(&mut obj, call, root),
        ("PostToolUse", EventPayload::AfterToolUse(r)) => post_tool_use(&mut obj, r, root),
        ("PostToolUseFailure", EventPayload::AfterToolUse(r)) => {
            post_tool_use_failure(&mut obj, r, root)
        }
        ("UserPromptSubmit", EventPayload::BeforeSubmitPrompt { prompt }) => {
            obj.insert("prompt".into(), json!(prompt));
        }
        ("Stop", EventPayload::Stop { .. }) => stop(&mut obj, ctx),
        ("SubagentStop", EventPayload::SubagentStop { subagent_type, .. }) => {
            subagent_stop(&mut obj, subagent_type, ctx)
        }
        ("SubagentStart", EventPayload::SubagentStart { subagent_type }) => {
            subagent_start(&mut obj, subagent_type, ctx)
        }
        ("SessionStart", EventPayload::SessionStart { .. }) => session_start(&mut obj, ctx),
        ("SessionEnd", EventPayload::SessionEnd { reason, .. }) => {
            obj.insert("reason".into(), json!(session_end_reason(reason)));
        }
        ("PreCompact", EventPayload::PreCompact(c)) => pre_compact(&mut obj, c),
        (
            "Notification",
            EventPayload::Notification {
                message,
                title,
                notification_type,
                ..
            },
        ) => notification(&mut obj, message, title.as_deref(), notification_type),
        ("PermissionRequest", EventPayload::PermissionRequest(call)) => {
            permission_request(&mut obj, call, root)
        }
        _ => {}
    }
    Value::Object(obj)
}

/// The fields every Claude hook gets: session, transcript, cwd, event name, then
/// the prompt id and permission mode where they apply.
fn envelope(hook: &HookSpec, ctx: &Context<'_>, root: Option<&Path>) -> Map<String, Value> {
    let host = &ctx.session.host;
    let mut obj = Map::new();
    obj.insert("session_id".into(), json!(ctx.session.conversation_id));
    obj.insert(
        "transcript_path".into(),
        json!(host.transcript_path.clone().unwrap_or_default()),
    );
    obj.insert(
        "cwd".into(),
        json!(root.map(|p| p.display().to_string()).unwrap_or_default()),
    );
    obj.insert("hook_event_name".into(), json!(hook.event));
    if !ctx.session.generation_id.is_empty() {
        obj.insert("prompt_id".into(), json!(ctx.session.generation_id));
    }
    let permission_mode = json!(host.permission_mode.as_deref().unwrap_or("default"));
    if !matches!(
        hook.event.as_str(),
        "SessionEnd" | "PreCompact" | "Notification" | "SessionStart"
    ) {
        obj.insert("permission_mode".into(), permission_mode);
    }
    obj
}

/// Inserts `tool_name` and `tool_input` in Claude's terms and returns that input.
fn tool_fields(
    obj: &mut Map<String, Value>,
    id: &str,
    input: &Map<String, Value>,
    root: Option<&Path>,
) -> Map<String, Value> {
    let (name, input) =
        claude_tool(id, input, root).unwrap_or_else(|| (id.to_string(), input.clone()));
    obj.insert("tool_name".into(), json!(name));
    obj.insert("tool_input".into(), Value::Object(input.clone()));
    input
}

/// The host's last assistant message, `""` when it has none.
fn last_message(ctx: &Context<'_>) -> Value {
    json!(
        ctx.session
            .host
            .last_assistant_message
            .clone()
            .unwrap_or_default()
    )
}

/// `PreToolUse`: the tool call about to run and its id.
fn pre_tool_use(obj: &mut Map<String, Value>, call: &ToolCall, root: Option<&Path>) {
    tool_fields(obj, &call.tool, &call.input, root);
    obj.insert("tool_use_id".into(), json!(call.tool_use_id));
}

/// `PermissionRequest`: the tool call awaiting approval, with no suggestions.
fn permission_request(obj: &mut Map<String, Value>, call: &ToolCall, root: Option<&Path>) {
    // No `tool_use_id` here (Claude Code sends none on this event).
    tool_fields(obj, &call.tool, &call.input, root);
    obj.insert("permission_suggestions".into(), json!([]));
}

/// `PostToolUse`: the finished call, its response, id and duration.
fn post_tool_use(obj: &mut Map<String, Value>, r: &ToolResult, root: Option<&Path>) {
    let input = tool_fields(obj, &r.tool, &r.input, root);
    obj.insert("tool_response".into(), tool_response(r, &input));
    obj.insert("tool_use_id".into(), json!(r.tool_call_id));
    obj.insert("duration_ms".into(), json!(r.duration_ms));
}

/// `PostToolUseFailure`: the failed call, its id, error and duration.
fn post_tool_use_failure(obj: &mut Map<String, Value>, r: &ToolResult, root: Option<&Path>) {
    tool_fields(obj, &r.tool, &r.input, root);
    obj.insert("tool_use_id".into(), json!(r.tool_call_id));
    obj.insert("error".into(), json!(r.output));
    obj.insert("is_interrupt".into(), json!(false));
    obj.insert("duration_ms".into(), json!(r.duration_ms));
}

/// `Stop`: whether a stop hook is already active, and the last message.
fn stop(obj: &mut Map<String, Value>, ctx: &Context<'_>) {
    obj.insert("stop_hook_active".into(), json!(stop_hook_active(ctx)));
    obj.insert("last_assistant_message".into(), last_message(ctx));
}

/// `SubagentStop`: the stop fields plus the subagent's id, type and transcript.
fn subagent_stop(obj: &mut Map<String, Value>, subagent_type: &str, ctx: &Context<'_>) {
    obj.insert("stop_hook_active".into(), json!(stop_hook_active(ctx)));
    obj.insert(
        "agent_id".into(),
        json!(agent_id(ctx.session, subagent_type)),
    );
    obj.insert("agent_type".into(), json!(subagent_type));
    obj.insert(
        "agent_transcript_path".into(),
        json!(
            ctx.session
                .host
                .agent_transcript_path
                .clone()
                .unwrap_or_default()
        ),
    );
    obj.insert("last_assistant_message".into(), last_message(ctx));
}

/// `SubagentStart`: the subagent's id and type.
fn subagent_start(obj: &mut Map<String, Value>, subagent_type: &str, ctx: &Context<'_>) {
    obj.insert(
        "agent_id".into(),
        json!(agent_id(ctx.session, subagent_type)),
    );
    obj.insert("agent_type".into(), json!(subagent_type));
}

/// `SessionStart`: the source (always `startup`) and the model when known.
fn session_start(obj: &mut Map<String, Value>, ctx: &Context<'_>) {
    obj.insert("source".into(), json!("startup"));
    if let Some(model) = &ctx.session.model {
        obj.insert("model".into(), json!(model.model));
    }
}

/// `PreCompact`: what triggered the compaction, with no custom instructions.
fn pre_compact(obj: &mut Map<String, Value>, c: &Compaction) {
    obj.insert("trigger".into(), json!(c.trigger));
    obj.insert("custom_instructions".into(), json!(""));
}

/// `Notification`: the message, its title when it has one, and its type.
fn notification(
    obj: &mut Map<String, Value>,
    message: &str,
    title: Option<&str>,
    notification_type: &str,
) {
    obj.insert("message".into(), json!(message));
    if let Some(t) = title {
        obj.insert("title".into(), json!(t));
    }
    obj.insert("notification_type".into(), json!(notification_type));
}
