//! The Gemini CLI dialect (not Antigravity, whose `hooks.json` files have their own
//! shape, events and decisions and are not read; docs/dialects/gemini.md):
//! `hooks` in `settings.json` at the system (`/etc/gemini-cli/settings.json`, or
//! `$GEMINI_CLI_SYSTEM_SETTINGS_PATH`), user (`~/.gemini/settings.json`) and project
//! (`<root>/.gemini/settings.json`) layers, and extensions'
//! `~/.gemini/extensions/<name>/hooks/hooks.json`.
//!
//! Per-event arrays concatenate across layers. An entry is
//! `{matcher?, sequential?, hooks: [{type: "command", command, name?, timeout?}]}`
//! with timeouts in **milliseconds** (default 60000). Tool events match an
//! unanchored regex on Gemini's own tool names (an invalid regex falls back to exact
//! equality), lifecycle events compare the matcher with the trigger exactly, and the
//! other events ignore it. Hooks run in parallel unless a matching entry is
//! `sequential`, where input changes chain from hook to hook; duplicates (same
//! `name:command`) run once; `hooksConfig.enabled: false` and `hooksConfig.disabled`
//! switch hooks off. Exit 0 reads stdout as JSON (plain text is a system message),
//! exit 2 blocks with stderr, any other exit is a failure (the host policy applies).
//!
//! The files by concern: [`parse`] (settings and extension files), [`marshal`] (the
//! exact stdin), [`interpret`] (exit codes and answers).

pub mod interpret;
pub mod marshal;
pub mod parse;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::{
    Adapter, Context, Dialect, HookSpec, Interpretation, ParsedConfig, ProcessResult, Scope,
};
use crate::event::{CanonicalEvent, EventPayload, tool};

/// Gemini CLI's default hook timeout (`DEFAULT_HOOK_TIMEOUT`, milliseconds).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(60_000);

/// A `timeout` at or below this many milliseconds probably meant seconds (lint hint).
pub const SECONDS_LOOKALIKE_MS: f64 = 600.0;

/// The 11 hook events Gemini CLI publishes (`HookEventName` in
/// `packages/core/src/hooks/types.ts` and docs/hooks/reference.md), in the enum's
/// order. Provenance in [`crate::vendor::GEMINI`].
pub const PUBLISHED_EVENTS: [&str; 11] = [
    "BeforeTool",
    "AfterTool",
    "BeforeAgent",
    "Notification",
    "AfterAgent",
    "SessionStart",
    "SessionEnd",
    "PreCompress",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
];

/// Gemini CLI's built-in tool names (`ALL_BUILTIN_TOOL_NAMES` in
/// `packages/core/src/tools/tool-names.ts`), for lint's matcher hints.
pub const BUILTIN_TOOLS: [&str; 24] = [
    "glob",
    "write_todos",
    "write_file",
    "google_web_search",
    "web_fetch",
    "replace",
    "run_shell_command",
    "grep_search",
    "read_many_files",
    "read_file",
    "list_directory",
    "save_memory",
    "activate_skill",
    "ask_user",
    "tracker_create_task",
    "tracker_update_task",
    "tracker_get_task",
    "tracker_list_tasks",
    "tracker_add_dependency",
    "tracker_visualize",
    "get_internal_docs",
    "enter_plan_mode",
    "exit_plan_mode",
    "update_topic",
];

/// The canonical event a Gemini wire event is wired to.
pub fn canonical_for(event: &str) -> Option<CanonicalEvent> {
    match event {
        "BeforeTool" => Some(CanonicalEvent::ToolGate),
        "AfterTool" => Some(CanonicalEvent::AfterToolUse),
        "BeforeAgent" => Some(CanonicalEvent::BeforeSubmitPrompt),
        "AfterAgent" => Some(CanonicalEvent::Stop),
        "SessionStart" => Some(CanonicalEvent::SessionStart),
        "SessionEnd" => Some(CanonicalEvent::SessionEnd),
        "PreCompress" => Some(CanonicalEvent::PreCompact),
        "Notification" => Some(CanonicalEvent::Notification),
        _ => None,
    }
}

/// Why a published Gemini event is not wired.
pub fn unsupported_reason(event: &str) -> Option<&'static str> {
    match event {
        "BeforeModel" | "AfterModel" => Some(
            "hosts do not route model requests through copse-hooks: there is no canonical model-request event to carry Gemini's llm_request / llm_response",
        ),
        "BeforeToolSelection" => Some(
            "hosts do not expose their tool-selection step: there is no canonical event to carry Gemini's toolConfig",
        ),
        _ => None,
    }
}

/// How an event reads its matcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatcherKind {
    /// An unanchored regex on the tool name (BeforeTool, AfterTool).
    ToolRegex,
    /// Exact equality with the trigger (SessionStart, SessionEnd, PreCompress).
    Exact,
    /// Ignored: the hook always runs.
    Ignored,
}

/// How `event` reads its matcher.
pub fn matcher_kind(event: &str) -> MatcherKind {
    match event {
        "BeforeTool" | "AfterTool" => MatcherKind::ToolRegex,
        "SessionStart" | "SessionEnd" | "PreCompress" => MatcherKind::Exact,
        _ => MatcherKind::Ignored,
    }
}

/// Gemini's tool name for a canonical tool id (`None`: Gemini has no such tool and
/// its hooks never see the call). MCP tools become `mcp_<server>_<tool>`.
pub fn tool_name(tool_id: &str) -> Option<String> {
    if let Some((server, name)) = mcp_parts(tool_id) {
        return Some(format!("mcp_{server}_{name}"));
    }
    let name = match tool_id {
        tool::RUN_SHELL => "run_shell_command",
        tool::READ_FILE => "read_file",
        tool::WRITE_FILE => "write_file",
        tool::STR_REPLACE => "replace",
        tool::SEARCH_CODE => "grep_search",
        _ => return None,
    };
    Some(name.to_string())
}

