//! OTLP export benchmark: `cargo bench -p copse-hooks --bench otel`.
//!
//! Plain `std` timing, no harness; every ratio is against a baseline measured in the
//! same run, interleaved (the order rotates), medians. A miss is reported, never
//! asserted.
//!
//! 1. Gates per second with export on vs off: one trivial Cursor
//!    `beforeShellExecution` hook through `Session::gate_tool`; "on" adds what the
//!    record stage does per gate (a `GateSpan` with the input summary, filled from the
//!    verdict, handed to `Exporter::gate`). Twice: to a collector on loopback that
//!    answers every request at once, and to a black hole that accepts connections,
//!    reads the requests and never answers (the queue fills, later gates are
//!    dropped). The three alternate gate by gate (1,500 each); medians of the
//!    single-gate times. Goal: ≤ 1.05× (issue 26).
//! 2. What the caller's thread pays, ns per gate, without the hook (the same verdict
//!    each time): building the span, and building it plus `Exporter::gate` (queued to
//!    the answering collector, dropped by the black hole's full queue); medians of 11
//!    rounds of 20,000 calls.
//!
//! Loopback only; the listeners are threads of this process.

// reason: a benchmark binary, not library code; a broken setup (no temp dir, no
// loopback socket) should abort loudly, while target misses are only reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant, SystemTime};

use copse_hooks::otel::{ExportConfig, Exporter, GateSpan, summary};
use copse_hooks::{CanonicalEvent, Engine, EngineConfig, SessionIdentity, ToolCall, Verdict};
use serde_json::json;

const TRIVIAL_HOOK: &str = r#"cat >/dev/null; echo '{"permission":"allow"}'"#;
const ROUNDS: usize = 11;
const GATES: usize = 1500;
const WARMUP: usize = 30;
const API_CALLS: usize = 20_000;
const GOAL: f64 = 1.05;

