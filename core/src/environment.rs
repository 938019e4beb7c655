//! The Environment: owns the engines, the artifacts' plugins, the worker pool, the pacer and
//! the statistics, and is the only thing that advances time.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sync_wrapper::SyncWrapper;

mod reset;
mod step;

pub use reset::{Rebuilt, SceneSource};

pub use crate::spec::{
    ArtifactJoint, ArtifactSpec, ArtifactVisual, EnvironmentConfig, ExtensionSpec, PluginSpec,
    SensorSpec,
};

use crate::abi::PluginLoader;
use crate::clock::Clock;
use crate::engine::{BodyId, BodyState, EngineConfig, JointSpec, PhysicEngine};
use crate::error::{PluginFault, SsxError};
use crate::guard::{self, Label, Phase};
use crate::pacer::{Mode, PaceOutcome, Pacer};
use crate::plugin::{
    CommandBuffer, Driver, ExtensionContext, ExtensionInit, PluginInit, PluginKind, PluginRegistry,
    Reading, ReadingSource, RunRequest, Sensor, SimulationExtension, SwapDesk,
};
use crate::pool::WorkerPool;
use crate::render::{RenderEngine, RenderNode, RenderScene};
use crate::stats::{
    DisplayFn, MissReport, MissReporter, PhaseTimes, Stats, StatsSummary, StatsView,
};
use crate::swap::{Fresh, Outcome, Recipe, Slot, Swapper};
use crate::wake;
use crate::world::{ArtifactId, ArtifactInfo, Catalog, ExtensionDirectory, NoExtensions, World};

/// What one step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepReport {
    /// Phase times.
    pub times: PhaseTimes,
    /// What the pacer did.
    pub outcome: PaceOutcome,
}

/// A once-a-second look at a running simulation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Status {
    /// Simulated time (s).
    pub sim_time: f64,
    /// Steps done.
    pub steps: u64,
    /// Simulated seconds per wall second over the last interval.
    pub rt_factor: f64,
    /// Deadline misses so far.
    pub misses: u64,
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The seed of plugin `slot` (0 = driver, 1.. = sensors) of artifact `artifact`.
fn instance_seed(scene_seed: u64, artifact: u32, slot: u32) -> u64 {
    splitmix64(splitmix64(scene_seed ^ splitmix64(u64::from(artifact))) ^ u64::from(slot))
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        format!("panicked: {s}")
    } else if let Some(s) = payload.downcast_ref::<String>() {
        format!("panicked: {s}")
    } else {
        "panicked".into()
    }
}

struct SensorSlot {
    label: String,
    /// What the crash handler and the watchdog call it.
    guard: &'static Label,
    // Only ever used through `&mut` on its worker; the wrapper lets drivers on other workers
    // share the slot's reading while the plugin itself stays unshared.
    plugin: SyncWrapper<Box<dyn Sensor>>,
    reading: Reading,
    enabled: bool,
}

struct ArtifactSensors {
    id: ArtifactId,
    sensors: Vec<SensorSlot>,
}

struct DriverSlot {
    id: ArtifactId,
    label: String,
    guard: &'static Label,
    plugin: Box<dyn Driver>,
    commands: CommandBuffer,
    enabled: bool,
    /// Attaches the engine refused (logged at the 1st, 10th, 100th, ...).
    attach_refusals: u64,
}

/// One worker's share of a plugin phase.
struct Shard<T> {
    items: Vec<T>,
    /// Slowest artifact of the last phase run on this shard.
    slowest: Option<(ArtifactId, Duration)>,
    faults: Vec<PluginFault>,
}

impl<T> Default for Shard<T> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            slowest: None,
            faults: Vec::new(),
        }
    }
}

/// The extensions' overlays, for the render backend.
struct ExtensionOverlays<'a>(&'a [(String, Box<dyn SimulationExtension>)]);

impl crate::render::OverlaySource for ExtensionOverlays<'_> {
    fn visit(&self, each: &mut dyn FnMut(&str, &crate::render::Overlay)) {
        for (name, ext) in self.0 {
            for o in ext.overlays() {
                each(name, o);
            }
        }
    }
}

/// Where each artifact's readings live: (shard, item) in the sensor shards.
struct Readings<'a> {
    index: &'a [Option<(u32, u32)>],
    shards: &'a [Shard<ArtifactSensors>],
}

impl<'a> Readings<'a> {
    fn get(&self, artifact: ArtifactId, sensor: usize) -> Option<&'a Reading> {
        let (s, i) = (*self.index.get(artifact.index())?)?;
        let item = &self.shards[s as usize].items[i as usize];
        item.sensors.get(sensor).map(|slot| &slot.reading)
    }
}

impl ReadingSource for Readings<'_> {
    fn reading(&self, artifact: ArtifactId, sensor: usize) -> Option<&Reading> {
        self.get(artifact, sensor)
    }
}

/// Waking a parked worker costs tens of microseconds on a VM, more than running a few light
/// plugins; a worker is only given a share of a phase when it gets at least this many artifacts.
const MIN_ARTIFACTS_PER_WORKER: usize = 8;

