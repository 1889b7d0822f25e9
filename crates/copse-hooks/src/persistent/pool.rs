//! The engine's persistent hook processes: one per (hook entry, sandbox policy),
//! shared by every session; started on demand, restarted after a crash with backoff,
//! marked broken after repeated crashes, stopped when idle, when their script changes
//! and when the pool is dropped.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::process::{Death, Process};
use crate::outcome::SandboxState;

/// Consecutive crashes (without an answer in between) after which a hook is broken.
pub const MAX_CRASHES: u32 = 3;

/// The first restart delay after a crash; it doubles with each further crash.
pub const BACKOFF: Duration = Duration::from_millis(100);

/// The longest restart delay.
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// Which process serves a hook: its entry and the sandbox policy it runs under.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    /// The config file that declared it.
    pub source: PathBuf,
    /// Its event (the Copse config key).
    pub event: String,
    /// Its 1-based position within the event's array.
    pub entry: usize,
    /// Its command.
    pub command: String,
    /// What the sandbox policy is made from (`off` when unsandboxed).
    pub policy: String,
}

/// Why no process can serve a request now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// Broken after repeated crashes (the message says why).
    Broken(String),
    /// Restarting after a crash, not before this instant.
    Backoff(Instant),
    /// It could not be started.
    Start(Death),
}

/// What `list`, `doctor` and the daemon show about one persistent hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PersistentStatus {
    /// The config file.
    pub source: PathBuf,
    /// The event.
    pub event: String,
    /// The entry number.
    pub entry: usize,
    /// The command.
    pub command: String,
    /// `running`, `stopped`, `restarting` or `broken`.
    pub state: &'static str,
    /// The process id while running.
    pub pid: Option<u64>,
    /// Consecutive crashes.
    pub crashes: u32,
    /// Times the process was started.
    pub starts: u32,
    /// Why it is broken, or how it last ended.
    pub reason: Option<String>,
}

struct Slot {
    process: Option<Arc<Process>>,
    sandbox: SandboxState,
    fingerprint: u64,
    crashes: u32,
    starts: u32,
    retry_at: Option<Instant>,
    broken: Option<String>,
    last_death: Option<String>,
    idle_timeout: Option<Duration>,
}

struct Inner {
    slots: Mutex<HashMap<Key, Slot>>,
    /// Processes being stopped in the background (a changed script).
    stopping: Mutex<Vec<JoinHandle<()>>>,
    shutdown: Mutex<bool>,
    wake: Condvar,
    grace: Duration,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The persistent hook processes of one engine.
pub struct Pool {
    inner: Arc<Inner>,
    janitor: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").finish_non_exhaustive()
    }
}

impl Pool {
    /// An empty pool; `grace` is how long a stopping hook gets after its stdin closed.
    pub fn new(grace: Duration) -> Pool {
        Pool {
            inner: Arc::new(Inner {
                slots: Mutex::new(HashMap::new()),
                stopping: Mutex::new(Vec::new()),
                shutdown: Mutex::new(false),
                wake: Condvar::new(),
                grace,
            }),
            janitor: Mutex::new(None),
        }
    }

    /// The process serving `key`, started by `start` when there is none (or the one
    /// there died, or its script changed: `fingerprint` differs).
    pub fn get(
        &self,
        key: &Key,
        fingerprint: u64,
        idle_timeout: Option<Duration>,
        start: impl FnOnce() -> Result<(Process, SandboxState), Death>,
    ) -> Result<(Arc<Process>, SandboxState), Unavailable> {
        let mut slots = lock(&self.inner.slots);
        let slot = slots.entry(key.clone()).or_insert_with(|| Slot {
            process: None,
            sandbox: SandboxState::Off,
            fingerprint,
            crashes: 0,
            starts: 0,
            retry_at: None,
            broken: None,
            last_death: None,
            idle_timeout,
        });
        slot.idle_timeout = idle_timeout;
        if slot.fingerprint != fingerprint {
            // The script changed: the old process must not serve another request, and
            // a broken mark is for the old content.
            if let Some(old) = slot.process.take() {
                self.stop_in_background(old);
            }
            slot.fingerprint = fingerprint;
            slot.crashes = 0;
            slot.retry_at = None;
            slot.broken = None;
            slot.last_death = Some("its script changed".to_string());
        }
        reconcile(slot);
        if let Some(p) = &slot.process {
            // Under the slots lock, so the idle stop cannot take it between here and
            // the request being in flight.
            p.touch();
            return Ok((Arc::clone(p), slot.sandbox));
        }
        if let Some(why) = &slot.broken {
            return Err(Unavailable::Broken(why.clone()));
        }
        if let Some(at) = slot.retry_at.filter(|at| *at > Instant::now()) {
            return Err(Unavailable::Backoff(at));
        }
        match start() {
            Ok((process, sandbox)) => {
                process.touch();
                let process = Arc::new(process);
                slot.process = Some(Arc::clone(&process));
                slot.sandbox = sandbox;
                slot.starts += 1;
                slot.retry_at = None;
                drop(slots);
                self.ensure_janitor();
                Ok((process, sandbox))
            }
            Err(death) => {
                crashed(slot, &death, false);
                Err(Unavailable::Start(death))
            }
        }
    }

