//! `ssx.Worlds`: a batch of worlds of one scene (ssx-worlds' [`ssx_worlds::Worlds`]) stepped
//! together with the GIL released, its states, readings and commands as (worlds, robots, ...)
//! numpy arrays filled in Rust.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use numpy::{
    PyArray1, PyArray2, PyArray3, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray3,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyKeyError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use ssx_core::SsxError;
use ssx_worlds::{BatchOptions, STATE_WIDTH, WorldsError};

use crate::{CommandError, PluginError, lock, to_py};

/// A batch's error as Python's: bad arguments are ValueError, unknown names KeyError, a
/// refused command CommandError, the rest SceneError or PluginError as for a Sim.
pub(crate) fn to_py_batch(e: WorldsError) -> PyErr {
    let text = e.to_string();
    match e {
        WorldsError::Scene(s) => to_py(s),
        WorldsError::World { source, .. } => match source {
            SsxError::PluginCreate { .. } | SsxError::PluginFailed(_) => PluginError::new_err(text),
            _ => crate::SceneError::new_err(text),
        },
        WorldsError::Strict { .. } => PluginError::new_err(text),
        WorldsError::Argument(_) => PyValueError::new_err(text),
        WorldsError::Name(_) => PyKeyError::new_err(text),
        WorldsError::Command { .. } => CommandError::new_err(text),
    }
}

/// Many worlds of one scene in this process, stepped together on every core.
///
/// `Worlds(scene, count, seed=None, seeds=None, engine=None, workers=None, strict=False,
/// scene_dir=None)`
#[pyclass(module = "ssx._ssx", frozen)]
pub(crate) struct Worlds {
    /// None once closed; waited for with the GIL released (`lock.rs`).
    inner: Mutex<Option<ssx_worlds::Worlds>>,
    count: usize,
    /// Steps `step` hands over at once, kept from call to call with the number of worlds that
    /// stepped (another mask starts again from one, so a size learnt on a few worlds is never
    /// used on all): a batch of 1024 worlds takes milliseconds a step, and starting again from
    /// one made `step(10)` four passes over the batch (1, 2, 4 and 3 steps), each visiting
    /// every world cold.
    chunk: Mutex<(usize, u64)>,
}

pub(crate) struct Open<'a>(MutexGuard<'a, Option<ssx_worlds::Worlds>>);

impl std::ops::Deref for Open<'_> {
    type Target = ssx_worlds::Worlds;
    fn deref(&self) -> &ssx_worlds::Worlds {
        self.0.as_ref().expect("checked open")
    }
}

impl std::ops::DerefMut for Open<'_> {
    fn deref_mut(&mut self) -> &mut ssx_worlds::Worlds {
        self.0.as_mut().expect("checked open")
    }
}

impl Worlds {
    /// `values` as a (K, N, fields) float64 array of commands for `artifacts`.
    pub(crate) fn command_values<'py>(
        &self,
        artifacts: &[String],
        values: &Bound<'py, PyAny>,
    ) -> PyResult<PyReadonlyArray3<'py, f64>> {
        let values: PyReadonlyArray3<'py, f64> = values.extract().map_err(|_| {
            PyValueError::new_err(format!(
                "values must be a float64 array of shape ({}, {}, fields)",
                self.count,
                artifacts.len()
            ))
        })?;
        let shape = values.shape();
        if shape[0] != self.count || shape[1] != artifacts.len() {
            return Err(PyValueError::new_err(format!(
                "values has shape {shape:?}; {} worlds × {} robots need ({}, {}, fields)",
                self.count,
                artifacts.len(),
                self.count,
                artifacts.len()
            )));
        }
        Ok(values)
    }

    pub(crate) fn open(&self, py: Python<'_>) -> PyResult<Open<'_>> {
        let guard = lock::lock(py, &self.inner);
        if guard.is_none() {
            return Err(PyRuntimeError::new_err("the Worlds are closed"));
        }
        Ok(Open(guard))
    }
}

/// Artifact indices for names (None: None).
pub(crate) fn indices(
    w: &ssx_worlds::Worlds,
    names: Option<&[String]>,
) -> PyResult<Option<Vec<usize>>> {
    names
        .map(|n| {
            n.iter()
                .map(|a| w.artifact_index(a).map_err(to_py_batch))
                .collect()
        })
        .transpose()
}

