//! The visual representation, mirrored on the physical tree (SSX's RenderEngine/RenderNode).
//!
//! A backend gets its nodes while the Environment is built, the scene once before the first
//! step ([`RenderEngine::start`]), and a read-only [`RenderFrame`] after every step
//! ([`RenderEngine::sync`], on the stepping thread). `sync` must never block: a backend that
//! draws or writes elsewhere copies what it needs and hands it to its own threads.

use std::sync::Arc;
use std::time::Duration;

use crate::abi::PluginLibrary;
use crate::engine::{BodyId, BodyState, Shape};
use crate::math::Pose;
use crate::plugin::{Reading, ReadingSource};
use crate::spec::ArtifactSpec;
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
    pub specs: &'a [std::sync::Arc<ArtifactSpec>],
    /// The driver and sensor libraries the world opened, by path (a recording keeps their
    /// hashes, so that a replay can tell whether it runs the same builds).
    pub libraries: &'a [Arc<PluginLibrary>],
}

/// A library swapped in while a run keeps its inputs ([`RenderEngine::swapped`]).
pub struct SwappedBuild {
    /// The library as the scene names it.
    pub library: std::path::PathBuf,
    /// The new build, from the switch on.
    pub build: Arc<PluginLibrary>,
    /// The build it replaced.
    pub replaced: Arc<PluginLibrary>,
}

/// What a backend is told after a reset ([`RenderEngine::reset`]).
pub struct RenderReset<'a> {
    /// The world as it is now, at step 0: the same scene name and timestep, the artifacts as
    /// made anew (other bodies when a new seed made a new map).
    pub scene: RenderScene<'a>,
    /// Every visual node of the new world, in place of the ones added before (other ones when
    /// a new seed changed the bodies).
    pub nodes: &'a [RenderNode],
    /// The seed the new world was made with.
    pub seed: u64,
    /// Steps done when the reset came.
    pub steps_before: u64,
    /// Simulated time (s) when the reset came.
    pub time_before: f64,
}

