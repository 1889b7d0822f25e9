//! HTTP hook handlers (Claude Code `type: "http"`): POST the hook's input to a URL and
//! read the response body the way a command hook's stdout is read.
//!
//! The request is a blocking `POST` with `Content-Type: application/json` whose body
//! is exactly the JSON a command hook gets on stdin. Header values may use `$VAR` or
//! `${VAR}` for names the handler lists in `allowedEnvVars`; any other reference
//! becomes the empty string, and an LLM key is never interpolated even when listed.
//! Redirects are never followed (a 3xx is a failed request), the body is capped like
//! stdout, and the whole exchange shares the handler's timeout.

use std::ffi::OsString;
use std::io::Read as _;
use std::time::Duration;

/// What a `type: "http"` handler declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpHandler {
    /// The URL the input is POSTed to (`http://` or `https://`).
    pub url: String,
    /// Request headers as written (values not yet interpolated).
    pub headers: Vec<(String, String)>,
    /// The environment variables header values may interpolate.
    pub allowed_env_vars: Vec<String>,
}

/// Claude's settings-wide limits on HTTP hooks, merged across the trusted settings
/// files (arrays merge, as Claude Code merges them): `allowedHttpHookUrls` (URL
/// patterns with `*`; an empty list allows none) and `httpHookAllowedEnvVars` (each
/// hook's `allowedEnvVars` is intersected with it). `None`: the key is set nowhere.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpPolicy {
    /// `allowedHttpHookUrls`.
    pub urls: Option<Vec<String>>,
    /// `httpHookAllowedEnvVars`.
    pub env_vars: Option<Vec<String>>,
}

impl HttpPolicy {
    /// Merges the lists of several files (union per key; set when any file sets it).
    pub(crate) fn merge<'a>(files: impl Iterator<Item = &'a HttpPolicy>) -> HttpPolicy {
        let mut out = HttpPolicy::default();
        for f in files {
            for (into, from) in [(&mut out.urls, &f.urls), (&mut out.env_vars, &f.env_vars)] {
                if let Some(items) = from {
                    let list = into.get_or_insert_with(Vec::new);
                    for i in items {
                        if !list.contains(i) {
                            list.push(i.clone());
                        }
                    }
                }
            }
        }
        out
    }

    /// Whether a hook may POST to `url`.
    pub(crate) fn url_allowed(&self, url: &str) -> bool {
        match &self.urls {
            None => true,
            Some(patterns) => patterns.iter().any(|p| wildcard(p, url)),
        }
    }

    /// Whether a header may interpolate `name`.
    fn env_allowed(&self, name: &str) -> bool {
        self.env_vars
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == name))
    }
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters.
fn wildcard(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// How an exchange ended when it produced no usable status and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HttpError {
    /// The deadline passed before the response was read.
    Timeout,
    /// The body was longer than the cap.
    Oversize,
    /// The request could not be made or the response could not be read.
    Transport(String),
    /// A settings-wide limit forbids the request (it was never made).
    Refused(String),
    /// The host cancelled the event while the request was in flight; the request is
    /// abandoned (its thread ends by the timeout at the latest).
    Cancelled,
}

/// A response read in full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The body (at most the cap).
    pub body: Vec<u8>,
}

impl HttpHandler {
    /// The header values with `$VAR` / `${VAR}` replaced from `env`: names outside
    /// `allowedEnvVars` (or outside the settings' `httpHookAllowedEnvVars`), unset
    /// names and LLM keys become the empty string.
    pub(crate) fn resolved_headers(
        &self,
        env: &[(OsString, OsString)],
        policy: &HttpPolicy,
    ) -> Vec<(String, String)> {
        let lookup = |name: &str| -> String {
            if !self.allowed_env_vars.iter().any(|a| a == name)
                || !policy.env_allowed(name)
                || crate::env::is_llm_secret(name)
            {
                return String::new();
            }
            env.iter()
                .rev()
                .find(|(k, _)| k.to_str() == Some(name))
                .and_then(|(_, v)| v.to_str())
                .unwrap_or_default()
                .to_string()
        };
        self.headers
            .iter()
            .map(|(k, v)| (k.clone(), interpolate(v, lookup)))
            .collect()
    }

