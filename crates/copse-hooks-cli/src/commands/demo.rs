//! `copse-hooks demo`: the main job. Replays an example agent session
//! (`examples/workspace/session.jsonl`) through the example workspace's Cursor hooks —
//! the whole loop: session start, prompts, tool gates, tool results, edits, subagents,
//! stop — and shows each verdict with its reason, then the message queue.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use copse_hooks::{Engine, EngineConfig, SessionIdentity};

use crate::cli::Global;
use crate::commands::replay;
use crate::output::{self, paint};

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
    // Self-contained: the example workspace is trusted and hooks are on for this
    // invocation only, and an empty home keeps the user's own hooks out of it.
    let home = tempdir_for_demo()?;
    let engine = Engine::new(
        EngineConfig::from_process(vec![root.clone()])
            .home(&home)
            .enabled(true)
            .trust(&root)
            .keep_runs(),
    );
    let file = root.join("session.jsonl");
    let lines = replay::parse(&file, std::slice::from_ref(&root))?;
    let session = engine.session(SessionIdentity::new("demo"));
    if !global.json {
        println!(
            "{}\n",
            paint(
                &format!(
                    "Replaying {} through {}",
                    file.display(),
                    root.join(".cursor/hooks.json").display()
                ),
                output::BOLD,
                false
            )
        );
    }
    let (per_line, summary) = replay::drive(&session, &lines);
    let _ = std::fs::remove_dir_all(&home);
    if global.json {
        for v in &per_line {
            println!("{}", serde_json::to_string(v)?);
        }
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        replay::print_transcript(&lines, &per_line, &summary);
        let log = root.join(".cursor/hooks/audit.log");
        if log.exists() {
            println!(
                "The audit hook logged shell commands and edits to {}",
                log.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn tempdir_for_demo() -> Result<PathBuf> {
    let home = std::env::temp_dir().join(format!("copse-hooks-demo-home-{}", std::process::id()));
    std::fs::create_dir_all(&home)
        .with_context(|| format!("failed to create {}", home.display()))?;
    Ok(home)
}
