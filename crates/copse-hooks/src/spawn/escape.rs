//! Escapes from the run's process group, seen as they happen.
//!
//! A process that leaves its group (`setsid`, or `setpgid` into a group other than the
//! run's) cannot leave the run's pid namespace, so it dies with the run; but the run must
//! say that it tried. A run that ends by itself takes its whole namespace with it before
//! the host sees the exit, so looking for escapees afterwards finds nothing, and sampling
//! while it runs misses an escape right before the end. So the kernel tells us instead:
//! the child installs a seccomp filter whose only rule sends `setsid` and such `setpgid`
//! calls to a user-space listener (`SECCOMP_RET_USER_NOTIF`), and passes the listener to
//! the host over a socket pair before exec. The supervisor polls it with the pipes; each
//! notification marks the run and lets the call go on unchanged
//! (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`). Nothing else is filtered, and nothing the hook
//! prints is read.
//!
//! Only for a contained run (inside its pid namespace `setpgid(…, 1)` joins the run's own
//! group, which is no escape), and only where the kernel lets the child install the
//! filter (it needs `CAP_SYS_ADMIN` in its user namespace, which a contained child has, or
//! no-new-privileges, which a sandboxed one has). Elsewhere the supervisor falls back to
//! sampling. A persistent hook (`spawn::start`) has nobody to answer the listener and is
//! not watched.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// The audit architecture of the native syscall ABI (little-endian targets only: the
/// filter reads the low half of an argument at its little-endian offset).
fn native_arch() -> Option<u32> {
    if cfg!(target_arch = "x86_64") {
        Some(0xC000_003E)
    } else if cfg!(target_arch = "aarch64") {
        Some(0xC000_00B7)
    } else if cfg!(target_arch = "riscv64") {
        Some(0xC000_00F3)
    } else {
        None
    }
}

/// The filter: notify `setsid`, and `setpgid` unless into group 1 (the run's own group
/// inside its namespace); allow everything else.
fn program() -> Option<&'static [libc::sock_filter]> {
    static PROGRAM: OnceLock<Option<Vec<libc::sock_filter>>> = OnceLock::new();
    PROGRAM
        .get_or_init(|| {
            let arch = native_arch()?;
            let setsid = u32::try_from(libc::SYS_setsid).ok()?;
            let setpgid = u32::try_from(libc::SYS_setpgid).ok()?;
            // Classic BPF opcodes (linux/filter.h).
            const LD_W_ABS: u16 = 0x20;
            const JEQ_K: u16 = 0x15;
            const RET_K: u16 = 0x06;
            let insn = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
            Some(vec![
                insn(LD_W_ABS, 0, 0, 4),                         // 0: arch
                insn(JEQ_K, 0, 6, arch),                         // 1: another ABI: allow (8)
                insn(LD_W_ABS, 0, 0, 0),                         // 2: nr
                insn(JEQ_K, 3, 0, setsid),                       // 3: setsid: notify (7)
                insn(JEQ_K, 0, 3, setpgid),                      // 4: not setpgid: allow (8)
                insn(LD_W_ABS, 0, 0, 24),                        // 5: args[1] (pgid), low half
                insn(JEQ_K, 1, 0, 1),                            // 6: into group 1: allow (8)
                insn(RET_K, 0, 0, libc::SECCOMP_RET_USER_NOTIF), // 7
                insn(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),      // 8
            ])
        })
        .as_deref()
}

/// The host's end of the channel the child sends its listener through, and the child's.
pub(super) struct Channel {
    host: OwnedFd,
    child: OwnedFd,
}

impl Channel {
    /// A datagram socket pair (close-on-exec), when this platform has a filter.
    pub(super) fn new() -> Option<Self> {
        program()?;
        let mut fds = [-1; 2];
        // SAFETY: `fds` has room for the two descriptors socketpair writes.
        let ret = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        if ret != 0 {
            return None;
        }
        let [host, child] = fds;
        // SAFETY: socketpair just returned both and nothing else owns them.
        Some(unsafe {
            Self {
                host: OwnedFd::from_raw_fd(host),
                child: OwnedFd::from_raw_fd(child),
            }
        })
    }

