//! Files an attacker controls (a FIFO or `/dev/zero` as a config), a pinned script
//! edited after trust, concurrent settings updates, partial settings, file modes.

use std::os::unix::fs::PermissionsExt as _;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Cmd, Env, Run};

/// Runs a command with a generous upper bound: a hang fails the test instead of
/// blocking it forever.
fn bounded(cmd: Cmd) -> Run {
    let mut c = cmd.cmd;
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the command hung on a hostile file");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    Run::from_output(out)
}

fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_fifo_or_dev_zero_as_a_config_is_a_warning_naming_it_never_a_hang() {
    for kind in ["fifo", "dev-zero"] {
        let env = Env::new();
        let config = env.workspace().join(".cursor/hooks.json");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        match kind {
            "fifo" => mkfifo(&config),
            _ => std::os::unix::fs::symlink("/dev/zero", &config).unwrap(),
        }
        let named = |r: &Run, what: &str| {
            let all = format!("{}{}", r.stdout(), r.stderr());
            assert!(
                all.contains(".cursor/hooks.json") && all.contains("not a regular file"),
                "{kind}: {what} does not name the file as not a regular file:\n{all}"
            );
        };
        let r = bounded(env.cmd().args(["list", "--untrusted-preview"]));
        named(&r, "list --untrusted-preview");
        let r = bounded(env.cmd().args(["trust"]));
        assert!(
            r.out.status.success(),
            "{kind}: trust failed: {}",
            r.stderr()
        );
        named(&r, "trust");
        let r = bounded(env.cmd().args(["lint"]));
        named(&r, "lint");
        let r = bounded(env.cmd().args([
            "--enable",
            "--json",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ]));
        assert!(
            r.out.status.success(),
            "{kind}: gate failed: {}",
            r.stderr()
        );
        named(&r, "gate");
        let warnings = r.json()["warnings"].clone();
        assert!(
            warnings.as_array().is_some_and(|w| w
                .iter()
                .any(|w| w.as_str().unwrap().contains("not a regular file"))),
            "{kind}: gate --json carries no warning: {warnings}"
        );
    }
}

#[test]
fn a_pinned_script_edited_after_trust_stops_its_hook() {
    let env = Env::new();
    let marker = env.root().join("ran");
    let script = env.script(
        "ws/.cursor/hooks/guard.sh",
        &format!("cat >/dev/null; echo ok >> {}", marker.display()),
    );
    env.project_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": "bash .cursor/hooks/guard.sh"}
        ]}})
        .to_string(),
    );
    let r = env.cmd().args(["trust"]).run().success();
    assert!(r.stdout().contains("pinned script"), "{}", r.stdout());
    let r = env.cmd().gate("run_shell", r#"{"command":"ls"}"#).success();
    assert_eq!(r.json()["runs"].as_array().unwrap().len(), 1);
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "ok\n");

    // The attack: the config is unchanged, the script it runs is not.
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho evil >> {}\n", marker.display()),
    )
    .unwrap();
    let r = env.cmd().gate("run_shell", r#"{"command":"ls"}"#).success();
    assert!(
        crate::harness::blocked(&r.json()),
        "the edited script blocks the gate"
    );
    assert_eq!(
        crate::harness::hooks_ran(&r.json()),
        0,
        "the edited script ran"
    );
    assert!(
        r.stderr()
            .contains("guard.sh changed since the workspace was trusted"),
        "{}",
        r.stderr()
    );
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "ok\n");
    let list = env.cmd().args(["list"]).run().success();
    assert!(
        list.stdout().contains("CHANGED since trusted"),
        "{}",
        list.stdout()
    );

    // Removed is changed too; trusting again runs the new content.
    std::fs::remove_file(&script).unwrap();
    let r = env.cmd().gate("run_shell", r#"{"command":"ls"}"#).success();
    assert_eq!(crate::harness::hooks_ran(&r.json()), 0);
    assert!(
        crate::harness::blocked(&r.json()),
        "a removed pinned script blocks"
    );
}

fn settings(env: &Env) -> Value {
    serde_json::from_str(&std::fs::read_to_string(env.copse_dir().join("settings.json")).unwrap())
        .unwrap()
}

