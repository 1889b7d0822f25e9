//! The routes: the page, its files, and the JSON API it reads.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::extract::{Path as UrlPath, Query, State as St};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json};
use copse_hooks::TrustSnapshot;
use copse_hooks::TrustState;
use copse_hooks::TrustStatus;
use copse_hooks::spine::{
    RunCursor, RunIdMatch, RunKind, RunQuery, RunRecord, Spine, SpineError, tool_call_summary,
};
use copse_hooks::{Engine, EngineConfig, HookSummary, Listing, PinState, PinnedCopies, Scope};
use copse_hooks::{Settings, pin_of, project_config_candidates, sha256_hex, shell_quote};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::EngineFactory;
use crate::assets;
use crate::security::{Auth, SessionKey};

/// The most runs one page may ask for.
const MAX_LIMIT: usize = 500;
/// The most runs a session timeline shows.
const TIMELINE_LIMIT: usize = 5_000;
/// The largest config file the source view shows.
const SOURCE_CAP: u64 = 1024 * 1024;
/// How often live updates look for new runs.
const POLL: Duration = Duration::from_millis(1000);

/// What the handlers share.
pub(crate) struct State {
    engine: EngineFactory,
    auth: Arc<Auth>,
    spine_path: OnceLock<PathBuf>,
    spine: Mutex<Option<Arc<Spine>>>,
}

impl State {
    pub(crate) fn new(engine: EngineFactory, auth: Arc<Auth>) -> State {
        State {
            engine,
            auth,
            spine_path: OnceLock::new(),
            spine: Mutex::new(None),
        }
    }

    fn engine(&self) -> Result<Engine, ApiError> {
        let engine = (self.engine)().map_err(ApiError::internal)?;
        let _ = self
            .spine_path
            .set(engine.config().copse_dir.join("spine.db"));
        Ok(engine)
    }

    fn spine_path(&self) -> Result<PathBuf, ApiError> {
        match self.spine_path.get() {
            Some(p) => Ok(p.clone()),
            None => {
                self.engine()?;
                self.spine_path
                    .get()
                    .cloned()
                    .ok_or_else(|| ApiError::internal("no audit store path"))
            }
        }
    }

    /// The audit store, opened read-only once it exists; `None` before anything was
    /// recorded.
    fn spine(&self) -> Result<Option<Arc<Spine>>, ApiError> {
        let mut slot = self
            .spine
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(s) = &*slot {
            return Ok(Some(Arc::clone(s)));
        }
        match Spine::open_read_only(self.spine_path()?) {
            Ok(s) => {
                let s = Arc::new(s);
                *slot = Some(Arc::clone(&s));
                Ok(Some(s))
            }
            Err(SpineError::Missing { .. }) => Ok(None),
            Err(e) => Err(ApiError::internal(e)),
        }
    }
}

/// An error answer: `{"error": message}` with a status.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn bad(message: impl std::fmt::Display) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.to_string(),
        }
    }
    fn internal(message: impl std::fmt::Display) -> ApiError {
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.to_string(),
        }
    }
    fn status(status: StatusCode, message: impl std::fmt::Display) -> ApiError {
        ApiError {
            status,
            message: message.to_string(),
        }
    }
}

impl From<SpineError> for ApiError {
    fn from(e: SpineError) -> ApiError {
        match e {
            SpineError::InvalidFilter(_) => ApiError::bad(e),
            e => ApiError::internal(e),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({"error": self.message}))).into_response()
    }
}

type Answer = Result<Json<Value>, ApiError>;
type Params = Query<HashMap<String, String>>;

/// Runs blocking work (SQLite, discovery, a hook) off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(ApiError::internal)?
}

pub(crate) fn router(state: Arc<State>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/assets/{name}", get(asset))
        .route("/api/nonce", get(nonce))
        .route("/api/overview", get(overview))
        .route("/api/sources", get(sources))
        .route("/api/source", get(source_file))
        .route("/api/filters", get(filters))
        .route("/api/runs", get(runs))
        .route("/api/runs/{id}", get(run_detail))
        .route("/api/sessions", get(sessions))
        .route("/api/sessions/{id}", get(session_timeline))
        .route("/api/stats", get(stats))
        .route("/api/events", get(events))
        .route("/api/tester/payload", get(tester_payload))
        .route("/api/tester/run", post(tester_run))
        .route("/api/explain", post(explain))
        .route("/api/trust/preview", get(trust_preview))
        .route("/api/trust/diff", get(trust_diff))
        .route("/api/trust", post(trust))
        .route("/api/untrust", post(untrust))
        .fallback(|| async { ApiError::status(StatusCode::NOT_FOUND, "no such page") })
        .with_state(state)
}

/// The page, with a nonce of its own for its state-changing requests.
async fn index(St(state): St<Arc<State>>, Extension(session): Extension<SessionKey>) -> Response {
    match state.auth.mint_nonce(&session) {
        Ok(nonce) => assets::index(&nonce),
        Err(e) => ApiError::internal(format!("cannot make the page's nonce: {e}")).into_response(),
    }
}

/// A nonce for a page that lost its own (as the page's `<meta>` carries).
async fn nonce(St(state): St<Arc<State>>, Extension(session): Extension<SessionKey>) -> Answer {
    let nonce = state
        .auth
        .mint_nonce(&session)
        .map_err(|e| ApiError::internal(format!("cannot make a nonce: {e}")))?;
    Ok(Json(json!({"nonce": nonce, "header": crate::NONCE_HEADER})))
}

async fn asset(UrlPath(name): UrlPath<String>) -> Response {
    assets::asset(&name)
}

