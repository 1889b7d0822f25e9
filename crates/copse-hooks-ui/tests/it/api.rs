//! The HTTP API, with real requests over TCP.

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{World, client, page_nonce, sign_in, world, world_with};

impl World {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let res = client()
            .get(self.url(path))
            .header("Cookie", &self.cookie)
            .send()
            .await
            .unwrap();
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    async fn ok(&self, path: &str) -> Value {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "{path}: {body}");
        body
    }

    /// A state-changing request as the page sends it: the cookie and the page's nonce.
    async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.post_with(path, body, Some(&self.nonce)).await
    }

    async fn post_with(&self, path: &str, body: &Value, nonce: Option<&str>) -> (u16, Value) {
        let mut req = client()
            .post(self.url(path))
            .header("Cookie", &self.cookie)
            .header("Content-Type", "application/json");
        if let Some(n) = nonce {
            req = req.header("X-Copse-Nonce", n);
        }
        let res = req.body(body.to_string()).send().await.unwrap();
        let status = res.status().as_u16();
        let text = res.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }
}

/// A request written by hand, so the Host header is exactly what the test says.
async fn raw(w: &World, request: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", w.port))
        .await
        .unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn every_request_needs_the_session_cookie() {
    let w = world(true, 20).await;
    let (name, secret) = w.cookie.split_once('=').unwrap();
    for path in [
        "/",
        "/assets/app.js",
        "/api/runs",
        "/api/overview",
        "/api/events",
        "/api/nonce",
    ] {
        let res = client().get(w.url(path)).send().await.unwrap();
        assert_eq!(res.status().as_u16(), 403, "{path} without a cookie");
        assert!(res.text().await.unwrap().contains("not signed in"));
        let forged = format!("{name}=0000{}", &secret[4..]);
        let res = client()
            .get(w.url(path))
            .header("Cookie", forged)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 403, "{path} with a wrong secret");
        assert!(res.headers().get("access-control-allow-origin").is_none());
        // Another port's cookie (the browser sends a host's cookies to every port).
        let res = client()
            .get(w.url(path))
            .header("Cookie", format!("copse-hooks-1={secret}"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 403, "{path} under another name");
    }
    // A page on another port of this host is the same site, so the browser sends the
    // cookie along; it may navigate to the page but not read or embed the API.
    for site in ["same-site", "cross-site"] {
        let res = client()
            .get(w.url("/api/overview"))
            .header("Cookie", &w.cookie)
            .header("Sec-Fetch-Site", site)
            .header("Sec-Fetch-Mode", "no-cors")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 403, "{site}");
        let res = client()
            .get(w.url("/"))
            .header("Cookie", &w.cookie)
            .header("Sec-Fetch-Site", site)
            .header("Sec-Fetch-Mode", "navigate")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 200, "{site} navigation");
    }
    // Control: the same requests with the cookie (among others) are served.
    let res = client()
        .get(w.url("/api/overview"))
        .header("Cookie", format!("theme=dark; {}", w.cookie))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(secret.len(), 64);
}

