//! Whole-loop benchmark: `cargo bench -p copse-hooks --bench session`.
//!
//! 1. Engine overhead per event: a 1,000-event session (prompts, tool gates, tool
//!    results, edits, subagents, stops) against a config of 50 hooks none of which
//!    match, in µs per event, against the same events with hooks off (the baseline
//!    measured in this run).
//! 2. Detached fan-out: one observation event fanning out to 100 matching hooks (8 run
//!    at once, the rest queue): wall time until idle, and the process's peak resident
//!    memory growth (VmHWM) across it.
//! 3. Config freshness: 1,000 tool gates in one long-lived engine with one trusted
//!    root and nothing matching: µs per gate and config-file accesses (a `stat` or a
//!    read by discovery) per gate after the first three. `-- gates` runs only this part
//!    (for `strace -c`).
//!
//! Plain `std` timing; figures are printed beside their targets, never asserted.

// reason: a benchmark binary; a broken setup (no temp dir) should abort loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use copse_hooks::{Engine, EngineConfig, EventPayload, SessionIdentity, ToolCall};
use copse_hooks::{ToolResult, tool};
use serde_json::{Map, Value, json};

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// 1,000 realistic canonical events.
fn events() -> Vec<EventPayload> {
    let mut out = Vec::with_capacity(1000);
    let mut i = 0u64;
    while out.len() < 1000 {
        i += 1;
        out.push(EventPayload::BeforeSubmitPrompt {
            prompt: format!("step {i}: fix the failing test"),
        });
        for k in 0..3 {
            let cmd = format!("cargo test -p crate{k} -- case_{i}");
            out.push(EventPayload::ToolGate(ToolCall::new(
                tool::RUN_SHELL,
                obj(json!({"command": cmd})),
            )));
            out.push(EventPayload::AfterToolUse({
                let mut result = ToolResult::new(
                    tool::RUN_SHELL,
                    obj(json!({"command": cmd})),
                    "test result: ok. 12 passed",
                );
                result.is_error = false;
                result.duration_ms = 1200;
                result.tool_call_id = format!("call-{i}-{k}");
                result.response = None;
                result
            }));
        }
        out.push(EventPayload::ToolGate(ToolCall::new(
            tool::STR_REPLACE,
            obj(json!({"path": "/w/src/lib.rs", "old_str": "a", "new_str": "b"})),
        )));
        out.push(EventPayload::AfterFileEdit {
            file_path: "/w/src/lib.rs".into(),
            edits: Vec::new(),
        });
        out.push(EventPayload::SubagentStart {
            subagent_type: "explore".into(),
        });
        out.push(EventPayload::Stop {
            status: "completed".into(),
        });
    }
    out.truncate(1000);
    out
}

fn engine(home: &Path, ws: &Path, hooks: Value, enabled: bool) -> Engine {
    std::fs::create_dir_all(home.join(".cursor")).unwrap();
    std::fs::write(
        home.join(".cursor/hooks.json"),
        json!({"version": 1, "hooks": hooks}).to_string(),
    )
    .unwrap();
    Engine::new(
        EngineConfig::from_process(vec![ws.to_path_buf()])
            .home(home)
            .enabled(enabled),
    )
}

fn non_matching_hooks() -> Value {
    let entry = |m: &str| json!({"command": "touch /nonexistent/should-never-run", "matcher": m});
    let mut shell = Vec::new();
    for n in 0..20 {
        shell.push(entry(&format!("^rm -rf /tmp/never-{n}")));
    }
    json!({
        "beforeShellExecution": shell,
        "preToolUse": (0..10).map(|n| entry(&format!("^NeverTool{n}$"))).collect::<Vec<_>>(),
        "afterShellExecution": (0..5).map(|n| entry(&format!("^never-{n}"))).collect::<Vec<_>>(),
        "postToolUse": (0..5).map(|n| entry(&format!("^NeverTool{n}$"))).collect::<Vec<_>>(),
        "afterFileEdit": [{"command": "true", "glob": "*.never"}],
        "subagentStart": [entry("^never$")],
        "stop": [entry("^NotStop$")],
        "beforeSubmitPrompt": (0..7).map(|n| entry(&format!("^Never{n}$"))).collect::<Vec<_>>(),
    })
}

