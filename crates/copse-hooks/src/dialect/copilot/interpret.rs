//! Reading a Copilot hook's exit code and answer, as the GitHub hooks reference
//! defines them ("Exit codes for command hooks", the per-event decision tables).
//!
//! stdout: each line that is on its own a JSON object with `"type": "progress"` is a
//! progress message and removed; what is left, trimmed, is the answer (one JSON
//! object; empty says nothing). Exit 0 reads the answer. Exit 2 denies on
//! `preToolUse` and `permissionRequest` (the answer, if any, merged under the deny),
//! and is a failure elsewhere (Copilot logs it and goes on). Any other exit or a kill
//! is a failure: `preToolUse` and `permissionRequest` are the events whose failures
//! deny (their policy is closed, fixed at parse).
//!
//! Diverges: Copilot treats an answer that is not JSON as no answer; here it is a
//! failed hook (which denies a `preToolUse` call and is skipped elsewhere).

use serde_json::{Map, Value};

use crate::dialect::{HookSpec, Interpretation, ProcessResult, trimmed_text};
use crate::event::EventPayload;
use crate::outcome::{Decision, Halt, Outcome, QueueRequest};

/// The answer left after the progress lines are taken out.
pub fn answer_text(stdout: &[u8]) -> String {
    let text = String::from_utf8_lossy(stdout);
    let kept: Vec<&str> = text
        .lines()
        .filter(|line| {
            let t = line.trim();
            !(t.starts_with('{')
                && serde_json::from_str::<Value>(t)
                    .is_ok_and(|v| v.get("type").and_then(Value::as_str) == Some("progress")))
        })
        .collect();
    kept.join("\n").trim().to_string()
}

fn queue(text: Option<String>, held: bool) -> Option<QueueRequest> {
    text.map(|text| QueueRequest {
        text,
        send_now: false,
        held,
    })
}

/// A `preToolUse` answer: `permissionDecision` allow / deny / ask with
/// `permissionDecisionReason` (shown to the agent), `modifiedArgs` (the whole new
/// arguments), `additionalContext`.
fn pre_tool_use(event: &EventPayload, obj: &Map<String, Value>, denied: bool) -> Interpretation {
    let reason = trimmed_text(obj.get("permissionDecisionReason"));
    let decision = match obj.get("permissionDecision") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => match s.as_str() {
            "allow" => Some(Decision::Allow),
            "deny" => Some(Decision::Deny),
            "ask" => Some(Decision::Ask),
            _ => {
                return Interpretation::invalid_json(format!(
                    "printed permissionDecision {}, which is not \"allow\", \"deny\" or \"ask\"",
                    Value::from(s.as_str())
                ));
            }
        },
        Some(other) => {
            return Interpretation::invalid_json(format!(
                "printed permissionDecision {other}, which is not a string"
            ));
        }
    };
    let mut outcome = Outcome {
        decision: if denied {
            Some(Decision::Deny)
        } else {
            decision
        },
        inject_context: trimmed_text(obj.get("additionalContext")),
        ..Outcome::default()
    };
    match outcome.decision {
        Some(Decision::Deny) => {
            outcome.agent_message =
                Some(reason.unwrap_or_else(|| "Denied by preToolUse hook".to_string()));
        }
        Some(Decision::Ask) => outcome.agent_message = reason,
        _ => {}
    }
    if !denied && let Some(args) = obj.get("modifiedArgs").filter(|v| !v.is_null()) {
        let Some(args) = args.as_object() else {
            return Interpretation::invalid_json("printed modifiedArgs that is not an object");
        };
        if let EventPayload::ToolGate(call) = event {
            let (_, input) = super::canonical_tool(&super::tool_name(&call.tool), args);
            outcome.updated_input = Some(input);
            outcome.replace_input = true;
        }
    }
    Interpretation::ok(outcome)
}

