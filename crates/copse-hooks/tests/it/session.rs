//! Sessions through the library API: budget, held messages, human turns.

use std::path::Path;

use copse_hooks::ToolResult;
use copse_hooks::{EventPayload, Fired, SessionIdentity};
use serde_json::{Map, json};

use crate::fx::Fx;

/// A fixture with these Cursor user hooks.
fn cursor_fx(hooks: serde_json::Value) -> Fx {
    let fx = Fx::new();
    fx.cursor_user(hooks);
    fx
}

fn tool_result(i: usize) -> EventPayload {
    EventPayload::AfterToolUse({
        let mut result = ToolResult::new(
            "write_file",
            json!({"path": format!("f{i}.txt")})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            format!("wrote {i}"),
        );
        result.is_error = false;
        result.duration_ms = 1;
        result.tool_call_id = format!("call-{i}");
        result.response = None;
        result
    })
}

#[test]
fn continuation_budget_spends_holds_and_resets_on_a_human_turn() {
    let fx = cursor_fx(
        json!({"postToolUse": [{"command": "cat >/dev/null; echo '{\"additional_context\":\"check it\"}'"}]}),
    );
    let session = fx.session_as(SessionIdentity::new("c1"));
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
    let fx = Fx::new();
    let marker = fx.path("ws/ran");
    let engine = fx.engine_with(|c| c.enabled(false));
    fx.cursor_user(json!({"stop": [{"command": format!("touch {}", marker.display())}]}));
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
    let fx = cursor_fx(json!({"beforeShellExecution": [{"command": "true"}]}));
    let on = fx.engine();
    let off = fx.engine_with(|c| c.enabled(false));
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

/// Waits (bounded, to catch hangs) until `path` holds a full line; returns it.
fn wait_line(path: &Path) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Ok(s) = std::fs::read_to_string(path)
            && s.ends_with('\n')
        {
            return s.trim().to_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

#[test]
fn a_cancel_token_kills_every_hook_group_of_a_blocking_event() {
    use copse_hooks::CancelToken;
    let fx = Fx::new();
    let marks = fx.path("out");
    let hook = |n: usize| {
        format!(
            // The hook runs in its own pid namespace with a /proc of its own: it records
            // the namespace and its pid there, and the host finds its host pid.
            "cat >/dev/null; sh -c 'echo {id} > {d}/{n}.tmp; \
             mv {d}/{n}.tmp {d}/{n}.pid; exec sleep 1000' & wait",
            id = crate::isolation::SELF_ID_SH,
            d = marks.display()
        )
    };
    // Two matching hooks (run on their own threads) and a fail-closed gate.
    fx.cursor_user(json!({"beforeShellExecution": [{"command": hook(1)}, {"command": hook(2)}]}));
    let session = fx.session_as(SessionIdentity::new("c"));
    let token = CancelToken::new();
    let runner = {
        let (session, token) = (session.clone(), token.clone());
        std::thread::spawn(move || {
            let mut input = Map::new();
            input.insert("command".into(), json!("make"));
            token.enter(|| session.gate_tool(copse_hooks::ToolCall::new("run_shell", input)))
        })
    };
    let pids = [
        wait_line(&marks.join("1.pid")),
        wait_line(&marks.join("2.pid")),
    ]
    .map(|line| {
        crate::isolation::host_pid(&line)
            .unwrap_or_else(|| panic!("no live process for {line}"))
            .to_string()
    });
    assert!(pids.iter().all(|p| alive(p)));
    token.cancel();
    let verdict = runner.join().unwrap();
    assert!(token.is_cancelled());
    // The killed hooks failed; a failure never loosens the fail-closed gate.
    assert_eq!(verdict.runs.len(), 2);
    assert!(verdict.runs.iter().all(|r| r.failure.is_some()));
    assert_eq!(verdict.effective_decision(), copse_hooks::Decision::Deny);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while pids.iter().any(|p| alive(p)) {
        assert!(
            std::time::Instant::now() < deadline,
            "a hook outlived its cancel"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // A cancelled token kills at once whatever starts under it later.
    let mut input = Map::new();
    input.insert("command".into(), json!("make"));
    let again = token.enter(|| session.gate_tool(copse_hooks::ToolCall::new("run_shell", input)));
    assert!(again.runs.iter().all(|r| r.failure.is_some()));
}

#[test]
fn the_queue_listener_hears_every_queued_message() {
    let fx = cursor_fx(
        json!({"stop": [{"command": "cat >/dev/null; echo '{\"followup_message\":\"again\"}'"}]}),
    );
    let session = fx.session_as(SessionIdentity::new("c"));
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&heard);
    session.set_queue_listener(Some(copse_hooks::QueueListener(std::sync::Arc::new(
        move |m| sink.lock().unwrap().push(m.text.clone()),
    ))));
    session.fire(EventPayload::Stop {
        status: "completed".into(),
    });
    session.wait_idle();
    assert_eq!(*heard.lock().unwrap(), vec!["again".to_string()]);
    assert_eq!(session.queue().len(), 1);
    session.set_queue_listener(None);
    session.fire(EventPayload::Stop {
        status: "completed".into(),
    });
    session.wait_idle();
    assert_eq!(heard.lock().unwrap().len(), 1, "no listener, nothing heard");
}