#[test]
fn twenty_concurrent_trusts_record_twenty_entries() {
    let env = Env::new();
    let dirs: Vec<_> = (0..20)
        .map(|i| {
            let d = env.root().join(format!("ws{i}"));
            std::fs::create_dir_all(&d).unwrap();
            d
        })
        .collect();
    let children: Vec<_> = dirs
        .iter()
        .map(|d| {
            let mut c = env.cmd().args(["trust"]).cmd;
            c.arg(d)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            c.spawn().unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let trusted = settings(&env)["trustedWorkspaces"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(trusted, 20);
}

#[test]
fn untrust_racing_trust_never_leaves_the_untrusted_root_trusted() {
    let env = Env::new();
    let (a, b) = (env.root().join("a"), env.root().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    for _ in 0..10 {
        env.cmd().args(["trust"]).args([&a]).run().success();
        let spawn = |verb: &str, d: &std::path::Path| {
            let mut c = env.cmd().args([verb]).cmd;
            c.arg(d).stdout(std::process::Stdio::null());
            c.spawn().unwrap()
        };
        let (mut u, mut t) = (spawn("untrust", &a), spawn("trust", &b));
        assert!(u.wait().unwrap().success() && t.wait().unwrap().success());
        let paths: Vec<String> = settings(&env)["trustedWorkspaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["path"].as_str().unwrap().to_string())
            .collect();
        assert!(!paths.contains(&a.display().to_string()), "{paths:?}");
        assert!(paths.contains(&b.display().to_string()), "{paths:?}");
        env.cmd().args(["untrust"]).args([&b]).run().success();
    }
}

#[test]
fn a_wrong_typed_setting_is_a_warning_and_the_rest_applies() {
    let env = Env::new();
    let marker = env.root().join("ran");
    env.script(
        "home/.cursor/h.sh",
        &format!("cat >/dev/null; touch {}", marker.display()),
    );
    env.user_cursor(
        &json!({"hooks": {"beforeShellExecution": [{"command": "./h.sh"}]}}).to_string(),
    );
    env.write(
        "copse/settings.json",
        &json!({
            "cursorHooksEnabled": true,
            "requireSandbox": "yes",
            "retention": 5,
            "colour": "blue",
            "sandboxWritablePaths": [env.root()],
        })
        .to_string(),
    );
    let r = env
        .cmd()
        .args([
            "--json",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .run()
        .success();
    let err = r.stderr();
    let file = env.copse_dir().join("settings.json").display().to_string();
    for key in ["requireSandbox", "retention", "colour"] {
        assert!(
            err.contains(&format!("\"{key}\"")) && err.contains(&file),
            "no warning naming {key} and the file:\n{err}"
        );
    }
    assert!(err.contains("treated as true"), "{err}");
    // Hooks stay on: one wrong key does not void the file.
    assert_eq!(r.json()["runs"].as_array().unwrap().len(), 1, "{err}");
}

#[test]
fn copse_dir_and_its_files_are_private() {
    let env = Env::new();
    let dir = env.copse_dir();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(
        dir.join("settings.json"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let r = env.cmd().args(["enable"]).run().success();
    assert!(r.stderr().contains("tightened to 700"), "{}", r.stderr());
    env.user_cursor(
        &json!({"hooks": {"beforeShellExecution": [{"command": "cat >/dev/null"}]}}).to_string(),
    );
    env.cmd().gate("run_shell", r#"{"command":"ls"}"#).success();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    for f in ["settings.json", "spine.db"] {
        assert_eq!(mode(&dir.join(f)), 0o600, "{f}");
    }
}

#[test]
fn test_refuses_an_untrusted_clone_and_trust_once_stays_sandboxed() {
    let env = Env::new();
    let marker = env.root().join("ran");
    let config = env.write(
        "ws/.copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [{
            "command": format!("cat >/dev/null; echo ran >> {}", marker.display()),
            "sandbox": false,
            "timeout": 7,
        }]}})
        .to_string(),
    );
    let r = env
        .cmd()
        .args(["test"])
        .args([&config])
        .args(["toolGate"])
        .run();
    assert!(!r.out.status.success(), "an untrusted project hook ran");
    assert!(r.stderr().contains("untrusted"), "{}", r.stderr());
    assert!(!marker.exists());

    let r = env
        .cmd()
        .args(["--json", "--trust", "test"])
        .args([&config])
        .args(["toolGate"])
        .run()
        .success();
    let dry = r.json();
    assert_eq!(
        dry["sandboxed"], true,
        "trusted once, it must stay sandboxed: {dry}"
    );
    assert_eq!(dry["timeout_ms"], 7000, "the hook's own timeout: {dry}");

    // Trusted for real, its `"sandbox": false` applies.
    env.cmd().args(["trust"]).run().success();
    let r = env
        .cmd()
        .args(["--json", "test"])
        .args([&config])
        .args(["toolGate"])
        .run()
        .success();
    assert_eq!(r.json()["sandboxed"], false);
    assert!(marker.exists());
}

#[test]
fn a_malformed_tool_input_exits_2_with_one_line_naming_the_field() {
    let env = Env::new();
    for (input, field) in [
        (r#"{"command": 5}"#, "command"),
        (r#"{"command": ["rm","-rf","/"]}"#, "command"),
        (r#"{}"#, "command"),
    ] {
        let r = env
            .cmd()
            .args(["--enable", "gate", "run_shell", "--input", input])
            .run();
        assert_eq!(r.out.status.code(), Some(2), "{input}: {}", r.stderr());
        let err = r.stderr();
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(&format!("\"{field}\"")), "{err}");
    }
}

#[test]
fn read_file_content_is_bounded_and_only_read_from_regular_files() {
    let env = Env::new();
    let sizes = env.root().join("sizes");
    env.script(
        "home/.cursor/size.sh",
        &format!("wc -c >> {}", sizes.display()),
    );
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeReadFile": [{"command": "./size.sh"}]}}).to_string(),
    );
    // /dev/zero: refused at once, nothing read.
    let r = bounded(env.cmd().args([
        "--enable",
        "gate",
        "read_file",
        "--input",
        r#"{"path": "/dev/zero"}"#,
    ]));
    assert!(!r.out.status.success());
    assert!(r.stderr().contains("not a regular file"), "{}", r.stderr());
    assert!(!sizes.exists(), "a hook ran for /dev/zero");
    // A 3 MiB file: the hook sees at most 1 MiB of it.
    let big = env.workspace().join("big.txt");
    std::fs::write(&big, "a".repeat(3 << 20)).unwrap();
    env.cmd()
        .gate("read_file", &json!({"path": big}).to_string())
        .success();
    let seen: u64 = std::fs::read_to_string(&sizes)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        seen > 1 << 20 && seen < (1 << 20) + 64 * 1024,
        "stdin was {seen} bytes"
    );
}

#[test]
fn the_recursion_guard_says_it_skipped_hooks() {
    let env = Env::new();
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": "exit 2"}]}})
            .to_string(),
    );
    let r = env
        .cmd()
        .env("COPSE_HOOK_DEPTH", "1")
        .env("COPSE_HOOK_TOKEN", env.depth_token())
        .gate("run_shell", r#"{"command":"ls"}"#)
        .success();
    let stderr = r.stderr();
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.contains("recursion_guard"))
            .count(),
        1,
        "{stderr}"
    );
    assert!(r.stderr().contains("COPSE_HOOK_DEPTH"), "{}", r.stderr());
}

#[test]
fn every_config_fault_is_said_at_gate_time() {
    let faults: &[(&str, &str)] = &[
        ("invalid JSON", "not json"),
        ("wrong-shaped", "wrong"),
        ("BOM-prefixed", "bom"),
        ("parent without permission", "eacces"),
        ("symlink loop", "eloop"),
        ("not a regular file", "fifo"),
    ];
    for (name, kind) in faults {
        let env = Env::new();
        let cursor_dir = env.home().join(".cursor");
        std::fs::create_dir_all(&cursor_dir).unwrap();
        let config = cursor_dir.join("hooks.json");
        let valid =
            json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": "exit 0"}]}})
                .to_string();
        match *kind {
            "not json" => std::fs::write(&config, "{ not json").unwrap(),
            "wrong" => std::fs::write(&config, r#"{"version": 1, "hooks": []}"#).unwrap(),
            "bom" => std::fs::write(&config, format!("\u{feff}{valid}")).unwrap(),
            "eacces" => {
                std::fs::write(&config, &valid).unwrap();
                std::fs::set_permissions(&cursor_dir, std::fs::Permissions::from_mode(0o000))
                    .unwrap();
            }
            "eloop" => {
                std::os::unix::fs::symlink(cursor_dir.join("loop"), &config).unwrap();
                std::os::unix::fs::symlink(&config, cursor_dir.join("loop")).unwrap();
            }
            _ => mkfifo(&config),
        }
        // Root ignores permissions: a parent without permission cannot be tested so.
        let unreadable = *kind == "eacces" && std::fs::read_dir(&cursor_dir).is_ok();
        let r = bounded(env.cmd().args([
            "--enable",
            "--json",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ]));
        if *kind == "eacces" {
            std::fs::set_permissions(&cursor_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        if unreadable {
            continue;
        }
        assert!(r.out.status.success(), "{name}: {}", r.stderr());
        let stderr = r.stderr();
        assert!(
            stderr.lines().any(|l| l.contains(".cursor/hooks.json")),
            "{name}: nothing said on stderr:\n{stderr}"
        );
        let warnings = r.json()["warnings"].as_array().unwrap().clone();
        assert!(!warnings.is_empty(), "{name}: no warnings in --json");
        // And `list` and `lint` never call it absent.
        let list = bounded(env.cmd().args(["list"]));
        let all = format!("{}{}", list.stdout(), list.stderr());
        if matches!(*kind, "eacces" | "eloop" | "fifo") {
            assert!(
                all.contains(".cursor/hooks.json"),
                "{name}: list says nothing:\n{all}"
            );
        }
        let lint = bounded(env.cmd().args(["lint"]));
        assert!(
            !lint.stdout().contains("0 config files"),
            "{name}: lint calls it absent:\n{}",
            lint.stdout()
        );
    }
}

#[test]
fn a_fifo_as_settings_or_audit_store_never_hangs() {
    let env = Env::new();
    let settings = env.copse_dir().join("settings.json");
    std::fs::remove_file(&settings).unwrap();
    mkfifo(&settings);
    let r = bounded(env.cmd().args([
        "--json",
        "gate",
        "run_shell",
        "--input",
        r#"{"command":"ls"}"#,
    ]));
    assert!(r.out.status.success(), "{}", r.stderr());
    assert!(r.stderr().contains("not a regular file"), "{}", r.stderr());
    std::fs::remove_file(&settings).unwrap();

    for f in ["spine.db", "spine.db-wal", "spine.db-shm"] {
        let _ = std::fs::remove_file(env.copse_dir().join(f));
    }
    mkfifo(&env.copse_dir().join("spine.db"));
    let r = bounded(env.cmd().args(["log"]));
    assert!(r.stderr().contains("not a regular file"), "{}", r.stderr());
}

#[test]
fn pinned_scripts_in_trust_list_and_preview_snapshots() {
    let env = Env::new();
    let script = env.script("ws/.cursor/hooks/guard.sh", "cat >/dev/null");
    env.project_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": "bash .cursor/hooks/guard.sh"}
        ]}})
        .to_string(),
    );
    let preview = env
        .cmd()
        .args(["list", "--untrusted-preview"])
        .run()
        .success();
    insta::assert_snapshot!("pinned_scripts_preview", preview.redacted());
    let trust = env.cmd().args(["trust"]).run().success();
    insta::assert_snapshot!("pinned_scripts_trust", trust.redacted());
    std::fs::write(&script, "#!/bin/sh\necho changed\n").unwrap();
    let list = env.cmd().args(["list"]).run().success();
    insta::assert_snapshot!("pinned_scripts_list_changed", list.redacted());
    let gate = env
        .cmd()
        .args([
            "--enable",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .run()
        .success();
    insta::assert_snapshot!("pinned_scripts_gate_changed", gate.redacted());
}

#[test]
fn config_problem_at_gate_time_snapshot() {
    let env = Env::new();
    env.user_cursor("{ not json");
    let r = env
        .cmd()
        .args([
            "--enable",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .run()
        .success();
    insta::assert_snapshot!("config_problem_gate", r.redacted());
    let r = env
        .cmd()
        .args([
            "--enable",
            "gate",
            "run_shell",
            "--input",
            r#"{"command": 5}"#,
        ])
        .run();
    insta::assert_snapshot!("malformed_tool_input_gate", r.redacted());
}

/// A hook that appends one line to `marker` (the control: it really ran).
fn marker_hook(marker: &std::path::Path) -> String {
    json!({"version": 1, "hooks": {"beforeShellExecution": [{
        "command": format!("cat >/dev/null; echo ran >> {}", marker.display()),
    }]}})
    .to_string()
}

fn set_mode(path: &std::path::Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chown(path: &std::path::Path, uid: u32) {
    std::os::unix::fs::chown(path, Some(uid), None).unwrap();
}

/// `gate run_shell` with hooks on and the workspace trusted for this invocation.
fn gate_trusted(env: &Env) -> Run {
    env.cmd()
        .args([
            "--enable",
            "--trust",
            "--json",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .run()
        .success()
}

#[test]
fn a_group_or_other_writable_config_is_refused_naming_the_chmod_that_fixes_it() {
    let env = Env::new();
    let marker = env.root().join("ran");
    let project = env.project_cursor(&marker_hook(&marker));
    // Control: at 0644 the project hook runs.
    gate_trusted(&env);
    assert!(marker.exists(), "control: the project hook did not run");
    std::fs::remove_file(&marker).unwrap();
    for mode in [0o664, 0o646, 0o666] {
        set_mode(&project, mode);
        let r = gate_trusted(&env);
        assert!(!marker.exists(), "{mode:o}: a writable project config ran");
        let all = format!("{}{}", r.stdout(), r.stderr());
        let fix = format!("chmod go-w {}", project.display());
        assert!(all.contains(&fix), "{mode:o}: no `{fix}` in:\n{all}");
        assert!(all.contains("writable by group or others"), "{all}");
        // `list`, `doctor`, `lint` and `trust` say it too.
        for cmd in [
            vec!["--trust", "list"],
            vec!["--trust", "doctor"],
            vec!["lint"],
            vec!["trust"],
        ] {
            let r = env.cmd().args(&cmd).run();
            let all = format!("{}{}", r.stdout(), r.stderr());
            assert!(all.contains(&fix), "{cmd:?} does not name the fix:\n{all}");
        }
    }
    // The same for a user config.
    set_mode(&project, 0o644);
    std::fs::remove_file(&project).unwrap();
    let user = env.user_cursor(&marker_hook(&marker));
    set_mode(&user, 0o666);
    let r = gate_trusted(&env);
    assert!(!marker.exists(), "a writable user config ran");
    assert!(
        r.stderr()
            .contains(&format!("chmod go-w {}", user.display())),
        "{}",
        r.stderr()
    );
    set_mode(&user, 0o600);
    gate_trusted(&env);
    assert!(
        marker.exists(),
        "control: the fixed user config did not run"
    );
}

#[test]
fn a_config_owned_by_another_user_is_refused() {
    let env = Env::new();
    let marker = env.root().join("ran");
    let user = env.user_cursor(&marker_hook(&marker));
    // Tests run as root; `nobody` is another user.
    chown(&user, 65534);
    let r = gate_trusted(&env);
    assert!(!marker.exists(), "another user's config ran");
    let err = r.stderr();
    assert!(err.contains("owned by another user (uid 65534)"), "{err}");
    assert!(
        err.contains(&format!("chown 0 {}", user.display())),
        "{err}"
    );
    chown(&user, 0);
    gate_trusted(&env);
    assert!(
        marker.exists(),
        "control: the user's own config did not run"
    );
}

#[test]
fn a_writable_or_foreign_settings_file_means_hooks_off_and_nothing_trusted() {
    let env = Env::new();
    let marker = env.root().join("ran");
    env.user_cursor(&marker_hook(&marker));
    let settings = env.copse_dir().join("settings.json");
    std::fs::write(
        &settings,
        json!({"cursorHooksEnabled": true, "sandboxWritablePaths": [env.root()]}).to_string(),
    )
    .unwrap();
    let gate = || {
        env.cmd()
            .args([
                "--json",
                "gate",
                "run_shell",
                "--input",
                r#"{"command":"ls"}"#,
            ])
            .run()
            .success()
    };
    // Control: the file as the user keeps it turns hooks on.
    set_mode(&settings, 0o600);
    gate();
    assert!(marker.exists(), "control: hooks did not run");
    std::fs::remove_file(&marker).unwrap();
    set_mode(&settings, 0o666);
    let r = gate();
    assert!(
        !marker.exists(),
        "a world-writable settings file turned hooks on"
    );
    let err = r.stderr();
    assert!(
        err.contains(&format!("chmod go-w {}", settings.display())) && err.contains("hooks off"),
        "{err}"
    );
    // Refused, not adopted: `enable` fails naming the fix and leaves the mode alone.
    let r = env.cmd().args(["enable"]).run();
    assert!(
        !r.out.status.success(),
        "enable adopted a writable settings file"
    );
    assert!(r.stderr().contains("chmod go-w"), "{}", r.stderr());
    assert_eq!(
        std::fs::metadata(&settings).unwrap().permissions().mode() & 0o777,
        0o666
    );
    set_mode(&settings, 0o600);
    chown(&settings, 65534);
    let r = gate();
    assert!(
        !marker.exists(),
        "another user's settings file turned hooks on"
    );
    assert!(
        r.stderr().contains("owned by another user"),
        "{}",
        r.stderr()
    );
}

#[test]
fn a_copse_dir_opened_to_everyone_is_tightened_again_on_the_next_gate() {
    let env = Env::new();
    let marker = env.root().join("ran");
    env.user_cursor(&marker_hook(&marker));
    env.cmd().gate("run_shell", r#"{"command":"ls"}"#).success();
    assert!(marker.exists(), "control: the hook did not run");
    let dir = env.copse_dir();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    // What a hook could do: open the directory and the audit store to everyone.
    set_mode(&dir, 0o777);
    set_mode(&dir.join("spine.db"), 0o666);
    let r = env.cmd().gate("run_shell", r#"{"command":"ls"}"#).success();
    assert_eq!(mode(&dir), 0o700, "{}", r.stderr());
    assert_eq!(mode(&dir.join("spine.db")), 0o600);
    assert!(r.stderr().contains("tightened to 700"), "{}", r.stderr());
    // The same through the shim, in-process and through a running daemon (started
    // by the first call, before the modes were widened).
    let _stop = StopDaemon(&env);
    let payload = json!({
        "session_id": "modes", "cwd": env.workspace(), "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"},
    })
    .to_string();
    let shim = |daemon: &str| {
        let r = env
            .cmd()
            .env("COPSE_SHIM_DAEMON", daemon)
            .args(["shim", "--agent", "claude"])
            .run_with_stdin(payload.as_bytes());
        assert!(r.out.status.success(), "{}", r.stderr());
    };
    let hooks = env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [{
            "command": format!("cat >/dev/null; echo ran >> {}", marker.display()),
        }]}})
        .to_string(),
    );
    set_mode(&hooks, 0o600);
    shim("1");
    for daemon in ["0", "1"] {
        std::fs::remove_file(&marker).unwrap();
        set_mode(&dir, 0o777);
        set_mode(&dir.join("spine.db"), 0o666);
        set_mode(&dir.join("settings.json"), 0o644);
        shim(daemon);
        assert!(marker.exists(), "control: the hook did not run");
        assert_eq!(mode(&dir), 0o700, "COPSE_SHIM_DAEMON={daemon}");
        assert_eq!(
            mode(&dir.join("spine.db")),
            0o600,
            "COPSE_SHIM_DAEMON={daemon}"
        );
        assert_eq!(
            mode(&dir.join("settings.json")),
            0o600,
            "COPSE_SHIM_DAEMON={daemon}"
        );
    }
}

#[test]
fn every_wrapper_chain_and_shell_form_pins_its_script() {
    for form in [
        "sh -e x.sh",
        "bash -eu -o pipefail x.sh",
        "bash --norc +x -O extglob ./x.sh",
        "timeout 5 ./x.sh",
        "timeout -s KILL 5 ./x.sh",
        "nohup ./x.sh",
        "env A=1 ./x.sh",
        "env -i ./x.sh",
        "xargs -0 ./x.sh",
        "true && ./x.sh",
        "true; ./x.sh",
        "false || ./x.sh",
        "sh < x.sh",
        "bash < ./x.sh",
        "exec ./x.sh",
        "nice ./x.sh",
        "command ./x.sh",
        "sh -c ./x.sh",
    ] {
        let env = Env::new();
        let marker = env.root().join("ran");
        let script = env.script("ws/x.sh", &format!("echo ok >> {}", marker.display()));
        env.project_cursor(
            &json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": form}]}})
                .to_string(),
        );
        let r = env.cmd().args(["--json", "trust"]).run().success();
        let pinned: Vec<String> = r.json()["scripts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["script"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(pinned, vec![script.display().to_string()], "{form}");
        // Control: as trusted, it runs.
        env.cmd().gate("run_shell", r#"{"command":"ls"}"#).success();
        assert_eq!(
            std::fs::read_to_string(&marker).unwrap_or_default(),
            "ok\n",
            "{form}: the trusted hook did not run"
        );
        // The attack: the config is unchanged, the script it runs is not.
        std::fs::write(
            &script,
            format!("#!/bin/sh\necho evil >> {}\n", marker.display()),
        )
        .unwrap();
        let r = env.cmd().gate("run_shell", r#"{"command":"ls"}"#).success();
        assert_eq!(
            crate::harness::hooks_ran(&r.json()),
            0,
            "{form}: the edited script's hook ran"
        );
        assert!(crate::harness::blocked(&r.json()), "{form}: it blocks");
        assert_eq!(std::fs::read_to_string(&marker).unwrap(), "ok\n", "{form}");
        assert!(
            r.stderr()
                .contains("x.sh changed since the workspace was trusted"),
            "{form}: {}",
            r.stderr()
        );
    }
}

#[test]
fn trust_and_lint_warn_about_a_workspace_file_a_command_uses_unpinned() {
    let env = Env::new();
    let marker = env.root().join("ran");
    env.script("ws/data.sh", &format!("echo ok >> {}", marker.display()));
    env.project_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": "cat ./data.sh | sh"}
        ]}})
        .to_string(),
    );
    let data = env.workspace().join("data.sh").display().to_string();
    let r = env.cmd().args(["trust"]).run().success();
    assert!(
        r.stderr().contains(&data) && r.stderr().contains("trust cannot pin"),
        "{}",
        r.stderr()
    );
    let r = env.cmd().args(["lint"]).run();
    let all = format!("{}{}", r.stdout(), r.stderr());
    assert!(
        all.contains(&data) && all.contains("trust cannot pin"),
        "{all}"
    );
    // The hook really uses it.
    env.cmd().gate("run_shell", r#"{"command":"ls"}"#).success();
    assert!(marker.exists(), "control: the hook did not run");
    // Run as a script, it is pinned and nothing is said.
    env.project_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": "sh ./data.sh"}
        ]}})
        .to_string(),
    );
    let r = env.cmd().args(["trust"]).run().success();
    assert!(!r.stderr().contains("trust cannot pin"), "{}", r.stderr());
    assert!(r.stdout().contains("pinned script"), "{}", r.stdout());
}