    /// POSTs `body` and reads the response (any status) within `timeout`, reading at
    /// most `cap` bytes of body.
    /// [`HttpHandler::post_once`], abandoned as soon as the host cancels the event
    /// (the current thread's [`crate::CancelToken`]), as a command hook's group is
    /// killed. Without a token the request runs on this thread.
    pub(crate) fn post(
        &self,
        body: &[u8],
        env: &[(OsString, OsString)],
        policy: &HttpPolicy,
        timeout: Duration,
        cap: usize,
    ) -> Result<HttpResponse, HttpError> {
        let Some(cancel) = crate::cancel::CancelToken::current() else {
            return self.post_once(body, env, policy, timeout, cap);
        };
        if cancel.is_cancelled() {
            return Err(HttpError::Cancelled);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let (handler, body, env, policy) =
            (self.clone(), body.to_vec(), env.to_vec(), policy.clone());
        let spawned = std::thread::Builder::new()
            .name("copse-http-hook".into())
            .spawn(move || {
                let _ = tx.send(handler.post_once(&body, &env, &policy, timeout, cap));
            });
        if let Err(e) = spawned {
            return Err(HttpError::Transport(format!(
                "cannot start the request's thread: {e}"
            )));
        }
        loop {
            match rx.recv_timeout(CANCEL_SLICE) {
                Ok(answer) => return answer,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if cancel.is_cancelled() {
                        return Err(HttpError::Cancelled);
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(HttpError::Transport(
                        "the request's thread ended without an answer".into(),
                    ));
                }
            }
        }
    }

    /// One POST, blocking this thread until the answer, the timeout or an error.
    fn post_once(
        &self,
        body: &[u8],
        env: &[(OsString, OsString)],
        policy: &HttpPolicy,
        timeout: Duration,
        cap: usize,
    ) -> Result<HttpResponse, HttpError> {
        let agent = ureq::AgentBuilder::new()
            .timeout(timeout)
            .redirects(0)
            .user_agent(concat!("copse-hooks/", env!("CARGO_PKG_VERSION")))
            .build();
        let mut request = agent.post(&self.url);
        for (name, value) in self.resolved_headers(env, policy) {
            // The input is JSON whatever a header says.
            if name.eq_ignore_ascii_case("content-type") {
                continue;
            }
            request = request.set(&name, &value);
        }
        let request = request.set("Content-Type", "application/json");
        let response = match request.send_bytes(body) {
            Ok(r) | Err(ureq::Error::Status(_, r)) => r,
            Err(ureq::Error::Transport(t)) => return Err(transport(&t)),
        };
        let status = response.status();
        let mut out = Vec::new();
        let read = response
            .into_reader()
            .take(cap as u64 + 1)
            .read_to_end(&mut out);
        match read {
            Ok(_) if out.len() > cap => Err(HttpError::Oversize),
            Ok(_) => Ok(HttpResponse { status, body: out }),
            Err(e) if is_timeout(&e) => Err(HttpError::Timeout),
            Err(e) => Err(HttpError::Transport(format!("reading the response: {e}"))),
        }
    }
}

/// How often a request in flight looks for its host's cancellation.
const CANCEL_SLICE: Duration = Duration::from_millis(20);

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
    )
}

fn transport(t: &ureq::Transport) -> HttpError {
    use std::error::Error as _;
    let mut source = t.source();
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && is_timeout(io)
        {
            return HttpError::Timeout;
        }
        source = e.source();
    }
    HttpError::Transport(t.to_string())
}

/// Replaces `$NAME` and `${NAME}` (NAME: letters, digits, `_`, not starting with a
/// digit) with `lookup(NAME)`; anything else is kept as written.
pub(crate) fn interpolate(text: &str, lookup: impl Fn(&str) -> String) -> String {
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(braced) = after.strip_prefix('{')
            && let Some(end) = braced.find('}')
            && valid_name(&braced[..end])
        {
            out.push_str(&lookup(&braced[..end]));
            rest = &braced[end + 1..];
            continue;
        }
        let len = after.find(|c: char| !name_char(c)).unwrap_or(after.len());
        if valid_name(&after[..len]) {
            out.push_str(&lookup(&after[..len]));
            rest = &after[len..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Why `url` cannot be an HTTP hook's target, if it cannot.
pub(crate) fn url_problem(url: &str) -> Option<String> {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("http://") {
        return None;
    }
    if lower.starts_with("https://") {
        return None;
    }
    Some(format!(
        "\"url\" must start with http:// or https:// (got \"{url}\")"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_plain_and_braced_names() {
        let look = |n: &str| format!("<{n}>");
        assert_eq!(interpolate("Bearer $TOK", look), "Bearer <TOK>");
        assert_eq!(interpolate("a${B_1}c", look), "a<B_1>c");
        assert_eq!(interpolate("$A-$B", look), "<A>-<B>");
        assert_eq!(interpolate("cost $5 ${ x", look), "cost $5 ${ x");
        assert_eq!(interpolate("end$", look), "end$");
    }

    #[test]
    fn only_allowed_names_and_never_llm_keys() {
        let h = HttpHandler {
            url: "http://x".into(),
            headers: vec![
                ("A".into(), "$OK".into()),
                ("B".into(), "${NOPE}".into()),
                ("C".into(), "$ANTHROPIC_API_KEY".into()),
            ],
            allowed_env_vars: vec!["OK".into(), "ANTHROPIC_API_KEY".into()],
        };
        let env = vec![
            ("OK".into(), "yes".into()),
            ("NOPE".into(), "secret".into()),
            ("ANTHROPIC_API_KEY".into(), "sk-ant".into()),
        ];
        let got = h.resolved_headers(&env, &HttpPolicy::default());
        assert_eq!(got[0].1, "yes");
        assert_eq!(got[1].1, "");
        assert_eq!(got[2].1, "");
        let limited = HttpPolicy {
            urls: None,
            env_vars: Some(vec!["OTHER".into()]),
        };
        assert_eq!(h.resolved_headers(&env, &limited)[0].1, "", "intersected");
    }

    #[test]
    fn url_patterns_use_star_wildcards() {
        let p = HttpPolicy {
            urls: Some(vec![
                "http://127.0.0.1:*/hooks/*".into(),
                "https://x.test/a".into(),
            ]),
            env_vars: None,
        };
        assert!(p.url_allowed("http://127.0.0.1:8080/hooks/pre"));
        assert!(p.url_allowed("https://x.test/a"));
        assert!(!p.url_allowed("https://x.test/ab"));
        assert!(!p.url_allowed("http://127.0.0.1:8080/other"));
        assert!(
            !HttpPolicy {
                urls: Some(vec![]),
                env_vars: None
            }
            .url_allowed("http://a/")
        );
        assert!(HttpPolicy::default().url_allowed("http://a/"));
    }
}
