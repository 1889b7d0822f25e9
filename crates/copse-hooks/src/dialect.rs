//! Dialects: everything a vendor's hook format means.
//!
//! A dialect adapter is a pure translator. It parses its config files into
//! [`HookSpec`]s (collecting warnings instead of failing), decides which of its hooks
//! a canonical event fires and with what subject, marshals the exact stdin JSON, and
//! interprets the exit code and stdout into the canonical [`Outcome`]. It spawns
//! nothing and knows nothing about processes beyond an exit code and bytes.

pub mod claude;
pub mod codex;
pub mod copilot;
pub mod copse;
pub mod cursor;
pub mod gemini;
pub(crate) mod own;
pub mod schemas;
pub mod spec;
pub(crate) mod switches;
pub(crate) mod tables;
pub mod vendor;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

pub(crate) use crate::scope::{Dialect, Scope};

use crate::event::{CanonicalEvent, EventPayload, SessionIdentity};
use crate::matcher::{GlobMatcher, MatchResult, MatcherError, RegexMatcher};
use crate::outcome::{Failure, FailureKind, FailurePolicy, Outcome};

/// A problem found in a config file. Discovery warns, it never aborts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigWarning {
    /// The config file.
    pub source: PathBuf,
    /// User or project.
    pub scope: Scope,
    /// The event the problem is under, when there is one.
    pub event: Option<String>,
    /// What is wrong and what was done about it.
    pub message: String,
}

/// When a hook fires, as far as the subject is concerned.
#[derive(Debug)]
pub enum HookMatcher {
    /// No matcher: fires for every subject.
    Always,
    /// An unanchored regex.
    Regex(RegexMatcher),
    /// A list of exact names (Claude's `Bash|Edit` form).
    Names(Vec<String>),
    /// The matcher did not compile: the hook never fires.
    Invalid(MatcherError),
}

impl HookMatcher {
    /// Tests a subject.
    pub fn test(&self, subject: &str) -> MatchResult {
        match self {
            HookMatcher::Always => MatchResult::Match,
            HookMatcher::Regex(re) => re.test(subject),
            HookMatcher::Names(names) => {
                if names.iter().any(|n| n == subject) {
                    MatchResult::Match
                } else {
                    MatchResult::NoMatch
                }
            }
            HookMatcher::Invalid(_) => MatchResult::NoMatch,
        }
    }
}

/// One declared hook, parsed and compiled.
#[derive(Debug)]
pub struct HookSpec {
    /// The dialect that declared it.
    pub dialect: Dialect,
    /// The event name as written in the config (the wire event).
    pub event: String,
    /// The canonical event it is wired to; `None` when recognised but unsupported.
    pub canonical: Option<CanonicalEvent>,
    /// The shell command.
    pub command: String,
    /// The matcher as written.
    pub matcher_source: Option<String>,
    /// The compiled matcher.
    pub matcher: HookMatcher,
    /// Path globs (Cursor's afterFileEdit convenience, Copse's `glob`).
    pub glob: Option<GlobMatcher>,
    /// What a failure does.
    pub policy: FailurePolicy,
    /// How long the hook may run.
    pub timeout: Duration,
    /// The config file that declared it.
    pub source: PathBuf,
    /// User or project.
    pub scope: Scope,
    /// The workspace root a project hook belongs to.
    pub root: Option<PathBuf>,
    /// 1-based position within its event's array (the `--entry` of `test`).
    pub entry: usize,
    /// Whether the hook runs in the sandbox (only Copse may opt out).
    pub sandbox: bool,
    /// Whether a sandboxed hook may connect out (Copse `"network": false` denies TCP
    /// bind and connect where the kernel can).
    pub network: bool,
    /// Whether the hook runs detached on an event that is otherwise awaited
    /// (Copse `async: true` on afterFileEdit).
    pub run_async: bool,
    /// A per-script cap on the continuations its queued messages may take (Copse).
    pub loop_limit: Option<crate::loop_limit::LoopLimit>,
    /// Dialect-specific options (Claude `if`, policy provenance, …).
    pub options: HookOptions,
}

