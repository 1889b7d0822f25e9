//! Containment: nothing a hook starts outlives its run, whatever kills the host.
//!
//! # Mechanism: a pid namespace per run
//!
//! Each hook's shell is started as the init (pid 1) of a new pid namespace, with
//! `PR_SET_PDEATHSIG(SIGKILL)`. When the init of a pid namespace dies, the kernel kills
//! every other process of that namespace: grandchildren, `setsid`/daemonised ones and
//! processes that moved to another group included; a process cannot leave a pid
//! namespace. So:
//!
//! * the run ends (completion, timeout, cancellation): the supervisor SIGKILLs the group,
//!   whose leader is the init, and the namespace goes with it;
//! * the host dies by any signal, SIGKILL included: the parent-death signal kills the
//!   init, and the namespace goes with it. Nothing has to outlive the host to do this.
//!
//! Why not a cgroup with `cgroup.kill`: it catches `setsid` too, but nothing would write
//! `cgroup.kill` once the host was SIGKILLed (that needs a supervisor process that outlives
//! the host), and creating a cgroup per run needs a delegated, writable cgroup v2 subtree,
//! which a user session rarely has. `PR_SET_CHILD_SUBREAPER` keeps orphans as the host's
//! children, which does nothing once the host itself is dead.
//!
//! Creating a pid namespace needs `CAP_SYS_ADMIN`: a root host creates just the pid
//! namespace; any other host creates a user namespace along with it (unprivileged user
//! namespaces), mapping only its own uid and gid, so the hook runs with the same ids and
//! no extra privilege outside. Where neither is possible (user namespaces disabled, a
//! container without them), runs fall back to the process-group kill and the parent-death
//! signal of the shell only — `setsid` escapes then survive — and [`layers`] says
//! containment is NOT enforced.
//!
//! Side effects a hook may notice: `$$` is 1 and `$PPID` 0; it cannot signal processes
//! outside its run (their pids do not exist in its namespace), and as init it ignores
//! signals it has no handler for when sent from inside the run.
//!
//! # A private `/proc`
//!
//! A pid namespace alone still leaves the host's `/proc` mounted: a hook could read every
//! host process's `environ` and `cmdline` (an agent's API key included) and `/proc/self`
//! would name a host pid. So the child, once it is the init of its namespace, unshares a
//! mount namespace (made private first: nothing propagates back) and mounts a fresh
//! procfs on `/proc`. A procfs shows the pid namespace of the process that mounts it, so
//! the hook sees only its own run. A sandboxed run does this inside its sandbox setup
//! (which makes a mount namespace of its own for its read-only binds; see
//! [`super::ChildSetup::mounts_private_proc`]), everything else right before the setup.
//! Where it cannot be done (a container whose `/proc` has masked paths refuses a new
//! procfs to an unprivileged user namespace) the run goes on with the host's `/proc`, and
//! [`layers`] says so.
//!
//! # Cancellation by the host
//!
//! Every started run's group is registered while the run is supervised, so a host that
//! is being terminated (the CLI on INT, TERM or HUP) can [`kill_all`] of them before it
//! exits; the private temp dirs are registered likewise (see `sandbox`).

use std::ffi::CString;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use super::Layer;

/// Why containment is unavailable, once a clone found out.
static UNAVAILABLE: Mutex<Option<String>> = Mutex::new(None);
static UNAVAILABLE_FLAG: AtomicBool = AtomicBool::new(false);

#[cfg(target_os = "linux")]
/// The namespaces one spawn asks for.
pub(super) struct Plan {
    pub(super) clone_flags: libc::c_int,
    /// Set when a user namespace is created along with the pid namespace.
    pub(super) maps: Option<IdMaps>,
}

#[cfg(target_os = "linux")]
/// What the child writes into its new user namespace: `setgroups` denied, then its own
/// uid and gid mapped to themselves.
pub(super) struct IdMaps {
    uid_map: CString,
    gid_map: CString,
}

/// Benchmarks only: spawn without a pid namespace, to measure what it costs.
#[cfg(feature = "test-seams")]
static BENCH_OFF: AtomicBool = AtomicBool::new(false);

/// Benchmarks only (the `test-seams` feature): `false` spawns runs uncontained, as before
/// pid namespaces, so a benchmark can measure their cost in the same run.
#[cfg(feature = "test-seams")]
pub fn set_containment_for_benchmarks(on: bool) {
    BENCH_OFF.store(!on, Ordering::Relaxed);
}

