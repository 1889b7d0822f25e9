//! `enable`, `disable`, `trust [DIR]`, `untrust [DIR]`: change `$COPSE_DIR/settings.json`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use copse_hooks::{Engine, EngineConfig};
use copse_hooks::{Settings, SettingsError};
use copse_hooks_wire::output as wire;

use crate::cli::Global;
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
    for p in keep_pinned_copies(pins.iter().chain(scripts.iter())) {
        errln!(
            "{}: {}",
            paint("warning", output::YELLOW, true),
            output::clean(&p)
        );
    }
    if let Ok(settings) = Settings::load(&path) {
        prune_pinned_copies(&settings);
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
        prune_pinned_copies(&settings);
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

// ---------------------------------------------------------------------------------
// Pinned content: what `trust --diff` and `watch` compare against.
//
// Settings keep only each pinned file's SHA-256. To show *what* changed, `trust`
// also keeps a copy of every pinned file's bytes under `$COPSE_DIR/trust/<sha256>`
// (content-addressed, private 0600 in a 0700 directory, at most 1 MiB each like the
// pins themselves). A copy is written only when the bytes read hash to the pin, so a
// file edited between the pin and the copy is never mistaken for the pinned one, and
// a copy is used only when its bytes still hash to its name. Copies no pin refers to
// are removed on every `trust`/`untrust`, so the store never outgrows the pins.

/// The largest file copied or diffed (the size limit of a pinned config).
const MAX_PINNED_BYTES: u64 = 1 << 20;

fn pin_store() -> PathBuf {
    EngineConfig::process_copse_dir().join("trust")
}

/// Up to `MAX_PINNED_BYTES` of a regular file: `Ok(None)` when it does not exist.
fn read_bounded(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read as _;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_PINNED_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_PINNED_BYTES {
        return Err(std::io::Error::other("larger than 1 MiB"));
    }
    Ok(Some(bytes))
}

fn is_sha256_hex(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Keeps a copy of each pinned file whose current bytes still hash to its pin.
/// Best effort: a copy that cannot be written only means `--diff` cannot show that
/// file's old content (it says so), so failures are reported, not fatal.
fn keep_pinned_copies<'a>(
    pins: impl Iterator<Item = (&'a PathBuf, &'a Option<String>)>,
) -> Vec<String> {
    use std::io::Write as _;
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    let store = pin_store();
    let mut problems = Vec::new();
    if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(&store)
        && e.kind() != std::io::ErrorKind::AlreadyExists
    {
        return vec![format!("could not create {}: {e}", store.display())];
    }
    for (path, hash) in pins {
        let Some(hash) = hash.as_deref().filter(|h| is_sha256_hex(h)) else {
            continue;
        };
        let target = store.join(hash);
        if target.exists() {
            continue;
        }
        let Ok(Some(bytes)) = read_bounded(path) else {
            continue;
        };
        if copse_hooks::sha256_hex(&bytes) != hash {
            // Edited since it was pinned: these are not the pinned bytes.
            continue;
        }
        let tmp = store.join(format!(".{hash}.{}", std::process::id()));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&bytes).and_then(|()| f.sync_all()))
            .and_then(|()| std::fs::rename(&tmp, &target));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            problems.push(format!(
                "could not keep a copy of {} for `trust --diff`: {e}",
                path.display()
            ));
        }
    }
    problems
}

/// The pinned bytes of `hash`, when a copy was kept and is intact.
fn pinned_copy(hash: &str) -> Option<Vec<u8>> {
    if !is_sha256_hex(hash) {
        return None;
    }
    let bytes = read_bounded(&pin_store().join(hash)).ok()??;
    (copse_hooks::sha256_hex(&bytes) == hash).then_some(bytes)
}

