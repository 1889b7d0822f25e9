//! Merge: many hook outcomes to one verdict.
//!
//! Outcomes are merged in configured order, never completion order: the strictest
//! decision wins (`Allow < Ask < Deny`), messages are joined with a blank line,
//! `updated_input` objects are shallow-merged in order (later keys win) and the first
//! halt request wins. A hook can only tighten: "allow" means "no hook objects".

use crate::outcome::{HookRun, Verdict};

/// Merges runs (already in configured order) into a verdict.
pub fn merge(runs: Vec<HookRun>) -> Verdict {
    let mut verdict = Verdict::default();
    for run in &runs {
        let o = &run.outcome;
        if let Some(d) = o.decision {
            verdict.decision = Some(verdict.decision.map_or(d, |cur| cur.max(d)));
        }
        if verdict.halt.is_none() {
            verdict.halt.clone_from(&o.halt);
        }
        join(&mut verdict.agent_message, o.agent_message.as_deref());
        join(&mut verdict.user_message, o.user_message.as_deref());
        join(&mut verdict.inject_context, o.inject_context.as_deref());
        if let Some(script) = o
            .tool_env_script
            .as_deref()
            .filter(|s| !s.trim().is_empty())
        {
            let acc = verdict.tool_env_script.get_or_insert_with(String::new);
            acc.push_str(script);
            if !script.ends_with('\n') {
                acc.push('\n');
            }
        }
        if let Some(update) = &o.updated_input
            && o.replace_input
        {
            verdict.updated_input = Some(update.clone());
            verdict.input_replaced = true;
        } else if let Some(update) = &o.updated_input {
            let merged = verdict.updated_input.get_or_insert_with(Default::default);
            for (k, v) in update {
                merged.insert(k.clone(), v.clone());
            }
        }
    }
    // Permission updates come with an allow: a verdict that denies applies none.
    if verdict.decision != Some(crate::outcome::Decision::Deny) {
        for o in runs.iter().map(|r| &r.outcome) {
            if let Some(updates) = o.updated_permissions.as_ref().filter(|u| !u.is_empty()) {
                verdict
                    .updated_permissions
                    .get_or_insert_with(Vec::new)
                    .extend(updates.iter().cloned());
            }
        }
    }
    verdict.runs = runs;
    verdict
}

/// Applies the built-in guard's runs to a merged verdict. The guard only tightens: a
/// run whose decision is stricter than the verdict's becomes the decision, with its
/// messages (the reason for the stricter answer); one that is not stricter leaves the
/// hooks' answer and messages as they are. Every run is kept in `verdict.guard`.
pub(crate) fn apply_guard(verdict: &mut Verdict, guard: Vec<HookRun>) {
    use crate::outcome::Decision;
    for run in &guard {
        let Some(d) = run.outcome.decision else {
            continue;
        };
        if d > verdict.effective_decision() {
            verdict.decision = Some(d);
            verdict.agent_message.clone_from(&run.outcome.agent_message);
            verdict.user_message.clone_from(&run.outcome.user_message);
            if d == Decision::Deny {
                verdict.updated_permissions = None;
            }
        } else if verdict.decision.is_none() {
            verdict.decision = Some(d);
        }
    }
    verdict.guard = guard;
}

/// Whether a guard run only repeats what the hooks had already answered.
pub(crate) fn subsumed(run: &HookRun) -> bool {
    run.guard.as_ref().is_some_and(|g| g.subsumed)
}

