//! The Cursor dialect: `~/.cursor/hooks.json` and `<root>/.cursor/hooks.json`.
//!
//! Flat entries `{command, matcher?, failClosed?, timeout?, glob?}` under Cursor's
//! camelCase event names. One canonical tool gate fires the dedicated event for its
//! tool (`beforeShellExecution`, `beforeMCPExecution`, `beforeReadFile`) *and* the
//! generic `preToolUse`, each with its own stdin. Failures fail closed by host policy;
//! `"failClosed": false` restores Cursor's fail-open behaviour.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{
    Adapter, Context, Dialect, HookMatcher, HookSpec, Interpretation, ParsedConfig, ProcessResult,
    Scope, string_field, timeout_seconds,
};
use crate::event::{CanonicalEvent, EventPayload, ToolCall, tool};
use crate::matcher::{GlobMatcher, RegexMatcher};
use crate::outcome::{Decision, FailureKind, FailurePolicy, Halt, Outcome, QueueRequest};

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

fn suggestion(event: &str) -> String {
    let claude_map = [
        ("PreToolUse", "preToolUse"),
        ("PostToolUse", "postToolUse"),
        ("UserPromptSubmit", "beforeSubmitPrompt"),
        ("Stop", "stop"),
        ("SubagentStop", "subagentStop"),
        ("SessionStart", "sessionStart"),
        ("SessionEnd", "sessionEnd"),
        ("PreCompact", "preCompact"),
    ];
    if let Some((_, cursor)) = claude_map.iter().find(|(c, _)| *c == event) {
        return format!(
            " (\"{event}\" is a Claude Code event; in .cursor/hooks.json use \"{cursor}\")"
        );
    }
    if let Some(known) = PUBLISHED_EVENTS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(event))
    {
        return format!(" (did you mean \"{known}\"? Cursor event names are camelCase)");
    }
    String::new()
}

impl Adapter for Cursor {
    fn dialect(&self) -> Dialect {
        Dialect::Cursor
    }