/// The less common per-hook options, grouped so a new one is one field here.
#[derive(Debug, Clone, Default)]
pub struct HookOptions {
    /// The policy is the vendor's own for this event or was written in the config
    /// (Cursor `failClosed`, Copse `onFailure`, a Claude event that cannot block), so
    /// the per-dialect `failurePolicy` setting does not change it.
    pub policy_fixed: bool,
    /// A Claude `if` condition (one permission rule), evaluated before spawning.
    pub condition: Option<claude::PermissionRule>,
    /// Claude `asyncRewake`: a detached hook whose exit 2 wakes the agent with a
    /// (queued) message.
    pub async_rewake: bool,
    /// The Claude plugin that shipped the hook (`CLAUDE_PLUGIN_ROOT`).
    pub plugin: Option<claude::plugin::PluginRef>,
    /// A Claude `type: "http"` handler: the input is POSTed to its URL instead of
    /// running `command` (which then only names the hook: `http: <url>`).
    pub http: Option<crate::http::HttpHandler>,
    /// A Copse `"persistent": true` hook: one long-lived process answers every event
    /// (see `docs/persistent-hooks.md`).
    pub persistent: Option<copse::Persistence>,
    /// A Copilot hook's own `cwd` and `env`.
    pub copilot: Option<copilot::HookPlace>,
}

/// Everything the run stage needs from a hook's dialect before the hook starts, asked
/// through one door ([`launch`]): the packet, where it starts, the vendor's variables,
/// the env file, the directory a sandboxed user hook may write, the failure policy.
#[derive(Debug)]
pub(crate) struct Launch {
    /// The exact stdin bytes (field order is the dialect's contract).
    pub stdin: Vec<u8>,
    /// The directory the hook starts in.
    pub cwd: PathBuf,
    /// The variables the vendor promises its hooks.
    pub vendor_env: Vec<(String, String)>,
    /// The variable naming a fresh file the hook may write `export` lines to.
    pub env_file: Option<&'static str>,
    /// The directory a sandboxed user hook of this dialect may write.
    pub state_dir: PathBuf,
    /// The failure policy under the per-dialect setting.
    pub policy: FailurePolicy,
}

/// What a hook's dialect says about running it for `event` (`stdin`: a packet the
/// caller already has, e.g. a dry run's edited payload).
pub(crate) fn launch(
    hook: &HookSpec,
    event: &EventPayload,
    ctx: &Context<'_>,
    settings: &std::collections::BTreeMap<String, FailurePolicy>,
    dirs: (&Path, &Path),
    stdin: Option<Vec<u8>>,
) -> Launch {
    let adapter = adapter(hook.dialect);
    Launch {
        // Serialising a `Value` cannot fail (all keys are strings).
        stdin: stdin.unwrap_or_else(|| {
            serde_json::to_vec(&adapter.marshal(hook, event, ctx)).unwrap_or_default()
        }),
        cwd: adapter.cwd(hook, ctx),
        vendor_env: adapter.vendor_env(hook, ctx),
        env_file: adapter.env_file_var(hook),
        state_dir: adapter.user_state_dir(dirs.0, dirs.1),
        policy: effective_policy(hook, settings),
    }
}

/// What the selection asks a hook's dialect: whether the hook fires for the event
/// under the dialect-wide switches, and under which key the vendor runs identical
/// hooks once.
pub(crate) enum Admission {
    /// A switch turns off every hook of the dialect (Claude's `disableAllHooks`).
    AllOff,
    /// Declared for another event (or an unsupported one).
    OtherEvent,
    /// A dialect switch turned it off (why, naming the file).
    Switched(String),
    /// Its wire event, matcher or condition does not apply.
    NotApplicable,
    /// It fires; `dedup` is the vendor's key for running identical hooks once.
    Fires {
        /// The de-duplication key, when the vendor has one.
        dedup: Option<String>,
    },
}

/// The selection's one question to a hook's dialect.
pub(crate) fn admit(
    switches: &switches::Switches,
    hook: &HookSpec,
    extra: &HookExtra,
    event: &EventPayload,
    ctx: &Context<'_>,
) -> Admission {
    if switches.all_off(hook) {
        return Admission::AllOff;
    }
    if hook.canonical != Some(event.event()) {
        return Admission::OtherEvent;
    }
    if let Some(why) = switches.allows(hook, extra) {
        return Admission::Switched(why);
    }
    let adapter = adapter(hook.dialect);
    if !adapter.applies(hook, event, ctx) {
        return Admission::NotApplicable;
    }
    Admission::Fires {
        dedup: adapter.dedup_key(hook, extra),
    }
}

