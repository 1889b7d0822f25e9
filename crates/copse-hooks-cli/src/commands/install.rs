//! `copse-hooks install --agent NAME [--project] [--adopt]`, `uninstall`, and the
//! per-agent install status `list` shows.
//!
//! `install` writes one `copse-hooks shim --agent NAME --deadline SECONDS` entry per
//! event the shim serves into the agent's own config, each with an explicit `timeout`
//! in that agent's unit (seconds; Gemini CLI milliseconds) above the deadline: every
//! agent lets the action through when a hook outlasts its timeout, so the shim must
//! answer (with a block, if it has to) before the agent gives up on it. The entries
//! are written after copying the file to
//! `$COPSE_DIR/backups/`. The JSON is edited in place: key order and the file's
//! indentation are kept, nothing else changes. A manifest
//! (`$COPSE_DIR/installed.json`) remembers what was added and the original bytes, so
//! `uninstall` removes exactly that: when the file is still exactly as `install` left
//! it, the original bytes come back (byte-identical); otherwise only the shim
//! entries (and containers `install` created) are removed.
//!
//! `--adopt` (user scope) moves the agent's existing hooks to
//! `$COPSE_DIR/adopted/<agent>/`, in the agent's own format, where the shim runs them
//! through that agent's dialect; `uninstall` puts them back.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use copse_hooks::EngineConfig;
use copse_hooks::agent::{self, Agent};
use copse_hooks::{Settings, sha256_hex};
use copse_hooks_wire::output::InstallOutput;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::args::Global;

/// Where an agent keeps its hooks config.
pub fn config_path(agent: Agent, home: &Path, project: Option<&Path>) -> PathBuf {
    let base = |dir: &str| match project {
        Some(root) => root.join(dir),
        None => home.join(dir),
    };
    match agent {
        Agent::Claude => base(".claude").join("settings.json"),
        Agent::Gemini => base(".gemini").join("settings.json"),
        Agent::Codex => match (project, std::env::var_os("CODEX_HOME")) {
            (None, Some(h)) if !h.is_empty() => PathBuf::from(h).join("hooks.json"),
            _ => base(".codex").join("hooks.json"),
        },
        Agent::Cursor => base(".cursor").join("hooks.json"),
        // Copilot reads every `*.json` of its hooks directories: ours is one file.
        Agent::Copilot => match (project, std::env::var_os("COPILOT_HOME")) {
            (None, Some(h)) if !h.is_empty() => PathBuf::from(h).join("hooks"),
            (None, _) => home.join(".copilot").join("hooks"),
            (Some(root), _) => root.join(".github").join("hooks"),
        }
        .join("copse-hooks.json"),
    }
}

/// One installation, as remembered for `uninstall`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Installed {
    /// The agent.
    pub agent: String,
    /// `user` or `project`.
    pub scope: String,
    /// The agent config file.
    pub path: PathBuf,
    /// Whether the file existed before.
    pub existed: bool,
    /// The copy of the original bytes (the backup), when the file existed.
    pub backup: Option<PathBuf>,
    /// SHA-256 of the bytes `install` wrote.
    pub written_sha256: String,
    /// The shim command written.
    pub command: String,
    /// Whether `install` created the top-level `hooks` object.
    pub created_hooks_key: bool,
    /// Event arrays `install` created.
    pub created_events: Vec<String>,
    /// Where adopted hooks went (`--adopt`).
    pub adopted: Option<PathBuf>,
    /// The adopted events, in order.
    #[serde(default)]
    pub adopted_events: Vec<String>,
    /// Copilot: the hook files `--adopt` moved out of the hooks directory, each with
    /// its backup (`uninstall` puts them back).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adopted_files: Vec<AdoptedFile>,
}

/// A whole hook file `install --adopt` moved out of the agent's hooks directory.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AdoptedFile {
    /// Where it was.
    pub path: PathBuf,
    /// Its original bytes.
    pub backup: PathBuf,
}

