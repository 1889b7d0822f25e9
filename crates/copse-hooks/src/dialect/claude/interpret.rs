//! Reading a Claude hook's answer: exit code, stdout channel by channel, event by
//! event.

use serde_json::{Map, Value};

use super::{PROMPT_BLOCKED, canonical_input, plain_stdout_is_context};
use crate::dialect::{Interpretation, ProcessResult, string_field};
use crate::event::EventPayload;
use crate::outcome::{Decision, FailureKind, Halt, Outcome, QueueRequest};

/// Reads a Claude hook's answer the way Claude Code does (hooks reference, "Exit
/// code output"), for a sibling dialect that shares Claude's output contract too:
///
/// - stdout is JSON only when it starts with `{`; anything else is plain text, which
///   is context on `UserPromptSubmit`, `UserPromptExpansion` and `SessionStart` and
///   ignored elsewhere — never a failure;
/// - exit 2 blocks with the event's own semantics (the JSON's reason, else stderr);
/// - any other exit with a valid JSON object is honoured (the exit code is ignored);
///   without one it is a failure, which the host's policy turns into a deny only on
///   events where a hook can block.
pub fn interpret_run(
    wire_event: &str,
    event: &EventPayload,
    run: &ProcessResult<'_>,
) -> Interpretation {
    let kind = Wire::of(wire_event);
    let text = run.stdout_text();
    let json = text
        .starts_with('{')
        .then(|| serde_json::from_str::<Map<String, Value>>(&text));
    let obj = match &json {
        Some(Ok(o)) => Some(o),
        _ => None,
    };
    let parse_ok = !matches!(json, Some(Err(_)));
    if run.exit_code == Some(2) {
        return Interpretation {
            outcome: exit_two(kind, run, obj),
            parse_ok,
            failure: None,
        };
    }
    if let Some(obj) = obj {
        return respond(kind, wire_event, event, obj);
    }
    if run.exit_code != Some(0) {
        let f = run.exit_failure();
        return Interpretation::failed(f.kind, f.message, parse_ok);
    }
    match json {
        Some(Err(e)) => Interpretation::failed(
            FailureKind::InvalidJson,
            format!("printed invalid JSON ({e}) — response ignored"),
            false,
        ),
        _ => Interpretation::ok(Outcome {
            inject_context: (plain_stdout_is_context(wire_event) && !text.is_empty())
                .then_some(text),
            ..Outcome::default()
        }),
    }
}

/// The wired events, by how their answers are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    PreToolUse,
    UserPromptSubmit,
    /// Stop and SubagentStop: a block is a follow-up held for a human.
    Stop,
    /// PostToolUse and PostToolUseFailure: feedback next to the tool result.
    PostTool,
    /// SubagentStart and SessionStart: context only, cannot block.
    Context,
    /// PreCompact: `decision: "block"` or exit 2 blocks compaction.
    PreCompact,
    /// PermissionRequest: `hookSpecificOutput.decision.behavior` allows or denies.
    PermissionRequest,
    /// Notification: side effects only; exit code and stderr are ignored too.
    Notification,
    /// SessionEnd: side effects only (stderr is shown to the user).
    Observe,
}

impl Wire {
    fn of(event: &str) -> Wire {
        match event {
            "PreToolUse" => Wire::PreToolUse,
            "UserPromptSubmit" => Wire::UserPromptSubmit,
            "Stop" | "SubagentStop" => Wire::Stop,
            "PostToolUse" | "PostToolUseFailure" => Wire::PostTool,
            "SubagentStart" | "SessionStart" => Wire::Context,
            "PreCompact" => Wire::PreCompact,
            "PermissionRequest" => Wire::PermissionRequest,
            "Notification" => Wire::Notification,
            _ => Wire::Observe,
        }
    }
}

/// A trimmed, non-empty string field.
fn text_of(obj: &Map<String, Value>, key: &str) -> Option<String> {
    string_field(obj, &[key])
}

fn nested(obj: &Map<String, Value>) -> Option<&Map<String, Value>> {
    obj.get("hookSpecificOutput").and_then(Value::as_object)
}

fn stops(obj: &Map<String, Value>) -> bool {
    obj.get("continue") == Some(&Value::Bool(false))
}

fn blocks(obj: &Map<String, Value>) -> bool {
    obj.get("decision").and_then(Value::as_str) == Some("block")
}

/// The reason a JSON answer gives for blocking, when it blocks.
fn block_reason(obj: &Map<String, Value>) -> Option<String> {
    if stops(obj)
        && let Some(r) = text_of(obj, "stopReason")
    {
        return Some(r);
    }
    if blocks(obj)
        && let Some(r) = text_of(obj, "reason")
    {
        return Some(r);
    }
    let n = nested(obj)?;
    if n.get("permissionDecision").and_then(Value::as_str) == Some("deny") {
        return text_of(n, "permissionDecisionReason");
    }
    None
}