/// The prefix under which the managed layer's `failurePolicy` floors are folded into
/// the run's failure-policy map (`managed:claude`, `managed:toolGate`, `managed:*`).
pub(crate) const FLOOR_PREFIX: &str = "managed:";

/// Whether a managed floor closes the policy of a hook of `dialect` at canonical
/// event `event`, in a map the managed layer folded its floors into.
fn floor_closes(
    settings: &std::collections::BTreeMap<String, FailurePolicy>,
    dialect: Dialect,
    event: Option<&str>,
) -> bool {
    let floored = |k: &str| {
        settings
            .get(&format!("{FLOOR_PREFIX}{k}"))
            .is_some_and(|p| *p == FailurePolicy::Closed)
    };
    settings.keys().any(|k| k.starts_with(FLOOR_PREFIX))
        && (floored("*") || floored(dialect.as_str()) || event.is_some_and(floored))
}

/// The failure policy of a hook under the per-dialect `failurePolicy` setting
/// (`{"claude": "open"}`): the setting changes only policies the vendor leaves to
/// the host.
pub fn effective_policy(
    hook: &HookSpec,
    settings: &std::collections::BTreeMap<String, FailurePolicy>,
) -> FailurePolicy {
    // A managed floor is the last word (`managed.rs` folds the floors in).
    if floor_closes(settings, hook.dialect, hook.canonical.map(|c| c.name())) {
        return FailurePolicy::Closed;
    }
    if hook.options.policy_fixed {
        return hook.policy;
    }
    settings
        .get(hook.dialect.as_str())
        .copied()
        .unwrap_or(hook.policy)
}

impl HookSpec {
    /// Whether this hook fires for `event`, for the dialects whose matcher tests one
    /// subject: `subject` (asked only when the event is this hook's) says `None` when
    /// the wire event does not take this payload, `Some(None)` when it has no subject
    /// (it always fires), `Some(Some(s))` when the matcher must accept `s`.
    pub(crate) fn fires_on_subject(
        &self,
        event: &EventPayload,
        subject: impl FnOnce() -> Option<Option<String>>,
    ) -> bool {
        if self.canonical != Some(event.event()) {
            return false;
        }
        match subject() {
            None => false,
            Some(None) => true,
            Some(Some(s)) => self.matcher.test(&s).fires(),
        }
    }

    /// The directory a hook process starts in: the workspace root for project hooks,
    /// the config file's directory for user hooks.
    pub fn cwd(&self) -> PathBuf {
        match (&self.scope, &self.root) {
            (Scope::Project, Some(root)) => root.clone(),
            _ => self
                .source
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from("/")),
        }
    }

    /// Whether the hook is wired to a canonical event.
    pub fn supported(&self) -> bool {
        self.canonical.is_some()
    }
}

/// Per-hook facts only some dialects have, indexed like [`ParsedConfig::hooks`]
/// (a config may have fewer extras than hooks: the rest are the default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookExtra {
    /// The hook's `name` (Gemini: the `hooksConfig.disabled` and de-duplication key).
    pub name: Option<String>,
    /// Whether its definition asks for sequential execution (Gemini `sequential`).
    pub sequential: bool,
    /// The vendor's own per-hook key (Codex `[hooks.state]` key:
    /// `<source>:<event>:<group>:<handler>`).
    pub state_key: Option<String>,
}

/// Switches a config file sets for its whole dialect (across every layer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DialectSwitches {
    /// The file turns the dialect's hooks off (Gemini `hooksConfig.enabled: false`,
    /// Codex `[features] hooks = false`).
    pub all_off: bool,
    /// Hook names or commands the file disables (Gemini `hooksConfig.disabled`,
    /// union-merged across layers).
    pub disabled: Vec<String>,
    /// Vendor per-hook keys the file disables (Codex `[hooks.state."<key>"]
    /// enabled = false`).
    pub disabled_keys: Vec<String>,
}

