//! The audit chain: a hash over every stored run, each linked to the run before it.
//!
//! Every run the writer records (schema v5 on) carries `prev_hash`, the hash of the run
//! recorded before it, and `hash`: SHA-256 over a fixed domain string, `prev_hash`, the
//! row's seq and every column of the schema's `RECORD_COLUMNS` as
//! stored (after redaction), each field tagged with its SQLite type and
//! length-prefixed, so no two different rows encode alike. Hashes are computed on the
//! writer thread, inside the transaction that inserts the rows, in seq order; the
//! writer assigns each row its seq (the head's plus one), so seqs stay contiguous and
//! never go back, even after retention removed every run.
//!
//! The single row of the `chain` table holds:
//! - the store's random id: the first run links to a genesis hash derived from it, so
//!   two stores never share a chain;
//! - `first_seq`: the first run the chain covers (runs recorded before the store was
//!   migrated predate it and are counted, not checked);
//! - the anchor: the seq and hash of the last run retention pruned (moved in the same
//!   transaction as the delete; retention deletes the oldest runs in seq order only),
//!   or the genesis;
//! - the head: the seq, hash and run id of the newest chained run (updated with every
//!   batch), so removing the newest runs shows too.
//!
//! `verify` ([`crate::spine::Spine::verify_chain`]) walks the runs after the anchor in seq order and names the first that
//! was edited (its content no longer matches its hash), removed (a seq is missing, or
//! the newest runs are gone), reordered (it was chained after another run than the one
//! before it) or added (a run after the head, never chained). Anyone who can write the
//! file can also recompute every hash: the chain proves continuity against what left
//! the machine (each export carries the head, [`ChainHead`]), not against a local
//! attacker who rewrites the whole store.

use std::fmt;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OptionalExtension as _, ToSql, params};
use sha2::{Digest as _, Sha256};

use super::schema::{CHAIN_SINCE, RECORD_COLUMNS, RECORD_FIELDS};

/// The version of the row encoding the hashes cover.
pub const ENCODING_VERSION: u32 = 1;

/// What every row hash starts with (the encoding's version is part of it).
const ROW_DOMAIN: &[u8] = b"copse-hooks audit chain v1 row\0";
/// What the genesis hash starts with, before the store's id.
const GENESIS_DOMAIN: &[u8] = b"copse-hooks audit chain v1 genesis\0";

/// A SHA-256 link of the audit chain.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChainHash([u8; 32]);

impl ChainHash {
    /// The 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The bytes as stored; `None` unless exactly 32 of them.
    pub fn from_slice(bytes: &[u8]) -> Option<ChainHash> {
        <[u8; 32]>::try_from(bytes).ok().map(ChainHash)
    }

    /// Lowercase hex, 64 characters.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }
}

impl fmt::Display for ChainHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for ChainHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChainHash({})", self.to_hex())
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// The newest link of a store's chain: what an export carries so that a central store
/// can check, per machine, that nothing between two exports went missing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChainHead {
    /// The store's chain: 32 hex digits of its random id (a new store, a new chain).
    pub chain_id: String,
    /// The newest chained run's row number (one more for every run recorded).
    pub seq: u64,
    /// Its run id.
    pub run_id: String,
    /// Its hash.
    pub hash: ChainHash,
}

/// What is wrong at the first run [`Spine::verify_chain`](crate::spine::Spine::verify_chain)
/// could not accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChainProblemKind {
    /// The run's stored content (or the chain's own record of it) no longer matches
    /// its hash.
    Edited,
    /// Runs the chain recorded are missing (not pruned by retention).
    Removed,
    /// The run was chained after another run than the one before it.
    Reordered,
    /// The run is not part of the chain: it was written after the chain's head, or
    /// without a hash.
    Added,
}

impl ChainProblemKind {
    /// `edited`, `removed`, `reordered` or `added`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChainProblemKind::Edited => "edited",
            ChainProblemKind::Removed => "removed",
            ChainProblemKind::Reordered => "reordered",
            ChainProblemKind::Added => "added",
        }
    }
}

impl fmt::Display for ChainProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The first run the chain does not accept.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChainProblem {
    /// The run's row number (for a removal: the first missing one).
    pub seq: u64,
    /// Its run id, when the store (or the chain's head) still names it. Text from the
    /// store: escape it before showing it.
    pub run_id: Option<String>,
    /// What is wrong.
    pub kind: ChainProblemKind,
    /// One sentence, naming runs by seq only (never text from the store).
    pub detail: String,
}