fn additional_context(obj: &Map<String, Value>) -> Option<String> {
    nested(obj).and_then(|n| text_of(n, "additionalContext"))
}

fn join(parts: impl IntoIterator<Item = Option<String>>) -> Option<String> {
    let parts: Vec<String> = parts.into_iter().flatten().collect();
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("\n\n"))
    }
}

fn queue(text: Option<String>, held: bool) -> Option<QueueRequest> {
    text.map(|text| QueueRequest {
        text,
        send_now: false,
        held,
    })
}

/// Exit 2: a block with the event's own semantics. The reason is the JSON's own
/// blocking reason when it gives one, else stderr.
fn exit_two(kind: Wire, run: &ProcessResult<'_>, obj: Option<&Map<String, Value>>) -> Outcome {
    let stderr = Some(run.stderr_text()).filter(|s| !s.is_empty());
    let reason = obj.and_then(block_reason).or_else(|| stderr.clone());
    match kind {
        Wire::PreToolUse => Outcome {
            decision: Some(Decision::Deny),
            agent_message: reason,
            ..Outcome::default()
        },
        Wire::UserPromptSubmit => {
            let reason = reason.unwrap_or_else(|| PROMPT_BLOCKED.to_string());
            Outcome {
                halt: Some(Halt {
                    reason: reason.clone(),
                }),
                user_message: Some(reason),
                ..Outcome::default()
            }
        }
        Wire::Stop => Outcome {
            queue_message: queue(reason, true),
            ..Outcome::default()
        },
        Wire::PostTool => Outcome {
            queue_message: queue(reason, false),
            ..Outcome::default()
        },
        Wire::PreCompact => Outcome {
            decision: Some(Decision::Deny),
            user_message: reason,
            ..Outcome::default()
        },
        // Exit 2 is not honoured on PermissionRequest (stderr discarded) nor on
        // Notification.
        Wire::PermissionRequest => Outcome::default(),
        Wire::Notification => Outcome::default(),
        Wire::Context | Wire::Observe => Outcome {
            user_message: stderr,
            ..Outcome::default()
        },
    }
}

/// A JSON answer (on exit 0, or on another exit that is not 2).
fn respond(
    kind: Wire,
    wire_event: &str,
    event: &EventPayload,
    obj: &Map<String, Value>,
) -> Interpretation {
    let system_message = text_of(obj, "systemMessage");
    // PreCompact, Notification and SessionEnd discard `continue`.
    if stops(obj) && !matches!(kind, Wire::PreCompact | Wire::Notification | Wire::Observe) {
        // `continue: false` stops Claude after the hook, whatever else it says; the
        // `stopReason` is for the user, never the model.
        let reason = text_of(obj, "stopReason")
            .unwrap_or_else(|| format!("Stopped by a {wire_event} hook (\"continue\": false)."));
        return Interpretation::ok(Outcome {
            decision: (kind == Wire::PreToolUse).then_some(Decision::Deny),
            halt: Some(Halt {
                reason: reason.clone(),
            }),
            user_message: join([Some(reason), system_message]),
            ..Outcome::default()
        });
    }
    let outcome = match kind {
        Wire::PreToolUse => return permission(event, obj),
        Wire::UserPromptSubmit => {
            if blocks(obj) {
                let reason = block_reason(obj).unwrap_or_else(|| PROMPT_BLOCKED.to_string());
                Outcome {
                    halt: Some(Halt {
                        reason: reason.clone(),
                    }),
                    user_message: Some(reason),
                    ..Outcome::default()
                }
            } else {
                Outcome {
                    inject_context: additional_context(obj),
                    user_message: system_message,
                    ..Outcome::default()
                }
            }
        }
        Wire::Stop => {
            let reason = if blocks(obj) {
                text_of(obj, "reason")
            } else {
                None
            };
            Outcome {
                queue_message: queue(join([reason, additional_context(obj)]), true),
                user_message: system_message,
                ..Outcome::default()
            }
        }
        Wire::PostTool => {
            let reason = if blocks(obj) {
                text_of(obj, "reason")
            } else {
                None
            };
            Outcome {
                queue_message: queue(join([reason, additional_context(obj)]), false),
                user_message: system_message,
                ..Outcome::default()
            }
        }
        Wire::Context => Outcome {
            inject_context: additional_context(obj),
            user_message: system_message,
            ..Outcome::default()
        },
        Wire::PreCompact => Outcome {
            decision: blocks(obj).then_some(Decision::Deny),
            user_message: if blocks(obj) {
                text_of(obj, "reason")
            } else {
                None
            },
            ..Outcome::default()
        },
        Wire::PermissionRequest => return permission_request(event, obj),
        // SessionEnd and Notification output is discarded.
        Wire::Notification | Wire::Observe => Outcome::default(),
    };
    Interpretation::ok(outcome)
}

