//! The runner: one hook end to end, and the failure policy.
//!
//! marshal (adapter) → spawn → interpret (adapter) → policy. The runner knows the
//! adapter interface, not any dialect. Spawn failures, timeouts and oversize output
//! are failures in every dialect and are classified here; everything else about the
//! exit code and stdout is the dialect's to read.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use crate::dialect::{Adapter, Context, Dialect, HookSpec, ProcessResult, Scope, seconds};
use crate::env::{DEPTH_VAR, set_var};
use crate::event::{CanonicalEvent, EventPayload};
use crate::outcome::{
    Decision, Failure, FailureKind, FailurePolicy, Halt, HookRun, Outcome, RunOutcome, SandboxState,
};
use crate::sandbox::{Sandbox, SandboxError, SandboxPolicy};
use crate::spawn::{self, Limits, SpawnRequest, Termination};

/// Everything one run needs besides the hook.
pub(crate) struct RunInput<'a> {
    pub event: &'a EventPayload,
    pub ctx: Context<'a>,
    /// The scrubbed parent environment.
    pub base_env: &'a [(OsString, OsString)],
    /// The session's environment overlays (from sessionStart hooks); each hook gets
    /// only its own scope and root's.
    pub session_env: Option<&'a crate::overlay::Overlays>,
    /// The depth the child gets.
    pub child_depth: u32,
    /// Output caps and grace periods.
    pub limits: Limits,
    /// The sandbox hooks run in, when the host sandboxes them.
    pub sandbox: Option<&'a SandboxConfig>,
    /// The per-dialect `failurePolicy` setting (dialect name → policy).
    pub failure_policy: &'a BTreeMap<String, FailurePolicy>,
    /// Claude's `allowedHttpHookUrls` / `httpHookAllowedEnvVars` (merged over the
    /// trusted settings files); `None` when no http hook is about to run.
    pub http_policy: Option<&'a crate::http::HttpPolicy>,
    /// The engine's persistent hook processes (`None`: persistent hooks run per call).
    pub persistent: Option<&'a crate::persistent::pool::Pool>,
}

/// How the host sandboxes hooks.
#[derive(Clone)]
pub(crate) struct SandboxConfig {
    /// The platform's sandbox.
    pub sandbox: std::sync::Arc<dyn Sandbox>,
    /// Fail a run (failure kind `sandbox`) when the kernel does not enforce it.
    pub require: bool,
    /// Paths every sandboxed hook may write besides the workspace roots.
    pub extra_writable: Vec<PathBuf>,
    /// Unix sockets project hooks may use (setting `sandboxAllowedSockets`).
    pub allowed_sockets: Vec<PathBuf>,
    /// Paths no hook may write, besides [`crate::sandbox::protected_paths`]: e.g. the
    /// scripts pinned by trust.
    pub extra_protected: Vec<PathBuf>,
    /// The user's home (for a user hook's own config directory).
    pub home: PathBuf,
    /// `$COPSE_DIR` (the Copse user config's directory).
    pub copse_dir: PathBuf,
}

impl SandboxConfig {
    /// What a hook may write: the workspace roots, its own config directory when it
    /// is a user hook, and the configured extra paths (the private TMPDIR is added by
    /// the sandbox itself).
    pub(crate) fn policy(&self, hook: &HookSpec, ctx: &Context<'_>) -> SandboxPolicy {
        let mut writable: Vec<PathBuf> = ctx.workspace_roots.to_vec();
        if let Some(root) = &hook.root {
            writable.push(root.clone());
        }
        if hook.scope == Scope::User {
            writable.push(match hook.dialect {
                Dialect::Cursor => self.home.join(".cursor"),
                Dialect::Claude => self.home.join(".claude"),
                // $COPSE_DIR holds the settings and the audit store: a Copse user hook
                // keeps its state beneath it, in `state/`.
                Dialect::Copse => {
                    let state = self.copse_dir.join("state");
                    if !state.is_dir() {
                        let _ = std::fs::create_dir_all(&state);
                    }
                    state
                }
                Dialect::Gemini => self.home.join(".gemini"),
                Dialect::Codex => self.home.join(".codex"),
            });
        }
        writable.extend(self.extra_writable.iter().cloned());
        let mut protected =
            crate::sandbox::protected_paths(&self.home, &self.copse_dir, ctx.workspace_roots);
        protected.extend(self.extra_protected.iter().cloned());
        // No hook, user or project, gets a Unix socket (a tmux server, the Docker socket,
        // an agent, the copse daemon) or an abstract one, unless the user listed sockets
        // hooks may use (the daemon's never counts: it is masked).
        SandboxPolicy::new(writable)
            .network(hook.network)
            .protected(protected)
            .unix_sockets(false)
            .allowed_sockets(self.allowed_sockets.clone())
    }
}

