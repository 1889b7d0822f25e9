//! `copse-hooks serve` and the daemon: the JSON-RPC protocol driven through the real
//! binary, with real hook processes.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::Env;

/// A generous bound that only catches hangs.
const HANG: Duration = Duration::from_secs(60);

/// A JSON-RPC client over any pair of streams.
struct Client {
    writer: Box<dyn Write + Send>,
    lines: Receiver<Value>,
    /// Messages received while waiting for another.
    pending: Vec<Value>,
    next: u64,
}

impl Client {
    fn new(reader: impl std::io::Read + Send + 'static, writer: Box<dyn Write + Send>) -> Client {
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("server wrote a non-JSON line ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Client {
            writer,
            lines: rx,
            pending: Vec::new(),
            next: 100,
        }
    }

    fn raw(&mut self, line: &[u8]) {
        self.writer.write_all(line).unwrap();
        self.writer.write_all(b"\n").unwrap();
        self.writer.flush().unwrap();
    }

    fn send(&mut self, msg: &Value) {
        self.raw(msg.to_string().as_bytes());
    }

    /// Sends a request; returns its id.
    fn start(&mut self, method: &str, params: Value) -> u64 {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn recv(&mut self) -> Value {
        self.lines
            .recv_timeout(HANG)
            .expect("the server answered within the hang bound")
    }

    /// Waits for the response to `id`, keeping everything else.
    fn wait(&mut self, id: u64) -> Value {
        if let Some(i) = self.pending.iter().position(|m| m["id"] == json!(id)) {
            return self.pending.remove(i);
        }
        loop {
            let m = self.recv();
            if m["id"] == json!(id) {
                return m;
            }
            self.pending.push(m);
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.start(method, params);
        let m = self.wait(id);
        assert_eq!(m["jsonrpc"], "2.0");
        m
    }

    fn ok(&mut self, method: &str, params: Value) -> Value {
        let m = self.call(method, params);
        assert!(m.get("error").is_none(), "{method} failed: {m}");
        m["result"].clone()
    }

    fn error(&mut self, method: &str, params: Value) -> (i64, String) {
        let m = self.call(method, params);
        (
            m["error"]["code"]
                .as_i64()
                .unwrap_or_else(|| panic!("no error: {m}")),
            m["error"]["message"].as_str().unwrap().to_owned(),
        )
    }

    fn initialize(&mut self, env: &Env, trusted: bool) -> Value {
        self.ok(
            "initialize",
            json!({
                "workspaceRoots": [env.workspace()],
                "enabled": true,
                "trusted": trusted,
                "clientInfo": {"name": "it", "version": "1"},
                "protocolVersion": "2026-12-01",
            }),
        )
    }

    fn open(&mut self, conversation: &str) -> String {
        self.ok("session/open", json!({"conversationId": conversation}))["sessionId"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Waits for a notification of `method`.
    fn notification(&mut self, method: &str) -> Value {
        if let Some(i) = self.pending.iter().position(|m| m["method"] == method) {
            return self.pending.remove(i);
        }
        loop {
            let m = self.recv();
            if m["method"] == method {
                return m;
            }
            self.pending.push(m);
        }
    }
}

struct Stdio_ {
    child: Child,
    client: Client,
}

fn serve(env: &Env) -> Stdio_ {
    let mut cmd = env.cmd().args(["serve"]).cmd;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = cmd.spawn().unwrap();
    let stdin: ChildStdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    Stdio_ {
        child,
        client: Client::new(stdout, Box::new(stdin)),
    }
}

fn connect(socket: &Path) -> Client {
    let stream = UnixStream::connect(socket).unwrap();
    let reader = stream.try_clone().unwrap();
    Client::new(reader, Box::new(stream))
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + HANG;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn wait_for_file(path: &Path) -> String {
    let deadline = Instant::now() + HANG;
    loop {
        if let Ok(s) = std::fs::read_to_string(path)
            && s.ends_with('\n')
        {
            return s.trim().to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether a process is gone (reaped, or a zombie nobody waits on).
fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// The `sleep` argument unique to this test's slow hook: hooks see only their own
/// pid namespace, so the test finds the host pid of that `sleep` by its command line.
fn sleep_arg(env: &Env) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    env.root().hash(&mut h);
    format!("1000.{}", h.finish() % 1_000_000)
}

/// The host pid of the slow hook's `sleep`, once it runs.
fn sleeping_pid(env: &Env) -> String {
    wait_for_file(&env.root().join("sleep.pid"));
    let arg = sleep_arg(env);
    let deadline = Instant::now() + HANG;
    loop {
        for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
            let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            let words: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            if words.len() >= 2 && words[0].ends_with(b"sleep") && words[1] == arg.as_bytes() {
                return entry.file_name().to_string_lossy().into_owned();
            }
        }
        assert!(Instant::now() < deadline, "the slow hook's sleep never ran");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn wait_gone(pid: &str) {
    let deadline = Instant::now() + HANG;
    while !gone(pid) {
        assert!(
            Instant::now() < deadline,
            "hook process {pid} outlived its run"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// User hooks: a deny on `rm`, a slow hook on `slow` that records the pid of its
/// `sleep` then waits for a marker, a queue message on `stop`, observers elsewhere.
fn setup(env: &Env) {
    let slow = env.script(
        "home/.cursor/slow.sh",
        &format!(
            "cat >/dev/null\nread p _ </proc/self/stat; echo $p > {pids}/hook.pid\nsh -c 'read p _ </proc/self/stat; echo $p > {pids}/sleep.tmp; mv {pids}/sleep.tmp {pids}/sleep.pid; exec sleep {arg}' &\nwhile [ ! -e {pids}/go ]; do sleep 0.02; done\nkill $!\necho '{{\"permission\":\"allow\"}}'",
            pids = env.root().display(),
            arg = sleep_arg(env)
        ),
    );
    let deny = env.script(
        "home/.cursor/deny.sh",
        "cat >/dev/null\necho '{\"permission\":\"deny\",\"agent_message\":\"no rm\"}'",
    );
    let followup = env.script(
        "home/.cursor/followup.sh",
        "cat >/dev/null\necho '{\"followup_message\":\"run the tests\"}'",
    );
    let observe = env.script(
        "home/.cursor/observe.sh",
        &format!(
            "cat >> {}/observed.log; echo >> {}/observed.log",
            env.root().display(),
            env.root().display()
        ),
    );
    let o = observe.display().to_string();
    env.user_cursor(
        &json!({"version": 1, "hooks": {
            "beforeShellExecution": [
                {"command": slow.display().to_string(), "matcher": "slow"},
                {"command": deny.display().to_string(), "matcher": "rm "},
            ],
            "stop": [{"command": followup.display().to_string()}],
            "beforeSubmitPrompt": [{"command": o}],
            "afterShellExecution": [{"command": o}],
            "afterFileEdit": [{"command": o}],
            "subagentStart": [{"command": o}],
            "subagentStop": [{"command": o}],
            "sessionStart": [{"command": o}],
            "sessionEnd": [{"command": o}],
            "preCompact": [{"command": o}],
            "afterAgentResponse": [{"command": o}],
            "afterAgentThought": [{"command": o}],
        }})
        .to_string(),
    );
}

#[test]
fn every_method_answers_and_stdio_exits_zero() {
    let env = Env::new();
    setup(&env);
    let mut s = serve(&env);
    let c = &mut s.client;
    let init = c.initialize(&env, false);
    assert_eq!(init["serverInfo"]["name"], "copse-hooks");
    assert_eq!(init["protocolVersion"], "2026-12-01");
    let methods = init["capabilities"]["methods"].as_array().unwrap();
    assert!(methods.contains(&json!("hooks/toolGate")) && methods.contains(&json!("queue/drain")));
    let sid = c.open("conv-1");

    // Blocking events answer with the verdict (the fields of `gate --json`).
    let v = c.ok(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "rm -rf build"}}),
    );
    assert_eq!(v["detached"], false);
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["agent_message"], "no rm");
    assert_eq!(v["runs"][0]["outcome"], "deny");
    let v = c.ok(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}}),
    );
    assert_eq!(
        (v["decision"].clone(), v["runs"].clone()),
        (json!("allow"), json!([]))
    );
    let v = c.ok(
        "hooks/beforeSubmitPrompt",
        json!({"sessionId": sid, "prompt": "hello"}),
    );
    assert_eq!(v["detached"], false);
    let v = c.ok(
        "hooks/subagentStart",
        json!({"sessionId": sid, "subagentType": "explore"}),
    );
    assert_eq!(v["detached"], false);
    let v = c.ok("hooks/afterFileEdit", json!({"sessionId": sid, "filePath": "src/a.rs", "edits": [{"oldString": "a", "newString": "b"}]}));
    assert_eq!(v["detached"], false);
    assert_eq!(v["runs"].as_array().unwrap().len(), 1);

    // sessionStart and preCompact are awaited: their hooks may inject context or
    // block compaction (the dialects' vendors say so), so they answer with a verdict.
    for (method, params) in [
        ("hooks/sessionStart", json!({"firstTurn": true})),
        (
            "hooks/preCompact",
            json!({"trigger": "auto", "contextUsagePercent": 91.5}),
        ),
    ] {
        let mut params = params;
        params["sessionId"] = json!(sid);
        let v = c.ok(method, params);
        assert_eq!(v["detached"], false, "{method}: {v}");
        assert_eq!(v["runs"].as_array().map(Vec::len), Some(1), "{method}: {v}");
    }

    // Observation events answer at once with {detached: true}.
    for (method, params) in [
        (
            "hooks/afterToolUse",
            json!({"tool": "run_shell", "input": {"command": "ls"}, "output": "a\nb", "durationMs": 3}),
        ),
        (
            "hooks/subagentStop",
            json!({"subagentType": "explore", "status": "completed"}),
        ),
        ("hooks/afterAgentResponse", json!({"text": "done"})),
        (
            "hooks/afterAgentThought",
            json!({"text": "hmm", "durationMs": 5}),
        ),
        (
            "hooks/sessionEnd",
            json!({"reason": "completed", "durationMs": 10}),
        ),
    ] {
        let mut params = params;
        params["sessionId"] = json!(sid);
        let v = c.ok(method, params);
        assert_eq!(
            v,
            json!({"detached": true, "dispatched": 1, "dropped": 0}),
            "{method}"
        );
    }
    // The stop hook queues a message: a notification, then the drain returns it.
    let v = c.ok(
        "hooks/stop",
        json!({"sessionId": sid, "status": "completed"}),
    );
    assert_eq!(v["detached"], true);
    let n = c.notification("queue/message");
    assert_eq!(n["params"]["sessionId"], json!(sid));
    assert_eq!(n["params"]["text"], "run the tests");
    assert!(
        n["params"]["origin"]["command"]
            .as_str()
            .unwrap()
            .ends_with("followup.sh")
    );
    let drained = c.ok("queue/drain", json!({"sessionId": sid}));
    let all: Vec<Value> = drained["messages"]
        .as_array()
        .unwrap()
        .iter()
        .chain(drained["pending"].as_array().unwrap())
        .cloned()
        .collect();
    assert_eq!(all.len(), 1, "{drained}");
    assert_eq!(all[0]["text"], "run the tests");
    assert!(drained["remainingBudget"].is_u64());

    // The CLI mirrors: same JSON as the commands.
    let list = c.ok("hooks/list", json!({}));
    assert_eq!(list["version"], 1);
    let cli = env
        .cmd()
        .args(["--enable", "--json", "list"])
        .run()
        .success()
        .json();
    assert_eq!(
        list["hooks"].as_array().unwrap().len(),
        cli["hooks"].as_array().unwrap().len()
    );
    assert_eq!(list["hooks"][1]["command"], cli["hooks"][1]["command"]);
    let source = env.home().join(".cursor/hooks.json");
    let t = c.ok(
        "hooks/test",
        json!({"source": source, "event": "beforeShellExecution", "entry": 2}),
    );
    assert_eq!(t["version"], 1);
    assert!(t["summary"].as_str().unwrap().starts_with("deny"), "{t}");
    let log = c.ok(
        "spine/log",
        json!({"event": "beforeShellExecution", "limit": 5}),
    );
    let runs = log["runs"].as_array().unwrap();
    assert!(!runs.is_empty());
    assert_eq!(runs[0]["session_id"], "conv-1");
    let run_id = runs[0]["run_id"].as_str().unwrap().to_owned();
    let show = c.ok("spine/show", json!({"runId": run_id}));
    assert_eq!(show["run_id"], json!(run_id));
    let cli_show = env
        .cmd()
        .args(["--json", "show", &run_id])
        .run()
        .success()
        .json();
    assert_eq!(show, cli_show);
    // The short id `log` gives names the same run.
    let short = c.ok("spine/show", json!({"runId": runs[0]["short_id"]}));
    assert_eq!(short, cli_show);
    let (code, msg) = c.error("spine/show", json!({"runId": "r-nope"}));
    assert_eq!((code, msg.contains("r-nope")), (-32004, true));
    let doctor = c.ok("doctor", json!({}));
    assert_eq!(
        doctor["enablement"],
        json!({"enabled": true, "source": "client"})
    );
    assert_eq!(doctor["roots"][0]["trust"], "untrusted");

    assert_eq!(
        c.ok("session/close", json!({"sessionId": sid})),
        json!({"closed": true})
    );
    let (code, msg) = c.error("queue/drain", json!({"sessionId": sid}));
    assert_eq!(code, -32001);
    assert!(msg.contains("sessionId"));
    assert_eq!(c.ok("shutdown", json!(null)), Value::Null);
    let (code, _) = c.error("hooks/list", json!({}));
    assert_eq!(code, -32003);
    c.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
    assert!(wait_exit(&mut s.child).success());
}

#[test]
fn bad_input_gets_json_rpc_errors_and_the_connection_carries_on() {
    let env = Env::new();
    setup(&env);
    let mut s = serve(&env);
    let c = &mut s.client;
    // Before initialize, nothing else is accepted.
    let (code, msg) = c.error("session/open", json!({}));
    assert_eq!(code, -32002);
    assert!(msg.contains("initialize"), "{msg}");
    // A malformed line is a parse error, and the connection carries on.
    c.raw(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ");
    let m = c.recv();
    assert_eq!(
        (m["id"].clone(), m["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );
    c.raw(b"[1, 2]");
    assert_eq!(c.recv()["error"]["code"], -32600);
    c.initialize(&env, false);
    let (code, _) = c.error("initialize", json!({"workspaceRoots": [env.workspace()]}));
    assert_eq!(code, -32600);
    let (code, msg) = c.error("hooks/nope", json!({}));
    assert_eq!(code, -32601);
    assert!(msg.contains("hooks/nope"));
    let (code, _) = c.error("frobnicate", json!({}));
    assert_eq!(code, -32601);
    // Bad params name the field.
    let sid = c.open("c");
    let (code, msg) = c.error("hooks/toolGate", json!({"sessionId": sid, "tool": 3}));
    assert_eq!(code, -32602);
    assert!(msg.contains("`tool`"), "{msg}");
    let (code, msg) = c.error("hooks/toolGate", json!({"sessionId": sid}));
    assert_eq!(code, -32602);
    assert!(msg.contains("tool"), "{msg}");
    let (code, msg) = c.error("session/open", json!({"model": {"model": 1}}));
    assert_eq!(code, -32602);
    assert!(msg.contains("model.model"), "{msg}");
    let (code, msg) = c.error("hooks/stop", json!({"sessionId": sid, "bogus": true}));
    assert_eq!(code, -32602);
    assert!(msg.contains("bogus"), "{msg}");
    // A line over 8 MiB is refused (and skipped) without ending the connection.
    let mut huge = br#"{"jsonrpc":"2.0","id":7,"method":"hooks/toolGate","params":{"x":""#.to_vec();
    huge.extend(std::iter::repeat_n(b'a', 9 * 1024 * 1024));
    huge.extend_from_slice(b"\"}}");
    c.raw(&huge);
    let m = c.recv();
    assert_eq!(m["error"]["code"], -32600);
    assert!(m["error"]["message"].as_str().unwrap().contains("limit"));
    let v = c.ok(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "rm -rf x"}}),
    );
    assert_eq!(v["decision"], "deny");
    // Closing stdin ends the server with 0.
    drop(std::mem::replace(&mut c.writer, Box::new(std::io::sink())));
    assert!(wait_exit(&mut s.child).success());
}

#[test]
fn concurrent_requests_complete_out_of_order() {
    let env = Env::new();
    setup(&env);
    let mut s = serve(&env);
    let c = &mut s.client;
    c.initialize(&env, false);
    let sid = c.open("c");
    let slow = c.start(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "slow job"}}),
    );
    wait_for_file(&env.root().join("sleep.pid"));
    // While the slow gate waits on its marker, other requests complete.
    let fast = c.start(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "rm -rf a"}}),
    );
    let list = c.start("hooks/list", json!({}));
    let first = c.recv();
    let second = c.recv();
    let ids = [first["id"].clone(), second["id"].clone()];
    assert!(
        ids.contains(&json!(fast)) && ids.contains(&json!(list)),
        "{ids:?}"
    );
    std::fs::write(env.root().join("go"), "").unwrap();
    let v = c.wait(slow);
    assert_eq!(v["result"]["decision"], "allow", "{v}");
}

