//! `copse-hooks shim --agent NAME`: the command an agent runs as its hook.
//!
//! Reads the agent's payload on stdin, turns it into a canonical event, runs it
//! through an engine and answers in that agent's format. Never fails open by
//! accident: any internal error — unreadable payload, state or settings trouble, even
//! a panic — is answered with the agent's block (exit 2, the reason on stderr) on a
//! gated event, and recorded in `$COPSE_DIR/shim-errors.log`.
//!
//! The call goes to the user's daemon (`$COPSE_DIR/daemon.sock`, `shim/handle`;
//! started on demand) when one can be had: the shim then parses no config and opens
//! no audit store, it only relays the payload and the agent's environment (without
//! LLM keys) and replays the answer. Without a daemon (turned off with
//! `COPSE_SHIM_DAEMON=0`, or none could be started or reached before the call was
//! handed over) the engine runs in this process. Once the daemon has the call, a
//! broken answer (it died mid-call, garbage, an internal error) is not retried
//! in-process — hooks may have run — but answered with the block on a gated event.
//!
//! Every call carries this shim's build (version and executable). A daemon of another
//! build, or one whose executable was deleted or replaced since it started (an
//! upgrade, a rebuild), runs nothing and says so (`STALE_DAEMON`); the shim then stops
//! that daemon, logs it in `$COPSE_DIR/shim-errors.log`, starts its own and forwards
//! the call again (in-process when that fails too). The exchange costs no round trip:
//! a `readlink` here, a `stat` in the daemon.
//!
//! `--deadline SECONDS` bounds the whole call: an agent kills a hook that outlasts its
//! own timeout and then lets the action through, so the shim must answer first. When
//! the deadline passes — whatever is slow: a hook, starting the daemon, connecting to
//! its socket, a stopped daemon that never answers — a watchdog thread answers the
//! agent's block on a gated event (nothing on an observation), records why in
//! `$COPSE_DIR/shim-errors.log`, kills the process groups of the hooks this process
//! started and exits. Exactly one answer is ever written ([`ANSWERED`]). Without a
//! deadline, connecting to and reading from the daemon are still bounded
//! ([`DAEMON_CONNECT`], [`DAEMON_READ`]), and a daemon seen stopped for
//! [`STOPPED_GRACE`] while the shim waits fails the call closed.

use std::ffi::OsString;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use copse_hooks::agent::{self, Agent, Answer, Inbound};
use copse_hooks_wire::rpc;

/// The most payload bytes read (a larger payload is an error, which fails closed).
const MAX_PAYLOAD: u64 = 64 << 20;

/// The environment variable that turns daemon forwarding off (`0`, `off`, `false`,
/// `no`): every call then runs in-process.
pub const DAEMON_VAR: &str = "COPSE_SHIM_DAEMON";

/// How long the shim waits for a daemon it starts to answer before running the call
/// in-process.
const START_WAIT: Duration = Duration::from_secs(3);

/// The longest a connect to the daemon's socket may take (a stopped daemon whose
/// backlog is full) before the call runs in-process instead: nothing ran yet.
pub const DAEMON_CONNECT: Duration = Duration::from_secs(2);

/// The longest the shim waits for the daemon's answer when no `--deadline` is given:
/// the longest hook timeout any agent defaults to (Claude Code's and Codex's 600 s)
/// plus a margin. A daemon that never answers (stopped, wedged) then fails closed.
pub const DAEMON_READ: Duration = Duration::from_secs(630);

/// Set once an answer has been (or is being) written: the call's own or the
/// watchdog's, never both.
static ANSWERED: Mutex<bool> = Mutex::new(false);

/// The wire event of the payload, once read (the watchdog's block needs it).
static WIRE: OnceLock<Option<String>> = OnceLock::new();

/// When the call must have been answered (`--deadline`).
static DEADLINE: OnceLock<Instant> = OnceLock::new();

/// The `--deadline` as given (for the log line of a missed deadline).
static DEADLINE_SPAN: OnceLock<Duration> = OnceLock::new();

