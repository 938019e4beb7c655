//! A recorded run simulated again from its recording (`ssxd replay`, docs/replay.md): the world
//! rebuilt from the run's `ssx.run` record and the scene file kept in it, stepped in fast mode
//! with no network, each recorded reset applied at the step and with the seed it came at, and
//! every driver's and sensor's extension call answered as it was in the run (the `/inputs`
//! channel: commands over Zenoh or ROS 2 or from Python, a handle's samples, a robot's pose;
//! `ssx_core::tape`); and, to verify, every recorded pose snapshot compared with the replay's,
//! to the bit.
//!
//! The driver and sensor libraries must be the builds the run used: the recording names each
//! with its SHA-256 (`ssx.libraries`), and holds the bytes of every build a swap brought in or
//! replaced, which the replay runs (the file at the library's path must still be there, since
//! the scene finds it by path); any other library whose file is not the run's build is refused
//! by name. Each recorded swap is made again before the step it was made in.
//!
//! A recording made before the inputs were recorded replays with the extensions called as they
//! are (no network: nothing comes from outside).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ssx_core::{Mode, SsxError};
use ssx_view::{Playback, RecordOptions};

use crate::open::{Opened, Options, open};

mod builds;
mod stepper;

use builds::{Builds, same_builds};
pub use stepper::{Replayer, Step};

/// How to replay.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// Worker threads (the stepping thread included); the recorded run's count when `None`.
    pub workers: Option<usize>,
    /// Stop after this many steps in all (resets do not start the count again).
    pub until: Option<u64>,
    /// Compare every recorded pose snapshot with the replay's, to the bit.
    pub verify: bool,
    /// Where the scene's relative paths are found, in place of the directory the recording
    /// names (the scene's files moved since the run).
    pub scene_dir: Option<PathBuf>,
    /// A recording of the replay.
    pub record: Option<RecordOptions>,
    /// Fast (the default) or paced to the wall clock.
    pub mode: Mode,
    /// A live view of the replay.
    pub view: Option<ssx_view::ViewOptions>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        Self {
            workers: None,
            until: None,
            verify: false,
            scene_dir: None,
            record: None,
            mode: Mode::Fast,
            view: None,
        }
    }
}

/// Where a replay first left the recorded run.
#[derive(Clone, Debug, PartialEq)]
pub struct Divergence {
    /// The episode (resets before it) and the step in it.
    pub episode: u64,
    /// Steps taken in the episode.
    pub step: u64,
    /// The frame (`artifact/body`) whose pose differs first, in body order.
    pub frame: String,
    /// Its pose as recorded: x, y, z, then the rotation's x, y, z, w.
    pub recorded: [f64; 7],
    /// Its pose in the replay.
    pub replayed: [f64; 7],
}

/// What a replay did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplayReport {
    /// Steps simulated in all.
    pub steps: u64,
    /// Resets applied.
    pub resets: usize,
    /// Library swaps made again, each before the step the run made it in.
    pub swaps: usize,
    /// Snapshots compared (`verify`), all equal unless `divergence`.
    pub checked: usize,
    /// The first snapshot that differs (`verify`).
    pub divergence: Option<Divergence>,
    /// The first step at which a plugin asked an extension what the run's plugins did not
    /// (or did not ask what they did): the recorded answers no longer apply, so the replay
    /// stopped there. Episode, and what differed.
    pub asked_otherwise: Option<(u64, String)>,
    /// Whether the plugins were given the recorded answers (a recording made before the
    /// inputs were recorded has none).
    pub inputs: bool,
    /// The recording was finished (not cut short by a kill).
    pub complete: bool,
    /// A stop was asked for (a signal) before the end.
    pub stopped: bool,
    /// The replay's own recording (`record`), once finished.
    pub recording: Option<ssx_view::Report>,
}

