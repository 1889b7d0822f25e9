//! The export thread: a bounded queue, batches, one POST at a time, counters.

use std::io::Read as _;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering, fence};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::Thread;
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
    /// Requests sent again after an answer OTLP calls transient (429, 502, 503, 504).
    pub retries: u64,
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

// What the export thread is doing (`Shared::state`).
/// Running: it looks at the queue before it sleeps again.
const AWAKE: u8 = 0;
/// Asleep until its batch is due (or a gate fills the batch and wakes it).
const TIMED: u8 = 1;
/// Asleep with nothing to send: the next gate wakes it.
const IDLE: u8 = 2;

#[derive(Default)]
struct Shared {
    closing: AtomicBool,
    /// `AWAKE`, `TIMED` or `IDLE`.
    state: AtomicU8,
    /// Spans queued or batched and not yet sent: the gate that brings it to a full
    /// batch wakes the thread.
    unsent: AtomicU64,
    deadline: Mutex<Option<Instant>>,
    accepted: AtomicU64,
    exported: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
    failed_batches: AtomicU64,
    retries: AtomicU64,
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
    tx: SyncSender<Box<GateSpan>>,
    shared: Arc<Shared>,
    /// The export thread, to wake; `None` if it could not be started.
    worker: Option<Thread>,
    max_batch: u64,
    /// Receives once when the thread ends; taken by the first shutdown that sees it.
    done: Mutex<Option<Receiver<()>>>,
    traces_url: String,
    include_payloads: bool,
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
        let include_payloads = config.include_payloads;
        let max_batch = u64::try_from(config.max_batch).unwrap_or(u64::MAX);
        let worker_shared = Arc::clone(&shared);
        let started = std::thread::Builder::new()
            .name("copse-otel".to_owned())
            .spawn(move || {
                run(&rx, &worker_shared, &config);
                let _ = done_tx.send(());
            });
        let worker = match started {
            Ok(handle) => Some(handle.thread().clone()),
            Err(e) => {
                shared.closing.store(true, Ordering::Relaxed);
                shared.set_error(format!("the export thread could not be started: {e}"));
                None
            }
        };
        Exporter {
            tx,
            shared,
            worker,
            max_batch,
            done: Mutex::new(Some(done_rx)),
            traces_url,
            include_payloads,
        }
    }

    /// Queues one gate for export. Never blocks: when the queue is full (a slow,
    /// hung or absent collector) or the exporter is shut down, the gate's spans are
    /// dropped and counted in [`ExportStats::dropped`].
    ///
    /// Usually no system call either: the export thread is woken only by the first
    /// gate after it went idle and by the gate that fills a batch; otherwise it
    /// wakes on its own when the batch is due.
    pub fn gate(&self, span: GateSpan) {
        let shared = &*self.shared;
        let spans = span_count(&span);
        if shared.closing.load(Ordering::Relaxed) || self.tx.try_send(Box::new(span)).is_err() {
            shared.dropped.fetch_add(spans, Ordering::Relaxed);
            return;
        }
        shared.accepted.fetch_add(spans, Ordering::Relaxed);
        let unsent = shared.unsent.fetch_add(spans, Ordering::Relaxed) + spans;
        // Pairs with the thread's fence between announcing its sleep and its last look
        // at the queue: either it sees this gate, or this sees it asleep.
        fence(Ordering::SeqCst);
        let wake = match shared.state.load(Ordering::Relaxed) {
            IDLE => true,
            TIMED => unsent >= self.max_batch,
            _ => false,
        };
        if wake && shared.state.swap(AWAKE, Ordering::SeqCst) != AWAKE {
            self.unpark();
        }
    }

    fn unpark(&self) {
        if let Some(worker) = &self.worker {
            worker.unpark();
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
            retries: s.retries.load(Ordering::Relaxed),
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
        self.close_by(until);
        self.wait_until(until)
    }

    /// Stops taking gates and tells the thread to send what is queued by `until`.
    fn close_by(&self, until: Instant) {
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
            // An unpark before the thread parks makes that park return at once.
            self.unpark();
        }
    }

    /// Waits for the thread until `until` at the latest.
    fn wait_until(&self, until: Instant) -> ShutdownReport {
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

    /// Whether spans carry payload bodies ([`ExportConfig::include_payloads`]).
    pub fn include_payloads(&self) -> bool {
        self.include_payloads
    }

    /// The exporter for `config` shared by every engine of this process that asks
    /// for the same configuration (a daemon's warm engines, one per agent call
    /// config, export through one thread and one queue); started on first use. It
    /// shuts down (bounded) when the last engine holding it is dropped, or at
    /// [`shutdown_all`].
    pub fn shared(config: ExportConfig) -> Arc<Exporter> {
        let mut live = match registry().lock() {
            Ok(l) => l,
            Err(poisoned) => poisoned.into_inner(),
        };
        live.retain(|(_, w)| w.strong_count() > 0);
        if let Some(found) = live
            .iter()
            .filter(|(c, _)| *c == config)
            .find_map(|(_, w)| w.upgrade())
            .filter(|e| !e.shared.closing.load(Ordering::Relaxed))
        {
            return found;
        }
        let exporter = Arc::new(Exporter::start(config.clone()));
        live.push((config, Arc::downgrade(&exporter)));
        exporter
    }
}

