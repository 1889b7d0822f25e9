//! `copse-hooks shim --agent NAME`: the command an agent runs as its hook.
//!
//! Reads the agent's payload on stdin, turns it into a canonical event, runs it
//! through an engine and answers in that agent's format. Never fails open by
//! accident: any internal error — unreadable payload, state or settings trouble, even
//! a panic — is answered with the agent's block (exit 2, the reason on stderr) on a
//! gated event, and recorded in `$COPSE_DIR/shim-errors.log`.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use copse_hooks::EngineConfig;
use copse_hooks::Settings;
use copse_hooks::agent::{self, Agent, Answer, Inbound, Reply};

/// The most payload bytes read (a larger payload is an error, which fails closed).
const MAX_PAYLOAD: u64 = 64 << 20;

/// Where a shim call's engine runs. Today only in this process; the daemon backend
/// (forwarding to `$COPSE_DIR/daemon.sock`) plugs in here.
pub enum Backend {
    /// Build an engine in this process for the call.
    InProcess,
}

impl Backend {
    /// The backend for this call.
    pub fn select() -> Backend {
        Backend::InProcess
    }

    fn call(&self, agent: Agent, inbound: &Inbound) -> Result<Reply, String> {
        match self {
            Backend::InProcess => in_process(agent, inbound),
        }
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Builds the engine config for one call: settings decide enablement and trust; the
/// shim's own list of config locations replaces discovery's.
pub fn engine_config(agent: Agent, inbound: &Inbound) -> Result<EngineConfig, String> {
    let roots = agent::shim::canonical_roots(&agent::workspace_roots(agent, inbound, &env));
    let mut config = EngineConfig::from_process(roots.clone());
    let settings =
        Settings::load(&Settings::path_in(&config.copse_dir)).map_err(|e| e.to_string())?;
    // Registering the shim in an agent is the opt-in: hooks run unless the settings
    // explicitly turn them off (`copse-hooks disable`).
    config.hooks_enabled = settings.cursor_hooks_enabled || !explicitly_disabled(&config.copse_dir);
    config.trusted = settings.trusted_workspaces.clone();
    config.require_sandbox = settings.require_sandbox;
    config.sandbox_writable = settings.sandbox_writable_paths.clone();
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
    let also = agent::also_from_settings(&settings.other, agent);
    config.locations = Some(agent::locations(
        agent,
        &config.home,
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

fn in_process(agent: Agent, inbound: &Inbound) -> Result<Reply, String> {
    let config = engine_config(agent, inbound)?;
    agent::shim::handle(agent, inbound, config).map_err(|e| e.to_string())
}

/// Records why a call failed closed (best effort: the answer matters more).
fn record_error(agent: Agent, wire: Option<&str>, reason: &str) {
    let copse_dir = EngineConfig::from_process(Vec::new()).copse_dir;
    let line = serde_json::json!({
        "at_ms": std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0),
        "agent": agent.as_str(),
        "event": wire,
        "error": reason,
    });
    let _ = std::fs::create_dir_all(&copse_dir);
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(error_log(&copse_dir))
    {
        let _ = writeln!(f, "{line}");
    }
}

/// The shim's error log.
pub fn error_log(copse_dir: &Path) -> PathBuf {
    copse_dir.join("shim-errors.log")
}

fn serve(agent: Agent, payload: &[u8]) -> Answer {
    let inbound = match agent::read(agent, payload) {
        Ok(i) => i,
        Err(e) => {
            let reason = e.to_string();
            // Which event was it, if that much can be read?
            let wire = serde_json::from_slice::<serde_json::Value>(payload)
                .ok()
                .and_then(|v| v.get("hook_event_name")?.as_str().map(str::to_string));
            record_error(agent, wire.as_deref(), &reason);
            return agent::fail_closed(agent, wire.as_deref(), &reason);
        }
    };
    match Backend::select().call(agent, &inbound) {
        Ok(reply) => agent::answer(agent, &inbound, &reply),
        Err(reason) => {
            record_error(agent, Some(&inbound.wire_event), &reason);
            agent::fail_closed(agent, Some(&inbound.wire_event), &reason)
        }
    }
}

pub fn run(agent: Agent) -> ExitCode {
    let mut payload = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_PAYLOAD + 1)
        .read_to_end(&mut payload);
    let answer = match read {
        Err(e) => {
            let reason = format!("could not read the payload: {e}");
            record_error(agent, None, &reason);
            agent::fail_closed(agent, None, &reason)
        }
        Ok(_) if payload.len() as u64 > MAX_PAYLOAD => {
            let reason = format!("the payload is larger than {MAX_PAYLOAD} bytes");
            record_error(agent, None, &reason);
            agent::fail_closed(agent, None, &reason)
        }
        Ok(_) => match std::panic::catch_unwind(|| serve(agent, &payload)) {
            Ok(a) => a,
            Err(_) => {
                let reason = "internal error (panic)".to_string();
                let wire = serde_json::from_slice::<serde_json::Value>(&payload)
                    .ok()
                    .and_then(|v| v.get("hook_event_name")?.as_str().map(str::to_string));
                record_error(agent, wire.as_deref(), &reason);
                agent::fail_closed(agent, wire.as_deref(), &reason)
            }
        },
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(answer.stdout.as_bytes());
    let _ = out.flush();
    if !answer.stderr.is_empty() {
        let _ = std::io::stderr().write_all(answer.stderr.as_bytes());
    }
    ExitCode::from(u8::try_from(answer.exit_code).unwrap_or(2))
}
