//! A seeded world: a home, a copse dir, a trusted workspace with real hook scripts,
//! an audit store with runs in three sessions, and a running server this test client
//! signed in to (through a one-time code, as a browser does).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use copse_hooks::Settings;
use copse_hooks::spine::{Retention, RunKind, RunRecord, Spine, SpineOptions, unix_ms};
use copse_hooks::{Engine, EngineConfig};
use copse_hooks_ui::{Logins, Server, UiOptions};

pub struct World {
    _dir: tempfile::TempDir,
    pub copse: PathBuf,
    pub ws: PathBuf,
    pub cursor_config: PathBuf,
    pub claude_config: PathBuf,
    pub base: String,
    pub port: u16,
    /// Mints sign-in addresses for this server.
    pub logins: Logins,
    /// The session cookie, as a `Cookie:` header value (`name=secret`); empty when
    /// the world was built without signing in.
    pub cookie: String,
    /// A nonce of a page this session loaded.
    pub nonce: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for World {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn script(path: &Path, body: &str) {
    write(path, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

pub const DENY_RM: &str = "hooks/deny-rm.sh";

/// The engine the CLI's `list` would build for this world.
pub fn engine_for(home: &Path, copse: &Path, ws: &Path) -> Engine {
    let mut config = EngineConfig::from_process(vec![ws.to_path_buf()]);
    config.home = home.to_path_buf();
    config.copse_dir = copse.to_path_buf();
    let settings = Settings::load(&Settings::path_in(copse)).unwrap_or_default();
    config.hooks_enabled = settings.cursor_hooks_enabled;
    config.trusted = settings.trusted_workspaces;
    Engine::new(config)
}

/// Builds the world and signs in; `trusted` decides whether the workspace starts
/// trusted.
pub async fn world(trusted: bool, runs: usize) -> World {
    world_with(trusted, runs, copse_hooks_ui::CODE_TTL).await
}

/// A client that does not follow redirects (the sign-in answer is one).
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Spends a sign-in address: the `Set-Cookie` it answered with, or the refusal.
pub async fn sign_in(login_url: &str) -> Result<String, (u16, String)> {
    let res = client().get(login_url).send().await.unwrap();
    let status = res.status().as_u16();
    match res.headers().get("set-cookie") {
        Some(c) if status == 303 => Ok(c.to_str().unwrap().to_string()),
        _ => Err((status, res.text().await.unwrap())),
    }
}

/// The nonce in a page's `<meta name="copse-nonce">`.
pub fn page_nonce(html: &str) -> String {
    let at = html
        .find(r#"<meta name="copse-nonce" content=""#)
        .unwrap_or_else(|| panic!("no nonce in the page: {html}"));
    let rest = &html[at + r#"<meta name="copse-nonce" content=""#.len()..];
    rest[..rest.find('"').unwrap()].to_string()
}

/// Builds the world with sign-in codes that live `ttl`; signs in unless `ttl` is zero.
pub async fn world_with(trusted: bool, runs: usize, ttl: std::time::Duration) -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    let copse = root.join("copse");
    let ws = root.join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&copse).unwrap();
    // A project Cursor config: a denying guard and an audit hook.
    script(
        &ws.join(".cursor").join(DENY_RM),
        r#"input=$(cat)
case "$input" in
  *"rm -rf"*) echo '{"permission":"deny","agent_message":"rm -rf is not allowed here","user_message":"blocked rm -rf"}' ;;
  *) echo '{"permission":"allow"}' ;;
esac"#,
    );
    script(
        &ws.join(".cursor/hooks/audit.sh"),
        "cat >/dev/null\necho audited >&2\necho '{}'",
    );
    let cursor_config = ws.join(".cursor/hooks.json");
    write(
        &cursor_config,
        r#"{
  "version": 1,
  "hooks": {
    "beforeShellExecution": [
      {"command": ".cursor/hooks/deny-rm.sh"},
      {"command": ".cursor/hooks/audit.sh", "failClosed": false, "timeout": 5}
    ]
  }
}
"#,
    );
    // A user Claude Code config.
    script(&home.join(".claude/log-tool.sh"), "cat >/dev/null\nexit 0");
    let claude_config = home.join(".claude/settings.json");
    write(
        &claude_config,
        &format!(
            r#"{{"hooks": {{"PreToolUse": [{{"matcher": "Bash", "hooks": [{{"type": "command", "command": "{}"}}]}}]}}}}"#,
            home.join(".claude/log-tool.sh").display()
        ),
    );
    let settings_path = Settings::path_in(&copse);
    let mut settings = Settings::default();
    settings.cursor_hooks_enabled = true;
    if trusted {
        settings.trust(&ws).unwrap();
    }
    settings.save(&settings_path).unwrap();
    if runs > 0 {
        seed(
            &copse.join("spine.db"),
            &cursor_config,
            &claude_config,
            runs,
        );
    }

    let (h, c, w) = (home.clone(), copse.clone(), ws.clone());
    let engine: copse_hooks_ui::EngineFactory = Arc::new(move || Ok(engine_for(&h, &c, &w)));
    let mut options = UiOptions::new(0, engine);
    options.code_ttl = ttl;
    let server = Server::bind(options).await.unwrap();
    let base = format!("http://{}", server.addr());
    let port = server.addr().port();
    let logins = server.logins();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.run_until(async move {
        let _ = stopped.await;
    }));
    let (cookie, nonce) = if ttl.is_zero() {
        (String::new(), String::new())
    } else {
        let set = sign_in(&logins.login_url().unwrap()).await.unwrap();
        let cookie = set.split(';').next().unwrap().to_string();
        let page = client()
            .get(format!("{base}/"))
            .header("Cookie", &cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(page.status().as_u16(), 200);
        let nonce = page_nonce(&page.text().await.unwrap());
        (cookie, nonce)
    };
    World {
        _dir: dir,
        copse,
        ws,
        cursor_config,
        claude_config,
        base,
        port,
        logins,
        cookie,
        nonce,
        stop: Some(stop),
    }
}

/// Records `n` runs over the last hour in three sessions, through the real spine.
pub fn seed(db: &Path, cursor: &Path, claude: &Path, n: usize) {
    let options = SpineOptions {
        retention: Retention {
            max_runs: None,
            max_age_days: None,
            max_bytes: None,
        },
        ..SpineOptions::default()
    };
    let spine = Spine::try_open(db, options).unwrap();
    let now = unix_ms(std::time::SystemTime::now());
    let claude_cmd = claude
        .parent()
        .unwrap()
        .join("log-tool.sh")
        .display()
        .to_string();
    for i in 0..n {
        let session = format!("session-{}", i % 3);
        let started_at = now - 3_600_000 + (i as u64 * 3_600_000 / n as u64);
        let (source, dialect, event, canonical, command) = match i % 4 {
            0 | 1 => (
                cursor,
                "cursor",
                "beforeShellExecution",
                "toolGate",
                ".cursor/hooks/deny-rm.sh",
            ),
            2 => (
                cursor,
                "cursor",
                "beforeShellExecution",
                "toolGate",
                ".cursor/hooks/audit.sh",
            ),
            _ => (
                claude,
                "claude",
                "PreToolUse",
                "toolGate",
                claude_cmd.as_str(),
            ),
        };
        let (outcome, decision, failure) = match i % 10 {
            3 => ("deny", Some("deny"), None),
            7 => ("failed", None, Some("timeout")),
            _ => ("allow", Some("allow"), None),
        };
        let stdout = if outcome == "deny" {
            br#"{"permission":"deny","agent_message":"rm -rf is not allowed here"}"#.to_vec()
        } else {
            br#"{"permission":"allow"}"#.to_vec()
        };
        spine.record({
            let mut record = RunRecord::default();
            record.run_id = format!("run-{i:05}");
            record.session_id = session;
            record.turn_id = format!("turn-{}", i / 12);
            record.kind = if i == 5 {
                RunKind::Dropped
            } else {
                RunKind::Run
            };
            record.dialect = dialect.into();
            record.event = event.into();
            record.canonical = canonical.into();
            record.command = command.into();
            record.source = source.to_string_lossy().into_owned();
            record.scope = if dialect == "claude" {
                "user"
            } else {
                "project"
            }
            .into();
            record.started_at = started_at;
            record.duration_ms = 3 + (i as u64 * 7) % 180;
            record.exit_code = if failure.is_some() { None } else { Some(0) };
            record.parse_ok = failure.is_none();
            record.failure = failure.map(Into::into);
            record.failure_message = failure.map(|_| "timed out after 5s".to_string());
            record.policy = Some("closed".into());
            record.sandbox = Some(if i == 9 { "blocked" } else { "enforced" }.into());
            record.outcome = outcome.into();
            record.decision = decision.map(Into::into);
            record.agent_message = (outcome == "deny").then(|| "rm -rf is not allowed here".into());
            record.stdin = format!(
                r#"{{"hook_event_name":"{event}","command":"rm -rf /tmp/x{i}","cwd":"/w"}}"#
            )
            .into_bytes();
            record.stdout = stdout;
            record.stderr = if i == 9 {
                b"touch: cannot touch '/etc/x': Permission denied\n".to_vec()
            } else {
                Vec::new()
            };
            record
        });
    }
    spine.flush();
}

/// Records `n` one-run sessions as a one-off `gate` names them (`local-…`), of the
/// deny guard in `source`.
pub fn one_off_runs(db: &Path, source: &Path, n: usize) {
    let spine = Spine::try_open(db, SpineOptions::default()).unwrap();
    let now = unix_ms(std::time::SystemTime::now());
    for i in 0..n {
        let mut record = RunRecord::default();
        record.run_id = format!("one-off-{i}");
        record.session_id = format!("local-{}-4242-{i}", now - i as u64);
        record.kind = RunKind::Run;
        record.dialect = "cursor".into();
        record.event = "beforeShellExecution".into();
        record.canonical = "toolGate".into();
        record.command = ".cursor/hooks/deny-rm.sh".into();
        record.source = source.to_string_lossy().into_owned();
        record.scope = "project".into();
        record.started_at = now - i as u64 * 1000;
        record.exit_code = Some(0);
        record.parse_ok = true;
        record.outcome = if i == 0 { "deny" } else { "allow" }.into();
        record.stdin = format!(r#"{{"command":"ls {i}"}}"#).into_bytes();
        spine.record(record);
    }
    spine.flush();
}