/// A `permissionRequest` answer: `behavior` allow / deny, `message` (for the agent on
/// a deny), `interrupt: true` with a deny stops the agent.
fn permission_request(obj: &Map<String, Value>, denied: bool) -> Interpretation {
    let behavior = match obj.get("behavior") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s == "allow" => Some(Decision::Allow),
        Some(Value::String(s)) if s == "deny" => Some(Decision::Deny),
        Some(other) => {
            return Interpretation::invalid_json(format!(
                "printed behavior {other}, which is not \"allow\" or \"deny\""
            ));
        }
    };
    let decision = if denied {
        Some(Decision::Deny)
    } else {
        behavior
    };
    let message = trimmed_text(obj.get("message"));
    let mut outcome = Outcome {
        decision,
        ..Outcome::default()
    };
    if decision == Some(Decision::Deny) {
        outcome.agent_message = Some(
            message
                .clone()
                .unwrap_or_else(|| "Denied by permissionRequest hook".to_string()),
        );
        if obj.get("interrupt") == Some(&Value::Bool(true)) {
            outcome.halt = Some(Halt {
                reason: message.unwrap_or_else(|| "Stopped by a permissionRequest hook.".into()),
            });
        }
    }
    Interpretation::ok(outcome)
}

/// Exit 0 with a JSON object.
fn respond(hook: &HookSpec, event: &EventPayload, obj: &Map<String, Value>) -> Interpretation {
    let context = || trimmed_text(obj.get("additionalContext"));
    let outcome = match hook.event.as_str() {
        "preToolUse" => return pre_tool_use(event, obj, false),
        "permissionRequest" => return permission_request(obj, false),
        "agentStop" | "subagentStop" => {
            let blocks = obj.get("decision").and_then(Value::as_str) == Some("block");
            Outcome {
                // A block is a continuation with `reason` as the prompt: held for a
                // human unless the host continues automatically.
                queue_message: queue(
                    blocks.then(|| trimmed_text(obj.get("reason"))).flatten(),
                    true,
                ),
                ..Outcome::default()
            }
        }
        "userPromptSubmitted" => {
            let blocks = obj.get("decision").and_then(Value::as_str) == Some("block");
            let reason = trimmed_text(obj.get("reason"))
                .unwrap_or_else(|| "Prompt blocked by a userPromptSubmitted hook.".to_string());
            Outcome {
                halt: blocks.then(|| Halt {
                    reason: reason.clone(),
                }),
                user_message: blocks.then_some(reason),
                inject_context: (!blocks).then(context).flatten(),
                ..Outcome::default()
            }
        }
        "sessionStart" | "subagentStart" => Outcome {
            inject_context: context(),
            ..Outcome::default()
        },
        "postToolUse" | "postToolUseFailure" | "notification" => Outcome {
            queue_message: queue(context(), false),
            ..Outcome::default()
        },
        _ => Outcome::default(),
    };
    Interpretation::ok(outcome)
}

/// Reads one Copilot hook run.
pub fn interpret(hook: &HookSpec, event: &EventPayload, run: &ProcessResult<'_>) -> Interpretation {
    let text = answer_text(run.stdout);
    // The answer, or why it is not one.
    let parsed = || -> Result<Map<String, Value>, String> {
        if text.is_empty() {
            return Ok(Map::new());
        }
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(obj)) => Ok(obj),
            Ok(_) => Err(format!(
                "printed JSON that is not an object on {}",
                hook.event
            )),
            Err(_) => Err(format!("printed output that is not JSON on {}", hook.event)),
        }
    };
    match run.exit_code {
        Some(0) => match parsed() {
            Ok(obj) if obj.is_empty() => Interpretation::ok(Outcome::default()),
            Ok(obj) => respond(hook, event, &obj),
            Err(why) => Interpretation::invalid_json(why),
        },
        Some(2) if matches!(hook.event.as_str(), "preToolUse" | "permissionRequest") => {
            // The answer, if any, merged under the deny; stderr is not the reason.
            let obj = parsed().unwrap_or_default();
            if hook.event == "preToolUse" {
                pre_tool_use(event, &obj, true)
            } else {
                permission_request(&obj, true)
            }
        }
        _ => {
            let f = run.exit_failure();
            Interpretation::failed(f.kind, f.message, true)
        }
    }
}
