//! The spine (audit store): real SQLite files in temp dirs.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use copse_hooks::spine::{
    CAPTURE_CAP, Retention, RunFilter, RunKind, RunRecord, Spine, SpineError, SpineOptions,
    new_run_id, schema, unix_ms,
};
use copse_hooks::{
    CanonicalEvent, Decision, Dialect, DroppedRun, FailureKind, HookRun, Outcome, RunOutcome, Scope,
};
use copse_hooks::{Failure, FailurePolicy, Halt, QueueRequest};
use rusqlite::Connection;
use serde_json::{Map, json};

const DAY_MS: u64 = 86_400_000;

fn now_ms() -> u64 {
    unix_ms(SystemTime::now())
}

fn db(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("copse").join("spine.db")
}

/// Options that keep everything (no retention) and never wait long for a lock.
fn keep_all() -> SpineOptions {
    SpineOptions {
        retention: Retention {
            max_runs: None,
            max_age_days: None,
            max_bytes: None,
        },
        busy_timeout: Duration::from_millis(200),
        ..SpineOptions::default()
    }
}

fn open(path: &Path, options: SpineOptions) -> Spine {
    let (spine, warning) = Spine::open_with(path, options);
    assert!(warning.is_none(), "unexpected warning: {warning:?}");
    assert!(spine.is_recording());
    spine
}

/// A record with every field set to something distinctive.
fn full(i: u64) -> RunRecord {
    let started_at = now_ms() - 60_000 + i;
    {
        let mut record = RunRecord::default();
        record.run_id = new_run_id(started_at);
        record.session_id = format!("session-{}", i % 3);
        record.turn_id = format!("turn-{i}");
        record.kind = RunKind::Run;
        record.dialect = "cursor".into();
        record.event = "beforeShellExecution".into();
        record.canonical = "toolGate".into();
        record.command = format!("./hooks/check-{i}.sh");
        record.source = "/home/u/.cursor/hooks.json".into();
        record.scope = "user".into();
        record.started_at = started_at;
        record.duration_ms = 17 + i;
        record.exit_code = Some(2);
        record.parse_ok = false;
        record.failure = Some("invalid_json".into());
        record.failure_message = Some("printed something that is not JSON".into());
        record.policy = Some("closed".into());
        record.sandbox = Some("enforced".into());
        record.outcome = "failed".into();
        record.decision = Some("deny".into());
        record.agent_message = Some("no force pushes".into());
        record.user_message = Some("blocked by policy ✓".into());
        record.halt_reason = Some("stop now".into());
        record.inject_context = Some("remember the tests".into());
        record.updated_input = Some(r#"{"command":"git status"}"#.into());
        record.queued_message = Some("follow up".into());
        record.session_env = true;
        record.outcome_truncated = false;
        record.stdin = format!("{{\"n\":{i}}}").into_bytes();
        record.stdin_truncated = false;
        record.stdout = b"not json\x00\xff".to_vec();
        record.stdout_truncated = true;
        record.stderr = b"warning: x\n".to_vec();
        record.stderr_truncated = false;
        record.warnings = vec![format!("warning {i}")];
        record.redactions = i;
        record.leaked = i % 2 == 1;
        record
    }
}

/// A plain allow run of `event` in `session`.
fn simple(session: &str, event: &str, canonical: &str, outcome: &str, at: u64) -> RunRecord {
    let mut record = RunRecord::default();
    record.run_id = new_run_id(at);
    record.session_id = session.into();
    record.turn_id = "t".into();
    record.dialect = "cursor".into();
    record.event = event.into();
    record.canonical = canonical.into();
    record.command = "hook.sh".into();
    record.source = "/ws/.cursor/hooks.json".into();
    record.scope = "project".into();
    record.started_at = at;
    record.duration_ms = 3;
    record.exit_code = Some(0);
    record.parse_ok = true;
    record.outcome = outcome.into();
    record.decision = Decision::parse(outcome).map(|d| d.as_str().to_owned());
    record.stdin = b"{}".to_vec();
    record
}

fn count(path: &Path) -> i64 {
    let conn = Connection::open(path).unwrap();
    conn.query_row("SELECT count(*) FROM hook_runs", [], |r| r.get(0))
        .unwrap()
}

fn all(spine: &Spine) -> Vec<copse_hooks::spine::RunSummary> {
    spine
        .query(&RunFilter {
            limit: Some(usize::MAX),
            ..RunFilter::default()
        })
        .unwrap()
}

#[test]
fn every_field_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let spine = open(&path, keep_all());
    let records: Vec<RunRecord> = (0..3).map(full).collect();
    for rec in &records {
        spine.record(rec.clone());
    }
    let mut bare = simple("s", "stop", "stop", "none", now_ms());
    bare.exit_code = None;
    spine.record(bare.clone());
    spine.flush();
    for rec in records.iter().chain([&bare]) {
        assert_eq!(spine.get(&rec.run_id).unwrap().as_ref(), Some(rec));
    }
    assert_eq!(spine.get("r0000000000000-nope").unwrap(), None);

    // And through a fresh read-only handle in another connection.
    drop(spine);
    let reader = Spine::open_read_only(&path).unwrap();
    assert_eq!(
        reader.get(&records[1].run_id).unwrap().as_ref(),
        Some(&records[1])
    );
    let summary = &all(&reader)[1]; // newest first: bare, then records[2], records[1]...
    assert_eq!(summary.run_id, records[2].run_id);
    assert!(summary.halt && summary.updated_input && summary.inject_context);
    assert!(summary.queued_message && summary.session_env && summary.truncated);
    assert_eq!(summary.agent_message_len, "no force pushes".len() as u64);
    assert_eq!(summary.user_message_len, "blocked by policy ✓".len() as u64);
    assert_eq!(summary.stdout_len, 10);
    assert_eq!(summary.failure.as_deref(), Some("invalid_json"));
    assert_eq!(summary.sandbox.as_deref(), Some("enforced"));
    assert!(!summary.parse_ok);
}

