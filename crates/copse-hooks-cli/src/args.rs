//! The command line: the clap types of every subcommand and option, and their value
//! parsers. `cli` dispatches on them; the commands take the parts they need (`Global`,
//! their own value types) from here, never from `cli`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, CommandFactory as _, Parser, Subcommand, ValueEnum};
use copse_hooks::agent;

use crate::output::ColorWhen;

const AFTER_HELP: &str = "\
Examples:
  copse-hooks demo                                   gate an example session through example hooks
  copse-hooks --workspace examples/workspace --enable --trust \\
      gate run_shell --input '{\"command\": \"rm -rf /\"}'
  echo '{\"path\": \"a.txt\"}' | copse-hooks --enable gate read_file --input -
  copse-hooks list                                   every hook, and why it would not run
  copse-hooks lint .cursor/hooks.json                check a config (any dialect)
  copse-hooks log --failed --since 1d                what failed today
  copse-hooks show last                              the latest run in detail

Hooks are off until `copse-hooks enable`; project hooks run only in trusted workspaces
(`copse-hooks trust DIR`). Settings live in $COPSE_DIR/settings.json (default ~/.copse).
Docs: docs/why-didnt-my-hook-run.md, docs/cli.md, docs/settings.md.";

/// Run, inspect and test agent hooks (Cursor, Claude Code, Copse).
#[derive(Debug, Parser)]
#[command(
    name = "copse-hooks",
    version,
    about,
    long_about = "Run, inspect and test agent hooks: the scripts Cursor, Claude Code and Copse \
spawn at points in an agent's loop. copse-hooks honours them as their vendors define them, \
in a sandbox, and explains every verdict.",
    after_long_help = AFTER_HELP
)]
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
    /// When to colour output (`auto` honours NO_COLOR and terminals).
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,
}

/// `log --decision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DecisionFilter {
    Allow,
    Ask,
    Deny,
    /// The hook abstained.
    None,
    /// The run failed.
    Failed,
}

impl DecisionFilter {
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionFilter::Allow => "allow",
            DecisionFilter::Ask => "ask",
            DecisionFilter::Deny => "deny",
            DecisionFilter::None => "none",
            DecisionFilter::Failed => "failed",
        }
    }
}

/// `log --dialect`: one variant per dialect (add a line here with a new dialect).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DialectFilter {
    Cursor,
    Claude,
    Copse,
    Gemini,
    Codex,
}

impl DialectFilter {
    pub fn as_str(self) -> &'static str {
        match self {
            DialectFilter::Cursor => "cursor",
            DialectFilter::Claude => "claude",
            DialectFilter::Copse => "copse",
            DialectFilter::Gemini => "gemini",
            DialectFilter::Codex => "codex",
        }
    }
}

