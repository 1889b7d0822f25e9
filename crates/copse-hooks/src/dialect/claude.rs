//! The Claude Code dialect: `~/.claude/settings.json`, `<root>/.claude/settings.json`
//! and `<root>/.claude/settings.local.json`.
//!
//! Hooks live under the settings file's `hooks` key, three levels deep: event name,
//! then matcher groups `{matcher?, hooks: [...]}`, then handlers
//! `{type: "command", command, timeout?}`. Every handler becomes its own [`HookSpec`]
//! whose `entry` is the 1-based index of its group. Handlers of other types (`http`,
//! `prompt`, `agent`, `mcp_tool`) are reported and kept as unsupported specs so `list`
//! shows them; they never run.
//!
//! Matchers are group-level: empty, absent or `*` match all; a pattern made only of
//! letters, digits, `_` and `|` is a list of exact names; anything else is an
//! unanchored regex. Canonical tools are shown to Claude hooks under Claude's tool
//! names (`run_shell` → `Bash`, …) with Claude-shaped input; a tool with no Claude
//! equivalent is never shown to a Claude hook. Exit 2 means "block" with each event's
//! own semantics; other non-zero exits are failures, which fail closed by host policy
//! on gated events.

pub mod plugin;
pub mod rule;

pub use rule::{PermissionRule, RuleError};

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{
    Adapter, Context, Dialect, HookMatcher, HookSpec, Interpretation, ParsedConfig, ProcessResult,
    Scope, seconds, string_field, timeout_seconds,
};
use crate::event::{CanonicalEvent, EventPayload, SessionIdentity, ToolResult, tool};
use crate::matcher::{MatcherError, RegexMatcher};
use crate::outcome::{Decision, FailureKind, FailurePolicy, Halt, Outcome, QueueRequest};

/// Claude Code's default timeout for a command hook (10 minutes since v2.1.3).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Claude Code's default timeout for a `UserPromptSubmit` command hook.
pub const USER_PROMPT_SUBMIT_TIMEOUT: Duration = Duration::from_secs(30);

/// The halt reason when a `UserPromptSubmit` hook blocks without saying why.
pub const PROMPT_BLOCKED: &str = "Prompt submission was blocked by a UserPromptSubmit hook.";

/// The 31 hook events Claude Code documents (hooks reference and SchemaStore schema,
/// v2.1.240), in the schema's order.
pub const PUBLISHED_EVENTS: [&str; 31] = [
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "Notification",
    "UserPromptSubmit",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "Elicitation",
    "ElicitationResult",
    "TeammateIdle",
    "TaskCompleted",
    "Setup",
    "InstructionsLoaded",
    "CwdChanged",
    "FileChanged",
    "ConfigChange",
    "WorktreeCreate",
    "WorktreeRemove",
    "SessionStart",
    "SessionEnd",
    "PostToolBatch",
    "TaskCreated",
    "PermissionDenied",
    "UserPromptExpansion",
    "MessageDisplay",
    "DirectoryAdded",
];

/// The canonical event a Claude wire event is wired to, or `None` when it is not
/// wired (recognised-but-unsupported or unknown).
pub fn canonical_for(event: &str) -> Option<CanonicalEvent> {
    match event {
        "PreToolUse" => Some(CanonicalEvent::ToolGate),
        "PostToolUse" | "PostToolUseFailure" => Some(CanonicalEvent::AfterToolUse),
        "UserPromptSubmit" => Some(CanonicalEvent::BeforeSubmitPrompt),
        "Stop" => Some(CanonicalEvent::Stop),
        "SubagentStart" => Some(CanonicalEvent::SubagentStart),
        "SubagentStop" => Some(CanonicalEvent::SubagentStop),
        "SessionStart" => Some(CanonicalEvent::SessionStart),
        "SessionEnd" => Some(CanonicalEvent::SessionEnd),
        "PreCompact" => Some(CanonicalEvent::PreCompact),
        "Notification" => Some(CanonicalEvent::Notification),
        "PermissionRequest" => Some(CanonicalEvent::PermissionRequest),
        _ => None,
    }
}

/// Why a published event is not wired (for `list` and the drift detector); `None` for
/// wired events and for names Claude Code does not publish.
pub fn unsupported_reason(event: &str) -> Option<&'static str> {
    let reason = match event {
        "PermissionDenied" => "fires on auto-mode classifier denials; copse has no such classifier",
        "StopFailure" => "no canonical event for a turn that ends on an API error yet",
        "PostCompact" => "no canonical event after compaction yet",
        "Elicitation" | "ElicitationResult" => {
            "MCP elicitation requests are not routed through copse-hooks"
        }
        "TeammateIdle" | "TaskCompleted" | "TaskCreated" => {
            "agent teams and the task list are Claude Code features with no copse equivalent"
        }
        "Setup" => "fires only for Claude Code's --init / --maintenance runs",
        "InstructionsLoaded" => "no canonical event for instruction files being loaded",
        "CwdChanged" => "a copse session's working directory never changes mid-session",
        "FileChanged" => "copse-hooks has no file watcher",
        "ConfigChange" => "no canonical event for settings changing mid-session",
        "WorktreeCreate" | "WorktreeRemove" => {
            "copse manages its own worktrees; hooks cannot replace that step"
        }
        "PostToolBatch" => "no canonical event for a batch of parallel tool calls yet",
        "UserPromptExpansion" => "copse has no slash-command or MCP-prompt expansion step",
        "MessageDisplay" => "no canonical event for streamed display text",
        "DirectoryAdded" => "no canonical event for a workspace root added mid-session",
        _ => return None,
    };
    Some(reason)
}

/// Whether a wired event tests its group's matcher (`UserPromptSubmit` and `Stop`
/// ignore it, as Claude Code does).
pub fn uses_matcher(event: &str) -> bool {
    !matches!(event, "UserPromptSubmit" | "Stop")
}

