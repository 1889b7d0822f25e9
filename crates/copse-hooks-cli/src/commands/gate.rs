//! `copse-hooks gate <TOOL> --input <JSON>`.

use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use copse_hooks::{SessionIdentity, ToolCall, Verdict};
use serde_json::{Map, Value};

use crate::cli::Global;
use crate::output::{self, paint};
use crate::workspace;

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
    let (mut bytes, cut) =
        copse_hooks::fsread::read_prefix(&resolved, copse_hooks::fsread::MAX_READ_FILE_CONTENT)
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

pub fn run(
    global: &Global,
    tool: &str,
    input: &str,
    tool_use_id: Option<&str>,
    session: Option<&str>,
) -> Result<ExitCode> {
    let identity = match session {
        None => SessionIdentity::new(""),
        Some(text) => {
            let value: Value = serde_json::from_str(text)
                .with_context(|| format!("--session is not valid JSON: {text}"))?;
            let Value::Object(obj) = value else {
                bail!("--session must be a JSON object, got: {text}");
            };
            crate::commands::replay::session_identity(&obj).context("--session")?
        }
    };
    let inv = workspace::engine_with(global, workspace::record)?;
    workspace::warn_settings(&inv);
    let mut call = tool_call(tool, input, inv.engine.workspace_roots())?;
    if let Some(id) = tool_use_id {
        call = call.with_tool_use_id(id);
    }
    let session = inv.engine.session(identity);
    let verdict = session.gate_tool(call);
    let problems = workspace::print_config_problems(&session);
    workspace::print_notices(&session);
    inv.engine.flush_spine();
    workspace::warn_spine(&inv.engine);
    if global.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&{
                let mut v = output::verdict_json(&verdict);
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("warnings".into(), serde_json::json!(problems));
                }
                v
            })?
        );
    } else {
        print_human(tool, &verdict);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_human(tool: &str, v: &Verdict) {
    let decision = v.effective_decision().as_str();
    let total: u64 = v
        .runs
        .iter()
        .map(|r| output::millis(r.duration))
        .max()
        .unwrap_or(0);
    let hooks = match v.runs.len() {
        0 => "no hook matched".to_string(),
        1 => format!("1 hook, {total} ms"),
        n => format!("{n} hooks, {total} ms"),
    };
    println!(
        "{} {} {}",
        output::decision_word(decision),
        paint(tool, output::BOLD, false),
        paint(&format!("({hooks})"), output::DIM, false)
    );
    if let Some(m) = &v.agent_message {
        println!("  agent message: {m}");
    }
    if let Some(m) = &v.user_message {
        println!("  user message:  {m}");
    }
    if let Some(u) = &v.updated_input {
        println!("  updated input: {}", Value::Object(u.clone()));
    }
    for run in &v.runs {
        for line in output::run_lines(run) {
            println!("{line}");
        }
    }
}
