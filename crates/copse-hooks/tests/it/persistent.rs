//! Persistent hooks (`"persistent": true`) end to end: real long-lived python3 and sh
//! processes behind a real engine — pipelining, timeouts, crashes, the broken mark,
//! protocol violations, the sandbox, shutdown and idle stop, changed scripts, and the
//! same policy per-call and persistent over a replay of mixed events.

use std::path::Path;
use std::time::{Duration, Instant};

use copse_hooks::TrustedWorkspace;
use copse_hooks::spawn::Limits;
use copse_hooks::spine::RunFilter;
use copse_hooks::{
    Decision, Engine, EventPayload, FailureKind, RunOutcome, Session, SessionIdentity, ToolCall,
    Verdict,
};
use serde_json::{Value, json};

use crate::fx::{Fx, FxBuilder, obj};

/// The fixture: sessions keep their runs, and hooks may write `out/` only (one test
/// checks a hook cannot write elsewhere).
fn setup() -> FxBuilder {
    Fx::builder().keep_runs().writable("out")
}

fn session(engine: &Engine) -> Session {
    engine.session(SessionIdentity::new("conv-p"))
}

fn shell(session: &Session, command: &str) -> Verdict {
    let input = json!({ "command": command });
    session.gate_tool(ToolCall::new("run_shell", obj(input)))
}

/// A persistent python3 hook whose body handles `req` (the request) and `p` (its
/// payload), given as Python source indented by 4 spaces inside the request loop; it
/// answers with `reply(obj)`.
fn python_hook(fx: &Fx, name: &str, body: &str) -> String {
    let script = format!(
        r#"import json, os, sys, threading, time
lock = threading.Lock()
def reply(obj):
    with lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()
reply({{"hello": {{"protocol": 1, "events": ["toolGate"]}}}})
for line in sys.stdin:
    req = json.loads(line)
    p = req["payload"]
    cmd = p.get("input", {{}}).get("command", "")
{body}
"#
    );
    let path = fx.write(&format!("hooks/{name}.py"), &script);
    format!("{} {}", python(), path.display())
}

/// The real python3 (not a version manager's shim script, which costs a shell and
/// more per start).
fn python() -> &'static str {
    static PYTHON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PYTHON.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    })
}

fn persistent(command: &str, extra: Value) -> Value {
    let mut entry = json!({ "command": command, "persistent": true, "timeout": 10 });
    if let (Value::Object(e), Value::Object(x)) = (&mut entry, extra) {
        e.extend(x);
    }
    entry
}

/// Whether a host pid still names a live (non-zombie) process.
fn alive(pid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.chars().next());
            !matches!(state, Some('Z' | 'X'))
        }
        Err(_) => false,
    }
}

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The host pids of the live processes `family_hook` recorded.
fn read_pids(path: &Path) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(crate::isolation::host_pid)
        .collect()
}

fn only_run(session: &Session) -> copse_hooks::HookRun {
    let runs = session.runs();
    runs.last().cloned().expect("a run")
}

// ---------------------------------------------------------------------------------

