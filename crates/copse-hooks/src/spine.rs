//! The spine: an audit log of every hook run, in an embedded SQLite database.
//!
//! The engine hands each finished run (and each dropped or suppressed one) to
//! [`Spine::record`] as a [`RunRecord`]. Recording never touches the disk on the
//! caller's thread: records go onto a bounded in-memory queue, and a writer thread
//! commits them in batched transactions (every 50 ms or 500 records by default). When
//! the writer falls far behind, new records are counted as dropped rather than making
//! the caller wait. [`Spine::flush`] waits for everything recorded so far; dropping the
//! spine flushes.
//!
//! The database is in WAL mode with `synchronous=NORMAL`: a crash (of the process or
//! the machine) loses at most the batches not yet committed and never corrupts the
//! file. The schema is versioned (`PRAGMA user_version`, see [`schema`]); a database
//! written by a newer build is refused untouched.
//!
//! The spine must never get in the way of gating: a database that cannot be opened,
//! is locked, read-only, corrupt, foreign or too new turns recording into a no-op with
//! one [`SpineWarning`] for the host to show ([`Spine::open`]). Failures while running
//! (a commit that fails) drop that batch and latch one warning too
//! ([`Spine::take_warning`]).
//!
//! Retention ([`Retention`]: newest 10,000 runs, 30 days by default) is enforced by
//! the writer thread at start-up and every 100 commits or 1,000 records; it removes
//! the oldest runs in recording order.
//!
//! Every run is linked into a tamper-evident hash chain ([`chain`]): the writer hashes
//! each row with the hash of the row before it. [`Spine::verify_chain`] checks the
//! whole store and names the first run that was edited, removed or reordered;
//! [`Spine::chain_head`] is the newest link, for exports.
//!
//! Reads ([`Spine::query`], [`Spine::get`], [`Spine::first_failures`],
//! [`Spine::latest_session`]) use their own connection; on a writable spine they
//! flush first, so they see every record made before the call. A reader that only
//! wants to look (the CLI) uses [`Spine::open_read_only`].

pub mod chain;
mod query;
mod record;
pub mod redact;
pub mod schema;
mod writer;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

/// Environment variable read by [`crate::Engine::new`]: the audit store's flush interval
/// in milliseconds, so a test can hold records in the writer's queue (e.g. to prove the
/// CLI's signal handling commits them). Only in builds with the `test-seams` feature.
#[cfg(feature = "test-seams")]
pub const FLUSH_INTERVAL_VAR: &str = "COPSE_HOOKS_SPINE_FLUSH_MS";
pub use chain::{ChainHash, ChainHead, ChainProblem, ChainProblemKind, ChainReport};
pub use query::{
    FailureSummary, FilterValues, HookFailure, HookStats, LATENCY_BUCKETS, RunCursor, RunFilter,
    RunPage, RunQuery, RunSummary, SessionSummary, TimeBucket, WindowStats,
};
pub use query::{
    RunIdMatch, SHORT_ID_MIN, TIMEOUT_HINT, TOOL_SUMMARY_MAX, ToolCallSummary, one_line,
    resolve_run_id, run_id_digest, short_ids, status_label, tool_call_summary,
};
pub use record::{CAPTURE_CAP, RunKind, RunRecord, new_run_id, unix_ms};

use writer::{Shared, Tuning, lock};

/// The default number of rows [`Spine::query`] returns.
pub const DEFAULT_LIMIT: usize = 50;

