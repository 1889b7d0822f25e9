//! Reads for the CLI and the engine.

use std::collections::HashMap;

use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row, ToSql};
use serde::Serialize;

use super::record::{RunKind, RunRecord};
use super::schema::{RECORD_COLUMNS, RECORD_COLUMNS_V2};
use super::writer::to_i64;
use super::{DEFAULT_LIMIT, SpineError};

/// The outcome labels a filter may ask for.
const OUTCOMES: [&str; 5] = ["allow", "ask", "deny", "none", "failed"];

/// Which runs [`Spine::query`](super::Spine::query) returns. Every set field must
/// match; the default selects the newest [`DEFAULT_LIMIT`] runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    /// The wire event (`beforeShellExecution`) or the canonical one (`toolGate`).
    pub event: Option<String>,
    /// The outcome label: `allow`, `ask`, `deny`, `none` or `failed`.
    pub outcome: Option<String>,
    /// The dialect: `cursor`, `claude`, `copse`.
    pub dialect: Option<String>,
    /// Only runs that failed (a failure kind is recorded).
    pub failed: bool,
    /// Only runs that started at or after this unix ms.
    pub since: Option<u64>,
    /// Only runs of this session.
    pub session_id: Option<String>,
    /// Only records of this kind.
    pub kind: Option<RunKind>,
    /// At most this many rows; `None` means [`DEFAULT_LIMIT`].
    pub limit: Option<usize>,
}

impl RunFilter {
    pub(crate) fn validate(&self) -> Result<(), SpineError> {
        match &self.outcome {
            Some(o) if !OUTCOMES.contains(&o.as_str()) => Err(SpineError::InvalidFilter(format!(
                "unknown outcome `{o}` (expected one of {})",
                OUTCOMES.join(", ")
            ))),
            _ => Ok(()),
        }
    }
}

/// One run in a listing: everything but the captured streams and channel texts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunSummary {
    /// The run id.
    pub run_id: String,
    /// Run, dropped or suppressed.
    pub kind: RunKind,
    /// The conversation.
    pub session_id: String,
    /// The turn.
    pub turn_id: String,
    /// The dialect.
    pub dialect: String,
    /// The wire event.
    pub event: String,
    /// The canonical event.
    pub canonical: String,
    /// The command.
    pub command: String,
    /// The config file.
    pub source: String,
    /// `user` or `project`.
    pub scope: String,
    /// Start, unix ms.
    pub started_at: u64,
    /// Duration, ms.
    pub duration_ms: u64,
    /// Exit code; `None` when killed or never started.
    pub exit_code: Option<i32>,
    /// Whether stdout parsed.
    pub parse_ok: bool,
    /// The failure kind.
    pub failure: Option<String>,
    /// The failure message.
    pub failure_message: Option<String>,
    /// The sandbox state.
    pub sandbox: Option<String>,
    /// `allow`, `ask`, `deny`, `none` or `failed`.
    pub outcome: String,
    /// The decision given.
    pub decision: Option<String>,
    /// Whether the hook asked to halt.
    pub halt: bool,
    /// Whether it rewrote the tool input.
    pub updated_input: bool,
    /// Whether it injected context.
    pub inject_context: bool,
    /// Whether it queued a message.
    pub queued_message: bool,
    /// Whether it exported session environment.
    pub session_env: bool,
    /// Bytes of the agent message (as stored).
    pub agent_message_len: u64,
    /// Bytes of the user message (as stored).
    pub user_message_len: u64,
    /// Bytes of stdin, stdout and stderr (as stored).
    pub stdin_len: u64,
    /// See `stdin_len`.
    pub stdout_len: u64,
    /// See `stdin_len`.
    pub stderr_len: u64,
    /// Whether any stream or channel text was cut at the capture cap.
    pub truncated: bool,
    /// Whether a process of the run had left its process group and was killed when
    /// the run ended.
    pub leaked: bool,
}

const SUMMARY_COLUMNS: &str = "run_id, kind, session_id, turn_id, dialect, event, canonical, \
    command, source, scope, started_at, duration_ms, exit_code, parse_ok, failure, \
    failure_message, sandbox, outcome, decision, halt_reason IS NOT NULL, \
    updated_input IS NOT NULL, inject_context IS NOT NULL, queued_message IS NOT NULL, \
    session_env, ifnull(length(CAST(agent_message AS BLOB)), 0), \
    ifnull(length(CAST(user_message AS BLOB)), 0), length(stdin), length(stdout), \
    length(stderr), (stdin_truncated OR stdout_truncated OR stderr_truncated OR outcome_truncated)";

