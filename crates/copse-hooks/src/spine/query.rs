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
            // Result columns 11 and 32 are `started_at` and `seq`.
            format!(
                "SELECT * FROM ({wire}) UNION SELECT * FROM ({canonical}) \
                 ORDER BY 11 DESC, 32 DESC LIMIT {}",
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
            seq: row.get(31)?,
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
    let mut sql = format!("SELECT {SUMMARY_COLUMNS}, {leaked}, seq FROM hook_runs WHERE 1");
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
        "SELECT {SUMMARY_COLUMNS}, {leaked} FROM hook_runs WHERE session_id = ?1 \
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
