//! One event through a persistent hook, end to end: the process for the hook and its
//! sandbox policy (started on demand), the request, and the reply read exactly as the
//! per-call hook's exit code and stdout would be, with the failure policy applied.

use std::os::unix::fs::MetadataExt;
use std::time::{Instant, SystemTime};

use super::pool::{Key, Pool, Unavailable};
use super::process::{CallResult, Death, Process, StartSpec};
use super::protocol::Answer;
use crate::dialect::{Adapter, HookSpec, Interpretation, ProcessResult, seconds};
use crate::env::set_var;
use crate::outcome::{FailureKind, HookRun, Outcome, SandboxState};
use crate::runner::{RunInput, blank_run, settle};
use crate::sandbox::SandboxError;

/// What identifies the content a process was started with: size, mtime and inode of
/// every script the command runs (a stat each, no read), so an edited script restarts
/// the hook at its next event.
fn fingerprint(hook: &HookSpec, cwd: &std::path::Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    hook.command.hash(&mut h);
    for path in crate::scripts::scripts_of(&hook.command, cwd) {
        path.hash(&mut h);
        if let Ok(m) = std::fs::metadata(&path) {
            (m.len(), m.mtime(), m.mtime_nsec(), m.ino(), m.ctime_nsec()).hash(&mut h);
        }
    }
    h.finish()
}

