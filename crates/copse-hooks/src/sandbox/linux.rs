//! Linux: Landlock, with blocks detected from the kernel's own Landlock audit records.
//!
//! # Policy → ruleset
//!
//! The ruleset handles every filesystem access right the ABI knows (up to
//! [`KNOWN_ABI`]), so nothing writable slips through an unhandled right: rights are then
//! granted by rules only.
//!
//! | rule on                                      | rights                                           |
//! |----------------------------------------------|--------------------------------------------------|
//! | `/`                                          | execute, read file, read dir                     |
//! | each writable path, the private temp dir     | every handled right (a file gets the file rights)|
//! | `/dev/{null,zero,full,random,urandom,tty,ptmx}`, `/dev/pts` | read, write, truncate, device ioctl |
//!
//! | ABI (Linux) | what it adds here                                                        |
//! |-------------|--------------------------------------------------------------------------|
//! | 1 (5.13)    | filesystem rights: execute, read/write file, read dir, remove, make-*    |
//! | 2 (5.19)    | `REFER` (link/rename across directories)                                 |
//! | 3 (6.2)     | `TRUNCATE` — the minimum: without it any file could be truncated to zero |
//! | 4 (6.7)     | TCP bind/connect rules: `network: false` needs ABI ≥ 4                  |
//! | 5 (6.10)    | `IOCTL_DEV` (ioctl on device files)                                      |
//! | 6 (6.12)    | IPC scoping (not used: signals and abstract sockets stay as they were)   |
//! | 7 (6.15)    | audit records of denials: what [`detect`](super::PreparedSandbox::detect) reads |
//!
//! A kernel whose ABI is below what a policy needs makes the policy
//! [`Unenforced`](super::Enforcement::Unenforced) as a whole; it is never applied partially.
//! An ABI newer than [`KNOWN_ABI`] is used as [`KNOWN_ABI`]: rights this code does not know
//! cannot be granted correctly, so they are left unhandled.
//!
//! In the child: `prctl(PR_SET_NO_NEW_PRIVS)` then `landlock_restrict_self` (so setuid
//! programs such as `sudo` do not elevate inside a hook), then the child writes its pid
//! and the outcome (an errno) into a close-on-exec pipe the parent reads after the run.
//!
//! Not restricted by Landlock here (documented limits, not bugs): connecting to existing
//! Unix sockets (e.g. a Docker or D-Bus socket) and UDP; signals to other processes of the
//! user; `chmod`/`chown`/`utime`/xattrs on existing files (Landlock cannot restrict those);
//! files opened before the hook started.
//!
//! # Detecting blocks
//!
//! Landlock ABI 7 (Linux 6.15) can emit an audit record for each denial:
//! `AUDIT_LANDLOCK_ACCESS` (`domain=<id> blockers=fs.write_file path="/x" …`) and, the
//! first time a domain denies something, `AUDIT_LANDLOCK_DOMAIN`
//! (`domain=<id> status=allocated … pid=<pid of the process that called
//! landlock_restrict_self>`). The child asks for them after exec
//! (`LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON`; without it nothing the hook does is logged).
//! When `prepare` runs, a netlink audit socket subscribes to the kernel's read-only log
//! multicast group. After a run that did not exit 0, `detect` waits until the kernel's
//! audit queue is empty (`AUDIT_GET` backlog = 0, bounded), reads what arrived, and counts
//! the access records of the domains whose creator pid is the hook's pid (as reported by
//! the child itself before exec). Nothing the hook prints is read, and the hook cannot
//! make the kernel attribute records to our domain, nor silence them: it can only create
//! a *nested* domain of its own, whose records carry that domain's id (a hook can thus
//! hide a block it imposed on itself; not one we imposed).
//!
//! This needs, all at once: Landlock ABI ≥ 7, kernel audit compiled in and **enabled**
//! (`auditctl -s` says `enabled 1`, e.g. because auditd runs: the kernel drops Landlock
//! records while audit is disabled), `CAP_AUDIT_CONTROL` (to query the queue) and
//! `CAP_AUDIT_READ` (to subscribe) in the initial namespaces — in practice, root. Otherwise
//! [`Detection::Unavailable`] says which of these is missing and `detect` sets
//! [`unchecked`](super::SandboxVerdict::unchecked) on failed runs. Not caught even then:
//! records the kernel dropped (audit rate limit or backlog overflow; our own socket
//! overflowing is noticed and reported as `unchecked`), records excluded by audit
//! rules, denials by processes that escaped the run's process group and outlived it, and
//! a hook running as root that turns audit off (Landlock confines root's filesystem
//! access too, but does not take its other capabilities away).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use super::{
    Detection, Enforcement, PreparedSandbox, PrivateTmp, Sandbox, SandboxError, SandboxPolicy,
    SandboxStatus, SandboxVerdict,
};
use crate::spawn::ChildSetup;

/// The newest Landlock ABI whose rights this code knows.
const KNOWN_ABI: u32 = 7;
/// The oldest ABI controlling every way to modify a file (`TRUNCATE` arrived in ABI 3).
const MIN_FS_ABI: u32 = 3;
/// The oldest ABI with TCP rules.
const NET_ABI: u32 = 4;
/// The oldest ABI that records denials in the audit log.
const AUDIT_ABI: u32 = 7;

/// Devices every hook may write to (missing ones are skipped).
const DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// Landlock's user-space ABI (`linux/landlock.h`), restated here.
mod sys {
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

    pub(super) const RESTRICT_SELF_LOG_SAME_EXEC_OFF: libc::c_uint = 1 << 0;
    pub(super) const RESTRICT_SELF_LOG_NEW_EXEC_ON: libc::c_uint = 1 << 1;

