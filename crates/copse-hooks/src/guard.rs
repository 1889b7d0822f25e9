//! The built-in guard: what an agent must never do, refused in-process on every tool
//! gate, before the user's hooks and again on the final (rewritten) input.
//!
//! A call is turned into effects ([`effects`]) — through the shell ([`shell`]),
//! interpreter one-liners ([`code`]), file tools and MCP arguments — and the effects
//! are judged by rules ([`rules`]): the built-in packs, the user's
//! `$COPSE_DIR/guard.toml` (adds rules, may switch a default off by id), a trusted
//! workspace's pinned `.copse/guard.toml` (may only add `deny`/`ask` rules) and the
//! managed `/etc/copse-hooks/guard.toml` (rules nobody below can switch off, enforced
//! in every mode). A policy file that is unreadable, invalid, untrusted-but-pinned or
//! changed since trusted makes the guard refuse every gated call with the reason:
//! never a silent allow.
//!
//! Modes: `enforce` (the default once hooks are enabled), `observe` (the would-be
//! verdict is recorded and the call allowed; managed rules still enforce) and `off`.

mod code;
mod effects;
mod glob;
mod paths;
mod rules;
mod shell;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::outcome::Decision;
pub(crate) use paths::Paths;
use rules::{Origin, PolicyFile, Rule};

/// How the guard acts on what its rules match.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum GuardMode {
    /// Refuse (deny) or ask as the rules say.
    #[default]
    Enforce,
    /// Record the would-be verdict, allow the call (managed rules still enforce).
    Observe,
    /// Evaluate only the managed rules.
    Off,
}

impl GuardMode {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            GuardMode::Enforce => "enforce",
            GuardMode::Observe => "observe",
            GuardMode::Off => "off",
        }
    }

    /// Parses `enforce`, `observe` or `off`.
    pub fn parse(s: &str) -> Option<GuardMode> {
        match s {
            "enforce" => Some(GuardMode::Enforce),
            "observe" => Some(GuardMode::Observe),
            "off" => Some(GuardMode::Off),
            _ => None,
        }
    }
}

/// One rule that matched a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GuardHit {
    /// The rule's id (`destructive.home`).
    pub rule: String,
    /// Its category (its pack).
    pub category: String,
    /// `deny` or `ask`.
    pub action: Decision,
    /// What the agent is told.
    pub message: String,
    /// What the user is told.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_message: Option<String>,
    /// The normalised command or path it matched.
    pub matched: String,
    /// `builtin`, `user`, `project` or `managed`.
    pub origin: &'static str,
    /// Whether it changes the verdict (not in observe mode, unless managed).
    pub enforced: bool,
}

/// The guard's judgement of one call.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GuardVerdict {
    /// The mode it was judged in.
    pub mode: GuardMode,
    /// The decision it enforces (`None`: it does not object).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// What it would decide in enforce mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would: Option<Decision>,
    /// The strictest matching rule (the one the verdict reports).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit: Option<GuardHit>,
    /// Every matching rule, strictest first.
    pub hits: Vec<GuardHit>,
    /// Set when the policy itself is broken: every call is refused with this reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broken: Option<String>,
    /// The simple commands the call would run, normalised.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// The files the call writes (normalised): what a session remembers, so that
    /// running one of them later is judged ([`Guard::evaluate_in`]).
    #[serde(skip)]
    pub wrote: Vec<String>,
}

/// The state of one policy file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "state")]
pub enum PolicyState {
    /// Read; this many rules (and switched-off ids).
    Loaded { rules: usize, disabled: Vec<String> },
    /// Not there.
    Absent,
    /// In a workspace that is not trusted: not applied.
    Untrusted,
    /// Refused (unreadable, invalid, insecure, changed since trusted): every gated
    /// call is refused until it is fixed.
    Refused { reason: String },
}

/// One policy file the guard considered.
#[derive(Debug, Clone, Serialize)]
pub struct PolicySource {
    /// `user`, `project` or `managed`.
    pub origin: &'static str,
    pub path: PathBuf,
    #[serde(flatten)]
    pub state: PolicyState,
}

