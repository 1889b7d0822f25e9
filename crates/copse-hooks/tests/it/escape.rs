//! Routes out of the sandbox (issue 9) and out of the run (issue 10), each tried by a real
//! hook: the hook runs this test binary as an attack helper (`escape::attack_helper`),
//! which makes the very syscalls an attacker would and prints `ESCAPED` when one worked.
//! Each test also runs the attack where it must work (a control), so a helper that
//! cannot do anything never passes for a sandbox that holds.

#![cfg(target_os = "linux")]

use std::ffi::OsString;
use std::net::{TcpListener, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use copse_hooks::sandbox::{LinuxSandbox, Sandbox, SandboxPolicy};
use copse_hooks::spawn::{self, Limits, SpawnOutput, SpawnRequest};

const ATTACK_VAR: &str = "COPSE_TEST_ATTACK";

/// The shell command that runs the attack helper with `attack`.
fn attack_command(attack: &str) -> String {
    let exe = std::env::current_exe().unwrap_or_else(|err| panic!("current_exe: {err}"));
    format!(
        "{ATTACK_VAR}='{attack}' '{}' --exact escape::attack_helper --ignored --nocapture \
         --test-threads=1",
        exe.display()
    )
}

/// Runs `attack` in `cwd`, sandboxed under `policy` (or not, with `None`).
fn run_attack(policy: Option<&SandboxPolicy>, attack: &str, cwd: &Path) -> SpawnOutput {
    let sandbox = LinuxSandbox::new();
    let prepared = policy.map(|policy| {
        sandbox
            .prepare(policy)
            .unwrap_or_else(|e| panic!("prepare: {e}"))
    });
    let mut env: Vec<(OsString, OsString)> =
        vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())];
    if let Some(prepared) = &prepared {
        env.push(("TMPDIR".into(), prepared.tmpdir().as_os_str().to_owned()));
    }
    let command = attack_command(attack);
    let req = SpawnRequest {
        command: &command,
        cwd,
        env: &env,
        stdin: b"",
        timeout: Duration::from_secs(60),
        limits: Limits::default(),
        child_setup: prepared.as_deref().map(|p| p.as_child_setup()),
    };
    spawn::run(&req).unwrap_or_else(|e| panic!("spawn: {e}"))
}

fn escaped(out: &SpawnOutput) -> bool {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ATTACK-RAN"),
        "the attack helper did not run: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.contains("ESCAPED")
}

