//! One running persistent hook: the process, its threads, and the requests in flight.
//!
//! An *owner* thread starts the process (on Linux the parent-death signal is tied to
//! the thread that forked, so that thread must live as long as the process) and then
//! only waits for its stdout to hang up. The replies are read by the callers
//! themselves: a caller waiting for its answer takes the stdout reader when no other
//! caller holds it (the *leader*), reads lines and hands each reply to the request
//! waiting for its id over that request's own channel — its own included. Another
//! caller waits on its channel meanwhile, and a leader that leaves with requests still
//! in flight promotes one of them to read next. So a lone request is answered on its
//! own thread, with no hand-off between threads (measured by the persistent bench
//! against a direct pipe round trip), and requests still pipeline: a slow one does not
//! hold up the others. A second thread reads stderr and appends each chunk to every
//! request in flight (the attribution the audit store shows).
//!
//! When stdout hangs up (exit, crash, closed stdout), the owner drains what is left,
//! records why, fails every request in flight with that reason, SIGKILLs the group (the
//! whole pid namespace) and reaps it; a line that is not protocol or exceeds the output
//! cap kills the group first, wherever it is read. [`Process::stop`] closes stdin
//! first, so a well-behaved hook exits by itself within the grace.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::protocol::{Answer, Hello, Line, encode_request_raw, parse_line};
use crate::sandbox::PreparedSandbox;
use crate::spawn::{Limits, SpawnRequest, StdinWriter};

/// Why a persistent hook process ended (or could not serve).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Death {
    /// It could not be started.
    Spawn(String),
    /// It exited or closed its stdout (exit code or signal when known).
    Exited {
        /// Its exit code.
        code: Option<i32>,
        /// The signal that killed it.
        signal: Option<i32>,
    },
    /// It printed a line that is not protocol.
    Protocol(String),
    /// It printed a line longer than the output cap.
    Oversize(usize),
    /// It did not say hello in time.
    NoHello(Duration),
    /// The engine stopped it (shutdown, idle, changed script).
    Stopped,
}

impl Death {
    /// Whether this counts as a crash (toward backoff and `broken`).
    pub fn is_crash(&self) -> bool {
        !matches!(self, Death::Stopped)
    }

    /// The reason, phrased to follow the hook's name.
    pub fn message(&self) -> String {
        match self {
            Death::Spawn(e) => format!("failed to start: {e}"),
            Death::Exited {
                code: Some(c),
                signal: _,
            } => format!("exited with code {c}"),
            Death::Exited {
                code: None,
                signal: Some(s),
            } => format!("was killed by signal {s}"),
            Death::Exited { .. } => "closed its stdout".to_string(),
            Death::Protocol(e) => e.clone(),
            Death::Oversize(cap) => {
                format!("printed a line of more than {cap} bytes on stdout")
            }
            Death::NoHello(t) => {
                format!("did not say hello within {}", crate::outcome::seconds(*t))
            }
            Death::Stopped => "was stopped".to_string(),
        }
    }
}

/// How one request ended.
#[derive(Debug)]
pub enum CallResult {
    /// The hook answered.
    Answered {
        /// The answer.
        answer: Answer,
        /// Stderr written while the request was in flight.
        stderr: Vec<u8>,
    },
    /// The hook did not ask for this event in its hello.
    NotWanted,
    /// No answer within the timeout (the process lives on; a late answer is dropped).
    TimedOut {
        /// Stderr written while the request was in flight.
        stderr: Vec<u8>,
    },
    /// The host cancelled the event first (the process lives on; a late answer is
    /// dropped).
    Cancelled {
        /// Stderr written while the request was in flight.
        stderr: Vec<u8>,
    },
    /// The process died (or could not serve) before answering.
    Failed {
        /// Why.
        death: Death,
        /// Stderr written while the request was in flight.
        stderr: Vec<u8>,
    },
}

