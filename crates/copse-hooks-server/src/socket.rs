//! The server on a Unix socket, and the per-user daemon built on it.
//!
//! A socket server holds an exclusive `flock` on `PATH.lock` (which also records its
//! pid) for as long as it serves, so a second server on the same path refuses to start
//! and names the holder, and a socket file nobody holds the lock for is stale and
//! replaced. The socket is created 0600 in a directory made 0700 when we create it.
//! A server whose socket file disappears (or is replaced) exits within seconds: nobody
//! can reach it any more.
//!
//! A daemon also knows which build it is ([`own_build`]: version, executable, the
//! executable file's identity when it started, start time) and writes it beside its
//! socket (`PATH.info`, see [`DaemonInfo`]) for `daemon status` and `doctor`. The shim
//! sends its own build with every call; a daemon of another build, or whose
//! executable was deleted or replaced since it started ([`ExeState`]), answers
//! `STALE_DAEMON` and runs nothing, and the shim replaces it ([`stop_pid`]).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, flock};

use crate::{ConnectionEnd, Server, ServerConfig, ServerError};

/// The lock file beside a socket.
pub fn lock_path(socket: &Path) -> PathBuf {
    let mut name = socket.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> ServerError + 'a {
    move |source| ServerError::Io {
        action,
        path: path.to_path_buf(),
        cause: source,
    }
}

/// The pid recorded in a socket's lock file.
pub fn holder_pid(socket: &Path) -> Option<u32> {
    // Never through a link: `daemon stop` signals this pid.
    let mut text = String::new();
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(lock_path(socket))
        .ok()?
        .read_to_string(&mut text)
        .ok()?;
    text.trim().parse().ok()
}

/// Opens (creating it 0600) a lock file without following a symbolic link, and
/// refuses one that is not a plain file of ours: a lock planted as a link (or a hard
/// link) by someone who can write the directory would have us truncate and write
/// whatever it points at.
fn open_lock(path: &Path) -> Result<File, ServerError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                ServerError::Io {
                    action: "refusing to follow the symbolic link at the lock file",
                    path: path.to_path_buf(),
                    cause: std::io::Error::other(
                        "a lock file must be a plain file; remove the link and try again",
                    ),
                }
            } else {
                io("cannot open the lock file", path)(e)
            }
        })?;
    let meta = file
        .metadata()
        .map_err(io("cannot read the lock file", path))?;
    let uid = rustix::process::getuid().as_raw();
    let why = if !meta.file_type().is_file() {
        Some("it is not a plain file".to_owned())
    } else if meta.uid() != uid {
        Some(format!("it is owned by uid {}, not {uid}", meta.uid()))
    } else if meta.nlink() != 1 {
        Some(format!("it has {} hard links", meta.nlink()))
    } else {
        None
    };
    if let Some(why) = why {
        return Err(ServerError::Io {
            action: "refusing the lock file",
            path: path.to_path_buf(),
            cause: std::io::Error::other(format!("{why}; remove it and try again")),
        });
    }
    Ok(file)
}

/// Takes the socket's lock, or says who holds it.
fn take_lock(socket: &Path) -> Result<File, ServerError> {
    let path = lock_path(socket);
    let mut file = open_lock(&path)?;
    if flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
        return Err(ServerError::InUse {
            path: socket.to_path_buf(),
            pid: holder_pid(socket),
        });
    }
    file.set_len(0)
        .map_err(io("cannot write the lock file", &path))?;
    writeln!(file, "{}", std::process::id()).map_err(io("cannot write the lock file", &path))?;
    Ok(file)
}

use std::os::unix::fs::OpenOptionsExt;

/// A bound socket with its lock held.
pub struct Bound {
    listener: UnixListener,
    path: PathBuf,
    _lock: File,
}

/// Binds `path`: creates its directory (0700) when missing, takes the lock, replaces a
/// stale socket, binds and makes the socket 0600.
pub fn bind(path: &Path) -> Result<Bound, ServerError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.exists()
    {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io("cannot create the socket directory", dir))?;
    }
    let lock = take_lock(path)?;
    if std::fs::symlink_metadata(path).is_ok() {
        // Nobody holds the lock: whatever is there is a stale socket.
        std::fs::remove_file(path).map_err(io("cannot remove the stale socket", path))?;
    }
    let listener = UnixListener::bind(path).map_err(io("cannot listen on", path))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(io("cannot restrict", path))?;
    Ok(Bound {
        listener,
        path: path.to_path_buf(),
        _lock: lock,
    })
}

