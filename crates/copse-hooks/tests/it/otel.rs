//! OTLP export (`copse_hooks::otel`): the `OTEL_*` variables, the spans as a real
//! OTLP backend stores them, and a collector that hangs or is absent.
//!
//! The backend is Arize Phoenix (`phoenix serve`, spans in its SQLite database in
//! `PHOENIX_WORKING_DIR`), run on loopback by the test from the virtualenv `.ci/run`
//! installs (`~/.cache/copse-hooks-otel/venv`, or `$COPSE_OTEL_VENV`). The same
//! virtualenv has the reference protobuf implementation of the OTLP messages
//! (`opentelemetry-proto`), which decodes what the exporter writes. Without the
//! virtualenv those tests print why and pass, unless `CI` is set: then they fail.
//! The hung and absent collectors are plain loopback sockets.

use std::ffi::OsString;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use copse_hooks::otel::{self, ExportConfig, Exporter, GateSpan};
use copse_hooks::{
    CanonicalEvent, Decision, Dialect, Failure, FailureKind, HookRun, Outcome, RunOutcome,
    SandboxState, Scope, Verdict,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------

fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect()
}

/// Runs `f` on a thread of its own and returns its result; a hang guard, not a
/// timing: the bound is far beyond what any step should take.
fn within<T: Send + 'static>(
    bound: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(bound) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what} did not return within {bound:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

const SECRET: &str = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";

/// A gate of `run_shell` denied by the second of two hooks; the first allowed. The
/// input carries a secret, which must not leave the machine.
fn denied_gate() -> GateSpan {
    let start = SystemTime::now() - Duration::from_millis(40);
    let mut allow = HookRun::new(
        "beforeShellExecution",
        CanonicalEvent::ToolGate,
        Dialect::Cursor,
        "./hooks/audit.sh",
        "/home/dev/.cursor/hooks.json",
        Scope::User,
    );
    allow.started_at = start + Duration::from_millis(1);
    allow.duration = Duration::from_millis(12);
    allow.exit_code = Some(0);
    allow.outcome = Outcome::decision(Decision::Allow);
    allow.result = RunOutcome::Allow;
    allow.sandbox = SandboxState::Enforced;
    let mut deny = HookRun::new(
        "PreToolUse",
        CanonicalEvent::ToolGate,
        Dialect::Claude,
        "python3 ./guard.py --strict\n# a second line",
        "/work/repo/.claude/settings.json",
        Scope::Project,
    );
    deny.started_at = start + Duration::from_millis(2);
    deny.duration = Duration::from_millis(30);
    deny.exit_code = Some(2);
    let mut outcome = Outcome::decision(Decision::Deny);
    outcome.agent_message = Some(format!("no force pushes (saw {SECRET})"));
    deny.outcome = outcome;
    deny.result = RunOutcome::Deny;
    deny.sandbox = SandboxState::Enforced;
    let mut verdict = Verdict::default();
    verdict.decision = Some(Decision::Deny);
    verdict.runs = vec![allow, deny];

    let mut span = GateSpan::new(CanonicalEvent::ToolGate, start);
    span.vendor_event = Some("PreToolUse".into());
    span.agent = Some("claude-code".into());
    span.tool = Some("Bash".into());
    span.tool_use_id = Some("toolu_01".into());
    span.input_summary = Some(otel::summary(&json!(format!(
        "git push --force origin main # token {SECRET}"
    ))));
    span.session_id = Some("host-session-7".into());
    span.conversation_id = Some("conv-42".into());
    span.turn_id = Some("turn-3".into());
    span.chain_head = Some("c0ffee".into());
    span.record_verdict(&verdict);
    span.runs[1].timeout = Some(Duration::from_secs(30));
    span.runs[1].trust = Some(copse_hooks::TrustState::Trusted);
    span.end = start + Duration::from_millis(35);
    span
}

/// A gate whose only hook timed out (fail closed: denied).
fn timed_out_gate() -> GateSpan {
    let start = SystemTime::now();
    let mut run = HookRun::new(
        "beforeShellExecution",
        CanonicalEvent::ToolGate,
        Dialect::Cursor,
        "sleep 60",
        "/home/dev/.cursor/hooks.json",
        Scope::User,
    );
    run.started_at = start;
    run.duration = Duration::from_secs(1);
    run.failure = Some(Failure {
        kind: FailureKind::Timeout,
        message: "timed out after 1s".into(),
    });
    run.result = RunOutcome::Failed;
    run.outcome = Outcome::decision(Decision::Deny);
    let mut verdict = Verdict::default();
    verdict.decision = Some(Decision::Deny);
    verdict.runs = vec![run];
    let mut span = GateSpan::new(CanonicalEvent::ToolGate, start);
    span.tool = Some("run_shell".into());
    span.record_verdict(&verdict);
    span.end = start + Duration::from_secs(1);
    span
}

/// A prompt gate with no hook configured for it.
fn empty_gate() -> GateSpan {
    let mut span = GateSpan::new(CanonicalEvent::BeforeSubmitPrompt, SystemTime::now());
    span.input_summary = Some(otel::summary(&json!("hello\nworld")));
    span.end = SystemTime::now();
    span
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64
}

/// One HTTP request a loopback listener read.
struct Request {
    head: String,
    body: Vec<u8>,
}

/// Reads one HTTP/1.1 request (head and `Content-Length` body); `None` at EOF.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line.trim_end().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().ok()?;
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request { head, body })
}

/// A loopback collector that answers every request with `status` and `body`, and
/// hands each request it read to the returned receiver.
fn collector(status: &'static str, body: Vec<u8>) -> (String, mpsc::Receiver<Request>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let tx = tx.clone();
            let body = body.clone();
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                while let Some(request) = read_request(&mut reader) {
                    let head = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: application/x-protobuf\r\nContent-Length: {}\r\n\r\n",
                        body.len()
                    );
                    let _ = writer.write_all(head.as_bytes());
                    let _ = writer.write_all(&body);
                    if tx.send(request).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, rx)
}

/// A loopback collector that answers its first `transient` requests with
/// `503 Service Unavailable` (`Retry-After: after` seconds) and the rest with `200 OK`,
/// and hands each request it read to the returned receiver.
fn flaky_collector(transient: usize, after: u64) -> (String, mpsc::Receiver<Request>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (tx, seen) = (tx.clone(), std::sync::Arc::clone(&seen));
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                while let Some(request) = read_request(&mut reader) {
                    let n = seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let head = if n < transient {
                        format!(
                            "HTTP/1.1 503 Service Unavailable\r\nRetry-After: {after}\r\nContent-Length: 0\r\n\r\n"
                        )
                    } else {
                        "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n".to_owned()
                    };
                    // Handed over before the answer: the test counts requests once
                    // the exporter has its answers.
                    if tx.send(request).is_err() {
                        return;
                    }
                    let _ = writer.write_all(head.as_bytes());
                }
            });
        }
    });
    (url, rx)
}