/// Provider credentials the review saw reach hooks, and the wider families.
const CREDENTIALS: &[&str] = &[
    "HUGGINGFACEHUB_API_TOKEN",
    "HF_TOKEN",
    "NVIDIA_API_KEY",
    "NGC_API_KEY",
    "LITELLM_MASTER_KEY",
    "LITELLM_API_KEY",
    "PORTKEY_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "ANTHROPIC_API_KEY",
];

/// Runs `cmd` with every credential set (and a control variable), then checks the
/// environment the hook dumped to `dump`.
fn assert_no_credential_reached(path: &str, dump: &std::path::Path) {
    let seen = std::fs::read_to_string(dump)
        .unwrap_or_else(|e| panic!("{path}: the hook did not run (no {}: {e})", dump.display()));
    assert!(
        seen.contains("HOOK_CONTROL=visible"),
        "{path}: control variable missing:\n{seen}"
    );
    for name in CREDENTIALS {
        assert!(
            !seen.contains(&format!("{name}=")) && !seen.contains(&format!("secret-{name}")),
            "{path}: {name} reached the hook"
        );
    }
}

#[test]
fn provider_credentials_never_reach_a_hook_on_the_cli_or_the_shim() {
    let env = Env::new();
    let _stop = StopDaemon(&env);
    let dumps = env.root().join("dumps");
    std::fs::create_dir_all(&dumps).unwrap();
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [
            // Its own environment, and every environment its /proc shows (the host's
            // processes, the agent's among them, must not be there).
            {"command": format!(
                "cat >/dev/null; f={}/$COPSE_TEST_PATH; env > $f; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep secret- >> $f; true",
                dumps.display()
            )},
            // A persistent process: started once, with its own environment.
            {"command": format!(
                r#"env > {}/persistent-$COPSE_TEST_PATH; printf '%s\n' '{{"hello":{{"protocol":1,"events":["toolGate"]}}}}'; while read -r line; do id=${{line#*\"id\":}}; id=${{id%%,*}}; printf '{{"id":%s,"response":{{}}}}\n' "$id"; done"#,
                dumps.display()
            ), "persistent": true, "idleTimeout": 30},
        ]}})
        .to_string(),
    );
    env.write(
        "copse/settings.json",
        &json!({"cursorHooksEnabled": true, "sandboxWritablePaths": [env.root()]}).to_string(),
    );
    set_mode(&env.copse_dir().join("hooks.json"), 0o600);
    set_mode(&env.copse_dir().join("settings.json"), 0o600);
    let with_secrets = |cmd: Cmd, path: &str| {
        let mut cmd = cmd
            .env("HOOK_CONTROL", "visible")
            .env("COPSE_TEST_PATH", path);
        for name in CREDENTIALS {
            cmd = cmd.env(name, format!("secret-{name}"));
        }
        cmd
    };
    // The CLI's own engine.
    with_secrets(env.cmd(), "gate")
        .args([
            "--json",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .run()
        .success();
    assert_no_credential_reached("gate", &dumps.join("gate"));
    assert_no_credential_reached("gate (persistent)", &dumps.join("persistent-gate"));
    // The shim, in-process and through the daemon it starts (which inherits the
    // shim's environment).
    let payload = json!({
        "session_id": "creds", "cwd": env.workspace(), "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"},
    })
    .to_string();
    for (path, daemon) in [("shim-in-process", "0"), ("shim-daemon", "1")] {
        let r = with_secrets(env.cmd(), path)
            .env("COPSE_SHIM_DAEMON", daemon)
            .args(["shim", "--agent", "claude"])
            .run_with_stdin(payload.as_bytes());
        assert!(r.out.status.success(), "{path}: {}", r.stderr());
        assert_no_credential_reached(path, &dumps.join(path));
        assert_no_credential_reached(path, &dumps.join(format!("persistent-{path}")));
    }
    // The second call really was the daemon's (it records so after replying).
    let served = env.copse_dir().join("shim/served/claude.json");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&served).is_ok_and(|t| t.contains("\"daemon\"")) {
        assert!(
            Instant::now() < deadline,
            "the daemon never served the call"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Stops the test's daemon (if one runs) when the test ends, pass or fail.
struct StopDaemon<'a>(&'a Env);

impl Drop for StopDaemon<'_> {
    fn drop(&mut self) {
        let _ = self.0.cmd().args(["daemon", "stop"]).run();
    }
}

