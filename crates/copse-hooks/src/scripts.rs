//! Which workspace files a hook command runs, so trust can pin their content.
//!
//! The command is split into simple commands at every list and pipe operator (`;`,
//! `&&`, `||`, `|`, `&`, newlines, `(`/`)`, `$(…)` and backticks), each split into
//! words (quotes honoured, `$CLAUDE_PROJECT_DIR`, `$CURSOR_PROJECT_DIR` and
//! `$COPSE_PROJECT_DIR` expanded to the root) with its redirections apart. In each
//! simple command, leading `NAME=value` assignments and reserved words are skipped and
//! wrappers are looked through with their options parsed (`env`, `exec`, `command`,
//! `nice`, `nohup`, `timeout`, `xargs`, `time`, `stdbuf`, `setsid`, `ionice`). The
//! program is a script when it is a path; `.`/`source` run their argument; for a shell
//! (`sh`, `bash`, …) the options are parsed as the shell parses them (`-o name`,
//! `+O name`, `--rcfile FILE`, clustered flags, `--`), a `-c` string is read as a
//! command in turn, and with no script argument a `<` redirection is the script; for
//! another interpreter (`python3`, `node`, `deno run`, `uv run`, `npx tsx`, …) the
//! first argument after its options is. Only files inside the workspace root are
//! pinned. What a script itself loads (imports, sourced files, modules) is not:
//! docs/security.md says so. [`unpinned_files`] names every other existing workspace
//! file a command mentions, for `trust` and `lint` to warn about.

use std::path::{Component, Path, PathBuf};

/// Shells: options parsed as the shell does, `-c` read as a command.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "yash", "ash"];

/// Interpreters whose first non-option argument is the script they run.
const INTERPRETERS: &[&str] = &[
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
const INLINE: &[&str] = &["-c", "-e", "-m", "--eval", "-p", "--print", "-E"];

/// Interpreter options that take the next word as their value; the value is a file
/// that runs too when it is a path (`node -r ./setup.js x.js`).
const INTERPRETER_ARG_OPTIONS: &[&str] = &[
    "-W",
    "-X",
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
];

/// One piece of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    /// A word, unquoted.
    Word(String),
    /// The target of an input redirection (`< file`).
    Input(String),
    /// The target of any other redirection (`> file`, `2>> file`, `<< EOF`).
    Other(String),
}

/// What the next word is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Word,
    Input,
    Other,
}

/// Splits `command` into simple commands of words and redirections.
fn simple_commands(command: &str) -> Vec<Vec<Item>> {
    let mut scanner = Scanner {
        chars: command.chars().peekable(),
        out: Vec::new(),
        items: Vec::new(),
        cur: String::new(),
        in_word: false,
        next: Next::Word,
    };
    while let Some(c) = scanner.chars.next() {
        scanner.step(c);
    }
    scanner.finish_word();
    scanner.finish_command();
    scanner.out
}

/// The state of [`simple_commands`] as it reads a command line one character at a
/// time.
struct Scanner<'a> {
    /// What is left of the command line.
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    /// The simple commands finished so far.
    out: Vec<Vec<Item>>,
    /// The items of the simple command being read.
    items: Vec<Item>,
    /// The word being read.
    cur: String,
    /// Whether a word has begun (a quoted empty string is a word).
    in_word: bool,
    /// What the word being read will be.
    next: Next,
}

