//! The sandbox step: preparing a hook's OS policy before its process starts, the same
//! for a per-call process and a persistent one.

use crate::outcome::{Failure, FailureKind, SandboxState};
use crate::sandbox::{HookPolicy, PreparedSandbox, SandboxError, SandboxPolicy};

use super::SandboxConfig;

/// What preparing the sandbox gave.
pub(crate) enum Contained {
    /// The host does not sandbox this hook.
    Off,
    /// Prepared in the parent (descriptors, ruleset, private TMPDIR — its path here),
    /// applied in the child between fork and exec, inherited by everything the hook
    /// starts.
    Enforced(Box<dyn PreparedSandbox>, std::path::PathBuf),
    /// The kernel does not enforce it and the host does not require it: the hook runs
    /// unsandboxed (the session says so once).
    Unenforced,
    /// The hook must not start: the sandbox is required and unavailable, it could not
    /// be set up, or the host is out of resources.
    Refused(Failure),
}

impl Contained {
    /// The state recorded on the run.
    pub(crate) fn state(&self) -> SandboxState {
        match self {
            Contained::Off => SandboxState::Off,
            Contained::Enforced(..) => SandboxState::Enforced,
            Contained::Unenforced | Contained::Refused(_) => SandboxState::Unenforced,
        }
    }
}

/// Prepares a per-call hook's policy under `config` (one call into the sandbox), or
/// says why the hook may not start.
pub(crate) fn prepare(sandbox: Option<(&SandboxConfig, HookPolicy<'_>)>) -> Contained {
    let Some((config, policy)) = sandbox else {
        return Contained::Off;
    };
    settle(
        config,
        crate::sandbox::prepare_hook(config.sandbox.as_ref(), policy),
    )
}

/// Prepares an already built policy (a persistent process about to start).
pub(crate) fn prepare_built(sandbox: Option<(&SandboxConfig, &SandboxPolicy)>) -> Contained {
    let Some((config, policy)) = sandbox else {
        return Contained::Off;
    };
    settle(
        config,
        config.sandbox.prepare(policy).map(|p| {
            let tmpdir = p.tmpdir().to_path_buf();
            (p, tmpdir)
        }),
    )
}

/// What preparing gave, under the host's `require` setting.
fn settle(
    config: &SandboxConfig,
    prepared: Result<(Box<dyn PreparedSandbox>, std::path::PathBuf), SandboxError>,
) -> Contained {
    match prepared {
        Ok((p, tmpdir)) => Contained::Enforced(p, tmpdir),
        Err(SandboxError::Unenforced { .. }) if !config.require => Contained::Unenforced,
        Err(SandboxError::Setup { cause, .. })
            if matches!(
                cause.raw_os_error(),
                Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM)
            ) =>
        {
            Contained::Refused(Failure {
                kind: FailureKind::Resources,
                message: format!("could not be started: the host is out of resources ({cause})"),
            })
        }
        Err(e) => Contained::Refused(Failure {
            kind: FailureKind::Sandbox,
            message: if config.require {
                format!("was not run: the sandbox is required but {e}")
            } else {
                format!("could not be sandboxed: {e}")
            },
        }),
    }
}
