//! `copse_hooks::spawn` against real processes in temp dirs.
//!
//! Timing assertions are deliberately loose ("well under the naive 1000 s"): the machine
//! may be loaded. Processes that must be dead are checked via `kill(pid, 0)` and
//! `/proc/<pid>/stat` (a zombie counts as dead: it was killed and awaits its new parent).

#![cfg(target_os = "linux")]

use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use copse_hooks::spawn::{
    self, ChildSetup, Limits, SpawnError, SpawnOutput, SpawnRequest, Termination,
};

/// Generous bound for anything that should be quick, far below the naive outcome.
const SLACK: Duration = Duration::from_secs(3);

fn path_env() -> Vec<(OsString, OsString)> {
    vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())]
}

/// A request with a long timeout and default limits; tests override fields.
fn request<'a>(
    command: &'a str,
    cwd: &'a Path,
    env: &'a [(OsString, OsString)],
) -> SpawnRequest<'a> {
    SpawnRequest {
        command,
        cwd,
        env,
        stdin: b"",
        timeout: Duration::from_secs(30),
        limits: Limits::default(),
        child_setup: None,
    }
}

/// Leaves a hook the host's `/proc` (it claims to mount the private one itself, and does
/// not), so that tests about killing can learn host pids through `/proc/self/stat`. Only
/// the host's own setup can do this; a hook cannot.
struct HostProc;

// SAFETY: does nothing at all.
unsafe impl ChildSetup for HostProc {
    fn apply_in_child(&self) -> io::Result<()> {
        Ok(())
    }

    fn mounts_private_proc(&self) -> bool {
        true
    }
}

/// [`request`] for a hook that reads host pids from `/proc` (see [`HostProc`]).
fn request_host_proc<'a>(
    command: &'a str,
    cwd: &'a Path,
    env: &'a [(OsString, OsString)],
) -> SpawnRequest<'a> {
    SpawnRequest {
        child_setup: Some(&HostProc),
        ..request(command, cwd, env)
    }
}

fn run_ok(req: &SpawnRequest<'_>) -> SpawnOutput {
    match spawn::run(req) {
        Ok(out) => out,
        Err(err) => panic!("run failed: {err}"),
    }
}

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_else(|err| panic!("non-utf-8 output: {err}"))
}

/// A payload that does not repeat with any small period, so reordering or loss shows.
fn payload(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x2545_f491;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x.to_le_bytes()[0]
        })
        .collect()
}

fn is_dead(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            // The state follows the parenthesised command name.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim().chars().next());
            matches!(state, Some('Z' | 'X'))
        }
    }
}

/// SIGKILL is asynchronous: give the kernel a moment to finish the kill.
fn wait_dead(pid: i32) -> bool {
    let deadline = Instant::now() + SLACK;
    while Instant::now() < deadline {
        if is_dead(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

fn assert_dead(pid: i32) {
    if !wait_dead(pid) {
        // SAFETY: plain kill of a pid this test's hook created; don't leave it running.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        panic!("process {pid} survived the run");
    }
}

fn read_pid(path: &Path) -> i32 {
    let raw =
        std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    raw.trim()
        .parse()
        .unwrap_or_else(|err| panic!("pid {raw:?}: {err}"))
}

fn wait_for_file(path: &Path, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if std::fs::read_to_string(path).is_ok_and(|s| s.ends_with('\n')) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[test]
fn cat_round_trips_a_large_stdin_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    // Larger than any pipe buffer in both directions: needs concurrent write and read.
    let data = payload(3 * 1024 * 1024);
    let limits = Limits {
        stdout_cap: 8 * 1024 * 1024,
        ..Limits::default()
    };
    let out = run_ok(&SpawnRequest {
        stdin: &data,
        limits,
        ..request("cat", dir.path(), &env)
    });
    assert_eq!(out.termination, Termination::Exited);
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.signal, None);
    assert_eq!(out.stdin_written, data.len());
    assert!(out.stdout == data, "stdout differs from stdin");
    assert!(out.stderr.is_empty());
    assert!(!out.leaked_pipes);
}

#[test]
fn environment_is_exactly_the_given_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut env = path_env();
    env.push(("COPSE_SPAWN_TEST".into(), "a value with spaces".into()));
    let out = run_ok(&request("/usr/bin/env", dir.path(), &env));
    assert_eq!(out.exit_code, Some(0));
    let names: Vec<&str> = text(&out.stdout)
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name))
        .collect();
    assert!(text(&out.stdout).contains("COPSE_SPAWN_TEST=a value with spaces\n"));
    assert!(names.contains(&"PATH"));
    // The shell may export its own bookkeeping; nothing may come from the host.
    for name in names {
        assert!(
            ["PATH", "COPSE_SPAWN_TEST", "PWD", "OLDPWD", "SHLVL", "_"].contains(&name),
            "unexpected variable {name} in the child's environment"
        );
    }
}

