//! `enable`, `disable`, `trust [DIR]`, `untrust [DIR]`: change `$COPSE_DIR/settings.json`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use copse_hooks::settings::{Settings, SettingsError};
use copse_hooks::{Engine, EngineConfig};
use serde_json::json;

use crate::cli::Global;
use crate::output::{self, paint};

fn settings_path() -> PathBuf {
    Settings::path_in(&EngineConfig::from_process(Vec::new()).copse_dir)
}

/// Loads settings for modification. A corrupt file is moved aside (nothing is lost)
/// and replaced by the defaults.
fn load_for_update(path: &Path) -> Result<Settings> {
    match Settings::load(path) {
        Ok(s) => Ok(s),
        Err(SettingsError::Corrupt { .. }) => {
            let aside = path.with_extension(format!(
                "json.corrupt-{}",
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0)
            ));
            std::fs::rename(path, &aside).with_context(|| {
                format!(
                    "settings file {} is corrupt and could not be moved aside",
                    path.display()
                )
            })?;
            errln!(
                "{}: settings file {} was corrupt; moved it to {} and started from the defaults",
                paint("warning", output::YELLOW, true),
                path.display(),
                aside.display()
            );
            Ok(Settings::default())
        }
        Err(e) => Err(e.into()),
    }
}

pub fn enable(global: &Global, on: bool) -> Result<ExitCode> {
    let path = settings_path();
    let mut s = load_for_update(&path)?;
    s.cursor_hooks_enabled = on;
    s.save(&path)?;
    if global.json {
        outln!(
            "{}",
            json!({"enabled": on, "settings": path.display().to_string(), "version": 1})
        );
    } else {
        let word = if on { "on" } else { "off" };
        outln!("External hooks are now {word} ({}).", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The workspace a `trust`/`untrust` means: DIR, else the `--workspace` root, else
/// the current directory.
fn root_arg(global: &Global, dir: Option<&Path>) -> Result<PathBuf> {
    let dir = match (dir, global.workspaces.as_slice()) {
        (Some(d), _) => d.to_path_buf(),
        (None, [one]) => one.clone(),
        (None, []) => std::env::current_dir().context("failed to read the current directory")?,
        (None, _) => anyhow::bail!(
            "several --workspace roots given: name the one to (un)trust, e.g. `copse-hooks trust DIR`"
        ),
    };
    std::fs::canonicalize(&dir).with_context(|| format!("workspace {} not found", dir.display()))
}

pub fn trust(global: &Global, dir: Option<&Path>) -> Result<ExitCode> {
    let root = root_arg(global, dir)?;
    let path = settings_path();
    let mut s = load_for_update(&path)?;
    let pins = s.trust(&root).with_context(|| {
        format!(
            "failed to read the project hook configs of {}",
            root.display()
        )
    })?;
    s.save(&path)?;
    // What trusting allows: every project hook of this root.
    let engine = Engine::new(EngineConfig::from_process(vec![root.clone()]).trust(&root));
    let listing = engine.list();
    let hooks: Vec<_> = listing
        .hooks
        .iter()
        .filter(|h| h.scope == copse_hooks::Scope::Project)
        .collect();
    if global.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "trusted": root.display().to_string(),
                "settings": path.display().to_string(),
                "pinned": pins.iter().map(|(p, h)| json!({"config": p.display().to_string(), "sha256": h})).collect::<Vec<_>>(),
                "hooks": hooks.iter().map(|h| json!({"dialect": h.dialect.as_str(), "event": h.event, "command": h.command, "source": h.source.display().to_string(), "sandboxed": h.sandboxed})).collect::<Vec<_>>(),
                "version": 1,
            }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!("Trusted {} ({}).", root.display(), path.display());
    for (config, hash) in &pins {
        if let Some(hash) = hash {
            outln!(
                "  pinned {} (sha256 {})",
                output::path(config),
                hash.get(..12).unwrap_or(hash)
            );
        }
    }
    if hooks.is_empty() {
        outln!("It declares no project hooks.");
    } else {
        outln!("These project hooks may now run:");
        for h in &hooks {
            let sandbox = if h.sandboxed { "" } else { "  (UNSANDBOXED)" };
            outln!(
                "  {} {}: {}{sandbox}",
                h.dialect.as_str(),
                output::clean(&h.event),
                output::clean(&h.command)
            );
        }
    }
    outln!(
        "{}",
        paint(
            "If any of these files changes, its hooks stop running until you trust the workspace again.",
            output::DIM,
            false
        )
    );
    Ok(ExitCode::SUCCESS)
}

pub fn untrust(global: &Global, dir: Option<&Path>) -> Result<ExitCode> {
    let root = root_arg(global, dir)?;
    let path = settings_path();
    let mut s = load_for_update(&path)?;
    let removed = s.untrust(&root);
    s.save(&path)?;
    if global.json {
        outln!(
            "{}",
            json!({"untrusted": root.display().to_string(), "was_trusted": removed, "version": 1})
        );
    } else if removed {
        outln!("{} is no longer trusted.", root.display());
    } else {
        outln!("{} was not trusted.", root.display());
    }
    Ok(ExitCode::SUCCESS)
}
