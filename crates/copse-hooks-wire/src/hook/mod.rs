//! For hook authors: typed payloads and responses for every dialect, the
//! persistent-hook protocol, and a [`run`]ner.
//!
//! | dialect | stdin | stdout |
//! |---|---|---|
//! | Copse (canonical names; may be persistent) | [`CopseRequest`] | [`CopseResponse`] |
//! | Claude Code | [`claude::ClaudeRequest`] | [`claude::ClaudeResponse`] |
//! | Cursor | [`cursor::CursorRequest`] | [`cursor::CursorResponse`] |
//! | Gemini CLI | [`gemini::GeminiRequest`] | [`gemini::GeminiResponse`] |
//! | Codex | [`codex::CodexRequest`] | [`codex::CodexResponse`] |
//!
//! The Copse payload is an enum per event ([`CopseEvent`]); the vendor payloads are
//! one struct per dialect whose event-specific fields are optional, and which keep
//! unknown fields in `extra`. A hook is a function from request to [`Outcome`]:
//!
//! ```no_run
//! use copse_hooks_wire::hook::{CopseEvent, CopseRequest, CopseResponse, Outcome, run};
//!
//! fn main() -> std::process::ExitCode {
//!     run(&["toolGate", "stop"], |req: CopseRequest| match &req.event {
//!         CopseEvent::ToolGate { tool_name, .. } if tool_name.starts_with("mcp__prod_") => {
//!             Outcome::Respond(CopseResponse::deny("Production tools are off limits."))
//!         }
//!         CopseEvent::Stop { .. } => Outcome::Respond(CopseResponse::queue("Summarise.")),
//!         _ => Outcome::Nothing,
//!     })
//! }
//! ```
//!
//! Registered as `"command": "my-hook"` it runs per call; as
//! `"command": "my-hook --persistent", "persistent": true` it runs once and serves
//! every event the engine sends it (see `docs/persistent-hooks.md`).

pub mod claude;
pub mod codex;
pub mod copilot;
pub mod copse;
pub mod cursor;
mod fields;
pub mod gemini;
pub mod protocol;
pub mod runner;

pub use copse::{CopseEvent, CopseRequest, CopseResponse, Decision, Envelope};
pub use runner::{Mode, Outcome, RunError, run};