#[tokio::test]
async fn a_sign_in_code_works_once_and_sets_a_strict_cookie() {
    let w = world(true, 0).await;
    let login = w.logins.login_url().unwrap();
    let code = login
        .strip_prefix(&format!("{}/?code=", w.base))
        .unwrap()
        .to_string();
    assert_eq!(code.len(), 32);
    assert!(code.bytes().all(|b| b.is_ascii_hexdigit()));
    let res = client().get(&login).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 303);
    assert_eq!(res.headers()["location"], "/");
    let set = res.headers()["set-cookie"].to_str().unwrap().to_string();
    let name = w.logins.cookie_name();
    assert_eq!(name, format!("copse-hooks-{}", w.port));
    let secret = set
        .strip_prefix(&format!("{name}="))
        .and_then(|r| r.strip_suffix("; HttpOnly; SameSite=Strict; Path=/"))
        .unwrap_or_else(|| panic!("cookie flags: {set}"));
    assert_eq!(secret.len(), 64);
    assert!(secret.bytes().all(|b| b.is_ascii_hexdigit()));
    assert!(!secret.contains(&code));
    // The new session reads the page, which has a nonce and no credential in it.
    let cookie = format!("{name}={secret}");
    let page = client()
        .get(w.url("/"))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let html = page.text().await.unwrap();
    assert!(!html.contains(secret) && !html.contains(&code));
    assert_eq!(page_nonce(&html).len(), 32);
    // Replayed: refused with a page that says why, and no cookie.
    let res = client().get(&login).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 403);
    assert!(res.headers().get("set-cookie").is_none());
    assert_eq!(res.headers()["content-type"], "text/html; charset=utf-8");
    let text = res.text().await.unwrap();
    assert!(text.contains("this link was already used"), "{text}");
    // A code this server never made.
    let (status, text) = sign_in(&format!("{}/?code={}", w.base, "0".repeat(32)))
        .await
        .unwrap_err();
    assert_eq!(status, 403);
    assert!(text.contains("this link is not valid"), "{text}");
    // Each address is its own code: a second one still signs in.
    assert!(sign_in(&w.logins.login_url().unwrap()).await.is_ok());
    // Under a foreign Host the code is not even looked at (and stays unspent).
    let fresh = w.logins.login_url().unwrap();
    let path = fresh.strip_prefix(&w.base).unwrap();
    let res = raw(
        &w,
        &format!(
            "GET {path} HTTP/1.1\r\nHost: evil.example:{}\r\nConnection: close\r\n\r\n",
            w.port
        ),
    )
    .await;
    assert!(res.starts_with("HTTP/1.1 421"), "{res}");
    assert!(sign_in(&fresh).await.is_ok());
    // A HEAD (a link checker's probe) does not spend a code.
    let fresh = w.logins.login_url().unwrap();
    let res = client().head(&fresh).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 403);
    assert!(res.headers().get("set-cookie").is_none());
    assert!(sign_in(&fresh).await.is_ok());
}

#[tokio::test]
async fn an_expired_sign_in_code_is_refused() {
    let w = world_with(true, 0, std::time::Duration::ZERO).await;
    let login = w.logins.login_url().unwrap();
    let (status, text) = sign_in(&login).await.unwrap_err();
    assert_eq!(status, 403);
    assert!(text.contains("this link has expired"), "{text}");
    // Still refused on a second try, and nothing was signed in.
    let (status, _) = sign_in(&login).await.unwrap_err();
    assert_eq!(status, 403);
    let res = client().get(w.url("/api/overview")).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 403);
}

#[tokio::test]
async fn the_host_must_be_loopback() {
    let w = world(true, 5).await;
    let c = &w.cookie;
    let port = w.port;
    for host in [
        format!("evil.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        "127.0.0.1".to_string(),
    ] {
        let res = raw(
            &w,
            &format!(
                "GET /api/overview HTTP/1.1\r\nHost: {host}\r\nCookie: {c}\r\nConnection: close\r\n\r\n"
            ),
        )
        .await;
        assert!(res.starts_with("HTTP/1.1 421"), "{host}: {res}");
        assert!(res.contains("Host header must name this loopback server"));
    }
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        let res = raw(
            &w,
            &format!(
                "GET /api/overview HTTP/1.1\r\nHost: {host}\r\nCookie: {c}\r\nConnection: close\r\n\r\n"
            ),
        )
        .await;
        assert!(res.starts_with("HTTP/1.1 200"), "{host}: {res}");
    }
}

#[tokio::test]
async fn the_page_is_served_with_a_strict_policy_and_no_inline_script() {
    let w = world(true, 5).await;
    let res = client()
        .get(w.url("/"))
        .header("Cookie", &w.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let h = res.headers().clone();
    let csp = h["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("default-src 'none'"));
    assert!(csp.contains("script-src 'self'"));
    assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"));
    assert!(csp.contains("frame-ancestors 'none'"));
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["referrer-policy"], "no-referrer");
    assert_eq!(h["cache-control"], "no-store");
    assert!(h.get("access-control-allow-origin").is_none());
    let body = res.text().await.unwrap();
    // A nonce of its own for every load.
    let nonce = page_nonce(&body);
    assert_eq!(nonce.len(), 32);
    assert_ne!(nonce, w.nonce);
    assert!(!body.contains("token"));
    // Every script is a file of this server; none has a body.
    for tag in body.split("<script").skip(1) {
        assert!(tag.contains("src=\"/assets/"), "{tag}");
        assert!(tag.contains("></script>"), "inline script: {tag}");
    }
    assert!(!body.contains("http://") && !body.contains("https://"));
    for (asset, mime) in [
        ("app.js", "text/javascript; charset=utf-8"),
        ("charts.js", "text/javascript; charset=utf-8"),
        ("app.css", "text/css; charset=utf-8"),
        ("icon.svg", "image/svg+xml"),
    ] {
        let res = client()
            .get(w.url(&format!("/assets/{asset}")))
            .header("Cookie", &w.cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 200, "{asset}");
        assert_eq!(res.headers()["content-type"], mime);
        let text = res.text().await.unwrap();
        assert!(
            !text.contains("https://") && !text.contains("//cdn"),
            "{asset} refers elsewhere"
        );
    }
    let (status, _) = w.get("/assets/nope.js").await;
    assert_eq!(status, 404);
    let (status, body) = w.get("/api/nope").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("no such page"))
    );
}