    fn parse(&self, text: &str, source: &Path, scope: Scope, root: Option<&Path>) -> ParsedConfig {
        let mut out = ParsedConfig::default();
        let doc: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                out.invalid_json(source, scope, "hooks.json", &e);
                return out;
            }
        };
        let Some(hooks) = doc.get("hooks").and_then(Value::as_object) else {
            out.warn(
                source,
                scope,
                None,
                "hooks.json has no \"hooks\" object — file ignored".to_string(),
            );
            return out;
        };
        for (event, value) in hooks {
            let canonical = canonical_for(event);
            if canonical.is_none() {
                if PUBLISHED_EVENTS.contains(&event.as_str()) {
                    out.warn(source,
                        scope,
                        Some(event),
                        format!(
                            "Cursor hook event \"{event}\" is recognised by Cursor but not supported by copse-hooks yet — entries skipped"
                        ),
                    );
                } else {
                    out.warn(
                        source,
                        scope,
                        Some(event),
                        format!(
                            "Unknown hook event \"{event}\"{} — entries skipped",
                            suggestion(event)
                        ),
                    );
                    continue;
                }
            }
            let Some(entries) = value.as_array() else {
                out.warn(
                    source,
                    scope,
                    Some(event),
                    format!("\"{event}\" must be an array of {{ command }} entries — skipped"),
                );
                continue;
            };
            for (i, entry) in entries.iter().enumerate() {
                let n = i + 1;
                let obj = entry.as_object();
                let command = obj
                    .and_then(|o| o.get("command"))
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|c| !c.is_empty());
                let Some(command) = command else {
                    let hint = if obj.is_some_and(|o| o.get("hooks").is_some_and(Value::is_array)) {
                        " (this looks like Claude Code's nested { matcher, hooks: [...] } shape; Cursor's hooks.json takes flat { command, matcher } entries)"
                    } else {
                        ""
                    };
                    out.warn(source,
                        scope,
                        Some(event),
                        format!(
                            "\"{event}\" entry {n} has a missing or empty \"command\" — skipped{hint}"
                        ),
                    );
                    continue;
                };
                let Some(obj) = obj else { continue };
                if let Some(kind) = obj.get("type").and_then(Value::as_str)
                    && kind != "command"
                {
                    out.warn(source,
                        scope,
                        Some(event),
                        format!(
                            "\"{event}\" entry {n} has type \"{kind}\"; only command hooks are supported — skipped"
                        ),
                    );
                    continue;
                }
                let matcher_source = match obj.get("matcher") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) if s.trim().is_empty() => None,
                    Some(Value::String(s)) => Some(s.trim().to_string()),
                    Some(other) => Some(other.to_string()),
                };
                let matcher = match (&matcher_source, obj.get("matcher")) {
                    (None, _) => HookMatcher::Always,
                    (Some(p), Some(Value::String(_))) => match RegexMatcher::new(p) {
                        Ok(re) => HookMatcher::Regex(re),
                        Err(e) => {
                            out.warn(source,
                                scope,
                                Some(event),
                                format!(
                                    "\"{event}\" entry {n} matcher \"{p}\" is not a valid regex ({}) — hook skipped",
                                    e.reason
                                ),
                            );
                            HookMatcher::Invalid(e)
                        }
                    },
                    (Some(p), _) => {
                        let e = crate::matcher::MatcherError {
                            pattern: p.clone(),
                            reason: "matcher must be a string".to_string(),
                        };
                        out.warn(source,
                            scope,
                            Some(event),
                            format!(
                                "\"{event}\" entry {n} matcher must be a regex string — hook skipped"
                            ),
                        );
                        HookMatcher::Invalid(e)
                    }
                };
                let policy = match obj.get("failClosed") {
                    None | Some(Value::Bool(true)) => FailurePolicy::Closed,
                    Some(Value::Bool(false)) => FailurePolicy::Open,
                    Some(_) => {
                        out.warn(source,
                            scope,
                            Some(event),
                            format!(
                                "\"{event}\" entry {n} \"failClosed\" must be a boolean — failing closed"
                            ),
                        );
                        FailurePolicy::Closed
                    }
                };
                let timeout = match obj.get("timeout") {
                    None | Some(Value::Null) => DEFAULT_TIMEOUT,
                    Some(v) => timeout_seconds(v).unwrap_or_else(|| {
                        out.warn(source,
                            scope,
                            Some(event),
                            format!(
                                "\"{event}\" entry {n} \"timeout\" must be a positive number of seconds — using the default 30s"
                            ),
                        );
                        DEFAULT_TIMEOUT
                    }),
                };
                let glob = match obj.get("glob") {
                    None | Some(Value::Null) => None,
                    Some(v) => {
                        let patterns: Vec<String> = match v {
                            Value::String(s) => vec![s.trim().to_string()],
                            Value::Array(items) => items
                                .iter()
                                .filter_map(Value::as_str)
                                .map(|s| s.trim().to_string())
                                .collect(),
                            _ => Vec::new(),
                        };
                        let patterns: Vec<String> =
                            patterns.into_iter().filter(|p| !p.is_empty()).collect();
                        if patterns.is_empty() {
                            None
                        } else {
                            match GlobMatcher::new(&patterns) {
                                Ok(g) => Some(g),
                                Err(e) => {
                                    out.warn(
                                        source,
                                        scope,
                                        Some(event),
                                        format!("\"{event}\" entry {n} {e} — glob ignored"),
                                    );
                                    None
                                }
                            }
                        }
                    }
                };
                out.hooks.push(HookSpec {
                    dialect: Dialect::Cursor,
                    event: event.clone(),
                    canonical,
                    command: command.to_string(),
                    matcher_source,
                    matcher,
                    glob,
                    policy,
                    timeout,
                    source: source.to_path_buf(),
                    scope,
                    root: root.map(Path::to_path_buf),
                    entry: n,
                    sandbox: true,
                    run_async: false,
                    network: true,
                    loop_limit: None,
                });
            }
        }
        out
    }

    fn applies(&self, hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> bool {
        let e = hook.event.as_str();
        let subject: Cow<'_, str> = match event {
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
            // No Cursor event is wired to the canonical notification.
            EventPayload::Notification { .. } => return false,
        };
        hook.matcher.test(&subject).fires()
    }

    fn marshal(&self, hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> Value {
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
                }
                _ => {
                    put("tool_name", json!(tool_type(&call.tool)));
                    put("tool_input", Value::Object(call.input.clone()));
                    put("cwd", json!(cwd));
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
                    put("tool_input", Value::Object(r.input.clone()));
                    put("tool_use_id", json!(r.tool_call_id));
                    put("cwd", json!(cwd));
                    put("duration", json!(r.duration_ms));
                    // Cursor sends the result JSON-stringified, not raw text.
                    put("tool_output", json!(json!(r.output).to_string()));
                }
                _ => {
                    put("tool_name", json!(tool_type(&r.tool)));
                    put("tool_input", Value::Object(r.input.clone()));
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
                // Always 0: a held follow-up has never re-triggered a run, and vendor
                // scripts read the field unconditionally.
                put("loop_count", json!(0));
            }
            EventPayload::SubagentStart { subagent_type } => {
                put("subagent_type", json!(subagent_type));
                if let Some(model) = &ctx.session.model {
                    put("subagent_model", json!(model.model));
                }
            }
            EventPayload::SubagentStop {
                subagent_type,
                status,
            } => {
                put("subagent_type", json!(subagent_type));
                put("status", json!(status));
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
                for (k, v) in super::compaction_fields(c) {
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
            EventPayload::Notification { .. } => {}
        }
        Value::Object(obj)
    }

    fn interpret(
        &self,
        hook: &HookSpec,
        event: &EventPayload,
        run: &ProcessResult<'_>,
    ) -> Interpretation {
        match event {
            EventPayload::ToolGate(_) => interpret_permission(run),
            EventPayload::SubagentStart { .. } => {
                let mut i = interpret_permission(run);
                // Cursor treats `ask` as deny here: there is nobody to ask.
                if i.outcome.decision == Some(Decision::Ask) {
                    i.outcome.decision = Some(Decision::Deny);
                }
                i.outcome.updated_input = None;
                i.outcome.inject_context = None;
                i
            }
            EventPayload::BeforeSubmitPrompt { .. } => interpret_prompt(run),
            _ => interpret_notification(hook, event, run),
        }
    }

    fn vendor_env(&self, hook: &HookSpec, ctx: &Context<'_>) -> Vec<(String, String)> {
        match ctx.root_for(hook) {
            Some(root) => {
                let root = root.display().to_string();
                vec![
                    ("CURSOR_PROJECT_DIR".to_string(), root.clone()),
                    ("CLAUDE_PROJECT_DIR".to_string(), root),
                ]
            }
            None => Vec::new(),
        }
    }
}

