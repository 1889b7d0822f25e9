//! What the CLI prints with `--json`: one struct per command, each with a `version`.
//!
//! The field names are the CLI's contract (snake_case, as printed since the first
//! release); `version` is [`crate::OUTPUT_VERSION`].

use copse_hooks::DryRun;
use copse_hooks::SandboxState;
use copse_hooks::dialect::ConfigWarning;
use copse_hooks::spine::{RunRecord, RunSummary};
use copse_hooks::{HookRun, HookSummary, Listing, Notice, Verdict};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::OUTPUT_VERSION;

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// One hook run inside a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunOutput {
    /// `cursor`, `claude` or `copse`.
    pub dialect: String,
    /// The wire event as written in the config.
    pub event: String,
    /// The canonical event.
    pub canonical_event: String,
    /// The hook's command.
    pub command: String,
    /// The config file that declares it.
    pub source: String,
    /// `user` or `project`.
    pub scope: String,
    /// `allow`, `ask`, `deny`, `none` or `failed`.
    pub outcome: String,
    /// The failure kind, when it failed.
    pub failure: Option<String>,
    /// The failure message, when it failed.
    pub failure_message: Option<String>,
    /// The exit code (`null` when killed or never started).
    pub exit_code: Option<i32>,
    /// Whether stdout parsed as an answer.
    pub parse_ok: bool,
    /// `off`, `enforced`, `unenforced` or `blocked`.
    pub sandbox: String,
    /// Whether the sandbox blocked it.
    pub sandbox_blocked: bool,
    /// Whether a process of the run had left its process group and was killed.
    #[serde(default)]
    pub leaked: bool,
    /// What the engine refused or changed about this run (e.g. dropped env vars).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// How long it ran.
    pub duration_ms: u64,
    /// The message for the agent.
    pub agent_message: Option<String>,
    /// The message for the user.
    pub user_message: Option<String>,
    /// Set on the built-in guard's run (no process ran): what it decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<GuardRunOutput>,
    /// Set when no process ran because this stands for a hook config that cannot run
    /// (changed since trusted, refused for its owner or mode): it blocks the gate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub blocked: bool,
}

/// What the built-in guard decided about one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GuardRunOutput {
    /// `enforce`, `observe` or `off`.
    pub mode: String,
    /// What it decides in enforce mode (`deny`, `ask`; `null`: nothing matched). In
    /// observe mode this is the would-be verdict.
    pub would: Option<String>,
    /// The strictest rule that matched (`destructive.home`).
    pub rule: Option<String>,
    /// Its category.
    pub category: Option<String>,
    /// The normalised command or path it matched.
    pub matched: Option<String>,
    /// Whether this judged the input after the hooks' rewrites.
    pub rewritten: bool,
    /// Set when the guard's policy is refused (every call is then denied).
    pub broken: Option<String>,
    /// Whether the hooks had already answered as strictly (the verdict is theirs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub subsumed: bool,
}

impl From<&HookRun> for RunOutput {
    fn from(run: &HookRun) -> Self {
        RunOutput {
            dialect: run.dialect.as_str().to_string(),
            event: run.event.clone(),
            canonical_event: run.canonical.name().to_string(),
            command: run.command.clone(),
            source: run.source.display().to_string(),
            scope: run.scope.as_str().to_string(),
            outcome: run.result.as_str().to_string(),
            failure: run.failure.as_ref().map(|f| f.kind.as_str().to_string()),
            failure_message: run.failure.as_ref().map(|f| f.message.clone()),
            exit_code: run.exit_code,
            parse_ok: run.parse_ok,
            sandbox: run.sandbox.as_str().to_string(),
            sandbox_blocked: run.sandbox == SandboxState::Blocked,
            leaked: run.leaked,
            warnings: run.warnings.clone(),
            duration_ms: millis(run.duration),
            agent_message: run.outcome.agent_message.clone(),
            user_message: run.outcome.user_message.clone(),
            guard: run.guard.as_ref().map(|g| GuardRunOutput {
                mode: g.mode.clone(),
                would: g.would.map(|d| d.as_str().to_string()),
                rule: g.rule.clone(),
                category: g.category.clone(),
                matched: g.matched.clone(),
                rewritten: g.rewritten,
                broken: g.broken.clone(),
                subsumed: g.subsumed,
            }),
            blocked: run.blocked,
        }
    }
}

/// A halt: the agent loop stops.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HaltOutput {
    /// Why.
    pub reason: String,
}

/// A verdict's fields (shared by `gate --json`, replay lines and the RPC events).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VerdictFields {
    /// `allow`, `ask` or `deny` (`allow` means no hook objects).
    pub decision: String,
    /// The message for the agent.
    pub agent_message: Option<String>,
    /// The message for the user.
    pub user_message: Option<String>,
    /// The tool input as rewritten by a hook.
    pub updated_input: Option<Map<String, Value>>,
    /// Whether `updated_input` replaces the input whole (Claude `updatedInput`) rather
    /// than being merged into it.
    #[serde(default)]
    pub input_replaced: bool,
    /// Context a hook injects into the conversation.
    pub inject_context: Option<String>,
    /// What sessionStart hooks wrote to `$CLAUDE_ENV_FILE`: a script the host sources
    /// before its later tool commands.
    #[serde(default)]
    pub tool_env_script: Option<String>,
    /// Permission-rule updates Claude PermissionRequest hooks sent with an allow
    /// (`updatedPermissions`, as written), for the host's permission system to apply
    /// or not; absent when there are none or the verdict denies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_permissions: Option<Vec<Value>>,
    /// A halt of the agent loop.
    pub halt: Option<HaltOutput>,
    /// Every hook that ran, in configured order.
    pub runs: Vec<RunOutput>,
    /// The built-in guard's runs that matched (a rule, or a refused policy): on the
    /// call's input, and again on the input the hooks rewrote. Absent when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guard: Vec<RunOutput>,
}

impl From<&Verdict> for VerdictFields {
    fn from(v: &Verdict) -> Self {
        VerdictFields {
            decision: v.effective_decision().as_str().to_string(),
            agent_message: v.agent_message.clone(),
            user_message: v.user_message.clone(),
            updated_input: v.updated_input.clone(),
            input_replaced: v.input_replaced,
            inject_context: v.inject_context.clone(),
            tool_env_script: v.tool_env_script.clone(),
            updated_permissions: v.updated_permissions.clone(),
            halt: v.halt.as_ref().map(|h| HaltOutput {
                reason: h.reason.clone(),
            }),
            runs: v.runs.iter().map(RunOutput::from).collect(),
            guard: v.guard.iter().map(RunOutput::from).collect(),
        }
    }
}

/// A notice: why hooks did or did not run, beside a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NoticeOutput {
    /// The stable snake_case kind (`hooks_off`, `hook_failed`, `records_lost`, ...).
    pub kind: String,
    /// One line for people (may quote config or hook text: escape before printing).
    pub message: String,
    /// What to do, when there is something to do.
    pub hint: Option<String>,
    /// The config file concerned, when there is one.
    pub source: Option<String>,
}

