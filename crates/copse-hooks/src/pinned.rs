//! Pinned content: what `trust --diff`, `watch` and the page's Trust view compare
//! against.
//!
//! Settings keep only each pinned file's SHA-256. To show *what* changed, trusting
//! also keeps a copy of every pinned file's bytes under `$COPSE_DIR/trust/<sha256>`
//! (content-addressed, private 0600 in a 0700 directory, at most 1 MiB each like the
//! pins themselves). A copy is written only when the bytes read hash to the pin, so a
//! file edited between the pin and the copy is never mistaken for the pinned one, and
//! a copy is used only when its bytes still hash to its name. Copies no pin refers to
//! are removed ([`PinnedCopies::prune`]) on every trust and untrust, so the store never
//! outgrows the pins.

use std::path::{Path, PathBuf};

use crate::fsread::{MAX_CONFIG_BYTES, read_optional};
use crate::settings::{Settings, sha256_hex};

/// Why a copy of a pinned file could not be kept. Best effort: a missing copy only
/// means its old content cannot be shown (a diff says so).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PinnedCopyError {
    /// The store directory could not be created.
    #[error("could not create {path}: {cause}")]
    CreateStore {
        /// The store (`$COPSE_DIR/trust`).
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
    /// A pinned file's copy could not be written.
    #[error("could not keep a copy of {path} for `trust --diff`: {cause}")]
    Write {
        /// The pinned file.
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
}

/// The store of pinned files' bytes, `$COPSE_DIR/trust`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedCopies {
    store: PathBuf,
}

fn is_sha256_hex(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

impl PinnedCopies {
    /// The store of the `copse_dir` (`$COPSE_DIR`).
    pub fn in_copse_dir(copse_dir: &Path) -> PinnedCopies {
        PinnedCopies {
            store: copse_dir.join("trust"),
        }
    }

    /// The store's directory.
    pub fn path(&self) -> &Path {
        &self.store
    }

    /// Keeps a copy of each pinned file (path → SHA-256 pinned) whose current bytes
    /// still hash to its pin; returns what could not be kept.
    pub fn keep<'a>(
        &self,
        pins: impl IntoIterator<Item = (&'a PathBuf, &'a Option<String>)>,
    ) -> Vec<PinnedCopyError> {
        use std::io::Write as _;
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
        let store = &self.store;
        let mut problems = Vec::new();
        if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(store)
            && e.kind() != std::io::ErrorKind::AlreadyExists
        {
            return vec![PinnedCopyError::CreateStore {
                path: store.clone(),
                cause: e,
            }];
        }
        for (path, hash) in pins {
            let Some(hash) = hash.as_deref().filter(|h| is_sha256_hex(h)) else {
                continue;
            };
            let target = store.join(hash);
            if target.exists() {
                continue;
            }
            let Ok(Some(bytes)) = read_optional(path, MAX_CONFIG_BYTES) else {
                continue;
            };
            if sha256_hex(&bytes) != hash {
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
                problems.push(PinnedCopyError::Write {
                    path: path.clone(),
                    cause: e,
                });
            }
        }
        problems
    }

    /// The pinned bytes of `hash`, when a copy was kept and still hashes to it.
    pub fn get(&self, hash: &str) -> Option<Vec<u8>> {
        if !is_sha256_hex(hash) {
            return None;
        }
        let bytes = read_optional(&self.store.join(hash), MAX_CONFIG_BYTES).ok()??;
        (sha256_hex(&bytes) == hash).then_some(bytes)
    }

    /// Removes the copies no trusted workspace of `settings` pins any more (and
    /// temporary files a crashed write left).
    pub fn prune(&self, settings: &Settings) {
        let Ok(entries) = std::fs::read_dir(&self.store) else {
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

    /// Compares every file `settings` pins for `root` (as trusted, a canonical path)
    /// with the disk, diffing each changed one against its kept copy.
    pub fn status(&self, settings: &Settings, root: &Path) -> TrustStatus {
        let Some(entry) = settings
            .trusted_workspaces
            .iter()
            .rev()
            .find(|t| t.path() == root)
        else {
            return TrustStatus::NotTrusted;
        };
        let Some(configs) = entry.pins() else {
            return TrustStatus::Unpinned;
        };
        let pinned = configs.iter().map(|p| (p, PinnedKind::Config)).chain(
            entry
                .script_pins()
                .into_iter()
                .flatten()
                .map(|p| (p, PinnedKind::Script)),
        );
        TrustStatus::Pinned(
            pinned
                .map(|((path, pin), kind)| self.compare(path, pin.as_deref(), kind))
                .collect(),
        )
    }

    /// One pinned file (`pin`: the SHA-256 pinned, `None` when pinned as absent)
    /// compared with the disk.
    pub fn compare(&self, path: &Path, pin: Option<&str>, kind: PinnedKind) -> PinnedFile {
        // A pinned path that now goes through a symbolic link (the file, or a
        // directory on the way) is not read: it could point at a key, and a diff
        // would print it.
        let linked = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
            || std::fs::canonicalize(path).is_ok_and(|real| real != path);
        let current = if linked {
            Err(crate::fsread::ReadError::Io(std::io::Error::other(
                "it is reached through a symbolic link",
            )))
        } else {
            read_optional(path, MAX_CONFIG_BYTES)
        };
        let current_sha256 = match &current {
            Ok(Some(b)) => Some(sha256_hex(b)),
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
            Some(hash) => self.get(hash),
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
}

/// How a pinned file compares with what was pinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinState {
    /// Its bytes are the pinned bytes (or, pinned as absent, it is still absent).
    Unchanged,
    /// Its bytes differ from the pinned bytes.
    Changed,
    /// Pinned as absent, it exists now.
    Created,
    /// Pinned with content, it is gone.
    Deleted,
    /// It exists but cannot be read as a regular file of at most 1 MiB.
    Unreadable,
}

impl PinState {
    /// `unchanged`, `changed`, `created`, `deleted` or `unreadable`.
    pub fn as_str(self) -> &'static str {
        match self {
            PinState::Unchanged => "unchanged",
            PinState::Changed => "changed",
            PinState::Created => "created",
            PinState::Deleted => "deleted",
            PinState::Unreadable => "unreadable",
        }
    }
}

/// What a pinned file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinnedKind {
    /// A project hook config.
    Config,
    /// A script a project hook runs.
    Script,
}

impl PinnedKind {
    /// `config` or `script`.
    pub fn as_str(self) -> &'static str {
        match self {
            PinnedKind::Config => "config",
            PinnedKind::Script => "script",
        }
    }
}

