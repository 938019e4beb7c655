//! Building an Environment from specs: the engine, the bodies, every artifact's driver and
//! sensors shared among the workers, the extensions; and tearing the plugins down.

use std::sync::Arc;
use std::time::Duration;

use smallvec::SmallVec;
use sync_wrapper::SyncWrapper;

use super::held::Held;
use super::{
    ArtifactSensors, ArtifactSpec, DriverSlot, Environment, EnvironmentConfig, ExtensionSpec,
    Extensions, PluginSpec, SensorSlot, Shard, split_evenly,
};
use crate::abi::PluginLoader;
use crate::clock::Clock;
use crate::engine::{BodyId, BodyState, EngineConfig, JointSpec, PhysicEngine};
use crate::error::SsxError;
use crate::guard::{self, Label, Phase};
use crate::pacer::Pacer;
use crate::plugin::{
    CommandBuffer, ExtensionInit, PluginInit, PluginKind, PluginRegistry, Reading,
    SimulationExtension,
};
use crate::pool::WorkerPool;
use crate::render::{RenderEngine, RenderNode, RenderScene};
use crate::stats::{MissReporter, Stats};
use crate::world::{ArtifactId, ArtifactInfo, Catalog};

pub(super) fn unknown(kind: PluginKind, spec: &PluginSpec, registry: &PluginRegistry) -> SsxError {
    let message = format!(
        "unknown {} '{}' (known: {})",
        kind.name(),
        spec.plugin,
        registry.names(kind).join(", ")
    );
    match &spec.origin {
        Some(origin) => SsxError::Input {
            origin: Box::new(crate::Origin::clone(origin)),
            message,
        },
        None => SsxError::Config(message),
    }
}

/// Creates and initialises one extension: from its library, or built in.
pub(super) fn create_extension(
    spec: &ExtensionSpec,
    loader: &mut PluginLoader,
    registry: &PluginRegistry,
    config: &EnvironmentConfig,
) -> Result<(Box<dyn SimulationExtension>, &'static Label), SsxError> {
    let label = guard_label(&format!("extension '{}'", spec.name), &spec.plugin, None);
    let doing = guard::enter(label, Phase::Create, 0);
    let created = match &spec.plugin.library {
        Some(lib) => loader.extension(
            lib,
            &spec.plugin.plugin,
            &spec.name,
            &spec.plugin.descriptor,
        ),
        None => {
            let factory = registry
                .extension(&spec.plugin.plugin)
                .ok_or_else(|| unknown(PluginKind::Extension, &spec.plugin, registry))?;
            factory(&spec.plugin.descriptor)
        }
    };
    drop(doing);
    let failed = |m: String| SsxError::PluginCreate {
        artifact: String::new(),
        plugin: format!("extension '{}'", spec.name),
        message: crate::spelling::suggest(&m),
        origin: spec.plugin.origin.as_deref().cloned().map(Box::new),
    };
    let mut e = created.map_err(failed)?;
    let _doing = guard::enter(label, Phase::Init, 0);
    e.init(&extension_init(config)).map_err(failed)?;
    Ok((e, label))
}

/// What an extension is told of the run at its start (and at a reset).
pub(super) fn extension_init(config: &EnvironmentConfig) -> ExtensionInit {
    ExtensionInit {
        scene: config.scene.clone(),
        timestep: config.timestep,
        seed: config.seed,
    }
}

/// A new engine of the configuration's kind.
pub(super) fn create_engine(
    registry: &PluginRegistry,
    config: &EnvironmentConfig,
) -> Result<Box<dyn PhysicEngine>, SsxError> {
    let factory = registry.engine(&config.engine).ok_or_else(|| {
        SsxError::Config(format!(
            "unknown physics engine '{}' (known: {})",
            config.engine,
            registry.names(PluginKind::Engine).join(", ")
        ))
    })?;
    Ok(factory(&EngineConfig {
        gravity: config.gravity,
        timestep: config.timestep,
    }))
}

