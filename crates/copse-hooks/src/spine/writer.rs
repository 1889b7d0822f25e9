//! The queue between recording callers and the writer thread, and the writer itself.
//!
//! Callers push onto a mutex-guarded vector (no syscall on the common path: the writer
//! is woken only when it sleeps without a deadline, when a batch fills, or on a flush).
//! The writer drains the whole vector into one `BEGIN IMMEDIATE` transaction every
//! `flush_interval` or `batch_records`, whichever comes first, and prunes by the
//! retention policy at start-up and every so many commits. A full queue rejects (and
//! counts) records instead of blocking; a failed commit drops its batch, counts it and
//! latches one warning.
//!
//! The writer also extends the audit chain ([`chain`]): each row's seq, link and hash
//! are computed here, in the insert transaction, never on a recording caller's thread;
//! pruning deletes the oldest rows in seq order and moves the chain's anchor in the
//! same transaction.

use std::mem;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use rusqlite::{
    Connection, ErrorCode, OptionalExtension as _, ToSql, Transaction, TransactionBehavior, params,
};

use super::chain::{self, ChainHead, Link};
use super::record::{RunRecord, new_run_id, unix_ms};
use super::schema::{INSERT, RECORD_FIELDS};
use super::{Retention, SpineWarning};

/// Rows deleted per pruning statement, so no single transaction holds the lock long.
const PRUNE_CHUNK: i64 = 2_000;
/// Prune after this many rows were inserted since the last prune, whatever the commits.
const PRUNE_EVERY_RECORDS: u64 = 1_000;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section leaves the queue consistent; a panic elsewhere must not
    // wedge recording.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Limits the queue and the writer work to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tuning {
    pub flush_interval: Duration,
    pub batch_records: usize,
    pub queue_records: usize,
    pub queue_bytes: usize,
    pub prune_every_commits: u32,
    pub redact_secrets: bool,
}

#[derive(Debug, Default)]
struct Queue {
    pending: Vec<RunRecord>,
    /// The vector the writer hands back after a batch, so `pending` keeps its capacity
    /// and a caller's push never reallocates a large vector.
    spare: Vec<RunRecord>,
    bytes: usize,
    /// Records ever accepted.
    accepted: u64,
    /// Records the writer is finished with (committed or lost), a prefix of `accepted`.
    handled: u64,
    /// Flush requests issued and answered.
    flush_gen: u64,
    flushed_gen: u64,
    /// The writer sleeps without a deadline and must be woken by the next record.
    writer_idle: bool,
    /// The writer finished its start-up prune.
    ready: bool,
    shutdown: bool,
    exited: bool,
}

/// State shared by the [`Spine`](super::Spine) handle and its writer thread.
#[derive(Debug)]
pub(crate) struct Shared {
    pub path: PathBuf,
    tuning: Tuning,
    queue: Mutex<Queue>,
    /// The writer waits on this.
    wake: Condvar,
    /// Flushers wait on this.
    done: Condvar,
    pub committed: AtomicU64,
    pub batches: AtomicU64,
    pub dropped: AtomicU64,
    warning: Mutex<Vec<SpineWarning>>,
    /// The chain's head as of the last commit (or the open).
    head: Mutex<Option<ChainHead>>,
}

impl Shared {
    pub fn new(path: PathBuf, tuning: Tuning, head: Option<ChainHead>) -> Shared {
        Shared {
            path,
            tuning,
            queue: Mutex::new(Queue {
                pending: Vec::with_capacity(tuning.batch_records),
                spare: Vec::with_capacity(tuning.batch_records),
                ..Queue::default()
            }),
            wake: Condvar::new(),
            done: Condvar::new(),
            committed: AtomicU64::new(0),
            batches: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            warning: Mutex::new(Vec::new()),
            head: Mutex::new(head),
        }
    }

    /// The chain's head as of the last commit.
    pub fn chain_head(&self) -> Option<ChainHead> {
        lock(&self.head).clone()
    }

    /// Queues a record, or counts it dropped when the queue is full. Never blocks on
    /// anything but the queue mutex, which nobody holds for long.
    pub fn push(&self, rec: RunRecord) {
        let weight = rec.weight();
        let mut q = lock(&self.queue);
        if q.shutdown
            || q.exited
            || q.pending.len() >= self.tuning.queue_records
            || q.bytes.saturating_add(weight) > self.tuning.queue_bytes
        {
            drop(q);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            drop(rec); // freed outside the lock
            return;
        }
        q.pending.push(rec);
        q.bytes += weight;
        q.accepted += 1;
        let wake = q.writer_idle || q.pending.len() == self.tuning.batch_records;
        q.writer_idle = false;
        drop(q);
        if wake {
            self.wake.notify_one();
        }
    }

