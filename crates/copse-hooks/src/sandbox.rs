//! sandbox — confine a hook with the OS sandbox, and say so when the sandbox blocked it.
//!
//! # Theory of operation
//!
//! A [`Sandbox`] is the machine's sandbox mechanism (Landlock on Linux, see [`LinuxSandbox`];
//! other platforms report "not available" until their implementation lands). Per run the
//! caller [`prepare`](Sandbox::prepare)s it with a [`SandboxPolicy`]: everything expensive or
//! allocating happens then, in the parent (a private temp dir is created, path fds are
//! opened, the ruleset is built). The result, a [`PreparedSandbox`], is a
//! [`ChildSetup`]: [`spawn::run`](crate::spawn::run) applies it in the forked child before
//! exec, with async-signal-safe syscalls only, and everything the hook starts inherits it.
//! After the run, [`PreparedSandbox::detect`] says whether the sandbox blocked the run;
//! dropping the prepared sandbox removes its temp dir.
//!
//! The policy: read and execute everywhere the user can; write only beneath
//! [`SandboxPolicy::writable`] (the caller passes the workspace roots, a user-scope hook's
//! own config directory, and the paths a setting adds), the run's private temp dir
//! (exported by the caller as `TMPDIR`; [`PreparedSandbox::tmpdir`]) and the harmless
//! devices (`/dev/null`, `/dev/zero`, `/dev/full`, `/dev/random`, `/dev/urandom`,
//! `/dev/tty`, `/dev/ptmx`, `/dev/pts/*`). With `network: false`, TCP bind and connect are
//! denied too.
//!
//! # Enforcement
//!
//! [`Sandbox::enforcement`] tells whether a policy would be *fully* enforced on this
//! machine. Anything less (no sandbox in the kernel, or a kernel too old for a right the
//! policy needs) is [`Enforcement::Unenforced`] with a plain reason, and `prepare` refuses
//! with [`SandboxError::Unenforced`]: the caller then either runs the hook unsandboxed and
//! says so, or (when the user required the sandbox) fails the run. A partially enforced
//! policy is never applied silently.
//!
//! # Detecting blocks
//!
//! A blocked hook usually just fails, so "the sandbox blocked this" must come from a
//! signal the hook cannot forge: never from what it prints (a hook can print "Permission
//! denied" as easily as anything else). [`PreparedSandbox::detect`] uses only:
//!
//! * the child's own report, sent through a pipe by the setup code before exec: its pid,
//!   and whether applying the sandbox failed (then the run never started: blocked);
//! * on Linux, the kernel's Landlock denial records (audit, Landlock ABI 7 / Linux 6.15+),
//!   matched to the run by the pid of the process that entered the Landlock domain. See
//!   [`LinuxSandbox`] for exactly when they are available (kernel audit enabled, root).
//!
//! A run that exited 0 is never marked blocked (incidental denials a hook recovered from
//! are not failures). When denials cannot be observed, the verdict says so in
//! [`SandboxVerdict::unchecked`] instead of guessing; [`Sandbox::status`] reports the same
//! machine-wide, so `copse-hooks sandbox check` can tell the user up front.
//!
//! # Wiring (per run)
//!
//! ```no_run
//! use copse_hooks::sandbox::{self, SandboxError, SandboxPolicy};
//! # fn demo(workspace: std::path::PathBuf, require: bool) -> Result<(), String> {
//! let sandbox = sandbox::platform_sandbox();
//! let policy = SandboxPolicy::new([workspace]);
//! let prepared = match sandbox.prepare(&policy) {
//!     Ok(prepared) => Some(prepared),
//!     // Not enforced here: say so plainly and run unsandboxed, unless it was required.
//!     Err(SandboxError::Unenforced { reason }) if !require => None,
//!     Err(err) => return Err(err.to_string()), // failure kind `sandbox`
//! };
//! // env: set TMPDIR = prepared.tmpdir(); request.child_setup = prepared.as_child_setup()
//! // after the run: let verdict = prepared.detect(out.exit_code);
//! # let _ = prepared; Ok(()) }
//! ```

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod probe;
#[cfg(not(target_os = "linux"))]
mod unsupported;

#[cfg(target_os = "linux")]
pub use linux::LinuxSandbox;
#[cfg(not(target_os = "linux"))]
pub use unsupported::UnsupportedSandbox;
// `Layer` lives in `spawn` (process containment reports layers too, and spawn is
// below the sandbox); the sandbox's status lists both kinds under this name.
pub use crate::spawn::Layer;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::spawn::ChildSetup;

/// Environment variable read once by [`platform_sandbox`]: `none` pretends the kernel has
/// no sandbox, a number caps the Landlock ABI used. A test seam that can only weaken the
/// sandbox, so it exists only in builds with the `test-seams` feature (enabled by the
/// workspace's own dev-dependencies, never in a release build); the status then says that
/// it was forced.
#[cfg(feature = "test-seams")]
pub const FORCE_ABI_VAR: &str = "COPSE_HOOKS_SANDBOX_FORCE_ABI";

