//! Record: what a session keeps of each run — the audit store, the notices a user
//! hears once, the messages hooks queue — and the plan's notices.

use std::collections::BTreeMap;

use super::{Session, lock};
use crate::dialect::{Context, Scope};
use crate::engine::Plan;
use crate::event::{CanonicalEvent, EventPayload, SessionIdentity};
use crate::notice::{Notice, NoticeKind};
use crate::outcome::HookRun;
use crate::queue::{MessageOrigin, QueuedMessage};

impl Session {
    /// Records a run in the audit store (never blocks on the disk), and says once per
    /// session when the sandbox is not enforced.
    pub(super) fn record(&self, run: &HookRun, identity: &SessionIdentity) {
        self.record_as(run, identity, false);
    }

    pub(super) fn record_as(&self, run: &HookRun, identity: &SessionIdentity, suppressed: bool) {
        if run.sandbox == crate::outcome::SandboxState::Unenforced {
            let reason = self
                .engine
                .sandbox_status()
                .map(|s| s.enforcement.to_string())
                .unwrap_or_default();
            self.notice_once(
                "sandbox-unenforced".to_string(),
                Notice::new(
                    NoticeKind::SandboxUnenforced,
                    format!("the OS sandbox is not enforced on this machine ({reason}): hooks run unsandboxed"),
                )
                .hint("`copse-hooks sandbox check` shows what this kernel supports"),
            );
        }
        if let Some(spine) = self.engine.spine() {
            spine.record_run(
                run,
                self.audit_id(identity),
                &identity.generation_id,
                suppressed,
            );
        }
    }

    /// Queues a hook's message, produced in `epoch`.
    pub(super) fn enqueue(
        &self,
        hook: &crate::dialect::HookSpec,
        q: &crate::outcome::QueueRequest,
        epoch: u64,
    ) {
        let message = QueuedMessage {
            text: q.text.clone(),
            send_now: q.send_now,
            // Stop follow-ups wait for a human unless the host lets them continue
            // (still within the continuation budget).
            held: q.held && !self.engine.auto_continue_follow_ups(),
            epoch,
            origin: MessageOrigin {
                dialect: hook.dialect,
                event: hook.event.clone(),
                command: hook.command.clone(),
                source: hook.source.clone(),
                entry: hook.entry,
                canonical: hook.canonical,
            },
            loop_limit: hook.loop_limit,
        };
        let queued = {
            let mut queue = lock(&self.state.queue);
            queue.push(message);
            queue.items().last().cloned()
        };
        let listener = lock(&self.state.listener).clone();
        if let (Some(listener), Some(queued)) = (listener, queued) {
            (listener.0)(&queued);
        }
    }

    /// The plan for an event, noting (once per session) configs skipped because they
    /// changed since trusted, and project hooks about to run for the first time.
    pub(super) fn plan(&self, event: &EventPayload, ctx: &Context<'_>) -> Plan {
        let mut changed = Vec::new();
        let mut problems = Vec::new();
        let plan = self.engine.plan(
            event,
            ctx,
            &mut |path| changed.push(path.to_path_buf()),
            &mut |w| problems.push(w.clone()),
        );
        *lock(&self.state.problems) = problems;
        for path in changed {
            self.notice_once(
                format!("changed:{}", path.display()),
                crate::notice::config_changed(self.engine.workspace_roots(), &path),
            );
        }
        for s in &plan.hooks {
            let hook = s.hook();
            if hook.scope == Scope::Project {
                self.notice_once(
                    format!("project:{}\0{}", hook.source.display(), hook.command),
                    Notice::new(
                        NoticeKind::FirstRun,
                        format!(
                            "running project hook `{}` from {} (first run in this session)",
                            hook.command,
                            hook.source.display()
                        ),
                    )
                    .source(hook.source.clone()),
                );
            }
        }
        plan
    }

    pub(super) fn notice_once(&self, key: String, notice: Notice) {
        if lock(&self.state.announced).insert(key) {
            lock(&self.state.notices).push(notice);
        }
    }
}

/// The session environment variables a sessionStart run set that the overlay
/// accepts; each refused one is a warning on the run.
pub(super) fn accepted_overlay(run: &mut HookRun) -> BTreeMap<String, String> {
    let mut accepted = BTreeMap::new();
    let Some(vars) = run.outcome.session_env.clone() else {
        return accepted;
    };
    for (k, v) in vars {
        match crate::overlay::refusal(&k, &v) {
            None => {
                accepted.insert(k, v);
            }
            Some(why) => run
                .warnings
                .push(format!("session environment variable {k:?} dropped: {why}")),
        }
    }
    accepted
}

