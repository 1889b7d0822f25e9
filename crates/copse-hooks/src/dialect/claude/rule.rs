//! Claude Code's permission-rule syntax, as a handler's `if` condition uses it.
//!
//! A rule is `Tool` or `Tool(pattern)`: `Bash(git push:*)`, `Bash(npm run *)`,
//! `Edit(src/**)`, `Read(./.env)`, `mcp__github__create_issue`, `mcp__github`.
//! It is evaluated against the call Claude hooks see (Claude's tool name and
//! `tool_input`) before anything is spawned:
//!
//! - the tool must be the rule's tool; an MCP rule naming only a server
//!   (`mcp__github`, `mcp__github__*`) covers all of its tools;
//! - `Bash` patterns match a command with `*` as a wildcard (a trailing `:*` is the
//!   legacy prefix form); leading `VAR=value` assignments are stripped and every
//!   subcommand (split on `&&`, `||`, `;`, `|`, newlines, and the insides of `$(…)`
//!   and backticks) is checked — the rule fires when any of them matches. A command
//!   that cannot be split (an unbalanced quote) fires the hook, as Claude Code's
//!   filter fails open;
//! - file tools (`Read`, `Edit`, `Write`, `MultiEdit`, `NotebookEdit`, `Grep`,
//!   `Glob`) use gitignore-style paths: `//abs` is absolute, `~/p` is in the home
//!   directory, `/p` and `./p` and `p` are relative to the project root, and a
//!   pattern without a `/` matches at any depth.

use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use serde_json::{Map, Value};

/// One compiled permission rule.
#[derive(Debug, Clone)]
pub struct PermissionRule {
    /// The rule as written.
    pub source: String,
    tool: String,
    pattern: Option<String>,
}

/// Why a rule does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("\"{rule}\" is not a permission rule ({reason})")]
pub struct RuleError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong.
    pub reason: String,
}

const FILE_TOOLS: [&str; 7] = [
    "Read",
    "Edit",
    "Write",
    "MultiEdit",
    "NotebookEdit",
    "Grep",
    "Glob",
];

impl PermissionRule {
    /// Parses `Tool` or `Tool(pattern)`.
    pub fn parse(text: &str) -> Result<PermissionRule, RuleError> {
        let t = text.trim();
        let err = |reason: &str| RuleError {
            rule: text.to_string(),
            reason: reason.to_string(),
        };
        let (tool, pattern) = match t.find('(') {
            None => (t, None),
            Some(open) => {
                let Some(inner) = t[open + 1..].strip_suffix(')') else {
                    return Err(err("the pattern must end with \")\""));
                };
                (&t[..open], Some(inner.trim().to_string()))
            }
        };
        if tool.is_empty()
            || !tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*')
        {
            return Err(err(
                "expected a tool name such as Bash, Edit or mcp__server__tool",
            ));
        }
        Ok(PermissionRule {
            source: t.to_string(),
            tool: tool.to_string(),
            pattern: pattern.filter(|p| !p.is_empty() && p != "*"),
        })
    }

    /// Whether the rule covers a call of `tool` with `input` (Claude's shapes).
    /// `root` is the project root, `home` the user's home.
    pub fn matches(
        &self,
        tool: &str,
        input: &Map<String, Value>,
        root: Option<&Path>,
        home: Option<&Path>,
    ) -> bool {
        if !self.tool_matches(tool) {
            return false;
        }
        let Some(pattern) = &self.pattern else {
            return true;
        };
        let text = |k: &str| input.get(k).and_then(Value::as_str).unwrap_or("");
        if tool == "Bash" {
            return bash_matches(pattern, text("command"));
        }
        if FILE_TOOLS.contains(&tool) {
            let path = [text("file_path"), text("notebook_path"), text("path")]
                .into_iter()
                .find(|p| !p.is_empty())
                .unwrap_or("");
            return path_matches(pattern, path, root, home);
        }
        // Other tools (WebFetch `domain:…`, Agent types, …): a glob over the input's
        // first string field.
        let subject = input.values().find_map(Value::as_str).unwrap_or_default();
        wildcard(pattern).is_some_and(|re| re.is_match(subject))
    }

    fn tool_matches(&self, tool: &str) -> bool {
        if self.tool == tool {
            return true;
        }
        if let Some(server) = self.tool.strip_prefix("mcp__") {
            let server = server.strip_suffix("__*").unwrap_or(server);
            if !server.contains("__") {
                return tool
                    .strip_prefix("mcp__")
                    .and_then(|rest| rest.strip_prefix(server))
                    .is_some_and(|rest| rest.starts_with("__"));
            }
        }
        false
    }
}

/// A `*`-wildcard pattern as an anchored regex (`:*` at the end is a prefix match).
fn wildcard(pattern: &str) -> Option<regex::Regex> {
    let (body, prefix) = match pattern.strip_suffix(":*") {
        Some(b) => (b, true),
        None => (pattern, false),
    };
    let mut re = String::from("^");
    for (i, piece) in body.split('*').enumerate() {
        if i > 0 {
            re.push_str(".*");
        }
        re.push_str(&regex::escape(piece));
    }
    if prefix {
        // `git push:*` covers `git push` and `git push origin main`, not `git pushx`.
        re.push_str("(?:\\s.*)?");
    }
    re.push('$');
    regex::RegexBuilder::new(&re)
        .dot_matches_new_line(true)
        .build()
        .ok()
}

fn bash_matches(pattern: &str, command: &str) -> bool {
    let Some(re) = wildcard(pattern) else {
        return true;
    };
    match subcommands(command) {
        Some(parts) => parts.iter().any(|c| re.is_match(c)),
        // Claude Code's filter fails open when the command cannot be parsed.
        None => true,
    }
}

