//! A script's cap on the continuations its queued messages may take (the Copse
//! `loop_limit` key), shared by the Copse dialect, the queue and the session.

/// A declared `loop_limit`: how many of a script's queued messages may auto-continue
/// the agent per turn tree, always inside the global budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoopLimit {
    /// At most this many (clamped to what remains of the global budget).
    At(u32),
    /// `null`: unlimited, which is clamped to what remains of the global budget.
    Unlimited,
}

impl LoopLimit {
    /// The script's cap when `remaining` continuations are left in the turn tree:
    /// `min(limit, remaining)`; `Unlimited` clamps to `remaining`.
    pub fn effective(self, remaining: u32) -> u32 {
        match self {
            LoopLimit::At(n) => n.min(remaining),
            LoopLimit::Unlimited => remaining,
        }
    }
}
