//! Notices: why hooks did or did not run, on stderr and in `--json` (`notices`).

use copse_hooks::{Engine, Notice, NoticeKind, Verdict};
use copse_hooks_wire::output::NoticeOutput;

use crate::output::{self, clean, paint};

/// A notice made by the CLI itself (not the engine).
pub fn cli(kind: &'static str, message: String, hint: Option<String>) -> NoticeOutput {
    NoticeOutput::new(kind, message, hint)
}

/// One engine notice in its `--json` shape.
pub fn to_json(n: &Notice) -> NoticeOutput {
    NoticeOutput::from(n)
}

/// Prints JSON notices on stderr, escaped, one line each plus a hint line.
pub fn print(notices: &[NoticeOutput]) {
    for n in notices {
        let kind = n.kind.as_str();
        let word = match kind {
            "hook_failed"
            | "sandbox_refusal"
            | "config_changed"
            | "workspace_untrusted"
            | "hooks_off"
            | "recursion_guard"
            | "config_warning"
            | "timeout_units"
            | "sandbox_unenforced"
            | "audit_store"
            | "records_lost" => paint("warning", output::YELLOW, true),
            _ => paint("note", output::DIM, true),
        };
        let at = match (kind, n.source.as_deref()) {
            ("config_warning" | "timeout_units", Some(source)) => {
                format!("{}: ", output::path(std::path::Path::new(source)))
            }
            _ => String::new(),
        };
        errln!("{word}[{kind}]: {at}{}", clean(&n.message));
        if let Some(h) = n.hint.as_deref() {
            errln!("  {} {}", paint("hint:", output::BOLD, true), clean(h));
        }
    }
}

/// Everything that explains a verdict: the engine's reasons before the runs, the
/// session's notices, then one per failed run.
pub fn for_verdict(
    engine: &Engine,
    before: &[Notice],
    session: &[Notice],
    verdict: &Verdict,
) -> Vec<NoticeOutput> {
    let mut out: Vec<NoticeOutput> = before.iter().map(to_json).collect();
    out.extend(
        session
            .iter()
            .filter(|n| n.kind != NoticeKind::FirstRun || !verdict.runs.is_empty())
            .map(to_json),
    );
    out.extend(
        verdict
            .runs
            .iter()
            .filter_map(|r| engine.explain_run(r))
            .map(|n| to_json(&n)),
    );
    out
}

/// After the audit store flushed: every warning it raised and, when records were
/// lost, exactly how many and why. Printed on stderr and returned for `--json`.
pub fn spine_report(engine: &Engine) -> Vec<NoticeOutput> {
    let mut out = Vec::new();
    if let Some(spine) = engine.spine() {
        // A directory or file whose wider mode was tightened to the user's alone.
        for n in spine.take_notices() {
            out.push(cli("private_mode", n, None));
        }
    }
    let warnings = engine.spine_warnings();
    for w in &warnings {
        out.push(cli("audit_store", w.clone(), None));
    }
    if let Some(spine) = engine.spine() {
        let lost = spine.stats().dropped;
        if lost > 0 {
            let reason = warnings
                .first()
                .cloned()
                .unwrap_or_else(|| "the audit store's queue was full".to_string());
            out.push(cli(
                "records_lost",
                format!(
                    "{lost} hook run record{} of this command {} not recorded: {reason}",
                    if lost == 1 { "" } else { "s" },
                    if lost == 1 { "was" } else { "were" }
                ),
                Some("`copse-hooks doctor` shows the audit store's state".to_string()),
            ));
        }
    }
    out
}
