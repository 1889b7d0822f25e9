//! The Linux launcher: a vfork-style `clone(CLONE_VM | CLONE_VFORK)`, done by hand.
//!
//! Why not `std::process::Command`: orphan protection needs `PR_SET_PDEATHSIG` in the
//! child, which std only allows through `pre_exec`, and `pre_exec` makes std give up
//! `posix_spawn` for a full `fork`. A fork copies the page tables of the host and makes
//! every page copy-on-write, which the host then pays for again in page faults after the
//! child has exec'd; it was the largest single cost of a trivial hook.
//!
//! How: like glibc's `posix_spawn`, the child shares the parent's memory and runs on a
//! small stack of its own while the calling thread is suspended by the kernel until the
//! child has exec'd or exited. Everything the child needs (argv, envp, the cwd, the fds)
//! is built beforehand in the parent, so the child only makes async-signal-safe calls and
//! never allocates: it shares the allocator (and every other piece of state) with the
//! host's other threads, which keep running. The child reports a failure by writing its
//! errno into the shared [`ChildContext::status`]; the parent reads it once the clone has
//! returned, which the kernel only lets happen after the child exec'd or exited.
//!
//! No host signal handler may ever run in the child: it would run on the host's memory, in
//! a process that is not the host. On x86_64 the clone is a `clone3` with
//! `CLONE_CLEAR_SIGHAND` (Linux 5.5): the kernel creates the child with every caught
//! signal already back at its default action, so the host's signal mask is left alone and
//! the spawn costs the parent no signal-mask syscalls at all. Elsewhere, or where `clone3`
//! is refused (older kernels, seccomp policies that hide it, as container runtimes do),
//! the calling thread blocks every signal around a plain `clone` and the child resets the
//! handlers itself before anything can interrupt it, as glibc's `posix_spawn` does; the
//! refusal is remembered, so later spawns go straight there.

use std::cell::Cell;
use std::ffi::{CStr, OsString, c_char, c_int, c_void};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use super::unix::Launched;
use super::{ChildSetup, SpawnRequest};

/// The child's stack. The child itself needs a few hundred bytes; the rest is for a
/// [`ChildSetup`]. It is reserved, not committed (`MAP_NORESERVE`, touched on demand), so
/// its size costs nothing. glibc's `posix_spawn` makes do with 32 KiB plus the argv.
const STACK_SIZE: usize = 256 * 1024;

/// [`ChildContext::status`] before the child reported anything: if it is still there once
/// the clone has returned, the child died (or was killed) before it tried to exec.
const STATUS_PENDING: c_int = -1;
/// [`ChildContext::status`] just before `execve`: if it is still there once the clone has
/// returned, the exec succeeded (a failed one overwrites it with the errno).
const STATUS_EXECUTING: c_int = 0;

/// Starts `/bin/sh -c <command>` with `stdio` as its stdin, stdout and stderr, in its own
/// process group, with the parent-death signal armed and the [`ChildSetup`] applied.
///
/// `stdio` must be close-on-exec and above 2 (see `unix::pipes`): the child
/// dup2s them onto 0, 1 and 2 in that order, and neither may be overwritten by an earlier
/// dup2 or be left close-on-exec by a dup2 onto itself. On return the child has exec'd,
/// and its group exists. With `want_pidfd`, the pidfd comes from the clone itself
/// (`CLONE_PIDFD`) when the kernel supports it.
pub(super) fn launch(
    req: &SpawnRequest<'_>,
    stdio: &[OwnedFd; 3],
    want_pidfd: bool,
) -> io::Result<Launched> {
    launch_with(req, stdio, want_pidfd, clone)
}

/// [`launch`] with every clone made by [`clone_masked`], the path of kernels without
/// `clone3`, so that tests cover it wherever they run.
#[cfg(test)]
pub(super) fn launch_masked(
    req: &SpawnRequest<'_>,
    stdio: &[OwnedFd; 3],
    want_pidfd: bool,
) -> io::Result<Launched> {
    launch_with(req, stdio, want_pidfd, clone_masked)
}

