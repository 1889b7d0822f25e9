//! Detached runs: observation events, and the hooks of an awaited event that opted
//! into `async`. Each captures the session identity and epoch by value at dispatch
//! and runs through the same execute door as a blocking run, on the session's
//! bounded dispatcher.

use std::sync::Arc;
use std::time::SystemTime;

use super::{Fired, Session, Verbatim, lock, record, schedule};
use crate::dialect::Context;
use crate::dispatcher::Dispatched;
use crate::dropped::DroppedRun;
use crate::event::{CanonicalEvent, EventPayload, SessionIdentity};
use crate::selected::Selected;

impl Session {
    pub(super) fn fire_detached(&self, event: EventPayload) -> Fired {
        if !self.engine.hooks_active() {
            return Fired::Detached {
                dispatched: 0,
                dropped: 0,
            };
        }
        let identity = self.identity();
        let plan = {
            let ctx = Context {
                session: &identity,
                workspace_roots: self.engine.workspace_roots(),
            };
            self.plan(&event, &ctx)
        };
        self.dispatch_detached(event, plan.hooks, plan.http_policy, None, None)
    }

    /// Dispatches selected hooks detached, capturing the identity and epoch now (and
    /// the agent's own bytes, `verbatim`, for the hooks that get them); `trace` names
    /// the span of the gate they belong to, when it has one.
    pub(super) fn dispatch_detached(
        &self,
        event: EventPayload,
        selected: Vec<Selected>,
        http_policy: Option<crate::http::HttpPolicy>,
        verbatim: Option<Verbatim>,
        trace: Option<record::GateTrace>,
    ) -> Fired {
        let identity = self.identity();
        let canonical = event.event();
        if canonical == CanonicalEvent::SessionStart {
            self.session_start_begins(&selected);
        }
        let epoch = lock(&self.state.queue).epoch();
        let event = Arc::new(event);
        let identity = Arc::new(identity);
        let http_policy = http_policy.map(Arc::new);
        let (mut dispatched, mut dropped) = (0, 0);
        for s in selected {
            let task = DetachedRun {
                session: self.clone(),
                selected: s.clone(),
                event: Arc::clone(&event),
                identity: Arc::clone(&identity),
                http_policy: http_policy.clone(),
                verbatim: verbatim.clone(),
                epoch,
                trace,
            };
            match self.state.dispatcher.dispatch(move || task.run()) {
                Dispatched::Running | Dispatched::Pending => dispatched += 1,
                Dispatched::Dropped => {
                    dropped += 1;
                    let hook = s.hook();
                    let drop = DroppedRun {
                        event: hook.event.clone(),
                        canonical,
                        dialect: hook.dialect,
                        command: hook.command.clone(),
                        source: hook.source.clone(),
                        scope: hook.scope,
                        at: SystemTime::now(),
                    };
                    if let Some(spine) = self.engine.spine() {
                        spine.record(crate::spine::RunRecord::dropped(
                            &drop,
                            self.audit_id(&identity),
                            &identity.generation_id,
                        ));
                    }
                    lock(&self.state.drops).push(drop);
                    if canonical == CanonicalEvent::SessionStart {
                        self.session_start_finished();
                    }
                }
            }
        }
        Fired::Detached {
            dispatched,
            dropped,
        }
    }
}

/// One detached hook run, with everything captured by value at dispatch.
struct DetachedRun {
    session: Session,
    selected: Selected,
    event: Arc<EventPayload>,
    identity: Arc<SessionIdentity>,
    http_policy: Option<Arc<crate::http::HttpPolicy>>,
    /// The agent's own bytes, for a hook of its dialect and wire event.
    verbatim: Option<Verbatim>,
    epoch: u64,
    /// The span of the gate this run belongs to, when it has one (exported).
    trace: Option<record::GateTrace>,
}

impl DetachedRun {
    fn run(self) {
        let session = &self.session;
        let canonical = self.event.event();
        session.wait_for_session_start(canonical);
        let env = lock(&session.state.env).clone();
        let ctx = Context {
            session: &self.identity,
            workspace_roots: session.engine.workspace_roots(),
        };
        let input =
            session
                .engine
                .run_input(&self.event, ctx, Some(&env), self.http_policy.as_deref());
        let mut run = schedule::execute(&self.selected, &input, self.verbatim.as_ref());
        let hook = self.selected.hook();
        if canonical == CanonicalEvent::SessionStart {
            let accepted = record::accepted_overlay(&mut run);
            lock(&session.state.env).extend(hook.scope, hook.root.as_deref(), accepted);
        }
        if let Some(q) = &run.outcome.queue_message {
            session.enqueue(hook, q, self.epoch);
        }
        let adapter = crate::discovery::adapter(hook.dialect);
        if let Some(q) = adapter.detached_message(hook, &run) {
            session.enqueue(hook, &q, self.epoch);
        }
        // A halt is handed to the host (`take_halt`) when the dialect's halts stop the
        // agent from a detached hook; a decision cannot apply to an action that already
        // happened, so it is recorded as suppressed (and so is a halt that cannot stop).
        let halts = adapter.detached_halts();
        if let Some(h) = run.outcome.halt.as_ref().filter(|_| halts) {
            lock(&session.state.halt).get_or_insert_with(|| h.clone());
        }
        let suppressed = run.outcome.decision.is_some() || (run.outcome.halt.is_some() && !halts);
        session.record_as(&run, &self.identity, suppressed);
        session.export_detached(
            &self.event,
            &self.identity,
            hook,
            &run,
            self.trace,
            self.verbatim.as_ref().map(Verbatim::wire_event),
        );
        if session.engine.keeps_runs() {
            lock(&session.state.runs).push(run);
        }
        if canonical == CanonicalEvent::SessionStart {
            session.session_start_finished();
        }
    }
}
