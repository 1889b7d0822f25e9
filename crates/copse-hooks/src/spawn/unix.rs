//! The Unix implementation of [`super::run`]: pipes, a launcher (the vfork-style one in
//! `vfork.rs` on Linux, `std::process::Command` in `command.rs` elsewhere), then one
//! poll(2) loop on the calling thread over stdin, stdout, stderr and, on Linux, a pidfd
//! for the main child's exit.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::{Duration, Instant, SystemTime};

#[cfg(not(target_os = "linux"))]
use super::command::launch;
#[cfg(target_os = "linux")]
use super::vfork::launch;
use super::{Limits, SpawnError, SpawnOutput, SpawnRequest, Termination};

/// Most bytes asked of one `read(2)`: one default Linux pipe buffer.
const READ_CHUNK: usize = 64 * 1024;
/// Fewest bytes of spare capacity a read goes ahead with before the buffer grows.
const MIN_SPARE: usize = 4 * 1024;

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
        source,
    };
    let io_error = |source| SpawnError::Io {
        command: req.command.to_owned(),
        source,
    };
    let (child_stdio, pipes) = pipes().map_err(start_error)?;
    let launched = launch(req, &child_stdio, allow_pidfd).map_err(start_error)?;
    let pid = launched.pid;
    // A pid that is not a positive pid_t cannot happen; refuse to `killpg` it anyway, since
    // killpg(0) or killpg(-1) would hit the host itself.
    if pid <= 1 {
        return Err(io_error(io::Error::other("child pid out of range")));
    }
    // Cancellation hook (crate::cancel): the group is killable by the host's cancel
    // while the child is unreaped; the registration is dropped before any reap below.
    let cancel = crate::cancel::register(pid);
    // Our ends are readied while the child is busy starting its shell. The child's end of
    // stdin is only closed after that, so the first write cannot raise SIGPIPE.
    let ours = pipes.ready(req.stdin);
    drop(child_stdio);

    let supervised =
        ours.and_then(|ours| Supervisor::new(ours, launched, req, start, allow_pidfd).run());
    drop(cancel);
    let supervised = match supervised {
        Ok(supervised) => supervised,
        Err(err) => {
            signal_group(pid, libc::SIGKILL);
            let _ = wait_blocking(pid);
            return Err(io_error(err));
        }
    };

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

/// Our ends of the child's pipes, as created.
struct Pipes {
    stdin: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
}

/// Our ends of the child's pipes, ready for the poll loop.
struct ParentEnds {
    /// `None` once everything was written (or there was nothing to write).
    stdin: Option<OwnedFd>,
    /// Bytes of stdin already written.
    stdin_written: usize,
    stdout: OwnedFd,
    stderr: OwnedFd,
}

/// Creates the three pipes: the child's ends (stdin, stdout, stderr) for the launcher, and
/// ours.
///
/// Everything is close-on-exec from birth, so a concurrent spawn on another thread cannot
/// leak our pipes into its child. The child's ends are kept above 2, so the launcher can
/// dup2 them onto 0, 1 and 2 in order without one clobbering another.
fn pipes() -> io::Result<([OwnedFd; 3], Pipes)> {
    let (stdin_child, stdin) = pipe()?;
    let (stdout, stdout_child) = pipe()?;
    let (stderr, stderr_child) = pipe()?;
    let child = [
        above_stdio(stdin_child)?,
        above_stdio(stdout_child)?,
        above_stdio(stderr_child)?,
    ];
    Ok((
        child,
        Pipes {
            stdin,
            stdout,
            stderr,
        },
    ))
}

impl Pipes {
    /// Makes our ends non-blocking and writes as much of `stdin` as the pipe takes.
    ///
    /// Called while the child's end of stdin is still open here too: the pipe has a
    /// reader whatever the child did, so this write cannot raise SIGPIPE. For the usual
    /// small payload it is the only write, and the poll loop never has to watch stdin (nor
    /// guard against SIGPIPE) at all.
    fn ready(self, stdin: &[u8]) -> io::Result<ParentEnds> {
        // Only our ends become non-blocking: the child's ends are separate open file
        // descriptions and keep their blocking semantics.
        set_nonblocking(&self.stdout)?;
        set_nonblocking(&self.stderr)?;
        let (stdin_fd, stdin_written) = if stdin.is_empty() {
            // Nothing to write: closing now gives the child an immediate EOF.
            (None, 0)
        } else {
            set_nonblocking(&self.stdin)?;
            let mut written = 0;
            write_some(&self.stdin, stdin, &mut written)?;
            ((written < stdin.len()).then_some(self.stdin), written)
        };
        Ok(ParentEnds {
            stdin: stdin_fd,
            stdin_written,
            stdout: self.stdout,
            stderr: self.stderr,
        })
    }
}

/// A close-on-exec pipe: (read end, write end).
#[cfg(not(target_vendor = "apple"))]
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds: [libc::c_int; 2] = [-1; 2];
    // SAFETY: `fds` is a valid, writable array of two c_ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let [read, write] = fds;
    // SAFETY: pipe2 succeeded, so both fds are fresh and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(read), OwnedFd::from_raw_fd(write)) })
}

