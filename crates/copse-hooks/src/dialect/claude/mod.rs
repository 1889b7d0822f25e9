//! The Claude Code dialect: `~/.claude/settings.json`, `<root>/.claude/settings.json`,
//! `<root>/.claude/settings.local.json` and the `hooks/hooks.json` of enabled plugins.
//!
//! Hooks live under the settings file's `hooks` key, three levels deep: event name,
//! then matcher groups `{matcher?, hooks: [...]}`, then handlers
//! `{type: "command", command, timeout?, if?, async?}`. Every handler becomes its own
//! [`HookSpec`] whose `entry` is the 1-based index of its group. `http` handlers
//! (`{type: "http", url, headers?, allowedEnvVars?}`) become specs named
//! `http: <url>` carrying [`HttpHandler`]; the runner POSTs the input
//! instead of spawning. Handlers of other types (`prompt`, `agent`, `mcp_tool`) are
//! reported and kept as unsupported specs so `list` shows them; they never run.
//!
//! Matchers are group-level: empty, absent or `*` match all; a pattern made only of
//! letters, digits, `_`, `-`, spaces, `,` and `|` is a list of exact names; anything
//! else is an unanchored regex. Canonical tools are shown to Claude hooks under
//! Claude's tool names (`run_shell` → `Bash`, …) with Claude-shaped input; a tool with
//! no Claude equivalent is never shown to a Claude hook.
//!
//! Layout: `parse` (settings → specs), `marshal` (stdin), `interpret` (exit code and
//! stdout → outcome), `rule` (`if` conditions), `plugin` (enabled plugins). The public
//! helpers here (`tool_name`, `claude_tool`, `canonical_input`, [`interpret_run`], …)
//! are shared with dialects that reuse Claude's contract.

mod interpret;
mod marshal;
pub mod parse;
pub mod plugin;
pub mod rule;

pub use crate::http::{HttpHandler, HttpPolicy};
pub use interpret::interpret_run;
pub use marshal::{agent_id, tool_response};
pub use rule::{PermissionRule, RuleError};

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{
    Adapter, Context, Dialect, HookMatcher, HookSpec, Interpretation, ParsedConfig, ProcessResult,
    Scope,
};
use crate::event::{CanonicalEvent, EventPayload, tool};
use crate::matcher::{MatcherError, RegexMatcher};

/// Claude Code's default timeout for a command hook (10 minutes since v2.1.3).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Claude Code's default timeout for a `UserPromptSubmit` command hook.
pub const USER_PROMPT_SUBMIT_TIMEOUT: Duration = Duration::from_secs(30);

/// The halt reason when a `UserPromptSubmit` hook blocks without saying why.
pub const PROMPT_BLOCKED: &str = "Prompt submission was blocked by a UserPromptSubmit hook.";

/// The 33 hook events Claude Code documents: the 31 of the hooks reference and
/// SchemaStore schema (v2.1.240), in the schema's order, then `PreModelSwitch` and
/// `PostModelSwitch` (v2.1.251; newer than the saved schema — provenance in
/// [`crate::vendor::CLAUDE`]).
pub const PUBLISHED_EVENTS: [&str; 33] = [
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
    "PreModelSwitch",
    "PostModelSwitch",
];

/// The published events newer than the saved SchemaStore schema (the drift test
/// against that schema allows exactly these to be missing from it).
pub const NEWER_THAN_SAVED_SCHEMA: [&str; 2] = ["PreModelSwitch", "PostModelSwitch"];

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
        "PreModelSwitch" | "PostModelSwitch" => {
            "copse hosts pick the model outside the hook pipeline; no canonical event for a model switch"
        }
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

/// The Claude adapter.
#[derive(Debug, Default, Clone, Copy)]
pub struct Claude;

impl Claude {
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
        self.parse_settings(text, source, scope, root)
    }

    fn applies(&self, hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> bool {
        if !hook.fires_on_subject(event, || Self::subject(&hook.event, event)) {
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
    fn match_subject(&self, hook: &HookSpec, event: &EventPayload) -> Option<String> {
        Self::subject(&hook.event, event).flatten()
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
        interpret_run(&hook.event, event, run)
    }

    /// Claude Code runs every handler in the project directory ("the current
    /// directory"), user hooks included.
    fn cwd(&self, hook: &HookSpec, ctx: &Context<'_>) -> PathBuf {
        ctx.root_for(hook)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| hook.cwd())
    }

    fn user_state_dir(&self, home: &Path, _copse_dir: &Path) -> PathBuf {
        home.join(".claude")
    }

    /// Claude's SessionStart hooks may append `export` lines to `$CLAUDE_ENV_FILE`.
    fn env_file_var(&self, hook: &HookSpec) -> Option<&'static str> {
        (hook.event == "SessionStart").then_some("CLAUDE_ENV_FILE")
    }

    /// Claude Code runs a handler defined identically in several settings files once;
    /// a plugin's copy of a handler stays separate.
    fn dedup_key(&self, hook: &HookSpec, _extra: &crate::dialect::HookExtra) -> Option<String> {
        hook.options
            .plugin
            .is_none()
            .then(|| format!("{:?}", handler_identity(hook)))
    }

    /// Claude's `async` hooks hand their `additionalContext` to the next turn, and an
    /// `asyncRewake` hook that exits 2 wakes the agent with its stderr (else stdout).
    fn detached_message(
        &self,
        hook: &HookSpec,
        run: &crate::outcome::HookRun,
    ) -> Option<crate::outcome::QueueRequest> {
        if !hook.run_async || run.outcome.queue_message.is_some() {
            return None;
        }
        let text = if hook.options.async_rewake && run.exit_code == Some(2) {
            let err = String::from_utf8_lossy(&run.stderr).trim().to_string();
            let out = String::from_utf8_lossy(&run.stdout).trim().to_string();
            Some(if err.is_empty() { out } else { err }).filter(|t| !t.is_empty())
        } else {
            run.outcome.inject_context.clone()
        }?;
        Some(crate::outcome::QueueRequest {
            text,
            send_now: false,
            held: false,
        })
    }

    /// `continue: false` stops the run on every event, observation events included.
    fn detached_halts(&self) -> bool {
        true
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
            if let Some(data) = &p.data {
                env.push(("CLAUDE_PLUGIN_DATA".to_string(), data.display().to_string()));
            }
        }
        env
    }
}
