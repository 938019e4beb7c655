//! What a plugin implements: a [`Driver`], a [`Sensor`] or an [`Extension`], and the run
//! control an extension may ask for.

use crate::abi::*;
use crate::{Ctx, Init};

/// A driver: an artifact's behaviour.
pub trait Driver: Sized + Send + 'static {
    /// Creates an instance from its JSON descriptor.
    fn create(descriptor: &str, init: &Init) -> Result<Self, String>;
    /// One step: read the world and readings, write commands.
    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String>;
    /// The state a new build of this library continues from when the run swaps it in
    /// (docs/plugins.md "Swapping a library"); `None` (the default): the new instance starts
    /// fresh. The format is yours: put a version in it.
    fn save(&self) -> Option<Vec<u8>> {
        None
    }
    /// Continues from what the previous build's [`save`](Self::save) wrote. An error refuses
    /// the whole swap (the old build keeps running). The default ignores the state.
    fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        let _ = state;
        Ok(())
    }
}

/// A sensor: measures the world for an artifact and publishes a reading.
pub trait Sensor: Sized + Send + 'static {
    /// Creates an instance from its JSON descriptor.
    fn create(descriptor: &str, init: &Init) -> Result<Self, String>;
    /// One step: measure and [`Ctx::publish`].
    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String>;
    /// The state a new build of this library continues from when the run swaps it in
    /// (docs/plugins.md "Swapping a library"); `None` (the default): the new instance starts
    /// fresh. The format is yours: put a version in it.
    fn save(&self) -> Option<Vec<u8>> {
        None
    }
    /// Continues from what the previous build's [`save`](Self::save) wrote. An error refuses
    /// the whole swap (the old build keeps running). The default ignores the state.
    fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        let _ = state;
        Ok(())
    }
}

/// A simulation extension: a bridge to the outside (a middleware, a recorder). Created before the
/// engines start, destroyed after they stop; `after_step` runs after every step on the main
/// thread; `call` serves drivers and sensors, from several worker threads at once.
pub trait Extension: Sized + Send + Sync + 'static {
    /// Creates (starts) the extension from its JSON descriptor. `init.artifact_name` is the
    /// extension's instance name in the scene.
    fn create(descriptor: &str, init: &Init) -> Result<Self, String>;
    /// After every step: read the world and readings (commands are refused).
    fn after_step(&mut self, _ctx: &Ctx<'_>) -> Result<(), String> {
        Ok(())
    }
    /// Serves a request: write as much of the response as fits, return its full length.
    fn call(&self, service: &str, _request: &[u8], _response: &mut [u8]) -> Result<usize, String> {
        Err(format!("no service '{service}'"))
    }
    /// What the run should do next: polled on the main thread after every step; while paused,
    /// whenever [`crate::Waker::wake`] is called and at least every 50 ms. Read the world and
    /// [`Ctx::stats`] here as in `after_step`.
    fn control(&mut self, _ctx: &Ctx<'_>) -> Result<Control, String> {
        Ok(Control::None)
    }
    /// The run starts over from step 0 with `seed` as the scene's seed. `None` (the default):
    /// the extension keeps nothing across a reset, and the host creates it anew from its
    /// descriptor; `Some(Ok(()))`: it started over itself and is kept (a network session stays
    /// open).
    fn reset(&mut self, _seed: u64) -> Option<Result<(), String>> {
        None
    }
}

/// A change of run state an extension asks for (see [`Extension::control`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Keep the run state.
    None,
    /// Pause after the current step.
    Pause,
    /// Resume a paused run.
    Resume,
    /// While paused, run this many steps and stay paused.
    Step(u64),
    /// Start the run over (step 0), with the scene's seed or a new one.
    Reset(Option<u64>),
}

impl Control {
    /// The C form.
    pub fn to_abi(self) -> SsxControl {
        let (command, steps) = match self {
            Control::None => (SSX_CONTROL_NONE, 0),
            Control::Pause => (SSX_CONTROL_PAUSE, 0),
            Control::Resume => (SSX_CONTROL_RESUME, 0),
            Control::Step(n) => (SSX_CONTROL_STEP, n),
            Control::Reset(None) => (SSX_CONTROL_RESET, 0),
            Control::Reset(Some(seed)) => (SSX_CONTROL_RESET_SEED, seed),
        };
        SsxControl { command, steps }
    }
}