/// The server and tool of a canonical MCP id (`mcp__<server>__<tool>`).
pub fn mcp_parts(tool_id: &str) -> Option<(&str, &str)> {
    if !tool::is_mcp(tool_id) {
        return None;
    }
    tool_id.strip_prefix("mcp__")?.split_once("__")
}

/// The canonical session-end reason in Gemini's vocabulary (`exit`, `clear`,
/// `logout`, `prompt_input_exit`, `other`).
pub fn session_end_reason(reason: &str) -> &'static str {
    match reason {
        "completed" | "window_close" | "user_close" | "exit" => "exit",
        "clear" => "clear",
        "logout" => "logout",
        "prompt_input_exit" => "prompt_input_exit",
        _ => "other",
    }
}

/// The matcher subject of `wire_event` for `event`: `None` when the hook does not
/// apply, `Some(None)` when the matcher is ignored.
pub fn subject(wire_event: &str, event: &EventPayload) -> Option<Option<String>> {
    let subject = match (wire_event, event) {
        ("BeforeTool", EventPayload::ToolGate(call)) => Some(tool_name(&call.tool)?),
        ("AfterTool", EventPayload::AfterToolUse(r)) => Some(tool_name(&r.tool)?),
        ("BeforeAgent", EventPayload::BeforeSubmitPrompt { .. })
        | ("Notification", EventPayload::Notification { .. }) => None,
        // AfterAgent fires once per turn after the final response, not on an abort.
        ("AfterAgent", EventPayload::Stop { status }) if status != "aborted" => None,
        ("SessionStart", EventPayload::SessionStart { first_turn }) => {
            Some(if *first_turn { "startup" } else { "resume" }.to_string())
        }
        ("SessionEnd", EventPayload::SessionEnd { reason, .. }) => {
            Some(session_end_reason(reason).to_string())
        }
        ("PreCompress", EventPayload::PreCompact(c)) => Some(c.trigger.clone()),
        _ => return None,
    };
    Some(subject)
}

/// The Gemini adapter.
#[derive(Debug, Default, Clone, Copy)]
pub struct Gemini;

impl Adapter for Gemini {
    fn dialect(&self) -> Dialect {
        Dialect::Gemini
    }

    fn parse(&self, text: &str, source: &Path, scope: Scope, root: Option<&Path>) -> ParsedConfig {
        parse::parse(text, source, scope, root)
    }

    fn applies(&self, hook: &HookSpec, event: &EventPayload, _ctx: &Context<'_>) -> bool {
        hook.fires_on_subject(event, || subject(&hook.event, event))
    }

    fn match_subject(&self, hook: &HookSpec, event: &EventPayload) -> Option<String> {
        subject(&hook.event, event).flatten()
    }

    fn marshal(&self, hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> Value {
        marshal::marshal(hook, event, ctx, &marshal::now())
    }

    fn interpret(
        &self,
        hook: &HookSpec,
        event: &EventPayload,
        run: &ProcessResult<'_>,
    ) -> Interpretation {
        interpret::interpret(hook, event, run)
    }

    /// Gemini CLI runs every hook in the session's working directory.
    fn cwd(&self, hook: &HookSpec, ctx: &Context<'_>) -> PathBuf {
        ctx.root_for(hook)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| hook.cwd())
    }

    fn user_state_dir(&self, home: &Path, _copse_dir: &Path) -> PathBuf {
        home.join(".gemini")
    }

    /// Gemini CLI runs a `name:command` pair once per event, whatever its layer.
    fn dedup_key(&self, hook: &HookSpec, extra: &crate::dialect::HookExtra) -> Option<String> {
        Some(format!(
            "{}:{}",
            extra.name.as_deref().unwrap_or_default(),
            hook.command
        ))
    }

    /// A matching definition marked `sequential` runs every matching Gemini hook of
    /// the event one after another.
    fn sequential(&self, _hook: &HookSpec, extra: &crate::dialect::HookExtra) -> bool {
        extra.sequential
    }

    /// Each hook of a sequential chain sees the input as the previous one changed it:
    /// a BeforeTool `tool_input` merged into the arguments, a BeforeAgent
    /// `additionalContext` appended to the prompt.
    fn chain_input(&self, event: EventPayload, outcome: &crate::outcome::Outcome) -> EventPayload {
        match event {
            EventPayload::ToolGate(mut call) => {
                if let Some(update) = &outcome.updated_input {
                    for (k, v) in update {
                        call.input.insert(k.clone(), v.clone());
                    }
                }
                EventPayload::ToolGate(call)
            }
            EventPayload::BeforeSubmitPrompt { prompt } => EventPayload::BeforeSubmitPrompt {
                prompt: match outcome.inject_context.as_deref().filter(|c| !c.is_empty()) {
                    Some(ctx) => format!("{prompt}\n\n{ctx}"),
                    None => prompt,
                },
            },
            other => other,
        }
    }

    fn vendor_env(&self, hook: &HookSpec, ctx: &Context<'_>) -> Vec<(String, String)> {
        let mut env = Vec::new();
        if let Some(root) = ctx.root_for(hook) {
            let root = root.display().to_string();
            env.push(("GEMINI_PROJECT_DIR".to_string(), root.clone()));
            env.push(("GEMINI_CWD".to_string(), root.clone()));
            // "For compatibility" with hooks written for Claude Code.
            env.push(("CLAUDE_PROJECT_DIR".to_string(), root));
        }
        env.push((
            "GEMINI_SESSION_ID".to_string(),
            ctx.session.conversation_id.clone(),
        ));
        env
    }
}
