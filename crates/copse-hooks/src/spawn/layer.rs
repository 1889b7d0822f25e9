//! [`Layer`]: one protection layer and whether this machine enforces it. Process
//! containment ([`super::layers`]) reports its layers with it, and the sandbox's
//! status (`copse_hooks::sandbox::SandboxStatus`) lists them with its own.

/// One protection layer of the sandbox (or of process containment).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Layer {
    /// What it protects, e.g. "signals only to the run's processes".
    pub name: &'static str,
    /// Whether this machine enforces it.
    pub enforced: bool,
    /// By what, or why not.
    pub detail: String,
}

impl Layer {
    pub(crate) fn new(name: &'static str, enforced: bool, detail: String) -> Self {
        Self {
            name,
            enforced,
            detail,
        }
    }
}
