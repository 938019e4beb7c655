//! What artifacts run: [`Sensor`]s and [`Driver`]s, and the [`SimulationExtension`]s that bridge
//! to the outside; with the registry that creates them by name from a JSON descriptor.
//!
//! These are Rust traits, registered in-process. Plugins loaded from shared libraries through
//! the C ABI are adapted onto the same traits.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::engine::{BodyCommand, BodyId, BodyKind, EngineConfig, PhysicEngine};
use crate::math::{Point3, Pose, Vec3};
use crate::stats::StatsView;
use crate::world::{ArtifactId, ArtifactInfo, World};

/// A sensor's latest output: a flat vector of numbers whose layout the sensor documents.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    values: Vec<f64>,
    step: u64,
    written: bool,
    /// What the sensor said its values are (JSON), if it said.
    description: String,
    /// The sensor is not called before this step (it said it has nothing to measure).
    idle_until: u64,
}

impl Reading {
    /// The values.
    pub fn values(&self) -> &[f64] {
        &self.values
    }
    /// The step it was last written at (0: never written). A sensor that skips a step (a rate
    /// divider) leaves its last reading and its step in place.
    pub fn step(&self) -> u64 {
        self.step
    }
    /// Replaces the values (reuses the buffer: no allocation once it is large enough).
    pub fn set(&mut self, values: &[f64]) {
        self.written = true;
        self.values.clear();
        self.values.extend_from_slice(values);
    }
    /// The buffer, to fill in place.
    pub fn values_mut(&mut self) -> &mut Vec<f64> {
        self.written = true;
        &mut self.values
    }
    /// The sensor's description of its reading (JSON; empty when it gave none).
    pub fn description(&self) -> &str {
        &self.description
    }
    /// Sets the description (allocates only when it changes).
    pub fn describe(&mut self, text: &str) {
        if self.description != text {
            text.clone_into(&mut self.description);
        }
    }
    /// The sensor has nothing to measure on the `steps` steps after step `now` (a rate
    /// divider's quiet steps): it is not called on them, and the reading stays as it is.
    pub fn idle(&mut self, now: u64, steps: u32) {
        self.idle_until = now + u64::from(steps) + 1;
    }
    /// Whether the sensor is to be called on step `step` (it said it would be idle).
    pub(crate) fn wanted_at(&self, step: u64) -> bool {
        step >= self.idle_until
    }
    /// A new instance took the sensor over (a library swap): it is called from the next step.
    pub(crate) fn wake(&mut self) {
        self.idle_until = 0;
    }
    pub(crate) fn take_written(&mut self) -> bool {
        std::mem::take(&mut self.written)
    }
    pub(crate) fn stamp(&mut self, step: u64) {
        self.step = step;
    }
}

/// What a sensor sees in the sensor phase: the world and which artifact it belongs to.
pub struct SensorContext<'a> {
    /// The world after this step's physics.
    pub world: &'a World<'a>,
    /// The sensor's artifact.
    pub artifact: ArtifactId,
}

impl<'a> SensorContext<'a> {
    /// The sensor's artifact.
    pub fn info(&self) -> &'a ArtifactInfo {
        self.world.artifact(self.artifact)
    }
}

/// Read access to every artifact's sensor readings during the driver phase.
pub trait ReadingSource: Sync {
    /// Reading of `artifact`'s `sensor`-th sensor.
    fn reading(&self, artifact: ArtifactId, sensor: usize) -> Option<&Reading>;
}

/// What a driver sees in the driver phase: the world, its artifact, and every reading taken in
/// this step's sensor phase (its own and other artifacts', read-only, not copied).
pub struct DriverContext<'a> {
    /// The world after this step's physics.
    pub world: &'a World<'a>,
    /// The driver's artifact.
    pub artifact: ArtifactId,
    pub(crate) readings: &'a dyn ReadingSource,
}

