//! Reading a Codex hook's exit code and answer, with Codex's own output schema
//! (`codex-rs/hooks/src/engine/output_parser.rs`).
//!
//! Exit 0: empty stdout says nothing; a JSON object is checked against the event's
//! schema and anything outside it is a failed hook; text that looks like JSON but is
//! not is a failed hook; other plain text is added context on SessionStart and
//! UserPromptSubmit and ignored elsewhere. Exit 2 blocks with stderr as the reason
//! (a failed hook when stderr is empty). Any other exit, or a kill, is a failed
//! hook. Codex lets a failed hook through; here the host policy decides.

use serde_json::{Map, Value};

use crate::dialect::{HookSpec, Interpretation, ProcessResult, trimmed_text};
use crate::event::EventPayload;
use crate::outcome::{Decision, FailureKind, Halt, Outcome, QueueRequest};

/// The events by how their answers are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    PreToolUse,
    /// PermissionRequest: `hookSpecificOutput.decision.behavior` allows or denies.
    PermissionRequest,
    UserPromptSubmit,
    PostToolUse,
    /// Stop and SubagentStop: a block is a continuation, held for a human.
    Stop,
    /// SessionStart and SubagentStart: context only.
    Context,
    /// SessionEnd, PreCompact, Interrupt: nothing to answer.
    Observe,
}

impl Wire {
    fn of(event: &str) -> Wire {
        match event {
            "PreToolUse" => Wire::PreToolUse,
            "PermissionRequest" => Wire::PermissionRequest,
            "UserPromptSubmit" => Wire::UserPromptSubmit,
            "PostToolUse" => Wire::PostToolUse,
            "Stop" | "SubagentStop" => Wire::Stop,
            "SessionStart" | "SubagentStart" => Wire::Context,
            _ => Wire::Observe,
        }
    }
}

/// Checks that `key` is absent, null or of the expected JSON kind.
fn typed(obj: &Map<String, Value>, key: &str, kind: &str) -> Result<(), String> {
    let ok = matches!(
        (obj.get(key), kind),
        (None | Some(Value::Null), _)
            | (Some(Value::String(_)), "string")
            | (Some(Value::Bool(_)), "bool")
            | (Some(Value::Object(_)), "object")
    );
    if ok {
        Ok(())
    } else {
        Err(format!("\"{key}\" must be a {kind}"))
    }
}

/// Checks a string field against the values Codex accepts.
fn one_of(obj: &Map<String, Value>, key: &str, allowed: &[&str]) -> Result<(), String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(()),
        Some(other) => Err(format!(
            "\"{key}\" {other} is not one of {}",
            allowed.join(", ")
        )),
    }
}

/// The universal fields every Codex answer may carry.
struct Universal {
    continue_processing: bool,
    stop_reason: Option<String>,
    suppress_output: bool,
    system_message: Option<String>,
}

/// Checks the answer's shape (what serde would refuse) and reads the universal
/// fields.
fn universal(kind: Wire, obj: &Map<String, Value>) -> Result<Universal, String> {
    typed(obj, "continue", "bool")?;
    typed(obj, "stopReason", "string")?;
    typed(obj, "suppressOutput", "bool")?;
    typed(obj, "systemMessage", "string")?;
    typed(obj, "reason", "string")?;
    typed(obj, "hookSpecificOutput", "object")?;
    match kind {
        Wire::PreToolUse => one_of(obj, "decision", &["approve", "block"])?,
        Wire::UserPromptSubmit | Wire::PostToolUse | Wire::Stop => {
            one_of(obj, "decision", &["block"])?;
        }
        Wire::PermissionRequest | Wire::Context | Wire::Observe => {}
    }
    if let Some(n) = obj.get("hookSpecificOutput").and_then(Value::as_object) {
        typed(n, "additionalContext", "string")?;
        typed(n, "hookEventName", "string")?;
        if kind == Wire::PreToolUse {
            one_of(n, "permissionDecision", &["allow", "deny", "ask"])?;
            typed(n, "permissionDecisionReason", "string")?;
        }
    }
    Ok(Universal {
        continue_processing: obj.get("continue") != Some(&Value::Bool(false)),
        stop_reason: trimmed_text(obj.get("stopReason")),
        suppress_output: obj.get("suppressOutput") == Some(&Value::Bool(true)),
        system_message: trimmed_text(obj.get("systemMessage")),
    })
}

fn nested(obj: &Map<String, Value>) -> Option<&Map<String, Value>> {
    obj.get("hookSpecificOutput").and_then(Value::as_object)
}

fn additional_context(obj: &Map<String, Value>) -> Option<String> {
    nested(obj).and_then(|n| trimmed_text(n.get("additionalContext")))
}