    /// Stops the process of every slot whose hook entry is `source`/`event`/`entry`
    /// (a pinned script that changed: the hook is no longer selected).
    pub fn stop_entry(&self, source: &std::path::Path, event: &str, entry: usize) {
        let mut slots = lock(&self.inner.slots);
        for (key, slot) in slots.iter_mut() {
            if key.source == source
                && key.event == event
                && key.entry == entry
                && let Some(p) = slot.process.take()
            {
                slot.last_death = Some("its pinned script changed".to_string());
                self.stop_in_background(p);
            }
        }
    }

    /// Whether no persistent hook was ever started here (the common case: no cost).
    pub fn is_empty(&self) -> bool {
        lock(&self.inner.slots).is_empty()
    }

    /// Stops the process of every slot `keep` rejects (its entry is no longer
    /// selected: removed from its config, or its config no longer trusted), recording
    /// `why` as how it ended so `doctor` and `list` say so.
    pub fn stop_unless(&self, keep: impl Fn(&Key) -> bool, why: &str) {
        let mut slots = lock(&self.inner.slots);
        for (key, slot) in slots.iter_mut() {
            if !keep(key)
                && let Some(p) = slot.process.take()
            {
                slot.last_death = Some(why.to_string());
                self.stop_in_background(p);
            }
        }
    }

    /// The state of every persistent hook this pool has started.
    pub fn status(&self) -> Vec<PersistentStatus> {
        let mut slots = lock(&self.inner.slots);
        let mut out: Vec<PersistentStatus> = slots
            .iter_mut()
            .map(|(key, slot)| {
                reconcile(slot);
                let state = if slot.broken.is_some() {
                    "broken"
                } else if slot.process.is_some() {
                    "running"
                } else if slot.retry_at.is_some() {
                    "restarting"
                } else {
                    "stopped"
                };
                PersistentStatus {
                    source: key.source.clone(),
                    event: key.event.clone(),
                    entry: key.entry,
                    command: key.command.clone(),
                    state,
                    pid: slot.process.as_ref().map(|p| p.pid()),
                    crashes: slot.crashes,
                    starts: slot.starts,
                    reason: slot.broken.clone().or_else(|| slot.last_death.clone()),
                }
            })
            .collect();
        out.sort_by(|a, b| {
            (&a.source, &a.event, a.entry, &a.command)
                .cmp(&(&b.source, &b.event, b.entry, &b.command))
        });
        out
    }

    /// The pids of the running processes (for tests and diagnostics).
    pub fn pids(&self) -> Vec<u64> {
        lock(&self.inner.slots)
            .values()
            .filter_map(|s| s.process.as_ref())
            .filter(|p| p.death().is_none())
            .map(|p| p.pid())
            .collect()
    }