/// How the child is cloned: [`clone`], or [`clone_masked`] only.
type CloneFn = fn(&ChildContext<'_>, &ChildStack, c_int) -> io::Result<(i32, c_int)>;

fn launch_with(
    req: &SpawnRequest<'_>,
    stdio: &[OwnedFd; 3],
    want_pidfd: bool,
    clone: CloneFn,
) -> io::Result<Launched> {
    let image = ExecImage::new(req)?;
    let ns = super::contain::plan();
    let stack = match STACK.try_with(Cell::take) {
        Ok(Some(stack)) => stack,
        _ => ChildStack::new()?,
    };
    let ctx = ChildContext {
        path: c"/bin/sh",
        argv: image.argv.as_ptr(),
        envp: image.envp.as_ptr(),
        cwd: image.cwd,
        stdio: stdio.each_ref().map(AsRawFd::as_raw_fd),
        parent: super::contain::host_pid(),
        host_pidfd: super::contain::host_pidfd(),
        max_signal: libc::SIGRTMAX(),
        setup: req.child_setup,
        maps: ns.as_ref().and_then(|ns| ns.maps.as_ref()),
        status: AtomicI32::new(STATUS_PENDING),
        ns_failed: AtomicI32::new(0),
    };

    let mut flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD;
    if want_pidfd {
        flags |= libc::CLONE_PIDFD;
    }
    let ns_flags = ns.as_ref().map_or(0, |ns| ns.clone_flags);
    let (pid, pidfd) = {
        let mut attempt = clone(&ctx, &stack, flags | ns_flags);
        if ns_flags != 0
            && let Err(err) = &attempt
            && matches!(
                err.raw_os_error(),
                Some(libc::EPERM | libc::EINVAL | libc::ENOSPC | libc::EUSERS | libc::ENOMEM)
            )
        {
            // No namespaces here (a container, a sysctl): remember, and run uncontained.
            super::contain::unavailable(err);
            attempt = clone(&ctx, &stack, flags);
        }
        match attempt {
            // Kernels before 5.2 ignore CLONE_PIDFD (so `pidfd` stays -1, handled below);
            // a seccomp filter may reject it instead: then do without.
            Err(err) if want_pidfd && err.raw_os_error() == Some(libc::EINVAL) => {
                clone(&ctx, &stack, (flags | ns_flags) & !libc::CLONE_PIDFD)?
            }
            other => other?,
        }
    };
    // The clone has returned, so the child has exec'd or exited (CLONE_VFORK): it no
    // longer uses the stack or the exec image, and `status` is final. If the thread-local
    // is gone (thread teardown), the closure is dropped uncalled and unmaps the stack.
    let _ = STACK.try_with(move |slot| slot.set(Some(stack)));
    let pidfd = (pidfd >= 0).then(|| {
        // SAFETY: the kernel stored a fresh pidfd (O_CLOEXEC) here; nothing else owns it.
        unsafe { OwnedFd::from_raw_fd(pidfd) }
    });
    match ctx.status.load(Ordering::Acquire) {
        STATUS_EXECUTING => Ok(Launched { pid, pidfd }),
        _ if ctx.ns_failed.load(Ordering::Acquire) != 0 => {
            // The user namespace's id maps could not be written: never again, and this
            // run goes uncontained rather than not at all.
            let _ = super::unix::wait_blocking(pid);
            super::contain::unavailable(&io::Error::from_raw_os_error(
                ctx.ns_failed.load(Ordering::Acquire),
            ));
            launch_with(req, stdio, want_pidfd, clone)
        }
        status => {
            // The child is gone or about to be: collect it so it leaves no zombie.
            let _ = super::unix::wait_blocking(pid);
            Err(if status == STATUS_PENDING {
                io::Error::other("the child died before it could exec")
            } else {
                io::Error::from_raw_os_error(status)
            })
        }
    }
}

/// Set once `clone3` with `CLONE_CLEAR_SIGHAND` was refused where the masked clone then
/// worked: the kernel or a seccomp policy does not have it, so later spawns skip it.
static CLONE3_REFUSED: AtomicBool = AtomicBool::new(false);

/// One clone of the child, with the `flags` of `clone(2)` (the exit signal in the low
/// byte). Returns the pid and the pidfd slot (-1 when none was stored).
fn clone(ctx: &ChildContext<'_>, stack: &ChildStack, flags: c_int) -> io::Result<(i32, c_int)> {
    if cfg!(target_arch = "x86_64") && !CLONE3_REFUSED.load(Ordering::Relaxed) {
        match clone3_clear_sighand(ctx, stack, flags) {
            // ENOSYS: no clone3 (before Linux 5.3, or hidden by seccomp, as container
            // runtimes do); EINVAL: no CLONE_CLEAR_SIGHAND (before 5.5); EPERM: an older
            // seccomp policy's answer to clone3; E2BIG: an unexpected argument size. EINVAL
            // and EPERM can also be about the namespaces, which the masked clone then
            // refuses the same way: its error is the answer, and clone3 stays in use.
            Err(err)
                if matches!(
                    err.raw_os_error(),
                    Some(libc::ENOSYS | libc::EINVAL | libc::EPERM | libc::E2BIG)
                ) =>
            {
                let masked = clone_masked(ctx, stack, flags);
                if masked.is_ok() {
                    CLONE3_REFUSED.store(true, Ordering::Relaxed);
                }
                return masked;
            }
            other => return other,
        }
    }
    clone_masked(ctx, stack, flags)
}

/// `clone(2)` through the libc wrapper (which switches to the child's stack and calls
/// [`child_main`] there), with every signal blocked on the calling thread meanwhile.
///
/// The two `rt_sigprocmask` calls cannot be spared on this path: the child starts with
/// the host's handlers and the calling thread's mask, and only a mask blocking everything
/// keeps a handler from running in it before it has reset them (`reset_handlers`).
fn clone_masked(
    ctx: &ChildContext<'_>,
    stack: &ChildStack,
    flags: c_int,
) -> io::Result<(i32, c_int)> {
    let _blocked = BlockAllSignals::new()?;
    let mut pidfd: c_int = -1;
    // SAFETY: `child_main` only makes async-signal-safe calls on data that `ctx` keeps
    // alive and unmodified until the clone returns, which with CLONE_VFORK happens only
    // after the child has exec'd or exited; it never returns (it execs or `_exit`s).
    // `stack.top()` is the 16-byte-aligned end of a writable mapping that nothing else
    // uses. The fifth argument (parent_tid) is where CLONE_PIDFD stores the pidfd, and a
    // valid, writable c_int. All signals are blocked (`_blocked`), so no handler of the
    // host can run in the child before it resets them.
    let pid = unsafe {
        libc::clone(
            child_main,
            stack.top(),
            flags,
            ptr::from_ref(ctx).cast_mut().cast::<c_void>(),
            ptr::from_mut(&mut pidfd),
        )
    };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((pid, pidfd))
}

/// `CLONE_CLEAR_SIGHAND` (linux/sched.h; clone3 only, Linux 5.5): the child starts with
/// every caught signal reset to its default action.
const CLONE_CLEAR_SIGHAND: u64 = 0x1_0000_0000;

/// The first fields of `struct clone_args` (linux/sched.h), `CLONE_ARGS_SIZE_VER0`: all
/// this clone needs, and what every kernel with clone3 accepts.
#[repr(C)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
}

