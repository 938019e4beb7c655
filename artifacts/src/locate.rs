//! Line and column of every value in a JSON text, by JSON path (the path syntax of
//! serde_path_to_error: `artifacts[2].pose.position[0]`, `.` for the root). Errors found after
//! parsing (a duplicate name, a missing parent) use it to say where they are.

use std::collections::HashMap;

/// Positions of the values of one JSON text.
#[derive(Debug, Default)]
pub struct PositionIndex {
    map: HashMap<String, (usize, usize)>,
}

impl PositionIndex {
    /// Indexes a text. Malformed JSON is indexed up to the first problem (serde reports those).
    pub fn new(text: &str) -> Self {
        let mut s = Scanner {
            chars: text.chars().peekable(),
            line: 1,
            col: 1,
            map: HashMap::new(),
        };
        s.value(String::new());
        Self { map: s.map }
    }

    /// 1-based (line, column) of the value at exactly `path`, if it was indexed.
    pub fn get(&self, path: &str) -> Option<(usize, usize)> {
        self.map
            .get(if path.is_empty() { "." } else { path })
            .copied()
    }

    /// 1-based (line, column) of the value at `path`, or of its nearest indexed ancestor.
    pub fn locate(&self, path: &str) -> (usize, usize) {
        let mut p = path;
        loop {
            if let Some(&pos) = self.map.get(if p.is_empty() { "." } else { p }) {
                return pos;
            }
            match p.rfind(['.', '[']) {
                Some(i) => p = &p[..i],
                None if !p.is_empty() => p = "",
                None => return (1, 1),
            }
        }
    }
}

struct Scanner<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
    col: usize,
    map: HashMap<String, (usize, usize)>,
}

impl Scanner<'_> {
    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn ws(&mut self) {
        while self.chars.peek().is_some_and(|c| c.is_whitespace()) {
            self.bump();
        }
    }

    fn string(&mut self) -> Option<String> {
        let mut out = String::new();
        if self.bump()? != '"' {
            return None;
        }
        loop {
            match self.bump()? {
                '"' => return Some(out),
                '\\' => {
                    let c = self.bump()?;
                    out.push(match c {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                }
                c => out.push(c),
            }
        }
    }

    fn child(parent: &str, key: &str) -> String {
        if parent.is_empty() {
            key.to_string()
        } else {
            format!("{parent}.{key}")
        }
    }

    fn value(&mut self, path: String) -> Option<()> {
        self.ws();
        let here = (self.line, self.col);
        self.map.insert(
            if path.is_empty() {
                ".".into()
            } else {
                path.clone()
            },
            here,
        );
        match *self.chars.peek()? {
            '{' => {
                self.bump();
                loop {
                    self.ws();
                    match *self.chars.peek()? {
                        '}' => {
                            self.bump();
                            return Some(());
                        }
                        ',' => {
                            self.bump();
                        }
                        '"' => {
                            let key = self.string()?;
                            self.ws();
                            if self.bump()? != ':' {
                                return None;
                            }
                            self.value(Self::child(&path, &key))?;
                        }
                        _ => return None,
                    }
                }
            }
            '[' => {
                self.bump();
                let mut i = 0;
                loop {
                    self.ws();
                    match *self.chars.peek()? {
                        ']' => {
                            self.bump();
                            return Some(());
                        }
                        ',' => {
                            self.bump();
                        }
                        _ => {
                            self.value(format!("{path}[{i}]"))?;
                            i += 1;
                        }
                    }
                }
            }
            '"' => self.string().map(|_| ()),
            _ => {
                while self
                    .chars
                    .peek()
                    .is_some_and(|c| !matches!(c, ',' | '}' | ']') && !c.is_whitespace())
                {
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
    fn finds_nested_values_and_falls_back_to_ancestors() {
        let text = "{\n  \"a\": [1,\n    {\"b\": \"x\"}],\n  \"c\": {\"d\": true}\n}";
        let idx = PositionIndex::new(text);
        assert_eq!(idx.locate("."), (1, 1));
        assert_eq!(idx.locate("a"), (2, 8));
        assert_eq!(idx.locate("a[1].b"), (3, 11));
        assert_eq!(idx.locate("c.d"), (4, 14));
        assert_eq!(idx.locate("c.missing"), (4, 8));
    }
}
