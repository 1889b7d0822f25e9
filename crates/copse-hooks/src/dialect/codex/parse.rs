//! Reading Codex `hooks.json` and the `[hooks]` tables of `config.toml` (parsed
//! with the `toml` crate into the same JSON shape).
//!
//! `[hooks.state."<key>"] enabled = false` disables one hook and
//! `[features] hooks = false` (or the deprecated `codex_hooks`) all of them; both
//! are recorded as the file's switches for the engine to apply across layers.

use std::path::Path;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{
    DEFAULT_TIMEOUT, PUBLISHED_EVENTS, SHUTDOWN_TIMEOUT_CAP, canonical_for, plugin_root,
    state_label, uses_matcher,
};
use crate::dialect::spec::{self, Field, Lenient, VendorHook, elements, timeout_secs};
use crate::dialect::{Dialect, HookExtra, HookMatcher, ParsedConfig, Scope, seconds};
use crate::matcher::MatcherError;

/// A Codex `hooks.json` (`~/.codex/hooks.json`, `<root>/.codex/hooks.json`, a
/// plugin's `hooks/hooks.json`); the `[hooks]` tables of `config.toml` have the same
/// shape.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(title = "Codex hooks.json", extend("additionalProperties" = false))]
pub struct HooksFile {
    /// What the file is for (ignored).
    #[serde(default)]
    pub description: Field<String>,
    /// Matcher groups by Codex's PascalCase event name.
    #[serde(default)]
    #[schemars(schema_with = "hooks_schema")]
    pub hooks: Option<spec::Shape>,
}

fn hooks_schema(generator: &mut SchemaGenerator) -> Schema {
    spec::events_schema::<Group>(
        generator,
        &PUBLISHED_EVENTS,
        "Matcher groups by Codex's PascalCase event name.",
    )
}

/// A matcher group.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct Group {
    /// Exact tool names separated by `|` or `,`, or a regex (Claude Code's rule);
    /// absent, empty or `*` match everything.
    #[serde(default)]
    pub matcher: Field<String>,
    /// The handlers.
    #[serde(default)]
    #[schemars(with = "Vec<Handler>")]
    pub hooks: Field<Vec<Value>>,
}

