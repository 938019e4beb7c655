//! What an instance is told when it is created, and the waker an extension rings from its own
//! threads.

use crate::abi::*;

/// What an instance is told when it is created.
#[derive(Clone, Debug)]
pub struct Init {
    /// Its artifact's name.
    pub artifact_name: String,
    /// Its artifact's index.
    pub artifact: u32,
    /// A seed for repeatable noise, distinct per instance.
    pub seed: u64,
    /// The timestep (s).
    pub timestep: f64,
    /// How many bodies the artifact has; `None` from a host too old to say.
    pub body_count: Option<u32>,
    /// How many joints the artifact has; `None` from a host too old to say.
    pub joint_count: Option<u32>,
    /// The world the instance is made in: the same for every instance of one world, different
    /// for each world of the process (a batch's worlds); 0 from a host too old to say, or for an
    /// extension.
    pub world: u64,
    /// The directory of the file the descriptor is written in, for its relative paths (`None`:
    /// a spec made in code, or a host too old to say).
    pub directory: Option<std::path::PathBuf>,
    /// Wakes a paused run (for extensions: see [`Waker`]).
    pub waker: Waker,
}

impl Init {
    /// `path` as a descriptor gives it: relative to the descriptor's file's directory, when it
    /// is relative and the host says where that is.
    pub fn resolve(&self, path: &str) -> std::path::PathBuf {
        match &self.directory {
            Some(d) if std::path::Path::new(path).is_relative() => d.join(path),
            _ => std::path::PathBuf::from(path),
        }
    }

    /// Checks a body index a descriptor gives under `key` against the artifact's bodies, so that
    /// `create` (and with it `ssxd check`) refuses what would fail at the first step:
    /// `"invalid descriptor: 'body' is 3, but artifact 'bot' has 1 body (index 0)"`. A host too
    /// old to tell the count lets every index through (the step then reports it).
    pub fn body_index(&self, key: &str, index: u32) -> Result<u32, String> {
        match self.body_count {
            Some(n) if index >= n => Err(format!(
                "invalid descriptor: '{key}' is {index}, but artifact '{}' has {}",
                self.artifact_name,
                match n {
                    0 => "no body".to_string(),
                    1 => "1 body (index 0)".to_string(),
                    n => format!("{n} bodies (indexes 0 to {})", n - 1),
                }
            )),
            _ => Ok(index),
        }
    }

    /// For a plugin that acts on or measures the artifact's first body: refuses an artifact
    /// without bodies (`"artifact 'bot' has no body to act on"`).
    pub fn root_body(&self) -> Result<(), String> {
        match self.body_count {
            Some(0) => Err(format!(
                "artifact '{}' has no body to act on",
                self.artifact_name
            )),
            _ => Ok(()),
        }
    }
}

/// Wakes a paused run so it asks every extension's `control` at once: what an extension calls
/// from its own thread (a network callback) when a control request has arrived, so that a
/// paused run answers in microseconds rather than at its next poll. Any thread; cheap to clone.
#[derive(Clone, Copy)]
pub struct Waker {
    host: Option<&'static SsxHostApi>,
}

impl std::fmt::Debug for Waker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.host.is_some() {
            "Waker"
        } else {
            "Waker(none)"
        })
    }
}

impl Waker {
    /// The host's `wake`, when the host's table has it (hosts of version 3 built before it
    /// was added do not: then waking does nothing and the run finds requests at its next poll).
    pub(crate) fn of(host: &'static SsxHostApi) -> Waker {
        let needed = std::mem::offset_of!(SsxHostApi, wake) + std::mem::size_of::<usize>();
        Waker {
            host: (host.struct_size as usize >= needed).then_some(host),
        }
    }

    /// Wakes the run if it is paused; does nothing otherwise.
    pub fn wake(&self) {
        if let Some(h) = self.host {
            // SAFETY: the host's table outlives every instance, and `struct_size` says it has
            // the field; `wake` takes no arguments and may be called from any thread.
            unsafe { (h.wake)() }
        }
    }
}