/// A command split into its simple commands, assignments stripped; `None` when the
/// quoting does not balance.
fn subcommands(command: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut nested = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = command.chars().collect();
    let mut i = 0;
    let mut quote: Option<char> = None;
    let push = |cur: &mut String, out: &mut Vec<String>| {
        let s = strip_assignments(cur.trim());
        if !s.is_empty() {
            out.push(s);
        }
        cur.clear();
    };
    while i < chars.len() {
        let c = chars[i];
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                } else if c == '\\' && q == '"' && i + 1 < chars.len() {
                    cur.push(c);
                    i += 1;
                    cur.push(chars[i]);
                    i += 1;
                    continue;
                }
                cur.push(c);
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    cur.push(c);
                }
                '`' => {
                    let end = chars[i + 1..].iter().position(|&x| x == '`')? + i + 1;
                    nested.push(chars[i + 1..end].iter().collect::<String>());
                    cur.extend(&chars[i..=end]);
                    i = end;
                }
                '$' if chars.get(i + 1) == Some(&'(') => {
                    let mut depth = 0usize;
                    let mut end = None;
                    for (j, &x) in chars.iter().enumerate().skip(i + 1) {
                        if x == '(' {
                            depth += 1;
                        } else if x == ')' {
                            depth -= 1;
                            if depth == 0 {
                                end = Some(j);
                                break;
                            }
                        }
                    }
                    let end = end?;
                    nested.push(chars[i + 2..end].iter().collect::<String>());
                    cur.extend(&chars[i..=end]);
                    i = end;
                }
                ';' | '\n' | '|' | '&' => push(&mut cur, &mut out),
                _ => cur.push(c),
            },
        }
        i += 1;
    }
    if quote.is_some() {
        return None;
    }
    push(&mut cur, &mut out);
    for inner in nested {
        out.extend(subcommands(&inner)?);
    }
    Some(out)
}

fn strip_assignments(command: &str) -> String {
    let mut rest = command;
    loop {
        let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..word_end];
        let is_assignment = word.find('=').is_some_and(|eq| {
            eq > 0
                && word[..eq]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if !is_assignment || word_end == rest.len() {
            return rest.trim().to_string();
        }
        rest = rest[word_end..].trim_start();
    }
}

fn path_matches(pattern: &str, path: &str, root: Option<&Path>, home: Option<&Path>) -> bool {
    if path.is_empty() {
        return false;
    }
    let file = Path::new(path);
    let absolute = match root {
        Some(r) if file.is_relative() => r.join(file),
        _ => file.to_path_buf(),
    };
    let (base, pat): (Option<&Path>, String) = if let Some(abs) = pattern.strip_prefix("//") {
        (None, format!("/{abs}"))
    } else if let Some(h) = pattern.strip_prefix("~/") {
        (home, h.to_string())
    } else if let Some(p) = pattern.strip_prefix("./") {
        (root, p.to_string())
    } else if let Some(p) = pattern.strip_prefix('/') {
        (root, p.to_string())
    } else if pattern.contains('/') {
        (root, pattern.to_string())
    } else {
        (root, format!("**/{pattern}"))
    };
    let subject = match base {
        None => absolute.display().to_string(),
        Some(b) => match absolute.strip_prefix(b) {
            Ok(rel) => rel.display().to_string(),
            Err(_) => return false,
        },
    };
    let Ok(glob) = GlobBuilder::new(&pat).literal_separator(true).build() else {
        return false;
    };
    let m: GlobMatcher = glob.compile_matcher();
    m.is_match(&subject) || (pat.ends_with("/**") && m.is_match(format!("{subject}/x")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn bash_rules_check_every_subcommand() {
        let r = PermissionRule::parse("Bash(git push:*)").unwrap();
        let call = |c: &str| r.matches("Bash", &input(json!({"command": c})), None, None);
        assert!(call("git push"));
        assert!(call("git push origin main"));
        assert!(call("cd x && FOO=1 git push -f"));
        assert!(call("echo $(git push)"));
        assert!(!call("git pushx"));
        assert!(!call("git status"));
        assert!(call("echo 'unbalanced"), "fails open");
        assert!(!r.matches("Edit", &input(json!({"command": "git push"})), None, None));
    }

    #[test]
    fn path_rules_are_gitignore_style() {
        let root = Path::new("/w");
        let m = |rule: &str, p: &str| {
            PermissionRule::parse(rule).unwrap().matches(
                "Edit",
                &input(json!({"file_path": p})),
                Some(root),
                Some(Path::new("/home/u")),
            )
        };
        assert!(m("Edit(src/**)", "/w/src/a/b.rs"));
        assert!(!m("Edit(src/**)", "/w/lib/b.rs"));
        assert!(m("Edit(*.ts)", "/w/deep/x.ts"));
        assert!(m("Edit(./.env)", "/w/.env"));
        assert!(!m("Edit(./.env)", "/w/sub/.env"));
        assert!(m("Edit(//etc/**)", "/etc/passwd"));
        assert!(m("Edit(~/notes/*)", "/home/u/notes/a"));
    }

    #[test]
    fn mcp_rules_cover_a_server_or_one_tool() {
        let m = |rule: &str, tool: &str| {
            PermissionRule::parse(rule)
                .unwrap()
                .matches(tool, &Map::new(), None, None)
        };
        assert!(m("mcp__github", "mcp__github__create_issue"));
        assert!(m("mcp__github__*", "mcp__github__create_issue"));
        assert!(m("mcp__github__create_issue", "mcp__github__create_issue"));
        assert!(!m("mcp__github__create_issue", "mcp__github__list"));
        assert!(!m("mcp__git", "mcp__github__list"));
        assert!(PermissionRule::parse("Bash(oops").is_err());
    }
}
