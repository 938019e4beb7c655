//! The physical representation: the [`PhysicEngine`] trait and the engine-neutral descriptions
//! of bodies, joints and commands that cross it. No physics library is named here.

use crate::math::{Point3, Pose, Vec3};
use std::any::Any;
use std::sync::Arc;

mod route;
pub use route::{JointDrive, route_command};

/// Index of a body in the engine, dense and stable for the engine's life (0, 1, 2, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BodyId(pub u32);

impl BodyId {
    /// The index as usize, for slices of per-body data.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Index of a joint in the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JointId(pub u32);

/// How a body moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyKind {
    /// Moved by forces, contacts and joints.
    Dynamic,
    /// Never moves.
    Static,
    /// Moved by commanded velocities; pushes dynamic bodies, is not pushed.
    Kinematic,
}

/// A triangle mesh in its collider's frame, scaled already: what a robot model's mesh file
/// (STL, COLLADA, OBJ) becomes. Shared by every collider and visual that uses it.
#[derive(Debug, PartialEq)]
pub struct Mesh {
    /// Where it came from (a file's path), for messages and views.
    pub source: String,
    /// Vertices (m).
    pub vertices: Vec<[f32; 3]>,
    /// Triangles as indices into `vertices`, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
}

impl Mesh {
    /// A mesh, checked: at least one triangle, every index in range, every vertex finite.
    pub fn new(
        source: String,
        vertices: Vec<[f32; 3]>,
        triangles: Vec<[u32; 3]>,
    ) -> Result<Mesh, String> {
        if triangles.is_empty() {
            return Err("the mesh has no triangles".into());
        }
        if let Some(v) = vertices.iter().find(|v| v.iter().any(|x| !x.is_finite())) {
            return Err(format!("the mesh has a vertex that is not finite: {v:?}"));
        }
        let n = vertices.len();
        if let Some(t) = triangles
            .iter()
            .find(|t| t.iter().any(|&i| i as usize >= n))
        {
            return Err(format!(
                "triangle {t:?} names a vertex past the mesh's {n} vertices"
            ));
        }
        Ok(Mesh {
            source,
            vertices,
            triangles,
        })
    }

    /// Its box in its own frame, as (least, greatest) corner.
    pub fn bounds(&self) -> (Vec3, Vec3) {
        let mut lo = Vec3::repeat(f64::INFINITY);
        let mut hi = Vec3::repeat(f64::NEG_INFINITY);
        for t in &self.triangles {
            for &i in t {
                let p = self.vertices[i as usize];
                let p = Vec3::new(p[0] as f64, p[1] as f64, p[2] as f64);
                lo = lo.inf(&p);
                hi = hi.sup(&p);
            }
        }
        (lo, hi)
    }

    /// The volume it encloses (m³), by the divergence theorem over its triangles: exact for a
    /// closed mesh, an estimate for an open one.
    pub fn volume(&self) -> f64 {
        let p = |i: u32| {
            let v = self.vertices[i as usize];
            Vec3::new(v[0] as f64, v[1] as f64, v[2] as f64)
        };
        self.triangles
            .iter()
            .map(|t| p(t[0]).dot(&p(t[1]).cross(&p(t[2]))) / 6.0)
            .sum::<f64>()
            .abs()
    }
}

/// How an engine with exact shapes makes a collider of a mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshFit {
    /// The triangles themselves: exact, hollow, best for static bodies (dynamic triangle
    /// meshes collide poorly with each other).
    TriMesh,
    /// The convex hull of its vertices: one convex solid, what a dynamic body wants.
    ConvexHull,
    /// Convex parts found by V-HACD: close to the shape, solid, slower to build.
    ConvexDecomposition,
}

impl MeshFit {
    /// Its name in scene files.
    pub fn name(self) -> &'static str {
        match self {
            MeshFit::TriMesh => "trimesh",
            MeshFit::ConvexHull => "convex_hull",
            MeshFit::ConvexDecomposition => "convex_decomposition",
        }
    }
}

