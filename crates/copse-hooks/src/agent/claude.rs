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
use crate::outcome::{Decision, Verdict};

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

/// Input keys renamed from an agent's (first) to the canonical ones (second).
type Renames = &'static [(&'static str, &'static str)];

/// The path keys file tools of the Claude-shaped family use, all read as `path`.
const PATH_KEYS: Renames = &[
    ("file_path", "path"),
    ("absolute_path", "path"),
    ("filePath", "path"),
    ("target_file", "path"),
];

/// How a shell tool gives its command: one string, or an argv array (Codex's `shell`
/// and `local_shell`) that is quoted into one command line.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Command {
    Text,
    TextOrArgv,
}

// --- The Claude-shaped family's tool names (agent side) ---
/// Tool names of every agent we know that speaks Claude Code's hook protocol (Claude
/// Code itself, Codex, and the agents that copy the protocol with their own tool
/// names: Qwen Code and Gemini-named tools, Cursor-named, Cline-style, GitHub
/// Copilot-, OpenCode-, Factory Droid- and Augment-named tools), each with the
/// canonical tool it is and the input keys renamed to the canonical ones. A name not
/// here keeps its name and input (it is matched as itself). Claude Code's own rows
/// come first: the answer's `updatedInput` is written in Claude's keys.
const FAMILY_TOOLS: &[(&str, &str, Renames)] = &[
    // Claude Code.
    ("Bash", tool::RUN_SHELL, &[]),
    ("Read", tool::READ_FILE, PATH_KEYS),
    ("Write", tool::WRITE_FILE, PATH_KEYS),
    ("Edit", tool::STR_REPLACE, PATH_KEYS),
    ("MultiEdit", tool::STR_REPLACE, PATH_KEYS),
    ("Grep", tool::SEARCH_CODE, &[("pattern", "query")]),
    ("Agent", tool::EXPLORE, &[]),
    ("Task", tool::EXPLORE, &[]),
    // Gemini-named tools (Qwen Code).
    ("run_shell_command", tool::RUN_SHELL, &[]),
    ("read_file", tool::READ_FILE, PATH_KEYS),
    ("write_file", tool::WRITE_FILE, PATH_KEYS),
    ("replace", tool::STR_REPLACE, PATH_KEYS),
    // Codex (`shell` / `local_shell` give an argv; `exec_command` a `cmd`).
    ("shell", tool::RUN_SHELL, &[]),
    ("local_shell", tool::RUN_SHELL, &[]),
    ("exec_command", tool::RUN_SHELL, &[("cmd", "command")]),
    // Cursor-named tools.
    ("Shell", tool::RUN_SHELL, &[]),
    ("run_terminal_cmd", tool::RUN_SHELL, &[]),
    ("ReadFile", tool::READ_FILE, PATH_KEYS),
    ("edit_file", tool::STR_REPLACE, PATH_KEYS),
    // Cline, Roo Code, Kilo Code.
    ("execute_command", tool::RUN_SHELL, &[]),
    ("write_to_file", tool::WRITE_FILE, PATH_KEYS),
    // GitHub Copilot CLI, OpenCode.
    ("bash", tool::RUN_SHELL, &[]),
    ("powershell", tool::RUN_SHELL, &[]),
    ("view", tool::READ_FILE, PATH_KEYS),
    ("edit", tool::STR_REPLACE, PATH_KEYS),
    // Factory Droid.
    ("Execute", tool::RUN_SHELL, &[]),
    ("Create", tool::WRITE_FILE, PATH_KEYS),
    // Augment.
    ("launch-process", tool::RUN_SHELL, &[]),
    ("save-file", tool::WRITE_FILE, PATH_KEYS),
    ("str-replace-editor", tool::STR_REPLACE, PATH_KEYS),
];
// --- end of the Claude-shaped family's tool names ---

/// How the tool named `name` gives a shell command.
fn command_form(name: &str) -> Command {
    if matches!(name, "shell" | "local_shell") {
        Command::TextOrArgv
    } else {
        Command::Text
    }
}

/// The tool names of the Claude-shaped family and the canonical tool each is (for
/// docs and tests).
pub fn family_tools() -> impl Iterator<Item = (&'static str, &'static str)> {
    FAMILY_TOOLS.iter().map(|(name, id, _)| (*name, *id))
}

