//! The Copse dialect, this project's native format: `$COPSE_DIR/hooks.json` (default
//! `~/.copse/hooks.json`, user scope) and `<root>/.copse/hooks.json` (project scope).
//!
//! Flat entries `{command, matcher?, glob?, onFailure?, sandbox?, async?, loop_limit?,
//! timeout?, persistent?, idleTimeout?}` under the *canonical* event names, so one config entry is one hook on one
//! canonical event: there is no wire-event translation. Stdin is the canonical
//! envelope (`hook_event_name`, ids, roots, the model as a nested object) plus the
//! event's fields in snake_case; answers use the canonical outcome vocabulary
//! (`decision`, `haltRun`, `updatedInput`, `injectContext`, `agentMessage`,
//! `userMessage`, `queueMessage`, `sessionEnv`).
//!
//! Failures fail closed by default (`"onFailure": "open"` opts out). `"sandbox": false`
//! is the only way any hook leaves the sandbox. `async` and `loop_limit` are parsed and
//! validated here ([`Copse::parse_with_options`]); running `async` afterFileEdit hooks
//! detached and enforcing `loop_limit` are the engine's (see `docs/dialects/copse.md`).
//!
//! The file format's JSON Schema is generated from the types at the end of this module
//! ([`copse_hooks_schema`]) and committed as `schemas/copse-hooks.schema.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{
    Adapter, Context, Dialect, HookMatcher, HookSpec, Interpretation, ParsedConfig, ProcessResult,
    Scope, Stdout, string_field, timeout_seconds,
};
use crate::event::{CanonicalEvent, EventPayload};
use crate::matcher::{GlobMatcher, MatcherError, RegexMatcher};
use crate::outcome::{Decision, FailureKind, FailurePolicy, Halt, Outcome, QueueRequest};
use crate::queue::DEFAULT_CONTINUATION_BUDGET;

/// The default per-hook timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The halt reason when a hook halts without saying why.
pub const HALTED_BY_HOOK: &str = "Halted by hook";

/// Canonical event names the reference platform knows but this engine has no fire site
/// for. Their entries are parsed and listed (`canonical: None`), never run.
pub const UNWIRED_EVENTS: [&str; 7] = [
    "turnStart",
    "beforeFinalize",
    "compaction",
    "beforeDiffApply",
    "afterDiffApply",
    "permissionDecision",
    "postTurnReview",
];

/// Blocking decision events: a verdict is awaited, so `async: true` is not allowed.
pub const FIXED_BLOCKING_EVENTS: [&str; 4] = [
    "toolGate",
    "beforeSubmitPrompt",
    "subagentStart",
    "beforeDiffApply",
];

/// The canonical event a Copse event name is wired to; `None` for unwired and unknown
/// names.
pub fn canonical_for(event: &str) -> Option<CanonicalEvent> {
    CanonicalEvent::from_name(event).filter(|e| WIRED_EVENTS.contains(e))
}

/// The canonical events a Copse hooks file may declare (`permissionRequest` is not
/// part of the Copse format yet).
pub const WIRED_EVENTS: [CanonicalEvent; 13] = [
    CanonicalEvent::ToolGate,
    CanonicalEvent::BeforeSubmitPrompt,
    CanonicalEvent::AfterFileEdit,
    CanonicalEvent::Stop,
    CanonicalEvent::AfterToolUse,
    CanonicalEvent::SubagentStart,
    CanonicalEvent::SubagentStop,
    CanonicalEvent::SessionStart,
    CanonicalEvent::SessionEnd,
    CanonicalEvent::PreCompact,
    CanonicalEvent::AfterAgentResponse,
    CanonicalEvent::AfterAgentThought,
    CanonicalEvent::Notification,
];

/// Whether a name is a known Copse event (wired or not).
pub fn is_known_event(event: &str) -> bool {
    canonical_for(event).is_some() || UNWIRED_EVENTS.contains(&event)
}

/// Whether `matcher` is tested on this event (it has a matcher subject).
pub fn uses_matcher(event: &str) -> bool {
    matches!(
        event,
        "toolGate"
            | "afterToolUse"
            | "subagentStart"
            | "subagentStop"
            | "sessionEnd"
            | "preCompact"
            | "permissionDecision"
    )
}

/// Whether `glob` is tested on this event (it concerns one file).
pub fn uses_glob(event: &str) -> bool {
    matches!(
        event,
        "afterFileEdit" | "beforeDiffApply" | "afterDiffApply"
    )
}

/// Whether `async: true` may be declared on this event. On `afterFileEdit` it detaches
/// the hook; on observation events (already detached) it changes nothing.
pub fn async_allowed(event: &str) -> bool {
    !FIXED_BLOCKING_EVENTS.contains(&event)
}

pub(crate) use crate::loop_limit::LoopLimit;

