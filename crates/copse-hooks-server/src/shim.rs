//! `shim/handle`: agent hook calls forwarded by `copse-hooks shim`.
//!
//! The shim sends the agent's name, its raw payload and its environment (LLM keys
//! already removed; removed again here). `HOME`, `COPSE_DIR` and `COPSE_HOOK_DEPTH`
//! are the daemon's own, whatever the call says: a client never picks the settings,
//! the audit store or the recursion depth a call runs under. The daemon builds the call's engine config
//! exactly as the in-process path does ([`copse_hooks::agent::shim::engine_config`]),
//! takes a warm engine for it from a small cache (configs parsed once, the audit store
//! kept open), runs [`copse_hooks::agent::shim::handle_with`] — the in-process path's
//! entry point, with the same session-state files — and answers with the agent's
//! stdout, stderr and exit code.
//!
//! The audit records of a call are committed before its answer is written (the agent
//! acts on the answer; the record must not be lost if the daemon dies right after).
//! Off the critical path: an observation call (see [`copse_hooks::agent::shim::is_observation`]) is answered
//! as soon as it is accepted and its hooks run detached, still audited. A daemon told
//! to stop cancels detached runs (killing their hooks) and flushes every engine.
//!
//! A call that carries the shim's build ([`rpc::ShimHandleParams::client`]) is refused
//! with `STALE_DAEMON`, before anything runs, when this daemon is another version or
//! executable, or its executable was deleted or replaced since it started: the shim
//! then stops this daemon and starts its own. Every answer carries the daemon's build.
//!
//! Never fails open by accident: an unreadable payload, a settings or state error,
//! even a panic inside the call, is answered with the agent's block on a gated event
//! (and recorded in `$COPSE_DIR/shim-errors.log`), never left unanswered.

use std::collections::HashMap;
use std::ffi::OsString;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use copse_hooks::CancelToken;
use copse_hooks::agent::shim::{self as engine_shim, Host};
use copse_hooks::agent::{self, Agent, Answer, Inbound};
use copse_hooks::{Engine, EngineConfig};
use copse_hooks_wire::rpc::{self, codes};
use serde_json::Value;

use crate::{Conn, lock};

/// The most engines kept warm (one per distinct call config: agent, roots,
/// settings, environment).
const MAX_ENGINES: usize = 32;

/// A warm engine: when it was last used, and the settings it was built from.
struct Warm {
    engine: Engine,
    used: u64,
    settings: PathBuf,
    stamp: Option<crate::SettingsStamp>,
}

/// Retires an engine nobody will ask again: its persistent hooks stopped (stdin
/// closed, a grace, then killed) and its audit store flushed, off the caller's thread.
pub(crate) fn retire(engine: Engine) {
    let spawned = std::thread::Builder::new()
        .name("copse-hooks-retire".to_owned())
        .spawn(move || {
            engine.stop_persistent();
            engine.flush_spine();
        });
    if let Err(e) = spawned {
        eprintln!("copse-hooks serve: cannot retire an engine: {e}");
    }
}

/// The daemon's shim state: warm engines and detached runs.
#[derive(Default)]
pub(crate) struct ShimHost {
    engines: Mutex<HashMap<Vec<u8>, Warm>>,
    tick: AtomicU64,
    detached: Mutex<HashMap<u64, CancelToken>>,
    detached_done: Condvar,
    next: AtomicU64,
}

impl ShimHost {
    /// The warm engine for `config` (built and cached on first use).
    fn engine(&self, mut config: EngineConfig) -> Engine {
        // Every field decides something (the environment is what hooks start from),
        // so the whole config is the key: the environment as raw bytes (each name and
        // value preceded by a NUL, which neither can contain), after the rest of the
        // config's `Debug` (where a NUL would be escaped). Formatting the environment
        // with `Debug` (escaping every value) was most of the key's cost.
        let environment = std::mem::take(&mut config.environment);
        let mut key = format!("{config:?}").into_bytes();
        for (name, value) in &environment {
            key.push(0);
            key.extend_from_slice(name.as_encoded_bytes());
            key.push(0);
            key.extend_from_slice(value.as_encoded_bytes());
        }
        config.environment = environment;
        let settings = copse_hooks::Settings::path_in(&config.copse_dir);
        // One stat per call: a settings change (trust, untrust, enable, disable) retires
        // every engine built from the old settings, persistent hooks and all.
        let stamp = crate::settings_stamp(&settings);
        let tick = self.tick.fetch_add(1, Ordering::Relaxed);
        let mut engines = lock(&self.engines);
        Self::retire_stale(&mut engines, &settings, stamp);
        if let Some(warm) = engines.get_mut(&key) {
            warm.used = tick;
            return warm.engine.clone();
        }
        if engines.len() >= MAX_ENGINES
            && let Some(oldest) = engines
                .iter()
                .min_by_key(|(_, w)| w.used)
                .map(|(k, _)| k.clone())
            && let Some(old) = engines.remove(&oldest)
        {
            retire(old.engine);
        }
        let engine = Engine::new(config);
        engines.insert(
            key,
            Warm {
                engine: engine.clone(),
                used: tick,
                settings,
                stamp,
            },
        );
        engine
    }

