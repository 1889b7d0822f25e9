//! The self-test's escape probes: each attack is made by a real, sandboxed child, in
//! its [`ChildSetup`] right after the sandbox was applied (so no tool such as python or
//! socat is needed): a probe that gets through lets the child exec `exit 0`; one that is
//! refused aborts the spawn with the errno it got.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::Duration;

use super::{CheckResult, Enforcement, Sandbox, SandboxPolicy, SelfTestCheck};
use crate::spawn::{self, ChildSetup, Limits, SpawnError, SpawnRequest};

/// One attack, with everything it needs prepared in the parent.
#[derive(Clone, Copy)]
enum Attack {
    /// `socket(domain, kind, protocol)`.
    Socket(i32, i32, i32),
    /// A TCP or MPTCP connect to the address.
    Connect(i32, libc::sockaddr_in),
    /// `sendto(MSG_FASTOPEN)` on a fresh TCP socket.
    FastOpen(libc::sockaddr_in),
    /// A UDP datagram to the address.
    Udp(libc::sockaddr_in),
    /// A Unix stream connect to the (pathname or abstract) address of the given length.
    Unix(libc::sockaddr_un, libc::socklen_t),
    /// `kill(pid, 0)`.
    Signal(libc::pid_t),
}

struct Probe<'a> {
    sandbox: &'a dyn ChildSetup,
    attack: Attack,
}

fn check(ret: libc::c_int) -> std::io::Result<libc::c_int> {
    if ret < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(ret)
}

fn len_of<T>() -> libc::socklen_t {
    libc::socklen_t::try_from(std::mem::size_of::<T>()).unwrap_or(0)
}

// SAFETY: `apply_in_child` calls the sandbox's own setup (itself an `unsafe impl` honouring
// the contract), then raw syscalls (socket, connect, sendto, kill) on data prepared in the
// parent and copied on the stack; no allocation, no lock, no panic. The sockets it opens
// are closed by exec (close-on-exec) or by the child's exit.
unsafe impl ChildSetup for Probe<'_> {
    fn apply_in_child(&self) -> std::io::Result<()> {
        self.sandbox.apply_in_child()?;
        let socket = |domain: i32, kind: i32, protocol: i32| {
            // SAFETY: integer arguments only.
            check(unsafe { libc::socket(domain, kind | libc::SOCK_CLOEXEC, protocol) })
        };
        match self.attack {
            Attack::Socket(domain, kind, protocol) => socket(domain, kind, protocol).map(drop),
            Attack::Connect(protocol, addr) => {
                let fd = socket(libc::AF_INET, libc::SOCK_STREAM, protocol)?;
                // SAFETY: `addr` is a valid sockaddr_in of the length given.
                check(unsafe {
                    libc::connect(
                        fd,
                        std::ptr::from_ref(&addr).cast(),
                        len_of::<libc::sockaddr_in>(),
                    )
                })
                .map(drop)
            }
            Attack::FastOpen(addr) | Attack::Udp(addr) => {
                let (kind, flags) = match self.attack {
                    Attack::FastOpen(_) => (libc::SOCK_STREAM, libc::MSG_FASTOPEN),
                    _ => (libc::SOCK_DGRAM, 0),
                };
                let fd = socket(libc::AF_INET, kind, 0)?;
                // SAFETY: a one-byte buffer and a valid sockaddr_in of the length given.
                let sent = unsafe {
                    libc::sendto(
                        fd,
                        b"x".as_ptr().cast(),
                        1,
                        flags,
                        std::ptr::from_ref(&addr).cast(),
                        len_of::<libc::sockaddr_in>(),
                    )
                };
                if sent < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            }
            Attack::Unix(addr, len) => {
                let fd = socket(libc::AF_UNIX, libc::SOCK_STREAM, 0)?;
                // SAFETY: `addr` is a valid sockaddr_un of at least `len` bytes.
                check(unsafe { libc::connect(fd, std::ptr::from_ref(&addr).cast(), len) }).map(drop)
            }
            Attack::Signal(pid) => {
                // SAFETY: signal 0 only checks permission and existence.
                check(unsafe { libc::kill(pid, 0) }).map(drop)
            }
        }
    }
}