/// How long an idle persistent hook lives by default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// A `"persistent": true` hook's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Persistence {
    /// How long the process may sit without a request before it is stopped (it
    /// restarts on demand); `None` (`"idleTimeout": 0`) keeps it for the engine's life.
    pub idle_timeout: Option<Duration>,
}

/// What a Copse entry declares beyond the [`HookSpec`] fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EntryOptions {
    /// `async: true`, accepted (never on a blocking decision event). On
    /// `afterFileEdit` the hook runs detached instead of being awaited.
    pub run_async: bool,
    /// The declared `loop_limit`, if valid.
    pub loop_limit: Option<LoopLimit>,
}

/// The Copse adapter.
#[derive(Debug, Default, Clone, Copy)]
pub struct Copse;

/// The file's name as messages start with it: `.copse/hooks.json` (or the data
/// directory's name when `$COPSE_DIR` is elsewhere).
/// The file's name as messages start with it.
fn display_name(source: &Path) -> String {
    super::spec::display_name(source, "hooks.json")
}

/// A hint for an unknown event name: the canonical name of a Cursor or Claude Code
/// event, or the right spelling of a known one.
fn suggestion(event: &str) -> String {
    let vendor_map = [
        ("PreToolUse", "toolGate"),
        ("preToolUse", "toolGate"),
        ("beforeShellExecution", "toolGate"),
        ("beforeMCPExecution", "toolGate"),
        ("beforeReadFile", "toolGate"),
        ("PostToolUse", "afterToolUse"),
        ("PostToolUseFailure", "afterToolUse"),
        ("postToolUse", "afterToolUse"),
        ("postToolUseFailure", "afterToolUse"),
        ("afterShellExecution", "afterToolUse"),
        ("afterMCPExecution", "afterToolUse"),
        ("UserPromptSubmit", "beforeSubmitPrompt"),
    ];
    if let Some((_, canonical)) = vendor_map.iter().find(|(v, _)| *v == event) {
        return format!(
            " (\"{event}\" is a vendor event name; .copse/hooks.json uses canonical names: \"{canonical}\")"
        );
    }
    let known = WIRED_EVENTS.iter().map(|e| e.name()).chain(UNWIRED_EVENTS);
    for name in known {
        if name.eq_ignore_ascii_case(event) {
            return format!(" (did you mean \"{name}\"? canonical event names are camelCase)");
        }
    }
    String::new()
}

/// Where one entry's warnings go.
struct EntryCtx<'a> {
    source: &'a Path,
    scope: Scope,
    event: &'a str,
    n: usize,
}

impl EntryCtx<'_> {
    fn warn(&self, out: &mut ParsedConfig, what: String) {
        let (event, n) = (self.event, self.n);
        out.warn(
            self.source,
            self.scope,
            Some(event),
            format!("\"{event}\" entry {n} {what}"),
        );
    }
}

