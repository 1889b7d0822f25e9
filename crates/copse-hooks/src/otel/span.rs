//! What one gate is, as exported: the gate and a child per hook run.

use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::event::CanonicalEvent;
use crate::outcome::{
    Decision, FailureKind, FailurePolicy, HookRun, RunOutcome, SandboxState, Verdict,
};
use crate::scope::TrustState;
use crate::scope::{Dialect, Scope};
use crate::spine::redact::redact_bytes;

/// A W3C trace id: 16 bytes, never all zero.
pub type TraceId = [u8; 16];
/// A W3C span id: 8 bytes, never all zero.
pub type SpanId = [u8; 8];

/// The longest input summary [`summary`] makes, in characters.
pub const SUMMARY_CAP: usize = 200;

/// One gate: the event, what was asked and what the hooks decided. Exported as one
/// span (`copse.gate <event>`) with one child span per hook run; see `docs/otel.md`
/// for every attribute.
///
/// Texts are exported as one line each, through the audit store's secret redaction
/// and capped; [`GateSpan::input_summary`] should come from [`summary`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GateSpan {
    /// The trace (one per gate).
    pub trace_id: TraceId,
    /// The gate span's id; each run's span is its child.
    pub span_id: SpanId,
    /// When the gate started.
    pub start: SystemTime,
    /// When the verdict was known.
    pub end: SystemTime,
    /// The canonical event.
    pub event: CanonicalEvent,
    /// The agent's own name for the event (`PreToolUse`), when an agent sent it.
    pub vendor_event: Option<String>,
    /// The agent the shim serves (`claude`, `cursor`, `codex`, `gemini`, `copilot`),
    /// when known.
    pub agent: Option<String>,
    /// The gated tool's name, on tool events.
    pub tool: Option<String>,
    /// The agent's id for the tool call, when it gave one.
    pub tool_use_id: Option<String>,
    /// A one-line, redacted summary of the tool input or prompt ([`summary`]).
    pub input_summary: Option<String>,
    /// The effective decision (`allow` when no hook objected).
    pub decision: Decision,
    /// The hook whose decision is the verdict's (its command), when one decided.
    pub deciding_hook: Option<String>,
    /// That hook's message (for the agent, else for the user).
    pub deciding_message: Option<String>,
    /// The host's session, when it has an id of its own.
    pub session_id: Option<String>,
    /// The conversation.
    pub conversation_id: Option<String>,
    /// The turn (generation) within the conversation.
    pub turn_id: Option<String>,
    /// One per hook run, in configured order.
    pub runs: Vec<RunSpan>,
    /// The audit store's newest committed chain link when the span was built
    /// (`<chain id>:<sequence>:<hash>`; the gate's own runs may commit just after).
    pub chain_head: Option<String>,
    /// The tool input or prompt in full, exported only when the configuration opts
    /// into payloads ([`super::ExportConfig::include_payloads`]); redacted and capped
    /// on the export thread.
    pub payload: Option<Value>,
    /// Detached runs: no gate span is exported, only the runs' spans — children of
    /// [`GateSpan::parent`] in this trace when the gate they belong to is known, else
    /// each its own root carrying the event's attributes.
    pub detached: bool,
    /// The gate span a detached run belongs to (its trace is
    /// [`GateSpan::trace_id`]).
    pub parent: Option<SpanId>,
}

/// One hook run of a gate.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunSpan {
    /// The run span's id.
    pub span_id: SpanId,
    /// When the run started.
    pub start: SystemTime,
    /// How long it took.
    pub duration: Duration,
    /// The format that declared the hook.
    pub dialect: Dialect,
    /// The dialect's event name (`beforeShellExecution`).
    pub vendor_event: String,
    /// The command as configured.
    pub command: String,
    /// The config file that declared it.
    pub source: String,
    /// User or project.
    pub scope: Scope,
    /// The exit code; `None` when killed or never started.
    pub exit_code: Option<i32>,
    /// The hook's configured timeout, when the caller knows it.
    pub timeout: Option<Duration>,
    /// How the sandbox applied.
    pub sandbox: SandboxState,
    /// A process of the run escaped its process group and was killed.
    pub leaked: bool,
    /// Why the run failed, if it did.
    pub failure: Option<FailureKind>,
    /// The failure's description.
    pub failure_message: Option<String>,
    /// The policy a failure went through.
    pub policy: FailurePolicy,
    /// The short result (`allow`, `ask`, `deny`, `none`, `failed`).
    pub result: RunOutcome,
    /// The hook's decision after the failure policy.
    pub decision: Option<Decision>,
    /// The trust state of the hook's config, when the caller knows it.
    pub trust: Option<TrustState>,
    /// What the engine refused or changed about the run (a session variable it
    /// dropped, …), one line each.
    pub refusals: Vec<String>,
    /// The hook's stdin as sent, only with payloads opted into.
    pub stdin: Option<Vec<u8>>,
    /// The hook's stdout as read (capped), only with payloads opted into.
    pub stdout: Option<Vec<u8>>,
}

