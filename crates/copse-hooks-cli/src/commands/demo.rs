//! `copse-hooks demo`: the main job. Gates a handful of realistic tool calls through
//! the example workspace's hooks and shows each verdict with its reason and timing.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use copse_hooks::{Engine, EngineConfig, SessionIdentity};
use serde::Deserialize;
use serde_json::Value;

use crate::cli::Global;
use crate::commands::gate::tool_call;
use crate::output::{self, paint};

#[derive(Debug, Deserialize)]
struct DemoCall {
    tool: String,
    input: Value,
    #[serde(default)]
    note: String,
}

fn default_example() -> PathBuf {
    let local = PathBuf::from("examples/workspace");
    if local.is_dir() {
        return local;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/workspace")
}

pub fn run(global: &Global, example: Option<&Path>) -> Result<ExitCode> {
    let root = example
        .map(Path::to_path_buf)
        .unwrap_or_else(default_example);
    let root = std::fs::canonicalize(&root)
        .with_context(|| format!("example workspace {} not found", root.display()))?;
    let calls_path = root.join("demo-calls.json");
    let text = std::fs::read_to_string(&calls_path)
        .with_context(|| format!("failed to read {}", calls_path.display()))?;
    let calls: Vec<DemoCall> = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a list of {{tool, input}} calls",
            calls_path.display()
        )
    })?;
    if calls.is_empty() {
        bail!("{} lists no calls", calls_path.display());
    }
    // The demo is self-contained: the example workspace is trusted and hooks are on for
    // this invocation only, and an empty home keeps the user's own hooks out of it.
    let home = std::env::temp_dir().join(format!("copse-hooks-demo-home-{}", std::process::id()));
    std::fs::create_dir_all(&home)
        .with_context(|| format!("failed to create {}", home.display()))?;
    let engine = Engine::new(
        EngineConfig::from_process(vec![root.clone()])
            .home(&home)
            .enabled(true)
            .trust(&root),
    );
    let session = engine.session(SessionIdentity::new("demo-conversation"));
    let mut results = Vec::new();
    if !global.json {
        println!(
            "{} {}\n",
            paint("Gating example tool calls through", output::BOLD, false),
            paint(
                &root.join(".cursor/hooks.json").display().to_string(),
                output::BOLD,
                false
            )
        );
    }
    for call in &calls {
        let input = serde_json::to_string(&call.input)?;
        let tc = tool_call(&call.tool, &input, std::slice::from_ref(&root))?;
        let started = Instant::now();
        let verdict = session.gate_tool(tc);
        let elapsed = started.elapsed();
        if global.json {
            let mut v = output::verdict_json(&verdict);
            if let Value::Object(m) = &mut v {
                m.insert("tool".into(), Value::String(call.tool.clone()));
                m.insert("input".into(), call.input.clone());
                m.insert("elapsed_ms".into(), Value::from(output::millis(elapsed)));
            }
            results.push(v);
            continue;
        }
        let decision = verdict.effective_decision().as_str();
        println!(
            "{:<6} {} {}  {}",
            output::decision_word(decision),
            paint(&call.tool, output::BOLD, false),
            summarize(&call.input),
            paint(
                &format!("{:.1} ms", elapsed.as_secs_f64() * 1000.0),
                output::DIM,
                false
            )
        );
        if !call.note.is_empty() {
            println!("       {}", paint(&call.note, output::DIM, false));
        }
        if let Some(m) = verdict
            .agent_message
            .as_deref()
            .or(verdict.user_message.as_deref())
        {
            println!("       reason: {}", m.replace('\n', " "));
        }
        let ran: Vec<String> = verdict
            .runs
            .iter()
            .map(|r| {
                format!(
                    "{} {} ({} ms)",
                    r.event,
                    r.result.as_str(),
                    output::millis(r.duration)
                )
            })
            .collect();
        if !ran.is_empty() {
            println!(
                "       {}",
                paint(&format!("hooks: {}", ran.join(", ")), output::DIM, false)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&home);
    if global.json {
        println!("{}", serde_json::to_string_pretty(&Value::Array(results))?);
    } else {
        let log = root.join(".cursor/hooks/audit.log");
        if log.exists() {
            println!(
                "\nThe audit hook logged every shell command to {}",
                log.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn summarize(input: &Value) -> String {
    let text = input
        .get("command")
        .or_else(|| input.get("path"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| input.to_string());
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(59).collect::<String>())
    } else {
        text
    }
}
