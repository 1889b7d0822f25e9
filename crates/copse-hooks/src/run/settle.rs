//! Settle: an interpretation into the run record, with the failure policy applied
//! once for every transport.

use crate::dialect::{HookSpec, Interpretation};
use crate::event::{CanonicalEvent, EventPayload};
use crate::outcome::{
    Decision, Failure, FailureKind, FailurePolicy, Halt, HookRun, Outcome, RunOutcome,
};

/// What a failure becomes: a deny naming the hook and the problem when the hook fails
/// closed on a gated event (a halt too, for a prompt submission), otherwise nothing.
pub(crate) fn policy_outcome(
    hook: &HookSpec,
    policy: FailurePolicy,
    event: &EventPayload,
    failure: &Failure,
) -> Outcome {
    if policy == FailurePolicy::Closed && event.event().is_gated() {
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
pub(crate) fn panicked_run(
    hook: &HookSpec,
    event: &EventPayload,
    settings: &std::collections::BTreeMap<String, FailurePolicy>,
) -> HookRun {
    let policy = crate::dialect::effective_policy(hook, settings);
    let mut record = blank_run(hook, event, policy, Vec::new());
    settle(
        &mut record,
        hook,
        policy,
        event,
        Interpretation::failed(
            FailureKind::Spawn,
            "could not be supervised (internal error)",
            false,
        ),
    );
    record
}

/// The record of a run of `hook` for `event` that has done nothing yet (started now,
/// no output, not parsed, not sandboxed), under `policy` with `stdin` as sent.
pub(crate) fn blank_run(
    hook: &HookSpec,
    event: &EventPayload,
    policy: FailurePolicy,
    stdin: Vec<u8>,
) -> HookRun {
    let mut record = HookRun::new(
        hook.event.clone(),
        event.event(),
        hook.dialect,
        hook.command.clone(),
        hook.source.clone(),
        hook.scope,
    );
    record.parse_ok = false;
    record.policy = policy;
    record.stdin = stdin;
    record
}

/// Puts an interpretation into the run record: a failure settles by the failure
/// policy, a clean run keeps what the hook said.
pub(crate) fn settle(
    record: &mut HookRun,
    hook: &HookSpec,
    policy: FailurePolicy,
    event: &EventPayload,
    interpretation: Interpretation,
) {
    record.parse_ok = interpretation.parse_ok;
    match interpretation.failure {
        Some(failure) => {
            record.outcome = policy_outcome(hook, policy, event, &failure);
            record.failure = Some(failure);
            record.result = RunOutcome::Failed;
        }
        None => {
            record.result = label(&interpretation.outcome);
            record.outcome = interpretation.outcome;
        }
    }
}

/// The short label of a clean outcome.
fn label(outcome: &Outcome) -> RunOutcome {
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
