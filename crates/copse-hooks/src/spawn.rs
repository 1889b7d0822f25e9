//! spawn — one child process: group, pipes, caps, timeout, kill, drain, env, sandbox
//! hand-off. Knows nothing about hooks.
//!
//! # Theory of operation
//!
//! [`run`] starts `/bin/sh -c <command>` with a cleared environment, in its own process
//! group (pgid = its pid), so that one `killpg` reaches everything the hook forked unless
//! it deliberately escaped with `setsid`. On Linux the child also arms
//! `PR_SET_PDEATHSIG(SIGKILL)` so a crashed host cannot leave hooks running. The calling
//! thread then supervises everything with a single `poll(2)` loop: no helper threads, so
//! a hook costs one spawn and a handful of syscalls.
//!
//! The spawn itself is as cheap as a raw `posix_spawn`. On Linux it is a vfork-style
//! `clone(CLONE_VM | CLONE_VFORK)` done by hand (`spawn/vfork.rs`): the parent-death
//! signal must be armed in the child, std only allows that through `pre_exec`, and
//! `pre_exec` turns std's spawn into a full `fork`, which copies the host's page tables
//! and then charges the host copy-on-write faults. The clone also yields the pidfd.
//! Elsewhere std's `Command` is used (`spawn/command.rs`), which keeps its `posix_spawn`
//! path unless a [`ChildSetup`] needs a `pre_exec`.
//!
//! Stdin goes through a non-blocking pipe. As much of it as the pipe takes (all of a usual
//! payload) is written right after the spawn, while we still hold the child's end, so that
//! write cannot raise SIGPIPE; the rest is written as the child drains it, so a child that
//! never reads (or closes stdin) only costs us an `EAGAIN`/`EPIPE`, never a blocked
//! writer, and SIGPIPE is blocked on the calling thread meanwhile so an `EPIPE` cannot kill
//! a host that did not ignore it. Stdout and stderr are read concurrently for the same
//! reason: a child blocked on a full pipe we are not reading would look like a hang.
//! Stdout beyond its cap means the answer is unusable, so the group is killed at once;
//! stderr is diagnostics only, so beyond its cap it is read and discarded and the child
//! runs on.
//!
//! The main child's exit is observed through a pidfd in the same poll set, not through
//! pipe EOF: a background process that inherited stdout would otherwise hold the run open
//! forever. Once the main child has exited the pipes get a short bounded `drain` for the
//! answer to arrive, then the group is SIGKILLed (always: no hook process outlives its
//! run) and the child is reaped. The child is never reaped before that final kill, so its
//! pid, which is also the group id, cannot be recycled under our `killpg`. On timeout the
//! group gets SIGTERM, then SIGKILL after `kill_grace` (or as soon as the main child has
//! gone), then the same bounded drain. Every wait is computed from `Instant` deadlines, so
//! a run never takes longer than `timeout + kill_grace + drain` plus scheduling slack.

// `command` is only used off Linux, but compiled on Linux too so its test runs there.
#[cfg(unix)]
#[cfg_attr(all(target_os = "linux", not(test)), allow(dead_code))]
mod command;
#[cfg(unix)]
mod contain;
#[cfg(target_os = "linux")]
mod escape;
mod layer;
#[cfg(unix)]
mod unix;
#[cfg(target_os = "linux")]
mod vfork;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

#[cfg(unix)]
pub(crate) use contain::host_pid;
#[cfg(target_os = "linux")]
pub(crate) use contain::mount_private_proc_in_child;
#[cfg(unix)]
pub use contain::{contained, kill_all, layers, private_proc};
#[cfg(all(unix, feature = "test-seams"))]
pub use contain::{set_containment_for_benchmarks, set_private_proc_for_benchmarks};
pub use layer::Layer;
#[cfg(unix)]
pub use unix::resident::{Resident, StdinWriter, start};

/// Work to do in the child between its creation and exec (e.g. apply a sandbox).
///
/// # Safety
///
/// The contract below is a soundness precondition of [`run`], hence an `unsafe trait`:
/// implementations must only make async-signal-safe calls (no allocation, no locks) and
/// must not panic. On Linux the child is created vfork-style: until it execs it *shares*
/// the host's memory (on a small stack of its own, 256 KiB) while the host's other threads
/// keep running, so it may write to its own locals but never to the host's data, and any
/// lock (the allocator's included) may be held by another thread at any moment. Elsewhere
/// it is a forked copy of the host, where a lock may be stuck held for the same reason.
///
/// It runs after the child has entered its own process group and, on Linux, armed its
/// parent-death signal, with every caught signal reset to its default action, so no host
/// handler can run in it. Which signals are blocked meanwhile is not part of the contract
/// (on Linux: the spawning thread's mask where the kernel resets the handlers at the
/// clone, every signal where the child has to reset them itself); the hook execs with
/// none blocked. Returning `Err` aborts the spawn: [`run`] fails with
/// [`SpawnError::Start`]. Only the raw OS error code crosses over to the host; an error
/// without one (e.g. `io::Error::other`, which allocates anyway) arrives as `EINVAL`.
pub unsafe trait ChildSetup: Send + Sync {
    /// Applies the setup in the freshly created child.
    fn apply_in_child(&self) -> std::io::Result<()>;

    /// Whether [`apply_in_child`](ChildSetup::apply_in_child) mounts the run's private
    /// `/proc` itself (the sandbox does, in the mount namespace it makes for its binds,
    /// after it has read what it needs from the host's `/proc`). When `false` (the
    /// default), the child mounts it before the setup runs.
    fn mounts_private_proc(&self) -> bool {
        false
    }
}