/// A collision shape, in the collider's own frame (z up).
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A box with these half extents.
    Box {
        /// Half extents along x, y, z.
        half_extents: Vec3,
    },
    /// A sphere.
    Sphere {
        /// Radius.
        radius: f64,
    },
    /// A capsule along z: a cylinder of `half_length * 2` capped by hemispheres.
    Capsule {
        /// Radius.
        radius: f64,
        /// Half the length of the cylindrical part.
        half_length: f64,
    },
    /// A cylinder along z.
    Cylinder {
        /// Radius.
        radius: f64,
        /// Half its length.
        half_length: f64,
    },
    /// An infinite plane through the collider's origin with normal +z (the ground).
    Plane,
    /// A triangle mesh, made a collider as `fit` says.
    Mesh {
        /// The triangles.
        mesh: std::sync::Arc<Mesh>,
        /// Exact triangles, convex hull or convex parts.
        fit: MeshFit,
    },
}

impl Shape {
    /// Volume in m³ (infinite for a plane).
    pub fn volume(&self) -> f64 {
        use std::f64::consts::PI;
        match *self {
            Shape::Box { half_extents: h } => 8.0 * h.x * h.y * h.z,
            Shape::Sphere { radius: r } => 4.0 / 3.0 * PI * r.powi(3),
            Shape::Capsule {
                radius: r,
                half_length: l,
            } => PI * r * r * 2.0 * l + 4.0 / 3.0 * PI * r.powi(3),
            Shape::Cylinder {
                radius: r,
                half_length: l,
            } => PI * r * r * 2.0 * l,
            Shape::Plane => f64::INFINITY,
            Shape::Mesh { ref mesh, .. } => mesh.volume(),
        }
    }

    /// Its box in its own frame, as (least, greatest) corner (`None` for a plane).
    pub fn local_bounds(&self) -> Option<(Vec3, Vec3)> {
        match self {
            Shape::Mesh { mesh, .. } => Some(mesh.bounds()),
            _ => self.half_extents().map(|h| (-h, h)),
        }
    }

    /// Half extents of its box about its origin in its own frame (`None` for a plane, which
    /// has no bounds).
    pub fn half_extents(&self) -> Option<Vec3> {
        match *self {
            Shape::Box { half_extents } => Some(half_extents),
            Shape::Sphere { radius: r } => Some(Vec3::repeat(r)),
            Shape::Capsule {
                radius: r,
                half_length: l,
            } => Some(Vec3::new(r, r, l + r)),
            Shape::Cylinder {
                radius: r,
                half_length: l,
            } => Some(Vec3::new(r, r, l)),
            Shape::Plane => None,
            Shape::Mesh { ref mesh, .. } => {
                let (lo, hi) = mesh.bounds();
                Some(lo.abs().sup(&hi.abs()))
            }
        }
    }
}

/// One collider of a body.
#[derive(Clone, Debug, PartialEq)]
pub struct ColliderSpec {
    /// Its shape.
    pub shape: Shape,
    /// Pose relative to the body.
    pub local_pose: Pose,
    /// Coulomb friction coefficient.
    pub friction: f64,
    /// Restitution (bounciness), 0 to 1.
    pub restitution: f64,
}

/// Where a dynamic body's mass comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MassSpec {
    /// Colliders of this density (kg/m³); inertia follows from the shapes.
    Density(f64),
    /// This total mass, spread over the colliders by volume.
    Mass(f64),
    /// Explicit mass and principal inertia (kg·m²) about the body origin's axes.
    Explicit {
        /// Mass in kg.
        mass: f64,
        /// Principal moments of inertia.
        inertia: Vec3,
    },
    /// Mass, centre of mass and principal inertia about axes turned by `frame` (a robot
    /// model's `<inertial>`, diagonalised).
    Inertial {
        /// Mass in kg.
        mass: f64,
        /// Centre of mass in the body frame (m).
        center: Vec3,
        /// Principal moments of inertia about the centre of mass (kg·m²).
        inertia: Vec3,
        /// The principal axes in the body frame.
        frame: crate::math::Rotation,
    },
}

