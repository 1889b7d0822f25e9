//! The OTLP trace messages in protobuf, written by hand.
//!
//! Why not the `opentelemetry-proto` crate: with only its `trace` and
//! `gen-tonic-messages` features (0.33.1) it still pulls `opentelemetry`,
//! `opentelemetry_sdk`, `futures-*`, `rand`, `prost` and `itertools` — 23 crates this
//! workspace does not otherwise build (measured: 10 s of a debug and 12 s of a
//! release build on this project's 2-core machines) — for ten messages we only ever
//! encode, plus one small answer we decode. The field numbers and types below are
//! those of `opentelemetry/proto/{collector/trace,trace,common,resource}/v1/*.proto`
//! (OTLP 1.x); the integration tests decode what this writes with the reference
//! protobuf implementation and send it to a real OTLP backend.

use std::time::{SystemTime, UNIX_EPOCH};

use super::span::{GateSpan, RunSpan, SpanId, TraceId, one_line, payload_text};

/// The instrumentation scope of every span.
const SCOPE_NAME: &str = "copse-hooks";

/// The cap on free texts (messages, commands, failure descriptions), in characters.
const TEXT_CAP: usize = 1000;
/// The cap on a payload body (with payloads opted into), in characters.
pub(crate) const PAYLOAD_CAP: usize = 16 * 1024;
/// The cap on a hook's short name in `gen_ai.tool.name` and the span name.
const HOOK_NAME_CAP: usize = 60;

/// An attribute value.
enum Attr {
    Str(String),
    Int(i64),
    Bool(bool),
}

// Protobuf wire types.
const VARINT: u32 = 0;
const I64: u32 = 1;
const LEN: u32 = 2;
const I32: u32 = 5;

fn varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn tag(buf: &mut Vec<u8>, field: u32, wire: u32) {
    varint(buf, u64::from(field << 3 | wire));
}

fn bytes_field(buf: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    tag(buf, field, LEN);
    varint(buf, bytes.len() as u64);
    buf.extend_from_slice(bytes);
}

fn string_field(buf: &mut Vec<u8>, field: u32, s: &str) {
    bytes_field(buf, field, s.as_bytes());
}

fn fixed64_field(buf: &mut Vec<u8>, field: u32, v: u64) {
    tag(buf, field, I64);
    buf.extend_from_slice(&v.to_le_bytes());
}

fn varint_field(buf: &mut Vec<u8>, field: u32, v: u64) {
    tag(buf, field, VARINT);
    varint(buf, v);
}

/// A nested message: written by `write` into its own buffer, then length-prefixed.
fn message(buf: &mut Vec<u8>, field: u32, write: impl FnOnce(&mut Vec<u8>)) {
    let mut inner = Vec::new();
    write(&mut inner);
    bytes_field(buf, field, &inner);
}

/// `KeyValue { string key = 1; AnyValue value = 2; }` with
/// `AnyValue { string_value = 1; bool_value = 2; int_value = 3; … }`.
fn key_value(buf: &mut Vec<u8>, field: u32, key: &str, value: &Attr) {
    message(buf, field, |kv| {
        string_field(kv, 1, key);
        message(kv, 2, |any| match value {
            Attr::Str(s) => string_field(any, 1, s),
            Attr::Bool(b) => varint_field(any, 2, u64::from(*b)),
            // int64: two's complement as a 64-bit varint.
            Attr::Int(i) => varint_field(any, 3, *i as u64),
        });
    });
}

fn unix_nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// `Span.SpanKind.SPAN_KIND_INTERNAL`.
const KIND_INTERNAL: u64 = 1;
/// `Status.StatusCode.STATUS_CODE_ERROR`.
const STATUS_ERROR: u64 = 2;

/// One `Span` (trace.proto).
struct SpanOut<'a> {
    trace_id: &'a TraceId,
    span_id: &'a SpanId,
    parent: Option<&'a SpanId>,
    name: String,
    start: SystemTime,
    end: SystemTime,
    attributes: Vec<(&'static str, Attr)>,
    error: Option<String>,
}

