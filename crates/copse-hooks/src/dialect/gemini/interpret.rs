//! Reading a Gemini hook's exit code and answer.
//!
//! As Gemini CLI's runner does: the text read is stdout, or stderr when stdout is
//! empty; a JSON object there (or a JSON string holding one) is the answer whatever
//! the exit code. Otherwise: exit 0 with text is a system message; exit 2 blocks
//! with stderr as the reason; exit 1 (and a kill, or any non-zero exit with nothing
//! printed) is a failure — a warning in Gemini CLI, the host's failure policy here;
//! any other exit with text denies with that text, as Gemini CLI's code does.

use serde_json::{Map, Value};

use super::marshal::canonical_input;
use crate::dialect::{HookSpec, Interpretation, ProcessResult, string_field};
use crate::event::EventPayload;
use crate::outcome::{Decision, FailureKind, Halt, Outcome, QueueRequest};

/// The halt reason when a BeforeAgent hook blocks without saying why.
pub const PROMPT_BLOCKED: &str = "Agent execution blocked by a BeforeAgent hook.";

/// The events by how their answers are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    BeforeTool,
    AfterTool,
    BeforeAgent,
    AfterAgent,
    SessionStart,
    /// SessionEnd, PreCompress, Notification: `systemMessage` only.
    Advisory,
}

impl Wire {
    fn of(event: &str) -> Wire {
        match event {
            "BeforeTool" => Wire::BeforeTool,
            "AfterTool" => Wire::AfterTool,
            "BeforeAgent" => Wire::BeforeAgent,
            "AfterAgent" => Wire::AfterAgent,
            "SessionStart" => Wire::SessionStart,
            _ => Wire::Advisory,
        }
    }
}

/// The answer object in `text`, when it holds one (a double-encoded JSON string is
/// unwrapped, as Gemini CLI does).
fn answer_object(text: &str) -> Option<Map<String, Value>> {
    match serde_json::from_str::<Value>(text).ok()? {
        Value::Object(o) => Some(o),
        Value::String(inner) => match serde_json::from_str::<Value>(&inner).ok()? {
            Value::Object(o) => Some(o),
            _ => None,
        },
        _ => None,
    }
}

fn text(obj: &Map<String, Value>, key: &str) -> Option<String> {
    string_field(obj, &[key])
}

fn nested(obj: &Map<String, Value>) -> Option<&Map<String, Value>> {
    obj.get("hookSpecificOutput").and_then(Value::as_object)
}

fn stops(obj: &Map<String, Value>) -> bool {
    obj.get("continue") == Some(&Value::Bool(false))
}

/// `decision` as Gemini reads it: `allow`/`approve`, `deny`/`block`, `ask`.
fn decision(obj: &Map<String, Value>) -> Result<Option<Decision>, String> {
    match obj.get("decision") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => match s.as_str() {
            "allow" | "approve" => Ok(Some(Decision::Allow)),
            "deny" | "block" => Ok(Some(Decision::Deny)),
            "ask" => Ok(Some(Decision::Ask)),
            other => Err(format!(
                "answered decision \"{other}\", which is not allow, deny, block, ask or approve"
            )),
        },
        Some(other) => Err(format!(
            "answered decision {other}, which is not allow, deny, block, ask or approve"
        )),
    }
}

fn join(parts: impl IntoIterator<Item = Option<String>>) -> Option<String> {
    let parts: Vec<String> = parts.into_iter().flatten().collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}

fn queue(text: Option<String>, held: bool) -> Option<QueueRequest> {
    text.map(|text| QueueRequest {
        text,
        send_now: false,
        held,
    })
}

/// A block (exit 2, or plain text on another non-zero exit) with `reason`.
fn blocked(kind: Wire, reason: Option<String>) -> Outcome {
    match kind {
        Wire::BeforeTool => Outcome {
            decision: Some(Decision::Deny),
            agent_message: reason,
            ..Outcome::default()
        },
        Wire::BeforeAgent => {
            let reason = reason.unwrap_or_else(|| PROMPT_BLOCKED.to_string());
            Outcome {
                halt: Some(Halt {
                    reason: reason.clone(),
                }),
                user_message: Some(reason),
                ..Outcome::default()
            }
        }
        // The tool result is replaced by the reason: the agent hears it next.
        Wire::AfterTool => Outcome {
            queue_message: queue(reason, false),
            ..Outcome::default()
        },
        // "Retry" with the reason as a new prompt: a follow-up held for a human.
        Wire::AfterAgent => Outcome {
            queue_message: queue(reason, true),
            ..Outcome::default()
        },
        Wire::SessionStart | Wire::Advisory => Outcome {
            user_message: reason,
            ..Outcome::default()
        },
    }
}

