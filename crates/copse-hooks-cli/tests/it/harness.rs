//! A small fluent harness: a temp home, a temp workspace, config files and hook
//! scripts written into them, and the `copse-hooks` binary run against them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let env = Env { dir };
        std::fs::create_dir_all(env.home()).unwrap();
        std::fs::create_dir_all(env.workspace()).unwrap();
        std::fs::create_dir_all(env.copse_dir()).unwrap();
        // Hooks in these tests leave markers anywhere under the temp dir; the sandbox
        // itself is tested on its own (tests/it/sandbox.rs).
        env.write(
            "copse/settings.json",
            &serde_json::json!({"sandboxWritablePaths": [env.root()]}).to_string(),
        );
        // Private as copse-hooks keeps them, so no output depends on the umask.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(env.copse_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(
            env.copse_dir().join("settings.json"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        env
    }

    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }
    pub fn home(&self) -> PathBuf {
        self.root().join("home")
    }
    pub fn workspace(&self) -> PathBuf {
        self.root().join("ws")
    }
    pub fn copse_dir(&self) -> PathBuf {
        self.root().join("copse")
    }

    /// Writes a file (creating parents) and returns its path.
    pub fn write(&self, path: impl AsRef<Path>, text: &str) -> PathBuf {
        let path = self.root().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Writes an executable script.
    pub fn script(&self, path: impl AsRef<Path>, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = self.write(path, &format!("#!/bin/sh\n{body}\n"));
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    pub fn user_cursor(&self, json: &str) -> PathBuf {
        self.write("home/.cursor/hooks.json", json)
    }
    pub fn project_cursor(&self, json: &str) -> PathBuf {
        self.write("ws/.cursor/hooks.json", json)
    }

    /// The `COPSE_HOOK_TOKEN` copse-hooks hands a hook at depth 1 under this
    /// `$COPSE_DIR` (making its key, as the first hook run does): with it a
    /// `COPSE_HOOK_DEPTH=1` is a real one, inside one of our hooks.
    pub fn depth_token(&self) -> String {
        copse_hooks::depth_token(&self.copse_dir(), 1).unwrap()
    }

    pub fn cmd(&self) -> Cmd {
        let mut c = Command::new(env!("CARGO_BIN_EXE_copse-hooks"));
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("COPSE_DIR", self.copse_dir())
            .env("NO_COLOR", "1")
            .current_dir(self.workspace());
        Cmd {
            cmd: c,
            root: self.root(),
        }
    }
}

pub struct Cmd {
    pub cmd: Command,
    root: PathBuf,
}

impl Cmd {
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.cmd.args(args);
        self
    }
    pub fn arg(mut self, a: impl AsRef<std::ffi::OsStr>) -> Self {
        self.cmd.arg(a);
        self
    }
    pub fn env(mut self, k: &str, v: impl AsRef<std::ffi::OsStr>) -> Self {
        self.cmd.env(k, v);
        self
    }
    pub fn run(mut self) -> Run {
        let out = self.cmd.output().unwrap();
        Run {
            out,
            root: self.root,
        }
    }
    /// Runs with `input` on stdin.
    pub fn run_with_stdin(mut self, input: &[u8]) -> Run {
        use std::io::Write as _;
        use std::process::Stdio;
        self.cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = self.cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input).unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        Run {
            out,
            root: self.root,
        }
    }
    /// Runs with stdout closed before the command writes anything (a reader that
    /// went away, like `| head -0`): returns the status and stderr.
    pub fn run_with_closed_stdout(mut self) -> (std::process::ExitStatus, String) {
        use std::io::Read as _;
        use std::process::Stdio;
        self.cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = self.cmd.spawn().unwrap();
        drop(child.stdout.take());
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        (child.wait().unwrap(), err)
    }
    /// `gate TOOL --input JSON --json` with hooks enabled.
    pub fn gate(self, tool: &str, input: &str) -> Run {
        self.args(["--enable", "--json", "gate", tool, "--input", input])
            .run()
    }
}

pub struct Run {
    pub out: Output,
    root: PathBuf,
}