impl NoticeOutput {
    /// A notice made outside the engine (by the CLI or the server).
    pub fn new(kind: &str, message: impl Into<String>, hint: Option<String>) -> NoticeOutput {
        NoticeOutput {
            kind: kind.to_string(),
            message: message.into(),
            hint,
            source: None,
        }
    }
}

impl From<&Notice> for NoticeOutput {
    fn from(n: &Notice) -> Self {
        NoticeOutput {
            kind: n.kind.as_str().to_string(),
            message: n.message.clone(),
            hint: n.hint.clone(),
            source: n.source.as_ref().map(|p| p.display().to_string()),
        }
    }
}

/// `gate --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateOutput {
    /// The shape's version.
    pub version: u32,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: VerdictFields,
    /// Why hooks did or did not run, and what failed.
    #[serde(default)]
    pub notices: Vec<NoticeOutput>,
    /// The config problems the gate met (`file: message`), one per line.
    #[serde(default)]
    pub warnings: Vec<String>,
}

impl From<&Verdict> for GateOutput {
    fn from(v: &Verdict) -> Self {
        GateOutput {
            version: OUTPUT_VERSION,
            verdict: VerdictFields::from(v),
            notices: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// One discovered hook (`list --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HookOutput {
    /// The dialect.
    pub dialect: String,
    /// The event as written.
    pub event: String,
    /// The canonical event it is wired to, when supported.
    pub canonical_event: Option<String>,
    /// The matcher as written.
    pub matcher: Option<String>,
    /// Why the matcher does not compile.
    pub matcher_error: Option<String>,
    /// The command.
    pub command: String,
    /// The config file.
    pub source: String,
    /// `managed`, `user` or `project`.
    pub scope: String,
    /// 1-based position in its event's array.
    pub entry: usize,
    /// Whether copse-hooks wires this event.
    pub supported: bool,
    /// Whether its source is trusted.
    pub trusted: bool,
    /// `trusted`, `changed` or `untrusted`.
    pub trust: String,
    /// Whether external hooks are enabled.
    pub enabled: bool,
    /// Whether it would run now.
    pub active: bool,
    /// Whether it runs in the sandbox.
    pub sandboxed: bool,
    /// Whether a failure denies.
    pub fail_closed: bool,
    /// The timeout.
    pub timeout_ms: u64,
    /// The most recent failure recorded for this hook, across sessions.
    pub last_error: Option<String>,
    /// The workspace scripts its command runs, each pinned at trust time.
    #[serde(default)]
    pub scripts: Vec<ScriptOutput>,
    /// A Copse `"persistent": true` hook: one long-lived process answers its events
    /// (absent when not).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub persistent: bool,
    /// A persistent hook's idle timeout in milliseconds (absent: never stopped idle,
    /// or not persistent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_ms: Option<u64>,
    /// Why a persistent hook is broken (repeated crashes); absent when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broken: Option<String>,
    /// Why a managed-hooks-only rule keeps it from running, naming the file that set
    /// it (absent when none does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_only: Option<String>,
}

/// A workspace script a hook runs, and whether it is as trusted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScriptOutput {
    /// The file.
    pub path: String,
    /// SHA-256 (hex) of its content; `null` when missing or unreadable.
    pub sha256: Option<String>,
    /// `pinned`, `changed` or `unpinned`.
    pub state: String,
}

impl From<&HookSummary> for HookOutput {
    fn from(h: &HookSummary) -> Self {
        HookOutput {
            dialect: h.dialect.as_str().to_string(),
            event: h.event.clone(),
            canonical_event: h.canonical.map(|c| c.name().to_string()),
            matcher: h.matcher.clone(),
            matcher_error: h.matcher_error.clone(),
            command: h.command.clone(),
            source: h.source.display().to_string(),
            scope: h.scope.as_str().to_string(),
            entry: h.entry,
            supported: h.supported,
            trusted: h.trusted,
            trust: h.trust.as_str().to_string(),
            enabled: h.enabled,
            active: h.active,
            sandboxed: h.sandboxed,
            fail_closed: h.fail_closed,
            timeout_ms: h.timeout_ms,
            last_error: h.last_error.clone(),
            scripts: h
                .scripts
                .iter()
                .map(|s| ScriptOutput {
                    path: s.path.display().to_string(),
                    sha256: s.sha256.clone(),
                    state: serde_json::to_value(s.state)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                })
                .collect(),
            persistent: h.persistent,
            idle_timeout_ms: h.idle_timeout_ms,
            broken: h.broken.clone(),
            managed_only: h.managed_only.clone(),
        }
    }
}

/// One config warning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WarningOutput {
    /// The config file.
    pub source: String,
    /// `user` or `project`.
    pub scope: String,
    /// The event the problem is under.
    pub event: Option<String>,
    /// `error` or `warning`.
    pub level: String,
    /// What is wrong and what was done about it.
    pub message: String,
}

impl From<&ConfigWarning> for WarningOutput {
    fn from(w: &ConfigWarning) -> Self {
        WarningOutput {
            source: w.source.display().to_string(),
            scope: w.scope.as_str().to_string(),
            event: w.event.clone(),
            level: copse_hooks::level_of(&w.message).as_str().to_string(),
            message: w.message.clone(),
        }
    }
}

/// `list --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListOutput {
    /// The shape's version.
    pub version: u32,
    /// The hooks, in configured order.
    pub hooks: Vec<HookOutput>,
    /// The config warnings.
    pub warnings: Vec<WarningOutput>,
    /// Dialects whose failures fail open by the `failurePolicy` setting
    /// (dialect name → `open` or `closed`); the rest fail closed.
    #[serde(default)]
    pub failure_policy: std::collections::BTreeMap<String, String>,
    /// Whether Stop follow-ups continue automatically within the budget
    /// (`autoContinueFollowUps`) instead of being held for a human.
    #[serde(default)]
    pub auto_continue_follow_ups: bool,
    /// Per agent: where `copse-hooks install` put the shim and what it adopted
    /// (absent when no shim is installed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentShimOutput>,
}

impl From<&Listing> for ListOutput {
    fn from(l: &Listing) -> Self {
        ListOutput {
            version: OUTPUT_VERSION,
            hooks: l.hooks.iter().map(HookOutput::from).collect(),
            warnings: l.warnings.iter().map(WarningOutput::from).collect(),
            failure_policy: l
                .failure_policy
                .iter()
                .map(|(d, p)| {
                    let p = match p {
                        copse_hooks::FailurePolicy::Open => "open",
                        copse_hooks::FailurePolicy::Closed => "closed",
                    };
                    (d.clone(), p.to_string())
                })
                .collect(),
            auto_continue_follow_ups: l.auto_continue_follow_ups,
            agents: Vec::new(),
        }
    }
}