/// Where the guard's policy files are and what may apply.
#[derive(Debug, Clone)]
pub(crate) struct GuardSources {
    pub mode: GuardMode,
    pub copse_dir: PathBuf,
    pub managed_dir: PathBuf,
    /// Whether the managed directory may be trusted (root-owned, as the managed layer
    /// checks it).
    pub managed_checked: bool,
    /// Workspace roots with their trust: `None` untrusted, `Some(None)` trusted
    /// unpinned, `Some(Some(pins))` pinned.
    pub roots: Vec<(PathBuf, RootTrust)>,
    pub home: PathBuf,
}

/// A workspace root's trust as the guard sees it: `None` untrusted, `Some(None)`
/// trusted unpinned, `Some(Some(pins))` pinned (file → hash, `None` absent).
pub(crate) type RootTrust = Option<Option<std::collections::BTreeMap<PathBuf, Option<String>>>>;

/// The loaded guard.
#[derive(Debug)]
pub struct Guard {
    mode: GuardMode,
    rules: Vec<Arc<Rule>>,
    sources: Vec<PolicySource>,
    broken: Option<String>,
    paths: Paths,
    home: String,
    copse_dir: String,
    roots: Vec<String>,
    disabled: Vec<String>,
    sources_spec: GuardSources,
}

/// The built-in rules, compiled once per process.
fn builtin() -> &'static Result<Vec<Arc<Rule>>, String> {
    static BUILTIN: OnceLock<Result<Vec<Arc<Rule>>, String>> = OnceLock::new();
    BUILTIN.get_or_init(|| {
        rules::builtin()
            .map(|r| r.into_iter().map(Arc::new).collect())
            .map_err(|(pack, e)| format!("built-in pack `{pack}`: {e}"))
    })
}

/// The policy file name in each directory.
pub const POLICY_FILE: &str = "guard.toml";

