//! `copse-hooks ui`: the command starts the server, prints its address, and serves.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};

use crate::harness::Env;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn ui(env: &Env, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_copse-hooks"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", env.home())
        .env("COPSE_DIR", env.copse_dir())
        .env("NO_COLOR", "1")
        .current_dir(env.workspace())
        .arg("ui")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn get(port: u16, host: &str, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn ui_prints_its_address_and_serves_the_page() {
    let env = Env::new();
    env.project_cursor(r#"{"version": 1, "hooks": {"stop": [{"command": "true"}]}}"#);
    let mut child = Killed(ui(&env, &["--no-open"]).spawn().unwrap());
    let stdout = child.0.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().unwrap().unwrap();
    let second = lines.next().unwrap().unwrap();
    let url = first.strip_prefix("copse-hooks ui: ").unwrap();
    let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
    let (port, token) = rest.split_once("/?token=").unwrap();
    let port: u16 = port.parse().unwrap();
    assert_ne!(port, 0);
    assert_eq!(token.len(), 32);
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    insta::assert_snapshot!(format!(
        "{}\n{second}",
        first
            .replace(token, "[TOKEN]")
            .replace(&port.to_string(), "[PORT]")
    ));

    let host = format!("127.0.0.1:{port}");
    let page = get(port, &host, &format!("/api/overview?token={token}"));
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains(&env.workspace().display().to_string()));
    let refused = get(port, &host, "/api/overview");
    assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
    let rebound = get(
        port,
        &format!("attacker.example:{port}"),
        &format!("/?token={token}"),
    );
    assert!(rebound.starts_with("HTTP/1.1 421"), "{rebound}");
    let sources = get(port, &host, &format!("/api/sources?token={token}"));
    assert!(sources.contains("\"command\":\"true\""), "{sources}");

    // Ctrl-C stops the server even while a page holds its live-update stream open.
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET /api/events?token={token} HTTP/1.1\r\nHost: {host}\r\n\r\n"
    )
    .unwrap();
    let mut first = [0u8; 64];
    let n = stream.read(&mut first).unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200"));
    let pid = child.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let mut status = None;
    for _ in 0..300 {
        if let Some(s) = child.0.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(
        status.and_then(|s| s.code()),
        // The CLI's signal handling: the audit store is flushed and the command exits
        // with 128 + SIGINT, as every command does.
        Some(130),
        "ui did not stop on SIGINT"
    );
}

#[test]
fn ui_on_a_port_in_use_fails_clearly() {
    let env = Env::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = ui(&env, &["--no-open", "--port", &port]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).replace(&port, "[PORT]");
    insta::assert_snapshot!(err.split(": Address").next().unwrap_or(&err));
}
