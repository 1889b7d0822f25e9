//! Requests: validation, the lifecycle rules, and one function per method.

use std::path::Path;
use std::sync::Arc;

use copse_hooks::spine::{RunFilter, Spine, SpineError};
use copse_hooks::{
    CanonicalEvent, EventPayload, Fired, QueueListener, Session, SessionIdentity, ToolCall,
};
use copse_hooks::{Compaction, FileEdit, ToolResult};
use copse_hooks_wire::PROTOCOL_VERSION;
use copse_hooks_wire::output::{
    ListOutput, LogOutput, NoticeOutput, QueuedOutput, ShowOutput, TestOutput, VerdictFields,
};
use copse_hooks_wire::rpc::{self, codes};
use serde_json::{Value, json};

use crate::params::{RpcError, parse};
use crate::{Conn, ConnectionEnd, lock};

type RpcResult = Result<Value, RpcError>;

/// Handles one line; `Some` ends the connection.
pub(crate) fn handle_line(conn: &Arc<Conn>, line: &[u8]) -> Option<ConnectionEnd> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            conn.send_error(
                Value::Null,
                codes::PARSE_ERROR,
                &format!("parse error: {e}"),
            );
            return None;
        }
    };
    let Value::Object(mut msg) = value else {
        let why = if value.is_array() {
            "batch requests are not supported: send one request per line"
        } else {
            "a request must be a JSON object"
        };
        conn.send_error(Value::Null, codes::INVALID_REQUEST, why);
        return None;
    };
    let id = msg.remove("id");
    let reply_id = id.clone().unwrap_or(Value::Null);
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        if id.is_some() {
            conn.send_error(
                reply_id,
                codes::INVALID_REQUEST,
                "\"jsonrpc\" must be \"2.0\"",
            );
        }
        return None;
    }
    if let Some(id) = &id
        && !(id.is_string() || id.is_number() || id.is_null())
    {
        conn.send_error(
            Value::Null,
            codes::INVALID_REQUEST,
            "\"id\" must be a string or a number",
        );
        return None;
    }
    let Some(method) = msg.get("method").and_then(Value::as_str).map(str::to_owned) else {
        if id.is_some() {
            conn.send_error(
                reply_id,
                codes::INVALID_REQUEST,
                "\"method\" must be a string",
            );
        }
        return None;
    };
    let params = msg.remove("params");
    let Some(id) = id else {
        return notification(conn, &method, params);
    };
    request(conn, id, &method, params);
    None
}

fn notification(conn: &Arc<Conn>, method: &str, params: Option<Value>) -> Option<ConnectionEnd> {
    match method {
        "exit" => Some(ConnectionEnd::Exit {
            clean: lock(&conn.state).shutdown,
        }),
        "$/cancelRequest" => {
            if let Ok(p) = parse::<rpc::CancelParams>(params) {
                let key = p.id.to_string();
                if let Some(token) = lock(&conn.state).inflight.get(&key) {
                    token.cancel();
                }
            }
            None
        }
        // Other notifications (e.g. `initialized`) need no answer.
        _ => None,
    }
}

/// Methods that may run hooks or read the audit store run on the pool.
fn pooled(method: &str) -> bool {
    method.starts_with("hooks/") || method.starts_with("spine/") || method == "doctor"
}

