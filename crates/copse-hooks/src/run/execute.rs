//! The execute door: one selected hook through its transport, interpreted once,
//! settled once. The hook's dialect is asked twice: once before the hook starts
//! ([`crate::dialect::launch`]: packet, directory, variables, env file, state
//! directory, failure policy) and once to read the answer.

use super::transport::{self, End, Exchange};
use super::{RunInput, contain, environment, settle};
use crate::dialect::{Adapter, HookSpec, Interpretation, Launch, ProcessResult};
use crate::outcome::HookRun;

/// Runs `hook` for `input.event` and returns its record, with the failure policy
/// applied: `stdin` is the packet when the caller has one (a dry run's edited
/// payload), else its dialect marshals it; `adapter` reads the answer.
pub(crate) fn execute(
    adapter: &dyn Adapter,
    hook: &HookSpec,
    input: &RunInput<'_>,
    stdin: Option<Vec<u8>>,
) -> HookRun {
    run(adapter, hook, input, stdin, false)
}

/// Runs `hook` for `input.event` with the packet its dialect marshals.
pub(crate) fn execute_hook(hook: &HookSpec, input: &RunInput<'_>) -> HookRun {
    run(
        crate::dialect::adapter(hook.dialect),
        hook,
        input,
        None,
        false,
    )
}

/// Runs `hook` as the agent that sent `payload` would have: those exact bytes on
/// stdin, and in its environment the agent's own values of the variables its vendor
/// promises (`input.base_env` is the agent's environment as the shim received it), so
/// a variable the agent set is never replaced by one computed here — nor its
/// `CLAUDE_ENV_FILE` by a file of ours.
pub(crate) fn execute_verbatim(hook: &HookSpec, input: &RunInput<'_>, payload: Vec<u8>) -> HookRun {
    run(
        crate::dialect::adapter(hook.dialect),
        hook,
        input,
        Some(payload),
        true,
    )
}

/// Whether the base environment sets `name` (to something).
fn set_in(base: &[(std::ffi::OsString, std::ffi::OsString)], name: &str) -> bool {
    base.iter().any(|(k, v)| k == name && !v.is_empty())
}

fn run(
    adapter: &dyn Adapter,
    hook: &HookSpec,
    input: &RunInput<'_>,
    stdin: Option<Vec<u8>>,
    agents_own: bool,
) -> HookRun {
    let mut launch = crate::dialect::launch(
        hook,
        input.event,
        &input.ctx,
        input.failure_policy,
        input.sandbox.map_or(
            (std::path::Path::new("/"), std::path::Path::new("/")),
            |s| (s.home.as_path(), s.copse_dir.as_path()),
        ),
        stdin,
    );
    if agents_own {
        // A hook's own variables (Copilot's per-hook `env`) are the hook's: applied
        // over everything, as the vendor does.
        let own = hook.options.copilot.as_ref().map(|p| p.env.as_slice());
        let own = own.unwrap_or_default();
        launch.vendor_env.retain(|(name, _)| {
            !set_in(input.base_env, name) || own.iter().any(|(k, _)| k == name)
        });
        if launch
            .env_file
            .is_some_and(|name| set_in(input.base_env, name))
        {
            launch.env_file = None;
        }
    }
    // An adopted hook gets no overlay its own vendor would not have handed it.
    let overlay = !agents_own || adapter.session_env_reaches_hooks();
    let exchange = carry(hook, input, &launch, overlay);
    let interpretation = interpret(adapter, hook, input, &exchange);
    let mut record = settle::blank_run(hook, input.event, launch.policy, launch.stdin);
    record.started_at = exchange.started_at;
    record.duration = exchange.duration;
    record.exit_code = exchange.exit_code;
    record.leaked = exchange.leaked;
    record.sandbox = exchange.sandbox;
    record.warnings = exchange.warnings;
    record.stdout = exchange.stdout;
    record.stderr = exchange.stderr;
    settle::settle(
        &mut record,
        hook,
        launch.policy,
        input.event,
        interpretation,
    );
    record.outcome.tool_env_script = exchange.env_script;
    record
}

