//! `copse-hooks lint [PATH...]`: validate hook configs of any dialect.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use copse_hooks::Level;

use crate::args::Global;
use crate::output::{self, paint};
use crate::workspace;

pub fn run(global: &Global, paths: &[PathBuf], deny_warnings: bool) -> Result<ExitCode> {
    let inv = workspace::engine(global)?;
    let report = inv.engine.lint(paths);
    let errors = report.count(Level::Error);
    let warnings = report.count(Level::Warning);
    if global.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&copse_hooks_wire::output::LintOutput::from(&report))?
        );
    } else {
        for p in &report.problems {
            let at = match (p.line, p.column) {
                (Some(l), Some(c)) => format!("{}:{l}:{c}", output::path(&p.file)),
                (Some(l), None) => format!("{}:{l}", output::path(&p.file)),
                _ => output::path(&p.file),
            };
            let level = match p.level {
                Level::Error => paint("error", output::RED, false),
                Level::Warning => paint("warning", output::YELLOW, false),
            };
            outln!("{at}: {level}: {}", output::clean(&p.message));
        }
        let files = report.files.len();
        if report.problems.is_empty() {
            outln!(
                "{} ({files} config file{} checked)",
                paint("no problems", output::GREEN, false),
                if files == 1 { "" } else { "s" }
            );
        } else {
            outln!("{errors} error(s), {warnings} warning(s) in {files} config file(s)");
        }
    }
    let failed = errors > 0 || (deny_warnings && warnings > 0);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
