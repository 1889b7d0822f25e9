//! The JSON-RPC 2.0 messages of `copse-hooks serve`: params and results per method.
//!
//! Params are camelCase (`sessionId`, `workspaceRoots`); results that mirror a CLI
//! command's `--json` output are that output, field for field (snake_case), so a
//! host and a shell script read the same shape.

use copse_hooks::{HostIdentity, ModelIdentity};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::output::{
    DoctorOutput, ListOutput, LogOutput, NoticeOutput, QueuedOutput, ShowOutput, TestOutput,
    VerdictFields,
};

/// JSON-RPC error codes used by the server.
pub mod codes {
    /// The line is not JSON (the connection carries on).
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a JSON-RPC request object, or a line over the size limit.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Bad params (the message names the field).
    pub const INVALID_PARAMS: i64 = -32602;
    /// The server failed.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// A request before `initialize` (or a second `initialize`).
    pub const NOT_INITIALIZED: i64 = -32002;
    /// No such session (closed, or opened by another connection).
    pub const UNKNOWN_SESSION: i64 = -32001;
    /// A request after `shutdown`.
    pub const SHUTTING_DOWN: i64 = -32003;
    /// The request was cancelled (`$/cancelRequest`).
    pub const REQUEST_CANCELLED: i64 = -32800;
    /// A `spine/show` run id that is not recorded, or a missing audit store.
    pub const NOT_FOUND: i64 = -32004;
    /// A socket server refused the connection: the peer looks like a hook (another
    /// pid namespace, more confined than the server, `COPSE_HOOK_DEPTH` set) or runs
    /// as another user. Sent once, with `id` `null`, then the connection is closed;
    /// nothing was run (the shim then runs the call in-process).
    pub const PEER_REFUSED: i64 = -32005;
    /// `shim/handle` from a shim of another build than the daemon (another version
    /// or executable), or to a daemon whose executable was deleted or replaced since
    /// it started. Nothing was run; the shim stops that daemon and starts its own.
    pub const STALE_DAEMON: i64 = -32006;
}

/// Who the client is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClientInfo {
    /// The client's name.
    pub name: String,
    /// The client's version.
    #[serde(default)]
    pub version: Option<String>,
}

/// `initialize` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InitializeParams {
    /// The workspace roots (absolute directories), in order.
    pub workspace_roots: Vec<String>,
    /// Trust these roots for this connection (their project hooks may run); default:
    /// what the user's settings trust.
    #[serde(default)]
    pub trusted: Option<bool>,
    /// Turn external hooks on (or off) for this connection; default: the settings.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Who the client is.
    #[serde(default)]
    pub client_info: Option<ClientInfo>,
    /// The protocol version the client speaks.
    #[serde(default)]
    pub protocol_version: Option<String>,
}

/// Who the server is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    /// `copse-hooks`.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// What the server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// Every method, notifications included.
    pub methods: Vec<String>,
    /// The canonical events, each a `hooks/<event>` method.
    pub events: Vec<String>,
    /// The canonical events that answer with a verdict (the rest answer
    /// `{detached: true}`).
    pub blocking_events: Vec<String>,
    /// Whether `$/cancelRequest` kills a blocking event's hooks.
    pub cancellation: bool,
    /// The largest request line accepted, in bytes.
    pub max_line_bytes: usize,
}

/// `initialize` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// Who the server is.
    pub server_info: ServerInfo,
    /// The protocol version spoken.
    pub protocol_version: String,
    /// What the server offers.
    pub capabilities: Capabilities,
}

/// No params (`shutdown`, `exit`, `hooks/list`, `doctor`): absent, `null` or `{}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// `session/open` params: the conversation's identity.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionOpenParams {
    /// The stable conversation id (the audit store's session id); default: an id
    /// unique to this session.
    #[serde(default)]
    pub conversation_id: Option<String>,
    /// The current generation (turn) id.
    #[serde(default)]
    pub generation_id: Option<String>,
    /// The model running the conversation.
    #[serde(default)]
    pub model: Option<ModelParams>,
    /// What only the host knows (transcript path, permission mode, its version, …);
    /// each field is sent to the hooks of the dialects whose vendor defines it, and
    /// an absent one is sent the way that vendor sends an unknown value.
    #[serde(default)]
    pub host: Option<HostParams>,
}