/// Benchmarks only: spawn without a private `/proc`, to measure what it costs.
#[cfg(feature = "test-seams")]
static BENCH_NO_PROC: AtomicBool = AtomicBool::new(false);

/// Benchmarks only (the `test-seams` feature): `false` leaves runs the host's `/proc`, as
/// before private ones, so a benchmark can measure their cost in the same run.
#[cfg(feature = "test-seams")]
pub fn set_private_proc_for_benchmarks(on: bool) {
    BENCH_NO_PROC.store(!on, Ordering::Relaxed);
}

#[cfg(target_os = "linux")]
/// The namespaces for the next spawn, `None` once they proved unavailable.
pub(super) fn plan() -> Option<Plan> {
    if UNAVAILABLE_FLAG.load(Ordering::Relaxed) {
        return None;
    }
    #[cfg(feature = "test-seams")]
    if BENCH_OFF.load(Ordering::Relaxed) {
        return None;
    }
    // SAFETY: geteuid/getegid cannot fail and take no arguments.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if uid == 0 {
        return Some(Plan {
            clone_flags: libc::CLONE_NEWPID,
            maps: None,
        });
    }
    Some(Plan {
        clone_flags: libc::CLONE_NEWPID | libc::CLONE_NEWUSER,
        maps: Some(IdMaps {
            uid_map: CString::new(format!("{uid} {uid} 1\n")).ok()?,
            gid_map: CString::new(format!("{gid} {gid} 1\n")).ok()?,
        }),
    })
}

#[cfg(target_os = "linux")]
/// Records that namespaces cannot be created here; later spawns go without.
pub(super) fn unavailable(err: &io::Error) {
    UNAVAILABLE_FLAG.store(true, Ordering::Relaxed);
    let mut reason = UNAVAILABLE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if reason.is_none() {
        *reason = Some(format!(
            "this host cannot create a pid namespace for its hooks ({err}); a hook process \
             that calls setsid can outlive its run"
        ));
    }
}

#[cfg(target_os = "linux")]
impl IdMaps {
    /// In the child, in its new user namespace. Async-signal-safe: open, write, close.
    pub(super) fn write_in_child(&self) -> Result<(), libc::c_int> {
        write_file(c"/proc/self/setgroups", b"deny")?;
        write_file(c"/proc/self/uid_map", self.uid_map.as_bytes())?;
        write_file(c"/proc/self/gid_map", self.gid_map.as_bytes())
    }
}

#[cfg(target_os = "linux")]
fn write_file(path: &std::ffi::CStr, data: &[u8]) -> Result<(), libc::c_int> {
    // SAFETY: `path` is NUL-terminated; open takes it and integers only.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: `data` is valid for reads of its length; `fd` was just opened.
    let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    let result = if usize::try_from(n).ok() == Some(data.len()) {
        Ok(())
    } else {
        Err(errno())
    };
    // SAFETY: closes the fd opened above.
    unsafe { libc::close(fd) };
    result
}

#[cfg(target_os = "linux")]
fn errno() -> libc::c_int {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EINVAL)
}

/// Set (to the errno) once a child could not mount its private `/proc`: later runs do
/// not try again. Written by the child itself: a vfork-style child shares the host's
/// memory, and an atomic store is async-signal-safe.
#[cfg(target_os = "linux")]
static PROC_FAILED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// In the child, before exec: when it is the init of a fresh pid namespace, mounts a
/// procfs of that namespace on `/proc`, in a mount namespace of its own
/// (`new_namespace: true` unshares one; `false`: the caller already did, and made it
/// private). Does nothing when the run is not contained (no pid namespace: a new procfs
/// would show the host anyway) or when an earlier run found it impossible. A failure is
/// recorded for [`layers`] and not returned: the run goes on with the host's `/proc`,
/// as an uncontained run does. Async-signal-safe: raw syscalls and an atomic store.
#[cfg(target_os = "linux")]
pub(crate) fn mount_private_proc_in_child(new_namespace: bool) {
    #[cfg(feature = "test-seams")]
    if BENCH_NO_PROC.load(Ordering::Relaxed) {
        return;
    }
    // SAFETY: getpid cannot fail; only the init of a new pid namespace sees 1.
    if unsafe { libc::getpid() } != 1 || PROC_FAILED.load(Ordering::Relaxed) != 0 {
        return;
    }
    if let Err(code) = mount_proc(new_namespace) {
        PROC_FAILED.store(code, Ordering::Relaxed);
    }
}