fn span(buf: &mut Vec<u8>, s: &SpanOut<'_>) {
    // ScopeSpans.spans = 2
    message(buf, 2, |sp| {
        bytes_field(sp, 1, s.trace_id);
        bytes_field(sp, 2, s.span_id);
        if let Some(parent) = s.parent {
            bytes_field(sp, 4, parent);
        }
        string_field(sp, 5, &s.name);
        varint_field(sp, 6, KIND_INTERNAL);
        let start = unix_nanos(s.start);
        fixed64_field(sp, 7, start);
        fixed64_field(sp, 8, unix_nanos(s.end).max(start));
        for (k, v) in &s.attributes {
            key_value(sp, 9, k, v);
        }
        if let Some(message_text) = &s.error {
            message(sp, 15, |st| {
                string_field(st, 2, message_text);
                varint_field(st, 3, STATUS_ERROR);
            });
        }
    });
}

/// A hook's short name: its command's first line, redacted, at most 60 characters.
pub(crate) fn hook_name(command: &str) -> String {
    let first = command.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    one_line(first, HOOK_NAME_CAP)
}

fn text(s: &str) -> Attr {
    Attr::Str(one_line(s, TEXT_CAP))
}

fn gate_attributes(g: &GateSpan) -> Vec<(&'static str, Attr)> {
    let mut a = vec![("copse.event", Attr::Str(g.event.name().to_owned()))];
    let mut opt = |key: &'static str, v: &Option<String>, cap: usize| {
        if let Some(v) = v {
            a.push((key, Attr::Str(one_line(v, cap))));
        }
    };
    opt("copse.vendor_event", &g.vendor_event, TEXT_CAP);
    opt("gen_ai.agent.name", &g.agent, TEXT_CAP);
    opt("copse.tool.name", &g.tool, TEXT_CAP);
    opt("copse.tool.call_id", &g.tool_use_id, TEXT_CAP);
    // Already a summary; passed through the same cleaning in case the caller made
    // its own.
    opt("copse.tool.input", &g.input_summary, super::SUMMARY_CAP);
    opt("copse.session.id", &g.session_id, TEXT_CAP);
    opt("gen_ai.conversation.id", &g.conversation_id, TEXT_CAP);
    opt("copse.turn.id", &g.turn_id, TEXT_CAP);
    opt("copse.decider.message", &g.deciding_message, TEXT_CAP);
    opt("copse.audit.chain_head", &g.chain_head, TEXT_CAP);
    a.push(("copse.decision", Attr::Str(g.decision.as_str().to_owned())));
    if let Some(h) = &g.deciding_hook {
        a.push(("copse.decider.hook", text(h)));
    }
    if let Some(p) = &g.payload {
        let body = match p {
            serde_json::Value::String(s) => payload_text(s.as_bytes(), PAYLOAD_CAP),
            other => payload_text(other.to_string().as_bytes(), PAYLOAD_CAP),
        };
        a.push(("copse.tool.arguments", Attr::Str(body)));
    }
    if !g.detached {
        a.push((
            "copse.run_count",
            Attr::Int(i64::try_from(g.runs.len()).unwrap_or(i64::MAX)),
        ));
    }
    a
}