/// What one run may do beyond reading and executing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// Absolute paths the hook may write beneath (files or directories): the workspace
    /// roots, a user-scope hook's own config directory, extra paths from settings. The
    /// private temp dir and the harmless devices are always added. Paths that do not exist
    /// when the run is prepared are skipped (nothing can be created there either).
    pub writable: Vec<PathBuf>,
    /// Whether the hook may use the network (default `true`). `false` refuses every
    /// socket but a Unix one: TCP, MPTCP, UDP, raw and packet sockets alike.
    pub network: bool,
    /// Whether the hook may create Unix sockets with `socket(2)` and connect to abstract
    /// ones (default `true`; `false` for project hooks). `socketpair(2)` stays allowed.
    pub unix_sockets: bool,
    /// Unix sockets the hook may use although `unix_sockets` is `false` (the setting
    /// `sandboxAllowedSockets`). Landlock cannot confine a connection to a path, so a
    /// non-empty list lets the hook create Unix sockets at all (abstract ones stay
    /// refused); [`SandboxStatus::layers`] says so.
    pub allowed_sockets: Vec<PathBuf>,
    /// Paths the hook may not write even beneath a writable path, nor `chmod`, rename
    /// or remove (see [`protected_paths`]; pinned scripts are added by the caller).
    /// Those that exist are bound read-only onto themselves (a `.git` directory is bound
    /// writable: only its place is pinned); a Unix socket directly inside a protected
    /// directory is masked (bound over with `/dev/null`, so connecting to it fails
    /// whatever the socket rules allow), and [`allowed_sockets`](Self::allowed_sockets)
    /// beneath a protected path are ignored. A policy with any is unenforced where that
    /// is impossible.
    pub protected: Vec<PathBuf>,
}

/// What one hook's policy is made from: what the run stage knows of the hook (where it
/// may write, whether it may connect out) and what the host configured. Built into a
/// [`SandboxPolicy`] here, beside [`protected_paths`], so a run asks the sandbox once.
pub(crate) struct HookPolicy<'a> {
    /// The workspace roots, the hook's own state directory, the configured extra paths.
    pub writable: Vec<PathBuf>,
    /// Whether the hook may connect out.
    pub network: bool,
    /// Unix sockets the user lets hooks use.
    pub allowed_sockets: &'a [PathBuf],
    /// Paths protected besides [`protected_paths`] (the scripts trust pinned).
    pub extra_protected: &'a [PathBuf],
    /// The user's home.
    pub home: &'a Path,
    /// `$COPSE_DIR`.
    pub copse_dir: &'a Path,
    /// The workspace roots.
    pub roots: &'a [PathBuf],
}

impl HookPolicy<'_> {
    /// The policy: no hook, user or project, gets a Unix socket (a tmux server, the
    /// Docker socket, an agent, the copse daemon) or an abstract one, unless the user
    /// listed sockets hooks may use (the daemon's never counts: it is masked).
    pub(crate) fn build(self) -> SandboxPolicy {
        let mut protected = protected_paths(self.home, self.copse_dir, self.roots);
        protected.extend(self.extra_protected.iter().cloned());
        SandboxPolicy::new(self.writable)
            .network(self.network)
            .protected(protected)
            .unix_sockets(false)
            .allowed_sockets(self.allowed_sockets.to_vec())
    }
}

/// Builds `policy` and prepares it under `sandbox`: the prepared run and its private
/// TMPDIR, in one call.
pub(crate) fn prepare_hook(
    sandbox: &dyn Sandbox,
    policy: HookPolicy<'_>,
) -> Result<(Box<dyn PreparedSandbox>, PathBuf), SandboxError> {
    let prepared = sandbox.prepare(&policy.build())?;
    let tmpdir = prepared.tmpdir().to_path_buf();
    Ok((prepared, tmpdir))
}

