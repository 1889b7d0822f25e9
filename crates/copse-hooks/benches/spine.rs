//! Spine (audit store) benchmark: `cargo bench -p copse-hooks --bench spine`.
//!
//! Plain `std` timing, no harness; prints a table with each figure beside its target
//! and PASS/MISS. A miss is reported, never asserted.
//!
//! 1. Sustained throughput: 100,000 realistic records (≈3 KiB stdin JSON, ≈1 KiB
//!    stdout, a stderr line, a deny with messages) recorded as fast as the writer
//!    sustains (the producer backs off while more than 5,000 are pending, so nothing is
//!    dropped), then flushed; runs per second from the first `record` to the end of the
//!    flush. Once with the default retention (10,000 runs, pruned as it goes) and once
//!    keeping everything.
//! 2. What a gate pays: `Spine::record` on the caller's thread, ns per call — each call
//!    timed on its own (median, p99, max; includes ~20 ns of clock reads), and in
//!    blocks of 64 (median of the block means). Then `RunRecord::from_run` + `record`
//!    for a realistic `HookRun` (the copy of the captured streams is included), and
//!    `record` on a disabled spine.

// reason: a benchmark binary, not library code; a broken setup (no temp dir) should
// abort loudly, while target misses are only reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use copse_hooks::FailurePolicy;
use copse_hooks::spine::{Retention, RunRecord, Spine, SpineOptions, new_run_id, unix_ms};
use copse_hooks::{CanonicalEvent, Decision, Dialect, HookRun, Outcome, RunOutcome, Scope};

const THROUGHPUT_RECORDS: u64 = 100_000;
const THROUGHPUT_TARGET: f64 = 10_000.0;
const BACKLOG: u64 = 5_000;
const SINGLE_CALLS: usize = 50_000;
const BLOCK: usize = 64;
const BLOCKS: usize = 2_000;
const RECORD_TARGET_NS: f64 = 1_000.0;

fn main() {
    println!("copse-hooks spine benchmark (pid {})\n", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    rule();
    println!(
        "{:<58} {:>16} {:>12} {:>6}",
        "measure", "result", "target", ""
    );
    rule();
    throughput(
        &dir.path().join("retained.db"),
        Retention::default(),
        "default retention (10k runs)",
    );
    throughput(
        &dir.path().join("all.db"),
        Retention {
            max_runs: None,
            max_age_days: None,
            max_bytes: None,
        },
        "keeping everything",
    );
    rule();
    caller_cost(&dir.path().join("caller.db"));
    rule();
    gate_with_and_without_spine(dir.path());
    rule();
}

/// Gate latency with one trivial hook, recording on vs off (interleaved; the
/// recording cost must not show in the gate: target <= 1.05x).
fn gate_with_and_without_spine(dir: &Path) {
    use copse_hooks::{Engine, EngineConfig, SessionIdentity, ToolCall};
    let home = dir.join("gate-home");
    let ws = dir.join("gate-ws");
    std::fs::create_dir_all(home.join(".cursor")).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        home.join(".cursor/hooks.json"),
        r#"{"hooks":{"beforeShellExecution":[{"command":"cat >/dev/null; echo '{\"permission\":\"allow\"}'"}]}}"#,
    )
    .unwrap();
    let base = EngineConfig::from_process(vec![ws.clone()])
        .home(&home)
        .enabled(true);
    let off = Engine::new(base.clone());
    let on = Engine::new(base.spine(dir.join("gate.db")));
    let (s_off, s_on) = (
        off.session(SessionIdentity::new("bench")),
        on.session(SessionIdentity::new("bench")),
    );
    let mut input = serde_json::Map::new();
    input.insert(
        "command".into(),
        serde_json::Value::String("git status".into()),
    );
    let call = || ToolCall::new("run_shell", input.clone());
    for _ in 0..20 {
        s_off.gate_tool(call());
        s_on.gate_tool(call());
    }
    let (mut t_off, mut t_on) = (Vec::new(), Vec::new());
    for i in 0..300 {
        let time = |s: &copse_hooks::Session| {
            let t = Instant::now();
            let v = s.gate_tool(call());
            assert_eq!(v.runs.len(), 1);
            t.elapsed().as_secs_f64() * 1e6
        };
        if i % 2 == 0 {
            t_off.push(time(&s_off));
            t_on.push(time(&s_on));
        } else {
            t_on.push(time(&s_on));
            t_off.push(time(&s_off));
        }
    }
    on.flush_spine();
    let (t_off, t_on) = (sorted_ns(t_off), sorted_ns(t_on));
    let (m_off, m_on) = (pct(&t_off, 0.5), pct(&t_on, 0.5));
    let ratio = m_on / m_off;
    row(
        "gate, one trivial hook, spine off: median µs",
        format!("{m_off:.0}"),
        "",
        None,
    );
    row(
        "gate, one trivial hook, spine on: median µs",
        format!("{m_on:.0}"),
        "",
        None,
    );
    row(
        "spine on / off (medians)",
        format!("{ratio:.3}x"),
        "<= 1.05x",
        Some(ratio <= 1.05),
    );
    let recorded = on.spine().map(|s| s.stats().committed).unwrap_or(0);
    row(
        "  runs committed by the spine-on engine",
        format!("{recorded}"),
        "",
        None,
    );
}