fn hook_run() -> HookRun {
    let mut updated = Map::new();
    updated.insert("command".into(), json!("git status"));
    {
        let mut run = HookRun::new(
            "beforeShellExecution",
            CanonicalEvent::ToolGate,
            Dialect::Claude,
            "./check.sh",
            "/ws/.claude/settings.json",
            Scope::Project,
        );
        run.started_at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_718_000_000_123);
        run.duration = Duration::from_micros(42_700);
        run.exit_code = Some(1);
        run.parse_ok = true;
        run.failure = Some(Failure {
            kind: FailureKind::Timeout,
            message: "timed out after 30s".into(),
        });
        run.policy = FailurePolicy::Closed;
        run.outcome = {
            let mut outcome = Outcome::default();
            outcome.decision = Some(Decision::Deny);
            outcome.agent_message = Some("agent".into());
            outcome.user_message = Some("x".repeat(CAPTURE_CAP + 10));
            outcome.updated_input = Some(updated);
            outcome.replace_input = false;
            outcome.tool_env_script = None;
            outcome.updated_permissions = None;
            outcome.inject_context = Some("ctx".into());
            outcome.halt = Some(Halt {
                reason: "halt!".into(),
            });
            outcome.queue_message = Some(QueueRequest {
                text: "queued".into(),
                send_now: false,
                held: true,
            });
            outcome.session_env = Some(BTreeMap::from([("K".into(), "V".into())]));
            outcome
        };
        run.result = RunOutcome::Failed;
        run.stdin = vec![b'i'; CAPTURE_CAP + 1];
        run.stdout = b"{}".to_vec();
        run.stderr = vec![b'e'; CAPTURE_CAP];
        run.sandbox = copse_hooks::SandboxState::Enforced;
        run.leaked = true;
        run.warnings = vec!["session environment variable \"PATH\" dropped".into()];
        run
    }
}