/// The watchdog thread, once started (see [`arm_watchdog`]).
static WATCHDOG: OnceLock<()> = OnceLock::new();

/// What the call is doing, for the log line of a missed deadline.
static PHASE: AtomicU8 = AtomicU8::new(Phase::ReadingPayload as u8);

/// What the call is doing, for the log line of a missed deadline.
#[derive(Clone, Copy)]
#[repr(u8)]
enum Phase {
    ReadingPayload,
    StartingDaemon,
    ConnectingDaemon,
    WaitingDaemon,
    RunningHooks,
}

impl Phase {
    fn set(self) {
        PHASE.store(self as u8, Ordering::SeqCst);
    }

    fn current() -> &'static str {
        match PHASE.load(Ordering::SeqCst) {
            x if x == Phase::StartingDaemon as u8 => "starting the daemon",
            x if x == Phase::ConnectingDaemon as u8 => "connecting to the daemon",
            x if x == Phase::WaitingDaemon as u8 => "waiting for the daemon's answer",
            x if x == Phase::RunningHooks as u8 => "running hooks in-process",
            _ => "reading the payload",
        }
    }
}

/// What is left of the deadline (`None` without one).
fn remaining() -> Option<Duration> {
    DEADLINE
        .get()
        .map(|at| at.saturating_duration_since(Instant::now()))
}

/// `bound`, or less when the deadline is nearer (never zero: a zero timeout means
/// none to the socket calls).
fn bounded(bound: Duration) -> Duration {
    remaining()
        .map_or(bound, |left| left.min(bound))
        .max(Duration::from_millis(1))
}

/// Sets the call's deadline. No thread yet: on the daemon path every blocking step
/// (reading the payload, connecting, writing, waiting for the answer) is bounded by
/// what is left of it and answers the deadline's block itself ([`expire_if_past`]);
/// the watchdog thread is started only where this process may block unbounded or
/// runs hooks ([`arm_watchdog`]: starting or replacing the daemon, running in-process).
/// Measured with `strace -c` on a warm daemon call: 119 system calls with the two
/// threads (watchdog, connect) this replaces, 96 without.
fn set_deadline(deadline: Duration) {
    let _ = DEADLINE.set(Instant::now() + deadline);
    let _ = DEADLINE_SPAN.set(deadline);
}

/// Whether the `--deadline` has passed.
fn past_deadline() -> bool {
    DEADLINE.get().is_some_and(|at| Instant::now() >= *at)
}

/// Answers the deadline's block and exits when the `--deadline` has passed (a bounded
/// step ran out of time because of it); returns otherwise.
fn expire_if_past(agent: Agent) {
    if let (true, Some(span)) = (past_deadline(), DEADLINE_SPAN.get()) {
        expire(agent, *span);
    }
}

/// Starts the watchdog that answers for the call when the deadline passes (once; no
/// deadline, no watchdog).
fn arm_watchdog(agent: Agent) {
    let (Some(at), Some(span)) = (DEADLINE.get().copied(), DEADLINE_SPAN.get().copied()) else {
        return;
    };
    if WATCHDOG.set(()).is_err() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("copse-hooks-deadline".to_owned())
        .spawn(move || {
            // Termination signals belong to the signal thread `in_process` may start
            // (it takes them with `sigwait`): this thread must never receive one.
            block_termination_signals();
            loop {
                let now = Instant::now();
                if now >= at {
                    break;
                }
                std::thread::sleep(at - now);
            }
            expire(agent, span);
        });
    if spawned.is_err() {
        // No watchdog: the socket bounds still hold; the agent's own timeout is the
        // last resort. Say so rather than pretend.
        agent::shim::record_error(
            &copse_dir(),
            agent,
            None,
            "could not start the deadline watchdog; the call is not bounded by --deadline",
        );
    }
}