fn main() {
    println!(
        "copse-hooks OTLP export benchmark (pid {})",
        std::process::id()
    );
    println!("ratios against export off, measured in this run, interleaved; medians\n");

    let answering = answering_collector();
    let black_hole = black_hole();
    let sink = Exporter::start(config(&answering));
    let hole = Exporter::start(config(&black_hole));

    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".cursor")).unwrap();
    std::fs::write(
        home.path().join(".cursor/hooks.json"),
        json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": TRIVIAL_HOOK}]}})
            .to_string(),
    )
    .unwrap();
    let engine = Engine::new(
        EngineConfig::builder()
            .workspace_root(workspace.path())
            .home(home.path())
            .enabled(true)
            .build(),
    );
    let session = engine.session(SessionIdentity::new("bench"));
    let input = json!({"command": "git status --short"});
    let gate = |exporter: Option<&Exporter>| {
        let start = SystemTime::now();
        let verdict = session.gate_tool(ToolCall::new("run_shell", input.clone()));
        assert_eq!(verdict.runs.len(), 1, "the hook ran");
        if let Some(exporter) = exporter {
            exporter.gate(span_of(&verdict, &input, start));
        }
    };
    for _ in 0..WARMUP {
        gate(None);
        gate(Some(&sink));
        gate(Some(&hole));
    }

    let variants: [(&str, Option<&Exporter>); 3] = [
        ("off", None),
        ("on, collector answering", Some(&sink)),
        ("on, black hole", Some(&hole)),
    ];
    // Interleaved gate by gate (the order rotates), so the machine's load hits every
    // variant alike; medians of the single-gate times.
    let mut per_gate: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for g in 0..GATES {
        for k in 0..variants.len() {
            let i = (g + k) % variants.len();
            let t = Instant::now();
            gate(variants[i].1);
            per_gate[i].push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    rule();
    println!(
        "{:<44} {:>12} {:>10} {:>8} {:>6}",
        "1. gate with one hook", "µs/gate", "ratio", "goal", ""
    );
    rule();
    let off = median(&mut per_gate[0].clone());
    for (i, (name, _)) in variants.iter().enumerate() {
        let m = median(&mut per_gate[i]);
        let ratio = m / off;
        if i == 0 {
            println!("{name:<44} {m:>12.1} {:>10} {:>8} {:>6}", "1.00×", "", "");
        } else {
            let verdict = if ratio <= GOAL { "PASS" } else { "MISS" };
            println!("{name:<44} {m:>12.1} {ratio:>9.3}× {GOAL:>7.2}× {verdict:>6}");
        }
    }
    let p90 = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() * 9 / 10]
    };
    println!(
        "  (p90 µs: off {:.0}, answering {:.0}, black hole {:.0})",
        p90(&mut per_gate[0]),
        p90(&mut per_gate[1]),
        p90(&mut per_gate[2])
    );

    // 2. The caller's cost alone, on one verdict: building the span, then building and
    // handing it over (queued to the answering collector, whose thread drains the queue;
    // dropped by the black hole's full queue).
    let start = SystemTime::now();
    let verdict = session.gate_tool(ToolCall::new("run_shell", input.clone()));
    let mut rows: [(&str, Option<&Exporter>, Vec<f64>); 3] = [
        ("build the span (summary, verdict, 1 run)", None, Vec::new()),
        ("build + Exporter::gate (queued)", Some(&sink), Vec::new()),
        (
            "build + Exporter::gate (queue full: dropped)",
            Some(&hole),
            Vec::new(),
        ),
    ];
    for round in 0..ROUNDS {
        for k in 0..rows.len() {
            let i = (round + k) % rows.len();
            let exporter = rows[i].1;
            let t = Instant::now();
            for _ in 0..API_CALLS {
                let span = span_of(black_box(&verdict), &input, start);
                match exporter {
                    Some(e) => e.gate(span),
                    None => drop(black_box(span)),
                }
            }
            rows[i]
                .2
                .push(t.elapsed().as_nanos() as f64 / API_CALLS as f64);
        }
    }
    rule();
    println!(
        "{:<44} {:>12} {:>12}",
        "2. on the caller's thread (no hook)", "ns/gate", "vs build"
    );
    rule();
    let build = median(&mut rows[0].2.clone());
    for (name, _, samples) in &mut rows {
        let m = median(samples);
        println!("{name:<44} {m:>12.0} {:>+12.0}", m - build);
    }
    rule();

    let s = sink.shutdown(Duration::from_secs(5));
    let h = hole.shutdown(Duration::from_millis(200));
    println!(
        "answering collector: {} spans exported, {} dropped, {} failed, {} pending",
        s.stats.exported, s.stats.dropped, s.stats.failed, s.stats.pending
    );
    println!(
        "black hole: {} exported, {} dropped, {} pending at shutdown (completed: {})",
        h.stats.exported, h.stats.dropped, h.stats.pending, h.completed
    );
}

/// What the record stage builds per gate.
fn span_of(verdict: &Verdict, input: &serde_json::Value, start: SystemTime) -> GateSpan {
    let mut span = GateSpan::new(CanonicalEvent::ToolGate, start);
    span.agent = Some("cursor".into());
    span.tool = Some("run_shell".into());
    span.input_summary = Some(summary(input));
    span.conversation_id = Some("bench".into());
    span.record_verdict(verdict);
    span.end = SystemTime::now();
    span
}

fn config(url: &str) -> ExportConfig {
    let mut config = ExportConfig::new(url);
    // The black hole never answers: its requests wait out this timeout.
    config.timeout = Duration::from_secs(60);
    config
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn rule() {
    println!("{}", "-".repeat(84));
}

/// A loopback collector that reads each request and answers `200` with an empty
/// body (an empty `ExportTraceServiceResponse`: full success).
fn answering_collector() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream));
        }
    });
    url
}

fn serve(stream: TcpStream) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let answer =
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
        if writer.write_all(answer).is_err() {
            return;
        }
    }
}

/// A loopback endpoint that accepts connections, reads whatever comes and never
/// answers.
fn black_hole() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut sink = [0u8; 8192];
                while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
            });
        }
    });
    url
}
