//! Our own entries in vendor configs: `copse-hooks shim --agent NAME` is how an agent
//! calls copse, never a hook. Discovery drops them when it parses a config (running
//! one would run copse inside itself); the agent module and the CLI recognise them.

use std::time::Duration;

const MAX_DEADLINE_SECS: f64 = 86_400.0;

/// Parses a shim deadline (`--deadline SECONDS`): a positive, finite number of
/// seconds (an integer or a decimal), at most a day.
pub fn parse_deadline(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(format!("{text:?} must be a positive number of seconds"));
    }
    if secs > MAX_DEADLINE_SECS {
        return Err(format!(
            "{text:?} is more than a day ({MAX_DEADLINE_SECS} s)"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Whether a hook command is one of our own shim entries: it runs `copse-hooks shim
/// --agent NAME` (any path to the executable, quoted or not, with or without
/// `--deadline SECONDS`). Such an entry is how an agent calls copse, never a hook:
/// `gate`, `list` and the engine skip it (running it would run copse inside itself).
pub fn is_shim_command(command: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    let Some(at) = words.iter().position(|w| {
        let w = w.trim_matches(|c| c == '\'' || c == '"');
        let base = w.rsplit(['/', '\\']).next().unwrap_or(w);
        base == "copse-hooks" || base == "copse-hooks.exe"
    }) else {
        return false;
    };
    // The executable is the first word, or a quoted path that spans the first words
    // (`'/opt/some where/copse-hooks'`): never an argument of another command.
    let program = words[..=at].join(" ");
    let quoted = ['\'', '"']
        .into_iter()
        .any(|q| program.len() > 1 && program.starts_with(q) && program.ends_with(q));
    if at > 0 && !quoted {
        return false;
    }
    let rest = &words[at + 1..];
    match rest {
        ["shim", "--agent", name] => !name.is_empty(),
        ["shim", "--agent", name, "--deadline", secs] => {
            !name.is_empty() && parse_deadline(secs).is_ok()
        }
        _ => false,
    }
}

/// Drops our own shim entries ([`is_shim_command`]) from a parsed config, keeping
/// the per-hook extras aligned with the hooks that remain.
pub fn drop_shim_entries(parsed: &mut crate::dialect::ParsedConfig) {
    if !parsed.hooks.iter().any(|h| is_shim_command(&h.command)) {
        return;
    }
    let hooks = std::mem::take(&mut parsed.hooks);
    let extras = std::mem::take(&mut parsed.extras);
    let had_extras = !extras.is_empty();
    for (i, hook) in hooks.into_iter().enumerate() {
        if is_shim_command(&hook.command) {
            continue;
        }
        if had_extras {
            parsed
                .extras
                .push(extras.get(i).cloned().unwrap_or_default());
        }
        parsed.hooks.push(hook);
    }
}
