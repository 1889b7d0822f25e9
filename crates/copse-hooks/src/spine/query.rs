//! Reads for the CLI and the engine.

use std::collections::HashMap;

use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row, ToSql};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::record::{RunKind, RunRecord};
use super::schema::{RECORD_COLUMNS, RECORD_COLUMNS_V2};
use super::writer::to_i64;
use super::{DEFAULT_LIMIT, SpineError};

/// The outcome labels a filter may ask for.
const OUTCOMES: [&str; 5] = ["allow", "ask", "deny", "none", "failed"];

/// Leaves out the guard's quiet runs (it allowed a call no hook ran for, no rule
/// matched): kept for `audit replay --guard`, listed only when guard runs are asked for.
const QUIET_GUARD: &str = " AND NOT (kind = 'guard' AND decision IS NULL)";

/// Which runs [`Spine::query`](super::Spine::query) returns. Every set field must
/// match; the default selects the newest [`DEFAULT_LIMIT`] runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    /// The wire event (`beforeShellExecution`) or the canonical one (`toolGate`).
    pub event: Option<String>,
    /// The outcome label: `allow`, `ask`, `deny`, `none` or `failed`.
    pub outcome: Option<String>,
    /// The dialect: `cursor`, `claude`, `copse`, `gemini`, `codex`.
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
    /// The tool call the run was about (`run_shell` + `npm install`), read from the
    /// recorded stdin; `None` for events that carry no tool call.
    pub tool_call: Option<ToolCallSummary>,
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

/// [`SUMMARY_LEAKED`]'s entry for the store behind `conn`.
fn leaked_column(conn: &Connection) -> &'static str {
    if conn
        .prepare_cached("SELECT leaked FROM hook_runs LIMIT 0")
        .is_ok()
    {
        SUMMARY_LEAKED[0]
    } else {
        SUMMARY_LEAKED[1]
    }
}

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
    } else {
        sql.push_str(QUIET_GUARD);
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
    let select = |leaked: &str| format!("SELECT {SUMMARY_COLUMNS}, {leaked}, stdin{sql}");
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
        // Column 31 is the stdin (every summary select ends with it); the event is 5.
        tool_call: {
            let stdin: Option<Vec<u8>> = row.get(31)?;
            let event: String = row.get(5)?;
            stdin.and_then(|s| tool_call_summary(&event, &s))
        },
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
/// session, newest first; a hook whose failure was followed by a run that succeeded is
/// not listed (its "last error" is stale: the author fixed it).
pub(crate) fn recent_failures(conn: &Connection) -> rusqlite::Result<Vec<HookFailure>> {
    let mut stmt = conn.prepare_cached(
        "SELECT source, event, command, ifnull(failure_message, failure), run_id, started_at \
         FROM hook_runs h WHERE failure IS NOT NULL AND NOT EXISTS (SELECT 1 FROM hook_runs n \
         WHERE n.source = h.source AND n.command = h.command AND n.event = h.event \
         AND n.kind = 'run' AND n.failure IS NULL \
         AND (n.started_at > h.started_at OR (n.started_at = h.started_at AND n.seq > h.seq))) \
         ORDER BY started_at DESC, seq DESC",
    )?;
    first_per_hook(&mut stmt)
}

/// The persistent hooks whose latest run found them broken (failure kind `broken`),
/// newest first: what `list` and `doctor` mark as broken. A hook that ran without that
/// failure since (the engine restarted, or its script changed) is not listed.
pub(crate) fn broken_hooks(conn: &Connection) -> rusqlite::Result<Vec<HookFailure>> {
    let mut stmt = conn.prepare_cached(
        "SELECT source, event, command, ifnull(failure_message, failure), run_id, started_at \
         FROM hook_runs h WHERE failure = 'broken' AND NOT EXISTS (SELECT 1 FROM hook_runs n \
         WHERE n.source = h.source AND n.command = h.command AND n.event = h.event \
         AND n.seq > h.seq AND n.kind = 'run' AND (n.failure IS NULL OR n.failure <> 'broken')) \
         ORDER BY started_at DESC, seq DESC",
    )?;
    first_per_hook(&mut stmt)
}

/// Runs a statement selecting `source, event, command, message, run_id, started_at`
/// newest first, and keeps the first row of each hook (source, event, command).
fn first_per_hook(stmt: &mut rusqlite::CachedStatement<'_>) -> rusqlite::Result<Vec<HookFailure>> {
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

// ---------------------------------------------------------------------------------
// Browsing: keyset pages, sessions and window statistics (the web page's reads).
// ---------------------------------------------------------------------------------

/// A position in the newest-first order of runs: a page continues strictly after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RunCursor {
    /// The start time (unix ms) of the last run of the previous page.
    pub started_at: u64,
    /// Its row number (ties on `started_at` are broken by it).
    pub seq: i64,
}

/// A selection of runs for [`Spine::page`](super::Spine::page). Every set field must
/// match; pages are newest first and continue after `after`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunQuery {
    /// The wire event (`beforeShellExecution`) or the canonical one (`toolGate`).
    pub event: Option<String>,
    /// The outcome label: `allow`, `ask`, `deny`, `none` or `failed`.
    pub outcome: Option<String>,
    /// The dialect: `cursor`, `claude`, `copse`.
    pub dialect: Option<String>,
    /// The failure kind (`timeout`, `exit`, ...); `any` selects every failed run.
    pub failure: Option<String>,
    /// Only runs of this session.
    pub session_id: Option<String>,
    /// Only runs of hooks declared in this config file.
    pub source: Option<String>,
    /// Only runs of this command.
    pub command: Option<String>,
    /// Only records of this kind.
    pub kind: Option<RunKind>,
    /// Only runs that started at or after this unix ms.
    pub since: Option<u64>,
    /// Only runs that started before this unix ms.
    pub until: Option<u64>,
    /// Continue after this position.
    pub after: Option<RunCursor>,
    /// At most this many rows; `None` means [`DEFAULT_LIMIT`].
    pub limit: Option<usize>,
}