#[cfg(target_os = "linux")]
fn mount_proc(new_namespace: bool) -> Result<(), libc::c_int> {
    // SAFETY: raw syscalls on NUL-terminated literals and null pointers, as unshare(2)
    // and mount(2) allow; they affect only this child's own namespaces (it has its own
    // fs struct: no CLONE_FS).
    unsafe {
        if new_namespace {
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return Err(errno());
            }
            // Private first, so the new procfs never propagates to the host's mounts:
            // `/proc` itself (its own mount, the usual case) or else everything.
            if libc::mount(
                std::ptr::null(),
                c"/proc".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
                && libc::mount(
                    std::ptr::null(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) != 0
            {
                return Err(errno());
            }
        }
        if libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        ) != 0
        {
            return Err(errno());
        }
    }
    Ok(())
}

/// Whether runs get a private `/proc` here, or why not.
#[cfg(target_os = "linux")]
pub fn private_proc() -> Result<(), String> {
    contained()?;
    match PROC_FAILED.load(Ordering::Relaxed) {
        0 => Ok(()),
        code => Err(format!(
            "a hook cannot mount a /proc of its own here ({}); it sees the host's processes, \
             their environment and command lines included",
            io::Error::from_raw_os_error(code)
        )),
    }
}

/// Whether runs get a private `/proc` here, or why not.
#[cfg(not(target_os = "linux"))]
pub fn private_proc() -> Result<(), String> {
    contained()
}

/// What a process knows about itself, kept in one page the kernel zeroes in the child of
/// any fork (`MADV_WIPEONFORK`, Linux 4.14): the child is another process and starts
/// over, while every spawn after the first in a process costs no `getpid`. Zero means
/// "not known yet" in every field.
#[cfg(target_os = "linux")]
struct PerProcess {
    /// The process's pid.
    pid: std::sync::atomic::AtomicU32,
    /// Its own pidfd plus one (`-1`: none could be opened).
    pidfd: std::sync::atomic::AtomicI32,
}

/// The page holding [`PerProcess`], mapped once; `None` where the kernel cannot wipe it on
/// fork, and then nothing is cached.
#[cfg(target_os = "linux")]
fn per_process() -> Option<&'static PerProcess> {
    static PAGE: OnceLock<Option<usize>> = OnceLock::new();
    let addr = (*PAGE.get_or_init(|| {
        let len = std::mem::size_of::<PerProcess>();
        // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
        let page = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if page == libc::MAP_FAILED {
            return None;
        }
        // SAFETY: `page` is our own mapping of at least `len` bytes.
        if unsafe { libc::madvise(page, len, libc::MADV_WIPEONFORK) } != 0 {
            // SAFETY: unmaps the mapping made above, which nothing else knows of.
            unsafe { libc::munmap(page, len) };
            return None;
        }
        Some(page as usize)
    }))?;
    // SAFETY: `addr` is a page-aligned mapping, never unmapped, of at least
    // `size_of::<PerProcess>()` zero-filled bytes, and all-zeroes is a valid PerProcess
    // (two atomics). It is only ever accessed through this shared reference.
    Some(unsafe { &*(addr as *const PerProcess) })
}

/// The host's pid, asked of the kernel once per process.
#[cfg(target_os = "linux")]
pub(crate) fn host_pid() -> u32 {
    use std::sync::atomic::Ordering::Relaxed;
    let cache = per_process();
    if let Some(pid) = cache
        .map(|cache| cache.pid.load(Relaxed))
        .filter(|&pid| pid != 0)
    {
        return pid;
    }
    let pid = std::process::id();
    if let Some(cache) = cache {
        cache.pid.store(pid, Relaxed);
    }
    pid
}

/// The host's pid.
#[cfg(not(target_os = "linux"))]
pub(crate) fn host_pid() -> u32 {
    std::process::id()
}

