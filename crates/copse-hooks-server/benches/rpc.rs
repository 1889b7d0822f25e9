//! The JSON-RPC API against the in-process engine: `cargo bench -p copse-hooks-server`.
//!
//! Plain `std` timing, no harness, one run. The server is this same binary re-executed
//! as a socket server (`COPSE_BENCH_SERVE`), so it is a separate process with its own
//! resident memory, as the daemon is; one client sends one request at a time and waits
//! for its answer (the worst case for a round trip). Each section measures the API and
//! its in-process baseline interleaved, in blocks, so machine noise hits both.
//!
//! 1. No matching hook (a hook whose matcher never matches, so discovery and matching
//!    run, and nothing spawns): gates/s and p50/p99 per gate. Target >= 20,000/s and
//!    p99 < 1 ms over the API.
//! 2. One trivial hook: mean per gate over the API / in process. Target <= 1.10x.
//! 3. The server's resident memory idle (initialized, one session) and after 100,000
//!    gates.
//! 4. The design choice: the same no-hook round trip through a minimal tokio transport
//!    (multi-threaded runtime, the gate on `spawn_blocking`, as the engine's blocking
//!    path requires), against the threaded server.
//!
//! 5. The daemon's peer check (`SO_PEERCRED` and three `/proc` reads, once per
//!    connection): its cost per connection, against a whole connection (connect,
//!    `initialize`, close) to the server, which includes it. Target: under 10% of a
//!    connection.
//!
//! Misses are reported, never asserted. Linux only (reads /proc for RSS).

// reason: a benchmark binary; a broken setup should abort loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use copse_hooks::{Engine, EngineConfig, Session, SessionIdentity, ToolCall};
use copse_hooks_server::{HostContext, Hosted, ServerConfig};
use serde_json::{Value, json};

mod common;
use common::Rpc;

const NOMATCH_BLOCKS: usize = 10;
const NOMATCH_BLOCK: usize = 2_000;
const TRIVIAL_BLOCKS: usize = 6;
const TRIVIAL_BLOCK: usize = 40;
const RSS_GATES: usize = 100_000;

fn engine_config(dir: &Path) -> EngineConfig {
    let mut c = EngineConfig::from_process(vec![dir.join("ws")])
        .home(dir.join("home"))
        .enabled(true);
    c.copse_dir = dir.join("copse");
    c.spine_path = None;
    c
}

fn serve(dir: PathBuf, socket: PathBuf) -> ! {
    let factory = Arc::new(move |_: &copse_hooks_wire::rpc::InitializeParams| {
        Ok(Hosted {
            engine: Engine::new(engine_config(&dir)),
            context: HostContext::default(),
        })
    });
    let bound = copse_hooks_server::socket::bind(&socket).unwrap();
    copse_hooks_server::socket::serve_socket(bound, ServerConfig::new(factory)).unwrap();
    std::process::exit(0)
}

/// The alternative design, only as far as the bench needs it: `initialize`,
/// `session/open` and `hooks/toolGate` over a tokio transport.
fn serve_tokio(dir: PathBuf, socket: PathBuf) -> ! {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let listener = tokio::net::UnixListener::bind(&socket).unwrap();
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let engine = Engine::new(engine_config(&dir));
            tokio::spawn(async move {
                let (read, write) = stream.into_split();
                let write = Arc::new(tokio::sync::Mutex::new(write));
                let mut lines = tokio::io::BufReader::new(read).lines();
                let session = Arc::new(std::sync::Mutex::new(None::<Session>));
                while let Ok(Some(line)) = lines.next_line().await {
                    let msg: Value = serde_json::from_str(&line).unwrap();
                    let (engine, session, write) =
                        (engine.clone(), Arc::clone(&session), Arc::clone(&write));
                    tokio::spawn(async move {
                        let id = msg["id"].clone();
                        let result = tokio::task::spawn_blocking(move || {
                            match msg["method"].as_str().unwrap() {
                                "session/open" => {
                                    *session.lock().unwrap() =
                                        Some(engine.session(SessionIdentity::new("bench")));
                                    json!({"sessionId": "s1"})
                                }
                                "hooks/toolGate" => {
                                    let s = session.lock().unwrap().clone().unwrap();
                                    let input = msg["params"]["input"].as_object().unwrap().clone();
                                    let v = s.gate_tool(ToolCall::new("run_shell", input));
                                    serde_json::to_value(
                                        copse_hooks_wire::output::VerdictFields::from(&v),
                                    )
                                    .unwrap()
                                }
                                _ => json!({}),
                            }
                        })
                        .await
                        .unwrap();
                        let mut out =
                            json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
                        out.push('\n');
                        write.lock().await.write_all(out.as_bytes()).await.unwrap();
                    });
                }
            });
        }
    })
}