/// The stdin bytes for a hook.
pub(crate) fn marshal(adapter: &dyn Adapter, hook: &HookSpec, input: &RunInput<'_>) -> Vec<u8> {
    let value = adapter.marshal(hook, input.event, &input.ctx);
    // Serialising a `Value` cannot fail (all keys are strings).
    serde_json::to_vec(&value).unwrap_or_default()
}

/// The environment for a hook: scrubbed base (minus the handles to services outside
/// the sandbox, for a project hook), the session overlay of its own scope and root,
/// vendor variables, and the depth variable last so nothing can clobber it.
pub(crate) fn environment(
    adapter: &dyn Adapter,
    hook: &HookSpec,
    input: &RunInput<'_>,
) -> Vec<(OsString, OsString)> {
    let mut env = input.base_env.to_vec();
    // Only the engine says a hook runs persistent (`persistent::run` sets it): a
    // per-call hook never inherits it from the host.
    env.retain(|(k, _)| k != crate::persistent::PERSISTENT_ENV);
    if hook.scope == Scope::Project {
        env.retain(|(k, _)| !k.to_str().is_some_and(crate::env::withheld_from_project));
    }
    // An overlay never reaches a hook that runs outside the sandbox: one that opted
    // out, or any hook of a host that turned sandboxing off.
    if let Some(overlay) = input
        .session_env
        .filter(|_| input.sandbox.is_some())
        .and_then(|o| o.for_hook(hook))
    {
        for (k, v) in overlay {
            set_var(&mut env, k, v);
        }
    }
    for (k, v) in adapter.vendor_env(hook, &input.ctx) {
        set_var(&mut env, &k, v);
    }
    set_var(&mut env, DEPTH_VAR, input.child_depth.to_string());
    env
}

