//! Transports: how a packet reaches a hook and its answer comes back. Each returns the
//! same neutral [`Exchange`]; none knows a dialect, a failure policy or a verdict.

pub(crate) mod http;
pub(crate) mod persistent;
pub(crate) mod process;

use std::time::{Duration, SystemTime};

use crate::outcome::{Failure, SandboxState};

/// What one transport call brought back.
#[derive(Debug)]
pub(crate) struct Exchange {
    /// When the hook was reached.
    pub started_at: SystemTime,
    /// How long it took, end to end.
    pub duration: Duration,
    /// The exit code as recorded (an HTTP hook's status).
    pub exit_code: Option<i32>,
    /// What the hook printed (an HTTP hook's body; a persistent hook's response).
    pub stdout: Vec<u8>,
    /// What the hook printed on stderr.
    pub stderr: Vec<u8>,
    /// A process of the run left its process group and was killed.
    pub leaked: bool,
    /// The sandbox the hook ran in.
    pub sandbox: SandboxState,
    /// What the engine noticed on the way (recorded on the run).
    pub warnings: Vec<String>,
    /// What the hook wrote to the environment file it was given, if any.
    pub env_script: Option<String>,
    /// How the exchange ended.
    pub end: End,
}

/// How an exchange ended.
#[derive(Debug)]
pub(crate) enum End {
    /// The hook answered: its dialect reads this exit status with the exchange's
    /// stdout and the stderr from byte `stderr_from` on.
    Answered {
        /// The exit code the dialect reads.
        exit_code: Option<i32>,
        /// The terminating signal, if any.
        signal: Option<i32>,
        /// Where the answer's own stderr starts (a persistent hook's earlier stderr is
        /// recorded but not part of this answer).
        stderr_from: usize,
    },
    /// The transport failed the run (could not start, timed out, flooded, was blocked
    /// by the sandbox, refused, cancelled): the failure policy settles it.
    Failed(Failure),
    /// The hook was not asked (a persistent hook that did not subscribe to the
    /// event): no outcome, nothing failed.
    NotAsked,
}

impl Exchange {
    /// An exchange that has not reached the hook yet, started now.
    pub(crate) fn starting(sandbox: SandboxState) -> (Exchange, std::time::Instant) {
        (
            Exchange {
                started_at: SystemTime::now(),
                duration: Duration::ZERO,
                exit_code: None,
                stdout: Vec::new(),
                stderr: Vec::new(),
                leaked: false,
                sandbox,
                warnings: Vec::new(),
                env_script: None,
                end: End::NotAsked,
            },
            std::time::Instant::now(),
        )
    }
}

/// The failure of a hook that ran out of time.
pub(crate) fn timed_out(timeout: Duration) -> Failure {
    Failure {
        kind: crate::outcome::FailureKind::Timeout,
        message: format!("timed out after {}", crate::outcome::seconds(timeout)),
    }
}
