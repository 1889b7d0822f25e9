//! HTTP hook handlers (Claude Code `type: "http"`): POST the hook's input to a URL and
//! read the response body the way a command hook's stdout is read.
//!
//! The request is a blocking `POST` with `Content-Type: application/json` whose body
//! is exactly the JSON a command hook gets on stdin. Header values may use `$VAR` or
//! `${VAR}` for names the handler lists in `allowedEnvVars`; any other reference
//! becomes the empty string, and an LLM key is never interpolated even when listed.
//! Redirects are never followed (a 3xx is a failed request), the body is capped like
//! stdout, and the whole exchange shares the handler's timeout.
//!
//! The settings-wide lists (`allowedHttpHookUrls`, `httpHookAllowedEnvVars`) come in
//! two layers: the user's settings files, and a trusted project's, which may only
//! narrow the user's (a request must pass both), never widen them. A project hook may
//! not reach a loopback (`127.0.0.0/8`, `::1`, `0.0.0.0`) or link-local
//! (`169.254.0.0/16`, `fe80::/10`) address unless a pattern of the user's own
//! `allowedHttpHookUrls` matches its URL: the check is on every address the host name
//! resolves to, in the resolver the connection itself uses, so a name that resolves
//! to `127.0.0.1` is refused like the literal.

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
    /// Whether a project settings file declares it (it may then not call loopback or
    /// link-local addresses unless the user's `allowedHttpHookUrls` names the URL).
    pub project: bool,
}

/// Claude's settings-wide limits on HTTP hooks: `allowedHttpHookUrls` (URL patterns
/// with `*`; an empty list allows none) and `httpHookAllowedEnvVars` (each hook's
/// `allowedEnvVars` is intersected with it). `None`: the key is set nowhere.
///
/// One file's lists, or (after a merge) the user's lists merged across
/// the user's settings files (arrays merge, as Claude Code merges them) with the
/// trusted projects' lists as a second layer in [`HttpPolicy::narrow`]: a request
/// must pass both, so a project can only narrow what the user allows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpPolicy {
    /// `allowedHttpHookUrls`.
    pub urls: Option<Vec<String>>,
    /// `httpHookAllowedEnvVars`.
    pub env_vars: Option<Vec<String>>,
    /// Whether these lists come from a project settings file.
    pub project: bool,
    /// After a merge: the projects' lists, each narrowing the user's.
    pub narrow: Option<Box<HttpPolicy>>,
}

/// Appends the items of `from` not yet in `into` (creating the list when `from` is
/// set).
fn union(into: &mut Option<Vec<String>>, from: &Option<Vec<String>>) {
    if let Some(items) = from {
        let list = into.get_or_insert_with(Vec::new);
        for i in items {
            if !list.contains(i) {
                list.push(i.clone());
            }
        }
    }
}

impl HttpPolicy {
    /// Merges the lists of several files: the user files' lists (union per key; set
    /// when any file sets it), narrowed by the project files' lists (their union) as
    /// a second layer every request must also pass.
    pub(crate) fn merge<'a>(files: impl Iterator<Item = &'a HttpPolicy>) -> HttpPolicy {
        let mut user = HttpPolicy::default();
        let mut project = HttpPolicy {
            project: true,
            ..HttpPolicy::default()
        };
        for f in files {
            let into = if f.project { &mut project } else { &mut user };
            union(&mut into.urls, &f.urls);
            union(&mut into.env_vars, &f.env_vars);
        }
        if project.urls.is_some() || project.env_vars.is_some() {
            user.narrow = Some(Box::new(project));
        }
        user
    }

    /// Whether a hook may POST to `url`: every layer that lists URLs allows it.
    pub(crate) fn url_allowed(&self, url: &str) -> bool {
        let here = match &self.urls {
            None => true,
            Some(patterns) => patterns.iter().any(|p| wildcard(p, url)),
        };
        here && self.narrow.as_ref().is_none_or(|n| n.url_allowed(url))
    }

    /// Whether the user's own `allowedHttpHookUrls` (not a project's) names `url`:
    /// what lets a project hook call a loopback or link-local address.
    pub(crate) fn user_names_url(&self, url: &str) -> bool {
        !self.project
            && self
                .urls
                .as_ref()
                .is_some_and(|patterns| patterns.iter().any(|p| wildcard(p, url)))
    }

    /// Whether a header may interpolate `name`: every layer that lists names allows
    /// it.
    fn env_allowed(&self, name: &str) -> bool {
        self.env_vars
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == name))
            && self.narrow.as_ref().is_none_or(|n| n.env_allowed(name))
    }
}