#[test]
fn from_run_maps_and_caps_every_field() {
    let run = hook_run();
    let rec = RunRecord::from_run(&run, "sess", "turn", "enforced");
    assert!(rec.leaked, "leaked is recorded");
    assert!(rec.run_id.starts_with("r1718000000123-"), "{}", rec.run_id);
    assert_eq!(rec.run_id.len(), 29);
    assert_eq!(
        (rec.session_id.as_str(), rec.turn_id.as_str(), rec.kind),
        ("sess", "turn", RunKind::Run)
    );
    assert_eq!(
        (
            rec.dialect.as_str(),
            rec.event.as_str(),
            rec.canonical.as_str()
        ),
        ("claude", "beforeShellExecution", "toolGate")
    );
    assert_eq!(
        (
            rec.command.as_str(),
            rec.source.as_str(),
            rec.scope.as_str()
        ),
        ("./check.sh", "/ws/.claude/settings.json", "project")
    );
    assert_eq!((rec.started_at, rec.duration_ms), (1_718_000_000_123, 42));
    assert_eq!((rec.exit_code, rec.parse_ok), (Some(1), true));
    assert_eq!(rec.failure.as_deref(), Some("timeout"));
    assert_eq!(rec.failure_message.as_deref(), Some("timed out after 30s"));
    assert_eq!(rec.policy.as_deref(), Some("closed"));
    assert_eq!(rec.sandbox.as_deref(), Some("enforced"));
    assert_eq!(rec.outcome, "failed");
    assert_eq!(rec.decision.as_deref(), Some("deny"));
    assert_eq!(rec.agent_message.as_deref(), Some("agent"));
    assert_eq!(
        rec.user_message.as_ref().map(String::len),
        Some(CAPTURE_CAP)
    );
    assert!(rec.outcome_truncated);
    assert_eq!(rec.halt_reason.as_deref(), Some("halt!"));
    assert_eq!(rec.inject_context.as_deref(), Some("ctx"));
    assert_eq!(
        rec.updated_input.as_deref(),
        Some(r#"{"command":"git status"}"#)
    );
    assert_eq!(rec.queued_message.as_deref(), Some("queued"));
    assert!(rec.session_env);
    assert_eq!(rec.warnings, run.warnings);
    assert_eq!((rec.stdin.len(), rec.stdin_truncated), (CAPTURE_CAP, true));
    assert_eq!(
        (rec.stdout.as_slice(), rec.stdout_truncated),
        (&b"{}"[..], false)
    );
    assert_eq!(
        (rec.stderr.len(), rec.stderr_truncated),
        (CAPTURE_CAP, false)
    );
    assert_eq!(
        RunRecord::from_run(&run, "s", "t", "").sandbox,
        None,
        "an empty sandbox state is stored as NULL"
    );
    assert_eq!(rec.clone().suppressed().kind, RunKind::Suppressed);

    let dir = tempfile::tempdir().unwrap();
    let spine = open(&db(&dir), keep_all());
    spine.record(rec.clone());
    let mut suppressed = rec.clone().suppressed();
    suppressed.run_id = new_run_id(suppressed.started_at);
    spine.record(suppressed);
    let dropped = RunRecord::dropped(
        &{
            let mut dropped = DroppedRun::new(
                "afterFileEdit",
                CanonicalEvent::AfterFileEdit,
                Dialect::Cursor,
                "fmt.sh",
                "/h/.cursor/hooks.json",
                Scope::User,
            );
            dropped.at = SystemTime::now();
            dropped
        },
        "sess",
        "turn",
    );
    spine.record(dropped.clone());
    spine.flush();
    assert_eq!(spine.get(&rec.run_id).unwrap(), Some(rec));
    let got = spine.get(&dropped.run_id).unwrap().unwrap();
    assert_eq!(got, dropped);
    assert_eq!(got.kind, RunKind::Dropped);
    assert_eq!(got.outcome, "none");
    let kinds: Vec<RunKind> = all(&spine).iter().map(|s| s.kind).collect();
    assert_eq!(kinds.len(), 3);
    for kind in [RunKind::Run, RunKind::Dropped, RunKind::Suppressed] {
        assert!(kinds.contains(&kind), "{kind:?} missing from {kinds:?}");
    }
    assert_eq!(spine.take_warning(), None);
}

#[test]
fn a_duplicate_run_id_loses_only_that_record() {
    let dir = tempfile::tempdir().unwrap();
    let spine = open(&db(&dir), keep_all());
    let first = full(1);
    let mut twin = full(2);
    twin.run_id = first.run_id.clone();
    spine.record(first.clone());
    spine.record(twin);
    spine.record(full(3));
    spine.flush();
    let stats = spine.stats();
    assert_eq!((stats.committed, stats.dropped), (2, 1));
    assert_eq!(spine.get(&first.run_id).unwrap(), Some(first));
    let warning = spine.take_warning().expect("a warning");
    assert!(warning.message.contains("duplicate run id"), "{warning}");
}

#[test]
fn hand_built_records_are_capped_and_given_an_id() {
    let dir = tempfile::tempdir().unwrap();
    let spine = open(&db(&dir), keep_all());
    let mut rec = simple("s", "stop", "stop", "none", now_ms());
    rec.run_id.clear();
    rec.stdout = vec![b'o'; CAPTURE_CAP * 2];
    rec.agent_message = Some("é".repeat(CAPTURE_CAP)); // 2 bytes a char
    spine.record(rec);
    spine.flush();
    let listed = all(&spine);
    assert_eq!(listed.len(), 1);
    assert!(listed[0].run_id.starts_with('r'));
    let got = spine.get(&listed[0].run_id).unwrap().unwrap();
    assert_eq!(
        (got.stdout.len(), got.stdout_truncated),
        (CAPTURE_CAP, true)
    );
    assert_eq!(got.agent_message.map(|m| m.len()), Some(CAPTURE_CAP));
    assert!(got.outcome_truncated);
}

#[test]
fn the_spine_can_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<Spine>();
    let dir = tempfile::tempdir().unwrap();
    let spine = std::sync::Arc::new(open(&db(&dir), keep_all()));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let spine = std::sync::Arc::clone(&spine);
            std::thread::spawn(move || {
                for i in 0..250 {
                    spine.record(full(t * 1_000 + i));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    spine.flush();
    assert_eq!(spine.stats().committed, 1_000);
    assert_eq!(
        serde_json::to_value(&all(&spine)[0]).unwrap()["kind"],
        json!("run")
    );
}

#[test]
fn run_ids_are_unique_and_sort_by_start() {
    let mut ids: Vec<String> = (0..10_000).map(|i| new_run_id(1_000 + i / 100)).collect();
    let sorted = {
        let mut s = ids.clone();
        s.sort();
        s
    };
    assert_eq!(
        ids, sorted,
        "ids of one process sort by start, then creation"
    );
    ids.dedup();
    assert_eq!(ids.len(), 10_000);
    assert!(new_run_id(1) < new_run_id(2));
    assert!(new_run_id(9_999_999_999_999).starts_with("r9999999999999-"));
}

#[test]
fn a_thousand_records_are_batched_and_all_committed() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let spine = open(&path, keep_all());
    for i in 0..1_000 {
        spine.record(full(i));
    }
    spine.flush();
    let stats = spine.stats();
    assert_eq!(
        (
            stats.recorded,
            stats.committed,
            stats.dropped,
            stats.pending
        ),
        (1_000, 1_000, 0, 0)
    );
    assert!(
        (1..=20).contains(&stats.batches),
        "{} transactions for 1,000 records",
        stats.batches
    );
    assert_eq!(count(&path), 1_000);
    assert_eq!(all(&spine).len(), 1_000);
}

#[test]
fn drop_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let spine = open(
        &path,
        SpineOptions {
            flush_interval: Duration::from_secs(3_600),
            batch_records: 1_000_000,
            ..keep_all()
        },
    );
    for i in 0..25 {
        spine.record(full(i));
    }
    drop(spine);
    assert_eq!(count(&path), 25);
}

#[test]
fn records_are_committed_without_a_flush_within_the_interval() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let spine = open(&path, keep_all());
    spine.record(full(1));
    let deadline = Instant::now() + Duration::from_secs(5);
    while spine.stats().committed < 1 {
        assert!(
            Instant::now() < deadline,
            "the writer never committed on its own"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(count(&path), 1);
}

#[test]
fn a_full_queue_drops_instead_of_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let spine = open(
        &db(&dir),
        SpineOptions {
            flush_interval: Duration::from_secs(3_600),
            batch_records: 1_000_000,
            queue_records: 10,
            ..keep_all()
        },
    );
    for i in 0..100 {
        spine.record(full(i));
    }
    let stats = spine.stats();
    assert_eq!((stats.recorded, stats.dropped), (10, 90));
    spine.flush();
    assert_eq!(spine.stats().committed, 10);
    assert_eq!(all(&spine).len(), 10);
}

/// Records `n` runs and asserts none of the calls waited on anything.
fn record_quickly(spine: &Spine, n: u64) {
    let start = Instant::now();
    for i in 0..n {
        spine.record(full(i));
    }
    let took = start.elapsed();
    assert!(
        took < Duration::from_millis(150),
        "recording {n} runs took {took:?}"
    );
}

#[test]
fn an_unwritable_directory_degrades_to_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    // A regular file where the directory should be: unwritable even for root.
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let (spine, warning) = Spine::open(blocker.join("spine.db"));
    let warning = warning.expect("a warning");
    assert!(warning.message.contains("not be recorded"), "{warning}");
    assert!(!spine.is_recording());
    record_quickly(&spine, 100);
    spine.flush();
    assert_eq!(spine.stats().dropped, 100);
    assert!(matches!(
        spine.query(&RunFilter::default()),
        Err(SpineError::Disabled)
    ));
    assert!(spine.first_failures("s").is_empty());
    assert_eq!(spine.latest_session(), None);

    // A read-only directory, where permissions bind (not for root).
    use std::os::unix::fs::PermissionsExt;
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let bound = std::fs::write(ro.join("probe"), "x").is_err();
    let (spine, warning) = Spine::open(ro.join("spine.db"));
    record_quickly(&spine, 100);
    spine.flush();
    if bound {
        assert!(warning.is_some());
        assert_eq!(spine.stats().dropped, 100);
    }
    drop(spine);
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_corrupt_database_degrades_to_a_warning_and_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spine.db");
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&path, &garbage).unwrap();
    let (spine, warning) = Spine::open_with(&path, keep_all());
    let warning = warning.expect("a warning");
    assert!(
        warning.to_string().contains(&path.display().to_string()),
        "{warning}"
    );
    assert!(!spine.is_recording());
    record_quickly(&spine, 100);
    spine.flush();
    assert_eq!(spine.stats().dropped, 100);
    drop(spine);
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
    assert!(matches!(
        Spine::open_read_only(&path),
        Err(SpineError::Open { .. })
    ));
}

