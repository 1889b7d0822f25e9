//! Matchers: vendor regexes and path globs, compiled once at discovery.
//!
//! Vendors write matchers as JavaScript regexes tested unanchored. Most patterns are
//! plain alternations that the linear-time `regex` engine runs in time linear in the
//! subject, so they can never stall a gate. Patterns that need lookaround or
//! backreferences (`^(?!git status)`) fall back to a backtracking engine with a step
//! limit; a subject that exhausts the limit counts as a *match* (firing the hook is the
//! safe side: skipping it would silently drop a gate) and the pattern is remembered as
//! pathological so it is never run again.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// The most memory one compiled matcher may use (its program, and its lazy DFA's
/// cache): a config cannot make the engine allocate without bound. A pattern over it
/// is an invalid matcher (the hook never fires; `list` and `lint` say why).
pub const COMPILED_SIZE_LIMIT: usize = 1 << 20;

/// How many backtracking steps a lookaround pattern may take per subject.
pub const BACKTRACK_LIMIT: usize = 100_000;

/// Why a matcher did not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("matcher `{pattern}` is not a valid regex: {reason}")]
pub struct MatcherError {
    /// The offending pattern.
    pub pattern: String,
    /// The regex engine's explanation (first line).
    pub reason: String,
}

/// The result of testing a subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchResult {
    /// The pattern matched.
    Match,
    /// The pattern did not match.
    NoMatch,
    /// The backtracking budget ran out; callers treat this as a match.
    Exhausted,
}

impl MatchResult {
    /// Whether the hook should fire.
    pub fn fires(self) -> bool {
        !matches!(self, MatchResult::NoMatch)
    }
}

#[derive(Debug)]
enum Engine {
    Linear(regex::Regex),
    Backtracking(Box<fancy_regex::Regex>),
}

/// A compiled, unanchored regex matcher.
#[derive(Debug)]
pub struct RegexMatcher {
    pattern: String,
    engine: Engine,
    pathological: AtomicBool,
}

impl RegexMatcher {
    /// Compiles a pattern: the linear-time engine when it can, the backtracking one
    /// (with a backtrack limit, `BACKTRACK_LIMIT`) only when the pattern needs it.
    pub fn new(pattern: &str) -> Result<RegexMatcher, MatcherError> {
        let engine = match regex::RegexBuilder::new(pattern)
            .size_limit(COMPILED_SIZE_LIMIT)
            .dfa_size_limit(COMPILED_SIZE_LIMIT)
            .build()
        {
            Ok(re) => Engine::Linear(re),
            Err(linear_err) => {
                match fancy_regex::RegexBuilder::new(pattern)
                    .backtrack_limit(BACKTRACK_LIMIT)
                    .delegate_size_limit(COMPILED_SIZE_LIMIT)
                    .delegate_dfa_size_limit(COMPILED_SIZE_LIMIT)
                    .build()
                {
                    Ok(re) => Engine::Backtracking(Box::new(re)),
                    Err(_) => {
                        return Err(MatcherError {
                            pattern: pattern.to_string(),
                            reason: first_line(&linear_err.to_string()),
                        });
                    }
                }
            }
        };
        Ok(RegexMatcher {
            pattern: pattern.to_string(),
            engine,
            pathological: AtomicBool::new(false),
        })
    }

    /// The source pattern.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether this pattern needed the backtracking engine.
    pub fn is_backtracking(&self) -> bool {
        matches!(self.engine, Engine::Backtracking(_))
    }

    /// Whether the pattern once exhausted its budget (it now always fires).
    pub fn is_pathological(&self) -> bool {
        self.pathological.load(Ordering::Relaxed)
    }

    /// Tests the subject, unanchored.
    pub fn test(&self, subject: &str) -> MatchResult {
        match &self.engine {
            Engine::Linear(re) => {
                if re.is_match(subject) {
                    MatchResult::Match
                } else {
                    MatchResult::NoMatch
                }
            }
            Engine::Backtracking(re) => {
                if self.pathological.load(Ordering::Relaxed) {
                    return MatchResult::Exhausted;
                }
                match re.is_match(subject) {
                    Ok(true) => MatchResult::Match,
                    Ok(false) => MatchResult::NoMatch,
                    Err(_) => {
                        self.pathological.store(true, Ordering::Relaxed);
                        MatchResult::Exhausted
                    }
                }
            }
        }
    }
}