/// The default timeout of a command hook on `event`.
pub fn default_timeout(event: &str) -> Duration {
    if event == "UserPromptSubmit" {
        USER_PROMPT_SUBMIT_TIMEOUT
    } else {
        DEFAULT_TIMEOUT
    }
}

/// Claude's tool name for a canonical tool id, or `None` when Claude has no
/// equivalent (such calls are never shown to Claude hooks).
pub fn tool_name(tool_id: &str) -> Option<String> {
    if tool::is_mcp(tool_id) {
        return Some(tool_id.to_string());
    }
    let name = match tool_id {
        tool::RUN_SHELL => "Bash",
        tool::READ_FILE => "Read",
        tool::WRITE_FILE => "Write",
        tool::STR_REPLACE => "Edit",
        tool::SEARCH_CODE => "Grep",
        tool::EXPLORE => "Agent",
        _ => return None,
    };
    Some(name.to_string())
}

/// A canonical tool call as Claude hooks see it: Claude's tool name and
/// `tool_input`. Relative paths are made absolute against `root` (Claude promises
/// absolute paths). `None` when Claude has no equivalent.
pub fn claude_tool(
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
    let path = || json!(absolute(root, &text(&["path"]).unwrap_or_default()));
    let mut out = Map::new();
    match name.as_str() {
        "Bash" => {
            out.insert(
                "command".into(),
                json!(text(&["command"]).unwrap_or_default()),
            );
        }
        "Read" => {
            out.insert("file_path".into(), path());
        }
        "Write" => {
            out.insert("file_path".into(), path());
            out.insert(
                "content".into(),
                json!(text(&["content"]).unwrap_or_default()),
            );
        }
        "Edit" => {
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
        "Grep" => {
            out.insert(
                "pattern".into(),
                json!(text(&["query", "pattern"]).unwrap_or_default()),
            );
            if let Some(p) = text(&["path"]).filter(|p| !p.is_empty()) {
                out.insert("path".into(), json!(absolute(root, &p)));
            }
        }
        "Agent" => {
            if let Some(d) = text(&["description"]) {
                out.insert("description".into(), json!(d));
            }
            out.insert(
                "prompt".into(),
                json!(text(&["prompt", "task", "query"]).unwrap_or_default()),
            );
        }
        _ => return None,
    }
    Some((name, out))
}

/// Translates a Claude-shaped `updatedInput` back into the canonical tool's input
/// keys (`file_path` → `path`, …). Keys with no canonical counterpart pass through.
pub fn canonical_input(
    tool_id: &str,
    original: &Map<String, Value>,
    updated: &Map<String, Value>,
) -> Map<String, Value> {
    // The canonical key a Claude key came from: the first candidate the original
    // input used, else the first candidate.
    let pick = |candidates: &[&'static str]| -> String {
        candidates
            .iter()
            .find(|k| original.contains_key(**k))
            .or_else(|| candidates.first())
            .map(|k| (*k).to_string())
            .unwrap_or_default()
    };
    let rename = |key: &str| -> String {
        let candidates: &[&'static str] = match (tool_name(tool_id).as_deref(), key) {
            (Some("Read" | "Write" | "Edit" | "Grep"), "file_path" | "path") => &["path"],
            (Some("Edit"), "old_string") => &["old_string", "old_str"],
            (Some("Edit"), "new_string") => &["new_string", "new_str"],
            (Some("Grep"), "pattern") => &["query", "pattern"],
            (Some("Agent"), "prompt") => &["prompt", "task", "query"],
            _ => return key.to_string(),
        };
        pick(candidates)
    };
    updated
        .iter()
        .map(|(k, v)| (rename(k), v.clone()))
        .collect()
}

/// A canonical session-end reason in Claude's vocabulary (`clear`, `resume`,
/// `logout`, `prompt_input_exit`, `other`).
pub fn session_end_reason(reason: &str) -> &'static str {
    match reason {
        "clear" => "clear",
        "resume" => "resume",
        "logout" => "logout",
        "prompt_input_exit" | "user_close" => "prompt_input_exit",
        _ => "other",
    }
}

/// Compiles a group matcher: empty, absent or `*` match all; only letters, digits,
/// `_`, `-`, spaces, `,` and `|` is a list of exact names separated by `|` or `,`
/// (`Edit, Write`, `code-reviewer`, `mcp__brave-search__search`); anything else is an
/// unanchored regex.
pub fn compile_matcher(pattern: &str) -> Result<HookMatcher, MatcherError> {
    let p = pattern.trim();
    if p.is_empty() || p == "*" {
        return Ok(HookMatcher::Always);
    }
    if p.chars().all(|c| {
        c.is_ascii_alphanumeric() || c == '_' || c == '|' || c == '-' || c == ',' || c == ' '
    }) {
        return Ok(HookMatcher::Names(
            p.split(['|', ','])
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect(),
        ));
    }
    RegexMatcher::new(p).map(HookMatcher::Regex)
}

/// The events whose handlers evaluate an `if` condition; on every other event a
/// handler with `if` never runs (as in Claude Code).
pub const IF_EVENTS: [&str; 5] = [
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "PermissionDenied",
];

/// Whether a hook failure on `event` may block: only events Claude Code lets a hook
/// block by its answer and that gate an action here. Elsewhere a failure is the
/// vendor's non-blocking error, whatever the host policy.
pub fn failure_can_block(event: &str) -> bool {
    matches!(
        event,
        "PreToolUse" | "UserPromptSubmit" | "PermissionRequest"
    )
}

/// Whether plain (non-JSON) stdout on `event` is context for Claude.
pub fn plain_stdout_is_context(event: &str) -> bool {
    matches!(
        event,
        "UserPromptSubmit" | "UserPromptExpansion" | "SessionStart"
    )
}

