//! Reading Gemini CLI `settings.json` and extension `hooks/hooks.json` files.
//!
//! Problems become warnings naming the event, `entry N` (the 1-based definition)
//! and `hook M`, so `lint` can point at them; nothing here aborts.

use std::path::Path;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{
    DEFAULT_TIMEOUT, MatcherKind, PUBLISHED_EVENTS, SECONDS_LOOKALIKE_MS, canonical_for,
    matcher_kind,
};
use crate::dialect::spec::{self, Field, Lenient, VendorHook, elements};
use crate::dialect::{Dialect, HookExtra, HookMatcher, ParsedConfig, Scope};
use crate::matcher::{MatcherError, RegexMatcher};

/// The hooks part of a Gemini CLI `settings.json` (user `~/.gemini/settings.json`,
/// project `<root>/.gemini/settings.json`) or of an extension's `hooks/hooks.json`.
/// Other settings keys are allowed and ignored.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(title = "Gemini CLI settings.json hooks")]
pub struct SettingsFile {
    /// Switches for every hook: `enabled: false` turns them all off; `disabled`
    /// lists hook names (or commands) to skip.
    #[serde(default, rename = "hooksConfig")]
    pub hooks_config: Field<Switches>,
    /// Hook definitions by Gemini CLI's PascalCase event name.
    #[serde(default)]
    #[schemars(schema_with = "hooks_schema")]
    pub hooks: Option<spec::Shape>,
}

fn hooks_schema(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = spec::events_schema::<Definition>(
        generator,
        &PUBLISHED_EVENTS,
        "Hook definitions by Gemini CLI's PascalCase event name (the legacy `enabled`, `disabled` and `notifications` switches are also read here).",
    );
    // The legacy switches, inline (their schemas hold no references).
    let legacy = schemars::generate::SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<Switches>()
        .to_value();
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for key in RESERVED {
            if let Some(p) = legacy.pointer(&format!("/properties/{key}")) {
                props.insert(key.to_string(), p.clone());
            }
        }
    }
    schema
}

/// `hooksConfig` (or the legacy keys of `hooks`).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Switches {
    /// `false` turns every Gemini hook off.
    #[serde(default)]
    pub enabled: Field<bool>,
    /// Hook names (or commands) that do not run; merged across settings layers.
    #[serde(default)]
    pub disabled: Field<Vec<Lenient<String>>>,
    /// Whether Gemini CLI shows hook notifications (read by Gemini CLI only).
    #[serde(default)]
    pub notifications: Field<bool>,
}

/// A definition: a matcher and the handlers it runs.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false, "required" = ["hooks"]))]
pub struct Definition {
    /// A regex on the tool name (tool events), an exact trigger (`SessionStart`,
    /// `PreCompress`, `Notification`, …); ignored on agent and model events.
    #[serde(default)]
    pub matcher: Field<String>,
    /// Run this definition's handlers one after another instead of in parallel.
    #[serde(default)]
    pub sequential: Field<bool>,
    /// The handlers.
    #[serde(default)]
    #[schemars(with = "Vec<Handler>")]
    pub hooks: Field<Vec<Value>>,
}

/// One handler.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false, "required" = ["type", "command"]))]
pub struct Handler {
    /// `"command"` (the only type copse-hooks runs; `runtime` and `plugin` are
    /// listed, never run).
    #[serde(default, rename = "type")]
    pub kind: Field<String>,
    /// The shell command; an extension may use `${extensionPath}` and `${/}`.
    #[serde(default)]
    pub command: Field<String>,
    /// The hook's name (the key of `hooksConfig.disabled` and `/hooks enable`).
    #[serde(default)]
    pub name: Field<String>,
    /// Milliseconds the hook may run (default 60000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout: Field<f64>,
    /// What the hook does (shown by Gemini CLI).
    #[serde(default)]
    pub description: Field<String>,
    /// Extra environment for the hook (not passed by copse-hooks yet).
    #[serde(default)]
    pub env: Field<Map<String, Value>>,
}

/// Keys of the `hooks` object that are switches, not events (`HOOKS_CONFIG_FIELDS`).
const RESERVED: [&str; 3] = ["enabled", "disabled", "notifications"];

