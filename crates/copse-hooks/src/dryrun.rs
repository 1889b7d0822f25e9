//! The dry-run tester: run one declared hook with a synthesised payload and show
//! exactly what happened. The hook really runs (with its own timeout, in the
//! sandbox); what the tester leaves alone is the engine's state: no audit record, no
//! session environment, no last-error state, no settings, no verdict applied.
//!
//! A project hook runs only when its config (and the scripts it runs) are trusted as
//! pinned, or when the caller explicitly trusts it for this one run
//! ([`DryRunOptions::trust`]). A hook trusted only that way always runs in the
//! sandbox, whatever its `"sandbox": false` says.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::dialect::{Context, Dialect, HookSpec, Scope};
use crate::discovery;
use crate::engine::Engine;
use crate::event::CanonicalEvent;
use crate::fixture;
use crate::outcome::{Decision, HookRun, RunOutcome};
use crate::run;

/// How a dry run may treat trust.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct DryRunOptions {
    /// Run a project hook whose workspace is not trusted (or changed since trusted),
    /// for this one run, always in the sandbox.
    pub trust: bool,
    /// Run the hook in the sandbox even when it is a trusted Copse hook with
    /// `"sandbox": false` (the JSON-RPC server's `hooks/test`: a client never gets an
    /// unsandboxed run).
    pub sandbox: bool,
}

/// Why a dry run could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DryRunError {
    /// The config file could not be read.
    #[error("failed to read {path}: {cause}")]
    Read {
        /// The config.
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
    /// The path is not a config file any dialect reads.
    #[error(
        "{path} is not a hook config copse-hooks knows (.cursor/hooks.json, .claude/settings.json, .claude/settings.local.json, .copse/hooks.json, $COPSE_DIR/hooks.json, .gemini/settings.json, a Gemini extension's hooks/hooks.json, .codex/hooks.json or .codex/config.toml)"
    )]
    UnknownConfig {
        /// The path.
        path: PathBuf,
    },
    /// No hook at that event and entry.
    #[error("{path} declares no hook for \"{event}\" at entry {entry} ({available})")]
    NoSuchHook {
        /// The config.
        path: PathBuf,
        /// The event asked for.
        event: String,
        /// The entry asked for.
        entry: usize,
        /// What the file does declare.
        available: String,
    },
    /// The hook's event is recognised but not wired: nothing would ever run it.
    #[error("\"{event}\" is recognised but not supported by copse-hooks: the hook would never run")]
    Unsupported {
        /// The event.
        event: String,
    },
    /// The given payload is not JSON.
    #[error("--payload is not valid JSON: {0}")]
    Payload(serde_json::Error),
    /// A project hook whose workspace is not trusted (or whose config or script
    /// changed since it was trusted).
    #[error(
        "{path} is a project config that is {state}: its hooks do not run here (trust the workspace with `copse-hooks trust`, or pass --trust to run this one hook once, sandboxed)"
    )]
    Untrusted {
        /// The config.
        path: PathBuf,
        /// `untrusted`, or `changed since trusted (<file>)`.
        state: String,
    },
    /// [`DryRunOptions::sandbox`] asked for the sandbox, and this engine has none (its
    /// host turned sandboxing off).
    #[error("this run must be sandboxed, and sandboxing is off for this engine")]
    NoSandbox,
}

/// What a dry run did.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct DryRun {
    /// The dialect.
    pub dialect: Dialect,
    /// The wire event.
    pub event: String,
    /// The canonical event it maps to.
    pub canonical_event: CanonicalEvent,
    /// The command.
    pub command: String,
    /// The exact stdin sent.
    pub stdin: String,
    /// What the hook printed on stdout.
    pub stdout: String,
    /// What the hook printed on stderr.
    pub stderr: String,
    /// The exit code (`None` when killed or never started).
    pub exit_code: Option<i32>,
    /// How long it ran.
    pub duration_ms: u64,
    /// Whether stdout parsed as a response.
    pub parse_ok: bool,
    /// The failure kind, if it failed.
    pub failure: Option<String>,
    /// `allow`, `ask — <msg>`, `deny — <msg>`, `no opinion`, or `failed — <error>`.
    pub summary: String,
    /// Whether it ran in the sandbox.
    pub sandboxed: bool,
    /// The timeout it ran with (its own), in milliseconds.
    pub timeout_ms: u64,
    /// A persistent hook: started, sent the one request over the protocol, stopped.
    pub persistent: bool,
}

