//! `$COPSE_DIR` holds prompts, tool inputs and trust decisions: it is the user's
//! alone. The directory is created `0700` and its files `0600`; an existing wider mode
//! is tightened and said (a notice for the host to show).

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
    Ok(Some(format!(
        "{what} {} was readable by others (mode {current:o}); tightened to {:o}",
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

#[cfg(test)]
mod tests {
    use super::*;

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
