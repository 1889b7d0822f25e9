//! Sessions: one conversation's identity, turns, environment, detached hooks and
//! message queue.
//!
//! A human prompt starts a new turn (a new generation id) and a new turn tree (a new
//! epoch, a fresh continuation budget). Blocking events run their hooks now and return
//! a verdict; observation events are dispatched detached and never block the caller.
//! Detached runs capture the identity and epoch by value at dispatch, so a late hook
//! still reports the turn it belongs to. `sessionStart` hooks may export environment
//! variables for every later hook of the session; a hook spawned while they are still
//! running waits for them (bounded by their timeout), so whether it sees that
//! environment never depends on a race. An overlay only reaches sandboxed hooks of the
//! same scope and root as the hook that set it (a project hook's variables never reach
//! a user hook or another root's hooks), and names that change how programs load or
//! behave ([`crate::env::overlay_refusal`]) are dropped with a warning on the run.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

mod detached;
mod record;
mod schedule;

use crate::dialect::{Context, Dialect, HookSpec, Scope};
use crate::dispatcher::Dispatcher;
use crate::dropped::DroppedRun;
use crate::engine::Engine;
use crate::event::{CanonicalEvent, EventPayload, SessionIdentity, ToolCall};
use crate::gate;
use crate::notice::Notice;
use crate::outcome::{HookRun, Verdict};
use crate::overlay::Overlays;
use crate::queue::{MessageQueue, QueuedMessage};
use crate::selected::Selected;

/// What firing an event did.
// A verdict is returned once per event and moved, never stored in bulk: boxing it
// would only change the public API.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Fired {
    /// A blocking event: its merged verdict.
    Verdict(Verdict),
    /// An observation event: its hooks were dispatched detached (or dropped).
    Detached {
        /// How many hooks were dispatched.
        dispatched: usize,
        /// How many were dropped because the dispatcher was full.
        dropped: usize,
    },
}

#[derive(Debug, Default)]
struct Starting {
    /// sessionStart hooks still running.
    running: usize,
    /// When waiting for them stops.
    deadline: Option<Instant>,
}

#[derive(Debug)]
struct State {
    /// Names this session in the audit store when the host gave no conversation id.
    local_id: String,
    identity: Mutex<SessionIdentity>,
    turns: Mutex<u64>,
    env: Mutex<Overlays>,
    /// What Claude SessionStart hooks wrote to `$CLAUDE_ENV_FILE`.
    tool_env: Mutex<String>,
    /// A halt a detached hook asked for (Claude `continue: false` on PostToolUse,
    /// Stop, …), waiting for the host to take it.
    halt: Mutex<Option<crate::outcome::Halt>>,
    starting: Mutex<Starting>,
    started: Condvar,
    dispatcher: Arc<Dispatcher>,
    queue: Mutex<MessageQueue>,
    runs: Mutex<Vec<HookRun>>,
    drops: Mutex<Vec<DroppedRun>>,
    /// Things the user should hear about once (first project-hook runs, changed
    /// configs), waiting for the host to take them.
    notices: Mutex<Vec<crate::notice::Notice>>,
    announced: Mutex<std::collections::HashSet<String>>,
    /// The files the agent's tool calls wrote in this session (normalised, as the
    /// guard judges paths): running one later is a `run-written` effect.
    written: Mutex<std::collections::BTreeSet<String>>,
    /// The config problems seen by the latest event fired.
    problems: Mutex<Vec<crate::dialect::ConfigWarning>>,
    /// Told about every message a hook queues (the server's `queue/message`).
    listener: Mutex<Option<QueueListener>>,
}

/// What an agent sent the shim, byte for byte. The hooks the agent itself would have
/// run for this call — its own dialect, declared for the same wire event (its adopted
/// hooks) — get these bytes on stdin instead of a packet rebuilt from the canonical
/// event; every other hook keeps its dialect's packet. Carried by value into detached
/// runs. A sequential chain hands the rebuilt packet on once a hook changed the input
/// (what Gemini CLI does), see [`schedule`].
#[derive(Debug, Clone)]
pub(crate) struct Verbatim {
    dialect: Dialect,
    wire_event: String,
    bytes: Arc<[u8]>,
}

impl Verbatim {
    /// The payload `bytes` an agent of `dialect` sent for `wire_event`.
    pub(crate) fn new(dialect: Dialect, wire_event: &str, bytes: &[u8]) -> Verbatim {
        Verbatim {
            dialect,
            wire_event: wire_event.to_string(),
            bytes: Arc::from(bytes),
        }
    }