#[test]
fn pipelined_requests_are_answered_out_of_order_and_matched_by_id() {
    let fx = setup().build();
    let log = fx.at("out/order.log");
    // Each request is handled on its own thread: "slow" ones sleep first.
    let hook = python_hook(
        &fx,
        "pipeline",
        &format!(
            r#"    def handle(req=req, cmd=cmd):
        with open({log:?}, "a") as f:
            f.write("got " + cmd + "\n")
        if cmd.startswith("slow"):
            time.sleep(0.6)
        with open({log:?}, "a") as f:
            f.write("answer " + cmd + "\n")
        reply({{"id": req["id"], "response": {{"decision": "deny", "agentMessage": "saw " + cmd}}}})
    threading.Thread(target=handle).start()"#
        ),
    );
    fx.copse_user(json!({ "toolGate": [persistent(&hook, json!({}))] }));
    let engine = fx.engine();
    // Warm up, so both requests below go to one running process.
    assert_eq!(
        shell(&session(&engine), "warm").agent_message.as_deref(),
        Some("saw warm")
    );
    std::fs::write(&log, "").unwrap();
    let slow_engine = engine.clone();
    let slow = std::thread::spawn(move || shell(&session(&slow_engine), "slow one"));
    wait_until("the slow request to arrive", || {
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("got slow one")
    });
    let fast = shell(&session(&engine), "fast one");
    let slow = slow.join().unwrap();
    assert_eq!(fast.agent_message.as_deref(), Some("saw fast one"));
    assert_eq!(slow.agent_message.as_deref(), Some("saw slow one"));
    let order = std::fs::read_to_string(&log).unwrap();
    let answered: Vec<&str> = order.lines().filter(|l| l.starts_with("answer")).collect();
    assert_eq!(answered, ["answer fast one", "answer slow one"], "{order}");
    assert_eq!(engine.persistent_pids().len(), 1, "one process served all");
}

#[test]
fn one_request_times_out_while_the_others_succeed() {
    let fx = setup().build();
    let hook = python_hook(
        &fx,
        "hang",
        r#"    if cmd == "hang":
        continue
    reply({"id": req["id"], "response": {"decision": "deny", "agentMessage": "saw " + cmd}})"#,
    );
    fx.copse_user(json!({ "toolGate": [persistent(&hook, json!({"timeout": 0.5}))] }));
    let engine = fx.engine();
    let s = session(&engine);
    assert_eq!(shell(&s, "a").agent_message.as_deref(), Some("saw a"));
    let pids = engine.persistent_pids();
    let e2 = engine.clone();
    let hung = std::thread::spawn(move || {
        let s = session(&e2);
        let v = shell(&s, "hang");
        (v, only_run(&s))
    });
    for i in 0..5 {
        let cmd = format!("b{i}");
        assert_eq!(
            shell(&s, &cmd).agent_message,
            Some(format!("saw {cmd}")),
            "the others are answered while one hangs"
        );
    }
    let (verdict, run) = hung.join().unwrap();
    assert_eq!(verdict.effective_decision(), Decision::Deny, "fails closed");
    assert_eq!(run.failure.unwrap().kind, FailureKind::Timeout);
    // The process lives on: a timeout is the request's, not the process's.
    assert_eq!(engine.persistent_pids(), pids);
    assert_eq!(shell(&s, "c").agent_message.as_deref(), Some("saw c"));
}

#[test]
fn a_crash_fails_the_request_and_the_hook_restarts() {
    let fx = setup().build();
    let hook = python_hook(
        &fx,
        "crash",
        r#"    if cmd == "crash":
        os._exit(7)
    reply({"id": req["id"], "response": {"decision": "deny", "agentMessage": "pid " + globals().setdefault("T", os.urandom(8).hex())}})"#,
    );
    fx.copse_user(json!({ "toolGate": [persistent(&hook, json!({}))] }));
    let engine = fx.engine();
    let s = session(&engine);
    let first = shell(&s, "a").agent_message.unwrap();
    assert_eq!(shell(&s, "b").agent_message.unwrap(), first, "same process");
    let crashed = shell(&s, "crash");
    assert_eq!(crashed.effective_decision(), Decision::Deny);
    let run = only_run(&s);
    let failure = run.failure.unwrap();
    assert_eq!(failure.kind, FailureKind::Exit);
    assert!(
        failure.message.contains("exited with code 7"),
        "{}",
        failure.message
    );
    let again = shell(&s, "c").agent_message.unwrap();
    assert_ne!(again, first, "a new process answers after the crash");
    let status = engine.persistent_status();
    assert_eq!(status.len(), 1);
    assert_eq!(status[0].state, "running");
    assert_eq!(status[0].starts, 2);
}