    /// Stops every process: closes each one's stdin, gives them the grace together,
    /// then kills what is left. Returns once all are reaped.
    pub fn shutdown(&self) {
        *lock(&self.inner.shutdown) = true;
        self.inner.wake.notify_all();
        if let Some(j) = lock(&self.janitor).take() {
            let _ = j.join();
        }
        let processes: Vec<Arc<Process>> = lock(&self.inner.slots)
            .values_mut()
            .filter_map(|s| s.process.take())
            .collect();
        for p in &processes {
            p.begin_stop();
        }
        let deadline = Instant::now() + self.inner.grace;
        for p in &processes {
            p.finish_stop(deadline);
        }
        let stopping: Vec<JoinHandle<()>> = lock(&self.inner.stopping).drain(..).collect();
        for j in stopping {
            let _ = j.join();
        }
        // Usable again: a later event starts its hook (and the idle thread) anew.
        *lock(&self.inner.shutdown) = false;
    }

    fn stop_in_background(&self, process: Arc<Process>) {
        let grace = self.inner.grace;
        process.begin_stop();
        let spawned = std::thread::Builder::new()
            .name("copse-persistent-stop".to_string())
            .spawn(move || process.finish_stop(Instant::now() + grace));
        if let Ok(j) = spawned {
            let mut stopping = lock(&self.inner.stopping);
            stopping.retain(|j| !j.is_finished());
            stopping.push(j);
        }
    }

    /// Starts the idle-stop thread once.
    fn ensure_janitor(&self) {
        let mut janitor = lock(&self.janitor);
        if janitor.is_some() {
            return;
        }
        let inner = Arc::clone(&self.inner);
        *janitor = std::thread::Builder::new()
            .name("copse-persistent-idle".to_string())
            .spawn(move || idle_loop(&inner))
            .ok();
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Notes a process that died since it was last looked at.
fn reconcile(slot: &mut Slot) {
    let Some(p) = &slot.process else {
        return;
    };
    let Some(death) = p.death() else {
        return;
    };
    let answered = p.has_answered();
    let tail = p.stderr_tail();
    slot.process = None;
    if death.is_crash() {
        crashed(slot, &death, answered);
        if !tail.trim().is_empty()
            && let Some(last) = &mut slot.last_death
        {
            let tail = tail.trim();
            let tail = tail.rsplit('\n').next().unwrap_or(tail);
            last.push_str(&format!(" — stderr: {tail}"));
        }
    } else {
        slot.last_death = Some(death.message());
    }
}

fn crashed(slot: &mut Slot, death: &Death, answered: bool) {
    slot.crashes = if answered { 1 } else { slot.crashes + 1 };
    slot.last_death = Some(death.message());
    let factor = 1u32 << slot.crashes.saturating_sub(1).min(16);
    slot.retry_at = Some(Instant::now() + (BACKOFF * factor).min(BACKOFF_MAX));
    if slot.crashes >= MAX_CRASHES {
        slot.broken = Some(format!(
            "is broken: it failed {} times in a row (last: {}) — its events resolve by the \
             failure policy until its script changes or the engine restarts",
            slot.crashes,
            death.message()
        ));
    }
}

/// Stops processes idle longer than their hook's idle timeout.
fn idle_loop(inner: &Inner) {
    loop {
        {
            let shutdown = lock(&inner.shutdown);
            if *shutdown {
                return;
            }
            let (shutdown, _) = inner
                .wake
                .wait_timeout(shutdown, idle_tick(inner))
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if *shutdown {
                return;
            }
        }
        let idle: Vec<Arc<Process>> = lock(&inner.slots)
            .values_mut()
            .filter_map(|slot| {
                reconcile(slot);
                let timeout = slot.idle_timeout?;
                let p = slot.process.as_ref()?;
                if p.in_flight() == 0 && p.idle_for() >= timeout {
                    slot.last_death = Some("stopped after being idle".to_string());
                    slot.process.take()
                } else {
                    None
                }
            })
            .collect();
        for p in &idle {
            p.begin_stop();
        }
        let deadline = Instant::now() + inner.grace;
        for p in idle {
            p.finish_stop(deadline);
        }
    }
}

/// How often the idle check runs: a quarter of the shortest idle timeout, between
/// 10 ms and 1 s.
fn idle_tick(inner: &Inner) -> Duration {
    lock(&inner.slots)
        .values()
        .filter_map(|s| s.idle_timeout)
        .min()
        .map_or(Duration::from_secs(1), |t| {
            (t / 4).clamp(Duration::from_millis(10), Duration::from_secs(1))
        })
}
