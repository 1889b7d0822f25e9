//! Reading Codex `hooks.json` and the `[hooks]` tables of `config.toml` (parsed
//! with the `toml` crate into the same JSON shape).
//!
//! `[hooks.state."<key>"] enabled = false` disables one hook and
//! `[features] hooks = false` (or the deprecated `codex_hooks`) all of them; both
//! are recorded as the file's switches for the engine to apply across layers.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{
    DEFAULT_TIMEOUT, PUBLISHED_EVENTS, SHUTDOWN_TIMEOUT_CAP, canonical_for, plugin_root,
    state_label, uses_matcher,
};
use crate::dialect::{
    Dialect, HookExtra, HookMatcher, HookSpec, ParsedConfig, Scope, seconds, string_field,
    timeout_seconds,
};
use crate::matcher::MatcherError;
use crate::outcome::FailurePolicy;

/// The file's name as messages start with it.
fn display_name(source: &Path) -> String {
    let file = source
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "hooks.json".to_string());
    format!(".codex/{file}")
}

/// Whether `source` is a `config.toml` (else a `hooks.json`).
pub fn is_toml(source: &Path) -> bool {
    source.extension().is_some_and(|e| e == "toml")
}

/// A hint for an unknown event name.
pub fn suggestion(event: &str) -> String {
    let map = [
        ("BeforeTool", "PreToolUse"),
        ("AfterTool", "PostToolUse"),
        ("BeforeAgent", "UserPromptSubmit"),
        ("AfterAgent", "Stop"),
        ("PreCompress", "PreCompact"),
        (
            "PostToolUseFailure",
            "PostToolUse (Codex has no separate failure event)",
        ),
        ("preToolUse", "PreToolUse"),
        ("postToolUse", "PostToolUse"),
        ("beforeSubmitPrompt", "UserPromptSubmit"),
        ("beforeShellExecution", "PreToolUse with matcher \"Bash\""),
        ("afterFileEdit", "PostToolUse with matcher \"apply_patch\""),
        ("pre_tool_use", "PreToolUse"),
        ("post_tool_use", "PostToolUse"),
        ("session_start", "SessionStart"),
        ("user_prompt_submit", "UserPromptSubmit"),
        ("stop", "Stop"),
    ];
    if let Some((_, codex)) = map.iter().find(|(other, _)| *other == event) {
        return format!(" (did you mean {codex}?)");
    }
    if let Some(known) = PUBLISHED_EVENTS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(event) || state_label(k) == event)
    {
        return format!(" (did you mean \"{known}\"? Codex event names are PascalCase)");
    }
    String::new()
}

/// Compiles a group matcher with Claude Code's rule.
pub fn compile_matcher(event: &str, raw: Option<&Value>) -> HookMatcher {
    match raw {
        None | Some(Value::Null) => HookMatcher::Always,
        _ if !uses_matcher(event) => HookMatcher::Always,
        // CLAUDE-REUSE: Codex's exact-set-or-regex rule is Claude Code's.
        Some(Value::String(p)) => {
            crate::dialect::claude::compile_matcher(p).unwrap_or_else(HookMatcher::Invalid)
        }
        Some(other) => HookMatcher::Invalid(MatcherError {
            pattern: other.to_string(),
            reason: "matcher must be a string".to_string(),
        }),
    }
}

