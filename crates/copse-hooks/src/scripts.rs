//! Which workspace files a hook command runs, so trust can pin their content.
//!
//! The command's first simple command is split into words (quotes honoured, leading
//! `NAME=value` assignments skipped, `$CLAUDE_PROJECT_DIR`, `$CURSOR_PROJECT_DIR` and
//! `$COPSE_PROJECT_DIR` expanded to the root). Its first word is a script when it is
//! a path; for a common interpreter (`sh`, `bash`, `python3`, `node`, `deno run`,
//! `uv run`, `npx tsx`, ...) the first argument after its options is. Only files
//! inside the workspace root are pinned. What a script itself loads (imports,
//! sourced files, modules) is not: docs/security.md says so.

use std::path::{Component, Path, PathBuf};

/// Interpreters whose first non-option argument is the script they run.
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "python",
    "python3",
    "python2",
    "node",
    "nodejs",
    "bun",
    "ruby",
    "perl",
    "php",
    "tsx",
    "ts-node",
    "lua",
    "Rscript",
    "pwsh",
    "osascript",
];

/// Options that mean "the code is inline, not in a file" (nothing to pin) or "run a
/// module by name".
const INLINE: &[&str] = &["-c", "-e", "-m", "--eval", "-p", "--print", "-E", "-r"];

fn split_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                cur.push(n);
                            }
                        }
                        _ => cur.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            ';' | '|' | '&' | '<' | '>' | '(' | ')' | '\n' | '`' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                }
                return words;
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

fn expand(word: &str, root: &Path) -> String {
    let root = root.display().to_string();
    let mut w = word.to_string();
    for var in [
        "CLAUDE_PROJECT_DIR",
        "CURSOR_PROJECT_DIR",
        "COPSE_PROJECT_DIR",
    ] {
        w = w.replace(&format!("${{{var}}}"), &root);
        w = w.replace(&format!("${var}"), &root);
    }
    w
}

/// Lexically normalises `p` (no filesystem access): `.` dropped, `..` pops.
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn candidate(word: &str, root: &Path) -> Option<PathBuf> {
    if word.is_empty() || word.starts_with('~') || word.contains('$') {
        return None;
    }
    let path = Path::new(word);
    let full = if path.is_absolute() {
        normalise(path)
    } else {
        normalise(&root.join(path))
    };
    full.starts_with(root).then_some(full)
}

/// The workspace files `command` runs, resolved against `root` (where project hooks
/// start), in order, without duplicates.
pub fn scripts_of(command: &str, root: &Path) -> Vec<PathBuf> {
    let words: Vec<String> = split_words(command)
        .into_iter()
        .map(|w| expand(&w, root))
        .collect();
    let mut rest = words
        .iter()
        .map(String::as_str)
        .skip_while(|w| {
            w.split_once('=').is_some_and(|(k, _)| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
        })
        .peekable();
    let mut out = Vec::new();
    let Some(first) = rest.next() else {
        return out;
    };
    // `env [-i] [NAME=v]... prog` and `exec prog`: look through to the program.
    let mut first = first;
    while matches!(first, "env" | "exec" | "command" | "nice" | "nohup") {
        match rest.find(|w| !w.starts_with('-') && !w.contains('=')) {
            Some(w) => first = w,
            None => return out,
        }
    }
    if first.contains('/') {
        out.extend(candidate(first, root));
    }
    let program = first.rsplit('/').next().unwrap_or(first);
    let interpreter = match program {
        "deno" | "uv" | "poetry" | "pipenv" => {
            // `deno run [opts] script`, `uv run [opts] script` (or `uv run python x`).
            if rest.next() != Some("run") {
                return out;
            }
            true
        }
        "npx" | "bunx" | "pnpx" => {
            // `npx [opts] tsx script`.
            match rest.find(|w| !w.starts_with('-')) {
                Some(tool) if INTERPRETERS.contains(&tool) => true,
                _ => return out,
            }
        }
        p => INTERPRETERS.contains(&p) || p.starts_with("python3."),
    };
    if !interpreter {
        return out;
    }
    for w in rest {
        if INLINE.contains(&w) {
            break;
        }
        if w.starts_with('-') {
            continue;
        }
        // `uv run python script.py`: look through the named interpreter.
        if INTERPRETERS.contains(&w) || w.starts_with("python3.") {
            continue;
        }
        out.extend(candidate(w, root));
        break;
    }
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_script_of_paths_and_interpreters() {
        let root = Path::new("/ws");
        let s = |c: &str| scripts_of(c, root);
        let p = |x: &str| vec![PathBuf::from(x)];
        assert_eq!(s(".cursor/hooks/guard.sh"), p("/ws/.cursor/hooks/guard.sh"));
        assert_eq!(s("./guard.sh --strict"), p("/ws/guard.sh"));
        assert_eq!(s("bash .cursor/hooks/g.sh"), p("/ws/.cursor/hooks/g.sh"));
        assert_eq!(s("sh -eu 'hooks/a b.sh' x"), p("/ws/hooks/a b.sh"));
        assert_eq!(s("python3 -u hooks/check.py"), p("/ws/hooks/check.py"));
        assert_eq!(
            s("/usr/bin/python3 hooks/check.py"),
            p("/ws/hooks/check.py")
        );
        assert_eq!(s("node hooks/x.js | tee log"), p("/ws/hooks/x.js"));
        assert_eq!(s("deno run -A hooks/x.ts"), p("/ws/hooks/x.ts"));
        assert_eq!(s("uv run hooks/x.py"), p("/ws/hooks/x.py"));
        assert_eq!(s("uv run python hooks/x.py"), p("/ws/hooks/x.py"));
        assert_eq!(s("npx tsx hooks/x.ts"), p("/ws/hooks/x.ts"));
        assert_eq!(s("bun hooks/x.ts"), p("/ws/hooks/x.ts"));
        assert_eq!(s("ruby hooks/x.rb"), p("/ws/hooks/x.rb"));
        assert_eq!(s("perl hooks/x.pl"), p("/ws/hooks/x.pl"));
        assert_eq!(s("FOO=1 env -i BAR=2 ./x.sh"), p("/ws/x.sh"));
        assert_eq!(
            s("\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/g.sh"),
            p("/ws/.claude/hooks/g.sh")
        );
        assert_eq!(s("${COPSE_PROJECT_DIR}/h.sh"), p("/ws/h.sh"));
        for none in [
            "echo hi",
            "sh -c 'cat'",
            "python3 -m tool",
            "node -e 'x'",
            "~/bin/x.sh",
            "/usr/local/bin/guard",
            "../outside.sh",
            "deno fmt x.ts",
            "npx prettier x.ts",
            "",
        ] {
            assert!(s(none).is_empty(), "{none}: {:?}", s(none));
        }
    }
}