impl RunQuery {
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

/// One page of runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunPage {
    /// The runs, newest first.
    pub runs: Vec<RunSummary>,
    /// Where the next page starts; `None` when this page is the last.
    pub next: Option<RunCursor>,
}

pub(crate) fn page(conn: &Connection, q: &RunQuery) -> rusqlite::Result<RunPage> {
    let limit = q.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let mut args: Vec<Box<dyn ToSql>> = Vec::new();
    let leaked = leaked_column(conn);
    // An event may be a wire name or a canonical one. `event = ? OR canonical = ?` would
    // defeat both indexes, so each is its own newest-first branch (each able to walk its
    // index backwards and stop at the page size), and the union is cut to the page.
    let sql = match &q.event {
        None => page_branch(q, None, leaked, limit, &mut args),
        Some(event) => {
            let wire = page_branch(q, Some(("event", event)), leaked, limit, &mut args);
            let canonical = page_branch(q, Some(("canonical", event)), leaked, limit, &mut args);
            // Result columns 11 and 33 are `started_at` and `seq`.
            format!(
                "SELECT * FROM ({wire}) UNION SELECT * FROM ({canonical}) \
                 ORDER BY 11 DESC, 33 DESC LIMIT {}",
                limit + 1
            )
        }
    };
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(rusqlite::params_from_iter(args.iter().map(|a| &**a)))?;
    let mut runs = Vec::with_capacity(limit);
    let mut last = None;
    let mut more = false;
    while let Some(row) = rows.next()? {
        if runs.len() == limit {
            more = true;
            break;
        }
        let run = summary(row)?;
        last = Some(RunCursor {
            started_at: run.started_at,
            seq: row.get(32)?,
        });
        runs.push(run);
    }
    Ok(RunPage {
        runs,
        next: if more { last } else { None },
    })
}