/// Every visual of `artifacts` as the render engine takes it (bodies numbered in scene order,
/// as the engines hand out their ids).
pub(super) fn render_nodes(artifacts: &[Arc<ArtifactSpec>]) -> Vec<RenderNode> {
    let mut first = 0u32;
    let mut nodes = Vec::new();
    for art in artifacts {
        nodes.extend(art.visuals.iter().map(|v| RenderNode {
            body: BodyId(first + v.body as u32),
            local_pose: v.local_pose,
            shape: v.shape.clone(),
            color: v.color,
        }));
        first += art.bodies.len() as u32;
    }
    nodes
}

/// The seed of plugin `slot` (0 = driver, 1.. = sensors) of artifact `artifact`.
pub(super) fn instance_seed(scene_seed: u64, artifact: u32, slot: u32) -> u64 {
    splitmix64(splitmix64(scene_seed ^ splitmix64(u64::from(artifact))) ^ u64::from(slot))
}

pub(super) fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The label of a plugin for crash reports and the watchdog: kind and name, its library (or
/// "built in") and its artifact.
pub(super) fn guard_label(what: &str, spec: &PluginSpec, artifact: Option<&str>) -> &'static Label {
    let from = match &spec.library {
        Some(lib) => lib.display().to_string(),
        None => "built in".into(),
    };
    match artifact {
        Some(a) => guard::label(&format!("{what} (library {from}), artifact '{a}'")),
        None => guard::label(&format!("{what} (library {from})")),
    }
}

