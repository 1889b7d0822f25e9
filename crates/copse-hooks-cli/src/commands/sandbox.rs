//! `copse-hooks sandbox check`: what this machine enforces, and a self-test.

use std::process::ExitCode;

use anyhow::Result;
use copse_hooks::sandbox::{self, CheckResult};
use serde_json::json;

use crate::cli::Global;
use crate::output::{self, paint};

pub fn check(global: &Global) -> Result<ExitCode> {
    let sb = sandbox::platform_sandbox();
    let status = sb.status();
    let report = sandbox::self_test(&*sb);
    let passed = report.passed();
    if global.json {
        let checks: Vec<_> = report
            .checks
            .iter()
            .map(|c| {
                let (result, detail) = match &c.result {
                    CheckResult::Passed => ("pass", String::new()),
                    CheckResult::Failed(d) => ("fail", d.clone()),
                    CheckResult::Skipped(d) => ("skip", d.clone()),
                };
                json!({"name": c.name, "result": result, "detail": detail})
            })
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "mechanism": status.mechanism,
                "abi": status.abi,
                "filesystem_rules": status.filesystem_rules,
                "network_rules": status.network_rules,
                "enforced": status.enforcement.is_enforced(),
                "enforcement": status.enforcement.to_string(),
                "network_false_enforced": status.enforcement_without_network.is_enforced(),
                "detection": status.detection.to_string(),
                "layers": status.layers.iter().map(|l| json!({
                    "name": l.name,
                    "enforced": l.enforced,
                    "detail": l.detail,
                })).collect::<Vec<_>>(),
                "self_test_passed": passed,
                "checks": checks,
                "version": 1,
            }))?
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
