//! Cursor: what a hook receives on stdin and may print, for every event
//! (`preToolUse`, `postToolUse`, `postToolUseFailure`, `beforeShellExecution`,
//! `afterShellExecution`, `beforeMCPExecution`, `afterMCPExecution`,
//! `beforeReadFile`, `afterFileEdit`, `beforeSubmitPrompt`, `stop`, `sessionStart`,
//! `sessionEnd`, `subagentStart`, `subagentStop`, `preCompact`, `afterAgentResponse`,
//! `afterAgentThought`). Event-specific fields are optional: `hook_event_name` says
//! which are present.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::fields::wire_struct;

/// The events a Cursor hook can be registered for (that copse-hooks wires).
pub const EVENTS: &[&str] = &[
    "sessionStart",
    "sessionEnd",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "subagentStart",
    "subagentStop",
    "beforeShellExecution",
    "afterShellExecution",
    "beforeMCPExecution",
    "afterMCPExecution",
    "beforeReadFile",
    "afterFileEdit",
    "beforeSubmitPrompt",
    "preCompact",
    "stop",
    "afterAgentResponse",
    "afterAgentThought",
];

wire_struct! {
    /// The stdin of a Cursor hook.
    pub struct CursorRequest {
        required {
            /// The conversation id.
            conversation_id: String,
            /// The generation (turn) id.
            generation_id: String,
            /// The event (`beforeShellExecution`, …).
            hook_event_name: String,
            /// The workspace roots.
            workspace_roots: Vec<String>,
        }
        optional {
            /// The Cursor version.
            cursor_version: String,
            /// The signed-in user.
            user_email: String,
            /// The session transcript.
            transcript_path: String,
            /// The model.
            model: String,
            /// The provider-qualified model id.
            model_id: String,
            /// Model parameters (`[{"id", "value"}]`).
            model_params: Vec<Value>,
            /// The session id (session events).
            session_id: String,
            /// Whether a background agent runs the session.
            is_background_agent: bool,
            /// `agent`, `ask`, … (`sessionStart`).
            composer_mode: String,
            /// Why the session ended.
            reason: String,
            /// How long, in milliseconds.
            duration_ms: u64,
            /// The session's final status.
            final_status: String,
            /// The tool (`Shell`, `Read`, `Write`, `MCP:…`; the MCP tool on MCP events).
            tool_name: String,
            /// The tool's input (an object; a JSON string on `afterMCPExecution`).
            tool_input: Value,
            /// The tool call's id.
            tool_use_id: String,
            /// The working directory.
            cwd: String,
            /// What the agent said while making the call (`preToolUse`).
            agent_message: String,
            /// How long the tool ran, in milliseconds.
            duration: u64,
            /// The tool's output, as a JSON string (`postToolUse`).
            tool_output: String,
            /// The error (`postToolUseFailure`).
            error_message: String,
            /// `error`, `timeout`, … (`postToolUseFailure`).
            failure_type: String,
            /// Whether the user interrupted the tool.
            is_interrupt: bool,
            /// The subagent's id.
            subagent_id: String,
            /// The subagent's type.
            subagent_type: String,
            /// The subagent's task.
            task: String,
            /// The parent conversation.
            parent_conversation_id: String,
            /// The tool call that started the subagent.
            tool_call_id: String,
            /// The subagent's model.
            subagent_model: String,
            /// Whether the subagent is a parallel worker.
            is_parallel_worker: bool,
            /// `completed`, `aborted`, `error` (`stop`, `subagentStop`).
            status: String,
            /// The subagent's description.
            description: String,
            /// The subagent's summary.
            summary: String,
            /// Messages in the context / the subagent.
            message_count: u64,
            /// Tool calls the subagent made.
            tool_call_count: u64,
            /// How many times a stop hook has continued this turn.
            loop_count: u64,
            /// Files the subagent modified.
            modified_files: Vec<String>,
            /// The subagent's transcript.
            agent_transcript_path: String,
            /// The shell command (`beforeShellExecution`, `afterShellExecution`); an
            /// MCP server's command (`beforeMCPExecution`).
            command: String,
            /// An MCP server's URL (`beforeMCPExecution`).
            url: String,
            /// The shell command's output (`afterShellExecution`).
            output: String,
            /// The MCP tool's result, as a JSON string (`afterMCPExecution`).
            result_json: String,
            /// The file (`beforeReadFile`, `afterFileEdit`).
            file_path: String,
            /// The file's content (`beforeReadFile`).
            content: String,
            /// Attachments (`beforeReadFile`, `beforeSubmitPrompt`).
            attachments: Vec<Value>,
            /// The edits (`afterFileEdit`).
            edits: Vec<Value>,
            /// The prompt (`beforeSubmitPrompt`).
            prompt: String,
            /// `auto` or `manual` (`preCompact`).
            trigger: String,
            /// How full the context window is, in percent.
            context_usage_percent: f64,
            /// Tokens in the context.
            context_tokens: u64,
            /// The model's context window.
            context_window_size: u64,
            /// Messages that will be compacted.
            messages_to_compact: u64,
            /// Whether this is the first compaction.
            is_first_compaction: bool,
            /// The agent's message or thought (`afterAgentResponse`, `afterAgentThought`).
            text: String,
        }
    }
}

wire_struct! {
    /// What a Cursor hook prints (exit 0).
    pub struct CursorResponse {
        required {}
        optional {
            /// `allow`, `ask` or `deny` (gated events).
            permission: String,
            /// A message for the user.
            user_message: String,
            /// A message for the model.
            agent_message: String,
            /// A rewritten tool input (`preToolUse`).
            updated_input: Map<String, Value>,
            /// Context for the model.
            additional_context: String,
            /// `false` stops the run (`beforeSubmitPrompt`).
            #[serde(rename = "continue")]
            continue_: bool,
            /// A follow-up message for the agent (`stop`, `subagentStop`).
            followup_message: String,
            /// Session environment variables (`sessionStart`).
            env: BTreeMap<String, String>,
        }
    }
}

impl CursorResponse {
    /// A gate answer: `allow`, `ask` or `deny`, with a message for the model.
    pub fn permission(permission: &str, agent_message: impl Into<String>) -> Self {
        Self {
            permission: Some(permission.into()),
            agent_message: Some(agent_message.into()),
            ..Self::default()
        }
    }
}