type Registry = Mutex<Vec<(ExportConfig, std::sync::Weak<Exporter>)>>;

fn registry() -> &'static Registry {
    static LIVE: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(Vec::new()))
}

/// Every exporter of this process started by [`Exporter::shared`] that an engine
/// still holds: what a daemon's `doctor` adds up.
pub fn live_exporters() -> Vec<Arc<Exporter>> {
    let live = match registry().lock() {
        Ok(l) => l,
        Err(poisoned) => poisoned.into_inner(),
    };
    live.iter().filter_map(|(_, w)| w.upgrade()).collect()
}

/// Shuts down every live shared exporter together: each stops taking gates and
/// sends what it has queued, all by one `deadline` (a daemon that stops takes at
/// most `deadline` for its exports, however many there are).
pub fn shutdown_all(deadline: Duration) -> Vec<ShutdownReport> {
    let until = Instant::now() + deadline;
    let all = live_exporters();
    for e in &all {
        e.close_by(until);
    }
    all.iter().map(|e| e.wait_until(until)).collect()
}

impl Drop for Exporter {
    fn drop(&mut self) {
        if !self.shared.closing.load(Ordering::Relaxed) {
            self.shutdown(DEFAULT_SHUTDOWN);
        }
    }
}

/// The gate's span (none for detached runs) and one per run.
fn span_count(g: &GateSpan) -> u64 {
    u64::try_from(g.runs.len())
        .unwrap_or(u64::MAX)
        .saturating_add(u64::from(!g.detached))
}

