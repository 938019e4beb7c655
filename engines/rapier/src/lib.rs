//! The Rapier backend of ssx's [`PhysicEngine`]: the only crate that names Rapier types.
//!
//! Rapier works in f32 with glam types; ssx works in f64 nalgebra. Conversions happen here and
//! nowhere else. The world is z-up.
#![warn(missing_docs)]

use std::collections::HashMap;

use rapier3d::math::{Pose as RPose, Rot3, Vec3 as RVec};
use rapier3d::prelude::*;
use ssx_core::engine::{
    BodyCommand, BodyId, BodyKind, BodySpec, BodyState, Capabilities, Contact, EngineConfig,
    JointId, JointKind, JointSpec, MassSpec, PhysicEngine, RayHit, Shape,
};
use ssx_core::math::{Point3, Pose, Rotation, Vec3};

fn v(x: &Vec3) -> RVec {
    RVec::new(x.x as f32, x.y as f32, x.z as f32)
}

fn pose(p: &Pose) -> RPose {
    let q = p.rotation.quaternion();
    RPose::from_parts(
        v(&p.translation.vector),
        Rot3::from_xyzw(q.i as f32, q.j as f32, q.k as f32, q.w as f32).normalize(),
    )
}

fn back_v(x: RVec) -> Vec3 {
    Vec3::new(x.x as f64, x.y as f64, x.z as f64)
}

fn back_pose(p: &RPose) -> Pose {
    let r = p.rotation;
    Pose::from_parts(
        ssx_core::math::nalgebra::Translation3::from(back_v(p.translation)),
        Rotation::new_normalize(ssx_core::math::nalgebra::Quaternion::new(
            r.w as f64, r.x as f64, r.y as f64, r.z as f64,
        )),
    )
}

/// A [`PhysicEngine`] on rapier3d.
pub struct RapierEngine {
    world: PhysicsWorld,
    handles: Vec<RigidBodyHandle>,
    /// Bodies that received forces or torques this step; cleared after it so that a command
    /// acts for exactly one step.
    forced: Vec<RigidBodyHandle>,
    /// One shared shape per distinct shape: a swarm of identical robots points at one
    /// allocation instead of thousands scattered over the heap (which made stepping 10,000
    /// bodies built from a scene 1.7x slower than the same bodies built in a tight loop).
    shapes: HashMap<[u64; 4], SharedShape>,
    /// Joints in creation order (the index is the JointId), with their motor gains if any.
    joints: Vec<(ImpulseJointHandle, Option<[f64; 2]>)>,
    /// Ground planes. Only a dynamic body that is not planar can touch one, so a plane joins
    /// Rapier's world when the first such body does; until then rays and radius queries meet it
    /// here, in closed form. (A half-space in Rapier's BVH has an unbounded box: every ray and
    /// every pair test of a ground swarm met it.)
    planes: Vec<Plane>,
    /// Whether the planes are in Rapier's world.
    planes_in_world: bool,
}

/// A ground plane kept out of Rapier's world until a body can touch it.
struct Plane {
    body: BodyId,
    handle: RigidBodyHandle,
    collider: Option<ColliderBuilder>,
    /// A point on it and its normal, world frame.
    point: Vec3,
    normal: Vec3,
}

/// Collision groups: planes are in group 2; planar bodies (held in height) never touch them.
const PLANES: Group = Group::GROUP_2;

fn groups(planar: bool, plane: bool) -> InteractionGroups {
    let (member, filter) = match (planar, plane) {
        (_, true) => (PLANES, Group::ALL),
        (true, false) => (Group::GROUP_1, Group::ALL.difference(PLANES)),
        (false, false) => (Group::GROUP_1, Group::ALL),
    };
    InteractionGroups::new(member, filter, InteractionTestMode::And)
}

impl RapierEngine {
    /// An empty world.
    pub fn new(config: &EngineConfig) -> Self {
        let mut world = PhysicsWorld::new();
        world.gravity = v(&config.gravity);
        world.integration_parameters.dt = config.timestep as f32;
        Self {
            world,
            handles: Vec::new(),
            forced: Vec::new(),
            shapes: HashMap::new(),
            joints: Vec::new(),
            planes: Vec::new(),
            planes_in_world: false,
        }
    }

