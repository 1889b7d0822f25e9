//! The hook author's loop on the page's API: what the agent tried is beside every
//! run, and one workspace's edit leaves every other workspace's trust alone.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use copse_hooks::Settings;
use copse_hooks::{Engine, EngineConfig};
use copse_hooks_ui::{Server, UiOptions};
use serde_json::{Value, json};

use crate::support::{client, page_nonce, sign_in, world};

/// A signed-in server over any engine factory.
struct Page {
    base: String,
    cookie: String,
    nonce: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Page {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Page {
    async fn start(engine: copse_hooks_ui::EngineFactory) -> Page {
        let server = Server::bind(UiOptions::new(0, engine)).await.unwrap();
        let base = format!("http://{}", server.addr());
        let logins = server.logins();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(server.run_until(async move {
            let _ = stopped.await;
        }));
        let set = sign_in(&logins.login_url().unwrap()).await.unwrap();
        let cookie = set.split(';').next().unwrap().to_string();
        let html = client()
            .get(format!("{base}/"))
            .header("Cookie", &cookie)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        Page {
            base,
            cookie,
            nonce: page_nonce(&html),
            stop: Some(stop),
        }
    }

    async fn ok(&self, path: &str) -> Value {
        let res = client()
            .get(format!("{}{path}", self.base))
            .header("Cookie", &self.cookie)
            .send()
            .await
            .unwrap();
        let status = res.status().as_u16();
        let body: Value = res.json().await.unwrap();
        assert_eq!(status, 200, "{path}: {body}");
        body
    }

    async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let res = client()
            .post(format!("{}{path}", self.base))
            .header("Cookie", &self.cookie)
            .header("X-Copse-Nonce", &self.nonce)
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        (res.status().as_u16(), res.json().await.unwrap())
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A workspace with one Cursor guard that leaves a marker when it runs.
fn workspace(root: &Path, name: &str) -> PathBuf {
    let ws = root.join(name);
    let script = ws.join(".cursor/hooks/guard.sh");
    write(
        &script,
        &format!(
            "#!/bin/sh\ncat >/dev/null\ntouch \"{}/ran\"\necho '{{}}'\n",
            ws.display()
        ),
    );
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    write(
        &ws.join(".cursor/hooks.json"),
        r#"{"version": 1, "hooks": {"beforeShellExecution": [{"command": ".cursor/hooks/guard.sh"}]}}"#,
    );
    ws
}

#[tokio::test]
async fn editing_one_workspace_leaves_the_others_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, copse) = (root.join("home"), root.join("copse"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&copse).unwrap();
    let a = workspace(&root, "a");
    let b = workspace(&root, "b");
    let mut settings = Settings::default();
    settings.cursor_hooks_enabled = true;
    settings.trust(&a).unwrap();
    settings.trust(&b).unwrap();
    settings.save(&Settings::path_in(&copse)).unwrap();
    let roots = vec![a.clone(), b.clone()];
    let (h, c) = (home.clone(), copse.clone());
    let engine: copse_hooks_ui::EngineFactory = Arc::new(move || {
        let mut config = EngineConfig::from_process(roots.clone());
        config.home = h.clone();
        config.copse_dir = c.clone();
        let settings = Settings::load(&Settings::path_in(&c)).unwrap_or_default();
        config.hooks_enabled = settings.cursor_hooks_enabled;
        config.trusted = settings.trusted_workspaces;
        Ok(Engine::new(config))
    });
    let page = Page::start(engine).await;
    let preview = |ws: &Path| format!("/api/trust/preview?dir={}", ws.display());

    // Control: both trusted, nothing changed.
    for ws in [&a, &b] {
        let p = page.ok(&preview(ws)).await;
        assert_eq!(p["status"], "trusted", "{p}");
        assert_eq!(p["all_project_hooks_trusted"], true);
        assert_eq!(p["changed"], json!([]));
    }

    // Edit b's config only.
    let b_config = b.join(".cursor/hooks.json");
    let text = std::fs::read_to_string(&b_config).unwrap();
    std::fs::write(&b_config, text.replace("\"version\": 1", "\"version\":  1")).unwrap();

    let pa = page.ok(&preview(&a)).await;
    assert_eq!(pa["status"], "trusted", "a was marked by b's edit: {pa}");
    assert_eq!(pa["all_project_hooks_trusted"], true);
    assert_eq!(pa["changed"], json!([]));
    let pb = page.ok(&preview(&b)).await;
    assert_eq!(pb["status"], "changed since trusted", "{pb}");
    assert_eq!(pb["all_project_hooks_trusted"], false);
    assert_eq!(
        pb["changed"],
        json!([{"path": b_config.display().to_string(), "change": "changed since trusted"}])
    );
    // The command to see what changed, shell-quoted, as the CLI prints it.
    assert_eq!(
        pb["diff_command"],
        format!("copse-hooks trust --diff {}", b.display())
    );
    // The Sources page says the same, workspace by workspace.
    let s = page.ok("/api/sources").await;
    let ws = s["workspaces"].as_array().unwrap();
    assert_eq!(ws[0]["root"], a.display().to_string());
    assert_eq!(ws[0]["changed"], json!([]));
    assert_eq!(ws[1]["changed"].as_array().unwrap().len(), 1);

    // Trusting b again from the page clears it, and a stays as it was.
    let (status, d) = page
        .post(
            "/api/trust",
            &json!({"dir": b, "fingerprint": pb["fingerprint"]}),
        )
        .await;
    assert_eq!(status, 200, "{d}");
    assert_eq!(d["preview"]["status"], "trusted");
    assert_eq!(page.ok(&preview(&a)).await["status"], "trusted");
    // Pinned as `copse-hooks trust` pins: the script too, so editing the script
    // alone marks b changed (and names the script), and a stays trusted.
    let script = b.join(".cursor/hooks/guard.sh");
    let settings = std::fs::read_to_string(Settings::path_in(&copse)).unwrap();
    assert!(settings.contains("guard.sh"), "{settings}");
    let text = std::fs::read_to_string(&script).unwrap();
    std::fs::write(&script, format!("{text}# edited\n")).unwrap();
    let pb = page.ok(&preview(&b)).await;
    assert_eq!(pb["status"], "changed since trusted", "{pb}");
    assert_eq!(
        pb["changed"],
        json!([{"path": script.display().to_string(), "change": "changed since trusted"}])
    );
    assert_eq!(page.ok(&preview(&a)).await["status"], "trusted");
    // A confirmation of an older preview is refused once a script changed.
    let stale = pb["fingerprint"].clone();
    std::fs::write(&script, format!("{text}# edited again\n")).unwrap();
    let (status, _) = page
        .post("/api/trust", &json!({"dir": b, "fingerprint": stale}))
        .await;
    assert_eq!(status, 409);
}

#[tokio::test]
async fn runs_show_the_tool_call_the_agent_tried() {
    let w = world(true, 12).await;
    let get = |path: &str| {
        let (url, cookie) = (format!("{}{path}", w.base), w.cookie.clone());
        async move {
            let res = client()
                .get(url)
                .header("Cookie", cookie)
                .send()
                .await
                .unwrap();
            assert_eq!(res.status().as_u16(), 200);
            res.json::<Value>().await.unwrap()
        }
    };
    // The Runs list: every Cursor shell run names its command.
    let runs = get("/api/runs?agent=cursor").await;
    let runs = runs["runs"].as_array().unwrap();
    assert!(!runs.is_empty());
    for r in runs {
        let call = &r["tool_call"];
        assert!(call["tool"].is_string(), "{r}");
        let id: u32 = r["run_id"].as_str().unwrap()[4..].parse().unwrap();
        assert_eq!(call["input"], format!("rm -rf /tmp/x{id}"), "{r}");
    }
    // A run's detail and a session's timeline carry it too.
    let d = get("/api/runs/run-00001").await;
    assert_eq!(d["tool_call"]["input"], "rm -rf /tmp/x1");
    let t = get("/api/sessions/session-1").await;
    let cursor: Vec<&Value> = t["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["dialect"] == "cursor")
        .collect();
    assert!(!cursor.is_empty());
    for r in cursor {
        let input = r["tool_call"]["input"].as_str().unwrap_or_default();
        assert!(input.starts_with("rm -rf /tmp/x"), "{r}");
    }
    // A short id, as `log` prints it, opens the run too; an ambiguous prefix is
    // refused naming the candidates.
    let short = copse_hooks::spine::run_id_digest("run-00001")[..7].to_string();
    let d = get(&format!("/api/runs/{short}")).await;
    assert_eq!(d["run_id"], "run-00001");
    let res = client()
        .get(format!("{}/api/runs/run-0000", w.base))
        .header("Cookie", &w.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 400);
    let body: Value = res.json().await.unwrap();
    assert!(
        body["error"].as_str().unwrap().contains("ambiguous"),
        "{body}"
    );
    // A timed-out run has no exit code and says why; it is not a parse failure.
    let timeout = get("/api/runs/run-00007").await;
    assert_eq!(timeout["failure"], "timeout");
    assert_eq!(timeout["exit_code"], Value::Null);
}

/// `POST /api/explain`: every hook for a tool call with why it would or would not
/// run, from the engine's own selection; it runs nothing and needs the page nonce.
#[tokio::test]
async fn explain_says_why_a_hook_would_not_run() {
    let w = world(false, 0).await;
    let post = |body: Value, nonce: Option<String>| {
        let (url, cookie) = (format!("{}/api/explain", w.base), w.cookie.clone());
        async move {
            let mut req = client()
                .post(url)
                .header("Cookie", cookie)
                .header("Content-Type", "application/json");
            if let Some(n) = nonce {
                req = req.header("X-Copse-Nonce", n);
            }
            let res = req.body(body.to_string()).send().await.unwrap();
            let status = res.status().as_u16();
            let text = res.text().await.unwrap();
            (
                status,
                serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text)),
            )
        }
    };
    let call = json!({"tool": "run_shell", "input": {"command": "rm -rf /"}});
    let (status, _) = post(call.clone(), None).await;
    assert_eq!(status, 403, "explain without the page nonce");
    let (status, d) = post(call.clone(), Some(w.nonce.clone())).await;
    assert_eq!(status, 200, "{d}");
    let hooks = d["hooks"].as_array().unwrap();
    let guard = hooks
        .iter()
        .find(|h| h["command"] == ".cursor/hooks/deny-rm.sh")
        .unwrap();
    assert_eq!(guard["status"], "skipped", "{guard}");
    assert_eq!(guard["reason"]["kind"], "untrusted", "{guard}");
    assert!(
        guard["reason_message"].as_str().unwrap().contains("trust"),
        "{guard}"
    );
    // Control: the user-level Claude hook (matcher Bash) is selected for the call.
    let claude = hooks.iter().find(|h| h["dialect"] == "claude").unwrap();
    assert_eq!(claude["status"], "selected", "{claude}");
    // Bad input is refused clearly.
    let (status, d) = post(
        json!({"tool": "run_shell", "input": "rm"}),
        Some(w.nonce.clone()),
    )
    .await;
    assert_eq!(
        (status, d["error"].as_str()),
        (400, Some("`input` must be a JSON object"))
    );
}

/// Trusting from the page keeps the pinned bytes as `copse-hooks trust` does, so
/// `GET /api/trust/diff` shows, file by file, what changed since: the config's and
/// the script's lines, removed and added. It answers only for this page's workspaces
/// and only with the session cookie; stopping trust prunes the copies.
#[tokio::test]
async fn the_trust_diff_shows_what_changed_since_trusting_from_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, copse) = (root.join("home"), root.join("copse"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&copse).unwrap();
    let ws = workspace(&root, "ws");
    let roots = vec![ws.clone()];
    let (h, c) = (home.clone(), copse.clone());
    let engine: copse_hooks_ui::EngineFactory = Arc::new(move || {
        let mut config = EngineConfig::from_process(roots.clone());
        config.home = h.clone();
        config.copse_dir = c.clone();
        let settings = Settings::load(&Settings::path_in(&c)).unwrap_or_default();
        config.hooks_enabled = true;
        config.trusted = settings.trusted_workspaces;
        Ok(Engine::new(config))
    });
    let page = Page::start(engine).await;
    let diff_of = |ws: &Path| format!("/api/trust/diff?root={}", ws.display());

    // Not trusted yet: nothing pinned, nothing to compare.
    let d = page.ok(&diff_of(&ws)).await;
    assert_eq!(
        (d["trusted"].clone(), d["changed"].clone()),
        (json!(false), json!(false)),
        "{d}"
    );

    let p = page
        .ok(&format!("/api/trust/preview?dir={}", ws.display()))
        .await;
    let (status, t) = page
        .post(
            "/api/trust",
            &json!({"dir": ws, "fingerprint": p["fingerprint"]}),
        )
        .await;
    assert_eq!(status, 200, "{t}");
    assert_eq!(t["warnings"], json!([]), "{t}");
    // The copies: the config and the script, private.
    let store = copse.join("trust");
    let mut kept: Vec<String> = std::fs::read_dir(&store)
        .unwrap()
        .flatten()
        .map(|e| {
            assert_eq!(e.metadata().unwrap().permissions().mode() & 0o777, 0o600);
            e.file_name().to_string_lossy().into_owned()
        })
        .collect();
    kept.sort();
    let config = ws.join(".cursor/hooks.json");
    let script = ws.join(".cursor/hooks/guard.sh");
    let mut want = vec![
        copse_hooks::sha256_hex(&std::fs::read(&config).unwrap()),
        copse_hooks::sha256_hex(&std::fs::read(&script).unwrap()),
    ];
    want.sort();
    assert_eq!(kept, want);

    // Control: trusted, nothing changed, no diff.
    let d = page.ok(&diff_of(&ws)).await;
    assert_eq!(d["trusted"], true);
    assert_eq!(d["pinned"], true);
    assert_eq!(d["changed"], false, "{d}");
    assert!(
        d["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["diff"].is_null()),
        "{d}"
    );

    // Edit the config and the pinned script.
    let old_config = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        old_config.replace("beforeShellExecution", "afterFileEdit"),
    )
    .unwrap();
    let old_script = std::fs::read_to_string(&script).unwrap();
    std::fs::write(
        &script,
        old_script.replace("echo '{}'", "echo '{}' # edited"),
    )
    .unwrap();

    let d = page.ok(&diff_of(&ws)).await;
    assert_eq!(d["changed"], true, "{d}");
    assert_eq!(
        d["trust_command"],
        format!("copse-hooks trust {}", ws.display())
    );
    let file = |path: &Path| -> Value {
        d["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path.display().to_string())
            .cloned()
            .unwrap_or_else(|| panic!("{} not in {d}", path.display()))
    };
    let lines = |f: &Value, mark: char| -> Vec<String> {
        f["diff"]
            .as_str()
            .unwrap()
            .lines()
            .filter(|l| l.starts_with(mark) && !l.starts_with(&mark.to_string().repeat(3)))
            .map(|l| l[1..].to_string())
            .collect()
    };
    let c = file(&config);
    assert_eq!(
        (c["kind"].as_str(), c["state"].as_str()),
        (Some("config"), Some("changed"))
    );
    assert_eq!(c["pinned_copy"], true, "{c}");
    assert_eq!(lines(&c, '-'), vec![old_config.clone()]);
    assert_eq!(
        lines(&c, '+'),
        vec![old_config.replace("beforeShellExecution", "afterFileEdit")]
    );
    let s = file(&script);
    assert_eq!(
        (s["kind"].as_str(), s["state"].as_str()),
        (Some("script"), Some("changed"))
    );
    assert_eq!(lines(&s, '-'), vec!["echo '{}'".to_string()]);
    assert_eq!(lines(&s, '+'), vec!["echo '{}' # edited".to_string()]);
    let header = s["diff"]
        .as_str()
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert_eq!(header, format!("--- {} (pinned)", script.display()));
    // Looking changed nothing: the settings still pin the old content.
    assert_eq!(page.ok(&diff_of(&ws)).await["changed"], true);

    // A root that is not a workspace of this page is refused, and so is a request
    // without the session cookie.
    let other = workspace(&root, "other");
    let res = client()
        .get(format!("{}{}", page.base, diff_of(&other)))
        .header("Cookie", &page.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 400);
    let body: Value = res.json().await.unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("is not a workspace of this page"),
        "{body}"
    );
    let res = client()
        .get(format!("{}{}", page.base, diff_of(&ws)))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 403);

    // Stopping trust from the page prunes the copies no pin needs.
    let (status, u) = page
        .post("/api/untrust", &json!({"dir": ws, "confirm": true}))
        .await;
    assert_eq!(status, 200, "{u}");
    assert_eq!(std::fs::read_dir(&store).unwrap().count(), 0);
}
