//! `copse-hooks list`: every discovered hook and every config warning.

use std::process::ExitCode;

use anyhow::Result;
use copse_hooks::{HookSummary, Listing};

use crate::cli::Global;
use crate::output::{self, paint};
use crate::workspace;

pub fn run(global: &Global) -> Result<ExitCode> {
    let inv = workspace::engine(global)?;
    workspace::warn_settings(&inv);
    let listing = inv.engine.list();
    if global.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&output::listing_json(&listing))?
        );
    } else {
        print_human(&listing, inv.engine.config().hooks_enabled);
    }
    Ok(ExitCode::SUCCESS)
}

/// Why a hook would not run now, or "active".
pub fn status(h: &HookSummary) -> String {
    let mut why = Vec::new();
    if !h.enabled {
        why.push("hooks off");
    }
    if !h.trusted {
        why.push("workspace not trusted");
    }
    if !h.supported {
        why.push("recognised, unsupported");
    }
    if h.matcher_error.is_some() {
        why.push("invalid matcher");
    }
    if why.is_empty() {
        paint("active", output::GREEN, false)
    } else {
        paint(
            &format!("inactive: {}", why.join(", ")),
            output::YELLOW,
            false,
        )
    }
}

fn print_human(l: &Listing, enabled: bool) {
    if !enabled {
        println!(
            "{}",
            paint(
                "External hooks are off: nothing below runs (turn on with --enable, or cursorHooksEnabled in settings).",
                output::YELLOW,
                false
            )
        );
    }
    if l.hooks.is_empty() {
        println!("No hooks declared.");
    }
    let mut current: Option<&std::path::Path> = None;
    for h in &l.hooks {
        if current != Some(h.source.as_path()) {
            current = Some(h.source.as_path());
            println!(
                "{} {}",
                paint(&workspace::display_path(&h.source), output::BOLD, false),
                paint(
                    &format!("({} {})", h.dialect.as_str(), h.scope.as_str()),
                    output::DIM,
                    false
                )
            );
        }
        let matcher = h
            .matcher
            .as_deref()
            .map(|m| format!(" matcher {m:?}"))
            .unwrap_or_default();
        println!("  {}[{}]{matcher}  {}", h.event, h.entry, h.command);
        let policy = if h.fail_closed {
            "fails closed"
        } else {
            "fails open"
        };
        println!(
            "      {} {}",
            status(h),
            paint(
                &format!("· {policy} · timeout {}", seconds(h.timeout_ms)),
                output::DIM,
                false
            )
        );
    }
    if !l.warnings.is_empty() {
        println!();
        println!("{}", paint("Warnings:", output::BOLD, false));
        for w in &l.warnings {
            println!(
                "  {}: {}: {}",
                workspace::display_path(&w.source),
                paint("warning", output::YELLOW, false),
                w.message
            );
        }
    }
}

fn seconds(ms: u64) -> String {
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{}s", ms as f64 / 1000.0)
    }
}