#[test]
fn cancel_request_kills_the_hook_group() {
    let env = Env::new();
    setup(&env);
    let mut s = serve(&env);
    let c = &mut s.client;
    c.initialize(&env, false);
    let sid = c.open("c");
    let id = c.start(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "slow"}}),
    );
    let pid = sleeping_pid(&env);
    c.send(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}}));
    let m = c.wait(id);
    assert_eq!(m["error"]["code"], -32800, "{m}");
    wait_gone(&pid);
    // The connection serves on.
    let v = c.ok(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}}),
    );
    assert_eq!(v["decision"], "allow");
}

#[test]
fn a_client_gone_mid_request_leaves_no_hook_behind() {
    let env = Env::new();
    setup(&env);
    let mut s = serve(&env);
    s.client.initialize(&env, false);
    let sid = s.client.open("c");
    s.client.start(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "slow"}}),
    );
    let pid = sleeping_pid(&env);
    // The client goes away: its end of the pipes closes.
    drop(s.client);
    wait_gone(&pid);
    assert!(wait_exit(&mut s.child).success());
}

fn daemon(env: &Env, sub: &str) -> crate::harness::Run {
    env.cmd().args(["daemon", sub]).run()
}

fn socket(env: &Env) -> PathBuf {
    env.copse_dir().join("daemon.sock")
}