/// Why a project hook may not connect to `ip`: a loopback or link-local address (the
/// user's own services, the cloud metadata endpoint).
pub(crate) fn forbidden_address(ip: std::net::IpAddr) -> Option<&'static str> {
    use std::net::IpAddr;
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) if v4.is_loopback() || v4.is_unspecified() => Some("a loopback address"),
        IpAddr::V4(v4) if v4.is_link_local() => Some("a link-local address"),
        IpAddr::V6(v6) if v6.is_loopback() || v6.is_unspecified() => Some("a loopback address"),
        IpAddr::V6(v6) if v6.segments()[0] & 0xffc0 == 0xfe80 => Some("a link-local address"),
        _ => None,
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
        // The address check runs in the resolver the connection uses, so the address
        // checked is the address connected to (no second lookup to race).
        let refusal = std::sync::Arc::new(std::sync::Mutex::new(None::<String>));
        let guarded = self.project && !policy.user_names_url(&self.url);
        let seen = std::sync::Arc::clone(&refusal);
        let resolver = move |netloc: &str| -> std::io::Result<Vec<std::net::SocketAddr>> {
            use std::net::ToSocketAddrs as _;
            let addrs: Vec<std::net::SocketAddr> = netloc.to_socket_addrs()?.collect();
            if guarded
                && let Some((addr, what)) = addrs
                    .iter()
                    .find_map(|a| forbidden_address(a.ip()).map(|w| (a, w)))
            {
                let why = format!(
                    "not run: a project http hook may not call {} ({what}) unless the user's own allowedHttpHookUrls names its URL",
                    addr.ip()
                );
                if let Ok(mut slot) = seen.lock() {
                    *slot = Some(why.clone());
                }
                return Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    why,
                ));
            }
            Ok(addrs)
        };
        let agent = ureq::AgentBuilder::new()
            .timeout(timeout)
            .redirects(0)
            .resolver(resolver)
            .user_agent(concat!("copse-hooks/", env!("CARGO_PKG_VERSION")))
            .build();
        let refused = || refusal.lock().ok().and_then(|mut r| r.take());
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
            Err(ureq::Error::Transport(t)) => {
                return Err(match refused() {
                    Some(why) => HttpError::Refused(why),
                    None => transport(&t),
                });
            }
        };
        let status = response.status();
        let mut out = Vec::new();
        let read = response
            .into_reader()
            .take(u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1))
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
            project: false,
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
            env_vars: Some(vec!["OTHER".into()]),
            ..HttpPolicy::default()
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
            ..HttpPolicy::default()
        };
        assert!(p.url_allowed("http://127.0.0.1:8080/hooks/pre"));
        assert!(p.url_allowed("https://x.test/a"));
        assert!(!p.url_allowed("https://x.test/ab"));
        assert!(!p.url_allowed("http://127.0.0.1:8080/other"));
        assert!(
            !HttpPolicy {
                urls: Some(vec![]),
                ..HttpPolicy::default()
            }
            .url_allowed("http://a/")
        );
        assert!(HttpPolicy::default().url_allowed("http://a/"));
    }

    #[test]
    fn a_project_layer_only_narrows_the_users_lists() {
        let file = |project: bool, urls: &[&str], vars: &[&str]| HttpPolicy {
            urls: Some(urls.iter().map(|u| u.to_string()).collect()),
            env_vars: Some(vars.iter().map(|v| v.to_string()).collect()),
            project,
            narrow: None,
        };
        let user = file(false, &["https://a.test/*"], &["TEAM"]);
        let project = file(
            true,
            &["https://a.test/*", "https://evil.test/*"],
            &["TEAM", "GITHUB_TOKEN"],
        );
        let merged = HttpPolicy::merge([&user, &project].into_iter());
        assert!(merged.url_allowed("https://a.test/x"));
        assert!(
            !merged.url_allowed("https://evil.test/x"),
            "a project widened the URLs"
        );
        assert!(merged.env_allowed("TEAM"));
        assert!(
            !merged.env_allowed("GITHUB_TOKEN"),
            "a project widened the variables"
        );
        // A narrower project list narrows.
        let narrower = file(true, &["https://a.test/only"], &[]);
        let merged = HttpPolicy::merge([&user, &narrower].into_iter());
        assert!(!merged.url_allowed("https://a.test/x"));
        assert!(merged.url_allowed("https://a.test/only"));
        assert!(!merged.env_allowed("TEAM"));
        assert!(merged.user_names_url("https://a.test/only"));
        assert!(
            !merged
                .narrow
                .as_ref()
                .unwrap()
                .user_names_url("https://a.test/only")
        );
    }

    #[test]
    fn loopback_and_link_local_addresses_are_forbidden() {
        for ip in [
            "127.0.0.1",
            "127.8.9.1",
            "0.0.0.0",
            "::1",
            "::",
            "169.254.169.254",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(forbidden_address(ip.parse().unwrap()).is_some(), "{ip}");
        }
        for ip in ["10.0.0.1", "93.184.216.34", "2001:db8::1", "fec0::1"] {
            assert!(forbidden_address(ip.parse().unwrap()).is_none(), "{ip}");
        }
    }
}
