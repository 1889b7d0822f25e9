//! The Unix implementation of [`super::run`]: pipes, a launcher (the vfork-style one in
//! `vfork.rs` on Linux, `std::process::Command` in `command.rs` elsewhere), then one
//! poll(2) loop on the calling thread over stdin, stdout, stderr and, on Linux, a pidfd
//! for the main child's exit.
//!
//! Split by concern: `pipes` (the three pipes, reads and writes), `process` (signalling,
//! reaping, the exit watch, escapes from the group), `sigpipe` (SIGPIPE around stdin
//! writes); this file is the supervisor. Syscalls go through `rustix`; `libc` remains for
//! what it lacks here (signal masks, `sigtimedwait`) and for the child side in `vfork.rs`
//! (clone, and the async-signal-safe calls between clone and exec).

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::{Duration, Instant, SystemTime};

#[cfg(not(target_os = "linux"))]
use super::command::launch;
#[cfg(target_os = "linux")]
use super::vfork::launch;
use super::{Limits, SpawnError, SpawnOutput, SpawnRequest, Termination};

mod pipes;
mod process;
pub(crate) mod resident;
mod sigpipe;

use pipes::{ParentEnds, Read, pipes, read_into, write_some};
#[cfg(target_os = "linux")]
use process::has_escapees;
pub(in crate::spawn) use process::wait_blocking;
use process::{ExitWatch, has_exited, reap_in_background, signal_group, try_wait};
#[cfg(target_os = "linux")]
use sigpipe::SigpipeGuard;
#[cfg(not(target_os = "linux"))]
use sigpipe::prevent_sigpipe;

/// Most bytes asked of one `read(2)`: one default Linux pipe buffer.
const READ_CHUNK: usize = 64 * 1024;
/// Fewest bytes of spare capacity a read goes ahead with before the buffer grows.
const MIN_SPARE: usize = 4 * 1024;

/// How often a run still going is searched for processes that left its group. A run
/// that ends by itself takes its whole pid namespace with it before the host sees the
/// exit, so an escape can only be recorded while the run is alive: each search reads a
/// few `/proc` files, and a trivial hook ends before the first one.
const ESCAPE_CHECK_EVERY: Duration = Duration::from_millis(20);

/// First and longest sleep of the exit-polling fallback (no pidfd).
const FALLBACK_POLL_MIN: Duration = Duration::from_millis(1);
const FALLBACK_POLL_MAX: Duration = Duration::from_millis(20);

/// A started child: it has exec'd and leads its own process group.
pub(super) struct Launched {
    pub(super) pid: libc::pid_t,
    /// Its pidfd, when the launcher got one for free.
    pub(super) pidfd: Option<OwnedFd>,
}