fn start_server(dir: &Path, socket: &Path, tokio: bool) -> (std::process::Child, Rpc) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.env("COPSE_BENCH_SERVE", dir)
        .env("COPSE_BENCH_SOCKET", socket);
    if tokio {
        cmd.env("COPSE_BENCH_TOKIO", "1");
    }
    let server = cmd.spawn().unwrap();
    let rpc = Rpc::connect(socket);
    (server, rpc)
}

fn write_hooks(dir: &Path, matcher: &str) {
    let hooks = json!({"version": 1, "hooks": {"beforeShellExecution": [
        {"command": "cat >/dev/null; echo '{\"permission\":\"allow\"}'", "matcher": matcher}
    ]}});
    std::fs::write(dir.join("home/.cursor/hooks.json"), hooks.to_string()).unwrap();
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn summary(name: &str, mut samples: Vec<Duration>) -> (f64, Duration, Duration) {
    samples.sort();
    let total: Duration = samples.iter().sum();
    let per_s = samples.len() as f64 / total.as_secs_f64();
    let (p50, p99) = (percentile(&samples, 0.5), percentile(&samples, 0.99));
    println!(
        "  {name:<12} {per_s:>10.0} gates/s   p50 {:>8.1} µs   p99 {:>8.1} µs",
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6
    );
    (per_s, p50, p99)
}

fn gate_params(session: &str) -> Value {
    json!({"sessionId": session, "tool": "run_shell", "input": {"command": "git status --short"}})
}

fn in_process(session: &Session) {
    let mut input = serde_json::Map::new();
    input.insert("command".into(), json!("git status --short"));
    let v = session.gate_tool(ToolCall::new("run_shell", input));
    std::hint::black_box(v);
}

fn main() {
    if let (Some(dir), Some(sock)) = (
        std::env::var_os("COPSE_BENCH_SERVE"),
        std::env::var_os("COPSE_BENCH_SOCKET"),
    ) {
        if std::env::var_os("COPSE_BENCH_TOKIO").is_some() {
            serve_tokio(PathBuf::from(dir), PathBuf::from(sock));
        }
        serve(PathBuf::from(dir), PathBuf::from(sock));
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(tmp.path()).unwrap();
    for d in ["home/.cursor", "ws", "copse"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    write_hooks(&dir, "^never-matches-this$");
    if std::env::var_os("COPSE_BENCH_ONLY_PEER").is_some() {
        // Section 5 alone (it is quick; the others take minutes).
        peer_check(&dir);
        return;
    }
    let socket = dir.join("run/bench.sock");
    let (mut server, mut rpc) = start_server(&dir, &socket, false);
    rpc.call("initialize", json!({"workspaceRoots": [dir.join("ws")]}));
    let sid = rpc.call("session/open", json!({"conversationId": "bench"}))["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let params = gate_params(&sid);
    let engine = Engine::new(engine_config(&dir));
    let session = engine.session(SessionIdentity::new("bench"));
    // Warm both (discovery cache, pool thread).
    for _ in 0..200 {
        rpc.call("hooks/toolGate", params.clone());
        in_process(&session);
    }
    let idle_rss = rss_kib(server.id());

    println!(
        "copse-hooks JSON-RPC benchmark (server pid {})\n",
        server.id()
    );
    println!(
        "1. no matching hook ({} gates each, interleaved blocks)",
        NOMATCH_BLOCKS * NOMATCH_BLOCK
    );
    let (mut api, mut local) = (Vec::new(), Vec::new());
    for _ in 0..NOMATCH_BLOCKS {
        for _ in 0..NOMATCH_BLOCK {
            let t = Instant::now();
            let v = rpc.call("hooks/toolGate", params.clone());
            api.push(t.elapsed());
            assert_eq!(v["result"]["runs"], json!([]));
        }
        for _ in 0..NOMATCH_BLOCK {
            let t = Instant::now();
            in_process(&session);
            local.push(t.elapsed());
        }
    }
    let (api_rate, _, api_p99) = summary("API", api);
    let (local_rate, _, _) = summary("in-process", local);
    println!(
        "  API / in-process throughput: {:.3}x   target >= 20,000/s and p99 < 1 ms: {}",
        api_rate / local_rate,
        if api_rate >= 20_000.0 && api_p99 < Duration::from_millis(1) {
            "PASS"
        } else {
            "MISS"
        }
    );

    println!(
        "\n2. one trivial hook ({} gates each, interleaved blocks)",
        TRIVIAL_BLOCKS * TRIVIAL_BLOCK
    );
    write_hooks(&dir, "git status");
    let (mut api, mut local) = (Vec::new(), Vec::new());
    for _ in 0..TRIVIAL_BLOCKS {
        for _ in 0..TRIVIAL_BLOCK {
            let t = Instant::now();
            let v = rpc.call("hooks/toolGate", params.clone());
            api.push(t.elapsed());
            assert_eq!(v["result"]["runs"].as_array().map(Vec::len), Some(1), "{v}");
        }
        for _ in 0..TRIVIAL_BLOCK {
            let t = Instant::now();
            in_process(&session);
            local.push(t.elapsed());
        }
    }
    let mean = |v: &[Duration]| v.iter().sum::<Duration>().as_secs_f64() / v.len() as f64;
    let (api_mean, local_mean) = (mean(&api), mean(&local));
    summary("API", api);
    summary("in-process", local);
    let ratio = api_mean / local_mean;
    println!(
        "  API / in-process mean per gate: {ratio:.3}x   target <= 1.10x: {}",
        if ratio <= 1.10 { "PASS" } else { "MISS" }
    );

    println!("\n3. server resident memory");
    write_hooks(&dir, "^never-matches-this$");
    for _ in 0..RSS_GATES {
        rpc.call("hooks/toolGate", params.clone());
    }
    let after = rss_kib(server.id());
    println!(
        "  idle {:.1} MiB, after {RSS_GATES} more gates {:.1} MiB ({:.2}x)",
        idle_rss as f64 / 1024.0,
        after as f64 / 1024.0,
        after as f64 / idle_rss as f64
    );
    server.kill().unwrap();
    server.wait().unwrap();

    println!("\n4. design: threads (ours) vs a tokio transport, no matching hook");
    let tokio_socket = dir.join("run/tokio.sock");
    let (mut tokio_server, mut trpc) = start_server(&dir, &tokio_socket, true);
    let (mut server, mut rpc) = start_server(&dir, &dir.join("run/bench2.sock"), false);
    rpc.call("initialize", json!({"workspaceRoots": [dir.join("ws")]}));
    let sid = rpc.call("session/open", json!({}))["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    trpc.call("session/open", json!({}));
    let (tparams, params) = (gate_params("s1"), gate_params(&sid));
    for _ in 0..200 {
        rpc.call("hooks/toolGate", params.clone());
        trpc.call("hooks/toolGate", tparams.clone());
    }
    let (mut threads, mut tokio) = (Vec::new(), Vec::new());
    for _ in 0..NOMATCH_BLOCKS {
        for _ in 0..NOMATCH_BLOCK {
            let t = Instant::now();
            rpc.call("hooks/toolGate", params.clone());
            threads.push(t.elapsed());
        }
        for _ in 0..NOMATCH_BLOCK {
            let t = Instant::now();
            trpc.call("hooks/toolGate", tparams.clone());
            tokio.push(t.elapsed());
        }
    }
    let (threads_rate, _, _) = summary("threads", threads);
    let (tokio_rate, _, _) = summary("tokio", tokio);
    println!(
        "  threads / tokio throughput: {:.3}x",
        threads_rate / tokio_rate
    );
    for child in [&mut server, &mut tokio_server] {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    peer_check(&dir);
}

/// Section 5: the peer check per connection, against a whole connection.
fn peer_check(dir: &Path) {
    const CONNECTIONS: usize = 500;
    println!("\n5. the daemon's peer check, once per connection ({CONNECTIONS} each, interleaved)");
    let socket = dir.join("run/peer.sock");
    let (mut server, mut rpc) = start_server(dir, &socket, false);
    rpc.call("initialize", json!({"workspaceRoots": [dir.join("ws")]}));
    let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    let (mut checks, mut connections) = (Vec::new(), Vec::new());
    for _ in 0..CONNECTIONS {
        let t = Instant::now();
        assert_eq!(copse_hooks_server::peer::check(&a), None);
        checks.push(t.elapsed());
        let t = Instant::now();
        let mut c = Rpc::connect(&socket);
        c.call("initialize", json!({"workspaceRoots": [dir.join("ws")]}));
        drop(c);
        connections.push(t.elapsed());
    }
    let mean = |v: &[Duration]| v.iter().sum::<Duration>() / u32::try_from(v.len()).unwrap();
    let (check, connection) = (mean(&checks), mean(&connections));
    println!(
        "  peer check {:.1} us, connection + initialize {:.1} us: {:.3} of a connection",
        check.as_secs_f64() * 1e6,
        connection.as_secs_f64() * 1e6,
        check.as_secs_f64() / connection.as_secs_f64()
    );
    server.kill().unwrap();
    server.wait().unwrap();
}