impl<'a> DriverContext<'a> {
    /// The driver's artifact.
    pub fn info(&self) -> &'a ArtifactInfo {
        self.world.artifact(self.artifact)
    }
    /// A reading of any artifact's sensor, by index.
    pub fn reading(&self, artifact: ArtifactId, sensor: usize) -> Option<&'a Reading> {
        // Re-borrow for 'a: the source lives for 'a.
        let src: &'a dyn ReadingSource = self.readings;
        src.reading(artifact, sensor)
    }
    /// A reading of one of the driver's own sensors, by name.
    pub fn own_reading(&self, sensor: &str) -> Option<&'a Reading> {
        let idx = self.info().sensor_index(sensor)?;
        self.reading(self.artifact, idx)
    }
}

/// Why a driver's command was refused: the host maps each kind to its own status code, so the
/// text never has to be read back.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CommandError {
    /// An index past the artifact's bodies.
    #[error("body index {index} out of range: the artifact has {count} bodies")]
    Body {
        /// The index given.
        index: usize,
        /// How many there are.
        count: u32,
    },
    /// An index past the artifact's joints.
    #[error("joint index {index} out of range: the artifact has {count} joints")]
    Joint {
        /// The index given.
        index: usize,
        /// How many there are.
        count: u32,
    },
    /// A joint target for a joint without a motor.
    #[error("joint {0} has no motor: give it \"motor\" in the artifact file")]
    NoMotor(usize),
    /// A body id past the world's bodies.
    #[error("no body {0}")]
    NoBody(u32),
    /// Holding a body that is not dynamic.
    #[error("body {body} is {kind:?}: only a dynamic body can be held")]
    NotDynamic {
        /// The body.
        body: u32,
        /// What it is.
        kind: BodyKind,
    },
    /// Holding one of the artifact's own bodies.
    #[error("an artifact cannot hold its own body ({0})")]
    OwnBody(u32),
    /// Holding a body another artifact holds.
    #[error("body {body} is held by artifact '{by}'")]
    HeldElsewhere {
        /// The body.
        body: u32,
        /// The artifact holding it.
        by: String,
    },
    /// Releasing a body the artifact does not hold.
    #[error("body {0} is not held by this artifact")]
    NotHeld(u32),
    /// A value that is not finite.
    #[error("{what} is not finite: {value}")]
    NotFinite {
        /// What it is (`force`, `point`, ...).
        what: &'static str,
        /// The value, as written.
        value: String,
    },
}

impl From<CommandError> for String {
    fn from(e: CommandError) -> String {
        e.to_string()
    }
}

/// Where a driver writes its commands for the next step. Only the artifact's own bodies can be
/// commanded; every vector must be finite.
#[derive(Debug, Default)]
pub struct CommandBuffer {
    bodies: std::ops::Range<u32>,
    /// The artifact's joints, and which of them have a motor.
    joints: std::ops::Range<u32>,
    motorised: Vec<bool>,
    commands: Vec<BodyCommand>,
}

impl CommandBuffer {
    pub(crate) fn new(
        bodies: std::ops::Range<u32>,
        joints: std::ops::Range<u32>,
        motorised: Vec<bool>,
    ) -> Self {
        Self {
            bodies,
            joints,
            motorised,
            commands: Vec::new(),
        }
    }

    /// Drives the artifact's `joint`-th joint (a revolute joint with a motor) towards an angle
    /// (rad) and angular velocity (rad/s); the target holds until the next one.
    pub fn joint_target(
        &mut self,
        joint: usize,
        position: f64,
        velocity: f64,
    ) -> Result<(), CommandError> {
        let n = self.joints.end - self.joints.start;
        let local = u32::try_from(joint)
            .ok()
            .filter(|&l| l < n)
            .ok_or(CommandError::Joint {
                index: joint,
                count: n,
            })?;
        if !self.motorised[local as usize] {
            return Err(CommandError::NoMotor(joint));
        }
        if !(position.is_finite() && velocity.is_finite()) {
            return Err(CommandError::NotFinite {
                what: "joint target",
                value: format!("{position}, {velocity}"),
            });
        }
        self.commands.push(BodyCommand::JointTarget {
            joint: crate::engine::JointId(self.joints.start + local),
            position,
            velocity,
        });
        Ok(())
    }