/// Copilot: every other version-1 hook file of the directory `install` writes to moves
/// into copse-hooks' care: its entries join the adopted config (in Copilot's format,
/// in the order Copilot loads the files), the file is backed up and removed. Files
/// Copilot would not run (another version, `disableAllHooks`, not JSON) stay.
fn adopt_copilot_files(
    path: &Path,
    copse_dir: &Path,
    adopted_events: &mut Vec<String>,
) -> Result<(Option<PathBuf>, Vec<AdoptedFile>)> {
    let Some(dir) = path.parent() else {
        return Ok((None, Vec::new()));
    };
    let mut moved = Map::new();
    let mut sources = Vec::new();
    for file in agent::copilot::hook_files(dir) {
        if file == path {
            continue;
        }
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        let Ok(Value::Object(doc)) = serde_json::from_slice::<Value>(&bytes) else {
            continue;
        };
        let runs = doc.get("version").and_then(Value::as_u64) == Some(1)
            && doc.get("disableAllHooks") != Some(&Value::Bool(true));
        let Some(Value::Object(hooks)) = doc.get("hooks").filter(|_| runs) else {
            continue;
        };
        if hooks.values().any(|v| {
            v.as_array()
                .is_some_and(|l| l.iter().any(|e| is_shim_entry(Agent::Copilot, e)))
        }) {
            continue;
        }
        for (event, entries) in hooks {
            let Value::Array(list) = entries else {
                continue;
            };
            if list.is_empty() {
                continue;
            }
            if !adopted_events.contains(event) {
                adopted_events.push(event.clone());
            }
            let slot = moved.entry(event.clone()).or_insert_with(|| json!([]));
            if let Value::Array(all) = slot {
                all.extend(list.iter().cloned());
            }
        }
        sources.push((file, bytes));
    }
    if sources.is_empty() {
        return Ok((None, Vec::new()));
    }
    let target = agent::adopted_config(copse_dir, Agent::Copilot);
    merge_adopted(&target, moved, true)?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let mut files = Vec::new();
    for (file, bytes) in sources {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let backup = copse_dir
            .join("backups")
            .join("copilot")
            .join(format!("{stamp}-adopted-{name}"));
        write_atomic(&backup, &bytes)?;
        std::fs::remove_file(&file)
            .with_context(|| format!("failed to move {} out", file.display()))?;
        files.push(AdoptedFile { path: file, backup });
    }
    Ok((Some(target), files))
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    #[serde(default)]
    installed: Vec<Installed>,
}

/// Appends `moved` (entries by event) to the adopted config at `target` (created when
/// absent), with `"version": 1` when the format has one.
fn merge_adopted(target: &Path, moved: Map<String, Value>, versioned: bool) -> Result<()> {
    let mut adopted_root = match std::fs::read(target) {
        Ok(b) => match serde_json::from_slice(&b) {
            Ok(Value::Object(o)) => o,
            _ => bail!("{} exists and is not a JSON object", target.display()),
        },
        Err(_) => Map::new(),
    };
    if versioned {
        adopted_root.entry("version").or_insert(json!(1));
    }
    let slot = adopted_root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(existing) = slot {
        for (event, entries) in moved {
            let list = existing.entry(event).or_insert_with(|| json!([]));
            if let (Value::Array(list), Value::Array(new)) = (list, entries) {
                list.extend(new);
            }
        }
    }
    write_atomic(
        target,
        to_text(&Value::Object(adopted_root), "  ")?.as_bytes(),
    )
}

fn manifest_path(copse_dir: &Path) -> PathBuf {
    copse_dir.join("installed.json")
}