/// What makes two Claude handlers "the same handler" for de-duplication across
/// settings files: event, command, `if` condition and async mode.
pub fn handler_identity(hook: &HookSpec) -> (String, String, Option<String>, bool) {
    (
        hook.event.clone(),
        hook.command.clone(),
        hook.options.condition.as_ref().map(|c| c.source.clone()),
        hook.run_async,
    )
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

/// A path made absolute against the root (lexically; `.` components dropped).
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

/// Quotes one word for `sh`, keeping `${CLAUDE_PROJECT_DIR}` as a live expansion
/// (Claude substitutes it in exec-form arguments).
fn shell_word(word: &str) -> String {
    const VAR: &str = "${CLAUDE_PROJECT_DIR}";
    if word.is_empty() {
        return "''".to_string();
    }
    let quote = |s: &str| -> String {
        if s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-=:,+@%".contains(c))
        {
            s.to_string()
        } else {
            format!("'{}'", s.replace('\'', r"'\''"))
        }
    };
    word.split(VAR)
        .map(|piece| {
            if piece.is_empty() {
                String::new()
            } else {
                quote(piece)
            }
        })
        .collect::<Vec<_>>()
        .join("\"${CLAUDE_PROJECT_DIR}\"")
}

/// The Claude adapter.
#[derive(Debug, Default, Clone, Copy)]
pub struct Claude;

/// The file's name as a message starts with it (`.claude/settings.local.json`).
fn display_name(source: &Path) -> String {
    let file = source
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "settings.json".to_string());
    format!(".claude/{file}")
}

/// A hint for an unknown event name: the Claude name of a Cursor event, or the
/// right spelling of a published one.
fn suggestion(event: &str) -> String {
    let cursor_map = [
        ("preToolUse", "PreToolUse"),
        ("postToolUse", "PostToolUse"),
        ("postToolUseFailure", "PostToolUseFailure"),
        ("beforeSubmitPrompt", "UserPromptSubmit"),
        ("stop", "Stop"),
        ("subagentStart", "SubagentStart"),
        ("subagentStop", "SubagentStop"),
        ("sessionStart", "SessionStart"),
        ("sessionEnd", "SessionEnd"),
        ("preCompact", "PreCompact"),
        ("beforeShellExecution", "PreToolUse with matcher \"Bash\""),
        ("beforeMCPExecution", "PreToolUse with matcher \"mcp__.*\""),
        ("beforeReadFile", "PreToolUse with matcher \"Read\""),
        ("afterShellExecution", "PostToolUse with matcher \"Bash\""),
        ("afterMCPExecution", "PostToolUse with matcher \"mcp__.*\""),
        ("afterFileEdit", "PostToolUse with matcher \"Edit|Write\""),
    ];
    if let Some((_, claude)) = cursor_map.iter().find(|(c, _)| *c == event) {
        return format!(" (\"{event}\" is a Cursor event name; in settings.json use {claude})");
    }
    if let Some(known) = PUBLISHED_EVENTS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(event))
    {
        return format!(" (did you mean \"{known}\"? Claude Code event names are PascalCase)");
    }
    String::new()
}

/// What parsing one handler found.
struct Handler {
    command: String,
    /// Listed but never run (another handler type, an `if` on an event without
    /// tool context, another shell).
    inactive: bool,
    timeout: Duration,
    condition: Option<PermissionRule>,
    run_async: bool,
    async_rewake: bool,
}