#[test]
fn path_is_absent_when_not_given() {
    let dir = tempfile::tempdir().unwrap();
    let env = vec![(OsString::from("ONLY"), OsString::from("this"))];
    let out = run_ok(&request("/usr/bin/env", dir.path(), &env));
    assert_eq!(out.exit_code, Some(0));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("ONLY=this\n"));
    assert!(
        !stdout.lines().any(|line| line.starts_with("PATH=")),
        "{stdout}"
    );
}

#[test]
fn a_repeated_environment_name_takes_its_last_value() {
    let dir = tempfile::tempdir().unwrap();
    let mut env = path_env();
    env.push(("COPSE_TWICE".into(), "first".into()));
    env.push(("COPSE_TWICE".into(), "second".into()));
    let out = run_ok(&request("/usr/bin/env", dir.path(), &env));
    assert_eq!(out.exit_code, Some(0));
    let values: Vec<&str> = text(&out.stdout)
        .lines()
        .filter(|line| line.starts_with("COPSE_TWICE="))
        .collect();
    assert_eq!(values, ["COPSE_TWICE=second"]);
}

#[test]
fn nul_bytes_are_a_start_error() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let mut bad_env = path_env();
    bad_env.push(("COPSE_NUL".into(), "a\0b".into()));
    for (command, env) in [("echo a\0b", &env), ("true", &bad_env)] {
        match spawn::run(&request(command, dir.path(), env)) {
            Err(SpawnError::Start { cause: source, .. }) => {
                assert_eq!(source.kind(), io::ErrorKind::InvalidInput);
            }
            other => panic!("expected a start error for {command:?}, got {other:?}"),
        }
    }
}

#[test]
fn cwd_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let out = run_ok(&request("pwd -P", dir.path(), &env));
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(
        Path::new(text(&out.stdout).trim()),
        dir.path().canonicalize().unwrap()
    );
}

#[test]
fn exit_codes_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    for code in [0, 1, 2, 3, 255] {
        let command = format!("exit {code}");
        let out = run_ok(&request(&command, dir.path(), &env));
        assert_eq!(out.termination, Termination::Exited);
        assert_eq!(out.exit_code, Some(code));
        assert_eq!(out.signal, None);
    }
}

/// Shell code that starts `sleep 1000` in the background and writes its pid, as the host
/// sees it, to `file` (a hook's processes live in their own pid namespace, where `$!`
/// means nothing to the host; with [`request_host_proc`], `/proc` is the host's, so
/// `/proc/self/stat` tells).
fn background_sleep(file: &str) -> String {
    format!("sh -c 'read p _ </proc/self/stat; echo $p > {file}; exec sleep 1000' &")
}

