//! Text from outside (scene files, plugins, the network) on its way to a terminal or a log.

use std::borrow::Cow;

/// `text` with every control character (C0, DEL and C1: escape sequences, NUL, carriage
/// returns, newlines) written as `\u{..}`, `\n`, `\r` or `\t`, so that a name or a message from
/// outside cannot move the cursor, clear the screen or forge a log line.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `bytes` as lowercase hexadecimal, two digits a byte (hashes, bytes in JSON).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// [`hex`] read back; `None` for an odd length or a character that is not a hex digit.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// At most `max` bytes of `text` (cut at a character boundary), with "... (N bytes)" when cut,
/// and control characters escaped.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return escape_controls(text).into_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}... ({} bytes)",
        escape_controls(&text[..end]),
        text.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_every_control_character_and_keeps_the_rest() {
        assert_eq!(escape_controls("plain ü"), "plain ü");
        assert_eq!(
            escape_controls("a\u{1b}[31mb\0c\u{7f}\u{9b}d\n"),
            "a\\u{1b}[31mb\\u{0}c\\u{7f}\\u{9b}d\\n"
        );
        assert_eq!(clip("abcdef", 3), "abc... (6 bytes)");
        assert_eq!(clip("ééé", 3), "é... (6 bytes)");
    }
}
