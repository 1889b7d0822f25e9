//! The detached dispatcher: observation hooks never block the caller.
//!
//! Per session, at most [`MAX_RUNNING`] detached runs execute at once; further runs
//! wait in a FIFO of [`MAX_PENDING`]; beyond that a run is dropped and the caller is
//! told so it can record the drop. A finishing worker pulls the next pending run on
//! the same thread, so threads are only created up to the concurrency cap.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};

/// Detached runs executing at once, per session.
pub const MAX_RUNNING: usize = 8;
/// Detached runs waiting, per session.
pub const MAX_PENDING: usize = 100;

type Task = Box<dyn FnOnce() + Send + 'static>;

/// What happened to a dispatched run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dispatched {
    /// It started on a worker.
    Running,
    /// It waits in the FIFO.
    Pending,
    /// The FIFO was full: it will not run.
    Dropped,
}

#[derive(Default)]
struct State {
    running: usize,
    pending: VecDeque<Task>,
}

/// A bounded detached executor.
pub struct Dispatcher {
    state: Mutex<State>,
    idle: Condvar,
    max_running: usize,
    max_pending: usize,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("max_running", &self.max_running)
            .field("max_pending", &self.max_pending)
            .finish_non_exhaustive()
    }
}

impl Default for Dispatcher {
    fn default() -> Self {
        Dispatcher::new(MAX_RUNNING, MAX_PENDING)
    }
}

impl Dispatcher {
    /// A dispatcher with these caps.
    pub fn new(max_running: usize, max_pending: usize) -> Dispatcher {
        Dispatcher {
            state: Mutex::new(State::default()),
            idle: Condvar::new(),
            max_running: max_running.max(1),
            max_pending,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A worker that panicked mid-task leaves the counters consistent (they are
        // only changed under the lock, outside tasks), so recover the guard.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `task` detached, queues it, or drops it when the FIFO is full.
    pub fn dispatch(self: &Arc<Self>, task: impl FnOnce() + Send + 'static) -> Dispatched {
        let mut st = self.lock();
        if st.running < self.max_running {
            st.running += 1;
            drop(st);
            let me = Arc::clone(self);
            let task: Task = Box::new(task);
            let spawned = std::thread::Builder::new()
                .name("copse-hooks-detached".into())
                .spawn(move || me.work(task));
            if spawned.is_err() {
                // No thread could be created: undo the slot; the run is dropped.
                let mut st = self.lock();
                st.running -= 1;
                self.idle.notify_all();
                return Dispatched::Dropped;
            }
            Dispatched::Running
        } else if st.pending.len() < self.max_pending {
            st.pending.push_back(Box::new(task));
            Dispatched::Pending
        } else {
            Dispatched::Dropped
        }
    }

    fn work(&self, first: Task) {
        let mut task = first;
        loop {
            // A panicking task must not take the worker's slot with it.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(task));
            let mut st = self.lock();
            match st.pending.pop_front() {
                Some(next) => task = next,
                None => {
                    st.running -= 1;
                    if st.running == 0 {
                        self.idle.notify_all();
                    }
                    return;
                }
            }
        }
    }

    /// Blocks until no run is executing or waiting.
    pub fn wait_idle(&self) {
        let mut st = self.lock();
        while st.running > 0 || !st.pending.is_empty() {
            st = self.idle.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// (running, pending) right now.
    #[cfg(test)]
    pub fn load(&self) -> (usize, usize) {
        let st = self.lock();
        (st.running, st.pending.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    #[test]
    fn caps_running_queues_then_drops() {
        let d = Arc::new(Dispatcher::new(2, 3));
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = Arc::new(Mutex::new(release_rx));
        let done = Arc::new(AtomicUsize::new(0));
        let mut results = Vec::new();
        for _ in 0..6 {
            let rx = Arc::clone(&release_rx);
            let done = Arc::clone(&done);
            results.push(d.dispatch(move || {
                let _ = rx.lock().unwrap().recv();
                done.fetch_add(1, Ordering::SeqCst);
            }));
        }
        assert_eq!(
            results,
            [
                Dispatched::Running,
                Dispatched::Running,
                Dispatched::Pending,
                Dispatched::Pending,
                Dispatched::Pending,
                Dispatched::Dropped
            ]
        );
        assert_eq!(d.load(), (2, 3));
        for _ in 0..5 {
            release_tx.send(()).unwrap();
        }
        d.wait_idle();
        assert_eq!(done.load(Ordering::SeqCst), 5);
        assert_eq!(d.load(), (0, 0));
    }
}