/// The dialect and scope of a config path.
pub fn classify(engine: &Engine, path: &Path) -> Option<(Dialect, Scope, Option<PathBuf>)> {
    let name = path.file_name()?.to_str()?;
    let parent = path.parent()?;
    let dir = parent.file_name().and_then(|d| d.to_str()).unwrap_or("");
    let config = engine.config();
    let copse_dir = &config.copse_dir;
    let vendor = config.vendor_paths();
    let home = &config.home;
    let gemini_home = home.join(".gemini");
    // User-level Gemini and Codex files outside `~/.<agent>/<file>`.
    let user_level = |dialect| Some((dialect, Scope::User, None));
    if path == vendor.gemini_system_settings
        || (name == "hooks.json"
            && dir == "hooks"
            && parent.starts_with(gemini_home.join("extensions")))
    {
        return user_level(Dialect::Gemini);
    }
    if (matches!(name, "hooks.json" | "config.toml")
        && (parent == vendor.codex_home.as_path() || parent == vendor.codex_system_dir.as_path()))
        || (name == "hooks.json" && parent.starts_with(vendor.codex_home.join("plugins")))
    {
        return user_level(Dialect::Codex);
    }
    if name.ends_with(".json") {
        if parent == vendor.copilot_policy_dir.as_path() {
            return Some((Dialect::Copilot, Scope::Managed, None));
        }
        if parent == vendor.copilot_home.join("hooks").as_path() {
            return user_level(Dialect::Copilot);
        }
        let github = parent.parent();
        if dir == "hooks"
            && github
                .and_then(Path::file_name)
                .is_some_and(|g| g == ".github")
        {
            let root = github.and_then(Path::parent).map(Path::to_path_buf);
            return Some((Dialect::Copilot, Scope::Project, root));
        }
    }
    let dialect = match (dir, name) {
        (".cursor", "hooks.json") => Dialect::Cursor,
        (".claude", "settings.json" | "settings.local.json") => Dialect::Claude,
        (".copse", "hooks.json") => Dialect::Copse,
        (_, "hooks.json") if parent == copse_dir.as_path() => Dialect::Copse,
        (".gemini", "settings.json") => Dialect::Gemini,
        (".codex", "hooks.json" | "config.toml") => Dialect::Codex,
        _ => return None,
    };
    let user = parent == home.join(dir).as_path() || parent == copse_dir.as_path();
    if user {
        Some((dialect, Scope::User, None))
    } else {
        Some((
            dialect,
            Scope::Project,
            parent.parent().map(Path::to_path_buf),
        ))
    }
}

pub(crate) fn summary(run: &HookRun) -> String {
    let msg = |o: &crate::outcome::Outcome| {
        o.agent_message
            .clone()
            .or_else(|| o.user_message.clone())
            .or_else(|| o.halt.as_ref().map(|h| h.reason.clone()))
    };
    match run.result {
        RunOutcome::Failed => format!(
            "failed — {}",
            run.failure
                .as_ref()
                .map(|f| f.message.as_str())
                .unwrap_or("unknown error")
        ),
        RunOutcome::None => match &run.outcome.queue_message {
            Some(q) => format!("no opinion (queues a message: {})", q.text),
            None => "no opinion".to_string(),
        },
        RunOutcome::Allow => "allow".to_string(),
        RunOutcome::Ask | RunOutcome::Deny => {
            let word = if run.outcome.decision == Some(Decision::Ask) {
                "ask"
            } else {
                "deny"
            };
            match msg(&run.outcome) {
                Some(m) => format!("{word} — {m}"),
                None => word.to_string(),
            }
        }
    }
}

/// The fixture flavour for `event` in `dialect`'s wire vocabulary.
fn fixture_flavour(dialect: Dialect, event: &str) -> &'static str {
    match (dialect, fixture::flavour_for_wire_event(event)) {
        // Codex has no read tool: its PostToolUse hooks see shell calls.
        (Dialect::Codex, "read") => "shell",
        (_, f) => f,
    }
}

impl Engine {
    /// Runs hook number `entry` (1-based) of `event` in the config at `source`, with
    /// the fixture payload for that event or `payload` as its exact stdin.
    ///
    /// An untrusted project hook is refused ([`DryRunError::Untrusted`]); see
    /// [`Engine::dry_run_with`].
    pub fn dry_run(
        &self,
        source: &Path,
        event: &str,
        entry: usize,
        payload: Option<&str>,
    ) -> Result<DryRun, DryRunError> {
        self.dry_run_with(source, event, entry, payload, DryRunOptions::default())
    }