    /// Waits until every record accepted so far is committed (or lost to a failed
    /// commit), and the start-up prune is done. Returns at once if the writer is gone.
    pub fn flush(&self) {
        let mut q = lock(&self.queue);
        if q.exited || (q.ready && q.handled == q.accepted) {
            return;
        }
        q.flush_gen += 1;
        let generation = q.flush_gen;
        q.writer_idle = false;
        self.wake.notify_one();
        while q.flushed_gen < generation && !q.exited {
            q = self.done.wait(q).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Records queued and not yet handled by the writer.
    pub fn pending(&self) -> u64 {
        let q = lock(&self.queue);
        q.accepted - q.handled
    }

    /// Records accepted into the queue so far.
    pub fn accepted(&self) -> u64 {
        lock(&self.queue).accepted
    }

    /// Asks the writer to drain the queue and exit.
    pub fn shutdown(&self) {
        lock(&self.queue).shutdown = true;
        self.wake.notify_one();
    }

    /// The first runtime warning, once.
    pub fn take_warning(&self) -> Option<SpineWarning> {
        self.take_warnings().into_iter().next()
    }

    /// Every runtime warning not taken yet (a prune failure never hides a lost batch).
    pub fn take_warnings(&self) -> Vec<SpineWarning> {
        std::mem::take(&mut *lock(&self.warning))
    }

    fn warn(&self, message: String) {
        let mut warnings = lock(&self.warning);
        // Bounded: a store failing every commit must not grow memory without end.
        if warnings.len() < 32 && !warnings.iter().any(|w| w.message == message) {
            warnings.push(SpineWarning {
                path: self.path.clone(),
                message,
            });
        }
    }
}

/// Marks the writer gone however it ends, so flushers never wait forever.
struct ExitGuard<'a>(&'a Shared);

impl Drop for ExitGuard<'_> {
    fn drop(&mut self) {
        lock(&self.0.queue).exited = true;
        self.0.done.notify_all();
    }
}