/// Host-known envelope fields (`session/open`, `session/update`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostParams {
    /// The conversation's transcript file (Claude `transcript_path`; Cursor
    /// `transcript_path` and `CURSOR_TRANSCRIPT_PATH`).
    #[serde(default)]
    pub transcript_path: Option<String>,
    /// The permission mode (`default`, `plan`, `acceptEdits`, `auto`, `dontAsk`,
    /// `bypassPermissions`; Claude `permission_mode`).
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// The host's version (Cursor `cursor_version` and `CURSOR_VERSION`).
    #[serde(default)]
    pub host_version: Option<String>,
    /// The signed-in user's email (Cursor `user_email` and `CURSOR_USER_EMAIL`).
    #[serde(default)]
    pub user_email: Option<String>,
    /// The assistant's last message of the turn (Claude Stop / SubagentStop
    /// `last_assistant_message`); filled from `hooks/afterAgentResponse` when absent.
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    /// The subagent's id on subagent events (Claude `agent_id`, Cursor
    /// `subagent_id`); generated when absent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The subagent's own transcript (Claude SubagentStop `agent_transcript_path`).
    #[serde(default)]
    pub agent_transcript_path: Option<String>,
    /// Whether the workspace is remote (Cursor sets `CURSOR_CODE_REMOTE=true`).
    #[serde(default)]
    pub remote: Option<bool>,
    /// How many stop follow-ups already continued the agent in this turn (Cursor
    /// `loop_count`, Claude `stop_hook_active`); counted by the session when absent.
    #[serde(default)]
    pub loop_count: Option<u64>,
}

impl HostParams {
    /// Sets on `host` every field given here, keeping the others.
    pub fn apply_to(self, host: &mut HostIdentity) {
        let HostParams {
            transcript_path,
            permission_mode,
            host_version,
            user_email,
            last_assistant_message,
            agent_id,
            agent_transcript_path,
            remote,
            loop_count,
        } = self;
        fn set<T>(slot: &mut Option<T>, value: Option<T>) {
            if value.is_some() {
                *slot = value;
            }
        }
        set(&mut host.transcript_path, transcript_path);
        set(&mut host.permission_mode, permission_mode);
        set(&mut host.host_version, host_version);
        set(&mut host.user_email, user_email);
        set(&mut host.last_assistant_message, last_assistant_message);
        set(&mut host.agent_id, agent_id);
        set(&mut host.agent_transcript_path, agent_transcript_path);
        set(&mut host.remote, remote);
        set(&mut host.loop_count, loop_count);
    }
}

/// `session/update` params: what changed about a session's identity since it was
/// opened (a new turn, another model, a new permission mode, …). Only the fields
/// given change; the next event's hooks see them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionUpdateParams {
    /// The session.
    pub session_id: String,
    /// The new generation (turn) id.
    #[serde(default)]
    pub generation_id: Option<String>,
    /// The model now running the conversation.
    #[serde(default)]
    pub model: Option<ModelParams>,
    /// Host-known fields that changed.
    #[serde(default)]
    pub host: Option<HostParams>,
}

/// `session/update` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionUpdateResult {
    /// Always true.
    pub updated: bool,
}

/// The model identity (Cursor's fields).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelParams {
    /// The legacy slug, e.g. `claude-sonnet-4`.
    pub model: String,
    /// The structured id, e.g. `anthropic/claude-sonnet-4`.
    #[serde(default)]
    pub model_id: String,
    /// `[{id, value}]`.
    #[serde(default)]
    pub model_params: Vec<ModelParamEntry>,
}

/// One model parameter.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelParamEntry {
    /// Name.
    pub id: String,
    /// Value.
    pub value: String,
}

impl From<ModelParams> for ModelIdentity {
    fn from(m: ModelParams) -> Self {
        ModelIdentity {
            model: m.model,
            model_id: m.model_id,
            model_params: m
                .model_params
                .into_iter()
                .map(|p| copse_hooks::ModelParam {
                    id: p.id,
                    value: p.value,
                })
                .collect(),
        }
    }
}

/// `session/open` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionOpenResult {
    /// Names the session in every later call on this connection.
    pub session_id: String,
}

/// Params naming a session (`session/close`, `queue/drain`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionParams {
    /// The session.
    pub session_id: String,
}

/// `session/close` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCloseResult {
    /// Always true.
    pub closed: bool,
}

