//! `copse-hooks replay FILE.jsonl`: drive a whole session, one canonical event per
//! line, and print each event's outcome, then the queue and every run.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result, anyhow, bail};
use copse_hooks::{Compaction, FileEdit, McpServer, ToolResult};
use copse_hooks::{EventPayload, Fired, HostIdentity, ModelIdentity, Session, SessionIdentity};
use copse_hooks_wire::OUTPUT_VERSION;
use copse_hooks_wire::output::{
    ExplainOutput, HaltOutput, NoticeOutput, ReplayLine, ReplaySummary, VerdictFields,
};
use serde_json::{Map, Value};

use crate::args::Global;
use crate::commands::gate::tool_call;
use crate::output::{self, clean, paint};
use crate::workspace;

/// One parsed input line.
pub enum Step {
    /// Set the session identity.
    Session(SessionIdentity),
    /// Fire an event.
    Event(EventPayload),
}

/// A parsed line with its number and event name.
pub struct Line {
    pub number: usize,
    pub name: String,
    pub step: Step,
}

fn str_field(obj: &Map<String, Value>, key: &str) -> Result<String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => bail!("\"{key}\" must be a string, got {other}"),
    }
}

fn required_str(obj: &Map<String, Value>, key: &str) -> Result<String> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => bail!("needs a \"{key}\" string"),
    }
}

fn u64_field(obj: &Map<String, Value>, key: &str) -> Result<u64> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(0),
        Some(v) => v
            .as_u64()
            .ok_or_else(|| anyhow!("\"{key}\" must be a non-negative integer, got {v}")),
    }
}

fn opt_str(obj: &Map<String, Value>, key: &str, default: &str) -> Result<String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(default.to_string()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => bail!("\"{key}\" must be a string, got {other}"),
    }
}

fn opt_bool(obj: &Map<String, Value>, key: &str, default: bool) -> Result<bool> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => bail!("\"{key}\" must be true or false, got {other}"),
    }
}

fn opt_f64(obj: &Map<String, Value>, key: &str) -> Result<f64> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(0.0),
        Some(v) => v
            .as_f64()
            .ok_or_else(|| anyhow!("\"{key}\" must be a number, got {v}")),
    }
}

fn object_field(obj: &Map<String, Value>, key: &str) -> Result<Map<String, Value>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(other) => bail!("\"{key}\" must be an object, got {other}"),
    }
}

/// A session identity from a replay `session` line (or `gate --session`).
pub fn session_identity(obj: &Map<String, Value>) -> Result<SessionIdentity> {
    let model = match obj.get("model") {
        None | Some(Value::Null) => None,
        Some(m) => Some(
            serde_json::from_value::<ModelIdentity>(m.clone())
                .context("\"model\" must be {model, model_id, model_params: [{id, value}]}")?,
        ),
    };
    let host = serde_json::from_value::<HostIdentity>(Value::Object(obj.clone())).context(
        "transcript_path, permission_mode, host_version, user_email, last_assistant_message, agent_id and agent_transcript_path must be strings",
    )?;
    if let Some(field) = host.nul_field() {
        anyhow::bail!("\"{field}\" contains a NUL byte, which no hook's environment can carry");
    }
    let mut identity = SessionIdentity::new(str_field(obj, "conversation_id")?);
    identity.generation_id = str_field(obj, "generation_id")?;
    identity.model = model;
    identity.host = host;
    Ok(identity)
}