/// A minimal JSON-RPC client over `copse-hooks serve`'s stdio: one request at a time,
/// skipping notifications.
struct Rpc {
    child: std::process::Child,
    out: std::io::BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Rpc {
    fn start(cmd: Cmd) -> Rpc {
        let mut c = cmd.args(["serve"]).cmd;
        c.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let mut child = c.spawn().unwrap();
        let out = std::io::BufReader::new(child.stdout.take().unwrap());
        Rpc {
            child,
            out,
            next: 0,
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        use std::io::{BufRead as _, Write as _};
        self.next += 1;
        let id = self.next;
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(
            stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )
        .unwrap();
        stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(self.out.read_line(&mut line).unwrap() > 0, "serve exited");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_json_rpc_server_refuses_a_writable_config_and_scrubs_credentials() {
    let env = Env::new();
    let dump = env.root().join("dump");
    let marker = env.root().join("ran");
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [{
            "command": format!("cat >/dev/null; env > {}", dump.display()),
        }]}})
        .to_string(),
    );
    let project = env.write(
        "ws/.copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [{
            "command": format!("cat >/dev/null; echo ran >> {}", marker.display()),
        }]}})
        .to_string(),
    );
    set_mode(&project, 0o666);
    let mut cmd = env.cmd().env("HOOK_CONTROL", "visible");
    for name in CREDENTIALS {
        cmd = cmd.env(name, format!("secret-{name}"));
    }
    let mut rpc = Rpc::start(cmd);
    rpc.call(
        "initialize",
        json!({"workspaceRoots": [env.workspace()], "enabled": true, "trusted": true,
            "clientInfo": {"name": "it", "version": "1"}, "protocolVersion": "2026-12-01"}),
    );
    let sid = rpc.call("session/open", json!({"conversationId": "c"}))["sessionId"].clone();
    let gate = json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}});
    let v = rpc.call("hooks/toolGate", gate.clone());
    assert_no_credential_reached("serve", &dump);
    assert!(
        !marker.exists(),
        "a world-writable project config ran under serve"
    );
    let fix = format!("chmod go-w {}", project.display());
    assert!(v.to_string().contains(&fix), "no `{fix}` in {v:#}");
    // Control: fixed, the same project hook runs on the next request.
    set_mode(&project, 0o644);
    rpc.call("hooks/toolGate", gate);
    assert!(
        marker.exists(),
        "control: the fixed project config did not run"
    );
}