impl GateSpan {
    /// A gate of `event` that started at `start` and has not ended, with fresh ids,
    /// nothing decided and no runs.
    pub fn new(event: CanonicalEvent, start: SystemTime) -> GateSpan {
        GateSpan {
            trace_id: new_trace_id(),
            span_id: new_span_id(),
            start,
            end: start,
            event,
            vendor_event: None,
            agent: None,
            tool: None,
            tool_use_id: None,
            input_summary: None,
            decision: Decision::Allow,
            deciding_hook: None,
            deciding_message: None,
            session_id: None,
            conversation_id: None,
            turn_id: None,
            runs: Vec::new(),
            chain_head: None,
            payload: None,
            detached: false,
            parent: None,
        }
    }

    /// Fills in what `verdict` says: the effective decision, the hook that decided
    /// (the first run, in configured order, whose decision is the verdict's) with
    /// its message, and one [`RunSpan`] per run.
    pub fn record_verdict(&mut self, verdict: &Verdict) {
        self.decision = verdict.effective_decision();
        // The guard decides only when it tightened the hooks' answer: then its run is
        // the one whose decision (and message) the verdict carries.
        let decider = verdict.decision.and_then(|d| {
            verdict
                .guard
                .iter()
                .filter(|r| !crate::gate::subsumed(r))
                .find(|r| r.outcome.decision == Some(d))
                .or_else(|| verdict.runs.iter().find(|r| r.outcome.decision == Some(d)))
        });
        self.deciding_hook = decider.map(|r| r.command.clone());
        self.deciding_message = decider.and_then(|r| {
            r.outcome
                .agent_message
                .clone()
                .or_else(|| r.outcome.user_message.clone())
                .or_else(|| r.failure.as_ref().map(|f| f.message.clone()))
        });
        self.runs = verdict
            .runs
            .iter()
            .chain(verdict.guard.iter().filter(|r| !crate::gate::subsumed(r)))
            .map(RunSpan::from_run)
            .collect();
    }
}

impl RunSpan {
    /// The span of `run`, with a fresh id; the configured timeout and the trust
    /// state are left for the caller, which knows them, and so are the payloads
    /// ([`RunSpan::with_payloads`]).
    pub fn from_run(run: &HookRun) -> RunSpan {
        RunSpan {
            span_id: new_span_id(),
            start: run.started_at,
            duration: run.duration,
            dialect: run.dialect,
            vendor_event: run.event.clone(),
            command: run.command.clone(),
            source: run.source.to_string_lossy().into_owned(),
            scope: run.scope,
            exit_code: run.exit_code,
            timeout: None,
            sandbox: run.sandbox,
            leaked: run.leaked,
            failure: run.failure.as_ref().map(|f| f.kind),
            failure_message: run.failure.as_ref().map(|f| f.message.clone()),
            policy: run.policy,
            result: run.result,
            decision: run.outcome.decision,
            trust: None,
            refusals: run.warnings.clone(),
            stdin: None,
            stdout: None,
        }
    }
}

impl RunSpan {
    /// Adds `run`'s stdin and stdout (for a configuration that opts into payloads).
    pub fn with_payloads(mut self, run: &HookRun) -> RunSpan {
        self.stdin = Some(run.stdin.clone());
        self.stdout = Some(run.stdout.clone());
        self
    }
}

/// A one-line summary of a tool input or prompt for [`GateSpan::input_summary`]:
/// a string as is, anything else as compact JSON; whitespace runs (newlines
/// included) become one space; every secret shape the audit store redacts is
/// replaced by `[REDACTED:<kind>]`; at most [`SUMMARY_CAP`] characters (then `…`).
///
/// Its cost is bounded whatever the input's size: a large value is serialized only
/// as far as the summary can use.
pub fn summary(value: &Value) -> String {
    match value {
        Value::String(s) => one_line(s, SUMMARY_CAP),
        other => {
            let mut prefix = Prefix {
                bytes: Vec::new(),
                cap: window(SUMMARY_CAP),
            };
            // Stops with an error once the prefix is full; what was written is kept.
            let _ = serde_json::to_writer(&mut prefix, other);
            one_line(&String::from_utf8_lossy(&prefix.bytes), SUMMARY_CAP)
        }
    }
}