// ---------------------------------------------------------------------------------
// The OTEL_* variables
// ---------------------------------------------------------------------------------

#[test]
fn no_endpoint_means_no_export_and_no_warning() {
    let reading = ExportConfig::from_env(&env(&[("OTEL_SERVICE_NAME", "x"), ("PATH", "/bin")]));
    assert!(reading.config.is_none());
    assert!(reading.warnings.is_empty(), "{:?}", reading.warnings);
    // An empty value is unset.
    let reading = ExportConfig::from_env(&env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "")]));
    assert!(reading.config.is_none());
}

#[test]
fn endpoints_follow_the_specification() {
    let generic = ExportConfig::from_env(&env(&[(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "http://collector:4318/base/",
    )]));
    assert_eq!(
        generic.config.unwrap().traces_url,
        "http://collector:4318/base/v1/traces"
    );
    let specific = ExportConfig::from_env(&env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:4318"),
        (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "https://traces.example/custom",
        ),
    ]));
    assert!(specific.warnings.is_empty(), "{:?}", specific.warnings);
    assert_eq!(
        specific.config.unwrap().traces_url,
        "https://traces.example/custom"
    );

    let bad = ExportConfig::from_env(&env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")]));
    assert!(bad.config.is_none());
    assert!(
        bad.warnings[0].starts_with("OTEL_EXPORTER_OTLP_ENDPOINT:")
            && bad.warnings[0].contains("not an http:// or https:// URL"),
        "{:?}",
        bad.warnings
    );
}

#[test]
fn disabled_sdk_or_exporter_none_means_no_export() {
    let base = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")];
    for off in [
        ("OTEL_SDK_DISABLED", "TRUE"),
        ("OTEL_TRACES_EXPORTER", "none"),
    ] {
        let reading = ExportConfig::from_env(&env(&[base[0], off]));
        assert!(reading.config.is_none(), "{off:?}");
    }
    let console = ExportConfig::from_env(&env(&[base[0], ("OTEL_TRACES_EXPORTER", "console")]));
    assert!(console.config.is_none());
    assert!(
        console.warnings[0].contains("only over OTLP"),
        "{:?}",
        console.warnings
    );
    let on = ExportConfig::from_env(&env(&[base[0], ("OTEL_SDK_DISABLED", "false")]));
    assert!(on.config.is_some() && on.warnings.is_empty());
}

#[test]
fn headers_are_percent_decoded_and_never_shown() {
    let reading = ExportConfig::from_env(&env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "generic=ignored"),
        (
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
            "Authorization=Bearer%20s3cr3t-token, x-team = a%2Cb ,novalue,bad name=v,x-nl=a%0Ab",
        ),
    ]));
    let config = reading.config.unwrap();
    assert_eq!(
        config.headers,
        [
            ("Authorization".to_owned(), "Bearer s3cr3t-token".to_owned()),
            ("x-team".to_owned(), "a,b".to_owned())
        ],
        "the traces headers replace the generic ones"
    );
    assert_eq!(reading.warnings.len(), 3, "{:?}", reading.warnings);
    assert!(reading.warnings[0].contains("entry 3 has no '='"));
    assert!(reading.warnings[1].contains("\"bad name\" is not a valid header name"));
    assert!(reading.warnings[2].contains("\"x-nl\" contains a control character"));
    let shown = format!("{config:?} {:?}", reading.warnings);
    assert!(!shown.contains("s3cr3t"), "{shown}");
    assert!(shown.contains("Authorization"), "{shown}");
}

#[test]
fn protocol_timeout_compression_and_batching() {
    let reading = ExportConfig::from_env(&env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
        ("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip"),
        ("OTEL_BSP_SCHEDULE_DELAY", "250"),
        ("OTEL_BSP_MAX_QUEUE_SIZE", "64"),
        ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "soon"),
    ]));
    let config = reading.config.expect("grpc is warned about, not fatal");
    assert_eq!(config.timeout, Duration::from_millis(2500));
    assert_eq!(config.schedule_delay, Duration::from_millis(250));
    assert_eq!(config.max_queue, 64);
    assert_eq!(config.max_batch, otel::DEFAULT_MAX_BATCH);
    let w = &reading.warnings;
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(
        w[0].starts_with("OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: use http/protobuf"),
        "{w:?}"
    );
    assert!(
        w[1].starts_with("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=\"gzip\""),
        "{w:?}"
    );
    assert!(
        w[2].starts_with("OTEL_BSP_MAX_EXPORT_BATCH_SIZE=\"soon\""),
        "{w:?}"
    );

    let bad = ExportConfig::from_env(&env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
        ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "0"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
    ]));
    assert_eq!(bad.config.unwrap().timeout, otel::DEFAULT_TIMEOUT);
    assert_eq!(bad.warnings.len(), 2, "{:?}", bad.warnings);
    assert!(bad.warnings[0].contains("http/json is not supported"));
    assert!(bad.warnings[1].starts_with("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT=\"0\""));
}

#[test]
fn resource_attributes() {
    let value = |config: &ExportConfig, key: &str| {
        config
            .resource
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let plain = ExportConfig::from_env(&env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
        ("USER", "dev1"),
    ]))
    .config
    .unwrap();
    assert_eq!(
        value(&plain, "service.name").as_deref(),
        Some("copse-hooks")
    );
    assert_eq!(value(&plain, "process.owner").as_deref(), Some("dev1"));
    let host = value(&plain, "host.name").expect("host.name");
    assert!(!host.is_empty());

    let reading = ExportConfig::from_env(&env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "service.name=from-attrs,deployment.environment=ci%20lab,host.name=pinned,oops",
        ),
        ("OTEL_SERVICE_NAME", "from-service-name"),
    ]));
    let config = reading.config.unwrap();
    assert_eq!(
        value(&config, "service.name").as_deref(),
        Some("from-service-name")
    );
    assert_eq!(
        value(&config, "deployment.environment").as_deref(),
        Some("ci lab")
    );
    assert_eq!(value(&config, "host.name").as_deref(), Some("pinned"));
    assert_eq!(
        config
            .resource
            .iter()
            .filter(|(k, _)| k == "host.name")
            .count(),
        1,
        "a user attribute replaces a detected one"
    );
    assert_eq!(reading.warnings.len(), 1, "{:?}", reading.warnings);
    assert!(reading.warnings[0].starts_with("OTEL_RESOURCE_ATTRIBUTES: entry 4"));
}