/// The export thread: batches until closing, then drains the queue by the deadline.
fn run(rx: &Receiver<Box<GateSpan>>, shared: &Shared, config: &ExportConfig) {
    let agent = ureq::AgentBuilder::new()
        .timeout(config.timeout)
        // A collector that redirects does not get our headers sent elsewhere.
        .redirects(0)
        .user_agent(concat!("copse-hooks/", env!("CARGO_PKG_VERSION")))
        .build();
    let max_batch = u64::try_from(config.max_batch).unwrap_or(u64::MAX);
    let take = |batch: &mut Batch, g: Box<GateSpan>| batch.push(*g);
    // One batch, retried on the answers OTLP calls transient (429, 502, 503, 504) up
    // to `ATTEMPTS` times, after the collector's `Retry-After` or a doubling pause,
    // never past `until` (the shutdown deadline); a shutdown that starts during a
    // pause ends it.
    let flush = |batch: &mut Batch, until: Option<Instant>| {
        let spans = batch.spans;
        let gates = batch.take();
        let mut pause = RETRY_PAUSE;
        for attempt in 1..=ATTEMPTS {
            let left = until.map(|u| u.saturating_duration_since(Instant::now()));
            let timeout = left.map_or(config.timeout, |l| config.timeout.min(l));
            match send(&agent, config, shared, &gates, timeout) {
                Attempt::Done => break,
                Attempt::Transient { after, why } => {
                    let wait = after.unwrap_or(pause).min(RETRY_PAUSE_MAX);
                    let in_time = left.is_none_or(|l| wait + Duration::from_millis(1) < l);
                    if attempt == ATTEMPTS || !in_time {
                        shared.fail(gates.iter().map(span_count).sum(), why);
                        break;
                    }
                    // A pause a shutdown cuts short (it unparks this thread): the
                    // batch then goes at once, within the shutdown's deadline.
                    let wake = Instant::now() + wait;
                    while !shared.closing.load(Ordering::SeqCst) {
                        let now = Instant::now();
                        if now >= wake {
                            break;
                        }
                        std::thread::park_timeout(wake - now);
                    }
                    shared.retries.fetch_add(1, Ordering::Relaxed);
                    pause = pause.saturating_mul(2);
                }
            }
        }
        shared.unsent.fetch_sub(spans, Ordering::Relaxed);
    };
    let mut batch = Batch::default();
    while !shared.closing.load(Ordering::SeqCst) {
        while let Ok(g) = rx.try_recv() {
            take(&mut batch, g);
            if batch.spans >= max_batch {
                flush(&mut batch, None);
            }
        }
        let wait = match batch.since {
            None => None,
            Some(t) => match config.schedule_delay.checked_sub(t.elapsed()) {
                Some(left) if !left.is_zero() => Some(left),
                _ => {
                    flush(&mut batch, None);
                    continue;
                }
            },
        };
        // Announce the sleep, then look at the queue once more: a gate queued after
        // the look sees the announcement and wakes the thread (see `Exporter::gate`).
        let state = if wait.is_some() { TIMED } else { IDLE };
        shared.state.store(state, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        match rx.try_recv() {
            Ok(g) => {
                shared.state.store(AWAKE, Ordering::SeqCst);
                take(&mut batch, g);
                continue;
            }
            Err(TryRecvError::Disconnected) => break,
            Err(TryRecvError::Empty) => {}
        }
        if !shared.closing.load(Ordering::SeqCst) {
            match wait {
                Some(d) => std::thread::park_timeout(d),
                None => std::thread::park(),
            }
        }
        shared.state.store(AWAKE, Ordering::SeqCst);
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
        while batch.spans < max_batch {
            match rx.try_recv() {
                Ok(g) => take(&mut batch, g),
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
        flush(&mut batch, Some(deadline));
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

/// How a request ended.
enum Attempt {
    /// Sent, or failed for good: counted.
    Done,
    /// An answer OTLP calls transient: not counted yet; the collector may say when to
    /// try again.
    Transient {
        after: Option<Duration>,
        why: String,
    },
}

/// How many times a batch is sent at most.
const ATTEMPTS: u32 = 3;
/// The first pause before sending a batch again (doubled each time).
const RETRY_PAUSE: Duration = Duration::from_millis(200);
/// The longest pause, whatever the collector's `Retry-After` says.
const RETRY_PAUSE_MAX: Duration = Duration::from_secs(5);

/// Whether OTLP/HTTP calls an answer transient (the exporter may send again).
fn transient(status: u16) -> bool {
    matches!(status, 429 | 502 | 503 | 504)
}

/// A `Retry-After` in seconds (the HTTP-date form is not read).
fn retry_after(response: &ureq::Response) -> Option<Duration> {
    response
        .header("Retry-After")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
}

/// One request: POST the batch, count the outcome unless it is transient.
fn send(
    agent: &ureq::Agent,
    config: &ExportConfig,
    shared: &Shared,
    gates: &[GateSpan],
    timeout: Duration,
) -> Attempt {
    if gates.is_empty() {
        return Attempt::Done;
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
        Err(ureq::Error::Status(code, response)) => {
            let why = error_line(&format!(
                "{}: HTTP {code} {}",
                config.traces_url,
                response.status_text()
            ));
            if transient(code) {
                return Attempt::Transient {
                    after: retry_after(&response),
                    why,
                };
            }
            shared.fail(spans, why);
        }
        Err(ureq::Error::Transport(t)) => shared.fail(spans, error_line(&t.to_string())),
    }
    Attempt::Done
}

/// An error as one redacted line of at most 300 characters.
fn error_line(text: &str) -> String {
    super::span::one_line(text, 300)
}