    /// What the child needs.
    pub(super) fn child_end(&self) -> ChildEnd {
        ChildEnd {
            socket: self.child.as_raw_fd(),
        }
    }

    /// After the child exec'd: the listener it sent, if it could install the filter.
    pub(super) fn receive(self) -> Option<OwnedFd> {
        drop(self.child);
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut control = [0u64; 8];
        // SAFETY: all-zeroes is a valid msghdr; the pointers set below outlive the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: `msg` describes valid buffers; non-blocking (the child sent before exec,
        // and the clone returned only after that).
        let n = unsafe {
            libc::recvmsg(
                self.host.as_raw_fd(),
                &mut msg,
                libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
            )
        };
        if n < 1 {
            return None;
        }
        // SAFETY: `msg` was filled by recvmsg; CMSG_FIRSTHDR/CMSG_DATA stay within the
        // control buffer it describes.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            if cmsg.is_null()
                || (*cmsg).cmsg_level != libc::SOL_SOCKET
                || (*cmsg).cmsg_type != libc::SCM_RIGHTS
            {
                return None;
            }
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
            (fd >= 0).then(|| OwnedFd::from_raw_fd(fd))
        }
    }
}

/// The child's side: the socket to send the listener through.
#[derive(Clone, Copy)]
pub(super) struct ChildEnd {
    socket: RawFd,
}

impl ChildEnd {
    /// In the child, last before exec: installs the filter and sends its listener to the
    /// host. Best effort: if either fails the run is simply not watched this way.
    /// Async-signal-safe: raw syscalls on the stack and on the program built in the
    /// parent.
    pub(super) fn install_in_child(self) {
        let Some(program) = program() else {
            return;
        };
        let prog = libc::sock_fprog {
            len: program.len() as libc::c_ushort,
            filter: program.as_ptr().cast_mut(),
        };
        // SAFETY: `prog` points at a valid program that outlives the call; the kernel
        // copies it.
        let listener = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
                &prog as *const libc::sock_fprog,
            )
        };
        let Ok(listener) = RawFd::try_from(listener) else {
            return;
        };
        if listener < 0 {
            return;
        }
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        // Room for one descriptor's control message, aligned.
        let mut control = [0u64; 4];
        // SAFETY: all-zeroes is a valid msghdr; every pointer set below points at this
        // stack frame and outlives the sendmsg; CMSG_* stay within `control`, which is
        // larger than CMSG_SPACE(sizeof(int)).
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as _;
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            if !cmsg.is_null() {
                (*cmsg).cmsg_level = libc::SOL_SOCKET;
                (*cmsg).cmsg_type = libc::SCM_RIGHTS;
                (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
                std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), listener);
                libc::sendmsg(self.socket, &msg, libc::MSG_DONTWAIT);
            }
            // The hook must not hold it (it could answer for itself).
            libc::close(listener);
        }
    }
}

/// In the supervisor, when the listener is readable: takes one notification and lets
/// the call go on. `Ok(true)`: a process of the run tried to leave its group.
pub(super) fn answer(listener: &OwnedFd) -> io::Result<bool> {
    // SAFETY: all-zeroes is a valid seccomp_notif (the kernel wants it zeroed).
    let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: the ioctl fills `notif`, a valid buffer of the size its number encodes.
    let ret = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_RECV,
            &mut notif as *mut libc::seccomp_notif,
        )
    };
    if ret != 0 {
        let err = io::Error::last_os_error();
        // The caller died (or was killed) before we took it: nothing to answer.
        return match err.raw_os_error() {
            Some(libc::ENOENT | libc::EINTR | libc::EAGAIN) => Ok(false),
            _ => Err(err),
        };
    }
    let mut resp = libc::seccomp_notif_resp {
        id: notif.id,
        val: 0,
        error: 0,
        flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
    };
    // SAFETY: `resp` is a valid seccomp_notif_resp; a stale id fails with ENOENT.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND,
            &mut resp as *mut libc::seccomp_notif_resp,
        );
    }
    Ok(true)
}