/// One recorded run in `log --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LogRun {
    /// The run id.
    pub run_id: String,
    /// `run`, `dropped` or `suppressed`.
    pub kind: String,
    /// The conversation.
    pub session_id: String,
    /// The turn.
    pub turn_id: String,
    /// The dialect.
    pub dialect: String,
    /// The wire event.
    pub event: String,
    /// The canonical event.
    pub canonical: String,
    /// The command.
    pub command: String,
    /// The config file.
    pub source: String,
    /// `user` or `project`.
    pub scope: String,
    /// Start, unix ms.
    pub started_at: u64,
    /// Duration.
    pub duration_ms: u64,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Whether stdout parsed.
    pub parse_ok: bool,
    /// The failure kind.
    pub failure: Option<String>,
    /// The failure message.
    pub failure_message: Option<String>,
    /// The sandbox state.
    pub sandbox: Option<String>,
    /// `allow`, `ask`, `deny`, `none` or `failed`.
    pub outcome: String,
    /// The decision given.
    pub decision: Option<String>,
    /// Whether the hook asked to halt.
    pub halt: bool,
    /// Whether it rewrote the tool input.
    pub updated_input: bool,
    /// Whether it injected context.
    pub inject_context: bool,
    /// Whether it queued a message.
    pub queued_message: bool,
    /// Whether it exported session environment.
    pub session_env: bool,
    /// Bytes of the agent message.
    pub agent_message_len: u64,
    /// Bytes of the user message.
    pub user_message_len: u64,
    /// Bytes of stdin.
    pub stdin_len: u64,
    /// Bytes of stdout.
    pub stdout_len: u64,
    /// Bytes of stderr.
    pub stderr_len: u64,
    /// Whether anything was cut at the capture cap.
    pub truncated: bool,
    /// Whether a process of the run had left its process group and was killed.
    #[serde(default)]
    pub leaked: bool,
    /// The short id `log` prints (accepted by `show`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_id: Option<String>,
    /// The tool of the call the run was about (`run_shell`, `Bash`), if any.
    #[serde(default)]
    pub tool: Option<String>,
    /// A one-line summary of that call's input (`npm install`), if any.
    #[serde(default)]
    pub tool_input: Option<String>,
}

impl From<&RunSummary> for LogRun {
    fn from(r: &RunSummary) -> Self {
        LogRun {
            run_id: r.run_id.clone(),
            kind: r.kind.as_str().to_string(),
            session_id: r.session_id.clone(),
            turn_id: r.turn_id.clone(),
            dialect: r.dialect.clone(),
            event: r.event.clone(),
            canonical: r.canonical.clone(),
            command: r.command.clone(),
            source: r.source.clone(),
            scope: r.scope.clone(),
            started_at: r.started_at,
            duration_ms: r.duration_ms,
            exit_code: r.exit_code,
            parse_ok: r.parse_ok,
            failure: r.failure.clone(),
            failure_message: r.failure_message.clone(),
            sandbox: r.sandbox.clone(),
            outcome: r.outcome.clone(),
            decision: r.decision.clone(),
            halt: r.halt,
            updated_input: r.updated_input,
            inject_context: r.inject_context,
            queued_message: r.queued_message,
            session_env: r.session_env,
            agent_message_len: r.agent_message_len,
            user_message_len: r.user_message_len,
            stdin_len: r.stdin_len,
            stdout_len: r.stdout_len,
            stderr_len: r.stderr_len,
            truncated: r.truncated,
            leaked: r.leaked,
            short_id: None,
            tool: r.tool_call.as_ref().map(|c| c.tool.clone()),
            tool_input: r.tool_call.as_ref().map(|c| c.input.clone()),
        }
    }
}

/// `log --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LogOutput {
    /// The shape's version.
    pub version: u32,
    /// The runs, newest first.
    pub runs: Vec<LogRun>,
}

impl LogOutput {
    /// The output for these runs.
    pub fn new(runs: &[RunSummary]) -> Self {
        LogOutput {
            version: OUTPUT_VERSION,
            runs: runs.iter().map(LogRun::from).collect(),
        }
    }
}

/// `show --json`: one recorded run in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShowOutput {
    /// The shape's version.
    pub version: u32,
    /// The run id.
    pub run_id: String,
    /// `run`, `dropped` or `suppressed`.
    pub kind: String,
    /// The conversation.
    pub session_id: String,
    /// The turn.
    pub turn_id: String,
    /// The dialect.
    pub dialect: String,
    /// The wire event.
    pub event: String,
    /// The canonical event.
    pub canonical_event: String,
    /// The command.
    pub command: String,
    /// The config file.
    pub source: String,
    /// `user` or `project`.
    pub scope: String,
    /// Start, unix ms.
    pub started_at: u64,
    /// Duration.
    pub duration_ms: u64,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Whether stdout parsed.
    pub parse_ok: bool,
    /// The failure kind.
    pub failure: Option<String>,
    /// The failure message.
    pub failure_message: Option<String>,
    /// `open` or `closed`.
    pub policy: Option<String>,
    /// The sandbox state.
    pub sandbox: Option<String>,
    /// `allow`, `ask`, `deny`, `none` or `failed`.
    pub outcome: String,
    /// The decision given.
    pub decision: Option<String>,
    /// The message for the agent.
    pub agent_message: Option<String>,
    /// The message for the user.
    pub user_message: Option<String>,
    /// Why it halted.
    pub halt_reason: Option<String>,
    /// Context injected.
    pub inject_context: Option<String>,
    /// The rewritten tool input.
    pub updated_input: Option<Value>,
    /// The message queued.
    pub queued_message: Option<String>,
    /// The exact stdin.
    pub stdin: String,
    /// What it printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
    /// Whether stdin was cut.
    pub stdin_truncated: bool,
    /// Whether stdout was cut.
    pub stdout_truncated: bool,
    /// Whether stderr was cut.
    pub stderr_truncated: bool,
    /// Whether a process of the run had left its process group and was killed.
    #[serde(default)]
    pub leaked: bool,
    /// What the engine refused or changed about this run.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// How many secrets were redacted from the recorded streams.
    #[serde(default)]
    pub redactions: u64,
    /// The short id `log` prints (accepted by `show`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_id: Option<String>,
    /// The tool of the call the run was about (`run_shell`, `Bash`), if any.
    #[serde(default)]
    pub tool: Option<String>,
    /// A one-line summary of that call's input (`npm install`), if any.
    #[serde(default)]
    pub tool_input: Option<String>,
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl From<&RunRecord> for ShowOutput {
    fn from(r: &RunRecord) -> Self {
        let call = copse_hooks::spine::tool_call_summary(&r.event, &r.stdin);
        ShowOutput {
            version: OUTPUT_VERSION,
            run_id: r.run_id.clone(),
            kind: r.kind.as_str().to_string(),
            session_id: r.session_id.clone(),
            turn_id: r.turn_id.clone(),
            dialect: r.dialect.clone(),
            event: r.event.clone(),
            canonical_event: r.canonical.clone(),
            command: r.command.clone(),
            source: r.source.clone(),
            scope: r.scope.clone(),
            started_at: r.started_at,
            duration_ms: r.duration_ms,
            exit_code: r.exit_code,
            parse_ok: r.parse_ok,
            failure: r.failure.clone(),
            failure_message: r.failure_message.clone(),
            policy: r.policy.clone(),
            sandbox: r.sandbox.clone(),
            outcome: r.outcome.clone(),
            decision: r.decision.clone(),
            agent_message: r.agent_message.clone(),
            user_message: r.user_message.clone(),
            halt_reason: r.halt_reason.clone(),
            inject_context: r.inject_context.clone(),
            updated_input: r
                .updated_input
                .as_deref()
                .and_then(|u| serde_json::from_str::<Value>(u).ok()),
            queued_message: r.queued_message.clone(),
            stdin: text(&r.stdin),
            stdout: text(&r.stdout),
            stderr: text(&r.stderr),
            stdin_truncated: r.stdin_truncated,
            stdout_truncated: r.stdout_truncated,
            stderr_truncated: r.stderr_truncated,
            leaked: r.leaked,
            warnings: r.warnings.clone(),
            redactions: r.redactions,
            short_id: None,
            tool: call.as_ref().map(|c| c.tool.clone()),
            tool_input: call.map(|c| c.input),
        }
    }
}