fn parse_step(obj: &Map<String, Value>, name: &str, roots: &[std::path::PathBuf]) -> Result<Step> {
    let event = match name {
        "session" => return Ok(Step::Session(session_identity(obj)?)),
        "beforeSubmitPrompt" => EventPayload::BeforeSubmitPrompt {
            prompt: str_field(obj, "prompt")?,
        },
        "toolGate" | "permissionRequest" => {
            let tool = required_str(obj, "tool")?;
            let input = Value::Object(object_field(obj, "input")?).to_string();
            let mut call =
                tool_call(&tool, &input, roots)?.with_tool_use_id(str_field(obj, "tool_use_id")?);
            call.mcp_server = match obj.get("mcp_server") {
                None | Some(Value::Null) => None,
                Some(v) => Some(
                    serde_json::from_value::<McpServer>(v.clone())
                        .context("\"mcp_server\" must be {url?, command?}")?,
                ),
            };
            if name == "toolGate" {
                EventPayload::ToolGate(call)
            } else {
                EventPayload::PermissionRequest(call)
            }
        }
        "notification" => EventPayload::Notification {
            message: str_field(obj, "message")?,
            title: obj.get("title").and_then(Value::as_str).map(str::to_string),
            notification_type: obj
                .get("notification_type")
                .and_then(Value::as_str)
                .unwrap_or("permission_prompt")
                .to_string(),
            details: obj.get("details").cloned().unwrap_or(Value::Null),
        },
        "afterToolUse" => {
            let output = match obj.get("output") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            let mut result = ToolResult::new(
                required_str(obj, "tool")?,
                object_field(obj, "input")?,
                output,
            );
            result.is_error = opt_bool(obj, "is_error", false)?;
            result.duration_ms = u64_field(obj, "duration_ms")?;
            result.tool_call_id = match str_field(obj, "tool_call_id")? {
                id if id.is_empty() => str_field(obj, "tool_use_id")?,
                id => id,
            };
            result.response = obj
                .get("tool_response")
                .or_else(|| obj.get("response"))
                .filter(|v| !v.is_null())
                .cloned();
            EventPayload::AfterToolUse(result)
        }
        "afterFileEdit" => EventPayload::AfterFileEdit {
            file_path: {
                let p = required_str(obj, "file_path")?;
                match roots.first() {
                    Some(root) if Path::new(&p).is_relative() => {
                        root.join(&p).display().to_string()
                    }
                    _ => p,
                }
            },
            edits: match obj.get("edits") {
                None | Some(Value::Null) => Vec::new(),
                Some(v) => serde_json::from_value::<Vec<FileEdit>>(v.clone())
                    .context("\"edits\" must be [{old_string, new_string}]")?,
            },
        },
        "stop" => EventPayload::Stop {
            status: opt_str(obj, "status", "completed")?,
        },
        "subagentStart" => EventPayload::SubagentStart {
            subagent_type: required_str(obj, "subagent_type")?,
        },
        "subagentStop" => EventPayload::SubagentStop {
            subagent_type: required_str(obj, "subagent_type")?,
            status: opt_str(obj, "status", "completed")?,
        },
        "sessionStart" => EventPayload::SessionStart {
            first_turn: opt_bool(obj, "first_turn", true)?,
        },
        "sessionEnd" => EventPayload::SessionEnd {
            reason: opt_str(obj, "reason", "completed")?,
            duration_ms: u64_field(obj, "duration_ms")?,
        },
        "preCompact" => {
            let mut c = Compaction::new(opt_str(obj, "trigger", "auto")?);
            c.context_usage_percent = opt_f64(obj, "context_usage_percent")?;
            c.context_tokens = u64_field(obj, "context_tokens")?;
            c.context_window_size = u64_field(obj, "context_window_size")?;
            c.message_count = u64_field(obj, "message_count")?;
            c.messages_to_compact = u64_field(obj, "messages_to_compact")?;
            c.is_first_compaction = opt_bool(obj, "is_first_compaction", false)?;
            EventPayload::PreCompact(c)
        }
        "afterAgentResponse" => EventPayload::AfterAgentResponse {
            text: str_field(obj, "text")?,
        },
        "afterAgentThought" => EventPayload::AfterAgentThought {
            text: str_field(obj, "text")?,
            duration_ms: match obj.get("duration_ms") {
                None | Some(Value::Null) => None,
                Some(_) => Some(u64_field(obj, "duration_ms")?),
            },
        },
        other => bail!(
            "unknown event \"{other}\" (expected session, beforeSubmitPrompt, toolGate, afterToolUse, afterFileEdit, stop, subagentStart, subagentStop, sessionStart, sessionEnd, preCompact, afterAgentResponse, afterAgentThought, notification or permissionRequest)"
        ),
    };
    Ok(Step::Event(event))
}

