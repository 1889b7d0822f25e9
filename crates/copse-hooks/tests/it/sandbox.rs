//! `copse_hooks::sandbox` (Landlock) against real processes through `spawn::run`.
//!
//! These tests need a kernel that enforces Landlock ABI ≥ 4 (Linux 6.7) and fail with
//! the reason when it does not. Block detection needs kernel audit enabled and root; when
//! it is unavailable the detection tests check that the verdict says so instead of
//! guessing, and print a note.

#![cfg(target_os = "linux")]

use std::ffi::OsString;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use copse_hooks::sandbox::{
    self, CheckResult, Detection, Enforcement, LinuxSandbox, Sandbox, SandboxError, SandboxPolicy,
    SandboxVerdict,
};
use copse_hooks::spawn::{self, Limits, SpawnOutput, SpawnRequest};

struct Ran {
    out: SpawnOutput,
    verdict: SandboxVerdict,
    tmpdir: PathBuf,
}

impl Ran {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }

    fn describe(&self) -> String {
        format!(
            "exit {:?}, stdout {:?}, stderr {:?}, verdict {:?}",
            self.out.exit_code,
            String::from_utf8_lossy(&self.out.stdout),
            String::from_utf8_lossy(&self.out.stderr),
            self.verdict
        )
    }
}

/// The machine's Landlock sandbox; fails the test if it is not enforced.
fn landlock() -> LinuxSandbox {
    let sandbox = LinuxSandbox::new();
    let status = sandbox.status();
    assert!(
        status.enforcement_without_network.is_enforced(),
        "these tests need Landlock ABI >= 4 enforced by the kernel:\n{status}"
    );
    sandbox
}

/// Runs `command` in `cwd` under `policy`, with `TMPDIR` set to the private temp dir and
/// `vars` exported; the prepared sandbox is dropped (temp dir removed) before returning.
fn run(
    sandbox: &dyn Sandbox,
    policy: &SandboxPolicy,
    command: &str,
    cwd: &Path,
    vars: &[(&str, &Path)],
) -> Ran {
    let prepared = sandbox
        .prepare(policy)
        .unwrap_or_else(|e| panic!("prepare: {e}"));
    let tmpdir = prepared.tmpdir().to_path_buf();
    let mut env: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("TMPDIR".into(), tmpdir.clone().into_os_string()),
    ];
    for (key, value) in vars {
        env.push(((*key).into(), value.as_os_str().to_owned()));
    }
    let req = SpawnRequest {
        command,
        cwd,
        env: &env,
        stdin: b"",
        timeout: Duration::from_secs(30),
        limits: Limits::default(),
        child_setup: Some(prepared.as_child_setup()),
    };
    let out = spawn::run(&req).unwrap_or_else(|e| panic!("spawn: {e}"));
    let verdict = prepared.detect(out.exit_code);
    drop(prepared);
    Ran {
        out,
        verdict,
        tmpdir,
    }
}

/// A name no other test (or earlier run) uses.
fn unique(tag: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("copse-sandbox-{tag}-{}-{nanos}", std::process::id())
}

/// Whether `path` exists; removes it if it does (so a failing test leaves no litter).
fn exists_then_remove(path: &Path) -> bool {
    let existed = path.symlink_metadata().is_ok();
    if existed {
        let _ = std::fs::remove_file(path);
    }
    existed
}

fn detection_available(sandbox: &dyn Sandbox) -> bool {
    match sandbox.status().detection {
        Detection::KernelAudit => true,
        Detection::Unavailable { reason } => {
            eprintln!("note: sandbox block detection unavailable here: {reason}");
            false
        }
    }
}

#[test]
fn status_reports_what_the_kernel_enforces() {
    let sandbox = landlock();
    let status = sandbox.status();
    assert!(status.abi.is_some_and(|abi| abi >= 4), "{status}");
    assert!(status.filesystem_rules && status.network_rules, "{status}");
    assert!(matches!(
        status.enforcement,
        Enforcement::Enforced {
            network_rules: true,
            ..
        }
    ));
    // The cached platform sandbox is the same mechanism (the env seam is unset here).
    assert!(
        sandbox::platform_sandbox()
            .status()
            .enforcement
            .is_enforced()
    );
    // Displayable for `copse-hooks sandbox check`.
    let shown = status.to_string();
    assert!(
        shown.contains("Landlock") && shown.contains("enforced"),
        "{shown}"
    );
}