    /// The agent's own name for the event.
    pub(crate) fn wire_event(&self) -> &str {
        &self.wire_event
    }

    /// The bytes `hook` gets, when the agent itself would have run it for this call.
    pub(crate) fn for_hook(&self, hook: &HookSpec) -> Option<&[u8]> {
        (hook.dialect == self.dialect && hook.event == self.wire_event).then_some(&*self.bytes)
    }
}

/// A callback told about every message a hook queues, as it is queued.
#[derive(Clone)]
pub struct QueueListener(pub Arc<dyn Fn(&QueuedMessage) + Send + Sync>);

impl std::fmt::Debug for QueueListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QueueListener")
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section here leaves its data consistent; a panic elsewhere
    // must not wedge the session.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A conversation: its identity, and the events it fires. Cheap to clone (shared).
#[derive(Debug, Clone)]
pub struct Session {
    engine: Engine,
    state: Arc<State>,
}

impl Session {
    pub(crate) fn new(engine: Engine, identity: SessionIdentity) -> Session {
        Session {
            engine,
            state: Arc::new(State {
                local_id: local_session_id(),
                identity: Mutex::new(identity),
                turns: Mutex::new(0),
                env: Mutex::new(Overlays::default()),
                tool_env: Mutex::new(String::new()),
                halt: Mutex::new(None),
                starting: Mutex::new(Starting::default()),
                started: Condvar::new(),
                dispatcher: Arc::new(Dispatcher::default()),
                queue: Mutex::new(MessageQueue::default()),
                runs: Mutex::new(Vec::new()),
                drops: Mutex::new(Vec::new()),
                notices: Mutex::new(Vec::new()),
                announced: Mutex::new(std::collections::HashSet::new()),
                written: Mutex::new(std::collections::BTreeSet::new()),
                problems: Mutex::new(Vec::new()),
                listener: Mutex::new(None),
            }),
        }
    }

    /// This session, firing through `engine` from now on (its state kept): a host
    /// whose settings changed (untrust, disable) moves its open sessions to the
    /// engine built from the new settings, so the change reaches their next event.
    pub fn rebind(&self, engine: &Engine) -> Session {
        Session {
            engine: engine.clone(),
            state: Arc::clone(&self.state),
        }
    }

    /// The current identity.
    pub fn identity(&self) -> SessionIdentity {
        lock(&self.state.identity).clone()
    }

    /// Replaces the identity (a model change, a host-assigned turn id).
    pub fn set_identity(&self, identity: SessionIdentity) {
        *lock(&self.state.identity) = identity;
    }

    /// Starts a human turn: a new generation id (`generation_id` or a generated one)
    /// and a new turn tree with a fresh continuation budget. Returns the new epoch.
    pub fn start_human_turn(&self, generation_id: Option<String>) -> u64 {
        let n = {
            let mut t = lock(&self.state.turns);
            *t += 1;
            *t
        };
        {
            let mut id = lock(&self.state.identity);
            id.generation_id = generation_id.unwrap_or_else(|| format!("gen-{n}"));
            id.host.last_assistant_message = None;
            id.host.loop_count = None;
        }
        lock(&self.state.queue).start_human_turn_tree()
    }

    /// Every environment overlay of the session (from sessionStart hooks), merged:
    /// what was accepted, whichever hooks it reaches ([`Session::env_for`]).
    pub fn env(&self) -> BTreeMap<String, String> {
        lock(&self.state.env).merged()
    }

    /// The overlay a hook of this scope and root receives (set by sessionStart hooks of
    /// the same scope and root; an unsandboxed hook receives none).
    pub fn env_for(
        &self,
        scope: Scope,
        root: Option<&std::path::Path>,
    ) -> BTreeMap<String, String> {
        lock(&self.state.env)
            .get(scope, root)
            .cloned()
            .unwrap_or_default()
    }

    /// The session's overlays as kept (already filtered): what the shim persists
    /// between an agent's calls.
    pub(crate) fn overlays(&self) -> Overlays {
        lock(&self.state.env).clone()
    }

    /// Restores overlays a shim persisted (filtered again on load) before firing.
    pub(crate) fn restore_overlays(&self, overlays: Overlays) {
        *lock(&self.state.env) = overlays;
    }

