//! The Copse dialect: canonical event names, one envelope for every event, one
//! response vocabulary (`decision`, `agentMessage`, `userMessage`, …). The only
//! dialect whose hooks can be persistent.
//!
//! A payload is a [`CopseRequest`]: the [`Envelope`] every event carries, and the
//! event's own fields in [`CopseEvent`] (selected by `hook_event_name`). An answer is
//! a [`CopseResponse`]; printing nothing (the runner's `Outcome::Nothing`) means "no
//! opinion".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Every Copse event a hook can be registered for, by canonical name.
pub const EVENTS: &[&str] = &[
    "toolGate",
    "beforeSubmitPrompt",
    "afterFileEdit",
    "stop",
    "afterToolUse",
    "subagentStart",
    "subagentStop",
    "sessionStart",
    "sessionEnd",
    "preCompact",
    "afterAgentResponse",
    "afterAgentThought",
    "notification",
];

/// What a Copse hook reads on stdin (per call) or in a request's `payload`
/// (persistent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopseRequest {
    /// The fields every event carries.
    #[serde(flatten)]
    pub envelope: Envelope,
    /// The event and its own fields.
    #[serde(flatten)]
    pub event: CopseEvent,
}

/// The fields every Copse payload carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// The conversation (session) id. A persistent hook serves every session of the
    /// engine: key per-session state on this.
    pub conversation_id: String,
    /// The id of the current generation (turn).
    pub generation_id: String,
    /// The workspace roots of the session.
    #[serde(default)]
    pub workspace_roots: Vec<String>,
    /// The model, when the host said which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Model>,
}

/// The model a session runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// The display name (`claude-sonnet-4`).
    pub model: String,
    /// The provider-qualified id (`anthropic/claude-sonnet-4`).
    pub model_id: String,
    /// Model parameters (context size, thinking level, …).
    #[serde(default)]
    pub model_params: Vec<ModelParam>,
}

/// One model parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelParam {
    /// The parameter (`context`, `thinking`).
    pub id: String,
    /// Its value.
    pub value: String,
}

/// One edit of an `afterFileEdit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    /// The text replaced.
    pub old_string: String,
    /// The text that replaced it.
    pub new_string: String,
}