impl Scanner<'_> {
    /// Reads the character `c` and whatever it opens (a quote, an operator).
    fn step(&mut self, c: char) {
        match c {
            '\'' => self.single_quoted(),
            '"' => self.double_quoted(),
            '\\' => self.escaped(),
            '$' if self.chars.peek() == Some(&'(') => {
                // `$(…)`: a command of its own.
                self.chars.next();
                self.separator();
            }
            '<' | '>' => self.redirection(c),
            '&' if self.chars.peek() == Some(&'>') => self.output_and_error(),
            ';' | '|' | '&' | '(' | ')' | '\n' | '`' | '{' | '}'
                if !self.in_word || c != '{' && c != '}' =>
            {
                self.separator();
            }
            '#' if !self.in_word => self.comment(),
            c if c.is_whitespace() => self.finish_word(),
            c => {
                self.in_word = true;
                self.cur.push(c);
            }
        }
    }

    /// Ends the word being read, if any, as the item `next` says.
    fn finish_word(&mut self) {
        if self.in_word {
            let w = std::mem::take(&mut self.cur);
            self.items.push(match self.next {
                Next::Word => Item::Word(w),
                Next::Input => Item::Input(w),
                Next::Other => Item::Other(w),
            });
            self.next = Next::Word;
            self.in_word = false;
        }
    }

    /// Ends the simple command being read, if it has any items.
    fn finish_command(&mut self) {
        if !self.items.is_empty() {
            self.out.push(std::mem::take(&mut self.items));
        }
    }

    /// A list or pipe operator, a parenthesis, a brace or a backtick: ends the word
    /// and the simple command.
    fn separator(&mut self) {
        self.finish_word();
        self.finish_command();
    }

    /// After `'`: everything up to the closing quote, as is.
    fn single_quoted(&mut self) {
        self.in_word = true;
        for c in self.chars.by_ref() {
            if c == '\'' {
                break;
            }
            self.cur.push(c);
        }
    }

    /// After `"`: everything up to the closing quote, a backslash escaping the next
    /// character.
    fn double_quoted(&mut self) {
        self.in_word = true;
        while let Some(c) = self.chars.next() {
            match c {
                '"' => break,
                '\\' => {
                    if let Some(n) = self.chars.next() {
                        self.cur.push(n);
                    }
                }
                _ => self.cur.push(c),
            }
        }
    }

    /// After an unquoted `\`: the next character, literally.
    fn escaped(&mut self) {
        self.in_word = true;
        // A backslash-newline is a line continuation.
        if let Some(n) = self.chars.next()
            && n != '\n'
        {
            self.cur.push(n);
        }
    }

    /// After `#` outside a word: a comment runs to the end of the line.
    fn comment(&mut self) {
        for c in self.chars.by_ref() {
            if c == '\n' {
                break;
            }
        }
        self.finish_command();
    }

    /// After `<` or `>`: the redirection operator; the next word is its target.
    fn redirection(&mut self, c: char) {
        // `2>file`: the digits before are a descriptor, not a word.
        if self.in_word && !self.cur.is_empty() && self.cur.chars().all(|c| c.is_ascii_digit()) {
            self.cur.clear();
            self.in_word = false;
        } else {
            self.finish_word();
        }
        self.next = self.redirection_operator(c);
    }

    /// Reads the rest of the redirection operator that `c` opens (`>>`, `<<`, `<<-`,
    /// `<>`, `>&`, `<&`, `>|`) and says what its target is: the input only for a
    /// plain `<` or `<>` from a file.
    fn redirection_operator(&mut self, c: char) -> Next {
        let mut input = c == '<';
        let mut heredoc = false;
        while let Some(&n) = self.chars.peek() {
            match n {
                '<' if c == '<' => {
                    heredoc = true;
                    self.chars.next();
                }
                '>' if c == '>' => {
                    self.chars.next();
                }
                '>' if c == '<' => {
                    // `<>`: read-write, still the input.
                    self.chars.next();
                }
                '&' | '|' => {
                    self.chars.next();
                    if n == '&' {
                        // `>&2`, `<&0`: a descriptor, not a file.
                        input = false;
                    }
                }
                '-' => {
                    self.chars.next();
                }
                _ => break,
            }
        }
        if input && !heredoc {
            Next::Input
        } else {
            Next::Other
        }
    }

    /// After `&` before `>`: `&>file`, `&>>file`, both outputs to one target.
    fn output_and_error(&mut self) {
        self.finish_word();
        self.chars.next();
        if self.chars.peek() == Some(&'>') {
            self.chars.next();
        }
        self.next = Next::Other;
    }
}