/// Everything an engine needs to create one body.
#[derive(Clone, Debug, PartialEq)]
pub struct BodySpec {
    /// Its kind.
    pub kind: BodyKind,
    /// Its initial pose in the world frame.
    pub pose: Pose,
    /// Its mass (ignored for static and kinematic bodies).
    pub mass: MassSpec,
    /// Its colliders.
    pub colliders: Vec<ColliderSpec>,
    /// Linear velocity damping (1/s).
    pub linear_damping: f64,
    /// Angular velocity damping (1/s).
    pub angular_damping: f64,
    /// Moves in the horizontal plane only: height, roll and pitch are held (a ground robot
    /// simulated in 2.5D, as Stage does; no contact with the floor is needed to stay upright).
    pub planar: bool,
    /// Bodies sharing a non-zero group never touch each other: a robot model's links, which
    /// overlap where they meet (no self-collision, as Gazebo and PyBullet have by default).
    /// 0: touches everything.
    pub group: u32,
}

impl BodySpec {
    /// The box around its colliders in its own frame, as (least, greatest) corner; planes
    /// excluded, and `None` when nothing is left.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        self.colliders
            .iter()
            .filter_map(|c| {
                let (lo, hi) = c.shape.local_bounds()?;
                let half = (hi - lo) / 2.0;
                let turn = c
                    .local_pose
                    .rotation
                    .to_rotation_matrix()
                    .into_inner()
                    .abs();
                let reach = turn * half;
                let centre = c.local_pose * crate::math::Point3::from((lo + hi) / 2.0);
                Some((centre.coords - reach, centre.coords + reach))
            })
            .reduce(|(lo, hi), (l, h)| (lo.inf(&l), hi.sup(&h)))
    }
    /// The volume of its colliders that have one (planes excluded), m³.
    pub fn solid_volume(&self) -> f64 {
        self.colliders
            .iter()
            .map(|c| c.shape.volume())
            .filter(|v| v.is_finite())
            .sum()
    }

    /// The density its colliders get (kg/m³): from `Density`, or `Mass` spread over the solid
    /// volume. `None` for explicit mass properties and for bodies that are not dynamic. A
    /// dynamic body that would have no mass is refused, with the same words on every engine.
    pub fn collider_density(&self) -> Result<Option<f64>, String> {
        if self.kind != BodyKind::Dynamic {
            return Ok(None);
        }
        let solid = self.solid_volume();
        let density = match self.mass {
            MassSpec::Explicit { .. } | MassSpec::Inertial { .. } => return Ok(None),
            MassSpec::Density(d) => d,
            MassSpec::Mass(m) => {
                if solid <= 0.0 {
                    return Err(
                        "'mass' needs at least one collider with a volume (or give 'inertia')"
                            .into(),
                    );
                }
                m / solid
            }
        };
        if density <= 0.0 || solid <= 0.0 {
            return Err("a dynamic body needs a mass: colliders with a volume and a density, or 'mass' with 'inertia'".into());
        }
        Ok(Some(density))
    }
}

/// What a joint allows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointKind {
    /// No relative motion.
    Fixed,
    /// Translation along the x axis of the joint frames (a robot model's prismatic joint).
    Prismatic {
        /// Optional travel limits (m).
        limits: Option<[f64; 2]>,
        /// Optional position motor: stiffness (N/m) and damping (N·s/m).
        motor: Option<[f64; 2]>,
    },
    /// Rotation about the x axis of the joint frames.
    Revolute {
        /// Optional angle limits (radians).
        limits: Option<[f64; 2]>,
        /// Optional position motor: stiffness (N·m/rad) and damping (N·m·s/rad), driving the
        /// joint towards the target its artifact's driver sets.
        motor: Option<[f64; 2]>,
    },
}

