//! The audit chain: runs recorded by a real engine running real hooks, then the SQLite
//! file edited behind the store's back (a changed decision, a deleted run, swapped
//! runs, removed newest runs, an added row); retention, a store from before the
//! chain, two writers on one file.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use copse_hooks::spine::{
    ChainProblemKind, ChainReport, Retention, RunKind, RunRecord, Spine, SpineOptions, new_run_id,
    schema, unix_ms,
};
use copse_hooks::{Engine, EngineConfig, SessionIdentity, ToolCall};
use rusqlite::Connection;
use serde_json::json;

const KEEP_ALL: Retention = Retention {
    max_runs: None,
    max_age_days: None,
    max_bytes: None,
};

/// A home with one Cursor hook that denies `rm` and allows anything else.
struct World {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".cursor")).unwrap();
        let hook = r#"cat | grep -q '"rm ' && echo '{"permission":"deny","agent_message":"no rm"}' || echo '{"permission":"allow"}'"#;
        std::fs::write(
            home.path().join(".cursor/hooks.json"),
            json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": hook}]}})
                .to_string(),
        )
        .unwrap();
        World { home, ws }
    }

    fn db(&self) -> PathBuf {
        self.home.path().join("copse/spine.db")
    }

    fn engine(&self, retention: Retention) -> Engine {
        let mut config = EngineConfig::from_process(vec![self.ws.path().to_path_buf()])
            .home(self.home.path())
            .enabled(true)
            .spine(self.db());
        config.copse_dir = self.home.path().join("copse");
        config.retention = retention;
        Engine::new(config)
    }

    /// Gates `commands` (one hook run each) through a fresh engine and flushes.
    fn gate(&self, retention: Retention, commands: &[&str]) {
        let engine = self.engine(retention);
        assert_eq!(engine.spine_warning(), None);
        let session = engine.session(SessionIdentity::new("chain"));
        for c in commands {
            let mut input = serde_json::Map::new();
            input.insert("command".into(), json!(c));
            let verdict = session.gate_tool(ToolCall::new("run_shell", input));
            assert_eq!(verdict.runs.len(), 1, "{c}");
        }
        engine.flush_spine();
    }

    fn verify(&self) -> ChainReport {
        Spine::open_read_only(self.db())
            .unwrap()
            .verify_chain()
            .unwrap()
    }

    fn conn(&self) -> Connection {
        Connection::open(self.db()).unwrap()
    }
}

const FIVE: [&str; 5] = ["ls", "rm -rf /tmp/x", "git status", "rm a", "echo hi"];

