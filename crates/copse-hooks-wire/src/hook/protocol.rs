//! The persistent-hook protocol: newline-delimited JSON on the hook's stdin
//! (requests from the engine) and stdout (the hello, then replies).
//!
//! ```text
//! hook   → {"hello": {"protocol": 1, "events": ["toolGate"]}}     (first line)
//! engine → {"id": 7, "event": "toolGate", "payload": {...}}         (any number,
//! hook   → {"id": 7, "response": {...}}                              pipelined,
//! hook   → {"id": 8, "exit": 2, "stderr": "why"}                     by id)
//! ```
//!
//! `payload` is exactly the stdin object a per-call hook of the event receives, and
//! `response` exactly what it would print (`null`: printed nothing). An `exit` reply
//! means what exiting with that code (normally 2) and writing `stderr` means for a
//! per-call hook. These types serialise exactly as the engine's own (a drift test
//! checks it), so they can be used to write either side.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The protocol version this crate speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// The hook's first line: `{"hello": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelloLine {
    /// The greeting.
    pub hello: Hello,
}

/// What a persistent hook says when it starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The protocol version the hook speaks ([`PROTOCOL_VERSION`]).
    pub protocol: u32,
    /// The canonical event names (`toolGate`, `afterFileEdit`, …) the hook wants; the
    /// engine sends it no other.
    pub events: Vec<String>,
}

impl HelloLine {
    /// The hello for a hook that wants `events`.
    pub fn new<S: Into<String>>(events: impl IntoIterator<Item = S>) -> Self {
        Self {
            hello: Hello {
                protocol: PROTOCOL_VERSION,
                events: events.into_iter().map(Into::into).collect(),
            },
        }
    }
}

/// One request, engine → hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Unique for the life of the process; the reply must carry it back.
    pub id: u64,
    /// The canonical event name (the Copse config key, e.g. `toolGate`).
    pub event: String,
    /// Exactly the stdin object a per-call hook of this event receives.
    pub payload: Value,
}

/// One reply, hook → engine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// The id of the request answered.
    pub id: u64,
    /// The answer.
    #[serde(flatten)]
    pub answer: Answer,
}

/// What a reply says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Answer {
    /// What a per-call hook would have printed on stdout, exiting 0 (`null`: printed
    /// nothing).
    Response {
        /// The printed object.
        response: Value,
    },
    /// What a per-call hook exiting with `exit` and writing `stderr` means (exit 2
    /// blocks a gated event with `stderr` as the reason).
    Exit {
        /// The exit code.
        exit: i32,
        /// What the per-call hook would have written to stderr.
        #[serde(default)]
        stderr: String,
    },
}

impl Reply {
    /// A reply carrying a response object (`Value::Null`: no opinion).
    pub fn response(id: u64, response: Value) -> Self {
        Self {
            id,
            answer: Answer::Response { response },
        }
    }

    /// A reply meaning "exit 2 with this stderr".
    pub fn block(id: u64, stderr: impl Into<String>) -> Self {
        Self::exit(id, 2, stderr)
    }

    /// A reply meaning "exit `code` with this stderr".
    pub fn exit(id: u64, code: i32, stderr: impl Into<String>) -> Self {
        Self {
            id,
            answer: Answer::Exit {
                exit: code,
                stderr: stderr.into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is a failed test

    use super::*;
    use serde_json::json;

    #[test]
    fn lines_have_the_documented_shape() {
        assert_eq!(
            serde_json::to_value(HelloLine::new(["toolGate"])).unwrap(),
            json!({"hello": {"protocol": 1, "events": ["toolGate"]}})
        );
        assert_eq!(
            serde_json::to_value(Reply::response(3, json!({"decision": "deny"}))).unwrap(),
            json!({"id": 3, "response": {"decision": "deny"}})
        );
        assert_eq!(
            serde_json::to_value(Reply::block(4, "no")).unwrap(),
            json!({"id": 4, "exit": 2, "stderr": "no"})
        );
        let r: Request =
            serde_json::from_str(r#"{"id":9,"event":"stop","payload":{"status":"completed"}}"#)
                .unwrap();
        assert_eq!((r.id, r.event.as_str()), (9, "stop"));
    }
}