/// A joint between two bodies. Each side gives the joint frame in its body's frame; the
/// revolute axis is the x axis of those frames.
#[derive(Clone, Debug, PartialEq)]
pub struct JointSpec {
    /// What it allows.
    pub kind: JointKind,
    /// The parent body.
    pub body1: BodyId,
    /// The child body.
    pub body2: BodyId,
    /// Joint frame in body1's frame.
    pub frame1: Pose,
    /// Joint frame in body2's frame.
    pub frame2: Pose,
    /// Friction-free damping and the effort limit.
    pub dynamics: JointDynamics,
}

/// What resists a joint and bounds what drives it (a robot model's `<dynamics>` and
/// `<limit effort>`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointDynamics {
    /// Viscous damping (N·m·s/rad or N·s/m) while no motor drives the joint.
    pub damping: f64,
    /// The largest effort a motor may apply (N·m or N); infinite when the model gives none.
    pub max_effort: f64,
}

impl Default for JointDynamics {
    fn default() -> Self {
        Self {
            damping: 0.0,
            max_effort: f64::INFINITY,
        }
    }
}

impl JointKind {
    /// Whether the joint moves at all (a revolute or prismatic joint).
    pub fn movable(&self) -> bool {
        !matches!(self, JointKind::Fixed)
    }
    /// Its limits, if it has any.
    pub fn limits(&self) -> Option<[f64; 2]> {
        match *self {
            JointKind::Fixed => None,
            JointKind::Prismatic { limits, .. } | JointKind::Revolute { limits, .. } => limits,
        }
    }
    /// Its motor's stiffness and damping, if it has one.
    pub fn motor(&self) -> Option<[f64; 2]> {
        match *self {
            JointKind::Fixed => None,
            JointKind::Prismatic { motor, .. } | JointKind::Revolute { motor, .. } => motor,
        }
    }
}

/// Where a joint stands: the angle (rad) of a revolute joint or the travel (m) of a prismatic
/// one, from the pose it was built in, and how fast it changes. Fixed joints read 0.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointReading {
    /// Angle in (−π, π] or travel.
    pub position: f64,
    /// Angular (rad/s) or linear (m/s) rate.
    pub velocity: f64,
}

/// A joint's position and rate from the states of its two bodies: the same on every engine.
/// The revolute angle is the twist about the joint axis of the child's joint frame relative
/// to the parent's; the prismatic travel is along the parent frame's axis.
pub fn joint_reading(spec: &JointSpec, s1: &BodyState, s2: &BodyState) -> JointReading {
    let f1 = s1.pose * spec.frame1;
    let f2 = s2.pose * spec.frame2;
    let axis = f1.rotation * Vec3::x();
    match spec.kind {
        JointKind::Fixed => JointReading::default(),
        JointKind::Revolute { .. } => {
            let q = (f1.rotation.inverse() * f2.rotation).into_inner();
            let mut angle = 2.0 * q.i.atan2(q.w);
            if angle > std::f64::consts::PI {
                angle -= std::f64::consts::TAU;
            } else if angle <= -std::f64::consts::PI {
                angle += std::f64::consts::TAU;
            }
            JointReading {
                position: angle,
                velocity: (s2.angvel - s1.angvel).dot(&axis),
            }
        }
        JointKind::Prismatic { .. } => {
            let (p1, p2) = (f1.translation.vector, f2.translation.vector);
            let at = |s: &BodyState, p: Vec3| {
                s.linvel + s.angvel.cross(&(p - s.pose.translation.vector))
            };
            let d = p2 - p1;
            JointReading {
                position: d.dot(&axis),
                velocity: (at(s2, p2) - at(s1, p1)).dot(&axis) + d.dot(&s1.angvel.cross(&axis)),
            }
        }
    }
}

/// Pose and velocity of a body after a step. Velocities are in the world frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyState {
    /// Pose in the world frame.
    pub pose: Pose,
    /// Linear velocity of the body origin (m/s).
    pub linvel: Vec3,
    /// Angular velocity (rad/s).
    pub angvel: Vec3,
}

