//! The page in a real headless Chromium, driven over WebDriver (chromedriver).
//!
//! Skips with a message when Chromium or its driver is absent, unless
//! `COPSE_UI_BROWSER_TESTS=required` (set by `.ci/run`) makes them mandatory.
//! Screenshots of every page land in `target/ui-screenshots/`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::support::{World, world};

/// Debian's paths; `COPSE_UI_CHROMIUM` and `COPSE_UI_CHROMEDRIVER` override them.
fn chromium() -> String {
    std::env::var("COPSE_UI_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into())
}

fn chromedriver() -> String {
    std::env::var("COPSE_UI_CHROMEDRIVER").unwrap_or_else(|_| "/usr/bin/chromedriver".into())
}

/// The flags that keep Chromium off the network (this machine has none) and quiet.
const FLAGS: [&str; 10] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
];

fn available() -> bool {
    let (chromium, chromedriver) = (chromium(), chromedriver());
    let present = Path::new(&chromium).exists() && Path::new(&chromedriver).exists();
    if !present {
        assert!(
            std::env::var("COPSE_UI_BROWSER_TESTS").as_deref() != Ok("required"),
            "COPSE_UI_BROWSER_TESTS=required but {chromium} or {chromedriver} is missing \
             (apt-get install chromium chromium-driver)"
        );
        eprintln!(
            "SKIPPED browser tests: {chromium} or {chromedriver} is not installed \
             (apt-get install chromium chromium-driver; .ci/run installs them)"
        );
    }
    present
}

fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let dir = target.join("ui-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A WebDriver session on a chromedriver child process.
struct Browser {
    driver: tokio::process::Child,
    http: reqwest::Client,
    session: String,
    _profile: tempfile::TempDir,
}

impl Browser {
    async fn start() -> Browser {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let driver = tokio::process::Command::new(chromedriver())
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        let mut ready = false;
        for _ in 0..300 {
            if let Ok(r) = http.get(format!("{base}/status")).send().await
                && let Ok(v) = r.json::<Value>().await
                && v["value"]["ready"] == true
            {
                ready = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(ready, "chromedriver did not start");
        let profile = tempfile::tempdir().unwrap();
        let mut args: Vec<String> = FLAGS.iter().map(|s| s.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        args.push("--window-size=1280,900".into());
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium(), "args": args},
        }}});
        let res: Value = http
            .post(format!("{base}/session"))
            .json(&caps)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let session = res["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {res}"))
            .to_string();
        Browser {
            driver,
            http,
            session: format!("{base}/session/{session}"),
            _profile: profile,
        }
    }

    async fn cmd(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let req = self
            .http
            .request(method.clone(), format!("{}{path}", self.session));
        let req = if method == reqwest::Method::GET {
            req
        } else {
            req.json(&body)
        };
        let v: Value = req.send().await.unwrap().json().await.unwrap();
        if v["value"].get("error").is_some() {
            panic!("WebDriver {path}: {}", v["value"]);
        }
        v["value"].clone()
    }

    async fn goto(&self, url: &str) {
        self.cmd(reqwest::Method::POST, "/url", json!({"url": url}))
            .await;
    }

    async fn js(&self, script: &str) -> Value {
        self.cmd(
            reqwest::Method::POST,
            "/execute/sync",
            json!({"script": script, "args": []}),
        )
        .await
    }

    /// Waits (bounded, to catch a hang) until `script` returns true.
    async fn wait(&self, what: &str, script: &str) {
        for _ in 0..300 {
            if self.js(script).await == true {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let body = self.js("return document.body.innerText").await;
        panic!("timed out waiting for {what}; page text: {body}");
    }

    async fn ready(&self, page: &str) {
        self.wait(
            &format!("page {page}"),
            &format!(
                "return document.getElementById('main').getAttribute('data-ready') === '{page}'"
            ),
        )
        .await;
    }

    async fn screenshot(&self, name: &str) {
        let b64 = self
            .cmd(reqwest::Method::GET, "/screenshot", Value::Null)
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(b64.as_str().unwrap())
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"));
        std::fs::write(screenshot_dir().join(format!("{name}.png")), png).unwrap();
    }

    async fn find(&self, css: &str) -> String {
        let v = self
            .cmd(
                reqwest::Method::POST,
                "/element",
                json!({"using": "css selector", "value": css}),
            )
            .await;
        v.as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap()
            .to_string()
    }

    async fn click(&self, css: &str) {
        let id = self.find(css).await;
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{id}/click"),
            json!({}),
        )
        .await;
    }

    async fn keys(&self, css: &str, text: &str) {
        let id = self.find(css).await;
        self.cmd(
            reqwest::Method::POST,
            &format!("/element/{id}/value"),
            json!({"text": text}),
        )
        .await;
    }

    async fn resize(&self, width: u32, height: u32) {
        self.cmd(
            reqwest::Method::POST,
            "/window/rect",
            json!({"width": width, "height": height}),
        )
        .await;
    }

    async fn quit(mut self) {
        let _ = self.http.delete(&self.session).send().await;
        let _ = self.driver.kill().await;
    }
}

