//! `lint`: validate hook configs of any dialect and point at each problem.
//!
//! The dialect adapters already explain what is wrong with a config (their parse
//! warnings); lint adds a level, a `line:column`, and the checks only an author
//! wants: a timeout that looks like milliseconds, a hook script that does not exist
//! or is not executable, an event or key that is one typo away from a real one
//! ("did you mean"), another dialect's key (`failClosed` in a Copse file), and a
//! command holding terminal control sequences. A copse-hooks settings file is linted
//! as one (known keys and their types).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::dialect::{Dialect, HookSpec, Scope};
use crate::discovery;
use crate::engine::Engine;
use crate::jsonpos::{Positions, Step};

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Something will not run (or not as written).
    Error,
    /// Something runs, but probably not as meant.
    Warning,
}

impl Level {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
        }
    }
}

/// One problem in one file.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Problem {
    /// The config file.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// Error or warning.
    pub level: Level,
    /// What is wrong (and, for common mistakes, what to do).
    pub message: String,
}

/// The result of linting some files.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct LintReport {
    /// The files read, with their detected dialect.
    pub files: Vec<(PathBuf, Dialect)>,
    /// Every problem, file by file, in position order.
    pub problems: Vec<Problem>,
}

impl LintReport {
    /// How many problems of a level.
    pub fn count(&self, level: Level) -> usize {
        self.problems.iter().filter(|p| p.level == level).count()
    }
}

/// The dialect of a config: by path first, then by shape.
pub fn detect_dialect(path: &Path, doc: &Value, copse_dir: &Path) -> Dialect {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let dir = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    match (dir, name) {
        (".cursor", "hooks.json") => return Dialect::Cursor,
        (".claude", "settings.json" | "settings.local.json") => return Dialect::Claude,
        (".copse", "hooks.json") => return Dialect::Copse,
        _ if path.parent() == Some(copse_dir) && name == "hooks.json" => return Dialect::Copse,
        (".gemini", "settings.json") | ("gemini-cli", "settings.json") => return Dialect::Gemini,
        (".codex", "hooks.json" | "config.toml") | ("codex", "config.toml" | "hooks.json") => {
            return Dialect::Codex;
        }
        _ if name.ends_with(".toml") => return Dialect::Codex,
        _ => {}
    }
    if is_copilot_path(path) || crate::dialect::copilot::parse::looks_like(doc) {
        return Dialect::Copilot;
    }
    let in_gemini_extension = path
        .ancestors()
        .any(|a| a.file_name().is_some_and(|n| n == "extensions"))
        && path
            .ancestors()
            .any(|a| a.file_name().is_some_and(|n| n == ".gemini"));
    let in_codex_plugin = path
        .ancestors()
        .any(|a| a.file_name().is_some_and(|n| n == ".codex"));
    if in_gemini_extension {
        return Dialect::Gemini;
    }
    if in_codex_plugin {
        return Dialect::Codex;
    }
    let hooks = doc.get("hooks").and_then(Value::as_object);
    let gemini_events = hooks.is_some_and(|h| {
        h.keys().any(|k| {
            crate::dialect::gemini::canonical_for(k).is_some()
                && k != "SessionStart"
                && k != "SessionEnd"
                && k != "Notification"
        }) || h
            .keys()
            .any(|k| crate::dialect::gemini::unsupported_reason(k).is_some())
    }) || doc.get("hooksConfig").is_some();
    if gemini_events {
        return Dialect::Gemini;
    }
    let nested = hooks.is_some_and(|h| {
        h.values().any(|v| {
            v.as_array().is_some_and(|groups| {
                groups
                    .iter()
                    .any(|g| g.get("hooks").is_some_and(Value::is_array))
            })
        })
    });
    if nested {
        return Dialect::Claude;
    }
    let canonical = hooks.is_some_and(|h| {
        !h.is_empty()
            && h.keys()
                .all(|k| crate::event::CanonicalEvent::from_name(k).is_some())
            && h.keys().any(|k| k == "toolGate" || k == "afterToolUse")
    });
    if canonical {
        Dialect::Copse
    } else {
        Dialect::Cursor
    }
}

