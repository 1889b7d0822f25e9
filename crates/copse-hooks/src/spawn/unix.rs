//! The Unix implementation of [`super::run`]: fork/exec through `std::process::Command`,
//! then one poll(2) loop on the calling thread over stdin, stdout, stderr and, on Linux,
//! a pidfd for the main child's exit.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime};

use super::{ChildSetup, Limits, SpawnError, SpawnOutput, SpawnRequest, Termination};

/// Bytes read per `read(2)`: one default Linux pipe buffer.
const READ_CHUNK: usize = 64 * 1024;

/// First and longest sleep of the exit-polling fallback (no pidfd).
const FALLBACK_POLL_MIN: Duration = Duration::from_millis(1);
const FALLBACK_POLL_MAX: Duration = Duration::from_millis(20);

pub(super) fn run(req: &SpawnRequest<'_>) -> Result<SpawnOutput, SpawnError> {
    run_with(req, true)
}

/// `allow_pidfd: false` forces the exit-polling fallback, so tests on Linux cover it too.
fn run_with(req: &SpawnRequest<'_>, allow_pidfd: bool) -> Result<SpawnOutput, SpawnError> {
    let started_at = SystemTime::now();
    let start = Instant::now();
    let mut child = spawn_child(req).map_err(|source| SpawnError::Start {
        command: req.command.to_owned(),
        cwd: req.cwd.to_path_buf(),
        source,
    })?;
    let io_error = |source| SpawnError::Io {
        command: req.command.to_owned(),
        source,
    };
    // A pid that is not a positive pid_t cannot happen; refuse to `killpg` it anyway, since
    // killpg(0) or killpg(-1) would hit the host itself.
    let Some(pid) = libc::pid_t::try_from(child.id())
        .ok()
        .filter(|&pid| pid > 1)
    else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(io_error(io::Error::other("child pid out of range")));
    };

    let supervised =
        Supervisor::new(&mut child, pid, req, start, allow_pidfd).and_then(Supervisor::run);
    let supervised = match supervised {
        Ok(supervised) => supervised,
        Err(err) => {
            signal_group(pid, libc::SIGKILL);
            let _ = child.wait();
            return Err(io_error(err));
        }
    };

    let status = if supervised.exited {
        // Known to have exited (a zombie), so this does not block.
        Some(child.wait().map_err(io_error)?)
    } else {
        // SIGKILLed but not gone within the drain (e.g. stuck in uninterruptible sleep):
        // don't block the caller on it; reap it in the background so it leaves no zombie.
        match child.try_wait().map_err(io_error)? {
            Some(status) => Some(status),
            None => {
                reap_in_background(child);
                None
            }
        }
    };
    Ok(supervised.into_output(status, started_at, start.elapsed()))
}

/// Forks and execs the child. On return the child has exec'd (std waits for that), so it
/// is already the leader of its own process group.
fn spawn_child(req: &SpawnRequest<'_>) -> io::Result<Child> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(req.command)
        .current_dir(req.cwd)
        .env_clear()
        .envs(req.env.iter().map(|(key, value)| (key, value)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);

    let parent = std::process::id();
    let setup = req.child_setup.map(|setup| {
        // SAFETY: the reference is only used by the pre_exec closure below, which lives in
        // `cmd`. `cmd` is a local dropped when this function returns, and the closure only
        // ever runs inside `cmd.spawn()` (in the forked child), both within the borrow 'a.
        unsafe { erase_lifetime(setup) }
    });
    let pre_exec = move || -> io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: prctl(PR_SET_PDEATHSIG) takes plain integers and is async-signal-safe.
            if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } != 0 {
                return Err(io::Error::last_os_error());
            }
            // If the parent died between fork and prctl, the death signal was never armed
            // and we have already been reparented: bail out instead of running orphaned.
            // SAFETY: getppid is async-signal-safe and cannot fail.
            let ppid = unsafe { libc::getppid() };
            if u32::try_from(ppid).ok() != Some(parent) {
                // SAFETY: _exit is async-signal-safe; nothing in this half-made child needs
                // unwinding or flushing.
                unsafe { libc::_exit(127) };
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = parent;
        match setup {
            Some(setup) => setup.apply_in_child(),
            None => Ok(()),
        }
    };
    // SAFETY: the closure only makes async-signal-safe calls (prctl, getppid, _exit, and the
    // ChildSetup, whose contract requires the same); it allocates nothing, since
    // io::Error::last_os_error does not allocate.
    unsafe {
        cmd.pre_exec(pre_exec);
    }
    cmd.spawn()
}