    pub(crate) fn drain(&mut self) -> std::vec::Drain<'_, BodyCommand> {
        self.commands.drain(..)
    }

    /// Commands queued so far this step.
    pub fn commands(&self) -> &[BodyCommand] {
        &self.commands
    }

    fn body(&self, local: usize) -> Result<BodyId, CommandError> {
        let n = self.bodies.end - self.bodies.start;
        u32::try_from(local)
            .ok()
            .filter(|&l| l < n)
            .map(|l| BodyId(self.bodies.start + l))
            .ok_or(CommandError::Body {
                index: local,
                count: n,
            })
    }

    fn finite(what: &'static str, v: &Vec3) -> Result<(), CommandError> {
        if v.iter().all(|x| x.is_finite()) {
            Ok(())
        } else {
            Err(CommandError::NotFinite {
                what,
                value: format!("{v:?}"),
            })
        }
    }

    /// A force (world frame, N) at the centre of mass of the artifact's `body`-th body.
    pub fn force(&mut self, body: usize, force: Vec3) -> Result<(), CommandError> {
        let body = self.body(body)?;
        Self::finite("force", &force)?;
        self.commands.push(BodyCommand::Force { body, force });
        Ok(())
    }

    /// A force (world frame) at a point (world frame).
    pub fn force_at_point(
        &mut self,
        body: usize,
        force: Vec3,
        point: Point3,
    ) -> Result<(), CommandError> {
        let body = self.body(body)?;
        Self::finite("force", &force)?;
        Self::finite("point", &point.coords)?;
        self.commands
            .push(BodyCommand::ForceAtPoint { body, force, point });
        Ok(())
    }

    /// A torque (world frame, N·m).
    pub fn torque(&mut self, body: usize, torque: Vec3) -> Result<(), CommandError> {
        let body = self.body(body)?;
        Self::finite("torque", &torque)?;
        self.commands.push(BodyCommand::Torque { body, torque });
        Ok(())
    }

    /// Holds `target` (a dynamic body, of any artifact) with the artifact's `carrier`-th body
    /// from the next step on, at `offset` (its pose in the carrier's frame); a body held already
    /// by this artifact is moved to the new offset. `world` checks the target: it must exist,
    /// be dynamic and not be held by another artifact. The engine must have
    /// [`crate::engine::Capabilities::attach`] (else the Environment logs the refusal).
    pub fn attach(
        &mut self,
        world: &World<'_>,
        carrier: usize,
        target: BodyId,
        offset: Pose,
    ) -> Result<(), CommandError> {
        let carrier = self.body(carrier)?;
        if target.index() >= world.bodies().len() {
            return Err(CommandError::NoBody(target.0));
        }
        let kind = world.kind(target);
        if kind != BodyKind::Dynamic {
            return Err(CommandError::NotDynamic {
                body: target.0,
                kind,
            });
        }
        if self.bodies.contains(&target.0) {
            return Err(CommandError::OwnBody(target.0));
        }
        if let Some((other, _)) = world.attachment(target)
            && !self.bodies.contains(&other.0)
        {
            return Err(CommandError::HeldElsewhere {
                body: target.0,
                by: world.artifact(world.owner(other)).name.clone(),
            });
        }
        Self::finite("offset", &offset.translation.vector)?;
        if !offset.rotation.coords.iter().all(|x| x.is_finite()) {
            return Err(CommandError::NotFinite {
                what: "offset rotation",
                value: format!("{:?}", offset.rotation.coords),
            });
        }
        self.commands.push(BodyCommand::Attach {
            body: target,
            carrier,
            offset,
        });
        Ok(())
    }

    /// Releases `target` from the next step on; it must be held by one of the artifact's
    /// bodies (as of this step).
    pub fn detach(&mut self, world: &World<'_>, target: BodyId) -> Result<(), CommandError> {
        if target.index() >= world.bodies().len() {
            return Err(CommandError::NoBody(target.0));
        }
        match world.attachment(target) {
            Some((carrier, _)) if self.bodies.contains(&carrier.0) => {
                self.commands.push(BodyCommand::Detach { body: target });
                Ok(())
            }
            _ => Err(CommandError::NotHeld(target.0)),
        }
    }

    /// The velocity of a kinematic body (world frame).
    pub fn velocity(
        &mut self,
        body: usize,
        linear: Vec3,
        angular: Vec3,
    ) -> Result<(), CommandError> {
        let body = self.body(body)?;
        Self::finite("linear velocity", &linear)?;
        Self::finite("angular velocity", &angular)?;
        self.commands.push(BodyCommand::Velocity {
            body,
            linear,
            angular,
        });
        Ok(())
    }
}

