//! Drift detection: the recorded vendor event lists against what the dialects wire
//! and against the upstream schemas kept beside the repository (`../shared`).

use std::collections::BTreeSet;
use std::path::PathBuf;

use copse_hooks::vendor::{CLAUDE, CODEX, CURSOR, Catalogue, GEMINI};

fn check_accounted(c: &Catalogue) {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for e in c.published {
        if !seen.insert(*e) {
            problems.push(format!("{e} is listed twice"));
        }
        let wired = (c.canonical_for)(e).is_some();
        let reason = (c.unsupported_reason)(e);
        match (wired, reason) {
            (true, Some(r)) => problems.push(format!("{e} is wired but also marked unsupported ({r})")),
            (false, None) => problems.push(format!(
                "{e} is published but neither wired nor in the intentionally-unsupported set: wire it or give a one-line reason"
            )),
            (false, Some(r)) if r.trim().is_empty() => problems.push(format!("{e} has an empty reason")),
            _ => {}
        }
    }
    assert!(
        problems.is_empty(),
        "{:?} event list drift:\n  {}",
        c.dialect,
        problems.join("\n  ")
    );
}

#[test]
fn every_published_cursor_event_is_wired_or_explicitly_unsupported() {
    assert_eq!(CURSOR.published.len(), 21);
    check_accounted(&CURSOR);
}

#[test]
fn every_published_claude_event_is_wired_or_explicitly_unsupported() {
    assert_eq!(CLAUDE.published.len(), 33);
    check_accounted(&CLAUDE);
}

#[test]
fn every_published_gemini_event_is_wired_or_explicitly_unsupported() {
    assert_eq!(GEMINI.published.len(), 11);
    check_accounted(&GEMINI);
}

#[test]
fn every_published_codex_event_is_wired_or_explicitly_unsupported() {
    assert_eq!(CODEX.published.len(), 12);
    check_accounted(&CODEX);
}

/// The first backquoted words after `marker` in `file` (in `../shared/spec`) containing
/// `marker`: the event lists observed from the real binaries.
fn observed_events(file: &str, marker: &str) -> Option<BTreeSet<String>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/spec")
        .join(file);
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!(
            "skipped: {} is not present beside the repository",
            path.display()
        );
        return None;
    };
    let line = text
        .lines()
        .find(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("{file}: no line with {marker:?} — did the document change?"));
    let after = &line[line.find(marker).unwrap_or(0) + marker.len()..];
    let quoted = after.split('`').nth(1).unwrap_or_default();
    Some(quoted.split_whitespace().map(str::to_string).collect())
}

#[test]
fn recorded_gemini_and_codex_lists_match_the_observed_binaries() {
    for (c, marker) in [
        (&GEMINI, "with the 11 events"),
        (&CODEX, "in Claude's shape. Events:"),
    ] {
        let Some(observed) = observed_events("real-agent-payloads.md", marker) else {
            return;
        };
        let (only_observed, only_recorded) = diff(c.published, &observed);
        assert!(
            only_observed.is_empty() && only_recorded.is_empty(),
            "{:?} event list drift against the observed binary:\n  observed, not recorded: {only_observed:?}\n  recorded, not observed: {only_recorded:?}",
            c.dialect
        );
    }
}

#[test]
fn a_name_outside_the_list_is_not_accounted() {
    assert!((GEMINI.unsupported_reason)("BeforeToolUse").is_none());
    assert!((GEMINI.canonical_for)("PreToolUse").is_none());
    assert!((CODEX.canonical_for)("BeforeTool").is_none());
    // The check above must be able to fail: an invented event has no reason.
    assert!((CURSOR.unsupported_reason)("beforeFileEdit").is_none());
    assert!((CURSOR.canonical_for)("beforeFileEdit").is_none());
    assert!((CLAUDE.unsupported_reason)("PreToolCall").is_none());
}

fn vendor_schemas() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vendor-schemas");
    dir.is_dir().then_some(dir)
}

fn schema_events(file: &str) -> Option<BTreeSet<String>> {
    let Some(dir) = vendor_schemas() else {
        eprintln!("skipped: ../shared/vendor-schemas is not present beside the repository");
        return None;
    };
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let props = v["properties"]["hooks"]["properties"]
        .as_object()
        .unwrap_or_else(|| {
            panic!("{file}: no properties.hooks.properties — did the schema's shape change?")
        });
    Some(props.keys().cloned().collect())
}

fn diff(recorded: &[&str], upstream: &BTreeSet<String>) -> (Vec<String>, Vec<String>) {
    let recorded: BTreeSet<String> = recorded.iter().map(|s| s.to_string()).collect();
    let only_upstream = upstream.difference(&recorded).cloned().collect();
    let only_recorded = recorded.difference(upstream).cloned().collect();
    (only_upstream, only_recorded)
}

#[test]
fn recorded_claude_list_matches_the_upstream_schema() {
    let Some(upstream) = schema_events("claude-code-settings.schema.json") else {
        return;
    };
    let (only_upstream, mut only_recorded) = diff(CLAUDE.published, &upstream);
    // Events newer than the saved schema are recorded from the vendor's changelog;
    // once the saved schema lists them they no longer need the exception.
    only_recorded
        .retain(|e| !copse_hooks::dialect::claude::NEWER_THAN_SAVED_SCHEMA.contains(&e.as_str()));
    assert!(
        only_upstream.is_empty() && only_recorded.is_empty(),
        "Claude Code event list drift against claude-code-settings.schema.json:\n  published upstream, not recorded: {only_upstream:?}\n  recorded, not published upstream: {only_recorded:?}"
    );
}

#[test]
fn recorded_cursor_list_covers_the_upstream_schema() {
    let Some(upstream) = schema_events("cursor-hooks.schema.json") else {
        return;
    };
    let (only_upstream, only_recorded) = diff(CURSOR.published, &upstream);
    assert!(
        only_upstream.is_empty(),
        "cursor-hooks.schema.json publishes events the recorded Cursor list lacks: {only_upstream:?}"
    );
    // The community schema is stale (Cursor 1.7's six events); the documentation's
    // newer events are expected to be missing from it. Say which, precisely.
    assert_eq!(
        only_recorded.len(),
        15,
        "recorded but not in the community schema: {only_recorded:?}"
    );
}
