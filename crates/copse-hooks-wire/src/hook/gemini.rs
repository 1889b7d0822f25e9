//! Gemini CLI: what a hook receives on stdin and may print, for every event
//! (`BeforeTool`, `AfterTool`, `BeforeAgent`, `AfterAgent`, `Notification`,
//! `SessionStart`, `SessionEnd`, `PreCompress`). Event-specific fields are optional:
//! `hook_event_name` says which are present.

use serde_json::Value;

use super::fields::wire_struct;

/// The events a Gemini CLI hook can be registered for (that copse-hooks wires).
pub const EVENTS: &[&str] = &[
    "BeforeTool",
    "AfterTool",
    "BeforeAgent",
    "AfterAgent",
    "Notification",
    "SessionStart",
    "SessionEnd",
    "PreCompress",
];

wire_struct! {
    /// An MCP tool's server and name.
    pub struct McpContext {
        required {
            /// The server.
            server_name: String,
            /// The tool on it.
            tool_name: String,
        }
        optional {}
    }
}

wire_struct! {
    /// The stdin of a Gemini CLI hook.
    pub struct GeminiRequest {
        required {
            /// The session id.
            session_id: String,
            /// The session transcript.
            transcript_path: String,
            /// The working directory.
            cwd: String,
            /// The event (`BeforeTool`, …).
            hook_event_name: String,
            /// When the event happened (RFC 3339).
            timestamp: String,
        }
        optional {
            /// The tool (`run_shell_command`, `read_file`, `replace`, `mcp_server_tool`, …).
            tool_name: String,
            /// The tool's input.
            tool_input: Value,
            /// The tool's result (`AfterTool`).
            tool_response: Value,
            /// For MCP tools, the server and tool.
            mcp_context: McpContext,
            /// The prompt (`BeforeAgent`, `AfterAgent`).
            prompt: String,
            /// The agent's answer (`AfterAgent`).
            prompt_response: String,
            /// Whether a stop hook already continued this turn.
            stop_hook_active: bool,
            /// The kind of notification.
            notification_type: String,
            /// The notification text.
            message: String,
            /// Notification details.
            details: Value,
            /// `startup`, `resume`, `clear` (`SessionStart`).
            source: String,
            /// Why the session ended (`SessionEnd`).
            reason: String,
            /// `auto` or `manual` (`PreCompress`).
            trigger: String,
        }
    }
}

wire_struct! {
    /// `hookSpecificOutput`: the event-specific part of an answer.
    pub struct GeminiSpecificOutput {
        required {}
        optional {
            /// The event answered.
            #[serde(rename = "hookEventName")]
            hook_event_name: String,
            /// Context for the model.
            #[serde(rename = "additionalContext")]
            additional_context: String,
            /// A rewritten tool input (`BeforeTool`).
            tool_input: Value,
        }
    }
}

wire_struct! {
    /// What a Gemini CLI hook prints (exit 0).
    pub struct GeminiResponse {
        required {}
        optional {
            /// `false` stops the agent.
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
            /// `allow`/`approve`, `deny`/`block` or `ask`.
            decision: String,
            /// Why (shown to the model on a denial).
            reason: String,
            /// The event-specific answer.
            #[serde(rename = "hookSpecificOutput")]
            hook_specific_output: GeminiSpecificOutput,
        }
    }
}
