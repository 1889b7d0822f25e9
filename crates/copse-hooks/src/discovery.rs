//! Discovery: which config files exist, which may be read, and their parsed form,
//! cached by file identity.
//!
//! A config is parsed and its matchers compiled once; later lookups only `stat` the
//! file and reuse the compiled hooks while its identity (device, inode, size,
//! modification and change times) is unchanged. A missing file is simply no hooks.
//! A file owned by another user (root aside) or writable by group or others is
//! refused as ssh refuses such a key file: none of its hooks run, and its warning
//! names the `chmod` (or `chown`) that fixes it ([`crate::private::insecurity`]).
//!
//! When a file is re-read: a long-lived registry does not even `stat` on every load.
//! From its third load on (a one-shot CLI gate loads twice and sets nothing up), each
//! load makes one freshness check ([`watch`]: one non-blocking read of the process's
//! inotify descriptor). Nothing relevant since the last check → every location that
//! inotify covers is answered from the cache, existing or absent, without touching
//! the filesystem. A relevant change (the file, its directory or the path to it
//! created, written, renamed, deleted or `chmod`ed; an overflowed event queue) starts a
//! new generation: each location is `stat`ed again at its next load and re-read when
//! its identity changed, as above. Locations inotify cannot vouch for (a symbolic link
//! on the path, a file with several hard links, a network or FUSE filesystem, a watch
//! that could not be added, no inotify) are `stat`ed at every load. An edit is seen by
//! the first load that starts after the editing call returned: the kernel queues the
//! event within that call.

mod watch;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::dialect::{ConfigWarning, Dialect, ParsedConfig, Scope};

/// One place a config file may live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigLocation {
    /// The file path.
    pub path: PathBuf,
    /// The dialect of the file.
    pub dialect: Dialect,
    /// User or project.
    pub scope: Scope,
    /// The workspace root of a project config.
    pub root: Option<PathBuf>,
}

/// Where the Gemini CLI and Codex layers outside the home directory live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VendorPaths {
    /// Gemini CLI's system settings (`$GEMINI_CLI_SYSTEM_SETTINGS_PATH`, default
    /// `/etc/gemini-cli/settings.json`).
    pub gemini_system_settings: PathBuf,
    /// Codex's home (`$CODEX_HOME`, default `~/.codex`).
    pub codex_home: PathBuf,
    /// Codex's system config layer (`/etc/codex`).
    pub codex_system_dir: PathBuf,
    /// Copilot CLI's home (`$COPILOT_HOME`, default `~/.copilot`): user hook files in
    /// its `hooks/`.
    pub copilot_home: PathBuf,
    /// Copilot CLI's machine-wide policy hook files (`/etc/github-copilot/policy.d`).
    pub copilot_policy_dir: PathBuf,
}

impl VendorPaths {
    /// The vendors' defaults for a home directory.
    pub fn for_home(home: &Path) -> VendorPaths {
        VendorPaths {
            gemini_system_settings: PathBuf::from("/etc/gemini-cli/settings.json"),
            codex_home: home.join(".codex"),
            codex_system_dir: PathBuf::from("/etc/codex"),
            copilot_home: home.join(".copilot"),
            copilot_policy_dir: PathBuf::from(COPILOT_POLICY_DIR),
        }
    }
}

/// Copilot CLI's policy directory on Linux and macOS (GitHub hooks reference, "Policy
/// hooks").
pub const COPILOT_POLICY_DIR: &str = "/etc/github-copilot/policy.d";

/// The `*.json` files of `dir`, sorted by name (none when it cannot be read): how
/// Copilot CLI finds its hook files, in the alphabetical order it loads them.
pub fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "json") && !p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Every config location for a home directory, the copse data directory
/// (`$COPSE_DIR`, default `~/.copse`) and workspace roots, with the vendors' default
/// system paths. See [`locations_with`].
pub fn locations(home: &Path, copse_dir: &Path, roots: &[PathBuf]) -> Vec<ConfigLocation> {
    locations_with(home, copse_dir, roots, &VendorPaths::for_home(home))
}

