//! The daemon's side of the view: log lines and statistics go in, counters come out.
//!
//! A [`Hub`] exists before the [`crate::Output`] it feeds (the log layer is installed first);
//! it queues side messages only for the sinks that are running.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam::queue::ArrayQueue;
use foxglove::schemas::log::Level;

use crate::frame::PipeCounters;
use crate::publish::Side;

/// Side messages waiting for one sink; past this, the newest are dropped and counted.
const SIDE_QUEUE: usize = 1024;

/// One sink's side queue.
pub(crate) struct SideQueue {
    pub on: AtomicBool,
    pub queue: ArrayQueue<Side>,
    pub dropped: AtomicU64,
}

impl Default for SideQueue {
    fn default() -> Self {
        Self {
            on: AtomicBool::new(false),
            queue: ArrayQueue::new(SIDE_QUEUE),
            dropped: AtomicU64::new(0),
        }
    }
}

impl SideQueue {
    fn push(&self, side: Side) {
        if self.on.load(Ordering::Relaxed) && self.queue.push(side).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// What the recording did.
#[derive(Debug, Default)]
pub(crate) struct RecordState {
    pub path: Option<std::path::PathBuf>,
    pub messages: AtomicU64,
    pub error: Mutex<Option<String>>,
    pub finished: AtomicBool,
}

#[derive(Default)]
pub(crate) struct HubInner {
    pub live: SideQueue,
    pub record: SideQueue,
    pub live_frames: Arc<PipeCounters>,
    pub record_frames: Arc<PipeCounters>,
    pub live_endpoints: Mutex<Option<(String, String)>>,
    pub recording: Mutex<Option<Arc<RecordState>>>,
    /// Log time of the latest frame (ns; its simulated time, plus the simulated time at each
    /// reset before it), to stamp log lines and statistics.
    pub sim_ns: AtomicU64,
}

/// Shared handle between the daemon and its view/recording backend. Cheap to clone.
#[derive(Clone, Default)]
pub struct Hub(pub(crate) Arc<HubInner>);

/// Counts for the summary.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Live view: the WebSocket URL and the page's URL, when it ran.
    pub live: Option<(String, String)>,
    /// Frames handed to the live stream.
    pub live_frames: u64,
    /// Frames not taken because the stream's publisher was behind.
    pub live_dropped: u64,
    /// Log and statistics messages dropped for the live stream.
    pub live_side_dropped: u64,
    /// The recording's path, when there is one.
    pub record_path: Option<std::path::PathBuf>,
    /// Messages written to it.
    pub record_messages: u64,
    /// Snapshots written.
    pub record_frames: u64,
    /// Snapshots not written because the writer was behind.
    pub record_dropped: u64,
    /// Log and statistics messages dropped for the recording.
    pub record_side_dropped: u64,
    /// Whether the file was finished (footer and summary written).
    pub record_finished: bool,
    /// What went wrong writing it.
    pub record_error: Option<String>,
}

impl Hub {
    /// A hub with no sink yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A log line, for the `/log` channel of every running sink.
    pub fn log(&self, level: Level, name: &str, text: String) {
        let inner = &*self.0;
        if !inner.live.on.load(Ordering::Relaxed) && !inner.record.on.load(Ordering::Relaxed) {
            return;
        }
        let side = Side::Log {
            level,
            text,
            name: name.to_string(),
            time_ns: inner.sim_ns.load(Ordering::Relaxed),
        };
        inner.live.push(side.clone());
        inner.record.push(side);
    }

    /// The run's statistics as JSON, for the `/stats` channel, at the latest frame's log time.
    pub fn stats(&self, json: String) {
        let side = Side::Stats {
            json,
            time_ns: self.0.sim_ns.load(Ordering::Relaxed),
        };
        self.0.live.push(side.clone());
        self.0.record.push(side);
    }

    /// Whether any sink takes side messages.
    pub fn active(&self) -> bool {
        self.0.live.on.load(Ordering::Relaxed) || self.0.record.on.load(Ordering::Relaxed)
    }

    /// Counts so far.
    pub fn report(&self) -> Report {
        let i = &*self.0;
        let rec = i.recording.lock().expect("not poisoned").clone();
        Report {
            live: i.live_endpoints.lock().expect("not poisoned").clone(),
            live_frames: i.live_frames.taken.load(Ordering::Relaxed),
            live_dropped: i.live_frames.dropped.load(Ordering::Relaxed),
            live_side_dropped: i.live.dropped.load(Ordering::Relaxed),
            record_path: rec.as_ref().and_then(|r| r.path.clone()),
            record_messages: rec
                .as_ref()
                .map_or(0, |r| r.messages.load(Ordering::Relaxed)),
            record_frames: i.record_frames.taken.load(Ordering::Relaxed),
            record_dropped: i.record_frames.dropped.load(Ordering::Relaxed),
            record_side_dropped: i.record.dropped.load(Ordering::Relaxed),
            record_finished: rec
                .as_ref()
                .is_some_and(|r| r.finished.load(Ordering::Relaxed)),
            record_error: rec.and_then(|r| r.error.lock().expect("not poisoned").clone()),
        }
    }
}

impl Report {
    /// Lines for the run summary (none when neither ran).
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        if let Some((ws, page)) = &self.live {
            out.push_str(&format!(
                "  view {ws} (page {page}): {} frames published, {} dropped while the publisher was behind\n",
                self.live_frames, self.live_dropped
            ));
        }
        if let Some(p) = &self.record_path {
            let state = match (&self.record_error, self.record_finished) {
                (Some(e), _) => format!("FAILED: {e}"),
                (None, true) => "complete".to_string(),
                (None, false) => "not finished".to_string(),
            };
            out.push_str(&format!(
                "  recording {} ({state}): {} messages, {} snapshots, {} dropped while the writer was behind, {} log/stats messages dropped\n",
                p.display(),
                self.record_messages,
                self.record_frames,
                self.record_dropped,
                self.record_side_dropped
            ));
        }
        out
    }
}
