//! A growable pool of worker threads: a request never waits behind another (a busy
//! pool grows by one thread), and idle workers retire after a while.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    /// Workers waiting for a job, minus jobs queued for them.
    idle: usize,
    queue: VecDeque<Job>,
}

/// The pool. Cheap to clone.
#[derive(Clone, Default)]
pub struct Pool {
    inner: Arc<(Mutex<State>, Condvar)>,
}

const IDLE_RETIRE: Duration = Duration::from_secs(30);

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    // Jobs run outside the lock; the state stays consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Pool {
    /// Runs `job` on an idle worker, or on a new one when none is idle.
    pub fn execute(&self, job: impl FnOnce() + Send + 'static) {
        let job: Job = Box::new(job);
        {
            let mut st = lock(&self.inner.0);
            if st.idle > 0 {
                st.idle -= 1;
                st.queue.push_back(job);
                self.inner.1.notify_one();
                return;
            }
        }
        let pool = self.clone();
        let spawned = std::thread::Builder::new()
            .name("copse-hooks-rpc".to_owned())
            .spawn(move || pool.work(job));
        if let Err(e) = spawned {
            // Out of threads: the job is lost with the thread; say so where the
            // operator looks (the server's stderr or the daemon log).
            eprintln!("copse-hooks serve: cannot start a worker thread: {e}");
        }
    }

    fn work(&self, first: Job) {
        first();
        let (mutex, cv) = &*self.inner;
        let mut st = lock(mutex);
        st.idle += 1;
        loop {
            if let Some(job) = st.queue.pop_front() {
                drop(st);
                job();
                st = lock(mutex);
                st.idle += 1;
                continue;
            }
            let (guard, timeout) = cv
                .wait_timeout(st, IDLE_RETIRE)
                .unwrap_or_else(|p| p.into_inner());
            st = guard;
            if timeout.timed_out() && st.queue.is_empty() {
                st.idle -= 1;
                return;
            }
        }
    }
}
