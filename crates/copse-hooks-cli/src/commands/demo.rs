//! `copse-hooks demo`: the main job. Replays an example agent session
//! (`examples/workspace/session.jsonl`) through the example workspace's Cursor hooks —
//! the whole loop: session start, prompts, tool gates, tool results, edits, subagents,
//! stop — and shows each verdict with its reason, then the message queue.
//!
//! The example workspace is built into the binary and written to a temporary
//! directory, so the demo works from any directory and after `cargo install`, and
//! writes nothing anywhere else. Its runs are recorded in an audit store of its own
//! in that directory (never the user's): `copse-hooks ui --demo` replays the same
//! session into such a store and serves the page over it, so a fresh user sees a
//! populated page without mixing the example into their real store.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use copse_hooks::{Engine, EngineConfig, SessionIdentity};

use crate::args::Global;
use crate::commands::replay;
use crate::output::{self, paint};

/// One embedded file: its path in the workspace, its content, whether executable.
type Embedded = (&'static str, &'static str, bool);

macro_rules! example {
    ($path:literal, $exec:literal) => {
        (
            $path,
            include_str!(concat!("../../../../examples/workspace/", $path)),
            $exec,
        )
    };
}

/// The example workspace (`examples/workspace`), as built into the binary.
const EXAMPLE: &[Embedded] = &[
    example!(".cursor/hooks.json", false),
    example!(".cursor/hooks/.gitignore", false),
    example!(".cursor/hooks/lib.sh", false),
    example!(".cursor/hooks/ask-force-push.sh", true),
    example!(".cursor/hooks/audit.sh", true),
    example!(".cursor/hooks/block-dangerous.sh", true),
    example!(".cursor/hooks/deny-private-keys.sh", true),
    example!(".cursor/hooks/no-secrets-in-prompt.sh", true),
    example!(".cursor/hooks/protect-git-dir.sh", true),
    example!(".cursor/hooks/session-env.sh", true),
    example!(".cursor/hooks/stop-followup.sh", true),
    example!(".cursor/hooks/subagent-guard.sh", true),
    example!(".cursor/hooks/test-reminder.sh", true),
    example!("config/deploy_key.pem", false),
    example!("session.jsonl", false),
    example!("src/main.rs", false),
];

/// Writes the embedded example workspace under `dir`.
fn write_example(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    for (path, text, exec) in EXAMPLE {
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("failed to create {}", parent.display()))?;
        }
        std::fs::write(&target, text)
            .with_context(|| format!("failed to write {}", target.display()))?;
        if *exec {
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))
                .with_context(|| format!("failed to make {} executable", target.display()))?;
        }
    }
    Ok(())
}

/// The demo's temporary world: the example workspace, an empty home and a
/// `COPSE_DIR` of its own (settings and the audit store). Removed when dropped.
pub struct DemoWorld {
    /// Holds the directory; dropping it removes everything.
    _tmp: tempfile::TempDir,
    /// The example workspace (the built-in one, or `--example`).
    pub root: PathBuf,
    /// The demo's home: empty, so the user's own hooks take no part.
    pub home: PathBuf,
    /// The demo's `COPSE_DIR`: its settings and its audit store.
    pub copse_dir: PathBuf,
}

impl DemoWorld {
    /// The engine the demo replays the session through: the example workspace
    /// trusted, hooks on, every run recorded in the demo's own store.
    pub fn engine(&self) -> Engine {
        let mut config = EngineConfig::from_process(vec![self.root.clone()])
            .home(&self.home)
            .enabled(true)
            .trust(&self.root)
            .keep_runs()
            .spine(self.copse_dir.join("spine.db"));
        config.copse_dir = self.copse_dir.clone();
        Engine::new(config)
    }

    /// The example session file.
    pub fn session_file(&self) -> PathBuf {
        self.root.join("session.jsonl")
    }
}

/// Writes the example world into a fresh temporary directory. Everything lives
/// there: the example workspace (unless `example` names one), an empty home and an
/// empty `COPSE_DIR`, so neither the user's own hooks nor their settings take part.
pub fn prepare(example: Option<&Path>) -> Result<DemoWorld> {
    let tmp = tempfile::Builder::new()
        .prefix("copse-hooks-demo-")
        .tempdir()
        .context("failed to create a temporary directory for the demo")?;
    let root: PathBuf = match example {
        Some(dir) => std::fs::canonicalize(dir)
            .with_context(|| format!("example workspace {} not found", dir.display()))?,
        None => {
            let ws = tmp.path().join("workspace");
            write_example(&ws)?;
            std::fs::canonicalize(&ws).context("failed to resolve the demo workspace")?
        }
    };
    // Ctrl-C ends the process without dropping `tmp`: have it removed then too.
    crate::signals::remove_on_exit(tmp.path());
    let home = tmp.path().join("home");
    let copse_dir = tmp.path().join("copse");
    std::fs::create_dir_all(&home).context("failed to create the demo home")?;
    std::fs::create_dir_all(&copse_dir).context("failed to create the demo COPSE_DIR")?;
    Ok(DemoWorld {
        _tmp: tmp,
        root,
        home,
        copse_dir,
    })
}

/// Replays the example session through the demo world's engine, printing each
/// verdict (or a JSON line each), and records every run in the demo's store.
pub fn replay_session(world: &DemoWorld, shown: &str, json: bool) -> Result<()> {
    let engine = world.engine();
    let file = world.session_file();
    replay::validate(&file, std::slice::from_ref(&world.root))?;
    let session = engine.session(SessionIdentity::new("demo"));
    if !json {
        outln!(
            "{}\n",
            paint(
                &output::clean(&format!(
                    "Replaying {shown} through the example Cursor hooks (.cursor/hooks.json)"
                )),
                output::BOLD,
                false
            )
        );
    }
    let mut summary = replay::stream(&engine, &session, &file, json)?;
    // The demo trusts its own example workspace: "first run" notes are noise here.
    summary.notices.retain(|n| n.kind != "first_run");
    replay::finish(&summary, json)?;
    engine.flush_spine();
    Ok(())
}

pub fn run(global: &Global, example: Option<&Path>) -> Result<ExitCode> {
    let world = prepare(example)?;
    let shown = match example {
        Some(_) => world.session_file().display().to_string(),
        None => "the example session (examples/workspace/session.jsonl)".to_string(),
    };
    replay_session(&world, &shown, global.json)?;
    if !global.json {
        let log = world.root.join("audit.log");
        if let Ok(text) = std::fs::read_to_string(&log) {
            outln!(
                "\nThe audit hook logged {} shell command(s) and edit(s):",
                text.lines().count()
            );
            for line in text.lines() {
                let fields: Vec<&str> = line.splitn(3, '\t').collect();
                outln!("  {}", output::clean(fields.last().copied().unwrap_or("")));
            }
        }
        outln!("\nSee these runs on the web page: copse-hooks ui --demo");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_example_file_is_embedded() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/workspace");
        let mut on_disk = Vec::new();
        let mut stack = vec![std::path::PathBuf::from(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.file_name().is_some_and(|n| n != "audit.log") {
                    on_disk.push(p.strip_prefix(dir).unwrap().display().to_string());
                }
            }
        }
        on_disk.sort();
        let mut embedded: Vec<String> = super::EXAMPLE.iter().map(|e| e.0.to_string()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
    }
}
