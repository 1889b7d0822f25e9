//! The HTTP transport: the packet POSTed to a URL (Claude `type: "http"` handlers),
//! read as Claude Code reads the response ("HTTP response handling"): a 2xx with an
//! empty body or a JSON object is answered like a command hook's stdout after exit 0;
//! a 2xx with any other body, a non-2xx status, a connection failure or a timeout is a
//! failure, which the failure policy then settles like a failed command hook. The
//! recorded exit code is the HTTP status and the stdout the body.

use std::ffi::OsString;
use std::time::Duration;

use super::{End, Exchange};
use crate::http::{HttpError, HttpHandler, HttpPolicy};
use crate::outcome::{Failure, FailureKind, SandboxState};

/// POSTs `body` to `handler` under `policy` (header variables from `env`).
pub(crate) fn exchange(
    handler: &HttpHandler,
    body: &[u8],
    env: &[(OsString, OsString)],
    policy: Option<&HttpPolicy>,
    timeout: Duration,
    cap: usize,
) -> Exchange {
    let (mut ex, started) = Exchange::starting(SandboxState::Off);
    let no_limits = HttpPolicy::default();
    let limits = policy.unwrap_or(&no_limits);
    let answer = if limits.url_allowed(&handler.url) {
        handler.post(body, env, limits, timeout, cap)
    } else {
        Err(HttpError::Refused(
            "not run: its URL matches no pattern of allowedHttpHookUrls".to_string(),
        ))
    };
    ex.duration = started.elapsed();
    let failed = |kind, message: String| End::Failed(Failure { kind, message });
    ex.end = match answer {
        Err(HttpError::Timeout) => End::Failed(super::timed_out(timeout)),
        Err(HttpError::Oversize) => failed(
            FailureKind::Oversize,
            format!("answered with a body of more than {cap} bytes"),
        ),
        Err(HttpError::Transport(e)) => {
            failed(FailureKind::Spawn, format!("could not be reached: {e}"))
        }
        Err(HttpError::Refused(why)) => failed(FailureKind::Spawn, why),
        Err(HttpError::Cancelled) => failed(
            FailureKind::Exit,
            "was cancelled by the host (HTTP hook: the request was abandoned)".to_string(),
        ),
        Ok(response) => {
            ex.exit_code = Some(i32::from(response.status));
            let text = String::from_utf8_lossy(&response.body);
            let body = text.trim();
            let end = if !(200..300).contains(&response.status) {
                failed(
                    FailureKind::Exit,
                    format!("answered with HTTP status {}", response.status),
                )
            } else if body.is_empty() || body.starts_with('{') {
                End::Answered {
                    exit_code: Some(0),
                    signal: None,
                    stderr_from: 0,
                }
            } else {
                // A 2xx body that is not a JSON object is a non-blocking error and
                // never context.
                failed(
                    FailureKind::InvalidJson,
                    "answered with a body that is not a JSON object — response ignored".to_string(),
                )
            };
            ex.stdout = response.body;
            end
        }
    };
    ex
}
