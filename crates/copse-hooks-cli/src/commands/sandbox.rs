//! `copse-hooks sandbox check`: what this machine enforces, and a self-test.

use std::process::ExitCode;

use anyhow::Result;
use copse_hooks::sandbox;

use crate::args::Global;
use crate::output::{self, paint};

pub fn check(global: &Global) -> Result<ExitCode> {
    let sb = sandbox::platform_sandbox();
    let report = sandbox::self_test(&*sb);
    let passed = report.passed();
    if global.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&copse_hooks_wire::output::SandboxCheckOutput::from(
                &report
            ))?
        );
    } else {
        outln!("{report}");
        let word = if passed {
            paint("self-test passed", output::GREEN, false)
        } else {
            paint("self-test FAILED", output::RED, false)
        };
        outln!("{word}");
    }
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