#[test]
fn daemon_serves_two_isolated_clients_and_survives_a_kill() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    setup(&env);
    let out = daemon(&env, "status");
    assert_eq!(out.out.status.code(), Some(3));
    daemon(&env, "start").success();
    let again = daemon(&env, "start").success();
    assert!(
        again.stdout().contains("already running"),
        "{}",
        again.stdout()
    );
    let sock = socket(&env);
    let mode = std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(env.copse_dir().join("daemon.log").exists());
    let status = daemon(&env, "status").success();
    assert!(
        status.stdout().starts_with("running (pid "),
        "{}",
        status.stdout()
    );

    // A second server on the same path refuses and names the holder.
    let second = env
        .cmd()
        .args([
            std::ffi::OsStr::new("serve"),
            std::ffi::OsStr::new("--socket"),
            sock.as_os_str(),
        ])
        .run();
    assert!(!second.out.status.success());
    assert!(second.stderr().contains("(pid "), "{}", second.stderr());

    // Two clients, two sessions, isolated.
    let mut a = connect(&sock);
    let mut b = connect(&sock);
    a.initialize(&env, false);
    b.initialize(&env, false);
    let sa = a.open("conv-a");
    let sb = b.open("conv-b");
    assert_ne!(sa, sb);
    let (code, _) = b.error("queue/drain", json!({"sessionId": sa}));
    assert_eq!(code, -32001, "a session belongs to its connection");
    a.ok("hooks/stop", json!({"sessionId": sa}));
    let n = a.notification("queue/message");
    assert_eq!(n["params"]["sessionId"], json!(sa));
    let drained_b = b.ok("queue/drain", json!({"sessionId": sb}));
    assert_eq!(drained_b["messages"], json!([]));
    assert_eq!(drained_b["pending"], json!([]));
    let v = b.ok(
        "hooks/toolGate",
        json!({"sessionId": sb, "tool": "run_shell", "input": {"command": "rm -rf b"}}),
    );
    assert_eq!(v["decision"], "deny");

    // A client that disconnects mid-request: its hook is killed, the daemon serves on.
    a.start(
        "hooks/toolGate",
        json!({"sessionId": sa, "tool": "run_shell", "input": {"command": "slow"}}),
    );
    let pid = sleeping_pid(&env);
    drop(a);
    wait_gone(&pid);
    let v = b.ok(
        "hooks/toolGate",
        json!({"sessionId": sb, "tool": "run_shell", "input": {"command": "ls"}}),
    );
    assert_eq!(v["decision"], "allow");
    drop(b);

    // Killed: the socket goes stale; the next start replaces it.
    let daemon_pid = std::fs::read_to_string(env.copse_dir().join("daemon.sock.lock")).unwrap();
    Command::new("kill")
        .args(["-9", daemon_pid.trim()])
        .status()
        .unwrap();
    wait_gone(daemon_pid.trim());
    // The leader shows as a zombie while its other threads may still be exiting (the
    // socket open among them): wait until the socket stops answering.
    let deadline = Instant::now() + HANG;
    let status = loop {
        let status = daemon(&env, "status");
        if status.out.status.code() == Some(3) || Instant::now() > deadline {
            break status;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.out.status.code(), Some(3));
    assert!(status.stdout().contains("stale"), "{}", status.stdout());
    daemon(&env, "start").success();
    let mut c = connect(&sock);
    c.initialize(&env, false);
    let sc = c.open("conv-c");
    let v = c.ok(
        "hooks/toolGate",
        json!({"sessionId": sc, "tool": "run_shell", "input": {"command": "rm -rf c"}}),
    );
    assert_eq!(v["decision"], "deny");
    drop(c);
    let stopped = daemon(&env, "stop").success();
    assert!(stopped.stdout().contains("stopped"));
    assert!(!sock.exists());
    assert_eq!(daemon(&env, "status").out.status.code(), Some(3));
}

