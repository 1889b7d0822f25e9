//! The runner: a hook is a function from a typed request to an [`Outcome`]; the
//! runner reads the request, calls it and writes the answer, per call or persistent.
//!
//! * **Per call** (the default): stdin holds one payload; the answer is printed on
//!   stdout and the process exits 0, or 2 with the reason on stderr for
//!   [`Outcome::Block`].
//! * **Persistent** (with `--persistent` among the arguments or
//!   `COPSE_HOOK_PERSISTENT=1` in the environment): the hook says hello for the events
//!   it was given, then answers every request line until stdin closes, in order, each
//!   reply flushed as soon as it is written. A payload that does not parse answers
//!   `exit 1` (a hook failure: the hook's failure policy applies) and the loop goes on.

use std::io::{self, BufRead, Write};
use std::panic::AssertUnwindSafe;
use std::process::ExitCode;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::protocol::{HelloLine, Reply, Request};

/// The command-line flag that selects persistent mode.
pub const PERSISTENT_FLAG: &str = "--persistent";

/// The environment variable that selects persistent mode when it is `1`; the engine
/// sets it for a persistent hook (and never for a per-call one).
pub const PERSISTENT_ENV: &str = "COPSE_HOOK_PERSISTENT";

/// What a hook answers to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<R> {
    /// Print this response (exit 0).
    Respond(R),
    /// Print nothing (exit 0): no opinion.
    Nothing,
    /// Exit 2 with this reason on stderr: block a gated event.
    Block(String),
    /// Exit with `code` and `stderr` (exit 1 and the like: the hook failed).
    Exit {
        /// The exit code.
        code: i32,
        /// What goes to stderr.
        stderr: String,
    },
}

/// How the hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One process per event.
    PerCall,
    /// One process, many events, over the persistent protocol.
    Persistent,
}

impl Mode {
    /// Persistent when [`PERSISTENT_FLAG`] is among the process's arguments or
    /// [`PERSISTENT_ENV`] is `1`; per call otherwise.
    pub fn detect() -> Mode {
        let flag = std::env::args_os().skip(1).any(|a| a == PERSISTENT_FLAG);
        let env = std::env::var_os(PERSISTENT_ENV).is_some_and(|v| v == "1");
        if flag || env {
            Mode::Persistent
        } else {
            Mode::PerCall
        }
    }
}

/// Why the runner stopped short.
#[derive(Debug)]
pub enum RunError {
    /// Reading stdin or writing stdout failed.
    Io(io::Error),
    /// The engine sent a line that is not a request.
    Protocol(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Io(e) => write!(f, "hook I/O failed: {e}"),
            RunError::Protocol(m) => write!(f, "not a persistent-hook request: {m}"),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Io(e) => Some(e),
            RunError::Protocol(_) => None,
        }
    }
}

impl From<io::Error> for RunError {
    fn from(e: io::Error) -> Self {
        RunError::Io(e)
    }
}

/// Runs `handler` as a hook for `events` (canonical names, used for the persistent
/// hello) in the [`Mode::detect`]ed mode, on the process's stdin, stdout and stderr;
/// returns the exit code for `main`.
///
/// ```no_run
/// use copse_hooks_wire::hook::{CopseRequest, CopseResponse, Outcome, run};
///
/// fn main() -> std::process::ExitCode {
///     run(&["toolGate"], |req: CopseRequest| match req.shell_command() {
///         Some(c) if c.contains("rm -rf /") => Outcome::Respond(CopseResponse::deny("no")),
///         _ => Outcome::Nothing,
///     })
/// }
/// ```
pub fn run<Req, Resp, F>(events: &[&str], handler: F) -> ExitCode
where
    Req: DeserializeOwned,
    Resp: Serialize,
    F: FnMut(Req) -> Outcome<Resp>,
{
    let stdin = io::stdin();
    let stdout = io::stdout();
    let result = match Mode::detect() {
        Mode::PerCall => per_call(stdin.lock(), stdout.lock(), io::stderr().lock(), handler),
        Mode::Persistent => persistent(events, stdin.lock(), stdout.lock(), handler).map(|()| 0),
    };
    match result {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(e) => {
            let _ = writeln!(io::stderr(), "{e}");
            ExitCode::from(1)
        }
    }
}

/// Per call: reads one payload from `input`, answers on `output` / `errors`, returns
/// the exit code. A payload that does not parse is exit 1 with the reason.
pub fn per_call<Req, Resp, F>(
    mut input: impl io::Read,
    mut output: impl Write,
    mut errors: impl Write,
    mut handler: F,
) -> Result<i32, RunError>
where
    Req: DeserializeOwned,
    Resp: Serialize,
    F: FnMut(Req) -> Outcome<Resp>,
{
    let mut text = Vec::new();
    input.read_to_end(&mut text)?;
    let outcome = match serde_json::from_slice::<Req>(&text) {
        Ok(req) => handler(req),
        Err(e) => Outcome::Exit {
            code: 1,
            stderr: format!("the hook could not read its payload: {e}"),
        },
    };
    match outcome {
        Outcome::Respond(r) => {
            let text = serde_json::to_string(&r).map_err(|e| io::Error::other(e.to_string()))?;
            writeln!(output, "{text}")?;
            output.flush()?;
            Ok(0)
        }
        Outcome::Nothing => Ok(0),
        Outcome::Block(reason) => {
            write!(errors, "{reason}")?;
            Ok(2)
        }
        Outcome::Exit { code, stderr } => {
            write!(errors, "{stderr}")?;
            Ok(code)
        }
    }
}