#[test]
fn death_by_signal_is_an_exit_without_code() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    // Killed from outside (the host's view of its pid), as the OOM killer would.
    let pidfile = dir.path().join("self.pid");
    let killer = {
        let pidfile = pidfile.clone();
        std::thread::spawn(move || {
            if wait_for_file(&pidfile, Duration::from_secs(10)) {
                // SAFETY: plain kill of the pid the hook reported for itself.
                unsafe { libc::kill(read_pid(&pidfile), libc::SIGKILL) };
            }
        })
    };
    let out = run_ok(&request_host_proc(
        "echo partial; read p _ </proc/self/stat; echo $p > self.tmp; mv self.tmp self.pid; \
         exec sleep 1000",
        dir.path(),
        &env,
    ));
    killer.join().unwrap();
    assert_eq!(out.termination, Termination::Exited);
    assert_eq!(out.exit_code, None);
    assert_eq!(out.signal, Some(libc::SIGKILL));
    assert_eq!(text(&out.stdout), "partial\n");
}

#[test]
fn child_leads_its_own_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    // Field 5 of /proc/<pid>/stat is the process group id.
    let out = run_ok(&request(
        "read pid comm state ppid pgid rest </proc/self/stat; echo $pid; echo $pgid",
        dir.path(),
        &env,
    ));
    let lines: Vec<&str> = text(&out.stdout).lines().collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0], lines[1], "pgid must equal the child's pid");
    // SAFETY: getpgrp cannot fail.
    let ours = unsafe { libc::getpgrp() };
    assert_ne!(lines[1], ours.to_string());
}

#[test]
fn timeout_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let limits = Limits {
        kill_grace: Duration::from_millis(300),
        drain: Duration::from_millis(100),
        ..Limits::default()
    };
    let timeout = Duration::from_millis(300);
    let start = Instant::now();
    let out = run_ok(&SpawnRequest {
        timeout,
        limits,
        ..request_host_proc(
            &format!(
                "{} ({} wait) & sleep 1000",
                background_sleep("bg.pid"),
                background_sleep("gc.pid")
            ),
            dir.path(),
            &env,
        )
    });
    let elapsed = start.elapsed();
    assert_eq!(out.termination, Termination::TimedOut);
    // The shell (init of the run's pid namespace) ignores TERM and exits when its sleep
    // dies of it: no exit code is reported for a run that was being killed.
    assert_eq!(out.exit_code, None);
    assert!(
        elapsed >= timeout,
        "returned before the timeout: {elapsed:?}"
    );
    assert!(
        elapsed < timeout + limits.kill_grace + limits.drain + Duration::from_secs(1),
        "took {elapsed:?}"
    );
    assert_dead(read_pid(&dir.path().join("bg.pid")));
    assert_dead(read_pid(&dir.path().join("gc.pid")));
}

#[test]
fn sigterm_ends_an_obedient_child_before_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let limits = Limits {
        kill_grace: Duration::from_secs(20),
        ..Limits::default()
    };
    let start = Instant::now();
    // The shell is the init of the run's pid namespace, which only gets the signals it
    // handles: an obedient hook's shell traps TERM (its children get TERM anyway).
    let out = run_ok(&SpawnRequest {
        timeout: Duration::from_millis(200),
        limits,
        ..request("trap 'exit 143' TERM; sleep 1000 & wait", dir.path(), &env)
    });
    assert_eq!(out.termination, Termination::TimedOut);
    assert_eq!(out.exit_code, None);
    assert!(
        start.elapsed() < SLACK,
        "waited for the grace: {:?}",
        start.elapsed()
    );
}

#[test]
fn sigterm_ignoring_child_is_killed_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let timeout = Duration::from_millis(200);
    let limits = Limits {
        kill_grace: Duration::from_millis(300),
        ..Limits::default()
    };
    let start = Instant::now();
    let out = run_ok(&SpawnRequest {
        timeout,
        limits,
        ..request("trap '' TERM; sleep 100", dir.path(), &env)
    });
    let elapsed = start.elapsed();
    assert_eq!(out.termination, Termination::TimedOut);
    assert_eq!(out.signal, Some(libc::SIGKILL));
    assert_eq!(out.exit_code, None);
    assert!(
        elapsed >= timeout + limits.kill_grace,
        "no grace given: {elapsed:?}"
    );
    assert!(elapsed < SLACK, "took {elapsed:?}");
}

