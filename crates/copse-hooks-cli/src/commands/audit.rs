//! `copse-hooks audit verify`: checks the audit store's hash chain.
//!
//! Reads `$COPSE_DIR/spine.db` read-only (nothing is migrated, pruned or written).
//! Exit 0 when every chained run is as it was recorded, 1 when one was edited,
//! removed, reordered or added (the first is named), 2 when the store cannot be read.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use copse_hooks::EngineConfig;
use copse_hooks::spine::{ChainReport, Spine};
use copse_hooks_wire::output::AuditVerifyOutput;

use crate::output::{self, clean, paint};

/// Exit status when the chain is broken.
const BROKEN_EXIT: u8 = 1;

/// `audit verify [--json]`.
pub fn verify(json: bool) -> Result<ExitCode> {
    let path = EngineConfig::process_copse_dir().join("spine.db");
    let report = Spine::open_read_only(&path)
        .and_then(|spine| spine.verify_chain())
        .with_context(|| format!("cannot verify the audit chain of {}", path.display()))?;
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&AuditVerifyOutput::from(&report))?
        );
    } else {
        print_report(&report, &path);
    }
    Ok(if report.is_intact() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(BROKEN_EXIT)
    })
}

/// `seq N (run ID)`, the run id escaped (it is text from the store).
fn run_name(seq: u64, run_id: Option<&str>) -> String {
    match run_id {
        Some(id) => format!("seq {seq} (run {})", clean(id)),
        None => format!("seq {seq}"),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn print_report(r: &ChainReport, path: &Path) {
    let store = output::path(path);
    match (&r.first_problem, r.chained_from_seq) {
        (Some(p), _) => {
            outln!(
                "{} in {store}: {} was {}: {}",
                paint("audit chain broken", output::RED, false),
                run_name(p.seq, p.run_id.as_deref()),
                p.kind,
                p.detail
            );
            outln!(
                "  intact before it: {}",
                plural(r.runs_checked, "run", "runs")
            );
        }
        (None, None) => {
            outln!(
                "{} in {store}: the store predates it; the next recorded run starts it",
                paint("no audit chain yet", output::YELLOW, false),
            );
        }
        (None, Some(_)) => {
            outln!(
                "{} in {store}: {} checked",
                paint("audit chain intact", output::GREEN, false),
                plural(r.runs_checked, "run", "runs")
            );
        }
    }
    if let Some(h) = &r.head {
        outln!(
            "  head: {}, hash {}",
            run_name(h.seq, Some(&h.run_id)),
            h.hash
        );
    }
    if let Some(id) = &r.chain_id {
        outln!("  chain: {}", clean(id));
    }
    if let Some(seq) = r.pruned_through_seq {
        outln!("  pruned by retention: the runs up to seq {seq}");
    }
    if r.predating_chain > 0 {
        outln!(
            "  recorded before the chain: {} (not checked)",
            plural(r.predating_chain, "run", "runs")
        );
    }
}