/// Extends the borrow of a [`ChildSetup`] to `'static`, as `pre_exec` requires.
///
/// # Safety
///
/// The caller must not use the returned reference after `'a` ends.
unsafe fn erase_lifetime<'a>(setup: &'a (dyn ChildSetup + 'a)) -> &'static dyn ChildSetup {
    // SAFETY: both types are the same fat pointer and differ only in lifetimes; the caller
    // guarantees the reference is not used past 'a.
    unsafe {
        std::mem::transmute::<&'a (dyn ChildSetup + 'a), &'static (dyn ChildSetup + 'static)>(setup)
    }
}

/// Sends `signal` to the child's whole process group. ESRCH (the group is already empty)
/// is the expected outcome of the final kill; EPERM (every remaining member changed its
/// credentials) leaves nothing we could do, so errors are ignored.
fn signal_group(pgid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: killpg takes plain integers; pgid > 1 is checked by `run`, so this never
    // targets the host's own group.
    unsafe {
        libc::killpg(pgid, signal);
    }
}

fn reap_in_background(mut child: Child) {
    // If no thread can be spawned the child stays a zombie until the host exits; dropping
    // a `Child` neither blocks nor kills.
    let _ = std::thread::Builder::new()
        .name("copse-hooks-reaper".to_owned())
        .spawn(move || {
            let _ = child.wait();
        });
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl on an fd we own, with integer arguments only.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// How the main child's exit is noticed.
enum ExitWatch {
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
    fn new(pid: libc::pid_t, allow_pidfd: bool) -> Self {
        #[cfg(target_os = "linux")]
        if let Some(fd) = open_pidfd(pid).filter(|_| allow_pidfd) {
            return Self::Pidfd(fd);
        }
        let _ = (pid, allow_pidfd);
        Self::Poll(FALLBACK_POLL_MIN)
    }
}

#[cfg(target_os = "linux")]
fn open_pidfd(pid: libc::pid_t) -> Option<OwnedFd> {
    use std::os::fd::FromRawFd;

    let flags: libc::c_long = 0;
    // SAFETY: pidfd_open(pid, flags) takes integers only and returns a new fd (always
    // O_CLOEXEC) or -1. The child is unreaped, so `pid` still names it.
    let ret = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::c_long::from(pid), flags) };
    let fd = RawFd::try_from(ret).ok().filter(|&fd| fd >= 0)?;
    // SAFETY: the kernel just handed us this fd; nothing else owns it.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Whether the child has exited, without reaping it: the pid (which is also the group id)
