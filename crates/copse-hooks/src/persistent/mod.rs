//! Persistent hooks: one long-lived process per hook entry and sandbox policy instead
//! of one process per event (Copse dialect, `"persistent": true`).
//!
//! * [`protocol`] — the newline-delimited JSON spoken on the hook's stdin and stdout
//!   (public: hook SDKs speak it too).
//! * `process` — one running hook process: its stdout read by the waiting callers
//!   themselves (no hand-off between threads), its stderr thread, pipelined requests
//!   matched by id, stderr attribution, stop.
//! * `pool` — the engine's processes: one per (hook entry, sandbox policy), shared by
//!   every session; restart with backoff, `broken`, idle stop, changed scripts, shutdown.
//!   What a host sees of it is [`PersistentStatus`] (`Engine::persistent_status`).
//!
//! One event through a persistent hook is the run stage's persistent transport
//! (`run/transport/persistent.rs`): the reply comes back as the per-call hook's exit
//! code and stdout would, and is interpreted and settled like every other run.
//!
//! The protocol, lifecycle and failure handling are documented for hook authors in
//! `docs/persistent-hooks.md`.

// The process and the pool are the engine's machinery, private like the rest of the
// pipeline; the protocol is a vocabulary of its own.
pub(crate) mod pool;
pub(crate) mod process;
pub mod protocol;

pub use pool::PersistentStatus;
pub use protocol::{
    Answer, Hello, HelloLine, Line, PERSISTENT_ENV, PROTOCOL_VERSION, ProtocolError, Reply,
    Request, encode_request, parse_line,
};
