//! `copse-hooks serve [--socket PATH]` and `copse-hooks daemon start|stop|status`:
//! the JSON-RPC server (all of it lives in `copse-hooks-server`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use copse_hooks::EngineConfig;
use copse_hooks_server::socket::{self, DaemonStatus};
use copse_hooks_server::{ConnectionEnd, ServerConfig};

use crate::args::Global;
use crate::host::{self, Origin};

/// The variables a socket server's hooks start from: only what locates the user and
/// their locale. A socket server (the daemon) was started by whichever agent or shell
/// came first; what else was in that environment (tokens, one agent's variables) is
/// not for the hooks of every later client. `shim/handle` calls bring their own.
/// `COPSE_HOOK_DEPTH` and its `COPSE_HOOK_TOKEN` are kept for the recursion guard (a server started inside a hook
/// runs none); the engine never passes it on as it is.
const MINIMAL_ENV: [&str; 12] = [
    "COPSE_HOOK_DEPTH",
    "COPSE_HOOK_TOKEN",
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "COPSE_DIR",
];

/// This process's environment cut down to [`MINIMAL_ENV`] and `LC_*`.
fn minimal_env() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    std::env::vars_os()
        .filter(|(k, _)| {
            k.to_str()
                .is_some_and(|k| MINIMAL_ENV.contains(&k) || k.starts_with("LC_"))
        })
        .collect()
}

/// The server's config; `minimal`: hooks start from [`minimal_env`] rather than this
/// process's whole environment (a socket server).
fn config(minimal: bool) -> ServerConfig {
    ServerConfig::new(Arc::new(
        move |p: &copse_hooks_wire::rpc::InitializeParams| {
            let roots = p.workspace_roots.iter().map(PathBuf::from).collect();
            host::hosted_with(roots, p.trusted, p.enabled, Origin::Client, |c| {
                if minimal {
                    c.environment = minimal_env();
                }
            })
            .map_err(|e| format!("{e:#}"))
        },
    ))
}

/// The daemon's socket: `$COPSE_DIR/daemon.sock`.
pub fn daemon_socket() -> PathBuf {
    EngineConfig::process_copse_dir().join("daemon.sock")
}