fn now_ms() -> u64 {
    copse_hooks::spine::unix_ms(SystemTime::now())
}

/// `15m`, `2h`, `7d`, `30s` → milliseconds.
fn parse_age(s: &str) -> Option<u64> {
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit())?);
    let n: u64 = num.parse().ok()?;
    let scale = match unit {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return None,
    };
    n.checked_mul(scale)
}

/// A time bound: unix ms, or an age before now (`2h`).
fn parse_time(name: &str, s: &str) -> Result<u64, ApiError> {
    if let Ok(ms) = s.parse::<u64>() {
        return Ok(ms);
    }
    parse_age(s)
        .map(|age| now_ms().saturating_sub(age))
        .ok_or_else(|| {
            ApiError::bad(format!(
                "`{name}` must be unix milliseconds or an age like 15m, 2h, 7d (got `{s}`)"
            ))
        })
}

/// `window=`: an age (`24h`) or `all`; the default is 24 hours.
fn parse_window(p: &HashMap<String, String>) -> Result<(u64, u64), ApiError> {
    let now = now_ms();
    match p.get("window").map(String::as_str) {
        None | Some("") => Ok((now.saturating_sub(86_400_000), now + 1)),
        Some("all") => Ok((0, now + 1)),
        Some(w) => parse_age(w)
            .filter(|&a| a > 0)
            .map(|age| (now.saturating_sub(age), now + 1))
            .ok_or_else(|| {
                ApiError::bad(format!(
                    "`window` must be an age like 15m, 24h, 7d, or `all` (got `{w}`)"
                ))
            }),
    }
}

fn parse_limit(p: &HashMap<String, String>, default: usize) -> Result<usize, ApiError> {
    match p.get("limit") {
        None => Ok(default),
        Some(l) => match l.parse::<usize>() {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
            _ => Err(ApiError::bad(format!(
                "`limit` must be a whole number from 1 to {MAX_LIMIT} (got `{l}`)"
            ))),
        },
    }
}

fn nonempty(p: &HashMap<String, String>, key: &str) -> Option<String> {
    p.get(key).filter(|v| !v.is_empty()).cloned()
}

/// The agents the dialects stand for: the store records the dialect, and each
/// dialect is one agent's hook format.
fn dialect_of_agent(agent: &str) -> Option<&'static str> {
    match agent {
        "cursor" => Some("cursor"),
        "claude" | "claude-code" | "claude_code" => Some("claude"),
        "copse" => Some("copse"),
        "gemini" | "gemini-cli" => Some("gemini"),
        "codex" => Some("codex"),
        _ => None,
    }
}

fn run_query(p: &HashMap<String, String>) -> Result<RunQuery, ApiError> {
    const KNOWN: [&str; 14] = [
        "event", "outcome", "decision", "dialect", "agent", "failure", "session", "source",
        "command", "kind", "since", "until", "after", "limit",
    ];
    if let Some(k) = p.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(ApiError::bad(format!(
            "unknown parameter `{k}` (known: {})",
            KNOWN.join(", ")
        )));
    }
    let mut dialect = nonempty(p, "dialect");
    if let Some(agent) = nonempty(p, "agent") {
        let d = dialect_of_agent(&agent).ok_or_else(|| {
            ApiError::bad(format!(
                "unknown agent `{agent}` (expected cursor, claude-code, copse, gemini or codex)"
            ))
        })?;
        if dialect.as_deref().is_some_and(|x| x != d) {
            return Err(ApiError::bad("`agent` and `dialect` disagree"));
        }
        dialect = Some(d.to_string());
    }
    let kind = match nonempty(p, "kind") {
        None => None,
        Some(k) => Some(RunKind::parse(&k).ok_or_else(|| {
            ApiError::bad(format!(
                "unknown kind `{k}` (expected run, dropped or suppressed)"
            ))
        })?),
    };
    let after = match nonempty(p, "after") {
        None => None,
        Some(a) => {
            let parsed = a
                .split_once(':')
                .and_then(|(t, s)| Some((t.parse::<u64>().ok()?, s.parse::<i64>().ok()?)));
            let (started_at, seq) = parsed.ok_or_else(|| {
                ApiError::bad(format!(
                    "`after` must be the `next` cursor of a previous page (got `{a}`)"
                ))
            })?;
            Some(RunCursor { started_at, seq })
        }
    };
    Ok(RunQuery {
        event: nonempty(p, "event"),
        outcome: nonempty(p, "outcome").or_else(|| nonempty(p, "decision")),
        dialect,
        failure: nonempty(p, "failure"),
        session_id: nonempty(p, "session"),
        source: nonempty(p, "source"),
        command: nonempty(p, "command"),
        kind,
        since: nonempty(p, "since")
            .map(|s| parse_time("since", &s))
            .transpose()?,
        until: nonempty(p, "until")
            .map(|s| parse_time("until", &s))
            .transpose()?,
        after,
        limit: Some(parse_limit(p, 50)?),
    })
}

fn cursor_text(c: &RunCursor) -> String {
    format!("{}:{}", c.started_at, c.seq)
}

async fn overview(St(state): St<Arc<State>>) -> Answer {
    blocking(move || {
        let engine = state.engine()?;
        let spine = state.spine()?;
        let latest = match &spine {
            Some(s) => s.latest_seq()?,
            None => 0,
        };
        let sandbox = engine.sandbox_status().map(|s| {
            json!({
                "enforced": s.enforcement.is_enforced(),
                "enforcement": s.enforcement.to_string(),
                "mechanism": s.mechanism,
            })
        });
        Ok(Json(json!({
            "version": env!("CARGO_PKG_VERSION"),
            "workspaces": engine.workspace_roots().iter().map(|r| r.display().to_string()).collect::<Vec<_>>(),
            "hooks_enabled": engine.config().hooks_enabled,
            "copse_dir": engine.config().copse_dir.display().to_string(),
            "spine": {
                "path": state.spine_path()?.display().to_string(),
                "exists": spine.is_some(),
                "latest_seq": latest,
            },
            "sandbox": sandbox,
        })))
    })
    .await
}

