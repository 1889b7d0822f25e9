//! `copse-hooks log` and `copse-hooks show RUN_ID`: read the audit store.
//!
//! Every run is shown beside the tool call it was about (`run_shell npm install`),
//! with its exit code (or `timeout`, `killed`), under a short id: the shortest
//! prefix of its digest, at least seven characters, that no other recorded run
//! shares (as git abbreviates commits). `show` takes a short id, a full id, a unique
//! prefix of either, or `last`. `log -f` polls the store and prints runs as they are
//! recorded.

use std::collections::{HashMap, HashSet};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};
use copse_hooks::spine::{RunFilter, RunIdMatch, RunSummary, Spine};
use copse_hooks_wire::output::{LogOutput, ShowOutput};
use serde_json::Value;

use crate::args::Global;
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
    pub follow: bool,
}

/// How often `log -f` looks for new runs.
const FOLLOW_POLL: Duration = Duration::from_millis(250);

/// How many of the newest runs `log -f` reads per look (a run recorded late, after
/// this many newer ones, is not shown).
const FOLLOW_WINDOW: usize = 500;

fn now_ms() -> u64 {
    copse_hooks::spine::unix_ms(std::time::SystemTime::now())
}

/// Every event name `log --event` accepts: canonical names and each dialect's.
fn known_events() -> Vec<&'static str> {
    use copse_hooks::dialect::{claude, codex, copse, cursor, gemini};
    let mut all: Vec<&'static str> = copse_hooks::CanonicalEvent::ALL
        .iter()
        .map(|e| e.name())
        .chain(copse::UNWIRED_EVENTS)
        .chain(cursor::PUBLISHED_EVENTS)
        .chain(claude::PUBLISHED_EVENTS)
        .chain(gemini::PUBLISHED_EVENTS)
        .chain(codex::PUBLISHED_EVENTS)
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// Rejects an event no dialect knows and the store never recorded, with the closest
/// known name.
fn check_event(event: &str, spine: Option<&Spine>) -> Result<()> {
    let known = known_events();
    if known.contains(&event) {
        return Ok(());
    }
    let recorded = spine
        .and_then(|s| s.filter_values().ok())
        .map(|v| v.events)
        .unwrap_or_default();
    if recorded.iter().any(|e| e == event) {
        return Ok(());
    }
    let lower = event.to_lowercase();
    let best = known
        .iter()
        .copied()
        .chain(recorded.iter().map(String::as_str))
        .map(|k| (strsim::jaro_winkler(&lower, &k.to_lowercase()), k))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((score, k)) if score >= 0.8 => bail!(
            "unknown event \"{}\"; did you mean \"{k}\"? (events are wire names like \
             beforeShellExecution or PreToolUse, or canonical ones like toolGate)",
            event.escape_debug()
        ),
        _ => bail!(
            "unknown event \"{}\" (events are wire names like beforeShellExecution or \
             PreToolUse, or canonical ones like toolGate)",
            event.escape_debug()
        ),
    }
}

/// The short id of each run id, for the store `spine`.
fn shorts(spine: &Spine) -> HashMap<String, String> {
    spine
        .run_ids()
        .map(|ids| copse_hooks::spine::short_ids(&ids))
        .unwrap_or_default()
}

