//! The one error type of the host.

use std::fmt;
use std::path::PathBuf;

/// Where a piece of configuration came from: a file, a JSON path in it, and line:column.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    /// The file.
    pub file: PathBuf,
    /// JSON path of the value, e.g. `artifacts[2].driver.descriptor`.
    pub json_path: String,
    /// 1-based line of the value (0 when unknown).
    pub line: usize,
    /// 1-based column of the value (0 when unknown).
    pub column: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if !self.json_path.is_empty() {
            write!(f, " (at {})", self.json_path)?;
        }
        Ok(())
    }
}

/// A plugin that failed while the simulation ran.
#[derive(Clone, Debug)]
pub struct PluginFault {
    /// The artifact that owns the plugin (empty for an extension, which belongs to the scene).
    pub artifact: String,
    /// What the plugin is: `driver 'hover'` or `sensor 'imu' (pose)`.
    pub plugin: String,
    /// The step it failed in.
    pub step: u64,
    /// What happened (the plugin's error message or the panic payload).
    pub message: String,
}

impl fmt::Display for PluginFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.artifact.is_empty() {
            write!(f, "artifact '{}': ", self.artifact)?;
        }
        write!(
            f,
            "{} failed at step {}: {}",
            self.plugin, self.step, self.message
        )
    }
}

/// Every error the host reports. Messages say what and where.
#[derive(Debug, thiserror::Error)]
pub enum SsxError {
    /// Malformed configuration (scene, artifact file, descriptor).
    #[error("{origin}: {message}")]
    Input {
        /// Where.
        origin: Box<Origin>,
        /// What.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A plugin could not be created from its descriptor.
    #[error("{}cannot create {plugin}: {message}{}", if artifact.is_empty() { String::new() } else { format!("artifact '{artifact}': ") }, origin.as_ref().map(|o| format!(" (descriptor at {o})")).unwrap_or_default())]
    PluginCreate {
        /// The artifact that asked for it (empty for an extension).
        artifact: String,
        /// What it is: `driver 'hover'`, `extension 'zenoh'`.
        plugin: String,
        /// The plugin's own message.
        message: String,
        /// Where its descriptor is.
        origin: Option<Box<Origin>>,
    },
    /// A plugin failed while running and strict mode asked the run to stop.
    #[error("{0} (strict mode: stopping)")]
    PluginFailed(Box<PluginFault>),
    /// The physics engine refused something.
    #[error("physics engine '{engine}': {message}")]
    Engine {
        /// Engine name.
        engine: String,
        /// What.
        message: String,
    },
    /// A bad command-line or configuration value.
    #[error("{0}")]
    Config(String),
}

impl SsxError {
    /// An [`SsxError::Io`] from a [`std::io::Error`].
    pub fn io(path: impl Into<PathBuf>, err: &std::io::Error) -> Self {
        SsxError::Io {
            path: path.into(),
            message: err.to_string(),
        }
    }
}

/// A library named on the command line (or a copy directory) that cannot be used: a
/// configuration error, with the loader's message.
impl From<crate::abi::LoadError> for SsxError {
    fn from(e: crate::abi::LoadError) -> Self {
        SsxError::Config(e.to_string())
    }
}