/// `(seq, run_id, decision)` of every stored run, in seq order.
fn rows(conn: &Connection) -> Vec<(i64, String, Option<String>)> {
    conn.prepare("SELECT seq, run_id, decision FROM hook_runs ORDER BY seq")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn problem(report: &ChainReport) -> (u64, Option<String>, ChainProblemKind) {
    let p = report
        .first_problem
        .as_ref()
        .unwrap_or_else(|| panic!("no problem found: {report:?}"));
    (p.seq, p.run_id.clone(), p.kind)
}

#[test]
fn an_untouched_store_verifies_and_its_head_is_the_newest_run() {
    let w = World::new();
    w.gate(KEEP_ALL, &FIVE);
    let stored = rows(&w.conn());
    assert_eq!(
        stored.iter().map(|r| r.0).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    assert_eq!(stored[1].2.as_deref(), Some("deny"), "the hooks really ran");

    let report = w.verify();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.runs_checked, 5);
    assert_eq!(
        (report.chained_from_seq, report.predating_chain),
        (Some(1), 0)
    );
    assert_eq!(report.pruned_through_seq, None);
    let head = report.head.clone().unwrap();
    assert_eq!((head.seq, head.run_id.as_str()), (5, stored[4].1.as_str()));
    assert_eq!(head.chain_id.len(), 32);
    let stored_hash: Vec<u8> = w
        .conn()
        .query_row("SELECT hash FROM hook_runs WHERE seq = 5", [], |r| r.get(0))
        .unwrap();
    assert_eq!(head.hash.as_bytes()[..], stored_hash[..]);

    // The writer keeps the same head in memory: what an export reads.
    let engine = w.engine(KEEP_ALL);
    let spine = engine.spine().unwrap();
    assert_eq!(
        spine.chain_head(),
        Some(head.clone()),
        "the head is known at open"
    );
    let session = engine.session(SessionIdentity::new("chain"));
    let mut input = serde_json::Map::new();
    input.insert("command".into(), json!("pwd"));
    session.gate_tool(ToolCall::new("run_shell", input));
    engine.flush_spine();
    let moved = spine.chain_head().unwrap();
    assert_eq!(moved.seq, 6);
    assert_eq!(moved.chain_id, head.chain_id);
    assert_ne!(moved.hash, head.hash);
    drop(engine);
    assert_eq!(w.verify().head, Some(moved));
}

#[test]
fn a_changed_decision_is_named_as_edited() {
    let w = World::new();
    w.gate(KEEP_ALL, &FIVE);
    let stored = rows(&w.conn());
    // The deny of `rm a` (seq 4) becomes an allow.
    assert_eq!(stored[3].2.as_deref(), Some("deny"));
    w.conn()
        .execute(
            "UPDATE hook_runs SET decision = 'allow', outcome = 'allow' WHERE seq = 4",
            [],
        )
        .unwrap();
    let report = w.verify();
    assert_eq!(
        problem(&report),
        (4, Some(stored[3].1.clone()), ChainProblemKind::Edited)
    );
    assert_eq!(report.runs_checked, 3);
    assert!(
        report
            .first_problem
            .unwrap()
            .detail
            .contains("does not match its hash")
    );

    // Editing a stored stream byte is caught as well.
    let w = World::new();
    w.gate(KEEP_ALL, &FIVE);
    w.conn()
        .execute(
            "UPDATE hook_runs SET stdout = CAST(stdout || x'20' AS BLOB) WHERE seq = 2",
            [],
        )
        .unwrap();
    assert_eq!(problem(&w.verify()).2, ChainProblemKind::Edited);
    assert_eq!(problem(&w.verify()).0, 2);
}

#[test]
fn a_deleted_middle_run_is_named_as_removed() {
    let w = World::new();
    w.gate(KEEP_ALL, &FIVE);
    w.conn()
        .execute("DELETE FROM hook_runs WHERE seq = 3", [])
        .unwrap();
    let report = w.verify();
    assert_eq!(problem(&report), (3, None, ChainProblemKind::Removed));
    assert_eq!(report.runs_checked, 2);
    let detail = report.first_problem.unwrap().detail;
    assert!(detail.contains("seq 3 is missing"), "{detail}");

    // Renumbering the later runs to close the gap does not hide it.
    let w = World::new();
    w.gate(KEEP_ALL, &FIVE);
    let conn = w.conn();
    conn.execute("DELETE FROM hook_runs WHERE seq = 3", [])
        .unwrap();
    conn.execute("UPDATE hook_runs SET seq = seq - 1 WHERE seq > 3", [])
        .unwrap();
    let report = w.verify();
    assert_eq!(problem(&report).0, 3, "{report:?}");
    assert_ne!(problem(&report).2, ChainProblemKind::Reordered);
}

#[test]
fn removing_the_newest_runs_is_seen_against_the_head() {
    let w = World::new();
    w.gate(KEEP_ALL, &FIVE);
    w.conn()
        .execute("DELETE FROM hook_runs WHERE seq >= 4", [])
        .unwrap();
    let report = w.verify();
    assert_eq!(
        problem(&report),
        (4, None, ChainProblemKind::Removed),
        "{report:?}"
    );
    assert!(
        report
            .first_problem
            .unwrap()
            .detail
            .contains("seq 4 to 5 are missing")
    );

    // Only the newest: the head names it.
    let w = World::new();
    w.gate(KEEP_ALL, &FIVE);
    let stored = rows(&w.conn());
    w.conn()
        .execute("DELETE FROM hook_runs WHERE seq = 5", [])
        .unwrap();
    assert_eq!(
        problem(&w.verify()),
        (5, Some(stored[4].1.clone()), ChainProblemKind::Removed)
    );
    // And recording goes on after the head, never reusing the removed seq.
    w.gate(KEEP_ALL, &["ls"]);
    let after = rows(&w.conn());
    assert_eq!(after.last().unwrap().0, 6);
    assert_eq!(problem(&w.verify()).0, 5);
}

#[test]
fn swapped_runs_are_named_as_reordered() {
    let w = World::new();
    w.gate(KEEP_ALL, &FIVE);
    let stored = rows(&w.conn());
    // Rows 2 and 4 trade places: each keeps all its columns (its hashes too), only the
    // seqs change.
    let conn = w.conn();
    conn.execute_batch(
        "UPDATE hook_runs SET seq = -2 WHERE seq = 2;
         UPDATE hook_runs SET seq = 2 WHERE seq = 4;
         UPDATE hook_runs SET seq = 4 WHERE seq = -2;",
    )
    .unwrap();
    let report = w.verify();
    assert_eq!(
        problem(&report),
        (2, Some(stored[3].1.clone()), ChainProblemKind::Reordered),
        "{report:?}"
    );
    let detail = report.first_problem.unwrap().detail;
    assert_eq!(detail, "it was chained after seq 3, but follows seq 1");

    // Neighbours swapped the same way.
    let w = World::new();
    w.gate(KEEP_ALL, &FIVE);
    w.conn()
        .execute_batch(
            "UPDATE hook_runs SET seq = -1 WHERE seq = 1;
             UPDATE hook_runs SET seq = 1 WHERE seq = 2;
             UPDATE hook_runs SET seq = 2 WHERE seq = -1;",
        )
        .unwrap();
    let report = w.verify();
    assert_eq!(problem(&report).0, 1);
    assert_eq!(problem(&report).2, ChainProblemKind::Reordered);
    assert!(
        report
            .first_problem
            .unwrap()
            .detail
            .contains("follows the chain's anchor (seq 0)")
    );
}

#[test]
fn swapping_the_recorded_content_but_not_the_hashes_is_an_edit() {
    let w = World::new();
    w.gate(KEEP_ALL, &FIVE);
    let stored = rows(&w.conn());
    // The deny of seq 2 and the allow of seq 3 trade their outcome columns.
    w.conn()
        .execute_batch(
            "CREATE TEMP TABLE keep AS SELECT seq, outcome, decision, agent_message, stdout
                 FROM hook_runs WHERE seq IN (2, 3);
             UPDATE hook_runs SET
                 outcome = (SELECT outcome FROM keep WHERE keep.seq = 5 - hook_runs.seq),
                 decision = (SELECT decision FROM keep WHERE keep.seq = 5 - hook_runs.seq),
                 agent_message = (SELECT agent_message FROM keep WHERE keep.seq = 5 - hook_runs.seq),
                 stdout = (SELECT stdout FROM keep WHERE keep.seq = 5 - hook_runs.seq)
             WHERE seq IN (2, 3);",
        )
        .unwrap();
    assert_eq!(rows(&w.conn())[1].2.as_deref(), Some("allow"));
    assert_eq!(
        problem(&w.verify()),
        (2, Some(stored[1].1.clone()), ChainProblemKind::Edited)
    );
}

#[test]
fn a_row_written_behind_the_chains_back_is_named_as_added() {
    let w = World::new();
    w.gate(KEEP_ALL, &FIVE);
    let conn = w.conn();
    conn.execute(
        &format!(
            "INSERT INTO hook_runs ({cols}) SELECT {cols_fake} FROM hook_runs WHERE seq = 1",
            cols = schema_cols(),
            cols_fake = schema_cols().replacen("run_id", "'r-forged'", 1)
        ),
        [],
    )
    .unwrap();
    let report = w.verify();
    assert_eq!(
        problem(&report),
        (6, Some("r-forged".into()), ChainProblemKind::Added),
        "{report:?}"
    );
    assert_eq!(report.runs_checked, 5);
}

/// The columns of a stored run, without `seq` and the chain's.
fn schema_cols() -> String {
    "run_id, kind, session_id, turn_id, dialect, event, canonical, command, source, scope, \
     started_at, duration_ms, exit_code, parse_ok, failure, failure_message, policy, sandbox, \
     outcome, decision, agent_message, user_message, halt_reason, inject_context, \
     updated_input, queued_message, session_env, outcome_truncated, stdin, stdin_truncated, \
     stdout, stdout_truncated, stderr, stderr_truncated, warnings, redactions, leaked"
        .to_owned()
}

#[test]
fn retention_moves_the_anchor_and_the_store_still_verifies() {
    let w = World::new();
    w.gate(KEEP_ALL, &FIVE);
    w.gate(KEEP_ALL, &FIVE);
    assert_eq!(rows(&w.conn()).len(), 10);
    // A smaller limit prunes at open: the oldest runs in recording order.
    let keep3 = Retention {
        max_runs: Some(3),
        ..KEEP_ALL
    };
    drop(w.engine(keep3));
    // The writer's start-up prune has run once a flush returns; opening again is
    // enough (the engine above was dropped, which flushed).
    let kept: Vec<i64> = rows(&w.conn()).iter().map(|r| r.0).collect();
    assert_eq!(kept, [8, 9, 10]);
    let report = w.verify();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.pruned_through_seq, Some(7));
    assert_eq!(report.runs_checked, 3);
    let anchor: Vec<u8> = w
        .conn()
        .query_row("SELECT anchor_hash FROM chain", [], |r| r.get(0))
        .unwrap();
    // The anchor is the link the oldest remaining run carries.
    let seven: Vec<u8> = w
        .conn()
        .query_row("SELECT prev_hash FROM hook_runs WHERE seq = 8", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(anchor, seven);

    // More runs after the pruning chain on from the head.
    w.gate(keep3, &["ls", "pwd"]);
    let report = w.verify();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.head.unwrap().seq, 12);

    // Deleting the oldest remaining run by hand is not pruning.
    w.conn()
        .execute(
            "DELETE FROM hook_runs WHERE seq = (SELECT min(seq) FROM hook_runs)",
            [],
        )
        .unwrap();
    let (seq, _, kind) = problem(&w.verify());
    assert_eq!(kind, ChainProblemKind::Removed);
    assert!(seq >= 8, "{seq}");
}