/// `clone3(2)` with `CLONE_CLEAR_SIGHAND`, the child entering [`child_main_cleared`] on
/// its own stack. The host's signal mask is not touched: no host handler can run in the
/// child, since it has none from its first instruction.
fn clone3_clear_sighand(
    ctx: &ChildContext<'_>,
    stack: &ChildStack,
    flags: c_int,
) -> io::Result<(i32, c_int)> {
    // The low byte of clone(2)'s flags is the exit signal, a field of its own here.
    let flags = u64::try_from(flags).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let mut pidfd: c_int = -1;
    let mut args = CloneArgs {
        flags: (flags & !0xff) | CLONE_CLEAR_SIGHAND,
        pidfd: ptr::from_mut(&mut pidfd) as u64,
        child_tid: 0,
        parent_tid: 0,
        exit_signal: flags & 0xff,
        stack: stack.bottom() as u64,
        stack_size: STACK_SIZE as u64,
        tls: 0,
    };
    // SAFETY: `args` is a valid clone_args of the size given, and `pidfd` a writable
    // c_int, both alive until the call returns. The child runs `child_main_cleared` on the
    // 16-byte-aligned top of a writable mapping that nothing else uses (the kernel sets
    // its stack pointer to `stack + stack_size`); that function only makes
    // async-signal-safe calls on data `ctx` keeps alive and unmodified until the clone
    // returns, which with CLONE_VFORK happens only after the child has exec'd or exited,
    // and never returns.
    let ret = unsafe {
        raw_clone3(
            &mut args,
            std::mem::size_of::<CloneArgs>(),
            child_main_cleared,
            ptr::from_ref(ctx).cast_mut().cast::<c_void>(),
        )
    };
    if ret < 0 {
        let code = c_int::try_from(-ret).unwrap_or(libc::EINVAL);
        return Err(io::Error::from_raw_os_error(code));
    }
    let pid = i32::try_from(ret).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    Ok((pid, pidfd))
}