fn hook_json(h: &HookSummary) -> Value {
    json!({
        "dialect": h.dialect.as_str(),
        "event": h.event,
        "canonical_event": h.canonical.map(|c| c.name()),
        "matcher": h.matcher,
        "matcher_error": h.matcher_error,
        "command": h.command,
        "source": h.source.display().to_string(),
        "scope": h.scope.as_str(),
        "entry": h.entry,
        "supported": h.supported,
        "trusted": h.trusted,
        "trust": h.trust.as_str(),
        "enabled": h.enabled,
        "active": h.active,
        "sandboxed": h.sandboxed,
        "fail_closed": h.fail_closed,
        "policy": if h.fail_closed { "closed" } else { "open" },
        "timeout_ms": h.timeout_ms,
        "last_error": h.last_error,
    })
}

/// What changed in each workspace's project configs since it was trusted.
fn trust_changes(engine: &Engine) -> Vec<Value> {
    let settings = Settings::load(&Settings::path_in(&engine.config().copse_dir)).ok();
    engine
        .workspace_roots()
        .iter()
        .map(|root| workspace_trust(settings.as_ref(), root))
        .collect()
}

/// One workspace's trust, judged on its own pins only (another workspace's edit
/// says nothing about it): whether it is trusted and pinned, each project config
/// and pinned script with what changed since it was pinned, and `changed`, the
/// files that differ now.
fn workspace_trust(settings: Option<&Settings>, root: &Path) -> Value {
    let entry = settings.and_then(|s| {
        s.trusted_workspaces
            .iter()
            .find(|t| std::fs::canonicalize(t.path()).ok().as_deref() == Some(root))
    });
    let change_of =
        |pinned: &Option<Option<String>>, current: &Option<String>| match (pinned, current) {
            (None, _) => "not pinned",
            (Some(None), None) => "absent",
            (Some(None), Some(_)) => "added since trusted",
            (Some(Some(_)), None) => "removed since trusted",
            (Some(Some(a)), Some(b)) if a == b => "unchanged",
            (Some(Some(_)), Some(_)) => "changed since trusted",
        };
    let configs: Vec<Value> = project_config_candidates(root)
        .into_iter()
        .map(|path| {
            let current = pin_of(&path).ok().flatten();
            let pinned = entry
                .and_then(|e| e.pins())
                .map(|pins| pins.get(&path).cloned().flatten());
            json!({
                "path": path.display().to_string(),
                "exists": current.is_some(),
                "sha256": current,
                "pinned_sha256": pinned.clone().flatten(),
                "change": change_of(&pinned, &current),
            })
        })
        .filter(|c| c["exists"] == true || c["pinned_sha256"].is_string())
        .collect();
    let scripts: Vec<Value> = entry
        .and_then(|e| e.script_pins())
        .into_iter()
        .flatten()
        .map(|(path, pinned)| {
            let current = pin_of(path).ok().flatten();
            json!({
                "path": path.display().to_string(),
                "exists": current.is_some(),
                "sha256": current,
                "pinned_sha256": pinned,
                "change": change_of(&Some(pinned.clone()), &current),
            })
        })
        .collect();
    let changed: Vec<Value> = configs
        .iter()
        .chain(&scripts)
        .filter(|c| {
            c["change"]
                .as_str()
                .is_some_and(|ch| ch.ends_with("since trusted"))
        })
        .map(|c| json!({"path": c["path"], "change": c["change"]}))
        .collect();
    json!({
        "root": root.display().to_string(),
        "trusted": entry.is_some(),
        "pinned": entry.is_some_and(|e| e.pins().is_some()),
        "configs": configs,
        "scripts": scripts,
        "changed": changed,
    })
}

async fn sources(St(state): St<Arc<State>>, Query(p): Params) -> Answer {
    let (since, until) = parse_window(&p)?;
    blocking(move || {
        let engine = state.engine()?;
        let spine = state.spine()?;
        let listing = engine.list_with(spine.as_deref());
        let stats = match &spine {
            Some(s) => Some(s.window_stats(since, until, 1)?),
            None => None,
        };
        let by_hook: HashMap<(&str, &str, &str), &copse_hooks::spine::HookStats> = stats
            .iter()
            .flat_map(|s| s.hooks.iter())
            .map(|h| ((h.source.as_str(), h.event.as_str(), h.command.as_str()), h))
            .collect();
        let hooks: Vec<Value> = listing
            .hooks
            .iter()
            .map(|h| {
                let mut v = hook_json(h);
                let source = h.source.to_string_lossy();
                let s = by_hook.get(&(source.as_ref(), h.event.as_str(), h.command.as_str()));
                v["stats"] = match s {
                    Some(s) => json!({
                        "runs": s.runs,
                        "failures": s.failures,
                        "denials": s.denials,
                        "failure_rate": s.failures as f64 / s.runs.max(1) as f64,
                        "p50_ms": s.p50_ms,
                        "p95_ms": s.p95_ms,
                        "max_ms": s.max_ms,
                        "last_failure": s.last_failure,
                    }),
                    None => json!({"runs": 0, "failures": 0, "denials": 0, "failure_rate": 0.0,
                        "p50_ms": null, "p95_ms": null, "max_ms": null, "last_failure": null}),
                };
                v
            })
            .collect();
        Ok(Json(json!({
            "window": {"since": since, "until": until},
            "hooks_enabled": engine.config().hooks_enabled,
            "hooks": hooks,
            "warnings": warnings_json(&listing),
            "workspaces": trust_changes(&engine),
        })))
    })
    .await
}