/// The paths no hook may write, wherever its sandbox lets it write, nor `chmod`, rename or
/// remove (each one that exists is bound read-only onto itself, whether or not the hook
/// may write beneath it otherwise):
///
/// * every hook config of every dialect and scope, and the agents' code and instruction
///   files in the home directory: `~/.cursor/{hooks.json,hooks,mcp.json,cli-config.json,
///   rules,commands,extensions}`, `~/.claude.json`, `~/.claude/{settings.json,
///   settings.local.json,hooks,CLAUDE.md,agents,commands,skills,output-styles}`, every
///   entry of `~/.claude/plugins/` but `data` (where plugin hooks keep their state),
///   every entry of `~/.gemini/` and `~/.codex/` but their `tmp`, `log` and `logs`;
///   `~/.copilot/{hooks,settings.json,config.json,mcp-config.json,agents,skills,plugins,
///   copilot-instructions.md}` (Copilot CLI keeps its session state beside them);
/// * `$COPSE_DIR` whole (settings, hooks, the audit store, sockets; Copse user hooks write
///   `$COPSE_DIR/state` instead);
/// * in each workspace root: the project config directories whole (`.cursor`, `.claude`,
///   `.copse`, `.gemini`, `.codex`; Copilot's `.github/hooks`, `.github/copilot`,
///   `.github/copilot-instructions.md`), the instruction files (`CLAUDE.md`,
///   `CLAUDE.local.md`, `AGENTS.md`, `GEMINI.md`, `.cursorrules`, `.mcp.json`), and git's
///   metadata: `.git` itself (a directory is bound writable, so it cannot be renamed or
///   replaced; a `.git` file, which names the git directory, read-only), `.git/config`,
///   `config.worktree`, `hooks/`, `info/`, every `worktrees/*`, and `config`,
///   `config.worktree`, `hooks/`, `info/` of every `modules/**` submodule.
///
/// The one list: a dialect adds its files here. Sockets found directly in a protected
/// directory (the daemon's `$COPSE_DIR/daemon.sock`) are masked as well (see
/// [`SandboxPolicy::protected`]).
pub fn protected_paths(home: &Path, copse_dir: &Path, roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for name in [
        "hooks.json",
        "hooks",
        "mcp.json",
        "cli-config.json",
        "rules",
        "commands",
        "extensions",
    ] {
        paths.push(home.join(".cursor").join(name));
    }
    paths.push(home.join(".claude.json"));
    for name in [
        "settings.json",
        "settings.local.json",
        "hooks",
        "CLAUDE.md",
        "agents",
        "commands",
        "skills",
        "output-styles",
    ] {
        paths.push(home.join(".claude").join(name));
    }
    // Plugins are code, but `plugins/data/` is where plugin hooks keep their state.
    entries_but(&home.join(".claude/plugins"), &["data"], &mut paths);
    // The files named in the docs even where they do not exist yet (so the list says
    // what is meant), then whatever else is there: unknown files of an agent are treated
    // as its configuration, not as a hook's scratch space.
    let gemini: &[&str] = &[
        "settings.json",
        "GEMINI.md",
        ".env",
        "extensions",
        "commands",
    ];
    let codex: &[&str] = &[
        "config.toml",
        "hooks.json",
        "AGENTS.md",
        "prompts",
        "rules",
        "skills",
    ];
    for (agent, known) in [(".gemini", gemini), (".codex", codex)] {
        let dir = home.join(agent);
        paths.extend(known.iter().map(|name| dir.join(name)));
        entries_but(&dir, &["tmp", "log", "logs"], &mut paths);
    }
    // Copilot CLI's configs; the rest of `~/.copilot` is its session state.
    for name in [
        "hooks",
        "settings.json",
        "config.json",
        "mcp-config.json",
        "agents",
        "skills",
        "plugins",
        "copilot-instructions.md",
    ] {
        paths.push(home.join(".copilot").join(name));
    }
    paths.push(copse_dir.to_path_buf());
    for root in roots {
        for name in ["hooks", "copilot", "copilot-instructions.md"] {
            paths.push(root.join(".github").join(name));
        }
        for name in [
            ".cursor",
            ".claude",
            ".copse",
            ".gemini",
            ".codex",
            "CLAUDE.md",
            "CLAUDE.local.md",
            "AGENTS.md",
            "GEMINI.md",
            ".cursorrules",
            ".mcp.json",
        ] {
            paths.push(root.join(name));
        }
        let git = root.join(".git");
        paths.push(git.clone());
        git_metadata(&git, 0, &mut paths);
    }
    paths
}

/// Every entry of `dir` (bounded) but those named in `except`, added to `paths` once.
fn entries_but(dir: &Path, except: &[&str], paths: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten().take(256) {
        let name = entry.file_name();
        if except.iter().any(|skip| name == *skip) {
            continue;
        }
        let path = entry.path();
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
}

/// The files of a git directory that decide what git runs: its config, hooks and info,
/// its worktrees' metadata, and the same of every submodule beneath `modules/`.
fn git_metadata(git: &Path, depth: usize, paths: &mut Vec<PathBuf>) {
    for name in ["config", "config.worktree", "hooks", "info"] {
        paths.push(git.join(name));
    }
    if depth == 0
        && let Ok(entries) = std::fs::read_dir(git.join("worktrees"))
    {
        paths.extend(entries.flatten().take(64).map(|entry| entry.path()));
    }
    // Submodules nest (`modules/a/modules/b`); a bounded walk.
    if depth < 4
        && let Ok(entries) = std::fs::read_dir(git.join("modules"))
    {
        for entry in entries.flatten().take(64) {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                git_metadata(&entry.path(), depth + 1, paths);
            }
        }
    }
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        Self {
            writable: Vec::new(),
            network: true,
            unix_sockets: true,
            allowed_sockets: Vec::new(),
            protected: Vec::new(),
        }
    }
}

