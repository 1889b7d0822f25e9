//! The execute door: one selected hook through its transport, interpreted once,
//! settled once.

use super::transport::{self, End, Exchange};
use super::{RunInput, contain, environment, settle};
use crate::dialect::{Adapter, HookSpec, Interpretation, ProcessResult};
use crate::outcome::HookRun;

/// Runs `hook` for `input.event` with `stdin` as its packet and returns its record,
/// with the failure policy applied.
pub(crate) fn execute(
    adapter: &dyn Adapter,
    hook: &HookSpec,
    input: &RunInput<'_>,
    stdin: Vec<u8>,
) -> HookRun {
    let policy = crate::dialect::effective_policy(hook, input.failure_policy);
    let exchange = carry(adapter, hook, input, &stdin);
    let interpretation = interpret(adapter, hook, input, &exchange);
    let mut record = settle::blank_run(hook, input.event, policy, stdin);
    record.started_at = exchange.started_at;
    record.duration = exchange.duration;
    record.exit_code = exchange.exit_code;
    record.leaked = exchange.leaked;
    record.sandbox = exchange.sandbox;
    record.warnings = exchange.warnings;
    record.stdout = exchange.stdout;
    record.stderr = exchange.stderr;
    settle::settle(&mut record, hook, policy, input.event, interpretation);
    record.outcome.tool_env_script = exchange.env_script;
    record
}

/// Carries the packet to the hook by its transport.
fn carry(adapter: &dyn Adapter, hook: &HookSpec, input: &RunInput<'_>, stdin: &[u8]) -> Exchange {
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
        let env = || environment(adapter, hook, input, false);
        let policy = |config: &super::SandboxConfig| config.policy(adapter, hook, &input.ctx);
        return transport::persistent::exchange(
            pool,
            transport::persistent::Call {
                key,
                event: &hook.event,
                command: &hook.command,
                cwd: adapter.cwd(hook, &input.ctx),
                stdin,
                timeout: hook.timeout,
                idle: persistent.idle_timeout,
                limits: input.limits,
                sandbox: sandbox.map(|c| (c, &policy as &transport::persistent::BuildPolicy<'_>)),
                env: &env,
            },
        );
    }
    let sandbox = sandbox.map(|config| (config, config.policy(adapter, hook, &input.ctx)));
    let env = environment(adapter, hook, input, true);
    if let Some(http) = &hook.options.http {
        // Header interpolation reads the same scrubbed environment a command hook gets.
        return transport::http::exchange(
            http,
            stdin,
            &env,
            input.http_policy,
            hook.timeout,
            input.limits.stdout_cap,
        );
    }
    let cwd = adapter.cwd(hook, &input.ctx);
    transport::process::exchange(transport::process::Call {
        command: &hook.command,
        cwd: &cwd,
        env,
        stdin,
        timeout: hook.timeout,
        limits: input.limits,
        contained: contain::prepare(sandbox.as_ref().map(|(c, p)| (*c, p))),
        env_file: adapter.env_file_var(hook),
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