fn block_termination_signals() {
    // SAFETY: all-zeroes is a valid sigset_t; sigemptyset/sigaddset initialise it and
    // pthread_sigmask only reads it, changing this thread's mask alone.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, signal);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// The deadline passed: answer the agent's block (nothing on an observation), log
/// why, kill the hooks this process started and exit — unless the call answered
/// first.
fn expire(agent: Agent, deadline: Duration) {
    let mut answered = ANSWERED.lock().unwrap_or_else(|p| p.into_inner());
    if *answered {
        return;
    }
    *answered = true;
    let wire = WIRE.get().cloned().flatten();
    let reason = format!(
        "the deadline of {} s passed while {}",
        deadline.as_secs_f64(),
        Phase::current()
    );
    copse_hooks::spawn::kill_all();
    copse_hooks::sandbox::remove_private_tmpdirs();
    agent::shim::record_error(&copse_dir(), agent, wire.as_deref(), &reason);
    let answer = agent::fail_closed(agent, wire.as_deref(), &reason);
    write_answer(&answer);
    std::process::exit(answer.exit_code);
}

fn write_answer(answer: &Answer) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(answer.stdout.as_bytes());
    let _ = out.flush();
    if !answer.stderr.is_empty() {
        let _ = std::io::stderr().write_all(answer.stderr.as_bytes());
    }
}

/// Where a shim call's engine runs.
pub enum Backend {
    /// Forward to the user's daemon on this socket (started on demand), falling back
    /// to in-process when no daemon can be had.
    Daemon(PathBuf),
    /// Build an engine in this process for the call (`why`: the daemon is turned off,
    /// or could not be had).
    InProcess {
        /// Why not the daemon.
        why: String,
    },
}

impl Backend {
    /// The backend for this call: the daemon unless `COPSE_SHIM_DAEMON` turns it off.
    pub fn select() -> Backend {
        let off = std::env::var(DAEMON_VAR).is_ok_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "0" | "off" | "false" | "no"
            )
        });
        // Inside a hook (an agent a hook started): the daemon refuses such a peer, and
        // the in-process recursion guard answers at once without touching the disk.
        let in_hook = std::env::var("COPSE_HOOK_DEPTH")
            .is_ok_and(|d| d.trim().parse::<i64>().is_ok_and(|d| d >= 1));
        // A `COPSE_DIR` that is not the user's own private directory never gets a
        // daemon of its own: the in-process path refuses it and fails closed.
        let refused_dir = std::env::var_os("COPSE_DIR")
            .filter(|v| !v.is_empty())
            .and_then(|dir| {
                let cwd: Vec<PathBuf> = std::env::current_dir()
                    .ok()
                    .and_then(|c| std::fs::canonicalize(c).ok())
                    .into_iter()
                    .collect();
                copse_hooks::agent::shim::copse_dir_refusal(std::path::Path::new(&dir), &cwd)
            });
        if let Some(why) = refused_dir {
            Backend::InProcess { why }
        } else if off {
            Backend::InProcess {
                why: format!("{DAEMON_VAR}=0"),
            }
        } else if in_hook {
            Backend::InProcess {
                why: "inside a hook (COPSE_HOOK_DEPTH)".to_owned(),
            }
        } else {
            Backend::Daemon(super::serve::daemon_socket())
        }
    }
}

/// The agent's environment as the engine should see it: everything but LLM API keys
/// (which never reach a hook, nor the daemon).
fn call_vars() -> Vec<(OsString, OsString)> {
    std::env::vars_os()
        .filter(|(k, _)| !k.to_str().is_some_and(copse_hooks::is_llm_secret))
        .collect()
}

fn copse_dir() -> PathBuf {
    copse_hooks::EngineConfig::process_copse_dir()
}