/// The `clone3` syscall; in the child, calls `entry(arg)` on the stack the kernel switched
/// to and exits with its result (it never returns to Rust code in the child, whose stack
/// frames are the parent's). Returns the syscall's raw result: the pid, or `-errno`.
///
/// # Safety
///
/// `args` must point at a valid `clone_args` of `size` bytes that gives the child a stack
/// of its own, and `entry` must be safe to run there on `arg` (see [`child_main_cleared`]).
#[cfg(target_arch = "x86_64")]
unsafe fn raw_clone3(
    args: *mut CloneArgs,
    size: usize,
    entry: extern "C" fn(*mut c_void) -> c_int,
    arg: *mut c_void,
) -> libc::c_long {
    let ret: libc::c_long;
    // SAFETY: the caller vouches for `args`, `entry` and `arg`. In the parent the asm is
    // one syscall: rcx and r11 are clobbered, every other register is preserved, and the
    // stack is not touched. The child (rax 0) never leaves the asm: on its own stack
    // (16-byte aligned, so the `call` leaves it as the ABI expects) it calls `entry`,
    // then exits.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "xor ebp, ebp",
            "mov rdi, r13",
            "call r12",
            "mov edi, eax",
            "mov eax, {exit}",
            "syscall",
            "ud2",
            "2:",
            exit = const libc::SYS_exit,
            inlateout("rax") libc::SYS_clone3 => ret,
            in("rdi") args,
            in("rsi") size,
            in("r12") entry,
            in("r13") arg,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// Elsewhere the child is always made by [`clone_masked`]; nothing calls this.
///
/// # Safety
///
/// None needed: it makes no syscall.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn raw_clone3(
    _args: *mut CloneArgs,
    _size: usize,
    _entry: extern "C" fn(*mut c_void) -> c_int,
    _arg: *mut c_void,
) -> libc::c_long {
    -libc::c_long::from(libc::ENOSYS)
}

/// `/bin/sh -c <command>`, its environment and its cwd as the NUL-terminated strings and
/// NULL-terminated pointer arrays `execve` and `chdir` take.
struct ExecImage {
    /// Every string, NUL-terminated, back to back; the pointers below point into it. It is
    /// never touched after they were taken, so they stay valid as long as it lives.
    _strings: Vec<u8>,
    argv: [*const c_char; 4],
    envp: Vec<*const c_char>,
    cwd: *const c_char,
}