fn print_run(r: &RunSummary, short: &HashMap<String, String>, utc: bool) {
    let status =
        copse_hooks::spine::status_label(r.kind.as_str(), r.exit_code, r.failure.as_deref());
    // A process of the run had escaped its group and was killed with the run.
    let status = if r.leaked {
        format!("{status} · leaked")
    } else {
        status
    };
    let id = short.get(&r.run_id).unwrap_or(&r.run_id);
    let call = match &r.tool_call {
        Some(c) => format!("{} → ", clean(&c.line())),
        None => String::new(),
    };
    outln!(
        "{} {} {} {} {call}{} {}",
        paint(id, output::DIM, false),
        format_time(r.started_at, utc),
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

fn json_runs(runs: &[RunSummary], short: &HashMap<String, String>) -> LogOutput {
    let mut out = LogOutput::new(runs);
    for run in &mut out.runs {
        run.short_id = short.get(&run.run_id).cloned();
    }
    out
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
    let spine = workspace::read_spine(&inv.engine)?;
    if let Some(event) = &args.event {
        check_event(event, spine.as_ref())?;
    }
    if args.follow {
        return follow(global, &inv.engine, spine, &filter, args.utc);
    }
    let Some(spine) = spine else {
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
    let short = shorts(&spine);
    if global.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json_runs(&runs, &short))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        outln!("No recorded hook runs match.");
        return Ok(ExitCode::SUCCESS);
    }
    for r in &runs {
        print_run(r, &short, args.utc);
    }
    Ok(ExitCode::SUCCESS)
}

/// `log -f`: the matching runs oldest first, then each new one as it is recorded,
/// until interrupted (INT ends the process through the signal thread) or stdout
/// closes (a pager or `head` quit). With `--json`, one run per line.
fn follow(
    global: &Global,
    engine: &copse_hooks::Engine,
    mut spine: Option<Spine>,
    filter: &RunFilter,
    utc: bool,
) -> Result<ExitCode> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut first = true;
    let mut last_seq = -1i64;
    loop {
        if output::stdout_closed() {
            return Ok(ExitCode::SUCCESS);
        }
        if spine.is_none() {
            spine = workspace::read_spine(engine)?;
        }
        if let Some(s) = &spine {
            let seq = s.latest_seq()?;
            if seq != last_seq {
                last_seq = seq;
                let window = RunFilter {
                    limit: Some(if first {
                        filter.limit.unwrap_or(50)
                    } else {
                        FOLLOW_WINDOW
                    }),
                    ..filter.clone()
                };
                let mut fresh: Vec<RunSummary> = s
                    .query(&window)?
                    .into_iter()
                    .filter(|r| seen.insert(r.run_id.clone()))
                    .collect();
                // Oldest first, as a log that grows at the bottom.
                fresh.reverse();
                if !fresh.is_empty() {
                    let short = shorts(s);
                    for r in &fresh {
                        if global.json {
                            let run = json_runs(std::slice::from_ref(r), &short);
                            if let Some(one) = run.runs.first() {
                                outln!("{}", serde_json::to_string(one)?);
                            }
                        } else {
                            print_run(r, &short, utc);
                        }
                    }
                }
            }
        }
        if first && !global.json {
            errln!(
                "{}",
                paint("following new runs (Ctrl-C to stop)…", output::DIM, false)
            );
        }
        first = false;
        std::thread::sleep(FOLLOW_POLL);
    }
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

/// Resolves `last`, a short id, an exact id or a unique prefix of either to a run id.
fn resolve(spine: &Spine, wanted: &str, path: &std::path::Path) -> Result<String> {
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
    let all = spine.run_ids()?;
    match copse_hooks::spine::resolve_run_id(&all, wanted) {
        RunIdMatch::One(id) => Ok(id),
        RunIdMatch::None => bail!("no run {} in {}", clean(wanted), path.display()),
        RunIdMatch::Ambiguous(candidates) => {
            let short = copse_hooks::spine::short_ids(&all);
            let list: Vec<String> = candidates
                .iter()
                .map(|id| {
                    format!(
                        "  {} ({})",
                        short.get(id).map_or(id.as_str(), String::as_str),
                        id
                    )
                })
                .collect();
            bail!(
                "run id {} is ambiguous; it matches:\n{}\n(give more characters)",
                clean(wanted),
                list.join("\n")
            )
        }
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
    let short = shorts(&spine);
    let short_id = short.get(&r.run_id).cloned();
    let call = copse_hooks::spine::tool_call_summary(&r.event, &r.stdin);
    if global.json {
        let mut out = ShowOutput::from(&r);
        out.short_id = short_id;
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    let timed_out = r.failure.as_deref() == Some("timeout");
    // The chips: event, exit code (or timeout, killed), duration, parse failed.
    let mut chips = vec![clean(&r.event)];
    chips.push(copse_hooks::spine::status_label(
        r.kind.as_str(),
        r.exit_code,
        r.failure.as_deref(),
    ));
    chips.push(format!("{} ms", r.duration_ms));
    // A killed hook printed nothing whole: its answer not parsing says nothing more.
    if !r.parse_ok && !timed_out && r.exit_code.is_some() {
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
        paint(
            short_id.as_deref().unwrap_or(&r.run_id),
            output::BOLD,
            false
        ),
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
    if let Some(c) = &call {
        outln!("  tool call {}", clean(&c.line()));
    }
    outln!("  run id {}", clean(&r.run_id));
    outln!(
        "  outcome {}{}",
        output::decision_word(&r.outcome),
        r.failure_message
            .as_deref()
            .map(|m| format!(" — {}", clean(m)))
            .unwrap_or_default()
    );
    if timed_out {
        outln!(
            "  {} {}",
            paint("hint:", output::YELLOW, false),
            copse_hooks::spine::TIMEOUT_HINT
        );
    }
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