    /// Retires the engines built from `settings` when it no longer has `stamp`.
    fn retire_stale(
        engines: &mut HashMap<Vec<u8>, Warm>,
        settings: &std::path::Path,
        stamp: Option<crate::SettingsStamp>,
    ) {
        let stale: Vec<Vec<u8>> = engines
            .iter()
            .filter(|(_, w)| w.settings == settings && w.stamp != stamp)
            .map(|(k, _)| k.clone())
            .collect();
        for k in stale {
            if let Some(old) = engines.remove(&k) {
                retire(old.engine);
            }
        }
    }

    /// The persistent hooks the warm engines run.
    pub(crate) fn persistent_status(&self) -> Vec<copse_hooks::persistent::PersistentStatus> {
        lock(&self.engines)
            .values()
            .flat_map(|w| w.engine.persistent_status())
            .collect()
    }

    /// Retires every warm engine whose settings changed since it was built (the
    /// daemon's watch, so a disabled or untrusted persistent hook stops without
    /// waiting for the next call).
    pub(crate) fn refresh(&self) {
        let mut engines = lock(&self.engines);
        let files: std::collections::BTreeSet<PathBuf> =
            engines.values().map(|w| w.settings.clone()).collect();
        for file in files {
            let stamp = crate::settings_stamp(&file);
            Self::retire_stale(&mut engines, &file, stamp);
        }
    }

    /// Cancels detached runs (killing their hooks), waits for them, and flushes every
    /// warm engine's audit store.
    pub(crate) fn shutdown(&self) {
        {
            let mut running = lock(&self.detached);
            for token in running.values() {
                token.cancel();
            }
            while !running.is_empty() {
                running = self
                    .detached_done
                    .wait(running)
                    .unwrap_or_else(|p| p.into_inner());
            }
        }
        for warm in lock(&self.engines).values() {
            warm.engine.flush_spine();
        }
    }
}

/// What to do once the answer is written (besides noting that the daemon served the
/// agent, [`Served`]).
enum After {
    Nothing,
    /// Run this observation's hooks detached (with the payload as the agent sent it).
    Detach(Agent, Box<Inbound>, String, Box<EngineConfig>),
}

/// Handles a `shim/handle` request on the pool (it may run hooks).
pub(crate) fn request(conn: &Arc<Conn>, id: Value, params: Option<Value>) {
    let Some((token, key)) = conn.begin_request(&id) else {
        return;
    };
    let conn2 = Arc::clone(conn);
    conn.server.pool.execute(move || {
        let conn = conn2;
        let server = Arc::clone(&conn.server);
        let outcome = token
            .enter(|| std::panic::catch_unwind(AssertUnwindSafe(|| call(&server.shim, params))));
        let cancelled = token.is_cancelled();
        lock(&conn.state).inflight.remove(&key);
        let after = match outcome {
            // Refused before anything ran: said as it is, even when a stop cancelled
            // the request meanwhile (the shim then knows to try its own daemon).
            Ok(Err(e)) if e.0 == codes::STALE_DAEMON => {
                conn.send_error(id, e.0, &e.1);
                After::Nothing
            }
            _ if cancelled => {
                conn.send_error(
                    id,
                    codes::REQUEST_CANCELLED,
                    "request cancelled: its hooks were killed",
                );
                After::Nothing
            }
            Ok(Ok((result, after, served))) => {
                match serde_json::to_value(&result) {
                    Ok(v) => conn.send_result(id, v),
                    Err(e) => conn.send_error(id, codes::INTERNAL_ERROR, &e.to_string()),
                }
                if let Some((copse_dir, agent)) = served {
                    // Reads one small file; writes only when the path changed.
                    engine_shim::record_served(&copse_dir, agent, "daemon", None);
                }
                after
            }
            Ok(Err(e)) => {
                conn.send_error(id, e.0, &e.1);
                After::Nothing
            }
            Err(_) => {
                // A panic inside the call: the shim hears an error and fails closed on
                // a gated event.
                conn.send_error(
                    id,
                    codes::INTERNAL_ERROR,
                    "internal error (panic) while serving the shim call",
                );
                After::Nothing
            }
        };
        match after {
            After::Nothing => {}
            After::Detach(agent, inbound, payload, config) => {
                detach(&server, agent, *inbound, payload, *config)
            }
        }
        let mut st = lock(&conn.state);
        st.running -= 1;
        if st.running == 0 {
            conn.idle.notify_all();
        }
    });
}

