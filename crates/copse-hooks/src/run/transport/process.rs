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
        Contained::Enforced(p, tmpdir) => {
            set_var(&mut call.env, "TMPDIR", tmpdir.as_os_str());
            Some((p, tmpdir))
        }
        Contained::Off | Contained::Unenforced => None,
    };
    let env_file = call.env_file.and_then(|var| {
        Some((
            var,
            fresh_env_file(prepared.as_ref().map(|(_, t)| t.as_path()))?,
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
        child_setup: prepared
            .as_ref()
            .map(|(p, _)| p.as_ref() as &dyn crate::spawn::ChildSetup),
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
                .map(|(p, _)| p)
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

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::path::Path;
    use std::time::Duration;

    use super::{Call, exchange};
    use crate::outcome::{Failure, FailureKind, SandboxState};
    use crate::run::contain::Contained;
    use crate::run::testing::Fixture;
    use crate::run::transport::{End, Exchange};
    use crate::spawn::Limits;

    fn path_env() -> Vec<(OsString, OsString)> {
        std::env::var_os("PATH")
            .map(|p| vec![(OsString::from("PATH"), p)])
            .unwrap_or_default()
    }

    /// `command` run in `cwd` with `stdin`, unsandboxed, with a 10 s timeout.
    fn call<'a>(command: &'a str, cwd: &'a Path, stdin: &'a [u8]) -> Call<'a> {
        Call {
            command,
            cwd,
            env: path_env(),
            stdin,
            timeout: Duration::from_secs(10),
            limits: Limits::default(),
            contained: Contained::Off,
            env_file: None,
        }
    }

    fn failure(ex: &Exchange) -> &Failure {
        match &ex.end {
            End::Failed(f) => f,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn an_exit_is_answered_with_the_packet_delivered_and_output_captured() {
        let fx = Fixture::new();
        let seen = fx.at("stdin.json");
        let command = format!("cat > {seen}; printf out; printf err >&2; exit 3");
        let ex = exchange(call(&command, fx.dir.path(), b"{\"packet\":1}"));
        assert!(
            matches!(
                ex.end,
                End::Answered {
                    exit_code: Some(3),
                    signal: None,
                    stderr_from: 0
                }
            ),
            "{:?}",
            ex.end
        );
        assert_eq!(ex.exit_code, Some(3));
        assert_eq!(ex.stdout, b"out");
        assert_eq!(ex.stderr, b"err");
        assert_eq!(ex.sandbox, SandboxState::Off);
        assert_eq!(std::fs::read(&seen).unwrap(), b"{\"packet\":1}");
        assert!(ex.env_script.is_none());
    }

    #[test]
    fn a_run_past_its_timeout_fails_with_kind_timeout() {
        let fx = Fixture::new();
        let mut c = call("sleep 30", fx.dir.path(), b"");
        c.timeout = Duration::from_millis(200);
        let ex = exchange(c);
        let f = failure(&ex);
        assert_eq!(f.kind, FailureKind::Timeout);
        assert_eq!(f.message, "timed out after 0.2s");
        assert_eq!(ex.exit_code, None);
    }

    #[test]
    fn stdout_past_the_cap_fails_with_kind_oversize() {
        let fx = Fixture::new();
        let mut c = call("head -c 100000 /dev/zero", fx.dir.path(), b"");
        c.limits.stdout_cap = 64;
        let ex = exchange(c);
        let f = failure(&ex);
        assert_eq!(f.kind, FailureKind::Oversize);
        assert_eq!(f.message, "printed more than 64 bytes on stdout");
        assert!(ex.stdout.len() <= 64, "{} bytes kept", ex.stdout.len());
    }

    #[test]
    fn a_refused_sandbox_never_spawns() {
        let fx = Fixture::new();
        let marker = fx.path("ran");
        let command = format!("touch {}", marker.display());
        // The same command without the refusal does create the marker.
        let control = exchange(call(&command, fx.dir.path(), b""));
        assert!(matches!(
            control.end,
            End::Answered {
                exit_code: Some(0),
                ..
            }
        ));
        assert!(marker.exists());
        std::fs::remove_file(&marker).unwrap();

        let mut c = call(&command, fx.dir.path(), b"");
        c.contained = Contained::Refused(Failure {
            kind: FailureKind::Sandbox,
            message: "was not run: the sandbox is required but unavailable".to_string(),
        });
        c.env_file = Some("COPSE_UNIT_ENV_FILE");
        let ex = exchange(c);
        let f = failure(&ex);
        assert_eq!(f.kind, FailureKind::Sandbox);
        assert_eq!(
            f.message,
            "was not run: the sandbox is required but unavailable"
        );
        assert_eq!(ex.sandbox, SandboxState::Unenforced);
        assert_eq!(ex.exit_code, None);
        assert!(ex.stdout.is_empty() && ex.env_script.is_none());
        assert!(!marker.exists(), "the hook never started");
    }

    #[test]
    fn a_working_directory_that_is_gone_is_a_spawn_failure() {
        let fx = Fixture::new();
        let marker = fx.path("ran");
        let command = format!("touch {}", marker.display());
        let gone = fx.path("gone");
        let ex = exchange(call(&command, &gone, b""));
        let f = failure(&ex);
        assert_eq!(f.kind, FailureKind::Spawn, "{}", f.message);
        assert!(f.message.starts_with("failed to start: "), "{}", f.message);
        assert!(!marker.exists());
    }

    #[test]
    fn the_env_file_comes_back_and_is_removed() {
        let fx = Fixture::new();
        let named = fx.at("named");
        let command = format!(
            "printf '%s' \"$COPSE_UNIT_ENV_FILE\" > {named}; \
             echo 'export A=1' >> \"$COPSE_UNIT_ENV_FILE\"; \
             printf 'export B=2' >> \"$COPSE_UNIT_ENV_FILE\""
        );
        let mut c = call(&command, fx.dir.path(), b"");
        c.env_file = Some("COPSE_UNIT_ENV_FILE");
        let ex = exchange(c);
        assert!(matches!(
            ex.end,
            End::Answered {
                exit_code: Some(0),
                ..
            }
        ));
        assert_eq!(ex.env_script.as_deref(), Some("export A=1\nexport B=2"));
        let path = std::fs::read_to_string(&named).unwrap();
        assert!(!path.is_empty(), "the variable named a file");
        assert!(!Path::new(&path).exists(), "{path} was removed");

        // A file left empty gives nothing back, and is removed too.
        let record = format!("printf '%s' \"$COPSE_UNIT_ENV_FILE\" > {named}");
        let mut c = call(&record, fx.dir.path(), b"");
        c.env_file = Some("COPSE_UNIT_ENV_FILE");
        let ex = exchange(c);
        assert!(ex.env_script.is_none());
        let path = std::fs::read_to_string(&named).unwrap();
        assert!(!path.is_empty() && !Path::new(&path).exists());

        // No env file asked for: the variable is not set.
        let ex = exchange(call(
            "test -z \"${COPSE_UNIT_ENV_FILE+set}\"",
            fx.dir.path(),
            b"",
        ));
        assert!(
            matches!(
                ex.end,
                End::Answered {
                    exit_code: Some(0),
                    ..
                }
            ),
            "{:?}",
            ex.end
        );
    }
}
