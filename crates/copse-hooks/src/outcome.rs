//! The outcome vocabulary: what one hook said, and what a hook run was.
//!
//! Decisions are an ordered enum (`Allow < Ask < Deny`) merged with `max`, so a hook
//! can only ever tighten a gate. Failures are typed ([`FailureKind`]), never strings.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::event::CanonicalEvent;
use crate::scope::{Dialect, Scope};

/// A permission decision. The order is the strictness: `Allow < Ask < Deny`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// No objection. Never an approval: the host's own prompting still applies.
    Allow,
    /// Ask the user before proceeding.
    Ask,
    /// Block the action.
    Deny,
}

impl Decision {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }

    /// Parses `allow`, `ask` or `deny`.
    pub fn parse(s: &str) -> Option<Decision> {
        match s {
            "allow" => Some(Decision::Allow),
            "ask" => Some(Decision::Ask),
            "deny" => Some(Decision::Deny),
            _ => None,
        }
    }
}

/// A request to halt the run (beforeSubmitPrompt `continue: false` and the like).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Halt {
    /// Why the run was halted (shown to the user).
    pub reason: String,
}

/// A message a hook asks to queue for the agent (follow-ups, added context).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueRequest {
    /// The message text.
    pub text: String,
    /// Whether the hook asked for it to be sent now (interrupting) rather than queued.
    pub send_now: bool,
    /// Whether it must wait for a human to release it (stop follow-ups).
    pub held: bool,
}

/// What one hook said, in the canonical vocabulary.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Outcome {
    /// The permission decision, if the hook gave one.
    pub decision: Option<Decision>,
    /// Text for the agent (the model) — the reason on a deny or ask.
    pub agent_message: Option<String>,
    /// Text for the user.
    pub user_message: Option<String>,
    /// A rewrite of the tool input (shallow-merged in configured order).
    pub updated_input: Option<Map<String, Value>>,
    /// Whether `updated_input` is the whole new input (Claude's `updatedInput`
    /// replaces) rather than keys to merge into it.
    pub replace_input: bool,
    /// Context to inject into the turn.
    pub inject_context: Option<String>,
    /// A request to halt the run; outranks everything.
    pub halt: Option<Halt>,
    /// A message to queue (detached events).
    pub queue_message: Option<QueueRequest>,
    /// Environment for later hooks of the session (sessionStart).
    pub session_env: Option<BTreeMap<String, String>>,
    /// Shell lines a Claude SessionStart hook appended to `$CLAUDE_ENV_FILE`: the
    /// host sources them before each of its later shell tool commands.
    pub tool_env_script: Option<String>,
    /// Permission-rule updates a Claude PermissionRequest hook sent with an allow
    /// (`updatedPermissions`: `addRules`, `setMode`, … each with a `destination`),
    /// as written. copse-hooks never applies them: the host's permission system may.
    pub updated_permissions: Option<Vec<Value>>,
}

impl Outcome {
    /// An outcome with only a decision.
    pub fn decision(decision: Decision) -> Self {
        Outcome {
            decision: Some(decision),
            ..Outcome::default()
        }
    }

    /// Whether the outcome says nothing at all ("no opinion").
    pub fn is_empty(&self) -> bool {
        *self == Outcome::default()
    }
}

/// Why a hook run failed. Each kind goes through the hook's failure policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureKind {
    /// The process could not be started.
    Spawn,
    /// The hook did not finish within its timeout.
    Timeout,
    /// The hook exited non-zero (or was killed) without a usable response.
    Exit,
    /// The hook printed something that is not a valid response.
    InvalidJson,
    /// The hook printed more than the stdout cap.
    Oversize,
    /// The sandbox blocked the hook, or the sandbox was required and unavailable.
    Sandbox,
    /// The host ran out of file descriptors or processes (EMFILE, ENFILE, EAGAIN) and
    /// could not start or supervise the hook.
    Resources,
    /// A persistent hook crashed repeatedly and is marked broken: its events resolve
    /// by the failure policy without starting it.
    Broken,
}