impl Copse {
    /// Parses a config file, returning each hook's [`EntryOptions`] alongside it
    /// (`options[i]` belongs to `hooks[i]`). [`Adapter::parse`] is this without them.
    pub fn parse_with_options(
        &self,
        text: &str,
        source: &Path,
        scope: Scope,
        root: Option<&Path>,
    ) -> (ParsedConfig, Vec<EntryOptions>) {
        let mut out = ParsedConfig::default();
        let mut options = Vec::new();
        let name = display_name(source);
        let doc: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                out.invalid_json(source, scope, &name, &e);
                return (out, options);
            }
        };
        let Some(hooks) = doc.get("hooks").and_then(Value::as_object) else {
            out.warn(
                source,
                scope,
                None,
                format!("{name} has no \"hooks\" object — file ignored"),
            );
            return (out, options);
        };
        for (event, value) in hooks {
            let canonical = canonical_for(event);
            if canonical.is_none() {
                if !UNWIRED_EVENTS.contains(&event.as_str()) {
                    out.warn(
                        source,
                        scope,
                        Some(event),
                        format!(
                            "Unknown hook event \"{event}\" — entries skipped{}",
                            suggestion(event)
                        ),
                    );
                    continue;
                }
                if !value.as_array().is_some_and(Vec::is_empty) {
                    out.warn(
                        source,
                        scope,
                        Some(event),
                        format!(
                            "\"{event}\" is a known canonical event with no wired fire site yet — declared hook parsed but inactive"
                        ),
                    );
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
                let cx = EntryCtx {
                    source,
                    scope,
                    event,
                    n: i + 1,
                };
                let Some((spec, opts)) = Self::entry(&mut out, &cx, canonical, root, entry) else {
                    continue;
                };
                out.hooks.push(spec);
                options.push(opts);
            }
        }
        (out, options)
    }

    /// Reads one entry; `None` (after a warning) when it has no usable command.
    fn entry(
        out: &mut ParsedConfig,
        cx: &EntryCtx<'_>,
        canonical: Option<CanonicalEvent>,
        root: Option<&Path>,
        entry: &Value,
    ) -> Option<(HookSpec, EntryOptions)> {
        let event = cx.event;
        let obj = entry.as_object();
        let command = obj
            .and_then(|o| o.get("command"))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|c| !c.is_empty());
        let (Some(obj), Some(command)) = (obj, command) else {
            let hint = if obj.is_some_and(|o| o.get("hooks").is_some_and(Value::is_array)) {
                " (this looks like Claude Code's nested { matcher, hooks: [...] } shape; .copse/hooks.json takes flat { command, matcher } entries)"
            } else {
                ""
            };
            cx.warn(
                out,
                format!("has a missing or empty \"command\" — skipped{hint}"),
            );
            return None;
        };

        let policy = match obj.get("onFailure") {
            None | Some(Value::Null) => FailurePolicy::Closed,
            Some(Value::String(s)) if s == "closed" => FailurePolicy::Closed,
            Some(Value::String(s)) if s == "open" => FailurePolicy::Open,
            Some(_) => {
                cx.warn(
                    out,
                    "\"onFailure\" must be \"open\" or \"closed\" — defaulting to \"closed\""
                        .to_string(),
                );
                FailurePolicy::Closed
            }
        };

        let sandbox = match obj.get("sandbox") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                cx.warn(
                    out,
                    "\"sandbox\" must be a boolean — defaulting to sandboxed (true)".to_string(),
                );
                true
            }
        };
        let network = match obj.get("network") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                cx.warn(
                    out,
                    "\"network\" must be a boolean — network stays allowed".to_string(),
                );
                true
            }
        };

        let run_async = match obj.get("async") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) if async_allowed(event) => true,
            Some(Value::Bool(true)) => {
                cx.warn(
                    out,
                    format!(
                        "\"async: true\" is not allowed on the blocking decision event \"{event}\" — ignored"
                    ),
                );
                false
            }
            Some(_) => {
                cx.warn(out, "\"async\" must be a boolean — ignored".to_string());
                false
            }
        };

        let loop_limit = match obj.get("loop_limit") {
            None => None,
            Some(Value::Null) => {
                cx.warn(
                    out,
                    format!(
                        "\"loop_limit: null\" (unlimited) is clamped to the global auto-continuation budget ({DEFAULT_CONTINUATION_BUDGET} per turn tree) — human-in-the-loop is the floor"
                    ),
                );
                Some(LoopLimit::Unlimited)
            }
            Some(v) => match v.as_u64() {
                Some(n) => Some(LoopLimit::At(u32::try_from(n).unwrap_or(u32::MAX))),
                None => {
                    cx.warn(
                        out,
                        "\"loop_limit\" must be a non-negative integer or null — ignored"
                            .to_string(),
                    );
                    None
                }
            },
        };

        let timeout = match obj.get("timeout") {
            None | Some(Value::Null) => DEFAULT_TIMEOUT,
            Some(v) => timeout_seconds(v).unwrap_or_else(|| {
                cx.warn(
                    out,
                    "\"timeout\" must be a positive number of seconds — using the default 30s"
                        .to_string(),
                );
                DEFAULT_TIMEOUT
            }),
        };

        let persistent = Self::persistence(out, cx, obj);
        let (matcher_source, matcher) = Self::matcher(out, cx, obj.get("matcher"));
        let glob = Self::glob(out, cx, obj.get("glob"));

        let spec = HookSpec {
            dialect: Dialect::Copse,
            event: event.to_string(),
            canonical,
            command: command.to_string(),
            matcher_source,
            matcher,
            glob,
            policy,
            timeout,
            source: cx.source.to_path_buf(),
            scope: cx.scope,
            root: root.map(Path::to_path_buf),
            entry: cx.n,
            sandbox,
            network,
            run_async,
            loop_limit,
            options: super::HookOptions {
                policy_fixed: matches!(obj.get("onFailure"), Some(Value::String(_))),
                persistent,
                ..super::HookOptions::default()
            },
        };
        Some((
            spec,
            EntryOptions {
                run_async,
                loop_limit,
            },
        ))
    }

    /// `"persistent"` and `"idleTimeout"`: whether one long-lived process answers every
    /// event, and after how long without one it is stopped.
    fn persistence(
        out: &mut ParsedConfig,
        cx: &EntryCtx<'_>,
        obj: &Map<String, Value>,
    ) -> Option<Persistence> {
        let persistent = match obj.get("persistent") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(_) => {
                cx.warn(
                    out,
                    "\"persistent\" must be a boolean — the hook runs per call".to_string(),
                );
                false
            }
        };
        let idle = match obj.get("idleTimeout") {
            None | Some(Value::Null) => Some(DEFAULT_IDLE_TIMEOUT),
            Some(Value::Number(n)) if n.as_f64() == Some(0.0) => None,
            Some(v) => Some(timeout_seconds(v).unwrap_or_else(|| {
                cx.warn(
                    out,
                    "\"idleTimeout\" must be a non-negative number of seconds — using the default 600s"
                        .to_string(),
                );
                DEFAULT_IDLE_TIMEOUT
            })),
        };
        if !persistent {
            if obj.get("idleTimeout").is_some_and(|v| !v.is_null()) {
                cx.warn(
                    out,
                    "\"idleTimeout\" only applies to a \"persistent\": true hook — ignored"
                        .to_string(),
                );
            }
            return None;
        }
        Some(Persistence { idle_timeout: idle })
    }

    /// The matcher as written and compiled. Events without a matcher subject ignore it
    /// (with a warning), so it never stops them firing.
    fn matcher(
        out: &mut ParsedConfig,
        cx: &EntryCtx<'_>,
        raw: Option<&Value>,
    ) -> (Option<String>, HookMatcher) {
        let event = cx.event;
        let source = match raw {
            None | Some(Value::Null) => return (None, HookMatcher::Always),
            Some(Value::String(s)) if s.trim().is_empty() => return (None, HookMatcher::Always),
            Some(Value::String(s)) => s.trim().to_string(),
            Some(other) => other.to_string(),
        };
        if !uses_matcher(event) {
            let hint = if uses_glob(event) {
                " (use \"glob\" to select files)"
            } else {
                ""
            };
            cx.warn(
                out,
                format!("\"matcher\" has no effect on \"{event}\"{hint} — ignored"),
            );
            return (Some(source), HookMatcher::Always);
        }
        if !raw.is_some_and(Value::is_string) {
            cx.warn(
                out,
                "\"matcher\" must be a regex string — the hook never fires".to_string(),
            );
            let e = MatcherError {
                pattern: source.clone(),
                reason: "matcher must be a string".to_string(),
            };
            return (Some(source), HookMatcher::Invalid(e));
        }
        match RegexMatcher::new(&source) {
            Ok(re) => (Some(source), HookMatcher::Regex(re)),
            Err(e) => {
                cx.warn(
                    out,
                    format!(
                        "matcher \"{source}\" is not a valid regex ({}) — the hook never fires",
                        e.reason
                    ),
                );
                (Some(source), HookMatcher::Invalid(e))
            }
        }
    }

    /// The compiled `glob` (a string or an array of strings).
    fn glob(out: &mut ParsedConfig, cx: &EntryCtx<'_>, raw: Option<&Value>) -> Option<GlobMatcher> {
        let event = cx.event;
        let patterns: Vec<String> = match raw {
            None | Some(Value::Null) => return None,
            Some(Value::String(s)) => vec![s.trim().to_string()],
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
                .iter()
                .filter_map(Value::as_str)
                .map(|s| s.trim().to_string())
                .collect(),
            Some(_) => {
                cx.warn(
                    out,
                    "\"glob\" must be a string or an array of strings — glob ignored".to_string(),
                );
                return None;
            }
        };
        let patterns: Vec<String> = patterns.into_iter().filter(|p| !p.is_empty()).collect();
        if patterns.is_empty() {
            return None;
        }
        if !uses_glob(event) {
            cx.warn(
                out,
                format!("\"glob\" has no effect on \"{event}\" — ignored"),
            );
            return None;
        }
        match GlobMatcher::new(&patterns) {
            Ok(g) => Some(g),
            Err(e) => {
                cx.warn(out, format!("{e} — glob ignored"));
                None
            }
        }
    }

    /// The matcher subject of an event; `None` when the event has none.
    fn subject(event: &EventPayload) -> Option<&str> {
        match event {
            EventPayload::ToolGate(call) => Some(&call.tool),
            EventPayload::AfterToolUse(r) => Some(&r.tool),
            EventPayload::SubagentStart { subagent_type }
            | EventPayload::SubagentStop { subagent_type, .. } => Some(subagent_type),
            EventPayload::SessionEnd { reason, .. } => Some(reason),
            EventPayload::PreCompact(c) => Some(&c.trigger),
            _ => None,
        }
    }
}

