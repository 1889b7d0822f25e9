//! The record the engine hands the spine, and how one is built from a run.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::dropped::DroppedRun;
use crate::outcome::{FailurePolicy, HookRun};

/// The most bytes kept of each of stdin, stdout and stderr, and of each outcome channel
/// text. Anything longer is cut (at a character boundary for text) and flagged.
pub const CAPTURE_CAP: usize = 64 * 1024;

/// What a record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    /// A hook process ran (or failed to start).
    #[default]
    Run,
    /// A detached hook was never started because the dispatcher was full.
    Dropped,
    /// A hook ran but the engine discarded its outcome (e.g. a halt from a hook whose
    /// event cannot halt). The outcome columns say what it asked for.
    Suppressed,
    /// The built-in guard judged a tool call (no process): `command` names the rule
    /// that matched, `stdin` holds the call, `stdout` the guard's verdict.
    Guard,
}

impl RunKind {
    /// The name stored in the `kind` column: `run`, `dropped`, `suppressed` or `guard`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Run => "run",
            RunKind::Dropped => "dropped",
            RunKind::Suppressed => "suppressed",
            RunKind::Guard => "guard",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<RunKind> {
        match s {
            "run" => Some(RunKind::Run),
            "dropped" => Some(RunKind::Dropped),
            "suppressed" => Some(RunKind::Suppressed),
            "guard" => Some(RunKind::Guard),
            _ => None,
        }
    }
}

/// One row of the audit log: everything recorded about one hook run.
///
/// Vocabulary fields (`dialect`, `canonical`, `scope`, `failure`, `outcome`,
/// `decision`, `sandbox`, `policy`) hold the lowercase names their types print
/// (`Dialect::as_str`, `CanonicalEvent::name`, `FailureKind::as_str`,
/// `RunOutcome::as_str`, ...). They are stored and returned as text so that a record
/// stays readable when a vocabulary grows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RunRecord {
    /// Unique, sortable id; see [`new_run_id`]. An empty id is filled in when the
    /// record is written.
    pub run_id: String,
    /// The conversation.
    pub session_id: String,
    /// The turn (generation) the run belongs to.
    pub turn_id: String,
    /// Run, dropped or suppressed.
    pub kind: RunKind,
    /// The hook's dialect: `cursor`, `claude`, `copse`.
    pub dialect: String,
    /// The dialect's wire event name, e.g. `beforeShellExecution`.
    pub event: String,
    /// The canonical event name, e.g. `toolGate`.
    pub canonical: String,
    /// The command as configured.
    pub command: String,
    /// The config file that declared the hook (lossy UTF-8 of the path).
    pub source: String,
    /// `user` or `project`.
    pub scope: String,
    /// When the process was started (for a dropped run: when it was dropped), unix ms.
    pub started_at: u64,
    /// How long the run took, ms.
    pub duration_ms: u64,
    /// The exit code; `None` when killed or never started.
    pub exit_code: Option<i32>,
    /// Whether stdout parsed as a response.
    pub parse_ok: bool,
    /// The failure kind (`spawn`, `timeout`, `exit`, `invalid_json`, `oversize`,
    /// `sandbox`), if the run failed.
    pub failure: Option<String>,
    /// The failure's description, e.g. `timed out after 30s`.
    pub failure_message: Option<String>,
    /// The failure policy that applied (`open` or `closed`); `None` for dropped runs.
    pub policy: Option<String>,
    /// The sandbox state (`enforced`, `unenforced`, `off`, `blocked`, ...).
    pub sandbox: Option<String>,
    /// The short result label: `allow`, `ask`, `deny`, `none` or `failed`.
    pub outcome: String,
    /// The decision the hook gave (after the failure policy), if any.
    pub decision: Option<String>,
    /// Text for the agent.
    pub agent_message: Option<String>,
    /// Text for the user.
    pub user_message: Option<String>,
    /// Why the hook asked to halt.
    pub halt_reason: Option<String>,
    /// Context to inject into the turn.
    pub inject_context: Option<String>,
    /// The rewritten tool input, as JSON text.
    pub updated_input: Option<String>,
    /// The text of a message the hook asked to queue.
    pub queued_message: Option<String>,
    /// Whether the hook exported session environment (only the fact is kept).
    pub session_env: bool,
    /// Whether any outcome channel text above was cut at [`CAPTURE_CAP`].
    pub outcome_truncated: bool,
    /// The exact stdin sent (at most [`CAPTURE_CAP`] bytes).
    pub stdin: Vec<u8>,
    /// Whether stdin was cut.
    pub stdin_truncated: bool,
    /// What the hook printed on stdout (at most [`CAPTURE_CAP`] bytes).
    pub stdout: Vec<u8>,
    /// Whether stdout was cut.
    pub stdout_truncated: bool,
    /// What the hook printed on stderr (at most [`CAPTURE_CAP`] bytes).
    pub stderr: Vec<u8>,
    /// Whether stderr was cut.
    pub stderr_truncated: bool,
    /// What the engine refused or changed about the run (e.g. dropped session
    /// environment variables).
    pub warnings: Vec<String>,
    /// How many secrets were redacted from the recorded streams.
    pub redactions: u64,
    /// A process of the run had left its process group and was killed when the run
    /// ended.
    pub leaked: bool,
}

