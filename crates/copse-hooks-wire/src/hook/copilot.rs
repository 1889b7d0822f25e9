//! GitHub Copilot CLI: what a hook receives on stdin and may print (version-1 hook
//! files). Copilot's payloads are camelCase and do not name their event (only
//! `permissionRequest` carries `hookName`): a hook knows its event from the entry it
//! was registered under. Event-specific fields are optional.

use serde_json::{Map, Value};

use super::fields::wire_struct;

/// The events a Copilot hook can be registered for (that copse-hooks wires).
pub const EVENTS: &[&str] = &[
    "sessionStart",
    "sessionEnd",
    "userPromptSubmitted",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "agentStop",
    "subagentStop",
    "subagentStart",
    "preCompact",
    "permissionRequest",
    "notification",
];

wire_struct! {
    /// The stdin of a Copilot hook.
    pub struct CopilotRequest {
        required {
            /// The session id.
            #[serde(rename = "sessionId")]
            session_id: String,
            /// When the event happened (milliseconds since the epoch).
            timestamp: i64,
            /// The working directory.
            cwd: String,
        }
        optional {
            /// The event, where the sender names it (`notification`).
            hook_event_name: String,
            /// The event (`permissionRequest`).
            #[serde(rename = "hookName")]
            hook_name: String,
            /// The session transcript.
            #[serde(rename = "transcriptPath")]
            transcript_path: String,
            /// `new`, `resume` or `startup` (`sessionStart`).
            source: String,
            /// Why the session ended (`sessionEnd`).
            reason: String,
            /// The prompt (`userPromptSubmitted`).
            prompt: String,
            /// Instructions for the compaction (`preCompact`).
            #[serde(rename = "customInstructions")]
            custom_instructions: String,
            /// `auto` or `manual` (`preCompact`).
            trigger: String,
            /// The tool (`bash`, `view`, `edit`, `create`, an MCP tool).
            #[serde(rename = "toolName")]
            tool_name: String,
            /// The tool's arguments (an object; documented as a JSON string).
            #[serde(rename = "toolArgs")]
            tool_args: Value,
            /// The tool's input (`permissionRequest`).
            #[serde(rename = "toolInput")]
            tool_input: Value,
            /// The tool's result (`postToolUse`).
            #[serde(rename = "toolResult")]
            tool_result: Value,
            /// What failed (`postToolUseFailure`).
            error: Value,
            /// The permissions the prompt would offer (`permissionRequest`).
            #[serde(rename = "permissionSuggestions")]
            permission_suggestions: Value,
            /// Why the agent stopped (`agentStop`).
            #[serde(rename = "stopReason")]
            stop_reason: String,
            /// Whether a stop hook already continued this turn.
            stop_hook_active: bool,
            /// The subagent's id.
            #[serde(rename = "agentId")]
            agent_id: String,
            /// The subagent's name.
            #[serde(rename = "agentName")]
            agent_name: String,
            /// The subagent's type.
            #[serde(rename = "agentType")]
            agent_type: String,
            /// The subagent's last response (`subagentStop`).
            response: String,
            /// The notification's text.
            message: String,
            /// The notification's title.
            title: String,
            /// The notification's kind.
            notification_type: String,
        }
    }
}

wire_struct! {
    /// What a Copilot hook prints (exit 0).
    pub struct CopilotResponse {
        required {}
        optional {
            /// `allow`, `deny` or `ask` (`preToolUse`). copse-hooks reads `allow` as "no
            /// objection": it never skips Copilot's own permission check.
            #[serde(rename = "permissionDecision")]
            permission_decision: String,
            /// Why (shown to the model on a deny).
            #[serde(rename = "permissionDecisionReason")]
            permission_decision_reason: String,
            /// Rewritten tool arguments (`preToolUse`).
            #[serde(rename = "modifiedArgs")]
            modified_args: Map<String, Value>,
            /// `allow` or `deny` (`permissionRequest`).
            behavior: String,
            /// Why (`permissionRequest`).
            message: String,
            /// Stop the agent as well (`permissionRequest` deny).
            interrupt: bool,
            /// `block` (prompts and stops).
            decision: String,
            /// Why (with `decision`).
            reason: String,
            /// Context for the model.
            #[serde(rename = "additionalContext")]
            additional_context: String,
        }
    }
}
