//! OpenTelemetry export: every gate as an OTLP span, with a child span per hook run.
//!
//! ```text
//! gate (caller's thread) ── GateSpan ── Exporter::gate: try_send ──► bounded queue
//!                                      (full: dropped, counted)          │
//!                                                  export thread ◄───────┘
//!                         batches (max_batch spans or schedule_delay) → protobuf
//!                         → POST traces_url (OTLP/HTTP, timeout) → counters
//! ```
//!
//! The caller's cost is building a [`GateSpan`] and one `try_send` (plus an unpark
//! when the export thread sleeps with nothing to do, or the gate fills a batch);
//! encoding, redaction and the network are the export thread's. A slow, hung or absent
//! collector fills the queue and later gates are dropped (counted), never delayed.
//! [`Exporter::shutdown`] sends what is queued and returns by its deadline whatever
//! the collector does.
//!
//! Where spans go comes from the standard `OTEL_*` variables
//! ([`ExportConfig::from_env`]) or from a host's settings ([`ExportConfig::new`]).
//! What a span says, attribute by attribute, and which OpenTelemetry semantic
//! conventions it follows, is in `docs/otel.md`. Every text leaves through the
//! audit store's secret redaction ([`crate::spine::redact`]), as one capped line;
//! no stdin, stdout or stderr is ever exported.
//!
//! ```no_run
//! use std::time::{Duration, SystemTime};
//! use copse_hooks::otel::{ExportConfig, Exporter, GateSpan, summary};
//! use copse_hooks::CanonicalEvent;
//!
//! let env: Vec<_> = std::env::vars_os().collect();
//! let reading = ExportConfig::from_env(&env);
//! for w in &reading.warnings {
//!     eprintln!("otel: {w}");
//! }
//! if let Some(config) = reading.config {
//!     let exporter = Exporter::start(config);
//!     let mut span = GateSpan::new(CanonicalEvent::ToolGate, SystemTime::now());
//!     span.tool = Some("run_shell".into());
//!     span.input_summary = Some(summary(&serde_json::json!({"command": "git status"})));
//!     span.end = SystemTime::now();
//!     exporter.gate(span);
//!     let report = exporter.shutdown(Duration::from_secs(2));
//!     eprintln!("exported {} spans, {} undelivered", report.stats.exported, report.stats.pending);
//! }
//! ```

mod config;
mod exporter;
mod proto;
mod span;

pub use config::{
    DEFAULT_MAX_BATCH, DEFAULT_MAX_QUEUE, DEFAULT_SCHEDULE_DELAY, DEFAULT_SERVICE_NAME,
    DEFAULT_SHUTDOWN, DEFAULT_TIMEOUT, EnvReading, ExportConfig, OtelSettings,
};
pub use exporter::{ExportStats, Exporter, ShutdownReport, live_exporters, shutdown_all};
pub use span::{
    GateSpan, RunSpan, SUMMARY_CAP, SpanId, TraceId, new_span_id, new_trace_id, summary,
};

/// The `ExportTraceServiceRequest` (protobuf) the exporter would POST for `gates`
/// with `config`'s resource: for tests and tools that check the encoding
/// independently of a collector.
#[doc(hidden)]
pub fn encode_request(config: &ExportConfig, gates: &[GateSpan]) -> Vec<u8> {
    proto::export_request(&config.resource, gates)
}
