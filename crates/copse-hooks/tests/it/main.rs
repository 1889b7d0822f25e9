//! Engine integration tests: real processes, real files in temp dirs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

mod agent;
mod claude;
mod codex;
mod copse;
mod cursor;
mod env;
mod escape;
mod gemini;
mod persistent;
mod sandbox;
mod session;
mod spawn;
mod spine;
mod spine_guard;
mod tool_input;
mod vendor;
mod wire;