/// The event a payload is for, with its own fields; `hook_event_name` selects it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "hook_event_name")]
#[non_exhaustive]
pub enum CopseEvent {
    /// A tool is about to run: allow, ask, deny, rewrite its input or add context.
    #[serde(rename = "toolGate")]
    ToolGate {
        /// The canonical tool name (`run_shell`, `read_file`, `str_replace`,
        /// `mcp__server__tool`, …).
        tool_name: String,
        /// The tool's input (`{"command": …}` for `run_shell`).
        input: Map<String, Value>,
        /// For file reads, the file's content.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file_content: Option<String>,
    },
    /// The user submitted a prompt: allow, deny, halt or add context.
    #[serde(rename = "beforeSubmitPrompt")]
    BeforeSubmitPrompt {
        /// The prompt text.
        prompt: String,
    },
    /// The agent edited a file.
    #[serde(rename = "afterFileEdit")]
    AfterFileEdit {
        /// The file edited.
        file_path: String,
        /// The edits.
        #[serde(default)]
        edits: Vec<Edit>,
    },
    /// The turn ended; a hook may queue a follow-up message.
    #[serde(rename = "stop")]
    Stop {
        /// `completed`, `aborted` or `error`.
        status: String,
    },
    /// A tool ran.
    #[serde(rename = "afterToolUse")]
    AfterToolUse {
        /// The canonical tool name.
        tool_name: String,
        /// The host's id of the call.
        tool_call_id: String,
        /// Whether the tool failed.
        is_error: bool,
        /// The tool's input.
        input: Map<String, Value>,
        /// The tool's output (capped).
        output: String,
        /// How long it ran, in milliseconds.
        duration: u64,
    },
    /// A subagent is about to start: allow or deny it.
    #[serde(rename = "subagentStart")]
    SubagentStart {
        /// The kind of subagent.
        subagent_type: String,
        /// Its model, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subagent_model: Option<String>,
    },
    /// A subagent finished.
    #[serde(rename = "subagentStop")]
    SubagentStop {
        /// The kind of subagent.
        subagent_type: String,
        /// How it ended.
        status: String,
    },
    /// A session started; a hook may set session environment variables.
    #[serde(rename = "sessionStart")]
    SessionStart {
        /// Whether this is the first turn of the conversation.
        first_turn: bool,
        /// The session id (the conversation id).
        session_id: String,
    },
    /// A session ended.
    #[serde(rename = "sessionEnd")]
    SessionEnd {
        /// Why.
        reason: String,
        /// How long it lasted, in milliseconds.
        duration_ms: u64,
    },
    /// The context is about to be compacted.
    #[serde(rename = "preCompact")]
    PreCompact {
        /// `auto` or `manual`.
        trigger: String,
        /// How full the context window is, in percent.
        context_usage_percent: f64,
        /// Tokens in the context.
        context_tokens: u64,
        /// The model's context window.
        context_window_size: u64,
        /// Messages in the context.
        message_count: u64,
        /// Messages that will be compacted.
        messages_to_compact: u64,
        /// Whether this is the conversation's first compaction.
        is_first_compaction: bool,
    },
    /// The assistant finished a message.
    #[serde(rename = "afterAgentResponse")]
    AfterAgentResponse {
        /// The message.
        text: String,
    },
    /// The assistant finished a thinking block.
    #[serde(rename = "afterAgentThought")]
    AfterAgentThought {
        /// The thought.
        text: String,
        /// How long it took, in milliseconds, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
    /// The host raised a notification for the user.
    #[serde(rename = "notification")]
    Notification {
        /// `permission_prompt`, `idle_prompt`, …
        notification_type: String,
        /// The message shown.
        message: String,
        /// Its title, when it has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// Host-specific details.
        #[serde(default)]
        details: Value,
    },
    /// An event this version of the crate does not know (a newer engine). Answer it
    /// with `Outcome::Nothing`.
    #[serde(other)]
    Unknown,
}

impl CopseEvent {
    /// The canonical event name (`"unknown"` for [`CopseEvent::Unknown`]).
    pub fn name(&self) -> &'static str {
        match self {
            CopseEvent::ToolGate { .. } => "toolGate",
            CopseEvent::BeforeSubmitPrompt { .. } => "beforeSubmitPrompt",
            CopseEvent::AfterFileEdit { .. } => "afterFileEdit",
            CopseEvent::Stop { .. } => "stop",
            CopseEvent::AfterToolUse { .. } => "afterToolUse",
            CopseEvent::SubagentStart { .. } => "subagentStart",
            CopseEvent::SubagentStop { .. } => "subagentStop",
            CopseEvent::SessionStart { .. } => "sessionStart",
            CopseEvent::SessionEnd { .. } => "sessionEnd",
            CopseEvent::PreCompact { .. } => "preCompact",
            CopseEvent::AfterAgentResponse { .. } => "afterAgentResponse",
            CopseEvent::AfterAgentThought { .. } => "afterAgentThought",
            CopseEvent::Notification { .. } => "notification",
            CopseEvent::Unknown => "unknown",
        }
    }
}

impl CopseRequest {
    /// For a `toolGate` or `afterToolUse` of `run_shell`, the command.
    pub fn shell_command(&self) -> Option<&str> {
        match &self.event {
            CopseEvent::ToolGate {
                tool_name, input, ..
            }
            | CopseEvent::AfterToolUse {
                tool_name, input, ..
            } if tool_name == "run_shell" => input.get("command").and_then(Value::as_str),
            _ => None,
        }
    }
}

/// A gate's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Let it happen (other hooks may still deny: the strictest answer wins).
    Allow,
    /// Ask the user.
    Ask,
    /// Refuse.
    Deny,
}

/// `haltRun`: stop the whole run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HaltRun {
    /// Why (shown to the user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `queueMessage`: a follow-up message for the agent (on `stop`, `subagentStop` and
/// the observing events).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueMessage {
    /// The message.
    pub text: String,
    /// Send it at once instead of after the turn.
    #[serde(rename = "sendNow", default, skip_serializing_if = "is_false")]
    pub send_now: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What a Copse hook prints (per call) or answers in `response` (persistent). Every
