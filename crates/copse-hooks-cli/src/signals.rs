//! Termination by INT, TERM or HUP: the hooks of the runs in progress are killed (their
//! whole pid namespaces where runs are contained), their private temp dirs removed, and
//! the process exits with the conventional status 128 + the signal number.
//!
//! The three signals are blocked in every thread (set before any other thread starts,
//! so all inherit the mask; a hook's child resets its mask before exec) and taken by one
//! thread with `sigwait`, so the work runs as ordinary code, not in a signal handler.
//! Before exiting, the audit store of every engine the command built is flushed (for at
//! most [`FLUSH_BOUND`]), so the runs that completed before the signal are recorded.
//! A host killed by SIGKILL cannot do any of this: there, each hook's parent-death
//! signal ends its pid namespace, and the next start reclaims the temp dirs left behind.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use copse_hooks::Engine;

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// How long a terminating host waits for its audit stores to commit.
pub const FLUSH_BOUND: Duration = Duration::from_millis(500);

/// Set once a signal is being handled: the command must not exit on its own meanwhile
/// (its hooks, just killed, let it finish early), the handler exits with 128 + n.
static TERMINATING: AtomicBool = AtomicBool::new(false);

/// Call when the command is done: while a signal is being handled this waits for the
/// handler to exit the process, so the exit status stays 128 + the signal and the
/// audit store is flushed first.
pub fn hold_if_terminating() {
    while TERMINATING.load(Ordering::SeqCst) {
        std::thread::park();
    }
}

/// The engines whose audit stores a terminating host flushes.
static ENGINES: Mutex<Vec<Engine>> = Mutex::new(Vec::new());

/// Has a terminating host flush `engine`'s audit store before exiting.
pub fn watch(engine: &Engine) {
    ENGINES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(engine.clone());
}

/// Directories a terminating host removes (the demo's temporary world): their
/// owners' `Drop` never runs when a signal ends the process.
static REMOVE_ON_EXIT: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

/// Has a terminating host remove `dir` (and everything in it) before exiting.
pub fn remove_on_exit(dir: &std::path::Path) {
    REMOVE_ON_EXIT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(dir.to_path_buf());
}

/// Installs the handling thread. Call first thing in `main`, before any thread exists.
pub fn install() {
    // SAFETY: all-zeroes is a valid sigset_t; sigemptyset/sigaddset initialise it and
    // pthread_sigmask only reads it (the old mask is not wanted).
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in SIGNALS {
            libc::sigaddset(&mut set, signal);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        set
    };
    let spawned = std::thread::Builder::new()
        .name("copse-hooks-signals".to_owned())
        .spawn(move || {
            loop {
                let mut signal: libc::c_int = 0;
                // SAFETY: `set` and `signal` are valid for the call; sigwait only reads
                // the set and writes the signal number.
                if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
                    continue;
                }
                terminate(signal);
            }
        });
    if spawned.is_err() {
        // No thread to take them: let the signals act as before (terminate the process;
        // the hooks' parent-death signal still ends them).
        // SAFETY: as above; unblocking restores the default behaviour.
        unsafe {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

fn terminate(signal: libc::c_int) -> ! {
    TERMINATING.store(true, Ordering::SeqCst);
    copse_hooks::spawn::kill_all();
    flush_stores(FLUSH_BOUND);
    copse_hooks::sandbox::remove_private_tmpdirs();
    for dir in REMOVE_ON_EXIT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
    {
        let _ = std::fs::remove_dir_all(dir);
    }
    let _ = std::io::stdout().flush();
    std::process::exit(128 + signal);
}

/// Commits what the watched engines' audit stores hold, waiting at most `bound` (a
/// wedged store must not keep a terminating host alive).
fn flush_stores(bound: Duration) {
    let engines = ENGINES.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if engines.is_empty() {
        return;
    }
    let (done, finished) = std::sync::mpsc::channel();
    let flusher = std::thread::Builder::new()
        .name("copse-hooks-flush".to_owned())
        .spawn(move || {
            for engine in &engines {
                engine.flush_spine();
            }
            let _ = done.send(());
        });
    if flusher.is_ok() {
        let _ = finished.recv_timeout(bound);
    }
}
