//! Plan: which hooks an event runs. Trust is decided once per config per event; the
//! dialect-wide switches and the vendors' de-duplication rules are asked of the
//! dialects; the same code answers `gate --explain` through a skip observer.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::dialect::switches::{Layer, Switches};
use crate::dialect::{Admission, ConfigWarning, Context, Dialect, Scope};
use crate::discovery::{ConfigLocation, LoadedConfig};
use crate::engine::{Engine, ScriptState, TrustState};
use crate::event::EventPayload;
use crate::selected::Selected;

/// Why the selection passed over a hook (what [`Engine::select_explained`] reports;
/// `Engine::explain_event` turns it into a [`crate::SkipReason`]).
#[derive(Debug, Clone)]
pub(crate) enum Skip {
    /// Its config is not trusted as it is.
    Trust(TrustState),
    /// Claude's `disableAllHooks`.
    ClaudeDisabled,
    /// Declared for another event (or an unsupported one).
    OtherEvent,
    /// A Gemini or Codex switch turned it off (why, naming the file).
    Switched(String),
    /// The dialect's `applies` said no: matcher, `if` condition, or event/tool.
    NotApplicable,
    /// A workspace script it runs changed since trusted.
    ScriptChanged(PathBuf),
    /// An identical handler already selected (Claude, Gemini run it once).
    Duplicate,
    /// A managed-hooks-only rule keeps every non-managed hook from running (why,
    /// naming the file that set it).
    ManagedOnly(String),
}

/// What an event runs.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// The selected hooks, in configured order.
    pub hooks: Vec<Selected>,
    /// Claude's `allowedHttpHookUrls` / `httpHookAllowedEnvVars` merged over the
    /// trusted Claude settings files; only when a selected hook is an http hook.
    pub http_policy: Option<crate::http::HttpPolicy>,
    /// Configs whose hooks would have judged this gated event but cannot run (changed
    /// since trusted, a pinned script changed, refused for owner or mode): each one
    /// blocks the event, so a guard that cannot run never becomes a pass.
    pub blocks: Vec<Block>,
}

/// A config whose hooks cannot judge a gated event they would have judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    /// The file that changed or was refused.
    pub file: PathBuf,
    /// The config declaring the hooks (the file itself, or the config of the hook
    /// whose script changed).
    pub config: PathBuf,
    /// Its scope.
    pub scope: Scope,
    /// Why.
    pub why: BlockWhy,
}

/// Why a [`Block`] blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BlockWhy {
    /// The file changed since its workspace was trusted.
    Changed,
    /// Refused unread: its owner or mode, or it cannot be read.
    Refused(crate::dialect::Refusal),
    /// Managed hooks nested this deep in one another's agents stop.
    TooDeep,
}

/// What the selection tells its caller besides the plan.
pub(crate) struct Observer<'a> {
    /// Each project config or pinned script skipped because its content no longer
    /// matches what was trusted.
    pub changed: &'a mut dyn FnMut(&Path),
    /// Each warning of a config that was read (unreadable, invalid, wrong-shaped…).
    pub problems: &'a mut dyn FnMut(&ConfigWarning),
    /// Why each hook passed over does not run (a no-op on the normal path).
    pub skipped: &'a mut dyn FnMut(&LoadedConfig, usize, Skip),
    /// Each config whose hooks cannot judge this gated event (see [`Plan::blocks`]).
    pub blocked: &'a mut dyn FnMut(Block),
}

/// A loaded config with its trust decided.
struct Candidate {
    loaded: LoadedConfig,
    trust: TrustState,
}

