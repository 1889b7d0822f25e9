//! Canonical tool inputs are typed: a malformed input is an error, never a coerced
//! value shown to hooks.

use copse_hooks::ToolResult;
use copse_hooks::{EventPayload, SessionIdentity, ToolCall};
use serde_json::{Value, json};

use crate::fx::{Fx, obj};

#[test]
fn malformed_inputs_of_every_canonical_tool_are_errors_and_no_hook_sees_them() {
    let fx = Fx::builder().writable("ws").build();
    let marker = fx.path("ws/seen");
    fx.copse_user(json!({
        "toolGate": [{"command": format!("cat >> {}; echo >> {}", marker.display(), marker.display())}],
        "afterToolUse": [{"command": format!("cat >> {}", marker.display())}],
    }));
    let session = fx.session_as(SessionIdentity::new("conv-typed"));

    let cases: &[(&str, Value, &str, &str)] = &[
        (
            "run_shell",
            json!({"command": 5}),
            "command",
            "must be a string (got a number)",
        ),
        (
            "run_shell",
            json!({"command": ["rm", "-rf", "/"]}),
            "command",
            "must be a string (got an array)",
        ),
        ("run_shell", json!({}), "command", "is missing"),
        (
            "run_shell",
            json!({"command": "ls", "cwd": 1}),
            "cwd",
            "must be a string (got a number)",
        ),
        (
            "read_file",
            json!({"path": null}),
            "path",
            "must be a string (got null)",
        ),
        ("read_file", json!({}), "path", "is missing"),
        (
            "write_file",
            json!({"path": "a", "content": {"x": 1}}),
            "content",
            "must be a string (got an object)",
        ),
        ("write_file", json!({"content": "x"}), "path", "is missing"),
        (
            "str_replace",
            json!({"path": "a", "old_str": 1}),
            "old_str",
            "must be a string (got a number)",
        ),
        (
            "str_replace",
            json!({"path": "a", "new_string": true}),
            "new_string",
            "must be a string (got a boolean)",
        ),
        (
            "delete_file",
            json!({"path": 7}),
            "path",
            "must be a string (got a number)",
        ),
        (
            "search_code",
            json!({"path": "src"}),
            "query|pattern",
            "is missing",
        ),
        (
            "search_code",
            json!({"query": 1}),
            "query",
            "must be a string (got a number)",
        ),
        (
            "explore",
            json!({"description": "d"}),
            "prompt|task|query",
            "is missing",
        ),
        (
            "explore",
            json!({"prompt": ["x"]}),
            "prompt",
            "must be a string (got an array)",
        ),
    ];
    for (tool, input, field, problem) in cases {
        let err = session
            .try_gate_tool(ToolCall::new(*tool, obj(input.clone())))
            .expect_err(&format!("{tool} {input} was accepted"));
        assert_eq!(
            (err.tool.as_str(), err.field.as_str(), err.problem.as_str()),
            (*tool, *field, *problem)
        );
        // The plain API denies it, without running a hook.
        let v = session.gate_tool(ToolCall::new(*tool, obj(input.clone())));
        assert_eq!(v.effective_decision(), copse_hooks::Decision::Deny);
        assert!(v.runs.is_empty());
        let after = session.try_fire(EventPayload::AfterToolUse({
            let mut result = ToolResult::new(*tool, obj(input.clone()), String::new());
            result.is_error = false;
            result.duration_ms = 1;
            result.tool_call_id = "c".into();
            result.response = None;
            result
        }));
        assert!(after.is_err(), "{tool} {input}: afterToolUse accepted");
    }
    session.wait_idle();
    assert!(!marker.exists(), "a hook saw a malformed input");

    // Well-formed inputs, with unknown extra fields, pass through untouched.
    let v = session
        .try_gate_tool(ToolCall::new(
            "run_shell",
            obj(json!({"command": "ls", "x_extra": [1, 2]})),
        ))
        .unwrap();
    assert_eq!(v.runs.len(), 1);
    let seen = std::fs::read_to_string(&marker).unwrap();
    assert!(
        seen.contains(r#""x_extra":[1,2]"#) || seen.contains("x_extra"),
        "{seen}"
    );
    // MCP tools have no declared shape.
    assert!(
        session
            .try_gate_tool(ToolCall::new("mcp__srv__do", obj(json!({"anything": 1}))))
            .is_ok()
    );
}

/// `ToolCall::new` takes a `serde_json::Value`: an object is the input, `null` an empty
/// input, and any other value a malformed input that is denied before any hook runs.
#[test]
fn a_tool_call_from_a_json_value_that_is_not_an_object_is_denied_without_running_a_hook() {
    let fx = Fx::builder().writable("ws").build();
    let marker = fx.path("ws/seen");
    fx.copse_user(json!({
        "toolGate": [{"command": format!("cat >> {}; echo >> {}", marker.display(), marker.display())}],
    }));
    let session = fx.session_as(SessionIdentity::new("conv-value"));

    for (input, kind) in [
        (json!("ls -la"), "a string"),
        (json!(["ls"]), "an array"),
        (json!(7), "a number"),
        (json!(true), "a boolean"),
    ] {
        let call = ToolCall::new("run_shell", input);
        let err = call.validate().unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("run_shell input must be a JSON object (got {kind})")
        );
        let v = session.gate_tool(call);
        assert_eq!(v.effective_decision(), copse_hooks::Decision::Deny);
        assert_eq!(
            v.agent_message.as_deref(),
            Some(
                format!("malformed tool input: run_shell input must be a JSON object (got {kind})")
                    .as_str()
            )
        );
        assert!(v.runs.is_empty());
    }
    assert!(!marker.exists(), "no hook saw a malformed input");

    // An object runs the hook, and sees exactly that object.
    let v = session.gate_tool(ToolCall::new("run_shell", json!({"command": "ls"})));
    assert_eq!(v.runs.len(), 1);
    let seen = std::fs::read_to_string(&marker).unwrap();
    assert!(seen.contains(r#""command":"ls""#), "{seen}");

    // `null` is an empty input: run_shell requires a command, so it is malformed too,
    // but for the field, not for the shape.
    let err = ToolCall::new("run_shell", Value::Null)
        .validate()
        .unwrap_err();
    assert_eq!(err.to_string(), "run_shell input: \"command\" is missing");
}