fn load_manifest(copse_dir: &Path) -> Result<Manifest> {
    let path = manifest_path(copse_dir);
    match std::fs::read(&path) {
        Ok(b) => serde_json::from_slice(&b)
            .with_context(|| format!("install manifest {} is corrupt", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest::default()),
        Err(e) => Err(e).with_context(|| format!("failed to read {}", path.display())),
    }
}

fn save_manifest(copse_dir: &Path, m: &Manifest) -> Result<()> {
    let mut text = serde_json::to_string_pretty(m)?;
    text.push('\n');
    write_atomic(&manifest_path(copse_dir), text.as_bytes())
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("failed to create {}", dir.display()))?;
    let tmp = dir.join(format!(
        ".{}.copse-{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes).with_context(|| format!("failed to write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("failed to write {}", path.display()))
}

/// The `timeout` every entry `install` adds carries, in seconds (Gemini CLI's entries
/// say the same in milliseconds).
pub const ENTRY_TIMEOUT_SECS: u64 = 60;

/// The `--deadline` on the installed shim command line, in seconds: below
/// [`ENTRY_TIMEOUT_SECS`] with a margin for the shim's start and its answer, so the
/// agent always hears the shim's block before its own timeout lets the action through.
pub const SHIM_DEADLINE_SECS: u64 = 55;

/// The shim command line for an agent: this executable, shell-quoted, with the
/// deadline.
pub fn shim_command(agent: Agent) -> Result<String> {
    let exe = std::env::current_exe().context("failed to locate the copse-hooks executable")?;
    Ok(format!(
        "{} shim --agent {} --deadline {SHIM_DEADLINE_SECS}",
        shell_quote(&exe.to_string_lossy()),
        agent
    ))
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:@%,=".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Whether a hook command is a shim entry for `agent` (whatever path it was run by,
/// with or without a deadline: entries from before deadlines count too).
fn is_shim(command: &str, agent: Agent) -> bool {
    let base = match command.rsplit_once(" --deadline ") {
        Some((base, secs)) if agent::parse_deadline(secs.trim()).is_ok() => base,
        _ => command,
    };
    base.ends_with(&format!(" shim --agent {agent}")) && command.contains("copse-hooks")
}

/// The indentation a JSON file uses (two spaces when it cannot tell).
fn indent_of(text: &str) -> String {
    text.lines()
        .skip(1)
        .find(|l| l.starts_with([' ', '\t']))
        .map(|l| l.chars().take_while(|c| *c == ' ' || *c == '\t').collect())
        .unwrap_or_else(|| "  ".to_string())
}

fn to_text(value: &Value, indent: &str) -> Result<String> {
    use serde::Serialize as _;
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    value.serialize(&mut ser)?;
    let mut text = String::from_utf8(buf)?;
    text.push('\n');
    Ok(text)
}

/// One shim entry in the agent's format, with its explicit `timeout` (seconds for
/// Claude Code, Codex and Cursor; milliseconds for Gemini CLI; Copilot's `timeoutSec`,
/// with the event the entry serves in its `env`: Copilot's payloads do not name it).
///
/// Where the agent has its own fail-closed switch, the entry sets it on the events a
/// failure can block, so the agent blocks even when the shim cannot answer at all (the
/// binary moved, uninstalled, a broken upgrade): Claude Code's `onFailure: "block"`
/// (Claude Code 2.1.295 and later; older versions ignore the key), Cursor's
/// `failClosed: true`. Codex, Gemini CLI and Copilot CLI have none: there a shim that
/// cannot start lets the call through, which `install` says.
fn entry(agent: Agent, command: &str, event: &str) -> Value {
    let secs = ENTRY_TIMEOUT_SECS;
    match agent {
        Agent::Copilot => json!({"type": "command", "bash": command, "timeoutSec": secs,
            "env": {agent::copilot::EVENT_VAR: event}}),
        Agent::Claude if copse_hooks::dialect::claude::failure_can_block(event) => json!({
            "hooks": [{"type": "command", "command": command, "timeout": secs, "onFailure": "block"}]
        }),
        Agent::Claude | Agent::Codex => {
            json!({"hooks": [{"type": "command", "command": command, "timeout": secs}]})
        }
        Agent::Gemini => json!({"hooks": [{"name": "copse-hooks", "type": "command",
            "command": command, "timeout": secs * 1000}]}),
        Agent::Cursor if cursor_gates(event) => {
            json!({"command": command, "timeout": secs, "failClosed": true})
        }
        Agent::Cursor => json!({"command": command, "timeout": secs}),
    }
}

/// The Cursor events whose hook failure can block an action (`failClosed` applies).
fn cursor_gates(event: &str) -> bool {
    matches!(
        event,
        "beforeShellExecution"
            | "beforeMCPExecution"
            | "beforeReadFile"
            | "beforeSubmitPrompt"
            | "preToolUse"
            | "subagentStart"
    )
}

/// The commands of one event array's entries (nested groups or flat entries).
fn entry_commands(agent: Agent, e: &Value) -> Vec<String> {
    match agent {
        Agent::Copilot => ["bash", "command"]
            .iter()
            .find_map(|k| e.get(*k).and_then(Value::as_str))
            .map(str::to_string)
            .into_iter()
            .collect(),
        Agent::Cursor => e
            .get("command")
            .and_then(Value::as_str)
            .map(str::to_string)
            .into_iter()
            .collect(),
        _ => e
            .get("hooks")
            .and_then(Value::as_array)
            .map(|hs| {
                hs.iter()
                    .filter_map(|h| h.get("command").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
    }
}

fn is_shim_entry(agent: Agent, e: &Value) -> bool {
    let cmds = entry_commands(agent, e);
    !cmds.is_empty() && cmds.iter().all(|c| is_shim(c, agent))
}

struct Options {
    project: Option<PathBuf>,
    adopt: bool,
}

fn copse_dir() -> PathBuf {
    EngineConfig::process_copse_dir()
}

fn home() -> PathBuf {
    EngineConfig::process_home()
}

fn project_root(global: &Global) -> Result<PathBuf> {
    let root = match global.workspaces.first() {
        Some(w) => w.clone(),
        None => std::env::current_dir().context("failed to read the current directory")?,
    };
    std::fs::canonicalize(&root).with_context(|| format!("workspace {} not found", root.display()))
}

pub fn install(global: &Global, agent: &str, project: bool, adopt: bool) -> Result<ExitCode> {
    let agent = parse_agent(agent)?;
    let opts = Options {
        project: if project {
            Some(project_root(global)?)
        } else {
            None
        },
        adopt,
    };
    if opts.adopt && opts.project.is_some() {
        bail!("--adopt works at user scope only (project hooks stay the project's)");
    }
    let copse_dir = copse_dir();
    let path = config_path(agent, &home(), opts.project.as_deref());
    let command = shim_command(agent)?;
    let mut manifest = load_manifest(&copse_dir)?;
    // Installing turns hooks on in the settings; settings that cannot be read
    // (corrupt, refused) are refused here, before anything is written, rather than
    // replaced by defaults (which would drop the user's trust).
    let settings_path = Settings::path_in(&copse_dir);
    let current_settings = Settings::load(&settings_path).with_context(|| {
        format!(
            "{} cannot be read; nothing was installed (fix or remove it, then run install again)",
            settings_path.display()
        )
    })?;

    let original = match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("failed to read {}", path.display())),
    };
    let text = original
        .as_deref()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let mut root: Map<String, Value> = if text.trim().is_empty() {
        Map::new()
    } else {
        match serde_json::from_str(&text) {
            Ok(Value::Object(o)) => o,
            Ok(_) => bail!("{} is not a JSON object; not touching it", path.display()),
            Err(e) => bail!(
                "{} is not valid JSON ({e}); not touching it",
                path.display()
            ),
        }
    };
    let indent = if text.trim().is_empty() {
        "  ".to_string()
    } else {
        indent_of(&text)
    };

    if matches!(agent, Agent::Cursor | Agent::Copilot) && !root.contains_key("version") {
        root.insert("version".into(), json!(1));
    }
    let created_hooks_key = !root.contains_key("hooks");
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        bail!(
            "{}: `hooks` is not an object; not touching it",
            path.display()
        );
    };

    // Adopt: move every non-shim entry out, in the agent's own format.
    let mut adopted_events = Vec::new();
    let mut adopted_path = None;
    if opts.adopt {
        let mut moved = Map::new();
        for (event, entries) in hooks.iter_mut() {
            let Value::Array(list) = entries else {
                continue;
            };
            let (shims, others): (Vec<Value>, Vec<Value>) = std::mem::take(list)
                .into_iter()
                .partition(|e| is_shim_entry(agent, e));
            *list = shims;
            if !others.is_empty() {
                adopted_events.push(event.clone());
                moved.insert(event.clone(), Value::Array(others));
            }
        }
        hooks.retain(|_, v| !matches!(v, Value::Array(a) if a.is_empty()));
        if !moved.is_empty() {
            let target = agent::adopted_config(&copse_dir, agent);
            merge_adopted(&target, moved, agent == Agent::Cursor)?;
            adopted_path = Some(target);
        }
    }

    let mut adopted_files = Vec::new();
    if opts.adopt && agent == Agent::Copilot {
        let (target, files) = adopt_copilot_files(&path, &copse_dir, &mut adopted_events)?;
        if target.is_some() {
            adopted_path = target;
        }
        adopted_files = files;
    }

    // The commands the agent's shim entries ran before (an older install, another
    // path): the install says what it updated from.
    let mut previous_commands: Vec<String> = Vec::new();
    for entries in hooks.values() {
        for e in entries.as_array().into_iter().flatten() {
            if is_shim_entry(agent, e) {
                for c in entry_commands(agent, e) {
                    if c != command && !previous_commands.contains(&c) {
                        previous_commands.push(c);
                    }
                }
            }
        }
    }
    let mut created_events = Vec::new();
    for event in agent.served_events() {
        let list = match hooks.get_mut(*event) {
            Some(Value::Array(list)) => list,
            Some(_) => bail!(
                "{}: hooks.{event} is not an array; not touching it",
                path.display()
            ),
            None => {
                created_events.push((*event).to_string());
                hooks.insert((*event).to_string(), json!([]));
                match hooks.get_mut(*event) {
                    Some(Value::Array(list)) => list,
                    _ => bail!("internal error inserting hooks.{event}"),
                }
            }
        };
        let fresh = entry(agent, &command, event);
        match list.iter().position(|e| is_shim_entry(agent, e)) {
            // An entry from an older install (no timeout, no deadline, another
            // binary): brought up to date in place, and any second shim entry (two
            // installs from different paths) dropped: the agent runs one shim.
            Some(first) => {
                list[first] = fresh;
                let mut index = 0;
                list.retain(|e| {
                    index += 1;
                    index - 1 == first || !is_shim_entry(agent, e)
                });
            }
            None => list.push(fresh),
        }
    }
    // Shim entries under events this build does not serve (an older install served
    // more) run this binary too: one left on an old path fails "not found" once that
    // binary is gone.
    for (event, entries) in hooks.iter_mut() {
        if agent.served_events().contains(&event.as_str()) {
            continue;
        }
        for e in entries.as_array_mut().into_iter().flatten() {
            if is_shim_entry(agent, e) && entry_commands(agent, e).iter().any(|c| *c != command) {
                *e = entry(agent, &command, event);
            }
        }
    }
    let new_text = to_text(&Value::Object(root), &indent)?;
    let unchanged = original.as_deref() == Some(new_text.as_bytes());
    let scope = if opts.project.is_some() {
        "project"
    } else {
        "user"
    };
    if unchanged && adopted_path.is_none() {
        if global.json {
            println!(
                "{}",
                serde_json::to_string(&InstallOutput {
                    adopted: None,
                    adopted_events: Vec::new(),
                    hooks_enabled: current_settings.cursor_hooks_enabled,
                    updated_from: None,
                    already_installed: true,
                    ..install_output(agent, scope, &path)
                })?
            );
        } else {
            println!(
                "copse-hooks shim already installed for {agent} in {} (it runs this executable)",
                escape(&path.display().to_string())
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    // Back up, then write.
    let backup = match &original {
        Some(bytes) => {
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0);
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "config".into());
            let b = copse_dir
                .join("backups")
                .join(agent.as_str())
                .join(format!("{stamp}-{scope}-{name}"));
            write_atomic(&b, bytes)?;
            Some(b)
        }
        None => None,
    };
    write_atomic(&path, new_text.as_bytes())?;
    // A second install over our own: keep the first record (its original is the
    // real one), refresh what was written.
    let previous = manifest
        .installed
        .iter_mut()
        .find(|i| i.agent == agent.as_str() && i.path == path);
    match previous {
        Some(p) => {
            p.written_sha256 = sha256_hex(new_text.as_bytes());
            // The entries now run this command (an older one had no deadline).
            p.command = command.clone();
            p.created_events.extend(created_events);
            if adopted_path.is_some() {
                p.adopted = adopted_path.clone();
                p.adopted_events.extend(adopted_events.clone());
                p.adopted_files.extend(adopted_files.clone());
            }
        }
        None => manifest.installed.push(Installed {
            agent: agent.as_str().to_string(),
            scope: scope.to_string(),
            path: path.clone(),
            existed: original.is_some(),
            backup,
            written_sha256: sha256_hex(new_text.as_bytes()),
            command: command.clone(),
            created_hooks_key,
            created_events,
            adopted: adopted_path.clone(),
            adopted_events: adopted_events.clone(),
            adopted_files: adopted_files.clone(),
        }),
    }
    save_manifest(&copse_dir, &manifest)?;
    // Installing the shim is the user's opt-in to hooks: under the settings lock, so
    // a concurrent `trust` is not lost, and never over settings that cannot be read.
    let (enabled_now, _notices) = Settings::update(&settings_path, |loaded| {
        let mut settings = loaded?;
        if settings.cursor_hooks_enabled {
            return Ok((None, false));
        }
        settings.cursor_hooks_enabled = true;
        Ok((Some(settings), true))
    })
    .with_context(|| {
        format!(
            "the shim is installed in {}, but hooks could not be turned on in {} (fix it, then run `copse-hooks enable`)",
            path.display(),
            settings_path.display()
        )
    })?;
    if global.json {
        println!(
            "{}",
            serde_json::to_string(&InstallOutput {
                adopted: adopted_path.as_ref().map(|p| p.display().to_string()),
                adopted_events,
                hooks_enabled: true,
                updated_from: previous_commands.first().map(|c| command_binary(c)),
                already_installed: false,
                ..install_output(agent, scope, &path)
            })?
        );
    } else {
        match previous_commands.first() {
            Some(old) => println!(
                "updated the copse-hooks shim for {agent} in {} ({} events) from {}",
                escape(&path.display().to_string()),
                agent.served_events().len(),
                escape(&command_binary(old))
            ),
            None => println!(
                "installed the copse-hooks shim for {agent} in {} ({} events)",
                escape(&path.display().to_string()),
                agent.served_events().len()
            ),
        }
        if let Some(a) = &adopted_path {
            println!(
                "adopted {agent} hooks ({}) into {}",
                adopted_events.join(", "),
                a.display()
            );
        }
        for f in &adopted_files {
            println!(
                "moved {} out of {agent}'s hooks directory (uninstall puts it back)",
                escape(&f.path.display().to_string())
            );
        }
        if enabled_now {
            println!("turned external hooks on ({})", settings_path.display());
        }
        println!(
            "next: run `copse-hooks doctor` after {agent}'s next tool call: its Agents section says which path served it"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The executable a shim command runs: its first word, shell-unquoted (the command
/// [`shim_command`] writes quotes it with single quotes when it must).
pub fn command_binary(command: &str) -> String {
    let command = command.trim_start();
    if let Some(rest) = command.strip_prefix('\'') {
        // 'a'\''b' → a'b: quoted runs joined by escaped quotes.
        let mut out = String::new();
        let mut chars = rest.chars().peekable();
        let mut quoted = true;
        while let Some(c) = chars.next() {
            match (quoted, c) {
                (true, '\'') => quoted = false,
                (false, '\\') => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                (false, '\'') => quoted = true,
                (false, c) if c.is_whitespace() => break,
                (_, c) => out.push(c),
            }
        }
        out
    } else {
        command
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string()
    }
}

/// The distinct shim commands `agent`'s config file at `path` holds (what the agent
/// runs as its copse-hooks shim), in file order; empty when it cannot be read.
pub fn shim_commands_in(agent: Agent, path: &Path) -> Vec<String> {
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    let Ok(Value::Object(root)) = serde_json::from_slice::<Value>(&bytes) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    if let Some(Value::Object(hooks)) = root.get("hooks") {
        for entries in hooks.values() {
            for e in entries.as_array().into_iter().flatten() {
                for c in entry_commands(agent, e) {
                    if is_shim(&c, agent) && !out.contains(&c) {
                        out.push(c);
                    }
                }
            }
        }
    }
    out
}

fn parse_agent(name: &str) -> Result<Agent> {
    Agent::parse(name).with_context(|| {
        format!("unknown agent {name:?} (expected claude, gemini, codex, cursor or copilot)")
    })
}

pub fn uninstall(global: &Global, agent: &str, project: bool) -> Result<ExitCode> {
    let agent = parse_agent(agent)?;
    let root = if project {
        Some(project_root(global)?)
    } else {
        None
    };
    let copse_dir = copse_dir();
    let path = config_path(agent, &home(), root.as_deref());
    let mut manifest = load_manifest(&copse_dir)?;
    let pos = manifest
        .installed
        .iter()
        .position(|i| i.agent == agent.as_str() && i.path == path);
    let record = pos.map(|p| manifest.installed.remove(p));
    let current = match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("failed to read {}", path.display())),
    };
    let untouched = match (&record, &current) {
        (Some(r), Some(cur)) => sha256_hex(cur) == r.written_sha256,
        _ => false,
    };
    let how;
    if let (true, Some(r)) = (untouched, &record) {
        // Nothing changed since install: the original bytes come back.
        match (&r.backup, r.existed) {
            (Some(b), true) => {
                let bytes = std::fs::read(b)
                    .with_context(|| format!("backup {} is missing", b.display()))?;
                write_atomic(&path, &bytes)?;
                how = "restored";
            }
            _ => {
                // `install` created the file: it goes, and that is what is said.
                std::fs::remove_file(&path)
                    .with_context(|| format!("failed to remove {}", path.display()))?;
                how = "removed";
            }
        }
    } else if let Some(cur) = &current {
        // Changed since: remove the shim entries (and what install created), and put
        // adopted hooks back.
        let text = String::from_utf8_lossy(cur).into_owned();
        let mut rootv: Map<String, Value> = match serde_json::from_str(&text) {
            Ok(Value::Object(o)) => o,
            _ => bail!("{} is not a JSON object; not touching it", path.display()),
        };
        let before = rootv.clone();
        if let Some(Value::Object(hooks)) = rootv.get_mut("hooks") {
            for (_, entries) in hooks.iter_mut() {
                if let Value::Array(list) = entries {
                    list.retain(|e| !is_shim_entry(agent, e));
                }
            }
            if let Some(r) = &record {
                // Copilot's adopted hooks go back as the files they came from (below).
                if let Some(adopted) = r.adopted.as_ref().filter(|_| r.adopted_files.is_empty())
                    && let Ok(b) = std::fs::read(adopted)
                    && let Ok(Value::Object(a)) = serde_json::from_slice::<Value>(&b)
                    && let Some(Value::Object(ah)) = a.get("hooks")
                {
                    for (event, entries) in ah {
                        let slot = hooks.entry(event.clone()).or_insert_with(|| json!([]));
                        if let (Value::Array(list), Value::Array(new)) = (slot, entries) {
                            list.extend(new.iter().cloned());
                        }
                    }
                }
                for e in &r.created_events {
                    if matches!(hooks.get(e), Some(Value::Array(a)) if a.is_empty()) {
                        hooks.remove(e);
                    }
                }
            }
        }
        if let Some(r) = &record
            && r.created_hooks_key
            && matches!(rootv.get("hooks"), Some(Value::Object(h)) if h.is_empty())
        {
            rootv.remove("hooks");
        }
        if rootv == before {
            // No shim entry was left to take out: the file's bytes stay as they are
            // (no reformatting of a file that does not change).
            how = "no shim entries left in";
        } else {
            write_atomic(
                &path,
                to_text(&Value::Object(rootv), &indent_of(&text))?.as_bytes(),
            )?;
            how = "removed the shim entries from";
        }
    } else {
        how = "nothing to remove from";
    }
    let mut restored = Vec::new();
    for f in record.iter().flat_map(|r| r.adopted_files.iter()) {
        if f.path.exists() {
            restored.push(format!(
                "left {} as it is (a file is there again; its adopted original is {})",
                f.path.display(),
                f.backup.display()
            ));
            continue;
        }
        let bytes = std::fs::read(&f.backup)
            .with_context(|| format!("backup {} is missing", f.backup.display()))?;
        write_atomic(&f.path, &bytes)?;
        restored.push(format!("restored {}", f.path.display()));
    }
    if let Some(r) = &record
        && let Some(a) = &r.adopted
    {
        let _ = std::fs::remove_file(a);
    }
    save_manifest(&copse_dir, &manifest)?;
    if global.json {
        println!(
            "{}",
            serde_json::to_string(&copse_hooks_wire::output::UninstallOutput {
                version: copse_hooks_wire::OUTPUT_VERSION,
                agent: agent.as_str().to_string(),
                path: path.display().to_string(),
                result: how.to_string(),
            })?
        );
    } else {
        println!("{how} {} ({agent})", path.display());
        for line in &restored {
            println!("{line}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Per agent: where the shim is installed and which hooks were adopted.
pub fn status() -> Vec<Installed> {
    load_manifest(&copse_dir())
        .map(|m| m.installed)
        .unwrap_or_default()
}

/// The `list` lines for installed shims (nothing when none is installed).
pub fn status_lines(installed: &[Installed]) -> Vec<String> {
    installed
        .iter()
        .map(|i| {
            let adopted = match &i.adopted {
                Some(a) => format!(
                    "; adopted {} into {}",
                    i.adopted_events.join(", "),
                    escape(&a.display().to_string())
                ),
                None => String::new(),
            };
            format!(
                "{}: shim installed ({}) in {}{adopted}",
                i.agent,
                i.scope,
                escape(&i.path.display().to_string())
            )
        })
        .collect()
}

/// Text from a file or path, with control characters shown as escapes.
fn escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// The fields of `install --json` every outcome shares: the agent, scope, config file
/// and the events the shim serves (the rest is filled in by the caller).
fn install_output(agent: Agent, scope: &str, path: &Path) -> InstallOutput {
    InstallOutput {
        version: copse_hooks_wire::OUTPUT_VERSION,
        agent: agent.as_str().to_string(),
        scope: scope.to_string(),
        path: path.display().to_string(),
        events: agent
            .served_events()
            .iter()
            .map(|e| e.to_string())
            .collect(),
        adopted: None,
        adopted_events: Vec::new(),
        hooks_enabled: false,
        updated_from: None,
        already_installed: false,
    }
}