/// Parses one Codex hooks file (`hooks.json` or `config.toml`).
pub fn parse(text: &str, source: &Path, scope: Scope, root: Option<&Path>) -> ParsedConfig {
    let mut out = ParsedConfig::default();
    let name = display_name(source);
    let doc: Value = if is_toml(source) {
        match toml::from_str::<toml::Table>(text) {
            Ok(t) => serde_json::to_value(t).unwrap_or(Value::Null),
            Err(e) => {
                let at = e
                    .span()
                    .map(|s| {
                        let before = &text[..s.start.min(text.len())];
                        let line = before.matches('\n').count() + 1;
                        let column = before.rsplit('\n').next().map_or(0, str::len) + 1;
                        format!(" (line {line}, column {column})")
                    })
                    .unwrap_or_default();
                out.warn(
                    source,
                    scope,
                    None,
                    format!(
                        "{name} is not valid TOML{at}: {} — file ignored",
                        e.message()
                    ),
                );
                return out;
            }
        }
    } else {
        match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                out.invalid_json(source, scope, &name, &e);
                return out;
            }
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
    if is_toml(source) {
        if let Some(features) = doc.get("features").and_then(Value::as_object) {
            for key in ["hooks", "codex_hooks"] {
                if features.get(key) == Some(&Value::Bool(false)) {
                    out.switches.all_off = true;
                }
            }
        }
    } else {
        for key in doc.keys() {
            if key != "hooks" && key != "description" {
                out.warn(
                    source,
                    scope,
                    None,
                    format!(
                        "{name} has an unknown top-level field \"{key}\" (Codex accepts only \"description\" and \"hooks\" and may refuse the file)"
                    ),
                );
            }
        }
    }
    let hooks = match doc.get("hooks") {
        None | Some(Value::Null) => return out,
        Some(Value::Object(h)) => h,
        Some(_) => {
            out.warn(
                source,
                scope,
                None,
                format!("{name} \"hooks\" must be a table of event names — hooks ignored"),
            );
            return out;
        }
    };
    let key_source = source.display().to_string();
    for (event, value) in hooks {
        if event == "state" && is_toml(source) {
            if let Some(states) = value.as_object() {
                for (key, state) in states {
                    if state.get("enabled") == Some(&Value::Bool(false)) {
                        out.switches.disabled_keys.push(key.clone());
                    }
                }
            }
            continue;
        }
        let canonical = canonical_for(event);
        let wired = canonical.is_some();
        if !PUBLISHED_EVENTS.contains(&event.as_str()) {
            out.warn(
                source,
                scope,
                Some(event),
                format!(
                    "Unknown Codex hook event \"{event}\" — entries ignored{}",
                    suggestion(event)
                ),
            );
            continue;
        }
        let Some(groups) = value.as_array() else {
            out.warn(
                source,
                scope,
                Some(event),
                format!(
                    "\"{event}\" must be an array of {{ matcher, hooks: [...] }} groups — skipped (Codex refuses the whole file)"
                ),
            );
            continue;
        };
        if !wired && !groups.is_empty() {
            out.warn(
                source,
                scope,
                Some(event),
                format!(
                    "Codex hook event \"{event}\" is recognised by Codex but not supported by copse-hooks ({}) — entries listed, never run",
                    super::unsupported_reason(event).unwrap_or_default()
                ),
            );
        }
        for (gi, group) in groups.iter().enumerate() {
            let n = gi + 1;
            let warn = |out: &mut ParsedConfig, message: String| {
                if wired {
                    out.warn(source, scope, Some(event), message);
                }
            };
            let Some(group) = group.as_object() else {
                warn(
                    &mut out,
                    format!(
                        "\"{event}\" entry {n} must be an object {{ matcher, hooks: [...] }} — skipped"
                    ),
                );
                continue;
            };
            let handlers = match group.get("hooks") {
                Some(Value::Array(h)) => h.as_slice(),
                None => &[],
                Some(_) => {
                    warn(
                        &mut out,
                        format!("\"{event}\" entry {n} \"hooks\" must be an array — skipped"),
                    );
                    continue;
                }
            };
            if handlers.is_empty() && group.contains_key("command") {
                warn(
                    &mut out,
                    format!(
                        "\"{event}\" entry {n} has no \"hooks\" array — skipped (Codex nests handlers: {{ \"matcher\": …, \"hooks\": [{{ \"type\": \"command\", \"command\": … }}] }})"
                    ),
                );
            }
            let raw_matcher = group.get("matcher");
            let matcher_source = match raw_matcher {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if s.is_empty() => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => Some(other.to_string()),
            };
            if uses_matcher(event)
                && let HookMatcher::Invalid(e) = compile_matcher(event, raw_matcher)
            {
                warn(
                    &mut out,
                    format!(
                        "\"{event}\" entry {n} \"matcher\" \"{}\" is not a valid regex ({}) — Codex skips the group; its hooks never fire",
                        e.pattern, e.reason
                    ),
                );
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
                    Some(k @ ("prompt" | "agent" | "mcp_tool")) => {
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
                                "{label} has \"type\" {got}; Codex requires \"type\": \"command\" (and refuses the whole file without it) — skipped"
                            ),
                        );
                        continue;
                    }
                };
                let command = string_field(obj, &["command"])
                    .or_else(|| inactive.then(|| kind.unwrap_or_default().to_string()));
                let Some(mut command) = command else {
                    warn(
                        &mut out,
                        format!("{label} has a missing or empty \"command\" — skipped"),
                    );
                    continue;
                };
                if let Some(root) = plugin_root(source) {
                    let root = root.display().to_string();
                    command = command
                        .replace("${PLUGIN_ROOT}", &root)
                        .replace("${CLAUDE_PLUGIN_ROOT}", &root);
                }
                let mut timeout = match obj.get("timeout") {
                    None | Some(Value::Null) => DEFAULT_TIMEOUT,
                    Some(v) => timeout_seconds(v).map(|t| t.max(Duration::from_secs(1))).unwrap_or_else(|| {
                        warn(&mut out, format!("{label} \"timeout\" must be a positive number of seconds — using the default {}", seconds(DEFAULT_TIMEOUT)));
                        DEFAULT_TIMEOUT
                    }),
                };
                if event == "SessionEnd" || event == "Interrupt" {
                    timeout = timeout.min(SHUTDOWN_TIMEOUT_CAP);
                }
                if obj.get("async") == Some(&Value::Bool(true)) {
                    warn(
                        &mut out,
                        format!(
                            "{label} sets \"async\": true, which copse-hooks does not support yet — it runs synchronously and its answer is honoured"
                        ),
                    );
                }
                out.hooks.push(HookSpec {
                    dialect: Dialect::Codex,
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
                    name: None,
                    sequential: false,
                    state_key: Some(format!("{key_source}:{}:{gi}:{hi}", state_label(event))),
                });
            }
        }
    }
    out
}

/// The `hooks` object of a Codex config as JSON (for lint's position checks);
/// `None` when the text does not parse.
pub fn as_json(text: &str, source: &Path) -> Option<Map<String, Value>> {
    let v: Value = if is_toml(source) {
        serde_json::to_value(toml::from_str::<toml::Table>(text).ok()?).ok()?
    } else {
        serde_json::from_str(text).ok()?
    };
    v.as_object().cloned()
}
