//! Reading a Cursor `hooks.json` into hook specs: flat entries under camelCase event
//! names, each checked on its own (a bad entry is a warning naming its event and
//! position; the rest still load).

use std::path::Path;

use serde_json::Value;

use super::{Cursor, DEFAULT_TIMEOUT, PUBLISHED_EVENTS, canonical_for};
use crate::dialect::{Dialect, HookMatcher, HookSpec, ParsedConfig, Scope, timeout_seconds};
use crate::matcher::{GlobMatcher, RegexMatcher};
use crate::outcome::FailurePolicy;

fn suggestion(event: &str) -> String {
    let claude_map = [
        ("PreToolUse", "preToolUse"),
        ("PostToolUse", "postToolUse"),
        ("UserPromptSubmit", "beforeSubmitPrompt"),
        ("Stop", "stop"),
        ("SubagentStop", "subagentStop"),
        ("SessionStart", "sessionStart"),
        ("SessionEnd", "sessionEnd"),
        ("PreCompact", "preCompact"),
    ];
    if let Some((_, cursor)) = claude_map.iter().find(|(c, _)| *c == event) {
        return format!(
            " (\"{event}\" is a Claude Code event; in .cursor/hooks.json use \"{cursor}\")"
        );
    }
    if let Some(known) = PUBLISHED_EVENTS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(event))
    {
        return format!(" (did you mean \"{known}\"? Cursor event names are camelCase)");
    }
    String::new()
}