fn per_event(engine: &Engine, events: &[EventPayload]) -> Duration {
    let session = engine.session(SessionIdentity::new("bench"));
    let start = Instant::now();
    for e in events {
        std::hint::black_box(session.fire(e.clone()));
    }
    session.wait_idle();
    start.elapsed() / events.len() as u32
}

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Part 3: `n` tool gates in one engine, one trusted root, nothing matching.
fn freshness(n: u32) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (home, ws) = (root.join("home"), root.join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    let base = engine(&home, &ws, non_matching_hooks(), true);
    let mut config = base.config().clone().trust(&ws);
    config.copse_dir = home.join(".copse");
    let engine = Engine::new(config);
    let session = engine.session(SessionIdentity::new("gates"));
    let gate = || {
        let call = ToolCall::new(tool::RUN_SHELL, obj(json!({"command": "ls"})));
        std::hint::black_box(session.gate_tool(call));
    };
    // The first three gates read the configs (and set up whatever keeps them fresh).
    for _ in 0..3 {
        gate();
    }
    let accesses = engine.config_file_accesses();
    let start = Instant::now();
    for _ in 0..n {
        gate();
    }
    let took = start.elapsed() / n;
    let per_gate = (engine.config_file_accesses() - accesses) as f64 / f64::from(n);
    println!("3. Config freshness: {n} tool gates, one trusted root, nothing matching");
    println!(
        "   per gate                      {:>8.2} µs   {per_gate:.2} config-file accesses",
        took.as_secs_f64() * 1e6
    );
}

fn main() {
    if std::env::args().any(|a| a == "gates") {
        freshness(1000);
        return;
    }
    println!(
        "copse-hooks session benchmark (pid {})\n",
        std::process::id()
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let events = events();

    let on = engine(&dir.path().join("home-on"), &ws, non_matching_hooks(), true);
    let off = engine(
        &dir.path().join("home-off"),
        &ws,
        non_matching_hooks(),
        false,
    );
    let mut on_t = Vec::new();
    let mut off_t = Vec::new();
    for _ in 0..3 {
        per_event(&on, &events); // warm-up: parse and cache the config
    }
    for _ in 0..15 {
        on_t.push(per_event(&on, &events));
        off_t.push(per_event(&off, &events));
    }
    on_t.sort();
    off_t.sort();
    let (on_m, off_m) = (on_t[on_t.len() / 2], off_t[off_t.len() / 2]);
    let pass = if on_m < Duration::from_micros(20) {
        "PASS"
    } else {
        "MISS"
    };
    println!(
        "1. 1,000-event session, 50 configured hooks, none matching (median of 15 interleaved runs)"
    );
    println!(
        "   hooks off (baseline)          {:>8.2} µs/event",
        off_m.as_secs_f64() * 1e6
    );
    println!(
        "   hooks on, nothing matches     {:>8.2} µs/event   target < 20 µs   {pass}   ({:.1}× the off path)",
        on_m.as_secs_f64() * 1e6,
        on_m.as_secs_f64() / off_m.as_secs_f64().max(1e-12)
    );

    // 2. Detached fan-out of 100 hooks.
    // Inside the workspace: sandboxed hooks may write there.
    let marker_dir = ws.join("markers");
    std::fs::create_dir_all(&marker_dir).unwrap();
    let hooks: Vec<Value> = (0..100)
        .map(|n| json!({"command": format!("cat >/dev/null; sleep 0.05; touch {}/{n}", marker_dir.display())}))
        .collect();
    let fan = engine(
        &dir.path().join("home-fan"),
        &ws,
        json!({"afterAgentResponse": hooks}),
        true,
    );
    let session = fan.session(SessionIdentity::new("fan"));
    let before = vm_hwm_kib();
    let start = Instant::now();
    let fired = session.fire(EventPayload::AfterAgentResponse {
        text: "done".into(),
    });
    let returned = start.elapsed();
    session.wait_idle();
    let idle = start.elapsed();
    let after = vm_hwm_kib();
    let ran = std::fs::read_dir(&marker_dir).unwrap().count();
    println!("\n2. Detached fan-out: 100 matching afterAgentResponse hooks, each `sleep 0.05`");
    println!(
        "   fire() returned after         {:>8.2} ms   ({fired:?})",
        returned.as_secs_f64() * 1e3
    );
    println!(
        "   all hooks finished after      {:>8.1} ms   (8 at once: ideal ≈ {:.0} ms of sleeping)",
        idle.as_secs_f64() * 1e3,
        (100.0f64 / 8.0).ceil() * 50.0
    );
    println!("   hooks that ran                {ran:>8}");
    match (before, after) {
        (Some(b), Some(a)) => println!(
            "   peak RSS (VmHWM)              {:>8} KiB before, {a} KiB after (+{} KiB)",
            b,
            a.saturating_sub(b)
        ),
        _ => println!("   peak RSS unavailable (no /proc/self/status)"),
    }
    println!();
    freshness(1000);
}