#[test]
fn an_exclusively_locked_database_degrades_to_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    drop(open(&path, keep_all()));
    let locker = Connection::open(&path).unwrap();
    locker
        .execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; DELETE FROM hook_runs;")
        .unwrap();

    let (spine, open_warning) = Spine::open_with(&path, keep_all());
    record_quickly(&spine, 100);
    spine.flush();
    let warning = open_warning.or_else(|| spine.take_warning());
    assert!(warning.is_some(), "no warning for a locked database");
    let stats = spine.stats();
    assert_eq!((stats.committed, stats.dropped), (0, 100));
    drop(spine);
    locker.execute_batch("COMMIT").unwrap();
    drop(locker);
    assert_eq!(count(&path), 0);
}

#[test]
fn a_write_locked_database_drops_batches_and_warns_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    drop(open(&path, keep_all()));
    let locker = Connection::open(&path).unwrap();
    locker.execute_batch("BEGIN IMMEDIATE").unwrap();

    // The schema is current, so opening needs no write lock: it succeeds.
    let spine = open(&path, keep_all());
    record_quickly(&spine, 100);
    spine.flush();
    let warning = spine.take_warning().expect("a runtime warning");
    assert!(warning.message.contains("not recorded"), "{warning}");
    assert_eq!(spine.take_warning(), None, "the warning is given once");
    assert_eq!(spine.stats().dropped, 100);

    // Once the lock is released recording carries on.
    locker.execute_batch("COMMIT").unwrap();
    spine.record(full(7));
    spine.flush();
    assert_eq!(spine.stats().committed, 1);
    assert_eq!(spine.take_warning(), None);
    drop(spine);
    assert_eq!(count(&path), 1);
}