// ---------------------------------------------------------------------------------
// Collectors that answer, fail, hang or are absent (loopback sockets)
// ---------------------------------------------------------------------------------

#[test]
fn requests_carry_the_headers_and_answers_are_counted() {
    // ExportTraceServiceResponse { partial_success { rejected_spans: 1, error_message } }
    let mut partial = vec![0x08, 0x01, 0x12, 0x0b];
    partial.extend_from_slice(b"span too ol");
    let mut body = vec![0x0a, partial.len() as u8];
    body.extend_from_slice(&partial);
    let (url, requests) = collector("200 OK", body);
    let mut config = ExportConfig::new(&url);
    config.headers = vec![("x-api-key".into(), "k-123".into())];
    config.schedule_delay = Duration::from_millis(10);
    let exporter = Exporter::start(config);
    exporter.gate(denied_gate());
    let report = within(Duration::from_secs(30), "shutdown", move || {
        let r = exporter.shutdown(Duration::from_secs(20));
        (r, exporter)
    });
    let (report, _exporter) = report;
    assert!(report.completed);
    assert_eq!(
        report.stats.exported, 2,
        "3 spans, 1 rejected: {:?}",
        report.stats
    );
    assert_eq!(report.stats.failed, 1);
    assert_eq!(
        report.stats.failed_batches, 0,
        "a partial success is not a failed request"
    );
    assert_eq!(report.stats.pending, 0);
    assert_eq!(
        report.stats.last_error.as_deref(),
        Some("the collector rejected 1 of 3 spans: span too ol")
    );
    let request = requests.recv_timeout(Duration::from_secs(5)).unwrap();
    let head = request.head.to_ascii_lowercase();
    assert!(head.starts_with("post /v1/traces http/1.1\r\n"), "{head}");
    assert!(
        head.contains("\r\ncontent-type: application/x-protobuf\r\n"),
        "{head}"
    );
    assert!(head.contains("\r\nx-api-key: k-123\r\n"), "{head}");
    assert!(head.contains("\r\nuser-agent: copse-hooks/"), "{head}");
    assert!(!request.body.is_empty());

    let (url, _requests) = collector("400 Bad Request", b"nope".to_vec());
    let exporter = Exporter::start(ExportConfig::new(&url));
    exporter.gate(empty_gate());
    let report = exporter.shutdown(Duration::from_secs(20));
    assert!(report.completed);
    assert_eq!((report.stats.exported, report.stats.failed), (0, 1));
    assert_eq!(report.stats.failed_batches, 1);
    assert_eq!(report.stats.retries, 0, "a 400 is not sent again");
    let error = report.stats.last_error.unwrap();
    assert_eq!(error, format!("{url}: HTTP 400 Bad Request"));
}

#[test]
fn a_transient_answer_is_sent_again_and_a_lasting_one_fails_after_three_tries() {
    // 503 once, then 200: delivered by the second request.
    let (url, requests) = flaky_collector(1, 0);
    let mut config = ExportConfig::new(&url);
    config.schedule_delay = Duration::from_millis(10);
    let exporter = Exporter::start(config);
    exporter.gate(denied_gate());
    let report = exporter.shutdown(Duration::from_secs(20));
    assert!(report.completed);
    assert_eq!(
        (
            report.stats.exported,
            report.stats.failed,
            report.stats.retries
        ),
        (3, 0, 1),
        "{:?}",
        report.stats
    );
    assert_eq!(requests.try_iter().count(), 2);

    // 503 every time: three requests, then the batch fails (counted once).
    let (url, requests) = flaky_collector(usize::MAX, 0);
    let exporter = Exporter::start(ExportConfig::new(&url));
    exporter.gate(denied_gate());
    let report = exporter.shutdown(Duration::from_secs(20));
    assert!(report.completed);
    assert_eq!(
        (
            report.stats.exported,
            report.stats.failed,
            report.stats.failed_batches
        ),
        (0, 3, 1),
        "{:?}",
        report.stats
    );
    assert_eq!(report.stats.retries, 2);
    assert_eq!(requests.try_iter().count(), 3);
    assert_eq!(
        report.stats.last_error.as_deref(),
        Some(format!("{url}: HTTP 503 Service Unavailable").as_str())
    );
}

#[test]
fn a_shutdown_cuts_a_retry_pause_short() {
    // The collector asks for 5 s between tries (the longest pause taken): without
    // the cut, three tries would hold the shutdown for 10 s.
    let (url, requests) = flaky_collector(usize::MAX, 5);
    let exporter = Exporter::start(ExportConfig::new(&url));
    exporter.gate(denied_gate());
    // Control: the first try was made and answered 503 before the shutdown.
    requests.recv_timeout(Duration::from_secs(10)).unwrap();
    let (report, _exporter) = within(Duration::from_secs(8), "shutdown", move || {
        (exporter.shutdown(Duration::from_secs(20)), exporter)
    });
    assert!(report.completed);
    assert_eq!((report.stats.failed, report.stats.failed_batches), (3, 1));
}

#[test]
fn nothing_listening_is_counted_and_shutdown_completes() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/v1/traces");
    let mut config = ExportConfig::new(&url);
    config.schedule_delay = Duration::from_millis(10);
    config.max_batch = 2;
    let exporter = Exporter::start(config);
    for _ in 0..3 {
        exporter.gate(empty_gate());
    }
    exporter.gate(timed_out_gate());
    let (report, _exporter) = within(Duration::from_secs(30), "shutdown", move || {
        (exporter.shutdown(Duration::from_secs(20)), exporter)
    });
    assert!(report.completed, "a refused connection fails at once");
    let s = report.stats;
    assert_eq!(
        (s.exported, s.failed, s.pending, s.dropped),
        (0, 5, 0, 0),
        "{s:?}"
    );
    assert!(s.failed_batches >= 2, "batches of at most 2 spans: {s:?}");
    let error = s.last_error.unwrap();
    assert!(error.starts_with(&url), "{error}");
    assert!(error.to_lowercase().contains("refused"), "{error}");
}

