//! `copse-hooks doctor`: why hooks do or don't run, on one screen.

use std::process::ExitCode;

use anyhow::{Context as _, Result};
use copse_hooks_wire::output::DoctorOutput;

use crate::cli::Global;
use crate::host::{self, Origin};
use crate::output::{self, paint};

pub fn run(global: &Global) -> Result<ExitCode> {
    let roots = if global.workspaces.is_empty() {
        vec![std::env::current_dir().context("failed to read the current directory")?]
    } else {
        global.workspaces.clone()
    };
    let hosted = host::hosted(
        roots,
        global.trust.then_some(true),
        global.enable.then_some(true),
        Origin::Flag,
    )?;
    let report = copse_hooks_server::doctor::report(&hosted);
    if global.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_human(&report);
    }
    Ok(ExitCode::SUCCESS)
}

/// Escapes control characters so nothing from a config or a hook can drive the
/// terminal.
fn esc(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

fn heading(text: &str) {
    println!("{}", paint(text, output::BOLD, false));
}

fn print_human(r: &DoctorOutput) {
    heading("Hooks");
    if r.enablement.enabled {
        println!("  enabled (from {})", r.enablement.source);
    } else {
        println!(
            "  {} (from {}): turn them on with `copse-hooks enable`",
            paint("OFF", output::YELLOW, false),
            r.enablement.source
        );
    }
    if r.recursion_guard {
        println!(
            "  {}: this process runs inside a hook, so no hook runs here",
            paint("recursion guard", output::YELLOW, false)
        );
    }
    heading("Workspace roots");
    for root in &r.roots {
        println!("  {:<9} {}", root.trust, esc(&root.path));
    }
    heading("Config files searched");
    for c in &r.configs {
        let detail = if c.exists {
            format!("{} · {} hook(s)", c.status, c.hooks)
        } else {
            c.status.clone()
        };
        println!(
            "  {:<7} {:<7} {} {}",
            c.dialect,
            c.scope,
            esc(&c.path),
            paint(&format!("({})", esc(&detail)), output::DIM, false)
        );
        for w in &c.warnings {
            println!(
                "          {}: {}",
                paint("warning", output::YELLOW, false),
                esc(w)
            );
        }
    }
    heading("Settings");
    println!(
        "  {} {}",
        esc(&r.settings.path),
        if r.settings.exists {
            ""
        } else {
            "(does not exist: defaults)"
        }
    );
    for v in &r.settings.values {
        println!(
            "  {:<21} {} {}",
            v.key,
            esc(&v.value.to_string()),
            paint(&format!("({})", v.source), output::DIM, false)
        );
    }
    for w in &r.settings.warnings {
        println!("  {}: {}", paint("warning", output::YELLOW, false), esc(w));
    }
    heading("Sandbox");
    if !r.sandbox.on {
        println!("  off");
    } else {
        println!(
            "  {} {}{}",
            r.sandbox.mechanism.as_deref().unwrap_or("none"),
            if r.sandbox.enforced {
                "enforced: "
            } else {
                "NOT enforced: "
            },
            esc(r.sandbox.enforcement.as_deref().unwrap_or(""))
        );
        if r.sandbox.required {
            println!("  required (requireSandbox): unenforced runs fail");
        }
        for p in &r.sandbox.writable_paths {
            println!("  writable: {}", esc(p));
        }
    }
    heading("Audit store");
    println!(
        "  {} ({}{})",
        esc(&r.audit.path),
        if r.audit.recording {
            "recording"
        } else {
            "not recording"
        },
        if r.audit.exists { "" } else { ", no runs yet" }
    );
    if let Some(w) = &r.audit.warning {
        println!("  {}: {}", paint("warning", output::YELLOW, false), esc(w));
    }
    heading("Most recent failure of each hook");
    if r.recent_failures.is_empty() {
        println!("  none recorded");
    }
    for f in &r.recent_failures {
        println!(
            "  {} {} {}",
            paint(&f.run_id, output::DIM, false),
            esc(&f.event),
            esc(&f.command)
        );
        println!(
            "      {} {}",
            esc(&f.message),
            paint(
                &format!("({})", crate::time::format_utc(f.at)),
                output::DIM,
                false
            )
        );
    }
}
