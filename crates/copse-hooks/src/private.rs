//! `$COPSE_DIR` holds prompts, tool inputs and trust decisions: it is the user's
//! alone. The directory is created `0700` and its files `0600`; an existing wider mode
//! is tightened and said (a notice for the host to show).
//!
//! Config and settings files are checked as ssh checks `authorized_keys`
//! ([`insecurity`]): one owned by another user (root aside) or writable by group or
//! others is refused, with the `chmod`/`chown` that fixes it. A hook runs as the user
//! and can widen a mode; refusing the file (rather than silently tightening it) means
//! whatever another user may have written through the wider mode never runs.

use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::Path;

/// The mode of `$COPSE_DIR`.
pub const DIR_MODE: u32 = 0o700;
/// The mode of every file in it.
pub const FILE_MODE: u32 = 0o600;

fn tighten(path: &Path, mode: u32, what: &str) -> std::io::Result<Option<String>> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let current = meta.permissions().mode() & 0o777;
    if current & !mode == 0 {
        return Ok(None);
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(current & mode))?;
    let access = if current & 0o022 != 0 {
        "writable"
    } else {
        "readable"
    };
    Ok(Some(format!(
        "{what} {} was {access} by others (mode {current:o}); tightened to {:o}",
        path.display(),
        current & mode
    )))
}

/// Creates `dir` (and its parents) with mode `0700`, or tightens an existing one.
/// Returns the notice when a mode was tightened.
pub fn ensure_dir(dir: &Path) -> std::io::Result<Option<String>> {
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(DIR_MODE)
            .create(dir)?;
        return Ok(None);
    }
    tighten(dir, DIR_MODE, "directory")
}

/// Tightens an existing file to `0600`. Returns the notice when it was wider.
pub fn tighten_file(path: &Path) -> std::io::Result<Option<String>> {
    tighten(path, FILE_MODE, "file")
}

/// The audit store's and the settings' own files in `$COPSE_DIR`, re-tightened on
/// every start ([`retighten`]).
const PRIVATE_FILES: &[&str] = &[
    "spine.db",
    "spine.db-wal",
    "spine.db-shm",
    "settings.lock",
    "settings.json",
    "hooks.json",
];

/// Re-tightens an existing `$COPSE_DIR` to `0700` and its known files to `0600`, on
/// every start: a hook can `chmod 777` them, and nothing else would undo it. A file
/// writable by group or others is left as it is, to be refused with its fix
/// ([`insecurity`]): tightening it would adopt what another user may have written.
/// A directory that is not the user's own, or a shared one (sticky, like `/tmp`), is
/// never touched. Returns one line per mode that let group or others write (a sign
/// of tampering, worth saying); a mode that only let them read is tightened quietly.
pub fn retighten(dir: &Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return Vec::new();
    };
    let shared = meta.permissions().mode() & 0o1000 != 0;
    if !meta.is_dir() || shared || meta.uid() != rustix::process::geteuid().as_raw() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let writable = |m: &std::fs::Metadata| m.permissions().mode() & 0o022 != 0;
    if let Ok(Some(line)) = tighten(dir, DIR_MODE, "directory")
        && writable(&meta)
    {
        out.push(line);
    }
    for name in PRIVATE_FILES {
        let path = dir.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        // A config or settings file others could write is refused with its fix
        // (never adopted); the audit store is tightened whatever its mode.
        let refusable = matches!(*name, "settings.json" | "hooks.json");
        if !meta.is_file() || (refusable && insecurity(&path, &meta).is_some()) {
            continue;
        }
        if let Ok(Some(line)) = tighten_file(&path)
            && writable(&meta)
        {
            out.push(line);
        }
    }
    out
}

/// Why a config or settings file with metadata `meta` must not be used, and the
/// command that fixes it: owned by a user other than this process's (or root), or
/// writable by group or others. `None` when it may be used.
pub fn insecurity(path: &Path, meta: &std::fs::Metadata) -> Option<Insecure> {
    use std::os::unix::fs::MetadataExt as _;
    let me = rustix::process::geteuid().as_raw();
    let owner = meta.uid();
    if owner != me && owner != 0 {
        return Some(Insecure {
            reason: format!("is owned by another user (uid {owner})"),
            fix: format!("chown {me} {}", shell_quote(path)),
        });
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Some(Insecure {
            reason: format!("is writable by group or others (mode {:o})", mode & 0o777),
            fix: format!("chmod go-w {}", shell_quote(path)),
        });
    }
    None
}

/// A refused config or settings file: why, and the command that fixes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insecure {
    /// Why, as a predicate of the file ("is writable by group or others (mode 666)").
    pub reason: String,
    /// The shell command that fixes it (`chmod go-w '/abs/path'`).
    pub fix: String,
}

impl std::fmt::Display for Insecure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; fix it with `{}`", self.reason, self.fix)
    }
}

/// `path` as one shell word: as is when it holds only safe characters, else single
/// quoted (a `'` inside written `'\''`), and never with a control character raw.
pub fn shell_quote(path: &Path) -> String {
    let text = path.display().to_string();
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        return text;
    }
    let mut out = String::from("'");
    for c in text.chars() {
        match c {
            '\'' => out.push_str("'\\''"),
            c if c.is_control() => out.push_str(&c.escape_default().to_string()),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_or_other_writable_or_foreign_files_are_insecure() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("hooks.json");
        std::fs::write(&f, "{}").unwrap();
        let check = |mode: u32| {
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).unwrap();
            insecurity(&f, &std::fs::metadata(&f).unwrap())
        };
        assert_eq!(check(0o644), None);
        assert_eq!(check(0o600), None);
        let bad = check(0o664).unwrap();
        assert_eq!(bad.reason, "is writable by group or others (mode 664)");
        assert_eq!(bad.fix, format!("chmod go-w {}", f.display()));
        assert!(check(0o646).is_some());
        assert_eq!(
            shell_quote(Path::new("/a b/it's")),
            "'/a b/it'\\''s'".to_string()
        );
    }

    #[test]
    fn creates_private_and_tightens_wider_modes() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("copse");
        assert_eq!(ensure_dir(&dir).unwrap(), None);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(
            ensure_dir(&dir)
                .unwrap()
                .unwrap()
                .contains("tightened to 700")
        );
        assert_eq!(mode(&dir), 0o700);
        let f = dir.join("settings.json");
        std::fs::write(&f, "{}").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(tighten_file(&f).unwrap().is_some());
        assert_eq!(mode(&f), 0o600);
        assert_eq!(tighten_file(&f).unwrap(), None);
    }
}