/// Parses one raw line (`None` for blank and `//` comment lines).
fn parse_line(raw: &str, number: usize, path: &Path, roots: &[PathBuf]) -> Result<Option<Line>> {
    let trimmed = raw.trim();
    if trimmed.is_empty() || trimmed.starts_with("//") {
        return Ok(None);
    }
    let at = || format!("{}:{number}", path.display());
    let value: Value =
        serde_json::from_str(trimmed).with_context(|| format!("{}: not valid JSON", at()))?;
    let Value::Object(obj) = value else {
        bail!(
            "{}: each line must be a JSON object {{\"event\": NAME, ...}}",
            at()
        );
    };
    let name = match obj.get("event") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => bail!("{}: \"event\" must be a string, got {other}", at()),
        None => bail!("{}: missing \"event\"", at()),
    };
    let step = parse_step(&obj, &name, roots).with_context(at)?;
    Ok(Some(Line { number, name, step }))
}

/// Reads a replay file line by line, calling `each` with every parsed line: memory
/// stays bounded whatever the file's length.
fn for_each_line(
    path: &Path,
    roots: &[PathBuf],
    mut each: impl FnMut(Line) -> Result<()>,
) -> Result<()> {
    use std::io::BufRead as _;
    let file = std::fs::File::open(path)
        .with_context(|| format!("failed to read replay file {}", path.display()))?;
    if !file.metadata().map(|m| m.is_file()).unwrap_or(false) {
        bail!("replay file {} is not a regular file", path.display());
    }
    let reader = std::io::BufReader::new(file);
    for (i, raw) in reader.lines().enumerate() {
        let number = i + 1;
        let raw =
            raw.with_context(|| format!("{}:{number}: cannot read the line", path.display()))?;
        if let Some(line) = parse_line(&raw, number, path, roots)? {
            each(line)?;
        }
    }
    Ok(())
}

/// Checks a whole replay file before anything runs, so a bad line costs nothing.
pub fn validate(path: &Path, roots: &[PathBuf]) -> Result<()> {
    for_each_line(path, roots, |_| Ok(()))
}

/// Fires one line through a session: its result as one `replay --json` line, and the
/// runs of a blocking event's verdict.
fn fire(session: &Session, line: &Line) -> (ReplayLine, Vec<copse_hooks::HookRun>) {
    let mut runs = Vec::new();
    let mut out = ReplayLine {
        version: OUTPUT_VERSION,
        line: line.number,
        event: line.name.clone(),
        detached: false,
        dispatched: None,
        dropped: None,
        verdict: None,
        explain: None,
    };
    match &line.step {
        Step::Session(identity) => {
            session.set_identity(identity.clone());
            out.event = "session".to_string();
        }
        Step::Event(event) => match session.fire(event.clone()) {
            Fired::Verdict(v) => {
                out.verdict = Some(VerdictFields::from(&v));
                runs = v.runs;
            }
            Fired::Detached {
                dispatched,
                dropped,
            } => {
                out.detached = true;
                out.dispatched = Some(dispatched);
                out.dropped = Some(dropped);
            }
        },
    }
    (out, runs)
}

/// Streams a validated replay file through a session: each line's result is
/// printed as soon as it is known (a JSON line, or a transcript line). Returns the
/// final summary (queue, runs, drops, notices) after detached hooks finished.
pub fn stream(
    engine: &copse_hooks::Engine,
    session: &Session,
    path: &Path,
    json_out: bool,
) -> Result<ReplaySummary> {
    stream_with(engine, session, path, json_out, false)
}

