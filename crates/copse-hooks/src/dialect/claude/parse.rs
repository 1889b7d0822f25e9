//! Reading a Claude settings file into hook specs: event → matcher groups →
//! handlers, each handler checked on its own (a bad one is a warning naming its
//! event, group and position; the rest still load).

use std::path::Path;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{
    Claude, IF_EVENTS, PUBLISHED_EVENTS, PermissionRule, canonical_for, compile_matcher,
    default_timeout, failure_can_block, uses_matcher,
};
use crate::dialect::spec::{self, Field, Lenient, VendorHook, elements, timeout_secs};
use crate::dialect::{Dialect, HookMatcher, HookOptions, ParsedConfig, Scope, seconds};
use crate::matcher::MatcherError;
use crate::outcome::FailurePolicy;

/// The hook keys of a Claude Code settings file (`~/.claude/settings.json`,
/// `<root>/.claude/settings.json`, `<root>/.claude/settings.local.json`) or of a
/// plugin's `hooks/hooks.json`. Other settings keys are allowed and ignored.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(title = "Claude Code settings.json hooks")]
pub struct SettingsFile {
    /// Plugins this file enables or disables (`"name@marketplace": true`); later
    /// settings files override earlier ones per plugin.
    #[serde(default, rename = "enabledPlugins")]
    pub enabled_plugins: Field<Map<String, Value>>,
    /// `true` turns hooks off (a user or managed file: every hook; a project file:
    /// only hooks below it).
    #[serde(default, rename = "disableAllHooks")]
    pub disable_all_hooks: Field<bool>,
    /// URL patterns (`*` wildcard) `http` hooks may POST to; an empty list allows
    /// none. Merged (union) across settings files.
    #[serde(default, rename = "allowedHttpHookUrls")]
    pub allowed_http_hook_urls: Field<Vec<String>>,
    /// The environment variables any `http` hook's headers may use (each hook's
    /// `allowedEnvVars` is intersected with it). Merged (union) across settings files.
    #[serde(default, rename = "httpHookAllowedEnvVars")]
    pub http_hook_allowed_env_vars: Field<Vec<String>>,
    /// Matcher groups by Claude Code's PascalCase event name.
    #[serde(default)]
    #[schemars(schema_with = "hooks_schema")]
    pub hooks: Option<spec::Shape>,
}

fn hooks_schema(generator: &mut SchemaGenerator) -> Schema {
    spec::events_schema::<Group>(
        generator,
        &PUBLISHED_EVENTS,
        "Matcher groups by Claude Code's PascalCase event name.",
    )
}

/// A matcher group: the handlers that run when the matcher accepts the subject.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false, "required" = ["hooks"]))]
pub struct Group {
    /// Absent, empty or `*`: every subject. Letters, digits, `_`, `-`, spaces, `,`
    /// and `|` only: exact names (`Edit|Write`, `Edit, Write`). Else an unanchored
    /// regex.
    #[serde(default)]
    pub matcher: Field<String>,
    /// The handlers.
    #[serde(default)]
    #[schemars(with = "Vec<Handler>")]
    pub hooks: Field<Vec<Value>>,
}