/// `test --json`: what the dry-run tester did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TestOutput {
    /// The shape's version.
    pub version: u32,
    /// The dialect.
    pub dialect: String,
    /// The wire event.
    pub event: String,
    /// The canonical event.
    pub canonical_event: String,
    /// The command.
    pub command: String,
    /// The exact stdin sent.
    pub stdin: String,
    /// What the hook printed on stdout.
    pub stdout: String,
    /// What the hook printed on stderr.
    pub stderr: String,
    /// The exit code.
    pub exit_code: Option<i32>,
    /// How long it ran.
    pub duration_ms: u64,
    /// Whether stdout parsed as a response.
    pub parse_ok: bool,
    /// The failure kind.
    pub failure: Option<String>,
    /// `allow`, `ask — <msg>`, `deny — <msg>`, `no opinion` or `failed — <error>`.
    pub summary: String,
    /// Whether the hook ran in the sandbox.
    #[serde(default)]
    pub sandboxed: bool,
    /// The hook's timeout.
    #[serde(default)]
    pub timeout_ms: u64,
    /// A persistent hook: it was started, sent this one request over the persistent
    /// protocol, then stopped (absent when not persistent).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub persistent: bool,
}

impl From<&DryRun> for TestOutput {
    fn from(d: &DryRun) -> Self {
        TestOutput {
            sandboxed: d.sandboxed,
            timeout_ms: d.timeout_ms,
            persistent: d.persistent,
            version: OUTPUT_VERSION,
            dialect: d.dialect.as_str().to_string(),
            event: d.event.clone(),
            canonical_event: d.canonical_event.name().to_string(),
            command: d.command.clone(),
            stdin: d.stdin.clone(),
            stdout: d.stdout.clone(),
            stderr: d.stderr.clone(),
            exit_code: d.exit_code,
            duration_ms: d.duration_ms,
            parse_ok: d.parse_ok,
            failure: d.failure.clone(),
            summary: d.summary.clone(),
        }
    }
}

/// One line of `replay --json` for an event (the final line is a [`ReplaySummary`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplayLine {
    /// The shape's version.
    pub version: u32,
    /// The input line number.
    pub line: usize,
    /// The event name (or `session`).
    pub event: String,
    /// Whether the event was dispatched detached.
    pub detached: bool,
    /// Detached hooks dispatched (detached events only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatched: Option<usize>,
    /// Detached hooks dropped (detached events only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<usize>,
    /// The verdict (blocking events only).
    #[serde(flatten)]
    pub verdict: Option<VerdictFields>,
    /// `replay --explain`: every configured hook for the event, with its verdict or
    /// why it did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<ExplainOutput>,
}

/// The last line of `replay --json`: the queue, every run, every dropped run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplaySummary {
    /// The shape's version.
    pub version: u32,
    /// A halt requested by a detached hook (Claude `continue: false`), if any.
    #[serde(default)]
    pub halt: Option<HaltOutput>,
    /// The messages still queued, in arrival order.
    pub queue: Vec<ReplayQueued>,
    /// Every hook run of the session (blocking and detached).
    pub runs: Vec<RunOutput>,
    /// Detached runs dropped because the dispatcher was full.
    pub dropped: Vec<DroppedOutput>,
    /// Why hooks did or did not run, and what failed.
    #[serde(default)]
    pub notices: Vec<NoticeOutput>,
    /// The config problems the session met (`file: message`), one per line.
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// A queued message in the replay summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplayQueued {
    /// The text.
    pub text: String,
    /// Whether it may be sent without waiting for the human.
    pub send_now: bool,
    /// Whether it waits for a human turn.
    pub held: bool,
    /// The turn tree it was produced in.
    pub epoch: u64,
    /// The hook that queued it.
    pub origin: ReplayOrigin,
}

/// The hook that queued a message (replay summary).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplayOrigin {
    /// The dialect.
    pub dialect: String,
    /// The wire event.
    pub event: String,
    /// The command.
    pub command: String,
}

impl From<&copse_hooks::QueuedMessage> for ReplayQueued {
    fn from(m: &copse_hooks::QueuedMessage) -> Self {
        ReplayQueued {
            text: m.text.clone(),
            send_now: m.send_now,
            held: m.held,
            epoch: m.epoch,
            origin: ReplayOrigin {
                dialect: m.origin.dialect.as_str().to_string(),
                event: m.origin.event.clone(),
                command: m.origin.command.clone(),
            },
        }
    }
}

/// A dropped detached run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DroppedOutput {
    /// The dialect.
    pub dialect: String,
    /// The wire event.
    pub event: String,
    /// The command.
    pub command: String,
    /// The config file.
    pub source: String,
    /// `user` or `project`.
    pub scope: String,
}

impl From<&copse_hooks::DroppedRun> for DroppedOutput {
    fn from(d: &copse_hooks::DroppedRun) -> Self {
        DroppedOutput {
            dialect: d.dialect.as_str().to_string(),
            event: d.event.clone(),
            command: d.command.clone(),
            source: d.source.display().to_string(),
            scope: d.scope.as_str().to_string(),
        }
    }
}

/// One queued message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct QueuedOutput {
    /// The text.
    pub text: String,
    /// Whether it may be sent without waiting for the human.
    pub send_now: bool,
    /// Whether it waits for a human turn.
    pub held: bool,
    /// The turn tree it was produced in.
    pub epoch: u64,
    /// The hook that queued it.
    pub origin: QueueOrigin,
}

/// The hook that queued a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct QueueOrigin {
    /// The dialect.
    pub dialect: String,
    /// The wire event.
    pub event: String,
    /// The command.
    pub command: String,
    /// The config file.
    pub source: String,
    /// 1-based entry.
    pub entry: usize,
}

impl From<&copse_hooks::QueuedMessage> for QueuedOutput {
    fn from(m: &copse_hooks::QueuedMessage) -> Self {
        QueuedOutput {
            text: m.text.clone(),
            send_now: m.send_now,
            held: m.held,
            epoch: m.epoch,
            origin: QueueOrigin {
                dialect: m.origin.dialect.as_str().to_string(),
                event: m.origin.event.clone(),
                command: m.origin.command.clone(),
                source: m.origin.source.display().to_string(),
                entry: m.origin.entry,
            },
        }
    }
}