/// `hooks/toolGate` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolGateParams {
    /// The session.
    pub session_id: String,
    /// The canonical tool id: `run_shell`, `read_file`, `mcp__<server>__<tool>` …
    pub tool: String,
    /// The tool input object.
    #[serde(default)]
    pub input: Map<String, Value>,
    /// For `read_file`: the file's content, as the host read it.
    #[serde(default)]
    pub file_content: Option<String>,
    /// The host's id for this tool call (Claude and Cursor `tool_use_id`, which
    /// hooks use to pair the gate with its `hooks/afterToolUse`, whose
    /// `toolCallId` should be the same); generated when absent.
    #[serde(default)]
    pub tool_use_id: Option<String>,
}

/// `hooks/notification` params (observation: the host showed the user a notification).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NotificationParams {
    /// The session.
    pub session_id: String,
    /// The notification text.
    pub message: String,
    /// Its title, when it has one.
    #[serde(default)]
    pub title: Option<String>,
    /// What kind, as the host names it (`permission_prompt`, `idle_prompt`, …).
    #[serde(default)]
    pub notification_type: String,
    /// Structured details, when the host has them.
    #[serde(default)]
    pub details: Value,
}

/// `hooks/beforeSubmitPrompt` params (starts a human turn).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BeforeSubmitPromptParams {
    /// The session.
    pub session_id: String,
    /// The prompt text.
    pub prompt: String,
}

/// `hooks/afterToolUse` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AfterToolUseParams {
    /// The session.
    pub session_id: String,
    /// The canonical tool id.
    pub tool: String,
    /// The tool input.
    #[serde(default)]
    pub input: Map<String, Value>,
    /// The tool's output text.
    #[serde(default)]
    pub output: String,
    /// Whether the tool failed.
    #[serde(default)]
    pub is_error: bool,
    /// How long it ran.
    #[serde(default)]
    pub duration_ms: u64,
    /// The host's id for the call.
    #[serde(default)]
    pub tool_call_id: String,
    /// The tool's result as the tool's own object (Claude hooks read it as
    /// `tool_response`); absent: derived from `output`.
    #[serde(default)]
    pub response: Option<Value>,
}

/// One edit (`hooks/afterFileEdit`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileEditParams {
    /// Text replaced.
    pub old_string: String,
    /// Replacement.
    pub new_string: String,
}

/// `hooks/afterFileEdit` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AfterFileEditParams {
    /// The session.
    pub session_id: String,
    /// The edited file (absolute, or relative to the first workspace root).
    pub file_path: String,
    /// The edits.
    #[serde(default)]
    pub edits: Vec<FileEditParams>,
}

/// `hooks/stop` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StopParams {
    /// The session.
    pub session_id: String,
    /// `completed` (default), `aborted` or `error`.
    #[serde(default)]
    pub status: Option<String>,
}

/// `hooks/subagentStart` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubagentStartParams {
    /// The session.
    pub session_id: String,
    /// The subagent type.
    pub subagent_type: String,
}

/// `hooks/subagentStop` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubagentStopParams {
    /// The session.
    pub session_id: String,
    /// The subagent type.
    pub subagent_type: String,
    /// `completed` (default), `error` or `aborted`.
    #[serde(default)]
    pub status: Option<String>,
}

/// `hooks/sessionStart` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionStartParams {
    /// The session.
    pub session_id: String,
    /// Whether this is the conversation's first turn (default true).
    #[serde(default)]
    pub first_turn: Option<bool>,
}

/// `hooks/sessionEnd` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionEndParams {
    /// The session.
    pub session_id: String,
    /// Why it ended (`completed`, `aborted`, `error`, `window_close`, `user_close`).
    #[serde(default)]
    pub reason: Option<String>,
    /// How long the session lasted.
    #[serde(default)]
    pub duration_ms: u64,
}

/// `hooks/preCompact` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PreCompactParams {
    /// The session.
    pub session_id: String,
    /// `auto` or `manual`.
    #[serde(default)]
    pub trigger: Option<String>,
    /// How full the context is, in percent.
    #[serde(default)]
    pub context_usage_percent: f64,
    /// Tokens in the context.
    #[serde(default)]
    pub context_tokens: u64,
    /// The context window.
    #[serde(default)]
    pub context_window_size: u64,
    /// Messages in the context.
    #[serde(default)]
    pub message_count: u64,
    /// Messages about to be compacted.
    #[serde(default)]
    pub messages_to_compact: u64,
    /// Whether this is the first compaction.
    #[serde(default)]
    pub is_first_compaction: bool,
}

