//! The stdin Cursor hooks receive, event by event.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{cursor_tool_input, tool_type};
use crate::dialect::{Context, HookSpec};
use crate::event::{EventPayload, McpServer, ToolCall, ToolResult};

/// The exact stdin object for a Cursor hook (field order is part of the contract).
pub(super) fn marshal(hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> Value {
    let mut obj = envelope(&hook.event, ctx);
    let root = ctx.root_for(hook);
    let cwd = root.map(|p| p.display().to_string()).unwrap_or_default();
    match event {
        EventPayload::ToolGate(call) => tool_gate(&mut obj, &hook.event, call, root, &cwd),
        EventPayload::AfterToolUse(r) => tool_result(&mut obj, &hook.event, r, root, &cwd),
        EventPayload::BeforeSubmitPrompt { prompt } => {
            put(&mut obj, "prompt", json!(prompt));
            put(&mut obj, "attachments", json!([]));
        }
        EventPayload::AfterFileEdit { file_path, edits } => {
            put(&mut obj, "file_path", json!(file_path));
            put(
                &mut obj,
                "edits",
                serde_json::to_value(edits).unwrap_or_else(|_| json!([])),
            );
        }
        EventPayload::Stop { status } => stop(&mut obj, status, ctx),
        EventPayload::SubagentStart { subagent_type } => {
            subagent_start(&mut obj, subagent_type, ctx)
        }
        EventPayload::SubagentStop {
            subagent_type,
            status,
        } => subagent_stop(&mut obj, subagent_type, status, ctx),
        EventPayload::SessionStart { .. } => session_start(&mut obj, ctx),
        EventPayload::SessionEnd {
            reason,
            duration_ms,
        } => session_end(&mut obj, reason, *duration_ms, ctx),
        EventPayload::PreCompact(c) => {
            for (k, v) in crate::dialect::compaction_fields(c) {
                put(&mut obj, k, v);
            }
        }
        EventPayload::AfterAgentResponse { text } => put(&mut obj, "text", json!(text)),
        EventPayload::AfterAgentThought { text, duration_ms } => {
            put(&mut obj, "text", json!(text));
            if let Some(d) = duration_ms {
                put(&mut obj, "duration_ms", json!(d));
            }
        }
        EventPayload::Notification { .. } | EventPayload::PermissionRequest(_) => {}
    }
    Value::Object(obj)
}

/// Inserts one field into the packet.
fn put(obj: &mut Map<String, Value>, k: &str, v: Value) {
    obj.insert(k.to_string(), v);
}

/// A tool call about to run, in the shape of the Cursor gate it goes to (shell,
/// MCP, file read, else the generic `preToolUse`).
fn tool_gate(
    obj: &mut Map<String, Value>,
    wire_event: &str,
    call: &ToolCall,
    root: Option<&Path>,
    cwd: &str,
) {
    match wire_event {
        "beforeShellExecution" => {
            put(obj, "command", json!(call.input_str("command")));
            put(obj, "cwd", json!(cwd));
        }
        "beforeMCPExecution" => mcp_gate(obj, call),
        "beforeReadFile" => read_file_gate(obj, call, root),
        _ => {
            put(obj, "tool_name", json!(tool_type(&call.tool)));
            put(
                obj,
                "tool_input",
                Value::Object(cursor_tool_input(&call.tool, &call.input, root)),
            );
            put(obj, "tool_use_id", json!(call.tool_use_id));
            put(obj, "cwd", json!(cwd));
            // What the agent said with the call; `""` when the host did not say.
            put(
                obj,
                "agent_message",
                json!(call.agent_message.as_deref().unwrap_or("")),
            );
        }
    }
}

/// `beforeMCPExecution`: the MCP tool, its input, and its server's url or command.
fn mcp_gate(obj: &mut Map<String, Value>, call: &ToolCall) {
    put(obj, "tool_name", json!(call.tool));
    put(obj, "tool_input", Value::Object(call.input.clone()));
    // Cursor sends the server's `url`, or its `command` for a local
    // server; an unknown server is a local one with no command.
    match &call.mcp_server {
        Some(McpServer { url: Some(url), .. }) => put(obj, "url", json!(url)),
        Some(McpServer {
            command: Some(c), ..
        }) => put(obj, "command", json!(c)),
        _ => put(obj, "command", json!("")),
    }
}

/// `beforeReadFile`: the absolute file path, its content, and no attachments.
fn read_file_gate(obj: &mut Map<String, Value>, call: &ToolCall, root: Option<&Path>) {
    // Cursor promises an absolute path; a relative input path is
    // resolved against the hook's workspace root.
    let path = Path::new(call.input_str("path"));
    let file_path = match root {
        Some(root) if path.is_relative() && !path.as_os_str().is_empty() => {
            root.join(path).display().to_string()
        }
        _ => path.display().to_string(),
    };
    put(obj, "file_path", json!(file_path));
    put(
        obj,
        "content",
        json!(call.file_content.as_deref().unwrap_or("")),
    );
    put(obj, "attachments", json!([]));
}

/// A finished tool call, in the shape of the Cursor event it goes to (shell, MCP,
/// `postToolUse`, else `postToolUseFailure`).
fn tool_result(
    obj: &mut Map<String, Value>,
    wire_event: &str,
    r: &ToolResult,
    root: Option<&Path>,
    cwd: &str,
) {
    match wire_event {
        "afterShellExecution" => {
            put(
                obj,
                "command",
                json!(r.input.get("command").and_then(Value::as_str).unwrap_or("")),
            );
            put(obj, "output", json!(r.output));
            put(obj, "duration", json!(r.duration_ms));
        }
        "afterMCPExecution" => {
            put(obj, "tool_name", json!(r.tool));
            put(
                obj,
                "tool_input",
                json!(Value::Object(r.input.clone()).to_string()),
            );
            put(obj, "result_json", json!(r.output));
            put(obj, "duration", json!(r.duration_ms));
        }
        "postToolUse" => {
            tool_result_common(obj, r, root, cwd);
            // Cursor sends the result JSON-stringified, not raw text.
            put(obj, "tool_output", json!(json!(r.output).to_string()));
        }
        _ => {
            tool_result_common(obj, r, root, cwd);
            let error = if r.output.is_empty() {
                "Tool failed"
            } else {
                r.output.as_str()
            };
            put(obj, "error_message", json!(error));
            put(obj, "failure_type", json!("error"));
            put(obj, "is_interrupt", json!(false));
        }
    }
}

/// The fields `postToolUse` and `postToolUseFailure` share: tool, input, id, cwd,
/// duration.
fn tool_result_common(
    obj: &mut Map<String, Value>,
    r: &ToolResult,
    root: Option<&Path>,
    cwd: &str,
) {
    put(obj, "tool_name", json!(tool_type(&r.tool)));
    put(
        obj,
        "tool_input",
        Value::Object(cursor_tool_input(&r.tool, &r.input, root)),
    );
    put(obj, "tool_use_id", json!(r.tool_call_id));
    put(obj, "cwd", json!(cwd));
    put(obj, "duration", json!(r.duration_ms));
}

/// `stop`: the status and the loop count.
fn stop(obj: &mut Map<String, Value>, status: &str, ctx: &Context<'_>) {
    put(obj, "status", json!(status));
    // Stop follow-ups the host let continue this turn (0 while they are held).
    put(
        obj,
        "loop_count",
        json!(ctx.session.host.loop_count.unwrap_or(0)),
    );
}

/// `subagentStart`: the subagent's id, type, parent, call id and model.
fn subagent_start(obj: &mut Map<String, Value>, subagent_type: &str, ctx: &Context<'_>) {
    put(
        obj,
        "subagent_id",
        json!(crate::dialect::claude::agent_id(ctx.session, subagent_type)),
    );
    put(obj, "subagent_type", json!(subagent_type));
    put(obj, "task", json!(""));
    put(
        obj,
        "parent_conversation_id",
        json!(ctx.session.conversation_id),
    );
    put(
        obj,
        "tool_call_id",
        json!(format!(
            "call_{}",
            crate::dialect::claude::agent_id(ctx.session, subagent_type)
        )),
    );
    if let Some(model) = &ctx.session.model {
        put(obj, "subagent_model", json!(model.model));
    }
    put(obj, "is_parallel_worker", json!(false));
}

/// `subagentStop`: the subagent's type, status, summary and (mostly zero) counts.
fn subagent_stop(
    obj: &mut Map<String, Value>,
    subagent_type: &str,
    status: &str,
    ctx: &Context<'_>,
) {
    let host = &ctx.session.host;
    put(obj, "subagent_type", json!(subagent_type));
    put(obj, "status", json!(status));
    put(obj, "task", json!(""));
    put(obj, "description", json!(""));
    put(
        obj,
        "summary",
        json!(host.last_assistant_message.clone().unwrap_or_default()),
    );
    put(obj, "duration_ms", json!(0));
    put(obj, "message_count", json!(0));
    put(obj, "tool_call_count", json!(0));
    put(obj, "loop_count", json!(host.loop_count.unwrap_or(0)));
    put(obj, "modified_files", json!([]));
    put(
        obj,
        "agent_transcript_path",
        json!(host.agent_transcript_path),
    );
}

/// `sessionStart`: the session id, not a background agent, in agent mode.
fn session_start(obj: &mut Map<String, Value>, ctx: &Context<'_>) {
    put(obj, "session_id", json!(ctx.session.conversation_id));
    put(obj, "is_background_agent", json!(false));
    put(obj, "composer_mode", json!("agent"));
}

/// `sessionEnd`: the session id, why it ended, how long it lasted.
fn session_end(obj: &mut Map<String, Value>, reason: &str, duration_ms: u64, ctx: &Context<'_>) {
    put(obj, "session_id", json!(ctx.session.conversation_id));
    put(obj, "reason", json!(reason));
    put(obj, "duration_ms", json!(duration_ms));
    put(obj, "is_background_agent", json!(false));
    put(obj, "final_status", json!(reason));
}

/// The version a Cursor hook is told (`cursor_version`, `CURSOR_VERSION`): the
/// host's, else this engine's as `copse-hooks/<version>` — always present, as in
/// Cursor, so scripts that detect Cursor by it do.
pub fn cursor_version(ctx: &Context<'_>) -> String {
    ctx.session
        .host
        .host_version
        .clone()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| format!("copse-hooks/{}", env!("CARGO_PKG_VERSION")))
}

/// The Cursor envelope: ids, event name, version, roots, user, transcript, then the
/// model when known.
fn envelope(wire_event: &str, ctx: &Context<'_>) -> Map<String, Value> {
    let host = &ctx.session.host;
    let mut obj = Map::new();
    obj.insert("conversation_id".into(), json!(ctx.session.conversation_id));
    obj.insert("generation_id".into(), json!(ctx.session.generation_id));
    obj.insert("hook_event_name".into(), json!(wire_event));
    obj.insert("cursor_version".into(), json!(cursor_version(ctx)));
    let roots: Vec<String> = ctx
        .workspace_roots
        .iter()
        .map(|p: &PathBuf| p.display().to_string())
        .collect();
    obj.insert("workspace_roots".into(), json!(roots));
    obj.insert("user_email".into(), json!(host.user_email));
    obj.insert("transcript_path".into(), json!(host.transcript_path));
    if let Some(model) = &ctx.session.model {
        obj.insert("model".into(), json!(model.model));
        obj.insert("model_id".into(), json!(model.model_id));
        obj.insert(
            "model_params".into(),
            serde_json::to_value(&model.model_params).unwrap_or(Value::Array(Vec::new())),
        );
    }
    obj
}