#[test]
fn a_hook_writes_inside_the_workspace() {
    let sandbox = landlock();
    let ws = tempfile::tempdir().unwrap();
    let policy = SandboxPolicy::new([ws.path()]);
    let ran = run(
        &sandbox,
        &policy,
        "echo hi > inside.txt && mkdir -p sub/deeper && echo x > sub/deeper/f \
         && mv sub/deeper/f moved && ln -s moved link && : > moved && rm link moved \
         && echo to-null > /dev/null && head -c 4 /dev/urandom > rnd \
         && grep -q '^Pid:' /proc/self/status && ls /usr/bin > /dev/null \
         && echo to-stderr > /dev/stderr && cat inside.txt > /dev/stdout",
        ws.path(),
        &[],
    );
    assert_eq!(ran.out.exit_code, Some(0), "{}", ran.describe());
    assert_eq!(ran.stdout(), "hi\n");
    assert_eq!(String::from_utf8_lossy(&ran.out.stderr), "to-stderr\n");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("inside.txt")).unwrap(),
        "hi\n"
    );
    assert_eq!(std::fs::metadata(ws.path().join("rnd")).unwrap().len(), 4);
    assert!(!ran.verdict.blocked);
}

#[test]
fn writes_to_home_and_tmp_outside_the_private_tmpdir_are_blocked() {
    let sandbox = landlock();
    let ws = tempfile::tempdir().unwrap();
    let home = PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()));
    let in_home = home.join(unique("home"));
    let in_tmp = std::env::temp_dir().join(unique("tmp"));
    let policy = SandboxPolicy::new([ws.path()]);
    let ran = run(
        &sandbox,
        &policy,
        r#"echo x > "$IN_HOME"; a=$?; echo x > "$IN_TMP"; b=$?; mkdir "$IN_TMP.d"; c=$?
           echo "$a $b $c""#,
        ws.path(),
        &[("IN_HOME", &in_home), ("IN_TMP", &in_tmp)],
    );
    let home_written = exists_then_remove(&in_home);
    let tmp_written = exists_then_remove(&in_tmp);
    let dir_made = std::fs::remove_dir(in_tmp.with_extension("d")).is_ok();
    assert!(
        !home_written,
        "a file appeared in $HOME: {}",
        ran.describe()
    );
    assert!(!tmp_written, "a file appeared in /tmp: {}", ran.describe());
    assert!(
        !dir_made,
        "a directory appeared in /tmp: {}",
        ran.describe()
    );
    let stdout = ran.stdout();
    let codes: Vec<&str> = stdout.split_whitespace().collect();
    assert_eq!(codes.len(), 3, "{}", ran.describe());
    assert!(codes.iter().all(|c| *c != "0"), "{}", ran.describe());
}

#[test]
fn existing_files_outside_cannot_be_modified_removed_or_moved() {
    let sandbox = landlock();
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let policy = SandboxPolicy::new([ws.path()]);
    let ran = run(
        &sandbox,
        &policy,
        r#"ok=0
           true > "$VICTIM" && ok=1
           echo more >> "$VICTIM" && ok=1
           truncate -s 0 "$VICTIM" 2>/dev/null && ok=1
           # truncate(2) by path needs only Landlock's TRUNCATE right, not WRITE_FILE.
           if command -v perl >/dev/null; then
             perl -e 'truncate($ARGV[0], 0) or exit 1' "$VICTIM" && ok=1
           elif [ -x /usr/bin/python3 ]; then
             /usr/bin/python3 -c 'import os, sys; os.truncate(sys.argv[1], 0)' "$VICTIM" 2>/dev/null && ok=1
           fi
           rm -f "$VICTIM" && ok=1
           mv "$VICTIM" ./stolen 2>/dev/null && ok=1
           ln "$VICTIM" ./hardlink 2>/dev/null && ok=1
           echo "$ok""#,
        ws.path(),
        &[("VICTIM", &victim)],
    );
    assert_eq!(ran.stdout(), "0\n", "{}", ran.describe());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(!ws.path().join("stolen").exists());
    assert!(!ws.path().join("hardlink").exists());
}