fn expand(word: &str, root: &Path) -> String {
    let root = root.display().to_string();
    let mut w = word.to_string();
    for var in [
        "CLAUDE_PROJECT_DIR",
        "CURSOR_PROJECT_DIR",
        "COPSE_PROJECT_DIR",
        "GEMINI_PROJECT_DIR",
    ] {
        w = w.replace(&format!("${{{var}}}"), &root);
        w = w.replace(&format!("${var}"), &root);
    }
    // A project hook runs in its root, so `$PWD` is the root too (`sh "$PWD/x.sh"`);
    // only the whole name is expanded (`$PWDX` is another variable).
    w = w.replace("${PWD}", &root);
    if w == "$PWD" {
        w = root.clone();
    } else if let Some(rest) = w.strip_prefix("$PWD/") {
        w = format!("{root}/{rest}");
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

fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty()
            && !k.starts_with(|c: char| c.is_ascii_digit())
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Words that open or continue a compound command and are followed by a command.
const RESERVED: &[&str] = &[
    "!", "{", "}", "if", "then", "else", "elif", "do", "while", "until", "time",
];

/// Skips a wrapper's options; `with_arg` are the options that take the next word.
/// Returns the rest after the options (and after `--`).
fn skip_options<'a>(words: &'a [String], with_arg: &[&str]) -> &'a [String] {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if w == "--" {
            return &words[i + 1..];
        }
        if !w.starts_with('-') || w == "-" {
            break;
        }
        // `--signal=KILL` carries its value; `-s KILL` takes the next word.
        if !w.contains('=') && with_arg.contains(&w.as_str()) {
            i += 1;
        }
        i += 1;
    }
    &words[i.min(words.len())..]
}

/// Looks through wrappers to the program's words. `None` when the command runs
/// nothing from a file (`command -v x`, `env` alone).
fn through_wrappers(mut words: &[String]) -> Option<&[String]> {
    loop {
        while words
            .first()
            .is_some_and(|w| is_assignment(w) || RESERVED.contains(&w.as_str()))
        {
            words = &words[1..];
        }
        let first = words.first()?;
        let program = first.rsplit('/').next().unwrap_or(first);
        let rest = &words[1..];
        words = match program {
            "env" => {
                let mut r = skip_options(
                    rest,
                    &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
                );
                while r.first().is_some_and(|w| is_assignment(w)) {
                    r = &r[1..];
                }
                r
            }
            "exec" => skip_options(rest, &["-a"]),
            "command" => {
                if rest
                    .iter()
                    .take_while(|w| w.starts_with('-'))
                    .any(|w| w.contains('v') || w.contains('V'))
                {
                    return None;
                }
                skip_options(rest, &[])
            }
            "builtin" | "nohup" | "setsid" | "time" => skip_options(rest, &[]),
            "nice" => skip_options(rest, &["-n", "--adjustment"]),
            "ionice" => skip_options(
                rest,
                &["-c", "--class", "-n", "--classdata", "-p", "-P", "-u"],
            ),
            "stdbuf" => skip_options(rest, &["-i", "-o", "-e", "--input", "--output", "--error"]),
            "timeout" => {
                let r = skip_options(rest, &["-s", "--signal", "-k", "--kill-after"]);
                // The duration.
                r.get(1..)?
            }
            "xargs" => skip_options(
                rest,
                &[
                    "-a",
                    "--arg-file",
                    "-d",
                    "--delimiter",
                    "-E",
                    "-e",
                    "-I",
                    "-i",
                    "-L",
                    "-l",
                    "-n",
                    "--max-args",
                    "-P",
                    "--max-procs",
                    "-s",
                    "--max-chars",
                ],
            ),
            _ => return Some(words),
        };
    }
}

/// What one simple command runs from the workspace.
fn scripts_of_simple(items: &[Item], root: &Path, depth: u8, out: &mut Vec<PathBuf>) {
    let words: Vec<String> = items
        .iter()
        .filter_map(|i| match i {
            Item::Word(w) => Some(expand(w, root)),
            _ => None,
        })
        .collect();
    let inputs: Vec<String> = items
        .iter()
        .filter_map(|i| match i {
            Item::Input(w) => Some(expand(w, root)),
            _ => None,
        })
        .collect();
    let Some(words) = through_wrappers(&words) else {
        return;
    };
    let Some(first) = words.first() else {
        return;
    };
    let rest = &words[1..];
    if first.contains('/') {
        out.extend(candidate(first, root));
    }
    let program = first.rsplit('/').next().unwrap_or(first);
    if matches!(program, "." | "source") {
        out.extend(rest.first().and_then(|w| candidate(w, root)));
        return;
    }
    if SHELLS.contains(&program) {
        shell_script(rest, &inputs, root, depth, out);
        return;
    }
    let mut rest = rest;
    let interpreter = match program {
        "deno" | "uv" | "poetry" | "pipenv" => {
            // `deno run [opts] script`, `uv run [opts] script` (or `uv run python x`).
            if rest.first().map(String::as_str) != Some("run") {
                return;
            }
            rest = &rest[1..];
            true
        }
        "npx" | "bunx" | "pnpx" => {
            // `npx [opts] tsx script`.
            match rest.iter().position(|w| !w.starts_with('-')) {
                Some(i) if INTERPRETERS.contains(&rest[i].as_str()) => {
                    rest = &rest[i + 1..];
                    true
                }
                _ => return,
            }
        }
        p => INTERPRETERS.contains(&p) || p.starts_with("python3."),
    };
    if !interpreter {
        return;
    }
    let mut i = 0;
    while let Some(w) = rest.get(i) {
        i += 1;
        if INLINE.contains(&w.as_str()) {
            return;
        }
        if INTERPRETER_ARG_OPTIONS.contains(&w.as_str()) {
            if let Some(value) = rest.get(i) {
                if value.contains('/') {
                    out.extend(candidate(value, root));
                }
                i += 1;
            }
            continue;
        }
        if w.starts_with('-') {
            continue;
        }
        // `uv run python script.py`: look through the named interpreter.
        if INTERPRETERS.contains(&w.as_str()) || w.starts_with("python3.") {
            continue;
        }
        out.extend(candidate(w, root));
        return;
    }
    // `python3 < x.py`: the program is read from stdin.
    for input in &inputs {
        out.extend(candidate(input, root));
    }
}