impl Claude {
    /// Reads one handler object; `None` (after a warning) when it is unusable.
    fn handler(
        out: &mut ParsedConfig,
        ctx: (&Path, Scope, &str, bool),
        label: &str,
        obj: &Map<String, Value>,
    ) -> Option<Handler> {
        let (source, scope, event, wired) = ctx;
        let note = |out: &mut ParsedConfig, message: String| {
            if wired {
                out.warn(source, scope, Some(event), message);
            }
        };
        let kind = match obj.get("type") {
            Some(Value::String(k)) => k.as_str(),
            None | Some(Value::Null) => {
                if obj.contains_key("command") {
                    note(
                        out,
                        format!(
                            "{label} has no \"type\"; treated as a command hook (Claude Code requires \"type\": \"command\")"
                        ),
                    );
                }
                "command"
            }
            Some(other) => {
                note(
                    out,
                    format!("{label} has a non-string \"type\" ({other}) — skipped"),
                );
                return None;
            }
        };
        if kind != "command" {
            let main = match kind {
                "http" => string_field(obj, &["url"]),
                "prompt" | "agent" => string_field(obj, &["prompt"]),
                "mcp_tool" => {
                    let server = string_field(obj, &["server"]).unwrap_or_default();
                    let name = string_field(obj, &["tool"]).unwrap_or_default();
                    Some(format!("{server}/{name}"))
                }
                _ => None,
            };
            let command = match main {
                Some(m) => format!("{kind}: {m}"),
                None => kind.to_string(),
            };
            note(
                out,
                format!(
                    "{label} has type \"{kind}\" on \"{event}\"; copse-hooks runs only \"command\" hooks — listed as unsupported, never run"
                ),
            );
            return Some(Handler {
                command,
                inactive: true,
                timeout: default_timeout(event),
                condition: None,
                run_async: false,
                async_rewake: false,
            });
        }
        let Some(command) = obj
            .get("command")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|c| !c.is_empty())
        else {
            note(
                out,
                format!("{label} has a missing or empty \"command\" — skipped"),
            );
            return None;
        };
        let mut inactive = false;
        let command = match obj.get("args") {
            None | Some(Value::Null) => command.to_string(),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
                let mut words = vec![shell_word(command)];
                words.extend(items.iter().filter_map(Value::as_str).map(shell_word));
                words.join(" ")
            }
            Some(_) => {
                note(
                    out,
                    format!("{label} \"args\" must be an array of strings — skipped"),
                );
                return None;
            }
        };
        match obj.get("shell") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s == "bash" => {}
            Some(other) => {
                let shell = other
                    .as_str()
                    .map_or_else(|| other.to_string(), str::to_string);
                note(
                    out,
                    format!(
                        "{label} asks for shell \"{shell}\"; copse-hooks runs command hooks with sh only — listed as unsupported, never run"
                    ),
                );
                inactive = true;
            }
        }
        let mut condition = None;
        match obj.get("if") {
            None | Some(Value::Null) => {}
            Some(Value::String(cond)) if !IF_EVENTS.contains(&event) => {
                note(
                    out,
                    format!(
                        "{label} has an \"if\" condition ({cond}) on \"{event}\"; Claude Code evaluates \"if\" only on tool events, so this handler never runs"
                    ),
                );
                inactive = true;
            }
            Some(Value::String(cond)) => match PermissionRule::parse(cond) {
                Ok(rule) => condition = Some(rule),
                Err(e) => {
                    note(out, format!("{label} \"if\": {e} — never run"));
                    inactive = true;
                }
            },
            Some(other) => {
                note(
                    out,
                    format!(
                        "{label} \"if\" must be a permission-rule string, got {other} — never run"
                    ),
                );
                inactive = true;
            }
        }
        let flag = |key: &str| obj.get(key) == Some(&Value::Bool(true));
        let async_rewake = flag("asyncRewake");
        let run_async = flag("async") || async_rewake;
        let default = default_timeout(event);
        let timeout = match obj.get("timeout") {
            None | Some(Value::Null) => default,
            Some(v) => timeout_seconds(v).unwrap_or_else(|| {
                note(
                    out,
                    format!(
                        "{label} \"timeout\" must be a positive number of seconds — using the default {}",
                        seconds(default)
                    ),
                );
                default
            }),
        };
        Some(Handler {
            command,
            inactive,
            timeout,
            condition,
            run_async,
            async_rewake,
        })
    }

    /// The matcher as written (trimmed; `None` when absent or blank).
    fn matcher_source(raw: Option<&Value>) -> Option<String> {
        match raw {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) => Some(s.trim().to_string()),
            Some(other) => Some(other.to_string()),
        }
    }

    /// Compiles a group's matcher for one of its hooks. Events that ignore matchers
    /// get [`HookMatcher::Always`].
    fn matcher(event: &str, wired: bool, raw: Option<&Value>) -> HookMatcher {
        match (Self::matcher_source(raw), raw) {
            (None, _) => HookMatcher::Always,
            (Some(_), _) if wired && !uses_matcher(event) => HookMatcher::Always,
            (Some(p), Some(Value::String(_))) => {
                compile_matcher(&p).unwrap_or_else(HookMatcher::Invalid)
            }
            (Some(p), _) => HookMatcher::Invalid(MatcherError {
                pattern: p,
                reason: "matcher must be a string".to_string(),
            }),
        }
    }

    /// The matcher subject for a hook on an event, `Some(None)` when the matcher is
    /// ignored, and `None` when the hook does not apply at all.
    fn subject(wire_event: &str, event: &EventPayload) -> Option<Option<String>> {
        let subject = match (wire_event, event) {
            ("PreToolUse", EventPayload::ToolGate(call)) => Some(tool_name(&call.tool)?),
            ("PostToolUse", EventPayload::AfterToolUse(r)) if !r.is_error => {
                Some(tool_name(&r.tool)?)
            }
            ("PostToolUseFailure", EventPayload::AfterToolUse(r)) if r.is_error => {
                Some(tool_name(&r.tool)?)
            }
            ("UserPromptSubmit", EventPayload::BeforeSubmitPrompt { .. })
            | ("Stop", EventPayload::Stop { .. }) => None,
            ("SubagentStart", EventPayload::SubagentStart { subagent_type })
            | ("SubagentStop", EventPayload::SubagentStop { subagent_type, .. }) => {
                Some(subagent_type.clone())
            }
            ("SessionStart", EventPayload::SessionStart { .. }) => Some("startup".to_string()),
            ("SessionEnd", EventPayload::SessionEnd { reason, .. }) => {
                Some(session_end_reason(reason).to_string())
            }
            ("PreCompact", EventPayload::PreCompact(c)) => Some(c.trigger.clone()),
            (
                "Notification",
                EventPayload::Notification {
                    notification_type, ..
                },
            ) => Some(notification_type.clone()),
            ("PermissionRequest", EventPayload::PermissionRequest(call)) => {
                Some(tool_name(&call.tool)?)
            }
            _ => return None,
        };
        Some(subject)
    }
}

impl Adapter for Claude {
    fn dialect(&self) -> Dialect {
        Dialect::Claude
    }