/// The result of checking a store's whole chain ([`crate::spine::Spine::verify_chain`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ChainReport {
    /// The store's chain id (hex), when it has a chain.
    pub chain_id: Option<String>,
    /// Chained runs found intact (all of them when there is no problem; else those
    /// before the first problem).
    pub runs_checked: u64,
    /// The first seq the chain covers; `None` when the store predates the chain (a
    /// schema older than v5, opened read-only: recording one run migrates it).
    pub chained_from_seq: Option<u64>,
    /// Runs recorded before the chain started (not checked).
    pub predating_chain: u64,
    /// Runs up to this seq were pruned by retention after being chained.
    pub pruned_through_seq: Option<u64>,
    /// The chain's head as the store records it.
    pub head: Option<ChainHead>,
    /// The first run that was edited, removed, reordered or added; `None` when intact.
    pub first_problem: Option<ChainProblem>,
}

impl ChainReport {
    /// Whether no problem was found.
    pub fn is_intact(&self) -> bool {
        self.first_problem.is_none()
    }
}

/// The hash the first chained run links to: derived from the store's random id.
pub(crate) fn genesis(store_id: &[u8]) -> ChainHash {
    let mut h = Sha256::new();
    h.update(GENESIS_DOMAIN);
    h.update((store_id.len() as u64).to_be_bytes());
    h.update(store_id);
    ChainHash(h.finalize().into())
}

/// Starts a row hash: domain, link and seq; the fields follow.
fn row_hasher(prev: &ChainHash, seq: i64, fields: usize) -> Sha256 {
    let mut h = Sha256::new();
    h.update(ROW_DOMAIN);
    h.update(prev.0);
    h.update(seq.to_be_bytes());
    h.update((fields as u64).to_be_bytes());
    h
}

/// Adds one stored value: a type tag, then its bytes (length-prefixed when variable).
fn encode(h: &mut Sha256, value: ValueRef<'_>) {
    match value {
        ValueRef::Null => h.update([0u8]),
        ValueRef::Integer(i) => {
            h.update([1u8]);
            h.update(i.to_be_bytes());
        }
        ValueRef::Real(r) => {
            h.update([2u8]);
            h.update(r.to_bits().to_be_bytes());
        }
        ValueRef::Text(t) => {
            h.update([3u8]);
            h.update((t.len() as u64).to_be_bytes());
            h.update(t);
        }
        ValueRef::Blob(b) => {
            h.update([4u8]);
            h.update((b.len() as u64).to_be_bytes());
            h.update(b);
        }
    }
}

/// The hash of a row about to be inserted: `fields` are the values bound to
/// [`RECORD_COLUMNS`], in order, exactly as SQLite will store them.
pub(crate) fn row_hash(
    prev: &ChainHash,
    seq: i64,
    fields: &[&dyn ToSql],
) -> rusqlite::Result<ChainHash> {
    let mut h = row_hasher(prev, seq, fields.len());
    for field in fields {
        let out = field.to_sql()?;
        let value = match &out {
            ToSqlOutput::Borrowed(v) => *v,
            ToSqlOutput::Owned(v) => ValueRef::from(v),
            _ => {
                return Err(rusqlite::Error::ToSqlConversionFailure(
                    "a recorded field has no plain SQLite value".into(),
                ));
            }
        };
        encode(&mut h, value);
    }
    Ok(ChainHash(h.finalize().into()))
}

/// The chain's row, as stored.
struct State {
    store_id: Vec<u8>,
    first_seq: i64,
    anchor_seq: i64,
    anchor_hash: Option<Vec<u8>>,
    head_seq: i64,
    head_hash: Option<Vec<u8>>,
    head_run_id: Option<String>,
}

impl State {
    fn chain_id(&self) -> String {
        hex(&self.store_id)
    }

    /// The link the run after the anchor must carry (the genesis when nothing was
    /// pruned); `None` when the stored anchor is not a hash.
    fn anchor(&self) -> Option<ChainHash> {
        match &self.anchor_hash {
            Some(b) => ChainHash::from_slice(b),
            None => Some(genesis(&self.store_id)),
        }
    }

