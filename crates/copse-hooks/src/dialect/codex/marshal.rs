//! The exact stdin a Codex hook reads, in Codex's field order: `session_id`,
//! `turn_id` (turn-scoped events), `transcript_path` (null without a transcript),
//! `cwd`, `hook_event_name`, `model`, `permission_mode`, then the event's own
//! fields.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::{tool_name, turn_scoped};
use crate::dialect::{Context, HookSpec};
use crate::event::{EventPayload, tool};

/// An `apply_patch` envelope for a canonical write or edit.
fn patch(tool_id: &str, input: &Map<String, Value>, root: Option<&Path>) -> String {
    let text = |keys: &[&str]| -> String {
        keys.iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .unwrap_or_default()
            .to_string()
    };
    let path = text(&["path", "file_path"]);
    // Codex patches name files relative to the working directory.
    let rel = root
        .and_then(|r| Path::new(&path).strip_prefix(r).ok())
        .map_or_else(|| path.clone(), |p| p.display().to_string());
    let lines =
        |prefix: char, s: &str| -> String { s.lines().map(|l| format!("{prefix}{l}\n")).collect() };
    let body = if tool_id == tool::WRITE_FILE {
        format!("*** Add File: {rel}\n{}", lines('+', &text(&["content"])))
    } else {
        format!(
            "*** Update File: {rel}\n@@\n{}{}",
            lines('-', &text(&["old_string", "old_str"])),
            lines('+', &text(&["new_string", "new_str"]))
        )
    };
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

/// A canonical tool call as Codex hooks see it: the tool name and `tool_input`
/// (`{command}` for Bash and apply_patch, the arguments for MCP tools).
pub fn codex_tool(
    tool_id: &str,
    input: &Map<String, Value>,
    root: Option<&Path>,
) -> Option<(String, Value)> {
    let (name, _) = tool_name(tool_id)?;
    let input = match name.as_str() {
        "Bash" => {
            // CLAUDE-REUSE: the shell input is Claude Code's `{command}`.
            let (_, claude) = crate::dialect::claude::claude_tool(tool_id, input, root)?;
            Value::Object(claude)
        }
        "apply_patch" => json!({"command": patch(tool_id, input, root)}),
        _ => Value::Object(input.clone()),
    };
    Some((name, input))
}

/// The stdin object for `hook` on `event`.
pub fn marshal(hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> Value {
    let root = ctx.root_for(hook);
    let event_name = hook.event.as_str();
    let mut obj = Map::new();
    obj.insert("session_id".into(), json!(ctx.session.conversation_id));
    if turn_scoped(event_name) {
        obj.insert("turn_id".into(), json!(ctx.session.generation_id));
    }
    if let EventPayload::SubagentStart { subagent_type }
    | EventPayload::SubagentStop { subagent_type, .. } = event
    {
        obj.insert("agent_type".into(), json!(subagent_type));
    }
    obj.insert("transcript_path".into(), Value::Null);
    obj.insert(
        "cwd".into(),
        json!(root.map(|p| p.display().to_string()).unwrap_or_default()),
    );
    obj.insert("hook_event_name".into(), json!(event_name));
    if event_name != "SessionEnd" {
        let model = ctx
            .session
            .model
            .as_ref()
            .map(|m| m.model.clone())
            .unwrap_or_default();
        obj.insert("model".into(), json!(model));
        obj.insert("permission_mode".into(), json!("default"));
    }
    let tool_fields = |obj: &mut Map<String, Value>, id: &str, input: &Map<String, Value>| {
        let (name, input) = codex_tool(id, input, root)
            .unwrap_or_else(|| (id.to_string(), Value::Object(input.clone())));
        obj.insert("tool_name".into(), json!(name));
        obj.insert("tool_input".into(), input);
    };
    match (event_name, event) {
        ("PreToolUse", EventPayload::ToolGate(call))
        | ("PermissionRequest", EventPayload::PermissionRequest(call)) => {
            tool_fields(&mut obj, &call.tool, &call.input);
        }
        ("PostToolUse", EventPayload::AfterToolUse(r)) => {
            tool_fields(&mut obj, &r.tool, &r.input);
            obj.insert("tool_response".into(), json!(r.output));
            obj.insert("tool_use_id".into(), json!(r.tool_call_id));
        }
        ("UserPromptSubmit", EventPayload::BeforeSubmitPrompt { prompt }) => {
            obj.insert("prompt".into(), json!(prompt));
        }
        (
            "Stop" | "SubagentStop",
            EventPayload::Stop { .. } | EventPayload::SubagentStop { .. },
        ) => {
            obj.insert("stop_hook_active".into(), json!(false));
            // The canonical stop does not carry the last assistant message.
            obj.insert("last_assistant_message".into(), Value::Null);
        }
        ("SessionStart", EventPayload::SessionStart { first_turn }) => {
            obj.insert(
                "source".into(),
                json!(if *first_turn { "startup" } else { "resume" }),
            );
        }
        ("SessionEnd", EventPayload::SessionEnd { reason, .. }) => {
            // CLAUDE-REUSE: the same reason vocabulary.
            obj.insert(
                "reason".into(),
                json!(crate::dialect::claude::session_end_reason(reason)),
            );
        }
        ("PreCompact", EventPayload::PreCompact(c)) => {
            obj.insert("trigger".into(), json!(c.trigger));
        }
        _ => {}
    }
    Value::Object(obj)
}
