//! The visual representation, mirrored on the physical tree (SSX's RenderEngine/RenderNode).

use crate::engine::{BodyId, BodyState, Shape};
use crate::math::Pose;

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

/// A visual backend. `sync` runs on the stepping thread after the driver phase.
pub trait RenderEngine: Send {
    /// Backend name.
    fn name(&self) -> &'static str;
    /// Adds a node; returns its index.
    fn add_node(&mut self, node: RenderNode) -> usize;
    /// Shows the world as it is after a step.
    fn sync(&mut self, step: u64, bodies: &[BodyState]);
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
    fn sync(&mut self, step: u64, _bodies: &[BodyState]) {
        self.last_synced_step = Some(step);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
