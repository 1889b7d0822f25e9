//! Golden wire payloads: the exact stdin every dialect sends for every event and
//! flavour, marshalled from one fixed synthetic session and compared byte for byte
//! with the committed `tests/fixtures/wire-payloads.json`.
//!
//! A change to that file is a stability decision (see docs/wire-payloads.md).
//! Regenerate it, and review the diff, with
//! `UPDATE_HOOK_PAYLOAD_SNAPSHOTS=1 cargo test -p copse-hooks --test it wire`.

use std::path::PathBuf;

use copse_hooks::CanonicalEvent;
use copse_hooks::EventPayload;
use copse_hooks::FailurePolicy;
use copse_hooks::adapter;
use copse_hooks::dialect::{Context, HookMatcher, HookSpec};
use copse_hooks::fixture;
use copse_hooks::vendor::{CLAUDE, CODEX, COPILOT, CURSOR, GEMINI};
use copse_hooks::{Dialect, Scope};
use serde_json::{Map, Value};

/// The fixed `timestamp` Gemini payloads carry in the fixture (the live value is
/// the current time; its format is tested in `gemini::`).
const GEMINI_TIMESTAMP: &str = "2026-12-02T16:30:23.105Z";

/// The fixed `timestamp` (Unix milliseconds) Copilot payloads carry in the fixture.
const COPILOT_TIMESTAMP: u64 = 1_796_309_611_563;

fn flavours(dialect: Dialect, event: CanonicalEvent) -> &'static [&'static str] {
    match (dialect, event) {
        (_, CanonicalEvent::ToolGate | CanonicalEvent::PermissionRequest) => {
            &["shell", "mcp", "read", "write"]
        }
        (_, CanonicalEvent::AfterToolUse) => &["shell", "mcp", "read", "write", "failure"],
        // Codex's Interrupt is the stop of an aborted turn.
        (Dialect::Codex, CanonicalEvent::Stop) => &["", "aborted"],
        _ => &[""],
    }
}

fn spec(dialect: Dialect, event: &str, canonical: CanonicalEvent) -> HookSpec {
    HookSpec {
        dialect,
        event: event.to_string(),
        canonical: Some(canonical),
        command: "true".into(),
        matcher_source: None,
        matcher: HookMatcher::Always,
        glob: None,
        policy: FailurePolicy::Closed,
        timeout: std::time::Duration::from_secs(1),
        source: PathBuf::from("/fixture/home/hooks.json"),
        scope: Scope::User,
        root: None,
        entry: 1,
        sandbox: true,
        run_async: false,
        network: true,
        loop_limit: None,
        options: Default::default(),
    }
}

/// Every (wire event, flavour) a dialect marshals, keyed `<canonical>/<wire>[/<flavour>]`.
fn dialect_payloads(
    dialect: Dialect,
    wire_events: &[(&str, CanonicalEvent)],
) -> Map<String, Value> {
    let session = fixture::session();
    let roots = vec![PathBuf::from(fixture::ROOT)];
    let ctx = Context {
        session: &session,
        workspace_roots: &roots,
    };
    let a = adapter(dialect);
    let mut out = Map::new();
    for (wire, canonical) in wire_events {
        let hook = spec(dialect, wire, *canonical);
        for flavour in flavours(dialect, *canonical) {
            let payload = if *flavour == "aborted" {
                EventPayload::Stop {
                    status: "aborted".into(),
                }
            } else {
                fixture::payload(
                    *canonical,
                    if flavour.is_empty() { "shell" } else { flavour },
                )
            };
            if !a.applies(&hook, &payload, &ctx) {
                continue;
            }
            let key = if flavour.is_empty() {
                format!("{}/{wire}", canonical.name())
            } else {
                format!("{}/{wire}/{flavour}", canonical.name())
            };
            let mut stdin = a.marshal(&hook, &payload, &ctx);
            if dialect == Dialect::Gemini
                && let Some(t) = stdin.get_mut("timestamp")
            {
                *t = Value::from(GEMINI_TIMESTAMP);
            }
            if dialect == Dialect::Copilot
                && let Some(t) = stdin.get_mut("timestamp")
            {
                *t = Value::from(COPILOT_TIMESTAMP);
            }
            out.insert(key, stdin);
        }
    }
    out
}

