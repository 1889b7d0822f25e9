//! Reading a Claude settings file into hook specs: event → matcher groups →
//! handlers, each handler checked on its own (a bad one is a warning naming its
//! event, group and position; the rest still load).

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{
    Claude, IF_EVENTS, PUBLISHED_EVENTS, PermissionRule, canonical_for, compile_matcher,
    default_timeout, failure_can_block, uses_matcher,
};
use crate::dialect::{
    Dialect, HookMatcher, HookSpec, ParsedConfig, Scope, seconds, string_field, timeout_seconds,
};
use crate::matcher::MatcherError;
use crate::outcome::FailurePolicy;

/// Quotes one word for `sh`, keeping `${CLAUDE_PROJECT_DIR}` as a live expansion
/// (Claude substitutes it in exec-form arguments).
fn shell_word(word: &str) -> String {
    const VAR: &str = "${CLAUDE_PROJECT_DIR}";
    if word.is_empty() {
        return "''".to_string();
    }
    let quote = |s: &str| -> String {
        if s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-=:,+@%".contains(c))
        {
            s.to_string()
        } else {
            format!("'{}'", s.replace('\'', r"'\''"))
        }
    };
    word.split(VAR)
        .map(|piece| {
            if piece.is_empty() {
                String::new()
            } else {
                quote(piece)
            }
        })
        .collect::<Vec<_>>()
        .join("\"${CLAUDE_PROJECT_DIR}\"")
}

/// The file's name as a message starts with it (`.claude/settings.local.json`).
fn display_name(source: &Path) -> String {
    let file = source
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "settings.json".to_string());
    format!(".claude/{file}")
}

/// A hint for an unknown event name: the Claude name of a Cursor event, or the
/// right spelling of a published one.
fn suggestion(event: &str) -> String {
    let cursor_map = [
        ("preToolUse", "PreToolUse"),
        ("postToolUse", "PostToolUse"),
        ("postToolUseFailure", "PostToolUseFailure"),
        ("beforeSubmitPrompt", "UserPromptSubmit"),
        ("stop", "Stop"),
        ("subagentStart", "SubagentStart"),
        ("subagentStop", "SubagentStop"),
        ("sessionStart", "SessionStart"),
        ("sessionEnd", "SessionEnd"),
        ("preCompact", "PreCompact"),
        ("beforeShellExecution", "PreToolUse with matcher \"Bash\""),
        ("beforeMCPExecution", "PreToolUse with matcher \"mcp__.*\""),
        ("beforeReadFile", "PreToolUse with matcher \"Read\""),
        ("afterShellExecution", "PostToolUse with matcher \"Bash\""),
        ("afterMCPExecution", "PostToolUse with matcher \"mcp__.*\""),
        ("afterFileEdit", "PostToolUse with matcher \"Edit|Write\""),
    ];
    if let Some((_, claude)) = cursor_map.iter().find(|(c, _)| *c == event) {
        return format!(" (\"{event}\" is a Cursor event name; in settings.json use {claude})");
    }
    if let Some(known) = PUBLISHED_EVENTS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(event))
    {
        return format!(" (did you mean \"{known}\"? Claude Code event names are PascalCase)");
    }
    String::new()
}

/// What parsing one handler found.
struct Handler {
    command: String,
    /// Listed but never run (another handler type, an `if` on an event without
    /// tool context, another shell).
    inactive: bool,
    timeout: Duration,
    condition: Option<PermissionRule>,
    run_async: bool,
    async_rewake: bool,
}

