//! The engine crate's layering (issue 23): nothing below may import from above, no
//! circles between the crate's units, and no `Dialect` match outside `dialect/`.
//!
//! The check reads every `.rs` file under `src/`, maps each file to its module path
//! (`src/spawn/unix/pipes.rs` is `spawn::unix::pipes`, a folder module's root
//! `src/spawn.rs` or `src/agent/mod.rs` is `spawn` or `agent`), and collects every
//! reference to another module of the crate: `use` trees, `crate::…`, `super::…` and
//! `self::…` paths in code, and paths through a child module. Comments, doc comments,
//! string literals and `#[cfg(test)]` items are skipped by a small tokenizer; a
//! `crate::Name` that the crate root re-exports counts as a reference to the module
//! the name comes from, not to the root.
//!
//! Modules are grouped into units (the first path segment; the crate root is `lib`),
//! units into the layers of [`LAYERS`]. The report (printed with `--nocapture`, and on
//! failure) lists every unit's edges, every upward arrow with the `file:line` of each
//! reference that makes it, every circle (a strongly connected component of the unit
//! graph, and the finer pairs of [`FOCUS`]), and the `Dialect` match patterns outside
//! `dialect/`. The test fails on anything not in [`ALLOWED_UPWARD`],
//! [`ALLOWED_CIRCLES`] or [`ALLOWED_DIALECT_MATCHES`], and on an allowance that nothing
//! uses any more (so the lists only shrink).
//!
//! `cargo test -p copse-hooks --test layering -- --nocapture` prints the report;
//! `COPSE_LAYERING_SRC=DIR` checks another tree's `src/` instead.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The layers, top to bottom, each a list of units. A unit may use its own layer and
/// the layers below it. Units that do not exist (yet) are simply absent; a unit that
/// exists and is in no layer fails the test.
const LAYERS: &[(&str, &[&str])] = &[
    // `diagnose` holds the engine's explain notices, over the engine and lint's tables.
    (
        "top",
        &["lib", "agent", "dryrun", "explain", "lint", "diagnose"],
    ),
    ("session", &["session"]),
    (
        "engine",
        &["engine", "builder", "select", "selected", "plan"],
    ),
    ("run", &["run", "dispatcher"]),
    (
        "dialect",
        &[
            "dialect",
            "discovery",
            "settings",
            "pinned",
            "scripts",
            "managed",
            // The built-in guard: judges a call's effects; below the engine, above
            // the vocabulary and the store (its OTLP summaries).
            "guard",
        ],
    ),
    // The transports below the dialects: a dialect's hook options name an HTTP
    // handler; neither transport knows a dialect.
    ("transport", &["persistent", "http"]),
    // The record stage's sinks: the audit store and the OTLP exporter.
    ("store", &["spine", "otel"]),
    ("os", &["sandbox"]),
    ("spawn", &["spawn", "cancel"]),
    (
        "vocabulary",
        &[
            "notice",
            "private",
            "event",
            "outcome",
            "gate",
            "queue",
            "overlay",
            "scope",
            "env",
            "matcher",
            "fsread",
            "jsonpos",
            "loop_limit",
            "dropped",
            "fixture",
        ],
    ),
];

/// Upward arrows that exist today, `(from unit, to unit, why)`. Each is owned by the
/// run-core rewrite (issue 23): the lead removes the entry with the arrow.
const ALLOWED_UPWARD: &[(&str, &str, &str)] = &[];

/// Circles that exist today, `(units, why)`: a circle found must lie within one of
/// these. Entries name units, or for the [`FOCUS`] pairs the two modules.
const ALLOWED_CIRCLES: &[(&[&str], &str)] = &[];

/// Pairs of module groups checked below the unit level: the two must not reach each
/// other both ways. A group includes its submodules; `*` stands for one segment, and a
/// circle names the modules the pattern matched (`dialect::claude::parse`).
const FOCUS: &[(&str, &str)] = &[("dialect::spec", "dialect::*::parse")];

/// Files outside `src/dialect/` that match on `Dialect` variants, `(file, patterns,
/// why)`: a pattern is a `Dialect::Variant` followed by `=>`, `|` or a guard, or in
/// `matches!`.
const ALLOWED_DIALECT_MATCHES: &[(&str, usize, &str)] = &[(
    "src/scope.rs",
    6,
    "`Dialect::as_str`, on the vocabulary type itself",
)];