    /// [`Engine::dry_run`] with options (e.g. trusting an untrusted project hook for
    /// this one run, sandboxed).
    pub fn dry_run_with(
        &self,
        source: &Path,
        event: &str,
        entry: usize,
        payload: Option<&str>,
        options: DryRunOptions,
    ) -> Result<DryRun, DryRunError> {
        let located = self.locate(source, event, entry)?;
        let (dialect, root, canonical) = (located.dialect, located.root.clone(), located.canonical);
        let hook = located.hook();
        // Trust: the bytes just read are the bytes checked against the pins.
        let mut really_trusted = true;
        if located.scope == Scope::Project {
            let loaded = crate::discovery::LoadedConfig {
                location: crate::discovery::ConfigLocation {
                    path: located.source.clone(),
                    dialect,
                    scope: located.scope,
                    root: root
                        .as_deref()
                        .map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| r.to_path_buf())),
                },
                config: std::sync::Arc::new(crate::dialect::ParsedConfig::default()),
                exists: true,
                hash: Some(located.hash.clone()),
            };
            let state = match self.trust_state(&loaded) {
                crate::engine::TrustState::Trusted => self
                    .hook_scripts(hook)
                    .into_iter()
                    .find(|s| s.state == crate::engine::ScriptState::Changed)
                    .map(|s| format!("changed since trusted ({})", s.path.display())),
                crate::engine::TrustState::Changed => Some("changed since trusted".to_string()),
                crate::engine::TrustState::Untrusted => Some("untrusted".to_string()),
            };
            if let Some(state) = state {
                if !options.trust {
                    return Err(DryRunError::Untrusted {
                        path: located.source.clone(),
                        state,
                    });
                }
                really_trusted = false;
            }
        }
        let payload_override = match payload {
            Some(p) => {
                let v: Value = serde_json::from_str(p).map_err(DryRunError::Payload)?;
                Some(serde_json::to_vec(&v).unwrap_or_default())
            }
            None => None,
        };
        let adapter = discovery::adapter(dialect);
        let event_payload = fixture::payload(canonical, fixture_flavour(dialect, event));
        let session = fixture::session();
        let roots: Vec<PathBuf> = root
            .clone()
            .into_iter()
            .chain(self.workspace_roots().iter().cloned())
            .take(1)
            .collect();
        let mut limits = self.limits();
        limits.kill_grace = limits.kill_grace.min(Duration::from_secs(1));
        let http_policy = self.claude_http_policy();
        // A persistent hook is tested as it runs: started, sent the one request over
        // the protocol, then stopped (the pool is dropped with this call).
        let pool = crate::persistent::pool::Pool::new(limits.kill_grace);
        // A forced sandbox is a required one: where the kernel cannot enforce it the
        // run fails (kind `sandbox`) instead of running unsandboxed.
        let forced = match (options.sandbox, self.sandbox_config()) {
            (false, _) => None,
            (true, None) => return Err(DryRunError::NoSandbox),
            (true, Some(s)) => {
                let mut s = s.clone();
                s.require = true;
                Some(s)
            }
        };
        let mut input = self.run_input(
            &event_payload,
            Context {
                session: &session,
                workspace_roots: &roots,
            },
            None,
            Some(&http_policy),
        );
        input.limits = limits;
        input.sandbox = forced.as_ref().or(self.sandbox_config());
        input.persistent = Some(&pool);
        let mut hook_for_run = clone_for_dry_run(hook);
        // Only a trusted Copse hook may leave the sandbox.
        hook_for_run.sandbox = hook.sandbox || !really_trusted || options.sandbox;
        let run = run::execute(adapter, &hook_for_run, &input, payload_override);
        Ok(DryRun {
            dialect,
            event: hook.event.clone(),
            canonical_event: canonical,
            command: hook.command.clone(),
            stdin: String::from_utf8_lossy(&run.stdin).into_owned(),
            stdout: String::from_utf8_lossy(&run.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&run.stderr).into_owned(),
            exit_code: run.exit_code,
            duration_ms: u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
            parse_ok: run.parse_ok,
            failure: run.failure.as_ref().map(|f| f.kind.as_str().to_string()),
            summary: summary(&run),
            sandboxed: hook_for_run.sandbox && self.sandbox_config().is_some(),
            timeout_ms: u64::try_from(hook_for_run.timeout.as_millis()).unwrap_or(u64::MAX),
            persistent: hook_for_run.options.persistent.is_some(),
        })
    }

    /// The exact stdin [`Engine::dry_run`] would send hook number `entry` of `event` in
    /// the config at `source` (the golden fixture payload for its event, marshalled by
    /// its dialect), pretty-printed: a starting point to edit.
    pub fn dry_run_payload(
        &self,
        source: &Path,
        event: &str,
        entry: usize,
    ) -> Result<String, DryRunError> {
        let located = self.locate(source, event, entry)?;
        let hook = located.hook();
        let adapter = discovery::adapter(located.dialect);
        let event_payload =
            fixture::payload(located.canonical, fixture_flavour(located.dialect, event));
        let session = fixture::session();
        let roots: Vec<PathBuf> = located
            .root
            .clone()
            .into_iter()
            .chain(self.workspace_roots().iter().cloned())
            .take(1)
            .collect();
        let ctx = Context {
            session: &session,
            workspace_roots: &roots,
        };
        let value = adapter.marshal(hook, &event_payload, &ctx);
        Ok(serde_json::to_string_pretty(&value).unwrap_or_default())
    }

    fn locate(&self, source: &Path, event: &str, entry: usize) -> Result<Located, DryRunError> {
        let source = std::fs::canonicalize(source).map_err(|e| DryRunError::Read {
            path: source.to_path_buf(),
            cause: e,
        })?;
        let (dialect, scope, root) =
            classify(self, &source).ok_or_else(|| DryRunError::UnknownConfig {
                path: source.clone(),
            })?;
        let bytes =
            crate::fsread::read_regular(&source, crate::fsread::MAX_CONFIG_BYTES).map_err(|e| {
                DryRunError::Read {
                    path: source.clone(),
                    cause: match e {
                        crate::fsread::ReadError::Io(e) => e,
                        other => std::io::Error::other(other.to_string()),
                    },
                }
            })?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let adapter = discovery::adapter(dialect);
        let parsed = adapter.parse(&text, &source, scope, root.as_deref());
        let candidates: Vec<(usize, &HookSpec)> = parsed
            .hooks
            .iter()
            .enumerate()
            .filter(|(_, h)| h.event == event)
            .collect();
        let Some((index, hook)) = candidates.iter().find(|(_, h)| h.entry == entry).copied() else {
            let mut available: Vec<String> = parsed
                .hooks
                .iter()
                .map(|h| format!("{}[{}]", h.event, h.entry))
                .collect();
            available.dedup();
            return Err(DryRunError::NoSuchHook {
                path: source,
                event: event.to_string(),
                entry,
                available: if available.is_empty() {
                    "it declares no hooks".to_string()
                } else {
                    format!("it declares {}", available.join(", "))
                },
            });
        };
        let Some(canonical) = hook.canonical else {
            return Err(DryRunError::Unsupported {
                event: event.to_string(),
            });
        };
        Ok(Located {
            dialect,
            root,
            canonical,
            index,
            parsed,
            scope,
            hash: crate::settings::sha256_hex(&bytes),
            source: source.clone(),
        })
    }
}

