//! Binary identity and upgrades: `install` from a new path points the agent at it,
//! `doctor` names a shim entry whose binary is gone or another one, a daemon whose
//! executable was replaced (or that another build started) is replaced by the next
//! shim call, and `uninstall` says what it really did.
//!
//! Every binary here is a copy of the test build at a path of the test's own, run
//! exactly as an agent would run the installed command.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::harness::Env;

/// Copies the test build to `ROOT/rel` (a new file: a new inode), executable.
fn copy_build(env: &Env, rel: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dest = env.root().join(rel);
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    let tmp = dest.with_extension("new");
    std::fs::copy(env!("CARGO_BIN_EXE_copse-hooks"), &tmp).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Renamed into place, as an upgrade does: the path names a new file.
    std::fs::rename(&tmp, &dest).unwrap();
    dest
}

/// `bin ARGS` with the test's home and copse dir, `stdin` on its stdin.
fn run_bin(env: &Env, bin: &Path, args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write as _;
    // A copy just written may still be open for writing in a child another test
    // thread forked meanwhile (ETXTBSY): that passes once the child execs.
    let mut tries = 0;
    let mut child = loop {
        let spawned = Command::new(bin)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", env.home())
            .env("COPSE_DIR", env.copse_dir())
            .env("NO_COLOR", "1")
            .current_dir(env.workspace())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        match spawned {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => break other.unwrap(),
        }
    };
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn redact(env: &Env, out: &Output) -> String {
    crate::harness::redact(&text(out), &env.root())
}

fn enabled(env: &Env) {
    env.write(
        "copse/settings.json",
        &json!({"cursorHooksEnabled": true, "sandboxWritablePaths": [env.root()]}).to_string(),
    );
}

/// A user hook that records it ran and denies `rm -rf`.
fn deny_rm_hook(env: &Env) -> PathBuf {
    let marker = env.root().join("hook-ran");
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [{"command": format!(
            "echo ran >> '{}'; grep -q 'rm -rf' && printf '%s' '{{\"decision\":\"deny\",\"agentMessage\":\"no rm -rf\"}}' || true",
            marker.display()
        )}]}})
        .to_string(),
    );
    marker
}

fn bash_payload(command: &str) -> Vec<u8> {
    json!({"session_id": "s-upgrade", "cwd": "/nonexistent", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command}})
    .to_string()
    .into_bytes()
}

/// The installed shim command for `agent`, as the agent would run it (`sh -c`).
fn installed_command(env: &Env) -> String {
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(env.home().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Runs the installed shim command through `sh -c` with `payload`, as Claude Code does.
fn agent_call(env: &Env, payload: &[u8]) -> Output {
    let command = installed_command(env);
    run_bin(env, Path::new("/bin/sh"), &["-c", &command], payload)
}

fn daemon_status(env: &Env, bin: &Path) -> Value {
    let out = run_bin(env, bin, &["--json", "daemon", "status"], b"");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("daemon status is not JSON ({e}): {}", text(&out)))
}

/// Stops the test's daemon (if one runs) when the test ends, pass or fail.
struct StopDaemon<'a>(&'a Env);

impl Drop for StopDaemon<'_> {
    fn drop(&mut self) {
        let _ = self.0.cmd().args(["daemon", "stop"]).run();
    }
}