impl SandboxPolicy {
    /// A policy writing beneath `writable`, network allowed.
    pub fn new<I, P>(writable: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        Self {
            writable: writable.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// Sets whether the network is allowed.
    #[must_use]
    pub fn network(mut self, allowed: bool) -> Self {
        self.network = allowed;
        self
    }

    /// Sets the Unix sockets allowed although `unix_sockets` is `false`.
    #[must_use]
    pub fn allowed_sockets(mut self, sockets: Vec<PathBuf>) -> Self {
        self.allowed_sockets = sockets;
        self
    }

    /// Sets the paths the hook may not write even beneath a writable path.
    #[must_use]
    pub fn protected(mut self, paths: Vec<PathBuf>) -> Self {
        self.protected = paths;
        self
    }

    /// Sets whether Unix sockets (other than socket pairs) are allowed.
    #[must_use]
    pub fn unix_sockets(mut self, allowed: bool) -> Self {
        self.unix_sockets = allowed;
        self
    }
}

/// Whether a policy is fully enforced on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enforcement {
    /// Every restriction of the policy is enforced by the kernel.
    Enforced {
        /// The sandbox ABI version used (Landlock ABI on Linux).
        abi: u32,
        /// Whether the kernel can restrict TCP (so `network: false` is honoured).
        network_rules: bool,
    },
    /// Not (fully) enforced: hooks would run unsandboxed.
    Unenforced {
        /// Why, in plain words.
        reason: String,
    },
}

impl Enforcement {
    /// `true` for [`Enforcement::Enforced`].
    pub fn is_enforced(&self) -> bool {
        matches!(self, Enforcement::Enforced { .. })
    }
}

impl fmt::Display for Enforcement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Enforcement::Enforced { abi, network_rules } => write!(
                f,
                "enforced (ABI {abi}, network rules {})",
                if *network_rules { "yes" } else { "no" }
            ),
            Enforcement::Unenforced { reason } => {
                write!(f, "NOT enforced, hooks run unsandboxed: {reason}")
            }
        }
    }
}

/// How sandbox blocks are detected after a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detection {
    /// From the kernel's own denial records (Linux audit).
    KernelAudit,
    /// Denials cannot be observed here; a blocked hook looks like any failing hook.
    Unavailable {
        /// Why, in plain words.
        reason: String,
    },
}

impl fmt::Display for Detection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detection::KernelAudit => f.write_str("yes (kernel audit records)"),
            Detection::Unavailable { reason } => write!(f, "no: {reason}"),
        }
    }
}

/// What the machine's sandbox enforces, for `copse-hooks sandbox check` and logs.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxStatus {
    /// The mechanism, e.g. `"Landlock"`.
    pub mechanism: &'static str,
    /// The sandbox ABI version the kernel supports (`None`: none).
    pub abi: Option<u32>,
    /// Whether filesystem rules are available.
    pub filesystem_rules: bool,
    /// Whether network (TCP) rules are available.
    pub network_rules: bool,
    /// Enforcement of the default policy (write confinement, network allowed).
    pub enforcement: Enforcement,
    /// Enforcement of a `network: false` policy.
    pub enforcement_without_network: Enforcement,
    /// How blocks are detected.
    pub detection: Detection,
    /// Each protection layer and whether it is enforced here, including the process
    /// containment of [`crate::spawn::layers`].
    pub layers: Vec<Layer>,
}

impl fmt::Display for SandboxStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        writeln!(f, "mechanism:          {}", self.mechanism)?;
        match self.abi {
            Some(abi) => writeln!(f, "ABI version:        {abi}")?,
            None => writeln!(f, "ABI version:        none")?,
        }
        writeln!(f, "filesystem rules:   {}", yes_no(self.filesystem_rules))?;
        writeln!(f, "network rules:      {}", yes_no(self.network_rules))?;
        writeln!(f, "default policy:     {}", self.enforcement)?;
        writeln!(
            f,
            "network: false:     {}",
            self.enforcement_without_network
        )?;
        write!(f, "block detection:    {}", self.detection)?;
        for layer in &self.layers {
            write!(
                f,
                "\n  {:<13} {} ({})",
                if layer.enforced {
                    "enforced"
                } else {
                    "NOT enforced"
                },
                layer.name,
                layer.detail
            )?;
        }
        Ok(())
    }
}

/// Why a sandbox could not be prepared.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The policy would not be fully enforced on this machine.
    #[error("the OS sandbox is not enforced here: {reason}")]
    Unenforced {
        /// Why, in plain words (same as [`Enforcement::Unenforced`]).
        reason: String,
    },
    /// The sandbox is available but preparing it failed (e.g. out of file descriptors).
    #[error("could not prepare the OS sandbox ({what}): {cause}")]
    Setup {
        /// The step that failed.
        what: &'static str,
        /// The underlying error.
        cause: std::io::Error,
    },
}

/// Whether the sandbox blocked a run, from signals the hook cannot forge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxVerdict {
    /// The run failed and the sandbox is the likely cause. Never set for exit code 0.
    pub blocked: bool,
    /// Why (de-duplicated), e.g. "the OS sandbox blocked 1 operation this hook attempted".
    pub reasons: Vec<String>,
    /// Set when the run failed but could not be checked for sandbox denials, with why.
    pub unchecked: Option<String>,
}

/// The sandbox mechanism of a machine.
pub trait Sandbox: Send + Sync {
    /// What this machine enforces and detects.
    fn status(&self) -> SandboxStatus;

    /// Whether `policy` would be fully enforced.
    fn enforcement(&self, policy: &SandboxPolicy) -> Enforcement;