#[test]
fn repeated_crashes_mark_the_hook_broken_and_it_is_not_spawned_again() {
    let fx = setup().build();
    let count = fx.at("out/starts");
    fx.copse_user(json!({
        "toolGate": [persistent(&format!("echo x >> {count}; exit 3"), json!({}))]
    }));
    let spine = fx.path("copse/spine.db");
    let engine = fx.engine_with(|c| c.spine(&spine));
    let s = session(&engine);
    for _ in 0..3 {
        let v = shell(&s, "ls");
        assert_eq!(v.effective_decision(), Decision::Deny);
        assert_eq!(only_run(&s).failure.unwrap().kind, FailureKind::Exit);
    }
    let starts = std::fs::read_to_string(&count).unwrap().lines().count();
    assert_eq!(starts, 3);
    let v = shell(&s, "ls");
    assert_eq!(v.effective_decision(), Decision::Deny, "fails closed");
    let run = only_run(&s);
    let failure = run.failure.unwrap();
    assert_eq!(failure.kind, FailureKind::Broken);
    assert!(failure.message.contains("is broken"), "{}", failure.message);
    assert_eq!(
        std::fs::read_to_string(&count).unwrap().lines().count(),
        3,
        "a broken hook is not started again"
    );
    let status = engine.persistent_status();
    assert_eq!(status[0].state, "broken");
    assert_eq!(status[0].crashes, 3);
    // The audit store shows it.
    engine.spine().unwrap().flush();
    let runs = engine
        .spine()
        .unwrap()
        .query(&RunFilter::default())
        .unwrap();
    assert!(
        runs.iter().any(|r| r.failure.as_deref() == Some("broken")),
        "{runs:?}"
    );
    assert_eq!(
        engine.spine().unwrap().broken_hooks().len(),
        1,
        "the store lists the broken hook"
    );
}

#[test]
fn a_line_that_is_not_json_fails_the_request_and_restarts_the_hook() {
    let fx = setup().build();
    let hook = python_hook(
        &fx,
        "notjson",
        r#"    if cmd == "garble":
        sys.stdout.write("this is not json\n"); sys.stdout.flush(); continue
    reply({"id": req["id"], "response": {"decision": "deny", "agentMessage": "ok " + cmd}})"#,
    );
    fx.copse_user(json!({ "toolGate": [persistent(&hook, json!({"onFailure": "open"}))] }));
    let engine = fx.engine();
    let s = session(&engine);
    assert_eq!(shell(&s, "a").agent_message.as_deref(), Some("ok a"));
    let v = shell(&s, "garble");
    assert_eq!(
        v.effective_decision(),
        Decision::Allow,
        "fails open as configured"
    );
    let failure = only_run(&s).failure.unwrap();
    assert_eq!(failure.kind, FailureKind::InvalidJson);
    assert!(failure.message.contains("not JSON"), "{}", failure.message);
    assert_eq!(shell(&s, "b").agent_message.as_deref(), Some("ok b"));
    assert_eq!(engine.persistent_status()[0].starts, 2);
}

#[test]
fn an_oversize_line_fails_the_request() {
    let fx = setup().build();
    let hook = python_hook(
        &fx,
        "big",
        r#"    if cmd == "big":
        sys.stdout.write("x" * 5000); sys.stdout.flush(); continue
    reply({"id": req["id"], "response": {"decision": "deny", "agentMessage": "ok " + cmd}})"#,
    );
    fx.copse_user(json!({ "toolGate": [persistent(&hook, json!({}))] }));
    let engine = fx.engine_with(|c| {
        c.limits(Limits {
            stdout_cap: 1000,
            ..Limits::default()
        })
    });
    let s = session(&engine);
    assert_eq!(shell(&s, "a").agent_message.as_deref(), Some("ok a"));
    let v = shell(&s, "big");
    assert_eq!(v.effective_decision(), Decision::Deny);
    let failure = only_run(&s).failure.unwrap();
    assert_eq!(failure.kind, FailureKind::Oversize);
    assert!(
        failure.message.contains("1000 bytes"),
        "{}",
        failure.message
    );
    assert_eq!(shell(&s, "b").agent_message.as_deref(), Some("ok b"));
}

