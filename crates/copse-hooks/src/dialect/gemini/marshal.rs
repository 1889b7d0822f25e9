//! The exact stdin a Gemini hook reads: the base fields (`session_id`,
//! `transcript_path`, `cwd`, `hook_event_name`, `timestamp`) then the event's own.

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{mcp_parts, session_end_reason, tool_name};
use crate::dialect::{Context, HookSpec};
use crate::event::{EventPayload, tool};

/// The current time as Gemini writes `timestamp` (ISO 8601, milliseconds, UTC).
pub fn now() -> String {
    let ts = jiff::Timestamp::now();
    ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// A path made absolute against the root (lexically).
fn absolute(root: Option<&Path>, path: &str) -> String {
    let p = Path::new(path);
    match root {
        Some(root) if p.is_relative() && !path.is_empty() => root
            .join(p)
            .components()
            .filter(|c| !matches!(c, Component::CurDir))
            .collect::<PathBuf>()
            .display()
            .to_string(),
        _ => path.to_string(),
    }
}

/// A canonical tool call as Gemini hooks see it: Gemini's tool name and argument
/// names (`file_path`, `old_string`, `dir_path`, …). `None` when Gemini has no such
/// tool.
pub fn gemini_tool(
    tool_id: &str,
    input: &Map<String, Value>,
    root: Option<&Path>,
) -> Option<(String, Map<String, Value>)> {
    let name = tool_name(tool_id)?;
    if tool::is_mcp(tool_id) {
        return Some((name, input.clone()));
    }
    let text = |keys: &[&str]| -> Option<String> {
        keys.iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .map(str::to_string)
    };
    let path = || {
        json!(absolute(
            root,
            &text(&["path", "file_path"]).unwrap_or_default()
        ))
    };
    let mut out = Map::new();
    match name.as_str() {
        "run_shell_command" => {
            out.insert(
                "command".into(),
                json!(text(&["command"]).unwrap_or_default()),
            );
            if let Some(d) = text(&["description"]) {
                out.insert("description".into(), json!(d));
            }
        }
        "read_file" => {
            out.insert("file_path".into(), path());
        }
        "write_file" => {
            out.insert("file_path".into(), path());
            out.insert(
                "content".into(),
                json!(text(&["content"]).unwrap_or_default()),
            );
        }
        "replace" => {
            out.insert("file_path".into(), path());
            out.insert(
                "old_string".into(),
                json!(text(&["old_string", "old_str"]).unwrap_or_default()),
            );
            out.insert(
                "new_string".into(),
                json!(text(&["new_string", "new_str"]).unwrap_or_default()),
            );
        }
        "grep_search" => {
            out.insert(
                "pattern".into(),
                json!(text(&["query", "pattern"]).unwrap_or_default()),
            );
            if let Some(p) = text(&["path"]).filter(|p| !p.is_empty()) {
                out.insert("dir_path".into(), json!(absolute(root, &p)));
            }
        }
        _ => return None,
    }
    Some((name, out))
}

/// Translates Gemini argument names in a `tool_input` rewrite back to the canonical
/// tool's keys, merged over the original input (Gemini merges, it never replaces).
pub fn canonical_input(
    tool_id: &str,
    original: &Map<String, Value>,
    update: &Map<String, Value>,
) -> Map<String, Value> {
    let rename = |key: &str| -> String {
        match (tool_name(tool_id).as_deref(), key) {
            (Some("read_file" | "write_file" | "replace"), "file_path") => "path".into(),
            (Some("grep_search"), "dir_path") => "path".into(),
            (Some("grep_search"), "pattern") if original.contains_key("query") => "query".into(),
            (Some("replace"), "old_string") if original.contains_key("old_str") => "old_str".into(),
            (Some("replace"), "new_string") if original.contains_key("new_str") => "new_str".into(),
            _ => key.to_string(),
        }
    };
    let mut merged = original.clone();
    for (k, v) in update {
        merged.insert(rename(k), v.clone());
    }
    merged
}

fn tool_fields(
    obj: &mut Map<String, Value>,
    tool_id: &str,
    input: &Map<String, Value>,
    root: Option<&Path>,
) {
    let (name, input) =
        gemini_tool(tool_id, input, root).unwrap_or_else(|| (tool_id.to_string(), input.clone()));
    obj.insert("tool_name".into(), json!(name));
    obj.insert("tool_input".into(), Value::Object(input));
    if let Some((server, tool)) = mcp_parts(tool_id) {
        obj.insert(
            "mcp_context".into(),
            json!({"server_name": server, "tool_name": tool}),
        );
    }
}

/// The stdin object for `hook` on `event`, stamped with `timestamp`.
pub fn marshal(hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>, timestamp: &str) -> Value {
    let root = ctx.root_for(hook);
    let mut obj = Map::new();
    obj.insert("session_id".into(), json!(ctx.session.conversation_id));
    obj.insert("transcript_path".into(), json!(""));
    obj.insert(
        "cwd".into(),
        json!(root.map(|p| p.display().to_string()).unwrap_or_default()),
    );
    obj.insert("hook_event_name".into(), json!(hook.event));
    obj.insert("timestamp".into(), json!(timestamp));
    match (hook.event.as_str(), event) {
        ("BeforeTool", EventPayload::ToolGate(call)) => {
            tool_fields(&mut obj, &call.tool, &call.input, root);
        }
        ("AfterTool", EventPayload::AfterToolUse(r)) => {
            tool_fields(&mut obj, &r.tool, &r.input, root);
            let mut response = Map::new();
            response.insert("llmContent".into(), json!(r.output));
            response.insert("returnDisplay".into(), json!(r.output));
            if r.is_error {
                response.insert("error".into(), json!(r.output));
            }
            // `mcp_context` comes last in Gemini's AfterTool input; keep the order.
            let mcp = obj.remove("mcp_context");
            obj.insert("tool_response".into(), Value::Object(response));
            if let Some(m) = mcp {
                obj.insert("mcp_context".into(), m);
            }
        }
        ("BeforeAgent", EventPayload::BeforeSubmitPrompt { prompt }) => {
            obj.insert("prompt".into(), json!(prompt));
        }
        ("AfterAgent", EventPayload::Stop { .. }) => {
            // The canonical stop carries neither the prompt nor the response text.
            obj.insert("prompt".into(), json!(""));
            obj.insert("prompt_response".into(), json!(""));
            obj.insert("stop_hook_active".into(), json!(false));
        }
        ("SessionStart", EventPayload::SessionStart { first_turn }) => {
            obj.insert(
                "source".into(),
                json!(if *first_turn { "startup" } else { "resume" }),
            );
        }
        ("SessionEnd", EventPayload::SessionEnd { reason, .. }) => {
            obj.insert("reason".into(), json!(session_end_reason(reason)));
        }
        ("PreCompress", EventPayload::PreCompact(c)) => {
            obj.insert("trigger".into(), json!(c.trigger));
        }
        (
            "Notification",
            EventPayload::Notification {
                notification_type,
                message,
                details,
                ..
            },
        ) => {
            obj.insert("notification_type".into(), json!(notification_type));
            obj.insert("message".into(), json!(message));
            obj.insert(
                "details".into(),
                if details.is_null() {
                    json!({})
                } else {
                    details.clone()
                },
            );
        }
        _ => {}
    }
    Value::Object(obj)
}
