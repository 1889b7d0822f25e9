//! Claude Code: what a hook receives on stdin and may print, for every event
//! (`PreToolUse`, `PostToolUse`, `PostToolUseFailure`, `PermissionRequest`,
//! `Notification`, `UserPromptSubmit`, `Stop`, `SubagentStart`, `SubagentStop`,
//! `PreCompact`, `SessionStart`, `SessionEnd`). Event-specific fields are optional:
//! `hook_event_name` says which are present.

use serde_json::{Map, Value};

use super::fields::wire_struct;

/// The events a Claude Code hook can be registered for.
pub const EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "Notification",
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
];

wire_struct! {
    /// The stdin of a Claude Code hook.
    pub struct ClaudeRequest {
        required {
            /// The session id.
            session_id: String,
            /// The session transcript.
            transcript_path: String,
            /// The working directory.
            cwd: String,
            /// The event (`PreToolUse`, …).
            hook_event_name: String,
        }
        optional {
            /// The id of the prompt the event belongs to.
            prompt_id: String,
            /// `default`, `plan`, `acceptEdits`, …
            permission_mode: String,
            /// The tool (`Bash`, `Read`, `Edit`, `mcp__server__tool`, …).
            tool_name: String,
            /// The tool's input.
            tool_input: Value,
            /// The tool's result (`PostToolUse`).
            tool_response: Value,
            /// The tool call's id.
            tool_use_id: String,
            /// How long the tool ran, in milliseconds.
            duration_ms: u64,
            /// The error (`PostToolUseFailure`).
            error: String,
            /// Whether the user interrupted the tool (`PostToolUseFailure`).
            is_interrupt: bool,
            /// The permission rules the user could add (`PermissionRequest`).
            permission_suggestions: Vec<Value>,
            /// The notification text (`Notification`).
            message: String,
            /// The notification title.
            title: String,
            /// The kind of notification.
            notification_type: String,
            /// The prompt (`UserPromptSubmit`).
            prompt: String,
            /// Whether a stop hook already continued this turn.
            stop_hook_active: bool,
            /// The assistant's last message (`Stop`, `SubagentStop`).
            last_assistant_message: String,
            /// The subagent's id.
            agent_id: String,
            /// The subagent's type.
            agent_type: String,
            /// The subagent's transcript.
            agent_transcript_path: String,
            /// `auto` or `manual` (`PreCompact`).
            trigger: String,
            /// The user's `/compact` instructions.
            custom_instructions: String,
            /// `startup`, `resume`, `clear`, `compact` (`SessionStart`).
            source: String,
            /// The model (`SessionStart`).
            model: String,
            /// Why the session ended (`SessionEnd`).
            reason: String,
        }
    }
}

wire_struct! {
    /// `hookSpecificOutput.decision` of a `PermissionRequest` answer.
    pub struct PermissionDecision {
        required {
            /// `allow` or `deny`.
            behavior: String,
        }
        optional {
            /// A rewritten tool input (allow).
            #[serde(rename = "updatedInput")]
            updated_input: Map<String, Value>,
            /// Permission-rule updates to apply with the allow (`addRules`, `setMode`,
            /// … each with a `destination`); the engine passes them to the host as
            /// written.
            #[serde(rename = "updatedPermissions")]
            updated_permissions: Vec<Value>,
            /// Why (deny; shown to the model).
            message: String,
            /// Also stop the turn (deny).
            interrupt: bool,
        }
    }
}

wire_struct! {
    /// `hookSpecificOutput`: the event-specific part of an answer.
    pub struct ClaudeSpecificOutput {
        required {
            /// The event answered (`PreToolUse`, …).
            #[serde(rename = "hookEventName")]
            hook_event_name: String,
        }
        optional {
            /// `allow`, `deny`, `ask` or `defer` (`PreToolUse`).
            #[serde(rename = "permissionDecision")]
            permission_decision: String,
            /// Why (`PreToolUse`).
            #[serde(rename = "permissionDecisionReason")]
            permission_decision_reason: String,
            /// A rewritten tool input (`PreToolUse`).
            #[serde(rename = "updatedInput")]
            updated_input: Map<String, Value>,
            /// Context for the model.
            #[serde(rename = "additionalContext")]
            additional_context: String,
            /// The decision on a `PermissionRequest`.
            decision: PermissionDecision,
        }
    }
}

wire_struct! {
    /// What a Claude Code hook prints (exit 0).
    pub struct ClaudeResponse {
        required {}
        optional {
            /// `false` stops the turn.
            #[serde(rename = "continue")]
            continue_: bool,
            /// Why the turn stopped (shown to the user).
            #[serde(rename = "stopReason")]
            stop_reason: String,
            /// Hide the hook's output from the transcript.
            #[serde(rename = "suppressOutput")]
            suppress_output: bool,
            /// A message for the user.
            #[serde(rename = "systemMessage")]
            system_message: String,
            /// `block` (or the legacy `approve`).
            decision: String,
            /// Why (with `decision`).
            reason: String,
            /// The event-specific answer.
            #[serde(rename = "hookSpecificOutput")]
            hook_specific_output: ClaudeSpecificOutput,
        }
    }
}

impl ClaudeResponse {
    /// A `PreToolUse` answer: `allow`, `deny` or `ask`, with a reason.
    pub fn pre_tool_use(decision: &str, reason: impl Into<String>) -> Self {
        Self {
            hook_specific_output: Some(ClaudeSpecificOutput {
                hook_event_name: "PreToolUse".into(),
                permission_decision: Some(decision.into()),
                permission_decision_reason: Some(reason.into()),
                ..ClaudeSpecificOutput::default()
            }),
            ..Self::default()
        }
    }
}
