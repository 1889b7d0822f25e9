//! Integration tests for the `copse-hooks` binary: real hook processes in temp dirs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

mod harness;

mod audit;
mod dialects;
mod fault_injection;
mod gate;
mod host_kill;
mod hostile;
mod lint;
mod list;
mod protect;
mod replay;
mod sandbox;
mod shim;
mod trust;
mod ui;
