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
//! Not restricted by Landlock itself (documented limits, not bugs; the seccomp filter in
//! `linux/seccomp.rs` and the binds in `linux/protect.rs` cover the first and the third
//! where it matters): connecting to existing Unix sockets (e.g. a Docker or D-Bus socket)
//! and UDP; signals to other processes of the user; `chmod`/`chown`/`utime`/xattrs on
//! existing files (refused on the protected paths only, by their read-only binds);
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
    Detection, Enforcement, Layer, PreparedSandbox, PrivateTmp, Sandbox, SandboxError,
    SandboxPolicy, SandboxStatus, SandboxVerdict,
};
use crate::spawn::ChildSetup;

/// The newest Landlock ABI whose rights this code knows.
const KNOWN_ABI: u32 = 7;
/// The oldest ABI controlling every way to modify a file (`TRUNCATE` arrived in ABI 3).
const MIN_FS_ABI: u32 = 3;
/// The oldest ABI with TCP rules.
const NET_ABI: u32 = 4;
/// The oldest ABI with IPC scopes (signals, abstract Unix sockets).
const SCOPE_ABI: u32 = 6;
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

mod ruleset;
use ruleset as sys;

/// Landlock on Linux (the source of `sandbox/linux.rs` has the full notes).
///
/// * Uses the highest Landlock ABI the kernel supports, and handles every filesystem
///   right that ABI knows. Needs ABI ≥ 3 (Linux 6.2, `TRUNCATE`) for any policy and ABI ≥ 4
///   (Linux 6.7) for `network: false`; below that the policy is
///   [`Unenforced`](super::Enforcement::Unenforced), never applied in part.
/// * In the child: `PR_SET_NO_NEW_PRIVS` (setuid programs such as `sudo` do not elevate)
///   and `landlock_restrict_self`; the child reports its pid through a close-on-exec pipe.
/// * Not restricted by Landlock: connecting to existing Unix sockets (the seccomp filter
///   refuses creating one unless `sandboxAllowedSockets` lists one; `$COPSE_DIR`'s are
///   masked), UDP, signals, `chmod`/`chown`/`utime`/xattrs on existing files (refused on
///   the protected paths by their read-only binds), files opened before the hook started;
///   a hook running as root keeps its capabilities other than filesystem access.
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
        let by = "forced by COPSE_HOOKS_SANDBOX_FORCE_ABI".to_owned();
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

    /// Each protection layer and whether this kernel enforces it.
    fn layers(&self) -> Vec<Layer> {
        let abi = self.abi.as_ref().ok().map(|&(abi, _)| abi);
        let fs = abi.is_some_and(|abi| abi >= MIN_FS_ABI);
        let seccomp = seccomp::availability();
        let unenforced = |why: &str| why.to_owned();
        let mut layers = vec![
            Layer::new(
                "filesystem writes confined",
                fs,
                if fs {
                    "Landlock".to_owned()
                } else {
                    unenforced("Landlock ABI 3 (Linux 6.2) is needed")
                },
            ),
            Layer::new(
                "network: false (TCP, MPTCP, UDP, raw, packet, Fast Open)",
                abi.is_some_and(|abi| abi >= NET_ABI) && seccomp.is_ok(),
                match &seccomp {
                    Err(reason) => reason.clone(),
                    Ok(()) if abi.is_some_and(|abi| abi >= NET_ABI) => {
                        "Landlock TCP rules and a seccomp socket filter".to_owned()
                    }
                    Ok(()) => unenforced("Landlock ABI 4 (Linux 6.7) is needed"),
                },
            ),
            Layer::new(
                "Unix sockets (every hook)",
                fs && seccomp.is_ok(),
                match &seccomp {
                    Err(reason) => reason.clone(),
                    Ok(()) => "seccomp: no socket(AF_UNIX) unless sandboxAllowedSockets \
                               lists one; never $COPSE_DIR's (masked)"
                        .to_owned(),
                },
            ),
        ];
        let scoped = abi.is_some_and(|abi| abi >= SCOPE_ABI);
        let scope_detail = if scoped {
            "Landlock scope".to_owned()
        } else {
            unenforced("Landlock ABI 6 (Linux 6.12) is needed")
        };
        layers.push(Layer::new(
            "abstract Unix sockets (every hook)",
            scoped && seccomp.is_ok(),
            scope_detail.clone(),
        ));
        let protect = protect::availability();
        layers.push(Layer::new(
            "agent configs and instructions, $COPSE_DIR, pinned scripts, .git metadata \
             read-only",
            fs && protect.is_ok(),
            match protect {
                Ok(()) => "read-only binds in a mount namespace per run".to_owned(),
                Err(reason) => reason,
            },
        ));
        layers.push(Layer::new(
            "signals only to the run's processes",
            scoped,
            scope_detail,
        ));
        layers.extend(crate::spawn::layers());
        layers
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
            enforcement_without_network: self.enforcement(&default.clone().network(false)),
            detection: self.detection(),
            layers: self.layers(),
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
        if !policy.protected.is_empty()
            && let Err(reason) = protect::availability()
        {
            return Enforcement::Unenforced {
                reason: format!(
                    "hook configs and .git cannot be protected from hooks (no mount \
                     namespace): {reason}"
                ),
            };
        }
        if (!policy.network || !policy.unix_sockets)
            && let Err(reason) = seccomp::availability()
        {
            return Enforcement::Unenforced {
                reason: format!("the socket filter cannot be installed: {reason}"),
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
        let setup = |what: &'static str| {
            move |source| SandboxError::Setup {
                what,
                cause: source,
            }
        };
        let prepared_at = SystemTime::now();
        let tmp = PrivateTmp::create().map_err(setup("create the private temp dir"))?;

        let handled = sys::fs_rights(abi);
        let net = if policy.network {
            0
        } else {
            sys::NET_BIND_TCP | sys::NET_CONNECT_TCP
        };
        let scoped = scopes(abi, policy);
        let seccomp = seccomp::compile(seccomp::Denials {
            network: !policy.network,
            unix: !policy.unix_sockets && !allows_a_socket(policy),
        })
        .map_err(|reason| SandboxError::Unenforced { reason })?;
        let mut ruleset = ruleset::create(handled, net, scoped).map_err(landlock_error)?;
        for (fd, access) in base_rules().map_err(setup("open / and the devices"))? {
            add_rule(&mut ruleset, fd, handled & access)?;
        }
        for path in &policy.writable {
            allow(&mut ruleset, path, handled)?;
        }
        let mut writable = policy.writable.clone();
        writable.push(tmp.path().to_path_buf());
        let binds = protect::Mounts::new(protect::plan(&policy.protected, &writable))
            .map_err(setup("prepare the protected paths"))?;
        let tmp_fd = open_path(tmp.path()).map_err(setup("open the private temp dir"))?;
        add_rule(&mut ruleset, &tmp_fd, handled)?;
        drop(tmp_fd);
        // The ruleset is complete: only its fd crosses into the child.
        let ruleset: OwnedFd =
            Option::<OwnedFd>::from(ruleset).ok_or_else(|| SandboxError::Setup {
                what: "create the Landlock ruleset",
                cause: io::Error::other("the kernel gave no ruleset"),
            })?;

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
            seccomp,
            binds,
        }))
    }
}