/// Runs the call in this process (`payload`: the bytes `inbound` was read from, which
/// the agent's own hooks get as they came).
fn in_process(agent: Agent, mut inbound: Inbound, payload: &[u8], why: &str) -> Answer {
    // Hooks run in this process from here on: a terminating signal must kill them and
    // flush the audit store (see `signals`). The daemon path runs no hook here and
    // needs none of it (a signal ends the relay; the daemon sees the hang-up), so the
    // thread is only started now. No other thread exists yet.
    #[cfg(unix)]
    crate::signals::install();
    Phase::RunningHooks.set();
    arm_watchdog(agent);
    if inbound.cwd.is_none() {
        inbound.cwd = std::env::current_dir().ok();
    }
    let vars = call_vars();
    let result = agent::shim::engine_config(agent, &inbound, &vars).and_then(|config| {
        agent::shim::record_served(&config.copse_dir, agent, "in-process", Some(why));
        agent::shim::handle(agent, &inbound, payload, config)
    });
    match result {
        Ok(reply) => agent::answer(agent, &inbound, &reply),
        Err(e) => {
            let reason = e.to_string();
            agent::shim::record_error(&copse_dir(), agent, Some(&inbound.wire_event), &reason);
            agent::fail_closed(agent, Some(&inbound.wire_event), &reason)
        }
    }
}

/// Why forwarding failed: before the daemon could have run anything (fall back to
/// in-process), or after it may have (fail closed: never run hooks twice, never fail
/// open).
enum Forward {
    Unavailable(String),
    Broken(String),
    /// The daemon (this pid, when known) is another build than this shim, or its
    /// executable was deleted or replaced: it ran nothing, and is to be replaced.
    Stale(String, Option<u32>),
    /// The daemon (this pid, when known) closed the connection before a byte of its
    /// answer: it may have run hooks — unless it was another build, which refuses
    /// this shim's calls before running anything ([`refused_us`]).
    Lost(String, Option<u32>),
}

/// Connects to the socket, waiting at most `bound`: a connect to a daemon that is
/// stopped with a full backlog would otherwise block for good. The socket is
/// non-blocking while it connects: on a full backlog a Unix socket's connect fails at
/// once with `EAGAIN` (it never answers "in progress"), and it is tried again after a
/// growing pause until `bound` runs out. No helper thread: creating one cost the warm
/// path more than the connect itself.
fn connect_bounded(socket: &Path, bound: Duration) -> std::io::Result<UnixStream> {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
    let addr = SocketAddrUnix::new(socket)?;
    let until = Instant::now() + bound;
    let mut pause = Duration::from_micros(200);
    loop {
        let fd = rustix::net::socket_with(
            AddressFamily::UNIX,
            SocketType::STREAM,
            SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
            None,
        )?;
        match rustix::net::connect(&fd, &addr) {
            Ok(()) => {
                let stream = UnixStream::from(fd);
                stream.set_nonblocking(false)?;
                return Ok(stream);
            }
            Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => {
                let now = Instant::now();
                if now >= until {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("no connection within {} ms", bound.as_millis()),
                    ));
                }
                std::thread::sleep(pause.min(until - now));
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Connects to the daemon, starting it when nothing answers.
fn connect(socket: &Path, agent: Agent) -> Result<UnixStream, String> {
    Phase::ConnectingDaemon.set();
    match connect_bounded(socket, bounded(DAEMON_CONNECT)) {
        Ok(s) => return Ok(s),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) => {}
        Err(e) => return Err(format!("cannot connect to {}: {e}", socket.display())),
    }
    Phase::StartingDaemon.set();
    arm_watchdog(agent);
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let log = socket.with_file_name("daemon.log");
    copse_hooks_server::socket::start_with(
        &exe,
        socket,
        &log,
        bounded(START_WAIT),
        Some(&call_vars()),
    )
    .map_err(|e| e.to_string())?;
    Phase::ConnectingDaemon.set();
    connect_bounded(socket, bounded(DAEMON_CONNECT))
        .map_err(|e| format!("cannot connect to {}: {e}", socket.display()))
}

/// The `shim/handle` request line, serialised straight from the params.
#[derive(serde::Serialize)]
struct Request<'a> {
    jsonrpc: &'static str,
    id: u32,
    method: &'static str,
    params: &'a rpc::ShimHandleParams,
}

