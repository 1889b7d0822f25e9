//! Reading a Cursor `hooks.json` into hook specs: flat entries under camelCase event
//! names, each checked on its own (a bad entry is a warning naming its event and
//! position; the rest still load).

use std::path::Path;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::Value;

use super::{Cursor, DEFAULT_TIMEOUT, PUBLISHED_EVENTS, canonical_for};
use crate::dialect::spec::{
    self, Field, Lenient, VendorHook, elements, matcher_source, timeout_secs,
};
use crate::dialect::{Dialect, HookMatcher, HookOptions, ParsedConfig, Scope};
use crate::matcher::{GlobMatcher, MatcherError, RegexMatcher};
use crate::outcome::FailurePolicy;

/// A Cursor `hooks.json` (`~/.cursor/hooks.json` or `<root>/.cursor/hooks.json`).
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(title = "Cursor hooks.json", extend("required" = ["hooks"]))]
pub struct HooksFile {
    /// The format version: `1`.
    #[serde(default)]
    pub version: Field<u32>,
    /// Hook entries by Cursor's camelCase event name, run in file order.
    #[serde(default)]
    #[schemars(schema_with = "hooks_schema")]
    pub hooks: Option<spec::Shape>,
}

fn hooks_schema(generator: &mut SchemaGenerator) -> Schema {
    spec::events_schema::<Entry>(
        generator,
        &PUBLISHED_EVENTS,
        "Hook entries by Cursor's camelCase event name, run in file order.",
    )
}

/// One hook: a shell command that gets the event as JSON on stdin.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false, "required" = ["command"]))]
pub struct Entry {
    /// The shell command (run from the workspace root for project hooks, from
    /// `~/.cursor` for user hooks).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub command: Field<String>,
    /// The hook type: only `"command"` is run.
    #[serde(default, rename = "type")]
    pub kind: Field<String>,
    /// A regex tested against the event's subject (the command line, the tool name,
    /// the subagent type, …).
    #[serde(default)]
    pub matcher: Field<String>,
    /// Whether a failed hook (crash, timeout, bad output) blocks the gated action.
    /// Cursor's own default is `false`; copse-hooks fails closed unless set to `false`.
    #[serde(default, rename = "failClosed")]
    pub fail_closed: Field<bool>,
    /// Seconds the hook may run.
    #[serde(default)]
    #[schemars(range(min = 0.001))]
    pub timeout: Field<f64>,
    /// Path globs selecting which files fire `afterFileEdit`.
    #[serde(default)]
    pub glob: Field<Globs>,
}

/// One glob or a list of globs.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Globs {
    /// One pattern.
    One(String),
    /// Several patterns.
    Many(Vec<String>),
}

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
    /// Parses one `hooks.json`: each entry deserialized on its own into [`Entry`],
    /// then compiled into a hook spec.
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
        let file = doc
            .is_object()
            .then(|| HooksFile::deserialize(&doc).ok())
            .flatten();
        let hooks = match spec::events(&doc, file.as_ref().and_then(|f| f.hooks)) {
            spec::Events::Object(h) => h,
            _ => {
                out.warn(
                    source,
                    scope,
                    None,
                    "hooks.json has no \"hooks\" object — file ignored".to_string(),
                );
                return out;
            }
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
            for el in elements(entries) {
                let hook = VendorHook {
                    dialect: Dialect::Cursor,
                    event,
                    canonical,
                    source,
                    scope,
                    root,
                    entry: el.n,
                };
                compile(&mut out, &hook, el.value);
            }
        }
        out
    }
}

/// Compiles one entry (warning about what is wrong with it).
fn compile(out: &mut ParsedConfig, hook: &VendorHook<'_>, value: &Value) {
    let (source, scope, event, n) = (hook.source, hook.scope, hook.event, hook.entry);
    let warn = |out: &mut ParsedConfig, message: String| {
        out.warn(source, scope, Some(event), message);
    };
    let entry: Option<Entry> = spec::entry(value);
    let Some((entry, command)) = entry.and_then(|e| spec::text(&e.command).map(|c| (e, c))) else {
        let hint = if value.get("hooks").is_some_and(Value::is_array) {
            " (this looks like Claude Code's nested { matcher, hooks: [...] } shape; Cursor's hooks.json takes flat { command, matcher } entries)"
        } else {
            ""
        };
        warn(
            out,
            format!("\"{event}\" entry {n} has a missing or empty \"command\" — skipped{hint}"),
        );
        return;
    };
    if let Some(Lenient::Ok(kind)) = &entry.kind
        && kind != "command"
    {
        warn(
            out,
            format!(
                "\"{event}\" entry {n} has type \"{kind}\"; only command hooks are supported — skipped"
            ),
        );
        return;
    }
    let mut spec = hook.command(command, DEFAULT_TIMEOUT);
    spec.matcher_source = matcher_source(&entry.matcher);
    spec.matcher = match (&spec.matcher_source, &entry.matcher) {
        (None, _) => HookMatcher::Always,
        (Some(p), Some(Lenient::Ok(_))) => match RegexMatcher::new(p) {
            Ok(re) => HookMatcher::Regex(re),
            Err(e) => {
                warn(
                    out,
                    format!(
                        "\"{event}\" entry {n} matcher \"{p}\" is not a valid regex ({}) — hook skipped",
                        e.reason
                    ),
                );
                HookMatcher::Invalid(e)
            }
        },
        (Some(p), _) => {
            warn(
                out,
                format!("\"{event}\" entry {n} matcher must be a regex string — hook skipped"),
            );
            HookMatcher::Invalid(MatcherError {
                pattern: p.clone(),
                reason: "matcher must be a string".to_string(),
            })
        }
    };
    spec.policy = match &entry.fail_closed {
        None | Some(Lenient::Ok(true)) => FailurePolicy::Closed,
        Some(Lenient::Ok(false)) => FailurePolicy::Open,
        Some(Lenient::Bad(_)) => {
            warn(
                out,
                format!("\"{event}\" entry {n} \"failClosed\" must be a boolean — failing closed"),
            );
            FailurePolicy::Closed
        }
    };
    if let Some(t) = &entry.timeout {
        spec.timeout = timeout_secs(t).unwrap_or_else(|| {
            warn(
                out,
                format!(
                    "\"{event}\" entry {n} \"timeout\" must be a positive number of seconds — using the default 30s"
                ),
            );
            DEFAULT_TIMEOUT
        });
    }
    let patterns: Vec<String> = match &entry.glob {
        None => Vec::new(),
        Some(Lenient::Ok(Globs::One(s))) => vec![s.trim().to_string()],
        Some(Lenient::Ok(Globs::Many(items))) => {
            items.iter().map(|s| s.trim().to_string()).collect()
        }
        // A list with a non-string item keeps its strings, as before.
        Some(Lenient::Bad(Value::Array(items))) => items
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.trim().to_string())
            .collect(),
        Some(Lenient::Bad(_)) => Vec::new(),
    };
    let patterns: Vec<String> = patterns.into_iter().filter(|p| !p.is_empty()).collect();
    if !patterns.is_empty() {
        spec.glob = match GlobMatcher::new(&patterns) {
            Ok(g) => Some(g),
            Err(e) => {
                warn(out, format!("\"{event}\" entry {n} {e} — glob ignored"));
                None
            }
        };
    }
    spec.options = HookOptions {
        policy_fixed: matches!(entry.fail_closed, Some(Lenient::Ok(_))),
        ..HookOptions::default()
    };
    out.hooks.push(spec);
}
