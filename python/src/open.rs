//! Opening a scene into a `Sim`: the arguments checked, the scene loaded with the in-process
//! bus in place of the Zenoh extension (unless the network is asked for), the recorder, and the
//! Environment built with the GIL released.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use ssx_artifacts::Scene;
use ssx_core::{
    Environment, ExtensionSpec, LatePolicy, Mode, MonotonicClock, NullRenderEngine, PluginKind,
    PluginRegistry, PluginSpec, RenderEngine, SsxError,
};

use crate::bus::{BusState, LocalBus};
use crate::to_py;

/// The name drivers look for their command extension under (`"commands": {}`).
const BUS_NAME: &str = "zenoh";

/// Whether an extension of the scene is the Zenoh extension (replaced by the in-process bus
/// unless the Sim is asked for the network).
fn is_zenoh(spec: &ExtensionSpec) -> bool {
    spec.plugin.plugin == "zenoh"
        && spec
            .plugin
            .library
            .as_deref()
            .and_then(|l| l.file_name())
            .is_some_and(|f| f.to_string_lossy().starts_with("libssx_zenoh"))
}

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

/// The Environment of `scene` with `bus` in it, the recorder's hub (`record`), and whether the
/// scene's own Zenoh extension takes the commands (`network=True`).
pub(crate) fn build(
    py: Python<'_>,
    scene: &Path,
    o: Options,
    bus: &Arc<BusState>,
) -> PyResult<(Environment, Option<ssx_view::Hub>, bool)> {
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
    let workers = match o.workers {
        Some(n) if !(1..=256).contains(&n) => {
            return Err(PyValueError::new_err(format!(
                "workers must be from 1 to 256, got {n}"
            )));
        }
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if o.record_every == 0 {
        return Err(PyValueError::new_err("record_every must be at least 1"));
    }
    let mut registry = PluginRegistry::new();
    ssx_engines::register(&mut registry);
    let shared = Arc::clone(bus);
    registry.add_extension("bus", move |_| {
        Ok(Box::new(LocalBus(Arc::clone(&shared))) as Box<dyn ssx_core::SimulationExtension>)
    });
    let built = py.detach(|| -> Result<_, SsxError> {
        let home = o.scene_dir.as_deref();
        let mut scene = Scene::load_seeded(scene, home, &registry, o.seed)?;
        if let Some(engine) = &o.engine {
            if !registry.has(PluginKind::Engine, engine) {
                return Err(SsxError::Config(format!(
                    "engine '{engine}': unknown physics engine (known: {})",
                    registry.names(PluginKind::Engine).join(", ")
                )));
            }
            scene.engine = engine.clone();
        }
        if !o.network {
            scene.extensions.retain(|e| !is_zenoh(e));
        }
        let zenoh_in_scene = scene.extensions.iter().any(|e| e.name == BUS_NAME);
        if !zenoh_in_scene {
            scene.extensions.push(ExtensionSpec {
                name: BUS_NAME.into(),
                plugin: PluginSpec {
                    plugin: "bus".into(),
                    library: None,
                    descriptor: serde_json::Value::Null,
                    origin: None,
                },
            });
        }
        let (render, hub): (Box<dyn RenderEngine>, _) = match &o.record {
            Some(path) => {
                let hub = ssx_view::Hub::new();
                let out = ssx_view::Output::new(
                    hub.clone(),
                    None,
                    Some(&ssx_view::RecordOptions {
                        path: path.clone(),
                        every: o.record_every,
                        lossless: mode == Mode::Fast,
                    }),
                )
                .map_err(|e| SsxError::Config(e.to_string()))?;
                (Box::new(out), Some(hub))
            }
            None => (Box::new(NullRenderEngine::default()), None),
        };
        let mut env = Environment::build(
            scene.config(workers, mode, LatePolicy::CatchUp, o.strict),
            &registry,
            &scene.extensions,
            &scene.artifacts,
            render,
            Arc::new(MonotonicClock::new(Duration::from_micros(500))),
        )?;
        env.set_scene_source(Box::new(scene.source(home, &registry)));
        Ok((env, hub, zenoh_in_scene))
    });
    built.map_err(to_py)
}
