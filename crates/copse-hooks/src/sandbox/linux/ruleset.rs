//! Landlock's user-space ABI (`linux/landlock.h`), restated here.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub(super) const CREATE_RULESET_VERSION: libc::c_uint = 1 << 0;
pub(super) const RULE_PATH_BENEATH: libc::c_int = 1;

pub(super) const FS_EXECUTE: u64 = 1 << 0;
pub(super) const FS_WRITE_FILE: u64 = 1 << 1;
pub(super) const FS_READ_FILE: u64 = 1 << 2;
pub(super) const FS_READ_DIR: u64 = 1 << 3;
// 1 << 4 ..= 1 << 12: remove dir/file, make char/dir/reg/sock/fifo/block/sym.
pub(super) const FS_REFER: u64 = 1 << 13;
pub(super) const FS_TRUNCATE: u64 = 1 << 14;
pub(super) const FS_IOCTL_DEV: u64 = 1 << 15;
/// Every right of ABI 1 (bits 0 to 12).
pub(super) const FS_ABI1: u64 = (1 << 13) - 1;

pub(super) const NET_BIND_TCP: u64 = 1 << 0;
pub(super) const NET_CONNECT_TCP: u64 = 1 << 1;

/// IPC scopes (ABI 6): no connecting to abstract Unix sockets created outside the domain,
/// no signals to processes outside it.
pub(super) const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
pub(super) const SCOPE_SIGNAL: u64 = 1 << 1;

pub(super) const RESTRICT_SELF_LOG_SAME_EXEC_OFF: libc::c_uint = 1 << 0;
pub(super) const RESTRICT_SELF_LOG_NEW_EXEC_ON: libc::c_uint = 1 << 1;

/// Rights that only read or execute.
pub(super) const READ_RIGHTS: u64 = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;
/// Rights a rule on a non-directory may carry.
pub(super) const FILE_RIGHTS: u64 =
    FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV;
/// Rights on the harmless devices.
pub(super) const DEVICE_RIGHTS: u64 = FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV;

/// `struct landlock_ruleset_attr` (ABI 6 layout; the kernel reads `size` bytes).
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

/// `struct landlock_path_beneath_attr` (packed in the kernel's header).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Every filesystem right ABI `abi` knows.
pub(super) fn fs_rights(abi: u32) -> u64 {
    let mut rights = FS_ABI1;
    if abi >= 2 {
        rights |= FS_REFER;
    }
    if abi >= 3 {
        rights |= FS_TRUNCATE;
    }
    if abi >= 5 {
        rights |= FS_IOCTL_DEV;
    }
    rights
}

/// The kernel's Landlock ABI version, or why there is none.
pub(super) fn abi_version() -> Result<u32, String> {
    // SAFETY: with a null attribute pointer, size 0 and only the VERSION flag, the
    // syscall reads no memory and just returns the ABI version (or fails).
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0 as libc::size_t,
            CREATE_RULESET_VERSION,
        )
    };
    if ret >= 1 {
        return u32::try_from(ret).map_err(|_| format!("nonsensical Landlock ABI {ret}"));
    }
    let err = io::Error::last_os_error();
    Err(match err.raw_os_error() {
        Some(libc::ENOSYS) => {
            "the kernel has no Landlock (older than Linux 5.13 or built without it)".to_owned()
        }
        Some(libc::EOPNOTSUPP) => {
            "Landlock is built into the kernel but not enabled (it must be listed in the \
             `lsm=` boot parameter)"
                .to_owned()
        }
        _ => format!("cannot query the Landlock ABI version: {err}"),
    })
}

/// Creates a ruleset handling `fs`, `net` (only given ABI ≥ 4) and the IPC `scoped`
/// (only given ABI ≥ 6).
pub(super) fn create_ruleset(abi: u32, fs: u64, net: u64, scoped: u64) -> io::Result<OwnedFd> {
    let attr = RulesetAttr {
        handled_access_fs: fs,
        handled_access_net: net,
        scoped,
    };
    // Older kernels reject sizes beyond the struct they know unless the tail is zero;
    // pass exactly the part this ABI has.
    let size = if abi >= super::SCOPE_ABI {
        std::mem::size_of::<RulesetAttr>()
    } else if abi >= super::NET_ABI {
        2 * std::mem::size_of::<u64>()
    } else {
        std::mem::size_of::<u64>()
    };
    // SAFETY: `attr` is a live, initialised struct of at least `size` bytes laid out
    // as the kernel expects; the kernel only reads it during the call.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::from_ref(&attr),
            size as libc::size_t,
            0 as libc::c_uint,
        )
    };
    let fd = RawFd::try_from(ret).map_err(|_| io::Error::last_os_error())?;
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the syscall just returned this fd (close-on-exec) and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Allows `access` beneath the file or directory `parent`.
pub(super) fn add_path_rule(ruleset: &OwnedFd, parent: &OwnedFd, access: u64) -> io::Result<()> {
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: parent.as_raw_fd(),
    };
    // SAFETY: both fds are open for the duration of the call; `attr` is a live,
    // packed struct exactly as the kernel's, only read during the call.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            RULE_PATH_BENEATH,
            std::ptr::from_ref(&attr),
            0 as libc::c_uint,
        )
    };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// In the forked child: no new privileges, then enter the ruleset's domain.
/// Async-signal-safe: two raw syscalls, no allocation.
pub(super) fn restrict_self(ruleset: RawFd, flags: libc::c_uint) -> io::Result<()> {
    // SAFETY: prctl with integer arguments only; async-signal-safe.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: integer arguments only; async-signal-safe (a raw syscall).
    if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
