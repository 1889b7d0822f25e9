//! The GitHub Copilot CLI dialect: version-1 hook files (`{"version": 1, "hooks":
//! {"preToolUse": [{"type": "command", "bash": …}]}}`) in `.github/hooks/*.json`
//! (project), `$COPILOT_HOME/hooks/*.json` (user, default `~/.copilot/hooks/`) and the
//! machine-wide policy directory `/etc/github-copilot/policy.d/*.json` (managed).
//!
//! Copilot's shape is its own: lowerCamelCase event names, one flat list of handlers
//! per event (no matcher groups), a `bash` command (with `command` as the
//! cross-platform fallback, `exec` + `args` to run a program without a shell, and a
//! `powershell` command this Linux build never runs), a per-hook `cwd` (relative to
//! the repository root) and `env`, `timeoutSec` (default 30) and an optional `matcher`
//! regex anchored as `^(?:PATTERN)$`. Payloads are camelCase (`sessionId`,
//! `timestamp` in milliseconds, `toolName`, `toolArgs`); answers are flat
//! (`permissionDecision`, `behavior`, `decision`, `additionalContext`).
//!
//! Failure handling is the vendor's and differs per event: a `preToolUse` or
//! `permissionRequest` command hook that crashes or exits non-zero denies the call
//! (fail-closed; observed in Copilot CLI 1.0.102), exit 2 denies on both, and every
//! other event's failures are logged and skipped (fail-open). Those policies are fixed here (the per-dialect
//! `failurePolicy` setting does not change them). Copilot lets a *timed-out*
//! `preToolUse` hook through; here a timeout is a failure under the same closed policy
//! (stricter, see `docs/dialects/copilot.md`).
//!
//! The files by concern: [`parse`], [`marshal`], [`interpret`].

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

/// Copilot's default command-hook timeout (`timeoutSec`, 30 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The hook events Copilot CLI accepts in a version-1 file: the 14 of the GitHub
/// hooks reference plus `preMcpToolCall`, which Copilot CLI 1.0.102's settings schema
/// lists and the reference does not, in the order of that schema. Provenance in
/// [`crate::dialect::vendor::COPILOT`].
pub const PUBLISHED_EVENTS: [&str; 15] = [
    "sessionStart",
    "sessionEnd",
    "userPromptSubmitted",
    "userPromptTransformed",
    "preToolUse",
    "preMcpToolCall",
    "postToolUse",
    "postToolUseFailure",
    "errorOccurred",
    "agentStop",
    "subagentStop",
    "subagentStart",
    "preCompact",
    "permissionRequest",
    "notification",
];

/// The canonical event a Copilot event is wired to.
pub fn canonical_for(event: &str) -> Option<CanonicalEvent> {
    Some(match event {
        "sessionStart" => CanonicalEvent::SessionStart,
        "sessionEnd" => CanonicalEvent::SessionEnd,
        "userPromptSubmitted" => CanonicalEvent::BeforeSubmitPrompt,
        "preToolUse" => CanonicalEvent::ToolGate,
        "postToolUse" | "postToolUseFailure" => CanonicalEvent::AfterToolUse,
        "agentStop" => CanonicalEvent::Stop,
        "subagentStop" => CanonicalEvent::SubagentStop,
        "subagentStart" => CanonicalEvent::SubagentStart,
        "preCompact" => CanonicalEvent::PreCompact,
        "permissionRequest" => CanonicalEvent::PermissionRequest,
        "notification" => CanonicalEvent::Notification,
        _ => return None,
    })
}

/// Why a published Copilot event is not wired.
pub fn unsupported_reason(event: &str) -> Option<&'static str> {
    match event {
        "errorOccurred" => Some("no canonical error event yet"),
        "userPromptTransformed" => Some("no canonical event for the model-facing prompt yet"),
        "preMcpToolCall" => Some("undocumented; it adjusts an MCP request's metadata"),
        _ => None,
    }
}

