//! The Cursor dialect: `~/.cursor/hooks.json` and `<root>/.cursor/hooks.json`.
//!
//! Flat entries `{command, matcher?, failClosed?, timeout?, glob?}` under Cursor's
//! camelCase event names. One canonical tool gate fires the dedicated event for its
//! tool (`beforeShellExecution`, `beforeMCPExecution`, `beforeReadFile`) *and* the
//! generic `preToolUse`, each with its own stdin. Failures fail closed by host policy;
//! `"failClosed": false` restores Cursor's fail-open behaviour.
//!
//! Layout: `parse` (hooks.json → specs), `marshal` (stdin), `interpret` (exit code
//! and stdout → outcome); the tool mappings shared by both directions live here.

mod interpret;
mod marshal;
pub mod parse;

pub use interpret::PROMPT_BLOCKED;
pub use marshal::cursor_version;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{
    Adapter, Context, Dialect, HookSpec, Interpretation, ParsedConfig, ProcessResult, Scope,
};
use crate::event::{CanonicalEvent, EventPayload, ToolCall, tool};

/// Cursor's default per-hook timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The 21 events Cursor documents (see `vendor` for provenance).
pub const PUBLISHED_EVENTS: [&str; 21] = [
    "sessionStart",
    "sessionEnd",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "subagentStart",
    "subagentStop",
    "beforeShellExecution",
    "afterShellExecution",
    "beforeMCPExecution",
    "afterMCPExecution",
    "beforeReadFile",
    "afterFileEdit",
    "beforeSubmitPrompt",
    "preCompact",
    "stop",
    "afterAgentResponse",
    "afterAgentThought",
    "beforeTabFileRead",
    "afterTabFileEdit",
    "workspaceOpen",
];

/// The canonical event a Cursor wire event is wired to, or `None` when it is
/// recognised but not supported.
pub fn canonical_for(event: &str) -> Option<CanonicalEvent> {
    match event {
        "beforeShellExecution" | "beforeMCPExecution" | "beforeReadFile" | "preToolUse" => {
            Some(CanonicalEvent::ToolGate)
        }
        "afterShellExecution" | "afterMCPExecution" | "postToolUse" | "postToolUseFailure" => {
            Some(CanonicalEvent::AfterToolUse)
        }
        "beforeSubmitPrompt" => Some(CanonicalEvent::BeforeSubmitPrompt),
        "afterFileEdit" => Some(CanonicalEvent::AfterFileEdit),
        "stop" => Some(CanonicalEvent::Stop),
        "subagentStart" => Some(CanonicalEvent::SubagentStart),
        "subagentStop" => Some(CanonicalEvent::SubagentStop),
        "sessionStart" => Some(CanonicalEvent::SessionStart),
        "sessionEnd" => Some(CanonicalEvent::SessionEnd),
        "preCompact" => Some(CanonicalEvent::PreCompact),
        "afterAgentResponse" => Some(CanonicalEvent::AfterAgentResponse),
        "afterAgentThought" => Some(CanonicalEvent::AfterAgentThought),
        _ => None,
    }
}

/// Why a published event is not wired (for `list` and the drift detector).
pub fn unsupported_reason(event: &str) -> Option<&'static str> {
    match event {
        "beforeTabFileRead" | "afterTabFileEdit" => {
            Some("Tab (inline completion) events: copse-hooks has no inline-tab surface")
        }
        "workspaceOpen" => Some(
            "fires outside any agent session and answers with plugin paths; copse-hooks has no plugin loader",
        ),
        _ => None,
    }
}

/// Cursor's tool-type token for a canonical tool id (the `preToolUse` subject).
pub fn tool_type(tool_id: &str) -> String {
    if tool::is_mcp(tool_id) {
        return format!("MCP:{tool_id}");
    }
    match tool_id {
        "run_shell" | "run_background" => "Shell",
        "read_file" | "list_dir" | "read_staged_diff" | "read_terminal" | "read_skill" => "Read",
        "write_file" | "str_replace" | "rename_file" | "make_directory" => "Write",
        "delete_file" => "Delete",
        "search_code" | "find_files" | "search_codebase" | "semantic_search" => "Grep",
        "explore" | "investigate_ci" | "delegate_step" => "Task",
        other => other,
    }
    .to_string()
}

/// A path made absolute against the hook's root (Cursor promises absolute paths).
fn absolute(root: Option<&Path>, path: &str) -> String {
    let p = Path::new(path);
    match root {
        Some(root) if p.is_relative() && !path.is_empty() => root.join(p).display().to_string(),
        _ => path.to_string(),
    }
}