fn run_attributes(r: &RunSpan, name: &str) -> Vec<(&'static str, Attr)> {
    let ms = |d: std::time::Duration| Attr::Int(i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let mut a = vec![
        (
            "gen_ai.operation.name",
            Attr::Str("execute_tool".to_owned()),
        ),
        ("gen_ai.tool.name", Attr::Str(name.to_owned())),
        (
            "copse.hook.dialect",
            Attr::Str(r.dialect.as_str().to_owned()),
        ),
        ("copse.hook.event", text(&r.vendor_event)),
        ("copse.hook.command", text(&r.command)),
        ("copse.hook.source", text(&r.source)),
        ("copse.hook.scope", Attr::Str(r.scope.as_str().to_owned())),
        ("copse.hook.duration_ms", ms(r.duration)),
        (
            "copse.hook.sandbox",
            Attr::Str(r.sandbox.as_str().to_owned()),
        ),
        ("copse.hook.leaked", Attr::Bool(r.leaked)),
        ("copse.hook.result", Attr::Str(r.result.as_str().to_owned())),
        (
            "copse.hook.policy",
            Attr::Str(
                match r.policy {
                    crate::outcome::FailurePolicy::Open => "open",
                    crate::outcome::FailurePolicy::Closed => "closed",
                }
                .to_owned(),
            ),
        ),
    ];
    if let Some(code) = r.exit_code {
        a.push(("copse.hook.exit_code", Attr::Int(i64::from(code))));
    }
    if let Some(t) = r.timeout {
        a.push(("copse.hook.timeout_ms", ms(t)));
    }
    if let Some(d) = r.decision {
        a.push(("copse.hook.decision", Attr::Str(d.as_str().to_owned())));
    }
    if let Some(t) = r.trust {
        a.push(("copse.hook.trust", Attr::Str(t.as_str().to_owned())));
    }
    if let Some(kind) = r.failure {
        a.push(("error.type", Attr::Str(kind.as_str().to_owned())));
        a.push((
            "copse.hook.failure.kind",
            Attr::Str(kind.as_str().to_owned()),
        ));
    }
    if let Some(m) = &r.failure_message {
        a.push(("copse.hook.failure.message", text(m)));
    }
    if !r.refusals.is_empty() {
        a.push(("copse.hook.refusals", text(&r.refusals.join("; "))));
    }
    if let Some(b) = &r.stdin {
        a.push((
            "gen_ai.tool.call.arguments",
            Attr::Str(payload_text(b, PAYLOAD_CAP)),
        ));
    }
    if let Some(b) = &r.stdout {
        a.push((
            "gen_ai.tool.call.result",
            Attr::Str(payload_text(b, PAYLOAD_CAP)),
        ));
    }
    a
}

/// The `ExportTraceServiceRequest` for `gates`: one resource, one scope, each gate's
/// span followed by its runs' spans.
pub(crate) fn export_request(resource: &[(String, String)], gates: &[GateSpan]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1024 * gates.len().max(1));
    // ExportTraceServiceRequest.resource_spans = 1
    message(&mut out, 1, |rs| {
        // ResourceSpans.resource = 1 → Resource.attributes = 1
        message(rs, 1, |res| {
            for (k, v) in resource {
                key_value(res, 1, k, &Attr::Str(v.clone()));
            }
        });
        // ResourceSpans.scope_spans = 2
        message(rs, 2, |ss| {
            // ScopeSpans.scope = 1: InstrumentationScope { name = 1; version = 2; }
            message(ss, 1, |scope| {
                string_field(scope, 1, SCOPE_NAME);
                string_field(scope, 2, env!("CARGO_PKG_VERSION"));
            });
            for g in gates {
                if !g.detached {
                    span(
                        ss,
                        &SpanOut {
                            trace_id: &g.trace_id,
                            span_id: &g.span_id,
                            parent: None,
                            name: format!("copse.gate {}", g.event.name()),
                            start: g.start,
                            end: g.end,
                            attributes: gate_attributes(g),
                            error: None,
                        },
                    );
                }
                // A detached run is the child of its gate when that is known, else a
                // root carrying the event's attributes.
                let parent = if g.detached {
                    g.parent.as_ref()
                } else {
                    Some(&g.span_id)
                };
                for r in &g.runs {
                    let name = hook_name(&r.command);
                    let error = r.failure.map(|kind| match &r.failure_message {
                        Some(m) => one_line(m, TEXT_CAP),
                        None => kind.as_str().to_owned(),
                    });
                    let mut attributes = run_attributes(r, &name);
                    if g.detached {
                        attributes.push(("copse.hook.detached", Attr::Bool(true)));
                        if parent.is_none() {
                            attributes.extend(gate_attributes(g));
                        }
                    }
                    span(
                        ss,
                        &SpanOut {
                            trace_id: &g.trace_id,
                            span_id: &r.span_id,
                            parent,
                            name: format!("execute_tool {name}"),
                            start: r.start,
                            end: r.start + r.duration,
                            attributes,
                            error,
                        },
                    );
                }
            }
        });
    });
    out
}