/// Whether process `pid` has exited (gone, or a zombie nobody reaped yet).
fn gone(pid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

fn shim_errors(env: &Env) -> String {
    std::fs::read_to_string(env.copse_dir().join("shim-errors.log")).unwrap_or_default()
}

#[test]
fn install_from_a_new_path_updates_the_entries_and_says_from_what() {
    let env = Env::new();
    let a = copy_build(&env, "old/copse-hooks");
    let b = copy_build(&env, "new/copse-hooks");
    let first = run_bin(&env, &a, &["install", "--agent", "claude"], b"");
    assert!(first.status.success(), "{}", text(&first));
    assert!(text(&first).contains("installed the copse-hooks shim"));
    assert!(installed_command(&env).starts_with(&format!("{} shim", a.display())));
    // The same binary again: nothing changes, and it says so.
    let path = env.home().join(".claude/settings.json");
    let bytes = std::fs::read(&path).unwrap();
    let again = run_bin(&env, &a, &["install", "--agent", "claude"], b"");
    assert!(
        text(&again).contains("already installed"),
        "{}",
        text(&again)
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // Another binary: every entry now runs it, and the install says what it replaced.
    let moved = run_bin(&env, &b, &["install", "--agent", "claude"], b"");
    assert!(moved.status.success(), "{}", text(&moved));
    insta::assert_snapshot!("install_updated_from_old", redact(&env, &moved));
    let settings = std::fs::read_to_string(&path).unwrap();
    assert!(!settings.contains(&a.display().to_string()), "{settings}");
    let entry = format!("{} shim --agent claude", b.display());
    assert_eq!(settings.matches(&entry).count(), 12, "{settings}");
    // `doctor` from the binary the entries run: no problem.
    let doctor = run_bin(&env, &b, &["--json", "doctor"], b"");
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    assert!(
        report["agents"][0].get("binary_problem").is_none(),
        "{report}"
    );
    // From another binary: the entries do not run this one.
    let doctor = run_bin(&env, &a, &["--json", "doctor"], b"");
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let problem = report["agents"][0]["binary_problem"].as_str().unwrap();
    assert!(
        problem.contains("not this copse-hooks") && problem.contains(&b.display().to_string()),
        "{problem}"
    );
    // The binary the entries run deleted: every hook call would fail; doctor says so.
    std::fs::remove_file(&b).unwrap();
    let doctor = run_bin(&env, &a, &["doctor"], b"");
    let human = redact(&env, &doctor);
    assert!(
        human.contains(
            "problem: the shim entries run [TMP]/new/copse-hooks, which is missing (no such file): every claude hook call fails"
        ),
        "{human}"
    );
    // `--json` says the same: from what, and when nothing changed.
    let json = run_bin(&env, &a, &["--json", "install", "--agent", "claude"], b"");
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["updated_from"], b.display().to_string(), "{v}");
    assert_eq!(v["already_installed"], false);
    let json = run_bin(&env, &a, &["--json", "install", "--agent", "claude"], b"");
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["already_installed"], true, "{v}");
    assert!(v.get("updated_from").is_none(), "{v}");
    // Back to the new binary, then it is deleted: repaired by installing from the one
    // that is there.
    let b = copy_build(&env, "new/copse-hooks");
    run_bin(&env, &b, &["install", "--agent", "claude"], b"");
    std::fs::remove_file(&b).unwrap();
    let repaired = run_bin(&env, &a, &["install", "--agent", "claude"], b"");
    assert!(
        text(&repaired).contains("from ") && text(&repaired).contains("new/copse-hooks"),
        "{}",
        text(&repaired)
    );
    let doctor = run_bin(&env, &a, &["--json", "doctor"], b"");
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    assert!(report["agents"][0].get("binary_problem").is_none());
}