#[test]
fn the_private_tmpdir_is_writable_and_removed_afterwards() {
    let sandbox = landlock();
    let ws = tempfile::tempdir().unwrap();
    let policy = SandboxPolicy::new([ws.path()]);
    // The hook also makes a directory unwritable to itself: removal must still work.
    let ran = run(
        &sandbox,
        &policy,
        r#"echo t > "$TMPDIR/file" && mkdir -p "$TMPDIR/locked/in" && echo y > "$TMPDIR/locked/in/f" \
           && chmod 000 "$TMPDIR/locked/in" "$TMPDIR/locked" && ln -s / "$TMPDIR/root-link" \
           && cat "$TMPDIR/file" && echo "$TMPDIR""#,
        ws.path(),
        &[],
    );
    assert_eq!(ran.out.exit_code, Some(0), "{}", ran.describe());
    let lines: Vec<String> = ran.stdout().lines().map(str::to_owned).collect();
    assert_eq!(lines.first().map(String::as_str), Some("t"));
    assert_eq!(lines.get(1).map(PathBuf::from), Some(ran.tmpdir.clone()));
    assert!(ran.tmpdir.starts_with(std::env::temp_dir()));
    assert_ne!(ran.tmpdir, std::env::temp_dir());
    assert!(
        !ran.tmpdir.exists(),
        "{} was not removed",
        ran.tmpdir.display()
    );
    assert!(
        Path::new("/bin/sh").exists(),
        "removing the temp dir followed a symlink"
    );
}

#[test]
fn a_grandchild_is_confined_too() {
    let sandbox = landlock();
    let ws = tempfile::tempdir().unwrap();
    let target = std::env::temp_dir().join(unique("grandchild"));
    let escaped = std::env::temp_dir().join(unique("setsid"));
    let policy = SandboxPolicy::new([ws.path()]);
    let has_setsid = ["/usr/bin/setsid", "/bin/setsid"]
        .iter()
        .any(|p| Path::new(p).exists());
    let ran = run(
        &sandbox,
        &policy,
        r#"(sh -c 'echo x > "$TARGET"; echo "$?" > status') & wait
           if command -v setsid >/dev/null; then
             setsid -w sh -c 'echo x > "$ESCAPED"; echo "$?" > setsid-status'
           fi
           cat status"#,
        ws.path(),
        &[("TARGET", &target), ("ESCAPED", &escaped)],
    );
    let written = exists_then_remove(&target);
    let escaped_written = exists_then_remove(&escaped);
    assert!(!written, "the grandchild wrote outside: {}", ran.describe());
    assert!(!escaped_written, "a setsid grandchild wrote outside");
    let status = ran.stdout();
    assert!(
        !status.trim().is_empty() && status.trim() != "0",
        "the grandchild did not run, or its write succeeded: {}",
        ran.describe()
    );
    if has_setsid {
        let status = std::fs::read_to_string(ws.path().join("setsid-status")).unwrap();
        assert_ne!(status.trim(), "0");
    }
}

/// A command connecting to 127.0.0.1:`port`, exiting 0 on success; `None` to skip.
fn connect_command(port: u16) -> Option<String> {
    for bash in ["/bin/bash", "/usr/bin/bash"] {
        if Path::new(bash).is_file() {
            return Some(format!("{bash} -c 'echo > /dev/tcp/127.0.0.1/{port}'"));
        }
    }
    for python in ["/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"] {
        if Path::new(python).is_file() {
            return Some(format!(
                "{python} -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 5).close()'"
            ));
        }
    }
    None
}

/// Accepts one pending connection without blocking, if there is one.
fn accepted(listener: &TcpListener) -> bool {
    listener.set_nonblocking(true).unwrap();
    // The connect completed before the hook exited, so it is already queued.
    match listener.accept() {
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::WouldBlock => false,
        Err(e) => panic!("accept: {e}"),
    }
}