impl Default for BodyState {
    fn default() -> Self {
        Self {
            pose: Pose::identity(),
            linvel: Vec3::zeros(),
            angvel: Vec3::zeros(),
        }
    }
}

/// A command for one body, queued by a driver in step N and applied before step N+1.
/// Forces and torques act for exactly one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BodyCommand {
    /// A force (world frame, N) at the centre of mass.
    Force {
        /// Body.
        body: BodyId,
        /// Force.
        force: Vec3,
    },
    /// A force (world frame) at a point (world frame); it adds the matching torque.
    ForceAtPoint {
        /// Body.
        body: BodyId,
        /// Force.
        force: Vec3,
        /// Point of application.
        point: Point3,
    },
    /// A torque (world frame, N·m).
    Torque {
        /// Body.
        body: BodyId,
        /// Torque.
        torque: Vec3,
    },
    /// Set the velocity of a kinematic body (world frame).
    Velocity {
        /// Body.
        body: BodyId,
        /// Linear velocity.
        linear: Vec3,
        /// Angular velocity.
        angular: Vec3,
    },
    /// Drive a motorised revolute joint towards an angle (rad) and angular velocity (rad/s).
    /// The target holds until the next one.
    JointTarget {
        /// Joint.
        joint: JointId,
        /// Target angle.
        position: f64,
        /// Target angular velocity.
        velocity: f64,
    },
    /// Drive a revolute or prismatic joint with these gains towards a position and rate:
    /// stiffness 0 drives the rate alone (a velocity command). The motor holds until the next
    /// command; its effort is bounded by the joint's [`JointDynamics::max_effort`].
    JointMotor {
        /// Joint.
        joint: JointId,
        /// Target position (rad or m).
        position: f64,
        /// Target rate (rad/s or m/s).
        velocity: f64,
        /// Stiffness (N·m/rad or N/m).
        stiffness: f64,
        /// Damping (N·m·s/rad or N·s/m).
        damping: f64,
    },
    /// An effort on a revolute (torque, N·m) or prismatic (force, N) joint for one step: the
    /// child is pushed along the joint axis and the parent back.
    JointEffort {
        /// Joint.
        joint: JointId,
        /// Torque or force, bounded by the joint's [`JointDynamics::max_effort`].
        effort: f64,
    },
    /// Attach the dynamic `body` to `carrier` at `offset` (its pose in the carrier's frame), or
    /// move it there when it is attached already. The Environment hands it to
    /// [`PhysicEngine::attach`], not to [`PhysicEngine::apply`].
    Attach {
        /// The body held.
        body: BodyId,
        /// The body holding it.
        carrier: BodyId,
        /// Where it is held.
        offset: Pose,
    },
    /// Release an attached body ([`PhysicEngine::detach`], not [`PhysicEngine::apply`]).
    Detach {
        /// The body released.
        body: BodyId,
    },
}

/// The first thing a ray hits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// The body hit.
    pub body: BodyId,
    /// Distance from the origin along the (normalised) direction.
    pub distance: f64,
    /// Surface normal at the hit (world frame).
    pub normal: Vec3,
}

/// One body touching another, after a step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// The other body.
    pub other: BodyId,
    /// The mean of the touching points (world frame).
    pub point: Point3,
    /// The contact force on this body (world frame, N): the solver's normal impulses over the
    /// step divided by the step length.
    pub force: Vec3,
}

/// The engine a scene gets when it names none.
pub const DEFAULT_ENGINE: &str = "rapier";

/// What an engine is created with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EngineConfig {
    /// Gravity (m/s², world frame).
    pub gravity: Vec3,
    /// The step length the Environment will use (s); engines may size tolerances by it.
    pub timestep: f64,
}