    /// The head's link (the genesis before the first chained run); `None` when the
    /// stored head is not a hash.
    fn head_link(&self) -> Option<ChainHash> {
        match &self.head_hash {
            Some(b) => ChainHash::from_slice(b),
            None => Some(genesis(&self.store_id)),
        }
    }

    fn head(&self) -> Option<ChainHead> {
        Some(ChainHead {
            chain_id: self.chain_id(),
            seq: u64::try_from(self.head_seq).ok()?,
            run_id: self.head_run_id.clone()?,
            hash: ChainHash::from_slice(self.head_hash.as_deref()?)?,
        })
    }
}

fn load(conn: &Connection) -> rusqlite::Result<Option<State>> {
    conn.prepare_cached(
        "SELECT store_id, first_seq, anchor_seq, anchor_hash, head_seq, head_hash, head_run_id \
         FROM chain WHERE id = 1",
    )?
    .query_row([], |r| {
        Ok(State {
            store_id: r.get(0)?,
            first_seq: r.get(1)?,
            anchor_seq: r.get(2)?,
            anchor_hash: r.get(3)?,
            head_seq: r.get(4)?,
            head_hash: r.get(5)?,
            head_run_id: r.get(6)?,
        })
    })
    .optional()
}

/// The chain's head as stored; `None` before the first chained run, or when the
/// store predates the chain.
pub(crate) fn head(conn: &Connection) -> rusqlite::Result<Option<ChainHead>> {
    if schema_version(conn)? < CHAIN_SINCE {
        return Ok(None);
    }
    Ok(load(conn)?.and_then(|s| s.head()))
}

fn schema_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// The writer's end of the chain inside one insert transaction.
pub(crate) struct Link {
    chain_id: String,
    /// The seq of the newest row (chained or not): the next one gets one more.
    seq: i64,
    /// The hash the next row links to.
    pub hash: ChainHash,
    run_id: Option<String>,
    /// Rows chained in this transaction.
    added: u64,
}

impl Link {
    /// Loads the head inside the writer's transaction (under the write lock, so
    /// another process's rows are seen). A missing chain row (deleted behind our back)
    /// starts a new chain after the stored runs; the returned text says so.
    pub(crate) fn begin(conn: &Connection) -> rusqlite::Result<(Link, Option<String>)> {
        let mut restarted = None;
        let state = match load(conn)? {
            Some(state) => state,
            None => {
                conn.execute(
                    "INSERT INTO chain (id, store_id, first_seq, anchor_seq, head_seq) \
                     SELECT 1, randomblob(16), ifnull(max(seq), 0) + 1, ifnull(max(seq), 0), \
                     ifnull(max(seq), 0) FROM hook_runs",
                    [],
                )?;
                let state = load(conn)?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
                restarted = Some(format!(
                    "the audit chain's state was missing; a new chain starts at seq {}",
                    state.first_seq
                ));
                state
            }
        };
        let newest: Option<i64> = conn
            .prepare_cached("SELECT max(seq) FROM hook_runs")?
            .query_row([], |r| r.get(0))?;
        // A row beyond the head was written behind the chain's back: never reuse its
        // seq (verify reports it); the chain goes on from its head.
        let seq = state.head_seq.max(newest.unwrap_or(0));
        // A head that is not a hash (edited): link to the genesis; verify reports it.
        let hash = state
            .head_link()
            .unwrap_or_else(|| genesis(&state.store_id));
        let link = Link {
            chain_id: state.chain_id(),
            seq,
            hash,
            run_id: state.head_run_id,
            added: 0,
        };
        Ok((link, restarted))
    }

    /// The seq the next row gets.
    pub(crate) fn next_seq(&self) -> i64 {
        self.seq.saturating_add(1)
    }

    /// The row `seq` with hash `hash` and run id `run_id` was inserted.
    pub(crate) fn advance(&mut self, seq: i64, hash: ChainHash, run_id: &str) {
        self.seq = seq;
        self.hash = hash;
        self.run_id = Some(run_id.to_owned());
        self.added += 1;
    }

    /// Stores the head (when a row was chained) in the same transaction.
    pub(crate) fn finish(&self, conn: &Connection) -> rusqlite::Result<()> {
        if self.added == 0 {
            return Ok(());
        }
        conn.prepare_cached(
            "UPDATE chain SET head_seq = ?1, head_hash = ?2, head_run_id = ?3 WHERE id = 1",
        )?
        .execute(params![self.seq, &self.hash.0[..], self.run_id])?;
        Ok(())
    }