/// Why the spine could not do something.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpineError {
    /// The database (or its directory) could not be created or opened.
    #[error("cannot open the hook run database {}: {cause}", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        cause: rusqlite::Error,
    },
    /// The directory for the database could not be created.
    #[error("cannot create the directory for the hook run database {}: {cause}", path.display())]
    CreateDir {
        /// The database file.
        path: PathBuf,
        /// What the OS said.
        cause: std::io::Error,
    },
    /// The database file cannot be written.
    #[error("the hook run database {} is read-only", path.display())]
    ReadOnly {
        /// The database file.
        path: PathBuf,
    },
    /// The file is an SQLite database of some other application.
    #[error(
        "{} is not a hook run database (SQLite application id {application_id:#x}); left untouched",
        path.display()
    )]
    Foreign {
        /// The database file.
        path: PathBuf,
        /// Its `PRAGMA application_id`.
        application_id: i32,
    },
    /// The database path exists but is not a regular file (a FIFO, a device, a
    /// directory): opening it could block or read without end.
    #[error("the hook run database {} is not a regular file; it was left untouched", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// The database was written by a newer build.
    #[error(
        "the hook run database {} has schema version {found}, newer than this build supports \
         ({supported}); it was left untouched",
        path.display()
    )]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// Its `user_version`.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// A read-only open found a database too old to read without migrating it.
    #[error(
        "the hook run database {} has schema version {found}, older than this build reads \
         ({supported}); record one hook run to migrate it",
        path.display()
    )]
    TooOld {
        /// The database file.
        path: PathBuf,
        /// Its `user_version`.
        found: i64,
        /// The oldest version this build reads.
        supported: i64,
    },
    /// A read-only open found no database (nothing has been recorded yet).
    #[error("no hook runs have been recorded yet ({} does not exist)", path.display())]
    Missing {
        /// The database file.
        path: PathBuf,
    },
    /// Migrating to a schema version failed; the database stays at the previous one.
    #[error("cannot migrate the hook run database {} to schema version {version}: {cause}", path.display())]
    Migrate {
        /// The database file.
        path: PathBuf,
        /// The version being migrated to.
        version: i64,
        /// What SQLite said.
        cause: rusqlite::Error,
    },
    /// The writer thread could not be started.
    #[error("cannot start the hook run writer for {}: {cause}", path.display())]
    Thread {
        /// The database file.
        path: PathBuf,
        /// What the OS said.
        cause: std::io::Error,
    },
    /// A read failed.
    #[error("cannot read the hook run database {}: {cause}", path.display())]
    Query {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        cause: rusqlite::Error,
    },
    /// A filter value is not one the spine knows.
    #[error("invalid hook run filter: {0}")]
    InvalidFilter(String),
    /// The spine is disabled: there is nothing to read.
    #[error("hook runs are not being recorded (the spine is disabled)")]
    Disabled,
}

/// Something the host should show the user once: recording is off or lost records.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SpineWarning {
    /// The database file.
    pub path: PathBuf,
    /// What happened, one line.
    pub message: String,
}

impl SpineWarning {
    fn disabled(path: &Path, err: &SpineError) -> SpineWarning {
        SpineWarning {
            path: path.to_path_buf(),
            message: format!("hook runs will not be recorded: {err}"),
        }
    }
}

impl fmt::Display for SpineWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// How much history to keep. `None` keeps that dimension unbounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Keep at most this many runs (the newest recorded).
    pub max_runs: Option<u64>,
    /// Drop runs that started more than this many days ago (oldest recorded first: a
    /// run stays while a run recorded before it is younger).
    pub max_age_days: Option<u64>,
    /// Keep the store's live data under this many bytes (oldest runs go first; the
    /// freed pages are returned to the file system).
    pub max_bytes: Option<u64>,
}

/// The default size limit of the audit store: 256 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_runs: Some(10_000),
            max_age_days: Some(30),
            max_bytes: Some(DEFAULT_MAX_BYTES),
        }
    }
}

/// How a writable spine behaves. The defaults suit an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpineOptions {
    /// What to keep.
    pub retention: Retention,
    /// The longest a record waits in memory before its batch is committed.
    pub flush_interval: Duration,
    /// A batch is committed as soon as it has this many records.
    pub batch_records: usize,
    /// The most records waiting in memory; more are dropped (and counted).
    pub queue_records: usize,
    /// The most bytes (roughly) waiting in memory; more are dropped (and counted).
    pub queue_bytes: usize,
    /// How long SQLite waits for another connection's lock, at open and per commit.
    pub busy_timeout: Duration,
    /// Prune after this many commits (also after every 1,000 records).
    pub prune_every_commits: u32,
    /// Redact well-known secret shapes from recorded streams and texts
    /// ([`redact`]); on by default.
    pub redact_secrets: bool,
}

