//! The Rapier backend of ssx's [`PhysicEngine`]: the only crate that names Rapier types.
//!
//! Rapier works in f32 with glam types; ssx works in f64 nalgebra. Conversions happen in
//! `convert.rs` and nowhere else; the ground planes' handling is in `planes.rs`. The world is z-up.
#![warn(missing_docs)]

mod convert;
mod index;
mod joints;
mod planes;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use convert::{back_pose, back_v, pose, v};
use index::QueryIndex;
use joints::JointRecord;
use planes::{Flier, Plane, groups};

use rapier3d::math::{Pose as RPose, Vec3 as RVec};
use rapier3d::prelude::*;
use ssx_core::engine::{
    BodyCommand, BodyId, BodyKind, BodySpec, BodyState, Capabilities, Contact, EngineConfig,
    JointDrive, JointId, JointKind, JointSpec, MassSpec, PhysicEngine, RayHit, Shape, check_attach,
    route_command,
};
use ssx_core::math::{Point3, Pose, Vec3};

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
    shapes: HashMap<[u64; 4], Made>,
    /// Joints in creation order (the index is the JointId).
    joints: Vec<JointRecord>,
    /// Some body has a collision group: steps filter its pairs (joints.rs).
    grouped: bool,
    /// Attached bodies (by body index) and the fixed joints that hold them to their carriers.
    attached: HashMap<u32, ImpulseJointHandle>,
    /// Ground planes. Only a dynamic body that is not planar can touch one, so a plane joins
    /// Rapier's world when the first such body does (a half-space in Rapier's BVH has an
    /// unbounded box: every pair test of a ground swarm met it). Rays and radius queries meet
    /// planes here, in closed form, whether they are in Rapier's world or not.
    planes: Vec<Plane>,
    /// Whether the planes are in Rapier's world.
    planes_in_world: bool,
    /// Whether a body that can touch a plane exists: the planes then join Rapier's world at the
    /// next step, after every body added before it. Rapier registers a new contact pair by
    /// scanning the contact-graph edges of the pair's lower-numbered collider; a plane inserted
    /// first is that collider for every body resting on it, and the first step of 200,000
    /// boxes on the ground scanned 2·10¹⁰ edges (12 s). Inserted last, the scan is the box's own
    /// single edge.
    planes_wanted: bool,
    /// Bodies that can touch a plane (dynamic, not planar), with the radius about their centre
    /// of mass that holds all their colliders, and whether they are in reach of a plane now.
    fliers: Vec<Flier>,
    /// Whether [`RapierEngine::plane_reach`] runs (always, but for the test that compares).
    plane_culling: bool,
    /// How often a body went out of or into the planes' reach.
    plane_flips: u64,
    /// The colliders as of the last step, filed for queries by the first query after it, or
    /// at the end of the step when the step before it was queried.
    index: OnceLock<QueryIndex>,
    /// Whether the index was asked for since the last step.
    queried: AtomicBool,
    /// The index before that, whose memory the next one reuses.
    spare: Mutex<QueryIndex>,
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
            grouped: false,
            attached: HashMap::new(),
            planes: Vec::new(),
            planes_in_world: false,
            planes_wanted: false,
            fliers: Vec::new(),
            plane_culling: true,
            plane_flips: 0,
            index: OnceLock::new(),
            queried: AtomicBool::new(false),
            spare: Mutex::default(),
        }
    }

    fn shape(&mut self, shape: &Shape) -> Result<(SharedShape, RPose), String> {
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
            // One Rapier shape per mesh and fit: a replicated robot's copies share it (and a
            // convex decomposition is found once).
            Shape::Mesh { ref mesh, fit } => [
                5,
                std::sync::Arc::as_ptr(mesh) as usize as u64,
                fit as u64,
                0,
            ],
        };
        if let Some((shared, local, _)) = self.shapes.get(&key) {
            return Ok((shared.clone(), *local));
        }
        let (new, local) = convert::shape(shape)?;
        // The mesh is kept with its shape so that its address, the key, is never reused.
        let keep = match shape {
            Shape::Mesh { mesh, .. } => Some(mesh.clone()),
            _ => None,
        };
        self.shapes.insert(key, (new.clone(), local, keep));
        Ok((new, local))
    }

    /// Drops the index after the world changed, keeping its memory for the next.
    fn retire_index(&mut self) {
        if let Some(old) = self.index.take() {
            *self.spare.get_mut().unwrap_or_else(|e| e.into_inner()) = old;
        }
    }

    /// The index, for a query (which marks the step as queried).
    fn index(&self) -> &QueryIndex {
        if !self.queried.load(Ordering::Relaxed) {
            self.queried.store(true, Ordering::Relaxed);
        }
        self.filed()
    }

    /// The index, filed now if it is not yet.
    fn filed(&self) -> &QueryIndex {
        self.index.get_or_init(|| {
            let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
            let mut index = std::mem::take(&mut *spare);
            index.rebuild(&self.world.colliders);
            index
        })
    }

    fn body(&self, id: BodyId) -> Option<&RigidBody> {
        self.handles.get(id.index()).map(|h| &self.world.bodies[*h])
    }
}

