//! The hook half of the crate against the engine it cannot depend on (the engine
//! cannot depend on this crate either): every payload the engine marshals (the golden
//! fixture `crates/copse-hooks/tests/fixtures/wire-payloads.json`, which the engine's
//! own test keeps byte-identical to its marshallers) parses into the dialect's typed
//! request and writes back unchanged, with no field left unknown; the typed responses
//! mean to the engine's interpreters what their builders say; and the persistent
//! protocol lines serialise exactly as the engine's own types.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::path::{Path, PathBuf};

use copse_hooks::dialect::{Context, HookSpec, ProcessResult};
use copse_hooks::{
    CanonicalEvent, Decision, Dialect, EventPayload, Outcome, Scope, adapter, fixture, persistent,
};
use copse_hooks_wire::hook::claude::{ClaudeRequest, ClaudeResponse, PermissionDecision};
use copse_hooks_wire::hook::codex::{CodexRequest, CodexResponse, CodexSpecificOutput};
use copse_hooks_wire::hook::copilot::{CopilotRequest, CopilotResponse};
use copse_hooks_wire::hook::cursor::{CursorRequest, CursorResponse};
use copse_hooks_wire::hook::gemini::{GeminiRequest, GeminiResponse};
use copse_hooks_wire::hook::protocol::{HelloLine, Reply, Request};
use copse_hooks_wire::hook::{self, CopseEvent, CopseRequest, CopseResponse, Outcome as Answer};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

fn golden() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../copse-hooks/tests/fixtures/wire-payloads.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Parses `payload` as `T` and writes it back; returns the typed value.
fn round_trip<T: DeserializeOwned + Serialize>(key: &str, payload: &Value) -> T {
    let typed: T = serde_json::from_value(payload.clone())
        .unwrap_or_else(|e| panic!("{key}: does not parse: {e}\n{payload:#}"));
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(&back, payload, "{key}: does not write back unchanged");
    typed
}

fn no_extra(key: &str, extra: &Map<String, Value>) {
    assert!(
        extra.is_empty(),
        "{key}: fields the typed request does not name: {:?}",
        extra.keys().collect::<Vec<_>>()
    );
}

#[test]
fn every_golden_payload_parses_into_its_typed_request_without_loss() {
    let golden = golden();
    let mut seen = 0;
    for (key, payload) in golden["copse"].as_object().unwrap() {
        let req: CopseRequest = round_trip(key, payload);
        assert_ne!(req.event, CopseEvent::Unknown, "{key}");
        assert_eq!(req.event.name(), payload["hook_event_name"], "{key}");
        seen += 1;
    }
    for (key, payload) in golden["claude"].as_object().unwrap() {
        no_extra(key, &round_trip::<ClaudeRequest>(key, payload).extra);
        seen += 1;
    }
    for (key, payload) in golden["cursor"].as_object().unwrap() {
        no_extra(key, &round_trip::<CursorRequest>(key, payload).extra);
        seen += 1;
    }
    for (key, payload) in golden["gemini"].as_object().unwrap() {
        let req: GeminiRequest = round_trip(key, payload);
        no_extra(key, &req.extra);
        if let Some(m) = &req.mcp_context {
            no_extra(key, &m.extra);
        }
        seen += 1;
    }
    for (key, payload) in golden["codex"].as_object().unwrap() {
        no_extra(key, &round_trip::<CodexRequest>(key, payload).extra);
        seen += 1;
    }
    for (key, payload) in golden["copilot"].as_object().unwrap() {
        no_extra(key, &round_trip::<CopilotRequest>(key, payload).extra);
        seen += 1;
    }
    assert!(seen > 90, "only {seen} payloads in the fixture");
}

#[test]
fn every_wired_copse_event_is_named_in_the_sdk() {
    let mut engine: Vec<&str> = copse_hooks::dialect::copse::WIRED_EVENTS
        .iter()
        .map(|e| e.name())
        .collect();
    let mut sdk = hook::copse::EVENTS.to_vec();
    engine.sort_unstable();
    sdk.sort_unstable();
    assert_eq!(sdk, engine);
}