/// One newest-first `SELECT` of a page (one more row than the page, to tell whether
/// there is a next one), with the event condition on `event_column` when given.
fn page_branch(
    q: &RunQuery,
    event: Option<(&str, &String)>,
    leaked: &str,
    limit: usize,
    args: &mut Vec<Box<dyn ToSql>>,
) -> String {
    let mut sql = format!("SELECT {SUMMARY_COLUMNS}, {leaked}, stdin, seq FROM hook_runs WHERE 1");
    let mut arg = |sql: &mut String, clause: &str, value: Box<dyn ToSql>| {
        args.push(value);
        sql.push_str(&clause.replace('?', &format!("?{}", args.len())));
    };
    if let Some((column, value)) = event {
        arg(
            &mut sql,
            &format!(" AND {column} = ?"),
            Box::new(value.clone()),
        );
    }
    if let Some(outcome) = &q.outcome {
        arg(&mut sql, " AND outcome = ?", Box::new(outcome.clone()));
    }
    if let Some(dialect) = &q.dialect {
        arg(&mut sql, " AND dialect = ?", Box::new(dialect.clone()));
    }
    match q.failure.as_deref() {
        None => {}
        Some("any") => sql.push_str(" AND failure IS NOT NULL"),
        Some(kind) => arg(&mut sql, " AND failure = ?", Box::new(kind.to_owned())),
    }
    if let Some(session) = &q.session_id {
        arg(&mut sql, " AND session_id = ?", Box::new(session.clone()));
    }
    if let Some(source) = &q.source {
        arg(&mut sql, " AND source = ?", Box::new(source.clone()));
    }
    if let Some(command) = &q.command {
        arg(&mut sql, " AND command = ?", Box::new(command.clone()));
    }
    if q.kind.is_none() {
        sql.push_str(QUIET_GUARD);
    }
    if let Some(kind) = q.kind {
        arg(&mut sql, " AND kind = ?", Box::new(kind.as_str()));
        if kind != RunKind::Run {
            // Lets the partial index of the rare kinds serve the query.
            sql.push_str(" AND kind <> 'run'");
        }
    }
    if let Some(since) = q.since {
        arg(&mut sql, " AND started_at >= ?", Box::new(to_i64(since)));
    }
    if let Some(until) = q.until {
        arg(&mut sql, " AND started_at < ?", Box::new(to_i64(until)));
    }
    if let Some(after) = q.after {
        // `started_at <= t` is a range the index can seek to; the rest breaks ties.
        let at = to_i64(after.started_at);
        arg(&mut sql, " AND started_at <= ?", Box::new(at));
        arg(&mut sql, " AND (started_at < ?", Box::new(at));
        arg(&mut sql, " OR seq < ?)", Box::new(after.seq));
    }
    sql.push_str(&format!(
        " ORDER BY started_at DESC, seq DESC LIMIT {}",
        limit + 1
    ));
    sql
}

/// The newest row number: grows whenever a run is recorded (live updates poll it).
pub(crate) fn latest_seq(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT ifnull(max(seq), 0) FROM hook_runs")?
        .query_row([], |row| row.get(0))
}

/// The start of the oldest run, if any.
pub(crate) fn oldest_started(conn: &Connection) -> rusqlite::Result<Option<u64>> {
    let v: Option<i64> = conn
        .prepare_cached("SELECT min(started_at) FROM hook_runs")?
        .query_row([], |row| row.get(0))?;
    Ok(v.map(|v| u64::try_from(v).unwrap_or(0)))
}

/// One session, as a list of sessions shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    /// The conversation id.
    pub session_id: String,
    /// The first run's start, unix ms.
    pub first_at: u64,
    /// The last run's start, unix ms.
    pub last_at: u64,
    /// How many records.
    pub runs: u64,
    /// How many denied.
    pub denials: u64,
    /// How many failed.
    pub failures: u64,
    /// The dialects that ran, sorted.
    pub dialects: Vec<String>,
}

/// How many rows of the newest-first index a sessions listing reads at most to find
/// distinct sessions: bounds the work per request whatever the store holds.
const SESSION_SCAN: usize = 200_000;

