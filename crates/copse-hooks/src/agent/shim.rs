//! The shim's engine side: one agent call, run through an engine, with the session's
//! state carried between calls.
//!
//! [`handle`] is what both backends run: in-process (a short-lived `copse-hooks shim`
//! process) today, and inside the user daemon once it serves shim calls. Every event
//! is awaited here — the agent waits for the shim anyway, and a short-lived process
//! cannot leave detached hooks behind — and its runs are recorded in the audit store
//! under the agent's session id.

use std::path::PathBuf;

use super::state::{Locked, Pending, StateError, state_path};
use super::{Agent, Inbound, Reply};
use crate::engine::{Engine, EngineConfig};
use crate::event::{CanonicalEvent, EventPayload, HostIdentity, SessionIdentity};
use crate::queue::DEFAULT_CONTINUATION_BUDGET;

/// Why a shim call could not be served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShimError {
    /// The session state could not be read or written.
    #[error(transparent)]
    State(#[from] StateError),
}

/// Runs one agent call through an engine built from `config` (its `locations` and
/// roots already chosen by the caller), with the session state under
/// `config.copse_dir`.
pub fn handle(
    agent: Agent,
    inbound: &Inbound,
    mut config: EngineConfig,
) -> Result<Reply, ShimError> {
    let Some(event) = inbound.event.clone() else {
        return Ok(Reply::default());
    };
    let copse_dir = config.copse_dir.clone();
    let canonical = event.event();
    if canonical == CanonicalEvent::SessionEnd {
        let reply = run_hooks_only(&event, inbound, config);
        // The session is over: its state goes (an agent that resumes it starts afresh).
        if !inbound.session_id.is_empty() {
            let path = state_path(&copse_dir, agent, &inbound.session_id);
            let _ = std::fs::remove_file(&path);
            let _ = std::fs::remove_file(path.with_extension("lock"));
        }
        return Ok(reply);
    }
    if !needs_state(canonical) && !any_hook_applies(&event, inbound, &config) {
        // The common case: nothing to run, nothing to remember. No audit store, no
        // session state.
        return Ok(Reply::default());
    }
    let path = (!inbound.session_id.is_empty())
        .then(|| state_path(&config.copse_dir, agent, &inbound.session_id));
    // Read the state, then let go of the lock while hooks run.
    let before = match &path {
        Some(p) => Locked::open(p)?.state,
        None => Default::default(),
    };
    if canonical != CanonicalEvent::SessionStart {
        config
            .environment
            .extend(before.env.iter().map(|(k, v)| (k.into(), v.into())));
    }
    let engine = Engine::new(config);
    let identity = SessionIdentity {
        conversation_id: inbound.session_id.clone(),
        generation_id: inbound.generation_id.clone().unwrap_or_default(),
        model: None,
        host: HostIdentity::default(),
    };
    let session = engine.session(identity);
    let mut event = event;
    if let EventPayload::AfterToolUse(result) = &mut event {
        crate::event::cap_tool_output(&mut result.output);
    }
    let verdict = session.fire_blocking(&event);
    engine.flush_spine();
    let notices: Vec<String> = session
        .take_notices()
        .iter()
        .map(|n| n.message.clone())
        .collect();

    let Some(path) = path else {
        return Ok(Reply {
            verdict,
            followups: Vec::new(),
            notices,
        });
    };
    let changes_state = needs_state(canonical)
        || !notices.is_empty()
        || verdict
            .runs
            .iter()
            .any(|r| r.outcome.queue_message.is_some() || r.outcome.session_env.is_some());
    if !changes_state {
        return Ok(Reply {
            verdict,
            followups: Vec::new(),
            notices,
        });
    }
    let mut locked = Locked::open(&path)?;
    let state = &mut locked.state;
    if canonical == CanonicalEvent::BeforeSubmitPrompt {
        // A human prompt: a new turn tree and a fresh continuation budget.
        state.epoch += 1;
        state.used = 0;
    }
    if canonical == CanonicalEvent::SessionStart {
        state.env.clear();
    }
    for run in &verdict.runs {
        if canonical == CanonicalEvent::SessionStart
            && let Some(vars) = &run.outcome.session_env
        {
            state.env.extend(vars.clone());
        }
        if let Some(q) = &run.outcome.queue_message {
            state.pending.push(Pending {
                text: q.text.clone(),
                epoch: state.epoch,
            });
        }
    }
    let mut followups = Vec::new();
    let completed = match &event {
        EventPayload::Stop { status } => status == "completed",
        EventPayload::SubagentStop { status, .. } => status == "completed",
        _ => false,
    };
    if completed {
        let mut kept = Vec::new();
        for p in std::mem::take(&mut state.pending) {
            if state.used < DEFAULT_CONTINUATION_BUDGET {
                state.used += 1;
                followups.push(p.text);
            } else {
                kept.push(p);
            }
        }
        state.pending = kept;
    }
    let notices: Vec<String> = notices
        .into_iter()
        .filter(|n| !state.announced.contains(n))
        .collect();
    state.announced.extend(notices.iter().cloned());
    locked.save()?;
    Ok(Reply {
        verdict,
        followups,
        notices,
    })
}

/// Runs an event's hooks with no session state (session end).
fn run_hooks_only(event: &EventPayload, inbound: &Inbound, config: EngineConfig) -> Reply {
    if !any_hook_applies(event, inbound, &config) {
        return Reply::default();
    }
    let engine = Engine::new(config);
    let session = engine.session(SessionIdentity {
        conversation_id: inbound.session_id.clone(),
        generation_id: inbound.generation_id.clone().unwrap_or_default(),
        model: None,
        host: HostIdentity::default(),
    });
    let verdict = session.fire_blocking(event);
    engine.flush_spine();
    Reply {
        verdict,
        followups: Vec::new(),
        notices: session
            .take_notices()
            .iter()
            .map(|n| n.message.clone())
            .collect(),
    }
}

/// Events whose session state matters even when no hook runs: a human prompt starts a
/// turn tree, a session start resets the environment, a stop hands follow-ups back.
fn needs_state(canonical: CanonicalEvent) -> bool {
    matches!(
        canonical,
        CanonicalEvent::BeforeSubmitPrompt
            | CanonicalEvent::SessionStart
            | CanonicalEvent::Stop
            | CanonicalEvent::SubagentStop
    )
}

/// Whether any hook would run for this event (or a config needs a notice), checked
/// with an engine that opens no audit store.
fn any_hook_applies(event: &EventPayload, inbound: &Inbound, config: &EngineConfig) -> bool {
    let mut probe = config.clone();
    probe.spine_path = None;
    let engine = Engine::new(probe);
    if !engine.hooks_active() {
        return false;
    }
    let identity = SessionIdentity {
        conversation_id: inbound.session_id.clone(),
        generation_id: inbound.generation_id.clone().unwrap_or_default(),
        model: None,
        host: HostIdentity::default(),
    };
    let ctx = crate::dialect::Context {
        session: &identity,
        workspace_roots: engine.workspace_roots(),
    };
    let mut changed = false;
    let selected = engine.select(event, &ctx, &mut |_| changed = true, &mut |_| {});
    changed || !selected.is_empty()
}

/// The canonicalised form of each root that exists.
pub fn canonical_roots(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .filter_map(|r| std::fs::canonicalize(r).ok())
        .collect()
}