/// Runs one hook and returns its record (with the failure policy applied).
pub(crate) fn run(
    adapter: &dyn Adapter,
    hook: &HookSpec,
    input: &RunInput<'_>,
    stdin: Vec<u8>,
) -> HookRun {
    if hook.options.persistent.is_some()
        && let Some(pool) = input.persistent
    {
        return crate::persistent::run::run(adapter, hook, input, pool, stdin);
    }
    let policy = crate::dialect::effective_policy(hook, input.failure_policy);
    if let Some(http) = &hook.options.http {
        return run_http(adapter, hook, http, input, stdin, policy);
    }
    let mut env = environment(adapter, hook, input);
    let cwd = adapter.cwd(hook, &input.ctx);
    let started = Instant::now();
    let started_at = SystemTime::now();
    // Sandbox: prepared in the parent (fds, ruleset, private TMPDIR), applied in the
    // child between fork and exec, inherited by everything the hook starts.
    let mut sandbox_state = SandboxState::Off;
    let mut sandbox_failure = None;
    let mut resources_failure: Option<String> = None;
    let prepared = match input.sandbox.filter(|_| hook.sandbox) {
        None => None,
        Some(config) => match config.sandbox.prepare(&config.policy(hook, &input.ctx)) {
            Ok(p) => {
                sandbox_state = SandboxState::Enforced;
                set_var(&mut env, "TMPDIR", p.tmpdir().as_os_str());
                Some(p)
            }
            Err(SandboxError::Unenforced { reason }) if !config.require => {
                let _ = reason; // surfaced once per session by the session's notice
                sandbox_state = SandboxState::Unenforced;
                None
            }
            Err(SandboxError::Setup { cause: source, .. })
                if matches!(
                    source.raw_os_error(),
                    Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM)
                ) =>
            {
                sandbox_state = SandboxState::Unenforced;
                resources_failure = Some(format!(
                    "could not be started: the host is out of resources ({source})"
                ));
                None
            }
            Err(e) => {
                sandbox_state = SandboxState::Unenforced;
                sandbox_failure = Some(if config.require {
                    format!("was not run: the sandbox is required but {e}")
                } else {
                    format!("could not be sandboxed: {e}")
                });
                None
            }
        },
    };
    // Claude's SessionStart hooks may append `export` lines to `$CLAUDE_ENV_FILE`
    // (inside the hook's writable TMPDIR when sandboxed).
    let env_file = claude_env_file(hook, prepared.as_deref().map(|p| p.tmpdir()));
    if let Some(path) = &env_file {
        set_var(&mut env, "CLAUDE_ENV_FILE", path.as_os_str());
    }
    let request = SpawnRequest {
        command: &hook.command,
        cwd: &cwd,
        env: &env,
        stdin: &stdin,
        timeout: hook.timeout,
        limits: input.limits,
        child_setup: prepared.as_deref().map(|p| p.as_child_setup()),
    };
    let spawned = match (&sandbox_failure, &resources_failure) {
        (None, None) => Some(spawn::run(&request)),
        _ => None,
    };
    let mut record = blank_run(hook, input.event, policy, stdin);
    record.started_at = started_at;
    record.sandbox = sandbox_state;
    let interpretation = match spawned {
        None => match resources_failure {
            Some(message) => {
                crate::dialect::Interpretation::failed(FailureKind::Resources, message, false)
            }
            None => crate::dialect::Interpretation::failed(
                FailureKind::Sandbox,
                sandbox_failure.unwrap_or_default(),
                false,
            ),
        },
        Some(Err(e)) => {
            record.duration = started.elapsed();
            let source = match &e {
                spawn::SpawnError::Start { cause: source, .. }
                | spawn::SpawnError::Io { cause: source, .. } => source.raw_os_error(),
            };
            if let Some(errno @ (libc::EMFILE | libc::ENFILE | libc::EAGAIN | libc::ENOMEM)) =
                source
            {
                crate::dialect::Interpretation::failed(
                    FailureKind::Resources,
                    format!(
                        "could not be started: the host is out of resources ({})",
                        std::io::Error::from_raw_os_error(errno)
                    ),
                    false,
                )
            } else {
                crate::dialect::Interpretation::failed(
                    FailureKind::Spawn,
                    format!("failed to start: {e}"),
                    false,
                )
            }
        }
        Some(Ok(out)) => {
            record.started_at = out.started_at;
            record.duration = out.duration;
            record.exit_code = out.exit_code;
            record.leaked = out.leaked;
            // A run the sandbox denied fails whatever it printed: detection reads the
            // kernel's own records, never the hook's output.
            let verdict = prepared
                .as_ref()
                .filter(|_| out.exit_code != Some(0) || out.termination != Termination::Exited)
                .map(|p| p.detect(out.exit_code))
                .filter(|v| v.blocked);
            let interpretation = if let Some(v) = verdict {
                record.sandbox = SandboxState::Blocked;
                crate::dialect::Interpretation::failed(
                    FailureKind::Sandbox,
                    format!("was blocked by the sandbox ({})", v.reasons.join("; ")),
                    false,
                )
            } else {
                match out.termination {
                    Termination::TimedOut => crate::dialect::Interpretation::failed(
                        FailureKind::Timeout,
                        format!("timed out after {}", seconds(hook.timeout)),
                        false,
                    ),
                    Termination::StdoutOverflow => crate::dialect::Interpretation::failed(
                        FailureKind::Oversize,
                        format!(
                            "printed more than {} bytes on stdout",
                            input.limits.stdout_cap
                        ),
                        false,
                    ),
                    Termination::Exited => adapter.interpret(
                        hook,
                        input.event,
                        &ProcessResult {
                            exit_code: out.exit_code,
                            signal: out.signal,
                            stdout: &out.stdout,
                            stderr: &out.stderr,
                        },
                    ),
                }
            };
            record.stdout = out.stdout;
            record.stderr = out.stderr;
            interpretation
        }
    };
    let tool_env_script = env_file.and_then(|path| {
        let text = read_env_file(&path);
        let _ = std::fs::remove_file(&path);
        text
    });
    settle(&mut record, hook, policy, input.event, interpretation);
    record.outcome.tool_env_script = tool_env_script;
    record
}