/// The daemon's answer: a result or an error (anything else in the line is ignored).
#[derive(serde::Deserialize)]
struct Response {
    #[serde(default)]
    result: Option<serde_json::Value>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

/// Forwards one call: `shim/handle` on the daemon's socket.
/// `original` is the payload as the agent wrote it, when the shim changed it (see
/// [`run`]): sent beside it for the agent's own hooks.
fn forward(
    socket: &Path,
    agent: Agent,
    payload: &[u8],
    original: Option<&[u8]>,
) -> Result<Answer, Forward> {
    let payload = std::str::from_utf8(payload)
        .map_err(|_| Forward::Unavailable("the payload is not UTF-8".into()))?;
    let verbatim = original
        .map(|o| {
            std::str::from_utf8(o)
                .map(str::to_owned)
                .map_err(|_| Forward::Unavailable("the payload is not UTF-8".into()))
        })
        .transpose()?;
    let mut stream = connect(socket, agent).map_err(Forward::Unavailable)?;
    // The environment straight into the map sent (LLM keys and non-UTF-8 variables
    // left out), without an intermediate list.
    let env: std::collections::BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| !copse_hooks::is_llm_secret(k))
        .collect();
    let params = rpc::ShimHandleParams {
        agent: agent.as_str().to_string(),
        payload: payload.to_string(),
        env,
        cwd: std::env::current_dir()
            .ok()
            .and_then(|d| d.into_os_string().into_string().ok()),
        client: Some(own_build()),
        verbatim,
    };
    let request = Request {
        jsonrpc: "2.0",
        id: 1,
        method: "shim/handle",
        params: &params,
    };
    let mut line = serde_json::to_vec(&request)
        .map_err(|e| Forward::Unavailable(format!("cannot encode the call: {e}")))?;
    line.push(b'\n');
    // Bounded both ways: a stopped or wedged daemon must not outlast the agent's
    // timeout (which would let the action through).
    let _ = stream.set_write_timeout(Some(bounded(DAEMON_CONNECT)));
    // A failed write means the daemon has no complete request: nothing ran.
    stream
        .write_all(&line)
        .map_err(|e| Forward::Unavailable(format!("the daemon did not take the call: {e}")))?;
    Phase::WaitingDaemon.set();
    let daemon = copse_hooks_server::socket::holder_pid(socket);
    let reply = read_answer(&stream, daemon)?;
    let response: Response = serde_json::from_slice(&reply)
        .map_err(|e| Forward::Broken(format!("the daemon's answer is not JSON: {e}")))?;
    if let Some(err) = response.error {
        let code = err.get("code").and_then(serde_json::Value::as_i64);
        let message = err
            .get("message")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("(no message)");
        // A daemon that does not know the method (an older one), or that refused this
        // process as a peer (it looks like a hook), ran nothing.
        return Err(if code == Some(rpc::codes::STALE_DAEMON) {
            Forward::Stale(message.to_owned(), daemon)
        } else if code == Some(rpc::codes::INVALID_PARAMS) && message.contains("`client`") {
            // A daemon older than the build exchange refuses the field (it takes no
            // unknown field) and ran nothing: it is stale too.
            Forward::Stale(
                format!("the daemon is older than this shim ({message})"),
                daemon,
            )
        } else if code == Some(rpc::codes::REQUEST_CANCELLED) {
            // Stopped mid-call (another shim replacing it): hooks may have run, unless
            // it was another build ([`refused_us`]).
            Forward::Lost(format!("the daemon failed the call: {message}"), daemon)
        } else if code == Some(rpc::codes::PEER_REFUSED) {
            Forward::Unavailable(format!("the daemon refused this process: {message}"))
        } else if code == Some(rpc::codes::METHOD_NOT_FOUND) {
            Forward::Unavailable(format!("the daemon does not serve shim/handle: {message}"))
        } else {
            Forward::Broken(format!("the daemon failed the call: {message}"))
        });
    }
    let result: rpc::ShimHandleResult = response
        .result
        .ok_or_else(|| Forward::Broken("the daemon's answer has no result".into()))
        .and_then(|r| {
            serde_json::from_value(r)
                .map_err(|e| Forward::Broken(format!("the daemon's answer is malformed: {e}")))
        })?;
    Ok(Answer {
        stdout: result.stdout,
        stderr: result.stderr,
        exit_code: result.exit_code,
    })
}