/// The v1 schema exactly as it shipped; a test fixture, never to be edited.
const V1_SCHEMA: &str = "CREATE TABLE hook_runs (
    seq INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('run', 'dropped', 'suppressed')),
    session_id TEXT NOT NULL, turn_id TEXT NOT NULL, dialect TEXT NOT NULL,
    event TEXT NOT NULL, canonical TEXT NOT NULL, command TEXT NOT NULL,
    source TEXT NOT NULL, scope TEXT NOT NULL, started_at INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL, exit_code INTEGER, parse_ok INTEGER NOT NULL,
    failure TEXT, failure_message TEXT, policy TEXT, sandbox TEXT, outcome TEXT NOT NULL,
    decision TEXT, agent_message TEXT, user_message TEXT, halt_reason TEXT,
    inject_context TEXT, updated_input TEXT, queued_message TEXT,
    session_env INTEGER NOT NULL, outcome_truncated INTEGER NOT NULL,
    stdin BLOB NOT NULL, stdin_truncated INTEGER NOT NULL, stdout BLOB NOT NULL,
    stdout_truncated INTEGER NOT NULL, stderr BLOB NOT NULL, stderr_truncated INTEGER NOT NULL);
CREATE INDEX hook_runs_started ON hook_runs (started_at);
PRAGMA application_id = 1668247667;
PRAGMA user_version = 1;
INSERT INTO hook_runs VALUES (1, 'r0000000000001-00000000000000', 'run', 'old-session', 't',
    'cursor', 'stop', 'stop', 'old.sh', '/h/.cursor/hooks.json', 'user', 1700000000000, 5,
    0, 1, 'exit', 'exited with 3', 'open', NULL, 'failed', NULL, NULL, NULL, NULL, NULL,
    NULL, NULL, 0, 0, x'7b7d', 0, x'', 0, x'6f6f7073', 0);";

#[test]
fn a_v1_database_is_migrated_and_keeps_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spine.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch(V1_SCHEMA)
        .unwrap();
    assert_eq!(schema::APPLICATION_ID, 1_668_247_667);

    // Read-only opens read a v1 database as it is.
    let reader = Spine::open_read_only(&path).unwrap();
    assert_eq!(all(&reader).len(), 1);
    drop(reader);

    let spine = open(&path, keep_all());
    let old = spine.get("r0000000000001-00000000000000").unwrap().unwrap();
    assert_eq!(old.session_id, "old-session");
    assert_eq!(old.stderr, b"oops");
    spine.record(simple("new", "stop", "stop", "none", now_ms()));
    spine.flush();
    assert_eq!(spine.latest_session().as_deref(), Some("new"));
    assert_eq!(
        spine.first_failures("old-session").get(&(
            "/h/.cursor/hooks.json".to_owned(),
            "stop".to_owned(),
            "old.sh".to_owned()
        )),
        Some(&"exited with 3".to_owned())
    );
    drop(spine);

    let conn = Connection::open(&path).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, schema::VERSION);
    const { assert!(schema::VERSION >= 2) };
    let indexes: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'hook_runs_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for name in [
        "hook_runs_started",
        "hook_runs_session",
        "hook_runs_failures",
        "hook_runs_outcome_started",
        "hook_runs_event_started",
        "hook_runs_canonical_started",
        "hook_runs_failure_started",
        "hook_runs_hook_started",
        "hook_runs_session_started",
        "hook_runs_kind_started",
    ] {
        assert!(
            indexes.iter().any(|i| i == name),
            "{name} missing: {indexes:?}"
        );
    }
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn a_fresh_database_is_at_the_latest_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    drop(open(&path, keep_all()));
    let conn = Connection::open(&path).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, schema::VERSION);
    // Opening again migrates nothing and still works.
    let spine = open(&path, keep_all());
    spine.record(full(1));
    spine.flush();
    assert_eq!(spine.stats().committed, 1);
}

#[test]
fn a_database_from_a_newer_version_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spine.db");
    let future = schema::VERSION + 1;
    Connection::open(&path)
        .unwrap()
        .execute_batch(&format!(
            "CREATE TABLE hook_runs (x); PRAGMA application_id = {}; PRAGMA user_version = {future};",
            schema::APPLICATION_ID
        ))
        .unwrap();
    let before = std::fs::read(&path).unwrap();

    let (spine, warning) = Spine::open_with(&path, keep_all());
    let warning = warning.expect("a warning");
    assert!(warning.message.contains("newer"), "{warning}");
    assert!(!spine.is_recording());
    spine.record(full(1));
    drop(spine);
    match Spine::try_open(&path, keep_all()) {
        Err(SpineError::TooNew {
            found, supported, ..
        }) => assert_eq!((found, supported), (future, schema::VERSION)),
        other => panic!("expected TooNew, got {other:?}"),
    }
    assert!(matches!(
        Spine::open_read_only(&path),
        Err(SpineError::TooNew { .. })
    ));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file was modified"
    );
    assert!(!dir.path().join("spine.db-wal").exists());
}

#[test]
fn a_foreign_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch("PRAGMA application_id = 42; CREATE TABLE t (x);")
        .unwrap();
    assert!(matches!(
        Spine::try_open(&path, keep_all()),
        Err(SpineError::Foreign {
            application_id: 42,
            ..
        })
    ));
}

