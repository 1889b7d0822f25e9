//! Reading Gemini CLI `settings.json` and extension `hooks/hooks.json` files.
//!
//! Problems become warnings naming the event, `entry N` (the 1-based definition)
//! and `hook M`, so `lint` can point at them; nothing here aborts.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{
    DEFAULT_TIMEOUT, MatcherKind, PUBLISHED_EVENTS, SECONDS_LOOKALIKE_MS, canonical_for,
    matcher_kind,
};
use crate::dialect::{
    Dialect, HookExtra, HookMatcher, HookSpec, ParsedConfig, Scope, string_field,
};
use crate::matcher::{MatcherError, RegexMatcher};
use crate::outcome::FailurePolicy;

/// Keys of the `hooks` object that are switches, not events (`HOOKS_CONFIG_FIELDS`).
const RESERVED: [&str; 3] = ["enabled", "disabled", "notifications"];

/// The file's name as messages start with it.
fn display_name(source: &Path) -> String {
    let file = source
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "settings.json".to_string());
    let dir = source
        .parent()
        .and_then(Path::file_name)
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    if dir.is_empty() {
        file
    } else {
        format!("{dir}/{file}")
    }
}

/// A hint for an unknown event name: the Gemini name of a Claude or Cursor event,
/// or the right spelling of a published one.
pub fn suggestion(event: &str) -> String {
    let map = [
        ("PreToolUse", "BeforeTool"),
        ("preToolUse", "BeforeTool"),
        (
            "beforeShellExecution",
            "BeforeTool with matcher \"run_shell_command\"",
        ),
        ("beforeMCPExecution", "BeforeTool with matcher \"^mcp_\""),
        ("beforeReadFile", "BeforeTool with matcher \"read_file\""),
        ("PostToolUse", "AfterTool"),
        ("postToolUse", "AfterTool"),
        (
            "PostToolUseFailure",
            "AfterTool (tool errors arrive in tool_response.error)",
        ),
        (
            "afterShellExecution",
            "AfterTool with matcher \"run_shell_command\"",
        ),
        (
            "afterFileEdit",
            "AfterTool with matcher \"write_file|replace\"",
        ),
        ("UserPromptSubmit", "BeforeAgent"),
        ("beforeSubmitPrompt", "BeforeAgent"),
        ("Stop", "AfterAgent"),
        ("stop", "AfterAgent"),
        ("SubagentStop", "AfterAgent"),
        ("PreCompact", "PreCompress"),
        ("preCompact", "PreCompress"),
        ("sessionStart", "SessionStart"),
        ("sessionEnd", "SessionEnd"),
    ];
    if let Some((_, gemini)) = map.iter().find(|(other, _)| *other == event) {
        return format!(" (did you mean {gemini}? \"{event}\" is another agent's event name)");
    }
    if let Some(known) = PUBLISHED_EVENTS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(event))
    {
        return format!(" (did you mean \"{known}\"? Gemini CLI event names are PascalCase)");
    }
    String::new()
}

/// Parses a Gemini `timeout` in milliseconds: a positive finite number.
pub fn timeout_millis(v: &Value) -> Option<Duration> {
    let ms = v.as_f64()?;
    if ms.is_finite() && ms > 0.0 && ms < 1.0e12 {
        Some(Duration::from_millis(ms.round().max(1.0) as u64))
    } else {
        None
    }
}

/// Compiles a definition's matcher for `event`.
pub fn compile_matcher(event: &str, raw: Option<&Value>) -> HookMatcher {
    let pattern = match raw {
        None | Some(Value::Null) => return HookMatcher::Always,
        Some(Value::String(s)) => s.trim(),
        Some(other) => {
            return HookMatcher::Invalid(MatcherError {
                pattern: other.to_string(),
                reason: "matcher must be a string".to_string(),
            });
        }
    };
    if pattern.is_empty() || pattern == "*" {
        return HookMatcher::Always;
    }
    match matcher_kind(event) {
        MatcherKind::Ignored => HookMatcher::Always,
        MatcherKind::Exact => HookMatcher::Names(vec![pattern.to_string()]),
        // An invalid regex falls back to exact equality, as Gemini CLI does.
        MatcherKind::ToolRegex => RegexMatcher::new(pattern)
            .map(HookMatcher::Regex)
            .unwrap_or_else(|_| HookMatcher::Names(vec![pattern.to_string()])),
    }
}

