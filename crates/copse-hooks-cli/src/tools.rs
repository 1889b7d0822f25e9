//! The canonical tool table, vendor aliases and did-you-mean suggestions.

/// Canonical tool ids the engine maps to every dialect (`docs/tools.md`).
pub const CANONICAL_TOOLS: &[&str] = copse_hooks::tool::CANONICAL;

/// Vendor tool names accepted by `gate` as aliases: (vendor name, vendor, canonical).
pub const VENDOR_ALIASES: &[(&str, &str, &str)] = &[
    ("Bash", "Claude Code", "run_shell"),
    ("Read", "Claude Code", "read_file"),
    ("Write", "Claude Code", "write_file"),
    ("Edit", "Claude Code", "str_replace"),
    ("MultiEdit", "Claude Code", "str_replace"),
    ("Grep", "Claude Code", "search_code"),
    ("Glob", "Claude Code", "find_files"),
    ("LS", "Claude Code", "list_dir"),
    ("Agent", "Claude Code", "explore"),
    ("Task", "Claude Code", "explore"),
    ("Shell", "Cursor", "run_shell"),
    ("Delete", "Cursor", "delete_file"),
    ("run_shell_command", "Gemini CLI", "run_shell"),
    ("replace", "Gemini CLI", "str_replace"),
    ("search_file_content", "Gemini CLI", "search_code"),
    ("glob", "Gemini CLI", "find_files"),
    ("list_directory", "Gemini CLI", "list_dir"),
    ("shell", "Codex", "run_shell"),
    ("local_shell", "Codex", "run_shell"),
    ("exec_command", "Codex", "run_shell"),
];

/// The canonical id for a vendor tool name, with the vendor.
pub fn alias(name: &str) -> Option<(&'static str, &'static str)> {
    VENDOR_ALIASES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, vendor, canonical)| (*canonical, *vendor))
}

/// Whether `name` is a known canonical tool (MCP tools are `mcp__<server>__<tool>`).
pub fn is_canonical(name: &str) -> bool {
    CANONICAL_TOOLS.contains(&name) || name.starts_with("mcp__")
}

/// The closest candidate to `word`, when it is close enough to be a typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::damerau_levenshtein(&lower, &c.to_ascii_lowercase()),
                c,
            )
        })
        .filter(|(d, c)| *d > 0 && *d <= (c.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}
