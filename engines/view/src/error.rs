//! Why the live view or the recording cannot start: one type for the crate, its messages the
//! ones ssxd prints (each names the flag, file or address at fault).

use std::path::PathBuf;

use foxglove::FoxgloveError;

/// The live view or the recording cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// `--view-rate` out of range.
    #[error("view rate must be above 0 and at most 1000 Hz, got {0}")]
    Rate(f64),
    /// `--record-every 0`.
    #[error("--record-every must be at least 1")]
    RecordEvery,
    /// The recording's file exists: it is never overwritten.
    #[error("--record '{}': the file exists; remove it or name another", .0.display())]
    RecordingExists(PathBuf),
    /// The recording's file cannot be created.
    #[error("--record '{}': {source}", path.display())]
    Recording {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The scene file cannot be read to keep it in the recording.
    #[error("--record: cannot read the scene file '{}' to keep it in the recording: {source}", path.display())]
    SceneFile {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A recording cannot be read back for a replay.
    #[error("cannot replay '{}': {why}", path.display())]
    Playback {
        /// The file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// A recorder is started once.
    #[error("the recording was already started")]
    AlreadyStarted,
    /// The MCAP writer refused to start.
    #[error("--record: cannot start the MCAP writer: {0}")]
    Writer(FoxgloveError),
    /// A channel of the view or the recording cannot be made.
    #[error("cannot create channel '{topic}': {source}")]
    Channel {
        /// The channel's topic.
        topic: String,
        /// Foxglove's reason.
        source: FoxgloveError,
    },
    /// The Foxglove WebSocket server cannot listen.
    #[error("view: cannot serve the Foxglove WebSocket on {host}:{port}: {source}")]
    WebSocket {
        /// The address asked for.
        host: String,
        /// The port asked for.
        port: u16,
        /// Foxglove's reason.
        source: FoxgloveError,
    },
    /// The page's HTTP server cannot listen.
    #[error("view: cannot serve the page on http://{host}:{port}/: {source}")]
    Page {
        /// The address asked for.
        host: String,
        /// The port asked for.
        port: u16,
        /// What the system said.
        source: std::io::Error,
    },
    /// The services the page pulls frames through cannot be offered.
    #[error("view: cannot offer the page's services: {0}")]
    Services(FoxgloveError),
    /// A thread of the view or the recording cannot be started.
    #[error("{who}: cannot start the {thread} thread: {source}")]
    Thread {
        /// "view" or "--record".
        who: &'static str,
        /// Which thread.
        thread: &'static str,
        /// What the system said.
        source: std::io::Error,
    },
}

impl ViewError {
    /// `map_err` for spawning `who`'s `thread`.
    pub(crate) fn thread(
        who: &'static str,
        thread: &'static str,
    ) -> impl FnOnce(std::io::Error) -> ViewError {
        move |source| ViewError::Thread {
            who,
            thread,
            source,
        }
    }
}

/// For the paths that carry plain messages (the render engine's `start`).
impl From<ViewError> for String {
    fn from(e: ViewError) -> String {
        e.to_string()
    }
}
