//! The pending-message queue and the continuation budget.
//!
//! Detached hooks cannot change what already happened; their only output channel is a
//! queued message for the agent. Each message carries the epoch (turn-tree id) it was
//! produced in. Machine-initiated continuations are budgeted per turn tree: a hook
//! message spends one when it drains, and once the budget is spent further messages
//! turn *held* — they wait for a human. A human submission starts a new turn tree and
//! resets the budget. A send-now message from an older epoch is held on arrival, so a
//! late hook can never interrupt the current turn. `stop` / `subagentStop` follow-ups
//! are always held (they are never auto-submitted).

use serde::Serialize;

use crate::dialect::Dialect;

/// Machine-initiated continuations allowed per turn tree.
pub const DEFAULT_CONTINUATION_BUDGET: u32 = 5;

/// Where a queued message came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MessageOrigin {
    /// The hook's dialect.
    pub dialect: Dialect,
    /// The wire event that produced it.
    pub event: String,
    /// The hook's command.
    pub command: String,
}

/// A message waiting for the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueuedMessage {
    /// The text.
    pub text: String,
    /// Whether the hook asked for it to interrupt now.
    pub send_now: bool,
    /// Whether it waits for a human to release it.
    pub held: bool,
    /// The turn tree it was produced in.
    pub epoch: u64,
    /// Who produced it.
    pub origin: MessageOrigin,
}

/// The queue and the budget of one session.
#[derive(Debug)]
pub struct MessageQueue {
    items: Vec<QueuedMessage>,
    epoch: u64,
    used: u32,
    budget: u32,
}

impl Default for MessageQueue {
    fn default() -> Self {
        MessageQueue::new(DEFAULT_CONTINUATION_BUDGET)
    }
}

impl MessageQueue {
    /// An empty queue with this per-turn-tree budget, in epoch 0.
    pub fn new(budget: u32) -> MessageQueue {
        MessageQueue {
            items: Vec::new(),
            epoch: 0,
            used: 0,
            budget,
        }
    }

    /// The current turn tree.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Continuations left in the current turn tree.
    pub fn remaining(&self) -> u32 {
        self.budget.saturating_sub(self.used)
    }

    /// A human submission: a new turn tree, a fresh budget. Returns the new epoch.
    pub fn start_human_turn_tree(&mut self) -> u64 {
        self.epoch += 1;
        self.used = 0;
        self.epoch
    }

    /// Adds a message produced in `epoch`. A send-now message from an older epoch is
    /// held: it must never interrupt the current turn.
    pub fn push(&mut self, mut message: QueuedMessage) {
        if message.epoch != self.epoch && message.send_now {
            message.held = true;
        }
        self.items.push(message);
    }

    /// Everything queued, in arrival order.
    pub fn items(&self) -> &[QueuedMessage] {
        &self.items
    }

    /// Whether a non-held send-now message is waiting (the host should interrupt).
    pub fn has_send_now(&self) -> bool {
        self.items.iter().any(|m| m.send_now && !m.held)
    }

    /// Takes the messages the agent may receive now. Each spends one continuation of
    /// the current turn tree; once the budget is spent the rest turn held and stay.
    pub fn drain(&mut self) -> Vec<QueuedMessage> {
        let mut delivered = Vec::new();
        let mut kept = Vec::new();
        for mut m in std::mem::take(&mut self.items) {
            if m.held {
                kept.push(m);
            } else if self.used < self.budget {
                self.used += 1;
                delivered.push(m);
            } else {
                m.held = true;
                kept.push(m);
            }
        }
        self.items = kept;
        delivered
    }

    /// A human releases the held messages: they are delivered, and (being a human
    /// action) a new turn tree starts with a fresh budget.
    pub fn release_held(&mut self) -> Vec<QueuedMessage> {
        let (held, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.items)
            .into_iter()
            .partition(|m| m.held);
        self.items = rest;
        self.start_human_turn_tree();
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(text: &str, epoch: u64, send_now: bool, held: bool) -> QueuedMessage {
        QueuedMessage {
            text: text.into(),
            send_now,
            held,
            epoch,
            origin: MessageOrigin {
                dialect: Dialect::Cursor,
                event: "postToolUse".into(),
                command: "x".into(),
            },
        }
    }

    #[test]
    fn budget_spends_on_drain_and_holds_over_budget() {
        let mut q = MessageQueue::new(2);
        for i in 0..3 {
            q.push(msg(&format!("m{i}"), 0, false, false));
        }
        let out = q.drain();
        assert_eq!(
            out.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
            ["m0", "m1"]
        );
        assert_eq!(q.items().len(), 1);
        assert!(q.items()[0].held);
        assert_eq!(q.remaining(), 0);
        // Held items never drain by themselves.
        assert!(q.drain().is_empty());
        // A human turn resets the budget, but held items still wait for release.
        q.start_human_turn_tree();
        assert_eq!(q.remaining(), 2);
        assert!(q.drain().is_empty());
        let released = q.release_held();
        assert_eq!(released.len(), 1);
    }

    #[test]
    fn stale_send_now_is_held() {
        let mut q = MessageQueue::default();
        q.start_human_turn_tree();
        q.push(msg("late", 0, true, false));
        q.push(msg("current", 1, true, false));
        assert!(q.items()[0].held);
        assert!(!q.items()[1].held);
        assert!(q.has_send_now());
    }
}