/// An artifact's sensor. Runs in the sensor phase on a worker thread; the world is read-only.
pub trait Sensor: Send {
    /// Measures and writes `out`. An error disables this sensor (or stops a strict run).
    fn sense(&mut self, ctx: &SensorContext<'_>, out: &mut Reading) -> Result<(), String>;
    /// The state a new build continues from when this plugin's library is swapped
    /// (swap.rs): `Ok(None)` (the default) for none.
    fn save_state(&mut self) -> Result<Option<Vec<u8>>, String> {
        Ok(None)
    }
    /// Continues from what the previous build's [`save_state`](Self::save_state) returned; an
    /// error refuses the swap.
    fn restore_state(&mut self, state: &[u8]) -> Result<(), String> {
        let _ = state;
        Ok(())
    }
}

/// An artifact's behaviour. Runs in the driver phase on a worker thread; it reads readings and
/// the world and writes commands for the next step.
pub trait Driver: Send {
    /// Computes this step's commands. An error disables this driver (or stops a strict run).
    fn drive(&mut self, ctx: &DriverContext<'_>, out: &mut CommandBuffer) -> Result<(), String>;
    /// The state a new build continues from when this plugin's library is swapped
    /// (swap.rs): `Ok(None)` (the default) for none.
    fn save_state(&mut self) -> Result<Option<Vec<u8>>, String> {
        Ok(None)
    }
    /// Continues from what the previous build's [`save_state`](Self::save_state) returned; an
    /// error refuses the swap.
    fn restore_state(&mut self, state: &[u8]) -> Result<(), String> {
        let _ = state;
        Ok(())
    }
}

/// What an extension sees after each step: the world and every reading of the step.
pub struct ExtensionContext<'a> {
    /// The world after the step.
    pub world: &'a World<'a>,
    pub(crate) readings: &'a dyn ReadingSource,
    /// The run's statistics so far.
    pub stats: StatsView<'a>,
    /// Library swaps (`control` asks, any phase reads outcomes); `None` where the run has no
    /// swappable library.
    pub swaps: Option<&'a dyn SwapDesk>,
    /// Whether anything shows or keeps overlays in this run (a live view or a recording);
    /// without, an extension need not draw them.
    pub overlays_wanted: bool,
}

/// Where extensions ask for library swaps and learn how they went (the Environment's swap
/// thread and its record, see swap.rs).
pub trait SwapDesk {
    /// Asks for the run's drivers and sensors from `library` to be swapped for a new build of
    /// its file; the request's ticket. Fails at once when nothing comes from `library`.
    fn request(&self, library: &str) -> Result<u64, String>;
    /// How request `ticket` went, once decided: `Ok(library)` or `Err(reason)`.
    fn outcome(&self, ticket: u64) -> Option<Result<String, String>>;
}

/// A change of run state an extension asks for (polled through
/// [`SimulationExtension::control`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RunRequest {
    /// Keep the run state.
    #[default]
    None,
    /// Pause after the current step.
    Pause,
    /// Resume a paused run; deadlines restart from now.
    Resume,
    /// While paused: run this many steps, then stay paused.
    Step(u64),
    /// Start the run over from step 0 ([`crate::Environment::reset`]), with the scene's seed
    /// or a new one; a paused run stays paused.
    Reset(Option<u64>),
}

impl<'a> ExtensionContext<'a> {
    /// A reading of any artifact's sensor, by index.
    pub fn reading(&self, artifact: ArtifactId, sensor: usize) -> Option<&'a Reading> {
        let src: &'a dyn ReadingSource = self.readings;
        src.reading(artifact, sensor)
    }
}

/// What an extension is told when it starts, before the engines are configured.
#[derive(Clone, Debug)]
pub struct ExtensionInit {
    /// Scene name.
    pub scene: String,
    /// Timestep (s).
    pub timestep: f64,
    /// Scene seed.
    pub seed: u64,
}

