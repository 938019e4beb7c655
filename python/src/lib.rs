//! `ssx._ssx`: the native half of the `ssx` Python package. A `Sim` owns an ssx-core
//! Environment built from a scene file exactly as `ssxd run` builds it, steps it with the GIL
//! released, and hands its state, readings and statistics to numpy.

// As in ssxd: Rapier's small allocations stay together, which keeps stepping fast.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod link;
mod lock;
mod open;
mod replay;
mod task;
mod worlds;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyReadwriteArray2, PyUntypedArrayMethods,
};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use ssx_core::{Environment, SsxError};
use ssx_zenoh::mailbox::Message;

use ssx_worlds::bus::{BusState, Delivered};
use ssx_worlds::{STATE_WIDTH, state_row};

create_exception!(ssx, Error, PyException, "Every error of ssx's own.");
create_exception!(
    ssx,
    SceneError,
    Error,
    "A scene, artifact or map file (or a flag) that cannot be used; the message is ssxd's."
);
create_exception!(
    ssx,
    PluginError,
    Error,
    "A plugin that could not be created, or that failed in strict mode; the message is ssxd's."
);
create_exception!(
    ssx,
    CommandError,
    Error,
    "A command the Zenoh bridge would drop as malformed; the message says why."
);

fn to_py(e: SsxError) -> PyErr {
    let text = e.to_string();
    match e {
        SsxError::PluginCreate { .. } | SsxError::PluginFailed(_) => PluginError::new_err(text),
        _ => SceneError::new_err(text),
    }
}

/// A map as Python gets it: cells, metres per cell, origin (x, y, yaw).
type MapView<'py> = (Bound<'py, PyArray2<u8>>, f64, [f64; 3]);

/// A simulated world in this process.
///
/// `Sim(scene, engine=None, workers=None, seed=None, mode="fast", rt_factor=1.0,
/// record=None, record_every=1, network=False, strict=False, scene_dir=None)`
#[pyclass(module = "ssx._ssx", frozen)]
struct Sim {
    /// None once closed. The lock makes the class shareable between Python threads: a call
    /// from another thread while a `step` runs (the GIL released) waits for it, with the GIL
    /// released too (`lock.rs`).
    inner: Mutex<Option<Inner>>,
    bus: Arc<BusState>,
    hub: Mutex<Option<ssx_view::Hub>>,
    /// The scene's own Zenoh extension takes the commands (`network=True`): not the bus.
    zenoh_in_scene: bool,
}

/// An open Sim's world and its artifacts' names.
struct Inner {
    env: Environment,
    artifacts: Vec<String>,
    /// Artifact index by name.
    index: HashMap<String, usize>,
    /// The first body of each artifact, in scene order.
    first_body: Vec<usize>,
    /// A replay's run (`ssx.replay`): each step is the run's next.
    replay: Option<ssx_worlds::replay::Replayer>,
}

impl Inner {
    fn new(env: Environment) -> Self {
        let mut inner = Inner {
            env,
            artifacts: Vec::new(),
            index: HashMap::new(),
            first_body: Vec::new(),
            replay: None,
        };
        inner.refresh_names();
        inner
    }

    /// The artifacts' names and first bodies, after a build or a reset.
    fn refresh_names(&mut self) {
        let arts = self.env.artifacts();
        self.artifacts = arts.iter().map(|a| a.name.clone()).collect();
        self.first_body = arts.iter().map(|a| a.bodies.start as usize).collect();
        self.index = self
            .artifacts
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
    }

    fn artifact_index(&self, name: &str) -> PyResult<usize> {
        self.index.get(name).copied().ok_or_else(|| {
            let hint = ssx_core::spelling::closest(name, self.artifacts.iter().map(String::as_str))
                .map(|c| format!(" (did you mean '{c}'?)"))
                .unwrap_or_default();
            PyKeyError::new_err(format!("no artifact named '{name}'{hint}"))
        })
    }
}

/// The world of an open Sim.
struct Open<'a>(MutexGuard<'a, Option<Inner>>);

impl std::ops::Deref for Open<'_> {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        self.0.as_ref().expect("checked open")
    }
}

impl std::ops::DerefMut for Open<'_> {
    fn deref_mut(&mut self) -> &mut Inner {
        self.0.as_mut().expect("checked open")
    }
}

