//! Codex: what a hook receives on stdin and may print, for every event
//! (`SessionStart`, `SubagentStart`, `SessionEnd`, `UserPromptSubmit`, `PreToolUse`,
//! `PermissionRequest`, `PostToolUse`, `PreCompact`, `SubagentStop`, `Stop`,
//! `Interrupt`). Event-specific
//! fields are optional: `hook_event_name` says which are present.

use serde_json::{Map, Value};

use super::fields::{nullable, wire_struct};

/// The events a Codex hook can be registered for (that copse-hooks wires).
pub const EVENTS: &[&str] = &[
    "SessionStart",
    "SubagentStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "SubagentStop",
    "Stop",
    "Interrupt",
];

wire_struct! {
    /// The stdin of a Codex hook.
    pub struct CodexRequest {
        required {
            /// The session id.
            session_id: String,
            /// The session transcript (`null` without one).
            transcript_path: Option<String>,
            /// The working directory.
            cwd: String,
            /// The event (`PreToolUse`, …).
            hook_event_name: String,
        }
        optional {
            /// The turn (turn-scoped events).
            turn_id: String,
            /// The model.
            model: String,
            /// The approval mode.
            permission_mode: String,
            /// `startup` or `resume` (`SessionStart`).
            source: String,
            /// The subagent's type.
            agent_type: String,
            /// Why the session ended.
            reason: String,
            /// The prompt (`UserPromptSubmit`).
            prompt: String,
            /// The tool (`Bash`, `apply_patch`, `mcp__server__tool`).
            tool_name: String,
            /// The tool's input.
            tool_input: Value,
            /// The tool's result (`PostToolUse`).
            tool_response: Value,
            /// The tool call's id.
            tool_use_id: String,
            /// `auto` or `manual` (`PreCompact`).
            trigger: String,
            /// Whether a stop hook already continued this turn.
            stop_hook_active: bool,
            /// The assistant's last message (`null` when there was none).
            #[serde(deserialize_with = "nullable")]
            last_assistant_message: Option<String>,
        }
    }
}

wire_struct! {
    /// `hookSpecificOutput.decision` of a `PermissionRequest` answer. Codex fails a
    /// hook whose decision carries `updatedInput`, `updatedPermissions` or
    /// `interrupt: true` (reserved upstream).
    pub struct CodexPermissionDecision {
        required {
            /// `allow` or `deny`.
            behavior: String,
        }
        optional {
            /// Why (deny; shown to the model).
            message: String,
        }
    }
}

wire_struct! {
    /// `hookSpecificOutput`: the event-specific part of an answer.
    pub struct CodexSpecificOutput {
        required {
            /// The event answered.
            #[serde(rename = "hookEventName")]
            hook_event_name: String,
        }
        optional {
            /// `allow`, `deny` or `ask` (`PreToolUse`).
            #[serde(rename = "permissionDecision")]
            permission_decision: String,
            /// Why.
            #[serde(rename = "permissionDecisionReason")]
            permission_decision_reason: String,
            /// A rewritten tool input (`PreToolUse`).
            #[serde(rename = "updatedInput")]
            updated_input: Map<String, Value>,
            /// Context for the model.
            #[serde(rename = "additionalContext")]
            additional_context: String,
            /// Allow or deny the approval prompt (`PermissionRequest`).
            decision: CodexPermissionDecision,
        }
    }
}

wire_struct! {
    /// What a Codex hook prints (exit 0).
    pub struct CodexResponse {
        required {}
        optional {
            /// `false` stops the turn.
            #[serde(rename = "continue")]
            continue_: bool,
            /// Why it stopped.
            #[serde(rename = "stopReason")]
            stop_reason: String,
            /// Hide the hook's output.
            #[serde(rename = "suppressOutput")]
            suppress_output: bool,
            /// A message for the user.
            #[serde(rename = "systemMessage")]
            system_message: String,
            /// `block` (or `approve` on `PreToolUse`).
            decision: String,
            /// Why (with `decision`).
            reason: String,
            /// The event-specific answer.
            #[serde(rename = "hookSpecificOutput")]
            hook_specific_output: CodexSpecificOutput,
        }
    }
}
