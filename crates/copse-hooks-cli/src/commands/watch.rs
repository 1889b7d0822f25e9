//! `watch [DIR]`: a terminal session for hook authors.
//!
//! It follows the audit store and prints each hook run as it is recorded (whatever
//! host ran it: `gate`, the shim, the daemon), and it watches the files trust pinned
//! for the workspace. When one changes, it prints the diff against the pinned content
//! and — only when stdin is a terminal — asks to trust the workspace again with one
//! key. Nothing is ever trusted without that keypress: with stdin not a terminal it
//! only shows; a key other than `y` declines; and when the files change again before
//! the key, the new diff is shown and asked about instead of trusting content the
//! user did not see. `q` or Ctrl-C ends the session (the terminal mode is restored).

use std::collections::HashSet;
use std::io::{IsTerminal as _, Read as _};
use std::path::Path;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Result;
use copse_hooks::spine::{RunFilter, RunSummary, Spine};
use copse_hooks::{EngineConfig, Settings};

use crate::args::Global;
use crate::commands::settings::{PinState, TrustStatus, print_pinned_file, trust_status};
use crate::output::{self, paint};

/// The changed pinned files as shown: each path with its current hash.
type Fingerprint = Vec<(std::path::PathBuf, Option<String>)>;

/// How often the store and the pinned files are looked at.
const TICK: Duration = Duration::from_millis(300);

pub fn run(global: &Global, dir: Option<&Path>) -> Result<ExitCode> {
    let root = crate::commands::settings::root_arg(global, dir)?;
    let interactive = std::io::stdin().is_terminal();
    let _raw = if interactive { RawMode::enter() } else { None };
    let keys = spawn_key_reader(interactive);
    let quoted = copse_hooks::shell_quote(&root);
    // Before the banner: a run started by someone who saw the banner is always shown.
    let since = now_ms();
    outln!(
        "Watching {} — hook runs appear as they are recorded.",
        output::path(&root)
    );
    if interactive {
        outln!(
            "{}",
            paint(
                "When a pinned file changes you will see the diff and can trust it with `y`; `q` quits.",
                output::DIM,
                false
            )
        );
    } else {
        outln!(
            "{}",
            paint(
                &format!(
                    "stdin is not a terminal: changes are shown, never trusted here (trust with `copse-hooks trust {quoted}`)."
                ),
                output::DIM,
                false
            )
        );
    }
    let settings = Settings::load(&crate::commands::settings::settings_path()).ok();
    if settings.as_ref().and_then(|s| s.spine) == Some(false) {
        outln!(
            "{}",
            paint(
                "The audit store is off (\"spine\": false in settings.json): no runs can be shown, only changes to pinned files.",
                output::DIM,
                false
            )
        );
    }
    if !settings.is_some_and(|s| s.cursor_hooks_enabled) {
        outln!(
            "{}",
            paint(
                "External hooks are off: runs appear only from commands given --enable (`copse-hooks enable` turns them on).",
                output::DIM,
                false
            )
        );
    }
    let copse_dir = EngineConfig::process_copse_dir();
    let mut spine: Option<Spine> = None;
    let mut seen_runs: HashSet<String> = HashSet::new();
    // The changed files last shown (path and current hash), and whether a prompt
    // about exactly them is open.
    let mut shown: Option<Fingerprint> = None;
    // Every pinned file as it was when that diff was shown: what a `y` may pin.
    let mut shown_all: Fingerprint = Vec::new();
    let mut prompt_open = false;
    let mut reported_status: Option<&'static str> = None;
    loop {
        // Runs first: an author saving a file and gating sees the run, then the diff.
        if spine.is_none() {
            spine = Spine::open_read_only(copse_dir.join("spine.db")).ok();
        }
        if let Some(s) = &spine {
            let filter = RunFilter {
                since: Some(since),
                limit: Some(200),
                ..RunFilter::default()
            };
            if let Ok(mut rows) = s.query(&filter) {
                rows.sort_by_key(|r| r.started_at);
                for r in rows {
                    if seen_runs.insert(r.run_id.clone()) {
                        outln!("{}", run_line(&r));
                    }
                }
            }
        }
        let status = trust_status(&root)?;
        let changed: Vec<_> = match &status {
            TrustStatus::Pinned(files) => files
                .iter()
                .filter(|f| f.state != PinState::Unchanged)
                .cloned()
                .collect(),
            TrustStatus::NotTrusted | TrustStatus::Unpinned => Vec::new(),
        };
        let note = match &status {
            TrustStatus::NotTrusted => Some("not trusted: its project hooks do not run"),
            TrustStatus::Unpinned => Some("trusted without pins: nothing to compare"),
            TrustStatus::Pinned(_) => None,
        };
        if note != reported_status {
            if let Some(n) = note {
                outln!(
                    "{} {n} (`copse-hooks trust {quoted}` pins it).",
                    output::path(&root)
                );
            }
            reported_status = note;
        }
        let fingerprint: Fingerprint = changed
            .iter()
            .map(|f| (f.path.clone(), f.current_sha256.clone()))
            .collect();
        let all: Fingerprint = match &status {
            TrustStatus::Pinned(files) => files
                .iter()
                .map(|f| (f.path.clone(), f.current_sha256.clone()))
                .collect(),
            TrustStatus::NotTrusted | TrustStatus::Unpinned => Vec::new(),
        };
        if changed.is_empty() {
            if shown.take().is_some() {
                outln!("The pinned files match what was trusted again.");
                prompt_open = false;
            }
        } else if shown.as_ref() != Some(&fingerprint) {
            outln!(
                "{} pinned file{} changed since the workspace was trusted; {} hooks do not run:",
                changed.len(),
                if changed.len() == 1 { "" } else { "s" },
                if changed.len() == 1 { "its" } else { "their" }
            );
            for f in &changed {
                print_pinned_file(f);
            }
            if interactive {
                out!("Trust {} as it is now? [y/N] ", output::path(&root));
                prompt_open = true;
            } else {
                outln!("To let them run: copse-hooks trust {quoted}");
            }
            shown = Some(fingerprint.clone());
            shown_all = all;
        }
        match keys.recv_timeout(TICK) {
            Ok(b'q' | 3 | 4) => {
                outln!();
                return Ok(ExitCode::SUCCESS);
            }
            Ok(key) if prompt_open => {
                outln!(
                    "{}",
                    if key.is_ascii_graphic() {
                        key as char
                    } else {
                        ' '
                    }
                );
                prompt_open = false;
                if key == b'y' || key == b'Y' {
                    // Trust only what was shown: `trust_expecting` refuses when a
                    // file it would pin differs from the content shown (an edit since),
                    // and the new diff is then shown and asked about.
                    if let Err(e) =
                        crate::commands::settings::trust_expecting(global, &root, &shown_all)
                    {
                        outln!("{}", output::clean(&format!("{e:#}")));
                    }
                    shown = None;
                } else {
                    outln!("Not trusted. Their hooks stay off until `copse-hooks trust {quoted}`.");
                }
            }
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // stdin closed: nothing can be asked any more; keep showing.
                std::thread::sleep(TICK);
            }
        }
    }
}