/// The ids of a gate's span, fixed before its runs start, so the hooks of the gate
/// that run detached can name it as their parent.
#[derive(Debug, Clone, Copy)]
pub(super) struct GateTrace {
    trace_id: crate::otel::TraceId,
    span_id: crate::otel::SpanId,
}

/// One blocking gate, as the record stage exports it.
pub(super) struct GateExport<'a> {
    pub event: &'a EventPayload,
    /// When the gate started.
    pub started: std::time::SystemTime,
    pub identity: &'a SessionIdentity,
    pub verdict: &'a crate::outcome::Verdict,
    /// The hooks that ran, in the verdict's (configured) order.
    pub selected: &'a [crate::selected::Selected],
    /// The ids fixed at the gate's start ([`Session::gate_trace`]).
    pub trace: Option<GateTrace>,
    /// The agent's own name for the event, when an agent sent it.
    pub vendor_event: Option<&'a str>,
}

impl Session {
    /// Fresh ids for a gate's span when gates are exported (nothing otherwise).
    pub(super) fn gate_trace(&self) -> Option<GateTrace> {
        self.engine.otel().map(|_| GateTrace {
            trace_id: crate::otel::new_trace_id(),
            span_id: crate::otel::new_span_id(),
        })
    }

    /// Hands the gate to the OTLP exporter (one try_send; never waits on the
    /// collector): a span for the event with a child per hook run.
    pub(super) fn export(&self, gate: &GateExport<'_>) {
        let Some(otel) = self.engine.otel() else {
            return;
        };
        let mut span = crate::otel::GateSpan::new(gate.event.event(), gate.started);
        if let Some(t) = gate.trace {
            span.trace_id = t.trace_id;
            span.span_id = t.span_id;
        }
        span.end = std::time::SystemTime::now();
        span.vendor_event = gate.vendor_event.map(str::to_owned);
        self.describe(
            &mut span,
            gate.event,
            gate.identity,
            otel.include_payloads(),
        );
        span.record_verdict(gate.verdict);
        let runs = gate.verdict.runs.iter().chain(
            gate.verdict
                .guard
                .iter()
                .filter(|r| !crate::gate::subsumed(r)),
        );
        for (i, (r, run)) in span.runs.iter_mut().zip(runs).enumerate() {
            // The verdict's runs are the selected hooks', in order; the guard's follow.
            if let Some(s) = gate
                .selected
                .get(i)
                .filter(|s| s.hook().command == run.command)
            {
                describe_run(r, s.hook());
            }
            if otel.include_payloads() {
                *r = r.clone().with_payloads(run);
            }
        }
        otel.gate(span);
    }

    /// Hands a detached run to the OTLP exporter: a child of the gate it belongs to
    /// when `trace` names it, else a root span of its own carrying the event.
    pub(super) fn export_detached(
        &self,
        event: &EventPayload,
        identity: &SessionIdentity,
        hook: &crate::dialect::HookSpec,
        run: &HookRun,
        trace: Option<GateTrace>,
        vendor_event: Option<&str>,
    ) {
        let Some(otel) = self.engine.otel() else {
            return;
        };
        let mut span = crate::otel::GateSpan::new(event.event(), run.started_at);
        span.end = run.started_at + run.duration;
        span.detached = true;
        span.vendor_event = vendor_event.map(str::to_owned);
        if let Some(t) = trace {
            span.trace_id = t.trace_id;
            span.parent = Some(t.span_id);
        }
        self.describe(&mut span, event, identity, otel.include_payloads());
        let mut r = crate::otel::RunSpan::from_run(run);
        describe_run(&mut r, hook);
        if otel.include_payloads() {
            r = r.with_payloads(run);
        }
        span.runs.push(r);
        otel.gate(span);
    }