/// A bridge to the outside (SSX's SimulationExtension). Initialised before the engines start and
/// shut down after they stop (first in, last out). Drivers and sensors reach it by name through
/// [`World::extension`] and use its services through [`SimulationExtension::as_any`].
pub trait SimulationExtension: Send + Sync {
    /// Starts the extension.
    fn init(&mut self, init: &ExtensionInit) -> Result<(), String>;
    /// Called on the stepping thread after the driver phase of every step.
    fn after_step(&mut self, _ctx: &ExtensionContext<'_>) -> Result<(), String> {
        Ok(())
    }
    /// Serves a request from a driver or sensor: writes the response into `response` (as much
    /// as fits) and returns its full length. Called from worker threads, possibly several at
    /// once, during the sensor and driver phases.
    fn call(&self, service: &str, _request: &[u8], _response: &mut [u8]) -> Result<usize, String> {
        Err(format!("this extension offers no service '{service}'"))
    }
    /// What the run should do next. Polled on the stepping thread after every step (after
    /// `after_step`); while the run is paused, whenever an extension rings
    /// [`crate::wake::ring`] and at least every 50 ms. Steps asked for while paused run
    /// unpaced, back to back.
    fn control(&mut self, _ctx: &ExtensionContext<'_>) -> Result<RunRequest, String> {
        Ok(RunRequest::None)
    }
    /// The figures the extension reports in the run's summary (name, last value), in the order
    /// first set.
    fn metrics(&self) -> &[(String, f64)] {
        &[]
    }
    /// The pictures the extension lays over the floor for views and recordings.
    fn overlays(&self) -> &[crate::overlay::Overlay] {
        &[]
    }
    /// The run starts over from step 0 ([`crate::Environment::reset`]); `init.seed` is the
    /// scene's seed from now on. Called on the stepping thread after every driver and sensor
    /// was destroyed, before the new ones are created. `None` (the default): the extension keeps
    /// nothing across a reset, and the Environment shuts it down and creates it anew from its
    /// spec; `Some(Ok(()))`: it started over itself and is kept (a network session stays open).
    fn reset(&mut self, _init: &ExtensionInit) -> Option<Result<(), String>> {
        None
    }
    /// Stops the extension; called once, after the engines have stopped.
    fn shutdown(&mut self);
    /// The extension as `Any`, so users can reach its concrete services.
    fn as_any(&self) -> &dyn Any;
}

/// An extension's figures: (name, last value), in the order first set.
pub type Metrics = Vec<(String, f64)>;

/// Most figures one extension may set.
pub const MAX_METRICS: usize = 64;

/// Sets figure `name` to `value`: `Err` with a reason when the name is not 1 to 64 bytes of
/// letters, digits, `_` and `.`, the value is not finite, or a new name would pass
/// [`MAX_METRICS`]. Setting a known name does not allocate.
pub fn set_metric(metrics: &mut Metrics, name: &str, value: f64) -> Result<(), &'static str> {
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    if name.is_empty() || name.len() > 64 || !name.chars().all(ok) {
        return Err("a metric name is 1 to 64 letters, digits, '_' or '.'");
    }
    if !value.is_finite() {
        return Err("a metric's value must be finite");
    }
    if let Some((_, v)) = metrics.iter_mut().find(|(n, _)| n == name) {
        *v = value;
    } else if metrics.len() >= MAX_METRICS {
        return Err("an extension sets at most 64 metrics");
    } else {
        metrics.push((name.to_string(), value));
    }
    Ok(())
}

/// What a plugin is told when it is created.
#[derive(Clone, Debug)]
pub struct PluginInit {
    /// Its artifact's name.
    pub artifact: String,
    /// Its artifact's index in the scene.
    pub artifact_index: u32,
    /// A seed for repeatable noise, distinct per instance, derived from the scene seed.
    pub seed: u64,
    /// The timestep (s).
    pub timestep: f64,
    /// How many bodies its artifact has (0 for an extension).
    pub body_count: u32,
    /// How many joints its artifact has (0 for an extension).
    pub joint_count: u32,
}

/// Creates a driver from its JSON descriptor.
pub type DriverFactory =
    Arc<dyn Fn(&serde_json::Value, &PluginInit) -> Result<Box<dyn Driver>, String> + Send + Sync>;
/// Creates a sensor from its JSON descriptor.
pub type SensorFactory =
    Arc<dyn Fn(&serde_json::Value, &PluginInit) -> Result<Box<dyn Sensor>, String> + Send + Sync>;