impl ExecImage {
    fn new(req: &SpawnRequest<'_>) -> io::Result<Self> {
        // As `Command::envs` did: the last value of a repeated name wins, and the child
        // sees the names sorted. Reversed, then stably sorted, the last value of each name
        // comes first among its equals, which is the one `dedup_by` keeps.
        let mut vars: Vec<&(OsString, OsString)> = req.env.iter().rev().collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        vars.dedup_by(|later, kept| later.0 == kept.0);

        let command = req.command.as_bytes();
        let cwd = req.cwd.as_os_str().as_bytes();
        let len = command.len()
            + cwd.len()
            + 2
            + vars
                .iter()
                .map(|(name, value)| name.len() + value.len() + 2)
                .sum::<usize>();
        // One allocation for all the strings, one for the pointers.
        let mut strings = Vec::with_capacity(len);
        let mut push = |parts: &[&[u8]], what: &str| {
            let start = strings.len();
            for part in parts {
                if part.contains(&0) {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{what} contains a NUL byte"),
                    ));
                }
                strings.extend_from_slice(part);
            }
            strings.push(0);
            Ok(start)
        };
        let command = push(&[command], "the command")?;
        let cwd = push(&[cwd], "the working directory")?;
        let env = vars
            .iter()
            .map(|(name, value)| {
                push(
                    &[name.as_bytes(), b"=", value.as_bytes()],
                    "the environment",
                )
            })
            .collect::<io::Result<Vec<usize>>>()?;

        // Only now that `strings` is complete (it will not reallocate) are pointers taken.
        let at = |start: usize| {
            strings
                .get(start..)
                .map_or(ptr::null(), |s| s.as_ptr().cast())
        };
        let envp = env
            .into_iter()
            .map(at)
            .chain(std::iter::once(ptr::null()))
            .collect();
        let argv = [
            c"/bin/sh".as_ptr(),
            c"-c".as_ptr(),
            at(command),
            ptr::null(),
        ];
        let cwd = at(cwd);
        Ok(Self {
            _strings: strings,
            argv,
            envp,
            cwd,
        })
    }
}

thread_local! {
    /// This thread's [`ChildStack`], kept from one spawn to the next: mapping a fresh one
    /// costs three syscalls and a page fault every time. The stack is only in use while
    /// this thread is suspended in the clone, so one per thread is all it takes.
    static STACK: Cell<Option<ChildStack>> = const { Cell::new(None) };
}

/// An anonymous mapping for the child's stack, with a guard page below it so that a
/// [`ChildSetup`] overflowing it faults instead of scribbling over host memory.
struct ChildStack {
    base: *mut c_void,
    len: usize,
}

impl ChildStack {
    fn new() -> io::Result<Self> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .ok()
            .filter(|&page| page > 0 && STACK_SIZE.is_multiple_of(page))
            .ok_or_else(|| io::Error::other("unusable page size"))?;
        let len = STACK_SIZE + page;
        // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
        let base = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = Self { base, len };
        // The stack grows down, so the guard is the lowest page.
        // SAFETY: `base` is the page-aligned start of our own mapping, at least one page.
        if unsafe { libc::mprotect(base, page, libc::PROT_NONE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stack)
    }

    /// The initial stack pointer: the end of the mapping (page-aligned, so 16-aligned).
    fn top(&self) -> *mut c_void {
        self.base.wrapping_byte_add(self.len)
    }

    /// The lowest address of the usable stack, just above the guard page: [`STACK_SIZE`]
    /// bytes below [`top`](ChildStack::top).
    fn bottom(&self) -> *mut c_void {
        self.top().wrapping_byte_sub(STACK_SIZE)
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, which nothing uses any more
        // (the child has exec'd or exited by the time the stack is dropped).
        unsafe {
            libc::munmap(self.base, self.len);
        }
    }
}