/// What it takes to start the process.
pub struct StartSpec {
    /// The shell command.
    pub command: String,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Its complete environment.
    pub env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    /// The prepared sandbox (kept for the life of the process: its private TMPDIR).
    pub sandbox: Option<Box<dyn PreparedSandbox>>,
    /// The output caps.
    pub limits: Limits,
}

/// What a waiting request receives: the answer (or why there is none) and the stderr
/// written while it was in flight, or the turn to read stdout.
enum Delivery {
    Done(Result<Answer, Death>, Vec<u8>),
    /// The leader left with this request in flight: read next.
    Promote,
}

/// A request waiting for its reply.
struct Pending {
    tx: mpsc::Sender<Delivery>,
    stderr: Vec<u8>,
}

#[derive(Default)]
struct State {
    hello: Option<Hello>,
    dead: Option<Death>,
    pending: HashMap<u64, Pending>,
    /// The process has been reaped: its pid must not be signalled any more.
    reaped: bool,
    /// The last stderr bytes, for the message of a crash.
    tail: Vec<u8>,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    pid: AtomicU64,
    stderr_cap: usize,
    /// The process's stdout, read by whichever caller leads (or by the owner once it
    /// hung up); `None` until started.
    reader: Mutex<Option<LineReader>>,
}

/// Stdout, read one protocol line at a time across leaders.
struct LineReader {
    reader: BufReader<std::fs::File>,
    /// A line not complete yet (kept when a leader stops mid-line).
    line: Vec<u8>,
    cap: usize,
    /// Stdout ended.
    eof: bool,
}

/// What reading stdout gave.
enum Read1 {
    /// A complete line was handled.
    Line,
    /// Nothing complete within the wait.
    Nothing,
    /// Stdout ended (the owner records why and fails what is in flight).
    End,
}