/// The sorted subdirectories of `dir` (none when it cannot be read).
fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Every config location, in configured (merge) order: the user-level configs first
/// (Cursor, Claude, Copse; Gemini system, user and extensions; Codex system, user and
/// plugins — system, extension and plugin files count as user scope: the user or
/// their administrator installed them; Copilot's `~/.copilot/hooks/*.json`), then each
/// root's project configs (Cursor, Claude, Copse, Gemini, Codex, Copilot's
/// `.github/hooks/*.json`). Copilot's policy files (`/etc/github-copilot/policy.d/`)
/// come before all of them, as managed configs. Extensions, plugins and Copilot's
/// `*.json` files are enumerated now: one added later is found by the next engine.
pub fn locations_with(
    home: &Path,
    copse_dir: &Path,
    roots: &[PathBuf],
    vendor: &VendorPaths,
) -> Vec<ConfigLocation> {
    let user = |path: PathBuf, dialect: Dialect| ConfigLocation {
        path,
        dialect,
        scope: Scope::User,
        root: None,
    };
    // Copilot's policy hook files: machine-wide, loaded before everything else.
    let mut out: Vec<ConfigLocation> = json_files(&vendor.copilot_policy_dir)
        .into_iter()
        .map(|path| ConfigLocation {
            path,
            dialect: Dialect::Copilot,
            scope: Scope::Managed,
            root: None,
        })
        .collect();
    out.extend([
        user(home.join(".cursor").join("hooks.json"), Dialect::Cursor),
        user(home.join(".claude").join("settings.json"), Dialect::Claude),
        user(copse_dir.join("hooks.json"), Dialect::Copse),
        user(vendor.gemini_system_settings.clone(), Dialect::Gemini),
        user(home.join(".gemini").join("settings.json"), Dialect::Gemini),
    ]);
    for ext in subdirs(&home.join(".gemini").join("extensions")) {
        out.push(user(ext.join("hooks").join("hooks.json"), Dialect::Gemini));
    }
    for dir in [&vendor.codex_system_dir, &vendor.codex_home] {
        out.push(user(dir.join("hooks.json"), Dialect::Codex));
        out.push(user(dir.join("config.toml"), Dialect::Codex));
    }
    // Installed plugins: plugins/cache/<marketplace>/<plugin>/<version>/hooks/hooks.json.
    for market in subdirs(&vendor.codex_home.join("plugins").join("cache")) {
        for plugin in subdirs(&market) {
            for version in subdirs(&plugin) {
                out.push(user(
                    version.join("hooks").join("hooks.json"),
                    Dialect::Codex,
                ));
            }
        }
    }
    for path in json_files(&vendor.copilot_home.join("hooks")) {
        out.push(user(path, Dialect::Copilot));
    }
    for root in roots {
        let project = |path: PathBuf, dialect: Dialect| ConfigLocation {
            path,
            dialect,
            scope: Scope::Project,
            root: Some(root.clone()),
        };
        out.push(project(
            root.join(".cursor").join("hooks.json"),
            Dialect::Cursor,
        ));
        for file in ["settings.json", "settings.local.json"] {
            out.push(project(root.join(".claude").join(file), Dialect::Claude));
        }
        out.push(project(
            root.join(".copse").join("hooks.json"),
            Dialect::Copse,
        ));
        out.push(project(
            root.join(".gemini").join("settings.json"),
            Dialect::Gemini,
        ));
        out.push(project(
            root.join(".codex").join("hooks.json"),
            Dialect::Codex,
        ));
        out.push(project(
            root.join(".codex").join("config.toml"),
            Dialect::Codex,
        ));
        for path in json_files(&root.join(".github").join("hooks")) {
            out.push(project(path, Dialect::Copilot));
        }
    }
    out
}

pub use crate::dialect::adapter;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileIdentity {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<SystemTime>,
    ctime: (i64, i64),
}