#[test]
fn every_published_vendor_event_is_named_in_the_sdk() {
    use copse_hooks::vendor::{CLAUDE, CODEX, COPILOT, CURSOR, GEMINI};
    for (name, vendor, sdk) in [
        ("claude", &CLAUDE, hook::claude::EVENTS),
        ("cursor", &CURSOR, hook::cursor::EVENTS),
        ("gemini", &GEMINI, hook::gemini::EVENTS),
        ("codex", &CODEX, hook::codex::EVENTS),
        ("copilot", &COPILOT, hook::copilot::EVENTS),
    ] {
        for event in vendor.published {
            if (vendor.canonical_for)(event).is_some() {
                assert!(
                    sdk.contains(event),
                    "{name}: {event} is wired but not in EVENTS"
                );
            }
        }
        for event in sdk {
            assert!(
                (vendor.canonical_for)(event).is_some(),
                "{name}: EVENTS lists {event}, which the engine does not wire"
            );
        }
    }
}

// ---------------------------------------------------------------------------------
// Responses through the engine's interpreters
// ---------------------------------------------------------------------------------

/// The first hook of a config text in `dialect`.
fn spec(dialect: Dialect, config: Value) -> HookSpec {
    let parsed = adapter(dialect).parse(
        &config.to_string(),
        Path::new("/fixture/home/hooks.json"),
        Scope::User,
        None,
    );
    assert!(
        parsed.warnings.is_empty(),
        "{:?}",
        parsed
            .warnings
            .iter()
            .map(|w| &w.message)
            .collect::<Vec<_>>()
    );
    parsed.hooks.into_iter().next().unwrap()
}

fn nested(event: &str) -> Value {
    json!({"hooks": {event: [{"matcher": "*", "hooks": [{"type": "command", "name": "t", "command": "true"}]}]}})
}

fn flat(event: &str) -> Value {
    json!({"version": 1, "hooks": {event: [{"command": "true"}]}})
}

/// What the engine reads from `stdout` (and `exit`, `stderr`) for `event`.
fn interpret(
    dialect: Dialect,
    config: Value,
    event: CanonicalEvent,
    flavour: &str,
    stdout: &[u8],
    exit: i32,
    stderr: &[u8],
) -> Outcome {
    let hook = spec(dialect, config);
    let payload: EventPayload = fixture::payload(event, flavour);
    let session = fixture::session();
    let roots = vec![PathBuf::from(fixture::ROOT)];
    let ctx = Context {
        session: &session,
        workspace_roots: &roots,
    };
    assert!(adapter(dialect).applies(&hook, &payload, &ctx));
    let run = ProcessResult {
        exit_code: Some(exit),
        signal: None,
        stdout,
        stderr,
    };
    let i = adapter(dialect).interpret(&hook, &payload, &run);
    assert!(i.failure.is_none(), "{:?}", i.failure);
    assert!(i.parse_ok);
    i.outcome
}

fn printed(response: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(response).unwrap()
}

fn copse(event: CanonicalEvent, flavour: &str, response: &CopseResponse) -> Outcome {
    interpret(
        Dialect::Copse,
        flat(event.name()),
        event,
        flavour,
        &printed(response),
        0,
        b"",
    )
}

#[test]
fn copse_responses_mean_what_their_builders_say() {
    let o = copse(
        CanonicalEvent::ToolGate,
        "shell",
        &CopseResponse::deny("for the model").with_user_message("for you"),
    );
    assert_eq!(o.decision, Some(Decision::Deny));
    assert_eq!(o.agent_message.as_deref(), Some("for the model"));
    assert_eq!(o.user_message.as_deref(), Some("for you"));

    let o = copse(
        CanonicalEvent::ToolGate,
        "shell",
        &CopseResponse::ask("sure?"),
    );
    assert_eq!(o.decision, Some(Decision::Ask));

    let mut rewrite = CopseResponse::allow().with_context("extra context");
    rewrite.updated_input = Some(json!({"command": "ls"}).as_object().unwrap().clone());
    let o = copse(CanonicalEvent::ToolGate, "shell", &rewrite);
    assert_eq!(o.decision, Some(Decision::Allow));
    assert_eq!(o.updated_input, rewrite.updated_input);
    assert_eq!(o.inject_context.as_deref(), Some("extra context"));

    let o = copse(
        CanonicalEvent::BeforeSubmitPrompt,
        "",
        &CopseResponse::halt("stop now"),
    );
    assert_eq!(o.halt.map(|h| h.reason).as_deref(), Some("stop now"));
    assert_eq!(o.decision, Some(Decision::Deny));

    let o = copse(CanonicalEvent::Stop, "", &CopseResponse::queue("next step"));
    let q = o.queue_message.unwrap();
    assert_eq!((q.text.as_str(), q.send_now), ("next step", false));

    let env = CopseResponse {
        session_env: Some([("A".to_string(), "1".to_string())].into()),
        ..CopseResponse::default()
    };
    let o = copse(CanonicalEvent::SessionStart, "", &env);
    assert_eq!(o.session_env, env.session_env);

    let o = copse(CanonicalEvent::ToolGate, "shell", &CopseResponse::default());
    assert!(o.is_empty());
}