/// What an engine models. Scenes, tools and the conformance tests ask rather than assume;
/// docs/engines.md explains each in words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Fixed, revolute and prismatic joints (with limits, motors, damping and efforts).
    pub joints: bool,
    /// Triangle meshes as colliders, as they are (with [`Capabilities::exact_shapes`]) or as
    /// the footprint of their box (without).
    pub meshes: bool,
    /// Contacts are solved: bodies push each other, bounce and rub. Without it, a move into
    /// another body is refused (the body stalls, as in Stage) and falling bodies rest on what
    /// is under them.
    pub contact_dynamics: bool,
    /// Friction and restitution of colliders act.
    pub friction: bool,
    /// Queries and collisions use the exact 3D shapes. Without it, every collider is its
    /// footprint in the plane extruded over its height (Stage's 2.5D world).
    pub exact_shapes: bool,
    /// A dynamic body can be attached to another at run time and released again
    /// ([`PhysicEngine::attach`]): what a gripper needs.
    pub attach: bool,
    /// Bodies have heights: gravity along z pulls them onto the floor and onto each other,
    /// rays pass over what is lower, and bodies meet only where their heights overlap. Without
    /// it (the planar engine) the world is a plane: every body its outline through all
    /// heights, gravity in the plane, the floor implicit.
    pub heights: bool,
}