/// How often the shim looks at a silent daemon while it waits for its answer.
const DAEMON_POLL: Duration = Duration::from_secs(1);

/// How long the daemon may stay stopped (`SIGSTOP`, a debugger) while the shim waits
/// before the call fails closed: a stopped daemon never answers, and without
/// `--deadline` the agent's own timeout would otherwise let the action through.
const STOPPED_GRACE: Duration = Duration::from_secs(3);

/// Whether process `pid` is stopped or traced (`T` / `t` in `/proc/PID/stat`).
fn is_stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with(['T', 't']))
        })
        .unwrap_or(false)
}

/// Reads the daemon's one-line answer, bounded: at most [`DAEMON_READ`] (or what is
/// left of the deadline), and no longer than [`STOPPED_GRACE`] once the daemon holding
/// the socket (`daemon`) is seen stopped.
fn read_answer(stream: &UnixStream, daemon: Option<u32>) -> Result<Vec<u8>, Forward> {
    let started = Instant::now();
    let bound = bounded(DAEMON_READ);
    let mut stopped_since: Option<Instant> = None;
    let mut reader = BufReader::new(stream);
    let mut reply = Vec::new();
    loop {
        let left = bound.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(Forward::Broken(format!(
                "the daemon did not answer within {} s",
                bound.as_secs_f64()
            )));
        }
        let _ = stream.set_read_timeout(Some(left.min(DAEMON_POLL)));
        // Bytes read before a timeout stay in `reply`; the next round goes on.
        match (&mut reader)
            .take(MAX_PAYLOAD * 4)
            .read_until(b'\n', &mut reply)
        {
            Ok(0) if reply.is_empty() => {
                return Err(Forward::Lost(
                    "the daemon closed the connection mid-call".into(),
                    daemon,
                ));
            }
            Ok(0) => {
                return Err(Forward::Broken(
                    "the daemon closed the connection mid-call".into(),
                ));
            }
            Ok(_) if reply.ends_with(b"\n") => return Ok(reply),
            Ok(_) if reply.len() as u64 >= MAX_PAYLOAD * 4 => {
                return Err(Forward::Broken("the daemon's answer is too large".into()));
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                match daemon.filter(|pid| is_stopped(*pid)) {
                    Some(pid) => {
                        let since = *stopped_since.get_or_insert_with(Instant::now);
                        if since.elapsed() >= STOPPED_GRACE {
                            return Err(Forward::Broken(format!(
                                "the daemon (pid {pid}) is stopped and did not answer"
                            )));
                        }
                    }
                    None => stopped_since = None,
                }
            }
            Err(e) if reply.is_empty() && e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Err(Forward::Lost(
                    format!("reading the daemon's answer: {e}"),
                    daemon,
                ));
            }
            Err(e) => return Err(Forward::Broken(format!("reading the daemon's answer: {e}"))),
        }
    }
}

/// The wire event named in a payload, when that much can be read.
fn wire_of(payload: &[u8]) -> Option<String> {
    serde_json::from_slice::<serde_json::Value>(payload)
        .ok()
        .and_then(|v| v.get("hook_event_name")?.as_str().map(str::to_string))
}

/// This shim's build, as sent with every call: the version and the executable the
/// kernel resolved (`/proc/self/exe`, one `readlink`).
fn own_build() -> rpc::BuildIdentity {
    rpc::BuildIdentity {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        exe: std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    }
}

/// How long the shim waits for a stale daemon to stop before running the call
/// in-process (a daemon finishing its in-flight calls).
const STALE_STOP: Duration = Duration::from_secs(10);

