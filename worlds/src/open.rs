//! One world from a scene file, as `ssxd run` builds it, with the in-process bus in place of
//! the scene's Zenoh extension (unless the network is asked for): what the Python package's
//! `Sim` is, and what each world of a batch is.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ssx_artifacts::Scene;
use ssx_core::abi::PluginLoader;
use ssx_core::{
    Environment, EnvironmentConfig, ExtensionSpec, LatePolicy, Mode, MonotonicClock,
    NullRenderEngine, PluginKind, PluginRegistry, PluginSpec, RenderEngine, SsxError,
};

use crate::bus::{BusState, LocalBus};

/// The name drivers look for their command extension under (`"commands": {}`).
pub const BUS_NAME: &str = "zenoh";

/// Whether an extension of the scene is the Zenoh extension (replaced by the in-process bus
/// unless the network is asked for).
fn is_zenoh(spec: &ExtensionSpec) -> bool {
    &*spec.plugin.plugin == "zenoh"
        && spec
            .plugin
            .library
            .as_deref()
            .and_then(|l| l.file_name())
            .is_some_and(|f| f.to_string_lossy().starts_with("libssx_zenoh"))
}

/// How to open one world.
#[derive(Clone, Debug)]
pub struct Options {
    /// The engine in place of the scene's.
    pub engine: Option<String>,
    /// Worker threads inside the world's step (the stepping thread included), at least 1.
    pub workers: usize,
    /// The seed in place of the scene's.
    pub seed: Option<u64>,
    /// Fast or paced.
    pub mode: Mode,
    /// A recording of the run.
    pub record: Option<ssx_view::RecordOptions>,
    /// A live view of the run.
    pub view: Option<ssx_view::ViewOptions>,
    /// Keep the scene's Zenoh extension (commands then come from the network, not the bus).
    pub network: bool,
    /// A failing plugin stops the run.
    pub strict: bool,
    /// Where the scene's relative paths are found, in place of the scene file's directory.
    pub scene_dir: Option<PathBuf>,
    /// Driver and sensor libraries to open from another file than the one found, by file
    /// name: (the library's file name, the build's file). A replay's builds of the run.
    pub builds: Vec<(std::ffi::OsString, PathBuf)>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            engine: None,
            workers: 1,
            seed: None,
            mode: Mode::Fast,
            record: None,
            view: None,
            network: false,
            strict: false,
            scene_dir: None,
            builds: Vec::new(),
        }
    }
}

/// An opened world.
pub struct Opened {
    /// The world.
    pub env: Environment,
    /// Its commands' bus (unused when `zenoh_in_scene`).
    pub bus: Arc<BusState>,
    /// The recorder's hub, when a recording was asked for.
    pub hub: Option<ssx_view::Hub>,
    /// The scene's own Zenoh extension takes the commands (`network`).
    pub zenoh_in_scene: bool,
}

/// The built-in engines and the bus extension, as a scene is loaded and built with.
pub fn registry() -> PluginRegistry {
    let mut registry = PluginRegistry::new();
    ssx_engines::register(&mut registry);
    registry
}

/// `base` with `bus` as the extension `bus`.
pub(crate) fn with_bus(base: &PluginRegistry, bus: &Arc<BusState>) -> PluginRegistry {
    let mut registry = base.clone();
    let shared = Arc::clone(bus);
    registry.add_own_extension(
        "bus",
        Arc::new(move |_| {
            Ok(Box::new(LocalBus(Arc::clone(&shared))) as Box<dyn ssx_core::SimulationExtension>)
        }),
    );
    registry
}

