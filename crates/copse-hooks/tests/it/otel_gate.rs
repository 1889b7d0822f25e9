//! Every gate reaches the configured OTLP endpoint from the session's record stage:
//! one request captured on a loopback listener, read by its protobuf strings.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use std::ffi::OsString;

use copse_hooks::agent::{Agent, shim};
use copse_hooks::{Decision, ToolCall};
use serde_json::json;

use crate::fx::Fx;

/// Accepts one HTTP request on a loopback port, answers 200 and hands back its body.
fn one_request() -> (String, std::sync::mpsc::Receiver<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
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
        reader.read_exact(&mut body).unwrap();
        let mut stream = stream;
        stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .unwrap();
        tx.send(body).unwrap();
    });
    (url, rx)
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
fn a_gate_is_exported_with_its_hook_run() {
    let (url, body) = one_request();
    let fx = Fx::builder()
        .env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", url.as_str())])
        .build();
    fx.cursor_user(json!({"beforeShellExecution": [{
        "command": "echo '{\"permission\":\"deny\",\"agent_message\":\"exported-deny\"}'"
    }]}));
    let engine = fx.engine();
    assert!(engine.otel().is_some(), "the endpoint turns export on");
    let session = engine.session(copse_hooks::SessionIdentity::new("conv-otel"));
    let verdict = session.gate_tool(ToolCall::new(
        "run_shell",
        json!({"command": "git push --force"}),
    ));
    // Control: the hook ran and decided.
    assert_eq!(verdict.effective_decision(), Decision::Deny);
    let report = engine.otel().unwrap().shutdown(Duration::from_secs(10));
    assert!(report.completed, "{report:?}");
    let body = body.recv_timeout(Duration::from_secs(10)).unwrap();
    for text in [
        "run_shell",
        "exported-deny",
        "conv-otel",
        "git push --force",
    ] {
        assert!(contains(&body, text), "{text:?} is not in the export");
    }
}

#[test]
fn the_shim_exports_the_agent_and_its_event_name_from_the_settings() {
    let (url, body) = one_request();
    let fx = Fx::new();
    fx.copse_user(json!({"toolGate": [{"command": "cat >/dev/null; echo '{\"decision\":\"deny\",\"agentMessage\":\"shim-export-deny\"}'"}]}));
    // The endpoint comes from the settings alone: no OTEL_* variable in the call.
    fx.write_json(
        "copse/settings.json",
        &json!({"otel": {"tracesEndpoint": format!("{url}/v1/traces")}}),
    );
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| !k.to_string_lossy().starts_with("OTEL_"))
        .collect();
    vars.push(("HOME".into(), fx.home().into()));
    vars.push(("COPSE_DIR".into(), fx.copse_dir().into()));
    vars.push(("CLAUDE_PROJECT_DIR".into(), fx.ws().into()));
    let payload = serde_json::to_vec(&json!({
        "session_id": "claude-session-1",
        "transcript_path": "/dev/null",
        "cwd": fx.ws(),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git push --force"},
        "tool_use_id": "toolu_shim_1",
    }))
    .unwrap();
    let agent = Agent::Claude;
    let inbound = copse_hooks::agent::read(agent, &payload).unwrap();
    let config = shim::engine_config(agent, &inbound, &vars).unwrap();
    assert_eq!(config.agent.as_deref(), Some("claude"));
    let reply = shim::handle(agent, &inbound, &payload, config).unwrap();
    // Control: the hook ran and denied.
    assert_eq!(reply.verdict.effective_decision(), Decision::Deny);
    // The call's engine is gone: its exporter sent what it held when dropped.
    let body = body.recv_timeout(Duration::from_secs(30)).unwrap();
    for text in [
        "gen_ai.agent.name",
        "claude",
        "copse.vendor_event",
        "PreToolUse",
        "shim-export-deny",
        "git push --force",
    ] {
        assert!(contains(&body, text), "{text:?} is not in the export");
    }
}
