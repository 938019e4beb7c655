//! `ssx._ssx.Task` (a task of `ssx_tasks`: VMAS's scenarios' observations and rewards in Rust)
//! and `task_act`, a batch's step that fills the task's arrays in the same pass a world.

use numpy::{PyArrayDyn, PyArrayMethods, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::worlds::Worlds;
use crate::worlds::to_py_batch;

/// A learning task: `Task(name, agents, options={})` with VMAS's keyword options (numbers;
/// True and False for flags). Raises ValueError on an unknown task or option, naming it.
#[pyclass(module = "ssx._ssx", frozen)]
pub(crate) struct Task {
    pub(crate) inner: ssx_worlds::tasks::Task,
}

#[pymethods]
impl Task {
    #[new]
    #[pyo3(signature = (name, agents, options=None))]
    fn new(name: &str, agents: usize, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut given = Vec::new();
        if let Some(o) = options {
            for (k, v) in o.iter() {
                let key: String = k.extract()?;
                let value: f64 = v.extract().map_err(|_| {
                    PyValueError::new_err(format!("{name}: option '{key}' must be a number"))
                })?;
                given.push((key, value));
            }
        }
        ssx_worlds::tasks::Task::new(name, agents, &given)
            .map(|inner| Task { inner })
            .map_err(PyValueError::new_err)
    }

    /// The task's name.
    #[getter]
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    /// Agents.
    #[getter]
    fn agents(&self) -> usize {
        self.inner.agents()
    }
    /// Bodies of its own it reads (goals, packages), after the agents.
    #[getter]
    fn objects(&self) -> usize {
        self.inner.objects()
    }
    /// Rays of each agent's lidar.
    #[getter]
    fn lidar_rays(&self) -> usize {
        self.inner.lidar_rays()
    }
    /// Values of one agent's observation.
    #[getter]
    fn observation_width(&self) -> usize {
        self.inner.observation_width()
    }
    /// Values of a world's state.
    #[getter]
    fn state_width(&self) -> usize {
        self.inner.state_width()
    }
    /// Values a world keeps between steps.
    #[getter]
    fn memory(&self) -> usize {
        self.inner.memory()
    }
    /// Its metrics' names.
    #[getter]
    fn metric_names(&self) -> Vec<&'static str> {
        self.inner.metric_names().to_vec()
    }
}

/// A contiguous float64 array's values, for writing.
fn slice<'a>(
    a: &'a mut numpy::PyReadwriteArrayDyn<'_, f64>,
    what: &str,
) -> PyResult<&'a mut [f64]> {
    a.as_slice_mut()
        .map_err(|_| PyValueError::new_err(format!("{what} must be a C-contiguous float64 array")))
}

/// `worlds.act` for a task: `values` (K, N, F) handed to the agents' drivers, `n` steps of the
/// worlds where `mask` is true (None: all), then the task's observations (K, N, W), rewards
/// (K, N), episode ends (K,), memory (K, M), metrics (K, len(metric_names)) and states (K, S)
/// written into the arrays given, in one pass a world with the GIL released. `start`: a new
/// episode in the worlds that stepped (memory set, rewards 0). Returns the commands that
/// reached a driver now.
#[pyfunction]
#[pyo3(signature = (worlds, task, agents, objects, values, n, mask, lidar, start, obs, reward, done, memory, metrics, state))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn task_act(
    py: Python<'_>,
    worlds: &Worlds,
    task: &Task,
    agents: Vec<String>,
    objects: Vec<String>,
    values: Option<&Bound<'_, PyAny>>,
    n: u64,
    mask: Option<PyReadonlyArray1<'_, bool>>,
    lidar: Option<String>,
    start: bool,
    obs: &Bound<'_, PyArrayDyn<f64>>,
    reward: &Bound<'_, PyArrayDyn<f64>>,
    done: &Bound<'_, PyArrayDyn<f64>>,
    memory: &Bound<'_, PyArrayDyn<f64>>,
    metrics: &Bound<'_, PyArrayDyn<f64>>,
    state: &Bound<'_, PyArrayDyn<f64>>,
) -> PyResult<usize> {
    let values = values
        .map(|v| worlds.command_values(&agents, v))
        .transpose()?;
    let mask: Option<Vec<bool>> = mask.map(|m| m.as_array().to_vec());
    let mut open = worlds.open(py)?;
    let which = crate::worlds::indices(&open, Some(&agents))?.expect("given");
    let things = crate::worlds::indices(&open, Some(&objects))?.expect("given");
    let flat = values
        .as_ref()
        .map(|v| {
            v.as_slice()
                .map_err(|_| PyValueError::new_err("values must be a C-contiguous float64 array"))
        })
        .transpose()?;
    let (mut o, mut r, mut d) = (
        obs.try_readwrite()?,
        reward.try_readwrite()?,
        done.try_readwrite()?,
    );
    let (mut m, mut x, mut s) = (
        memory.try_readwrite()?,
        metrics.try_readwrite()?,
        state.try_readwrite()?,
    );
    let act = ssx_worlds::Act {
        artifacts: &which,
        commands: flat.map(|v| ssx_worlds::Commands {
            values: v,
            width: values.as_ref().map_or(0, |a| a.shape()[2]),
            pattern: "artifacts/{}/cmd",
        }),
        steps: n,
        mask: mask.as_deref(),
        observe: None,
        nearest: None,
        reward: None,
        task: Some(ssx_worlds::TaskAct {
            task: &task.inner,
            objects: &things,
            lidar: lidar.as_deref(),
            start,
            obs: slice(&mut o, "obs")?,
            reward: slice(&mut r, "reward")?,
            done: slice(&mut d, "done")?,
            memory: slice(&mut m, "memory")?,
            metrics: slice(&mut x, "metrics")?,
            state: slice(&mut s, "state")?,
        }),
    };
    let w: &mut ssx_worlds::Worlds = &mut open;
    py.detach(|| w.act(act)).map_err(to_py_batch)
}