/// The host's own pidfd (opened once per process; -1: none), which the child polls to tell
/// whether the host died before its parent-death signal was armed (in a pid namespace
/// `getppid` says 0). A child forked from the host opens its own: it inherits its parent's
/// descriptor (close-on-exec), which names the parent.
#[cfg(target_os = "linux")]
pub(super) fn host_pidfd() -> std::os::fd::RawFd {
    use std::sync::atomic::Ordering::Relaxed;
    let Some(cache) = per_process() else {
        // Nothing can be cached fork-safely: without a pidfd the child compares
        // `getppid` with the host's pid instead.
        return -1;
    };
    // Stored as the fd plus one, or -1: zero is "not known yet".
    let decode = |stored: i32| if stored > 0 { stored - 1 } else { -1 };
    match cache.pidfd.load(Relaxed) {
        0 => {}
        known => return decode(known),
    }
    let pid = libc::pid_t::try_from(host_pid()).unwrap_or(0);
    // SAFETY: pidfd_open takes integers only and returns a new O_CLOEXEC fd or -1.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_pidfd_open,
            libc::c_long::from(pid),
            0 as libc::c_long,
        )
    };
    let fd = std::os::fd::RawFd::try_from(ret)
        .ok()
        .filter(|&fd| fd >= 0)
        .unwrap_or(-1);
    // Kept for the life of the process. Two threads racing here both open one; the
    // loser closes its own.
    let stored = if fd >= 0 { fd + 1 } else { -1 };
    match cache.pidfd.compare_exchange(0, stored, Relaxed, Relaxed) {
        Ok(_) => fd,
        Err(known) => {
            if fd >= 0 {
                // SAFETY: `fd` was opened above and never published.
                unsafe { libc::close(fd) };
            }
            decode(known)
        }
    }
}

/// Whether runs are contained on this machine. Runs one trivial spawn the first time, so
/// the answer is what spawning actually did.
#[cfg(not(target_os = "linux"))]
pub fn contained() -> Result<(), String> {
    Err(
        "pid namespaces exist only on Linux; a hook process that calls setsid can outlive \
         its run"
            .to_owned(),
    )
}

/// Whether runs are contained on this machine. Starts one probe child the first time, so
/// the answer is what spawning actually did.
#[cfg(target_os = "linux")]
pub fn contained() -> Result<(), String> {
    static PROBED: OnceLock<()> = OnceLock::new();
    PROBED.get_or_init(|| {
        let env = [(
            std::ffi::OsString::from("PATH"),
            std::ffi::OsString::from("/usr/bin:/bin"),
        )];
        let cwd = std::path::Path::new("/");
        let req = super::SpawnRequest {
            command: "true",
            cwd,
            env: &env,
            stdin: b"",
            timeout: std::time::Duration::from_secs(10),
            limits: super::Limits::default(),
            child_setup: Some(&EndBeforeExec),
        };
        // A start error is the expected outcome: the child ends before it execs.
        let _ = super::run(&req);
    });
    if UNAVAILABLE_FLAG.load(Ordering::Relaxed) {
        let reason = UNAVAILABLE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
            .unwrap_or_default();
        return Err(reason);
    }
    Ok(())
}

/// The probe's child setup: by the time it runs, the child has made its namespaces (the
/// launcher records it if it could not) and tried its private `/proc` (recorded likewise),
/// which is all [`contained`] and [`private_proc`] ask. Exec'ing a shell would add
/// nothing but its cost, once per process: once per gate for the one-shot CLI.
#[cfg(target_os = "linux")]
struct EndBeforeExec;

// SAFETY: `_exit` only: async-signal-safe, no allocation.
#[cfg(target_os = "linux")]
unsafe impl super::ChildSetup for EndBeforeExec {
    fn apply_in_child(&self) -> io::Result<()> {
        // SAFETY: _exit never returns and runs nothing of the host's (no atexit, no
        // flush); the launcher sees a child that ended before exec and reaps it.
        unsafe { libc::_exit(0) }
    }
}

/// The containment layers, for the sandbox status.
pub fn layers() -> Vec<Layer> {
    let contained = contained();
    vec![
        Layer::new(
            "no hook process outlives its run or the host",
            contained.is_ok(),
            match contained {
                Ok(()) => "a pid namespace per run, killed with its init".to_owned(),
                Err(reason) => reason,
            },
        ),
        {
            let private = private_proc();
            Layer::new(
                "private /proc: a hook sees only its run's processes",
                private.is_ok(),
                match private {
                    Ok(()) => "a fresh procfs of the run's pid namespace".to_owned(),
                    Err(reason) => reason,
                },
            )
        },
        Layer::new(
            "descriptors: only stdin, stdout and stderr reach a hook",
            true,
            "closed in the child before exec".to_owned(),
        ),
    ]
}