#[test]
fn stdout_over_cap_kills_the_group_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let limits = Limits {
        stdout_cap: 1000,
        ..Limits::default()
    };
    let start = Instant::now();
    let out = run_ok(&SpawnRequest {
        limits,
        ..request("yes", dir.path(), &env)
    });
    assert_eq!(out.termination, Termination::StdoutOverflow);
    assert_eq!(out.stdout.len(), 1000);
    assert!(out.stdout.chunks(2).all(|pair| pair == b"y\n"));
    assert_eq!(out.exit_code, None);
    assert_eq!(out.signal, Some(libc::SIGKILL));
    assert!(start.elapsed() < SLACK, "took {:?}", start.elapsed());
}

#[test]
fn stdout_exactly_at_cap_is_not_an_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let limits = Limits {
        stdout_cap: 4,
        ..Limits::default()
    };
    let out = run_ok(&SpawnRequest {
        limits,
        ..request("printf abcd", dir.path(), &env)
    });
    assert_eq!(out.termination, Termination::Exited);
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.stdout, b"abcd");
}

#[test]
fn stderr_over_cap_is_truncated_and_the_child_runs_on() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let limits = Limits {
        stderr_cap: 1000,
        ..Limits::default()
    };
    // 200 kB is several pipe buffers: the child would block if we stopped reading.
    let out = run_ok(&SpawnRequest {
        limits,
        ..request(
            "head -c 200000 /dev/zero >&2; echo done; exit 3",
            dir.path(),
            &env,
        )
    });
    assert_eq!(out.termination, Termination::Exited);
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.stderr.len(), 1000);
    assert!(out.stderr_truncated);
    assert_eq!(text(&out.stdout), "done\n");
}

#[test]
fn stderr_within_cap_is_not_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let out = run_ok(&request("echo oops >&2", dir.path(), &env));
    assert_eq!(out.stderr, b"oops\n");
    assert!(!out.stderr_truncated);
}

#[test]
fn child_exiting_without_reading_a_large_stdin_is_normal() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let data = payload(5 * 1024 * 1024);
    let start = Instant::now();
    let out = run_ok(&SpawnRequest {
        stdin: &data,
        ..request("exit 7", dir.path(), &env)
    });
    assert_eq!(out.termination, Termination::Exited);
    assert_eq!(out.exit_code, Some(7));
    assert!(out.stdin_written < data.len());
    assert!(start.elapsed() < SLACK, "took {:?}", start.elapsed());
}

#[test]
fn child_closing_stdin_early_is_normal() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let data = payload(5 * 1024 * 1024);
    let out = run_ok(&SpawnRequest {
        stdin: &data,
        ..request("exec 0<&-; sleep 0.1; echo hi", dir.path(), &env)
    });
    assert_eq!(out.termination, Termination::Exited);
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(text(&out.stdout), "hi\n");
    assert!(out.stdin_written < data.len());
}

#[test]
fn background_process_holding_stdout_is_drained_then_killed() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let limits = Limits {
        drain: Duration::from_millis(200),
        ..Limits::default()
    };
    let start = Instant::now();
    let out = run_ok(&SpawnRequest {
        limits,
        ..request_host_proc(
            &format!(
                r#"echo '{{"permission":"allow"}}'; {} until [ -s bg.pid ]; do sleep 0.01; done"#,
                background_sleep("bg.pid")
            ),
            dir.path(),
            &env,
        )
    });
    assert!(start.elapsed() < SLACK, "took {:?}", start.elapsed());
    assert_eq!(out.termination, Termination::Exited);
    assert_eq!(out.exit_code, Some(0));
    // Where runs are contained, the kernel ends the background process with the shell,
    // so nothing holds the pipes past the run; elsewhere the drain ends, and the group
    // kill ends it.
    assert_eq!(out.leaked_pipes, copse_hooks::spawn::contained().is_err());
    assert_eq!(text(&out.stdout), "{\"permission\":\"allow\"}\n");
    assert_dead(read_pid(&dir.path().join("bg.pid")));
}