pub fn serve(_global: &Global, socket_path: Option<&Path>) -> Result<ExitCode> {
    match socket_path {
        None => {
            let end = copse_hooks_server::serve_stdio(config(false));
            Ok(match end {
                ConnectionEnd::Closed | ConnectionEnd::Exit { clean: true } => ExitCode::SUCCESS,
                ConnectionEnd::Exit { clean: false } => ExitCode::from(1),
            })
        }
        Some(path) => {
            unblock_termination_signals();
            let bound = socket::bind(path)?;
            errln!(
                "copse-hooks {} serving on {} (pid {})",
                env!("CARGO_PKG_VERSION"),
                crate::output::path(path),
                std::process::id()
            );
            socket::serve_socket(bound, config(true))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A signal mask survives exec: a daemon started by a process that blocks INT, TERM
/// and HUP (the shim takes them with `sigwait`) would never see `daemon stop`'s TERM.
/// The socket server handles them itself, so it unblocks them first thing, before any
/// of its threads exists (they inherit the mask).
fn unblock_termination_signals() {
    // SAFETY: all-zeroes is a valid sigset_t; sigemptyset/sigaddset initialise it and
    // pthread_sigmask only reads it (the old mask is not wanted).
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, signal);
        }
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

pub fn daemon_start(global: &Global) -> Result<ExitCode> {
    let path = std::path::absolute(daemon_socket()).unwrap_or_else(|_| daemon_socket());
    let log = path.with_file_name("daemon.log");
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let (pid, started) = socket::start(&exe, &path, &log)?;
    if global.json {
        let out = copse_hooks_wire::output::DaemonStartOutput {
            version: copse_hooks_wire::OUTPUT_VERSION,
            running: true,
            started,
            pid,
            socket: path.display().to_string(),
            log: log.display().to_string(),
        };
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    let pid = pid.map_or_else(|| "?".to_string(), |p| p.to_string());
    if started {
        outln!(
            "daemon started (pid {pid}) on {}; log: {}",
            crate::output::clean(&path.display().to_string()),
            crate::output::clean(&log.display().to_string())
        );
    } else {
        outln!(
            "daemon already running (pid {pid}) on {}",
            crate::output::clean(&path.display().to_string())
        );
        // Another build than this one: say so (the next shim call replaces it).
        let report = daemon_report();
        let this = exe.display().to_string();
        let other = report.executable.as_deref().is_some_and(|e| e != this)
            || report
                .daemon_version
                .as_deref()
                .is_some_and(|v| v != env!("CARGO_PKG_VERSION"))
            || report
                .executable_state
                .as_deref()
                .is_some_and(|s| s != "current");
        if other {
            outln!(
                "  it is not this build ({}, {}): `copse-hooks daemon stop` then `daemon start` to replace it now; the next shim call replaces it anyway",
                crate::output::clean(&this),
                env!("CARGO_PKG_VERSION")
            );
            for line in daemon_detail_lines(&report) {
                outln!("  {line}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn daemon_stop(global: &Global) -> Result<ExitCode> {
    let path = daemon_socket();
    let pid = socket::stop(&path)?;
    if global.json {
        let out = copse_hooks_wire::output::DaemonStopOutput {
            version: copse_hooks_wire::OUTPUT_VERSION,
            running: false,
            stopped: pid,
        };
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        outln!(
            "daemon stopped (pid {})",
            pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into())
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// What `daemon status` reports: the socket (absolute: every agent's shim connects
/// there, whatever the cwd), and for a running daemon its pid and what it recorded
/// about its build (only when that names the pid holding the socket), with whether
/// its executable is still that file.
pub fn daemon_report() -> copse_hooks_wire::output::DaemonStatusOutput {
    let path = std::path::absolute(daemon_socket()).unwrap_or_else(|_| daemon_socket());
    let (word, pid) = match socket::status(&path) {
        DaemonStatus::Running { pid } => ("running", pid),
        DaemonStatus::Stale => ("stale", None),
        DaemonStatus::Stopped => ("stopped", None),
    };
    let info = pid.and_then(|_| socket::info(&path));
    let state = info
        .as_ref()
        .and_then(|i| socket::exe_state_of(i.pid, Path::new(&i.exe)));
    copse_hooks_wire::output::DaemonStatusOutput {
        version: copse_hooks_wire::OUTPUT_VERSION,
        status: word.to_string(),
        pid,
        socket: path.display().to_string(),
        daemon_version: info.as_ref().map(|i| i.version.clone()),
        executable: info.as_ref().map(|i| i.exe.clone()),
        executable_state: state.map(|s| s.as_str().to_string()),
        started_ms: info.as_ref().map(|i| i.started_ms),
    }
}

/// The lines under a running daemon's first line: version, executable (and a note
/// when it is no longer the file at that path), start time.
pub fn daemon_detail_lines(report: &copse_hooks_wire::output::DaemonStatusOutput) -> Vec<String> {
    let clean = crate::output::clean;
    let mut lines = Vec::new();
    if let Some(v) = &report.daemon_version {
        lines.push(format!("version:    {}", clean(v)));
    }
    if let Some(exe) = &report.executable {
        let note = match report.executable_state.as_deref() {
            Some("current") | None => String::new(),
            Some(state) => format!(
                " ({}: the next shim call replaces this daemon)",
                clean(state)
            ),
        };
        lines.push(format!("executable: {}{note}", clean(exe)));
    }
    if let Some(ms) = report.started_ms {
        lines.push(format!(
            "started:    {}",
            crate::time::format_time(ms, false)
        ));
    }
    lines
}

pub fn daemon_status(global: &Global) -> Result<ExitCode> {
    let report = daemon_report();
    let code = if report.status == "running" { 0 } else { 3 };
    if global.json {
        outln!("{}", serde_json::to_string(&report)?);
        return Ok(ExitCode::from(code));
    }
    let socket_text = crate::output::clean(&report.socket);
    match report.status.as_str() {
        "running" => {
            outln!(
                "running (pid {}) on {socket_text}",
                report
                    .pid
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "?".into()),
            );
            for line in daemon_detail_lines(&report) {
                outln!("  {line}");
            }
        }
        "stale" => {
            outln!("not running: {socket_text} is a stale socket (the next start replaces it)")
        }
        _ => outln!("not running ({socket_text} does not exist)"),
    }
    Ok(ExitCode::from(code))
}