fn warnings_json(listing: &Listing) -> Vec<Value> {
    listing
        .warnings
        .iter()
        .map(|w| {
            json!({
                "source": w.source.display().to_string(),
                "scope": w.scope.as_str(),
                "event": w.event,
                "message": w.message,
            })
        })
        .collect()
}

/// Refuses (404) a path that is not a config discovery lists (a hook's or a warning's
/// source), compared as given: the page only ever sends the paths it was listed.
fn known_source(listing: &Listing, path: &Path) -> Result<(), ApiError> {
    let known = listing
        .hooks
        .iter()
        .map(|h| &h.source)
        .chain(listing.warnings.iter().map(|w| &w.source))
        .any(|s| s == path);
    if known {
        Ok(())
    } else {
        Err(ApiError::status(
            StatusCode::NOT_FOUND,
            format!("{} is not a hook config discovery knows", path.display()),
        ))
    }
}

/// A config file the discovery knows (only those are shown), read without following
/// a symbolic link anywhere below the root it belongs to: a project can point its
/// `.claude/settings.json` at `~/.ssh/id_rsa`, and discovery lists it (as a config
/// that does not parse), but the page must not show what the link leads to.
async fn source_file(St(state): St<Arc<State>>, Query(p): Params) -> Answer {
    let Some(path) = nonempty(&p, "path") else {
        return Err(ApiError::bad("`path` is required"));
    };
    blocking(move || {
        let engine = state.engine()?;
        let file = Path::new(&path);
        known_source(&engine.list(), file)?;
        // The deepest workspace root or home that holds the file; else its directory.
        let root = engine
            .workspace_roots()
            .iter()
            .chain(std::iter::once(&engine.config().home))
            .filter(|r| file.starts_with(r) && file != r.as_path())
            .max_by_key(|r| r.components().count())
            .cloned()
            .or_else(|| file.parent().map(Path::to_path_buf))
            .ok_or_else(|| ApiError::bad(format!("{path} names no file")))?;
        let bytes = read_below(&root, file)?;
        Ok(Json(json!({
            "path": path,
            "text": String::from_utf8_lossy(&bytes),
        })))
    })
    .await
}