/// A parsed config file.
#[derive(Debug, Default)]
pub struct ParsedConfig {
    /// Hooks in file order.
    pub hooks: Vec<HookSpec>,
    /// Problems found.
    pub warnings: Vec<ConfigWarning>,
    /// Claude `disableAllHooks` as this file sets it (`None` when it does not).
    pub disable_all_hooks: Option<bool>,
    /// Claude `allowedHttpHookUrls` / `httpHookAllowedEnvVars` as this file sets them.
    pub http_policy: crate::http::HttpPolicy,
    /// Claude `enabledPlugins` as this file sets it (plugin id → enabled).
    pub enabled_plugins: std::collections::BTreeMap<String, bool>,
    /// Per-hook extras (Gemini, Codex), by hook index.
    pub extras: Vec<HookExtra>,
    /// Dialect-wide switches the file sets (Gemini, Codex).
    pub switches: DialectSwitches,
    /// Set when the file was refused unread (its owner or mode): why, and the command
    /// that fixes it. A gate its hooks would have judged is then blocked.
    pub refused: Option<Refusal>,
}

/// Why a config file was refused unread, and what fixes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// As a predicate of the file ("is writable by group or others (mode 664)").
    pub reason: String,
    /// The command that fixes it (`chmod go-w FILE`).
    pub fix: String,
}

impl ParsedConfig {
    /// The extras of hook `index` (the default when the dialect records none).
    pub fn extra(&self, index: usize) -> &HookExtra {
        static NONE: HookExtra = HookExtra {
            name: None,
            sequential: false,
            state_key: None,
        };
        self.extras.get(index).unwrap_or(&NONE)
    }
}

impl ParsedConfig {
    /// Records that the file `name` is not JSON (the whole file is ignored).
    pub(crate) fn invalid_json(
        &mut self,
        source: &Path,
        scope: Scope,
        name: &str,
        e: &serde_json::Error,
    ) {
        let text = e.to_string();
        let position = format!(" at line {} column {}", e.line(), e.column());
        let reason = text.strip_suffix(&position).unwrap_or(&text);
        self.warn(
            source,
            scope,
            None,
            format!(
                "{name} is not valid JSON (line {}, column {}: {reason}) — file ignored",
                e.line(),
                e.column()
            ),
        );
    }

    /// Records a problem found in the config at `source`.
    pub(crate) fn warn(
        &mut self,
        source: &Path,
        scope: Scope,
        event: Option<&str>,
        message: String,
    ) {
        self.warnings.push(ConfigWarning {
            source: source.to_path_buf(),
            scope,
            event: event.map(str::to_string),
            message,
        });
    }
}

/// What marshalling and matching may consult besides the event.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The session identity (captured by value for detached hooks).
    pub session: &'a SessionIdentity,
    /// All workspace roots.
    pub workspace_roots: &'a [PathBuf],
}

impl Context<'_> {
    /// The root a hook's payload speaks of: its own root for project hooks, the first
    /// workspace root otherwise.
    pub fn root_for<'h>(&'h self, hook: &'h HookSpec) -> Option<&'h Path> {
        hook.root
            .as_deref()
            .or_else(|| self.workspace_roots.first().map(PathBuf::as_path))
    }
}

/// How the process ended, as far as a dialect is concerned (spawn failures,
/// timeouts and oversize output are handled by the runner before this).
#[derive(Debug, Clone, Copy)]
pub struct ProcessResult<'a> {
    /// The exit code; `None` when killed by a signal.
    pub exit_code: Option<i32>,
    /// The terminating signal, if any.
    pub signal: Option<i32>,
    /// What the hook printed on stdout.
    pub stdout: &'a [u8],
    /// What the hook printed on stderr.
    pub stderr: &'a [u8],
}

impl ProcessResult<'_> {
    /// The failure describing a non-zero exit or a kill.
    pub fn exit_failure(&self) -> Failure {
        let message = match (self.exit_code, self.signal) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(sig)) => format!("was killed by signal {sig}"),
            (None, None) => "was killed".to_string(),
        };
        Failure {
            kind: FailureKind::Exit,
            message,
        }
    }

    /// stdout as trimmed text (lossy).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(self.stdout).trim().to_string()
    }

    /// stderr as trimmed text (lossy).
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(self.stderr).trim().to_string()
    }
}