impl Engine {
    /// The plan for `event`: the hooks of every trusted config that fire for it, in
    /// configured order.
    pub(crate) fn plan(
        &self,
        event: &EventPayload,
        ctx: &Context<'_>,
        changed: &mut dyn FnMut(&Path),
        problems: &mut dyn FnMut(&ConfigWarning),
    ) -> Plan {
        // With hooks off only the managed layer runs; a managed-hooks-only rule leaves
        // the other configs unread.
        // Inside one of our own hooks only managed hooks run; they too stop at the
        // managed depth bound, where a gated event is blocked rather than passed.
        let enabled = self.own_hooks_run();
        let too_deep = self.managed_too_deep();
        if too_deep && event.event().is_gated() {
            return Plan {
                blocks: vec![Block {
                    file: self.managed().dir.clone(),
                    config: self.managed().dir.clone(),
                    scope: Scope::Managed,
                    why: BlockWhy::TooDeep,
                }],
                ..Plan::default()
            };
        }
        let candidates = self.candidates(|loc| {
            (enabled || (loc.scope == Scope::Managed && !too_deep))
                && self.root_trusted(loc)
                && self.managed_only_of(loc).is_none()
        });
        self.stop_unselected_persistent(&candidates);
        // A managed layer that is broken or refused is said at every gate.
        let managed = self.managed();
        for line in managed
            .warnings
            .iter()
            .chain(&managed.claude.warnings)
            .chain(&managed.codex.warnings)
        {
            problems(&ConfigWarning {
                source: managed.dir.clone(),
                scope: Scope::Managed,
                event: None,
                message: line.clone(),
            });
        }
        let mut blocks = Vec::new();
        let hooks = self.select_from(
            &candidates,
            event,
            ctx,
            &mut Observer {
                changed,
                problems,
                skipped: &mut |_, _, _| {},
                blocked: &mut |b| {
                    if !blocks.contains(&b) {
                        blocks.push(b);
                    }
                },
            },
        );
        let http_policy = hooks
            .iter()
            .any(|s| s.hook().options.http.is_some())
            .then(|| http_policy(&candidates));
        Plan {
            hooks,
            http_policy,
            blocks,
        }
    }

    /// The explain door (`gate --explain`): the same selection over every declared
    /// config, trusted or not, telling `skipped` why each hook it passes over does not
    /// run. Runs nothing; like the real selection it stops a persistent process whose
    /// script changed since trusted.
    pub(crate) fn select_explained(
        &self,
        event: &EventPayload,
        ctx: &Context<'_>,
        skipped: &mut dyn FnMut(&LoadedConfig, usize, Skip),
    ) -> (Vec<Selected>, Vec<LoadedConfig>) {
        let candidates = self.candidates(|_| true);
        let selected = self.select_from(
            &candidates,
            event,
            ctx,
            &mut Observer {
                changed: &mut |_| {},
                problems: &mut |_| {},
                skipped,
                blocked: &mut |_| {},
            },
        );
        let configs = candidates.into_iter().map(|c| c.loaded).collect();
        (selected, configs)
    }

    /// Every declared config (trusted or not) with the Claude plugins trusted settings
    /// enable: what the Sources listing shows.
    pub(crate) fn all_configs(&self) -> Vec<LoadedConfig> {
        self.candidates(|_| true)
            .into_iter()
            .map(|c| c.loaded)
            .collect()
    }

    /// Claude's http hook policy as the trusted settings say now (a dry run's; an
    /// event's comes with its [`Plan`]).
    pub(crate) fn claude_http_policy(&self) -> crate::http::HttpPolicy {
        http_policy(&self.candidates(|loc| self.root_trusted(loc)))
    }

    /// The configs `allow` admits, loaded, with their trust decided once and the
    /// Claude plugins trusted settings enable.
    fn candidates(&self, allow: impl Fn(&ConfigLocation) -> bool) -> Vec<Candidate> {
        self.with_plugins(self.decide_trust(self.registry().load(allow)))
    }

    /// The trust of each config, decided once.
    fn decide_trust(&self, configs: Vec<LoadedConfig>) -> Vec<Candidate> {
        configs
            .into_iter()
            .map(|loaded| Candidate {
                trust: self.trust_state(&loaded),
                loaded,
            })
            .collect()
    }

