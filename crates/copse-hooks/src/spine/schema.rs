//! The spine's schema and its migrations.
//!
//! `PRAGMA user_version` holds the schema version: the number of migrations applied.
//! [`MIGRATIONS`] are applied in order, each in its own `BEGIN IMMEDIATE` transaction
//! that also sets the new version, so a crash or a concurrent opener can never leave a
//! half-migrated file. A database whose version is newer than this build knows is
//! refused before anything writes to it. `PRAGMA application_id` marks the file as a
//! spine so a foreign SQLite database is refused too.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::SpineError;

/// `PRAGMA application_id` of a spine database: "cops" in ASCII.
pub const APPLICATION_ID: i32 = 0x636f_7073;

/// The migrations, in order. Migration `i` (0-based) takes the schema to version `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    // v1: the run table.
    "CREATE TABLE hook_runs (
        seq               INTEGER PRIMARY KEY,
        run_id            TEXT    NOT NULL UNIQUE,
        kind              TEXT    NOT NULL CHECK (kind IN ('run', 'dropped', 'suppressed')),
        session_id        TEXT    NOT NULL,
        turn_id           TEXT    NOT NULL,
        dialect           TEXT    NOT NULL,
        event             TEXT    NOT NULL,
        canonical         TEXT    NOT NULL,
        command           TEXT    NOT NULL,
        source            TEXT    NOT NULL,
        scope             TEXT    NOT NULL,
        started_at        INTEGER NOT NULL,
        duration_ms       INTEGER NOT NULL,
        exit_code         INTEGER,
        parse_ok          INTEGER NOT NULL,
        failure           TEXT,
        failure_message   TEXT,
        policy            TEXT,
        sandbox           TEXT,
        outcome           TEXT    NOT NULL,
        decision          TEXT,
        agent_message     TEXT,
        user_message      TEXT,
        halt_reason       TEXT,
        inject_context    TEXT,
        updated_input     TEXT,
        queued_message    TEXT,
        session_env       INTEGER NOT NULL,
        outcome_truncated INTEGER NOT NULL,
        stdin             BLOB    NOT NULL,
        stdin_truncated   INTEGER NOT NULL,
        stdout            BLOB    NOT NULL,
        stdout_truncated  INTEGER NOT NULL,
        stderr            BLOB    NOT NULL,
        stderr_truncated  INTEGER NOT NULL
    );
    CREATE INDEX hook_runs_started ON hook_runs (started_at);",
    // v2: indexes for the per-session lookups (latest session, first failures).
    "CREATE INDEX hook_runs_session ON hook_runs (session_id);
    CREATE INDEX hook_runs_failures ON hook_runs (session_id, seq) WHERE failure IS NOT NULL;",
    // v3: what the engine refused about a run (JSON array of texts), how many
    // secrets were redacted from its recorded streams, and whether a process of the
    // run had left its process group and was killed when the run ended.
    "ALTER TABLE hook_runs ADD COLUMN warnings TEXT;
    ALTER TABLE hook_runs ADD COLUMN redactions INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE hook_runs ADD COLUMN leaked INTEGER NOT NULL DEFAULT 0;",
    // v4: indexes for the browsing queries of the web page (`copse-hooks ui`): keyset
    // pages of runs filtered by outcome, dialect, event, failure kind, hook or session,
    // newest first, without scanning the table.
    "CREATE INDEX hook_runs_outcome_started ON hook_runs (outcome, started_at);
    CREATE INDEX hook_runs_dialect_started ON hook_runs (dialect, started_at);
    CREATE INDEX hook_runs_event_started ON hook_runs (event, started_at);
    CREATE INDEX hook_runs_canonical_started ON hook_runs (canonical, started_at);
    CREATE INDEX hook_runs_failure_started ON hook_runs (failure, started_at)
        WHERE failure IS NOT NULL;
    CREATE INDEX hook_runs_hook_started ON hook_runs (source, command, started_at);
    CREATE INDEX hook_runs_session_started ON hook_runs (session_id, started_at);
    CREATE INDEX hook_runs_kind_started ON hook_runs (kind, started_at) WHERE kind <> 'run';",
    // v5: the audit chain (see `chain.rs`). Each run recorded from now on carries the
    // hash of the run recorded before it and its own hash over every stored column and
    // that link. The single row of `chain` holds the store's random id (the genesis
    // link is derived from it), the first seq the chain covers (older runs predate
    // it), the anchor (the last run pruned by retention, or the genesis: NULL) and
    // the head (the newest chained run; NULL hash before the first).
    "ALTER TABLE hook_runs ADD COLUMN prev_hash BLOB;
    ALTER TABLE hook_runs ADD COLUMN hash BLOB;
    CREATE TABLE chain (
        id          INTEGER PRIMARY KEY CHECK (id = 1),
        store_id    BLOB    NOT NULL,
        first_seq   INTEGER NOT NULL,
        anchor_seq  INTEGER NOT NULL,
        anchor_hash BLOB,
        head_seq    INTEGER NOT NULL,
        head_hash   BLOB,
        head_run_id TEXT
    );
    INSERT INTO chain (id, store_id, first_seq, anchor_seq, head_seq)
        SELECT 1, randomblob(16), ifnull(max(seq), 0) + 1, ifnull(max(seq), 0),
            ifnull(max(seq), 0)
        FROM hook_runs;",
    // v6: runs of kind `guard` (the built-in guard's verdicts). SQLite cannot alter a
    // CHECK constraint, so the table is rebuilt with every row copied as stored (the
    // chain's hashes cover the values, not the table) and its indexes made again.
    "CREATE TABLE hook_runs_v6 (
        seq               INTEGER PRIMARY KEY,
        run_id            TEXT    NOT NULL UNIQUE,
        kind              TEXT    NOT NULL CHECK (kind IN ('run', 'dropped', 'suppressed', 'guard')),
        session_id        TEXT    NOT NULL,
        turn_id           TEXT    NOT NULL,
        dialect           TEXT    NOT NULL,
        event             TEXT    NOT NULL,
        canonical         TEXT    NOT NULL,
        command           TEXT    NOT NULL,
        source            TEXT    NOT NULL,
        scope             TEXT    NOT NULL,
        started_at        INTEGER NOT NULL,
        duration_ms       INTEGER NOT NULL,
        exit_code         INTEGER,
        parse_ok          INTEGER NOT NULL,
        failure           TEXT,
        failure_message   TEXT,
        policy            TEXT,
        sandbox           TEXT,
        outcome           TEXT    NOT NULL,
        decision          TEXT,
        agent_message     TEXT,
        user_message      TEXT,
        halt_reason       TEXT,
        inject_context    TEXT,
        updated_input     TEXT,
        queued_message    TEXT,
        session_env       INTEGER NOT NULL,
        outcome_truncated INTEGER NOT NULL,
        stdin             BLOB    NOT NULL,
        stdin_truncated   INTEGER NOT NULL,
        stdout            BLOB    NOT NULL,
        stdout_truncated  INTEGER NOT NULL,
        stderr            BLOB    NOT NULL,
        stderr_truncated  INTEGER NOT NULL,
        warnings          TEXT,
        redactions        INTEGER NOT NULL DEFAULT 0,
        leaked            INTEGER NOT NULL DEFAULT 0,
        prev_hash         BLOB,
        hash              BLOB
    );
    INSERT INTO hook_runs_v6 (seq, run_id, kind, session_id, turn_id, dialect, event,
        canonical, command, source, scope, started_at, duration_ms, exit_code, parse_ok,
        failure, failure_message, policy, sandbox, outcome, decision, agent_message,
        user_message, halt_reason, inject_context, updated_input, queued_message,
        session_env, outcome_truncated, stdin, stdin_truncated, stdout, stdout_truncated,
        stderr, stderr_truncated, warnings, redactions, leaked, prev_hash, hash)
    SELECT seq, run_id, kind, session_id, turn_id, dialect, event, canonical, command,
        source, scope, started_at, duration_ms, exit_code, parse_ok, failure,
        failure_message, policy, sandbox, outcome, decision, agent_message, user_message,
        halt_reason, inject_context, updated_input, queued_message, session_env,
        outcome_truncated, stdin, stdin_truncated, stdout, stdout_truncated, stderr,
        stderr_truncated, warnings, redactions, leaked, prev_hash, hash
    FROM hook_runs;
    DROP TABLE hook_runs;
    ALTER TABLE hook_runs_v6 RENAME TO hook_runs;
    CREATE INDEX hook_runs_started ON hook_runs (started_at);
    CREATE INDEX hook_runs_session ON hook_runs (session_id);
    CREATE INDEX hook_runs_failures ON hook_runs (session_id, seq) WHERE failure IS NOT NULL;
    CREATE INDEX hook_runs_outcome_started ON hook_runs (outcome, started_at);
    CREATE INDEX hook_runs_dialect_started ON hook_runs (dialect, started_at);
    CREATE INDEX hook_runs_event_started ON hook_runs (event, started_at);
    CREATE INDEX hook_runs_canonical_started ON hook_runs (canonical, started_at);
    CREATE INDEX hook_runs_failure_started ON hook_runs (failure, started_at)
        WHERE failure IS NOT NULL;
    CREATE INDEX hook_runs_hook_started ON hook_runs (source, command, started_at);
    CREATE INDEX hook_runs_session_started ON hook_runs (session_id, started_at);
    CREATE INDEX hook_runs_kind_started ON hook_runs (kind, started_at) WHERE kind <> 'run';",
];