/// The file's name as messages start with it.
fn display_name(source: &Path) -> String {
    spec::display_name(source, "settings.json")
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
    (source, scope, name): (&Path, Scope, &str),
    sw: &Switches,
    legacy: bool,
) {
    let at = if legacy { "hooks" } else { "hooksConfig" };
    match &sw.enabled {
        None | Some(Lenient::Ok(true)) => {}
        Some(Lenient::Ok(false)) => out.switches.all_off = true,
        Some(Lenient::Bad(other)) => out.warn(
            source,
            scope,
            None,
            format!("{name} \"{at}.enabled\" must be true or false (got {other}) — ignored"),
        ),
    }
    match &sw.disabled {
        None => {}
        Some(Lenient::Ok(items)) => {
            for item in items {
                match item {
                    Lenient::Ok(s) if !s.trim().is_empty() => {
                        out.switches.disabled.push(s.trim().to_string());
                    }
                    _ => {
                        let item = match item {
                            Lenient::Ok(s) => Value::from(s.as_str()),
                            Lenient::Bad(v) => v.clone(),
                        };
                        out.warn(
                            source,
                            scope,
                            None,
                            format!(
                                "{name} \"{at}.disabled\" entries must be hook names or commands (got {item}) — ignored"
                            ),
                        );
                    }
                }
            }
        }
        Some(Lenient::Bad(other)) => out.warn(
            source,
            scope,
            None,
            format!(
                "{name} \"{at}.disabled\" must be an array of hook names (got {other}) — ignored"
            ),
        ),
    }
}

/// Parses one Gemini settings or extension hooks file: each definition and handler
/// deserialized on its own ([`Definition`], [`Handler`]), then compiled.
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
    if !doc.is_object() {
        out.warn(
            source,
            scope,
            None,
            format!("{name} is not a JSON object — file ignored"),
        );
        return out;
    };
    let file = (source, scope, name.as_str());
    let settings = SettingsFile::deserialize(&doc).ok();
    match settings.as_ref().and_then(|s| s.hooks_config.as_ref()) {
        None => {}
        Some(Lenient::Ok(sw)) if doc.get("hooksConfig").is_some_and(Value::is_object) => {
            switches(&mut out, file, sw, false);
        }
        Some(_) => out.warn(
            source,
            scope,
            None,
            format!("{name} \"hooksConfig\" must be an object — ignored"),
        ),
    }
    let hooks = match spec::events(&doc, settings.as_ref().and_then(|s| s.hooks)) {
        spec::Events::Absent => return out,
        spec::Events::Object(h) => h,
        spec::Events::NotObject => {
            out.warn(
                source,
                scope,
                None,
                format!("{name} \"hooks\" must be an object of event names — hooks ignored"),
            );
            return out;
        }
    };
    if RESERVED.iter().any(|k| hooks.contains_key(*k))
        && let Ok(sw) = Switches::deserialize(&Value::Object(hooks.clone()))
    {
        switches(&mut out, file, &sw, true);
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
        for el in elements(defs) {
            let hook = VendorHook {
                dialect: Dialect::Gemini,
                event,
                canonical,
                source,
                scope,
                root,
                entry: el.n,
            };
            definition(&mut out, &hook, el.value);
        }
    }
    out
}

/// Warns about a definition's matcher.
fn check_matcher(event: &str, n: usize, def: &Definition, warn: &mut dyn FnMut(String)) {
    let Some(p) = spec::matcher_source(&def.matcher) else {
        return;
    };
    match (matcher_kind(event), &def.matcher) {
        (_, Some(Lenient::Bad(_))) => warn(format!(
            "\"{event}\" entry {n} \"matcher\" must be a string — its hooks never fire"
        )),
        (MatcherKind::ToolRegex, _) if RegexMatcher::new(&p).is_err() && p != "*" => {
            warn(format!(
                "\"{event}\" entry {n} \"matcher\" \"{p}\" is not a valid regex — compared as an exact tool name, as Gemini CLI does"
            ));
        }
        (MatcherKind::ToolRegex, _) if tool_hint(&p).is_some() => {
            let hint = tool_hint(&p).unwrap_or_default();
            warn(format!("\"{event}\" entry {n} \"matcher\" \"{p}\" {hint}"));
        }
        (MatcherKind::Exact, _) if p.contains('|') => warn(format!(
            "\"{event}\" entry {n} \"matcher\" \"{p}\" is compared exactly on {event} (no \"|\" alternatives) — it matches nothing; use one entry per trigger"
        )),
        (MatcherKind::Ignored, _) if p != "*" => warn(format!(
            "\"{event}\" entry {n} \"matcher\" is ignored on {event}: its hooks always run"
        )),
        _ => {}
    }
}