#[tokio::test]
async fn state_changes_need_the_page_nonce_and_the_same_origin() {
    let w = world(true, 5).await;
    // The hook writes a marker: whether it ran is seen on disk.
    let marker = w.ws.join("ran");
    std::fs::write(
        w.ws.join(".cursor").join(crate::support::DENY_RM),
        format!("#!/bin/sh\ntouch {}\necho '{{}}'\n", marker.display()),
    )
    .unwrap();
    // Re-pin the edited script's workspace so the tester may run it.
    let mut settings = copse_hooks::Settings::load(&w.copse.join("settings.json")).unwrap();
    settings.trust(&w.ws).unwrap();
    settings.save(&w.copse.join("settings.json")).unwrap();
    let body = json!({"source": w.cursor_config, "event": "beforeShellExecution"});
    // The cookie alone is not enough: no nonce, a wrong one, another session's.
    let other = world(true, 0).await;
    for nonce in [None, Some("0".repeat(32)), Some(other.nonce.clone())] {
        let (status, answer) = w
            .post_with("/api/tester/run", &body, nonce.as_deref())
            .await;
        assert_eq!(status, 403, "{nonce:?}: {answer}");
        assert!(
            answer
                .as_str()
                .unwrap()
                .contains("must come from a loaded copse-hooks page"),
            "{answer}"
        );
    }
    assert!(!marker.exists(), "a refused request ran the hook");
    // A foreign Origin is refused even with the nonce.
    let res = client()
        .post(w.url("/api/tester/run"))
        .header("Cookie", &w.cookie)
        .header("X-Copse-Nonce", &w.nonce)
        .header("Origin", "http://evil.example")
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 403);
    assert!(res.text().await.unwrap().contains("cross-origin"));
    // As is a browser's request from another site of the same host (no Origin sent).
    for site in ["same-site", "cross-site"] {
        let res = client()
            .post(w.url("/api/tester/run"))
            .header("Cookie", &w.cookie)
            .header("X-Copse-Nonce", &w.nonce)
            .header("Sec-Fetch-Site", site)
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 403, "{site}");
    }
    assert!(!marker.exists());
    // A preflight gets no CORS grant.
    let res = client()
        .request(reqwest::Method::OPTIONS, w.url("/api/trust"))
        .header("Origin", "http://evil.example")
        .header("Access-Control-Request-Method", "POST")
        .send()
        .await
        .unwrap();
    assert!(res.headers().get("access-control-allow-origin").is_none());
    assert_ne!(res.status().as_u16(), 200);
    // Control: the page's own request, with its nonce and its origin, runs the hook.
    let res = client()
        .post(w.url("/api/tester/run"))
        .header("Cookie", &w.cookie)
        .header("X-Copse-Nonce", &w.nonce)
        .header("Origin", &w.base)
        .header("Sec-Fetch-Site", "same-origin")
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    assert!(marker.exists(), "the tester did not run the hook");
}

#[tokio::test]
async fn trust_and_untrust_need_the_page_nonce() {
    let w = world(false, 0).await;
    let settings = w.copse.join("settings.json");
    let ws = w.ws.display().to_string();
    let p = w.ok("/api/trust/preview").await;
    let trust = json!({"fingerprint": p["fingerprint"]});
    for nonce in [None, Some("f".repeat(32))] {
        let (status, answer) = w.post_with("/api/trust", &trust, nonce.as_deref()).await;
        assert_eq!(status, 403, "{answer}");
        assert!(!std::fs::read_to_string(&settings).unwrap().contains(&ws));
    }
    // A nonce from the API (as a page that lost its own would ask) works.
    let fresh = w.ok("/api/nonce").await;
    assert_eq!(fresh["header"], "x-copse-nonce");
    let (status, answer) = w
        .post_with("/api/trust", &trust, fresh["nonce"].as_str())
        .await;
    assert_eq!(status, 200, "{answer}");
    assert!(std::fs::read_to_string(&settings).unwrap().contains(&ws));
    // Untrust likewise.
    let (status, _) = w
        .post_with("/api/untrust", &json!({"confirm": true}), None)
        .await;
    assert_eq!(status, 403);
    assert!(std::fs::read_to_string(&settings).unwrap().contains(&ws));
    let (status, answer) = w.post("/api/untrust", &json!({"confirm": true})).await;
    assert_eq!(status, 200, "{answer}");
    assert!(!std::fs::read_to_string(&settings).unwrap().contains(&ws));
}