#[test]
fn stderr_written_during_a_request_is_attributed_to_it() {
    let fx = setup().build();
    let hook = python_hook(
        &fx,
        "stderr",
        r#"    sys.stderr.write("thinking about " + cmd + "\n"); sys.stderr.flush()
    time.sleep(0.1)
    reply({"id": req["id"], "response": {}})"#,
    );
    fx.copse_user(json!({ "toolGate": [persistent(&hook, json!({}))] }));
    let engine = fx.engine();
    let s = session(&engine);
    shell(&s, "one");
    shell(&s, "two");
    let runs = s.runs();
    assert_eq!(
        String::from_utf8_lossy(&runs[0].stderr),
        "thinking about one\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&runs[1].stderr),
        "thinking about two\n"
    );
}

#[test]
fn the_long_lived_process_is_confined_by_the_sandbox() {
    let fx = setup().build();
    let outside = fx.at("home/escaped");
    let inside = fx.at("out/inside");
    let hook = python_hook(
        &fx,
        "sandboxed",
        &format!(
            r#"    results = []
    for target in [{outside:?}, {inside:?}]:
        try:
            with open(target, "w") as f:
                f.write("x")
            results.append("wrote")
        except OSError:
            results.append("denied")
    reply({{"id": req["id"], "response": {{"decision": "deny", "agentMessage": " ".join(results)}}}})"#
        ),
    );
    fx.copse_user(json!({ "toolGate": [persistent(&hook, json!({}))] }));
    let engine = fx.engine();
    let s = session(&engine);
    for _ in 0..2 {
        assert_eq!(
            shell(&s, "x").agent_message.as_deref(),
            Some("denied wrote"),
            "outside the writable paths is denied, inside is allowed"
        );
    }
    assert!(!Path::new(&outside).exists());
    assert_eq!(only_run(&s).sandbox, copse_hooks::SandboxState::Enforced);
}

/// A hook that records itself, a background child and a `setsid` grandchild (pid
/// namespace and pid there: its private /proc shows no host pid; see
/// `isolation::host_pid`), then answers.
fn family_hook(fx: &Fx, pids: &str) -> String {
    let spawn = format!(
        "echo {} >> {pids}; exec sleep 1000",
        crate::isolation::SELF_ID_SH
    );
    python_hook(
        fx,
        "family",
        &format!(
            r#"    if not os.path.exists({pids:?}):
        with open({pids:?}, "w") as f:
            f.write(os.readlink("/proc/self/ns/pid") + " " + str(os.getpid()) + "\n")
        import subprocess
        subprocess.Popen(["sh", "-c", {spawn:?}])
        subprocess.Popen(["setsid", "sh", "-c", {spawn:?}])
        time.sleep(0.3)
    reply({{"id": req["id"], "response": {{}}}})"#
        ),
    )
}

#[test]
fn dropping_the_engine_leaves_no_process_behind() {
    let fx = setup().build();
    let pids = fx.at("out/pids");
    let hook = family_hook(&fx, &pids);
    fx.copse_user(json!({ "toolGate": [persistent(&hook, json!({}))] }));
    let engine = fx.engine();
    shell(&session(&engine), "x");
    wait_until("three pids", || read_pids(Path::new(&pids)).len() == 3);
    let family = read_pids(Path::new(&pids));
    assert!(
        family.iter().all(|p| alive(*p)),
        "all running while the engine lives"
    );
    drop(engine);
    for pid in family {
        assert!(!alive(pid), "pid {pid} survived the engine");
    }
}