    fn parse(&self, text: &str, source: &Path, scope: Scope, root: Option<&Path>) -> ParsedConfig {
        let mut out = ParsedConfig::default();
        let name = display_name(source);
        let doc: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                out.invalid_json(source, scope, &name, &e);
                return out;
            }
        };
        let Some(doc) = doc.as_object() else {
            out.warn(
                source,
                scope,
                None,
                format!("{name} is not a JSON object — file ignored"),
            );
            return out;
        };
        match doc.get("enabledPlugins") {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                for (id, on) in m {
                    match on {
                        Value::Bool(b) => {
                            out.enabled_plugins.insert(id.clone(), *b);
                        }
                        other => out.warn(
                            source,
                            scope,
                            None,
                            format!("{name} \"enabledPlugins\" entry \"{id}\" must be true or false, got {other} — ignored"),
                        ),
                    }
                }
            }
            Some(other) => out.warn(
                source,
                scope,
                None,
                format!("{name} \"enabledPlugins\" must be an object of plugin ids, got {other} — ignored"),
            ),
        }
        match doc.get("disableAllHooks") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => out.disable_all_hooks = Some(*b),
            Some(other) => out.warn(
                source,
                scope,
                None,
                format!("{name} \"disableAllHooks\" must be true or false, got {other} — ignored"),
            ),
        }
        // A settings file has many other keys: no `hooks` is simply no hooks.
        let hooks = match doc.get("hooks") {
            None | Some(Value::Null) => return out,
            Some(Value::Object(h)) => h,
            Some(_) => {
                out.warn(
                    source,
                    scope,
                    None,
                    format!("{name} \"hooks\" must be an object of event names — hooks ignored"),
                );
                return out;
            }
        };
        for (event, value) in hooks {
            let canonical = canonical_for(event);
            let wired = canonical.is_some();
            let nothing_declared = value.as_array().is_some_and(Vec::is_empty);
            if !wired {
                if PUBLISHED_EVENTS.contains(&event.as_str()) {
                    if !nothing_declared {
                        out.warn(
                            source,
                            scope,
                            Some(event),
                            format!(
                                "Claude hook event \"{event}\" is recognised by Claude Code but not supported by copse-hooks yet — entries ignored"
                            ),
                        );
                    }
                } else {
                    if !nothing_declared {
                        out.warn(
                            source,
                            scope,
                            Some(event),
                            format!(
                                "Unknown Claude hook event \"{event}\" — entries ignored{}",
                                suggestion(event)
                            ),
                        );
                    }
                    continue;
                }
            }
            let Some(groups) = value.as_array() else {
                if wired {
                    out.warn(
                        source,
                        scope,
                        Some(event),
                        format!(
                            "\"{event}\" must be an array of {{ matcher, hooks: [...] }} groups — skipped"
                        ),
                    );
                }
                continue;
            };
            let ctx = (source, scope, event.as_str(), wired);
            let flat_hint = " (this looks like Cursor's flat { command } entry; Claude Code nests handlers: { \"matcher\": …, \"hooks\": [{ \"type\": \"command\", \"command\": … }] })";
            for (gi, group) in groups.iter().enumerate() {
                let n = gi + 1;
                let Some(group) = group.as_object() else {
                    if wired {
                        out.warn(
                            source,
                            scope,
                            Some(event),
                            format!(
                                "\"{event}\" group {n} must be an object {{ matcher, hooks: [...] }} — skipped"
                            ),
                        );
                    }
                    continue;
                };
                let Some(handlers) = group.get("hooks").and_then(Value::as_array) else {
                    if wired {
                        let hint = if group.contains_key("command") {
                            flat_hint
                        } else {
                            ""
                        };
                        out.warn(
                            source,
                            scope,
                            Some(event),
                            format!("\"{event}\" group {n} has no \"hooks\" array — skipped{hint}"),
                        );
                    }
                    continue;
                };
                let raw_matcher = group.get("matcher");
                let matcher_source = Self::matcher_source(raw_matcher);
                if wired
                    && uses_matcher(event)
                    && let HookMatcher::Invalid(e) = Self::matcher(event, wired, raw_matcher)
                {
                    let p = &e.pattern;
                    out.warn(
                        source,
                        scope,
                        Some(event),
                        if raw_matcher.is_some_and(Value::is_string) {
                            format!(
                                "\"{event}\" group {n} matcher \"{p}\" is not a valid regex ({}) — its hooks never fire",
                                e.reason
                            )
                        } else {
                            format!(
                                "\"{event}\" group {n} matcher must be a string — its hooks never fire"
                            )
                        },
                    );
                }
                for (hi, handler) in handlers.iter().enumerate() {
                    let label = format!("\"{event}\" group {n} hook {}", hi + 1);
                    let Some(obj) = handler.as_object() else {
                        if wired {
                            out.warn(
                                source,
                                scope,
                                Some(event),
                                format!("{label} must be an object — skipped"),
                            );
                        }
                        continue;
                    };
                    let Some(h) = Self::handler(&mut out, ctx, &label, obj) else {
                        continue;
                    };
                    let matcher = Self::matcher(event, wired, raw_matcher);
                    out.hooks.push(HookSpec {
                        dialect: Dialect::Claude,
                        event: event.clone(),
                        canonical: if h.inactive { None } else { canonical },
                        command: h.command,
                        matcher_source: matcher_source.clone(),
                        matcher,
                        glob: None,
                        policy: if failure_can_block(event) {
                            FailurePolicy::Closed
                        } else {
                            FailurePolicy::Open
                        },
                        timeout: h.timeout,
                        source: source.to_path_buf(),
                        scope,
                        root: root.map(Path::to_path_buf),
                        entry: n,
                        sandbox: true,
                        run_async: h.run_async,
                        network: true,
                        loop_limit: None,
                        options: super::HookOptions {
                            policy_fixed: !failure_can_block(event),
                            condition: h.condition,
                            async_rewake: h.async_rewake,
                            plugin: None,
                        },
                    });
                }
            }
        }
        out
    }

    fn applies(&self, hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> bool {
        if hook.canonical != Some(event.event()) {
            return false;
        }
        let fires = match Self::subject(&hook.event, event) {
            None => false,
            Some(None) => true,
            Some(Some(subject)) => hook.matcher.test(&subject).fires(),
        };
        if !fires {
            return false;
        }
        let Some(rule) = &hook.options.condition else {
            return true;
        };
        let (id, input) = match event {
            EventPayload::ToolGate(call) | EventPayload::PermissionRequest(call) => {
                (&call.tool, &call.input)
            }
            EventPayload::AfterToolUse(r) => (&r.tool, &r.input),
            _ => return false,
        };
        let root = ctx.root_for(hook);
        let Some((name, input)) = claude_tool(id, input, root) else {
            return false;
        };
        let home = std::env::var_os("HOME").map(PathBuf::from);
        rule.matches(&name, &input, root, home.as_deref())
    }

    fn marshal(&self, hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> Value {
        let root = ctx.root_for(hook);
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
        let tool_fields = |obj: &mut Map<String, Value>, id: &str, input: &Map<String, Value>| {
            let (name, input) =
                claude_tool(id, input, root).unwrap_or_else(|| (id.to_string(), input.clone()));
            obj.insert("tool_name".into(), json!(name));
            obj.insert("tool_input".into(), Value::Object(input.clone()));
            input
        };
        let last_message = || json!(host.last_assistant_message.clone().unwrap_or_default());
        match (hook.event.as_str(), event) {
            ("PreToolUse", EventPayload::ToolGate(call)) => {
                tool_fields(&mut obj, &call.tool, &call.input);
                obj.insert("tool_use_id".into(), json!(call.tool_use_id));
            }
            ("PostToolUse", EventPayload::AfterToolUse(r)) => {
                let input = tool_fields(&mut obj, &r.tool, &r.input);
                obj.insert("tool_response".into(), tool_response(r, &input));
                obj.insert("tool_use_id".into(), json!(r.tool_call_id));
                obj.insert("duration_ms".into(), json!(r.duration_ms));
            }
            ("PostToolUseFailure", EventPayload::AfterToolUse(r)) => {
                tool_fields(&mut obj, &r.tool, &r.input);
                obj.insert("tool_use_id".into(), json!(r.tool_call_id));
                obj.insert("error".into(), json!(r.output));
                obj.insert("is_interrupt".into(), json!(false));
                obj.insert("duration_ms".into(), json!(r.duration_ms));
            }
            ("UserPromptSubmit", EventPayload::BeforeSubmitPrompt { prompt }) => {
                obj.insert("prompt".into(), json!(prompt));
            }
            ("Stop", EventPayload::Stop { .. }) => {
                obj.insert("stop_hook_active".into(), json!(false));
                obj.insert("last_assistant_message".into(), last_message());
            }
            ("SubagentStop", EventPayload::SubagentStop { subagent_type, .. }) => {
                obj.insert("stop_hook_active".into(), json!(false));
                obj.insert(
                    "agent_id".into(),
                    json!(agent_id(ctx.session, subagent_type)),
                );
                obj.insert("agent_type".into(), json!(subagent_type));
                obj.insert(
                    "agent_transcript_path".into(),
                    json!(host.agent_transcript_path.clone().unwrap_or_default()),
                );
                obj.insert("last_assistant_message".into(), last_message());
            }
            ("SubagentStart", EventPayload::SubagentStart { subagent_type }) => {
                obj.insert(
                    "agent_id".into(),
                    json!(agent_id(ctx.session, subagent_type)),
                );
                obj.insert("agent_type".into(), json!(subagent_type));
            }
            ("SessionStart", EventPayload::SessionStart { .. }) => {
                obj.insert("source".into(), json!("startup"));
                if let Some(model) = &ctx.session.model {
                    obj.insert("model".into(), json!(model.model));
                }
            }
            ("SessionEnd", EventPayload::SessionEnd { reason, .. }) => {
                obj.insert("reason".into(), json!(session_end_reason(reason)));
            }
            ("PreCompact", EventPayload::PreCompact(c)) => {
                obj.insert("trigger".into(), json!(c.trigger));
                obj.insert("custom_instructions".into(), json!(""));
            }
            (
                "Notification",
                EventPayload::Notification {
                    message,
                    title,
                    notification_type,
                },
            ) => {
                obj.insert("message".into(), json!(message));
                if let Some(t) = title {
                    obj.insert("title".into(), json!(t));
                }
                obj.insert("notification_type".into(), json!(notification_type));
            }
            ("PermissionRequest", EventPayload::PermissionRequest(call)) => {
                // No `tool_use_id` here (Claude Code sends none on this event).
                tool_fields(&mut obj, &call.tool, &call.input);
                obj.insert("permission_suggestions".into(), json!([]));
            }
            _ => {}
        }
        Value::Object(obj)
    }

    fn interpret(
        &self,
        hook: &HookSpec,
        event: &EventPayload,
        run: &ProcessResult<'_>,
    ) -> Interpretation {
        interpret_run(&hook.event, event, run)
    }

    /// Claude Code runs every handler in the project directory ("the current
    /// directory"), user hooks included.
    fn cwd(&self, hook: &HookSpec, ctx: &Context<'_>) -> PathBuf {
        ctx.root_for(hook)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| hook.cwd())
    }

    fn vendor_env(&self, hook: &HookSpec, ctx: &Context<'_>) -> Vec<(String, String)> {
        let mut env = Vec::new();
        if let Some(root) = ctx.root_for(hook) {
            env.push(("CLAUDE_PROJECT_DIR".to_string(), root.display().to_string()));
        }
        if let Some(p) = &hook.options.plugin {
            env.push((
                "CLAUDE_PLUGIN_ROOT".to_string(),
                p.root.display().to_string(),
            ));
        }
        env
    }
}