/// `doctor --json`: everything that decides whether a hook runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DoctorOutput {
    /// The shape's version.
    pub version: u32,
    /// Whether external hooks are on, and why.
    pub enablement: Enablement,
    /// Whether this process is itself inside a hook (hooks never run there).
    pub recursion_guard: bool,
    /// Each workspace root and its trust.
    pub roots: Vec<RootTrust>,
    /// Every config path searched, and what was found.
    pub configs: Vec<ConfigProbe>,
    /// The settings file and every setting with its source.
    pub settings: SettingsReport,
    /// The OS sandbox.
    pub sandbox: SandboxReport,
    /// The audit store.
    pub audit: AuditReport,
    /// The most recent failure of each hook, across sessions.
    pub recent_failures: Vec<RecentFailure>,
    /// Per agent: where the shim is installed, what was adopted, and which path
    /// (daemon or in-process) served its last calls (`copse-hooks doctor` fills it;
    /// empty over JSON-RPC).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentShimOutput>,
    /// Every persistent hook (Copse `"persistent": true`) and its process's state
    /// (absent when there is none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub persistent: Vec<PersistentReport>,
    /// The user's daemon, when one runs: its pid, version, executable and start
    /// (`copse-hooks doctor` fills it; absent over JSON-RPC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon: Option<DaemonStatusOutput>,
    /// The OTLP export of this process's engine, when the `OTEL_*` variables ask for
    /// one or say something wrong (absent otherwise). Over JSON-RPC (the daemon's
    /// `doctor`), the counters are the daemon's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otel: Option<OtelReport>,
    /// The machine's managed policy (`/etc/copse-hooks/`) and the vendors' managed
    /// tiers copse-hooks honours (absent when the machine has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed: Option<ManagedReport>,
}

/// The managed policy layer, as `doctor` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ManagedReport {
    /// Where the layer was read from (`/etc/copse-hooks`).
    pub dir: String,
    /// Whether `COPSE_MANAGED_DIR` redirected it (a root-owned test directory).
    pub redirected: bool,
    /// `absent`, `valid`, or `broken` (refused or invalid: every failure fails closed
    /// and the sandbox is required until it is fixed).
    pub state: String,
    /// `allowManagedHooksOnly`: only managed hooks run.
    pub allow_managed_hooks_only: bool,
    /// `failurePolicy` floors: a dialect, canonical event or `*` → `closed`.
    pub failure_floors: std::collections::BTreeMap<String, String>,
    /// The pinned OTLP endpoint's URL (never its headers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_endpoint: Option<String>,
    /// `requireSandbox`.
    pub require_sandbox: bool,
    /// How many managed hooks are declared (every managed file, vendors' included).
    pub hooks: usize,
    /// What is wrong with the layer, one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The vendors' managed tiers found (Claude Code, Codex).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vendors: Vec<ManagedVendorReport>,
}

/// A vendor's managed tier, as `doctor` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ManagedVendorReport {
    /// `claude` or `codex`.
    pub vendor: String,
    /// The files found.
    pub files: Vec<String>,
    /// The vendor's managed-hooks-only switch (`allowManagedHooksOnly`,
    /// `allow_managed_hooks_only`).
    pub allow_managed_hooks_only: bool,
    /// What it does to the hooks copse-hooks runs, one sentence.
    pub effect: String,
    /// What was wrong with its files, one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The OTLP export, as `doctor` reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OtelReport {
    /// Where spans go (the traces URL), when export is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traces_url: Option<String>,
    /// What was wrong with the `OTEL_*` variables, one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Spans the collector accepted.
    pub exported: u64,
    /// Spans dropped (the queue was full, or the exporter had shut down).
    pub dropped: u64,
    /// Spans of requests that failed or that the collector rejected.
    pub failed: u64,
    /// Spans queued or in flight.
    pub pending: u64,
    /// The last failure, one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The running daemon's export (every agent call it serves), as its `doctor`
    /// method reports it; only in the CLI's `doctor`, when a daemon answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon: Option<Box<OtelReport>>,
}

/// One persistent hook, as `doctor` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PersistentReport {
    /// The config file.
    pub source: String,
    /// The event.
    pub event: String,
    /// 1-based position in its event's array.
    pub entry: usize,
    /// The command.
    pub command: String,
    /// `running`, `stopped` (never started here, idle, or its script changed),
    /// `restarting` (after a crash) or `broken` (repeated crashes: its events resolve
    /// by the failure policy without starting it).
    pub state: String,
    /// The process id while running.
    pub pid: Option<u64>,
    /// The idle timeout in milliseconds (`null`: never stopped idle).
    pub idle_timeout_ms: Option<u64>,
    /// Why it is broken, or how its process last ended.
    pub reason: Option<String>,
}

/// Whether hooks are on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Enablement {
    /// Whether external hooks run.
    pub enabled: bool,
    /// `settings`, `flag` (this invocation's `--enable`), `client` (a JSON-RPC
    /// client's `initialize`) or `default`.
    pub source: String,
}

/// One workspace root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RootTrust {
    /// The canonical root.
    pub path: String,
    /// `trusted`, `pinned`, `changed` or `untrusted`.
    pub trust: String,
}

/// One config location.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConfigProbe {
    /// The path searched.
    pub path: String,
    /// The dialect read there.
    pub dialect: String,
    /// `user` or `project`.
    pub scope: String,
    /// `found`, `missing`, `not read (untrusted)` …
    pub status: String,
    /// Whether the file exists.
    pub exists: bool,
    /// Hooks declared there (when read).
    pub hooks: usize,
    /// Warnings about it (when read).
    pub warnings: Vec<String>,
}

/// The settings file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SettingsReport {
    /// Where it is.
    pub path: String,
    /// Whether it exists.
    pub exists: bool,
    /// Each setting with its value and source.
    pub values: Vec<SettingValue>,
    /// Problems with it.
    pub warnings: Vec<String>,
}

/// One setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SettingValue {
    /// The key as written in the settings file.
    pub key: String,
    /// The effective value.
    pub value: Value,
    /// `settings`, `flag`, `client` or `default`.
    pub source: String,
}

/// The sandbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxReport {
    /// Whether hooks are sandboxed at all.
    pub on: bool,
    /// The mechanism.
    pub mechanism: Option<String>,
    /// Whether the kernel enforces it.
    pub enforced: bool,
    /// The enforcement, in words.
    pub enforcement: Option<String>,
    /// Whether an unenforced sandbox fails runs.
    pub required: bool,
    /// Extra writable paths.
    pub writable_paths: Vec<String>,
    /// Each protection layer (filesystem, network, signals, containment...) and
    /// whether this machine enforces it.
    #[serde(default)]
    pub layers: Vec<LayerReport>,
}

/// One sandbox layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LayerReport {
    /// What it protects.
    pub name: String,
    /// Whether this machine enforces it.
    pub enforced: bool,
    /// By what, or why not.
    pub detail: String,
}

/// The audit store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AuditReport {
    /// Where it is.
    pub path: String,
    /// Whether runs are recorded.
    pub recording: bool,
    /// Whether it exists.
    pub exists: bool,
    /// Why it cannot be read or written.
    pub warning: Option<String>,
}

