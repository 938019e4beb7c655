//! A file being read: its text, path and what included it, with one error per problem that
//! names the file, the JSON path and the line:column; and reading regular files within a budget.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use ssx_core::{Origin, SsxError};

use crate::locate::{PositionIndex, Problem};

use crate::limits;

/// A JSON file read into memory with the positions of its values.
#[derive(Debug)]
pub(crate) struct Source {
    pub(crate) path: PathBuf,
    /// Where the paths it names are found (the file's directory, unless the scene is loaded
    /// from elsewhere: [`Scene::load_in`]).
    pub(crate) home: PathBuf,
    pub(crate) text: String,
    pub(crate) index: PositionIndex,
}

impl Source {
    /// Reads a file; `named_at` is where another file named it, for the message. Takes its size
    /// from `budget`.
    pub(crate) fn read(
        path: &Path,
        named_at: Option<(&Source, &str)>,
        budget: &std::cell::Cell<u64>,
    ) -> Result<Self, SsxError> {
        let fail = |message: String| match named_at {
            Some((src, json_path)) => src.err(json_path, message),
            None => SsxError::Io {
                path: path.to_path_buf(),
                message,
            },
        };
        let shown = path.display();
        if path.is_dir() {
            return Err(fail(format!(
                "'{shown}' is a directory, expected a JSON file"
            )));
        }
        let limit = limits::MAX_FILE_BYTES.min(budget.get());
        let text = read_regular(path, &shown.to_string(), limit).map_err(fail)?;
        budget.set(budget.get() - text.len() as u64);
        if text.trim().is_empty() {
            return Err(fail(format!("'{shown}' is empty, expected a JSON object")));
        }
        let (index, problem) = PositionIndex::scan(&text, limits::MAX_DEPTH);
        let src = Self {
            path: path.to_path_buf(),
            home: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            text,
            index: PositionIndex::default(),
        };
        let at =
            |(line, column): (usize, usize), json_path: &str, message: String| SsxError::Input {
                origin: Box::new(Origin {
                    file: src.path.clone(),
                    json_path: json_path.trim_start_matches('.').to_string(),
                    line,
                    column,
                }),
                message,
            };
        if src.text.starts_with('\u{feff}') {
            return Err(at(
                (1, 1),
                "",
                "the file starts with a UTF-8 byte order mark (BOM); save it as UTF-8 without one"
                    .into(),
            ));
        }
        let first = src.text.trim_start();
        if !first.starts_with('{') {
            let skipped = &src.text[..src.text.len() - first.len()];
            let line = skipped.matches('\n').count() + 1;
            let column = skipped.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            let got = first.chars().next().map_or(String::new(), |c| {
                ssx_core::text::escape_controls(&c.to_string()).into_owned()
            });
            return Err(at(
                (line, column),
                "",
                format!("expected a JSON object ({{ ... }}) at the top of the file, found '{got}'"),
            ));
        }
        match problem {
            Some(Problem::TooDeep { at: pos, path }) => {
                return Err(at(
                    pos,
                    &path,
                    format!(
                        "arrays and objects nest deeper than {} levels",
                        limits::MAX_DEPTH
                    ),
                ));
            }
            Some(Problem::DuplicateKey {
                key,
                path,
                at: pos,
                first,
            }) => {
                return Err(at(
                    pos,
                    &path,
                    format!(
                        "duplicate key '{}' (first at line {}, column {})",
                        ssx_core::text::clip(&key, 64),
                        first.0,
                        first.1
                    ),
                ));
            }
            Some(Problem::Unclosed { open, opened, end }) => {
                let what = if open == '{' { "object" } else { "array" };
                return Err(at(
                    end,
                    "",
                    format!(
                        "the file ends inside the {what} opened at line {}, column {} (truncated?)",
                        opened.0, opened.1
                    ),
                ));
            }
            None => {}
        }
        Ok(Self { index, ..src })
    }

    pub(crate) fn parse<T: DeserializeOwned>(&self) -> Result<T, SsxError> {
        let de = &mut serde_json::Deserializer::from_str(&self.text);
        let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
            let json_path = e.path().to_string();
            let inner = e.into_inner();
            let full = inner.to_string();
            // serde_json places a data error just after the value; the index knows where the
            // value starts. Syntax errors keep serde's position: the index stops before them.
            let (line, column) = match inner.classify() {
                serde_json::error::Category::Data => self
                    .index
                    .get(&json_path)
                    .unwrap_or((inner.line(), inner.column())),
                _ => (inner.line(), inner.column()),
            };
            let message = ssx_core::spelling::suggest(match full.rfind(" at line ") {
                Some(i) => &full[..i],
                None => &full,
            });
            SsxError::Input {
                origin: Box::new(Origin {
                    file: self.path.clone(),
                    json_path: if json_path == "." {
                        String::new()
                    } else {
                        json_path
                    },
                    line,
                    column,
                }),
                message,
            }
        })?;
        de.end().map_err(|e| SsxError::Input {
            origin: Box::new(Origin {
                file: self.path.clone(),
                json_path: String::new(),
                line: e.line(),
                column: e.column(),
            }),
            message: "trailing characters after the JSON object".into(),
        })?;
        Ok(value)
    }

    /// A robot model file (XML): its messages name the file, not JSON paths.
    pub(crate) fn model(path: &Path, text: String) -> Self {
        Self {
            path: path.to_path_buf(),
            home: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            text,
            index: PositionIndex::default(),
        }
    }

    pub(crate) fn origin(&self, json_path: &str) -> Origin {
        let (line, column) = self.index.locate(json_path);
        Origin {
            file: self.path.clone(),
            json_path: if json_path == "." {
                String::new()
            } else {
                json_path.to_string()
            },
            line,
            column,
        }
    }

    pub(crate) fn err(&self, json_path: &str, message: impl Into<String>) -> SsxError {
        SsxError::Input {
            origin: Box::new(self.origin(json_path)),
            message: message.into(),
        }
    }

    /// A path named in this file, resolved against the file's directory.
    pub(crate) fn resolve(&self, named: &Path) -> PathBuf {
        if named.is_relative() {
            self.home.join(named)
        } else {
            named.to_path_buf()
        }
    }
}

/// Reads a regular file of at most `max` bytes as UTF-8. Devices, FIFOs and sockets are refused
/// before a byte is read (the open does not block on a FIFO), and a file never takes more than
/// `max` bytes of memory, even if it grows while being read. Messages name the file as `shown`.
pub(crate) fn read_regular(path: &Path, shown: &str, max: u64) -> Result<String, String> {
    let bytes = read_regular_bytes(path, shown, max, "a JSON file")?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "'{shown}' is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// [`read_regular`]'s bytes; `want` says what the file should be, for the message.
pub(crate) fn read_regular_bytes(
    path: &Path,
    shown: &str,
    max: u64,
    want: &str,
) -> Result<Vec<u8>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let io = |e: std::io::Error| format!("cannot read '{shown}': {e}");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(format!(
            "{}; name {want}",
            ssx_core::files::not_regular(shown, &meta)
        ));
    }
    let too_big = || format!("'{shown}' is larger than {max} bytes, the limit for a scene's files");
    if meta.len() > max {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(too_big());
    }
    Ok(bytes)
}