#[tokio::test]
async fn trust_from_the_page_never_rewrites_settings_others_could_write() {
    use std::os::unix::fs::PermissionsExt as _;
    let w = world(false, 0).await;
    let settings = w.copse.join("settings.json");
    let ws = w.ws.display().to_string();
    let p = w.ok("/api/trust/preview").await;
    let trust = json!({"fingerprint": p["fingerprint"]});
    // Group-writable: another user could have written it, so it is refused, not
    // adopted by a rewrite (as `copse-hooks trust` refuses it).
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o664)).unwrap();
    let before = std::fs::read(&settings).unwrap();
    let (status, answer) = w.post("/api/trust", &trust).await;
    assert_eq!(status, 409, "{answer}");
    assert!(answer.to_string().contains("chmod"), "{answer}");
    assert_eq!(
        std::fs::read(&settings).unwrap(),
        before,
        "the file was rewritten"
    );
    // Control: once fixed, the same request trusts (under the settings lock).
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (status, answer) = w.post("/api/trust", &trust).await;
    assert_eq!(status, 200, "{answer}");
    assert!(std::fs::read_to_string(&settings).unwrap().contains(&ws));
    assert!(
        w.copse.join("settings.lock").exists(),
        "the update did not take the lock"
    );
}

#[tokio::test]
async fn a_symlinked_config_is_not_shown() {
    let w = world(true, 0).await;
    let outside = w.ws.parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let secret = outside.join("id_rsa");
    std::fs::write(
        &secret,
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n",
    )
    .unwrap();
    // A config that is a link out of the workspace.
    let claude = w.ws.join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::os::unix::fs::symlink(&secret, claude.join("settings.json")).unwrap();
    // A config whose directory is a link out of the workspace.
    let gemini_dir = outside.join("gemini");
    std::fs::create_dir_all(&gemini_dir).unwrap();
    std::fs::write(
        gemini_dir.join("settings.json"),
        r#"{"hooks": {"BeforeTool": [{"matcher": "*", "hooks": [{"type": "command", "command": "echo SECRET-GEMINI"}]}]}}"#,
    )
    .unwrap();
    std::os::unix::fs::symlink(&gemini_dir, w.ws.join(".gemini")).unwrap();
    // A config that is a second (hard) name of the key.
    let codex = w.ws.join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::hard_link(&secret, codex.join("hooks.json")).unwrap();
    // Discovery knows them all (so the refusal below is the link rule, not "unknown").
    let s = w.ok("/api/sources").await;
    let known = s.to_string();
    for config in [
        claude.join("settings.json"),
        w.ws.join(".gemini/settings.json"),
        codex.join("hooks.json"),
    ] {
        let config = config.display().to_string();
        assert!(
            known.contains(&config),
            "discovery does not list {config}: {s}"
        );
        let (status, body) = w.get(&format!("/api/source?path={config}")).await;
        assert_eq!(status, 403, "{config}: {body}");
        let error = body["error"].as_str().unwrap();
        assert!(
            error.contains("is a symbolic link") || error.contains("is a hard link"),
            "{error}"
        );
        assert!(!body.to_string().contains("PRIVATE KEY"));
        assert!(!body.to_string().contains("SECRET-GEMINI"));
    }
    // Control: a regular config of the same workspace is served.
    let f = w
        .ok(&format!("/api/source?path={}", w.cursor_config.display()))
        .await;
    assert!(f["text"].as_str().unwrap().contains("beforeShellExecution"));
}

