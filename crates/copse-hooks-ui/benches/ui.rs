//! The web page against a large audit store: 1,000,000 runs (30 days, 5,000 sessions,
//! three dialects, realistic outcomes and failures), served over real HTTP.
//!
//! Prints, for each request, the median of several timings, its ratio to the
//! baseline measured in the same run (one full scan of the run table: what a request
//! would cost without the v4 indexes and keyset paging), and whether it is within the
//! 300 ms budget. "First paint of the runs page" is every request the page makes
//! before it can draw the runs list: the page, its three files, the overview, the
//! filter values, the hook list and the first page of runs.
//!
//! `cargo bench -p copse-hooks-ui --bench ui` (`COPSE_BENCH_RUNS=N` to change the size).

#![allow(clippy::expect_used)] // a benchmark whose setup fails has nothing to measure

use std::sync::Arc;
use std::time::{Duration, Instant};

use copse_hooks::Settings;
use copse_hooks::spine::{Spine, SpineOptions, unix_ms};
use copse_hooks::{Engine, EngineConfig};
use copse_hooks_ui::{Server, UiOptions};

const BUDGET: Duration = Duration::from_millis(300);
const REPEATS: usize = 7;

fn seed(db: &std::path::Path, runs: u64, cursor: &str) {
    // Create the store (and its indexes) through the real spine, then bulk-insert.
    drop(Spine::try_open(db, SpineOptions::default()).expect("create the store"));
    let conn = rusqlite::Connection::open(db).expect("open the store");
    let now = unix_ms(std::time::SystemTime::now());
    let span: u64 = 30 * 86_400_000;
    let sql = format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last})
         INSERT INTO hook_runs (run_id, kind, session_id, turn_id, dialect, event, canonical,
           command, source, scope, started_at, duration_ms, exit_code, parse_ok, failure,
           failure_message, policy, sandbox, outcome, decision, session_env,
           outcome_truncated, stdin, stdin_truncated, stdout, stdout_truncated, stderr,
           stderr_truncated)
         SELECT printf('r%09d', i),
           CASE WHEN i % 997 = 0 THEN 'dropped' ELSE 'run' END,
           printf('session-%05d', i / 200), printf('turn-%d', i / 12),
           CASE WHEN h % 10 < 5 THEN 'cursor' WHEN h % 10 < 9 THEN 'claude' ELSE 'copse' END,
           CASE WHEN h % 10 < 5 THEN
                  CASE h % 4 WHEN 0 THEN 'beforeReadFile' WHEN 1 THEN 'afterFileEdit'
                  ELSE 'beforeShellExecution' END
                WHEN h % 10 < 9 THEN CASE h % 3 WHEN 0 THEN 'PostToolUse' ELSE 'PreToolUse' END
                ELSE 'toolGate' END,
           CASE WHEN h % 4 = 1 THEN 'fileEdited' ELSE 'toolGate' END,
           printf('.hooks/hook-%d.sh', h % 12), '{cursor}',
           CASE WHEN h % 3 = 0 THEN 'user' ELSE 'project' END,
           {start} + i * {step},
           CASE WHEN h % 100 < 70 THEN 2 + h % 20 WHEN h % 100 < 95 THEN 20 + h % 200
                ELSE 200 + h % 3000 END,
           CASE WHEN o >= 97 THEN NULL ELSE 0 END, o < 97,
           CASE WHEN o = 97 THEN 'timeout' WHEN o = 98 THEN 'exit' WHEN o = 99 THEN
                CASE WHEN i % 50 = 0 THEN 'sandbox' ELSE 'invalid_json' END END,
           CASE WHEN o >= 97 THEN 'the hook failed' END,
           'closed', CASE WHEN i % 5000 = 0 THEN 'blocked' ELSE 'enforced' END,
           CASE WHEN o < 80 THEN 'allow' WHEN o < 88 THEN 'deny' WHEN o < 90 THEN 'ask'
                WHEN o < 97 THEN 'none' ELSE 'failed' END,
           CASE WHEN o < 80 THEN 'allow' WHEN o < 88 THEN 'deny' WHEN o < 90 THEN 'ask' END,
           0, 0,
           CAST(printf('{{\"hook_event_name\":\"x\",\"command\":\"cargo test -p crate-%d\",\"cwd\":\"/work/project\",\"session\":\"%d\"}}', h % 100, i / 200) AS BLOB), 0,
           CAST(CASE WHEN o < 80 THEN '{{\"permission\":\"allow\"}}' ELSE '{{\"permission\":\"deny\",\"agent_message\":\"not here\"}}' END AS BLOB), 0,
           CAST('' AS BLOB), 0
         FROM (SELECT i, (i * 2654435761) % 4294967296 AS h,
                      ((i * 40503) % 65536) % 100 AS o FROM n)",
        last = runs - 1,
        start = now - span,
        step = span / runs,
    );
    let t = Instant::now();
    conn.execute_batch(&sql).expect("seed the store");
    eprintln!(
        "seeded {runs} runs in {:.1} s ({} MiB)",
        t.elapsed().as_secs_f64(),
        std::fs::metadata(db).map(|m| m.len() >> 20).unwrap_or(0)
    );
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let runs: u64 = std::env::var("COPSE_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical tempdir");
    let (home, copse, ws) = (root.join("home"), root.join("copse"), root.join("ws"));
    for d in [&home, &copse, &ws.join(".cursor")] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let cursor = ws.join(".cursor/hooks.json");
    let mut hooks = String::from(r#"{"version": 1, "hooks": {"beforeShellExecution": ["#);
    for k in 0..12 {
        if k > 0 {
            hooks.push(',');
        }
        hooks.push_str(&format!(r#"{{"command": ".hooks/hook-{k}.sh"}}"#));
    }
    hooks.push_str("]}}");
    std::fs::write(&cursor, hooks).expect("write config");
    seed(&copse.join("spine.db"), runs, &cursor.display().to_string());

    let mut s = Settings::default();
    s.cursor_hooks_enabled = true;
    s.trust(&ws).expect("trust");
    s.save(&Settings::path_in(&copse)).expect("save settings");
    let (h, c, w) = (home.clone(), copse.clone(), ws.clone());
    let engine: copse_hooks_ui::EngineFactory = Arc::new(move || {
        let mut config = EngineConfig::from_process(vec![w.clone()]);
        config.home = h.clone();
        config.copse_dir = c.clone();
        let settings = Settings::load(&Settings::path_in(&c)).unwrap_or_default();
        config.hooks_enabled = settings.cursor_hooks_enabled;
        config.trusted = settings.trusted_workspaces;
        Ok(Engine::new(config))
    });
    let server = Server::bind(UiOptions::new(0, engine)).await.expect("bind");
    let base = format!("http://{}", server.addr());
    let login = server.login_url().expect("login url");
    tokio::spawn(server.run());
    // Sign in as a browser does: spend the one-time code, keep the session cookie.
    let signed_in = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
        .get(&login)
        .send()
        .await
        .expect("sign in");
    let set_cookie = signed_in
        .headers()
        .get("set-cookie")
        .expect("a session cookie")
        .to_str()
        .expect("ascii cookie");
    let cookie = set_cookie
        .split(';')
        .next()
        .expect("name=value")
        .to_string();
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::COOKIE,
        reqwest::header::HeaderValue::from_str(&cookie).expect("cookie header"),
    );
    let http = reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .expect("client");
    let get = |path: &str| {
        let url = format!("{base}{path}");
        let http = http.clone();
        async move {
            let res = http.get(url).send().await.expect("request");
            assert!(res.status().is_success(), "{}", res.status());
            res.bytes().await.expect("body").len()
        }
    };

    // Baseline: one full scan of the run table.
    let db = copse.join("spine.db");
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open");
    let mut base_t = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let n: i64 = conn
            .query_row(
                "SELECT count(*) FROM hook_runs NOT INDEXED WHERE duration_ms >= 0 AND outcome = 'deny'",
                [],
                |r| r.get(0),
            )
            .expect("scan");
        std::hint::black_box(n);
        base_t.push(t.elapsed());
    }
    let baseline = median(base_t);

    // Warm the server's reader (the first request opens the store).
    get("/api/runs?limit=1").await;
    let first_page = get("/api/runs?limit=100").await;
    let next = {
        let url = format!("{base}/api/runs?limit=100");
        let v: serde_json::Value = http
            .get(url)
            .send()
            .await
            .expect("page")
            .json()
            .await
            .expect("json");
        v["next"].as_str().expect("next").to_string()
    };
    std::hint::black_box(first_page);

    let paint = [
        "/",
        "/assets/app.js",
        "/assets/charts.js",
        "/assets/app.css",
        "/api/overview",
        "/api/filters",
        "/api/sources?window=24h",
        "/api/runs?limit=100",
    ];
    let session = format!("session-{:05}", runs / 200 / 2);
    let rows: Vec<(String, Vec<String>)> = vec![
        (
            "first paint of the runs page (8 requests)".into(),
            paint.iter().map(|s| s.to_string()).collect(),
        ),
        (
            "runs: newest 100".into(),
            vec!["/api/runs?limit=100".into()],
        ),
        (
            "runs: next page (keyset)".into(),
            vec![format!("/api/runs?limit=100&after={next}")],
        ),
        (
            "runs: a page 900,000 runs deep (keyset)".into(),
            vec![format!(
                "/api/runs?limit=100&after={}:0",
                unix_ms(std::time::SystemTime::now()) - 30 * 86_400_000 + 30 * 86_400_000 / 10
            )],
        ),
        (
            "filter: decision=deny".into(),
            vec!["/api/runs?limit=100&decision=deny".into()],
        ),
        (
            "filter: agent=claude-code & decision=deny".into(),
            vec!["/api/runs?limit=100&agent=claude-code&decision=deny".into()],
        ),
        (
            "filter: event=PreToolUse".into(),
            vec!["/api/runs?limit=100&event=PreToolUse".into()],
        ),
        (
            "filter: failure=timeout".into(),
            vec!["/api/runs?limit=100&failure=timeout".into()],
        ),
        (
            "filter: failure=sandbox (rare)".into(),
            vec!["/api/runs?limit=100&failure=sandbox".into()],
        ),
        (
            "filter: hook (source+command)".into(),
            vec![format!(
                "/api/runs?limit=100&source={}&command=.hooks/hook-7.sh",
                cursor.display()
            )],
        ),
        (
            "filter: one session".into(),
            vec![format!("/api/runs?limit=100&session={session}")],
        ),
        (
            "filter: last hour & decision=ask".into(),
            vec!["/api/runs?limit=100&since=1h&decision=ask".into()],
        ),
        (
            "filter: kind=dropped & dialect=copse".into(),
            vec!["/api/runs?limit=100&kind=dropped&dialect=copse".into()],
        ),
        (
            "sessions: newest 30".into(),
            vec!["/api/sessions?limit=30".into()],
        ),
        (
            "session timeline (200 runs)".into(),
            vec![format!("/api/sessions/{session}")],
        ),
        (
            "run detail".into(),
            vec![format!("/api/runs/r{:09}", runs / 2)],
        ),
        (
            "stats: 24h (charts)".into(),
            vec!["/api/stats?window=24h".into()],
        ),
    ];
    println!("copse-hooks ui with {runs} runs in the audit store (median of {REPEATS})");
    println!(
        "baseline: one full scan of the run table = {:.1} ms",
        baseline.as_secs_f64() * 1e3
    );
    println!("{:<46} {:>10} {:>10}  budget", "request", "ms", "× scan");
    let mut over = 0;
    for (name, paths) in &rows {
        let mut times = Vec::new();
        for _ in 0..REPEATS {
            let t = Instant::now();
            for p in paths {
                get(p).await;
            }
            times.push(t.elapsed());
        }
        let m = median(times);
        let ok = m <= BUDGET;
        if !ok && (name.starts_with("first paint") || name.starts_with("filter")) {
            over += 1;
        }
        println!(
            "{name:<46} {:>10.1} {:>10.3}  {}",
            m.as_secs_f64() * 1e3,
            m.as_secs_f64() / baseline.as_secs_f64(),
            if ok { "ok (< 300 ms)" } else { "OVER 300 ms" }
        );
    }
    println!("first paint, request by request:");
    for p in paint {
        let mut times = Vec::new();
        for _ in 0..REPEATS {
            let t = Instant::now();
            get(p).await;
            times.push(t.elapsed());
        }
        let m = median(times);
        println!(
            "  {p:<44} {:>10.1} {:>10.3}",
            m.as_secs_f64() * 1e3,
            m.as_secs_f64() / baseline.as_secs_f64()
        );
    }
    if over > 0 {
        println!("{over} first-paint or filter request(s) over the 300 ms budget");
        std::process::exit(1);
    }
}