/// The Cursor envelope: ids, event name, roots, then the model when known.
fn envelope(wire_event: &str, ctx: &Context<'_>) -> Map<String, Value> {
    let mut obj = Map::new();
    obj.insert("conversation_id".into(), json!(ctx.session.conversation_id));
    obj.insert("generation_id".into(), json!(ctx.session.generation_id));
    obj.insert("hook_event_name".into(), json!(wire_event));
    let roots: Vec<String> = ctx
        .workspace_roots
        .iter()
        .map(|p: &PathBuf| p.display().to_string())
        .collect();
    obj.insert("workspace_roots".into(), json!(roots));
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

/// Reads a permission response (the tool-gate events).
///
/// Exit 2 is a deny whatever stdout says; a non-zero exit with a valid JSON object is
/// honoured; an empty stdout with exit 0 is "no opinion". Cursor's older spellings
/// (`decision`/`reason`, camelCase messages) and the Claude-style nested
/// `hookSpecificOutput` it accepts are read too.
fn interpret_permission(run: &ProcessResult<'_>) -> Interpretation {
    let text = run.stdout_text();
    let exit2 = run.exit_code == Some(2);
    let stderr_reason = || Some(run.stderr_text()).filter(|s| !s.is_empty());
    if text.is_empty() {
        return match run.exit_code {
            Some(0) => Interpretation::ok(Outcome::default()),
            Some(2) => Interpretation::ok(Outcome {
                decision: Some(Decision::Deny),
                agent_message: stderr_reason(),
                ..Outcome::default()
            }),
            _ => {
                let f = run.exit_failure();
                Interpretation::failed(f.kind, f.message, true)
            }
        };
    }
    let parsed: Result<Value, _> = serde_json::from_str(&text);
    let obj = match parsed {
        Ok(Value::Object(obj)) => obj,
        other => {
            if exit2 {
                return Interpretation {
                    outcome: Outcome {
                        decision: Some(Decision::Deny),
                        agent_message: stderr_reason(),
                        ..Outcome::default()
                    },
                    parse_ok: false,
                    failure: None,
                };
            }
            if run.exit_code != Some(0) {
                let f = run.exit_failure();
                return Interpretation::failed(f.kind, f.message, false);
            }
            let what = if other.is_ok() {
                "printed JSON that is not an object — response ignored"
            } else {
                "printed invalid JSON — response ignored"
            };
            return Interpretation::failed(FailureKind::InvalidJson, what, false);
        }
    };
    let nested = obj.get("hookSpecificOutput").and_then(Value::as_object);
    let raw_decision = obj
        .get("permission")
        .or_else(|| obj.get("decision"))
        .or_else(|| nested.and_then(|n| n.get("permissionDecision")));
    let mut decision = match raw_decision {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => match s.as_str() {
            "allow" | "approve" => Some(Decision::Allow),
            "ask" | "defer" => Some(Decision::Ask),
            "deny" | "block" => Some(Decision::Deny),
            other => {
                return Interpretation::failed(
                    FailureKind::InvalidJson,
                    format!("answered permission \"{other}\", which is not allow, ask or deny"),
                    false,
                );
            }
        },
        Some(other) => {
            return Interpretation::failed(
                FailureKind::InvalidJson,
                format!("answered permission {other}, which is not allow, ask or deny"),
                false,
            );
        }
    };
    if exit2 {
        decision = Some(Decision::Deny);
    }
    let mut agent_message = string_field(&obj, &["agent_message", "agentMessage", "reason"])
        .or_else(|| nested.and_then(|n| string_field(n, &["permissionDecisionReason"])));
    if agent_message.is_none() && decision == Some(Decision::Deny) && exit2 {
        agent_message = stderr_reason();
    }
    let user_message = string_field(&obj, &["user_message", "userMessage"]);
    let updated_input = ["updated_input", "updatedInput"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_object))
        .or_else(|| nested.and_then(|n| n.get("updatedInput").and_then(Value::as_object)))
        .cloned();
    let inject_context = string_field(&obj, &["additional_context", "additionalContext"]);
    Interpretation::ok(Outcome {
        decision,
        agent_message,
        user_message,
        updated_input,
        inject_context,
        ..Outcome::default()
    })
}