impl LineReader {
    /// Reads until one complete line is handled, the wait passes or stdout ends. A
    /// line that is not protocol or is too long kills the process (`Err`).
    fn read_one(&mut self, shared: &Shared, wait: Duration) -> Result<Read1, Death> {
        use std::os::fd::AsFd;
        let until = Instant::now() + wait;
        loop {
            if self.eof {
                return Ok(Read1::End);
            }
            if self.reader.buffer().is_empty() {
                let left = until.saturating_duration_since(Instant::now());
                let ms = i32::try_from(left.as_millis()).unwrap_or(i32::MAX);
                let timeout = rustix::event::Timespec {
                    tv_sec: i64::from(ms / 1000),
                    tv_nsec: i64::from(ms % 1000) * 1_000_000,
                };
                let fd = self.reader.get_ref().as_fd();
                let mut fds = [rustix::event::PollFd::new(
                    &fd,
                    rustix::event::PollFlags::IN,
                )];
                match rustix::event::poll(&mut fds, Some(&timeout)) {
                    Ok(0) => return Ok(Read1::Nothing),
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(_) => {
                        self.eof = true;
                        return Ok(Read1::End);
                    }
                }
            }
            let buf = match self.reader.fill_buf() {
                Ok([]) | Err(_) => {
                    self.eof = true;
                    return Ok(Read1::End);
                }
                Ok(buf) => buf,
            };
            let (chunk, complete) = match buf.iter().position(|b| *b == b'\n') {
                Some(i) => (buf.get(..i).unwrap_or_default(), Some(i + 1)),
                None => (buf, None),
            };
            if self.line.len() + chunk.len() > self.cap {
                return Err(Death::Oversize(self.cap));
            }
            self.line.extend_from_slice(chunk);
            let used = complete.unwrap_or(buf.len());
            self.reader.consume(used);
            if complete.is_none() {
                continue;
            }
            let line = std::mem::take(&mut self.line);
            let text = line.trim_ascii();
            if !text.is_empty() {
                handle_line(text, shared)?;
            }
            return Ok(Read1::Line);
        }
    }
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// How often a request waiting for its answer checks the host's cancellation.
const CANCEL_SLICE: Duration = Duration::from_millis(20);

/// Most stderr bytes kept as the tail of a dead process.
const TAIL: usize = 2048;

/// A running (or dead) persistent hook process.
pub struct Process {
    shared: Arc<Shared>,
    stdin: Mutex<Option<StdinWriter>>,
    next_id: AtomicU64,
    owner: Mutex<Option<JoinHandle<()>>>,
    /// When a request last used it (milliseconds since `epoch`).
    last_used: AtomicU64,
    epoch: Instant,
    /// Whether it ever answered a request.
    answered: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Process {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Process")
            .field("pid", &self.pid())
            .finish_non_exhaustive()
    }
}

impl Process {
    /// Starts the process. Returns once it is running (not once it said hello).
    pub fn start(spec: StartSpec) -> Result<Process, Death> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            pid: AtomicU64::new(0),
            stderr_cap: spec.limits.stderr_cap,
            reader: Mutex::new(None),
        });
        let (started_tx, started_rx) = mpsc::channel();
        let owner_shared = Arc::clone(&shared);
        let owner = std::thread::Builder::new()
            .name("copse-persistent".to_string())
            .spawn(move || owner(spec, &owner_shared, &started_tx))
            .map_err(|e| Death::Spawn(e.to_string()))?;
        let stdin = match started_rx.recv() {
            Ok(Ok(stdin)) => stdin,
            Ok(Err(death)) => {
                let _ = owner.join();
                return Err(death);
            }
            Err(_) => {
                let _ = owner.join();
                return Err(Death::Spawn("the supervising thread ended".to_string()));
            }
        };
        Ok(Process {
            shared,
            stdin: Mutex::new(Some(stdin)),
            next_id: AtomicU64::new(1),
            owner: Mutex::new(Some(owner)),
            last_used: AtomicU64::new(0),
            epoch: Instant::now(),
            answered: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Its pid (0 before the start completed).
    pub fn pid(&self) -> u64 {
        self.shared.pid.load(Ordering::Relaxed)
    }

    /// Why it ended, once it has.
    pub fn death(&self) -> Option<Death> {
        lock(&self.shared.state).dead.clone()
    }

    /// The last stderr bytes it wrote (for a crash's message).
    pub fn stderr_tail(&self) -> String {
        String::from_utf8_lossy(&lock(&self.shared.state).tail).into_owned()
    }

    /// Whether it ever answered a request.
    pub fn has_answered(&self) -> bool {
        self.answered.load(Ordering::Relaxed)
    }

    /// How long since a request last used it.
    pub fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_used.load(Ordering::Relaxed));
        self.epoch.elapsed().saturating_sub(last)
    }

    /// Requests in flight.
    pub fn in_flight(&self) -> usize {
        lock(&self.shared.state).pending.len()
    }

    /// Marks it used now (the idle stop measures from here).
    pub fn touch(&self) {
        let ms = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_used.store(ms, Ordering::Relaxed);
    }

    /// Sends one request (`payload`: the JSON text a per-call hook would read on stdin)
    /// and waits for its answer until `timeout` has passed.
    pub fn call(&self, event: &str, payload: &[u8], timeout: Duration) -> CallResult {
        self.touch();
        let deadline = Instant::now().checked_add(timeout);
        if let Some(early) = self.await_hello(event, deadline, timeout) {
            return early;
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel();
        {
            let mut state = lock(&self.shared.state);
            if let Some(death) = &state.dead {
                return CallResult::Failed {
                    death: death.clone(),
                    stderr: Vec::new(),
                };
            }
            state.pending.insert(
                id,
                Pending {
                    tx,
                    stderr: Vec::new(),
                },
            );
        }
        if let Some(failed) = self.send(id, event, payload, deadline) {
            return failed;
        }
        let result = self.await_answer(id, &rx, deadline);
        self.promote();
        result
    }

    /// Waits (reading stdout when no one else does) until the hook said hello: `None`
    /// when the request may be sent, else the call's result.
    fn await_hello(
        &self,
        event: &str,
        deadline: Option<Instant>,
        timeout: Duration,
    ) -> Option<CallResult> {
        loop {
            let state = lock(&self.shared.state);
            if let Some(death) = &state.dead {
                return Some(CallResult::Failed {
                    death: death.clone(),
                    stderr: Vec::new(),
                });
            }
            if let Some(hello) = &state.hello {
                return (!hello.wants(event)).then_some(CallResult::NotWanted);
            }
            let wait = deadline.map_or(Duration::from_secs(3600), |at| {
                at.saturating_duration_since(Instant::now())
            });
            if wait.is_zero() {
                drop(state);
                // No hello within a request's timeout: the process is useless.
                self.fail(Death::NoHello(timeout));
                return Some(CallResult::Failed {
                    death: Death::NoHello(timeout),
                    stderr: Vec::new(),
                });
            }
            let slice = wait.min(CANCEL_SLICE);
            match self.try_lead() {
                Some(mut reader) => {
                    drop(state);
                    let read = reader.as_mut().map(|r| r.read_one(&self.shared, slice));
                    drop(reader);
                    match read {
                        Some(Err(death)) => self.fail(death),
                        Some(Ok(Read1::End)) | None => {
                            let _ = self.wait_death(slice);
                        }
                        Some(Ok(Read1::Line | Read1::Nothing)) => {}
                    }
                }
                // Another caller reads: it says when the hello came.
                None => {
                    let _ = self.shared.changed.wait_timeout(state, slice);
                }
            }
        }
    }

    /// Writes the request line; the call's result when that failed.
    fn send(
        &self,
        id: u64,
        event: &str,
        payload: &[u8],
        deadline: Option<Instant>,
    ) -> Option<CallResult> {
        let line = encode_request_raw(id, event, payload);
        let written = {
            let stdin = self
                .stdin
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            match stdin.as_ref() {
                Some(w) => w
                    .write_all(&line, deadline.unwrap_or_else(far_future))
                    .map_err(|e| e.kind()),
                None => Err(std::io::ErrorKind::BrokenPipe),
            }
        };
        let kind = written.err()?;
        let stderr = self.forget(id);
        if kind == std::io::ErrorKind::TimedOut {
            return Some(CallResult::TimedOut { stderr });
        }
        // The owner sees the same end; wait briefly for its reason.
        let death = self
            .wait_death(Duration::from_millis(200))
            .unwrap_or(Death::Exited {
                code: None,
                signal: None,
            });
        Some(CallResult::Failed { death, stderr })
    }

    /// Waits for the answer to request `id`, reading stdout itself whenever no other
    /// caller does. A host's cancellation abandons this request (never the shared
    /// process): the wait is sliced so a cancel is seen within a slice.
    fn await_answer(
        &self,
        id: u64,
        rx: &mpsc::Receiver<Delivery>,
        deadline: Option<Instant>,
    ) -> CallResult {
        let cancel = crate::cancel::CancelToken::current();
        loop {
            if let Ok(Delivery::Done(got, stderr)) = rx.try_recv() {
                return self.finish(got, stderr);
            }
            let left = deadline.map_or(Duration::from_secs(3600), |at| {
                at.saturating_duration_since(Instant::now())
            });
            if left.is_zero() {
                return self.timed_out(id, rx);
            }
            if cancel
                .as_ref()
                .is_some_and(crate::cancel::CancelToken::is_cancelled)
            {
                return CallResult::Cancelled {
                    stderr: self.forget(id),
                };
            }
            let slice = if cancel.is_some() {
                left.min(CANCEL_SLICE)
            } else {
                left
            };
            let read = self
                .try_lead()
                .map(|mut reader| reader.as_mut().map(|r| r.read_one(&self.shared, slice)));
            match read {
                Some(Some(Ok(Read1::Line | Read1::Nothing))) => continue,
                Some(Some(Err(death))) => self.fail(death),
                // Stdout ended: the owner fails what is in flight with the reason.
                Some(Some(Ok(Read1::End)) | None) | None => {}
            }
            // Someone else reads (or stdout is done): wait for the answer or a turn.
            match rx.recv_timeout(slice) {
                Ok(Delivery::Done(got, stderr)) => return self.finish(got, stderr),
                Ok(Delivery::Promote) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return CallResult::Failed {
                        death: Death::Stopped,
                        stderr: self.forget(id),
                    };
                }
            }
        }
    }

    /// The stdout reader, when no one else holds it.
    fn try_lead(&self) -> Option<MutexGuard<'_, Option<LineReader>>> {
        match self.shared.reader.try_lock() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Gives one request still in flight the turn to read stdout (a leader leaving).
    fn promote(&self) {
        let state = lock(&self.shared.state);
        if let Some(p) = state.pending.values().next() {
            let _ = p.tx.send(Delivery::Promote);
        }
    }

    /// A request out of time: forgotten (a late answer finds no one), unless the
    /// answer raced in meanwhile.
    fn timed_out(&self, id: u64, rx: &mpsc::Receiver<Delivery>) -> CallResult {
        let stderr = self.forget(id);
        while let Ok(delivery) = rx.try_recv() {
            if let Delivery::Done(got, more) = delivery {
                return self.finish(got, [stderr, more].concat());
            }
        }
        self.touch();
        CallResult::TimedOut { stderr }
    }

    fn finish(&self, got: Result<Answer, Death>, stderr: Vec<u8>) -> CallResult {
        self.touch();
        match got {
            Ok(answer) => {
                self.answered.store(true, Ordering::Relaxed);
                CallResult::Answered { answer, stderr }
            }
            Err(death) => CallResult::Failed { death, stderr },
        }
    }

    /// Removes a request from the pending table, returning its stderr.
    fn forget(&self, id: u64) -> Vec<u8> {
        lock(&self.shared.state)
            .pending
            .remove(&id)
            .map(|p| p.stderr)
            .unwrap_or_default()
    }

    fn wait_death(&self, within: Duration) -> Option<Death> {
        let deadline = Instant::now() + within;
        let mut state = lock(&self.shared.state);
        loop {
            if let Some(d) = &state.dead {
                return Some(d.clone());
            }
            let wait = deadline.saturating_duration_since(Instant::now());
            if wait.is_zero() {
                return None;
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, wait)
                .map(|(g, _)| g)
                .unwrap_or_else(|poisoned| poisoned.into_inner().0);
        }
    }

    /// Records `death` (unless it already died) and kills the group; the owner thread
    /// then fails what is in flight and reaps.
    fn fail(&self, death: Death) {
        let mut state = lock(&self.shared.state);
        if state.dead.is_none() {
            state.dead = Some(death);
        }
        kill_unreaped(&self.shared, &state);
    }

    /// Stops it: closes stdin, waits up to `grace` for it to exit by itself, then kills
    /// the group; returns once it is reaped.
    pub fn stop(&self, grace: Duration) {
        self.begin_stop();
        self.finish_stop(Instant::now() + grace);
    }

    /// The first half of [`Process::stop`]: marks it stopped and closes its stdin, the
    /// hook's signal to finish.
    pub fn begin_stop(&self) {
        {
            let mut state = lock(&self.shared.state);
            if state.dead.is_none() {
                state.dead = Some(Death::Stopped);
            }
        }
        drop(
            self.stdin
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .take(),
        );
    }

    /// The second half of [`Process::stop`]: waits until `deadline` for it to exit,
    /// then kills the group, and returns once it is reaped.
    pub fn finish_stop(&self, deadline: Instant) {
        {
            let mut state = lock(&self.shared.state);
            while !state.reaped {
                let wait = deadline.saturating_duration_since(Instant::now());
                if wait.is_zero() {
                    kill_unreaped(&self.shared, &state);
                    break;
                }
                state = self
                    .shared
                    .changed
                    .wait_timeout(state, wait)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|poisoned| poisoned.into_inner().0);
            }
        }
        let owner = self
            .owner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(owner) = owner {
            let _ = owner.join();
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop(Duration::ZERO);
    }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400)
}