/// Serves every client on a bound socket until the process is told to stop (SIGTERM
/// or SIGINT): then every in-flight request is cancelled (its hooks killed), the audit
/// stores flushed, the socket removed, and the process exits 0.
pub fn serve_socket(bound: Bound, config: ServerConfig) -> Result<(), ServerError> {
    let server = Server::new(config);
    let socket_path = bound.path.clone();
    // Fixes this process's build now, before its executable could be replaced.
    own_build();
    write_info(&socket_path)?;
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
    ])
    .map_err(io("cannot handle signals for", &socket_path))?;
    {
        let server = Arc::clone(&server);
        let path = socket_path.clone();
        std::thread::Builder::new()
            .name("copse-hooks-signals".to_owned())
            .spawn(move || {
                if signals.forever().next().is_some() {
                    // The info file stays: a shim whose connection this exit cut
                    // reads it to learn whether this daemon would have refused its call
                    // (the next daemon overwrites it; readers check the pid).
                    let _ = std::fs::remove_file(&path);
                    server.shutdown_all();
                    std::process::exit(0);
                }
            })
            .map_err(io("cannot start the signal thread for", &socket_path))?;
    }
    {
        // A daemon whose socket file was removed or replaced (its directory deleted,
        // another server bound there) can never be reached again: it exits.
        let server = Arc::clone(&server);
        let path = socket_path.clone();
        let ours = std::fs::symlink_metadata(&path)
            .map(|m| (m.dev(), m.ino()))
            .ok();
        std::thread::Builder::new()
            .name("copse-hooks-watch".to_owned())
            .spawn(move || {
                let mut exe_noted = false;
                for tick in 1u64.. {
                    std::thread::sleep(Duration::from_millis(250));
                    // Settings changed (untrust, disable): stop what they deselect,
                    // within a quarter second (a `stat` per settings file).
                    server.refresh();
                    if tick % 8 != 0 {
                        continue;
                    }
                    // An upgrade or rebuild replaced the executable: said once in the
                    // daemon's log (the next shim call replaces this daemon; hosts
                    // connected to it keep being served).
                    let state = own_build().exe_state();
                    if !exe_noted && state != ExeState::Current {
                        exe_noted = true;
                        eprintln!(
                            "copse-hooks serve: my executable {} was {} since I started; the next shim call replaces this daemon",
                            own_build().exe_text,
                            state.as_str()
                        );
                    }
                    let now = std::fs::symlink_metadata(&path)
                        .map(|m| (m.dev(), m.ino()))
                        .ok();
                    if now.is_none() || now != ours {
                        server.shutdown_all();
                        std::process::exit(0);
                    }
                }
            })
            .map_err(io("cannot start the watch thread for", &socket_path))?;
    }
    let workers = Workers::new(server);
    for stream in bound.listener.incoming() {
        let Ok(stream) = stream else { continue };
        workers.dispatch(stream);
    }
    Ok(())
}

/// Serves one connection to its end.
fn serve_one(server: &Arc<Server>, stream: UnixStream) {
    let Ok(output) = stream.try_clone() else {
        return;
    };
    // Defence in depth: a hook that reached the socket is not served.
    if let Some(why) = crate::peer::check(&stream) {
        eprintln!("copse-hooks serve: refused a connection: {why}");
        refuse(&stream, &why);
        return;
    }
    let probe = &stream;
    let end = server.serve_connection(&stream, output, || crate::hung_up(probe));
    if let ConnectionEnd::Exit { .. } = end {
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }
}

/// The connection threads: one per open connection, as before, but a thread whose
/// connection ended waits a while for the next one instead of exiting. A shim opens
/// one connection per agent call, and creating a thread for each (stack, signal
/// stack, name, affinity: about 15 system calls) was a measurable part of the
/// daemon's time per call; handing a connection to a waiting thread is one wake-up.
/// At most [`Workers::IDLE_MAX`] threads wait; one idle for [`Workers::IDLE_FOR`]
/// exits. A connection that finds no idle thread gets a new one, so a long-lived host
/// connection never delays another.
struct Workers {
    server: Arc<Server>,
    shared: Arc<WorkerQueue>,
}

#[derive(Default)]
struct WorkerQueue {
    state: Mutex<WorkerState>,
    ready: Condvar,
}

#[derive(Default)]
struct WorkerState {
    queue: std::collections::VecDeque<UnixStream>,
    idle: usize,
}

impl Workers {
    const IDLE_MAX: usize = 4;
    const IDLE_FOR: Duration = Duration::from_secs(60);

