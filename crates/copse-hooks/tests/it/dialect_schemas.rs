//! The committed vendor config schemas (`schemas/dialects/`) must be exactly what
//! the dialects' per-entry serde structs generate, and the parser must accept what
//! the schema describes. Regenerate with
//! `UPDATE_COPSE_SCHEMA=1 cargo test -p copse-hooks --test it dialect_schemas`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use copse_hooks::dialect::spec;
use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/dialects")
}

#[test]
fn committed_vendor_schemas_are_current() {
    let dir = dir();
    let update = std::env::var_os("UPDATE_COPSE_SCHEMA").is_some_and(|v| v == "1");
    if update {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut expected = BTreeSet::new();
    for (name, schema) in spec::vendor_schemas() {
        let path = dir.join(name);
        let text = spec::schema_text(&schema);
        if update {
            std::fs::write(&path, &text).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} — generate it with UPDATE_COPSE_SCHEMA=1 cargo test -p copse-hooks --test it dialect_schemas",
                path.display()
            )
        });
        assert!(
            committed == text,
            "schemas/dialects/{name} is stale — regenerate it with UPDATE_COPSE_SCHEMA=1 cargo test -p copse-hooks --test it dialect_schemas"
        );
        let parsed: Value = serde_json::from_str(&committed).unwrap();
        assert_eq!(parsed["$schema"], "http://json-schema.org/draft-07/schema#");
        expected.insert(name.to_string());
    }
    let listed: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        listed, expected,
        "schemas/dialects/ holds a file no struct generates"
    );
}

/// The event names a schema lists under `hooks` (following a `$ref` if any).
fn schema_events(schema: &Value) -> BTreeSet<String> {
    let hooks = &schema["properties"]["hooks"];
    let hooks = match hooks["$ref"].as_str() {
        Some(r) => {
            let name = r.rsplit('/').next().unwrap();
            &schema["definitions"][name]
        }
        None => hooks,
    };
    hooks["properties"]
        .as_object()
        .expect("hooks lists events")
        .keys()
        .cloned()
        .collect()
}

#[test]
fn vendor_schemas_list_exactly_the_published_events() {
    use copse_hooks::dialect::{claude, codex, cursor, gemini};
    let by_name: std::collections::BTreeMap<&str, Value> =
        spec::vendor_schemas().into_iter().collect();
    let want = |events: &[&str]| {
        events
            .iter()
            .map(|e| e.to_string())
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(
        schema_events(&by_name["cursor-hooks.schema.json"]),
        want(&cursor::PUBLISHED_EVENTS)
    );
    if let Some(s) = by_name.get("claude-settings-hooks.schema.json") {
        assert_eq!(schema_events(s), want(&claude::PUBLISHED_EVENTS));
    }
    if let Some(s) = by_name.get("gemini-settings-hooks.schema.json") {
        let mut events = schema_events(s);
        for legacy in ["enabled", "disabled", "notifications"] {
            assert!(
                events.remove(legacy),
                "the legacy switch {legacy} is described"
            );
        }
        assert_eq!(events, want(&gemini::PUBLISHED_EVENTS));
    }
    if let Some(s) = by_name.get("codex-hooks.schema.json") {
        assert_eq!(schema_events(s), want(&codex::PUBLISHED_EVENTS));
    }
}
