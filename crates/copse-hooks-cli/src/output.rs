//! Formatting: JSON shapes (a stable contract) and coloured human output.

use std::io::IsTerminal;

use copse_hooks::dialect::ConfigWarning;
use copse_hooks::{HookRun, HookSummary, Listing, Verdict};
use serde_json::{Value, json};

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

/// One run as JSON.
pub fn run_json(run: &HookRun) -> Value {
    json!({
        "dialect": run.dialect.as_str(),
        "event": run.event,
        "canonical_event": run.canonical.name(),
        "command": run.command,
        "source": run.source.display().to_string(),
        "scope": run.scope.as_str(),
        "outcome": run.result.as_str(),
        "failure": run.failure.as_ref().map(|f| f.kind.as_str()),
        "failure_message": run.failure.as_ref().map(|f| f.message.clone()),
        "exit_code": run.exit_code,
        "parse_ok": run.parse_ok,
        "sandbox": run.sandbox.as_str(),
        "sandbox_blocked": run.sandbox == copse_hooks::outcome::SandboxState::Blocked,
        "leaked": run.leaked,
        "duration_ms": millis(run.duration),
        "agent_message": run.outcome.agent_message,
        "user_message": run.outcome.user_message,
    })
}

/// A verdict as JSON (the `gate --json` contract).
pub fn verdict_json(v: &Verdict) -> Value {
    json!({
        "decision": v.effective_decision().as_str(),
        "agent_message": v.agent_message,
        "user_message": v.user_message,
        "updated_input": v.updated_input,
        "input_replaced": v.input_replaced,
        "inject_context": v.inject_context,
        "tool_env_script": v.tool_env_script,
        "halt": v.halt.as_ref().map(|h| json!({"reason": h.reason})),
        "runs": v.runs.iter().map(run_json).collect::<Vec<_>>(),
    })
}

/// One discovered hook as JSON.
pub fn hook_json(h: &HookSummary) -> Value {
    json!({
        "dialect": h.dialect.as_str(),
        "event": h.event,
        "canonical_event": h.canonical.map(|c| c.name()),
        "matcher": h.matcher,
        "matcher_error": h.matcher_error,
        "command": h.command,
        "source": h.source.display().to_string(),
        "scope": h.scope.as_str(),
        "entry": h.entry,
        "supported": h.supported,
        "trusted": h.trusted,
        "trust": h.trust.as_str(),
        "enabled": h.enabled,
        "active": h.active,
        "sandboxed": h.sandboxed,
        "fail_closed": h.fail_closed,
        "timeout_ms": h.timeout_ms,
        "last_error": h.last_error,
        "scripts": h.scripts,
    })
}

/// One config warning as JSON.
pub fn warning_json(w: &ConfigWarning) -> Value {
    json!({
        "source": w.source.display().to_string(),
        "scope": w.scope.as_str(),
        "event": w.event,
        "message": w.message,
    })
}

/// A listing as JSON (the `list --json` contract).
pub fn listing_json(l: &Listing) -> Value {
    json!({
        "hooks": l.hooks.iter().map(hook_json).collect::<Vec<_>>(),
        "warnings": l.warnings.iter().map(warning_json).collect::<Vec<_>>(),
        "failure_policy": l.failure_policy,
        "auto_continue_follow_ups": l.auto_continue_follow_ups,
    })
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
