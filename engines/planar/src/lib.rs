//! The planar backend of ssx's [`PhysicEngine`]: rigid bodies in the world's xy plane on
//! rapier2d (dimforge's 2D build of the library the `rapier` engine uses), for tasks where
//! robots push, carry and balance things (VMAS's transport, balance, wheel) and for scenes of
//! pushing ground robots.
//!
//! Every body is its footprint (`convert.rs`) extruded through all heights: bodies meet
//! wherever their outlines do, rays see them at any height, and a body keeps the height and
//! tilt it was built with while it moves and turns in the plane. Gravity's x and y act in the
//! plane (a side view, as VMAS's balance has); its z part presses bodies onto the floor, whose
//! Coulomb friction (`floor.rs`) slows what slides (a top view). Ground planes are that floor:
//! they have no outline. Queries are in `queries.rs`, joints in `joints.rs`.
#![warn(missing_docs)]

mod convert;
mod floor;
mod joints;
mod queries;

use std::collections::HashMap;

use convert::{Flat, back_pose, back_v, flat, v};
use joints::JointRecord;
use rapier2d::math::{Pose as RPose, Vector as RVec};
use rapier2d::prelude::*;
use ssx_core::engine::{
    BodyCommand, BodyId, BodyKind, BodySpec, BodyState, Capabilities, Contact, EngineConfig,
    JointDrive, JointId, JointSpec, MassSpec, PhysicEngine, RayHit, check_attach, route_command,
};
use ssx_core::math::{Point3, Pose, Rotation, Vec3};

/// What the engine keeps of a body beside rapier2d's.
struct Body {
    handle: RigidBodyHandle,
    /// Its height and tilt, as built.
    z: f64,
    tilt: Rotation,
    /// The Coulomb coefficient of its first collider against the floor (0: none).
    floor_friction: f32,
}

/// A [`PhysicEngine`] on rapier2d.
pub struct PlanarEngine {
    world: PhysicsWorld,
    bodies: Vec<Body>,
    /// Bodies that received forces or torques this step; cleared after it so that a command
    /// acts for exactly one step.
    forced: Vec<RigidBodyHandle>,
    joints: Vec<JointRecord>,
    /// Some body has a collision group: steps filter its pairs.
    grouped: bool,
    /// Attached bodies (by body index) and the fixed joints that hold them to their carriers.
    attached: HashMap<u32, ImpulseJointHandle>,
    /// What presses bodies onto the floor (m/s²): gravity's downward part.
    floor_gravity: f32,
    /// Every collider's box as of the last step, for the queries (before the first step they
    /// meet nothing, as the trait allows: a world of many bodies is not filed once a body).
    filed: Vec<queries::Filed>,
}

impl PlanarEngine {
    /// An empty world.
    pub fn new(config: &EngineConfig) -> Self {
        let mut world = PhysicsWorld::new();
        world.gravity = v(&config.gravity);
        world.integration_parameters.dt = config.timestep as f32;
        Self {
            world,
            bodies: Vec::new(),
            forced: Vec::new(),
            joints: Vec::new(),
            grouped: false,
            attached: HashMap::new(),
            floor_gravity: (-config.gravity.z).max(0.0) as f32,
            filed: Vec::new(),
        }
    }

    fn body(&self, id: BodyId) -> Option<&RigidBody> {
        self.bodies
            .get(id.index())
            .map(|b| &self.world.bodies[b.handle])
    }

    fn kind_of(&self, id: BodyId) -> Option<BodyKind> {
        self.body(id).map(|b| match b.body_type() {
            RigidBodyType::Dynamic => BodyKind::Dynamic,
            RigidBodyType::Fixed => BodyKind::Static,
            _ => BodyKind::Kinematic,
        })
    }
}