pub(crate) fn sessions(
    conn: &Connection,
    before: Option<u64>,
    limit: usize,
) -> rusqlite::Result<Vec<SessionSummary>> {
    let mut ids: Vec<String> = Vec::new();
    {
        let mut stmt = conn.prepare_cached(
            "SELECT session_id FROM hook_runs WHERE started_at < ?1 \
             ORDER BY started_at DESC, seq DESC LIMIT ?2",
        )?;
        let before = before.map_or(i64::MAX, to_i64);
        let mut rows = stmt.query(rusqlite::params![before, SESSION_SCAN as i64])?;
        while let Some(row) = rows.next()? {
            let id: String = row.get(0)?;
            if !ids.contains(&id) {
                ids.push(id);
                if ids.len() >= limit {
                    break;
                }
            }
        }
    }
    let mut stmt = conn.prepare_cached(
        "SELECT min(started_at), max(started_at), count(*), \
         ifnull(sum(outcome = 'deny'), 0), ifnull(sum(failure IS NOT NULL), 0), \
         ifnull(group_concat(DISTINCT dialect), '') \
         FROM hook_runs WHERE session_id = ?1",
    )?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let summary = stmt.query_row([&id], |row| {
            let dialects: String = row.get(5)?;
            let mut dialects: Vec<String> = dialects
                .split(',')
                .filter(|d| !d.is_empty())
                .map(str::to_owned)
                .collect();
            dialects.sort();
            Ok(SessionSummary {
                session_id: id.clone(),
                first_at: unsigned(row, 0)?,
                last_at: unsigned(row, 1)?,
                runs: unsigned(row, 2)?,
                denials: unsigned(row, 3)?,
                failures: unsigned(row, 4)?,
                dialects,
            })
        })?;
        out.push(summary);
    }
    Ok(out)
}

/// Every run of a session in start order (at most `limit`).
pub(crate) fn session_runs(
    conn: &Connection,
    session_id: &str,
    limit: usize,
) -> rusqlite::Result<Vec<RunSummary>> {
    let leaked = leaked_column(conn);
    let sql = format!(
        "SELECT {SUMMARY_COLUMNS}, {leaked}, stdin FROM hook_runs WHERE session_id = ?1 \
         ORDER BY started_at, seq LIMIT ?2"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(
        rusqlite::params![session_id, i64::try_from(limit).unwrap_or(i64::MAX)],
        summary,
    )?;
    rows.collect()
}

/// The distinct values recorded in the columns the filters offer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FilterValues {
    /// Dialects.
    pub dialects: Vec<String>,
    /// Wire events.
    pub events: Vec<String>,
    /// Canonical events.
    pub canonical: Vec<String>,
    /// Failure kinds.
    pub failures: Vec<String>,
}

/// The distinct values of an indexed column, by skipping through its index (one
/// probe per distinct value, not a scan).
fn distinct(conn: &Connection, column: &str) -> rusqlite::Result<Vec<String>> {
    let sql = format!(
        "WITH RECURSIVE d(v) AS (SELECT min({column}) FROM hook_runs WHERE {column} IS NOT NULL \
         UNION ALL SELECT (SELECT min({column}) FROM hook_runs WHERE {column} > d.v) \
         FROM d WHERE d.v IS NOT NULL) SELECT v FROM d WHERE v IS NOT NULL LIMIT 1000"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([], |row| row.get(0))?;
    rows.collect()
}

pub(crate) fn filter_values(conn: &Connection) -> rusqlite::Result<FilterValues> {
    Ok(FilterValues {
        dialects: distinct(conn, "dialect")?,
        events: distinct(conn, "event")?,
        canonical: distinct(conn, "canonical")?,
        failures: distinct(conn, "failure")?,
    })
}

/// The upper bounds (ms, inclusive) of the latency histogram buckets; a last bucket
/// holds everything slower.
pub const LATENCY_BUCKETS: [u64; 12] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, 30000];

/// One hook's runs over a window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookStats {
    /// The config file.
    pub source: String,
    /// The wire event.
    pub event: String,
    /// The command.
    pub command: String,
    /// Records in the window.
    pub runs: u64,
    /// How many failed.
    pub failures: u64,
    /// How many denied.
    pub denials: u64,
    /// Median duration, ms.
    pub p50_ms: u64,
    /// 95th percentile duration, ms.
    pub p95_ms: u64,
    /// Slowest, ms.
    pub max_ms: u64,
    /// Mean duration, ms.
    pub mean_ms: u64,
    /// Counts per [`LATENCY_BUCKETS`] bucket (one more for slower).
    pub histogram: Vec<u64>,
    /// The most recent failure in the window.
    pub last_failure: Option<FailureSummary>,
}

/// A failure, briefly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailureSummary {
    /// The run.
    pub run_id: String,
    /// When, unix ms.
    pub started_at: u64,
    /// The failure kind.
    pub kind: String,
    /// What happened.
    pub message: Option<String>,
}

/// Runs, denials and failures in one time bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TimeBucket {
    /// The bucket's start, unix ms.
    pub start: u64,
    /// Records.
    pub runs: u64,
    /// Denied.
    pub denials: u64,
    /// Failed.
    pub failures: u64,
}