/// The fallback halt reason when a `beforeSubmitPrompt` hook gives none.
pub const PROMPT_BLOCKED: &str = "Prompt submission was blocked by a beforeSubmitPrompt hook.";

/// Reads a `beforeSubmitPrompt` response: `continue: false` (or exit 2) halts the
/// submission; context is injected only when not halting.
fn interpret_prompt(run: &ProcessResult<'_>) -> Interpretation {
    let text = run.stdout_text();
    let halt_with = |user: Option<String>, agent: Option<String>| {
        let reason = user
            .clone()
            .or_else(|| agent.clone())
            .unwrap_or_else(|| PROMPT_BLOCKED.to_string());
        Outcome {
            decision: Some(Decision::Deny),
            halt: Some(Halt { reason }),
            user_message: user,
            agent_message: agent,
            ..Outcome::default()
        }
    };
    let parsed = if text.is_empty() {
        None
    } else {
        serde_json::from_str::<Value>(&text).ok()
    };
    if run.exit_code == Some(2) {
        let obj = parsed.as_ref().and_then(Value::as_object);
        let user = obj
            .and_then(|o| string_field(o, &["user_message", "userMessage"]))
            .or_else(|| Some(run.stderr_text()).filter(|s| !s.is_empty()));
        let agent = obj.and_then(|o| string_field(o, &["agent_message", "agentMessage"]));
        return Interpretation {
            outcome: halt_with(user, agent),
            parse_ok: text.is_empty() || parsed.is_some(),
            failure: None,
        };
    }
    if text.is_empty() {
        return match run.exit_code {
            Some(0) => Interpretation::ok(Outcome::default()),
            _ => {
                let f = run.exit_failure();
                Interpretation::failed(f.kind, f.message, true)
            }
        };
    }
    let obj = match parsed {
        Some(Value::Object(obj)) => obj,
        other => {
            if run.exit_code != Some(0) {
                let f = run.exit_failure();
                return Interpretation::failed(f.kind, f.message, false);
            }
            let what = if other.is_some() {
                "printed JSON that is not an object — response ignored"
            } else {
                "printed invalid JSON — response ignored"
            };
            return Interpretation::failed(FailureKind::InvalidJson, what, false);
        }
    };
    let user = string_field(&obj, &["user_message", "userMessage"]);
    let agent = string_field(&obj, &["agent_message", "agentMessage"]);
    if obj.get("continue") == Some(&Value::Bool(false)) {
        return Interpretation::ok(halt_with(user, agent));
    }
    Interpretation::ok(Outcome {
        user_message: user,
        agent_message: agent,
        inject_context: string_field(&obj, &["additional_context", "additionalContext"]),
        ..Outcome::default()
    })
}