fn join(acc: &mut Option<String>, next: Option<&str>) {
    let Some(next) = next.filter(|s| !s.trim().is_empty()) else {
        return;
    };
    match acc {
        Some(cur) => {
            cur.push_str("\n\n");
            cur.push_str(next);
        }
        None => *acc = Some(next.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::merge;
    use crate::event::CanonicalEvent;
    use crate::outcome::{Decision, Halt, HookRun, Outcome};
    use crate::scope::{Dialect, Scope};

    /// A run of the hook `command` that said `outcome`.
    fn run(command: &str, outcome: Outcome) -> HookRun {
        let mut run = HookRun::new(
            "toolGate",
            CanonicalEvent::ToolGate,
            Dialect::Copse,
            command,
            "/cfg/hooks.json",
            Scope::User,
        );
        run.outcome = outcome;
        run
    }

    fn said(decision: Option<Decision>) -> HookRun {
        run(
            "h",
            Outcome {
                decision,
                ..Outcome::default()
            },
        )
    }

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    /// Every ordering of `items`.
    fn permutations<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
        if items.len() <= 1 {
            return vec![items.to_vec()];
        }
        let mut out = Vec::new();
        for i in 0..items.len() {
            let mut rest = items.to_vec();
            let head = rest.remove(i);
            for mut tail in permutations(&rest) {
                tail.insert(0, head.clone());
                out.push(tail);
            }
        }
        out
    }

    #[test]
    fn strictest_decision_wins_in_any_order() {
        use Decision::{Allow, Ask, Deny};
        let cases: [(&[Option<Decision>], Option<Decision>); 6] = [
            (&[Some(Allow), Some(Ask), Some(Deny), None], Some(Deny)),
            (&[Some(Allow), Some(Ask), None], Some(Ask)),
            (&[Some(Allow), None], Some(Allow)),
            (&[Some(Deny), Some(Deny)], Some(Deny)),
            (&[None, None], None),
            (&[Some(Ask), Some(Ask), Some(Allow)], Some(Ask)),
        ];
        for (decisions, want) in cases {
            let orders = permutations(decisions);
            assert!(orders.len() >= 2);
            for order in orders {
                let verdict = merge(order.iter().copied().map(said).collect());
                assert_eq!(verdict.decision, want, "{order:?}");
            }
        }
        let none = merge(vec![said(None)]);
        assert_eq!(
            none.effective_decision(),
            Allow,
            "no opinion is no objection"
        );
    }

    #[test]
    fn messages_are_joined_in_configured_order_with_a_blank_line() {
        let text = |agent: Option<&str>, user: Option<&str>, context: Option<&str>| Outcome {
            agent_message: agent.map(str::to_string),
            user_message: user.map(str::to_string),
            inject_context: context.map(str::to_string),
            ..Outcome::default()
        };
        let verdict = merge(vec![
            run("a", text(Some("first"), None, Some("ctx one"))),
            run("b", text(None, Some("only user"), Some("  \n"))),
            run("c", text(Some("second"), Some(" "), Some("ctx two"))),
            run("d", text(Some("third\nline"), None, None)),
        ]);
        assert_eq!(
            verdict.agent_message.as_deref(),
            Some("first\n\nsecond\n\nthird\nline")
        );
        assert_eq!(
            verdict.user_message.as_deref(),
            Some("only user"),
            "blank messages are skipped"
        );
        assert_eq!(
            verdict.inject_context.as_deref(),
            Some("ctx one\n\nctx two")
        );

        // The same outcomes in another configured order join in that order.
        let verdict = merge(vec![
            run("d", text(Some("third\nline"), None, None)),
            run("a", text(Some("first"), None, None)),
        ]);
        assert_eq!(
            verdict.agent_message.as_deref(),
            Some("third\nline\n\nfirst")
        );
    }

    #[test]
    fn the_first_halt_in_configured_order_wins() {
        let halt = |reason: &str| Outcome {
            halt: Some(Halt {
                reason: reason.to_string(),
            }),
            decision: Some(Decision::Deny),
            ..Outcome::default()
        };
        let verdict = merge(vec![
            said(Some(Decision::Allow)),
            run("one", halt("first reason")),
            run("two", halt("second reason")),
        ]);
        assert_eq!(
            verdict.halt.map(|h| h.reason).as_deref(),
            Some("first reason")
        );
        let verdict = merge(vec![
            run("two", halt("second reason")),
            run("one", halt("first reason")),
        ]);
        assert_eq!(
            verdict.halt.map(|h| h.reason).as_deref(),
            Some("second reason")
        );
        assert!(merge(vec![said(Some(Decision::Deny))]).halt.is_none());
    }

    #[test]
    fn updated_input_is_shallow_merged_with_later_keys_winning() {
        let update = |v: Value| Outcome {
            updated_input: Some(obj(v)),
            ..Outcome::default()
        };
        let verdict = merge(vec![
            run("a", update(json!({"a": 1, "b": 1, "c": {"x": 1}}))),
            said(None),
            run("b", update(json!({"b": 2, "c": {"y": 2}}))),
        ]);
        assert_eq!(
            verdict.updated_input,
            Some(obj(json!({"a": 1, "b": 2, "c": {"y": 2}}))),
            "later keys win, nested objects are replaced, not merged"
        );
        assert!(!verdict.input_replaced);
        assert!(merge(vec![said(None)]).updated_input.is_none());
    }

    #[test]
    fn a_replacing_rewrite_discards_what_came_before_it() {
        let merging = |v: Value| Outcome {
            updated_input: Some(obj(v)),
            ..Outcome::default()
        };
        let replacing = |v: Value| Outcome {
            updated_input: Some(obj(v)),
            replace_input: true,
            ..Outcome::default()
        };
        let verdict = merge(vec![
            run("a", merging(json!({"a": 1, "keep": false}))),
            run("b", replacing(json!({"z": 9}))),
            run("c", merging(json!({"later": true}))),
        ]);
        assert_eq!(
            verdict.updated_input,
            Some(obj(json!({"z": 9, "later": true}))),
            "the replacement drops earlier keys; later merges go on top"
        );
        assert!(verdict.input_replaced);

        // A replacing outcome without an input changes nothing.
        let verdict = merge(vec![
            run("a", merging(json!({"a": 1}))),
            run(
                "b",
                Outcome {
                    replace_input: true,
                    ..Outcome::default()
                },
            ),
        ]);
        assert_eq!(verdict.updated_input, Some(obj(json!({"a": 1}))));
        assert!(!verdict.input_replaced);
    }

    #[test]
    fn permission_updates_are_kept_in_order_unless_the_verdict_denies() {
        let with = |decision: Decision, updates: Vec<Value>| Outcome {
            decision: Some(decision),
            updated_permissions: Some(updates),
            ..Outcome::default()
        };
        let rule = |n: u32| json!({"type": "addRules", "rules": [n]});
        let verdict = merge(vec![
            run("a", with(Decision::Allow, vec![rule(1), rule(2)])),
            run("b", with(Decision::Allow, Vec::new())),
            run("c", with(Decision::Ask, vec![rule(3)])),
        ]);
        assert_eq!(
            verdict.updated_permissions,
            Some(vec![rule(1), rule(2), rule(3)])
        );

        let verdict = merge(vec![
            run("a", with(Decision::Allow, vec![rule(1)])),
            said(Some(Decision::Deny)),
        ]);
        assert_eq!(verdict.decision, Some(Decision::Deny));
        assert_eq!(
            verdict.updated_permissions, None,
            "a denying verdict applies no update"
        );

        let verdict = merge(vec![run("a", with(Decision::Allow, Vec::new()))]);
        assert_eq!(verdict.updated_permissions, None, "empty lists add nothing");
    }

    #[test]
    fn tool_env_scripts_are_concatenated_one_line_ending_each() {
        let script = |s: &str| Outcome {
            tool_env_script: Some(s.to_string()),
            ..Outcome::default()
        };
        let verdict = merge(vec![
            run("a", script("export A=1")),
            run("b", script("  \n")),
            said(None),
            run("c", script("export B=2\nexport C=3\n")),
            run("d", script("export D=4")),
        ]);
        assert_eq!(
            verdict.tool_env_script.as_deref(),
            Some("export A=1\nexport B=2\nexport C=3\nexport D=4\n")
        );
        assert!(
            merge(vec![run("b", script(" "))]).tool_env_script.is_none(),
            "a blank script is no script"
        );
    }

    #[test]
    fn runs_are_kept_in_configured_order() {
        let names = ["third", "first", "second"];
        let verdict = merge(names.iter().map(|n| run(n, Outcome::default())).collect());
        let commands: Vec<&str> = verdict.runs.iter().map(|r| r.command.as_str()).collect();
        assert_eq!(commands, names);
    }

    #[test]
    fn no_runs_is_no_objection_and_nothing_else() {
        let verdict = merge(Vec::new());
        assert_eq!(verdict.decision, None);
        assert_eq!(verdict.effective_decision(), Decision::Allow);
        assert!(verdict.agent_message.is_none());
        assert!(verdict.user_message.is_none());
        assert!(verdict.inject_context.is_none());
        assert!(verdict.halt.is_none());
        assert!(verdict.updated_input.is_none());
        assert!(!verdict.input_replaced);
        assert!(verdict.tool_env_script.is_none());
        assert!(verdict.updated_permissions.is_none());
        assert!(verdict.runs.is_empty());
    }
}