    /// What the gate span says of the event and the session: the tool and its input
    /// summary (the input itself with payloads), the agent, the session ids, the
    /// audit chain's head.
    fn describe(
        &self,
        span: &mut crate::otel::GateSpan,
        event: &EventPayload,
        identity: &SessionIdentity,
        payloads: bool,
    ) {
        match event {
            EventPayload::ToolGate(call) | EventPayload::PermissionRequest(call) => {
                span.tool = Some(call.tool.clone());
                span.tool_use_id = Some(call.tool_use_id.clone()).filter(|t| !t.is_empty());
                let input = serde_json::Value::Object(call.input.clone());
                span.input_summary = Some(crate::otel::summary(&input));
                span.payload = payloads.then_some(input);
            }
            EventPayload::AfterToolUse(result) => {
                span.tool = Some(result.tool.clone());
                span.tool_use_id = Some(result.tool_call_id.clone()).filter(|t| !t.is_empty());
                let input = serde_json::Value::Object(result.input.clone());
                span.input_summary = Some(crate::otel::summary(&input));
                span.payload = payloads.then_some(input);
            }
            EventPayload::BeforeSubmitPrompt { prompt } => {
                let prompt = serde_json::Value::String(prompt.clone());
                span.input_summary = Some(crate::otel::summary(&prompt));
                span.payload = payloads.then_some(prompt);
            }
            _ => {}
        }
        span.agent.clone_from(&self.engine.config().agent);
        span.session_id = Some(self.audit_id(identity).to_string());
        span.conversation_id = Some(identity.conversation_id.clone()).filter(|c| !c.is_empty());
        span.turn_id = Some(identity.generation_id.clone()).filter(|t| !t.is_empty());
        span.chain_head = self
            .engine
            .spine()
            .and_then(crate::spine::Spine::chain_head)
            .map(|h| format!("{}:{}:{}", h.chain_id, h.seq, h.hash));
    }
}

/// What only the plan knows of a run: the configured timeout, and the trust state
/// (a hook that ran was trusted: the plan never runs a changed or untrusted config).
fn describe_run(r: &mut crate::otel::RunSpan, hook: &crate::dialect::HookSpec) {
    r.timeout = Some(hook.timeout);
    r.trust = Some(crate::scope::TrustState::Trusted);
}

/// The run that stands for a config whose hooks would have judged a gated event but
/// cannot run ([`crate::engine::Block`]): no process; it denies, naming the file and
/// the command that fixes it, so a guard that changed or was refused is a block.
pub(crate) fn block_run(
    block: &crate::engine::Block,
    wire_event: &str,
    canonical: CanonicalEvent,
    roots: &[std::path::PathBuf],
) -> HookRun {
    use crate::engine::BlockWhy;
    use crate::outcome::{Decision, RunOutcome};
    let file = block.file.display().to_string();
    let (command, agent, user) = match &block.why {
        BlockWhy::Changed => {
            let root = roots
                .iter()
                .filter(|r| block.file.starts_with(r))
                .max_by_key(|r| r.as_os_str().len())
                .cloned()
                .or_else(|| block.file.parent().map(std::path::Path::to_path_buf))
                .unwrap_or_else(|| block.file.clone());
            let root = crate::notice::shell_quote(&root);
            (
                "copse-hooks: changed since trusted",
                format!(
                    "Blocked: {file} changed since the workspace was trusted, so the hooks that guard this call cannot run. Ask the user to review the change with `copse-hooks trust --diff {root}` and trust it again with `copse-hooks trust {root}`; do not edit hook files to get past a hook."
                ),
                format!(
                    "copse-hooks blocked a call: {file} changed since the workspace was trusted. Review it with `copse-hooks trust --diff {root}`, then `copse-hooks trust {root}`."
                ),
            )
        }
        BlockWhy::TooDeep => (
            "copse-hooks: hook recursion",
            format!(
                "Blocked: this call comes from an agent started by a hook {} levels deep; managed hooks stop there, so nothing may run unchecked.",
                crate::env::MAX_MANAGED_DEPTH
            ),
            "copse-hooks blocked a call nested too deep in hooks that start agents.".to_string(),
        ),
        BlockWhy::Refused(r) => (
            "copse-hooks: refused config",
            format!(
                "Blocked: {file} {} so the hooks that guard this call cannot run. Ask the user to fix it with `{}`.",
                r.reason, r.fix
            ),
            format!(
                "copse-hooks blocked a call: {file} {} — its hooks cannot run; fix it with `{}`.",
                r.reason, r.fix
            ),
        ),
    };
    let mut run = HookRun::new(
        wire_event,
        canonical,
        crate::scope::Dialect::Copse,
        command,
        block.config.clone(),
        block.scope,
    );
    run.outcome.decision = Some(Decision::Deny);
    run.outcome.agent_message = Some(agent);
    run.outcome.user_message = Some(user);
    run.result = RunOutcome::Deny;
    run.blocked = true;
    run
}