    fn new(server: Arc<Server>) -> Workers {
        Workers {
            server,
            shared: Arc::new(WorkerQueue::default()),
        }
    }

    /// Hands `stream` to an idle thread, or to a new one when none waits.
    fn dispatch(&self, stream: UnixStream) {
        let mut state = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.idle > state.queue.len() {
            state.queue.push_back(stream);
            drop(state);
            self.shared.ready.notify_one();
            return;
        }
        drop(state);
        let server = Arc::clone(&self.server);
        let shared = Arc::clone(&self.shared);
        let spawned = std::thread::Builder::new()
            .name("copse-hooks-conn".to_owned())
            .spawn(move || {
                let mut next = Some(stream);
                while let Some(stream) = next.take() {
                    serve_one(&server, stream);
                    next = shared.wait();
                }
            });
        if let Err(e) = spawned {
            eprintln!("copse-hooks serve: cannot start a connection thread: {e}");
        }
    }
}

impl WorkerQueue {
    /// Waits for the next connection; `None` when this thread should exit (enough
    /// others wait, or none came for [`Workers::IDLE_FOR`]).
    fn wait(&self) -> Option<UnixStream> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.idle >= Workers::IDLE_MAX {
            return None;
        }
        state.idle += 1;
        let until = Instant::now() + Workers::IDLE_FOR;
        let got = loop {
            if let Some(stream) = state.queue.pop_front() {
                break Some(stream);
            }
            let now = std::time::Instant::now();
            if now >= until {
                break None;
            }
            state = self
                .ready
                .wait_timeout(state, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        };
        state.idle -= 1;
        got
    }
}

/// Tells a refused peer why (one error line, `id` `null`; nothing ran), then closes.
/// Bounded: a peer that does not read cannot hold the connection thread.
fn refuse(stream: &UnixStream, why: &str) {
    let line = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {
        "code": copse_hooks_wire::rpc::codes::PEER_REFUSED,
        "message": format!("connection refused: {why}; this server serves the agent and the user's hosts, never a hook"),
    }});
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let mut out = stream;
    let _ = writeln!(out, "{line}");
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// Whether a daemon's executable is still the file it was started from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExeState {
    /// The path still names the file the daemon runs.
    Current,
    /// Another file is at the path now (an upgrade, a rebuild).
    Replaced,
    /// Nothing is at the path any more.
    Deleted,
}

impl ExeState {
    /// `current`, `replaced` or `deleted`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExeState::Current => "current",
            ExeState::Replaced => "replaced",
            ExeState::Deleted => "deleted",
        }
    }

    /// Compares what is at `exe` now with the running file's `(dev, ino)`: one `stat`.
    pub fn of(exe: &Path, running: Option<(u64, u64)>) -> ExeState {
        match std::fs::metadata(exe) {
            Err(_) => ExeState::Deleted,
            Ok(m) if running.is_some_and(|r| r != (m.dev(), m.ino())) => ExeState::Replaced,
            Ok(_) => ExeState::Current,
        }
    }
}

/// This process's build, fixed the first time it is asked for (a daemon asks when it
/// binds its socket, before it could have been replaced).
#[derive(Debug, Clone)]
pub struct OwnBuild {
    /// The version (`copse-hooks --version`).
    pub version: String,
    /// The executable's path, as the kernel resolved it at start.
    pub exe: PathBuf,
    /// The same path as text, made once (every call compares it with the shim's).
    pub exe_text: String,
    /// The running file's `(dev, ino)` (of `/proc/self/exe`, which stays the running
    /// file even once the path names another).
    pub file: Option<(u64, u64)>,
    /// When it was first asked for (the daemon's start), in ms since the epoch.
    pub started_ms: u64,
}

impl OwnBuild {
    /// Whether the executable is still the file this process runs: one `stat`.
    pub fn exe_state(&self) -> ExeState {
        ExeState::of(&self.exe, self.file)
    }

    /// As sent on the wire.
    pub fn identity(&self) -> copse_hooks_wire::rpc::BuildIdentity {
        copse_hooks_wire::rpc::BuildIdentity {
            version: self.version.clone(),
            exe: self.exe_text.clone(),
        }
    }
}