/// Statistics of the runs in a window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WindowStats {
    /// The window's start, unix ms.
    pub since: u64,
    /// The window's end, unix ms.
    pub until: u64,
    /// Records in the window.
    pub runs: u64,
    /// Per hook (source, event, command), most runs first.
    pub hooks: Vec<HookStats>,
    /// The window cut into equal buckets, oldest first.
    pub timeline: Vec<TimeBucket>,
}

/// The percentile `p` (0..=100) of sorted durations (nearest rank).
fn percentile(sorted: &[u64], p: u64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p as usize * sorted.len()).div_ceil(100).max(1);
    sorted[rank.min(sorted.len()) - 1]
}

pub(crate) fn window_stats(
    conn: &Connection,
    since: u64,
    until: u64,
    buckets: usize,
) -> rusqlite::Result<WindowStats> {
    struct Acc {
        durations: Vec<u64>,
        failures: u64,
        denials: u64,
        last_failure: Option<(i64, u64, String, Option<String>)>,
    }
    let buckets = buckets.clamp(1, 1000);
    let span = until.saturating_sub(since).max(1);
    let width = span.div_ceil(buckets as u64).max(1);
    let mut timeline: Vec<TimeBucket> = (0..buckets as u64)
        .map(|i| TimeBucket {
            start: since + i * width,
            runs: 0,
            denials: 0,
            failures: 0,
        })
        .collect();
    let mut hooks: HashMap<(String, String, String), Acc> = HashMap::new();
    let mut total = 0u64;
    let mut stmt = conn.prepare_cached(
        "SELECT source, event, command, started_at, duration_ms, outcome = 'deny', failure, \
         CASE WHEN failure IS NOT NULL THEN failure_message END, seq \
         FROM hook_runs WHERE started_at >= ?1 AND started_at < ?2",
    )?;
    let mut rows = stmt.query(rusqlite::params![to_i64(since), to_i64(until)])?;
    while let Some(row) = rows.next()? {
        total += 1;
        let started = unsigned(row, 3)?;
        let duration = unsigned(row, 4)?;
        let denied: bool = row.get(5)?;
        let failure: Option<String> = row.get(6)?;
        let key = (row.get(0)?, row.get(1)?, row.get(2)?);
        let acc = hooks.entry(key).or_insert_with(|| Acc {
            durations: Vec::new(),
            failures: 0,
            denials: 0,
            last_failure: None,
        });
        acc.durations.push(duration);
        acc.denials += u64::from(denied);
        let idx = usize::try_from((started - since) / width).unwrap_or(0);
        if let Some(b) = timeline.get_mut(idx.min(buckets - 1)) {
            b.runs += 1;
            b.denials += u64::from(denied);
            b.failures += u64::from(failure.is_some());
        }
        if let Some(kind) = failure {
            acc.failures += 1;
            let seq: i64 = row.get(8)?;
            let newer = acc
                .last_failure
                .as_ref()
                .is_none_or(|(s, at, ..)| (started, seq) > (*at, *s));
            if newer {
                acc.last_failure = Some((seq, started, kind, row.get(7)?));
            }
        }
    }
    drop(rows);
    let mut run_id_of = conn.prepare_cached("SELECT run_id FROM hook_runs WHERE seq = ?1")?;
    let mut out = Vec::with_capacity(hooks.len());
    for ((source, event, command), mut acc) in hooks {
        acc.durations.sort_unstable();
        let d = &acc.durations;
        let mut histogram = vec![0u64; LATENCY_BUCKETS.len() + 1];
        for &ms in d {
            let i = LATENCY_BUCKETS.partition_point(|&edge| edge < ms);
            histogram[i] += 1;
        }
        let sum: u128 = d.iter().map(|&v| u128::from(v)).sum();
        let last_failure = match acc.last_failure {
            Some((seq, started_at, kind, message)) => Some(FailureSummary {
                run_id: run_id_of.query_row([seq], |row| row.get(0))?,
                started_at,
                kind,
                message,
            }),
            None => None,
        };
        out.push(HookStats {
            source,
            event,
            command,
            runs: d.len() as u64,
            failures: acc.failures,
            denials: acc.denials,
            p50_ms: percentile(d, 50),
            p95_ms: percentile(d, 95),
            max_ms: d.last().copied().unwrap_or(0),
            mean_ms: u64::try_from(sum / (d.len().max(1) as u128)).unwrap_or(u64::MAX),
            histogram,
            last_failure,
        });
    }
    out.sort_by(|a, b| {
        b.runs
            .cmp(&a.runs)
            .then_with(|| (&a.source, &a.event, &a.command).cmp(&(&b.source, &b.event, &b.command)))
    });
    Ok(WindowStats {
        since,
        until,
        runs: total,
        hooks: out,
        timeline,
    })
}

