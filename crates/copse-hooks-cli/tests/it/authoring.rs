//! The hook author's loop: `init` writes a first hook, `trust --diff` shows what an
//! edit changed, the changed-config notice names the exact command, and `watch` shows
//! runs live and trusts an edit only on a keypress at a terminal.

use std::io::{Read as _, Write as _};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{Env, redact};

const DIALECTS: [&str; 5] = ["cursor", "claude", "gemini", "codex", "copse"];

fn init(env: &Env, dialect: &str) {
    env.cmd()
        .args(["init", "--dialect", dialect])
        .run()
        .success();
}

fn gate(env: &Env, command: &str) -> Value {
    env.cmd()
        .gate(
            "run_shell",
            &serde_json::json!({ "command": command }).to_string(),
        )
        .success()
        .json()
}

#[test]
fn init_writes_a_working_first_hook_for_every_dialect() {
    for dialect in DIALECTS {
        let env = Env::new();
        let r = env
            .cmd()
            .args(["init", "--dialect", dialect])
            .run()
            .success();
        insta::assert_snapshot!(format!("init_{dialect}"), r.redacted());
        // The config is clean as lint sees it.
        env.cmd().args(["lint", "--deny-warnings"]).run().success();
        env.cmd().args(["trust"]).run().success();
        // The guard ran and denied (its decision is the run's, not a default).
        let v = gate(&env, "rm -rf /");
        assert_eq!(v["decision"], "deny", "{dialect}: {v}");
        assert_eq!(v["runs"].as_array().unwrap().len(), 1, "{dialect}: {v}");
        // Control: the same hook ran for a harmless command and let it through.
        let v = gate(&env, "ls -la");
        assert_eq!(v["decision"], "allow", "{dialect}: {v}");
        assert_eq!(v["runs"].as_array().unwrap().len(), 1, "{dialect}: {v}");
        // A second init writes nothing over the first.
        let r = env.cmd().args(["init", "--dialect", dialect]).run();
        assert_eq!(r.out.status.code(), Some(2), "{dialect}");
    }
}

