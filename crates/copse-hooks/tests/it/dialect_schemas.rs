//! The committed vendor config schemas (`schemas/dialects/`) must be exactly what
//! the dialects' per-entry serde structs generate, and the parser must accept what
//! the schema describes. Regenerate with
//! `UPDATE_COPSE_SCHEMA=1 cargo test -p copse-hooks --test it dialect_schemas`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use copse_hooks::dialect::{schemas, spec};
use serde_json::Value;

use crate::fx::Fx;

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
    for (name, schema) in schemas::vendor_schemas() {
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
        schemas::vendor_schemas().into_iter().collect();
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

/// What lint says about one file, by the fixture's engine.
fn lint(fx: &Fx, path: &Path) -> Vec<String> {
    fx.engine()
        .lint(&[path.to_path_buf()])
        .problems
        .into_iter()
        .map(|p| p.message)
        .collect()
}

/// Lint's unknown-key check reads the same structs as the parser: every documented
/// Claude handler field (`if`, `asyncRewake`, `args`, `shell`, `statusMessage`, the
/// `http` fields) is known, a typo gets a did-you-mean, and `once` (valid only in
/// skill frontmatter) is named.
#[test]
fn lint_knows_every_field_the_claude_structs_declare() {
    let fx = Fx::new();
    let path = fx.write_json(
        "ws/.claude/settings.json",
        &serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "true", "if": "Bash(git push:*)", "statusMessage": "checking",
             "asyncRewake": true, "timeout": 5},
            {"type": "command", "command": "guard", "args": ["--strict"], "shell": "bash"},
            {"type": "http", "url": "http://127.0.0.1:9/hook", "headers": {"Authorization": "Bearer $TOKEN"},
             "allowedEnvVars": ["TOKEN"]},
            {"type": "command", "comand": "x", "command": "y"},
            {"type": "command", "command": "z", "once": true}
        ]}, {"matchers": "Edit", "hooks": [{"type": "command", "command": "fmt"}]}]}}),
    );
    let messages = lint(&fx, &path);
    let unknown: Vec<&String> = messages
        .iter()
        .filter(|m| m.contains("unknown key"))
        .collect();
    assert_eq!(unknown.len(), 3, "{messages:#?}");
    assert!(
        unknown[0].contains("\"comand\"") && unknown[0].contains("did you mean \"command\"?"),
        "{unknown:?}"
    );
    assert!(unknown[1].contains("\"once\""), "{unknown:?}");
    assert!(
        unknown[2].contains("group 2: unknown key \"matchers\"")
            && unknown[2].contains("did you mean \"matcher\"?"),
        "{unknown:?}"
    );
}

