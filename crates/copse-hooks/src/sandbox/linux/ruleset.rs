//! The Landlock ruleset. Built in the parent with the `landlock` crate ([`create`]); only
//! what must run in the child stays here ([`restrict_self`], two raw syscalls), with the
//! ABI query (for its plain-words errors) and the rights as bits (the policy's arithmetic).

use std::io;
use std::os::fd::RawFd;

pub(super) const CREATE_RULESET_VERSION: libc::c_uint = 1 << 0;

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

/// Builds a ruleset (with the `landlock` crate, in the parent) handling `fs`, `net` (the
/// caller passes none below ABI 4) and the IPC `scoped` (none below ABI 6), every one of them a hard
/// requirement: the policy was found enforceable beforehand, so a right the kernel turns
/// out not to know is an error, never a silently weaker ruleset.
pub(super) fn create(
    fs: u64,
    net: u64,
    scoped: u64,
) -> Result<landlock::RulesetCreated, landlock::RulesetError> {
    use landlock::{
        AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, Ruleset, RulesetAttr, Scope,
    };
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(BitFlags::<AccessFs>::from_bits_truncate(fs))?;
    if net != 0 {
        ruleset = ruleset.handle_access(BitFlags::<AccessNet>::from_bits_truncate(net))?;
    }
    if scoped != 0 {
        ruleset = ruleset.scope(BitFlags::<Scope>::from_bits_truncate(scoped))?;
    }
    ruleset.create()
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
