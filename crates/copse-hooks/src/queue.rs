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

use std::collections::HashMap;
use std::path::PathBuf;

use crate::loop_limit::LoopLimit;
use crate::scope::Dialect;

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
    /// The config file that declared the hook.
    #[serde(skip)]
    pub source: std::path::PathBuf,
    /// The hook's entry in that file.
    #[serde(skip)]
    pub entry: usize,
    /// The canonical event the hook fired on (a stop follow-up counts as a loop).
    #[serde(skip)]
    pub canonical: Option<crate::event::CanonicalEvent>,
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
    /// The producing script's own cap on continuations (Copse `loop_limit`).
    #[serde(skip)]
    pub loop_limit: Option<LoopLimit>,
}

/// The queue and the budget of one session.
#[derive(Debug)]
pub struct MessageQueue {
    items: Vec<QueuedMessage>,
    epoch: u64,
    used: u32,
    budget: u32,
    /// Continuations each script has taken in the current turn tree.
    per_script: HashMap<(PathBuf, String, usize), u32>,
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
            per_script: HashMap::new(),
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
        self.per_script.clear();
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
    #[cfg(test)]
    pub fn has_send_now(&self) -> bool {
        self.items.iter().any(|m| m.send_now && !m.held)
    }

    /// Takes the messages the agent may receive now. Each spends one continuation of
    /// the current turn tree; once the budget is spent the rest turn held and stay.
    /// A script with a `loop_limit` gets at most that many of the continuations that
    /// remain (nothing is reserved for it; `null` means only the global budget
    /// applies).
    pub fn drain(&mut self) -> Vec<QueuedMessage> {
        let mut delivered = Vec::new();
        let mut kept = Vec::new();
        for mut m in std::mem::take(&mut self.items) {
            let key = (
                m.origin.source.clone(),
                m.origin.event.clone(),
                m.origin.entry,
            );
            let script_used = self.per_script.get(&key).copied().unwrap_or(0);
            let script_ok = match m.loop_limit {
                Some(LoopLimit::At(n)) => script_used < n,
                Some(LoopLimit::Unlimited) | None => true,
            };
            if m.held {
                kept.push(m);
            } else if self.used < self.budget && script_ok {
                self.used += 1;
                *self.per_script.entry(key).or_insert(0) += 1;
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
                source: PathBuf::from("/h.json"),
                entry: 1,
                canonical: None,
            },
            loop_limit: None,
        }
    }

    #[test]
    fn loop_limit_caps_a_script_inside_the_global_budget() {
        let mut q = MessageQueue::new(5);
        for i in 0..4 {
            let mut m = msg(&format!("a{i}"), 0, false, false);
            m.loop_limit = Some(LoopLimit::At(2));
            q.push(m);
        }
        q.push(msg("other", 0, false, false));
        let out: Vec<String> = q.drain().into_iter().map(|m| m.text).collect();
        assert_eq!(out, ["a0", "a1", "other"]);
        assert_eq!(q.items().len(), 2);
        assert!(q.items().iter().all(|m| m.held));
        assert_eq!(
            q.remaining(),
            2,
            "nothing was reserved for the capped script"
        );
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