/// Blocks every signal on the calling thread until dropped (restoring the previous mask).
struct BlockAllSignals {
    old: libc::sigset_t,
}

impl BlockAllSignals {
    fn new() -> io::Result<Self> {
        // SAFETY: all-zeroes is a valid sigset_t; sigfillset/pthread_sigmask fill them in
        // and only need valid pointers.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            let ret = libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            if ret != 0 {
                return Err(io::Error::from_raw_os_error(ret));
            }
            Ok(Self { old })
        }
    }
}

impl Drop for BlockAllSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `new`; a null old-set pointer is allowed.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, ptr::null_mut());
        }
    }
}

/// Everything the child reads, prepared by the parent; `status` is its only write.
struct ChildContext<'a> {
    path: &'static CStr,
    argv: *const *const c_char,
    envp: *const *const c_char,
    cwd: *const c_char,
    stdio: [RawFd; 3],
    /// The host's pid, to detect that it died before the parent-death signal was armed.
    parent: u32,
    /// The host's pidfd (-1: none), for the same when `getppid` cannot tell.
    host_pidfd: RawFd,
    /// The highest signal number whose handler may need resetting.
    max_signal: c_int,
    setup: Option<&'a dyn ChildSetup>,
    /// The id maps to write when the child is in a new user namespace.
    maps: Option<&'a super::contain::IdMaps>,
    /// [`STATUS_PENDING`], then [`STATUS_EXECUTING`] or an errno.
    status: AtomicI32,
    /// The errno of writing the id maps, if that failed (0: it did not).
    ns_failed: AtomicI32,
}

/// The child's entry point after [`clone_masked`], on the child's stack, sharing the
/// host's memory: it still has the host's signal handlers, all blocked.
///
/// Never returns: it execs, or reports the errno of what failed and `_exit`s.
extern "C" fn child_main(arg: *mut c_void) -> c_int {
    child(arg, true)
}

/// The child's entry point after [`clone3_clear_sighand`]: the kernel already reset its
/// caught signals to their default actions.
extern "C" fn child_main_cleared(arg: *mut c_void) -> c_int {
    child(arg, false)
}