/// The most recent failure of one hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecentFailure {
    /// The config file.
    pub source: String,
    /// The wire event.
    pub event: String,
    /// The command.
    pub command: String,
    /// The failure message.
    pub message: String,
    /// The run id (for `show`).
    pub run_id: String,
    /// When, unix ms.
    pub at: u64,
}

/// `lint --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LintOutput {
    /// The shape's version.
    pub version: u32,
    /// Every file read, with its detected dialect.
    pub files: Vec<LintFile>,
    /// Every problem, file by file, in position order.
    pub problems: Vec<LintProblem>,
    /// How many problems are errors.
    pub errors: usize,
    /// How many problems are warnings.
    pub warnings: usize,
}

/// One file `lint` read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LintFile {
    /// The file.
    pub file: String,
    /// Its dialect (`cursor`, `claude`, `copse`, `gemini`, `codex`); a copse-hooks
    /// settings file counts as `copse`.
    pub dialect: String,
}

/// One problem `lint` found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LintProblem {
    /// The file.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// `error` or `warning`.
    pub level: String,
    /// What is wrong (and, for common mistakes, what to do).
    pub message: String,
}

impl From<&copse_hooks::LintReport> for LintOutput {
    fn from(r: &copse_hooks::LintReport) -> Self {
        LintOutput {
            version: OUTPUT_VERSION,
            files: r
                .files
                .iter()
                .map(|(f, d)| LintFile {
                    file: f.display().to_string(),
                    dialect: d.as_str().to_string(),
                })
                .collect(),
            problems: r
                .problems
                .iter()
                .map(|p| LintProblem {
                    file: p.file.display().to_string(),
                    line: p.line,
                    column: p.column,
                    level: p.level.as_str().to_string(),
                    message: p.message.clone(),
                })
                .collect(),
            errors: r.count(copse_hooks::Level::Error),
            warnings: r.count(copse_hooks::Level::Warning),
        }
    }
}

/// `trust --json`: what trusting a workspace pinned and now lets run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TrustOutput {
    /// The shape's version.
    pub version: u32,
    /// The workspace root trusted (canonical).
    pub trusted: String,
    /// The settings file written.
    pub settings: String,
    /// Each project config pinned, with the SHA-256 of its content (`null`: it did not
    /// exist, and creating it later counts as a change).
    pub pinned: Vec<PinnedConfig>,
    /// Each workspace script the project hooks run, pinned the same way.
    pub scripts: Vec<PinnedScript>,
    /// The project hooks that may now run.
    pub hooks: Vec<TrustedHook>,
}

/// A project config pinned by `trust`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PinnedConfig {
    /// The config file.
    pub config: String,
    /// The SHA-256 (hex) of its bytes; `null` when it did not exist.
    pub sha256: Option<String>,
}

/// A workspace script pinned by `trust`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PinnedScript {
    /// The script.
    pub script: String,
    /// The SHA-256 (hex) of its bytes; `null` when it did not exist or was not a
    /// readable regular file.
    pub sha256: Option<String>,
}

/// A project hook `trust` lets run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TrustedHook {
    /// The dialect.
    pub dialect: String,
    /// The wire event as written in the config.
    pub event: String,
    /// The command.
    pub command: String,
    /// The config file that declares it.
    pub source: String,
    /// Whether it runs in the OS sandbox.
    pub sandboxed: bool,
}

impl From<&HookSummary> for TrustedHook {
    fn from(h: &HookSummary) -> Self {
        TrustedHook {
            dialect: h.dialect.as_str().to_string(),
            event: h.event.clone(),
            command: h.command.clone(),
            source: h.source.display().to_string(),
            sandboxed: h.sandboxed,
        }
    }
}

/// `trust --diff --json`: each pinned file compared with what was pinned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TrustDiffOutput {
    /// The shape's version.
    pub version: u32,
    /// The workspace root (canonical).
    pub workspace: String,
    /// Whether the workspace is trusted at all.
    pub trusted: bool,
    /// Whether its trust pins content (`false` for a plain path entry: nothing to compare).
    pub pinned: bool,
    /// Whether any pinned file differs from what was pinned (its hooks do not run).
    pub changed: bool,
    /// Every pinned file, configs first, then scripts.
    pub files: Vec<PinnedFileDiff>,
    /// The exact command that trusts the workspace as it is now.
    pub trust_command: String,
}

/// One pinned file in `trust --diff --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PinnedFileDiff {
    /// The file.
    pub path: String,
    /// `config` or `script`.
    pub kind: String,
    /// `unchanged`, `changed`, `created`, `deleted` or `unreadable`.
    pub state: String,
    /// The SHA-256 pinned (`null`: it did not exist when trusted).
    pub pinned_sha256: Option<String>,
    /// The SHA-256 now (`null`: absent or unreadable).
    pub current_sha256: Option<String>,
    /// Whether the pinned content was kept to compare against (`false` for a trust
    /// made by an older copse-hooks: the diff then shows the whole current file).
    pub pinned_copy: bool,
    /// A unified diff from the pinned content to the current one, when it changed.
    pub diff: Option<String>,
}

/// `init --json`: the first hook written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InitOutput {
    /// The shape's version.
    pub version: u32,
    /// The workspace root.
    pub workspace: String,
    /// The dialect written: `cursor`, `claude`, `gemini`, `codex` or `copse`.
    pub dialect: String,
    /// The files written (config first, then the script).
    pub files: Vec<String>,
    /// The commands to run next, in order.
    pub next_steps: Vec<String>,
}

/// `untrust --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UntrustOutput {
    /// The shape's version.
    pub version: u32,
    /// The workspace root (canonical).
    pub untrusted: String,
    /// Whether it was trusted before.
    pub was_trusted: bool,
}

/// `enable --json` and `disable --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EnableOutput {
    /// The shape's version.
    pub version: u32,
    /// Whether external hooks are now on.
    pub enabled: bool,
    /// The settings file written.
    pub settings: String,
}

/// `list --untrusted-preview --json`: what trusting the workspace would let run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UntrustedPreviewOutput {
    /// The shape's version.
    pub version: u32,
    /// The workspace roots previewed.
    pub workspaces: Vec<String>,
    /// Every project hook trusting would let run, in configured order; each one's
    /// `trusted` and `trust` say where it stands today (`untrusted` or `changed` until
    /// `trust` is run).
    pub hooks: Vec<HookOutput>,
    /// Those of them that would run outside the OS sandbox.
    pub unsandboxed: Vec<HookOutput>,
    /// The project configs' warnings.
    pub warnings: Vec<WarningOutput>,
}