// ---------------------------------------------------------------------------------
// The tokenizer
// ---------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// An identifier or keyword (`$crate` reads as `crate`, a raw `r#x` as `x`).
    Ident(String),
    /// `::`
    PathSep,
    /// `=>`
    FatArrow,
    /// Any other punctuation character.
    Punct(char),
    /// A string, character or number literal, or a lifetime.
    Literal,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_continue(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Skips a quoted string's body from just after its opening quote; returns the index
/// after the closing quote.
fn skip_string(c: &[char], mut i: usize, line: &mut usize) -> usize {
    while i < c.len() {
        match c[i] {
            '\\' => {
                if c.get(i + 1) == Some(&'\n') {
                    *line += 1;
                }
                i += 2;
            }
            '"' => return i + 1,
            '\n' => {
                *line += 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    i
}

/// Skips a character literal's body from just after its opening quote.
fn skip_char(c: &[char], mut i: usize) -> usize {
    if c.get(i) == Some(&'\\') {
        i += 2;
    }
    while i < c.len() && c[i] != '\'' {
        i += 1;
    }
    i + 1
}

/// Rust source as tokens, without comments (doc comments included) and without the
/// contents of literals.
fn lex(src: &str) -> Vec<Token> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let mut push = |tok: Tok, line: usize| out.push(Token { tok, line });
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' {
            push(Tok::Literal, line);
            i = skip_string(&c, i + 1, &mut line);
        } else if ch == '\'' {
            if next == Some('\\') || c.get(i + 2) == Some(&'\'') {
                push(Tok::Literal, line);
                i = skip_char(&c, i + 1);
            } else {
                // A lifetime or a loop label.
                push(Tok::Literal, line);
                i += 1;
                while i < c.len() && is_ident_continue(c[i]) {
                    i += 1;
                }
            }
        } else if ch == '$' && next.is_some_and(is_ident_start) {
            let start = i + 1;
            i += 1;
            while i < c.len() && is_ident_continue(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            // `$crate` is the crate; any other metavariable matches nothing.
            let word = if word == "crate" {
                word
            } else {
                format!("${word}")
            };
            push(Tok::Ident(word), line);
        } else if is_ident_start(ch) {
            let start = i;
            while i < c.len() && is_ident_continue(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let after = c.get(i).copied();
            match (word.as_str(), after) {
                ("r" | "br" | "cr", Some('"' | '#')) => {
                    let mut j = i;
                    let mut hashes = 0;
                    while c.get(j) == Some(&'#') {
                        hashes += 1;
                        j += 1;
                    }
                    if c.get(j) == Some(&'"') {
                        push(Tok::Literal, line);
                        j += 1;
                        while j < c.len() {
                            if c[j] == '"' && (1..=hashes).all(|k| c.get(j + k) == Some(&'#')) {
                                j += 1 + hashes;
                                break;
                            }
                            if c[j] == '\n' {
                                line += 1;
                            }
                            j += 1;
                        }
                        i = j;
                    } else {
                        // A raw identifier, `r#type`.
                        let s = j;
                        while j < c.len() && is_ident_continue(c[j]) {
                            j += 1;
                        }
                        push(Tok::Ident(c[s..j].iter().collect()), line);
                        i = j;
                    }
                }
                ("b" | "c", Some('"')) => {
                    push(Tok::Literal, line);
                    i = skip_string(&c, i + 1, &mut line);
                }
                ("b", Some('\'')) => {
                    push(Tok::Literal, line);
                    i = skip_char(&c, i + 1);
                }
                _ => push(Tok::Ident(word), line),
            }
        } else if ch.is_ascii_digit() {
            while i < c.len() && is_ident_continue(c[i]) {
                i += 1;
            }
            push(Tok::Literal, line);
        } else if ch == ':' && next == Some(':') {
            push(Tok::PathSep, line);
            i += 2;
        } else if ch == '=' && next == Some('>') {
            push(Tok::FatArrow, line);
            i += 2;
        } else {
            push(Tok::Punct(ch), line);
            i += 1;
        }
    }
    out
}

fn ident(toks: &[Token], i: usize) -> Option<&str> {
    match toks.get(i).map(|t| &t.tok) {
        Some(Tok::Ident(w)) => Some(w),
        _ => None,
    }
}

fn is(toks: &[Token], i: usize, tok: &Tok) -> bool {
    toks.get(i).is_some_and(|t| &t.tok == tok)
}

/// The index after the bracket group opening at `i` (`(`, `[` or `{`).
fn skip_group(toks: &[Token], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < toks.len() {
        match toks[i].tok {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// Whether `#[cfg(test)]` starts at `i`.
fn is_cfg_test(toks: &[Token], i: usize) -> bool {
    let want = [
        Tok::Punct('#'),
        Tok::Punct('['),
        Tok::Ident("cfg".into()),
        Tok::Punct('('),
        Tok::Ident("test".into()),
        Tok::Punct(')'),
        Tok::Punct(']'),
    ];
    want.iter().enumerate().all(|(k, t)| is(toks, i + k, t))
}

/// The tokens without `#[cfg(test)]` items (test modules, test-only functions,
/// imports, impls, types). An attribute on anything else (a field, a statement) is
/// left alone, so its references still count.
fn strip_tests(toks: &[Token]) -> Vec<Token> {
    const ITEMS: &[&str] = &[
        "mod",
        "fn",
        "use",
        "impl",
        "struct",
        "enum",
        "const",
        "static",
        "type",
        "trait",
        "macro_rules",
    ];
    const QUALIFIERS: &[&str] = &["pub", "unsafe", "async", "extern", "default"];
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        if !is_cfg_test(toks, i) {
            out.push(toks[i].clone());
            i += 1;
            continue;
        }
        // Further attributes, then qualifiers, then the item keyword.
        let mut j = i + 7;
        while is(toks, j, &Tok::Punct('#')) && is(toks, j + 1, &Tok::Punct('[')) {
            j = skip_group(toks, j + 1);
        }
        loop {
            match ident(toks, j) {
                Some(q) if QUALIFIERS.contains(&q) => {
                    j += 1;
                    if is(toks, j, &Tok::Punct('(')) {
                        j = skip_group(toks, j);
                    } else if is(toks, j, &Tok::Literal) {
                        j += 1; // extern "C"
                    }
                }
                _ => break,
            }
        }
        let Some(keyword) = ident(toks, j).filter(|k| ITEMS.contains(k)) else {
            out.push(toks[i].clone());
            i += 1;
            continue;
        };
        // The item ends at a `;` outside brackets or with its outermost `}`.
        let mut depth = 0usize;
        let mut k = j + 1;
        while k < toks.len() {
            match toks[k].tok {
                Tok::Punct('(' | '[' | '{') => depth += 1,
                Tok::Punct(')' | ']') => depth = depth.saturating_sub(1),
                Tok::Punct('}') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 && keyword != "use" {
                        k += 1;
                        break;
                    }
                }
                Tok::Punct(';') if depth == 0 => {
                    k += 1;
                    break;
                }
                _ => {}
            }
            k += 1;
        }
        i = k;
    }
    out
}

// ---------------------------------------------------------------------------------
// References
// ---------------------------------------------------------------------------------

/// Where a path starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    /// `crate::`
    Crate,
    /// `super::` this many times.
    Super(usize),
    /// `self::`
    SelfMod,
    /// A plain name: a child module of the current one, or not the crate's at all.
    Bare,
}

/// A path as written, with the module it was written in.
#[derive(Debug, Clone)]
struct RawRef {
    context: Vec<String>,
    anchor: Anchor,
    segments: Vec<String>,
    line: usize,
    text: String,
    /// The name a `use` binds (its alias or last segment), for the root's re-exports.
    bound: Option<String>,
}

fn raw_ref(context: &[String], path: &[String], alias: Option<&str>, line: usize) -> RawRef {
    let mut segments: Vec<String> = path.to_vec();
    // A group's `self` names the prefix itself.
    if segments.last().is_some_and(|s| s == "self") && segments.len() > 1 {
        segments.pop();
    }
    let text = segments.join("::");
    let bound = alias
        .map(str::to_string)
        .or_else(|| segments.last().cloned())
        .filter(|b| b != "*");
    let (anchor, rest) = match segments.first().map(String::as_str) {
        Some("crate") => (Anchor::Crate, segments[1..].to_vec()),
        Some("self") => (Anchor::SelfMod, segments[1..].to_vec()),
        Some("super") => {
            let n = segments.iter().take_while(|s| *s == "super").count();
            (Anchor::Super(n), segments[n..].to_vec())
        }
        _ => (Anchor::Bare, segments),
    };
    RawRef {
        context: context.to_vec(),
        anchor,
        segments: rest,
        line,
        text,
        bound,
    }
}

/// Parses one use tree at `i` under `prefix`; returns the index after it.
fn use_tree(
    toks: &[Token],
    mut i: usize,
    mut prefix: Vec<String>,
    context: &[String],
    out: &mut Vec<RawRef>,
) -> usize {
    loop {
        match toks.get(i).map(|t| &t.tok) {
            Some(Tok::PathSep) => {
                if prefix.is_empty() {
                    prefix.push("::".into()); // an external crate
                }
                i += 1;
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                while i < toks.len() && !is(toks, i, &Tok::Punct('}')) {
                    i = use_tree(toks, i, prefix.clone(), context, out);
                    if is(toks, i, &Tok::Punct(',')) {
                        i += 1;
                    }
                }
                return i + 1;
            }
            Some(Tok::Punct('*')) => {
                prefix.push("*".into());
                out.push(raw_ref(context, &prefix, None, toks[i].line));
                return i + 1;
            }
            Some(Tok::Ident(seg)) => {
                prefix.push(seg.clone());
                let line = toks[i].line;
                i += 1;
                if is(toks, i, &Tok::PathSep) {
                    continue;
                }
                let mut alias = None;
                if ident(toks, i) == Some("as") {
                    alias = ident(toks, i + 1);
                    i += 2;
                }
                out.push(raw_ref(context, &prefix, alias, line));
                return i;
            }
            _ => return i,
        }
    }
}

/// One file's inline modules (full paths) and references.
#[derive(Debug, Default)]
struct Scan {
    modules: Vec<Vec<String>>,
    refs: Vec<RawRef>,
}

/// The references in (test-stripped) tokens of the file whose module is `base`.
fn scan(toks: &[Token], base: &[String]) -> Scan {
    let mut scan = Scan::default();
    // Inline modules open here: (path, brace depth inside them).
    let mut stack: Vec<(Vec<String>, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let context = stack.last().map_or(base.to_vec(), |(m, _)| m.clone());
        let prev = i.checked_sub(1).map(|p| &toks[p].tok);
        let after_sep = matches!(prev, Some(Tok::PathSep | Tok::Punct('.')));
        match &toks[i].tok {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                if stack.last().is_some_and(|(_, d)| *d == depth) {
                    stack.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Ident(w) if w == "mod" => {
                if let Some(name) = ident(toks, i + 1)
                    && is(toks, i + 2, &Tok::Punct('{'))
                {
                    let mut path = context.clone();
                    path.push(name.to_string());
                    scan.modules.push(path.clone());
                    stack.push((path, depth + 1));
                    i += 2;
                    continue;
                }
            }
            Tok::Ident(w) if w == "use" && !after_sep => {
                i = use_tree(toks, i + 1, Vec::new(), &context, &mut scan.refs);
                continue;
            }
            Tok::Ident(w)
                if !after_sep
                    && is(toks, i + 1, &Tok::PathSep)
                    && w.starts_with(|c: char| c.is_lowercase() || c == '_') =>
            {
                // `pub(in crate::x)` is a visibility, not a reference.
                let visibility =
                    i >= 2 && ident(toks, i - 1) == Some("in") && is(toks, i - 2, &Tok::Punct('('));
                let mut path = vec![w.clone()];
                let line = toks[i].line;
                let mut j = i + 1;
                while is(toks, j, &Tok::PathSep)
                    && let Some(seg) = ident(toks, j + 1)
                {
                    path.push(seg.to_string());
                    j += 2;
                }
                if !visibility {
                    scan.refs.push(raw_ref(&context, &path, None, line));
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    scan
}

/// The `Dialect::Variant` match patterns in (test-stripped) tokens: their lines.
fn dialect_patterns(toks: &[Token]) -> Vec<usize> {
    let mut lines = Vec::new();
    // Open brackets: whether each is a `matches!(…)` call.
    let mut open: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].tok {
            Tok::Punct('(' | '[' | '{') => {
                let in_matches = i >= 2
                    && is(toks, i, &Tok::Punct('('))
                    && is(toks, i - 1, &Tok::Punct('!'))
                    && ident(toks, i - 2) == Some("matches");
                open.push(in_matches);
            }
            Tok::Punct(')' | ']' | '}') => {
                open.pop();
            }
            Tok::Ident(w)
                if w == "Dialect"
                    && is(toks, i + 1, &Tok::PathSep)
                    && ident(toks, i + 2).is_some_and(|v| v.starts_with(char::is_uppercase)) =>
            {
                let mut j = i + 3;
                if is(toks, j, &Tok::Punct('(')) || is(toks, j, &Tok::Punct('{')) {
                    j = skip_group(toks, j);
                }
                let pattern = match toks.get(j).map(|t| &t.tok) {
                    Some(Tok::FatArrow) => true,
                    Some(Tok::Ident(w)) if w == "if" => true,
                    Some(Tok::Punct('|')) => !is(toks, j + 1, &Tok::Punct('|')),
                    _ => open.last().copied().unwrap_or(false),
                };
                if pattern {
                    lines.push(toks[i].line);
                }
                i += 3;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    lines
}

// ---------------------------------------------------------------------------------
// The crate's module graph
// ---------------------------------------------------------------------------------

/// One resolved reference between two modules of the crate.
#[derive(Debug, Clone)]
struct Ref {
    from: String,
    to: String,
    file: String,
    line: usize,
    text: String,
}

struct Crate {
    /// Every module path (`""` is the root).
    modules: BTreeSet<String>,
    refs: Vec<Ref>,
    /// Per file (relative to the crate), the lines of its `Dialect` match patterns.
    dialect_patterns: BTreeMap<String, Vec<usize>>,
}

/// The module path of a source file (relative to `src/`).
fn module_of(rel: &Path) -> Vec<String> {
    let mut segs: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = segs.pop().unwrap_or_default();
    let stem = last.strip_suffix(".rs").unwrap_or(&last).to_string();
    if !(stem == "mod" || (segs.is_empty() && stem == "lib")) {
        segs.push(stem);
    }
    segs
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The unit of a module: its first segment, `lib` for the root.
fn unit_of(module: &str) -> &str {
    match module.split("::").next() {
        Some("") | None => "lib",
        Some(first) => first,
    }
}

/// Resolves a path to the module it names (the longest prefix that is a module).
fn resolve(
    r: &RawRef,
    modules: &BTreeSet<String>,
    root_names: &BTreeMap<String, String>,
) -> Option<String> {
    let abs: Vec<String> = match r.anchor {
        Anchor::Crate => r.segments.clone(),
        Anchor::SelfMod => [r.context.clone(), r.segments.clone()].concat(),
        Anchor::Super(n) => {
            let keep = r.context.len().checked_sub(n)?;
            [r.context[..keep].to_vec(), r.segments.clone()].concat()
        }
        Anchor::Bare => {
            let first = r.segments.first()?;
            let mut child = r.context.clone();
            child.push(first.clone());
            if !modules.contains(&child.join("::")) {
                return None;
            }
            [r.context.clone(), r.segments.clone()].concat()
        }
    };
    let mut best = 0;
    for k in 1..=abs.len() {
        if modules.contains(&abs[..k].join("::")) {
            best = k;
        } else {
            break;
        }
    }
    if best == 0 {
        // A name at the crate root: a re-export counts as its source module.
        if let Some(m) = abs.first().and_then(|name| root_names.get(name)) {
            return Some(m.clone());
        }
        return Some(String::new());
    }
    Some(abs[..best].join("::"))
}

fn read_crate(src: &Path) -> Crate {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut modules = BTreeSet::new();
    let mut scans = Vec::new();
    let mut dialect = BTreeMap::new();
    for path in files {
        let rel = path.strip_prefix(src).unwrap();
        let module = module_of(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        let toks = strip_tests(&lex(&text));
        let scan = scan(&toks, &module);
        let file = format!("src/{}", rel.display());
        modules.insert(module.join("::"));
        for m in &scan.modules {
            modules.insert(m.join("::"));
        }
        if module.first().map(String::as_str) != Some("dialect") {
            let lines = dialect_patterns(&toks);
            if !lines.is_empty() {
                dialect.insert(file.clone(), lines);
            }
        }
        scans.push((file, scan));
    }
    // The root's names: what `lib.rs` re-exports, by the module it comes from.
    let mut root_names = BTreeMap::new();
    for (_, scan) in &scans {
        for r in scan.refs.iter().filter(|r| r.context.is_empty()) {
            if let (Some(bound), Some(m)) = (&r.bound, resolve(r, &modules, &BTreeMap::new()))
                && !m.is_empty()
            {
                root_names.insert(bound.clone(), m);
            }
        }
    }
    let mut refs = Vec::new();
    for (file, scan) in &scans {
        for r in &scan.refs {
            let Some(to) = resolve(r, &modules, &root_names) else {
                continue;
            };
            let from = r.context.join("::");
            if from != to {
                refs.push(Ref {
                    from,
                    to,
                    file: file.clone(),
                    line: r.line,
                    text: r.text.clone(),
                });
            }
        }
    }
    Crate {
        modules,
        refs,
        dialect_patterns: dialect,
    }
}

/// The strongly connected components of more than one node (Tarjan).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct Tarjan<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.edges.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.insert(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.out.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out.sort();
    t.out
}

/// The module a focus pattern matches `module` as (its first segments), if it does.
fn focus_node(pattern: &str, module: &str) -> Option<String> {
    let p: Vec<&str> = pattern.split("::").collect();
    let m: Vec<&str> = module.split("::").collect();
    (m.len() >= p.len() && p.iter().zip(&m).all(|(p, m)| *p == "*" || p == m))
        .then(|| m[..p.len()].join("::"))
}

fn circle_name(members: &BTreeSet<String>) -> String {
    members.iter().cloned().collect::<Vec<_>>().join(" <-> ")
}

/// The report, and what fails the test.
fn check(krate: &Crate) -> (String, Vec<String>) {
    let mut report = String::new();
    let mut failures = Vec::new();
    let layer_of: BTreeMap<&str, (usize, &str)> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(k, (name, units))| units.iter().map(move |u| (*u, (k, *name))))
        .collect();

    // Unit edges, with every reference that makes them.
    let mut unit_refs: BTreeMap<(String, String), Vec<&Ref>> = BTreeMap::new();
    let mut units = BTreeSet::new();
    for m in &krate.modules {
        units.insert(unit_of(m).to_string());
    }
    for r in &krate.refs {
        let (a, b) = (unit_of(&r.from), unit_of(&r.to));
        if a != b {
            unit_refs
                .entry((a.to_string(), b.to_string()))
                .or_default()
                .push(r);
        }
    }
    let _ = writeln!(report, "== layers (top to bottom) ==");
    for (name, members) in LAYERS {
        let present: Vec<&str> = members
            .iter()
            .copied()
            .filter(|u| units.contains(*u))
            .collect();
        let _ = writeln!(report, "  {name:<10} {}", present.join(" "));
    }
    for u in &units {
        if !layer_of.contains_key(u.as_str()) {
            failures.push(format!("unit `{u}` is in no layer: add it to LAYERS"));
        }
    }

    let _ = writeln!(report, "\n== unit edges (unit -> unit (references)) ==");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, b) in unit_refs.keys() {
        graph.entry(a.clone()).or_default().insert(b.clone());
    }
    for u in &units {
        let targets: Vec<String> = graph
            .get(u)
            .into_iter()
            .flatten()
            .map(|b| format!("{b} ({})", unit_refs[&(u.clone(), b.clone())].len()))
            .collect();
        let _ = writeln!(report, "  {u:<11} -> {}", targets.join(", "));
    }

    // Upward arrows.
    let _ = writeln!(report, "\n== upward arrows ==");
    let mut upward = BTreeSet::new();
    for ((a, b), refs) in &unit_refs {
        let (Some((la, na)), Some((lb, nb))) = (layer_of.get(a.as_str()), layer_of.get(b.as_str()))
        else {
            continue;
        };
        if lb >= la {
            continue;
        }
        upward.insert((a.clone(), b.clone()));
        let allowed = ALLOWED_UPWARD.iter().any(|(x, y, _)| x == a && y == b);
        let _ = writeln!(
            report,
            "  {a} ({na}) -> {b} ({nb}): {} reference(s){}",
            refs.len(),
            if allowed { "  [allowed]" } else { "" }
        );
        for r in refs {
            let _ = writeln!(report, "      {}:{}  {}", r.file, r.line, r.text);
        }
        if !allowed {
            failures.push(format!(
                "upward arrow {a} ({na}) -> {b} ({nb}) at {}",
                refs.iter()
                    .map(|r| format!("{}:{}", r.file, r.line))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    if upward.is_empty() {
        let _ = writeln!(report, "  none");
    }
    for (a, b, _) in ALLOWED_UPWARD {
        if !upward.contains(&(a.to_string(), b.to_string())) {
            failures.push(format!(
                "ALLOWED_UPWARD lists {a} -> {b}, which is gone: remove the entry"
            ));
        }
    }

    // Circles: the unit graph's, then the focused pairs'.
    let _ = writeln!(report, "\n== circles (units) ==");
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for component in circles(&graph) {
        let _ = writeln!(report, "  {}", circle_name(&component));
        for ((a, b), refs) in &unit_refs {
            if component.contains(a) && component.contains(b) {
                let _ = writeln!(report, "    {a} -> {b}");
                for r in refs {
                    let _ = writeln!(report, "      {}:{}  {}", r.file, r.line, r.text);
                }
            }
        }
        found.push(component);
    }
    if found.is_empty() {
        let _ = writeln!(report, "  none");
    }
    let _ = writeln!(report, "\n== circles (focused pairs) ==");
    for (pa, pb) in FOCUS {
        // (node a, node b) -> references, each way.
        let mut ab: BTreeMap<(String, String), Vec<&Ref>> = BTreeMap::new();
        let mut ba: BTreeMap<(String, String), Vec<&Ref>> = BTreeMap::new();
        for r in &krate.refs {
            if let (Some(a), Some(b)) = (focus_node(pa, &r.from), focus_node(pb, &r.to)) {
                ab.entry((a, b)).or_default().push(r);
            }
            if let (Some(b), Some(a)) = (focus_node(pb, &r.from), focus_node(pa, &r.to)) {
                ba.entry((a, b)).or_default().push(r);
            }
        }
        let mut any = false;
        for (pair, there) in &ab {
            let Some(back) = ba.get(pair) else { continue };
            any = true;
            let members: BTreeSet<String> = [pair.0.clone(), pair.1.clone()].into();
            let _ = writeln!(report, "  {}", circle_name(&members));
            for (from, to, refs) in [(&pair.0, &pair.1, there), (&pair.1, &pair.0, back)] {
                let _ = writeln!(report, "    {from} -> {to}");
                for r in refs {
                    let _ = writeln!(report, "      {}:{}  {}", r.file, r.line, r.text);
                }
            }
            found.push(members);
        }
        if !any {
            let _ = writeln!(report, "  {pa} / {pb}: none");
        }
    }
    for circle in &found {
        let allowed = ALLOWED_CIRCLES
            .iter()
            .any(|(members, _)| circle.iter().all(|m| members.contains(&m.as_str())));
        if !allowed {
            failures.push(format!("circle {}", circle_name(circle)));
        }
    }
    for (members, _) in ALLOWED_CIRCLES {
        let used = found
            .iter()
            .any(|circle| circle.iter().all(|m| members.contains(&m.as_str())));
        if !used {
            failures.push(format!(
                "ALLOWED_CIRCLES lists {}, which is gone: remove the entry",
                members.join(" <-> ")
            ));
        }
    }

    // Dialect matches outside dialect/.
    let _ = writeln!(report, "\n== `Dialect` match patterns outside dialect/ ==");
    let total: usize = krate.dialect_patterns.values().map(Vec::len).sum();
    for (file, lines) in &krate.dialect_patterns {
        let allowed = ALLOWED_DIALECT_MATCHES
            .iter()
            .find(|(f, _, _)| f == file)
            .map_or(0, |(_, n, _)| *n);
        let lines_text: Vec<String> = lines.iter().map(usize::to_string).collect();
        let _ = writeln!(
            report,
            "  {file}: {} (allowed {allowed}) at lines {}",
            lines.len(),
            lines_text.join(", ")
        );
        if lines.len() > allowed {
            failures.push(format!(
                "{file} has {} `Dialect` match pattern(s), {allowed} allowed (lines {})",
                lines.len(),
                lines_text.join(", ")
            ));
        }
    }
    let _ = writeln!(report, "  total: {total}");
    for (file, n, _) in ALLOWED_DIALECT_MATCHES {
        let have = krate.dialect_patterns.get(*file).map_or(0, Vec::len);
        if have < *n {
            failures.push(format!(
                "ALLOWED_DIALECT_MATCHES allows {n} in {file}, which has {have}: lower the entry"
            ));
        }
    }
    (report, failures)
}

#[test]
fn layering() {
    // `COPSE_LAYERING_SRC` checks another tree's `src/` (e.g. an older commit's).
    let src = std::env::var_os("COPSE_LAYERING_SRC").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        PathBuf::from,
    );
    let krate = read_crate(&src);
    let (report, failures) = check(&krate);
    println!("{report}");
    assert!(
        failures.is_empty(),
        "layering (see the report above):\n  {}",
        failures.join("\n  ")
    );
}

// ---------------------------------------------------------------------------------
// The checker's own tests
// ---------------------------------------------------------------------------------

/// The references of `src` written in module `base`, resolved against `modules`.
fn refs_in(src: &str, base: &[&str], modules: &[&str]) -> Vec<String> {
    let modules: BTreeSet<String> = modules.iter().map(|m| m.to_string()).collect();
    let base: Vec<String> = base.iter().map(|s| s.to_string()).collect();
    let toks = strip_tests(&lex(src));
    let mut out: Vec<String> = scan(&toks, &base)
        .refs
        .iter()
        .filter_map(|r| resolve(r, &modules, &BTreeMap::new()))
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn comments_strings_and_tests_are_not_references() {
    let src = r####"
        //! See crate::engine::Engine.
        /// Uses [`crate::session`].
        use crate::spawn::{self, Limits};
        /* crate::runner::x /* nested */ crate::runner::y */
        const A: &str = "crate::runner::run";
        const B: &str = r#"crate::runner::run "quoted" "#;
        const C: char = '"';
        fn f<'a>(x: &'a str) -> &'a str { super::sibling::g(x) }
        pub(in crate::dialect) fn h() {}
        #[cfg(test)]
        mod tests {
            use crate::engine::Engine;
        }
        #[cfg(test)]
        fn only_in_tests() { crate::session::x(); }
        mod inner {
            use super::super::outer;
        }
    "####;
    let modules = [
        "",
        "dialect",
        "dialect::spec",
        "dialect::sibling",
        "spawn",
        "engine",
        "session",
        "runner",
        "outer",
    ];
    assert_eq!(
        refs_in(src, &["dialect", "spec"], &modules),
        ["dialect", "dialect::sibling", "spawn"],
        "`inner`'s super::super is `dialect`; nothing in comments, strings or tests counts"
    );
}

#[test]
fn use_groups_children_and_root_reexports_resolve() {
    let src = r#"
        use crate::{event::{CanonicalEvent, ToolCall}, Dialect as D};
        use super::{self, gemini::parse::Handler};
        fn g() { child::run(); Child::NotAModule; self::child::x(); }
    "#;
    let modules = [
        "",
        "event",
        "dialect",
        "dialect::gemini",
        "dialect::gemini::parse",
        "dialect::spec",
        "dialect::spec::child",
    ];
    let modules_set: BTreeSet<String> = modules.iter().map(|m| m.to_string()).collect();
    let toks = strip_tests(&lex(src));
    let refs = scan(&toks, &["dialect".into(), "spec".into()]).refs;
    let root: BTreeMap<String, String> = [("Dialect".to_string(), "scope".to_string())].into();
    let mut got: Vec<String> = refs
        .iter()
        .filter_map(|r| resolve(r, &modules_set, &root))
        .collect();
    got.sort();
    got.dedup();
    assert_eq!(
        got,
        [
            "dialect",
            "dialect::gemini::parse",
            "dialect::spec::child",
            "event",
            "scope"
        ]
    );
}

#[test]
fn dialect_patterns_are_arms_and_matches() {
    let src = r#"
        fn f(d: Dialect) -> u8 {
            if matches!(d, Dialect::Claude | Dialect::Codex) { return 0; }
            let x = Dialect::Cursor;
            let y = d == Dialect::Gemini || true;
            match d {
                Dialect::Cursor => 1,
                Dialect::Copse if x == d => 2,
                _ => 3,
            }
        }
    "#;
    let toks = strip_tests(&lex(src));
    assert_eq!(dialect_patterns(&toks), [3, 3, 7, 8]);
}

#[test]
fn a_circle_and_an_upward_arrow_are_found() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e")] {
        edges.entry(a.into()).or_default().insert(b.into());
    }
    let found = circles(&edges);
    assert_eq!(found.len(), 1);
    assert_eq!(circle_name(&found[0]), "a <-> b <-> c");
    assert_eq!(
        focus_node("dialect::*::parse", "dialect::claude::parse::x"),
        Some("dialect::claude::parse".to_string())
    );
    assert_eq!(focus_node("dialect::*::parse", "dialect::claude"), None);

    // `spawn` (layer spawn) using `engine` (layer engine) points up.
    let krate = Crate {
        modules: ["", "spawn", "engine"]
            .iter()
            .map(|m| m.to_string())
            .collect(),
        refs: vec![Ref {
            from: "spawn".into(),
            to: "engine".into(),
            file: "src/spawn.rs".into(),
            line: 3,
            text: "crate::engine::Engine".into(),
        }],
        dialect_patterns: BTreeMap::new(),
    };
    let (report, failures) = check(&krate);
    assert!(
        failures
            .iter()
            .any(|f| f
                .starts_with("upward arrow spawn (spawn) -> engine (engine) at src/spawn.rs:3")),
        "{report}\n{failures:?}"
    );
}