/// A PermissionRequest answer: `hookSpecificOutput.decision` `{behavior: allow|deny,
/// updatedInput?, message?, interrupt?}`.
fn permission_request(event: &EventPayload, obj: &Map<String, Value>) -> Interpretation {
    let Some(d) = nested(obj).and_then(|n| n.get("decision")) else {
        return Interpretation::ok(Outcome {
            user_message: text_of(obj, "systemMessage"),
            ..Outcome::default()
        });
    };
    let Some(d) = d.as_object() else {
        return Interpretation::failed(
            FailureKind::InvalidJson,
            format!("answered decision {d}, which is not an object {{behavior, …}}"),
            false,
        );
    };
    let decision = match d.get("behavior").and_then(Value::as_str) {
        Some("allow") => Decision::Allow,
        Some("deny") => Decision::Deny,
        other => {
            return Interpretation::failed(
                FailureKind::InvalidJson,
                format!(
                    "answered behavior {}, which is not \"allow\" or \"deny\"",
                    other.map_or_else(|| "(missing)".to_string(), |o| format!("\"{o}\""))
                ),
                false,
            );
        }
    };
    let updated_input = match event {
        EventPayload::PermissionRequest(call) if decision == Decision::Allow => d
            .get("updatedInput")
            .and_then(Value::as_object)
            .map(|u| canonical_input(&call.tool, &call.input, u)),
        _ => None,
    };
    // `updatedPermissions` applies with an allow (a list of rule updates).
    let updated_permissions = match d.get("updatedPermissions") {
        Some(Value::Array(items)) if decision == Decision::Allow && !items.is_empty() => {
            Some(items.iter().filter(|i| i.is_object()).cloned().collect())
        }
        _ => None,
    };
    let deny = decision == Decision::Deny;
    let message = if deny { text_of(d, "message") } else { None };
    let halt = (deny && d.get("interrupt") == Some(&Value::Bool(true))).then(|| Halt {
        reason: message
            .clone()
            .unwrap_or_else(|| "Stopped by a PermissionRequest hook.".to_string()),
    });
    Interpretation::ok(Outcome {
        decision: Some(decision),
        agent_message: message,
        user_message: text_of(obj, "systemMessage"),
        replace_input: updated_input.is_some(),
        updated_input,
        halt,
        updated_permissions,
        ..Outcome::default()
    })
}

/// A PreToolUse answer.
fn permission(event: &EventPayload, obj: &Map<String, Value>) -> Interpretation {
    let n = nested(obj);
    let invalid = |what: String| Interpretation::failed(FailureKind::InvalidJson, what, false);
    let mut decision = match n.and_then(|n| n.get("permissionDecision")) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => match s.as_str() {
            "allow" => Some(Decision::Allow),
            "ask" | "defer" => Some(Decision::Ask),
            "deny" => Some(Decision::Deny),
            other => {
                return invalid(format!(
                    "answered permissionDecision \"{other}\", which is not allow, deny, ask or defer"
                ));
            }
        },
        Some(other) => {
            return invalid(format!(
                "answered permissionDecision {other}, which is not allow, deny, ask or defer"
            ));
        }
    };
    let deferred = n
        .and_then(|n| n.get("permissionDecision"))
        .and_then(Value::as_str)
        == Some("defer");
    // The deprecated top-level `decision`: approve / block.
    let legacy = match obj.get("decision") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s == "approve" => Some(Decision::Allow),
        Some(Value::String(s)) if s == "block" => Some(Decision::Deny),
        Some(other) => {
            return invalid(format!(
                "answered decision {other}, which is not \"approve\" or \"block\""
            ));
        }
    };
    if let Some(l) = legacy {
        decision = Some(decision.map_or(l, |d| d.max(l)));
    }
    // Claude Code shows an allow's `permissionDecisionReason` to the user alone, never
    // to the model. Sent as the agent message it would reach the model, and be merged
    // into other hooks' deny reasons.
    let reason = n.and_then(|n| text_of(n, "permissionDecisionReason"));
    let (reason_for_agent, reason_for_user) = if decision == Some(Decision::Allow) {
        (None, reason)
    } else {
        (reason, None)
    };
    let agent_message = join([
        reason_for_agent,
        if blocks(obj) {
            text_of(obj, "reason")
        } else {
            None
        },
    ]);
    let updated_input = match event {
        EventPayload::ToolGate(call) if !deferred => n
            .and_then(|n| n.get("updatedInput"))
            .and_then(Value::as_object)
            .map(|u| canonical_input(&call.tool, &call.input, u)),
        _ => None,
    };
    Interpretation::ok(Outcome {
        decision,
        agent_message,
        user_message: join([text_of(obj, "systemMessage"), reason_for_user]),
        // Claude Code replaces the whole input with `updatedInput`.
        replace_input: updated_input.is_some(),
        updated_input,
        inject_context: additional_context(obj),
        ..Outcome::default()
    })
}