/// Reads `file`, opening each component below `root` with `O_NOFOLLOW` (one `openat`
/// per component, so a link swapped in between a check and the open is refused too),
/// the file itself non-blocking (a FIFO does not hang the request); then it must be
/// a regular file of at most [`SOURCE_CAP`] bytes.
fn read_below(root: &Path, file: &Path) -> Result<Vec<u8>, ApiError> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags, fstat, openat, statat};
    use std::io::Read as _;
    use std::path::Component;

    let shown = file.display();
    let rel = file
        .strip_prefix(root)
        .map_err(|_| ApiError::bad(format!("{shown} is not below {}", root.display())))?;
    let parts: Vec<&std::ffi::OsStr> = rel
        .components()
        .map(|c| match c {
            Component::Normal(n) => Ok(n),
            _ => Err(ApiError::bad(format!(
                "{shown}: the path must not contain `.` or `..`"
            ))),
        })
        .collect::<Result<_, _>>()?;
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = openat(rustix::fs::CWD, root, dir_flags, Mode::empty())
        .map_err(|e| ApiError::status(StatusCode::NOT_FOUND, format!("{}: {e}", root.display())))?;
    let mut walked = PathBuf::new();
    for (i, part) in parts.iter().enumerate() {
        walked.push(part);
        let last = i + 1 == parts.len();
        let flags = if last {
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC
        } else {
            dir_flags | OFlags::NOFOLLOW
        };
        match openat(&dir, *part, flags, Mode::empty()) {
            Ok(fd) => dir = fd,
            Err(e) => {
                let is_link = statat(&dir, *part, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink);
                return Err(if is_link {
                    ApiError::status(
                        StatusCode::FORBIDDEN,
                        format!(
                            "{shown}: refused, {} is a symbolic link (the page shows a config \
                             only when no part of its path below {} is a link)",
                            walked.display(),
                            root.display()
                        ),
                    )
                } else {
                    ApiError::status(StatusCode::NOT_FOUND, format!("{shown}: {e}"))
                });
            }
        }
    }
    let st = fstat(&dir).map_err(|e| ApiError::internal(format!("{shown}: {e}")))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(ApiError::bad(format!("{shown} is not a regular file")));
    }
    // A second name of a file elsewhere (`ln ~/.ssh/id_rsa .claude/settings.json`)
    // is a link too, only a hard one.
    if st.st_nlink > 1 {
        return Err(ApiError::status(
            StatusCode::FORBIDDEN,
            format!(
                "{shown}: refused, it is a hard link ({} names for one file; the page shows \
                 a config only when it is the file's only name)",
                st.st_nlink
            ),
        ));
    }
    let len = u64::try_from(st.st_size).unwrap_or(0);
    if len > SOURCE_CAP {
        return Err(ApiError::bad(format!(
            "{shown} is {len} bytes, more than the {SOURCE_CAP} the page shows"
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::from(dir)
        .take(SOURCE_CAP)
        .read_to_end(&mut bytes)
        .map_err(|e| ApiError::internal(format!("{shown}: {e}")))?;
    Ok(bytes)
}

async fn filters(St(state): St<Arc<State>>) -> Answer {
    blocking(move || {
        let values = match state.spine()? {
            Some(s) => serde_json::to_value(s.filter_values()?).map_err(ApiError::internal)?,
            None => json!({"dialects": [], "events": [], "canonical": [], "failures": []}),
        };
        Ok(Json(values))
    })
    .await
}

async fn runs(St(state): St<Arc<State>>, Query(p): Params) -> Answer {
    let q = run_query(&p)?;
    blocking(move || {
        let Some(spine) = state.spine()? else {
            return Ok(Json(json!({"runs": [], "next": null, "latest_seq": 0})));
        };
        let latest = spine.latest_seq()?;
        let page = spine.page(&q)?;
        Ok(Json(json!({
            "runs": page.runs,
            "next": page.next.as_ref().map(cursor_text),
            "latest_seq": latest,
        })))
    })
    .await
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn as_json(bytes: &[u8]) -> Value {
    serde_json::from_slice::<Value>(bytes).unwrap_or(Value::Null)
}

fn record_json(r: &RunRecord) -> Value {
    json!({
        // What the agent tried, as the run lists show it.
        "tool_call": tool_call_summary(&r.event, &r.stdin),
        "run_id": r.run_id,
        "kind": r.kind.as_str(),
        "session_id": r.session_id,
        "turn_id": r.turn_id,
        "dialect": r.dialect,
        "event": r.event,
        "canonical_event": r.canonical,
        "command": r.command,
        "source": r.source,
        "scope": r.scope,
        "started_at": r.started_at,
        "duration_ms": r.duration_ms,
        "exit_code": r.exit_code,
        "parse_ok": r.parse_ok,
        "failure": r.failure,
        "failure_message": r.failure_message,
        "policy": r.policy,
        "sandbox": r.sandbox,
        "sandbox_blocked": r.sandbox.as_deref() == Some("blocked"),
        "outcome": r.outcome,
        "decision": r.decision,
        "agent_message": r.agent_message,
        "user_message": r.user_message,
        "halt_reason": r.halt_reason,
        "inject_context": r.inject_context,
        "updated_input": r.updated_input.as_deref().and_then(|u| serde_json::from_str::<Value>(u).ok()),
        "queued_message": r.queued_message,
        "session_env": r.session_env,
        "outcome_truncated": r.outcome_truncated,
        "stdin": text(&r.stdin),
        "stdout": text(&r.stdout),
        "stderr": text(&r.stderr),
        "stdin_json": as_json(&r.stdin),
        "stdout_json": as_json(&r.stdout),
        "stderr_json": as_json(&r.stderr),
        "stdin_truncated": r.stdin_truncated,
        "stdout_truncated": r.stdout_truncated,
        "stderr_truncated": r.stderr_truncated,
    })
}

async fn run_detail(St(state): St<Arc<State>>, UrlPath(id): UrlPath<String>) -> Answer {
    blocking(move || {
        let Some(spine) = state.spine()? else {
            return Err(ApiError::status(
                StatusCode::NOT_FOUND,
                format!("no run {id}: nothing is recorded yet"),
            ));
        };
        if let Some(r) = spine.get(&id)? {
            return Ok(Json(record_json(&r)));
        }
        // A short id (as `log` prints it) or a unique prefix, as `show` takes it.
        match spine.resolve(&id)? {
            RunIdMatch::One(full) => match spine.get(&full)? {
                Some(r) => Ok(Json(record_json(&r))),
                None => Err(ApiError::status(
                    StatusCode::NOT_FOUND,
                    format!("no run {id}"),
                )),
            },
            RunIdMatch::Ambiguous(ids) => Err(ApiError::bad(format!(
                "run id {id} is ambiguous: it could be {}",
                ids.join(", ")
            ))),
            _ => Err(ApiError::status(
                StatusCode::NOT_FOUND,
                format!("no run {id}"),
            )),
        }
    })
    .await
}

async fn sessions(St(state): St<Arc<State>>, Query(p): Params) -> Answer {
    let before = nonempty(&p, "before")
        .map(|b| parse_time("before", &b))
        .transpose()?;
    let limit = parse_limit(&p, 20)?;
    blocking(move || {
        let Some(spine) = state.spine()? else {
            return Ok(Json(json!({"sessions": []})));
        };
        Ok(Json(json!({"sessions": spine.sessions(before, limit)?})))
    })
    .await
}

async fn session_timeline(St(state): St<Arc<State>>, UrlPath(id): UrlPath<String>) -> Answer {
    blocking(move || {
        let Some(spine) = state.spine()? else {
            return Err(ApiError::status(
                StatusCode::NOT_FOUND,
                "nothing is recorded yet",
            ));
        };
        let runs = spine.session_runs(&id, TIMELINE_LIMIT)?;
        if runs.is_empty() {
            return Err(ApiError::status(
                StatusCode::NOT_FOUND,
                format!("no session {id}"),
            ));
        }
        Ok(Json(json!({
            "session_id": id,
            "truncated": runs.len() == TIMELINE_LIMIT,
            "runs": runs,
        })))
    })
    .await
}

async fn stats(St(state): St<Arc<State>>, Query(p): Params) -> Answer {
    let (since, until) = parse_window(&p)?;
    let buckets = match p.get("buckets") {
        None => 48,
        Some(b) => match b.parse::<usize>() {
            Ok(n) if (1..=500).contains(&n) => n,
            _ => {
                return Err(ApiError::bad(format!(
                    "`buckets` must be a whole number from 1 to 500 (got `{b}`)"
                )));
            }
        },
    };
    blocking(move || {
        let Some(spine) = state.spine()? else {
            return Ok(Json(
                json!({"since": since, "until": until, "runs": 0, "hooks": [], "timeline": [],
                "latency_buckets": copse_hooks::spine::LATENCY_BUCKETS}),
            ));
        };
        // An `all` window starts at the oldest run, not at 1970.
        let since = if since == 0 {
            spine.oldest_started()?.unwrap_or(since)
        } else {
            since
        };
        let mut v = serde_json::to_value(spine.window_stats(since, until, buckets)?)
            .map_err(ApiError::internal)?;
        v["latency_buckets"] = json!(copse_hooks::spine::LATENCY_BUCKETS);
        Ok(Json(v))
    })
    .await
}

/// Server-sent events: `runs` with the newest row number whenever it grows.
async fn events(
    St(state): St<Arc<State>>,
) -> Sse<impl futures_util::Stream<Item = Result<Event, Infallible>>> {
    let stream = futures_util::stream::unfold((state, -1i64), |(state, last)| async move {
        loop {
            let s = Arc::clone(&state);
            let seq = blocking(move || match s.spine()? {
                Some(sp) => Ok(sp.latest_seq()?),
                None => Ok(0),
            })
            .await
            .unwrap_or(last);
            if seq != last {
                let event = Event::default()
                    .event("runs")
                    .data(json!({"latest_seq": seq}).to_string());
                return Some((Ok(event), (state, seq)));
            }
            tokio::time::sleep(POLL).await;
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

fn entry_param(p: &HashMap<String, String>) -> Result<usize, ApiError> {
    match p.get("entry") {
        None => Ok(1),
        Some(e) => e
            .parse::<usize>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| ApiError::bad(format!("`entry` must be 1 or more (got `{e}`)"))),
    }
}

async fn tester_payload(St(state): St<Arc<State>>, Query(p): Params) -> Answer {
    let (Some(source), Some(event)) = (nonempty(&p, "source"), nonempty(&p, "event")) else {
        return Err(ApiError::bad("`source` and `event` are required"));
    };
    let entry = entry_param(&p)?;
    blocking(move || {
        let engine = state.engine()?;
        known_source(&engine.list(), Path::new(&source))?;
        let payload = engine
            .dry_run_payload(Path::new(&source), &event, entry)
            .map_err(ApiError::bad)?;
        Ok(Json(json!({"payload": payload})))
    })
    .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestRequest {
    source: String,
    event: String,
    #[serde(default = "one")]
    entry: usize,
    #[serde(default)]
    payload: Option<String>,
}

fn one() -> usize {
    1
}

/// The body of a POST, as JSON of type `T`, with a clear error otherwise.
fn body<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| ApiError::bad(format!("invalid request body: {e}")))
}

async fn tester_run(St(state): St<Arc<State>>, bytes: axum::body::Bytes) -> Answer {
    let req: TestRequest = body(&bytes)?;
    if req.entry == 0 {
        return Err(ApiError::bad("`entry` must be 1 or more"));
    }
    blocking(move || {
        let engine = state.engine()?;
        // The tester runs only what would be allowed to run: a config discovery knows
        // (by the path it lists, not where a link leads: another path would skip the
        // trust check below), and not a project hook of an untrusted (or changed since
        // trusted) workspace, as the engine refuses it.
        let source = PathBuf::from(&req.source);
        let listing = engine.list();
        known_source(&listing, &source)?;
        let declared = listing
            .hooks
            .iter()
            .find(|h| h.source == source && h.event == req.event && h.entry == req.entry);
        if let Some(h) = declared
            && h.trust != TrustState::Trusted
        {
            return Err(ApiError::status(
                StatusCode::FORBIDDEN,
                format!(
                    "{} is {}: trust the workspace before running its hooks",
                    source.display(),
                    if h.trust == TrustState::Changed {
                        "changed since it was trusted"
                    } else {
                        "not trusted"
                    }
                ),
            ));
        }
        let dry = engine
            .dry_run(&source, &req.event, req.entry, req.payload.as_deref())
            .map_err(ApiError::bad)?;
        let mut v = serde_json::to_value(&dry).map_err(ApiError::internal)?;
        v["stdout_json"] = as_json(dry.stdout.as_bytes());
        v["stdin_json"] = as_json(dry.stdin.as_bytes());
        // The verdict word, as the run list labels outcomes.
        let verdict = match dry.summary.split(' ').next().unwrap_or("") {
            "no" => "none",
            word => word,
        };
        v["verdict"] = json!(verdict);
        Ok(Json(v))
    })
    .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExplainRequest {
    /// The canonical tool id (`run_shell`, `read_file`, `mcp__server__tool`, …).
    tool: String,
    /// The tool input, a JSON object.
    input: Value,
}

/// `gate --explain` without the gate: every configured hook for a tool call with
/// whether the selection would run it or why not (hooks off, not trusted, changed
/// since trusted, matcher, `if`, another event…), from the engine's own selection.
/// Runs nothing.
async fn explain(St(state): St<Arc<State>>, bytes: axum::body::Bytes) -> Answer {
    let req: ExplainRequest = body(&bytes)?;
    let Value::Object(input) = req.input else {
        return Err(ApiError::bad("`input` must be a JSON object"));
    };
    if req.tool.trim().is_empty() {
        return Err(ApiError::bad("`tool` is required"));
    }
    let call = copse_hooks::ToolCall::new(req.tool, input);
    call.validate().map_err(ApiError::bad)?;
    blocking(move || {
        let engine = state.engine()?;
        let explanation = engine.explain_event(
            &copse_hooks::EventPayload::ToolGate(call),
            &copse_hooks::SessionIdentity::new("copse-hooks-ui-explain"),
        );
        let mut v = serde_json::to_value(&explanation).map_err(ApiError::internal)?;
        // Each skipped hook's reason as the sentence `gate --explain` prints.
        if let Some(hooks) = v.get_mut("hooks").and_then(Value::as_array_mut) {
            for (h, e) in hooks.iter_mut().zip(&explanation.hooks) {
                h["reason_message"] = json!(e.reason_message());
            }
        }
        Ok(Json(v))
    })
    .await
}

/// The workspace named by `dir`: one of this page's roots (default: the first).
fn workspace_root(engine: &Engine, dir: Option<&str>) -> Result<PathBuf, ApiError> {
    let roots = engine.workspace_roots();
    match dir {
        None => roots
            .first()
            .cloned()
            .ok_or_else(|| ApiError::bad("no workspace")),
        Some(d) => {
            let canon = std::fs::canonicalize(d).unwrap_or_else(|_| PathBuf::from(d));
            roots.iter().find(|r| **r == canon).cloned().ok_or_else(|| {
                ApiError::bad(format!(
                    "{d} is not a workspace of this page (started for {})",
                    roots
                        .iter()
                        .map(|r| r.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
        }
    }
}

/// The project configs of a root and their hashes now; the fingerprint the
/// confirmation must echo.
fn pins(root: &Path) -> BTreeMap<String, Option<String>> {
    project_config_candidates(root)
        .into_iter()
        .map(|p| {
            let hash = pin_of(&p).ok().flatten();
            (p.display().to_string(), hash)
        })
        .collect()
}

/// An engine over `root` alone, as if it were trusted: what trusting would allow.
fn root_engine(engine: &Engine, root: &Path) -> Engine {
    let mut config = EngineConfig::from_process(vec![root.to_path_buf()]);
    config.home = engine.config().home.clone();
    config.copse_dir = engine.config().copse_dir.clone();
    Engine::new(config.trust(root))
}

/// What trusting `root` pins now, exactly as `copse-hooks trust` pins it (its
/// project configs and the scripts their hooks run, each hashed from the one read
/// that is parsed), and the fingerprint of it a confirmation must echo: a config or
/// a script changed after the preview was shown is refused.
fn snapshot(engine: &Engine, root: &Path) -> (TrustSnapshot, String) {
    let snapshot = root_engine(engine, root).trust_snapshot(root);
    let named = |m: &BTreeMap<PathBuf, Option<String>>| -> BTreeMap<String, Option<String>> {
        m.iter()
            .map(|(p, h)| (p.display().to_string(), h.clone()))
            .collect()
    };
    let fingerprint = sha256_hex(
        json!({"configs": named(&snapshot.configs), "scripts": named(&snapshot.scripts)})
            .to_string()
            .as_bytes(),
    );
    (snapshot, fingerprint)
}

fn preview(engine: &Engine, root: &Path) -> Value {
    let listing = root_engine(engine, root).list();
    let project: Vec<&HookSummary> = listing
        .hooks
        .iter()
        .filter(|h| h.scope == Scope::Project)
        .collect();
    let pins = pins(root);
    let (snap, fingerprint) = snapshot(engine, root);
    // Only this workspace's own project hooks and pins decide its state: an edit in
    // another workspace must not mark this one changed.
    let trusted = engine
        .list()
        .hooks
        .iter()
        .filter(|h| h.scope == Scope::Project && owning_root(engine, &h.source) == Some(root))
        .all(|h| h.trust == TrustState::Trusted);
    let settings = Settings::load(&Settings::path_in(&engine.config().copse_dir)).ok();
    let state = workspace_trust(settings.as_ref(), root);
    let in_settings = state["trusted"] == true;
    let unchanged = state["changed"].as_array().is_none_or(Vec::is_empty);
    json!({
        "workspace": root.display().to_string(),
        "trusted": in_settings,
        "all_project_hooks_trusted": trusted && unchanged && in_settings,
        "status": if !in_settings {
            "not trusted"
        } else if trusted && unchanged {
            "trusted"
        } else {
            "changed since trusted"
        },
        "changed": state["changed"],
        "hooks": project.iter().map(|h| hook_json(h)).collect::<Vec<_>>(),
        "unsandboxed": project.iter().filter(|h| !h.sandboxed).map(|h| hook_json(h)).collect::<Vec<_>>(),
        "warnings": warnings_json(&listing).into_iter().filter(|w| w["scope"] == "project").collect::<Vec<_>>(),
        "configs": pins,
        "scripts": snap.scripts.iter().map(|(p, h)| (p.display().to_string(), h.clone())).collect::<BTreeMap<_, _>>(),
        "problems": snap.problems,
        "fingerprint": fingerprint,
        // The commands a person would paste to do the same in a terminal.
        "trust_command": format!("copse-hooks trust {}", shell_quote(root)),
        "diff_command": format!("copse-hooks trust --diff {}", shell_quote(root)),
    })
}

/// The workspace root a project config belongs to: the deepest root holding it.
fn owning_root<'a>(engine: &'a Engine, source: &Path) -> Option<&'a Path> {
    engine
        .workspace_roots()
        .iter()
        .filter(|r| source.starts_with(r))
        .max_by_key(|r| r.components().count())
        .map(PathBuf::as_path)
}

async fn trust_preview(St(state): St<Arc<State>>, Query(p): Params) -> Answer {
    blocking(move || {
        let engine = state.engine()?;
        let root = workspace_root(&engine, p.get("dir").map(String::as_str))?;
        Ok(Json(preview(&engine, &root)))
    })
    .await
}

/// `GET /api/trust/diff?root=DIR`: each file pinned for a workspace of this page
/// compared with the disk, a changed one with its unified diff against the copy kept
/// when it was trusted (the page's `copse-hooks trust --diff`). Changes nothing.
async fn trust_diff(St(state): St<Arc<State>>, Query(p): Params) -> Answer {
    blocking(move || {
        let engine = state.engine()?;
        let dir = p.get("root").or_else(|| p.get("dir")).map(String::as_str);
        let root = workspace_root(&engine, dir)?;
        let copse_dir = &engine.config().copse_dir;
        let settings = Settings::load(&Settings::path_in(copse_dir))
            .map_err(|e| ApiError::status(StatusCode::CONFLICT, e))?;
        let status = PinnedCopies::in_copse_dir(copse_dir).status(&settings, &root);
        let (trusted, pinned, files) = match status {
            TrustStatus::NotTrusted => (false, false, Vec::new()),
            TrustStatus::Unpinned => (true, false, Vec::new()),
            TrustStatus::Pinned(files) => (true, true, files),
        };
        // Candidates pinned as absent that are still absent are not files to speak of.
        let files: Vec<Value> = files
            .iter()
            .filter(|f| f.pinned_sha256.is_some() || f.state != PinState::Unchanged)
            .map(|f| {
                json!({
                    "path": f.path.display().to_string(),
                    "kind": f.kind.as_str(),
                    "state": f.state.as_str(),
                    "pinned_sha256": f.pinned_sha256,
                    "current_sha256": f.current_sha256,
                    "pinned_copy": f.pinned_copy,
                    "diff": f.diff,
                })
            })
            .collect();
        Ok(Json(json!({
            "workspace": root.display().to_string(),
            "trusted": trusted,
            "pinned": pinned,
            "changed": files.iter().any(|f| f["state"] != "unchanged"),
            "files": files,
            "trust_command": format!("copse-hooks trust {}", shell_quote(&root)),
            "diff_command": format!("copse-hooks trust --diff {}", shell_quote(&root)),
        })))
    })
    .await
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustRequest {
    #[serde(default)]
    dir: Option<String>,
    /// The preview's fingerprint: what the person confirmed.
    fingerprint: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UntrustRequest {
    #[serde(default)]
    dir: Option<String>,
    /// Must be `true`: the person confirmed.
    confirm: bool,
}

/// Changes the settings as `copse-hooks trust` does: under the settings lock across
/// read, change and write (a concurrent `trust` or `untrust` is never lost), and never
/// over a file that cannot be read or that another user could have written.
fn update_settings<R>(
    path: &Path,
    change: impl FnOnce(&mut Settings) -> R,
) -> Result<(Settings, R), ApiError> {
    Settings::update(path, |loaded| {
        let mut settings = loaded?;
        let result = change(&mut settings);
        Ok((Some(settings.clone()), (settings, result)))
    })
    .map(|(done, _notices)| done)
    .map_err(|e| {
        ApiError::status(
            StatusCode::CONFLICT,
            format!("{e}; fix it (or run `copse-hooks trust` once) before changing trust here"),
        )
    })
}

async fn trust(St(state): St<Arc<State>>, bytes: axum::body::Bytes) -> Answer {
    let req: TrustRequest = body(&bytes)?;
    blocking(move || {
        let engine = state.engine()?;
        let root = workspace_root(&engine, req.dir.as_deref())?;
        let (snap, now) = snapshot(&engine, &root);
        if now != req.fingerprint {
            return Err(ApiError::status(
                StatusCode::CONFLICT,
                "the workspace's hook configs or scripts changed since the preview you confirmed: review it again",
            ));
        }
        let path = Settings::path_in(&engine.config().copse_dir);
        // Pinned as `copse-hooks trust` pins: the configs and the scripts, so an
        // edited script stops running until it is trusted again.
        let pinned = snap.configs.clone();
        let scripts = snap.scripts.clone();
        let (settings, ()) = update_settings(&path, |s| {
            s.trust_pinned(&root, snap.configs, snap.scripts);
        })?;
        // Copies of the pinned bytes, as `copse-hooks trust` keeps them, so a later
        // diff (here or `trust --diff`) shows what changed; copies no pin needs go.
        let copies = PinnedCopies::in_copse_dir(&engine.config().copse_dir);
        let warnings: Vec<String> = copies
            .keep(pinned.iter().chain(scripts.iter()))
            .iter()
            .map(ToString::to_string)
            .collect();
        copies.prune(&settings);
        let engine = state.engine()?;
        Ok(Json(json!({
            "trusted": root.display().to_string(),
            "settings": path.display().to_string(),
            "pinned": pinned.iter().map(|(p, h)| json!({"config": p.display().to_string(), "sha256": h})).collect::<Vec<_>>(),
            "warnings": warnings,
            "preview": preview(&engine, &root),
        })))
    })
    .await
}

async fn untrust(St(state): St<Arc<State>>, bytes: axum::body::Bytes) -> Answer {
    let req: UntrustRequest = body(&bytes)?;
    if !req.confirm {
        return Err(ApiError::bad("`confirm` must be true"));
    }
    blocking(move || {
        let engine = state.engine()?;
        let root = workspace_root(&engine, req.dir.as_deref())?;
        let path = Settings::path_in(&engine.config().copse_dir);
        let (settings, removed) = update_settings(&path, |s| s.untrust(&root))?;
        PinnedCopies::in_copse_dir(&engine.config().copse_dir).prune(&settings);
        Ok(Json(json!({
            "untrusted": root.display().to_string(),
            "was_trusted": removed,
        })))
    })
    .await
}
