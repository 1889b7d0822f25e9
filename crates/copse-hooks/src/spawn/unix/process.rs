//! The child process: signalling its group, reaping it, watching its exit (pidfd or
//! `waitid` polling) and looking for escapes from its group.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use super::{FALLBACK_POLL_MIN, Launched};

/// Sends `signal` to the child's whole process group. ESRCH (the group is already empty)
/// is the expected outcome of the final kill; EPERM (every remaining member changed its
/// credentials) leaves nothing we could do, so errors are ignored.
pub(super) fn signal_group(pgid: libc::pid_t, signal: libc::c_int) {
    let signal = match signal {
        libc::SIGKILL => rustix::process::Signal::KILL,
        _ => rustix::process::Signal::TERM,
    };
    // pgid > 1 is checked by `run`, so this never targets the host's own group.
    if let Some(pgid) = rustix::process::Pid::from_raw(pgid).filter(|_| pgid > 1) {
        let _ = rustix::process::kill_process_group(pgid, signal);
    }
}

/// Reaps `pid`, blocking until it has exited.
pub(in crate::spawn) fn wait_blocking(pid: libc::pid_t) -> io::Result<ExitStatus> {
    loop {
        match wait(pid, rustix::process::WaitOptions::empty()) {
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Ok(Some(status)) => return Ok(status),
            Ok(None) => return Err(io::Error::other("waitpid returned nothing")),
            Err(err) => return Err(err),
        }
    }
}

/// Reaps `pid` if it has exited.
pub(super) fn try_wait(pid: libc::pid_t) -> io::Result<Option<ExitStatus>> {
    wait(pid, rustix::process::WaitOptions::NOHANG)
}

pub(super) fn wait(
    pid: libc::pid_t,
    options: rustix::process::WaitOptions,
) -> io::Result<Option<ExitStatus>> {
    let pid = rustix::process::Pid::from_raw(pid)
        .ok_or_else(|| io::Error::from_raw_os_error(libc::ECHILD))?;
    Ok(rustix::process::waitpid(Some(pid), options)?
        .map(|(_, status)| ExitStatus::from_raw(status.as_raw())))
}

pub(super) fn reap_in_background(pid: libc::pid_t) {
    // If no thread can be spawned the child stays a zombie until the host exits.
    let _ = std::thread::Builder::new()
        .name("copse-hooks-reaper".to_owned())
        .spawn(move || {
            let _ = wait_blocking(pid);
        });
}

/// How the main child's exit is noticed.
pub(super) enum ExitWatch {
    /// Readable once the process has exited; it stays a zombie until we reap it.
    #[cfg(target_os = "linux")]
    Pidfd(OwnedFd),
    /// No pidfd (non-Linux, kernel < 5.3, or seccomp): poll with `waitid(WNOWAIT)` between
    /// short, growing sleeps.
    Poll(Duration),
    /// The child has exited.
    Done,
}

impl ExitWatch {
    /// Watches through the launcher's pidfd, else a new one, else the fallback.
    pub(super) fn new(launched: Launched, allow_pidfd: bool) -> Self {
        let Launched { pid, pidfd } = launched;
        #[cfg(target_os = "linux")]
        if allow_pidfd && let Some(fd) = pidfd.or_else(|| open_pidfd(pid)) {
            return Self::Pidfd(fd);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (pid, pidfd, allow_pidfd);
        Self::Poll(FALLBACK_POLL_MIN)
    }
}

#[cfg(target_os = "linux")]
pub(super) fn open_pidfd(pid: libc::pid_t) -> Option<OwnedFd> {
    // The child is unreaped, so `pid` still names it.
    rustix::process::pidfd_open(
        rustix::process::Pid::from_raw(pid)?,
        rustix::process::PidfdFlags::empty(),
    )
    .ok()
}

/// Whether the child has exited, without reaping it: the pid (which is also the group id)
/// stays reserved until our final `killpg`.
pub(super) fn has_exited(pid: libc::pid_t) -> io::Result<bool> {
    use rustix::process::{WaitId, WaitIdOptions};
    let id = rustix::process::Pid::from_raw(pid).ok_or_else(|| io::Error::other("bad pid"))?;
    loop {
        match rustix::process::waitid(
            WaitId::Pid(id),
            WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT,
        ) {
            Ok(status) => return Ok(status.is_some()),
            Err(rustix::io::Errno::INTR) => {}
            // Somebody else reaped it: it has certainly exited (the final wait reports it).
            Err(rustix::io::Errno::CHILD) => return Ok(true),
            Err(err) => return Err(err.into()),
        }
    }
}

/// Whether a descendant of `pid` (walked through `/proc/<pid>/task/<pid>/children`) is
/// outside the group `pid` leads. Bounded: at most 4096 processes are looked at.
#[cfg(target_os = "linux")]
pub(super) fn has_escapees(pid: libc::pid_t) -> bool {
    let mut queue = vec![pid];
    let mut seen = 0;
    while let Some(parent) = queue.pop() {
        seen += 1;
        if seen > 4096 {
            break;
        }
        let Ok(children) =
            std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
        else {
            continue;
        };
        for child in children
            .split_whitespace()
            .filter_map(|c| c.parse::<libc::pid_t>().ok())
        {
            // Field 5 of stat is the group; the comm (field 2) may hold spaces, so count
            // from its closing parenthesis.
            let pgid = std::fs::read_to_string(format!("/proc/{child}/stat"))
                .ok()
                .and_then(|stat| {
                    let (_, rest) = stat.rsplit_once(')')?;
                    rest.split_whitespace().nth(2)?.parse::<libc::pid_t>().ok()
                });
            if pgid.is_some_and(|pgid| pgid != pid) {
                return true;
            }
            queue.push(child);
        }
    }
    false
}
