//! `copse-hooks audit verify [--json]`: runs recorded by real gates (one process
//! each), then the store edited behind its back with SQLite.

use rusqlite::Connection;
use serde_json::{Value, json};

use crate::harness::{Env, Run};

fn setup(env: &Env) {
    let deny = env
        .script(
            "home/.cursor/deny.sh",
            r#"cat >/dev/null; echo '{"permission":"deny","agent_message":"no"}'"#,
        )
        .display()
        .to_string();
    let allow = env
        .script(
            "home/.cursor/allow.sh",
            r#"cat >/dev/null; echo '{"permission":"allow"}'"#,
        )
        .display()
        .to_string();
    env.user_cursor(
        &json!({"hooks": {"beforeShellExecution": [
            {"command": deny, "matcher": "^rm"},
            {"command": allow, "matcher": "^(ls|git)"}
        ]}})
        .to_string(),
    );
    for c in ["ls", "rm -rf x", "git status", "rm y"] {
        env.cmd()
            .gate("run_shell", &json!({"command": c}).to_string())
            .success();
    }
}

fn conn(env: &Env) -> Connection {
    Connection::open(env.copse_dir().join("spine.db")).unwrap()
}

fn verify(env: &Env, json: bool) -> Run {
    let mut cmd = env.cmd();
    if json {
        cmd = cmd.arg("--json");
    }
    cmd.args(["audit", "verify"]).run()
}

