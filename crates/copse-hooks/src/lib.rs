//! # copse-hooks
//!
//! A hooks runtime for AI coding agents. An agent host embeds this engine to honour
//! the hooks its users registered — Cursor `hooks.json`, Claude Code `settings.json`,
//! Gemini CLI and Codex hooks and the native Copse format, through the same seams —
//! exactly as the vendors define them, safely and fast.
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
//! ## The public face
//!
//! A host needs little: an [`EngineConfig`] (built with [`EngineConfig::builder`]), an
//! [`Engine`], one [`Session`] per conversation, and the events it fires
//! ([`ToolCall`], [`EventPayload`]); it gets back a [`Verdict`] made of [`HookRun`]s and
//! [`Notice`]s. The pipeline's steps (plan, schedule, execute, merge, record) are
//! private; their vocabulary is re-exported at the crate root. Eight subsystems are
//! public as namespaces, each with its own vocabulary:
//!
//! * [`dialect`] — each vendor's hook format ([`dialect::cursor`] is Cursor's).
//! * [`agent`] — the agent shim's side of each agent's hook protocol.
//! * [`spawn`] — one child process, supervised (process group, caps, timeout).
//! * [`persistent`] — Copse `"persistent": true` hooks: the line protocol a
//!   long-lived hook process speaks, and the status of the engine's processes.
//! * [`sandbox`] — the OS sandbox a hook runs in.
//! * [`spine`] — the audit store of every hook run.
//! * [`vendor`] — the vendors' published event lists, with their provenance.
//! * [`otel`] — the OTLP export of every gate (its configuration from the `OTEL_*`
//!   variables, the spans, the exporter's counters).
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
//!         {"command": "echo '{\"permission\":\"deny\",\"agent_message\":\"deploys go through CI\"}'",
//!          "matcher": "make deploy"}
//!     ]}}"#,
//! )?;
//!
//! let engine = Engine::new(
//!     EngineConfig::builder()
//!         .workspace_root(workspace.path())
//!         .home(home.path())
//!         .enabled(true)
//!         .build(),
//! );
//! let session = engine.session(SessionIdentity::new("conversation-1"));
//!
//! let verdict = session.gate_tool(ToolCall::new(
//!     "run_shell",
//!     json!({"command": "make deploy"}),
//! ));
//! assert_eq!(verdict.effective_decision(), Decision::Deny);
//! assert_eq!(verdict.agent_message.as_deref(), Some("deploys go through CI"));
//!
//! let verdict = session.gate_tool(ToolCall::new("run_shell", json!({"command": "git status"})));
//! assert_eq!(verdict.effective_decision(), Decision::Allow);
//! assert!(verdict.runs.is_empty(), "the matcher did not match, so nothing ran");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Every type a public item reaches must be nameable: re-exported below, or in a public
// namespace.
#![deny(unnameable_types)]

// The engine's pipeline steps are private; what a host needs is re-exported below.
// Eight subsystems stay public as namespaces, because each is a vocabulary of its own
// (several types, an error type, one submodule per vendor or platform) that a host or
// tool uses as a whole: `agent` (the shim side of each agent), `dialect` (each vendor's
// hook format), `persistent` (the line protocol of a long-lived hook process, which hook
// SDKs speak too), `sandbox`, `spawn` (one supervised child process), `spine` (the audit
// store), `vendor` (the vendors' published event lists) and `otel` (the OTLP export).
pub mod agent;
mod builder;
mod cancel;
mod diagnose;
pub mod dialect;
mod discovery;
mod dispatcher;
mod dropped;
mod dryrun;
mod engine;
mod env;
mod event;
mod explain;
// The synthetic session and payloads behind the golden wire fixtures and the dry-run
// tester; public only so the wire-fixture tests can marshal the same payloads.
#[doc(hidden)]
pub mod fixture;
mod fsread;
mod gate;
mod guard;
mod http;
mod jsonpos;
mod lint;
mod loop_limit;
mod managed;
mod matcher;
mod notice;
pub mod otel;
mod outcome;
mod overlay;
pub mod persistent;
mod pinned;
mod private;
mod queue;
mod run;
pub mod sandbox;
mod scope;
mod scripts;
mod selected;
mod session;
mod settings;
pub mod spawn;
pub mod spine;

pub use builder::EngineConfigBuilder;
// The vendors' published event lists live with the dialects; their public path stays.
pub use cancel::CancelToken;
pub use dialect::ConfigWarning;
pub use dialect::vendor;
pub use discovery::{
    ConfigLocation, VendorPaths, adapter, locations as config_locations,
    locations_with as config_locations_with,
};
pub use dropped::DroppedRun;
pub use dryrun::{DryRun, DryRunError, DryRunOptions};
pub use engine::{
    Engine, EngineConfig, HookSummary, Listing, ScriptPin, ScriptState, TrustSnapshot, TrustState,
};
pub use env::{DEPTH_VAR, TOKEN_VAR, depth_token, is_llm_secret, overlay_allowed};
pub use event::{
    CanonicalEvent, Compaction, EventPayload, FileEdit, HostIdentity, McpServer, ModelIdentity,
    ModelParam, SessionIdentity, TOOL_OUTPUT_CAP, ToolCall, ToolInput, ToolInputError, ToolResult,
    new_tool_use_id, tool,
};
pub use explain::{ConfigProblem, ExplainedHook, Explanation, HookStatus, SkipReason};
pub use fsread::{MAX_READ_FILE_CONTENT, ReadError, read_prefix};
pub use guard::{
    Guard, GuardHit, GuardMode, GuardVerdict, POLICY_FILE as GUARD_POLICY_FILE, PolicySource,
    PolicyState, RuleInfo, categories as guard_categories,
};
pub use lint::{Level, LintReport, Problem, expand_home, level_of};
pub use pinned::{
    PinState, PinnedCopies, PinnedCopyError, PinnedFile, PinnedKind, TrustStatus, unified_diff,
};
pub use private::{Insecure, insecurity};
pub use scripts::{scripts_of, unpinned_files};
// Compiled matchers appear in the dialects' parsed hooks (`dialect::HookSpec`).
pub use loop_limit::LoopLimit;
pub use managed::{ManagedPaths, ManagedPolicy, ManagedState, VendorTier};
pub use matcher::{GlobError, GlobMatcher, MatchResult, MatcherError, RegexMatcher};
pub use notice::{Notice, NoticeKind, shell_quote};
pub use outcome::{
    Decision, Failure, FailureKind, FailurePolicy, GuardRun, Halt, HookRun, Outcome, QueueRequest,
    RunOutcome, SandboxState, Verdict,
};
pub use queue::{DEFAULT_CONTINUATION_BUDGET, MessageOrigin, QueuedMessage};
pub use scope::{Dialect, Scope};
pub use session::{Fired, QueueListener, Session};
pub use settings::{
    RefusedConfigs, RetentionSettings, Settings, SettingsError, TrustedWorkspace, pin_of,
    project_config_candidates, settings_schema, settings_schema_text, sha256_hex,
};

/// The README's embedding snippet, compiled as a doctest so it cannot rot.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