    /// The hook files of the Claude plugins that trusted settings enable, appended as
    /// user configs (a plugin is trusted like the config that enabled it).
    fn with_plugins(&self, mut candidates: Vec<Candidate>) -> Vec<Candidate> {
        use crate::dialect::claude::plugin;
        let claude = |managed: bool| {
            candidates
                .iter()
                .filter(|c| c.trust == TrustState::Trusted)
                .filter(|c| c.loaded.location.dialect == Dialect::Claude)
                .filter(move |c| (c.loaded.location.scope == Scope::Managed) == managed)
                .map(|c| &c.loaded.config.enabled_plugins)
        };
        // Claude's managed settings win over every other file's `enabledPlugins`, and
        // a plugin they force on is managed: it runs under `allowManagedHooksOnly` and
        // nothing but the managed files turns it off.
        let ids = plugin::enabled(claude(false).chain(claude(true)));
        let forced = plugin::enabled(claude(true));
        if ids.is_empty() {
            return candidates;
        }
        let installed = plugin::install_paths(&self.config().home);
        let root = self.workspace_roots().first().map(PathBuf::as_path);
        for id in &ids {
            let Some(install) = installed.get(id) else {
                continue;
            };
            let Some(parsed) = self.plugins().get(id, install, root) else {
                continue;
            };
            candidates.push(Candidate {
                loaded: LoadedConfig {
                    location: ConfigLocation {
                        path: install.join("hooks").join("hooks.json"),
                        dialect: Dialect::Claude,
                        scope: if forced.contains(id) {
                            Scope::Managed
                        } else {
                            Scope::User
                        },
                        root: None,
                    },
                    config: parsed,
                    exists: true,
                    hash: None,
                },
                trust: TrustState::Trusted,
            });
        }
        candidates
    }

    /// The selection itself.
    fn select_from(
        &self,
        candidates: &[Candidate],
        event: &EventPayload,
        ctx: &Context<'_>,
        observer: &mut Observer<'_>,
    ) -> Vec<Selected> {
        let mut out = Vec::new();
        let switches = switches_of(candidates);
        // Managed hooks answer only to the managed layers' own switches: a user's or
        // project's `disableAllHooks`, `hooksConfig` or `[features]` cannot turn them
        // off (the vendors' rule for their managed hooks, and ours).
        let managed_switches = Switches::of(
            candidates
                .iter()
                .filter(|c| c.trust == TrustState::Trusted)
                .filter(|c| c.loaded.location.scope == Scope::Managed)
                .map(|c| layer(&c.loaded)),
        );
        let claude_managed_off = self.managed().claude.hooks_off;
        // Hooks a vendor runs once per event, whatever the layer, by (dialect, key).
        let mut seen: HashSet<(Dialect, String)> = HashSet::new();
        for Candidate { loaded, trust } in candidates {
            if let Some(why) = self.managed_only_of(&loaded.location) {
                for index in 0..loaded.config.hooks.len() {
                    (observer.skipped)(loaded, index, Skip::ManagedOnly(why.clone()));
                }
                continue;
            }
            // A gate this file's hooks would have judged: every tool gate and
            // permission request (what a changed or unread file declared is unknown),
            // and any other gated event its current hooks declare.
            let would_judge = |loaded: &LoadedConfig| {
                event.event().is_gated()
                    && (matches!(
                        event.event(),
                        crate::event::CanonicalEvent::ToolGate
                            | crate::event::CanonicalEvent::PermissionRequest
                    ) || loaded
                        .config
                        .hooks
                        .iter()
                        .any(|h| h.canonical == Some(event.event())))
            };
            if *trust != TrustState::Trusted {
                if loaded.exists {
                    (observer.changed)(&loaded.location.path);
                }
                if *trust == TrustState::Changed && loaded.exists && would_judge(loaded) {
                    (observer.blocked)(Block {
                        file: loaded.location.path.clone(),
                        config: loaded.location.path.clone(),
                        scope: loaded.location.scope,
                        why: BlockWhy::Changed,
                    });
                }
                for index in 0..loaded.config.hooks.len() {
                    (observer.skipped)(loaded, index, Skip::Trust(*trust));
                }
                continue;
            }
            for w in &loaded.config.warnings {
                (observer.problems)(w);
            }
            if let Some(refusal) = &loaded.config.refused
                && would_judge(loaded)
            {
                (observer.blocked)(Block {
                    file: loaded.location.path.clone(),
                    config: loaded.location.path.clone(),
                    scope: loaded.location.scope,
                    why: BlockWhy::Refused(refusal.clone()),
                });
            }
            for (index, hook) in loaded.config.hooks.iter().enumerate() {
                let extra = loaded.config.extra(index);
                let in_force = if loaded.location.scope == Scope::Managed {
                    &managed_switches
                } else {
                    &switches
                };
                // Claude's managed `disableAllHooks` wins over any other file's value.
                let admission = if claude_managed_off && hook.dialect == Dialect::Claude {
                    Admission::AllOff
                } else {
                    crate::dialect::admit(in_force, hook, extra, event, ctx)
                };
                let skip = match admission {
                    Admission::AllOff => Some(Skip::ClaudeDisabled),
                    Admission::OtherEvent => Some(Skip::OtherEvent),
                    Admission::Switched(why) => Some(Skip::Switched(why)),
                    Admission::NotApplicable => Some(Skip::NotApplicable),
                    Admission::Fires { dedup } => {
                        if let Some(bad) = self.changed_script(hook) {
                            (observer.changed)(&bad);
                            if event.event().is_gated() {
                                (observer.blocked)(Block {
                                    file: bad.clone(),
                                    config: loaded.location.path.clone(),
                                    scope: loaded.location.scope,
                                    why: BlockWhy::Changed,
                                });
                            }
                            Some(Skip::ScriptChanged(bad))
                        } else if let Some(key) = dedup
                            && !seen.insert((hook.dialect, key))
                        {
                            Some(Skip::Duplicate)
                        } else {
                            None
                        }
                    }
                };
                match skip {
                    Some(skip) => (observer.skipped)(loaded, index, skip),
                    None => out.push(Selected {
                        config: Arc::clone(&loaded.config),
                        index,
                    }),
                }
            }
        }
        out
    }