#[test]
fn a_stale_socket_file_is_replaced_by_serve() {
    let env = Env::new();
    let sock = env.root().join("run/s.sock");
    std::fs::create_dir_all(sock.parent().unwrap()).unwrap();
    // A socket nobody serves: bound, then its listener dropped.
    drop(std::os::unix::net::UnixListener::bind(&sock).unwrap());
    assert!(UnixStream::connect(&sock).is_err());
    let mut cmd = env
        .cmd()
        .args([
            std::ffi::OsStr::new("serve"),
            std::ffi::OsStr::new("--socket"),
            sock.as_os_str(),
        ])
        .cmd;
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + HANG;
    let mut client = loop {
        if let Ok(s) = UnixStream::connect(&sock) {
            let r = s.try_clone().unwrap();
            break Client::new(r, Box::new(s));
        }
        assert!(Instant::now() < deadline, "serve never listened");
        std::thread::sleep(Duration::from_millis(10));
    };
    client.initialize(&env, false);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_running_server_sees_settings_changes_on_the_next_initialize() {
    let env = Env::new();
    setup(&env);
    let sock = env.root().join("run/s.sock");
    let mut cmd = env
        .cmd()
        .args([
            std::ffi::OsStr::new("serve"),
            std::ffi::OsStr::new("--socket"),
            sock.as_os_str(),
        ])
        .cmd;
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + HANG;
    while UnixStream::connect(&sock).is_err() {
        assert!(Instant::now() < deadline, "serve never listened");
        std::thread::sleep(Duration::from_millis(10));
    }
    let gate = |c: &mut Client| {
        c.ok("initialize", json!({"workspaceRoots": [env.workspace()]}));
        let sid = c.open("c");
        c.ok(
            "hooks/toolGate",
            json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "rm -rf x"}}),
        )
    };
    // Hooks are off in the settings: nothing runs.
    let v = gate(&mut connect(&sock));
    assert_eq!(
        (v["decision"].clone(), v["runs"].clone()),
        (json!("allow"), json!([]))
    );
    env.cmd().args(["enable"]).run().success();
    let v = gate(&mut connect(&sock));
    assert_eq!(v["decision"], "deny", "{v}");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn stdin_closing_still_answers_what_is_running_while_stdout_is_read() {
    let env = Env::new();
    setup(&env);
    let mut s = serve(&env);
    s.client.initialize(&env, false);
    let sid = s.client.open("c");
    let slow = s.client.start(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "slow"}}),
    );
    let fast = s.client.start(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "rm -rf a"}}),
    );
    wait_for_file(&env.root().join("hook.pid"));
    // The client closes stdin (a script piping requests in) but still reads stdout.
    drop(std::mem::replace(
        &mut s.client.writer,
        Box::new(std::io::sink()),
    ));
    std::fs::write(env.root().join("go"), "").unwrap();
    assert_eq!(s.client.wait(fast)["result"]["decision"], "deny");
    assert_eq!(s.client.wait(slow)["result"]["decision"], "allow");
    assert!(wait_exit(&mut s.child).success());
}

#[test]
fn a_gate_verdict_carries_its_notices_as_gate_json_does() {
    let env = Env::new();
    let broken = env.script(
        "home/.cursor/broken.sh",
        "cat >/dev/null\necho 'cannot open /etc/x: Permission denied' >&2\nexit 1",
    );
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": broken.display().to_string()}
        ]}})
        .to_string(),
    );
    let mut s = serve(&env);
    let c = &mut s.client;
    c.initialize(&env, false);
    let sid = c.open("conv-n");
    let v = c.ok(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}}),
    );
    assert_eq!(v["runs"][0]["outcome"], "failed", "{v:#}");
    let notices = v["notices"].as_array().unwrap();
    let failed = notices
        .iter()
        .find(|n| n["kind"] == "hook_failed")
        .unwrap_or_else(|| panic!("no hook_failed notice: {v:#}"));
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("Permission denied"),
        "{failed:#}"
    );
    assert!(failed["source"].as_str().unwrap().ends_with("hooks.json"));
    assert_eq!(c.ok("shutdown", json!(null)), Value::Null);
    c.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
    assert!(wait_exit(&mut s.child).success());
}

#[test]
fn shim_handle_needs_no_initialize_and_answers_in_the_agents_format() {
    let env = Env::new();
    env.write(
        "copse/settings.json",
        &json!({"cursorHooksEnabled": true, "sandboxWritablePaths": [env.root()]}).to_string(),
    );
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [{"command": "printf '%s' '{\"decision\":\"deny\",\"agentMessage\":\"not here\"}'"}]}}).to_string(),
    );
    let mut s = serve(&env);
    let c = &mut s.client;
    let vars = json!({
        "HOME": env.home(), "COPSE_DIR": env.copse_dir(), "PATH": "/usr/bin:/bin",
        "CLAUDE_PROJECT_DIR": env.workspace(), "ANTHROPIC_API_KEY": "sk-never"
    });
    let payload = json!({"session_id": "rpc-1", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"}})
    .to_string();
    let r = c.ok(
        "shim/handle",
        json!({"agent": "claude", "payload": payload, "env": vars}),
    );
    assert_eq!(r["exitCode"], 0);
    assert_eq!(r["detached"], false);
    let out: Value = serde_json::from_str(r["stdout"].as_str().unwrap()).unwrap();
    assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecisionReason"],
        "not here"
    );
    // An unreadable payload on a gated event: the agent's block, not an error.
    let r = c.ok(
        "shim/handle",
        json!({"agent": "claude", "payload": "{\"hook_event_name\":\"PreToolUse\"}", "env": vars}),
    );
    assert_eq!(r["exitCode"], 2);
    assert!(r["stderr"].as_str().unwrap().contains("failing closed"));
    // An observation is accepted at once and run detached.
    let r = c.ok(
        "shim/handle",
        json!({"agent": "claude", "env": vars, "payload":
            json!({"session_id": "rpc-1", "hook_event_name": "Notification", "message": "hi"}).to_string()}),
    );
    assert_eq!(r["detached"], true);
    let (code, message) = c.error("shim/handle", json!({"agent": "vim", "payload": "{}"}));
    assert_eq!(code, -32602);
    assert!(message.contains("field `agent`"), "{message}");
    let (code, _) = c.error("shim/handle", json!({"payload": "{}"}));
    assert_eq!(code, -32602);
}

