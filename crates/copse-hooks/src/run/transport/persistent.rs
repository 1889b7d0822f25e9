//! The persistent transport: one request to the long-lived process of a hook entry
//! and sandbox policy (started on demand by the pool), its reply brought back as a
//! per-call hook's exit code and stdout would be.

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{End, Exchange};
use crate::env::set_var;
use crate::outcome::{Failure, FailureKind, SandboxState};
use crate::persistent::pool::{Key, Pool, Unavailable};
use crate::persistent::process::{CallResult, Death, Process, StartSpec};
use crate::persistent::protocol::{Answer, PERSISTENT_ENV};
use crate::run::contain::{self, Contained};
use crate::sandbox::SandboxPolicy;

/// Builds the sandbox policy of a process about to start.
pub(crate) type BuildPolicy<'a> = dyn Fn(&crate::run::SandboxConfig) -> SandboxPolicy + 'a;

/// One request to a persistent hook.
pub(crate) struct Call<'a> {
    /// Which process serves it (hook entry and sandbox policy).
    pub key: Key,
    /// The wire event (what the process subscribed to in its hello).
    pub event: &'a str,
    pub command: &'a str,
    pub cwd: PathBuf,
    pub stdin: &'a [u8],
    pub timeout: Duration,
    pub idle: Option<Duration>,
    pub limits: crate::spawn::Limits,
    /// The sandbox, and how to build the policy a newly started process runs under.
    pub sandbox: Option<(&'a crate::run::SandboxConfig, &'a BuildPolicy<'a>)>,
    /// The environment a newly started process gets (called only to start one).
    pub env: &'a dyn Fn() -> Vec<(OsString, OsString)>,
}

/// What identifies the content a process was started with: size, mtime and inode of
/// every script the command runs (a stat each, no read), so an edited script restarts
/// the hook at its next event.
fn fingerprint(command: &str, cwd: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    command.hash(&mut h);
    for path in scripts_of(command, cwd).iter() {
        path.hash(&mut h);
        if let Ok(m) = std::fs::metadata(path) {
            (m.len(), m.mtime(), m.mtime_nsec(), m.ino(), m.ctime_nsec()).hash(&mut h);
        }
    }
    h.finish()
}

/// The scripts `command` runs from `cwd`, scanned once per (command, cwd): the scan is
/// lexical, so the answer depends on the two strings alone (the `stat`s in
/// [`fingerprint`] are what notice an edit), and rescanning the command line at every
/// event was ~15 % of a persistent gate's own work (`perf`, 20,000 gates on one CPU).
fn scripts_of(command: &str, cwd: &Path) -> Arc<[PathBuf]> {
    use std::os::unix::ffi::OsStrExt;
    /// Kept scans; cleared when it reaches this many (hosts have a handful of hooks).
    const MAX: usize = 256;
    /// Scans by command and cwd (as bytes, NUL between them).
    type Memo = HashMap<Vec<u8>, Arc<[PathBuf]>>;
    static MEMO: Mutex<Option<Memo>> = Mutex::new(None);
    let mut key = Vec::with_capacity(command.len() + 1 + cwd.as_os_str().len());
    key.extend_from_slice(command.as_bytes());
    key.push(0);
    key.extend_from_slice(cwd.as_os_str().as_bytes());
    let mut memo = MEMO.lock().unwrap_or_else(PoisonError::into_inner);
    let memo = memo.get_or_insert_with(HashMap::new);
    if let Some(scripts) = memo.get(&key) {
        return Arc::clone(scripts);
    }
    if memo.len() >= MAX {
        memo.clear();
    }
    let scripts: Arc<[PathBuf]> = crate::scripts::scripts_of(command, cwd).into();
    memo.insert(key, Arc::clone(&scripts));
    scripts
}