    /// The shell lines Claude SessionStart hooks wrote to `$CLAUDE_ENV_FILE`
    /// (`export JAVA_HOME=…`): a host sources them before each of its shell tool
    /// commands, as Claude Code does. Empty when none did.
    pub fn tool_env_script(&self) -> String {
        lock(&self.state.tool_env).clone()
    }

    /// Takes the halt a detached hook asked for since the last call (the first one
    /// wins): Claude's `continue: false` on an observation event stops the run, with
    /// its `stopReason` for the user. Hosts check it after each tool call and at the
    /// end of a turn.
    pub fn take_halt(&self) -> Option<crate::outcome::Halt> {
        lock(&self.state.halt).take()
    }

    /// Runs the tool gate for one call. A call whose input does not have its tool's
    /// declared shape runs no hook and is denied (hooks never see a coerced value);
    /// [`Session::try_gate_tool`] returns the error instead.
    pub fn gate_tool(&self, call: ToolCall) -> Verdict {
        match self.try_gate_tool(call) {
            Ok(v) => v,
            Err(e) => malformed_verdict(&e),
        }
    }

    /// [`Session::gate_tool`], with a malformed input as an error the host handles.
    pub fn try_gate_tool(&self, call: ToolCall) -> Result<Verdict, crate::event::ToolInputError> {
        call.validate()?;
        Ok(self.fire_blocking(&EventPayload::ToolGate(call)))
    }

    /// [`Session::fire`], with a malformed tool input (`toolGate`, `afterToolUse`,
    /// `permissionRequest`) as an error the host handles: no hook runs.
    pub fn try_fire(&self, event: EventPayload) -> Result<Fired, crate::event::ToolInputError> {
        match &event {
            EventPayload::ToolGate(call) | EventPayload::PermissionRequest(call) => {
                call.validate()?
            }
            EventPayload::AfterToolUse(r) => crate::event::tool::validate(&r.tool, &r.input)?,
            _ => {}
        }
        Ok(self.fire(event))
    }

    /// Fires any event: blocking events return their verdict, observation events are
    /// dispatched detached. `beforeSubmitPrompt` starts a human turn first.
    /// On `afterFileEdit`, hooks that opted into `async` run detached; the rest are
    /// awaited.
    ///
    /// A malformed tool input runs no hook: a `toolGate` is denied, an `afterToolUse`
    /// dispatches nothing ([`Session::try_fire`] returns the error instead).
    pub fn fire(&self, mut event: EventPayload) -> Fired {
        let malformed = match &event {
            EventPayload::ToolGate(call) => call.validate().err(),
            EventPayload::AfterToolUse(r) => crate::event::tool::validate(&r.tool, &r.input).err(),
            _ => None,
        };
        if let Some(e) = malformed {
            return match event {
                EventPayload::ToolGate(_) => Fired::Verdict(malformed_verdict(&e)),
                _ => Fired::Detached {
                    dispatched: 0,
                    dropped: 0,
                },
            };
        }
        if let EventPayload::AfterToolUse(result) = &mut event {
            crate::event::cap_tool_output(&mut result.output);
        }
        if event.event() == CanonicalEvent::BeforeSubmitPrompt {
            self.start_human_turn(None);
        }
        if let EventPayload::AfterAgentResponse { text } = &event {
            // Stop hooks read the turn's last assistant message.
            lock(&self.state.identity).host.last_assistant_message = Some(text.clone());
        }
        if event.event().is_blocking() {
            Fired::Verdict(self.fire_blocking(&event))
        } else {
            self.fire_detached(event)
        }
    }

    /// Fires a blocking event and waits for its verdict (hooks that opted into
    /// `async` are dispatched detached and do not contribute to it).
    pub fn fire_blocking(&self, event: &EventPayload) -> Verdict {
        self.blocking(event, None)
    }

    /// [`Session::fire_blocking`] for an event an agent sent the shim: the hooks the
    /// agent itself would have run get its bytes as they came ([`Verbatim`]), on the
    /// blocking and the detached path alike.
    pub(crate) fn fire_blocking_verbatim(
        &self,
        event: &EventPayload,
        verbatim: &Verbatim,
    ) -> Verdict {
        self.blocking(event, Some(verbatim))
    }