/// Splits `n` artifacts into contiguous runs of near-equal length, one per worker used;
/// returns the run lengths.
fn split_evenly(n: usize, workers: usize) -> Vec<usize> {
    let parts = workers.min(n.div_ceil(MIN_ARTIFACTS_PER_WORKER)).max(1);
    (0..parts)
        .map(|k| n / parts + usize::from(k < n % parts))
        .collect()
}

/// How long a paused run sleeps at most between asking its extensions whether to go on; an
/// extension that rings [`wake`] is asked at once.
const PAUSE_POLL: Duration = Duration::from_millis(50);

/// Extensions, shut down in reverse order of initialisation when dropped.
#[derive(Default)]
struct Extensions {
    list: Vec<(String, Box<dyn SimulationExtension>)>,
    labels: Vec<&'static Label>,
}

impl ExtensionDirectory for Extensions {
    fn position(&self, name: &str) -> Option<usize> {
        self.list.iter().position(|(n, _)| n == name)
    }
    fn entry(&self, index: usize) -> Option<&dyn std::any::Any> {
        self.list.get(index).map(|(_, e)| e as &dyn std::any::Any)
    }
    fn label(&self, index: usize) -> Option<&'static Label> {
        self.labels.get(index).copied()
    }
}

impl Drop for Extensions {
    fn drop(&mut self) {
        while let (Some((name, mut ext)), Some(label)) = (self.list.pop(), self.labels.pop()) {
            tracing::debug!(extension = %name, "shutting down extension");
            let _doing = guard::enter(label, Phase::Shutdown, 0);
            ext.shutdown();
            drop(ext);
        }
    }
}

/// The label of a plugin for crash reports and the watchdog: kind and name, its library (or
/// "built in") and its artifact.
fn guard_label(what: &str, spec: &PluginSpec, artifact: Option<&str>) -> &'static Label {
    let from = match &spec.library {
        Some(lib) => lib.display().to_string(),
        None => "built in".into(),
    };
    match artifact {
        Some(a) => guard::label(&format!("{what} (library {from}), artifact '{a}'")),
        None => guard::label(&format!("{what} (library {from})")),
    }
}

/// Extensions' window on swaps: requests go to the swap thread, outcomes come from the record.
struct Desk<'a> {
    swapper: &'a Swapper,
    events: &'a [SwapEvent],
}

impl SwapDesk for Desk<'_> {
    fn request(&self, library: &str) -> Result<u64, String> {
        self.swapper
            .request(std::path::Path::new(library))
            .map(|(_, ticket)| ticket)
    }
    fn outcome(&self, ticket: u64) -> Option<Result<String, String>> {
        let e = self.events.iter().rev().find(|e| e.ticket == ticket)?;
        Some(match &e.result {
            Ok(_) => Ok(e.library.display().to_string()),
            Err(reason) => Err(reason.clone()),
        })
    }
}

/// A library swap, done or refused ([`Environment::swaps`]).
#[derive(Clone, Debug)]
pub struct SwapEvent {
    /// The request's ticket (from [`Environment::request_swap`], an extension's `swap`, or
    /// the watcher), in the order requests were made.
    pub ticket: u64,
    /// The last step before the switch (the new plugins run from the next).
    pub step: u64,
    /// The library, as the scene names it.
    pub library: PathBuf,
    /// What happened: the switch, or why the new build was refused.
    pub result: Result<SwapDone, String>,
}

/// A switch to a new build.
#[derive(Clone, Copy, Debug)]
pub struct SwapDone {
    /// Instances exchanged.
    pub instances: usize,
    /// From the request to the switch: preparing the build off the stepping thread, then
    /// waiting for the next step boundary.
    pub after_request: Duration,
    /// The stepping thread's part: exchanging the instances.
    pub switch: Duration,
}