impl FileIdentity {
    fn of(meta: &std::fs::Metadata) -> FileIdentity {
        use std::os::unix::fs::MetadataExt;
        FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            modified: meta.modified().ok(),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

#[derive(Debug)]
struct Slot {
    location: ConfigLocation,
    cache: Mutex<SlotCache>,
}

/// A parsed config, the identity of the file it came from, and its content hash.
type Cached = (FileIdentity, Arc<ParsedConfig>, Option<String>);

#[derive(Debug, Default)]
struct SlotCache {
    /// The last parse, kept while the file's identity is unchanged.
    parsed: Option<Cached>,
    /// The last answer and the freshness generation it was verified under (a `stat`
    /// made while inotify watched everything it depends on); `None` when it must be
    /// `stat`ed again.
    answer: Option<(u64, LoadedConfig)>,
}

/// A loaded config: where it is and what it declares.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    /// Where the file is.
    pub location: ConfigLocation,
    /// Its hooks and warnings (empty when the file does not exist).
    pub config: Arc<ParsedConfig>,
    /// Whether the file exists.
    pub exists: bool,
    /// SHA-256 (hex) of the bytes that were parsed, when the file exists.
    pub hash: Option<String>,
}

/// The config cache for a set of locations.
#[derive(Debug)]
pub struct Registry {
    slots: Vec<Slot>,
    /// Filesystem touches (a `stat` or a read): a test seam proving that a gate
    /// with hooks off touches no config file, and that a fresh cache touches nothing.
    accesses: std::sync::atomic::AtomicU64,
    /// The one freshness check per load.
    fresh: watch::Freshness,
}

impl Registry {
    /// A registry over these locations (nothing is read yet).
    pub fn new(locations: Vec<ConfigLocation>) -> Registry {
        Registry {
            slots: locations
                .into_iter()
                .map(|location| Slot {
                    location,
                    cache: Mutex::new(SlotCache::default()),
                })
                .collect(),
            accesses: std::sync::atomic::AtomicU64::new(0),
            fresh: watch::Freshness::default(),
        }
    }