// ---------------------------------------------------------------------------------
// What a run was about, and short run ids: shared by the CLI and the web page.
// ---------------------------------------------------------------------------------

/// The tool call a run was about, in one line: the tool as the hook saw it
/// (`run_shell`, `Bash`, `mcp__github__create_issue`) and a summary of its input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolCallSummary {
    /// The tool name from the hook's stdin (or the one a Cursor event implies).
    pub tool: String,
    /// One line about the input: its command, path, pattern or query, else its
    /// compact JSON; whitespace collapsed, control characters escaped, at most
    /// [`TOOL_SUMMARY_MAX`] characters (cut with `…`). May be empty.
    pub input: String,
}

impl ToolCallSummary {
    /// `tool input`, or just `tool` when the summary of the input is empty.
    pub fn line(&self) -> String {
        if self.input.is_empty() {
            self.tool.clone()
        } else {
            format!("{} {}", self.tool, self.input)
        }
    }
}

/// The most characters [`ToolCallSummary::input`] keeps.
pub const TOOL_SUMMARY_MAX: usize = 80;

/// The input fields that say most about a call, in the order they are looked for.
const TOOL_INPUT_KEYS: [&str; 11] = [
    "command",
    "cmd",
    "file_path",
    "path",
    "filePath",
    "absolute_path",
    "pattern",
    "query",
    "url",
    "prompt",
    "description",
];

/// The tool call in a hook's stdin (`event` is the wire event it was recorded
/// under): `None` when the stdin is not a JSON object or the event carries no tool
/// call. Works for every dialect's stdin (`tool_name` + `tool_input` or `input`,
/// Cursor's `command` and `file_path` events).
pub fn tool_call_summary(event: &str, stdin: &[u8]) -> Option<ToolCallSummary> {
    let value: Value = serde_json::from_slice(stdin).ok()?;
    let obj = value.as_object()?;
    let named = ["tool_name", "toolName"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_str))
        .filter(|t| !t.is_empty());
    // Cursor's per-kind events name no tool: the event says which it is.
    let implied = match event {
        "beforeShellExecution" | "afterShellExecution" => Some("run_shell"),
        "beforeReadFile" | "beforeTabFileRead" => Some("read_file"),
        "afterFileEdit" | "afterTabFileEdit" => Some("file_edit"),
        _ => None,
    };
    let tool = named.or(implied)?;
    let input = ["tool_input", "input", "toolInput", "args", "arguments"]
        .iter()
        .find_map(|k| obj.get(*k));
    let text = match input {
        Some(Value::String(s)) => {
            pick_input(serde_json::from_str::<Value>(s).ok().as_ref()).unwrap_or_else(|| s.clone())
        }
        Some(v @ Value::Object(_)) => pick_input(Some(v)).unwrap_or_else(|| compact(v)),
        Some(Value::Null) | None => pick_input(Some(&value)).unwrap_or_default(),
        Some(other) => compact(other),
    };
    Some(ToolCallSummary {
        tool: one_line(tool, TOOL_SUMMARY_MAX),
        input: one_line(&text, TOOL_SUMMARY_MAX),
    })
}

/// The first telling string field of an input object.
fn pick_input(v: Option<&Value>) -> Option<String> {
    let obj = v?.as_object()?;
    TOOL_INPUT_KEYS
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_str))
        .map(str::to_owned)
}

fn compact(v: &Value) -> String {
    match v {
        Value::Object(o) if o.is_empty() => String::new(),
        _ => serde_json::to_string(v).unwrap_or_default(),
    }
}