/// One process to run.
pub struct SpawnRequest<'a> {
    /// Shell command, run as `/bin/sh -c <command>`.
    pub command: &'a str,
    /// Working directory of the child.
    pub cwd: &'a Path,
    /// The complete environment of the child: nothing is inherited from the host.
    pub env: &'a [(OsString, OsString)],
    /// Bytes written to the child's stdin, which is then closed.
    pub stdin: &'a [u8],
    /// How long the main child may run before its group is terminated. A duration too
    /// large to add to an `Instant` (e.g. `Duration::MAX`) means no timeout.
    pub timeout: Duration,
    /// Output caps and kill/drain timings.
    pub limits: Limits,
    /// Optional work done in the child between its creation and exec.
    pub child_setup: Option<&'a dyn ChildSetup>,
}

/// Output caps and the timings of the kill sequence.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Bytes of stdout kept; one more byte kills the group ([`Termination::StdoutOverflow`]).
    pub stdout_cap: usize,
    /// Bytes of stderr kept; the rest is read and discarded.
    pub stderr_cap: usize,
    /// SIGTERM -> SIGKILL grace on timeout.
    pub kill_grace: Duration,
    /// How long the pipes may stay open after the main child exited (or was SIGKILLed).
    pub drain: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            stdout_cap: 1_000_000,
            stderr_cap: 1_000_000,
            kill_grace: Duration::from_millis(500),
            drain: Duration::from_millis(100),
        }
    }
}

/// Why the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// The child exited by itself (exit code or signal).
    Exited,
    /// We killed the group because the timeout elapsed.
    TimedOut,
    /// We killed the group because stdout exceeded `stdout_cap`.
    ///
    /// Also reported when the overflow happened during the drain, after the main child had
    /// already exited by itself; `exit_code`/`signal` then describe that exit.
    StdoutOverflow,
}

/// What a finished run produced.
#[derive(Debug)]
pub struct SpawnOutput {
    /// At most `stdout_cap` bytes.
    pub stdout: Vec<u8>,
    /// At most `stderr_cap` bytes.
    pub stderr: Vec<u8>,
    /// Stderr exceeded `stderr_cap` and was cut.
    pub stderr_truncated: bool,
    /// The exit code; `None` when the child died of a signal, and always `None` when we
    /// started killing it (timeout or overflow) before it exited.
    pub exit_code: Option<i32>,
    /// The signal that terminated the main child, if any.
    pub signal: Option<i32>,
    /// Why the run ended.
    pub termination: Termination,
    /// The child exited but something (normally a background process of its group) still
    /// held stdout/stderr open past the drain.
    pub leaked_pipes: bool,
    /// A process of the run left (or tried to leave) the child's process group
    /// (`setsid`, `setpgid`), and was killed with the run: reported by the kernel as it
    /// happened (a seccomp listener, `spawn/escape.rs`), or, where that is unavailable,
    /// found while the run went on or when it was killed, or holding the pipes past the
    /// drain.
    pub leaked: bool,
    /// Bytes of stdin the child's pipe accepted before the child exited or closed stdin
    /// (accepted by the pipe, not necessarily read).
    pub stdin_written: usize,
    /// Wall-clock time just before the spawn.
    pub started_at: SystemTime,
    /// Spawn -> result.
    pub duration: Duration,
}

/// Why a run produced no [`SpawnOutput`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The child could not be started (the spawn or exec failed, `cwd` is missing, the
    /// command, cwd or environment contains a NUL byte, or the [`ChildSetup`] failed or
    /// killed the child).
    #[error("failed to start `{command}` in {cwd}: {cause}")]
    Start {
        /// The command as given.
        command: String,
        /// The working directory as given.
        cwd: PathBuf,
        /// The underlying error.
        cause: std::io::Error,
    },
    /// Supervising a started child failed (a poll/read/wait error). The child's group was
    /// killed and the child reaped before this was returned.
    #[error("failed to supervise `{command}`: {cause}")]
    Io {
        /// The command as given.
        command: String,
        /// The underlying error.
        cause: std::io::Error,
    },
}

/// Runs one child process to completion and returns what it produced.
///
/// Blocking and synchronous; concurrent runs are fine (one per thread). It never panics and
/// returns within `timeout + kill_grace + drain` plus scheduling slack; when it returns, every
/// process of the child's group has been sent SIGKILL and the child itself has been reaped.
///
/// On Linux the child's parent-death signal is tied to the *thread* that forked it, so `run`
/// must be called from a thread that outlives the child. It does by construction, since it
/// blocks until the child is gone; just don't spawn from a thread that may be torn down
/// while a child it forked is expected to live on (nothing here does that).
///
/// The host must not reap children it does not own (`waitpid(-1)`, or SIGCHLD set to
/// `SIG_IGN`): the exit status would be lost and `run` reports [`SpawnError::Io`].
pub fn run(req: &SpawnRequest<'_>) -> Result<SpawnOutput, SpawnError> {
    #[cfg(unix)]
    {
        unix::run(req)
    }
    #[cfg(not(unix))]
    {
        Err(SpawnError::Start {
            command: req.command.to_owned(),
            cwd: req.cwd.to_path_buf(),
            cause: std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "hooks can only be spawned on Unix",
            ),
        })
    }
}
