//! The host killed mid-run: `gate` is sent KILL, TERM, INT or HUP while its hooks (one
//! that forks, one that starts a `setsid` daemon, one that ignores TERM) are running.
//! Nothing they started survives, the CLI exits with 128 + the signal (for the three it
//! handles), and no private TMPDIR is left behind (one left by a SIGKILLed host is
//! reclaimed by the next start).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::Env;

/// Hook bodies; each writes what it leaves running into `<name>.pid` (as
/// `crate::hook_pid` needs it: a hook's `/proc` is its own, so its pids are not the host's).
fn hooks(env: &Env) -> serde_json::Value {
    let root = env.root();
    let pid_of = |name: &str| {
        format!(
            "echo {id} > {dir}/{name}.tmp; mv {dir}/{name}.tmp {dir}/{name}.pid",
            id = crate::hook_pid::SELF_ID_SH,
            dir = root.display()
        )
    };
    let forker = env.script(
        "home/.cursor/hooks/forker.sh",
        &format!(
            "cat >/dev/null\n(sh -c '{}; exec sleep 1000') &\nsleep 1000",
            pid_of("forked")
        ),
    );
    let daemon = env.script(
        "home/.cursor/hooks/daemon.sh",
        &format!(
            "cat >/dev/null\nsetsid sh -c 'trap \"\" TERM; {}; exec sleep 1000' </dev/null >/dev/null 2>&1 &\nsleep 1000",
            pid_of("daemon")
        ),
    );
    let stubborn = env.script(
        "home/.cursor/hooks/stubborn.sh",
        &format!(
            "cat >/dev/null\ntrap '' TERM INT HUP\n{}\nwhile :; do sleep 1; done",
            pid_of("stubborn")
        ),
    );
    let entries: Vec<_> = [forker, daemon, stubborn]
        .iter()
        .map(|p| json!({"command": p.display().to_string(), "timeout": 600}))
        .collect();
    json!({"version": 1, "hooks": {"beforeShellExecution": entries}})
}

fn start_gate(env: &Env, tmp: &Path) -> Child {
    let mut cmd = env.cmd().cmd;
    cmd.env("TMPDIR", tmp)
        .args([
            "--enable",
            "--json",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd.spawn().unwrap()
}

/// The host pid of the live process recorded in `path`.
fn read_pid(path: &Path) -> Option<i32> {
    crate::hook_pid::host_pid(&std::fs::read_to_string(path).ok()?)
}

/// Alive and not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| !rest.trim().starts_with('Z'))
        })
        .unwrap_or(false)
}

fn leftovers(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("copse-hook-"))
        .collect()
}