/// The schema version this build writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// The oldest schema version the queries can read without migrating.
pub const MIN_READABLE: i64 = 1;

/// The columns of a full record, in [`RunRecord`](super::RunRecord) order (after `seq`).
pub(crate) const RECORD_COLUMNS: &str = "run_id, kind, session_id, turn_id, dialect, event, \
    canonical, command, source, scope, started_at, duration_ms, exit_code, parse_ok, failure, \
    failure_message, policy, sandbox, outcome, decision, agent_message, user_message, \
    halt_reason, inject_context, updated_input, queued_message, session_env, outcome_truncated, \
    stdin, stdin_truncated, stdout, stdout_truncated, stderr, stderr_truncated, warnings, \
    redactions, leaked";

/// [`RECORD_COLUMNS`] for a store older than v3 (read-only opens do not migrate).
pub(crate) const RECORD_COLUMNS_V2: &str = "run_id, kind, session_id, turn_id, dialect, event, \
    canonical, command, source, scope, started_at, duration_ms, exit_code, parse_ok, failure, \
    failure_message, policy, sandbox, outcome, decision, agent_message, user_message, \
    halt_reason, inject_context, updated_input, queued_message, session_env, outcome_truncated, \
    stdin, stdin_truncated, stdout, stdout_truncated, stderr, stderr_truncated, NULL, 0, 0";