impl FailureKind {
    /// The snake_case name used in JSON and the spine.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Spawn => "spawn",
            FailureKind::Timeout => "timeout",
            FailureKind::Exit => "exit",
            FailureKind::InvalidJson => "invalid_json",
            FailureKind::Oversize => "oversize",
            FailureKind::Sandbox => "sandbox",
            FailureKind::Resources => "resources",
            FailureKind::Broken => "broken",
        }
    }
}

/// A failure with its human-readable description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The kind.
    pub kind: FailureKind,
    /// What went wrong, phrased to follow the hook's name: `timed out after 30s`.
    pub message: String,
}

/// What to do when a hook fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FailurePolicy {
    /// A failure is "no opinion".
    Open,
    /// A failure denies a gated action.
    Closed,
}

/// The short label of one run's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunOutcome {
    /// The hook allowed.
    Allow,
    /// The hook asked.
    Ask,
    /// The hook denied (or halted).
    Deny,
    /// The hook gave no decision.
    None,
    /// The hook failed (see the failure kind); its policy decided the effect.
    Failed,
}

impl RunOutcome {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Allow => "allow",
            RunOutcome::Ask => "ask",
            RunOutcome::Deny => "deny",
            RunOutcome::None => "none",
            RunOutcome::Failed => "failed",
        }
    }
}

/// The record of one hook run: what ran, for which event, and how it ended.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HookRun {
    /// The dialect's wire event name, e.g. `beforeShellExecution`.
    pub event: String,
    /// The canonical event that fired it.
    pub canonical: CanonicalEvent,
    /// The hook's dialect.
    pub dialect: Dialect,
    /// The command as configured.
    pub command: String,
    /// Absolute path of the config file that declared the hook.
    pub source: PathBuf,
    /// User or project.
    pub scope: Scope,
    /// When the process was started.
    pub started_at: SystemTime,
    /// How long the run took.
    pub duration: Duration,
    /// The exit code; `None` when killed or never started.
    pub exit_code: Option<i32>,
    /// Whether stdout parsed as a response (an empty stdout counts as parsed).
    pub parse_ok: bool,
    /// The failure, if the run failed.
    pub failure: Option<Failure>,
    /// The policy that applied to a failure.
    pub policy: FailurePolicy,
    /// What the hook said (after the failure policy).
    pub outcome: Outcome,
    /// The short result label.
    pub result: RunOutcome,
    /// The exact stdin sent.
    pub stdin: Vec<u8>,
    /// The stdout read (capped).
    pub stdout: Vec<u8>,
    /// The stderr read (capped).
    pub stderr: Vec<u8>,
    /// How the sandbox applied to this run.
    pub sandbox: SandboxState,
    /// A process of the run had left its process group (`setsid`, `setpgid`) and had
    /// to be killed when the run ended.
    pub leaked: bool,
    /// What the engine refused or changed about this run (e.g. session environment
    /// variables it dropped), for the record.
    pub warnings: Vec<String>,
    /// Set on the built-in guard's run (no process ran): what it decided.
    pub guard: Option<GuardRun>,
    /// Set when no process ran because this stands for a config that could not run
    /// (changed since trusted, or refused for its owner or mode): it blocks the gate.
    pub blocked: bool,
}

/// What the built-in guard decided about one call (a run of kind `guard`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct GuardRun {
    /// `enforce`, `observe` or `off`.
    pub mode: String,
    /// What it decides in enforce mode (in observe mode: the would-be verdict).
    pub would: Option<Decision>,
    /// The strictest rule that matched.
    pub rule: Option<String>,
    /// That rule's category.
    pub category: Option<String>,
    /// The normalised command or path it matched.
    pub matched: Option<String>,
    /// Whether this judged the input after the hooks' rewrites.
    pub rewritten: bool,
    /// Set when the guard's policy is refused (every call is then denied).
    pub broken: Option<String>,
    /// Whether the hooks had already answered as strictly (a hook refused what the
    /// guard refuses): the verdict and its messages are theirs, and this run is shown
    /// by `gate --explain` but not recorded or exported apart from them.
    pub subsumed: bool,
}