/// Persistent: says hello for `events`, then answers each request line of `input` on
/// `output` until `input` ends.
pub fn persistent<Req, Resp, F>(
    events: &[&str],
    input: impl BufRead,
    mut output: impl Write,
    mut handler: F,
) -> Result<(), RunError>
where
    Req: DeserializeOwned,
    Resp: Serialize,
    F: FnMut(Req) -> Outcome<Resp>,
{
    write_line(&mut output, &HelloLine::new(events.iter().copied()))?;
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let request: Request = serde_json::from_str(&line)
            .map_err(|e| RunError::Protocol(format!("{e}: {}", shorten(&line))))?;
        let reply = answer(request, &mut handler);
        write_line(&mut output, &reply)?;
    }
    Ok(())
}

/// The reply to one request. A handler that panics answers `exit 1` with the panic's
/// message (a hook failure for this request only) and the process serves on.
pub fn answer<Req, Resp, F>(request: Request, handler: &mut F) -> Reply
where
    Req: DeserializeOwned,
    Resp: Serialize,
    F: FnMut(Req) -> Outcome<Resp>,
{
    let id = request.id;
    let outcome = match serde_json::from_value::<Req>(request.payload) {
        Ok(req) => match std::panic::catch_unwind(AssertUnwindSafe(|| handler(req))) {
            Ok(outcome) => outcome,
            Err(panic) => Outcome::Exit {
                code: 1,
                stderr: format!("the hook panicked: {}", panic_message(panic.as_ref())),
            },
        },
        Err(e) => Outcome::Exit {
            code: 1,
            stderr: format!("the hook could not read its payload: {e}"),
        },
    };
    match outcome {
        Outcome::Respond(r) => match serde_json::to_value(&r) {
            Ok(v) => Reply::response(id, v),
            Err(e) => Reply::exit(id, 1, format!("the hook's response is not JSON: {e}")),
        },
        Outcome::Nothing => Reply::response(id, Value::Null),
        Outcome::Block(reason) => Reply::block(id, reason),
        Outcome::Exit { code, stderr } => Reply::exit(id, code, stderr),
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

fn write_line(output: &mut impl Write, value: &impl Serialize) -> Result<(), RunError> {
    let mut line = serde_json::to_vec(value).map_err(|e| io::Error::other(e.to_string()))?;
    line.push(b'\n');
    output.write_all(&line)?;
    output.flush()?;
    Ok(())
}

fn shorten(line: &str) -> String {
    let mut end = line.len().min(120);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}", &line[..end])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is a failed test

    use super::*;
    use crate::hook::{CopseRequest, CopseResponse};
    use serde_json::json;

    fn policy(req: CopseRequest) -> Outcome<CopseResponse> {
        match req.shell_command() {
            Some("rm -rf /") => Outcome::Respond(CopseResponse::deny("no")),
            Some("block") => Outcome::Block("blocked".into()),
            Some("panic") => panic!("handler bug"),
            _ => Outcome::Nothing,
        }
    }

    fn gate(command: &str) -> Value {
        json!({
            "hook_event_name": "toolGate", "conversation_id": "c", "generation_id": "g",
            "workspace_roots": [], "tool_name": "run_shell", "input": {"command": command}
        })
    }

    #[test]
    fn per_call_prints_exits_and_blocks() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = per_call(
            gate("rm -rf /").to_string().as_bytes(),
            &mut out,
            &mut err,
            policy,
        );
        assert_eq!(code.unwrap(), 0);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"decision\":\"deny\",\"agentMessage\":\"no\"}\n"
        );
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = per_call(
            gate("block").to_string().as_bytes(),
            &mut out,
            &mut err,
            policy,
        );
        assert_eq!((code.unwrap(), out.len()), (2, 0));
        assert_eq!(err, b"blocked");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = per_call(&b"{not json"[..], &mut out, &mut err, policy);
        assert_eq!(code.unwrap(), 1);
        assert!(
            String::from_utf8(err)
                .unwrap()
                .contains("could not read its payload")
        );
    }

    #[test]
    fn persistent_says_hello_and_answers_every_request_by_id() {
        let input = [
            json!({"id": 5, "event": "toolGate", "payload": gate("rm -rf /")}),
            json!({"id": 3, "event": "toolGate", "payload": gate("ls")}),
            json!({"id": 9, "event": "toolGate", "payload": gate("block")}),
            json!({"id": 4, "event": "toolGate", "payload": {"nope": 1}}),
            json!({"id": 6, "event": "toolGate", "payload": gate("panic")}),
            json!({"id": 7, "event": "toolGate", "payload": gate("ls")}),
        ]
        .iter()
        .map(|v| format!("{v}\n"))
        .collect::<String>();
        let mut out = Vec::new();
        persistent(&["toolGate"], input.as_bytes(), &mut out, policy).unwrap();
        let lines: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            lines[0],
            json!({"hello": {"protocol": 1, "events": ["toolGate"]}})
        );
        assert_eq!(
            lines[1],
            json!({"id": 5, "response": {"decision": "deny", "agentMessage": "no"}})
        );
        assert_eq!(lines[2], json!({"id": 3, "response": null}));
        assert_eq!(lines[3], json!({"id": 9, "exit": 2, "stderr": "blocked"}));
        assert_eq!(lines[4]["id"], 4);
        assert_eq!(lines[4]["exit"], 1);
        assert_eq!(
            lines[5],
            json!({"id": 6, "exit": 1, "stderr": "the hook panicked: handler bug"})
        );
        assert_eq!(lines[6], json!({"id": 7, "response": null}), "serves on");
        assert_eq!(lines.len(), 7);
    }

    #[test]
    fn a_line_that_is_not_a_request_stops_the_loop_with_a_clear_error() {
        let mut out = Vec::new();
        let err = persistent(&["stop"], &b"hello\n"[..], &mut out, policy).unwrap_err();
        assert!(
            err.to_string().contains("not a persistent-hook request"),
            "{err}"
        );
    }
}