/// The schema version that added the audit chain.
pub(crate) const CHAIN_SINCE: i64 = 5;

/// How many columns [`RECORD_COLUMNS`] names (the fields a chain hash covers).
pub(crate) const RECORD_FIELDS: usize = 37;

/// The insert statement for one record: [`RECORD_COLUMNS`] as `?1`..`?37`, then the
/// row's seq, the hash of the run before it and its own hash.
pub(crate) const INSERT: &str = "INSERT INTO hook_runs (run_id, kind, session_id, turn_id, \
    dialect, event, canonical, command, source, scope, started_at, duration_ms, exit_code, \
    parse_ok, failure, failure_message, policy, sandbox, outcome, decision, agent_message, \
    user_message, halt_reason, inject_context, updated_input, queued_message, session_env, \
    outcome_truncated, stdin, stdin_truncated, stdout, stdout_truncated, stderr, \
    stderr_truncated, warnings, redactions, leaked, seq, prev_hash, hash) VALUES (?1, ?2, ?3, \
    ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, \
    ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40)";

/// Reads `user_version` and `application_id`, and refuses a database this build must not
/// touch. Returns the version. Writes nothing.
pub(crate) fn check(conn: &Connection, path: &Path) -> Result<i64, SpineError> {
    let err = |source| SpineError::Open {
        path: path.to_path_buf(),
        cause: source,
    };
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(err)?;
    let app: i32 = conn
        .pragma_query_value(None, "application_id", |row| row.get(0))
        .map_err(err)?;
    // Application id 0 is a fresh file only when it holds nothing: another program's
    // database (which never set an id) is refused, not adopted.
    let foreign = match app {
        APPLICATION_ID => false,
        0 => {
            let objects: i64 = conn
                .query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))
                .map_err(err)?;
            version != 0 || objects != 0
        }
        _ => true,
    };
    if foreign {
        return Err(SpineError::Foreign {
            path: path.to_path_buf(),
            application_id: app,
        });
    }
    if version > VERSION {
        return Err(SpineError::TooNew {
            path: path.to_path_buf(),
            found: version,
            supported: VERSION,
        });
    }
    Ok(version)
}

/// Applies every migration the database lacks (it was at version `from` when
/// [`check`]ed), one transaction each. Takes no write lock when there is nothing to do.
pub(crate) fn migrate(conn: &mut Connection, path: &Path, from: i64) -> Result<(), SpineError> {
    let skip = usize::try_from(from).unwrap_or(0);
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(skip) {
        let target = index as i64 + 1;
        let err = |source| SpineError::Migrate {
            path: path.to_path_buf(),
            version: target,
            cause: source,
        };
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        // Re-read under the write lock: another process may have migrated meanwhile.
        let current: i64 = tx
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(err)?;
        if current > VERSION {
            return Err(SpineError::TooNew {
                path: path.to_path_buf(),
                found: current,
                supported: VERSION,
            });
        }
        if current >= target {
            continue; // dropping the transaction rolls it back: nothing was written
        }
        if current == 0 {
            tx.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(err)?;
        }
        tx.execute_batch(sql).map_err(err)?;
        tx.pragma_update(None, "user_version", target)
            .map_err(err)?;
        tx.commit().map_err(err)?;
    }
    Ok(())
}
