//! Formatting: JSON shapes (a stable contract) and coloured human output.

use std::io::IsTerminal;

use copse_hooks::dialect::ConfigWarning;
use copse_hooks::{HookRun, HookSummary, Listing, Verdict};
use copse_hooks_wire::output as wire;
use serde_json::Value;

pub const RED: &str = "31";
pub const GREEN: &str = "32";
pub const YELLOW: &str = "33";
pub const DIM: &str = "2";
pub const BOLD: &str = "1";

/// Whether to colour output on stdout (or stderr when `stderr` is set).
pub fn colour_enabled(stderr: bool) -> bool {
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    if stderr {
        std::io::stderr().is_terminal()
    } else {
        std::io::stdout().is_terminal()
    }
}

/// Wraps `text` in an ANSI colour when colour is on.
pub fn paint(text: &str, code: &str, stderr: bool) -> String {
    if colour_enabled(stderr) {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// Milliseconds, rounded, as in JSON.
pub fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A typed output as a JSON value (serialising these plain structs cannot fail).
fn value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// A verdict as JSON (the `gate --json` contract, `schemas/output/gate.schema.json`).
pub fn verdict_json(v: &Verdict) -> Value {
    value(&wire::GateOutput::from(v))
}

/// One discovered hook as JSON.
pub fn hook_json(h: &HookSummary) -> Value {
    value(&wire::HookOutput::from(h))
}

/// One config warning as JSON.
pub fn warning_json(w: &ConfigWarning) -> Value {
    value(&wire::WarningOutput::from(w))
}

/// A listing as JSON (the `list --json` contract, `schemas/output/list.schema.json`).
pub fn listing_json(l: &Listing) -> Value {
    value(&wire::ListOutput::from(l))
}

/// The coloured decision word.
pub fn decision_word(decision: &str) -> String {
    let code = match decision {
        "deny" | "failed" => RED,
        "ask" => YELLOW,
        "allow" => GREEN,
        _ => DIM,
    };
    paint(decision, code, false)
}

/// One line per run, indented, for human output.
pub fn run_lines(run: &HookRun) -> Vec<String> {
    let mut lines = Vec::new();
    let status = match (&run.failure, run.exit_code) {
        (Some(f), _) => format!("{} ({})", f.kind.as_str(), f.message),
        (None, Some(code)) => format!("exit {code}"),
        (None, None) => "killed".to_string(),
    };
    lines.push(format!(
        "  {:<7} {} {} {}",
        decision_word(run.result.as_str()),
        paint(&run.event, BOLD, false),
        run.command,
        paint(
            &format!(
                "[{} {} · {} · {} ms]",
                run.dialect.as_str(),
                run.scope.as_str(),
                status,
                millis(run.duration)
            ),
            DIM,
            false
        )
    ));
    lines.push(format!(
        "          {}",
        paint(&crate::workspace::display_path(&run.source), DIM, false)
    ));
    lines
}
