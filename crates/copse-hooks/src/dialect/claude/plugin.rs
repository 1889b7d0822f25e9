//! Claude Code plugins: the hooks of enabled plugins.
//!
//! A settings file enables plugins with `"enabledPlugins": {"name@marketplace":
//! true}`; later (higher-precedence) files override earlier ones key by key. Claude
//! Code records where each installed plugin lives in
//! `~/.claude/plugins/installed_plugins.json` (`plugins` → id → an entry, or a list
//! of entries, with an `installPath`). A plugin ships its hooks in
//! `<installPath>/hooks/hooks.json`, in the settings `hooks` shape (plus an optional
//! `description`), and refers to its own files through `${CLAUDE_PLUGIN_ROOT}`,
//! which is expanded in each command and also set in the hook's environment.
//!
//! A plugin is trusted like the config that enabled it: only enabling files that
//! may run contribute, so a plugin named by an untrusted project enables nothing.
//! Its hooks are the user's own installed code and run as user hooks.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde_json::Value;

use super::Claude;
use crate::dialect::{Adapter, ParsedConfig, Scope};

/// The placeholder a plugin's commands use for its install directory.
pub const ROOT_VAR: &str = "${CLAUDE_PLUGIN_ROOT}";

/// The placeholder a plugin's commands use for its persistent data directory.
pub const DATA_VAR: &str = "${CLAUDE_PLUGIN_DATA}";

/// A plugin's persistent data directory (`CLAUDE_PLUGIN_DATA`): Claude Code keeps it
/// at `~/.claude/plugins/data/<id>/`, the id with every character other than ASCII
/// letters, digits, `_` and `-` replaced by `-` (`formatter@market` →
/// `formatter-market`), so it survives plugin updates. `~/.claude/plugins` is found
/// above the install path (plugins install under its `cache/`), else under `$HOME`.
pub fn data_dir(id: &str, install: &Path) -> Option<PathBuf> {
    let plugins = install
        .ancestors()
        .find(|a| {
            a.file_name().is_some_and(|n| n == "plugins")
                && a.parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == ".claude")
        })
        .map(Path::to_path_buf)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".claude").join("plugins"))
        })?;
    let name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    Some(plugins.join("data").join(name))
}

/// The most bytes read from `installed_plugins.json` or a plugin's `hooks.json`.
const FILE_CAP: u64 = 4 * 1024 * 1024;

/// `installed_plugins.json` under a home directory.
pub fn installed_file(home: &Path) -> PathBuf {
    home.join(".claude")
        .join("plugins")
        .join("installed_plugins.json")
}

/// Merges `enabledPlugins` maps in precedence order (later wins per plugin) and
/// returns the enabled ids.
pub fn enabled<'a>(maps: impl Iterator<Item = &'a BTreeMap<String, bool>>) -> Vec<String> {
    let mut merged: BTreeMap<String, bool> = BTreeMap::new();
    for m in maps {
        merged.extend(m.iter().map(|(k, v)| (k.clone(), *v)));
    }
    merged
        .into_iter()
        .filter_map(|(k, on)| on.then_some(k))
        .collect()
}

fn read_capped(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(FILE_CAP)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// Where installed plugins live, by id (`name@marketplace`).
pub fn install_paths(home: &Path) -> BTreeMap<String, PathBuf> {
    let Some(text) = read_capped(&installed_file(home)) else {
        return BTreeMap::new();
    };
    let Ok(doc) = serde_json::from_str::<Value>(&text) else {
        return BTreeMap::new();
    };
    let mut out = BTreeMap::new();
    let Some(plugins) = doc.get("plugins").and_then(Value::as_object) else {
        return out;
    };
    for (id, entry) in plugins {
        let entries: Vec<&Value> = match entry {
            Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        // The newest installation is listed last.
        if let Some(path) = entries
            .iter()
            .rev()
            .filter_map(|e| e.get("installPath").and_then(Value::as_str))
            .map(PathBuf::from)
            .find(|p| p.is_dir())
        {
            out.insert(id.clone(), path);
        }
    }
    out
}

/// A plugin's parsed hooks, with `${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_DATA}`
/// expanded. The data directory is created (as Claude Code does on first use) when a
/// hook of the plugin is found.
pub fn parse_plugin(id: &str, install: &Path, root: Option<&Path>) -> Option<ParsedConfig> {
    let file = install.join("hooks").join("hooks.json");
    let text = read_capped(&file)?;
    let mut parsed = Claude.parse(&text, &file, Scope::User, root);
    let install_text = install.display().to_string();
    let data = data_dir(id, install);
    if let Some(d) = &data
        && !parsed.hooks.is_empty()
    {
        // Best effort: a hook that needs the directory reports its own failure.
        let _ = std::fs::create_dir_all(d);
    }
    let data_text = data.as_ref().map(|d| d.display().to_string());
    for hook in &mut parsed.hooks {
        hook.command = hook.command.replace(ROOT_VAR, &install_text);
        if let Some(d) = &data_text {
            hook.command = hook.command.replace(DATA_VAR, d);
        }
        hook.options.plugin = Some(PluginRef {
            id: id.to_string(),
            root: install.to_path_buf(),
            data: data.clone(),
        });
        // Settings keys inside a plugin's hooks file mean nothing.
    }
    parsed.disable_all_hooks = None;
    parsed.enabled_plugins = BTreeMap::new();
    Some(parsed)
}

/// Which plugin a hook came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginRef {
    /// `name@marketplace`.
    pub id: String,
    /// Its install directory (`CLAUDE_PLUGIN_ROOT`).
    pub root: PathBuf,
    /// Its persistent data directory (`CLAUDE_PLUGIN_DATA`).
    pub data: Option<PathBuf>,
}

type CacheKey = (PathBuf, Option<PathBuf>);
type CacheEntry = (Option<(SystemTime, u64)>, Option<Arc<ParsedConfig>>);

/// Parsed plugin hook files, re-read only when they change.
#[derive(Debug, Default)]
pub struct PluginCache {
    entries: Mutex<HashMap<CacheKey, CacheEntry>>,
}

impl PluginCache {
    /// The parsed hooks of plugin `id` installed at `install`, for a config whose
    /// workspace root is `root`.
    pub fn get(&self, id: &str, install: &Path, root: Option<&Path>) -> Option<Arc<ParsedConfig>> {
        let file = install.join("hooks").join("hooks.json");
        let stamp = std::fs::metadata(&file)
            .ok()
            .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
        let key = (file, root.map(Path::to_path_buf));
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((s, parsed)) = entries.get(&key)
            && *s == stamp
        {
            return parsed.clone();
        }
        let parsed = stamp
            .and_then(|_| parse_plugin(id, install, root))
            .map(Arc::new);
        entries.insert(key, (stamp, parsed.clone()));
        parsed
    }
}
