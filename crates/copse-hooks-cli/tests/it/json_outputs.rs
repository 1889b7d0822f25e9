//! The `--json` outputs that were once built by hand (`lint`, `trust`, `untrust`,
//! `enable`/`disable`, `list --untrusted-preview`, `sandbox check`, `daemon status`,
//! `install`, `uninstall`):
//! each is a typed struct of copse-hooks-wire, carries `version`, matches its published
//! schema in `schemas/output/`, and is snapshot-tested.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{Env, redact};

fn schema(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../schemas/output")
        .join(format!("{name}.schema.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Checks `v` against the subset of JSON Schema (draft-07) that schemars writes:
/// `type`, `properties`, `required`, `additionalProperties`, `items`, `$ref`,
/// `anyOf`/`oneOf`, `const`, `enum`. Returns every mismatch, with its JSON path.
fn mismatches(v: &Value, s: &Value, root: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/definitions/");
        return mismatches(v, &root["definitions"][name], root, at, out);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = s.get(key).and_then(Value::as_array) {
            let fits = alts.iter().any(|a| {
                let mut e = Vec::new();
                mismatches(v, a, root, at, &mut e);
                e.is_empty()
            });
            if !fits {
                out.push(format!("{at}: {v} fits none of {key}"));
            }
            return;
        }
    }
    if let Some(c) = s.get("const")
        && c != v
    {
        out.push(format!("{at}: {v} is not {c}"));
    }
    if let Some(ty) = s.get("type") {
        let types: Vec<&str> = match ty {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let actual = match v {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_u64() || n.is_i64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        let ok = types.contains(&actual) || (actual == "integer" && types.contains(&"number"));
        if !ok {
            out.push(format!("{at}: {actual} where the schema says {ty}"));
            return;
        }
    }
    if let Value::Object(obj) = v {
        let props = s.get("properties").and_then(Value::as_object);
        for req in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !obj.contains_key(req.as_str().unwrap()) {
                out.push(format!("{at}: missing required {req}"));
            }
        }
        for (k, val) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(ps) => mismatches(val, ps, root, &format!("{at}.{k}"), out),
                None => match s.get("additionalProperties") {
                    Some(Value::Bool(false)) | None if props.is_some() => {
                        out.push(format!("{at}: {k} is not in the schema"))
                    }
                    Some(extra @ Value::Object(_)) => {
                        mismatches(val, extra, root, &format!("{at}.{k}"), out)
                    }
                    _ => {}
                },
            }
        }
    }
    if let (Value::Array(items), Some(item)) = (v, s.get("items")) {
        for (i, x) in items.iter().enumerate() {
            mismatches(x, item, root, &format!("{at}[{i}]"), out);
        }
    }
}

fn assert_fits(v: &Value, name: &str) {
    let s = schema(name);
    let mut out = Vec::new();
    mismatches(v, &s, &s, "$", &mut out);
    assert!(out.is_empty(), "{name}: {out:#?}\n{v:#}");
    assert_eq!(v["version"], 1, "{name}");
}

/// The checker itself: a wrong shape is caught.
#[test]
fn the_schema_checker_catches_a_wrong_shape() {
    let s = schema("untrust");
    let mut out = Vec::new();
    mismatches(
        &json!({"version": 1, "untrusted": 3, "bogus": true}),
        &s,
        &s,
        "$",
        &mut out,
    );
    assert_eq!(out.len(), 3, "{out:#?}");
}

fn project(env: &Env) {
    env.script("ws/.cursor/p.sh", "cat >/dev/null");
    env.project_cursor(
        &json!({"version": 1, "hooks": {
            "beforeShellExecution": [{"command": ".cursor/p.sh"}],
            "bogusEvent": [{"command": "true"}],
        }})
        .to_string(),
    );
    env.write(
        "ws/.copse/hooks.json",
        &json!({"version": 1, "hooks": {"toolGate": [{"command": "true", "sandbox": false}]}})
            .to_string(),
    );
}

fn pretty(env: &Env, v: &Value) -> String {
    redact(&serde_json::to_string_pretty(v).unwrap(), &env.root())
}

#[test]
fn trust_untrust_enable_and_preview_print_their_typed_shapes() {
    let env = Env::new();
    project(&env);

    let preview = env
        .cmd()
        .args(["--json", "list", "--untrusted-preview"])
        .run()
        .success()
        .json();
    assert_fits(&preview, "untrusted-preview");
    assert_eq!(preview["unsandboxed"].as_array().unwrap().len(), 1);
    // What would run once trusted, each hook saying where it stands today.
    for h in preview["hooks"].as_array().unwrap() {
        assert_eq!(
            (&h["trusted"], &h["trust"]),
            (&json!(false), &json!("untrusted"))
        );
    }
    insta::assert_snapshot!("json_untrusted_preview", pretty(&env, &preview));

    let trust = env.cmd().args(["--json", "trust"]).run().success().json();
    assert_fits(&trust, "trust");
    insta::assert_snapshot!("json_trust", pretty(&env, &trust));

    let untrust = env.cmd().args(["--json", "untrust"]).run().success().json();
    assert_fits(&untrust, "untrust");
    assert_eq!(untrust["was_trusted"], true);
    insta::assert_snapshot!("json_untrust", pretty(&env, &untrust));

    for (cmd, on) in [("enable", true), ("disable", false)] {
        let v = env.cmd().args(["--json", cmd]).run().success().json();
        assert_fits(&v, "enable");
        assert_eq!(v["enabled"], on);
    }
    let v = env.cmd().args(["--json", "enable"]).run().success();
    insta::assert_snapshot!("json_enable", v.redacted());
}

#[test]
fn lint_json_is_typed_and_fits_its_schema() {
    let env = Env::new();
    project(&env);
    let settings: PathBuf = env.write(
        "ws/settings.json",
        r#"{"cursorHooksEnabled": "yes", "trustedWorkspace": []}"#,
    );
    let r = env
        .cmd()
        .args(["--json", "lint", ".cursor/hooks.json", ".copse/hooks.json"])
        .arg(&settings)
        .run();
    assert_eq!(r.out.status.code(), Some(1));
    let v = r.json();
    assert_fits(&v, "lint");
    assert_eq!(v["errors"], 2, "{v:#}");
    insta::assert_snapshot!("json_lint", pretty(&env, &v));
}

#[test]
fn sandbox_check_json_is_typed_and_fits_its_schema() {
    let env = Env::new();
    let r = env.cmd().args(["--json", "sandbox", "check"]).run();
    let v = r.json();
    assert_fits(&v, "sandbox-check");
    // Whether this machine enforces the sandbox decides the exit code, never the shape.
    let passed = v["self_test_passed"].as_bool().unwrap();
    assert_eq!(r.out.status.code(), Some(if passed { 0 } else { 1 }));
    assert!(!v["checks"].as_array().unwrap().is_empty());
    assert!(!v["layers"].as_array().unwrap().is_empty());
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    insta::assert_snapshot!("json_sandbox_check_keys", format!("{keys:?}"));
}

#[test]
fn daemon_status_json_is_typed_and_fits_its_schema() {
    let env = Env::new();
    let r = env.cmd().args(["--json", "daemon", "status"]).run();
    assert_eq!(r.out.status.code(), Some(3), "stopped exits 3");
    let v = r.json();
    assert_fits(&v, "daemon-status");
    assert_eq!(v["status"], "stopped");
    insta::assert_snapshot!("json_daemon_status", r.redacted());
}

#[test]
fn daemon_start_and_stop_json_are_typed_and_fit_their_schemas() {
    let env = Env::new();
    let started = env
        .cmd()
        .args(["--json", "daemon", "start"])
        .run()
        .success()
        .json();
    assert_fits(&started, "daemon-start");
    assert_eq!(
        (&started["running"], &started["started"]),
        (&json!(true), &json!(true))
    );
    let pid = started["pid"].as_u64().expect("the started daemon's pid");
    assert!(started["socket"].as_str().unwrap().ends_with("daemon.sock"));
    let again = env
        .cmd()
        .args(["--json", "daemon", "start"])
        .run()
        .success()
        .json();
    assert_fits(&again, "daemon-start");
    assert_eq!(again["started"], false, "already running: {again}");
    assert_eq!(again["pid"], pid);
    let stopped = env
        .cmd()
        .args(["--json", "daemon", "stop"])
        .run()
        .success()
        .json();
    assert_fits(&stopped, "daemon-stop");
    assert_eq!(stopped["running"], false);
    assert_eq!(stopped["stopped"], pid);
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    insta::assert_snapshot!(
        "json_daemon_start_stop_keys",
        format!("{:?}\n{:?}", keys(&started), keys(&stopped))
    );
}

#[test]
fn install_and_uninstall_json_are_typed_and_fit_their_schemas() {
    let env = Env::new();
    let r = env
        .cmd()
        .args(["--json", "install", "--agent", "claude"])
        .run()
        .success();
    let v = r.json();
    assert_fits(&v, "install");
    assert_eq!(v["agent"], "claude");
    assert_eq!(v["hooks_enabled"], true);
    assert!(!v["events"].as_array().unwrap().is_empty());
    let r = env
        .cmd()
        .args(["--json", "uninstall", "--agent", "claude"])
        .run()
        .success();
    let v = r.json();
    assert_fits(&v, "uninstall");
    insta::assert_snapshot!("json_uninstall", r.redacted());
}