/// SIGKILLs the group while the leader is unreaped (the caller holds the state lock,
/// which the owner also holds while reaping, so the id cannot be recycled meanwhile).
fn kill_unreaped(shared: &Shared, state: &State) {
    let pid = shared.pid.load(Ordering::Relaxed);
    if !state.reaped
        && let Ok(pid) = i32::try_from(pid)
        && pid > 1
    {
        // SAFETY: killpg takes plain integers; the leader is unreaped (checked under
        // the lock the reaper holds), so the id still names its group.
        unsafe { libc::killpg(pid, libc::SIGKILL) };
    }
}

/// The owner thread: start, wait for stdout to hang up, drain it, then fail what is
/// in flight and reap.
fn owner(
    spec: StartSpec,
    shared: &Arc<Shared>,
    started: &mpsc::Sender<Result<StdinWriter, Death>>,
) {
    let request = SpawnRequest {
        command: &spec.command,
        cwd: &spec.cwd,
        env: &spec.env,
        stdin: &[],
        timeout: Duration::MAX,
        limits: spec.limits,
        child_setup: spec.sandbox.as_deref().map(|p| p.as_child_setup()),
    };
    let mut resident = match crate::spawn::start(&request) {
        Ok(r) => r,
        Err(e) => {
            let _ = started.send(Err(Death::Spawn(e.to_string())));
            return;
        }
    };
    shared.pid.store(
        u64::try_from(resident.pid()).unwrap_or(0),
        Ordering::Relaxed,
    );
    let (Some(stdin), Some(stdout), Some(stderr)) = (
        resident.take_stdin(),
        resident.take_stdout(),
        resident.take_stderr(),
    ) else {
        let _ = started.send(Err(Death::Spawn("no pipes".to_string())));
        return;
    };
    let err_shared = Arc::clone(shared);
    let err_reader = std::thread::Builder::new()
        .name("copse-persistent-stderr".to_string())
        .spawn(move || read_stderr(stderr, &err_shared))
        .ok();
    // The callers read stdout (see the module doc); this thread only waits for it to
    // hang up, on a duplicate of the descriptor, then drains what is left.
    let hangup = stdout.try_clone();
    *shared
        .reader
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(LineReader {
        reader: BufReader::with_capacity(64 * 1024, std::fs::File::from(stdout)),
        line: Vec::new(),
        cap: spec.limits.stdout_cap,
        eof: false,
    });
    let _ = started.send(Ok(stdin));
    if let Ok(fd) = &hangup {
        wait_hangup(fd);
    }
    let death = drain_stdout(shared);
    reap(shared, &mut resident, death);
    shared.changed.notify_all();
    if let Some(t) = err_reader {
        let _ = t.join();
    }
    drop(spec.sandbox);
}