    /// Prepares one run: creates the private temp dir, opens the path fds and builds the
    /// ruleset. Fails with [`SandboxError::Unenforced`] when [`Sandbox::enforcement`] says
    /// the policy is not fully enforced.
    fn prepare(&self, policy: &SandboxPolicy) -> Result<Box<dyn PreparedSandbox>, SandboxError>;
}

/// One prepared run: pass it to [`spawn::run`](crate::spawn::run) as the child setup, then
/// ask [`detect`](PreparedSandbox::detect). Dropping it removes the temp dir and closes
/// its fds. Meant for one run; applying it to several children is harmless (each is
/// confined, and `detect` covers them all).
pub trait PreparedSandbox: ChildSetup {
    /// `self` as the [`ChildSetup`] for [`SpawnRequest::child_setup`](crate::spawn::SpawnRequest).
    fn as_child_setup(&self) -> &dyn ChildSetup;

    /// The run's private, writable temp dir; export it to the hook as `TMPDIR`. Removed
    /// (with everything in it) when this value is dropped.
    fn tmpdir(&self) -> &Path;

    /// After the run: did the sandbox block it? `exit_code` is the run's exit code
    /// (`None` if it was killed or never started). Exit code 0 is never blocked.
    fn detect(&self, exit_code: Option<i32>) -> SandboxVerdict;
}

/// This machine's sandbox, built once (in test builds, honouring `COPSE_HOOKS_SANDBOX_FORCE_ABI`
/// at that moment).
pub fn platform_sandbox() -> Arc<dyn Sandbox> {
    static SANDBOX: OnceLock<Arc<dyn Sandbox>> = OnceLock::new();
    SANDBOX
        .get_or_init(|| {
            #[cfg(feature = "test-seams")]
            let forced = std::env::var(FORCE_ABI_VAR).ok();
            #[cfg(not(feature = "test-seams"))]
            let forced: Option<String> = None;
            #[cfg(target_os = "linux")]
            {
                Arc::new(LinuxSandbox::from_forced_setting(forced.as_deref()))
            }
            #[cfg(not(target_os = "linux"))]
            {
                let _ = forced;
                Arc::new(UnsupportedSandbox)
            }
        })
        .clone()
}

// ---------------------------------------------------------------------------------
// The private temp dir (shared by the platform implementations)
// ---------------------------------------------------------------------------------

/// Private temp dirs alive in this process, so a host terminated by a signal can remove
/// them before it exits ([`remove_private_tmpdirs`]).
#[cfg(unix)]
static LIVE_TMPDIRS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Removes every private temp dir of the runs in progress. For a host about to exit on a
/// signal, after [`crate::spawn::kill_all`]; a run that then ends finds its dir gone.
pub fn remove_private_tmpdirs() {
    #[cfg(unix)]
    {
        let live = LIVE_TMPDIRS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for path in live.iter() {
            remove_tree(path);
        }
    }
}

/// The prefix of a private temp dir's name; the host's pid follows, so a later host can
/// tell the dirs of a host that died without removing them.
#[cfg(unix)]
const TMP_PREFIX: &str = "copse-hook-";

/// Removes the private temp dirs that hosts which no longer run left in `dir` (a host
/// killed by SIGKILL cannot remove its own): only directories named
/// `copse-hook-<pid>-XXXXXX`, owned by us, whose pid is not a live process.
#[cfg(unix)]
pub(crate) fn reclaim_orphaned_tmpdirs(dir: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    let me = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(TMP_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid {
            continue;
        }
        let alive = libc::pid_t::try_from(pid).is_ok_and(|pid| {
            // SAFETY: signal 0 only checks that the process exists.
            let found = unsafe { libc::kill(pid, 0) } == 0;
            found || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
        });
        if !alive {
            remove_tree(&entry.path());
        }
    }
}

/// Removes `path` and everything beneath it, even directories a hook made unwritable.
#[cfg(unix)]
fn remove_tree(path: &Path) {
    if std::fs::remove_dir(path).is_ok() || std::fs::remove_dir_all(path).is_ok() {
        return;
    }
    // A hook may have made its own directories unwritable (chmod is not a sandboxed
    // operation): give them back to ourselves, never following symlinks, and retry.
    unlock_tree(path, 0);
    let _ = std::fs::remove_dir_all(path);
}

/// A fresh `copse-hook-<host pid>-XXXXXX` directory (mode 0700) under the host's temp dir,
/// removed with its contents on drop. The first one a process creates also reclaims the
/// dirs of dead hosts.
#[cfg(unix)]
#[derive(Debug)]
pub(crate) struct PrivateTmp {
    path: PathBuf,
}