#[test]
fn a_daemon_whose_executable_was_replaced_is_replaced_by_the_next_call() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    enabled(&env);
    let marker = deny_rm_hook(&env);
    let bin = copy_build(&env, "bin/copse-hooks");
    let installed = run_bin(&env, &bin, &["install", "--agent", "claude"], b"");
    assert!(installed.status.success(), "{}", text(&installed));
    let started = run_bin(&env, &bin, &["--json", "daemon", "start"], b"");
    assert!(started.status.success(), "{}", text(&started));
    let before = daemon_status(&env, &bin);
    assert_eq!(before["status"], "running", "{before}");
    assert_eq!(before["executable"], bin.display().to_string(), "{before}");
    assert_eq!(before["executable_state"], "current", "{before}");
    assert_eq!(before["daemon_version"], env!("CARGO_PKG_VERSION"));
    assert!(before["started_ms"].as_u64().unwrap() > 0);
    assert_eq!(
        before["socket"],
        env.copse_dir().join("daemon.sock").display().to_string()
    );
    let old_pid = before["pid"].as_u64().unwrap();
    // Served by the daemon from this binary (the hook ran: the control).
    let out = agent_call(&env, &bash_payload("rm -rf /tmp/x"));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"],
        "deny",
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(&marker).unwrap().lines().count(), 1);
    assert_eq!(daemon_status(&env, &bin)["pid"], old_pid);

    // The upgrade: a new file renamed over the path the daemon runs.
    copy_build(&env, "bin/copse-hooks");
    let replaced = daemon_status(&env, &bin);
    assert_eq!(replaced["pid"], old_pid);
    assert_eq!(replaced["executable_state"], "replaced", "{replaced}");
    let human = redact(&env, &run_bin(&env, &bin, &["daemon", "status"], b""));
    assert!(
        human.contains(
            "executable: [TMP]/bin/copse-hooks (replaced: the next shim call replaces this daemon)"
        ),
        "{human}"
    );

    // The daemon notices by itself, and says so once in its log (it looks every 2 s).
    let log = env.copse_dir().join("daemon.log");
    let noted = format!(
        "my executable {} was replaced since I started",
        bin.display()
    );
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains(&noted)
    {
        assert!(
            std::time::Instant::now() < until,
            "not in the daemon log: {noted}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // `doctor` shows the same daemon, and that its executable is not the one it runs.
    let doctor = run_bin(&env, &bin, &["--json", "doctor"], b"");
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    assert_eq!(report["daemon"]["pid"], old_pid, "{report}");
    assert_eq!(report["daemon"]["executable_state"], "replaced", "{report}");
    let human = redact(&env, &run_bin(&env, &bin, &["doctor"], b""));
    let section: Vec<&str> = human
        .lines()
        .skip_while(|l| *l != "Daemon")
        .take(4)
        .collect();
    assert_eq!(section[0], "Daemon", "{human}");
    assert!(section[1].starts_with("  running (pid "), "{human}");
    assert!(
        section[3].contains("executable: [TMP]/bin/copse-hooks (replaced:"),
        "{human}"
    );

    // The next agent call: the old daemon is stopped, the new one serves it.
    let out = agent_call(&env, &bash_payload("rm -rf /tmp/x"));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"],
        "deny",
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap().lines().count(),
        2,
        "the hook ran once more, in one daemon only"
    );
    let after = daemon_status(&env, &bin);
    assert_eq!(after["status"], "running", "{after}");
    assert_ne!(after["pid"], old_pid, "{after}");
    assert!(gone(old_pid), "the old daemon (pid {old_pid}) still runs");
    assert_eq!(after["executable_state"], "current", "{after}");
    assert!(after["started_ms"].as_u64() >= before["started_ms"].as_u64());
    let served: Value = serde_json::from_str(
        &std::fs::read_to_string(env.copse_dir().join("shim/served/claude.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(served["path"], "daemon", "{served}");
    let log = shim_errors(&env);
    assert!(
        log.contains(&format!("replacing the daemon (pid {old_pid})"))
            && log.contains("was replaced since it started")
            && log.contains("stopped it"),
        "{log}"
    );
    // And it stays: the next call is served by the same (new) daemon, nothing logged.
    let out = agent_call(&env, &bash_payload("ls"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(daemon_status(&env, &bin)["pid"], after["pid"]);
    assert_eq!(shim_errors(&env), log);
}

#[test]
fn a_daemon_of_another_binary_is_replaced_and_a_deleted_one_too() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    enabled(&env);
    let marker = deny_rm_hook(&env);
    let old = copy_build(&env, "old/copse-hooks");
    let new = copy_build(&env, "new/copse-hooks");
    let started = run_bin(&env, &old, &["daemon", "start"], b"");
    assert!(started.status.success(), "{}", text(&started));
    let old_pid = daemon_status(&env, &new)["pid"].as_u64().unwrap();
    // `daemon start` from the other binary leaves it, and says it is another build.
    let again = redact(&env, &run_bin(&env, &new, &["daemon", "start"], b""));
    assert!(
        again.contains("daemon already running")
            && again.contains("it is not this build ([TMP]/new/copse-hooks")
            && again.contains("executable: [TMP]/old/copse-hooks"),
        "{again}"
    );
    // The old binary deleted while its daemon runs.
    std::fs::remove_file(&old).unwrap();
    assert_eq!(daemon_status(&env, &new)["executable_state"], "deleted");
    let installed = run_bin(&env, &new, &["install", "--agent", "claude"], b"");
    assert!(installed.status.success(), "{}", text(&installed));
    let out = agent_call(&env, &bash_payload("rm -rf /tmp/x"));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"],
        "deny",
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(&marker).unwrap().lines().count(), 1);
    let after = daemon_status(&env, &new);
    assert_ne!(after["pid"], old_pid, "{after}");
    assert!(gone(old_pid), "the old daemon (pid {old_pid}) still runs");
    assert_eq!(after["executable"], new.display().to_string(), "{after}");
    let log = shim_errors(&env);
    assert!(
        log.contains(&format!("replacing the daemon (pid {old_pid})"))
            && log.contains(&format!("the daemon runs {}", old.display())),
        "{log}"
    );
}

#[test]
fn uninstall_says_removed_for_a_file_it_created_and_restored_for_one_it_changed() {
    let env = Env::new();
    // Codex's hooks.json did not exist: install created it, uninstall removes it.
    env.cmd()
        .args(["install", "--agent", "codex"])
        .run()
        .success();
    let codex = env.home().join(".codex/hooks.json");
    assert!(codex.exists());
    let out = env
        .cmd()
        .args(["uninstall", "--agent", "codex"])
        .run()
        .success();
    assert_eq!(
        out.redacted(),
        "removed [TMP]/home/.codex/hooks.json (codex)\n"
    );
    assert!(!codex.exists());
    // Claude's settings existed: they are restored, byte for byte.
    let original = "{\n    \"model\": \"x\"\n}\n";
    let claude = env.write("home/.claude/settings.json", original);
    env.cmd()
        .args(["install", "--agent", "claude"])
        .run()
        .success();
    let out = env
        .cmd()
        .args(["--json", "uninstall", "--agent", "claude"])
        .run()
        .success();
    assert_eq!(out.json()["result"], "restored");
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), original);
}

#[test]
fn uninstall_leaves_a_file_without_shim_entries_byte_for_byte() {
    let env = Env::new();
    env.write("home/.gemini/settings.json", "{\"a\": 1}\n");
    env.cmd()
        .args(["install", "--agent", "gemini"])
        .run()
        .success();
    // The user took the entries out by hand, in their own formatting.
    let edited = "{\"a\": 1,   \"b\": [ 2 ]}\n";
    let path = env.write("home/.gemini/settings.json", edited);
    let out = env
        .cmd()
        .args(["uninstall", "--agent", "gemini"])
        .run()
        .success();
    assert_eq!(
        out.redacted(),
        "no shim entries left in [TMP]/home/.gemini/settings.json (gemini)\n"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
}

#[test]
fn install_refuses_settings_it_cannot_read_and_writes_nothing() {
    let env = Env::new();
    let settings = env.write("copse/settings.json", "{ not json");
    let out = env.cmd().args(["install", "--agent", "claude"]).run();
    assert!(!out.out.status.success());
    let err = out.redacted();
    assert!(
        err.contains("[TMP]/copse/settings.json cannot be read; nothing was installed"),
        "{err}"
    );
    assert!(!env.home().join(".claude/settings.json").exists());
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ not json");
    // The control: with readable settings the same install works (and turns hooks on
    // without dropping what the settings said).
    env.write(
        "copse/settings.json",
        &json!({"sandboxWritablePaths": [env.root()]}).to_string(),
    );
    let ok = env
        .cmd()
        .args(["install", "--agent", "claude"])
        .run()
        .success();
    assert!(
        ok.stdout().contains("next: run `copse-hooks doctor`"),
        "{}",
        ok.stdout()
    );
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(kept["cursorHooksEnabled"], true, "{kept}");
    assert!(kept.to_string().contains("sandboxWritablePaths"), "{kept}");
}

#[test]
fn install_moves_every_shim_entry_to_this_binary_even_under_events_it_no_longer_serves() {
    let env = Env::new();
    // An older install from a path that is gone, with an event this build does not
    // serve, next to a hook of the user's own.
    let path = env.write(
        "home/.claude/settings.json",
        &json!({"hooks": {
            "LegacyEvent": [{"hooks": [{"type": "command", "command": "/gone/copse-hooks shim --agent claude"}]}],
            "PreToolUse": [
                {"hooks": [{"type": "command", "command": "/gone/copse-hooks shim --agent claude"}]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./mine.sh"}]}
            ]
        }})
        .to_string(),
    );
    let out = env
        .cmd()
        .args(["install", "--agent", "claude"])
        .run()
        .success();
    assert!(
        out.stdout().contains(" from /gone/copse-hooks\n"),
        "{}",
        out.stdout()
    );
    let settings = std::fs::read_to_string(&path).unwrap();
    assert!(!settings.contains("/gone/"), "{settings}");
    let v: Value = serde_json::from_str(&settings).unwrap();
    let this = std::fs::canonicalize(env!("CARGO_BIN_EXE_copse-hooks")).unwrap();
    assert!(
        v["hooks"]["LegacyEvent"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{} shim --agent claude", this.display())),
        "{settings}"
    );
    // The user's own hook stays, after the one shim entry.
    assert_eq!(
        v["hooks"]["PreToolUse"].as_array().unwrap().len(),
        2,
        "{settings}"
    );
    assert_eq!(
        v["hooks"]["PreToolUse"][1]["hooks"][0]["command"],
        "./mine.sh"
    );
    let report = env.cmd().args(["--json", "doctor"]).run().success().json();
    assert!(
        report["agents"][0].get("binary_problem").is_none(),
        "{report}"
    );
}

#[test]
fn parallel_calls_after_an_upgrade_all_get_their_answer_from_one_new_daemon() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    enabled(&env);
    let marker = deny_rm_hook(&env);
    let bin = copy_build(&env, "bin/copse-hooks");
    run_bin(&env, &bin, &["install", "--agent", "claude"], b"");
    let started = run_bin(&env, &bin, &["daemon", "start"], b"");
    assert!(started.status.success(), "{}", text(&started));
    let old_pid = daemon_status(&env, &bin)["pid"].as_u64().unwrap();
    copy_build(&env, "bin/copse-hooks");
    const CALLS: usize = 4;
    let answers: Vec<Output> = std::thread::scope(|s| {
        let calls: Vec<_> = (0..CALLS)
            .map(|_| s.spawn(|| agent_call(&env, &bash_payload("rm -rf /tmp/x"))))
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    for out in &answers {
        let answer: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(out)));
        assert_eq!(
            answer["hookSpecificOutput"]["permissionDecision"],
            "deny",
            "{}",
            text(out)
        );
    }
    // Every call ran the hook exactly once (none in the stale daemon, none twice).
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap().lines().count(),
        CALLS
    );
    let after = daemon_status(&env, &bin);
    assert_ne!(after["pid"], old_pid, "{after}");
    assert!(gone(old_pid));
    assert_eq!(after["executable_state"], "current", "{after}");
}

/// A daemon from before the build exchange, as far as a shim can tell: it holds the
/// socket's lock (its pid in it), and answers every request the way such a daemon
/// answers a `client` field (its params take no unknown field). It records each
/// request it gets.
const OLD_DAEMON: &str = r#"
import fcntl, json, os, signal, socket, sys
sock_path, seen = sys.argv[1], sys.argv[2]
lock = open(sock_path + ".lock", "a+")
fcntl.flock(lock, fcntl.LOCK_EX)
lock.truncate(0); lock.write(str(os.getpid()) + "\n"); lock.flush()
signal.signal(signal.SIGTERM, lambda *_: (os.unlink(sock_path), sys.exit(0)))
s = socket.socket(socket.AF_UNIX); s.bind(sock_path); s.listen(8)
open(seen, "a").close()
while True:
    c, _ = s.accept()
    line = c.makefile().readline()
    open(seen, "a").write(line)
    c.sendall((json.dumps({"jsonrpc": "2.0", "id": json.loads(line)["id"], "error": {"code": -32602,
        "message": "invalid params: unknown field `client`, expected one of `agent`, `payload`, `env`, `cwd`"}}) + "\n").encode())
    c.close()
"#;

#[test]
fn a_daemon_older_than_the_exchange_is_replaced_and_ran_nothing() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    enabled(&env);
    let marker = deny_rm_hook(&env);
    env.cmd()
        .args(["install", "--agent", "claude"])
        .run()
        .success();
    let seen = env.root().join("old-daemon-saw");
    let socket = env.copse_dir().join("daemon.sock");
    let mut old = Command::new("python3")
        .arg("-c")
        .arg(OLD_DAEMON)
        .arg(&socket)
        .arg(&seen)
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !(socket.exists() && seen.exists()) {
        assert!(
            std::time::Instant::now() < until,
            "the old daemon did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = agent_call(&env, &bash_payload("rm -rf /tmp/x"));
    let answer: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"],
        "deny",
        "{}",
        text(&out)
    );
    // The old daemon got the call and refused it; it was stopped (it exits on TERM),
    // and the hook ran once, in the new daemon.
    let status = old.wait().unwrap();
    assert!(
        status.success(),
        "the old daemon was not stopped cleanly: {status}"
    );
    assert_eq!(std::fs::read_to_string(&seen).unwrap().lines().count(), 1);
    assert_eq!(std::fs::read_to_string(&marker).unwrap().lines().count(), 1);
    let after = daemon_status(&env, Path::new(env!("CARGO_BIN_EXE_copse-hooks")));
    assert_eq!(after["status"], "running", "{after}");
    assert_ne!(after["pid"].as_u64(), Some(u64::from(old.id())));
    let log = shim_errors(&env);
    assert!(
        log.contains("the daemon is older than this shim") && log.contains("stopped it"),
        "{log}"
    );
}
