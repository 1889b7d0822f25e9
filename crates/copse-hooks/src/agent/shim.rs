//! The shim's engine side: one agent call, run through an engine, with the session's
//! state carried between calls.
//!
//! [`handle`] is what both backends run: in-process (a short-lived `copse-hooks shim`
//! process, [`handle`]) and inside the user daemon ([`handle_with`], with the daemon's
//! warm engines). Both build the call's engine config the same way
//! ([`engine_config`], from the agent's environment as the shim saw it) and keep the
//! session's state in the same files ([`super::state`]), so a session can move from
//! one path to the other between calls (a daemon that goes away, a fallback) without
//! losing its queue, budget, environment or notices. Runs are recorded in the audit
//! store under the agent's session id.
//!
//! The hooks the agent itself would have run — its adopted hooks, in its own dialect,
//! for the wire event it sent — get the agent's payload bytes exactly as they came
//! (`payload`, on both paths), and its own values of the variables its vendor
//! promises; every other hook gets its dialect's packet rebuilt from the canonical
//! event (`session::Verbatim`).
//!
//! What `sessionStart` hooks export is kept exactly as the engine keeps it: one
//! overlay per (scope, root), filtered before it is stored, handed back to the next
//! call's engine session as overlays. Nothing a hook returns ever enters the base
//! environment of a later hook (a project hook's `LD_PRELOAD` never reaches the
//! user's own hooks, nor any `sandbox: false` hook).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::state::{Locked, Pending, SessionState, StateError, state_path};
use super::{Agent, Inbound, Reply};
use crate::engine::{Engine, EngineConfig};
use crate::event::{CanonicalEvent, EventPayload, HostIdentity, SessionIdentity};
use crate::outcome::Verdict;
use crate::overlay::Overlays;
use crate::queue::DEFAULT_CONTINUATION_BUDGET;
use crate::session::{Session, Verbatim};
use crate::settings::Settings;

/// Why a shim call could not be served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShimError {
    /// The session state could not be read or written.
    #[error(transparent)]
    State(#[from] StateError),
    /// `$COPSE_DIR/settings.json` could not be read.
    #[error("{0}")]
    Settings(String),
    /// The agent's `COPSE_DIR` is not the user's own private directory.
    #[error("{0}")]
    CopseDir(String),
}

/// Why a `COPSE_DIR` from the agent's environment must not be used, or `None` when it
/// may: it must be absolute, and the user's own directory (owned by this user; its
/// mode is tightened to 0700 where it is used; a missing one is made 0700), and not inside
/// a workspace (where the agent, or a repository it cloned, could plant settings that
/// switch hooks off, or a daemon that runs none).
pub fn copse_dir_refusal(dir: &Path, roots: &[PathBuf]) -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let shown = dir.display();
    if !dir.is_absolute() {
        return Some(format!("COPSE_DIR={shown} is not an absolute path"));
    }
    // The nearest existing ancestor decides where it really is (symlinks resolved).
    let mut probe = dir.to_path_buf();
    let real = loop {
        if let Ok(real) = std::fs::canonicalize(&probe) {
            let rest = dir.strip_prefix(&probe).unwrap_or(Path::new(""));
            break real.join(rest);
        }
        if !probe.pop() {
            break dir.to_path_buf();
        }
    };
    if let Some(root) = roots.iter().find(|r| real.starts_with(r)) {
        return Some(format!(
            "COPSE_DIR={shown} is inside the workspace {}: settings there could switch hooks off; use your own directory (the default is ~/.copse)",
            root.display()
        ));
    }
    match std::fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => Some(format!("COPSE_DIR={shown} is not a directory")),
        Ok(meta) => {
            let uid = rustix::process::getuid().as_raw();
            if meta.uid() != uid {
                Some(format!(
                    "COPSE_DIR={shown} is owned by uid {}, not by you (uid {uid})",
                    meta.uid()
                ))
            } else {
                // A mode opened to others is tightened back to 0700 where the
                // directory is first used (as for every caller), not refused.
                None
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(format!("COPSE_DIR={shown} cannot be examined: {e}")),
    }
}