/// Runs `attack` under `policy`: `Ok(true)` when it got through, `Ok(false)` when it was
/// refused, `Err` when the run could not be set up.
fn attempt(sandbox: &dyn Sandbox, policy: &SandboxPolicy, attack: Attack) -> Result<bool, String> {
    let prepared = sandbox.prepare(policy).map_err(|e| e.to_string())?;
    let env = [(OsString::from("PATH"), OsString::from("/usr/bin:/bin"))];
    let probe = Probe {
        sandbox: prepared.as_child_setup(),
        attack,
    };
    let req = SpawnRequest {
        command: "exit 0",
        cwd: prepared.tmpdir(),
        env: &env,
        stdin: b"",
        timeout: Duration::from_secs(20),
        limits: Limits::default(),
        child_setup: Some(&probe),
    };
    match spawn::run(&req) {
        Ok(out) => Ok(out.exit_code == Some(0)),
        Err(SpawnError::Start { cause: source, .. }) if source.raw_os_error().is_some() => {
            Ok(false)
        }
        Err(e) => Err(e.to_string()),
    }
}

fn inet(addr: std::net::SocketAddr) -> Option<libc::sockaddr_in> {
    let std::net::SocketAddr::V4(v4) = addr else {
        return None;
    };
    Some(libc::sockaddr_in {
        sin_family: libc::sa_family_t::try_from(libc::AF_INET).ok()?,
        sin_port: v4.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*v4.ip()).to_be(),
        },
        sin_zero: [0; 8],
    })
}

/// A `sockaddr_un` for `name` (abstract when `abstract_name`), and its length.
fn unix_addr(name: &[u8], abstract_name: bool) -> Option<(libc::sockaddr_un, libc::socklen_t)> {
    // SAFETY: all-zeroes is a valid sockaddr_un.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::sa_family_t::try_from(libc::AF_UNIX).ok()?;
    let offset = usize::from(abstract_name);
    if name.len() + offset >= addr.sun_path.len() {
        return None;
    }
    for (slot, &byte) in addr.sun_path.iter_mut().skip(offset).zip(name) {
        *slot = libc::c_char::from_ne_bytes([byte]);
    }
    let base = std::mem::size_of::<libc::sa_family_t>();
    let len = base + offset + name.len() + usize::from(!abstract_name);
    Some((addr, libc::socklen_t::try_from(len).ok()?))
}

