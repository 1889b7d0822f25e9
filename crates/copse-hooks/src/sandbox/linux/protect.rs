//! Protected paths: read-only bind mounts in a private mount namespace.
//!
//! Landlock only grants: a rule on the workspace lets a hook write everything beneath it,
//! `.git/hooks/` and `.cursor/hooks.json` included, and no later rule can take that
//! back. So the paths that decide what runs next (hook configs, `$COPSE_DIR`, pinned
//! scripts, `.git/config`, `.git/hooks/`, `.git/info/`) are made read-only underneath
//! Landlock: in the child, before Landlock is applied, the run enters a mount namespace
//! of its own (made private first, so nothing propagates back to
//! the host), each protected path that exists and lies beneath a writable path is bound
//! onto itself and remounted read-only, then each writable path beneath a protected one
//! (e.g. `$COPSE_DIR/state`) is bound back read-write. Landlock then forbids the hook
//! any mount or unmount, so it cannot take the binds away, and a mount point cannot be
//! renamed or removed.
//!
//! Creating a mount namespace needs `CAP_SYS_ADMIN`: a root host has it, and builds the
//! namespace once per set of binds (in a short-lived thread) for every child to join with
//! `setns`; any other host has it inside the user namespace each run gets (see
//! `spawn/contain.rs`), where the child unshares and binds itself. Without that
//! (no user namespaces), protection is not enforced and the policy is reported
//! unenforced. A protected path that does not exist yet cannot be bound: creating it is
//! not prevented (see `docs/sandbox.md` for why that is covered elsewhere or open).

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How a run gets its protected paths.
pub(super) enum Mounts {
    /// Nothing to protect.
    None,
    /// The child unshares a mount namespace and binds (a host that is not root: only
    /// the user namespace the child is created in allows it).
    Unshare(Vec<Bind>),
    /// A root host prepares the namespace once per set of binds and keeps it; each
    /// child joins it with `setns`, which costs neither the copy nor the teardown of a
    /// namespace per run. The set includes each path's inode, so a config replaced
    /// (renamed over) on the host gets a fresh namespace instead of a stale bind.
    Join(Arc<OwnedFd>),
}

/// What identifies a kept namespace: each bind's path, inode and flags.
type BindKey = Vec<(PathBuf, u64, u64, libc::c_ulong)>;

/// Namespaces kept by a root host, by their binds.
static KEPT: Mutex<Vec<(BindKey, Arc<OwnedFd>)>> = Mutex::new(Vec::new());
/// At most this many kept namespaces (a host with more workspaces builds the rest again).
const KEPT_MAX: usize = 8;

impl Mounts {
    pub(super) fn new(binds: Vec<Bind>) -> io::Result<Self> {
        if binds.is_empty() {
            return Ok(Self::None);
        }
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Ok(Self::Unshare(binds));
        }
        let key: BindKey = binds
            .iter()
            .map(|b| (b.display.clone(), b.dev, b.ino, b.remount))
            .collect();
        let mut kept = KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, fd)) = kept.iter().find(|(k, _)| *k == key) {
            return Ok(Self::Join(Arc::clone(fd)));
        }
        let fd = Arc::new(build(binds)?);
        if kept.len() >= KEPT_MAX {
            kept.remove(0);
        }
        kept.push((key, Arc::clone(&fd)));
        Ok(Self::Join(fd))
    }

    /// In the child, before Landlock: the binds, then the run's private `/proc` (which
    /// needs a mount namespace of the child's own: joining a kept one is followed by
    /// unsharing a copy of it, so the procfs of one run never shows in another's).
    /// Async-signal-safe: raw syscalls on data prepared in the parent and a stack buffer.
    pub(super) fn apply_in_child(&self) -> io::Result<()> {
        match self {
            Self::None => crate::spawn::mount_private_proc_in_child(true),
            Self::Unshare(binds) => {
                // SAFETY: unshare takes an integer; the child has its own fs struct.
                if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
                    return Err(io::Error::last_os_error());
                }
                apply(binds)?;
                crate::spawn::mount_private_proc_in_child(false);
            }
            Self::Join(fd) => {
                join(fd.as_raw_fd())?;
                crate::spawn::mount_private_proc_in_child(true);
            }
        }
        Ok(())
    }
}

