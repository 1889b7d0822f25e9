//! Rules as data: the TOML form of a rule, its compiled matcher, and the built-in
//! packs.
//!
//! A rule names what it refuses with matchers that all must hold:
//!
//! * `command = ["glob", …]`: a shell-style glob over each simple command the call
//!   would run, after normalisation (`rm -rf ~*`, `git push --force*`);
//! * `effect = ["delete", …]`: the kind of an effect (see [`super::effects::KINDS`]);
//! * `path = ["@home", "~/.ssh/**", …]`: the effect's path, by class or glob;
//! * `host = ["@ip", "*.example.com", …]`: the effect's network host;
//! * `carries = ["secret", "env", "file", "history", "data"]`: what a send carries
//!   (`data`: whatever an MCP tool is told to send, or a callback it is told to call);
//! * `detail = ["main", …]`: the effect's detail (a force push's branch, …);
//! * `tool = ["mcp__*__delete_*", …]`: the tool's canonical name;
//! * `unless_path`, `unless_host`, `unless_detail`, `unless_command`: exceptions.
//!
//! Everything is compiled once, when the policy is loaded: nothing is compiled per
//! call.

use serde::Deserialize;

use super::glob::Glob;

use super::effects::{CallEffects, Effect, Kind};
use super::paths::{CLASS_NAMES, Paths};
use crate::outcome::Decision;

/// The packs shipped in the binary, by category.
pub(crate) const PACKS: &[(&str, &str)] = &[
    ("destructive", include_str!("packs/destructive.toml")),
    ("exfiltration", include_str!("packs/exfiltration.toml")),
    ("secrets", include_str!("packs/secrets.toml")),
    ("persistence", include_str!("packs/persistence.toml")),
    ("supply-chain", include_str!("packs/supply-chain.toml")),
    ("obfuscation", include_str!("packs/obfuscation.toml")),
    (
        "self-protection",
        include_str!("packs/self-protection.toml"),
    ),
    ("mcp", include_str!("packs/mcp.toml")),
];

/// The categories, in the order the packs are listed.
pub(crate) const CATEGORIES: &[&str] = &[
    "destructive",
    "exfiltration",
    "secrets",
    "persistence",
    "supply-chain",
    "obfuscation",
    "self-protection",
    "mcp",
];

/// One policy file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyFile {
    /// Default rules switched off by id (only in the user's file).
    #[serde(default)]
    pub disable: Vec<String>,
    #[serde(default, rename = "rule")]
    pub rules: Vec<RuleSpec>,
}

/// One rule as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleSpec {
    pub id: String,
    #[serde(default)]
    pub category: Option<String>,
    pub action: String,
    pub message: String,
    #[serde(default)]
    pub user_message: Option<String>,
    #[serde(default)]
    pub command: Vec<String>,
    #[serde(default)]
    pub effect: Vec<String>,
    #[serde(default)]
    pub path: Vec<String>,
    #[serde(default)]
    pub host: Vec<String>,
    #[serde(default)]
    pub carries: Vec<String>,
    #[serde(default)]
    pub detail: Vec<String>,
    #[serde(default)]
    pub tool: Vec<String>,
    #[serde(default)]
    pub unless_path: Vec<String>,
    #[serde(default)]
    pub unless_host: Vec<String>,
    #[serde(default)]
    pub unless_detail: Vec<String>,
    #[serde(default)]
    pub unless_command: Vec<String>,
}

/// Where a rule comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Origin {
    /// A built-in pack.
    Builtin,
    /// `$COPSE_DIR/guard.toml`.
    User,
    /// `.copse/guard.toml` of a trusted workspace.
    Project,
    /// `/etc/copse-hooks/guard.toml`.
    Managed,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Builtin => "builtin",
            Origin::User => "user",
            Origin::Project => "project",
            Origin::Managed => "managed",
        }
    }
}

/// Why a rule does not compile.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RuleError {
    #[error("rule `{id}`: action must be `deny` or `ask`, not `{action}`")]
    Action { id: String, action: String },
    #[error("rule `{id}`: unknown effect `{effect}`")]
    Effect { id: String, effect: String },
    #[error("rule `{id}`: unknown path class `{class}`")]
    Class { id: String, class: String },
    #[error("rule `{id}`: unknown host class `{class}`")]
    HostClass { id: String, class: String },
    #[error("rule `{id}`: the glob `{glob}` {reason}")]
    Glob {
        id: String,
        glob: String,
        reason: String,
    },
    #[error("rule `{id}`: no matcher (give `command`, `effect`, `path`, `host` or `tool`)")]
    Empty { id: String },
    #[error("a rule has an empty id")]
    NoId,
    #[error("rule `{id}`: an empty message (say what was refused and what to do instead)")]
    NoMessage { id: String },
    #[error("rule `{id}`: `carries` names `{what}` (give secret, env, file, history or data)")]
    Carries { id: String, what: String },
}

