//! Who may talk to the server, and the headers every response carries.
//!
//! This module owns the page's credentials. Nothing reusable ever leaves the
//! process: the address handed to a browser opener (whose argv any local process
//! can read through `/proc`) or printed for the user carries only a one-time sign-in
//! code. `GET /?code=…` spends the code — once, within its short life — and answers
//! with a random session secret in an `HttpOnly; SameSite=Strict` cookie and a
//! redirect to the clean address, so the code is already dead by the time anyone
//! else could read it from the opener's or the browser's argv. Every other request
//! must carry that cookie.
//!
//! State-changing requests (the tester, trust, untrust) must in addition carry a
//! per-page nonce in `X-Copse-Nonce`: one is minted for each load of the page (a
//! `<meta>` in it, or `GET /api/nonce`) and is valid only with the session it was
//! minted for, so a request that did not come from a page this session loaded is
//! refused even when it has the cookie. They must also not name a foreign `Origin`.
//!
//! Every request must name a loopback `Host`, so a DNS-rebinding page served under
//! another name cannot reach the server.
//!
//! Secrets are looked up by their SHA-256, never compared byte by byte, so a lookup's
//! timing says nothing about the secret.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use copse_hooks::sha256_hex;

/// The header that carries the page's nonce on state-changing requests.
pub const NONCE_HEADER: &str = "x-copse-nonce";

/// How long a one-time sign-in code lives unless [`crate::UiOptions`] says otherwise.
pub const CODE_TTL: Duration = Duration::from_secs(60);

/// The Content-Security-Policy: only this origin's own files; no inline script or
/// style, no frames, no plugins, no form posts elsewhere.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// Nonces kept per session: one per page load; the oldest is forgotten first.
const NONCES_PER_SESSION: usize = 64;
/// Codes kept (live or spent, until they expire), so a flood of minted codes cannot
/// grow memory without bound.
const MAX_CODES: usize = 1024;
/// Sessions kept: one per spent code; the oldest is forgotten first.
const MAX_SESSIONS: usize = 256;

/// `n` bytes from the OS's random source, in hex.
fn random_hex(n: usize) -> Result<String, String> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A secret's lookup key.
fn key(secret: &str) -> String {
    sha256_hex(secret.as_bytes())
}

struct Code {
    expires: Instant,
    spent: bool,
}

struct Session {
    created: Instant,
    nonces: VecDeque<String>,
}

/// Why a sign-in code was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CodeRefusal {
    /// It was spent before.
    Spent,
    /// Its life is over.
    Expired,
    /// This server never minted it (or forgot it long ago).
    Unknown,
}

/// A signed-in browser: the lookup key of its session secret.
#[derive(Debug, Clone)]
pub(crate) struct SessionKey(String);

/// The credentials: sign-in codes, sessions and their nonces.
pub(crate) struct Auth {
    port: u16,
    ttl: Duration,
    codes: Mutex<HashMap<String, Code>>,
    sessions: Mutex<HashMap<String, Session>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave these maps half-updated in a way
    // that grants access: every update is one insert or remove.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Auth {
    pub(crate) fn new(port: u16, ttl: Duration) -> Auth {
        Auth {
            port,
            ttl,
            codes: Mutex::new(HashMap::new()),
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// The cookie's name: one per port, because browsers share a host's cookies
    /// across its ports and two servers must not overwrite each other's session.
    pub(crate) fn cookie_name(&self) -> String {
        format!("copse-hooks-{}", self.port)
    }

    /// A fresh one-time sign-in code.
    pub(crate) fn mint_code(&self) -> Result<String, String> {
        let code = random_hex(16)?;
        let now = Instant::now();
        let mut codes = lock(&self.codes);
        codes.retain(|_, c| c.expires > now);
        if codes.len() >= MAX_CODES {
            return Err(format!(
                "{MAX_CODES} sign-in codes are live; wait for some to expire"
            ));
        }
        codes.insert(
            key(&code),
            Code {
                expires: now + self.ttl,
                spent: false,
            },
        );
        Ok(code)
    }

    /// Spends `code` and opens a session; the answer is the session secret.
    pub(crate) fn redeem(&self, code: &str) -> Result<Result<String, CodeRefusal>, String> {
        let now = Instant::now();
        {
            let mut codes = lock(&self.codes);
            let Some(c) = codes.get_mut(&key(code)) else {
                return Ok(Err(CodeRefusal::Unknown));
            };
            if c.spent {
                return Ok(Err(CodeRefusal::Spent));
            }
            if c.expires <= now {
                return Ok(Err(CodeRefusal::Expired));
            }
            c.spent = true;
        }
        let secret = random_hex(32)?;
        let mut sessions = lock(&self.sessions);
        if sessions.len() >= MAX_SESSIONS
            && let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, s)| s.created)
                .map(|(k, _)| k.clone())
        {
            sessions.remove(&oldest);
        }
        sessions.insert(
            key(&secret),
            Session {
                created: now,
                nonces: VecDeque::new(),
            },
        );
        Ok(Ok(secret))
    }