/// A (K, N) buffer when `wanted`: `out` when its shape is `shape`, else a new array; None
/// when not wanted. `name` and `what` name the argument and its values in the error.
fn per_robot<'py>(
    py: Python<'py>,
    wanted: bool,
    out: Option<Bound<'py, PyArray2<f64>>>,
    shape: [usize; 2],
    name: &str,
    what: &str,
) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
    match (wanted, out) {
        (false, _) => Ok(None),
        (true, Some(a)) if a.shape() == shape && a.is_c_contiguous() => Ok(Some(a)),
        (true, Some(a)) => Err(PyValueError::new_err(format!(
            "{name} has shape {:?}; the {what} are {shape:?} (C-contiguous float64)",
            a.shape()
        ))),
        (true, None) => Ok(Some(PyArray2::zeros(py, shape, false))),
    }
}

/// `out` when its shape is `shape`, else a new array of that shape.
fn out_or_new<'py>(
    py: Python<'py>,
    out: Option<Bound<'py, PyArray3<f64>>>,
    shape: [usize; 3],
    what: &str,
) -> PyResult<Bound<'py, PyArray3<f64>>> {
    match out {
        Some(a) => {
            if a.shape() != shape {
                return Err(PyValueError::new_err(format!(
                    "out has shape {:?}; {what} are {shape:?}",
                    a.shape()
                )));
            }
            if !a.is_c_contiguous() {
                return Err(PyValueError::new_err(
                    "out must be a C-contiguous float64 array",
                ));
            }
            Ok(a)
        }
        None => Ok(PyArray3::zeros(py, shape, false)),
    }
}

