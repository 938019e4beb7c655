//! The part of xacro that simple URDFs use: `<xacro:arg>` (its default: ssx passes no
//! arguments) and `<xacro:property>` with values, and `${name}` and `$(arg name)` substituted.
//! Macros, includes, conditionals and expressions are refused with a message that says to run
//! `xacro` first, at the element or expression that needs it.

use std::collections::HashMap;
use std::path::Path;

use ssx_core::{Origin, SsxError};

/// The document with its xacro markup expanded, or `None` when it has none.
pub(crate) fn expand(file: &Path, text: &str) -> Result<Option<String>, SsxError> {
    if !text.contains("xacro:") && !text.contains("${") && !text.contains("$(") {
        return Ok(None);
    }
    let fail = |offset: usize, message: String| {
        let before = &text[..offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        SsxError::Input {
            origin: Box::new(Origin {
                file: file.to_path_buf(),
                json_path: String::new(),
                line,
                column,
            }),
            message,
        }
    };
    let doc = super::xml::parse(file, text)?;
    let run_xacro = "run `xacro` on the file first and name its output (ssx expands only xacro:arg and xacro:property with plain values, ${name} and $(arg name))";
    let mut blank: Vec<std::ops::Range<usize>> = Vec::new();
    let mut values: HashMap<String, String> = HashMap::new();
    let mut args: HashMap<String, String> = HashMap::new();
    let mut pending: Vec<(usize, String, String, bool)> = Vec::new();
    for node in doc.descendants() {
        if node.is_comment() {
            blank.push(node.range());
            continue;
        }
        if !node.is_element() {
            continue;
        }
        let tag = node.tag_name();
        let is_xacro = tag
            .namespace()
            .is_some_and(|ns| ns.contains("ros.org/wiki/xacro"));
        if !is_xacro {
            continue;
        }
        let start = node.range().start;
        let name = node
            .attribute("name")
            .ok_or_else(|| fail(start, format!("<xacro:{}> needs a 'name'", tag.name())))?;
        match tag.name() {
            "arg" => pending.push((
                start,
                name.to_string(),
                node.attribute("default").unwrap_or("").to_string(),
                true,
            )),
            "property" => {
                let value = node.attribute("value").ok_or_else(|| {
                    fail(
                        start,
                        format!("<xacro:property name=\"{name}\"> without a 'value' (a block property): {run_xacro}"),
                    )
                })?;
                pending.push((start, name.to_string(), value.to_string(), false));
            }
            other => {
                return Err(fail(
                    start,
                    format!("<xacro:{other}> is not expanded here: {run_xacro}"),
                ));
            }
        }
        blank.push(node.range());
    }
    // Arguments and properties in document order, each value expanded with those before it.
    for (at, name, value, is_arg) in pending {
        let v = substitute(&value, &values, &args).map_err(|m| fail(at, m))?;
        if is_arg {
            args.insert(name, v);
        } else {
            values.insert(name, v);
        }
    }
    let mut out: Vec<u8> = text.as_bytes().to_vec();
    for r in blank {
        for b in &mut out[r] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    let kept = String::from_utf8(out).map_err(|_| {
        fail(
            0,
            "a comment or xacro element cut a character in two".into(),
        )
    })?;
    // Substituted line by line so that an error names its line.
    let mut result = String::with_capacity(kept.len());
    let mut offset = 0;
    for line in kept.split_inclusive('\n') {
        let done = substitute(line, &values, &args).map_err(|m| {
            let col = line.find("${").or_else(|| line.find("$(")).unwrap_or(0);
            fail(offset + col, m)
        })?;
        result.push_str(&done);
        offset += line.len();
    }
    Ok(Some(result))
}

/// `${name}` and `$(arg name)` replaced in `text`.
fn substitute(
    text: &str,
    values: &HashMap<String, String>,
    args: &HashMap<String, String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let (open, close) = match tail.as_bytes().get(1) {
            Some(b'{') => ('{', '}'),
            Some(b'(') => ('(', ')'),
            _ => {
                out.push('$');
                rest = &tail[1..];
                continue;
            }
        };
        let end = tail
            .find(close)
            .ok_or_else(|| format!("'${open}' is not closed"))?;
        let inner = tail[2..end].trim();
        let value = if open == '{' {
            values.get(inner).ok_or_else(|| {
                if inner.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    format!("no xacro property '{inner}'")
                } else {
                    format!("the expression '${{{inner}}}' is not expanded here: run `xacro` on the file first and name its output")
                }
            })?
        } else {
            match inner.split_whitespace().collect::<Vec<_>>().as_slice() {
                ["arg", name] => args
                    .get(*name)
                    .ok_or_else(|| format!("no xacro argument '{name}'"))?,
                _ => {
                    return Err(format!(
                        "'$({inner})' is not expanded here: run `xacro` on the file first and name its output"
                    ));
                }
            }
        };
        out.push_str(value);
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "<robot name=\"r\" xmlns:xacro=\"http://ros.org/wiki/xacro\">\n";

    #[test]
    fn args_and_properties_are_substituted_and_comments_left_alone() {
        let text = format!(
            "{HEAD}<!-- <xacro:include filename=\"$(find x)\"/> -->\n<xacro:arg name=\"ns\" default=\"a_\"/>\n<xacro:property name=\"p\" value=\"$(arg ns)\"/>\n<link name=\"${{p}}base\"/>\n</robot>"
        );
        let out = expand(Path::new("r.urdf"), &text).unwrap().unwrap();
        assert!(out.contains("<link name=\"a_base\"/>"), "{out}");
        assert!(!out.contains("xacro:arg"));
        assert_eq!(out.lines().count(), text.lines().count());
    }

    #[test]
    fn a_macro_and_an_expression_are_refused_where_they_are() {
        let text = format!("{HEAD}\n<xacro:macro name=\"m\"/>\n</robot>");
        let e = expand(Path::new("r.urdf"), &text).unwrap_err().to_string();
        assert!(
            e.starts_with("r.urdf:3:1: <xacro:macro> is not expanded here: run `xacro`"),
            "{e}"
        );
        let text =
            format!("{HEAD}<link name=\"a\">\n<origin xyz=\"${{pi/2}} 0 0\"/></link>\n</robot>");
        let e = expand(Path::new("r.urdf"), &text).unwrap_err().to_string();
        assert!(
            e.starts_with("r.urdf:3:14: the expression '${pi/2}' is not expanded here"),
            "{e}"
        );
    }
}
