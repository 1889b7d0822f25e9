//! Reading a Copilot CLI version-1 hook file.
//!
//! As Copilot does: invalid JSON, a `version` other than 1, a `hooks` that is not an
//! object or an event whose value is not an array reject the whole file; a malformed
//! item drops only that item. `disableAllHooks: true` skips every hook of the file
//! (they are listed, never run).

use std::path::Path;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{DEFAULT_TIMEOUT, HookPlace, PUBLISHED_EVENTS, canonical_for, matcher_subject};
use crate::dialect::spec::{self, Field, Lenient, VendorHook, elements, timeout_secs};
use crate::dialect::{Dialect, HookMatcher, ParsedConfig, Scope, seconds};
use crate::matcher::{MatcherError, RegexMatcher};
use crate::outcome::FailurePolicy;

/// A Copilot CLI hook file (`.github/hooks/*.json`, `~/.copilot/hooks/*.json`,
/// `/etc/github-copilot/policy.d/*.json`).
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(
    title = "GitHub Copilot CLI hook file",
    extend("additionalProperties" = false, "required" = ["version"])
)]
pub struct HooksFile {
    /// The format version: must be 1.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1))]
    pub version: Field<u64>,
    /// Skip every hook of this file (they are listed, never run).
    #[serde(default, rename = "disableAllHooks")]
    pub disable_all_hooks: Field<bool>,
    /// Hook entries by Copilot's lowerCamelCase event name.
    #[serde(default)]
    #[schemars(schema_with = "hooks_schema")]
    pub hooks: Option<spec::Shape>,
}

fn hooks_schema(generator: &mut SchemaGenerator) -> Schema {
    spec::events_schema::<Entry>(
        generator,
        &PUBLISHED_EVENTS,
        "Hook entries by Copilot's lowerCamelCase event name.",
    )
}

/// One hook entry.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct Entry {
    /// `"command"` (the default), `"http"` or `"prompt"` (both listed, never run).
    #[serde(default, rename = "type")]
    pub kind: Field<String>,
    /// The shell command on Unix (what runs here).
    #[serde(default)]
    pub bash: Field<String>,
    /// The command on Windows (never run here).
    #[serde(default)]
    pub powershell: Field<String>,
    /// The cross-platform fallback, used when `bash` is absent.
    #[serde(default)]
    pub command: Field<String>,
    /// A program to run without a shell (instead of `bash`/`command`).
    #[serde(default)]
    pub exec: Field<String>,
    /// The arguments of `exec`.
    #[serde(default)]
    pub args: Field<Vec<String>>,
    /// Working directory (relative to the repository root, or absolute).
    #[serde(default)]
    pub cwd: Field<String>,
    /// Environment variables to set.
    #[serde(default)]
    pub env: Field<Map<String, Value>>,
    /// Seconds the hook may run (default 30).
    #[serde(default, rename = "timeoutSec")]
    #[schemars(range(min = 0))]
    pub timeout_sec: Field<f64>,
    /// Alias of `timeoutSec`, used when it is absent.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub timeout: Field<f64>,
    /// A regex the whole subject must match (`^(?:PATTERN)$`): the tool name on
    /// preToolUse, postToolUse and permissionRequest, `notification_type`, the
    /// compaction trigger, the subagent's name.
    #[serde(default)]
    pub matcher: Field<String>,
    /// `http`: the URL (listed, never run).
    #[serde(default)]
    pub url: Field<String>,
    /// `http`: request headers (listed, never run).
    #[serde(default)]
    pub headers: Field<Map<String, Value>>,
    /// `http`: variables allowed in header values (listed, never run).
    #[serde(default, rename = "allowedEnvVars")]
    pub allowed_env_vars: Field<Vec<String>>,
    /// `prompt`: the text to submit (listed, never run).
    #[serde(default)]
    pub prompt: Field<String>,
}

/// The file's name as messages start with it.
fn display_name(source: &Path) -> String {
    spec::display_name(source, "hooks.json")
}

