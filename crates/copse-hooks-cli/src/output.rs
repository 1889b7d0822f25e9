//! Formatting: JSON shapes (a stable contract) and coloured human output.

use std::fmt::Write as _;

use copse_hooks::{HookRun, Listing};
use copse_hooks_wire::output as wire;
use serde_json::Value;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

pub const RED: &str = "31";
pub const GREEN: &str = "32";
pub const YELLOW: &str = "33";
pub const DIM: &str = "2";
pub const BOLD: &str = "1";

/// `--color`: when to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// Colour when the stream is a terminal and `NO_COLOR` is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Applies `--color` to every stream this process writes (anstream strips the
/// styles when colour is off; `auto` honours `NO_COLOR`, `CLICOLOR_FORCE` and TTYs).
pub fn init_color(when: ColorWhen) {
    let choice = match when {
        ColorWhen::Auto => anstream::ColorChoice::Auto,
        ColorWhen::Always => anstream::ColorChoice::Always,
        ColorWhen::Never => anstream::ColorChoice::Never,
    };
    choice.write_global();
}

/// Wraps `text` in a style; the output stream decides whether it shows.
pub fn paint(text: &str, code: &str, _stderr: bool) -> String {
    format!("\x1b[{code}m{text}\x1b[0m")
}

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether stdout's reader went away (a broken pipe): later output is dropped and the
/// command ends quietly.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Writes one formatted line to stdout. A broken pipe (`copse-hooks log | head`) is
/// remembered and ends the output quietly; any other write error (a full disk,
/// `ulimit -f`) is reported once on stderr.
pub fn write_out(args: std::fmt::Arguments<'_>, newline: bool) {
    if stdout_closed() {
        return;
    }
    let mut out = anstream::stdout().lock();
    let result = if newline {
        writeln!(out, "{args}")
    } else {
        write!(out, "{args}")
    }
    .and_then(|()| out.flush());
    if let Err(e) = result {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            write_err(format_args!("error: failed to write the output: {e}"));
        }
    }
}

/// Writes one formatted line to stderr (errors writing stderr are ignored: there is
/// nowhere left to report them).
pub fn write_err(args: std::fmt::Arguments<'_>) {
    let mut err = anstream::stderr().lock();
    let _ = writeln!(err, "{args}");
}

/// `println!` that ends quietly on a broken pipe.
macro_rules! outln {
    () => { $crate::output::write_out(format_args!(""), true) };
    ($($t:tt)*) => { $crate::output::write_out(format_args!($($t)*), true) };
}

/// `print!` that ends quietly on a broken pipe.
macro_rules! out {
    ($($t:tt)*) => { $crate::output::write_out(format_args!($($t)*), false) };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    ($($t:tt)*) => { $crate::output::write_err(format_args!($($t)*)) };
}

/// Whether `c` must not reach a terminal raw: C0 and C1 controls (ESC, CSI, BEL,
/// backspace, carriage return…), DEL, bidirectional overrides and isolates, and the
/// invisible marks that reorder or hide text.
fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}' | '\u{2029}'
            | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

/// Escapes text that came from a config, a hook or a payload before it reaches a
/// terminal: controls and bidi marks become visible `\x1b` / `\u{202e}` escapes, so
/// a hostile command can neither clear the screen nor hide or reorder a warning.
/// Newlines are escaped too: one field stays one line.
pub fn clean(text: &str) -> String {
    clean_with(text, false)
}

/// [`clean`] for a multi-line block (stdout, stderr, payloads): keeps `\n` and tabs.
pub fn clean_block(text: &str) -> String {
    clean_with(text, true)
}