impl Default for SpineOptions {
    fn default() -> Self {
        SpineOptions {
            retention: Retention::default(),
            flush_interval: Duration::from_millis(50),
            batch_records: 500,
            queue_records: 10_000,
            queue_bytes: 64 * 1024 * 1024,
            busy_timeout: Duration::from_secs(1),
            prune_every_commits: 100,
            redact_secrets: true,
        }
    }
}

/// Counters since the spine was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpineStats {
    /// Records accepted onto the queue.
    pub recorded: u64,
    /// Records committed to the database.
    pub committed: u64,
    /// Transactions that committed records.
    pub batches: u64,
    /// Records lost: rejected by a full queue or a disabled spine, or in a failed commit.
    pub dropped: u64,
    /// Records accepted and not yet committed or lost.
    pub pending: u64,
}

/// The audit store. `Send + Sync`; share it behind an `Arc`. Dropping it flushes.
pub struct Spine {
    path: Option<PathBuf>,
    shared: Option<Arc<Shared>>,
    writer: Option<JoinHandle<()>>,
    /// The read connection (opened on first read for a writable spine).
    reader: Mutex<Option<Connection>>,
    /// Records offered to a spine without a writer.
    dropped: AtomicU64,
    /// Modes tightened at open, for the host to say once.
    notices: Mutex<Vec<String>>,
}

impl fmt::Debug for Spine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match (&self.path, &self.shared) {
            (None, _) => "disabled",
            (Some(_), None) => "read-only",
            (Some(_), Some(_)) => "writable",
        };
        f.debug_struct("Spine")
            .field("path", &self.path)
            .field("mode", &mode)
            .finish_non_exhaustive()
    }
}

impl Spine {
    /// Opens (creating it and its directory if needed) the database at `path` for
    /// recording, with the default options. Never fails: a database that cannot be
    /// used gives a disabled spine and a warning to show once.
    pub fn open(path: impl AsRef<Path>) -> (Spine, Option<SpineWarning>) {
        Spine::open_with(path, SpineOptions::default())
    }

    /// [`Spine::open`] with options.
    pub fn open_with(
        path: impl AsRef<Path>,
        options: SpineOptions,
    ) -> (Spine, Option<SpineWarning>) {
        let path = path.as_ref();
        match Spine::try_open(path, options) {
            Ok(spine) => (spine, None),
            Err(err) => (Spine::disabled(), Some(SpineWarning::disabled(path, &err))),
        }
    }

