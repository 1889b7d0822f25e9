//! A progress line on stderr while hooks run longer than a second (terminals only).

use std::io::IsTerminal as _;
use std::io::Write as _;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Shows `what… Ns` on stderr after a second; the line is erased when dropped.
pub struct Progress {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// Starts a progress line for `what` when stderr is a terminal.
pub fn start(what: &str) -> Progress {
    if !std::io::stderr().is_terminal() {
        return Progress {
            stop: None,
            thread: None,
        };
    }
    let (tx, rx) = mpsc::channel::<()>();
    let what = crate::output::clean(what);
    let thread = std::thread::spawn(move || {
        let started = Instant::now();
        let mut shown = false;
        let mut wait = Duration::from_secs(1);
        while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(wait) {
            let secs = started.elapsed().as_secs();
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K{what}: waiting for hooks… {secs}s");
            let _ = err.flush();
            shown = true;
            wait = Duration::from_millis(500);
        }
        if shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    });
    Progress {
        stop: Some(tx),
        thread: Some(thread),
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
