//! The runner: one hook end to end, and the failure policy.
//!
//! marshal (adapter) → spawn → interpret (adapter) → policy. The runner knows the
//! adapter interface, not any dialect. Spawn failures, timeouts and oversize output
//! are failures in every dialect and are classified here; everything else about the
//! exit code and stdout is the dialect's to read.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::time::{Duration, Instant, SystemTime};

use crate::dialect::{Adapter, Context, HookSpec, ProcessResult, seconds};
use crate::env::{DEPTH_VAR, set_var};
use crate::event::{CanonicalEvent, EventPayload};
use crate::outcome::{
    Decision, Failure, FailureKind, FailurePolicy, Halt, HookRun, Outcome, RunOutcome,
};
use crate::spawn::{self, Limits, SpawnRequest, Termination};

/// Everything one run needs besides the hook.
pub(crate) struct RunInput<'a> {
    pub event: &'a EventPayload,
    pub ctx: Context<'a>,
    /// The scrubbed parent environment.
    pub base_env: &'a [(OsString, OsString)],
    /// The session's environment overlay (from sessionStart hooks).
    pub session_env: Option<&'a BTreeMap<String, String>>,
    /// The depth the child gets.
    pub child_depth: u32,
    /// Output caps and grace periods.
    pub limits: Limits,
}

/// The stdin bytes for a hook.
pub(crate) fn marshal(adapter: &dyn Adapter, hook: &HookSpec, input: &RunInput<'_>) -> Vec<u8> {
    let value = adapter.marshal(hook, input.event, &input.ctx);
    // Serialising a `Value` cannot fail (all keys are strings).
    serde_json::to_vec(&value).unwrap_or_default()
}

/// The environment for a hook: scrubbed base, session overlay, vendor variables, and
/// the depth variable last so nothing can clobber it.
pub(crate) fn environment(
    adapter: &dyn Adapter,
    hook: &HookSpec,
    input: &RunInput<'_>,
) -> Vec<(OsString, OsString)> {
    let mut env = input.base_env.to_vec();
    if let Some(overlay) = input.session_env {
        for (k, v) in overlay {
            set_var(&mut env, k, v);
        }
    }
    for (k, v) in adapter.vendor_env(hook, &input.ctx) {
        set_var(&mut env, &k, v);
    }
    set_var(&mut env, DEPTH_VAR, input.child_depth.to_string());
    env
}

/// Runs one hook and returns its record (with the failure policy applied).
pub(crate) fn run(
    adapter: &dyn Adapter,
    hook: &HookSpec,
    input: &RunInput<'_>,
    stdin: Vec<u8>,
) -> HookRun {
    let env = environment(adapter, hook, input);
    let cwd = adapter.cwd(hook, &input.ctx);
    let started = Instant::now();
    let started_at = SystemTime::now();
    let request = SpawnRequest {
        command: &hook.command,
        cwd: &cwd,
        env: &env,
        stdin: &stdin,
        timeout: hook.timeout,
        limits: input.limits,
        child_setup: None,
    };
    let spawned = spawn::run(&request);
    let mut record = HookRun {
        event: hook.event.clone(),
        canonical: input.event.event(),
        dialect: hook.dialect,
        command: hook.command.clone(),
        source: hook.source.clone(),
        scope: hook.scope,
        started_at,
        duration: Duration::ZERO,
        exit_code: None,
        parse_ok: false,
        failure: None,
        policy: hook.policy,
        outcome: Outcome::default(),
        result: RunOutcome::None,
        stdin,
        stdout: Vec::new(),
        stderr: Vec::new(),
    };
    let interpretation = match spawned {
        Err(e) => {
            record.duration = started.elapsed();
            crate::dialect::Interpretation::failed(
                FailureKind::Spawn,
                format!("failed to start: {e}"),
                false,
            )
        }
        Ok(out) => {
            record.started_at = out.started_at;
            record.duration = out.duration;
            record.exit_code = out.exit_code;
            let interpretation = match out.termination {
                Termination::TimedOut => crate::dialect::Interpretation::failed(
                    FailureKind::Timeout,
                    format!("timed out after {}", seconds(hook.timeout)),
                    false,
                ),
                Termination::StdoutOverflow => crate::dialect::Interpretation::failed(
                    FailureKind::Oversize,
                    format!(
                        "printed more than {} bytes on stdout",
                        input.limits.stdout_cap
                    ),
                    false,
                ),
                Termination::Exited => adapter.interpret(
                    hook,
                    input.event,
                    &ProcessResult {
                        exit_code: out.exit_code,
                        signal: out.signal,
                        stdout: &out.stdout,
                        stderr: &out.stderr,
                    },
                ),
            };
            record.stdout = out.stdout;
            record.stderr = out.stderr;
            interpretation
        }
    };
    record.parse_ok = interpretation.parse_ok;
    match interpretation.failure {
        Some(failure) => {
            record.outcome = policy_outcome(hook, input.event, &failure);
            record.failure = Some(failure);
            record.result = RunOutcome::Failed;
        }
        None => {
            record.result = label(&interpretation.outcome);
            record.outcome = interpretation.outcome;
        }
    }
    record
}

/// What a failure becomes: a deny naming the hook and the problem when the hook fails
/// closed on a gated event (a halt too, for a prompt submission), otherwise nothing.
pub(crate) fn policy_outcome(hook: &HookSpec, event: &EventPayload, failure: &Failure) -> Outcome {
    if hook.policy == FailurePolicy::Closed && event.event().is_gated() {
        let message = format!(
            "hook \"{}\" {} — blocked because the hook fails closed",
            hook.command, failure.message
        );
        Outcome {
            decision: Some(Decision::Deny),
            halt: (event.event() == CanonicalEvent::BeforeSubmitPrompt).then(|| Halt {
                reason: message.clone(),
            }),
            agent_message: Some(message),
            ..Outcome::default()
        }
    } else {
        Outcome::default()
    }
}

/// A run whose supervising thread panicked: recorded as a spawn failure under the
/// hook's policy, so a bug here can never loosen a fail-closed gate.
pub(crate) fn panicked_run(hook: &HookSpec, event: &EventPayload) -> HookRun {
    let failure = Failure {
        kind: FailureKind::Spawn,
        message: "could not be supervised (internal error)".to_string(),
    };
    HookRun {
        event: hook.event.clone(),
        canonical: event.event(),
        dialect: hook.dialect,
        command: hook.command.clone(),
        source: hook.source.clone(),
        scope: hook.scope,
        started_at: SystemTime::now(),
        duration: Duration::ZERO,
        exit_code: None,
        parse_ok: false,
        outcome: policy_outcome(hook, event, &failure),
        failure: Some(failure),
        policy: hook.policy,
        result: RunOutcome::Failed,
        stdin: Vec::new(),
        stdout: Vec::new(),
        stderr: Vec::new(),
    }
}

/// The short label of a clean outcome.
pub(crate) fn label(outcome: &Outcome) -> RunOutcome {
    if outcome.halt.is_some() {
        return RunOutcome::Deny;
    }
    match outcome.decision {
        Some(Decision::Allow) => RunOutcome::Allow,
        Some(Decision::Ask) => RunOutcome::Ask,
        Some(Decision::Deny) => RunOutcome::Deny,
        None => RunOutcome::None,
    }
}
