//! Protected paths: read-only bind mounts in a private mount namespace.
//!
//! Landlock only grants: a rule on the workspace lets a hook write everything beneath it,
//! `.git/hooks/` and `.cursor/hooks.json` included, and no later rule can take that
//! back; and Landlock has no right for `chmod` at all. So the paths that decide what runs
//! next (hook configs, the agents' code and instructions, `$COPSE_DIR`, pinned scripts,
//! git's metadata) are made read-only underneath Landlock: in the child, before Landlock
//! is applied, the run enters a mount namespace of its own (made private first, so
//! nothing propagates back to the host), each protected path that exists is bound onto
//! itself and remounted read-only (whether or not the hook may write beneath it: a
//! read-only mount also refuses `chmod`, rename and removal), a `.git` directory is bound
//! onto itself writable (a mount point cannot be renamed: `mv .git .git-old` fails), each
//! Unix socket directly inside a protected directory is masked with `/dev/null` (so the
//! daemon's socket is unreachable even where a hook may create Unix sockets), then each
//! writable path beneath a read-only one (e.g. `$COPSE_DIR/state`) is bound back
//! read-write. Parents are bound before what lies beneath them. Landlock then forbids the
//! hook any mount or unmount, so it cannot take the binds away, and a mount point cannot
//! be renamed or removed. The run's private `/proc` is mounted in the same namespace
//! (see `spawn/contain.rs`).
//!
//! Creating a mount namespace needs `CAP_SYS_ADMIN`: a root host has it, and builds the
//! namespace once per set of binds (in a short-lived thread) for every child to join with
//! `setns` (then unshare a copy of, for its own `/proc`); any other host has it inside
//! the user namespace each run gets (see `spawn/contain.rs`), where the child unshares
//! and binds itself. Without that (no user namespaces), protection is not enforced and
//! the policy is reported unenforced. A protected path that does not exist yet cannot be
//! bound: creating it is not prevented (see `docs/sandbox.md` for why that is covered
//! elsewhere or open).

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
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

/// What identifies a kept namespace: each bind's device, inode, flags and path. The path
/// as bytes: the resolved paths are canonical, and comparing `PathBuf`s component by
/// component was a measurable part of every run's `prepare` (with `plan`'s, ~9 % of it).
type BindKey = Vec<(u64, u64, libc::c_ulong, std::ffi::OsString)>;

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
            .map(|b| (b.dev, b.ino, b.remount, b.display.clone().into_os_string()))
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
        // Resolved paths are canonical: compared as bytes (see `BindKey`).
        if binds
            .iter()
            .any(|b| b.display.as_os_str() == bind.display.as_os_str())
        {
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
    // Sockets are looked for where a hook cannot have put them and no other rule covers
    // them: read-only directories outside every writable path ($COPSE_DIR above all).
    let canonical_writable: Vec<PathBuf> = writable
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    for dir in &read_only {
        if !canonical_writable.iter().any(|w| dir.starts_with(w)) {
            binds.extend(sockets_in(dir));
        }
    }
    for path in canonical_writable {
        if read_only.iter().any(|p| path.starts_with(p) && path != *p)
            && !binds
                .iter()
                .any(|b| b.display.as_os_str() == path.as_os_str())
            && let Some(bind) = prepare(&path, false)
        {
            binds.push(bind);
        }
    }
    // Stable: equal depths keep the order above.
    binds.sort_by_cached_key(|b| b.display.components().count());
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

/// What [`prepare`] learnt about a path, kept for the next run: (device, inode) as
/// found then, the resolved path and the mount's flags.
type Resolved = ((u64, u64), PathBuf, libc::c_ulong);

/// [`Resolved`] by the path as given. Every run of every hook looks at the same few
/// dozen protected paths, and resolving one (open, readlink, statvfs) costs several
/// syscalls where checking that it is still the same file costs one `stat`.
/// Keyed by the path's bytes: hashing and comparing a `PathBuf` goes component by
/// component, which showed in every run's `prepare`.
static RESOLVED: Mutex<Option<std::collections::HashMap<std::ffi::OsString, Resolved>>> =
    Mutex::new(None);

/// The bind for `path` if it exists. A symlink is resolved (mount follows it anyway): its
/// target is protected, the link itself is not (documented as open). A `.git` directory
/// is bound writable whatever `read_only` says: the bind only pins it in place (its
/// config and hooks get read-only binds of their own).
fn prepare(path: &Path, read_only: bool) -> Option<Bind> {
    // One stat first: most protected paths do not exist in a given workspace.
    let meta = std::fs::metadata(path).ok()?;
    let id = (meta.dev(), meta.ino());
    let read_only = read_only && !(meta.is_dir() && path.file_name() == Some(".git".as_ref()));
    let known = RESOLVED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .as_ref()
        .and_then(|cache| {
            cache
                .get(path.as_os_str())
                .filter(|(known, ..)| *known == id)
                .cloned()
        });
    // The same file as last time (a replaced one has a new inode): resolved as then.
    let (_, resolved, fs_flags) = match known {
        Some(known) => known,
        None => {
            let resolved = resolve(path)?;
            let mut cache = RESOLVED
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let cache = cache.get_or_insert_with(Default::default);
            if cache.len() >= 4096 {
                cache.clear();
            }
            cache.insert(path.as_os_str().to_owned(), resolved.clone());
            resolved
        }
    };
    let mut flags = libc::MS_REMOUNT | libc::MS_BIND | fs_flags;
    if read_only {
        flags |= libc::MS_RDONLY;
    }
    Some(Bind {
        path: CString::new(resolved.as_os_str().as_bytes()).ok()?,
        display: resolved,
        dev: id.0,
        ino: id.1,
        source: None,
        remount: flags,
    })
}

/// Resolves `path` through one handle: its (device, inode), the path it resolves to (from
/// the host's own /proc) and its mount's flags as `MS_*` bits (which a remount in a user
/// namespace must keep).
fn resolve(path: &Path) -> Option<Resolved> {
    use rustix::fs::{Mode, OFlags, StatVfsMountFlags};
    let fd = rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).ok()?;
    let meta = rustix::fs::fstat(&fd).ok()?;
    let link = format!("/proc/self/fd/{}", fd.as_raw_fd());
    let resolved = PathBuf::from(std::ffi::OsString::from_vec(
        rustix::fs::readlink(link, Vec::new()).ok()?.into_bytes(),
    ));
    let stat = rustix::fs::fstatvfs(&fd).ok()?;
    let mut flags = 0;
    for (st, ms) in [
        (StatVfsMountFlags::NOSUID, libc::MS_NOSUID),
        (StatVfsMountFlags::NODEV, libc::MS_NODEV),
        (StatVfsMountFlags::NOEXEC, libc::MS_NOEXEC),
        (StatVfsMountFlags::NOATIME, libc::MS_NOATIME),
        (StatVfsMountFlags::NODIRATIME, libc::MS_NODIRATIME),
        (StatVfsMountFlags::RELATIME, libc::MS_RELATIME),
        (StatVfsMountFlags::RDONLY, libc::MS_RDONLY),
    ] {
        if stat.f_flag.contains(st) {
            flags |= ms;
        }
    }
    Some(((meta.st_dev, meta.st_ino), resolved, flags))
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