/// Creates an extension from its JSON descriptor (and its instance name).
pub type ExtensionFactory =
    Arc<dyn Fn(&serde_json::Value) -> Result<Box<dyn SimulationExtension>, String> + Send + Sync>;
/// Creates a physics engine.
pub type EngineFactory = Arc<dyn Fn(&EngineConfig) -> Box<dyn PhysicEngine> + Send + Sync>;

/// Everything that can be created by name: engines, drivers, sensors, extensions.
#[derive(Clone, Default)]
pub struct PluginRegistry {
    engines: BTreeMap<String, EngineFactory>,
    drivers: BTreeMap<String, DriverFactory>,
    sensors: BTreeMap<String, SensorFactory>,
    extensions: BTreeMap<String, ExtensionFactory>,
}

impl std::fmt::Debug for PluginRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginRegistry")
            .field("engines", &self.engines.keys().collect::<Vec<_>>())
            .field("drivers", &self.drivers.keys().collect::<Vec<_>>())
            .field("sensors", &self.sensors.keys().collect::<Vec<_>>())
            .field("extensions", &self.extensions.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The kinds of things a registry holds, for messages and lookups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginKind {
    /// A physics engine.
    Engine,
    /// A driver.
    Driver,
    /// A sensor.
    Sensor,
    /// An extension.
    Extension,
}

impl PluginKind {
    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            PluginKind::Engine => "engine",
            PluginKind::Driver => "driver",
            PluginKind::Sensor => "sensor",
            PluginKind::Extension => "extension",
        }
    }
}

impl PluginRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }
    /// Registers an engine.
    pub fn add_engine(
        &mut self,
        name: &str,
        f: impl Fn(&EngineConfig) -> Box<dyn PhysicEngine> + Send + Sync + 'static,
    ) {
        self.engines.insert(name.into(), Arc::new(f));
    }
    /// Registers a driver.
    pub fn add_driver(
        &mut self,
        name: &str,
        f: impl Fn(&serde_json::Value, &PluginInit) -> Result<Box<dyn Driver>, String>
        + Send
        + Sync
        + 'static,
    ) {
        self.drivers.insert(name.into(), Arc::new(f));
    }
    /// Registers a sensor.
    pub fn add_sensor(
        &mut self,
        name: &str,
        f: impl Fn(&serde_json::Value, &PluginInit) -> Result<Box<dyn Sensor>, String>
        + Send
        + Sync
        + 'static,
    ) {
        self.sensors.insert(name.into(), Arc::new(f));
    }
    /// Registers an extension.
    pub fn add_extension(
        &mut self,
        name: &str,
        f: impl Fn(&serde_json::Value) -> Result<Box<dyn SimulationExtension>, String>
        + Send
        + Sync
        + 'static,
    ) {
        self.extensions.insert(name.into(), Arc::new(f));
    }
    /// Whether a name is registered for a kind.
    pub fn has(&self, kind: PluginKind, name: &str) -> bool {
        match kind {
            PluginKind::Engine => self.engines.contains_key(name),
            PluginKind::Driver => self.drivers.contains_key(name),
            PluginKind::Sensor => self.sensors.contains_key(name),
            PluginKind::Extension => self.extensions.contains_key(name),
        }
    }
    /// The names registered for a kind, sorted.
    pub fn names(&self, kind: PluginKind) -> Vec<&str> {
        match kind {
            PluginKind::Engine => self.engines.keys().map(String::as_str).collect(),
            PluginKind::Driver => self.drivers.keys().map(String::as_str).collect(),
            PluginKind::Sensor => self.sensors.keys().map(String::as_str).collect(),
            PluginKind::Extension => self.extensions.keys().map(String::as_str).collect(),
        }
    }
    /// A new engine by registered name, or `None` if there is no such engine.
    pub fn create_engine(
        &self,
        name: &str,
        config: &EngineConfig,
    ) -> Option<Box<dyn PhysicEngine>> {
        self.engines.get(name).map(|f| f(config))
    }
    pub(crate) fn engine(&self, name: &str) -> Option<&EngineFactory> {
        self.engines.get(name)
    }
    pub(crate) fn driver(&self, name: &str) -> Option<&DriverFactory> {
        self.drivers.get(name)
    }
    pub(crate) fn sensor(&self, name: &str) -> Option<&SensorFactory> {
        self.sensors.get(name)
    }
    pub(crate) fn extension(&self, name: &str) -> Option<&ExtensionFactory> {
        self.extensions.get(name)
    }
}

