//! Diagnosis: the notices that say why hooks did or did not run ([`Engine::explain`])
//! and what a failed run most likely needs ([`Engine::explain_run`]). Above the
//! engine, since it reads the engine's configs and the lint's tables; the notices
//! themselves are vocabulary (`notice.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::engine::{Engine, TrustState};
use crate::event::CanonicalEvent;
use crate::notice::{Notice, NoticeKind, shell_quote};
use crate::outcome::{FailureKind, HookRun, SandboxState};
use crate::scope::Scope;

/// Timeouts at or above this many seconds were most likely written in milliseconds.
const SUSPICIOUS_TIMEOUT_MS: u64 = 1000 * 1000;

impl Engine {
    /// Why hooks for `event` may not run (or run differently than declared), before
    /// any run: hooks off, the recursion guard, untrusted workspaces that declare
    /// hooks for the event, config warnings, suspicious timeouts. With hooks off or
    /// the guard tripped it returns without touching the disk.
    pub fn explain(&self, event: CanonicalEvent) -> Vec<Notice> {
        if !self.config().hooks_enabled {
            return vec![
                Notice::new(NoticeKind::HooksOff, "external hooks are off: no hook ran")
                    .hint("turn them on with `copse-hooks enable` (or `--enable` for one command)"),
            ];
        }
        if self.recursion_guard_tripped() {
            return vec![Notice::new(
                NoticeKind::RecursionGuard,
                "this process runs inside a hook (COPSE_HOOK_DEPTH is set): hooks never run here, so a hook cannot set off more hooks",
            )];
        }
        let listing = self.list_with(None);
        let mut notices = Vec::new();
        let mut untrusted: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
        for h in &listing.hooks {
            if h.canonical != Some(event) {
                continue;
            }
            if h.scope == Scope::Project && h.trust == TrustState::Untrusted {
                let root = self
                    .workspace_roots()
                    .iter()
                    .find(|r| h.source.starts_with(r))
                    .cloned()
                    .unwrap_or_else(|| h.source.clone());
                untrusted.entry(root).or_default().push(h.command.clone());
            }
            if h.trusted && h.timeout_ms >= SUSPICIOUS_TIMEOUT_MS {
                let secs = h.timeout_ms / 1000;
                notices.push(
                    Notice::new(
                        NoticeKind::TimeoutUnits,
                        format!(
                            "{}[{}] `{}` has a timeout of {secs} s ({} min): timeouts are in seconds",
                            h.event,
                            h.entry,
                            h.command,
                            secs / 60
                        ),
                    )
                    .hint(format!(
                        "if you meant {secs} milliseconds, write \"timeout\": {}",
                        (secs as f64 / 1000.0).max(1.0)
                    ))
                    .source(h.source.clone()),
                );
            }
        }
        for (root, commands) in untrusted {
            notices.push(
                Notice::new(
                    NoticeKind::WorkspaceUntrusted,
                    format!(
                        "workspace {} is not trusted: its project hooks for {} did not run ({})",
                        root.display(),
                        event.name(),
                        commands.join(", ")
                    ),
                )
                .hint(format!(
                    "trusting it would let them run: review them with `copse-hooks --workspace {0} list --untrusted-preview`, then `copse-hooks trust {0}`",
                    shell_quote(&root)
                )),
            );
        }
        for w in &listing.warnings {
            let mut n =
                Notice::new(NoticeKind::ConfigWarning, w.message.clone()).source(w.source.clone());
            if let Some(event) = w
                .event
                .as_deref()
                .filter(|_| w.message.starts_with("Unknown"))
                && let Some(dialect) = listing
                    .hooks
                    .iter()
                    .find(|h| h.source == w.source)
                    .map(|h| h.dialect)
                    .or_else(|| crate::lint::dialect_of_path(&w.source))
                && let Some(near) =
                    crate::lint::did_you_mean(event, crate::lint::known_events(dialect))
            {
                n = n.hint(format!("did you mean \"{near}\"?"));
            }
            notices.push(n);
        }
        notices
    }