/// An environment: `(name, value)` pairs.
pub type Vars = [(OsString, OsString)];

fn var<'a>(vars: &'a Vars, name: &str) -> Option<&'a std::ffi::OsStr> {
    vars.iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_os_str())
        .filter(|v| !v.is_empty())
}

/// Builds the engine config of one call from the agent's environment `vars` (what
/// the shim process was started with; LLM keys are scrubbed by the engine before any
/// hook sees them): `HOME`, `COPSE_DIR`, `CODEX_HOME` and the agent's project-dir
/// variables come from there, and it is the environment every hook of the call
/// starts from. Settings decide enablement and trust; the shim's own list of config
/// locations replaces discovery's.
pub fn engine_config(
    agent: Agent,
    inbound: &Inbound,
    vars: &Vars,
) -> Result<EngineConfig, ShimError> {
    let lookup = |name: &str| var(vars, name).and_then(|v| v.to_str()).map(str::to_string);
    let roots = canonical_roots(&super::workspace_roots(agent, inbound, &lookup));
    let mut config = EngineConfig::from_process(roots.clone());
    config.home = var(vars, "HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"));
    config.copse_dir = var(vars, "COPSE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| config.home.join(".copse"));
    if var(vars, "COPSE_DIR").is_some()
        && let Some(why) = copse_dir_refusal(&config.copse_dir, &roots)
    {
        return Err(ShimError::CopseDir(why));
    }
    config.environment = vars.to_vec();
    config.codex_home = var(vars, "CODEX_HOME").map(PathBuf::from);
    config.gemini_system_settings = var(vars, "GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/gemini-cli/settings.json"));
    // The managed layer as the agent's environment places it; the agent's vendor's
    // managed-hooks-only rule covers every hook the shim runs for it.
    // `from_process` read it already where it is the same place (the usual case:
    // neither environment redirects it); read again only where the agent's differs.
    let agents_dir = var(vars, crate::managed::DIR_VAR);
    let own_dir = std::env::var_os(crate::managed::DIR_VAR).filter(|v| !v.is_empty());
    if agents_dir != own_dir.as_deref() {
        config.managed = std::sync::Arc::new(crate::managed::ManagedPolicy::from_env(vars));
        config.otel_pinned = config.managed.otel.clone();
    }
    config.serving = Some(agent.adopted_dialect());
    let settings = Settings::load(&Settings::path_in(&config.copse_dir))
        .map_err(|e| ShimError::Settings(e.to_string()))?;
    // Registering the shim in an agent is the opt-in: hooks run unless the settings
    // explicitly turn them off (`copse-hooks disable`).
    config.hooks_enabled = settings.cursor_hooks_enabled || !explicitly_disabled(&config.copse_dir);
    config.trusted = settings.trusted_workspaces.clone();
    config.guard = settings.guard.unwrap_or_default();
    config.refused_configs = settings.refused_configs.unwrap_or_default();
    config.require_sandbox = settings.require_sandbox;
    config.sandbox_writable = settings.sandbox_writable_paths.clone();
    config.otel_settings = settings
        .otel
        .as_ref()
        .and_then(|o| serde_json::to_value(o).ok());
    config.agent = Some(agent.as_str().to_owned());
    if settings.spine != Some(false) {
        config.spine_path = Some(config.copse_dir.join("spine.db"));
    }
    if let Some(r) = settings.retention {
        if r.max_runs.is_some() {
            config.retention.max_runs = r.max_runs;
        }
        if r.max_age_days.is_some() {
            config.retention.max_age_days = r.max_age_days;
        }
    }
    let also = super::also_from_settings(&settings.other, agent);
    config.locations = Some(super::locations_with(
        agent,
        &config.home,
        config.codex_home.as_deref(),
        &config.copse_dir,
        &roots,
        &also,
    ));
    Ok(config)
}