/// A close-on-exec pipe: (read end, write end).
///
/// Apple has no pipe2, so close-on-exec is set right after: a fork on another thread in
/// between could still inherit the fds (std's own pipes have the same window there).
#[cfg(target_vendor = "apple")]
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds: [libc::c_int; 2] = [-1; 2];
    // SAFETY: `fds` is a valid, writable array of two c_ints.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let [read, write] = fds;
    // SAFETY: pipe succeeded, so both fds are fresh and owned by nobody else.
    let ends = unsafe { (OwnedFd::from_raw_fd(read), OwnedFd::from_raw_fd(write)) };
    for fd in [&ends.0, &ends.1] {
        // SAFETY: fcntl on an fd we own, with integer arguments only.
        if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(ends)
}

/// `fd`, or a close-on-exec duplicate of it above 2 when it sits on 0, 1 or 2 (only
/// possible when the host closed its own stdio).
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: fcntl on an fd we own, with integer arguments only.
    let dup = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if dup < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: F_DUPFD_CLOEXEC returned a fresh fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(dup) })
}

/// Makes a fresh pipe end non-blocking. F_SETFL replaces all the file status flags and a
/// fresh pipe has none, so there is nothing to read back first with F_GETFL.
fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: fcntl on an fd we own, with integer arguments only.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Writes as much of `data[*written..]` as the non-blocking pipe `fd` accepts right now,
/// counting in `written` (which stays exact when an error cuts the write short).
///
/// Errors, EPIPE included (the reader is gone), are returned as they are: whether one is
/// possible, and what it means, is the caller's to know.
fn write_some(fd: &OwnedFd, data: &[u8], written: &mut usize) -> io::Result<()> {
    while let Some(rest) = data.get(*written..).filter(|rest| !rest.is_empty()) {
        // SAFETY: `rest` is valid for reads of `rest.len()` bytes.
        let n = unsafe { libc::write(fd.as_raw_fd(), rest.as_ptr().cast(), rest.len()) };
        if let Ok(n) = usize::try_from(n) {
            *written += n;
            continue;
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => break,
            _ => return Err(err),
        }
    }
    Ok(())
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

/// Reaps `pid`, blocking until it has exited.
pub(super) fn wait_blocking(pid: libc::pid_t) -> io::Result<ExitStatus> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `status` is a valid, writable c_int for the duration of the call.
        if unsafe { libc::waitpid(pid, &mut status, 0) } == pid {
            return Ok(ExitStatus::from_raw(status));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Reaps `pid` if it has exited.
fn try_wait(pid: libc::pid_t) -> io::Result<Option<ExitStatus>> {
    let mut status: libc::c_int = 0;
    // SAFETY: as in `wait_blocking`; with WNOHANG the call never blocks.
    match unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } {
        0 => Ok(None),
        ret if ret == pid => Ok(Some(ExitStatus::from_raw(status))),
        _ => Err(io::Error::last_os_error()),
    }
}

fn reap_in_background(pid: libc::pid_t) {
    // If no thread can be spawned the child stays a zombie until the host exits.
    let _ = std::thread::Builder::new()
        .name("copse-hooks-reaper".to_owned())
        .spawn(move || {
            let _ = wait_blocking(pid);
        });
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
    /// Watches through the launcher's pidfd, else a new one, else the fallback.
    fn new(launched: Launched, allow_pidfd: bool) -> Self {
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
    /// Some bytes were appended.
    Data,
    Eof,
    WouldBlock,
}

/// One `read(2)` of at most `max` bytes from `fd`, appended to `buf`.
///
/// Reads straight into the spare capacity: no scratch buffer to zero and copy out of.
/// `buf` only grows when its spare capacity is below [`MIN_SPARE`] (or `max`), so the
/// final read that only finds EOF does not reallocate.
fn read_into(fd: &OwnedFd, buf: &mut Vec<u8>, max: usize) -> io::Result<Read> {
    if buf.capacity() - buf.len() < max.min(MIN_SPARE) {
        buf.reserve(max);
    }
    loop {
        let spare = buf.spare_capacity_mut();
        let len = max.min(spare.len());
        // SAFETY: `spare` is valid for writes of `spare.len()` >= `len` bytes; read(2)
        // only writes to it, so its being uninitialised does not matter.
        let n = unsafe { libc::read(fd.as_raw_fd(), spare.as_mut_ptr().cast(), len) };
        if let Ok(n) = usize::try_from(n) {
            if n == 0 {
                return Ok(Read::Eof);
            }
            // SAFETY: read(2) initialised the first `n` <= `len` bytes of the spare
            // capacity, which directly follow the current contents.
            unsafe { buf.set_len(buf.len() + n) };
            return Ok(Read::Data);
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
/// was started before the guard, and the launchers reset its signal mask anyway.
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
    /// Where stderr beyond its cap is read to and forgotten; allocated on first use.
    discard: Vec<u8>,
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
            term_sent: false,
            kill_sent: false,
            timeout_at: start.checked_add(req.timeout),
            grace_until: None,
            finish_at: None,
        }
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
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => self.stdin = None,
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

    /// Only async-signal-safe calls: getpid, getpgid, umask.
    struct GroupAndUmask;

    impl super::super::ChildSetup for GroupAndUmask {
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