/// A shape as Rapier made it, its pose in the collider, and the mesh it was made of (kept so
/// that the mesh's address, the cache key, is never reused).
type Made = (
    SharedShape,
    RPose,
    Option<std::sync::Arc<ssx_core::engine::Mesh>>,
);

impl PhysicEngine for RapierEngine {
    fn name(&self) -> &'static str {
        "rapier"
    }

    fn own_threads(&self) -> bool {
        // rapier3d's `parallel` feature runs its solver on rayon's threads.
        cfg!(feature = "parallel")
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            joints: true,
            contact_dynamics: true,
            friction: true,
            exact_shapes: true,
            attach: true,
            meshes: true,
            heights: true,
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
        match (spec.kind, spec.mass) {
            (BodyKind::Dynamic, MassSpec::Explicit { mass, inertia }) => {
                builder = builder.additional_mass_properties(MassProperties::new(
                    RVec::ZERO,
                    mass as f32,
                    v(&inertia),
                ));
            }
            (
                BodyKind::Dynamic,
                MassSpec::Inertial {
                    mass,
                    center,
                    inertia,
                    frame,
                },
            ) => {
                let frame = pose(&Pose::from_parts(Vec3::zeros().into(), frame)).rotation;
                builder = builder.additional_mass_properties(
                    MassProperties::with_principal_inertia_frame(
                        v(&center),
                        mass as f32,
                        v(&inertia),
                        frame,
                    ),
                );
            }
            _ => {}
        }
        // Every shape first: a mesh Rapier refuses leaves no half-built body behind.
        let shapes = spec
            .colliders
            .iter()
            .map(|c| self.shape(&c.shape))
            .collect::<Result<Vec<_>, String>>()?;
        let handle = self.world.bodies.insert(builder);
        let id = BodyId(self.handles.len() as u32);
        self.retire_index();
        if spec.kind == BodyKind::Dynamic && !spec.planar {
            self.planes_wanted = true;
        }
        for (c, (shape, shape_pose)) in spec.colliders.iter().zip(shapes) {
            let is_plane = matches!(c.shape, Shape::Plane);
            let mut collider = ColliderBuilder::new(shape)
                .position(pose(&c.local_pose) * shape_pose)
                .friction(c.friction as f32)
                .restitution(c.restitution as f32)
                .density(if is_plane { 0.0 } else { density as f32 })
                .collision_groups(groups(spec.planar, is_plane))
                .user_data(joints::collider_data(id, spec.group));
            if spec.group != 0 {
                collider = collider.active_hooks(ActiveHooks::FILTER_CONTACT_PAIRS);
                self.grouped = true;
            }
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
        if spec.kind == BodyKind::Dynamic && !spec.planar {
            let rb = &self.world.bodies[handle];
            let com = rb.mass_properties().local_mprops.local_com;
            let radius = rb
                .colliders()
                .iter()
                .map(|c| {
                    let co = &self.world.colliders[*c];
                    let local = co.position_wrt_parent().copied().unwrap_or(RPose::IDENTITY);
                    let sphere = co.shape().compute_bounding_sphere(&local);
                    (sphere.center - com).length() + sphere.radius
                })
                .fold(0.0, f32::max);
            self.fliers.push(Flier {
                handle,
                radius,
                near: true,
            });
        }
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
        let (mask, axis) = match spec.kind {
            JointKind::Fixed => (JointAxesMask::LOCKED_FIXED_AXES, JointAxis::AngX),
            JointKind::Revolute { .. } => (JointAxesMask::LOCKED_REVOLUTE_AXES, JointAxis::AngX),
            JointKind::Prismatic { .. } => (JointAxesMask::LOCKED_PRISMATIC_AXES, JointAxis::LinX),
        };
        let mut joint = GenericJointBuilder::new(mask)
            .local_frame1(pose(&spec.frame1))
            .local_frame2(pose(&spec.frame2))
            .contacts_enabled(false);
        let max = spec.dynamics.max_effort.min(f32::MAX as f64) as f32;
        if spec.kind.movable() {
            if let Some([lo, hi]) = spec.kind.limits() {
                joint = joint.limits(axis, [lo as f32, hi as f32]);
            }
            // Force-based: gains in N·m/rad (N/m) and N·m·s/rad (N·s/m), whatever the bodies'
            // inertia. Without a motor of its own the joint's damping holds it back (a motor
            // aiming at rest with no stiffness).
            let [stiffness, damping] = spec.kind.motor().unwrap_or([0.0, spec.dynamics.damping]);
            if stiffness > 0.0 || damping > 0.0 {
                joint = joint
                    .motor_model(axis, MotorModel::ForceBased)
                    .motor_position(axis, 0.0, stiffness as f32, damping as f32)
                    .motor_max_force(axis, max);
            }
        }
        let handle = self.world.impulse_joints.insert(h1, h2, joint, true);
        self.joints.push(JointRecord {
            handle,
            axis,
            motor: spec.kind.motor(),
            max,
            held: false,
        });
        Ok(JointId(self.joints.len() as u32 - 1))
    }

    /// A fixed joint from the carrier (its frame at `offset`) to the body's origin, without
    /// contacts between the two; an attached body's joint is moved to the new offset.
    fn attach(&mut self, body: BodyId, carrier: BodyId, offset: Pose) -> Result<(), String> {
        let kind_of = |id: BodyId| {
            self.body(id).map(|b| match b.body_type() {
                RigidBodyType::Dynamic => BodyKind::Dynamic,
                RigidBodyType::Fixed => BodyKind::Static,
                _ => BodyKind::Kinematic,
            })
        };
        check_attach(body, carrier, kind_of, &offset)?;
        let (h_body, h_carrier) = (self.handles[body.index()], self.handles[carrier.index()]);
        if let Some(&handle) = self.attached.get(&body.0)
            && let Some(j) = self.world.impulse_joints.get_mut(handle, true)
            && j.body1() == h_carrier
        {
            j.data.set_local_frame1(pose(&offset));
            return Ok(());
        }
        self.detach(body);
        let joint = FixedJointBuilder::new()
            .local_frame1(pose(&offset))
            .local_frame2(RPose::IDENTITY)
            .contacts_enabled(false);
        let handle = self
            .world
            .impulse_joints
            .insert(h_carrier, h_body, joint, true);
        self.attached.insert(body.0, handle);
        Ok(())
    }

    fn detach(&mut self, body: BodyId) {
        if let Some(handle) = self.attached.remove(&body.0) {
            self.world.impulse_joints.remove(handle, true);
        }
    }

    fn attachment(&self, body: BodyId) -> Option<(BodyId, Pose)> {
        let joint = self
            .world
            .impulse_joints
            .get(*self.attached.get(&body.0)?)?;
        let carrier = self.world.bodies.get(joint.body1())?;
        Some((
            BodyId(carrier.user_data as u32),
            back_pose(&joint.data.local_frame1),
        ))
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
        let Some(body) = route_command(self, command) else {
            return;
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
                // Rapier wakes a body only when its velocity changes. Held at one commanded
                // velocity that hardly moves its shape (a disc turning in place, a slow creep)
                // it would fall asleep after 0.5 s and skip a step; a commanded motion keeps it
                // awake.
                if linear != Vec3::zeros() || angular != Vec3::zeros() {
                    rb.wake_up(true);
                }
                return;
            }
            BodyCommand::JointTarget { .. }
            | BodyCommand::JointMotor { .. }
            | BodyCommand::JointEffort { .. }
            | BodyCommand::Attach { .. }
            | BodyCommand::Detach { .. } => return,
        }
        self.forced.push(handle);
    }

    fn step(&mut self, dt: f64) {
        if self.planes_wanted {
            self.planes_into_world();
        }
        self.world.integration_parameters.dt = dt as f32;
        self.plane_reach(dt as f32);
        if self.grouped {
            self.world.step_with_events(&joints::SelfCollision, &());
        } else {
            self.world.step();
        }
        self.retire_index();
        // A world whose sensors queried the last step will query this one: file it now, on the
        // stepping thread, rather than in the first query, where the other workers would wait
        // on the lock (a futex sleep and wake-up on each of them).
        if self.queried.swap(false, Ordering::Relaxed) {
            self.filed();
        }
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
        // Planes as Rapier's solid half-space cast answers: 0 from inside, else where the ray
        // crosses the surface from above.
        let mut plane: Option<RayHit> = None;
        for p in &self.planes {
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
                && plane.is_none_or(|b| t < b.distance)
                && !exclude(p.body)
            {
                plane = Some(RayHit {
                    body: p.body,
                    distance: t,
                    normal,
                });
            }
        }
        // Nothing past the nearest plane can be the answer: the index looks no farther (a
        // hair beyond, so that a collider touching the plane's hit still wins the tie).
        let reach = plane.map_or(max_distance, |p| {
            (p.distance * (1.0 + 1e-9) + 1e-9).min(max_distance)
        });
        let best = self
            .index()
            .cast_ray(origin.coords.into(), dir.into(), reach, exclude)
            .map(|(body, hit)| RayHit {
                body,
                distance: hit.time_of_impact as f64,
                normal: back_v(hit.normal),
            });
        match (best, plane) {
            (Some(b), Some(p)) if p.distance < b.distance => Some(p),
            (None, p) => p,
            (b, _) => b,
        }
    }

    fn bodies_within(&self, center: Point3, radius: f64, out: &mut Vec<BodyId>) {
        let start = out.len();
        self.index().bodies_within(
            self.world.narrow_phase.query_dispatcher(),
            center.coords.into(),
            radius,
            out,
        );
        for p in &self.planes {
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

impl JointDrive for RapierEngine {
    fn motor_gains(&self, joint: JointId) -> Option<[f64; 2]> {
        self.joints.get(joint.0 as usize).and_then(|j| j.motor)
    }
    fn drive(
        &mut self,
        joint: JointId,
        position: f64,
        velocity: f64,
        stiffness: f64,
        damping: f64,
    ) {
        RapierEngine::drive(self, joint, position, velocity, stiffness, damping);
    }
    fn effort(&mut self, joint: JointId, effort: f64) {
        self.joint_effort(joint, effort);
    }
}

/// Registers this engine as `"rapier"`.
pub fn register(registry: &mut ssx_core::PluginRegistry) {
    registry.add_engine("rapier", |config| Box::new(RapierEngine::new(config)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssx_core::engine::ColliderSpec;

    /// A box dropped from 30 m, one thrown down at 60 m/s, one held up and then kicked down,
    /// and a cluster of boxes on the ground: every state after every step.
    fn trajectories(culling: bool) -> (Vec<BodyState>, u64) {
        let mut e = RapierEngine::new(&EngineConfig {
            gravity: Vec3::new(0.0, 0.0, -9.81),
            timestep: 0.01,
        });
        e.plane_culling = culling;
        let spec = |kind, xyz: [f64; 3], shape| BodySpec {
            kind,
            pose: Pose::translation(xyz[0], xyz[1], xyz[2]),
            mass: MassSpec::Mass(2.0),
            colliders: vec![ColliderSpec {
                shape,
                local_pose: Pose::identity(),
                friction: 0.5,
                restitution: 0.2,
            }],
            linear_damping: 0.0,
            angular_damping: 0.0,
            planar: false,
            group: 0,
        };
        let cube = Shape::Box {
            half_extents: Vec3::repeat(0.1),
        };
        e.add_body(&spec(BodyKind::Static, [0.0; 3], Shape::Plane))
            .unwrap();
        e.add_body(&spec(BodyKind::Dynamic, [0.0, 0.0, 30.0], cube.clone()))
            .unwrap();
        let thrown = e
            .add_body(&spec(BodyKind::Dynamic, [5.0, 0.0, 2.0], cube.clone()))
            .unwrap();
        let kicked = e
            .add_body(&spec(BodyKind::Dynamic, [-5.0, 0.0, 1.5], cube))
            .unwrap();
        for i in 0..6 {
            e.add_body(&spec(
                BodyKind::Dynamic,
                [0.15 * i as f64, 3.0, 0.1 + 0.25 * i as f64],
                Shape::Sphere { radius: 0.1 },
            ))
            .unwrap();
        }
        e.apply(&BodyCommand::Velocity {
            body: thrown,
            linear: Vec3::new(1.0, 0.0, -60.0),
            angular: Vec3::new(3.0, 0.0, 0.0),
        });
        let mut out = Vec::new();
        let mut states = vec![BodyState::default(); 10];
        for step in 0..400 {
            let lift = if step < 100 { 1.0 } else { 0.0 };
            let kick = if step == 100 { 300.0 } else { 0.0 };
            e.apply(&BodyCommand::Force {
                body: kicked,
                force: Vec3::new(0.0, 0.0, 2.0 * 9.81 * (lift - kick)),
            });
            e.step(0.01);
            e.read_state(&mut states);
            out.extend_from_slice(&states);
        }
        (out, e.plane_flips)
    }

    /// The ground plane joins Rapier's world at the first step, after every body, so that each
    /// resting body's contact is registered by scanning that body's own contacts rather than
    /// the plane's (which made the first step of a large world quadratic in its bodies).
    #[test]
    fn planes_join_after_every_body_and_boxes_rest_on_them() {
        let mut e = RapierEngine::new(&EngineConfig {
            gravity: Vec3::new(0.0, 0.0, -9.81),
            timestep: 0.01,
        });
        let spec = |kind, xyz: [f64; 3], shape| BodySpec {
            kind,
            pose: Pose::translation(xyz[0], xyz[1], xyz[2]),
            mass: MassSpec::Mass(2.0),
            colliders: vec![ColliderSpec {
                shape,
                local_pose: Pose::identity(),
                friction: 0.5,
                restitution: 0.0,
            }],
            linear_damping: 0.0,
            angular_damping: 0.0,
            planar: false,
            group: 0,
        };
        let cube = Shape::Box {
            half_extents: Vec3::repeat(0.25),
        };
        e.add_body(&spec(BodyKind::Static, [0.0; 3], Shape::Plane))
            .unwrap();
        let n = 400;
        for i in 0..n {
            let (x, y) = ((i % 20) as f64, (i / 20) as f64);
            e.add_body(&spec(BodyKind::Dynamic, [x, y, 0.25], cube.clone()))
                .unwrap();
        }
        assert_eq!(
            e.world.colliders.len(),
            n,
            "the plane waits for the first step"
        );
        e.step(0.01);
        assert_eq!(e.world.colliders.len(), n + 1);
        let plane = e.world.bodies[e.planes[0].handle].colliders()[0];
        let newest = e.world.colliders.iter().map(|(h, _)| h.0).max().unwrap();
        assert_eq!(plane.0, newest, "the plane is the newest collider");
        // Every box registered its one contact, with the plane.
        assert_eq!(e.world.narrow_phase.contact_pairs().count(), n);
        let mut states = vec![BodyState::default(); n + 1];
        for _ in 0..100 {
            e.step(0.01);
        }
        e.read_state(&mut states);
        for s in &states[1..] {
            let z = s.pose.translation.z;
            assert!((z - 0.25).abs() < 5e-3, "a box rests on the plane: z = {z}");
            assert!(s.linvel.norm() < 1e-2, "at rest: {}", s.linvel.norm());
        }
    }

    #[test]
    fn leaving_planes_out_of_reach_changes_no_trajectory() {
        let (culled, flips) = trajectories(true);
        let (full, none) = trajectories(false);
        assert_eq!(none, 0);
        assert!(flips >= 6, "bodies went out of reach and back: {flips}");
        assert_eq!(culled, full, "bit for bit");
    }
}