/// One recorded run on one line: time, event, outcome (exit code), hook, duration.
fn run_line(r: &RunSummary) -> String {
    let stamp = crate::time::format_time(r.started_at, false);
    let time = stamp.get(11..19).unwrap_or(&stamp);
    let outcome = match r.outcome.as_str() {
        "deny" => paint("deny", output::RED, false),
        "ask" => paint("ask", output::YELLOW, false),
        "failed" => paint("failed", output::RED, false),
        other => other.to_string(),
    };
    let exit = match (r.exit_code, &r.failure) {
        (_, Some(f)) => format!(" ({f})"),
        (Some(code), None) => format!(" (exit {code})"),
        (None, None) => String::new(),
    };
    // What the agent tried, beside the hook that judged it.
    let call = match &r.tool_call {
        Some(t) if t.input.is_empty() => format!("{} · ", output::clean(&t.tool)),
        Some(t) => format!("{} {} · ", output::clean(&t.tool), output::clean(&t.input)),
        None => String::new(),
    };
    format!(
        "{} {} {}{} {call}hook {} {}",
        paint(time, output::DIM, false),
        output::clean(&r.event),
        outcome,
        exit,
        output::clean(&r.command),
        paint(&format!("{} ms", r.duration_ms), output::DIM, false)
    )
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Keys from stdin, one byte each, on a channel (a thread blocks on the read). With
/// stdin not a terminal nothing is read: piped bytes are never taken as consent.
fn spawn_key_reader(interactive: bool) -> mpsc::Receiver<u8> {
    let (tx, rx) = mpsc::channel();
    if interactive {
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut byte = [0u8; 1];
            while let Ok(1) = stdin.read(&mut byte) {
                if tx.send(byte[0]).is_err() {
                    break;
                }
            }
        });
    }
    // Without a reader the sender is dropped at once: the loop sees `Disconnected`.
    rx
}

/// The terminal in single-key mode (no line buffering, no echo, Ctrl-C as a key so
/// the mode is always restored), restored on drop.
struct RawMode {
    saved: libc::termios,
}

impl RawMode {
    fn enter() -> Option<RawMode> {
        // SAFETY: all-zeroes is a valid termios to be filled by tcgetattr, which only
        // writes into it; fd 0 is our stdin, checked to be a terminal by the caller.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: see above; tcgetattr writes only into `saved`.
        if unsafe { libc::tcgetattr(0, &mut saved) } != 0 {
            return None;
        }
        let mut raw = saved;
        raw.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG);
        raw.c_cc[libc::VMIN] = 1;
        raw.c_cc[libc::VTIME] = 0;
        // SAFETY: tcsetattr only reads `raw`, a termios derived from the terminal's own.
        if unsafe { libc::tcsetattr(0, libc::TCSANOW, &raw) } != 0 {
            return None;
        }
        Some(RawMode { saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        // SAFETY: restores the attributes read in `enter`; tcsetattr only reads them.
        unsafe {
            libc::tcsetattr(0, libc::TCSANOW, &self.saved);
        }
    }
}