#[cfg(unix)]
impl PrivateTmp {
    pub(crate) fn create() -> std::io::Result<Self> {
        use std::ffi::{CString, OsString};
        use std::os::unix::ffi::{OsStrExt, OsStringExt};

        static RECLAIMED: std::sync::Once = std::sync::Once::new();
        let base = std::env::temp_dir();
        RECLAIMED.call_once(|| reclaim_orphaned_tmpdirs(&base));
        let template = base.join(format!("{TMP_PREFIX}{}-XXXXXX", crate::spawn::host_pid()));
        let template = CString::new(template.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        let mut bytes = template.into_bytes_with_nul();
        // SAFETY: `bytes` is a NUL-terminated, writable buffer ending in "XXXXXX\0", as
        // mkdtemp requires; it rewrites the X's in place and returns NULL on failure.
        let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
        if made.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        bytes.pop(); // the NUL
        let path = PathBuf::from(OsString::from_vec(bytes));
        LIVE_TMPDIRS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(path.clone());
        Ok(Self { path })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(unix)]
impl Drop for PrivateTmp {
    fn drop(&mut self) {
        {
            let mut live = LIVE_TMPDIRS
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some(at) = live.iter().position(|p| *p == self.path) {
                live.swap_remove(at);
            }
        }
        // Most hooks leave it empty: one rmdir(2) then.
        remove_tree(&self.path);
    }
}

/// Makes `dir` and the directories beneath it `0700`, without following symlinks.
#[cfg(unix)]
fn unlock_tree(dir: &Path, depth: usize) {
    use std::os::unix::ffi::OsStrExt;
    if depth > 256 {
        return;
    }
    if let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) {
        // SAFETY: `path` is a valid NUL-terminated string; fchmodat takes plain integers
        // otherwise. AT_SYMLINK_NOFOLLOW makes it fail on a symlink instead of following it.
        unsafe {
            libc::fchmodat(
                libc::AT_FDCWD,
                path.as_ptr(),
                0o700,
                libc::AT_SYMLINK_NOFOLLOW,
            );
        }
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            unlock_tree(&entry.path(), depth + 1);
        }
    }
}

// ---------------------------------------------------------------------------------
// Self test (`copse-hooks sandbox check`)
// ---------------------------------------------------------------------------------

/// The result of one self-test check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckResult {
    /// Behaved as required.
    Passed,
    /// Did not; with what happened.
    Failed(String),
    /// Could not be run here; with why.
    Skipped(String),
}

/// One self-test check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfTestCheck {
    /// What was checked.
    pub name: &'static str,
    /// How it went.
    pub result: CheckResult,
}

/// What [`self_test`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SelfTestReport {
    /// The sandbox's status.
    pub status: SandboxStatus,
    /// Each check, in order.
    pub checks: Vec<SelfTestCheck>,
}

impl SelfTestReport {
    /// The sandbox is enforced and no check failed.
    pub fn passed(&self) -> bool {
        self.status.enforcement.is_enforced()
            && !self
                .checks
                .iter()
                .any(|c| matches!(c.result, CheckResult::Failed(_)))
    }
}

impl fmt::Display for SelfTestReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.status)?;
        writeln!(f)?;
        for check in &self.checks {
            match &check.result {
                CheckResult::Passed => writeln!(f, "  ok    {}", check.name)?,
                CheckResult::Failed(why) => writeln!(f, "  FAIL  {}: {why}", check.name)?,
                CheckResult::Skipped(why) => writeln!(f, "  skip  {}: {why}", check.name)?,
            }
        }
        write!(
            f,
            "{}",
            if self.passed() {
                "sandbox check passed"
            } else {
                "sandbox check FAILED"
            }
        )
    }
}

/// Spawns real hooks under `sandbox` and checks that it confines them: a write inside an
/// allowed directory succeeds; writes outside it (by the hook and by a grandchild) fail
/// and leave no file; the private `TMPDIR` is writable and removed afterwards; a loopback
/// TCP connect succeeds with `network: true` and fails with `network: false`; a denied
/// write is detected as a block (where detection is available) and a forged
/// "Permission denied" is not. Never panics.
pub fn self_test(sandbox: &dyn Sandbox) -> SelfTestReport {
    let status = sandbox.status();
    #[cfg(unix)]
    let checks = self_test_unix::run(sandbox, &status);
    #[cfg(not(unix))]
    let checks = vec![SelfTestCheck {
        name: "sandboxed hooks",
        result: CheckResult::Skipped("hooks can only be spawned on Unix".to_owned()),
    }];
    SelfTestReport { status, checks }
}

#[cfg(unix)]
mod self_test_unix {
    use std::ffi::OsString;
    use std::net::TcpListener;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use super::{
        CheckResult, Detection, PrivateTmp, Sandbox, SandboxPolicy, SandboxStatus, SelfTestCheck,
    };
    use crate::spawn::{self, Limits, SpawnOutput, SpawnRequest};

    const TIMEOUT: Duration = Duration::from_secs(20);

    struct Ran {
        out: SpawnOutput,
        tmpdir: PathBuf,
        verdict: super::SandboxVerdict,
    }

    fn env(extra: &[(&str, &Path)]) -> Vec<(OsString, OsString)> {
        let mut env = vec![(
            OsString::from("PATH"),
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
        )];
        for (key, value) in extra {
            env.push((OsString::from(key), value.as_os_str().to_owned()));
        }
        env
    }

