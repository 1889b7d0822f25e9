//! Why hooks did or did not run: notices a host shows beside a verdict.
//!
//! A verdict alone says `allow` both when every hook agreed and when no hook ran at
//! all. `Engine::explain` (in `diagnose.rs`) tells the two apart — hooks off, the recursion guard, an
//! untrusted workspace that declares hooks for the event, config warnings, a timeout
//! written in milliseconds — and `Engine::explain_run` turns a failed run into its
//! first stderr line plus a hint when the cause is recognisable (a sandbox write
//! refusal, a script without the execute bit, a missing command). Each notice has a
//! stable [`NoticeKind`]; the text is for people.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// What a notice is about. The snake_case names are a stable contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NoticeKind {
    /// External hooks are turned off: nothing ran.
    HooksOff,
    /// This process runs inside a hook: hooks never run here.
    RecursionGuard,
    /// A workspace that declares hooks for the event is not trusted.
    WorkspaceUntrusted,
    /// A trusted config changed since it was trusted: its hooks do not run.
    ConfigChanged,
    /// A config file has a problem (the rest of it applies).
    ConfigWarning,
    /// A project hook runs for the first time in this session.
    FirstRun,
    /// The OS sandbox is not enforced on this machine.
    SandboxUnenforced,
    /// A hook run failed: its first stderr line, and a hint when recognisable.
    HookFailed,
    /// A hook's run went on (its answer counts), but the sandbox refused one of its
    /// writes: the path, and the narrowest setting that would allow it.
    SandboxRefusal,
    /// A timeout so large it was probably meant in milliseconds.
    TimeoutUnits,
}

impl NoticeKind {
    /// The snake_case name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::HooksOff => "hooks_off",
            NoticeKind::RecursionGuard => "recursion_guard",
            NoticeKind::WorkspaceUntrusted => "workspace_untrusted",
            NoticeKind::ConfigChanged => "config_changed",
            NoticeKind::ConfigWarning => "config_warning",
            NoticeKind::FirstRun => "first_run",
            NoticeKind::SandboxUnenforced => "sandbox_unenforced",
            NoticeKind::HookFailed => "hook_failed",
            NoticeKind::SandboxRefusal => "sandbox_refusal",
            NoticeKind::TimeoutUnits => "timeout_units",
        }
    }
}

/// One notice: what happened, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Notice {
    /// The stable kind.
    pub kind: NoticeKind,
    /// One line for people. May quote config or hook text verbatim: escape it before
    /// it reaches a terminal.
    pub message: String,
    /// What to do, when there is something to do.
    pub hint: Option<String>,
    /// The config file concerned, when there is one.
    pub source: Option<PathBuf>,
}

impl Notice {
    /// A notice without hint or source.
    pub fn new(kind: NoticeKind, message: impl Into<String>) -> Notice {
        Notice {
            kind,
            message: message.into(),
            hint: None,
            source: None,
        }
    }

    /// With a hint.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Notice {
        self.hint = Some(hint.into());
        self
    }

    /// With the config file concerned.
    #[must_use]
    pub fn source(mut self, source: impl Into<PathBuf>) -> Notice {
        self.source = Some(source.into());
        self
    }
}

/// The notice for a pinned file (config or script) that changed since its workspace
/// was trusted. The hint names the exact commands to paste: the workspace root is the
/// configured root that holds `path` (absolute, shell-quoted), never a placeholder.
pub(crate) fn config_changed(roots: &[PathBuf], path: &Path) -> Notice {
    let root = roots
        .iter()
        .filter(|r| path.starts_with(r))
        .max_by_key(|r| r.as_os_str().len())
        .cloned()
        .or_else(|| path.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf());
    let root = shell_quote(&root);
    Notice::new(
        NoticeKind::ConfigChanged,
        format!(
            "{} changed since the workspace was trusted: its hooks do not run",
            path.display()
        ),
    )
    .hint(format!(
        "see what changed with `copse-hooks trust --diff {root}`, then trust it again with `copse-hooks trust {root}`"
    ))
    .source(path.to_path_buf())
}

/// `path` as one shell word a user can paste: unchanged when it holds only characters
/// no POSIX shell treats specially, else single-quoted (a `'` inside becomes `'\''`).
pub fn shell_quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
    if plain {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting_of_trust_paths() {
        assert_eq!(shell_quote(Path::new("/home/me/ws")), "/home/me/ws");
        assert_eq!(shell_quote(Path::new("/home/me/my ws")), "'/home/me/my ws'");
        assert_eq!(shell_quote(Path::new("/tmp/it's")), r"'/tmp/it'\''s'");
        assert_eq!(shell_quote(Path::new("/a/$(x)")), "'/a/$(x)'");
        let n = config_changed(
            &[PathBuf::from("/w"), PathBuf::from("/w/sub")],
            Path::new("/w/sub/.cursor/hooks.json"),
        );
        assert_eq!(
            n.hint.as_deref(),
            Some(
                "see what changed with `copse-hooks trust --diff /w/sub`, then trust it again with `copse-hooks trust /w/sub`"
            )
        );
    }
}