/// Reads a notification event's response. A non-zero exit is a failure (recorded; it
/// cannot block anything). Only `stop` / `subagentStop` follow-ups (held),
/// `postToolUse` context (queued, budgeted) and `sessionStart` env are read.
fn interpret_notification(
    hook: &HookSpec,
    event: &EventPayload,
    run: &ProcessResult<'_>,
) -> Interpretation {
    if run.exit_code != Some(0) {
        let f = run.exit_failure();
        return Interpretation::failed(f.kind, f.message, true);
    }
    let text = run.stdout_text();
    if text.is_empty() || matches!(event, EventPayload::AfterFileEdit { .. }) {
        return Interpretation::ok(Outcome::default());
    }
    let obj = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(obj)) => obj,
        _ if hook.event == "postToolUse" => {
            return Interpretation::failed(
                FailureKind::InvalidJson,
                "printed invalid JSON — response ignored",
                false,
            );
        }
        _ => {
            return Interpretation {
                outcome: Outcome::default(),
                parse_ok: false,
                failure: None,
            };
        }
    };
    let mut outcome = Outcome::default();
    match event {
        EventPayload::Stop { .. } => {
            outcome.queue_message = followup(&obj);
        }
        EventPayload::SubagentStop { status, .. } if status == "completed" => {
            outcome.queue_message = followup(&obj);
        }
        EventPayload::AfterToolUse(_) if hook.event == "postToolUse" => {
            // `updated_mcp_tool_output` is parsed but not applied: the hook runs
            // detached, after the result was consumed (see docs/dialects/cursor.md).
            outcome.queue_message =
                string_field(&obj, &["additional_context", "additionalContext"]).map(|text| {
                    QueueRequest {
                        text,
                        send_now: false,
                        held: false,
                    }
                });
        }
        EventPayload::SessionStart { .. } => {
            if let Some(env) = obj.get("env").and_then(Value::as_object) {
                let vars: std::collections::BTreeMap<String, String> = env
                    .iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .filter(|(k, _)| {
                        !k.is_empty() && !k.contains('=') && k != crate::env::DEPTH_VAR
                    })
                    .collect();
                if !vars.is_empty() {
                    outcome.session_env = Some(vars);
                }
            }
        }
        _ => {}
    }
    Interpretation::ok(outcome)
}

/// A `followup_message`, queued held: never auto-submitted.
fn followup(obj: &Map<String, Value>) -> Option<QueueRequest> {
    string_field(obj, &["followup_message", "followupMessage"]).map(|text| QueueRequest {
        text,
        send_now: false,
        held: true,
    })
}