/// Parses a descriptor into `T`, with the JSON path of the first problem in the message.
pub fn parse_descriptor<T: serde::de::DeserializeOwned>(
    descriptor: &serde_json::Value,
) -> Result<T, String> {
    serde_path_to_error::deserialize(descriptor).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            format!("invalid descriptor: {}", e.inner())
        } else {
            format!("invalid descriptor at {path}: {}", e.inner())
        }
    })
}

/// The typed side of [`crate::world::ExtensionDirectory`].
impl<'a> World<'a> {
    /// A simulation extension by name.
    pub fn extension(&self, name: &str) -> Option<&'a dyn SimulationExtension> {
        self.extension_index(name)
            .and_then(|i| self.extension_at(i))
    }
    /// The index of a simulation extension by name (scene order).
    pub fn extension_index(&self, name: &str) -> Option<usize> {
        self.extensions.position(name)
    }
    /// A simulation extension by index.
    pub fn extension_at(&self, index: usize) -> Option<&'a dyn SimulationExtension> {
        self.extensions
            .entry(index)?
            .downcast_ref::<Box<dyn SimulationExtension>>()
            .map(|e| e.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_commands_say_why_in_a_type_and_in_words() {
        let mut out = CommandBuffer::new(4..5, 2..3, vec![false]);
        let e = out.force(1, Vec3::zeros()).unwrap_err();
        assert_eq!(e, CommandError::Body { index: 1, count: 1 });
        assert_eq!(
            e.to_string(),
            "body index 1 out of range: the artifact has 1 bodies"
        );
        assert_eq!(
            out.joint_target(1, 0.0, 0.0).unwrap_err(),
            CommandError::Joint { index: 1, count: 1 }
        );
        assert_eq!(
            out.joint_target(0, 0.0, 0.0).unwrap_err().to_string(),
            "joint 0 has no motor: give it \"motor\" in the artifact file"
        );
        assert_eq!(
            out.torque(0, Vec3::new(f64::NAN, 0.0, 0.0))
                .unwrap_err()
                .to_string(),
            "torque is not finite: [[NaN, 0.0, 0.0]]"
        );
        out.force(0, Vec3::new(1.0, 0.0, 0.0)).unwrap();
        assert_eq!(
            out.commands(),
            &[BodyCommand::Force {
                body: BodyId(4),
                force: Vec3::new(1.0, 0.0, 0.0)
            }]
        );
    }

    #[test]
    fn metrics_keep_the_last_value_and_refuse_bad_names_values_and_the_65th() {
        let mut m = Metrics::new();
        set_metric(&mut m, "explored", 0.25).unwrap();
        set_metric(&mut m, "explored", 0.5).unwrap();
        set_metric(&mut m, "a.b_2", 1.0).unwrap();
        assert_eq!(
            m,
            [("explored".to_string(), 0.5), ("a.b_2".to_string(), 1.0)]
        );
        let name = "a metric name is 1 to 64 letters, digits, '_' or '.'";
        assert_eq!(set_metric(&mut m, "", 1.0), Err(name));
        assert_eq!(set_metric(&mut m, "has space", 1.0), Err(name));
        assert_eq!(set_metric(&mut m, &"x".repeat(65), 1.0), Err(name));
        assert_eq!(
            set_metric(&mut m, "nan", f64::NAN),
            Err("a metric's value must be finite")
        );
        for i in 2..MAX_METRICS {
            set_metric(&mut m, &format!("m{i}"), 0.0).unwrap();
        }
        assert_eq!(m.len(), MAX_METRICS);
        assert_eq!(
            set_metric(&mut m, "one_more", 0.0),
            Err("an extension sets at most 64 metrics")
        );
        // A known name is still set at the limit.
        set_metric(&mut m, "explored", 0.75).unwrap();
        assert_eq!(m[0].1, 0.75);
    }
}
