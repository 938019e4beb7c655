//! Reading a robot model's XML: each element and attribute error names the file, the line and
//! column, and the element (`link 'base_link' > collision[0] > geometry > mesh`).

use std::path::{Path, PathBuf};

use roxmltree::Node;
use ssx_core::math::{Pose, Vec3};
use ssx_core::{Origin, SsxError};

/// `text` parsed, or the XML error at its line and column in `file`.
pub(crate) fn parse<'i>(file: &Path, text: &'i str) -> Result<roxmltree::Document<'i>, SsxError> {
    roxmltree::Document::parse(text).map_err(|e| {
        let pos = e.pos();
        SsxError::Input {
            origin: Box::new(Origin {
                file: file.to_path_buf(),
                json_path: String::new(),
                line: pos.row as usize,
                column: pos.col as usize,
            }),
            message: format!("not well-formed XML: {e}"),
        }
    })
}

/// A model file being read: its path, for messages.
pub(crate) struct Xml<'a> {
    pub(crate) file: &'a Path,
}

impl Xml<'_> {
    /// Where `node` is, named `at`.
    pub(crate) fn origin(&self, node: Node<'_, '_>, at: &str) -> Origin {
        let pos = node.document().text_pos_at(node.range().start);
        Origin {
            file: self.file.to_path_buf(),
            json_path: at.to_string(),
            line: pos.row as usize,
            column: pos.col as usize,
        }
    }

    /// One error at `node`, named `at`.
    pub(crate) fn err(&self, node: Node<'_, '_>, at: &str, message: impl Into<String>) -> SsxError {
        SsxError::Input {
            origin: Box::new(self.origin(node, at)),
            message: message.into(),
        }
    }

    /// A required attribute.
    pub(crate) fn attr<'n>(
        &self,
        node: Node<'n, '_>,
        at: &str,
        name: &str,
    ) -> Result<&'n str, SsxError> {
        node.attribute(name).ok_or_else(|| {
            self.err(
                node,
                at,
                format!("<{}> needs a '{name}' attribute", node.tag_name().name()),
            )
        })
    }

    /// An optional attribute of `n` finite numbers (separated by spaces).
    pub(crate) fn numbers(
        &self,
        node: Node<'_, '_>,
        at: &str,
        name: &str,
        n: usize,
    ) -> Result<Option<Vec<f64>>, SsxError> {
        let Some(text) = node.attribute(name) else {
            return Ok(None);
        };
        let values: Vec<f64> = text
            .split_whitespace()
            .map(|w| w.parse::<f64>().ok().filter(|v| v.is_finite()))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                self.err(
                    node,
                    at,
                    format!("'{name}' must be finite numbers, got \"{}\"", clip(text)),
                )
            })?;
        if values.len() != n {
            return Err(self.err(
                node,
                at,
                format!(
                    "'{name}' must be {n} number{}, got {}: \"{}\"",
                    if n == 1 { "" } else { "s" },
                    values.len(),
                    clip(text)
                ),
            ));
        }
        Ok(Some(values))
    }

    /// One finite number, if given.
    pub(crate) fn number(
        &self,
        node: Node<'_, '_>,
        at: &str,
        name: &str,
    ) -> Result<Option<f64>, SsxError> {
        Ok(self.numbers(node, at, name, 1)?.map(|v| v[0]))
    }

    /// Three finite numbers, if given.
    pub(crate) fn vec3(
        &self,
        node: Node<'_, '_>,
        at: &str,
        name: &str,
    ) -> Result<Option<Vec3>, SsxError> {
        Ok(self
            .numbers(node, at, name, 3)?
            .map(|v| Vec3::new(v[0], v[1], v[2])))
    }
}

/// The element children of `node` called `tag`.
pub(crate) fn children<'a, 'i>(
    node: Node<'a, 'i>,
    tag: &'static str,
) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children()
        .filter(move |c| c.is_element() && c.tag_name().name() == tag)
}

/// The first element child of `node` called `tag`.
pub(crate) fn child<'a, 'i>(node: Node<'a, 'i>, tag: &'static str) -> Option<Node<'a, 'i>> {
    children(node, tag).next()
}

/// A long attribute cut for a message.
fn clip(text: &str) -> String {
    ssx_core::text::clip(text, 64)
}

/// A pose from a translation and roll, pitch, yaw (URDF's fixed-axis x, y, z order).
pub(crate) fn xyz_rpy(xyz: Vec3, rpy: Vec3) -> Pose {
    ssx_core::math::pose_from_xyz_rpy([xyz.x, xyz.y, xyz.z], [rpy.x, rpy.y, rpy.z])
}

/// A file named in a model, relative to the model's directory unless absolute.
pub(crate) fn beside(model: &Path, named: &str) -> PathBuf {
    let p = Path::new(named);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        model.parent().unwrap_or(Path::new(".")).join(p)
    }
}
