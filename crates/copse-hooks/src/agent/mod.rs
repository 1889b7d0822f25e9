//! The agent boundary: one agent's hook payload in, that agent's answer out.
//!
//! This is the inverse of a dialect. A dialect turns a canonical event into the stdin
//! a vendor's hook expects and reads that hook's answer; an agent boundary reads the
//! stdin the vendor's agent sends to *us* (the `copse-hooks shim` command registered
//! as one of its hooks), turns it into a canonical event, and writes the merged
//! verdict back in exactly the form that agent honours for that event.
//!
//! One file per agent: [`claude`], [`gemini`], [`codex`], [`cursor`], [`copilot`]. Reading never
//! fails on an event we do not serve (the answer is "nothing to say"), and every
//! gated event has a block answer the shim falls back to on any internal error, so a
//! failure of ours never becomes the agent's fail-open.

pub mod claude;
pub mod codex;
pub mod copilot;
pub mod cursor;
pub mod gemini;
pub mod shim;
pub mod state;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::dialect::{Dialect, Scope};
use crate::discovery::ConfigLocation;
use crate::event::{CanonicalEvent, EventPayload, ToolCall};
use crate::outcome::{Decision, Verdict};

/// An agent that can call `copse-hooks shim`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Agent {
    /// Claude Code.
    Claude,
    /// Gemini CLI.
    Gemini,
    /// OpenAI Codex CLI.
    Codex,
    /// Cursor.
    Cursor,
    /// GitHub Copilot CLI.
    Copilot,
}

impl Agent {
    /// Every agent, in a stable order.
    pub const ALL: [Agent; 5] = [
        Agent::Claude,
        Agent::Gemini,
        Agent::Codex,
        Agent::Cursor,
        Agent::Copilot,
    ];

    /// The lowercase name (`--agent NAME`).
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Gemini => "gemini",
            Agent::Codex => "codex",
            Agent::Cursor => "cursor",
            Agent::Copilot => "copilot",
        }
    }

    /// Parses a lowercase name.
    pub fn parse(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.as_str() == name)
    }

    /// The dialect that runs this agent's adopted hooks (its own).
    pub fn adopted_dialect(self) -> Dialect {
        match self {
            Agent::Claude => Dialect::Claude,
            Agent::Codex => Dialect::Codex,
            Agent::Cursor => Dialect::Cursor,
            Agent::Gemini => Dialect::Gemini,
            Agent::Copilot => Dialect::Copilot,
        }
    }

    /// The wire events the shim serves for this agent (what `install` registers).
    pub fn served_events(self) -> &'static [&'static str] {
        match self {
            Agent::Claude => claude::SERVED_EVENTS,
            Agent::Gemini => gemini::SERVED_EVENTS,
            Agent::Codex => codex::SERVED_EVENTS,
            Agent::Cursor => cursor::SERVED_EVENTS,
            Agent::Copilot => copilot::SERVED_EVENTS,
        }
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a payload could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PayloadError {
    /// stdin is not JSON.
    #[error("the payload is not JSON: {0}")]
    NotJson(serde_json::Error),
    /// stdin is JSON but not an object.
    #[error("the payload is not a JSON object")]
    NotObject,
    /// The object has no `hook_event_name`.
    #[error("the payload has no hook_event_name")]
    NoEvent,
    /// A field the event needs is missing or has the wrong type.
    #[error("the {event} payload has no usable `{field}`")]
    Field {
        /// The wire event.
        event: String,
        /// The field.
        field: &'static str,
    },
    /// A field of a gated event has a shape we cannot map (a `tool_input` that is a
    /// string, a shell `command` that is an array, …): the call is blocked rather
    /// than served with an input no hook would recognise.
    #[error("the {event} payload's `{field}` {problem}")]
    Malformed {
        /// The wire event.
        event: String,
        /// The field, as the agent names it (`tool_input.command`).
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The event belongs to another agent's hook protocol: the shim is registered in
    /// the wrong agent (`shim --agent gemini` in Claude Code's settings, …).
    #[error(
        "`{event}` is a {protocol} hook event, not a {agent} one: this `copse-hooks shim --agent {agent}` is registered in the wrong agent (run `copse-hooks install --agent {protocol}`)"
    )]
    ForeignEvent {
        /// The wire event.
        event: String,
        /// The agent the shim was started for.
        agent: &'static str,
        /// The agent whose protocol the event belongs to.
        protocol: &'static str,
    },
}

