//! `copse-hooks test SOURCE EVENT [--entry N] [--payload JSON]`: the dry-run tester.
//! The hook really runs on the fixture stdin of its event, with `--payload` merged
//! over it.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use serde_json::Value;

use crate::args::Global;
use crate::output::{self, paint};
use crate::workspace;

pub fn run(
    global: &Global,
    source: &Path,
    event: &str,
    entry: usize,
    payload: Option<&str>,
) -> Result<ExitCode> {
    // `--trust` here trusts this one hook for this one run (always sandboxed); it must
    // not make the engine treat the workspace as trusted (which would let a
    // `"sandbox": false` hook leave the sandbox).
    let engine_global = Global {
        trust: false,
        ..global.clone()
    };
    let inv = workspace::engine(&engine_global)?;
    let mut options = copse_hooks::DryRunOptions::default();
    options.trust = global.trust;
    // `--payload` is merged over the fixture stdin (so `{"tool_input":{"command":"ls"}}`
    // changes one field and keeps the session, cwd and event fields the hook expects).
    let merged = match payload {
        Some(p) => {
            let given: Value = serde_json::from_str(p)
                .map_err(|e| anyhow::anyhow!("--payload is not valid JSON: {e}"))?;
            let fixture = inv.engine.dry_run_payload(source, event, entry)?;
            let mut base: Value = serde_json::from_str(&fixture).unwrap_or(Value::Null);
            merge(&mut base, given);
            Some(serde_json::to_string(&base)?)
        }
        None => None,
    };
    let dry = inv
        .engine
        .dry_run_with(source, event, entry, merged.as_deref(), options)?;
    if global.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&copse_hooks_wire::output::TestOutput::from(&dry))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{} {} {}[{}] {}",
        paint("hook", output::BOLD, false),
        dry.dialect.as_str(),
        output::clean(&dry.event),
        entry,
        output::clean(&dry.command)
    );
    outln!(
        "  {}",
        paint(
            &format!(
                "canonical event {}; the hook really runs ({}, timeout {} ms{}); nothing is recorded, and no session environment, settings or verdict is applied",
                dry.canonical_event.name(),
                if dry.sandboxed {
                    "sandboxed"
                } else {
                    "UNSANDBOXED"
                },
                dry.timeout_ms,
                if dry.persistent {
                    "; persistent: started, sent this one request over the protocol, then stopped"
                } else {
                    ""
                }
            ),
            output::DIM,
            false
        )
    );
    section("stdin", &pretty(&dry.stdin));
    let exit = match (dry.exit_code, &dry.failure) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(f)) if f == "timeout" => "killed (timeout)".to_string(),
        (None, Some(f)) if f == "spawn" => "did not start".to_string(),
        (None, _) => "killed".to_string(),
    };
    let timed_out = dry.failure.as_deref() == Some("timeout");
    let parsed = if dry.parse_ok {
        "response parsed"
    } else if timed_out || dry.exit_code.is_none() {
        // Killed before it answered: there was no whole answer to parse.
        "no answer"
    } else {
        "response did not parse"
    };
    outln!(
        "{} {exit} · {} ms · {parsed}",
        paint("result", output::BOLD, false),
        dry.duration_ms
    );
    if timed_out {
        outln!(
            "{} the hook ran past its timeout of {} ms and was killed; raise its \"timeout\" \
             in the config, or make it return sooner",
            paint("hint:", output::YELLOW, false),
            dry.timeout_ms
        );
    }
    section("stdout", &dry.stdout);
    section("stderr", &dry.stderr);
    let word = dry.summary.split(' ').next().unwrap_or("");
    let code = match word {
        "allow" => output::GREEN,
        "ask" => output::YELLOW,
        "deny" | "failed" => output::RED,
        _ => output::DIM,
    };
    outln!(
        "{} {}",
        paint("outcome", output::BOLD, false),
        paint(&output::clean(&dry.summary), code, false)
    );
    Ok(ExitCode::SUCCESS)
}

/// Merges `over` into `base`: objects key by key (recursively), anything else
/// replaces; a `null` in `over` removes the key.
pub(crate) fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                if v.is_null() {
                    b.remove(&k);
                } else {
                    merge(b.entry(k).or_insert(Value::Null), v);
                }
            }
        }
        (b, o) => *b = o,
    }
}

fn pretty(text: &str) -> String {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| text.to_string())
}

fn section(name: &str, body: &str) {
    if body.trim().is_empty() {
        outln!(
            "{} {}",
            paint(name, output::BOLD, false),
            paint("(empty)", output::DIM, false)
        );
        return;
    }
    outln!("{}", paint(name, output::BOLD, false));
    for line in output::clean_block(body.trim_end()).lines() {
        outln!("  {line}");
    }
}
