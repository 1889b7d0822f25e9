//! The built-in guard's cost: `cargo bench -p copse-hooks --bench guard`.
//!
//! Plain `std` timing, no harness. Each figure is measured in this run beside its
//! baseline, interleaved in rounds (so machine noise hits both), and the median round
//! is printed with its target and PASS/MISS. A miss is reported, never asserted.
//!
//! 1. The guard's own evaluation: µs per call over the corpus of dangerous and
//!    everyday calls (`tests/corpus/guard`), on a guard already loaded (the first call
//!    of a process, which parses the packs once, is printed apart). Target ≤ 20 µs.
//! 2. A gate through `Session::gate_tool` with no hook configured: the guard on
//!    (`enforce`) against the same engine with it `off`, both recording to an audit
//!    store (the guard's quiet allow of a call no hook ran for is a record). Target
//!    ≤ 1.05×.
//! 3. The same with one trivial hook (a process per gate): the whole gate with the
//!    guard on against off. Target ≤ 1.05×.

// reason: a benchmark binary, not library code; a broken setup should abort loudly,
// while target misses are only reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use copse_hooks::{Engine, EngineConfig, GuardMode, SessionIdentity, ToolCall};
use serde_json::{Map, Value, json};

const ROUNDS: usize = 9;

fn main() {
    println!("copse-hooks guard benchmark (pid {})", std::process::id());
    println!(
        "ratios are against a baseline measured in this run, interleaved; medians of {ROUNDS} rounds\n"
    );
    evaluation();
    gate_without_hooks();
    gate_with_a_hook();
}

/// Every call of the corpus files.
fn corpus() -> Vec<(String, Map<String, Value>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/guard");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(line).unwrap();
            out.push((
                v["tool"].as_str().unwrap().to_string(),
                v["input"].as_object().unwrap().clone(),
            ));
        }
    }
    out
}

/// A temp home, copse dir and workspace, and an engine over them.
struct Fixture {
    _dir: tempfile::TempDir,
    engine: Engine,
}

fn fixture(guard: GuardMode, hook: bool) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let ws = dir.path().join("ws");
    let copse = dir.path().join("copse");
    for d in [&home, &ws, &copse] {
        std::fs::create_dir_all(d).unwrap();
    }
    if hook {
        let cursor = home.join(".cursor");
        std::fs::create_dir_all(&cursor).unwrap();
        let doc = json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": "cat >/dev/null; echo '{\"permission\":\"allow\"}'"}
        ]}});
        std::fs::write(cursor.join("hooks.json"), doc.to_string()).unwrap();
    }
    let mut config = EngineConfig::from_process(vec![ws])
        .home(&home)
        .enabled(true);
    // The audit store as the CLI keeps it: with the guard on, a call no hook ran for
    // is recorded (its quiet allow), and that cost is part of the ratio.
    config.spine_path = Some(copse.join("spine.db"));
    config.copse_dir = copse;
    config.guard = guard;
    Fixture {
        _dir: dir,
        engine: Engine::new(config),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn report(what: &str, value: String, pass: bool, target: &str) {
    println!(
        "  {what:<52} {value:>14}   target {target:<10} {}",
        if pass { "PASS" } else { "MISS" }
    );
}

fn evaluation() {
    println!("1. the guard's own evaluation");
    let calls = corpus();
    let f = fixture(GuardMode::Enforce, false);
    let first = Instant::now();
    black_box(f.engine.guard().evaluate(&calls[0].0, &calls[0].1));
    let first = first.elapsed();
    let mut per_call = Vec::new();
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for (tool, input) in &calls {
            black_box(f.engine.guard().evaluate(tool, input));
        }
        per_call.push(t.elapsed().as_secs_f64() * 1e6 / calls.len() as f64);
    }
    let m = median(per_call.clone());
    let worst = per_call.iter().copied().fold(0.0, f64::max);
    println!(
        "  first call of the process (loads and compiles the packs): {:.2} ms",
        first.as_secs_f64() * 1e3
    );
    report(
        &format!(
            "µs per call, {} corpus calls (worst round {worst:.1})",
            calls.len()
        ),
        format!("{m:.1} µs"),
        m <= 20.0,
        "≤ 20 µs",
    );
    println!();
}

fn gate_ratio(hook: bool, per_round: usize) -> (f64, f64, f64) {
    let on = fixture(GuardMode::Enforce, hook);
    let off = fixture(GuardMode::Off, hook);
    let s_on = on.engine.session(SessionIdentity::new("bench"));
    let s_off = off.engine.session(SessionIdentity::new("bench"));
    let call = || {
        let mut input = Map::new();
        input.insert("command".into(), Value::String("git status --short".into()));
        ToolCall::new("run_shell", input)
    };
    // Warm both (the guard's packs, the configs' caches).
    for _ in 0..3 {
        black_box(s_on.gate_tool(call()));
        black_box(s_off.gate_tool(call()));
    }
    let mut ratios = Vec::new();
    let mut ons = Vec::new();
    let mut offs = Vec::new();
    for round in 0..ROUNDS {
        let time = |s: &copse_hooks::Session| {
            let t = Instant::now();
            for _ in 0..per_round {
                black_box(s.gate_tool(call()));
            }
            t.elapsed()
        };
        let (a, b): (Duration, Duration) = if round % 2 == 0 {
            let a = time(&s_on);
            (a, time(&s_off))
        } else {
            let b = time(&s_off);
            (time(&s_on), b)
        };
        let per = |d: Duration| d.as_secs_f64() * 1e6 / per_round as f64;
        ons.push(per(a));
        offs.push(per(b));
        ratios.push(a.as_secs_f64() / b.as_secs_f64());
    }
    (median(ratios), median(ons), median(offs))
}

fn gate_without_hooks() {
    println!("2. a gate with no hook configured, guard on vs off");
    let (ratio, on, off) = gate_ratio(false, 2_000);
    println!("  guard on {on:.1} µs per gate, off {off:.1} µs (the in-engine floor)");
    report(
        "gate with the guard on ÷ off, no hook",
        format!("{ratio:.2}×"),
        ratio <= 1.05,
        "≤ 1.05×",
    );
    println!();
}

fn gate_with_a_hook() {
    println!("3. a gate with one trivial hook, guard on vs off");
    let (ratio, on, off) = gate_ratio(true, 40);
    println!("  guard on {on:.0} µs per gate, off {off:.0} µs");
    report(
        "gate with the guard on ÷ off, one hook",
        format!("{ratio:.2}×"),
        ratio <= 1.05,
        "≤ 1.05×",
    );
}
