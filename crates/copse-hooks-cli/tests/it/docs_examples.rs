//! The documentation's `copse-hooks …` examples are commands this binary accepts.
//!
//! Every example in README.md, docs/*.md and docs/dialects/*.md — a command line in a
//! fenced block or an inline code span — is checked against the command tree the
//! binary itself describes (`copse-hooks [SUB…] --help`): each subcommand exists and
//! each `--flag` is one that subcommand (or the global options) accepts. Placeholders
//! (`DIR`, `start|stop|status`, `[--project]`, `…`) are allowed where the docs use
//! them. The runnable fenced examples of docs/ are then run for real against a
//! temporary HOME, COPSE_DIR and a copy of examples/, and none may end in a usage
//! error (README.md's are run in full by `readme.rs`). Long-running commands are
//! listed in `LONG_RUNNING` and only checked, not run.
//!
//! The docs' own statements checked here: `$schema` in settings is allowed (doctor
//! and lint say nothing about it), and the exit-127 hint names where the hook ran.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::harness::Env;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// A `copse-hooks …` example and where it is.
#[derive(Debug, Clone)]
struct Example {
    file: String,
    line: usize,
    /// The example from `copse-hooks` to the end of its command (pipes, redirections
    /// and `&&` end it).
    command: String,
    /// The whole shell line (fenced examples only), as it would be pasted.
    shell_line: Option<String>,
}

/// Drops a trailing `# comment` (outside quotes).
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let bytes = line.as_bytes();
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && (i == 0 || bytes[i - 1] == b' ') => {
                return line[..i].trim_end();
            }
            _ => {}
        }
    }
    line.trim_end()
}

/// The `copse-hooks …` commands in a shell line: where a command may start (line start,
/// after `|`, `&&`, `;`, `$(`), up to where it ends (outside quotes).
fn commands_in(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut starts = vec![0];
    let (mut single, mut double) = (false, false);
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    for (k, &(_, c)) in chars.iter().enumerate() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '|' | ';' | '&' | '(' if !single && !double => {
                let next = chars.get(k + 1).map_or(line.len(), |(j, _)| *j);
                starts.push(next);
            }
            _ => {}
        }
    }
    for s in starts {
        let rest = line[s..].trim_start();
        let rest = rest.strip_prefix("$ ").unwrap_or(rest);
        if !rest.starts_with("copse-hooks ") && rest != "copse-hooks" {
            continue;
        }
        let (mut single, mut double) = (false, false);
        let mut end = rest.len();
        for (i, c) in rest.char_indices() {
            match c {
                '\'' if !double => single = !single,
                '"' if !single => double = !double,
                '|' | ';' | '&' | '>' | '<' | ')' if !single && !double => {
                    // `a\|b` in a markdown table cell is a placeholder alternative.
                    if c == '|' && rest[..i].ends_with('\\') {
                        continue;
                    }
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        out.push(rest[..end].trim().to_string());
    }
    out
}

/// Every example of one markdown file.
fn examples_of(file: &str, markdown: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut pending = String::new();
    for (n, raw) in markdown.lines().enumerate() {
        let trimmed = raw.trim_start();
        if trimmed.starts_with("```") {
            fenced = !fenced;
            pending.clear();
            continue;
        }
        if fenced {
            let code = strip_comment(trimmed);
            if let Some(head) = code.strip_suffix('\\') {
                pending.push_str(head);
                continue;
            }
            pending.push_str(code);
            let full = std::mem::take(&mut pending);
            let full = full.trim();
            for command in commands_in(full) {
                out.push(Example {
                    file: file.to_string(),
                    line: n + 1,
                    command,
                    shell_line: Some(full.strip_prefix("$ ").unwrap_or(full).to_string()),
                });
            }
            continue;
        }
        for (i, span) in raw.split('`').enumerate() {
            if i % 2 == 1 && span.starts_with("copse-hooks ") {
                for command in commands_in(span) {
                    out.push(Example {
                        file: file.to_string(),
                        line: n + 1,
                        command,
                        shell_line: None,
                    });
                }
            }
        }
    }
    out
}

fn doc_files() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = vec![root.join("README.md")];
    for dir in ["docs", "docs/dialects"] {
        let mut more: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        more.sort();
        files.extend(more);
    }
    files
}

fn all_examples() -> Vec<Example> {
    let root = repo_root();
    doc_files()
        .iter()
        .flat_map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let name = p.strip_prefix(&root).unwrap().display().to_string();
            examples_of(&name, &text)
        })
        .collect()
}

