//! `copse-hooks ui --demo`: the page over the example session recorded into a
//! temporary store, never the user's own store or settings.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::harness::Env;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One GET with the session cookie; the answer's status line and body.
fn get(port: u16, path: &str, cookie: &str) -> (String, String) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head.lines().next().unwrap_or_default().to_string();
    // The body may be chunked: the JSON is between the first `{` and the last `}`.
    let body = match (body.find('{'), body.rfind('}')) {
        (Some(a), Some(b)) => body[a..=b].to_string(),
        _ => body.to_string(),
    };
    (status, body)
}

fn json(port: u16, path: &str, cookie: &str) -> Value {
    let (status, body) = get(port, path, cookie);
    assert!(status.contains(" 200 "), "{path}: {status} {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"))
}

#[test]
fn ui_demo_serves_the_example_store_and_leaves_the_users_alone() {
    let env = Env::new();
    let settings_before = std::fs::read(env.copse_dir().join("settings.json")).ok();
    let mut child = Killed(
        Command::new(env!("CARGO_BIN_EXE_copse-hooks"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", env.home())
            .env("COPSE_DIR", env.copse_dir())
            .env("NO_COLOR", "1")
            .current_dir(env.workspace())
            .args(["ui", "--demo", "--no-open"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let mut store = None;
    let mut transcript = String::new();
    let url = loop {
        let line = lines.next().expect("ui --demo ended early").unwrap();
        if let Some(rest) = line.strip_prefix(
            "copse-hooks ui --demo: recording the example session into a temporary store (",
        ) {
            store = Some(PathBuf::from(rest.split_once(')').unwrap().0));
        }
        if let Some(url) = line.strip_prefix("copse-hooks ui: ") {
            break url.to_string();
        }
        transcript.push_str(&line);
        transcript.push('\n');
    };
    // The demo's verdicts were shown while it recorded them.
    assert!(
        transcript.contains("deny   run_shell rm -rf /"),
        "{transcript}"
    );
    let store = store.expect("the demo store is named");
    assert!(store.join("spine.db").is_file(), "{}", store.display());
    let rest = url.strip_prefix("http://127.0.0.1:").unwrap();
    let (port, code) = rest.split_once("/?code=").unwrap();
    let port: u16 = port.parse().unwrap();
    // Sign in as a browser does: the code answers with the session cookie.
    let mut sock = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        sock,
        "GET /?code={code} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    sock.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 303"), "{answer}");
    let cookie = answer
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .unwrap_or_else(|| panic!("no cookie: {answer}"))
        .split(';')
        .next()
        .unwrap()
        .to_string();

    // Every page has something: runs with their tool calls, the demo session, and a
    // trusted example workspace.
    let runs = json(port, "/api/runs?limit=100", &cookie);
    let runs = runs["runs"].as_array().unwrap();
    assert!(runs.len() > 10, "{runs:?}");
    assert!(
        runs.iter()
            .any(|r| r["tool_call"]["input"].as_str() == Some("rm -rf /")),
        "{runs:?}"
    );
    let sessions = json(port, "/api/sessions", &cookie);
    assert!(
        sessions["sessions"][0]["runs"].as_u64().unwrap() > 10,
        "{sessions}"
    );
    let sources = json(port, "/api/sources", &cookie);
    assert!(sources["hooks"].as_array().unwrap().len() > 5);
    let trust = json(port, "/api/trust/preview", &cookie);
    assert_eq!(trust["status"], "trusted", "{trust}");

    // The user's own store and settings were never touched.
    assert!(!env.copse_dir().join("spine.db").exists());
    assert_eq!(
        std::fs::read(env.copse_dir().join("settings.json")).ok(),
        settings_before
    );

    // Ctrl-C stops it and removes the demo's directory.
    let pid = child.0.id().to_string();
    let killed = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(killed.success());
    let status = child.0.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status}");
    assert!(!store.exists(), "the demo store outlived the server");
}