/// stays reserved until our final `killpg`.
fn has_exited(pid: libc::pid_t) -> io::Result<bool> {
    let id = libc::id_t::try_from(pid).map_err(io::Error::other)?;
    loop {
        // SAFETY: siginfo_t is plain data, for which all-zeroes is a valid value; zeroing
        // matters because WNOHANG leaves it untouched when nothing has exited.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t for the duration of the call.
        let ret = unsafe {
            libc::waitid(
                libc::P_PID,
                id,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if ret == 0 {
            // SAFETY: waitid succeeded, so `info` holds either zeroes or a child's siginfo,
            // both of which have a valid si_pid.
            return Ok(unsafe { info.si_pid() } == pid);
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => continue,
            // Somebody else reaped it: it has certainly exited (the final wait reports it).
            Some(libc::ECHILD) => return Ok(true),
            _ => return Err(err),
        }
    }
}

enum Read {
    Data(usize),
    Eof,
    WouldBlock,
}

fn read_some(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<Read> {
    loop {
        // SAFETY: `buf` is valid for writes of `buf.len()` bytes.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if let Ok(n) = usize::try_from(n) {
            return Ok(if n == 0 { Read::Eof } else { Read::Data(n) });
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(Read::WouldBlock),
            _ => return Err(err),
        }
    }
}

/// Blocks SIGPIPE on the calling thread while we write to the child's stdin.
///
/// Rust programs ignore SIGPIPE, but a host embedding this library may not, and writing
/// to a pipe whose reader exited raises SIGPIPE before it returns EPIPE. The signal is
/// thread-directed, so blocking it here keeps it pending on this thread, where the guard
/// consumes it (if we caused it) before restoring the mask. The child is unaffected: it
/// was forked before the guard, and std resets the signal mask in the child anyway.
#[cfg(target_os = "linux")]
struct SigpipeGuard {
    old_mask: libc::sigset_t,
    pending_before: bool,
}

#[cfg(target_os = "linux")]
impl SigpipeGuard {
    fn new() -> Option<Self> {
        let set = sigpipe_set();
        // SAFETY: all-zeroes is a valid sigset_t; pthread_sigmask overwrites it.
        let mut old_mask: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: both pointers are valid for the call.
        if unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old_mask) } != 0 {
            return None;
        }
        Some(Self {
            old_mask,
            pending_before: sigpipe_pending(),
        })
    }
}

#[cfg(target_os = "linux")]
impl Drop for SigpipeGuard {
    fn drop(&mut self) {
        // A SIGPIPE pending before we started is not ours to swallow.
        if !self.pending_before && sigpipe_pending() {
            let set = sigpipe_set();
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: valid pointers; a zero timeout makes this a non-blocking dequeue, so a
            // signal that vanished in the meantime cannot make us wait.
            unsafe {
                libc::sigtimedwait(&set, std::ptr::null_mut(), &zero);
            }
        }
        // SAFETY: restores the mask saved in `new`; a null old-set pointer is allowed.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old_mask, std::ptr::null_mut());
        }
    }
}

#[cfg(target_os = "linux")]
fn sigpipe_set() -> libc::sigset_t {
    // SAFETY: all-zeroes is a valid sigset_t; sigemptyset/sigaddset initialise it properly
    // and cannot fail for a valid pointer and signal number.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        set
    }
}

#[cfg(target_os = "linux")]
fn sigpipe_pending() -> bool {
    // SAFETY: all-zeroes is a valid sigset_t; sigpending fills it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigpending(&mut set) == 0 && libc::sigismember(&set, libc::SIGPIPE) == 1
    }
}

/// Keeps a write to a reader-less stdin pipe from raising SIGPIPE. Outside Linux there is
/// no non-blocking way to consume a pending signal, but macOS can switch SIGPIPE off per fd.
#[cfg(not(target_os = "linux"))]
fn prevent_sigpipe(fd: &OwnedFd) {
    #[cfg(target_vendor = "apple")]
    {
        // SAFETY: fcntl on an fd we own, with integer arguments only.
        unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETNOSIGPIPE, 1) };
    }
    #[cfg(not(target_vendor = "apple"))]
    let _ = fd;
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
    watch: ExitWatch,
    exited: bool,
    termination: Termination,
    /// SIGTERM or SIGKILL was sent before the main child exited.
    killed_before_exit: bool,
    term_sent: bool,
    kill_sent: bool,
    /// `None` if `timeout` overflows `Instant`, i.e. no timeout.
    timeout_at: Option<Instant>,
    grace_until: Option<Instant>,
    /// End of the drain; set when the main child exits or is SIGKILLed.
    finish_at: Option<Instant>,
    scratch: Vec<u8>,
}

