//! Canonical events: the dialect-free vocabulary a host speaks.
//!
//! A host never names a vendor event. It fires one of these canonical events with
//! its payload and the session identity; each dialect adapter decides which of its
//! wire events (if any) that becomes and how the stdin JSON looks.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The canonical events a host can fire.
///
/// `toolGate`, `beforeSubmitPrompt` and `subagentStart` are blocking decision events;
/// `permissionRequest` is a decision event too (a hook may approve or deny before the
/// user is asked); `sessionStart` is awaited for its context and environment and
/// `preCompact` because Claude hooks may block compaction; the rest are
/// observations (detached by default; `afterFileEdit` is blocking unless a Copse hook
/// opts into `async`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum CanonicalEvent {
    /// A tool call about to run.
    ToolGate,
    /// A human prompt about to be submitted.
    BeforeSubmitPrompt,
    /// A file the agent just edited.
    AfterFileEdit,
    /// The agent loop ended.
    Stop,
    /// A tool call finished (successfully or not).
    AfterToolUse,
    /// A subagent is about to start.
    SubagentStart,
    /// A subagent finished.
    SubagentStop,
    /// A conversation started.
    SessionStart,
    /// A conversation ended.
    SessionEnd,
    /// The context is about to be compacted.
    PreCompact,
    /// The assistant finished a message.
    AfterAgentResponse,
    /// The assistant finished a thinking block.
    AfterAgentThought,
    /// The host raised a notification for the user (a permission prompt, an idle
    /// agent). An observation: hooks cannot answer it.
    Notification,
    /// The host is about to ask the user to approve a tool call; hooks may allow
    /// (approve without asking) or deny it.
    PermissionRequest,
}

impl CanonicalEvent {
    /// Every canonical event, in a stable order.
    pub const ALL: [CanonicalEvent; 14] = [
        CanonicalEvent::ToolGate,
        CanonicalEvent::BeforeSubmitPrompt,
        CanonicalEvent::AfterFileEdit,
        CanonicalEvent::Stop,
        CanonicalEvent::AfterToolUse,
        CanonicalEvent::SubagentStart,
        CanonicalEvent::SubagentStop,
        CanonicalEvent::SessionStart,
        CanonicalEvent::SessionEnd,
        CanonicalEvent::PreCompact,
        CanonicalEvent::AfterAgentResponse,
        CanonicalEvent::AfterAgentThought,
        CanonicalEvent::Notification,
        CanonicalEvent::PermissionRequest,
    ];

    /// The canonical (camelCase) name.
    pub fn name(self) -> &'static str {
        match self {
            CanonicalEvent::ToolGate => "toolGate",
            CanonicalEvent::BeforeSubmitPrompt => "beforeSubmitPrompt",
            CanonicalEvent::AfterFileEdit => "afterFileEdit",
            CanonicalEvent::Stop => "stop",
            CanonicalEvent::AfterToolUse => "afterToolUse",
            CanonicalEvent::SubagentStart => "subagentStart",
            CanonicalEvent::SubagentStop => "subagentStop",
            CanonicalEvent::SessionStart => "sessionStart",
            CanonicalEvent::SessionEnd => "sessionEnd",
            CanonicalEvent::PreCompact => "preCompact",
            CanonicalEvent::AfterAgentResponse => "afterAgentResponse",
            CanonicalEvent::AfterAgentThought => "afterAgentThought",
            CanonicalEvent::Notification => "notification",
            CanonicalEvent::PermissionRequest => "permissionRequest",
        }
    }

    /// Parses a canonical name.
    pub fn from_name(name: &str) -> Option<CanonicalEvent> {
        CanonicalEvent::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether the caller waits for this event's hooks and gets a verdict
    /// (`sessionStart` is awaited so its context reaches the conversation and its
    /// environment every later hook).
    pub fn is_blocking(self) -> bool {
        matches!(
            self,
            CanonicalEvent::ToolGate
                | CanonicalEvent::BeforeSubmitPrompt
                | CanonicalEvent::SubagentStart
                | CanonicalEvent::AfterFileEdit
                | CanonicalEvent::SessionStart
                | CanonicalEvent::PreCompact
                | CanonicalEvent::PermissionRequest
        )
    }

    /// Whether a hook failure may deny the action (fail-closed applies).
    pub fn is_gated(self) -> bool {
        matches!(
            self,
            CanonicalEvent::ToolGate
                | CanonicalEvent::BeforeSubmitPrompt
                | CanonicalEvent::SubagentStart
                | CanonicalEvent::PermissionRequest
        )
    }
}

