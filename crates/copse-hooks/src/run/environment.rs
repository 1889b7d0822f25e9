//! The environment a hook starts with.

use std::ffi::OsString;

use super::RunInput;
use crate::dialect::{HookSpec, Scope};
use crate::env::{DEPTH_VAR, set_var};

/// The environment for a hook: the scrubbed base (minus the handles to services
/// outside the sandbox, for a project hook), the session overlay of its own scope and
/// root when `overlay` (never for a process shared by every session), the vendor
/// variables (`vendor_env`, from the dialect's launch), and the depth variable last so nothing can clobber it.
pub(crate) fn environment(
    hook: &HookSpec,
    input: &RunInput<'_>,
    overlay: bool,
    vendor_env: &[(String, String)],
) -> Vec<(OsString, OsString)> {
    let mut env = Vec::with_capacity(input.base_env.len() + 8);
    env.extend(
        input
            .base_env
            .iter()
            // Only the engine says a hook runs persistent (the persistent transport
            // sets it): a per-call hook never inherits it from the host.
            .filter(|(k, _)| k != crate::persistent::PERSISTENT_ENV)
            .filter(|(k, _)| {
                hook.scope != Scope::Project
                    || !k.to_str().is_some_and(crate::env::withheld_from_project)
            })
            .cloned(),
    );
    // An overlay never reaches a hook that runs outside the sandbox: one that opted
    // out, or any hook of a host that turned sandboxing off.
    if let Some(vars) = input
        .session_env
        .filter(|_| overlay && input.sandbox.is_some())
        .and_then(|o| o.for_hook(hook.sandbox, hook.scope, hook.root.as_deref()))
    {
        for (k, v) in vars {
            set_var(&mut env, k, v);
        }
    }
    for (k, v) in vendor_env {
        set_var(&mut env, k, v.as_str());
    }
    set_var(&mut env, DEPTH_VAR, input.child_depth.to_string());
    if let Some(token) = input.depth_token {
        set_var(&mut env, crate::env::TOKEN_VAR, token);
    }
    env
}
