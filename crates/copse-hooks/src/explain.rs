//! Why each hook did or did not run for one event (`gate --explain`, `replay
//! --explain`, the page's tester).
//!
//! This module owns the explanation, not the decision: [`Engine::explain_event`]
//! asks the engine's own selection (the explain door, `Engine::select_explained`)
//! which hooks it picks and why it passes over each of the others, so the answer
//! cannot drift from what really runs. On top of the selection's reason it adds only
//! detail for the reader: the matcher's subject, the file that switched Claude hooks
//! off, the configs that failed to load. A hook of another event is listed only when
//! it would fire for the same tool call at another moment (e.g. Cursor's
//! `afterShellExecution` when gating `run_shell`), and a hook for an event
//! copse-hooks does not wire is always listed (it never runs anywhere).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::dialect::{Context, Dialect, HookMatcher, HookSpec, Scope};
use crate::discovery::{self, LoadedConfig};
use crate::engine::Skip;
use crate::engine::{Engine, TrustState};
use crate::event::{CanonicalEvent, EventPayload, SessionIdentity, ToolCall, ToolResult};
use crate::outcome::HookRun;

/// Why a hook did not run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SkipReason {
    /// External hooks are off (`copse-hooks enable` turns them on).
    HooksOff,
    /// This process runs inside a hook: hooks never run here.
    RecursionGuard {
        /// `COPSE_HOOK_DEPTH` of this process.
        depth: u32,
    },
    /// A project config whose workspace is not trusted.
    Untrusted {
        /// The workspace root.
        root: Option<PathBuf>,
    },
    /// A project config that changed since its workspace was trusted.
    ConfigChanged {
        /// The config.
        file: PathBuf,
    },
    /// A workspace script the hook runs changed since it was trusted.
    ScriptChanged {
        /// The script.
        file: PathBuf,
    },
    /// Claude's `disableAllHooks` is true.
    ClaudeDisabled {
        /// The settings file whose value wins, when known.
        file: Option<PathBuf>,
    },
    /// Gemini's `hooksConfig` or Codex's `[features]`/`[hooks.state]` switched it off.
    VendorDisabled {
        /// What switched it off, naming the file.
        why: String,
    },
    /// The matcher does not compile: the hook never fires.
    MatcherInvalid {
        /// The matcher as written.
        matcher: String,
        /// Why it does not compile.
        error: String,
    },
    /// The matcher did not match.
    MatcherNoMatch {
        /// The matcher as written.
        matcher: String,
        /// What it was matched against.
        subject: String,
    },
    /// Claude's `if` condition is false for this call.
    ConditionFalse {
        /// The condition as written.
        condition: String,
    },
    /// The hook's event does not fire for this call (e.g. Cursor's
    /// `beforeShellExecution` for a file read, or a glob that does not match).
    NotForThisCall {
        /// The tool of the call, for tool events.
        tool: Option<String>,
    },
    /// The hook is for another moment of the same call.
    OtherEvent {
        /// The canonical event it runs at.
        runs_at: CanonicalEvent,
    },
    /// The hook's event is recognised but copse-hooks does not wire it.
    UnsupportedEvent,
    /// An identical handler already runs for this event (the vendor runs it once).
    Duplicate,
    /// A managed-hooks-only rule (copse-hooks' `allowManagedHooksOnly`, Claude's
    /// `allowManagedHooksOnly`, Codex's `allow_managed_hooks_only`) keeps every
    /// non-managed hook from running.
    ManagedOnly {
        /// The rule and the file that set it.
        why: String,
    },
}