/// Joins the namespace `fd`, keeping the working directory (by path: a directory handle
/// from the old namespace would resolve paths beside the binds).
fn join(fd: RawFd) -> io::Result<()> {
    let mut cwd = [0u8; 4097];
    // SAFETY: the path is a NUL-terminated literal; `cwd` is writable for its length
    // minus the NUL kept at the end.
    let n = unsafe {
        libc::readlink(
            c"/proc/self/cwd".as_ptr(),
            cwd.as_mut_ptr().cast(),
            cwd.len() - 1,
        )
    };
    if n <= 0 || usize::try_from(n).ok() == Some(cwd.len() - 1) {
        return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
    }
    // SAFETY: setns takes an fd and an integer.
    if unsafe { libc::setns(fd, libc::CLONE_NEWNS) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `cwd` is NUL-terminated (zero-filled past the `n` bytes readlink wrote).
    if unsafe { libc::chdir(cwd.as_ptr().cast()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes a namespace with `binds` in a short-lived thread (which may unshare its own
/// mount namespace without touching the host's) and returns a handle that keeps it.
fn build(binds: Vec<Bind>) -> io::Result<OwnedFd> {
    std::thread::Builder::new()
        .name("copse-hooks-mounts".to_owned())
        .spawn(move || -> io::Result<OwnedFd> {
            // SAFETY: unshare takes an integer; it affects this thread only (which gets
            // its own fs struct for it) and the thread exits right after.
            if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
                return Err(io::Error::last_os_error());
            }
            apply(&binds)?;
            // SAFETY: a NUL-terminated literal; the result is owned right below.
            let fd = unsafe {
                libc::open(
                    c"/proc/thread-self/ns/mnt".as_ptr(),
                    libc::O_RDONLY | libc::O_CLOEXEC,
                )
            };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: open just returned it; nothing else owns it.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        })?
        .join()
        .map_err(|_| io::Error::other("the mount namespace thread panicked"))?
}

/// One bind, prepared in the parent.
#[derive(Debug)]
pub(super) struct Bind {
    display: PathBuf,
    dev: u64,
    ino: u64,
    path: CString,
    /// What is bound there: the path itself, or `/dev/null` over a masked socket.
    source: Option<&'static CStr>,
    /// Flags for the remount: the mount's own (nosuid, nodev, … which a user namespace
    /// may not drop), plus `MS_RDONLY` for a protected path. 0: no remount (a mask).
    remount: libc::c_ulong,
}

/// The binds for a policy, parents before what lies beneath them (a bind hides the
/// mounts made earlier beneath its path): every protected path that exists (read-only;
/// a `.git` directory writable, which pins it in place), the sockets directly inside a
/// protected directory (masked with `/dev/null`), then the writable paths beneath a
/// read-only one (bound back writable, e.g. `$COPSE_DIR/state`). Empty when nothing
/// exists to protect.
pub(super) fn plan(protected: &[PathBuf], writable: &[PathBuf]) -> Vec<Bind> {
    let mut binds: Vec<Bind> = Vec::new();
    for path in protected {
        let Some(bind) = prepare(path, true) else {
            continue;
        };
        if binds.iter().any(|b| b.display == bind.display) {
            continue;
        }
        binds.push(bind);
    }
    if binds.is_empty() {
        return binds;
    }
    let read_only: Vec<PathBuf> = binds
        .iter()
        .filter(|b| b.remount & libc::MS_RDONLY != 0)
        .map(|b| b.display.clone())
        .collect();
    for dir in &read_only {
        binds.extend(sockets_in(dir));
    }
    for path in writable {
        let Ok(path) = std::fs::canonicalize(path) else {
            continue;
        };
        if read_only.iter().any(|p| path.starts_with(p) && path != *p)
            && !binds.iter().any(|b| b.display == path)
            && let Some(bind) = prepare(&path, false)
        {
            binds.push(bind);
        }
    }
    // Stable: equal depths keep the order above.
    binds.sort_by_key(|b| b.display.components().count());
    binds
}

/// Masks for the Unix sockets directly inside `dir` (none when it is not a directory).
fn sockets_in(dir: &Path) -> Vec<Bind> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .take(1024)
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_socket()))
        .filter_map(|entry| {
            let meta = entry.metadata().ok()?;
            let path = entry.path();
            Some(Bind {
                path: CString::new(path.as_os_str().as_bytes()).ok()?,
                display: path,
                dev: meta.dev(),
                ino: meta.ino(),
                source: Some(c"/dev/null"),
                remount: 0,
            })
        })
        .collect()
}

/// The bind for `path` if it exists. A symlink is resolved (mount follows it anyway): its
/// target is protected, the link itself is not (documented as open). A `.git` directory
/// is bound writable whatever `read_only` says: the bind only pins it in place (its
/// config and hooks get read-only binds of their own).
fn prepare(path: &Path, read_only: bool) -> Option<Bind> {
    // One stat first: most protected paths do not exist in a given workspace.
    let meta = std::fs::metadata(path).ok()?;
    let read_only = read_only && !(meta.is_dir() && path.file_name() == Some(".git".as_ref()));
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
        display: path,
        dev: meta.dev(),
        ino: meta.ino(),
        path: c_path,
        source: None,
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

/// In a fresh mount namespace (the child's or the builder thread's): made private, then
/// the binds. Async-signal-safe: mount syscalls on strings prepared in the parent.
fn apply(binds: &[Bind]) -> io::Result<()> {
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
        let source = bind.source.unwrap_or(bind.path.as_c_str());
        // SAFETY: `source` and `bind.path` are NUL-terminated and outlive the calls.
        unsafe {
            if libc::mount(
                source.as_ptr(),
                bind.path.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            ) != 0
                || (bind.remount != 0
                    && libc::mount(
                        std::ptr::null(),
                        bind.path.as_ptr(),
                        std::ptr::null(),
                        bind.remount,
                        std::ptr::null(),
                    ) != 0)
            {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}