/// The 1-based line and column of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Where an event's `entry`-th `[[hooks.<Event>]]` table starts in a TOML config
/// (the event's first table, or `[hooks]`, when there is no such entry).
fn toml_position(text: &str, event: Option<&str>, entry: Option<usize>) -> Option<(usize, usize)> {
    let mut offset = 0;
    let mut headers: Vec<(usize, String)> = Vec::new();
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            let name: String = t
                .trim_start_matches('[')
                .trim_end_matches(']')
                .chars()
                .filter(|c| !c.is_whitespace() && *c != '"')
                .collect();
            headers.push((offset + line.len() - line.trim_start().len(), name));
        }
        offset += line.len();
    }
    let at = |o: usize| Some(line_column(text, o));
    if let Some(event) = event {
        let wanted = format!("hooks.{event}");
        let groups: Vec<usize> = headers
            .iter()
            .filter(|(_, n)| *n == wanted)
            .map(|(o, _)| *o)
            .collect();
        if let Some(o) = entry.and_then(|e| groups.get(e.saturating_sub(1))) {
            return at(*o);
        }
        if let Some((o, _)) = headers.iter().find(|(_, n)| n.starts_with(&wanted)) {
            return at(*o);
        }
    }
    headers
        .iter()
        .find(|(_, n)| n == "hooks" || n.starts_with("hooks."))
        .and_then(|(o, _)| at(*o))
}