#[test]
fn host_known_fields_from_session_open_and_update_reach_the_hooks() {
    let env = Env::new();
    let dump = |name: &str| {
        env.script(
            format!("home/{name}.sh"),
            &format!(
                "f={root}/{name}.$$; cat > $f.json; echo \"${{CURSOR_VERSION-unset}}|${{CURSOR_USER_EMAIL-unset}}\" > $f.env",
                root = env.root().display()
            ),
        )
    };
    let claude = dump("claude");
    let cursor = dump("cursor");
    env.write(
        "home/.claude/settings.json",
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": claude.display().to_string()}
        ]}]}})
        .to_string(),
    );
    env.user_cursor(
        &json!({"version": 1, "hooks": {"preToolUse": [
            {"command": cursor.display().to_string()}
        ]}})
        .to_string(),
    );
    // The newest dump of one hook: (stdin, "CURSOR_VERSION|CURSOR_USER_EMAIL").
    let latest = |name: &str| -> (Value, String) {
        let mut files: Vec<_> = std::fs::read_dir(env.root())
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("{name}.")) && n.ends_with(".json"))
            })
            .collect();
        files.sort_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap());
        let json = files.last().unwrap_or_else(|| panic!("{name} never ran"));
        let stdin: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
        let vars = std::fs::read_to_string(json.with_extension("env")).unwrap();
        for f in &files {
            std::fs::remove_file(f).unwrap();
            let _ = std::fs::remove_file(f.with_extension("env"));
        }
        (stdin, vars.trim().to_owned())
    };
    let mut s = serve(&env);
    let c = &mut s.client;
    c.initialize(&env, false);
    let sid = c.ok(
        "session/open",
        json!({"conversationId": "conv-h", "host": {
            "transcriptPath": "/transcripts/conv-h.jsonl",
            "permissionMode": "acceptEdits",
            "hostVersion": "1.7.2",
            "userEmail": "dev@example.com",
        }}),
    )["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let gate = json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"},
        "toolUseId": "toolu_host_1"});
    let v = c.ok("hooks/toolGate", gate.clone());
    assert_eq!(v["decision"], "allow", "{v:#}");
    let (claude_in, _) = latest("claude");
    assert_eq!(claude_in["transcript_path"], "/transcripts/conv-h.jsonl");
    assert_eq!(claude_in["permission_mode"], "acceptEdits");
    assert_eq!(claude_in["tool_use_id"], "toolu_host_1");
    let (cursor_in, cursor_env) = latest("cursor");
    assert_eq!(cursor_in["cursor_version"], "1.7.2");
    assert_eq!(cursor_in["user_email"], "dev@example.com");
    assert_eq!(cursor_in["transcript_path"], "/transcripts/conv-h.jsonl");
    assert_eq!(cursor_in["tool_use_id"], "toolu_host_1");
    assert_eq!(cursor_env, "1.7.2|dev@example.com");

    // Only the fields given change.
    let r = c.ok(
        "session/update",
        json!({"sessionId": sid, "host": {"permissionMode": "plan"}}),
    );
    assert_eq!(r, json!({"updated": true}));
    c.ok("hooks/toolGate", gate);
    let (claude_in, _) = latest("claude");
    assert_eq!(claude_in["permission_mode"], "plan");
    assert_eq!(claude_in["transcript_path"], "/transcripts/conv-h.jsonl");

    // Without a toolUseId one is generated, never missing.
    c.ok(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}}),
    );
    let (claude_in, _) = latest("claude");
    let generated = claude_in["tool_use_id"].as_str().unwrap();
    assert!(!generated.is_empty() && generated != "toolu_host_1");

    let (code, msg) = c.error(
        "session/update",
        json!({"sessionId": "s-none", "host": {"permissionMode": "plan"}}),
    );
    assert_eq!(code, -32001, "{msg}");
    assert!(msg.contains("sessionId"), "{msg}");
    let (code, msg) = c.error(
        "session/update",
        json!({"sessionId": sid, "host": {"permisionMode": "plan"}}),
    );
    assert_eq!(code, -32602, "{msg}");
    assert!(msg.contains("permisionMode"), "{msg}");
    // A value no hook's environment can carry is refused, not left to fail every hook.
    let (code, msg) = c.error(
        "session/update",
        json!({"sessionId": sid, "host": {"userEmail": "a\0b"}}),
    );
    assert_eq!(code, -32602, "{msg}");
    assert!(
        msg.contains("host.userEmail") && msg.contains("NUL"),
        "{msg}"
    );
    let (code, msg) = c.error("session/open", json!({"host": {"hostVersion": "1\0"}}));
    assert_eq!(code, -32602, "{msg}");
    assert!(msg.contains("host.hostVersion"), "{msg}");
    // The refused update changed nothing.
    c.ok(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}}),
    );
    let (cursor_in, _) = latest("cursor");
    assert_eq!(cursor_in["user_email"], "dev@example.com");
    assert_eq!(c.ok("shutdown", json!(null)), Value::Null);
    c.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
    assert!(wait_exit(&mut s.child).success());
}

// ---- Issue 22: the daemon serves only the agent, never a hook ----

/// A minimal JSON-RPC client in perl (core modules only), usable from a hook or
/// under `setpriv`/`unshare`: connects to `$1`, sends the line `$2`, prints
/// `answer: <line>`, `closed` (the server hung up without answering) or
/// `connect failed: <why>`.
const PERL_CLIENT: &str = r#"use IO::Socket::UNIX; $SIG{PIPE} = 'IGNORE'; my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0]) or do { print "connect failed: $!\n"; exit 0 }; print $s "$ARGV[1]\n"; $s->flush; my $l = <$s>; print defined $l ? "answer: $l" : "closed\n";"#;

/// Whether the perl client was refused: the server's one `PEER_REFUSED` error line
/// (nothing ran), or no connection at all.
fn refused(out: &str) -> bool {
    out.starts_with("connect failed")
        || (out.starts_with("answer: ")
            && out.contains("-32005")
            && out.contains("never a hook")
            && !out.contains("\"result\""))
}

/// The `initialize` a hook would send to get trusted, unsandboxed runs.
fn trusted_initialize(env: &Env) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"workspaceRoots": [env.workspace()], "trusted": true, "enabled": true}})
    .to_string()
}