/// This process's build ([`OwnBuild`]).
pub fn own_build() -> &'static OwnBuild {
    static OWN: std::sync::OnceLock<OwnBuild> = std::sync::OnceLock::new();
    OWN.get_or_init(|| {
        let exe = std::env::current_exe().unwrap_or_default();
        OwnBuild {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            exe_text: exe.display().to_string(),
            exe,
            file: std::fs::metadata("/proc/self/exe")
                .ok()
                .map(|m| (m.dev(), m.ino())),
            started_ms: now_ms(),
        }
    })
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// What a daemon writes beside its socket (`PATH.info`) when it starts.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DaemonInfo {
    /// The daemon's pid.
    pub pid: u32,
    /// Its version.
    pub version: String,
    /// Its executable, as resolved when it started.
    pub exe: String,
    /// When it started, in ms since the epoch.
    pub started_ms: u64,
    /// The running executable file's device and inode (what it is, whatever is at
    /// `exe` later).
    #[serde(default)]
    pub exe_file: Option<(u64, u64)>,
}

/// The info file beside a socket.
pub fn info_path(socket: &Path) -> PathBuf {
    let mut name = socket.as_os_str().to_owned();
    name.push(".info");
    PathBuf::from(name)
}

/// Writes this process's [`DaemonInfo`] beside `socket` (a new file renamed over the
/// old, 0600, in the socket's directory).
fn write_info(socket: &Path) -> Result<(), ServerError> {
    let own = own_build();
    let info = DaemonInfo {
        pid: std::process::id(),
        version: own.version.clone(),
        exe: own.exe_text.clone(),
        started_ms: own.started_ms,
        exe_file: own.file,
    };
    let path = info_path(socket);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let text = serde_json::to_string(&info).unwrap_or_default();
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp)
        .map_err(io("cannot write the daemon info", &tmp))?;
    writeln!(file, "{text}").map_err(io("cannot write the daemon info", &tmp))?;
    std::fs::rename(&tmp, &path).map_err(io("cannot write the daemon info", &path))
}

/// The [`DaemonInfo`] of the daemon serving `socket`: only when it names the pid
/// that holds the socket's lock (an info file left by a killed daemon is not read
/// as the current one's).
pub fn info(socket: &Path) -> Option<DaemonInfo> {
    info_of(socket, holder_pid(socket)?)
}

/// The [`DaemonInfo`] daemon `pid` wrote beside `socket`, if the file there is still
/// its own (it stays after the daemon exits, until the next daemon writes its own).
pub fn info_of(socket: &Path, pid: u32) -> Option<DaemonInfo> {
    let mut text = String::new();
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(info_path(socket))
        .ok()?
        .take(64 * 1024)
        .read_to_string(&mut text)
        .ok()?;
    let info: DaemonInfo = serde_json::from_str(text.trim()).ok()?;
    (info.pid == pid).then_some(info)
}

/// Whether daemon `pid`'s executable is still the file it runs, seen from outside:
/// `/proc/PID/exe` (the running file) against what is at `exe` now.
pub fn exe_state_of(pid: u32, exe: &Path) -> Option<ExeState> {
    let running = std::fs::metadata(format!("/proc/{pid}/exe")).ok()?;
    Some(ExeState::of(exe, Some((running.dev(), running.ino()))))
}

/// Stops the daemon on `socket` only if it is still `pid` (a daemon another shim
/// already put in its place is left alone), and waits at most `wait` until its lock is
/// free. Returns whether `pid` was signalled.
pub fn stop_pid(socket: &Path, pid: u32, wait: Duration) -> Result<bool, ServerError> {
    if holder_pid(socket) != Some(pid) || take_lock_probe(socket) {
        return Ok(false);
    }
    let Some(raw) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return Ok(false);
    };
    let _ = rustix::process::kill_process(raw, rustix::process::Signal::TERM);
    let deadline = Instant::now() + wait;
    while Instant::now() < deadline {
        // Gone: the lock is free, or another daemon (another shim's) holds it now.
        if take_lock_probe(socket) || holder_pid(socket) != Some(pid) {
            return Ok(true);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Err(ServerError::StartFailed(format!(
        "the daemon (pid {pid}) did not stop within {} ms",
        wait.as_millis()
    )))
}

/// What `daemon status` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DaemonStatus {
    /// A daemon answers on the socket.
    Running {
        /// Its pid, when recorded.
        pid: Option<u32>,
    },
    /// A socket file is there but nothing answers (a killed daemon).
    Stale,
    /// Nothing there.
    Stopped,
}

/// Whether a daemon serves `socket`.
pub fn status(socket: &Path) -> DaemonStatus {
    match UnixStream::connect(socket) {
        Ok(_) => DaemonStatus::Running {
            pid: holder_pid(socket),
        },
        Err(_) if std::fs::symlink_metadata(socket).is_ok() => DaemonStatus::Stale,
        Err(_) => DaemonStatus::Stopped,
    }
}