/// Stdout is done: gives a normally exiting process a moment to become a zombie (so its
/// own exit status is what the requests report), then kills and reaps it under the
/// lock (see [`kill_unreaped`]) and fails what is in flight with the final reason.
fn reap(shared: &Shared, resident: &mut crate::spawn::Resident, death: Death) {
    // Stdout ended by itself: the process is normally exiting; give it a moment to
    // become a zombie, so its own exit status is what the requests report.
    let mut exited = false;
    if matches!(death, Death::Exited { .. }) {
        let until = Instant::now() + Duration::from_millis(100);
        while Instant::now() < until {
            match resident.has_exited() {
                Ok(true) => {
                    exited = true;
                    break;
                }
                Ok(false) => std::thread::sleep(Duration::from_millis(1)),
                Err(_) => break,
            }
        }
    }
    {
        // Kill and reap under the lock (see kill_unreaped), then fail what is in
        // flight with the final reason.
        let mut state = lock(&shared.state);
        let status = resident.kill_and_wait().ok().filter(|_| exited);
        state.reaped = true;
        let death = match (death, status) {
            (Death::Exited { .. }, Some(status)) => {
                use std::os::unix::process::ExitStatusExt;
                Death::Exited {
                    code: status.code(),
                    signal: status.signal(),
                }
            }
            (death, _) => death,
        };
        if state.dead.is_none() {
            state.dead = Some(death);
        }
        let death = state.dead.clone().unwrap_or(Death::Stopped);
        for (_, p) in state.pending.drain() {
            let _ = p.tx.send(Delivery::Done(Err(death.clone()), p.stderr));
        }
    }
}

