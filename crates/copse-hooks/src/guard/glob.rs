//! Shell-style globs, matched by a small automaton.
//!
//! Written here rather than taken from `globset` because the guard compiles every
//! rule's globs in each short-lived process (one per shim or CLI gate): measured on
//! the built-in packs, building them with `globset` (a regex per set) took most of
//! the guard's start-up (4.7 ms of 4.9 ms in a debug build), while these patterns
//! compile by splitting a string. Matching walks the text once, holding the set of
//! pattern positions it can be at (no backtracking, so no pattern is slow).
//!
//! `*` matches any run of characters (not `/` when the glob is a path glob), `**` any
//! run including `/`, `?` one character, `[abc]`, `[a-z]` and `[!x]` a class, `\x`
//! the character `x`.

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Lit(char),
    /// `*`
    Any,
    /// `**`
    Deep,
    /// `?`
    One,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

/// One compiled glob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Glob {
    toks: Vec<Tok>,
    /// Whether `*` and `?` stop at `/`.
    separator: bool,
}

impl Glob {
    /// Compiles `pattern`; an unterminated class or a trailing `\` is an error.
    pub fn new(pattern: &str, separator: bool) -> Result<Glob, String> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut toks = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            match c {
                '*' => {
                    if chars.get(i + 1) == Some(&'*') {
                        toks.push(Tok::Deep);
                        i += 2;
                        // `**/` also matches nothing.
                        continue;
                    }
                    toks.push(Tok::Any);
                }
                '?' => toks.push(Tok::One),
                '\\' => {
                    let Some(n) = chars.get(i + 1) else {
                        return Err("ends with a lone `\\`".into());
                    };
                    toks.push(Tok::Lit(*n));
                    i += 1;
                }
                '[' => {
                    let mut j = i + 1;
                    let negated = matches!(chars.get(j), Some('!' | '^'));
                    if negated {
                        j += 1;
                    }
                    let mut ranges = Vec::new();
                    let start = j;
                    loop {
                        let Some(&x) = chars.get(j) else {
                            return Err("has an unterminated `[`".into());
                        };
                        if x == ']' && j > start {
                            break;
                        }
                        if chars.get(j + 1) == Some(&'-')
                            && chars.get(j + 2).is_some_and(|e| *e != ']')
                        {
                            ranges.push((x, chars[j + 2]));
                            j += 3;
                        } else {
                            ranges.push((x, x));
                            j += 1;
                        }
                    }
                    toks.push(Tok::Class { negated, ranges });
                    i = j;
                }
                _ => toks.push(Tok::Lit(c)),
            }
            i += 1;
        }
        Ok(Glob { toks, separator })
    }

    /// Whether the whole of `text` matches.
    pub fn is_match(&self, text: &str) -> bool {
        let n = self.toks.len();
        let mut cur = vec![false; n + 1];
        let mut next = vec![false; n + 1];
        cur[0] = true;
        self.close(&mut cur);
        for c in text.chars() {
            next.iter_mut().for_each(|x| *x = false);
            let mut any = false;
            for i in 0..n {
                if !cur[i] {
                    continue;
                }
                let sep_ok = !(self.separator && c == '/');
                match &self.toks[i] {
                    Tok::Lit(x) if *x == c => next[i + 1] = true,
                    Tok::One if sep_ok => next[i + 1] = true,
                    Tok::Class { negated, ranges } => {
                        let inside = ranges.iter().any(|(a, b)| *a <= c && c <= *b);
                        if inside != *negated && sep_ok {
                            next[i + 1] = true;
                        }
                    }
                    Tok::Any if sep_ok => next[i] = true,
                    Tok::Deep => next[i] = true,
                    _ => continue,
                }
                any = true;
            }
            if !any {
                return false;
            }
            std::mem::swap(&mut cur, &mut next);
            self.close(&mut cur);
        }
        cur[n]
    }

    /// Adds the positions reachable without consuming a character (past stars, and
    /// past `/` after `**`).
    fn close(&self, set: &mut [bool]) {
        for i in 0..self.toks.len() {
            if set[i] {
                match self.toks[i] {
                    Tok::Any | Tok::Deep => set[i + 1] = true,
                    _ => {}
                }
                if self.toks[i] == Tok::Deep && self.toks.get(i + 1) == Some(&Tok::Lit('/')) {
                    set[i + 2] = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, sep: bool, t: &str) -> bool {
        Glob::new(p, sep)
            .unwrap_or_else(|e| panic!("{p}: {e}"))
            .is_match(t)
    }

    #[test]
    fn globs() {
        assert!(m("rm -rf *", false, "rm -rf /tmp/x"));
        assert!(!m("rm -rf *", false, "rm -r /tmp"));
        assert!(m("git push --force*", false, "git push --force-with-lease"));
        assert!(m("~/.ssh/*", true, "~/.ssh/id_rsa"));
        assert!(!m("~/.ssh/*", true, "~/.ssh/a/b"));
        assert!(m("/etc/**", true, "/etc/a/b/c"));
        assert!(m("**/copse-hooks", true, "/usr/local/bin/copse-hooks"));
        assert!(m("**/copse-hooks", true, "copse-hooks"));
        assert!(m("release/*", false, "release/1.2"));
        assert!(m("[mM]ain", false, "Main"));
        assert!(!m("[!m]ain", false, "main"));
        assert!(m("a\\*b", false, "a*b"));
        assert!(!m("a\\*b", false, "axb"));
        assert!(m("", false, ""));
        assert!(!m("", false, "x"));
        assert!(Glob::new("[abc", false).is_err());
        // No pathological backtracking.
        let long = "a".repeat(5000);
        assert!(!m("*a*a*a*a*a*a*a*a*b", false, &long));
    }
}
