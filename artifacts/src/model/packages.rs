//! Where a model's files are: `package://name/path` found as ROS finds packages, `file://`
//! paths, and paths relative to the model file. The search, in order: the directories the
//! scene names (`"packages"`), the model file's own directory and those above it (a directory
//! called `name`, or holding a `package.xml` whose `<name>` is `name`), then `SSX_PACKAGE_PATH`,
//! `ROS_PACKAGE_PATH` (each directory, and the packages in it) and `AMENT_PREFIX_PATH`
//! (`share/name` under each prefix).

use std::path::{Path, PathBuf};

/// The directories a model's `package://` paths are looked for in.
pub(crate) struct Search {
    model: PathBuf,
    /// Directories that may be a package or hold packages, in order.
    roots: Vec<PathBuf>,
}

impl Search {
    pub(crate) fn new(model: &Path, named: &[PathBuf]) -> Search {
        let mut roots: Vec<PathBuf> = named.to_vec();
        roots.extend(
            model
                .parent()
                .into_iter()
                .flat_map(Path::ancestors)
                .map(Path::to_path_buf),
        );
        for var in ["SSX_PACKAGE_PATH", "ROS_PACKAGE_PATH"] {
            if let Some(v) = std::env::var_os(var) {
                roots.extend(std::env::split_paths(&v).filter(|p| !p.as_os_str().is_empty()));
            }
        }
        if let Some(v) = std::env::var_os("AMENT_PREFIX_PATH") {
            roots.extend(
                std::env::split_paths(&v)
                    .filter(|p| !p.as_os_str().is_empty())
                    .map(|p| p.join("share")),
            );
        }
        Search {
            model: model.to_path_buf(),
            roots,
        }
    }

    /// The file a model names; the message says what was searched when it is not there.
    pub(crate) fn resolve(&self, uri: &str) -> Result<PathBuf, String> {
        if let Some(rest) = uri.strip_prefix("package://") {
            let (package, inner) = rest.split_once('/').unwrap_or((rest, ""));
            if package.is_empty() || inner.is_empty() {
                return Err(format!("'{uri}' does not name a package and a file in it"));
            }
            for root in &self.roots {
                for dir in [root.clone(), root.join(package)] {
                    if is_package(&dir, package) {
                        let path = dir.join(inner);
                        return if path.is_file() {
                            Ok(path)
                        } else {
                            Err(format!(
                                "'{uri}': package '{package}' is {} but has no file '{inner}'",
                                dir.display()
                            ))
                        };
                    }
                }
            }
            return Err(format!(
                "'{uri}': no package '{package}' in the directories the scene names (\"packages\"), above {} or in SSX_PACKAGE_PATH, ROS_PACKAGE_PATH or AMENT_PREFIX_PATH",
                self.model.display()
            ));
        }
        let path = if let Some(abs) = uri.strip_prefix("file://") {
            PathBuf::from(abs)
        } else if uri.contains("://") {
            return Err(format!(
                "'{uri}': only package://, file:// and paths relative to the model are read"
            ));
        } else {
            super::xml::beside(&self.model, uri)
        };
        if path.is_file() {
            Ok(path)
        } else {
            Err(format!("'{uri}' not found (looked for {})", path.display()))
        }
    }
}

/// Whether `dir` is the package `name`: called so, or its `package.xml` says so.
fn is_package(dir: &Path, name: &str) -> bool {
    if !dir.is_dir() {
        return false;
    }
    if dir.file_name().is_some_and(|n| n == name) {
        return true;
    }
    std::fs::read_to_string(dir.join("package.xml"))
        .ok()
        .and_then(|t| {
            let doc = roxmltree::Document::parse(&t).ok()?;
            let n = doc
                .root_element()
                .children()
                .find(|c| c.has_tag_name("name"))?;
            Some(n.text()?.trim() == name)
        })
        .unwrap_or(false)
}