/// Starts the child on the given stdio (see `pipes`); `bool`: whether a pidfd is wanted.
type Launcher = fn(&SpawnRequest<'_>, &[OwnedFd; 3], bool) -> io::Result<Launched>;

pub(super) fn run(req: &SpawnRequest<'_>) -> Result<SpawnOutput, SpawnError> {
    run_with(req, launch, true)
}

/// `allow_pidfd: false` forces the exit-polling fallback, and `launch` can be the
/// portable launcher, so that tests on Linux cover both.
fn run_with(
    req: &SpawnRequest<'_>,
    launch: Launcher,
    allow_pidfd: bool,
) -> Result<SpawnOutput, SpawnError> {
    let started_at = SystemTime::now();
    let start = Instant::now();
    let start_error = |source| SpawnError::Start {
        command: req.command.to_owned(),
        cwd: req.cwd.to_path_buf(),
        cause: source,
    };
    let io_error = |source| SpawnError::Io {
        command: req.command.to_owned(),
        cause: source,
    };
    let (child_stdio, pipes) = pipes().map_err(start_error)?;
    // Escapes from the group are reported by the kernel as they happen (`escape.rs`):
    // the child installs the filter last, after the caller's setup.
    #[cfg(target_os = "linux")]
    let channel = super::escape::Channel::new();
    #[cfg(target_os = "linux")]
    let watched = channel.as_ref().map(|channel| WatchEscapes {
        inner: req.child_setup,
        end: channel.child_end(),
    });
    #[cfg(target_os = "linux")]
    let watched_req = watched.as_ref().map(|watched| SpawnRequest {
        child_setup: Some(watched as &dyn super::ChildSetup),
        ..*req
    });
    #[cfg(target_os = "linux")]
    let launch_req = watched_req.as_ref().unwrap_or(req);
    #[cfg(not(target_os = "linux"))]
    let launch_req = req;
    let launched = launch(launch_req, &child_stdio, allow_pidfd).map_err(start_error)?;
    #[cfg(target_os = "linux")]
    let escape_listener = channel.and_then(super::escape::Channel::receive);
    #[cfg(not(target_os = "linux"))]
    let escape_listener: Option<OwnedFd> = None;
    let pid = launched.pid;
    // A pid that is not a positive pid_t cannot happen; refuse to `killpg` it anyway, since
    // killpg(0) or killpg(-1) would hit the host itself.
    if pid <= 1 {
        return Err(io_error(io::Error::other("child pid out of range")));
    }
    super::contain::register(pid);
    // Cancellation hook (crate::cancel): the group is killable by the host's cancel
    // while the child is unreaped; the registration is dropped before any reap below.
    let cancel = crate::cancel::register(pid);
    // Our ends are readied while the child is busy starting its shell. The child's end of
    // stdin is only closed after that, so the first write cannot raise SIGPIPE.
    let ours = pipes.ready(req.stdin);
    drop(child_stdio);

    let supervised = ours.and_then(|ours| {
        let mut supervisor = Supervisor::new(ours, launched, req, start, allow_pidfd);
        if escape_listener.is_some() {
            // The kernel reports escapes: no need to look for them.
            supervisor.escape_check_at = None;
            supervisor.escape_listener = escape_listener;
        }
        supervisor.run()
    });
    drop(cancel);
    let supervised = match supervised {
        Ok(supervised) => supervised,
        Err(err) => {
            signal_group(pid, libc::SIGKILL);
            super::contain::unregister(pid);
            let _ = wait_blocking(pid);
            return Err(io_error(err));
        }
    };
    super::contain::unregister(pid);

    let status = if supervised.exited {
        // Known to have exited (a zombie), so this does not block.
        Some(wait_blocking(pid).map_err(io_error)?)
    } else {
        // SIGKILLed but not gone within the drain (e.g. stuck in uninterruptible sleep):
        // don't block the caller on it; reap it in the background so it leaves no zombie.
        match try_wait(pid).map_err(io_error)? {
            Some(status) => Some(status),
            None => {
                reap_in_background(pid);
                None
            }
        }
    };
    Ok(supervised.into_output(status, started_at, start.elapsed()))
}

/// The caller's setup, then the escape watch (`escape.rs`), as one [`ChildSetup`].
#[cfg(target_os = "linux")]
struct WatchEscapes<'a> {
    inner: Option<&'a dyn super::ChildSetup>,
    end: super::escape::ChildEnd,
}

// SAFETY: runs the caller's setup (bound by the same contract), then `install_in_child`,
// which makes raw syscalls on the stack and on data prepared in the parent only.
#[cfg(target_os = "linux")]
unsafe impl super::ChildSetup for WatchEscapes<'_> {
    fn apply_in_child(&self) -> io::Result<()> {
        if let Some(inner) = self.inner {
            inner.apply_in_child()?;
        }
        // Only the init of the run's own pid namespace: elsewhere `setpgid(…, 1)` would
        // not mean the run's group.
        // SAFETY: getpid cannot fail.
        if unsafe { libc::getpid() } == 1 {
            self.end.install_in_child();
        }
        Ok(())
    }

    fn mounts_private_proc(&self) -> bool {
        self.inner.is_some_and(|inner| inner.mounts_private_proc())
    }
}