/// A canonical tool input in the shape Cursor's `preToolUse` sends for its tool
/// type: `Shell` → `{command, working_directory}`, `Read`/`Delete` → `{file_path}`,
/// `Write` → `{file_path, content}` or `{file_path, old_string, new_string}`, `Grep`
/// → `{pattern, path?}`; MCP and other tools keep the canonical input.
pub fn cursor_tool_input(
    tool_id: &str,
    input: &Map<String, Value>,
    root: Option<&Path>,
) -> Map<String, Value> {
    let text = |keys: &[&str]| -> Option<String> {
        keys.iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .map(str::to_string)
    };
    let path = || json!(absolute(root, &text(&["path"]).unwrap_or_default()));
    let mut out = Map::new();
    match tool_id {
        tool::RUN_SHELL => {
            out.insert(
                "command".into(),
                json!(text(&["command"]).unwrap_or_default()),
            );
            let wd = text(&["working_directory", "cwd"])
                .map(|d| absolute(root, &d))
                .or_else(|| root.map(|r| r.display().to_string()))
                .unwrap_or_default();
            out.insert("working_directory".into(), json!(wd));
        }
        tool::READ_FILE | tool::DELETE_FILE => {
            out.insert("file_path".into(), path());
        }
        tool::WRITE_FILE => {
            out.insert("file_path".into(), path());
            out.insert(
                "content".into(),
                json!(text(&["content"]).unwrap_or_default()),
            );
        }
        tool::STR_REPLACE => {
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
        tool::SEARCH_CODE => {
            out.insert(
                "pattern".into(),
                json!(text(&["query", "pattern"]).unwrap_or_default()),
            );
            if let Some(p) = text(&["path"]).filter(|p| !p.is_empty()) {
                out.insert("path".into(), json!(absolute(root, &p)));
            }
        }
        _ => return input.clone(),
    }
    out
}

/// A Cursor-shaped `updated_input` back in the canonical tool's keys
/// (`file_path` → `path`, `pattern` → the original's search key, the
/// `working_directory` Cursor shows dropped unless the original had one).
pub fn canonical_tool_input(
    tool_id: &str,
    original: &Map<String, Value>,
    updated: &Map<String, Value>,
) -> Map<String, Value> {
    if tool::is_mcp(tool_id) {
        return updated.clone();
    }
    let pick = |candidates: &[&str]| -> String {
        candidates
            .iter()
            .find(|k| original.contains_key(**k))
            .or_else(|| candidates.first())
            .map(|k| (*k).to_string())
            .unwrap_or_default()
    };
    let mut out = Map::new();
    for (k, v) in updated {
        let key = match (tool_id, k.as_str()) {
            (tool::RUN_SHELL, "working_directory")
                if !original.contains_key("working_directory") =>
            {
                if original.contains_key("cwd") {
                    "cwd".to_string()
                } else {
                    continue;
                }
            }
            (_, "file_path") => "path".to_string(),
            (tool::STR_REPLACE, "old_string") => pick(&["old_string", "old_str"]),
            (tool::STR_REPLACE, "new_string") => pick(&["new_string", "new_str"]),
            (tool::SEARCH_CODE, "pattern") => pick(&["query", "pattern"]),
            _ => k.clone(),
        };
        out.insert(key, v.clone());
    }
    out
}

/// The Cursor adapter.
#[derive(Debug, Default, Clone, Copy)]
pub struct Cursor;

impl Cursor {
    /// The dedicated event a tool gate fires for this tool, if any.
    fn dedicated_gate_event(tool_id: &str) -> Option<&'static str> {
        if tool_id == tool::RUN_SHELL {
            Some("beforeShellExecution")
        } else if tool::is_mcp(tool_id) {
            Some("beforeMCPExecution")
        } else if tool_id == tool::READ_FILE {
            Some("beforeReadFile")
        } else {
            None
        }
    }

    /// The matcher subject for a hook on a tool gate.
    fn gate_subject<'a>(event: &str, call: &'a ToolCall) -> Cow<'a, str> {
        match event {
            "beforeShellExecution" => call.input_str("command").into(),
            "beforeMCPExecution" => call.tool.as_str().into(),
            "beforeReadFile" => "Read".into(),
            _ => tool_type(&call.tool).into(),
        }
    }
}