impl SkipReason {
    /// The snake_case code (`--json`'s `reason`).
    pub fn code(&self) -> &'static str {
        match self {
            SkipReason::HooksOff => "hooks_off",
            SkipReason::RecursionGuard { .. } => "recursion_guard",
            SkipReason::Untrusted { .. } => "untrusted",
            SkipReason::ConfigChanged { .. } => "config_changed",
            SkipReason::ScriptChanged { .. } => "script_changed",
            SkipReason::ClaudeDisabled { .. } => "claude_disabled",
            SkipReason::VendorDisabled { .. } => "vendor_disabled",
            SkipReason::MatcherInvalid { .. } => "matcher_invalid",
            SkipReason::MatcherNoMatch { .. } => "matcher_no_match",
            SkipReason::ConditionFalse { .. } => "condition_false",
            SkipReason::NotForThisCall { .. } => "not_for_this_call",
            SkipReason::OtherEvent { .. } => "other_event",
            SkipReason::UnsupportedEvent => "unsupported_event",
            SkipReason::Duplicate => "duplicate",
            SkipReason::ManagedOnly { .. } => "managed_only",
        }
    }

    /// One sentence for a person (strings from configs are not escaped here: the
    /// caller escapes for its medium).
    pub fn message(&self, hook_event: &str) -> String {
        match self {
            SkipReason::HooksOff => {
                "hooks are off (turn them on with `copse-hooks enable`)".to_string()
            }
            SkipReason::RecursionGuard { depth } => format!(
                "this process runs inside a hook (COPSE_HOOK_DEPTH={depth}): hooks never run here"
            ),
            SkipReason::Untrusted { root } => match root {
                Some(r) => format!(
                    "the workspace is not trusted (`copse-hooks trust {}`)",
                    quote(r)
                ),
                None => "the workspace is not trusted".to_string(),
            },
            SkipReason::ConfigChanged { file } => format!(
                "{} changed since the workspace was trusted (review it, then `copse-hooks trust`)",
                file.display()
            ),
            SkipReason::ScriptChanged { file } => format!(
                "the script {} changed since the workspace was trusted (review it, then `copse-hooks trust`)",
                file.display()
            ),
            SkipReason::ClaudeDisabled { file } => match file {
                Some(f) => format!("\"disableAllHooks\" is true in {}", f.display()),
                None => "\"disableAllHooks\" is true".to_string(),
            },
            SkipReason::VendorDisabled { why } => format!("switched off: {why}"),
            SkipReason::MatcherInvalid { matcher, error } => {
                format!("matcher \"{matcher}\" does not compile ({error}): it never fires")
            }
            SkipReason::MatcherNoMatch { matcher, subject } => {
                format!("matcher \"{matcher}\" did not match \"{subject}\"")
            }
            SkipReason::ConditionFalse { condition } => {
                format!("its \"if\" condition \"{condition}\" is false for this call")
            }
            SkipReason::NotForThisCall { tool } => match tool {
                Some(t) => format!("\"{hook_event}\" does not fire for {t}"),
                None => format!("\"{hook_event}\" does not fire for this call"),
            },
            SkipReason::OtherEvent { runs_at } => format!(
                "\"{hook_event}\" runs at {} for this call, not at this event",
                runs_at.name()
            ),
            SkipReason::UnsupportedEvent => format!(
                "\"{hook_event}\" is recognised but not supported by copse-hooks: it never runs"
            ),
            SkipReason::Duplicate => {
                "an identical handler already runs for this event (run once)".to_string()
            }
            SkipReason::ManagedOnly { why } => {
                format!("{why}: only managed hooks run")
            }
        }
    }
}

/// What happened to one hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookStatus {
    /// It ran (its verdict is given).
    Ran,
    /// The selection picked it (no run record given yet, or it ran detached).
    Selected,
    /// It did not run (the reason is given).
    Skipped,
}

/// One declared hook and why it did or did not run.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ExplainedHook {
    /// The dialect.
    pub dialect: Dialect,
    /// The event as written in the config.
    pub event: String,
    /// The matcher as written.
    pub matcher: Option<String>,
    /// The command.
    pub command: String,
    /// The config file.
    pub source: PathBuf,
    /// User or project.
    pub scope: Scope,
    /// 1-based position in its event's array.
    pub entry: usize,
    /// Ran, selected or skipped.
    pub status: HookStatus,
    /// Its verdict when it ran (`allow`, `deny — <msg>`, `no opinion`, `failed — …`).
    pub verdict: Option<String>,
    /// Why it did not run.
    pub reason: Option<SkipReason>,
}

impl ExplainedHook {
    /// The reason as one sentence, when skipped.
    pub fn reason_message(&self) -> Option<String> {
        self.reason.as_ref().map(|r| r.message(&self.event))
    }
}

/// A config that could not be read or parsed as it is (its hooks may be missing).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ConfigProblem {
    /// The config file.
    pub source: PathBuf,
    /// What is wrong.
    pub message: String,
}

/// Every configured hook for one event, with its verdict or why it did not run.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Explanation {
    /// The event explained.
    pub event: CanonicalEvent,
    /// The tool, for tool events.
    pub tool: Option<String>,
    /// Whether external hooks are on.
    pub hooks_enabled: bool,
    /// Whether this process is inside a hook (nothing runs).
    pub recursion_guard: bool,
    /// The hooks, in configured order.
    pub hooks: Vec<ExplainedHook>,
    /// Configs that could not be read or parsed as they are.
    pub problems: Vec<ConfigProblem>,
}

