//! Execute: one selected hook, end to end, through one door.
//!
//! ```text
//! launch (the dialect: packet, directory, variables) → environment → sandbox
//!   → transport (process | http | persistent) → interpret → settle
//! ```
//!
//! [`execute`] is the only way a hook runs: the blocking and detached paths of a session,
//! the dry runs of `copse-hooks test` and the page's tester all call it. A transport
//! carries the packet to the hook and brings back a neutral [`transport::Exchange`]
//! (exit, stdout, stderr, timing, how it ended); it knows no dialect. The answer is then
//! interpreted once, by the hook's dialect adapter, and the failure policy applied once,
//! whatever the transport.

mod contain;
mod environment;
mod execute;
mod settle;
#[cfg(test)]
pub(crate) mod testing;
mod transport;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

use crate::dialect::{Context, HookSpec, Scope};
use crate::event::EventPayload;
use crate::outcome::FailurePolicy;
use crate::sandbox::Sandbox;
use crate::spawn::Limits;

pub(crate) use environment::environment;
pub(crate) use execute::{execute, execute_hook, execute_verbatim};
pub(crate) use settle::panicked_run;

/// Everything one run needs besides the hook.
pub(crate) struct RunInput<'a> {
    pub event: &'a EventPayload,
    pub ctx: Context<'a>,
    /// The scrubbed parent environment.
    pub base_env: &'a [(OsString, OsString)],
    /// The session's environment overlays (from sessionStart hooks); each hook gets
    /// only its own scope and root's.
    pub session_env: Option<&'a crate::overlay::Overlays>,
    /// The depth the child gets.
    pub child_depth: u32,
    /// The token proving that depth is ours (`COPSE_HOOK_TOKEN`), when one was made.
    pub depth_token: Option<&'a str>,
    /// Output caps and grace periods.
    pub limits: Limits,
    /// The sandbox hooks run in, when the host sandboxes them.
    pub sandbox: Option<&'a SandboxConfig>,
    /// The per-dialect `failurePolicy` setting (dialect name → policy).
    pub failure_policy: &'a BTreeMap<String, FailurePolicy>,
    /// Claude's `allowedHttpHookUrls` / `httpHookAllowedEnvVars` (merged over the
    /// trusted settings files); `None` when no http hook is about to run.
    pub http_policy: Option<&'a crate::http::HttpPolicy>,
    /// The engine's persistent hook processes (`None`: persistent hooks run per call).
    pub persistent: Option<&'a crate::persistent::pool::Pool>,
}

impl<'a> RunInput<'a> {
    /// The same input for another event (the next step of a sequential chain).
    pub(crate) fn with_event<'b>(&self, event: &'b EventPayload) -> RunInput<'b>
    where
        'a: 'b,
    {
        RunInput {
            event,
            ctx: self.ctx,
            base_env: self.base_env,
            session_env: self.session_env,
            child_depth: self.child_depth,
            depth_token: self.depth_token,
            limits: self.limits,
            sandbox: self.sandbox,
            failure_policy: self.failure_policy,
            http_policy: self.http_policy,
            persistent: self.persistent,
        }
    }
}

/// How the host sandboxes hooks.
#[derive(Clone)]
pub(crate) struct SandboxConfig {
    /// The platform's sandbox.
    pub sandbox: std::sync::Arc<dyn Sandbox>,
    /// Fail a run (failure kind `sandbox`) when the kernel does not enforce it.
    pub require: bool,
    /// Paths every sandboxed hook may write besides the workspace roots.
    pub extra_writable: Vec<PathBuf>,
    /// Unix sockets project hooks may use (setting `sandboxAllowedSockets`).
    pub allowed_sockets: Vec<PathBuf>,
    /// Paths no hook may write, besides [`crate::sandbox::protected_paths`]: e.g. the
    /// scripts pinned by trust.
    pub extra_protected: Vec<PathBuf>,
    /// The user's home (for a user hook's own config directory).
    pub home: PathBuf,
    /// `$COPSE_DIR` (the Copse user config's directory).
    pub copse_dir: PathBuf,
}

impl SandboxConfig {
    /// What a hook's policy is made from: it may write the workspace roots, its own
    /// state directory when it is a user hook (`state_dir`, the dialect's), and the
    /// configured extra paths (the private TMPDIR is added by the sandbox itself).
    pub(crate) fn hook_policy<'a>(
        &'a self,
        state_dir: &std::path::Path,
        hook: &HookSpec,
        ctx: &Context<'a>,
    ) -> crate::sandbox::HookPolicy<'a> {
        let mut writable: Vec<PathBuf> = ctx.workspace_roots.to_vec();
        if let Some(root) = &hook.root {
            writable.push(root.clone());
        }
        if hook.scope == Scope::User {
            let own = state_dir.to_path_buf();
            // A state directory of ours (beneath $COPSE_DIR) is created on first use;
            // a vendor's directory holds the hook's own config, so it exists.
            if own.starts_with(&self.copse_dir) && !own.is_dir() {
                let _ = std::fs::create_dir_all(&own);
            }
            writable.push(own);
        }
        writable.extend(self.extra_writable.iter().cloned());
        crate::sandbox::HookPolicy {
            writable,
            network: hook.network,
            allowed_sockets: &self.allowed_sockets,
            extra_protected: &self.extra_protected,
            home: &self.home,
            copse_dir: &self.copse_dir,
            roots: ctx.workspace_roots,
        }
    }
}