#[test]
fn a_hung_collector_never_holds_a_gate_and_shutdown_keeps_its_deadline() {
    // Accepts, reads the request, never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    let (got, requests) = mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            if read_request(&mut reader).is_some() {
                let _ = got.send(());
            }
            held.push((stream, reader));
        }
    });
    let mut config = ExportConfig::new(&url);
    config.max_queue = 4;
    config.schedule_delay = Duration::from_millis(10);
    config.timeout = Duration::from_secs(120);
    let exporter = Exporter::start(config);

    exporter.gate(timed_out_gate());
    requests
        .recv_timeout(Duration::from_secs(30))
        .expect("the first batch reached the collector");
    // The export thread now waits on the collector; the queue takes 4 gates and the
    // rest are dropped, each call returning at once.
    let (exporter, stats) = within(Duration::from_secs(30), "100 gates", move || {
        for _ in 0..100 {
            exporter.gate(timed_out_gate());
        }
        let stats = exporter.stats();
        (exporter, stats)
    });
    assert_eq!(stats.dropped, 96 * 2, "{stats:?}");
    assert_eq!(
        stats.pending,
        2 + 4 * 2,
        "one batch in flight, four gates queued: {stats:?}"
    );
    assert_eq!(stats.exported, 0);

    let report = within(Duration::from_secs(30), "shutdown", move || {
        exporter.shutdown(Duration::from_millis(300))
    });
    assert!(!report.completed, "the request in flight still hangs");
    assert_eq!(
        report.stats.pending, 10,
        "undelivered spans reported: {:?}",
        report.stats
    );
    assert_eq!(report.stats.exported, 0);
}