/// One agent payload, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Inbound {
    /// The agent's event name (`PreToolUse`, `BeforeTool`, `beforeShellExecution`, …).
    pub wire_event: String,
    /// The canonical event and its payload; `None` for an event the shim does not
    /// serve (it answers nothing).
    pub event: Option<EventPayload>,
    /// The agent's session id (empty when it sent none).
    pub session_id: String,
    /// The agent's turn id, when it sends one.
    pub generation_id: Option<String>,
    /// The payload's `cwd`.
    pub cwd: Option<PathBuf>,
    /// The payload's `workspace_roots` (Cursor).
    pub workspace_roots: Vec<PathBuf>,
    /// The agent says this stop comes from a continuation we asked for.
    pub stop_hook_active: bool,
    /// The agent's own tool name and input keys, for a tool event (an input rewrite
    /// is answered in them).
    pub tool: InboundTool,
}

/// A tool event's tool as the agent named it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InboundTool {
    /// The agent's tool name (`run_shell_command`, `Bash`, …); empty for other events.
    pub name: String,
    /// The input keys renamed to canonical ones, as (the agent's, the canonical).
    pub renames: Vec<(&'static str, &'static str)>,
    /// The shell command came as an argv array.
    pub argv: bool,
}

/// What the shim writes back: stdout, stderr and the exit code.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answer {
    /// The JSON (or nothing) for stdout.
    pub stdout: String,
    /// Text for stderr.
    pub stderr: String,
    /// The exit code.
    pub exit_code: i32,
}

impl Answer {
    /// Exit 0, nothing to say.
    pub fn nothing() -> Answer {
        Answer::default()
    }

    /// Exit 0 with a JSON object on stdout (nothing when the object is empty).
    pub fn json(obj: Map<String, Value>) -> Answer {
        if obj.is_empty() {
            return Answer::nothing();
        }
        Answer {
            stdout: format!("{}\n", Value::Object(obj)),
            ..Answer::default()
        }
    }

    /// Exit 2 with the reason on stderr: a block in every agent.
    pub fn block(reason: &str) -> Answer {
        Answer {
            stdout: String::new(),
            stderr: format!("{reason}\n"),
            exit_code: 2,
        }
    }
}

/// What the engine decided, plus what the session hands back at a stop.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// The merged verdict (empty for observation events with nothing to say).
    pub verdict: Verdict,
    /// Follow-ups to hand back as the agent's own "continue" answer (stop events).
    pub followups: Vec<String>,
    /// One-time notices for the user.
    pub notices: Vec<String>,
}

/// Reads an agent's payload.
pub fn read(agent: Agent, payload: &[u8]) -> Result<Inbound, PayloadError> {
    let value: Value = serde_json::from_slice(payload).map_err(PayloadError::NotJson)?;
    let Value::Object(obj) = value else {
        return Err(PayloadError::NotObject);
    };
    let wire = obj
        .get("hook_event_name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| match agent {
            // Copilot's payloads never name their event: the entry's variable does.
            Agent::Copilot => PayloadError::Malformed {
                event: "Copilot".into(),
                field: copilot::EVENT_VAR.into(),
                problem: "is not set: the hook entry must name its event (run `copse-hooks install --agent copilot` again)".into(),
            },
            _ => PayloadError::NoEvent,
        })?
        .to_string();
    if let Some((home, _)) = foreign_protocol(agent, &wire) {
        return Err(PayloadError::ForeignEvent {
            event: wire,
            agent: agent.as_str(),
            protocol: home.as_str(),
        });
    }
    let event = match agent {
        Agent::Claude => claude::event(&wire, &obj)?,
        Agent::Gemini => gemini::event(&wire, &obj)?,
        Agent::Codex => codex::event(&wire, &obj)?,
        Agent::Cursor => cursor::event(&wire, &obj)?,
        Agent::Copilot => copilot::event(&wire, &obj)?,
    };
    let text = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
    let session_id = match agent {
        Agent::Cursor => text("conversation_id").or_else(|| text("session_id")),
        Agent::Copilot => text("sessionId"),
        _ => text("session_id"),
    }
    .unwrap_or_default();
    let generation_id = match agent {
        Agent::Claude => text("prompt_id"),
        Agent::Codex => text("turn_id"),
        Agent::Cursor => text("generation_id"),
        Agent::Gemini | Agent::Copilot => None,
    }
    .filter(|s| !s.is_empty());
    let workspace_roots = obj
        .get("workspace_roots")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default();
    Ok(Inbound {
        wire_event: wire,
        event,
        session_id,
        generation_id,
        cwd: text("cwd").filter(|s| !s.is_empty()).map(PathBuf::from),
        workspace_roots,
        stop_hook_active: obj.get("stop_hook_active") == Some(&Value::Bool(true)),
        tool: inbound_tool(agent, &obj),
    })
}