// ---------------------------------------------------------------------------------
// The runs being supervised, for `kill_all`
// ---------------------------------------------------------------------------------

static ACTIVE: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

/// Registers a run's group while it is supervised.
pub(super) fn register(pgid: libc::pid_t) {
    ACTIVE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(pgid);
}

/// Unregisters it, before its leader is reaped (so its id cannot be reused meanwhile).
pub(super) fn unregister(pgid: libc::pid_t) {
    let mut active = ACTIVE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(at) = active.iter().position(|&p| p == pgid) {
        active.swap_remove(at);
    }
}

/// SIGKILLs the group of every run being supervised (with containment, their whole pid
/// namespaces). For a host about to exit on a signal; the supervising threads then see
/// their runs end as killed.
pub fn kill_all() {
    let active = ACTIVE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for &pgid in active.iter() {
        if pgid > 1 {
            // SAFETY: killpg takes plain integers; the group leader is unreaped (it is
            // unregistered before being reaped), so the id still names its group.
            unsafe { libc::killpg(pgid, libc::SIGKILL) };
        }
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::{host_pid, host_pidfd};

    /// The pid in `/proc/self/fdinfo/<fd>` (a pidfd's `Pid:` line), read without
    /// allocating: this runs in a child forked from a multi-threaded process.
    fn pidfd_pid(fd: i32) -> Option<u32> {
        let mut path = *b"/proc/self/fdinfo/\0\0\0\0\0\0\0\0\0\0\0\0";
        let mut at = b"/proc/self/fdinfo/".len();
        let mut digits = [0u8; 10];
        let mut n = u32::try_from(fd).ok()?;
        let mut len = 0;
        loop {
            *digits.get_mut(len)? = b'0' + u8::try_from(n % 10).ok()?;
            len += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        for &digit in digits.get(..len)?.iter().rev() {
            *path.get_mut(at)? = digit;
            at += 1;
        }
        let mut buf = [0u8; 512];
        // SAFETY: `path` is NUL-terminated (zero-filled past the digits); open, read and
        // close take it, a valid buffer and integers.
        let read = unsafe {
            let file = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
            if file < 0 {
                return None;
            }
            let read = libc::read(file, buf.as_mut_ptr().cast(), buf.len());
            libc::close(file);
            read
        };
        let text = buf.get(..usize::try_from(read).ok()?)?;
        let line = text
            .split(|&b| b == b'\n')
            .find(|line| line.starts_with(b"Pid:"))?;
        line.get(4..)?
            .iter()
            .filter(|b| b.is_ascii_digit())
            .try_fold(0u32, |pid, &b| {
                pid.checked_mul(10)?.checked_add(u32::from(b - b'0'))
            })
    }

    /// Every spawn reads the host's pid and pidfd from a per-process cache: a child forked
    /// from the host is another process, and must find its own, not its parent's.
    #[test]
    fn a_forked_child_has_its_own_pid_and_pidfd() {
        let parent = std::process::id();
        assert_eq!(host_pid(), parent);
        let parent_fd = host_pidfd();
        assert!(parent_fd >= 0, "no pidfd for the host");
        assert_eq!(pidfd_pid(parent_fd), Some(parent));
        assert_eq!(host_pidfd(), parent_fd, "the pidfd is opened once");

        // SAFETY: the child only makes async-signal-safe calls (getpid, pidfd_open, open,
        // read, close, atomics on the already initialised cache) and ends with _exit.
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "fork: {}", std::io::Error::last_os_error());
        if child == 0 {
            // SAFETY: getpid cannot fail.
            let me = u32::try_from(unsafe { libc::getpid() }).unwrap_or(0);
            let code = if host_pid() != me {
                1
            } else if pidfd_pid(host_pidfd()) != Some(me) {
                2
            } else {
                0
            };
            // SAFETY: _exit never returns and runs nothing of the parent's.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: `status` is a valid c_int; `child` is our unreaped child.
        assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
        assert!(libc::WIFEXITED(status), "status {status:#x}");
        // 1: the child saw its parent's pid; 2: its parent's pidfd.
        assert_eq!(libc::WEXITSTATUS(status), 0);
        assert_eq!(host_pid(), parent);
        assert_eq!(host_pidfd(), parent_fd);
    }
}