#[test]
fn read_only_open_needs_an_existing_database_and_never_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    assert!(matches!(
        Spine::open_read_only(&path),
        Err(SpineError::Missing { .. })
    ));
    assert!(!path.exists(), "a read-only open created the file");
    let spine = open(&path, keep_all());
    spine.record(full(1));
    spine.flush();
    let reader = Spine::open_read_only(&path).unwrap();
    assert!(!reader.is_recording());
    reader.record(full(2));
    reader.flush();
    assert_eq!(reader.stats().dropped, 1);
    assert_eq!(all(&reader).len(), 1);
    // The reader sees what the writer commits later.
    spine.record(full(3));
    spine.flush();
    assert_eq!(all(&reader).len(), 2);
}

#[test]
fn retention_keeps_the_newest_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let base = now_ms() - 10_000;
    // Pruned by the writer after every commit.
    let spine = open(
        &path,
        SpineOptions {
            retention: Retention {
                max_runs: Some(10),
                max_age_days: None,
                max_bytes: None,
            },
            prune_every_commits: 1,
            ..keep_all()
        },
    );
    for i in 0..25 {
        spine.record(simple("s", "stop", "stop", "none", base + i));
    }
    spine.flush();
    let kept: Vec<u64> = all(&spine).iter().map(|s| s.started_at).collect();
    assert_eq!(kept, (15..25).rev().map(|i| base + i).collect::<Vec<_>>());
    drop(spine);

    // Pruned at open: a smaller limit applies to what is already there.
    let spine = open(
        &path,
        SpineOptions {
            retention: Retention {
                max_runs: Some(3),
                max_age_days: None,
                max_bytes: None,
            },
            ..keep_all()
        },
    );
    spine.flush();
    let kept: Vec<u64> = all(&spine).iter().map(|s| s.started_at).collect();
    assert_eq!(kept, vec![base + 24, base + 23, base + 22]);
}

#[test]
fn retention_drops_old_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let now = now_ms();
    let spine = open(&path, keep_all());
    for (i, age_days) in [40, 31, 29, 1, 0].into_iter().enumerate() {
        spine.record(simple(
            &format!("s{i}"),
            "stop",
            "stop",
            "none",
            now - age_days * DAY_MS,
        ));
    }
    spine.flush();
    assert_eq!(all(&spine).len(), 5);
    drop(spine);
    let spine = open(
        &path,
        SpineOptions {
            retention: Retention {
                max_runs: None,
                max_age_days: Some(30),
                max_bytes: None,
            },
            ..keep_all()
        },
    );
    spine.flush();
    let sessions: Vec<String> = all(&spine).into_iter().map(|s| s.session_id).collect();
    assert_eq!(sessions, ["s4", "s3", "s2"]);
    // The default keeps them all (30 days, 10,000 runs).
    drop(spine);
    let spine = open(
        &path,
        SpineOptions {
            retention: Retention::default(),
            ..keep_all()
        },
    );
    spine.flush();
    assert_eq!(all(&spine).len(), 3);
}

#[test]
fn queries_filter_and_order_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let spine = open(&db(&dir), keep_all());
    let t = now_ms() - 100_000;
    spine.record(simple("a", "beforeShellExecution", "toolGate", "allow", t));
    spine.record(simple(
        "a",
        "beforeShellExecution",
        "toolGate",
        "deny",
        t + 1,
    ));
    spine.record(simple("b", "PreToolUse", "toolGate", "ask", t + 2));
    let mut claude = simple("b", "Stop", "stop", "none", t + 3);
    claude.dialect = "claude".into();
    spine.record(claude);
    let mut failed = simple("b", "afterFileEdit", "afterFileEdit", "failed", t + 4);
    failed.failure = Some("exit".into());
    failed.failure_message = Some("exited with 1".into());
    spine.record(failed);
    for i in 0..60 {
        spine.record(simple("c", "stop", "stop", "none", t - 1_000 - i));
    }

    let ids = |filter: RunFilter| -> Vec<(String, u64)> {
        spine
            .query(&filter)
            .unwrap()
            .into_iter()
            .map(|s| (s.outcome, s.started_at - t))
            .collect()
    };
    let by = |outcome: &str, at: u64| (outcome.to_owned(), at);

    assert_eq!(
        spine.query(&RunFilter::default()).unwrap().len(),
        50,
        "default limit"
    );
    let newest = spine.query(&RunFilter::default()).unwrap();
    assert!(
        newest
            .windows(2)
            .all(|w| w[0].started_at >= w[1].started_at)
    );
    assert_eq!(newest[0].started_at, t + 4);

    let wire = RunFilter {
        event: Some("beforeShellExecution".into()),
        ..RunFilter::default()
    };
    assert_eq!(ids(wire), [by("deny", 1), by("allow", 0)]);
    let canonical = RunFilter {
        event: Some("toolGate".into()),
        ..RunFilter::default()
    };
    assert_eq!(
        ids(canonical),
        [by("ask", 2), by("deny", 1), by("allow", 0)]
    );
    let deny = RunFilter {
        outcome: Some("deny".into()),
        ..RunFilter::default()
    };
    assert_eq!(ids(deny), [by("deny", 1)]);
    let claude = RunFilter {
        dialect: Some("claude".into()),
        ..RunFilter::default()
    };
    assert_eq!(ids(claude), [by("none", 3)]);
    let failed = RunFilter {
        failed: true,
        ..RunFilter::default()
    };
    assert_eq!(ids(failed), [by("failed", 4)]);
    let since = RunFilter {
        since: Some(t + 2),
        ..RunFilter::default()
    };
    assert_eq!(ids(since), [by("failed", 4), by("none", 3), by("ask", 2)]);
    let combined = RunFilter {
        event: Some("toolGate".into()),
        session_id: Some("a".into()),
        limit: Some(1),
        ..RunFilter::default()
    };
    assert_eq!(ids(combined), [by("deny", 1)]);
    let none = RunFilter {
        outcome: Some("none".into()),
        limit: Some(1_000),
        ..RunFilter::default()
    };
    assert_eq!(spine.query(&none).unwrap().len(), 61);
    let dropped = RunFilter {
        kind: Some(RunKind::Dropped),
        ..RunFilter::default()
    };
    assert!(spine.query(&dropped).unwrap().is_empty());
    let bad = RunFilter {
        outcome: Some("maybe".into()),
        ..RunFilter::default()
    };
    assert!(matches!(
        spine.query(&bad),
        Err(SpineError::InvalidFilter(_))
    ));
}

