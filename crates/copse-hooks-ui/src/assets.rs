//! The page's files, embedded in the binary: nothing is fetched from elsewhere.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const CHARTS_JS: &str = include_str!("../assets/charts.js");
const APP_CSS: &str = include_str!("../assets/app.css");
const ICON: &str = include_str!("../assets/icon.svg");

/// The page, with its nonce in a `<meta>` the script reads and sends back on
/// state-changing requests (a hex nonce needs no escaping).
pub(crate) fn index(nonce: &str) -> Response {
    let body = INDEX.replace("{{NONCE}}", nonce);
    typed(body, "text/html; charset=utf-8")
}

/// One embedded file by name.
pub(crate) fn asset(name: &str) -> Response {
    let (body, mime) = match name {
        "app.js" => (APP_JS, "text/javascript; charset=utf-8"),
        "charts.js" => (CHARTS_JS, "text/javascript; charset=utf-8"),
        "app.css" => (APP_CSS, "text/css; charset=utf-8"),
        "icon.svg" => (ICON, "image/svg+xml"),
        _ => return (StatusCode::NOT_FOUND, "no such asset\n").into_response(),
    };
    typed(body.to_string(), mime)
}

fn typed(body: String, mime: &'static str) -> Response {
    let mut res = body.into_response();
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    res
}
