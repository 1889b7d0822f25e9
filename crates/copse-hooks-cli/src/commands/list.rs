//! `copse-hooks list`: every discovered hook and every config warning.

use std::process::ExitCode;

use anyhow::Result;
use copse_hooks::TrustState;
use copse_hooks::{Engine, EngineConfig, HookSummary, Listing, Scope};

use crate::args::Global;
use crate::output::{self, clean, paint};
use crate::workspace;

pub fn run(global: &Global, untrusted_preview: bool) -> Result<ExitCode> {
    let inv = workspace::engine(global)?;
    workspace::warn_settings(&inv);
    if untrusted_preview {
        return preview(global, &inv.engine);
    }
    let spine = workspace::read_spine(&inv.engine).unwrap_or_else(|e| {
        errln!(
            "{}: audit store: {e}",
            paint("warning", output::YELLOW, true)
        );
        None
    });
    let listing = inv.engine.list_with(spine.as_ref());
    let installed = super::install::status();
    if global.json {
        let mut value = output::listing_json(&listing);
        let agents = super::doctor::agents(&inv.engine.config().copse_dir);
        if !agents.is_empty()
            && let Some(obj) = value.as_object_mut()
        {
            // `ListOutput.agents`, typed (schemas/output/list.schema.json).
            obj.insert("agents".into(), serde_json::to_value(&agents)?);
        }
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print_human(&listing, inv.engine.config().hooks_enabled);
        if listing.auto_continue_follow_ups {
            outln!(
                "\n{}",
                paint(
                    "Stop follow-ups continue automatically within the continuation budget (settings autoContinueFollowUps)",
                    output::DIM,
                    false
                )
            );
        }
        if !listing.failure_policy.is_empty() {
            let policies: Vec<String> = listing
                .failure_policy
                .iter()
                .map(|(dialect, p)| {
                    let word = match p {
                        copse_hooks::FailurePolicy::Open => "open",
                        copse_hooks::FailurePolicy::Closed => "closed",
                    };
                    format!("{} fails {word}", output::clean(dialect))
                })
                .collect();
            outln!(
                "\n{}",
                paint(
                    &format!(
                        "Failure policy (settings failurePolicy): {}",
                        policies.join(", ")
                    ),
                    output::DIM,
                    false
                )
            );
        }
        let lines = super::install::status_lines(&installed);
        if !lines.is_empty() {
            outln!("\nAgents:");
            for l in lines {
                outln!("  {l}");
            }
        }
        let status = inv.engine.sandbox_status();
        match status.clone() {
            Some(s) if s.enforcement.is_enforced() => {
                outln!(
                    "\n{}",
                    paint(&format!("Sandbox: {}", s.enforcement), output::DIM, false)
                );
            }
            Some(s) => outln!(
                "\n{}",
                paint(
                    &format!(
                        "Sandbox NOT enforced on this machine ({}): hooks run unsandboxed",
                        s.enforcement
                    ),
                    output::YELLOW,
                    false
                )
            ),
            None => {}
        }
        // A protection this machine cannot give (e.g. no pid namespaces: a `setsid`
        // process can outlive its run) is said as plainly as an unenforced sandbox.
        for layer in status
            .iter()
            .flat_map(|s| &s.layers)
            .filter(|l| !l.enforced)
        {
            outln!(
                "{}",
                paint(
                    &output::clean(&format!(
                        "NOT enforced here: {} ({})",
                        layer.name, layer.detail
                    )),
                    output::YELLOW,
                    false
                )
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Why a hook would not run now, or "active".
pub fn status(h: &HookSummary) -> String {
    let mut why = Vec::new();
    // Managed hooks run whether hooks are on or off.
    if !h.enabled && h.scope != Scope::Managed {
        why.push("hooks off");
    }
    if let Some(rule) = &h.managed_only {
        why.push(rule.as_str());
    }
    match h.trust {
        TrustState::Trusted => {}
        TrustState::Changed => why.push("changed since trusted"),
        TrustState::Untrusted => why.push("workspace not trusted"),
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
        let text = if l.hooks.iter().any(|h| h.scope == Scope::Managed) {
            "External hooks are off: nothing below runs but the managed hooks (turn on with --enable, or cursorHooksEnabled in settings)."
        } else {
            "External hooks are off: nothing below runs (turn on with --enable, or cursorHooksEnabled in settings)."
        };
        outln!("{}", paint(text, output::YELLOW, false));
    }
    if l.hooks.is_empty() {
        outln!("No hooks declared.");
    }
    let mut current: Option<&std::path::Path> = None;
    for h in &l.hooks {
        if current != Some(h.source.as_path()) {
            current = Some(h.source.as_path());
            outln!(
                "{} {}",
                paint(&output::path(&h.source), output::BOLD, false),
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
            .map(|m| format!(" matcher \"{}\"", clean(m)))
            .unwrap_or_default();
        outln!(
            "  {}[{}]{matcher}  {}",
            clean(&h.event),
            h.entry,
            clean(&h.command)
        );
        if output::has_hostile_chars(&h.command) {
            outln!(
                "      {}",
                paint(
                    "warning: this command contains terminal control characters or bidi marks (shown escaped)",
                    output::RED,
                    false
                )
            );
        }
        let policy = if h.fail_closed {
            "fails closed"
        } else {
            "fails open"
        };
        outln!(
            "      {} {}",
            status(h),
            paint(
                &format!(
                    "· {policy} · {} · timeout {}{}",
                    if h.http {
                        "HTTP request (no process)"
                    } else if h.sandboxed {
                        "sandboxed"
                    } else {
                        "UNSANDBOXED (sandbox: false)"
                    },
                    seconds(h.timeout_ms),
                    match (h.persistent, h.idle_timeout_ms) {
                        (false, _) => String::new(),
                        (true, Some(ms)) => format!(" · persistent (idle stop {})", seconds(ms)),
                        (true, None) => " · persistent".to_string(),
                    }
                ),
                output::DIM,
                false
            )
        );
        print_scripts(h);
        if let Some(why) = &h.broken {
            outln!(
                "      {}",
                paint(
                    &format!("persistent hook {}", clean(why)),
                    output::RED,
                    false
                )
            );
        }
        if let Some(e) = h
            .last_error
            .as_ref()
            .filter(|e| h.broken.as_ref() != Some(*e))
        {
            outln!(
                "      {}",
                paint(&format!("last error: {}", clean(e)), output::RED, false)
            );
        }
    }
    if !l.warnings.is_empty() {
        outln!();
        outln!("{}", paint("Config problems:", output::BOLD, false));
        for w in &l.warnings {
            outln!(
                "  {}: {}: {}",
                output::path(&w.source),
                match copse_hooks::level_of(&w.message) {
                    copse_hooks::Level::Error => paint("error", output::RED, false),
                    copse_hooks::Level::Warning => paint("warning", output::YELLOW, false),
                },
                clean(&w.message)
            );
        }
    }
}

fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{}s", ms as f64 / 1000.0)
    }
}

/// `list --untrusted-preview`: what trusting the workspace would allow to run.
fn preview(global: &Global, engine: &Engine) -> Result<ExitCode> {
    let roots = engine.workspace_roots().to_vec();
    let mut config = EngineConfig::from_process(roots.clone());
    config.home = engine.config().home.clone();
    config.copse_dir = engine.config().copse_dir.clone();
    for r in &roots {
        config = config.trust(r);
    }
    let listing = Engine::new(config).list();
    let project: Vec<&HookSummary> = listing
        .hooks
        .iter()
        .filter(|h| h.scope == Scope::Project)
        .collect();
    let unsandboxed: Vec<&&HookSummary> = project.iter().filter(|h| !h.sandboxed).collect();
    if global.json {
        use copse_hooks_wire::output::{HookOutput, UntrustedPreviewOutput, WarningOutput};
        // The listing above trusts the roots in memory to see what would run; each
        // hook's `trusted`/`trust` say where it stands today, from the real engine.
        let today = engine.list();
        let output = |h: &HookSummary| {
            let mut o = HookOutput::from(h);
            let now = today
                .hooks
                .iter()
                .find(|t| t.source == h.source && t.event == h.event && t.entry == h.entry);
            // A hook the real engine does not list (its config appeared meanwhile) is
            // not trusted.
            (o.trusted, o.trust) = now.map_or((false, "untrusted".to_string()), |t| {
                let t = HookOutput::from(t);
                (t.trusted, t.trust)
            });
            o
        };
        let preview = UntrustedPreviewOutput {
            version: copse_hooks_wire::OUTPUT_VERSION,
            workspaces: roots.iter().map(|r| r.display().to_string()).collect(),
            hooks: project.iter().map(|h| output(h)).collect(),
            unsandboxed: unsandboxed.iter().map(|h| output(h)).collect(),
            warnings: listing
                .warnings
                .iter()
                .filter(|w| w.scope == Scope::Project)
                .map(WarningOutput::from)
                .collect(),
        };
        outln!("{}", serde_json::to_string_pretty(&preview)?);
        return Ok(ExitCode::SUCCESS);
    }
    // A config that exists but cannot be read is said, never shown as absent.
    for w in listing
        .warnings
        .iter()
        .filter(|w| w.scope == Scope::Project)
    {
        errln!(
            "{}: {}: {}",
            paint("warning", output::YELLOW, true),
            output::clean(&workspace::display_path(&w.source)),
            output::clean(&w.message)
        );
    }
    if project.is_empty() {
        outln!("Trusting would allow no project hooks: none are declared.");
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "Trusting {} would allow these project hooks to run:",
        roots
            .iter()
            .map(|r| clean(&r.display().to_string()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for h in &project {
        let supported = if h.supported {
            ""
        } else {
            " (recognised, unsupported: never runs)"
        };
        let hostile = if output::has_hostile_chars(&h.command) {
            " (contains terminal control characters, shown escaped)"
        } else {
            ""
        };
        outln!(
            "  {} {}: {}{supported}{hostile}",
            h.dialect.as_str(),
            clean(&h.event),
            clean(&h.command)
        );
        print_scripts(h);
    }
    if unsandboxed.is_empty() {
        outln!("All of them run in the sandbox.");
    } else {
        outln!(
            "{}",
            paint(
                "These run OUTSIDE the sandbox, with your full authority:",
                output::RED,
                false
            )
        );
        for h in &unsandboxed {
            outln!(
                "  {} {}: {}",
                h.dialect.as_str(),
                clean(&h.event),
                clean(&h.command)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The workspace files a project hook runs, and whether each is as trusted.
fn print_scripts(h: &copse_hooks::HookSummary) {
    for s in &h.scripts {
        let (word, colour) = match s.state {
            copse_hooks::ScriptState::Pinned => ("pinned", output::DIM),
            copse_hooks::ScriptState::Changed => ("CHANGED since trusted", output::RED),
            copse_hooks::ScriptState::Unpinned => ("pinned when trusted", output::DIM),
        };
        let state = match (&s.sha256, s.state) {
            (None, _) => format!("{word}; missing or unreadable"),
            (Some(h), copse_hooks::ScriptState::Unpinned) => {
                format!("{word}; sha256 {}", h.get(..12).unwrap_or(h))
            }
            (Some(h), _) => format!("{word}, sha256 {}", h.get(..12).unwrap_or(h)),
        };
        outln!(
            "      {}",
            paint(
                &output::clean(&format!("script {} ({state})", s.path.display())),
                colour,
                false
            )
        );
    }
}