/// Output with the temp root, run ids, hashes and the chain id replaced.
fn redacted(env: &Env, run: &Run) -> String {
    let mut text = run.redacted();
    let ids: Vec<(i64, String)> = conn(env)
        .prepare("SELECT seq, run_id FROM hook_runs")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (seq, id) in ids {
        text = text.replace(&id, &format!("[RUN{seq}]"));
    }
    let (chain_id, head): (Vec<u8>, Option<Vec<u8>>) = conn(env)
        .query_row("SELECT store_id, head_hash FROM chain", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    text = text.replace(&hex(&chain_id), "[CHAIN]");
    if let Some(head) = head {
        text = text.replace(&hex(&head), "[HASH]");
    }
    text
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn an_intact_store_verifies_with_its_head() {
    let env = Env::new();
    setup(&env);
    let run = verify(&env, false);
    assert_eq!(run.out.status.code(), Some(0), "{}", run.redacted());
    insta::assert_snapshot!("audit_verify_intact", redacted(&env, &run));

    let run = verify(&env, true);
    assert_eq!(run.out.status.code(), Some(0));
    let v = run.json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["runs_checked"], 4);
    assert_eq!(v["head"]["seq"], 4);
    insta::assert_snapshot!("audit_verify_intact_json", redacted(&env, &run));
}

#[test]
fn a_changed_decision_is_named_and_exits_1() {
    let env = Env::new();
    setup(&env);
    let deny_id: String = conn(&env)
        .query_row(
            "SELECT run_id FROM hook_runs WHERE seq = 2 AND decision = 'deny'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn(&env)
        .execute(
            "UPDATE hook_runs SET decision = 'allow', outcome = 'allow' WHERE seq = 2",
            [],
        )
        .unwrap();
    let run = verify(&env, false);
    assert_eq!(run.out.status.code(), Some(1), "{}", run.redacted());
    assert!(run.stdout().contains(&deny_id), "{}", run.stdout());
    insta::assert_snapshot!("audit_verify_edited", redacted(&env, &run));

    let run = verify(&env, true);
    assert_eq!(run.out.status.code(), Some(1));
    let v: Value = run.json();
    assert_eq!(v["ok"], false);
    assert_eq!(
        v["first_problem"],
        json!({"seq": 2, "run_id": deny_id, "kind": "edited",
               "detail": "its content does not match its hash"})
    );
    insta::assert_snapshot!("audit_verify_edited_json", redacted(&env, &run));
}

#[test]
fn a_deleted_run_and_swapped_runs_are_named() {
    let env = Env::new();
    setup(&env);
    conn(&env)
        .execute("DELETE FROM hook_runs WHERE seq = 3", [])
        .unwrap();
    let run = verify(&env, false);
    assert_eq!(run.out.status.code(), Some(1));
    insta::assert_snapshot!("audit_verify_removed", redacted(&env, &run));

    let env = Env::new();
    setup(&env);
    conn(&env)
        .execute_batch(
            "UPDATE hook_runs SET seq = -1 WHERE seq = 2;
             UPDATE hook_runs SET seq = 2 WHERE seq = 3;
             UPDATE hook_runs SET seq = 3 WHERE seq = -1;",
        )
        .unwrap();
    let v = verify(&env, true).json();
    assert_eq!(v["first_problem"]["kind"], "reordered");
    assert_eq!(v["first_problem"]["seq"], 2);
}

#[test]
fn text_from_the_store_is_escaped() {
    let env = Env::new();
    setup(&env);
    // A forged row whose run id would clear the screen and hide what follows.
    conn(&env)
        .execute(
            "INSERT INTO hook_runs (run_id, kind, session_id, turn_id, dialect, event, \
             canonical, command, source, scope, started_at, duration_ms, parse_ok, outcome, \
             session_env, outcome_truncated, stdin, stdin_truncated, stdout, stdout_truncated, \
             stderr, stderr_truncated) VALUES ('r-\x1b[2J\u{202e}evil', 'run', 's', 't', \
             'cursor', 'stop', 'stop', 'x', 'y', 'user', 1, 0, 1, 'allow', 0, 0, x'', 0, x'', \
             0, x'', 0)",
            [],
        )
        .unwrap();
    let run = verify(&env, false);
    assert_eq!(run.out.status.code(), Some(1));
    let out = run.stdout();
    assert!(
        !out.contains('\x1b') && !out.contains('\u{202e}'),
        "{out:?}"
    );
    assert!(
        out.contains(r"seq 5 (run r-\x1b[2J\u{202e}evil) was added"),
        "{out}"
    );
}

#[test]
fn a_store_that_cannot_be_read_exits_2() {
    let env = Env::new();
    let run = verify(&env, false);
    assert_eq!(run.out.status.code(), Some(2));
    assert!(
        run.stderr().contains("no hook runs have been recorded yet"),
        "{}",
        run.stderr()
    );
    Connection::open(env.copse_dir().join("spine.db"))
        .unwrap()
        .execute_batch("CREATE TABLE notes (body TEXT);")
        .unwrap();
    let run = verify(&env, true);
    assert_eq!(run.out.status.code(), Some(2));
    assert!(run.stdout().is_empty());
    assert!(
        run.stderr().contains("not a hook run database"),
        "{}",
        run.stderr()
    );
}

#[test]
fn a_store_from_before_the_chain_is_reported_not_failed() {
    let env = Env::new();
    let conn = Connection::open(env.copse_dir().join("spine.db")).unwrap();
    for sql in &copse_hooks::spine::schema::MIGRATIONS[..4] {
        conn.execute_batch(sql).unwrap();
    }
    conn.execute_batch(&format!(
        "PRAGMA application_id = {}; PRAGMA user_version = 4;
         INSERT INTO hook_runs (run_id, kind, session_id, turn_id, dialect, event, canonical,
             command, source, scope, started_at, duration_ms, parse_ok, outcome, session_env,
             outcome_truncated, stdin, stdin_truncated, stdout, stdout_truncated, stderr,
             stderr_truncated)
         VALUES ('r-old', 'run', 's', 't', 'cursor', 'stop', 'stop', 'x', 'y', 'user', 1, 0, 1,
             'none', 0, 0, x'', 0, x'', 0, x'', 0);",
        copse_hooks::spine::schema::APPLICATION_ID
    ))
    .unwrap();
    drop(conn);
    let run = verify(&env, false);
    assert_eq!(run.out.status.code(), Some(0), "{}", run.redacted());
    insta::assert_snapshot!("audit_verify_predating", run.redacted());
    let v = verify(&env, true).json();
    assert_eq!(
        (
            &v["ok"],
            &v["chained_from_seq"],
            &v["predating_chain"],
            &v["head"]
        ),
        (&json!(true), &Value::Null, &json!(1), &Value::Null)
    );
}