/// field is optional; which ones an event reads is in `docs/dialects/copse.md`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CopseResponse {
    /// `allow`, `ask` or `deny` (gated events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// A message for the model.
    #[serde(
        rename = "agentMessage",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub agent_message: Option<String>,
    /// A message for the user.
    #[serde(
        rename = "userMessage",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub user_message: Option<String>,
    /// A rewritten tool input (`toolGate`).
    #[serde(
        rename = "updatedInput",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub updated_input: Option<Map<String, Value>>,
    /// Context added for the model (`toolGate`, `beforeSubmitPrompt`, `subagentStart`).
    #[serde(
        rename = "injectContext",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub inject_context: Option<String>,
    /// Halt the run (gated events).
    #[serde(rename = "haltRun", default, skip_serializing_if = "Option::is_none")]
    pub halt_run: Option<HaltRun>,
    /// Queue a follow-up message.
    #[serde(
        rename = "queueMessage",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub queue_message: Option<QueueMessage>,
    /// Environment variables for the session's later hooks (`sessionStart`).
    #[serde(
        rename = "sessionEnv",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub session_env: Option<BTreeMap<String, String>>,
}

impl CopseResponse {
    /// `{"decision": "allow"}`.
    pub fn allow() -> Self {
        Self {
            decision: Some(Decision::Allow),
            ..Self::default()
        }
    }

    /// A denial with a message for the model.
    pub fn deny(agent_message: impl Into<String>) -> Self {
        Self {
            decision: Some(Decision::Deny),
            agent_message: Some(agent_message.into()),
            ..Self::default()
        }
    }

    /// Ask the user, with a message for the model.
    pub fn ask(agent_message: impl Into<String>) -> Self {
        Self {
            decision: Some(Decision::Ask),
            agent_message: Some(agent_message.into()),
            ..Self::default()
        }
    }

    /// Adds a message for the user.
    pub fn with_user_message(mut self, message: impl Into<String>) -> Self {
        self.user_message = Some(message.into());
        self
    }

    /// Adds context for the model.
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.inject_context = Some(context.into());
        self
    }

    /// Halts the run with a reason.
    pub fn halt(reason: impl Into<String>) -> Self {
        Self {
            halt_run: Some(HaltRun {
                reason: Some(reason.into()),
            }),
            ..Self::default()
        }
    }

    /// Queues a follow-up message for the agent.
    pub fn queue(text: impl Into<String>) -> Self {
        Self {
            queue_message: Some(QueueMessage {
                text: text.into(),
                send_now: false,
            }),
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is a failed test

    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_gate_payload_reads_and_writes_back_unchanged() {
        let payload = json!({
            "hook_event_name": "toolGate",
            "conversation_id": "c1",
            "generation_id": "g1",
            "workspace_roots": ["/w"],
            "tool_name": "run_shell",
            "input": {"command": "ls"}
        });
        let req: CopseRequest = serde_json::from_value(payload.clone()).unwrap();
        assert_eq!(req.shell_command(), Some("ls"));
        assert_eq!(req.event.name(), "toolGate");
        assert_eq!(serde_json::to_value(&req).unwrap(), payload);
    }

    #[test]
    fn an_unknown_event_still_reads() {
        let req: CopseRequest = serde_json::from_value(json!({
            "hook_event_name": "turnStart",
            "conversation_id": "c1",
            "generation_id": "g1",
            "whatever": 1
        }))
        .unwrap();
        assert_eq!(req.event, CopseEvent::Unknown);
    }

    #[test]
    fn responses_use_the_copse_spelling() {
        assert_eq!(
            serde_json::to_value(CopseResponse::deny("no").with_user_message("blocked")).unwrap(),
            json!({"decision": "deny", "agentMessage": "no", "userMessage": "blocked"})
        );
        assert_eq!(
            serde_json::to_value(CopseResponse::halt("stop")).unwrap(),
            json!({"haltRun": {"reason": "stop"}})
        );
        assert_eq!(
            serde_json::to_value(CopseResponse::default()).unwrap(),
            json!({})
        );
    }
}