/// Removes the copies no trusted workspace pins any more.
fn prune_pinned_copies(settings: &Settings) {
    let store = pin_store();
    let Ok(entries) = std::fs::read_dir(&store) else {
        return;
    };
    let live: std::collections::HashSet<&str> = settings
        .trusted_workspaces
        .iter()
        .flat_map(|t| {
            t.pins()
                .into_iter()
                .flatten()
                .chain(t.script_pins().into_iter().flatten())
        })
        .filter_map(|(_, h)| h.as_deref())
        .collect();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let stale_tmp = name.starts_with('.') && is_sha256_hex(name.get(1..65).unwrap_or(""));
        if (is_sha256_hex(&name) && !live.contains(name.as_ref())) || stale_tmp {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// How a pinned file compares with what was pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PinState {
    Unchanged,
    Changed,
    Created,
    Deleted,
    Unreadable,
}

impl PinState {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PinState::Unchanged => "unchanged",
            PinState::Changed => "changed",
            PinState::Created => "created",
            PinState::Deleted => "deleted",
            PinState::Unreadable => "unreadable",
        }
    }
}

/// One pinned file now.
#[derive(Debug, Clone)]
pub(crate) struct PinnedFile {
    pub path: PathBuf,
    /// `config` or `script`.
    pub kind: &'static str,
    pub state: PinState,
    pub pinned_sha256: Option<String>,
    pub current_sha256: Option<String>,
    /// Whether the pinned content was available to diff against.
    pub pinned_copy: bool,
    /// A unified diff (pinned → now), when the file changed.
    pub diff: Option<String>,
}

/// What a workspace's trust entry says now.
#[derive(Debug, Clone)]
pub(crate) enum TrustStatus {
    NotTrusted,
    /// Trusted as a plain path: nothing pinned, the current content runs.
    Unpinned,
    Pinned(Vec<PinnedFile>),
}

/// Compares every file pinned for `root` with the disk.
pub(crate) fn trust_status(root: &Path) -> Result<TrustStatus> {
    let settings = Settings::load(&settings_path()).context("could not read the settings")?;
    let Some(entry) = settings
        .trusted_workspaces
        .iter()
        .rev()
        .find(|t| t.path() == root)
    else {
        return Ok(TrustStatus::NotTrusted);
    };
    let Some(configs) = entry.pins() else {
        return Ok(TrustStatus::Unpinned);
    };
    let mut files = Vec::new();
    let pinned = configs.iter().map(|p| (p, "config")).chain(
        entry
            .script_pins()
            .into_iter()
            .flatten()
            .map(|p| (p, "script")),
    );
    for ((path, pin), kind) in pinned {
        files.push(compare_pin(path, pin.as_deref(), kind));
    }
    Ok(TrustStatus::Pinned(files))
}

fn compare_pin(path: &Path, pin: Option<&str>, kind: &'static str) -> PinnedFile {
    let current = read_bounded(path);
    let current_sha256 = match &current {
        Ok(Some(b)) => Some(copse_hooks::sha256_hex(b)),
        _ => None,
    };
    let state = match (&current, pin) {
        (Err(_), _) => PinState::Unreadable,
        (Ok(None), None) => PinState::Unchanged,
        (Ok(None), Some(_)) => PinState::Deleted,
        (Ok(Some(_)), None) => PinState::Created,
        (Ok(Some(_)), Some(p)) if current_sha256.as_deref() == Some(p) => PinState::Unchanged,
        (Ok(Some(_)), Some(_)) => PinState::Changed,
    };
    let old = match pin {
        None => Some(Vec::new()),
        Some(hash) => pinned_copy(hash),
    };
    let diff = match (state, &current) {
        (PinState::Unchanged | PinState::Unreadable, _) => None,
        (_, Ok(now)) => {
            let now = now.clone().unwrap_or_default();
            let label = path.display().to_string();
            Some(unified_diff(
                &String::from_utf8_lossy(old.as_deref().unwrap_or_default()),
                &String::from_utf8_lossy(&now),
                &if old.is_some() {
                    format!("{label} (pinned)")
                } else {
                    format!("{label} (pinned content not kept)")
                },
                &format!("{label} (now)"),
            ))
        }
        (_, Err(_)) => None,
    };
    PinnedFile {
        path: path.to_path_buf(),
        kind,
        state,
        pinned_sha256: pin.map(str::to_string),
        current_sha256,
        pinned_copy: old.is_some(),
        diff,
    }
}