/// The escape probes of `sandbox check`.
pub(super) fn checks(
    sandbox: &dyn Sandbox,
    policy: &SandboxPolicy,
    enforcement_without_network: &Enforcement,
    scratch: &Path,
) -> Vec<SelfTestCheck> {
    let mut checks = Vec::new();
    let mut push =
        |name: &'static str, result: CheckResult| checks.push(SelfTestCheck { name, result });
    // First where it must get through (so a probe that cannot work never passes for a
    // sandbox that holds), then confined.
    let open = policy.clone();
    let refused = |confined: &SandboxPolicy, attack: Attack| {
        if !matches!(attack, Attack::Signal(_)) {
            match attempt(sandbox, &open, attack) {
                Ok(true) => {}
                Ok(false) => {
                    return CheckResult::Skipped(
                        "the probe does not get through even unconfined (privilege needed)"
                            .to_owned(),
                    );
                }
                Err(e) => return CheckResult::Failed(e),
            }
        }
        match attempt(sandbox, confined, attack) {
            Ok(false) => CheckResult::Passed,
            Ok(true) => CheckResult::Failed("it got through".to_owned()),
            Err(e) => CheckResult::Failed(e),
        }
    };

    // The network with `network: false`.
    let closed = policy.clone().network(false);
    let tcp = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()
        .and_then(|l| Some((inet(l.local_addr().ok()?)?, l)));
    let udp = std::net::UdpSocket::bind("127.0.0.1:0")
        .ok()
        .and_then(|s| Some((inet(s.local_addr().ok()?)?, s)));
    let network: [(&'static str, Option<Attack>); 5] = [
        (
            "network: false refuses UDP",
            udp.as_ref().map(|(a, _)| Attack::Udp(*a)),
        ),
        (
            "network: false refuses TCP Fast Open (sendto without connect)",
            tcp.as_ref().map(|(a, _)| Attack::FastOpen(*a)),
        ),
        (
            "network: false refuses MPTCP",
            tcp.as_ref().map(|(a, _)| Attack::Connect(262, *a)),
        ),
        (
            "network: false refuses raw sockets",
            Some(Attack::Socket(
                libc::AF_INET,
                libc::SOCK_RAW,
                libc::IPPROTO_ICMP,
            )),
        ),
        (
            "network: false refuses packet sockets",
            Some(Attack::Socket(libc::AF_PACKET, libc::SOCK_RAW, 0)),
        ),
    ];
    for (name, attack) in network {
        let result = match (enforcement_without_network, attack) {
            (Enforcement::Unenforced { reason }, _) => {
                CheckResult::Skipped(format!("not enforced here: {reason}"))
            }
            (_, None) => CheckResult::Skipped("cannot listen on 127.0.0.1".to_owned()),
            (_, Some(attack)) => refused(&closed, attack),
        };
        push(name, result);
    }

    // Unix sockets, for project hooks.
    let project = policy.clone().unix_sockets(false);
    let path = scratch.join("probe.sock");
    let listener = UnixListener::bind(&path).ok();
    let attack = listener
        .as_ref()
        .and_then(|_| unix_addr(path.as_os_str().as_encoded_bytes(), false));
    push(
        "project hooks cannot connect to a Unix socket outside the workspace",
        match attack {
            None => CheckResult::Skipped("cannot listen on a Unix socket".to_owned()),
            Some((addr, len)) => refused(&project, Attack::Unix(addr, len)),
        },
    );
    let name = format!("copse-hooks-check-{}", std::process::id());
    let listener_abstract = {
        use std::os::linux::net::SocketAddrExt;
        std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
            .and_then(|addr| UnixListener::bind_addr(&addr))
            .ok()
    };
    let attack = listener_abstract
        .as_ref()
        .and_then(|_| unix_addr(name.as_bytes(), true));
    push(
        "project hooks cannot connect to an abstract Unix socket",
        match attack {
            None => CheckResult::Skipped("cannot listen on an abstract socket".to_owned()),
            Some((addr, len)) => refused(
                &project.clone().allowed_sockets(vec![path.clone()]),
                Attack::Unix(addr, len),
            ),
        },
    );

    // Signals to the host.
    let host = libc::pid_t::try_from(std::process::id()).unwrap_or(0);
    push(
        "a hook cannot signal the host",
        refused(policy, Attack::Signal(host)),
    );

    // Descriptors: a host fd without close-on-exec, at a number nothing else uses.
    push(
        "only stdin, stdout and stderr reach a hook",
        descriptors(sandbox, policy),
    );
    drop((tcp, udp, listener, listener_abstract));
    let _ = std::fs::remove_file(&path);
    checks
}

fn descriptors(sandbox: &dyn Sandbox, policy: &SandboxPolicy) -> CheckResult {
    let Ok(file) = std::fs::File::open("/dev/null") else {
        return CheckResult::Skipped("cannot open /dev/null".to_owned());
    };
    // SAFETY: F_DUPFD (no close-on-exec) duplicates an fd we own to the lowest free number
    // >= 200; the result is owned right below.
    let raw = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD, 200) };
    if raw < 0 {
        return CheckResult::Skipped("cannot duplicate a descriptor".to_owned());
    }
    // SAFETY: fcntl just returned this fd and nothing else owns it.
    let inherited = unsafe { OwnedFd::from_raw_fd(raw) };
    let result = (|| {
        let prepared = sandbox.prepare(policy).map_err(|e| e.to_string())?;
        let env = [(OsString::from("PATH"), OsString::from("/usr/bin:/bin"))];
        let req = SpawnRequest {
            command: "ls /proc/self/fd",
            cwd: prepared.tmpdir(),
            env: &env,
            stdin: b"",
            timeout: Duration::from_secs(20),
            limits: Limits::default(),
            child_setup: Some(prepared.as_child_setup()),
        };
        spawn::run(&req).map_err(|e| e.to_string())
    })();
    let number = inherited.as_raw_fd().to_string();
    drop(inherited);
    match result {
        Err(e) => CheckResult::Failed(e),
        Ok(out) if out.exit_code != Some(0) => CheckResult::Failed(format!(
            "listing /proc/self/fd failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Ok(out) => {
            let listed = String::from_utf8_lossy(&out.stdout).into_owned();
            if listed.split_whitespace().any(|fd| fd == number) {
                CheckResult::Failed(format!("descriptor {number} reached the hook"))
            } else {
                CheckResult::Passed
            }
        }
    }
}