/// Opens the run recorded at `path` for a replay: its world, rebuilt as the run's was (at step
/// 0, paused), and the [`Replayer`] that steps it through the run's inputs and resets.
pub fn open_replay(path: &Path, o: &ReplayOptions) -> Result<(Opened, Replayer), SsxError> {
    let p = Arc::new(Playback::read(path).map_err(|e| SsxError::Config(e.to_string()))?);
    let fail = |why: String| SsxError::Config(format!("cannot replay '{}': {why}", path.display()));
    let value = |key: &str| {
        p.value(key)
            .ok_or_else(|| fail(format!("its 'ssx.run' record has no '{key}'")))
    };
    let number = |key: &str| -> Result<u64, SsxError> {
        let v = value(key)?;
        v.parse()
            .map_err(|_| fail(format!("'ssx.run' {key} '{v}' is not a whole number")))
    };
    let (name, bytes) = p
        .scene_file()
        .ok_or_else(|| fail("the scene file is not attached to it".into()))?;
    let scene_dir = match (&o.scene_dir, p.scene_dir()) {
        (Some(d), _) => d.clone(),
        (None, Some(d)) => d,
        (None, None) => {
            return Err(fail(
                "it does not say where the scene's files were (made before 'scene_dir' was recorded): give --scene-dir".into(),
            ));
        }
    };
    // The scene as the run read it, in a folder of its own; its relative paths are found where
    // the run found them.
    if Path::new(name).file_name() != Some(std::ffi::OsStr::new(name)) {
        return Err(fail(format!(
            "its scene file's name '{}' is not a plain file name",
            ssx_core::text::clip(name, 80)
        )));
    }
    let folder = tempfile::tempdir().map_err(|e| fail(format!("a temporary folder: {e}")))?;
    let scene = folder.path().join(name);
    std::fs::write(&scene, bytes).map_err(|e| fail(format!("writing the scene: {e}")))?;
    let workers = match o.workers {
        Some(n) => n,
        None => number("workers")? as usize,
    };
    // The builds the run started with that the recording holds (a swap replaced them) run in
    // place of the files found.
    let builds = Builds::new(Arc::clone(&p), folder);
    let mut started = Vec::new();
    for (library, sha) in &p.libraries {
        if p.builds.contains_key(sha) {
            let name = Path::new(library).file_name().unwrap_or_default();
            let file = builds.file(sha, Path::new(library)).map_err(fail)?;
            started.push((name.to_os_string(), file));
        }
    }
    let scene_dir_shown = scene_dir.display().to_string();
    let mut opened = open(
        &scene,
        &Options {
            engine: Some(value("engine")?.to_string()),
            workers: workers.max(1),
            seed: Some(number("seed")?),
            mode: o.mode,
            record: o.record.clone(),
            view: o.view.clone(),
            network: false,
            strict: value("strict")? == "true",
            scene_dir: Some(scene_dir),
            builds: started,
        },
    )
    .map_err(|e| {
        fail(format!(
            "the scene kept in it ({name}, its files looked for in {scene_dir_shown}) does not load: {e}"
        ))
    })?;
    same_builds(&p, &opened.env).map_err(fail)?;
    if p.has_inputs() {
        opened.env.replay_answers();
    }
    let timestep = opened.env.config().timestep.to_string();
    if timestep != value("timestep")? {
        return Err(fail(format!(
            "the scene's timestep is {timestep} s, the run's was {} s",
            value("timestep")?
        )));
    }
    let replayer = Replayer::start(path, p, builds, o.verify).map_err(fail)?;
    Ok((opened, replayer))
}

/// Replays the run recorded at `path`; `stop` ends it early between two steps.
pub fn replay(path: &Path, o: &ReplayOptions, stop: &AtomicBool) -> Result<ReplayReport, SsxError> {
    let (opened, mut replayer) = open_replay(path, o)?;
    let (mut env, hub) = (opened.env, opened.hub);
    loop {
        if o.until.is_some_and(|n| replayer.report().steps >= n) {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            replayer.report_mut().stopped = true;
            break;
        }
        match replayer.step(&mut env)? {
            Step::Stepped | Step::Reset => {}
            Step::Ended | Step::Differs => break,
        }
    }
    let mut report = replayer.finish();
    // The replay's recording is finished when its world goes.
    drop(env);
    report.recording = hub.and_then(|h| o.record.is_some().then(|| h.report()));
    Ok(report)
}
