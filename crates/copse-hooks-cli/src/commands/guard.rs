//! `copse-hooks guard …` and `audit replay --guard`: the built-in guard's state, its
//! mode switch, a check of one call, its rules, and what a proposed policy would have
//! done to the recorded calls.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use copse_hooks::{Decision, GuardMode, GuardVerdict, PolicyState};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::args::Global;
use crate::output::{self, clean, paint};
use crate::workspace;

#[derive(Serialize)]
struct PackCount {
    category: &'static str,
    rules: usize,
}

#[derive(Serialize)]
struct ShowOutput<'a> {
    version: u32,
    mode: GuardMode,
    /// Whether the guard judges gates now (hooks enabled or a managed layer).
    active: bool,
    rules: usize,
    packs: Vec<PackCount>,
    by_origin: std::collections::BTreeMap<&'static str, usize>,
    disabled: &'a [String],
    policies: &'a [copse_hooks::PolicySource],
    #[serde(skip_serializing_if = "Option::is_none")]
    broken: Option<&'a str>,
}

/// `guard`: the mode, packs, rule counts and policy files in force.
pub fn show(global: &Global) -> Result<ExitCode> {
    let inv = workspace::engine(global)?;
    workspace::warn_settings(&inv);
    let engine = &inv.engine;
    let g = engine.guard();
    let rules = g.rules();
    let packs: Vec<PackCount> = copse_hooks::guard_categories()
        .iter()
        .map(|c| PackCount {
            category: c,
            rules: rules
                .iter()
                .filter(|r| r.origin == "builtin" && r.category == *c)
                .count(),
        })
        .collect();
    let mut by_origin = std::collections::BTreeMap::new();
    for r in &rules {
        *by_origin.entry(r.origin).or_insert(0) += 1;
    }
    let active = engine.guard_active();
    if global.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&ShowOutput {
                version: copse_hooks_wire::OUTPUT_VERSION,
                mode: g.mode(),
                active,
                rules: rules.len(),
                packs,
                by_origin,
                disabled: g.disabled(),
                policies: g.sources(),
                broken: g.broken(),
            })?
        );
        return Ok(ExitCode::SUCCESS);
    }
    let why = if active {
        "judging every tool gate"
    } else {
        "not judging gates: hooks are off (`copse-hooks enable` turns them on)"
    };
    outln!(
        "guard: {} ({why})",
        paint(g.mode().as_str(), output::BOLD, false)
    );
    if let Some(b) = g.broken() {
        outln!(
            "  {} every tool call is refused until this is fixed: {}",
            paint("policy refused:", output::RED, false),
            clean(b)
        );
    }
    let counts: Vec<String> = packs
        .iter()
        .map(|p| format!("{} {}", p.category, p.rules))
        .collect();
    outln!("packs: {}", counts.join(" · "));
    let origins: Vec<String> = by_origin.iter().map(|(o, n)| format!("{o} {n}")).collect();
    outln!("rules in force: {} ({})", rules.len(), origins.join(", "));
    if !g.disabled().is_empty() {
        outln!(
            "switched off by the user: {}",
            g.disabled()
                .iter()
                .map(|d| clean(d))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    outln!("policy files:");
    for s in g.sources() {
        let state = match &s.state {
            PolicyState::Absent => "absent".to_string(),
            PolicyState::Loaded { rules, disabled } if disabled.is_empty() => {
                format!(
                    "loaded: {rules} {}",
                    if *rules == 1 { "rule" } else { "rules" }
                )
            }
            PolicyState::Loaded { rules, disabled } => {
                format!("loaded: {rules} rules, {} switched off", disabled.len())
            }
            PolicyState::Untrusted => {
                "not applied: the workspace is not trusted (`copse-hooks trust`)".to_string()
            }
            PolicyState::Refused { reason } => format!("refused: {}", clean(reason)),
        };
        outln!(
            "  {:<8} {}  {}",
            s.origin,
            workspace::display_path(&s.path),
            state
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct ModeOutput {
    version: u32,
    mode: GuardMode,
    settings: String,
}

/// `guard mode enforce|observe|off`.
pub fn mode(global: &Global, mode: &str) -> Result<ExitCode> {
    let Some(m) = GuardMode::parse(mode) else {
        bail!(
            "unknown guard mode `{}` (enforce, observe or off)",
            clean(mode)
        );
    };
    let path = crate::commands::settings::settings_path();
    crate::commands::settings::update(&path, |s| s.guard = Some(m))?;
    if global.json {
        outln!(
            "{}",
            serde_json::to_string(&ModeOutput {
                version: copse_hooks_wire::OUTPUT_VERSION,
                mode: m,
                settings: path.display().to_string(),
            })?
        );
    } else {
        let what = match m {
            GuardMode::Enforce => "refuses and asks as its rules say",
            GuardMode::Observe => "records what it would do and allows every call",
            GuardMode::Off => "is off (managed rules still apply)",
        };
        outln!(
            "The guard is now in {} mode: it {what} ({}).",
            m.as_str(),
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct CheckOutput<'a> {
    version: u32,
    tool: &'a str,
    decision: &'static str,
    #[serde(flatten)]
    verdict: &'a GuardVerdict,
}

/// `guard check --tool TOOL --input JSON`: the guard alone, for one call.
pub fn check(global: &Global, tool: &str, input: &str) -> Result<ExitCode> {
    let inv = workspace::engine(global)?;
    let text = crate::commands::gate::read_input(input)?;
    let (tool, text, _) = crate::commands::gate::canonical_tool(tool, &text);
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("--input is not valid JSON: {}", clean(&text)))?;
    let Value::Object(map) = value else {
        bail!("--input must be a JSON object (the tool's input)");
    };
    let v = inv.engine.guard().evaluate(&tool, &map);
    let decision = v.decision.map_or("allow", Decision::as_str);
    if global.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&CheckOutput {
                version: copse_hooks_wire::OUTPUT_VERSION,
                tool: &tool,
                decision,
                verdict: &v,
            })?
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{} {} {}",
        output::decision_word(decision),
        paint(&clean(&tool), output::BOLD, false),
        paint(
            &format!("(guard, {} mode)", v.mode.as_str()),
            output::DIM,
            false
        )
    );
    if let Some(b) = &v.broken {
        outln!("  policy refused: {}", clean(b));
    }
    for h in &v.hits {
        outln!(
            "  {} rule `{}` ({}, {}) matched `{}`{}",
            h.action.as_str(),
            clean(&h.rule),
            clean(&h.category),
            h.origin,
            clean(&h.matched),
            if h.enforced {
                ""
            } else {
                " (not enforced in this mode)"
            }
        );
        outln!("    agent message: {}", clean(&h.message));
    }
    if v.hits.is_empty() && v.broken.is_none() {
        outln!("  no rule matched");
    }
    for c in &v.commands {
        outln!("  runs: {}", clean(c));
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct ListOutput {
    version: u32,
    rules: Vec<copse_hooks::RuleInfo>,
}

/// `guard list`: every rule in force.
pub fn list(global: &Global) -> Result<ExitCode> {
    let inv = workspace::engine(global)?;
    let rules = inv.engine.guard().rules();
    if global.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&ListOutput {
                version: copse_hooks_wire::OUTPUT_VERSION,
                rules,
            })?
        );
        return Ok(ExitCode::SUCCESS);
    }
    let width = rules.iter().map(|r| r.id.len()).max().unwrap_or(10);
    for r in &rules {
        outln!(
            "{:<width$}  {:<4}  {:<8}  {}",
            clean(&r.id),
            r.action.as_str(),
            r.origin,
            clean(&r.message),
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct Change {
    run_id: String,
    session_id: String,
    started_at: u64,
    tool: String,
    input: Value,
    before: &'static str,
    after: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    matched: Option<String>,
}

#[derive(Serialize)]
struct Unreplayable {
    run_id: String,
    reason: String,
}

#[derive(Serialize)]
struct ReplayOutput {
    version: u32,
    policy: String,
    replayed: usize,
    unchanged: usize,
    changed: Vec<Change>,
    not_replayable: Vec<Unreplayable>,
}

/// `audit replay --guard FILE [--since TIME]`: every recorded tool call judged again
/// under a proposed policy; only the calls whose verdict changes are listed.
pub fn replay(global: &Global, file: &Path, since: Option<&str>) -> Result<ExitCode> {
    let inv = workspace::engine(global)?;
    let proposed = inv
        .engine
        .guard()
        .with_proposed(file)
        .map_err(anyhow::Error::msg)?;
    if let Some(b) = proposed.broken() {
        bail!("the proposed policy is refused: {}", clean(b));
    }
    let since = match since {
        Some(s) => Some(
            crate::time::parse_since(s, now_ms(), &jiff::tz::TimeZone::system())
                .map_err(anyhow::Error::msg)?,
        ),
        None => None,
    };
    let Some(spine) = workspace::read_spine(&inv.engine)? else {
        bail!("no audit store yet: nothing was recorded");
    };
    let runs = spine.query(&copse_hooks::spine::RunFilter {
        kind: Some(copse_hooks::spine::RunKind::Guard),
        since,
        limit: Some(1_000_000),
        ..Default::default()
    })?;
    let mut out = ReplayOutput {
        version: copse_hooks_wire::OUTPUT_VERSION,
        policy: file.display().to_string(),
        replayed: 0,
        unchanged: 0,
        changed: Vec::new(),
        not_replayable: Vec::new(),
    };
    for summary in runs.iter().rev() {
        let Some(rec) = spine.get(&summary.run_id)? else {
            continue;
        };
        let verdict: Value = serde_json::from_slice(&rec.stdout).unwrap_or(Value::Null);
        if verdict.get("rewritten").and_then(Value::as_bool) == Some(true) {
            continue; // the same call after a hook's rewrite: judged with its gate
        }
        if rec.stdin_truncated {
            out.not_replayable.push(Unreplayable {
                run_id: rec.run_id.clone(),
                reason: "its recorded input was cut at the store's 64 KiB cap".into(),
            });
            continue;
        }
        let call: Option<(String, Map<String, Value>)> =
            serde_json::from_slice::<Value>(&rec.stdin)
                .ok()
                .and_then(|v| {
                    let tool = v.get("tool_name")?.as_str()?.to_string();
                    let input = v.get("tool_input")?.as_object()?.clone();
                    Some((tool, input))
                });
        let Some((tool, input)) = call else {
            out.not_replayable.push(Unreplayable {
                run_id: rec.run_id.clone(),
                reason: "its recorded input is not a tool call".into(),
            });
            continue;
        };
        out.replayed += 1;
        let before = rec.decision.as_deref().and_then(Decision::parse);
        let after = proposed.evaluate(&tool, &input);
        if after.would == before {
            out.unchanged += 1;
            continue;
        }
        let (rule, matched) = match &after.hit {
            Some(h) => (Some(h.rule.clone()), Some(h.matched.clone())),
            None => (
                rec.command.strip_prefix("guard rule ").map(str::to_string),
                None,
            ),
        };
        out.changed.push(Change {
            run_id: rec.run_id.clone(),
            session_id: rec.session_id.clone(),
            started_at: rec.started_at,
            tool,
            input: Value::Object(input),
            before: before.map_or("allow", Decision::as_str),
            after: after.would.map_or("allow", Decision::as_str),
            rule,
            matched,
        });
    }
    if global.json {
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{} recorded tool calls replayed under {}: {} would change, {} unchanged",
        out.replayed,
        clean(&out.policy),
        out.changed.len(),
        out.unchanged
    );
    for c in &out.changed {
        outln!(
            "  {} → {}  {} {}{}",
            c.before,
            paint(c.after, output::BOLD, false),
            clean(&c.tool),
            clean(
                &copse_hooks::spine::tool_call_summary(
                    "toolGate",
                    &serde_json::to_vec(
                        &serde_json::json!({"tool_name": c.tool, "tool_input": c.input})
                    )
                    .unwrap_or_default()
                )
                .map(|s| s.input)
                .unwrap_or_default()
            ),
            c.rule
                .as_deref()
                .map(|r| format!("  (rule `{}`)", clean(r)))
                .unwrap_or_default()
        );
        outln!(
            "    {} · session {}",
            paint(&c.run_id, output::DIM, false),
            clean(&c.session_id)
        );
    }
    if !out.not_replayable.is_empty() {
        errln!("{} calls could not be replayed:", out.not_replayable.len());
        for u in &out.not_replayable {
            errln!("  {}: {}", u.run_id, u.reason);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