fn describe(out: &SpawnOutput) -> String {
    format!(
        "stdout {:?}, stderr {:?}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A project hook's policy: the workspace writable, no Unix sockets.
fn project(workspace: &Path) -> SandboxPolicy {
    SandboxPolicy::new([workspace.to_path_buf()]).unix_sockets(false)
}

#[test]
fn udp_reaches_the_network_only_with_network_true() {
    let dir = tempfile::tempdir().unwrap();
    let listener = UdpSocket::bind("127.0.0.1:0").unwrap();
    listener
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let attack = format!("udp:{port}");
    let open = SandboxPolicy::new([dir.path().to_path_buf()]);
    let out = run_attack(Some(&open), &attack, dir.path());
    assert!(escaped(&out), "control: UDP must work: {}", describe(&out));
    let mut buf = [0u8; 64];
    assert!(listener.recv(&mut buf).is_ok(), "control datagram lost");

    let out = run_attack(Some(&open.clone().network(false)), &attack, dir.path());
    assert!(
        !escaped(&out),
        "UDP with network: false: {}",
        describe(&out)
    );
    assert!(
        listener.recv(&mut buf).is_err(),
        "a datagram arrived from a network: false hook"
    );
}

#[test]
fn tcp_fast_open_mptcp_raw_and_packet_sockets_are_refused_with_network_false() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let open = SandboxPolicy::new([dir.path().to_path_buf()]);
    let closed = open.clone().network(false);
    // Control: Fast Open (sendto MSG_FASTOPEN without connect) reaches the listener.
    let out = run_attack(Some(&open), &format!("fastopen:{port}"), dir.path());
    assert!(
        escaped(&out),
        "control: Fast Open must work: {}",
        describe(&out)
    );
    for attack in [
        format!("fastopen:{port}"),
        format!("tcp:{port}"),
        format!("mptcp:{port}"),
        "raw".to_owned(),
        "packet".to_owned(),
        "netlink".to_owned(),
    ] {
        let out = run_attack(Some(&closed), &attack, dir.path());
        assert!(
            !escaped(&out),
            "{attack} with network: false: {}",
            describe(&out)
        );
    }
}

#[test]
fn project_hooks_cannot_reach_a_unix_socket_outside_the_workspace() {
    let workspace = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let path = outside.path().join("server.sock");
    let listener = UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let attack = format!("unix:{}", path.display());
    // Control: a user hook (Unix sockets allowed) reaches it.
    let user = SandboxPolicy::new([workspace.path().to_path_buf()]);
    let out = run_attack(Some(&user), &attack, workspace.path());
    assert!(escaped(&out), "control: {}", describe(&out));
    let out = run_attack(Some(&project(workspace.path())), &attack, workspace.path());
    assert!(
        !escaped(&out),
        "project hook reached {attack}: {}",
        describe(&out)
    );
    // A socket pair (a pipe between the hook's own processes) still works.
    let out = run_attack(
        Some(&project(workspace.path())),
        "socketpair",
        workspace.path(),
    );
    assert!(escaped(&out), "socketpair refused: {}", describe(&out));
}

#[test]
fn project_hooks_cannot_use_abstract_sockets() {
    use std::os::linux::net::SocketAddrExt;
    let workspace = tempfile::tempdir().unwrap();
    let name = format!("copse-test-abstract-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = UnixListener::bind_addr(&addr).unwrap();
    listener.set_nonblocking(true).unwrap();
    let attack = format!("abstract:{name}");
    let user = SandboxPolicy::new([workspace.path().to_path_buf()]);
    let out = run_attack(Some(&user), &attack, workspace.path());
    assert!(escaped(&out), "control: {}", describe(&out));
    // Even with sockets allowed by the setting, abstract ones stay refused (Landlock scope).
    for policy in [
        project(workspace.path()),
        project(workspace.path()).allowed_sockets(vec![PathBuf::from("/nonexistent.sock")]),
    ] {
        let out = run_attack(Some(&policy), &attack, workspace.path());
        assert!(!escaped(&out), "reached {attack}: {}", describe(&out));
    }
}

#[test]
fn a_hook_cannot_signal_the_host_or_other_processes() {
    let dir = tempfile::tempdir().unwrap();
    let mut victim = std::process::Command::new("sleep")
        .arg("1000")
        .spawn()
        .unwrap();
    let host = std::process::id();
    for target in [host, victim.id()] {
        // Signal 0 is checked like any signal and harms nothing if it gets through.
        let attack = format!("kill:{target}");
        let policy = SandboxPolicy::new([dir.path().to_path_buf()]);
        let out = run_attack(Some(&policy), &attack, dir.path());
        assert!(!escaped(&out), "signalled {target}: {}", describe(&out));
        // Unsandboxed hooks are contained too: the host's pids are not in their namespace.
        if copse_hooks::spawn::contained().is_ok() {
            let out = run_attack(None, &attack, dir.path());
            assert!(
                !escaped(&out),
                "unsandboxed, signalled {target}: {}",
                describe(&out)
            );
        }
    }
    // Control: the helper can signal a process of its own run.
    let out = run_attack(None, "kill-own", dir.path());
    assert!(escaped(&out), "control: {}", describe(&out));
    victim.kill().unwrap();
    victim.wait().unwrap();
}

#[test]
fn an_inherited_descriptor_does_not_reach_the_hook() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("outside.txt");
    std::fs::write(&target, b"").unwrap();
    let path = std::ffi::CString::new(target.as_os_str().as_encoded_bytes()).unwrap();
    // As a host would get from a parent that did not set close-on-exec.
    // SAFETY: a valid NUL-terminated path; the fd is owned right below.
    let raw = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_APPEND) };
    assert!(raw > 2, "open: {}", std::io::Error::last_os_error());
    // SAFETY: open just returned it; nothing else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let attack = format!("fd:{}", fd.as_raw_fd());
    for policy in [None, Some(SandboxPolicy::new([dir.path().join("ws")]))] {
        let out = run_attack(policy.as_ref(), &attack, dir.path());
        assert!(!escaped(&out), "wrote through fd: {}", describe(&out));
    }
    drop(fd);
    assert_eq!(std::fs::read(&target).unwrap(), b"");
}

