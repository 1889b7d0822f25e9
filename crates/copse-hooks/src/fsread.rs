//! Reading files an attacker may control (configs, settings, pinned scripts, a
//! `read_file` target) without hanging or exhausting memory.
//!
//! The file is opened without blocking (`O_NONBLOCK`: a FIFO with no writer opens at
//! once), must be a regular file once open (`fstat` on the descriptor, so a swap after
//! a `stat` cannot matter), and is read up to a cap: a symlink to `/dev/zero`, a FIFO,
//! a device or a huge file is an error naming what it is, never an endless read.
//! The caller hashes, parses and shows the one buffer returned.

use std::io::Read as _;
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::Path;

/// The cap on a config, settings file or pinned script: 1 MiB.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// It exists but is not a regular file.
    #[error("is not a regular file (it is a {kind})")]
    NotRegular {
        /// What it is: `FIFO`, `character device`, `directory`, ...
        kind: &'static str,
    },
    /// It is larger than the cap.
    #[error("is larger than the {limit}-byte limit")]
    TooLarge {
        /// The cap.
        limit: u64,
    },
    /// Owned by another user or writable by group or others: refused as ssh refuses
    /// such an `authorized_keys` ([`crate::private::insecurity`]).
    #[error("{0}")]
    Insecure(crate::private::Insecure),
    /// Opening or reading failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl ReadError {
    /// Whether the file does not exist (`ENOENT`, or a missing parent directory).
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

fn kind_of(ft: std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "directory"
    } else if ft.is_fifo() {
        "FIFO"
    } else if ft.is_char_device() {
        "character device"
    } else if ft.is_block_device() {
        "block device"
    } else if ft.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// Reads a regular file of at most `limit` bytes, without blocking on open.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    read_checked(path, limit, |_, _| None)
}

/// [`read_regular`] for a config or settings file: also refused
/// ([`ReadError::Insecure`]) when the file, as opened, is owned by another user or
/// writable by group or others. The check is on the open descriptor, so the bytes
/// returned are the bytes of the file that was checked.
pub fn read_config(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    read_checked(path, limit, crate::private::insecurity)
}

/// [`read_regular`], also refused ([`ReadError::Insecure`]) when `owner` objects to
/// the file as opened (checked on the open descriptor).
pub(crate) fn read_checked(
    path: &Path,
    limit: u64,
    owner: impl Fn(&Path, &std::fs::Metadata) -> Option<crate::private::Insecure>,
) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(ReadError::NotRegular {
            kind: kind_of(meta.file_type()),
        });
    }
    if let Some(why) = owner(path, &meta) {
        return Err(ReadError::Insecure(why));
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge { limit });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        // It grew while being read.
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

/// The cap on the `read_file` content given to hooks: 1 MiB.
pub const MAX_READ_FILE_CONTENT: u64 = 1 << 20;

/// The first `limit` bytes of a regular file (opened without blocking), and whether
/// the file was longer. Not a regular file (a FIFO, `/dev/zero`, a directory) is an
/// error: nothing is read from it.
pub fn read_prefix(path: &Path, limit: u64) -> Result<(Vec<u8>, bool), ReadError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(ReadError::NotRegular {
            kind: kind_of(meta.file_type()),
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(limit)).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    let cut = bytes.len() as u64 > limit;
    bytes.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    Ok((bytes, cut))
}

/// [`read_regular`], with a missing file as `None`.
pub fn read_optional(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, ReadError> {
    match read_regular(path, limit) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_capped_and_special_files() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("a.json");
        std::fs::write(&small, "{}").unwrap();
        assert_eq!(read_regular(&small, 10).unwrap(), b"{}");
        assert!(matches!(
            read_regular(&small, 1),
            Err(ReadError::TooLarge { limit: 1 })
        ));
        assert!(
            read_optional(&dir.path().join("none"), 10)
                .unwrap()
                .is_none()
        );
        let err = read_regular(Path::new("/dev/zero"), 10).unwrap_err();
        assert_eq!(
            err.to_string(),
            "is not a regular file (it is a character device)"
        );
        let err = read_regular(dir.path(), 10).unwrap_err();
        assert!(
            matches!(err, ReadError::NotRegular { kind: "directory" }),
            "{err}"
        );
    }
}