fn child(arg: *mut c_void, reset_handlers: bool) -> c_int {
    // SAFETY: `arg` is the `&ChildContext` passed to clone by `launch`, which keeps it
    // alive and untouched until the clone returns, i.e. until after this child has
    // exec'd or exited.
    let ctx = unsafe { &*arg.cast_const().cast::<ChildContext<'_>>() };
    let errno = ctx.exec(reset_handlers);
    ctx.status.store(errno, Ordering::Release);
    // SAFETY: _exit is async-signal-safe and never returns; nothing in this half-made
    // child may be unwound, flushed or freed (the memory is the host's).
    unsafe { libc::_exit(127) }
}

impl ChildContext<'_> {
    /// Sets the child up and execs. Returns only on failure, with the errno to report.
    ///
    /// Only async-signal-safe libc calls, no allocation, no panics: see [`child_main`].
    /// `reset_handlers`: the child still has the host's handlers (the masked clone).
    fn exec(&self, reset_handlers: bool) -> c_int {
        // After the masked clone, first, while every signal is still blocked: no host
        // handler may run in here. After clone3 the kernel has done it.
        if reset_handlers {
            self.reset_signal_handlers();
        }

        for (&fd, target) in self.stdio.iter().zip(0..) {
            // SAFETY: dup2 on integer fds; `fd` is open (the parent holds it until the
            // clone returns) and > 2, so no earlier dup2 replaced it.
            if unsafe { libc::dup2(fd, target) } < 0 {
                return errno();
            }
        }
        // SAFETY: `cwd` is a NUL-terminated string that outlives the child's use of it.
        if unsafe { libc::chdir(self.cwd) } != 0 {
            return errno();
        }
        // SAFETY: setpgid takes plain integers; (0, 0) makes this process a group leader.
        if unsafe { libc::setpgid(0, 0) } != 0 {
            return errno();
        }
        // SAFETY: prctl(PR_SET_PDEATHSIG) takes plain integers.
        if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } != 0 {
            return errno();
        }
        // If the host died before prctl, the death signal was never armed and we have
        // already been reparented: nobody is waiting for us, so exit instead of running
        // orphaned. In a pid namespace getppid says 0, so the host's pidfd tells instead
        // (readable once the host has exited).
        if self.host_gone() {
            // SAFETY: as in `child_main`.
            unsafe { libc::_exit(127) };
        }
        if let Some(maps) = self.maps
            && let Err(code) = maps.write_in_child()
        {
            self.ns_failed.store(code, Ordering::Release);
            return code;
        }
        // A procfs of the run's own pid namespace, unless the setup mounts it itself.
        if !self.setup.is_some_and(|setup| setup.mounts_private_proc()) {
            super::contain::mount_private_proc_in_child(true);
        }
        if let Some(setup) = self.setup
            && let Err(err) = setup.apply_in_child()
        {
            let code = err.raw_os_error().unwrap_or(libc::EINVAL);
            // Freeing a custom error here would mean calling the host's allocator; leaking
            // it is the lesser evil (allocating it already broke the contract).
            std::mem::forget(err);
            return code;
        }
        // Every descriptor but the three pipes goes: the host may hold fds it inherited
        // without close-on-exec, and a hook must not write through them.
        close_above_stdio();
        // What the hook inherits: SIGPIPE at its default (Rust hosts ignore it, and
        // ignored signals survive exec), and no blocked signal. Every other handler was
        // reset, above or by the kernel, so a signal arriving now cannot run host code.
        // SAFETY: all-zeroes is a valid sigset_t, sigemptyset initialises it; sigaction
        // and pthread_sigmask get valid pointers (null for the unused old values).
        unsafe {
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(libc::SIGPIPE, &default, ptr::null_mut());
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::pthread_sigmask(libc::SIG_SETMASK, &none, ptr::null_mut());
        }
        self.status.store(STATUS_EXECUTING, Ordering::Release);
        // SAFETY: path, argv and envp are NUL-terminated strings in NULL-terminated arrays
        // built by the parent, alive and unmodified until the clone returns.
        unsafe { libc::execve(self.path.as_ptr(), self.argv, self.envp) };
        errno()
    }

    fn host_gone(&self) -> bool {
        if self.host_pidfd >= 0 {
            let mut pollfd = libc::pollfd {
                fd: self.host_pidfd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, zero timeout: never blocks.
            let ready = unsafe { libc::poll(&mut pollfd, 1, 0) };
            return ready > 0;
        }
        // SAFETY: getppid cannot fail.
        let ppid = unsafe { libc::getppid() };
        ppid != 0 && u32::try_from(ppid).ok() != Some(self.parent)
    }

    /// Resets every caught signal to its default action (ignored ones stay ignored, as
    /// across any exec). Same as glibc's `posix_spawn`: a handler is host code and would
    /// run on the host's memory.
    fn reset_signal_handlers(&self) {
        for signal in 1..=self.max_signal {
            // SAFETY: all-zeroes is a valid sigaction; sigaction only reads/writes through
            // the valid pointers given. Invalid numbers (SIGKILL, SIGSTOP, the signals
            // reserved by libc) just fail with EINVAL and keep their disposition, which
            // for libc's own handlers is harmless: they ignore signals not sent by
            // their process.
            unsafe {
                let mut current: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, ptr::null(), &mut current) != 0
                    || current.sa_sigaction == libc::SIG_DFL
                    || current.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, ptr::null_mut());
            }
        }
    }
}

