//! A recorded run simulated again from its recording (`ssxd replay`, docs/replay.md): the world
//! rebuilt from the run's `ssx.run` record and the scene file kept in it, stepped in fast mode
//! with no network, each recorded reset applied at the step and with the seed it came at, and
//! every driver's and sensor's extension call answered as it was in the run (the `/inputs`
//! channel: commands over Zenoh or ROS 2 or from Python, a handle's samples, a robot's pose;
//! `ssx_core::tape`); and, to verify, every recorded pose snapshot compared with the replay's,
//! to the bit.
//!
//! A recording made before the inputs were recorded replays with the extensions called as they
//! are (no network: nothing comes from outside). Library swaps are not recorded yet.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use ssx_core::tape::Answer;
use ssx_core::{Environment, Mode, SsxError};
use ssx_view::{Event, Playback, RecordOptions, Snapshot};

use crate::open::{Options, open};

/// How to replay.
#[derive(Clone, Debug, Default)]
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
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayReport {
    /// Steps simulated in all.
    pub steps: u64,
    /// Resets applied.
    pub resets: usize,
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

/// Replays the run recorded at `path`; `stop` ends it early between two steps.
pub fn replay(path: &Path, o: &ReplayOptions, stop: &AtomicBool) -> Result<ReplayReport, SsxError> {
    let p = Playback::read(path).map_err(|e| SsxError::Config(e.to_string()))?;
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
    let scene_dir_shown = scene_dir.display().to_string();
    let opened = open(
        &scene,
        &Options {
            engine: Some(value("engine")?.to_string()),
            workers: workers.max(1),
            seed: Some(number("seed")?),
            mode: Mode::Fast,
            record: o.record.clone(),
            network: false,
            strict: value("strict")? == "true",
            scene_dir: Some(scene_dir),
        },
    )
    .map_err(|e| {
        fail(format!(
            "the scene kept in it ({name}, its files looked for in {scene_dir_shown}) does not load: {e}"
        ))
    })?;
    let (mut env, hub) = (opened.env, opened.hub);
    if p.has_inputs() {
        env.replay_answers();
    }
    let timestep = env.config().timestep.to_string();
    if timestep != value("timestep")? {
        return Err(fail(format!(
            "the scene's timestep is {timestep} s, the run's was {} s",
            value("timestep")?
        )));
    }
    let mut report = ReplayReport {
        steps: 0,
        resets: 0,
        checked: 0,
        divergence: None,
        asked_otherwise: None,
        inputs: p.has_inputs(),
        complete: true,
        stopped: false,
        recording: None,
    };
    run(&p, o, stop, &mut env, &mut report).map_err(|e| match e {
        Stepping::Sim(e) => e,
        Stepping::File(why) => fail(why),
    })?;
    // The replay's recording is finished when its world goes.
    drop(env);
    report.recording = hub.map(|h| h.report());
    Ok(report)
}

/// Why a replay stopped short of the recording's end.
enum Stepping {
    /// The world failed (strict mode, a reset that could not be made).
    Sim(SsxError),
    /// A message of the recording does not read.
    File(String),
}

impl From<SsxError> for Stepping {
    fn from(e: SsxError) -> Self {
        Stepping::Sim(e)
    }
}

/// Steps `env` through the recorded run `p` as its events come: to each snapshot's step, which
/// is compared when asked, and to each reset's, where the world starts over with its seed. A
/// thread of its own reads the recording (decompression, decoding) meanwhile, a bounded number
/// of events ahead, in the file's order.
fn run(
    p: &Playback,
    o: &ReplayOptions,
    stop: &AtomicBool,
    env: &mut Environment,
    report: &mut ReplayReport,
) -> Result<(), Stepping> {
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Event, String>>(READ_AHEAD);
        let reader = std::thread::Builder::new()
            .name("ssx-replay-read".into())
            .spawn_scoped(scope, move || {
                let mut events = match p.events() {
                    Ok(e) => e,
                    Err(why) => {
                        let _ = tx.send(Err(why));
                        return false;
                    }
                };
                for e in &mut events {
                    if tx.send(e).is_err() {
                        return false; // the replay stopped early
                    }
                }
                events.cut_short()
            })
            .map_err(|e| Stepping::File(format!("cannot start the reading thread: {e}")))?;
        let ended = follow(rx.iter(), o, stop, env, report);
        // Unblocks the reader if the replay stopped before the end.
        drop(rx);
        let cut_short = reader.join().map_err(|_| {
            Stepping::File("its reading stopped on a panic in the MCAP reader".into())
        })?;
        if ended? {
            report.complete = !cut_short;
        }
        Ok(())
    })
}