impl PhysicEngine for PlanarEngine {
    fn name(&self) -> &'static str {
        "planar"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            joints: true,
            meshes: true,
            contact_dynamics: true,
            friction: true,
            exact_shapes: false,
            attach: true,
            heights: false,
        }
    }

    fn add_body(&mut self, spec: &BodySpec) -> Result<BodyId, String> {
        let Flat { pose, z, tilt } = flat(&spec.pose);
        let builder = match spec.kind {
            BodyKind::Dynamic => RigidBodyBuilder::dynamic(),
            BodyKind::Static => RigidBodyBuilder::fixed(),
            BodyKind::Kinematic => RigidBodyBuilder::kinematic_velocity_based(),
        };
        // Gravity in the plane pulls every body all the time, which Rapier's sleep (a body
        // below 0.05 m/s for 0.5 s) does not count: a line settling slowly onto the floor under
        // VMAS's 0.05 m/s² would stop in mid-air. With it, nothing sleeps.
        let mut builder = builder
            .pose(pose)
            .can_sleep(self.world.gravity == RVec::ZERO)
            .linear_damping(spec.linear_damping as f32)
            .angular_damping(spec.angular_damping as f32)
            .user_data(self.bodies.len() as u128);
        match (spec.kind, spec.mass) {
            (BodyKind::Dynamic, MassSpec::Explicit { mass, inertia }) => {
                builder = builder.additional_mass_properties(MassProperties::new(
                    RVec::ZERO,
                    mass as f32,
                    inertia.z as f32,
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
                // The moment about the vertical through the centre of mass, in the body frame.
                let r = (tilt * frame).to_rotation_matrix().into_inner();
                let izz: f64 = (0..3).map(|k| r[(2, k)] * r[(2, k)] * inertia[k]).sum();
                let c = tilt * center;
                builder = builder.additional_mass_properties(MassProperties::new(
                    RVec::new(c.x as f32, c.y as f32),
                    mass as f32,
                    izz as f32,
                ));
            }
            _ => {}
        }
        let density = spec.collider_density()?.unwrap_or(0.0);
        // Every footprint first: a mesh without one leaves no half-built body behind. The
        // colliders' poses are in the body's frame as built, tilt included.
        let feet = spec
            .colliders
            .iter()
            .map(|c| {
                let local = Pose::from_parts(Vec3::zeros().into(), tilt) * c.local_pose;
                Ok(convert::footprint(&c.shape, &local)?.map(|f| (c, f)))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let handle = self.world.bodies.insert(builder);
        let id = BodyId(self.bodies.len() as u32);
        for (c, (shape, at)) in feet.into_iter().flatten() {
            // The footprint's areal density carries the collider's 3D mass.
            let area = convert::area(&shape);
            let areal = if area > 0.0 {
                density * c.shape.volume() / area
            } else {
                0.0
            };
            let mut collider = ColliderBuilder::new(shape)
                .position(at)
                .friction(c.friction as f32)
                .restitution(c.restitution as f32)
                .density(areal as f32)
                .user_data(joints::collider_data(id, spec.group));
            if spec.group != 0 {
                collider = collider.active_hooks(ActiveHooks::FILTER_CONTACT_PAIRS);
                self.grouped = true;
            }
            self.world
                .colliders
                .insert_with_parent(collider, handle, &mut self.world.bodies);
        }
        self.world.bodies[handle].recompute_mass_properties_from_colliders(&self.world.colliders);
        let floor_friction = spec.colliders.first().map_or(0.0, |c| c.friction as f32);
        self.bodies.push(Body {
            handle,
            z,
            tilt,
            floor_friction,
        });
        Ok(id)
    }

    fn add_joint(&mut self, spec: &JointSpec) -> Result<JointId, String> {
        self.joint(spec)
    }

    /// A fixed joint from the carrier (its frame at `offset`, seen from above) to the body's
    /// origin, without contacts between the two.
    fn attach(&mut self, body: BodyId, carrier: BodyId, offset: Pose) -> Result<(), String> {
        check_attach(body, carrier, |id| self.kind_of(id), &offset)?;
        let (h_body, h_carrier) = (
            self.bodies[body.index()].handle,
            self.bodies[carrier.index()].handle,
        );
        let frame = flat(&offset).pose;
        if let Some(&handle) = self.attached.get(&body.0)
            && let Some(j) = self.world.impulse_joints.get_mut(handle, true)
            && j.body1() == h_carrier
        {
            j.data.set_local_frame1(frame);
            return Ok(());
        }
        self.detach(body);
        let joint = FixedJointBuilder::new()
            .local_frame1(frame)
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
        let id = BodyId(carrier.user_data as u32);
        let z = self.bodies[body.index()].z - self.bodies[id.index()].z;
        Some((
            id,
            back_pose(&joint.data.local_frame1, z, &Rotation::identity()),
        ))
    }

    fn body_mass(&self, body: BodyId) -> f64 {
        self.body(body)
            .filter(|b| b.is_dynamic())
            .map_or(0.0, |b| b.mass() as f64)
    }

    /// The moment about the vertical alone: the plane has no other (x and y read 0).
    fn body_inertia(&self, body: BodyId) -> Vec3 {
        self.body(body)
            .filter(|b| b.is_dynamic())
            .map_or(Vec3::zeros(), |b| {
                Vec3::new(
                    0.0,
                    0.0,
                    b.mass_properties().local_mprops.principal_inertia() as f64,
                )
            })
    }

    fn apply(&mut self, command: &BodyCommand) {
        let Some(body) = route_command(self, command) else {
            return;
        };
        let Some(handle) = self.bodies.get(body.index()).map(|b| b.handle) else {
            return;
        };
        let rb = &mut self.world.bodies[handle];
        match *command {
            BodyCommand::Force { force, .. } => rb.add_force(v(&force), true),
            BodyCommand::ForceAtPoint { force, point, .. } => {
                rb.add_force_at_point(v(&force), v(&point.coords), true)
            }
            BodyCommand::Torque { torque, .. } => rb.add_torque(torque.z as f32, true),
            BodyCommand::Velocity {
                linear, angular, ..
            } => {
                rb.set_linvel(v(&linear), true);
                rb.set_angvel(angular.z as f32, true);
                // Rapier wakes a body only when its velocity changes. Held at one commanded
                // velocity that hardly moves its shape (a disc turning in place, a slow creep)
                // it would fall asleep after 0.5 s and skip a step; a commanded motion keeps it
                // awake.
                if linear != Vec3::zeros() || angular != Vec3::zeros() {
                    rb.wake_up(true);
                }
                return;
            }
            _ => return,
        }
        self.forced.push(handle);
    }

    fn step(&mut self, dt: f64) {
        self.world.integration_parameters.dt = dt as f32;
        if self.floor_gravity > 0.0 {
            self.floor_friction(dt as f32);
        }
        if self.grouped {
            self.world.step_with_events(&joints::SelfCollision, &());
        } else {
            self.world.step();
        }
        for h in self.forced.drain(..) {
            if let Some(rb) = self.world.bodies.get_mut(h) {
                rb.reset_forces(false);
                rb.reset_torques(false);
            }
        }
        queries::file(&self.world.colliders, &mut self.filed);
    }

    fn read_state(&self, out: &mut [BodyState]) {
        for (b, slot) in self.bodies.iter().zip(out.iter_mut()) {
            let rb = &self.world.bodies[b.handle];
            *slot = BodyState {
                pose: back_pose(rb.position(), b.z, &b.tilt),
                linvel: back_v(rb.linvel()),
                angvel: Vec3::new(0.0, 0.0, rb.angvel() as f64),
            };
        }
    }

    fn cast_ray(
        &self,
        origin: Point3,
        direction: Vec3,
        max_distance: f64,
        exclude: &dyn Fn(BodyId) -> bool,
    ) -> Option<RayHit> {
        queries::cast_ray(
            &self.world.colliders,
            &self.filed,
            origin,
            direction,
            max_distance,
            exclude,
        )
    }

    fn cast_rays(
        &self,
        origin: Point3,
        directions: &[Vec3],
        max_distance: f64,
        exclude: &dyn Fn(BodyId) -> bool,
        out: &mut [Option<RayHit>],
    ) {
        queries::cast_rays(
            &self.world.colliders,
            &self.filed,
            origin,
            directions,
            max_distance,
            exclude,
            out,
        );
    }

    fn bodies_within(&self, center: Point3, radius: f64, out: &mut Vec<BodyId>) {
        queries::bodies_within(&self.world.colliders, &self.filed, center, radius, out);
    }

    fn contacts(&self, body: BodyId, out: &mut Vec<Contact>) {
        let Some(b) = self.bodies.get(body.index()) else {
            return;
        };
        queries::contacts(&self.world, b.handle, body, b.z, out);
    }
}

impl JointDrive for PlanarEngine {
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
        PlanarEngine::drive(self, joint, position, velocity, stiffness, damping);
    }
    fn effort(&mut self, joint: JointId, effort: f64) {
        self.joint_effort(joint, effort);
    }
}

/// Registers this engine as `"planar"`.
pub fn register(registry: &mut ssx_core::PluginRegistry) {
    registry.add_engine("planar", |config| Box::new(PlanarEngine::new(config)));
}