/// Runs the perl client through `wrapper` (e.g. `["setpriv", "--no-new-privs"]`).
fn perl_via(wrapper: &[&str], socket: &Path, line: &str, extra_env: &[(&str, &str)]) -> String {
    let mut argv: Vec<&str> = wrapper.to_vec();
    argv.extend(["perl", "-e", PERL_CLIENT]);
    let mut cmd = Command::new(argv[0]);
    cmd.args(&argv[1..]).arg(socket).arg(line);
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{wrapper:?} perl failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Starts `serve --socket PATH` and waits until it listens.
fn socket_server(env: &Env, sock: &Path, extra_env: &[(&str, &str)]) -> Child {
    let mut run = env.cmd().args([
        std::ffi::OsStr::new("serve"),
        std::ffi::OsStr::new("--socket"),
        sock.as_os_str(),
    ]);
    for (k, v) in extra_env {
        run = run.env(k, v);
    }
    let mut cmd = run.cmd;
    cmd.stdout(Stdio::null()).stderr(Stdio::inherit());
    let child = cmd.spawn().unwrap();
    let deadline = Instant::now() + HANG;
    while UnixStream::connect(sock).is_err() {
        assert!(Instant::now() < deadline, "serve never listened");
        std::thread::sleep(Duration::from_millis(10));
    }
    child
}

#[test]
fn the_daemon_refuses_a_peer_in_another_pid_namespace_with_no_new_privs_or_inside_a_hook() {
    let env = Env::new();
    let sock = socket(&env);
    let mut server = socket_server(&env, &sock, &[]);
    let line = trusted_initialize(&env);
    // Control: an ordinary process of the same user is served.
    let plain = perl_via(&[], &sock, &line, &[]);
    assert!(plain.starts_with("answer: "), "{plain}");
    assert!(plain.contains("\"serverInfo\""), "{plain}");
    // Whatever the sandbox lets through, a peer that looks like a hook is not served.
    let no_new_privs = perl_via(&["setpriv", "--no-new-privs"], &sock, &line, &[]);
    assert!(refused(&no_new_privs), "{no_new_privs}");
    let other_ns = perl_via(
        &[
            "unshare",
            "--user",
            "--map-root-user",
            "--pid",
            "--fork",
            "--mount-proc",
        ],
        &sock,
        &line,
        &[],
    );
    assert!(refused(&other_ns), "{other_ns}");
    let in_hook = perl_via(&[], &sock, &line, &[("COPSE_HOOK_DEPTH", "1")]);
    assert!(refused(&in_hook), "{in_hook}");
    // The daemon serves on.
    let again = perl_via(&[], &sock, &line, &[]);
    assert!(again.starts_with("answer: "), "{again}");
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn a_hook_that_reaches_the_daemon_socket_is_not_served() {
    let env = Env::new();
    let sock = socket(&env);
    let line = trusted_initialize(&env);
    // One user hook inside the sandbox, one let out of it (`"sandbox": false`): both
    // try to initialize {"trusted": true} on the user's daemon and say what happened.
    let try_daemon = |name: &str| {
        format!(
            "cat >/dev/null; perl -e '{}' {} '{}' > {}/{name}.out 2>&1; echo '{{}}'",
            PERL_CLIENT.replace('\'', r"'\''"),
            sock.display(),
            line,
            env.root().display()
        )
    };
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [
            {"command": try_daemon("sandboxed")},
            {"command": try_daemon("unsandboxed"), "sandbox": false},
        ]}})
        .to_string(),
    );
    env.cmd().args(["enable"]).run().success();
    let mut server = socket_server(&env, &sock, &[]);
    let mut c = connect(&sock);
    c.initialize(&env, false);
    let sid = c.open("conv-hook");
    let v = c.ok(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}}),
    );
    assert_eq!(v["runs"].as_array().map(Vec::len), Some(2), "{v:#}");
    for name in ["sandboxed", "unsandboxed"] {
        // Control: the hook ran and tried.
        let out = std::fs::read_to_string(env.root().join(format!("{name}.out")))
            .unwrap_or_else(|e| panic!("the {name} hook never ran: {e}"));
        assert!(
            refused(out.trim()),
            "the {name} hook was served by the daemon: {out}"
        );
    }
    server.kill().unwrap();
    server.wait().unwrap();
}

/// A Copse user hook that records what it sees and denies, so a test can tell which
/// settings (which `$COPSE_DIR`) a call used and what environment its hooks got.
fn env_dump_hook(env: &Env, copse: &str, tag: &str) {
    let dump = env.script(
        format!("{copse}-{tag}.sh"),
        &format!(
            "cat >/dev/null\n{{ echo \"tag={tag}\"; echo \"HOME=$HOME\"; echo \"COPSE_DIR=${{COPSE_DIR-unset}}\"; echo \"DEPTH=${{COPSE_HOOK_DEPTH-unset}}\"; echo \"SECRET_X=${{SECRET_X-unset}}\"; echo \"KEY=${{ANTHROPIC_API_KEY-unset}}\"; }} > {root}/{tag}.env\nprintf '%s' '{{\"decision\":\"deny\",\"agentMessage\":\"{tag}\"}}'",
            root = env.root().display()
        ),
    );
    env.write(
        format!("{copse}/hooks.json"),
        &json!({"version": 1, "hooks": {"toolGate": [{"command": dump.display().to_string()}]}})
            .to_string(),
    );
}

fn read_env_dump(env: &Env, tag: &str) -> std::collections::BTreeMap<String, String> {
    let text = std::fs::read_to_string(env.root().join(format!("{tag}.env")))
        .unwrap_or_else(|e| panic!("hook {tag} never ran: {e}"));
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

#[test]
fn shim_handle_ignores_a_clients_copse_dir_home_and_hook_depth() {
    let env = Env::new();
    env_dump_hook(&env, "copse", "legit");
    // A second copse dir a client might point the daemon at: hooks enabled, a hook of
    // its own, a settings file of its choosing.
    env_dump_hook(&env, "evil-copse", "evil");
    env.write(
        "evil-copse/settings.json",
        &json!({"cursorHooksEnabled": true, "sandboxWritablePaths": [env.root()]}).to_string(),
    );
    std::fs::create_dir_all(env.root().join("evil-home")).unwrap();
    let sock = socket(&env);
    let mut server = socket_server(&env, &sock, &[]);
    let mut c = connect(&sock);
    let payload = json!({"session_id": "rpc-depth", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": env.workspace()})
    .to_string();
    let r = c.ok(
        "shim/handle",
        json!({"agent": "claude", "payload": payload, "env": {
            "PATH": "/usr/bin:/bin",
            "HOME": env.root().join("evil-home"),
            "COPSE_DIR": env.root().join("evil-copse"),
            // Honoured, this trips the recursion guard: nothing would run (fail open).
            "COPSE_HOOK_DEPTH": "7",
            "CLAUDE_PROJECT_DIR": env.workspace(),
        }}),
    );
    let out: Value = serde_json::from_str(r["stdout"].as_str().unwrap()).unwrap();
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecision"], "deny",
        "{r}"
    );
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecisionReason"],
        "legit"
    );
    let seen = read_env_dump(&env, "legit");
    assert_eq!(seen["HOME"], env.home().display().to_string());
    assert_eq!(seen["COPSE_DIR"], env.copse_dir().display().to_string());
    assert_eq!(
        seen["DEPTH"], "1",
        "the hook's depth is the daemon's plus one"
    );
    assert!(
        !env.root().join("evil.env").exists(),
        "the client's COPSE_DIR was used"
    );
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn the_daemons_own_environment_never_reaches_a_hook() {
    let env = Env::new();
    env_dump_hook(&env, "copse", "rpc");
    env.cmd().args(["enable"]).run().success();
    // The daemon is started by a process that has a secret in its environment.
    env.cmd()
        .env("SECRET_X", "from-the-starter")
        .args(["daemon", "start"])
        .run()
        .success();
    let sock = socket(&env);
    // A JSON-RPC client's hooks start from a minimal environment.
    let mut c = connect(&sock);
    c.initialize(&env, false);
    let sid = c.open("conv-env");
    let v = c.ok(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}}),
    );
    assert_eq!(v["decision"], "deny", "{v:#}");
    let seen = read_env_dump(&env, "rpc");
    assert_eq!(seen["SECRET_X"], "unset", "{seen:?}");
    assert_eq!(seen["HOME"], env.home().display().to_string());
    std::fs::remove_file(env.root().join("rpc.env")).unwrap();
    // An agent call's hooks get what that call passed, and only that (minus LLM keys).
    let payload = |id: &str| {
        json!({"session_id": id, "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": env.workspace()})
        .to_string()
    };
    let vars = |secret: Option<&str>| {
        let mut v = json!({"PATH": "/usr/bin:/bin", "HOME": env.home(),
            "COPSE_DIR": env.copse_dir(), "CLAUDE_PROJECT_DIR": env.workspace(),
            "ANTHROPIC_API_KEY": "sk-never"});
        if let Some(s) = secret {
            v["SECRET_X"] = json!(s);
        }
        v
    };
    let r = c.ok(
        "shim/handle",
        json!({"agent": "claude", "payload": payload("env-1"), "env": vars(None)}),
    );
    assert_eq!(r["exitCode"], 0, "{r}");
    let seen = read_env_dump(&env, "rpc");
    assert_eq!(seen["SECRET_X"], "unset", "{seen:?}");
    assert_eq!(seen["KEY"], "unset", "{seen:?}");
    std::fs::remove_file(env.root().join("rpc.env")).unwrap();
    let r = c.ok(
        "shim/handle",
        json!({"agent": "claude", "payload": payload("env-2"), "env": vars(Some("from-the-call"))}),
    );
    assert_eq!(r["exitCode"], 0, "{r}");
    let seen = read_env_dump(&env, "rpc");
    assert_eq!(seen["SECRET_X"], "from-the-call", "{seen:?}");
    assert_eq!(seen["KEY"], "unset", "{seen:?}");
    drop(c);
    daemon(&env, "stop").success();
}