#[test]
fn pruning_every_run_keeps_the_chain_going() {
    let w = World::new();
    w.gate(KEEP_ALL, &FIVE);
    let head = w.verify().head.unwrap();
    // Every run is older than zero days: all pruned at open.
    let none = Retention {
        max_age_days: Some(0),
        ..KEEP_ALL
    };
    drop(w.engine(none));
    assert!(rows(&w.conn()).is_empty());
    let report = w.verify();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.pruned_through_seq, Some(5));
    assert_eq!(report.head, Some(head), "the head survives the pruning");
    // The next run continues the chain (seq 6, not 1).
    w.gate(KEEP_ALL, &["ls"]);
    assert_eq!(rows(&w.conn())[0].0, 6);
    let report = w.verify();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.runs_checked, 1);
}

#[test]
fn the_size_limit_prunes_in_chain_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spine.db");
    let limit = 256 * 1024;
    let (spine, w) = Spine::open_with(
        &path,
        SpineOptions {
            retention: Retention {
                max_bytes: Some(limit),
                ..KEEP_ALL
            },
            prune_every_commits: 1,
            batch_records: 10,
            ..SpineOptions::default()
        },
    );
    assert!(w.is_none(), "{w:?}");
    for i in 0..120u64 {
        let body: Vec<u8> = (0..6_000u32)
            .map(|j| (j.wrapping_mul(2_654_435_761) >> 13) as u8 ^ i as u8)
            .collect();
        spine.record(record(i, body));
        if i % 10 == 9 {
            spine.flush();
        }
    }
    spine.flush();
    let report = spine.verify_chain().unwrap();
    assert!(report.is_intact(), "{report:?}");
    let pruned = report.pruned_through_seq.expect("the size limit pruned");
    assert_eq!(report.runs_checked, 120 - pruned);
    assert_eq!(report.head.unwrap().seq, 120);
}