#[test]
fn first_failures_keeps_the_first_failure_of_each_hook_in_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let spine = open(&db(&dir), keep_all());
    let t = now_ms();
    let fail = |session: &str, command: &str, message: &str, at: u64| {
        let mut rec = simple(session, "beforeShellExecution", "toolGate", "failed", at);
        rec.command = command.into();
        rec.failure = Some("exit".into());
        rec.failure_message = Some(message.into());
        rec
    };
    spine.record(simple("s1", "beforeShellExecution", "toolGate", "allow", t));
    spine.record(fail("s1", "a.sh", "first a", t + 1));
    spine.record(fail("s1", "a.sh", "second a", t + 2));
    spine.record(fail("s1", "b.sh", "first b", t + 3));
    spine.record(fail("s2", "a.sh", "other session", t + 4));
    let mut timeout = fail("s1", "c.sh", "", t + 5);
    timeout.failure = Some("timeout".into());
    timeout.failure_message = None;
    spine.record(timeout);

    let failures = spine.first_failures("s1");
    let key = |command: &str| {
        (
            "/ws/.cursor/hooks.json".to_owned(),
            "beforeShellExecution".to_owned(),
            command.to_owned(),
        )
    };
    assert_eq!(failures.len(), 3, "{failures:?}");
    assert_eq!(failures[&key("a.sh")], "first a");
    assert_eq!(failures[&key("b.sh")], "first b");
    assert_eq!(
        failures[&key("c.sh")],
        "timeout",
        "the kind when there is no message"
    );
    assert_eq!(spine.first_failures("s2")[&key("a.sh")], "other session");
    assert!(spine.first_failures("nobody").is_empty());
    assert_eq!(spine.latest_session().as_deref(), Some("s1"));
}

#[test]
fn latest_session_is_that_of_the_newest_run() {
    let dir = tempfile::tempdir().unwrap();
    let spine = open(&db(&dir), keep_all());
    assert_eq!(spine.latest_session(), None);
    let t = now_ms();
    spine.record(simple("late", "stop", "stop", "none", t + 10));
    spine.record(simple("early", "stop", "stop", "none", t));
    assert_eq!(spine.latest_session().as_deref(), Some("late"));
}

const CRASH_VAR: &str = "COPSE_SPINE_CRASH_DB";

