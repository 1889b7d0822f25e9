//! The per-call process transport: `sh -c` in its own process group, the packet on
//! stdin, capped capture, timeout, kill and drain (all in [`crate::spawn`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{End, Exchange};
use crate::env::set_var;
use crate::outcome::{Failure, FailureKind, SandboxState};
use crate::run::contain::Contained;
use crate::spawn::{self, Limits, SpawnRequest, Termination};

/// One per-call run.
pub(crate) struct Call<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    pub env: Vec<(OsString, OsString)>,
    pub stdin: &'a [u8],
    pub timeout: Duration,
    pub limits: Limits,
    pub contained: Contained,
    /// The variable naming a fresh, empty file the hook may write to (Claude's
    /// `CLAUDE_ENV_FILE`); its content comes back in [`Exchange::env_script`].
    pub env_file: Option<&'static str>,
}

/// Runs the call.
pub(crate) fn exchange(mut call: Call<'_>) -> Exchange {
    let (mut ex, started) = Exchange::starting(call.contained.state());
    let prepared = match std::mem::replace(&mut call.contained, Contained::Off) {
        Contained::Refused(failure) => {
            ex.end = End::Failed(failure);
            return ex;
        }
        Contained::Enforced(p) => {
            set_var(&mut call.env, "TMPDIR", p.tmpdir().as_os_str());
            Some(p)
        }
        Contained::Off | Contained::Unenforced => None,
    };
    let env_file = call.env_file.and_then(|var| {
        Some((
            var,
            fresh_env_file(prepared.as_deref().map(|p| p.tmpdir()))?,
        ))
    });
    if let Some((var, path)) = &env_file {
        set_var(&mut call.env, var, path.as_os_str());
    }
    let request = SpawnRequest {
        command: call.command,
        cwd: call.cwd,
        env: &call.env,
        stdin: call.stdin,
        timeout: call.timeout,
        limits: call.limits,
        child_setup: prepared.as_deref().map(|p| p.as_child_setup()),
    };
    match spawn::run(&request) {
        Err(e) => {
            ex.duration = started.elapsed();
            ex.end = End::Failed(start_failure(&e));
        }
        Ok(out) => {
            ex.started_at = out.started_at;
            ex.duration = out.duration;
            ex.exit_code = out.exit_code;
            ex.leaked = out.leaked;
            // A run the sandbox denied fails whatever it printed: detection reads the
            // kernel's own records, never the hook's output.
            let blocked = prepared
                .as_ref()
                .filter(|_| out.exit_code != Some(0) || out.termination != Termination::Exited)
                .map(|p| p.detect(out.exit_code))
                .filter(|v| v.blocked);
            ex.end = if let Some(v) = blocked {
                ex.sandbox = SandboxState::Blocked;
                End::Failed(Failure {
                    kind: FailureKind::Sandbox,
                    message: format!("was blocked by the sandbox ({})", v.reasons.join("; ")),
                })
            } else {
                match out.termination {
                    Termination::TimedOut => End::Failed(super::timed_out(call.timeout)),
                    Termination::StdoutOverflow => End::Failed(Failure {
                        kind: FailureKind::Oversize,
                        message: format!(
                            "printed more than {} bytes on stdout",
                            call.limits.stdout_cap
                        ),
                    }),
                    Termination::Exited => End::Answered {
                        exit_code: out.exit_code,
                        signal: out.signal,
                        stderr_from: 0,
                    },
                }
            };
            ex.stdout = out.stdout;
            ex.stderr = out.stderr;
        }
    }
    if let Some((_, path)) = env_file {
        ex.env_script = read_env_file(&path);
        let _ = std::fs::remove_file(&path);
    }
    ex
}

/// A spawn error as a run failure: out of resources, or could not start.
fn start_failure(e: &spawn::SpawnError) -> Failure {
    let errno = match e {
        spawn::SpawnError::Start { cause, .. } | spawn::SpawnError::Io { cause, .. } => {
            cause.raw_os_error()
        }
    };
    match errno {
        Some(errno @ (libc::EMFILE | libc::ENFILE | libc::EAGAIN | libc::ENOMEM)) => Failure {
            kind: FailureKind::Resources,
            message: format!(
                "could not be started: the host is out of resources ({})",
                std::io::Error::from_raw_os_error(errno)
            ),
        },
        _ => Failure {
            kind: FailureKind::Spawn,
            message: format!("failed to start: {e}"),
        },
    }
}

/// The most bytes of an environment file handed back.
const ENV_FILE_CAP: u64 = 64 * 1024;

/// A fresh, empty environment file (created exclusively, so nothing else can have
/// planted it), in the hook's private TMPDIR when it has one.
fn fresh_env_file(tmpdir: Option<&Path>) -> Option<PathBuf> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = tmpdir.map_or_else(std::env::temp_dir, Path::to_path_buf);
    let path = dir.join(format!("copse-env-{}-{n}.sh", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .ok()?;
    Some(path)
}

/// What a hook wrote to its env file (capped; a regular file only).
fn read_env_file(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(ENV_FILE_CAP)
        .read_to_string(&mut text)
        .ok()?;
    Some(text).filter(|t| !t.trim().is_empty())
}
