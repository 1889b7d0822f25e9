//! `copse-hooks log` and `copse-hooks show RUN_ID`: read the audit store.

use std::process::ExitCode;

use anyhow::{Result, bail};
use copse_hooks::spine::RunFilter;
use copse_hooks_wire::output::{LogOutput, ShowOutput};
use serde_json::Value;

use crate::cli::Global;
use crate::output::{self, paint};
use crate::output::{clean, clean_block};
use crate::time::{format_time, parse_since};
use crate::workspace;

/// The `log` filters.
pub struct LogArgs {
    pub event: Option<String>,
    pub decision: Option<String>,
    pub dialect: Option<String>,
    pub failed: bool,
    pub since: Option<String>,
    pub limit: usize,
    pub utc: bool,
}

fn now_ms() -> u64 {
    copse_hooks::spine::unix_ms(std::time::SystemTime::now())
}

pub fn log(global: &Global, args: &LogArgs) -> Result<ExitCode> {
    let inv = workspace::engine(global)?;
    let since = match &args.since {
        Some(s) => Some(
            parse_since(s, now_ms(), &jiff::tz::TimeZone::system()).map_err(anyhow::Error::msg)?,
        ),
        None => None,
    };
    if let Some(d) = &args.dialect
        && copse_hooks::Dialect::from_name(d).is_none()
    {
        anyhow::bail!(
            "unknown dialect \"{}\" (expected cursor, claude, copse, gemini or codex)",
            d.escape_debug()
        );
    }
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
            outln!("{}", serde_json::to_string(&LogOutput::new(&[]))?);
        } else {
            outln!(
                "No hook runs recorded yet ({} does not exist).",
                inv.engine.config().copse_dir.join("spine.db").display()
            );
        }
        return Ok(ExitCode::SUCCESS);
    };
    let runs = spine.query(&filter)?;
    if global.json {
        outln!("{}", serde_json::to_string_pretty(&LogOutput::new(&runs))?);
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        outln!("No recorded hook runs match.");
        return Ok(ExitCode::SUCCESS);
    }
    for r in &runs {
        let status = match (&r.failure, r.exit_code) {
            (Some(f), _) => f.clone(),
            (None, Some(c)) => format!("exit {c}"),
            (None, None) if r.kind.as_str() == "dropped" => "dropped".to_string(),
            (None, None) => "killed".to_string(),
        };
        // A process of the run had escaped its group and was killed with the run.
        let status = if r.leaked {
            format!("{status} · leaked")
        } else {
            status
        };
        outln!(
            "{} {} {} {} {} {}",
            paint(&r.run_id, output::DIM, false),
            format_time(r.started_at, args.utc),
            output::decision_padded(&clean(&r.outcome), 7),
            paint(&clean(&r.event), output::BOLD, false),
            clean(&r.command),
            paint(
                &clean(&format!(
                    "[{} {} · {status} · {} ms]",
                    r.dialect, r.scope, r.duration_ms
                )),
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

/// Resolves `last`, an exact id or a unique prefix to a run id.
fn resolve(
    spine: &copse_hooks::spine::Spine,
    wanted: &str,
    path: &std::path::Path,
) -> Result<String> {
    if wanted == "last" {
        let latest = spine.query(&RunFilter {
            limit: Some(1),
            ..RunFilter::default()
        })?;
        return match latest.into_iter().next() {
            Some(r) => Ok(r.run_id),
            None => bail!("no run recorded yet in {}", path.display()),
        };
    }
    if spine.get(wanted)?.is_some() {
        return Ok(wanted.to_string());
    }
    let all = spine.query(&RunFilter {
        limit: Some(usize::MAX / 2),
        ..RunFilter::default()
    })?;
    let matches: Vec<&str> = all
        .iter()
        .map(|r| r.run_id.as_str())
        .filter(|id| id.starts_with(wanted))
        .collect();
    match matches[..] {
        [one] => Ok(one.to_string()),
        [] => bail!("no run {} in {}", clean(wanted), path.display()),
        _ => bail!(
            "run id prefix {} is ambiguous: {} runs match ({}…)",
            clean(wanted),
            matches.len(),
            matches[..matches.len().min(3)].join(", ")
        ),
    }
}

pub fn show(global: &Global, run_id: &str, utc: bool) -> Result<ExitCode> {
    let inv = workspace::engine(global)?;
    let path = inv.engine.config().copse_dir.join("spine.db");
    let Some(spine) = workspace::read_spine(&inv.engine)? else {
        bail!(
            "no run {}: nothing is recorded yet ({} does not exist)",
            clean(run_id),
            path.display()
        );
    };
    let id = resolve(&spine, run_id, &path)?;
    let Some(r) = spine.get(&id)? else {
        bail!("no run {} in {}", clean(run_id), path.display());
    };
    if global.json {
        outln!("{}", serde_json::to_string_pretty(&ShowOutput::from(&r))?);
        return Ok(ExitCode::SUCCESS);
    }
    // The chips: event, exit or killed, duration, parse failed.
    let mut chips = vec![clean(&r.event)];
    chips.push(match r.exit_code {
        Some(c) => format!("exit {c}"),
        None => "killed".to_string(),
    });
    chips.push(format!("{} ms", r.duration_ms));
    if !r.parse_ok {
        chips.push("parse failed".to_string());
    }
    if let Some(s) = r.sandbox.as_deref().filter(|s| !s.is_empty()) {
        chips.push(format!("sandbox {}", clean(s)));
    }
    if r.leaked {
        chips.push("leaked: a process escaped its group and was killed".to_string());
    }
    outln!(
        "{} {}",
        paint(&r.run_id, output::BOLD, false),
        chips
            .iter()
            .map(|c| format!("[{c}]"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    outln!(
        "  {} {} · {} {} · {}",
        clean(&r.dialect),
        clean(&r.scope),
        clean(&r.command),
        paint(&format!("({})", clean(&r.source)), output::DIM, false),
        format_time(r.started_at, utc)
    );
    outln!(
        "  outcome {}{}",
        output::decision_word(&r.outcome),
        r.failure_message
            .as_deref()
            .map(|m| format!(" — {}", clean(m)))
            .unwrap_or_default()
    );
    let or_dash = |s: &str| {
        if s.is_empty() {
            "-".to_string()
        } else {
            s.to_string()
        }
    };
    outln!(
        "  session {} · turn {}",
        clean(&or_dash(&r.session_id)),
        clean(&or_dash(&r.turn_id))
    );
    let section = |name: &str, body: &str, truncated: bool| {
        if body.trim().is_empty() {
            return;
        }
        outln!(
            "\n{}{}",
            paint(name, output::BOLD, false),
            if truncated {
                paint(" (truncated)", output::DIM, false)
            } else {
                String::new()
            }
        );
        for line in clean_block(body.trim_end()).lines() {
            outln!("  {line}");
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
        outln!("\nNothing was captured for this run (an abstaining hook, or a dropped run).");
    }
    section("stdout", &text(&r.stdout), r.stdout_truncated);
    section("stderr", &text(&r.stderr), r.stderr_truncated);
    Ok(ExitCode::SUCCESS)
}
