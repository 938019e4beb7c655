//! The physical representation: the [`PhysicEngine`] trait and the engine-neutral descriptions
//! of bodies, joints and commands that cross it. No physics library is named here.

use crate::math::{Point3, Pose, Vec3};

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

/// A primitive collision shape, in the collider's own frame (z up).
#[derive(Clone, Copy, Debug, PartialEq)]
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
        }
    }

    /// Half extents of its box in its own frame (`None` for a plane, which has no bounds).
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
}

impl BodySpec {
    /// The box around its colliders in its own frame, as (least, greatest) corner; planes
    /// excluded, and `None` when nothing is left.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        self.colliders
            .iter()
            .filter_map(|c| {
                let half = c.shape.half_extents()?;
                let turn = c
                    .local_pose
                    .rotation
                    .to_rotation_matrix()
                    .into_inner()
                    .abs();
                let reach = turn * half;
                let centre = c.local_pose.translation.vector;
                Some((centre - reach, centre + reach))
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
            MassSpec::Explicit { .. } => return Ok(None),
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
    /// Fixed and revolute joints (with limits and motors).
    pub joints: bool,
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
