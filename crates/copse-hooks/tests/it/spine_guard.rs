//! The audit store against hostile or oversized data: secrets in recorded streams,
//! another program's SQLite file, a FIFO in its place, and a size limit.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use copse_hooks::spine::{
    Retention, RunKind, RunRecord, Spine, SpineError, SpineOptions, new_run_id, unix_ms,
};
use copse_hooks::{EventPayload, SessionIdentity};
use rusqlite::Connection;
use serde_json::json;

use crate::fx::Fx;

fn record(i: u64, stdout: Vec<u8>) -> RunRecord {
    let at = unix_ms(SystemTime::now()) + i;
    {
        let mut record = RunRecord::default();
        record.run_id = new_run_id(at);
        record.session_id = "s".into();
        record.turn_id = "t".into();
        record.kind = RunKind::Run;
        record.dialect = "cursor".into();
        record.event = "beforeShellExecution".into();
        record.canonical = "toolGate".into();
        record.command = "hook.sh".into();
        record.source = "/ws/.cursor/hooks.json".into();
        record.scope = "project".into();
        record.started_at = at;
        record.parse_ok = true;
        record.outcome = "allow".into();
        record.stdout = stdout;
        record
    }
}

const KEY: &str = "sk-ant-api03-0123456789abcdefghijklmnopqrstuvwxyz";

#[test]
fn secrets_in_recorded_streams_are_redacted_and_counted_unless_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    for redact in [true, false] {
        let path = dir.path().join(format!("spine-{redact}.db"));
        let (spine, w) = Spine::open_with(
            &path,
            SpineOptions {
                redact_secrets: redact,
                ..SpineOptions::default()
            },
        );
        assert!(w.is_none(), "{w:?}");
        let mut rec = record(0, format!("{{\"echo\":\"{KEY}\"}}").into_bytes());
        rec.stdin = format!(
            "key={KEY}\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n"
        )
        .into_bytes();
        let id = rec.run_id.clone();
        spine.record(rec);
        spine.flush();
        let got = spine.get(&id).unwrap().unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&got.stdin),
            String::from_utf8_lossy(&got.stdout)
        );
        if redact {
            assert!(!all.contains(KEY) && !all.contains("MIIEow"), "{all}");
            assert!(all.contains("[REDACTED:anthropic]") && all.contains("[REDACTED:private-key]"));
            assert_eq!(got.redactions, 3);
        } else {
            assert!(all.contains(KEY));
            assert_eq!(got.redactions, 0);
        }
    }
}

#[test]
fn a_key_in_a_recorded_prompt_is_redacted_end_to_end() {
    let fx = Fx::new();
    fx.cursor_user(json!({"beforeSubmitPrompt": [{"command": "cat >/dev/null"}]}));
    let engine = fx.engine_with(|c| c.spine(fx.path("copse/spine.db")));
    let session = engine.session(SessionIdentity::new("conv-secret"));
    session.fire(EventPayload::BeforeSubmitPrompt {
        prompt: format!("deploy with {KEY} please"),
    });
    engine.flush_spine();
    let spine = engine.spine().unwrap();
    let runs = spine.query(&Default::default()).unwrap();
    assert_eq!(runs.len(), 1);
    let rec = spine.get(&runs[0].run_id).unwrap().unwrap();
    let stdin = String::from_utf8_lossy(&rec.stdin);
    assert!(
        !stdin.contains(KEY) && stdin.contains("[REDACTED:anthropic]"),
        "{stdin}"
    );
    assert_eq!(rec.redactions, 1);
}

#[test]
fn another_programs_sqlite_file_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spine.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
        .unwrap();
    drop(conn);
    let (spine, warning) = Spine::open(&path);
    assert!(!spine.is_recording());
    let w = warning.expect("a warning").to_string();
    assert!(w.contains("not a hook run database"), "{w}");
    assert!(matches!(
        Spine::open_read_only(&path),
        Err(SpineError::Foreign { .. })
    ));
    let conn = Connection::open(&path).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(tables, ["notes"], "our table was added beside theirs");
}

#[test]
fn a_fifo_in_place_of_the_store_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spine.db");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap()
            .success()
    );
    let (tx, rx) = std::sync::mpsc::channel();
    let p = path.clone();
    std::thread::spawn(move || {
        let ro = Spine::open_read_only(&p).map(|_| ());
        let (rw, w) = Spine::open(&p);
        tx.send((
            ro.err().map(|e| e.to_string()),
            rw.is_recording(),
            w.map(|w| w.to_string()),
        ))
        .unwrap();
    });
    let (ro, recording, w) = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("opening a FIFO as the store hung");
    assert!(ro.unwrap().contains("not a regular file"));
    assert!(!recording);
    assert!(w.unwrap().contains("not a regular file"));
}

#[test]
fn the_size_limit_prunes_the_oldest_runs_and_gives_the_space_back() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("spine.db");
    let limit = 512 * 1024;
    let (spine, w) = Spine::open_with(
        &path,
        SpineOptions {
            retention: Retention {
                max_runs: None,
                max_age_days: None,
                max_bytes: Some(limit),
            },
            prune_every_commits: 1,
            batch_records: 10,
            ..SpineOptions::default()
        },
    );
    assert!(w.is_none(), "{w:?}");
    let mut last = String::new();
    for i in 0..300 {
        // Incompressible-ish bytes so the pages really fill.
        let body: Vec<u8> = (0..8_000u32)
            .map(|j| (j.wrapping_mul(2_654_435_761) >> 13 ^ i) as u8)
            .collect();
        let rec = record(i.into(), body);
        last = rec.run_id.clone();
        spine.record(rec);
        if i % 10 == 9 {
            spine.flush();
        }
    }
    spine.flush();
    drop(spine);
    let start = Instant::now();
    let ro = Spine::open_read_only(&path).unwrap();
    assert!(
        ro.get(&last).unwrap().is_some(),
        "the newest run was pruned"
    );
    let conn = Connection::open(&path).unwrap();
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM hook_runs", [], |r| r.get(0))
        .unwrap();
    assert!(rows < 300 && rows > 0, "{rows} rows");
    let pages: i64 = conn
        .pragma_query_value(None, "page_count", |r| r.get(0))
        .unwrap();
    let size: i64 = conn
        .pragma_query_value(None, "page_size", |r| r.get(0))
        .unwrap();
    // One batch of slack above the limit at most, and freed pages given back.
    assert!(
        (pages * size) as u64 <= limit + 200 * 1024,
        "the file holds {} bytes for a {limit}-byte limit",
        pages * size
    );
    assert!(start.elapsed() < Duration::from_secs(60));
}
