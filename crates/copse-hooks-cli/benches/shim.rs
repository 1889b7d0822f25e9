//! The shim's cost as an agent sees it: whole-process round trips, spawned the way an
//! agent spawns a hook command (`sh -c COMMAND`, the payload on stdin, stdout read).
//!
//! 1. No matching hook: `copse-hooks shim --agent claude` against `/bin/true` spawned
//!    the same way (the floor of any hook command). Issue 16's target: <= 2.0x. Then
//!    against `sh -c true` (the shell's builtin, no program exec'd), the baseline issue
//!    23 states its target (<= 1.5x) against, with `/bin/true` on the same scale.
//! 2. One trivial Copse hook (`true`, matching): the shim path (the shim, which runs
//!    the hook sandboxed and records it) against running that hook directly,
//!    `sh -c true`. Issue 16's target: <= 1.2x. `true` is a shell builtin there, so
//!    the baseline execs nothing: a floor no real hook reaches.
//! 3. A realistic trivial hook: an executable script (`#!/bin/sh`, `exit 0`) that the
//!    agent runs as `sh -c /path/to/hook` (exec'd, not a builtin), against the shim with
//!    the same script as a Copse hook.
//! 4. A persistent hook (`"persistent": true`, the Python guard of
//!    `examples/persistent/python`) behind the warm daemon, against the agent running
//!    the same program per call (`python3 guard_shell.py`, which answers one payload and
//!    exits). Skipped, with a line saying so, where `python3` is missing.
//!
//! Each of 1 and 2 is measured with a warm daemon (the default path: the shim forwards
//! the call over `$COPSE_DIR/daemon.sock`) and with the in-process fallback
//! (`COPSE_SHIM_DAEMON=0`). To see where the time goes, the one-hook case is repeated
//! with the audit store off (`"spine": false`) and on a second daemon with the Landlock
//! sandbox off (`COPSE_HOOKS_SANDBOX_FORCE_ABI=none`, a test seam), and the daemon's own
//! service time per call is measured by a client in this process. Ratios are medians
//! measured in the same run, each case alternated with its baseline.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a panic is a failed run

use std::ffi::OsStr;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ROUNDS: usize = 150;

fn spawn_once(command: &str, payload: &[u8], env: &[(&str, &OsStr)]) -> Duration {
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
fn compare(a: &str, b: &str, payload: &[u8], env: &[(&str, &OsStr)]) -> (Duration, Duration) {
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

/// The daemon's own service time for one `shim/handle` (a client in this process: no
/// shim process, no agent spawn), median of `ROUNDS`.
fn service(copse: &Path, env: &[(&str, &OsStr)], payload: &[u8]) -> Duration {
    use std::io::BufRead as _;
    let vars: serde_json::Map<String, serde_json::Value> = env
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.to_string_lossy().into_owned().into()))
        .collect();
    let mut line = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "shim/handle",
        "params": {"agent": "claude", "payload": String::from_utf8_lossy(payload), "env": vars},
    }))
    .unwrap();
    line.push(b'\n');
    let socket = copse.join("daemon.sock");
    let once = || {
        let start = Instant::now();
        let mut s = std::os::unix::net::UnixStream::connect(&socket).unwrap();
        s.write_all(&line).unwrap();
        let mut reply = String::new();
        std::io::BufReader::new(&s).read_line(&mut reply).unwrap();
        assert!(reply.contains("\"result\""), "{reply}");
        start.elapsed()
    };
    for _ in 0..10 {
        once();
    }
    median((0..ROUNDS).map(|_| once()).collect())
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

fn report(what: &str, (a, b): (Duration, Duration), base: &str, target: &str) {
    println!(
        "{what:<34} shim {:>7.0} µs   {base} {:>7.0} µs   ratio {:>5.2}x{target}",
        us(a),
        us(b),
        us(a) / us(b)
    );
}