/// `text` on one line: runs of whitespace become one space, other control and
/// invisible characters are escaped (`\u{1b}`), and the result is cut to `max`
/// characters with `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0usize;
    let mut pending_space = false;
    for c in text.trim().chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        let piece: String = if c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{061c}')
        {
            c.escape_unicode().to_string()
        } else {
            c.to_string()
        };
        let width = usize::from(pending_space) + piece.chars().count();
        if count + width > max {
            out.push('…');
            return out;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push_str(&piece);
        count += width;
    }
    out
}

/// A run's status in a few words, as every view prints it: `exit 2` (an exit code is
/// always given, never a bare `exit`), `exit 0 · invalid_json` when the failure kind
/// adds to the code, `timeout`, `did not start`, `dropped` or `killed`.
pub fn status_label(kind: &str, exit_code: Option<i32>, failure: Option<&str>) -> String {
    match (failure, exit_code) {
        (Some("timeout"), _) => "timeout".to_string(),
        (Some("spawn"), None) => "did not start".to_string(),
        (Some("exit") | None, Some(c)) => format!("exit {c}"),
        (Some(f), Some(c)) => format!("exit {c} · {f}"),
        (Some(f), None) => f.to_string(),
        (None, None) if kind == "dropped" => "dropped".to_string(),
        (None, None) => "killed".to_string(),
    }
}

/// The hint shown with a timed-out run.
pub const TIMEOUT_HINT: &str = "the hook ran past its timeout and was killed; raise its \
     \"timeout\" in the config, or make it return sooner (do slow work in a detached hook)";

/// The fewest characters a short run id has (as git abbreviates commits).
pub const SHORT_ID_MIN: usize = 7;