/// Whether `$COPSE_DIR/settings.json` says `"cursorHooksEnabled": false` (rather than
/// not saying anything).
fn explicitly_disabled(copse_dir: &Path) -> bool {
    std::fs::read(Settings::path_in(copse_dir))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| {
            v.get("cursorHooksEnabled")
                .and_then(serde_json::Value::as_bool)
        })
        == Some(false)
}

/// Whether the agent can use nothing of this call's answer but a message for the
/// user: an observation the engine detaches everywhere else (`notification`,
/// `sessionEnd`, `afterAgentResponse`, `afterAgentThought`) and that carries no
/// session state. The daemon runs these detached: the shim returns as soon as the
/// daemon has accepted the call. (`afterToolUse` is an observation too, but every
/// agent reads context back from its answer, so it is awaited.)
pub fn is_observation(inbound: &Inbound) -> bool {
    inbound.event.as_ref().is_some_and(|e| {
        matches!(
            e.event(),
            CanonicalEvent::Notification
                | CanonicalEvent::SessionEnd
                | CanonicalEvent::AfterAgentResponse
                | CanonicalEvent::AfterAgentThought
        )
    })
}

/// How [`handle_with`] gets engines and what it owes the caller.
pub struct Host<'a> {
    /// The engine for a config; `probe` says the engine is only asked which hooks
    /// would run (it need not open the audit store).
    pub engine: &'a dyn Fn(EngineConfig, bool) -> Engine,
    /// Commit the audit records before returning (a process about to exit); a
    /// daemon flushes after it has replied instead.
    pub flush: bool,
    /// Whether the agent sees this call's answer (one-time notices are only marked
    /// shown when it does).
    pub answered: bool,
}

/// A fresh engine per call, flushed before returning: the in-process path.
fn fresh(config: EngineConfig, probe: bool) -> Engine {
    let mut config = config;
    if probe {
        config.spine_path = None;
    }
    Engine::new(config)
}

/// Runs one agent call through an engine built from `config` (its `locations` and
/// roots already chosen by the caller, see [`engine_config`]), with the session state
/// under `config.copse_dir`: the in-process path. `payload` is what the agent wrote
/// on the shim's stdin, which `inbound` was read from.
pub fn handle(
    agent: Agent,
    inbound: &Inbound,
    payload: &[u8],
    config: EngineConfig,
) -> Result<Reply, ShimError> {
    handle_with(
        agent,
        inbound,
        payload,
        config,
        &Host {
            engine: &fresh,
            flush: true,
            answered: true,
        },
    )
}