/// `init --dialect`: the config format of the first hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InitDialect {
    /// `.cursor/hooks.json`.
    Cursor,
    /// `.claude/settings.json`.
    Claude,
    /// `.gemini/settings.json`.
    Gemini,
    /// `.codex/hooks.json`.
    Codex,
    /// `.github/hooks/guard.json` (GitHub Copilot CLI).
    Copilot,
    /// `.copse/hooks.json`.
    Copse,
}

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Report what this machine enforces (Landlock ABI, filesystem and network rules,
    /// block detection) and run a self-test.
    Check,
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check every recorded run against the chain: exit 0 when intact, 1 naming the
    /// first run edited, removed, reordered or added, 2 when the store cannot be read.
    Verify,
    /// Re-evaluate every recorded tool call under a proposed guard policy and list the
    /// calls whose verdict would change.
    Replay {
        /// The proposed policy (a guard.toml, read as the user's policy).
        #[arg(long, value_name = "FILE")]
        guard: PathBuf,
        /// Only calls since: unix ms, an age (30m, 2h, 7d), a local date or time.
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum GuardCommand {
    /// Set the guard's mode: enforce (refuse and ask), observe (record what it would
    /// do, allow), off.
    Mode {
        #[arg(value_parser = ["enforce", "observe", "off"])]
        mode: String,
    },
    /// Evaluate the guard alone for one tool call.
    Check {
        /// The canonical tool (run_shell, read_file, write_file, str_replace,
        /// delete_file, mcp__server__tool).
        #[arg(long)]
        tool: String,
        /// The tool input as JSON, `-` for stdin or @FILE.
        #[arg(long, value_name = "JSON|-|@FILE")]
        input: String,
    },
    /// Print every rule in force.
    List,
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
    #[command(after_long_help = "\
Examples:
  copse-hooks --enable gate run_shell --input '{\"command\": \"git push --force\"}'
  copse-hooks --enable gate read_file --input @call.json
  echo '{\"command\": \"ls\"}' | copse-hooks --enable gate Bash --input - --exit-code

With --exit-code: allow 0, deny 1, ask 3; usage and config errors exit 2.
Vendor tool names (Bash, Read, Write, Edit, Grep, Shell, run_shell_command, …) are
accepted as aliases of canonical tools, with a note.")]
    Gate {
        /// The canonical tool id: `run_shell`, `read_file`, `write_file`, `mcp__<server>__<tool>`, …
        tool: String,
        /// The tool input: a JSON object, `-` to read it from stdin, or `@FILE`.
        #[arg(long, value_name = "JSON|-|@FILE")]
        input: String,
        /// The host's id for this tool call (hooks see it as `tool_use_id`); one is
        /// generated when absent.
        #[arg(long, value_name = "ID")]
        tool_use_id: Option<String>,
        /// Exit with the decision: allow 0, deny 1, ask 3 (errors stay 2).
        #[arg(long)]
        exit_code: bool,
        /// The conversation this call belongs to: an id (gates with the same id are one
        /// session, recorded together; the first-run note shows once per session), or the
        /// session as the host knows it, as JSON like a replay `session` line:
        /// {conversation_id, generation_id, model, transcript_path, permission_mode,
        /// host_version, user_email, …}.
        #[arg(long, value_name = "ID|JSON")]
        session: Option<String>,
        /// Also list every configured hook for the event with its verdict, or why it
        /// did not run (not trusted, disabled, matcher, `if`, wrong event, ...).
        #[arg(long)]
        explain: bool,
    },
    /// Show every discovered hook (the Sources panel) and every config warning.
    List {
        /// Read the workspace's project configs without trusting them and show what
        /// trusting would allow to run.
        #[arg(long)]
        untrusted_preview: bool,
    },
    /// Run one declared hook for real with a synthesised payload (nothing recorded).
    Test {
        /// The config file that declares the hook.
        source: PathBuf,
        /// The event as written in that file, e.g. beforeShellExecution.
        event: String,
        /// Which entry of that event (1-based).
        #[arg(long, default_value_t = 1)]
        entry: usize,
        /// Merge this JSON over the synthesised payload (a JSON merge patch: objects
        /// merge key by key, `null` removes a key, anything else replaces).
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
        /// Only this outcome.
        #[arg(long, value_enum)]
        decision: Option<DecisionFilter>,
        /// Only this dialect.
        #[arg(long, value_enum)]
        dialect: Option<DialectFilter>,
        /// Only runs that failed.
        #[arg(long)]
        failed: bool,
        /// Only runs since: unix ms, an age (30m, 2h, 7d), a local date or time
        /// (2026-12-01, 2026-12-01T08:30) or an RFC 3339 instant (2026-12-01T08:30Z).
        #[arg(long)]
        since: Option<String>,
        /// At most this many runs.
        #[arg(
            short = 'n',
            long = "limit",
            visible_alias = "max-count",
            default_value_t = 50
        )]
        limit: usize,
        /// Print times in UTC instead of local time.
        #[arg(long)]
        utc: bool,
        /// Keep running and print each new run as it is recorded (Ctrl-C to stop).
        #[arg(short = 'f', long)]
        follow: bool,
    },
    /// Show one recorded run in detail.
    Show {
        /// The run id: its short id (from `log`), the full id, a unique prefix of
        /// either, or `last`.
        run_id: String,
        /// Print times in UTC instead of local time.
        #[arg(long)]
        utc: bool,
    },
    /// The audit store's tamper-evident hash chain.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// The built-in guard: its mode, packs, rule counts and policy files.
    Guard {
        #[command(subcommand)]
        command: Option<GuardCommand>,
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
    /// Trust a workspace (default: the --workspace root, else the current directory),
    /// pinning its hook configs.
    Trust {
        /// The workspace root.
        dir: Option<PathBuf>,
        /// Trust nothing: show what changed in each pinned file since it was trusted
        /// (a unified diff against the pinned content).
        #[arg(long)]
        diff: bool,
    },
    /// Write a working, commented first hook for the workspace (config and script)
    /// and print the next steps. Never overwrites a file.
    Init {
        /// The config format to write (default: copse).
        #[arg(long, value_enum, default_value_t = InitDialect::Copse)]
        dialect: InitDialect,
        /// The workspace root (default: the --workspace root, else the current directory).
        dir: Option<PathBuf>,
    },
    /// A terminal session for hook authors: shows each hook run live and, when a pinned
    /// config or script changes, its diff and a one-key prompt to trust it again.
    Watch {
        /// The workspace root (default: the --workspace root, else the current directory).
        dir: Option<PathBuf>,
    },
    /// Stop trusting a workspace (default: the --workspace root, else the current
    /// directory).
    Untrust {
        /// The workspace root.
        dir: Option<PathBuf>,
    },
    /// Drive a whole session from a JSONL file of canonical events.
    Replay {
        /// One canonical event per line: {"event": NAME, ...fields}.
        file: PathBuf,
        /// After each event, list every configured hook for it with its verdict, or
        /// why it did not run.
        #[arg(long)]
        explain: bool,
    },
    /// Serve the local web page (sources, sessions, runs, charts, tester, trust) on 127.0.0.1.
    Ui {
        /// The port (default: a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Print the address without opening a browser.
        #[arg(long)]
        no_open: bool,
        /// Serve an example instead: the demo session recorded into a temporary
        /// store (your own store and settings are not touched).
        #[arg(long)]
        demo: bool,
    },
    /// The hook command an agent runs: reads its payload on stdin, answers in its format.
    Shim {
        /// The calling agent: claude, gemini, codex, cursor or copilot.
        #[arg(long, value_name = "NAME")]
        agent: String,
        /// Answer the agent's block (nothing on an observation) when the call is not
        /// answered within SECONDS, whatever is slow; set it below the agent's timeout.
        #[arg(long, value_name = "SECONDS", allow_hyphen_values = true,
            value_parser = parse_deadline)]
        deadline: Option<std::time::Duration>,
    },
    /// Register the shim in an agent's own config (one entry per served event).
    Install {
        /// The agent: claude, gemini, codex, cursor or copilot.
        #[arg(long, value_name = "NAME")]
        agent: String,
        /// The workspace's config instead of the user's.
        #[arg(long)]
        project: bool,
        /// Move the agent's existing hooks into copse-hooks' care (user scope).
        #[arg(long)]
        adopt: bool,
    },
    /// Remove exactly what `install` added (and put adopted hooks back).
    Uninstall {
        /// The agent: claude, gemini, codex, cursor or copilot.
        #[arg(long, value_name = "NAME")]
        agent: String,
        /// The workspace's config instead of the user's.
        #[arg(long)]
        project: bool,
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
    ///
    /// The example workspace is built into the binary and written to a temporary
    /// directory, so this works from anywhere, installed or not.
    Demo {
        /// Use this example workspace instead of the built-in one.
        #[arg(long, value_name = "DIR")]
        example: Option<PathBuf>,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout, or write every page with --out-dir.
    Man {
        /// A subcommand's page instead of the main one (`gate`, `daemon start`, …).
        command: Vec<String>,
        /// Write every page (copse-hooks.1, copse-hooks-gate.1, …) into DIR instead,
        /// e.g. ~/.cargo/share/man/man1, which `man` searches when ~/.cargo/bin is on PATH.
        #[arg(long, value_name = "DIR", conflicts_with = "command")]
        out_dir: Option<PathBuf>,
    },
}

/// The clap command (for completions and the man page).
pub fn command() -> clap::Command {
    Cli::command()
}

/// Parses `--deadline SECONDS` ([`agent::parse_deadline`]).
pub fn parse_deadline(text: &str) -> Result<Duration, String> {
    agent::parse_deadline(text)
}