    /// The head to publish once the transaction committed.
    pub(crate) fn head(&self) -> Option<ChainHead> {
        Some(ChainHead {
            chain_id: self.chain_id.clone(),
            seq: u64::try_from(self.seq).ok()?,
            run_id: self.run_id.clone()?,
            hash: self.hash,
        })
    }
}

/// Before retention deletes every row up to `through` (in the same transaction):
/// when a chained run goes, the anchor becomes the last one deleted, so the chain is
/// checked from there.
pub(crate) fn advance_anchor(conn: &Connection, through: i64) -> rusqlite::Result<()> {
    let Some(state) = load(conn)? else {
        return Ok(());
    };
    let last: Option<(i64, Option<Vec<u8>>)> = conn
        .prepare_cached(
            "SELECT seq, hash FROM hook_runs WHERE seq <= ?1 ORDER BY seq DESC LIMIT 1",
        )?
        .query_row([through], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((seq, hash)) = last else {
        return Ok(());
    };
    if seq < state.first_seq || seq <= state.anchor_seq {
        return Ok(());
    }
    // A row without a hash (written behind the chain's back) anchors nothing the next
    // run can link to: verify then reports that run.
    conn.prepare_cached("UPDATE chain SET anchor_seq = ?1, anchor_hash = ?2 WHERE id = 1")?
        .execute(params![seq, hash.unwrap_or_default()])?;
    Ok(())
}

fn seq_u64(seq: i64) -> u64 {
    u64::try_from(seq).unwrap_or(0)
}

fn problem(
    seq: i64,
    run_id: Option<String>,
    kind: ChainProblemKind,
    detail: String,
) -> ChainProblem {
    ChainProblem {
        seq: seq_u64(seq),
        run_id,
        kind,
        detail,
    }
}

/// One row as the walk reads it.
struct Row {
    seq: i64,
    run_id: Option<String>,
    prev_hash: Option<ChainHash>,
    hash: Option<ChainHash>,
    /// The hash recomputed over its content and its own stored link.
    recomputed: Option<ChainHash>,
}

/// Checks the whole chain in one read snapshot.
pub(crate) fn verify(conn: &Connection) -> rusqlite::Result<ChainReport> {
    let tx = conn.unchecked_transaction()?;
    let report = verify_in(&tx);
    // A read transaction: nothing to keep (a failed rollback only ends the snapshot).
    let _ = tx.rollback();
    report
}

fn verify_in(conn: &Connection) -> rusqlite::Result<ChainReport> {
    let count_below = |seq: i64| -> rusqlite::Result<u64> {
        conn.query_row(
            "SELECT count(*) FROM hook_runs WHERE seq < ?1",
            [seq],
            |r| r.get::<_, i64>(0),
        )
        .map(seq_u64)
    };
    if schema_version(conn)? < CHAIN_SINCE {
        return Ok(ChainReport {
            predating_chain: count_below(i64::MAX)?,
            ..ChainReport::default()
        });
    }
    let Some(state) = load(conn)? else {
        let first: Option<(i64, String)> = conn
            .query_row(
                "SELECT seq, run_id FROM hook_runs ORDER BY seq LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let (seq, run_id) = first.map_or((0, None), |(s, id)| (s, Some(id)));
        return Ok(ChainReport {
            first_problem: Some(problem(
                seq,
                run_id,
                ChainProblemKind::Edited,
                "the chain's own record (the row of the chain table) was deleted".into(),
            )),
            ..ChainReport::default()
        });
    };
    let mut report = ChainReport {
        chain_id: Some(state.chain_id()),
        chained_from_seq: Some(seq_u64(state.first_seq)),
        predating_chain: count_below(state.first_seq)?,
        pruned_through_seq: (state.anchor_seq >= state.first_seq)
            .then(|| seq_u64(state.anchor_seq)),
        head: state.head(),
        ..ChainReport::default()
    };
    report.first_problem = walk(conn, &state, &mut report.runs_checked)?;
    Ok(report)
}

/// Walks the runs after the anchor; returns the first problem.
fn walk(
    conn: &Connection,
    state: &State,
    checked: &mut u64,
) -> rusqlite::Result<Option<ChainProblem>> {
    use ChainProblemKind::{Added, Edited, Removed, Reordered};

    // A chained run the anchor says was pruned, still in the store: the anchor moved.
    let stale: Option<(i64, String)> = conn
        .query_row(
            "SELECT seq, run_id FROM hook_runs WHERE seq >= ?1 AND seq <= ?2 ORDER BY seq LIMIT 1",
            [state.first_seq, state.anchor_seq],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if let Some((seq, run_id)) = stale {
        return Ok(Some(problem(
            seq,
            Some(run_id),
            Edited,
            format!(
                "the chain's anchor was moved to seq {} past this run, which is still stored",
                state.anchor_seq
            ),
        )));
    }
    let Some(anchor) = state.anchor() else {
        return Ok(Some(problem(
            state.anchor_seq,
            None,
            Edited,
            format!(
                "the chain's anchor (seq {}) is not a hash",
                state.anchor_seq
            ),
        )));
    };

    let sql = format!(
        "SELECT seq, {RECORD_COLUMNS}, prev_hash, hash FROM hook_runs WHERE seq > ?1 ORDER BY seq"
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([state.anchor_seq])?;
    let mut expected_seq = state.anchor_seq.saturating_add(1);
    let mut prev = anchor;
    let mut prev_run_id: Option<String> = None;
    while let Some(r) = rows.next()? {
        let row = read_row(r)?;
        if row.seq > expected_seq && expected_seq <= state.head_seq {
            return Ok(Some(missing(
                state,
                expected_seq,
                row.seq.min(state.head_seq + 1) - 1,
            )));
        }
        if row.seq > state.head_seq {
            return Ok(Some(problem(
                row.seq,
                row.run_id,
                Added,
                format!(
                    "it was written after the chain's head (seq {}) without being chained",
                    state.head_seq
                ),
            )));
        }
        let intact = row.hash.is_some() && row.recomputed == row.hash;
        if row.hash.is_none() {
            return Ok(Some(problem(
                row.seq,
                row.run_id,
                Added,
                "it has no hash: it was written without being chained".into(),
            )));
        }
        if row.prev_hash != Some(prev) {
            let before = if row.seq - 1 == state.anchor_seq {
                format!("the chain's anchor (seq {})", state.anchor_seq)
            } else {
                format!("seq {}", row.seq - 1)
            };
            if let Some(k) = chained_after(conn, state, &row)? {
                return Ok(Some(problem(
                    row.seq,
                    row.run_id,
                    Reordered,
                    format!("it was chained after seq {k}, but follows {before}"),
                )));
            }
            if intact && row.seq - 1 > state.anchor_seq {
                // The run before it was replaced, or edited with its hash recomputed.
                return Ok(Some(problem(
                    row.seq - 1,
                    prev_run_id,
                    Edited,
                    format!(
                        "it is not the run seq {} was chained to: it was replaced, or \
                         edited and its hash recomputed",
                        row.seq
                    ),
                )));
            }
            if intact {
                return Ok(Some(problem(
                    row.seq,
                    row.run_id,
                    Removed,
                    format!(
                        "it was chained to a run the store no longer has, not to {before}: \
                         the runs before it were removed and the anchor changed"
                    ),
                )));
            }
            return Ok(Some(problem(
                row.seq,
                row.run_id,
                Edited,
                format!("neither its content nor its link to {before} match its hash"),
            )));
        }
        if !intact {
            return Ok(Some(problem(
                row.seq,
                row.run_id,
                Edited,
                "its content does not match its hash".into(),
            )));
        }
        *checked += 1;
        prev = row.hash.unwrap_or(prev);
        prev_run_id = row.run_id;
        expected_seq = row.seq.saturating_add(1);
    }
    if expected_seq <= state.head_seq {
        return Ok(Some(missing(state, expected_seq, state.head_seq)));
    }
    if state.head_link() != Some(prev) {
        let seq = expected_seq - 1;
        let run_id = if seq > state.anchor_seq {
            prev_run_id
        } else {
            None
        };
        return Ok(Some(problem(
            seq,
            run_id,
            Edited,
            format!(
                "the chain's head (seq {}) names another hash for it",
                state.head_seq
            ),
        )));
    }
    Ok(None)
}

/// Seqs `from..=to` are missing.
fn missing(state: &State, from: i64, to: i64) -> ChainProblem {
    let run_id = (from == state.head_seq)
        .then(|| state.head_run_id.clone())
        .flatten();
    let what = if from == to {
        format!("seq {from} is missing")
    } else {
        format!("seq {from} to {to} are missing")
    };
    let why = if to == state.head_seq {
        format!("the chain's head is seq {}", state.head_seq)
    } else {
        format!("seq {} follows seq {}", to + 1, from - 1)
    };
    problem(
        from,
        run_id,
        ChainProblemKind::Removed,
        format!("{what} ({why}); retention only prunes the oldest runs"),
    )
}

/// The seq of the run `row` was chained after, when that is another row still in the
/// store (or the anchor).
fn chained_after(conn: &Connection, state: &State, row: &Row) -> rusqlite::Result<Option<i64>> {
    let Some(prev) = row.prev_hash else {
        return Ok(None);
    };
    if state.anchor() == Some(prev) {
        return Ok(Some(state.anchor_seq));
    }
    conn.query_row(
        "SELECT seq FROM hook_runs WHERE hash = ?1 AND seq <> ?2 ORDER BY seq LIMIT 1",
        params![&prev.0[..], row.seq],
        |r| r.get(0),
    )
    .optional()
}

fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let seq: i64 = r.get(0)?;
    let hash_at = |i: usize| -> rusqlite::Result<Option<ChainHash>> {
        Ok(match r.get_ref(i)? {
            ValueRef::Blob(b) => ChainHash::from_slice(b),
            _ => None,
        })
    };
    let prev_hash = hash_at(RECORD_FIELDS + 1)?;
    let hash = hash_at(RECORD_FIELDS + 2)?;
    let recomputed = match prev_hash {
        Some(prev) => {
            let mut h = row_hasher(&prev, seq, RECORD_FIELDS);
            for i in 1..=RECORD_FIELDS {
                encode(&mut h, r.get_ref(i)?);
            }
            Some(ChainHash(h.finalize().into()))
        }
        None => None,
    };
    let run_id = match r.get_ref(1)? {
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
        _ => None,
    };
    Ok(Row {
        seq,
        run_id,
        prev_hash,
        hash,
        recomputed,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is a failed test

    use super::*;

    #[test]
    fn record_columns_are_the_fields_hashed() {
        assert_eq!(RECORD_COLUMNS.split(',').count(), RECORD_FIELDS);
    }

    #[test]
    fn fields_are_length_prefixed_and_typed() {
        let prev = genesis(b"store");
        let a: [&dyn ToSql; 2] = [&"ab", &"c"];
        let b: [&dyn ToSql; 2] = [&"a", &"bc"];
        let text: [&dyn ToSql; 1] = [&"1"];
        let int: [&dyn ToSql; 1] = [&1_i64];
        let blob: [&dyn ToSql; 1] = [&b"1".to_vec()];
        assert_ne!(
            row_hash(&prev, 1, &a).unwrap(),
            row_hash(&prev, 1, &b).unwrap()
        );
        let t = row_hash(&prev, 1, &text).unwrap();
        assert_ne!(t, row_hash(&prev, 1, &int).unwrap());
        assert_ne!(t, row_hash(&prev, 1, &blob).unwrap());
        assert_ne!(t, row_hash(&prev, 2, &text).unwrap(), "the seq is covered");
        assert_ne!(
            t,
            row_hash(&genesis(b"other"), 1, &text).unwrap(),
            "the link is covered"
        );
        assert_eq!(t, row_hash(&prev, 1, &text).unwrap());
        assert_eq!(t.to_hex().len(), 64);
    }

    #[test]
    fn the_writer_and_the_verifier_encode_alike() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (a TEXT, b INTEGER, c BLOB, d TEXT)")
            .unwrap();
        let none: Option<String> = None;
        let fields: [&dyn ToSql; 4] = [&"text ✓", &true, &vec![0u8, 255], &none];
        conn.execute("INSERT INTO t VALUES (?1, ?2, ?3, ?4)", &fields[..])
            .unwrap();
        let prev = genesis(b"x");
        let written = row_hash(&prev, 7, &fields).unwrap();
        let read = conn
            .query_row("SELECT a, b, c, d FROM t", [], |r| {
                let mut h = row_hasher(&prev, 7, 4);
                for i in 0..4 {
                    encode(&mut h, r.get_ref(i)?);
                }
                Ok(ChainHash(h.finalize().into()))
            })
            .unwrap();
        assert_eq!(written, read);
    }
}