/// What the poll loop learned, before the exit status is known.
struct Supervised {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    stderr_truncated: bool,
    stdin_written: usize,
    termination: Termination,
    exited: bool,
    killed_before_exit: bool,
    leaked_pipes: bool,
    escapees: bool,
}

impl Supervised {
    fn into_output(
        self,
        status: Option<ExitStatus>,
        started_at: SystemTime,
        duration: Duration,
    ) -> SpawnOutput {
        let signal = status.and_then(|status| status.signal());
        // Once we started killing, whatever code the child managed to exit with is an
        // artefact of our signal, not an answer.
        let exit_code = status
            .and_then(|status| status.code())
            .filter(|_| !self.killed_before_exit);
        SpawnOutput {
            stdout: self.stdout,
            stderr: self.stderr,
            stderr_truncated: self.stderr_truncated,
            exit_code,
            signal,
            termination: self.termination,
            leaked_pipes: self.leaked_pipes,
            leaked: self.leaked_pipes || self.escapees,
            stdin_written: self.stdin_written,
            started_at,
            duration,
        }
    }
}

#[derive(Clone, Copy)]
enum Slot {
    Stdin,
    Stdout,
    Stderr,
    #[cfg(target_os = "linux")]
    Exit,
    #[cfg(target_os = "linux")]
    Escape,
}

struct Supervisor<'r> {
    pid: libc::pid_t,
    limits: Limits,
    stdin_data: &'r [u8],
    stdin: Option<OwnedFd>,
    stdin_written: usize,
    stdout: Option<OwnedFd>,
    stdout_buf: Vec<u8>,
    stderr: Option<OwnedFd>,
    stderr_buf: Vec<u8>,
    stderr_truncated: bool,
    /// Where stderr beyond its cap is read to and forgotten; allocated on first use.
    discard: Vec<u8>,
    watch: ExitWatch,
    exited: bool,
    termination: Termination,
    /// SIGTERM or SIGKILL was sent before the main child exited.
    killed_before_exit: bool,
    /// A process of the run was found outside its group (while the run went on, or
    /// when we started killing it).
    escapees: bool,
    /// When to search for escapes next (`None`: not on this platform, one was found, or
    /// the kernel reports them through `escape_listener`).
    escape_check_at: Option<Instant>,
    /// The seccomp listener the kernel reports escapes through (`escape.rs`).
    escape_listener: Option<OwnedFd>,
    /// SIGPIPE blocked while the poll loop writes stdin (only if the first write did not
    /// take it all).
    #[cfg(target_os = "linux")]
    sigpipe: Option<SigpipeGuard>,
    term_sent: bool,
    kill_sent: bool,
    /// `None` if `timeout` overflows `Instant`, i.e. no timeout.
    timeout_at: Option<Instant>,
    grace_until: Option<Instant>,
    /// End of the drain; set when the main child exits or is SIGKILLed.
    finish_at: Option<Instant>,
}

impl<'r> Supervisor<'r> {
    fn new(
        ours: ParentEnds,
        launched: Launched,
        req: &SpawnRequest<'r>,
        start: Instant,
        allow_pidfd: bool,
    ) -> Self {
        #[cfg(not(target_os = "linux"))]
        if let Some(stdin) = &ours.stdin {
            prevent_sigpipe(stdin);
        }
        Self {
            pid: launched.pid,
            limits: req.limits,
            stdin_data: req.stdin,
            stdin: ours.stdin,
            stdin_written: ours.stdin_written,
            stdout: Some(ours.stdout),
            stdout_buf: Vec::new(),
            stderr: Some(ours.stderr),
            stderr_buf: Vec::new(),
            stderr_truncated: false,
            discard: Vec::new(),
            watch: ExitWatch::new(launched, allow_pidfd),
            exited: false,
            termination: Termination::Exited,
            killed_before_exit: false,
            escapees: false,
            escape_check_at: if cfg!(target_os = "linux") {
                start.checked_add(ESCAPE_CHECK_EVERY)
            } else {
                None
            },
            escape_listener: None,
            #[cfg(target_os = "linux")]
            sigpipe: None,
            term_sent: false,
            kill_sent: false,
            timeout_at: start.checked_add(req.timeout),
            grace_until: None,
            finish_at: None,
        }
    }