/// The `M` of `entry N hook M` in a message.
fn hook_number(message: &str) -> Option<usize> {
    let rest = message.split("entry ").nth(1)?;
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = rest.strip_prefix(" hook ")?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

fn entry_number(message: &str) -> Option<usize> {
    let rest = message
        .split("entry ")
        .nth(1)
        .or_else(|| message.split("group ").nth(1))?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The level of a config warning's message: the one `lint` and `list` both show.
pub fn level_of(message: &str) -> Level {
    let errors = [
        "file ignored",
        "Unknown",
        "missing or empty \"command\"",
        "not a valid regex",
        "must be an array",
        "must be a regex string",
        "hook skipped",
        "— skipped",
    ];
    if errors.iter().any(|e| message.contains(e)) {
        Level::Error
    } else {
        Level::Warning
    }
}

const INTERPRETERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "node", "deno", "bun", "python", "python3", "ruby", "perl", "php",
];

/// The script a command runs, when it names one: the first word if it is a path,
/// or the first argument of a known interpreter.
fn script_of(command: &str) -> Option<(String, bool)> {
    let mut words = command.split_whitespace();
    let first = words.next()?;
    if first.contains('=') {
        return None; // `VAR=x cmd`: too clever to guess.
    }
    let looks_like_path = |w: &str| w.contains('/') && !w.contains('$') && !w.starts_with('-');
    if looks_like_path(first) {
        return Some((first.to_string(), true));
    }
    let base = first.rsplit('/').next().unwrap_or(first);
    if INTERPRETERS.contains(&base) {
        let arg = words.find(|w| !w.starts_with('-'))?;
        if looks_like_path(arg) || arg.contains('.') && !arg.contains('$') {
            return Some((arg.to_string(), false));
        }
    }
    None
}

impl Engine {
    /// Lints the given config files, or (when `paths` is empty) every config file
    /// discovery would read that exists, trusted or not.
    pub fn lint(&self, paths: &[PathBuf]) -> LintReport {
        let files: Vec<PathBuf> = if paths.is_empty() {
            discovery::locations_with(
                &self.config().home,
                &self.config().copse_dir,
                self.workspace_roots(),
                &self.config().vendor_paths(),
            )
            .into_iter()
            .map(|l| l.path)
            // Anything there, readable or not (a FIFO, a device, a file behind a
            // parent without permission, a symlink loop), is linted and its problem
            // reported: never counted as absent.
            .filter(|p| {
                std::fs::symlink_metadata(p).is_ok()
                    || matches!(std::fs::metadata(p), Err(e) if e.kind() != std::io::ErrorKind::NotFound)
            })
            .collect()
        } else {
            paths.to_vec()
        };
        let mut report = LintReport {
            files: Vec::new(),
            problems: Vec::new(),
        };
        for file in files {
            let start = report.problems.len();
            let dialect = self.lint_file(&file, &mut report.problems);
            report.problems[start..].sort_by_key(|p| (p.line.unwrap_or(0), p.column.unwrap_or(0)));
            if let Some(d) = dialect {
                report.files.push((file, d));
            }
        }
        report
    }

    fn lint_file(&self, file: &Path, out: &mut Vec<Problem>) -> Option<Dialect> {
        let mut problem = |line: Option<usize>, column: Option<usize>, level, message: String| {
            out.push(Problem {
                file: file.to_path_buf(),
                line,
                column,
                level,
                message,
            });
        };
        let text = match crate::fsread::read_regular(file, crate::fsread::MAX_CONFIG_BYTES)
            .map_err(|e| e.to_string())
            .and_then(|b| String::from_utf8(b).map_err(|e| format!("not UTF-8: {e}")))
        {
            Ok(t) => t,
            Err(e) => {
                problem(None, None, Level::Error, format!("cannot be read: {e}"));
                return None;
            }
        };
        // Refused at run time as ssh refuses such a key file: say so, and lint on.
        if let Ok(meta) = std::fs::metadata(file)
            && let Some(why) = crate::private::insecurity(file, &meta)
        {
            problem(
                None,
                None,
                Level::Error,
                format!(
                    "{} — file ignored, none of its hooks run; fix it with `{}`",
                    why.reason, why.fix
                ),
            );
        }
        let is_toml = file.extension().is_some_and(|e| e == "toml");
        let doc: Value = if is_toml {
            match toml::from_str::<toml::Table>(&text) {
                Ok(t) => serde_json::to_value(t).unwrap_or(Value::Null),
                Err(e) => {
                    let (line, column) = e
                        .span()
                        .map(|s| line_column(&text, s.start))
                        .map_or((None, None), |(l, c)| (Some(l), Some(c)));
                    problem(
                        line,
                        column,
                        Level::Error,
                        format!("not valid TOML: {}", e.message()),
                    );
                    return None;
                }
            }
        } else {
            match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(e) => {
                    problem(
                        Some(e.line()),
                        Some(e.column()),
                        Level::Error,
                        format!("not valid JSON: {e}"),
                    );
                    return None;
                }
            }
        };
        if is_settings_file(file, &doc, &self.config().copse_dir) {
            lint_settings(
                &doc,
                &self.config().home,
                &Positions::scan(&text),
                &mut problem,
            );
            return Some(Dialect::Copse);
        }
        let dialect = detect_dialect(file, &doc, &self.config().copse_dir);
        let canonical_file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        let (scope, root) = match crate::dryrun::classify(self, &canonical_file) {
            Some((_, scope, root)) => (scope, root),
            // Outside the usual places: a file in a dot-directory (`x/.cursor/…`)
            // is a project config of `x`; any other is read like a user config
            // (`$COPSE_DIR/hooks.json`), its commands running from its own directory.
            None if canonical_file
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|d| d.to_string_lossy().starts_with('.')) =>
            {
                (
                    Scope::Project,
                    canonical_file
                        .parent()
                        .and_then(Path::parent)
                        .map(Path::to_path_buf),
                )
            }
            None => (Scope::User, None),
        };
        let adapter = discovery::adapter(dialect);
        let parsed = adapter.parse(&text, &canonical_file, scope, root.as_deref());
        let positions = Positions::scan(&text);
        let key = |s: &str| Step::Key(s.to_string());
        for w in &parsed.warnings {
            let mut path = vec![key("hooks")];
            if let Some(e) = &w.event {
                path.push(key(e));
                if let Some(n) = entry_number(&w.message) {
                    path.push(Step::Index(n.saturating_sub(1)));
                    // Gemini and Codex messages name the handler too: `entry N hook M`.
                    if let Some(h) = hook_number(&w.message) {
                        path.push(key("hooks"));
                        path.push(Step::Index(h.saturating_sub(1)));
                    }
                    for field in [
                        "matcher",
                        "idleTimeout",
                        "persistent",
                        "timeout",
                        "failClosed",
                        "onFailure",
                        "sandbox",
                        "async",
                        "loop_limit",
                        "glob",
                        "type",
                    ] {
                        if w.message.contains(&format!("\"{field}\""))
                            || w.message.contains(&format!("{field} "))
                        {
                            path.push(key(field));
                            break;
                        }
                    }
                }
            }
            let pos = if is_toml {
                toml_position(&text, w.event.as_deref(), entry_number(&w.message))
            } else {
                positions.nearest(&path)
            };
            let mut message = w.message.replace(&canonical_file.display().to_string(), "");
            if let Some(e) = &w.event
                && message.starts_with("Unknown")
                && !message.contains("did you mean")
                && let Some(near) = did_you_mean(e, known_events(dialect))
                && !message.contains(&format!("\"{near}\""))
            {
                message.push_str(&format!(" — did you mean \"{near}\"?"));
            }
            problem(
                pos.map(|p| p.0),
                pos.map(|p| p.1),
                level_of(&message),
                message,
            );
        }
        // Timeouts that look like milliseconds (Gemini's are milliseconds: its parse
        // warnings flag values that look like seconds instead).
        if dialect != Dialect::Gemini
            && let Some(hooks) = doc.get("hooks").and_then(Value::as_object)
        {
            for (event, entries) in hooks {
                let Some(entries) = entries.as_array() else {
                    continue;
                };
                for (i, entry) in entries.iter().enumerate() {
                    let mut candidates = vec![(
                        vec![key("hooks"), key(event), Step::Index(i), key("timeout")],
                        entry.get("timeout"),
                    )];
                    if let Some(handlers) = entry.get("hooks").and_then(Value::as_array) {
                        for (j, h) in handlers.iter().enumerate() {
                            candidates.push((
                                vec![
                                    key("hooks"),
                                    key(event),
                                    Step::Index(i),
                                    key("hooks"),
                                    Step::Index(j),
                                    key("timeout"),
                                ],
                                h.get("timeout"),
                            ));
                        }
                    }
                    for (path, t) in candidates {
                        if let Some(secs) = t.and_then(Value::as_f64).filter(|s| *s >= 1000.0) {
                            let pos = if is_toml {
                                toml_position(&text, Some(event), Some(i + 1))
                            } else {
                                positions.get(&path)
                            };
                            problem(
                                pos.map(|p| p.0),
                                pos.map(|p| p.1),
                                Level::Warning,
                                format!(
                                    "\"{event}\" timeout {secs} is in seconds ({:.0} minutes); did you mean {}? (timeouts are seconds, not milliseconds)",
                                    secs / 60.0,
                                    secs / 1000.0
                                ),
                            );
                        }
                    }
                }
            }
        }
        // Hooks an installed shim runs (Copse configs, adopted hooks) whose timeout is
        // longer than its `--deadline`: the shim blocks the call at the deadline first.
        let copse_dir = &self.config().copse_dir;
        if (dialect == Dialect::Copse || canonical_file.starts_with(copse_dir.join("adopted")))
            && let Some(deadline) = crate::agent::installed_deadline(copse_dir)
        {
            for hook in parsed.hooks.iter().filter(|h| h.timeout > deadline) {
                problem(
                    None,
                    None,
                    Level::Warning,
                    format!(
                        "\"{}\" timeout {} s is longer than the installed shim's --deadline of {} s: under `copse-hooks shim` the call is blocked at the deadline and the hook cut off",
                        hook.event,
                        hook.timeout.as_secs_f64(),
                        deadline.as_secs_f64()
                    ),
                );
            }
        }
        lint_entries(dialect, &doc, &positions, &mut problem);
        // Scripts that do not exist or cannot be executed.
        let roots: Vec<PathBuf> = root.clone().into_iter().collect();
        let session = crate::event::SessionIdentity::default();
        let ctx = crate::dialect::Context {
            session: &session,
            workspace_roots: &roots,
        };
        let mut seen = std::collections::HashSet::new();
        for hook in &parsed.hooks {
            self.lint_script(adapter, hook, &ctx, &positions, &mut seen, &mut problem);
            // Workspace files a project hook uses that trust cannot pin.
            if let (Scope::Project, Some(root)) = (hook.scope, root.as_deref()) {
                for path in crate::scripts::unpinned_files(&hook.command, root) {
                    problem(
                        None,
                        None,
                        Level::Warning,
                        format!(
                            "\"{}\" entry {}: uses workspace file {} in a way trust cannot pin: an edit to it runs without a new trust (run it as a script: `sh {}`, `./{}`)",
                            hook.event,
                            hook.entry,
                            path.display(),
                            path.strip_prefix(root).unwrap_or(&path).display(),
                            path.strip_prefix(root).unwrap_or(&path).display(),
                        ),
                    );
                }
            }
        }
        Some(dialect)
    }

    fn lint_script(
        &self,
        adapter: &dyn crate::dialect::Adapter,
        hook: &HookSpec,
        ctx: &crate::dialect::Context<'_>,
        positions: &Positions,
        seen: &mut std::collections::HashSet<String>,
        problem: &mut dyn FnMut(Option<usize>, Option<usize>, Level, String),
    ) {
        let Some((script, must_execute)) = script_of(&hook.command) else {
            return;
        };
        let cwd = adapter.cwd(hook, ctx);
        let expanded = if let Some(rest) = script.strip_prefix("~/") {
            self.config().home.join(rest)
        } else {
            PathBuf::from(&script)
        };
        let expanded = expanded
            .strip_prefix("./")
            .map(Path::to_path_buf)
            .unwrap_or(expanded);
        let path = if expanded.is_absolute() {
            expanded
        } else {
            cwd.join(expanded)
        };
        if !seen.insert(format!("{}\0{}", hook.event, path.display())) {
            return;
        }
        let pos = if hook.source.extension().is_some_and(|e| e == "toml") {
            std::fs::read_to_string(&hook.source)
                .ok()
                .and_then(|t| toml_position(&t, Some(&hook.event), Some(hook.entry)))
        } else {
            positions.nearest(&[
                Step::Key("hooks".into()),
                Step::Key(hook.event.clone()),
                Step::Index(hook.entry.saturating_sub(1)),
                Step::Key("command".into()),
            ])
        };
        let at = |p: Option<(usize, usize)>| (p.map(|x| x.0), p.map(|x| x.1));
        let (line, column) = at(pos);
        match std::fs::metadata(&path) {
            Err(_) => problem(
                line,
                column,
                Level::Error,
                format!(
                    "\"{}\" entry {}: script {script} does not exist (resolved against {}, where this hook runs)",
                    hook.event,
                    hook.entry,
                    cwd.display()
                ),
            ),
            Ok(meta) => {
                use std::os::unix::fs::PermissionsExt;
                if must_execute && meta.is_file() && meta.permissions().mode() & 0o111 == 0 {
                    problem(
                        line,
                        column,
                        Level::Error,
                        format!(
                            "\"{}\" entry {}: script {script} is not executable (chmod +x {})",
                            hook.event,
                            hook.entry,
                            path.display()
                        ),
                    );
                }
            }
        }
    }
}