/// The string a run's short id is a prefix of: the hex SHA-256 of its run id. Run ids
/// start with their time, so their own prefixes are alike for every run of a minute;
/// the digest's are not. Hex never contains the `r` every run id starts with, so a
/// short id cannot be taken for a run id prefix.
pub fn run_id_digest(run_id: &str) -> String {
    let digest = Sha256::digest(run_id.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The short id of every run in `all` (the store's run ids): the shortest prefix of
/// its [`run_id_digest`], at least [`SHORT_ID_MIN`] characters, that no other run's
/// digest starts with.
pub fn short_ids(all: &[String]) -> HashMap<String, String> {
    let mut digests: Vec<(String, &String)> =
        all.iter().map(|id| (run_id_digest(id), id)).collect();
    digests.sort();
    let common = |a: &str, b: &str| a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let mut out = HashMap::with_capacity(digests.len());
    for (i, (digest, id)) in digests.iter().enumerate() {
        let before = i
            .checked_sub(1)
            .map_or(0, |j| common(digest, &digests[j].0));
        let after = digests.get(i + 1).map_or(0, |next| common(digest, &next.0));
        let len = (before.max(after) + 1).clamp(SHORT_ID_MIN, digest.len());
        out.insert((*id).clone(), digest[..len].to_string());
    }
    out
}

/// What a run id given by a user names, among `all` the store's run ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunIdMatch {
    /// Exactly this run.
    One(String),
    /// No run.
    None,
    /// Several runs (their full ids, newest first as given, at most 10).
    Ambiguous(Vec<String>),
}

/// Resolves a full run id, a prefix of one, or a short id (a prefix of a
/// [`run_id_digest`], any length) among `all`.
pub fn resolve_run_id(all: &[String], wanted: &str) -> RunIdMatch {
    if wanted.is_empty() {
        return RunIdMatch::None;
    }
    if all.iter().any(|id| id == wanted) {
        return RunIdMatch::One(wanted.to_string());
    }
    let lower = wanted.to_ascii_lowercase();
    let is_hex = lower.bytes().all(|b| b.is_ascii_hexdigit());
    let matches: Vec<&String> = all
        .iter()
        .filter(|id| id.starts_with(wanted) || (is_hex && run_id_digest(id).starts_with(&lower)))
        .collect();
    match matches[..] {
        [] => RunIdMatch::None,
        [one] => RunIdMatch::One(one.clone()),
        _ => RunIdMatch::Ambiguous(matches.into_iter().take(10).cloned().collect()),
    }
}

/// Every run id, newest first.
pub(crate) fn run_ids(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt =
        conn.prepare_cached("SELECT run_id FROM hook_runs ORDER BY started_at DESC, seq DESC")?;
    let rows = stmt.query_map([], |row| row.get(0))?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is a failed test

    use super::*;

    fn line(event: &str, stdin: &str) -> Option<String> {
        tool_call_summary(event, stdin.as_bytes()).map(|c| c.line())
    }

    #[test]
    fn tool_calls_are_summarised_for_every_dialect() {
        // Copse, Claude, Gemini, Codex: a tool name and an input object.
        assert_eq!(
            line(
                "toolGate",
                r#"{"tool_name":"run_shell","input":{"command":"npm install"}}"#
            ),
            Some("run_shell npm install".into())
        );
        assert_eq!(
            line(
                "PreToolUse",
                r#"{"tool_name":"Read","tool_input":{"file_path":"/a/b.rs"}}"#
            ),
            Some("Read /a/b.rs".into())
        );
        // Cursor's per-kind events imply the tool.
        assert_eq!(
            line(
                "beforeShellExecution",
                r#"{"command":"ls\n  -la","cwd":"/w"}"#
            ),
            Some("run_shell ls -la".into())
        );
        assert_eq!(
            line("beforeReadFile", r#"{"file_path":"/w/.env"}"#),
            Some("read_file /w/.env".into())
        );
        // An MCP call whose input is a JSON string, and one with no telling field.
        assert_eq!(
            line(
                "beforeMCPExecution",
                r#"{"tool_name":"search","tool_input":"{\"query\":\"rust\"}"}"#
            ),
            Some("search rust".into())
        );
        assert_eq!(
            line(
                "PreToolUse",
                r#"{"tool_name":"mcp__x__y","tool_input":{"n":1}}"#
            ),
            Some(r#"mcp__x__y {"n":1}"#.into())
        );
        // No tool call: a prompt, a stop, not JSON.
        assert_eq!(line("beforeSubmitPrompt", r#"{"prompt":"hi"}"#), None);
        assert_eq!(line("stop", r#"{"status":"completed"}"#), None);
        assert_eq!(line("toolGate", "not json"), None);
    }

    #[test]
    fn summaries_are_one_escaped_truncated_line() {
        assert_eq!(one_line("a\tb\r\n c", 80), "a b c");
        assert_eq!(one_line("x\u{1b}[2Jy", 80), "x\\u{1b}[2Jy");
        assert_eq!(one_line("\u{202e}evil", 80), "\\u{202e}evil");
        let long = "x".repeat(200);
        let cut = one_line(&long, TOOL_SUMMARY_MAX);
        assert_eq!(cut.chars().count(), TOOL_SUMMARY_MAX + 1);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn statuses_always_give_the_exit_code() {
        assert_eq!(status_label("run", Some(2), None), "exit 2");
        assert_eq!(status_label("run", Some(3), Some("exit")), "exit 3");
        assert_eq!(
            status_label("run", Some(0), Some("invalid_json")),
            "exit 0 · invalid_json"
        );
        assert_eq!(status_label("run", None, Some("timeout")), "timeout");
        assert_eq!(status_label("run", None, Some("spawn")), "did not start");
        assert_eq!(status_label("dropped", None, None), "dropped");
        assert_eq!(status_label("run", None, None), "killed");
    }

    #[test]
    fn short_ids_are_unique_prefixes_of_at_least_seven() {
        let ids: Vec<String> = (0..400)
            .map(|i| format!("r1718000000{i:03}-00000000{i:06x}"))
            .collect();
        let short = short_ids(&ids);
        assert_eq!(short.len(), ids.len());
        let mut seen = std::collections::HashSet::new();
        for id in &ids {
            let s = &short[id];
            assert!(s.len() >= SHORT_ID_MIN, "{s}");
            assert!(run_id_digest(id).starts_with(s.as_str()));
            assert!(seen.insert(s.clone()), "{s} is not unique");
            assert_eq!(resolve_run_id(&ids, s), RunIdMatch::One(id.clone()));
        }
        // Full ids and run id prefixes resolve too; a shared prefix is ambiguous.
        assert_eq!(
            resolve_run_id(&ids, &ids[5]),
            RunIdMatch::One(ids[5].clone())
        );
        assert!(matches!(resolve_run_id(&ids, "r17"), RunIdMatch::Ambiguous(v) if v.len() == 10));
        assert_eq!(resolve_run_id(&ids, "zzz"), RunIdMatch::None);
        assert_eq!(resolve_run_id(&ids, ""), RunIdMatch::None);
    }
}