impl Sim {
    /// The open world; waits (the GIL released) while another thread uses it.
    fn open(&self, py: Python<'_>) -> PyResult<Open<'_>> {
        let guard = lock::lock(py, &self.inner);
        if guard.is_none() {
            return Err(PyRuntimeError::new_err("the Sim is closed"));
        }
        Ok(Open(guard))
    }
    /// Commands go to the in-process bus, unless the scene's Zenoh extension was kept.
    fn bus_takes_commands(&self) -> PyResult<()> {
        if self.zenoh_in_scene {
            return Err(Error::new_err(
                "this Sim kept the scene's Zenoh extension (network=True): its drivers take commands from Zenoh; publish them there, or open the Sim with network=False",
            ));
        }
        Ok(())
    }
}

#[pymethods]
impl Sim {
    #[new]
    #[pyo3(signature = (scene, engine=None, workers=None, seed=None, mode="fast", rt_factor=1.0, record=None, record_every=1, network=false, strict=false, scene_dir=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        scene: PathBuf,
        engine: Option<String>,
        workers: Option<usize>,
        seed: Option<u64>,
        mode: &str,
        rt_factor: f64,
        record: Option<PathBuf>,
        record_every: u64,
        network: bool,
        strict: bool,
        scene_dir: Option<PathBuf>,
    ) -> PyResult<Self> {
        let opened = open::build(
            py,
            &scene,
            open::Options {
                engine,
                workers,
                seed,
                mode: mode.to_string(),
                rt_factor,
                record,
                record_every,
                network,
                strict,
                scene_dir,
            },
        )?;
        Ok(Sim {
            inner: Mutex::new(Some(Inner::new(opened.env))),
            bus: opened.bus,
            hub: Mutex::new(opened.hub),
            zenoh_in_scene: opened.zenoh_in_scene,
        })
    }

    /// Runs `n` steps with the GIL released; Ctrl-C stops it between two steps
    /// (KeyboardInterrupt). Raises PluginError when a plugin fails in strict mode.
    #[pyo3(signature = (n=1))]
    fn step(&self, py: Python<'_>, n: u64) -> PyResult<()> {
        let mut open = self.open(py)?;
        let Inner {
            env, replay: run, ..
        } = &mut *open;
        let mut left = n;
        let mut reset = false;
        let result = loop {
            if left == 0 {
                break Ok(());
            }
            // Back to Python at least every 50 ms to look for a signal.
            let done = py.detach(|| -> Result<u64, replay::Stop> {
                let t0 = Instant::now();
                let mut done = 0;
                while done < left {
                    match run {
                        Some(r) => reset |= replay::step(r, env)?,
                        None => {
                            env.step()?;
                        }
                    }
                    done += 1;
                    if done % 16 == 0 && t0.elapsed() > Duration::from_millis(50) {
                        break;
                    }
                }
                Ok(done)
            });
            match done {
                Ok(done) => left -= done,
                Err(e) => break Err(e.into()),
            }
            if let Err(e) = py.check_signals() {
                break Err(e);
            }
        };
        // A replay's step may have made the run's reset: the names of the new world.
        if reset {
            open.refresh_names();
        }
        result
    }

    /// Starts over: the world as after loading (step 0, fresh statistics, every driver and
    /// sensor created anew, no library loaded again), or made anew with `seed`.
    #[pyo3(signature = (seed=None))]
    fn reset(&self, py: Python<'_>, seed: Option<u64>) -> PyResult<()> {
        // (The bus drops what it holds in its extension's reset.)
        let mut open = self.open(py)?;
        if open.replay.is_some() {
            return Err(Error::new_err(
                "a replay resets where the run did, within step(): it cannot be reset",
            ));
        }
        let env: &mut Environment = &mut open.env;
        py.detach(|| env.reset(seed)).map_err(to_py)?;
        open.refresh_names();
        Ok(())
    }