impl RunRecord {
    /// The record of one hook run. Copies at most [`CAPTURE_CAP`] bytes of each stream
    /// and each outcome text; `sandbox` is stored as given (`None` when empty).
    pub fn from_run(run: &HookRun, session_id: &str, turn_id: &str, sandbox: &str) -> Self {
        let started_at = unix_ms(run.started_at);
        let outcome = &run.outcome;
        let mut truncated = false;
        let mut text = |s: Option<&str>| {
            s.map(|s| {
                let (kept, cut) = cap_str(s);
                truncated |= cut;
                kept.to_owned()
            })
        };
        let agent_message = text(outcome.agent_message.as_deref());
        let user_message = text(outcome.user_message.as_deref());
        let halt_reason = text(outcome.halt.as_ref().map(|h| h.reason.as_str()));
        let inject_context = text(outcome.inject_context.as_deref());
        let queued_message = text(outcome.queue_message.as_ref().map(|q| q.text.as_str()));
        let updated_input = outcome.updated_input.as_ref().map(|map| {
            let json = serde_json::Value::Object(map.clone()).to_string();
            let (kept, cut) = cap_str(&json);
            truncated |= cut;
            kept.to_owned()
        });
        let (stdin, stdin_truncated) = cap_bytes(&run.stdin);
        let (stdout, stdout_truncated) = cap_bytes(&run.stdout);
        let (stderr, stderr_truncated) = cap_bytes(&run.stderr);
        RunRecord {
            run_id: new_run_id(started_at),
            session_id: session_id.to_owned(),
            turn_id: turn_id.to_owned(),
            kind: if run.guard.is_some() {
                RunKind::Guard
            } else {
                RunKind::Run
            },
            dialect: run.dialect.as_str().to_owned(),
            event: run.event.clone(),
            canonical: run.canonical.name().to_owned(),
            command: run.command.clone(),
            source: run.source.to_string_lossy().into_owned(),
            scope: run.scope.as_str().to_owned(),
            started_at,
            duration_ms: millis(run.duration),
            exit_code: run.exit_code,
            parse_ok: run.parse_ok,
            failure: run.failure.as_ref().map(|f| f.kind.as_str().to_owned()),
            failure_message: run.failure.as_ref().map(|f| f.message.clone()),
            policy: Some(policy_name(run.policy).to_owned()),
            sandbox: (!sandbox.is_empty()).then(|| sandbox.to_owned()),
            outcome: run.result.as_str().to_owned(),
            // The guard's decision, also in observe mode where it enforced none (its
            // would-be verdict is what the record keeps).
            decision: run
                .guard
                .as_ref()
                .map_or(outcome.decision, |g| g.would)
                .map(|d| d.as_str().to_owned()),
            agent_message,
            user_message,
            halt_reason,
            inject_context,
            updated_input,
            queued_message,
            session_env: outcome.session_env.is_some(),
            outcome_truncated: truncated,
            stdin: stdin.to_vec(),
            stdin_truncated,
            stdout: stdout.to_vec(),
            stdout_truncated,
            stderr: stderr.to_vec(),
            stderr_truncated,
            warnings: run.warnings.clone(),
            redactions: 0,
            leaked: run.leaked,
        }
    }