    /// [`Spine::open_with`], returning the error instead of a disabled spine.
    ///
    /// Blocks for at most `busy_timeout` per lock it must wait for (only a migration
    /// or switching a new database to WAL takes a write lock).
    pub fn try_open(path: impl AsRef<Path>, options: SpineOptions) -> Result<Spine, SpineError> {
        let path = path.as_ref().to_path_buf();
        let mut notices = Vec::new();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let notice =
                crate::private::ensure_dir(dir).map_err(|source| SpineError::CreateDir {
                    path: path.clone(),
                    cause: source,
                })?;
            notices.extend(notice);
        }
        require_regular_or_absent(&path)?;
        if !path.exists() {
            // Created private before SQLite opens it (its -wal and -shm files take the
            // main file's mode).
            use std::os::unix::fs::OpenOptionsExt as _;
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(crate::private::FILE_MODE)
                .open(&path);
        }
        for suffix in ["", "-wal", "-shm"] {
            let mut file = path.clone().into_os_string();
            file.push(suffix);
            if let Ok(Some(n)) = crate::private::tighten_file(Path::new(&file)) {
                notices.push(n);
            }
        }
        let open_err = |source| SpineError::Open {
            path: path.clone(),
            cause: source,
        };
        let mut conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(open_err)?;
        conn.busy_timeout(options.busy_timeout).map_err(open_err)?;
        // Nothing may write before this check: a newer or foreign file stays untouched.
        let version = schema::check(&conn, &path)?;
        if conn.is_readonly(rusqlite::MAIN_DB).map_err(open_err)? {
            return Err(SpineError::ReadOnly { path });
        }
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "wal", |row| row.get(0))
            .map_err(open_err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            // WAL is unavailable here (e.g. some network file systems); the rollback
            // journal still gives atomic batches, only concurrency suffers.
            conn.pragma_update(None, "journal_mode", "delete")
                .map_err(open_err)?;
        }
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_err)?;
        if version == 0 {
            // Before the first table: freed pages can then be returned incrementally
            // when the size limit prunes.
            conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")
                .map_err(open_err)?;
        }
        schema::migrate(&mut conn, &path, version)?;
        // One small read: the head is known from the start (a failure leaves it unknown
        // until the first commit).
        let head = chain::head(&conn).ok().flatten();

        let tuning = Tuning {
            flush_interval: options.flush_interval,
            batch_records: options.batch_records.max(1),
            queue_records: options.queue_records.max(1),
            queue_bytes: options.queue_bytes.max(1),
            prune_every_commits: options.prune_every_commits.max(1),
            redact_secrets: options.redact_secrets,
        };
        let shared = Arc::new(Shared::new(path.clone(), tuning, head));
        let thread_shared = Arc::clone(&shared);
        let retention = options.retention;
        let writer = std::thread::Builder::new()
            .name("copse-spine".into())
            .spawn(move || writer::run(&thread_shared, conn, retention))
            .map_err(|source| SpineError::Thread {
                path: path.clone(),
                cause: source,
            })?;
        Ok(Spine {
            path: Some(path),
            shared: Some(shared),
            writer: Some(writer),
            reader: Mutex::new(None),
            dropped: AtomicU64::new(0),
            notices: Mutex::new(notices),
        })
    }

    /// Opens an existing database for reading only: no writer, nothing is created,
    /// migrated or pruned. [`Spine::record`] on it is a no-op.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Spine, SpineError> {
        let path = path.as_ref().to_path_buf();
        if !path.exists() {
            return Err(SpineError::Missing { path });
        }
        let conn = open_reader(&path)?;
        let version = schema::check(&conn, &path)?;
        if version == 0 {
            return Err(SpineError::Missing { path });
        }
        if version < schema::MIN_READABLE {
            return Err(SpineError::TooOld {
                path,
                found: version,
                supported: schema::MIN_READABLE,
            });
        }
        Ok(Spine {
            path: Some(path),
            shared: None,
            writer: None,
            reader: Mutex::new(Some(conn)),
            dropped: AtomicU64::new(0),
            notices: Mutex::new(Vec::new()),
        })
    }

    /// A spine that records nothing and has nothing to read.
    pub fn disabled() -> Spine {
        Spine {
            path: None,
            shared: None,
            writer: None,
            reader: Mutex::new(None),
            dropped: AtomicU64::new(0),
            notices: Mutex::new(Vec::new()),
        }
    }

    /// Whether records are being written.
    pub fn is_recording(&self) -> bool {
        self.shared.is_some()
    }

    /// The database file, unless disabled.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Queues a record for the writer thread. Never blocks on disk, never fails: when
    /// the queue is full or the spine is not recording, the record is counted as
    /// dropped.
    pub fn record(&self, rec: RunRecord) {
        match &self.shared {
            Some(shared) => shared.push(rec),
            None => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Records one run of a session (the record stage's one call): `suppressed` when
    /// its decision could not apply (a detached run).
    pub fn record_run(
        &self,
        run: &crate::outcome::HookRun,
        session_id: &str,
        turn_id: &str,
        suppressed: bool,
    ) {
        let record = RunRecord::from_run(run, session_id, turn_id, run.sandbox.as_str());
        self.record(if suppressed {
            record.suppressed()
        } else {
            record
        });
    }

    /// Waits until everything recorded so far is committed (or lost to a failed
    /// commit, which [`Spine::take_warning`] then reports). Returns at once when not
    /// recording.
    pub fn flush(&self) {
        if let Some(shared) = &self.shared {
            shared.flush();
        }
    }

    /// The newest link of the audit chain: as of this spine's last commit on a
    /// writable spine (kept in memory, so this never touches the disk or waits for
    /// the writer; runs another process committed since are not in it), as stored on
    /// a read-only one. `None` before the first chained run, on a store that predates
    /// the chain, or when disabled.
    pub fn chain_head(&self) -> Option<ChainHead> {
        match &self.shared {
            Some(shared) => shared.chain_head(),
            None => self.read(chain::head).ok().flatten(),
        }
    }

    /// Checks the whole audit chain (after a flush, on a writable spine), in one read
    /// snapshot: every run after the last pruned one must be present, in order, with
    /// its content matching its hash. See [`ChainReport`].
    pub fn verify_chain(&self) -> Result<ChainReport, SpineError> {
        self.read(chain::verify)
    }

    /// Takes the notices from opening (a directory or file whose wider mode was
    /// tightened to the user's alone).
    pub fn take_notices(&self) -> Vec<String> {
        std::mem::take(&mut *self.notices.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The first warning raised while recording (a failed commit or prune), once.
    pub fn take_warning(&self) -> Option<SpineWarning> {
        self.shared.as_ref().and_then(|s| s.take_warning())
    }

    /// Every warning raised while recording and not taken yet, in order.
    pub fn take_warnings(&self) -> Vec<SpineWarning> {
        self.shared
            .as_ref()
            .map(|s| s.take_warnings())
            .unwrap_or_default()
    }

    /// Counters since open.
    pub fn stats(&self) -> SpineStats {
        let own = self.dropped.load(Ordering::Relaxed);
        match &self.shared {
            Some(shared) => SpineStats {
                recorded: shared.accepted(),
                committed: shared.committed.load(Ordering::Relaxed),
                batches: shared.batches.load(Ordering::Relaxed),
                dropped: own + shared.dropped.load(Ordering::Relaxed),
                pending: shared.pending(),
            },
            None => SpineStats {
                dropped: own,
                ..SpineStats::default()
            },
        }
    }

    /// Runs, newest first (by start time), as the filter selects.
    pub fn query(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, SpineError> {
        filter.validate()?;
        self.read(|conn| query::query(conn, filter))
    }

    /// One run, in full.
    pub fn get(&self, run_id: &str) -> Result<Option<RunRecord>, SpineError> {
        self.read(|conn| query::get(conn, run_id))
    }

    /// Every run id, newest first (for short ids: [`short_ids`], [`resolve_run_id`]).
    pub fn run_ids(&self) -> Result<Vec<String>, SpineError> {
        self.read(query::run_ids)
    }

    /// What a run id given by a user names: a full id, a short id or a unique prefix
    /// of either ([`resolve_run_id`] over every recorded run).
    pub fn resolve(&self, wanted: &str) -> Result<RunIdMatch, SpineError> {
        Ok(resolve_run_id(&self.run_ids()?, wanted))
    }

    /// The short id of every recorded run, by run id ([`short_ids`]).
    pub fn short_ids(&self) -> Result<HashMap<String, String>, SpineError> {
        Ok(short_ids(&self.run_ids()?))
    }

    /// The first failure recorded for each hook in a session, keyed by
    /// `(source, wire event, command)`, valued by the failure message. Empty when the
    /// spine cannot be read.
    pub fn first_failures(&self, session_id: &str) -> HashMap<(String, String, String), String> {
        self.read(|conn| query::first_failures(conn, session_id))
            .unwrap_or_default()
    }

    /// The most recent failure of each hook across every session, newest first
    /// (`doctor`, and `list`'s last error). Empty when the spine cannot be read.
    pub fn recent_failures(&self) -> Vec<query::HookFailure> {
        self.read(query::recent_failures).unwrap_or_default()
    }

    /// The persistent hooks the store last saw broken (`list`, `doctor`), newest
    /// first. Empty when the spine cannot be read.
    pub fn broken_hooks(&self) -> Vec<query::HookFailure> {
        self.read(query::broken_hooks).unwrap_or_default()
    }

    /// The session of the newest run; `None` when there is none or the spine cannot
    /// be read.
    pub fn latest_session(&self) -> Option<String> {
        self.read(query::latest_session).ok().flatten()
    }

    fn read<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, SpineError> {
        let Some(path) = &self.path else {
            return Err(SpineError::Disabled);
        };
        self.flush();
        let mut reader = lock(&self.reader);
        let conn = match &mut *reader {
            Some(conn) => conn,
            empty => empty.insert(open_reader(path)?),
        };
        f(conn).map_err(|source| SpineError::Query {
            path: path.clone(),
            cause: source,
        })
    }
}

impl Drop for Spine {
    fn drop(&mut self) {
        if let Some(shared) = &self.shared {
            shared.shutdown();
        }
        if let Some(writer) = self.writer.take() {
            // A writer that panicked has nothing left to flush.
            let _ = writer.join();
        }
    }
}

/// Refuses a path that exists but is not a regular file (a FIFO would block SQLite's
/// open, a device would be read without end).
fn require_regular_or_absent(path: &Path) -> Result<(), SpineError> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Err(SpineError::NotAFile {
            path: path.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

fn open_reader(path: &Path) -> Result<Connection, SpineError> {
    let err = |source| SpineError::Open {
        path: path.to_path_buf(),
        cause: source,
    };
    require_regular_or_absent(path)?;
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(err)?;
    conn.busy_timeout(Duration::from_secs(1)).map_err(err)?;
    Ok(conn)
}

/// Browsing reads (the web page): keyset pages, sessions, window statistics.
impl Spine {
    /// One page of runs, newest first, continuing after `q.after`.
    pub fn page(&self, q: &RunQuery) -> Result<RunPage, SpineError> {
        q.validate()?;
        self.read(|conn| query::page(conn, q))
    }

    /// The newest row number (0 when empty): it grows whenever a run is recorded.
    pub fn latest_seq(&self) -> Result<i64, SpineError> {
        self.read(query::latest_seq)
    }

    /// The start (unix ms) of the oldest run, if any.
    pub fn oldest_started(&self) -> Result<Option<u64>, SpineError> {
        self.read(query::oldest_started)
    }

    /// The most recently active sessions (by their newest run), at most `limit`,
    /// considering runs started before `before`.
    pub fn sessions(
        &self,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<SessionSummary>, SpineError> {
        self.read(|conn| query::sessions(conn, before, limit))
    }

    /// Every record of a session in start order (at most `limit`).
    pub fn session_runs(
        &self,
        session_id: &str,
        limit: usize,
    ) -> Result<Vec<RunSummary>, SpineError> {
        self.read(|conn| query::session_runs(conn, session_id, limit))
    }

    /// The distinct dialects, events and failure kinds recorded.
    pub fn filter_values(&self) -> Result<FilterValues, SpineError> {
        self.read(query::filter_values)
    }

    /// Per-hook statistics (runs, failures, p50/p95, latency histogram, last failure)
    /// and a timeline of `buckets` buckets, for the runs started in `[since, until)`.
    pub fn window_stats(
        &self,
        since: u64,
        until: u64,
        buckets: usize,
    ) -> Result<WindowStats, SpineError> {
        self.read(|conn| query::window_stats(conn, since, until, buckets))
    }
}