fn request(conn: &Arc<Conn>, id: Value, method: &str, params: Option<Value>) {
    if method == "initialize" {
        let answer = initialize(conn, params);
        respond(conn, id, answer);
        return;
    }
    if method == "shim/handle" {
        if lock(&conn.state).shutdown {
            conn.send_error(
                id,
                codes::SHUTTING_DOWN,
                "the server is shutting down: only exit is accepted",
            );
            return;
        }
        // Needs no initialize: the call carries its own environment.
        crate::shim::request(conn, id, params);
        return;
    }
    {
        let st = lock(&conn.state);
        if st.hosted.is_none() {
            drop(st);
            conn.send_error(
                id,
                codes::NOT_INITIALIZED,
                &format!("{method} before initialize: send initialize first"),
            );
            return;
        }
        if st.shutdown {
            drop(st);
            conn.send_error(
                id,
                codes::SHUTTING_DOWN,
                "the server is shutting down: only exit is accepted",
            );
            return;
        }
    }
    if !pooled(method) {
        let answer = match method {
            "shutdown" => parse::<rpc::NoParams>(params).map(|_| {
                lock(&conn.state).shutdown = true;
                Value::Null
            }),
            "session/open" => parse(params).and_then(|p| session_open(conn, p)),
            "session/update" => parse(params).and_then(|p| session_update(conn, p)),
            "session/close" => parse(params).and_then(|p| session_close(conn, p)),
            "queue/drain" => parse(params).and_then(|p| queue_drain(conn, p)),
            _ => Err(RpcError::new(
                codes::METHOD_NOT_FOUND,
                format!("method not found: {method}"),
            )),
        };
        respond(conn, id, answer);
        return;
    }
    let known = method == "hooks/list"
        || method == "hooks/test"
        || method == "spine/log"
        || method == "spine/show"
        || method == "doctor"
        || event_of(method).is_some();
    if !known {
        conn.send_error(
            id,
            codes::METHOD_NOT_FOUND,
            &format!("method not found: {method}"),
        );
        return;
    }
    let Some((token, key)) = conn.begin_request(&id) else {
        return;
    };
    let conn2 = Arc::clone(conn);
    let method = method.to_owned();
    conn.server.pool.execute(move || {
        let conn = conn2;
        let answer = token.enter(|| call_pooled(&conn, &method, params));
        let cancelled = token.is_cancelled();
        {
            let mut st = lock(&conn.state);
            st.inflight.remove(&key);
        }
        if cancelled {
            conn.send_error(
                id,
                codes::REQUEST_CANCELLED,
                "request cancelled: its hooks were killed",
            );
        } else {
            respond(&conn, id, answer);
        }
        let mut st = lock(&conn.state);
        st.running -= 1;
        if st.running == 0 {
            conn.idle.notify_all();
        }
    });
}