/// What the schema calls a valid file parses with no warning, and what the parser
/// warns about (a mistyped field) the schema rejects too: one source of truth.
#[test]
fn a_valid_file_by_the_schema_parses_without_warnings() {
    use copse_hooks::dialect::{Adapter, claude::Claude, codex, gemini};
    let by_name: std::collections::BTreeMap<&str, Value> =
        schemas::vendor_schemas().into_iter().collect();
    let claude = serde_json::json!({"disableAllHooks": false, "enabledPlugins": {"x@y": true},
        "hooks": {"PreToolUse": [{"matcher": "Edit, Write", "hooks": [
            {"type": "command", "command": "fmt", "timeout": 5, "if": "Edit(src/**)", "async": true}]}]}});
    let gemini = serde_json::json!({"hooksConfig": {"enabled": true, "disabled": ["x"]},
        "hooks": {"BeforeTool": [{"matcher": "write_file", "sequential": true, "hooks": [
            {"type": "command", "command": "fmt", "name": "fmt", "timeout": 5000}]}]}});
    let codex = serde_json::json!({"description": "d", "hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": "guard", "timeout": 5, "statusMessage": "s"}]}]}});
    let cursor = serde_json::json!({"version": 1, "hooks": {"beforeShellExecution": [
        {"command": "guard", "matcher": "push", "failClosed": false, "timeout": 5}],
        "afterFileEdit": [{"command": "fmt", "glob": ["*.rs"]}]}});
    let fx = Fx::new();
    let cases: [(&str, &Value, &str); 4] = [
        (
            "claude-settings-hooks.schema.json",
            &claude,
            "ws/.claude/settings.json",
        ),
        (
            "gemini-settings-hooks.schema.json",
            &gemini,
            "ws/.gemini/settings.json",
        ),
        ("codex-hooks.schema.json", &codex, "ws/.codex/hooks.json"),
        ("cursor-hooks.schema.json", &cursor, "ws/.cursor/hooks.json"),
    ];
    for (name, doc, rel) in cases {
        let schema = &by_name[name];
        assert_eq!(schema_errors(schema, doc), Vec::<String>::new(), "{name}");
        let path = fx.write_json(rel, doc);
        let text = std::fs::read_to_string(&path).unwrap();
        let root = Some(fx.ws());
        let parsed = match name {
            "claude-settings-hooks.schema.json" => {
                Claude.parse(&text, &path, copse_hooks::Scope::Project, root.as_deref())
            }
            "gemini-settings-hooks.schema.json" => {
                gemini::parse::parse(&text, &path, copse_hooks::Scope::Project, root.as_deref())
            }
            "codex-hooks.schema.json" => {
                codex::parse::parse(&text, &path, copse_hooks::Scope::Project, root.as_deref())
            }
            _ => copse_hooks::dialect::cursor::Cursor.parse(
                &text,
                &path,
                copse_hooks::Scope::Project,
                root.as_deref(),
            ),
        };
        assert!(parsed.warnings.is_empty(), "{name}: {:?}", parsed.warnings);
        assert!(!parsed.hooks.is_empty(), "{name}");
    }
    // A mistyped timeout: the parser warns and the schema rejects it.
    let bad =
        serde_json::json!({"hooks": {"beforeShellExecution": [{"command": "g", "timeout": "5"}]}});
    assert!(!schema_errors(&by_name["cursor-hooks.schema.json"], &bad).is_empty());
    let path = fx.write_json("ws/.cursor/hooks.json", &bad);
    let parsed = copse_hooks::dialect::cursor::Cursor.parse(
        &std::fs::read_to_string(&path).unwrap(),
        &path,
        copse_hooks::Scope::Project,
        None,
    );
    assert_eq!(parsed.warnings.len(), 1, "{:?}", parsed.warnings);
    // An unknown event: the parser warns and the schema rejects it.
    let bad = serde_json::json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "g"}]}],
        "PreToolUze": []}});
    assert!(!schema_errors(&by_name["claude-settings-hooks.schema.json"], &bad).is_empty());
}

/// A small draft-07 subset validator: `type`, `properties`, `additionalProperties`,
/// `required`, `items`, `anyOf`, `enum`, `minimum`, `minLength`, `$ref`.
fn schema_errors(root: &Value, doc: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    validate(root, root, doc, "$", &mut errors);
    errors
}

fn validate(root: &Value, schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.rsplit('/').next().unwrap();
        return validate(root, &root["definitions"][name], v, at, errors);
    }
    if let Some(any) = schema["anyOf"].as_array() {
        let ok = any.iter().any(|s| {
            let mut e = Vec::new();
            validate(root, s, v, at, &mut e);
            e.is_empty()
        });
        if !ok {
            errors.push(format!("{at}: matches no alternative"));
        }
        return;
    }
    let type_ok = |t: &str| match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "null" => v.is_null(),
        _ => true,
    };
    let ok = match &schema["type"] {
        Value::String(t) => type_ok(t),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(type_ok),
        _ => true,
    };
    if !ok {
        errors.push(format!("{at}: wrong type"));
        return;
    }
    if let Some(values) = schema["enum"].as_array()
        && !v.is_null()
        && !values.contains(v)
    {
        errors.push(format!("{at}: not one of {values:?}"));
    }
    if let (Some(min), Some(n)) = (schema["minimum"].as_f64(), v.as_f64())
        && n < min
    {
        errors.push(format!("{at}: below {min}"));
    }
    if let Some(obj) = v.as_object() {
        let props = schema["properties"].as_object();
        for (k, item) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(s) => validate(root, s, item, &format!("{at}.{k}"), errors),
                None if schema["additionalProperties"] == Value::Bool(false) => {
                    errors.push(format!("{at}: unknown property {k}"));
                }
                None => {}
            }
        }
        for r in schema["required"].as_array().into_iter().flatten() {
            if !obj.contains_key(r.as_str().unwrap()) {
                errors.push(format!("{at}: missing {r}"));
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, item) in arr.iter().enumerate() {
            validate(root, items, item, &format!("{at}[{i}]"), errors);
        }
    }
}