    fn blocking(&self, event: &EventPayload, verbatim: Option<&Verbatim>) -> Verdict {
        let call = match event {
            EventPayload::ToolGate(call) | EventPayload::PermissionRequest(call)
                if self.engine.guard_active() =>
            {
                Some(call)
            }
            _ => None,
        };
        let Some(call) = call else {
            return self.blocking_hooks(event, verbatim, None);
        };
        self.blocking_hooks(event, verbatim, Some(call))
    }

    /// When the hooks rewrote a tool call's input: every other hook of the gate runs
    /// again on the final input (in the vendor's form of it), so no rewrite — by a
    /// project hook past a user's or a managed one's check, or by any hook past another
    /// — reaches the agent unchecked. One round, bounded: a hook that rewrites the
    /// rewritten input again denies (rewrites that do not settle are not passed on).
    fn recheck_rewrite(
        &self,
        event: &EventPayload,
        selected: &[Selected],
        runs: &[HookRun],
        ctx: Context<'_>,
        env: &Overlays,
        http_policy: Option<&crate::http::HttpPolicy>,
    ) -> Vec<HookRun> {
        let call = match event {
            EventPayload::ToolGate(call) | EventPayload::PermissionRequest(call) => call,
            _ => return Vec::new(),
        };
        // The common case, without copying the runs: no hook rewrote anything.
        if runs.iter().all(|r| r.outcome.updated_input.is_none()) {
            return Vec::new();
        }
        let merged = gate::merge(runs.to_vec());
        let Some(update) = merged
            .updated_input
            .filter(|_| merged.decision != Some(crate::outcome::Decision::Deny))
        else {
            return Vec::new();
        };
        let input = if merged.input_replaced {
            update
        } else {
            let mut input = call.input.clone();
            for (k, v) in update {
                input.insert(k, v);
            }
            input
        };
        if input == call.input {
            return Vec::new();
        }
        // Hooks of a sequential chain (Gemini) after the first rewriter of that file
        // already got the changed input: they are not run twice.
        let first_rewriter = selected
            .iter()
            .zip(runs)
            .position(|(_, r)| r.outcome.updated_input.is_some());
        let saw_it = |i: usize, s: &Selected| {
            first_rewriter.is_some_and(|f| {
                i > f
                    && s.config.extra(s.index).sequential
                    && s.hook().source == selected[f].hook().source
            })
        };
        let again: Vec<Selected> = selected
            .iter()
            .zip(runs)
            .enumerate()
            .filter(|(i, (s, r))| r.outcome.updated_input.is_none() && !saw_it(*i, s))
            .map(|(_, (s, _))| s.clone())
            .collect();
        if again.is_empty() {
            return Vec::new();
        }
        let mut rewritten = call.clone();
        rewritten.input = input.clone();
        let event = match event {
            EventPayload::PermissionRequest(_) => EventPayload::PermissionRequest(rewritten),
            _ => EventPayload::ToolGate(rewritten),
        };
        let run_input = self.engine.run_input(&event, ctx, Some(env), http_policy);
        let mut again = schedule::run_blocking(&again, &run_input, None);
        for run in &mut again {
            run.warnings
                .push("ran again on the input as another hook rewrote it".to_string());
            if let Some(u) = run.outcome.updated_input.take() {
                let settles = u.iter().all(|(k, v)| input.get(k) == Some(v));
                if !settles {
                    run.outcome.decision = Some(crate::outcome::Decision::Deny);
                    run.outcome.agent_message = Some(
                        "Blocked: two hooks rewrote this call's input in turn; copse-hooks passes on only input every hook has checked.".to_string(),
                    );
                    run.result = crate::outcome::RunOutcome::Deny;
                }
            }
        }
        again
    }

    /// The guard's run for a call's input (`rewritten`: the input after the hooks'
    /// rewrites).
    fn guard_run(
        &self,
        call: &crate::event::ToolCall,
        input: &serde_json::Map<String, serde_json::Value>,
        wire_event: &str,
        event: &EventPayload,
        rewritten: bool,
    ) -> HookRun {
        let started = SystemTime::now();
        let clock = std::time::Instant::now();
        let guard = self.engine.guard();
        let v = {
            let mut written = lock(&self.state.written);
            let v = guard.evaluate_in(&call.tool, input, &written);
            if v.decision != Some(crate::outcome::Decision::Deny) {
                written.extend(v.wrote.iter().cloned());
                // Bounded: past the cap, names are dropped (in lexical order).
                while written.len() > MAX_WRITTEN {
                    let Some(first) = written.iter().next().cloned() else {
                        break;
                    };
                    written.remove(&first);
                }
            }
            v
        };
        crate::guard::run_of(
            &v,
            &call.tool,
            input,
            wire_event,
            event.event(),
            rewritten,
            started,
            clock.elapsed(),
        )
    }