#[test]
fn background_process_with_closed_pipes_is_killed_without_waiting_for_the_drain() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    // A drain this long would show if we waited for it needlessly.
    let limits = Limits {
        drain: Duration::from_secs(20),
        ..Limits::default()
    };
    let start = Instant::now();
    let out = run_ok(&SpawnRequest {
        limits,
        ..request_host_proc(
            &format!(
                "{} echo ok; until [ -s bg.pid ]; do sleep 0.01; done",
                background_sleep("bg.pid").replace("' &", "' >/dev/null 2>&1 &")
            ),
            dir.path(),
            &env,
        )
    });
    assert!(start.elapsed() < SLACK, "took {:?}", start.elapsed());
    assert!(!out.leaked_pipes);
    assert_eq!(text(&out.stdout), "ok\n");
    assert_dead(read_pid(&dir.path().join("bg.pid")));
}

#[test]
fn trivial_hook_returns_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let limits = Limits {
        drain: Duration::from_secs(20),
        ..Limits::default()
    };
    for _ in 0..3 {
        let start = Instant::now();
        let out = run_ok(&SpawnRequest {
            limits,
            ..request("echo '{}'", dir.path(), &env)
        });
        assert_eq!(text(&out.stdout), "{}\n");
        assert!(start.elapsed() < SLACK, "took {:?}", start.elapsed());
        assert!(out.duration <= start.elapsed());
    }
}

#[test]
fn missing_cwd_is_a_start_error() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let missing = dir.path().join("does-not-exist");
    // The message carries its cause once: in the text, not again as `source()` (an
    // error chain printed `{:#}` would otherwise say it twice).
    let err = spawn::run(&request("true", &missing, &env)).unwrap_err();
    let cause = io::Error::from(io::ErrorKind::NotFound).to_string();
    let text = format!("{err}");
    assert!(std::error::Error::source(&err).is_none(), "{text}");
    assert!(text.starts_with("failed to start `true` in "), "{text}");
    assert_eq!(
        text.matches("No such file or directory").count(),
        1,
        "{text} ({cause})"
    );
    match spawn::run(&request("true", &missing, &env)) {
        Err(SpawnError::Start {
            command,
            cwd,
            cause: source,
        }) => {
            assert_eq!(command, "true");
            assert_eq!(cwd, missing);
            assert_eq!(source.kind(), io::ErrorKind::NotFound);
        }
        other => panic!("expected a start error, got {other:?}"),
    }
}

struct FailingSetup;

// SAFETY: async-signal-safe calls only, no allocation (see the methods).
unsafe impl ChildSetup for FailingSetup {
    fn apply_in_child(&self) -> io::Result<()> {
        Err(io::Error::from_raw_os_error(libc::EPERM))
    }
}

#[test]
fn failing_child_setup_fails_the_spawn() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let marker = dir.path().join("ran");
    let command = format!("touch '{}'", marker.display());
    let result = spawn::run(&SpawnRequest {
        child_setup: Some(&FailingSetup),
        ..request(&command, dir.path(), &env)
    });
    match result {
        Err(SpawnError::Start { cause: source, .. }) => {
            assert_eq!(source.raw_os_error(), Some(libc::EPERM));
        }
        other => panic!("expected a start error, got {other:?}"),
    }
    assert!(!marker.exists(), "the command ran despite the failed setup");
}

/// Only async-signal-safe calls: _exit.
struct SuicidalSetup;

// SAFETY: async-signal-safe calls only, no allocation (see the methods).
unsafe impl ChildSetup for SuicidalSetup {
    fn apply_in_child(&self) -> io::Result<()> {
        // SAFETY: _exit is async-signal-safe and never returns, so this child ends here
        // (a self-SIGKILL would not do: as the init of its pid namespace, the child
        // cannot kill itself).
        unsafe { libc::_exit(9) }
    }
}