impl Cursor {
    /// Parses one `hooks.json`.
    pub(super) fn parse_file(
        &self,
        text: &str,
        source: &Path,
        scope: Scope,
        root: Option<&Path>,
    ) -> ParsedConfig {
        let mut out = ParsedConfig::default();
        let doc: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                out.invalid_json(source, scope, "hooks.json", &e);
                return out;
            }
        };
        let Some(hooks) = doc.get("hooks").and_then(Value::as_object) else {
            out.warn(
                source,
                scope,
                None,
                "hooks.json has no \"hooks\" object — file ignored".to_string(),
            );
            return out;
        };
        for (event, value) in hooks {
            let canonical = canonical_for(event);
            if canonical.is_none() {
                if PUBLISHED_EVENTS.contains(&event.as_str()) {
                    out.warn(source,
                        scope,
                        Some(event),
                        format!(
                            "Cursor hook event \"{event}\" is recognised by Cursor but not supported by copse-hooks yet — entries skipped"
                        ),
                    );
                } else {
                    out.warn(
                        source,
                        scope,
                        Some(event),
                        format!(
                            "Unknown hook event \"{event}\"{} — entries skipped",
                            suggestion(event)
                        ),
                    );
                    continue;
                }
            }
            let Some(entries) = value.as_array() else {
                out.warn(
                    source,
                    scope,
                    Some(event),
                    format!("\"{event}\" must be an array of {{ command }} entries — skipped"),
                );
                continue;
            };
            for (i, entry) in entries.iter().enumerate() {
                let n = i + 1;
                let obj = entry.as_object();
                let command = obj
                    .and_then(|o| o.get("command"))
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|c| !c.is_empty());
                let Some(command) = command else {
                    let hint = if obj.is_some_and(|o| o.get("hooks").is_some_and(Value::is_array)) {
                        " (this looks like Claude Code's nested { matcher, hooks: [...] } shape; Cursor's hooks.json takes flat { command, matcher } entries)"
                    } else {
                        ""
                    };
                    out.warn(source,
                        scope,
                        Some(event),
                        format!(
                            "\"{event}\" entry {n} has a missing or empty \"command\" — skipped{hint}"
                        ),
                    );
                    continue;
                };
                let Some(obj) = obj else { continue };
                if let Some(kind) = obj.get("type").and_then(Value::as_str)
                    && kind != "command"
                {
                    out.warn(source,
                        scope,
                        Some(event),
                        format!(
                            "\"{event}\" entry {n} has type \"{kind}\"; only command hooks are supported — skipped"
                        ),
                    );
                    continue;
                }
                let matcher_source = match obj.get("matcher") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) if s.trim().is_empty() => None,
                    Some(Value::String(s)) => Some(s.trim().to_string()),
                    Some(other) => Some(other.to_string()),
                };
                let matcher = match (&matcher_source, obj.get("matcher")) {
                    (None, _) => HookMatcher::Always,
                    (Some(p), Some(Value::String(_))) => match RegexMatcher::new(p) {
                        Ok(re) => HookMatcher::Regex(re),
                        Err(e) => {
                            out.warn(source,
                                scope,
                                Some(event),
                                format!(
                                    "\"{event}\" entry {n} matcher \"{p}\" is not a valid regex ({}) — hook skipped",
                                    e.reason
                                ),
                            );
                            HookMatcher::Invalid(e)
                        }
                    },
                    (Some(p), _) => {
                        let e = crate::matcher::MatcherError {
                            pattern: p.clone(),
                            reason: "matcher must be a string".to_string(),
                        };
                        out.warn(source,
                            scope,
                            Some(event),
                            format!(
                                "\"{event}\" entry {n} matcher must be a regex string — hook skipped"
                            ),
                        );
                        HookMatcher::Invalid(e)
                    }
                };
                let policy = match obj.get("failClosed") {
                    None | Some(Value::Bool(true)) => FailurePolicy::Closed,
                    Some(Value::Bool(false)) => FailurePolicy::Open,
                    Some(_) => {
                        out.warn(source,
                            scope,
                            Some(event),
                            format!(
                                "\"{event}\" entry {n} \"failClosed\" must be a boolean — failing closed"
                            ),
                        );
                        FailurePolicy::Closed
                    }
                };
                let timeout = match obj.get("timeout") {
                    None | Some(Value::Null) => DEFAULT_TIMEOUT,
                    Some(v) => timeout_seconds(v).unwrap_or_else(|| {
                        out.warn(source,
                            scope,
                            Some(event),
                            format!(
                                "\"{event}\" entry {n} \"timeout\" must be a positive number of seconds — using the default 30s"
                            ),
                        );
                        DEFAULT_TIMEOUT
                    }),
                };
                let glob = match obj.get("glob") {
                    None | Some(Value::Null) => None,
                    Some(v) => {
                        let patterns: Vec<String> = match v {
                            Value::String(s) => vec![s.trim().to_string()],
                            Value::Array(items) => items
                                .iter()
                                .filter_map(Value::as_str)
                                .map(|s| s.trim().to_string())
                                .collect(),
                            _ => Vec::new(),
                        };
                        let patterns: Vec<String> =
                            patterns.into_iter().filter(|p| !p.is_empty()).collect();
                        if patterns.is_empty() {
                            None
                        } else {
                            match GlobMatcher::new(&patterns) {
                                Ok(g) => Some(g),
                                Err(e) => {
                                    out.warn(
                                        source,
                                        scope,
                                        Some(event),
                                        format!("\"{event}\" entry {n} {e} — glob ignored"),
                                    );
                                    None
                                }
                            }
                        }
                    }
                };
                out.hooks.push(HookSpec {
                    dialect: Dialect::Cursor,
                    event: event.clone(),
                    canonical,
                    command: command.to_string(),
                    matcher_source,
                    matcher,
                    glob,
                    policy,
                    timeout,
                    source: source.to_path_buf(),
                    scope,
                    root: root.map(Path::to_path_buf),
                    entry: n,
                    sandbox: true,
                    run_async: false,
                    network: true,
                    loop_limit: None,
                    options: crate::dialect::HookOptions {
                        policy_fixed: matches!(obj.get("failClosed"), Some(Value::Bool(_))),
                        ..crate::dialect::HookOptions::default()
                    },
                });
            }
        }
        out
    }
}