/// Reads `scene` (its relative paths from `home` when given) with `seed` in place of its own,
/// and the engine in place of the scene's; the Zenoh extension is replaced by the bus unless
/// `network`. `libraries`: plugin libraries already open (another world's), which the scene's
/// check and build reuse. Returns the scene and whether its own Zenoh extension stayed.
pub fn load(
    scene: &Path,
    home: Option<&Path>,
    registry: &PluginRegistry,
    seed: Option<u64>,
    engine: Option<&str>,
    network: bool,
    libraries: PluginLoader,
) -> Result<(Scene, bool), SsxError> {
    let mut scene = Scene::load_sharing(scene, home, registry, seed, libraries)?;
    if let Some(engine) = engine {
        if !registry.has(PluginKind::Engine, engine) {
            return Err(SsxError::Config(format!(
                "engine '{engine}': unknown physics engine (known: {})",
                registry.names(PluginKind::Engine).join(", ")
            )));
        }
        scene.engine = engine.to_string();
    }
    if !network {
        scene.extensions.retain(|e| !is_zenoh(e));
    }
    let zenoh_in_scene = scene.extensions.iter().any(|e| e.name == BUS_NAME);
    if !zenoh_in_scene {
        scene.extensions.push(ExtensionSpec {
            name: BUS_NAME.into(),
            plugin: PluginSpec {
                plugin: "bus".into(),
                library: None,
                descriptor: std::sync::Arc::new(serde_json::Value::Null),
                origin: None,
            },
        });
    }
    Ok((scene, zenoh_in_scene))
}

/// The world of a loaded scene (`load`), with a bus of its own, built with `libraries`: those
/// its load opened (the worlds of a batch share them, so each is opened once between them).
pub(crate) fn build_loaded(
    scene: &Scene,
    config: EnvironmentConfig,
    base: &PluginRegistry,
    render: Box<dyn RenderEngine>,
    libraries: PluginLoader,
) -> Result<(Environment, Arc<BusState>), SsxError> {
    let bus = Arc::new(BusState::default());
    let registry = with_bus(base, &bus);
    let env = Environment::build_sharing(
        config,
        &registry,
        &scene.extensions,
        &scene.artifacts,
        render,
        Arc::new(MonotonicClock::new(Duration::from_micros(500))),
        libraries,
    )?;
    Ok((env, bus))
}

/// Opens one world of `scene`.
pub fn open(scene: &Path, o: &Options) -> Result<Opened, SsxError> {
    let base = registry();
    let home = o.scene_dir.as_deref();
    let mut loader = PluginLoader::default();
    for (name, build) in &o.builds {
        loader.use_build(name, build.clone());
    }
    let (mut loaded, zenoh_in_scene) = load(
        scene,
        home,
        &base,
        o.seed,
        o.engine.as_deref(),
        o.network,
        loader,
    )?;
    let config = loaded.config(o.workers, o.mode, LatePolicy::CatchUp, o.strict);
    let (render, hub): (Box<dyn RenderEngine>, _) = if o.record.is_some() || o.view.is_some() {
        let hub = ssx_view::Hub::new();
        let config_error = |e: ssx_view::ViewError| SsxError::Config(e.to_string());
        // What made the run, from the scene as read.
        let record = match &o.record {
            Some(record) => Some(ssx_view::RecordOptions {
                run: ssx_view::RunRecord::of(&loaded.file, home, &config).map_err(config_error)?,
                ..record.clone()
            }),
            None => None,
        };
        let out = ssx_view::Output::new(hub.clone(), o.view.as_ref(), record.as_ref())
            .map_err(config_error)?;
        if let Some((ws, page)) = out.endpoints() {
            tracing::info!("live view: open {page} in a browser, or connect Foxglove to {ws}");
        }
        (Box::new(out), Some(hub))
    } else {
        (Box::new(NullRenderEngine::default()), None)
    };
    let libraries = std::mem::take(&mut loaded.libraries);
    let (mut env, bus) = build_loaded(&loaded, config, &base, render, libraries)?;
    // A reset with a new seed reads the scene again, with the bus in the registry it names.
    env.set_scene_source(Box::new(loaded.source(home, &with_bus(&base, &bus))));
    Ok(Opened {
        env,
        bus,
        hub,
        zenoh_in_scene,
    })
}
