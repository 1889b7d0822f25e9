//! The stdin Cursor hooks receive, event by event.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{cursor_tool_input, tool_type};
use crate::dialect::{Context, HookSpec};
use crate::event::{EventPayload, McpServer};

/// The exact stdin object for a Cursor hook (field order is part of the contract).
pub(super) fn marshal(hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> Value {
    let mut obj = envelope(&hook.event, ctx);
    let cwd = ctx
        .root_for(hook)
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mut put = |k: &str, v: Value| {
        obj.insert(k.to_string(), v);
    };
    match event {
        EventPayload::ToolGate(call) => match hook.event.as_str() {
            "beforeShellExecution" => {
                put("command", json!(call.input_str("command")));
                put("cwd", json!(cwd));
            }
            "beforeMCPExecution" => {
                put("tool_name", json!(call.tool));
                put("tool_input", Value::Object(call.input.clone()));
                // Cursor sends the server's `url`, or its `command` for a local
                // server; an unknown server is a local one with no command.
                match &call.mcp_server {
                    Some(McpServer { url: Some(url), .. }) => put("url", json!(url)),
                    Some(McpServer {
                        command: Some(c), ..
                    }) => put("command", json!(c)),
                    _ => put("command", json!("")),
                }
            }
            "beforeReadFile" => {
                // Cursor promises an absolute path; a relative input path is
                // resolved against the hook's workspace root.
                let path = Path::new(call.input_str("path"));
                let file_path = match ctx.root_for(hook) {
                    Some(root) if path.is_relative() && !path.as_os_str().is_empty() => {
                        root.join(path).display().to_string()
                    }
                    _ => path.display().to_string(),
                };
                put("file_path", json!(file_path));
                put("content", json!(call.file_content.as_deref().unwrap_or("")));
                put("attachments", json!([]));
            }
            _ => {
                put("tool_name", json!(tool_type(&call.tool)));
                put(
                    "tool_input",
                    Value::Object(cursor_tool_input(
                        &call.tool,
                        &call.input,
                        ctx.root_for(hook),
                    )),
                );
                put("tool_use_id", json!(call.tool_use_id));
                put("cwd", json!(cwd));
                // What the agent said with the call; `""` when the host did not say.
                put(
                    "agent_message",
                    json!(call.agent_message.as_deref().unwrap_or("")),
                );
            }
        },
        EventPayload::AfterToolUse(r) => match hook.event.as_str() {
            "afterShellExecution" => {
                put(
                    "command",
                    json!(r.input.get("command").and_then(Value::as_str).unwrap_or("")),
                );
                put("output", json!(r.output));
                put("duration", json!(r.duration_ms));
            }
            "afterMCPExecution" => {
                put("tool_name", json!(r.tool));
                put(
                    "tool_input",
                    json!(Value::Object(r.input.clone()).to_string()),
                );
                put("result_json", json!(r.output));
                put("duration", json!(r.duration_ms));
            }
            "postToolUse" => {
                put("tool_name", json!(tool_type(&r.tool)));
                put(
                    "tool_input",
                    Value::Object(cursor_tool_input(&r.tool, &r.input, ctx.root_for(hook))),
                );
                put("tool_use_id", json!(r.tool_call_id));
                put("cwd", json!(cwd));
                put("duration", json!(r.duration_ms));
                // Cursor sends the result JSON-stringified, not raw text.
                put("tool_output", json!(json!(r.output).to_string()));
            }
            _ => {
                put("tool_name", json!(tool_type(&r.tool)));
                put(
                    "tool_input",
                    Value::Object(cursor_tool_input(&r.tool, &r.input, ctx.root_for(hook))),
                );
                put("tool_use_id", json!(r.tool_call_id));
                put("cwd", json!(cwd));
                put("duration", json!(r.duration_ms));
                let error = if r.output.is_empty() {
                    "Tool failed"
                } else {
                    r.output.as_str()
                };
                put("error_message", json!(error));
                put("failure_type", json!("error"));
                put("is_interrupt", json!(false));
            }
        },
        EventPayload::BeforeSubmitPrompt { prompt } => {
            put("prompt", json!(prompt));
            put("attachments", json!([]));
        }
        EventPayload::AfterFileEdit { file_path, edits } => {
            put("file_path", json!(file_path));
            put(
                "edits",
                serde_json::to_value(edits).unwrap_or_else(|_| json!([])),
            );
        }
        EventPayload::Stop { status } => {
            put("status", json!(status));
            // Stop follow-ups the host let continue this turn (0 while they are held).
            put(
                "loop_count",
                json!(ctx.session.host.loop_count.unwrap_or(0)),
            );
        }
        EventPayload::SubagentStart { subagent_type } => {
            put(
                "subagent_id",
                json!(crate::dialect::claude::agent_id(ctx.session, subagent_type)),
            );
            put("subagent_type", json!(subagent_type));
            put("task", json!(""));
            put("parent_conversation_id", json!(ctx.session.conversation_id));
            put(
                "tool_call_id",
                json!(format!(
                    "call_{}",
                    crate::dialect::claude::agent_id(ctx.session, subagent_type)
                )),
            );
            if let Some(model) = &ctx.session.model {
                put("subagent_model", json!(model.model));
            }
            put("is_parallel_worker", json!(false));
        }
        EventPayload::SubagentStop {
            subagent_type,
            status,
        } => {
            put("subagent_type", json!(subagent_type));
            put("status", json!(status));
            put("task", json!(""));
            put("description", json!(""));
            put(
                "summary",
                json!(
                    ctx.session
                        .host
                        .last_assistant_message
                        .clone()
                        .unwrap_or_default()
                ),
            );
            put("duration_ms", json!(0));
            put("message_count", json!(0));
            put("tool_call_count", json!(0));
            put(
                "loop_count",
                json!(ctx.session.host.loop_count.unwrap_or(0)),
            );
            put("modified_files", json!([]));
            put(
                "agent_transcript_path",
                json!(ctx.session.host.agent_transcript_path),
            );
        }
        EventPayload::SessionStart { .. } => {
            put("session_id", json!(ctx.session.conversation_id));
            put("is_background_agent", json!(false));
            put("composer_mode", json!("agent"));
        }
        EventPayload::SessionEnd {
            reason,
            duration_ms,
        } => {
            put("session_id", json!(ctx.session.conversation_id));
            put("reason", json!(reason));
            put("duration_ms", json!(duration_ms));
            put("is_background_agent", json!(false));
            put("final_status", json!(reason));
        }
        EventPayload::PreCompact(c) => {
            for (k, v) in crate::dialect::compaction_fields(c) {
                put(k, v);
            }
        }
        EventPayload::AfterAgentResponse { text } => put("text", json!(text)),
        EventPayload::AfterAgentThought { text, duration_ms } => {
            put("text", json!(text));
            if let Some(d) = duration_ms {
                put("duration_ms", json!(d));
            }
        }
        EventPayload::Notification { .. } | EventPayload::PermissionRequest(_) => {}
    }
    Value::Object(obj)
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