/// Whether a path is a Copilot CLI hook file by its place: `*.json` in
/// `.github/hooks/`, `.copilot/hooks/` or Copilot's policy directory.
fn is_copilot_path(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let Some(parent) = path.parent() else {
        return false;
    };
    let dir = parent.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let above = parent
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .unwrap_or("");
    name.ends_with(".json")
        && ((dir == "hooks" && matches!(above, ".github" | ".copilot"))
            || parent == Path::new(crate::discovery::COPILOT_POLICY_DIR))
}

/// The dialect a config path implies, when its place says so.
pub(crate) fn dialect_of_path(path: &Path) -> Option<Dialect> {
    if is_copilot_path(path) {
        return Some(Dialect::Copilot);
    }
    let name = path.file_name()?.to_str()?;
    let dir = path.parent()?.file_name()?.to_str()?;
    match (dir, name) {
        (".cursor", "hooks.json") => Some(Dialect::Cursor),
        (".claude", _) => Some(Dialect::Claude),
        _ if name == "hooks.json" => Some(Dialect::Copse),
        _ => None,
    }
}

pub(crate) use crate::dialect::tables::known_events;
use crate::dialect::tables::{entry_keys, matcher_tools};

/// The closest candidate to `word` when it is one typo (or a case slip) away.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .filter(|c| *c != word)
        .map(|c| {
            (
                strsim::damerau_levenshtein(&lower, &c.to_ascii_lowercase()),
                c,
            )
        })
        .filter(|(d, c)| *d <= (c.len() / 4).clamp(1, 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Whether text holds terminal control characters or bidi marks (tab and newline
/// aside): such a command can hide itself or a warning when printed.
pub fn has_control_chars(text: &str) -> bool {
    text.chars().any(|c| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

type ProblemSink<'a> = dyn FnMut(Option<usize>, Option<usize>, Level, String) + 'a;

/// Entry-level checks on the raw document: unknown keys (with did-you-mean and the
/// other dialects' spellings) and commands with terminal control characters.
fn lint_entries(
    dialect: Dialect,
    doc: &Value,
    positions: &Positions,
    problem: &mut ProblemSink<'_>,
) {
    let key = |s: &str| Step::Key(s.to_string());
    let Some(hooks) = doc.get("hooks").and_then(Value::as_object) else {
        return;
    };
    for (event, entries) in hooks {
        let Some(entries) = entries.as_array() else {
            continue;
        };
        for (i, entry) in entries.iter().enumerate() {
            let base = vec![key("hooks"), key(event), Step::Index(i)];
            if let Some(m) = entry.get("matcher").and_then(Value::as_str)
                && let Some(tools) = matcher_tools(dialect, event)
            {
                for alt in m.split('|') {
                    let word = alt.trim().trim_start_matches('^').trim_end_matches('$');
                    let plain = !word.is_empty()
                        && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    if !plain || tools.contains(&word) || word.starts_with("mcp__") {
                        continue;
                    }
                    if let Some(near) = did_you_mean(word, tools.iter().copied()) {
                        let mut at = base.clone();
                        at.push(key("matcher"));
                        let pos = positions.get(&at).or_else(|| positions.nearest(&base));
                        problem(
                            pos.map(|p| p.0),
                            pos.map(|p| p.1),
                            Level::Warning,
                            format!(
                                "\"{event}\" {} {}: matcher \"{word}\" names no tool — did you mean \"{near}\"?",
                                if dialect == Dialect::Claude {
                                    "group"
                                } else {
                                    "entry"
                                },
                                i + 1
                            ),
                        );
                    }
                }
            }
            let mut handlers: Vec<(Vec<Step>, &serde_json::Map<String, Value>)> = Vec::new();
            match (dialect, entry.as_object()) {
                (Dialect::Claude, Some(group)) => {
                    // The group's own keys (`matcher`, `hooks`); a flat handler's keys
                    // at this level are the Cursor shape the parser already explains.
                    let group_keys = crate::dialect::schemas::group_keys(Dialect::Claude);
                    for k in group.keys() {
                        if group_keys.iter().any(|g| g == k)
                            || crate::dialect::schemas::entry_keys(Dialect::Claude)
                                .iter()
                                .any(|h| h == k)
                        {
                            continue;
                        }
                        let mut at = base.clone();
                        at.push(key(k));
                        let pos = positions.get(&at).or_else(|| positions.nearest(&base));
                        let hint = did_you_mean(k, group_keys.iter().map(String::as_str))
                            .map(|m| format!(" — did you mean \"{m}\"?"))
                            .unwrap_or_default();
                        problem(
                            pos.map(|p| p.0),
                            pos.map(|p| p.1),
                            Level::Warning,
                            format!(
                                "\"{event}\" group {}: unknown key \"{k}\" is ignored{hint}",
                                i + 1
                            ),
                        );
                    }
                    for (j, h) in group
                        .get("hooks")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .enumerate()
                    {
                        if let Some(h) = h.as_object() {
                            let mut path = base.clone();
                            path.extend([key("hooks"), Step::Index(j)]);
                            handlers.push((path, h));
                        }
                    }
                }
                (_, Some(obj)) => handlers.push((base.clone(), obj)),
                _ => {}
            }
            for (path, obj) in handlers {
                for k in obj.keys() {
                    // A nested `hooks` list outside Claude is the Claude shape, which
                    // the dialect's own warning already explains.
                    if entry_keys(dialect).contains(&k.as_str()) || k == "hooks" {
                        continue;
                    }
                    let mut at = path.clone();
                    at.push(key(k));
                    let pos = positions.get(&at).or_else(|| positions.nearest(&path));
                    let hint = match (dialect, k.as_str()) {
                        (Dialect::Copse, "failClosed") => " — Copse files say \"onFailure\": \"open\" or \"closed\" (failClosed is Cursor's key)".to_string(),
                        (Dialect::Copse, "loopLimit") => " — did you mean \"loop_limit\"?".to_string(),
                        (Dialect::Cursor, "onFailure") => " — Cursor files say \"failClosed\": true or false (onFailure is the Copse key)".to_string(),
                        _ => did_you_mean(k, entry_keys(dialect).iter().copied())
                            .map(|m| format!(" — did you mean \"{m}\"?"))
                            .unwrap_or_default(),
                    };
                    let level = if dialect == Dialect::Copse {
                        Level::Error
                    } else {
                        Level::Warning
                    };
                    problem(
                        pos.map(|p| p.0),
                        pos.map(|p| p.1),
                        level,
                        format!(
                            "\"{event}\" entry {}: unknown key \"{k}\" is ignored{hint}",
                            i + 1
                        ),
                    );
                }
                // `bash`: Copilot's command field.
                if let Some((field, _)) = ["command", "bash"]
                    .into_iter()
                    .filter_map(|f| obj.get(f).and_then(Value::as_str).map(|c| (f, c)))
                    .find(|(_, c)| has_control_chars(c))
                {
                    let mut at = path.clone();
                    at.push(key(field));
                    let pos = positions.get(&at).or_else(|| positions.nearest(&path));
                    problem(
                        pos.map(|p| p.0),
                        pos.map(|p| p.1),
                        Level::Error,
                        format!(
                            "\"{event}\" entry {}: the command contains terminal control characters or bidi marks (escape sequences can hide what it does when printed)",
                            i + 1
                        ),
                    );
                }
            }
        }
    }
}

/// `~` and `~/…` expanded against `home`; any other path unchanged.
pub fn expand_home(path: &Path, home: &Path) -> PathBuf {
    match path.strip_prefix("~") {
        Ok(rest) => home.join(rest),
        Err(_) => path.to_path_buf(),
    }
}

/// The settings file's keys and retention keys, read from its JSON Schema (which is
/// generated from the settings types, so lint and the engine cannot disagree).
struct SettingsKeys {
    top: Vec<String>,
    retention: Vec<String>,
}

fn settings_keys() -> &'static SettingsKeys {
    static KEYS: std::sync::OnceLock<SettingsKeys> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let schema = crate::settings::settings_schema();
        let keys = |v: &Value| {
            v.as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default()
        };
        SettingsKeys {
            top: keys(&schema["properties"]),
            retention: keys(&schema["definitions"]["RetentionSettings"]["properties"]),
        }
    })
}

/// The JSON type a settings key's schema names, when it names exactly one.
fn settings_key_type(key: &str) -> Option<&'static str> {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    let schema = SCHEMA.get_or_init(crate::settings::settings_schema);
    match schema["properties"][key]["type"].as_str()? {
        "boolean" => Some("boolean"),
        "array" => Some("array"),
        "object" => Some("object"),
        "string" => Some("string"),
        "integer" | "number" => Some("number"),
        _ => None,
    }
}

/// Whether a file is a copse-hooks settings file rather than a hooks config.
fn is_settings_file(path: &Path, doc: &Value, copse_dir: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let in_claude = path
        .parent()
        .and_then(|p| p.file_name())
        .is_some_and(|d| d == ".claude");
    if name != "settings.json" || in_claude {
        return false;
    }
    if path.parent() == Some(copse_dir) {
        return true;
    }
    let known = &settings_keys().top;
    doc.as_object().is_some_and(|o| {
        !o.contains_key("hooks")
            && o.keys().any(|k| {
                known.contains(k) || did_you_mean(k, known.iter().map(String::as_str)).is_some()
            })
    })
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Lints a settings file: unknown keys (with did-you-mean), wrong types, and
/// writable paths that do not exist.
fn lint_settings(doc: &Value, home: &Path, positions: &Positions, problem: &mut ProblemSink<'_>) {
    let Some(obj) = doc.as_object() else {
        problem(
            Some(1),
            Some(1),
            Level::Error,
            "a settings file must be a JSON object".to_string(),
        );
        return;
    };
    let at = |path: &[Step]| {
        positions
            .get(path)
            .map(|p| (Some(p.0), Some(p.1)))
            .unwrap_or((None, None))
    };
    let keys = settings_keys();
    for (k, v) in obj {
        let (line, column) = at(&[Step::Key(k.clone())]);
        if !keys.top.contains(k) {
            let hint = did_you_mean(k, keys.top.iter().map(String::as_str))
                .map(|m| format!(" — did you mean \"{m}\"?"))
                .unwrap_or_default();
            problem(
                line,
                column,
                Level::Warning,
                format!("unknown settings key \"{k}\" is ignored{hint}"),
            );
            continue;
        }
        if let Some(ty) = settings_key_type(k)
            && json_type(v) != ty
        {
            problem(
                line,
                column,
                Level::Error,
                format!("\"{k}\" must be a JSON {ty}, got {}", json_type(v)),
            );
            continue;
        }
        // The retention object's own keys are checked one by one below.
        if k == crate::settings::SCHEMA_KEY || (k == "retention" && v.is_object()) {
            continue;
        }
        // Otherwise the settings types decide, exactly as the engine reads the key.
        let mut one = serde_json::Map::new();
        one.insert(k.clone(), v.clone());
        if let Err(e) = serde_json::from_value::<crate::settings::Settings>(Value::Object(one)) {
            problem(
                line,
                column,
                Level::Error,
                format!("\"{k}\" is not valid: {e}"),
            );
        }
    }
    if let Some(retention) = obj.get("retention").and_then(Value::as_object) {
        for (k, v) in retention {
            let (line, column) = at(&[Step::Key("retention".into()), Step::Key(k.clone())]);
            if !keys.retention.contains(k) {
                let hint = did_you_mean(k, keys.retention.iter().map(String::as_str))
                    .map(|m| format!(" — did you mean \"{m}\"?"))
                    .unwrap_or_default();
                problem(
                    line,
                    column,
                    Level::Warning,
                    format!("unknown retention key \"{k}\" is ignored{hint}"),
                );
            } else if !v.is_u64() {
                problem(
                    line,
                    column,
                    Level::Error,
                    format!("\"retention.{k}\" must be a non-negative integer"),
                );
            }
        }
    }
    if let Some(paths) = obj.get("sandboxWritablePaths").and_then(Value::as_array) {
        for (i, p) in paths.iter().enumerate() {
            let (line, column) = at(&[Step::Key("sandboxWritablePaths".into()), Step::Index(i)]);
            let Some(text) = p.as_str() else {
                problem(
                    line,
                    column,
                    Level::Error,
                    format!("sandboxWritablePaths[{i}] must be a string path"),
                );
                continue;
            };
            let expanded = expand_home(Path::new(text), home);
            if !expanded.is_absolute() {
                problem(
                    line,
                    column,
                    Level::Error,
                    format!(
                        "sandboxWritablePaths[{i}] {text:?} must be absolute (or start with ~/)"
                    ),
                );
            } else if !expanded.is_dir() {
                problem(
                    line,
                    column,
                    Level::Warning,
                    format!(
                        "sandboxWritablePaths[{i}] {text:?}: {} does not exist (yet): hooks cannot write there until it does",
                        expanded.display()
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_are_recognised() {
        assert_eq!(
            script_of("./hooks/a.sh --x"),
            Some(("./hooks/a.sh".into(), true))
        );
        assert_eq!(
            script_of("node hooks/guard.js"),
            Some(("hooks/guard.js".into(), false))
        );
        assert_eq!(
            script_of("python3 -u check.py"),
            Some(("check.py".into(), false))
        );
        assert_eq!(script_of("echo hi"), None);
        assert_eq!(script_of("FOO=1 ./x.sh"), None);
        assert_eq!(script_of("$HOME/x.sh"), None);
    }

    #[test]
    fn entry_numbers_and_levels() {
        assert_eq!(entry_number("\"stop\" entry 12 has a missing"), Some(12));
        assert_eq!(
            level_of("Unknown hook event \"x\" — entries skipped"),
            Level::Error
        );
        assert_eq!(
            level_of(
                "Cursor hook event \"workspaceOpen\" is recognised by Cursor but not supported by copse-hooks yet — entries skipped"
            ),
            Level::Warning
        );
    }
}
