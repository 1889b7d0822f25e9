//! Dispatch: parses the arguments (`args`) and runs the subcommand (`commands`).

use std::process::ExitCode;

use clap::Parser as _;

use crate::args::{self, AuditCommand, Cli, Command, DaemonCommand, GuardCommand, SandboxCommand};
use crate::commands;

/// Exit status for errors: usage (clap) and config errors alike, never 1 (a deny
/// under `gate --exit-code`).
const ERROR_EXIT: u8 = 2;

pub fn main() -> ExitCode {
    ignore_sigxfsz();
    // The shim runs once per agent hook call: its exact command line skips building
    // the whole command-line parser (most of this binary's start-up time).
    // Its signal handling is installed only if the call runs in-process (see
    // `commands::shim`).
    if let Some((agent, deadline)) = shim_fast_path() {
        return commands::shim::run(agent, deadline);
    }
    let cli = Cli::parse();
    // Signals end a run (hooks killed, audit store flushed) — except in a socket server,
    // which handles TERM/INT itself (cancel in-flight requests, remove the socket).
    #[cfg(unix)]
    if !matches!(
        cli.command,
        Command::Serve { socket: Some(_) }
            | Command::Daemon {
                command: DaemonCommand::Start
            }
    ) {
        crate::signals::install();
    }
    crate::output::init_color(cli.global.color);
    let result = match &cli.command {
        Command::Gate {
            tool,
            input,
            tool_use_id,
            exit_code,
            session,
            explain,
        } => commands::gate::run(
            &cli.global,
            &commands::gate::GateArgs {
                tool,
                input,
                exit_code: *exit_code,
                session: session.as_deref(),
                tool_use_id: tool_use_id.as_deref(),
                explain: *explain,
            },
        ),
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
            utc,
            follow,
        } => commands::log::log(
            &cli.global,
            &commands::log::LogArgs {
                event: event.clone(),
                decision: decision.map(|d| d.as_str().to_string()),
                dialect: dialect.map(|d| d.as_str().to_string()),
                failed: *failed,
                since: since.clone(),
                limit: *limit,
                utc: *utc,
                follow: *follow,
            },
        ),
        Command::Show { run_id, utc } => commands::log::show(&cli.global, run_id, *utc),
        Command::Audit {
            command: AuditCommand::Verify,
        } => commands::audit::verify(cli.global.json),
        Command::Audit {
            command: AuditCommand::Replay { guard, since },
        } => commands::guard::replay(&cli.global, guard, since.as_deref()),
        Command::Guard { command } => match command {
            None => commands::guard::show(&cli.global),
            Some(GuardCommand::Mode { mode }) => commands::guard::mode(&cli.global, mode),
            Some(GuardCommand::Check { tool, input }) => {
                commands::guard::check(&cli.global, tool, input)
            }
            Some(GuardCommand::List) => commands::guard::list(&cli.global),
        },
        Command::Sandbox {
            command: SandboxCommand::Check,
        } => commands::sandbox::check(&cli.global),
        Command::Enable => commands::settings::enable(&cli.global, true),
        Command::Disable => commands::settings::enable(&cli.global, false),
        Command::Trust { dir, diff: false } => {
            commands::settings::trust(&cli.global, dir.as_deref())
        }
        Command::Trust { dir, diff: true } => {
            commands::settings::trust_diff(&cli.global, dir.as_deref())
        }
        Command::Init { dialect, dir } => {
            commands::init::run(&cli.global, *dialect, dir.as_deref())
        }
        Command::Watch { dir } => commands::watch::run(&cli.global, dir.as_deref()),
        Command::Untrust { dir } => commands::settings::untrust(&cli.global, dir.as_deref()),
        Command::Replay { file, explain } => commands::replay::run(&cli.global, file, *explain),
        Command::Ui {
            port,
            no_open,
            demo,
        } => commands::ui::run(&cli.global, *port, *no_open, *demo),
        Command::Shim { agent, deadline } => match copse_hooks::agent::Agent::parse(agent) {
            Some(a) => Ok(commands::shim::run(a, *deadline)),
            None => Err(anyhow::anyhow!(
                "unknown agent {agent:?} (expected claude, gemini, codex, cursor or copilot)"
            )),
        },
        Command::Install {
            agent,
            project,
            adopt,
        } => commands::install::install(&cli.global, agent, *project, *adopt),
        Command::Uninstall { agent, project } => {
            commands::install::uninstall(&cli.global, agent, *project)
        }
        Command::Serve { socket } => commands::serve::serve(&cli.global, socket.as_deref()),
        Command::Daemon { command } => match command {
            DaemonCommand::Start => commands::serve::daemon_start(&cli.global),
            DaemonCommand::Stop => commands::serve::daemon_stop(&cli.global),
            DaemonCommand::Status => commands::serve::daemon_status(&cli.global),
        },
        Command::Doctor => commands::doctor::run(&cli.global),
        Command::Demo { example } => commands::demo::run(&cli.global, example.as_deref()),
        Command::Completions { shell } => commands::completions::completions(*shell),
        Command::Man { command, out_dir } => {
            commands::completions::man(command, out_dir.as_deref())
        }
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) || crate::output::stdout_closed() {
                return ExitCode::SUCCESS;
            }
            errln!(
                "{}: {}",
                crate::output::paint("error", crate::output::RED, true),
                crate::output::clean(&format!("{err:#}"))
            );
            ExitCode::from(ERROR_EXIT)
        }
    }
}

/// `ulimit -f` must not kill the gate before it prints its verdict: with SIGXFSZ
/// ignored, an oversized write fails with EFBIG instead (reported, not fatal).
/// `copse-hooks shim --agent NAME` (or `--agent=NAME`) with a known agent and nothing
/// else, or `--agent NAME --deadline SECONDS` (what `install` writes); anything else
/// goes through the full parser (and its errors).
fn shim_fast_path() -> Option<(copse_hooks::agent::Agent, Option<std::time::Duration>)> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).take(6).collect();
    let args: Vec<&str> = args.iter().map(|a| a.to_str()).collect::<Option<_>>()?;
    // What `install` writes; anything else (or a bad deadline) takes the full parser,
    // which explains the mistake.
    let (name, deadline) = match args.as_slice() {
        ["shim", "--agent", name] => (*name, None),
        ["shim", flag] => (flag.strip_prefix("--agent=")?, None),
        ["shim", "--agent", name, "--deadline", secs] => (*name, Some(*secs)),
        _ => return None,
    };
    let deadline = match deadline {
        Some(secs) => Some(args::parse_deadline(secs).ok()?),
        None => None,
    };
    Some((copse_hooks::agent::Agent::parse(name)?, deadline))
}

fn ignore_sigxfsz() {
    // SAFETY: sets a signal's disposition to SIG_IGN at start-up, before any thread
    // exists; no handler code runs.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