/// An argv as one shell command line: each word quoted when it needs it, so a hook
/// reads the command a shell would run.
fn argv_line(argv: &[Value]) -> Option<String> {
    let words: Option<Vec<&str>> = argv.iter().map(Value::as_str).collect();
    let words = words?;
    if words.is_empty() {
        return None;
    }
    let quote = |w: &str| {
        let plain = !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
        if plain {
            w.to_string()
        } else {
            format!("'{}'", w.replace('\'', "'\\''"))
        }
    };
    Some(words.into_iter().map(quote).collect::<Vec<_>>().join(" "))
}

/// A Claude (or Claude-shaped, as Codex and the family send) tool call as a
/// canonical one: the tool id and its canonical input. Unknown tools keep their name
/// and input.
pub fn canonical_tool(name: &str, input: &Map<String, Value>) -> (String, Map<String, Value>) {
    if tool::is_mcp(name) {
        return (name.to_string(), input.clone());
    }
    let Some((_, id, _)) = FAMILY_TOOLS.iter().find(|(n, _, _)| *n == name) else {
        return (name.to_string(), input.clone());
    };
    let mut out = input.clone();
    for (from, to) in renames_applied(name, input) {
        if let Some(v) = out.remove(from) {
            out.insert(to.to_string(), v);
        }
    }
    if command_form(name) == Command::TextOrArgv
        && let Some(Value::Array(argv)) = out.get("command")
        && let Some(line) = argv_line(argv)
    {
        out.insert("command".into(), Value::String(line));
    }
    ((*id).to_string(), out)
}

/// The input keys [`canonical_tool`] renames for this call, as (the agent's key, the
/// canonical key): a rename applies when the agent's key is there and the canonical
/// one is not. An input rewrite goes back through the same pairs.
pub fn renames_applied(
    name: &str,
    input: &Map<String, Value>,
) -> Vec<(&'static str, &'static str)> {
    let Some((_, _, renames)) = FAMILY_TOOLS.iter().find(|(n, _, _)| *n == name) else {
        return Vec::new();
    };
    let mut out: Vec<(&'static str, &'static str)> = Vec::new();
    for (from, to) in *renames {
        if input.contains_key(*from)
            && !input.contains_key(*to)
            && !out.iter().any(|(_, t)| t == to)
        {
            out.push((from, to));
        }
    }
    out
}

/// Claude Code's own tool names: a rewrite of these is written in Claude's shape.
const CLAUDE_OWN: [&str; 7] = ["Bash", "Read", "Write", "Edit", "Grep", "Agent", "Task"];