    fn blocking_hooks(
        &self,
        event: &EventPayload,
        verbatim: Option<&Verbatim>,
        guard: Option<&crate::event::ToolCall>,
    ) -> Verdict {
        let started = SystemTime::now();
        if !self.engine.hooks_active() {
            return match guard {
                Some(call) => self.guard_only(event, verbatim, call, started),
                None => Verdict::default(),
            };
        }
        let identity = self.identity();
        let ctx = Context {
            session: &identity,
            workspace_roots: self.engine.workspace_roots(),
        };
        let plan = self.plan(event, &ctx);
        let (detached, selected): (Vec<Selected>, Vec<Selected>) =
            plan.hooks.into_iter().partition(|s| s.hook().run_async);
        // The gate's span ids, when it will have one: its detached hooks' spans are
        // its children.
        let trace = if selected.is_empty() {
            None
        } else {
            self.gate_trace()
        };
        let starting = event.event() == CanonicalEvent::SessionStart;
        if starting {
            lock(&self.state.env).clear();
        }
        if !detached.is_empty() {
            self.dispatch_detached(
                event.clone(),
                detached,
                plan.http_policy.clone(),
                verbatim.cloned(),
                trace,
            );
        }
        let blocks: Vec<HookRun> = if self.engine.config().refused_configs
            == crate::settings::RefusedConfigs::Block
        {
            let wire_event = verbatim.map_or(event.event().name(), Verbatim::wire_event);
            plan.blocks
                .iter()
                .map(|b| {
                    record::block_run(b, wire_event, event.event(), self.engine.workspace_roots())
                })
                .collect()
        } else {
            Vec::new()
        };
        if selected.is_empty() && blocks.is_empty() {
            return match guard {
                Some(call) => self.guard_only(event, verbatim, call, started),
                None => Verdict::default(),
            };
        }
        if starting {
            self.session_start_begins(&selected);
        }
        self.wait_for_session_start(event.event());
        let env = lock(&self.state.env).clone();
        let input = self
            .engine
            .run_input(event, ctx, Some(&env), plan.http_policy.as_ref());
        let mut runs = schedule::run_blocking(&selected, &input, verbatim);
        let rechecks = self.recheck_rewrite(
            event,
            &selected,
            &runs,
            ctx,
            &env,
            plan.http_policy.as_ref(),
        );
        let epoch = lock(&self.state.queue).epoch();
        for (run, s) in runs.iter().zip(selected.iter()) {
            if let Some(q) = &run.outcome.queue_message {
                self.enqueue(s.hook(), q, epoch);
            }
        }
        if starting {
            self.session_started(&mut runs, &selected);
        }
        // The hooks that judged the input before a rewrite, again on the rewritten
        // input; then each config that would have judged this gate but cannot run
        // blocks it (never a pass for a guard that vanished).
        runs.extend(rechecks);
        runs.extend(blocks);
        for run in &runs {
            self.record(run, &identity);
        }
        if self.engine.keeps_runs() {
            lock(&self.state.runs).extend(runs.iter().cloned());
        }
        let mut verdict = gate::merge(runs);
        if let Some(call) = guard {
            // After the hooks: the guard judges the input that will run, every
            // rewrite applied, so no rewrite launders a call past it.
            let input = match &verdict.updated_input {
                Some(update) if verdict.input_replaced => Some(update.clone()),
                Some(update) => {
                    let mut input = call.input.clone();
                    for (k, v) in update {
                        input.insert(k.clone(), v.clone());
                    }
                    Some(input)
                }
                None => None,
            };
            let run = match &input {
                Some(input) => self.guard_judges(call, input, verbatim, event, true),
                None => self.guard_judges(call, &call.input, verbatim, event, false),
            };
            self.apply_guard(&mut verdict, run, &identity);
        }
        self.export(&record::GateExport {
            event,
            started,
            identity: &identity,
            verdict: &verdict,
            selected: &selected,
            trace,
            vendor_event: verbatim.map(Verbatim::wire_event),
        });
        verdict
    }