/// What a hook's `matcher` is tested against on `event` (`None`: Copilot does not
/// filter that event by a matcher).
pub fn matcher_subject(event: &str) -> Option<&'static str> {
    match event {
        "preToolUse" | "postToolUse" | "permissionRequest" => Some("toolName"),
        "notification" => Some("notification_type"),
        "preCompact" => Some("trigger"),
        "subagentStart" => Some("agentName"),
        _ => None,
    }
}

/// Whether a failed run of a hook on `event` blocks in Copilot: `preToolUse` and
/// `permissionRequest` (Copilot CLI 1.0.102 denies on a crash of either).
pub fn fails_closed(event: &str) -> bool {
    matches!(event, "preToolUse" | "permissionRequest")
}

/// Input keys renamed from Copilot's (first) to the canonical ones (second).
pub type Renames = &'static [(&'static str, &'static str)];

// --- Copilot tool-name table (used by the dialect and the agent boundary) ---
/// Copilot CLI's built-in tools (as its `preToolUse` payload names them) and the
/// canonical ids they are, with the input keys renamed. The first row of a canonical
/// id is the name a canonical call is sent as.
pub const TOOLS: &[(&str, &str, Renames)] = &[
    ("bash", tool::RUN_SHELL, &[]),
    // Text typed into a running shell session is a shell command: every `run_shell`
    // guard sees it (Copilot is never answered with rewritten arguments).
    ("write_bash", tool::RUN_SHELL, &[("input", "command")]),
    ("view", tool::READ_FILE, &[]),
    ("create", tool::WRITE_FILE, &[("file_text", "content")]),
    (
        "edit",
        tool::STR_REPLACE,
        &[("old_str", "old_string"), ("new_str", "new_string")],
    ),
    (
        "str_replace_editor",
        tool::STR_REPLACE,
        &[("old_str", "old_string"), ("new_str", "new_string")],
    ),
    ("grep", tool::SEARCH_CODE, &[]),
    ("rg", tool::SEARCH_CODE, &[]),
    ("glob", "find_files", &[]),
    ("task", tool::EXPLORE, &[]),
];
// --- end of the Copilot tool-name table ---

/// Copilot's tool name for a canonical tool id: the table's, `<server>-<tool>` for an
/// MCP tool (Copilot's naming), else the id itself.
pub fn tool_name(tool_id: &str) -> String {
    if let Some(rest) = tool_id.strip_prefix("mcp__")
        && let Some((server, name)) = rest.split_once("__")
    {
        return format!("{server}-{name}");
    }
    TOOLS
        .iter()
        .find(|(_, id, _)| *id == tool_id)
        .map_or_else(|| tool_id.to_string(), |(n, _, _)| (*n).to_string())
}

/// A Copilot tool call as a canonical one: the table's id with its keys renamed;
/// other tools keep their name and arguments.
pub fn canonical_tool(
    name: &str,
    args: &serde_json::Map<String, Value>,
) -> (String, serde_json::Map<String, Value>) {
    let Some((_, id, renames)) = TOOLS.iter().find(|(n, _, _)| *n == name) else {
        return (name.to_string(), args.clone());
    };
    let mut out = args.clone();
    for (from, to) in *renames {
        if let Some(v) = out.remove(*from) {
            out.insert((*to).to_string(), v);
        }
    }
    ((*id).to_string(), out)
}

/// A canonical input in Copilot's keys (the inverse of [`canonical_tool`]).
pub fn copilot_args(
    tool_id: &str,
    input: &serde_json::Map<String, Value>,
) -> serde_json::Map<String, Value> {
    let renames: Renames = TOOLS
        .iter()
        .find(|(_, id, _)| *id == tool_id)
        .map_or(&[], |(_, _, r)| *r);
    input
        .iter()
        .map(|(k, v)| {
            let key = renames
                .iter()
                .find(|(_, to)| to == k)
                .map_or_else(|| k.clone(), |(from, _)| (*from).to_string());
            (key, v.clone())
        })
        .collect()
}

