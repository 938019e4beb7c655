//! What artifacts run: [`Sensor`]s and [`Driver`]s, and the [`SimulationExtension`]s that bridge
//! to the outside; with the registry that creates them by name from a JSON descriptor.
//!
//! These are Rust traits, registered in-process. Plugins loaded from shared libraries through
//! the C ABI are adapted onto the same traits.

use std::any::Any;
use std::sync::Arc;

use crate::stats::StatsView;
use crate::world::{ArtifactId, ArtifactInfo, World};

mod batch;
mod command;
mod description;
mod registry;

pub use batch::BatchMember;
pub use command::{CommandBuffer, CommandError};
pub use registry::{
    DriverFactory, EngineFactory, ExtensionFactory, PluginInit, PluginKind, PluginRegistry,
    SensorFactory, parse_descriptor,
};

/// A sensor's latest output: a flat vector of numbers whose layout the sensor documents.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    values: Vec<f64>,
    step: u64,
    written: bool,
    /// What the sensor said its values are (JSON), if it said; one copy for every reading
    /// with the same text.
    description: Arc<str>,
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
    /// Sets the description (changes it only when the text changes).
    pub fn describe(&mut self, text: &str) {
        if *self.description != *text {
            self.description = description::shared(text);
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

/// An artifact's sensor. Runs in the sensor phase on a worker thread; the world is read-only.
pub trait Sensor: Send {
    /// Measures and writes `out`. An error disables this sensor (or stops a strict run).
    fn sense(&mut self, ctx: &SensorContext<'_>, out: &mut Reading) -> Result<(), String>;
    /// Where this sensor is a library instance that steps with others of its plugin in one
    /// call, what the host needs for that call; `None` (the default): one call each. Asked once,
    /// when the instance is placed in its slot: what it returns stays valid for the instance's
    /// life.
    fn batch_member(&mut self) -> Option<BatchMember> {
        None
    }
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
    /// Where this driver is a library instance that steps with others of its plugin in one
    /// call, what the host needs for that call; `None` (the default): one call each. Asked once,
    /// when the instance is placed in its slot: what it returns stays valid for the instance's
    /// life.
    fn batch_member(&mut self) -> Option<BatchMember> {
        None
    }
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
    use crate::engine::{BodyCommand, BodyId};
    use crate::math::Vec3;

    #[test]
    fn refused_commands_say_why_in_a_type_and_in_words() {
        let mut out = CommandBuffer::new(4..5, 2..3, vec![crate::engine::JointKind::Fixed]);
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
