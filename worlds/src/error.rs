//! What can go wrong with a batch of worlds: each message names the world (and the robot) it
//! is about.

use ssx_core::SsxError;

/// A batch's error.
#[derive(Debug, thiserror::Error)]
pub enum WorldsError {
    /// The scene cannot be used (read once for the whole batch).
    #[error("{0}")]
    Scene(SsxError),
    /// One world could not be built or reset (a plugin failed to be created, a generated map
    /// for its seed could not be made).
    #[error("world {world} (seed {seed}): {source}")]
    World {
        /// The world's index in the batch.
        world: usize,
        /// Its seed.
        seed: u64,
        /// What failed.
        source: SsxError,
    },
    /// A plugin failed in strict mode while the batch stepped.
    #[error("world {world}: {source}")]
    Strict {
        /// The world's index in the batch.
        world: usize,
        /// The fault.
        source: SsxError,
    },
    /// An argument of the wrong size or value (an array's shape, a mask's length, a count).
    #[error("{0}")]
    Argument(String),
    /// A name that is not in the scene.
    #[error("{0}")]
    Name(String),
    /// A command a driver's subscription refuses (a missing value, one beyond its limit).
    #[error("world {world}, robot '{robot}': {key}: {message}")]
    Command {
        /// The world's index in the batch.
        world: usize,
        /// The artifact the command was for.
        robot: String,
        /// The command's key.
        key: String,
        /// Why it was refused (the Zenoh bridge's message).
        message: String,
    },
}
