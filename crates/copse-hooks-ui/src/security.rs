//! What every request must satisfy, and the headers every response carries.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The header that carries the token (required on state-changing requests).
pub const TOKEN_HEADER: &str = "x-copse-token";

/// The Content-Security-Policy: only this origin's own files; no inline script or
/// style, no frames, no plugins, no form posts elsewhere.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// A random 128-bit secret, in hex.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// Sixteen bytes from the OS's random source.
    pub fn random() -> Result<Token, String> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
        Ok(Token(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// The hex text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Compares in time independent of where the first difference is.
    fn matches(&self, given: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), given.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

/// The checks' configuration.
pub(crate) struct Guard {
    hosts: [String; 3],
    origins: [String; 3],
    token: Token,
}

impl Guard {
    pub(crate) fn new(port: u16, token: Token) -> Guard {
        let hosts = [
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ];
        let origins = hosts.clone().map(|h| format!("http://{h}"));
        Guard {
            hosts,
            origins,
            token,
        }
    }
}

fn refuse(status: StatusCode, why: &str) -> Response {
    let mut res = (status, format!("{why}\n")).into_response();
    harden(res.headers_mut());
    res
}

fn query_token(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
}

/// The middleware: loopback `Host`, the token, same-origin state changes.
pub(crate) async fn check(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
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
    let header_token = req
        .headers()
        .get(TOKEN_HEADER)
        .and_then(|v| v.to_str().ok());
    let state_changing = !matches!(*req.method(), Method::GET | Method::HEAD);
    let given = if state_changing {
        header_token
    } else {
        header_token.or_else(|| query_token(req.uri().query()))
    };
    if !given.is_some_and(|t| guard.token.matches(t)) {
        return refuse(
            StatusCode::FORBIDDEN,
            "refused: a valid token is required (open the address copse-hooks ui printed)",
        );
    }
    if state_changing {
        let origin_ok = match req.headers().get(header::ORIGIN) {
            None => true,
            Some(o) => o
                .to_str()
                .is_ok_and(|o| guard.origins.iter().any(|ok| ok == o)),
        };
        if !origin_ok {
            return refuse(StatusCode::FORBIDDEN, "refused: cross-origin request");
        }
    }
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