/// Compiles one definition and its handlers.
fn definition(out: &mut ParsedConfig, hook: &VendorHook<'_>, value: &Value) {
    let (source, scope, event, n) = (hook.source, hook.scope, hook.event, hook.entry);
    let wired = hook.canonical.is_some();
    let warn = |out: &mut ParsedConfig, message: String| {
        if wired {
            out.warn(source, scope, Some(event), message);
        }
    };
    let Some(def) = spec::entry::<Definition>(value) else {
        warn(
            out,
            format!(
                "\"{event}\" entry {n} must be an object {{ matcher, hooks: [...] }} — skipped"
            ),
        );
        return;
    };
    let Some(Lenient::Ok(handlers)) = &def.hooks else {
        let hint = if value.get("command").is_some() {
            " (Gemini CLI nests commands: { \"matcher\": …, \"hooks\": [{ \"type\": \"command\", \"command\": … }] })"
        } else {
            ""
        };
        warn(
            out,
            format!("\"{event}\" entry {n} has no \"hooks\" array — skipped{hint}"),
        );
        return;
    };
    let sequential = match &def.sequential {
        None => false,
        Some(Lenient::Ok(b)) => *b,
        Some(Lenient::Bad(other)) => {
            warn(
                out,
                format!(
                    "\"{event}\" entry {n} \"sequential\" must be true or false (got {other}) — treated as false"
                ),
            );
            false
        }
    };
    check_matcher(event, n, &def, &mut |m| warn(out, m));
    let raw_matcher = spec::raw_value(&def.matcher);
    let matcher_source = spec::matcher_source(&def.matcher);
    for (hi, handler) in handlers.iter().enumerate() {
        let label = format!("\"{event}\" entry {n} hook {}", hi + 1);
        let Some(h) = spec::entry::<Handler>(handler) else {
            warn(out, format!("{label} must be an object — skipped"));
            continue;
        };
        let kind = h.kind.as_ref().and_then(Lenient::ok).map(String::as_str);
        let inactive = match kind {
            Some("command") => false,
            Some(k @ ("runtime" | "plugin")) => {
                warn(
                    out,
                    format!(
                        "{label} has type \"{k}\"; copse-hooks runs only \"command\" hooks — listed as unsupported, never run"
                    ),
                );
                true
            }
            _ => {
                let got = spec::raw_text(&h.kind);
                warn(
                    out,
                    format!(
                        "{label} has \"type\" {got}; Gemini CLI requires \"type\": \"command\" — skipped"
                    ),
                );
                continue;
            }
        };
        let Some(command) =
            spec::text(&h.command).or_else(|| inactive.then(|| kind.unwrap_or("").to_string()))
        else {
            warn(
                out,
                format!("{label} has a missing or empty \"command\" — skipped"),
            );
            continue;
        };
        let hook_name = spec::text(&h.name);
        if hook_name.is_none() && !inactive {
            warn(
                out,
                format!(
                    "{label} has no \"name\" (Gemini CLI 0.61 needs one to run the hook, and uses it for /hooks enable|disable) — it runs here"
                ),
            );
        }
        let timeout = match &h.timeout {
            None => DEFAULT_TIMEOUT,
            Some(t) => {
                let ms = t.ok().copied();
                match ms.map(Value::from).as_ref().and_then(timeout_millis) {
                    Some(t) => {
                        if let Some(ms) = ms.filter(|ms| *ms <= SECONDS_LOOKALIKE_MS) {
                            warn(
                                out,
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
                            out,
                            format!(
                                "{label} \"timeout\" must be a positive number of milliseconds — using the default 60000"
                            ),
                        );
                        DEFAULT_TIMEOUT
                    }
                }
            }
        };
        if h.env.is_some() {
            warn(
                out,
                format!(
                    "{label} sets \"env\", which copse-hooks does not pass to hooks yet — the hook runs without those variables"
                ),
            );
        }
        let mut spec = VendorHook {
            canonical: if inactive { None } else { hook.canonical },
            ..*hook
        }
        .command(hydrate(&command, source), timeout);
        spec.matcher_source = matcher_source.clone();
        spec.matcher = compile_matcher(event, raw_matcher.as_ref());
        out.hooks.push(spec);
        out.extras.push(HookExtra {
            name: hook_name,
            sequential,
            state_key: None,
        });
    }
}