/// `ExportTraceServicePartialSuccess` from an `ExportTraceServiceResponse`: the
/// spans the collector rejected and why. `None` when the answer says nothing of it
/// (or is not protobuf).
pub(crate) fn partial_success(body: &[u8]) -> Option<(u64, String)> {
    let partial = fields(body)?
        .into_iter()
        .find_map(|(f, v)| matches!((f, &v), (1, Field::Len(_))).then_some(v))?;
    let Field::Len(inner) = partial else {
        return None;
    };
    let mut rejected = 0;
    let mut why = String::new();
    for (f, v) in fields(inner)? {
        match (f, v) {
            (1, Field::Varint(n)) => rejected = n,
            (2, Field::Len(b)) => why = String::from_utf8_lossy(b).into_owned(),
            _ => {}
        }
    }
    (rejected > 0 || !why.is_empty()).then_some((rejected, why))
}

enum Field<'a> {
    Varint(u64),
    Len(&'a [u8]),
    Fixed,
}

/// The top-level fields of a message; `None` if it is not well-formed protobuf.
fn fields(mut b: &[u8]) -> Option<Vec<(u32, Field<'_>)>> {
    fn read_varint(b: &mut &[u8]) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = b.split_first()?;
            *b = rest;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
    let mut out = Vec::new();
    while !b.is_empty() {
        let key = read_varint(&mut b)?;
        let field = u32::try_from(key >> 3).ok()?;
        let value = match (key & 7) as u32 {
            VARINT => Field::Varint(read_varint(&mut b)?),
            LEN => {
                let n = usize::try_from(read_varint(&mut b)?).ok()?;
                let (bytes, rest) = b.split_at_checked(n)?;
                b = rest;
                Field::Len(bytes)
            }
            I64 => {
                b = b.get(8..)?;
                Field::Fixed
            }
            I32 => {
                b = b.get(4..)?;
                Field::Fixed
            }
            _ => return None,
        };
        out.push((field, value));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints() {
        let enc = |v| {
            let mut b = Vec::new();
            varint(&mut b, v);
            b
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(1), [1]);
        assert_eq!(enc(300), [0xac, 0x02]);
        assert_eq!(enc(u64::MAX).len(), 10);
        // A negative int64 is ten bytes of two's complement.
        assert_eq!(
            enc(-1i64 as u64),
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
    }

    #[test]
    fn partial_success_is_read() {
        // ExportTraceServiceResponse { partial_success { rejected_spans: 3, error_message: "bad" } }
        let mut inner = Vec::new();
        varint_field(&mut inner, 1, 3);
        string_field(&mut inner, 2, "bad");
        let mut body = Vec::new();
        bytes_field(&mut body, 1, &inner);
        assert_eq!(partial_success(&body), Some((3, "bad".to_owned())));
        assert_eq!(partial_success(&[]), None);
        assert_eq!(partial_success(b"{\"json\": true}"), None);
        // An empty partial_success means full success.
        let mut body = Vec::new();
        bytes_field(&mut body, 1, &[]);
        assert_eq!(partial_success(&body), None);
    }

    #[test]
    fn hook_names() {
        assert_eq!(
            hook_name("\n  ./guard.sh --strict\nsecond line"),
            "./guard.sh --strict"
        );
        assert_eq!(
            hook_name(&"x".repeat(100)).chars().count(),
            HOOK_NAME_CAP + 1
        );
    }
}