/// The writer thread's body.
pub(crate) fn run(shared: &Shared, mut conn: Connection, retention: Retention) {
    let _guard = ExitGuard(shared);
    let tuning = shared.tuning;
    prune(shared, &conn, retention);
    lock(&shared.queue).ready = true;
    let mut commits_since_prune: u32 = 0;
    let mut rows_since_prune: u64 = 0;
    loop {
        let mut q = lock(&shared.queue);
        let mut deadline: Option<Instant> = None;
        loop {
            if q.shutdown || q.flush_gen > q.flushed_gen || q.pending.len() >= tuning.batch_records
            {
                break;
            }
            if q.pending.is_empty() {
                q.writer_idle = true;
                deadline = None;
                q = shared.wake.wait(q).unwrap_or_else(|p| p.into_inner());
                continue;
            }
            let now = Instant::now();
            let until = *deadline.get_or_insert(now + tuning.flush_interval);
            if now >= until {
                break;
            }
            q = shared
                .wake
                .wait_timeout(q, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        q.writer_idle = false;
        let spare = mem::take(&mut q.spare);
        let mut batch = mem::replace(&mut q.pending, spare);
        q.bytes = 0;
        let upto = q.accepted;
        let generation = q.flush_gen;
        let shutdown = q.shutdown;
        drop(q);

        if !batch.is_empty() {
            let n = batch.len() as u64;
            if write(shared, &mut conn, &mut batch) {
                commits_since_prune += 1;
                rows_since_prune += n;
            }
            if commits_since_prune >= tuning.prune_every_commits
                || rows_since_prune >= PRUNE_EVERY_RECORDS
            {
                prune(shared, &conn, retention);
                commits_since_prune = 0;
                rows_since_prune = 0;
            }
        }

        batch.clear(); // frees what a failed batch left
        if batch.capacity() > tuning.queue_records.min(4 * tuning.batch_records) {
            batch = Vec::with_capacity(tuning.batch_records);
        }
        let mut q = lock(&shared.queue);
        q.spare = batch;
        q.handled = upto;
        q.flushed_gen = q.flushed_gen.max(generation);
        let finished = shutdown && q.pending.is_empty();
        drop(q);
        shared.done.notify_all();
        if finished {
            return;
        }
    }
}

/// Writes one batch in one transaction. Returns whether it committed.
fn write(shared: &Shared, conn: &mut Connection, batch: &mut Vec<RunRecord>) -> bool {
    let n = batch.len() as u64;
    match insert(conn, batch, shared.tuning.redact_secrets) {
        Ok(inserted) => {
            let rejected = n - inserted.rows;
            shared.committed.fetch_add(inserted.rows, Ordering::Relaxed);
            shared.batches.fetch_add(1, Ordering::Relaxed);
            if let Some(head) = inserted.head {
                *lock(&shared.head) = Some(head);
            }
            if let Some(restarted) = inserted.restarted {
                shared.warn(format!("{restarted} in {}", shared.path.display()));
            }
            if rejected > 0 {
                shared.dropped.fetch_add(rejected, Ordering::Relaxed);
                shared.warn(format!(
                    "{rejected} hook run(s) were not recorded in {}: duplicate run id",
                    shared.path.display()
                ));
            }
            true
        }
        Err(err) => {
            shared.dropped.fetch_add(n, Ordering::Relaxed);
            shared.warn(format!(
                "{n} hook run(s) were not recorded in {}: {err}",
                shared.path.display()
            ));
            false
        }
    }
}

/// What one committed batch did.
struct Inserted {
    /// Rows inserted (the rest were rejected by a constraint).
    rows: u64,
    /// The chain's head after the batch, when a row was chained.
    head: Option<ChainHead>,
    /// The chain had to be restarted (its state was deleted behind our back).
    restarted: Option<String>,
}

/// Inserts a batch (draining it), chaining every row.
fn insert(
    conn: &mut Connection,
    batch: &mut Vec<RunRecord>,
    redact: bool,
) -> rusqlite::Result<Inserted> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let (mut link, restarted) = Link::begin(&tx)?;
    let mut rows = 0;
    {
        let mut stmt = tx.prepare_cached(INSERT)?;
        for mut rec in batch.drain(..) {
            rec.enforce_caps();
            if redact {
                super::redact::redact_record(&mut rec);
            }
            if rec.run_id.is_empty() {
                rec.run_id = new_run_id(rec.started_at);
            }
            let warnings = (!rec.warnings.is_empty())
                .then(|| serde_json::to_string(&rec.warnings).unwrap_or_default());
            let (started_at, duration_ms, redactions) = (
                to_i64(rec.started_at),
                to_i64(rec.duration_ms),
                to_i64(rec.redactions),
            );
            // In `RECORD_COLUMNS` order: the chain hashes exactly what is stored.
            let fields: [&dyn ToSql; RECORD_FIELDS] = [
                &rec.run_id,
                &rec.kind.as_str(),
                &rec.session_id,
                &rec.turn_id,
                &rec.dialect,
                &rec.event,
                &rec.canonical,
                &rec.command,
                &rec.source,
                &rec.scope,
                &started_at,
                &duration_ms,
                &rec.exit_code,
                &rec.parse_ok,
                &rec.failure,
                &rec.failure_message,
                &rec.policy,
                &rec.sandbox,
                &rec.outcome,
                &rec.decision,
                &rec.agent_message,
                &rec.user_message,
                &rec.halt_reason,
                &rec.inject_context,
                &rec.updated_input,
                &rec.queued_message,
                &rec.session_env,
                &rec.outcome_truncated,
                &rec.stdin,
                &rec.stdin_truncated,
                &rec.stdout,
                &rec.stdout_truncated,
                &rec.stderr,
                &rec.stderr_truncated,
                &warnings,
                &redactions,
                &rec.leaked,
            ];
            let seq = link.next_seq();
            let hash = chain::row_hash(&link.hash, seq, &fields)?;
            let (prev, own) = (&link.hash.as_bytes()[..], &hash.as_bytes()[..]);
            let tail: [&dyn ToSql; 3] = [&seq, &prev, &own];
            let result = stmt.execute(rusqlite::params_from_iter(fields.iter().chain(&tail)));
            match result {
                Ok(_) => {
                    link.advance(seq, hash, &rec.run_id);
                    rows += 1;
                }
                // Only this statement is undone; the rest of the batch goes on (and
                // the chain goes on from the row before it).
                Err(err) if err.sqlite_error_code() == Some(ErrorCode::ConstraintViolation) => {}
                Err(err) => return Err(err),
            }
        }
    }
    link.finish(&tx)?;
    tx.commit()?;
    Ok(Inserted {
        rows,
        head: link.head(),
        restarted,
    })
}

/// Deletes what the retention policy no longer keeps, in small chunks.
fn prune(shared: &Shared, conn: &Connection, retention: Retention) {
    if let Err(err) = try_prune(conn, retention) {
        shared.warn(format!(
            "pruning old hook runs in {} failed: {err}",
            shared.path.display()
        ));
    }
}

/// Retention removes the oldest runs in seq (recording) order only, so what remains is
/// always a contiguous tail of the audit chain.
fn try_prune(conn: &Connection, retention: Retention) -> rusqlite::Result<()> {
    if let Some(days) = retention.max_age_days {
        let age = days.saturating_mul(86_400_000);
        let cutoff = to_i64(unix_ms(SystemTime::now()).saturating_sub(age));
        // Every run before the oldest one still young (a run recorded late with an
        // early start waits for the runs recorded before it).
        let through: Option<i64> = conn
            .prepare_cached(
                "SELECT ifnull((SELECT min(seq) FROM hook_runs WHERE started_at >= ?1) - 1, \
                 (SELECT max(seq) FROM hook_runs))",
            )?
            .query_row([cutoff], |r| r.get(0))?;
        if let Some(through) = through {
            delete_through(conn, through)?;
        }
    }
    if let Some(max) = retention.max_runs {
        let through: Option<i64> = conn
            .prepare_cached("SELECT seq FROM hook_runs ORDER BY seq DESC LIMIT 1 OFFSET ?1")?
            .query_row([to_i64(max)], |r| r.get(0))
            .optional()?;
        if let Some(through) = through {
            delete_through(conn, through)?;
        }
    }
    if let Some(max) = retention.max_bytes {
        prune_to_size(conn, max)?;
    }
    Ok(())
}

/// Deletes every run up to seq `through`, oldest first, [`PRUNE_CHUNK`] rows per
/// transaction (so no transaction holds the lock long), moving the chain's anchor
/// in each. Returns how many rows went.
fn delete_through(conn: &Connection, through: i64) -> rusqlite::Result<usize> {
    let mut deleted = 0;
    loop {
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let end: Option<i64> = tx
            .prepare_cached(
                "SELECT ifnull((SELECT seq FROM hook_runs WHERE seq <= ?1 ORDER BY seq \
                 LIMIT 1 OFFSET ?2), (SELECT max(seq) FROM hook_runs WHERE seq <= ?1))",
            )?
            .query_row(params![through, PRUNE_CHUNK - 1], |r| r.get(0))?;
        let Some(end) = end else {
            return Ok(deleted); // dropping the transaction rolls it back: nothing written
        };
        chain::advance_anchor(&tx, end)?;
        deleted += tx
            .prepare_cached("DELETE FROM hook_runs WHERE seq <= ?1")?
            .execute([end])?;
        tx.commit()?;
        if end >= through {
            return Ok(deleted);
        }
    }
}

/// Bytes of live data: the file's pages minus its free pages.
fn live_bytes(conn: &Connection) -> rusqlite::Result<u64> {
    let pages: i64 = conn.pragma_query_value(None, "page_count", |r| r.get(0))?;
    let free: i64 = conn.pragma_query_value(None, "freelist_count", |r| r.get(0))?;
    let size: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
    Ok(u64::try_from((pages - free).max(0) * size).unwrap_or(0))
}

/// Deletes the oldest runs until the live data fits in `max` bytes, then returns the
/// freed pages to the file system (incrementally when the file allows it; a store
/// created before that is converted by one `VACUUM`).
fn prune_to_size(conn: &Connection, max: u64) -> rusqlite::Result<()> {
    if live_bytes(conn)? <= max {
        return Ok(());
    }
    let mut deleted = 0;
    while live_bytes(conn)? > max {
        let rows: i64 = conn.query_row("SELECT count(*) FROM hook_runs", [], |r| r.get(0))?;
        if rows == 0 {
            break;
        }
        let n = (rows / 20).clamp(1, PRUNE_CHUNK);
        let through: i64 = conn
            .prepare_cached("SELECT seq FROM hook_runs ORDER BY seq LIMIT 1 OFFSET ?1")?
            .query_row([n - 1], |r| r.get(0))?;
        deleted += delete_through(conn, through)?;
    }
    if deleted > 0 {
        let mode: i64 = conn.pragma_query_value(None, "auto_vacuum", |r| r.get(0))?;
        if mode == 2 {
            conn.execute_batch("PRAGMA incremental_vacuum")?;
        } else {
            conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM")?;
        }
    }
    Ok(())
}

pub(crate) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
