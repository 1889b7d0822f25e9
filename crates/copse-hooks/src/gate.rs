//! Merge: many hook outcomes to one verdict.
//!
//! Outcomes are merged in configured order, never completion order: the strictest
//! decision wins (`Allow < Ask < Deny`), messages are joined with a blank line,
//! `updated_input` objects are shallow-merged in order (later keys win) and the first
//! halt request wins. A hook can only tighten: "allow" means "no hook objects".

use crate::outcome::{HookRun, Verdict};

/// Merges runs (already in configured order) into a verdict.
pub fn merge(runs: Vec<HookRun>) -> Verdict {
    let mut verdict = Verdict::default();
    for run in &runs {
        let o = &run.outcome;
        if let Some(d) = o.decision {
            verdict.decision = Some(verdict.decision.map_or(d, |cur| cur.max(d)));
        }
        if verdict.halt.is_none() {
            verdict.halt.clone_from(&o.halt);
        }
        join(&mut verdict.agent_message, o.agent_message.as_deref());
        join(&mut verdict.user_message, o.user_message.as_deref());
        join(&mut verdict.inject_context, o.inject_context.as_deref());
        if let Some(script) = o
            .tool_env_script
            .as_deref()
            .filter(|s| !s.trim().is_empty())
        {
            let acc = verdict.tool_env_script.get_or_insert_with(String::new);
            acc.push_str(script);
            if !script.ends_with('\n') {
                acc.push('\n');
            }
        }
        if let Some(update) = &o.updated_input
            && o.replace_input
        {
            verdict.updated_input = Some(update.clone());
            verdict.input_replaced = true;
        } else if let Some(update) = &o.updated_input {
            let merged = verdict.updated_input.get_or_insert_with(Default::default);
            for (k, v) in update {
                merged.insert(k.clone(), v.clone());
            }
        }
    }
    // Permission updates come with an allow: a verdict that denies applies none.
    if verdict.decision != Some(crate::outcome::Decision::Deny) {
        for o in runs.iter().map(|r| &r.outcome) {
            if let Some(updates) = o.updated_permissions.as_ref().filter(|u| !u.is_empty()) {
                verdict
                    .updated_permissions
                    .get_or_insert_with(Vec::new)
                    .extend(updates.iter().cloned());
            }
        }
    }
    verdict.runs = runs;
    verdict
}

fn join(acc: &mut Option<String>, next: Option<&str>) {
    let Some(next) = next.filter(|s| !s.trim().is_empty()) else {
        return;
    };
    match acc {
        Some(cur) => {
            cur.push_str("\n\n");
            cur.push_str(next);
        }
        None => *acc = Some(next.to_string()),
    }
}