fn wired(
    published: &[&'static str],
    canonical_for: fn(&str) -> Option<CanonicalEvent>,
) -> Vec<(&'static str, CanonicalEvent)> {
    published
        .iter()
        .filter_map(|e| canonical_for(e).map(|c| (*e, c)))
        .collect()
}

fn generate() -> String {
    let mut all = Map::new();
    all.insert(
        "cursor".into(),
        Value::Object(dialect_payloads(
            Dialect::Cursor,
            &wired(CURSOR.published, CURSOR.canonical_for),
        )),
    );
    all.insert(
        "claude".into(),
        Value::Object(dialect_payloads(
            Dialect::Claude,
            &wired(CLAUDE.published, CLAUDE.canonical_for),
        )),
    );
    all.insert(
        "gemini".into(),
        Value::Object(dialect_payloads(
            Dialect::Gemini,
            &wired(GEMINI.published, GEMINI.canonical_for),
        )),
    );
    all.insert(
        "codex".into(),
        Value::Object(dialect_payloads(
            Dialect::Codex,
            &wired(CODEX.published, CODEX.canonical_for),
        )),
    );
    all.insert(
        "copilot".into(),
        Value::Object(dialect_payloads(
            Dialect::Copilot,
            &wired(COPILOT.published, COPILOT.canonical_for),
        )),
    );
    // Copse speaks canonical event names directly.
    let copse: Vec<(&str, CanonicalEvent)> = copse_hooks::dialect::copse::WIRED_EVENTS
        .iter()
        .map(|e| (e.name(), *e))
        .collect();
    all.insert(
        "copse".into(),
        Value::Object(dialect_payloads(Dialect::Copse, &copse)),
    );
    let mut text = serde_json::to_string_pretty(&Value::Object(all)).unwrap();
    text.push('\n');
    text
}

#[test]
fn wire_payloads_are_byte_identical_to_the_golden_fixture() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wire-payloads.json");
    let generated = generate();
    if std::env::var_os("UPDATE_HOOK_PAYLOAD_SNAPSHOTS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let first = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
        panic!(
            "wire payloads differ from {} (first difference at line {}):\n  committed: {:?}\n  generated: {:?}\nA payload change is a stability decision: review it, then regenerate with UPDATE_HOOK_PAYLOAD_SNAPSHOTS=1.",
            path.display(),
            first + 1,
            committed.lines().nth(first),
            generated.lines().nth(first)
        );
    }
}

#[test]
fn every_wired_event_has_at_least_one_golden_payload() {
    let fixture: Value = serde_json::from_str(&generate()).unwrap();
    for (name, published, canonical_for) in [
        ("cursor", CURSOR.published, CURSOR.canonical_for),
        ("claude", CLAUDE.published, CLAUDE.canonical_for),
        ("gemini", GEMINI.published, GEMINI.canonical_for),
        ("codex", CODEX.published, CODEX.canonical_for),
        ("copilot", COPILOT.published, COPILOT.canonical_for),
    ] {
        let keys: Vec<&String> = fixture[name].as_object().unwrap().keys().collect();
        assert!(!keys.is_empty());
        for (wire, canonical) in wired(published, canonical_for) {
            let prefix = format!("{}/{wire}", canonical.name());
            assert!(
                keys.iter().any(|k| k.starts_with(&prefix)),
                "{name} wires {wire} but no fixture payload reaches it"
            );
        }
    }
    let copse = fixture["copse"].as_object().unwrap();
    for e in copse_hooks::dialect::copse::WIRED_EVENTS {
        assert!(
            copse
                .keys()
                .any(|k| k.starts_with(&format!("{}/", e.name()))),
            "copse has no fixture payload for {}",
            e.name()
        );
    }
}