#[test]
fn the_runners_block_means_exit_2_to_the_engine() {
    // Per call: what the runner prints and exits with, read by the engine.
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let payload = fixture_payload("copse", "toolGate/toolGate/shell");
    let code = hook::runner::per_call(
        payload.to_string().as_bytes(),
        &mut out,
        &mut err,
        |_: CopseRequest| Answer::<CopseResponse>::Block("not today".into()),
    )
    .unwrap();
    let o = interpret(
        Dialect::Copse,
        flat("toolGate"),
        CanonicalEvent::ToolGate,
        "shell",
        &out,
        code,
        &err,
    );
    assert_eq!(o.decision, Some(Decision::Deny));
    assert_eq!(o.agent_message.as_deref(), Some("not today"));
}

fn fixture_payload(dialect: &str, key: &str) -> Value {
    golden()[dialect][key].clone()
}

#[test]
fn vendor_responses_mean_what_they_say() {
    let o = interpret(
        Dialect::Claude,
        nested("PreToolUse"),
        CanonicalEvent::ToolGate,
        "shell",
        &printed(&ClaudeResponse::pre_tool_use(
            "deny",
            "no deploys on Friday",
        )),
        0,
        b"",
    );
    assert_eq!(o.decision, Some(Decision::Deny));
    assert_eq!(o.agent_message.as_deref(), Some("no deploys on Friday"));

    let rule = json!({
        "type": "addRules",
        "rules": [{"toolName": "Bash", "ruleContent": "npm test"}],
        "behavior": "allow",
        "destination": "session"
    });
    let allow = ClaudeResponse {
        hook_specific_output: Some(hook::claude::ClaudeSpecificOutput {
            hook_event_name: "PermissionRequest".into(),
            decision: Some(PermissionDecision {
                behavior: "allow".into(),
                updated_permissions: Some(vec![rule.clone()]),
                ..PermissionDecision::default()
            }),
            ..Default::default()
        }),
        ..ClaudeResponse::default()
    };
    let o = interpret(
        Dialect::Claude,
        nested("PermissionRequest"),
        CanonicalEvent::PermissionRequest,
        "shell",
        &printed(&allow),
        0,
        b"",
    );
    assert_eq!(o.decision, Some(Decision::Allow));
    assert_eq!(o.updated_permissions, Some(vec![rule]));

    let o = interpret(
        Dialect::Cursor,
        flat("beforeShellExecution"),
        CanonicalEvent::ToolGate,
        "shell",
        &printed(&CursorResponse::permission("deny", "not that one")),
        0,
        b"",
    );
    assert_eq!(o.decision, Some(Decision::Deny));
    assert_eq!(o.agent_message.as_deref(), Some("not that one"));

    let follow = CursorResponse {
        followup_message: Some("run the tests".into()),
        ..CursorResponse::default()
    };
    let o = interpret(
        Dialect::Cursor,
        flat("stop"),
        CanonicalEvent::Stop,
        "",
        &printed(&follow),
        0,
        b"",
    );
    assert_eq!(o.queue_message.unwrap().text, "run the tests");

    let deny = GeminiResponse {
        decision: Some("deny".into()),
        reason: Some("outside the workspace".into()),
        ..GeminiResponse::default()
    };
    let o = interpret(
        Dialect::Gemini,
        nested("BeforeTool"),
        CanonicalEvent::ToolGate,
        "shell",
        &printed(&deny),
        0,
        b"",
    );
    assert_eq!(o.decision, Some(Decision::Deny));
    assert_eq!(o.agent_message.as_deref(), Some("outside the workspace"));

    let deny = CodexResponse {
        hook_specific_output: Some(CodexSpecificOutput {
            hook_event_name: "PreToolUse".into(),
            permission_decision: Some("deny".into()),
            permission_decision_reason: Some("read-only today".into()),
            ..CodexSpecificOutput::default()
        }),
        ..CodexResponse::default()
    };
    let o = interpret(
        Dialect::Codex,
        nested("PreToolUse"),
        CanonicalEvent::ToolGate,
        "shell",
        &printed(&deny),
        0,
        b"",
    );
    assert_eq!(o.decision, Some(Decision::Deny));
    assert_eq!(o.agent_message.as_deref(), Some("read-only today"));

    let copilot =
        json!({"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "true"}]}});
    let deny = CopilotResponse {
        permission_decision: Some("deny".into()),
        permission_decision_reason: Some("not on main".into()),
        ..CopilotResponse::default()
    };
    let o = interpret(
        Dialect::Copilot,
        copilot.clone(),
        CanonicalEvent::ToolGate,
        "shell",
        &printed(&deny),
        0,
        b"",
    );
    assert_eq!(o.decision, Some(Decision::Deny));
    assert_eq!(o.agent_message.as_deref(), Some("not on main"));
    // Copilot's `allow` is no objection here, never an approval.
    let allow = CopilotResponse {
        permission_decision: Some("allow".into()),
        ..CopilotResponse::default()
    };
    let o = interpret(
        Dialect::Copilot,
        copilot,
        CanonicalEvent::ToolGate,
        "shell",
        &printed(&allow),
        0,
        b"",
    );
    assert_eq!(o.decision, Some(Decision::Allow));
}

// ---------------------------------------------------------------------------------
// The persistent protocol
// ---------------------------------------------------------------------------------

#[test]
fn protocol_lines_serialise_exactly_as_the_engines() {
    // The runner's persistent-mode variable is the one the engine sets.
    assert_eq!(hook::runner::PERSISTENT_ENV, persistent::PERSISTENT_ENV);
    let ours = HelloLine::new(["toolGate", "stop"]);
    let theirs = persistent::HelloLine {
        hello: persistent::Hello {
            protocol: persistent::PROTOCOL_VERSION,
            events: vec!["toolGate".into(), "stop".into()],
        },
    };
    assert_eq!(
        serde_json::to_string(&ours).unwrap(),
        serde_json::to_string(&theirs).unwrap()
    );
    assert_eq!(
        hook::protocol::PROTOCOL_VERSION,
        persistent::PROTOCOL_VERSION
    );

    let pairs = [
        (
            Reply::response(3, json!({"decision": "deny"})),
            persistent::Reply::response(3, json!({"decision": "deny"})),
        ),
        (
            Reply::response(4, Value::Null),
            persistent::Reply::response(4, Value::Null),
        ),
        (Reply::block(5, "no"), persistent::Reply::block(5, "no")),
    ];
    for (ours, theirs) in pairs {
        let text = serde_json::to_string(&ours).unwrap();
        assert_eq!(text, serde_json::to_string(&theirs).unwrap());
        // And the engine reads our line as the same reply.
        assert_eq!(
            persistent::parse_line(text.as_bytes()).unwrap(),
            persistent::Line::Reply(theirs)
        );
    }
    let hello = serde_json::to_vec(&HelloLine::new(["toolGate"])).unwrap();
    assert!(matches!(
        persistent::parse_line(&hello).unwrap(),
        persistent::Line::Hello(_)
    ));

    // What the engine writes, we read.
    let payload = fixture_payload("copse", "stop/stop");
    let line = persistent::encode_request(42, "stop", &payload);
    let req: Request = serde_json::from_slice(&line).unwrap();
    assert_eq!((req.id, req.event.as_str()), (42, "stop"));
    assert_eq!(req.payload, payload);
    let typed: CopseRequest = serde_json::from_value(req.payload).unwrap();
    assert!(matches!(typed.event, CopseEvent::Stop { .. }));
}