/// The summary's last column: `leaked` (v3), or false for an older store opened
/// read-only (not migrated).
const SUMMARY_LEAKED: [&str; 2] = ["leaked", "0"];

pub(crate) fn query(conn: &Connection, filter: &RunFilter) -> rusqlite::Result<Vec<RunSummary>> {
    let mut sql = String::from(" FROM hook_runs WHERE 1");
    let mut args: Vec<Box<dyn ToSql>> = Vec::new();
    let mut arg = |sql: &mut String, clause: &str, value: Box<dyn ToSql>| {
        args.push(value);
        sql.push_str(&clause.replace('?', &format!("?{}", args.len())));
    };
    if let Some(event) = &filter.event {
        arg(
            &mut sql,
            " AND (event = ? OR canonical = ?)",
            Box::new(event.clone()),
        );
    }
    if let Some(outcome) = &filter.outcome {
        arg(&mut sql, " AND outcome = ?", Box::new(outcome.clone()));
    }
    if let Some(dialect) = &filter.dialect {
        arg(&mut sql, " AND dialect = ?", Box::new(dialect.clone()));
    }
    if let Some(since) = filter.since {
        arg(&mut sql, " AND started_at >= ?", Box::new(to_i64(since)));
    }
    if let Some(session) = &filter.session_id {
        arg(&mut sql, " AND session_id = ?", Box::new(session.clone()));
    }
    if let Some(kind) = filter.kind {
        arg(&mut sql, " AND kind = ?", Box::new(kind.as_str()));
    }
    if filter.failed {
        sql.push_str(" AND failure IS NOT NULL");
    }
    let limit = filter.limit.unwrap_or(DEFAULT_LIMIT);
    arg(
        &mut sql,
        " ORDER BY started_at DESC, seq DESC LIMIT ?",
        Box::new(i64::try_from(limit).unwrap_or(i64::MAX)),
    );
    let select = |leaked: &str| format!("SELECT {SUMMARY_COLUMNS}, {leaked}{sql}");
    let mut stmt = match conn.prepare_cached(&select(SUMMARY_LEAKED[0])) {
        Ok(stmt) => stmt,
        Err(_) => conn.prepare_cached(&select(SUMMARY_LEAKED[1]))?,
    };
    let rows = stmt.query_map(
        rusqlite::params_from_iter(args.iter().map(|a| &**a)),
        summary,
    )?;
    rows.collect()
}

fn summary(row: &Row<'_>) -> rusqlite::Result<RunSummary> {
    Ok(RunSummary {
        run_id: row.get(0)?,
        kind: kind(row, 1)?,
        session_id: row.get(2)?,
        turn_id: row.get(3)?,
        dialect: row.get(4)?,
        event: row.get(5)?,
        canonical: row.get(6)?,
        command: row.get(7)?,
        source: row.get(8)?,
        scope: row.get(9)?,
        started_at: unsigned(row, 10)?,
        duration_ms: unsigned(row, 11)?,
        exit_code: row.get(12)?,
        parse_ok: row.get(13)?,
        failure: row.get(14)?,
        failure_message: row.get(15)?,
        sandbox: row.get(16)?,
        outcome: row.get(17)?,
        decision: row.get(18)?,
        halt: row.get(19)?,
        updated_input: row.get(20)?,
        inject_context: row.get(21)?,
        queued_message: row.get(22)?,
        session_env: row.get(23)?,
        agent_message_len: unsigned(row, 24)?,
        user_message_len: unsigned(row, 25)?,
        stdin_len: unsigned(row, 26)?,
        stdout_len: unsigned(row, 27)?,
        stderr_len: unsigned(row, 28)?,
        truncated: row.get(29)?,
        leaked: row.get(30)?,
    })
}

pub(crate) fn get(conn: &Connection, run_id: &str) -> rusqlite::Result<Option<RunRecord>> {
    let sql = format!("SELECT {RECORD_COLUMNS} FROM hook_runs WHERE run_id = ?1");
    let stmt = match conn.prepare_cached(&sql) {
        Ok(stmt) => stmt,
        // A store older than v3, opened read-only (not migrated).
        Err(_) => conn.prepare_cached(&format!(
            "SELECT {RECORD_COLUMNS_V2} FROM hook_runs WHERE run_id = ?1"
        ))?,
    };
    let mut stmt = stmt;
    stmt.query_row([run_id], record).optional()
}