impl<'r> Supervisor<'r> {
    fn new(
        child: &mut Child,
        pid: libc::pid_t,
        req: &SpawnRequest<'r>,
        start: Instant,
        allow_pidfd: bool,
    ) -> io::Result<Self> {
        let missing = || io::Error::other("child pipe missing");
        let stdin = OwnedFd::from(child.stdin.take().ok_or_else(missing)?);
        let stdout = OwnedFd::from(child.stdout.take().ok_or_else(missing)?);
        let stderr = OwnedFd::from(child.stderr.take().ok_or_else(missing)?);
        // Only our ends become non-blocking: the child's ends are separate open file
        // descriptions and keep their blocking semantics.
        for fd in [&stdin, &stdout, &stderr] {
            set_nonblocking(fd)?;
        }
        #[cfg(not(target_os = "linux"))]
        prevent_sigpipe(&stdin);
        Ok(Self {
            pid,
            limits: req.limits,
            stdin_data: req.stdin,
            // Nothing to write: close now so the child sees EOF immediately.
            stdin: (!req.stdin.is_empty()).then_some(stdin),
            stdin_written: 0,
            stdout: Some(stdout),
            stdout_buf: Vec::new(),
            stderr: Some(stderr),
            stderr_buf: Vec::new(),
            stderr_truncated: false,
            watch: ExitWatch::new(pid, allow_pidfd),
            exited: false,
            termination: Termination::Exited,
            killed_before_exit: false,
            term_sent: false,
            kill_sent: false,
            timeout_at: start.checked_add(req.timeout),
            grace_until: None,
            finish_at: None,
            scratch: vec![0; READ_CHUNK],
        })
    }