/// Stops a stale daemon (only if it is still `pid`: another shim may have replaced it
/// already) and logs why in `shim-errors.log`. The caller's next connect starts this
/// shim's own build.
fn replace_daemon(socket: &Path, agent: Agent, payload: &[u8], why: &str, pid: Option<u32>) {
    Phase::StartingDaemon.set();
    arm_watchdog(agent);
    let wire = wire_of(payload);
    let pid_text = pid.map_or_else(|| "?".to_owned(), |p| p.to_string());
    let outcome = match pid {
        Some(pid) => match copse_hooks_server::socket::stop_pid(socket, pid, bounded(STALE_STOP)) {
            Ok(true) => "stopped it".to_owned(),
            Ok(false) => "it was already gone".to_owned(),
            Err(e) => format!("could not stop it: {e}"),
        },
        None => "its pid is unknown; not stopped".to_owned(),
    };
    agent::shim::record_error(
        &copse_dir(),
        agent,
        wire.as_deref(),
        &format!(
            "replacing the daemon (pid {pid_text}): {why}; {outcome}; starting {}",
            own_build().exe
        ),
    );
}

/// Whether daemon `pid`, which cut the connection before answering, was another
/// build than this shim: another version, executable path or executable file (what
/// it recorded in its info file, which outlives it). Such a daemon refuses this
/// shim's calls before running anything (`STALE_DAEMON`), so nothing ran: a stale
/// daemon another shim stopped while this call was on its way.
fn refused_us(socket: &Path, pid: u32) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let Some(info) = copse_hooks_server::socket::info_of(socket, pid) else {
        return false;
    };
    let mine = own_build();
    let my_file = std::fs::metadata("/proc/self/exe")
        .ok()
        .map(|m| (m.dev(), m.ino()));
    info.version != mine.version
        || info.exe != mine.exe
        || (info.exe_file.is_some() && my_file.is_some() && info.exe_file != my_file)
}

/// Serves one call: `payload` is what is read, `original` what the agent wrote when
/// the shim changed it (the agent's own hooks get those bytes).
fn serve(agent: Agent, payload: &[u8], original: Option<&[u8]>) -> Answer {
    // A test seam, in debug builds only: an internal error that panics, so a test sees
    // the panic unwind to the fail-closed answer in the binary as linked (build.rs links
    // the unwinder statically).
    #[cfg(debug_assertions)]
    if std::env::var_os("COPSE_SHIM_TEST_PANIC").is_some() {
        panic!("COPSE_SHIM_TEST_PANIC is set");
    }
    let why = match Backend::select() {
        Backend::Daemon(socket) => {
            let mut attempt = forward(&socket, agent, payload, original);
            let stale = match &attempt {
                Err(Forward::Stale(why, pid)) => Some((why.clone(), *pid)),
                Err(Forward::Lost(why, Some(pid))) if refused_us(&socket, *pid) => Some((
                    format!("{why}, but it was another build (it ran nothing for this call)"),
                    Some(*pid),
                )),
                _ => None,
            };
            if let Some((why, pid)) = stale {
                replace_daemon(&socket, agent, payload, &why, pid);
                attempt = forward(&socket, agent, payload, original);
            }
            if attempt.is_err() {
                // A step that ran out of time because of the deadline: its block.
                expire_if_past(agent);
            }
            match attempt {
                Ok(answer) => return answer,
                Err(Forward::Broken(reason) | Forward::Lost(reason, _)) => {
                    // The daemon may have run hooks: fail closed on a gated event
                    // rather than run them again (or fail open).
                    let wire = wire_of(payload);
                    agent::shim::record_error(&copse_dir(), agent, wire.as_deref(), &reason);
                    return agent::fail_closed(agent, wire.as_deref(), &reason);
                }
                // Still stale (another build put its daemon back in between): nothing
                // ran; this call runs in-process.
                Err(Forward::Unavailable(reason) | Forward::Stale(reason, _)) => {
                    format!("no daemon: {reason}")
                }
            }
        }
        Backend::InProcess { why } => why,
    };
    let inbound = match agent::read(agent, payload) {
        Ok(i) => i,
        Err(e) => {
            let reason = e.to_string();
            // Which event was it, if that much can be read?
            let wire = wire_of(payload);
            agent::shim::record_error(&copse_dir(), agent, wire.as_deref(), &reason);
            return agent::fail_closed(agent, wire.as_deref(), &reason);
        }
    };
    in_process(agent, inbound, original.unwrap_or(payload), &why)
}

