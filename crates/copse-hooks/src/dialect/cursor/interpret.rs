//! Reading a Cursor hook's answer: permission events, prompt submission and the
//! notification events.

use serde_json::{Map, Value};

use super::canonical_tool_input;
use crate::dialect::{HookSpec, Interpretation, ProcessResult, string_field};
use crate::event::EventPayload;
use crate::outcome::{Decision, FailureKind, Halt, Outcome, QueueRequest};

/// Reads a Cursor hook's answer for its event.
pub(super) fn interpret(
    hook: &HookSpec,
    event: &EventPayload,
    run: &ProcessResult<'_>,
) -> Interpretation {
    match event {
        EventPayload::ToolGate(call) => {
            let mut i = interpret_permission(run);
            if hook.event == "preToolUse"
                && let Some(u) = i.outcome.updated_input.take()
            {
                // Cursor's `updated_input` replaces the input it showed.
                i.outcome.updated_input = Some(canonical_tool_input(&call.tool, &call.input, &u));
                i.outcome.replace_input = true;
            }
            i
        }
        EventPayload::SubagentStart { .. } => {
            let mut i = interpret_permission(run);
            // Cursor treats `ask` as deny here: there is nobody to ask.
            if i.outcome.decision == Some(Decision::Ask) {
                i.outcome.decision = Some(Decision::Deny);
            }
            i.outcome.updated_input = None;
            i.outcome.inject_context = None;
            i
        }
        EventPayload::BeforeSubmitPrompt { .. } => interpret_prompt(run),
        _ => interpret_notification(hook, event, run),
    }
}

/// Reads a permission response (the tool-gate events).
///
/// Exit 2 is a deny whatever stdout says; a non-zero exit with a valid JSON object is
/// honoured; an empty stdout with exit 0 is "no opinion". Cursor's older spellings
/// (`decision`/`reason`, camelCase messages) and the Claude-style nested
/// `hookSpecificOutput` it accepts are read too.
fn interpret_permission(run: &ProcessResult<'_>) -> Interpretation {
    let text = run.stdout_text();
    let exit2 = run.exit_code == Some(2);
    let stderr_reason = || Some(run.stderr_text()).filter(|s| !s.is_empty());
    if text.is_empty() {
        return match run.exit_code {
            Some(0) => Interpretation::ok(Outcome::default()),
            Some(2) => Interpretation::ok(Outcome {
                decision: Some(Decision::Deny),
                agent_message: stderr_reason(),
                ..Outcome::default()
            }),
            _ => {
                let f = run.exit_failure();
                Interpretation::failed(f.kind, f.message, true)
            }
        };
    }
    let parsed: Result<Value, _> = serde_json::from_str(&text);
    let obj = match parsed {
        Ok(Value::Object(obj)) => obj,
        other => {
            if exit2 {
                return Interpretation {
                    outcome: Outcome {
                        decision: Some(Decision::Deny),
                        agent_message: stderr_reason(),
                        ..Outcome::default()
                    },
                    parse_ok: false,
                    failure: None,
                };
            }
            if run.exit_code != Some(0) {
                let f = run.exit_failure();
                return Interpretation::failed(f.kind, f.message, false);
            }
            let what = if other.is_ok() {
                "printed JSON that is not an object — response ignored"
            } else {
                "printed invalid JSON — response ignored"
            };
            return Interpretation::failed(FailureKind::InvalidJson, what, false);
        }
    };
    let nested = obj.get("hookSpecificOutput").and_then(Value::as_object);
    let raw_decision = obj
        .get("permission")
        .or_else(|| obj.get("decision"))
        .or_else(|| nested.and_then(|n| n.get("permissionDecision")));
    let mut decision = match raw_decision {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => match s.as_str() {
            "allow" | "approve" => Some(Decision::Allow),
            "ask" | "defer" => Some(Decision::Ask),
            "deny" | "block" => Some(Decision::Deny),
            other => {
                return Interpretation::failed(
                    FailureKind::InvalidJson,
                    format!("answered permission \"{other}\", which is not allow, ask or deny"),
                    false,
                );
            }
        },
        Some(other) => {
            return Interpretation::failed(
                FailureKind::InvalidJson,
                format!("answered permission {other}, which is not allow, ask or deny"),
                false,
            );
        }
    };
    if exit2 {
        decision = Some(Decision::Deny);
    }
    let mut agent_message = string_field(&obj, &["agent_message", "agentMessage", "reason"])
        .or_else(|| nested.and_then(|n| string_field(n, &["permissionDecisionReason"])));
    if agent_message.is_none() && decision == Some(Decision::Deny) && exit2 {
        agent_message = stderr_reason();
    }
    let user_message = string_field(&obj, &["user_message", "userMessage"]);
    let updated_input = ["updated_input", "updatedInput"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_object))
        .or_else(|| nested.and_then(|n| n.get("updatedInput").and_then(Value::as_object)))
        .cloned();
    let inject_context = string_field(&obj, &["additional_context", "additionalContext"]);
    Interpretation::ok(Outcome {
        decision,
        agent_message,
        user_message,
        updated_input,
        inject_context,
        ..Outcome::default()
    })
}

/// The fallback halt reason when a `beforeSubmitPrompt` hook gives none.
pub const PROMPT_BLOCKED: &str = "Prompt submission was blocked by a beforeSubmitPrompt hook.";