/// One handler. `type` picks which other fields apply.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false, "required" = ["type"]))]
pub struct Handler {
    /// `command` (run), `http` (POST the input to `url`), `prompt` or `agent` (ask a
    /// model), `mcp_tool` (call an MCP tool).
    #[serde(default, rename = "type")]
    #[schemars(extend("enum" = ["command", "http", "prompt", "agent", "mcp_tool"]))]
    pub kind: Field<String>,
    /// `command`: the shell command (or, with `args`, the program).
    #[serde(default)]
    pub command: Field<String>,
    /// `command`: exec form, the program's arguments (no shell).
    #[serde(default)]
    pub args: Field<Vec<String>>,
    /// `command`: the shell (`bash`; `powershell` is not run by copse-hooks).
    #[serde(default)]
    pub shell: Field<String>,
    /// `command`: run detached; the answer's `additionalContext` reaches the next turn.
    #[serde(default, rename = "async")]
    pub run_async: Field<bool>,
    /// `command`: run detached; exit 2 wakes the agent with stderr.
    #[serde(default, rename = "asyncRewake")]
    pub async_rewake: Field<bool>,
    /// `http`: the URL the input is POSTed to.
    #[serde(default)]
    pub url: Field<String>,
    /// `http`: request headers (`$VAR` expanded for names in `allowedEnvVars`).
    #[serde(default)]
    pub headers: Field<Map<String, Value>>,
    /// `http`: the environment variables headers may use.
    #[serde(default, rename = "allowedEnvVars")]
    pub allowed_env_vars: Field<Vec<String>>,
    /// `prompt`, `agent`: the prompt (`$ARGUMENTS` is the input JSON).
    #[serde(default)]
    pub prompt: Field<String>,
    /// `prompt`, `agent`: the model.
    #[serde(default)]
    pub model: Field<String>,
    /// `prompt`: keep going after a block.
    #[serde(default, rename = "continueOnBlock")]
    pub continue_on_block: Field<bool>,
    /// `mcp_tool`: the MCP server.
    #[serde(default)]
    pub server: Field<String>,
    /// `mcp_tool`: the tool.
    #[serde(default)]
    pub tool: Field<String>,
    /// `mcp_tool`: the tool's arguments.
    #[serde(default)]
    pub input: Field<Map<String, Value>>,
    /// One permission rule (`Bash(git push:*)`, `Edit(src/**)`); evaluated on tool
    /// events only, before the handler runs.
    #[serde(default, rename = "if")]
    pub condition: Field<String>,
    /// Seconds the handler may run.
    #[serde(default)]
    #[schemars(range(min = 0.001))]
    pub timeout: Field<f64>,
    /// Text Claude Code shows while the handler runs.
    #[serde(default, rename = "statusMessage")]
    pub status_message: Field<String>,
    /// `command`, `http`: `"block"` makes a hook that cannot start, times out or
    /// fails block the action (fail closed); `"continue"` lets it through (fail
    /// open). Absent: the host's policy (Claude Code v2.1.295).
    #[serde(default, rename = "onFailure")]
    #[schemars(extend("enum" = ["continue", "block"]))]
    pub on_failure: Field<String>,
}

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

/// What every `mcp_tool` handler (Claude Code since v2.1.118, Codex) is told: it is
/// listed, never run, and never skipped silently.
pub const MCP_TOOL_UNSUPPORTED: &str =
    "mcp_tool handlers are not supported yet: this hook does not run";

/// Why a handler of another type than `command` never runs (for `lint` and `list`).
pub fn unsupported_type(kind: &str, event: &str) -> String {
    let why = match kind {
        "prompt" | "agent" => {
            "not supported: needs a model (copse-hooks never sends hook input to an LLM)"
        }
        "mcp_tool" => {
            return format!(
                "has type \"mcp_tool\" on \"{event}\": {MCP_TOOL_UNSUPPORTED} (copse-hooks does not call MCP tools from hooks; listed only)"
            );
        }
        _ => "not a handler type Claude Code documents",
    };
    format!("has type \"{kind}\" on \"{event}\": {why} — listed, never run")
}

/// Events whose hooks Claude Code runs only as `command` or `mcp_tool`.
const NO_HTTP_EVENTS: [&str; 2] = ["SessionStart", "Setup"];

/// What parsing one handler found.
struct Compiled {
    command: String,
    /// Listed but never run (another handler type, an `if` on an event without
    /// tool context, another shell).
    inactive: bool,
    timeout: Duration,
    condition: Option<PermissionRule>,
    run_async: bool,
    async_rewake: bool,
    /// A `type: "http"` handler's request.
    http: Option<crate::http::HttpHandler>,
    /// The handler's own `onFailure` policy, when it sets one that applies.
    on_failure: Option<FailurePolicy>,
}