    /// The first workspace script a project hook runs that changed since trusted; a
    /// running persistent process of the hook is stopped so it cannot serve it either.
    fn changed_script(&self, hook: &crate::dialect::HookSpec) -> Option<PathBuf> {
        if hook.scope != Scope::Project {
            return None;
        }
        let bad = self
            .hook_scripts(hook)
            .into_iter()
            .find(|s| s.state == ScriptState::Changed)?;
        if hook.options.persistent.is_some() {
            self.persistent_pool()
                .stop_entry(&hook.source, &hook.event, hook.entry);
        }
        Some(bad.path)
    }

    /// Stops every persistent process whose hook entry is gone from the trusted
    /// configs just loaded (its config was edited, or its root is no longer trusted):
    /// a config edit reaches a running process at the next event, whatever its event.
    /// Free when no persistent hook was ever started.
    fn stop_unselected_persistent(&self, candidates: &[Candidate]) {
        let pool = self.persistent_pool();
        if pool.is_empty() {
            return;
        }
        let live: HashSet<(&Path, &str, usize, &str)> = candidates
            .iter()
            .filter(|c| c.trust == TrustState::Trusted)
            .flat_map(|c| c.loaded.config.hooks.iter())
            .filter(|h| h.options.persistent.is_some())
            .map(|h| {
                (
                    h.source.as_path(),
                    h.event.as_str(),
                    h.entry,
                    h.command.as_str(),
                )
            })
            .collect();
        pool.stop_unless(
            |k| {
                live.contains(&(
                    k.source.as_path(),
                    k.event.as_str(),
                    k.entry,
                    k.command.as_str(),
                ))
            },
            "its entry is no longer selected (the config changed or is no longer trusted)",
        );
    }
}

/// The dialect-wide switches of the trusted candidates.
fn switches_of(candidates: &[Candidate]) -> Switches {
    Switches::of(
        candidates
            .iter()
            .filter(|c| c.trust == TrustState::Trusted)
            .map(|c| layer(&c.loaded)),
    )
}

/// The dialect-wide switches of the trusted configs among `configs` (the Sources
/// listing and `gate --explain`).
pub(crate) fn switches_of_trusted(engine: &Engine, configs: &[LoadedConfig]) -> Switches {
    Switches::of(
        configs
            .iter()
            .filter(|l| engine.trust_state(l) == TrustState::Trusted)
            .map(layer),
    )
}

fn layer(l: &LoadedConfig) -> Layer<'_> {
    Layer {
        dialect: l.location.dialect,
        scope: l.location.scope,
        path: &l.location.path,
        exists: l.exists,
        config: &l.config,
    }
}

/// Claude's http hook policy over the trusted Claude settings files.
fn http_policy(candidates: &[Candidate]) -> crate::http::HttpPolicy {
    crate::http::HttpPolicy::merge(
        candidates
            .iter()
            .filter(|c| c.trust == TrustState::Trusted)
            .filter(|c| c.loaded.location.dialect == Dialect::Claude)
            .map(|c| &c.loaded.config.http_policy),
    )
}
