//! The read-only view of the world that sensors and drivers get during their phases.

use std::collections::HashMap;
use std::ops::Range;

use crate::engine::{BodyId, BodyKind, BodyState, Contact, PhysicEngine, RayHit};
use crate::math::{Point3, Vec3};

/// Index of an artifact in the scene, in scene order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ArtifactId(pub u32);

impl ArtifactId {
    /// The index as usize.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What the world knows of an artifact that never changes while it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct ArtifactInfo {
    /// Unique name in the scene.
    pub name: String,
    /// Its bodies: a contiguous range of body ids, in the order of its description file.
    pub bodies: Range<u32>,
    /// Names of its bodies, in the same order.
    pub body_names: Vec<String>,
    /// Names of its sensors, in description order.
    pub sensor_names: Vec<String>,
    /// Its joints: a contiguous range of joint ids (declared joints first, then implicit welds).
    pub joints: Range<u32>,
    /// Names of its joints, in the same order.
    pub joint_names: Vec<String>,
    /// Its robot model as JSON (`{"urdf": ..., "links": [...]}`), if it came from a model
    /// file (see [`crate::environment::RobotModel`]).
    pub robot_model: Option<std::sync::Arc<str>>,
}

impl ArtifactInfo {
    /// The id of its `local`-th body.
    pub fn body(&self, local: usize) -> Option<BodyId> {
        let id = self.bodies.start.checked_add(u32::try_from(local).ok()?)?;
        (id < self.bodies.end).then_some(BodyId(id))
    }
    /// The local index of one of its bodies by name.
    pub fn body_index(&self, name: &str) -> Option<usize> {
        self.body_names.iter().position(|n| n == name)
    }
    /// The local index of one of its joints by name.
    pub fn joint_index(&self, name: &str) -> Option<usize> {
        self.joint_names.iter().position(|n| n == name)
    }
    /// The index of one of its sensors by name.
    pub fn sensor_index(&self, name: &str) -> Option<usize> {
        self.sensor_names.iter().position(|n| n == name)
    }
}

/// The scene's map as cells (an image, a map_server YAML, a generated cave or building): what
/// became its static walls.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MapGrid {
    /// Cells per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Metres per cell.
    pub resolution: f64,
    /// The world pose of cell (0, 0)'s outer corner: x, y (m), yaw (rad).
    pub origin: [f64; 3],
    /// `width × height` cells, row 0 at the origin, rows going +y: 1 wall, 0 free.
    pub cells: Vec<u8>,
}

/// Rays in a piece of a batch that the pool's waiting workers may take (a camera's 16,384-ray
/// calls make 64); batches under two pieces are cast by the caller alone.
const SHARED_RAYS: usize = 256;

/// The colour of a body without visuals (RGBA).
pub const DEFAULT_BODY_COLOR: [f32; 4] = [0.7, 0.7, 0.7, 1.0];

/// Static facts about every artifact and body, built once with the world.
#[derive(Debug, Default, PartialEq)]
pub struct Catalog {
    pub(crate) artifacts: Vec<ArtifactInfo>,
    pub(crate) by_name: HashMap<String, ArtifactId>,
    pub(crate) body_artifact: Vec<ArtifactId>,
    /// Each body's index within its artifact (kept apart from `artifacts` so that naming a ray's
    /// or a contact's body reads 4 bytes, not another artifact's record).
    pub(crate) body_local: Vec<u32>,
    pub(crate) body_mass: Vec<f64>,
    pub(crate) body_inertia: Vec<Vec3>,
    pub(crate) body_kind: Vec<BodyKind>,
    /// Each body's box in its own frame (least, greatest corner); `None`: no bounded collider.
    pub(crate) body_bounds: Vec<Option<(Vec3, Vec3)>>,
    /// Each body's colour (RGBA): its first visual's, else [`DEFAULT_BODY_COLOR`].
    pub(crate) body_color: Vec<[f32; 4]>,
    /// Per joint id: what it is and which bodies it links.
    pub(crate) joints: Vec<crate::engine::JointSpec>,
    /// The scene's map, if it has one.
    pub(crate) map: Option<std::sync::Arc<MapGrid>>,
}

/// The world as sensors and drivers see it during a step: the state after this step's physics,
/// the engine's queries, and the scene's static facts. Shared by all workers, read-only.
pub struct World<'a> {
    pub(crate) engine: &'a dyn PhysicEngine,
    pub(crate) catalog: &'a Catalog,
    pub(crate) states: &'a [BodyState],
    /// The run's extensions (see [`ExtensionDirectory`]).
    pub(crate) extensions: &'a dyn ExtensionDirectory,
    /// Simulated time after this step's physics (s).
    pub time: f64,
    /// Physics steps completed, this one included.
    pub step: u64,
    /// The timestep (s).
    pub dt: f64,
    /// Gravity (m/s²).
    pub gravity: Vec3,
}