impl Adapter for Cursor {
    fn session_env_reaches_hooks(&self) -> bool {
        true
    }

    fn dialect(&self) -> Dialect {
        Dialect::Cursor
    }
    fn parse(&self, text: &str, source: &Path, scope: Scope, root: Option<&Path>) -> ParsedConfig {
        self.parse_file(text, source, scope, root)
    }

    fn applies(&self, hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> bool {
        let e = hook.event.as_str();
        let subject: Cow<'_, str> = match event {
            // Cursor has no notification or permission-request hook.
            EventPayload::Notification { .. } | EventPayload::PermissionRequest(_) => {
                return false;
            }
            EventPayload::ToolGate(call) => {
                if e != "preToolUse" && Self::dedicated_gate_event(&call.tool) != Some(e) {
                    return false;
                }
                Self::gate_subject(e, call)
            }
            EventPayload::AfterToolUse(result) => {
                let applies = match e {
                    "afterShellExecution" => result.tool == tool::RUN_SHELL,
                    "afterMCPExecution" => tool::is_mcp(&result.tool),
                    "postToolUse" => !result.is_error,
                    "postToolUseFailure" => result.is_error,
                    _ => false,
                };
                if !applies {
                    return false;
                }
                match e {
                    "afterShellExecution" => result
                        .input
                        .get("command")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .into(),
                    "afterMCPExecution" => result.tool.as_str().into(),
                    _ => tool_type(&result.tool).into(),
                }
            }
            EventPayload::AfterFileEdit { file_path, .. } => {
                if let Some(glob) = &hook.glob
                    && !glob.matches_path(Path::new(file_path), ctx.root_for(hook))
                {
                    return false;
                }
                // Every copse edit is an agent write; inline Tab edits do not exist here.
                "Write".into()
            }
            EventPayload::BeforeSubmitPrompt { .. } => "UserPromptSubmit".into(),
            EventPayload::Stop { .. } => "Stop".into(),
            EventPayload::SubagentStart { subagent_type }
            | EventPayload::SubagentStop { subagent_type, .. } => subagent_type.as_str().into(),
            EventPayload::SessionStart { .. } => "".into(),
            EventPayload::SessionEnd { reason, .. } => reason.as_str().into(),
            EventPayload::PreCompact(c) => c.trigger.as_str().into(),
            EventPayload::AfterAgentResponse { .. } => "AgentResponse".into(),
            EventPayload::AfterAgentThought { .. } => "AgentThought".into(),
        };
        hook.matcher.test(&subject).fires()
    }
    /// Tool gates only: the other events' subjects are fixed words.
    fn match_subject(&self, hook: &HookSpec, event: &EventPayload) -> Option<String> {
        match event {
            EventPayload::ToolGate(call)
                if hook.event == "preToolUse"
                    || Self::dedicated_gate_event(&call.tool) == Some(hook.event.as_str()) =>
            {
                Some(Self::gate_subject(&hook.event, call).into_owned())
            }
            _ => None,
        }
    }
    fn marshal(&self, hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> Value {
        marshal::marshal(hook, event, ctx)
    }

    fn interpret(
        &self,
        hook: &HookSpec,
        event: &EventPayload,
        run: &ProcessResult<'_>,
    ) -> Interpretation {
        interpret::interpret(hook, event, run)
    }

    fn user_state_dir(&self, home: &Path, _copse_dir: &Path) -> PathBuf {
        home.join(".cursor")
    }

    fn vendor_env(&self, hook: &HookSpec, ctx: &Context<'_>) -> Vec<(String, String)> {
        let host = &ctx.session.host;
        let mut env = Vec::new();
        if let Some(root) = ctx.root_for(hook) {
            let root = root.display().to_string();
            env.push(("CURSOR_PROJECT_DIR".to_string(), root.clone()));
            env.push(("CLAUDE_PROJECT_DIR".to_string(), root));
        }
        env.push(("CURSOR_VERSION".to_string(), cursor_version(ctx)));
        if let Some(email) = host.user_email.as_ref().filter(|s| !s.is_empty()) {
            env.push(("CURSOR_USER_EMAIL".to_string(), email.clone()));
        }
        if let Some(path) = host.transcript_path.as_ref().filter(|s| !s.is_empty()) {
            env.push(("CURSOR_TRANSCRIPT_PATH".to_string(), path.clone()));
        }
        if host.remote == Some(true) {
            env.push(("CURSOR_CODE_REMOTE".to_string(), "true".to_string()));
        }
        env
    }
}