impl std::fmt::Display for CanonicalEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One `{id, value}` entry of the model parameters (Cursor's array form).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelParam {
    /// Parameter name, e.g. `context`.
    pub id: String,
    /// Parameter value, e.g. `1m`.
    pub value: String,
}

/// The model actually running the turn.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ModelIdentity {
    /// The legacy model slug, e.g. `claude-sonnet-4`.
    pub model: String,
    /// The structured model id, e.g. `anthropic/claude-sonnet-4`.
    pub model_id: String,
    /// Model parameters as an ordered array.
    #[serde(default)]
    pub model_params: Vec<ModelParam>,
}

/// Who is asking: the conversation, the current turn and the model.
///
/// Detached hooks capture this by value at dispatch, so a late hook still reports
/// the turn it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SessionIdentity {
    /// Stable conversation (thread) id; empty outside any conversation.
    pub conversation_id: String,
    /// The current generation (turn) id; changes with every human prompt.
    pub generation_id: String,
    /// The model running the turn, when known.
    pub model: Option<ModelIdentity>,
    /// Host-known identity fields hooks read (transcript path, permission mode,
    /// host version, user email, last assistant message, subagent ids); each is sent
    /// only to the dialects whose vendor defines it.
    #[serde(flatten)]
    pub host: HostIdentity,
}

/// What only the host knows about the conversation, sent where a vendor defines it.
///
/// Every field is optional: an absent value is sent the way the vendor sends an
/// unknown one (Cursor `transcript_path: null`, Claude `permission_mode: "default"`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HostIdentity {
    /// The conversation's transcript file (Claude `transcript_path`, Cursor
    /// `transcript_path` and `CURSOR_TRANSCRIPT_PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_path: Option<String>,
    /// The permission mode (`default`, `plan`, `acceptEdits`, `auto`, `dontAsk`,
    /// `bypassPermissions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// The host's version (Cursor `cursor_version` and `CURSOR_VERSION`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_version: Option<String>,
    /// The signed-in user's email (Cursor `user_email` and `CURSOR_USER_EMAIL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_email: Option<String>,
    /// The assistant's last message of the turn (Claude Stop / SubagentStop
    /// `last_assistant_message`). The session fills it from `afterAgentResponse`
    /// when the host does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
    /// The subagent's id, on subagent events (Claude `agent_id`, Cursor
    /// `subagent_id`); generated when the host gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Whether the workspace is remote (SSH, container, cloud): Cursor then sets
    /// `CURSOR_CODE_REMOTE=true` for its hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<bool>,
    /// The subagent's own transcript (Claude SubagentStop `agent_transcript_path`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_transcript_path: Option<String>,
    /// How many stop follow-ups already continued the agent in this turn (Cursor
    /// `loop_count`; Claude `stop_hook_active` when non-zero). The session counts
    /// them when the host does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_count: Option<u64>,
}

impl HostIdentity {
    /// The first field (by its snake_case name) whose text contains a NUL byte. Such a
    /// value can reach no hook's environment (Cursor's `CURSOR_*` variables carry
    /// several of them), so a host's API rejects it up front rather than have every
    /// hook that would see it fail to start.
    pub fn nul_field(&self) -> Option<&'static str> {
        [
            ("transcript_path", &self.transcript_path),
            ("permission_mode", &self.permission_mode),
            ("host_version", &self.host_version),
            ("user_email", &self.user_email),
            ("last_assistant_message", &self.last_assistant_message),
            ("agent_id", &self.agent_id),
            ("agent_transcript_path", &self.agent_transcript_path),
        ]
        .into_iter()
        .find(|(_, v)| v.as_deref().is_some_and(|v| v.contains('\0')))
        .map(|(name, _)| name)
    }
}

impl SessionIdentity {
    /// An identity with the given conversation id, no turn yet and no model.
    pub fn new(conversation_id: impl Into<String>) -> Self {
        SessionIdentity {
            conversation_id: conversation_id.into(),
            generation_id: String::new(),
            model: None,
            host: HostIdentity::default(),
        }
    }
}