impl Guard {
    /// Loads the policy files.
    pub(crate) fn load(src: &GuardSources) -> Guard {
        let mut broken = Vec::new();
        let mut rules: Vec<Arc<Rule>> = Vec::new();
        let mut sources = Vec::new();
        let mut disabled = Vec::new();
        let mut managed_rules = Vec::new();
        let mut user_rules = Vec::new();
        let mut project_rules = Vec::new();

        // Managed.
        let managed = src.managed_dir.join(POLICY_FILE);
        let state = match read_policy(&managed, Origin::Managed) {
            Ok(None) => PolicyState::Absent,
            Ok(Some(_)) if !src.managed_checked || !root_owned(&managed) => {
                let reason = "not owned by root or writable by others".to_string();
                broken.push(format!(
                    "managed guard policy {}: {reason}",
                    managed.display()
                ));
                PolicyState::Refused { reason }
            }
            Ok(Some((file, compiled))) => {
                let n = compiled.len();
                managed_rules = compiled;
                PolicyState::Loaded {
                    rules: n,
                    disabled: file.disable,
                }
            }
            Err(reason) => {
                broken.push(format!(
                    "managed guard policy {}: {reason}",
                    managed.display()
                ));
                PolicyState::Refused { reason }
            }
        };
        sources.push(PolicySource {
            origin: "managed",
            path: managed,
            state,
        });

        // User.
        let user = src.copse_dir.join(POLICY_FILE);
        let state = match read_policy(&user, Origin::User) {
            Ok(None) => PolicyState::Absent,
            Ok(Some((file, compiled))) => {
                let n = compiled.len();
                disabled.extend(file.disable.iter().cloned());
                user_rules = compiled;
                PolicyState::Loaded {
                    rules: n,
                    disabled: file.disable,
                }
            }
            Err(reason) => {
                broken.push(format!("guard policy {}: {reason}", user.display()));
                PolicyState::Refused { reason }
            }
        };
        sources.push(PolicySource {
            origin: "user",
            path: user,
            state,
        });

        // Projects.
        for (root, trust) in &src.roots {
            let path = root.join(".copse").join(POLICY_FILE);
            if !path.exists()
                && !matches!(trust, Some(Some(pins)) if pins.get(&path).is_some_and(Option::is_some))
            {
                continue;
            }
            let state = match trust {
                None => PolicyState::Untrusted,
                Some(pins) => {
                    let pinned_ok = match pins {
                        None => Ok(()),
                        Some(pins) => match (pins.get(&path), pin_of(&path)) {
                            (Some(want), Ok(have)) if *want == have => Ok(()),
                            (None, _) => Err(format!(
                                "added since the workspace was trusted; review it and run `copse-hooks trust {}`",
                                crate::notice::shell_quote(root)
                            )),
                            (_, Err(e)) => Err(format!("unreadable: {e}")),
                            (Some(_), Ok(_)) => Err(format!(
                                "changed since the workspace was trusted; review it and run `copse-hooks trust {}`",
                                crate::notice::shell_quote(root)
                            )),
                        },
                    };
                    match pinned_ok.and_then(|()| read_policy(&path, Origin::Project)) {
                        Ok(None) => PolicyState::Absent,
                        Ok(Some((file, compiled))) => {
                            if !file.disable.is_empty() {
                                let reason =
                                    "a project policy may not switch rules off (`disable`)"
                                        .to_string();
                                broken.push(format!("guard policy {}: {reason}", path.display()));
                                PolicyState::Refused { reason }
                            } else {
                                let n = compiled.len();
                                project_rules.extend(compiled);
                                PolicyState::Loaded {
                                    rules: n,
                                    disabled: Vec::new(),
                                }
                            }
                        }
                        Err(reason) => {
                            broken.push(format!("guard policy {}: {reason}", path.display()));
                            PolicyState::Refused { reason }
                        }
                    }
                }
            };
            sources.push(PolicySource {
                origin: "project",
                path,
                state,
            });
        }

        match builtin() {
            Ok(b) => {
                rules.extend(managed_rules.into_iter().map(Arc::new));
                rules.extend(b.iter().filter(|r| !disabled.contains(&r.id)).cloned());
                rules.extend(user_rules.into_iter().map(Arc::new));
                rules.extend(project_rules.into_iter().map(Arc::new));
            }
            Err(e) => broken.push(e.clone()),
        }
        let home = src.home.to_string_lossy().into_owned();
        let copse_dir = src.copse_dir.to_string_lossy().into_owned();
        let roots: Vec<String> = src
            .roots
            .iter()
            .map(|(r, _)| r.to_string_lossy().into_owned())
            .collect();
        let cwd = roots.first().cloned().unwrap_or_else(|| home.clone());
        Guard {
            mode: src.mode,
            rules,
            sources,
            broken: (!broken.is_empty()).then(|| broken.join("; ")),
            paths: Paths::new(&home, &cwd, &copse_dir, &roots),
            home,
            copse_dir,
            roots,
            disabled,
            sources_spec: src.clone(),
        }
    }

