//! SIGPIPE around writes to the child's stdin.

#[cfg(not(target_os = "linux"))]
use std::os::fd::OwnedFd;

/// Blocks SIGPIPE on the calling thread while we write to the child's stdin.
///
/// Rust programs ignore SIGPIPE, but a host embedding this library may not, and writing
/// to a pipe whose reader exited raises SIGPIPE before it returns EPIPE. The signal is
/// thread-directed, so blocking it here keeps it pending on this thread, where the guard
/// consumes it before unblocking. The child is unaffected: it was started before the
/// guard, and the launchers reset its signal mask anyway.
///
/// Costs one `rt_sigprocmask` to block and one to unblock, and nothing else unless a write
/// actually failed with EPIPE. Those two stay: a pipe has no per-write way to suppress
/// the signal (`MSG_NOSIGNAL` is for sockets, and a hook's stdin must stay a pipe), and
/// whether the host ignores SIGPIPE is its own to change at any time, so it cannot be
/// learnt once. No `sigpending` is needed in the usual case, where the thread did not
/// block SIGPIPE already: none can be pending on it then (it would have been delivered).
/// Only a thread that blocks it itself is asked, once, whether one is pending already,
/// which is not ours to swallow.
#[cfg(target_os = "linux")]
pub(super) struct SigpipeGuard {
    /// SIGPIPE was unblocked before: ours to unblock on drop.
    blocked_here: bool,
    /// SIGPIPE was blocked before and one was already pending (only asked then).
    pending_before: bool,
    /// A write failed with EPIPE, so the kernel raised SIGPIPE on this thread.
    raised: bool,
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
        // SAFETY: `old_mask` was filled in by pthread_sigmask.
        let was_blocked = unsafe { libc::sigismember(&old_mask, libc::SIGPIPE) } == 1;
        Some(Self {
            blocked_here: !was_blocked,
            pending_before: was_blocked && sigpipe_pending(),
            raised: false,
        })
    }

    /// A write under this guard failed with EPIPE. The pipe raises SIGPIPE exactly when a
    /// write finds no reader with bytes still to write, and the writer then retries and
    /// gets EPIPE (see `write_some`), so this is the only way the signal gets raised.
    pub(super) fn broken_pipe(&mut self) {
        self.raised = true;
    }
}

#[cfg(target_os = "linux")]
impl Drop for SigpipeGuard {
    fn drop(&mut self) {
        let set = sigpipe_set();
        if self.raised && !self.pending_before {
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
        if self.blocked_here {
            // SAFETY: unblocks only what `new` blocked; a null old-set pointer is allowed.
            unsafe {
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            }
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
pub(super) fn prevent_sigpipe(fd: &OwnedFd) {
    #[cfg(target_vendor = "apple")]
    {
        // SAFETY: fcntl on an fd we own, with integer arguments only.
        unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETNOSIGPIPE, 1) };
    }
    #[cfg(not(target_vendor = "apple"))]
    let _ = fd;
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use std::io;

    use super::{SigpipeGuard, sigpipe_pending, sigpipe_set};

    fn sigpipe_blocked() -> bool {
        // SAFETY: all-zeroes is a valid sigset_t; a null new set only reads the mask.
        unsafe {
            let mut mask: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut mask);
            libc::sigismember(&mask, libc::SIGPIPE) == 1
        }
    }

    fn set_sigpipe_blocked(on: bool) {
        let how = if on {
            libc::SIG_BLOCK
        } else {
            libc::SIG_UNBLOCK
        };
        // SAFETY: a valid set; only this test's own thread is affected.
        unsafe { libc::pthread_sigmask(how, &sigpipe_set(), std::ptr::null_mut()) };
    }

    /// Writes to a pipe whose reader is gone, as the guard's users do: EPIPE, reported.
    fn write_to_a_broken_pipe(guard: &mut SigpipeGuard) {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
        drop(read);
        let mut written = 0;
        let err = super::super::pipes::write_some(&write, b"x", &mut written).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        guard.broken_pipe();
    }

    /// Each case on a thread of its own, whose signal mask nobody else sees.
    fn on_a_thread(case: impl FnOnce() + Send + 'static) {
        std::thread::spawn(case).join().unwrap();
    }

    #[test]
    fn an_unblocked_thread_gets_sigpipe_unblocked_again() {
        on_a_thread(|| {
            set_sigpipe_blocked(false);
            let mut guard = SigpipeGuard::new().unwrap();
            assert!(sigpipe_blocked());
            write_to_a_broken_pipe(&mut guard);
            assert!(sigpipe_pending(), "the write raised no SIGPIPE");
            drop(guard);
            assert!(!sigpipe_blocked());
            assert!(!sigpipe_pending());
        });
    }

    #[test]
    fn a_thread_blocking_sigpipe_itself_keeps_it_blocked_without_ours_pending() {
        on_a_thread(|| {
            set_sigpipe_blocked(true);
            let mut guard = SigpipeGuard::new().unwrap();
            write_to_a_broken_pipe(&mut guard);
            drop(guard);
            assert!(sigpipe_blocked());
            assert!(!sigpipe_pending(), "our SIGPIPE was left to the host");
        });
    }

    #[test]
    fn a_sigpipe_pending_before_is_not_swallowed() {
        on_a_thread(|| {
            set_sigpipe_blocked(true);
            // SAFETY: signals this very thread, which blocks SIGPIPE.
            unsafe { libc::pthread_kill(libc::pthread_self(), libc::SIGPIPE) };
            assert!(sigpipe_pending());
            let mut guard = SigpipeGuard::new().unwrap();
            write_to_a_broken_pipe(&mut guard);
            drop(guard);
            assert!(sigpipe_pending(), "the host's own SIGPIPE was swallowed");
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: valid pointers; a zero timeout never blocks.
            unsafe { libc::sigtimedwait(&sigpipe_set(), std::ptr::null_mut(), &zero) };
            assert!(!sigpipe_pending());
        });
    }
}