impl Explanation {
    /// Marks the selected hooks that appear in `runs` as ran, with their verdicts (a
    /// run is matched by its config, wire event and command).
    pub fn record_runs(&mut self, runs: &[HookRun]) {
        for h in self
            .hooks
            .iter_mut()
            .filter(|h| h.status == HookStatus::Selected)
        {
            if let Some(run) = runs
                .iter()
                .find(|r| r.source == h.source && r.event == h.event && r.command == h.command)
            {
                h.status = HookStatus::Ran;
                h.verdict = Some(crate::dryrun::summary(run));
            }
        }
    }
}

fn tool_of(event: &EventPayload) -> Option<&str> {
    match event {
        EventPayload::ToolGate(c) | EventPayload::PermissionRequest(c) => Some(&c.tool),
        EventPayload::AfterToolUse(r) => Some(&r.tool),
        _ => None,
    }
}

/// The same tool call at its other moments (before, after, asking permission).
fn related(event: &EventPayload) -> Vec<EventPayload> {
    let (tool, input) = match event {
        EventPayload::ToolGate(c) | EventPayload::PermissionRequest(c) => (&c.tool, &c.input),
        EventPayload::AfterToolUse(r) => (&r.tool, &r.input),
        _ => return Vec::new(),
    };
    let call = ToolCall::new(tool.clone(), input.clone());
    let after = EventPayload::AfterToolUse(ToolResult::new(tool.clone(), input.clone(), ""));
    [
        EventPayload::ToolGate(call.clone()),
        EventPayload::PermissionRequest(call),
        after,
    ]
    .into_iter()
    .filter(|e| e.event() != event.event())
    .collect()
}

type Key = (usize, usize);

fn key(config: &Arc<crate::dialect::ParsedConfig>, index: usize) -> Key {
    (Arc::as_ptr(config) as usize, index)
}

impl Engine {
    /// Every configured hook for `event` (every dialect, user and project, trusted or
    /// not), with why each one would not run, from the engine's own selection. Runs
    /// nothing; [`Explanation::record_runs`] adds the verdicts of a real gate.
    pub fn explain_event(&self, event: &EventPayload, identity: &SessionIdentity) -> Explanation {
        let ctx = Context {
            session: identity,
            workspace_roots: self.workspace_roots(),
        };
        let mut skips: HashMap<Key, Skip> = HashMap::new();
        let (selected, configs) = self.select_explained(event, &ctx, &mut |l, i, s| {
            skips.insert(key(&l.config, i), s);
        });
        let selected: std::collections::HashSet<Key> =
            selected.iter().map(|s| key(&s.config, s.index)).collect();
        // Hooks of other events that fire for this same call at another moment.
        let mut elsewhere: HashMap<(PathBuf, String, usize), CanonicalEvent> = HashMap::new();
        for other in related(event) {
            let (picked, _) = self.select_explained(&other, &ctx, &mut |_, _, _| {});
            for s in picked {
                let h = s.hook();
                elsewhere.insert((h.source.clone(), h.event.clone(), h.entry), other.event());
            }
        }
        let canonical = event.event();
        let off = !self.config().hooks_enabled;
        let guard = self.recursion_guard_tripped();
        let mut hooks = Vec::new();
        for loaded in &configs {
            for (index, hook) in loaded.config.hooks.iter().enumerate() {
                let k = key(&loaded.config, index);
                let (status, reason) = if selected.contains(&k) {
                    // Managed hooks run whether hooks are on or off.
                    if off && loaded.location.scope != Scope::Managed {
                        (HookStatus::Skipped, Some(SkipReason::HooksOff))
                    } else if guard {
                        (
                            HookStatus::Skipped,
                            Some(SkipReason::RecursionGuard {
                                depth: self.hook_depth(),
                            }),
                        )
                    } else {
                        (HookStatus::Selected, None)
                    }
                } else {
                    let Some(skip) = skips.get(&k) else { continue };
                    let Some(reason) = self.reason(skip, loaded, &configs, hook, event, &elsewhere)
                    else {
                        continue;
                    };
                    // The dialect-wide gates come before the event check: list only
                    // this event's hooks under them.
                    if hook.canonical != Some(canonical)
                        && !matches!(
                            reason,
                            SkipReason::OtherEvent { .. } | SkipReason::UnsupportedEvent
                        )
                    {
                        continue;
                    }
                    (HookStatus::Skipped, Some(reason))
                };
                hooks.push(ExplainedHook {
                    dialect: hook.dialect,
                    event: hook.event.clone(),
                    matcher: hook.matcher_source.clone(),
                    command: hook.command.clone(),
                    source: hook.source.clone(),
                    scope: hook.scope,
                    entry: hook.entry,
                    status,
                    verdict: None,
                    reason,
                });
            }
        }
        Explanation {
            event: canonical,
            tool: tool_of(event).map(str::to_string),
            hooks_enabled: !off,
            recursion_guard: guard,
            hooks,
            problems: problems(&configs),
        }
    }