/// A shell's arguments, parsed as `sh`/`bash` parse them: the script, the `-c`
/// command (read in turn), or with neither (or `-s`) the `<` redirection.
fn shell_script(
    args: &[String],
    inputs: &[String],
    root: &Path,
    depth: u8,
    out: &mut Vec<PathBuf>,
) {
    let mut inline = false;
    let mut from_stdin = false;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        if w == "--" || w == "-" {
            break;
        }
        if let Some(long) = w.strip_prefix("--") {
            // `--rcfile FILE`, `--init-file FILE`: that file runs too.
            if matches!(long, "rcfile" | "init-file") {
                if let Some(file) = args.get(i) {
                    out.extend(candidate(file, root));
                }
                i += 1;
            }
            continue;
        }
        let Some(flags) = w.strip_prefix('-').or_else(|| w.strip_prefix('+')) else {
            // The first operand.
            i -= 1;
            break;
        };
        if flags.is_empty() {
            i -= 1;
            break;
        }
        for f in flags.chars() {
            match f {
                // `-o name`, `-O name`: the option's name is the next word.
                'o' | 'O' => i += 1,
                'c' if w.starts_with('-') => inline = true,
                's' if w.starts_with('-') => from_stdin = true,
                _ => {}
            }
        }
    }
    let operand = args.get(i);
    if inline {
        // `sh -c 'cmd' [name args...]`: the command string runs in its turn.
        if let Some(cmd) = operand
            && depth < 4
        {
            collect(cmd, root, depth + 1, out);
        }
        return;
    }
    match operand {
        Some(script) if !from_stdin => out.extend(candidate(script, root)),
        _ => {
            for input in inputs {
                out.extend(candidate(input, root));
            }
        }
    }
}

fn collect(command: &str, root: &Path, depth: u8, out: &mut Vec<PathBuf>) {
    for items in simple_commands(command) {
        scripts_of_simple(&items, root, depth, out);
    }
}