/// Waits until `pid` is gone (or a zombie), at most 5 s.
fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim().to_owned()));
        match state {
            None => return true,
            Some(rest) if rest.starts_with('Z') => return true,
            Some(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    false
}

#[test]
fn setsid_daemons_end_with_their_run_and_are_recorded() {
    if let Err(reason) = copse_hooks::spawn::contained() {
        panic!("runs are not contained here: {reason}");
    }
    let dir = tempfile::tempdir().unwrap();
    let env: Vec<(OsString, OsString)> =
        vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())];
    // A daemon: setsid, double fork, ignores TERM, closes the pipes.
    let daemon = "setsid sh -c 'trap \"\" TERM; (read p _ </proc/self/stat; echo $p > d.tmp; \
                  mv d.tmp daemon.pid; exec sleep 1000) >/dev/null 2>&1 &' </dev/null \
                  >/dev/null 2>&1; until [ -s daemon.pid ]; do sleep 0.01; done";
    // The daemon reads its host pid from /proc/self/stat: leave it the host's /proc (a
    // setup that claims to mount the private one and does not; only the host can).
    struct HostProc;
    // SAFETY: does nothing at all.
    unsafe impl copse_hooks::spawn::ChildSetup for HostProc {
        fn apply_in_child(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn mounts_private_proc(&self) -> bool {
            true
        }
    }
    for (command, timeout) in [
        (daemon.to_owned(), Duration::from_secs(30)),
        (format!("{daemon}; sleep 1000"), Duration::from_millis(300)),
    ] {
        let _ = std::fs::remove_file(dir.path().join("daemon.pid"));
        let out = spawn::run(&SpawnRequest {
            command: &command,
            cwd: dir.path(),
            env: &env,
            stdin: b"",
            timeout,
            limits: Limits::default(),
            child_setup: Some(&HostProc),
        })
        .unwrap();
        let pid: i32 = std::fs::read_to_string(dir.path().join("daemon.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(gone(pid), "daemon {pid} outlived its run ({command})");
        if timeout < Duration::from_secs(1) {
            // Killed while the daemon still ran: found outside the group, recorded.
            assert!(out.leaked, "the escape was not recorded");
        }
    }
}

#[test]
#[ignore = "attack helper run by the other tests' hooks; does nothing when run directly"]
fn attack_helper() {
    let Ok(attack) = std::env::var(ATTACK_VAR) else {
        return;
    };
    println!("ATTACK-RAN");
    match attack_result(&attack) {
        Ok(()) => println!("ESCAPED"),
        Err(err) => println!("DENIED: {err}"),
    }
}

fn last_error<T>(what: &str) -> Result<T, String> {
    Err(format!("{what}: {}", std::io::Error::last_os_error()))
}

/// `socket(domain, kind, protocol)`, owned.
fn socket(domain: i32, kind: i32, protocol: i32) -> Result<OwnedFd, String> {
    // SAFETY: integer arguments only.
    let fd = unsafe { libc::socket(domain, kind | libc::SOCK_CLOEXEC, protocol) };
    if fd < 0 {
        return last_error("socket");
    }
    // SAFETY: just created, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn loopback(port: u16) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::sa_family_t::try_from(libc::AF_INET).unwrap(),
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
        },
        sin_zero: [0; 8],
    }
}