/// A Copilot hook's own working directory and variables (`cwd`, `env`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookPlace {
    /// `cwd` as written (relative to the repository root, or absolute).
    pub cwd: Option<String>,
    /// `env`, in file order.
    pub env: Vec<(String, String)>,
}

/// The matcher subject of `wire_event` for `event`: `None` when the hook does not
/// apply, `Some(None)` when the event has no matcher subject.
pub fn subject(wire_event: &str, event: &EventPayload) -> Option<Option<String>> {
    let s = match (wire_event, event) {
        ("preToolUse", EventPayload::ToolGate(call))
        | ("permissionRequest", EventPayload::PermissionRequest(call)) => {
            Some(tool_name(&call.tool))
        }
        ("postToolUse", EventPayload::AfterToolUse(r)) if !r.is_error => Some(tool_name(&r.tool)),
        ("postToolUseFailure", EventPayload::AfterToolUse(r)) if r.is_error => None,
        (
            "notification",
            EventPayload::Notification {
                notification_type, ..
            },
        ) => Some(notification_type.clone()),
        ("preCompact", EventPayload::PreCompact(c)) => Some(c.trigger.clone()),
        ("subagentStart", EventPayload::SubagentStart { subagent_type }) => {
            Some(subagent_type.clone())
        }
        ("sessionStart", EventPayload::SessionStart { .. })
        | ("sessionEnd", EventPayload::SessionEnd { .. })
        | ("userPromptSubmitted", EventPayload::BeforeSubmitPrompt { .. })
        | ("subagentStop", EventPayload::SubagentStop { .. })
        | ("agentStop", EventPayload::Stop { .. }) => None,
        _ => return None,
    };
    Some(s)
}

/// The Copilot adapter.
#[derive(Debug, Default, Clone, Copy)]
pub struct Copilot;

impl Adapter for Copilot {
    fn dialect(&self) -> Dialect {
        Dialect::Copilot
    }

    fn parse(&self, text: &str, source: &Path, scope: Scope, root: Option<&Path>) -> ParsedConfig {
        parse::parse(text, source, scope, root)
    }

    fn applies(&self, hook: &HookSpec, event: &EventPayload, _ctx: &Context<'_>) -> bool {
        hook.fires_on_subject(event, || subject(&hook.event, event))
    }

    fn match_subject(&self, hook: &HookSpec, event: &EventPayload) -> Option<String> {
        subject(&hook.event, event)
            .flatten()
            .filter(|_| hook.matcher_source.is_some())
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

    /// Copilot runs a hook in the session's directory (the repository root), or in its
    /// `cwd`, relative to that root unless absolute.
    fn cwd(&self, hook: &HookSpec, ctx: &Context<'_>) -> PathBuf {
        let base = ctx
            .root_for(hook)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| hook.cwd());
        match hook.options.copilot.as_ref().and_then(|p| p.cwd.as_deref()) {
            Some(dir) => base.join(dir),
            None => base,
        }
    }

    fn user_state_dir(&self, home: &Path, _copse_dir: &Path) -> PathBuf {
        home.join(".copilot")
    }

    /// What Copilot CLI 1.0.102 sets for its hooks (`COPILOT_CLI`, the hook file's
    /// directory, the project directory under its own and Claude Code's names), then
    /// the hook's own `env`.
    fn vendor_env(&self, hook: &HookSpec, ctx: &Context<'_>) -> Vec<(String, String)> {
        let mut out = vec![("COPILOT_CLI".to_string(), "1".to_string())];
        if let Some(dir) = hook.source.parent() {
            out.push(("COPILOT_HOOK_DIR".into(), dir.display().to_string()));
        }
        if let Some(root) = ctx.root_for(hook) {
            let root = root.display().to_string();
            out.push(("COPILOT_PROJECT_DIR".into(), root.clone()));
            out.push(("CLAUDE_PROJECT_DIR".into(), root));
        }
        if let Some(place) = &hook.options.copilot {
            out.extend(place.env.iter().cloned());
        }
        out
    }
}