/// Runs a Claude `type: "http"` handler: POSTs the input and reads the response as
/// Claude Code does ("HTTP response handling"): a 2xx with an empty body or a JSON
/// object is read like a command hook's stdout after exit 0; a 2xx with any other
/// body, a non-2xx status, a connection failure or a timeout is a failure, which the
/// host's policy then settles like a failed command hook. The record's exit code is
/// the HTTP status and its stdout the body.
fn run_http(
    adapter: &dyn Adapter,
    hook: &HookSpec,
    http: &crate::http::HttpHandler,
    input: &RunInput<'_>,
    stdin: Vec<u8>,
    policy: FailurePolicy,
) -> HookRun {
    use crate::dialect::Interpretation;
    use crate::http::HttpError;
    // Header interpolation reads the same scrubbed environment a command hook gets.
    let env = environment(adapter, hook, input);
    let started = Instant::now();
    let started_at = SystemTime::now();
    let no_limits = crate::http::HttpPolicy::default();
    let limits = input.http_policy.unwrap_or(&no_limits);
    let answer = if limits.url_allowed(&http.url) {
        http.post(&stdin, &env, limits, hook.timeout, input.limits.stdout_cap)
    } else {
        Err(crate::http::HttpError::Refused(
            "not run: its URL matches no pattern of allowedHttpHookUrls".to_string(),
        ))
    };
    let duration = started.elapsed();
    let mut record = blank_run(hook, input.event, policy, stdin);
    record.started_at = started_at;
    record.duration = duration;
    let interpretation = match answer {
        Err(HttpError::Timeout) => Interpretation::failed(
            FailureKind::Timeout,
            format!("timed out after {}", seconds(hook.timeout)),
            false,
        ),
        Err(HttpError::Oversize) => Interpretation::failed(
            FailureKind::Oversize,
            format!(
                "answered with a body of more than {} bytes",
                input.limits.stdout_cap
            ),
            false,
        ),
        Err(HttpError::Transport(e)) => Interpretation::failed(
            FailureKind::Spawn,
            format!("could not be reached: {e}"),
            false,
        ),
        Err(HttpError::Refused(why)) => Interpretation::failed(FailureKind::Spawn, why, false),
        Err(HttpError::Cancelled) => Interpretation::failed(
            FailureKind::Exit,
            "was cancelled by the host (HTTP hook: the request was abandoned)",
            false,
        ),
        Ok(response) => {
            record.exit_code = Some(i32::from(response.status));
            let body_text = String::from_utf8_lossy(&response.body);
            let body = body_text.trim();
            let interpretation = if !(200..300).contains(&response.status) {
                Interpretation::failed(
                    FailureKind::Exit,
                    format!("answered with HTTP status {}", response.status),
                    false,
                )
            } else if body.is_empty() || body.starts_with('{') {
                adapter.interpret(
                    hook,
                    input.event,
                    &ProcessResult {
                        exit_code: Some(0),
                        signal: None,
                        stdout: &response.body,
                        stderr: &[],
                    },
                )
            } else {
                // Claude Code: a 2xx body that is not a JSON object is a non-blocking
                // error and never context.
                Interpretation::failed(
                    FailureKind::InvalidJson,
                    "answered with a body that is not a JSON object — response ignored".to_string(),
                    false,
                )
            };
            record.stdout = response.body;
            interpretation
        }
    };
    settle(&mut record, hook, policy, input.event, interpretation);
    record
}

/// The most bytes of `$CLAUDE_ENV_FILE` handed to the host.
const ENV_FILE_CAP: u64 = 64 * 1024;