/// A did-you-mean for a tool matcher written with another agent's tool names.
pub fn tool_hint(pattern: &str) -> Option<String> {
    if pattern.contains("mcp__") {
        return Some(
            "uses Claude's MCP naming; Gemini CLI names MCP tools mcp_<server>_<tool> (single underscores)"
                .to_string(),
        );
    }
    let claude = [
        ("Bash", "run_shell_command"),
        ("Edit", "replace"),
        ("MultiEdit", "replace"),
        ("Write", "write_file"),
        ("Read", "read_file"),
        ("Grep", "grep_search"),
        ("Glob", "glob"),
        ("LS", "list_directory"),
        ("WebFetch", "web_fetch"),
        ("WebSearch", "google_web_search"),
        ("search_file_content", "grep_search"),
        ("Shell", "run_shell_command"),
    ];
    let found: Vec<String> = pattern
        .split('|')
        .filter_map(|alt| {
            let alt = alt.trim_matches(|c| c == '^' || c == '$' || c == '(' || c == ')');
            claude
                .iter()
                .find(|(other, _)| *other == alt)
                .map(|(other, gemini)| format!("\"{other}\" → \"{gemini}\""))
        })
        .collect();
    (!found.is_empty()).then(|| {
        format!(
            "names another agent's tools, which never match Gemini CLI's (did you mean {}?)",
            found.join(", ")
        )
    })
}

/// Replaces an extension's `${extensionPath}` and `${/}` variables.
fn hydrate(command: &str, source: &Path) -> String {
    let is_extension = source
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|d| d == "hooks")
        && source.file_name().is_some_and(|f| f == "hooks.json");
    if !is_extension {
        return command.to_string();
    }
    let ext_dir = source
        .parent()
        .and_then(Path::parent)
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    command
        .replace("${extensionPath}", &ext_dir)
        .replace("${/}", "/")
        .replace("${pathSeparator}", "/")
}

/// Reads the switches of `hooksConfig` (or the legacy `hooks.enabled` /
/// `hooks.disabled` keys).
fn switches(
    out: &mut ParsedConfig,
    source: &Path,
    scope: Scope,
    name: &str,
    obj: &Map<String, Value>,
    legacy: bool,
) {
    let at = if legacy { "hooks" } else { "hooksConfig" };
    match obj.get("enabled") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(false)) => out.switches.all_off = true,
        Some(Value::Bool(true)) => {}
        Some(other) => out.warn(
            source,
            scope,
            None,
            format!("{name} \"{at}.enabled\" must be true or false (got {other}) — ignored"),
        ),
    }
    match obj.get("disabled") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                match item.as_str() {
                    Some(s) if !s.trim().is_empty() => {
                        out.switches.disabled.push(s.trim().to_string());
                    }
                    _ => out.warn(
                        source,
                        scope,
                        None,
                        format!(
                            "{name} \"{at}.disabled\" entries must be hook names or commands (got {item}) — ignored"
                        ),
                    ),
                }
            }
        }
        Some(other) => out.warn(
            source,
            scope,
            None,
            format!(
                "{name} \"{at}.disabled\" must be an array of hook names (got {other}) — ignored"
            ),
        ),
    }
}