    /// Rights that only read or execute.
    pub(super) const READ_RIGHTS: u64 = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;
    /// Rights a rule on a non-directory may carry.
    pub(super) const FILE_RIGHTS: u64 =
        FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV;
    /// Rights on the harmless devices.
    pub(super) const DEVICE_RIGHTS: u64 = FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV;

    /// `struct landlock_ruleset_attr` (ABI 4 layout; the kernel reads `size` bytes).
    #[repr(C)]
    struct RulesetAttr {
        handled_access_fs: u64,
        handled_access_net: u64,
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

    /// Creates a ruleset handling `fs` and `net` (net only given ABI ≥ 4).
    pub(super) fn create_ruleset(abi: u32, fs: u64, net: u64) -> io::Result<OwnedFd> {
        let attr = RulesetAttr {
            handled_access_fs: fs,
            handled_access_net: net,
        };
        // Older kernels reject sizes beyond the struct they know unless the tail is zero;
        // pass exactly the part this ABI has.
        let size = if abi >= super::NET_ABI {
            std::mem::size_of::<RulesetAttr>()
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
    pub(super) fn add_path_rule(
        ruleset: &OwnedFd,
        parent: &OwnedFd,
        access: u64,
    ) -> io::Result<()> {
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
}

/// Landlock on Linux (the source of `sandbox/linux.rs` has the full notes).
///
/// * Uses the highest Landlock ABI the kernel supports, and handles every filesystem
///   right that ABI knows. Needs ABI ≥ 3 (Linux 6.2, `TRUNCATE`) for any policy and ABI ≥ 4
///   (Linux 6.7) for `network: false`; below that the policy is
///   [`Unenforced`](super::Enforcement::Unenforced), never applied in part.
/// * In the child: `PR_SET_NO_NEW_PRIVS` (setuid programs such as `sudo` do not elevate)
///   and `landlock_restrict_self`; the child reports its pid through a close-on-exec pipe.
/// * Not restricted: connecting to existing Unix sockets, UDP, signals, `chmod`/`chown`/
///   `utime`/xattrs on existing files, files opened before the hook started; a hook
///   running as root keeps its capabilities other than filesystem access.
/// * Block detection reads the kernel's Landlock denial records (audit), which needs
///   Landlock ABI ≥ 7 (Linux 6.15), kernel audit **enabled** (e.g. auditd running; the
///   kernel drops the records otherwise) and `CAP_AUDIT_CONTROL` + `CAP_AUDIT_READ` in the
///   initial namespaces (root). Records are matched to the run by the pid that entered the
///   Landlock domain, never by anything the hook prints. Without those, failed runs come
///   back [`unchecked`](super::SandboxVerdict::unchecked) with the reason.
#[derive(Debug, Clone)]
pub struct LinuxSandbox {
    /// The ABI to use (capped to [`KNOWN_ABI`]) and the ABI to report, or why there is none.
    abi: Result<(u32, u32), String>,
}

impl Default for LinuxSandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl LinuxSandbox {
    /// Uses the highest ABI the running kernel supports.
    pub fn new() -> Self {
        Self {
            abi: sys::abi_version().map(|abi| (abi.min(KNOWN_ABI), abi)),
        }
    }

    /// Test seam: `None` behaves as if the kernel did not enforce Landlock; `Some(n)` as
    /// if it supported at most ABI `n` (`Some(0)` is the same as `None`).
    pub fn with_forced_abi(abi: Option<u32>) -> Self {
        Self::forced(abi, "forced by LinuxSandbox::with_forced_abi")
    }

    fn forced(abi: Option<u32>, by: &str) -> Self {
        let abi = match abi {
            None | Some(0) => Err(format!(
                "behaving as if the kernel did not enforce Landlock ({by})"
            )),
            Some(cap) => sys::abi_version().map(|abi| {
                let abi = abi.min(cap);
                (abi.min(KNOWN_ABI), abi)
            }),
        };
        Self { abi }
    }

    /// [`super::FORCE_ABI_VAR`]'s value: `none` or a number; anything else is ignored.
    pub(super) fn from_forced_setting(setting: Option<&str>) -> Self {
        let by = format!("forced by {}", super::FORCE_ABI_VAR);
        match setting.map(str::trim) {
            Some("none") => Self::forced(None, &by),
            Some(value) => match value.parse::<u32>() {
                Ok(cap) => Self::forced(Some(cap), &by),
                Err(_) => Self::new(),
            },
            None => Self::new(),
        }
    }

    /// The reported ABI, if any.
    fn reported_abi(&self) -> Option<u32> {
        self.abi.as_ref().ok().map(|&(_, reported)| reported)
    }

    fn detection(&self) -> Detection {
        match &self.abi {
            Err(_) => Detection::Unavailable {
                reason: "the sandbox is not enforced".to_owned(),
            },
            Ok((abi, _)) if *abi < AUDIT_ABI => Detection::Unavailable {
                reason: format!(
                    "Landlock records denials from ABI {AUDIT_ABI} (Linux 6.15); this kernel \
                     has ABI {abi}"
                ),
            },
            Ok(_) => match audit::availability() {
                Ok(()) => Detection::KernelAudit,
                Err(reason) => Detection::Unavailable { reason },
            },
        }
    }
}

impl Sandbox for LinuxSandbox {
    fn status(&self) -> SandboxStatus {
        let abi = self.reported_abi();
        let default = SandboxPolicy::default();
        SandboxStatus {
            mechanism: "Landlock (Linux)",
            abi,
            filesystem_rules: abi.is_some(),
            network_rules: abi.is_some_and(|abi| abi >= NET_ABI),
            enforcement: self.enforcement(&default),
            enforcement_without_network: self.enforcement(&default.network(false)),
            detection: self.detection(),
        }
    }

    fn enforcement(&self, policy: &SandboxPolicy) -> Enforcement {
        let abi = match &self.abi {
            Ok((abi, _)) => *abi,
            Err(reason) => {
                return Enforcement::Unenforced {
                    reason: reason.clone(),
                };
            }
        };
        if abi < MIN_FS_ABI {
            return Enforcement::Unenforced {
                reason: format!(
                    "the kernel's Landlock ABI {abi} cannot stop a hook from truncating files \
                     outside the workspace; ABI {MIN_FS_ABI} (Linux 6.2) is needed"
                ),
            };
        }
        if !policy.network && abi < NET_ABI {
            return Enforcement::Unenforced {
                reason: format!(
                    "`network: false` needs Landlock ABI {NET_ABI} (Linux 6.7); the kernel \
                     has ABI {abi}"
                ),
            };
        }
        Enforcement::Enforced {
            abi,
            network_rules: abi >= NET_ABI,
        }
    }

    fn prepare(&self, policy: &SandboxPolicy) -> Result<Box<dyn PreparedSandbox>, SandboxError> {
        let abi = match self.enforcement(policy) {
            Enforcement::Enforced { abi, .. } => abi,
            Enforcement::Unenforced { reason } => return Err(SandboxError::Unenforced { reason }),
        };
        let setup = |what: &'static str| move |source| SandboxError::Setup { what, source };
        let prepared_at = SystemTime::now();
        let tmp = PrivateTmp::create().map_err(setup("create the private temp dir"))?;

        let handled = sys::fs_rights(abi);
        let net = if policy.network {
            0
        } else {
            sys::NET_BIND_TCP | sys::NET_CONNECT_TCP
        };
        let ruleset =
            sys::create_ruleset(abi, handled, net).map_err(setup("create the Landlock ruleset"))?;
        for (fd, access) in base_rules().map_err(setup("open / and the devices"))? {
            add_rule(&ruleset, fd, handled & access)?;
        }
        for path in &policy.writable {
            allow(&ruleset, path, handled)?;
        }
        let tmp_fd = open_path(tmp.path()).map_err(setup("open the private temp dir"))?;
        add_rule(&ruleset, &tmp_fd, handled)?;
        drop(tmp_fd);

        let (report_read, report_write) = pipe().map_err(setup("create the report pipe"))?;
        let (audit, restrict_flags) = if abi >= AUDIT_ABI {
            (
                audit::Watch::start(),
                sys::RESTRICT_SELF_LOG_SAME_EXEC_OFF | sys::RESTRICT_SELF_LOG_NEW_EXEC_ON,
            )
        } else {
            (
                Err(format!(
                    "Landlock records denials from ABI {AUDIT_ABI} (Linux 6.15); this kernel \
                     has ABI {abi}"
                )),
                0,
            )
        };
        Ok(Box::new(LinuxPrepared {
            tmp,
            ruleset,
            restrict_flags,
            report_read,
            report_write,
            audit,
            prepared_at,
            reports: Mutex::new(Vec::new()),
        }))
    }
}

/// The rules every run gets: read and execute beneath `/`, and the harmless devices.
/// Their `O_PATH` fds (close-on-exec) are opened once per process and kept: they are the
/// same for every run, and reopening them was a measurable part of `prepare`.
fn base_rules() -> io::Result<&'static [(OwnedFd, u64)]> {
    static BASE: OnceLock<Vec<(OwnedFd, u64)>> = OnceLock::new();
    if let Some(base) = BASE.get() {
        return Ok(base);
    }
    let mut base = vec![(open_path(Path::new("/"))?, sys::READ_RIGHTS)];
    for device in DEVICES {
        match open_path(Path::new(device)) {
            Ok(fd) => base.push((fd, sys::DEVICE_RIGHTS)),
            Err(err) if is_resource_error(&err) => return Err(err),
            // Missing here (e.g. no /dev/pts in a minimal container): nothing to allow.
            Err(_) => {}
        }
    }
    // If another thread got there first, ours are simply closed.
    Ok(BASE.get_or_init(|| base))
}

fn is_resource_error(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM)
    )
}

/// Adds a rule granting `access` beneath `path`, skipping a path that cannot be opened
/// (missing, or unreachable for us and therefore for the hook too).
fn allow(ruleset: &OwnedFd, path: &Path, access: u64) -> Result<(), SandboxError> {
    let fd = match open_path(path) {
        Ok(fd) => fd,
        Err(err) if is_resource_error(&err) => {
            return Err(SandboxError::Setup {
                what: "open a writable path",
                source: err,
            });
        }
        Err(_) => return Ok(()),
    };
    let access = if is_dir(&fd) {
        access
    } else {
        access & sys::FILE_RIGHTS
    };
    add_rule(ruleset, &fd, access)
}

fn add_rule(ruleset: &OwnedFd, fd: &OwnedFd, access: u64) -> Result<(), SandboxError> {
    if access == 0 {
        return Ok(());
    }
    sys::add_path_rule(ruleset, fd, access).map_err(|source| SandboxError::Setup {
        what: "add a Landlock rule",
        source,
    })
}

/// `open(path, O_PATH | O_CLOEXEC)`, following symlinks (a rule applies to the target).
fn open_path(path: &Path) -> io::Result<OwnedFd> {
    let path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `path` is a valid NUL-terminated string for the duration of the call.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: open just returned this fd and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn is_dir(fd: &OwnedFd) -> bool {
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `stat` is a writable buffer of the right type; fstat works on O_PATH fds.
    let ret = unsafe { libc::fstat(fd.as_raw_fd(), stat.as_mut_ptr()) };
    if ret != 0 {
        return false;
    }
    // SAFETY: fstat succeeded, so it initialised `stat`.
    let stat = unsafe { stat.assume_init() };
    stat.st_mode & libc::S_IFMT == libc::S_IFDIR
}

/// A close-on-exec, non-blocking pipe: (read end, write end).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1; 2];
    // SAFETY: `fds` has room for the two fds pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let [read, write] = fds;
    // SAFETY: pipe2 just returned both fds and nothing else owns them.
    Ok(unsafe { (OwnedFd::from_raw_fd(read), OwnedFd::from_raw_fd(write)) })
}

/// What a child reported through the pipe: its pid and the errno of applying the
/// sandbox (0: applied).
#[derive(Debug, Clone, Copy)]
struct Report {
    pid: i32,
    errno: i32,
}

const REPORT_LEN: usize = 8;

struct LinuxPrepared {
    tmp: PrivateTmp,
    ruleset: OwnedFd,
    restrict_flags: libc::c_uint,
    report_read: OwnedFd,
    report_write: OwnedFd,
    audit: Result<audit::Watch, String>,
    prepared_at: SystemTime,
    reports: Mutex<Vec<Report>>,
}

impl LinuxPrepared {
    /// Everything children reported so far (the pipe is non-blocking; what was read is
    /// kept, so `detect` can be asked more than once).
    fn reports(&self) -> Vec<Report> {
        let mut seen = self
            .reports
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        seen.extend(self.read_reports());
        seen.clone()
    }

