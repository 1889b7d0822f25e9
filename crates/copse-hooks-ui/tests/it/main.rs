//! The web page's tests: the HTTP API with real requests, and the page in a real
//! headless Chromium.

mod api;
mod browser;
mod support;