/// A unified diff of two texts with three lines of context (empty when equal). Lines
/// are the texts' own: escape them before they reach a terminal.
pub(crate) fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    const CONTEXT: usize = 3;
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = diff_ops(&a, &b);
    if ops.iter().all(|(tag, _, _)| *tag == ' ') {
        return String::new();
    }
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    // Line numbers before each op (1-based in the header).
    let mut at = Vec::with_capacity(ops.len());
    let (mut i, mut j) = (0usize, 0usize);
    for (tag, _, _) in &ops {
        at.push((i, j));
        match tag {
            ' ' => (i, j) = (i + 1, j + 1),
            '-' => i += 1,
            _ => j += 1,
        }
    }
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k].0 != ' ').collect();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CONTEXT);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 2 * CONTEXT + 1 {
            end = changed[k];
            k += 1;
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let (oi, nj) = at[start];
        let old_len = ops[start..end].iter().filter(|o| o.0 != '+').count();
        let new_len = ops[start..end].iter().filter(|o| o.0 != '-').count();
        let old_from = if old_len == 0 { oi } else { oi + 1 };
        let new_from = if new_len == 0 { nj } else { nj + 1 };
        out.push_str(&format!(
            "@@ -{old_from},{old_len} +{new_from},{new_len} @@\n"
        ));
        for (tag, line, _) in &ops[start..end] {
            out.push(*tag);
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The edit script from `a` to `b`: common prefix and suffix, and a longest common
/// subsequence of the middle (the whole middle replaced when it is too large to
/// compare line by line in bounded memory).
fn diff_ops<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(char, &'a str, ())> {
    const MAX_CELLS: usize = 4_000_000;
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops: Vec<(char, &str, ())> = a[..prefix].iter().map(|l| (' ', *l, ())).collect();
    let (n, m) = (am.len(), bm.len());
    if n.saturating_mul(m) > MAX_CELLS || n == 0 || m == 0 {
        ops.extend(am.iter().map(|l| ('-', *l, ())));
        ops.extend(bm.iter().map(|l| ('+', *l, ())));
    } else {
        // lcs[i][j]: the LCS length of am[i..] and bm[j..].
        let w = m + 1;
        let mut lcs = vec![0u32; (n + 1) * w];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i * w + j] = if am[i] == bm[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n && j < m {
            if am[i] == bm[j] {
                ops.push((' ', am[i], ()));
                (i, j) = (i + 1, j + 1);
            } else if lcs[(i + 1) * w + j] >= lcs[i * w + j + 1] {
                ops.push(('-', am[i], ()));
                i += 1;
            } else {
                ops.push(('+', bm[j], ()));
                j += 1;
            }
        }
        ops.extend(am[i..].iter().map(|l| ('-', *l, ())));
        ops.extend(bm[j..].iter().map(|l| ('+', *l, ())));
    }
    ops.extend(a[a.len() - suffix..].iter().map(|l| (' ', *l, ())));
    ops
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_diff_shows_hunks_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        let new = "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\n";
        assert_eq!(
            unified_diff(old, new, "old", "new"),
            "--- old\n+++ new\n@@ -1,10 +1,11 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n h\n i\n j\n+k\n"
        );
        assert_eq!(unified_diff("x\n", "x\n", "o", "n"), "");
        assert_eq!(
            unified_diff("", "new\n", "o", "n"),
            "--- o\n+++ n\n@@ -0,0 +1,1 @@\n+new\n"
        );
        let far_old: String = (0..20).map(|i| format!("{i}\n")).collect();
        let far_new: String = (0..20)
            .map(|i| match i {
                2 => "two\n".to_string(),
                17 => "seventeen\n".to_string(),
                _ => format!("{i}\n"),
            })
            .collect();
        let d = unified_diff(&far_old, &far_new, "o", "n");
        assert!(d.contains("@@ -1,6 +1,6 @@"), "{d}");
        assert!(d.contains("@@ -15,6 +15,6 @@"), "{d}");
    }
}