/// The tool of a Claude-shaped tool event as the agent named it (other agents answer
/// rewrites through their own tables).
fn inbound_tool(agent: Agent, obj: &Map<String, Value>) -> InboundTool {
    let Some(name) = obj.get("tool_name").and_then(Value::as_str) else {
        return InboundTool::default();
    };
    if !matches!(agent, Agent::Claude | Agent::Codex) {
        return InboundTool {
            name: name.to_string(),
            ..InboundTool::default()
        };
    }
    let Some(input) = obj.get("tool_input").and_then(Value::as_object) else {
        return InboundTool {
            name: name.to_string(),
            ..InboundTool::default()
        };
    };
    InboundTool {
        name: name.to_string(),
        renames: claude::renames_applied(name, input),
        argv: input.get("command").is_some_and(Value::is_array),
    }
}

/// Writes the reply in the agent's format for this event. Every hook-derived text
/// is escaped first ([`escape_text`]): an agent shows these to the user (or the
/// model) as they are.
pub fn answer(agent: Agent, inbound: &Inbound, reply: &Reply) -> Answer {
    let Some(event) = &inbound.event else {
        return Answer::nothing();
    };
    let cleaned;
    let reply = if needs_escaping(reply) {
        cleaned = escaped(reply);
        &cleaned
    } else {
        reply
    };
    match agent {
        Agent::Claude => claude::answer(&inbound.wire_event, &inbound.tool, event, reply),
        Agent::Gemini => gemini::answer(&inbound.wire_event, event, reply),
        Agent::Codex => codex::answer(&inbound.wire_event, event, reply),
        Agent::Cursor => cursor::answer(&inbound.wire_event, event, reply),
        Agent::Copilot => copilot::answer(event, reply),
    }
}

/// Whether `c` must not reach an agent's user raw: C0 and C1 controls (ESC, CSI, BEL,
/// backspace, carriage return…; newline and tab aside), DEL, bidirectional overrides
/// and isolates, and the invisible marks that reorder or hide text — the same set the
/// CLI escapes before a terminal.
fn is_unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c,
            '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}' | '\u{2029}'
            | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

