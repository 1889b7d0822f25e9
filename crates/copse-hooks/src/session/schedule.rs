//! Schedule: how the selected hooks of a blocking event run. In parallel (at most
//! [`concurrency_cap`] at once), except that when a dialect asks for a sequential
//! chain ([`crate::dialect::Adapter::sequential`], Gemini's `sequential`), that
//! dialect's hooks run one after another on the current thread, each seeing the input
//! as the previous one changed it ([`crate::dialect::Adapter::chain_input`]), while the
//! others run beside them. Every run goes through the one execute door.

use std::sync::Mutex;

use super::lock;
use crate::dialect::Dialect;
use crate::discovery;
use crate::outcome::HookRun;
use crate::run::{self, RunInput};
use crate::selected::Selected;

/// Runs the selected hooks of a blocking event, returning their records in
/// configured order.
pub(super) fn run_blocking(selected: &[Selected], input: &RunInput<'_>) -> Vec<HookRun> {
    if selected.len() == 1 {
        return selected.iter().map(|s| execute(s, input)).collect();
    }
    let sequential: Vec<Dialect> = selected
        .iter()
        .filter(|s| {
            discovery::adapter(s.hook().dialect).sequential(s.hook(), s.config.extra(s.index))
        })
        .map(|s| s.hook().dialect)
        .collect();
    let chained: Vec<bool> = selected
        .iter()
        .map(|s| sequential.contains(&s.hook().dialect))
        .collect();
    if !chained.contains(&true) {
        let all: Vec<&Selected> = selected.iter().collect();
        return run_capped(&all, input);
    }
    let parallel: Vec<(usize, &Selected)> = selected
        .iter()
        .enumerate()
        .filter(|(i, _)| !chained[*i])
        .collect();
    let mut out: Vec<Option<HookRun>> = vec![None; selected.len()];
    std::thread::scope(|scope| {
        let others: Vec<&Selected> = parallel.iter().map(|(_, s)| *s).collect();
        let handle = scope.spawn(move || run_capped(&others, input));
        // The chain, in configured order, on this thread.
        let mut current = input.event.clone();
        for (i, s) in selected.iter().enumerate().filter(|(i, _)| chained[*i]) {
            let run = execute(s, &input.with_event(&current));
            current = discovery::adapter(s.hook().dialect).chain_input(current, &run.outcome);
            out[i] = Some(run);
        }
        if let Ok(runs) = handle.join() {
            for ((i, _), run) in parallel.iter().zip(runs) {
                out[*i] = Some(run);
            }
        }
    });
    out.into_iter()
        .zip(selected)
        .map(|(run, s)| {
            run.unwrap_or_else(|| run::panicked_run(s.hook(), input.event, input.failure_policy))
        })
        .collect()
}

/// One selected hook through the execute door: its packet, then the run.
pub(super) fn execute(s: &Selected, input: &RunInput<'_>) -> HookRun {
    let hook = s.hook();
    let adapter = discovery::adapter(hook.dialect);
    run::execute(adapter, hook, input, run::packet(adapter, hook, input))
}

/// Most blocking hooks of one event running at once; the rest wait their turn. Each
/// run holds a handful of descriptors (pipes, pidfd, sandbox fds) and a thread.
const MAX_CONCURRENT_HOOKS: usize = 32;

/// Descriptors one run may hold at its peak (pipes on both sides during the launch,
/// pidfd, Landlock ruleset, report pipe, audit socket), with margin.
const FDS_PER_RUN: u64 = 12;
/// Descriptors left to the host itself (the audit store, stdio, its own files).
const FDS_RESERVED: u64 = 64;

/// [`MAX_CONCURRENT_HOOKS`], lowered so that the runs fit in the descriptor limit
/// (read once per process: the limit a host starts with is the one it keeps).
fn concurrency_cap() -> usize {
    static CAP: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CAP.get_or_init(|| {
        // `None` is no limit at all.
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(u64::MAX);
        let fit = limit.saturating_sub(FDS_RESERVED) / FDS_PER_RUN;
        usize::try_from(fit)
            .unwrap_or(MAX_CONCURRENT_HOOKS)
            .clamp(1, MAX_CONCURRENT_HOOKS)
    })
}

/// Runs `selected` on at most [`concurrency_cap`] threads, in their order; a run
/// whose thread panicked is recorded as a spawn failure under its hook's policy.
fn run_capped(selected: &[&Selected], input: &RunInput<'_>) -> Vec<HookRun> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<HookRun>>> = selected.iter().map(|_| Mutex::new(None)).collect();
    let workers = selected.len().min(concurrency_cap());
    // The host's cancellation follows the event into each worker thread.
    let cancel = crate::cancel::CancelToken::current();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (next, slots) = (&next, &slots);
            let cancel = cancel.clone();
            let work = move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let (Some(s), Some(slot)) = (selected.get(i), slots.get(i)) else {
                        break;
                    };
                    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        execute(s, input)
                    }))
                    .unwrap_or_else(|_| {
                        run::panicked_run(s.hook(), input.event, input.failure_policy)
                    });
                    *lock(slot) = Some(run);
                }
            };
            let spawned = std::thread::Builder::new().spawn_scoped(scope, move || match cancel {
                Some(token) => token.enter(work),
                None => work(),
            });
            // Out of threads: the workers already started take the rest.
            if spawned.is_err() {
                break;
            }
        }
    });
    // Nothing ran a hook if not even one worker started: run them here, one by one.
    selected
        .iter()
        .zip(slots)
        .map(|(s, slot)| {
            slot.into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .unwrap_or_else(|| execute(s, input))
        })
        .collect()
}