/// `sandbox check --json`: what this machine enforces, and the self-test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxCheckOutput {
    /// The shape's version.
    pub version: u32,
    /// The mechanism, e.g. `Landlock`.
    pub mechanism: String,
    /// The sandbox ABI version the kernel supports (`null`: none).
    pub abi: Option<u32>,
    /// Whether filesystem rules are available.
    pub filesystem_rules: bool,
    /// Whether network rules are available.
    pub network_rules: bool,
    /// Whether the default policy (writes confined, network allowed) is enforced.
    pub enforced: bool,
    /// The enforcement of the default policy, in words.
    pub enforcement: String,
    /// Whether a `"network": false` policy is enforced.
    pub network_false_enforced: bool,
    /// How sandbox blocks are detected, in words.
    pub detection: String,
    /// Each protection layer and whether this machine enforces it.
    pub layers: Vec<LayerReport>,
    /// Whether the sandbox is enforced and no check failed.
    pub self_test_passed: bool,
    /// Each self-test check, in order.
    pub checks: Vec<SandboxCheck>,
}

/// One sandbox self-test check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxCheck {
    /// What was checked.
    pub name: String,
    /// `pass`, `fail` or `skip`.
    pub result: String,
    /// What happened (a failure) or why it could not run (a skip); empty on a pass.
    pub detail: String,
}

impl From<&copse_hooks::sandbox::SelfTestReport> for SandboxCheckOutput {
    fn from(r: &copse_hooks::sandbox::SelfTestReport) -> Self {
        use copse_hooks::sandbox::CheckResult;
        let s = &r.status;
        SandboxCheckOutput {
            version: OUTPUT_VERSION,
            mechanism: s.mechanism.to_string(),
            abi: s.abi,
            filesystem_rules: s.filesystem_rules,
            network_rules: s.network_rules,
            enforced: s.enforcement.is_enforced(),
            enforcement: s.enforcement.to_string(),
            network_false_enforced: s.enforcement_without_network.is_enforced(),
            detection: s.detection.to_string(),
            layers: s
                .layers
                .iter()
                .map(|l| LayerReport {
                    name: l.name.to_string(),
                    enforced: l.enforced,
                    detail: l.detail.clone(),
                })
                .collect(),
            self_test_passed: r.passed(),
            checks: r
                .checks
                .iter()
                .map(|c| {
                    let (result, detail) = match &c.result {
                        CheckResult::Passed => ("pass", String::new()),
                        CheckResult::Failed(d) => ("fail", d.clone()),
                        CheckResult::Skipped(d) => ("skip", d.clone()),
                    };
                    SandboxCheck {
                        name: c.name.to_string(),
                        result: result.to_string(),
                        detail,
                    }
                })
                .collect(),
        }
    }
}

/// `daemon status --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DaemonStatusOutput {
    /// The shape's version.
    pub version: u32,
    /// `running`, `stale` (a socket no daemon answers on) or `stopped`.
    pub status: String,
    /// The daemon's pid, when running and known.
    pub pid: Option<u32>,
    /// The daemon's socket (absolute).
    pub socket: String,
    /// The running daemon's version, when it recorded one (`SOCKET.info`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon_version: Option<String>,
    /// The running daemon's executable (absolute), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    /// `current`, `replaced` (another file is at that path now: the next shim call
    /// replaces the daemon) or `deleted`, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executable_state: Option<String>,
    /// When the running daemon started, in ms since the epoch, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_ms: Option<u64>,
}

/// `daemon start --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DaemonStartOutput {
    /// The shape's version.
    pub version: u32,
    /// Always true: a daemon is running on the socket.
    pub running: bool,
    /// Whether this call started it (false: one was already running).
    pub started: bool,
    /// The daemon's pid, when known.
    pub pid: Option<u32>,
    /// The daemon's socket.
    pub socket: String,
    /// The daemon's log file.
    pub log: String,
}

/// `daemon stop --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DaemonStopOutput {
    /// The shape's version.
    pub version: u32,
    /// Always false: no daemon runs on the socket any more.
    pub running: bool,
    /// The pid of the daemon stopped, when known.
    pub stopped: Option<u32>,
}

/// `install AGENT --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InstallOutput {
    /// The shape's version.
    pub version: u32,
    /// The agent (`claude`, `cursor`, `gemini`, `codex`).
    pub agent: String,
    /// `user` or `project`.
    pub scope: String,
    /// The agent's config file the shim was written into.
    pub path: String,
    /// The agent's events the shim now serves.
    pub events: Vec<String>,
    /// Where the agent's own hooks were moved, when they were adopted.
    pub adopted: Option<String>,
    /// The events whose hooks were adopted.
    pub adopted_events: Vec<String>,
    /// Whether external hooks are on (installing turns them on).
    pub hooks_enabled: bool,
    /// The executable the shim entries ran before, when it was another (an upgrade, a
    /// move): the entries now run this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_from: Option<String>,
    /// Nothing changed: every entry already runs this executable.
    #[serde(default)]
    pub already_installed: bool,
}

/// `uninstall AGENT --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UninstallOutput {
    /// The shape's version.
    pub version: u32,
    /// The agent.
    pub agent: String,
    /// The agent's config file.
    pub path: String,
    /// What was done, in words.
    pub result: String,
}

/// One agent's shim, as `list` and `doctor` show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentShimOutput {
    /// `claude`, `gemini`, `codex` or `cursor`.
    pub agent: String,
    /// `user` or `project`.
    pub scope: String,
    /// The agent config file the shim entries are in.
    pub path: String,
    /// The shim command written there.
    pub command: String,
    /// Where the agent's own hooks were adopted to (`install --adopt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopted: Option<String>,
    /// The adopted events, in order.
    #[serde(default)]
    pub adopted_events: Vec<String>,
    /// Which path served the agent's most recent shim calls, when it has been called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<ShimServedOutput>,
    /// What is wrong with the executable the agent's shim entries run, when something
    /// is: it is missing, or it is not the `copse-hooks` running `doctor` (another
    /// path: an older install; `install --agent NAME` points it here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_problem: Option<String>,
}

/// Which path served an agent's shim calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShimServedOutput {
    /// `daemon` or `in-process`.
    pub path: String,
    /// Why the shim ran in-process (`COPSE_SHIM_DAEMON=0`, `no daemon: …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Since when (ms since the epoch).
    pub since_ms: u64,
}

/// One configured hook in `gate --explain --json` / `replay --explain --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExplainHookOutput {
    /// `cursor`, `claude`, `gemini`, `codex` or `copse`.
    pub dialect: String,
    /// The wire event as written in the config.
    pub event: String,
    /// The matcher as written.
    pub matcher: Option<String>,
    /// The hook's command.
    pub command: String,
    /// The config file that declares it.
    pub source: String,
    /// `user` or `project`.
    pub scope: String,
    /// 1-based position in its event's array.
    pub entry: usize,
    /// `ran`, `selected` (picked, no run seen) or `skipped`.
    pub status: String,
    /// Its verdict when it ran (`allow`, `deny — <msg>`, `no opinion`, `failed — …`).
    pub verdict: Option<String>,
    /// Why it did not run: `hooks_off`, `recursion_guard`, `untrusted`,
    /// `config_changed`, `script_changed`, `claude_disabled`, `vendor_disabled`,
    /// `matcher_invalid`, `matcher_no_match`, `condition_false`, `not_for_this_call`,
    /// `other_event`, `unsupported_event`, `duplicate` or `managed_only`.
    pub reason: Option<String>,
    /// The reason as one sentence (may quote config text: escape before printing).
    pub message: Option<String>,
    /// `matcher_no_match`: what the matcher was tested against.
    pub subject: Option<String>,
    /// `condition_false`: the `if` condition as written.
    pub condition: Option<String>,
    /// The file concerned (`config_changed`, `script_changed`, `claude_disabled`) or
    /// the untrusted workspace root (`untrusted`).
    pub file: Option<String>,
    /// `other_event`: the canonical event it runs at for this call.
    pub runs_at: Option<String>,
}