/// Events the reading thread hands over at most this many ahead of the stepping.
const READ_AHEAD: usize = 256;

/// [`run`]'s stepping over the events; true when it reached their end.
fn follow(
    events: impl Iterator<Item = Result<Event, String>>,
    o: &ReplayOptions,
    stop: &AtomicBool,
    env: &mut Environment,
    report: &mut ReplayReport,
) -> Result<bool, Stepping> {
    let mut episode = 0;
    // Each step's recorded answers, by episode and step, until the step is taken.
    let mut inputs: BTreeMap<(u64, u64), Vec<Answer>> = BTreeMap::new();
    // Steps the world up to `step` of the episode, each with its answers; false when --until,
    // a signal or a call the recording does not have stops it.
    let advance = |env: &mut Environment,
                   report: &mut ReplayReport,
                   inputs: &mut BTreeMap<(u64, u64), Vec<Answer>>,
                   episode: u64,
                   step: u64| {
        while env.steps() < step {
            if o.until.is_some_and(|n| report.steps >= n) {
                return Ok(false);
            }
            if stop.load(Ordering::Relaxed) {
                report.stopped = true;
                return Ok(false);
            }
            if report.inputs {
                let next = (episode, env.steps() + 1);
                env.load_answers(inputs.remove(&next).unwrap_or_default());
            }
            env.step()?;
            report.steps += 1;
            if let Some(what) = env.answers_difference() {
                report.asked_otherwise = Some((episode, what));
                return Ok(false);
            }
        }
        Ok::<_, SsxError>(true)
    };
    for event in events {
        match event.map_err(Stepping::File)? {
            Event::Inputs {
                episode: e,
                step,
                answers,
            } => {
                inputs.insert((e, step), answers);
            }
            Event::Reset(r) => {
                if !advance(env, report, &mut inputs, episode, r.step)? {
                    return Ok(false);
                }
                let seed = (r.seed != env.config().seed).then_some(r.seed);
                env.reset(seed)?;
                (episode, report.resets) = (r.episode, report.resets + 1);
                // The old episode's answers past the reset were never asked for in the run.
                inputs.retain(|&(e, _), _| e >= episode);
            }
            Event::Snapshot(s) if s.episode == episode => {
                if !advance(env, report, &mut inputs, episode, s.step)? {
                    return Ok(false);
                }
                if o.verify && s.step == env.steps() {
                    report.checked += 1;
                    if let Some(d) = compare(&s, env) {
                        report.divergence = Some(d);
                        return Ok(false);
                    }
                }
            }
            // A snapshot of an episode whose reset is not in the file (cut before it).
            Event::Snapshot(_) => {}
        }
    }
    Ok(true)
}

/// The first frame whose recorded pose is not the replay's to the bit.
fn compare(s: &Snapshot, env: &Environment) -> Option<Divergence> {
    let states = env.states();
    for (k, state) in states.iter().enumerate() {
        let t = state.pose.translation.vector;
        let q = state.pose.rotation.quaternion();
        let replayed = [t.x, t.y, t.z, q.i, q.j, q.k, q.w];
        let recorded = s.poses.get(k).copied().unwrap_or([f64::NAN; 7]);
        if recorded.map(f64::to_bits) != replayed.map(f64::to_bits) {
            return Some(Divergence {
                episode: s.episode,
                step: s.step,
                frame: s
                    .frames
                    .get(k)
                    .cloned()
                    .unwrap_or_else(|| format!("body {k}")),
                recorded,
                replayed,
            });
        }
    }
    None
}