impl std::fmt::Display for PinnedKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One pinned file now.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PinnedFile {
    /// The file.
    pub path: PathBuf,
    /// A config or a script.
    pub kind: PinnedKind,
    /// How it compares with what was pinned.
    pub state: PinState,
    /// The SHA-256 pinned (`None`: pinned as absent).
    pub pinned_sha256: Option<String>,
    /// The SHA-256 of its bytes now (`None`: absent or unreadable).
    pub current_sha256: Option<String>,
    /// Whether the pinned content was available to diff against.
    pub pinned_copy: bool,
    /// A unified diff (pinned → now), when the file changed. Its lines are the
    /// files' own: escape them before they reach a terminal or a page.
    pub diff: Option<String>,
}

/// What a workspace's trust entry says now.
#[derive(Debug, Clone)]
pub enum TrustStatus {
    /// Not trusted.
    NotTrusted,
    /// Trusted as a plain path: nothing pinned, the current content runs.
    Unpinned,
    /// Trusted with pins: each pinned file compared with the disk.
    Pinned(Vec<PinnedFile>),
}

/// A unified diff of two texts with three lines of context (empty when equal). Lines
/// are the texts' own: escape them before they reach a terminal.
pub fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    const CONTEXT: usize = 3;
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = diff_ops(&a, &b);
    if ops.iter().all(|(tag, _)| *tag == ' ') {
        return String::new();
    }
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    // Line numbers before each op (1-based in the header).
    let mut at = Vec::with_capacity(ops.len());
    let (mut i, mut j) = (0usize, 0usize);
    for (tag, _) in &ops {
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
        for (tag, line) in &ops[start..end] {
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
fn diff_ops<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(char, &'a str)> {
    const MAX_CELLS: usize = 4_000_000;
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops: Vec<(char, &str)> = a[..prefix].iter().map(|l| (' ', *l)).collect();
    let (n, m) = (am.len(), bm.len());
    if n.saturating_mul(m) > MAX_CELLS || n == 0 || m == 0 {
        ops.extend(am.iter().map(|l| ('-', *l)));
        ops.extend(bm.iter().map(|l| ('+', *l)));
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
                ops.push((' ', am[i]));
                (i, j) = (i + 1, j + 1);
            } else if lcs[(i + 1) * w + j] >= lcs[i * w + j + 1] {
                ops.push(('-', am[i]));
                i += 1;
            } else {
                ops.push(('+', bm[j]));
                j += 1;
            }
        }
        ops.extend(am[i..].iter().map(|l| ('-', *l)));
        ops.extend(bm[j..].iter().map(|l| ('+', *l)));
    }
    ops.extend(a[a.len() - suffix..].iter().map(|l| (' ', *l)));
    ops
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

    #[test]
    fn copies_are_kept_verified_and_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let copies = PinnedCopies::in_copse_dir(dir.path());
        let file = dir.path().join("hooks.json");
        std::fs::write(&file, "one\n").unwrap();
        let hash = sha256_hex(b"one\n");
        let stale = Some(sha256_hex(b"other\n"));
        let other = dir.path().join("other");
        std::fs::write(&other, "edited\n").unwrap();
        let pins = [(file.clone(), Some(hash.clone())), (other, stale.clone())];
        assert!(copies.keep(pins.iter().map(|(p, h)| (p, h))).is_empty());
        assert_eq!(copies.get(&hash).as_deref(), Some(&b"one\n"[..]));
        // A file edited before its copy was written is not mistaken for the pin.
        assert!(copies.get(stale.as_deref().unwrap()).is_none());

        let mut settings = Settings::default();
        settings.trust_pinned(
            dir.path(),
            [(file.clone(), Some(hash.clone()))].into(),
            Default::default(),
        );
        std::fs::write(&file, "two\n").unwrap();
        let TrustStatus::Pinned(files) = copies.status(&settings, dir.path()) else {
            panic!("pinned");
        };
        assert_eq!(files[0].state, PinState::Changed);
        assert!(files[0].pinned_copy);
        assert!(files[0].diff.as_deref().unwrap().contains("-one\n+two\n"));

        // A corrupted copy is not used; an unpinned one is pruned.
        std::fs::write(copies.path().join(&hash), "tampered").unwrap();
        assert!(copies.get(&hash).is_none());
        copies.prune(&Settings::default());
        assert!(!copies.path().join(&hash).exists());
    }
}