/// Whether `policy.allowed_sockets` lifts the `socket(AF_UNIX)` refusal: only for a
/// socket outside the protected paths (one inside, such as `$COPSE_DIR/daemon.sock`, is
/// masked in the run's mount namespace, so listing it must not open every other socket).
fn allows_a_socket(policy: &SandboxPolicy) -> bool {
    if policy.allowed_sockets.is_empty() {
        return false;
    }
    let canonical = |path: &Path| {
        let parent = path
            .parent()
            .and_then(|dir| std::fs::canonicalize(dir).ok());
        match (parent, path.file_name()) {
            (Some(parent), Some(name)) => parent.join(name),
            _ => path.to_path_buf(),
        }
    };
    let protected: Vec<_> = policy
        .protected
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .collect();
    policy.allowed_sockets.iter().any(|socket| {
        let socket = canonical(socket);
        !protected.iter().any(|p| socket.starts_with(p))
    })
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

/// The Landlock IPC scopes for `policy` (none before ABI 6): signals only to processes of
/// the run, always; abstract Unix sockets only the run's own, when Unix sockets are denied.
fn scopes(abi: u32, policy: &SandboxPolicy) -> u64 {
    if abi < SCOPE_ABI {
        return 0;
    }
    let mut scoped = sys::SCOPE_SIGNAL;
    if !policy.unix_sockets {
        scoped |= sys::SCOPE_ABSTRACT_UNIX_SOCKET;
    }
    scoped
}

/// In the child: its pid as the host (and the kernel's audit records) see it. Inside the
/// run's pid namespace `getpid` says 1, but `/proc` is still the host's (the run's private
/// one is mounted after this), so `/proc/self` names the host pid. Async-signal-safe: one
/// readlink into a stack buffer.
fn host_pid() -> i32 {
    let mut buf = [0u8; 16];
    // SAFETY: the path is a NUL-terminated literal and `buf` is writable for its length.
    let n = unsafe { libc::readlink(c"/proc/self".as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    let mut pid: i32 = 0;
    if let Ok(n) = usize::try_from(n) {
        for &b in buf.iter().take(n) {
            if !b.is_ascii_digit() {
                pid = 0;
                break;
            }
            pid = pid.saturating_mul(10).saturating_add(i32::from(b - b'0'));
        }
    }
    if pid > 0 {
        return pid;
    }
    // SAFETY: getpid is async-signal-safe and cannot fail.
    unsafe { libc::getpid() }
}

fn is_resource_error(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM)
    )
}

/// Adds a rule granting `access` beneath `path`, skipping a path that cannot be opened
/// (missing, or unreachable for us and therefore for the hook too).
fn allow(
    ruleset: &mut landlock::RulesetCreated,
    path: &Path,
    access: u64,
) -> Result<(), SandboxError> {
    let fd = match open_path(path) {
        Ok(fd) => fd,
        Err(err) if is_resource_error(&err) => {
            return Err(SandboxError::Setup {
                what: "open a writable path",
                cause: err,
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

fn add_rule(
    ruleset: &mut landlock::RulesetCreated,
    fd: &OwnedFd,
    access: u64,
) -> Result<(), SandboxError> {
    use landlock::RulesetCreatedAttr;
    if access == 0 {
        return Ok(());
    }
    let access = landlock::BitFlags::<landlock::AccessFs>::from_bits_truncate(access);
    ruleset
        .add_rule(landlock::PathBeneath::new(fd, access))
        .map(drop)
        .map_err(landlock_error)
}

/// A `landlock` crate error as a setup failure (with the OS error when there is one).
fn landlock_error(err: landlock::RulesetError) -> SandboxError {
    SandboxError::Setup {
        what: "build the Landlock ruleset",
        cause: io::Error::other(err.to_string()),
    }
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
    /// The socket filter, when the policy refuses sockets.
    seccomp: Option<seccompiler::BpfProgram>,
    /// The read-only binds of the protected paths.
    binds: protect::Mounts,
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

// SAFETY: `apply_in_child` makes raw syscalls only (prctl, landlock_restrict_self, seccomp,
// readlink, getpid, write) on data prepared in the parent, never allocates or locks.
unsafe impl ChildSetup for LinuxPrepared {
    fn mounts_private_proc(&self) -> bool {
        true
    }

    fn apply_in_child(&self) -> io::Result<()> {
        // The host pid first: the private /proc mounted next shows the run's own pids.
        let pid = host_pid();
        // Mounts next: once in its Landlock domain the child may not mount.
        let mut result = self.binds.apply_in_child();
        if result.is_ok() {
            result = sys::restrict_self(self.ruleset.as_raw_fd(), self.restrict_flags);
        }
        if result.is_ok()
            && let Some(program) = &self.seccomp
        {
            result = seccomp::install(program);
        }
        let errno = match &result {
            Ok(()) => 0,
            Err(err) => err.raw_os_error().unwrap_or(libc::EINVAL),
        };
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

mod audit;
mod protect;
mod seccomp;

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
