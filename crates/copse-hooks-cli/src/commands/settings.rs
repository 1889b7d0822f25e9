//! `enable`, `disable`, `trust [DIR]`, `untrust [DIR]`: change `$COPSE_DIR/settings.json`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use copse_hooks::{Engine, EngineConfig};
use copse_hooks::{Settings, SettingsError};
use copse_hooks_wire::output as wire;

use crate::cli::Global;
use crate::output::{self, paint};

fn settings_path() -> PathBuf {
    Settings::path_in(&EngineConfig::process_copse_dir())
}

/// The settings for modification. A corrupt file is moved aside (nothing is lost)
/// and replaced by the defaults.
fn recover(
    path: &Path,
    loaded: Result<Settings, SettingsError>,
) -> Result<Settings, SettingsError> {
    match loaded {
        Ok(s) => {
            for w in &s.warnings {
                errln!(
                    "{}: {}",
                    paint("warning", output::YELLOW, true),
                    output::clean(w)
                );
            }
            Ok(s)
        }
        Err(SettingsError::Corrupt { .. } | SettingsError::Unreadable { .. }) => {
            let aside = path.with_extension(format!(
                "json.corrupt-{}",
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or(0)
            ));
            std::fs::rename(path, &aside).map_err(|source| SettingsError::Write {
                path: path.to_path_buf(),
                cause: source,
            })?;
            errln!(
                "{}: settings file {} was corrupt; moved it to {} and started from the defaults",
                paint("warning", output::YELLOW, true),
                path.display(),
                aside.display()
            );
            Ok(Settings::default())
        }
        Err(e) => Err(e),
    }
}

/// Reads, changes and writes the settings under the settings lock.
fn update<R>(path: &Path, change: impl FnOnce(&mut Settings) -> R) -> Result<R> {
    let (result, notices) = Settings::update(path, |loaded| {
        let mut s = recover(path, loaded)?;
        let r = change(&mut s);
        Ok((Some(s), r))
    })?;
    for n in notices {
        errln!(
            "{}: {}",
            paint("note", output::YELLOW, true),
            output::clean(&n.to_string())
        );
    }
    Ok(result)
}

pub fn enable(global: &Global, on: bool) -> Result<ExitCode> {
    let path = settings_path();
    update(&path, |s| s.cursor_hooks_enabled = on)?;
    if global.json {
        outln!(
            "{}",
            serde_json::to_string(&wire::EnableOutput {
                version: copse_hooks_wire::OUTPUT_VERSION,
                enabled: on,
                settings: path.display().to_string(),
            })?
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
    // One read of each file: the bytes pinned are the bytes parsed and shown.
    let engine = Engine::new(EngineConfig::from_process(vec![root.clone()]).trust(&root));
    let snapshot = engine.trust_snapshot(&root);
    for p in trust_warnings(&root, &snapshot) {
        errln!(
            "{}: {}",
            paint("warning", output::YELLOW, true),
            output::clean(&p)
        );
    }
    let (pins, scripts) = (snapshot.configs.clone(), snapshot.scripts.clone());
    update(&path, |s| {
        s.trust_pinned(&root, pins.clone(), scripts.clone())
    })?;
    let listing = snapshot.listing;
    let hooks: Vec<_> = listing
        .hooks
        .iter()
        .filter(|h| h.scope == copse_hooks::Scope::Project)
        .collect();
    if global.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&wire::TrustOutput {
                version: copse_hooks_wire::OUTPUT_VERSION,
                trusted: root.display().to_string(),
                settings: path.display().to_string(),
                pinned: pins
                    .iter()
                    .map(|(p, h)| wire::PinnedConfig {
                        config: p.display().to_string(),
                        sha256: h.clone(),
                    })
                    .collect(),
                scripts: scripts
                    .iter()
                    .map(|(p, h)| wire::PinnedScript {
                        script: p.display().to_string(),
                        sha256: h.clone(),
                    })
                    .collect(),
                hooks: hooks.iter().map(|h| wire::TrustedHook::from(*h)).collect(),
            })?
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
    for (script, hash) in &scripts {
        match hash {
            Some(hash) => outln!(
                "  pinned script {} (sha256 {})",
                output::path(script),
                hash.get(..12).unwrap_or(hash)
            ),
            None => outln!("  pinned script {} (missing)", output::path(script)),
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
            "If any of these files or scripts changes, its hooks stop running until you trust the workspace again. Files a script imports are not pinned.",
            output::DIM,
            false
        )
    );
    Ok(ExitCode::SUCCESS)
}

/// What `trust` warns about: the snapshot's problems, each config refused for its
/// owner or mode (with the fix), and each workspace file a project hook uses that
/// trust cannot pin.
fn trust_warnings(root: &Path, snapshot: &copse_hooks::TrustSnapshot) -> Vec<String> {
    let mut out: Vec<String> = snapshot.problems.iter().map(ToString::to_string).collect();
    for config in snapshot.configs.keys() {
        if let Ok(meta) = std::fs::metadata(config)
            && let Some(why) = copse_hooks::insecurity(config, &meta)
        {
            out.push(format!(
                "{} {}: it is refused and its hooks will not run; fix it with `{}`",
                config.display(),
                why.reason,
                why.fix
            ));
        }
    }
    let mut named = std::collections::BTreeSet::new();
    for hook in &snapshot.listing.hooks {
        if hook.scope != copse_hooks::Scope::Project || hook.http {
            continue;
        }
        for path in copse_hooks::unpinned_files(&hook.command, root) {
            if named.insert(path.clone()) {
                out.push(format!(
                    "{} ({} {}) uses {} in a way trust cannot pin: an edit to it will run without a new trust",
                    hook.source.display(),
                    hook.event,
                    hook.entry,
                    path.display()
                ));
            }
        }
    }
    out
}

pub fn untrust(global: &Global, dir: Option<&Path>) -> Result<ExitCode> {
    let root = root_arg(global, dir)?;
    let path = settings_path();
    let removed = update(&path, |s| s.untrust(&root))?;
    if global.json {
        outln!(
            "{}",
            serde_json::to_string(&wire::UntrustOutput {
                version: copse_hooks_wire::OUTPUT_VERSION,
                untrusted: root.display().to_string(),
                was_trusted: removed,
            })?
        );
    } else if removed {
        outln!("{} is no longer trusted.", root.display());
    } else {
        outln!("{} was not trusted.", root.display());
    }
    Ok(ExitCode::SUCCESS)
}