/// A fresh, empty `$CLAUDE_ENV_FILE` for a Claude SessionStart hook (created
/// exclusively, so nothing else can have planted it), or `None` for other hooks.
fn claude_env_file(hook: &HookSpec, tmpdir: Option<&std::path::Path>) -> Option<PathBuf> {
    if hook.dialect != Dialect::Claude || hook.event != "SessionStart" {
        return None;
    }
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = tmpdir.map_or_else(std::env::temp_dir, std::path::Path::to_path_buf);
    let path = dir.join(format!("copse-claude-env-{}-{n}.sh", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .ok()?;
    Some(path)
}

/// What a hook wrote to its env file (capped; a regular file only).
fn read_env_file(path: &std::path::Path) -> Option<String> {
    use std::io::Read as _;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(ENV_FILE_CAP)
        .read_to_string(&mut text)
        .ok()?;
    Some(text).filter(|t| !t.trim().is_empty())
}

/// What a failure becomes: a deny naming the hook and the problem when the hook fails
/// closed on a gated event (a halt too, for a prompt submission), otherwise nothing.
pub(crate) fn policy_outcome(
    hook: &HookSpec,
    policy: FailurePolicy,
    event: &EventPayload,
    failure: &Failure,
) -> Outcome {
    if policy == FailurePolicy::Closed && event.event().is_gated() {
        let message = format!(
            "hook \"{}\" {} — blocked because the hook fails closed",
            hook.command, failure.message
        );
        Outcome {
            decision: Some(Decision::Deny),
            halt: (event.event() == CanonicalEvent::BeforeSubmitPrompt).then(|| Halt {
                reason: message.clone(),
            }),
            agent_message: Some(message),
            ..Outcome::default()
        }
    } else {
        Outcome::default()
    }
}

/// A run whose supervising thread panicked: recorded as a spawn failure under the
/// hook's policy, so a bug here can never loosen a fail-closed gate.
pub(crate) fn panicked_run(
    hook: &HookSpec,
    event: &EventPayload,
    settings: &BTreeMap<String, FailurePolicy>,
) -> HookRun {
    let policy = crate::dialect::effective_policy(hook, settings);
    let failure = Failure {
        kind: FailureKind::Spawn,
        message: "could not be supervised (internal error)".to_string(),
    };
    let mut record = blank_run(hook, event, policy, Vec::new());
    record.outcome = policy_outcome(hook, policy, event, &failure);
    record.failure = Some(failure);
    record.result = RunOutcome::Failed;
    record
}

/// The record of a run of `hook` for `event` that has done nothing yet (started now,
/// no output, not parsed, not sandboxed), under `policy` with `stdin` as sent: what
/// the per-call runner, the persistent runner and the panic path each fill in.
pub(crate) fn blank_run(
    hook: &HookSpec,
    event: &EventPayload,
    policy: FailurePolicy,
    stdin: Vec<u8>,
) -> HookRun {
    let mut record = HookRun::new(
        hook.event.clone(),
        event.event(),
        hook.dialect,
        hook.command.clone(),
        hook.source.clone(),
        hook.scope,
    );
    record.parse_ok = false;
    record.policy = policy;
    record.stdin = stdin;
    record
}

/// Puts an interpretation into the run record: a failure settles by the failure
/// policy, a clean run keeps what the hook said.
pub(crate) fn settle(
    record: &mut HookRun,
    hook: &HookSpec,
    policy: FailurePolicy,
    event: &EventPayload,
    interpretation: crate::dialect::Interpretation,
) {
    record.parse_ok = interpretation.parse_ok;
    match interpretation.failure {
        Some(failure) => {
            record.outcome = policy_outcome(hook, policy, event, &failure);
            record.failure = Some(failure);
            record.result = RunOutcome::Failed;
        }
        None => {
            record.result = label(&interpretation.outcome);
            record.outcome = interpretation.outcome;
        }
    }
}

/// The short label of a clean outcome.
pub(crate) fn label(outcome: &Outcome) -> RunOutcome {
    if outcome.halt.is_some() {
        return RunOutcome::Deny;
    }
    match outcome.decision {
        Some(Decision::Allow) => RunOutcome::Allow,
        Some(Decision::Ask) => RunOutcome::Ask,
        Some(Decision::Deny) => RunOutcome::Deny,
        None => RunOutcome::None,
    }
}