/// One edit applied to a file (`afterFileEdit`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FileEdit {
    /// Text replaced.
    pub old_string: String,
    /// Replacement text.
    pub new_string: String,
}

impl FileEdit {
    /// One edit: `old_string` replaced by `new_string`.
    pub fn new(old_string: impl Into<String>, new_string: impl Into<String>) -> Self {
        FileEdit {
            old_string: old_string.into(),
            new_string: new_string.into(),
        }
    }
}

/// A canonical event together with its payload.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EventPayload {
    /// A tool call about to run.
    ToolGate(ToolCall),
    /// A human prompt about to be submitted.
    BeforeSubmitPrompt {
        /// The prompt text.
        prompt: String,
    },
    /// A file the agent edited.
    AfterFileEdit {
        /// Absolute path of the edited file.
        file_path: String,
        /// The edits, when the host knows them.
        edits: Vec<FileEdit>,
    },
    /// The agent loop ended.
    Stop {
        /// `completed`, `aborted` or `error`.
        status: String,
    },
    /// A tool call finished.
    AfterToolUse(ToolResult),
    /// A subagent is about to start.
    SubagentStart {
        /// The subagent type, e.g. `explore`.
        subagent_type: String,
    },
    /// A subagent finished.
    SubagentStop {
        /// The subagent type.
        subagent_type: String,
        /// `completed`, `error` or `aborted`.
        status: String,
    },
    /// A conversation started.
    SessionStart {
        /// Whether this is the conversation's first turn.
        first_turn: bool,
    },
    /// A conversation ended.
    SessionEnd {
        /// Why it ended (`completed`, `aborted`, `error`, `window_close`, `user_close`).
        reason: String,
        /// How long the session lasted.
        duration_ms: u64,
    },
    /// The context is about to be compacted.
    PreCompact(Compaction),
    /// The assistant finished a message.
    AfterAgentResponse {
        /// The final assistant text.
        text: String,
    },
    /// The assistant finished a thinking block.
    AfterAgentThought {
        /// The aggregated thinking text.
        text: String,
        /// How long the thinking took, when known.
        duration_ms: Option<u64>,
    },
    /// The host raised a notification for the user.
    Notification {
        /// The notification text.
        message: String,
        /// Its title, when it has one.
        title: Option<String>,
        /// What kind, as the host names it (`permission_prompt`, `idle_prompt`,
        /// Gemini's `ToolPermission`, …).
        notification_type: String,
        /// Structured details, when the host has them (an object, or null).
        details: Value,
    },
    /// The host is about to ask the user to approve this tool call. A verdict
    /// decision of `Allow` approves it without asking (the only event where `Allow`
    /// is an approval), `Deny` refuses it, none asks the user as usual.
    PermissionRequest(ToolCall),
}

impl EventPayload {
    /// The canonical event this payload belongs to.
    pub fn event(&self) -> CanonicalEvent {
        match self {
            EventPayload::ToolGate(_) => CanonicalEvent::ToolGate,
            EventPayload::BeforeSubmitPrompt { .. } => CanonicalEvent::BeforeSubmitPrompt,
            EventPayload::AfterFileEdit { .. } => CanonicalEvent::AfterFileEdit,
            EventPayload::Stop { .. } => CanonicalEvent::Stop,
            EventPayload::AfterToolUse(_) => CanonicalEvent::AfterToolUse,
            EventPayload::SubagentStart { .. } => CanonicalEvent::SubagentStart,
            EventPayload::SubagentStop { .. } => CanonicalEvent::SubagentStop,
            EventPayload::SessionStart { .. } => CanonicalEvent::SessionStart,
            EventPayload::SessionEnd { .. } => CanonicalEvent::SessionEnd,
            EventPayload::PreCompact(_) => CanonicalEvent::PreCompact,
            EventPayload::AfterAgentResponse { .. } => CanonicalEvent::AfterAgentResponse,
            EventPayload::AfterAgentThought { .. } => CanonicalEvent::AfterAgentThought,
            EventPayload::Notification { .. } => CanonicalEvent::Notification,
            EventPayload::PermissionRequest(_) => CanonicalEvent::PermissionRequest,
        }
    }
}