/// [`handle`] with the engines and flushing of `host` (the daemon's warm engines).
pub fn handle_with(
    agent: Agent,
    inbound: &Inbound,
    payload: &[u8],
    config: EngineConfig,
    host: &Host<'_>,
) -> Result<Reply, ShimError> {
    let Some(event) = inbound.event.clone() else {
        note_unserved(&config.copse_dir, agent, &inbound.wire_event);
        return Ok(Reply::default());
    };
    let verbatim = Verbatim::new(agent.adopted_dialect(), &inbound.wire_event, payload);
    let copse_dir = config.copse_dir.clone();
    let canonical = event.event();
    if canonical == CanonicalEvent::SessionEnd {
        let reply = run_hooks_only(&event, inbound, &verbatim, config, host);
        end_session(&copse_dir, agent, inbound);
        return Ok(reply);
    }
    if !needs_state(canonical) && !any_hook_applies(&event, inbound, &config, host) {
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
    if !before.legacy_env.is_empty() {
        drop_legacy_env(&copse_dir, agent, inbound, &before);
    }
    let engine = (host.engine)(config, false);
    let session = open_session(&engine, agent, inbound, canonical, &before, &copse_dir);
    let mut event = event;
    if let EventPayload::AfterToolUse(result) = &mut event {
        crate::event::cap_tool_output(&mut result.output);
    }
    let verdict = session.fire_blocking_verbatim(&event, &verbatim);
    if host.flush {
        engine.flush_spine();
    }
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
    let wrote = session.written_files();
    if !changes_state(canonical, &before, host, &notices, &verdict) && wrote == before.written {
        return Ok(Reply {
            verdict,
            followups: Vec::new(),
            notices,
        });
    }
    let mut locked = Locked::open(&path)?;
    let (followups, notices) =
        settle_state(&mut locked.state, &session, &event, &verdict, notices, host);
    // What another call of the session wrote meanwhile is kept too.
    for f in wrote {
        if !locked.state.written.contains(&f) {
            locked.state.written.push(f);
        }
    }
    let excess = locked.state.written.len().saturating_sub(256);
    locked.state.written.drain(..excess);
    locked.save()?;
    Ok(Reply {
        verdict,
        followups,
        notices,
    })
}

/// Records that a session file from before overlays were kept per scope and root had
/// variables: whose hooks set them is unknown, so none of them reaches any hook.
fn drop_legacy_env(copse_dir: &Path, agent: Agent, inbound: &Inbound, before: &SessionState) {
    let names: Vec<&str> = before.legacy_env.keys().map(String::as_str).collect();
    record_error(
        copse_dir,
        agent,
        Some(&inbound.wire_event),
        &format!(
            "dropped the session environment an older copse-hooks stored without its scope ({}); it reaches no hook",
            names.join(", ")
        ),
    );
}

/// The engine's session for `inbound`, with the stored overlays put back (except at a
/// session start, which begins without them).
fn open_session(
    engine: &Engine,
    agent: Agent,
    inbound: &Inbound,
    canonical: CanonicalEvent,
    before: &SessionState,
    copse_dir: &Path,
) -> Session {
    let identity = SessionIdentity {
        conversation_id: inbound.session_id.clone(),
        generation_id: inbound.generation_id.clone().unwrap_or_default(),
        model: None,
        host: HostIdentity::default(),
    };
    let session = engine.session(identity);
    session.restore_written(before.written.iter().cloned());
    if canonical != CanonicalEvent::SessionStart {
        // The session's overlays go back in as overlays — each hook then gets only
        // its own scope and root's, and an unsandboxed hook none — never into the
        // base environment every hook starts from.
        let (overlays, dropped) = Overlays::from_stored(&before.overlays);
        if !dropped.is_empty() {
            record_error(
                copse_dir,
                agent,
                Some(&inbound.wire_event),
                &format!(
                    "dropped session environment variables the overlay filter refuses ({})",
                    dropped.join(", ")
                ),
            );
        }
        session.restore_overlays(overlays);
    }
    session
}

/// Whether this call has anything to write to the session's state file.
fn changes_state(
    canonical: CanonicalEvent,
    before: &SessionState,
    host: &Host<'_>,
    notices: &[String],
    verdict: &Verdict,
) -> bool {
    needs_state(canonical)
        || !before.legacy_env.is_empty()
        || (host.answered && !notices.is_empty())
        || verdict
            .runs
            .iter()
            .any(|r| r.outcome.queue_message.is_some() || r.outcome.session_env.is_some())
}

/// Updates the locked session state after the hooks ran: a new turn at a human prompt,
/// the overlays a session start accepted, the follow-ups queued, those a completed stop
/// releases within the continuation budget, the notices not announced before. Returns
/// the follow-ups and the notices to answer with.
fn settle_state(
    state: &mut SessionState,
    session: &Session,
    event: &EventPayload,
    verdict: &Verdict,
    notices: Vec<String>,
    host: &Host<'_>,
) -> (Vec<String>, Vec<String>) {
    let canonical = event.event();
    if canonical == CanonicalEvent::BeforeSubmitPrompt {
        // A human prompt: a new turn tree and a fresh continuation budget.
        state.epoch += 1;
        state.used = 0;
    }
    state.legacy_env.clear();
    if canonical == CanonicalEvent::SessionStart {
        // What the engine's session accepted, per scope and root: filtered by the
        // same door ([`crate::overlay::refusal`]) before it is stored.
        state.overlays = session.overlays().to_stored();
    }
    for run in &verdict.runs {
        if let Some(q) = &run.outcome.queue_message {
            state.pending.push(Pending {
                text: q.text.clone(),
                epoch: state.epoch,
            });
        }
    }
    let mut followups = Vec::new();
    let completed = match event {
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
    if host.answered {
        state.announced.extend(notices.iter().cloned());
    }
    (followups, notices)
}

/// Forgets a session's state when `inbound` is its end (an agent that resumes it
/// starts afresh). The daemon does this before answering a session end whose hooks it
/// runs detached.
pub fn end_session(copse_dir: &Path, agent: Agent, inbound: &Inbound) {
    let ends = inbound
        .event
        .as_ref()
        .is_some_and(|e| e.event() == CanonicalEvent::SessionEnd);
    if ends && !inbound.session_id.is_empty() {
        let path = state_path(copse_dir, agent, &inbound.session_id);
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(path.with_extension("lock"));
    }
}

/// Runs an event's hooks with no session state (session end).
fn run_hooks_only(
    event: &EventPayload,
    inbound: &Inbound,
    verbatim: &Verbatim,
    config: EngineConfig,
    host: &Host<'_>,
) -> Reply {
    if !any_hook_applies(event, inbound, &config, host) {
        return Reply::default();
    }
    let engine = (host.engine)(config, false);
    let session = engine.session(SessionIdentity {
        conversation_id: inbound.session_id.clone(),
        generation_id: inbound.generation_id.clone().unwrap_or_default(),
        model: None,
        host: HostIdentity::default(),
    });
    let verdict = session.fire_blocking_verbatim(event, verbatim);
    if host.flush {
        engine.flush_spine();
    }
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
fn any_hook_applies(
    event: &EventPayload,
    inbound: &Inbound,
    config: &EngineConfig,
    host: &Host<'_>,
) -> bool {
    let engine = (host.engine)(config.clone(), true);
    // The built-in guard judges every tool gate and permission request: those always
    // go to the engine.
    if engine.guard_active()
        && matches!(
            event.event(),
            CanonicalEvent::ToolGate | CanonicalEvent::PermissionRequest
        )
    {
        return true;
    }
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
    let plan = engine.plan(event, &ctx, &mut |_| changed = true, &mut |_| {});
    changed || !plan.hooks.is_empty() || !plan.blocks.is_empty()
}

/// The canonicalised form of each root that exists.
pub fn canonical_roots(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .filter_map(|r| std::fs::canonicalize(r).ok())
        .collect()
}

/// Which path served an agent's shim calls last: `$COPSE_DIR/shim/served/<agent>.json`
/// (`copse-hooks doctor` shows it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Served {
    /// `daemon` or `in-process`.
    pub path: String,
    /// Why the shim fell back to in-process, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// When this path started serving (ms since the epoch).
    pub since_ms: u64,
}

/// The record of which path served `agent`.
pub fn served_path(copse_dir: &Path, agent: Agent) -> PathBuf {
    copse_dir
        .join("shim")
        .join("served")
        .join(format!("{}.json", agent.as_str()))
}

/// Reads the record of which path served `agent`.
pub fn read_served(copse_dir: &Path, agent: Agent) -> Option<Served> {
    let bytes = std::fs::read(served_path(copse_dir, agent)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Records which path served `agent` (best effort, and only when it changed: the
/// common call reads one small file and writes nothing).
pub fn record_served(copse_dir: &Path, agent: Agent, path: &str, fallback: Option<&str>) {
    if let Some(old) = read_served(copse_dir, agent)
        && old.path == path
        && old.fallback.as_deref() == fallback
    {
        return;
    }
    let served = Served {
        path: path.to_string(),
        fallback: fallback.map(str::to_string),
        since_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0),
    };
    let file = served_path(copse_dir, agent);
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(".{}.{}.tmp", agent.as_str(), std::process::id()));
    let Ok(text) = serde_json::to_vec(&served) else {
        return;
    };
    if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, &file).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// The shim's error log: `$COPSE_DIR/shim-errors.log`, one JSON line per call that
/// failed (closed on a gated event) or fell back.
pub fn error_log(copse_dir: &Path) -> PathBuf {
    copse_dir.join("shim-errors.log")
}

/// Appends why a call failed or fell back to the error log (best effort: the answer
/// matters more).
pub fn record_error(copse_dir: &Path, agent: Agent, wire: Option<&str>, reason: &str) {
    use std::io::Write as _;
    let line = serde_json::json!({
        "at_ms": std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0),
        "agent": agent.as_str(),
        "event": wire,
        "error": reason,
    });
    let _ = std::fs::create_dir_all(copse_dir);
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(error_log(copse_dir))
    {
        let _ = writeln!(f, "{line}");
    }
}

/// Records, once per agent and event name, that the shim was called for an event it
/// does not serve: the agent's own event that copse does not wire (with the
/// dialect's reason), or a name no protocol we know uses (a vendor's new event). The
/// call itself is answered neutrally; the line in `shim-errors.log` is what tells
/// the user (and `doctor`) that hooks on that event do not run. "Once" is kept by a
/// marker file per (agent, event) under `$COPSE_DIR/shim/unserved/`, so the common
/// repeat costs one failed `create_new`.
pub fn note_unserved(copse_dir: &Path, agent: Agent, wire: &str) {
    // The name comes from the payload: only a plain name becomes a file name.
    let plain = !wire.is_empty()
        && wire.len() <= 64
        && wire
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let marker_name = if plain { wire } else { "_unnamed" };
    let dir = copse_dir.join("shim").join("unserved").join(agent.as_str());
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let first = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(marker_name))
        .is_ok();
    if !first {
        return;
    }
    let reason = if super::is_own_event(agent, wire) {
        let why = match agent {
            Agent::Claude => crate::dialect::claude::unsupported_reason(wire),
            Agent::Codex => crate::dialect::codex::unsupported_reason(wire),
            Agent::Gemini => crate::dialect::gemini::unsupported_reason(wire),
            Agent::Cursor => crate::dialect::cursor::unsupported_reason(wire),
            Agent::Copilot => crate::dialect::copilot::unsupported_reason(wire),
        }
        .unwrap_or("copse-hooks does not serve it");
        format!(
            "{agent} event `{wire}` is not served ({why}); answered neutrally, hooks on it do not run (recorded once)"
        )
    } else {
        format!(
            "`{wire}` is not an event of {agent}'s hook protocol that copse-hooks knows; answered neutrally, hooks on it do not run (recorded once)"
        )
    };
    record_error(copse_dir, agent, Some(wire), &reason);
}

/// The most recent lines of the shim's error log, as warnings for `doctor`: how many
/// calls failed closed, fell back or were unserved, and the latest few, each naming
/// the agent, the event and why. Only the log's tail is read (a long-lived log stays
/// cheap); texts that came from a payload are escaped.
pub fn error_warnings(copse_dir: &Path, latest: usize) -> Vec<String> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    const TAIL: u64 = 64 * 1024;
    let path = error_log(copse_dir);
    let Ok(mut file) = std::fs::File::open(&path) else {
        return Vec::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(TAIL);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return Vec::new();
    }
    let mut bytes = Vec::new();
    if file.take(TAIL).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if start > 0 && !lines.is_empty() {
        // The first line may be cut.
        lines.remove(0);
    }
    if lines.is_empty() {
        return Vec::new();
    }
    let more = if start > 0 { "more than " } else { "" };
    let mut out = vec![format!(
        "{more}{} shim call(s) failed closed, fell back or were not served: see {}",
        lines.len(),
        path.display()
    )];
    for line in lines.iter().rev().take(latest) {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let field = |k: &str| v.get(k).and_then(serde_json::Value::as_str).unwrap_or("-");
        out.push(super::escape_text(&format!(
            "shim {} {}: {}",
            field("agent"),
            field("event"),
            field("error")
        )));
    }
    out
}