/// A writer that keeps the first `cap` bytes and then refuses more.
struct Prefix {
    bytes: Vec<u8>,
    cap: usize,
}

impl std::io::Write for Prefix {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.cap.saturating_sub(self.bytes.len());
        if room == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        let n = buf.len().min(room);
        self.bytes.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// How much of a text is looked at for a line of `cap` characters: enough for the
/// cap plus the longest secret shape that could straddle the cut (a private key
/// block; 4 KiB covers it).
fn window(cap: usize) -> usize {
    cap.saturating_mul(4).saturating_add(4096)
}

/// `text` as one line (whitespace and control characters collapsed to single
/// spaces), redacted, at most `cap` characters with `…` marking a cut.
///
/// Redaction runs on a bounded prefix (enough for `cap` characters plus the longest
/// secret shape that could straddle the cut), so a secret cut by the cap is still
/// caught, and a megabyte of input costs no more than a kilobyte.
pub(crate) fn one_line(text: &str, cap: usize) -> String {
    let window = window(cap);
    let mut line = String::with_capacity(text.len().min(window));
    let mut space = false;
    for c in text.chars() {
        if line.len() >= window {
            break;
        }
        if c.is_whitespace() || c.is_control() {
            space = !line.is_empty();
            continue;
        }
        if space {
            line.push(' ');
            space = false;
        }
        line.push(c);
    }
    let mut bytes = line.into_bytes();
    redact_bytes(&mut bytes);
    let line = String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    match line.char_indices().nth(cap) {
        None => line,
        Some((cut, _)) => {
            let mut out = line[..cut].to_owned();
            out.push('…');
            out
        }
    }
}

/// A payload body as exported: lossy UTF-8, every secret shape redacted, at most
/// `cap` characters (`…` marks a cut). Line breaks are kept.
pub(crate) fn payload_text(bytes: &[u8], cap: usize) -> String {
    let mut head = bytes[..bytes.len().min(window(cap))].to_vec();
    redact_bytes(&mut head);
    let text = String::from_utf8_lossy(&head);
    match text.char_indices().nth(cap) {
        None => text.into_owned(),
        Some((cut, _)) => {
            let mut out = text[..cut].to_owned();
            out.push('…');
            out
        }
    }
}

/// A fresh trace id.
pub fn new_trace_id() -> TraceId {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&nonzero_random().to_be_bytes());
    id[8..].copy_from_slice(&nonzero_random().to_be_bytes());
    id
}

/// A fresh span id.
pub fn new_span_id() -> SpanId {
    nonzero_random().to_be_bytes()
}

/// 64 unpredictable, never-zero bits without a system call: SipHash, keyed once
/// per process from the OS's randomness (`RandomState`), of a counter and the
/// clock.
fn nonzero_random() -> u64 {
    static KEY: OnceLock<std::collections::hash_map::RandomState> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let key = KEY.get_or_init(std::collections::hash_map::RandomState::new);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut h = key.build_hasher();
    h.write_u64(n);
    h.write_u128(nanos);
    h.finish().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_are_one_redacted_capped_line() {
        assert_eq!(
            summary(&json!({"command": "git  push\n--force"})),
            r#"{"command":"git push\n--force"}"#
        );
        assert_eq!(summary(&json!("rm -rf\n\t /tmp/x")), "rm -rf /tmp/x");
        let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
        let s = summary(&json!(format!("curl -H 'x-api-key: {key}' https://x")));
        assert!(!s.contains("abcdefghij"), "{s}");
        assert!(s.contains("[REDACTED:anthropic]"), "{s}");
        let long = "é".repeat(500);
        let s = summary(&json!(long));
        assert_eq!(s.chars().count(), SUMMARY_CAP + 1);
        assert!(s.ends_with('…'));
        // A secret straddling the cap is still redacted, not cut into a fragment.
        let text = format!("{} {key}", "a".repeat(SUMMARY_CAP - 10));
        let s = summary(&json!(text));
        assert!(!s.contains("sk-ant-api03"), "{s}");
    }

    #[test]
    fn a_huge_input_is_summarized_from_its_beginning() {
        let big = json!({"file_path": "/x", "content": "y".repeat(10 << 20)});
        let s = summary(&big);
        assert!(s.starts_with(r#"{"file_path":"/x","content":"yyy"#), "{s}");
        assert_eq!(s.chars().count(), SUMMARY_CAP + 1);
    }

    #[test]
    fn ids_are_distinct_and_nonzero() {
        let a = new_trace_id();
        let b = new_trace_id();
        assert_ne!(a, b);
        assert_ne!(a, [0; 16]);
        assert_ne!(new_span_id(), new_span_id());
    }
}