/// Reads a Claude hook's answer the way Claude Code does (hooks reference, "Exit
/// code output"), for a sibling dialect that shares Claude's output contract too:
///
/// - stdout is JSON only when it starts with `{`; anything else is plain text, which
///   is context on `UserPromptSubmit`, `UserPromptExpansion` and `SessionStart` and
///   ignored elsewhere — never a failure;
/// - exit 2 blocks with the event's own semantics (the JSON's reason, else stderr);
/// - any other exit with a valid JSON object is honoured (the exit code is ignored);
///   without one it is a failure, which the host's policy turns into a deny only on
///   events where a hook can block.
pub fn interpret_run(
    wire_event: &str,
    event: &EventPayload,
    run: &ProcessResult<'_>,
) -> Interpretation {
    let kind = Wire::of(wire_event);
    let text = run.stdout_text();
    let json = text
        .starts_with('{')
        .then(|| serde_json::from_str::<Map<String, Value>>(&text));
    let obj = match &json {
        Some(Ok(o)) => Some(o),
        _ => None,
    };
    let parse_ok = !matches!(json, Some(Err(_)));
    if run.exit_code == Some(2) {
        return Interpretation {
            outcome: exit_two(kind, run, obj),
            parse_ok,
            failure: None,
        };
    }
    if let Some(obj) = obj {
        return respond(kind, wire_event, event, obj);
    }
    if run.exit_code != Some(0) {
        let f = run.exit_failure();
        return Interpretation::failed(f.kind, f.message, parse_ok);
    }
    match json {
        Some(Err(e)) => Interpretation::failed(
            FailureKind::InvalidJson,
            format!("printed invalid JSON ({e}) — response ignored"),
            false,
        ),
        _ => Interpretation::ok(Outcome {
            inject_context: (plain_stdout_is_context(wire_event) && !text.is_empty())
                .then_some(text),
            ..Outcome::default()
        }),
    }
}

