//! Source positions of JSON values, for diagnostics that point at `file:line:column`.
//!
//! `serde_json` validates and parses; this scanner walks the same (already valid)
//! text once more and records where each value starts, keyed by its path of object
//! keys and array indices.

use std::collections::HashMap;

/// One step of a path into a JSON document.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// Where each value of a document starts (1-based line and column).
#[derive(Debug, Default)]
pub struct Positions {
    map: HashMap<Vec<Step>, (usize, usize)>,
}

impl Positions {
    /// Scans `text`. Invalid JSON yields whatever was recorded before the error.
    pub fn scan(text: &str) -> Positions {
        let mut s = Scanner {
            bytes: text.as_bytes(),
            i: 0,
            line: 1,
            col: 1,
            out: Positions::default(),
        };
        let mut path = Vec::new();
        s.value(&mut path, 0);
        s.out
    }

    /// The position of the value at `path`.
    pub fn get(&self, path: &[Step]) -> Option<(usize, usize)> {
        self.map.get(path).copied()
    }

    /// The position of the deepest existing prefix of `path`.
    pub fn nearest(&self, path: &[Step]) -> Option<(usize, usize)> {
        (0..=path.len()).rev().find_map(|n| self.get(&path[..n]))
    }
}

struct Scanner<'a> {
    bytes: &'a [u8],
    i: usize,
    line: usize,
    col: usize,
    out: Positions,
}

impl Scanner<'_> {
    fn bump(&mut self) {
        if let Some(&b) = self.bytes.get(self.i) {
            if b == b'\n' {
                self.line += 1;
                self.col = 1;
            } else if b & 0xC0 != 0x80 {
                // Count characters, not UTF-8 continuation bytes.
                self.col += 1;
            }
            self.i += 1;
        }
    }

    fn ws(&mut self) {
        while matches!(self.bytes.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.bump();
        }
    }

    fn string(&mut self) -> Option<String> {
        if self.bytes.get(self.i) != Some(&b'"') {
            return None;
        }
        let start = self.i;
        self.bump();
        while let Some(&b) = self.bytes.get(self.i) {
            match b {
                b'\\' => {
                    self.bump();
                    self.bump();
                }
                b'"' => {
                    self.bump();
                    let raw = std::str::from_utf8(&self.bytes[start..self.i]).ok()?;
                    return serde_json::from_str(raw).ok();
                }
                _ => self.bump(),
            }
        }
        None
    }

    fn value(&mut self, path: &mut Vec<Step>, depth: usize) -> Option<()> {
        if depth > 256 {
            return None;
        }
        self.ws();
        self.out.map.insert(path.clone(), (self.line, self.col));
        match self.bytes.get(self.i)? {
            b'{' => {
                self.bump();
                self.ws();
                if self.bytes.get(self.i) == Some(&b'}') {
                    self.bump();
                    return Some(());
                }
                loop {
                    self.ws();
                    let key = self.string()?;
                    self.ws();
                    if self.bytes.get(self.i) != Some(&b':') {
                        return None;
                    }
                    self.bump();
                    path.push(Step::Key(key));
                    let r = self.value(path, depth + 1);
                    path.pop();
                    r?;
                    self.ws();
                    match self.bytes.get(self.i)? {
                        b',' => self.bump(),
                        b'}' => {
                            self.bump();
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.bump();
                self.ws();
                if self.bytes.get(self.i) == Some(&b']') {
                    self.bump();
                    return Some(());
                }
                let mut n = 0;
                loop {
                    path.push(Step::Index(n));
                    let r = self.value(path, depth + 1);
                    path.pop();
                    r?;
                    n += 1;
                    self.ws();
                    match self.bytes.get(self.i)? {
                        b',' => self.bump(),
                        b']' => {
                            self.bump();
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => self.string().map(|_| ()),
            _ => {
                while let Some(&b) = self.bytes.get(self.i) {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.bump();
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_of_nested_values() {
        let text = "{\n  \"hooks\": {\n    \"stop\": [\n      { \"command\": \"x\", \"timeout\": 5000 }\n    ]\n  }\n}\n";
        let p = Positions::scan(text);
        let k = |s: &str| Step::Key(s.to_string());
        assert_eq!(p.get(&[k("hooks")]), Some((2, 12)));
        assert_eq!(p.get(&[k("hooks"), k("stop")]), Some((3, 13)));
        assert_eq!(
            p.get(&[k("hooks"), k("stop"), Step::Index(0)]),
            Some((4, 7))
        );
        assert_eq!(
            p.get(&[k("hooks"), k("stop"), Step::Index(0), k("timeout")]),
            Some((4, 36))
        );
        assert_eq!(p.nearest(&[k("hooks"), k("nope")]), Some((2, 12)));
    }
}