/// Parses one Gemini settings or extension hooks file.
pub fn parse(text: &str, source: &Path, scope: Scope, root: Option<&Path>) -> ParsedConfig {
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
    match doc.get("hooksConfig") {
        None | Some(Value::Null) => {}
        Some(Value::Object(cfg)) => switches(&mut out, source, scope, &name, cfg, false),
        Some(_) => out.warn(
            source,
            scope,
            None,
            format!("{name} \"hooksConfig\" must be an object — ignored"),
        ),
    }
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
    if RESERVED.iter().any(|k| hooks.contains_key(*k)) {
        switches(&mut out, source, scope, &name, hooks, true);
    }
    for (event, value) in hooks {
        if RESERVED.contains(&event.as_str()) {
            continue;
        }
        let canonical = canonical_for(event);
        let wired = canonical.is_some();
        let declared = value.as_array().is_some_and(|a| !a.is_empty());
        if !wired {
            if PUBLISHED_EVENTS.contains(&event.as_str()) {
                if declared {
                    let reason = super::unsupported_reason(event).unwrap_or_default();
                    out.warn(
                        source,
                        scope,
                        Some(event),
                        format!(
                            "Gemini hook event \"{event}\" is recognised by Gemini CLI but not supported by copse-hooks ({reason}) — entries listed, never run"
                        ),
                    );
                }
            } else {
                if declared || !value.is_array() {
                    out.warn(
                        source,
                        scope,
                        Some(event),
                        format!(
                            "Unknown Gemini hook event \"{event}\" — entries ignored{}",
                            suggestion(event)
                        ),
                    );
                }
                continue;
            }
        }
        let Some(defs) = value.as_array() else {
            out.warn(
                source,
                scope,
                Some(event),
                format!(
                    "\"{event}\" must be an array of {{ matcher, hooks: [...] }} definitions — skipped"
                ),
            );
            continue;
        };
        for (di, def) in defs.iter().enumerate() {
            let n = di + 1;
            let warn = |out: &mut ParsedConfig, message: String| {
                if wired {
                    out.warn(source, scope, Some(event), message);
                }
            };
            let Some(def) = def.as_object() else {
                warn(
                    &mut out,
                    format!(
                        "\"{event}\" entry {n} must be an object {{ matcher, hooks: [...] }} — skipped"
                    ),
                );
                continue;
            };
            let Some(handlers) = def.get("hooks").and_then(Value::as_array) else {
                let hint = if def.contains_key("command") {
                    " (Gemini CLI nests commands: { \"matcher\": …, \"hooks\": [{ \"type\": \"command\", \"command\": … }] })"
                } else {
                    ""
                };
                warn(
                    &mut out,
                    format!("\"{event}\" entry {n} has no \"hooks\" array — skipped{hint}"),
                );
                continue;
            };
            let sequential = match def.get("sequential") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(other) => {
                    warn(
                        &mut out,
                        format!(
                            "\"{event}\" entry {n} \"sequential\" must be true or false (got {other}) — treated as false"
                        ),
                    );
                    false
                }
            };
            let raw_matcher = def.get("matcher");
            let matcher_source = match raw_matcher {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if s.trim().is_empty() => None,
                Some(Value::String(s)) => Some(s.trim().to_string()),
                Some(other) => Some(other.to_string()),
            };
            if let Some(p) = &matcher_source {
                match (matcher_kind(event), raw_matcher) {
                    (_, Some(v)) if !v.is_string() => warn(
                        &mut out,
                        format!(
                            "\"{event}\" entry {n} \"matcher\" must be a string — its hooks never fire"
                        ),
                    ),
                    (MatcherKind::ToolRegex, _) if RegexMatcher::new(p).is_err() && p != "*" => {
                        warn(
                            &mut out,
                            format!(
                                "\"{event}\" entry {n} \"matcher\" \"{p}\" is not a valid regex — compared as an exact tool name, as Gemini CLI does"
                            ),
                        );
                    }
                    (MatcherKind::ToolRegex, _) if tool_hint(p).is_some() => {
                        let hint = tool_hint(p).unwrap_or_default();
                        warn(
                            &mut out,
                            format!("\"{event}\" entry {n} \"matcher\" \"{p}\" {hint}"),
                        );
                    }
                    (MatcherKind::Exact, _) if p.contains('|') => warn(
                        &mut out,
                        format!(
                            "\"{event}\" entry {n} \"matcher\" \"{p}\" is compared exactly on {event} (no \"|\" alternatives) — it matches nothing; use one entry per trigger"
                        ),
                    ),
                    (MatcherKind::Ignored, _) if p != "*" => warn(
                        &mut out,
                        format!(
                            "\"{event}\" entry {n} \"matcher\" is ignored on {event}: its hooks always run"
                        ),
                    ),
                    _ => {}
                }
            }
            for (hi, handler) in handlers.iter().enumerate() {
                let label = format!("\"{event}\" entry {n} hook {}", hi + 1);
                let Some(obj) = handler.as_object() else {
                    warn(&mut out, format!("{label} must be an object — skipped"));
                    continue;
                };
                let kind = obj.get("type").and_then(Value::as_str);
                let inactive = match kind {
                    Some("command") => false,
                    Some(k @ ("runtime" | "plugin")) => {
                        warn(
                            &mut out,
                            format!(
                                "{label} has type \"{k}\"; copse-hooks runs only \"command\" hooks — listed as unsupported, never run"
                            ),
                        );
                        true
                    }
                    _ => {
                        let got = obj
                            .get("type")
                            .map_or_else(|| "none".to_string(), Value::to_string);
                        warn(
                            &mut out,
                            format!(
                                "{label} has \"type\" {got}; Gemini CLI requires \"type\": \"command\" — skipped"
                            ),
                        );
                        continue;
                    }
                };
                let command = string_field(obj, &["command"]);
                let Some(command) =
                    command.or_else(|| inactive.then(|| kind.unwrap_or("").to_string()))
                else {
                    warn(
                        &mut out,
                        format!("{label} has a missing or empty \"command\" — skipped"),
                    );
                    continue;
                };
                let hook_name = string_field(obj, &["name"]);
                if hook_name.is_none() && !inactive {
                    warn(
                        &mut out,
                        format!(
                            "{label} has no \"name\" (Gemini CLI 0.61 needs one to run the hook, and uses it for /hooks enable|disable) — it runs here"
                        ),
                    );
                }
                let timeout = match obj.get("timeout") {
                    None | Some(Value::Null) => DEFAULT_TIMEOUT,
                    Some(v) => match timeout_millis(v) {
                        Some(t) => {
                            if v.as_f64().is_some_and(|ms| ms <= SECONDS_LOOKALIKE_MS) {
                                let ms = v.as_f64().unwrap_or_default();
                                warn(
                                    &mut out,
                                    format!(
                                        "{label} \"timeout\" {ms} is {ms} milliseconds; Gemini CLI timeouts are milliseconds — if you meant {ms} seconds, write {}",
                                        ms * 1000.0
                                    ),
                                );
                            }
                            t
                        }
                        None => {
                            warn(
                                &mut out,
                                format!(
                                    "{label} \"timeout\" must be a positive number of milliseconds — using the default 60000"
                                ),
                            );
                            DEFAULT_TIMEOUT
                        }
                    },
                };
                if obj.get("env").is_some_and(|e| !e.is_null()) {
                    warn(
                        &mut out,
                        format!(
                            "{label} sets \"env\", which copse-hooks does not pass to hooks yet — the hook runs without those variables"
                        ),
                    );
                }
                let command = hydrate(&command, source);
                out.hooks.push(HookSpec {
                    dialect: Dialect::Gemini,
                    event: event.clone(),
                    canonical: if inactive { None } else { canonical },
                    command,
                    matcher_source: matcher_source.clone(),
                    matcher: compile_matcher(event, raw_matcher),
                    glob: None,
                    policy: FailurePolicy::Closed,
                    timeout,
                    source: source.to_path_buf(),
                    scope,
                    root: root.map(Path::to_path_buf),
                    entry: n,
                    sandbox: true,
                    network: true,
                    run_async: false,
                    loop_limit: None,
                    // The vendor leaves a failed hook to the host: the per-dialect
                    // `failurePolicy` setting applies, as for Claude.
                    options: crate::dialect::HookOptions::default(),
                });
                out.extras.push(HookExtra {
                    name: hook_name,
                    sequential,
                    state_key: None,
                });
            }
        }
    }
    out
}