    /// Simulated time (s).
    #[getter]
    fn time(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.open(py)?.env.sim_time())
    }

    /// Steps done since the start or the last reset.
    #[getter]
    fn steps(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.open(py)?.env.steps())
    }

    /// Seconds per step.
    #[getter]
    fn timestep(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.open(py)?.env.config().timestep)
    }

    /// The scene's seed (as given, or the last reset's).
    #[getter]
    fn seed(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.open(py)?.env.config().seed)
    }

    /// The physics engine's name.
    #[getter]
    fn engine(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.open(py)?.env.engine().name().to_string())
    }

    /// Worker threads, the stepping thread included.
    #[getter]
    fn workers(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.open(py)?.env.workers())
    }

    /// Artifact names, in scene order.
    #[getter]
    fn artifact_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        Ok(self.open(py)?.artifacts.clone())
    }

    /// One name a body, `artifact/body`, in the order of `states()`'s rows.
    #[getter]
    fn body_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        Ok(self
            .open(py)?
            .env
            .artifacts()
            .iter()
            .flat_map(|a| a.body_names.iter().map(move |b| format!("{}/{b}", a.name)))
            .collect())
    }

    /// The sensor names of an artifact.
    fn sensor_names(&self, py: Python<'_>, artifact: &str) -> PyResult<Vec<String>> {
        let open = self.open(py)?;
        let i = open.artifact_index(artifact)?;
        Ok(open.env.artifacts()[i].sensor_names.clone())
    }

    /// The artifacts that carry a sensor named `sensor`, in scene order (the rows of
    /// `readings(sensor)`).
    fn sensor_artifacts(&self, py: Python<'_>, sensor: &str) -> PyResult<Vec<String>> {
        Ok(self
            .open(py)?
            .env
            .artifacts()
            .iter()
            .filter(|a| a.sensor_index(sensor).is_some())
            .map(|a| a.name.clone())
            .collect())
    }

    /// Body states as an (N, 13) float64 array: position (m), quaternion (x, y, z, w),
    /// linear (m/s) and angular (rad/s) velocity, world frame. Every body (rows as
    /// `body_names`), or the first body of each artifact in `artifacts`. `out`: an array of
    /// that shape to fill instead of a new one.
    #[pyo3(signature = (artifacts=None, out=None))]
    fn states<'py>(
        &self,
        py: Python<'py>,
        artifacts: Option<Vec<String>>,
        out: Option<Bound<'py, PyArray2<f64>>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let open = self.open(py)?;
        let all = open.env.states();
        let rows: Vec<usize> = match &artifacts {
            None => (0..all.len()).collect(),
            Some(names) => names
                .iter()
                .map(|n| open.artifact_index(n).map(|i| open.first_body[i]))
                .collect::<PyResult<_>>()?,
        };
        let array = match out {
            Some(a) => {
                let shape = a.shape().to_vec();
                if shape != [rows.len(), STATE_WIDTH] {
                    return Err(PyValueError::new_err(format!(
                        "out has shape {shape:?}; states are ({}, {STATE_WIDTH})",
                        rows.len()
                    )));
                }
                a
            }
            None => PyArray2::zeros(py, [rows.len(), STATE_WIDTH], false),
        };
        {
            let mut rw: PyReadwriteArray2<f64> = array.try_readwrite()?;
            let flat = rw
                .as_slice_mut()
                .map_err(|_| PyValueError::new_err("out must be a C-contiguous float64 array"))?;
            for (row, &b) in flat.chunks_exact_mut(STATE_WIDTH).zip(&rows) {
                state_row(&all[b], row);
            }
        }
        Ok(array)
    }

    /// The newest readings of `sensor` of every artifact that carries it (or of `artifacts`),
    /// one row each, as a float64 array; rows shorter than the longest (a reading not taken
    /// yet, fewer rays) are padded with NaN.
    #[pyo3(signature = (sensor, artifacts=None))]
    fn readings<'py>(
        &self,
        py: Python<'py>,
        sensor: &str,
        artifacts: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let open = self.open(py)?;
        let env = &open.env;
        let names = match artifacts {
            Some(n) => n,
            None => ssx_worlds::rows::sensor_carriers(env, sensor)
                .map_err(|e| PyKeyError::new_err(e.to_string()))?
                .into_iter()
                .map(|i| open.artifacts[i].clone())
                .collect(),
        };
        let mut rows = Vec::with_capacity(names.len());
        for n in &names {
            let i = open.artifact_index(n)?;
            let r = env.reading(n, sensor).ok_or_else(|| {
                let known = &env.artifacts()[i].sensor_names;
                PyKeyError::new_err(format!(
                    "artifact '{n}' has no sensor '{sensor}' (its sensors: {})",
                    if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    }
                ))
            })?;
            rows.push(r.values());
        }
        let width = rows.iter().map(|r| r.len()).max().unwrap_or(0);
        let array = PyArray2::zeros(py, [rows.len(), width], false);
        {
            let mut rw = array.try_readwrite()?;
            let flat = rw.as_slice_mut().expect("a new array is contiguous");
            for (dst, src) in flat.chunks_exact_mut(width.max(1)).zip(&rows) {
                dst[..src.len()].copy_from_slice(src);
                dst[src.len()..].fill(f64::NAN);
            }
        }
        Ok(array)
    }

    /// The newest reading of one artifact's sensor (empty before it is first taken).
    fn reading<'py>(
        &self,
        py: Python<'py>,
        artifact: &str,
        sensor: &str,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let open = self.open(py)?;
        let env = &open.env;
        open.artifact_index(artifact)?;
        let r = env.reading(artifact, sensor).ok_or_else(|| {
            PyKeyError::new_err(format!("artifact '{artifact}' has no sensor '{sensor}'"))
        })?;
        Ok(PyArray1::from_slice(py, r.values()))
    }

    /// The step the newest reading of one artifact's sensor was taken at (0: not yet).
    fn reading_step(&self, py: Python<'_>, artifact: &str, sensor: &str) -> PyResult<u64> {
        let open = self.open(py)?;
        let env = &open.env;
        open.artifact_index(artifact)?;
        env.reading(artifact, sensor)
            .map(|r| r.step())
            .ok_or_else(|| {
                PyKeyError::new_err(format!("artifact '{artifact}' has no sensor '{sensor}'"))
            })
    }

    /// Sends one artifact's driver a command as the Zenoh bridge takes it on
    /// `P/artifacts/<name>/cmd` (or `key`): a dict, or JSON text or bytes. A command its
    /// subscription refuses (a missing field, a value beyond the driver's limit) raises
    /// CommandError with the reason. Returns True when a driver subscribes to the key, False
    /// when the command waits for the driver's first step.
    #[pyo3(signature = (artifact, command, key=None))]
    fn command(
        &self,
        py: Python<'_>,
        artifact: &str,
        command: &Bound<'_, PyAny>,
        key: Option<String>,
    ) -> PyResult<bool> {
        self.open(py)?.artifact_index(artifact)?;
        self.bus_takes_commands()?;
        let key = key.unwrap_or_else(|| format!("artifacts/{artifact}/cmd"));
        let payload: Vec<u8> = if let Ok(b) = command.cast::<PyBytes>() {
            b.as_bytes().to_vec()
        } else if let Ok(s) = command.cast::<PyString>() {
            s.to_str()?.as_bytes().to_vec()
        } else if command.cast::<PyDict>().is_ok() {
            let json = py.import("json")?;
            let text: String = json.call_method1("dumps", (command,))?.extract()?;
            text.into_bytes()
        } else {
            return Err(PyValueError::new_err(
                "a command is a dict, or JSON as str or bytes",
            ));
        };
        deliver(&self.bus, &key, Message::Payload(&payload))
    }

    /// Sends many drivers a command each: row k of `values` (values in the order of the
    /// subscription's fields, e.g. linear and angular for a diff-drive robot) to
    /// `artifacts[k]`, checked as `command` checks. `key` is a pattern with `{}` for the
    /// artifact's name (default `artifacts/{}/cmd`).
    #[pyo3(signature = (artifacts, values, key=None))]
    fn command_many(
        &self,
        py: Python<'_>,
        artifacts: Vec<String>,
        values: PyReadonlyArray2<'_, f64>,
        key: Option<String>,
    ) -> PyResult<usize> {
        self.bus_takes_commands()?;
        let shape = values.shape();
        if shape[0] != artifacts.len() {
            return Err(PyValueError::new_err(format!(
                "values has {} rows for {} artifacts",
                shape[0],
                artifacts.len()
            )));
        }
        let v = values.as_array();
        let pattern = key.as_deref().unwrap_or("artifacts/{}/cmd");
        let mut row = Vec::with_capacity(shape[1]);
        let mut now = 0;
        {
            let open = self.open(py)?;
            for name in &artifacts {
                open.artifact_index(name)?;
            }
        }
        for (name, r) in artifacts.iter().zip(v.rows()) {
            let key = pattern.replace("{}", name);
            row.clear();
            row.extend(r.iter().copied());
            if deliver(&self.bus, &key, Message::Values(&row))? {
                now += 1;
            }
        }
        Ok(now)
    }

    /// The last payload a driver or sensor published on `key` through the bus, if any.
    fn published<'py>(&self, py: Python<'py>, key: &str) -> Option<Bound<'py, PyBytes>> {
        self.bus.published(key).map(|p| PyBytes::new(py, &p))
    }

    /// The fields of the commands on `key` as (name, number of values, largest magnitude),
    /// once a driver subscribed to it (on its first step); None before.
    fn command_fields(&self, key: &str) -> Option<Vec<(String, usize, f64)>> {
        self.bus.fields(key)
    }

    /// The scene's map as (cells, resolution, origin): a (height, width) uint8 array (1 wall,
    /// 0 free; row 0 at the origin, rows going +y), metres per cell, and the world pose
    /// (x, y, yaw) of cell (0, 0)'s outer corner. None when the scene has no map.
    fn map<'py>(&self, py: Python<'py>) -> PyResult<Option<MapView<'py>>> {
        let open = self.open(py)?;
        let Some(m) = &open.env.config().map else {
            return Ok(None);
        };
        let cells =
            PyArray1::from_slice(py, &m.cells).reshape([m.height as usize, m.width as usize])?;
        Ok(Some((cells, m.resolution, m.origin)))
    }

    /// The figures extensions report (`{"explore.explored": 0.41, ...}`), as of the last step.
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.open(py)?.env.metrics() {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// The statistics as `ssxd run --stats-json` writes them.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = serde_json::to_string(&self.open(py)?.env.summary())
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        py.import("json")?.call_method1("loads", (text,))
    }

    /// Ends the world: plugins destroyed, the recording finished. Raises SceneError when the
    /// recording could not be written.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let inner = lock::lock(py, &self.inner).take();
        if let Some(inner) = inner {
            py.detach(|| drop(inner));
        }
        let hub = lock::lock(py, &self.hub).take();
        if let Some(hub) = hub
            && let Some(e) = hub.report().record_error
        {
            return Err(SceneError::new_err(format!("the recording failed: {e}")));
        }
        Ok(())
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
    ) -> PyResult<()> {
        self.close(py)
    }
}