#[test]
fn network_false_blocks_a_loopback_connect_that_works_otherwise() {
    let sandbox = landlock();
    let ws = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let Some(command) = connect_command(port) else {
        eprintln!("skipped: neither bash nor python3 is installed");
        return;
    };
    let open = SandboxPolicy::new([ws.path()]);
    let ran = run(&sandbox, &open, &command, ws.path(), &[]);
    assert_eq!(ran.out.exit_code, Some(0), "{}", ran.describe());
    assert!(accepted(&listener), "no connection arrived");

    let closed = open.clone().network(false);
    let ran = run(&sandbox, &closed, &command, ws.path(), &[]);
    assert_ne!(ran.out.exit_code, Some(0), "{}", ran.describe());
    assert!(
        !accepted(&listener),
        "a connection arrived with network: false"
    );
    // Filesystem confinement is unchanged.
    assert!(sandbox.enforcement(&closed).is_enforced());
}

#[test]
fn a_kernel_without_landlock_is_reported_unenforced() {
    let sandbox = LinuxSandbox::with_forced_abi(None);
    let status = sandbox.status();
    assert!(status.abi.is_none());
    assert!(!status.filesystem_rules && !status.network_rules);
    let Enforcement::Unenforced { reason } = &status.enforcement else {
        panic!("expected unenforced: {status}");
    };
    assert!(reason.contains("did not enforce"), "{reason}");
    assert!(matches!(status.detection, Detection::Unavailable { .. }));
    let policy = SandboxPolicy::new([std::env::temp_dir()]);
    match sandbox.prepare(&policy) {
        Err(SandboxError::Unenforced { reason: why }) => assert_eq!(&why, reason),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("prepared a sandbox the kernel does not enforce"),
    }
    let report = sandbox::self_test(&sandbox);
    assert!(!report.passed(), "{report}");
    assert!(report.to_string().contains("NOT enforced"), "{report}");
}

#[test]
fn an_abi_too_old_for_the_policy_is_unenforced_not_partial() {
    // ABI 2 cannot restrict truncate: nothing is enforced.
    let too_old = LinuxSandbox::with_forced_abi(Some(2));
    assert!(!too_old.status().enforcement.is_enforced());
    assert!(matches!(
        too_old.prepare(&SandboxPolicy::default()),
        Err(SandboxError::Unenforced { .. })
    ));
    // ABI 3 confines files but has no network rules: `network: false` is refused whole.
    let abi3 = LinuxSandbox::with_forced_abi(Some(3));
    let status = abi3.status();
    assert_eq!(status.abi, Some(3));
    assert!(!status.network_rules);
    assert!(status.enforcement.is_enforced());
    let ws = tempfile::tempdir().unwrap();
    let closed = SandboxPolicy::new([ws.path()]).network(false);
    let Err(SandboxError::Unenforced { reason }) = abi3.prepare(&closed) else {
        panic!("network: false prepared without network rules");
    };
    assert!(reason.contains("network"), "{reason}");
    // ... and what ABI 3 does enforce, it enforces.
    let target = std::env::temp_dir().join(unique("abi3"));
    let ran = run(
        &abi3,
        &SandboxPolicy::new([ws.path()]),
        r#"echo ok > inside; echo x > "$TARGET""#,
        ws.path(),
        &[("TARGET", &target)],
    );
    assert!(!exists_then_remove(&target), "{}", ran.describe());
    assert_ne!(ran.out.exit_code, Some(0));
    assert!(ws.path().join("inside").exists());
}