    /// The session a request's cookies name, if any is live.
    fn session(&self, headers: &HeaderMap) -> Option<SessionKey> {
        let name = self.cookie_name();
        let sessions = lock(&self.sessions);
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .filter(|(n, _)| *n == name)
            .map(|(_, secret)| key(secret))
            .find(|k| sessions.contains_key(k))
            .map(SessionKey)
    }

    /// A new nonce for one load of the page in `session`.
    pub(crate) fn mint_nonce(&self, session: &SessionKey) -> Result<String, String> {
        let nonce = random_hex(16)?;
        let mut sessions = lock(&self.sessions);
        let s = sessions
            .get_mut(&session.0)
            .ok_or_else(|| "the session ended".to_string())?;
        if s.nonces.len() >= NONCES_PER_SESSION {
            s.nonces.pop_front();
        }
        s.nonces.push_back(key(&nonce));
        Ok(nonce)
    }

    fn nonce_ok(&self, session: &SessionKey, nonce: Option<&str>) -> bool {
        let Some(nonce) = nonce else { return false };
        let k = key(nonce);
        lock(&self.sessions)
            .get(&session.0)
            .is_some_and(|s| s.nonces.contains(&k))
    }
}

/// The checks' configuration.
pub(crate) struct Guard {
    hosts: [String; 3],
    origins: [String; 3],
    auth: Arc<Auth>,
}

impl Guard {
    pub(crate) fn new(port: u16, auth: Arc<Auth>) -> Guard {
        let hosts = [
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ];
        let origins = hosts.clone().map(|h| format!("http://{h}"));
        Guard {
            hosts,
            origins,
            auth,
        }
    }
}

fn refuse(status: StatusCode, why: &str) -> Response {
    let mut res = (status, format!("{why}\n")).into_response();
    harden(res.headers_mut());
    res
}

/// A small HTML page for a browser that followed a dead sign-in link.
fn refusal_page(title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"referrer\" content=\"no-referrer\"><title>copse-hooks: {title}</title></head>\
         <body><h1>{title}</h1><p>{body}</p></body></html>\n"
    );
    let mut res = (StatusCode::FORBIDDEN, html).into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    harden(res.headers_mut());
    res
}

fn query_param<'a>(query: Option<&'a str>, name: &str) -> Option<&'a str> {
    query?.split('&').find_map(|pair| {
        pair.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('='))
    })
}

/// `GET /?code=…`: spend the code, set the session cookie, go to the clean address.
fn sign_in(auth: &Auth, code: &str) -> Response {
    let secret = match auth.redeem(code) {
        Ok(Ok(secret)) => secret,
        Ok(Err(why)) => {
            let (title, body) = match why {
                CodeRefusal::Spent => (
                    "this link was already used",
                    "Each address copse-hooks ui prints or opens signs in once. If you did not \
                     just open it yourself, another program may have: stop copse-hooks ui \
                     (Ctrl-C) and start it again. Otherwise press Enter in the terminal where \
                     copse-hooks ui runs for a new link.",
                ),
                CodeRefusal::Expired => (
                    "this link has expired",
                    "A sign-in link works only for a short time after copse-hooks ui made it. \
                     Press Enter in the terminal where copse-hooks ui runs for a new link.",
                ),
                CodeRefusal::Unknown => (
                    "this link is not valid",
                    "This server did not make this sign-in link. Open the address that \
                     copse-hooks ui printed, or press Enter in its terminal for a new link.",
                ),
            };
            return refusal_page(title, body);
        }
        Err(e) => {
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("cannot make a session secret: {e}"),
            );
        }
    };
    let cookie = format!(
        "{}={secret}; HttpOnly; SameSite=Strict; Path=/",
        auth.cookie_name()
    );
    let mut res = StatusCode::SEE_OTHER.into_response();
    let h = res.headers_mut();
    // The fragment (`#/runs`) survives: a Location without one keeps the request's.
    h.insert(header::LOCATION, HeaderValue::from_static("/"));
    match HeaderValue::from_str(&cookie) {
        Ok(v) => {
            h.insert(header::SET_COOKIE, v);
        }
        Err(e) => {
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("cannot set the session cookie: {e}"),
            );
        }
    }
    harden(h);
    res
}