    fn shape(&mut self, shape: &Shape) -> (SharedShape, RPose) {
        let key = match *shape {
            Shape::Box { half_extents: h } => [0, h.x.to_bits(), h.y.to_bits(), h.z.to_bits()],
            Shape::Sphere { radius } => [1, radius.to_bits(), 0, 0],
            Shape::Capsule {
                radius,
                half_length,
            } => [2, radius.to_bits(), half_length.to_bits(), 0],
            Shape::Cylinder {
                radius,
                half_length,
            } => [3, radius.to_bits(), half_length.to_bits(), 0],
            Shape::Plane => [4, 0, 0, 0],
        };
        let (new, local) = Self::make_shape(shape);
        let shared = self.shapes.entry(key).or_insert(new).clone();
        (shared, local)
    }

    fn make_shape(shape: &Shape) -> (SharedShape, RPose) {
        let f = |x: f64| x as f32;
        match *shape {
            Shape::Box { half_extents: h } => {
                (SharedShape::cuboid(f(h.x), f(h.y), f(h.z)), RPose::IDENTITY)
            }
            Shape::Sphere { radius } => (SharedShape::ball(f(radius)), RPose::IDENTITY),
            Shape::Capsule {
                radius,
                half_length,
            } => (
                SharedShape::capsule_z(f(half_length), f(radius)),
                RPose::IDENTITY,
            ),
            // Rapier's cylinder runs along y; turn it onto z.
            Shape::Cylinder {
                radius,
                half_length,
            } => (
                SharedShape::cylinder(f(half_length), f(radius)),
                RPose::from_rotation(Rot3::from_rotation_x(std::f32::consts::FRAC_PI_2)),
            ),
            Shape::Plane => (SharedShape::halfspace(RVec::Z), RPose::IDENTITY),
        }
    }

    /// Puts the ground planes into Rapier's world (once a body that can touch them exists).
    fn planes_into_world(&mut self) {
        if self.planes_in_world {
            return;
        }
        self.planes_in_world = true;
        for p in &mut self.planes {
            if let Some(c) = p.collider.take() {
                self.world
                    .colliders
                    .insert_with_parent(c, p.handle, &mut self.world.bodies);
            }
        }
    }

    /// The planes still outside Rapier's world.
    fn loose_planes(&self) -> &[Plane] {
        if self.planes_in_world {
            &[]
        } else {
            &self.planes
        }
    }

    fn body(&self, id: BodyId) -> Option<&RigidBody> {
        self.handles.get(id.index()).map(|h| &self.world.bodies[*h])
    }
}

