//! Vendor config parsing: `cargo bench -p copse-hooks --bench dialect_parse`.
//!
//! Each vendor dialect parses a realistic config of 100 handlers (per-entry serde
//! structs, then compiled hooks with matchers), against a baseline measured in the same
//! run, interleaved: `serde_json::from_str::<Value>` of the same text (the cost of
//! reading the JSON at all). Parsing happens once per file change (the result is
//! cached by file identity), so the figure that matters is the ratio, printed, never
//! asserted.

// reason: a benchmark binary; a broken setup should abort loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use copse_hooks::Scope;
use copse_hooks::dialect::{Adapter, claude::Claude, codex, cursor::Cursor, gemini};
use serde_json::{Value, json};

const HANDLERS: usize = 100;
const ROUNDS: usize = 200;

fn claude_doc() -> Value {
    let groups: Vec<Value> = (0..HANDLERS)
        .map(|i| {
            json!({"matcher": format!("Bash|Edit{i}"), "hooks": [
                {"type": "command", "command": format!("~/.claude/hooks/h{i}.sh --strict"), "timeout": 30,
                 "if": format!("Bash(git push:*)")}
            ]})
        })
        .collect();
    json!({"model": "sonnet", "permissions": {"allow": []}, "hooks": {"PreToolUse": groups}})
}

fn cursor_doc() -> Value {
    let entries: Vec<Value> = (0..HANDLERS)
        .map(|i| json!({"command": format!("./hooks/h{i}.sh"), "matcher": format!("push --force{i}"), "timeout": 10}))
        .collect();
    json!({"version": 1, "hooks": {"beforeShellExecution": entries}})
}

fn gemini_doc() -> Value {
    let defs: Vec<Value> = (0..HANDLERS)
        .map(|i| {
            json!({"matcher": format!("write_file|replace{i}"), "hooks": [
                {"type": "command", "command": format!("./h{i}.sh"), "name": format!("h{i}"), "timeout": 5000}
            ]})
        })
        .collect();
    json!({"hooks": {"BeforeTool": defs}})
}

fn codex_doc() -> Value {
    let groups: Vec<Value> = (0..HANDLERS)
        .map(|i| {
            json!({"matcher": format!("Bash{i}"), "hooks": [
                {"type": "command", "command": format!("./h{i}.sh"), "timeout": 30}
            ]})
        })
        .collect();
    json!({"hooks": {"PreToolUse": groups}})
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    println!(
        "vendor config parse, {HANDLERS} handlers; ratios against serde_json::from_str::<Value> of the same text, interleaved in this run\n"
    );
    let root = Path::new("/bench/ws");
    type ParseFn = Box<dyn Fn(&str) -> usize>;
    let cases: Vec<(&str, Value, &str, ParseFn)> = vec![
        (
            "claude",
            claude_doc(),
            "/bench/ws/.claude/settings.json",
            Box::new(move |t: &str| {
                Claude
                    .parse(
                        t,
                        Path::new("/bench/ws/.claude/settings.json"),
                        Scope::Project,
                        Some(root),
                    )
                    .hooks
                    .len()
            }),
        ),
        (
            "cursor",
            cursor_doc(),
            "/bench/ws/.cursor/hooks.json",
            Box::new(move |t: &str| {
                Cursor
                    .parse(
                        t,
                        Path::new("/bench/ws/.cursor/hooks.json"),
                        Scope::Project,
                        Some(root),
                    )
                    .hooks
                    .len()
            }),
        ),
        (
            "gemini",
            gemini_doc(),
            "/bench/ws/.gemini/settings.json",
            Box::new(move |t: &str| {
                gemini::parse::parse(
                    t,
                    Path::new("/bench/ws/.gemini/settings.json"),
                    Scope::Project,
                    Some(root),
                )
                .hooks
                .len()
            }),
        ),
        (
            "codex",
            codex_doc(),
            "/bench/ws/.codex/hooks.json",
            Box::new(move |t: &str| {
                codex::parse::parse(
                    t,
                    Path::new("/bench/ws/.codex/hooks.json"),
                    Scope::Project,
                    Some(root),
                )
                .hooks
                .len()
            }),
        ),
    ];
    for (name, doc, _path, parse) in &cases {
        let text = serde_json::to_string_pretty(doc).unwrap();
        assert_eq!(parse(&text), HANDLERS, "{name}: every handler compiles");
        let (mut base, mut ours) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let t = Instant::now();
            black_box(serde_json::from_str::<Value>(black_box(&text)).unwrap());
            base.push(t.elapsed());
            let t = Instant::now();
            black_box(parse(black_box(&text)));
            ours.push(t.elapsed());
        }
        let (b, o) = (median(base), median(ours));
        println!(
            "{name:>7}: parse {:>8.1} µs   raw JSON {:>7.1} µs   ratio {:.1}x",
            o.as_secs_f64() * 1e6,
            b.as_secs_f64() * 1e6,
            o.as_secs_f64() / b.as_secs_f64().max(1e-9)
        );
    }
}