#[test]
fn an_idle_hook_stops_and_restarts_on_demand() {
    let fx = setup().build();
    let pids = fx.at("out/pids");
    let hook = family_hook(&fx, &pids);
    fx.copse_user(json!({ "toolGate": [persistent(&hook, json!({"idleTimeout": 0.3}))] }));
    let engine = fx.engine();
    let s = session(&engine);
    shell(&s, "x");
    wait_until("three pids", || read_pids(Path::new(&pids)).len() == 3);
    let family = read_pids(Path::new(&pids));
    wait_until("the idle stop", || engine.persistent_pids().is_empty());
    wait_until("the family to be gone", || {
        family.iter().all(|p| !alive(*p))
    });
    assert_eq!(engine.persistent_status()[0].state, "stopped");
    std::fs::remove_file(&pids).unwrap();
    let v = shell(&s, "y");
    assert!(v.runs.iter().all(|r| r.failure.is_none()), "{v:?}");
    assert_eq!(engine.persistent_status()[0].starts, 2);
}

#[test]
fn a_changed_script_stops_the_hook_and_the_next_event_runs_the_new_content() {
    let fx = setup().build();
    let script = |message: &str| {
        format!(
            r#"import json, sys
print(json.dumps({{"hello": {{"protocol": 1, "events": ["toolGate"]}}}}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    print(json.dumps({{"id": req["id"], "response": {{"decision": "deny", "agentMessage": "{message}"}}}}), flush=True)
"#
        )
    };
    // A user hook: a changed script restarts it with the new content.
    let path = fx.write("copse/policy.py", &script("v1"));
    fx.copse_user(
        json!({ "toolGate": [persistent(&format!("{} {}", python(), path.display()), json!({}))] }),
    );
    let engine = fx.engine();
    let s = session(&engine);
    assert_eq!(shell(&s, "x").agent_message.as_deref(), Some("v1"));
    let old = engine.persistent_pids();
    std::fs::write(&path, script("version two")).unwrap();
    assert_eq!(shell(&s, "x").agent_message.as_deref(), Some("version two"));
    let new = engine.persistent_pids();
    assert_ne!(old, new);
    wait_until("the old process to go", || !alive(old[0]));

    // A project hook whose pinned script changes: it is stopped and not run.
    let fx = setup().build();
    let hook_path = fx.write("ws/.copse/policy.py", &script("pinned"));
    fx.copse_project(json!({ "toolGate": [persistent("python3 .copse/policy.py", json!({}))] }));
    let ws = fx.path("ws");
    let snapshot = fx.engine().trust_snapshot(&ws);
    let engine = fx.engine_with(|c| {
        c.trusted(TrustedWorkspace::Pinned {
            path: ws.clone(),
            configs: snapshot.configs.clone(),
            scripts: Some(snapshot.scripts.clone()),
        })
    });
    let s = session(&engine);
    assert_eq!(shell(&s, "x").agent_message.as_deref(), Some("pinned"));
    let pid = engine.persistent_pids()[0];
    std::fs::write(&hook_path, script("tampered")).unwrap();
    let v = shell(&s, "x");
    assert!(
        v.runs.iter().all(|r| r.blocked),
        "a changed pinned script does not run: {v:?}"
    );
    assert_eq!(
        v.decision,
        Some(copse_hooks::Decision::Deny),
        "it blocks the gate"
    );
    wait_until("the pinned hook's process to stop", || !alive(pid));
    assert!(engine.persistent_pids().is_empty());
}

// ---------------------------------------------------------------------------------
// The same policy, per-call and persistent
// ---------------------------------------------------------------------------------

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/persistent")
        .join(name)
        .display()
        .to_string()
}

/// 200 mixed events from a fixed seed: shell commands, file writes, prompts.
fn replay() -> Vec<EventPayload> {
    let commands = [
        "ls -la",
        "rm -rf /tmp/x",
        "sudo apt install",
        "curl https://example.com",
        "npm install",
        "git status",
        "echo 'quoted \"text\"'",
        "cargo build",
    ];
    let paths = ["src/main.rs", ".env", "config/.env", "README.md"];
    let prompts = [
        "fix the bug",
        "my password is hunter2",
        "add context please",
        "ünïcödé prompt",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        usize::try_from(state % n as u64).unwrap()
    };
    (0..200)
        .map(|_| match next(3) {
            0 => EventPayload::ToolGate(ToolCall::new(
                "run_shell",
                obj(json!({ "command": commands[next(commands.len())] })),
            )),
            1 => EventPayload::ToolGate(ToolCall::new(
                "write_file",
                obj(json!({ "path": paths[next(paths.len())], "content": "x" })),
            )),
            _ => EventPayload::BeforeSubmitPrompt {
                prompt: prompts[next(prompts.len())].to_string(),
            },
        })
        .collect()
}

fn verdicts(fx: &Fx, command: &str, persistent: bool) -> Vec<Value> {
    let entry = json!({ "command": command, "persistent": persistent });
    fx.copse_user(json!({ "toolGate": [entry.clone()], "beforeSubmitPrompt": [entry] }));
    let engine = fx.engine();
    let s = session(&engine);
    let out = replay()
        .into_iter()
        .map(|event| {
            let v = match s.fire(event) {
                copse_hooks::Fired::Verdict(v) => v,
                other => panic!("expected a verdict: {other:?}"),
            };
            assert!(
                v.runs.iter().all(|r| r.result != RunOutcome::Failed),
                "{v:?}"
            );
            json!({
                "decision": format!("{:?}", v.effective_decision()),
                "agent": v.agent_message,
                "user": v.user_message,
                "updated": v.updated_input,
                "context": v.inject_context,
                "halt": v.halt.map(|h| h.reason),
            })
        })
        .collect();
    if persistent {
        assert_eq!(
            engine.persistent_status()[0].starts,
            1,
            "one process served all"
        );
    }
    out
}

#[test]
fn the_same_policy_gives_identical_verdicts_per_call_and_persistent() {
    let fx = setup().build();
    let per_call = verdicts(
        &fx,
        &format!("{} -S {}", python(), fixture("policy_call.py")),
        false,
    );
    let persistent = verdicts(
        &fx,
        &format!("{} -S {}", python(), fixture("policy_persistent.py")),
        true,
    );
    assert_eq!(per_call.len(), 200);
    for (i, (a, b)) in per_call.iter().zip(&persistent).enumerate() {
        assert_eq!(a, b, "event {i} differs");
    }
    // The replay exercises every kind of answer.
    let decisions: std::collections::BTreeSet<String> = per_call
        .iter()
        .map(|v| v["decision"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(decisions.len(), 3, "{decisions:?}");
    assert!(per_call.iter().any(|v| v["updated"].is_object()));
    assert!(per_call.iter().any(|v| v["context"].is_string()));
}

#[test]
fn a_cancelled_request_is_abandoned_and_the_process_lives_on() {
    let fx = setup().build();
    let hook = python_hook(
        &fx,
        "cancel",
        r#"    if cmd == "hang":
        continue
    reply({"id": req["id"], "response": {"decision": "deny", "agentMessage": "saw " + cmd}})"#,
    );
    fx.copse_user(json!({ "toolGate": [persistent(&hook, json!({"timeout": 30}))] }));
    let engine = fx.engine();
    assert_eq!(
        shell(&session(&engine), "a").agent_message.as_deref(),
        Some("saw a")
    );
    let pids = engine.persistent_pids();
    let token = copse_hooks::CancelToken::new();
    let (e2, t2) = (engine.clone(), token.clone());
    let started = Instant::now();
    let hung = std::thread::spawn(move || {
        t2.enter(|| {
            let s = session(&e2);
            shell(&s, "hang");
            only_run(&s)
        })
    });
    std::thread::sleep(Duration::from_millis(200));
    token.cancel();
    let run = hung.join().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "not the 30 s timeout"
    );
    let failure = run.failure.unwrap();
    assert!(failure.message.contains("cancelled"), "{}", failure.message);
    assert_eq!(
        engine.persistent_pids(),
        pids,
        "the shared process is not killed"
    );
    assert_eq!(
        shell(&session(&engine), "b").agent_message.as_deref(),
        Some("saw b")
    );
}

#[test]
fn a_hook_that_never_says_hello_fails_within_the_request_timeout() {
    let fx = setup().build();
    fx.copse_user(json!({ "toolGate": [persistent("exec sleep 30", json!({"timeout": 0.3}))] }));
    let engine = fx.engine();
    let s = session(&engine);
    let started = Instant::now();
    let v = shell(&s, "ls");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(v.effective_decision(), Decision::Deny);
    let failure = only_run(&s).failure.unwrap();
    assert_eq!(failure.kind, FailureKind::Timeout);
    assert!(
        failure.message.contains("did not say hello"),
        "{}",
        failure.message
    );
    wait_until("the silent process to be killed", || {
        engine.persistent_pids().is_empty()
    });
}

#[test]
fn the_session_environment_overlay_does_not_reach_a_shared_process() {
    let fx = setup().build();
    let hook = python_hook(
        &fx,
        "env",
        r#"    reply({"id": req["id"], "response": {"decision": "deny", "agentMessage": "FOO=" + os.environ.get("FOO", "unset") + " conv=" + p["conversation_id"]}})"#,
    );
    let per_call = r#"cat >/dev/null; printf '{"decision":"deny","agentMessage":"FOO=%s"}' "$FOO""#;
    fx.copse_user(json!({
        "sessionStart": [{ "command": r#"cat >/dev/null; echo '{"sessionEnv": {"FOO": "bar"}}'"# }],
        "toolGate": [persistent(&hook, json!({"matcher": "^run_shell$"})), { "command": per_call, "matcher": "^read_file$" }]
    }));
    let engine = fx.engine();
    let s = session(&engine);
    s.fire(EventPayload::SessionStart { first_turn: true });
    let per_call = s.gate_tool(ToolCall::new("read_file", obj(json!({"path": "x"}))));
    assert_eq!(per_call.agent_message.as_deref(), Some("FOO=bar"));
    // What a persistent hook needs per session comes in the payload instead.
    assert_eq!(
        shell(&s, "ls").agent_message.as_deref(),
        Some("FOO=unset conv=conv-p")
    );
}

#[test]
fn only_a_persistent_hook_sees_copse_hook_persistent() {
    // Even a host whose own environment has it set does not pass it to a per-call hook.
    let fx = setup().env(&[("COPSE_HOOK_PERSISTENT", "1")]).build();
    let hook = python_hook(
        &fx,
        "mode",
        r#"    reply({"id": req["id"], "response": {"decision": "deny", "agentMessage": "persistent=" + os.environ.get("COPSE_HOOK_PERSISTENT", "unset")}})"#,
    );
    let per_call = r#"cat >/dev/null; printf '{"decision":"deny","agentMessage":"persistent=%s"}' "${COPSE_HOOK_PERSISTENT-unset}""#;
    fx.copse_user(json!({
        "toolGate": [persistent(&hook, json!({"matcher": "^run_shell$"})), { "command": per_call, "matcher": "^read_file$" }]
    }));
    let engine = fx.engine();
    let s = session(&engine);
    assert_eq!(
        shell(&s, "ls").agent_message.as_deref(),
        Some("persistent=1")
    );
    let per_call = s.gate_tool(ToolCall::new("read_file", obj(json!({"path": "x"}))));
    assert_eq!(per_call.agent_message.as_deref(), Some("persistent=unset"));
    assert_eq!(
        copse_hooks::persistent::PERSISTENT_ENV,
        "COPSE_HOOK_PERSISTENT"
    );
}