/// Carries the packet to the hook by its transport; `overlay`: whether the session's
/// `sessionStart` overlay reaches it (never a persistent process's).
fn carry(hook: &HookSpec, input: &RunInput<'_>, launch: &Launch, overlay: bool) -> Exchange {
    let sandbox = input.sandbox.filter(|_| hook.sandbox);
    if let (Some(persistent), Some(pool)) = (hook.options.persistent, input.persistent) {
        // The process is keyed by what its policy is made from (the hook's scope,
        // root and network switch under this engine's sandbox), and the policy itself
        // is built only when a process starts: building it reads the agents'
        // directories, which a persistent gate must not pay for.
        let key = crate::persistent::pool::Key {
            source: hook.source.clone(),
            event: hook.event.clone(),
            entry: hook.entry,
            command: hook.command.clone(),
            policy: match sandbox {
                None => "off".to_string(),
                Some(_) => format!(
                    "{}:{}:{}",
                    hook.scope.as_str(),
                    if hook.network { "net" } else { "nonet" },
                    hook.root
                        .as_deref()
                        .unwrap_or(std::path::Path::new(""))
                        .display()
                ),
            },
        };
        let env = || environment(hook, input, false, &launch.vendor_env);
        let policy = |config: &super::SandboxConfig| {
            config
                .hook_policy(&launch.state_dir, hook, &input.ctx)
                .build()
        };
        return transport::persistent::exchange(
            pool,
            transport::persistent::Call {
                key,
                event: &hook.event,
                command: &hook.command,
                cwd: launch.cwd.clone(),
                stdin: &launch.stdin,
                timeout: hook.timeout,
                idle: persistent.idle_timeout,
                limits: input.limits,
                sandbox: sandbox.map(|c| (c, &policy as &transport::persistent::BuildPolicy<'_>)),
                env: &env,
            },
        );
    }
    let env = environment(hook, input, overlay, &launch.vendor_env);
    if let Some(http) = &hook.options.http {
        // Header interpolation reads the same scrubbed environment a command hook gets.
        return transport::http::exchange(
            http,
            &launch.stdin,
            &env,
            input.http_policy,
            hook.timeout,
            input.limits.stdout_cap,
        );
    }
    let policy = sandbox.map(|config| {
        (
            config,
            config.hook_policy(&launch.state_dir, hook, &input.ctx),
        )
    });
    transport::process::exchange(transport::process::Call {
        command: &hook.command,
        cwd: &launch.cwd,
        env,
        stdin: &launch.stdin,
        timeout: hook.timeout,
        limits: input.limits,
        contained: contain::prepare(policy),
        env_file: launch.env_file,
    })
}

/// The dialect's one reading of an exchange.
fn interpret(
    adapter: &dyn Adapter,
    hook: &HookSpec,
    input: &RunInput<'_>,
    exchange: &Exchange,
) -> Interpretation {
    match &exchange.end {
        End::Failed(failure) => {
            Interpretation::failed(failure.kind, failure.message.clone(), false)
        }
        End::NotAsked => Interpretation::ok(crate::outcome::Outcome::default()),
        End::Answered {
            exit_code,
            signal,
            stderr_from,
        } => adapter.interpret(
            hook,
            input.event,
            &ProcessResult {
                exit_code: *exit_code,
                signal: *signal,
                stdout: &exchange.stdout,
                stderr: exchange.stderr.get(*stderr_from..).unwrap_or_default(),
            },
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::{Value, json};

    use super::{execute, interpret};
    use crate::dialect::{
        Adapter, Context, Dialect, HookSpec, Interpretation, ParsedConfig, ProcessResult, Scope,
        adapter,
    };
    use crate::event::{CanonicalEvent, EventPayload};
    use crate::outcome::{
        Decision, Failure, FailureKind, FailurePolicy, HookRun, Outcome, RunOutcome, SandboxState,
    };
    use crate::run::SandboxConfig;
    use crate::run::settle;
    use crate::run::testing::{Fixture, answer, first, shell_gate};
    use crate::run::transport::{End, Exchange};
    use crate::sandbox::{
        Enforcement, PreparedSandbox, Sandbox, SandboxError, SandboxPolicy, SandboxStatus,
    };

    /// A dialect's adapter that counts how often it was asked to interpret a run.
    struct Counting {
        inner: &'static dyn Adapter,
        interpreted: AtomicUsize,
    }

    impl Counting {
        fn new(dialect: Dialect) -> Counting {
            Counting {
                inner: adapter(dialect),
                interpreted: AtomicUsize::new(0),
            }
        }

        fn count(&self) -> usize {
            self.interpreted.load(Ordering::SeqCst)
        }
    }

    impl Adapter for Counting {
        fn dialect(&self) -> Dialect {
            self.inner.dialect()
        }
        fn parse(
            &self,
            text: &str,
            source: &Path,
            scope: Scope,
            root: Option<&Path>,
        ) -> ParsedConfig {
            self.inner.parse(text, source, scope, root)
        }
        fn applies(&self, hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> bool {
            self.inner.applies(hook, event, ctx)
        }
        fn marshal(&self, hook: &HookSpec, event: &EventPayload, ctx: &Context<'_>) -> Value {
            self.inner.marshal(hook, event, ctx)
        }
        fn interpret(
            &self,
            hook: &HookSpec,
            event: &EventPayload,
            run: &ProcessResult<'_>,
        ) -> Interpretation {
            self.interpreted.fetch_add(1, Ordering::SeqCst);
            self.inner.interpret(hook, event, run)
        }
        fn vendor_env(&self, hook: &HookSpec, ctx: &Context<'_>) -> Vec<(String, String)> {
            self.inner.vendor_env(hook, ctx)
        }
        fn cwd(&self, hook: &HookSpec, ctx: &Context<'_>) -> PathBuf {
            self.inner.cwd(hook, ctx)
        }
        fn user_state_dir(&self, home: &Path, copse_dir: &Path) -> PathBuf {
            self.inner.user_state_dir(home, copse_dir)
        }
        fn env_file_var(&self, hook: &HookSpec) -> Option<&'static str> {
            self.inner.env_file_var(hook)
        }
    }

    /// A sandbox the kernel never enforces: preparing it always fails.
    struct NeverEnforced;

    impl Sandbox for NeverEnforced {
        fn status(&self) -> SandboxStatus {
            unimplemented!("execute never asks for the sandbox's status")
        }
        fn enforcement(&self, _policy: &SandboxPolicy) -> Enforcement {
            Enforcement::Unenforced {
                reason: "a unit test's sandbox".to_string(),
            }
        }
        fn prepare(
            &self,
            _policy: &SandboxPolicy,
        ) -> Result<Box<dyn PreparedSandbox>, SandboxError> {
            Err(SandboxError::Unenforced {
                reason: "a unit test's sandbox".to_string(),
            })
        }
    }

    fn never_enforced(fx: &Fixture, require: bool) -> SandboxConfig {
        SandboxConfig {
            sandbox: Arc::new(NeverEnforced),
            require,
            extra_writable: Vec::new(),
            allowed_sockets: Vec::new(),
            extra_protected: Vec::new(),
            home: fx.path("home"),
            copse_dir: fx.path("copse"),
        }
    }

    /// `config`'s first hook run through the execute door by `adapter` for `event`.
    fn run_with(
        fx: &Fixture,
        adapter: &dyn Adapter,
        config: &ParsedConfig,
        event: &EventPayload,
    ) -> HookRun {
        let input = fx.input(event);
        let hook = first(config);
        execute(adapter, hook, &input, None)
    }

    /// The one Copse `toolGate` hook `entry` run for a shell gate, and how often the
    /// adapter interpreted it.
    fn gate(fx: &Fixture, entry: Value) -> (HookRun, usize) {
        let config = fx.copse_gate(entry);
        let counting = Counting::new(Dialect::Copse);
        let run = run_with(fx, &counting, &config, &shell_gate("rm -rf /"));
        (run, counting.count())
    }

    fn failure(run: &HookRun) -> &Failure {
        run.failure
            .as_ref()
            .unwrap_or_else(|| panic!("no failure: {run:?}"))
    }

    #[test]
    fn an_answer_is_interpreted_once_by_its_adapter() {
        let fx = Fixture::new();
        let (seen, runs) = (fx.at("stdin.json"), fx.at("runs"));
        let said =
            json!({"decision": "ask", "agentMessage": "sure?", "updatedInput": {"command": "ls"}});
        let command = format!("cat > {seen}; echo ran >> {runs}; {}", answer(&said));
        let (run, interpreted) = gate(&fx, json!({"command": command}));
        assert_eq!(interpreted, 1);
        assert_eq!(
            std::fs::read_to_string(&runs).unwrap(),
            "ran\n",
            "one process"
        );
        assert!(run.failure.is_none(), "{:?}", run.failure);
        assert_eq!(run.result, RunOutcome::Ask);
        assert_eq!(run.outcome.decision, Some(Decision::Ask));
        assert_eq!(run.outcome.agent_message.as_deref(), Some("sure?"));
        assert_eq!(
            run.outcome
                .updated_input
                .as_ref()
                .map(|m| Value::Object(m.clone())),
            Some(json!({"command": "ls"}))
        );
        assert!(run.parse_ok);
        assert_eq!(run.exit_code, Some(0));
        assert_eq!(run.stdout, format!("{said}\n").into_bytes());
        // The record says what ran and carries the exact packet the hook read.
        assert_eq!(std::fs::read(&seen).unwrap(), run.stdin);
        let packet: Value = serde_json::from_slice(&run.stdin).unwrap();
        assert_eq!(packet["hook_event_name"], "toolGate");
        assert_eq!(packet["input"]["command"], "rm -rf /");
        assert_eq!(
            (run.dialect, run.canonical),
            (Dialect::Copse, CanonicalEvent::ToolGate)
        );
        assert_eq!(run.event, "toolGate");
        assert_eq!(run.command, command);
        assert_eq!(run.source, fx.path("hooks.json"));
        assert_eq!(run.policy, FailurePolicy::Closed);
        assert_eq!(run.sandbox, SandboxState::Off);
    }

    #[test]
    fn exit_2_denies_with_stderr_and_other_exits_fail_by_policy() {
        let fx = Fixture::new();
        let (run, interpreted) = gate(&fx, json!({"command": "echo 'no rm' >&2; exit 2"}));
        assert_eq!(interpreted, 1);
        assert!(run.failure.is_none());
        assert_eq!(run.result, RunOutcome::Deny);
        assert_eq!(run.outcome.decision, Some(Decision::Deny));
        assert_eq!(run.outcome.agent_message.as_deref(), Some("no rm"));
        assert_eq!(run.exit_code, Some(2));

        let (run, interpreted) = gate(&fx, json!({"command": "exit 3"}));
        assert_eq!(interpreted, 1);
        assert_eq!(run.result, RunOutcome::Failed);
        assert_eq!(failure(&run).kind, FailureKind::Exit);
        assert_eq!(failure(&run).message, "exited with code 3");
        assert_eq!(
            run.outcome.decision,
            Some(Decision::Deny),
            "Copse fails closed"
        );
        assert_eq!(
            run.outcome.agent_message.as_deref(),
            Some("hook \"exit 3\" exited with code 3 — blocked because the hook fails closed")
        );

        let (run, _) = gate(&fx, json!({"command": "exit 3", "onFailure": "open"}));
        assert_eq!(run.result, RunOutcome::Failed);
        assert_eq!(failure(&run).kind, FailureKind::Exit);
        assert_eq!(run.policy, FailurePolicy::Open);
        assert!(run.outcome.is_empty(), "{:?}", run.outcome);
    }

    #[test]
    fn a_timeout_fails_closed_on_a_gate_with_a_deny_naming_the_hook() {
        let fx = Fixture::new();
        let (run, interpreted) = gate(&fx, json!({"command": "sleep 30", "timeout": 0.2}));
        assert_eq!(
            interpreted, 0,
            "a failed exchange is not the dialect's to read"
        );
        assert_eq!(run.result, RunOutcome::Failed);
        assert_eq!(failure(&run).kind, FailureKind::Timeout);
        assert_eq!(run.exit_code, None);
        assert_eq!(run.outcome.decision, Some(Decision::Deny));
        assert_eq!(
            run.outcome.agent_message.as_deref(),
            Some("hook \"sleep 30\" timed out after 0.2s — blocked because the hook fails closed")
        );

        // The same hook on an observation event fails without an effect.
        let config = fx.copse(json!({"stop": [{"command": "sleep 30", "timeout": 0.2}]}));
        let stop = EventPayload::Stop {
            status: "completed".to_string(),
        };
        let run = run_with(&fx, adapter(Dialect::Copse), &config, &stop);
        assert_eq!(failure(&run).kind, FailureKind::Timeout);
        assert_eq!(run.policy, FailurePolicy::Closed);
        assert!(run.outcome.is_empty(), "{:?}", run.outcome);
    }

    #[test]
    fn stdout_past_the_cap_is_oversize() {
        let mut fx = Fixture::new();
        fx.limits.stdout_cap = 64;
        let (run, interpreted) = gate(&fx, json!({"command": "head -c 100000 /dev/zero"}));
        assert_eq!(interpreted, 0);
        assert_eq!(failure(&run).kind, FailureKind::Oversize);
        assert_eq!(run.outcome.decision, Some(Decision::Deny));
        assert!(run.stdout.len() <= 64);
    }

    #[test]
    fn a_command_that_does_not_exist_fails_with_the_shells_exit_code() {
        let fx = Fixture::new();
        let (run, interpreted) = gate(&fx, json!({"command": "copse-unit-no-such-command"}));
        assert_eq!(interpreted, 1);
        assert_eq!(failure(&run).kind, FailureKind::Exit);
        assert_eq!(failure(&run).message, "exited with code 127");
        assert!(
            String::from_utf8_lossy(&run.stderr).contains("copse-unit-no-such-command"),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert_eq!(run.outcome.decision, Some(Decision::Deny));
    }

    #[test]
    fn a_sandbox_that_cannot_be_prepared_never_spawns_the_hook() {
        let mut fx = Fixture::new();
        let marker = fx.path("ran");
        let entry = json!({"command": format!("touch {}", marker.display())});

        fx.sandbox = Some(never_enforced(&fx, true));
        let (run, interpreted) = gate(&fx, entry.clone());
        assert!(!marker.exists(), "the hook never started");
        assert_eq!(interpreted, 0);
        assert_eq!(failure(&run).kind, FailureKind::Sandbox);
        assert_eq!(
            failure(&run).message,
            "was not run: the sandbox is required but the OS sandbox is not enforced here: a unit test's sandbox"
        );
        assert_eq!(run.sandbox, SandboxState::Unenforced);
        assert_eq!(run.outcome.decision, Some(Decision::Deny));

        // Not required: the same hook runs, unconfined, and says so.
        fx.sandbox = Some(never_enforced(&fx, false));
        let (run, _) = gate(&fx, entry.clone());
        assert!(run.failure.is_none(), "{:?}", run.failure);
        assert_eq!(run.sandbox, SandboxState::Unenforced);
        assert!(marker.exists());
        std::fs::remove_file(&marker).unwrap();

        // A hook that opted out of the sandbox never prepares one.
        fx.sandbox = Some(never_enforced(&fx, true));
        let mut opted_out = entry;
        opted_out["sandbox"] = json!(false);
        let (run, _) = gate(&fx, opted_out);
        assert!(run.failure.is_none(), "{:?}", run.failure);
        assert_eq!(run.sandbox, SandboxState::Off);
        assert!(marker.exists());
    }

    #[test]
    fn the_env_file_comes_back_on_the_outcome_and_is_removed() {
        let fx = Fixture::new();
        let named = fx.at("named");
        let command = format!(
            "printf '%s' \"$CLAUDE_ENV_FILE\" > {named}; echo 'export FOO=bar' >> \"$CLAUDE_ENV_FILE\""
        );
        let text = json!({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": command}]}]}});
        let config = fx.parse(Dialect::Claude, "settings.json", &text.to_string());
        let event = EventPayload::SessionStart { first_turn: true };
        let run = run_with(&fx, adapter(Dialect::Claude), &config, &event);
        assert!(run.failure.is_none(), "{:?}", run.failure);
        assert_eq!(
            run.outcome.tool_env_script.as_deref(),
            Some("export FOO=bar\n")
        );
        let path = std::fs::read_to_string(&named).unwrap();
        assert!(!path.is_empty(), "CLAUDE_ENV_FILE named a file");
        assert!(!Path::new(&path).exists(), "{path} was removed");

        // Only SessionStart hooks get one.
        let text = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "test -z \"${CLAUDE_ENV_FILE+set}\""},
        ]}]}});
        let config = fx.parse(Dialect::Claude, "settings.json", &text.to_string());
        let run = run_with(&fx, adapter(Dialect::Claude), &config, &shell_gate("ls"));
        assert_eq!(
            run.exit_code,
            Some(0),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(run.outcome.tool_env_script.is_none());
    }

    #[test]
    fn an_http_hook_is_posted_and_its_answer_interpreted_once() {
        use std::io::{Read as _, Write as _};
        let fx = Fixture::new();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let body = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "not over http"}})
        .to_string();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream
                .set_read_timeout(Some(std::time::Duration::from_secs(10)))
                .unwrap();
            // Read until the JSON body's last brace (the packet is one object).
            let mut request = Vec::new();
            let mut chunk = [0u8; 4096];
            while !request.ends_with(b"}") {
                let n = stream.read(&mut chunk).unwrap();
                assert!(n > 0);
                request.extend_from_slice(&chunk[..n]);
            }
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(response.as_bytes()).unwrap();
        });
        let text = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "http", "url": url, "timeout": 10},
        ]}]}});
        let config = fx.parse(Dialect::Claude, "settings.json", &text.to_string());
        let counting = Counting::new(Dialect::Claude);
        let run = run_with(&fx, &counting, &config, &shell_gate("ls"));
        server.join().unwrap();
        assert_eq!(counting.count(), 1);
        assert!(run.failure.is_none(), "{:?}", run.failure);
        assert_eq!(run.exit_code, Some(200));
        assert_eq!(run.outcome.decision, Some(Decision::Deny));
        assert_eq!(run.outcome.agent_message.as_deref(), Some("not over http"));
    }

    #[test]
    fn an_exchange_that_did_not_ask_the_hook_is_no_outcome_and_no_failure() {
        let fx = Fixture::new();
        let config = fx.copse_gate(json!({"command": "true"}));
        let hook = first(&config);
        let event = shell_gate("ls");
        let input = fx.input(&event);
        let counting = Counting::new(Dialect::Copse);

        let (not_asked, _) = Exchange::starting(SandboxState::Off);
        assert!(matches!(not_asked.end, End::NotAsked));
        let interpretation = interpret(&counting, hook, &input, &not_asked);
        assert_eq!(counting.count(), 0);
        assert!(interpretation.failure.is_none());
        assert!(interpretation.parse_ok);
        assert!(interpretation.outcome.is_empty());
        // Settled under a fail-closed policy on a gate, it is still nothing.
        let mut run = settle::blank_run(hook, &event, FailurePolicy::Closed, Vec::new());
        settle::settle(
            &mut run,
            hook,
            FailurePolicy::Closed,
            &event,
            interpretation,
        );
        assert_eq!(run.result, RunOutcome::None);
        assert!(run.failure.is_none());
        assert_eq!(run.outcome, Outcome::default());

        // A failed exchange keeps its failure, unread by the dialect.
        let (mut failed, _) = Exchange::starting(SandboxState::Off);
        failed.end = End::Failed(Failure {
            kind: FailureKind::Broken,
            message: "is broken".to_string(),
        });
        let interpretation = interpret(&counting, hook, &input, &failed);
        assert_eq!(counting.count(), 0);
        assert_eq!(
            interpretation.failure,
            Some(Failure {
                kind: FailureKind::Broken,
                message: "is broken".to_string()
            })
        );
        assert!(!interpretation.parse_ok);
    }
}