    /// The record of a detached run that was dropped before it started: kind
    /// `dropped`, outcome `none`, no process fields.
    pub fn dropped(d: &DroppedRun, session_id: &str, turn_id: &str) -> Self {
        let at = unix_ms(d.at);
        RunRecord {
            run_id: new_run_id(at),
            session_id: session_id.to_owned(),
            turn_id: turn_id.to_owned(),
            kind: RunKind::Dropped,
            dialect: d.dialect.as_str().to_owned(),
            event: d.event.clone(),
            canonical: d.canonical.name().to_owned(),
            command: d.command.clone(),
            source: d.source.to_string_lossy().into_owned(),
            scope: d.scope.as_str().to_owned(),
            started_at: at,
            parse_ok: true,
            outcome: "none".to_owned(),
            ..RunRecord::default()
        }
    }

    /// The same record with kind `suppressed`: the run happened, its outcome was
    /// discarded by the engine.
    pub fn suppressed(mut self) -> Self {
        self.kind = RunKind::Suppressed;
        self
    }

    /// Enforces [`CAPTURE_CAP`] on the streams and channel texts of a record built by
    /// hand (idempotent; [`RunRecord::from_run`] already did it).
    pub(crate) fn enforce_caps(&mut self) {
        for (bytes, flag) in [
            (&mut self.stdin, &mut self.stdin_truncated),
            (&mut self.stdout, &mut self.stdout_truncated),
            (&mut self.stderr, &mut self.stderr_truncated),
        ] {
            if bytes.len() > CAPTURE_CAP {
                bytes.truncate(CAPTURE_CAP);
                bytes.shrink_to_fit();
                *flag = true;
            }
        }
        for text in [
            &mut self.agent_message,
            &mut self.user_message,
            &mut self.halt_reason,
            &mut self.inject_context,
            &mut self.updated_input,
            &mut self.queued_message,
        ]
        .into_iter()
        .flatten()
        {
            let keep = cap_str(text).0.len();
            if keep < text.len() {
                text.truncate(keep);
                self.outcome_truncated = true;
            }
        }
    }

    /// Roughly how much memory the record holds (for bounding the queue).
    pub(crate) fn weight(&self) -> usize {
        let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        256 + self.run_id.len()
            + self.session_id.len()
            + self.turn_id.len()
            + self.dialect.len()
            + self.event.len()
            + self.canonical.len()
            + self.command.len()
            + self.source.len()
            + self.scope.len()
            + self.outcome.len()
            + opt(&self.failure)
            + opt(&self.failure_message)
            + opt(&self.policy)
            + opt(&self.sandbox)
            + opt(&self.decision)
            + opt(&self.agent_message)
            + opt(&self.user_message)
            + opt(&self.halt_reason)
            + opt(&self.inject_context)
            + opt(&self.updated_input)
            + opt(&self.queued_message)
            + self.stdin.len()
            + self.stdout.len()
            + self.stderr.len()
    }
}

fn policy_name(policy: FailurePolicy) -> &'static str {
    match policy {
        FailurePolicy::Open => "open",
        FailurePolicy::Closed => "closed",
    }
}

fn cap_bytes(bytes: &[u8]) -> (&[u8], bool) {
    match bytes.get(..CAPTURE_CAP) {
        Some(kept) if bytes.len() > CAPTURE_CAP => (kept, true),
        _ => (bytes, false),
    }
}

fn cap_str(s: &str) -> (&str, bool) {
    if s.len() <= CAPTURE_CAP {
        return (s, false);
    }
    let mut end = CAPTURE_CAP;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (s.get(..end).unwrap_or_default(), true)
}

/// Milliseconds since the Unix epoch (0 before it).
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, millis)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A new run id for a run that started at `started_at_ms` (unix ms).
///
/// Format: `r` + the start time as 13 decimal digits of unix ms + `-` + 8 hex digits
/// of a random per-process salt + 6 hex digits of a per-process counter, e.g.
/// `r1718000000000-9f3a2c1b00002a` (29 characters). Ids sort by start millisecond,
/// then (within one process) by creation order; the salt keeps ids from concurrent
/// processes apart. The counter wraps after 16,777,216 ids, which can only reorder
/// ids created in the same millisecond.
pub fn new_run_id(started_at_ms: u64) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    static SALT: OnceLock<u32> = OnceLock::new();
    let salt = *SALT.get_or_init(|| {
        let mut h = RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.write_u64(unix_ms(SystemTime::now()));
        // Truncation intended: 32 random bits are plenty.
        h.finish() as u32
    });
    let n = COUNTER.fetch_add(1, Ordering::Relaxed) & 0xff_ffff;
    format!("r{started_at_ms:013}-{salt:08x}{n:06x}")
}
