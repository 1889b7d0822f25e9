//! Engine integration tests: real processes, real files in temp dirs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

mod agent;
mod claude;
mod codex;
mod copilot;
mod copse;
mod cursor;
mod dialect_schemas;
mod discovery;
mod env;
mod escape;
mod fx;
mod gemini;
mod http;
mod isolation;
mod managed;
mod otel;
mod otel_gate;
mod persistent;
mod sandbox;
mod session;
mod settings;
mod spawn;
mod spine;
mod spine_chain;
mod spine_guard;
mod tool_input;
mod vendor;
mod wire;