impl Claude {
    /// Reads one handler object; `None` (after a warning) when it is unusable.
    fn handler(
        out: &mut ParsedConfig,
        ctx: (&Path, Scope, &str, bool),
        label: &str,
        obj: &Map<String, Value>,
    ) -> Option<Handler> {
        let (source, scope, event, wired) = ctx;
        let note = |out: &mut ParsedConfig, message: String| {
            if wired {
                out.warn(source, scope, Some(event), message);
            }
        };
        let kind = match obj.get("type") {
            Some(Value::String(k)) => k.as_str(),
            None | Some(Value::Null) => {
                if obj.contains_key("command") {
                    note(
                        out,
                        format!(
                            "{label} has no \"type\"; treated as a command hook (Claude Code requires \"type\": \"command\")"
                        ),
                    );
                }
                "command"
            }
            Some(other) => {
                note(
                    out,
                    format!("{label} has a non-string \"type\" ({other}) — skipped"),
                );
                return None;
            }
        };
        if kind != "command" {
            let main = match kind {
                "http" => string_field(obj, &["url"]),
                "prompt" | "agent" => string_field(obj, &["prompt"]),
                "mcp_tool" => {
                    let server = string_field(obj, &["server"]).unwrap_or_default();
                    let name = string_field(obj, &["tool"]).unwrap_or_default();
                    Some(format!("{server}/{name}"))
                }
                _ => None,
            };
            let command = match main {
                Some(m) => format!("{kind}: {m}"),
                None => kind.to_string(),
            };
            note(
                out,
                format!(
                    "{label} has type \"{kind}\" on \"{event}\"; copse-hooks runs only \"command\" hooks — listed as unsupported, never run"
                ),
            );
            return Some(Handler {
                command,
                inactive: true,
                timeout: default_timeout(event),
                condition: None,
                run_async: false,
                async_rewake: false,
            });
        }
        let Some(command) = obj
            .get("command")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|c| !c.is_empty())
        else {
            note(
                out,
                format!("{label} has a missing or empty \"command\" — skipped"),
            );
            return None;
        };
        let mut inactive = false;
        let command = match obj.get("args") {
            None | Some(Value::Null) => command.to_string(),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
                let mut words = vec![shell_word(command)];
                words.extend(items.iter().filter_map(Value::as_str).map(shell_word));
                words.join(" ")
            }
            Some(_) => {
                note(
                    out,
                    format!("{label} \"args\" must be an array of strings — skipped"),
                );
                return None;
            }
        };
        match obj.get("shell") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s == "bash" => {}
            Some(other) => {
                let shell = other
                    .as_str()
                    .map_or_else(|| other.to_string(), str::to_string);
                note(
                    out,
                    format!(
                        "{label} asks for shell \"{shell}\"; copse-hooks runs command hooks with sh only — listed as unsupported, never run"
                    ),
                );
                inactive = true;
            }
        }
        let mut condition = None;
        match obj.get("if") {
            None | Some(Value::Null) => {}
            Some(Value::String(cond)) if !IF_EVENTS.contains(&event) => {
                note(
                    out,
                    format!(
                        "{label} has an \"if\" condition ({cond}) on \"{event}\"; Claude Code evaluates \"if\" only on tool events, so this handler never runs"
                    ),
                );
                inactive = true;
            }
            Some(Value::String(cond)) => match PermissionRule::parse(cond) {
                Ok(rule) => condition = Some(rule),
                Err(e) => {
                    note(out, format!("{label} \"if\": {e} — never run"));
                    inactive = true;
                }
            },
            Some(other) => {
                note(
                    out,
                    format!(
                        "{label} \"if\" must be a permission-rule string, got {other} — never run"
                    ),
                );
                inactive = true;
            }
        }
        let flag = |key: &str| obj.get(key) == Some(&Value::Bool(true));
        let async_rewake = flag("asyncRewake");
        let run_async = flag("async") || async_rewake;
        let default = default_timeout(event);
        let timeout = match obj.get("timeout") {
            None | Some(Value::Null) => default,
            Some(v) => timeout_seconds(v).unwrap_or_else(|| {
                note(
                    out,
                    format!(
                        "{label} \"timeout\" must be a positive number of seconds — using the default {}",
                        seconds(default)
                    ),
                );
                default
            }),
        };
        Some(Handler {
            command,
            inactive,
            timeout,
            condition,
            run_async,
            async_rewake,
        })
    }

    /// The matcher as written (trimmed; `None` when absent or blank).
    fn matcher_source(raw: Option<&Value>) -> Option<String> {
        match raw {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) => Some(s.trim().to_string()),
            Some(other) => Some(other.to_string()),
        }
    }

    /// Compiles a group's matcher for one of its hooks. Events that ignore matchers
    /// get [`HookMatcher::Always`].
    fn matcher(event: &str, wired: bool, raw: Option<&Value>) -> HookMatcher {
        match (Self::matcher_source(raw), raw) {
            (None, _) => HookMatcher::Always,
            (Some(_), _) if wired && !uses_matcher(event) => HookMatcher::Always,
            (Some(p), Some(Value::String(_))) => {
                compile_matcher(&p).unwrap_or_else(HookMatcher::Invalid)
            }
            (Some(p), _) => HookMatcher::Invalid(MatcherError {
                pattern: p,
                reason: "matcher must be a string".to_string(),
            }),
        }
    }

    /// Parses one settings (or plugin hooks) file.
    pub(super) fn parse_settings(
        &self,
        text: &str,
        source: &Path,
        scope: Scope,
        root: Option<&Path>,
    ) -> ParsedConfig {
        let mut out = ParsedConfig::default();
        let name = display_name(source);
        let doc: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                out.invalid_json(source, scope, &name, &e);
                return out;
            }
        };
        let Some(doc) = doc.as_object() else {
            out.warn(
                source,
                scope,
                None,
                format!("{name} is not a JSON object — file ignored"),
            );
            return out;
        };
        match doc.get("enabledPlugins") {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                for (id, on) in m {
                    match on {
                        Value::Bool(b) => {
                            out.enabled_plugins.insert(id.clone(), *b);
                        }
                        other => out.warn(
                            source,
                            scope,
                            None,
                            format!("{name} \"enabledPlugins\" entry \"{id}\" must be true or false, got {other} — ignored"),
                        ),
                    }
                }
            }
            Some(other) => out.warn(
                source,
                scope,
                None,
                format!("{name} \"enabledPlugins\" must be an object of plugin ids, got {other} — ignored"),
            ),
        }
        match doc.get("disableAllHooks") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => out.disable_all_hooks = Some(*b),
            Some(other) => out.warn(
                source,
                scope,
                None,
                format!("{name} \"disableAllHooks\" must be true or false, got {other} — ignored"),
            ),
        }
        // A settings file has many other keys: no `hooks` is simply no hooks.
        let hooks = match doc.get("hooks") {
            None | Some(Value::Null) => return out,
            Some(Value::Object(h)) => h,
            Some(_) => {
                out.warn(
                    source,
                    scope,
                    None,
                    format!("{name} \"hooks\" must be an object of event names — hooks ignored"),
                );
                return out;
            }
        };
        for (event, value) in hooks {
            let canonical = canonical_for(event);
            let wired = canonical.is_some();
            let nothing_declared = value.as_array().is_some_and(Vec::is_empty);
            if !wired {
                if PUBLISHED_EVENTS.contains(&event.as_str()) {
                    if !nothing_declared {
                        out.warn(
                            source,
                            scope,
                            Some(event),
                            format!(
                                "Claude hook event \"{event}\" is recognised by Claude Code but not supported by copse-hooks yet — entries ignored"
                            ),
                        );
                    }
                } else {
                    if !nothing_declared {
                        out.warn(
                            source,
                            scope,
                            Some(event),
                            format!(
                                "Unknown Claude hook event \"{event}\" — entries ignored{}",
                                suggestion(event)
                            ),
                        );
                    }
                    continue;
                }
            }
            let Some(groups) = value.as_array() else {
                if wired {
                    out.warn(
                        source,
                        scope,
                        Some(event),
                        format!(
                            "\"{event}\" must be an array of {{ matcher, hooks: [...] }} groups — skipped"
                        ),
                    );
                }
                continue;
            };
            let ctx = (source, scope, event.as_str(), wired);
            let flat_hint = " (this looks like Cursor's flat { command } entry; Claude Code nests handlers: { \"matcher\": …, \"hooks\": [{ \"type\": \"command\", \"command\": … }] })";
            for (gi, group) in groups.iter().enumerate() {
                let n = gi + 1;
                let Some(group) = group.as_object() else {
                    if wired {
                        out.warn(
                            source,
                            scope,
                            Some(event),
                            format!(
                                "\"{event}\" group {n} must be an object {{ matcher, hooks: [...] }} — skipped"
                            ),
                        );
                    }
                    continue;
                };
                let Some(handlers) = group.get("hooks").and_then(Value::as_array) else {
                    if wired {
                        let hint = if group.contains_key("command") {
                            flat_hint
                        } else {
                            ""
                        };
                        out.warn(
                            source,
                            scope,
                            Some(event),
                            format!("\"{event}\" group {n} has no \"hooks\" array — skipped{hint}"),
                        );
                    }
                    continue;
                };
                let raw_matcher = group.get("matcher");
                let matcher_source = Self::matcher_source(raw_matcher);
                if wired
                    && uses_matcher(event)
                    && let HookMatcher::Invalid(e) = Self::matcher(event, wired, raw_matcher)
                {
                    let p = &e.pattern;
                    out.warn(
                        source,
                        scope,
                        Some(event),
                        if raw_matcher.is_some_and(Value::is_string) {
                            format!(
                                "\"{event}\" group {n} matcher \"{p}\" is not a valid regex ({}) — its hooks never fire",
                                e.reason
                            )
                        } else {
                            format!(
                                "\"{event}\" group {n} matcher must be a string — its hooks never fire"
                            )
                        },
                    );
                }
                for (hi, handler) in handlers.iter().enumerate() {
                    let label = format!("\"{event}\" group {n} hook {}", hi + 1);
                    let Some(obj) = handler.as_object() else {
                        if wired {
                            out.warn(
                                source,
                                scope,
                                Some(event),
                                format!("{label} must be an object — skipped"),
                            );
                        }
                        continue;
                    };
                    let Some(h) = Self::handler(&mut out, ctx, &label, obj) else {
                        continue;
                    };
                    let matcher = Self::matcher(event, wired, raw_matcher);
                    out.hooks.push(HookSpec {
                        dialect: Dialect::Claude,
                        event: event.clone(),
                        canonical: if h.inactive { None } else { canonical },
                        command: h.command,
                        matcher_source: matcher_source.clone(),
                        matcher,
                        glob: None,
                        policy: if failure_can_block(event) {
                            FailurePolicy::Closed
                        } else {
                            FailurePolicy::Open
                        },
                        timeout: h.timeout,
                        source: source.to_path_buf(),
                        scope,
                        root: root.map(Path::to_path_buf),
                        entry: n,
                        sandbox: true,
                        run_async: h.run_async,
                        network: true,
                        loop_limit: None,
                        options: crate::dialect::HookOptions {
                            policy_fixed: !failure_can_block(event),
                            condition: h.condition,
                            async_rewake: h.async_rewake,
                            plugin: None,
                            ..crate::dialect::HookOptions::default()
                        },
                    });
                }
            }
        }
        out
    }
}