#[tokio::test]
async fn overview_and_sources() {
    let w = world(true, 200).await;
    let o = w.ok("/api/overview").await;
    assert_eq!(o["workspaces"], json!([w.ws.display().to_string()]));
    assert_eq!(o["hooks_enabled"], true);
    assert_eq!(o["spine"]["exists"], true);
    assert_eq!(o["spine"]["latest_seq"], 200);

    let s = w.ok("/api/sources?window=24h").await;
    let hooks = s["hooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 3, "{s}");
    let deny = hooks
        .iter()
        .find(|h| h["command"] == ".cursor/hooks/deny-rm.sh")
        .unwrap();
    assert_eq!(deny["trust"], "trusted");
    assert_eq!(deny["active"], true);
    assert_eq!(deny["scope"], "project");
    assert_eq!(deny["sandboxed"], true);
    assert_eq!(deny["policy"], "closed");
    assert_eq!(deny["stats"]["runs"], 100);
    assert_eq!(deny["stats"]["failures"], 10);
    assert!(deny["stats"]["p50_ms"].as_u64().unwrap() <= deny["stats"]["p95_ms"].as_u64().unwrap());
    assert!(deny["stats"]["last_failure"]["run_id"].is_string());
    let audit = hooks
        .iter()
        .find(|h| h["command"] == ".cursor/hooks/audit.sh")
        .unwrap();
    assert_eq!(audit["policy"], "open");
    assert_eq!(audit["timeout_ms"], 5000);
    let ws = &s["workspaces"][0];
    assert_eq!(ws["trusted"], true);
    assert_eq!(ws["pinned"], true);
    assert_eq!(ws["configs"][0]["change"], "unchanged");
    // Change the config: the page says what changed since trusted.
    let text = std::fs::read_to_string(&w.cursor_config).unwrap();
    std::fs::write(
        &w.cursor_config,
        text.replace("\"timeout\": 5", "\"timeout\": 6"),
    )
    .unwrap();
    let s = w.ok("/api/sources").await;
    assert_eq!(
        s["workspaces"][0]["configs"][0]["change"],
        "changed since trusted"
    );
    assert!(
        s["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["trust"] == "changed")
    );
    // A window with no runs.
    let s = w.ok("/api/sources?window=1s").await;
    assert!(
        s["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["stats"]["runs"] == 0)
    );
    // The source view shows only configs discovery knows.
    let f = w
        .ok(&format!("/api/source?path={}", w.claude_config.display()))
        .await;
    assert!(f["text"].as_str().unwrap().contains("PreToolUse"));
    let (status, _) = w.get("/api/source?path=/etc/passwd").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn runs_page_by_keyset_and_filter() {
    let w = world(true, 200).await;
    let first = w.ok("/api/runs?limit=50").await;
    let runs = first["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 50);
    assert_eq!(runs[0]["run_id"], "run-00199");
    let starts: Vec<u64> = runs
        .iter()
        .map(|r| r["started_at"].as_u64().unwrap())
        .collect();
    assert!(starts.windows(2).all(|p| p[0] >= p[1]));
    let next = first["next"].as_str().unwrap();
    let second = w.ok(&format!("/api/runs?limit=50&after={next}")).await;
    assert_eq!(second["runs"][0]["run_id"], "run-00149");
    // Walk every page: 200 runs, no repeats, and the last page has no `next`.
    let mut seen = std::collections::HashSet::new();
    let mut after = String::new();
    loop {
        let page = w.ok(&format!("/api/runs?limit=64{after}")).await;
        for r in page["runs"].as_array().unwrap() {
            assert!(seen.insert(r["run_id"].as_str().unwrap().to_string()));
        }
        match page["next"].as_str() {
            Some(n) => after = format!("&after={n}"),
            None => break,
        }
    }
    assert_eq!(seen.len(), 200);

    let all = |v: &Value, key: &str, want: &str| {
        let runs = v["runs"].as_array().unwrap();
        !runs.is_empty() && runs.iter().all(|r| r[key] == want)
    };
    let denied = w.ok("/api/runs?decision=deny&limit=500").await;
    assert!(all(&denied, "outcome", "deny"));
    assert_eq!(denied["runs"].as_array().unwrap().len(), 20);
    assert!(all(
        &w.ok("/api/runs?agent=claude-code").await,
        "dialect",
        "claude"
    ));
    assert!(all(
        &w.ok("/api/runs?dialect=cursor").await,
        "dialect",
        "cursor"
    ));
    assert!(all(
        &w.ok("/api/runs?failure=timeout").await,
        "failure",
        "timeout"
    ));
    assert!(all(
        &w.ok("/api/runs?event=PreToolUse").await,
        "event",
        "PreToolUse"
    ));
    assert!(all(
        &w.ok("/api/runs?kind=dropped").await,
        "kind",
        "dropped"
    ));
    assert!(all(
        &w.ok("/api/runs?session=session-1").await,
        "session_id",
        "session-1"
    ));
    let by_hook = w
        .ok(&format!(
            "/api/runs?limit=500&source={}&command=.cursor/hooks/audit.sh",
            w.cursor_config.display()
        ))
        .await;
    assert!(all(&by_hook, "command", ".cursor/hooks/audit.sh"));
    assert_eq!(by_hook["runs"].as_array().unwrap().len(), 50);
    let recent = w.ok("/api/runs?since=30m&limit=500").await;
    let n = recent["runs"].as_array().unwrap().len();
    assert!((90..=110).contains(&n), "{n}");
    let none = w.ok("/api/runs?until=1000").await;
    assert_eq!(none["runs"], json!([]));
    assert_eq!(none["next"], Value::Null);
}

#[tokio::test]
async fn bad_parameters_are_refused_clearly() {
    let w = world(true, 10).await;
    let mut answers = Vec::new();
    for path in [
        "/api/runs?limit=0",
        "/api/runs?limit=abc",
        "/api/runs?limit=100000",
        "/api/runs?decision=maybe",
        "/api/runs?after=yesterday",
        "/api/runs?since=last-week",
        "/api/runs?kind=other",
        "/api/runs?agent=vim",
        "/api/runs?agent=cursor&dialect=claude",
        "/api/runs?colour=red",
        "/api/sources?window=forever",
        "/api/stats?buckets=0",
        "/api/sessions?limit=-1",
        "/api/tester/payload?source=/nope/.cursor/hooks.json",
        "/api/tester/payload?source=/nope/.cursor/hooks.json&event=stop&entry=0",
        "/api/source",
        "/api/trust/preview?dir=/",
    ] {
        let (status, body) = w.get(path).await;
        assert_eq!(status, 400, "{path}: {body}");
        let msg = body["error"]
            .as_str()
            .unwrap()
            .replace(&w.ws.display().to_string(), "[WS]");
        answers.push(format!("{path} -> {msg}"));
    }
    let (status, body) = w.post("/api/tester/run", &json!({"nope": 1})).await;
    assert_eq!(status, 400);
    answers.push(format!("POST tester/run {{nope}} -> {}", body["error"]));
    let (status, body) = w.post("/api/untrust", &json!({"confirm": false})).await;
    assert_eq!(status, 400);
    answers.push(format!("POST untrust confirm=false -> {}", body["error"]));
    insta::assert_snapshot!(answers.join("\n"));
}

#[tokio::test]
async fn run_detail_sessions_stats_filters() {
    let w = world(true, 60).await;
    let r = w.ok("/api/runs/run-00003").await;
    assert_eq!(r["outcome"], "deny");
    assert_eq!(r["stdout_json"]["permission"], "deny");
    assert_eq!(r["stdin_json"]["command"], "rm -rf /tmp/x3");
    assert_eq!(r["agent_message"], "rm -rf is not allowed here");
    assert_eq!(r["source"], w.claude_config.display().to_string());
    let b = w.ok("/api/runs/run-00009").await;
    assert_eq!(b["sandbox_blocked"], true);
    assert!(b["stderr"].as_str().unwrap().contains("Permission denied"));
    assert_eq!(b["stderr_json"], Value::Null);
    let (status, body) = w.get("/api/runs/run-99999").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("no run run-99999"))
    );

    let s = w.ok("/api/sessions").await;
    let sessions = s["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 3);
    let total: u64 = sessions.iter().map(|s| s["runs"].as_u64().unwrap()).sum();
    assert_eq!(total, 60);
    let t = w.ok("/api/sessions/session-0").await;
    let runs = t["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 20);
    assert!(
        runs.windows(2)
            .all(|p| p[0]["started_at"].as_u64() <= p[1]["started_at"].as_u64())
    );
    let (status, _) = w.get("/api/sessions/nobody").await;
    assert_eq!(status, 404);

    let st = w.ok("/api/stats?window=24h&buckets=12").await;
    assert_eq!(st["runs"], 60);
    assert_eq!(st["timeline"].as_array().unwrap().len(), 12);
    let sum: u64 = st["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["runs"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, 60);
    let h = &st["hooks"][0];
    let hist: u64 = h["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert_eq!(hist, h["runs"].as_u64().unwrap());
    let all = w.ok("/api/stats?window=all&buckets=4").await;
    assert_eq!(all["runs"], 60);

    let f = w.ok("/api/filters").await;
    assert_eq!(f["dialects"], json!(["claude", "cursor"]));
    assert_eq!(f["failures"], json!(["timeout"]));
    assert_eq!(f["events"], json!(["PreToolUse", "beforeShellExecution"]));
}

#[tokio::test]
async fn an_empty_store_reads_as_empty() {
    let w = world(true, 0).await;
    assert_eq!(w.ok("/api/runs").await["runs"], json!([]));
    assert_eq!(w.ok("/api/sessions").await["sessions"], json!([]));
    assert_eq!(w.ok("/api/stats").await["runs"], 0);
    assert_eq!(w.ok("/api/overview").await["spine"]["exists"], false);
    assert!(
        !w.copse.join("spine.db").exists(),
        "reading must not create the store"
    );
}

#[tokio::test]
async fn live_updates_announce_new_runs() {
    let w = world(true, 3).await;
    let mut res = client()
        .get(w.url("/api/events"))
        .header("Cookie", &w.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    let first = tokio::time::timeout(std::time::Duration::from_secs(30), res.chunk())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let first = String::from_utf8_lossy(&first).into_owned();
    assert!(
        first.contains("event: runs") && first.contains("\"latest_seq\":3"),
        "{first}"
    );
    // One more run arrives: the stream announces it.
    let spine = copse_hooks::spine::Spine::try_open(
        w.copse.join("spine.db"),
        copse_hooks::spine::SpineOptions::default(),
    )
    .unwrap();
    spine.record({
        let mut record = copse_hooks::spine::RunRecord::default();
        record.session_id = "session-live".into();
        record.dialect = "cursor".into();
        record.event = "stop".into();
        record.canonical = "stop".into();
        record.outcome = "none".into();
        record.started_at = copse_hooks::spine::unix_ms(std::time::SystemTime::now());
        record
    });
    spine.flush();
    let next = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            let chunk = res.chunk().await.unwrap().unwrap();
            let text = String::from_utf8_lossy(&chunk).into_owned();
            if text.contains("event: runs") {
                return text;
            }
        }
    })
    .await
    .unwrap();
    assert!(next.contains("\"latest_seq\":4"), "{next}");
}

#[tokio::test]
async fn the_tester_runs_a_hook_as_test_does() {
    let w = world(true, 0).await;
    let src = w.cursor_config.display().to_string();
    let p = w
        .ok(&format!(
            "/api/tester/payload?source={src}&event=beforeShellExecution&entry=1"
        ))
        .await;
    let payload: Value = serde_json::from_str(p["payload"].as_str().unwrap()).unwrap();
    assert_eq!(payload["hook_event_name"], "beforeShellExecution");
    assert!(payload["command"].is_string());
    // The prefilled payload as is: allowed.
    let (status, d) = w
        .post(
            "/api/tester/run",
            &json!({"source": src, "event": "beforeShellExecution", "entry": 1, "payload": p["payload"]}),
        )
        .await;
    assert_eq!(status, 200, "{d}");
    assert_eq!(d["verdict"], "allow");
    // Edited to an `rm -rf`: denied, with the hook's message.
    let mut edited = payload.clone();
    edited["command"] = json!("rm -rf /");
    let (status, d) = w
        .post(
            "/api/tester/run",
            &json!({"source": src, "event": "beforeShellExecution", "payload": edited.to_string()}),
        )
        .await;
    assert_eq!(status, 200, "{d}");
    assert_eq!(d["verdict"], "deny");
    assert_eq!(d["summary"], "deny — rm -rf is not allowed here");
    assert_eq!(d["stdout_json"]["permission"], "deny");
    assert_eq!(d["exit_code"], 0);
    // Nothing was recorded.
    assert!(!w.copse.join("spine.db").exists());
    // Not JSON, no such hook.
    let (status, d) = w
        .post(
            "/api/tester/run",
            &json!({"source": src, "event": "beforeShellExecution", "payload": "{nope"}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(d["error"].as_str().unwrap().contains("not valid JSON"));
    let (status, d) = w
        .post("/api/tester/run", &json!({"source": src, "event": "stop"}))
        .await;
    assert_eq!(status, 400);
    assert!(d["error"].as_str().unwrap().contains("declares no hook"));
}

#[tokio::test]
async fn untrusted_hooks_do_not_run_and_trust_is_confirmed() {
    let w = world(false, 0).await;
    let src = w.cursor_config.display().to_string();
    let marker = w.ws.join("ran");
    std::fs::write(
        w.ws.join(".cursor").join(crate::support::DENY_RM),
        format!("#!/bin/sh\ntouch {}\necho '{{}}'\n", marker.display()),
    )
    .unwrap();
    let (status, d) = w
        .post(
            "/api/tester/run",
            &json!({"source": src, "event": "beforeShellExecution"}),
        )
        .await;
    assert_eq!(status, 403, "{d}");
    assert!(d["error"].as_str().unwrap().contains("not trusted"));
    assert!(!marker.exists(), "an untrusted hook ran");

    let p = w.ok("/api/trust/preview").await;
    assert_eq!(p["workspace"], w.ws.display().to_string());
    assert_eq!(p["trusted"], false);
    assert_eq!(p["hooks"].as_array().unwrap().len(), 2);
    assert_eq!(p["unsandboxed"], json!([]));
    let fingerprint = p["fingerprint"].as_str().unwrap().to_string();
    // A stale confirmation is refused.
    let (status, d) = w
        .post("/api/trust", &json!({"fingerprint": "0".repeat(64)}))
        .await;
    assert_eq!(status, 409, "{d}");
    let (status, _) = w.post("/api/trust", &json!({})).await;
    assert_eq!(status, 400);
    let settings = w.copse.join("settings.json");
    let before = std::fs::read_to_string(&settings).unwrap();
    assert!(!before.contains(&w.ws.display().to_string()));
    let (status, d) = w
        .post(
            "/api/trust",
            &json!({"dir": w.ws, "fingerprint": fingerprint}),
        )
        .await;
    assert_eq!(status, 200, "{d}");
    assert_eq!(d["preview"]["trusted"], true);
    assert!(
        std::fs::read_to_string(&settings)
            .unwrap()
            .contains(&w.ws.display().to_string())
    );
    let s = w.ok("/api/sources").await;
    assert!(
        s["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["trust"] == "trusted")
    );
    let (status, d) = w.post("/api/untrust", &json!({"confirm": true})).await;
    assert_eq!(status, 200, "{d}");
    assert_eq!(d["was_trusted"], true);
    let p = w.ok("/api/trust/preview").await;
    assert_eq!(p["trusted"], false);
}

/// The tester runs only a config discovery lists, by the path it lists: its own
/// trust check then applies (the engine's dry run refuses an untrusted project config
/// too; this is the page's own line of defence).
#[tokio::test]
async fn the_tester_runs_only_configs_discovery_lists() {
    let w = world(false, 0).await;
    let marker = w.ws.join("ran");
    // An untrusted project config elsewhere in the tree, and the workspace's own
    // Cursor config made a link to it.
    let nested = w.ws.join("sub/.cursor/hooks.json");
    std::fs::create_dir_all(nested.parent().unwrap()).unwrap();
    std::fs::write(
        &nested,
        format!(
            r#"{{"version": 1, "hooks": {{"beforeShellExecution": [{{"command": "touch {}; echo '{{}}'"}}]}}}}"#,
            marker.display()
        ),
    )
    .unwrap();
    std::fs::remove_file(&w.cursor_config).unwrap();
    std::os::unix::fs::symlink(&nested, &w.cursor_config).unwrap();
    for source in [&w.cursor_config, &nested] {
        let (status, d) = w
            .post(
                "/api/tester/run",
                &json!({"source": source, "event": "beforeShellExecution"}),
            )
            .await;
        assert!(
            status == 403 || status == 404,
            "{}: {status} {d}",
            source.display()
        );
        assert!(
            !marker.exists(),
            "{}: an untrusted hook ran",
            source.display()
        );
        let (status, _) = w
            .get(&format!(
                "/api/tester/payload?source={}&event=beforeShellExecution",
                nested.display()
            ))
            .await;
        assert_eq!(status, 404);
    }
    // Control: the same config as a regular file, trusted, runs the same hook.
    std::fs::remove_file(&w.cursor_config).unwrap();
    std::fs::copy(&nested, &w.cursor_config).unwrap();
    let p = w.ok("/api/trust/preview").await;
    let (status, d) = w
        .post("/api/trust", &json!({"fingerprint": p["fingerprint"]}))
        .await;
    assert_eq!(status, 200, "{d}");
    let (status, d) = w
        .post(
            "/api/tester/run",
            &json!({"source": w.cursor_config, "event": "beforeShellExecution"}),
        )
        .await;
    assert_eq!(status, 200, "{d}");
    assert!(marker.exists(), "the trusted hook did not run: {d}");
}