#[test]
fn hooks_test_runs_a_sandbox_false_hook_in_the_sandbox() {
    let env = Env::new();
    let probe = format!(
        "cat >/dev/null; grep NoNewPrivs /proc/self/status > {root}/nnp.out; echo '{{}}'",
        root = env.root().display()
    );
    let source = env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [{"command": probe, "sandbox": false}]}})
            .to_string(),
    );
    let mut s = serve(&env);
    let c = &mut s.client;
    c.initialize(&env, true);
    let v = c.ok("hooks/test", json!({"source": source, "event": "toolGate"}));
    assert_eq!(v["sandboxed"], true, "{v:#}");
    // Control: it ran, and under the sandbox's no_new_privs.
    let nnp = std::fs::read_to_string(env.root().join("nnp.out")).unwrap();
    assert!(nnp.contains('1'), "{nnp}");
    assert_eq!(c.ok("shutdown", json!(null)), Value::Null);
    c.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
    assert!(wait_exit(&mut s.child).success());
}

#[test]
fn untrust_disable_and_enable_reach_an_open_connection() {
    let env = Env::new();
    let marker = env.root().join("project.count");
    env.project_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": format!(
            "cat >/dev/null; echo ran >> {}; echo '{{\"permission\":\"deny\",\"agent_message\":\"project says no\"}}'",
            marker.display()
        )}]}})
        .to_string(),
    );
    env.cmd().args(["enable"]).run().success();
    env.cmd().args(["trust"]).run().success();
    let sock = socket(&env);
    let mut server = socket_server(&env, &sock, &[]);
    let mut c = connect(&sock);
    // No `trusted` param: the settings decide, now and after every change.
    c.ok("initialize", json!({"workspaceRoots": [env.workspace()]}));
    let sid = c.open("conv-trust");
    let gate = |c: &mut Client| {
        c.ok(
            "hooks/toolGate",
            json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}}),
        )
    };
    let runs = || {
        std::fs::read_to_string(&marker)
            .map(|s| s.lines().count())
            .unwrap_or(0)
    };
    // Control: trusted, the project hook runs.
    assert_eq!(gate(&mut c)["decision"], "deny");
    assert_eq!(runs(), 1);
    env.cmd().args(["untrust"]).run().success();
    let v = gate(&mut c);
    assert_eq!(v["decision"], "allow", "{v:#}");
    assert_eq!(
        runs(),
        1,
        "an untrusted project's hook ran on an open connection"
    );
    env.cmd().args(["trust"]).run().success();
    assert_eq!(gate(&mut c)["decision"], "deny");
    assert_eq!(runs(), 2);
    env.cmd().args(["disable"]).run().success();
    assert_eq!(gate(&mut c)["decision"], "allow");
    assert_eq!(runs(), 2, "a disabled hook ran on an open connection");
    env.cmd().args(["enable"]).run().success();
    assert_eq!(gate(&mut c)["decision"], "deny");
    assert_eq!(runs(), 3);
    server.kill().unwrap();
    server.wait().unwrap();
}

/// The host pid of the process whose command line contains `token`.
fn pid_with(token: &str) -> Option<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .find(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                String::from_utf8_lossy(&c).contains(token)
                    && !gone(&e.file_name().to_string_lossy())
            })
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
}

#[test]
fn a_persistent_hook_stops_when_hooks_are_disabled_and_doctor_says_so() {
    let env = Env::new();
    let token = format!("persist-{}", sleep_arg(&env).replace('.', "-"));
    let hook = format!(
        r#": {token}; printf '%s\n' '{{"hello":{{"protocol":1,"events":["toolGate"]}}}}'; while read -r line; do id=${{line#*\"id\":}}; id=${{id%%,*}}; printf '{{"id":%s,"response":{{"decision":"deny","agentMessage":"persistent no"}}}}\n' "$id"; done"#
    );
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [{"command": hook, "persistent": true}]}})
            .to_string(),
    );
    env.cmd().args(["enable"]).run().success();
    let sock = socket(&env);
    let mut server = socket_server(&env, &sock, &[]);
    let mut c = connect(&sock);
    c.ok("initialize", json!({"workspaceRoots": [env.workspace()]}));
    let sid = c.open("conv-persist");
    let v = c.ok(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}}),
    );
    // Control: the persistent process answered and runs.
    assert_eq!(v["decision"], "deny", "{v:#}");
    let pid = pid_with(&token).expect("the persistent hook runs");
    let d = c.ok("doctor", json!(null));
    assert_eq!(d["persistent"][0]["state"], "running", "{d:#}");
    env.cmd().args(["disable"]).run().success();
    // Stopped without any further request (the server watches its settings).
    wait_gone(&pid);
    let v = c.ok(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}}),
    );
    assert_eq!(v["decision"], "allow", "{v:#}");
    assert_eq!(pid_with(&token), None, "disabled, it was started again");
    let d = c.ok("doctor", json!(null));
    let running: Vec<&Value> = d["persistent"]
        .as_array()
        .map(|a| a.iter().filter(|p| p["state"] == "running").collect())
        .unwrap_or_default();
    assert!(running.is_empty(), "doctor says it still runs: {d:#}");
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn serve_refuses_a_symlinked_lock_file() {
    let env = Env::new();
    let sock = env.root().join("run/s.sock");
    std::fs::create_dir_all(sock.parent().unwrap()).unwrap();
    let target = env.root().join("victim.txt");
    std::fs::write(&target, "precious\n").unwrap();
    std::os::unix::fs::symlink(&target, env.root().join("run/s.sock.lock")).unwrap();
    let out = env
        .cmd()
        .args([
            std::ffi::OsStr::new("serve"),
            std::ffi::OsStr::new("--socket"),
            sock.as_os_str(),
        ])
        .run();
    assert!(!out.out.status.success());
    assert!(
        out.stderr().contains("symbolic link") && out.stderr().contains("s.sock.lock"),
        "{}",
        out.stderr()
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
    // Control: with the link gone, the same command serves.
    std::fs::remove_file(env.root().join("run/s.sock.lock")).unwrap();
    let mut server = socket_server(&env, &sock, &[]);
    let mut c = connect(&sock);
    c.initialize(&env, false);
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn a_config_edit_stops_a_persistent_hook_whose_entry_is_gone() {
    let env = Env::new();
    let token = format!("edited-{}", sleep_arg(&env).replace('.', "-"));
    let hook = format!(
        r#": {token}; printf '%s\n' '{{"hello":{{"protocol":1,"events":["toolGate"]}}}}'; while read -r line; do id=${{line#*\"id\":}}; id=${{id%%,*}}; printf '{{"id":%s,"response":{{"decision":"deny","agentMessage":"persistent no"}}}}\n' "$id"; done"#
    );
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [{"command": hook, "persistent": true}]}})
            .to_string(),
    );
    // Hooks on for this connection only: the settings file never changes here, so
    // only the config edit can stop the process.
    let mut s = serve(&env);
    let c = &mut s.client;
    c.ok(
        "initialize",
        json!({"workspaceRoots": [env.workspace()], "enabled": true}),
    );
    let sid = c.open("conv-edit");
    let gate = json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}});
    let v = c.ok("hooks/toolGate", gate.clone());
    // Control: the persistent process answered and runs.
    assert_eq!(v["decision"], "deny", "{v:#}");
    let pid = pid_with(&token).expect("the persistent hook runs");
    // The user replaces the entry with a per-call hook that allows.
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [{"command": "cat >/dev/null; echo '{}'"}]}})
            .to_string(),
    );
    let v = c.ok("hooks/toolGate", gate);
    assert_eq!(v["decision"], "allow", "{v:#}");
    wait_gone(&pid);
    let d = c.ok("doctor", json!(null));
    // No persistent hook is configured, and none runs (an empty list is omitted).
    assert!(
        d.get("persistent").is_none_or(|p| p == &json!([])),
        "{:#}",
        d["persistent"]
    );
    assert_eq!(c.ok("shutdown", json!(null)), Value::Null);
    c.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
    assert!(wait_exit(&mut s.child).success());
}

