//! The daemon's peer check against real processes: one of the same user is served;
//! one with `NoNewPrivs`, one in another pid namespace and one started inside a hook
//! (`COPSE_HOOK_DEPTH`) are refused, each with its reason.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::os::unix::net::UnixListener;
use std::process::{Child, Command, Stdio};

use copse_hooks_server::peer;

/// Connects to `$1` and waits until the other end closes (so it is alive while the
/// listener looks at it).
const CLIENT: &str = r#"use IO::Socket::UNIX; my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0]) or die "connect: $!"; my $l = <$s>;"#;

fn spawn(wrapper: &[&str], socket: &std::path::Path, env: &[(&str, &str)]) -> Child {
    let mut argv: Vec<&str> = wrapper.to_vec();
    argv.extend(["perl", "-e", CLIENT]);
    let mut cmd = Command::new(argv[0]);
    cmd.args(&argv[1..])
        .arg(socket)
        .stdin(Stdio::null())
        .env_remove("COPSE_HOOK_DEPTH");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

/// What the peer check says about a client started through `wrapper`.
fn verdict(wrapper: &[&str], env: &[(&str, &str)]) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("s.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    let mut child = spawn(wrapper, &socket, env);
    let (stream, _) = listener.accept().unwrap();
    let verdict = peer::check(&stream);
    drop(stream);
    let status = child.wait().unwrap();
    assert!(status.success(), "the {wrapper:?} client failed");
    verdict
}

#[test]
fn a_plain_process_of_the_same_user_is_served() {
    assert_eq!(verdict(&[], &[]), None);
}

#[test]
fn a_process_with_no_new_privs_is_refused() {
    let why = verdict(&["setpriv", "--no-new-privs"], &[]).expect("refused");
    assert!(why.contains("NoNewPrivs"), "{why}");
}

#[test]
fn a_process_in_another_pid_namespace_is_refused() {
    let why = verdict(
        &[
            "unshare",
            "--user",
            "--map-root-user",
            "--pid",
            "--fork",
            "--mount-proc",
        ],
        &[],
    )
    .expect("refused");
    assert!(why.contains("pid namespace"), "{why}");
}

#[test]
fn a_process_started_inside_a_hook_is_refused() {
    let why = verdict(&[], &[("COPSE_HOOK_DEPTH", "1")]).expect("refused");
    assert!(why.contains("COPSE_HOOK_DEPTH"), "{why}");
}