/// A tool call about to run (`toolGate`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The canonical tool id: `run_shell`, `read_file`, `mcp__<server>__<tool>`, …
    pub tool: String,
    /// The tool input object.
    pub input: Map<String, Value>,
    /// For `read_file`: the file's content, read eagerly by the host.
    pub file_content: Option<String>,
    /// The host's id for this tool call (Claude and Cursor `tool_use_id`); the same
    /// id should reach the call's `afterToolUse` as `tool_call_id`. [`ToolCall::new`]
    /// generates one.
    pub tool_use_id: String,
    /// For an MCP tool: the server it belongs to, when the host knows it (Cursor's
    /// `beforeMCPExecution` sends its `url` or `command`).
    pub mcp_server: Option<McpServer>,
    /// What the agent said while making this call ("Installing dependencies…"):
    /// Cursor's `preToolUse` sends it as `agent_message`.
    pub agent_message: Option<String>,
    /// The kind of JSON value given as the input when it was not an object.
    not_object: Option<&'static str>,
}

/// A tool call's input, as [`ToolCall::new`] takes it: a JSON object.
///
/// From a `serde_json::Map` it is that object. From a `serde_json::Value`: an object is
/// that object, `null` is an empty object, and any other value (a string, a number,
/// an array, a boolean) makes a call whose [`ToolCall::validate`] fails, so the gate
/// denies it without running a hook, as it does any malformed input.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolInput {
    map: Map<String, Value>,
    not_object: Option<&'static str>,
}

impl From<Map<String, Value>> for ToolInput {
    fn from(map: Map<String, Value>) -> Self {
        ToolInput {
            map,
            not_object: None,
        }
    }
}

impl From<Value> for ToolInput {
    fn from(value: Value) -> Self {
        let not_object = match &value {
            Value::Object(_) | Value::Null => None,
            Value::Bool(_) => Some("a boolean"),
            Value::Number(_) => Some("a number"),
            Value::String(_) => Some("a string"),
            Value::Array(_) => Some("an array"),
        };
        ToolInput {
            map: match value {
                Value::Object(map) => map,
                _ => Map::new(),
            },
            not_object,
        }
    }
}

/// An MCP server, as Cursor's `beforeMCPExecution` describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct McpServer {
    /// The server's URL (remote servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The server's command line (local servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

impl ToolCall {
    /// A tool call with no file content. `input` is a JSON object: a
    /// `serde_json::Map`, or a `serde_json::Value` (see [`ToolInput`] for a `Value`
    /// that is not an object: `null` is an empty input, anything else a call that
    /// fails validation and so runs no hook).
    ///
    /// ```
    /// use copse_hooks::ToolCall;
    /// use serde_json::json;
    ///
    /// let call = ToolCall::new("run_shell", json!({"command": "ls"}));
    /// assert_eq!(call.input_str("command"), "ls");
    /// assert!(call.validate().is_ok());
    ///
    /// let wrong = ToolCall::new("run_shell", json!("ls"));
    /// let err = wrong.validate().unwrap_err();
    /// assert_eq!(err.to_string(), "run_shell input must be a JSON object (got a string)");
    /// ```
    pub fn new(tool: impl Into<String>, input: impl Into<ToolInput>) -> Self {
        let ToolInput { map, not_object } = input.into();
        ToolCall {
            tool: tool.into(),
            input: map,
            file_content: None,
            tool_use_id: new_tool_use_id(),
            mcp_server: None,
            agent_message: None,
            not_object,
        }
    }

    /// The same call with the agent's message that accompanied it.
    pub fn with_agent_message(mut self, message: impl Into<String>) -> Self {
        self.agent_message = Some(message.into());
        self
    }

    /// The same call with a host-assigned tool use id (an empty id is replaced by a
    /// generated one: a tool use id is never missing).
    pub fn with_tool_use_id(mut self, id: impl Into<String>) -> Self {
        let id = id.into();
        if !id.is_empty() {
            self.tool_use_id = id;
        }
        self
    }

    /// A string field of the input, or `""`.
    pub fn input_str(&self, key: &str) -> &str {
        self.input.get(key).and_then(Value::as_str).unwrap_or("")
    }