/// Hook-derived text for an agent: controls and bidi marks become visible `\x1b` /
/// `\u{202e}` escapes (lines and tabs kept), so a hook can neither drive the user's
/// terminal nor hide or reorder what the agent shows.
pub fn escape_text(text: &str) -> String {
    use std::fmt::Write as _;
    if !text.chars().any(is_unsafe_char) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe_char(c) {
            let n = u32::from(c);
            if n < 0x100 {
                let _ = write!(out, "\\x{n:02x}");
            } else {
                let _ = write!(out, "\\u{{{n:04x}}}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether any human-readable text of the reply needs [`escaped`] (the common reply
/// is not copied).
fn needs_escaping(reply: &Reply) -> bool {
    let v = &reply.verdict;
    let unsafe_text = |t: &str| t.chars().any(is_unsafe_char);
    [&v.agent_message, &v.user_message, &v.inject_context]
        .into_iter()
        .flatten()
        .any(|t| unsafe_text(t))
        || v.halt.as_ref().is_some_and(|h| unsafe_text(&h.reason))
        || reply
            .followups
            .iter()
            .chain(reply.notices.iter())
            .any(|t| unsafe_text(t))
}

/// The reply with every human-readable, hook-derived text escaped (tool input
/// rewrites are data, not text, and stay as they are).
fn escaped(reply: &Reply) -> Reply {
    let mut r = reply.clone();
    let v = &mut r.verdict;
    for field in [
        &mut v.agent_message,
        &mut v.user_message,
        &mut v.inject_context,
    ] {
        if let Some(text) = field.as_mut() {
            *text = escape_text(text);
        }
    }
    if let Some(h) = v.halt.as_mut() {
        h.reason = escape_text(&h.reason);
    }
    for text in r.followups.iter_mut().chain(r.notices.iter_mut()) {
        *text = escape_text(text);
    }
    r
}

/// The longest `--deadline` accepted (a day): anything longer is a mistake, not a
/// bound.
pub use crate::dialect::own::{drop_shim_entries, is_shim_command, parse_deadline};

/// The `--deadline` of a shim command line, when it has a valid one.
pub fn deadline_in(command: &str) -> Option<Duration> {
    let (_, secs) = command.rsplit_once(" --deadline ")?;
    parse_deadline(secs.trim()).ok()
}

/// The shortest `--deadline` of the shims `install` registered
/// (`$COPSE_DIR/installed.json`), when any has one: what `doctor` and `lint` hold
/// hook timeouts against.
pub fn installed_deadline(copse_dir: &Path) -> Option<Duration> {
    let bytes = std::fs::read(copse_dir.join("installed.json")).ok()?;
    let manifest: Value = serde_json::from_slice(&bytes).ok()?;
    manifest
        .get("installed")?
        .as_array()?
        .iter()
        .filter_map(|i| i.get("command")?.as_str())
        .filter_map(deadline_in)
        .min()
}

/// The hooks a shim for `agent` runs (over `roots`) whose timeout is longer than
/// `deadline`: the shim answers the agent's block at its deadline, so such a hook is
/// cut off before its own timeout. Each as `(config file, event, command, timeout)`.
pub fn hooks_past_deadline(
    agent: Agent,
    home: &Path,
    codex_home: Option<&Path>,
    copse_dir: &Path,
    roots: &[PathBuf],
    deadline: Duration,
) -> Vec<(PathBuf, String, String, Duration)> {
    let also = crate::settings::Settings::load(&crate::settings::Settings::path_in(copse_dir))
        .map(|s| also_from_settings(&s.other, agent))
        .unwrap_or_default();
    let locations = locations_with(agent, home, codex_home, copse_dir, roots, &also);
    crate::discovery::Registry::new(locations)
        .load(|_| true)
        .iter()
        .flat_map(|loaded| loaded.config.hooks.iter())
        .filter(|h| h.timeout > deadline)
        .map(|h| {
            (
                h.source.clone(),
                h.event.clone(),
                h.command.clone(),
                h.timeout,
            )
        })
        .collect()
}

/// The canonical event `agent`'s shim serves a wire event as.
fn served_as(agent: Agent, wire: &str) -> Option<CanonicalEvent> {
    match agent {
        Agent::Claude => claude::canonical_for(wire),
        Agent::Gemini => gemini::canonical_for(wire),
        Agent::Codex => codex::canonical_for(wire),
        Agent::Cursor => crate::dialect::cursor::canonical_for(wire),
        Agent::Copilot => copilot::canonical_for(wire),
    }
}

/// The hook protocols we know, by the agent whose protocol it is: each one's
/// published event names (the vendored lists the drift tests hold to the vendors')
/// and how it maps them. Claude Code and Codex speak one protocol (Codex copies
/// Claude's event names and payloads), so their names are one family and a Claude
/// event sent to a Codex shim is that agent's own unsupported event, never a foreign
/// one.
fn family(agent: Agent) -> &'static [Agent] {
    match agent {
        Agent::Claude | Agent::Codex => &[Agent::Claude, Agent::Codex],
        Agent::Gemini => &[Agent::Gemini],
        Agent::Cursor => &[Agent::Cursor],
        Agent::Copilot => &[Agent::Copilot],
    }
}

/// The event names `agent`'s vendor publishes (what its hooks can be registered on).
fn published(agent: Agent) -> &'static [&'static str] {
    match agent {
        Agent::Claude => &crate::dialect::claude::PUBLISHED_EVENTS,
        Agent::Codex => &crate::dialect::codex::PUBLISHED_EVENTS,
        Agent::Gemini => &crate::dialect::gemini::PUBLISHED_EVENTS,
        Agent::Cursor => &crate::dialect::cursor::PUBLISHED_EVENTS,
        Agent::Copilot => &crate::dialect::copilot::PUBLISHED_EVENTS,
    }
}

/// Whether `wire` is an event of `agent`'s own protocol (its family's published or
/// served names).
pub fn is_own_event(agent: Agent, wire: &str) -> bool {
    family(agent)
        .iter()
        .any(|a| published(*a).contains(&wire) || a.served_events().contains(&wire))
}

/// When `wire` is not an event of `agent`'s protocol but is one of another agent's:
/// that agent and the canonical event it is there (a mis-registered shim). `None`
/// for the agent's own events and for names no protocol we know uses (a vendor's new
/// event, answered neutrally).
pub fn foreign_protocol(agent: Agent, wire: &str) -> Option<(Agent, Option<CanonicalEvent>)> {
    if served_as(agent, wire).is_some() || is_own_event(agent, wire) {
        return None;
    }
    Agent::ALL
        .into_iter()
        .find(|other| !family(agent).contains(other) && is_own_event(*other, wire))
        .map(|other| (other, served_as(other, wire)))
}

/// Whether a failure on this wire event must block (the event is gated, or we could
/// not even tell which event it was). An event of another agent's protocol blocks
/// when it is gated there: the agent that sent it waits for that protocol's block.
pub fn must_block(agent: Agent, wire_event: Option<&str>) -> bool {
    let Some(wire) = wire_event else {
        return true;
    };
    let canonical = served_as(agent, wire)
        .or_else(|| foreign_protocol(agent, wire).and_then(|(_, canonical)| canonical));
    canonical.is_some_and(CanonicalEvent::is_gated)
}

/// The answer for an internal error: the agent's block on a gated (or unreadable)
/// event, nothing on an observation.
pub fn fail_closed(agent: Agent, wire_event: Option<&str>, reason: &str) -> Answer {
    // The reason may quote a payload or a daemon's answer.
    let reason = &escape_text(reason);
    if agent == Agent::Copilot
        && let Some(wire) = wire_event
        && must_block(agent, Some(wire))
    {
        return copilot::block(
            wire,
            &format!("copse-hooks shim: {reason} (failing closed)"),
        );
    }
    if must_block(agent, wire_event) {
        Answer::block(&format!("copse-hooks shim: {reason} (failing closed)"))
    } else {
        Answer {
            stderr: format!("copse-hooks shim: {reason}\n"),
            ..Answer::default()
        }
    }
}

/// The workspace roots for one call: the agent's project-dir variable, else the
/// payload's `workspace_roots`, else its `cwd`.
pub fn workspace_roots(
    agent: Agent,
    inbound: &Inbound,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<PathBuf> {
    let var = match agent {
        Agent::Claude | Agent::Codex => env("CLAUDE_PROJECT_DIR"),
        Agent::Gemini => env("GEMINI_PROJECT_DIR").or_else(|| env("CLAUDE_PROJECT_DIR")),
        Agent::Cursor => env("CURSOR_PROJECT_DIR"),
        Agent::Copilot => env("COPILOT_PROJECT_DIR").or_else(|| env("CLAUDE_PROJECT_DIR")),
    }
    .filter(|v| !v.is_empty());
    if let Some(v) = var {
        return vec![PathBuf::from(v)];
    }
    if !inbound.workspace_roots.is_empty() {
        return inbound.workspace_roots.clone();
    }
    inbound.cwd.iter().cloned().collect()
}

/// Where adopted hooks of an agent live (`$COPSE_DIR/adopted/<agent>/`).
pub fn adopted_dir(copse_dir: &Path, agent: Agent) -> PathBuf {
    copse_dir.join("adopted").join(agent.as_str())
}

/// The adopted config file of an agent, in that agent's own format.
pub fn adopted_config(copse_dir: &Path, agent: Agent) -> PathBuf {
    let name = match agent {
        Agent::Claude | Agent::Gemini => "settings.json",
        Agent::Codex | Agent::Cursor | Agent::Copilot => "hooks.json",
    };
    adopted_dir(copse_dir, agent).join(name)
}

/// The agent-format config files (user then per-root project) of `agent` that a
/// shim of another agent reads when settings say `"also": [agent]`.
fn agent_locations(
    agent: Agent,
    home: &Path,
    codex_home: Option<&Path>,
    roots: &[PathBuf],
) -> Vec<ConfigLocation> {
    let mut out = Vec::new();
    match agent {
        Agent::Cursor => {
            out.push(ConfigLocation {
                path: home.join(".cursor").join("hooks.json"),
                dialect: Dialect::Cursor,
                scope: Scope::User,
                root: None,
            });
            for root in roots {
                out.push(ConfigLocation {
                    path: root.join(".cursor").join("hooks.json"),
                    dialect: Dialect::Cursor,
                    scope: Scope::Project,
                    root: Some(root.clone()),
                });
            }
        }
        Agent::Claude => {
            out.push(ConfigLocation {
                path: home.join(".claude").join("settings.json"),
                dialect: Dialect::Claude,
                scope: Scope::User,
                root: None,
            });
            for root in roots {
                for file in ["settings.json", "settings.local.json"] {
                    out.push(ConfigLocation {
                        path: root.join(".claude").join(file),
                        dialect: Dialect::Claude,
                        scope: Scope::Project,
                        root: Some(root.clone()),
                    });
                }
            }
        }
        Agent::Gemini => {
            out.push(ConfigLocation {
                path: home.join(".gemini").join("settings.json"),
                dialect: Dialect::Gemini,
                scope: Scope::User,
                root: None,
            });
            for root in roots {
                out.push(ConfigLocation {
                    path: root.join(".gemini").join("settings.json"),
                    dialect: Dialect::Gemini,
                    scope: Scope::Project,
                    root: Some(root.clone()),
                });
            }
        }
        Agent::Codex => {
            let codex_home = codex_home
                .map(Path::to_path_buf)
                .unwrap_or_else(|| home.join(".codex"));
            for file in ["hooks.json", "config.toml"] {
                out.push(ConfigLocation {
                    path: codex_home.join(file),
                    dialect: Dialect::Codex,
                    scope: Scope::User,
                    root: None,
                });
            }
            for root in roots {
                for file in ["hooks.json", "config.toml"] {
                    out.push(ConfigLocation {
                        path: root.join(".codex").join(file),
                        dialect: Dialect::Codex,
                        scope: Scope::Project,
                        root: Some(root.clone()),
                    });
                }
            }
        }
        Agent::Copilot => {
            let copilot_home = std::env::var_os("COPILOT_HOME")
                .filter(|v| !v.is_empty())
                .map_or_else(|| home.join(".copilot"), PathBuf::from);
            for path in crate::discovery::json_files(&copilot_home.join("hooks")) {
                out.push(ConfigLocation {
                    path,
                    dialect: Dialect::Copilot,
                    scope: Scope::User,
                    root: None,
                });
            }
            for root in roots {
                for path in crate::discovery::json_files(&root.join(".github").join("hooks")) {
                    out.push(ConfigLocation {
                        path,
                        dialect: Dialect::Copilot,
                        scope: Scope::Project,
                        root: Some(root.clone()),
                    });
                }
            }
        }
    }
    out
}

/// The configs a shim for `agent` reads, in merge order: the user's Copse config,
/// this agent's adopted hooks, the user configs of the `also` agents, then per root
/// the `also` agents' project configs and the Copse project config. Never the calling
/// agent's own config files (the agent runs those itself).
pub fn locations(
    agent: Agent,
    home: &Path,
    copse_dir: &Path,
    roots: &[PathBuf],
    also: &[Agent],
) -> Vec<ConfigLocation> {
    let codex_home = std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    locations_with(agent, home, codex_home.as_deref(), copse_dir, roots, also)
}

/// [`locations`] with Codex's home given (the caller's `CODEX_HOME`, when set) rather
/// than read from this process's environment: the daemon serves agents whose
/// environment is not its own.
pub fn locations_with(
    agent: Agent,
    home: &Path,
    codex_home: Option<&Path>,
    copse_dir: &Path,
    roots: &[PathBuf],
    also: &[Agent],
) -> Vec<ConfigLocation> {
    let mut out = vec![ConfigLocation {
        path: copse_dir.join("hooks.json"),
        dialect: Dialect::Copse,
        scope: Scope::User,
        root: None,
    }];
    out.push(ConfigLocation {
        path: adopted_config(copse_dir, agent),
        dialect: agent.adopted_dialect(),
        scope: Scope::User,
        root: None,
    });
    let also: Vec<Agent> = also.iter().copied().filter(|a| *a != agent).collect();
    for a in &also {
        out.extend(
            agent_locations(*a, home, codex_home, &[])
                .into_iter()
                .filter(|l| l.scope == Scope::User),
        );
    }
    for root in roots {
        for a in &also {
            out.extend(
                agent_locations(*a, home, codex_home, std::slice::from_ref(root))
                    .into_iter()
                    .filter(|l| l.scope == Scope::Project),
            );
        }
        out.push(ConfigLocation {
            path: root.join(".copse").join("hooks.json"),
            dialect: Dialect::Copse,
            scope: Scope::Project,
            root: Some(root.clone()),
        });
    }
    out
}

/// The `hookSpecificOutput.decision` of a PermissionRequest answer (Claude Code and
/// Codex): only here is a copse `Allow` an approval (the hook answers for the user); a
/// verdict without a decision leaves the agent's own approval flow alone.
pub(crate) fn permission_decision(v: &crate::outcome::Verdict) -> Option<Value> {
    if blocks(v) {
        return Some(serde_json::json!({
            "behavior": "deny",
            "message": block_reason(v, "this tool call"),
        }));
    }
    (v.decision == Some(crate::outcome::Decision::Allow))
        .then(|| serde_json::json!({"behavior": "allow"}))
}

/// Reads `"shim": {"<agent>": {"also": [...]}}` from the settings' extra keys.
pub fn also_from_settings(settings: &Map<String, Value>, agent: Agent) -> Vec<Agent> {
    settings
        .get("shim")
        .and_then(|s| s.get(agent.as_str()))
        .and_then(|s| s.get("also"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter_map(Agent::parse)
                .collect()
        })
        .unwrap_or_default()
}

// Helpers shared by the per-agent files.

pub(crate) fn str_of(obj: &Map<String, Value>, key: &str) -> String {
    obj.get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

pub(crate) fn obj_of(obj: &Map<String, Value>, key: &str) -> Map<String, Value> {
    obj.get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The kind of a JSON value, for an error message.
pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A gated event's `tool_input`: an object, or an error naming the field (missing,
/// or a string, an array, …).
pub(crate) fn gated_input(
    wire: &str,
    obj: &Map<String, Value>,
) -> Result<Map<String, Value>, PayloadError> {
    let malformed = |problem: String| PayloadError::Malformed {
        event: wire.to_string(),
        field: "tool_input".into(),
        problem,
    };
    match obj.get("tool_input") {
        Some(Value::Object(o)) => Ok(o.clone()),
        None => Err(malformed("is missing".into())),
        Some(v) => Err(malformed(format!("is {}, not an object", kind_of(v)))),
    }
}

/// Checks a gated call's canonical input against its tool's declared shape (the
/// check `copse-hooks gate` makes); `agent_key` names a canonical field as the agent
/// sent it.
pub(crate) fn check_call(
    wire: &str,
    call: &ToolCall,
    agent_key: impl Fn(&str) -> String,
) -> Result<(), PayloadError> {
    call.validate().map_err(|e| {
        let field = match e.field.split('|').next() {
            Some(f) if !f.is_empty() => format!("tool_input.{}", agent_key(f)),
            _ => "tool_input".to_string(),
        };
        PayloadError::Malformed {
            event: wire.to_string(),
            field,
            problem: e.problem,
        }
    })
}

/// A tool response as text (strings as they are, anything else as JSON).
pub(crate) fn output_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// Joins the non-empty texts with a blank line.
pub(crate) fn join(parts: impl IntoIterator<Item = Option<String>>) -> Option<String> {
    let parts: Vec<String> = parts
        .into_iter()
        .flatten()
        .filter(|s| !s.trim().is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// The reason a blocking verdict gives the model: the agent message only (the user
/// message goes where the agent shows text to the user, [`system_message`]), else the
/// user message when the hook gave nothing else, else a generic text naming the event.
pub(crate) fn block_reason(verdict: &Verdict, what: &str) -> String {
    if let Some(h) = &verdict.halt {
        return h.reason.clone();
    }
    join([verdict.agent_message.clone()])
        .or_else(|| join([verdict.user_message.clone()]))
        .unwrap_or_else(|| format!("{what} was blocked by a copse hook"))
}

/// Whether the verdict blocks (a deny or a halt).
pub(crate) fn blocks(verdict: &Verdict) -> bool {
    verdict.halt.is_some() || verdict.effective_decision() == Decision::Deny
}

/// `systemMessage` text: user messages and notices.
pub(crate) fn system_message(reply: &Reply) -> Option<String> {
    join(
        std::iter::once(reply.verdict.user_message.clone())
            .chain(reply.notices.iter().cloned().map(Some)),
    )
}

/// A `{"hookSpecificOutput": {"hookEventName": E, ...}}` object.
pub(crate) fn specific(wire: &str, fields: Map<String, Value>) -> Value {
    let mut inner = Map::new();
    inner.insert("hookEventName".into(), json!(wire));
    inner.extend(fields);
    Value::Object(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_text_makes_controls_and_bidi_marks_visible_and_keeps_lines() {
        assert_eq!(escape_text("plain\ttext\nline"), "plain\ttext\nline");
        assert_eq!(
            escape_text("a\u{1b}[2Jb\rc\u{7f}d\u{9b}"),
            r"a\x1b[2Jb\x0dc\x7fd\x9b"
        );
        assert_eq!(
            escape_text("x\u{202e}y\u{2066}z\u{200f}\u{feff}"),
            r"x\u{202e}y\u{2066}z\u{200f}\u{feff}"
        );
    }

    #[test]
    fn shim_commands_are_recognised_by_any_path() {
        for yes in [
            "copse-hooks shim --agent claude",
            "/usr/local/bin/copse-hooks shim --agent gemini --deadline 55",
            "'/opt/some where/copse-hooks' shim --agent codex --deadline 0.5",
            "\"/x/copse-hooks\" shim --agent copilot",
        ] {
            assert!(is_shim_command(yes), "{yes}");
        }
        for no in [
            "copse-hooks gate run_shell",
            "copse-hooks shim --agent claude; rm -rf /",
            "copse-hooks shim --agent claude --deadline soon",
            "./guard.sh shim --agent claude",
            "echo copse-hooks shim --agent claude",
            "my-copse-hooks shim --agent claude",
        ] {
            assert!(!is_shim_command(no), "{no}");
        }
    }

    #[test]
    fn events_of_another_protocol_are_foreign_and_claude_and_codex_are_one_family() {
        assert_eq!(
            foreign_protocol(Agent::Gemini, "PreToolUse"),
            Some((Agent::Claude, Some(CanonicalEvent::ToolGate)))
        );
        assert!(must_block(Agent::Gemini, Some("PreToolUse")));
        assert!(!must_block(Agent::Gemini, Some("Stop")));
        assert!(must_block(Agent::Claude, Some("beforeShellExecution")));
        assert_eq!(foreign_protocol(Agent::Codex, "Notification"), None);
        assert_eq!(foreign_protocol(Agent::Claude, "StopFailure"), None);
        assert_eq!(foreign_protocol(Agent::Claude, "NoSuchEvent"), None);
        assert_eq!(foreign_protocol(Agent::Gemini, "SessionStart"), None);
    }

    #[test]
    fn deadlines_parse_as_positive_seconds() {
        assert_eq!(parse_deadline("55"), Ok(Duration::from_secs(55)));
        assert_eq!(parse_deadline("0.5"), Ok(Duration::from_millis(500)));
        for bad in ["0", "-1", "", "soon", "NaN", "inf", "86401"] {
            assert!(parse_deadline(bad).is_err(), "{bad}");
        }
        assert_eq!(
            deadline_in("/bin/copse-hooks shim --agent claude --deadline 55"),
            Some(Duration::from_secs(55))
        );
        assert_eq!(deadline_in("/bin/copse-hooks shim --agent claude"), None);
    }
}