    fn run(mut self) -> io::Result<Supervised> {
        // Dropped with `self`, once the loop is over.
        #[cfg(target_os = "linux")]
        if self.stdin.is_some() {
            self.sigpipe = SigpipeGuard::new();
        }

        loop {
            let now = Instant::now();
            self.check_deadlines(now);
            self.check_escapes(now);
            if self.finish_at.is_some_and(|at| now >= at)
                || (self.exited && self.stdout.is_none() && self.stderr.is_none())
            {
                break;
            }

            let Some(ready) = self.wait_ready(now)? else {
                continue;
            };
            for slot in ready.into_iter().flatten() {
                match slot {
                    Slot::Stdin => self.write_stdin()?,
                    Slot::Stdout => self.read_stdout()?,
                    Slot::Stderr => self.read_stderr()?,
                    #[cfg(target_os = "linux")]
                    Slot::Exit => self.on_exit(Instant::now()),
                    #[cfg(target_os = "linux")]
                    Slot::Escape => self.on_escape_notice(),
                }
            }
            if let ExitWatch::Poll(interval) = self.watch {
                if has_exited(self.pid)? {
                    self.on_exit(Instant::now());
                } else {
                    self.watch = ExitWatch::Poll((interval * 2).min(FALLBACK_POLL_MAX));
                }
            }
        }

        self.finish()
    }

