//! Integration tests for the `copse-hooks` binary: real hook processes in temp dirs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

mod harness;

mod agent_input;
mod audit;
mod audit_verify;
mod authoring;
mod completions;
mod conventions;
mod copilot;
mod dialects;
mod docs_examples;
mod doctor;
mod explain;
mod fault_injection;
mod gate;
mod guard;
mod hook_pid;
mod host_kill;
mod hostile;
mod json_outputs;
mod lint;
mod list;
mod log_runs;
mod managed;
mod never_silent;
mod notices;
mod otel_doctor;
mod persistent;
mod protect;
mod readme;
mod replay;
mod sandbox;
mod serve;
mod shim;
mod trust;
mod ui;
mod ui_demo;
mod upgrade;
mod verbatim;