    fn run(mut self) -> io::Result<Supervised> {
        #[cfg(target_os = "linux")]
        let _sigpipe = self.stdin.is_some().then(SigpipeGuard::new);

        loop {
            let now = Instant::now();
            self.check_deadlines(now);
            if self.finish_at.is_some_and(|at| now >= at)
                || (self.exited && self.stdout.is_none() && self.stderr.is_none())
            {
                break;
            }

            let mut fds = [libc::pollfd {
                fd: -1,
                events: 0,
                revents: 0,
            }; 4];
            let mut slots = [Slot::Stdin; 4];
            let mut count = 0;
            let mut add = |fd: Option<RawFd>, events: libc::c_short, slot: Slot| {
                if let (Some(fd), Some(pollfd), Some(entry)) =
                    (fd, fds.get_mut(count), slots.get_mut(count))
                {
                    *pollfd = libc::pollfd {
                        fd,
                        events,
                        revents: 0,
                    };
                    *entry = slot;
                    count += 1;
                }
            };
            add(raw(&self.stdin), libc::POLLOUT, Slot::Stdin);
            add(raw(&self.stdout), libc::POLLIN, Slot::Stdout);
            add(raw(&self.stderr), libc::POLLIN, Slot::Stderr);
            #[cfg(target_os = "linux")]
            if let ExitWatch::Pidfd(fd) = &self.watch {
                add(Some(fd.as_raw_fd()), libc::POLLIN, Slot::Exit);
            }

            let timeout = poll_timeout(now, self.next_deadline(now));
            let nfds = libc::nfds_t::try_from(count).map_err(io::Error::other)?;
            // SAFETY: `fds` holds `count` initialised pollfds and outlives the call.
            let ret = unsafe { libc::poll(fds.as_mut_ptr(), nfds, timeout) };
            if ret < 0 {
                let err = io::Error::last_os_error();
                if err.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(err);
            }

            for (pollfd, slot) in fds.iter().zip(slots).take(count) {
                if pollfd.revents == 0 {
                    continue;
                }
                match slot {
                    Slot::Stdin => self.write_stdin()?,
                    Slot::Stdout => self.read_stdout()?,
                    Slot::Stderr => self.read_stderr()?,
                    #[cfg(target_os = "linux")]
                    Slot::Exit => self.on_exit(Instant::now()),
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

        // Always: no hook process outlives its run. The main child is not reaped yet, so
        // its pid is still reserved as the group id.
        signal_group(self.pid, libc::SIGKILL);
        let leaked_pipes = self.exited && (self.stdout.is_some() || self.stderr.is_some());
        Ok(Supervised {
            stdout: self.stdout_buf,
            stderr: self.stderr_buf,
            stderr_truncated: self.stderr_truncated,
            stdin_written: self.stdin_written,
            termination: self.termination,
            exited: self.exited,
            killed_before_exit: self.killed_before_exit,
            leaked_pipes,
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
            signal_group(self.pid, libc::SIGTERM);
            self.grace_until = now.checked_add(self.limits.kill_grace);
        }
        if self.term_sent && self.grace_until.is_some_and(|at| now >= at) {
            self.kill_group(now);
        }
    }

    fn kill_group(&mut self, now: Instant) {
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
        loop {
            let Some(fd) = &self.stdin else {
                return Ok(());
            };
            let rest = self
                .stdin_data
                .get(self.stdin_written..)
                .unwrap_or_default();
            if rest.is_empty() {
                // All written: close so the child sees EOF.
                self.stdin = None;
                return Ok(());
            }
            // SAFETY: `rest` is valid for reads of `rest.len()` bytes.
            let n = unsafe { libc::write(fd.as_raw_fd(), rest.as_ptr().cast(), rest.len()) };
            if let Ok(n) = usize::try_from(n) {
                self.stdin_written += n;
                continue;
            }
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => return Ok(()),
                // The child closed stdin or exited without reading it: that's its right.
                io::ErrorKind::BrokenPipe => {
                    self.stdin = None;
                    return Ok(());
                }
                _ => return Err(err),
            }
        }
    }

    fn read_stdout(&mut self) -> io::Result<()> {
        let Some(fd) = &self.stdout else {
            return Ok(());
        };
        match read_some(fd, &mut self.scratch)? {
            Read::WouldBlock => {}
            Read::Eof => self.stdout = None,
            Read::Data(n) => {
                let room = self.limits.stdout_cap.saturating_sub(self.stdout_buf.len());
                let keep = n.min(room);
                self.stdout_buf
                    .extend_from_slice(self.scratch.get(..keep).unwrap_or_default());
                if n > room {
                    // The answer is cut, so it is useless: stop everything now. Closing our
                    // end means nothing more is read from stdout.
                    self.stdout = None;
                    if self.termination == Termination::Exited {
                        self.termination = Termination::StdoutOverflow;
                    }
                    self.kill_group(Instant::now());
                }
            }
        }
        Ok(())
    }

    fn read_stderr(&mut self) -> io::Result<()> {
        let Some(fd) = &self.stderr else {
            return Ok(());
        };
        match read_some(fd, &mut self.scratch)? {
            Read::WouldBlock => {}
            Read::Eof => self.stderr = None,
            Read::Data(n) => {
                // Past the cap we keep reading and discarding, so the child never blocks
                // on a full stderr pipe.
                let room = self.limits.stderr_cap.saturating_sub(self.stderr_buf.len());
                let keep = n.min(room);
                self.stderr_buf
                    .extend_from_slice(self.scratch.get(..keep).unwrap_or_default());
                if n > room {
                    self.stderr_truncated = true;
                }
            }
        }
        Ok(())
    }
}

fn raw(fd: &Option<OwnedFd>) -> Option<RawFd> {
    fd.as_ref().map(AsRawFd::as_raw_fd)
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
        run_with(&req, false).unwrap()
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
        assert!(out.leaked_pipes);
        assert_eq!(out.stdout, b"ok\n");
        assert_eq!(out.exit_code, Some(0));
    }

    #[test]
    fn fallback_times_out() {
        let start = Instant::now();
        let out = fallback_run("sleep 1000", Duration::from_millis(100), Limits::default());
        assert!(start.elapsed() < Duration::from_secs(3));
        assert_eq!(out.termination, Termination::TimedOut);
        assert_eq!(out.signal, Some(libc::SIGTERM));
        assert_eq!(out.exit_code, None);
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