impl HookRun {
    /// The record of a run of the hook `command` (declared in `source`) for `event`
    /// that has not done anything yet: started now, no exit code, no output, no
    /// decision, not sandboxed. The runner fills in the rest as the run goes; a host or
    /// test that records a run of its own sets the fields it knows.
    pub fn new(
        event: impl Into<String>,
        canonical: CanonicalEvent,
        dialect: Dialect,
        command: impl Into<String>,
        source: impl Into<PathBuf>,
        scope: Scope,
    ) -> Self {
        HookRun {
            event: event.into(),
            canonical,
            dialect,
            command: command.into(),
            source: source.into(),
            scope,
            started_at: SystemTime::now(),
            duration: Duration::ZERO,
            exit_code: None,
            parse_ok: true,
            failure: None,
            policy: FailurePolicy::Closed,
            outcome: Outcome::default(),
            result: RunOutcome::None,
            stdin: Vec::new(),
            stdout: Vec::new(),
            stderr: Vec::new(),
            sandbox: SandboxState::Off,
            leaked: false,
            warnings: Vec::new(),
            guard: None,
            blocked: false,
        }
    }
}

/// How the sandbox applied to one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxState {
    /// The run was confined and nothing it did was denied (as far as detectable).
    Enforced,
    /// The sandbox denied something the hook did: the run failed (failure kind `sandbox`).
    Blocked,
    /// The kernel does not enforce the sandbox, so the hook ran unconfined.
    Unenforced,
    /// The hook opted out (Copse `"sandbox": false`) or the host turned sandboxing off.
    Off,
}

impl SandboxState {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxState::Enforced => "enforced",
            SandboxState::Blocked => "blocked",
            SandboxState::Unenforced => "unenforced",
            SandboxState::Off => "off",
        }
    }
}

/// The merged answer of a blocking event's hooks.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Verdict {
    /// The strictest decision; `Allow` means "no hook objects", never an approval.
    pub decision: Option<Decision>,
    /// Agent messages joined with a blank line, in configured order.
    pub agent_message: Option<String>,
    /// User messages joined with a blank line, in configured order.
    pub user_message: Option<String>,
    /// `updated_input` objects shallow-merged in configured order; a replacing
    /// rewrite (Claude `updatedInput`) discards what came before it.
    pub updated_input: Option<Map<String, Value>>,
    /// Whether `updated_input` is the complete new input (some hook replaced it):
    /// the host uses it as is instead of merging it into the original input.
    pub input_replaced: bool,
    /// Injected context joined with a blank line.
    pub inject_context: Option<String>,
    /// The first halt request, in configured order.
    pub halt: Option<Halt>,
    /// What Claude SessionStart hooks wrote to `$CLAUDE_ENV_FILE`, in configured
    /// order: the host sources it before each later shell tool command (see
    /// [`crate::Session::tool_env_script`]).
    pub tool_env_script: Option<String>,
    /// Permission-rule updates from PermissionRequest hooks that allowed, in
    /// configured order (Claude `updatedPermissions`); `None` when the verdict denies.
    /// The host may apply them to its own permission rules; copse-hooks never does.
    pub updated_permissions: Option<Vec<Value>>,
    /// One record per hook run, in configured order.
    pub runs: Vec<HookRun>,
    /// The built-in guard's runs that matched (a rule, or a refused policy): on the
    /// call's input, then on the input the hooks rewrote. Kept apart from `runs`; a
    /// guard run tightens the decision and, when it does, its message is the verdict's.
    pub guard: Vec<HookRun>,
}

impl Verdict {
    /// The effective decision: `Allow` when no hook objected.
    pub fn effective_decision(&self) -> Decision {
        self.decision.unwrap_or(Decision::Allow)
    }
}

/// Formats a duration in seconds the way configs write it (`30s`, `0.5s`).
pub(crate) fn seconds(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{}s", d.as_secs_f64())
    }
}