/// Stdout, classified.
pub(crate) enum Stdout {
    Empty,
    Object(Map<String, Value>),
    NotObject,
    Invalid,
}

impl Stdout {
    pub(crate) fn read(run: &ProcessResult<'_>) -> Stdout {
        let text = run.stdout_text();
        if text.is_empty() {
            return Stdout::Empty;
        }
        match serde_json::from_str(&text) {
            Ok(Value::Object(obj)) => Stdout::Object(obj),
            Ok(_) => Stdout::NotObject,
            Err(_) => Stdout::Invalid,
        }
    }

    pub(crate) fn object(&self) -> Option<&Map<String, Value>> {
        match self {
            Stdout::Object(obj) => Some(obj),
            _ => None,
        }
    }
}

/// Cursor's published `preCompact` fields, in order (the Copse dialect sends the same).
pub(crate) fn compaction_fields(c: &crate::event::Compaction) -> [(&'static str, Value); 7] {
    [
        ("trigger", Value::from(c.trigger.as_str())),
        (
            "context_usage_percent",
            Value::from(c.context_usage_percent),
        ),
        ("context_tokens", Value::from(c.context_tokens)),
        ("context_window_size", Value::from(c.context_window_size)),
        ("message_count", Value::from(c.message_count)),
        ("messages_to_compact", Value::from(c.messages_to_compact)),
        ("is_first_compaction", Value::from(c.is_first_compaction)),
    ]
}

/// A dialect's reading of one run.
#[derive(Debug, Clone, Default)]
pub struct Interpretation {
    /// What the hook said (before the failure policy).
    pub outcome: Outcome,
    /// Whether stdout parsed (empty counts as parsed).
    pub parse_ok: bool,
    /// Set when the run failed; the runner applies the policy.
    pub failure: Option<Failure>,
}

impl Interpretation {
    /// A clean run with this outcome.
    pub fn ok(outcome: Outcome) -> Self {
        Interpretation {
            outcome,
            parse_ok: true,
            failure: None,
        }
    }

    /// A failed run.
    pub fn failed(kind: FailureKind, message: impl Into<String>, parse_ok: bool) -> Self {
        Interpretation {
            outcome: Outcome::default(),
            parse_ok,
            failure: Some(Failure {
                kind,
                message: message.into(),
            }),
        }
    }

    /// Output that is JSON of the wrong shape (`what` says how).
    pub(crate) fn invalid_json(what: impl Into<String>) -> Self {
        Self::failed(FailureKind::InvalidJson, what, false)
    }
}

/// A string field's text, trimmed; `None` when absent, not a string, or blank.
pub(crate) fn trimmed_text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A dialect adapter.
pub trait Adapter: Send + Sync {
    /// Which dialect this is.
    fn dialect(&self) -> Dialect;

    /// Parses one config file. Never fails: problems become warnings.
    fn parse(&self, text: &str, source: &Path, scope: Scope, root: Option<&Path>) -> ParsedConfig;

    /// Whether `hook` fires for `event`: its wire event applies and its matcher passes.
    fn applies(&self, hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> bool;

    /// What [`Adapter::applies`] tests `hook`'s matcher against for `event` (several
    /// subjects joined by `, `), for `gate --explain` only; `None` when no matcher is
    /// tested. Built from the same subject functions `applies` uses.
    fn match_subject(&self, _hook: &HookSpec, _event: &EventPayload) -> Option<String> {
        None
    }

    /// The exact stdin object for `hook` (field order is part of the contract).
    fn marshal(&self, hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> Value;

    /// Reads the hook's answer.
    fn interpret(
        &self,
        hook: &HookSpec,
        event: &EventPayload,
        run: &ProcessResult<'_>,
    ) -> Interpretation;

    /// Extra environment variables the vendor promises its hooks.
    fn vendor_env(&self, hook: &HookSpec, ctx: &Context<'_>) -> Vec<(String, String)>;

    /// The directory the hook process starts in. By default the workspace root for
    /// project hooks and the config file's directory for user hooks.
    fn cwd(&self, hook: &HookSpec, _ctx: &Context<'_>) -> PathBuf {
        hook.cwd()
    }

    /// The directory a sandboxed user hook of this dialect may write besides the
    /// workspace: the vendor's own config directory (`~/.cursor`, …), or for Copse a
    /// `state/` directory beneath `$COPSE_DIR` (which holds the settings and the audit
    /// store, so is never writable itself).
    fn user_state_dir(&self, home: &Path, copse_dir: &Path) -> PathBuf;

    /// The variable naming a fresh, empty file the hook may write `export` lines to,
    /// handed back to the host (Claude's `CLAUDE_ENV_FILE` on SessionStart).
    fn env_file_var(&self, _hook: &HookSpec) -> Option<&'static str> {
        None
    }

    /// The key under which the vendor runs identical hooks once per event, whatever
    /// the layer that declares them (`None`: every declaration runs).
    fn dedup_key(&self, _hook: &HookSpec, _extra: &HookExtra) -> Option<String> {
        None
    }

    /// Whether this hook asks its dialect's matching hooks of an event to run one
    /// after another, each seeing the input as the previous one changed it
    /// ([`Adapter::chain_input`]).
    fn sequential(&self, _hook: &HookSpec, _extra: &HookExtra) -> bool {
        false
    }

    /// The input the next hook of a sequential chain sees, after a hook answered
    /// `outcome`.
    fn chain_input(&self, event: EventPayload, _outcome: &Outcome) -> EventPayload {
        event
    }

    /// What a hook that ran detached on an awaited event still delivers to the agent
    /// (queued, never held).
    fn detached_message(
        &self,
        _hook: &HookSpec,
        _run: &crate::outcome::HookRun,
    ) -> Option<crate::outcome::QueueRequest> {
        None
    }

    /// Whether the vendor hands what a `sessionStart` hook exports to its later hooks
    /// (Cursor's `env`): only then does an adopted hook, run as its agent would run
    /// it, see the session's overlay.
    fn session_env_reaches_hooks(&self) -> bool {
        false
    }

    /// Whether a halt asked for by a detached hook stops the agent (Claude's
    /// `continue: false` does on every event); otherwise it is recorded as suppressed.
    fn detached_halts(&self) -> bool {
        false
    }
}

/// Reads a JSON object's first non-empty string among `keys`.
pub(crate) fn string_field(obj: &serde_json::Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter()
        .filter_map(|k| obj.get(*k).and_then(Value::as_str))
        .map(str::trim)
        .find(|s| !s.is_empty())
        .map(str::to_string)
}

pub(crate) use crate::outcome::seconds;

/// The adapter for a dialect.
pub fn adapter(dialect: Dialect) -> &'static dyn Adapter {
    static CURSOR: cursor::Cursor = cursor::Cursor;
    static CLAUDE: claude::Claude = claude::Claude;
    static COPSE: copse::Copse = copse::Copse;
    static GEMINI: gemini::Gemini = gemini::Gemini;
    static CODEX: codex::Codex = codex::Codex;
    static COPILOT: copilot::Copilot = copilot::Copilot;
    match dialect {
        Dialect::Cursor => &CURSOR,
        Dialect::Claude => &CLAUDE,
        Dialect::Copse => &COPSE,
        Dialect::Gemini => &GEMINI,
        Dialect::Codex => &CODEX,
        Dialect::Copilot => &COPILOT,
    }
}

/// Whether a user hook of `dialect` starts in its config file's directory (the
/// adapter's default [`Adapter::cwd`]) rather than the workspace root: what the
/// notice for a command that was not found says.
pub(crate) fn user_hooks_start_in_config_dir(dialect: Dialect) -> bool {
    match dialect {
        Dialect::Cursor | Dialect::Copse => true,
        Dialect::Claude | Dialect::Gemini | Dialect::Codex | Dialect::Copilot => false,
    }
}

/// Parses a vendor `timeout` in seconds: a positive finite number.
pub(crate) fn timeout_seconds(v: &Value) -> Option<Duration> {
    let s = v.as_f64()?;
    if s.is_finite() && s > 0.0 && s < 1.0e9 {
        Some(Duration::from_millis((s * 1000.0).round().max(1.0) as u64))
    } else {
        None
    }
}