/// The wired events, by how their answers are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    PreToolUse,
    UserPromptSubmit,
    /// Stop and SubagentStop: a block is a follow-up held for a human.
    Stop,
    /// PostToolUse and PostToolUseFailure: feedback next to the tool result.
    PostTool,
    /// SubagentStart and SessionStart: context only, cannot block.
    Context,
    /// PreCompact: `decision: "block"` or exit 2 blocks compaction.
    PreCompact,
    /// PermissionRequest: `hookSpecificOutput.decision.behavior` allows or denies.
    PermissionRequest,
    /// Notification: side effects only; exit code and stderr are ignored too.
    Notification,
    /// SessionEnd: side effects only (stderr is shown to the user).
    Observe,
}

impl Wire {
    fn of(event: &str) -> Wire {
        match event {
            "PreToolUse" => Wire::PreToolUse,
            "UserPromptSubmit" => Wire::UserPromptSubmit,
            "Stop" | "SubagentStop" => Wire::Stop,
            "PostToolUse" | "PostToolUseFailure" => Wire::PostTool,
            "SubagentStart" | "SessionStart" => Wire::Context,
            "PreCompact" => Wire::PreCompact,
            "PermissionRequest" => Wire::PermissionRequest,
            "Notification" => Wire::Notification,
            _ => Wire::Observe,
        }
    }
}

/// A trimmed, non-empty string field.
fn text_of(obj: &Map<String, Value>, key: &str) -> Option<String> {
    string_field(obj, &[key])
}

fn nested(obj: &Map<String, Value>) -> Option<&Map<String, Value>> {
    obj.get("hookSpecificOutput").and_then(Value::as_object)
}

fn stops(obj: &Map<String, Value>) -> bool {
    obj.get("continue") == Some(&Value::Bool(false))
}

fn blocks(obj: &Map<String, Value>) -> bool {
    obj.get("decision").and_then(Value::as_str) == Some("block")
}

/// The reason a JSON answer gives for blocking, when it blocks.
fn block_reason(obj: &Map<String, Value>) -> Option<String> {
    if stops(obj)
        && let Some(r) = text_of(obj, "stopReason")
    {
        return Some(r);
    }
    if blocks(obj)
        && let Some(r) = text_of(obj, "reason")
    {
        return Some(r);
    }
    let n = nested(obj)?;
    if n.get("permissionDecision").and_then(Value::as_str) == Some("deny") {
        return text_of(n, "permissionDecisionReason");
    }
    None
}

fn additional_context(obj: &Map<String, Value>) -> Option<String> {
    nested(obj).and_then(|n| text_of(n, "additionalContext"))
}

fn join(parts: impl IntoIterator<Item = Option<String>>) -> Option<String> {
    let parts: Vec<String> = parts.into_iter().flatten().collect();
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("\n\n"))
    }
}

fn queue(text: Option<String>, held: bool) -> Option<QueueRequest> {
    text.map(|text| QueueRequest {
        text,
        send_now: false,
        held,
    })
}

/// Exit 2: a block with the event's own semantics. The reason is the JSON's own
/// blocking reason when it gives one, else stderr.
fn exit_two(kind: Wire, run: &ProcessResult<'_>, obj: Option<&Map<String, Value>>) -> Outcome {
    let stderr = Some(run.stderr_text()).filter(|s| !s.is_empty());
    let reason = obj.and_then(block_reason).or_else(|| stderr.clone());
    match kind {
        Wire::PreToolUse => Outcome {
            decision: Some(Decision::Deny),
            agent_message: reason,
            ..Outcome::default()
        },
        Wire::UserPromptSubmit => {
            let reason = reason.unwrap_or_else(|| PROMPT_BLOCKED.to_string());
            Outcome {
                halt: Some(Halt {
                    reason: reason.clone(),
                }),
                user_message: Some(reason),
                ..Outcome::default()
            }
        }
        Wire::Stop => Outcome {
            queue_message: queue(reason, true),
            ..Outcome::default()
        },
        Wire::PostTool => Outcome {
            queue_message: queue(reason, false),
            ..Outcome::default()
        },
        Wire::PreCompact => Outcome {
            decision: Some(Decision::Deny),
            user_message: reason,
            ..Outcome::default()
        },
        // Exit 2 is not honoured on PermissionRequest (stderr discarded) nor on
        // Notification.
        Wire::PermissionRequest => Outcome::default(),
        Wire::Notification => Outcome::default(),
        Wire::Context | Wire::Observe => Outcome {
            user_message: stderr,
            ..Outcome::default()
        },
    }
}