fn clean_with(text: &str, keep_lines: bool) -> String {
    if !text.chars().any(is_unsafe_char) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' | '\t' if keep_lines => out.push(c),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if is_unsafe_char(c) => {
                let n = u32::from(c);
                if n < 0x100 {
                    let _ = write!(out, "\\x{n:02x}");
                } else {
                    let _ = write!(out, "\\u{{{n:04x}}}");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Whether `text` holds terminal control sequences or bidi marks (tabs and newlines
/// aside): `lint` and `list` flag such commands.
pub fn has_hostile_chars(text: &str) -> bool {
    text.chars()
        .any(|c| c != '\n' && c != '\t' && is_unsafe_char(c))
}

/// A path for display, escaped.
pub fn path(p: &std::path::Path) -> String {
    clean(&crate::workspace::display_path(p))
}

/// Milliseconds, rounded, as in JSON.
pub fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A typed output as a JSON value (serialising these plain structs cannot fail).
fn value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// A listing as JSON (the `list --json` contract, `schemas/output/list.schema.json`).
pub fn listing_json(l: &Listing) -> Value {
    value(&wire::ListOutput::from(l))
}

/// The coloured decision word, padded to `width` (padding outside the styles).
pub fn decision_padded(decision: &str, width: usize) -> String {
    let pad = width.saturating_sub(decision.chars().count());
    format!("{}{}", decision_word(decision), " ".repeat(pad))
}

/// The coloured decision word.
pub fn decision_word(decision: &str) -> String {
    let code = match decision {
        "deny" | "failed" => RED,
        "ask" => YELLOW,
        "allow" => GREEN,
        _ => DIM,
    };
    paint(decision, code, false)
}

/// One line per run, indented, for human output.
pub fn run_lines(run: &HookRun) -> Vec<String> {
    if let Some(g) = &run.guard {
        return vec![guard_line(run, g)];
    }
    let mut lines = Vec::new();
    let status = match (&run.failure, run.exit_code) {
        _ if run.blocked => "not run: the config cannot run".to_string(),
        (Some(f), _) => format!("{} ({})", f.kind.as_str(), clean(&f.message)),
        (None, Some(code)) => format!("exit {code}"),
        (None, None) => "killed".to_string(),
    };
    lines.push(format!(
        "  {} {} {} {}",
        decision_padded(run.result.as_str(), 7),
        paint(&clean(&run.event), BOLD, false),
        clean(&run.command),
        paint(
            &format!(
                "[{} {} · {} · {} ms]",
                run.dialect.as_str(),
                run.scope.as_str(),
                status,
                millis(run.duration)
            ),
            DIM,
            false
        )
    ));
    lines.push(format!(
        "          {}",
        paint(&path(&run.source), DIM, false)
    ));
    lines
}

/// The built-in guard's run as one line: "guard rule `destructive.home` refused
/// `rm -rf ~`" (or allowed, or would have refused in observe mode).
pub fn guard_line(run: &HookRun, g: &copse_hooks::GuardRun) -> String {
    let stage = if g.rewritten {
        " the rewritten input"
    } else {
        ""
    };
    let text = match (&g.rule, run.outcome.decision, g.would, &g.broken) {
        (_, _, _, Some(b)) => format!(
            "guard refused every call: its policy is refused ({})",
            clean(b)
        ),
        (Some(rule), Some(d), _, _) => format!(
            "guard rule `{}` {}{stage} `{}`",
            clean(rule),
            if d == copse_hooks::Decision::Deny {
                "refused"
            } else {
                "asks about"
            },
            clean(g.matched.as_deref().unwrap_or(""))
        ),
        (Some(rule), None, Some(w), _) => format!(
            "guard rule `{}` would {}{stage} `{}` ({} mode: allowed)",
            clean(rule),
            if w == copse_hooks::Decision::Deny {
                "refuse"
            } else {
                "ask about"
            },
            clean(g.matched.as_deref().unwrap_or("")),
            clean(&g.mode)
        ),
        _ => format!(
            "guard allowed{stage} ({} mode, no rule matched)",
            clean(&g.mode)
        ),
    };
    let text = if g.subsumed {
        format!("{text} (the verdict was already this strict)")
    } else {
        text
    };
    format!("  {} {}", decision_padded(run.result.as_str(), 7), text)
}