#[test]
fn child_dying_before_exec_is_a_start_error() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let marker = dir.path().join("ran");
    let command = format!("touch '{}'", marker.display());
    let result = spawn::run(&SpawnRequest {
        child_setup: Some(&SuicidalSetup),
        ..request(&command, dir.path(), &env)
    });
    assert!(
        matches!(result, Err(SpawnError::Start { .. })),
        "expected a start error, got {result:?}"
    );
    assert!(!marker.exists(), "the command ran despite the dead child");
}

/// Only async-signal-safe calls: getpid, getpgid, umask.
struct CheckingSetup {
    parent: libc::pid_t,
}

// SAFETY: async-signal-safe calls only, no allocation (see the methods).
unsafe impl ChildSetup for CheckingSetup {
    fn apply_in_child(&self) -> io::Result<()> {
        // SAFETY: getpid/getpgid/umask are async-signal-safe and take plain integers.
        unsafe {
            let pid = libc::getpid();
            if pid == self.parent || libc::getpgid(0) != pid {
                return Err(io::Error::from_raw_os_error(libc::EPROTO));
            }
            libc::umask(0o077);
        }
        Ok(())
    }
}

#[test]
fn child_setup_runs_in_the_child_after_it_got_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    // SAFETY: getpid cannot fail.
    let parent = unsafe { libc::getpid() };
    let out = run_ok(&SpawnRequest {
        child_setup: Some(&CheckingSetup { parent }),
        ..request("umask", dir.path(), &env)
    });
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(text(&out.stdout).trim(), "0077");
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap_or_else(|err| panic!("/proc/self/fd: {err}"))
        .count()
}

#[test]
fn runs_do_not_leak_file_descriptors() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    let before = open_fds();
    for _ in 0..200 {
        let out = run_ok(&SpawnRequest {
            stdin: b"x",
            ..request("cat", dir.path(), &env)
        });
        assert_eq!(out.stdout, b"x");
    }
    let after = open_fds();
    // A leak would be >= 200 fds (one per run at least). Other tests running in parallel
    // hold a few transient fds, hence the small allowance.
    assert!(after < before + 40, "fds grew from {before} to {after}");
}

#[test]
fn concurrent_runs_keep_their_own_streams() {
    let dir = tempfile::tempdir().unwrap();
    let env = path_env();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let dir = dir.path();
                let env = &env;
                scope.spawn(move || {
                    let data = payload(200_000 + i * 1000);
                    let out = run_ok(&SpawnRequest {
                        stdin: &data,
                        ..request("cat; echo err >&2", dir, env)
                    });
                    assert!(out.stdout == data, "thread {i} got another stream");
                    assert_eq!(out.stderr, b"err\n");
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
    });
}

// Some properties need a host process we can kill or whose SIGPIPE disposition we can
// change: the test binary re-runs itself with only `helper_process` selected.

const HELPER_VAR: &str = "COPSE_SPAWN_TEST_HELPER";