    /// Waits (until the next deadline) for the descriptors that matter now and says
    /// which are ready; `None` when a signal interrupted the wait.
    fn wait_ready(&mut self, now: Instant) -> io::Result<Option<[Option<Slot>; 5]>> {
        use rustix::event::{PollFd, PollFlags};
        let timeout = poll_timeout(now, self.next_deadline(now));
        // Which slots are ready; the borrowed fds are released before acting on them.
        let mut ready = [None::<Slot>; 5];
        #[cfg(target_os = "linux")]
        let mut escape_hung_up = false;
        {
            #[cfg(target_os = "linux")]
            let exit = match &self.watch {
                ExitWatch::Pidfd(fd) => Some((fd, PollFlags::IN, Slot::Exit)),
                _ => None,
            };
            #[cfg(not(target_os = "linux"))]
            let exit = None;
            #[cfg(target_os = "linux")]
            let escape = self
                .escape_listener
                .as_ref()
                .map(|fd| (fd, PollFlags::IN, Slot::Escape));
            #[cfg(not(target_os = "linux"))]
            let escape = None;
            let candidates = [
                self.stdin
                    .as_ref()
                    .map(|fd| (fd, PollFlags::OUT, Slot::Stdin)),
                self.stdout
                    .as_ref()
                    .map(|fd| (fd, PollFlags::IN, Slot::Stdout)),
                self.stderr
                    .as_ref()
                    .map(|fd| (fd, PollFlags::IN, Slot::Stderr)),
                exit,
                escape,
            ];
            let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(5);
            let mut slots = [Slot::Stdin; 5];
            for (fd, events, slot) in candidates.into_iter().flatten() {
                if let Some(entry) = slots.get_mut(fds.len()) {
                    *entry = slot;
                    fds.push(PollFd::new(fd, events));
                }
            }
            let timeout = (timeout >= 0).then(|| rustix::event::Timespec {
                tv_sec: i64::from(timeout / 1000),
                tv_nsec: i64::from(timeout % 1000) * 1_000_000,
            });
            match rustix::event::poll(&mut fds, timeout.as_ref()) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => return Ok(None),
                Err(err) => return Err(err.into()),
            }
            for ((pollfd, slot), ready) in fds.iter().zip(slots).zip(ready.iter_mut()) {
                let revents = pollfd.revents();
                #[cfg(target_os = "linux")]
                if matches!(slot, Slot::Escape) && !revents.contains(PollFlags::IN) {
                    // Hung up without a notification pending: every process of the
                    // run is gone. Taking one now would block, so stop listening.
                    if !revents.is_empty() {
                        escape_hung_up = true;
                    }
                    continue;
                }
                if !revents.is_empty() {
                    *ready = Some(slot);
                }
            }
        }
        #[cfg(target_os = "linux")]
        if escape_hung_up {
            self.escape_listener = None;
        }
        Ok(Some(ready))
    }

    /// After the loop: the group killed, the output handed over.
    fn finish(mut self) -> io::Result<Supervised> {
        // Always: no hook process outlives its run. The main child is not reaped yet, so
        // its pid is still reserved as the group id.
        signal_group(self.pid, libc::SIGKILL);
        let leaked_pipes = self.exited && (self.stdout.is_some() || self.stderr.is_some());
        // Reads reserve a whole chunk ahead; don't hand that slack to the caller.
        self.stdout_buf.shrink_to_fit();
        self.stderr_buf.shrink_to_fit();
        Ok(Supervised {
            stdout: self.stdout_buf,
            stderr: self.stderr_buf,
            stderr_truncated: self.stderr_truncated,
            stdin_written: self.stdin_written,
            termination: self.termination,
            exited: self.exited,
            killed_before_exit: self.killed_before_exit,
            leaked_pipes,
            escapees: self.escapees,
        })
    }

    /// Acts on the timeout and the kill grace, both of which only matter while the main
    /// child is alive.
    fn check_deadlines(&mut self, now: Instant) {
        if self.exited || self.kill_sent {
            return;
        }
        if !self.term_sent && self.timeout_at.is_some_and(|at| now >= at) {
            self.termination = Termination::TimedOut;
            self.killed_before_exit = true;
            self.term_sent = true;
            self.stdin = None;
            self.look_for_escapees();
            signal_group(self.pid, libc::SIGTERM);
            self.grace_until = now.checked_add(self.limits.kill_grace);
        }
        if self.term_sent && self.grace_until.is_some_and(|at| now >= at) {
            self.kill_group(now);
        }
    }

    /// While the main child is alive, every [`ESCAPE_CHECK_EVERY`]: has a process of the
    /// run left its group? Recorded now, since the kernel empties the run's namespace the
    /// moment the main child exits.
    fn check_escapes(&mut self, now: Instant) {
        if self.exited || self.kill_sent || self.escape_check_at.is_none_or(|at| now < at) {
            return;
        }
        self.look_for_escapees();
        self.escape_check_at = if self.escapees {
            None
        } else {
            now.checked_add(ESCAPE_CHECK_EVERY)
        };
    }

    /// The kernel has a `setsid`/`setpgid` of the run to report (or the listener hung up:
    /// every process of the run is gone).
    #[cfg(target_os = "linux")]
    fn on_escape_notice(&mut self) {
        let Some(listener) = &self.escape_listener else {
            return;
        };
        match super::escape::answer(listener) {
            Ok(true) => self.escapees = true,
            Ok(false) => {}
            // Nothing more will come (the filter's last user is gone) or the listener is
            // unusable: stop polling it rather than spin.
            Err(_) => self.escape_listener = None,
        }
    }

    /// Before we kill a run whose main child is alive: anything of the run outside its
    /// group has escaped (its pid namespace still holds it; the kill ends it).
    fn look_for_escapees(&mut self) {
        #[cfg(target_os = "linux")]
        if !self.exited && !self.escapees {
            self.escapees = has_escapees(self.pid);
        }
    }

    fn kill_group(&mut self, now: Instant) {
        self.look_for_escapees();
        signal_group(self.pid, libc::SIGKILL);
        self.kill_sent = true;
        if !self.exited {
            self.killed_before_exit = true;
        }
        self.stdin = None;
        // After SIGKILL only escapees (setsid) can hold the pipes; give them the drain,
        // counted from now, so the run still ends within timeout + grace + drain.
        if self.finish_at.is_none() {
            self.finish_at = now.checked_add(self.limits.drain);
        }
    }

    fn on_exit(&mut self, now: Instant) {
        self.exited = true;
        self.watch = ExitWatch::Done;
        self.stdin = None;
        // Timed out and the main child obeyed SIGTERM: the rest of the group had the same
        // warning, so the remaining grace buys nothing.
        if self.term_sent && !self.kill_sent {
            self.kill_group(now);
        }
        if self.finish_at.is_none() {
            self.finish_at = now.checked_add(self.limits.drain);
        }
    }

    fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let alive = !self.exited && !self.kill_sent;
        [
            self.timeout_at.filter(|_| alive && !self.term_sent),
            self.grace_until.filter(|_| alive && self.term_sent),
            self.finish_at,
            self.escape_check_at.filter(|_| alive),
            match self.watch {
                ExitWatch::Poll(interval) => now.checked_add(interval),
                _ => None,
            },
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn write_stdin(&mut self) -> io::Result<()> {
        let Some(fd) = &self.stdin else {
            return Ok(());
        };
        match write_some(fd, self.stdin_data, &mut self.stdin_written) {
            Ok(()) => {
                if self.stdin_written >= self.stdin_data.len() {
                    // All written: close so the child sees EOF.
                    self.stdin = None;
                }
            }
            // The child closed stdin or exited without reading it: that's its right.
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => {
                #[cfg(target_os = "linux")]
                if let Some(guard) = &mut self.sigpipe {
                    guard.broken_pipe();
                }
                self.stdin = None;
            }
            Err(err) => return Err(err),
        }
        Ok(())
    }

    fn read_stdout(&mut self) -> io::Result<()> {
        let Some(fd) = &self.stdout else {
            return Ok(());
        };
        let cap = self.limits.stdout_cap;
        // One byte more than there is room for, so an overflow shows as soon as it comes.
        let room = cap.saturating_sub(self.stdout_buf.len());
        let max = room.saturating_add(1).min(READ_CHUNK);
        match read_into(fd, &mut self.stdout_buf, max)? {
            Read::WouldBlock => {}
            Read::Eof => self.stdout = None,
            Read::Data => {
                if self.stdout_buf.len() > cap {
                    self.stdout_buf.truncate(cap);
                    // The answer is cut, so it is useless: stop everything now.
                    if self.termination == Termination::Exited {
                        self.termination = Termination::StdoutOverflow;
                    }
                    // Kill first, then close our end so nothing more is read: closed
                    // first, the writer could die of SIGPIPE and its shell exit normally
                    // before the SIGKILL lands, and the run would not look killed.
                    self.kill_group(Instant::now());
                    self.stdout = None;
                }
            }
        }
        Ok(())
    }

    fn read_stderr(&mut self) -> io::Result<()> {
        let Some(fd) = &self.stderr else {
            return Ok(());
        };
        let cap = self.limits.stderr_cap;
        let room = cap.saturating_sub(self.stderr_buf.len());
        let read = if room > 0 {
            // As for stdout, one byte more than there is room for.
            let max = room.saturating_add(1).min(READ_CHUNK);
            read_into(fd, &mut self.stderr_buf, max)?
        } else {
            // Past the cap we keep reading and discarding, so the child never blocks on
            // a full stderr pipe.
            self.discard.clear();
            read_into(fd, &mut self.discard, READ_CHUNK)?
        };
        match read {
            Read::WouldBlock => {}
            Read::Eof => self.stderr = None,
            Read::Data => {
                if room == 0 || self.stderr_buf.len() > cap {
                    self.stderr_buf.truncate(cap);
                    self.stderr_truncated = true;
                }
            }
        }
        Ok(())
    }
}