    /// How many times this registry has touched the filesystem.
    pub fn file_accesses(&self) -> u64 {
        self.accesses.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Loads every location `allow` admits, re-reading only files that changed (and,
    /// from the third load on, not even `stat`ing the ones inotify vouches for when
    /// nothing changed).
    pub fn load(&self, allow: impl Fn(&ConfigLocation) -> bool) -> Vec<LoadedConfig> {
        let count = || {
            self.accesses
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let fresh = self.fresh.check(&self.slots, &count);
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| allow(&s.location))
            .map(|(i, s)| {
                let generation = fresh
                    .as_ref()
                    .filter(|f| f.watches(i))
                    .map(|f| f.generation);
                s.load(generation, &self.accesses)
            })
            .collect()
    }
}

impl Slot {
    /// The slot's config. `generation`: the freshness generation when inotify watches
    /// this slot (an answer verified under it is served without a `stat`).
    fn load(
        &self,
        generation: Option<u64>,
        accesses: &std::sync::atomic::AtomicU64,
    ) -> LoadedConfig {
        // A poisoned lock only means another thread panicked mid-parse; the cached
        // value is either complete or absent, so recover it.
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let (Some(now), Some((verified, answer))) = (generation, &cache.answer)
            && *verified == now
        {
            return answer.clone();
        }
        let (answer, trust) = self.examine(&mut cache.parsed, accesses);
        cache.answer = generation.filter(|_| trust).map(|g| (g, answer.clone()));
        answer
    }

    /// `stat`s the file and re-reads it if its identity changed; whether inotify can
    /// vouch for the answer: not for a file with several hard links (a write through
    /// another link is an event for that link's directory, not ours; the file's own
    /// watch sees it too, but a file shared that way is examined every time anyway),
    /// nor for a file that could not be examined.
    fn examine(
        &self,
        parsed_cache: &mut Option<Cached>,
        accesses: &std::sync::atomic::AtomicU64,
    ) -> (LoadedConfig, bool) {
        let count_access = || {
            accesses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let loc = &self.location;
        count_access();
        let meta = match std::fs::metadata(&loc.path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let absent = LoadedConfig {
                    location: loc.clone(),
                    config: Arc::new(ParsedConfig::default()),
                    exists: false,
                    hash: None,
                };
                return (absent, true);
            }
            // EACCES on a parent, ELOOP, ENOTDIR...: the file may exist; say so.
            Err(e) => {
                let unexamined = LoadedConfig {
                    location: loc.clone(),
                    config: Arc::new(ParsedConfig {
                        hooks: Vec::new(),
                        warnings: vec![ConfigWarning {
                            source: loc.path.clone(),
                            scope: loc.scope,
                            event: None,
                            message: format!("could not be examined ({e}) — file ignored"),
                        }],
                        ..ParsedConfig::default()
                    }),
                    exists: true,
                    hash: None,
                };
                // Whatever made it unexaminable may change out of the watches' sight.
                return (unexamined, false);
            }
        };
        let identity = FileIdentity::of(&meta);
        let single_link = {
            use std::os::unix::fs::MetadataExt as _;
            meta.nlink() <= 1
        };
        if let Some((id, cfg, hash)) = parsed_cache.as_ref()
            && *id == identity
        {
            let same = LoadedConfig {
                location: loc.clone(),
                config: Arc::clone(cfg),
                exists: true,
                hash: hash.clone(),
            };
            return (same, single_link);
        }
        let mut hash = None;
        count_access();
        // A managed file must be root's, not merely this user's or root's.
        let read = if loc.scope == Scope::Managed {
            crate::managed::read_root_owned(&loc.path)
        } else {
            crate::fsread::read_config(&loc.path, crate::fsread::MAX_CONFIG_BYTES)
        };
        let parsed = match read {
            Ok(bytes) => {
                hash = Some(crate::settings::sha256_hex(&bytes));
                let text = String::from_utf8_lossy(&bytes);
                let mut parsed =
                    adapter(loc.dialect).parse(&text, &loc.path, loc.scope, loc.root.as_deref());
                // Our own `copse-hooks shim --agent NAME` entries are not hooks.
                crate::dialect::own::drop_shim_entries(&mut parsed);
                parsed
            }
            Err(crate::fsread::ReadError::Insecure(why)) => {
                // The content is hashed (never parsed) so a pinned trust still
                // matches: the notice is the refusal and its fix, not "changed".
                hash = crate::fsread::read_regular(&loc.path, crate::fsread::MAX_CONFIG_BYTES)
                    .ok()
                    .map(|b| crate::settings::sha256_hex(&b));
                ParsedConfig {
                    warnings: vec![ConfigWarning {
                        source: loc.path.clone(),
                        scope: loc.scope,
                        event: None,
                        message: format!(
                            "{} — file ignored, none of its hooks run; fix it with `{}`",
                            why.reason, why.fix
                        ),
                    }],
                    refused: Some(crate::dialect::Refusal {
                        reason: why.reason.clone(),
                        fix: why.fix.clone(),
                    }),
                    ..ParsedConfig::default()
                }
            }
            // It exists (it was examined) but cannot be read as a config: refused, so
            // the gates its hooks would have judged are blocked, never passed.
            Err(e) => ParsedConfig {
                extras: Vec::new(),
                switches: Default::default(),
                hooks: Vec::new(),
                warnings: vec![ConfigWarning {
                    source: loc.path.clone(),
                    scope: loc.scope,
                    event: None,
                    message: format!("could not be read: {e} — file ignored"),
                }],
                refused: Some(crate::dialect::Refusal {
                    reason: format!("could not be read ({e})"),
                    fix: format!(
                        "make {} a readable regular file, or remove it",
                        crate::private::shell_quote(&loc.path)
                    ),
                }),
                ..ParsedConfig::default()
            },
        };
        let parsed = Arc::new(parsed);
        *parsed_cache = Some((identity, Arc::clone(&parsed), hash.clone()));
        let read = LoadedConfig {
            location: loc.clone(),
            config: parsed,
            exists: true,
            hash,
        };
        (read, single_link)
    }
}
