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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::{blank_run, panicked_run, policy_outcome, settle};
    use crate::dialect::Interpretation;
    use crate::event::EventPayload;
    use crate::outcome::{
        Decision, Failure, FailureKind, FailurePolicy, Halt, Outcome, RunOutcome,
    };
    use crate::run::testing::{Fixture, first, shell_gate};

    fn timed_out() -> Failure {
        Failure {
            kind: FailureKind::Timeout,
            message: "timed out after 1s".to_string(),
        }
    }

    fn prompt() -> EventPayload {
        EventPayload::BeforeSubmitPrompt {
            prompt: "hi".to_string(),
        }
    }

    fn edit() -> EventPayload {
        EventPayload::AfterFileEdit {
            file_path: "/w/a.rs".to_string(),
            edits: Vec::new(),
        }
    }

    fn stop() -> EventPayload {
        EventPayload::Stop {
            status: "completed".to_string(),
        }
    }

    #[test]
    fn a_closed_failure_on_a_gate_denies_naming_the_hook() {
        let fx = Fixture::new();
        let config = fx.copse_gate(json!({"command": "./guard.sh"}));
        let hook = first(&config);
        let outcome = policy_outcome(hook, FailurePolicy::Closed, &shell_gate("ls"), &timed_out());
        assert_eq!(outcome.decision, Some(Decision::Deny));
        assert_eq!(
            outcome.agent_message.as_deref(),
            Some("hook \"./guard.sh\" timed out after 1s — blocked because the hook fails closed")
        );
        assert_eq!(outcome.halt, None, "a tool gate is denied, not halted");
        for gated in [
            EventPayload::SubagentStart {
                subagent_type: "explore".to_string(),
            },
            EventPayload::PermissionRequest(crate::event::ToolCall::new(
                "run_shell",
                json!({"command": "ls"}),
            )),
        ] {
            let outcome = policy_outcome(hook, FailurePolicy::Closed, &gated, &timed_out());
            assert_eq!(
                outcome.decision,
                Some(Decision::Deny),
                "{:?}",
                gated.event()
            );
        }
    }

    #[test]
    fn a_closed_failure_on_a_prompt_submission_also_halts() {
        let fx = Fixture::new();
        let config = fx.copse(json!({"beforeSubmitPrompt": [{"command": "./p.sh"}]}));
        let outcome = policy_outcome(
            first(&config),
            FailurePolicy::Closed,
            &prompt(),
            &timed_out(),
        );
        assert_eq!(outcome.decision, Some(Decision::Deny));
        let message = outcome.agent_message.clone().unwrap();
        assert!(
            message.starts_with("hook \"./p.sh\" timed out"),
            "{message}"
        );
        assert_eq!(outcome.halt, Some(Halt { reason: message }));
    }

    #[test]
    fn an_open_failure_or_an_observation_event_is_no_opinion() {
        let fx = Fixture::new();
        let config = fx.copse_gate(json!({"command": "./guard.sh"}));
        let hook = first(&config);
        for (policy, event) in [
            (FailurePolicy::Open, shell_gate("ls")),
            (FailurePolicy::Open, prompt()),
            (FailurePolicy::Closed, edit()),
            (FailurePolicy::Closed, stop()),
            (FailurePolicy::Open, stop()),
        ] {
            let outcome = policy_outcome(hook, policy, &event, &timed_out());
            assert!(
                outcome.is_empty(),
                "{policy:?} on {:?}: {outcome:?}",
                event.event()
            );
        }
    }

    #[test]
    fn settling_a_failure_records_it_and_applies_the_policy() {
        let fx = Fixture::new();
        let config = fx.copse_gate(json!({"command": "./guard.sh"}));
        let hook = first(&config);
        let event = shell_gate("ls");
        for (policy, decision) in [
            (FailurePolicy::Closed, Some(Decision::Deny)),
            (FailurePolicy::Open, None),
        ] {
            let mut record = blank_run(hook, &event, policy, b"{}".to_vec());
            // What the hook said before failing never survives the failure.
            let mut interpretation =
                Interpretation::failed(FailureKind::Exit, "exited with code 3", true);
            interpretation.outcome = Outcome::decision(Decision::Allow);
            settle(&mut record, hook, policy, &event, interpretation);
            assert_eq!(record.result, RunOutcome::Failed);
            assert_eq!(record.outcome.decision, decision, "{policy:?}");
            assert_eq!(
                record.failure.as_ref().map(|f| f.kind),
                Some(FailureKind::Exit)
            );
            assert!(record.parse_ok);
            assert_eq!(record.policy, policy);
            assert_eq!(record.stdin, b"{}");
        }
    }

    #[test]
    fn settling_a_clean_answer_keeps_it_and_labels_it() {
        let fx = Fixture::new();
        let config = fx.copse_gate(json!({"command": "./guard.sh"}));
        let hook = first(&config);
        let event = shell_gate("ls");
        let halted = Outcome {
            halt: Some(Halt {
                reason: "stop".to_string(),
            }),
            ..Outcome::default()
        };
        for (outcome, label) in [
            (Outcome::default(), RunOutcome::None),
            (Outcome::decision(Decision::Allow), RunOutcome::Allow),
            (Outcome::decision(Decision::Ask), RunOutcome::Ask),
            (Outcome::decision(Decision::Deny), RunOutcome::Deny),
            (halted, RunOutcome::Deny),
        ] {
            let mut record = blank_run(hook, &event, FailurePolicy::Closed, Vec::new());
            assert!(!record.parse_ok, "a blank run has parsed nothing yet");
            settle(
                &mut record,
                hook,
                FailurePolicy::Closed,
                &event,
                Interpretation::ok(outcome.clone()),
            );
            assert_eq!(record.result, label, "{outcome:?}");
            assert_eq!(record.outcome, outcome);
            assert!(record.failure.is_none());
            assert!(record.parse_ok);
        }
    }

    #[test]
    fn a_panicked_run_is_a_spawn_failure_under_the_hooks_effective_policy() {
        let fx = Fixture::new();
        let event = shell_gate("ls");
        let default = fx.copse_gate(json!({"command": "./guard.sh"}));
        let written = fx.copse_gate(json!({"command": "./guard.sh", "onFailure": "closed"}));

        let run = panicked_run(first(&default), &event, &BTreeMap::new());
        assert_eq!(run.result, RunOutcome::Failed);
        let failure = run.failure.clone().unwrap();
        assert_eq!(failure.kind, FailureKind::Spawn);
        assert_eq!(failure.message, "could not be supervised (internal error)");
        assert_eq!(run.policy, FailurePolicy::Closed);
        assert_eq!(
            run.outcome.decision,
            Some(Decision::Deny),
            "Copse fails closed"
        );
        assert!(run.stdin.is_empty());

        // The per-dialect setting opens a hook that leaves its policy to the host …
        let settings = BTreeMap::from([("copse".to_string(), FailurePolicy::Open)]);
        let run = panicked_run(first(&default), &event, &settings);
        assert_eq!(run.policy, FailurePolicy::Open);
        assert_eq!(run.outcome.decision, None);
        assert_eq!(run.result, RunOutcome::Failed);
        // … never one whose config wrote its own.
        let run = panicked_run(first(&written), &event, &settings);
        assert_eq!(run.policy, FailurePolicy::Closed);
        assert_eq!(run.outcome.decision, Some(Decision::Deny));
    }
}