/// [`stream`], with `explain`: each event line also lists every configured hook for
/// it with its verdict or why it did not run (`replay --explain`; in `--json`, the
/// line's `explain` field).
pub fn stream_with(
    engine: &copse_hooks::Engine,
    session: &Session,
    path: &Path,
    json_out: bool,
    explain: bool,
) -> Result<ReplaySummary> {
    let roots = engine.workspace_roots().to_vec();
    let mut events = Vec::new();
    let mut failed_runs = Vec::new();
    for_each_line(path, &roots, |line| {
        if let Step::Event(e) = &line.step
            && !events.contains(&e.event())
        {
            events.push(e.event());
        }
        // Read before the event fires: the same selection it is about to make.
        let explanation = match &line.step {
            Step::Event(e) if explain => Some(engine.explain_event(e, &session.identity())),
            _ => None,
        };
        let (mut typed, runs) = fire(session, &line);
        let explanation = explanation.map(|mut e| {
            e.record_runs(&runs);
            ExplainOutput::from(&e)
        });
        if json_out {
            typed.explain = explanation;
            outln!("{}", serde_json::to_string(&typed)?);
        } else {
            print_line(&line, &serde_json::to_value(&typed)?, &roots);
            if let Some(e) = &explanation {
                crate::commands::gate::print_explanation(e);
            }
        }
        if output::stdout_closed() {
            bail!(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        }
        Ok(())
    })?;
    session.wait_idle();
    let halt = session.take_halt().map(|h| HaltOutput { reason: h.reason });
    let mut notices: Vec<NoticeOutput> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for e in events {
        for n in engine.explain(e) {
            if seen.insert((n.kind, n.message.clone())) {
                notices.push(NoticeOutput::from(&n));
            }
        }
    }
    notices.extend(session.take_notices().iter().map(NoticeOutput::from));
    let runs = session.runs();
    for r in &runs {
        if let Some(n) = engine.explain_run(r) {
            failed_runs.push(NoticeOutput::from(&n));
        }
    }
    notices.extend(failed_runs);
    Ok(ReplaySummary {
        version: copse_hooks_wire::OUTPUT_VERSION,
        halt,
        queue: session.queue().iter().map(Into::into).collect(),
        runs: runs.iter().map(Into::into).collect(),
        dropped: session.dropped().iter().map(Into::into).collect(),
        notices,
        warnings: workspace::config_problems(session),
    })
}

pub fn run(global: &Global, file: &Path, explain: bool) -> Result<ExitCode> {
    let inv = workspace::engine_with(global, |c| {
        c.keep_session_runs = true;
        workspace::record(c);
    })?;
    workspace::warn_settings(&inv);
    validate(file, inv.engine.workspace_roots())?;
    let session = inv.engine.session(SessionIdentity::new("replay"));
    let summary = stream_with(&inv.engine, &session, file, global.json, explain)?;
    finish(&summary, global.json)?;
    inv.engine.flush_spine();
    crate::notices::print(&crate::notices::spine_report(&inv.engine));
    Ok(ExitCode::SUCCESS)
}

/// Prints the summary (the last JSON line, or the queue and run counts) and the
/// notices on stderr.
pub fn finish(summary: &ReplaySummary, json_out: bool) -> Result<()> {
    if json_out {
        outln!("{}", serde_json::to_string(summary)?);
    } else {
        print_summary(summary);
    }
    crate::notices::print(&summary.notices);
    Ok(())
}

/// One transcript line (and its messages).
fn print_line(line: &Line, v: &Value, roots: &[PathBuf]) {
    let head = format!("{:>3}  {:<20}", line.number, clean(&line.name));
    let detail = match &line.step {
        Step::Session(id) => clean(&format!(
            "conversation {}{}",
            id.conversation_id,
            id.model
                .as_ref()
                .map(|m| format!(", model {}", m.model))
                .unwrap_or_default()
        )),
        Step::Event(e) => clean(&describe(e, roots)),
    };
    if v["detached"] == true {
        outln!(
            "{head} {} {}",
            paint("detached", output::DIM, false),
            paint(
                &format!(
                    "({}) {detail}",
                    hooks_count(v["dispatched"].as_u64().unwrap_or(0))
                ),
                output::DIM,
                false
            )
        );
        return;
    }
    if matches!(line.step, Step::Session(_)) {
        outln!("{head} {detail}");
        return;
    }
    let decision = v["decision"].as_str().unwrap_or("allow");
    let word = if v["halt"].is_object() {
        "halt"
    } else {
        decision
    };
    let runs = v["runs"].as_array().map(Vec::len).unwrap_or(0);
    outln!(
        "{head} {} {detail} {}",
        output::decision_padded(if word == "halt" { "deny" } else { word }, 6),
        paint(
            &format!("({})", hooks_count(runs as u64)),
            output::DIM,
            false
        )
    );
    for key in ["agent_message", "user_message", "inject_context"] {
        if let Some(m) = v[key].as_str() {
            outln!("       {}: {}", key.replace('_', " "), clean(m));
        }
    }
    if let Some(reason) = v["halt"]["reason"].as_str() {
        outln!("       halted: {}", clean(reason));
    }
}

/// The queue and the run counts.
fn print_summary(summary: &ReplaySummary) {
    let queue = &summary.queue;
    outln!();
    if let Some(h) = &summary.halt {
        outln!("Halted by a detached hook: {}", clean(&h.reason));
    }
    if queue.is_empty() {
        outln!("Queue: empty");
    } else {
        outln!("{}", paint("Queue:", output::BOLD, false));
        for m in queue {
            let state = if m.held {
                "held"
            } else if m.send_now {
                "send now"
            } else {
                "queued"
            };
            outln!(
                "  [{state}] {} {}",
                clean(&m.text),
                paint(
                    &clean(&format!(
                        "({} {} {}, epoch {})",
                        m.origin.dialect, m.origin.event, m.origin.command, m.epoch
                    )),
                    output::DIM,
                    false
                )
            );
        }
    }
    let runs = &summary.runs;
    let failed = runs.iter().filter(|r| r.outcome == "failed").count();
    let dropped = summary.dropped.len();
    outln!("Runs: {} ({failed} failed, {dropped} dropped)", runs.len());
}

fn describe(e: &EventPayload, roots: &[PathBuf]) -> String {
    let short = |s: &str| {
        let s = s.replace('\n', " ");
        if s.chars().count() > 50 {
            format!("{}…", s.chars().take(49).collect::<String>())
        } else {
            s
        }
    };
    match e {
        EventPayload::ToolGate(c) | EventPayload::PermissionRequest(c) => {
            let what = c
                .input
                .get("command")
                .or_else(|| c.input.get("path"))
                .and_then(Value::as_str)
                .map(short)
                .unwrap_or_default();
            format!("{} {what}", c.tool)
        }
        EventPayload::BeforeSubmitPrompt { prompt } => short(prompt),
        EventPayload::AfterToolUse(r) => {
            format!("{}{}", r.tool, if r.is_error { " (failed)" } else { "" })
        }
        EventPayload::AfterFileEdit { file_path, .. } => {
            let path = Path::new(file_path);
            let shown = roots
                .iter()
                .find_map(|r| path.strip_prefix(r).ok())
                .unwrap_or(path);
            short(&shown.display().to_string())
        }
        EventPayload::Stop { status } => status.clone(),
        EventPayload::SubagentStart { subagent_type } => subagent_type.clone(),
        EventPayload::SubagentStop {
            subagent_type,
            status,
        } => format!("{subagent_type} {status}"),
        EventPayload::SessionStart { .. } => String::new(),
        EventPayload::SessionEnd { reason, .. } => reason.clone(),
        EventPayload::PreCompact(c) => c.trigger.clone(),
        EventPayload::AfterAgentResponse { text }
        | EventPayload::AfterAgentThought { text, .. } => short(text),
        EventPayload::Notification {
            message,
            notification_type,
            ..
        } => format!("{notification_type}: {}", short(message)),
        // An event the engine learned after this summary was written: its name.
        other => other.event().name().to_string(),
    }
}

/// "1 hook", "2 hooks", "0 hooks".
fn hooks_count(n: u64) -> String {
    if n == 1 {
        "1 hook".to_string()
    } else {
        format!("{n} hooks")
    }
}
