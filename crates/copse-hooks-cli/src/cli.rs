//! Argument parsing and dispatch.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::commands;

/// Run, inspect and test agent hooks (Cursor, Claude Code, Copse).
#[derive(Debug, Parser)]
#[command(name = "copse-hooks", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options accepted before or after the subcommand.
#[derive(Debug, Clone, Args)]
pub struct Global {
    /// A workspace root (repeatable; default: the current directory).
    #[arg(long = "workspace", global = true, value_name = "DIR")]
    pub workspaces: Vec<PathBuf>,
    /// Trust the workspace roots for this invocation (their project hooks may run).
    #[arg(long, global = true)]
    pub trust: bool,
    /// Turn external hooks on for this invocation.
    #[arg(long, global = true)]
    pub enable: bool,
    /// Print machine-readable JSON.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Report what this machine enforces (Landlock ABI, filesystem and network rules,
    /// block detection) and run a self-test.
    Check,
}

#[derive(Debug, Subcommand)]
pub enum DaemonCommand {
    /// Start the per-user daemon at $COPSE_DIR/daemon.sock (detached; logs to
    /// $COPSE_DIR/daemon.log). Does nothing when one is running.
    Start,
    /// Stop the daemon (its in-flight hooks are killed, the audit store flushed).
    Stop,
    /// Say whether the daemon runs (exit 0) or not (exit 3).
    Status,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the tool gate for one tool call and print the verdict.
    Gate {
        /// The canonical tool id: run_shell, read_file, write_file, mcp__<server>__<tool>, …
        tool: String,
        /// The tool input as a JSON object.
        #[arg(long, value_name = "JSON")]
        input: String,
    },
    /// Show every discovered hook (the Sources panel) and every config warning.
    List {
        /// Read the workspace's project configs without trusting them and show what
        /// trusting would allow to run.
        #[arg(long)]
        untrusted_preview: bool,
    },
    /// Dry-run one declared hook with a synthesised payload (no side effects).
    Test {
        /// The config file that declares the hook.
        source: PathBuf,
        /// The event as written in that file, e.g. beforeShellExecution.
        event: String,
        /// Which entry of that event (1-based).
        #[arg(long, default_value_t = 1)]
        entry: usize,
        /// Send this JSON as stdin instead of the synthesised payload.
        #[arg(long, value_name = "JSON")]
        payload: Option<String>,
    },
    /// Validate hook config files of any dialect (default: every config discovery reads).
    Lint {
        /// Config files to check.
        paths: Vec<PathBuf>,
        /// Exit 1 on warnings too.
        #[arg(long)]
        deny_warnings: bool,
    },
    /// List recorded hook runs (newest first).
    Log {
        /// Only this event (wire name like beforeShellExecution, or canonical like toolGate).
        #[arg(long)]
        event: Option<String>,
        /// Only this outcome: allow, ask, deny, none or failed.
        #[arg(long)]
        decision: Option<String>,
        /// Only this dialect: cursor, claude or copse.
        #[arg(long)]
        dialect: Option<String>,
        /// Only runs that failed.
        #[arg(long)]
        failed: bool,
        /// Only runs since: unix ms, an age (30m, 2h, 7d) or a UTC date (2026-12-01T08:30).
        #[arg(long)]
        since: Option<String>,
        /// At most this many runs.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Show one recorded run in detail.
    Show {
        /// The run id (from `log`).
        run_id: String,
    },
    /// The OS sandbox hooks run in.
    Sandbox {
        #[command(subcommand)]
        command: SandboxCommand,
    },
    /// Turn external hooks on (settings).
    Enable,
    /// Turn external hooks off (settings).
    Disable,
    /// Trust a workspace (default: the current directory), pinning its hook configs.
    Trust {
        /// The workspace root.
        dir: Option<PathBuf>,
    },
    /// Stop trusting a workspace (default: the current directory).
    Untrust {
        /// The workspace root.
        dir: Option<PathBuf>,
    },
    /// Drive a whole session from a JSONL file of canonical events.
    Replay {
        /// One canonical event per line: {"event": NAME, ...fields}.
        file: PathBuf,
    },
    /// Serve the engine over JSON-RPC 2.0, one message per line, on stdin/stdout (or a
    /// Unix socket). See docs/host-api.md.
    Serve {
        /// Listen on this Unix socket instead of stdio.
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
    },
    /// Manage the per-user daemon (`serve` on $COPSE_DIR/daemon.sock).
    Daemon {
        #[command(subcommand)]
        command: DaemonCommand,
    },
    /// Explain why hooks do or don't run: enablement, trust, config files, settings,
    /// sandbox, audit store and each hook's most recent failure.
    Doctor,
    /// Gate a handful of realistic tool calls through the example hooks.
    Demo {
        /// The example workspace (default: examples/workspace).
        #[arg(long, value_name = "DIR")]
        example: Option<PathBuf>,
    },
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Gate { tool, input } => commands::gate::run(&cli.global, tool, input),
        Command::List { untrusted_preview } => commands::list::run(&cli.global, *untrusted_preview),
        Command::Test {
            source,
            event,
            entry,
            payload,
        } => commands::test::run(&cli.global, source, event, *entry, payload.as_deref()),
        Command::Lint {
            paths,
            deny_warnings,
        } => commands::lint::run(&cli.global, paths, *deny_warnings),
        Command::Log {
            event,
            decision,
            dialect,
            failed,
            since,
            limit,
        } => commands::log::log(
            &cli.global,
            &commands::log::LogArgs {
                event: event.clone(),
                decision: decision.clone(),
                dialect: dialect.clone(),
                failed: *failed,
                since: since.clone(),
                limit: *limit,
            },
        ),
        Command::Show { run_id } => commands::log::show(&cli.global, run_id),
        Command::Sandbox {
            command: SandboxCommand::Check,
        } => commands::sandbox::check(&cli.global),
        Command::Enable => commands::settings::enable(&cli.global, true),
        Command::Disable => commands::settings::enable(&cli.global, false),
        Command::Trust { dir } => commands::settings::trust(&cli.global, dir.as_deref()),
        Command::Untrust { dir } => commands::settings::untrust(&cli.global, dir.as_deref()),
        Command::Replay { file } => commands::replay::run(&cli.global, file),
        Command::Serve { socket } => commands::serve::serve(&cli.global, socket.as_deref()),
        Command::Daemon { command } => match command {
            DaemonCommand::Start => commands::serve::daemon_start(&cli.global),
            DaemonCommand::Stop => commands::serve::daemon_stop(&cli.global),
            DaemonCommand::Status => commands::serve::daemon_status(&cli.global),
        },
        Command::Doctor => commands::doctor::run(&cli.global),
        Command::Demo { example } => commands::demo::run(&cli.global, example.as_deref()),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!(
                "{}: {err:#}",
                crate::output::paint("error", crate::output::RED, true)
            );
            ExitCode::from(1)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