fn connect_inet(fd: &OwnedFd, port: u16) -> Result<(), String> {
    let addr = loopback(port);
    // SAFETY: `addr` is a valid sockaddr_in of the given length.
    let ret = unsafe {
        libc::connect(
            fd.as_raw_fd(),
            std::ptr::from_ref(&addr).cast(),
            u32::try_from(std::mem::size_of::<libc::sockaddr_in>()).unwrap(),
        )
    };
    if ret != 0 {
        return last_error("connect");
    }
    Ok(())
}

fn attack_result(attack: &str) -> Result<(), String> {
    let (kind, arg) = attack.split_once(':').unwrap_or((attack, ""));
    match kind {
        "udp" => {
            let socket = UdpSocket::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
            socket
                .send_to(b"x", ("127.0.0.1", arg.parse::<u16>().unwrap()))
                .map_err(|e| e.to_string())?;
            Ok(())
        }
        "tcp" => connect_inet(
            &socket(libc::AF_INET, libc::SOCK_STREAM, 0)?,
            arg.parse().unwrap(),
        ),
        "mptcp" => connect_inet(
            &socket(libc::AF_INET, libc::SOCK_STREAM, 262)?,
            arg.parse().unwrap(),
        ),
        "fastopen" => {
            let fd = socket(libc::AF_INET, libc::SOCK_STREAM, 0)?;
            let addr = loopback(arg.parse().unwrap());
            // SAFETY: valid buffer and address for the call.
            let n = unsafe {
                libc::sendto(
                    fd.as_raw_fd(),
                    b"x".as_ptr().cast(),
                    1,
                    libc::MSG_FASTOPEN,
                    std::ptr::from_ref(&addr).cast(),
                    u32::try_from(std::mem::size_of::<libc::sockaddr_in>()).unwrap(),
                )
            };
            if n < 0 {
                return last_error("sendto(MSG_FASTOPEN)");
            }
            Ok(())
        }
        "raw" => socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP).map(drop),
        "packet" => socket(libc::AF_PACKET, libc::SOCK_RAW, 0).map(drop),
        "netlink" => socket(libc::AF_NETLINK, libc::SOCK_RAW, 0).map(drop),
        "unix" => std::os::unix::net::UnixStream::connect(arg)
            .map(drop)
            .map_err(|e| e.to_string()),
        "abstract" => {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(arg.as_bytes())
                .map_err(|e| e.to_string())?;
            std::os::unix::net::UnixStream::connect_addr(&addr)
                .map(drop)
                .map_err(|e| e.to_string())
        }
        "socketpair" => std::os::unix::net::UnixStream::pair()
            .map(drop)
            .map_err(|e| e.to_string()),
        "kill" => {
            // SAFETY: signal 0: a permission and existence check only.
            if unsafe { libc::kill(arg.parse().unwrap(), 0) } != 0 {
                return last_error("kill");
            }
            Ok(())
        }
        "kill-own" => {
            let mut child = std::process::Command::new("sleep")
                .arg("100")
                .spawn()
                .map_err(|e| e.to_string())?;
            let pid = i32::try_from(child.id()).unwrap();
            // SAFETY: a plain kill of our own child.
            let ret = unsafe { libc::kill(pid, libc::SIGKILL) };
            let _ = child.wait();
            if ret != 0 {
                return last_error("kill");
            }
            Ok(())
        }
        "fd" => {
            let fd: i32 = arg.parse().unwrap();
            // SAFETY: writes one byte from a valid buffer to whatever `fd` is (if open).
            if unsafe { libc::write(fd, b"x".as_ptr().cast(), 1) } != 1 {
                return last_error("write");
            }
            Ok(())
        }
        other => Err(format!("unknown attack {other}")),
    }
}
