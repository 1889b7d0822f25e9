//! `copse-hooks replay FILE.jsonl`: drive a whole session, one canonical event per
//! line, and print each event's outcome, then the queue and every run.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, Result, anyhow, bail};
use copse_hooks::event::{Compaction, FileEdit, ToolResult};
use copse_hooks::{EventPayload, Fired, ModelIdentity, Session, SessionIdentity, Verdict};
use serde_json::{Map, Value, json};

use crate::cli::Global;
use crate::commands::gate::tool_call;
use crate::output::{self, paint};
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

fn object_field(obj: &Map<String, Value>, key: &str) -> Result<Map<String, Value>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(other) => bail!("\"{key}\" must be an object, got {other}"),
    }
}

fn parse_step(obj: &Map<String, Value>, name: &str, roots: &[std::path::PathBuf]) -> Result<Step> {
    let event = match name {
        "session" => {
            let model =
                match obj.get("model") {
                    None | Some(Value::Null) => None,
                    Some(m) => Some(serde_json::from_value::<ModelIdentity>(m.clone()).context(
                        "\"model\" must be {model, model_id, model_params: [{id, value}]}",
                    )?),
                };
            return Ok(Step::Session(SessionIdentity {
                conversation_id: str_field(obj, "conversation_id")?,
                generation_id: str_field(obj, "generation_id")?,
                model,
            }));
        }
        "beforeSubmitPrompt" => EventPayload::BeforeSubmitPrompt {
            prompt: str_field(obj, "prompt")?,
        },
        "toolGate" => {
            let tool = required_str(obj, "tool")?;
            let input = Value::Object(object_field(obj, "input")?).to_string();
            EventPayload::ToolGate(tool_call(&tool, &input, roots)?)
        }
        "afterToolUse" => {
            let output = match obj.get("output") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            EventPayload::AfterToolUse(ToolResult {
                tool: required_str(obj, "tool")?,
                input: object_field(obj, "input")?,
                output,
                is_error: obj
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                duration_ms: u64_field(obj, "duration_ms")?,
                tool_call_id: str_field(obj, "tool_call_id")?,
            })
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
            status: obj
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("completed")
                .to_string(),
        },
        "subagentStart" => EventPayload::SubagentStart {
            subagent_type: required_str(obj, "subagent_type")?,
        },
        "subagentStop" => EventPayload::SubagentStop {
            subagent_type: required_str(obj, "subagent_type")?,
            status: obj
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("completed")
                .to_string(),
        },
        "sessionStart" => EventPayload::SessionStart {
            first_turn: obj
                .get("first_turn")
                .and_then(Value::as_bool)
                .unwrap_or(true),
        },
        "sessionEnd" => EventPayload::SessionEnd {
            reason: obj
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("completed")
                .to_string(),
            duration_ms: u64_field(obj, "duration_ms")?,
        },
        "preCompact" => EventPayload::PreCompact(Compaction {
            trigger: obj
                .get("trigger")
                .and_then(Value::as_str)
                .unwrap_or("auto")
                .to_string(),
            context_usage_percent: obj
                .get("context_usage_percent")
                .and_then(Value::as_f64)
                .unwrap_or(0.0),
            context_tokens: u64_field(obj, "context_tokens")?,
            context_window_size: u64_field(obj, "context_window_size")?,
            message_count: u64_field(obj, "message_count")?,
            messages_to_compact: u64_field(obj, "messages_to_compact")?,
            is_first_compaction: obj
                .get("is_first_compaction")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }),
        "afterAgentResponse" => EventPayload::AfterAgentResponse {
            text: str_field(obj, "text")?,
        },
        "afterAgentThought" => EventPayload::AfterAgentThought {
            text: str_field(obj, "text")?,
            duration_ms: obj.get("duration_ms").and_then(Value::as_u64),
        },
        other => bail!(
            "unknown event \"{other}\" (expected session, beforeSubmitPrompt, toolGate, afterToolUse, afterFileEdit, stop, subagentStart, subagentStop, sessionStart, sessionEnd, preCompact, afterAgentResponse or afterAgentThought)"
        ),
    };
    Ok(Step::Event(event))
}

/// Parses a whole replay file before anything runs, so a bad line costs nothing.
pub fn parse(path: &Path, roots: &[std::path::PathBuf]) -> Result<Vec<Line>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("failed to read replay file {}", path.display()))?;
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let number = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with("//") {
            continue;
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
        let name = obj
            .get("event")
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow!("{}: missing \"event\"", at()))?
            .to_string();
        let step = parse_step(&obj, &name, roots).with_context(at)?;
        lines.push(Line { number, name, step });
    }
    Ok(lines)
}