fn kill_host_mid_run(signal: i32) {
    let env = Env::new();
    env.user_cursor(&hooks(&env).to_string());
    let tmp = env.root().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut host = start_gate(&env, &tmp);
    let names = ["forked", "daemon", "stubborn"];
    let deadline = Instant::now() + Duration::from_secs(30);
    let pids: Vec<i32> = loop {
        let pids: Vec<i32> = names
            .iter()
            .filter_map(|n| read_pid(&env.root().join(format!("{n}.pid"))))
            .collect();
        if pids.len() == names.len() {
            break pids;
        }
        assert!(Instant::now() < deadline, "the hooks never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        !leftovers(&tmp).is_empty(),
        "no private TMPDIR while running"
    );
    assert!(
        pids.iter().all(|&p| alive(p)),
        "a hook process was not running"
    );
    let host_pid = i32::try_from(host.id()).unwrap();
    // SAFETY: a plain kill of the child this test started.
    unsafe { libc::kill(host_pid, signal) };
    let status = host.wait().unwrap();
    if signal == libc::SIGKILL {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    } else {
        assert_eq!(status.code(), Some(128 + signal), "{status:?}");
    }
    // The issue asks for "no survivor within 1 s"; the bound is generous for a loaded
    // machine, a survivor would be there forever.
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|&p| alive(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let survivors: Vec<i32> = pids.iter().copied().filter(|&p| alive(p)).collect();
    for &p in &survivors {
        // SAFETY: clean up what this test's hooks left.
        unsafe { libc::kill(p, libc::SIGKILL) };
    }
    assert!(
        survivors.is_empty(),
        "survivors after signal {signal}: {survivors:?}"
    );
    if signal == libc::SIGKILL {
        // Nobody could remove it; the next host that runs a hook reclaims it.
        assert!(!leftovers(&tmp).is_empty());
        let quick = env.script("home/.cursor/hooks/quick.sh", "cat >/dev/null");
        env.user_cursor(
            &json!({"version": 1, "hooks": {"beforeShellExecution": [
                {"command": quick.display().to_string()}
            ]}})
            .to_string(),
        );
        env.cmd()
            .env("TMPDIR", &tmp)
            .gate("run_shell", r#"{"command":"ls"}"#)
            .success();
    }
    assert_eq!(leftovers(&tmp), Vec::<String>::new(), "signal {signal}");
}

#[test]
fn sigkill_of_the_host_leaves_no_survivor() {
    kill_host_mid_run(libc::SIGKILL);
}

#[test]
fn sigterm_of_the_host_leaves_no_survivor() {
    kill_host_mid_run(libc::SIGTERM);
}

#[test]
fn sigint_of_the_host_leaves_no_survivor() {
    kill_host_mid_run(libc::SIGINT);
}

#[test]
fn sighup_of_the_host_leaves_no_survivor() {
    kill_host_mid_run(libc::SIGHUP);
}

/// 300 matching hooks under `ulimit -n 256`: the blocking hooks of an event run at most
/// 32 (here fewer, to fit the limit) at once, so none fails for want of descriptors.
#[test]
fn three_hundred_hooks_under_a_low_descriptor_limit() {
    let env = Env::new();
    let hook = env.script(
        "home/.cursor/hooks/allow.sh",
        r#"cat >/dev/null; echo '{"permission":"allow"}'"#,
    );
    let entries: Vec<_> = (0..300)
        .map(|_| json!({"command": hook.display().to_string()}))
        .collect();
    env.user_cursor(&json!({"version": 1, "hooks": {"beforeShellExecution": entries}}).to_string());
    let cmd = env.cmd().cmd;
    let vars: Vec<_> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
        .collect();
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(r#"ulimit -n 256 && exec "$0" --enable --json gate run_shell --input '{"command":"ls"}'"#)
        .arg(cmd.get_program())
        .env_clear()
        .envs(vars)
        .current_dir(env.workspace())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 300);
    let failed: Vec<_> = runs.iter().filter(|r| r["outcome"] != "allow").collect();
    assert!(
        failed.is_empty(),
        "{} runs failed, first: {}",
        failed.len(),
        failed[0]
    );
    assert_eq!(v["decision"], "allow");
}

/// Runs completed before TERM, INT or HUP are in the audit store afterwards: the
/// handler flushes it before exiting. The store's flush interval is stretched to a
/// minute (test seam) so that, without that flush, the records would still be queued.
fn completed_runs_are_recorded_after(signal: i32) {
    let env = Env::new();
    let quick = env.script("home/.cursor/hooks/quick.sh", "cat >/dev/null");
    let started = env.root().join("hang.started");
    let hang = env.script(
        "home/.cursor/hooks/hang.sh",
        &format!("cat >/dev/null\ntouch '{}'\nsleep 1000", started.display()),
    );
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": quick.display().to_string(), "matcher": "^ls"},
            {"command": hang.display().to_string(), "matcher": "^hang", "timeout": 600}
        ]}})
        .to_string(),
    );
    let lines = [
        r#"{"event":"toolGate","tool":"run_shell","input":{"command":"ls"}}"#,
        r#"{"event":"toolGate","tool":"run_shell","input":{"command":"ls -l"}}"#,
        r#"{"event":"toolGate","tool":"run_shell","input":{"command":"hang"}}"#,
    ];
    let file = env.write("session.jsonl", &format!("{}\n", lines.join("\n")));
    let mut cmd = env.cmd().cmd;
    cmd.env("COPSE_HOOKS_SPINE_FLUSH_MS", "60000")
        .args(["--enable", "replay"])
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut host = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !started.exists() {
        assert!(Instant::now() < deadline, "the hanging hook never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let host_pid = i32::try_from(host.id()).unwrap();
    // SAFETY: a plain kill of the child this test started.
    unsafe { libc::kill(host_pid, signal) };
    let status = host.wait().unwrap();
    assert_eq!(status.code(), Some(128 + signal), "{status:?}");
    let runs = env.cmd().args(["--json", "log"]).run().success().json();
    let quick = quick.display().to_string();
    let recorded = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["command"] == quick.as_str())
        .count();
    // The killed hanging run may be recorded too (it ends during the flush); the
    // completed ones must be.
    assert_eq!(
        recorded, 2,
        "signal {signal}: the completed runs were not recorded: {runs}"
    );
}

#[test]
fn runs_completed_before_sigterm_are_recorded() {
    completed_runs_are_recorded_after(libc::SIGTERM);
}

#[test]
fn runs_completed_before_sigint_are_recorded() {
    completed_runs_are_recorded_after(libc::SIGINT);
}

#[test]
fn runs_completed_before_sighup_are_recorded() {
    completed_runs_are_recorded_after(libc::SIGHUP);
}
