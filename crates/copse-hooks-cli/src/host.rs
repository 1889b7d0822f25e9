//! The engine a JSON-RPC client or `doctor` gets: the same settings as every command,
//! plus what the client's `initialize` (or this invocation's flags) says.

use std::path::PathBuf;

use anyhow::Result;
use copse_hooks::Settings;
use copse_hooks_server::{HostContext, Hosted};
use copse_hooks_wire::output::SettingValue;
use serde_json::{Value, json};

use crate::args::Global;
use crate::workspace;

/// Where the flags came from, for `doctor`'s sources.
#[derive(Clone, Copy)]
pub enum Origin {
    /// This invocation's `--enable`/`--trust`.
    Flag,
    /// A JSON-RPC client's `initialize`.
    Client,
}

impl Origin {
    fn as_str(self) -> &'static str {
        match self {
            Origin::Flag => "flag",
            Origin::Client => "client",
        }
    }
}

/// Builds an engine recording in the audit store, with `enabled`/`trusted` overriding
/// the settings when given.
pub fn hosted(
    roots: Vec<PathBuf>,
    trusted: Option<bool>,
    enabled: Option<bool>,
    origin: Origin,
) -> Result<Hosted> {
    hosted_with(roots, trusted, enabled, origin, |_| {})
}

/// [`hosted`], with a last adjustment of the engine config (the daemon's minimal
/// hook environment).
pub fn hosted_with(
    roots: Vec<PathBuf>,
    trusted: Option<bool>,
    enabled: Option<bool>,
    origin: Origin,
    adjust: impl FnOnce(&mut copse_hooks::EngineConfig),
) -> Result<Hosted> {
    let global = Global {
        workspaces: roots,
        trust: trusted == Some(true),
        enable: enabled == Some(true),
        json: true,
        color: crate::output::ColorWhen::Never,
    };
    let inv = workspace::engine_with(&global, |c| {
        workspace::record(c);
        if enabled == Some(false) {
            c.hooks_enabled = false;
        }
        if trusted == Some(false) {
            c.trusted.clear();
        }
        adjust(c);
    })?;
    let config = inv.engine.config();
    let settings_path = Settings::path_in(&config.copse_dir);
    let settings = Settings::load(&settings_path).unwrap_or_default();
    let from_settings = |present: bool| if present { "settings" } else { "default" };
    let enabled_source = if enabled.is_some() {
        origin.as_str()
    } else {
        from_settings(settings.cursor_hooks_enabled)
    };
    let trusted_source = if trusted.is_some() {
        origin.as_str()
    } else {
        from_settings(!settings.trusted_workspaces.is_empty())
    };
    let value = |key: &str, value: Value, source: &str| SettingValue {
        key: key.to_owned(),
        value,
        source: source.to_owned(),
    };
    let values = vec![
        value(
            "cursorHooksEnabled",
            json!(config.hooks_enabled),
            enabled_source,
        ),
        value(
            "trustedWorkspaces",
            json!(
                config
                    .trusted
                    .iter()
                    .map(|t| t.path().display().to_string())
                    .collect::<Vec<_>>()
            ),
            trusted_source,
        ),
        value(
            "requireSandbox",
            json!(config.require_sandbox),
            from_settings(settings.require_sandbox),
        ),
        value(
            "sandboxWritablePaths",
            json!(
                config
                    .sandbox_writable
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
            ),
            from_settings(!settings.sandbox_writable_paths.is_empty()),
        ),
        value(
            "spine",
            json!(config.spine_path.is_some()),
            from_settings(settings.spine.is_some()),
        ),
        value(
            "retention",
            json!({"maxRuns": config.retention.max_runs, "maxAgeDays": config.retention.max_age_days}),
            from_settings(settings.retention.is_some()),
        ),
    ];
    let mut warnings: Vec<String> = inv.settings_warning.iter().cloned().collect();
    // Key-by-key parsing: every wrong-typed or unknown key, once.
    warnings.extend(inv.settings_warnings.iter().cloned());
    // `$schema` points editors at schemas/settings.schema.json: the engine and `lint`
    // allow it (docs/settings.md), so `doctor` does too.
    for key in settings.other.keys().filter(|k| k.as_str() != "$schema") {
        let w = format!("unknown setting \"{key}\" is ignored");
        if !warnings.iter().any(|x| x.contains(&format!("\"{key}\""))) {
            warnings.push(w);
        }
    }
    Ok(Hosted {
        context: HostContext {
            settings_exists: settings_path.is_file(),
            settings_path,
            settings_warning: (!warnings.is_empty()).then(|| warnings.join("; ")),
            enabled_source: enabled_source.to_owned(),
            values,
            settings_stamp: None,
        },
        engine: inv.engine,
    })
}
