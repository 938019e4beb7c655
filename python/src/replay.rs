//! `ssx.replay(recording)`: a recorded run as a `Sim` at step 0 whose steps are the run's: each
//! takes the run's inputs for it (what the extensions answered, the library swaps) and the
//! resets come where the run's did, with their seeds (`ssx_worlds::replay`).

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::prelude::*;
use ssx_core::{Environment, SsxError};
use ssx_worlds::replay::{ReplayOptions, Replayer, Step, open_replay};

use crate::{Error, Inner, Sim, to_py};

/// Why a replayed step did not come.
pub(crate) enum Stop {
    /// The world failed.
    Sim(SsxError),
    /// The recording ends, or the replay left the run.
    Replay(String),
}

impl From<SsxError> for Stop {
    fn from(e: SsxError) -> Self {
        Stop::Sim(e)
    }
}

impl From<Stop> for PyErr {
    fn from(s: Stop) -> Self {
        match s {
            Stop::Sim(e) => to_py(e),
            Stop::Replay(why) => Error::new_err(why),
        }
    }
}

/// The run's next step in `env`, with the resets the run made before it; true when one was made.
pub(crate) fn step(r: &mut Replayer, env: &mut Environment) -> Result<bool, Stop> {
    let mut reset = false;
    loop {
        match r.step(env)? {
            Step::Stepped => return Ok(reset),
            Step::Reset => reset = true,
            Step::Ended => {
                return Err(Stop::Replay(format!(
                    "the recording has nothing past step {} of episode {}: the replay is over",
                    env.steps(),
                    r.episode()
                )));
            }
            Step::Differs => {
                let report = r.report();
                let why = match (&report.asked_otherwise, &report.divergence) {
                    (Some((episode, what)), _) => format!(
                        "the replay's plugins asked otherwise than the run's in episode {episode}, so the recorded inputs no longer apply: {what}"
                    ),
                    (None, Some(d)) => format!(
                        "the replay differs from the recording at step {} of episode {}: '{}' was recorded at {:?}, replayed at {:?}",
                        d.step, d.episode, d.frame, d.recorded, d.replayed
                    ),
                    (None, None) => "the replay left the run".to_string(),
                };
                return Err(Stop::Replay(why));
            }
        }
    }
}

/// `replay(recording, workers=None, scene_dir=None, verify=False)`: the run recorded at
/// `recording` (`ssxd run --record`, `Sim(record=...)`) as a Sim at step 0, built as the run's
/// world was, with no network. Each `step` is the run's next, with its inputs; the run's resets
/// come within `step` (`steps` starts again from 0). With `verify`, every recorded snapshot is
/// compared with the replay's to the bit, and a difference raises `ssx.Error`; so does a step
/// past the recording's end. `reset` is refused: the run's resets are the replay's.
#[pyfunction]
#[pyo3(signature = (recording, workers=None, scene_dir=None, verify=false))]
pub(crate) fn replay(
    py: Python<'_>,
    recording: PathBuf,
    workers: Option<usize>,
    scene_dir: Option<PathBuf>,
    verify: bool,
) -> PyResult<Sim> {
    let o = ReplayOptions {
        workers: workers.map(|n| crate::open::workers(Some(n))).transpose()?,
        verify,
        scene_dir,
        ..ReplayOptions::default()
    };
    let (opened, replayer) = py.detach(|| open_replay(&recording, &o)).map_err(to_py)?;
    let mut inner = Inner::new(opened.env);
    inner.replay = Some(replayer);
    Ok(Sim {
        inner: Mutex::new(Some(inner)),
        bus: opened.bus,
        hub: Mutex::new(opened.hub),
        zenoh_in_scene: opened.zenoh_in_scene,
    })
}