/// A glob list over strings.
#[derive(Debug, Clone)]
struct Globs(Vec<Glob>);

impl Globs {
    fn new(id: &str, globs: &[String], separator: bool) -> Result<Option<Globs>, RuleError> {
        let mut out = Vec::new();
        for g in globs.iter().filter(|g| !g.starts_with('@')) {
            out.push(Glob::new(g, separator).map_err(|reason| RuleError::Glob {
                id: id.to_string(),
                glob: g.clone(),
                reason,
            })?);
        }
        Ok((!out.is_empty()).then_some(Globs(out)))
    }

    fn is_match(&self, s: &str) -> bool {
        self.0.iter().any(|g| g.is_match(s))
    }
}

/// A path or host matcher: classes and globs.
#[derive(Debug, Clone, Default)]
struct Place {
    classes: Vec<String>,
    globs: Option<Globs>,
}

impl Place {
    fn is_empty(&self) -> bool {
        self.classes.is_empty() && self.globs.is_none()
    }
}

/// The host classes rules may name.
pub(crate) const HOST_CLASSES: &[&str] = &["ip", "local", "metadata", "paste", "known", "any"];

/// A compiled rule.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    pub id: String,
    pub category: String,
    pub action: Decision,
    pub message: String,
    pub user_message: Option<String>,
    pub origin: Origin,
    command: Option<Globs>,
    unless_command: Option<Globs>,
    effect: Vec<Kind>,
    path: Place,
    unless_path: Place,
    host: Place,
    unless_host: Place,
    carries: Vec<String>,
    detail: Option<Globs>,
    unless_detail: Option<Globs>,
    tool: Option<Globs>,
}

/// What matched: the rule and the normalised subject.
#[derive(Debug, Clone)]
pub(crate) struct Matched {
    pub subject: String,
}