#[test]
fn a_forged_permission_denied_is_not_a_sandbox_block() {
    let sandbox = landlock();
    let ws = tempfile::tempdir().unwrap();
    let policy = SandboxPolicy::new([ws.path()]);
    let ran = run(
        &sandbox,
        &policy,
        r#"echo "sh: 1: cannot create /root/x: Permission denied" >&2
           echo "landlock: operation not permitted (EACCES)"
           exit 1"#,
        ws.path(),
        &[],
    );
    assert_eq!(ran.out.exit_code, Some(1));
    assert!(!ran.verdict.blocked, "{}", ran.describe());
    assert!(ran.verdict.reasons.is_empty(), "{}", ran.describe());
    if detection_available(&sandbox) {
        // It was really checked, and nothing was found.
        assert_eq!(ran.verdict.unchecked, None, "{}", ran.describe());
    } else {
        assert!(ran.verdict.unchecked.is_some(), "{}", ran.describe());
    }
}

#[test]
fn a_really_blocked_hook_is_reported_blocked_where_detection_works() {
    let sandbox = landlock();
    let ws = tempfile::tempdir().unwrap();
    let target = std::env::temp_dir().join(unique("detect"));
    let policy = SandboxPolicy::new([ws.path()]);
    let ran = run(
        &sandbox,
        &policy,
        r#"echo x > "$TARGET""#,
        ws.path(),
        &[("TARGET", &target)],
    );
    assert!(!exists_then_remove(&target));
    assert_ne!(ran.out.exit_code, Some(0), "{}", ran.describe());
    if detection_available(&sandbox) {
        assert!(ran.verdict.blocked, "{}", ran.describe());
        assert!(
            ran.verdict.reasons[0].contains("the OS sandbox blocked"),
            "{:?}",
            ran.verdict.reasons
        );
        assert!(
            ran.verdict.reasons.iter().any(|r| r.contains("fs.")),
            "{:?}",
            ran.verdict.reasons
        );
    } else {
        // Not guessed from the output: unknown, and said so.
        assert!(!ran.verdict.blocked, "{}", ran.describe());
        let why = ran.verdict.unchecked.as_deref().unwrap_or_default();
        assert!(!why.is_empty(), "{}", ran.describe());
        eprintln!("note: blocked run left unchecked: {why}");
    }
}

#[test]
fn a_run_that_exits_zero_is_never_blocked() {
    let sandbox = landlock();
    let ws = tempfile::tempdir().unwrap();
    let target = std::env::temp_dir().join(unique("zero"));
    let policy = SandboxPolicy::new([ws.path()]);
    let ran = run(
        &sandbox,
        &policy,
        r#"echo x > "$TARGET" 2>/dev/null; exit 0"#,
        ws.path(),
        &[("TARGET", &target)],
    );
    assert!(!exists_then_remove(&target));
    assert_eq!(ran.out.exit_code, Some(0));
    assert_eq!(ran.verdict, SandboxVerdict::default());
}

#[test]
fn missing_writable_paths_are_skipped() {
    let sandbox = landlock();
    let ws = tempfile::tempdir().unwrap();
    let missing = ws.path().join("does-not-exist");
    let file = ws.path().join("only-this-file");
    std::fs::write(&file, "a\n").unwrap();
    let policy = SandboxPolicy::new([missing.clone(), file.clone()]);
    let ran = run(
        &sandbox,
        &policy,
        r#"echo b >> "$FILE" && echo c > "$FILE.sibling""#,
        ws.path(),
        &[("FILE", &file)],
    );
    // A single writable file: appendable, but its directory is not writable.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\nb\n");
    assert!(!ws.path().join("only-this-file.sibling").exists());
    assert_ne!(ran.out.exit_code, Some(0), "{}", ran.describe());
    assert!(!missing.exists());
}

#[test]
fn self_test_passes_on_this_machine() {
    let sandbox = landlock();
    let report = sandbox::self_test(&sandbox);
    assert!(report.passed(), "{report}");
    let passed = |name: &str| {
        report
            .checks
            .iter()
            .any(|c| c.name.contains(name) && c.result == CheckResult::Passed)
    };
    assert!(passed("inside an allowed directory"), "{report}");
    assert!(passed("outside the allowed directories"), "{report}");
    assert!(passed("grandchild"), "{report}");
    assert!(passed("TMPDIR"), "{report}");
    assert!(passed("forged"), "{report}");
    if connect_command(1).is_some() {
        assert!(passed("network: false"), "{report}");
        assert!(passed("network: true"), "{report}");
    }
}