/// The Environment. See the crate docs for the step.
///
/// Field order is shutdown order (Rust drops fields top to bottom): drivers and sensors first,
/// then the engines, the extensions last (first in, last out).
pub struct Environment {
    sensor_shards: Vec<Shard<ArtifactSensors>>,
    driver_shards: Vec<Shard<DriverSlot>>,
    reading_index: Vec<Option<(u32, u32)>>,
    /// How to make each library instance again, for a swap ([`Environment::request_swap`]).
    recipes: Vec<Recipe>,
    /// The swap thread, started on the first request (dropped before the loader: it may hold
    /// instances).
    swapper: Option<Swapper>,
    /// Swaps done or refused so far.
    swaps: Vec<SwapEvent>,
    /// The instances (and library) a switch replaced, for the swap thread to destroy.
    retiring: Option<Vec<Box<dyn Send>>>,
    /// Libraries stay loaded while an instance holds them; the loader's own handles go with it.
    loader: PluginLoader,
    engine: Box<dyn PhysicEngine>,
    engine_label: &'static Label,
    render: Box<dyn RenderEngine>,
    pool: WorkerPool,
    extensions: Extensions,
    /// Every extension's figures as of the last step's end, for extensions to read.
    metrics: Vec<(String, f64)>,
    /// Extensions whose `after_step` failed and is no longer called.
    extension_failed: Vec<bool>,
    catalog: Catalog,
    states: Vec<BodyState>,
    config: EnvironmentConfig,
    clock: Arc<dyn Clock>,
    pacer: Pacer,
    stats: Stats,
    misses: MissReporter,
    late_wakeups: MissReporter,
    /// A wait that returns later than this after its deadline is reported as a late wake-up.
    wake_tolerance: Duration,
    steps: u64,
    started_at: Option<Duration>,
    last_step_end: Duration,
    /// The last physics phase's time, to size the workers' pre-wake spin.
    last_physics: Duration,
    faults: Vec<PluginFault>,
    /// Paused by an extension: [`Environment::run`] does not step until resumed.
    paused: bool,
    /// Steps asked for while paused, still to run.
    pending_steps: u64,
    /// What creates engines and built-in plugins, again at a reset.
    registry: PluginRegistry,
    /// The artifacts the world was built from (a reset builds them again).
    specs: Vec<ArtifactSpec>,
    /// The extensions, for one that must be created anew at a reset.
    extension_specs: Vec<ExtensionSpec>,
    /// Makes the artifacts anew for another seed ([`Environment::set_scene_source`]).
    source: Option<Box<dyn SceneSource>>,
    /// Every visual, as handed to the render engine.
    render_nodes: Vec<RenderNode>,
}

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
        let mut ext = Extensions::default();
        let mut loader = PluginLoader::default();
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
        let mut env = Environment {
            sensor_shards: Vec::new(),
            driver_shards: Vec::new(),
            reading_index: vec![None; artifacts.len()],
            recipes: Vec::new(),
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
            catalog: Catalog {
                map: config.map.clone(),
                ..Catalog::default()
            },
            states: Vec::new(),
            clock,
            pacer,
            stats: Stats::new(),
            misses: MissReporter::new(Duration::from_secs(1)),
            late_wakeups: MissReporter::new(Duration::from_secs(1)),
            wake_tolerance,
            steps: 0,
            started_at: None,
            last_step_end: Duration::ZERO,
            last_physics: Duration::ZERO,
            faults: Vec::new(),
            paused: false,
            pending_steps: 0,
            registry: registry.clone(),
            specs: artifacts.to_vec(),
            extension_specs: extensions.to_vec(),
            source: None,
            render_nodes: render_nodes(artifacts),
            config,
        };
        let building = guard::enter(env.engine_label, Phase::Build, 0);
        env.add_bodies(artifacts)?;
        drop(building);
        env.add_plugins(artifacts, registry)?;
        for node in &env.render_nodes {
            env.render.add_node(node.clone());
        }
        let scene = RenderScene {
            name: &env.config.scene,
            timestep: env.config.timestep,
            artifacts: &env.catalog.artifacts,
            specs: artifacts,
        };
        env.render.start(&scene).map_err(|m| {
            SsxError::Config(format!("render backend '{}': {m}", env.render.name()))
        })?;
        Ok(env)
    }

    fn add_bodies(&mut self, artifacts: &[ArtifactSpec]) -> Result<(), SsxError> {
        let engine_err = |e: &dyn PhysicEngine, a: &str, m: String| SsxError::Engine {
            engine: e.name().into(),
            message: format!("artifact '{a}': {m}"),
        };
        for (ai, art) in artifacts.iter().enumerate() {
            let id = ArtifactId(ai as u32);
            if self.catalog.by_name.insert(art.name.clone(), id).is_some() {
                return Err(SsxError::Config(format!(
                    "duplicate artifact name '{}'",
                    art.name
                )));
            }
            let first = self.catalog.body_mass.len() as u32;
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
                self.catalog.body_mass.push(self.engine.body_mass(body));
                self.catalog
                    .body_inertia
                    .push(self.engine.body_inertia(body));
                self.catalog.body_kind.push(spec.kind);
                self.catalog.body_bounds.push(spec.bounds());
                let color = art.visuals.iter().find(|v| v.body == bi).map(|v| v.color);
                self.catalog
                    .body_color
                    .push(color.unwrap_or(crate::world::DEFAULT_BODY_COLOR));
                self.catalog.body_artifact.push(id);
                self.catalog.body_local.push(bi as u32);
            }
            let bodies = first..first + art.bodies.len() as u32;
            let first_joint = self.catalog.joint_motorised.len() as u32;
            for j in &art.joints {
                let spec = JointSpec {
                    kind: j.kind,
                    body1: BodyId(first + j.parent as u32),
                    body2: BodyId(first + j.child as u32),
                    frame1: j.frame1,
                    frame2: j.frame2,
                };
                let joint = self.engine.add_joint(&spec).map_err(|m| {
                    engine_err(&*self.engine, &art.name, format!("joint '{}': {m}", j.name))
                })?;
                if joint.0 != self.catalog.joint_motorised.len() as u32 {
                    return Err(engine_err(
                        &*self.engine,
                        &art.name,
                        "engine handed out joint ids out of order".into(),
                    ));
                }
                self.catalog.joint_motorised.push(matches!(
                    j.kind,
                    crate::engine::JointKind::Revolute { motor: Some(_), .. }
                ));
            }
            let joints = first_joint..self.catalog.joint_motorised.len() as u32;
            self.catalog.artifacts.push(ArtifactInfo {
                name: art.name.clone(),
                bodies,
                body_names: art.bodies.iter().map(|(n, _)| n.clone()).collect(),
                sensor_names: art.sensors.iter().map(|s| s.name.clone()).collect(),
                joints,
                joint_names: art.joints.iter().map(|j| j.name.clone()).collect(),
            });
        }
        self.states = vec![BodyState::default(); self.catalog.body_mass.len()];
        self.engine.read_state(&mut self.states);
        Ok(())
    }

    fn add_plugins(
        &mut self,
        artifacts: &[ArtifactSpec],
        registry: &PluginRegistry,
    ) -> Result<(), SsxError> {
        let workers = self.pool.workers();
        let create_err = |art: &ArtifactSpec, what: String, spec: &PluginSpec, m: String| {
            SsxError::PluginCreate {
                artifact: art.name.clone(),
                plugin: what,
                message: crate::spelling::suggest(&m),
                origin: spec.origin.clone().map(Box::new),
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
                let mut sensors = Vec::with_capacity(art.sensors.len());
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
                    if let Some(lib) = &s.plugin.library {
                        self.recipes.push(Recipe {
                            library: crate::files::absolute(lib),
                            plugin: s.plugin.plugin.clone(),
                            descriptor: s.plugin.descriptor.clone(),
                            init,
                            slot: Slot::Sensor {
                                shard: k as u32,
                                index: self.sensor_shards[k].items.len() as u32,
                                sensor: sensors.len() as u32,
                            },
                            guard,
                        });
                    }
                    sensors.push(SensorSlot {
                        label,
                        guard,
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
                let plugin = match &d.library {
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
                if let Some(lib) = &d.library {
                    self.recipes.push(Recipe {
                        library: crate::files::absolute(lib),
                        plugin: d.plugin.clone(),
                        descriptor: d.descriptor.clone(),
                        init,
                        slot: Slot::Driver {
                            shard: k as u32,
                            index: self.driver_shards[k].items.len() as u32,
                        },
                        guard,
                    });
                }
                let info = &self.catalog.artifacts[ai];
                let (bodies, joints) = (info.bodies.clone(), info.joints.clone());
                let motorised = self.catalog.joint_motorised
                    [joints.start as usize..joints.end as usize]
                    .to_vec();
                self.driver_shards[k].items.push(DriverSlot {
                    id: ArtifactId(ai as u32),
                    label,
                    guard,
                    plugin,
                    commands: CommandBuffer::new(bodies, joints, motorised),
                    enabled: true,
                    attach_refusals: 0,
                });
            }
        }
        Ok(())
    }

    /// Destroys every sensor, then every driver, one by one under their labels.
    fn destroy_plugins(&mut self) {
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

    fn plugin_init(&self, art: &ArtifactSpec, index: usize, slot: u32) -> PluginInit {
        let info = &self.catalog.artifacts[index];
        PluginInit {
            artifact: art.name.clone(),
            artifact_index: index as u32,
            seed: instance_seed(self.config.seed, index as u32, slot),
            timestep: self.config.timestep,
            body_count: info.bodies.len() as u32,
            joint_count: info.joints.len() as u32,
        }
    }

    /// One step: commands, physics, sensors, drivers, pace. Returns what it did; fails only in
    /// strict mode when a plugin failed.
    pub fn step(&mut self) -> Result<StepReport, SsxError> {
        self.step_until(None)
    }

    fn collect_faults(&mut self) -> Result<(), SsxError> {
        for shard in &mut self.sensor_shards {
            self.faults.append(&mut shard.faults);
        }
        for shard in &mut self.driver_shards {
            self.faults.append(&mut shard.faults);
        }
        for fault in self.faults.drain(..) {
            self.stats.record_plugin_fault();
            if self.config.strict {
                return Err(SsxError::PluginFailed(Box::new(fault)));
            }
            tracing::error!("{fault}; it is disabled, the simulation goes on");
        }
        Ok(())
    }

    fn log_late_wakeups(&self, r: &MissReport) {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let more = r.since_last("late wake-ups", "");
        tracing::warn!(
            target: "ssx::deadline",
            "late wake-up after step {}: the wait returned {:.3} ms after the deadline (compute was {:.3} ms, on time): the machine or the scheduler stalled{}",
            r.first.step,
            ms(r.first.lateness),
            ms(r.first.times.total),
            more
        );
    }

    fn log_misses(&self, r: &MissReport) {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let t = r.first.times;
        let (phase, phase_time) = t.slowest();
        let slowest = r.first.slowest_artifact;
        let artifact = DisplayFn(move |f: &mut std::fmt::Formatter<'_>| match slowest {
            Some((a, d)) => write!(
                f,
                ", slowest artifact '{}' {:.3} ms",
                self.catalog.artifacts[a as usize].name,
                ms(d)
            ),
            None => Ok(()),
        });
        let more = r.since_last("misses", " late");
        tracing::warn!(
            target: "ssx::deadline",
            "deadline missed at step {}: {:.3} ms late, compute {:.3} ms (physics {:.3}, sensors {:.3}, drivers {:.3}); slowest phase {} {:.3} ms{}{}",
            r.first.step,
            ms(r.first.lateness),
            ms(t.total),
            ms(t.physics),
            ms(t.sensors),
            ms(t.drivers),
            phase,
            ms(phase_time),
            artifact,
            more
        );
    }

    /// Steps until `max_steps` are done (None: forever) or `stop` is set (checked at every step
    /// boundary). `on_status` is called about once a wall second, between steps.
    pub fn run(
        &mut self,
        max_steps: Option<u64>,
        stop: &AtomicBool,
        mut on_status: impl FnMut(&Status, &Environment),
    ) -> Result<(), SsxError> {
        let mut last = (self.clock.now(), self.steps);
        while max_steps.is_none_or(|n| self.steps < n) && !stop.load(Ordering::Relaxed) {
            if self.paused && self.pending_steps == 0 {
                // Paused: no steps, no deadlines. Ask the extensions, then sleep until one rings
                // (a control query arrived) or the backstop interval passes.
                let seen = wake::rung();
                self.poll_control()?;
                if self.paused && self.pending_steps == 0 && !stop.load(Ordering::Relaxed) {
                    wake::wait(seen, PAUSE_POLL);
                }
                continue;
            }
            if self.paused {
                self.pending_steps -= 1;
            }
            self.step_until(Some(stop))?;
            self.poll_control()?;
            let now = self.last_step_end;
            if self.steps < last.1 {
                // Reset: the status counts from the new step 0.
                last = (now, self.steps);
            }
            if now >= last.0 + Duration::from_secs(1) {
                let sim = (self.steps - last.1) as f64 * self.config.timestep;
                let status = Status {
                    sim_time: self.sim_time(),
                    steps: self.steps,
                    rt_factor: sim / (now - last.0).as_secs_f64(),
                    misses: self.stats.misses(),
                };
                on_status(&status, self);
                last = (now, self.steps);
            }
        }
        if let Some(r) = self.misses.flush() {
            self.log_misses(&r);
        }
        if let Some(r) = self.late_wakeups.flush() {
            self.log_late_wakeups(&r);
        }
        Ok(())
    }

    /// Asks every extension what the run should do next and applies it: pause, resume (the
    /// deadlines restart from now), or a number of steps while paused. Called by
    /// [`Environment::run`] after every step, and while paused whenever an extension rings
    /// [`wake`] (at least every 50 ms); a failing
    /// `control` is handled like a failing `after_step`.
    pub fn poll_control(&mut self) -> Result<(), SsxError> {
        if self.extensions.list.is_empty() {
            return Ok(());
        }
        // Extensions may ask for swaps: the swap thread must be there to take them.
        if self.swapper.is_none()
            && !self.recipes.is_empty()
            && let Err(e) = self.swapper()
        {
            tracing::warn!("{e}");
            self.recipes.clear();
        }
        let desk = self.swapper.as_ref().map(|swapper| Desk {
            swapper,
            events: &self.swaps,
        });
        let clock = Arc::clone(&self.clock);
        let now = clock.now();
        let world = world_at(
            &*self.engine,
            &self.catalog,
            &self.states,
            &NoExtensions,
            self.steps,
            &self.config,
        );
        let readings = Readings {
            index: &self.reading_index,
            shards: &self.sensor_shards,
        };
        let ctx = ExtensionContext {
            world: &world,
            readings: &readings,
            stats: StatsView {
                stats: &self.stats,
                metrics: &self.metrics,
                paused: self.paused,
                sim_time: self.steps as f64 * self.config.timestep,
                wall_time: (now - self.started_at.unwrap_or(now)).as_secs_f64(),
            },
            swaps: desk.as_ref().map(|d| d as &dyn SwapDesk),
            overlays_wanted: self.render.wants_overlays(),
        };
        let mut requests = [RunRequest::None; 4];
        let mut asked = 0;
        for (i, (name, ext)) in self.extensions.list.iter_mut().enumerate() {
            if self.extension_failed[i] {
                continue;
            }
            let doing = guard::enter(self.extensions.labels[i], Phase::Control, self.steps);
            let asked_for = ext.control(&ctx);
            drop(doing);
            match asked_for {
                Ok(RunRequest::None) => {}
                Ok(r) if asked < requests.len() => {
                    requests[asked] = r;
                    asked += 1;
                }
                Ok(_) => {}
                Err(message) => {
                    self.extension_failed[i] = true;
                    self.faults.push(PluginFault {
                        artifact: String::new(),
                        plugin: format!("extension '{name}' (control)"),
                        step: self.steps,
                        message,
                    });
                }
            }
        }
        for r in &requests[..asked] {
            match *r {
                RunRequest::Pause if !self.paused => {
                    self.pause();
                    tracing::info!("paused at step {} by an extension", self.steps);
                }
                // Paused already: cuts short the steps asked for (at this step boundary).
                RunRequest::Pause => self.pause(),
                RunRequest::Resume if self.paused => {
                    self.paused = false;
                    self.pending_steps = 0;
                    self.pacer.resume(clock.now());
                    tracing::info!("resumed at step {}", self.steps);
                }
                // Steps asked for while paused run back to back, unpaced (lockstep).
                RunRequest::Step(n) if self.paused => {
                    self.pending_steps = self.pending_steps.saturating_add(n);
                }
                // A seed whose scene cannot be made is refused before anything is torn down.
                RunRequest::Reset(seed) => match self.rebuild(seed).and_then(|r| {
                    self.show(&r)?;
                    Ok(r)
                }) {
                    Err(e) => {
                        tracing::warn!("reset refused at step {}: {e}; the run goes on", self.steps)
                    }
                    Ok(rebuilt) => {
                        let from = self.steps;
                        self.start_over(rebuilt)?;
                        tracing::info!(
                            "reset by an extension at step {from}: step 0, seed {}",
                            self.config.seed
                        );
                    }
                },
                _ => {}
            }
        }
        self.collect_faults()
    }

    /// Asks for the drivers and sensors of `library` (as the scene names it, its absolute path,
    /// or its file name) to be swapped for a new build of that file while the run goes on (see
    /// [`crate::swap`]). The new build is loaded and instantiated off the stepping thread; the
    /// switch happens between two steps, in a later [`Environment::step`]; its outcome is in
    /// [`Environment::swaps`] and the log. Fails at once when no instance comes from `library`.
    /// Returns the request's ticket (its [`SwapEvent::ticket`]).
    pub fn request_swap(&mut self, library: &std::path::Path) -> Result<u64, SsxError> {
        self.swapper()?
            .request(library)
            .map(|(_, ticket)| ticket)
            .map_err(|m| SsxError::Config(format!("cannot swap: {m}")))
    }

    /// Watches the files of the run's swappable libraries: each change that settles is swapped
    /// in ([`crate::swap::SETTLE`]).
    pub fn watch_plugins(&mut self) -> Result<(), SsxError> {
        self.swapper()?
            .watch()
            .map_err(|e| SsxError::Config(format!("cannot start the plugin watcher: {e}")))
    }

    /// Swaps done and refused so far, in order.
    pub fn swaps(&self) -> &[SwapEvent] {
        &self.swaps
    }

    fn swapper(&mut self) -> Result<&mut Swapper, SsxError> {
        if self.swapper.is_none() {
            let copies = self.loader.copy_dir().map_err(SsxError::Config)?;
            let swapper = Swapper::start(self.recipes.clone(), copies)
                .map_err(|e| SsxError::Config(format!("cannot start the swap thread: {e}")))?;
            self.swapper = Some(swapper);
        }
        Ok(self.swapper.as_mut().expect("just made"))
    }

    /// Hands each old instance's state (its `save`) to its successor (`restore`); the first
    /// failure refuses the swap, naming the artifact and plugin. Nothing is exchanged here.
    fn hand_over(&mut self, instances: &mut [(Slot, Fresh)]) -> Result<(), String> {
        for (slot, fresh) in instances.iter_mut() {
            let (id, label, state) = match (*slot, fresh) {
                (Slot::Driver { shard, index }, Fresh::Driver(new)) => {
                    let s = &mut self.driver_shards[shard as usize].items[index as usize];
                    let state = s.plugin.save_state();
                    let state = state.and_then(|st| match st {
                        Some(bytes) => new.restore_state(&bytes),
                        None => Ok(()),
                    });
                    (s.id, &s.label, state)
                }
                (
                    Slot::Sensor {
                        shard,
                        index,
                        sensor,
                    },
                    Fresh::Sensor(new),
                ) => {
                    let a = &mut self.sensor_shards[shard as usize].items[index as usize];
                    let s = &mut a.sensors[sensor as usize];
                    let state = s.plugin.get_mut().save_state();
                    let state = state.and_then(|st| match st {
                        Some(bytes) => new.restore_state(&bytes),
                        None => Ok(()),
                    });
                    (a.id, &s.label, state)
                }
                _ => unreachable!("recipes pair drivers with driver slots"),
            };
            if let Err(m) = state {
                let artifact = &self.catalog.artifacts[id.0 as usize].name;
                return Err(format!(
                    "artifact '{artifact}': {label}: the state hand-over failed: {m}"
                ));
            }
        }
        Ok(())
    }

    /// Between two steps: switches to a prepared build, or records a refusal.
    fn switch_ready(&mut self) {
        let Some(outcome) = self.swapper.as_ref().and_then(Swapper::ready) else {
            return;
        };
        let step = self.steps;
        match outcome {
            Outcome::Refused {
                ticket,
                library,
                reason,
            } => {
                tracing::warn!(
                    "library swap refused at step {step}: {reason}; the run keeps the plugins of '{}'",
                    library.display()
                );
                self.swaps.push(SwapEvent {
                    ticket,
                    step,
                    library,
                    result: Err(reason),
                });
            }
            Outcome::Ready(mut p) => {
                let t0 = std::time::Instant::now();
                let waited = t0 - p.requested;
                if let Err(reason) = self.hand_over(&mut p.instances) {
                    tracing::warn!(
                        "library swap refused at step {step}: {reason}; the run keeps the plugins of '{}'",
                        p.library.display()
                    );
                    self.swaps.push(SwapEvent {
                        ticket: p.ticket,
                        step,
                        library: p.library.clone(),
                        result: Err(reason),
                    });
                    // The new build's instances go the way old ones do: off this thread.
                    if let Some(s) = &self.swapper {
                        s.retire(vec![Box::new(p)]);
                    }
                    return;
                }
                // The old instances in two vectors (not one box each): the switch allocates twice.
                let mut drivers: Vec<Box<dyn Driver>> = Vec::with_capacity(p.instances.len());
                let mut sensors: Vec<Box<dyn Sensor>> = Vec::with_capacity(p.instances.len());
                let count = p.instances.len();
                for (slot, fresh) in p.instances {
                    match (slot, fresh) {
                        (Slot::Driver { shard, index }, Fresh::Driver(d)) => {
                            let s = &mut self.driver_shards[shard as usize].items[index as usize];
                            drivers.push(std::mem::replace(&mut s.plugin, d));
                            s.enabled = true;
                        }
                        (
                            Slot::Sensor {
                                shard,
                                index,
                                sensor,
                            },
                            Fresh::Sensor(n),
                        ) => {
                            let s = &mut self.sensor_shards[shard as usize].items[index as usize]
                                .sensors[sensor as usize];
                            sensors.push(std::mem::replace(s.plugin.get_mut(), n));
                            s.enabled = true;
                            // The new build keeps its own count of quiet steps.
                            s.reading.wake();
                        }
                        _ => unreachable!("recipes pair drivers with driver slots"),
                    }
                }
                // Instances first, then the library they came from.
                let mut old: Vec<Box<dyn Send>> = vec![Box::new(drivers), Box::new(sensors)];
                if let Some(previous) = self.loader.replace(&p.library, p.lib) {
                    old.push(Box::new(previous));
                }
                let switch = t0.elapsed();
                // Handed to the swap thread at the end of this step's compute (see step_until).
                self.retiring = Some(old);
                tracing::info!(
                    "swapped library '{}' before step {}: {count} instance(s), {:.1} ms after the request, switched in {:.1} us",
                    p.library.display(),
                    step + 1,
                    waited.as_secs_f64() * 1e3,
                    switch.as_secs_f64() * 1e6
                );
                self.swaps.push(SwapEvent {
                    ticket: p.ticket,
                    step,
                    library: p.library,
                    result: Ok(SwapDone {
                        instances: count,
                        after_request: waited,
                        switch,
                    }),
                });
            }
        }
    }

    /// Runs `f(k)` once on every thread that steps: k = 0 is the calling (stepping) thread, k >= 1
    /// the pool's workers. For per-thread settings such as scheduling policy and CPU affinity;
    /// returns each thread's result in order.
    pub fn on_stepping_threads<R: Send + Default>(
        &self,
        f: &(dyn Fn(usize) -> R + Sync),
    ) -> Vec<R> {
        let mut out: Vec<R> = (0..self.pool.workers()).map(|_| R::default()).collect();
        self.pool.for_each_mut(&mut out, &|k, r| *r = f(k));
        out
    }

    /// Pauses the run before its next step, as an extension's pause would (`ssxd run
    /// --paused` starts this way, so that a lockstep controller owns step 1).
    pub fn pause(&mut self) {
        self.paused = true;
        self.pending_steps = 0;
    }

    /// Whether the run is paused.
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// Steps completed.
    pub fn steps(&self) -> u64 {
        self.steps
    }
    /// Simulated time (s).
    pub fn sim_time(&self) -> f64 {
        self.steps as f64 * self.config.timestep
    }
    /// The configuration.
    pub fn config(&self) -> &EnvironmentConfig {
        &self.config
    }
    /// Current state of every body, indexed by [`BodyId::index`].
    pub fn states(&self) -> &[BodyState] {
        &self.states
    }
    /// Static facts about an artifact by name.
    pub fn artifact(&self, name: &str) -> Option<&ArtifactInfo> {
        let id = self.catalog.by_name.get(name)?;
        Some(&self.catalog.artifacts[id.index()])
    }
    /// All artifacts, in scene order.
    pub fn artifacts(&self) -> &[ArtifactInfo] {
        &self.catalog.artifacts
    }
    /// The latest reading of an artifact's sensor.
    pub fn reading(&self, artifact: &str, sensor: &str) -> Option<&Reading> {
        let id = *self.catalog.by_name.get(artifact)?;
        let idx = self.catalog.artifacts[id.index()].sensor_index(sensor)?;
        Readings {
            index: &self.reading_index,
            shards: &self.sensor_shards,
        }
        .get(id, idx)
    }
    /// Whether an artifact's driver still runs (false after it failed).
    pub fn driver_enabled(&self, artifact: &str) -> Option<bool> {
        let id = *self.catalog.by_name.get(artifact)?;
        self.driver_shards
            .iter()
            .flat_map(|s| &s.items)
            .find(|d| d.id == id)
            .map(|d| d.enabled)
    }
    /// The physics engine.
    pub fn engine(&self) -> &dyn PhysicEngine {
        &*self.engine
    }
    /// The render engine.
    pub fn render(&self) -> &dyn RenderEngine {
        &*self.render
    }
    /// Number of workers.
    pub fn workers(&self) -> usize {
        self.pool.workers()
    }
    /// The pacer's mode.
    pub fn mode(&self) -> Mode {
        self.pacer.mode()
    }
    /// Copies every extension's figures into the snapshot extensions read during the next
    /// step (the Zenoh stats). Allocates only for a name not seen before.
    fn refresh_metrics(&mut self) {
        for (name, ext) in &self.extensions.list {
            for (metric, value) in ext.metrics() {
                let key = |k: &str| {
                    k.len() == name.len() + 1 + metric.len()
                        && k.starts_with(name.as_str())
                        && k.ends_with(metric.as_str())
                        && k.as_bytes()[name.len()] == b'.'
                };
                match self.metrics.iter_mut().find(|(k, _)| key(k)) {
                    Some((_, v)) => *v = *value,
                    None => self.metrics.push((format!("{name}.{metric}"), *value)),
                }
            }
        }
    }

    /// Every extension's figures (`explore.explored`, ...) as of the last step's end.
    pub fn metrics(&self) -> &[(String, f64)] {
        &self.metrics
    }

    /// Statistics so far.
    pub fn summary(&self) -> StatsSummary {
        let wall = self
            .last_step_end
            .saturating_sub(self.started_at.unwrap_or_default());
        let mut summary = self.stats.summary(
            self.config.timestep,
            self.sim_time(),
            wall,
            self.pacer.mode(),
            self.pool.workers(),
        );
        summary.metrics = self.metrics.iter().cloned().collect();
        summary
    }
}

impl Drop for Environment {
    /// Destroys the sensors, then the drivers, one by one under their labels, so that a
    /// `destroy` that crashes or never returns is named. The other fields follow in field order.
    fn drop(&mut self) {
        self.destroy_plugins();
    }
}

fn unknown(kind: PluginKind, spec: &PluginSpec, registry: &PluginRegistry) -> SsxError {
    let message = format!(
        "unknown {} '{}' (known: {})",
        kind.name(),
        spec.plugin,
        registry.names(kind).join(", ")
    );
    match &spec.origin {
        Some(origin) => SsxError::Input {
            origin: Box::new(origin.clone()),
            message,
        },
        None => SsxError::Config(message),
    }
}

/// The world as plugins see it after `steps` steps; `extensions`: the extensions they may reach.
fn world_at<'a>(
    engine: &'a dyn PhysicEngine,
    catalog: &'a Catalog,
    states: &'a [BodyState],
    extensions: &'a dyn ExtensionDirectory,
    steps: u64,
    config: &EnvironmentConfig,
) -> World<'a> {
    World {
        engine,
        catalog,
        states,
        extensions,
        time: steps as f64 * config.timestep,
        step: steps,
        dt: config.timestep,
        gravity: config.gravity,
    }
}

/// Creates and initialises one extension: from its library, or built in.
fn create_extension(
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
        origin: spec.plugin.origin.clone().map(Box::new),
    };
    let mut e = created.map_err(failed)?;
    let _doing = guard::enter(label, Phase::Init, 0);
    e.init(&extension_init(config)).map_err(failed)?;
    Ok((e, label))
}

/// What an extension is told of the run at its start (and at a reset).
fn extension_init(config: &EnvironmentConfig) -> ExtensionInit {
    ExtensionInit {
        scene: config.scene.clone(),
        timestep: config.timestep,
        seed: config.seed,
    }
}

/// A new engine of the configuration's kind.
fn create_engine(
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
fn render_nodes(artifacts: &[ArtifactSpec]) -> Vec<RenderNode> {
    let mut first = 0u32;
    let mut nodes = Vec::new();
    for art in artifacts {
        nodes.extend(art.visuals.iter().map(|v| RenderNode {
            body: BodyId(first + v.body as u32),
            local_pose: v.local_pose,
            shape: v.shape,
            color: v.color,
        }));
        first += art.bodies.len() as u32;
    }
    nodes
}