    /// This guard with `file` in place of the user's policy file, in enforce mode: what
    /// a proposed policy would decide (`audit replay --guard FILE`). An invalid file is
    /// an error, not a guard that refuses everything.
    pub fn with_proposed(&self, file: &Path) -> Result<Guard, String> {
        if let Err(e) = read_policy(file, Origin::User) {
            return Err(format!("{}: {e}", file.display()));
        }
        if !file.exists() {
            return Err(format!("{}: no such file", file.display()));
        }
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut spec = self.sources_spec.clone();
        spec.mode = GuardMode::Enforce;
        // The proposed file is read as the user's policy: from its own directory, under
        // the name the loader looks for.
        if file.file_name().and_then(|n| n.to_str()) == Some(POLICY_FILE) {
            spec.copse_dir = dir;
            return Ok(Guard::load(&spec));
        }
        let tmp = std::env::temp_dir().join(format!("copse-guard-proposed-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
        let target = tmp.join(POLICY_FILE);
        std::fs::copy(file, &target).map_err(|e| format!("{}: {e}", file.display()))?;
        spec.copse_dir = tmp.clone();
        let g = Guard::load(&spec);
        let _ = std::fs::remove_dir_all(&tmp);
        Ok(g)
    }

    /// The mode.
    pub fn mode(&self) -> GuardMode {
        self.mode
    }

    /// The policy files considered.
    pub fn sources(&self) -> &[PolicySource] {
        &self.sources
    }

    /// Why the policy is refused, if it is.
    pub fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    /// The ids the user switched off.
    pub fn disabled(&self) -> &[String] {
        &self.disabled
    }

    /// Every rule in force, in evaluation order.
    pub fn rules(&self) -> Vec<RuleInfo> {
        self.rules.iter().map(|r| RuleInfo::of(r)).collect()
    }

    /// Judges one tool call (canonical tool name and input).
    pub fn evaluate(&self, tool: &str, input: &Map<String, Value>) -> GuardVerdict {
        self.evaluate_in(tool, input, &std::collections::BTreeSet::new())
    }

    /// Judges one tool call of a session that has already written the files in
    /// `written` (normalised, as [`GuardVerdict::wrote`] gives them): a command that
    /// runs one of them has the `run-written` effect (the guard never saw what it does).
    pub fn evaluate_in(
        &self,
        tool: &str,
        input: &Map<String, Value>,
        written: &std::collections::BTreeSet<String>,
    ) -> GuardVerdict {
        let mut v = GuardVerdict {
            mode: self.mode,
            ..GuardVerdict::default()
        };
        if let Some(b) = &self.broken {
            v.broken = Some(b.clone());
            v.decision = Some(Decision::Deny);
            v.would = Some(Decision::Deny);
            return v;
        }
        let cwd = input
            .get("cwd")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty());
        let mut call = match cwd {
            Some(c) if c.starts_with('/') => {
                let p = Paths::new(&self.home, c, &self.copse_dir, &self.roots);
                effects::of_call(tool, input, &p)
            }
            _ => effects::of_call(tool, input, &self.paths),
        };
        let ran: Vec<String> = call
            .executed
            .iter()
            .filter(|p| written.contains(*p))
            .cloned()
            .collect();
        for p in ran {
            call.run_written(p);
        }
        v.wrote = call.written_paths();
        for rule in &self.rules {
            if self.mode == GuardMode::Off && rule.origin != Origin::Managed {
                continue;
            }
            if let Some(m) = rule.matches(tool, &call, &self.paths) {
                let enforced = self.mode == GuardMode::Enforce || rule.origin == Origin::Managed;
                v.hits.push(GuardHit {
                    rule: rule.id.clone(),
                    category: rule.category.clone(),
                    action: rule.action,
                    message: rule.message.clone(),
                    user_message: rule.user_message.clone(),
                    matched: m.subject,
                    origin: rule.origin.as_str(),
                    enforced,
                });
            }
        }
        // Strictest first; among equals, the first in evaluation order.
        v.hits
            .sort_by(|a, b| b.action.cmp(&a.action).then(b.enforced.cmp(&a.enforced)));
        v.would = v.hits.first().map(|h| h.action);
        v.decision = v.hits.iter().filter(|h| h.enforced).map(|h| h.action).max();
        v.hit = v
            .hits
            .iter()
            .find(|h| Some(h.action) == v.decision && h.enforced)
            .or(v.hits.first())
            .cloned();
        v.commands = call.lines;
        v
    }
}

/// The guard's judgement as a run of kind `guard`: no process; the call as its
/// stdin, the verdict as its stdout, the strictest rule as its command.
#[allow(clippy::too_many_arguments)] // the gate's facts, each a different type
pub(crate) fn run_of(
    v: &GuardVerdict,
    tool: &str,
    input: &Map<String, Value>,
    wire_event: &str,
    canonical: crate::event::CanonicalEvent,
    rewritten: bool,
    started: std::time::SystemTime,
    took: std::time::Duration,
) -> crate::outcome::HookRun {
    use crate::outcome::{GuardRun, HookRun, RunOutcome};
    let scope = match v.hit.as_ref().map(|h| h.origin) {
        Some("managed") => crate::scope::Scope::Managed,
        Some("project") => crate::scope::Scope::Project,
        _ => crate::scope::Scope::User,
    };
    let command = match &v.hit {
        Some(h) => format!("guard rule {}", h.rule),
        None => "guard".to_string(),
    };
    let origin = v.hit.as_ref().map_or("builtin", |h| h.origin);
    let mut run = HookRun::new(
        wire_event,
        canonical,
        crate::scope::Dialect::Copse,
        command,
        PathBuf::from(format!("<guard:{origin}>")),
        scope,
    );
    run.started_at = started;
    run.duration = took;
    run.stdin = serde_json::to_vec(&serde_json::json!({"tool_name": tool, "tool_input": input}))
        .unwrap_or_default();
    run.stdout = match serde_json::to_value(v) {
        Ok(Value::Object(mut m)) => {
            m.insert("rewritten".into(), Value::Bool(rewritten));
            serde_json::to_vec(&Value::Object(m)).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    run.outcome.decision = v.decision;
    if let Some(b) = &v.broken {
        run.outcome.agent_message = Some(format!(
            "Refused: the copse guard's policy is refused ({b}), so every tool call is blocked until it is fixed."
        ));
        run.outcome.user_message = Some(format!("copse guard: policy refused: {b}"));
    } else if let (Some(_), Some(h)) = (v.decision, &v.hit) {
        run.outcome.agent_message = Some(format!("{} (copse guard rule `{}`)", h.message, h.rule));
        run.outcome.user_message = h.user_message.clone();
    }
    run.result = match v.decision {
        Some(Decision::Deny) => RunOutcome::Deny,
        Some(Decision::Ask) => RunOutcome::Ask,
        _ => RunOutcome::Allow,
    };
    if v.decision.is_none()
        && let (Some(would), Some(h)) = (v.would, &v.hit)
    {
        run.warnings.push(format!(
            "{} mode: the guard would {} this call (rule `{}` matched `{}`); allowed",
            v.mode.as_str(),
            would.as_str(),
            h.rule,
            h.matched
        ));
    }
    run.guard = Some(GuardRun {
        mode: v.mode.as_str().to_string(),
        would: v.would,
        rule: v.hit.as_ref().map(|h| h.rule.clone()),
        category: v.hit.as_ref().map(|h| h.category.clone()),
        matched: v.hit.as_ref().map(|h| h.matched.clone()),
        rewritten,
        broken: v.broken.clone(),
        subsumed: false,
    });
    run
}

/// A rule as `guard list` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct RuleInfo {
    pub id: String,
    pub category: String,
    pub action: Decision,
    pub origin: &'static str,
    pub message: String,
}

impl RuleInfo {
    fn of(r: &Rule) -> RuleInfo {
        RuleInfo {
            id: r.id.clone(),
            category: r.category.clone(),
            action: r.action,
            origin: r.origin.as_str(),
            message: r.message.clone(),
        }
    }
}

/// The built-in packs' categories.
pub fn categories() -> &'static [&'static str] {
    rules::CATEGORIES
}

/// Reads and compiles one policy file: `Ok(None)` when absent.
fn read_policy(path: &Path, origin: Origin) -> Result<Option<(PolicyFile, Vec<Rule>)>, String> {
    let bytes = match crate::fsread::read_config(path, 1 << 20) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(format!("refused: {e}")),
    };
    let text = String::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())?;
    let file: PolicyFile =
        toml::from_str(&text).map_err(|e| format!("invalid TOML: {}", e.message()))?;
    if origin != Origin::User && !file.disable.is_empty() && origin == Origin::Project {
        return Ok(Some((file, Vec::new())));
    }
    let mut compiled = Vec::new();
    for spec in &file.rules {
        let rule = Rule::compile(spec, None, origin).map_err(|e| e.to_string())?;
        compiled.push(rule);
    }
    Ok(Some((file, compiled)))
}

/// The SHA-256 (hex) of a file as trust pins it (`None` when absent), computed here
/// so the guard does not depend on the settings (which name the guard's mode).
fn pin_of(path: &Path) -> Result<Option<String>, crate::fsread::ReadError> {
    use sha2::Digest as _;
    crate::fsread::read_optional(path, crate::fsread::MAX_CONFIG_BYTES).map(|bytes| {
        bytes.map(|b| {
            sha2::Sha256::digest(&b)
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect()
        })
    })
}

fn root_owned(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).is_ok_and(|m| m.uid() == 0 && m.mode() & 0o022 == 0)
}

#[cfg(test)]
mod tests;