/// Reads the payload (at most one byte over [`MAX_PAYLOAD`], which the caller refuses),
/// bounded by the deadline when there is one: an agent that never closes the hook's
/// stdin must not hold the call past it.
fn read_payload(payload: &mut Vec<u8>) -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut stdin = stdin.lock();
    let Some(at) = DEADLINE.get().copied() else {
        return stdin
            .by_ref()
            .take(MAX_PAYLOAD + 1)
            .read_to_end(payload)
            .map(drop);
    };
    // On the stack: a zeroed 64 KiB heap buffer cost about a dozen page faults per
    // call (`perf stat -e page-faults`: 273 → 262 with `--deadline`).
    let mut chunk = [0u8; 8 << 10];
    loop {
        let left = at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the agent did not finish sending it",
            ));
        }
        let timeout = rustix::event::Timespec::try_from(left).unwrap_or(rustix::event::Timespec {
            tv_sec: i64::MAX,
            tv_nsec: 0,
        });
        let mut fds = [rustix::event::PollFd::new(
            &stdin,
            rustix::event::PollFlags::IN,
        )];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => continue,
            Ok(_) => {}
            Err(e) => return Err(e.into()),
        }
        match stdin.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                payload.extend_from_slice(&chunk[..n]);
                if payload.len() as u64 > MAX_PAYLOAD {
                    return Ok(());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Runs one agent call; `deadline` bounds it (`--deadline SECONDS`).
pub fn run(agent: Agent, deadline: Option<Duration>) -> ExitCode {
    if let Some(d) = deadline {
        set_deadline(d);
    }
    let mut payload = Vec::new();
    let read = read_payload(&mut payload);
    // What the agent wrote, when the shim names the event in a copy of it.
    let mut original = None;
    // Copilot's payloads do not name their event: the installed entry's variable does.
    if read.is_ok()
        && agent == Agent::Copilot
        && let Some(stamped) = agent::copilot::stamp_event(
            &payload,
            std::env::var(agent::copilot::EVENT_VAR).ok().as_deref(),
        )
    {
        original = Some(std::mem::replace(&mut payload, stamped));
    }
    let answer = match read {
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut && past_deadline() => {
            expire_if_past(agent);
            let reason = format!("could not read the payload: {e}");
            agent::fail_closed(agent, None, &reason)
        }
        Err(e) => {
            let reason = format!("could not read the payload: {e}");
            agent::shim::record_error(&copse_dir(), agent, None, &reason);
            agent::fail_closed(agent, None, &reason)
        }
        Ok(_) if payload.len() as u64 > MAX_PAYLOAD => {
            let reason = format!("the payload is larger than {MAX_PAYLOAD} bytes");
            agent::shim::record_error(&copse_dir(), agent, None, &reason);
            agent::fail_closed(agent, None, &reason)
        }
        Ok(_) => match std::panic::catch_unwind(|| {
            let _ = WIRE.set(wire_of(&payload));
            serve(agent, &payload, original.as_deref())
        }) {
            Ok(a) => a,
            Err(_) => {
                let reason = "internal error (panic)".to_string();
                let wire = wire_of(&payload);
                agent::shim::record_error(&copse_dir(), agent, wire.as_deref(), &reason);
                agent::fail_closed(agent, wire.as_deref(), &reason)
            }
        },
    };
    let mut answered = ANSWERED.lock().unwrap_or_else(|p| p.into_inner());
    if *answered {
        // The watchdog answered and is exiting the process.
        drop(answered);
        loop {
            std::thread::park();
        }
    }
    *answered = true;
    write_answer(&answer);
    drop(answered);
    ExitCode::from(u8::try_from(answer.exit_code).unwrap_or(2))
}