/// `hooks/afterAgentResponse` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AfterAgentResponseParams {
    /// The session.
    pub session_id: String,
    /// The assistant's text.
    pub text: String,
}

/// `hooks/afterAgentThought` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AfterAgentThoughtParams {
    /// The session.
    pub session_id: String,
    /// The thinking text.
    pub text: String,
    /// How long the thinking took.
    #[serde(default)]
    pub duration_ms: Option<u64>,
}

/// The answer to a blocking event: the fields of `gate --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VerdictResult {
    /// Always false.
    pub detached: bool,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: VerdictFields,
    /// Why hooks did or did not run, and what failed (as in `gate --json`).
    #[serde(default)]
    pub notices: Vec<NoticeOutput>,
}

/// The answer to an observation event, given at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DetachedResult {
    /// Always true.
    pub detached: bool,
    /// Hooks dispatched.
    pub dispatched: usize,
    /// Hooks dropped because the session's dispatcher was full.
    pub dropped: usize,
}

/// `queue/message` notification params: a hook queued a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueueMessageParams {
    /// The session.
    pub session_id: String,
    /// The message.
    #[serde(flatten)]
    pub message: QueuedOutput,
}

/// `queue/drain` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueueDrainResult {
    /// What may be sent to the agent now (each spent one continuation).
    pub messages: Vec<QueuedOutput>,
    /// What stays queued (held for a human turn).
    pub pending: Vec<QueuedOutput>,
    /// Continuations left in the current turn tree.
    pub remaining_budget: u32,
}

/// `hooks/test` params (the dry-run tester).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HooksTestParams {
    /// The config file declaring the hook.
    pub source: String,
    /// The event as written in that file.
    pub event: String,
    /// Which entry (1-based, default 1).
    #[serde(default)]
    pub entry: Option<usize>,
    /// Stdin to send instead of the synthesised payload (an object, or JSON text).
    #[serde(default)]
    pub payload: Option<Value>,
}

/// `spine/log` params (the `log` filters).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpineLogParams {
    /// Only this event (wire or canonical name).
    #[serde(default)]
    pub event: Option<String>,
    /// Only this outcome.
    #[serde(default)]
    pub decision: Option<String>,
    /// Only this dialect.
    #[serde(default)]
    pub dialect: Option<String>,
    /// Only failed runs.
    #[serde(default)]
    pub failed: bool,
    /// Only runs since, unix ms.
    #[serde(default)]
    pub since: Option<u64>,
    /// Only this session (conversation).
    #[serde(default)]
    pub session_id: Option<String>,
    /// At most this many (default 50).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `spine/show` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpineShowParams {
    /// The run id (from `spine/log`).
    pub run_id: String,
}

/// `$/cancelRequest` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelParams {
    /// The id of the request to cancel.
    pub id: Value,
}

fn schema<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07().into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// A `hooks/<event>` method's name, params schema and whether it is blocking.
fn event_methods() -> Vec<(&'static str, Value)> {
    vec![
        ("hooks/toolGate", schema::<ToolGateParams>()),
        ("hooks/permissionRequest", schema::<ToolGateParams>()),
        ("hooks/notification", schema::<NotificationParams>()),
        (
            "hooks/beforeSubmitPrompt",
            schema::<BeforeSubmitPromptParams>(),
        ),
        ("hooks/afterToolUse", schema::<AfterToolUseParams>()),
        ("hooks/afterFileEdit", schema::<AfterFileEditParams>()),
        ("hooks/stop", schema::<StopParams>()),
        ("hooks/subagentStart", schema::<SubagentStartParams>()),
        ("hooks/subagentStop", schema::<SubagentStopParams>()),
        ("hooks/sessionStart", schema::<SessionStartParams>()),
        ("hooks/sessionEnd", schema::<SessionEndParams>()),
        ("hooks/preCompact", schema::<PreCompactParams>()),
        (
            "hooks/afterAgentResponse",
            schema::<AfterAgentResponseParams>(),
        ),
        (
            "hooks/afterAgentThought",
            schema::<AfterAgentThoughtParams>(),
        ),
    ]
}