    fn read_reports(&self) -> Vec<Report> {
        let mut bytes = Vec::new();
        let mut buf = [0u8; 512];
        loop {
            // SAFETY: `buf` is valid for writes of `buf.len()` bytes.
            let n = unsafe {
                libc::read(
                    self.report_read.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                )
            };
            match usize::try_from(n) {
                Ok(0) => break,
                Ok(n) => bytes.extend_from_slice(buf.get(..n).unwrap_or_default()),
                Err(_) if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        bytes
            .chunks_exact(REPORT_LEN)
            .filter_map(|chunk| {
                let (pid, errno) = chunk.split_at(4);
                Some(Report {
                    pid: i32::from_ne_bytes(pid.try_into().ok()?),
                    errno: i32::from_ne_bytes(errno.try_into().ok()?),
                })
            })
            .collect()
    }
}

impl ChildSetup for LinuxPrepared {
    fn apply_in_child(&self) -> io::Result<()> {
        let result = sys::restrict_self(self.ruleset.as_raw_fd(), self.restrict_flags);
        let errno = match &result {
            Ok(()) => 0,
            Err(err) => err.raw_os_error().unwrap_or(libc::EINVAL),
        };
        // SAFETY: getpid is async-signal-safe and cannot fail.
        let pid = unsafe { libc::getpid() };
        let [p0, p1, p2, p3] = pid.to_ne_bytes();
        let [e0, e1, e2, e3] = errno.to_ne_bytes();
        let report: [u8; REPORT_LEN] = [p0, p1, p2, p3, e0, e1, e2, e3];
        // SAFETY: write(2) is async-signal-safe; `report` is valid for REPORT_LEN bytes. A
        // pipe write this small is atomic; if it fails the run merely loses detection.
        unsafe {
            libc::write(
                self.report_write.as_raw_fd(),
                report.as_ptr().cast(),
                REPORT_LEN,
            );
        }
        result
    }
}

impl PreparedSandbox for LinuxPrepared {
    fn as_child_setup(&self) -> &dyn ChildSetup {
        self
    }

    fn tmpdir(&self) -> &Path {
        self.tmp.path()
    }

    fn detect(&self, exit_code: Option<i32>) -> SandboxVerdict {
        let mut verdict = SandboxVerdict::default();
        if exit_code == Some(0) {
            return verdict;
        }
        let reports = self.reports();
        for report in reports.iter().filter(|r| r.errno != 0) {
            let reason = format!(
                "the OS sandbox could not be applied, so the hook did not run ({})",
                io::Error::from_raw_os_error(report.errno)
            );
            if !verdict.reasons.contains(&reason) {
                verdict.reasons.push(reason);
            }
            verdict.blocked = true;
        }
        if verdict.blocked {
            return verdict;
        }
        let pids: Vec<i32> = reports.iter().map(|r| r.pid).collect();
        if pids.is_empty() {
            // The hook never started under this sandbox: nothing it did was blocked.
            return verdict;
        }
        match &self.audit {
            Err(reason) => verdict.unchecked = Some(reason.clone()),
            Ok(watch) => {
                let found = watch.denials(&pids, self.prepared_at);
                if found.count > 0 {
                    verdict.blocked = true;
                    verdict.reasons.push(if found.count == 1 {
                        "the OS sandbox blocked 1 operation this hook attempted".to_owned()
                    } else {
                        format!(
                            "the OS sandbox blocked {} operations this hook attempted",
                            found.count
                        )
                    });
                    for detail in found.details {
                        let reason = format!("denied {detail}");
                        if !verdict.reasons.contains(&reason) {
                            verdict.reasons.push(reason);
                        }
                    }
                } else {
                    verdict.unchecked = found.incomplete;
                }
            }
        }
        verdict
    }
}

/// Reading Landlock's denial records from the kernel audit log (netlink, read-only
/// multicast group).
mod audit {
    use std::collections::HashSet;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

    const NETLINK_AUDIT: libc::c_int = 9;
    const AUDIT_NLGRP_READLOG: u32 = 1;
    const AUDIT_GET: u16 = 1000;
    const AUDIT_LANDLOCK_ACCESS: u16 = 1423;
    const AUDIT_LANDLOCK_DOMAIN: u16 = 1424;
    const NLMSG_ERROR: u16 = 2;
    const NLMSG_HDRLEN: usize = 16;
    const NLM_F_REQUEST: u16 = 1;
    /// Largest audit message (MAX_AUDIT_MESSAGE_LENGTH is 8970) with headroom.
    const RECV_BUF: usize = 16 * 1024;
    /// Receive buffer asked for, so a long run on a busy audited system does not overflow.
    const SOCKET_BUF: libc::c_int = 4 * 1024 * 1024;

    /// How long the availability probe is trusted.
    const PROBE_TTL: Duration = Duration::from_secs(5);
    /// How long `denials` waits for the kernel's audit queue to drain.
    const DRAIN_WAIT: Duration = Duration::from_millis(500);
    /// How long a reply to AUDIT_GET may take.
    const REPLY_WAIT: Duration = Duration::from_secs(1);
    /// Once the queue is empty, how long to wait for a record already dequeued but not
    /// yet delivered.
    const IN_FLIGHT_WAIT: Duration = Duration::from_millis(2);
    /// Denial records older than the run's preparation by more than this are someone
    /// else's (a reused pid).
    const CLOCK_SLACK_MS: u64 = 2_000;
    /// Details kept per verdict.
    const MAX_DETAILS: usize = 3;

    static SEQ: AtomicU32 = AtomicU32::new(1);

    #[repr(C)]
    struct SockaddrNl {
        nl_family: libc::sa_family_t,
        nl_pad: libc::c_ushort,
        nl_pid: u32,
        nl_groups: u32,
    }

    struct Socket(OwnedFd);

    impl Socket {
        fn open() -> io::Result<Self> {
            // SAFETY: socket(2) with integer arguments only.
            let fd = unsafe {
                libc::socket(
                    libc::AF_NETLINK,
                    libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                    NETLINK_AUDIT,
                )
            };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: socket just returned this fd and nothing else owns it.
            Ok(Self(unsafe { OwnedFd::from_raw_fd(fd) }))
        }

        fn bind_readlog(&self) -> io::Result<()> {
            let addr = SockaddrNl {
                nl_family: libc::AF_NETLINK as libc::sa_family_t,
                nl_pad: 0,
                nl_pid: 0,
                nl_groups: 1 << (AUDIT_NLGRP_READLOG - 1),
            };
            // SAFETY: `addr` is a live sockaddr_nl and the length is its size.
            let ret = unsafe {
                libc::bind(
                    self.0.as_raw_fd(),
                    std::ptr::from_ref(&addr).cast(),
                    std::mem::size_of::<SockaddrNl>() as libc::socklen_t,
                )
            };
            if ret != 0 {
                return Err(io::Error::last_os_error());
            }
            // Best effort: a bigger buffer (FORCE needs CAP_NET_ADMIN; root has it).
            for option in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
                // SAFETY: the option value is a live c_int and the length is its size.
                let ret = unsafe {
                    libc::setsockopt(
                        self.0.as_raw_fd(),
                        libc::SOL_SOCKET,
                        option,
                        std::ptr::from_ref(&SOCKET_BUF).cast(),
                        std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                    )
                };
                if ret == 0 {
                    break;
                }
            }
            Ok(())
        }

        fn send_get(&self, seq: u32) -> io::Result<()> {
            // struct nlmsghdr { len, type, flags, seq, pid }, no payload.
            let msg = [
                (NLMSG_HDRLEN as u32).to_ne_bytes().as_slice(),
                AUDIT_GET.to_ne_bytes().as_slice(),
                NLM_F_REQUEST.to_ne_bytes().as_slice(),
                seq.to_ne_bytes().as_slice(),
                0u32.to_ne_bytes().as_slice(),
            ]
            .concat();
            let kernel = SockaddrNl {
                nl_family: libc::AF_NETLINK as libc::sa_family_t,
                nl_pad: 0,
                nl_pid: 0,
                nl_groups: 0,
            };
            // SAFETY: `msg` and `kernel` are live for the call and the lengths are theirs.
            let ret = unsafe {
                libc::sendto(
                    self.0.as_raw_fd(),
                    msg.as_ptr().cast(),
                    msg.len(),
                    0,
                    std::ptr::from_ref(&kernel).cast(),
                    std::mem::size_of::<SockaddrNl>() as libc::socklen_t,
                )
            };
            if ret < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        }

        /// One datagram, waiting at most `wait`; `Ok(None)` if nothing came.
        fn recv(&self, buf: &mut [u8], wait: Duration) -> io::Result<Option<usize>> {
            let mut pollfd = libc::pollfd {
                fd: self.0.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let millis = libc::c_int::try_from(wait.as_millis()).unwrap_or(libc::c_int::MAX);
            // SAFETY: one live pollfd.
            let ready = unsafe { libc::poll(&mut pollfd, 1, millis) };
            if ready < 0 {
                let err = io::Error::last_os_error();
                return if err.kind() == io::ErrorKind::Interrupted {
                    Ok(None)
                } else {
                    Err(err)
                };
            }
            if ready == 0 {
                return Ok(None);
            }
            // SAFETY: `buf` is valid for writes of `buf.len()` bytes.
            let n = unsafe {
                libc::recv(
                    self.0.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_DONTWAIT,
                )
            };
            match usize::try_from(n) {
                Ok(n) => Ok(Some(n)),
                Err(_) => {
                    let err = io::Error::last_os_error();
                    match err.kind() {
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                        _ => Err(err),
                    }
                }
            }
        }
    }

    /// The fields of `struct audit_status` we use.
    #[derive(Debug, Clone, Copy)]
    struct Status {
        enabled: u32,
        backlog: u32,
    }

    /// One netlink message of a datagram.
    struct Message<'a> {
        kind: u16,
        seq: u32,
        payload: &'a [u8],
    }

    fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
        Some(u32::from_ne_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    }

    fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
        Some(u16::from_ne_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
    }

    fn messages(datagram: &[u8]) -> Vec<Message<'_>> {
        let mut out = Vec::new();
        let mut at = 0;
        while let (Some(len), Some(kind), Some(seq)) = (
            u32_at(datagram, at),
            u16_at(datagram, at + 4),
            u32_at(datagram, at + 8),
        ) {
            let Ok(len) = usize::try_from(len) else { break };
            if len < NLMSG_HDRLEN {
                break;
            }
            let Some(payload) = datagram.get(at + NLMSG_HDRLEN..at + len) else {
                // Truncated: keep what the kernel sent.
                if let Some(payload) = datagram.get(at + NLMSG_HDRLEN..) {
                    out.push(Message { kind, seq, payload });
                }
                break;
            };
            out.push(Message { kind, seq, payload });
            at += len.next_multiple_of(4);
        }
        out
    }

