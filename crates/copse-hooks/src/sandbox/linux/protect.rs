//! Protected paths: read-only bind mounts in a private mount namespace.
//!
//! Landlock only grants: a rule on the workspace lets a hook write everything beneath it,
//! `.git/hooks/` and `.cursor/hooks.json` included, and no later rule can take that
//! back. So the paths that decide what runs next (hook configs, `$COPSE_DIR`, pinned
//! scripts, `.git/config`, `.git/hooks/`, `.git/info/`) are made read-only underneath
//! Landlock: in the child, before Landlock is applied, `unshare(CLONE_NEWNS)` gives the
//! run a mount namespace of its own (made private first, so nothing propagates back to
//! the host), each protected path that exists and lies beneath a writable path is bound
//! onto itself and remounted read-only, then each writable path beneath a protected one
//! (e.g. `$COPSE_DIR/state`) is bound back read-write. Landlock then forbids the hook
//! any mount or unmount, so it cannot take the binds away, and a mount point cannot be
//! renamed or removed.
//!
//! Creating a mount namespace needs `CAP_SYS_ADMIN`: a root host has it; any other host
//! has it inside the user namespace each run gets (see `spawn/contain.rs`). Without that
//! (no user namespaces), protection is not enforced and the policy is reported
//! unenforced. A protected path that does not exist yet cannot be bound: creating it is
//! not prevented (see `docs/sandbox.md` for why that is covered elsewhere or open).

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// One bind, prepared in the parent.
#[derive(Debug)]
pub(super) struct Bind {
    path: CString,
    /// Flags for the remount: the mount's own (nosuid, nodev, … which a user namespace
    /// may not drop), plus `MS_RDONLY` for a protected path.
    remount: libc::c_ulong,
}

/// The binds for a policy: protected paths beneath a writable one, then writable paths
/// beneath a protected one. Empty when nothing needs protecting.
pub(super) fn plan(protected: &[PathBuf], writable: &[PathBuf]) -> Vec<Bind> {
    let beneath = |path: &Path, dirs: &[PathBuf]| dirs.iter().any(|dir| path.starts_with(dir));
    let mut binds = Vec::new();
    let mut bound: Vec<&Path> = Vec::new();
    for path in protected {
        if !beneath(path, writable) || bound.contains(&path.as_path()) {
            continue;
        }
        if let Some(bind) = prepare(path, true) {
            bound.push(path);
            binds.push(bind);
        }
    }
    if binds.is_empty() {
        return binds;
    }
    for path in writable {
        if bound.iter().any(|p| path.starts_with(p) && path != p)
            && let Some(bind) = prepare(path, false)
        {
            binds.push(bind);
        }
    }
    binds
}

/// The bind for `path` if it exists. A symlink is resolved (mount follows it anyway): its
/// target is protected, the link itself is not (documented as open).
fn prepare(path: &Path, read_only: bool) -> Option<Bind> {
    let path = std::fs::canonicalize(path).ok()?;
    let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: all-zeroes is a valid statvfs; statvfs fills it for a valid path.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c_path` is NUL-terminated and `stat` writable.
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    let mut flags = libc::MS_REMOUNT | libc::MS_BIND;
    for (st, ms) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if stat.f_flag & st != 0 {
            flags |= ms;
        }
    }
    if read_only || stat.f_flag & libc::ST_RDONLY != 0 {
        flags |= libc::MS_RDONLY;
    }
    Some(Bind {
        path: c_path,
        remount: flags,
    })
}

/// Whether this host can make mount namespaces for its hooks (probed once, in a thread
/// that then exits: `unshare` there changes nothing for the host).
pub(super) fn availability() -> Result<(), String> {
    static PROBE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    PROBE
        .get_or_init(|| {
            crate::spawn::contained()?;
            Ok(())
        })
        .clone()
}

/// In the child, before Landlock: a private mount namespace with the binds. Async-signal-
/// safe: unshare and mount syscalls on strings prepared in the parent.
pub(super) fn apply(binds: &[Bind]) -> io::Result<()> {
    if binds.is_empty() {
        return Ok(());
    }
    // SAFETY: unshare takes an integer; the child has its own fs struct (no CLONE_FS).
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: NUL-terminated literals and null pointers, as mount(2) allows.
    if unsafe {
        libc::mount(
            c"none".as_ptr(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    for bind in binds {
        // SAFETY: `bind.path` is NUL-terminated and outlives the calls.
        unsafe {
            if libc::mount(
                bind.path.as_ptr(),
                bind.path.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            ) != 0
                || libc::mount(
                    std::ptr::null(),
                    bind.path.as_ptr(),
                    std::ptr::null(),
                    bind.remount,
                    std::ptr::null(),
                ) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}