    /// Runs `command` in `cwd` under `policy`; `Err` describes a setup/spawn failure.
    fn run_sandboxed(
        sandbox: &dyn Sandbox,
        policy: &SandboxPolicy,
        command: &str,
        cwd: &Path,
        extra_env: &[(&str, &Path)],
    ) -> Result<Ran, String> {
        let prepared = sandbox.prepare(policy).map_err(|e| e.to_string())?;
        let tmpdir = prepared.tmpdir().to_path_buf();
        let mut vars = extra_env.to_vec();
        vars.push(("TMPDIR", &tmpdir));
        let env = env(&vars);
        let req = SpawnRequest {
            command,
            cwd,
            env: &env,
            stdin: b"",
            timeout: TIMEOUT,
            limits: Limits::default(),
            child_setup: Some(prepared.as_child_setup()),
        };
        let out = spawn::run(&req).map_err(|e| e.to_string())?;
        let verdict = prepared.detect(out.exit_code);
        Ok(Ran {
            out,
            tmpdir,
            verdict,
        })
    }

    fn describe(out: &SpawnOutput) -> String {
        format!(
            "exit {:?}, stderr {:?}",
            out.exit_code,
            String::from_utf8_lossy(&out.stderr).trim()
        )
    }

    fn check(name: &'static str, result: CheckResult) -> SelfTestCheck {
        SelfTestCheck { name, result }
    }

    pub(super) fn run(sandbox: &dyn Sandbox, status: &SandboxStatus) -> Vec<SelfTestCheck> {
        let mut checks = Vec::new();
        if let super::Enforcement::Unenforced { reason } = &status.enforcement {
            checks.push(check(
                "sandboxed hooks",
                CheckResult::Skipped(format!("the sandbox is not enforced: {reason}")),
            ));
            return checks;
        }
        let scratch = match PrivateTmp::create() {
            Ok(dir) => dir,
            Err(e) => {
                checks.push(check(
                    "scratch directory",
                    CheckResult::Failed(format!("cannot create one: {e}")),
                ));
                return checks;
            }
        };
        let allowed = scratch.path().join("allowed");
        let outside = scratch.path().join("outside");
        for dir in [&allowed, &outside] {
            if let Err(e) = std::fs::create_dir(dir) {
                checks.push(check(
                    "scratch directory",
                    CheckResult::Failed(format!("cannot create {}: {e}", dir.display())),
                ));
                return checks;
            }
        }
        let policy = SandboxPolicy::new([allowed.clone()]);
        let vars = [
            ("ALLOWED", allowed.as_path()),
            ("OUTSIDE", outside.as_path()),
        ];

        // 1. Inside the workspace.
        let result = match run_sandboxed(
            sandbox,
            &policy,
            r#"echo ok > "$ALLOWED/inside" && cat "$ALLOWED/inside""#,
            &allowed,
            &vars,
        ) {
            Err(e) => CheckResult::Failed(e),
            Ok(ran) if ran.out.exit_code == Some(0) && allowed.join("inside").is_file() => {
                CheckResult::Passed
            }
            Ok(ran) => CheckResult::Failed(describe(&ran.out)),
        };
        checks.push(check("write inside an allowed directory succeeds", result));

        // 2. Outside, by the hook itself; also feeds the detection check.
        let blocked_run = run_sandboxed(
            sandbox,
            &policy,
            r#"echo x > "$OUTSIDE/escaped""#,
            &allowed,
            &vars,
        );
        let result = match &blocked_run {
            Err(e) => CheckResult::Failed(e.clone()),
            Ok(_) if outside.join("escaped").exists() => {
                CheckResult::Failed("the file outside was created".to_owned())
            }
            Ok(ran) if ran.out.exit_code == Some(0) => {
                CheckResult::Failed("the write reported success".to_owned())
            }
            Ok(_) => CheckResult::Passed,
        };
        checks.push(check("write outside the allowed directories fails", result));

        // 3. Outside, by a grandchild (a subshell started in the background).
        let result = match run_sandboxed(
            sandbox,
            &policy,
            r#"(sh -c 'echo x > "$OUTSIDE/grandchild"; echo "$?" > "$ALLOWED/grandchild-status"') & wait; cat "$ALLOWED/grandchild-status""#,
            &allowed,
            &vars,
        ) {
            Err(e) => CheckResult::Failed(e),
            Ok(_) if outside.join("grandchild").exists() => {
                CheckResult::Failed("the grandchild created the file outside".to_owned())
            }
            Ok(ran) if String::from_utf8_lossy(&ran.out.stdout).trim() == "0" => {
                CheckResult::Failed("the grandchild's write reported success".to_owned())
            }
            Ok(ran) if ran.out.stdout.is_empty() => CheckResult::Failed(format!(
                "the grandchild did not run: {}",
                describe(&ran.out)
            )),
            Ok(_) => CheckResult::Passed,
        };
        checks.push(check("a grandchild is confined too", result));

        // 4. The private TMPDIR.
        let result = match run_sandboxed(
            sandbox,
            &policy,
            r#"echo t > "$TMPDIR/file" && mkdir "$TMPDIR/d" && cat "$TMPDIR/file""#,
            &allowed,
            &vars,
        ) {
            Err(e) => CheckResult::Failed(e),
            Ok(ran) if ran.out.exit_code != Some(0) => CheckResult::Failed(describe(&ran.out)),
            Ok(ran) if ran.tmpdir.exists() => CheckResult::Failed(format!(
                "{} was not removed after the run",
                ran.tmpdir.display()
            )),
            Ok(_) => CheckResult::Passed,
        };
        checks.push(check(
            "the private TMPDIR is writable and removed afterwards",
            result,
        ));

        // 5 and 6. Loopback TCP.
        checks.extend(network_checks(sandbox, status, &policy, &allowed));

        // The routes out: every socket kind with `network: false`, Unix sockets for
        // project hooks, signals, inherited descriptors.
        #[cfg(target_os = "linux")]
        checks.extend(super::probe::checks(
            sandbox,
            &policy,
            &status.enforcement_without_network,
            scratch.path(),
        ));

        // 7. Detection: the real block above, and a forged one.
        match &status.detection {
            Detection::Unavailable { reason } => {
                checks.push(check(
                    "a denied write is detected as a sandbox block",
                    CheckResult::Skipped(format!("detection unavailable: {reason}")),
                ));
            }
            Detection::KernelAudit => {
                let result = match &blocked_run {
                    Err(e) => CheckResult::Failed(e.clone()),
                    Ok(ran) if ran.verdict.blocked => CheckResult::Passed,
                    Ok(ran) => CheckResult::Failed(format!(
                        "not detected ({})",
                        ran.verdict
                            .unchecked
                            .as_deref()
                            .unwrap_or("no denial records")
                    )),
                };
                checks.push(check(
                    "a denied write is detected as a sandbox block",
                    result,
                ));
            }
        }
        let result = match run_sandboxed(
            sandbox,
            &policy,
            r#"echo "sh: 1: cannot create /etc/x: Permission denied" >&2; echo "Operation not permitted" >&2; exit 1"#,
            &allowed,
            &vars,
        ) {
            Err(e) => CheckResult::Failed(e),
            Ok(ran) if ran.verdict.blocked => CheckResult::Failed(format!(
                "reported as blocked: {}",
                ran.verdict.reasons.join("; ")
            )),
            Ok(_) => CheckResult::Passed,
        };
        checks.push(check(
            "a forged \"Permission denied\" is not a sandbox block",
            result,
        ));
        checks
    }