/// A JSON answer.
fn respond(kind: Wire, event: &EventPayload, obj: &Map<String, Value>) -> Interpretation {
    let d = match decision(obj) {
        Ok(d) => d,
        Err(what) => return Interpretation::failed(FailureKind::InvalidJson, what, false),
    };
    let reason = text(obj, "reason");
    let system_message = text(obj, "systemMessage");
    let stop_reason = text(obj, "stopReason");
    let n = nested(obj);
    let additional = n.and_then(|n| text(n, "additionalContext"));
    let denies = d == Some(Decision::Deny);
    let halt = |default: &str| {
        stops(obj).then(|| Halt {
            reason: stop_reason.clone().unwrap_or_else(|| default.to_string()),
        })
    };
    let outcome = match kind {
        Wire::BeforeTool => {
            let decision = if stops(obj) { Some(Decision::Deny) } else { d };
            let updated_input = match event {
                EventPayload::ToolGate(call) if !denies => n
                    .and_then(|n| n.get("tool_input"))
                    .and_then(Value::as_object)
                    .map(|u| canonical_input(&call.tool, &call.input, u)),
                _ => None,
            };
            Outcome {
                decision,
                agent_message: if stops(obj) {
                    join([stop_reason.clone(), reason])
                } else if matches!(d, Some(Decision::Deny | Decision::Ask)) {
                    reason
                } else {
                    None
                },
                user_message: system_message,
                updated_input,
                halt: halt("Stopped by a BeforeTool hook."),
                ..Outcome::default()
            }
        }
        Wire::AfterTool => Outcome {
            queue_message: queue(
                join([if denies { reason } else { None }, additional]),
                false,
            ),
            user_message: system_message,
            halt: halt("Stopped by an AfterTool hook."),
            ..Outcome::default()
        },
        Wire::BeforeAgent => {
            if denies || stops(obj) {
                let why = if stops(obj) {
                    stop_reason.clone().or(reason)
                } else {
                    reason
                }
                .unwrap_or_else(|| PROMPT_BLOCKED.to_string());
                Outcome {
                    halt: Some(Halt {
                        reason: why.clone(),
                    }),
                    user_message: join([Some(why), system_message]),
                    ..Outcome::default()
                }
            } else {
                Outcome {
                    inject_context: additional,
                    user_message: system_message,
                    ..Outcome::default()
                }
            }
        }
        Wire::AfterAgent => {
            if stops(obj) {
                // `continue: false` stops the agent, which is what it is doing.
                Outcome {
                    user_message: join([stop_reason, system_message]),
                    ..Outcome::default()
                }
            } else {
                Outcome {
                    queue_message: queue(if denies { reason } else { None }, true),
                    user_message: system_message,
                    ..Outcome::default()
                }
            }
        }
        Wire::SessionStart => Outcome {
            inject_context: additional,
            user_message: system_message,
            ..Outcome::default()
        },
        Wire::Advisory => Outcome {
            user_message: system_message,
            ..Outcome::default()
        },
    };
    Interpretation::ok(outcome)
}

/// Reads one Gemini hook run.
pub fn interpret(hook: &HookSpec, event: &EventPayload, run: &ProcessResult<'_>) -> Interpretation {
    let kind = Wire::of(&hook.event);
    let stdout = run.stdout_text();
    let stderr = run.stderr_text();
    let read = if stdout.is_empty() { &stderr } else { &stdout };
    let answer = answer_object(read);
    match (run.exit_code, answer) {
        // Exit 2 always blocks; a JSON answer may say why.
        (Some(2), answer) => {
            let reason = answer
                .as_ref()
                .and_then(|o| text(o, "reason").or_else(|| text(o, "stopReason")))
                .or_else(|| Some(stderr.clone()).filter(|s| !s.is_empty()))
                .or_else(|| {
                    answer
                        .is_none()
                        .then(|| stdout.clone())
                        .filter(|s| !s.is_empty())
                });
            Interpretation {
                outcome: blocked(kind, reason),
                parse_ok: answer.is_some() || stdout.is_empty(),
                failure: None,
            }
        }
        (_, Some(obj)) => respond(kind, event, &obj),
        (Some(0), None) if read.is_empty() => Interpretation::ok(Outcome::default()),
        // Plain text on exit 0: allow, the text is a system message.
        (Some(0), None) => Interpretation {
            outcome: Outcome {
                user_message: Some(read.clone()),
                ..Outcome::default()
            },
            parse_ok: false,
            failure: None,
        },
        // Plain text on exit 3 or more: Gemini CLI's runner denies with it.
        (Some(code), None) if code >= 3 && !read.is_empty() => Interpretation {
            outcome: blocked(kind, Some(read.clone())),
            parse_ok: false,
            failure: None,
        },
        // Exit 1, a kill, or a silent failure: a warning in Gemini CLI.
        _ => {
            let f = run.exit_failure();
            let message = if read.is_empty() {
                f.message
            } else {
                format!("{} (warning: {read})", f.message)
            };
            Interpretation::failed(f.kind, message, true)
        }
    }
}