fn rule() {
    println!("{}", "-".repeat(96));
}

fn row(measure: &str, result: String, target: &str, pass: Option<bool>) {
    let word = match pass {
        Some(true) => "PASS",
        Some(false) => "MISS",
        None => "",
    };
    println!("{measure:<58} {result:>16} {target:>12} {word:>6}");
}

fn stdin_json(i: u64) -> Vec<u8> {
    let body = "x".repeat(2_600);
    format!(
        r#"{{"conversation_id":"c-{i}","generation_id":"g-{i}","model":"claude-sonnet-4","hook_event_name":"beforeShellExecution","command":"git commit -m 'wip {i}'","cwd":"/home/u/src/project","workspace_roots":["/home/u/src/project"],"context":"{body}"}}"#
    )
    .into_bytes()
}

/// A realistic record: a deny with messages and a few KiB of captured streams.
fn record(i: u64) -> RunRecord {
    let started_at = unix_ms(SystemTime::now());
    {
        let mut record = RunRecord::default();
        record.run_id = new_run_id(started_at);
        record.session_id = format!("session-{}", i / 200);
        record.turn_id = format!("turn-{}", i / 10);
        record.dialect = "cursor".into();
        record.event = "beforeShellExecution".into();
        record.canonical = "toolGate".into();
        record.command = "~/.cursor/hooks/no-force-push.sh".into();
        record.source = "/home/u/.cursor/hooks.json".into();
        record.scope = "user".into();
        record.started_at = started_at;
        record.duration_ms = 12;
        record.exit_code = Some(0);
        record.parse_ok = true;
        record.policy = Some("closed".into());
        record.sandbox = Some("enforced".into());
        record.outcome = "deny".into();
        record.decision = Some("deny".into());
        record.agent_message = Some("force pushes to main are not allowed; push a branch".into());
        record.user_message = Some("blocked a force push".into());
        record.stdin = stdin_json(i);
        record.stdout = format!(
            r#"{{"permission":"deny","agent_message":"force pushes to main are not allowed","user_message":"blocked","log":"{}"}}"#,
            "y".repeat(900)
        )
        .into_bytes();
        record.stderr = b"no-force-push: matched rule 3\n".to_vec();
        record
    }
}

fn throughput(path: &Path, retention: Retention, label: &str) {
    let (spine, warning) = Spine::open_with(
        path,
        SpineOptions {
            retention,
            ..SpineOptions::default()
        },
    );
    if let Some(w) = warning {
        row(
            &format!("throughput, {label}"),
            format!("disabled: {w}"),
            "",
            Some(false),
        );
        return;
    }
    // Building records is the engine's work, not the store's: prepare them first.
    let records: Vec<RunRecord> = (0..THROUGHPUT_RECORDS).map(record).collect();
    let bytes: usize = records
        .iter()
        .map(|r| r.stdin.len() + r.stdout.len() + r.stderr.len())
        .sum();
    let start = Instant::now();
    for (i, rec) in records.into_iter().enumerate() {
        if i % 100 == 0 {
            while spine.stats().pending > BACKLOG {
                std::thread::sleep(Duration::from_micros(500));
            }
        }
        spine.record(rec);
    }
    spine.flush();
    let took = start.elapsed();
    let stats = spine.stats();
    let rate = stats.committed as f64 / took.as_secs_f64();
    row(
        &format!("throughput, {label}: runs/s"),
        format!("{rate:.0}"),
        &format!(">= {THROUGHPUT_TARGET:.0}"),
        Some(rate >= THROUGHPUT_TARGET && stats.dropped == 0),
    );
    row(
        "  committed / dropped / transactions",
        format!(
            "{} / {} / {}",
            stats.committed, stats.dropped, stats.batches
        ),
        "",
        None,
    );
    row(
        "  captured stream MiB/s | wall time",
        format!(
            "{:.1} | {:.2} s",
            bytes as f64 / took.as_secs_f64() / (1024.0 * 1024.0),
            took.as_secs_f64()
        ),
        "",
        None,
    );
    drop(spine);
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let kept = Spine::open_read_only(path)
        .ok()
        .map(|s| {
            s.query(&copse_hooks::spine::RunFilter {
                limit: Some(usize::MAX),
                ..Default::default()
            })
            .map(|v| v.len())
            .unwrap_or(0)
        })
        .unwrap_or(0);
    row(
        "  rows kept | database file size",
        format!("{kept} | {:.1} MiB", size as f64 / (1024.0 * 1024.0)),
        "",
        None,
    );
}

fn sorted_ns(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(idx).copied().unwrap_or(f64::NAN)
}

/// Waits (untimed) until the writer has caught up, so the queue never fills.
fn drain(spine: &Spine) {
    if spine.stats().pending > BACKLOG {
        spine.flush();
    }
}

