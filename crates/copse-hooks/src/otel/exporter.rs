//! The export thread: a bounded queue, batches, one POST at a time, counters.

use std::io::Read as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::config::{DEFAULT_SHUTDOWN, ExportConfig};
use super::proto;
use super::span::GateSpan;

/// The most bytes of a collector's answer read (it is a small protobuf message).
const ANSWER_CAP: u64 = 64 * 1024;

/// Counters of an [`Exporter`], in spans (a gate with two hook runs is three spans).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ExportStats {
    /// Spans the collector accepted.
    pub exported: u64,
    /// Spans never queued: the queue was full, or the exporter was shut down.
    pub dropped: u64,
    /// Spans of requests that failed, or that the collector rejected.
    pub failed: u64,
    /// Requests that failed (transport error, timeout, non-2xx answer).
    pub failed_batches: u64,
    /// Spans queued or in flight: neither delivered nor failed yet. After a
    /// shutdown, the spans that were never delivered.
    pub pending: u64,
    /// The last failure, one line (it never contains a header's value).
    pub last_error: Option<String>,
}

/// What [`Exporter::shutdown`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShutdownReport {
    /// The export thread finished before the deadline (everything queued was sent
    /// or failed). `false` when a request was still hanging at the deadline.
    pub completed: bool,
    /// The counters at the moment `shutdown` returned; `stats.pending` spans were
    /// not delivered.
    pub stats: ExportStats,
}

enum Msg {
    Gate(Box<GateSpan>),
    /// Look at the closing flag now.
    Wake,
}

#[derive(Default)]
struct Shared {
    closing: AtomicBool,
    deadline: Mutex<Option<Instant>>,
    accepted: AtomicU64,
    exported: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
    failed_batches: AtomicU64,
    last_error: Mutex<Option<String>>,
}

impl Shared {
    fn fail(&self, spans: u64, why: String) {
        self.failed.fetch_add(spans, Ordering::Relaxed);
        self.failed_batches.fetch_add(1, Ordering::Relaxed);
        self.set_error(why);
    }

    fn set_error(&self, why: String) {
        if let Ok(mut slot) = self.last_error.lock() {
            *slot = Some(why);
        }
    }
}

/// Exports gates as OTLP spans from a thread of its own.
///
/// [`Exporter::gate`] never blocks and never fails: it moves the span into a
/// bounded queue (`max_queue` gates) or, when the queue is full, drops it and counts
/// it. The thread sends batches of up to `max_batch` spans, or whatever waited
/// `schedule_delay`, one request at a time, each bounded by `timeout`; a failed
/// request is counted and not retried. [`Exporter::shutdown`] sends what is queued
/// within a deadline; dropping an exporter does the same with a 2 s deadline.
pub struct Exporter {
    tx: SyncSender<Msg>,
    shared: Arc<Shared>,
    /// Receives once when the thread ends; taken by the first shutdown that sees it.
    done: Mutex<Option<Receiver<()>>>,
    traces_url: String,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("traces_url", &self.traces_url)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl Exporter {
    /// Starts the export thread. If no thread can be started, the exporter drops
    /// every gate and says why in [`ExportStats::last_error`].
    pub fn start(config: ExportConfig) -> Exporter {
        let (tx, rx) = mpsc::sync_channel(config.max_queue.max(1));
        let (done_tx, done_rx) = mpsc::channel();
        let shared = Arc::new(Shared::default());
        let traces_url = config.traces_url.clone();
        let worker_shared = Arc::clone(&shared);
        let started = std::thread::Builder::new()
            .name("copse-otel".to_owned())
            .spawn(move || {
                run(&rx, &worker_shared, &config);
                let _ = done_tx.send(());
            });
        if let Err(e) = started {
            shared.closing.store(true, Ordering::Relaxed);
            shared.set_error(format!("the export thread could not be started: {e}"));
        }
        Exporter {
            tx,
            shared,
            done: Mutex::new(Some(done_rx)),
            traces_url,
        }
    }

    /// Queues one gate for export. Never blocks: when the queue is full (a slow,
    /// hung or absent collector) or the exporter is shut down, the gate's spans are
    /// dropped and counted in [`ExportStats::dropped`].
    pub fn gate(&self, span: GateSpan) {
        let spans = span_count(&span);
        if self.shared.closing.load(Ordering::Relaxed) {
            self.shared.dropped.fetch_add(spans, Ordering::Relaxed);
            return;
        }
        match self.tx.try_send(Msg::Gate(Box::new(span))) {
            Ok(()) => {
                self.shared.accepted.fetch_add(spans, Ordering::Relaxed);
            }
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.shared.dropped.fetch_add(spans, Ordering::Relaxed);
            }
        }
    }

