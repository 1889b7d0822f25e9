//! Sessions through the library API: budget, held messages, human turns.

use std::path::Path;

use copse_hooks::event::ToolResult;
use copse_hooks::{Engine, EngineConfig, EventPayload, Fired, SessionIdentity};
use serde_json::json;

fn engine(home: &Path, ws: &Path, hooks: serde_json::Value) -> Engine {
    std::fs::create_dir_all(home.join(".cursor")).unwrap();
    std::fs::write(
        home.join(".cursor/hooks.json"),
        json!({"version": 1, "hooks": hooks}).to_string(),
    )
    .unwrap();
    let mut config = EngineConfig::from_process(vec![ws.to_path_buf()])
        .home(home)
        .enabled(true);
    config.sandbox_writable = vec![std::env::temp_dir()];
    Engine::new(config)
}

fn tool_result(i: usize) -> EventPayload {
    EventPayload::AfterToolUse(ToolResult {
        tool: "write_file".into(),
        input: json!({"path": format!("f{i}.txt")})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        output: format!("wrote {i}"),
        is_error: false,
        duration_ms: 1,
        tool_call_id: format!("call-{i}"),
        response: None,
    })
}

#[test]
fn continuation_budget_spends_holds_and_resets_on_a_human_turn() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let engine = engine(
        home.path(),
        ws.path(),
        json!({"postToolUse": [{"command": "cat >/dev/null; echo '{\"additional_context\":\"check it\"}'"}]}),
    );
    let session = engine.session(SessionIdentity::new("c1"));
    assert!(matches!(
        session.fire(EventPayload::BeforeSubmitPrompt {
            prompt: "go".into()
        }),
        Fired::Verdict(_)
    ));
    for i in 0..7 {
        assert!(matches!(
            session.fire(tool_result(i)),
            Fired::Detached {
                dispatched: 1,
                dropped: 0
            }
        ));
    }
    session.wait_idle();
    assert_eq!(session.queue().len(), 7);
    let delivered = session.drain_queue();
    assert_eq!(
        delivered.len(),
        5,
        "five machine continuations per turn tree"
    );
    assert_eq!(session.remaining_budget(), 0);
    let queue = session.queue();
    assert_eq!(queue.len(), 2);
    assert!(queue.iter().all(|m| m.held), "over budget turns held");
    // A human prompt resets the budget; held messages still wait for the human.
    session.fire(EventPayload::BeforeSubmitPrompt {
        prompt: "again".into(),
    });
    assert_eq!(session.remaining_budget(), 5);
    assert!(session.drain_queue().is_empty());
    assert_eq!(session.release_held().len(), 2);
    assert!(session.queue().is_empty());
    assert_eq!(session.identity().generation_id, "gen-2");
}

#[test]
fn hooks_off_dispatch_nothing() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let marker = ws.path().join("ran");
    let engine =
        Engine::new(EngineConfig::from_process(vec![ws.path().to_path_buf()]).home(home.path()));
    std::fs::create_dir_all(home.path().join(".cursor")).unwrap();
    std::fs::write(
        home.path().join(".cursor/hooks.json"),
        json!({"hooks": {"stop": [{"command": format!("touch {}", marker.display())}]}})
            .to_string(),
    )
    .unwrap();
    let session = engine.session(SessionIdentity::new("c"));
    assert!(matches!(
        session.fire(EventPayload::Stop {
            status: "completed".into()
        }),
        Fired::Detached {
            dispatched: 0,
            dropped: 0
        }
    ));
    session.wait_idle();
    assert!(!marker.exists());
}

#[test]
fn hooks_off_touch_no_config_file() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let on = engine(
        home.path(),
        ws.path(),
        json!({"beforeShellExecution": [{"command": "true"}]}),
    );
    let mut config = on.config().clone();
    config.hooks_enabled = false;
    let off = Engine::new(config);
    let session = off.session(SessionIdentity::new("c"));
    let input = json!({"command": "ls"}).as_object().unwrap().clone();
    for _ in 0..100 {
        let v = session.gate_tool(copse_hooks::ToolCall::new("run_shell", input.clone()));
        assert!(v.runs.is_empty());
    }
    session.fire(EventPayload::Stop {
        status: "completed".into(),
    });
    assert_eq!(
        off.config_file_accesses(),
        0,
        "a disabled gate touched config files"
    );
    let on_session = on.session(SessionIdentity::new("c"));
    on_session.gate_tool(copse_hooks::ToolCall::new("run_shell", input));
    assert!(on.config_file_accesses() > 0, "the seam counts accesses");
}