/// `shim/handle` params: one agent hook call, forwarded by `copse-hooks shim`. Needs
/// no `initialize`: the call carries everything its engine is built from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShimHandleParams {
    /// `claude`, `gemini`, `codex` or `cursor`.
    pub agent: String,
    /// The agent's payload, as it arrived on the shim's stdin.
    pub payload: String,
    /// The shim's environment (the agent's), without LLM API keys: `HOME`,
    /// `COPSE_DIR`, `CLAUDE_PROJECT_DIR`, `GEMINI_PROJECT_DIR`, `CODEX_HOME`, … and
    /// the variables hooks start from. Variables whose name or value is not UTF-8 are
    /// not sent.
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// The shim's working directory (the agent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The shim's build: a daemon of another build answers [`codes::STALE_DAEMON`]
    /// and runs nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<BuildIdentity>,
    /// The agent's payload as it arrived, when `payload` is not it (a Copilot payload
    /// the shim named its event in): the agent's own hooks get these bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verbatim: Option<String>,
}

/// Which build of copse-hooks a process runs: its version and its executable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BuildIdentity {
    /// `copse-hooks --version`'s number.
    pub version: String,
    /// The executable's absolute path.
    pub exe: String,
}

/// `shim/handle` result: what the shim writes and exits with.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShimHandleResult {
    /// For the shim's stdout (the agent's JSON answer, or nothing).
    pub stdout: String,
    /// For the shim's stderr.
    pub stderr: String,
    /// The shim's exit code (2 blocks in every agent).
    pub exit_code: i32,
    /// The call is an observation: the daemon accepted it and runs its hooks
    /// detached (still audited) after answering.
    #[serde(default)]
    pub detached: bool,
    /// The daemon's build, which served the call (for logs and tests; the check is
    /// the daemon's, on [`ShimHandleParams::client`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon: Option<BuildIdentity>,
}

/// Every method: `(name, params schema, result schema)`; notifications have no
/// result.
pub fn methods() -> Vec<(String, Value, Option<Value>)> {
    let mut out: Vec<(String, Value, Option<Value>)> = vec![
        (
            "initialize".into(),
            schema::<InitializeParams>(),
            Some(schema::<InitializeResult>()),
        ),
        (
            "shutdown".into(),
            schema::<NoParams>(),
            Some(schema::<()>()),
        ),
        ("exit".into(), schema::<NoParams>(), None),
        (
            "session/open".into(),
            schema::<SessionOpenParams>(),
            Some(schema::<SessionOpenResult>()),
        ),
        (
            "session/update".into(),
            schema::<SessionUpdateParams>(),
            Some(schema::<SessionUpdateResult>()),
        ),
        (
            "session/close".into(),
            schema::<SessionParams>(),
            Some(schema::<SessionCloseResult>()),
        ),
    ];
    for (name, params) in event_methods() {
        let blocking = copse_hooks::CanonicalEvent::from_name(name.trim_start_matches("hooks/"))
            .is_some_and(|e| e.is_blocking());
        let result = if blocking {
            schema::<VerdictResult>()
        } else {
            schema::<DetachedResult>()
        };
        out.push((name.into(), params, Some(result)));
    }
    out.extend([
        ("queue/message".into(), schema::<QueueMessageParams>(), None),
        (
            "queue/drain".into(),
            schema::<SessionParams>(),
            Some(schema::<QueueDrainResult>()),
        ),
        (
            "hooks/list".into(),
            schema::<NoParams>(),
            Some(schema::<ListOutput>()),
        ),
        (
            "hooks/test".into(),
            schema::<HooksTestParams>(),
            Some(schema::<TestOutput>()),
        ),
        (
            "spine/log".into(),
            schema::<SpineLogParams>(),
            Some(schema::<LogOutput>()),
        ),
        (
            "spine/show".into(),
            schema::<SpineShowParams>(),
            Some(schema::<ShowOutput>()),
        ),
        (
            "doctor".into(),
            schema::<NoParams>(),
            Some(schema::<DoctorOutput>()),
        ),
        (
            "shim/handle".into(),
            schema::<ShimHandleParams>(),
            Some(schema::<ShimHandleResult>()),
        ),
        ("$/cancelRequest".into(), schema::<CancelParams>(), None),
    ]);
    out
}

/// Every method's name, in the order [`methods`] lists them.
pub fn method_names() -> Vec<String> {
    methods().into_iter().map(|(name, _, _)| name).collect()
}