impl Run {
    /// A run from a process's output (for callers that spawn themselves).
    pub fn from_output(out: Output) -> Run {
        Run {
            out,
            root: PathBuf::new(),
        }
    }

    pub fn success(self) -> Self {
        assert!(
            self.out.status.success(),
            "command failed: {:?}\nstdout:\n{}\nstderr:\n{}",
            self.out.status,
            self.stdout(),
            self.stderr()
        );
        self
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.out.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout()))
    }
    /// Output with the temp root and timings replaced, for snapshots.
    pub fn redacted(&self) -> String {
        redact(&format!("{}{}", self.stdout(), self.stderr()), &self.root)
    }
}

/// Runs `copse-hooks shim --agent AGENT` with `vars` set and `payload` on its stdin.
pub fn run_shim(env: &Env, agent: &str, vars: &[(&str, &str)], payload: &str) -> Output {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut cmd = env.cmd().args(["shim", "--agent", agent]);
    for (k, v) in vars {
        cmd = cmd.env(k, v);
    }
    let mut child = cmd
        .cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A shim's answer on stdout as JSON, or `Null` when there is none.
pub fn shim_answer(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    if text.trim().is_empty() {
        return Value::Null;
    }
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// Stops the test's user daemon when the test ends, passed or not.
pub struct DaemonStop<'a>(pub &'a Env);

impl Drop for DaemonStop<'_> {
    fn drop(&mut self) {
        let _ = self.0.cmd().args(["daemon", "stop"]).run();
    }
}

/// How many hooks a `gate --json` verdict ran: its runs less those that stand for a
/// config that could not run (`blocked`).
pub fn hooks_ran(v: &Value) -> usize {
    v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["blocked"] != true)
        .count()
}

/// Whether a `gate --json` verdict was blocked by a config that could not run.
pub fn blocked(v: &Value) -> bool {
    v["decision"] == "deny"
        && v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["blocked"] == true)
}

pub fn redact(text: &str, root: &Path) -> String {
    let text = text.replace(&root.display().to_string(), "[TMP]");
    regex_lite_replace(&text)
}

/// Replaces `<digits> ms` and `"duration_ms": <digits>` with fixed values.
fn regex_lite_replace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut l = line.to_string();
        for key in ["\"duration_ms\": ", "\"duration_ms\":"] {
            let mut from = 0;
            while let Some(i) = l[from..].find(key) {
                let start = from + i + key.len();
                let end = l[start..]
                    .find(|c: char| !c.is_ascii_digit())
                    .map(|e| start + e)
                    .unwrap_or(l.len());
                if end > start {
                    l.replace_range(start..end, "[MS]");
                }
                from = start;
            }
        }
        // What the machine's kernel enforces is not part of these snapshots.
        if l.starts_with("Sandbox") {
            l = "Sandbox: [STATUS]".to_string();
        }
        for state in ["enforced", "unenforced"] {
            l = l.replace(&format!("[sandbox {state}]"), "[sandbox [SANDBOX]]");
        }
        for state in ["\"enforced\"", "\"unenforced\""] {
            l = l.replace(
                &format!("\"sandbox\": {state}"),
                "\"sandbox\": \"[SANDBOX]\"",
            );
            l = l.replace(&format!("\"sandbox\":{state}"), "\"sandbox\":\"[SANDBOX]\"");
        }
        l = redact_tool_use_ids(&l);
        out.push_str(&replace_ms_words(&l));
        out.push('\n');
    }
    out
}

/// Generated tool use ids (`toolu_copse_<hex>`) become `[TOOL_USE_ID]`.
fn redact_tool_use_ids(line: &str) -> String {
    const PREFIX: &str = "toolu_copse_";
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find(PREFIX) {
        out.push_str(&rest[..i]);
        let tail = &rest[i + PREFIX.len()..];
        let end = tail
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(tail.len());
        out.push_str("[TOOL_USE_ID]");
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

fn replace_ms_words(line: &str) -> String {
    let bytes: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_alphanumeric()) {
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == '.') {
                j += 1;
            }
            let rest: String = bytes[j..].iter().collect();
            if rest.starts_with(" ms") {
                out.push_str("[N]");
                i = j;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}