    /// The reader's reason for a skip; `None` when the hook is not worth listing (a
    /// hook of an unrelated event).
    fn reason(
        &self,
        skip: &Skip,
        loaded: &LoadedConfig,
        configs: &[LoadedConfig],
        hook: &HookSpec,
        event: &EventPayload,
        elsewhere: &HashMap<(PathBuf, String, usize), CanonicalEvent>,
    ) -> Option<SkipReason> {
        Some(match skip {
            Skip::Trust(TrustState::Changed) => SkipReason::ConfigChanged {
                file: loaded.location.path.clone(),
            },
            Skip::Trust(_) => SkipReason::Untrusted {
                root: loaded.location.root.clone(),
            },
            Skip::ClaudeDisabled => SkipReason::ClaudeDisabled {
                // The value that wins is the last trusted one set (see
                // `dialect::switches`).
                file: configs
                    .iter()
                    .filter(|l| l.location.dialect == Dialect::Claude)
                    .filter(|l| self.trust_state(l) == TrustState::Trusted)
                    .rfind(|l| l.config.disable_all_hooks.is_some())
                    .map(|l| l.location.path.clone()),
            },
            Skip::OtherEvent => match hook.canonical {
                None => SkipReason::UnsupportedEvent,
                Some(_) => SkipReason::OtherEvent {
                    runs_at: *elsewhere.get(&(
                        hook.source.clone(),
                        hook.event.clone(),
                        hook.entry,
                    ))?,
                },
            },
            Skip::Switched(why) => SkipReason::VendorDisabled { why: why.clone() },
            Skip::ScriptChanged(file) => SkipReason::ScriptChanged { file: file.clone() },
            Skip::Duplicate => SkipReason::Duplicate,
            Skip::ManagedOnly(why) => SkipReason::ManagedOnly { why: why.clone() },
            Skip::NotApplicable => not_applicable(hook, event),
        })
    }
}

/// Which part of `applies` said no: the matcher (against the dialect's own subject),
/// then the `if` condition, else the event does not fire for this call.
fn not_applicable(hook: &HookSpec, event: &EventPayload) -> SkipReason {
    let matcher = hook.matcher_source.clone().unwrap_or_default();
    if let HookMatcher::Invalid(e) = &hook.matcher {
        return SkipReason::MatcherInvalid {
            matcher,
            error: e.reason.clone(),
        };
    }
    if let Some(subject) = discovery::adapter(hook.dialect).match_subject(hook, event) {
        let fires = subject
            .split(", ")
            .chain(std::iter::once(subject.as_str()))
            .any(|s| hook.matcher.test(s).fires());
        if !fires {
            return SkipReason::MatcherNoMatch { matcher, subject };
        }
    }
    match &hook.options.condition {
        Some(rule) => SkipReason::ConditionFalse {
            condition: rule.source.clone(),
        },
        None => SkipReason::NotForThisCall {
            tool: tool_of(event).map(str::to_string),
        },
    }
}

/// Configs that exist but could not be read, or were read with problems.
fn problems(configs: &[LoadedConfig]) -> Vec<ConfigProblem> {
    let mut out = Vec::new();
    for loaded in configs.iter().filter(|l| l.exists) {
        let why: Vec<&str> = loaded
            .config
            .warnings
            .iter()
            .map(|w| w.message.as_str())
            .collect();
        if loaded.hash.is_none() {
            out.push(ConfigProblem {
                source: loaded.location.path.clone(),
                message: if why.is_empty() {
                    "could not be read: its hooks do not run".to_string()
                } else {
                    format!("{}: its hooks do not run", why.join("; "))
                },
            });
            continue;
        }
        for w in &loaded.config.warnings {
            out.push(ConfigProblem {
                source: w.source.clone(),
                message: w.message.clone(),
            });
        }
    }
    out
}

/// A path as one shell word to paste: unchanged when only safe characters, else
/// single-quoted.
fn quote(path: &std::path::Path) -> String {
    let text = path.display().to_string();
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        text
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}