/// One handler.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false, "required" = ["type", "command"]))]
pub struct Handler {
    /// `"command"` (Codex refuses the file without it; `prompt`, `agent` and
    /// `mcp_tool` are listed, never run).
    #[serde(default, rename = "type")]
    pub kind: Field<String>,
    /// The shell command; a plugin's may use `${PLUGIN_ROOT}`.
    #[serde(default)]
    pub command: Field<String>,
    /// Seconds the hook may run (at least 1; default 600).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout: Field<f64>,
    /// Run without waiting (not supported by copse-hooks yet: runs synchronously).
    #[serde(default, rename = "async")]
    pub run_async: Field<bool>,
    /// Text Codex shows while the hook runs.
    #[serde(default, rename = "statusMessage")]
    pub status_message: Field<String>,
    /// `mcp_tool`: the MCP server (listed, never run).
    #[serde(default)]
    pub server: Field<String>,
    /// `mcp_tool`: the tool (listed, never run).
    #[serde(default)]
    pub tool: Field<String>,
    /// `mcp_tool`: the tool's input template (listed, never run).
    #[serde(default)]
    pub input: Field<Map<String, Value>>,
}

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
    if !doc.is_object() {
        out.warn(
            source,
            scope,
            None,
            format!("{name} is not a JSON object — file ignored"),
        );
        return out;
    };
    if is_toml(source)
        && let Some(features) = doc.get("features").and_then(Value::as_object)
    {
        for key in ["hooks", "codex_hooks"] {
            if features.get(key) == Some(&Value::Bool(false)) {
                out.switches.all_off = true;
            }
        }
    }
    let file = HooksFile::deserialize(&doc).ok();
    if !is_toml(source) {
        static KNOWN: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let known = KNOWN.get_or_init(spec::declared_keys::<HooksFile>);
        let keys = doc.as_object().into_iter().flat_map(|d| d.keys());
        for key in keys.filter(|k| !known.contains(k)) {
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
    let hooks = match spec::events(&doc, file.as_ref().and_then(|f| f.hooks)) {
        spec::Events::Absent => return out,
        spec::Events::Object(h) => h,
        spec::Events::NotObject => {
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
        for el in elements(groups) {
            let hook = VendorHook {
                dialect: Dialect::Codex,
                event,
                canonical,
                source,
                scope,
                root,
                entry: el.n,
            };
            group(&mut out, &hook, el.value, &key_source);
        }
    }
    out
}

/// Compiles one matcher group and its handlers.
fn group(out: &mut ParsedConfig, hook: &VendorHook<'_>, value: &Value, key_source: &str) {
    let (source, scope, event, n) = (hook.source, hook.scope, hook.event, hook.entry);
    let gi = n - 1;
    let wired = hook.canonical.is_some();
    let warn = |out: &mut ParsedConfig, message: String| {
        if wired {
            out.warn(source, scope, Some(event), message);
        }
    };
    let Some(group) = spec::entry::<Group>(value) else {
        warn(
            out,
            format!(
                "\"{event}\" entry {n} must be an object {{ matcher, hooks: [...] }} — skipped"
            ),
        );
        return;
    };
    let handlers: &[Value] = match &group.hooks {
        Some(Lenient::Ok(h)) => h,
        None => &[],
        Some(Lenient::Bad(_)) => {
            warn(
                out,
                format!("\"{event}\" entry {n} \"hooks\" must be an array — skipped"),
            );
            return;
        }
    };
    if handlers.is_empty() && value.get("command").is_some() {
        warn(
            out,
            format!(
                "\"{event}\" entry {n} has no \"hooks\" array — skipped (Codex nests handlers: {{ \"matcher\": …, \"hooks\": [{{ \"type\": \"command\", \"command\": … }}] }})"
            ),
        );
    }
    let raw_matcher = spec::raw_value(&group.matcher);
    // Codex keeps the matcher as written (untrimmed).
    let matcher_source = match &group.matcher {
        None => None,
        Some(Lenient::Ok(s)) if s.is_empty() => None,
        Some(Lenient::Ok(s)) => Some(s.clone()),
        Some(Lenient::Bad(other)) => Some(other.to_string()),
    };
    if uses_matcher(event)
        && let HookMatcher::Invalid(e) = compile_matcher(event, raw_matcher.as_ref())
    {
        warn(
            out,
            format!(
                "\"{event}\" entry {n} \"matcher\" \"{}\" is not a valid regex ({}) — Codex skips the group; its hooks never fire",
                e.pattern, e.reason
            ),
        );
    }
    for (hi, handler) in handlers.iter().enumerate() {
        let label = format!("\"{event}\" entry {n} hook {}", hi + 1);
        let Some(h) = spec::entry::<Handler>(handler) else {
            warn(out, format!("{label} must be an object — skipped"));
            continue;
        };
        let kind = h.kind.as_ref().and_then(Lenient::ok).map(String::as_str);
        let inactive = match kind {
            Some("command") => false,
            Some(k @ ("prompt" | "agent" | "mcp_tool")) => {
                warn(
                    out,
                    format!(
                        "{label} {}",
                        crate::dialect::claude::parse::unsupported_type(k, event)
                    ),
                );
                true
            }
            _ => {
                let got = spec::raw_text(&h.kind);
                warn(
                    out,
                    format!(
                        "{label} has \"type\" {got}; Codex requires \"type\": \"command\" (and refuses the whole file without it) — skipped"
                    ),
                );
                continue;
            }
        };
        let command = spec::text(&h.command).or_else(|| {
            inactive.then(|| match kind {
                Some("mcp_tool") => format!(
                    "mcp_tool: {}/{}",
                    spec::text(&h.server).unwrap_or_default(),
                    spec::text(&h.tool).unwrap_or_default()
                ),
                _ => kind.unwrap_or_default().to_string(),
            })
        });
        let Some(mut command) = command else {
            warn(
                out,
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
        let mut timeout = match &h.timeout {
            None => DEFAULT_TIMEOUT,
            Some(t) => timeout_secs(t)
                .map(|t| t.max(Duration::from_secs(1)))
                .unwrap_or_else(|| {
                    warn(
                        out,
                        format!(
                            "{label} \"timeout\" must be a positive number of seconds — using the default {}",
                            seconds(DEFAULT_TIMEOUT)
                        ),
                    );
                    DEFAULT_TIMEOUT
                }),
        };
        if event == "SessionEnd" || event == "Interrupt" {
            timeout = timeout.min(SHUTDOWN_TIMEOUT_CAP);
        }
        if matches!(h.run_async, Some(Lenient::Ok(true))) {
            warn(
                out,
                format!(
                    "{label} sets \"async\": true, which copse-hooks does not support yet — it runs synchronously and its answer is honoured"
                ),
            );
        }
        let mut spec = VendorHook {
            canonical: if inactive { None } else { hook.canonical },
            ..*hook
        }
        .command(command, timeout);
        spec.matcher_source = matcher_source.clone();
        spec.matcher = compile_matcher(event, raw_matcher.as_ref());
        out.hooks.push(spec);
        out.extras.push(HookExtra {
            name: None,
            sequential: false,
            state_key: Some(format!("{key_source}:{}:{gi}:{hi}", state_label(event))),
        });
    }
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