fn respond(conn: &Conn, id: Value, answer: RpcResult) {
    match answer {
        Ok(result) => conn.send_result(id, result),
        Err(e) => {
            let (code, message) = e.parts();
            conn.send_error(id, code, &message)
        }
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> RpcResult {
    serde_json::to_value(v).map_err(|e| RpcError::new(codes::INTERNAL_ERROR, e.to_string()))
}

fn initialize(conn: &Arc<Conn>, params: Option<Value>) -> RpcResult {
    if lock(&conn.state).hosted.is_some() {
        return Err(RpcError::new(codes::INVALID_REQUEST, "already initialized"));
    }
    let p: rpc::InitializeParams = parse(params)?;
    if p.workspace_roots.is_empty() {
        return Err(RpcError::new(
            codes::INVALID_PARAMS,
            "invalid params: field `workspaceRoots`: at least one workspace root is needed",
        ));
    }
    for root in &p.workspace_roots {
        if !Path::new(root).is_absolute() || !Path::new(root).is_dir() {
            return Err(RpcError::new(
                codes::INVALID_PARAMS,
                format!(
                    "invalid params: field `workspaceRoots`: {root} is not an absolute path to a directory"
                ),
            ));
        }
    }
    let hosted = conn
        .server
        .hosted(&p)
        .map_err(|e| RpcError::new(codes::INTERNAL_ERROR, e))?;
    {
        let mut st = lock(&conn.state);
        st.hosted = Some(hosted);
        st.params = Some(p);
    }
    let events: Vec<String> = CanonicalEvent::ALL
        .iter()
        .map(|e| e.name().to_owned())
        .collect();
    let blocking: Vec<String> = CanonicalEvent::ALL
        .iter()
        .filter(|e| e.is_blocking())
        .map(|e| e.name().to_owned())
        .collect();
    to_value(&rpc::InitializeResult {
        server_info: rpc::ServerInfo {
            name: "copse-hooks".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        protocol_version: PROTOCOL_VERSION.into(),
        capabilities: rpc::Capabilities {
            methods: rpc::method_names(),
            events,
            blocking_events: blocking,
            cancellation: true,
            max_line_bytes: conn.server.config.max_line_bytes,
        },
    })
}

fn session_open(conn: &Arc<Conn>, p: rpc::SessionOpenParams) -> RpcResult {
    let hosted = hosted(conn)?;
    let mut identity = SessionIdentity::new(p.conversation_id.unwrap_or_default());
    identity.generation_id = p.generation_id.unwrap_or_default();
    identity.model = p.model.map(Into::into);
    if let Some(host) = p.host {
        host.apply_to(&mut identity.host);
    }
    check_host(&identity)?;
    let session = hosted.engine.session(identity);
    let session_id = format!("s{}", conn.server.next());
    let weak = Arc::downgrade(conn);
    let sid = session_id.clone();
    session.set_queue_listener(Some(QueueListener(Arc::new(move |m| {
        if let Some(conn) = weak.upgrade() {
            let params = rpc::QueueMessageParams {
                session_id: sid.clone(),
                message: QueuedOutput::from(m),
            };
            if let Ok(params) = serde_json::to_value(&params) {
                conn.send(&json!({"jsonrpc": "2.0", "method": "queue/message", "params": params}));
            }
        }
    }))));
    lock(&conn.state)
        .sessions
        .insert(session_id.clone(), session);
    to_value(&rpc::SessionOpenResult { session_id })
}

fn session(conn: &Conn, id: &str) -> Result<Session, RpcError> {
    lock(&conn.state).sessions.get(id).cloned().ok_or_else(|| {
        RpcError::new(
            codes::UNKNOWN_SESSION,
            format!("invalid params: field `sessionId`: no open session {id} on this connection"),
        )
    })
}

fn session_close(conn: &Conn, p: rpc::SessionParams) -> RpcResult {
    let removed = lock(&conn.state).sessions.remove(&p.session_id);
    match removed {
        Some(s) => {
            s.set_queue_listener(None);
            to_value(&rpc::SessionCloseResult { closed: true })
        }
        None => Err(RpcError::new(
            codes::UNKNOWN_SESSION,
            format!(
                "invalid params: field `sessionId`: no open session {} on this connection",
                p.session_id
            ),
        )),
    }
}

/// A host field no hook's environment could carry is refused, naming it as the
/// params do (`host.hostVersion`).
fn check_host(identity: &SessionIdentity) -> Result<(), RpcError> {
    let Some(field) = identity.host.nul_field() else {
        return Ok(());
    };
    let mut camel = String::new();
    let mut upper = false;
    for c in field.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            camel.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            camel.push(c);
        }
    }
    Err(RpcError::new(
        codes::INVALID_PARAMS,
        format!(
            "invalid params: field `host.{camel}`: contains a NUL byte, which no hook's environment can carry"
        ),
    ))
}

fn session_update(conn: &Conn, p: rpc::SessionUpdateParams) -> RpcResult {
    let s = session(conn, &p.session_id)?;
    let mut identity = s.identity();
    if let Some(generation_id) = p.generation_id {
        identity.generation_id = generation_id;
    }
    if let Some(model) = p.model {
        identity.model = Some(model.into());
    }
    if let Some(host) = p.host {
        host.apply_to(&mut identity.host);
    }
    check_host(&identity)?;
    s.set_identity(identity);
    to_value(&rpc::SessionUpdateResult { updated: true })
}

fn queue_drain(conn: &Conn, p: rpc::SessionParams) -> RpcResult {
    let s = session(conn, &p.session_id)?;
    let messages = s.drain_queue();
    to_value(&rpc::QueueDrainResult {
        messages: messages.iter().map(QueuedOutput::from).collect(),
        pending: s.queue().iter().map(QueuedOutput::from).collect(),
        remaining_budget: s.remaining_budget(),
    })
}

fn event_of(method: &str) -> Option<CanonicalEvent> {
    method
        .strip_prefix("hooks/")
        .and_then(CanonicalEvent::from_name)
}

/// The connection's engine, as the settings are now: when they changed since it was
/// built (one `stat` per request), the connection moves to an engine built from the
/// new settings, and so do its open sessions (their state kept). An `untrust` or
/// `disable` run while a connection is open reaches its very next request.
fn hosted(conn: &Conn) -> Result<crate::Hosted, RpcError> {
    let (hosted, params) = {
        let st = lock(&conn.state);
        let hosted = st
            .hosted
            .clone()
            .ok_or_else(|| RpcError::new(codes::NOT_INITIALIZED, "not initialized"))?;
        (hosted, st.params.clone())
    };
    let Some(params) = params else {
        return Ok(hosted);
    };
    if hosted.context.settings_stamp == crate::settings_stamp(&hosted.context.settings_path) {
        return Ok(hosted);
    }
    let fresh = conn
        .server
        .hosted(&params)
        .map_err(|e| RpcError::new(codes::INTERNAL_ERROR, e))?;
    let mut st = lock(&conn.state);
    st.hosted = Some(fresh.clone());
    for session in st.sessions.values_mut() {
        *session = session.rebind(&fresh.engine);
    }
    Ok(fresh)
}

fn call_pooled(conn: &Arc<Conn>, method: &str, params: Option<Value>) -> RpcResult {
    if let Some(event) = event_of(method) {
        return fire(conn, event, params);
    }
    let hosted = hosted(conn)?;
    match method {
        "hooks/list" => {
            parse::<rpc::NoParams>(params)?;
            let spine = read_spine(&hosted.engine);
            let listing = hosted
                .engine
                .list_with(spine.as_ref().or(hosted.engine.spine()));
            to_value(&ListOutput::from(&listing))
        }
        "hooks/test" => {
            let p: rpc::HooksTestParams = parse(params)?;
            let payload = match &p.payload {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(v) => Some(v.to_string()),
            };
            // Always in the sandbox, whatever the hook's `"sandbox": false` says: a
            // client of the server is not the user at a terminal.
            let mut options = copse_hooks::DryRunOptions::default();
            options.sandbox = true;
            let dry = hosted
                .engine
                .dry_run_with(
                    Path::new(&p.source),
                    &p.event,
                    p.entry.unwrap_or(1),
                    payload.as_deref(),
                    options,
                )
                .map_err(|e| {
                    RpcError::new(codes::INVALID_PARAMS, format!("invalid params: {e}"))
                })?;
            to_value(&TestOutput::from(&dry))
        }
        "spine/log" => {
            let p: rpc::SpineLogParams = parse(params)?;
            let Some(spine) = read_spine(&hosted.engine) else {
                return to_value(&LogOutput::new(&[]));
            };
            let filter = RunFilter {
                event: p.event,
                outcome: p.decision,
                dialect: p.dialect,
                failed: p.failed,
                since: p.since,
                session_id: p.session_id,
                limit: Some(p.limit.unwrap_or(50)),
                ..RunFilter::default()
            };
            let runs = spine
                .query(&filter)
                .map_err(|e| RpcError::new(codes::INTERNAL_ERROR, e.to_string()))?;
            let mut out = LogOutput::new(&runs);
            let short = spine.short_ids().unwrap_or_default();
            for run in &mut out.runs {
                run.short_id = short.get(&run.run_id).cloned();
            }
            to_value(&out)
        }
        "spine/show" => {
            let p: rpc::SpineShowParams = parse(params)?;
            let Some(spine) = read_spine(&hosted.engine) else {
                return Err(RpcError::new(
                    codes::NOT_FOUND,
                    format!("no run {}: nothing is recorded yet", p.run_id),
                ));
            };
            // A short id or a unique prefix names a run too, as in `copse-hooks show`.
            let id = match spine.resolve(&p.run_id) {
                Ok(copse_hooks::spine::RunIdMatch::One(id)) => id,
                Ok(copse_hooks::spine::RunIdMatch::Ambiguous(ids)) => {
                    return Err(RpcError::new(
                        codes::INVALID_PARAMS,
                        format!("run id {} is ambiguous: {}", p.run_id, ids.join(", ")),
                    ));
                }
                _ => p.run_id.clone(),
            };
            match spine.get(&id) {
                Ok(Some(r)) => {
                    let mut out = ShowOutput::from(&r);
                    out.short_id = spine.short_ids().ok().and_then(|m| m.get(&id).cloned());
                    to_value(&out)
                }
                Ok(None) => Err(RpcError::new(
                    codes::NOT_FOUND,
                    format!("no run {}", p.run_id),
                )),
                Err(e) => Err(RpcError::new(codes::INTERNAL_ERROR, e.to_string())),
            }
        }
        "doctor" => {
            parse::<rpc::NoParams>(params)?;
            let others = conn.server.persistent_status();
            to_value(&crate::doctor::report_with(&hosted, &others))
        }
        _ => Err(RpcError::new(
            codes::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
        )),
    }
}

/// The audit store for reading: the engine's own (flushed first), else the file.
fn read_spine(engine: &copse_hooks::Engine) -> Option<Spine> {
    engine.flush_spine();
    match Spine::open_read_only(engine.config().copse_dir.join("spine.db")) {
        Ok(s) => Some(s),
        Err(SpineError::Missing { .. }) => None,
        Err(_) => None,
    }
}

fn fire(conn: &Arc<Conn>, event: CanonicalEvent, params: Option<Value>) -> RpcResult {
    let hosted = hosted(conn)?;
    let (session_id, payload) = payload(event, params, hosted.engine.workspace_roots())?;
    let session = session(conn, &session_id)?;
    let before = hosted.engine.explain(event);
    let fired = session.fire(payload);
    match fired {
        Fired::Verdict(v) => {
            // As `gate --json`: the engine's reasons, the session's notices, then
            // one per failed run.
            let mut notices: Vec<NoticeOutput> = before.iter().map(NoticeOutput::from).collect();
            notices.extend(session.take_notices().iter().map(NoticeOutput::from));
            notices.extend(
                v.runs
                    .iter()
                    .filter_map(|r| hosted.engine.explain_run(r))
                    .map(|n| NoticeOutput::from(&n)),
            );
            to_value(&rpc::VerdictResult {
                detached: false,
                verdict: VerdictFields::from(&v),
                notices,
            })
        }
        Fired::Detached {
            dispatched,
            dropped,
        } => to_value(&rpc::DetachedResult {
            detached: true,
            dispatched,
            dropped,
        }),
    }
}

/// The session id and engine payload of an event's params.
fn payload(
    event: CanonicalEvent,
    params: Option<Value>,
    roots: &[std::path::PathBuf],
) -> Result<(String, EventPayload), RpcError> {
    let status = |s: Option<String>| s.unwrap_or_else(|| "completed".to_owned());
    Ok(match event {
        CanonicalEvent::ToolGate => {
            let p: rpc::ToolGateParams = parse(params)?;
            let mut call = ToolCall::new(p.tool, p.input);
            call.file_content = p.file_content;
            if let Some(id) = p.tool_use_id {
                call = call.with_tool_use_id(id);
            }
            (p.session_id, EventPayload::ToolGate(call))
        }
        CanonicalEvent::PermissionRequest => {
            let p: rpc::ToolGateParams = parse(params)?;
            let mut call = ToolCall::new(p.tool, p.input);
            call.file_content = p.file_content;
            if let Some(id) = p.tool_use_id {
                call = call.with_tool_use_id(id);
            }
            (p.session_id, EventPayload::PermissionRequest(call))
        }
        CanonicalEvent::Notification => {
            let p: rpc::NotificationParams = parse(params)?;
            (
                p.session_id,
                EventPayload::Notification {
                    message: p.message,
                    title: p.title,
                    notification_type: p.notification_type,
                    details: p.details,
                },
            )
        }
        CanonicalEvent::BeforeSubmitPrompt => {
            let p: rpc::BeforeSubmitPromptParams = parse(params)?;
            (
                p.session_id,
                EventPayload::BeforeSubmitPrompt { prompt: p.prompt },
            )
        }
        CanonicalEvent::AfterToolUse => {
            let p: rpc::AfterToolUseParams = parse(params)?;
            (
                p.session_id,
                EventPayload::AfterToolUse({
                    let mut r = ToolResult::new(p.tool, p.input, p.output);
                    r.is_error = p.is_error;
                    r.duration_ms = p.duration_ms;
                    r.tool_call_id = p.tool_call_id;
                    r.response = p.response;
                    r
                }),
            )
        }
        CanonicalEvent::AfterFileEdit => {
            let p: rpc::AfterFileEditParams = parse(params)?;
            let file_path = match roots.first() {
                Some(root) if Path::new(&p.file_path).is_relative() => {
                    root.join(&p.file_path).display().to_string()
                }
                _ => p.file_path,
            };
            (
                p.session_id,
                EventPayload::AfterFileEdit {
                    file_path,
                    edits: p
                        .edits
                        .into_iter()
                        .map(|e| FileEdit::new(e.old_string, e.new_string))
                        .collect(),
                },
            )
        }
        CanonicalEvent::Stop => {
            let p: rpc::StopParams = parse(params)?;
            (
                p.session_id,
                EventPayload::Stop {
                    status: status(p.status),
                },
            )
        }
        CanonicalEvent::SubagentStart => {
            let p: rpc::SubagentStartParams = parse(params)?;
            (
                p.session_id,
                EventPayload::SubagentStart {
                    subagent_type: p.subagent_type,
                },
            )
        }
        CanonicalEvent::SubagentStop => {
            let p: rpc::SubagentStopParams = parse(params)?;
            (
                p.session_id,
                EventPayload::SubagentStop {
                    subagent_type: p.subagent_type,
                    status: status(p.status),
                },
            )
        }
        CanonicalEvent::SessionStart => {
            let p: rpc::SessionStartParams = parse(params)?;
            (
                p.session_id,
                EventPayload::SessionStart {
                    first_turn: p.first_turn.unwrap_or(true),
                },
            )
        }
        CanonicalEvent::SessionEnd => {
            let p: rpc::SessionEndParams = parse(params)?;
            (
                p.session_id,
                EventPayload::SessionEnd {
                    reason: status(p.reason),
                    duration_ms: p.duration_ms,
                },
            )
        }
        CanonicalEvent::PreCompact => {
            let p: rpc::PreCompactParams = parse(params)?;
            (
                p.session_id,
                EventPayload::PreCompact({
                    let mut c = Compaction::new(p.trigger.unwrap_or_else(|| "auto".to_owned()));
                    c.context_usage_percent = p.context_usage_percent;
                    c.context_tokens = p.context_tokens;
                    c.context_window_size = p.context_window_size;
                    c.message_count = p.message_count;
                    c.messages_to_compact = p.messages_to_compact;
                    c.is_first_compaction = p.is_first_compaction;
                    c
                }),
            )
        }
        CanonicalEvent::AfterAgentResponse => {
            let p: rpc::AfterAgentResponseParams = parse(params)?;
            (
                p.session_id,
                EventPayload::AfterAgentResponse { text: p.text },
            )
        }
        CanonicalEvent::AfterAgentThought => {
            let p: rpc::AfterAgentThoughtParams = parse(params)?;
            (
                p.session_id,
                EventPayload::AfterAgentThought {
                    text: p.text,
                    duration_ms: p.duration_ms,
                },
            )
        }
        // An event the engine learned after this server was written.
        other => {
            return Err(RpcError::new(
                codes::METHOD_NOT_FOUND,
                format!("event {} has no JSON-RPC method yet", other.name()),
            ));
        }
    })
}