/// Runs an observation call's hooks off the connection: it outlives the shim's
/// connection (the shim has gone), is audited, and is cancelled by a daemon stop.
fn detach(
    server: &Arc<crate::Server>,
    agent: Agent,
    inbound: Inbound,
    payload: String,
    config: EngineConfig,
) {
    let id = server.shim.next.fetch_add(1, Ordering::Relaxed);
    let token = CancelToken::new();
    lock(&server.shim.detached).insert(id, token.clone());
    let server2 = Arc::clone(server);
    server.pool.execute(move || {
        let server = server2;
        let shim = &server.shim;
        let copse_dir = config.copse_dir.clone();
        let wire = inbound.wire_event.clone();
        let result = token.enter(|| {
            std::panic::catch_unwind(AssertUnwindSafe(|| {
                engine_shim::handle_with(
                    agent,
                    &inbound,
                    payload.as_bytes(),
                    config,
                    &Host {
                        engine: &|c, _probe| shim.engine(c),
                        flush: true,
                        answered: false,
                    },
                )
            }))
        });
        match result {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => engine_shim::record_error(&copse_dir, agent, Some(&wire), &e.to_string()),
            Err(_) => engine_shim::record_error(
                &copse_dir,
                agent,
                Some(&wire),
                "internal error (panic) in a detached call",
            ),
        }
        let mut running = lock(&shim.detached);
        running.remove(&id);
        shim.detached_done.notify_all();
    });
}

type CallError = (i64, String);

fn result_of(answer: Answer, detached: bool) -> rpc::ShimHandleResult {
    rpc::ShimHandleResult {
        stdout: answer.stdout,
        stderr: answer.stderr,
        exit_code: answer.exit_code,
        detached,
        daemon: Some(crate::socket::own_build().identity()),
    }
}

/// Why this daemon must not serve a shim of build `client`: another version, another
/// executable, or its own executable deleted or replaced since it started (one `stat`).
/// A call without the shim's build (a host speaking `shim/handle` itself) is served.
fn stale_for(client: Option<&rpc::BuildIdentity>) -> Option<String> {
    let client = client?;
    let own = crate::socket::own_build();
    let exe = &own.exe_text;
    if client.version != own.version {
        return Some(format!(
            "the daemon runs copse-hooks {}, the shim {}",
            own.version, client.version
        ));
    }
    if client.exe != *exe {
        return Some(format!("the daemon runs {exe}, the shim {}", client.exe));
    }
    match own.exe_state() {
        crate::socket::ExeState::Current => None,
        state => Some(format!(
            "the daemon's executable {exe} was {} since it started",
            state.as_str()
        )),
    }
}

/// The names a client never chooses for the daemon: where the user's home and copse
/// data are (which settings, trust and audit store a call uses) and how deep in hooks
/// the caller is (the recursion guard). The daemon's own values stand in for them.
const DAEMON_OWNED: [&str; 3] = ["HOME", "COPSE_DIR", "COPSE_HOOK_DEPTH"];

/// The daemon's own `HOME`, copse data directory and hook depth, read once.
fn own_vars() -> &'static [(OsString, OsString)] {
    static OWN: std::sync::OnceLock<Vec<(OsString, OsString)>> = std::sync::OnceLock::new();
    OWN.get_or_init(|| {
        let mut own = vec![
            (
                OsString::from("HOME"),
                EngineConfig::process_home().into_os_string(),
            ),
            (
                OsString::from("COPSE_DIR"),
                EngineConfig::process_copse_dir().into_os_string(),
            ),
        ];
        if let Some(depth) = std::env::var_os("COPSE_HOOK_DEPTH") {
            own.push((OsString::from("COPSE_HOOK_DEPTH"), depth));
        }
        own
    })
}

