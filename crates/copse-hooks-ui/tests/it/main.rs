//! The web page's tests: the HTTP API with real requests, and the page in a real
//! headless Chromium.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

mod api;
mod author;
mod browser;
mod support;
