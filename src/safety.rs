//! What ssxd leaves behind when a run ends badly: the statistics file, kept current once a wall
//! second while the run goes, and the watchdog's way out when a stop cannot be honoured.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ssx_core::guard::{Stuck, Watchdog, WatchdogOptions};
use ssx_core::{SsxError, StatsSummary};

/// Exit status when a stop was asked for and a plugin or the engine did not return within the
/// grace period: the process ends without finishing the step.
pub const EXIT_STUCK: i32 = 3;
/// How long a stop waits for a call in progress before the process ends anyway.
pub const GRACE: Duration = Duration::from_secs(2);
/// While a call goes on, the watchdog repeats its report this often.
const REPEAT: Duration = Duration::from_secs(10);

/// The `--stats-json` fields, with `complete`: false for the snapshots written while the run
/// goes (and the one left behind by a crash or a forced stop), true for the final one.
pub fn stats_json(summary: &StatsSummary, complete: bool) -> Result<String, SsxError> {
    let mut v = serde_json::to_value(summary).map_err(|e| SsxError::Config(e.to_string()))?;
    if let serde_json::Value::Object(m) = &mut v {
        m.insert("complete".into(), complete.into());
    }
    let mut text = serde_json::to_string_pretty(&v).map_err(|e| SsxError::Config(e.to_string()))?;
    text.push('\n');
    Ok(text)
}

/// The statistics file: the latest snapshot, written off the stepping thread.
#[derive(Clone)]
pub struct StatsFile {
    path: PathBuf,
    latest: Arc<Mutex<Option<String>>>,
    wake: Option<std::thread::Thread>,
}

impl StatsFile {
    /// A writer for `path`, with its thread.
    pub fn start(path: &Path) -> Result<Self, SsxError> {
        let latest: Arc<Mutex<Option<String>>> = Arc::default();
        let (path, shared) = (path.to_path_buf(), Arc::clone(&latest));
        let p = path.clone();
        let thread = std::thread::Builder::new()
            .name("ssx-stats".into())
            .spawn(move || {
                loop {
                    std::thread::park();
                    let text = shared.lock().unwrap_or_else(|e| e.into_inner()).take();
                    match text {
                        Some(t) if t.is_empty() => return,
                        Some(t) => {
                            if let Err(e) = ssx_core::write_atomic(&p, t.as_bytes()) {
                                tracing::warn!("--stats-json: {e}");
                            }
                        }
                        None => {}
                    }
                }
            })
            .map_err(|e| SsxError::Config(format!("cannot start the stats writer: {e}")))?;
        Ok(Self {
            path,
            latest,
            wake: Some(thread.thread().clone()),
        })
    }

    /// Writes a snapshot now, on this thread (before the run starts, so a crash in its first
    /// second still leaves a file).
    pub fn write_now(&self, summary: &StatsSummary) -> Result<(), SsxError> {
        ssx_core::write_atomic(&self.path, stats_json(summary, false)?.as_bytes())
    }

    /// Hands a snapshot to the writer (the stepping thread does no I/O).
    pub fn snapshot(&self, summary: &StatsSummary) {
        if let Ok(text) = stats_json(summary, false) {
            *self.latest.lock().unwrap_or_else(|e| e.into_inner()) = Some(text);
            if let Some(t) = &self.wake {
                t.unpark();
            }
        }
    }

    /// Writes the newest snapshot not yet written, now, on this thread (the watchdog's way out).
    fn flush_now(&self) {
        let text = self.latest.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = text.filter(|t| !t.is_empty()) {
            let _ = ssx_core::write_atomic(&self.path, t.as_bytes());
        }
    }

    /// Writes the final statistics and stops the writer.
    pub fn finish(self, summary: &StatsSummary) -> Result<(), SsxError> {
        *self.latest.lock().unwrap_or_else(|e| e.into_inner()) = Some(String::new());
        if let Some(t) = &self.wake {
            t.unpark();
        }
        ssx_core::write_atomic(&self.path, stats_json(summary, true)?.as_bytes())
    }
}

/// Starts the watchdog: a call running longer than `limit` is logged; after a stop, one that
/// keeps running for [`GRACE`] ends the process with [`EXIT_STUCK`], the statistics written.
pub fn watchdog(
    limit: Duration,
    stop: &Arc<AtomicBool>,
    stats: Option<StatsFile>,
) -> Result<Watchdog, SsxError> {
    let stop_flag = Arc::clone(stop);
    Watchdog::start(WatchdogOptions {
        limit,
        repeat: REPEAT,
        stop: Arc::clone(stop),
        grace: GRACE,
        give_up: Box::new(move |stuck: &Stuck| {
            debug_assert!(stop_flag.load(Ordering::Relaxed));
            tracing::error!(
                target: "ssx::watchdog",
                "stopping without finishing the step: {stuck}, {:.0} s after the stop was asked for (exit status {EXIT_STUCK})",
                GRACE.as_secs_f64()
            );
            if let Some(s) = &stats {
                s.flush_now();
            }
            std::process::exit(EXIT_STUCK);
        }),
    })
    .map_err(|e| SsxError::Config(format!("cannot start the watchdog: {e}")))
}
