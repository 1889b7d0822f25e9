//! The agent boundary: real agents' payloads read into canonical events, verdicts
//! written back in each agent's format.

use std::path::PathBuf;

use copse_hooks::EventPayload;
use copse_hooks::agent::{self, Agent, Reply};
use copse_hooks::{Decision, Halt, Verdict};
use serde_json::{Map, Value, json};

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// A short, stable description of a read event.
fn describe(event: &Option<EventPayload>) -> String {
    match event {
        None => "not served".into(),
        Some(EventPayload::ToolGate(c)) => {
            format!("toolGate {} {}", c.tool, Value::Object(c.input.clone()))
        }
        // The tool-use id is generated when the agent sends none (Codex's approvals).
        Some(EventPayload::PermissionRequest(c)) => format!(
            "permissionRequest {} {}",
            c.tool,
            Value::Object(c.input.clone())
        ),
        Some(EventPayload::AfterToolUse(r)) => format!(
            "afterToolUse {} {} output={:?} error={}",
            r.tool,
            Value::Object(r.input.clone()),
            r.output,
            r.is_error
        ),
        Some(EventPayload::BeforeSubmitPrompt { prompt }) => {
            format!("beforeSubmitPrompt {prompt:?}")
        }
        Some(e) => format!("{:?}", e),
    }
}

#[test]
fn observed_payloads_read_into_canonical_events() {
    let all = fixture("agent-payloads.json");
    let mut out = String::new();
    for (agent_name, payloads) in all.as_object().unwrap() {
        let agent = Agent::parse(agent_name).unwrap();
        for (key, payload) in payloads.as_object().unwrap() {
            let inbound = agent::read(agent, payload.to_string().as_bytes()).unwrap();
            assert_eq!(inbound.session_id, "5f0c9a2e-0000-4000-8000-000000000001");
            assert_eq!(inbound.cwd, Some(PathBuf::from("/work/proj")));
            out.push_str(&format!(
                "{agent_name} {key}: {}\n",
                describe(&inbound.event)
            ));
        }
    }
    insta::assert_snapshot!(out);
}

#[test]
fn every_cursor_golden_payload_reads_back_to_its_canonical_event() {
    let golden = fixture("wire-payloads.json");
    let cursor = golden["cursor"].as_object().unwrap();
    assert!(cursor.len() > 15);
    for (key, payload) in cursor {
        let canonical = key.split('/').next().unwrap();
        let inbound = agent::read(Agent::Cursor, payload.to_string().as_bytes())
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        let event = inbound
            .event
            .unwrap_or_else(|| panic!("{key} is not served"));
        assert_eq!(event.event().name(), canonical, "{key}");
        assert_eq!(inbound.session_id, "conv-fixture-1", "{key}");
        assert_eq!(
            inbound.generation_id.as_deref(),
            Some("gen-fixture-1"),
            "{key}"
        );
        assert_eq!(
            inbound.workspace_roots,
            vec![PathBuf::from("/fixture/workspace")]
        );
        if let EventPayload::ToolGate(call) = &event {
            let expected = match payload["hook_event_name"].as_str().unwrap() {
                "beforeShellExecution" => "run_shell",
                "beforeReadFile" => "read_file",
                "beforeMCPExecution" => "mcp__example__run",
                _ => match payload["tool_name"].as_str().unwrap() {
                    "Shell" => "run_shell",
                    "Read" => "read_file",
                    "Write" => "write_file",
                    other => other.strip_prefix("MCP:").unwrap(),
                },
            };
            assert_eq!(call.tool, expected, "{key}");
        }
    }
}