impl Adapter for Copse {
    fn session_env_reaches_hooks(&self) -> bool {
        true
    }

    fn dialect(&self) -> Dialect {
        Dialect::Copse
    }

    fn parse(&self, text: &str, source: &Path, scope: Scope, root: Option<&Path>) -> ParsedConfig {
        self.parse_with_options(text, source, scope, root).0
    }

    fn applies(&self, hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> bool {
        if hook.canonical != Some(event.event()) {
            return false;
        }
        if let (EventPayload::AfterFileEdit { file_path, .. }, Some(glob)) = (event, &hook.glob)
            && !glob.matches_path(Path::new(file_path), ctx.root_for(hook))
        {
            return false;
        }
        match Self::subject(event) {
            Some(subject) => hook.matcher.test(subject).fires(),
            None => true,
        }
    }

    fn match_subject(&self, _hook: &HookSpec, event: &EventPayload) -> Option<String> {
        Self::subject(event).map(str::to_string)
    }

    fn marshal(&self, _hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> Value {
        let mut obj = envelope(event.event(), ctx);
        let mut put = |k: &str, v: Value| {
            obj.insert(k.to_string(), v);
        };
        match event {
            EventPayload::ToolGate(call) => {
                put("tool_name", json!(call.tool));
                put("input", Value::Object(call.input.clone()));
                if let Some(content) = &call.file_content {
                    put("file_content", json!(content));
                }
            }
            EventPayload::BeforeSubmitPrompt { prompt } => put("prompt", json!(prompt)),
            EventPayload::AfterFileEdit { file_path, edits } => {
                put("file_path", json!(file_path));
                put(
                    "edits",
                    serde_json::to_value(edits).unwrap_or_else(|_| json!([])),
                );
            }
            EventPayload::Stop { status } => put("status", json!(status)),
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
            EventPayload::AfterToolUse(r) => {
                put("tool_name", json!(r.tool));
                put("tool_call_id", json!(r.tool_call_id));
                put("is_error", json!(r.is_error));
                put("input", Value::Object(r.input.clone()));
                put("output", json!(r.output));
                put("duration", json!(r.duration_ms));
            }
            EventPayload::SessionStart { first_turn } => {
                put("first_turn", json!(first_turn));
                put("session_id", json!(ctx.session.conversation_id));
            }
            EventPayload::SessionEnd {
                reason,
                duration_ms,
            } => {
                put("reason", json!(reason));
                put("duration_ms", json!(duration_ms));
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
            EventPayload::Notification {
                notification_type,
                message,
                title,
                details,
            } => {
                put("notification_type", json!(notification_type));
                put("message", json!(message));
                if let Some(title) = title {
                    put("title", json!(title));
                }
                put("details", details.clone());
            }
            // Not a Copse event (see `WIRED_EVENTS`): never selected.
            EventPayload::PermissionRequest(_) => {}
        }
        Value::Object(obj)
    }

    fn interpret(
        &self,
        _hook: &HookSpec,
        event: &EventPayload,
        run: &ProcessResult<'_>,
    ) -> Interpretation {
        let stdout = Stdout::read(run);
        let parse_ok = matches!(stdout, Stdout::Empty | Stdout::Object(_));
        if run.exit_code == Some(2) && event.event().is_gated() {
            return Interpretation {
                outcome: exit_two(event, run, stdout.object()),
                parse_ok,
                failure: None,
            };
        }
        let exit_failure = || {
            let f = run.exit_failure();
            Interpretation::failed(f.kind, f.message, parse_ok)
        };
        match (run.exit_code, stdout) {
            (None, _) => exit_failure(),
            (Some(0), Stdout::Empty) => Interpretation::ok(Outcome::default()),
            (Some(0), Stdout::Invalid) => Interpretation::failed(
                FailureKind::InvalidJson,
                "printed invalid JSON — response ignored",
                false,
            ),
            (Some(0), Stdout::NotObject) => Interpretation::failed(
                FailureKind::InvalidJson,
                "printed JSON that is not an object — response ignored",
                false,
            ),
            (Some(_), Stdout::Object(obj)) => respond(event, &obj),
            (Some(_), _) => exit_failure(),
        }
    }

    /// `$COPSE_DIR` holds the settings and the audit store: a Copse user hook keeps
    /// its state beneath it, in `state/`.
    fn user_state_dir(&self, _home: &Path, copse_dir: &Path) -> PathBuf {
        copse_dir.join("state")
    }

    fn vendor_env(&self, hook: &HookSpec, ctx: &Context<'_>) -> Vec<(String, String)> {
        match ctx.root_for(hook) {
            Some(root) => vec![("COPSE_PROJECT_DIR".to_string(), root.display().to_string())],
            None => Vec::new(),
        }
    }
}

/// The Copse envelope: the canonical event name, ids, roots, then the model (nested)
/// when known.
fn envelope(event: CanonicalEvent, ctx: &Context<'_>) -> Map<String, Value> {
    let mut obj = Map::new();
    obj.insert("hook_event_name".into(), json!(event.name()));
    obj.insert("conversation_id".into(), json!(ctx.session.conversation_id));
    obj.insert("generation_id".into(), json!(ctx.session.generation_id));
    let roots: Vec<String> = ctx
        .workspace_roots
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    obj.insert("workspace_roots".into(), json!(roots));
    if let Some(model) = &ctx.session.model {
        obj.insert(
            "model".into(),
            json!({
                "model": model.model,
                "model_id": model.model_id,
                "model_params": serde_json::to_value(&model.model_params)
                    .unwrap_or(Value::Array(Vec::new())),
            }),
        );
    }
    obj
}

/// Exit 2 on a gated event: a deny whatever stdout says, with stderr as the reason
/// (else the JSON's own message). On `beforeSubmitPrompt` it also halts.
fn exit_two(
    event: &EventPayload,
    run: &ProcessResult<'_>,
    obj: Option<&Map<String, Value>>,
) -> Outcome {
    let stderr = Some(run.stderr_text()).filter(|s| !s.is_empty());
    match event {
        EventPayload::BeforeSubmitPrompt { .. } => {
            let reason = stderr
                .or_else(|| obj.and_then(|o| string_field(o, &["userMessage", "agentMessage"])))
                .unwrap_or_else(|| HALTED_BY_HOOK.to_string());
            Outcome {
                decision: Some(Decision::Deny),
                halt: Some(Halt {
                    reason: reason.clone(),
                }),
                user_message: Some(reason),
                ..Outcome::default()
            }
        }
        _ => Outcome {
            decision: Some(Decision::Deny),
            agent_message: stderr.or_else(|| obj.and_then(|o| string_field(o, &["agentMessage"]))),
            ..Outcome::default()
        },
    }
}

/// The halt a response asks for: `haltRun` (anything but `null` / `false`; its
/// `reason` or the default), else the `continue: false` alias.
fn halt_of(
    obj: &Map<String, Value>,
    user: Option<&String>,
    agent: Option<&String>,
) -> Option<Halt> {
    let reason = match obj.get("haltRun") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => {
            if obj.get("continue") != Some(&Value::Bool(false)) {
                return None;
            }
            user.or(agent).cloned()
        }
        Some(Value::Object(h)) => string_field(h, &["reason"]),
        Some(Value::String(s)) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        Some(_) => None,
    };
    Some(Halt {
        reason: reason.unwrap_or_else(|| HALTED_BY_HOOK.to_string()),
    })
}

/// `queueMessage: {text, sendNow}` (text non-empty; `sendNow` only when literally
/// `true`).
fn queue_message(obj: &Map<String, Value>, held: bool) -> Option<QueueRequest> {
    let q = obj.get("queueMessage")?.as_object()?;
    let text = string_field(q, &["text"])?;
    Some(QueueRequest {
        text,
        send_now: q.get("sendNow") == Some(&Value::Bool(true)),
        held,
    })
}

/// `sessionEnv`: string values only; the depth variable, empty keys and keys with `=`
/// are dropped.
fn session_env(obj: &Map<String, Value>) -> Option<BTreeMap<String, String>> {
    let env = obj.get("sessionEnv")?.as_object()?;
    let vars: BTreeMap<String, String> = env
        .iter()
        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
        .filter(|(k, _)| !k.is_empty() && !k.contains('=') && k != crate::env::DEPTH_VAR)
        .collect();
    (!vars.is_empty()).then_some(vars)
}

/// Reads a JSON answer for an event.
fn respond(event: &EventPayload, obj: &Map<String, Value>) -> Interpretation {
    let decision = match obj.get("decision") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => match Decision::parse(s) {
            Some(d) => Some(d),
            None => {
                return Interpretation::failed(
                    FailureKind::InvalidJson,
                    format!("answered decision \"{s}\", which is not allow, deny or ask"),
                    false,
                );
            }
        },
        Some(other) => {
            return Interpretation::failed(
                FailureKind::InvalidJson,
                format!("answered decision {other}, which is not allow, deny or ask"),
                false,
            );
        }
    };
    let agent_message = string_field(obj, &["agentMessage"]);
    let user_message = string_field(obj, &["userMessage"]);
    let halt = halt_of(obj, user_message.as_ref(), agent_message.as_ref());
    // A halt stops the run: whatever it gates does not happen either.
    let decision = if halt.is_some() {
        Some(Decision::Deny)
    } else {
        decision
    };
    let inject_context = string_field(obj, &["injectContext"]);
    let outcome = match event {
        EventPayload::ToolGate(_) => Outcome {
            decision,
            agent_message,
            user_message,
            updated_input: obj.get("updatedInput").and_then(Value::as_object).cloned(),
            inject_context,
            halt,
            ..Outcome::default()
        },
        EventPayload::BeforeSubmitPrompt { .. } => Outcome {
            decision,
            agent_message,
            user_message,
            inject_context: if halt.is_some() { None } else { inject_context },
            halt,
            ..Outcome::default()
        },
        EventPayload::SubagentStart { .. } => Outcome {
            // Nobody can be asked before a subagent starts.
            decision: decision.map(|d| {
                if d == Decision::Ask {
                    Decision::Deny
                } else {
                    d
                }
            }),
            agent_message,
            user_message,
            inject_context,
            halt,
            ..Outcome::default()
        },
        EventPayload::Stop { .. } => Outcome {
            queue_message: queue_message(obj, true),
            ..Outcome::default()
        },
        EventPayload::SubagentStop { status, .. } => Outcome {
            queue_message: if status == "completed" {
                queue_message(obj, true)
            } else {
                None
            },
            ..Outcome::default()
        },
        EventPayload::SessionStart { .. } => Outcome {
            session_env: session_env(obj),
            ..Outcome::default()
        },
        EventPayload::AfterFileEdit { .. }
        | EventPayload::AfterToolUse(_)
        | EventPayload::SessionEnd { .. }
        | EventPayload::PreCompact(_)
        | EventPayload::AfterAgentResponse { .. }
        | EventPayload::AfterAgentThought { .. }
        | EventPayload::Notification { .. }
        | EventPayload::PermissionRequest(_) => Outcome {
            queue_message: queue_message(obj, false),
            ..Outcome::default()
        },
    };
    Interpretation::ok(outcome)
}

// ---------------------------------------------------------------------------------
// The file format, as types: the source of `schemas/copse-hooks.schema.json`.
// ---------------------------------------------------------------------------------

/// A Copse hooks file: `$COPSE_DIR/hooks.json` (default `~/.copse/hooks.json`) or
/// `<root>/.copse/hooks.json`. Hooks are keyed by canonical event name; each entry is
/// one shell command that gets the event as JSON on stdin. Project files run only in
/// trusted workspaces.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "copse-hooks configuration")]
pub struct CopseHooksFile {
    /// The JSON Schema this file follows (for editors; ignored by copse-hooks).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub schema: Option<String>,
    /// Format version: `1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32", range(min = 1))]
    pub version: Option<u32>,
    /// Hook entries by canonical event name, run in file order.
    pub hooks: CopseHooksByEvent,
}

/// Hook entries by canonical event name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CopseHooksByEvent {
    /// A tool call is about to run (blocking decision). Matcher subject: the canonical
    /// tool name (`run_shell`, `read_file`, `mcp__<server>__<tool>`, …).
    #[serde(rename = "toolGate", default, skip_serializing_if = "Vec::is_empty")]
    pub tool_gate: Vec<CopseHookEntry>,
    /// A human prompt is about to be submitted (blocking decision; may halt). No
    /// matcher.
    #[serde(
        rename = "beforeSubmitPrompt",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub before_submit_prompt: Vec<CopseHookEntry>,
    /// The agent edited a file (awaited, or detached with `async: true`). Select files
    /// with `glob`.
    #[serde(
        rename = "afterFileEdit",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub after_file_edit: Vec<CopseHookEntry>,
    /// The agent loop ended (detached). A `queueMessage` is a follow-up held for a
    /// human. No matcher.
    #[serde(rename = "stop", default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<CopseHookEntry>,
    /// A tool call finished (detached). Matcher subject: the canonical tool name.
    #[serde(
        rename = "afterToolUse",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub after_tool_use: Vec<CopseHookEntry>,
    /// A subagent is about to start (blocking decision; `ask` means deny). Matcher
    /// subject: the subagent type.
    #[serde(
        rename = "subagentStart",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub subagent_start: Vec<CopseHookEntry>,
    /// A subagent finished (detached). Matcher subject: the subagent type.
    #[serde(
        rename = "subagentStop",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub subagent_stop: Vec<CopseHookEntry>,
    /// A conversation started (detached; may export `sessionEnv`). No matcher.
    #[serde(
        rename = "sessionStart",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub session_start: Vec<CopseHookEntry>,
    /// A conversation ended (detached). Matcher subject: the reason.
    #[serde(rename = "sessionEnd", default, skip_serializing_if = "Vec::is_empty")]
    pub session_end: Vec<CopseHookEntry>,
    /// The context is about to be compacted (detached). Matcher subject: the trigger
    /// (`auto` or `manual`).
    #[serde(rename = "preCompact", default, skip_serializing_if = "Vec::is_empty")]
    pub pre_compact: Vec<CopseHookEntry>,
    /// The assistant finished a message (detached). No matcher.
    #[serde(
        rename = "afterAgentResponse",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub after_agent_response: Vec<CopseHookEntry>,
    /// The assistant finished a thinking block (detached). No matcher.
    #[serde(
        rename = "afterAgentThought",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub after_agent_thought: Vec<CopseHookEntry>,
    /// The host raised a notification for the user (detached). No matcher.
    #[serde(
        rename = "notification",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub notification: Vec<CopseHookEntry>,
    /// Known canonical event with no fire site in copse-hooks yet: parsed and listed,
    /// never run.
    #[serde(rename = "turnStart", default, skip_serializing_if = "Vec::is_empty")]
    pub turn_start: Vec<CopseHookEntry>,
    /// Known canonical event with no fire site in copse-hooks yet: parsed and listed,
    /// never run.
    #[serde(
        rename = "beforeFinalize",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub before_finalize: Vec<CopseHookEntry>,
    /// Known canonical event with no fire site in copse-hooks yet: parsed and listed,
    /// never run.
    #[serde(rename = "compaction", default, skip_serializing_if = "Vec::is_empty")]
    pub compaction: Vec<CopseHookEntry>,
    /// Known canonical event with no fire site in copse-hooks yet: parsed and listed,
    /// never run.
    #[serde(
        rename = "beforeDiffApply",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub before_diff_apply: Vec<CopseHookEntry>,
    /// Known canonical event with no fire site in copse-hooks yet: parsed and listed,
    /// never run.
    #[serde(
        rename = "afterDiffApply",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub after_diff_apply: Vec<CopseHookEntry>,
    /// Known canonical event with no fire site in copse-hooks yet: parsed and listed,
    /// never run.
    #[serde(
        rename = "permissionDecision",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub permission_decision: Vec<CopseHookEntry>,
    /// Known canonical event with no fire site in copse-hooks yet: parsed and listed,
    /// never run.
    #[serde(
        rename = "postTurnReview",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub post_turn_review: Vec<CopseHookEntry>,
}