    /// Queries the audit status through `sock`, handing every other message to `other`.
    fn get_status(sock: &Socket, other: &mut dyn FnMut(&Message<'_>)) -> io::Result<Status> {
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        sock.send_get(seq)?;
        let deadline = Instant::now() + REPLY_WAIT;
        let mut buf = vec![0u8; RECV_BUF];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::from(io::ErrorKind::TimedOut));
            }
            let n = match sock.recv(&mut buf, left) {
                Ok(Some(n)) => n,
                Ok(None) => continue,
                // Our buffer overflowed: records were lost, but the reply may follow.
                Err(err) if err.raw_os_error() == Some(libc::ENOBUFS) => {
                    other(&Message {
                        kind: 0,
                        seq: 0,
                        payload: b"ENOBUFS",
                    });
                    continue;
                }
                Err(err) => return Err(err),
            };
            for message in messages(buf.get(..n).unwrap_or_default()) {
                match message.kind {
                    AUDIT_GET if message.seq == seq => {
                        return match (u32_at(message.payload, 4), u32_at(message.payload, 28)) {
                            (Some(enabled), Some(backlog)) => Ok(Status { enabled, backlog }),
                            _ => Err(io::Error::from(io::ErrorKind::InvalidData)),
                        };
                    }
                    NLMSG_ERROR if message.seq == seq => {
                        let errno = u32_at(message.payload, 0)
                            .map(|e| i32::from_ne_bytes(e.to_ne_bytes()))
                            .unwrap_or(-libc::EINVAL);
                        if errno != 0 {
                            return Err(io::Error::from_raw_os_error(-errno));
                        }
                    }
                    _ => other(&message),
                }
            }
        }
    }

    static PROBE: Mutex<Option<(Instant, Result<(), String>)>> = Mutex::new(None);

    /// Whether denial records can be read here (cached for [`PROBE_TTL`]).
    pub(super) fn availability() -> Result<(), String> {
        let mut cache = PROBE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((at, result)) = cache.as_ref()
            && at.elapsed() < PROBE_TTL
        {
            return result.clone();
        }
        let result = probe();
        *cache = Some((Instant::now(), result.clone()));
        result
    }

    fn probe() -> Result<(), String> {
        let sock = Socket::open().map_err(|err| match err.raw_os_error() {
            Some(libc::EPROTONOSUPPORT) => {
                "the kernel has no audit support (CONFIG_AUDIT)".to_owned()
            }
            _ => format!("cannot open a kernel audit socket: {err}"),
        })?;
        // Bind first: sending would autobind the socket, and a bound socket cannot join
        // the group through bind(2) any more.
        sock.bind_readlog()
            .map_err(|err| match err.raw_os_error() {
                Some(libc::EPERM) => {
                    "reading kernel audit records needs CAP_AUDIT_READ (root)".to_owned()
                }
                _ => format!("cannot subscribe to kernel audit records: {err}"),
            })?;
        let status = get_status(&sock, &mut |_| {}).map_err(|err| match err.raw_os_error() {
            Some(libc::EPERM) => "querying kernel audit needs CAP_AUDIT_CONTROL in the \
                                  initial namespaces (root)"
                .to_owned(),
            _ => format!("cannot query kernel audit: {err}"),
        })?;
        if status.enabled == 0 {
            return Err(
                "kernel audit is disabled, and the kernel only records Landlock \
                        denials while it is enabled (e.g. run auditd, or `auditctl -e 1`)"
                    .to_owned(),
            );
        }
        Ok(())
    }

    /// A subscription to the kernel's audit records, opened before the run.
    pub(super) struct Watch {
        sock: Socket,
    }

    /// What the records say about one run.
    pub(super) struct Denials {
        pub(super) count: usize,
        pub(super) details: Vec<String>,
        /// Why the answer may be incomplete.
        pub(super) incomplete: Option<String>,
    }

    impl Watch {
        pub(super) fn start() -> Result<Self, String> {
            availability()?;
            let sock = Socket::open().map_err(|e| format!("cannot open an audit socket: {e}"))?;
            sock.bind_readlog()
                .map_err(|e| format!("cannot subscribe to kernel audit records: {e}"))?;
            Ok(Self { sock })
        }

        /// Denials by the domains entered by `pids`, recorded since about `since`.
        pub(super) fn denials(&self, pids: &[i32], since: SystemTime) -> Denials {
            let mut records = Vec::new();
            let mut overflowed = false;
            let mut incomplete = None;
            {
                let mut sink = |message: &Message<'_>| {
                    if message.kind == 0 {
                        overflowed = true;
                    } else if let Some(record) = parse(message.kind, message.payload) {
                        records.push(record);
                    }
                };
                // Barrier: every denial happened before the hook's group was killed, so
                // its record is queued by now; wait until the kernel has delivered its
                // whole queue, then for one record possibly in flight.
                let deadline = Instant::now() + DRAIN_WAIT;
                loop {
                    match get_status(&self.sock, &mut sink) {
                        Ok(status) if status.enabled == 0 => {
                            incomplete = Some("kernel audit was disabled during the run".into());
                            break;
                        }
                        Ok(status) if status.backlog == 0 => break,
                        Ok(_) => {}
                        Err(err) => {
                            incomplete = Some(format!("cannot query kernel audit: {err}"));
                            break;
                        }
                    }
                    if Instant::now() >= deadline {
                        incomplete =
                            Some("the kernel audit queue did not drain in time".to_owned());
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                let mut buf = vec![0u8; RECV_BUF];
                let mut wait = IN_FLIGHT_WAIT;
                loop {
                    match self.sock.recv(&mut buf, wait) {
                        Ok(Some(n)) => {
                            for message in messages(buf.get(..n).unwrap_or_default()) {
                                sink(&message);
                            }
                        }
                        Ok(None) => break,
                        Err(err) if err.raw_os_error() == Some(libc::ENOBUFS) => {
                            sink(&Message {
                                kind: 0,
                                seq: 0,
                                payload: b"",
                            });
                        }
                        Err(_) => break,
                    }
                    wait = Duration::ZERO;
                }
            }
            if overflowed && incomplete.is_none() {
                incomplete = Some("some kernel audit records were lost (socket overflow)".into());
            }
            let since_ms = since
                .duration_since(UNIX_EPOCH)
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                .unwrap_or(0)
                .saturating_sub(CLOCK_SLACK_MS);
            let (count, details) = attribute(&records, pids, since_ms);
            Denials {
                count,
                details,
                incomplete,
            }
        }
    }

    /// Counts the access records of the domains created by `pids` at or after `since_ms`.
    fn attribute(records: &[Record], pids: &[i32], since_ms: u64) -> (usize, Vec<String>) {
        let domains: HashSet<u64> = records
            .iter()
            .filter_map(|record| match record {
                Record::Domain { at_ms, domain, pid }
                    if pids.contains(pid) && *at_ms >= since_ms =>
                {
                    Some(*domain)
                }
                _ => None,
            })
            .collect();
        let mut count = 0;
        let mut details: Vec<String> = Vec::new();
        for record in records {
            if let Record::Access { domain, detail, .. } = record
                && domains.contains(domain)
            {
                count += 1;
                if details.len() < MAX_DETAILS && !details.contains(detail) {
                    details.push(detail.clone());
                }
            }
        }
        (count, details)
    }

    /// The two Landlock record types.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(super) enum Record {
        /// `AUDIT_LANDLOCK_ACCESS`: one denial.
        Access {
            at_ms: u64,
            domain: u64,
            /// e.g. `fs.write_file path=/root/x`.
            detail: String,
        },
        /// `AUDIT_LANDLOCK_DOMAIN` with `status=allocated`: who created the domain.
        Domain { at_ms: u64, domain: u64, pid: i32 },
    }

    /// Parses `audit(1700000000.123:42): domain=1a2b blockers=fs.write_file path="/x" …`.
    pub(super) fn parse(kind: u16, payload: &[u8]) -> Option<Record> {
        if kind != AUDIT_LANDLOCK_ACCESS && kind != AUDIT_LANDLOCK_DOMAIN {
            return None;
        }
        let text = std::str::from_utf8(payload).ok()?.trim_end_matches('\0');
        let (stamp, body) = text.strip_prefix("audit(")?.split_once("): ")?;
        let (time, _serial) = stamp.split_once(':')?;
        let (secs, millis) = time.split_once('.')?;
        let at_ms = secs
            .parse::<u64>()
            .ok()?
            .checked_mul(1000)?
            .checked_add(millis.parse::<u64>().ok()?)?;
        let fields: Vec<(&str, &str)> = body
            .split(' ')
            .filter_map(|field| field.split_once('='))
            .collect();
        let field = |key: &str| fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        let domain = u64::from_str_radix(field("domain")?, 16).ok()?;
        if kind == AUDIT_LANDLOCK_DOMAIN {
            if field("status")? != "allocated" {
                return None;
            }
            let pid = field("pid")?.parse().ok()?;
            return Some(Record::Domain { at_ms, domain, pid });
        }
        let mut detail = field("blockers")?.to_owned();
        for key in ["path", "name", "daddr", "dest", "saddr", "src"] {
            if let Some(value) = field(key) {
                detail.push(' ');
                detail.push_str(key);
                detail.push('=');
                if matches!(key, "path" | "name") {
                    detail.push_str(&untrusted(value));
                } else {
                    detail.extend(value.escape_debug().take(64));
                }
            }
        }
        Some(Record::Access {
            at_ms,
            domain,
            detail,
        })
    }

    /// Decodes an audit "untrusted string" (quoted, or hex when it has odd bytes) and
    /// makes it safe to show: escaped, at most 200 characters.
    fn untrusted(value: &str) -> String {
        let decoded = if let Some(quoted) = value.strip_prefix('"') {
            quoted.strip_suffix('"').unwrap_or(quoted).to_owned()
        } else if value.len().is_multiple_of(2) && value.bytes().all(|b| b.is_ascii_hexdigit()) {
            let bytes: Vec<u8> = (0..value.len())
                .step_by(2)
                .filter_map(|i| u8::from_str_radix(value.get(i..i + 2)?, 16).ok())
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        } else {
            value.to_owned()
        };
        decoded.escape_debug().take(200).collect()
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn access(text: &str) -> Option<Record> {
            parse(AUDIT_LANDLOCK_ACCESS, text.as_bytes())
        }

        #[test]
        fn parses_access_and_domain_records() {
            let rec = access(
                "audit(1700000000.123:42): domain=1a2b3c blockers=fs.write_file,fs.make_reg \
                 path=\"/root/x\" dev=\"vda\" ino=1234",
            );
            assert_eq!(
                rec,
                Some(Record::Access {
                    at_ms: 1_700_000_000_123,
                    domain: 0x1a2b3c,
                    detail: "fs.write_file,fs.make_reg path=/root/x".to_owned(),
                })
            );
            let rec = parse(
                AUDIT_LANDLOCK_DOMAIN,
                b"audit(1700000000.124:42): domain=1a2b3c status=allocated mode=enforcing \
                  pid=4321 uid=0 exe=\"/usr/bin/host\" comm=\"host\"\0",
            );
            assert_eq!(
                rec,
                Some(Record::Domain {
                    at_ms: 1_700_000_000_124,
                    domain: 0x1a2b3c,
                    pid: 4321
                })
            );
            let dealloc = parse(
                AUDIT_LANDLOCK_DOMAIN,
                b"audit(1700000001.000:50): domain=1a2b3c status=deallocated denials=3",
            );
            assert_eq!(dealloc, None);
            assert_eq!(parse(1300, b"audit(1.000:1): domain=1 blockers=x"), None);
        }

        #[test]
        fn decodes_hex_and_network_fields() {
            let rec = access(
                "audit(1.005:1): domain=ff blockers=net.connect_tcp daddr=127.0.0.1 dest=8080",
            );
            assert!(matches!(rec, Some(Record::Access { ref detail, .. })
                if detail == "net.connect_tcp daddr=127.0.0.1 dest=8080"));
            // "/tmp/a b" hex-encoded because of the space.
            let rec =
                access("audit(1.005:1): domain=ff blockers=fs.make_reg path=2F746D7020612062");
            assert!(matches!(rec, Some(Record::Access { ref detail, .. })
                if detail == "fs.make_reg path=/tmp a b"));
            let rec = access("audit(1.005:1): domain=ff blockers=fs.write_file path=2F0A78");
            assert!(matches!(rec, Some(Record::Access { ref detail, .. })
                if detail == "fs.write_file path=/\\nx"));
        }

        #[test]
        fn attributes_only_our_domains() {
            let records = vec![
                Record::Access {
                    at_ms: 10_000,
                    domain: 1,
                    detail: "a".into(),
                },
                Record::Domain {
                    at_ms: 10_000,
                    domain: 1,
                    pid: 7,
                },
                Record::Access {
                    at_ms: 10_000,
                    domain: 2,
                    detail: "b".into(),
                },
                Record::Domain {
                    at_ms: 10_000,
                    domain: 2,
                    pid: 8,
                },
                Record::Access {
                    at_ms: 10_001,
                    domain: 1,
                    detail: "a".into(),
                },
                // pid 7 long ago: a reused pid.
                Record::Domain {
                    at_ms: 1_000,
                    domain: 3,
                    pid: 7,
                },
                Record::Access {
                    at_ms: 1_000,
                    domain: 3,
                    detail: "c".into(),
                },
            ];
            assert_eq!(attribute(&records, &[7], 9_000), (2, vec!["a".to_owned()]));
            assert_eq!(attribute(&records, &[9], 9_000), (0, vec![]));
        }

        #[test]
        fn splits_datagrams_into_messages() {
            let mut datagram = Vec::new();
            for (kind, body) in [(1423u16, &b"abc"[..]), (1424, &b"defgh"[..])] {
                let len = u32::try_from(NLMSG_HDRLEN + body.len()).unwrap();
                datagram.extend_from_slice(&len.to_ne_bytes());
                datagram.extend_from_slice(&kind.to_ne_bytes());
                datagram.extend_from_slice(&0u16.to_ne_bytes());
                datagram.extend_from_slice(&5u32.to_ne_bytes());
                datagram.extend_from_slice(&0u32.to_ne_bytes());
                datagram.extend_from_slice(body);
                while datagram.len() % 4 != 0 {
                    datagram.push(0);
                }
            }
            let parsed = messages(&datagram);
            assert_eq!(parsed.len(), 2);
            assert_eq!(parsed[0].kind, 1423);
            assert_eq!(parsed[0].payload, b"abc");
            assert_eq!(parsed[1].kind, 1424);
            assert_eq!(parsed[1].seq, 5);
            assert_eq!(parsed[1].payload, b"defgh");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rights_grow_with_the_abi() {
        assert_eq!(sys::fs_rights(1), (1 << 13) - 1);
        assert_eq!(sys::fs_rights(2), (1 << 14) - 1);
        assert_eq!(sys::fs_rights(3), (1 << 15) - 1);
        assert_eq!(sys::fs_rights(4), (1 << 15) - 1);
        assert_eq!(sys::fs_rights(5), (1 << 16) - 1);
        assert_eq!(sys::fs_rights(7), (1 << 16) - 1);
    }

    #[test]
    fn old_abis_are_unenforced() {
        let sandbox = LinuxSandbox { abi: Ok((2, 2)) };
        assert!(!sandbox.enforcement(&SandboxPolicy::default()).is_enforced());
        let sandbox = LinuxSandbox { abi: Ok((3, 3)) };
        assert!(sandbox.enforcement(&SandboxPolicy::default()).is_enforced());
        assert!(
            !sandbox
                .enforcement(&SandboxPolicy::default().network(false))
                .is_enforced()
        );
        let sandbox = LinuxSandbox { abi: Ok((4, 4)) };
        assert_eq!(
            sandbox.enforcement(&SandboxPolicy::default().network(false)),
            Enforcement::Enforced {
                abi: 4,
                network_rules: true
            }
        );
    }

    #[test]
    fn detection_probe_gives_a_plain_answer() {
        // Whatever this machine offers, the answer is a known case, not a raw errno.
        if let Err(reason) = audit::availability() {
            assert!(!reason.contains("os error"), "{reason}");
        }
    }

    #[test]
    fn forced_setting_parses() {
        assert!(LinuxSandbox::from_forced_setting(Some("none")).abi.is_err());
        assert!(LinuxSandbox::from_forced_setting(Some("0")).abi.is_err());
        if let Ok((abi, _)) = LinuxSandbox::new().abi {
            assert_eq!(
                LinuxSandbox::from_forced_setting(Some("3")).abi,
                Ok((abi.min(3), abi.min(3)))
            );
            assert_eq!(
                LinuxSandbox::from_forced_setting(Some("bogus"))
                    .abi
                    .map(|a| a.0),
                Ok(abi)
            );
        }
    }
}