/// A JSON answer (on exit 0, or on another exit that is not 2).
fn respond(
    kind: Wire,
    wire_event: &str,
    event: &EventPayload,
    obj: &Map<String, Value>,
) -> Interpretation {
    let system_message = text_of(obj, "systemMessage");
    // PreCompact, Notification and SessionEnd discard `continue`.
    if stops(obj) && !matches!(kind, Wire::PreCompact | Wire::Notification | Wire::Observe) {
        // `continue: false` stops Claude after the hook, whatever else it says; the
        // `stopReason` is for the user, never the model.
        let reason = text_of(obj, "stopReason")
            .unwrap_or_else(|| format!("Stopped by a {wire_event} hook (\"continue\": false)."));
        return Interpretation::ok(Outcome {
            decision: (kind == Wire::PreToolUse).then_some(Decision::Deny),
            halt: Some(Halt {
                reason: reason.clone(),
            }),
            user_message: join([Some(reason), system_message]),
            ..Outcome::default()
        });
    }
    let outcome = match kind {
        Wire::PreToolUse => return permission(event, obj),
        Wire::UserPromptSubmit => {
            if blocks(obj) {
                let reason = block_reason(obj).unwrap_or_else(|| PROMPT_BLOCKED.to_string());
                Outcome {
                    halt: Some(Halt {
                        reason: reason.clone(),
                    }),
                    user_message: Some(reason),
                    ..Outcome::default()
                }
            } else {
                Outcome {
                    inject_context: additional_context(obj),
                    user_message: system_message,
                    ..Outcome::default()
                }
            }
        }
        Wire::Stop => {
            let reason = if blocks(obj) {
                text_of(obj, "reason")
            } else {
                None
            };
            Outcome {
                queue_message: queue(join([reason, additional_context(obj)]), true),
                user_message: system_message,
                ..Outcome::default()
            }
        }
        Wire::PostTool => {
            let reason = if blocks(obj) {
                text_of(obj, "reason")
            } else {
                None
            };
            Outcome {
                queue_message: queue(join([reason, additional_context(obj)]), false),
                user_message: system_message,
                ..Outcome::default()
            }
        }
        Wire::Context => Outcome {
            inject_context: additional_context(obj),
            user_message: system_message,
            ..Outcome::default()
        },
        Wire::PreCompact => Outcome {
            decision: blocks(obj).then_some(Decision::Deny),
            user_message: if blocks(obj) {
                text_of(obj, "reason")
            } else {
                None
            },
            ..Outcome::default()
        },
        Wire::PermissionRequest => return permission_request(event, obj),
        // SessionEnd and Notification output is discarded.
        Wire::Notification | Wire::Observe => Outcome::default(),
    };
    Interpretation::ok(outcome)
}

/// A PermissionRequest answer: `hookSpecificOutput.decision` `{behavior: allow|deny,
/// updatedInput?, message?, interrupt?}`.
fn permission_request(event: &EventPayload, obj: &Map<String, Value>) -> Interpretation {
    let Some(d) = nested(obj).and_then(|n| n.get("decision")) else {
        return Interpretation::ok(Outcome {
            user_message: text_of(obj, "systemMessage"),
            ..Outcome::default()
        });
    };
    let Some(d) = d.as_object() else {
        return Interpretation::failed(
            FailureKind::InvalidJson,
            format!("answered decision {d}, which is not an object {{behavior, …}}"),
            false,
        );
    };
    let decision = match d.get("behavior").and_then(Value::as_str) {
        Some("allow") => Decision::Allow,
        Some("deny") => Decision::Deny,
        other => {
            return Interpretation::failed(
                FailureKind::InvalidJson,
                format!(
                    "answered behavior {}, which is not \"allow\" or \"deny\"",
                    other.map_or_else(|| "(missing)".to_string(), |o| format!("\"{o}\""))
                ),
                false,
            );
        }
    };
    let updated_input = match event {
        EventPayload::PermissionRequest(call) if decision == Decision::Allow => d
            .get("updatedInput")
            .and_then(Value::as_object)
            .map(|u| canonical_input(&call.tool, &call.input, u)),
        _ => None,
    };
    let deny = decision == Decision::Deny;
    let message = if deny { text_of(d, "message") } else { None };
    let halt = (deny && d.get("interrupt") == Some(&Value::Bool(true))).then(|| Halt {
        reason: message
            .clone()
            .unwrap_or_else(|| "Stopped by a PermissionRequest hook.".to_string()),
    });
    Interpretation::ok(Outcome {
        decision: Some(decision),
        agent_message: message,
        user_message: text_of(obj, "systemMessage"),
        replace_input: updated_input.is_some(),
        updated_input,
        halt,
        ..Outcome::default()
    })
}

/// A PreToolUse answer.
fn permission(event: &EventPayload, obj: &Map<String, Value>) -> Interpretation {
    let n = nested(obj);
    let invalid = |what: String| Interpretation::failed(FailureKind::InvalidJson, what, false);
    let mut decision = match n.and_then(|n| n.get("permissionDecision")) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => match s.as_str() {
            "allow" => Some(Decision::Allow),
            "ask" | "defer" => Some(Decision::Ask),
            "deny" => Some(Decision::Deny),
            other => {
                return invalid(format!(
                    "answered permissionDecision \"{other}\", which is not allow, deny, ask or defer"
                ));
            }
        },
        Some(other) => {
            return invalid(format!(
                "answered permissionDecision {other}, which is not allow, deny, ask or defer"
            ));
        }
    };
    let deferred = n
        .and_then(|n| n.get("permissionDecision"))
        .and_then(Value::as_str)
        == Some("defer");
    // The deprecated top-level `decision`: approve / block.
    let legacy = match obj.get("decision") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s == "approve" => Some(Decision::Allow),
        Some(Value::String(s)) if s == "block" => Some(Decision::Deny),
        Some(other) => {
            return invalid(format!(
                "answered decision {other}, which is not \"approve\" or \"block\""
            ));
        }
    };
    if let Some(l) = legacy {
        decision = Some(decision.map_or(l, |d| d.max(l)));
    }
    let agent_message = join([
        n.and_then(|n| text_of(n, "permissionDecisionReason")),
        if blocks(obj) {
            text_of(obj, "reason")
        } else {
            None
        },
    ]);
    let updated_input = match event {
        EventPayload::ToolGate(call) if !deferred => n
            .and_then(|n| n.get("updatedInput"))
            .and_then(Value::as_object)
            .map(|u| canonical_input(&call.tool, &call.input, u)),
        _ => None,
    };
    Interpretation::ok(Outcome {
        decision,
        agent_message,
        user_message: text_of(obj, "systemMessage"),
        // Claude Code replaces the whole input with `updatedInput`.
        replace_input: updated_input.is_some(),
        updated_input,
        inject_context: additional_context(obj),
        ..Outcome::default()
    })
}
