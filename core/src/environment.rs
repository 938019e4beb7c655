//! The Environment: owns the engines, the artifacts' plugins, the worker pool, the pacer and
//! the statistics, and is the only thing that advances time.

use std::sync::Arc;
use std::time::Duration;

use smallvec::SmallVec;
use sync_wrapper::SyncWrapper;

mod batched;
mod build;
mod calls;
mod control;
mod held;
mod prefetch;
mod reset;
mod share;
mod step;
mod swaps;
mod tape;

pub use reset::{Rebuilt, SceneSource};
pub use share::{Commons, Shared};
pub use swaps::{SwapDone, SwapEvent};

pub use crate::spec::{
    ArtifactJoint, ArtifactSpec, ArtifactVisual, EnvironmentConfig, ExtensionSpec, PluginSpec,
    RobotModel, SensorSpec,
};

use crate::abi::PluginLoader;
use crate::clock::Clock;
use crate::engine::{BodyState, PhysicEngine};
use crate::error::PluginFault;
use crate::guard::{self, Label, Phase};
use crate::pacer::{Mode, PaceOutcome, Pacer};
use crate::plugin::{
    BatchMember, CommandBuffer, Driver, PluginRegistry, Reading, ReadingSource, Sensor,
    SimulationExtension,
};
use crate::pool::WorkerPool;
use crate::render::RenderEngine;
use crate::stats::{MissReporter, PhaseTimes, Stats, StatsSummary};
use crate::swap::Swapper;
use crate::tape::Tape;
use crate::world::{ArtifactId, ArtifactInfo, Catalog, ExtensionDirectory, World};

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
    /// What messages call it (`sensor 'NAME' (PLUGIN)`), held once a text: every world of a
    /// batch has the same.
    label: &'static Label,
    /// What the crash handler and the watchdog call it.
    guard: &'static Label,
    // Only ever used through `&mut` on its worker; the wrapper lets drivers on other workers
    // share the slot's reading while the plugin itself stays unshared.
    plugin: SyncWrapper<Box<dyn Sensor>>,
    /// What a batch call needs of the plugin (batched.rs), taken when it was placed here.
    member: Option<BatchMember>,
    reading: Reading,
    enabled: bool,
}

struct ArtifactSensors {
    id: ArtifactId,
    /// Inline for one: most robots carry one sensor, and a batch holds thousands of them.
    sensors: SmallVec<[SensorSlot; 1]>,
}

struct DriverSlot {
    id: ArtifactId,
    /// What messages call it (`driver 'PLUGIN'`), held once a text.
    label: &'static Label,
    guard: &'static Label,
    plugin: Box<dyn Driver>,
    /// What a batch call needs of the plugin (batched.rs), taken when it was placed here.
    member: Option<BatchMember>,
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
    /// What they answered the plugins, recorded or replayed.
    tape: Tape,
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
    fn name(&self, index: usize) -> Option<&str> {
        self.list.get(index).map(|(n, _)| n.as_str())
    }
    fn tape(&self) -> Option<&Tape> {
        Some(&self.tape)
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

/// The Environment. See the crate docs for the step.
///
/// Field order is shutdown order (Rust drops fields top to bottom): drivers and sensors first,
/// then the engines, the extensions last (first in, last out).
pub struct Environment {
    sensor_shards: Vec<Shard<ArtifactSensors>>,
    driver_shards: Vec<Shard<DriverSlot>>,
    /// Each artifact's readings in the sensor shards, up to the last artifact with sensors.
    reading_index: Vec<Option<(u32, u32)>>,
    /// This world's number among the process's Environments (`PluginInit::world`).
    world_id: u64,
    /// Whether some driver or sensor came from a library, so that a swap thread is worth
    /// starting (its recipes are made then, from the specs and slots: [`Environment::recipes`]).
    swappable: bool,
    /// The swap thread, started on the first request (dropped before the loader: it may hold
    /// instances).
    swapper: Option<Box<Swapper>>,
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
    /// Shared with the other worlds of a batch where equal ([`Environment::share`]).
    catalog: Arc<Catalog>,
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
    /// The artifacts the world was built from (a reset builds them again); shared with the
    /// other worlds of a batch where equal, or equal but for where they stand
    /// ([`Environment::share`]).
    specs: held::Held,
    /// The extensions, for one that must be created anew at a reset.
    extension_specs: Vec<ExtensionSpec>,
    /// Makes the artifacts anew for another seed ([`Environment::set_scene_source`]).
    source: Option<Box<dyn SceneSource>>,
}

impl Environment {
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
    /// Current state of every body, indexed by [`crate::BodyId::index`].
    pub fn states(&self) -> &[BodyState] {
        &self.states
    }
    /// Static facts about an artifact by name.
    pub fn artifact(&self, name: &str) -> Option<&ArtifactInfo> {
        let id = self.catalog.by_name.get(name)?;
        Some(&self.catalog.artifacts[id.index()])
    }
    /// How a body moves, its box in its own frame (least, greatest corner; `None` without a
    /// bounded collider), and its mass: the facts the world was built with.
    pub fn body_facts(
        &self,
        id: crate::BodyId,
    ) -> (
        crate::BodyKind,
        Option<(crate::math::Vec3, crate::math::Vec3)>,
        f64,
    ) {
        let k = id.index();
        (
            self.catalog.body_kind[k],
            self.catalog.body_bounds[k],
            self.catalog.body_mass[k],
        )
    }
    /// A joint's kind, bodies and frames, and where it stands now.
    pub fn joint(
        &self,
        id: crate::JointId,
    ) -> Option<(&crate::JointSpec, crate::engine::JointReading)> {
        let spec = self.catalog.joints.get(id.0 as usize)?;
        let reading = crate::engine::joint_reading(
            spec,
            &self.states[spec.body1.index()],
            &self.states[spec.body2.index()],
        );
        Some((spec, reading))
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
    /// The plugin libraries this Environment opened, to share with another built from the
    /// same scene ([`Environment::build_sharing`]).
    pub fn plugin_loader(&self) -> &PluginLoader {
        &self.loader
    }
    /// The driver and sensor libraries open now (after any swap), by path.
    pub fn swappable_libraries(&self) -> Vec<Arc<crate::abi::PluginLibrary>> {
        let mut l: Vec<_> = (self.loader.opened())
            .filter(|l| l.is_copy())
            .cloned()
            .collect();
        l.sort_by(|a, b| a.path().cmp(b.path()));
        l
    }
    /// Starts the statistics over keeping no step times, across resets too (their percentiles
    /// read 0; steps, misses and faults are still counted): for a batch of many small worlds, each of
    /// which would otherwise hold about 1.2 MB of histograms ([`Stats::untimed`]).
    pub fn drop_step_times(&mut self) {
        self.stats = Stats::untimed();
    }
    /// The latest reading of sensor `sensor` (its index in the artifact's `sensor_names`) of
    /// the artifact with index `artifact`: [`Environment::reading`] without the name lookups,
    /// for a program that reads many artifacts every step.
    pub fn reading_at(&self, artifact: usize, sensor: usize) -> Option<&Reading> {
        let id = ArtifactId(u32::try_from(artifact).ok()?);
        Readings {
            index: &self.reading_index,
            shards: &self.sensor_shards,
        }
        .get(id, sensor)
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