impl From<&copse_hooks::ExplainedHook> for ExplainHookOutput {
    fn from(h: &copse_hooks::ExplainedHook) -> Self {
        use copse_hooks::SkipReason as R;
        let mut out = ExplainHookOutput {
            dialect: h.dialect.as_str().to_string(),
            event: h.event.clone(),
            matcher: h.matcher.clone(),
            command: h.command.clone(),
            source: h.source.display().to_string(),
            scope: h.scope.as_str().to_string(),
            entry: h.entry,
            status: match h.status {
                copse_hooks::HookStatus::Ran => "ran",
                copse_hooks::HookStatus::Selected => "selected",
                copse_hooks::HookStatus::Skipped => "skipped",
            }
            .to_string(),
            verdict: h.verdict.clone(),
            reason: h.reason.as_ref().map(|r| r.code().to_string()),
            message: h.reason_message(),
            subject: None,
            condition: None,
            file: None,
            runs_at: None,
        };
        match &h.reason {
            Some(R::MatcherNoMatch { subject, .. }) => out.subject = Some(subject.clone()),
            Some(R::ConditionFalse { condition }) => out.condition = Some(condition.clone()),
            Some(R::ConfigChanged { file } | R::ScriptChanged { file }) => {
                out.file = Some(file.display().to_string());
            }
            Some(R::ClaudeDisabled { file: Some(file) } | R::Untrusted { root: Some(file) }) => {
                out.file = Some(file.display().to_string());
            }
            Some(R::OtherEvent { runs_at }) => out.runs_at = Some(runs_at.name().to_string()),
            _ => {}
        }
        out
    }
}

/// A config that could not be read or parsed as it is (`gate --explain --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExplainProblem {
    /// The config file.
    pub source: String,
    /// What is wrong (may quote config text: escape before printing).
    pub message: String,
}

/// `gate --explain --json`, and each event of `replay --explain --json`: every
/// configured hook for the event with its verdict or why it did not run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExplainOutput {
    /// The shape's version.
    pub version: u32,
    /// The canonical event explained.
    pub event: String,
    /// The tool, for tool events.
    pub tool: Option<String>,
    /// Whether external hooks are on.
    pub hooks_enabled: bool,
    /// Whether this process runs inside a hook (nothing runs).
    pub recursion_guard: bool,
    /// Every configured hook for the event, in configured order.
    pub hooks: Vec<ExplainHookOutput>,
    /// Configs that could not be read or parsed as they are.
    pub problems: Vec<ExplainProblem>,
    /// `gate --explain`: the gate's verdict, as `gate --json` prints it (so the
    /// explanation is a superset of the `gate` object); absent in a replay line.
    #[serde(flatten)]
    pub verdict: Option<VerdictFields>,
    /// `gate --explain`: the gate's notices, as `gate --json` prints them.
    #[serde(default)]
    pub notices: Vec<NoticeOutput>,
    /// `gate --explain`: the config problems the gate met, as `gate --json` prints
    /// them.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// `gate --explain`: the guard's lines, as the human form prints them (the JSON
    /// form carries the guard's runs in the verdict's `guard`).
    #[serde(skip)]
    #[schemars(skip)]
    pub guard: Vec<String>,
}

impl From<&copse_hooks::Explanation> for ExplainOutput {
    fn from(e: &copse_hooks::Explanation) -> Self {
        ExplainOutput {
            version: OUTPUT_VERSION,
            event: e.event.name().to_string(),
            tool: e.tool.clone(),
            hooks_enabled: e.hooks_enabled,
            recursion_guard: e.recursion_guard,
            hooks: e.hooks.iter().map(ExplainHookOutput::from).collect(),
            problems: e
                .problems
                .iter()
                .map(|p| ExplainProblem {
                    source: p.source.display().to_string(),
                    message: p.message.clone(),
                })
                .collect(),
            verdict: None,
            notices: Vec::new(),
            warnings: Vec::new(),
            guard: Vec::new(),
        }
    }
}

/// `audit verify --json`: the audit chain of the whole store checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AuditVerifyOutput {
    /// The shape's version.
    pub version: u32,
    /// No run was found edited, removed, reordered or added.
    pub ok: bool,
    /// The store's chain: 32 hex digits of its random id; `null` when the store
    /// predates the chain.
    pub chain_id: Option<String>,
    /// Chained runs found intact (all of them when `ok`; else those before the first
    /// problem).
    pub runs_checked: u64,
    /// The first seq the chain covers; `null` when the store predates the chain (it
    /// is migrated by the next recorded run).
    pub chained_from_seq: Option<u64>,
    /// Runs recorded before the chain started: counted, not checked.
    pub predating_chain: u64,
    /// Runs up to this seq were pruned by retention (the chain is checked from the
    /// next one).
    pub pruned_through_seq: Option<u64>,
    /// The newest chained run, as the store records it (what exports carry).
    pub head: Option<ChainHeadOutput>,
    /// The first run that is not as it was recorded.
    pub first_problem: Option<ChainProblemOutput>,
}

/// The newest link of an audit chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChainHeadOutput {
    /// Its row number.
    pub seq: u64,
    /// Its run id.
    pub run_id: String,
    /// Its SHA-256 chain hash, 64 lowercase hex digits.
    pub hash: String,
}

/// Where an audit chain breaks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChainProblemOutput {
    /// The run's row number (for a removal: the first missing one).
    pub seq: u64,
    /// Its run id, when the store still names it.
    pub run_id: Option<String>,
    /// `edited`, `removed`, `reordered` or `added`.
    pub kind: String,
    /// What is wrong, one sentence (runs named by seq).
    pub detail: String,
}

impl From<&copse_hooks::spine::ChainReport> for AuditVerifyOutput {
    fn from(r: &copse_hooks::spine::ChainReport) -> Self {
        AuditVerifyOutput {
            version: OUTPUT_VERSION,
            ok: r.is_intact(),
            chain_id: r.chain_id.clone(),
            runs_checked: r.runs_checked,
            chained_from_seq: r.chained_from_seq,
            predating_chain: r.predating_chain,
            pruned_through_seq: r.pruned_through_seq,
            head: r.head.as_ref().map(|h| ChainHeadOutput {
                seq: h.seq,
                run_id: h.run_id.clone(),
                hash: h.hash.to_hex(),
            }),
            first_problem: r.first_problem.as_ref().map(|p| ChainProblemOutput {
                seq: p.seq,
                run_id: p.run_id.clone(),
                kind: p.kind.as_str().to_owned(),
                detail: p.detail.clone(),
            }),
        }
    }
}