/// Closes every descriptor above 2. Async-signal-safe: `close_range(2)` (Linux 5.9), else
/// `close(2)` on each number below the descriptor limit.
fn close_above_stdio() {
    // SAFETY: close_range takes plain integers; closing descriptors the child owns (its
    // own fd table: no CLONE_FILES) cannot affect the host.
    let ret = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    if ret == 0 {
        return;
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable rlimit.
    let max = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        c_int::try_from(limit.rlim_cur.min(1 << 20)).unwrap_or(1 << 20)
    } else {
        1 << 16
    };
    for fd in 3..max {
        // SAFETY: as above; EBADF for numbers not open is harmless.
        unsafe { libc::close(fd) };
    }
}

/// The calling thread's errno, without allocating.
fn errno() -> c_int {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EINVAL)
}

#[cfg(test)]
#[cfg(target_arch = "x86_64")]
mod tests {
    use std::sync::atomic::Ordering;

    use super::CLONE3_REFUSED;

    const HELPER_VAR: &str = "COPSE_VFORK_TEST_HELPER";

    /// Makes `clone3` fail with `errno` on this thread (and what it starts), as the
    /// seccomp policies of container runtimes do.
    fn refuse_clone3(errno: u32) {
        const LD_W_ABS: u16 = 0x20;
        const JEQ_K: u16 = 0x15;
        const RET_K: u16 = 0x06;
        let insn = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
        let clone3 = u32::try_from(libc::SYS_clone3).unwrap();
        let program = [
            insn(LD_W_ABS, 0, 0, 4),                            // arch
            insn(JEQ_K, 0, 3, 0xC000_003E),                     // x86_64, else allow
            insn(LD_W_ABS, 0, 0, 0),                            // nr
            insn(JEQ_K, 0, 1, clone3),                          // clone3, else allow
            insn(RET_K, 0, 0, libc::SECCOMP_RET_ERRNO | errno), // refused
            insn(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
        ];
        let prog = libc::sock_fprog {
            len: u16::try_from(program.len()).unwrap(),
            filter: program.as_ptr().cast_mut(),
        };
        // SAFETY: prctl with integers, then with a valid program that outlives the call
        // (the kernel copies it). Only this helper process's thread is affected.
        unsafe {
            assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
            assert_eq!(
                libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog),
                0,
                "seccomp: {}",
                std::io::Error::last_os_error()
            );
        }
    }

    #[test]
    #[ignore = "helper process for refused_clone3_falls_back_to_the_masked_clone"]
    fn helper_process() {
        let Ok(errno) = std::env::var(HELPER_VAR) else {
            return;
        };
        refuse_clone3(errno.parse().unwrap());
        let env = [(
            std::ffi::OsString::from("PATH"),
            std::ffi::OsString::from("/usr/bin:/bin"),
        )];
        let cwd = std::env::temp_dir();
        let out = crate::spawn::run(&crate::spawn::SpawnRequest {
            command: "cat; grep '^SigBlk' /proc/self/status",
            cwd: &cwd,
            env: &env,
            stdin: b"ping\n",
            timeout: std::time::Duration::from_secs(30),
            limits: crate::spawn::Limits::default(),
            child_setup: None,
        })
        .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "ping\nSigBlk:\t0000000000000000\n"
        );
        assert_eq!(out.exit_code, Some(0));
        assert!(
            CLONE3_REFUSED.load(Ordering::Relaxed),
            "clone3 was not refused"
        );
        println!("VFORK-HELPER-DONE");
    }

    /// Where `clone3` is refused (an old kernel, a container's seccomp policy), runs go
    /// through the masked clone, and later ones go there directly.
    #[test]
    fn refused_clone3_falls_back_to_the_masked_clone() {
        let exe = std::env::current_exe().unwrap();
        for errno in [libc::ENOSYS, libc::EPERM, libc::EINVAL] {
            let out = std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "spawn::vfork::tests::helper_process",
                    "--ignored",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(HELPER_VAR, errno.to_string())
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && stdout.contains("VFORK-HELPER-DONE"),
                "errno {errno}: {:?}\n{stdout}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