/// Blocks until nothing can write to `fd` any more (the process exited, or closed or
/// lost its stdout): `poll` with no events reports only the hang-up, so the replies
/// that arrive meanwhile are left to the callers.
fn wait_hangup(fd: &OwnedFd) {
    use std::os::fd::AsFd;
    let fd = fd.as_fd();
    loop {
        let mut fds = [rustix::event::PollFd::new(
            &fd,
            rustix::event::PollFlags::empty(),
        )];
        match rustix::event::poll(&mut fds, None) {
            Ok(_)
                if fds[0].revents().intersects(
                    rustix::event::PollFlags::HUP
                        | rustix::event::PollFlags::ERR
                        | rustix::event::PollFlags::NVAL,
                ) =>
            {
                return;
            }
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => return,
        }
    }
}

/// Reads what is left on stdout after the hang-up (the replies written just before an
/// exit still reach their requests) and says why the process is done with it.
fn drain_stdout(shared: &Shared) -> Death {
    let mut reader = shared
        .reader
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let Some(r) = reader.as_mut() else {
        return Death::Exited {
            code: None,
            signal: None,
        };
    };
    loop {
        match r.read_one(shared, Duration::ZERO) {
            Ok(Read1::Line) => {}
            Ok(Read1::End | Read1::Nothing) => {
                return Death::Exited {
                    code: None,
                    signal: None,
                };
            }
            Err(death) => return death,
        }
    }
}