/// A declared hook found by source, event and entry.
struct Located {
    dialect: Dialect,
    root: Option<PathBuf>,
    canonical: CanonicalEvent,
    index: usize,
    parsed: crate::dialect::ParsedConfig,
    scope: Scope,
    /// The SHA-256 of the config bytes parsed, checked against the trust pins.
    hash: String,
    source: PathBuf,
}

impl Located {
    fn hook(&self) -> &HookSpec {
        &self.parsed.hooks[self.index]
    }
}

/// A copy of a hook for one dry run (matchers are not needed: the user chose it).
fn clone_for_dry_run(hook: &HookSpec) -> HookSpec {
    HookSpec {
        dialect: hook.dialect,
        event: hook.event.clone(),
        canonical: hook.canonical,
        command: hook.command.clone(),
        matcher_source: hook.matcher_source.clone(),
        matcher: crate::dialect::HookMatcher::Always,
        glob: hook.glob.clone(),
        policy: hook.policy,
        timeout: hook.timeout,
        source: hook.source.clone(),
        scope: hook.scope,
        root: hook.root.clone(),
        entry: hook.entry,
        sandbox: hook.sandbox,
        run_async: hook.run_async,
        network: hook.network,
        loop_limit: hook.loop_limit,
        options: hook.options.clone(),
    }
}
