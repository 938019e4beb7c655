//! Line and column of every value in a JSON text, by JSON path (the path syntax of
//! serde_path_to_error: `artifacts[2].pose.position[0]`, `.` for the root). Errors found after
//! parsing (a duplicate name, a missing parent) use it to say where they are.

use std::collections::HashMap;

/// Positions of the values of one JSON text.
#[derive(Debug, Default)]
pub struct PositionIndex {
    map: HashMap<String, (usize, usize)>,
}

/// A problem the scan finds that the JSON parser would not report, or not well.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// Arrays and objects nested deeper than the limit; at the first one too deep.
    TooDeep {
        /// Where.
        at: (usize, usize),
        /// JSON path of the container.
        path: String,
    },
    /// A key given twice in one object (the parser would keep one of them silently).
    DuplicateKey {
        /// The key.
        key: String,
        /// JSON path of the second value.
        path: String,
        /// Where the second is.
        at: (usize, usize),
        /// Where the first is.
        first: (usize, usize),
    },
    /// The text ends inside an array or object.
    Unclosed {
        /// `{` or `[`.
        open: char,
        /// Where it was opened.
        opened: (usize, usize),
        /// The end of the text.
        end: (usize, usize),
    },
}

impl PositionIndex {
    /// Indexes a text. Malformed JSON is indexed up to the first problem (serde reports those).
    pub fn new(text: &str) -> Self {
        Self::scan(text, usize::MAX).0
    }

    /// Indexes a text and reports the first structural problem: nesting deeper than
    /// `max_depth`, a duplicate key, or an end of text inside a container. Iterative: no
    /// recursion, memory linear in the text.
    pub fn scan(text: &str, max_depth: usize) -> (Self, Option<Problem>) {
        let mut s = Scanner {
            chars: text.chars().peekable(),
            line: 1,
            col: 1,
        };
        let mut map = HashMap::new();
        let mut stack: Vec<Frame> = Vec::new();
        let mut pending = Some(String::new());
        let mut problem = None;
        loop {
            s.ws();
            if let Some(path) = pending.take() {
                let here = (s.line, s.col);
                let Some(&c) = s.chars.peek() else { break };
                let key = if path.is_empty() {
                    ".".to_string()
                } else {
                    path.clone()
                };
                map.insert(key, here);
                match c {
                    '{' | '[' => {
                        if stack.len() >= max_depth {
                            problem = Some(Problem::TooDeep { at: here, path });
                            break;
                        }
                        s.bump();
                        stack.push(Frame {
                            path,
                            open: c,
                            opened: here,
                            items: 0,
                            keys: HashMap::new(),
                        });
                    }
                    '"' => {
                        if s.string().is_none() {
                            break;
                        }
                    }
                    _ => s.scalar(),
                }
                continue;
            }
            let Some(top) = stack.last_mut() else { break };
            let Some(&c) = s.chars.peek() else {
                problem = Some(Problem::Unclosed {
                    open: top.open,
                    opened: top.opened,
                    end: (s.line, s.col),
                });
                break;
            };
            match (top.open, c) {
                ('{', '}') | ('[', ']') => {
                    s.bump();
                    stack.pop();
                }
                (_, ',') => {
                    s.bump();
                }
                ('{', '"') => {
                    let at = (s.line, s.col);
                    let Some(key) = s.string() else { break };
                    s.ws();
                    if s.bump() != Some(':') {
                        break;
                    }
                    let path = child(&top.path, &key);
                    if let Some(&first) = top.keys.get(&key) {
                        if problem.is_none() {
                            problem = Some(Problem::DuplicateKey {
                                key,
                                path: path.clone(),
                                at,
                                first,
                            });
                        }
                    } else {
                        top.keys.insert(key, at);
                    }
                    pending = Some(path);
                }
                ('[', _) => {
                    pending = Some(format!("{}[{}]", top.path, top.items));
                    top.items += 1;
                }
                _ => break,
            }
        }
        (Self { map }, problem)
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

/// An open array or object.
struct Frame {
    path: String,
    open: char,
    opened: (usize, usize),
    items: usize,
    keys: HashMap<String, (usize, usize)>,
}

fn child(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

struct Scanner<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
    col: usize,
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

    fn scalar(&mut self) {
        while self
            .chars
            .peek()
            .is_some_and(|c| !matches!(c, ',' | '}' | ']') && !c.is_whitespace())
        {
            self.bump();
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

    #[test]
    fn reports_depth_duplicates_and_truncation_where_they_are() {
        let deep = "[".repeat(100_000);
        let (_, p) = PositionIndex::scan(&deep, 64);
        assert_eq!(
            p,
            Some(Problem::TooDeep {
                at: (1, 65),
                path: "[0]".repeat(64),
            })
        );
        let (_, p) = PositionIndex::scan("{\"a\": 1,\n \"b\": {\"c\": 1, \"c\": 2}}", 64);
        assert_eq!(
            p,
            Some(Problem::DuplicateKey {
                key: "c".into(),
                path: "b.c".into(),
                at: (2, 16),
                first: (2, 8),
            })
        );
        let (_, p) = PositionIndex::scan("{\"a\": [1,\n  2", 64);
        assert_eq!(
            p,
            Some(Problem::Unclosed {
                open: '[',
                opened: (1, 7),
                end: (2, 4),
            })
        );
        assert_eq!(PositionIndex::scan("{\"a\": [1, {}]}", 64).1, None);
    }
}
