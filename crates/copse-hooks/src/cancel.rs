//! Cancellation of blocking events: a host (the JSON-RPC server) cancels an in-flight
//! event and every hook process group it started is killed at once.
//!
//! A [`CancelToken`] is entered on the thread that fires the event
//! ([`CancelToken::enter`]); the session carries it into the threads that run the
//! event's hooks, and spawn registers each child's process group with it for exactly
//! as long as the child is unreaped (so a group id can never be recycled under the
//! kill). [`CancelToken::cancel`] SIGKILLs every registered group, and any group
//! registered afterwards is killed on registration. The killed hooks then fail like
//! any other killed hook (under their failure policy), so a cancelled gate can never
//! come out looser than it would have.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Debug, Default)]
struct State {
    cancelled: bool,
    groups: HashSet<i32>,
}

/// A cancellation handle, shared by the host and the event it cancels. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    state: Arc<Mutex<State>>,
}

thread_local! {
    static CURRENT: RefCell<Option<CancelToken>> = const { RefCell::new(None) };
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    // The state is a flag and a set: consistent after any panic.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl CancelToken {
    /// A fresh, uncancelled token.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Whether [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        lock(&self.state).cancelled
    }

    /// Cancels: kills every registered hook process group now, and every one
    /// registered later.
    pub fn cancel(&self) {
        let mut st = lock(&self.state);
        st.cancelled = true;
        for &pgid in &st.groups {
            kill_group(pgid);
        }
    }

    /// Runs `f` with this token as the current thread's token: the hooks of any
    /// blocking event `f` fires are registered with it.
    pub fn enter<T>(&self, f: impl FnOnce() -> T) -> T {
        let previous = CURRENT.with(|c| c.replace(Some(self.clone())));
        struct Restore(Option<CancelToken>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let previous = self.0.take();
                CURRENT.with(|c| *c.borrow_mut() = previous);
            }
        }
        let _restore = Restore(previous);
        f()
    }

    /// The current thread's token, if any.
    pub fn current() -> Option<CancelToken> {
        CURRENT.with(|c| c.borrow().clone())
    }
}

/// Registers a child's process group with the current thread's token until the
/// returned guard drops (spawn drops it before reaping the child). Kills the group at
/// once when the token is already cancelled.
pub(crate) fn register(pgid: i32) -> Option<Registration> {
    let token = CancelToken::current()?;
    {
        let mut st = lock(&token.state);
        if st.cancelled {
            kill_group(pgid);
        }
        st.groups.insert(pgid);
    }
    Some(Registration { token, pgid })
}

/// A registered process group; unregistered on drop.
pub(crate) struct Registration {
    token: CancelToken,
    pgid: i32,
}

impl Drop for Registration {
    fn drop(&mut self) {
        lock(&self.token.state).groups.remove(&self.pgid);
    }
}

fn kill_group(pgid: i32) {
    if pgid <= 1 {
        return;
    }
    #[cfg(unix)]
    // SAFETY: killpg takes plain integers; pgid > 1 is checked above, and the group's
    // leader is unreaped while registered, so the id still names the hook's group.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}