fn record(row: &Row<'_>) -> rusqlite::Result<RunRecord> {
    Ok(RunRecord {
        run_id: row.get(0)?,
        kind: kind(row, 1)?,
        session_id: row.get(2)?,
        turn_id: row.get(3)?,
        dialect: row.get(4)?,
        event: row.get(5)?,
        canonical: row.get(6)?,
        command: row.get(7)?,
        source: row.get(8)?,
        scope: row.get(9)?,
        started_at: unsigned(row, 10)?,
        duration_ms: unsigned(row, 11)?,
        exit_code: row.get(12)?,
        parse_ok: row.get(13)?,
        failure: row.get(14)?,
        failure_message: row.get(15)?,
        policy: row.get(16)?,
        sandbox: row.get(17)?,
        outcome: row.get(18)?,
        decision: row.get(19)?,
        agent_message: row.get(20)?,
        user_message: row.get(21)?,
        halt_reason: row.get(22)?,
        inject_context: row.get(23)?,
        updated_input: row.get(24)?,
        queued_message: row.get(25)?,
        session_env: row.get(26)?,
        outcome_truncated: row.get(27)?,
        stdin: row.get(28)?,
        stdin_truncated: row.get(29)?,
        stdout: row.get(30)?,
        stdout_truncated: row.get(31)?,
        stderr: row.get(32)?,
        stderr_truncated: row.get(33)?,
        warnings: row
            .get::<_, Option<String>>(34)?
            .and_then(|w| serde_json::from_str(&w).ok())
            .unwrap_or_default(),
        redactions: unsigned(row, 35)?,
        leaked: row.get(36)?,
    })
}

pub(crate) fn first_failures(
    conn: &Connection,
    session_id: &str,
) -> rusqlite::Result<HashMap<(String, String, String), String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT source, event, command, ifnull(failure_message, failure) FROM hook_runs \
         WHERE session_id = ?1 AND failure IS NOT NULL ORDER BY seq",
    )?;
    let mut rows = stmt.query([session_id])?;
    let mut first = HashMap::new();
    while let Some(row) = rows.next()? {
        first
            .entry((row.get(0)?, row.get(1)?, row.get(2)?))
            .or_insert(row.get(3)?);
    }
    Ok(first)
}

/// The most recent failure of one hook (`recent_failures`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookFailure {
    /// The config file.
    pub source: String,
    /// The wire event.
    pub event: String,
    /// The command.
    pub command: String,
    /// The failure message (or kind).
    pub message: String,
    /// The run.
    pub run_id: String,
    /// When it started, unix ms.
    pub started_at: u64,
}

/// The most recent failure of each hook `(source, event, command)`, across every
/// session, newest first.
pub(crate) fn recent_failures(conn: &Connection) -> rusqlite::Result<Vec<HookFailure>> {
    let mut stmt = conn.prepare_cached(
        "SELECT source, event, command, ifnull(failure_message, failure), run_id, started_at \
         FROM hook_runs WHERE failure IS NOT NULL ORDER BY started_at DESC, seq DESC",
    )?;
    let mut rows = stmt.query([])?;
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let key: (String, String, String) = (row.get(0)?, row.get(1)?, row.get(2)?);
        if seen.insert(key.clone()) {
            out.push(HookFailure {
                source: key.0,
                event: key.1,
                command: key.2,
                message: row.get(3)?,
                run_id: row.get(4)?,
                started_at: u64::try_from(row.get::<_, i64>(5)?).unwrap_or(0),
            });
        }
    }
    Ok(out)
}

pub(crate) fn latest_session(conn: &Connection) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached(
        "SELECT session_id FROM hook_runs ORDER BY started_at DESC, seq DESC LIMIT 1",
    )?
    .query_row([], |row| row.get(0))
    .optional()
}

fn kind(row: &Row<'_>, idx: usize) -> rusqlite::Result<RunKind> {
    let name: String = row.get(idx)?;
    RunKind::parse(&name).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            idx,
            Type::Text,
            format!("unknown run kind `{name}`").into(),
        )
    })
}

fn unsigned(row: &Row<'_>, idx: usize) -> rusqlite::Result<u64> {
    let v: i64 = row.get(idx)?;
    Ok(u64::try_from(v).unwrap_or(0))
}