/// Waits (a hang guard, not a timing) until the exporter says `exported` spans went
/// out, without a shutdown: the thread was woken, or woke itself, in time.
fn wait_exported(exporter: &Exporter, exported: u64, what: &str) {
    let until = Instant::now() + Duration::from_secs(30);
    while exporter.stats().exported < exported {
        assert!(
            Instant::now() < until,
            "{what}: {:?} after 30 s, {exported} expected",
            exporter.stats()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn an_idle_exporter_is_woken_by_the_next_gate() {
    let (url, _requests) = collector("200 OK", Vec::new());
    let mut config = ExportConfig::new(&url);
    config.schedule_delay = Duration::from_millis(5);
    let exporter = std::sync::Arc::new(Exporter::start(config));
    let mut sent = 0;
    for cycle in 0..20 {
        // Four threads at once, after the thread went idle (everything sent).
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let exporter = std::sync::Arc::clone(&exporter);
                std::thread::spawn(move || exporter.gate(empty_gate()))
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        sent += 4;
        wait_exported(&exporter, sent, &format!("cycle {cycle}"));
    }
    assert_eq!(exporter.stats().dropped, 0);
}

#[test]
fn a_full_batch_is_sent_before_its_delay() {
    let (url, _requests) = collector("200 OK", Vec::new());
    let mut config = ExportConfig::new(&url);
    config.max_batch = 4;
    config.schedule_delay = Duration::from_secs(3600);
    let exporter = Exporter::start(config);
    // Two gates of two spans: the second fills the batch and wakes the thread,
    // which otherwise sleeps for an hour.
    exporter.gate(timed_out_gate());
    exporter.gate(timed_out_gate());
    wait_exported(&exporter, 4, "a full batch");
    exporter.gate(timed_out_gate());
    let report = exporter.shutdown(Duration::from_secs(20));
    assert!(report.completed);
    assert_eq!(
        report.stats.exported, 6,
        "the shutdown sends the partial batch"
    );
}

#[test]
fn gates_after_shutdown_are_dropped() {
    let (url, _requests) = collector("200 OK", Vec::new());
    let exporter = Exporter::start(ExportConfig::new(&url));
    exporter.gate(denied_gate());
    let report = exporter.shutdown(Duration::from_secs(20));
    assert!(report.completed);
    assert_eq!(report.stats.exported, 3);
    exporter.gate(denied_gate());
    let again = exporter.shutdown(Duration::from_secs(1));
    assert!(again.completed);
    assert_eq!((again.stats.exported, again.stats.dropped), (3, 3));
}

// ---------------------------------------------------------------------------------
// The real backend and the reference decoder
// ---------------------------------------------------------------------------------

/// The virtualenv with Phoenix and `opentelemetry-proto`; `None` (the test then
/// passes, saying why) when it is missing and `CI` is unset.
fn backend_venv(test: &str) -> Option<PathBuf> {
    let venv = std::env::var_os("COPSE_OTEL_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/copse-hooks-otel/venv"))
        })?;
    if venv.join("bin/phoenix").is_file() && venv.join("bin/python").is_file() {
        return Some(venv);
    }
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    assert!(
        !ci,
        "{test}: Arize Phoenix is not installed in {} (.ci/run installs it there)",
        venv.display()
    );
    println!(
        "SKIPPED {test}: Arize Phoenix is not installed in {} (run .ci/run, or set COPSE_OTEL_VENV)",
        venv.display()
    );
    None
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `phoenix serve` on loopback ports with its database in a temp directory; killed
/// (its whole process group) when dropped.
struct Phoenix {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
}

impl Phoenix {
    fn start(venv: &Path) -> Phoenix {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let log = std::fs::File::create(dir.path().join("phoenix.log")).unwrap();
        let mut command = Command::new(venv.join("bin/phoenix"));
        command
            .arg("serve")
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .env("PHOENIX_DISABLE_AGENT_ASSISTANT", "true")
            .env("PHOENIX_AGENTS_DISABLE_BASH", "true")
            .env("PHOENIX_AGENTS_DISABLE_WEB_ACCESS", "true")
            .env("PHOENIX_AGENTS_DISABLE_GITHUB", "true")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0);
        // SAFETY: between fork and exec the closure only makes one async-signal-safe
        // system call (prctl), allocating nothing.
        unsafe {
            command.pre_exec(|| {
                rustix::process::set_parent_process_death_signal(Some(
                    rustix::process::Signal::KILL,
                ))
                .map_err(std::io::Error::from)
            });
        }
        let child = command.spawn().expect("phoenix serve starts");
        let mut phoenix = Phoenix { child, dir, port };
        phoenix.wait_ready();
        phoenix
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("phoenix.log")).unwrap_or_default()
    }

    fn wait_ready(&mut self) {
        let url = format!("http://127.0.0.1:{}/healthz", self.port);
        let until = Instant::now() + Duration::from_secs(240);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let log = self.log();
                panic!("phoenix serve exited ({status}):\n{}", tail(&log));
            }
            if ureq::get(&url)
                .timeout(Duration::from_secs(5))
                .call()
                .is_ok_and(|r| r.status() == 200)
            {
                return;
            }
            assert!(
                Instant::now() < until,
                "phoenix serve was not ready after 240 s:\n{}",
                tail(&self.log())
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Every span of `project` as Phoenix stored it: (name, span id, parent id,
    /// trace id, attributes, status code, status message), waiting until there are
    /// `expected` of them (Phoenix inserts in batches).
    fn spans(&self, project: &str, expected: usize) -> Vec<Stored> {
        let db = self.dir.path().join("phoenix.db");
        let until = Instant::now() + Duration::from_secs(120);
        loop {
            let spans = read_spans(&db, project);
            if spans.len() >= expected {
                return spans;
            }
            assert!(
                Instant::now() < until,
                "Phoenix stored {} of {expected} spans after 120 s:\n{}",
                spans.len(),
                tail(&self.log())
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.child.wait();
    }
}

fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().filter(|l| !l.contains("sqlalchemy")).collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

#[derive(Debug)]
struct Stored {
    name: String,
    span_id: String,
    parent_id: Option<String>,
    trace_id: String,
    attributes: Value,
    status_code: String,
    status_message: String,
    start: String,
}

fn read_spans(db: &Path, project: &str) -> Vec<Stored> {
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return Vec::new();
    };
    let sql = "SELECT s.name, s.span_id, s.parent_id, t.trace_id, s.attributes, s.status_code,
                      s.status_message, s.start_time
               FROM spans s JOIN traces t ON s.trace_rowid = t.id
                            JOIN projects p ON t.project_rowid = p.id
               WHERE p.name = ?1 ORDER BY s.start_time, s.name";
    let Ok(mut stmt) = conn.prepare(sql) else {
        return Vec::new();
    };
    let rows = stmt.query_map([project], |r| {
        Ok(Stored {
            name: r.get(0)?,
            span_id: r.get(1)?,
            parent_id: r.get(2)?,
            trace_id: r.get(3)?,
            attributes: serde_json::from_str(&r.get::<_, String>(4)?).unwrap_or(Value::Null),
            status_code: r.get(5)?,
            status_message: r.get(6)?,
            start: r.get(7)?,
        })
    });
    match rows {
        Ok(rows) => rows.flatten().collect(),
        Err(_) => Vec::new(),
    }
}

/// An attribute Phoenix stored: it nests dotted keys (`copse.hook.dialect` is
/// `{"copse": {"hook": {"dialect": …}}}`).
fn attr(attributes: &Value, key: &str) -> Value {
    key.split('.')
        .fold(attributes, |v, part| v.get(part).unwrap_or(&Value::Null))
        .clone()
}

#[test]
fn spans_reach_phoenix_with_their_attributes_and_parents() {
    let Some(venv) = backend_venv("spans_reach_phoenix_with_their_attributes_and_parents") else {
        return;
    };
    let phoenix = Phoenix::start(&venv);
    let project = format!("copse-it-{}", std::process::id());
    let reading = ExportConfig::from_env(&env(&[
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            &format!("http://127.0.0.1:{}", phoenix.port),
        ),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "authorization=Bearer%20unused",
        ),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            &format!("openinference.project.name={project},deployment.environment=test"),
        ),
        ("OTEL_SERVICE_NAME", "copse-it"),
        ("OTEL_BSP_SCHEDULE_DELAY", "50"),
    ]));
    assert!(reading.warnings.is_empty(), "{:?}", reading.warnings);
    let exporter = Exporter::start(reading.config.unwrap());
    let denied = denied_gate();
    let timed_out = timed_out_gate();
    let empty = empty_gate();
    let (gate_id, trace_id) = (hex(&denied.span_id), hex(&denied.trace_id));
    let run_ids: Vec<String> = denied.runs.iter().map(|r| hex(&r.span_id)).collect();
    let timed_out_run = hex(&timed_out.runs[0].span_id);
    exporter.gate(denied);
    exporter.gate(timed_out);
    exporter.gate(empty);
    let (report, _exporter) = within(Duration::from_secs(60), "shutdown", move || {
        (exporter.shutdown(Duration::from_secs(30)), exporter)
    });
    assert!(report.completed, "{report:?}");
    assert_eq!(report.stats.exported, 6, "{:?}", report.stats);
    assert_eq!(report.stats.last_error, None);

    let spans = phoenix.spans(&project, 6);
    assert_eq!(spans.len(), 6, "{spans:#?}");
    let by_id = |id: &str| {
        spans
            .iter()
            .find(|s| s.span_id == id)
            .unwrap_or_else(|| panic!("{id} in {spans:#?}"))
    };

    let gate = by_id(&gate_id);
    assert_eq!(gate.name, "copse.gate toolGate");
    assert_eq!(gate.parent_id, None);
    assert_eq!(gate.trace_id, trace_id);
    let a = &gate.attributes;
    assert_eq!(attr(a, "copse.event"), "toolGate");
    assert_eq!(attr(a, "copse.vendor_event"), "PreToolUse");
    assert_eq!(attr(a, "gen_ai.agent.name"), "claude-code");
    assert_eq!(attr(a, "gen_ai.conversation.id"), "conv-42");
    assert_eq!(attr(a, "copse.session.id"), "host-session-7");
    assert_eq!(attr(a, "copse.turn.id"), "turn-3");
    assert_eq!(attr(a, "copse.tool.name"), "Bash");
    assert_eq!(attr(a, "copse.tool.call_id"), "toolu_01");
    assert_eq!(
        attr(a, "copse.tool.input"),
        "git push --force origin main # token [REDACTED:anthropic]"
    );
    assert_eq!(attr(a, "copse.decision"), "deny");
    assert_eq!(
        attr(a, "copse.decider.hook"),
        "python3 ./guard.py --strict # a second line"
    );
    assert_eq!(
        attr(a, "copse.decider.message"),
        "no force pushes (saw [REDACTED:anthropic])"
    );
    assert_eq!(attr(a, "copse.run_count"), 2);
    assert_eq!(attr(a, "copse.audit.chain_head"), "c0ffee");
    assert!(
        !a.to_string().contains("abcdefghij"),
        "no secret stored: {a}"
    );

    let allow = by_id(&run_ids[0]);
    let deny = by_id(&run_ids[1]);
    for run in [allow, deny] {
        assert_eq!(run.parent_id.as_deref(), Some(gate_id.as_str()), "{run:?}");
        assert_eq!(run.trace_id, trace_id);
        assert_eq!(
            attr(&run.attributes, "gen_ai.operation.name"),
            "execute_tool"
        );
        assert_eq!(run.status_code, "UNSET");
    }
    assert_eq!(allow.name, "execute_tool ./hooks/audit.sh");
    assert_eq!(deny.name, "execute_tool python3 ./guard.py --strict");
    let d = &deny.attributes;
    assert_eq!(attr(d, "gen_ai.tool.name"), "python3 ./guard.py --strict");
    assert_eq!(attr(d, "copse.hook.dialect"), "claude");
    assert_eq!(attr(d, "copse.hook.event"), "PreToolUse");
    assert_eq!(
        attr(d, "copse.hook.command"),
        "python3 ./guard.py --strict # a second line"
    );
    assert_eq!(
        attr(d, "copse.hook.source"),
        "/work/repo/.claude/settings.json"
    );
    assert_eq!(attr(d, "copse.hook.scope"), "project");
    assert_eq!(attr(d, "copse.hook.exit_code"), 2);
    assert_eq!(attr(d, "copse.hook.duration_ms"), 30);
    assert_eq!(attr(d, "copse.hook.timeout_ms"), 30_000);
    assert_eq!(attr(d, "copse.hook.sandbox"), "enforced");
    assert_eq!(attr(d, "copse.hook.leaked"), false);
    assert_eq!(attr(d, "copse.hook.result"), "deny");
    assert_eq!(attr(d, "copse.hook.decision"), "deny");
    assert_eq!(attr(d, "copse.hook.policy"), "closed");
    assert_eq!(attr(d, "copse.hook.trust"), "trusted");
    assert_eq!(attr(&allow.attributes, "copse.hook.dialect"), "cursor");
    assert_eq!(attr(&allow.attributes, "copse.hook.decision"), "allow");
    assert!(allow.start <= deny.start, "stored in start order");

    let failed = by_id(&timed_out_run);
    assert_eq!(failed.status_code, "ERROR");
    assert_eq!(failed.status_message, "timed out after 1s");
    assert_eq!(attr(&failed.attributes, "error.type"), "timeout");
    assert_eq!(
        attr(&failed.attributes, "copse.hook.failure.kind"),
        "timeout"
    );
    assert_eq!(attr(&failed.attributes, "copse.hook.result"), "failed");
    assert_eq!(
        attr(&failed.attributes, "copse.hook.exit_code"),
        Value::Null
    );

    let prompt = spans
        .iter()
        .find(|s| s.name == "copse.gate beforeSubmitPrompt")
        .expect("the prompt gate");
    assert_eq!(attr(&prompt.attributes, "copse.tool.input"), "hello world");
    assert_eq!(attr(&prompt.attributes, "copse.run_count"), 0);
    assert_eq!(attr(&prompt.attributes, "copse.decision"), "allow");
}

