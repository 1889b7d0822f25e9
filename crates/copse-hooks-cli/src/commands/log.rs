//! `copse-hooks log` and `copse-hooks show RUN_ID`: read the audit store.

use std::process::ExitCode;

use anyhow::{Result, bail};
use copse_hooks::spine::RunFilter;
use copse_hooks_wire::output::{LogOutput, ShowOutput};
use serde_json::Value;

use crate::cli::Global;
use crate::output::{self, paint};
use crate::time::{format_utc, parse_since};
use crate::workspace;

/// The `log` filters.
pub struct LogArgs {
    pub event: Option<String>,
    pub decision: Option<String>,
    pub dialect: Option<String>,
    pub failed: bool,
    pub since: Option<String>,
    pub limit: usize,
}

fn now_ms() -> u64 {
    copse_hooks::spine::unix_ms(std::time::SystemTime::now())
}

pub fn log(global: &Global, args: &LogArgs) -> Result<ExitCode> {
    let inv = workspace::engine(global)?;
    let since = match &args.since {
        Some(s) => Some(parse_since(s, now_ms()).map_err(anyhow::Error::msg)?),
        None => None,
    };
    let filter = RunFilter {
        event: args.event.clone(),
        outcome: args.decision.clone(),
        dialect: args.dialect.clone(),
        failed: args.failed,
        since,
        limit: Some(args.limit),
        ..RunFilter::default()
    };
    let Some(spine) = workspace::read_spine(&inv.engine)? else {
        if global.json {
            println!("{}", serde_json::to_string(&LogOutput::new(&[]))?);
        } else {
            println!(
                "No hook runs recorded yet ({} does not exist).",
                inv.engine.config().copse_dir.join("spine.db").display()
            );
        }
        return Ok(ExitCode::SUCCESS);
    };
    let runs = spine.query(&filter)?;
    if global.json {
        println!("{}", serde_json::to_string_pretty(&LogOutput::new(&runs))?);
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        println!("No recorded hook runs match.");
        return Ok(ExitCode::SUCCESS);
    }
    for r in &runs {
        let status = match (&r.failure, r.exit_code) {
            (Some(f), _) => f.clone(),
            (None, Some(c)) => format!("exit {c}"),
            (None, None) if r.kind.as_str() == "dropped" => "dropped".to_string(),
            (None, None) => "killed".to_string(),
        };
        println!(
            "{} {} {:<7} {} {} {}",
            paint(&r.run_id, output::DIM, false),
            format_utc(r.started_at),
            output::decision_word(&r.outcome),
            paint(&r.event, output::BOLD, false),
            r.command,
            paint(
                &format!(
                    "[{} {} · {status} · {} ms]",
                    r.dialect, r.scope, r.duration_ms
                ),
                output::DIM,
                false
            )
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn pretty_json(bytes: &[u8]) -> String {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| text(bytes))
}

pub fn show(global: &Global, run_id: &str) -> Result<ExitCode> {
    let inv = workspace::engine(global)?;
    let path = inv.engine.config().copse_dir.join("spine.db");
    let Some(spine) = workspace::read_spine(&inv.engine)? else {
        bail!(
            "no run {run_id}: nothing is recorded yet ({} does not exist)",
            path.display()
        );
    };
    let Some(r) = spine.get(run_id)? else {
        bail!("no run {run_id} in {}", path.display());
    };
    if global.json {
        println!("{}", serde_json::to_string_pretty(&ShowOutput::from(&r))?);
        return Ok(ExitCode::SUCCESS);
    }
    // The chips: event, exit or killed, duration, parse failed.
    let mut chips = vec![r.event.clone()];
    chips.push(match r.exit_code {
        Some(c) => format!("exit {c}"),
        None => "killed".to_string(),
    });
    chips.push(format!("{} ms", r.duration_ms));
    if !r.parse_ok {
        chips.push("parse failed".to_string());
    }
    if let Some(s) = r.sandbox.as_deref().filter(|s| !s.is_empty()) {
        chips.push(format!("sandbox {s}"));
    }
    println!(
        "{} {}",
        paint(&r.run_id, output::BOLD, false),
        chips
            .iter()
            .map(|c| format!("[{c}]"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "  {} {} · {} {} · {}",
        r.dialect,
        r.scope,
        r.command,
        paint(&format!("({})", r.source), output::DIM, false),
        format_utc(r.started_at)
    );
    println!(
        "  outcome {}{}",
        output::decision_word(&r.outcome),
        r.failure_message
            .as_deref()
            .map(|m| format!(" — {m}"))
            .unwrap_or_default()
    );
    let or_dash = |s: &str| {
        if s.is_empty() {
            "-".to_string()
        } else {
            s.to_string()
        }
    };
    println!(
        "  session {} · turn {}",
        or_dash(&r.session_id),
        or_dash(&r.turn_id)
    );
    let section = |name: &str, body: &str, truncated: bool| {
        if body.trim().is_empty() {
            return;
        }
        println!(
            "\n{}{}",
            paint(name, output::BOLD, false),
            if truncated {
                paint(" (truncated)", output::DIM, false)
            } else {
                String::new()
            }
        );
        for line in body.trim_end().lines() {
            println!("  {line}");
        }
    };
    section("stdin", &pretty_json(&r.stdin), r.stdin_truncated);
    let channels = [
        ("injected context", r.inject_context.clone()),
        ("message to agent", r.agent_message.clone()),
        ("message to you", r.user_message.clone()),
        ("halt reason", r.halt_reason.clone()),
        (
            "rewritten tool input",
            r.updated_input
                .as_deref()
                .map(|u| pretty_json(u.as_bytes())),
        ),
        ("queued message", r.queued_message.clone()),
    ];
    let mut any = false;
    for (name, value) in channels {
        if let Some(v) = value {
            any = true;
            section(name, &v, false);
        }
    }
    if !any && r.stdout.is_empty() && r.stderr.is_empty() && r.stdin.is_empty() {
        println!("\nNothing was captured for this run (an abstaining hook, or a dropped run).");
    }
    section("stdout", &text(&r.stdout), r.stdout_truncated);
    section("stderr", &text(&r.stderr), r.stderr_truncated);
    Ok(ExitCode::SUCCESS)
}