/// Runs the lines through a session; returns one JSON object per line and the final
/// summary object.
pub fn drive(session: &Session, lines: &[Line]) -> (Vec<Value>, Value) {
    let mut out = Vec::new();
    for line in lines {
        let value = match &line.step {
            Step::Session(identity) => {
                session.set_identity(identity.clone());
                json!({"version": copse_hooks_wire::OUTPUT_VERSION, "line": line.number, "event": "session", "detached": false})
            }
            Step::Event(event) => match session.fire(event.clone()) {
                Fired::Verdict(v) => {
                    let mut obj = json!({"version": copse_hooks_wire::OUTPUT_VERSION, "line": line.number, "event": line.name, "detached": false});
                    merge_verdict(&mut obj, &v);
                    obj
                }
                Fired::Detached {
                    dispatched,
                    dropped,
                } => json!({
                    "version": copse_hooks_wire::OUTPUT_VERSION,
                    "line": line.number,
                    "event": line.name,
                    "detached": true,
                    "dispatched": dispatched,
                    "dropped": dropped,
                }),
            },
        };
        out.push(value);
    }
    session.wait_idle();
    let summary = serde_json::to_value(copse_hooks_wire::output::ReplaySummary {
        version: copse_hooks_wire::OUTPUT_VERSION,
        queue: session.queue().iter().map(Into::into).collect(),
        runs: session.runs().iter().map(Into::into).collect(),
        dropped: session.dropped().iter().map(Into::into).collect(),
    })
    // Serialising plain structs of strings and numbers cannot fail.
    .unwrap_or(Value::Null);
    (out, summary)
}

fn merge_verdict(obj: &mut Value, v: &Verdict) {
    if let (Value::Object(target), Value::Object(src)) = (obj, output::verdict_json(v)) {
        target.extend(src);
    }
}

pub fn run(global: &Global, file: &Path) -> Result<ExitCode> {
    let inv = workspace::engine_with(global, |c| {
        c.keep_session_runs = true;
        workspace::record(c);
    })?;
    workspace::warn_settings(&inv);
    let lines = parse(file, inv.engine.workspace_roots())?;
    let session = inv.engine.session(SessionIdentity::new("replay"));
    let (per_line, summary) = drive(&session, &lines);
    workspace::print_notices(&session);
    inv.engine.flush_spine();
    workspace::warn_spine(&inv.engine);
    if global.json {
        for v in &per_line {
            println!("{}", serde_json::to_string(v)?);
        }
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        print_transcript(&lines, &per_line, &summary);
    }
    Ok(ExitCode::SUCCESS)
}

/// The human-readable transcript.
pub fn print_transcript(lines: &[Line], per_line: &[Value], summary: &Value) {
    for (line, v) in lines.iter().zip(per_line) {
        let head = format!("{:>3}  {:<20}", line.number, line.name);
        let detail = match &line.step {
            Step::Session(id) => format!(
                "conversation {}{}",
                id.conversation_id,
                id.model
                    .as_ref()
                    .map(|m| format!(", model {}", m.model))
                    .unwrap_or_default()
            ),
            Step::Event(e) => describe(e),
        };
        if v["detached"] == true {
            println!(
                "{head} {} {}",
                paint("detached", output::DIM, false),
                paint(
                    &format!("({} hooks) {detail}", v["dispatched"]),
                    output::DIM,
                    false
                )
            );
            continue;
        }
        if matches!(line.step, Step::Session(_)) {
            println!("{head} {detail}");
            continue;
        }
        let decision = v["decision"].as_str().unwrap_or("allow");
        let word = if v["halt"].is_object() {
            "halt"
        } else {
            decision
        };
        let runs = v["runs"].as_array().map(Vec::len).unwrap_or(0);
        println!(
            "{head} {:<6} {detail} {}",
            output::decision_word(if word == "halt" { "deny" } else { word }),
            paint(&format!("({runs} hooks)"), output::DIM, false)
        );
        for key in ["agent_message", "user_message", "inject_context"] {
            if let Some(m) = v[key].as_str() {
                println!("       {}: {}", key.replace('_', " "), m.replace('\n', " "));
            }
        }
        if let Some(reason) = v["halt"]["reason"].as_str() {
            println!("       halted: {reason}");
        }
    }
    let queue = summary["queue"].as_array().cloned().unwrap_or_default();
    println!();
    if queue.is_empty() {
        println!("Queue: empty");
    } else {
        println!("{}", paint("Queue:", output::BOLD, false));
        for m in &queue {
            let state = if m["held"] == true {
                "held"
            } else if m["send_now"] == true {
                "send now"
            } else {
                "queued"
            };
            println!(
                "  [{state}] {} {}",
                m["text"].as_str().unwrap_or(""),
                paint(
                    &format!(
                        "({} {} {}, epoch {})",
                        m["origin"]["dialect"].as_str().unwrap_or(""),
                        m["origin"]["event"].as_str().unwrap_or(""),
                        m["origin"]["command"].as_str().unwrap_or(""),
                        m["epoch"]
                    ),
                    output::DIM,
                    false
                )
            );
        }
    }
    let runs = summary["runs"].as_array().cloned().unwrap_or_default();
    let failed = runs.iter().filter(|r| r["outcome"] == "failed").count();
    let dropped = summary["dropped"].as_array().map(Vec::len).unwrap_or(0);
    println!("Runs: {} ({failed} failed, {dropped} dropped)", runs.len());
}

fn describe(e: &EventPayload) -> String {
    let short = |s: &str| {
        let s = s.replace('\n', " ");
        if s.chars().count() > 50 {
            format!("{}…", s.chars().take(49).collect::<String>())
        } else {
            s
        }
    };
    match e {
        EventPayload::ToolGate(c) => {
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
        EventPayload::AfterFileEdit { file_path, .. } => short(file_path),
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
    }
}
