//! Schedule: how the selected hooks of a blocking event run. In parallel (at most
//! [`concurrency_cap`] at once), except that when a dialect asks for a sequential
//! chain ([`crate::dialect::Adapter::sequential`], Gemini's `sequential`), that
//! dialect's hooks run one after another on the current thread, each seeing the input
//! as the previous one changed it ([`crate::dialect::Adapter::chain_input`]), while the
//! others run beside them. Every run goes through the one execute door.
//!
//! A hook the calling agent would have run itself ([`Verbatim::for_hook`]) gets the
//! agent's bytes; in a sequential chain only until a hook changed the input — the
//! next one then gets the packet rebuilt with the change, as Gemini CLI hands each
//! hook of a sequential chain the input as the previous one modified it.

use std::sync::Mutex;

use super::{Verbatim, lock};
use crate::dialect::Dialect;
use crate::discovery;
use crate::outcome::HookRun;
use crate::run::{self, RunInput};
use crate::selected::Selected;

/// Runs the selected hooks of a blocking event, returning their records in
/// configured order.
pub(super) fn run_blocking(
    selected: &[Selected],
    input: &RunInput<'_>,
    verbatim: Option<&Verbatim>,
) -> Vec<HookRun> {
    if selected.len() == 1 {
        return selected
            .iter()
            .map(|s| execute(s, input, verbatim))
            .collect();
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
        return run_capped(&all, input, verbatim);
    }
    let parallel: Vec<(usize, &Selected)> = selected
        .iter()
        .enumerate()
        .filter(|(i, _)| !chained[*i])
        .collect();
    let mut out: Vec<Option<HookRun>> = vec![None; selected.len()];
    std::thread::scope(|scope| {
        let others: Vec<&Selected> = parallel.iter().map(|(_, s)| *s).collect();
        let handle = scope.spawn(move || run_capped(&others, input, verbatim));
        // The chain, in configured order, on this thread. The agent's bytes stand
        // for the input only until a hook changed it.
        let mut current = input.event.clone();
        let mut changed = false;
        for (i, s) in selected.iter().enumerate().filter(|(i, _)| chained[*i]) {
            let own = verbatim.filter(|_| !changed);
            let run = execute(s, &input.with_event(&current), own);
            current = discovery::adapter(s.hook().dialect).chain_input(current, &run.outcome);
            changed = changed || current != *input.event;
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

/// One selected hook through the execute door: with the agent's own bytes when it is
/// a hook the agent would have run itself, else with its dialect's packet.
pub(super) fn execute(s: &Selected, input: &RunInput<'_>, verbatim: Option<&Verbatim>) -> HookRun {
    match verbatim.and_then(|v| v.for_hook(s.hook())) {
        Some(bytes) => run::execute_verbatim(s.hook(), input, bytes.to_vec()),
        None => run::execute_hook(s.hook(), input),
    }
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
fn run_capped(
    selected: &[&Selected],
    input: &RunInput<'_>,
    verbatim: Option<&Verbatim>,
) -> Vec<HookRun> {
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
                        execute(s, input, verbatim)
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
                .unwrap_or_else(|| execute(s, input, verbatim))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::run_blocking;
    use crate::dialect::{Dialect, ParsedConfig};
    use crate::outcome::HookRun;
    use crate::run::testing::{Fixture, answer, shell_gate};
    use crate::selected::Selected;

    /// Every hook of `config`, selected in file order.
    fn all(config: &Arc<ParsedConfig>) -> Vec<Selected> {
        (0..config.hooks.len())
            .map(|index| Selected {
                config: Arc::clone(config),
                index,
            })
            .collect()
    }

    /// Shell lines that wait (at most about 10 s) for `path` to exist, then exit 1 if
    /// it still does not.
    fn wait_for(path: &str) -> String {
        format!(
            "i=0; while [ ! -e {path} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; [ -e {path} ] || exit 1"
        )
    }

    fn messages(runs: &[HookRun]) -> Vec<Option<&str>> {
        runs.iter()
            .map(|r| r.outcome.agent_message.as_deref())
            .collect()
    }

    fn clean(runs: &[HookRun]) {
        for run in runs {
            assert!(
                run.failure.is_none(),
                "{}: {:?} ({})",
                run.command,
                run.failure,
                String::from_utf8_lossy(&run.stderr)
            );
        }
    }

    #[test]
    fn results_are_in_configured_order_when_a_later_hook_finishes_first() {
        let fx = Fixture::new();
        let (finished, third_done) = (fx.at("finished"), fx.at("third-done"));
        let says = |m: &str| answer(&json!({ "agentMessage": m }));
        let config = fx.copse(json!({"toolGate": [
            // The first hook finishes only once the third has.
            {"command": format!("{}; sleep 0.1; echo first >> {finished}; {}", wait_for(&third_done), says("first"))},
            {"command": says("second")},
            {"command": format!("echo third >> {finished}; touch {third_done}; {}", says("third"))},
        ]}));
        let event = shell_gate("ls");
        let runs = run_blocking(&all(&config), &fx.input(&event), None);
        clean(&runs);
        assert_eq!(
            std::fs::read_to_string(&finished).unwrap(),
            "third\nfirst\n",
            "the third hook finished before the first"
        );
        assert_eq!(
            messages(&runs),
            [Some("first"), Some("second"), Some("third")]
        );
        let commands: Vec<&str> = runs.iter().map(|r| r.command.as_str()).collect();
        let configured: Vec<&str> = config.hooks.iter().map(|h| h.command.as_str()).collect();
        assert_eq!(commands, configured);
        let verdict = crate::gate::merge(runs);
        assert_eq!(
            verdict.agent_message.as_deref(),
            Some("first\n\nsecond\n\nthird")
        );
    }

    #[test]
    fn parallel_hooks_run_at_the_same_time() {
        let fx = Fixture::new();
        let (a, b) = (fx.at("a-started"), fx.at("b-started"));
        // Each hook waits for the other to have started: run one after the other, the
        // first would give up waiting and fail.
        let config = fx.copse(json!({"toolGate": [
            {"command": format!("touch {a}; {}", wait_for(&b))},
            {"command": format!("touch {b}; {}", wait_for(&a))},
        ]}));
        let event = shell_gate("ls");
        let runs = run_blocking(&all(&config), &fx.input(&event), None);
        assert_eq!(runs.len(), 2);
        clean(&runs);
    }

    #[test]
    fn more_hooks_than_the_cap_all_run_in_order() {
        let fx = Fixture::new();
        let n = super::concurrency_cap() + 3;
        let entries: Vec<Value> = (0..n)
            .map(|i| json!({"command": answer(&json!({"agentMessage": i.to_string()}))}))
            .collect();
        let config = fx.copse(json!({ "toolGate": entries }));
        let event = shell_gate("ls");
        let runs = run_blocking(&all(&config), &fx.input(&event), None);
        clean(&runs);
        let said: Vec<String> = runs
            .iter()
            .map(|r| r.outcome.agent_message.clone().unwrap_or_default())
            .collect();
        let want: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        assert_eq!(said, want);
    }

    /// A Gemini settings file with one BeforeTool definition of two named hooks: the
    /// first rewrites the shell command to `echo safe`, the second records its stdin in
    /// `second.json`.
    fn gemini(fx: &Fixture, sequential: bool) -> Arc<ParsedConfig> {
        let rewrite = answer(&json!({"hookSpecificOutput": {
            "hookEventName": "BeforeTool",
            "tool_input": {"command": "echo safe"},
        }}));
        let record = format!("cat > {}", fx.at("second.json"));
        let text = json!({"hooks": {"BeforeTool": [{"sequential": sequential, "hooks": [
            {"name": "rewrite", "type": "command", "command": rewrite},
            {"name": "record", "type": "command", "command": record},
        ]}]}});
        fx.parse(Dialect::Gemini, "settings.json", &text.to_string())
    }

    fn seen(fx: &Fixture, file: &str) -> Value {
        serde_json::from_str(&std::fs::read_to_string(fx.path(file)).unwrap()).unwrap()
    }

    #[test]
    fn a_sequential_chain_passes_each_change_on_while_others_run_beside_it() {
        let fx = Fixture::new();
        let chain = gemini(&fx, true);
        let copse =
            fx.copse(json!({"toolGate": [{"command": format!("cat > {}", fx.at("copse.json"))}]}));
        // Configured order: the chain's first hook, a Copse hook, the chain's second.
        let mut selected = all(&chain);
        selected.insert(1, all(&copse).remove(0));
        let event = shell_gate("rm -rf /");
        let runs = run_blocking(&selected, &fx.input(&event), None);
        clean(&runs);
        let dialects: Vec<Dialect> = runs.iter().map(|r| r.dialect).collect();
        assert_eq!(dialects, [Dialect::Gemini, Dialect::Copse, Dialect::Gemini]);
        assert_eq!(
            seen(&fx, "second.json")["tool_input"]["command"],
            "echo safe",
            "the second hook of the chain sees the first's change"
        );
        assert_eq!(
            seen(&fx, "copse.json")["input"]["command"],
            "rm -rf /",
            "a hook outside the chain sees the original input"
        );
        assert_eq!(
            runs[0].outcome.updated_input.clone().map(Value::Object),
            Some(json!({"command": "echo safe"}))
        );
        assert_eq!(
            String::from_utf8_lossy(&runs[2].stdin),
            std::fs::read_to_string(fx.path("second.json")).unwrap()
        );
    }

    /// What a Gemini agent wrote for the call: spaced and ordered as no encoder of
    /// ours would write it.
    const GEMINI_BYTES: &[u8] = br#"{"session_id": "s-1", "transcript_path": "/t.jsonl", "cwd": "/w", "hook_event_name": "BeforeTool", "timestamp": "2026-12-02T16:30:23.468Z", "tool_name": "run_shell_command", "tool_input": {"command": "rm -rf /"}}"#;

    fn gemini_verbatim() -> crate::session::Verbatim {
        crate::session::Verbatim::new(Dialect::Gemini, "BeforeTool", GEMINI_BYTES)
    }

    #[test]
    fn the_agents_bytes_reach_its_own_hooks_until_a_chain_changes_the_input() {
        let fx = Fixture::new();
        let chain = gemini(&fx, true);
        let copse =
            fx.copse(json!({"toolGate": [{"command": format!("cat > {}", fx.at("copse.json"))}]}));
        let mut selected = all(&chain);
        selected.insert(1, all(&copse).remove(0));
        let event = shell_gate("rm -rf /");
        let verbatim = gemini_verbatim();
        let runs = run_blocking(&selected, &fx.input(&event), Some(&verbatim));
        clean(&runs);
        assert_eq!(
            runs[0].stdin, GEMINI_BYTES,
            "the chain's first hook gets the agent's bytes"
        );
        assert_eq!(
            seen(&fx, "second.json")["tool_input"]["command"],
            "echo safe",
            "after a change the next hook gets the rebuilt packet with it"
        );
        assert_ne!(runs[2].stdin, GEMINI_BYTES);
        assert_eq!(
            seen(&fx, "copse.json")["input"]["command"],
            "rm -rf /",
            "a Copse hook keeps its own packet"
        );
        assert_ne!(runs[1].stdin, GEMINI_BYTES);
    }

    #[test]
    fn parallel_hooks_of_the_agents_dialect_and_event_all_get_its_bytes() {
        let fx = Fixture::new();
        let parallel = gemini(&fx, false);
        let event = shell_gate("rm -rf /");
        let verbatim = gemini_verbatim();
        let runs = run_blocking(&all(&parallel), &fx.input(&event), Some(&verbatim));
        clean(&runs);
        assert_eq!(std::fs::read(fx.path("second.json")).unwrap(), GEMINI_BYTES);
        assert!(runs.iter().all(|r| r.stdin == GEMINI_BYTES));
        // Another agent's bytes (another dialect, or another wire event) are not
        // its: the packet is rebuilt.
        for other in [
            crate::session::Verbatim::new(Dialect::Claude, "BeforeTool", GEMINI_BYTES),
            crate::session::Verbatim::new(Dialect::Gemini, "AfterTool", GEMINI_BYTES),
        ] {
            let runs = run_blocking(&all(&parallel), &fx.input(&event), Some(&other));
            assert!(runs.iter().all(|r| r.stdin != GEMINI_BYTES));
            assert_eq!(
                seen(&fx, "second.json")["tool_input"]["command"],
                "rm -rf /"
            );
        }
    }

    #[test]
    fn without_sequential_each_hook_sees_the_original_input() {
        let fx = Fixture::new();
        let parallel = gemini(&fx, false);
        let event = shell_gate("rm -rf /");
        let runs = run_blocking(&all(&parallel), &fx.input(&event), None);
        clean(&runs);
        assert_eq!(runs.len(), 2);
        assert_eq!(
            seen(&fx, "second.json")["tool_input"]["command"],
            "rm -rf /"
        );
    }
}