    /// The counters so far.
    pub fn stats(&self) -> ExportStats {
        let s = &self.shared;
        // Delivered and failed first: `accepted` only grows, so `pending` is never
        // under-counted by a span that finished between the reads.
        let exported = s.exported.load(Ordering::Relaxed);
        let failed = s.failed.load(Ordering::Relaxed);
        let accepted = s.accepted.load(Ordering::Relaxed);
        ExportStats {
            exported,
            dropped: s.dropped.load(Ordering::Relaxed),
            failed,
            failed_batches: s.failed_batches.load(Ordering::Relaxed),
            pending: accepted.saturating_sub(exported.saturating_add(failed)),
            last_error: s.last_error.lock().ok().and_then(|e| e.clone()),
        }
    }

    /// Where spans go.
    pub fn traces_url(&self) -> &str {
        &self.traces_url
    }

    /// Stops taking gates, sends what is queued, and returns by `deadline` at the
    /// latest, whatever the collector does: a request still hanging then is left
    /// to its thread (it ends with the process), and its spans count as pending.
    /// The first call's deadline bounds the sending; a later call waits at most its
    /// own `deadline` for the thread, then returns the counters.
    pub fn shutdown(&self, deadline: Duration) -> ShutdownReport {
        let until = Instant::now() + deadline;
        // The deadline first, then the flag: the thread reads the deadline once it
        // sees the flag.
        let first = match self.shared.deadline.lock() {
            Ok(mut slot) if slot.is_none() => {
                *slot = Some(until);
                true
            }
            _ => false,
        };
        self.shared.closing.store(true, Ordering::SeqCst);
        if first {
            // A full queue needs no wake-up: the thread is not waiting then.
            let _ = self.tx.try_send(Msg::Wake);
        }
        let completed = match self.done.lock() {
            Ok(mut done) => match done.as_ref() {
                None => true,
                Some(rx) => {
                    match rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                            *done = None;
                            true
                        }
                        Err(RecvTimeoutError::Timeout) => false,
                    }
                }
            },
            Err(_) => false,
        };
        ShutdownReport {
            completed,
            stats: self.stats(),
        }
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        if !self.shared.closing.load(Ordering::Relaxed) {
            self.shutdown(DEFAULT_SHUTDOWN);
        }
    }
}

/// The gate's span and one per run.
fn span_count(g: &GateSpan) -> u64 {
    u64::try_from(g.runs.len())
        .unwrap_or(u64::MAX)
        .saturating_add(1)
}