pub use crate::overlay::{
    MAX_OVERLAY_CELLS, MAX_OVERLAY_SHAPES, MAX_OVERLAYS, Overlay, OverlayError, OverlayKind,
    OverlaySource, SHAPE_VALUES, set_overlay, set_shapes,
};

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
    overlays: Option<&'a dyn OverlaySource>,
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
            overlays: None,
        }
    }
    /// The same frame, with the extensions' overlays.
    pub fn with_overlays(mut self, overlays: &'a dyn OverlaySource) -> Self {
        self.overlays = Some(overlays);
        self
    }
    /// Calls `each(extension, overlay)` for every extension's overlay (as of the previous
    /// step's extensions).
    pub fn overlays(&self, each: &mut dyn FnMut(&str, &Overlay)) {
        if let Some(o) = self.overlays {
            o.visit(each);
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
    /// After a reset, before the first step of the new run: the world starts over at step 0,
    /// its simulated time at 0, perhaps with other bodies ([`RenderReset::nodes`]). Called on
    /// the stepping thread for every reset; like `sync`, it must not block. The default does
    /// nothing.
    fn reset(&mut self, _reset: &RenderReset<'_>) {}
    /// Shows the world as it is after a step. Runs on the stepping thread after the driver
    /// phase: it must not block.
    fn sync(&mut self, frame: &RenderFrame<'_>);
    /// Whether it shows or keeps the extensions' overlays ([`RenderFrame::overlays`]); when
    /// not, extensions are told not to draw them (it costs their step).
    fn wants_overlays(&self) -> bool {
        false
    }
    /// Whether it keeps what the extensions answered the plugins at each step (a recording, for
    /// a replay: `crate::tape`); asked once, when the run starts.
    fn wants_answers(&self) -> bool {
        false
    }
    /// What the extensions answered the drivers and sensors in step `step` (only steps with
    /// any, in artifact order), before that step's `sync`; on the stepping thread, so it must
    /// not block. The default drops them.
    fn answers(&mut self, _step: u64, _answers: Vec<crate::tape::Answer>) {}
    /// A library swapped in at the start of step `step`, when the backend keeps the answers
    /// ([`RenderEngine::wants_answers`]): a replay swaps the same build in at the same step.
    /// On the stepping thread, before that step's `answers`: it must not block (the builds'
    /// bytes are read and hashed elsewhere). The default drops it.
    fn swapped(&mut self, _step: u64, _swap: SwappedBuild) {}
    /// The backend as `Any`, to reach its concrete type (e.g. in tests and tools).
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A backend that draws nothing: headless runs and benchmarks.
#[derive(Debug, Default)]
pub struct NullRenderEngine {
    nodes: Vec<RenderNode>,
    /// Nodes are counted, not kept ([`NullRenderEngine::counting`]).
    counting: Option<usize>,
    last_synced_step: Option<u64>,
}

impl NullRenderEngine {
    /// One that counts the nodes it is given but keeps none: a world of a batch, which no one
    /// asks what it looks like (its nodes were 3.5 KiB of a 4-robot world, issue 60).
    pub fn counting() -> Self {
        Self {
            counting: Some(0),
            ..Self::default()
        }
    }
    /// The nodes added so far (none when [`NullRenderEngine::counting`]).
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
        if let Some(n) = &mut self.counting {
            *n += 1;
            return *n - 1;
        }
        self.nodes.push(node);
        self.nodes.len() - 1
    }
    fn reset(&mut self, reset: &RenderReset<'_>) {
        match &mut self.counting {
            Some(n) => *n = reset.nodes.len(),
            None => reset.nodes.clone_into(&mut self.nodes),
        }
        self.last_synced_step = None;
    }
    fn sync(&mut self, frame: &RenderFrame<'_>) {
        self.last_synced_step = Some(frame.step);
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod overlay_tests {
    use super::*;

    #[test]
    fn overlays_are_replaced_by_name_and_bad_ones_are_refused_with_what_is_wrong() {
        let mut list = Vec::new();
        let size = (2, 1, 0.5, [0.0; 3]);
        set_overlay(&mut list, "explored", size, &[1; 8], 1.0).unwrap();
        set_overlay(&mut list, "explored", size, &[2; 8], 2.0).unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(
            (list[0].version, list[0].time, list[0].rgba[0]),
            (2, 2.0, 2)
        );
        let refused = |list: &mut Vec<Overlay>, name: &str, size, len: usize| {
            set_overlay(list, name, size, &vec![0; len], 0.0)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            refused(&mut list, "a b", size, 8),
            "an overlay's name is 1 to 64 letters, digits, '_', '.' or '-'"
        );
        assert_eq!(
            refused(&mut list, "x", (2, 1, 0.5, [0.0; 3]), 7),
            "an overlay of 2 × 1 cells needs 8 bytes of RGBA, got 7"
        );
        assert!(
            refused(&mut list, "x", (0, 1, 0.5, [0.0; 3]), 0).starts_with("an overlay is 1 to")
        );
        assert!(
            refused(&mut list, "x", (1, 1, f64::NAN, [0.0; 3]), 4)
                .starts_with("an overlay is 1 to")
        );
        assert!(
            refused(&mut list, "x", (100_000, 100_000, 1.0, [0.0; 3]), 4)
                .starts_with("an overlay is 1 to")
        );
        for i in 1..MAX_OVERLAYS {
            set_overlay(&mut list, &format!("o{i}"), size, &[0; 8], 0.0).unwrap();
        }
        assert_eq!(
            refused(&mut list, "one-more", size, 8),
            "an extension keeps at most 16 overlays"
        );
        // Shapes replace a grid of the same name; partial shapes and bad colours are refused.
        let one_box = [0.0, 0.0, 0.1, 0.2, 0.2, 0.2];
        set_shapes(&mut list, "o1", OverlayKind::Boxes, &one_box, [1.0; 4], 3.0).unwrap();
        let o1 = list.iter().find(|o| o.name == "o1").unwrap();
        assert_eq!(
            (o1.kind, o1.values.len(), o1.rgba.len()),
            (OverlayKind::Boxes, 6, 0)
        );
        let bad = |values: &[f64], color| {
            set_shapes(
                &mut list.clone(),
                "o1",
                OverlayKind::Lines,
                values,
                color,
                0.0,
            )
            .unwrap_err()
            .to_string()
        };
        assert!(bad(&one_box[..5], [1.0; 4]).contains("(got 5 numbers)"));
        assert!(bad(&[f64::NAN; 6], [1.0; 4]).contains("6 finite numbers"));
        assert!(bad(&one_box, [2.0, 0.0, 0.0, 1.0]).contains("from 0 to 1"));
    }
}
