//! `completions` and `man`: the shell completion scripts and the man pages, both
//! generated from the clap definitions in `cli.rs`, so a new subcommand or option is
//! completed and documented without a line here.
//!
//! Two things the generators get wrong for this binary are put right here:
//! - clap_complete's bash script names each subcommand's `case` arm after the binary
//!   name with its `-` replaced twice over (`copse__subcmd__hooks__subcmd__gate`),
//!   while the word loop that picks the arm writes `copse__hooks__subcmd__gate`. No
//!   arm ever matched, so `copse-hooks gate --<TAB>` offered nothing. [`script`]
//!   renames the arms to what the loop writes (a no-op once clap_complete agrees).
//! - clap_mangen's page for a command lists its subcommands as `copse-hooks-gate(1)`,
//!   so `man` writes one page per subcommand (`--out-dir`) and prints any of them,
//!   and leaves out clap's `help` subcommand, which has no page.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use crate::args;

/// The binary's name as shells and `man` know it.
const BIN: &str = "copse-hooks";

/// `copse-hooks completions SHELL`.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    out!("{}", script(shell));
    Ok(ExitCode::SUCCESS)
}

/// The completion script for `shell`.
pub fn script(shell: clap_complete::Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut args::command(), BIN, &mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    match shell {
        clap_complete::Shell::Bash => fix_bash_arms(&text),
        _ => text,
    }
}

/// Renames the bash script's per-subcommand `case` arms to the names its word loop
/// assigns to `cmd` (see the module docs).
fn fix_bash_arms(text: &str) -> String {
    let loop_name = BIN.replace('-', "__");
    let arm_name = BIN.replace('-', "__subcmd__");
    text.replace(&arm_name, &loop_name)
}

/// The command tree the pages describe: clap's `help` subcommand left out (it has no
/// page of its own), names and display names (`copse-hooks-gate`) built.
fn man_command() -> clap::Command {
    let mut cmd = args::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// `copse-hooks man [SUBCOMMAND…] [--out-dir DIR]`: one page on stdout, or every page
/// written into DIR.
pub fn man(path: &[String], out_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let root = man_command();
    if let Some(dir) = out_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let mut written = Vec::new();
        write_pages(&root, dir, &mut written)?;
        out!(
            "wrote {} man pages to {} (man {BIN}, man {BIN}-gate, …)",
            written.len(),
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut cmd = &root;
    for (depth, name) in path.iter().enumerate() {
        cmd = cmd.find_subcommand(name).ok_or_else(|| {
            let parent = std::iter::once(BIN)
                .chain(path[..depth].iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            let known: Vec<&str> = cmd
                .get_subcommands()
                .filter(|s| !s.is_hide_set())
                .map(clap::Command::get_name)
                .collect();
            anyhow::anyhow!(
                "`{parent}` has no subcommand {name:?} (it has: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )
        })?;
    }
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut page)?;
    out!("{}", String::from_utf8_lossy(&page));
    Ok(ExitCode::SUCCESS)
}

/// Writes `cmd`'s page and its visible subcommands' pages into `dir`.
fn write_pages(
    cmd: &clap::Command,
    dir: &Path,
    written: &mut Vec<std::path::PathBuf>,
) -> anyhow::Result<()> {
    let man = clap_mangen::Man::new(cmd.clone());
    let file = dir.join(man.get_filename());
    let mut page = Vec::new();
    man.render(&mut page)?;
    std::fs::write(&file, page).with_context(|| format!("cannot write {}", file.display()))?;
    written.push(file);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir, written)?;
    }
    Ok(())
}