    /// A gate no hook runs for: the guard's run alone.
    fn guard_only(
        &self,
        event: &EventPayload,
        verbatim: Option<&Verbatim>,
        call: &crate::event::ToolCall,
        started: SystemTime,
    ) -> Verdict {
        let identity = self.identity();
        let mut verdict = Verdict::default();
        let run = self.guard_judges(call, &call.input, verbatim, event, false);
        self.apply_guard(&mut verdict, run, &identity);
        self.export(&record::GateExport {
            event,
            started,
            identity: &identity,
            verdict: &verdict,
            selected: &[],
            trace: self.gate_trace(),
            vendor_event: verbatim.map(Verbatim::wire_event),
        });
        verdict
    }

    /// The guard's run for the input that will run (`rewritten`: the hooks changed it).
    fn guard_judges(
        &self,
        call: &crate::event::ToolCall,
        input: &serde_json::Map<String, serde_json::Value>,
        verbatim: Option<&Verbatim>,
        event: &EventPayload,
        rewritten: bool,
    ) -> HookRun {
        let wire_event = verbatim.map_or(event.event().name(), Verbatim::wire_event);
        self.guard_run(call, input, wire_event, event, rewritten)
    }

    /// Applies the guard's run to the hooks' verdict. A run that matched tightens the
    /// verdict; one the hooks already answered as strictly is marked subsumed (shown by
    /// `gate --explain`, not recorded or exported apart from the hooks' runs). Every
    /// other matched run, every refused policy, and the guard's allow of a call no
    /// hook ran for, is recorded.
    fn apply_guard(&self, verdict: &mut Verdict, mut run: HookRun, identity: &SessionIdentity) {
        if !guard_matched(&run) {
            // A call no hook ran for has no other record: the guard's allow is kept
            // (listings leave such quiet runs out), so `audit replay --guard` can
            // judge every call the agent made.
            if verdict.runs.is_empty() {
                self.record(&run, identity);
            }
            return;
        }
        let hooks = verdict.effective_decision();
        if let Some(g) = run.guard.as_mut() {
            let said = run.outcome.decision.or(g.would);
            g.subsumed = g.broken.is_none() && !verdict.runs.is_empty() && said <= Some(hooks);
        }
        if run.guard.as_ref().is_some_and(|g| !g.subsumed) {
            self.record(&run, identity);
        }
        gate::apply_guard(verdict, vec![run]);
    }

    /// Takes what the blocking sessionStart hooks set: the `$CLAUDE_ENV_FILE` lines
    /// for the host, and each hook's accepted overlay for hooks of its scope and root.
    fn session_started(&self, runs: &mut [HookRun], selected: &[Selected]) {
        let mut tool_env = lock(&self.state.tool_env);
        tool_env.clear();
        for run in runs.iter() {
            if let Some(script) = &run.outcome.tool_env_script {
                tool_env.push_str(script);
                if !script.ends_with('\n') {
                    tool_env.push('\n');
                }
            }
        }
        drop(tool_env);
        let mut env = lock(&self.state.env);
        for (run, s) in runs.iter_mut().zip(selected.iter()) {
            let hook = s.hook();
            let accepted = record::accepted_overlay(run);
            env.extend(hook.scope, hook.root.as_deref(), accepted);
        }
        drop(env);
        for _ in runs.iter() {
            self.session_start_finished();
        }
    }

    /// The session id the audit store uses: the conversation id, or (outside any
    /// conversation) an id unique to this session object.
    pub fn audit_id<'a>(&'a self, identity: &'a SessionIdentity) -> &'a str {
        if identity.conversation_id.is_empty() {
            &self.state.local_id
        } else {
            &identity.conversation_id
        }
    }

    /// The files the agent's tool calls wrote in this session, as the guard remembers
    /// them (a host that keeps a session across processes stores and restores them).
    pub fn written_files(&self) -> Vec<String> {
        lock(&self.state.written).iter().cloned().collect()
    }

    /// Puts back the files an earlier process of this session saw written.
    pub fn restore_written(&self, files: impl IntoIterator<Item = String>) {
        lock(&self.state.written).extend(files);
    }

    /// Sets the callback told about every message a hook queues (replacing any).
    pub fn set_queue_listener(&self, listener: Option<QueueListener>) {
        *lock(&self.state.listener) = listener;
    }

    /// The config problems (unreadable, invalid, wrong-shaped files...) met by the
    /// latest event this session fired, one per warning, in configured order. A host
    /// shows them with the verdict: a config fault is never silent.
    pub fn config_problems(&self) -> Vec<crate::dialect::ConfigWarning> {
        lock(&self.state.problems).clone()
    }