/// A compiled set of path globs (`*` stays within a path segment, `**` crosses them,
/// dotfiles match).
#[derive(Debug, Clone)]
pub struct GlobMatcher {
    patterns: Vec<String>,
    set: GlobSet,
}

/// Why a glob did not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("glob `{pattern}` is not valid: {reason}")]
pub struct GlobError {
    /// The offending pattern.
    pub pattern: String,
    /// Why.
    pub reason: String,
}

impl GlobMatcher {
    /// Compiles the patterns.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<GlobMatcher, GlobError> {
        let mut builder = GlobSetBuilder::new();
        for p in patterns {
            let p = p.as_ref();
            let glob = GlobBuilder::new(p)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| GlobError {
                    pattern: p.to_string(),
                    reason: e.kind().to_string(),
                })?;
            builder.add(glob);
        }
        let set = builder.build().map_err(|e| GlobError {
            pattern: patterns
                .iter()
                .map(|p| p.as_ref())
                .collect::<Vec<_>>()
                .join(", "),
            reason: e.to_string(),
        })?;
        Ok(GlobMatcher {
            patterns: patterns.iter().map(|p| p.as_ref().to_string()).collect(),
            set,
        })
    }

    /// The source patterns.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Tries the absolute path, the path relative to `root` (when inside it) and the
    /// basename.
    pub fn matches_path(&self, path: &Path, root: Option<&Path>) -> bool {
        if self.set.is_match(path) {
            return true;
        }
        if let Some(root) = root
            && let Ok(rel) = path.strip_prefix(root)
            && self.set.is_match(rel)
        {
            return true;
        }
        match path.file_name() {
            Some(name) => self.set.is_match(Path::new(name)),
            None => false,
        }
    }
}

fn first_line(s: &str) -> String {
    let lines: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines.last().copied().unwrap_or(s).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_over_the_compiled_size_limit_is_invalid() {
        let err = RegexMatcher::new(r"\w{5000}").unwrap_err();
        assert!(err.reason.contains("size limit"), "{}", err.reason);
        assert!(RegexMatcher::new(r"^git (push|pull)").is_ok());
    }

    #[test]
    fn plain_alternation_is_linear_and_unanchored() {
        let m = RegexMatcher::new("curl|wget|nc ").unwrap();
        assert!(!m.is_backtracking());
        assert_eq!(m.test("echo hi && curl x | sh"), MatchResult::Match);
        assert_eq!(m.test("ls -la"), MatchResult::NoMatch);
    }

    #[test]
    fn lookahead_uses_backtracking_engine() {
        let m = RegexMatcher::new("^(?!git status)").unwrap();
        assert!(m.is_backtracking());
        assert_eq!(m.test("git status"), MatchResult::NoMatch);
        assert_eq!(m.test("git push"), MatchResult::Match);
        let b = RegexMatcher::new(r"(\w+) \1").unwrap();
        assert_eq!(b.test("rm rm -rf"), MatchResult::Match);
        assert_eq!(b.test("rm -rf"), MatchResult::NoMatch);
    }

    #[test]
    fn catastrophic_pattern_is_exhausted_not_stalled() {
        let m = RegexMatcher::new(r"^(a+)+\1$").unwrap();
        let subject = format!("{}b", "a".repeat(40));
        assert_eq!(m.test(&subject), MatchResult::Exhausted);
        assert!(m.is_pathological());
        // Remembered: never run again.
        assert_eq!(m.test("aa"), MatchResult::Exhausted);
    }

    #[test]
    fn invalid_regex_is_an_error() {
        let err = RegexMatcher::new("([unclosed").unwrap_err();
        assert_eq!(err.pattern, "([unclosed");
        assert!(!err.reason.is_empty());
    }

    #[test]
    fn glob_tries_absolute_relative_and_basename() {
        let g = GlobMatcher::new(&["src/**/*.ts"]).unwrap();
        let root = Path::new("/w");
        assert!(g.matches_path(Path::new("/w/src/a/b.ts"), Some(root)));
        assert!(!g.matches_path(Path::new("/w/lib/b.ts"), Some(root)));
        let base = GlobMatcher::new(&["*.ts"]).unwrap();
        assert!(base.matches_path(Path::new("/w/deep/nested/x.ts"), Some(root)));
        assert!(!base.matches_path(Path::new("/w/x.rs"), Some(root)));
        let dot = GlobMatcher::new(&["*.env"]).unwrap();
        assert!(
            dot.matches_path(Path::new("/w/.env"), None)
                || dot.matches_path(Path::new("/w/a.env"), None)
        );
    }
}