#[pymethods]
impl Worlds {
    #[new]
    #[pyo3(signature = (scene, count, seed=None, seeds=None, engine=None, workers=None, strict=false, scene_dir=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        scene: PathBuf,
        count: usize,
        seed: Option<u64>,
        seeds: Option<Vec<u64>>,
        engine: Option<String>,
        workers: Option<usize>,
        strict: bool,
        scene_dir: Option<PathBuf>,
    ) -> PyResult<Self> {
        if seed.is_some() && seeds.is_some() {
            return Err(PyValueError::new_err(
                "give seed (world k gets seed + k) or seeds (one a world), not both",
            ));
        }
        let options = BatchOptions {
            engine,
            workers: crate::open::workers(workers)?,
            seed,
            seeds,
            strict,
            scene_dir,
        };
        let worlds = py
            .detach(|| ssx_worlds::Worlds::new(&scene, count, &options))
            .map_err(to_py_batch)?;
        Ok(Self {
            inner: Mutex::new(Some(worlds)),
            count,
            chunk: Mutex::new((0, 1)),
        })
    }

    /// Steps every world (or those where `mask`, a bool array over the worlds, is true) `n`
    /// times with the GIL released; Ctrl-C stops it between two steps of the batch
    /// (KeyboardInterrupt). Raises PluginError naming the world when a plugin fails in strict
    /// mode.
    #[pyo3(signature = (n=1, mask=None))]
    fn step(
        &self,
        py: Python<'_>,
        n: u64,
        mask: Option<PyReadonlyArray1<'_, bool>>,
    ) -> PyResult<()> {
        let mask: Option<Vec<bool>> = mask.map(|m| m.as_array().to_vec());
        let stepping = mask
            .as_ref()
            .map_or(self.count, |m| m.iter().filter(|&&on| on).count());
        let mut open = self.open(py)?;
        let worlds: &mut ssx_worlds::Worlds = &mut open;
        let kept = *self.chunk.lock().unwrap_or_else(|e| e.into_inner());
        let mut chunk = if kept.0 == stepping { kept.1.max(1) } else { 1 };
        let mut left = n;
        while left > 0 {
            // Back to Python about every 20-50 ms to look for a signal: the chunk grows only
            // when a whole one took less than 20 ms.
            let m = chunk.min(left);
            let t0 = Instant::now();
            py.detach(|| worlds.step_some(m, mask.as_deref()))
                .map_err(to_py_batch)?;
            left -= m;
            let took = t0.elapsed();
            if took < Duration::from_millis(20) && m == chunk {
                chunk = chunk.saturating_mul(2);
            } else if took > Duration::from_millis(50) {
                chunk = (chunk / 2).max(1);
            }
            py.check_signals()?;
        }
        *self.chunk.lock().unwrap_or_else(|e| e.into_inner()) = (stepping, chunk);
        Ok(())
    }

    /// Resets the worlds where `mask` (a bool array over the worlds; None: all) is true, on
    /// the workers, while the others keep their state. Seeds: `seeds[k]` for world k (an
    /// array of one a world), or `seed + k` (an int), else each world's own seed (the same
    /// world as after its last start).
    #[pyo3(signature = (mask=None, seeds=None, seed=None))]
    fn reset(
        &self,
        py: Python<'_>,
        mask: Option<PyReadonlyArray1<'_, bool>>,
        seeds: Option<PyReadonlyArray1<'_, u64>>,
        seed: Option<u64>,
    ) -> PyResult<()> {
        let k = self.count;
        let which: Vec<usize> = match &mask {
            None => (0..k).collect(),
            Some(m) => {
                let m = m.as_array();
                if m.len() != k {
                    return Err(PyValueError::new_err(format!(
                        "mask has {} values for {k} worlds",
                        m.len()
                    )));
                }
                m.iter()
                    .enumerate()
                    .filter(|(_, on)| **on)
                    .map(|(i, _)| i)
                    .collect()
            }
        };
        let chosen: Option<Vec<u64>> = match (seeds, seed) {
            (Some(_), Some(_)) => {
                return Err(PyValueError::new_err(
                    "give seeds (one a world) or seed (world k gets seed + k), not both",
                ));
            }
            (Some(s), None) => {
                let s = s.as_array();
                if s.len() != k {
                    return Err(PyValueError::new_err(format!(
                        "seeds has {} values for {k} worlds (one a world; only the reset ones are used)",
                        s.len()
                    )));
                }
                Some(which.iter().map(|&i| s[i]).collect())
            }
            (None, Some(s)) => Some(which.iter().map(|&i| s.wrapping_add(i as u64)).collect()),
            (None, None) => None,
        };
        let mut open = self.open(py)?;
        let worlds: &mut ssx_worlds::Worlds = &mut open;
        py.detach(|| worlds.reset(&which, chosen.as_deref()))
            .map_err(to_py_batch)
    }

    /// Number of worlds.
    #[getter]
    fn count(&self) -> usize {
        self.count
    }

    fn __len__(&self) -> usize {
        self.count
    }

    /// Threads that step the batch.
    #[getter]
    fn workers(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.open(py)?.workers())
    }

    /// Seconds per step.
    #[getter]
    fn timestep(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.open(py)?.timestep())
    }

    /// Each world's seed, as a (K,) uint64 array.
    #[getter]
    fn seeds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        Ok(PyArray1::from_vec(py, self.open(py)?.seeds()))
    }

    /// Each world's simulated time (s), as a (K,) float64 array.
    #[getter]
    fn time<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let w = self.open(py)?;
        Ok(PyArray1::from_iter(
            py,
            (0..w.len()).map(|k| w.world(k).sim_time()),
        ))
    }

    /// Each world's steps since its start or its last reset, as a (K,) uint64 array.
    #[getter]
    fn steps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        let w = self.open(py)?;
        Ok(PyArray1::from_iter(
            py,
            (0..w.len()).map(|k| w.world(k).steps()),
        ))
    }

    /// The physics engine's name.
    #[getter]
    fn engine(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.open(py)?.world(0).engine().name().to_string())
    }

    /// Artifact names, in scene order (the same in every world).
    #[getter]
    fn artifact_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        Ok(self.open(py)?.artifact_names().to_vec())
    }

    /// One name a body, `artifact/body`, in the order of `states()`'s rows (world 0's).
    #[getter]
    fn body_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        Ok(self
            .open(py)?
            .world(0)
            .artifacts()
            .iter()
            .flat_map(|a| a.body_names.iter().map(move |b| format!("{}/{b}", a.name)))
            .collect())
    }

    /// The artifacts that carry a sensor named `sensor`, in scene order (the rows of
    /// `readings(sensor)`); KeyError naming the sensors there are when none does.
    fn sensor_artifacts(&self, py: Python<'_>, sensor: &str) -> PyResult<Vec<String>> {
        let w = self.open(py)?;
        let found = w.sensor_artifacts(sensor).map_err(to_py_batch)?;
        Ok(found
            .into_iter()
            .map(|i| w.artifact_names()[i].clone())
            .collect())
    }

    /// Body states as a (K, N, 13) float64 array: position (m), quaternion (x, y, z, w),
    /// linear (m/s) and angular (rad/s) velocity, world frame. Every body (rows as
    /// `body_names`), or the first body of each artifact in `artifacts`. `out`: an array of
    /// that shape to fill instead of a new one.
    #[pyo3(signature = (artifacts=None, out=None))]
    fn states<'py>(
        &self,
        py: Python<'py>,
        artifacts: Option<Vec<String>>,
        out: Option<Bound<'py, PyArray3<f64>>>,
    ) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let mut w = self.open(py)?;
        let which = indices(&w, artifacts.as_deref())?;
        let n = w.state_rows(which.as_deref()).map_err(to_py_batch)?;
        let array = out_or_new(py, out, [w.len(), n, STATE_WIDTH], "states")?;
        {
            let mut rw = array.try_readwrite()?;
            let flat = rw.as_slice_mut().expect("checked contiguous");
            w.states_into(which.as_deref(), flat).map_err(to_py_batch)?;
        }
        Ok(array)
    }

    /// The newest readings of `sensor` of every artifact that carries it (or of `artifacts`)
    /// in every world, as a (K, N, R) float64 array; values past a reading's length (not taken
    /// yet, fewer rays) are NaN. KeyError for a sensor no artifact carries, with the ones
    /// that exist.
    #[pyo3(signature = (sensor, artifacts=None, out=None))]
    fn readings<'py>(
        &self,
        py: Python<'py>,
        sensor: &str,
        artifacts: Option<Vec<String>>,
        out: Option<Bound<'py, PyArray3<f64>>>,
    ) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let mut w = self.open(py)?;
        let which = match indices(&w, artifacts.as_deref())? {
            Some(i) => i,
            None => w.sensor_artifacts(sensor).map_err(to_py_batch)?,
        };
        let width = w.reading_width(sensor, &which).map_err(to_py_batch)?;
        let array = out_or_new(py, out, [w.len(), which.len(), width], "readings")?;
        {
            let mut rw = array.try_readwrite()?;
            let flat = rw.as_slice_mut().expect("checked contiguous");
            w.readings_into(sensor, &which, width, flat)
                .map_err(to_py_batch)?;
        }
        Ok(array)
    }

    /// The observations a learning env gives, as a (K, N, R + 4) float64 array: the newest
    /// `width` values of `sensor` (R: the widest reading when None; 0 past a reading's end and
    /// for NaN) then x, y, cos yaw, sin yaw of every artifact that carries it (or of
    /// `artifacts`): `ssx.envs.single.observation` of `readings` and `states`, in one call.
    #[pyo3(signature = (sensor, artifacts=None, width=None, out=None))]
    fn observe<'py>(
        &self,
        py: Python<'py>,
        sensor: &str,
        artifacts: Option<Vec<String>>,
        width: Option<usize>,
        out: Option<Bound<'py, PyArray3<f64>>>,
    ) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let mut w = self.open(py)?;
        let which = match indices(&w, artifacts.as_deref())? {
            Some(i) => i,
            None => w.sensor_artifacts(sensor).map_err(to_py_batch)?,
        };
        let width = match width {
            Some(n) => n,
            None => w.reading_width(sensor, &which).map_err(to_py_batch)?,
        };
        let array = out_or_new(py, out, [w.len(), which.len(), width + 4], "observations")?;
        {
            let mut rw = array.try_readwrite()?;
            let flat = rw.as_slice_mut().expect("checked contiguous");
            w.observe_into(sensor, &which, width, flat)
                .map_err(to_py_batch)?;
        }
        Ok(array)
    }

    /// Each of `artifacts`' distance in the plane to the nearest other of them in its world,
    /// as a (K, N) float64 array (infinity when alone): `ssx.envs.single.nearest` in one call.
    #[pyo3(signature = (artifacts, out=None))]
    fn nearest<'py>(
        &self,
        py: Python<'py>,
        artifacts: Vec<String>,
        out: Option<Bound<'py, PyArray2<f64>>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let mut w = self.open(py)?;
        let which = indices(&w, Some(&artifacts))?.expect("given");
        let shape = [w.len(), which.len()];
        let array = per_robot(py, true, out, shape, "out", "distances")?.expect("wanted");
        {
            let mut rw = array.try_readwrite()?;
            let flat = rw.as_slice_mut().expect("checked contiguous");
            w.nearest_into(&which, flat).map_err(to_py_batch)?;
        }
        Ok(array)
    }

    /// Sends every world's drivers a command each: `values[k, j]` (a (K, N, F) array, values
    /// in the order of the subscription's fields, e.g. linear and angular for a diff-drive
    /// robot) to world k's `artifacts[j]`. Every row is checked before any is sent (the
    /// limits and messages of `Sim.command`): a refused one raises CommandError naming world
    /// and robot, and nothing is sent. `key` is a pattern with `{}` for the artifact's name
    /// (default `artifacts/{}/cmd`). Returns how many reached a driver now.
    #[pyo3(signature = (artifacts, values, key=None))]
    fn command_many(
        &self,
        py: Python<'_>,
        artifacts: Vec<String>,
        values: &Bound<'_, PyAny>,
        key: Option<String>,
    ) -> PyResult<usize> {
        let values = self.command_values(&artifacts, values)?;
        let shape = values.shape().to_vec();
        let flat = values
            .as_slice()
            .map_err(|_| PyValueError::new_err("values must be a C-contiguous float64 array"))?;
        let mut w = self.open(py)?;
        let which = indices(&w, Some(&artifacts))?.expect("given");
        let pattern = key.as_deref().unwrap_or("artifacts/{}/cmd");
        w.command_many(&which, flat, shape[2], pattern)
            .map_err(to_py_batch)
    }

    /// A learning env's step in one call, one pass a world on the workers while the GIL is
    /// released: `values` (a (K, N, F) array, as for `command_many`, or None) handed to
    /// `artifacts`' drivers in every world, `n` steps of the worlds where `mask` is true (None:
    /// all), then, when `sensor` is given, the observations of `observe` (into `out` when
    /// given), with `nearest=True` the distances of `nearest` (into `nearest_out`), and with
    /// `reward="dispersal"` (needs both) `ssx.envs.dispersal_reward`'s values (into
    /// `reward_out`). The same values as those calls and that function one after the other, to
    /// the bit, without visiting every world again for each. Returns (observations, distances,
    /// rewards), None for what was not asked. Every command is checked before any is sent
    /// (CommandError, nothing done); a plugin failing in strict mode raises PluginError naming
    /// the world. Ctrl-C is seen after the call (`step` looks between chunks of steps).
    #[pyo3(signature = (artifacts, values=None, n=1, mask=None, key=None, sensor=None, width=None, nearest=false, reward=None, out=None, nearest_out=None, reward_out=None))]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn act<'py>(
        &self,
        py: Python<'py>,
        artifacts: Vec<String>,
        values: Option<&Bound<'py, PyAny>>,
        n: u64,
        mask: Option<PyReadonlyArray1<'_, bool>>,
        key: Option<String>,
        sensor: Option<String>,
        width: Option<usize>,
        nearest: bool,
        reward: Option<&str>,
        out: Option<Bound<'py, PyArray3<f64>>>,
        nearest_out: Option<Bound<'py, PyArray2<f64>>>,
        reward_out: Option<Bound<'py, PyArray2<f64>>>,
    ) -> PyResult<(
        Option<Bound<'py, PyArray3<f64>>>,
        Option<Bound<'py, PyArray2<f64>>>,
        Option<Bound<'py, PyArray2<f64>>>,
    )> {
        let task = match reward {
            None => None,
            Some("dispersal") => Some(ssx_worlds::Reward::Dispersal),
            Some(other) => {
                return Err(PyValueError::new_err(format!(
                    "reward must be None or 'dispersal', not {other:?}"
                )));
            }
        };
        let values = values
            .map(|v| self.command_values(&artifacts, v))
            .transpose()?;
        let mask: Option<Vec<bool>> = mask.map(|m| m.as_array().to_vec());
        let mut open = self.open(py)?;
        let which = indices(&open, Some(&artifacts))?.expect("given");
        let width = match (&sensor, width) {
            (Some(_), Some(w)) => w,
            (Some(s), None) => open.reading_width(s, &which).map_err(to_py_batch)?,
            (None, _) => 0,
        };
        let obs = match &sensor {
            Some(_) => Some(out_or_new(
                py,
                out,
                [self.count, which.len(), width + 4],
                "observations",
            )?),
            None => None,
        };
        let shape = [self.count, which.len()];
        let dist = per_robot(py, nearest, nearest_out, shape, "nearest_out", "distances")?;
        let rewards = per_robot(
            py,
            task.is_some(),
            reward_out,
            shape,
            "reward_out",
            "rewards",
        )?;
        {
            let flat = values
                .as_ref()
                .map(|v| {
                    v.as_slice().map_err(|_| {
                        PyValueError::new_err("values must be a C-contiguous float64 array")
                    })
                })
                .transpose()?;
            let mut obs_rw = obs.as_ref().map(|a| a.try_readwrite()).transpose()?;
            let mut dist_rw = dist.as_ref().map(|a| a.try_readwrite()).transpose()?;
            let mut reward_rw = rewards.as_ref().map(|a| a.try_readwrite()).transpose()?;
            let pattern = key.as_deref().unwrap_or("artifacts/{}/cmd");
            let act = ssx_worlds::Act {
                artifacts: &which,
                commands: flat.map(|v| ssx_worlds::Commands {
                    values: v,
                    width: values.as_ref().map_or(0, |a| a.shape()[2]),
                    pattern,
                }),
                steps: n,
                mask: mask.as_deref(),
                observe: match (&sensor, obs_rw.as_mut()) {
                    (Some(s), Some(rw)) => Some(ssx_worlds::Observe {
                        sensor: s,
                        width,
                        out: rw.as_slice_mut().expect("checked contiguous"),
                    }),
                    _ => None,
                },
                nearest: dist_rw
                    .as_mut()
                    .map(|rw| rw.as_slice_mut().expect("checked contiguous")),
                reward: task.zip(
                    reward_rw
                        .as_mut()
                        .map(|rw| rw.as_slice_mut().expect("checked contiguous")),
                ),
                task: None,
            };
            let worlds: &mut ssx_worlds::Worlds = &mut open;
            py.detach(|| worlds.act(act)).map_err(to_py_batch)?;
        }
        Ok((obs, dist, rewards))
    }

    /// The fields of the commands on `key` as (name, number of values, largest magnitude),
    /// once a driver subscribed to it (on its first step); None before. World 0's.
    fn command_fields(
        &self,
        py: Python<'_>,
        key: &str,
    ) -> PyResult<Option<Vec<(String, usize, f64)>>> {
        Ok(self.open(py)?.bus(0).fields(key))
    }

    /// Each world's figure `name` as its extensions report it (`explore.explored`), as a
    /// (K,) float64 array; NaN where a world has none yet.
    fn metric<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
        Ok(PyArray1::from_vec(py, self.open(py)?.metric(name)))
    }

    /// World `k`'s statistics as `ssxd run --stats-json` writes them (a batch keeps no step
    /// times: their percentiles read 0).
    fn stats<'py>(&self, py: Python<'py>, k: usize) -> PyResult<Bound<'py, PyAny>> {
        let w = self.open(py)?;
        if k >= w.len() {
            return Err(PyValueError::new_err(format!(
                "no world {k}: the batch has {}",
                w.len()
            )));
        }
        let text = serde_json::to_string(&w.world(k).summary())
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        py.import("json")?.call_method1("loads", (text,))
    }

    /// Whether the scene was read once for all worlds (its artifacts do not depend on the
    /// seed) rather than once a seed.
    #[getter]
    fn scene_shared(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.open(py)?.scene_shared())
    }

    /// Ends every world: plugins destroyed.
    fn close(&self, py: Python<'_>) {
        let inner = lock::lock(py, &self.inner).take();
        if let Some(w) = inner {
            py.detach(|| drop(w));
        }
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        lock::lock(py, &self.inner).is_none()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _t: Option<&Bound<'_, PyAny>>,
        _v: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) {
        self.close(py)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        match self.open(py) {
            Ok(w) => format!(
                "Worlds({} worlds of {} artifacts, {} workers)",
                w.len(),
                w.artifact_names().len(),
                w.workers()
            ),
            Err(_) => "Worlds(closed)".into(),
        }
    }
}
