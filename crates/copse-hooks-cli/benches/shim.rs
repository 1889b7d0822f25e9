//! The shim's cost as an agent sees it: whole-process round trips, spawned the way an
//! agent spawns a hook command (`sh -c COMMAND`, the payload on stdin, stdout read).
//!
//! 1. No matching hook: `copse-hooks shim --agent claude` against `/bin/true` spawned
//!    the same way (the floor of any hook command).
//! 2. One trivial Copse hook (`true`, matching): the shim path (the shim, which runs
//!    the hook sandboxed and records it) against running that hook directly.
//!
//! The shim runs its engine in-process here (no daemon on this build), so these are
//! the in-process fallback's figures. Ratios are medians measured in the same run.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a panic is a failed run

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ROUNDS: usize = 150;

fn spawn_once(command: &str, payload: &[u8], env: &[(&str, &Path)]) -> Duration {
    let start = Instant::now();
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    // A hook that does not read stdin may close it first: that is not an error.
    let _ = child.stdin.take().unwrap().write_all(payload);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{command} failed");
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Alternates the two commands and returns their medians.
fn compare(a: &str, b: &str, payload: &[u8], env: &[(&str, &Path)]) -> (Duration, Duration) {
    for _ in 0..10 {
        spawn_once(a, payload, env);
        spawn_once(b, payload, env);
    }
    let (mut da, mut db) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        da.push(spawn_once(a, payload, env));
        db.push(spawn_once(b, payload, env));
    }
    (median(da), median(db))
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let bin = env!("CARGO_BIN_EXE_copse-hooks");
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let copse = home.join(".copse");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&copse).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        copse.join("settings.json"),
        r#"{"cursorHooksEnabled": true}"#,
    )
    .unwrap();
    let env: Vec<(&str, &Path)> = vec![("HOME", &home), ("COPSE_DIR", &copse)];
    let payload = serde_json::json!({
        "session_id": "bench-session", "cwd": ws, "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "git status"}
    })
    .to_string();
    let shim = format!("{bin} shim --agent claude");

    // 1. No matching hook (a hook for another tool is configured).
    std::fs::write(
        copse.join("hooks.json"),
        r#"{"version": 1, "hooks": {"toolGate": [{"command": "true", "matcher": "^read_file$"}]}}"#,
    )
    .unwrap();
    let (shim_none, floor) = compare(&shim, "/bin/true", payload.as_bytes(), &env);
    println!(
        "no matching hook:   shim {:>8.0} µs   /bin/true {:>8.0} µs   ratio {:.2}x (target with a warm daemon: <= 2.0x)",
        us(shim_none),
        us(floor),
        us(shim_none) / us(floor)
    );

    // 2. One trivial matching Copse hook.
    std::fs::write(
        copse.join("hooks.json"),
        r#"{"version": 1, "hooks": {"toolGate": [{"command": "true", "matcher": "^run_shell$"}]}}"#,
    )
    .unwrap();
    let (shim_one, direct) = compare(&shim, "true", payload.as_bytes(), &env);
    println!(
        "one trivial hook:   shim {:>8.0} µs   hook directly {:>8.0} µs   ratio {:.2}x (target with a warm daemon: <= 1.2x)",
        us(shim_one),
        us(direct),
        us(shim_one) / us(direct)
    );
    // 3. The same, with the audit store off: what opening the store costs per process.
    std::fs::write(
        copse.join("settings.json"),
        r#"{"cursorHooksEnabled": true, "spine": false}"#,
    )
    .unwrap();
    let (shim_quiet, direct) = compare(&shim, "true", payload.as_bytes(), &env);
    println!(
        "one hook, no audit: shim {:>8.0} µs   hook directly {:>8.0} µs   ratio {:.2}x",
        us(shim_quiet),
        us(direct),
        us(shim_quiet) / us(direct)
    );
    println!(
        "(in-process fallback: every call builds an engine, reads settings, configs and session state, opens the audit store)"
    );
}