/// The environment a call's config is read from: what the shim sent, without LLM keys
/// (the shim drops them; a client that did not is not trusted to), with the daemon's
/// own `HOME`, `COPSE_DIR` and `COPSE_HOOK_DEPTH` in place of the client's. Nothing of
/// the daemon's own environment beyond those reaches a hook: the daemon serves every
/// agent, and the one that started it has no say over the others' hooks.
fn vars(env: &std::collections::BTreeMap<String, String>) -> Vec<(OsString, OsString)> {
    env.iter()
        .filter(|(k, _)| !copse_hooks::is_llm_secret(k) && !DAEMON_OWNED.contains(&k.as_str()))
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .chain(own_vars().iter().cloned())
        .collect()
}

/// The environment the call's hooks start from: [`vars`], without the daemon's own
/// values of names the agent did not set. A hook sees the variables its agent gave
/// the shim (the in-process path's hooks see the same), never a `COPSE_DIR` only the
/// daemon has.
fn hook_vars(env: &std::collections::BTreeMap<String, String>) -> Vec<(OsString, OsString)> {
    vars(env)
        .into_iter()
        .filter(|(k, _)| {
            k.to_str()
                .is_none_or(|k| !DAEMON_OWNED.contains(&k) || env.contains_key(k))
        })
        .collect()
}

/// Which agent of which `$COPSE_DIR` a call served.
type Served = Option<(PathBuf, Agent)>;

fn call(
    shim: &ShimHost,
    params: Option<Value>,
) -> Result<(rpc::ShimHandleResult, After, Served), CallError> {
    let p: rpc::ShimHandleParams = crate::params::parse(params).map_err(|e| e.parts())?;
    if let Some(why) = stale_for(p.client.as_ref()) {
        // Nothing runs here: the shim replaces this daemon with its own build.
        return Err((codes::STALE_DAEMON, format!("stale daemon: {why}")));
    }
    let Some(agent) = Agent::parse(&p.agent) else {
        return Err((
            codes::INVALID_PARAMS,
            format!(
                "invalid params: field `agent`: unknown agent {:?} (claude, gemini, codex, cursor or copilot)",
                p.agent
            ),
        ));
    };
    let vars = vars(&p.env);
    let copse_dir = EngineConfig::process_copse_dir();
    let mut inbound = match agent::read(agent, p.payload.as_bytes()) {
        Ok(i) => i,
        Err(e) => {
            let reason = e.to_string();
            let wire = serde_json::from_str::<Value>(&p.payload)
                .ok()
                .and_then(|v| v.get("hook_event_name")?.as_str().map(str::to_string));
            engine_shim::record_error(&copse_dir, agent, wire.as_deref(), &reason);
            return Ok((
                result_of(agent::fail_closed(agent, wire.as_deref(), &reason), false),
                After::Nothing,
                None,
            ));
        }
    };
    if inbound.cwd.is_none() {
        inbound.cwd = p.cwd.as_ref().map(PathBuf::from);
    }
    let fail = |reason: String, inbound: &Inbound| {
        engine_shim::record_error(&copse_dir, agent, Some(&inbound.wire_event), &reason);
        Ok((
            result_of(
                agent::fail_closed(agent, Some(&inbound.wire_event), &reason),
                false,
            ),
            After::Nothing,
            None,
        ))
    };
    let mut config = match engine_shim::engine_config(agent, &inbound, &vars) {
        Ok(c) => c,
        Err(e) => return fail(e.to_string(), &inbound),
    };
    config.environment = hook_vars(&p.env);
    let served = Some((config.copse_dir.clone(), agent));
    if engine_shim::is_observation(&inbound) {
        // The session's state goes before the answer (a next call must not see it).
        engine_shim::end_session(&config.copse_dir, agent, &inbound);
        return Ok((
            result_of(Answer::nothing(), true),
            After::Detach(
                agent,
                Box::new(inbound),
                p.verbatim.unwrap_or(p.payload),
                Box::new(config),
            ),
            served,
        ));
    }
    let engine = |c: EngineConfig, _probe: bool| shim.engine(c);
    let host = Host {
        engine: &engine,
        // Recorded before the agent hears the answer (and acts on it): a daemon that
        // dies right after replying loses nothing, and a reader of the audit log after
        // the shim returns finds the run.
        flush: true,
        answered: true,
    };
    // The agent's own hooks get what the agent wrote (`verbatim`, when the shim
    // changed the payload it sends to be read).
    let original = p.verbatim.as_deref().unwrap_or(&p.payload);
    match engine_shim::handle_with(agent, &inbound, original.as_bytes(), config, &host) {
        Ok(reply) => Ok((
            result_of(agent::answer(agent, &inbound, &reply), false),
            After::Nothing,
            served,
        )),
        Err(e) => fail(e.to_string(), &inbound),
    }
}