/// One hook: a shell command run with the event's JSON on stdin.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CopseHookEntry {
    /// The shell command (`sh -c`). User hooks start in the config file's directory,
    /// project hooks in the workspace root.
    #[schemars(length(min = 1))]
    pub command: String,
    /// An unanchored regex tested against the event's subject (tool name, subagent
    /// type, session-end reason, compaction trigger). Absent: always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub matcher: Option<String>,
    /// Path glob(s) for `afterFileEdit`, tried against the absolute path, the path
    /// relative to the workspace root and the file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "GlobPatterns")]
    pub glob: Option<GlobPatterns>,
    /// What a failure (crash, timeout, bad output) does on a gated event: `closed`
    /// denies, `open` is no opinion.
    #[serde(rename = "onFailure", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "OnFailure", extend("default" = "closed"))]
    pub on_failure: Option<OnFailure>,
    /// `false` runs the hook outside the sandbox (the only escape; shown in listings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool", extend("default" = true))]
    pub sandbox: Option<bool>,
    /// `false` denies TCP bind and connect to a sandboxed hook (where the kernel's
    /// Landlock has network rules). Default `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool", extend("default" = true))]
    pub network: Option<bool>,
    /// `true` on `afterFileEdit` runs the hook detached instead of awaiting it. Not
    /// allowed on blocking decision events (`toolGate`, `beforeSubmitPrompt`,
    /// `subagentStart`).
    #[serde(rename = "async", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool", extend("default" = false))]
    pub run_async: Option<bool>,
    /// How many of this hook's queued messages may continue the agent per turn tree,
    /// inside the global budget of 5. `null` (unlimited) is clamped to that budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub loop_limit: Option<u32>,
    /// Seconds the hook may run (default 30). For a persistent hook: seconds each
    /// request may take to be answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", extend("exclusiveMinimum" = 0, "default" = 30))]
    pub timeout: Option<f64>,
    /// `true` starts the hook once and sends it every event it matches, one JSON line
    /// per request, instead of starting it per event (see `docs/persistent-hooks.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool", extend("default" = false))]
    pub persistent: Option<bool>,
    /// Seconds a persistent hook may sit without a request before it is stopped (it
    /// restarts on demand); `0` keeps it for the engine's lifetime. Default 600.
    #[serde(
        rename = "idleTimeout",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "f64", range(min = 0), extend("default" = 600))]
    pub idle_timeout: Option<f64>,
}

