//! The walk of one tool call, for `tools/walk/walk.py`: the default gate path (hooks on,
//! the sandbox on, the audit store on) with one matching Cursor user hook, warmed up,
//! then exactly one `Session::gate_tool` between two marker functions a debugger breaks
//! on (`walk_begin`, `walk_end`). Everything it reads or writes is in a temp dir.
//!
//! ```text
//! cargo run -p copse-hooks --example walk
//! ```
//!
//! Run on its own it prints what the measured gate decided; the measuring is done by
//! `tools/walk/walk.py`, which runs it under gdb.

use std::error::Error;
use std::hint::black_box;

use copse_hooks::{Engine, EngineConfig, SessionIdentity, ToolCall, Verdict};
use serde_json::json;

/// Gates before the measured one: configs parsed and cached, the sandbox probed, the
/// audit store opened, the config watch set up (it subscribes on the third load), so
/// the measured call walks the steady path a long-lived host takes.
const WARM_UPS: usize = 5;

fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let root = std::fs::canonicalize(dir.path())?;
    let home = root.join("home");
    let ws = root.join("ws");
    let copse = root.join("copse");
    for d in [&home, &ws, &copse] {
        std::fs::create_dir_all(d)?;
    }
    std::fs::create_dir_all(home.join(".cursor"))?;
    std::fs::write(
        home.join(".cursor/hooks.json"),
        json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": "true", "matcher": "git"}
        ]}})
        .to_string(),
    )?;

    let engine = Engine::new(
        EngineConfig::builder()
            .workspace_root(&ws)
            .home(&home)
            .copse_dir(&copse)
            .enabled(true)
            .sandbox(true)
            .spine(root.join("spine.db"))
            // Every vendor location inside the temp dir: nothing the machine has
            // configured reaches the walk.
            .gemini_system_settings(root.join("etc/gemini-cli/settings.json"))
            .codex_home(root.join("codex-home"))
            .codex_system_dir(root.join("etc/codex"))
            .build(),
    );
    let session = engine.session(SessionIdentity::new("walk"));

    for _ in 0..WARM_UPS {
        check(&session.gate_tool(call()), "warm-up")?;
    }

    let measured = call();
    walk_begin(0);
    let verdict = session.gate_tool(black_box(measured));
    walk_end(&verdict);

    check(&verdict, "measured")?;
    for run in &verdict.runs {
        eprintln!(
            "walk: measured gate: {:?}; hook `{}` exit {:?}, sandbox {:?}",
            verdict.effective_decision(),
            run.command,
            run.exit_code,
            run.sandbox,
        );
    }
    Ok(())
}

/// The call every gate makes: a shell command the hook's matcher matches.
fn call() -> ToolCall {
    ToolCall::new("run_shell", json!({"command": "git status"}))
}

/// The gate ran the one hook: otherwise the walk would measure something else.
fn check(verdict: &Verdict, which: &str) -> Result<(), Box<dyn Error>> {
    if verdict.runs.len() == 1 {
        Ok(())
    } else {
        Err(format!("the {which} gate ran {} hooks, not 1", verdict.runs.len()).into())
    }
}

/// Where the measured walk starts: the debugger breaks here.
#[inline(never)]
fn walk_begin(n: u32) {
    black_box(n);
}

/// Where the measured walk ends: the debugger stops logging here.
#[inline(never)]
fn walk_end(verdict: &Verdict) {
    black_box(verdict);
}
