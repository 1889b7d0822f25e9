//! The committed JSON Schemas (`schemas/output/`, `schemas/rpc/`) must be exactly what
//! the types generate. Regenerate with
//! `UPDATE_COPSE_SCHEMA=1 cargo test -p copse-hooks-wire --test schemas`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas")
}

fn listed(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for sub in ["output", "rpc"] {
        if let Ok(entries) = std::fs::read_dir(dir.join(sub)) {
            for e in entries {
                out.insert(format!(
                    "{sub}/{}",
                    e.unwrap().file_name().to_string_lossy()
                ));
            }
        }
    }
    out
}

#[test]
fn committed_schemas_are_current() {
    let dir = schemas_dir();
    let generated = copse_hooks_wire::schemas();
    let update = std::env::var_os("UPDATE_COPSE_SCHEMA").is_some_and(|v| v == "1");
    if update {
        for sub in ["output", "rpc"] {
            let _ = std::fs::remove_dir_all(dir.join(sub));
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
    }
    let mut expected = BTreeSet::new();
    for (name, schema) in &generated {
        let path = dir.join(name);
        let text = copse_hooks_wire::schema_text(schema);
        if update {
            std::fs::write(&path, &text).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} — generate it with UPDATE_COPSE_SCHEMA=1 cargo test -p copse-hooks-wire --test schemas",
                path.display()
            )
        });
        assert!(
            committed == text,
            "schemas/{name} is stale — regenerate with UPDATE_COPSE_SCHEMA=1 cargo test -p copse-hooks-wire --test schemas"
        );
        expected.insert(name.clone());
    }
    assert_eq!(
        listed(&dir),
        expected,
        "schemas/ holds a file no type generates"
    );
}

#[test]
fn every_output_has_a_version_and_every_method_a_params_schema() {
    for (name, schema) in copse_hooks_wire::schemas() {
        assert_eq!(
            schema["$schema"], "http://json-schema.org/draft-07/schema#",
            "{name}"
        );
        if name.starts_with("output/") {
            assert!(
                schema["properties"]["version"].is_object(),
                "{name} has no version"
            );
        }
    }
    let methods = copse_hooks_wire::rpc::method_names();
    for event in copse_hooks::CanonicalEvent::ALL {
        assert!(
            methods.contains(&format!("hooks/{}", event.name())),
            "{event}"
        );
    }
    for m in [
        "initialize",
        "shutdown",
        "exit",
        "session/open",
        "session/update",
        "session/close",
        "queue/message",
        "queue/drain",
        "hooks/list",
        "hooks/test",
        "spine/log",
        "spine/show",
        "doctor",
        "$/cancelRequest",
    ] {
        assert!(methods.contains(&m.to_owned()), "{m}");
    }
}

#[test]
fn params_reject_unknown_fields_and_name_missing_ones() {
    use copse_hooks_wire::rpc::ToolGateParams;
    let err = serde_json::from_value::<ToolGateParams>(
        serde_json::json!({"sessionId": "s", "tool": "t", "bogus": 1}),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("bogus"), "{err}");
    let err = serde_json::from_value::<ToolGateParams>(serde_json::json!({"tool": "t"}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("sessionId"), "{err}");
}