    /// For a failed run: its failure, its first stderr line, and a hint when the cause
    /// is recognisable. For a run that did not fail but whose write the sandbox refused
    /// (a logging hook that exits 0 whatever happens): a [`NoticeKind::SandboxRefusal`]
    /// naming the path and the narrowest setting that would allow it. `None` otherwise.
    ///
    /// A run that exited non-zero because the sandbox refused a write counts as
    /// failed here even when its dialect reads the exit as a decision (Cursor and
    /// Claude Code read exit 2 as "deny"): the shell exits 2 when a redirection fails.
    pub fn explain_run(&self, run: &HookRun) -> Option<Notice> {
        let stderr = String::from_utf8_lossy(&run.stderr);
        let sandboxed = matches!(run.sandbox, SandboxState::Blocked | SandboxState::Enforced);
        let refused = stderr
            .lines()
            .find(|l| is_write_refusal(l))
            .filter(|_| sandboxed && run.exit_code != Some(126));
        let what = match (&run.failure, run.exit_code) {
            (Some(f), _) => format!("{}: {}", f.kind.as_str(), f.message),
            (None, Some(0)) => {
                return refused.map(|line| {
                    Notice::new(
                        NoticeKind::SandboxRefusal,
                        format!(
                            "hook `{}` exited 0, but the sandbox refused one of its writes: {}",
                            run.command,
                            line.trim()
                        ),
                    )
                    .hint(self.refusal_hint(line))
                    .source(run.source.clone())
                });
            }
            (None, Some(code)) if refused.is_some() => format!("exit {code}"),
            _ => return None,
        };
        let first = stderr.lines().map(str::trim).find(|l| !l.is_empty());
        let mut message = format!("hook `{}` failed ({what})", run.command);
        if let Some(line) = first {
            message.push_str(&format!("; stderr: {line}"));
        }
        let mut notice = Notice::new(NoticeKind::HookFailed, message).source(run.source.clone());
        if let Some(line) = refused {
            notice = notice.hint(self.refusal_hint(line));
        } else if run
            .failure
            .as_ref()
            .is_some_and(|f| f.kind == FailureKind::Sandbox)
        {
            notice = notice.hint(
                "see `copse-hooks sandbox check` for what this machine enforces, and `copse-hooks show` for the run",
            );
        } else if run.exit_code == Some(126) {
            let program = run.command.split_whitespace().next().unwrap_or("");
            notice = notice.hint(format!(
                "exit 126 means the command is not executable: chmod +x {program}"
            ));
        } else if run.exit_code == Some(127) {
            // Where the hook started (`Adapter::cwd`): Cursor and Copse user hooks in
            // their config file's directory, every other hook in the workspace root.
            let from = if run.scope == Scope::User
                && crate::dialect::user_hooks_start_in_config_dir(run.dialect)
            {
                match run.source.parent() {
                    Some(dir) => format!("its config file's directory, {}", dir.display()),
                    None => "its config file's directory".to_string(),
                }
            } else {
                "the workspace root".to_string()
            };
            notice = notice.hint(format!(
                "exit 127 means the command was not found: this hook's relative commands run from {from}; use an absolute path or one on PATH"
            ));
        }
        Some(notice)
    }
}

impl Engine {
    /// The hint for a sandbox write refusal: the refused path and the narrowest
    /// `sandboxWritablePaths` entry that would allow it. The setting takes directories,
    /// so that is the directory the hook wrote in — unless that is the home directory
    /// itself (or `/`), which would open far more than the hook needs: then a dedicated
    /// directory is proposed instead.
    fn refusal_hint(&self, line: &str) -> String {
        let settings = crate::settings::Settings::path_in(&self.config().copse_dir);
        let allowed = format!(
            "hooks may write only in the workspace, their private TMPDIR and the directories listed in \"sandboxWritablePaths\" in {}",
            settings.display()
        );
        let Some(path) = refused_path(line) else {
            return format!("the sandbox refused a write: {allowed}");
        };
        let home = &self.config().home;
        let path = match path.strip_prefix("~") {
            Ok(rest) => home.join(rest),
            Err(_) => path,
        };
        let dir = writable_dir(&path);
        let too_wide = dir == *home || dir.parent().is_none();
        if too_wide {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "hook.log".to_owned());
            let dedicated = home.join(".local/state/copse-hooks-logs");
            format!(
                "the sandbox refused a write to {}: {allowed}. Allowing {} would let every hook write anywhere in it: have the hook write in a directory of its own instead (e.g. {}/{name}) and add \"{}\" to \"sandboxWritablePaths\", or use $TMPDIR for scratch files",
                path.display(),
                dir.display(),
                dedicated.display(),
                tilde(&dedicated, home)
            )
        } else {
            format!(
                "the sandbox refused a write to {}: {allowed} — the narrowest entry that allows it is \"{}\" (add it to \"sandboxWritablePaths\")",
                path.display(),
                tilde(&dir, home)
            )
        }
    }
}

/// `path` written with `~/` when it lies in `home` (as the settings file accepts it).
fn tilde(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) if !rest.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => path.display().to_string(),
    }
}

fn is_write_refusal(line: &str) -> bool {
    [
        "Permission denied",
        "Read-only file system",
        "Operation not permitted",
    ]
    .iter()
    .any(|m| line.contains(m))
}

/// The path a shell or coreutils error line names: the first token that looks like
/// an absolute or home-relative path (quotes and a trailing colon stripped).
fn refused_path(line: &str) -> Option<PathBuf> {
    line.split_whitespace()
        .map(|t| t.trim_matches(|c| matches!(c, '\'' | '"' | '`' | '‘' | '’' | ':' | ',')))
        .find(|t| t.starts_with('/') || t.starts_with("~/"))
        .map(PathBuf::from)
}

/// The directory to allow for a refused path: the one the hook tried to write in.
fn writable_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_paths_from_common_error_lines() {
        assert_eq!(
            refused_path("sh: 1: cannot create /home/me/.cache/x.log: Permission denied"),
            Some(PathBuf::from("/home/me/.cache/x.log"))
        );
        assert_eq!(
            refused_path("touch: cannot touch '/home/me/hook-logs/a': Permission denied"),
            Some(PathBuf::from("/home/me/hook-logs/a"))
        );
        assert_eq!(refused_path("mkdir: Permission denied"), None);
        assert_eq!(
            writable_dir(Path::new("/home/me/.cache/x.log")),
            PathBuf::from("/home/me/.cache")
        );
    }
}