fn blocks(obj: &Map<String, Value>) -> bool {
    obj.get("decision").and_then(Value::as_str) == Some("block")
}

fn queue(text: Option<String>, held: bool) -> Option<QueueRequest> {
    text.map(|text| QueueRequest {
        text,
        send_now: false,
        held,
    })
}

fn join(parts: impl IntoIterator<Item = Option<String>>) -> Option<String> {
    let parts: Vec<String> = parts.into_iter().flatten().collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// A PreToolUse answer, as Codex's `parse_pre_tool_use` reads it.
fn pre_tool_use(event: &EventPayload, obj: &Map<String, Value>, u: Universal) -> Interpretation {
    if !u.continue_processing {
        return Interpretation::invalid_json("PreToolUse hook returned unsupported continue:false");
    }
    if u.stop_reason.is_some() {
        return Interpretation::invalid_json("PreToolUse hook returned unsupported stopReason");
    }
    if u.suppress_output {
        return Interpretation::invalid_json("PreToolUse hook returned unsupported suppressOutput");
    }
    let n = nested(obj);
    let permission = n
        .and_then(|n| n.get("permissionDecision"))
        .and_then(Value::as_str);
    let permission_reason = n.and_then(|n| trimmed_text(n.get("permissionDecisionReason")));
    let updated = n
        .and_then(|n| n.get("updatedInput"))
        .filter(|v| !v.is_null());
    let specific = permission.is_some()
        || n.is_some_and(|n| {
            n.get("permissionDecisionReason")
                .is_some_and(|v| !v.is_null())
        })
        || updated.is_some();
    let outcome = Outcome {
        user_message: u.system_message,
        inject_context: additional_context(obj),
        ..Outcome::default()
    };
    if specific {
        pre_tool_use_permission(event, permission, permission_reason, updated, outcome)
    } else {
        pre_tool_use_decision(obj, outcome)
    }
}

/// PreToolUse's `hookSpecificOutput.permissionDecision` (with its reason and
/// `updatedInput`), on top of `outcome`.
fn pre_tool_use_permission(
    event: &EventPayload,
    permission: Option<&str>,
    permission_reason: Option<String>,
    updated: Option<&Value>,
    mut outcome: Outcome,
) -> Interpretation {
    if updated.is_some() && permission != Some("allow") {
        return Interpretation::invalid_json(
            "PreToolUse hook returned updatedInput without permissionDecision:allow",
        );
    }
    match permission {
        Some("allow") => {
            let Some(update) = updated else {
                return Interpretation::invalid_json(
                    "PreToolUse hook returned unsupported permissionDecision:allow",
                );
            };
            pre_tool_use_rewrite(event, update, outcome)
        }
        Some("ask") => Interpretation::invalid_json(
            "PreToolUse hook returned unsupported permissionDecision:ask",
        ),
        Some("deny") => {
            let Some(reason) = permission_reason else {
                return Interpretation::invalid_json(
                    "PreToolUse hook returned permissionDecision:deny without a non-empty permissionDecisionReason",
                );
            };
            outcome.decision = Some(Decision::Deny);
            outcome.agent_message = Some(reason);
            Interpretation::ok(outcome)
        }
        _ => Interpretation::invalid_json(
            "PreToolUse hook returned permissionDecisionReason without permissionDecision",
        ),
    }
}

/// PreToolUse's `permissionDecision: allow` with an `updatedInput`: the rewritten
/// input of a Bash or MCP tool call (an apply_patch rewrite fails the hook).
fn pre_tool_use_rewrite(
    event: &EventPayload,
    update: &Value,
    mut outcome: Outcome,
) -> Interpretation {
    let EventPayload::ToolGate(call) = event else {
        return Interpretation::ok(outcome);
    };
    let Some(update) = update.as_object() else {
        return Interpretation::invalid_json(
            "PreToolUse hook returned an updatedInput that is not an object",
        );
    };
    match super::tool_name(&call.tool)
        .map(|(name, _)| name)
        .as_deref()
    {
        // CLAUDE-REUSE: `{command}` maps back as Claude's Bash input does.
        Some("Bash") => {
            outcome.updated_input = Some(crate::dialect::claude::canonical_input(
                &call.tool,
                &call.input,
                update,
            ));
        }
        Some(name) if name.starts_with("mcp__") => {
            outcome.updated_input = Some(update.clone());
        }
        _ => {
            return Interpretation::invalid_json(
                "PreToolUse hook rewrote an apply_patch input, which copse-hooks cannot map back to the edit",
            );
        }
    }
    Interpretation::ok(outcome)
}

/// PreToolUse's top-level `decision`/`reason` (no `hookSpecificOutput` decision),
/// on top of `outcome`.
fn pre_tool_use_decision(obj: &Map<String, Value>, mut outcome: Outcome) -> Interpretation {
    let reason = trimmed_text(obj.get("reason"));
    match obj.get("decision").and_then(Value::as_str) {
        Some("approve") => {
            Interpretation::invalid_json("PreToolUse hook returned unsupported decision:approve")
        }
        Some("block") => match reason {
            Some(r) => {
                outcome.decision = Some(Decision::Deny);
                outcome.agent_message = Some(r);
                Interpretation::ok(outcome)
            }
            None => Interpretation::invalid_json(
                "PreToolUse hook returned decision:block without a non-empty reason",
            ),
        },
        _ if obj.get("reason").is_some_and(|v| !v.is_null()) => {
            Interpretation::invalid_json("PreToolUse hook returned reason without decision")
        }
        _ => Interpretation::ok(outcome),
    }
}

/// Exit 0 with a JSON object.
fn respond(kind: Wire, event: &EventPayload, obj: &Map<String, Value>) -> Interpretation {
    let u = match universal(kind, obj) {
        Ok(u) => u,
        Err(what) => {
            return Interpretation::invalid_json(format!(
                "printed JSON outside Codex's output schema ({what})"
            ));
        }
    };
    match kind {
        Wire::PreToolUse => pre_tool_use(event, obj, u),
        Wire::PermissionRequest => permission_request(obj, u),
        Wire::UserPromptSubmit => user_prompt_submit(obj, u),
        Wire::PostToolUse => post_tool_use(obj, u),
        Wire::Stop => stop(obj, u),
        Wire::Context => Interpretation::ok(Outcome {
            inject_context: additional_context(obj),
            user_message: u.system_message,
            ..Outcome::default()
        }),
        Wire::Observe => Interpretation::ok(Outcome {
            user_message: u.system_message,
            ..Outcome::default()
        }),
    }
}

/// A UserPromptSubmit answer: `continue: false` or a block stops the prompt; else
/// added context.
fn user_prompt_submit(obj: &Map<String, Value>, u: Universal) -> Interpretation {
    let reason = trimmed_text(obj.get("reason"));
    if !u.continue_processing {
        let why = u
            .stop_reason
            .unwrap_or_else(|| "Prompt stopped by a UserPromptSubmit hook.".to_string());
        return Interpretation::ok(prompt_halt(why, u.system_message));
    }
    if !blocks(obj) {
        return Interpretation::ok(Outcome {
            inject_context: additional_context(obj),
            user_message: u.system_message,
            ..Outcome::default()
        });
    }
    match reason {
        Some(why) => Interpretation::ok(prompt_halt(why, u.system_message)),
        None => Interpretation::invalid_json(
            "UserPromptSubmit hook returned decision:block without a non-empty reason",
        ),
    }
}

/// The prompt stopped for `why`, told to the user with the hook's system message.
fn prompt_halt(why: String, system_message: Option<String>) -> Outcome {
    Outcome {
        halt: Some(Halt {
            reason: why.clone(),
        }),
        user_message: join([Some(why), system_message]),
        ..Outcome::default()
    }
}

/// A PostToolUse answer: a block's reason and added context are queued for the
/// agent; `continue: false` halts.
fn post_tool_use(obj: &Map<String, Value>, u: Universal) -> Interpretation {
    let reason = trimmed_text(obj.get("reason"));
    if u.suppress_output {
        return Interpretation::invalid_json(
            "PostToolUse hook returned unsupported suppressOutput",
        );
    }
    if blocks(obj) && reason.is_none() {
        return Interpretation::invalid_json(
            "PostToolUse hook returned decision:block without a non-empty reason",
        );
    }
    if !blocks(obj) && u.continue_processing && obj.get("reason").is_some_and(|v| !v.is_null()) {
        return Interpretation::invalid_json("PostToolUse hook returned reason without decision");
    }
    Interpretation::ok(Outcome {
        queue_message: queue(
            join([
                if blocks(obj) { reason } else { None },
                additional_context(obj),
            ]),
            false,
        ),
        user_message: u.system_message,
        halt: (!u.continue_processing).then(|| Halt {
            reason: u
                .stop_reason
                .unwrap_or_else(|| "Stopped by a PostToolUse hook.".to_string()),
        }),
        ..Outcome::default()
    })
}

/// A Stop or SubagentStop answer: a block's reason is a continuation, held for a
/// human; `continue: false` only tells the user.
fn stop(obj: &Map<String, Value>, u: Universal) -> Interpretation {
    let reason = trimmed_text(obj.get("reason"));
    if blocks(obj) && reason.is_none() {
        return Interpretation::invalid_json(
            "Stop hook returned decision:block without a non-empty reason",
        );
    }
    Interpretation::ok(if !u.continue_processing {
        Outcome {
            user_message: join([u.stop_reason, u.system_message]),
            ..Outcome::default()
        }
    } else {
        Outcome {
            queue_message: queue(if blocks(obj) { reason } else { None }, true),
            user_message: u.system_message,
            ..Outcome::default()
        }
    })
}

/// A PermissionRequest answer, as Codex's output parser reads it:
/// `hookSpecificOutput.decision` `{behavior: allow|deny, message?}`; `interrupt:
/// true`, `updatedInput` and `updatedPermissions` are reserved and fail the hook.
/// No decision: the normal approval flow goes on.
fn permission_request(obj: &Map<String, Value>, u: Universal) -> Interpretation {
    let Some(d) = nested(obj).and_then(|n| n.get("decision")) else {
        return Interpretation::ok(Outcome {
            user_message: u.system_message,
            ..Outcome::default()
        });
    };
    let Some(d) = d.as_object() else {
        return Interpretation::invalid_json(format!(
            "PermissionRequest hook returned decision {d}, which is not an object {{behavior, message?}}"
        ));
    };
    for reserved in ["updatedInput", "updatedPermissions"] {
        if d.get(reserved).is_some_and(|v| !v.is_null()) {
            return Interpretation::invalid_json(format!(
                "PermissionRequest hook returned reserved {reserved} (Codex fails such hooks)"
            ));
        }
    }
    if d.get("interrupt") == Some(&Value::Bool(true)) {
        return Interpretation::invalid_json(
            "PermissionRequest hook returned reserved interrupt:true",
        );
    }
    if let Err(what) = typed(d, "message", "string") {
        return Interpretation::invalid_json(format!(
            "printed JSON outside Codex's output schema ({what})"
        ));
    }
    let decision = match d.get("behavior").and_then(Value::as_str) {
        Some("allow") => Decision::Allow,
        Some("deny") => Decision::Deny,
        other => {
            return Interpretation::invalid_json(format!(
                "PermissionRequest hook returned behavior {}, which is not \"allow\" or \"deny\"",
                other.map_or_else(|| "(missing)".to_string(), |o| format!("\"{o}\""))
            ));
        }
    };
    let message = (decision == Decision::Deny)
        .then(|| trimmed_text(d.get("message")))
        .flatten();
    Interpretation::ok(Outcome {
        decision: Some(decision),
        agent_message: message,
        user_message: u.system_message,
        ..Outcome::default()
    })
}

/// Exit 2 with a reason on stderr.
fn exit_two(kind: Wire, reason: String) -> Interpretation {
    let outcome = match kind {
        Wire::PreToolUse | Wire::PermissionRequest => Outcome {
            decision: Some(Decision::Deny),
            agent_message: Some(reason),
            ..Outcome::default()
        },
        Wire::UserPromptSubmit => Outcome {
            halt: Some(Halt {
                reason: reason.clone(),
            }),
            user_message: Some(reason),
            ..Outcome::default()
        },
        Wire::PostToolUse => Outcome {
            queue_message: queue(Some(reason), false),
            ..Outcome::default()
        },
        Wire::Stop => Outcome {
            queue_message: queue(Some(reason), true),
            ..Outcome::default()
        },
        Wire::Context | Wire::Observe => {
            return Interpretation::failed(
                FailureKind::Exit,
                format!("exited with code 2 on an event that cannot block ({reason})"),
                true,
            );
        }
    };
    Interpretation::ok(outcome)
}

/// Reads one Codex hook run.
pub fn interpret(hook: &HookSpec, event: &EventPayload, run: &ProcessResult<'_>) -> Interpretation {
    let kind = Wire::of(&hook.event);
    match run.exit_code {
        Some(0) => {
            let text = run.stdout_text();
            if text.is_empty() {
                return Interpretation::ok(Outcome::default());
            }
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(obj)) => respond(kind, event, &obj),
                _ if text.starts_with('{') || text.starts_with('[') => {
                    Interpretation::invalid_json(format!(
                        "printed invalid {} JSON output",
                        hook.event
                    ))
                }
                _ => {
                    let context = matches!(kind, Wire::UserPromptSubmit | Wire::Context);
                    Interpretation {
                        outcome: Outcome {
                            inject_context: context.then_some(text),
                            ..Outcome::default()
                        },
                        parse_ok: false,
                        failure: None,
                    }
                }
            }
        }
        Some(2) => {
            let stderr = run.stderr_text();
            if stderr.is_empty() {
                Interpretation::failed(
                    FailureKind::Exit,
                    format!(
                        "exited with code 2 but did not write a blocking reason to stderr ({} needs one)",
                        hook.event
                    ),
                    true,
                )
            } else {
                exit_two(kind, stderr)
            }
        }
        _ => {
            let f = run.exit_failure();
            Interpretation::failed(f.kind, f.message, true)
        }
    }
}
