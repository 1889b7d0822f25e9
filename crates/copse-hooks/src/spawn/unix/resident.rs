//! A child that outlives the call that started it (a persistent hook): the same launch
//! as a run (own process group, pid namespace, parent-death signal, child setup, cleared
//! environment), but the pipes are handed to the caller instead of a poll loop.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::process::ExitStatus;
use std::time::Instant;

#[cfg(not(target_os = "linux"))]
use super::super::command::launch;
#[cfg(target_os = "linux")]
use super::super::vfork::launch;
use super::pipes::{pipes, set_nonblocking, write_some};
use super::process::{has_exited, signal_group, wait_blocking};
#[cfg(target_os = "linux")]
use super::sigpipe::SigpipeGuard;
use crate::spawn::{SpawnError, SpawnRequest};

/// A started long-lived child. Its group is SIGKILLed and the child reaped on drop, so
/// it cannot outlive its owner.
#[derive(Debug)]
pub struct Resident {
    pid: libc::pid_t,
    reaped: bool,
    /// Our end of its stdin (non-blocking); `None` once closed.
    stdin: Option<OwnedFd>,
    /// Our end of its stdout (blocking), until taken by the reader.
    stdout: Option<OwnedFd>,
    /// Our end of its stderr (blocking), until taken by the reader.
    stderr: Option<OwnedFd>,
}

/// Starts `req.command` and returns it running. `req.stdin`, `req.timeout` and the
/// caps are not used: the caller owns the pipes and the deadlines.
///
/// On Linux the parent-death signal is tied to the calling *thread*: call this from a
/// thread that lives as long as the child.
pub fn start(req: &SpawnRequest<'_>) -> Result<Resident, SpawnError> {
    let start_error = |cause| SpawnError::Start {
        command: req.command.to_owned(),
        cwd: req.cwd.to_path_buf(),
        cause,
    };
    let (child_stdio, ours) = pipes().map_err(start_error)?;
    let launched = launch(req, &child_stdio, false).map_err(start_error)?;
    drop(child_stdio);
    let pid = launched.pid;
    if pid <= 1 {
        return Err(start_error(io::Error::other("child pid out of range")));
    }
    crate::spawn::contain::register(pid);
    let mut resident = Resident {
        pid,
        reaped: false,
        stdin: None,
        stdout: Some(ours.stdout),
        stderr: Some(ours.stderr),
    };
    set_nonblocking(&ours.stdin).map_err(start_error)?;
    resident.stdin = Some(ours.stdin);
    Ok(resident)
}

impl Resident {
    /// The child's pid (also its process group id).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Takes our end of its stdout (once).
    pub fn take_stdout(&mut self) -> Option<OwnedFd> {
        self.stdout.take()
    }

    /// Takes our end of its stderr (once).
    pub fn take_stderr(&mut self) -> Option<OwnedFd> {
        self.stderr.take()
    }

    /// A handle that writes to its stdin (shareable; see [`StdinWriter`]).
    pub fn take_stdin(&mut self) -> Option<StdinWriter> {
        self.stdin.take().map(|fd| StdinWriter { fd })
    }

    /// SIGKILLs its whole group (with containment, its pid namespace).
    pub fn kill(&self) {
        if !self.reaped {
            signal_group(self.pid, libc::SIGKILL);
        }
    }

    /// Whether it has exited, without reaping it (so its id still names its group
    /// for the final kill of [`Resident::kill_and_wait`]).
    pub fn has_exited(&self) -> io::Result<bool> {
        if self.reaped {
            return Ok(true);
        }
        has_exited(self.pid)
    }

    /// Kills its group and reaps it (blocking until the kernel has torn it down).
    pub fn kill_and_wait(&mut self) -> io::Result<ExitStatus> {
        self.kill();
        crate::spawn::contain::unregister(self.pid);
        let status = wait_blocking(self.pid);
        self.reaped = true;
        status
    }
}

impl Drop for Resident {
    fn drop(&mut self) {
        if !self.reaped {
            let _ = self.kill_and_wait();
        }
    }
}

/// Our end of a resident child's stdin.
#[derive(Debug)]
pub struct StdinWriter {
    fd: OwnedFd,
}

impl StdinWriter {
    /// Writes all of `data` before `deadline` (a child that stops reading only costs
    /// the wait, never a blocked thread past the deadline). `EPIPE` (the child closed
    /// stdin or exited) is returned as an error, without raising SIGPIPE.
    pub fn write_all(&self, data: &[u8], deadline: Instant) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        let mut guard = SigpipeGuard::new();
        #[cfg(not(target_os = "linux"))]
        super::sigpipe::prevent_sigpipe(&self.fd);
        let mut written = 0;
        loop {
            if let Err(err) = write_some(&self.fd, data, &mut written) {
                #[cfg(target_os = "linux")]
                if let Some(guard) = &mut guard
                    && err.kind() == io::ErrorKind::BrokenPipe
                {
                    guard.broken_pipe();
                }
                return Err(err);
            }
            if written >= data.len() {
                return Ok(());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(io::Error::from(io::ErrorKind::TimedOut));
            }
            let wait = super::poll_timeout(now, Some(deadline));
            let timeout = rustix::event::Timespec {
                tv_sec: i64::from(wait / 1000),
                tv_nsec: i64::from(wait % 1000) * 1_000_000,
            };
            let fd = self.fd.as_fd();
            let mut fds = [rustix::event::PollFd::new(
                &fd,
                rustix::event::PollFlags::OUT,
            )];
            match rustix::event::poll(&mut fds, Some(&timeout)) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}