/// Splits a command like a shell would (quotes removed, no expansion).
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let (mut single, mut double) = (false, false);
    for c in command.chars() {
        match c {
            '\'' if !double => {
                single = !single;
                any = true;
            }
            '"' if !single => {
                double = !double;
                any = true;
            }
            c if c.is_whitespace() && !single && !double => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// What `copse-hooks PATH --help` says a command accepts.
#[derive(Debug, Default)]
struct Node {
    /// Long and short options, and whether each takes a value.
    options: BTreeMap<String, bool>,
    subcommands: BTreeSet<String>,
}

/// The command tree, read from the binary's own help.
fn command_tree(env: &Env) -> BTreeMap<Vec<String>, Node> {
    let mut tree = BTreeMap::new();
    let mut queue = vec![Vec::<String>::new()];
    while let Some(path) = queue.pop() {
        let r = env.cmd().args(&path).arg("--help").run().success();
        let text = r.stdout();
        let mut node = Node::default();
        let mut in_commands = false;
        let mut last_takes_value = false;
        for line in text.lines() {
            if line.ends_with(':') && !line.starts_with(' ') {
                in_commands = line == "Commands:";
                continue;
            }
            let t = line.trim_start();
            if in_commands && line.starts_with("  ") && !line.starts_with("   ") {
                if let Some(name) = t.split_whitespace().next()
                    && name != "help"
                {
                    node.subcommands.insert(name.to_string());
                }
                continue;
            }
            // `[alias: --max-count]` / `[aliases: --a, --b]`, under its option.
            if let Some(a) = t
                .strip_prefix("[alias: ")
                .or_else(|| t.strip_prefix("[aliases: "))
            {
                for alias in a.trim_end_matches(']').split(", ") {
                    node.options
                        .insert(alias.trim().to_string(), last_takes_value);
                }
                continue;
            }
            if !t.starts_with('-') || line.starts_with("          ") {
                continue;
            }
            // `-n, --limit <LIMIT>`, `--input <JSON|-|@FILE>`, `--json`
            let head = t.split("  ").next().unwrap_or(t);
            let takes_value = head.contains('<');
            last_takes_value = takes_value;
            for part in head.split([',', ' ']) {
                let name = part.split(['=', '<', '[']).next().unwrap_or("");
                if name.starts_with('-') && name.len() > 1 {
                    node.options.insert(name.to_string(), takes_value);
                }
            }
        }
        for sub in &node.subcommands {
            let mut p = path.clone();
            p.push(sub.clone());
            queue.push(p);
        }
        tree.insert(path, node);
    }
    tree
}

/// A word the docs use in place of a real argument.
fn is_placeholder(word: &str) -> bool {
    let w = word.trim_matches(['[', ']', '.', '…']);
    w.is_empty()
        || word.starts_with('[')
        || word.contains('…')
        || word.contains('|')
        || word.starts_with('<')
        || w.chars()
            .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
}

/// Checks one example against the tree; the problem, if any.
fn check(tree: &BTreeMap<Vec<String>, Node>, command: &str) -> Result<(), String> {
    let words = words(command);
    let mut path: Vec<String> = Vec::new();
    let global = &tree[&Vec::new()].options;
    let mut i = 1;
    while i < words.len() {
        let raw = &words[i];
        let word = raw.trim_start_matches('[').trim_end_matches(']');
        let node = &tree[&path];
        if word.starts_with('-') && word.len() > 1 && word != "--" {
            let name = word.split('=').next().unwrap_or(word);
            let takes = node.options.get(name).or_else(|| global.get(name));
            match takes {
                None => {
                    let cmd = std::iter::once("copse-hooks")
                        .chain(path.iter().map(String::as_str))
                        .collect::<Vec<_>>()
                        .join(" ");
                    return Err(format!("`{cmd}` has no option {name}"));
                }
                Some(true) if !word.contains('=') && !raw.ends_with(']') => i += 2,
                Some(_) => i += 1,
            }
            continue;
        }
        if node.subcommands.is_empty() {
            // Positional arguments from here on, and options after them.
            i += 1;
            continue;
        }
        if word.ends_with(':') {
            // Output quoted in prose (`copse-hooks ui: http://…`), not a command.
            return Ok(());
        }
        if is_placeholder(word) {
            // `daemon start|stop|status`, `COMMAND --help`: each alternative must exist.
            let alternatives: Vec<&str> = word
                .split('|')
                .map(|w| w.trim_matches('\\'))
                .filter(|w| !w.is_empty())
                .collect();
            if alternatives.len() > 1 {
                for alt in alternatives {
                    if !node.subcommands.contains(alt) {
                        return Err(format!("no subcommand {alt:?} (of {word})"));
                    }
                }
            }
            return Ok(());
        }
        if !node.subcommands.contains(word) {
            return Err(format!(
                "no subcommand {word:?} (known: {:?})",
                node.subcommands
            ));
        }
        path.push(word.to_string());
        i += 1;
    }
    Ok(())
}

#[test]
fn every_documented_command_names_real_subcommands_and_options() {
    let env = Env::new();
    let tree = command_tree(&env);
    assert!(tree.len() > 20, "{:?}", tree.keys().collect::<Vec<_>>());
    let examples = all_examples();
    assert!(examples.len() > 60, "{examples:#?}");
    let mut problems = Vec::new();
    for e in &examples {
        if let Err(why) = check(&tree, &e.command) {
            problems.push(format!("{}:{}: `{}`: {why}", e.file, e.line, e.command));
        }
    }
    assert!(
        problems.is_empty(),
        "documented commands the binary does not accept:\n{}",
        problems.join("\n")
    );
}

/// The checker itself: a made-up flag and subcommand are caught, placeholders pass.
#[test]
fn the_docs_checker_catches_what_it_should() {
    let env = Env::new();
    let tree = command_tree(&env);
    assert!(check(&tree, "copse-hooks gate --nope").is_err());
    assert!(check(&tree, "copse-hooks gaet run_shell").is_err());
    assert!(check(&tree, "copse-hooks daemon start|stop|restart").is_err());
    assert!(check(&tree, "copse-hooks --json log -n 5 --utc").is_ok());
    assert!(check(&tree, "copse-hooks log --max-count 5").is_ok());
    assert!(check(&tree, "copse-hooks daemon start|stop|status").is_ok());
    assert!(check(&tree, "copse-hooks shim --agent NAME [--deadline SECONDS]").is_ok());
    assert!(check(&tree, "copse-hooks COMMAND --help").is_ok());
    assert_eq!(
        commands_in("echo '{}' | copse-hooks gate Bash --input - > out.txt"),
        vec!["copse-hooks gate Bash --input -"]
    );
}

/// Commands that serve or wait until stopped: checked above, never run here.
const LONG_RUNNING: &[&str] = &[
    "ui", "serve", "watch", "daemon", "shim", "log -f", "--follow",
];

/// Exit 2 with clap's usage text: an unknown flag or subcommand, a missing or bad
/// argument. The binary's own errors also exit 2, but never print clap's footer.
fn is_usage_error(code: Option<i32>, stderr: &str) -> bool {
    code == Some(2)
        && (stderr.contains("For more information, try '--help'")
            || stderr.contains("\nUsage: copse-hooks"))
}

#[test]
fn the_runnable_examples_in_docs_run_without_usage_errors() {
    let env = Env::new();
    // A copy of examples/ as the current directory: a documented `init` or `trust`
    // writes there, never into the checkout.
    let cwd = env.root().join("checkout");
    std::fs::create_dir_all(&cwd).unwrap();
    let status = Command::new("cp")
        .arg("-R")
        .arg(repo_root().join("examples"))
        .arg(&cwd)
        .status()
        .unwrap();
    assert!(status.success());
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_copse-hooks"))
        .parent()
        .unwrap()
        .to_path_buf();
    let mut ran = 0;
    let mut problems = Vec::new();
    for e in all_examples() {
        let Some(line) = &e.shell_line else { continue };
        if e.file == "README.md" {
            continue; // run in full, with expected exit codes, by readme.rs
        }
        let rest = e.command.trim_start_matches("copse-hooks").trim();
        if words(&e.command).iter().any(|w| is_placeholder(w))
            || LONG_RUNNING
                .iter()
                .any(|l| words(rest).first().is_some_and(|w| w == l) || rest.contains(l))
        {
            continue;
        }
        let out = Command::new("sh")
            .args(["-c", line])
            .env_clear()
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    bin_dir.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .env("HOME", env.home())
            .env("COPSE_DIR", env.copse_dir())
            .env("NO_COLOR", "1")
            .current_dir(&cwd)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        ran += 1;
        let stderr = String::from_utf8_lossy(&out.stderr);
        if is_usage_error(out.status.code(), &stderr) {
            problems.push(format!("{}:{}: `{line}`:\n{stderr}", e.file, e.line));
        }
    }
    assert!(ran >= 5, "only {ran} examples ran");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// docs/settings.md: `$schema` is allowed and ignored — by `doctor` too. The control:
/// a misspelt key in the same file is reported, so `doctor` did read it.
#[test]
fn doctor_allows_the_schema_key_the_settings_doc_shows() {
    let env = Env::new();
    env.write(
        "copse/settings.json",
        &serde_json::json!({
            "$schema": "/home/me/src/copse-hooks/schemas/settings.schema.json",
            "cursorHooksEnabled": true,
            "sandboxWritablePath": [],
        })
        .to_string(),
    );
    let r = env.cmd().args(["doctor"]).run();
    let all = format!("{}{}", r.stdout(), r.stderr());
    assert!(all.contains("sandboxWritablePath\""), "control: {all}");
    assert!(!all.contains("$schema"), "{all}");
    let lint = env
        .cmd()
        .arg("lint")
        .arg(env.copse_dir().join("settings.json"))
        .run();
    assert!(!lint.stdout().contains("$schema"), "{}", lint.stdout());
}

/// The exit-127 hint says where the hook's relative command was looked up: the
/// config file's directory for a Cursor user hook (not "your home").
#[test]
fn exit_127_hint_names_where_the_hook_ran() {
    let env = Env::new();
    let cfg = env.user_cursor(
        r#"{"version": 1, "hooks": {"beforeShellExecution": [{"command": "./no-such-hook.sh"}]}}"#,
    );
    let r = env
        .cmd()
        .args([
            "--enable",
            "gate",
            "run_shell",
            "--input",
            r#"{"command": "ls"}"#,
        ])
        .run();
    let all = format!("{}{}", r.stdout(), r.stderr());
    // The control: the hook ran and failed with 127.
    assert!(all.contains("exit 127"), "{all}");
    let dir = cfg.parent().unwrap().display().to_string();
    assert!(
        all.contains(&format!("its config file's directory, {dir}")),
        "{all}"
    );
    assert!(!all.contains("your home"), "{all}");
}
