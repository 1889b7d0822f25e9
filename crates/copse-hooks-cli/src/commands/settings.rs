//! `enable`, `disable`, `trust [DIR]`, `untrust [DIR]`: change `$COPSE_DIR/settings.json`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use copse_hooks::{Engine, EngineConfig};
use copse_hooks::{Settings, SettingsError};
use copse_hooks_wire::output as wire;

use crate::args::Global;
use crate::output::{self, paint};

pub(crate) fn settings_path() -> PathBuf {
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
pub(crate) fn update<R>(path: &Path, change: impl FnOnce(&mut Settings) -> R) -> Result<R> {
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
pub(crate) fn root_arg(global: &Global, dir: Option<&Path>) -> Result<PathBuf> {
    let dir = match (dir, global.workspaces.as_slice()) {
        (Some(d), _) => d.to_path_buf(),
        (None, [one]) => one.clone(),
        (None, []) => std::env::current_dir().context("failed to read the current directory")?,
        (None, roots) => anyhow::bail!(
            "several --workspace roots given: name the one you mean, e.g. `copse-hooks trust {}`",
            copse_hooks::shell_quote(
                &std::path::absolute(&roots[0]).unwrap_or_else(|_| roots[0].clone())
            )
        ),
    };
    std::fs::canonicalize(&dir).with_context(|| format!("workspace {} not found", dir.display()))
}

pub fn trust(global: &Global, dir: Option<&Path>) -> Result<ExitCode> {
    let root = root_arg(global, dir)?;
    trust_root(global, &root, None)
}

/// Trusts `root` only if every file it would pin still has the hash the user was
/// shown (`expected`: path and hash, `None` for absent); otherwise nothing is written
/// and the error names the file. `watch` uses it so a `y` never pins content edited
/// after its diff was shown.
pub(crate) fn trust_expecting(
    global: &Global,
    root: &Path,
    expected: &[(PathBuf, Option<String>)],
) -> Result<ExitCode> {
    trust_root(global, root, Some(expected))
}

fn trust_root(
    global: &Global,
    root: &Path,
    expected: Option<&[(PathBuf, Option<String>)]>,
) -> Result<ExitCode> {
    let root = root.to_path_buf();
    let path = settings_path();
    // One read of each file: the bytes pinned are the bytes parsed and shown.
    let engine = Engine::new(EngineConfig::from_process(vec![root.clone()]).trust(&root));
    let snapshot = engine.trust_snapshot(&root);
    for (file, shown) in expected.unwrap_or_default() {
        let pinning = snapshot
            .configs
            .get(file)
            .or_else(|| snapshot.scripts.get(file));
        // A file that would be pinned with content other than what was shown (an
        // unreadable or refused one pins nothing that can run).
        if let Some(Some(now)) = pinning
            && shown.as_deref() != Some(now.as_str())
        {
            anyhow::bail!(
                "{} changed again after its diff was shown: nothing was trusted",
                file.display()
            );
        }
    }
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
    let copies = pin_store();
    for p in copies.keep(pins.iter().chain(scripts.iter())) {
        errln!(
            "{}: {}",
            paint("warning", output::YELLOW, true),
            output::clean(&p.to_string())
        );
    }
    if let Ok(settings) = Settings::load(&path) {
        copies.prune(&settings);
    }
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
    if let Ok(settings) = Settings::load(&path) {
        pin_store().prune(&settings);
    }
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

// Pinned content: what `trust --diff` and `watch` compare against, kept by the
// engine's store of pinned copies (`$COPSE_DIR/trust/<sha256>`).

pub(crate) use copse_hooks::{PinState, PinnedFile, TrustStatus};

fn pin_store() -> copse_hooks::PinnedCopies {
    copse_hooks::PinnedCopies::in_copse_dir(&EngineConfig::process_copse_dir())
}

/// Compares every file pinned for `root` with the disk.
pub(crate) fn trust_status(root: &Path) -> Result<TrustStatus> {
    let settings = Settings::load(&settings_path()).context("could not read the settings")?;
    Ok(pin_store().status(&settings, root))
}

/// Prints one changed file for people: its state and its diff, escaped and coloured.
pub(crate) fn print_pinned_file(f: &PinnedFile) {
    let (word, note) = match f.state {
        PinState::Changed => ("changed", ""),
        PinState::Created => ("created", " (it did not exist when trusted)"),
        PinState::Deleted => ("deleted", ""),
        PinState::Unreadable => ("unreadable", " (refused until it can be read)"),
        PinState::Unchanged => return,
    };
    outln!(
        "{} {} {}{note}",
        paint(word, output::YELLOW, false),
        f.kind,
        output::path(&f.path),
    );
    if !f.pinned_copy {
        outln!(
            "  {}",
            paint(
                "no copy of the pinned content was kept (trusted by an older copse-hooks): showing the file as it is now",
                output::DIM,
                false
            )
        );
    }
    if let Some(diff) = &f.diff {
        for line in diff.lines() {
            let code = match line.as_bytes().first() {
                Some(b'+') if !line.starts_with("+++") => Some(output::GREEN),
                Some(b'-') if !line.starts_with("---") => Some(output::RED),
                Some(b'@') => Some(output::DIM),
                _ => None,
            };
            let text = output::clean(line);
            match code {
                Some(c) => outln!("{}", paint(&text, c, false)),
                None => outln!("{text}"),
            }
        }
    }
}

/// `trust --diff [DIR]`: each pinned file that changed since the workspace was
/// trusted, as a unified diff against the pinned content.
pub fn trust_diff(global: &Global, dir: Option<&Path>) -> Result<ExitCode> {
    let root = root_arg(global, dir)?;
    let status = trust_status(&root)?;
    let command = format!("copse-hooks trust {}", copse_hooks::shell_quote(&root));
    if global.json {
        let (trusted, pinned, files) = match &status {
            TrustStatus::NotTrusted => (false, false, Vec::new()),
            TrustStatus::Unpinned => (true, false, Vec::new()),
            TrustStatus::Pinned(files) => (true, true, files.clone()),
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&wire::TrustDiffOutput {
                version: copse_hooks_wire::OUTPUT_VERSION,
                workspace: root.display().to_string(),
                trusted,
                pinned,
                changed: files.iter().any(|f| f.state != PinState::Unchanged),
                files: files
                    .iter()
                    .map(|f| wire::PinnedFileDiff {
                        path: f.path.display().to_string(),
                        kind: f.kind.to_string(),
                        state: f.state.as_str().to_string(),
                        pinned_sha256: f.pinned_sha256.clone(),
                        current_sha256: f.current_sha256.clone(),
                        pinned_copy: f.pinned_copy,
                        diff: f.diff.clone(),
                    })
                    .collect(),
                trust_command: command,
            })?
        );
        return Ok(ExitCode::SUCCESS);
    }
    let files = match status {
        TrustStatus::NotTrusted => {
            outln!(
                "{} is not trusted: nothing is pinned, so there is nothing to compare.",
                output::path(&root)
            );
            outln!(
                "Review its hooks with `copse-hooks --workspace {0} list --untrusted-preview`, then `{command}`.",
                copse_hooks::shell_quote(&root)
            );
            return Ok(ExitCode::SUCCESS);
        }
        TrustStatus::Unpinned => {
            outln!(
                "{} is trusted without pins (a plain path in settings.json): its configs' current content runs, so there is nothing to compare.",
                output::path(&root)
            );
            outln!("Pin it with `{command}`.");
            return Ok(ExitCode::SUCCESS);
        }
        TrustStatus::Pinned(files) => files,
    };
    let changed: Vec<&PinnedFile> = files
        .iter()
        .filter(|f| f.state != PinState::Unchanged)
        .collect();
    // Candidates pinned as absent that are still absent are not files to speak of.
    let files: Vec<&PinnedFile> = files
        .iter()
        .filter(|f| f.pinned_sha256.is_some() || f.state != PinState::Unchanged)
        .collect();
    if changed.is_empty() {
        outln!(
            "Nothing changed in {} since it was trusted ({} pinned file{}).",
            output::path(&root),
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{} of {} pinned file{} in {} changed since the workspace was trusted; their hooks do not run:",
        changed.len(),
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        output::path(&root)
    );
    for f in changed {
        print_pinned_file(f);
    }
    outln!("To let them run as they are now: {command}");
    Ok(ExitCode::SUCCESS)
}