/// The workspace files `command` runs, resolved against `root` (where project hooks
/// start), in order, without duplicates.
pub fn scripts_of(command: &str, root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(command, root, 0, &mut out);
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

/// Existing regular files inside `root` that `command` names (as a word, a
/// redirection target, or inside a quoted command string such as `sh -c '…'`) but
/// that [`scripts_of`] does not pin: a file the command uses whose edits trust would
/// not notice (`cat ./x.sh | sh`, `sh -c "$(cat hook.sh)"`, `make -f rules.mk`). A
/// command's first word without a `/` is a program found on `PATH`, never a file.
pub fn unpinned_files(command: &str, root: &Path) -> Vec<PathBuf> {
    let pinned = scripts_of(command, root);
    let mut out: Vec<PathBuf> = Vec::new();
    unpinned_in(command, root, &pinned, 0, &mut out);
    out
}

fn unpinned_in(command: &str, root: &Path, pinned: &[PathBuf], depth: u8, out: &mut Vec<PathBuf>) {
    for items in simple_commands(command) {
        for (i, item) in items.iter().enumerate() {
            let (Item::Word(w) | Item::Input(w) | Item::Other(w)) = item;
            let word = expand(w, root);
            // A quoted command string: its words too.
            if word.contains(char::is_whitespace) || word.contains(['|', ';', '&', '<', '`']) {
                if depth < 4 {
                    unpinned_in(&word, root, pinned, depth + 1, out);
                }
                continue;
            }
            let word = word.split_once('=').map_or(word.as_str(), |(_, v)| v);
            if word.starts_with('-') || (i == 0 && !word.contains('/')) {
                continue;
            }
            if let Some(path) = candidate(word, root)
                && path != root
                && !pinned.contains(&path)
                && !out.contains(&path)
                && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
            {
                out.push(path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Item {
        Item::Word(s.to_string())
    }

    /// Each simple command's words, for commands without redirections.
    fn words(command: &str) -> Vec<Vec<String>> {
        simple_commands(command)
            .into_iter()
            .map(|items| {
                items
                    .into_iter()
                    .map(|i| match i {
                        Item::Word(w) => w,
                        other => panic!("not a word: {other:?}"),
                    })
                    .collect()
            })
            .collect()
    }

    fn v(commands: &[&[&str]]) -> Vec<Vec<String>> {
        commands
            .iter()
            .map(|c| c.iter().map(|w| w.to_string()).collect())
            .collect()
    }

    #[test]
    fn pwd_names_the_root() {
        let root = std::path::Path::new("/w");
        assert_eq!(
            scripts_of(r#"sh "$PWD/x.sh""#, root),
            [std::path::PathBuf::from("/w/x.sh")]
        );
        assert_eq!(
            scripts_of("bash ${PWD}/hooks/g.sh", root),
            [std::path::PathBuf::from("/w/hooks/g.sh")]
        );
        assert!(scripts_of("sh $PWDX/x.sh", root).is_empty());
    }

    #[test]
    fn scanner_honours_quotes() {
        assert_eq!(
            words(r#"echo 'a b' "c \"d\" \$e" f'g'h"#),
            v(&[&["echo", "a b", "c \"d\" $e", "fgh"]])
        );
        // Operators inside quotes are plain text; an empty quote is a word.
        assert_eq!(
            words(r#"sh -c 'a; b | c' "x && y" ''"#),
            v(&[&["sh", "-c", "a; b | c", "x && y", ""]])
        );
        // Single quotes keep backslashes; an unclosed quote runs to the end.
        assert_eq!(words(r"'a\b' 'open"), v(&[&[r"a\b", "open"]]));
    }

    #[test]
    fn scanner_honours_escapes() {
        assert_eq!(words(r"a\ b c\;d \#e"), v(&[&["a b", "c;d", "#e"]]));
        // A backslash-newline is a line continuation; a trailing one is dropped.
        assert_eq!(words("ec\\\nho x\\"), v(&[&["echo", "x"]]));
    }

    #[test]
    fn scanner_splits_at_list_and_pipe_operators() {
        assert_eq!(
            words("a; b && c || d | e & f\ng"),
            v(&[&["a"], &["b"], &["c"], &["d"], &["e"], &["f"], &["g"]])
        );
        assert_eq!(
            words("echo $(date +%s) `id -u` (sub) { grp; }"),
            v(&[
                &["echo"],
                &["date", "+%s"],
                &["id", "-u"],
                &["sub"],
                &["grp"]
            ])
        );
        // Braces inside a word are the word's own.
        assert_eq!(
            words("echo a{b,c}d {x}"),
            v(&[&["echo", "a{b,c}d"], &["x}"]])
        );
        assert!(words(" ;; && \n").is_empty());
    }

    #[test]
    fn scanner_drops_comments() {
        assert_eq!(words("a b # c; d\ne"), v(&[&["a", "b"], &["e"]]));
        assert_eq!(words("a#b #c"), v(&[&["a#b"]]));
        assert!(words("# only").is_empty());
    }

    #[test]
    fn scanner_sets_redirections_apart() {
        let input = |s: &str| Item::Input(s.to_string());
        let other = |s: &str| Item::Other(s.to_string());
        assert_eq!(
            simple_commands("cmd <in >out 2>>err 2>&1 &>all &>>more <<-EOF x"),
            vec![vec![
                w("cmd"),
                input("in"),
                other("out"),
                other("err"),
                other("1"),
                other("all"),
                other("more"),
                other("EOF"),
                w("x"),
            ]]
        );
        assert_eq!(
            simple_commands("sh 0< a <>b <&0 >|c a2>d"),
            vec![vec![
                w("sh"),
                input("a"),
                input("b"),
                other("0"),
                other("c"),
                w("a2"),
                other("d"),
            ]]
        );
    }

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
            "command -v ./x.sh",
            "",
        ] {
            assert!(s(none).is_empty(), "{none}: {:?}", s(none));
        }
    }

    #[test]
    fn pins_every_wrapper_chain_and_shell_form() {
        let root = Path::new("/ws");
        let x = vec![PathBuf::from("/ws/x.sh")];
        for form in [
            "sh -e x.sh",
            "sh -e ./x.sh",
            "bash -eu -o pipefail x.sh",
            "bash -euo pipefail ./x.sh arg",
            "bash --norc --noprofile +x -O extglob ./x.sh",
            "bash -- ./x.sh",
            "timeout 5 ./x.sh",
            "timeout -s KILL 5 ./x.sh",
            "timeout --signal=KILL -k 1 5s ./x.sh",
            "nohup ./x.sh",
            "env A=1 ./x.sh",
            "env -i ./x.sh",
            "env -u HOME -i A=1 ./x.sh",
            "xargs ./x.sh",
            "xargs -n 1 -P 2 ./x.sh",
            "true && ./x.sh",
            "a; ./x.sh",
            "false || ./x.sh",
            "sh < x.sh",
            "bash < ./x.sh",
            "bash -s < ./x.sh",
            "sh 0< x.sh",
            "exec ./x.sh",
            "nice ./x.sh",
            "nice -n 5 ./x.sh",
            "command ./x.sh",
            "nohup timeout 5 env -i nice sh -e ./x.sh",
            "sh -c './x.sh'",
            "bash -ec 'true && ./x.sh'",
            "echo $(./x.sh)",
            "echo `./x.sh`",
            "(./x.sh)",
            "{ ./x.sh; }",
            "if true; then ./x.sh; fi",
            ". ./x.sh",
            "source x.sh",
            "cat | ./x.sh 2>/dev/null",
            "./x.sh >out.log 2>&1 &",
            "A=1 B=2 ./x.sh",
            "time ./x.sh",
            "setsid ./x.sh",
            "stdbuf -o L ./x.sh",
        ] {
            assert_eq!(scripts_of(form, root), x, "{form}");
        }
        assert_eq!(
            scripts_of("./a.sh || ./b.sh", root),
            vec![PathBuf::from("/ws/a.sh"), PathBuf::from("/ws/b.sh")]
        );
        assert_eq!(
            scripts_of("bash --rcfile ./rc.sh ./x.sh", root),
            vec![PathBuf::from("/ws/rc.sh"), PathBuf::from("/ws/x.sh")]
        );
        assert_eq!(
            scripts_of("node -r ./setup.js hooks/x.js", root),
            vec![
                PathBuf::from("/ws/setup.js"),
                PathBuf::from("/ws/hooks/x.js")
            ]
        );
        assert_eq!(
            scripts_of("python3 < hooks/x.py", root),
            vec![PathBuf::from("/ws/hooks/x.py")]
        );
        // Output redirections and heredocs are not scripts.
        assert!(scripts_of("cat > ./x.sh", root).is_empty());
        assert!(scripts_of("sh << ./x.sh", root).is_empty());
    }

    #[test]
    fn names_workspace_files_a_command_uses_but_does_not_pin() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in ["x.sh", "data.json", "rules.mk"] {
            std::fs::write(root.join(f), "").unwrap();
        }
        let u = |c: &str| unpinned_files(c, root);
        assert!(u("./x.sh").is_empty());
        assert!(
            u("sh -e ./x.sh >./log").is_empty(),
            "a missing file is not named"
        );
        assert_eq!(u("cat ./x.sh | sh"), vec![root.join("x.sh")]);
        assert_eq!(
            u("make -f ./rules.mk; jq . ./data.json"),
            vec![root.join("rules.mk"), root.join("data.json")]
        );
        assert_eq!(u("awk -f x.sh"), vec![root.join("x.sh")]);
        assert_eq!(
            u("sh -c 'cat ./data.json | jq .'"),
            vec![root.join("data.json")]
        );
        assert_eq!(u("cat x.sh | sh"), vec![root.join("x.sh")]);
        assert!(u("x.sh").is_empty(), "a bare first word is a PATH lookup");
        assert!(u("sh -c ./x.sh").is_empty(), "pinned");
        assert!(u("echo ok nothing-here").is_empty());
    }
}