/// Runs `hook` (persistent) for `input.event` through `pool`.
pub(crate) fn run(
    adapter: &dyn Adapter,
    hook: &HookSpec,
    input: &RunInput<'_>,
    pool: &Pool,
    stdin: Vec<u8>,
) -> HookRun {
    let policy = crate::dialect::effective_policy(hook, input.failure_policy);
    let idle = hook.options.persistent.and_then(|p| p.idle_timeout);
    let cwd = adapter.cwd(hook, &input.ctx);
    let sandbox_policy = input
        .sandbox
        .filter(|_| hook.sandbox)
        .map(|config| (config, config.policy(hook, &input.ctx)));
    let key = Key {
        source: hook.source.clone(),
        event: hook.event.clone(),
        entry: hook.entry,
        command: hook.command.clone(),
        policy: sandbox_policy
            .as_ref()
            .map_or_else(|| "off".to_string(), |(_, p)| format!("{p:?}")),
    };
    let started = Instant::now();
    let started_at = SystemTime::now();
    let mut record = blank_run(hook, input.event, policy, stdin);
    record.started_at = started_at;
    let start = || {
        // The shared process gets the scrubbed base environment and the vendor
        // variables, never a session's overlay (it serves every session).
        let shared_input = RunInput {
            event: input.event,
            ctx: input.ctx,
            base_env: input.base_env,
            session_env: None,
            child_depth: input.child_depth,
            limits: input.limits,
            sandbox: input.sandbox,
            failure_policy: input.failure_policy,
            http_policy: input.http_policy,
            persistent: input.persistent,
        };
        let mut env = crate::runner::environment(adapter, hook, &shared_input);
        // Tells the program it was started persistent (the SDK runners read it).
        set_var(&mut env, super::protocol::PERSISTENT_ENV, "1");
        let mut state = SandboxState::Off;
        let prepared = match &sandbox_policy {
            None => None,
            Some((config, policy)) => match config.sandbox.prepare(policy) {
                Ok(p) => {
                    state = SandboxState::Enforced;
                    set_var(&mut env, "TMPDIR", p.tmpdir().as_os_str());
                    Some(p)
                }
                Err(SandboxError::Unenforced { .. }) if !config.require => {
                    state = SandboxState::Unenforced;
                    None
                }
                Err(e) => {
                    return Err(Death::Spawn(if config.require {
                        format!("the sandbox is required but {e}")
                    } else {
                        format!("could not be sandboxed: {e}")
                    }));
                }
            },
        };
        let process = Process::start(StartSpec {
            command: hook.command.clone(),
            cwd: cwd.clone(),
            env,
            sandbox: prepared,
            limits: input.limits,
        })?;
        Ok((process, state))
    };
    let fingerprint = fingerprint(hook, &cwd);
    let deadline = started.checked_add(hook.timeout);
    let mut got = pool.get(&key, fingerprint, idle, start);
    // Restarting after a crash: wait out the backoff when the request's timeout
    // allows it, then try once more.
    if let Err(Unavailable::Backoff(at)) = &got
        && deadline.is_some_and(|d| *at < d)
    {
        std::thread::sleep(at.saturating_duration_since(Instant::now()));
        got = pool.get(&key, fingerprint, idle, start);
    }
    let interpretation = match got {
        Err(Unavailable::Broken(why)) => Interpretation::failed(FailureKind::Broken, why, false),
        Err(Unavailable::Backoff(_)) => Interpretation::failed(
            FailureKind::Exit,
            "crashed and is waiting to restart (persistent hook)",
            false,
        ),
        Err(Unavailable::Start(death)) => failed(&death, hook),
        Ok((process, sandbox)) => {
            record.sandbox = sandbox;
            let remaining = deadline.map_or(hook.timeout, |d| {
                d.saturating_duration_since(Instant::now())
            });
            match process.call(&hook.event, &record.stdin, remaining) {
                CallResult::Answered { answer, stderr } => {
                    record.stderr = stderr;
                    match answer {
                        Answer::Response { response } => {
                            let stdout = if response.is_null() {
                                Vec::new()
                            } else {
                                serde_json::to_vec(&response).unwrap_or_default()
                            };
                            record.exit_code = Some(0);
                            let i = adapter.interpret(
                                hook,
                                input.event,
                                &ProcessResult {
                                    exit_code: Some(0),
                                    signal: None,
                                    stdout: &stdout,
                                    stderr: &[],
                                },
                            );
                            record.stdout = stdout;
                            i
                        }
                        Answer::Exit { exit, stderr } => {
                            record.exit_code = Some(exit);
                            let i = adapter.interpret(
                                hook,
                                input.event,
                                &ProcessResult {
                                    exit_code: Some(exit),
                                    signal: None,
                                    stdout: &[],
                                    stderr: stderr.as_bytes(),
                                },
                            );
                            record.stderr.extend_from_slice(stderr.as_bytes());
                            i
                        }
                    }
                }
                CallResult::NotWanted => {
                    record.warnings.push(format!(
                        "the persistent hook did not ask for {} in its hello — not sent",
                        hook.event
                    ));
                    Interpretation::ok(Outcome::default())
                }
                CallResult::TimedOut { stderr } => {
                    record.stderr = stderr;
                    Interpretation::failed(
                        FailureKind::Timeout,
                        format!("timed out after {}", seconds(hook.timeout)),
                        false,
                    )
                }
                CallResult::Cancelled { stderr } => {
                    record.stderr = stderr;
                    Interpretation::failed(
                        FailureKind::Exit,
                        "was cancelled by the host (persistent hook: the request was abandoned)",
                        false,
                    )
                }
                CallResult::Failed { death, stderr } => {
                    record.stderr = stderr;
                    failed(&death, hook)
                }
            }
        }
    };
    record.duration = started.elapsed();
    settle(&mut record, hook, policy, input.event, interpretation);
    record
}

/// A dead or unstartable process as a run failure.
fn failed(death: &Death, hook: &HookSpec) -> Interpretation {
    let kind = match death {
        Death::Spawn(_) => FailureKind::Spawn,
        Death::Exited { .. } | Death::Stopped => FailureKind::Exit,
        Death::Protocol(_) => FailureKind::InvalidJson,
        Death::Oversize(_) => FailureKind::Oversize,
        Death::NoHello(_) => FailureKind::Timeout,
    };
    let _ = hook;
    Interpretation::failed(
        kind,
        format!("{} (persistent hook)", death.message()),
        false,
    )
}