/// The next Environment's `world_id`: numbers are never reused in a process.
static NEXT_WORLD: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Environment {
    /// Builds the world: extensions first (created and initialised), then the engine's bodies and
    /// joints, the render nodes, and every artifact's sensors and driver. On any error whatever
    /// was created is destroyed again, in shutdown order.
    pub fn build(
        config: EnvironmentConfig,
        registry: &PluginRegistry,
        extensions: &[ExtensionSpec],
        artifacts: &[ArtifactSpec],
        render: Box<dyn RenderEngine>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, SsxError> {
        Self::build_sharing(
            config,
            registry,
            extensions,
            artifacts,
            render,
            clock,
            PluginLoader::default(),
        )
    }

    /// [`Environment::build`] with the libraries `loader` has opened already (a clone of
    /// another Environment's [`Environment::plugin_loader`]): a batch of worlds of one scene
    /// opens (and copies) each plugin library once, not once a world.
    pub fn build_sharing(
        config: EnvironmentConfig,
        registry: &PluginRegistry,
        extensions: &[ExtensionSpec],
        artifacts: &[ArtifactSpec],
        render: Box<dyn RenderEngine>,
        clock: Arc<dyn Clock>,
        mut loader: PluginLoader,
    ) -> Result<Self, SsxError> {
        let mut ext = Extensions::default();
        for spec in extensions {
            let (e, label) = create_extension(spec, &mut loader, registry, &config)?;
            ext.list.push((spec.name.clone(), e));
            ext.labels.push(label);
        }

        let engine = create_engine(registry, &config)?;
        let engine_label = guard::label(&format!("physics engine '{}'", engine.name()));
        let pool = WorkerPool::new(config.workers)
            .map_err(|e| SsxError::Config(format!("cannot start worker threads: {e}")))?;
        let pacer = Pacer::new(config.mode, config.timestep, config.late_policy);
        let wake_tolerance = pacer.period() / 10;
        // A paced world's miss reports are made up front: a miss allocates nothing.
        let paced = config.mode != crate::pacer::Mode::Fast;
        let specs: Vec<Arc<ArtifactSpec>> = artifacts.iter().cloned().map(Arc::new).collect();
        let mut env = Environment {
            sensor_shards: Vec::new(),
            driver_shards: Vec::new(),
            reading_index: vec![None; artifacts.len()],
            world_id: NEXT_WORLD.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            swappable: false,
            swapper: None,
            swaps: Vec::new(),
            retiring: None,
            loader,
            engine,
            engine_label,
            render,
            pool,
            extension_failed: vec![false; ext.list.len()],
            extensions: ext,
            metrics: Vec::new(),
            catalog: Arc::default(),
            states: Vec::new(),
            clock,
            pacer,
            stats: Stats::new(),
            misses: MissReporter::paced(Duration::from_secs(1), paced),
            late_wakeups: MissReporter::paced(Duration::from_secs(1), paced),
            wake_tolerance,
            steps: 0,
            started_at: None,
            last_step_end: Duration::ZERO,
            last_physics: Duration::ZERO,
            faults: Vec::new(),
            paused: false,
            pending_steps: 0,
            registry: registry.clone(),
            specs: Held::default(),
            extension_specs: extensions.to_vec(),
            source: None,
            config,
        };
        let building = guard::enter(env.engine_label, Phase::Build, 0);
        env.add_bodies(&specs)?;
        drop(building);
        env.add_plugins(&specs, registry)?;
        for node in render_nodes(&specs) {
            env.render.add_node(node);
        }
        let libraries = env.swappable_libraries();
        let scene = RenderScene {
            name: &env.config.scene,
            timestep: env.config.timestep,
            artifacts: &env.catalog.artifacts,
            specs: &specs,
            libraries: &libraries,
        };
        env.render.start(&scene).map_err(|m| {
            SsxError::Config(format!("render backend '{}': {m}", env.render.name()))
        })?;
        env.specs = Held::new(specs);
        if env.render.wants_answers() {
            env.extensions.tape.record();
        }
        Ok(env)
    }

    /// Adds every artifact's bodies and joints to the engine and makes the catalog anew: the
    /// old one is kept where the new one equals it (a reset that moved only bodies), since a
    /// batch's worlds share it ([`Environment::share`]).
    pub(super) fn add_bodies(&mut self, artifacts: &[Arc<ArtifactSpec>]) -> Result<(), SsxError> {
        let mut catalog = Catalog {
            map: self.config.map.clone(),
            ..Catalog::default()
        };
        let engine_err = |e: &dyn PhysicEngine, a: &str, m: String| SsxError::Engine {
            engine: e.name().into(),
            message: format!("artifact '{a}': {m}"),
        };
        for (ai, art) in artifacts.iter().enumerate() {
            let id = ArtifactId(ai as u32);
            if catalog.by_name.insert(art.name.clone(), id).is_some() {
                return Err(SsxError::Config(format!(
                    "duplicate artifact name '{}'",
                    art.name
                )));
            }
            let first = catalog.body_mass.len() as u32;
            for (bi, (body_name, spec)) in art.bodies.iter().enumerate() {
                let body = self.engine.add_body(spec).map_err(|m| {
                    engine_err(&*self.engine, &art.name, format!("body '{body_name}': {m}"))
                })?;
                if body.0 != first + bi as u32 {
                    return Err(engine_err(
                        &*self.engine,
                        &art.name,
                        "engine handed out body ids out of order".into(),
                    ));
                }
                catalog.body_mass.push(self.engine.body_mass(body));
                catalog.body_inertia.push(self.engine.body_inertia(body));
                catalog.body_kind.push(spec.kind);
                catalog.body_bounds.push(spec.bounds());
                let color = art.visuals.iter().find(|v| v.body == bi).map(|v| v.color);
                catalog
                    .body_color
                    .push(color.unwrap_or(crate::world::DEFAULT_BODY_COLOR));
                catalog.body_artifact.push(id);
                catalog.body_local.push(bi as u32);
            }
            let bodies = first..first + art.bodies.len() as u32;
            let first_joint = catalog.joints.len() as u32;
            for j in &art.joints {
                let spec = JointSpec {
                    kind: j.kind,
                    body1: BodyId(first + j.parent as u32),
                    body2: BodyId(first + j.child as u32),
                    frame1: j.frame1,
                    frame2: j.frame2,
                    dynamics: j.dynamics,
                };
                let joint = self.engine.add_joint(&spec).map_err(|m| {
                    engine_err(&*self.engine, &art.name, format!("joint '{}': {m}", j.name))
                })?;
                if joint.0 != catalog.joints.len() as u32 {
                    return Err(engine_err(
                        &*self.engine,
                        &art.name,
                        "engine handed out joint ids out of order".into(),
                    ));
                }
                catalog.joints.push(spec);
            }
            let joints = first_joint..catalog.joints.len() as u32;
            catalog.artifacts.push(ArtifactInfo {
                name: art.name.clone(),
                bodies,
                body_names: art.bodies.iter().map(|(n, _)| n.clone()).collect(),
                sensor_names: art.sensors.iter().map(|s| s.name.clone()).collect(),
                joints,
                joint_names: art.joints.iter().map(|j| j.name.clone()).collect(),
                robot_model: art.model.as_deref().map(model_json),
            });
        }
        if *self.catalog != catalog {
            self.catalog = Arc::new(catalog);
        }
        self.states = vec![BodyState::default(); self.catalog.body_mass.len()];
        self.engine.read_state(&mut self.states);
        Ok(())
    }

    pub(super) fn add_plugins(
        &mut self,
        artifacts: &[Arc<ArtifactSpec>],
        registry: &PluginRegistry,
    ) -> Result<(), SsxError> {
        let workers = self.pool.workers();
        let create_err = |art: &ArtifactSpec, what: String, spec: &PluginSpec, m: String| {
            SsxError::PluginCreate {
                artifact: art.name.clone(),
                plugin: what,
                message: crate::spelling::suggest(&m),
                origin: spec.origin.as_deref().cloned().map(Box::new),
            }
        };
        let with_sensors: Vec<usize> = (0..artifacts.len())
            .filter(|&i| !artifacts[i].sensors.is_empty())
            .collect();
        let mut it = with_sensors.into_iter();
        let runs = split_evenly(it.len(), workers);
        self.sensor_shards = runs.iter().map(|_| Shard::default()).collect();
        for (k, &len) in runs.iter().enumerate() {
            for ai in it.by_ref().take(len) {
                let art = &artifacts[ai];
                let mut sensors = SmallVec::with_capacity(art.sensors.len());
                for (si, s) in art.sensors.iter().enumerate() {
                    let label = format!("sensor '{}' ({})", s.name, s.plugin.plugin);
                    let guard = guard_label(&label, &s.plugin, Some(&art.name));
                    let init = self.plugin_init(art, ai, si as u32 + 1);
                    let doing = guard::enter(guard, Phase::Create, 0);
                    let plugin = match &s.plugin.library {
                        Some(lib) => {
                            self.loader
                                .sensor(lib, &s.plugin.plugin, &s.plugin.descriptor, &init)
                        }
                        None => {
                            let factory = registry
                                .sensor(&s.plugin.plugin)
                                .ok_or_else(|| unknown(PluginKind::Sensor, &s.plugin, registry))?;
                            factory(&s.plugin.descriptor, &init)
                        }
                    }
                    .map_err(|m| create_err(art, label.clone(), &s.plugin, m))?;
                    drop(doing);
                    self.swappable |= s.plugin.library.is_some();
                    let mut plugin = plugin;
                    sensors.push(SensorSlot {
                        label: guard::label(&label),
                        guard,
                        member: plugin.batch_member(),
                        plugin: SyncWrapper::new(plugin),
                        reading: Reading::default(),
                        enabled: true,
                    });
                }
                let shard = &mut self.sensor_shards[k];
                self.reading_index[ai] = Some((k as u32, shard.items.len() as u32));
                shard.items.push(ArtifactSensors {
                    id: ArtifactId(ai as u32),
                    sensors,
                });
            }
        }
        let with_driver: Vec<usize> = (0..artifacts.len())
            .filter(|&i| artifacts[i].driver.is_some())
            .collect();
        let mut it = with_driver.into_iter();
        let runs = split_evenly(it.len(), workers);
        self.driver_shards = runs.iter().map(|_| Shard::default()).collect();
        for (k, &len) in runs.iter().enumerate() {
            for ai in it.by_ref().take(len) {
                let art = &artifacts[ai];
                let d = art.driver.as_ref().expect("filtered on driver");
                let label = format!("driver '{}'", d.plugin);
                let guard = guard_label(&label, d, Some(&art.name));
                let init = self.plugin_init(art, ai, 0);
                let doing = guard::enter(guard, Phase::Create, 0);
                let mut plugin = match &d.library {
                    Some(lib) => self.loader.driver(lib, &d.plugin, &d.descriptor, &init),
                    None => {
                        let factory = registry
                            .driver(&d.plugin)
                            .ok_or_else(|| unknown(PluginKind::Driver, d, registry))?;
                        factory(&d.descriptor, &init)
                    }
                }
                .map_err(|m| create_err(art, label.clone(), d, m))?;
                drop(doing);
                self.swappable |= d.library.is_some();
                let info = &self.catalog.artifacts[ai];
                let (bodies, joints) = (info.bodies.clone(), info.joints.clone());
                let kinds = self.catalog.joints[joints.start as usize..joints.end as usize]
                    .iter()
                    .map(|j| j.kind)
                    .collect();
                self.driver_shards[k].items.push(DriverSlot {
                    id: ArtifactId(ai as u32),
                    label: guard::label(&label),
                    guard,
                    member: plugin.batch_member(),
                    plugin,
                    commands: CommandBuffer::new(bodies, joints, kinds),
                    enabled: true,
                    attach_refusals: 0,
                });
            }
        }
        // Artifacts past the last with sensors read none: a batch's worlds keep no entries for
        // their walls and crates.
        let last = self.reading_index.iter().rposition(Option::is_some);
        self.reading_index.truncate(last.map_or(0, |i| i + 1));
        self.reading_index.shrink_to_fit();
        Ok(())
    }

    /// Destroys every sensor, then every driver, one by one under their labels.
    pub(super) fn destroy_plugins(&mut self) {
        let step = self.steps;
        for shard in &mut self.sensor_shards {
            for item in shard.items.drain(..) {
                for slot in item.sensors {
                    let _doing = guard::enter(slot.guard, Phase::Destroy, step);
                    drop(slot);
                }
            }
        }
        for shard in &mut self.driver_shards {
            for slot in shard.items.drain(..) {
                let _doing = guard::enter(slot.guard, Phase::Destroy, step);
                drop(slot);
            }
        }
    }

    pub(super) fn plugin_init(&self, art: &ArtifactSpec, index: usize, slot: u32) -> PluginInit {
        let info = &self.catalog.artifacts[index];
        // Slot 0 is the driver, slot k the sensor k - 1.
        let spec = match slot {
            0 => art.driver.as_ref(),
            k => art.sensors.get(k as usize - 1).map(|s| &s.plugin),
        };
        let directory = spec
            .and_then(|p| p.origin.as_ref())
            .and_then(|o| o.file.parent())
            .map(Arc::from);
        PluginInit {
            artifact: art.name.clone(),
            artifact_index: index as u32,
            seed: instance_seed(self.config.seed, index as u32, slot),
            timestep: self.config.timestep,
            body_count: info.bodies.len() as u32,
            joint_count: info.joints.len() as u32,
            world: self.world_id,
            directory,
        }
    }
}

/// A robot model as the `robot_model` host call hands it out: `{"urdf": text or null, "links":
/// [{"name", "body", "position": [x, y, z], "orientation": [w, x, y, z]}]}`.
fn model_json(m: &crate::environment::RobotModel) -> std::sync::Arc<str> {
    let links: Vec<serde_json::Value> = m
        .links
        .iter()
        .map(|(name, body, pose)| {
            let t = pose.translation.vector;
            let q = pose.rotation.quaternion();
            serde_json::json!({
                "name": name,
                "body": body,
                "position": [t.x, t.y, t.z],
                "orientation": [q.w, q.i, q.j, q.k],
            })
        })
        .collect();
    serde_json::json!({ "urdf": m.urdf, "links": links })
        .to_string()
        .into()
}