impl PhysicEngine for RapierEngine {
    fn name(&self) -> &'static str {
        "rapier"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            joints: true,
            contact_dynamics: true,
            friction: true,
            exact_shapes: true,
        }
    }

    fn add_body(&mut self, spec: &BodySpec) -> Result<BodyId, String> {
        let builder = match spec.kind {
            BodyKind::Dynamic => RigidBodyBuilder::dynamic(),
            BodyKind::Static => RigidBodyBuilder::fixed(),
            BodyKind::Kinematic => RigidBodyBuilder::kinematic_velocity_based(),
        };
        let mut builder = builder
            .pose(pose(&spec.pose))
            .linear_damping(spec.linear_damping as f32)
            .angular_damping(spec.angular_damping as f32)
            .user_data(self.handles.len() as u128);
        if spec.planar {
            builder = builder
                .enabled_translations(true, true, false)
                .enabled_rotations(false, false, true);
        }
        let density = spec.collider_density()?.unwrap_or(0.0);
        if let (BodyKind::Dynamic, MassSpec::Explicit { mass, inertia }) = (spec.kind, spec.mass) {
            builder = builder.additional_mass_properties(MassProperties::new(
                RVec::ZERO,
                mass as f32,
                v(&inertia),
            ));
        }
        let handle = self.world.bodies.insert(builder);
        let id = BodyId(self.handles.len() as u32);
        if spec.kind == BodyKind::Dynamic && !spec.planar {
            self.planes_into_world();
        }
        for c in &spec.colliders {
            let (shape, shape_pose) = self.shape(&c.shape);
            let is_plane = matches!(c.shape, Shape::Plane);
            let collider = ColliderBuilder::new(shape)
                .position(pose(&c.local_pose) * shape_pose)
                .friction(c.friction as f32)
                .restitution(c.restitution as f32)
                .density(if is_plane { 0.0 } else { density as f32 })
                .collision_groups(groups(spec.planar, is_plane))
                .user_data(id.0 as u128);
            if is_plane && !self.planes_in_world {
                let at = spec.pose * c.local_pose;
                self.planes.push(Plane {
                    body: id,
                    handle,
                    collider: Some(collider),
                    point: at.translation.vector,
                    normal: at.rotation * Vec3::z(),
                });
                continue;
            }
            self.world
                .colliders
                .insert_with_parent(collider, handle, &mut self.world.bodies);
        }
        // Mass properties are otherwise only computed at the first step; the catalog reads them
        // before that.
        self.world.bodies[handle].recompute_mass_properties_from_colliders(&self.world.colliders);
        self.handles.push(handle);
        Ok(id)
    }

    fn add_joint(&mut self, spec: &JointSpec) -> Result<JointId, String> {
        let h1 = *self
            .handles
            .get(spec.body1.index())
            .ok_or("no such parent body")?;
        let h2 = *self
            .handles
            .get(spec.body2.index())
            .ok_or("no such child body")?;
        let mask = match spec.kind {
            JointKind::Fixed => JointAxesMask::LOCKED_FIXED_AXES,
            JointKind::Revolute { .. } => JointAxesMask::LOCKED_REVOLUTE_AXES,
        };
        let mut joint = GenericJointBuilder::new(mask)
            .local_frame1(pose(&spec.frame1))
            .local_frame2(pose(&spec.frame2))
            .contacts_enabled(false);
        let mut motor = None;
        if let JointKind::Revolute { limits, motor: m } = spec.kind {
            if let Some([lo, hi]) = limits {
                joint = joint.limits(JointAxis::AngX, [lo as f32, hi as f32]);
            }
            if let Some([stiffness, damping]) = m {
                // Force-based: gains in N·m/rad and N·m·s/rad, whatever the bodies' inertia.
                joint = joint
                    .motor_model(JointAxis::AngX, MotorModel::ForceBased)
                    .motor_position(JointAxis::AngX, 0.0, stiffness as f32, damping as f32);
                motor = m;
            }
        }
        let handle = self.world.impulse_joints.insert(h1, h2, joint, true);
        self.joints.push((handle, motor));
        Ok(JointId(self.joints.len() as u32 - 1))
    }

    fn body_mass(&self, body: BodyId) -> f64 {
        self.body(body)
            .filter(|b| b.is_dynamic())
            .map_or(0.0, |b| b.mass() as f64)
    }

    fn body_inertia(&self, body: BodyId) -> Vec3 {
        self.body(body)
            .filter(|b| b.is_dynamic())
            .map_or(Vec3::zeros(), |b| {
                back_v(b.mass_properties().local_mprops.principal_inertia())
            })
    }

    fn apply(&mut self, command: &BodyCommand) {
        let body = match *command {
            BodyCommand::JointTarget {
                joint,
                position,
                velocity,
            } => {
                if let Some(&(handle, Some([stiffness, damping]))) =
                    self.joints.get(joint.0 as usize)
                    && let Some(j) = self.world.impulse_joints.get_mut(handle, true)
                {
                    j.data.set_motor(
                        JointAxis::AngX,
                        position as f32,
                        velocity as f32,
                        stiffness as f32,
                        damping as f32,
                    );
                }
                return;
            }
            BodyCommand::Force { body, .. }
            | BodyCommand::ForceAtPoint { body, .. }
            | BodyCommand::Torque { body, .. }
            | BodyCommand::Velocity { body, .. } => body,
        };
        let Some(&handle) = self.handles.get(body.index()) else {
            return;
        };
        let rb = &mut self.world.bodies[handle];
        match *command {
            BodyCommand::Force { force, .. } => rb.add_force(v(&force), true),
            BodyCommand::ForceAtPoint { force, point, .. } => {
                rb.add_force_at_point(v(&force), v(&point.coords), true)
            }
            BodyCommand::Torque { torque, .. } => rb.add_torque(v(&torque), true),
            BodyCommand::Velocity {
                linear, angular, ..
            } => {
                rb.set_linvel(v(&linear), true);
                rb.set_angvel(v(&angular), true);
                return;
            }
            BodyCommand::JointTarget { .. } => return,
        }
        self.forced.push(handle);
    }

    fn step(&mut self, dt: f64) {
        self.world.integration_parameters.dt = dt as f32;
        self.world.step();
        for h in self.forced.drain(..) {
            if let Some(rb) = self.world.bodies.get_mut(h) {
                rb.reset_forces(false);
                rb.reset_torques(false);
            }
        }
    }

    fn read_state(&self, out: &mut [BodyState]) {
        // Walk the body arena in memory order (handle lookups are scattered at 10k bodies); the
        // user data is the dense body index.
        for (_, rb) in self.world.bodies.iter() {
            if let Some(slot) = out.get_mut(rb.user_data as usize) {
                *slot = BodyState {
                    pose: back_pose(rb.position()),
                    linvel: back_v(rb.linvel()),
                    angvel: back_v(rb.angvel()),
                };
            }
        }
    }

    fn cast_ray(
        &self,
        origin: Point3,
        direction: Vec3,
        max_distance: f64,
        exclude: &dyn Fn(BodyId) -> bool,
    ) -> Option<RayHit> {
        let norm = direction.norm();
        let usable = norm > 0.0 && norm.is_finite() && max_distance > 0.0;
        if !usable {
            return None;
        }
        let dir = direction / norm;
        let ray = Ray::new(v(&origin.coords), v(&dir));
        let keep = |_: ColliderHandle, c: &Collider| !exclude(BodyId(c.user_data as u32));
        let filter = QueryFilter::default().predicate(&keep);
        let mut best = self
            .world
            .cast_ray_and_get_normal(&ray, max_distance as f32, true, filter)
            .map(|(collider, hit)| RayHit {
                body: BodyId(self.world.colliders[collider].user_data as u32),
                distance: hit.time_of_impact as f64,
                normal: back_v(hit.normal),
            });
        // The planes outside Rapier's world, as its solid half-space cast answers: 0 from
        // inside, else where the ray crosses the surface from above.
        for p in self.loose_planes() {
            let height = (origin.coords - p.point).dot(&p.normal);
            let along = dir.dot(&p.normal);
            let hit = if height <= 0.0 {
                Some((0.0, Vec3::zeros()))
            } else if along < 0.0 {
                Some((height / -along, p.normal))
            } else {
                None
            };
            if let Some((t, normal)) = hit
                && t <= max_distance
                && best.is_none_or(|b| t < b.distance)
                && !exclude(p.body)
            {
                best = Some(RayHit {
                    body: p.body,
                    distance: t,
                    normal,
                });
            }
        }
        best
    }

    fn bodies_within(&self, center: Point3, radius: f64, out: &mut Vec<BodyId>) {
        let start = out.len();
        let ball = Ball::new(radius as f32);
        let at = RPose::from_translation(v(&center.coords));
        for (_, c) in self
            .world
            .intersect_shape(at, &ball, QueryFilter::default())
        {
            out.push(BodyId(c.user_data as u32));
        }
        for p in self.loose_planes() {
            if (center.coords - p.point).dot(&p.normal) <= radius {
                out.push(p.body);
            }
        }
        out[start..].sort_unstable();
        let mut tail = out.split_off(start);
        tail.dedup();
        out.extend(tail);
    }

    fn contacts(&self, body: BodyId, out: &mut Vec<Contact>) {
        let Some(rb) = self.body(body) else {
            return;
        };
        let dt = f64::from(self.world.integration_parameters.dt);
        let start = out.len();
        for &own in rb.colliders() {
            for pair in self.world.contact_pairs_with(own) {
                if !pair.has_any_active_contact() {
                    continue;
                }
                let (mine_first, other) = if pair.collider1 == own {
                    (true, pair.collider2)
                } else {
                    (false, pair.collider1)
                };
                let (Some(c1), Some(c_other)) = (
                    self.world.colliders.get(pair.collider1),
                    self.world.colliders.get(other),
                ) else {
                    continue;
                };
                let other = BodyId(c_other.user_data as u32);
                if other == body {
                    continue;
                }
                // The pair's impulse pushes collider2's body (checked against a resting box's
                // weight in the tests); the force on this body follows from which side it is.
                let impulse = back_v(pair.total_impulse());
                let force = if mine_first { -impulse } else { impulse } / dt.max(f64::MIN_POSITIVE);
                let (mut sum, mut n) = (Vec3::zeros(), 0.0);
                for m in pair.manifolds() {
                    for p in m.points.iter().filter(|p| p.dist <= 0.0) {
                        sum += back_v(c1.position().transform_point(p.local_p1));
                        n += 1.0;
                    }
                }
                let point = Point3::from(if n > 0.0 { sum / n } else { sum });
                // Several colliders of this body may touch the same other body: one entry.
                if let Some(c) = out[start..].iter_mut().find(|c| c.other == other) {
                    c.force += force;
                    continue;
                }
                out.push(Contact {
                    other,
                    point,
                    force,
                });
            }
        }
    }
}

/// Registers this engine as `"rapier"`.
pub fn register(registry: &mut ssx_core::PluginRegistry) {
    registry.add_engine("rapier", |config| Box::new(RapierEngine::new(config)));
}