/// The agent's name for a canonical input key of the tool `name` (the error names
/// the field as the agent sent it).
fn agent_key(name: &str, input: &Map<String, Value>, canonical: &str) -> String {
    FAMILY_TOOLS
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

/// A gated tool call's `tool_input`, read strictly: it must be an object, and the
/// canonical call it maps to must have its tool's shape (a shell `command` that is a
/// string, …). The error names the field as the agent sent it.
pub(crate) fn gated_tool_call(
    wire: &str,
    name: &str,
    obj: &Map<String, Value>,
) -> Result<ToolCall, PayloadError> {
    let input = super::gated_input(wire, obj)?;
    let (id, canonical) = canonical_tool(name, &input);
    let call = ToolCall::new(id, canonical);
    super::check_call(wire, &call, |field| agent_key(name, &input, field))?;
    Ok(call)
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
    let tool_name = || -> Result<&str, PayloadError> {
        obj.get("tool_name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| PayloadError::Field {
                event: wire.to_string(),
                field: "tool_name",
            })
    };
    let tool_call = || -> Result<(String, Map<String, Value>), PayloadError> {
        let input = super::obj_of(obj, "tool_input");
        Ok(canonical_tool(tool_name()?, &input))
    };
    let event = match canonical {
        CanonicalEvent::ToolGate => EventPayload::ToolGate(
            gated_tool_call(wire, tool_name()?, obj)?.with_tool_use_id(text("tool_use_id")),
        ),
        CanonicalEvent::PermissionRequest => EventPayload::PermissionRequest(
            gated_tool_call(wire, tool_name()?, obj)?.with_tool_use_id(text("tool_use_id")),
        ),
        CanonicalEvent::Notification => EventPayload::Notification {
            message: text("message"),
            title: obj.get("title").and_then(Value::as_str).map(str::to_string),
            notification_type: text("notification_type"),
            details: Value::Null,
        },
        CanonicalEvent::AfterToolUse => {
            let (tool, input) = tool_call()?;
            EventPayload::AfterToolUse(tool_result(wire, obj, tool, input))
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

/// The result a Claude-shaped `PostToolUse` / `PostToolUseFailure` reports: for Bash,
/// what the command printed (stdout then stderr); otherwise the response as text.
fn tool_result(
    wire: &str,
    obj: &Map<String, Value>,
    tool: String,
    input: Map<String, Value>,
) -> ToolResult {
    let text = |k: &str| super::str_of(obj, k);
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
    ToolResult {
        tool,
        input,
        output,
        is_error: failed,
        duration_ms: obj.get("duration_ms").and_then(Value::as_u64).unwrap_or(0),
        tool_call_id: text("tool_use_id"),
        response: response.filter(|r| !r.is_null()).cloned(),
    }
}

/// Reads a Claude Code payload.
pub fn event(wire: &str, obj: &Map<String, Value>) -> Result<Option<EventPayload>, PayloadError> {
    claude_shaped_event(wire, obj)
}

/// The tool input for an `updatedInput`, in the calling agent's keys: Claude Code's
/// own tools (and names we do not map) in Claude's shape; a family tool with the
/// renames [`canonical_tool`] made undone, so the agent applies the rewrite rather
/// than ignore keys it does not know. `None` when the rewrite cannot be said in the
/// tool's input (a new command for a tool that takes an argv).
fn claude_input(
    call: &ToolCall,
    tool: &super::InboundTool,
    updated: &Map<String, Value>,
) -> Option<Map<String, Value>> {
    let mut merged = call.input.clone();
    merged.extend(updated.clone());
    let own = tool.name.is_empty()
        || CLAUDE_OWN.contains(&tool.name.as_str())
        || !FAMILY_TOOLS.iter().any(|(n, _, _)| *n == tool.name);
    if own {
        return Some(match claude::claude_tool(&call.tool, &merged, None) {
            Some((_, input)) => input,
            None => merged,
        });
    }
    if command_form(&tool.name) == Command::TextOrArgv
        && tool.argv
        && updated.contains_key("command")
    {
        return None;
    }
    for (from, to) in &tool.renames {
        if let Some(v) = merged.remove(*to) {
            merged.insert((*from).to_string(), v);
        }
    }
    Some(merged)
}

/// Writes a Claude Code answer (`tool`: the agent's own tool name and input keys).
pub fn answer(
    wire: &str,
    tool: &super::InboundTool,
    event: &EventPayload,
    reply: &Reply,
) -> Answer {
    let v = &reply.verdict;
    let mut out = Map::new();
    match event {
        EventPayload::ToolGate(call) => answer_gate(wire, tool, call, v, &mut out),
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
            if let Some(d) = super::permission_decision(v) {
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

/// The fields of a Claude answer to a `PreToolUse`: a halt, the permission decision
/// (a rewrite the tool cannot take is tightened to a deny), an input rewrite, context.
fn answer_gate(
    wire: &str,
    tool: &super::InboundTool,
    call: &ToolCall,
    v: &Verdict,
    out: &mut Map<String, Value>,
) {
    let mut fields = Map::new();
    if let Some(h) = &v.halt {
        out.insert("continue".into(), json!(false));
        out.insert("stopReason".into(), json!(h.reason));
    }
    let rewrite = match &v.updated_input {
        Some(u) if !blocks(v) => Some(claude_input(call, tool, u)),
        _ => None,
    };
    match v.decision {
        _ if rewrite == Some(None) => {
            // A rewrite the tool cannot take: tightened to a deny, never dropped.
            fields.insert("permissionDecision".into(), json!("deny"));
            fields.insert(
                "permissionDecisionReason".into(),
                json!(format!(
                    "a copse hook rewrote this command, which {}'s argv input cannot take",
                    tool.name
                )),
            );
        }
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
    if let Some(Some(input)) = rewrite {
        // Claude honours updatedInput only alongside a decision; "ask" keeps
        // the user in the loop (copse's Allow is never an approval).
        if !fields.contains_key("permissionDecision") {
            fields.insert("permissionDecision".into(), json!("ask"));
        }
        fields.insert("updatedInput".into(), Value::Object(input));
    }
    if let Some(c) = &v.inject_context {
        fields.insert("additionalContext".into(), json!(c));
    }
    if !fields.is_empty() {
        out.insert("hookSpecificOutput".into(), specific(wire, fields));
    }
}