/// The export thread: batches until closing, then drains the queue by the deadline.
fn run(rx: &Receiver<Msg>, shared: &Shared, config: &ExportConfig) {
    let agent = ureq::AgentBuilder::new()
        .timeout(config.timeout)
        // A collector that redirects does not get our headers sent elsewhere.
        .redirects(0)
        .user_agent(concat!("copse-hooks/", env!("CARGO_PKG_VERSION")))
        .build();
    let mut batch = Batch::default();
    while !shared.closing.load(Ordering::SeqCst) {
        let msg = match batch.since {
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(t) => rx.recv_timeout(config.schedule_delay.saturating_sub(t.elapsed())),
        };
        match msg {
            Ok(Msg::Gate(g)) => batch.push(*g),
            Ok(Msg::Wake) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        let due = batch
            .since
            .is_some_and(|t| t.elapsed() >= config.schedule_delay);
        if batch.spans >= config.max_batch as u64 || due {
            send(&agent, config, shared, &batch.take(), config.timeout);
        }
    }

    // Closing: whatever is queued, in batches, while the deadline allows.
    let deadline = shared
        .deadline
        .lock()
        .ok()
        .and_then(|d| *d)
        .unwrap_or_else(|| Instant::now() + DEFAULT_SHUTDOWN);
    loop {
        let mut more = true;
        while batch.spans < config.max_batch as u64 {
            match rx.try_recv() {
                Ok(Msg::Gate(g)) => batch.push(*g),
                Ok(Msg::Wake) => {}
                Err(_) => {
                    more = false;
                    break;
                }
            }
        }
        if batch.gates.is_empty() {
            break;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        send(
            &agent,
            config,
            shared,
            &batch.take(),
            config.timeout.min(left),
        );
        if !more {
            break;
        }
    }
}

#[derive(Default)]
struct Batch {
    gates: Vec<GateSpan>,
    spans: u64,
    /// When the oldest gate of the batch arrived.
    since: Option<Instant>,
}

impl Batch {
    fn push(&mut self, g: GateSpan) {
        self.spans = self.spans.saturating_add(span_count(&g));
        self.gates.push(g);
        self.since.get_or_insert_with(Instant::now);
    }

    fn take(&mut self) -> Vec<GateSpan> {
        self.spans = 0;
        self.since = None;
        std::mem::take(&mut self.gates)
    }
}

/// One request: POST the batch, count the outcome.
fn send(
    agent: &ureq::Agent,
    config: &ExportConfig,
    shared: &Shared,
    gates: &[GateSpan],
    timeout: Duration,
) {
    if gates.is_empty() {
        return;
    }
    let spans: u64 = gates.iter().map(span_count).sum();
    let body = proto::export_request(&config.resource, gates);
    let mut request = agent
        .post(&config.traces_url)
        .timeout(timeout)
        .set("Content-Type", "application/x-protobuf");
    for (name, value) in &config.headers {
        if !name.eq_ignore_ascii_case("content-type") {
            request = request.set(name, value);
        }
    }
    match request.send_bytes(&body) {
        Ok(response) if (200..300).contains(&response.status()) => {
            let mut answer = Vec::new();
            let _ = response
                .into_reader()
                .take(ANSWER_CAP)
                .read_to_end(&mut answer);
            match proto::partial_success(&answer) {
                Some((rejected, why)) => {
                    let rejected = rejected.min(spans);
                    shared
                        .exported
                        .fetch_add(spans - rejected, Ordering::Relaxed);
                    shared.failed.fetch_add(rejected, Ordering::Relaxed);
                    shared.set_error(error_line(&format!(
                        "the collector rejected {rejected} of {spans} spans: {why}"
                    )));
                }
                None => {
                    shared.exported.fetch_add(spans, Ordering::Relaxed);
                }
            }
        }
        Ok(response) => shared.fail(
            spans,
            error_line(&format!(
                "{}: HTTP {} {}",
                config.traces_url,
                response.status(),
                response.status_text()
            )),
        ),
        Err(ureq::Error::Status(code, response)) => shared.fail(
            spans,
            error_line(&format!(
                "{}: HTTP {code} {}",
                config.traces_url,
                response.status_text()
            )),
        ),
        Err(ureq::Error::Transport(t)) => shared.fail(spans, error_line(&t.to_string())),
    }
}

/// An error as one redacted line of at most 300 characters.
fn error_line(text: &str) -> String {
    super::span::one_line(text, 300)
}