    /// Takes the notices the user should see (each is produced once per session).
    pub fn take_notices(&self) -> Vec<Notice> {
        std::mem::take(&mut *lock(&self.state.notices))
    }

    /// Blocks until no detached hook of this session is running or waiting.
    pub fn wait_idle(&self) {
        self.state.dispatcher.wait_idle();
    }

    /// Every hook run so far (blocking runs when their verdict is merged, detached
    /// runs when they finish) — only when the engine keeps session runs
    /// ([`crate::EngineConfig::keep_session_runs`]).
    pub fn runs(&self) -> Vec<HookRun> {
        lock(&self.state.runs).clone()
    }

    /// Detached runs dropped because the dispatcher was full.
    pub fn dropped(&self) -> Vec<DroppedRun> {
        lock(&self.state.drops).clone()
    }

    /// The pending messages, in arrival order.
    pub fn queue(&self) -> Vec<QueuedMessage> {
        lock(&self.state.queue).items().to_vec()
    }

    /// Takes the messages the agent may receive now (each spends one continuation;
    /// over budget they turn held). Stop follow-ups delivered here count as loops of
    /// the current turn (`loop_count`, `stop_hook_active`).
    pub fn drain_queue(&self) -> Vec<QueuedMessage> {
        let drained = lock(&self.state.queue).drain();
        let loops = drained
            .iter()
            .filter(|m| {
                matches!(
                    m.origin.canonical,
                    Some(CanonicalEvent::Stop | CanonicalEvent::SubagentStop)
                )
            })
            .count() as u64;
        if loops > 0 {
            let mut id = lock(&self.state.identity);
            id.host.loop_count = Some(id.host.loop_count.unwrap_or(0) + loops);
        }
        drained
    }

    /// A human releases the held messages (and starts a new turn tree).
    pub fn release_held(&self) -> Vec<QueuedMessage> {
        lock(&self.state.queue).release_held()
    }

    /// Continuations left in the current turn tree.
    pub fn remaining_budget(&self) -> u32 {
        lock(&self.state.queue).remaining()
    }

    fn wait_for_session_start(&self, event: CanonicalEvent) {
        if event == CanonicalEvent::SessionStart {
            return;
        }
        let mut st = lock(&self.state.starting);
        while st.running > 0 {
            let Some(deadline) = st.deadline else { break };
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            st = self
                .state
                .started
                .wait_timeout(st, deadline - now)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// Marks sessionStart hooks as running: hooks spawned meanwhile wait for their
    /// environment (bounded by the longest timeout).
    fn session_start_begins(&self, selected: &[Selected]) {
        let longest = selected
            .iter()
            .map(|s| s.hook().timeout)
            .max()
            .unwrap_or(Duration::ZERO);
        let mut st = lock(&self.state.starting);
        st.running += selected.len();
        // The grace covers the kill and drain after a timeout.
        st.deadline = Some(Instant::now() + longest + Duration::from_secs(1));
    }

    fn session_start_finished(&self) {
        let mut st = lock(&self.state.starting);
        st.running = st.running.saturating_sub(1);
        if st.running == 0 {
            st.deadline = None;
            self.state.started.notify_all();
        }
    }
}

impl Engine {
    /// Opens a session for a conversation.
    pub fn session(&self, identity: SessionIdentity) -> Session {
        Session::new(self.clone(), identity)
    }
}

/// The verdict for a malformed tool input: denied, no hook run.
/// Whether the guard's run says something (a rule matched, or the policy is refused):
/// only then is it one of the verdict's runs and a record in the audit store.
/// How many written files a session remembers for the guard.
const MAX_WRITTEN: usize = 256;

fn guard_matched(run: &HookRun) -> bool {
    run.guard
        .as_ref()
        .is_some_and(|g| g.would.is_some() || g.broken.is_some())
}

fn malformed_verdict(e: &crate::event::ToolInputError) -> Verdict {
    Verdict {
        decision: Some(crate::outcome::Decision::Deny),
        agent_message: Some(format!("malformed tool input: {e}")),
        ..Verdict::default()
    }
}

/// `local-<unix ms>-<pid>-<n>`: unique per session object in this process.
fn local_session_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let ms = SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!("local-{ms}-{}-{n}", std::process::id())
}