/// A hint for an unknown event name.
pub fn suggestion(event: &str) -> String {
    let map = [
        ("userPromptSubmit", "userPromptSubmitted"),
        ("UserPromptSubmit", "userPromptSubmitted"),
        ("stop", "agentStop"),
        ("Stop", "agentStop"),
        (
            "beforeShellExecution",
            "preToolUse with \"matcher\": \"bash\"",
        ),
        ("BeforeTool", "preToolUse"),
        ("AfterTool", "postToolUse"),
    ];
    if let Some((_, copilot)) = map.iter().find(|(other, _)| *other == event) {
        return format!(" (did you mean {copilot}?)");
    }
    if let Some(known) = PUBLISHED_EVENTS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(event))
    {
        return format!(
            " (Copilot reads \"{event}\" as the VS Code-compatible form of \"{known}\", with snake_case payloads and Claude matchers, which copse-hooks does not support yet; use \"{known}\")"
        );
    }
    String::new()
}

/// Compiles a matcher as Copilot does: a regex anchored as `^(?:PATTERN)$`; absent
/// or empty matches everything.
pub fn compile_matcher(raw: Option<&Value>) -> HookMatcher {
    match raw {
        None | Some(Value::Null) => HookMatcher::Always,
        Some(Value::String(p)) if p.is_empty() => HookMatcher::Always,
        Some(Value::String(p)) => match RegexMatcher::new(&format!("^(?:{p})$")) {
            Ok(re) => HookMatcher::Regex(re),
            Err(e) => HookMatcher::Invalid(MatcherError {
                pattern: p.clone(),
                reason: e.reason,
            }),
        },
        Some(other) => HookMatcher::Invalid(MatcherError {
            pattern: other.to_string(),
            reason: "matcher must be a string".to_string(),
        }),
    }
}

/// A word for `sh -c`: single-quoted unless it is plain.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// A value as it may appear in a message: JSON text (escaped), cut at 80 characters.
fn shown(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// Parses one Copilot hook file.
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
    let Some(top) = doc.as_object() else {
        out.warn(
            source,
            scope,
            None,
            format!("{name} is not a JSON object — file ignored"),
        );
        return out;
    };
    match top.get("version") {
        Some(v) if v.as_u64() == Some(1) || v.as_f64() == Some(1.0) => {}
        None => {
            out.warn(
                source,
                scope,
                None,
                format!(
                    "{name} has no \"version\"; Copilot requires \"version\": 1 and rejects the file — file ignored"
                ),
            );
            return out;
        }
        Some(other) => {
            out.warn(
                source,
                scope,
                None,
                format!(
                    "{name} has \"version\" {}; Copilot reads only version 1 and rejects the file — file ignored",
                    shown(other)
                ),
            );
            return out;
        }
    }
    let file = HooksFile::deserialize(&doc).ok();
    static KNOWN: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let known = KNOWN.get_or_init(spec::declared_keys::<HooksFile>);
    for key in top.keys().filter(|k| !known.contains(k)) {
        out.warn(
            source,
            scope,
            None,
            format!(
                "{name} has an unknown top-level field {} (Copilot reads \"version\", \"disableAllHooks\" and \"hooks\") — ignored",
                shown(&Value::from(key.as_str()))
            ),
        );
    }
    let disabled = match top.get("disableAllHooks") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            out.warn(
                source,
                scope,
                None,
                format!(
                    "{name} \"disableAllHooks\" must be true or false (got {}) — ignored",
                    shown(other)
                ),
            );
            false
        }
    };
    let hooks = match spec::events(&doc, file.as_ref().and_then(|f| f.hooks)) {
        spec::Events::Absent => return out,
        spec::Events::Object(h) => h,
        spec::Events::NotObject => {
            out.warn(
                source,
                scope,
                None,
                format!(
                    "{name} \"hooks\" must be an object of event names — Copilot rejects the file; file ignored"
                ),
            );
            return out;
        }
    };
    // Copilot rejects the whole file when an event's value is not an array.
    if let Some((event, _)) = hooks.iter().find(|(_, v)| !v.is_array()) {
        out.warn(
            source,
            scope,
            Some(event),
            format!(
                "\"{event}\" must be an array of hook entries — Copilot rejects the whole file; file ignored"
            ),
        );
        return out;
    }
    if disabled {
        out.warn(
            source,
            scope,
            None,
            format!("{name} sets \"disableAllHooks\": true — its hooks are listed, never run"),
        );
    }
    for (event, value) in hooks {
        let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
        if !PUBLISHED_EVENTS.contains(&event.as_str()) {
            out.warn(
                source,
                scope,
                Some(event),
                format!(
                    "Unknown Copilot hook event \"{event}\" — entries ignored{}",
                    suggestion(event)
                ),
            );
            continue;
        }
        let canonical = canonical_for(event);
        if canonical.is_none() && !items.is_empty() {
            out.warn(
                source,
                scope,
                Some(event),
                format!(
                    "Copilot hook event \"{event}\" is recognised by Copilot but not supported by copse-hooks ({}) — entries listed, never run",
                    super::unsupported_reason(event).unwrap_or_default()
                ),
            );
        }
        for el in elements(items) {
            let hook = VendorHook {
                dialect: Dialect::Copilot,
                event,
                canonical: if disabled { None } else { canonical },
                source,
                scope,
                root,
                entry: el.n,
            };
            entry(&mut out, &hook, el.value, canonical.is_some());
        }
    }
    out
}

