//! # copse-hooks-server
//!
//! The engine for hosts in any language: a JSON-RPC 2.0 server, one JSON message per
//! line, over stdio ([`serve_stdio`]) or a Unix socket ([`socket::serve_socket`], the
//! daemon). It translates, never decides: every answer is the engine's.
//!
//! ## Theory of operation
//!
//! Each connection has one reader thread. It frames lines (refusing, without holding
//! it, a line over [`ServerConfig::max_line_bytes`]), parses them, and answers the
//! cheap methods itself (`initialize`, `session/*`, `queue/drain`, `shutdown`,
//! `$/cancelRequest`). Everything that may run a hook or touch the audit store goes
//! to a growable worker [`pool`], so requests run concurrently and complete out of
//! order, and one slow hook never holds up another request. Each such request carries
//! a [`copse_hooks::CancelToken`]; `$/cancelRequest`, a client that goes away
//! and a daemon told to stop all cancel, which kills the hooks' process groups.
//! Responses and `queue/message` notifications share one writer, a line at a time.
//!
//! `shim/handle` (agent hook calls forwarded by `copse-hooks shim`) needs no
//! `initialize`: each call carries the agent's environment, and its engine comes from
//! a cache of warm engines keyed by the whole call config (see `shim.rs`).
//!
//! Engines are built by the host's [`EngineFactory`] (the CLI's reads the user's
//! settings) and cached per `(roots, trusted, enabled)`, so configs are parsed once and
//! the audit store stays open across requests and clients. Every request that may run
//! a hook `stat`s the settings file; when it changed (untrust, disable), the connection
//! and its sessions move to a fresh engine, and the old one is retired (its persistent
//! hooks stopped). A socket server also looks four times a second.
//!
//! A socket server serves the agent and the user's hosts, never a hook: [`peer`]
//! refuses a peer that looks like one before anything is read from it.
//!
//! Why threads and not tokio: the engine's blocking path (spawn, poll, wait) is
//! synchronous and runs on the calling thread, so an async runtime would hand every
//! request to `spawn_blocking` anyway. Measured (the `rpc` bench, section 4), a tokio
//! transport built that way was half as fast on the no-hook round trip with a 7x worse
//! p99; see `docs/host-api.md`.

pub mod doctor;
pub mod framing;
mod methods;
mod params;
pub mod peer;
pub mod pool;
mod shim;
pub mod socket;

use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};

use copse_hooks::CancelToken;
use copse_hooks::{Engine, Session};
use copse_hooks_wire::output::SettingValue;
use copse_hooks_wire::rpc::{InitializeParams, codes};
use serde_json::{Value, json};

use crate::framing::{Frame, read_frame};
use crate::pool::Pool;

/// The default largest request line: 8 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// What the host knows about how an engine was configured (for `doctor`).
#[derive(Debug, Clone, Default)]
pub struct HostContext {
    /// The settings file.
    pub settings_path: PathBuf,
    /// Whether it exists.
    pub settings_exists: bool,
    /// Why it could not be read.
    pub settings_warning: Option<String>,
    /// Where enablement came from (`settings`, `flag`, `client`, `default`).
    pub enabled_source: String,
    /// Every setting with its source.
    pub values: Vec<SettingValue>,
    /// The settings file's identity when the engine was built (the server rebuilds a
    /// cached engine when it changes).
    pub settings_stamp: Option<SettingsStamp>,
}

/// A settings file's identity: modification time, length and inode (settings are
/// saved by renaming a new file over the old, so every save changes the inode).
pub type SettingsStamp = (std::time::SystemTime, u64, u64);

/// A file's [`SettingsStamp`], when it exists: one `stat`.
pub(crate) fn settings_stamp(path: &std::path::Path) -> Option<SettingsStamp> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len(), meta.ino()))
}

/// An engine and what the host knows about it.
#[derive(Debug, Clone)]
pub struct Hosted {
    /// The engine.
    pub engine: Engine,
    /// How it was configured.
    pub context: HostContext,
}

/// Builds the engine a client's `initialize` asks for (an `Err` is the message of the
/// `initialize` error).
pub type EngineFactory = Arc<dyn Fn(&InitializeParams) -> Result<Hosted, String> + Send + Sync>;

/// How to run a server.
#[derive(Clone)]
pub struct ServerConfig {
    /// Builds engines.
    pub factory: EngineFactory,
    /// The largest request line accepted.
    pub max_line_bytes: usize,
}