#[test]
fn a_shim_the_daemon_refuses_runs_the_call_in_process_instead_of_failing_closed() {
    let env = Env::new();
    env_dump_hook(&env, "copse", "confined");
    daemon(&env, "start").success();
    let payload = json!({"session_id": "nnp-1", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": env.workspace()})
    .to_string();
    // An agent that runs with no_new_privs (as a confined agent may): the daemon cannot
    // tell it from a hook and refuses it; the shim then answers from its own process.
    let mut child = Command::new("setpriv")
        .arg("--no-new-privs")
        .arg(env!("CARGO_BIN_EXE_copse-hooks"))
        .args(["shim", "--agent", "claude"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", env.home())
        .env("COPSE_DIR", env.copse_dir())
        .env("CLAUDE_PROJECT_DIR", env.workspace())
        .current_dir(env.workspace())
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
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecisionReason"],
        "confined"
    );
    // Control: the hook really ran (in the shim's process, not the daemon's).
    let seen = read_env_dump(&env, "confined");
    assert_eq!(seen["HOME"], env.home().display().to_string());
    let log = std::fs::read_to_string(env.copse_dir().join("daemon.log")).unwrap();
    assert!(log.contains("refused a connection"), "{log}");
    daemon(&env, "stop").success();
}

#[test]
fn a_persistent_hook_the_daemon_runs_for_an_agent_stops_when_hooks_are_disabled() {
    let env = Env::new();
    let token = format!("shimmed-{}", sleep_arg(&env).replace('.', "-"));
    let hook = format!(
        r#": {token}; printf '%s\n' '{{"hello":{{"protocol":1,"events":["toolGate"]}}}}'; while read -r line; do id=${{line#*\"id\":}}; id=${{id%%,*}}; printf '{{"id":%s,"response":{{"decision":"deny","agentMessage":"persistent no"}}}}\n' "$id"; done"#
    );
    env.write(
        "copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [{"command": hook, "persistent": true}]}})
            .to_string(),
    );
    let sock = socket(&env);
    let mut server = socket_server(&env, &sock, &[]);
    let call = |id: &str| {
        let mut c = connect(&sock);
        let r = c.ok(
            "shim/handle",
            json!({"agent": "claude", "env": {"PATH": "/usr/bin:/bin",
                "CLAUDE_PROJECT_DIR": env.workspace()},
                "payload": json!({"session_id": id, "hook_event_name": "PreToolUse",
                    "tool_name": "Bash", "tool_input": {"command": "ls"},
                    "cwd": env.workspace()}).to_string()}),
        );
        r["stdout"].as_str().unwrap_or_default().to_owned()
    };
    // Control: the agent's call started the persistent process, which answered.
    assert!(call("p-1").contains("persistent no"));
    let pid = pid_with(&token).expect("the persistent hook runs");
    // A host's `doctor` on the same daemon tells what really runs there.
    let mut host = connect(&sock);
    host.ok("initialize", json!({"workspaceRoots": [env.workspace()]}));
    let d = host.ok("doctor", json!(null));
    assert_eq!(d["persistent"][0]["state"], "running", "{d:#}");
    assert_eq!(d["persistent"][0]["pid"].to_string(), pid, "{d:#}");
    env.cmd().args(["disable"]).run().success();
    // Stopped without another call: the daemon watches its settings.
    wait_gone(&pid);
    let d = host.ok("doctor", json!(null));
    assert_eq!(d["persistent"][0]["state"], "stopped", "{d:#}");
    let out = call("p-2");
    assert!(!out.contains("persistent no"), "{out}");
    assert_eq!(pid_with(&token), None, "disabled, it was started again");
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn a_socket_server_started_inside_a_hook_runs_no_hooks() {
    let env = Env::new();
    env_dump_hook(&env, "copse", "guarded");
    env.cmd().args(["enable"]).run().success();
    let gate = |sock: &Path| {
        let mut c = connect(sock);
        c.initialize(&env, false);
        let sid = c.open("conv-guard");
        c.ok(
            "hooks/toolGate",
            json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}}),
        )
    };
    // The recursion guard holds with the minimal hook environment.
    let inner = env.root().join("run/inner.sock");
    let token = env.depth_token();
    let mut server = socket_server(
        &env,
        &inner,
        &[
            ("COPSE_HOOK_DEPTH", "1"),
            ("COPSE_HOOK_TOKEN", token.as_str()),
        ],
    );
    let v = gate(&inner);
    assert_eq!(
        (v["decision"].clone(), v["runs"].clone()),
        (json!("allow"), json!([]))
    );
    assert!(!env.root().join("guarded.env").exists());
    server.kill().unwrap();
    server.wait().unwrap();
    // Control: the same server outside any hook runs it.
    let outer = env.root().join("run/outer.sock");
    let mut server = socket_server(&env, &outer, &[]);
    assert_eq!(gate(&outer)["decision"], "deny");
    assert_eq!(read_env_dump(&env, "guarded")["DEPTH"], "1");
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn the_json_rpc_server_honours_the_managed_layer() {
    use crate::managed::{managed_only, marker, runnable, touch};
    if !runnable("serve_managed_only") {
        return;
    }
    let env = Env::new();
    let dir = managed_only(&env, "settings.json");
    env.user_cursor(
        &json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": touch(&env, "user")}
        ]}})
        .to_string(),
    );
    let mut cmd = env.cmd().env("COPSE_MANAGED_DIR", &dir).args(["serve"]).cmd;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = cmd.spawn().unwrap();
    let stdin: ChildStdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut s = Stdio_ {
        child,
        client: Client::new(stdout, Box::new(stdin)),
    };
    let c = &mut s.client;
    c.initialize(&env, false);
    let sid = c.open("conv-managed");
    c.ok(
        "hooks/toolGate",
        json!({"sessionId": sid, "tool": "run_shell", "input": {"command": "ls"}}),
    );
    assert!(
        marker(&env, "managed").exists(),
        "control: the managed hook ran"
    );
    assert!(
        !marker(&env, "user").exists(),
        "allowManagedHooksOnly holds for a JSON-RPC host"
    );
    assert_eq!(c.ok("shutdown", json!(null)), Value::Null);
    c.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
    assert!(wait_exit(&mut s.child).success());
}
