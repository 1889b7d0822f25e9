//! Building an engine from the global options and the settings file.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use copse_hooks::{Engine, EngineConfig};
use copse_hooks::{Settings, TrustedWorkspace};

use crate::args::Global;

/// The engine for this invocation, plus any warning about the settings file.
pub struct Invocation {
    pub engine: Engine,
    pub settings_warning: Option<String>,
    /// Wrong-typed and unknown settings keys.
    pub settings_warnings: Vec<String>,
}

/// Builds the engine: settings decide enablement and trust unless `--enable` /
/// `--trust` say otherwise for this invocation.
pub fn engine(global: &Global) -> Result<Invocation> {
    engine_with(global, |_| {})
}

/// [`engine`], with a last adjustment of the engine config.
pub fn engine_with(global: &Global, adjust: impl FnOnce(&mut EngineConfig)) -> Result<Invocation> {
    let roots = if global.workspaces.is_empty() {
        vec![std::env::current_dir().context("failed to read the current directory")?]
    } else {
        global.workspaces.clone()
    };
    for root in &roots {
        if !root.is_dir() {
            anyhow::bail!("workspace {} is not a directory", root.display());
        }
    }
    let mut config = EngineConfig::from_process(roots.clone());
    let settings_path = Settings::path_in(&config.copse_dir);
    let (settings, settings_warning) = match Settings::load(&settings_path) {
        Ok(s) => (s, None),
        Err(e) => (Settings::default(), Some(e.to_string())),
    };
    let settings_warnings = settings.warnings.clone();
    config.hooks_enabled = global.enable || settings.cursor_hooks_enabled;
    config.trusted = settings.trusted_workspaces.clone();
    config.guard = settings.guard.unwrap_or_default();
    config.refused_configs = settings.refused_configs.unwrap_or_default();
    if global.trust {
        config
            .trusted
            .extend(roots.iter().cloned().map(TrustedWorkspace::Path));
    }
    if let Some(r) = settings.retention {
        let mut retention = copse_hooks::spine::Retention::default();
        if r.max_runs.is_some() {
            retention.max_runs = r.max_runs;
        }
        if r.max_age_days.is_some() {
            retention.max_age_days = r.max_age_days;
        }
        if r.max_bytes.is_some() {
            retention.max_bytes = r.max_bytes;
        }
        config.retention = retention;
    }
    let recording = settings.spine != Some(false);
    config.require_sandbox = settings.require_sandbox;
    config.redact_secrets = settings.redact_secrets != Some(false);
    config.sandbox_allowed_sockets = settings.sandbox_allowed_sockets.clone();
    config.failure_policy = settings.failure_policy.clone();
    config.auto_continue_follow_ups = settings.auto_continue_follow_ups;
    config.sandbox_writable = writable_paths(&settings, &config.home, &settings_path);
    config.otel_settings = settings
        .otel
        .as_ref()
        .and_then(|o| serde_json::to_value(o).ok());
    adjust(&mut config);
    if !recording {
        config.spine_path = None;
    }
    let engine = Engine::new(config);
    #[cfg(unix)]
    crate::signals::watch(&engine);
    Ok(Invocation {
        engine,
        settings_warning,
        settings_warnings,
    })
}

/// `sandboxWritablePaths` with `~` expanded; a directory that does not exist (yet)
/// is kept (it may be created later) with a warning on stderr.
fn writable_paths(
    settings: &Settings,
    home: &std::path::Path,
    file: &std::path::Path,
) -> Vec<PathBuf> {
    settings
        .sandbox_writable_paths
        .iter()
        .map(|p| {
            let expanded = copse_hooks::expand_home(p, home);
            if !expanded.is_dir() {
                errln!(
                    "{}: sandboxWritablePaths in {}: {} does not exist: hooks cannot write there until it does",
                    crate::output::paint("warning", crate::output::YELLOW, true),
                    file.display(),
                    crate::output::clean(&expanded.display().to_string())
                );
            }
            expanded
        })
        .collect()
}

/// Turns on recording in the audit store (`$COPSE_DIR/spine.db`).
pub fn record(config: &mut EngineConfig) {
    config.spine_path = Some(config.copse_dir.join("spine.db"));
}

/// The audit store, opened read-only, when it exists.
pub fn read_spine(engine: &copse_hooks::Engine) -> Result<Option<copse_hooks::spine::Spine>> {
    use copse_hooks::spine::{Spine, SpineError};
    match Spine::open_read_only(engine.config().copse_dir.join("spine.db")) {
        Ok(s) => Ok(Some(s)),
        Err(SpineError::Missing { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Prints the settings warnings, if any, on stderr.
pub fn warn_settings(inv: &Invocation) {
    for w in inv.settings_warning.iter().chain(&inv.settings_warnings) {
        errln!(
            "{}: {}",
            crate::output::paint("warning", crate::output::YELLOW, true),
            crate::output::clean(w)
        );
    }
}

/// The config problems the session's latest event met, one `file: message` line
/// each (for `--json`'s `warnings`; stderr shows them as `config_warning` notices).
pub fn config_problems(session: &copse_hooks::Session) -> Vec<String> {
    session
        .config_problems()
        .iter()
        .map(|w| format!("{}: {}", w.source.display(), w.message))
        .collect()
}

/// A path shown relative to the current directory when it is inside it.
pub fn display_path(p: &std::path::Path) -> String {
    let cwd: Option<PathBuf> = std::env::current_dir().ok();
    match cwd.as_deref().and_then(|c| p.strip_prefix(c).ok()) {
        Some(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => p.display().to_string(),
    }
}
