//! Who is on the other end of a daemon connection, and whether it may be served.
//!
//! The daemon serves the agent (through `copse-hooks shim`) and hosts the user runs,
//! never a hook: a hook that could reach the socket could ask for an unsandboxed run
//! of anything. The sandbox keeps hooks away from `$COPSE_DIR` sockets; this is the
//! defence in depth behind it. On accept the kernel tells us the peer's pid and uid
//! (`SO_PEERCRED`, fixed at `connect()`), and the peer is refused when it
//!
//! - runs as another user;
//! - is in another pid namespace than the daemon (every sandboxed hook gets its own);
//! - is more confined than the daemon: `NoNewPrivs` or a seccomp filter the daemon
//!   does not have itself (our sandbox sets both; an agent that runs confined starts
//!   its daemon confined the same way, so it is not refused);
//! - started with `COPSE_HOOK_DEPTH` of 1 or more in its environment (it is a hook, or
//!   something a hook started);
//! - cannot be examined (gone, or `/proc` refuses): refusing is the safe answer.
//!
//! It costs one `getsockopt` and three small `/proc` reads per connection.

use std::os::fd::AsRawFd;
use std::sync::OnceLock;

/// The peer's credentials as the kernel recorded them at `connect()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerCred {
    /// Its pid in the daemon's pid namespace (0 when it has none there).
    pub pid: i32,
    /// Its uid.
    pub uid: u32,
}

/// Reads `SO_PEERCRED` of a connected Unix socket.
pub fn peer_cred(socket: &impl AsRawFd) -> std::io::Result<PeerCred> {
    // Not rustix's `socket_peercred`: its `Pid` cannot be 0, which the kernel reports
    // for a peer whose pid has no number in our namespace.
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` is a valid, writable `ucred` and `len` is its size; the kernel
    // writes at most `len` bytes and updates `len`.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut cred).cast(),
            &raw mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(PeerCred {
        pid: cred.pid,
        uid: cred.uid,
    })
}

/// What `/proc/<pid>/status` says about confinement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Confinement {
    no_new_privs: bool,
    seccomp: bool,
}

fn confinement(status: &str) -> Confinement {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
    };
    Confinement {
        no_new_privs: field("NoNewPrivs:").is_some_and(|v| v != "0"),
        seccomp: field("Seccomp:").is_some_and(|v| v != "0"),
    }
}

/// The daemon's own pid namespace and confinement, read once.
fn ours() -> &'static Option<(std::path::PathBuf, Confinement)> {
    static OURS: OnceLock<Option<(std::path::PathBuf, Confinement)>> = OnceLock::new();
    OURS.get_or_init(|| {
        let ns = std::fs::read_link("/proc/self/ns/pid").ok()?;
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        Some((ns, confinement(&status)))
    })
}

/// Whether an environment block (NUL-separated `NAME=value`) says it is inside a hook.
fn inside_hook(environ: &[u8]) -> bool {
    environ.split(|b| *b == 0).any(|var| {
        var.strip_prefix(b"COPSE_HOOK_DEPTH=")
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(|v| v.trim().parse::<i64>().ok())
            .is_some_and(|d| d >= 1)
    })
}

/// Why a peer must not be served, or `None` when it may be.
pub fn refusal(cred: PeerCred) -> Option<String> {
    let uid = rustix::process::getuid().as_raw();
    if cred.uid != uid {
        return Some(format!("it runs as uid {}, not {uid}", cred.uid));
    }
    if cred.pid <= 0 {
        return Some("it has no pid in the daemon's pid namespace".to_owned());
    }
    let Some((our_ns, our_confinement)) = ours() else {
        return Some("the daemon cannot read its own /proc entry".to_owned());
    };
    let proc = std::path::PathBuf::from(format!("/proc/{}", cred.pid));
    match std::fs::read_link(proc.join("ns/pid")) {
        Ok(ns) if ns == *our_ns => {}
        Ok(_) => {
            return Some(format!(
                "pid {} is in another pid namespace (a hook's)",
                cred.pid
            ));
        }
        Err(e) => {
            return Some(format!(
                "cannot read the pid namespace of pid {}: {e}",
                cred.pid
            ));
        }
    }
    let status = match read_proc(&proc.join("status")) {
        Ok(s) => confinement(&String::from_utf8_lossy(&s)),
        Err(e) => return Some(format!("cannot read the status of pid {}: {e}", cred.pid)),
    };
    if status.no_new_privs && !our_confinement.no_new_privs {
        return Some(format!(
            "pid {} runs with NoNewPrivs (as sandboxed hooks do)",
            cred.pid
        ));
    }
    if status.seccomp && !our_confinement.seccomp {
        return Some(format!(
            "pid {} runs under a seccomp filter (as sandboxed hooks do)",
            cred.pid
        ));
    }
    match read_proc(&proc.join("environ")) {
        Ok(environ) if inside_hook(&environ) => Some(format!(
            "pid {} has COPSE_HOOK_DEPTH set: it is a hook or runs inside one",
            cred.pid
        )),
        Ok(_) => None,
        Err(e) => Some(format!(
            "cannot read the environment of pid {}: {e}",
            cred.pid
        )),
    }
}

/// Reads a `/proc` file whole. A `/proc` file reports size 0, so `fs::read` would
/// start from a 32-byte buffer and double it (seven reads for a 2 KiB environment,
/// per connection); starting at 8 KiB reads a typical one in two.
fn read_proc(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut out = Vec::with_capacity(8 << 10);
    std::fs::File::open(path)?.read_to_end(&mut out)?;
    Ok(out)
}

/// [`refusal`] for a connected socket.
pub fn check(socket: &impl AsRawFd) -> Option<String> {
    match peer_cred(socket) {
        Ok(cred) => refusal(cred),
        Err(e) => Some(format!("cannot read its credentials: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confinement_reads_the_status_fields() {
        let s = "Name:\tsh\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n";
        assert_eq!(
            confinement(s),
            Confinement {
                no_new_privs: true,
                seccomp: true
            }
        );
        let s = "NoNewPrivs:\t0\nSeccomp:\t0\n";
        assert_eq!(confinement(s), Confinement::default());
    }

    #[test]
    fn a_depth_of_one_or_more_is_inside_a_hook() {
        assert!(inside_hook(b"PATH=/bin\0COPSE_HOOK_DEPTH=1\0"));
        assert!(inside_hook(b"COPSE_HOOK_DEPTH=3"));
        assert!(!inside_hook(b"COPSE_HOOK_DEPTH=0\0"));
        assert!(!inside_hook(b"XCOPSE_HOOK_DEPTH=1\0"));
        assert!(!inside_hook(b"PATH=/bin\0"));
    }

    #[test]
    fn this_process_may_connect_to_itself() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let cred = peer_cred(&a).unwrap();
        assert_eq!(cred.pid, i32::try_from(std::process::id()).unwrap());
        if std::env::var_os("COPSE_HOOK_DEPTH").is_none() {
            assert_eq!(check(&a), None);
        }
    }
}
