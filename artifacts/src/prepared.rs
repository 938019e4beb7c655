//! What an artifact file (JSON or a robot model) becomes before it is instanced: read by the
//! loader and the model reader alike, so it lives below both.

use std::rc::Rc;

use ssx_core::environment::{ArtifactJoint, ArtifactVisual};
use ssx_core::{BodySpec, PluginSpec, SensorSpec};

use crate::source::Source;

/// An artifact description file, checked and resolved in its own frame, ready to instance.
pub(crate) struct Prepared {
    pub(crate) src: Rc<Source>,
    pub(crate) bodies: Vec<(String, BodySpec)>,
    pub(crate) joints: Vec<ArtifactJoint>,
    pub(crate) visuals: Vec<ArtifactVisual>,
    pub(crate) driver: Option<PluginSpec>,
    pub(crate) sensors: Vec<SensorSpec>,
    /// What its robot model file says of its links, if it came from one.
    pub(crate) model: Option<std::sync::Arc<ssx_core::environment::RobotModel>>,
}
