//! `copse-hooks gate <TOOL> --input <JSON>`.

use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use copse_hooks::{SessionIdentity, ToolCall, Verdict};
use serde_json::{Map, Value};

use crate::args::Global;
use crate::output::{self, clean, paint};
use crate::workspace;
use crate::{notices, tools};
use copse_hooks_wire::output::{ExplainOutput, NoticeOutput};

/// Parses the tool input and, for `read_file`, reads the file's content.
pub fn tool_call(tool: &str, input: &str, roots: &[std::path::PathBuf]) -> Result<ToolCall> {
    let value: Value = serde_json::from_str(input)
        .with_context(|| format!("--input is not valid JSON: {input}"))?;
    let Value::Object(map) = value else {
        bail!("--input must be a JSON object, got: {input}");
    };
    let mut call = ToolCall::new(tool, map);
    // A malformed input is an error naming the field (exit 2), never coerced.
    call.validate()?;
    if tool == "read_file" {
        call.file_content = Some(read_content(&call.input, roots)?);
    }
    Ok(call)
}

fn read_content(input: &Map<String, Value>, roots: &[std::path::PathBuf]) -> Result<String> {
    let Some(path) = input.get("path").and_then(Value::as_str) else {
        bail!("read_file input needs a \"path\" string to read the file's content");
    };
    let path = std::path::Path::new(path);
    let resolved = if path.is_absolute() {
        path.to_path_buf()
    } else {
        roots
            .first()
            .map(|r| r.join(path))
            .unwrap_or(path.to_path_buf())
    };
    // Regular files only, opened without blocking; hooks see at most the first
    // 1 MiB (cut at a character boundary) of a larger file.
    let (mut bytes, cut) = copse_hooks::read_prefix(&resolved, copse_hooks::MAX_READ_FILE_CONTENT)
        .with_context(|| {
            format!(
                "failed to read {} for the beforeReadFile content",
                resolved.display()
            )
        })?;
    if cut {
        // The cut may split a character: drop the incomplete tail.
        if let Err(e) = std::str::from_utf8(&bytes)
            && e.error_len().is_none()
        {
            bytes.truncate(e.valid_up_to());
        }
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The `gate` options.
pub struct GateArgs<'a> {
    pub tool: &'a str,
    pub input: &'a str,
    pub exit_code: bool,
    /// A conversation id, or a JSON session identity like a replay `session` line.
    pub session: Option<&'a str>,
    /// The host's id for this tool call (generated when absent).
    pub tool_use_id: Option<&'a str>,
    /// Also explain every configured hook for the event (`--explain`).
    pub explain: bool,
}

/// The most `--input -` / `--input @FILE` reads (a tool input is small).
const MAX_INPUT: u64 = 16 * 1024 * 1024;

/// `--input`: JSON text, `-` for stdin, or `@FILE`.
pub fn read_input(input: &str) -> Result<String> {
    use std::io::Read as _;
    let (what, reader): (String, Box<dyn std::io::Read>) = if input == "-" {
        ("stdin".to_string(), Box::new(std::io::stdin()))
    } else if let Some(file) = input.strip_prefix('@') {
        let meta = std::fs::metadata(file)
            .with_context(|| format!("--input @{file}: cannot read {file}"))?;
        if !meta.is_file() {
            bail!("--input @{file}: {file} is not a regular file");
        }
        let f = std::fs::File::open(file)
            .with_context(|| format!("--input @{file}: cannot read {file}"))?;
        (file.to_string(), Box::new(f))
    } else {
        return Ok(input.to_string());
    };
    let mut text = String::new();
    reader
        .take(MAX_INPUT + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("--input: failed to read {what}"))?;
    if text.len() as u64 > MAX_INPUT {
        bail!("--input: {what} is larger than {MAX_INPUT} bytes");
    }
    Ok(text)
}

/// A vendor tool name mapped to its canonical id (with a note), Claude-style
/// `file_path` renamed to `path`, and a did-you-mean for an unknown tool.
pub(crate) fn canonical_tool(tool: &str, input: &str) -> (String, String, Vec<NoticeOutput>) {
    let mut notes = Vec::new();
    if let Some((canonical, vendor)) = tools::alias(tool) {
        notes.push(notices::cli(
            "tool_alias",
            format!(
                "{tool} is {vendor}'s name for the canonical tool {canonical}: gating {canonical}"
            ),
            None,
        ));
        let mut input = input.to_string();
        if let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(&input)
            && !map.contains_key("path")
            && let Some(p) = map.remove("file_path")
        {
            map.insert("path".to_string(), p);
            input = Value::Object(map).to_string();
        }
        return (canonical.to_string(), input, notes);
    }
    if !tools::is_canonical(tool) {
        let candidates = tools::CANONICAL_TOOLS
            .iter()
            .copied()
            .chain(tools::VENDOR_ALIASES.iter().map(|(n, _, _)| *n));
        let hint = tools::did_you_mean(tool, candidates)
            .map(|m| format!("did you mean {m}?"))
            .or_else(|| Some("canonical tools are listed in docs/tools.md".to_string()));
        notes.push(notices::cli(
            "unknown_tool",
            format!("{tool} is not a canonical tool: hooks that match on tool names may not see it as you expect"),
            hint,
        ));
    }
    (tool.to_string(), input.to_string(), notes)
}

pub fn run(global: &Global, args: &GateArgs<'_>) -> Result<ExitCode> {
    let inv = workspace::engine_with(global, workspace::record)?;
    workspace::warn_settings(&inv);
    let input = read_input(args.input)?;
    let (tool, input, mut notes) = canonical_tool(args.tool, &input);
    let mut call = tool_call(&tool, &input, inv.engine.workspace_roots())?;
    if let Some(id) = args.tool_use_id {
        call = call.with_tool_use_id(id);
    }
    let identity = session_identity(args.session)?;
    let before = inv.engine.explain(copse_hooks::CanonicalEvent::ToolGate);
    // From the same selection the gate is about to make (read before it runs).
    let mut explanation = args.explain.then(|| {
        inv.engine.explain_event(
            &copse_hooks::EventPayload::ToolGate(call.clone()),
            &identity,
        )
    });
    // With --session: the hooks this session already ran. Without (a one-shot gate):
    // the hooks already recorded at all, so the note shows once, not on every gate.
    let seen = hooks_already_run(
        &inv.engine,
        args.session.map(|_| identity.conversation_id.as_str()),
    );
    let session = inv.engine.session(identity);
    let progress = crate::progress::start(&format!("gating {tool}"));

    let verdict = session.gate_tool(call);
    drop(progress);
    // The first-run note shows once per session: not again for a hook this session
    // already ran in an earlier `gate --session ID`.
    let session_notices: Vec<copse_hooks::Notice> = session
        .take_notices()
        .into_iter()
        .filter(|n| {
            n.kind != copse_hooks::NoticeKind::FirstRun
                || !verdict.runs.iter().any(|r| {
                    n.source.as_deref() == Some(r.source.as_path())
                        && n.message.contains(&format!("`{}`", r.command))
                        && seen.contains(&(r.source.display().to_string(), r.command.clone()))
                })
        })
        .collect();
    notes.extend(notices::for_verdict(
        &inv.engine,
        &before,
        &session_notices,
        &verdict,
    ));
    if let Some(e) = explanation.as_mut() {
        e.record_runs(&verdict.runs);
    }
    let explanation = explanation.map(|e| {
        let mut out = ExplainOutput::from(&e);
        out.verdict = Some(copse_hooks_wire::output::VerdictFields::from(&verdict));
        out.notices = notes.clone();
        out.warnings = workspace::config_problems(&session);
        out.guard = verdict
            .guard
            .iter()
            .filter_map(|r| r.guard.as_ref().map(|g| crate::output::guard_line(r, g)))
            .collect();
        if out.guard.is_empty() {
            out.guard.push(if inv.engine.guard_active() {
                format!(
                    "  {} guard allowed ({} mode, no rule matched)",
                    crate::output::decision_padded("allow", 7),
                    inv.engine.guard().mode().as_str()
                )
            } else {
                "  guard   not active (hooks are off)".to_string()
            });
        }
        out
    });
    // The verdict first: a slow or locked audit store never delays it.
    if let Some(e) = explanation.as_ref().filter(|_| global.json) {
        outln!("{}", serde_json::to_string_pretty(e)?);
    } else if global.json {
        let mut v = copse_hooks_wire::output::GateOutput::from(&verdict);
        v.notices = notes.clone();
        // Printed on stderr as the `config_warning` notices; carried here too.
        v.warnings = workspace::config_problems(&session);
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print_human(&tool, &verdict);
        if let Some(e) = &explanation {
            print_explanation(e);
        }
    }
    notices::print(&notes);
    inv.engine.flush_spine();
    notices::print(&notices::spine_report(&inv.engine));
    if !args.exit_code {
        return Ok(ExitCode::SUCCESS);
    }
    Ok(ExitCode::from(match verdict.effective_decision() {
        _ if verdict.halt.is_some() => 1,
        copse_hooks::Decision::Allow => 0,
        copse_hooks::Decision::Deny => 1,
        copse_hooks::Decision::Ask => 3,
    }))
}

/// The (source, command) of every hook already recorded in session `id`; without an
/// id, of every hook among the latest recorded tool-gate runs.
fn hooks_already_run(
    engine: &copse_hooks::Engine,
    id: Option<&str>,
) -> std::collections::HashSet<(String, String)> {
    let Ok(Some(spine)) = workspace::read_spine(engine) else {
        return Default::default();
    };
    spine
        .query(&copse_hooks::spine::RunFilter {
            session_id: id.map(str::to_string),
            event: id.is_none().then(|| "toolGate".to_string()),
            limit: Some(if id.is_some() { 10_000 } else { 2_000 }),
            ..Default::default()
        })
        .map(|runs| runs.into_iter().map(|r| (r.source, r.command)).collect())
        .unwrap_or_default()
}

fn print_human(tool: &str, v: &Verdict) {
    let decision = v.effective_decision().as_str();
    let total: u64 = v
        .runs
        .iter()
        .map(|r| output::millis(r.duration))
        .max()
        .unwrap_or(0);
    let hooks = match v.runs.iter().filter(|r| !r.blocked).count() {
        0 => "no hook ran".to_string(),
        1 => format!("1 hook, {total} ms"),
        n => format!("{n} hooks, {total} ms"),
    };
    let hooks = if v.runs.iter().any(|r| r.blocked) {
        format!("{hooks}; blocked: a hook config cannot run")
    } else {
        hooks
    };
    let hooks = match v
        .guard
        .iter()
        .rev()
        .find_map(|r| r.guard.as_ref().map(|g| (r, g)))
    {
        Some((_, g)) if g.subsumed => hooks,
        Some((r, g))
            if r.outcome.decision == Some(copse_hooks::Decision::Deny) || g.broken.is_some() =>
        {
            format!("{hooks}; refused by the guard")
        }
        Some((r, _)) if r.outcome.decision == Some(copse_hooks::Decision::Ask) => {
            format!("{hooks}; the guard asks")
        }
        _ => hooks,
    };
    outln!(
        "{} {} {}",
        output::decision_word(decision),
        paint(&clean(tool), output::BOLD, false),
        paint(&format!("({hooks})"), output::DIM, false)
    );
    if let Some(m) = &v.agent_message {
        outln!("  agent message: {}", clean(m));
    }
    if let Some(m) = &v.user_message {
        outln!("  user message:  {}", clean(m));
    }
    if let Some(u) = &v.updated_input {
        outln!(
            "  updated input: {}",
            clean(&Value::Object(u.clone()).to_string())
        );
    }
    if let Some(h) = &v.halt {
        outln!("  halted: {}", clean(&h.reason));
    }
    for run in v.runs.iter().chain(&v.guard) {
        for line in output::run_lines(run) {
            outln!("{line}");
        }
    }
}

/// `--session`: a conversation id, or (starting with `{`) the session as the host knows
/// it, like a replay `session` line.
fn session_identity(session: Option<&str>) -> Result<SessionIdentity> {
    match session {
        None => Ok(SessionIdentity::new("")),
        Some(text) if text.trim_start().starts_with('{') => {
            let value: Value = serde_json::from_str(text)
                .with_context(|| format!("--session is not valid JSON: {}", clean(text)))?;
            let Value::Object(obj) = value else {
                bail!("--session must be a JSON object or an id");
            };
            crate::commands::replay::session_identity(&obj).context("--session")
        }
        Some(id) => Ok(SessionIdentity::new(id)),
    }
}

/// `--explain`: every configured hook for the event, with its verdict or why it did
/// not run (everything from configs escaped).
pub fn print_explanation(e: &ExplainOutput) {
    let subject = match &e.tool {
        Some(t) => format!("{} ({})", e.event, clean(t)),
        None => e.event.clone(),
    };
    outln!("hooks for {subject}:");
    if !e.hooks_enabled {
        outln!("  hooks are off: nothing runs (`copse-hooks enable` turns them on)");
    }
    if e.recursion_guard {
        outln!("  this process runs inside a hook: nothing runs here");
    }
    if e.hooks.is_empty() {
        outln!(
            "  no hook is configured for {} (`copse-hooks list` shows every hook)",
            e.event
        );
    }
    for line in &e.guard {
        outln!("{line}");
    }
    for h in &e.hooks {
        outln!(
            "  {:<8} {} {} #{}{}  `{}`",
            h.status,
            h.dialect,
            clean(&h.event),
            h.entry,
            h.matcher
                .as_deref()
                .map(|m| format!(" matcher \"{}\"", clean(m)))
                .unwrap_or_default(),
            clean(&h.command)
        );
        outln!("           {} ({})", clean(&h.source), h.scope);
        match (&h.verdict, &h.message) {
            (Some(v), _) => outln!("           -> {}", clean(v)),
            (None, Some(m)) => outln!("           {}", clean(m)),
            (None, None) => outln!("           selected: runs for this call"),
        }
    }
    if !e.problems.is_empty() {
        outln!("config problems:");
        for p in &e.problems {
            outln!("  {}: {}", clean(&p.source), clean(&p.message));
        }
    }
}
