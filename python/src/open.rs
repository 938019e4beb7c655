//! Opening a scene into a `Sim`: the keyword arguments checked as Python errors, then the world
//! opened by ssx-worlds (the scene loaded with the in-process bus in place of the Zenoh
//! extension unless the network is asked for, the recorder) with the GIL released.

use std::path::{Path, PathBuf};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use ssx_core::Mode;
use ssx_worlds::open::Opened;

use crate::to_py;

/// `Sim`'s keyword arguments, as Python passed them.
pub(crate) struct Options {
    pub engine: Option<String>,
    pub workers: Option<usize>,
    pub seed: Option<u64>,
    pub mode: String,
    pub rt_factor: f64,
    pub record: Option<PathBuf>,
    pub record_every: u64,
    pub network: bool,
    pub strict: bool,
    pub scene_dir: Option<PathBuf>,
}

/// Worker threads as Python asked for them (None: one a core).
pub(crate) fn workers(asked: Option<usize>) -> PyResult<usize> {
    match asked {
        Some(n) if !(1..=256).contains(&n) => Err(PyValueError::new_err(format!(
            "workers must be from 1 to 256, got {n}"
        ))),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// The world of `scene` with its bus, the recorder's hub (`record`), and whether the scene's
/// own Zenoh extension takes the commands (`network=True`).
pub(crate) fn build(py: Python<'_>, scene: &Path, o: Options) -> PyResult<Opened> {
    let mode = match o.mode.as_str() {
        "fast" => Mode::Fast,
        "realtime" if (1e-3..=1e3).contains(&o.rt_factor) => Mode::Realtime {
            factor: o.rt_factor,
        },
        "realtime" => {
            return Err(PyValueError::new_err(format!(
                "rt_factor must be from 0.001 to 1000 (simulated seconds per wall second), got {}",
                o.rt_factor
            )));
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "mode must be \"fast\" or \"realtime\", got {other:?}"
            )));
        }
    };
    let workers = workers(o.workers)?;
    if o.record_every == 0 {
        return Err(PyValueError::new_err("record_every must be at least 1"));
    }
    let options = ssx_worlds::open::Options {
        engine: o.engine,
        workers,
        seed: o.seed,
        mode,
        record: o.record.map(|path| ssx_view::RecordOptions {
            path,
            every: o.record_every,
            lossless: mode == Mode::Fast,
            // Filled from the scene once it is read (`ssx_worlds::open`).
            run: ssx_view::RunRecord::default(),
        }),
        view: None,
        network: o.network,
        strict: o.strict,
        scene_dir: o.scene_dir,
        builds: Vec::new(),
    };
    py.detach(|| ssx_worlds::open::open(scene, &options))
        .map_err(to_py)
}