impl Rule {
    pub fn compile(spec: &RuleSpec, pack: Option<&str>, origin: Origin) -> Result<Rule, RuleError> {
        let id = spec.id.trim().to_string();
        if id.is_empty() {
            return Err(RuleError::NoId);
        }
        if spec.message.trim().is_empty() {
            return Err(RuleError::NoMessage { id });
        }
        let action = match spec.action.as_str() {
            "deny" => Decision::Deny,
            "ask" => Decision::Ask,
            other => {
                return Err(RuleError::Action {
                    id,
                    action: other.to_string(),
                });
            }
        };
        let effect = spec
            .effect
            .iter()
            .map(|e| {
                Kind::parse(e).ok_or_else(|| RuleError::Effect {
                    id: id.clone(),
                    effect: e.clone(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let place = |list: &[String], host: bool| -> Result<Place, RuleError> {
            let mut classes = Vec::new();
            for c in list.iter().filter_map(|g| g.strip_prefix('@')) {
                let known = if host {
                    HOST_CLASSES.contains(&c)
                } else {
                    CLASS_NAMES.contains(&c)
                };
                if !known {
                    return Err(if host {
                        RuleError::HostClass {
                            id: id.clone(),
                            class: c.to_string(),
                        }
                    } else {
                        RuleError::Class {
                            id: id.clone(),
                            class: c.to_string(),
                        }
                    });
                }
                classes.push(c.to_string());
            }
            Ok(Place {
                classes,
                globs: Globs::new(&id, list, !host)?,
            })
        };
        for c in &spec.carries {
            if !matches!(c.as_str(), "secret" | "env" | "file" | "history" | "data") {
                return Err(RuleError::Carries {
                    id,
                    what: c.clone(),
                });
            }
        }
        let rule = Rule {
            category: spec
                .category
                .clone()
                .or_else(|| pack.map(str::to_string))
                .unwrap_or_else(|| id.split('.').next().unwrap_or("custom").to_string()),
            action,
            message: spec.message.trim().to_string(),
            user_message: spec.user_message.clone().filter(|m| !m.trim().is_empty()),
            origin,
            command: Globs::new(&id, &spec.command, false)?,
            unless_command: Globs::new(&id, &spec.unless_command, false)?,
            effect,
            path: place(&spec.path, false)?,
            unless_path: place(&spec.unless_path, false)?,
            host: place(&spec.host, true)?,
            unless_host: place(&spec.unless_host, true)?,
            carries: spec.carries.clone(),
            detail: Globs::new(&id, &spec.detail, false)?,
            unless_detail: Globs::new(&id, &spec.unless_detail, false)?,
            tool: Globs::new(&id, &spec.tool, false)?,
            id,
        };
        if rule.command.is_none()
            && rule.effect.is_empty()
            && rule.path.is_empty()
            && rule.host.is_empty()
            && rule.tool.is_none()
        {
            return Err(RuleError::Empty { id: rule.id });
        }
        Ok(rule)
    }

    fn effect_based(&self) -> bool {
        !self.effect.is_empty()
            || !self.path.is_empty()
            || !self.host.is_empty()
            || !self.carries.is_empty()
            || self.detail.is_some()
    }

    /// Whether the rule holds for a call; what it matched.
    pub fn matches(&self, tool: &str, call: &CallEffects, paths: &Paths) -> Option<Matched> {
        if let Some(t) = &self.tool
            && !t.is_match(tool)
        {
            return None;
        }
        let mut subject = None;
        if let Some(c) = &self.command {
            let line = call.lines.iter().find(|l| {
                c.is_match(l) && !self.unless_command.as_ref().is_some_and(|u| u.is_match(l))
            })?;
            subject = Some(line.clone());
        }
        if self.effect_based() {
            let e = call
                .effects
                .iter()
                .find(|e| self.effect_matches(e, paths))?;
            subject = Some(match &e.path {
                Some(p) if !e.subject.contains(p.as_str()) => format!("{} ({p})", e.subject),
                _ => e.subject.clone(),
            });
        }
        Some(Matched {
            subject: subject.unwrap_or_else(|| tool.to_string()),
        })
    }

    fn effect_matches(&self, e: &Effect, paths: &Paths) -> bool {
        if !self.effect.is_empty() && !self.effect.contains(&e.kind) {
            return false;
        }
        if !self.path.is_empty() {
            let Some(p) = &e.path else {
                return false;
            };
            if !path_in(&self.path, p, paths) {
                return false;
            }
        }
        if !self.unless_path.is_empty()
            && let Some(p) = &e.path
            && path_in(&self.unless_path, p, paths)
        {
            return false;
        }
        if !self.host.is_empty() {
            let Some(h) = &e.host else {
                return false;
            };
            if !host_in(&self.host, h) {
                return false;
            }
        }
        if !self.unless_host.is_empty()
            && let Some(h) = &e.host
            && host_in(&self.unless_host, h)
        {
            return false;
        }
        if !self.carries.is_empty() && !self.carries.iter().any(|c| e.carries.contains(c.as_str()))
        {
            return false;
        }
        if let Some(d) = &self.detail
            && !d.is_match(&e.detail)
        {
            return false;
        }
        if let Some(d) = &self.unless_detail
            && d.is_match(&e.detail)
        {
            return false;
        }
        true
    }
}

fn path_in(place: &Place, path: &str, paths: &Paths) -> bool {
    if !place.classes.is_empty() {
        let classes = paths.classes(path);
        if place.classes.iter().any(|c| classes.has(c) == Some(true)) {
            return true;
        }
    }
    place.globs.as_ref().is_some_and(|g| g.is_match(path))
}

fn host_in(place: &Place, host: &str) -> bool {
    place.classes.iter().any(|c| host_class(c, host))
        || place.globs.as_ref().is_some_and(|g| g.is_match(host))
}

/// Whether `host` is in the host class `class`.
pub(crate) fn host_class(class: &str, host: &str) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    match class {
        "any" => true,
        "metadata" => matches!(
            h.as_str(),
            "169.254.169.254"
                | "metadata.google.internal"
                | "metadata"
                | "100.100.100.200"
                | "fd00:ec2::254"
                | "169.254.170.2"
                | "metadata.azure.com"
        ),
        "local" => {
            if host_class("metadata", &h) {
                return false;
            }
            h == "localhost"
                || h.ends_with(".localhost")
                || h == "::1"
                || h == "0.0.0.0"
                || h.ends_with(".local")
                || h.ends_with(".internal")
                || h.ends_with(".test")
                || h.ends_with(".lan")
                || match ipv4(&h) {
                    Some([a, b, _, _]) => {
                        a == 127
                            || a == 10
                            || (a == 192 && b == 168)
                            || (a == 172 && (16..32).contains(&b))
                    }
                    None => !h.contains('.') && !h.contains(':') && !h.is_empty(),
                }
        }
        "ip" => {
            ipv4(&h).is_some_and(|_| !host_class("local", &h) && !host_class("metadata", &h))
                || h.contains(':') && !h.starts_with("fd") && h != "::1"
        }
        "paste" => PASTE
            .iter()
            .any(|p| h == *p || h.ends_with(&format!(".{p}"))),
        "known" => KNOWN
            .iter()
            .any(|p| h == *p || h.ends_with(&format!(".{p}"))),
        _ => false,
    }
}

fn ipv4(h: &str) -> Option<[u8; 4]> {
    let parts: Vec<u8> = h
        .split('.')
        .map(|p| p.parse::<u8>())
        .collect::<Result<_, _>>()
        .ok()?;
    <[u8; 4]>::try_from(parts).ok()
}

/// Services that take anonymous uploads or record requests: where stolen data goes.
const PASTE: &[&str] = &[
    "pastebin.com",
    "paste.ee",
    "hastebin.com",
    "ghostbin.co",
    "termbin.com",
    "ix.io",
    "sprunge.us",
    "transfer.sh",
    "file.io",
    "0x0.st",
    "catbox.moe",
    "webhook.site",
    "requestbin.com",
    "requestbin.net",
    "pipedream.net",
    "pipedream.com",
    "beeceptor.com",
    "hookbin.com",
    "ngrok.io",
    "ngrok-free.app",
    "ngrok.app",
    "trycloudflare.com",
    "serveo.net",
    "localtunnel.me",
    "loca.lt",
    "interact.sh",
    "oast.fun",
    "oast.pro",
    "oast.live",
    "oast.site",
    "oast.online",
    "oast.me",
    "burpcollaborator.net",
    "canarytokens.com",
    "dnslog.cn",
    "ceye.io",
    "requestcatcher.com",
    "postb.in",
    "ptpb.pw",
    "dpaste.com",
    "dpaste.org",
    "pastes.io",
    "rentry.co",
    "bashupload.com",
    "temp.sh",
    "gofile.io",
    "anonfiles.com",
    "send.vis.ee",
    "wetransfer.com",
    "discord.com",
    "discordapp.com",
    "telegram.org",
    "api.telegram.org",
];

/// Hosts of everyday development traffic.
const KNOWN: &[&str] = &[
    "github.com",
    "api.github.com",
    "gitlab.com",
    "bitbucket.org",
    "npmjs.org",
    "npmjs.com",
    "yarnpkg.com",
    "pypi.org",
    "pythonhosted.org",
    "crates.io",
    "docs.rs",
    "rust-lang.org",
    "golang.org",
    "go.dev",
    "nodejs.org",
    "python.org",
    "rubygems.org",
    "maven.org",
    "apache.org",
    "nuget.org",
    "docker.com",
    "docker.io",
    "gcr.io",
    "ghcr.io",
    "quay.io",
    "mozilla.org",
    "developer.mozilla.org",
    "stackoverflow.com",
    "wikipedia.org",
    "googleapis.com",
    "amazonaws.com",
    "microsoft.com",
    "azure.com",
    "cloudflare.com",
    "sqlite.org",
    "kernel.org",
    "debian.org",
    "ubuntu.com",
    "archlinux.org",
    "example.com",
    "open-meteo.com",
    "jsdelivr.net",
    "unpkg.com",
];

/// The built-in rules, compiled.
pub(crate) fn builtin() -> Result<Vec<Rule>, (String, RuleError)> {
    let mut out = Vec::new();
    for (pack, text) in PACKS {
        let file: PolicyFile = toml::from_str(text).map_err(|e| {
            (
                (*pack).to_string(),
                RuleError::Empty {
                    id: format!("pack {pack} does not parse: {e}"),
                },
            )
        })?;
        for spec in &file.rules {
            out.push(
                Rule::compile(spec, Some(pack), Origin::Builtin)
                    .map_err(|e| ((*pack).to_string(), e))?,
            );
        }
    }
    Ok(out)
}