/// At a narrow width: the page does not scroll sideways, and nothing outside a
/// scrolling box (a wide table, a code block, the navigation) pokes out of the window.
async fn narrow_checks(b: &Browser, page: &str) {
    let sideways = b
        .js("return document.documentElement.scrollWidth <= window.innerWidth + 1")
        .await;
    assert_eq!(sideways, true, "{page} scrolls sideways at 500 px");
    let out = b
        .js(
            "return [...document.querySelectorAll('main *')].filter(e => { \
               if (e.closest('.table-wrap, pre, .seg, #nav, dialog')) return false; \
               const r = e.getBoundingClientRect(); \
               return r.width > 0 && (r.right > window.innerWidth + 1 || r.left < -1); \
             }).map(e => e.tagName + '.' + e.className).slice(0, 5)",
        )
        .await;
    assert_eq!(
        out,
        json!([]),
        "{page}: elements out of the window at 500 px"
    );
}

/// A page of the signed-in browser: the clean address, no credential in it.
fn page(w: &World, hash: &str) -> String {
    format!("{}/#/{hash}", w.base)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_in_chromium() {
    if !available() {
        return;
    }
    let w = world(true, 240).await;
    let b = Browser::start().await;

    // Signing in: a one-time address, as the CLI hands to the browser opener.
    let login = w.logins.login_url().unwrap();
    b.goto(&format!("{login}#/sources")).await;
    b.ready("sources").await;
    // The browser landed on the clean address, the session cookie is out of the
    // script's reach, and the code in the opener's argv is already spent.
    assert_eq!(
        b.js("return location.search + '|' + location.hash + '|' + document.cookie")
            .await,
        "|#/sources|"
    );
    let (status, _) = crate::support::sign_in(&login).await.unwrap_err();
    assert_eq!(status, 403);
    let hooks = b
        .js("return [...document.querySelectorAll('#sources-table tr[data-hook]')].map(r => r.dataset.hook)")
        .await;
    assert_eq!(hooks.as_array().unwrap().len(), 3, "{hooks}");
    let text = b
        .js("return document.getElementById('main').innerText")
        .await;
    let text = text.as_str().unwrap();
    assert!(text.contains(".cursor/hooks/deny-rm.sh"), "{text}");
    assert!(text.contains("fails open") && text.contains("sandboxed"));
    b.screenshot("sources").await;

    // Runs: the seeded runs, newest first.
    b.goto(&page(&w, "runs")).await;
    b.ready("runs").await;
    let first = b
        .js("return document.querySelector('#runs-table tbody tr').dataset.runId")
        .await;
    assert_eq!(first, "run-00239");
    let rows = b
        .js("return document.querySelectorAll('#runs-table tbody tr[data-run-id]').length")
        .await;
    assert_eq!(rows, 100);
    // What the agent tried is beside each hook, and every row has an exit code or
    // says why there is none; a timed-out run is labelled a timeout.
    let row = b
        .js(
            "const r = document.querySelector('#runs-table tr[data-run-id=\"run-00238\"]'); \
             return [r.querySelector('td.tool').innerText, r.querySelector('td.st').innerText]",
        )
        .await;
    assert!(
        row[0].as_str().unwrap().contains("rm -rf /tmp/x238"),
        "{row}"
    );
    assert!(row[1].as_str().unwrap().contains("exit 0"), "{row}");
    let timed_out = b
        .js(
            "const r = document.querySelector('#runs-table tr[data-run-id=\"run-00237\"]'); \
             return r.querySelector('td.st').innerText",
        )
        .await;
    let timed_out = timed_out.as_str().unwrap();
    assert!(
        timed_out.contains("timeout") && timed_out.contains("timed out, killed"),
        "{timed_out}"
    );
    let bare = b
        .js("return [...document.querySelectorAll('#runs-table td.st')]\
             .filter(td => !/exit -?\\d+|timed out|did not start|not run|no exit code/.test(td.innerText)).length")
        .await;
    assert_eq!(bare, 0, "a row without an exit code or a reason");
    b.screenshot("runs").await;

    // A filter: only denials.
    b.js("const s = document.getElementById('f-outcome'); s.value = 'deny'; s.dispatchEvent(new Event('change')); return true")
        .await;
    b.ready("runs").await;
    b.wait(
        "denied rows only",
        "const rows = [...document.querySelectorAll('#runs-table tbody tr[data-run-id]')]; \
         return location.hash.includes('outcome=deny') && rows.length === 24 && \
         rows.every(r => r.querySelector('.badge.deny'))",
    )
    .await;
    b.screenshot("runs-filtered").await;
    // And a second filter, by agent.
    b.js("const s = document.getElementById('f-agent'); s.value = 'claude'; s.dispatchEvent(new Event('change')); return true")
        .await;
    b.wait(
        "denied claude rows",
        "const rows = [...document.querySelectorAll('#runs-table tbody tr[data-run-id]')]; \
         return location.hash.includes('agent=claude') && rows.length > 0 && \
         rows.every(r => r.innerText.includes('claude'))",
    )
    .await;

    // A run's detail opens from the keyboard.
    let id = b
        .js("const r = document.querySelector('#runs-table tbody tr[data-run-id]'); r.focus(); return r.dataset.runId")
        .await;
    b.keys("#runs-table tbody tr[data-run-id]", "\u{E007}")
        .await;
    b.ready("run").await;
    let detail = b
        .js("return document.getElementById('main').innerText")
        .await;
    let detail = detail.as_str().unwrap();
    assert!(detail.contains(id.as_str().unwrap()), "{detail}");
    assert!(detail.contains("rm -rf is not allowed here"));
    b.screenshot("run-detail").await;
    // The link to the hook's source file.
    b.click("#run-source").await;
    b.ready("source").await;
    let src = b
        .js("return document.getElementById('source-text').innerText")
        .await;
    assert!(src.as_str().unwrap().contains("PreToolUse"));
    b.screenshot("source").await;

    // A timed-out run reads as a timeout with a hint, not as a parse failure.
    b.goto(&page(&w, "run/run-00237")).await;
    b.ready("run").await;
    let chips = b
        .js("return document.querySelector('.page-head .badges').innerText")
        .await;
    let chips = chips.as_str().unwrap();
    assert!(
        chips.contains("timed out") && !chips.contains("parse failed"),
        "{chips}"
    );
    assert!(
        b.js("return document.getElementById('run-timeout').innerText")
            .await
            .as_str()
            .unwrap()
            .contains("raise its `timeout`")
    );
    let tool = b
        .js("return document.getElementById('run-tool').innerText")
        .await;
    assert!(
        tool.as_str().unwrap().contains("rm -rf /tmp/x237"),
        "{tool}"
    );
    b.screenshot("run-timeout").await;

    // Sessions and a timeline; one-off `gate` calls (a `local-…` session of one run
    // each) are one collapsed card, not a card each.
    crate::support::one_off_runs(&w.copse.join("spine.db"), &w.cursor_config, 4);
    b.goto(&page(&w, "sessions")).await;
    b.ready("sessions").await;
    assert_eq!(
        b.js("return document.querySelectorAll('[data-session]').length")
            .await,
        3
    );
    assert_eq!(
        b.js("return document.querySelectorAll('#one-off-sessions [data-one-off]').length")
            .await,
        4
    );
    assert!(
        b.js("return document.getElementById('one-off-sessions').innerText")
            .await
            .as_str()
            .unwrap()
            .contains("4 one-off runs")
    );
    b.screenshot("sessions").await;
    b.click("[data-session='session-1']").await;
    b.ready("session").await;
    assert_eq!(
        b.js("return document.querySelectorAll('#timeline a.t-bar').length")
            .await,
        80
    );
    // The timeline names the hook's script, not a cut path, and the tool call.
    let label = b
        .js("return document.querySelector('#timeline .t-label').innerText")
        .await;
    let label = label.as_str().unwrap();
    assert!(label.contains("rm -rf /tmp/x"), "{label}");
    b.screenshot("session-timeline").await;

    // Charts.
    b.goto(&page(&w, "charts?window=1h")).await;
    b.ready("charts").await;
    let bars = b
        .js("return document.querySelectorAll('#chart-timeline svg rect').length")
        .await;
    assert!(bars.as_u64().unwrap() >= 10, "{bars}");
    assert_eq!(
        b.js("return document.querySelectorAll('#chart-latency svg').length")
            .await,
        3
    );
    b.screenshot("charts").await;

    // The tester runs a hook: the deny guard, with an edited payload.
    b.goto(&page(&w, "tester")).await;
    b.ready("tester").await;
    b.js("const s = document.getElementById('tester-hook'); \
          s.value = [...s.options].find(o => o.text.includes('deny-rm')).value; \
          document.getElementById('tester-payload').value = ''; \
          s.dispatchEvent(new Event('change')); return true")
        .await;
    b.wait(
        "the payload",
        "return document.getElementById('tester-payload').value.includes('hook_event_name')",
    )
    .await;
    b.js(
        "const t = document.getElementById('tester-payload'); const p = JSON.parse(t.value); \
          p.command = 'rm -rf /'; t.value = JSON.stringify(p, null, 2); return true",
    )
    .await;
    b.click("#tester-run").await;
    b.wait(
        "the verdict",
        "return !!document.querySelector('#tester-result [data-verdict]')",
    )
    .await;
    let verdict = b
        .js("return document.querySelector('#tester-result [data-verdict]').dataset.verdict")
        .await;
    assert_eq!(verdict, "deny");
    let summary = b
        .js("return document.getElementById('tester-summary').innerText")
        .await;
    assert!(
        summary
            .as_str()
            .unwrap()
            .contains("rm -rf is not allowed here")
    );
    b.screenshot("tester").await;
    // Why hooks run or not for a tool call (gate --explain, running nothing): the
    // Cursor guards would run for a shell call, the Claude hook (matcher Bash) too.
    b.click("#explain-run").await;
    b.wait(
        "the explanation",
        "return document.querySelectorAll('#explain-result li[data-status]').length > 0",
    )
    .await;
    let explained = b
        .js("return document.getElementById('explain-result').innerText")
        .await;
    let explained = explained.as_str().unwrap();
    assert!(
        explained.contains("deny-rm.sh") && explained.contains("would run"),
        "{explained}"
    );
    b.screenshot("tester-explain").await;

    // Trust: the preview of what trusting allows.
    b.goto(&page(&w, "trust")).await;
    b.ready("trust").await;
    let t = b
        .js("return document.getElementById('main').innerText")
        .await;
    assert!(
        t.as_str()
            .unwrap()
            .contains("All of them run in the sandbox."),
        "{t}"
    );
    b.click("[data-action=untrust]").await;
    b.wait(
        "the confirmation",
        "return document.getElementById('confirm').open",
    )
    .await;
    b.screenshot("trust-confirm").await;
    b.click("#confirm-ok").await;
    b.wait(
        "untrusted",
        "return document.body.innerText.includes('is no longer trusted')",
    )
    .await;
    b.screenshot("trust").await;
    // And trusted again from the page: its nonce lets the change through.
    let settings = std::fs::read_to_string(w.copse.join("settings.json")).unwrap();
    assert!(
        !settings.contains(&w.ws.display().to_string()),
        "{settings}"
    );
    b.click("[data-action=trust]").await;
    b.wait(
        "the trust confirmation",
        "return document.getElementById('confirm').open",
    )
    .await;
    b.click("#confirm-ok").await;
    b.wait(
        "trusted",
        "return document.body.innerText.includes('Trusted ')",
    )
    .await;
    let settings = std::fs::read_to_string(w.copse.join("settings.json")).unwrap();
    assert!(settings.contains(&w.ws.display().to_string()), "{settings}");
    // An edit to the pinned script after trusting from the page: the Trust page shows
    // its unified diff against the copy kept then, each line as text, coloured by its
    // mark. A line that looks like markup stays text.
    let script = w.ws.join(".cursor").join(crate::support::DENY_RM);
    let pinned = std::fs::read_to_string(&script).unwrap();
    std::fs::write(&script, format!("{pinned}echo '<b id=injected>x</b>'\n")).unwrap();
    // (Through another page: the same address again would not render anew.)
    b.goto(&page(&w, "sources")).await;
    b.ready("sources").await;
    b.goto(&page(&w, "trust")).await;
    b.ready("trust").await;
    b.wait(
        "the diff",
        "return document.querySelectorAll('pre[data-diff] span.d-add').length > 0",
    )
    .await;
    let added = b
        .js("return [...document.querySelectorAll('pre[data-diff] span.d-add')].map((e) => e.textContent)")
        .await;
    assert_eq!(added, json!(["+echo '<b id=injected>x</b>'"]), "{added}");
    assert_eq!(
        b.js("return document.getElementById('injected') === null")
            .await,
        true
    );
    let heads = b
        .js("return [...document.querySelectorAll('pre[data-diff] span.d-head')].map((e) => e.textContent)")
        .await;
    assert_eq!(
        heads,
        json!([
            format!("--- {} (pinned)", script.display()),
            format!("+++ {} (now)", script.display())
        ])
    );
    let colour = b
        .js("const s = getComputedStyle(document.querySelector('pre[data-diff] span.d-add')); \
             const c = getComputedStyle(document.querySelector('pre[data-diff] span.d-ctx') || document.body); \
             return s.backgroundColor !== c.backgroundColor")
        .await;
    assert_eq!(colour, true, "an added line is not set apart");
    b.screenshot("trust-diff").await;
    std::fs::write(&script, &pinned).unwrap();

    // A narrow window still reads.
    b.resize(420, 900).await;
    b.goto(&page(&w, "runs")).await;
    b.ready("runs").await;
    let overflow = b
        .js("return document.documentElement.scrollWidth <= window.innerWidth + 1")
        .await;
    assert_eq!(
        overflow, true,
        "the page scrolls sideways in a narrow window"
    );
    b.screenshot("runs-narrow").await;

    // 500 px: every page fits, nothing is clipped, text stays readable.
    b.resize(500, 900).await;
    for name in [
        "sources",
        "runs",
        "sessions",
        "charts?window=1h",
        "tester",
        "trust",
    ] {
        let hash = name.split('?').next().unwrap();
        b.goto(&page(&w, name)).await;
        b.ready(hash).await;
        narrow_checks(&b, hash).await;
        b.screenshot(&format!("{hash}-500")).await;
    }
    b.goto(&page(&w, "run/run-00003")).await;
    b.ready("run").await;
    narrow_checks(&b, "run").await;
    b.screenshot("run-detail-500").await;
    // The tester card is whole: its payload box and its run button are in view.
    b.goto(&page(&w, "tester")).await;
    b.ready("tester").await;
    let inside = b
        .js(
            "return ['#tester-payload', '#tester-run', '#tester-hook'].every(s => { \
               const r = document.querySelector(s).getBoundingClientRect(); \
               return r.left >= 0 && r.right <= window.innerWidth; })",
        )
        .await;
    assert_eq!(inside, true, "the tester card is clipped at 500 px");
    // Chart text is drawn at about its size (the SVG is not shrunk), and the
    // histogram's labels do not overlap.
    b.goto(&page(&w, "charts?window=1h")).await;
    b.ready("charts").await;
    let scale = b
        .js(
            "return Math.min(...[...document.querySelectorAll('svg.chart')].map(s => \
               s.getBoundingClientRect().width / s.viewBox.baseVal.width))",
        )
        .await;
    assert!(scale.as_f64().unwrap() >= 0.9, "chart text shrunk: {scale}");
    let overlaps = b
        .js("let n = 0; for (const s of document.querySelectorAll('#chart-latency svg')) { \
               const rs = [...s.querySelectorAll('text')].map(t => t.getBoundingClientRect()) \
                 .filter(r => r.width > 0).sort((a, b) => a.left - b.left); \
               for (let i = 1; i < rs.length; i++) \
                 if (Math.abs(rs[i].top - rs[i - 1].top) < 4 && rs[i].left < rs[i - 1].right) n++; } \
             return n")
        .await;
    assert_eq!(overlaps, 0, "histogram labels overlap");
    // Trust: a command wraps at the panel's width, not one character a line.
    b.goto(&page(&w, "trust")).await;
    b.ready("trust").await;
    let narrowest = b
        .js(
            "return Math.min(...[...document.querySelectorAll('main table.trust-hooks td.cmd')] \
               .map(td => td.getBoundingClientRect().width))",
        )
        .await;
    assert!(
        narrowest.as_f64().unwrap() >= 200.0,
        "trust commands squeezed: {narrowest}"
    );
    // The 1-6 keys switch pages without a focus ring around the whole page.
    b.keys("body", "2").await;
    b.ready("runs").await;
    let ring = b
        .js("const m = document.getElementById('main'); const st = getComputedStyle(m); \
             return document.activeElement === m && st.outlineStyle !== 'none' && st.outlineWidth !== '0px'")
        .await;
    assert_eq!(ring, false, "a focus ring around the whole page");
    b.screenshot("runs-after-key-500").await;
    b.resize(1280, 900).await;

    // Nothing was fetched from anywhere but this server.
    let foreign = b
        .js(&format!(
            "return performance.getEntriesByType('resource').map(e => e.name)\
             .filter(n => !n.startsWith('{}/'))",
            w.base
        ))
        .await;
    assert_eq!(foreign, json!([]));
    b.quit().await;
}

/// A fresh user's page: every empty view says what to do next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_pages_give_a_next_step() {
    if !available() {
        return;
    }
    let w = world(true, 0).await;
    let b = Browser::start().await;
    let login = w.logins.login_url().unwrap();
    b.goto(&format!("{login}#/runs")).await;
    b.ready("runs").await;
    for (hash, page_name) in [
        ("runs", "runs"),
        ("sessions", "sessions"),
        ("charts", "charts"),
    ] {
        b.goto(&page(&w, hash)).await;
        b.ready(page_name).await;
        let text = b
            .js("return document.getElementById('main').innerText")
            .await;
        let text = text.as_str().unwrap();
        for step in [
            "copse-hooks init",
            "copse-hooks ui --demo",
            "install --agent",
        ] {
            assert!(text.contains(step), "{hash} lacks `{step}`: {text}");
        }
        b.screenshot(&format!("{hash}-empty")).await;
    }
    // A filter that matches nothing offers to clear it instead.
    b.goto(&page(&w, "runs?outcome=deny")).await;
    b.ready("runs").await;
    let text = b
        .js("return document.getElementById('main').innerText")
        .await;
    assert!(
        text.as_str().unwrap().contains("Clear the filters"),
        "{text}"
    );
    b.resize(500, 900).await;
    b.goto(&page(&w, "runs")).await;
    b.ready("runs").await;
    narrow_checks(&b, "runs").await;
    b.screenshot("runs-empty-500").await;
    b.quit().await;
}