fn main() {
    let bin = env!("CARGO_BIN_EXE_copse-hooks");
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let copse = home.join(".copse");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&copse).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let settings = copse.join("settings.json");
    let hooks = copse.join("hooks.json");
    write(&settings, r#"{"cursorHooksEnabled": true}"#);
    let daemon_env: Vec<(&str, &OsStr)> =
        vec![("HOME", home.as_os_str()), ("COPSE_DIR", copse.as_os_str())];
    let mut in_process_env = daemon_env.clone();
    in_process_env.push(("COPSE_SHIM_DAEMON", OsStr::new("0")));
    let payload = serde_json::json!({
        "session_id": "bench-session", "cwd": ws, "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "git status"}
    })
    .to_string();
    let payload = payload.as_bytes();
    let shim = format!("{bin} shim --agent claude");
    let no_match =
        r#"{"version": 1, "hooks": {"toolGate": [{"command": "true", "matcher": "^read_file$"}]}}"#;
    let one_hook =
        r#"{"version": 1, "hooks": {"toolGate": [{"command": "true", "matcher": "^run_shell$"}]}}"#;
    // The hook as the agent would run it: its command `true` given to `sh -c`, as every
    // command here is spawned.
    let direct = "true";

    // The warm daemon (the first shim call would start it; started here so the
    // measurement never includes a start).
    let status = Command::new(bin)
        .args(["daemon", "start"])
        .envs(daemon_env.iter().copied())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "daemon start failed");
    // A second daemon without the Landlock sandbox, on its own COPSE_DIR.
    let copse2 = home.join(".copse-nosandbox");
    std::fs::create_dir_all(&copse2).unwrap();
    write(
        &copse2.join("settings.json"),
        r#"{"cursorHooksEnabled": true}"#,
    );
    write(&copse2.join("hooks.json"), one_hook);
    let nosandbox_env: Vec<(&str, &OsStr)> = vec![
        ("HOME", home.as_os_str()),
        ("COPSE_DIR", copse2.as_os_str()),
        ("COPSE_HOOKS_SANDBOX_FORCE_ABI", OsStr::new("none")),
    ];
    let status = Command::new(bin)
        .args(["daemon", "start"])
        .envs(nosandbox_env.iter().copied())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "daemon start failed");

    println!("whole-process round trips, medians of {ROUNDS} alternated runs:");
    // 1. No matching hook (a hook for another tool is configured).
    write(&hooks, no_match);
    report(
        "daemon, no matching hook:",
        compare(&shim, "/bin/true", payload, &daemon_env),
        "/bin/true    ",
        "   (target <= 2.0x)",
    );
    report(
        "in-process, no matching hook:",
        compare(&shim, "/bin/true", payload, &in_process_env),
        "/bin/true    ",
        "",
    );
    // Issue 23 states its target against `sh -c true`, where `true` is the shell's
    // builtin: no second program is exec'd at all. The row after it shows what any
    // exec'd program costs on that scale (on the CI machine, a virtual one, glibc's
    // start-up alone probes the CPU with `cpuid`, an exit to the hypervisor each time).
    report(
        "daemon, no matching hook:",
        compare(&shim, "true", payload, &daemon_env),
        "sh -c true   ",
        "   (issue 23: <= 1.5x)",
    );
    let (bin_true, builtin) = compare("/bin/true", "true", payload, &daemon_env);
    println!(
        "{:<34} /bin/true {:>5.0} µs   sh -c true {:>7.0} µs   ratio {:>5.2}x   (the floor of any exec'd hook on that scale)",
        "an exec'd program, for scale:",
        us(bin_true),
        us(builtin),
        us(bin_true) / us(builtin)
    );
    // 2. One trivial matching Copse hook.
    write(&hooks, one_hook);
    report(
        "daemon, one trivial hook:",
        compare(&shim, direct, payload, &daemon_env),
        "hook directly",
        "   (target <= 1.2x)",
    );
    report(
        "in-process, one trivial hook:",
        compare(&shim, direct, payload, &in_process_env),
        "hook directly",
        "",
    );
    // 3. Where the time goes: the audit store off, then the sandbox off.
    report(
        "daemon, one hook, no sandbox:",
        compare(&shim, direct, payload, &nosandbox_env),
        "hook directly",
        "",
    );
    write(&settings, r#"{"cursorHooksEnabled": true, "spine": false}"#);
    report(
        "daemon, one hook, no audit store:",
        compare(&shim, direct, payload, &daemon_env),
        "hook directly",
        "",
    );
    report(
        "in-process, one hook, no audit:",
        compare(&shim, direct, payload, &in_process_env),
        "hook directly",
        "",
    );
    write(&settings, r#"{"cursorHooksEnabled": true}"#);
    // 3. A realistic trivial hook: a script the agent would exec.
    let script = dir.path().join("hook.sh");
    write(&script, "#!/bin/sh\nexit 0\n");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let script = script.to_str().unwrap();
    write(
        &hooks,
        &serde_json::json!({"version": 1, "hooks": {"toolGate": [
            {"command": script, "matcher": "^run_shell$"}
        ]}})
        .to_string(),
    );
    report(
        "daemon, one script hook:",
        compare(&shim, script, payload, &daemon_env),
        "script      ",
        "",
    );
    report(
        "in-process, one script hook:",
        compare(&shim, script, payload, &in_process_env),
        "script      ",
        "",
    );
    // 4. A persistent hook through the warm daemon against the same program per call.
    let guard = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/persistent/python/guard_shell.py")
        .canonicalize()
        .unwrap();
    let guard = guard.to_str().unwrap();
    let has_python = Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if has_python {
        write(
            &hooks,
            &serde_json::json!({"version": 1, "hooks": {"toolGate": [
                {"command": format!("python3 {guard} --persistent"), "persistent": true,
                 "matcher": "^run_shell$", "idleTimeout": 0}
            ]}})
            .to_string(),
        );
        report(
            "daemon, persistent python hook:",
            compare(&shim, &format!("python3 {guard}"), payload, &daemon_env),
            "per call    ",
            "",
        );
    } else {
        println!("daemon, persistent python hook:    skipped (no python3)");
    }
    // 4. The daemon's own share: its service time per call, by case.
    println!("daemon service time per call (a client in this process), medians:");
    write(&settings, r#"{"cursorHooksEnabled": true}"#);
    write(&hooks, no_match);
    let none = service(&copse, &daemon_env, payload);
    write(&hooks, one_hook);
    let one = service(&copse, &daemon_env, payload);
    let nosandbox = service(&copse2, &nosandbox_env, payload);
    write(&settings, r#"{"cursorHooksEnabled": true, "spine": false}"#);
    let noaudit = service(&copse, &daemon_env, payload);
    println!(
        "  no matching hook {:>6.0} µs   one hook {:>6.0} µs   one hook without the audit commit {:>6.0} µs   one hook without Landlock {:>6.0} µs",
        us(none),
        us(one),
        us(noaudit),
        us(nosandbox)
    );
    for env in [&daemon_env, &nosandbox_env] {
        let _ = Command::new(bin)
            .args(["daemon", "stop"])
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .status();
    }
}