#[test]
fn init_never_overwrites_a_file() {
    let env = Env::new();
    let existing = env.write("ws/.claude/settings.json", "{\"permissions\": {}}\n");
    let r = env.cmd().args(["init", "--dialect", "claude"]).run();
    assert_eq!(r.out.status.code(), Some(2));
    insta::assert_snapshot!("init_refuses_to_overwrite", r.redacted());
    assert_eq!(
        std::fs::read_to_string(&existing).unwrap(),
        "{\"permissions\": {}}\n"
    );
    assert!(!env.workspace().join(".claude/hooks/guard.sh").exists());
    let v = env
        .cmd()
        .args(["--json", "init", "--dialect", "copse"])
        .run()
        .success()
        .json();
    assert_eq!(v["dialect"], "copse");
    assert_eq!(v["files"].as_array().unwrap().len(), 2);
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(env.workspace().join(".copse/hooks/guard.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "the script is executable");
}

#[test]
fn an_edit_names_the_exact_trust_command_and_trust_diff_shows_it() {
    let env = Env::new();
    init(&env, "copse");
    env.cmd().args(["trust"]).run().success();
    // The pinned copies are private.
    let store = env.copse_dir().join("trust");
    use std::os::unix::fs::PermissionsExt as _;
    let copies: Vec<_> = std::fs::read_dir(&store).unwrap().flatten().collect();
    assert_eq!(copies.len(), 2, "config and script kept");
    for c in &copies {
        assert_eq!(c.metadata().unwrap().permissions().mode() & 0o777, 0o600);
    }
    let r = env.cmd().args(["trust", "--diff"]).run().success();
    insta::assert_snapshot!("trust_diff_unchanged", r.redacted());

    let script = env.workspace().join(".copse/hooks/guard.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    std::fs::write(&script, append_before_last_exit(&text, "echo edited >&2")).unwrap();
    let r = env
        .cmd()
        .args([
            "--enable",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"rm -rf /"}"#,
        ])
        .run()
        .success();
    assert!(!r.stderr().contains("trust DIR"), "{}", r.stderr());
    insta::assert_snapshot!("gate_after_edit", r.redacted());

    let r = env.cmd().args(["trust", "--diff"]).run().success();
    insta::assert_snapshot!("trust_diff_changed", r.redacted());
    let v = env
        .cmd()
        .args(["--json", "trust", "--diff"])
        .run()
        .success()
        .json();
    assert_eq!(v["changed"], true);
    let changed: Vec<&Value> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["state"] != "unchanged")
        .collect();
    assert_eq!(changed.len(), 1, "{v}");
    assert_eq!(changed[0]["kind"], "script");
    assert!(
        changed[0]["diff"]
            .as_str()
            .unwrap()
            .contains("\n+echo edited >&2\n"),
        "{v}"
    );
    // Trusting again lets the hook run (control: it denies).
    env.cmd().args(["trust"]).run().success();
    assert_eq!(gate(&env, "rm -rf /")["decision"], "deny");
    // The copy of the old script is gone: only pinned content is kept.
    assert_eq!(std::fs::read_dir(&store).unwrap().count(), 2);
}

#[test]
fn trust_diff_without_a_kept_copy_says_so_and_shows_the_file() {
    let env = Env::new();
    init(&env, "cursor");
    env.cmd().args(["trust"]).run().success();
    // As if trusted by a version that kept no copies.
    std::fs::remove_dir_all(env.copse_dir().join("trust")).unwrap();
    env.write(
        "ws/.cursor/hooks.json",
        r#"{"version": 1, "hooks": {"beforeShellExecution": [{"command": ".cursor/hooks/guard.sh"}]}}"#,
    );
    let r = env.cmd().args(["trust", "--diff"]).run().success();
    insta::assert_snapshot!("trust_diff_no_copy", r.redacted());
    let r = env.cmd().args(["untrust"]).run().success();
    drop(r);
    let r = env.cmd().args(["trust", "--diff"]).run().success();
    insta::assert_snapshot!("trust_diff_not_trusted", r.redacted());
}

/// Output of a running child, gathered by a thread, searchable as it grows.
struct Live {
    child: Child,
    rx: mpsc::Receiver<Vec<u8>>,
    seen: String,
}

impl Live {
    fn start(mut cmd: std::process::Command, stdin: Stdio) -> Live {
        cmd.stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let (tx, rx) = mpsc::channel();
        for mut stream in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            });
        }
        Live {
            child,
            rx,
            seen: String::new(),
        }
    }

    /// Waits until `text` appears after everything already waited for; returns what
    /// came up to it. A generous guard turns a hang into a failure with the output.
    fn wait_for(&mut self, text: &str) -> String {
        loop {
            if let Some(i) = self.seen.find(text) {
                let upto = self.seen[..i + text.len()].to_string();
                self.seen = self.seen[i + text.len()..].to_string();
                return upto;
            }
            match self.rx.recv_timeout(Duration::from_secs(120)) {
                Ok(chunk) => self.seen.push_str(&String::from_utf8_lossy(&chunk)),
                Err(_) => panic!("never saw {text:?}; output so far:\n{}", self.seen),
            }
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn edit_script(env: &Env, line: &str) {
    let script = env.workspace().join(".copse/hooks/guard.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    // Atomically (a rename), so `watch` never sees a half-written file.
    let tmp = script.with_extension("tmp");
    std::fs::write(&tmp, append_before_last_exit(&text, line)).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::rename(&tmp, &script).unwrap();
}

/// The script with `line` added before its final `exit 0`.
fn append_before_last_exit(text: &str, line: &str) -> String {
    let at = text.rfind("exit 0\n").unwrap();
    format!("{}{line}\n{}", &text[..at], &text[at..])
}

fn still_changed(env: &Env) -> bool {
    env.cmd()
        .args(["--json", "trust", "--diff"])
        .run()
        .success()
        .json()["changed"]
        == true
}

#[test]
fn watch_without_a_terminal_shows_runs_and_diffs_but_never_trusts() {
    let env = Env::new();
    init(&env, "copse");
    env.cmd().args(["trust"]).run().success();
    // Piped keys are not consent: a `y` on a pipe must not trust anything.
    let (reader, mut writer) = std::io::pipe().unwrap();
    let mut live = Live::start(env.cmd().args(["watch"]).cmd, Stdio::from(reader));
    live.wait_for("stdin is not a terminal");
    // A run appears live (control: the watched hook really ran and denied).
    gate(&env, "rm -rf /");
    let line = live.wait_for(".copse/hooks/guard.sh");
    assert!(line.contains("toolGate deny"), "{line}");
    assert!(line.contains("run_shell rm -rf / · hook "), "{line}");
    edit_script(&env, "echo edited >&2");
    writer.write_all(b"yyyy\n").unwrap();
    let shown = live.wait_for("To let them run: copse-hooks trust ");
    assert!(shown.contains("+echo edited >&2"), "{shown}");
    assert!(!shown.contains("[y/N]"), "{shown}");
    // The hook stays off: the edit was never trusted.
    assert!(still_changed(&env));
    let v = gate(&env, "rm -rf /");
    assert_eq!(crate::harness::hooks_ran(&v), 0);
    assert!(crate::harness::blocked(&v), "the changed hook blocks: {v}");
    assert!(still_changed(&env));
}

/// A pseudo-terminal: the child's stdin is the terminal, keys are written to the master.
fn pty() -> (std::fs::File, std::os::fd::OwnedFd) {
    use std::os::fd::FromRawFd as _;
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two new descriptors into the out-parameters; the null
    // name, termios and winsize pointers are allowed.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty failed");
    // SAFETY: both descriptors are new and owned here alone.
    unsafe {
        (
            std::fs::File::from_raw_fd(master),
            std::os::fd::OwnedFd::from_raw_fd(slave),
        )
    }
}

#[test]
fn watch_at_a_terminal_trusts_an_edit_only_on_y() {
    let env = Env::new();
    init(&env, "copse");
    env.cmd().args(["trust"]).run().success();
    let (mut master, slave) = pty();
    let mut live = Live::start(env.cmd().args(["watch"]).cmd, Stdio::from(slave));
    live.wait_for("`q` quits.");

    edit_script(&env, "echo first >&2");
    let shown = live.wait_for("[y/N] ");
    assert!(shown.contains("+echo first >&2"), "{shown}");
    master.write_all(b"n").unwrap();
    live.wait_for("Not trusted.");
    assert!(still_changed(&env), "declined: nothing trusted");
    let v = gate(&env, "rm -rf /");
    assert_eq!(crate::harness::hooks_ran(&v), 0);
    assert!(crate::harness::blocked(&v), "the changed hook blocks: {v}");

    edit_script(&env, "echo second >&2");
    let shown = live.wait_for("[y/N] ");
    assert!(shown.contains("+echo second >&2"), "{shown}");
    master.write_all(b"y").unwrap();
    live.wait_for("Trusted ");
    assert!(!still_changed(&env));
    // Control: the edited hook runs again, and still denies.
    assert_eq!(gate(&env, "rm -rf /")["decision"], "deny");

    master.write_all(b"q").unwrap();
    let status = live.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_changed_config_notice_quotes_the_root() {
    // The notice for a changed config quotes a root with a space as one shell word.
    let env = Env::new();
    let ws = env.root().join("my ws");
    std::fs::create_dir_all(&ws).unwrap();
    env.cmd()
        .args(["--workspace"])
        .arg(&ws)
        .args(["init"])
        .run()
        .success();
    env.cmd().arg("trust").arg(&ws).run().success();
    std::fs::write(
        ws.join(".copse/hooks.json"),
        "{\"version\": 1, \"hooks\": {}}\n",
    )
    .unwrap();
    let r = env
        .cmd()
        .arg("--workspace")
        .arg(&ws)
        .args([
            "--enable",
            "gate",
            "run_shell",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .run()
        .success();
    let text = redact(&r.stderr(), &env.root());
    assert!(text.contains("`copse-hooks trust '[TMP]/my ws'`"), "{text}");
}

/// The keys of a `--json` object are exactly its schema's properties, and every
/// required one is there.
fn fits_schema(v: &Value, name: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../schemas/output")
        .join(format!("{name}.schema.json"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let props = schema["properties"].as_object().unwrap();
    for key in v.as_object().unwrap().keys() {
        assert!(
            props.contains_key(key),
            "{name}: `{key}` is not in the schema"
        );
    }
    for key in schema["required"].as_array().unwrap() {
        assert!(
            v.get(key.as_str().unwrap()).is_some(),
            "{name}: `{key}` missing"
        );
    }
}

#[test]
fn trust_diff_and_init_json_fit_their_schemas() {
    let env = Env::new();
    let v = env
        .cmd()
        .args(["--json", "init", "--dialect", "gemini"])
        .run()
        .success()
        .json();
    fits_schema(&v, "init");
    assert_eq!(v["version"], 1);
    let v = env
        .cmd()
        .args(["--json", "trust", "--diff"])
        .run()
        .success()
        .json();
    fits_schema(&v, "trust-diff");
    assert_eq!(
        (v["trusted"].clone(), v["changed"].clone()),
        (false.into(), false.into())
    );
    env.cmd().args(["trust"]).run().success();
    std::fs::write(env.workspace().join(".gemini/settings.json"), "{}\n").unwrap();
    let v = env
        .cmd()
        .args(["--json", "trust", "--diff"])
        .run()
        .success()
        .json();
    fits_schema(&v, "trust-diff");
    assert_eq!(v["changed"], true);
    let config = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "config" && f["state"] == "changed")
        .unwrap();
    assert_eq!(config["pinned_copy"], true);
    assert!(
        config["diff"].as_str().unwrap().contains("\n+{}\n"),
        "{config}"
    );
    assert!(
        v["trust_command"]
            .as_str()
            .unwrap()
            .starts_with("copse-hooks trust /")
    );
}