fn hook_run(i: u64) -> HookRun {
    let mut run = HookRun::new(
        "beforeShellExecution",
        CanonicalEvent::ToolGate,
        Dialect::Cursor,
        "~/.cursor/hooks/no-force-push.sh",
        "/home/u/.cursor/hooks.json",
        Scope::User,
    );
    run.started_at = SystemTime::now();
    run.duration = Duration::from_millis(12);
    run.exit_code = Some(0);
    run.parse_ok = true;
    run.failure = None;
    run.policy = FailurePolicy::Closed;
    run.outcome = {
        let mut outcome = Outcome::default();
        outcome.decision = Some(Decision::Deny);
        outcome.agent_message = Some("force pushes to main are not allowed".into());
        outcome.user_message = Some("blocked a force push".into());
        outcome
    };
    run.result = RunOutcome::Deny;
    run.stdin = stdin_json(i);
    run.stdout = vec![b'y'; 1_000];
    run.stderr = b"no-force-push: matched rule 3\n".to_vec();
    run.sandbox = copse_hooks::SandboxState::Enforced;
    run.leaked = false;
    run.warnings = Vec::new();
    run
}

/// A copy of the template with its own run id (a duplicate id would be rejected).
fn fresh(template: &RunRecord) -> RunRecord {
    let mut record = template.clone();
    record.run_id = new_run_id(template.started_at);
    record
}

fn caller_cost(path: &Path) {
    let (spine, warning) = Spine::open(path);
    if let Some(w) = warning {
        row("record() cost", format!("disabled: {w}"), "", Some(false));
        return;
    }
    let template = record(0);

    // Each call timed on its own.
    let mut single = Vec::with_capacity(SINGLE_CALLS);
    for _ in 0..SINGLE_CALLS {
        let rec = fresh(&template);
        let t = Instant::now();
        spine.record(rec);
        single.push(t.elapsed().as_nanos() as f64);
        drain(&spine);
    }
    let single = sorted_ns(single);
    let median = pct(&single, 0.5);
    row(
        "record() per call, timed singly: median ns",
        format!("{median:.0}"),
        &format!("<= {RECORD_TARGET_NS:.0}"),
        Some(median <= RECORD_TARGET_NS),
    );
    row(
        "  p99 | p99.9 | max ns",
        format!(
            "{:.0} | {:.0} | {:.0}",
            pct(&single, 0.99),
            pct(&single, 0.999),
            pct(&single, 1.0)
        ),
        "",
        None,
    );

    // Blocks of calls, to take the clock reads out.
    let mut blocks = Vec::with_capacity(BLOCKS);
    for _ in 0..BLOCKS {
        let batch: Vec<RunRecord> = (0..BLOCK).map(|_| fresh(&template)).collect();
        let t = Instant::now();
        for rec in batch {
            spine.record(rec);
        }
        blocks.push(t.elapsed().as_nanos() as f64 / BLOCK as f64);
        drain(&spine);
    }
    let blocks = sorted_ns(blocks);
    row(
        "record() per call, blocks of 64: median ns",
        format!("{:.0}", pct(&blocks, 0.5)),
        &format!("<= {RECORD_TARGET_NS:.0}"),
        Some(pct(&blocks, 0.5) <= RECORD_TARGET_NS),
    );

    // What the engine pays per run: building the record from the run, then recording.
    let runs: Vec<HookRun> = (0..256).map(hook_run).collect();
    let mut engine_side = Vec::with_capacity(SINGLE_CALLS / 5);
    for i in 0..SINGLE_CALLS / 5 {
        let run = &runs[i % runs.len()];
        let t = Instant::now();
        let rec = RunRecord::from_run(run, "session-1", "turn-1", "enforced");
        spine.record(rec);
        engine_side.push(t.elapsed().as_nanos() as f64);
        drain(&spine);
    }
    let engine_side = sorted_ns(engine_side);
    row(
        "from_run() + record() (≈4 KiB captured): median ns",
        format!("{:.0}", pct(&engine_side, 0.5)),
        "",
        None,
    );
    row(
        "  p99 ns",
        format!("{:.0}", pct(&engine_side, 0.99)),
        "",
        None,
    );
    spine.flush();
    let stats = spine.stats();
    row(
        "  committed / dropped",
        format!("{} / {}", stats.committed, stats.dropped),
        "",
        None,
    );
    drop(spine);

    let off = Spine::disabled();
    let mut disabled = Vec::with_capacity(BLOCKS);
    for _ in 0..BLOCKS {
        let batch: Vec<RunRecord> = (0..BLOCK).map(|_| fresh(&template)).collect();
        let t = Instant::now();
        for rec in batch {
            off.record(black_box(rec));
        }
        disabled.push(t.elapsed().as_nanos() as f64 / BLOCK as f64);
    }
    row(
        "record() on a disabled spine (incl. freeing): median ns",
        format!("{:.0}", pct(&sorted_ns(disabled), 0.5)),
        "",
        None,
    );
}