/// One glob or a list of globs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum GlobPatterns {
    /// One pattern.
    One(#[schemars(length(min = 1))] String),
    /// Several patterns (any may match).
    Many(#[schemars(inner(length(min = 1)))] Vec<String>),
}

/// A failure policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnFailure {
    /// A failure is no opinion.
    Open,
    /// A failure denies the gated action (the default).
    Closed,
}

/// The JSON Schema of the Copse hooks file (draft-07, the draft editors support best),
/// generated from [`CopseHooksFile`].
pub fn copse_hooks_schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with_transform(schemars::transform::RecursiveTransform(
            |s: &mut schemars::Schema| {
                // Rust integer and float widths mean nothing to a config author.
                s.remove("format");
                // Doc comments wrap at 100 columns; editors wrap for themselves.
                if let Some(Value::String(d)) = s.get_mut("description") {
                    *d = unwrap_paragraphs(d);
                }
            },
        ))
        .into_generator();
    let schema = generator
        .into_root_schema_for::<CopseHooksFile>()
        .to_value();
    // The identifying keys first, as schema files conventionally start.
    let Value::Object(mut rest) = schema else {
        return schema;
    };
    let mut ordered = Map::new();
    for key in ["$schema", "title", "description"] {
        if let Some(v) = rest.remove(key) {
            ordered.insert(key.to_string(), v);
        }
    }
    ordered.extend(rest);
    Value::Object(ordered)
}

/// Joins the lines of each paragraph with spaces, keeping blank-line paragraph breaks.
pub(crate) fn unwrap_paragraphs(text: &str) -> String {
    text.split("\n\n")
        .map(|p| p.lines().map(str::trim).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// [`copse_hooks_schema`] as the committed file's text: pretty-printed, with a final
/// newline.
pub fn copse_hooks_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&copse_hooks_schema()).unwrap_or_default();
    text.push('\n');
    text
}