/// Reads a `beforeSubmitPrompt` response: `continue: false` (or exit 2) halts the
/// submission; context is injected only when not halting.
fn interpret_prompt(run: &ProcessResult<'_>) -> Interpretation {
    let text = run.stdout_text();
    let halt_with = |user: Option<String>, agent: Option<String>| {
        let reason = user
            .clone()
            .or_else(|| agent.clone())
            .unwrap_or_else(|| PROMPT_BLOCKED.to_string());
        Outcome {
            decision: Some(Decision::Deny),
            halt: Some(Halt { reason }),
            user_message: user,
            agent_message: agent,
            ..Outcome::default()
        }
    };
    let parsed = if text.is_empty() {
        None
    } else {
        serde_json::from_str::<Value>(&text).ok()
    };
    if run.exit_code == Some(2) {
        let obj = parsed.as_ref().and_then(Value::as_object);
        let user = obj
            .and_then(|o| string_field(o, &["user_message", "userMessage"]))
            .or_else(|| Some(run.stderr_text()).filter(|s| !s.is_empty()));
        let agent = obj.and_then(|o| string_field(o, &["agent_message", "agentMessage"]));
        return Interpretation {
            outcome: halt_with(user, agent),
            parse_ok: text.is_empty() || parsed.is_some(),
            failure: None,
        };
    }
    if text.is_empty() {
        return match run.exit_code {
            Some(0) => Interpretation::ok(Outcome::default()),
            _ => {
                let f = run.exit_failure();
                Interpretation::failed(f.kind, f.message, true)
            }
        };
    }
    let obj = match parsed {
        Some(Value::Object(obj)) => obj,
        other => {
            if run.exit_code != Some(0) {
                let f = run.exit_failure();
                return Interpretation::failed(f.kind, f.message, false);
            }
            let what = if other.is_some() {
                "printed JSON that is not an object — response ignored"
            } else {
                "printed invalid JSON — response ignored"
            };
            return Interpretation::failed(FailureKind::InvalidJson, what, false);
        }
    };
    let user = string_field(&obj, &["user_message", "userMessage"]);
    let agent = string_field(&obj, &["agent_message", "agentMessage"]);
    if obj.get("continue") == Some(&Value::Bool(false)) {
        return Interpretation::ok(halt_with(user, agent));
    }
    Interpretation::ok(Outcome {
        user_message: user,
        agent_message: agent,
        inject_context: string_field(&obj, &["additional_context", "additionalContext"]),
        ..Outcome::default()
    })
}

/// Reads a notification event's response. A non-zero exit is a failure (recorded; it
/// cannot block anything). Only `stop` / `subagentStop` follow-ups (held),
/// `postToolUse` context (queued, budgeted) and `sessionStart` env are read.
fn interpret_notification(
    hook: &HookSpec,
    event: &EventPayload,
    run: &ProcessResult<'_>,
) -> Interpretation {
    if run.exit_code != Some(0) {
        let f = run.exit_failure();
        return Interpretation::failed(f.kind, f.message, true);
    }
    let text = run.stdout_text();
    if text.is_empty() || matches!(event, EventPayload::AfterFileEdit { .. }) {
        return Interpretation::ok(Outcome::default());
    }
    let obj = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(obj)) => obj,
        _ if hook.event == "postToolUse" => {
            return Interpretation::failed(
                FailureKind::InvalidJson,
                "printed invalid JSON — response ignored",
                false,
            );
        }
        _ => {
            return Interpretation {
                outcome: Outcome::default(),
                parse_ok: false,
                failure: None,
            };
        }
    };
    let mut outcome = Outcome::default();
    match event {
        EventPayload::Stop { .. } => {
            outcome.queue_message = followup(&obj);
        }
        EventPayload::SubagentStop { status, .. } if status == "completed" => {
            outcome.queue_message = followup(&obj);
        }
        EventPayload::AfterToolUse(_) if hook.event == "postToolUse" => {
            // `updated_mcp_tool_output` is parsed but not applied: the hook runs
            // detached, after the result was consumed (see docs/dialects/cursor.md).
            outcome.queue_message =
                string_field(&obj, &["additional_context", "additionalContext"]).map(|text| {
                    QueueRequest {
                        text,
                        send_now: false,
                        held: false,
                    }
                });
        }
        EventPayload::SessionStart { .. } => {
            outcome.inject_context =
                string_field(&obj, &["additional_context", "additionalContext"]);
            if let Some(env) = obj.get("env").and_then(Value::as_object) {
                let vars: std::collections::BTreeMap<String, String> = env
                    .iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .filter(|(k, _)| {
                        !k.is_empty() && !k.contains('=') && k != crate::env::DEPTH_VAR
                    })
                    .collect();
                if !vars.is_empty() {
                    outcome.session_env = Some(vars);
                }
            }
        }
        _ => {}
    }
    Interpretation::ok(outcome)
}

/// A `followup_message`, queued held: never auto-submitted.
fn followup(obj: &Map<String, Value>) -> Option<QueueRequest> {
    string_field(obj, &["followup_message", "followupMessage"]).map(|text| QueueRequest {
        text,
        send_now: false,
        held: true,
    })
}
