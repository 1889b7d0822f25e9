//! `lint`: validate hook configs of any dialect and point at each problem.
//!
//! The dialect adapters already explain what is wrong with a config (their parse
//! warnings); lint adds a level, a `line:column`, and the checks only an author
//! wants: a timeout that looks like milliseconds, and a hook script that does not
//! exist or is not executable.

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
    let rest = message.split("entry ").nth(1)?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

fn level_of(message: &str) -> Level {
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
        let dialect = detect_dialect(file, &doc, &self.config().copse_dir);
        let canonical_file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        let (scope, root) = match crate::dryrun::classify(self, &canonical_file) {
            Some((_, scope, root)) => (scope, root),
            None => (
                Scope::Project,
                canonical_file
                    .parent()
                    .and_then(Path::parent)
                    .map(Path::to_path_buf),
            ),
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
            let message = w.message.replace(&canonical_file.display().to_string(), "");
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