    /// A command that connects to 127.0.0.1:`port` and exits 0 on success, if the
    /// machine has a tool for it (bash's /dev/tcp, else python3).
    fn tcp_connect_command(port: u16) -> Option<String> {
        for bash in ["/bin/bash", "/usr/bin/bash"] {
            if Path::new(bash).is_file() {
                return Some(format!("{bash} -c 'echo > /dev/tcp/127.0.0.1/{port}'"));
            }
        }
        let python = std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("python3"))
                .find(|candidate| candidate.is_file())
        })?;
        Some(format!(
            "{} -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 5).close()'",
            python.display()
        ))
    }

    fn network_checks(
        sandbox: &dyn Sandbox,
        status: &SandboxStatus,
        policy: &SandboxPolicy,
        cwd: &Path,
    ) -> Vec<SelfTestCheck> {
        let names = [
            "loopback TCP connect succeeds with network: true",
            "loopback TCP connect fails with network: false",
        ];
        let skip_all = |why: String| {
            names
                .iter()
                .map(|name| check(name, CheckResult::Skipped(why.clone())))
                .collect()
        };
        let listener = match TcpListener::bind("127.0.0.1:0") {
            Ok(listener) => listener,
            Err(e) => return skip_all(format!("cannot listen on 127.0.0.1: {e}")),
        };
        let port = match listener.local_addr() {
            Ok(addr) => addr.port(),
            Err(e) => return skip_all(format!("cannot listen on 127.0.0.1: {e}")),
        };
        let Some(command) = tcp_connect_command(port) else {
            return skip_all("neither bash nor python3 is installed".to_owned());
        };
        let mut checks = Vec::new();
        let result = match run_sandboxed(sandbox, policy, &command, cwd, &[]) {
            Err(e) => CheckResult::Failed(e),
            Ok(ran) if ran.out.exit_code == Some(0) => CheckResult::Passed,
            Ok(ran) => CheckResult::Failed(describe(&ran.out)),
        };
        checks.push(check(names[0], result));
        let closed = policy.clone().network(false);
        let result = match &status.enforcement_without_network {
            super::Enforcement::Unenforced { reason } => {
                CheckResult::Skipped(format!("not enforced here: {reason}"))
            }
            super::Enforcement::Enforced { .. } => {
                match run_sandboxed(sandbox, &closed, &command, cwd, &[]) {
                    Err(e) => CheckResult::Failed(e),
                    Ok(ran) if ran.out.exit_code == Some(0) => {
                        CheckResult::Failed("the connection succeeded".to_owned())
                    }
                    Ok(_) => CheckResult::Passed,
                }
            }
        };
        checks.push(check(names[1], result));
        checks
    }
}