/// One complete line from stdout.
fn handle_line(text: &[u8], shared: &Shared) -> Result<(), Death> {
    let parsed = parse_line(text).map_err(|e| Death::Protocol(e.to_string()))?;
    let mut state = lock(&shared.state);
    match parsed {
        Line::Hello(hello) if state.hello.is_none() => {
            state.hello = Some(hello);
            drop(state);
            shared.changed.notify_all();
        }
        Line::Hello(_) => {
            return Err(Death::Protocol("said hello twice".to_string()));
        }
        Line::Reply(_) if state.hello.is_none() => {
            return Err(Death::Protocol("replied before saying hello".to_string()));
        }
        Line::Reply(reply) => {
            // A reply to a request that timed out (or was never sent) finds no one.
            if let Some(p) = state.pending.remove(&reply.id) {
                let _ = p.tx.send(Delivery::Done(Ok(reply.answer), p.stderr));
            }
        }
    }
    Ok(())
}

/// Reads stderr until EOF, attributing each chunk to the requests in flight.
fn read_stderr(stderr: OwnedFd, shared: &Shared) {
    let mut file = std::fs::File::from(stderr);
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let chunk = buf.get(..n).unwrap_or_default();
        let mut state = lock(&shared.state);
        let cap = shared.stderr_cap;
        for p in state.pending.values_mut() {
            let room = cap.saturating_sub(p.stderr.len());
            p.stderr
                .extend_from_slice(chunk.get(..room.min(chunk.len())).unwrap_or_default());
        }
        state.tail.extend_from_slice(chunk);
        let over = state.tail.len().saturating_sub(TAIL);
        state.tail.drain(..over);
    }
}