impl<'a> World<'a> {
    /// The scene's map, if it has one.
    pub fn map(&self) -> Option<&MapGrid> {
        self.catalog.map.as_deref()
    }
    /// State of a body.
    pub fn body(&self, id: BodyId) -> &BodyState {
        &self.states[id.index()]
    }
    /// All body states, indexed by [`BodyId::index`].
    pub fn bodies(&self) -> &'a [BodyState] {
        self.states
    }
    /// Mass of a body (0 for static and kinematic bodies).
    pub fn mass(&self, id: BodyId) -> f64 {
        self.catalog.body_mass[id.index()]
    }
    /// Principal moments of inertia of a body (kg·m²; zero for static and kinematic bodies).
    pub fn inertia(&self, id: BodyId) -> Vec3 {
        self.catalog.body_inertia[id.index()]
    }
    /// The box around a body's colliders in its own frame, as (least, greatest) corner; `None`
    /// when it has no collider with bounds (a plane, or none).
    pub fn bounds(&self, id: BodyId) -> Option<(Vec3, Vec3)> {
        self.catalog.body_bounds[id.index()]
    }
    /// The colour a body is drawn in (RGBA 0 to 1): its first visual's, else
    /// [`DEFAULT_BODY_COLOR`].
    pub fn color(&self, id: BodyId) -> [f32; 4] {
        self.catalog.body_color[id.index()]
    }
    /// The body carrying `id` and its pose in the carrier's frame, if it is attached (as of
    /// this step's physics).
    pub fn attachment(&self, id: BodyId) -> Option<(BodyId, crate::math::Pose)> {
        self.engine.attachment(id)
    }
    /// A joint's kind, bodies and frames.
    pub fn joint(&self, id: crate::engine::JointId) -> Option<&'a crate::engine::JointSpec> {
        self.catalog.joints.get(id.0 as usize)
    }
    /// Where a joint stands after this step's physics (see [`crate::engine::joint_reading`]).
    pub fn joint_reading(&self, id: crate::engine::JointId) -> Option<crate::engine::JointReading> {
        let spec = self.joint(id)?;
        Some(crate::engine::joint_reading(
            spec,
            &self.states[spec.body1.index()],
            &self.states[spec.body2.index()],
        ))
    }
    /// Kind of a body.
    pub fn kind(&self, id: BodyId) -> BodyKind {
        self.catalog.body_kind[id.index()]
    }
    /// The artifact a body belongs to.
    pub fn owner(&self, id: BodyId) -> ArtifactId {
        self.catalog.body_artifact[id.index()]
    }
    /// A body's index within its artifact ([`World::owner`]'s bodies).
    pub fn local_index(&self, id: BodyId) -> u32 {
        self.catalog.body_local[id.index()]
    }
    /// Number of artifacts.
    pub fn artifact_count(&self) -> usize {
        self.catalog.artifacts.len()
    }
    /// Static facts about an artifact.
    pub fn artifact(&self, id: ArtifactId) -> &'a ArtifactInfo {
        &self.catalog.artifacts[id.index()]
    }
    /// Looks an artifact up by name.
    pub fn artifact_by_name(&self, name: &str) -> Option<ArtifactId> {
        self.catalog.by_name.get(name).copied()
    }
    /// Casts rays from one origin, one hit (or none) per direction into `out`, as
    /// [`World::cast_ray`] casts each.
    pub fn cast_rays(
        &self,
        origin: Point3,
        directions: &[Vec3],
        max_distance: f64,
        ignore: Option<ArtifactId>,
        out: &mut [Option<RayHit>],
    ) {
        let catalog = self.catalog;
        let exclude = |b: BodyId| Some(catalog.body_artifact[b.index()]) == ignore;
        if directions.len() < 2 * SHARED_RAYS {
            self.engine
                .cast_rays(origin, directions, max_distance, &exclude, out);
            return;
        }
        // A camera's batch: pieces the pool's waiting workers may take (help.rs). Each ray's
        // hit is the same whoever casts it.
        crate::help::share_chunks_mut(out, SHARED_RAYS, &|i, piece| {
            let from = i * SHARED_RAYS;
            let dirs = &directions[from..from + piece.len()];
            self.engine
                .cast_rays(origin, dirs, max_distance, &exclude, piece);
        });
    }
    /// Casts a ray; bodies of `ignore` (e.g. the caller's own artifact) are not hit.
    pub fn cast_ray(
        &self,
        origin: Point3,
        direction: Vec3,
        max_distance: f64,
        ignore: Option<ArtifactId>,
    ) -> Option<RayHit> {
        let catalog = self.catalog;
        let exclude = |b: BodyId| Some(catalog.body_artifact[b.index()]) == ignore;
        self.engine
            .cast_ray(origin, direction, max_distance, &exclude)
    }
    /// Appends every body with a collider within `radius` of `center`, in id order.
    pub fn bodies_within(&self, center: Point3, radius: f64, out: &mut Vec<BodyId>) {
        self.engine.bodies_within(center, radius, out);
    }
    /// Appends one entry per body touching `body` after this step's physics.
    pub fn contacts(&self, body: BodyId, out: &mut Vec<Contact>) {
        self.engine.contacts(body, out);
    }
}

/// The run's extensions as the world lists them, without naming their trait: that lives in
/// `plugin`, whose contexts hold a [`World`], and naming it here would make the two modules
/// depend on each other. `plugin` adds the typed accessors (`World::extension` and friends).
pub trait ExtensionDirectory: Sync {
    /// The index of the extension named `name` (scene order).
    fn position(&self, name: &str) -> Option<usize>;
    /// The extension at `index`, as the `Box<dyn SimulationExtension>` the Environment holds.
    fn entry(&self, index: usize) -> Option<&dyn std::any::Any>;
    /// What the crash handler and the watchdog call the extension at `index`.
    fn label(&self, index: usize) -> Option<&'static crate::guard::Label>;
    /// The name of the extension at `index`.
    fn name(&self, _index: usize) -> Option<&str> {
        None
    }
    /// What the extensions answered the plugins, recorded or replayed (`crate::tape`).
    fn tape(&self) -> Option<&crate::tape::Tape> {
        None
    }
}

/// No extensions (the world seen while extensions are being stepped themselves).
pub(crate) struct NoExtensions;

impl ExtensionDirectory for NoExtensions {
    fn position(&self, _: &str) -> Option<usize> {
        None
    }
    fn entry(&self, _: usize) -> Option<&dyn std::any::Any> {
        None
    }
    fn label(&self, _: usize) -> Option<&'static crate::guard::Label> {
        None
    }
}