    /// Checks the input against the tool's declared shape ([`tool::shape`]); an input
    /// given as a JSON value that is not an object fails here.
    pub fn validate(&self) -> Result<(), ToolInputError> {
        if let Some(kind) = self.not_object {
            return Err(ToolInputError {
                tool: self.tool.clone(),
                field: String::new(),
                problem: format!("must be a JSON object (got {kind})"),
            });
        }
        tool::validate(&self.tool, &self.input)
    }
}

/// A canonical tool input that does not have its tool's declared shape. Hooks never
/// see such an input: the host must handle the error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{tool} input{}{problem}", if field.is_empty() { " ".to_string() } else { format!(": \"{field}\" ") })]
#[non_exhaustive]
pub struct ToolInputError {
    /// The canonical tool.
    pub tool: String,
    /// The field at fault (for an "one of" rule, the names joined by `|`); empty when
    /// the input as a whole is at fault.
    pub field: String,
    /// What is wrong: `is missing`, `must be a string (got a number)`, ...
    pub problem: String,
}

/// A finished tool call (`afterToolUse`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolResult {
    /// The canonical tool id.
    pub tool: String,
    /// The tool input object.
    pub input: Map<String, Value>,
    /// The tool's output text (capped before it reaches a hook).
    pub output: String,
    /// Whether the tool failed.
    pub is_error: bool,
    /// How long the tool ran.
    pub duration_ms: u64,
    /// The host's id for this tool call.
    pub tool_call_id: String,
    /// The tool's structured result (Claude `tool_response`, e.g. Write's
    /// `{filePath, success}`), when the host has one; otherwise the dialects build
    /// the vendor's shape from `output`.
    pub response: Option<Value>,
}

impl ToolResult {
    /// A finished call that succeeded, took no measured time, has no structured
    /// response and a generated tool call id; set the other fields as needed.
    pub fn new(
        tool: impl Into<String>,
        input: Map<String, Value>,
        output: impl Into<String>,
    ) -> Self {
        ToolResult {
            tool: tool.into(),
            input,
            output: output.into(),
            is_error: false,
            duration_ms: 0,
            tool_call_id: new_tool_use_id(),
            response: None,
        }
    }
}

/// A fresh tool use id (`toolu_copse_<time><pid><n>`), unique in this process.
pub fn new_tool_use_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("toolu_copse_{nanos:x}{:x}{n:x}", std::process::id())
}

/// Canonical tool ids and helpers.
pub mod tool {
    /// Shell command execution.
    pub const RUN_SHELL: &str = "run_shell";
    /// File read.
    pub const READ_FILE: &str = "read_file";
    /// File write.
    pub const WRITE_FILE: &str = "write_file";
    /// In-place string replacement edit.
    pub const STR_REPLACE: &str = "str_replace";
    /// File deletion.
    pub const DELETE_FILE: &str = "delete_file";
    /// Code search.
    pub const SEARCH_CODE: &str = "search_code";
    /// Subagent exploration.
    pub const EXPLORE: &str = "explore";

    /// Every canonical tool id the engine maps to the dialects (`docs/tools.md`).
    pub const CANONICAL: &[&str] = &[
        "run_shell",
        "run_background",
        "read_file",
        "list_dir",
        "read_staged_diff",
        "read_terminal",
        "read_skill",
        "write_file",
        "str_replace",
        "rename_file",
        "make_directory",
        "delete_file",
        "search_code",
        "find_files",
        "search_codebase",
        "semantic_search",
        "explore",
        "investigate_ci",
        "delegate_step",
    ];

    /// Whether a canonical tool id names an MCP tool (`mcp__<server>__<tool>`).
    pub fn is_mcp(tool: &str) -> bool {
        tool.starts_with("mcp__")
    }