#[test]
fn malformed_payloads_are_errors_not_panics() {
    for (agent, payload) in [
        (Agent::Claude, "not json"),
        (Agent::Claude, "[1,2]"),
        (Agent::Claude, r#"{"session_id":"s"}"#),
        (Agent::Claude, r#"{"hook_event_name":"PreToolUse"}"#),
        (
            Agent::Gemini,
            r#"{"hook_event_name":"BeforeTool","tool_input":{}}"#,
        ),
        (
            Agent::Gemini,
            r#"{"hook_event_name":"BeforeAgent","prompt":5}"#,
        ),
        (
            Agent::Codex,
            r#"{"hook_event_name":"PreToolUse","tool_name":7}"#,
        ),
        (
            Agent::Cursor,
            r#"{"hook_event_name":"beforeShellExecution"}"#,
        ),
    ] {
        assert!(
            agent::read(agent, payload.as_bytes()).is_err(),
            "{agent} {payload}"
        );
    }
}

fn read(agent: Agent, payload: Value) -> agent::Inbound {
    agent::read(agent, payload.to_string().as_bytes()).unwrap()
}

fn deny(message: &str) -> Verdict {
    let mut verdict = Verdict::default();
    verdict.decision = Some(Decision::Deny);
    verdict.agent_message = Some(message.into());
    verdict
}

fn answer_line(agent: Agent, inbound: &agent::Inbound, reply: &Reply) -> String {
    let a = agent::answer(agent, inbound, reply);
    format!(
        "exit {} stdout {} stderr {:?}",
        a.exit_code,
        a.stdout.trim(),
        a.stderr.trim()
    )
}

#[test]
fn answers_in_each_agents_format() {
    let payloads = fixture("agent-payloads.json");
    let golden = fixture("wire-payloads.json");
    let p = |agent: &str, key: &str| -> Value {
        if agent == "cursor" {
            golden["cursor"][key].clone()
        } else {
            payloads[agent][key].clone()
        }
    };
    let mut rewrite = Map::new();
    rewrite.insert("command".into(), json!("echo safer"));
    let halted = {
        let mut verdict = Verdict::default();
        verdict.decision = Some(Decision::Deny);
        verdict.halt = Some(Halt {
            reason: "no secrets in prompts".into(),
        });
        verdict
    };
    let context = {
        let mut verdict = Verdict::default();
        verdict.inject_context = Some("remember the style guide".into());
        verdict
    };
    let ask = {
        let mut verdict = Verdict::default();
        verdict.decision = Some(Decision::Ask);
        verdict.agent_message = Some("confirm the push".into());
        verdict
    };
    let rewritten = {
        let mut verdict = Verdict::default();
        verdict.updated_input = Some(rewrite);
        verdict
    };
    let followups = Reply {
        followups: vec!["summarise what changed".into()],
        ..Reply::default()
    };
    let with = |v: &Verdict| Reply {
        verdict: v.clone(),
        ..Reply::default()
    };
    let cases: Vec<(&str, &str, &str, Reply)> = vec![
        (
            "claude",
            "PreToolUse",
            "deny",
            with(&deny("no force pushes")),
        ),
        ("claude", "PreToolUse", "ask", with(&ask)),
        ("claude", "PreToolUse", "rewrite", with(&rewritten)),
        ("claude", "PreToolUse", "no objection", Reply::default()),
        ("claude", "UserPromptSubmit", "halt", with(&halted)),
        ("claude", "UserPromptSubmit", "context", with(&context)),
        ("claude", "SessionStart", "context", with(&context)),
        ("claude", "Stop", "follow-up", followups.clone()),
        ("claude", "Stop", "nothing queued", Reply::default()),
        (
            "gemini",
            "BeforeTool",
            "deny",
            with(&deny("no force pushes")),
        ),
        ("gemini", "BeforeTool", "ask", with(&ask)),
        ("gemini", "BeforeTool", "rewrite", with(&rewritten)),
        ("gemini", "BeforeAgent", "halt", with(&halted)),
        ("gemini", "SessionStart", "context", with(&context)),
        ("gemini", "AfterAgent", "follow-up", followups.clone()),
        (
            "codex",
            "PreToolUse",
            "deny",
            with(&deny("no force pushes")),
        ),
        ("codex", "PreToolUse", "ask", with(&ask)),
        ("codex", "PreToolUse", "rewrite", with(&rewritten)),
        ("codex", "UserPromptSubmit", "halt", with(&halted)),
        ("codex", "SessionStart", "context", with(&context)),
        ("codex", "Stop", "follow-up", followups.clone()),
        (
            "cursor",
            "toolGate/preToolUse/shell",
            "deny",
            with(&deny("no force pushes")),
        ),
        (
            "cursor",
            "toolGate/preToolUse/shell",
            "no objection",
            Reply::default(),
        ),
        (
            "cursor",
            "toolGate/beforeShellExecution/shell",
            "ask",
            with(&ask),
        ),
        (
            "cursor",
            "beforeSubmitPrompt/beforeSubmitPrompt",
            "halt",
            with(&halted),
        ),
        (
            "cursor",
            "sessionStart/sessionStart",
            "context",
            with(&context),
        ),
        ("cursor", "stop/stop", "follow-up", followups.clone()),
    ];
    let mut out = String::new();
    for (agent_name, key, label, reply) in cases {
        let agent = Agent::parse(agent_name).unwrap();
        let inbound = read(agent, p(agent_name, key));
        out.push_str(&format!(
            "{agent_name} {key} ({label}): {}\n",
            answer_line(agent, &inbound, &reply)
        ));
    }
    insta::assert_snapshot!(out);
}

#[test]
fn codex_never_gets_a_top_level_deny() {
    // Codex treats a top-level "decision": "deny" as invalid and runs the tool.
    let payloads = fixture("agent-payloads.json");
    let inbound = read(Agent::Codex, payloads["codex"]["PreToolUse"].clone());
    for v in [deny("x"), {
        let mut verdict = Verdict::default();
        verdict.decision = Some(Decision::Ask);
        verdict
    }] {
        let a = agent::answer(
            Agent::Codex,
            &inbound,
            &Reply {
                verdict: v,
                ..Reply::default()
            },
        );
        let out: Value = serde_json::from_str(&a.stdout).unwrap();
        assert!(out.get("decision").is_none(), "{out}");
        assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
    }
}

#[test]
fn internal_errors_block_gated_events_only() {
    let block = agent::fail_closed(Agent::Claude, Some("PreToolUse"), "boom");
    assert_eq!(block.exit_code, 2);
    assert!(block.stderr.contains("boom"));
    assert_eq!(
        agent::fail_closed(Agent::Gemini, Some("BeforeAgent"), "x").exit_code,
        2
    );
    assert_eq!(
        agent::fail_closed(Agent::Cursor, Some("beforeShellExecution"), "x").exit_code,
        2
    );
    assert_eq!(
        agent::fail_closed(Agent::Codex, None, "unreadable").exit_code,
        2
    );
    let observe = agent::fail_closed(Agent::Claude, Some("PostToolUse"), "boom");
    assert_eq!(observe.exit_code, 0);
    assert!(observe.stdout.is_empty());
    assert_eq!(
        agent::fail_closed(Agent::Claude, Some("Stop"), "x").exit_code,
        0
    );
}

#[test]
fn shim_locations_never_include_the_calling_agents_own_configs() {
    let home = PathBuf::from("/h");
    let copse = PathBuf::from("/h/.copse");
    let roots = vec![PathBuf::from("/w")];
    let paths = |agent, also: &[Agent]| -> Vec<String> {
        agent::locations(agent, &home, &copse, &roots, also)
            .into_iter()
            .map(|l| {
                format!(
                    "{} {} {}",
                    l.path.display(),
                    l.dialect.as_str(),
                    l.scope.as_str()
                )
            })
            .collect()
    };
    insta::assert_snapshot!(format!(
        "claude:\n{}\n\nclaude also cursor, claude:\n{}\n\ngemini also claude:\n{}\n\ncursor:\n{}\n\ncursor also gemini, codex:\n{}\n",
        paths(Agent::Claude, &[]).join("\n"),
        paths(Agent::Claude, &[Agent::Cursor, Agent::Claude]).join("\n"),
        paths(Agent::Gemini, &[Agent::Claude]).join("\n"),
        paths(Agent::Cursor, &[]).join("\n"),
        paths(Agent::Cursor, &[Agent::Gemini, Agent::Codex]).join("\n"),
    ));
}

#[test]
fn notifications_and_permission_requests_read_into_their_canonical_events() {
    let base = |event: &str| {
        json!({
            "hook_event_name": event,
            "session_id": "s1",
            "cwd": "/work/proj",
        })
    };
    let mut claude_note = base("Notification");
    claude_note["message"] = json!("Claude needs your permission to use Bash");
    claude_note["title"] = json!("Permission needed");
    claude_note["notification_type"] = json!("permission_prompt");
    match read(Agent::Claude, claude_note).event {
        Some(EventPayload::Notification {
            message,
            title,
            notification_type,
            ..
        }) => {
            assert_eq!(message, "Claude needs your permission to use Bash");
            assert_eq!(title.as_deref(), Some("Permission needed"));
            assert_eq!(notification_type, "permission_prompt");
        }
        other => panic!("Claude Notification read as {other:?}"),
    }

    let mut gemini_note = base("Notification");
    gemini_note["message"] = json!("Tool run_shell_command needs approval");
    gemini_note["notification_type"] = json!("ToolPermission");
    gemini_note["details"] = json!({"tool": "run_shell_command"});
    match read(Agent::Gemini, gemini_note).event {
        Some(EventPayload::Notification {
            notification_type,
            details,
            ..
        }) => {
            assert_eq!(notification_type, "ToolPermission");
            assert_eq!(details, json!({"tool": "run_shell_command"}));
        }
        other => panic!("Gemini Notification read as {other:?}"),
    }

    let mut permission = base("PermissionRequest");
    permission["tool_name"] = json!("Bash");
    permission["tool_input"] = json!({"command": "rm -rf build"});
    let inbound = read(Agent::Claude, permission);
    match &inbound.event {
        Some(EventPayload::PermissionRequest(call)) => {
            assert_eq!(call.tool, "run_shell");
            assert_eq!(call.input.get("command"), Some(&json!("rm -rf build")));
        }
        other => panic!("Claude PermissionRequest read as {other:?}"),
    }
    // A deny refuses the request in Claude's PermissionRequest shape; an allow
    // approves it (the one event where allow is an approval).
    let denied = agent::answer(
        Agent::Claude,
        &inbound,
        &Reply {
            verdict: deny("not on the build dir"),
            ..Reply::default()
        },
    );
    let v: Value = serde_json::from_str(&denied.stdout).unwrap();
    assert_eq!(
        v["hookSpecificOutput"]["decision"]["behavior"],
        json!("deny")
    );
    assert_eq!(
        v["hookSpecificOutput"]["hookEventName"],
        json!("PermissionRequest")
    );
    let allowed = agent::answer(
        Agent::Claude,
        &inbound,
        &Reply {
            verdict: {
                let mut verdict = Verdict::default();
                verdict.decision = Some(Decision::Allow);
                verdict
            },
            ..Reply::default()
        },
    );
    let v: Value = serde_json::from_str(&allowed.stdout).unwrap();
    assert_eq!(
        v["hookSpecificOutput"]["decision"]["behavior"],
        json!("allow")
    );
}

#[test]
fn claude_and_codex_tool_calls_keep_the_agents_tool_use_id() {
    for agent in [Agent::Claude, Agent::Codex] {
        let inbound = read(
            agent,
            json!({
                "hook_event_name": "PreToolUse",
                "session_id": "s1",
                "cwd": "/work/proj",
                "tool_name": "Bash",
                "tool_input": {"command": "ls"},
                "tool_use_id": "toolu_01ABC",
            }),
        );
        match inbound.event {
            Some(EventPayload::ToolGate(call)) => assert_eq!(call.tool_use_id, "toolu_01ABC"),
            other => panic!("{agent} PreToolUse read as {other:?}"),
        }
    }
}