impl Claude {
    /// Reads one handler; `None` (after a warning) when it is unusable.
    fn handler(
        out: &mut ParsedConfig,
        ctx: (&Path, Scope, &str, bool),
        label: &str,
        h: &Handler,
    ) -> Option<Compiled> {
        let (source, scope, event, wired) = ctx;
        let note = |out: &mut ParsedConfig, message: String| {
            if wired {
                out.warn(source, scope, Some(event), message);
            }
        };
        let kind = match &h.kind {
            Some(Lenient::Ok(k)) => k.as_str(),
            None => {
                if h.command.is_some() {
                    note(
                        out,
                        format!(
                            "{label} has no \"type\"; treated as a command hook (Claude Code requires \"type\": \"command\")"
                        ),
                    );
                }
                "command"
            }
            Some(Lenient::Bad(other)) => {
                note(
                    out,
                    format!("{label} has a non-string \"type\" ({other}) — skipped"),
                );
                return None;
            }
        };
        let mut inactive = false;
        let mut http = None;
        let command = if kind == "http" {
            let Some(url) = spec::text(&h.url) else {
                note(
                    out,
                    format!("{label} has a missing or empty \"url\" — skipped"),
                );
                return None;
            };
            if let Some(problem) = crate::http::url_problem(&url) {
                note(out, format!("{label} {problem} — skipped"));
                return None;
            }
            if NO_HTTP_EVENTS.contains(&event) {
                note(
                    out,
                    format!(
                        "{label} has type \"http\" on \"{event}\", where Claude Code runs only command and mcp_tool hooks — listed, never run"
                    ),
                );
                inactive = true;
            }
            let headers = match &h.headers {
                None => Vec::new(),
                Some(Lenient::Ok(map)) => map
                    .iter()
                    .filter_map(|(k, v)| match v {
                        Value::String(s) => Some((k.clone(), s.clone())),
                        other => {
                            note(
                                out,
                                format!(
                                    "{label} header \"{k}\" must be a string, got {other} — header not sent"
                                ),
                            );
                            None
                        }
                    })
                    .collect(),
                Some(Lenient::Bad(other)) => {
                    note(
                        out,
                        format!("{label} \"headers\" must be an object, got {other} — none sent"),
                    );
                    Vec::new()
                }
            };
            let allowed_env_vars = match &h.allowed_env_vars {
                None => Vec::new(),
                Some(Lenient::Ok(names)) => names.clone(),
                Some(Lenient::Bad(other)) => {
                    note(
                        out,
                        format!(
                            "{label} \"allowedEnvVars\" must be an array of names, got {other} — no variable is interpolated"
                        ),
                    );
                    Vec::new()
                }
            };
            let command = format!("http: {url}");
            http = Some(crate::http::HttpHandler {
                url,
                headers,
                allowed_env_vars,
                project: scope == Scope::Project,
            });
            command
        } else if kind != "command" {
            let main = match kind {
                "prompt" | "agent" => spec::text(&h.prompt),
                "mcp_tool" => {
                    let server = spec::text(&h.server).unwrap_or_default();
                    let name = spec::text(&h.tool).unwrap_or_default();
                    Some(format!("{server}/{name}"))
                }
                _ => None,
            };
            let command = match main {
                Some(m) => format!("{kind}: {m}"),
                None => kind.to_string(),
            };
            note(out, format!("{label} {}", unsupported_type(kind, event)));
            return Some(Compiled {
                command,
                inactive: true,
                timeout: default_timeout(event),
                condition: None,
                run_async: false,
                async_rewake: false,
                http: None,
                on_failure: None,
            });
        } else {
            let Some(command) = spec::text(&h.command) else {
                note(
                    out,
                    format!("{label} has a missing or empty \"command\" — skipped"),
                );
                return None;
            };
            match &h.args {
                None => command,
                Some(Lenient::Ok(items)) => {
                    let mut words = vec![shell_word(&command)];
                    words.extend(items.iter().map(|a| shell_word(a)));
                    words.join(" ")
                }
                Some(Lenient::Bad(_)) => {
                    note(
                        out,
                        format!("{label} \"args\" must be an array of strings — skipped"),
                    );
                    return None;
                }
            }
        };
        match &h.shell {
            _ if http.is_some() => {}
            None => {}
            Some(Lenient::Ok(s)) if s == "bash" => {}
            Some(other) => {
                let shell = match other {
                    Lenient::Ok(s) => s.clone(),
                    Lenient::Bad(v) => v.to_string(),
                };
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
        match &h.condition {
            None => {}
            Some(Lenient::Ok(cond)) if !IF_EVENTS.contains(&event) => {
                note(
                    out,
                    format!(
                        "{label} has an \"if\" condition ({cond}) on \"{event}\"; Claude Code evaluates \"if\" only on tool events, so this handler never runs"
                    ),
                );
                inactive = true;
            }
            Some(Lenient::Ok(cond)) => match PermissionRule::parse(cond) {
                Ok(rule) => condition = Some(rule),
                Err(e) => {
                    note(out, format!("{label} \"if\": {e} — never run"));
                    inactive = true;
                }
            },
            Some(Lenient::Bad(other)) => {
                note(
                    out,
                    format!(
                        "{label} \"if\" must be a permission-rule string, got {other} — never run"
                    ),
                );
                inactive = true;
            }
        }
        let flag = |f: &Field<bool>| matches!(f, Some(Lenient::Ok(true)));
        // `async` and `asyncRewake` are command-only in Claude Code.
        let async_rewake = http.is_none() && flag(&h.async_rewake);
        let run_async = (http.is_none() && flag(&h.run_async)) || async_rewake;
        let default = default_timeout(event);
        let timeout = match &h.timeout {
            None => default,
            Some(t) => timeout_secs(t).unwrap_or_else(|| {
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
        let on_failure = match &h.on_failure {
            None => None,
            Some(Lenient::Ok(v)) if v == "block" && !failure_can_block(event) => {
                note(
                    out,
                    format!(
                        "{label} has \"onFailure\": \"block\" on \"{event}\", where a failed hook has no action to block — it fails open"
                    ),
                );
                None
            }
            Some(Lenient::Ok(v)) if v == "block" => Some(FailurePolicy::Closed),
            Some(Lenient::Ok(v)) if v == "continue" => Some(FailurePolicy::Open),
            Some(other) => {
                let got = match other {
                    Lenient::Ok(v) => format!("\"{v}\""),
                    Lenient::Bad(v) => v.to_string(),
                };
                note(
                    out,
                    format!(
                        "{label} \"onFailure\" must be \"block\" or \"continue\", got {got} — using the default policy"
                    ),
                );
                None
            }
        };
        Some(Compiled {
            command,
            inactive,
            timeout,
            condition,
            run_async,
            async_rewake,
            http,
            on_failure,
        })
    }

    /// Compiles a group's matcher for one of its hooks. Events that ignore matchers
    /// get [`HookMatcher::Always`].
    fn matcher(event: &str, wired: bool, raw: &Field<String>) -> HookMatcher {
        match (spec::matcher_source(raw), raw) {
            (None, _) => HookMatcher::Always,
            (Some(_), _) if wired && !uses_matcher(event) => HookMatcher::Always,
            (Some(p), Some(Lenient::Ok(_))) => {
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
        if !doc.is_object() {
            out.warn(
                source,
                scope,
                None,
                format!("{name} is not a JSON object — file ignored"),
            );
            return out;
        };
        let settings = SettingsFile::deserialize(&doc).ok();
        let settings = settings.as_ref();
        match settings.and_then(|s| s.enabled_plugins.as_ref()) {
            None => {}
            Some(Lenient::Ok(m)) => {
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
            Some(Lenient::Bad(other)) => out.warn(
                source,
                scope,
                None,
                format!("{name} \"enabledPlugins\" must be an object of plugin ids, got {other} — ignored"),
            ),
        }
        match settings.and_then(|s| s.disable_all_hooks.as_ref()) {
            None => {}
            Some(Lenient::Ok(b)) => out.disable_all_hooks = Some(*b),
            Some(Lenient::Bad(other)) => out.warn(
                source,
                scope,
                None,
                format!("{name} \"disableAllHooks\" must be true or false, got {other} — ignored"),
            ),
        }
        // A project's lists narrow the user's, never widen them (HttpPolicy::merge).
        out.http_policy.project = scope == Scope::Project;
        for (key, field, into) in [
            (
                "allowedHttpHookUrls",
                settings.and_then(|s| s.allowed_http_hook_urls.as_ref()),
                &mut out.http_policy.urls,
            ),
            (
                "httpHookAllowedEnvVars",
                settings.and_then(|s| s.http_hook_allowed_env_vars.as_ref()),
                &mut out.http_policy.env_vars,
            ),
        ] {
            match field {
                None => {}
                Some(Lenient::Ok(items)) => *into = Some(items.clone()),
                Some(Lenient::Bad(other)) => {
                    // Unreadable: allow nothing rather than everything.
                    *into = Some(Vec::new());
                    out.warnings.push(crate::dialect::ConfigWarning {
                        source: source.to_path_buf(),
                        scope,
                        event: None,
                        message: format!(
                            "{name} \"{key}\" must be an array of strings, got {other} — treated as an empty list"
                        ),
                    });
                }
            }
        }
        // A settings file has many other keys: no `hooks` is simply no hooks.
        let hooks = match spec::events(&doc, settings.and_then(|s| s.hooks)) {
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
                                "Claude hook event \"{event}\" is recognised by Claude Code but not supported by copse-hooks yet ({}) — entries ignored",
                                super::unsupported_reason(event).unwrap_or_default()
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
            let flat_hint = " (this looks like Cursor's flat { command } entry; Claude Code nests handlers: { \"matcher\": …, \"hooks\": [{ \"type\": \"command\", \"command\": … }] })";
            for el in elements(groups) {
                let hook = VendorHook {
                    dialect: Dialect::Claude,
                    event,
                    canonical,
                    source,
                    scope,
                    root,
                    entry: el.n,
                };
                Self::group(&mut out, &hook, el.value, flat_hint);
            }
        }
        out
    }

    /// Compiles one matcher group and its handlers.
    fn group(out: &mut ParsedConfig, hook: &VendorHook<'_>, value: &Value, flat_hint: &str) {
        let (source, scope, event, n) = (hook.source, hook.scope, hook.event, hook.entry);
        let wired = hook.canonical.is_some();
        let Some(group) = spec::entry::<Group>(value) else {
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
            return;
        };
        let Some(Lenient::Ok(handlers)) = &group.hooks else {
            if wired {
                let hint = if value.get("command").is_some() {
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
            return;
        };
        let matcher_source = spec::matcher_source(&group.matcher);
        if wired
            && uses_matcher(event)
            && let HookMatcher::Invalid(e) = Self::matcher(event, wired, &group.matcher)
        {
            let p = &e.pattern;
            out.warn(
                source,
                scope,
                Some(event),
                if matches!(group.matcher, Some(Lenient::Ok(_))) {
                    format!(
                        "\"{event}\" group {n} matcher \"{p}\" is not a valid regex ({}) — its hooks never fire",
                        e.reason
                    )
                } else {
                    format!("\"{event}\" group {n} matcher must be a string — its hooks never fire")
                },
            );
        }
        let ctx = (source, scope, event, wired);
        for (hi, handler) in handlers.iter().enumerate() {
            let label = format!("\"{event}\" group {n} hook {}", hi + 1);
            let Some(h) = spec::entry::<Handler>(handler) else {
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
            let Some(h) = Self::handler(out, ctx, &label, &h) else {
                continue;
            };
            let mut spec = VendorHook {
                canonical: if h.inactive { None } else { hook.canonical },
                ..*hook
            }
            .command(h.command, h.timeout);
            spec.matcher_source = matcher_source.clone();
            spec.matcher = Self::matcher(event, wired, &group.matcher);
            // Claude Code never blocks on a failed hook of an event the hook cannot
            // block by its answer: such policies are the vendor's, not the host's.
            if !failure_can_block(event) {
                spec.policy = FailurePolicy::Open;
            }
            // A handler's own `onFailure` is the vendor's per-hook policy: it wins
            // over the host's `failurePolicy` setting.
            if let Some(policy) = h.on_failure {
                spec.policy = policy;
            }
            spec.run_async = h.run_async;
            spec.options = HookOptions {
                policy_fixed: !failure_can_block(event) || h.on_failure.is_some(),
                condition: h.condition,
                async_rewake: h.async_rewake,
                plugin: None,
                http: h.http,
                ..HookOptions::default()
            };
            out.hooks.push(spec);
        }
    }
}