/// Hands a command to the bus; whether it reached a subscriber now.
fn deliver(bus: &BusState, key: &str, m: Message<'_>) -> PyResult<bool> {
    match bus.put(key, m) {
        Ok(Delivered::Now) => Ok(true),
        Ok(Delivered::Later) => Ok(false),
        Err(why) => Err(CommandError::new_err(format!("{key}: {why}"))),
    }
}

/// Sends ssx's log (warnings and errors by default; `SSX_LOG` as a tracing filter) to stderr.
fn init_logging() {
    // Zenoh warns of every refused connection while ssx.connect waits for a daemon to start.
    let filter = std::env::var("SSX_LOG").unwrap_or_else(|_| "warn,zenoh=error".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(filter)
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .try_init();
}

/// Makes `dir` the place scenes' plugin libraries are found last, in place of "next to
/// ssxd" (the package ships them there). Called once by the package at import.
#[pyfunction]
fn _set_plugin_dir(dir: PathBuf) -> bool {
    ssx_core::abi::set_program_dir(dir)
}

/// The plugin ABI version this build speaks.
#[pyfunction]
fn abi_version() -> u32 {
    ssx_sdk::abi::SSX_ABI_VERSION
}

#[pymodule]
fn _ssx(m: &Bound<'_, PyModule>) -> PyResult<()> {
    init_logging();
    m.add_class::<Sim>()?;
    m.add_class::<worlds::Worlds>()?;
    m.add_class::<link::Link>()?;
    m.add_class::<task::Task>()?;
    m.add_function(wrap_pyfunction!(task::task_act, m)?)?;
    m.add_function(wrap_pyfunction!(_set_plugin_dir, m)?)?;
    m.add_function(wrap_pyfunction!(abi_version, m)?)?;
    m.add_function(wrap_pyfunction!(replay::replay, m)?)?;
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("SceneError", py.get_type::<SceneError>())?;
    m.add("PluginError", py.get_type::<PluginError>())?;
    m.add("CommandError", py.get_type::<CommandError>())?;
    Ok(())
}