    /// One declared field of a canonical tool's input. Every declared field is a
    /// string when present; fields not declared pass through untouched.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Field {
        /// The name (with its aliases, any of which may carry the value).
        pub names: &'static [&'static str],
        /// Whether one of the names must be present.
        pub required: bool,
    }

    const fn req(names: &'static [&'static str]) -> Field {
        Field {
            names,
            required: true,
        }
    }

    const fn opt(names: &'static [&'static str]) -> Field {
        Field {
            names,
            required: false,
        }
    }

    /// The declared input shape of a canonical tool (`None` for MCP and unknown
    /// tools, whose input is the tool's own business).
    pub fn shape(tool: &str) -> Option<&'static [Field]> {
        const RUN_SHELL_SHAPE: &[Field] = &[req(&["command"]), opt(&["cwd"])];
        const READ_FILE_SHAPE: &[Field] = &[req(&["path"])];
        const WRITE_FILE_SHAPE: &[Field] = &[req(&["path"]), opt(&["content"])];
        const STR_REPLACE_SHAPE: &[Field] = &[
            req(&["path"]),
            opt(&["old_str", "old_string"]),
            opt(&["new_str", "new_string"]),
        ];
        const DELETE_FILE_SHAPE: &[Field] = &[req(&["path"])];
        const SEARCH_CODE_SHAPE: &[Field] = &[req(&["query", "pattern"]), opt(&["path"])];
        const EXPLORE_SHAPE: &[Field] = &[req(&["prompt", "task", "query"]), opt(&["description"])];
        Some(match tool {
            RUN_SHELL => RUN_SHELL_SHAPE,
            READ_FILE => READ_FILE_SHAPE,
            WRITE_FILE => WRITE_FILE_SHAPE,
            STR_REPLACE => STR_REPLACE_SHAPE,
            DELETE_FILE => DELETE_FILE_SHAPE,
            SEARCH_CODE => SEARCH_CODE_SHAPE,
            EXPLORE => EXPLORE_SHAPE,
            _ => return None,
        })
    }

    fn kind(v: &serde_json::Value) -> &'static str {
        match v {
            serde_json::Value::Null => "null",
            serde_json::Value::Bool(_) => "a boolean",
            serde_json::Value::Number(_) => "a number",
            serde_json::Value::String(_) => "a string",
            serde_json::Value::Array(_) => "an array",
            serde_json::Value::Object(_) => "an object",
        }
    }

    /// Checks `input` against `tool`'s declared shape.
    pub fn validate(
        tool: &str,
        input: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), super::ToolInputError> {
        let Some(shape) = shape(tool) else {
            return Ok(());
        };
        let err = |field: String, problem: String| super::ToolInputError {
            tool: tool.to_string(),
            field,
            problem,
        };
        for field in shape {
            let mut present = false;
            for name in field.names {
                if let Some(v) = input.get(*name) {
                    if !v.is_string() {
                        return Err(err(
                            (*name).to_string(),
                            format!("must be a string (got {})", kind(v)),
                        ));
                    }
                    present = true;
                }
            }
            if field.required && !present {
                return Err(err(field.names.join("|"), "is missing".to_string()));
            }
        }
        Ok(())
    }
}

/// The context about to be compacted (`preCompact`), with Cursor's published fields.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Compaction {
    /// `auto` or `manual`.
    pub trigger: String,
    /// How full the context window is, in percent.
    pub context_usage_percent: f64,
    /// Tokens in the context.
    pub context_tokens: u64,
    /// The model's context window.
    pub context_window_size: u64,
    /// Messages in the context.
    pub message_count: u64,
    /// Messages that will be compacted.
    pub messages_to_compact: u64,
    /// Whether this is the conversation's first compaction.
    pub is_first_compaction: bool,
}

impl Compaction {
    /// A compaction with the given trigger (`auto` or `manual`) and every count zero;
    /// set the other fields as the host knows them.
    pub fn new(trigger: impl Into<String>) -> Self {
        Compaction {
            trigger: trigger.into(),
            ..Compaction::default()
        }
    }
}

/// The most bytes of a tool's output that reach a hook's stdin.
pub const TOOL_OUTPUT_CAP: usize = 100_000;

/// Caps a tool output at [`TOOL_OUTPUT_CAP`] bytes (on a character boundary), saying
/// how much was left out.
pub fn cap_tool_output(output: &mut String) {
    if output.len() <= TOOL_OUTPUT_CAP {
        return;
    }
    let mut end = TOOL_OUTPUT_CAP;
    while !output.is_char_boundary(end) {
        end -= 1;
    }
    let omitted = output.len() - end;
    output.truncate(end);
    output.push_str(&format!("\n… [output truncated: {omitted} bytes omitted]"));
}