impl ServerConfig {
    /// A config with the default line limit.
    pub fn new(factory: EngineFactory) -> ServerConfig {
        ServerConfig {
            factory,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// Why a server could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// Another server holds the socket.
    #[error("another copse-hooks server{} is serving {}", pid.map(|p| format!(" (pid {p})")).unwrap_or_default(), path.display())]
    InUse {
        /// The socket path.
        path: PathBuf,
        /// The holder's pid, when it wrote one.
        pid: Option<u32>,
    },
    /// An I/O error on a path.
    #[error("{action} {}: {cause}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The error.
        cause: std::io::Error,
    },
    /// No daemon answers.
    #[error("no copse-hooks daemon is running at {}", path.display())]
    NotRunning {
        /// The socket path.
        path: PathBuf,
    },
    /// The daemon did not come up.
    #[error("the daemon did not start: {0}")]
    StartFailed(String),
}

/// One server: its engines, its worker pool, its live connections.
pub struct Server {
    config: ServerConfig,
    engines: Mutex<HashMap<String, Hosted>>,
    pool: Pool,
    next_id: AtomicU64,
    connections: Mutex<HashMap<u64, Weak<Conn>>>,
    shim: shim::ShimHost,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section here leaves its data consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Server {
    /// A server.
    pub fn new(config: ServerConfig) -> Arc<Server> {
        Arc::new(Server {
            config,
            engines: Mutex::new(HashMap::new()),
            pool: Pool::default(),
            next_id: AtomicU64::new(1),
            connections: Mutex::new(HashMap::new()),
            shim: shim::ShimHost::default(),
        })
    }

    fn next(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The engine for these `initialize` params (built once per roots, trust and
    /// enablement).
    fn hosted(&self, params: &InitializeParams) -> Result<Hosted, String> {
        let key = serde_json::to_string(&(&params.workspace_roots, params.trusted, params.enabled))
            .unwrap_or_default();
        if let Some(h) = lock(&self.engines).get(&key)
            && h.context.settings_stamp == settings_stamp(&h.context.settings_path)
        {
            return Ok(h.clone());
        }
        // New roots, or the settings changed (enablement, trust): a fresh engine.
        let mut hosted = (self.config.factory)(params)?;
        hosted.context.settings_stamp = settings_stamp(&hosted.context.settings_path);
        if let Some(old) = lock(&self.engines).insert(key, hosted.clone()) {
            shim::retire(old.engine);
        }
        Ok(hosted)
    }

    /// Retires every cached engine whose settings changed since it was built (its
    /// persistent hooks stopped): an untrust or disable stops the processes it
    /// deselects without waiting for a request. Connections still holding such an
    /// engine move to a fresh one at their next request.
    pub fn refresh(&self) {
        let stale: Vec<Hosted> = {
            let mut engines = lock(&self.engines);
            let keys: Vec<String> = engines
                .iter()
                .filter(|(_, h)| {
                    h.context.settings_stamp != settings_stamp(&h.context.settings_path)
                })
                .map(|(k, _)| k.clone())
                .collect();
            keys.iter().filter_map(|k| engines.remove(k)).collect()
        };
        for h in stale {
            shim::retire(h.engine);
        }
        self.shim.refresh();
    }

    /// The persistent hooks every engine of this server has started (every
    /// connection's, every agent call's), for `doctor`.
    pub fn persistent_status(&self) -> Vec<copse_hooks::persistent::PersistentStatus> {
        let mut out: Vec<_> = lock(&self.engines)
            .values()
            .flat_map(|h| h.engine.persistent_status())
            .collect();
        out.extend(self.shim.persistent_status());
        out
    }

    /// Cancels every in-flight request of every connection, stops every persistent
    /// hook (stdin closed, a short grace, then its group killed) and flushes every
    /// audit store (a daemon told to stop).
    pub fn shutdown_all(&self) {
        let conns: Vec<Arc<Conn>> = lock(&self.connections)
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        for c in conns {
            c.cancel_all();
            c.wait_idle();
        }
        self.shim.shutdown();
        let engines: Vec<Hosted> = lock(&self.engines).values().cloned().collect();
        std::thread::scope(|scope| {
            for h in &engines {
                scope.spawn(|| h.engine.stop_persistent());
            }
        });
        for h in &engines {
            h.engine.flush_spine();
        }
        // The spans of every call served, sent within one bounded deadline.
        copse_hooks::otel::shutdown_all(copse_hooks::otel::DEFAULT_SHUTDOWN);
    }

    /// Serves one connection until the client closes it or sends `exit`.
    ///
    /// When the input ends, requests still running are answered as long as the client
    /// is still there to read them; `peer_gone` says when it is not (its end of the
    /// output closed), and then they are cancelled at once, their hooks killed.
    pub fn serve_connection(
        self: &Arc<Self>,
        input: impl Read,
        output: impl Write + Send + 'static,
        peer_gone: impl Fn() -> bool,
    ) -> ConnectionEnd {
        let id = self.next();
        let conn = Arc::new(Conn {
            server: Arc::clone(self),
            out: Mutex::new(Box::new(output)),
            state: Mutex::new(ConnState::default()),
            idle: Condvar::new(),
        });
        lock(&self.connections).insert(id, Arc::downgrade(&conn));
        let mut reader = BufReader::with_capacity(64 * 1024, input);
        let end = loop {
            match read_frame(&mut reader, self.config.max_line_bytes) {
                Ok(Frame::Eof) | Err(_) => break ConnectionEnd::Closed,
                Ok(Frame::Oversize { bytes }) => conn.send_error(
                    Value::Null,
                    codes::INVALID_REQUEST,
                    &format!(
                        "request line of {bytes} bytes refused: over the {}-byte limit",
                        self.config.max_line_bytes
                    ),
                ),
                Ok(Frame::Line(line)) => {
                    if let Some(end) = methods::handle_line(&conn, &line) {
                        break end;
                    }
                }
            }
        };
        conn.close(&peer_gone);
        lock(&self.connections).remove(&id);
        end
    }
}

/// How a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionEnd {
    /// The client closed its end (or it broke).
    Closed,
    /// The client sent `exit` (after `shutdown` when `clean`).
    Exit {
        /// Whether `shutdown` came first.
        clean: bool,
    },
}

#[derive(Default)]
struct ConnState {
    hosted: Option<Hosted>,
    /// What `initialize` asked for: an engine is rebuilt from it when the settings
    /// change under an open connection.
    params: Option<InitializeParams>,
    shutdown: bool,
    closed: bool,
    sessions: HashMap<String, Session>,
    inflight: HashMap<String, CancelToken>,
    running: usize,
}

/// One client connection.
pub(crate) struct Conn {
    server: Arc<Server>,
    out: Mutex<Box<dyn Write + Send>>,
    state: Mutex<ConnState>,
    idle: Condvar,
}

impl Conn {
    /// Registers a request about to run on the pool: its cancel token (under the
    /// request id's text) and one more running request. `None` when the connection
    /// is already closed (nothing is answered then).
    fn begin_request(&self, id: &Value) -> Option<(CancelToken, String)> {
        let token = CancelToken::new();
        let key = id.to_string();
        let mut st = lock(&self.state);
        if st.closed {
            return None;
        }
        st.inflight.insert(key.clone(), token.clone());
        st.running += 1;
        Some((token, key))
    }

    /// Writes one message as one line. A client that went away is noticed by the
    /// reader; a failed write is dropped here.
    fn send(&self, message: &Value) {
        let mut line = match serde_json::to_vec(message) {
            Ok(l) => l,
            Err(_) => return,
        };
        line.push(b'\n');
        let mut out = lock(&self.out);
        let _ = out.write_all(&line).and_then(|()| out.flush());
    }

    fn send_result(&self, id: Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn send_error(&self, id: Value, code: i64, message: &str) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        );
    }

    fn cancel_all(&self) {
        for token in lock(&self.state).inflight.values() {
            token.cancel();
        }
    }

    fn wait_idle(&self) {
        let mut st = lock(&self.state);
        while st.running > 0 {
            st = self.idle.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// The input ended: finish what is running while the client can still read the
    /// answers, cancel it (killing the hooks) as soon as it cannot; then close the
    /// sessions and flush the audit store.
    fn close(&self, peer_gone: &dyn Fn() -> bool) {
        let gone = {
            let mut st = lock(&self.state);
            st.closed = true;
            loop {
                if st.running == 0 {
                    break false;
                }
                if peer_gone() {
                    break true;
                }
                st = self
                    .idle
                    .wait_timeout(st, std::time::Duration::from_millis(20))
                    .map(|(g, _)| g)
                    .unwrap_or_else(|p| p.into_inner().0);
            }
        };
        if gone {
            self.cancel_all();
            self.wait_idle();
        }
        let (sessions, hosted) = {
            let mut st = lock(&self.state);
            st.closed = true;
            (std::mem::take(&mut st.sessions), st.hosted.clone())
        };
        for session in sessions.values() {
            session.set_queue_listener(None);
        }
        drop(sessions);
        if let Some(h) = hosted {
            h.engine.flush_spine();
        }
    }
}

/// Serves one client on stdin/stdout until stdin closes or `exit` arrives.
pub fn serve_stdio(config: ServerConfig) -> ConnectionEnd {
    let server = Server::new(config);
    server.serve_connection(std::io::stdin(), std::io::stdout(), || {
        hung_up(&std::io::stdout())
    })
}

/// Whether the reader of `fd` went away (a pipe's read end closed: `POLLERR`; a
/// socket's peer closed: `POLLHUP`). A half-closed peer that still reads is not gone.
pub fn hung_up(fd: &impl std::os::fd::AsFd) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut fds = [PollFd::new(fd, PollFlags::empty())];
    let zero = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match poll(&mut fds, Some(&zero)) {
        Ok(_) => fds[0]
            .revents()
            .intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL),
        Err(_) => true,
    }
}
