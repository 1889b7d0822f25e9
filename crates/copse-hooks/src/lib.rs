//! # copse-hooks
//!
//! A hooks runtime for AI coding agents. An agent host embeds this engine to honour
//! the hooks its users registered — Cursor `hooks.json`, Claude Code `settings.json`
//! hooks and the native Copse format, through the same seams — exactly as the vendors
//! define them, safely and fast.
//!
//! ## Theory of operation
//!
//! ```text
//! host ── canonical event + session identity ──► Session
//!   Session ─► discovery (which configs may be read: enablement, trust; cached)
//!           ─► dialect adapter: applies? (wire event + matcher) → marshal stdin
//!           ─► runner: spawn (process group, caps, timeout, scrubbed env) → interpret
//!                      → failure policy (fail closed by default on gated events)
//!           ─► gate::merge (configured order; Allow < Ask < Deny) ─► Verdict
//! ```
//!
//! * [`event`] — canonical events, payloads, session identity.
//! * [`dialect`] — vendor formats; [`dialect::cursor`] is Cursor's.
//! * [`matcher`] — regex (linear first, bounded backtracking when needed) and globs.
//! * [`discovery`] — config locations and the parse cache.
//! * [`spawn`] — one child process, supervised.
//! * [`persistent`] — Copse `"persistent": true` hooks: one long-lived process per hook.
//! * [`runner`](crate::engine) and [`gate`] — one hook, then many outcomes to one verdict.
//! * [`outcome`] — decisions, failures, run records, verdicts.
//!
//! A hook can only tighten a gate: the verdict's `Allow` means "no hook objects",
//! never an approval.
//!
//! ## Example: a host gating a shell command
//!
//! ```
//! use copse_hooks::{Engine, EngineConfig, SessionIdentity, ToolCall, Decision};
//! use serde_json::json;
//!
//! let home = tempfile::tempdir()?;
//! let workspace = tempfile::tempdir()?;
//! std::fs::create_dir_all(home.path().join(".cursor"))?;
//! std::fs::write(
//!     home.path().join(".cursor/hooks.json"),
//!     r#"{"version": 1, "hooks": {"beforeShellExecution": [
//!         {"command": "echo '{\"permission\":\"deny\",\"agent_message\":\"no force pushes\"}'",
//!          "matcher": "push --force"}
//!     ]}}"#,
//! )?;
//!
//! let engine = Engine::new(
//!     EngineConfig::from_process(vec![workspace.path().to_path_buf()])
//!         .home(home.path())
//!         .enabled(true),
//! );
//! let session = engine.session(SessionIdentity::new("conversation-1"));
//!
//! let input = json!({"command": "git push --force origin main"});
//! let verdict = session.gate_tool(ToolCall::new("run_shell", input.as_object().unwrap().clone()));
//! assert_eq!(verdict.effective_decision(), Decision::Deny);
//! assert_eq!(verdict.agent_message.as_deref(), Some("no force pushes"));
//!
//! let input = json!({"command": "git status"});
//! let verdict = session.gate_tool(ToolCall::new("run_shell", input.as_object().unwrap().clone()));
//! assert_eq!(verdict.effective_decision(), Decision::Allow);
//! assert!(verdict.runs.is_empty(), "the matcher did not match, so nothing ran");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod agent;
pub mod cancel;
pub mod dialect;
pub mod discovery;
pub mod dispatcher;
pub mod dryrun;
pub mod engine;
pub mod env;
pub mod event;
pub mod fixture;
pub mod fsread;
pub mod gate;
pub mod jsonpos;
pub mod lint;
pub mod matcher;
pub mod notice;
pub mod outcome;
pub mod persistent;
pub mod private;
pub mod queue;
mod runner;
pub mod sandbox;
pub mod scripts;
pub mod session;
pub mod settings;
pub mod spawn;
pub mod spine;
pub mod vendor;

pub use dialect::{Dialect, Scope};
pub use engine::{Engine, EngineConfig, HookSummary, Listing};
pub use event::{
    CanonicalEvent, EventPayload, HostIdentity, McpServer, ModelIdentity, ModelParam,
    SessionIdentity, ToolCall,
};
pub use notice::{Notice, NoticeKind};
pub use outcome::{Decision, FailureKind, HookRun, Outcome, RunOutcome, Verdict};
pub use queue::{MessageOrigin, QueuedMessage};
pub use session::{DroppedRun, Fired, QueueListener, Session};

/// The README's embedding snippet, compiled as a doctest so it cannot rot.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
