//! The settings file's JSON Schema (`schemas/settings.schema.json`) is generated from
//! the settings types and names every key the engine reads.

use std::path::{Path, PathBuf};

use copse_hooks::{FailurePolicy, Settings, TrustedWorkspace};
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The committed schema must be exactly what the types generate. Regenerate with
/// `UPDATE_COPSE_SCHEMA=1 cargo test -p copse-hooks --test it settings`.
#[test]
fn committed_settings_schema_is_current() {
    let path = repo_root().join("schemas/settings.schema.json");
    let generated = copse_hooks::settings_schema_text();
    if std::env::var_os("UPDATE_COPSE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} — generate it with UPDATE_COPSE_SCHEMA=1 cargo test -p copse-hooks --test it settings",
            path.display()
        )
    });
    assert!(
        committed == generated,
        "schemas/settings.schema.json is stale — regenerate it with UPDATE_COPSE_SCHEMA=1 cargo test -p copse-hooks --test it settings"
    );
}

#[test]
fn the_settings_schema_names_every_key_a_full_settings_file_has() {
    let schema = copse_hooks::settings_schema();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(schema["additionalProperties"], json!(false));
    let props = schema["properties"].as_object().unwrap();

    // Every field set, then saved as the engine writes it: each key it writes is one
    // the schema describes.
    let dir = tempfile::tempdir().unwrap();
    let mut s = Settings::default();
    s.cursor_hooks_enabled = true;
    s.trusted_workspaces = vec![
        TrustedWorkspace::Path("/w/a".into()),
        TrustedWorkspace::Pinned {
            path: "/w/b".into(),
            configs: [("/w/b/.cursor/hooks.json".into(), None)].into(),
            scripts: Some([("/w/b/hook.sh".into(), Some("ab".repeat(32)))].into()),
        },
    ];
    s.require_sandbox = true;
    s.sandbox_writable_paths = vec!["~/.cache/hooks".into()];
    s.sandbox_allowed_sockets = vec!["/run/user/1000/bus".into()];
    s.spine = Some(false);
    s.retention =
        serde_json::from_value(json!({"maxRuns": 1, "maxAgeDays": 2, "maxBytes": 3})).unwrap();
    s.redact_secrets = Some(false);
    s.failure_policy = [("claude".to_string(), FailurePolicy::Open)].into();
    s.auto_continue_follow_ups = true;
    s.otel = serde_json::from_value(json!({"endpoint": "http://collector:4318"})).unwrap();
    s.guard = Some(copse_hooks::GuardMode::Observe);
    s.refused_configs = Some(copse_hooks::RefusedConfigs::Skip);
    let path = dir.path().join("settings.json");
    s.save(&path).unwrap();
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let written = written.as_object().unwrap();
    assert_eq!(written.len(), 13, "{written:?}");
    for key in written.keys() {
        assert!(props.contains_key(key), "the schema misses {key}");
    }
    // And nothing else but `$schema`.
    let mut extra: Vec<&String> = props.keys().filter(|k| !written.contains_key(*k)).collect();
    extra.sort();
    assert_eq!(extra, ["$schema"]);
    let retention = &schema["definitions"]["RetentionSettings"];
    assert_eq!(retention["additionalProperties"], json!(false));
    let mut keys: Vec<&String> = retention["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    keys.sort();
    assert_eq!(keys, ["maxAgeDays", "maxBytes", "maxRuns"]);
}

#[test]
fn a_settings_file_may_name_its_schema_without_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(
        &path,
        r#"{"$schema": "../schemas/settings.schema.json", "cursorHooksEnabled": true, "bogus": 1}"#,
    )
    .unwrap();
    let s = Settings::load(&path).unwrap();
    assert!(s.cursor_hooks_enabled);
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(s.warnings[0].contains("\"bogus\""), "{:?}", s.warnings);
    // A rewrite (what `enable` or `trust` does) keeps it.
    s.save(&path).unwrap();
    let again: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(again["$schema"], "../schemas/settings.schema.json");
    assert_eq!(again["bogus"], 1);
}
