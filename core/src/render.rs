//! The visual representation, mirrored on the physical tree (SSX's RenderEngine/RenderNode).
//!
//! A backend gets its nodes while the Environment is built, the scene once before the first
//! step ([`RenderEngine::start`]), and a read-only [`RenderFrame`] after every step
//! ([`RenderEngine::sync`], on the stepping thread). `sync` must never block: a backend that
//! draws or writes elsewhere copies what it needs and hands it to its own threads.

use std::time::Duration;

use crate::engine::{BodyId, BodyState, Shape};
use crate::environment::ArtifactSpec;
use crate::math::Pose;
use crate::plugin::{Reading, ReadingSource};
use crate::world::{ArtifactId, ArtifactInfo};

/// One visual element, attached to a body.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderNode {
    /// The body it follows.
    pub body: BodyId,
    /// Pose relative to the body.
    pub local_pose: Pose,
    /// What it looks like.
    pub shape: Shape,
    /// RGBA, 0 to 1.
    pub color: [f32; 4],
}

/// The scene as a backend sees it once, before the first step.
pub struct RenderScene<'a> {
    /// Scene name.
    pub name: &'a str,
    /// Seconds per step.
    pub timestep: f64,
    /// Every artifact: name, body ids and names, sensor names (scene order).
    pub artifacts: &'a [ArtifactInfo],
    /// The same artifacts as described: sensors' plugin names and descriptors.
    pub specs: &'a [ArtifactSpec],
}

/// The world after one step, read-only.
pub struct RenderFrame<'a> {
    /// Steps done.
    pub step: u64,
    /// Simulated time (s).
    pub time: f64,
    /// The Environment's clock (the wall clock in production, a virtual one in tests).
    pub now: Duration,
    /// Every body's state, indexed by [`BodyId::index`].
    pub bodies: &'a [BodyState],
    readings: &'a dyn ReadingSource,
}

impl<'a> RenderFrame<'a> {
    /// A frame over `bodies` and `readings`.
    pub fn new(
        step: u64,
        time: f64,
        now: Duration,
        bodies: &'a [BodyState],
        readings: &'a dyn ReadingSource,
    ) -> Self {
        Self {
            step,
            time,
            now,
            bodies,
            readings,
        }
    }
    /// The latest reading of `artifact`'s `sensor`-th sensor ([`Reading::step`] says when it
    /// was taken; 0: never).
    pub fn reading(&self, artifact: ArtifactId, sensor: usize) -> Option<&'a Reading> {
        self.readings.reading(artifact, sensor)
    }
}

/// A visual backend.
pub trait RenderEngine: Send {
    /// Backend name.
    fn name(&self) -> &'static str;
    /// Adds a node; returns its index.
    fn add_node(&mut self, node: RenderNode) -> usize;
    /// Takes the scene, once, after every node was added and before the first step.
    fn start(&mut self, _scene: &RenderScene<'_>) -> Result<(), String> {
        Ok(())
    }
    /// Shows the world as it is after a step. Runs on the stepping thread after the driver
    /// phase: it must not block.
    fn sync(&mut self, frame: &RenderFrame<'_>);
    /// The backend as `Any`, to reach its concrete type (e.g. in tests and tools).
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A backend that draws nothing: headless runs and benchmarks.
#[derive(Debug, Default)]
pub struct NullRenderEngine {
    nodes: Vec<RenderNode>,
    last_synced_step: Option<u64>,
}

impl NullRenderEngine {
    /// The nodes added so far.
    pub fn nodes(&self) -> &[RenderNode] {
        &self.nodes
    }
    /// The last step shown.
    pub fn last_synced_step(&self) -> Option<u64> {
        self.last_synced_step
    }
}

impl RenderEngine for NullRenderEngine {
    fn name(&self) -> &'static str {
        "null"
    }
    fn add_node(&mut self, node: RenderNode) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }
    fn sync(&mut self, frame: &RenderFrame<'_>) {
        self.last_synced_step = Some(frame.step);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
