//! Persistent hooks: one long-lived process per hook entry and sandbox policy instead
//! of one process per event (Copse dialect, `"persistent": true`).
//!
//! * [`protocol`] — the newline-delimited JSON spoken on the hook's stdin and stdout.

pub mod pool;
pub mod process;
pub mod protocol;
pub(crate) mod run;

pub use protocol::{
    Answer, Hello, HelloLine, Line, PROTOCOL_VERSION, ProtocolError, Reply, Request,
    encode_request, parse_line,
};