fn record(i: u64, stdout: Vec<u8>) -> RunRecord {
    let at = unix_ms(SystemTime::now()) + i;
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

/// A v4 store exactly as v4 created it: the migrations before the chain, then runs.
fn v4_store(path: &Path) {
    let conn = Connection::open(path).unwrap();
    for sql in &schema::MIGRATIONS[..4] {
        conn.execute_batch(sql).unwrap();
    }
    conn.execute_batch(&format!(
        "PRAGMA application_id = {}; PRAGMA user_version = 4;",
        schema::APPLICATION_ID
    ))
    .unwrap();
    for i in 1..=3 {
        conn.execute(
            "INSERT INTO hook_runs (run_id, kind, session_id, turn_id, dialect, event, \
             canonical, command, source, scope, started_at, duration_ms, exit_code, parse_ok, \
             outcome, session_env, outcome_truncated, stdin, stdin_truncated, stdout, \
             stdout_truncated, stderr, stderr_truncated) VALUES (?1, 'run', 'old', 't', \
             'cursor', 'stop', 'stop', 'old.sh', '/h/.cursor/hooks.json', 'user', ?2, 5, 0, 1, \
             'none', 0, 0, x'7b7d', 0, x'', 0, x'', 0)",
            rusqlite::params![
                format!("r-old-{i}"),
                (unix_ms(SystemTime::now()) - 1000 + i) as i64
            ],
        )
        .unwrap();
    }
}

#[test]
fn runs_from_before_the_chain_are_counted_not_checked() {
    let w = World::new();
    std::fs::create_dir_all(w.db().parent().unwrap()).unwrap();
    v4_store(&w.db());

    // Read-only, not migrated: nothing chained yet.
    let report = w.verify();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(
        (
            report.chained_from_seq,
            report.predating_chain,
            report.runs_checked
        ),
        (None, 3, 0)
    );
    assert_eq!(report.head, None);

    // Recording migrates it: the chain starts after the old runs.
    w.gate(KEEP_ALL, &FIVE);
    let version: i64 = w
        .conn()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, schema::VERSION);
    let report = w.verify();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(
        (
            report.chained_from_seq,
            report.predating_chain,
            report.runs_checked
        ),
        (Some(4), 3, 5)
    );
    assert_eq!(report.head.unwrap().seq, 8);

    // An old run is not checked (it has no hash to check) ...
    w.conn()
        .execute(
            "UPDATE hook_runs SET outcome = 'deny' WHERE run_id = 'r-old-2'",
            [],
        )
        .unwrap();
    assert!(w.verify().is_intact());
    // ... but the first chained run still is.
    w.conn()
        .execute("UPDATE hook_runs SET command = 'x' WHERE seq = 4", [])
        .unwrap();
    assert_eq!(problem(&w.verify()).0, 4);
}

