//! Platforms without a sandbox implementation yet (macOS seatbelt and Windows will
//! follow): every policy is reported unenforced, so hooks run unsandboxed and the engine
//! says so (or fails the run when the sandbox is required).

use super::{
    Detection, Enforcement, PreparedSandbox, Sandbox, SandboxError, SandboxPolicy, SandboxStatus,
};

const REASON: &str = "no OS sandbox is implemented for this platform yet";

/// The sandbox of a platform that has none: always [`Enforcement::Unenforced`].
#[derive(Debug, Clone, Copy, Default)]
pub struct UnsupportedSandbox;

impl Sandbox for UnsupportedSandbox {
    fn status(&self) -> SandboxStatus {
        let unenforced = Enforcement::Unenforced {
            reason: REASON.to_owned(),
        };
        SandboxStatus {
            mechanism: "none",
            abi: None,
            filesystem_rules: false,
            network_rules: false,
            enforcement: unenforced.clone(),
            enforcement_without_network: unenforced,
            detection: Detection::Unavailable {
                reason: REASON.to_owned(),
            },
            #[cfg(unix)]
            layers: crate::spawn::layers(),
            #[cfg(not(unix))]
            layers: Vec::new(),
        }
    }

    fn enforcement(&self, _policy: &SandboxPolicy) -> Enforcement {
        Enforcement::Unenforced {
            reason: REASON.to_owned(),
        }
    }

    fn prepare(&self, _policy: &SandboxPolicy) -> Result<Box<dyn PreparedSandbox>, SandboxError> {
        Err(SandboxError::Unenforced {
            reason: REASON.to_owned(),
        })
    }
}