/// Starts `exe serve --socket SOCKET` detached (its own process group, stdio on
/// `log`), serialised by `SOCKET.start.lock` so two starts never race, and waits until
/// it answers. Returns the pid of the running daemon and whether this call started it.
pub fn start(exe: &Path, socket: &Path, log: &Path) -> Result<(Option<u32>, bool), ServerError> {
    start_with(exe, socket, log, Duration::from_secs(10), None)
}

/// [`start`], waiting at most `wait` for the daemon to answer, and starting it with
/// exactly the environment `env` when given (the shim starts it without the agent's
/// LLM keys).
pub fn start_with(
    exe: &Path,
    socket: &Path,
    log: &Path,
    wait: Duration,
    env: Option<&[(std::ffi::OsString, std::ffi::OsString)]>,
) -> Result<(Option<u32>, bool), ServerError> {
    if let Some(dir) = socket.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.exists()
    {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io("cannot create the socket directory", dir))?;
    }
    let mut start_lock = lock_path(socket).into_os_string();
    start_lock.push(".start");
    let start_lock = PathBuf::from(start_lock);
    let guard = open_lock(&start_lock)?;
    flock(&guard, FlockOperation::LockExclusive)
        .map_err(|e| io("cannot lock", &start_lock)(e.into()))?;
    if let DaemonStatus::Running { pid } = status(socket) {
        return Ok((pid, false));
    }
    let log_file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        // A planted link must not have the daemon append to another file.
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(log)
        .map_err(io("cannot open the daemon log", log))?;
    let err_file = log_file
        .try_clone()
        .map_err(io("cannot open the daemon log", log))?;
    let mut command = Command::new(exe);
    if let Some(env) = env {
        command.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
    }
    let mut child = command
        .arg("serve")
        .arg("--socket")
        .arg(socket)
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(log_file)
        .stderr(err_file)
        .process_group(0)
        .spawn()
        .map_err(io("cannot start", exe))?;
    let deadline = Instant::now() + wait;
    loop {
        if let DaemonStatus::Running { pid } = status(socket) {
            let id = child.id();
            // The daemon outlives this command; it is reparented and reaped by init.
            drop(child);
            return Ok((pid.or(Some(id)), true));
        }
        if let Ok(Some(exit)) = child.try_wait() {
            let mut tail = String::new();
            if let Ok(mut f) = File::open(log) {
                let _ = f.read_to_string(&mut tail);
            }
            let last = tail.lines().last().unwrap_or("").to_owned();
            return Err(ServerError::StartFailed(format!(
                "it exited ({exit}): {last}"
            )));
        }
        if Instant::now() > deadline {
            // Not ours to wait for any longer; it may still come up (and then serves
            // the next call).
            return Err(ServerError::StartFailed(format!(
                "nothing answered on {} within {} ms",
                socket.display(),
                wait.as_millis()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

use std::os::unix::process::CommandExt;

/// Stops the daemon on `socket` (SIGTERM: it cancels in-flight hooks, flushes, removes
/// the socket) and waits until it is gone. A stale socket is removed.
pub fn stop(socket: &Path) -> Result<Option<u32>, ServerError> {
    match status(socket) {
        DaemonStatus::Stopped => Err(ServerError::NotRunning {
            path: socket.to_path_buf(),
        }),
        DaemonStatus::Stale => {
            let _ = std::fs::remove_file(socket);
            Err(ServerError::NotRunning {
                path: socket.to_path_buf(),
            })
        }
        DaemonStatus::Running { pid } => {
            let Some(pid) = pid else {
                return Err(ServerError::StartFailed(
                    "the daemon's lock file names no pid".to_owned(),
                ));
            };
            let raw = i32::try_from(pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw);
            if let Some(p) = raw {
                let _ = rustix::process::kill_process(p, rustix::process::Signal::TERM);
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if !matches!(status(socket), DaemonStatus::Running { .. })
                    && take_lock_probe(socket)
                {
                    return Ok(Some(pid));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(ServerError::StartFailed(format!(
                "the daemon (pid {pid}) did not stop within 10 s"
            )))
        }
    }
}

/// Whether the lock is free (the daemon process is gone).
fn take_lock_probe(socket: &Path) -> bool {
    match File::open(lock_path(socket)) {
        Ok(f) => {
            let free = flock(&f, FlockOperation::NonBlockingLockShared).is_ok();
            let _ = flock(&f, FlockOperation::Unlock);
            free
        }
        Err(_) => true,
    }
}