/// The poll(2) timeout for the nearest deadline, rounded up to whole milliseconds so we
/// never wake just before a deadline and spin; -1 (forever) without one.
fn poll_timeout(now: Instant, deadline: Option<Instant>) -> libc::c_int {
    let Some(deadline) = deadline else {
        return -1;
    };
    let micros = deadline.saturating_duration_since(now).as_micros();
    libc::c_int::try_from(micros.div_ceil(1000)).unwrap_or(libc::c_int::MAX)
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    fn env() -> Vec<(OsString, OsString)> {
        vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())]
    }

    fn fallback_run(command: &str, timeout: Duration, limits: Limits) -> SpawnOutput {
        let env = env();
        let cwd = std::env::temp_dir();
        let req = SpawnRequest {
            command,
            cwd: &cwd,
            env: &env,
            stdin: b"ping",
            timeout,
            limits,
            child_setup: None,
        };
        run_with(&req, launch, false).unwrap()
    }

    #[test]
    fn fallback_reports_output_and_exit_code() {
        let out = fallback_run("cat; exit 4", Duration::from_secs(30), Limits::default());
        assert_eq!(out.stdout, b"ping");
        assert_eq!(out.exit_code, Some(4));
        assert_eq!(out.termination, Termination::Exited);
    }

    #[test]
    fn fallback_drains_then_kills_a_background_pipe_holder() {
        let limits = Limits {
            drain: Duration::from_millis(100),
            ..Limits::default()
        };
        let start = Instant::now();
        let out = fallback_run("echo ok; sleep 1000 &", Duration::from_secs(30), limits);
        assert!(start.elapsed() < Duration::from_secs(3));
        // Contained, the kernel ends the background process with the shell (init of the
        // run's pid namespace): nothing holds the pipes past the run.
        assert_eq!(out.leaked_pipes, super::super::contained().is_err());
        assert_eq!(out.stdout, b"ok\n");
        assert_eq!(out.exit_code, Some(0));
    }

    #[test]
    fn fallback_times_out() {
        let start = Instant::now();
        let out = fallback_run("sleep 1000", Duration::from_millis(100), Limits::default());
        assert!(start.elapsed() < Duration::from_secs(3));
        assert_eq!(out.termination, Termination::TimedOut);
        // The shell is the init of the run's pid namespace and only gets the signals it
        // handles: it ends when its sleep dies of SIGTERM, or with the final SIGKILL.
        assert_eq!(out.exit_code, None);
    }

    /// Only async-signal-safe calls: getpid, getpgid, umask.
    struct GroupAndUmask;

    // SAFETY: getpid, getpgid and umask only: async-signal-safe, no allocation.
    unsafe impl super::super::ChildSetup for GroupAndUmask {
        fn apply_in_child(&self) -> io::Result<()> {
            // SAFETY: getpid/getpgid/umask are async-signal-safe and take plain integers.
            unsafe {
                if libc::getpgid(0) != libc::getpid() {
                    return Err(io::Error::from_raw_os_error(libc::EPROTO));
                }
                libc::umask(0o077);
            }
            Ok(())
        }
    }

    /// The launcher used off Linux, exercised here on Linux.
    #[test]
    fn portable_launcher_runs_a_hook() {
        let env = env();
        let cwd = std::env::temp_dir();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let req = SpawnRequest {
            command: "cat; umask >&2; exit 5",
            cwd: &cwd,
            env: &env,
            stdin: &data,
            timeout: Duration::from_secs(30),
            limits: Limits::default(),
            child_setup: Some(&GroupAndUmask),
        };
        let out = run_with(&req, super::super::command::launch, true).unwrap();
        assert!(out.stdout == data, "stdout differs from stdin");
        assert_eq!(out.stderr, b"0077\n");
        assert_eq!(out.stdin_written, data.len());
        assert_eq!(out.exit_code, Some(5));
        assert_eq!(out.termination, Termination::Exited);
    }

    /// The clone of kernels without `clone3`: every signal blocked around it, the handlers
    /// reset by the child itself. The hook still starts with nothing blocked.
    #[cfg(target_os = "linux")]
    #[test]
    fn masked_clone_runs_a_hook() {
        let env = env();
        let cwd = std::env::temp_dir();
        let req = SpawnRequest {
            command: "cat; grep '^SigBlk' /proc/self/status; exit 3",
            cwd: &cwd,
            env: &env,
            stdin: b"ping\n",
            timeout: Duration::from_secs(30),
            limits: Limits::default(),
            child_setup: None,
        };
        let out = run_with(&req, super::super::vfork::launch_masked, true).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "ping\nSigBlk:\t0000000000000000\n"
        );
        assert_eq!(out.exit_code, Some(3));
    }

    /// Set by [`note_usr1`]: in the host's memory, which a vfork-style child shares.
    #[cfg(target_os = "linux")]
    static USR1_HANDLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    #[cfg(target_os = "linux")]
    extern "C" fn note_usr1(_: libc::c_int) {
        USR1_HANDLED.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Sends itself SIGUSR1 before exec. Only async-signal-safe calls: getpid, kill.
    #[cfg(target_os = "linux")]
    struct SignalsItself;

    // SAFETY: getpid and kill only: async-signal-safe, no allocation.
    #[cfg(target_os = "linux")]
    unsafe impl super::super::ChildSetup for SignalsItself {
        fn apply_in_child(&self) -> io::Result<()> {
            // SAFETY: plain integers. Not raise(): in a vfork-style child it would signal
            // the host's thread, whose id it reads from the memory they share.
            unsafe { libc::kill(libc::getpid(), libc::SIGUSR1) };
            Ok(())
        }
    }

    /// A signal reaching the child before exec finds the default action, never a handler
    /// of the host (which would run on the host's memory): through `clone3`'s
    /// CLONE_CLEAR_SIGHAND and through the masked clone's own reset alike.
    #[cfg(target_os = "linux")]
    #[test]
    fn no_host_signal_handler_runs_in_the_child() {
        // SAFETY: all-zeroes is a valid sigaction; the handler only stores to an atomic,
        // and SIGUSR1 means nothing else to this test binary. The old action is put back.
        let old = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = note_usr1 as extern "C" fn(libc::c_int) as usize;
            let mut old: libc::sigaction = std::mem::zeroed();
            assert_eq!(libc::sigaction(libc::SIGUSR1, &action, &mut old), 0);
            old
        };
        let env = env();
        let cwd = std::env::temp_dir();
        let req = SpawnRequest {
            command: "echo ran",
            cwd: &cwd,
            env: &env,
            stdin: b"",
            timeout: Duration::from_secs(30),
            limits: Limits::default(),
            child_setup: Some(&SignalsItself),
        };
        let launchers: [(&str, Launcher); 2] = [
            ("clone3", launch),
            ("masked", super::super::vfork::launch_masked),
        ];
        let mut outcomes = Vec::new();
        for (name, launcher) in launchers {
            let result = run_with(&req, launcher, true);
            outcomes.push((name, USR1_HANDLED.load(std::sync::atomic::Ordering::SeqCst)));
            // Contained, the child is the init of its pid namespace, which drops a signal
            // it has no handler for: the hook runs. Uncontained, the default action ends
            // the child before it could exec.
            match super::super::contained() {
                Ok(()) => assert_eq!(result.map(|out| out.stdout).ok(), Some(b"ran\n".to_vec())),
                Err(_) => assert!(matches!(result, Err(SpawnError::Start { .. }))),
            }
        }
        // SAFETY: puts back the action saved above.
        unsafe { libc::sigaction(libc::SIGUSR1, &old, std::ptr::null_mut()) };
        assert_eq!(outcomes, [("clone3", false), ("masked", false)]);
    }

    #[test]
    fn poll_timeout_rounds_up_and_saturates() {
        let now = Instant::now();
        assert_eq!(poll_timeout(now, None), -1);
        assert_eq!(poll_timeout(now, Some(now)), 0);
        assert_eq!(poll_timeout(now + Duration::from_secs(1), Some(now)), 0);
        assert_eq!(poll_timeout(now, Some(now + Duration::from_micros(1))), 1);
        assert_eq!(
            poll_timeout(now, Some(now + Duration::from_micros(1500))),
            2
        );
        let far = now.checked_add(Duration::from_secs(u64::from(u32::MAX)));
        assert_eq!(poll_timeout(now, far), libc::c_int::MAX);
    }
}
