//! `doctor`: everything that decides whether a hook runs, in one report (the CLI's
//! `copse-hooks doctor` and the `doctor` method share it).

use std::path::Path;

use copse_hooks::TrustState;
use copse_hooks::TrustedWorkspace;
use copse_hooks::config_locations;
use copse_hooks::spine::{Spine, SpineError};
use copse_hooks_wire::OUTPUT_VERSION;
use copse_hooks_wire::output::{
    AuditReport, ConfigProbe, DoctorOutput, Enablement, ManagedReport, ManagedVendorReport,
    OtelReport, PersistentReport, RecentFailure, RootTrust, SandboxReport, SettingsReport,
};

use crate::Hosted;

fn canonical(p: &Path) -> std::path::PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The report for an engine.
pub fn report(hosted: &Hosted) -> DoctorOutput {
    report_with(hosted, &[])
}

/// [`report`], also taking the persistent hooks other engines of the same process run
/// (a server's other connections and agent calls): a hook this engine has not started
/// but another runs is shown as that one sees it, so the daemon's `doctor` says what
/// really runs.
pub fn report_with(
    hosted: &Hosted,
    others: &[copse_hooks::persistent::PersistentStatus],
) -> DoctorOutput {
    let engine = &hosted.engine;
    let config = engine.config();
    let listing = engine.list_with(None);
    let roots = engine
        .workspace_roots()
        .iter()
        .map(|root| {
            let entries: Vec<&TrustedWorkspace> = config
                .trusted
                .iter()
                .filter(|t| canonical(t.path()) == *root)
                .collect();
            let changed = listing
                .hooks
                .iter()
                .any(|h| h.trust == TrustState::Changed && h.source.starts_with(root));
            let trust = if entries.is_empty() {
                "untrusted"
            } else if changed {
                "changed"
            } else if entries.iter().any(|t| t.pins().is_some()) {
                "pinned"
            } else {
                "trusted"
            };
            RootTrust {
                path: root.display().to_string(),
                trust: trust.to_owned(),
            }
        })
        .collect();
    // The managed hook files first (they run first), then discovery's list.
    let managed_files = listing
        .hooks
        .iter()
        .filter(|h| h.scope == copse_hooks::Scope::Managed)
        .map(|h| (h.source.clone(), h.dialect))
        .chain(
            listing
                .warnings
                .iter()
                .filter(|w| w.scope == copse_hooks::Scope::Managed && w.source.is_file())
                .map(|w| (w.source.clone(), managed_dialect(&w.source))),
        )
        .fold(
            Vec::new(),
            |mut acc: Vec<(std::path::PathBuf, _)>, (p, d)| {
                if !acc.iter().any(|(q, _)| *q == p) {
                    acc.push((p, d));
                }
                acc
            },
        )
        .into_iter()
        .map(|(path, dialect)| copse_hooks::ConfigLocation {
            path,
            dialect,
            scope: copse_hooks::Scope::Managed,
            root: None,
        });
    let configs = managed_files
        .chain(config_locations(
            &config.home,
            &config.copse_dir,
            engine.workspace_roots(),
        ))
        .map(|loc| {
            let exists = loc.path.is_file();
            let hooks: Vec<_> = listing
                .hooks
                .iter()
                .filter(|h| h.source == loc.path)
                .collect();
            let warnings: Vec<String> = listing
                .warnings
                .iter()
                .filter(|w| w.source == loc.path)
                .map(|w| w.message.clone())
                .collect();
            let trust = hooks.first().map(|h| h.trust);
            let status = if !exists {
                "missing".to_owned()
            } else {
                match trust {
                    Some(TrustState::Untrusted) => {
                        "found, untrusted: its hooks do not run until the workspace is trusted"
                            .to_owned()
                    }
                    Some(TrustState::Changed) => {
                        "found, changed since trusted: its hooks do not run until trusted again"
                            .to_owned()
                    }
                    _ => "found".to_owned(),
                }
            };
            ConfigProbe {
                path: loc.path.display().to_string(),
                dialect: loc.dialect.as_str().to_owned(),
                scope: loc.scope.as_str().to_owned(),
                status,
                exists,
                hooks: hooks.len(),
                warnings,
            }
        })
        .collect();
    let ctx = &hosted.context;
    let settings = SettingsReport {
        path: ctx.settings_path.display().to_string(),
        exists: ctx.settings_exists,
        values: ctx.values.clone(),
        warnings: ctx.settings_warning.iter().cloned().collect(),
    };
    let status = engine.sandbox_status();
    let sandbox = SandboxReport {
        on: config.sandbox,
        mechanism: status.as_ref().map(|s| s.mechanism.to_owned()),
        enforced: status.as_ref().is_some_and(|s| s.enforcement.is_enforced()),
        enforcement: status.as_ref().map(|s| s.enforcement.to_string()),
        // The managed layer's `requireSandbox` cannot be turned off by the user.
        required: config.require_sandbox || engine.managed().require_sandbox,
        writable_paths: config
            .sandbox_writable
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        layers: status
            .as_ref()
            .map(|s| {
                s.layers
                    .iter()
                    .map(|l| copse_hooks_wire::output::LayerReport {
                        name: l.name.to_string(),
                        enforced: l.enforced,
                        detail: l.detail.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
    };
    let spine_path = config.copse_dir.join("spine.db");
    engine.flush_spine();
    let (reader, read_warning) = match Spine::open_read_only(&spine_path) {
        Ok(s) => (Some(s), None),
        Err(SpineError::Missing { .. }) => (None, None),
        Err(e) => (None, Some(e.to_string())),
    };
    let audit = AuditReport {
        path: spine_path.display().to_string(),
        recording: engine.spine().is_some_and(Spine::is_recording),
        exists: spine_path.exists(),
        warning: engine.spine_warning().or(read_warning),
    };
    let broken = reader.as_ref().map(Spine::broken_hooks).unwrap_or_default();
    let live = engine.persistent_status();
    let persistent = listing
        .hooks
        .iter()
        .filter(|h| h.persistent)
        .map(|h| {
            let source = h.source.display().to_string();
            let same = |s: &&copse_hooks::persistent::PersistentStatus| {
                s.source == h.source && s.event == h.event && s.entry == h.entry
            };
            let here = live
                .iter()
                .find(same)
                .filter(|s| s.state != "stopped")
                .or_else(|| others.iter().filter(same).find(|s| s.state == "running"))
                .or_else(|| live.iter().find(same));
            let stored = broken
                .iter()
                .find(|f| f.source == source && f.event == h.event && f.command == h.command);
            let (state, reason) = match (here, stored) {
                (Some(s), _) => (s.state.to_string(), s.reason.clone()),
                (None, Some(f)) => ("broken".to_string(), Some(f.message.clone())),
                (None, None) => ("stopped".to_string(), None),
            };
            PersistentReport {
                source,
                event: h.event.clone(),
                entry: h.entry,
                command: h.command.clone(),
                state,
                pid: here.and_then(|s| s.pid),
                idle_timeout_ms: h.idle_timeout_ms,
                reason,
            }
        })
        .collect();
    let recent_failures = reader
        .map(|s| {
            s.recent_failures()
                .into_iter()
                .map(|f| RecentFailure {
                    source: f.source,
                    event: f.event,
                    command: f.command,
                    message: f.message,
                    run_id: f.run_id,
                    at: f.started_at,
                })
                .collect()
        })
        .unwrap_or_default();
    DoctorOutput {
        version: OUTPUT_VERSION,
        enablement: Enablement {
            enabled: config.hooks_enabled,
            source: if ctx.enabled_source.is_empty() {
                "default".to_owned()
            } else {
                ctx.enabled_source.clone()
            },
        },
        recursion_guard: engine.recursion_guard_tripped(),
        roots,
        configs,
        settings,
        sandbox,
        audit,
        recent_failures,
        persistent,
        agents: Vec::new(),
        daemon: None,
        otel: otel_report(engine),
        managed: managed_report(engine, &listing),
    }
}

/// The dialect of a managed file that declared no hook (named by its warnings).
fn managed_dialect(path: &Path) -> copse_hooks::Dialect {
    let name = path.to_string_lossy();
    if name.ends_with(".toml") {
        copse_hooks::Dialect::Codex
    } else if name.contains("managed-settings") {
        copse_hooks::Dialect::Claude
    } else {
        copse_hooks::Dialect::Copse
    }
}

/// The managed policy layer and the vendors' managed tiers (absent when the machine
/// has none).
fn managed_report(
    engine: &copse_hooks::Engine,
    listing: &copse_hooks::Listing,
) -> Option<ManagedReport> {
    // Always said, `absent` included: "no machine policy here" is an answer too.
    let m = engine.managed();
    let mut vendors = Vec::new();
    for (vendor, tier, key) in [
        ("claude", &m.claude, "allowManagedHooksOnly"),
        ("codex", &m.codex, "allow_managed_hooks_only"),
    ] {
        if tier.files.is_empty() {
            continue;
        }
        let mut effect = Vec::new();
        if tier.allow_managed_hooks_only {
            effect.push(format!(
                "{key}: only its managed hooks run among {vendor}'s, and nothing but managed hooks when the shim serves {vendor}"
            ));
        }
        if tier.hooks_off {
            effect.push(format!("every {vendor} hook is off, its managed ones too"));
        }
        if tier.has_hooks {
            effect.push("its hooks run as managed hooks".to_string());
        }
        if effect.is_empty() {
            effect.push("nothing about hooks".to_string());
        }
        vendors.push(ManagedVendorReport {
            vendor: vendor.to_string(),
            files: tier.files.iter().map(|p| p.display().to_string()).collect(),
            allow_managed_hooks_only: tier.allow_managed_hooks_only,
            effect: effect.join("; "),
            warnings: tier.warnings.clone(),
        });
    }
    Some(ManagedReport {
        dir: m.dir.display().to_string(),
        redirected: m.redirected,
        state: m.state.as_str().to_string(),
        allow_managed_hooks_only: m.allow_managed_hooks_only,
        failure_floors: m
            .failure_floor
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    copse_hooks::FailurePolicy::Open => "open",
                    copse_hooks::FailurePolicy::Closed => "closed",
                };
                (k.clone(), v.to_string())
            })
            .collect(),
        pinned_endpoint: m.pinned_endpoint(),
        require_sandbox: m.require_sandbox,
        hooks: listing
            .hooks
            .iter()
            .filter(|h| h.scope == copse_hooks::Scope::Managed)
            .count(),
        warnings: m.warnings.clone(),
        vendors,
    })
}

/// This process's OTLP export: where the engine's spans go, what was wrong with its
/// `OTEL_*` variables or `"otel"` settings, and the counters of every exporter the
/// process runs (a daemon's include every agent call it served; engines with the
/// same configuration share one exporter). Absent when nothing exports and nothing
/// was wrong.
fn otel_report(engine: &copse_hooks::Engine) -> Option<OtelReport> {
    let warnings = engine.otel_warnings().to_vec();
    let live = copse_hooks::otel::live_exporters();
    if live.is_empty() && engine.otel().is_none() && warnings.is_empty() {
        return None;
    }
    let mut urls: Vec<String> = Vec::new();
    if let Some(e) = engine.otel() {
        urls.push(e.traces_url().to_owned());
    }
    for e in &live {
        if !urls.iter().any(|u| u == e.traces_url()) {
            urls.push(e.traces_url().to_owned());
        }
    }
    let mut report = OtelReport {
        traces_url: (!urls.is_empty()).then(|| urls.join(", ")),
        warnings,
        ..OtelReport::default()
    };
    for e in &live {
        let s = e.stats();
        report.exported += s.exported;
        report.dropped += s.dropped;
        report.failed += s.failed;
        report.pending += s.pending;
        if s.last_error.is_some() {
            report.last_error = s.last_error;
        }
    }
    Some(report)
}
