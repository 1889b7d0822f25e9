//! `doctor`'s "OTLP export" section with the `otel` settings: a bad endpoint said,
//! escaped; and the daemon's export, every agent call it served, asked of the daemon.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::Env;

/// The settings file: hooks on, the temp dir writable, and `otel`.
fn settings(env: &Env, otel: Value) {
    env.write(
        "copse/settings.json",
        &json!({"cursorHooksEnabled": true, "sandboxWritablePaths": [env.root()], "otel": otel})
            .to_string(),
    );
}

/// `doctor`'s "OTLP export" section, up to the next heading.
fn otlp_section(stdout: &str) -> String {
    let mut lines = stdout.lines().skip_while(|l| *l != "OTLP export");
    let mut out: Vec<&str> = lines.next().into_iter().collect();
    out.extend(lines.take_while(|l| l.starts_with(' ')));
    out.join("\n")
}

#[test]
fn a_settings_endpoint_that_is_not_a_url_is_a_warning_in_doctor() {
    let env = Env::new();
    settings(
        &env,
        json!({"endpoint": "collector:4318 \u{1b}[31mred", "timeoutMs": "soon", "colour": 1}),
    );
    let human = env.cmd().args(["doctor"]).run().success().stdout();
    assert!(
        !human.contains('\u{1b}'),
        "escapes reach the terminal: {human}"
    );
    let section = otlp_section(&human);
    insta::assert_snapshot!("doctor_otlp_settings_warning", section);
    let json = env.cmd().args(["--json", "doctor"]).run().success().json();
    let otel = &json["otel"];
    assert_eq!(otel["traces_url"], Value::Null, "{otel}");
    let warnings = otel["warnings"].to_string();
    assert!(warnings.contains("settings otel.endpoint"), "{warnings}");
    // Control: the same settings with a URL turn export on.
    settings(&env, json!({"endpoint": "http://127.0.0.1:9"}));
    let json = env.cmd().args(["--json", "doctor"]).run().success().json();
    assert_eq!(json["otel"]["traces_url"], "http://127.0.0.1:9/v1/traces");
    assert_eq!(json["otel"]["warnings"], Value::Null);
}

/// A loopback collector answering 200 to every request; each body is sent on.
fn collector() -> (String, mpsc::Receiver<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut length = 0usize;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line.trim().is_empty() {
                            break;
                        }
                        if let Some((k, v)) = line.split_once(':')
                            && k.eq_ignore_ascii_case("content-length")
                        {
                            length = v.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    let mut w = &stream;
                    let _ = w.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                    let _ = tx.send(body);
                }
            });
        }
    });
    (url, rx)
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// Stops the test's daemon (if one runs) when the test ends, pass or fail.
struct StopDaemon<'a>(&'a Env);

impl Drop for StopDaemon<'_> {
    fn drop(&mut self) {
        let _ = self.0.cmd().args(["daemon", "stop"]).run();
    }
}

#[test]
fn the_daemon_exports_the_calls_it_serves_and_doctor_shows_its_counters() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    let (url, bodies) = collector();
    settings(&env, json!({"tracesEndpoint": url}));
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [{"command":
            "cat >/dev/null; printf '%s' '{\"decision\":\"deny\",\"agentMessage\":\"daemon-export-deny\"}'"}]}})
        .to_string(),
    );
    let payload = json!({
        "session_id": "5f0c9a2e-0000-4000-8000-0000000000aa",
        "cwd": "/nonexistent",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git push --force"},
    })
    .to_string();
    let out = env
        .cmd()
        .args(["shim", "--agent", "claude"])
        .run_with_stdin(payload.as_bytes())
        .out;
    // Control: the hook ran (in the daemon) and denied.
    let answer = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(answer.contains("daemon-export-deny"), "{answer}");
    // The daemon records that it served the call after replying (a hang guard).
    let until = Instant::now() + Duration::from_secs(30);
    let served = loop {
        let served = std::fs::read_to_string(env.copse_dir().join("shim/served/claude.json"))
            .unwrap_or_default();
        if served.contains("\"daemon\"") || Instant::now() > until {
            break served;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        served.contains("\"daemon\""),
        "served by the daemon: {served}"
    );
    // The daemon's exporter sends the gate and its run; the collector sees the agent.
    let body = bodies.recv_timeout(Duration::from_secs(30)).unwrap();
    for text in ["claude", "PreToolUse", "daemon-export-deny"] {
        assert!(contains(&body, text), "{text:?} is not in the export");
    }
    // doctor asks the daemon for its counters (a hang guard, not a timing).
    let until = Instant::now() + Duration::from_secs(30);
    let daemon = loop {
        let json = env.cmd().args(["--json", "doctor"]).run().success().json();
        let daemon = json["otel"]["daemon"].clone();
        if daemon["exported"] == 2 || Instant::now() > until {
            break daemon;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(daemon["exported"], 2, "{daemon}");
    assert_eq!(daemon["dropped"], 0, "{daemon}");
    assert_eq!(daemon["traces_url"], url.as_str(), "{daemon}");
    let human = env.cmd().args(["doctor"]).run().success().stdout();
    let section = otlp_section(&human);
    assert!(
        section.contains(&format!(
            "the daemon: 2 exported, 0 dropped, 0 failed, 0 pending (to {url})"
        )),
        "{section}"
    );
}