fn helper(mode: &str) -> Command {
    let exe = std::env::current_exe().unwrap_or_else(|err| panic!("current_exe: {err}"));
    let mut cmd = Command::new(exe);
    cmd.args([
        "--exact",
        "spawn::helper_process",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(HELPER_VAR, mode);
    cmd
}

#[test]
#[ignore = "helper process for other tests; does nothing when run directly"]
fn helper_process() {
    let Ok(mode) = std::env::var(HELPER_VAR) else {
        return;
    };
    let env = path_env();
    let dir = std::env::temp_dir();
    if let Some(pidfile) = mode.strip_prefix("orphan:") {
        let command = format!(
            "read p _ </proc/self/stat; echo $p > '{pidfile}.tmp'; mv '{pidfile}.tmp' '{pidfile}'; \
                 exec sleep 100"
        );
        // Blocks until the parent test kills this process.
        let _ = spawn::run(&request_host_proc(&command, &dir, &env));
    } else if mode == "sigpipe" {
        // SAFETY: this process runs this one test on one thread; nothing else cares about
        // the SIGPIPE disposition.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        let data = payload(5 * 1024 * 1024);
        let out = run_ok(&SpawnRequest {
            stdin: &data,
            ..request("exec 0<&-; sleep 0.2", &dir, &env)
        });
        assert_eq!(out.exit_code, Some(0));
        // The guard must not leave SIGPIPE blocked or pending behind it.
        // SAFETY: all-zeroes is a valid sigset_t; the calls fill them.
        let (blocked, pending) = unsafe {
            let mut mask: libc::sigset_t = std::mem::zeroed();
            let mut pend: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut mask);
            libc::sigpending(&mut pend);
            (
                libc::sigismember(&mask, libc::SIGPIPE) == 1,
                libc::sigismember(&pend, libc::SIGPIPE) == 1,
            )
        };
        assert!(!blocked && !pending, "blocked={blocked} pending={pending}");
        println!("SIGPIPE-HELPER-DONE written={}", out.stdin_written);
    } else if mode == "closed-stdio" {
        // With 0 and 2 closed, the first pipe lands on them: the child's ends must still
        // end up on the right numbers, without one clobbering another.
        // SAFETY: this process runs this one test on one thread and never uses fd 0 or 2
        // again (a failed assertion's message is lost, hence the report on stdout).
        unsafe {
            libc::close(0);
            libc::close(2);
        }
        let out = run_ok(&SpawnRequest {
            stdin: b"ping",
            ..request("cat; echo err >&2", &dir, &env)
        });
        println!(
            "CLOSED-STDIO-HELPER stdout={:?} stderr={:?} code={:?}",
            text(&out.stdout),
            text(&out.stderr),
            out.exit_code
        );
    } else if mode == "signals" {
        // SAFETY: this process runs this one test on one thread; nothing else cares about
        // its signal dispositions or mask. All-zeroes is a valid sigset_t, which
        // sigemptyset/sigaddset initialise.
        unsafe {
            libc::signal(libc::SIGUSR2, libc::SIG_IGN);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGUSR1);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
        let out = run_ok(&request("exec cat /proc/self/status", &dir, &env));
        let mask = |name: &str| {
            text(&out.stdout)
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
                .unwrap_or_else(|| panic!("no {name} in {}", text(&out.stdout)))
        };
        let bit = |signal: i32| 1u64 << (signal - 1);
        let (blocked, ignored) = (mask("SigBlk:"), mask("SigIgn:"));
        assert_eq!(blocked, 0, "the hook starts with signals blocked");
        assert_eq!(ignored & bit(libc::SIGPIPE), 0, "SIGPIPE is still ignored");
        assert_ne!(
            ignored & bit(libc::SIGUSR2),
            0,
            "the host's ignored signal was reset"
        );
        println!("SIGNALS-HELPER-DONE");
    }
}

#[test]
fn host_that_does_not_ignore_sigpipe_survives_an_unread_stdin() {
    let out = helper("sigpipe").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "helper failed: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("SIGPIPE-HELPER-DONE"),
        "helper did not run: {stdout}"
    );
}

#[test]
fn host_with_closed_stdio_still_wires_the_child() {
    let out = helper("closed-stdio").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "helper failed: {:?}\n{stdout}",
        out.status
    );
    assert!(
        stdout.contains(r#"CLOSED-STDIO-HELPER stdout="ping" stderr="err\n" code=Some(0)"#),
        "{stdout}"
    );
}

#[test]
fn hook_starts_with_a_clean_signal_state() {
    let out = helper("signals").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "helper failed: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("SIGNALS-HELPER-DONE"),
        "helper did not run: {stdout}"
    );
}

#[test]
fn hook_dies_with_its_host() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("hook.pid");
    let mut host = helper(&format!("orphan:{}", pidfile.display()))
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = wait_for_file(&pidfile, Duration::from_secs(10));
    host.kill().unwrap();
    host.wait().unwrap();
    assert!(started, "the helper never started its hook");
    let hook = read_pid(&pidfile);
    assert_dead(hook);
}