#[test]
#[ignore = "helper process for the crash test; does nothing when run directly"]
fn crash_helper() {
    let Ok(path) = std::env::var(CRASH_VAR) else {
        return;
    };
    let (spine, warning) = Spine::open_with(
        &path,
        SpineOptions {
            flush_interval: Duration::from_millis(2),
            batch_records: 200,
            ..keep_all()
        },
    );
    assert!(warning.is_none(), "{warning:?}");
    let mut reported = 0;
    let mut i = 0u64;
    loop {
        // Keep the writer busy: it spends nearly all its time inside a transaction.
        for _ in 0..50 {
            let mut rec = full(i);
            rec.stdin = vec![b'x'; 4096];
            rec.stdout = vec![b'y'; 2048];
            spine.record(rec);
            i += 1;
        }
        let committed = spine.stats().committed;
        if committed != reported {
            reported = committed;
            println!("committed {committed}");
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[test]
fn a_crash_mid_write_leaves_a_readable_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "spine::crash_helper",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CRASH_VAR, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut committed = 0u64;
    let deadline = Instant::now() + Duration::from_secs(60);
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("committed ") {
            committed = n.trim().parse().unwrap();
            if committed >= 3_000 {
                break;
            }
        }
        assert!(Instant::now() < deadline, "the helper made no progress");
    }
    child.kill().unwrap(); // SIGKILL: no destructor, no flush
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(committed >= 3_000, "the helper exited early: {status:?}");
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    assert!(
        wal.exists(),
        "the helper closed the database cleanly: no crash was tested"
    );

    let conn = Connection::open(&path).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM hook_runs", [], |r| r.get(0))
        .unwrap();
    assert!(
        rows as u64 >= committed,
        "{rows} rows, {committed} were committed"
    );
    drop(conn);

    let reader = Spine::open_read_only(&path).unwrap();
    let newest = reader.query(&RunFilter::default()).unwrap();
    assert_eq!(newest.len(), 50);
    assert!(reader.get(&newest[0].run_id).unwrap().is_some());
    drop(reader);
    let spine = open(&path, keep_all());
    spine.record(full(999_999));
    spine.flush();
    assert_eq!(spine.stats().committed, 1);
    assert_eq!(count(&path) as u64, rows as u64 + 1);
}

#[test]
fn keyset_pages_cover_every_run_once_even_with_equal_start_times() {
    use copse_hooks::spine::RunQuery;
    let dir = tempfile::tempdir().unwrap();
    let spine = open(&db(&dir), keep_all());
    // 25 runs share each start time: the cursor must break ties.
    for i in 0..100u64 {
        let (event, canonical) = if i % 2 == 0 {
            ("beforeShellExecution", "toolGate")
        } else {
            ("stop", "stop")
        };
        let outcome = if i % 5 == 0 { "deny" } else { "allow" };
        spine.record(simple("s", event, canonical, outcome, 1_000 + i / 25));
    }
    spine.flush();
    let mut seen = std::collections::HashSet::new();
    let mut q = RunQuery {
        limit: Some(7),
        ..RunQuery::default()
    };
    let mut last: Option<(u64, String)> = None;
    loop {
        let page = spine.page(&q).unwrap();
        for r in &page.runs {
            assert!(seen.insert(r.run_id.clone()), "{} twice", r.run_id);
            if let Some((at, _)) = &last {
                assert!(r.started_at <= *at);
            }
            last = Some((r.started_at, r.run_id.clone()));
        }
        match page.next {
            Some(next) => q.after = Some(next),
            None => break,
        }
    }
    assert_eq!(seen.len(), 100);
    // An event filter takes the wire name or the canonical one, and combines with others.
    let by = |event: &str, outcome: Option<&str>| {
        spine
            .page(&RunQuery {
                event: Some(event.into()),
                outcome: outcome.map(Into::into),
                limit: Some(500),
                ..RunQuery::default()
            })
            .unwrap()
            .runs
    };
    assert_eq!(by("beforeShellExecution", None).len(), 50);
    assert_eq!(by("toolGate", None).len(), 50);
    assert_eq!(by("stop", None).len(), 50);
    let denied = by("toolGate", Some("deny"));
    assert_eq!(denied.len(), 10);
    assert!(
        denied
            .iter()
            .all(|r| r.outcome == "deny" && r.canonical == "toolGate")
    );
    assert!(
        spine
            .page(&RunQuery {
                outcome: Some("maybe".into()),
                ..RunQuery::default()
            })
            .is_err()
    );
}

#[test]
fn window_stats_give_percentiles_histograms_and_a_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let spine = open(&db(&dir), keep_all());
    for i in 1..=100u64 {
        let mut r = simple("s", "stop", "stop", "allow", 10_000 + i);
        r.duration_ms = i;
        if i == 100 {
            r.failure = Some("timeout".into());
            r.failure_message = Some("timed out".into());
            r.outcome = "failed".into();
        }
        spine.record(r);
    }
    spine.record(simple("s", "stop", "stop", "deny", 50_000)); // outside the window
    spine.flush();
    let st = spine.window_stats(10_000, 10_101, 4).unwrap();
    assert_eq!(st.runs, 100);
    assert_eq!(st.hooks.len(), 1);
    let h = &st.hooks[0];
    assert_eq!((h.p50_ms, h.p95_ms, h.max_ms, h.mean_ms), (50, 95, 100, 50));
    assert_eq!((h.failures, h.denials), (1, 0));
    assert_eq!(h.histogram.iter().sum::<u64>(), 100);
    assert_eq!(h.histogram[0], 1); // <= 1 ms
    let last = h.last_failure.as_ref().unwrap();
    assert_eq!((last.kind.as_str(), last.started_at), ("timeout", 10_100));
    assert_eq!(st.timeline.len(), 4);
    assert_eq!(st.timeline.iter().map(|b| b.runs).sum::<u64>(), 100);
    assert_eq!(st.timeline.iter().map(|b| b.failures).sum::<u64>(), 1);
    let sessions = spine.sessions(None, 10).unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(
        (sessions[0].runs, sessions[0].denials, sessions[0].failures),
        (101, 1, 1)
    );
    assert_eq!(spine.session_runs("s", 1000).unwrap().len(), 101);
    assert_eq!(spine.oldest_started().unwrap(), Some(10_001));
    assert_eq!(spine.latest_seq().unwrap(), 101);
    let values = spine.filter_values().unwrap();
    assert_eq!(values.failures, vec!["timeout".to_string()]);
    assert_eq!(values.events, vec!["stop".to_string()]);
}
