//! The Cursor dialect end to end: `hooks.json` files in a temp home and workspace,
//! real hook processes, and the engine's verdicts — the fields and environment
//! Cursor promises its hooks, and the answers it honours.

use copse_hooks::FailurePolicy;
use copse_hooks::McpServer;
use copse_hooks::{Decision, Engine, EventPayload, SessionIdentity, ToolCall};
use serde_json::{Value, json};

use crate::fx::{Fx, obj, stdin_of, verdict};

fn identity() -> SessionIdentity {
    let mut id = SessionIdentity::new("conv-1");
    id.host.host_version = Some("1.7.2".into());
    id.host.user_email = Some("dev@example.com".into());
    id.host.transcript_path = Some("/t/conv-1.jsonl".into());
    id
}

#[test]
fn a_dual_agent_script_detects_cursor_by_cursor_version() {
    let fx = Fx::new();
    // Like scripts that serve both agents: answer in Cursor's shape under Cursor.
    let hook = fx.script(
        "home/.cursor/hooks/guard.sh",
        r#"input=$(cat)
if [ -n "$CURSOR_VERSION" ] || echo "$input" | jq -e 'has("cursor_version")' >/dev/null; then
  echo '{"permission":"deny","agent_message":"blocked (cursor)"}'
else
  echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"blocked (claude)"}}'
fi"#,
    );
    fx.cursor_user(json!({"beforeShellExecution": [{"command": hook}]}));
    let v = fx.session().gate_tool(ToolCall::new(
        "run_shell",
        obj(json!({"command": "curl x"})),
    ));
    assert_eq!(v.effective_decision(), Decision::Deny);
    assert_eq!(v.agent_message.as_deref(), Some("blocked (cursor)"));
}

#[test]
fn identity_fields_and_their_environment_variables() {
    let fx = Fx::new();
    let out = fx.at("env.txt");
    fx.cursor_user(json!({"beforeShellExecution": [{"command": format!(
        "cat >/dev/null; echo \"$CURSOR_VERSION|$CURSOR_USER_EMAIL|$CURSOR_TRANSCRIPT_PATH\" > {out}"
    )}]}));
    let v = fx
        .session_as(identity())
        .gate_tool(ToolCall::new("run_shell", obj(json!({"command": "ls"}))));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "1.7.2|dev@example.com|/t/conv-1.jsonl\n"
    );
    let stdin = stdin_of(&v, 0);
    assert_eq!(stdin["cursor_version"], json!("1.7.2"));
    assert_eq!(stdin["user_email"], json!("dev@example.com"));
    assert_eq!(stdin["transcript_path"], json!("/t/conv-1.jsonl"));

    // Unknown to the host: the version is still present, the others are null.
    let v = fx
        .session()
        .gate_tool(ToolCall::new("run_shell", obj(json!({"command": "ls"}))));
    let stdin = stdin_of(&v, 0);
    assert!(
        stdin["cursor_version"]
            .as_str()
            .unwrap()
            .starts_with("copse-hooks/")
    );
    assert_eq!(stdin["user_email"], Value::Null);
    assert_eq!(stdin["transcript_path"], Value::Null);
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .starts_with("copse-hooks/")
    );
}