/// The middleware: loopback `Host`; sign-in by code; the session cookie; for state
/// changes the page's nonce and no foreign `Origin`.
pub(crate) async fn check(
    State(guard): State<Arc<Guard>>,
    mut req: Request,
    next: Next,
) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_ascii_lowercase);
    if !host.is_some_and(|h| guard.hosts.contains(&h)) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            "refused: the Host header must name this loopback server",
        );
    }
    let state_changing = !matches!(*req.method(), Method::GET | Method::HEAD);
    // Only a GET spends a code: a HEAD (a link checker's probe) must not.
    if req.method() == Method::GET
        && req.uri().path() == "/"
        && let Some(code) = query_param(req.uri().query(), "code")
    {
        return sign_in(&guard.auth, code);
    }
    // Fetch metadata: another site of this host (any other port of 127.0.0.1 is the
    // same site, so its requests carry the cookie) may at most navigate to the page;
    // it may not embed or fetch what the server answers.
    let site = req
        .headers()
        .get("sec-fetch-site")
        .map(|v| v.to_str().unwrap_or(""));
    let page_navigation = !state_changing
        && req.uri().path() == "/"
        && req
            .headers()
            .get("sec-fetch-mode")
            .is_some_and(|v| v.as_bytes() == b"navigate");
    let from_here = matches!(site, None | Some("same-origin" | "none"));
    if !from_here && !page_navigation {
        return refuse(StatusCode::FORBIDDEN, "refused: cross-origin request");
    }
    let Some(session) = guard.auth.session(req.headers()) else {
        return refuse(
            StatusCode::FORBIDDEN,
            "refused: not signed in (open the address copse-hooks ui printed; each address \
             signs in once)",
        );
    };
    if state_changing {
        let origin_ok = match req.headers().get(header::ORIGIN) {
            None => true,
            Some(o) => o
                .to_str()
                .is_ok_and(|o| guard.origins.iter().any(|ok| ok == o)),
        };
        // A browser says where a request came from; only the page itself may change
        // anything (clients that are not browsers send neither header).
        let site_ok = matches!(site, None | Some("same-origin"));
        if !origin_ok || !site_ok {
            return refuse(StatusCode::FORBIDDEN, "refused: cross-origin request");
        }
        let nonce = req
            .headers()
            .get(NONCE_HEADER)
            .and_then(|v| v.to_str().ok());
        if !guard.auth.nonce_ok(&session, nonce) {
            return refuse(
                StatusCode::FORBIDDEN,
                "refused: a change must come from a loaded copse-hooks page (the \
                 X-Copse-Nonce header is missing or not this session's)",
            );
        }
    }
    req.extensions_mut().insert(session);
    let mut res = next.run(req).await;
    harden(res.headers_mut());
    res
}

/// The headers every response carries.
fn harden(h: &mut HeaderMap) {
    let set = |h: &mut HeaderMap, name: &'static str, value: &'static str| {
        h.insert(name, HeaderValue::from_static(value));
    };
    set(h, "content-security-policy", CSP);
    set(h, "x-content-type-options", "nosniff");
    set(h, "referrer-policy", "no-referrer");
    set(h, "x-frame-options", "DENY");
    set(h, "cross-origin-opener-policy", "same-origin");
    set(h, "cross-origin-resource-policy", "same-origin");
    if !h.contains_key(header::CACHE_CONTROL) {
        set(h, "cache-control", "no-store");
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is a failed test

    use super::*;

    #[test]
    fn a_code_signs_in_once() {
        let auth = Auth::new(1, CODE_TTL);
        let code = auth.mint_code().unwrap();
        assert!(auth.redeem(&code).unwrap().is_ok());
        assert_eq!(auth.redeem(&code).unwrap(), Err(CodeRefusal::Spent));
        assert_eq!(auth.redeem("nope").unwrap(), Err(CodeRefusal::Unknown));
    }

    #[test]
    fn an_expired_code_stays_refused() {
        let auth = Auth::new(1, Duration::ZERO);
        let code = auth.mint_code().unwrap();
        assert_eq!(auth.redeem(&code).unwrap(), Err(CodeRefusal::Expired));
        assert_eq!(auth.redeem(&code).unwrap(), Err(CodeRefusal::Expired));
    }

    #[test]
    fn a_nonce_belongs_to_its_session() {
        let auth = Auth::new(7, CODE_TTL);
        let a = auth.redeem(&auth.mint_code().unwrap()).unwrap().unwrap();
        let b = auth.redeem(&auth.mint_code().unwrap()).unwrap().unwrap();
        let cookie = |s: &str| {
            let mut h = HeaderMap::new();
            h.insert(
                header::COOKIE,
                HeaderValue::from_str(&format!("other=1; copse-hooks-7={s}")).unwrap(),
            );
            h
        };
        let sa = auth.session(&cookie(&a)).unwrap();
        let sb = auth.session(&cookie(&b)).unwrap();
        assert!(auth.session(&cookie("forged")).is_none());
        let n = auth.mint_nonce(&sa).unwrap();
        assert!(auth.nonce_ok(&sa, Some(&n)));
        assert!(!auth.nonce_ok(&sb, Some(&n)));
        assert!(!auth.nonce_ok(&sa, None));
        assert!(!auth.nonce_ok(&sa, Some("0")));
    }
}