/// The physical representation of the world (SSX's PhysicEngine).
///
/// The Environment is its only mutator: it builds the world, applies commands and steps it on
/// the stepping thread. During the sensor and driver phases worker threads call the `&self`
/// queries concurrently, so an engine must be `Sync` and its queries free of interior mutation.
/// Queries answer for the world as of the last [`PhysicEngine::step`] (before the first step an
/// engine may answer from an empty index).
pub trait PhysicEngine: Send + Sync {
    /// The engine's name, as scenes select it (`"rapier"`).
    fn name(&self) -> &'static str;
    /// What it models.
    fn capabilities(&self) -> Capabilities;
    /// Creates a body. Ids are handed out densely in creation order.
    fn add_body(&mut self, spec: &BodySpec) -> Result<BodyId, String>;
    /// Creates a joint between two existing bodies. Ids are handed out densely in creation
    /// order.
    fn add_joint(&mut self, spec: &JointSpec) -> Result<JointId, String>;
    /// Mass of a body (kg); 0 for static and kinematic bodies.
    fn body_mass(&self, body: BodyId) -> f64;
    /// Principal moments of inertia of a body (kg·m²); zero for static and kinematic bodies.
    fn body_inertia(&self, body: BodyId) -> Vec3;
    /// Queues a command for the next [`PhysicEngine::step`] (all but `Attach` and `Detach`).
    fn apply(&mut self, command: &BodyCommand);
    /// Advances the world by `dt` seconds.
    fn step(&mut self, dt: f64);
    /// Whether [`PhysicEngine::step_on`] runs on threads of the engine's own (Rapier built with
    /// `rapier-parallel`): then the Environment's idle workers park through the physics instead
    /// of spinning, which would take the cores those threads need.
    fn own_threads(&self) -> bool {
        false
    }
    /// Hints the cache to fetch what the next [`PhysicEngine::step_on`] reads first (see
    /// [`crate::prefetch`]): a batch of worlds calls it on the next world while it steps one.
    /// A hint: it changes nothing; by default it does nothing.
    fn prefetch(&self) {}
    /// [`PhysicEngine::step`], with the Environment's worker threads to share the work on. The
    /// result must not depend on how many workers `par` has (bit for bit). By default the
    /// engine steps on the calling thread alone.
    fn step_on(&mut self, dt: f64, par: &dyn crate::parallel::Parallel) {
        let _ = par;
        self.step(dt);
    }
    /// Writes the state of every body into `out[body.index()]`; `out` has one slot per body.
    fn read_state(&self, out: &mut [BodyState]);
    /// Brings `out` up to date after a step. `out` holds what [`PhysicEngine::read_state`] wrote
    /// for this engine (every body, and the updates since): the engine may leave the slots of
    /// bodies whose state cannot have changed (a static body's), and may share the copy among
    /// `par`'s workers (the same values whatever the workers). By default
    /// [`PhysicEngine::read_state`] on the calling thread.
    fn update_state_on(&self, out: &mut [BodyState], par: &dyn crate::parallel::Parallel) {
        let _ = par;
        self.read_state(out);
    }
    /// The first body a ray from `origin` along `direction` hits within `max_distance`,
    /// ignoring the bodies for which `exclude` returns true.
    fn cast_ray(
        &self,
        origin: Point3,
        direction: Vec3,
        max_distance: f64,
        exclude: &dyn Fn(BodyId) -> bool,
    ) -> Option<RayHit>;
    /// [`PhysicEngine::cast_ray`] for each of `directions` from one `origin`, into
    /// `out[i]` (`out` is as long as `directions`). Engines may share the work of a batch (a
    /// camera's rays); by default each ray is cast alone.
    fn cast_rays(
        &self,
        origin: Point3,
        directions: &[Vec3],
        max_distance: f64,
        exclude: &dyn Fn(BodyId) -> bool,
        out: &mut [Option<RayHit>],
    ) {
        for (d, slot) in directions.iter().zip(out.iter_mut()) {
            *slot = self.cast_ray(origin, *d, max_distance, exclude);
        }
    }
    /// Appends to `out` every body with a collider within `radius` of `center`, once each, in
    /// ascending id order.
    fn bodies_within(&self, center: Point3, radius: f64, out: &mut Vec<BodyId>);
    /// Appends to `out` one entry per body touching `body` after the last step.
    fn contacts(&self, body: BodyId, out: &mut Vec<Contact>);
    /// Attaches the dynamic `body` to `carrier`: from the next step on it is held at `offset`
    /// (its pose in the carrier's frame) and moves with the carrier; it touches the carrier no
    /// more, and meets the rest of the world as part of it. Attaching an attached body again
    /// moves it to the new offset (a gripper lifting what it holds). Engines without
    /// [`Capabilities::attach`] refuse.
    fn attach(&mut self, body: BodyId, carrier: BodyId, offset: Pose) -> Result<(), String> {
        let _ = (body, carrier, offset);
        Err(format!("engine '{}' cannot attach bodies", self.name()))
    }
    /// Releases an attached body: from the next step it moves on its own again (and falls;
    /// engines without contact dynamics drop it straight down, with no glide). Nothing happens
    /// to a body that is not attached.
    fn detach(&mut self, body: BodyId) {
        let _ = body;
    }
    /// The body carrying `body` and where (its pose in the carrier's frame), if it is attached.
    fn attachment(&self, body: BodyId) -> Option<(BodyId, Pose)> {
        let _ = body;
        None
    }
    /// What of this world the engine could hold as one copy with other worlds built from the
    /// same scene (the worlds of a batch): the kinematic engine's static bodies. `None`: nothing.
    fn commons(&self) -> Option<Arc<dyn Any + Send + Sync>> {
        None
    }
    /// Holds `part` (another engine's [`PhysicEngine::commons`]) in place of its own copy where
    /// the two are equal, so that the world steps exactly as before; whether it holds it now.
    fn share(&mut self, part: &Arc<dyn Any + Send + Sync>) -> bool {
        let _ = part;
        false
    }
}

/// The checks every engine makes of an [`PhysicEngine::attach`], in its words.
pub fn check_attach(
    body: BodyId,
    carrier: BodyId,
    kind_of: impl Fn(BodyId) -> Option<BodyKind>,
    offset: &Pose,
) -> Result<(), String> {
    if body == carrier {
        return Err(format!("body {} cannot carry itself", body.0));
    }
    match (kind_of(body), kind_of(carrier)) {
        (None, _) => Err(format!("no body {}", body.0)),
        (_, None) => Err(format!("no body {}", carrier.0)),
        (Some(k), _) if k != BodyKind::Dynamic => Err(format!(
            "body {} is {k:?}: only a dynamic body can be attached",
            body.0
        )),
        _ if !(offset.translation.vector.iter().all(|v| v.is_finite())
            && offset.rotation.coords.iter().all(|v| v.is_finite())) =>
        {
            Err("the offset is not finite".into())
        }
        _ => Ok(()),
    }
}