#[test]
fn the_reference_protobuf_decoder_reads_what_the_exporter_writes() {
    let Some(venv) = backend_venv("the_reference_protobuf_decoder_reads_what_the_exporter_writes")
    else {
        return;
    };
    let mut config = ExportConfig::new("http://127.0.0.1:9/v1/traces");
    config.resource = vec![
        ("service.name".into(), "copse-it".into()),
        ("process.owner".into(), "dev1".into()),
    ];
    let mut gate = timed_out_gate();
    gate.runs[0].exit_code = Some(-2);
    gate.runs[0].leaked = true;
    let body = otel::encode_request(&config, std::slice::from_ref(&gate));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("request.pb");
    std::fs::write(&file, &body).unwrap();
    let script = r#"
import json, sys
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
data = open(sys.argv[1], "rb").read()
request = ExportTraceServiceRequest.FromString(data)
print(json.dumps({"canonical": request.SerializeToString() == data, "request": MessageToDict(request)}))
"#;
    let out = Command::new(venv.join("bin/python"))
        .args(["-c", script])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoded: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        decoded["canonical"], true,
        "re-encoding gives the same bytes"
    );
    let rs = &decoded["request"]["resourceSpans"][0];
    assert_eq!(
        rs["resource"]["attributes"],
        json!([
            {"key": "service.name", "value": {"stringValue": "copse-it"}},
            {"key": "process.owner", "value": {"stringValue": "dev1"}},
        ])
    );
    let ss = &rs["scopeSpans"][0];
    assert_eq!(ss["scope"]["name"], "copse-hooks");
    assert_eq!(ss["scope"]["version"], env!("CARGO_PKG_VERSION"));
    let spans = ss["spans"].as_array().unwrap();
    assert_eq!(spans.len(), 2);
    let b64 = base64_decode;
    let (g, r) = (&spans[0], &spans[1]);
    assert_eq!(b64(g["traceId"].as_str().unwrap()), gate.trace_id);
    assert_eq!(b64(g["spanId"].as_str().unwrap()), gate.span_id);
    assert_eq!(g.get("parentSpanId"), None);
    assert_eq!(b64(r["traceId"].as_str().unwrap()), gate.trace_id);
    assert_eq!(b64(r["parentSpanId"].as_str().unwrap()), gate.span_id);
    assert_eq!(b64(r["spanId"].as_str().unwrap()), gate.runs[0].span_id);
    for s in [g, r] {
        assert_eq!(s["kind"], "SPAN_KIND_INTERNAL");
    }
    assert_eq!(g["startTimeUnixNano"], nanos(gate.start).to_string());
    assert_eq!(g["endTimeUnixNano"], nanos(gate.end).to_string());
    assert_eq!(
        r["endTimeUnixNano"],
        nanos(gate.runs[0].start + gate.runs[0].duration).to_string()
    );
    assert_eq!(g.get("status"), None, "a gate's status is unset");
    assert_eq!(
        r["status"],
        json!({"code": "STATUS_CODE_ERROR", "message": "timed out after 1s"})
    );
    let find = |span: &Value, key: &str| {
        span["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|kv| kv["key"] == key)
            .map(|kv| kv["value"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(find(r, "copse.hook.exit_code"), json!({"intValue": "-2"}));
    assert_eq!(find(r, "copse.hook.leaked"), json!({"boolValue": true}));
    assert_eq!(
        find(r, "copse.hook.duration_ms"),
        json!({"intValue": "1000"})
    );
    assert_eq!(find(r, "error.type"), json!({"stringValue": "timeout"}));
    assert_eq!(find(g, "copse.decision"), json!({"stringValue": "deny"}));
    assert_eq!(find(g, "copse.run_count"), json!({"intValue": "1"}));
}

/// Standard base64 (what `MessageToDict` writes for `bytes`).
fn base64_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = ALPHABET.iter().position(|&a| a == c).expect("base64") as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

// ---------------------------------------------------------------------------------
// Three layers: the managed settings, the OTEL_* variables, the user's settings
// ---------------------------------------------------------------------------------

#[test]
fn the_user_settings_alone_turn_export_on() {
    let user = json!({
        "endpoint": "http://collector.example:4318/",
        "headers": {"x-team-token": "tok-SECRET-value"},
        "serviceName": "copse-laptops",
        "resourceAttributes": {"deployment.environment": "dev"},
        "timeoutMs": 2500,
        "includePayloads": true,
    });
    let r = ExportConfig::resolve(&[], Some(&user), None);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let c = r.config.expect("export on from the settings alone");
    assert_eq!(c.traces_url, "http://collector.example:4318/v1/traces");
    assert_eq!(
        c.headers,
        [("x-team-token".to_owned(), "tok-SECRET-value".to_owned())]
    );
    assert_eq!(c.timeout, Duration::from_millis(2500));
    assert!(c.include_payloads);
    let res = |k: &str| {
        c.resource
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(res("service.name").as_deref(), Some("copse-laptops"));
    assert_eq!(res("deployment.environment").as_deref(), Some("dev"));
    // Payloads stay off unless asked for; `tracesEndpoint` is used as is.
    let r = ExportConfig::resolve(
        &[],
        Some(&json!({"tracesEndpoint": "https://c.example/otlp/spans"})),
        None,
    );
    let c = r.config.unwrap();
    assert_eq!(c.traces_url, "https://c.example/otlp/spans");
    assert!(!c.include_payloads);
    // `enabled: true` without an endpoint says so.
    let r = ExportConfig::resolve(&[], Some(&json!({"enabled": true})), None);
    assert!(r.config.is_none());
    assert!(r.warnings[0].contains("no endpoint"), "{:?}", r.warnings);
}

#[test]
fn the_variables_win_over_the_user_settings_and_either_turns_export_off() {
    let user = json!({
        "endpoint": "http://from-settings:4318",
        "timeoutMs": 2500,
        "serviceName": "from-settings",
        "headers": {"a": "settings", "b": "settings"},
    });
    let vars = env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://from-env:4318"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "900"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "b=env"),
    ]);
    let r = ExportConfig::resolve(&vars, Some(&user), None);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let c = r.config.unwrap();
    assert_eq!(c.traces_url, "http://from-env:4318/v1/traces");
    assert_eq!(c.timeout, Duration::from_millis(900));
    assert_eq!(
        c.headers,
        [
            ("a".to_owned(), "settings".to_owned()),
            ("b".to_owned(), "env".to_owned())
        ]
    );
    let service = c
        .resource
        .iter()
        .find(|(k, _)| k == "service.name")
        .unwrap();
    assert_eq!(
        service.1, "from-settings",
        "no OTEL_SERVICE_NAME: the settings' applies"
    );
    // Off from either side.
    let off = env(&[("OTEL_SDK_DISABLED", "true")]);
    assert!(
        ExportConfig::resolve(&off, Some(&user), None)
            .config
            .is_none()
    );
    let r = ExportConfig::resolve(&vars, Some(&json!({"enabled": false})), None);
    assert!(
        r.config.is_none(),
        "the user's off-switch holds against the variables"
    );
}

#[test]
fn a_pinned_endpoint_cannot_be_changed_or_turned_off() {
    let pinned = json!({
        "endpoint": "https://collector.corp.example",
        "headers": {"authorization": "Bearer corp-TOKEN"},
        "resourceAttributes": {"host.name": "pinned-host"},
    });
    let vars = env(&[
        (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://attacker.example/v1/traces",
        ),
        ("OTEL_SDK_DISABLED", "true"),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "authorization=Bearer%20mine,x-extra=1",
        ),
        ("OTEL_RESOURCE_ATTRIBUTES", "host.name=spoofed"),
    ]);
    let user = json!({"enabled": false, "endpoint": "http://elsewhere:4318"});
    let r = ExportConfig::resolve(&vars, Some(&user), Some(&pinned));
    let c = r.config.expect("the managed layer keeps export on");
    assert_eq!(c.traces_url, "https://collector.corp.example/v1/traces");
    assert_eq!(
        c.headers,
        [
            ("authorization".to_owned(), "Bearer corp-TOKEN".to_owned()),
            ("x-extra".to_owned(), "1".to_owned())
        ]
    );
    let host = c.resource.iter().find(|(k, _)| k == "host.name").unwrap();
    assert_eq!(host.1, "pinned-host");
    // Each attempt is said, and no header value is.
    let all = r.warnings.join("\n");
    for said in [
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is ignored",
        "settings otel.endpoint is ignored",
        "OTEL_SDK_DISABLED=true is ignored",
        "settings otel.enabled=false is ignored",
    ] {
        assert!(all.contains(said), "{said:?} in {all}");
    }
    assert!(
        !all.contains("corp-TOKEN") && !all.contains("mine"),
        "{all}"
    );
    // Control: without the pinned layer the same variables turn export off.
    assert!(
        ExportConfig::resolve(&vars, Some(&user), None)
            .config
            .is_none()
    );
    // A pinned off-switch wins over an endpoint anywhere else.
    let r = ExportConfig::resolve(
        &env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://from-env:4318")]),
        Some(&json!({"endpoint": "http://from-settings:4318"})),
        Some(&json!({"enabled": false})),
    );
    assert!(r.config.is_none());
    // A pinned endpoint that is not a URL: no export, not a fallback to the user's.
    let r = ExportConfig::resolve(
        &[],
        Some(&json!({"endpoint": "http://from-settings:4318"})),
        Some(&json!({"endpoint": "collector:4318"})),
    );
    assert!(r.config.is_none());
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("managed otel.endpoint")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn bad_settings_keys_are_warnings_naming_the_key() {
    let user = json!({
        "endpoint": "not a url \u{1b}[31m",
        "timeoutMs": "soon",
        "colour": "blue",
        "headers": {"bad name": "v", "ok": "line\nbreak"},
    });
    let r = ExportConfig::resolve(&[], Some(&user), None);
    assert!(r.config.is_none());
    let all = r.warnings.join("\n");
    assert!(
        all.contains("settings otel.timeoutMs is not valid"),
        "{all}"
    );
    assert!(
        all.contains("settings otel.colour is not a known key"),
        "{all}"
    );
    assert!(
        all.contains(
            r#"settings otel.endpoint: "not a url \u{1b}[31m/v1/traces" is not an http:// or https:// URL"#
        ),
        "escaped: {all}"
    );
    assert!(!all.contains('\u{1b}'), "{all}");
    let r = ExportConfig::resolve(
        &[],
        Some(
            &json!({"endpoint": "http://c:4318", "headers": {"bad name": "v", "ok": "line\nbreak"}}),
        ),
        None,
    );
    assert!(r.config.unwrap().headers.is_empty());
    let all = r.warnings.join("\n");
    assert!(
        all.contains(r#""bad name" is not a valid header name"#),
        "{all}"
    );
    assert!(
        all.contains(r#"header "ok" contains a control character"#),
        "{all}"
    );
    assert!(!all.contains("break"), "{all}");
    // Not an object at all.
    let r = ExportConfig::resolve(&[], Some(&json!("http://c:4318")), None);
    assert!(r.config.is_none());
    assert_eq!(r.warnings, ["settings otel is not a JSON object: ignored"]);
}

#[test]
fn engines_with_the_same_configuration_share_one_exporter() {
    let (url, _rx) = collector("200 OK", Vec::new());
    let user = json!({"tracesEndpoint": url});
    let engine = |user: &Value| {
        let mut c = copse_hooks::EngineConfig::from_process(Vec::new());
        c.environment = no_otel_env();
        c.otel_settings = Some(user.clone());
        copse_hooks::Engine::new(c)
    };
    let (a, b) = (engine(&user), engine(&user));
    let (ea, eb) = (a.otel().unwrap(), b.otel().unwrap());
    assert!(std::ptr::eq(ea, eb), "one exporter for both engines");
    assert!(
        otel::live_exporters()
            .iter()
            .any(|e| std::ptr::eq(&**e, ea))
    );
    // Another configuration, another exporter.
    let c = engine(&json!({"tracesEndpoint": url, "timeoutMs": 1234}));
    assert!(!std::ptr::eq(c.otel().unwrap(), ea));
}

/// This process's environment without any `OTEL_*` variable.
fn no_otel_env() -> Vec<(OsString, OsString)> {
    std::env::vars_os()
        .filter(|(k, _)| !k.to_string_lossy().starts_with("OTEL_"))
        .collect()
}

#[test]
fn a_session_exports_to_phoenix_from_the_settings_with_its_agent_detached_runs_and_payloads() {
    let Some(venv) = backend_venv(
        "a_session_exports_to_phoenix_from_the_settings_with_its_agent_detached_runs_and_payloads",
    ) else {
        return;
    };
    let phoenix = Phoenix::start(&venv);
    let project = format!("copse-it-session-{}", std::process::id());
    let fx = crate::fx::Fx::new();
    let marker = fx.at("out/async.done");
    fx.claude_user(json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "timeout": 7, "command": "cat >/dev/null; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"no force pushes\"}}'"},
            {"type": "command", "async": true, "command": format!("cat >/dev/null; touch {marker}")},
        ]}],
        "Notification": [{"hooks": [{"type": "command", "command": "cat >/dev/null; echo noted"}]}],
    }));
    let mut config = fx.config().build();
    // The settings alone: no OTEL_* variable anywhere.
    config.environment = no_otel_env();
    config.otel_settings = Some(json!({
        "endpoint": format!("http://127.0.0.1:{}", phoenix.port),
        "resourceAttributes": {"openinference.project.name": project},
        "includePayloads": true,
    }));
    config.agent = Some("claude".to_owned());
    let engine = copse_hooks::Engine::new(config);
    assert!(
        engine.otel_warnings().is_empty(),
        "{:?}",
        engine.otel_warnings()
    );
    let session = engine.session(copse_hooks::SessionIdentity::new("conv-phoenix"));
    let verdict = session.gate_tool(copse_hooks::ToolCall::new(
        "run_shell",
        json!({"command": format!("git push --force # {SECRET}")}),
    ));
    // Control: the blocking hook ran and decided.
    assert_eq!(verdict.effective_decision(), Decision::Deny);
    session.fire(copse_hooks::EventPayload::Notification {
        message: "build finished".to_owned(),
        title: None,
        notification_type: "idle_prompt".to_owned(),
        details: Value::Null,
    });
    session.wait_idle();
    assert!(Path::new(&marker).exists(), "the async hook ran");
    let exporter = engine.otel().unwrap();
    let report = exporter.shutdown(Duration::from_secs(30));
    assert!(report.completed, "{report:?}");
    // The gate, its blocking run, its async run, the notification's run.
    assert_eq!(report.stats.exported, 4, "{:?}", report.stats);

    let spans = phoenix.spans(&project, 4);
    assert_eq!(spans.len(), 4, "{spans:#?}");
    let gate = spans
        .iter()
        .find(|s| s.name == "copse.gate toolGate")
        .expect("the gate span");
    let a = &gate.attributes;
    assert_eq!(attr(a, "gen_ai.agent.name"), "claude");
    assert_eq!(attr(a, "gen_ai.conversation.id"), "conv-phoenix");
    assert_eq!(attr(a, "copse.tool.name"), "run_shell");
    assert_eq!(attr(a, "copse.decision"), "deny");
    assert_eq!(attr(a, "copse.decider.message"), "no force pushes");
    assert_eq!(attr(a, "copse.run_count"), 1);
    let arguments = attr(a, "copse.tool.arguments");
    assert!(
        arguments
            .as_str()
            .unwrap()
            .contains("git push --force # [REDACTED:anthropic]"),
        "{arguments}"
    );
    let children: Vec<&Stored> = spans
        .iter()
        .filter(|s| s.parent_id.as_deref() == Some(gate.span_id.as_str()))
        .collect();
    assert_eq!(
        children.len(),
        2,
        "the blocking and the async run: {spans:#?}"
    );
    for c in &children {
        assert_eq!(c.trace_id, gate.trace_id);
    }
    let blocking = children
        .iter()
        .find(|s| attr(&s.attributes, "copse.hook.detached").is_null())
        .expect("the blocking run");
    let b = &blocking.attributes;
    assert_eq!(attr(b, "copse.hook.timeout_ms"), 7000);
    assert_eq!(attr(b, "copse.hook.trust"), "trusted");
    assert_eq!(attr(b, "copse.hook.decision"), "deny");
    let sent = attr(b, "gen_ai.tool.call.arguments");
    let sent = sent.as_str().unwrap();
    assert!(
        sent.contains("\"hook_event_name\":\"PreToolUse\"") || sent.contains("PreToolUse"),
        "{sent}"
    );
    assert!(sent.contains("[REDACTED:anthropic]"), "{sent}");
    let answer = attr(b, "gen_ai.tool.call.result");
    assert!(
        answer.as_str().unwrap().contains("permissionDecision"),
        "{answer}"
    );
    let detached = children
        .iter()
        .find(|s| attr(&s.attributes, "copse.hook.detached") == true)
        .expect("the async run, a child of its gate");
    assert_eq!(attr(&detached.attributes, "copse.hook.timeout_ms"), 600_000);
    let observed = spans
        .iter()
        .find(|s| attr(&s.attributes, "copse.event") == "notification")
        .expect("the notification's run");
    assert_eq!(observed.parent_id, None, "no gate: its own root");
    assert_eq!(observed.name, "execute_tool cat >/dev/null; echo noted");
    assert_eq!(attr(&observed.attributes, "copse.hook.detached"), true);
    assert_eq!(attr(&observed.attributes, "gen_ai.agent.name"), "claude");
    assert_eq!(
        attr(&observed.attributes, "gen_ai.conversation.id"),
        "conv-phoenix"
    );
    assert_ne!(observed.trace_id, gate.trace_id);
    for s in &spans {
        assert!(
            !s.attributes.to_string().contains("abcdefghij"),
            "no secret stored: {}",
            s.attributes
        );
    }
}