/// Sends the request through `pool`.
pub(crate) fn exchange(pool: &Pool, call: Call<'_>) -> Exchange {
    let (mut ex, started) = Exchange::starting(SandboxState::Off);
    let start = || {
        // The shared process never gets a session's overlay (it serves every
        // session); it is told it was started persistent (the SDK runners read it).
        let mut env = (call.env)();
        set_var(&mut env, PERSISTENT_ENV, "1");
        let policy = call.sandbox.map(|(config, build)| (config, build(config)));
        let contained = contain::prepare_built(policy.as_ref().map(|(c, p)| (*c, p)));
        let state = contained.state();
        let sandbox = match contained {
            Contained::Refused(failure) => return Err(Death::Spawn(failure.message)),
            Contained::Enforced(p, tmpdir) => {
                set_var(&mut env, "TMPDIR", tmpdir.as_os_str());
                Some(p)
            }
            Contained::Off | Contained::Unenforced => None,
        };
        let process = Process::start(StartSpec {
            command: call.command.to_string(),
            cwd: call.cwd.clone(),
            env,
            sandbox,
            limits: call.limits,
        })?;
        Ok((process, state))
    };
    let fingerprint = fingerprint(call.command, &call.cwd);
    let deadline = started.checked_add(call.timeout);
    let mut got = pool.get(&call.key, fingerprint, call.idle, start);
    // Restarting after a crash: wait out the backoff when the request's timeout
    // allows it, then try once more.
    if let Err(Unavailable::Backoff(at)) = &got
        && deadline.is_some_and(|d| *at < d)
    {
        std::thread::sleep(at.saturating_duration_since(Instant::now()));
        got = pool.get(&call.key, fingerprint, call.idle, start);
    }
    ex.end = match got {
        Err(Unavailable::Broken(why)) => End::Failed(Failure {
            kind: FailureKind::Broken,
            message: why,
        }),
        Err(Unavailable::Backoff(_)) => End::Failed(Failure {
            kind: FailureKind::Exit,
            message: "crashed and is waiting to restart (persistent hook)".to_string(),
        }),
        Err(Unavailable::Start(death)) => End::Failed(died(&death)),
        Ok((process, sandbox)) => {
            ex.sandbox = sandbox;
            let remaining = deadline.map_or(call.timeout, |d| {
                d.saturating_duration_since(Instant::now())
            });
            answer(
                &mut ex,
                process.call(call.event, call.stdin, remaining),
                &call,
            )
        }
    };
    ex.duration = started.elapsed();
    ex
}

/// Reads a call's result into the exchange.
fn answer(ex: &mut Exchange, result: CallResult, call: &Call<'_>) -> End {
    match result {
        CallResult::Answered { answer, stderr } => {
            ex.stderr = stderr;
            match answer {
                Answer::Response { response } => {
                    if !response.is_null() {
                        ex.stdout = serde_json::to_vec(&response).unwrap_or_default();
                    }
                    ex.exit_code = Some(0);
                    End::Answered {
                        exit_code: Some(0),
                        signal: None,
                        stderr_from: ex.stderr.len(),
                    }
                }
                Answer::Exit { exit, stderr } => {
                    ex.exit_code = Some(exit);
                    let from = ex.stderr.len();
                    ex.stderr.extend_from_slice(stderr.as_bytes());
                    End::Answered {
                        exit_code: Some(exit),
                        signal: None,
                        stderr_from: from,
                    }
                }
            }
        }
        CallResult::NotWanted => {
            ex.warnings.push(format!(
                "the persistent hook did not ask for {} in its hello — not sent",
                call.event
            ));
            End::NotAsked
        }
        CallResult::TimedOut { stderr } => {
            ex.stderr = stderr;
            End::Failed(super::timed_out(call.timeout))
        }
        CallResult::Cancelled { stderr } => {
            ex.stderr = stderr;
            End::Failed(Failure {
                kind: FailureKind::Exit,
                message: "was cancelled by the host (persistent hook: the request was abandoned)"
                    .to_string(),
            })
        }
        CallResult::Failed { death, stderr } => {
            ex.stderr = stderr;
            End::Failed(died(&death))
        }
    }
}

/// A dead or unstartable process as a run failure.
fn died(death: &Death) -> Failure {
    let kind = match death {
        Death::Spawn(_) => FailureKind::Spawn,
        Death::Exited { .. } | Death::Stopped => FailureKind::Exit,
        Death::Protocol(_) => FailureKind::InvalidJson,
        Death::Oversize(_) => FailureKind::Oversize,
        Death::NoHello(_) => FailureKind::Timeout,
    };
    Failure {
        kind,
        message: format!("{} (persistent hook)", death.message()),
    }
}
