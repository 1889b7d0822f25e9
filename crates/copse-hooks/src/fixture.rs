//! One fixed synthetic session and a payload for every event flavour.
//!
//! The golden wire-payload fixture and the dry-run tester both marshal from these
//! values, so what a hook author sees in `copse-hooks test` is exactly what the
//! stability fixture pins.

use serde_json::{Map, Value, json};

use crate::event::{
    CanonicalEvent, Compaction, EventPayload, FileEdit, HostIdentity, ModelIdentity, ModelParam,
    SessionIdentity, ToolCall, ToolResult,
};

/// The fixture's workspace root.
pub const ROOT: &str = "/fixture/workspace";

/// The fixture's session identity (with a model, so the model fields are captured).
pub fn session() -> SessionIdentity {
    SessionIdentity {
        conversation_id: "conv-fixture-1".into(),
        generation_id: "gen-fixture-1".into(),
        model: Some(ModelIdentity {
            model: "claude-sonnet-4".into(),
            model_id: "anthropic/claude-sonnet-4".into(),
            model_params: vec![
                ModelParam {
                    id: "context".into(),
                    value: "1m".into(),
                },
                ModelParam {
                    id: "thinking".into(),
                    value: "high".into(),
                },
            ],
        }),
        host: HostIdentity {
            transcript_path: Some("/fixture/home/.claude/projects/workspace/conv-fixture-1.jsonl".into()),
            permission_mode: Some("default".into()),
            host_version: Some("1.7.2".into()),
            user_email: Some("dev@example.com".into()),
            last_assistant_message: Some("Done: the test passes.".into()),
            agent_id: Some("agent-fixture-1".into()),
            loop_count: None,
            remote: None,
            agent_transcript_path: Some(
                "/fixture/home/.claude/projects/workspace/conv-fixture-1/subagents/agent-fixture-1.jsonl".into(),
            ),
        },
    }
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The tool-call flavours of `toolGate` and `afterToolUse`.
pub const TOOL_FLAVOURS: [&str; 4] = ["shell", "mcp", "read", "write"];

/// The fixture tool call of a flavour (with a fixed tool use id).
pub fn tool_call(flavour: &str) -> ToolCall {
    let call = tool_call_inner(flavour);
    let id = format!("toolu_fixture_{flavour}");
    call.with_tool_use_id(id)
        .with_agent_message(format!("Running the {flavour} step next."))
}

fn tool_call_inner(flavour: &str) -> ToolCall {
    match flavour {
        "mcp" => ToolCall::new(
            "mcp__example__run",
            object(json!({"query": "weather", "limit": 3})),
        ),
        "read" => {
            let mut c = ToolCall::new(
                "read_file",
                object(json!({"path": format!("{ROOT}/README.md")})),
            );
            c.file_content = Some("synthetic file bytes\n".into());
            c
        }
        "write" => ToolCall::new(
            "str_replace",
            object(json!({
                "path": format!("{ROOT}/src/example.ts"),
                "old_string": "let x = 1;",
                "new_string": "const x = 1;"
            })),
        ),
        _ => ToolCall::new(
            "run_shell",
            object(json!({"command": "echo \"hello from a hook\""})),
        ),
    }
}

/// The fixture tool result of a flavour (`write` is an edit; `failure` makes it a
/// failed call).
pub fn tool_result(flavour: &str) -> ToolResult {
    match flavour {
        "mcp" => ToolResult {
            tool: "mcp__example__run".into(),
            input: object(json!({"query": "weather", "limit": 3})),
            output: "{\"result\":\"sunny\"}".into(),
            is_error: false,
            duration_ms: 108,
            tool_call_id: "call-mcp-1".into(),
            response: None,
        },
        "read" => ToolResult {
            tool: "read_file".into(),
            input: object(json!({"path": format!("{ROOT}/README.md")})),
            output: "README contents\n".into(),
            is_error: false,
            duration_ms: 15,
            tool_call_id: "call-read-1".into(),
            response: None,
        },
        "write" => ToolResult {
            tool: "str_replace".into(),
            input: object(json!({
                "path": format!("{ROOT}/src/example.ts"),
                "old_string": "let x = 1;",
                "new_string": "const x = 1;"
            })),
            output: "The file was edited.".into(),
            is_error: false,
            duration_ms: 9,
            tool_call_id: "toolu_fixture_write".into(),
            response: None,
        },
        "failure" => ToolResult {
            tool: "run_shell".into(),
            input: object(json!({"command": "exit 1"})),
            output: "Error: command failed".into(),
            is_error: true,
            duration_ms: 21,
            tool_call_id: "call-shell-failed-1".into(),
            response: None,
        },
        _ => ToolResult {
            tool: "run_shell".into(),
            input: object(json!({"command": "echo \"hello from a hook\""})),
            output: "hello from a hook\n".into(),
            is_error: false,
            duration_ms: 42,
            tool_call_id: "call-shell-1".into(),
            response: None,
        },
    }
}

/// The fixture payload of a canonical event (for tool events, `flavour` picks the
/// tool: `shell`, `mcp`, `read`, `write`, and `failure` for `afterToolUse`).
pub fn payload(event: CanonicalEvent, flavour: &str) -> EventPayload {
    match event {
        CanonicalEvent::ToolGate => EventPayload::ToolGate(tool_call(flavour)),
        CanonicalEvent::AfterToolUse => EventPayload::AfterToolUse(tool_result(flavour)),
        CanonicalEvent::BeforeSubmitPrompt => EventPayload::BeforeSubmitPrompt {
            prompt: "Fix the failing test.".into(),
        },
        CanonicalEvent::AfterFileEdit => EventPayload::AfterFileEdit {
            file_path: format!("{ROOT}/src/example.ts"),
            edits: vec![FileEdit {
                old_string: "let x = 1;".into(),
                new_string: "const x = 1;".into(),
            }],
        },
        CanonicalEvent::Stop => EventPayload::Stop {
            status: "completed".into(),
        },
        CanonicalEvent::SubagentStart => EventPayload::SubagentStart {
            subagent_type: "explore".into(),
        },
        CanonicalEvent::SubagentStop => EventPayload::SubagentStop {
            subagent_type: "explore".into(),
            status: "completed".into(),
        },
        CanonicalEvent::SessionStart => EventPayload::SessionStart { first_turn: true },
        CanonicalEvent::SessionEnd => EventPayload::SessionEnd {
            reason: "completed".into(),
            duration_ms: 60_000,
        },
        CanonicalEvent::PreCompact => EventPayload::PreCompact(Compaction {
            trigger: "auto".into(),
            context_usage_percent: 91.5,
            context_tokens: 183_000,
            context_window_size: 200_000,
            message_count: 48,
            messages_to_compact: 40,
            is_first_compaction: true,
        }),
        CanonicalEvent::AfterAgentResponse => EventPayload::AfterAgentResponse {
            text: "Done: the test passes.".into(),
        },
        CanonicalEvent::AfterAgentThought => EventPayload::AfterAgentThought {
            text: "The assertion compares the wrong field.".into(),
            duration_ms: Some(850),
        },
        CanonicalEvent::Notification => EventPayload::Notification {
            message: "Claude needs your permission to use Bash".into(),
            title: Some("Permission needed".into()),
            notification_type: "permission_prompt".into(),
            details: json!({"tool_name": "run_shell", "command": "rm -rf build"}),
        },
        CanonicalEvent::PermissionRequest => EventPayload::PermissionRequest(tool_call(flavour)),
    }
}

/// The flavour that best fits a wire event name (`beforeMCPExecution` → `mcp`, …).
pub fn flavour_for_wire_event(wire_event: &str) -> &'static str {
    let e = wire_event.to_ascii_lowercase();
    if e.contains("mcp") {
        "mcp"
    } else if e.contains("failure") {
        "failure"
    } else if e.contains("readfile") {
        "read"
    } else if e.contains("shell") {
        "shell"
    } else if e == "posttooluse" {
        "read"
    } else {
        "shell"
    }
}
