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

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};
    use std::net::TcpListener;
    use std::time::Duration;

    use serde_json::json;

    use super::exchange;
    use crate::dialect::Dialect;
    use crate::http::{HttpHandler, HttpPolicy};
    use crate::outcome::FailureKind;
    use crate::run::testing::Fixture;
    use crate::run::transport::{End, Exchange};

    /// The http handler of a Claude user settings file with one `PreToolUse` http hook
    /// to `url`, parsed by the Claude adapter.
    fn handler(fx: &Fixture, url: &str) -> HttpHandler {
        let text = json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "http", "url": url, "timeout": 10}]},
        ]}})
        .to_string();
        let config = fx.parse(Dialect::Claude, "settings.json", &text);
        config.hooks[0].options.http.clone().unwrap()
    }

    /// A one-request server on a loopback port answering `status` with `body`; the
    /// thread hands back the request it read (head and body).
    fn serve(
        status: &'static str,
        body: &'static str,
    ) -> (String, std::thread::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let request = read_request(&mut stream);
            let response = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(response.as_bytes()).unwrap();
            request
        });
        (url, handle)
    }

    /// One HTTP request: the head, then as many body bytes as its Content-Length says.
    fn read_request(stream: &mut std::net::TcpStream) -> String {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let text = String::from_utf8_lossy(&buf).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if buf.len() >= end + 4 + length {
                    return text;
                }
            }
            let n = stream.read(&mut chunk).unwrap();
            assert!(n > 0, "the client closed before its request was complete");
            buf.extend_from_slice(&chunk[..n]);
        }
    }

    fn post(fx: &Fixture, url: &str, policy: Option<&HttpPolicy>) -> Exchange {
        exchange(
            &handler(fx, url),
            br#"{"tool_name":"Bash"}"#,
            &[],
            policy,
            Duration::from_secs(10),
            1024,
        )
    }

    fn failure(ex: &Exchange) -> (FailureKind, &str) {
        match &ex.end {
            End::Failed(f) => (f.kind, f.message.as_str()),
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn a_2xx_json_object_is_answered_with_the_body_as_stdout() {
        let fx = Fixture::new();
        let (url, server) = serve("200 OK", r#"{"decision":"block","reason":"no"}"#);
        let ex = post(&fx, &url, None);
        assert!(
            matches!(
                ex.end,
                End::Answered {
                    exit_code: Some(0),
                    signal: None,
                    stderr_from: 0
                }
            ),
            "{:?}",
            ex.end
        );
        assert_eq!(
            ex.exit_code,
            Some(200),
            "the recorded exit code is the status"
        );
        assert_eq!(ex.stdout, br#"{"decision":"block","reason":"no"}"#);
        let request = server.join().unwrap();
        assert!(request.starts_with("POST /hook HTTP/1.1\r\n"), "{request}");
        assert!(
            request
                .to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{request}"
        );
        assert!(
            request.ends_with("\r\n\r\n{\"tool_name\":\"Bash\"}"),
            "the packet is the body: {request}"
        );
    }

    #[test]
    fn a_2xx_with_an_empty_body_is_answered() {
        let fx = Fixture::new();
        let (url, server) = serve("204 No Content", "");
        let ex = post(&fx, &url, None);
        assert!(
            matches!(
                ex.end,
                End::Answered {
                    exit_code: Some(0),
                    ..
                }
            ),
            "{:?}",
            ex.end
        );
        assert_eq!(ex.exit_code, Some(204));
        assert!(ex.stdout.is_empty());
        server.join().unwrap();
    }

    #[test]
    fn a_non_2xx_status_is_an_exit_failure() {
        let fx = Fixture::new();
        let (url, server) = serve("500 Internal Server Error", r#"{"decision":"approve"}"#);
        let ex = post(&fx, &url, None);
        assert_eq!(
            failure(&ex),
            (FailureKind::Exit, "answered with HTTP status 500")
        );
        assert_eq!(ex.exit_code, Some(500));
        assert_eq!(
            ex.stdout, br#"{"decision":"approve"}"#,
            "the body is recorded"
        );
        server.join().unwrap();
    }

    #[test]
    fn a_2xx_body_that_is_not_a_json_object_is_invalid_json() {
        let fx = Fixture::new();
        let (url, server) = serve("200 OK", "looks fine to me");
        let ex = post(&fx, &url, None);
        let (kind, message) = failure(&ex);
        assert_eq!(kind, FailureKind::InvalidJson);
        assert!(message.contains("not a JSON object"), "{message}");
        assert_eq!(ex.exit_code, Some(200));
        server.join().unwrap();
    }

    #[test]
    fn a_body_past_the_cap_is_oversize() {
        let fx = Fixture::new();
        let (url, server) = serve(
            "200 OK",
            r#"{"reason":"0123456789012345678901234567890123456789"}"#,
        );
        let ex = exchange(
            &handler(&fx, &url),
            b"{}",
            &[],
            None,
            Duration::from_secs(10),
            16,
        );
        assert_eq!(
            failure(&ex),
            (
                FailureKind::Oversize,
                "answered with a body of more than 16 bytes"
            )
        );
        server.join().unwrap();
    }

    #[test]
    fn the_largest_cap_reads_the_whole_body() {
        // `cap + 1` is what the reader takes to see an oversize body: at `usize::MAX`
        // it must saturate, not overflow (a panic in debug, an empty body in release).
        let fx = Fixture::new();
        let (url, server) = serve("200 OK", r#"{"decision":"block"}"#);
        let ex = exchange(
            &handler(&fx, &url),
            b"{}",
            &[],
            None,
            Duration::from_secs(10),
            usize::MAX,
        );
        assert!(matches!(ex.end, End::Answered { .. }), "{:?}", ex.end);
        assert_eq!(ex.stdout, br#"{"decision":"block"}"#);
        server.join().unwrap();
    }

    #[test]
    fn a_url_outside_allowed_http_hook_urls_is_refused_without_a_request() {
        let fx = Fixture::new();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let policy = HttpPolicy {
            urls: Some(vec!["https://hooks.example.com/*".to_string()]),
            ..HttpPolicy::default()
        };
        let ex = post(&fx, &url, Some(&policy));
        let (kind, message) = failure(&ex);
        assert_eq!(kind, FailureKind::Spawn);
        assert!(message.contains("allowedHttpHookUrls"), "{message}");
        assert_eq!(ex.exit_code, None);
        listener.set_nonblocking(true).unwrap();
        assert_eq!(
            listener.accept().map(|_| ()).unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock,
            "nothing connected"
        );

        // The same URL under a pattern that names it is posted.
        let (url, server) = serve("200 OK", "{}");
        let allowed = HttpPolicy {
            urls: Some(vec!["http://127.0.0.1:*".to_string()]),
            ..HttpPolicy::default()
        };
        let ex = post(&fx, &url, Some(&allowed));
        assert!(matches!(ex.end, End::Answered { .. }), "{:?}", ex.end);
        server.join().unwrap();
    }

    #[test]
    fn an_unreachable_url_is_a_spawn_failure() {
        let fx = Fixture::new();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        drop(listener);
        let ex = post(&fx, &url, None);
        let (kind, message) = failure(&ex);
        assert_eq!(kind, FailureKind::Spawn);
        assert!(message.starts_with("could not be reached: "), "{message}");
    }
}