#[test]
fn session_start_context_and_env_reach_the_verdict_and_later_hooks() {
    let fx = Fx::new();
    let out = fx.at("later.txt");
    fx.cursor_user(json!({
        "sessionStart": [{"command": r#"cat >/dev/null; echo '{"additional_context":"Use pnpm, not npm.","env":{"TEAM":"infra"}}'"#}],
        "beforeShellExecution": [{"command": format!("cat >/dev/null; echo \"$TEAM\" > {out}")}],
    }));
    let session = fx.session();
    let v = verdict(session.fire(EventPayload::SessionStart { first_turn: true }));
    assert_eq!(v.inject_context.as_deref(), Some("Use pnpm, not npm."));
    session.gate_tool(ToolCall::new("run_shell", obj(json!({"command": "ls"}))));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "infra\n");
}

#[test]
fn pre_tool_use_sends_cursor_tool_input_and_tool_use_id_and_maps_updates_back() {
    let fx = Fx::new();
    fx.cursor_user(json!({"preToolUse": [{"matcher": "Write", "command": r#"input=$(cat)
f=$(echo "$input" | jq -r .tool_input.file_path)
id=$(echo "$input" | jq -r .tool_use_id)
printf '{"permission":"allow","updated_input":{"file_path":"%s.bak","content":"%s"}}' "$f" "$id""#}]}));
    let call = ToolCall::new(
        "write_file",
        obj(json!({"path": "notes.txt", "content": "hi"})),
    )
    .with_tool_use_id("toolu_42");
    let v = fx.session().gate_tool(call);
    let stdin = stdin_of(&v, 0);
    let file = fx.ws().join("notes.txt").display().to_string();
    assert_eq!(
        stdin["tool_input"],
        json!({"file_path": file, "content": "hi"})
    );
    assert_eq!(stdin["tool_use_id"], json!("toolu_42"));
    assert!(
        v.input_replaced,
        "Cursor's updated_input replaces the input"
    );
    assert_eq!(
        v.updated_input,
        Some(obj(
            json!({"path": format!("{file}.bak"), "content": "toolu_42"})
        ))
    );
}

#[test]
fn mcp_read_and_subagent_detail_fields() {
    let fx = Fx::new();
    fx.cursor_user(json!({
        "beforeMCPExecution": [{"command": "cat >/dev/null"}],
        "beforeReadFile": [{"command": "cat >/dev/null"}],
        "subagentStart": [{"command": "cat >/dev/null"}],
    }));
    let session = fx.session();
    let mut call = ToolCall::new("mcp__github__create_issue", obj(json!({"title": "x"})));
    call.mcp_server = Some(McpServer {
        url: Some("https://mcp.example/github".into()),
        command: None,
    });
    let v = session.gate_tool(call);
    assert_eq!(stdin_of(&v, 0)["url"], json!("https://mcp.example/github"));
    let mut call = ToolCall::new("mcp__local__run", obj(json!({})));
    call.mcp_server = Some(McpServer {
        url: None,
        command: Some("npx local-mcp".into()),
    });
    let v = session.gate_tool(call);
    assert_eq!(stdin_of(&v, 0)["command"], json!("npx local-mcp"));

    let mut call = ToolCall::new("read_file", obj(json!({"path": "a.txt"})));
    call.file_content = Some("x".into());
    let v = session.gate_tool(call);
    assert_eq!(stdin_of(&v, 0)["attachments"], json!([]));

    let v = verdict(session.fire(EventPayload::SubagentStart {
        subagent_type: "explore".into(),
    }));
    let stdin = stdin_of(&v, 0);
    assert!(stdin["subagent_id"].as_str().unwrap().starts_with("agent-"));
    assert_eq!(stdin["parent_conversation_id"], json!("conv-1"));
    assert_eq!(stdin["is_parallel_worker"], json!(false));
}

#[test]
fn failure_policy_open_restores_fail_open_but_not_over_fail_closed() {
    let fx = Fx::new();
    fx.cursor_user(json!({"beforeShellExecution": [
        {"command": "cat >/dev/null; exit 1"},
    ]}));
    let config = fx
        .config()
        .failure_policy("cursor", FailurePolicy::Open)
        .build();
    let engine = Engine::new(config.clone());
    let v = engine
        .session(SessionIdentity::new("c"))
        .gate_tool(ToolCall::new("run_shell", obj(json!({"command": "ls"}))));
    assert_eq!(v.effective_decision(), Decision::Allow);

    // An explicit `failClosed: true` is the hook author's choice: it stays closed.
    fx.cursor_user(json!({"beforeShellExecution": [
        {"command": "cat >/dev/null; exit 1", "failClosed": true},
    ]}));
    let v = Engine::new(config)
        .session(SessionIdentity::new("c"))
        .gate_tool(ToolCall::new("run_shell", obj(json!({"command": "ls"}))));
    assert_eq!(v.effective_decision(), Decision::Deny);
}

/// Like hooks that skip work on remote machines (a local-only notifier): they test
/// `CURSOR_CODE_REMOTE`, which Cursor sets to `"true"` in a remote workspace only.
#[test]
fn cursor_code_remote_is_set_for_remote_workspaces_only() {
    let fx = Fx::new();
    let log = fx.at("remote.log");
    let hook = fx.script(
        "home/.cursor/hooks/notify.sh",
        &format!(
            "cat >/dev/null\nif [ \"$CURSOR_CODE_REMOTE\" = true ]; then echo remote >> {log}; else echo local >> {log}; fi\necho '{{\"permission\":\"allow\"}}'"
        ),
    );
    fx.cursor_user(json!({"beforeShellExecution": [{"command": hook}]}));
    let call = || ToolCall::new("run_shell", obj(json!({"command": "ls"})));
    let v = fx.session_as(identity()).gate_tool(call());
    assert_eq!(v.runs.len(), 1);
    let mut remote = identity();
    remote.host.remote = Some(true);
    let v = fx.session_as(remote).gate_tool(call());
    assert_eq!(v.effective_decision(), Decision::Allow);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "local\nremote\n");
}

/// Like audit hooks that log why the agent ran a tool: `preToolUse` carries the
/// agent's message with the call as `agent_message` (`""` when the host gave none).
#[test]
fn pre_tool_use_carries_the_agents_message() {
    let fx = Fx::new();
    let log = fx.at("audit.log");
    let hook = fx.script(
        "home/.cursor/hooks/audit.sh",
        &format!(
            "jq -r '\"\\(.tool_name): \\(.agent_message)\"' >> {log}\necho '{{\"permission\":\"allow\"}}'"
        ),
    );
    fx.cursor_user(json!({"preToolUse": [{"command": hook}]}));
    let session = fx.session();
    let call = ToolCall::new("run_shell", obj(json!({"command": "npm install"})))
        .with_agent_message("Installing dependencies...");
    let v = session.gate_tool(call);
    assert_eq!(v.effective_decision(), Decision::Allow);
    assert_eq!(
        stdin_of(&v, 0)["agent_message"],
        "Installing dependencies..."
    );
    let v = session.gate_tool(ToolCall::new("run_shell", obj(json!({"command": "ls"}))));
    assert_eq!(stdin_of(&v, 0)["agent_message"], "");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "Shell: Installing dependencies...\nShell: \n"
    );
}