#[test]
fn two_writers_on_one_store_keep_one_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spine.db");
    let options = SpineOptions {
        retention: KEEP_ALL,
        batch_records: 7,
        ..SpineOptions::default()
    };
    let a = Spine::try_open(&path, options).unwrap();
    let b = Spine::try_open(&path, options).unwrap();
    for i in 0..60 {
        let (spine, other) = if i % 3 == 0 { (&a, &b) } else { (&b, &a) };
        spine.record(record(i, format!("{i}").into_bytes()));
        if i % 5 == 0 {
            other.flush();
        }
    }
    a.flush();
    b.flush();
    let report = a.verify_chain().unwrap();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!(report.runs_checked, 60);
    // Each writer's in-memory head is the store's head as of its own last commit.
    let heads = [a.chain_head().unwrap(), b.chain_head().unwrap()];
    assert!(heads.iter().any(|h| h.seq == 60), "{heads:?}");
    assert_eq!(report.head.unwrap().seq, 60);
}

#[test]
fn a_rejected_duplicate_leaves_the_chain_intact_and_redaction_comes_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spine.db");
    let (spine, w) = Spine::open_with(
        &path,
        SpineOptions {
            retention: KEEP_ALL,
            ..SpineOptions::default()
        },
    );
    assert!(w.is_none());
    let first = record(1, b"ok".to_vec());
    let mut dup = record(2, b"dup".to_vec());
    dup.run_id = first.run_id.clone();
    let key = "sk-ant-api03-0123456789abcdefghijklmnopqrstuvwxyz";
    let secret = record(3, format!("token {key}").into_bytes());
    spine.record(first);
    spine.record(dup);
    spine.record(secret);
    spine.flush();
    assert_eq!(spine.stats().committed, 2);
    let report = spine.verify_chain().unwrap();
    assert!(report.is_intact(), "{report:?}");
    assert_eq!((report.runs_checked, report.head.unwrap().seq), (2, 2));
    let stdout: Vec<u8> = Connection::open(&path)
        .unwrap()
        .query_row("SELECT stdout FROM hook_runs WHERE seq = 2", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&stdout).contains(key),
        "the hash covers what is stored: the redacted text"
    );
}

#[test]
fn two_stores_never_share_a_chain() {
    let (a, b) = (World::new(), World::new());
    a.gate(KEEP_ALL, &["ls"]);
    b.gate(KEEP_ALL, &["ls"]);
    let (ha, hb) = (a.verify().head.unwrap(), b.verify().head.unwrap());
    assert_ne!(ha.chain_id, hb.chain_id);
    assert_ne!(ha.hash, hb.hash);
    // A run copied into another store, hashes and all, does not verify there.
    b.conn().execute("DELETE FROM hook_runs", []).unwrap();
    let conn = b.conn();
    conn.execute(
        "ATTACH DATABASE ?1 AS other",
        [a.db().to_string_lossy().as_ref()],
    )
    .unwrap();
    conn.execute("INSERT INTO hook_runs SELECT * FROM other.hook_runs", [])
        .unwrap();
    let report = b.verify();
    assert_eq!(problem(&report).0, 1, "{report:?}");
}