/// Compiles one hook entry (a malformed one is dropped with a warning, as Copilot
/// drops it).
fn entry(out: &mut ParsedConfig, hook: &VendorHook<'_>, value: &Value, wired: bool) {
    let (source, scope, event, n) = (hook.source, hook.scope, hook.event, hook.entry);
    let label = format!("\"{event}\" entry {n}");
    let warn = |out: &mut ParsedConfig, message: String| {
        if wired {
            out.warn(source, scope, Some(event), message);
        }
    };
    let Some(e) = spec::entry::<Entry>(value) else {
        warn(out, format!("{label} must be an object — skipped"));
        return;
    };
    let kind = match &e.kind {
        None => "command".to_string(),
        Some(Lenient::Ok(k)) => k.clone(),
        Some(Lenient::Bad(v)) => {
            warn(
                out,
                format!(
                    "{label} \"type\" must be a string (got {}) — skipped",
                    shown(v)
                ),
            );
            return;
        }
    };
    let mut inactive = false;
    let command = match kind.as_str() {
        "command" => {
            let exec = spec::text(&e.exec);
            let shell = spec::text(&e.bash).or_else(|| spec::text(&e.command));
            match (exec, shell) {
                (Some(_), Some(_)) => {
                    warn(
                        out,
                        format!(
                            "{label} combines \"exec\" with \"bash\"/\"command\", which Copilot refuses — skipped"
                        ),
                    );
                    return;
                }
                (Some(program), None) => {
                    let args = match &e.args {
                        None => Vec::new(),
                        Some(Lenient::Ok(a)) => a.clone(),
                        Some(Lenient::Bad(v)) => {
                            warn(
                                out,
                                format!(
                                    "{label} \"args\" must be an array of strings (got {}) — skipped",
                                    shown(v)
                                ),
                            );
                            return;
                        }
                    };
                    std::iter::once(program.as_str())
                        .chain(args.iter().map(String::as_str))
                        .map(shell_word)
                        .collect::<Vec<_>>()
                        .join(" ")
                }
                (None, Some(cmd)) => cmd,
                (None, None) if spec::text(&e.powershell).is_some() => {
                    warn(
                        out,
                        format!(
                            "{label} has only a \"powershell\" command, which Copilot runs on Windows only — skipped on Linux"
                        ),
                    );
                    return;
                }
                (None, None) => {
                    warn(
                        out,
                        format!(
                            "{label} has no \"bash\", \"command\" or \"exec\" — skipped (Copilot drops it)"
                        ),
                    );
                    return;
                }
            }
        }
        "http" => {
            warn(
                out,
                format!(
                    "{label} has type \"http\": Copilot HTTP hooks are not supported by copse-hooks yet — listed, never run"
                ),
            );
            inactive = true;
            format!("http: {}", spec::text(&e.url).unwrap_or_default())
        }
        "prompt" => {
            warn(
                out,
                format!(
                    "{label} has type \"prompt\": it submits text as the user, which copse-hooks never does — listed, never run"
                ),
            );
            inactive = true;
            format!("prompt: {}", spec::text(&e.prompt).unwrap_or_default())
        }
        other => {
            warn(
                out,
                format!(
                    "{label} has type {}; Copilot knows \"command\", \"http\" and \"prompt\" — skipped",
                    shown(&Value::from(other))
                ),
            );
            return;
        }
    };
    let timeout = match (&e.timeout_sec, &e.timeout) {
        (Some(t), _) | (None, Some(t)) => timeout_secs(t).unwrap_or_else(|| {
            warn(
                out,
                format!(
                    "{label} \"timeoutSec\" must be a positive number of seconds — using the default {}",
                    seconds(DEFAULT_TIMEOUT)
                ),
            );
            DEFAULT_TIMEOUT
        }),
        (None, None) => DEFAULT_TIMEOUT,
    };
    let timeout = timeout.max(Duration::from_millis(1));
    let raw_matcher = spec::raw_value(&e.matcher);
    let matcher_source = spec::matcher_source(&e.matcher);
    let matcher = if matcher_subject(event).is_some() {
        let m = compile_matcher(raw_matcher.as_ref());
        if let HookMatcher::Invalid(err) = &m {
            warn(
                out,
                format!(
                    "{label} \"matcher\" {} is not a valid regex ({}) — Copilot skips the hook; it never fires",
                    shown(&Value::from(err.pattern.as_str())),
                    err.reason
                ),
            );
        }
        m
    } else {
        if matcher_source.is_some() {
            warn(
                out,
                format!(
                    "{label} has a \"matcher\", which Copilot does not test on \"{event}\" — it fires for every {event}"
                ),
            );
        }
        HookMatcher::Always
    };
    let cwd = match &e.cwd {
        None => None,
        Some(Lenient::Ok(c)) if c.trim().is_empty() => None,
        Some(Lenient::Ok(c)) => Some(c.clone()),
        Some(Lenient::Bad(v)) => {
            warn(
                out,
                format!(
                    "{label} \"cwd\" must be a string (got {}) — ignored",
                    shown(v)
                ),
            );
            None
        }
    };
    let mut env = Vec::new();
    match &e.env {
        None => {}
        Some(Lenient::Ok(map)) => {
            for (k, v) in map {
                match v {
                    Value::String(s) => env.push((k.clone(), s.clone())),
                    Value::Number(_) | Value::Bool(_) => env.push((k.clone(), v.to_string())),
                    other => warn(
                        out,
                        format!(
                            "{label} \"env\" {} must be a string (got {}) — not set",
                            shown(&Value::from(k.as_str())),
                            shown(other)
                        ),
                    ),
                }
            }
        }
        Some(Lenient::Bad(v)) => warn(
            out,
            format!(
                "{label} \"env\" must be an object (got {}) — ignored",
                shown(v)
            ),
        ),
    }
    let mut spec = VendorHook {
        canonical: if inactive { None } else { hook.canonical },
        ..*hook
    }
    .command(command, timeout);
    spec.matcher_source = matcher_source;
    spec.matcher = matcher;
    // Copilot's own failure handling, per event: only preToolUse fails closed.
    spec.policy = if super::fails_closed(event) {
        FailurePolicy::Closed
    } else {
        FailurePolicy::Open
    };
    spec.options.policy_fixed = true;
    if cwd.is_some() || !env.is_empty() {
        spec.options.copilot = Some(HookPlace { cwd, env });
    }
    out.hooks.push(spec);
}

/// The top-level object of a Copilot file (for lint's position checks); `None` when
/// the text does not parse.
pub fn as_json(text: &str) -> Option<Map<String, Value>> {
    serde_json::from_str::<Value>(text)
        .ok()?
        .as_object()
        .cloned()
}

/// Whether a document is shaped like a Copilot hook file wherever it lives: a
/// `version` and a `hooks` object whose keys include a Copilot-only event name.
pub fn looks_like(doc: &Value) -> bool {
    let only_copilot = [
        "userPromptSubmitted",
        "userPromptTransformed",
        "agentStop",
        "errorOccurred",
        "preMcpToolCall",
        "permissionRequest",
    ];
    doc.get("version").is_some()
        && doc
            .get("hooks")
            .and_then(Value::as_object)
            .is_some_and(|h| {
                h.keys().any(|k| only_copilot.contains(&k.as_str()))
                    || h.values()
                        .flat_map(|v| v.as_array().into_iter().flatten())
                        .any(|e| e.get("bash").is_some() || e.get("timeoutSec").is_some())
            })
}
