//! SIGPIPE around writes to the child's stdin.

#[cfg(not(target_os = "linux"))]
use std::os::fd::OwnedFd;

/// Blocks SIGPIPE on the calling thread while we write to the child's stdin.
///
/// Rust programs ignore SIGPIPE, but a host embedding this library may not, and writing
/// to a pipe whose reader exited raises SIGPIPE before it returns EPIPE. The signal is
/// thread-directed, so blocking it here keeps it pending on this thread, where the guard
/// consumes it (if we caused it) before restoring the mask. The child is unaffected: it
/// was started before the guard, and the launchers reset its signal mask anyway.
#[cfg(target_os = "linux")]
pub(super) struct SigpipeGuard {
    old_mask: libc::sigset_t,
    pending_before: bool,
}

#[cfg(target_os = "linux")]
impl SigpipeGuard {
    pub(super) fn new() -> Option<Self> {
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
pub(super) fn sigpipe_set() -> libc::sigset_t {
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
pub(super) fn sigpipe_pending() -> bool {
    // SAFETY: all-zeroes is a valid sigset_t; sigpending fills it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigpending(&mut set) == 0 && libc::sigismember(&set, libc::SIGPIPE) == 1
    }
}

/// Keeps a write to a reader-less stdin pipe from raising SIGPIPE. Outside Linux there is
/// no non-blocking way to consume a pending signal, but macOS can switch SIGPIPE off per fd.
#[cfg(not(target_os = "linux"))]
pub(super) fn prevent_sigpipe(fd: &OwnedFd) {
    #[cfg(target_vendor = "apple")]
    {
        // SAFETY: fcntl on an fd we own, with integer arguments only.
        unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETNOSIGPIPE, 1) };
    }
    #[cfg(not(target_vendor = "apple"))]
    let _ = fd;
}
