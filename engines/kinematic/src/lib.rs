//! ssx's kinematic 2.5D engine, after Stage (Vaughan 2008) and Stage 2.5D: bodies keep their
//! full pose but move kinematically, and every collider is its footprint in the plane extruded
//! over its height.
//!
//! - A velocity command moves a body exactly (Stage's position model). Forces and gravity on a
//!   dynamic body are integrated as a point mass with damping; torques turn it (about z only
//!   for a planar body).
//! - A move that would make a body overlap another is refused: the body tries the turn alone,
//!   else stalls where it is and reports the contact (Stage). A body may leave an overlap it
//!   started in. Kinematic bodies move as commanded through everything (as in Rapier) and block
//!   the others without pushing them. Bodies whose height ranges do not meet pass each other (a robot under a
//!   table). A falling body rests on the highest thing under it (Stage 2.5D's stacking).
//! - Ray casts and radius queries go through a uniform grid, read-only after the step, so the
//!   sensor phase's workers query it concurrently (rays.rs). A small world (at most
//!   [`SMALL_WORLD`] prims) files nothing: its queries offer every prim, culled by its bounds.
//! - Bodies move one at a time, each seeing the moves before it; those far apart move at once
//!   on the Environment's workers, in an order fixed by the world alone (motion.rs), so results
//!   do not depend on the worker count.
//!
//! What it does not model is in docs/engines.md: joints, friction, restitution, pushing, and
//! contact forces other than the ones that stop a move or hold a body up.
#![warn(missing_docs)]

mod baked;
mod index;
mod motion;
mod rays;
mod ring;
mod shape;
mod slots;
mod statics;

use index::Grids;
use shape::Prim;
use slots::Slots;
use smallvec::SmallVec;
use ssx_core::engine::{
    BodyCommand, BodyId, BodyKind, BodySpec, BodyState, Capabilities, Contact, EngineConfig,
    JointId, JointSpec, MassSpec, PhysicEngine, RayHit, Shape, check_attach,
};
use ssx_core::math::nalgebra::{Matrix3, SymmetricEigen};
use ssx_core::math::{Point3, Pose, Vec3};
use ssx_core::parallel::{self, Parallel};
use ssx_core::spatial::Layout;
use statics::{Slot, Statics};
use std::any::Any;
use std::sync::Arc;

/// A body that moves (dynamic or kinematic) as the engine keeps it: what every step reads
/// inline, the rest boxed. Static bodies are kept apart (statics.rs).
#[derive(Clone, Debug)]
struct Body {
    /// Its id (the world's numbering: the order bodies were added, statics among them).
    id: u32,
    kind: BodyKind,
    planar: bool,
    /// Its prims: the movers' `prims[first..first + colliders.len()]`.
    first: usize,
    /// The farthest a collider reaches from the body origin in the plane (bounds how far a
    /// turn moves any point).
    reach: f64,
    /// A kinematic body's commanded velocity, kept through stalls.
    command: (Vec3, Vec3),
    force: Vec3,
    torque: Vec3,
    mass: f64,
    linear_damping: f64,
    angular_damping: f64,
    /// A planar dynamic body's moment about z, when its principal moment about z is positive
    /// (else torques do not turn it).
    spin: Option<f64>,
    /// A dynamic body's inertia; `None` for the others.
    inertia: Option<Box<Inertia>>,
    /// Colliders other than planes, in the body frame.
    colliders: Box<[(Shape, Pose)]>,
    /// The body carrying this one (its id) and where (its pose in the carrier's frame).
    carried_by: Option<Box<(u32, Pose)>>,
    /// The movers this one carries (their indices).
    cargo: Vec<u32>,
}

/// A dynamic body's inertia.
#[derive(Clone, Debug)]
struct Inertia {
    /// About the body origin, body frame.
    about: Matrix3<f64>,
    /// Its principal moments.
    principal: Vec3,
}

/// Where a body is and how it moves: what the move phase writes.
#[derive(Clone, Copy, Debug)]
struct Motion {
    pose: Pose,
    linvel: Vec3,
    angvel: Vec3,
}

impl Motion {
    fn state(&self) -> BodyState {
        BodyState {
            pose: self.pose,
            linvel: self.linvel,
            angvel: self.angvel,
        }
    }
}

impl Body {
    /// The body carrying this one (its id) and where.
    #[inline]
    fn carrier(&self) -> Option<(u32, Pose)> {
        self.carried_by.as_deref().copied()
    }
    fn prims(&self) -> std::ops::Range<usize> {
        self.first..self.first + self.colliders.len()
    }
}

/// One worker's share of a state update: the ids it copies, the mover index of the first, the id
/// of its first slot, the slots.
type StatePart<'a> = (&'a [u32], usize, usize, &'a mut [BodyState]);

/// A world of at most this many prims (walls and movers) keeps no grid: every query offers
/// every prim, culled by its bounds, which costs less than filing them each step (issue 60:
/// measured with `cargo bench -p ssx-tests --bench worlds`, BENCHMARKS.md "Small worlds
/// without a grid").
pub const SMALL_WORLD: usize = 96;

/// The kinematic 2.5D [`PhysicEngine`].
pub struct KinematicEngine {
    gravity: Vec3,
    /// Where each body id's data lies (statics.rs).
    slots: Vec<Slot>,
    /// The movers, in id order.
    bodies: Vec<Body>,
    /// Each mover's motion.
    motion: Slots<Motion>,
    /// Every mover's collider but planes, grouped by mover.
    prims: Slots<Prim>,
    /// The static bodies: one copy for the worlds of a batch where equal.
    statics: Arc<Statics>,
    /// Horizontal planes: their body and height.
    planes: Vec<(u32, f64)>,
    /// The grid's cells; `None` until the first step (queries then test every prim).
    layout: Option<Layout>,
    /// The grids, made with the first layout (boxed: a small world has none).
    grids: Option<Box<Grids>>,
    /// Moving prims whose bounds left the layout: tested one by one.
    outside: Vec<u32>,
    /// A static body was added since the static grid was built.
    static_dirty: bool,
    /// The grids file every prim (false from adding a body to the next step: queries then test
    /// every prim).
    indexed: bool,
    /// The last step found a small world ([`SMALL_WORLD`]) and filed nothing: queries offer
    /// every prim culled, and rings map every prim to their rays (without it, a world with no
    /// grid is the tests' brute force: every prim, unculled, ray by ray).
    small: bool,
    /// Worlds of at most this many prims are small ([`SMALL_WORLD`] unless set).
    small_limit: usize,
    /// Contacts of the last step, sorted by body then other.
    contacts: Vec<(u32, Contact)>,
    entries: Vec<(u32, [f64; 4])>,
    /// Bodies that move on their own this step (not static, not carried).
    moving: usize,
    /// The movers' ids, by mover index (each `bodies[m].id`, packed: the state copy reads
    /// these and the motions, not the bodies).
    moving_ids: Vec<u32>,
    /// The movers something carries (their indices), in id order.
    carried: Vec<u32>,
    /// The order the movers move in (made for the first world of enough movers: boxed), and
    /// the workers' lanes (motion.rs).
    plan: Option<Box<motion::Plan>>,
    lanes: Vec<motion::Lane>,
    /// Bodies were added since the last step: the next step gives back the lists' spare room.
    grown: bool,
}

impl KinematicEngine {
    /// An empty world.
    pub fn new(config: &EngineConfig) -> Self {
        Self {
            gravity: config.gravity,
            slots: Vec::new(),
            bodies: Vec::new(),
            motion: Slots::default(),
            prims: Slots::default(),
            statics: Arc::default(),
            planes: Vec::new(),
            layout: None,
            grids: None,
            outside: Vec::new(),
            static_dirty: true,
            indexed: false,
            small: false,
            small_limit: SMALL_WORLD,
            contacts: Vec::new(),
            entries: Vec::new(),
            moving: 0,
            moving_ids: Vec::new(),
            carried: Vec::new(),
            plan: None,
            lanes: Vec::new(),
            grown: false,
        }
    }

    /// The prims of a collider list at a pose.
    fn prims_at(colliders: &[(Shape, Pose)], pose: &Pose, body: u32, out: &mut Vec<Prim>) {
        out.clear();
        // Room for these alone: a lane's scratch kept by every world of a batch would grow to
        // four prims for a robot of one (`Vec`'s first growth).
        out.reserve_exact(colliders.len());
        for (shape, local) in colliders {
            if let Some(p) = Prim::new(shape, &(pose * local), body) {
                out.push(p);
            }
        }
    }

    /// Integrates every body's velocity over the step (forces, gravity, damping), free bodies
    /// shared among `par`'s workers in id ranges. A carried body takes its carrier's velocity as
    /// one thread in id order would leave it: from before the carrier's integration when the
    /// carrier comes later, after it when it comes earlier.
    fn accelerate_all(&mut self, dt: f64, par: &dyn Parallel) {
        let n = self.bodies.len();
        let carried = std::mem::take(&mut self.carried);
        let carrier_later = |e: &Self, b: u32| {
            let body = &e.bodies[b as usize];
            body.carrier().is_some_and(|(c, _)| c > body.id)
        };
        for &b in &carried {
            if carrier_later(self, b) {
                self.accelerate_carried(b as usize);
            }
        }
        let gravity = self.gravity;
        let lanes = if n >= motion::MIN_STRIPS {
            par.workers().max(1)
        } else {
            1
        };
        let chunk = n.div_ceil(lanes).max(1);
        {
            // Up to four workers without allocating on the step.
            let mut parts: SmallVec<[_; 4]> = self
                .bodies
                .chunks_mut(chunk)
                .zip(self.motion.cells_mut().chunks_mut(chunk))
                .collect();
            parallel::for_each_mut(par, &mut parts, &|_, (bodies, motion)| {
                for (body, m) in bodies.iter_mut().zip(motion.iter_mut()) {
                    if body.carried_by.is_none() {
                        accelerate_free(body, m.get_mut(), gravity, dt);
                    }
                }
            });
        }
        for &b in &carried {
            if !carrier_later(self, b) {
                self.accelerate_carried(b as usize);
            }
        }
        self.carried = carried;
    }

    /// A carried body moves as its carrier does (for the swept bounds), nothing else.
    fn accelerate_carried(&mut self, b: usize) {
        let Some((c, _)) = self.bodies[b].carrier() else {
            return;
        };
        let carrier = self.motion_of(c);
        let m = self.motion.get_mut(b);
        (m.linvel, m.angvel) = (carrier.linvel, carrier.angvel);
        let body = &mut self.bodies[b];
        body.force = Vec3::zeros();
        body.torque = Vec3::zeros();
    }
}

/// Integrates a body that nothing carries over the step (forces, gravity, damping).
fn accelerate_free(body: &mut Body, m: &mut Motion, gravity: Vec3, dt: f64) {
    match body.kind {
        BodyKind::Static => return,
        BodyKind::Kinematic => (m.linvel, m.angvel) = body.command,
        BodyKind::Dynamic => {
            let mut acc = body.force / body.mass;
            if !body.planar {
                acc += gravity;
            }
            m.linvel += acc * dt;
            m.linvel *= 1.0 / (1.0 + dt * body.linear_damping);
            if body.planar {
                if let Some(izz) = body.spin {
                    m.angvel.z += body.torque.z / izz * dt;
                }
            } else if let Some(inertia) = &body.inertia {
                // Euler's equations in the world frame: I ω' = τ − ω × I ω.
                let r = m.pose.rotation.to_rotation_matrix();
                let world = r.matrix() * inertia.about * r.matrix().transpose();
                if let Some(inv) = world.try_inverse() {
                    let w = m.angvel;
                    m.angvel += inv * (body.torque - w.cross(&(world * w))) * dt;
                }
            }
            m.angvel *= 1.0 / (1.0 + dt * body.angular_damping);
        }
    }
    if body.planar {
        m.linvel.z = 0.0;
        m.angvel.x = 0.0;
        m.angvel.y = 0.0;
    }
    body.force = Vec3::zeros();
    body.torque = Vec3::zeros();
}

/// Mass, inertia about the body origin (body frame) and principal moments of a body.
fn mass_properties(spec: &BodySpec) -> Result<(f64, Matrix3<f64>, Vec3), String> {
    if spec.kind != BodyKind::Dynamic {
        return Ok((0.0, Matrix3::zeros(), Vec3::zeros()));
    }
    match spec.mass {
        MassSpec::Explicit { mass, inertia } => {
            return Ok((mass, Matrix3::from_diagonal(&inertia), inertia));
        }
        MassSpec::Inertial {
            mass,
            center: d,
            inertia,
            frame,
        } => {
            // About the body origin: turned into the body's axes, then moved by Steiner's rule.
            let r = frame.to_rotation_matrix();
            let about = r.matrix() * Matrix3::from_diagonal(&inertia) * r.matrix().transpose()
                + (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * mass;
            return Ok((mass, about, SymmetricEigen::new(about).eigenvalues));
        }
        _ => {}
    }
    let density = spec.collider_density()?.unwrap_or(0.0);
    let mut inertia = Matrix3::zeros();
    for c in &spec.colliders {
        let Some((volume, unit)) = shape::unit_inertia(&c.shape) else {
            continue;
        };
        let m = density * volume;
        let r = c.local_pose.rotation.to_rotation_matrix();
        let d = c.local_pose.translation.vector;
        inertia += r.matrix() * Matrix3::from_diagonal(&(unit * m)) * r.matrix().transpose()
            + (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * m;
    }
    let off = inertia[(0, 1)].abs() + inertia[(0, 2)].abs() + inertia[(1, 2)].abs();
    let principal = if off <= 1e-12 * inertia.trace() {
        inertia.diagonal()
    } else {
        SymmetricEigen::new(inertia).eigenvalues
    };
    Ok((density * spec.solid_volume(), inertia, principal))
}

impl PhysicEngine for KinematicEngine {
    fn name(&self) -> &'static str {
        "kinematic"
    }

    fn prefetch(&self) {
        use ssx_core::prefetch::value;
        value(self.bodies.as_slice());
        value(self.moving_ids.as_slice());
        value(self.planes.as_slice());
        value(self.lanes.as_slice());
        self.motion.prefetch();
        self.prims.prefetch();
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            joints: false,
            contact_dynamics: false,
            friction: false,
            exact_shapes: false,
            attach: true,
            meshes: true,
            heights: true,
        }
    }

    fn add_body(&mut self, spec: &BodySpec) -> Result<BodyId, String> {
        let id = self.slots.len() as u32;
        let (mass, inertia, principal) = mass_properties(spec)?;
        // Sized to the spec: most bodies have one collider, and a vector grown by push holds
        // four (issue 60's small worlds).
        let mut colliders = Vec::with_capacity(spec.colliders.len());
        for c in &spec.colliders {
            if matches!(c.shape, Shape::Plane) {
                let w = spec.pose * c.local_pose;
                if (w.rotation * Vec3::z()).z < 1.0 - 1e-9 {
                    return Err(
                        "the kinematic engine has horizontal ground planes only (normal +z)".into(),
                    );
                }
                self.planes.push((id, w.translation.vector.z));
            } else {
                colliders.push((c.shape.clone(), c.local_pose));
            }
        }
        let mut prims = Vec::new();
        Self::prims_at(&colliders, &spec.pose, id, &mut prims);
        let origin = spec.pose.translation.vector;
        let reach = prims
            .iter()
            .map(|p| {
                let (ex, ey) = p.foot.extent();
                (p.x - origin.x).hypot(p.y - origin.y) + ex.hypot(ey)
            })
            .fold(0.0, f64::max);
        // Until the next step files it, queries test every prim one by one.
        self.indexed = false;
        self.grown = true;
        if spec.kind == BodyKind::Static {
            // A copy of its own if shared: other worlds keep theirs.
            let statics = Arc::make_mut(&mut self.statics);
            self.slots.push(Slot::fixed(statics.poses.len()));
            statics.poses.push(spec.pose);
            statics.prims.extend(prims);
            self.static_dirty = true;
            return Ok(BodyId(id));
        }
        let first = self.prims.len();
        for p in prims {
            self.prims.push(p);
        }
        self.slots.push(Slot::mover(self.bodies.len()));
        self.moving_ids.push(id);
        self.motion.push(Motion {
            pose: spec.pose,
            linvel: Vec3::zeros(),
            angvel: Vec3::zeros(),
        });
        let dynamic = spec.kind == BodyKind::Dynamic;
        self.bodies.push(Body {
            id,
            kind: spec.kind,
            planar: spec.planar,
            first,
            reach,
            command: (Vec3::zeros(), Vec3::zeros()),
            force: Vec3::zeros(),
            torque: Vec3::zeros(),
            mass,
            linear_damping: spec.linear_damping,
            angular_damping: spec.angular_damping,
            spin: (principal.z > 0.0).then_some(inertia[(2, 2)]),
            inertia: dynamic.then(|| {
                Box::new(Inertia {
                    about: inertia,
                    principal,
                })
            }),
            colliders: colliders.into_boxed_slice(),
            carried_by: None,
            cargo: Vec::new(),
        });
        Ok(BodyId(id))
    }

    fn add_joint(&mut self, _spec: &JointSpec) -> Result<JointId, String> {
        Err(
            "the kinematic engine has no joints; run jointed artifacts with \"engine\": \"rapier\""
                .into(),
        )
    }

    fn attach(&mut self, body: BodyId, carrier: BodyId, offset: Pose) -> Result<(), String> {
        check_attach(body, carrier, |id| self.kind(id), &offset)?;
        // Only a dynamic body is carried (checked above): a mover.
        let mb = self.mover(body.0).expect("a dynamic body moves");
        let mc = self.mover(carrier.0);
        if !self.bodies[mb].cargo.is_empty() {
            return Err(format!(
                "body {} carries others: it cannot be carried itself",
                body.0
            ));
        }
        if mc.is_some_and(|c| self.bodies[c].carried_by.is_some()) {
            return Err(format!("body {} is carried: it cannot carry", carrier.0));
        }
        if self.bodies[mb].carrier().map(|(c, _)| c) != Some(carrier.0) {
            self.detach(body);
            // A static carrier holds its cargo still: nothing of it reads a cargo list.
            if let Some(c) = mc {
                self.bodies[c].cargo.push(mb as u32);
            }
        }
        // A gripper attaches again each step it lifts: its box is written over, not made anew
        // (no allocation in a step).
        match &mut self.bodies[mb].carried_by {
            Some(held) => **held = (carrier.0, offset),
            held => *held = Some(Box::new((carrier.0, offset))),
        }
        if let Err(at) = self.carried.binary_search(&(mb as u32)) {
            self.carried.insert(at, mb as u32);
        }
        Ok(())
    }

    fn detach(&mut self, body: BodyId) {
        let Some(mb) = self.mover(body.0) else {
            return;
        };
        let Some((c, _)) = self.bodies[mb].carried_by.take().map(|c| *c) else {
            return;
        };
        // Nothing here would ever slow a glide (no friction): a released body drops straight
        // down, as Stage's gripper puts things down.
        let m = self.motion.get_mut(mb);
        (m.linvel.x, m.linvel.y, m.angvel) = (0.0, 0.0, Vec3::zeros());
        if let Some(mc) = self.mover(c) {
            self.bodies[mc].cargo.retain(|&m| m != mb as u32);
        }
        self.carried.retain(|&m| m != mb as u32);
    }

    fn attachment(&self, body: BodyId) -> Option<(BodyId, Pose)> {
        let (c, offset) = self.bodies[self.mover(body.0)?].carrier()?;
        Some((BodyId(c), offset))
    }

    fn body_mass(&self, body: BodyId) -> f64 {
        self.mover(body.0).map_or(0.0, |m| self.bodies[m].mass)
    }

    fn body_inertia(&self, body: BodyId) -> Vec3 {
        self.mover(body.0)
            .and_then(|m| self.bodies[m].inertia.as_ref())
            .map_or(Vec3::zeros(), |i| i.principal)
    }

    fn apply(&mut self, command: &BodyCommand) {
        let body = match *command {
            BodyCommand::JointTarget { .. }
            | BodyCommand::JointMotor { .. }
            | BodyCommand::JointEffort { .. }
            | BodyCommand::Attach { .. }
            | BodyCommand::Detach { .. } => return,
            BodyCommand::Force { body, .. }
            | BodyCommand::ForceAtPoint { body, .. }
            | BodyCommand::Torque { body, .. }
            | BodyCommand::Velocity { body, .. } => body,
        };
        // Static bodies take no command.
        let Some(i) = self.mover(body.0) else {
            return;
        };
        let b = &mut self.bodies[i];
        let m = self.motion.get_mut(i);
        match (*command, b.kind) {
            (_, BodyKind::Static) => {}
            (
                BodyCommand::Velocity {
                    linear, angular, ..
                },
                kind,
            ) => {
                if kind == BodyKind::Kinematic {
                    b.command = (linear, angular);
                }
                m.linvel = linear;
                m.angvel = angular;
            }
            (_, BodyKind::Kinematic) => {}
            (BodyCommand::Force { force, .. }, _) => b.force += force,
            (BodyCommand::ForceAtPoint { force, point, .. }, _) => {
                b.force += force;
                b.torque += (point.coords - m.pose.translation.vector).cross(&force);
            }
            (BodyCommand::Torque { torque, .. }, _) => b.torque += torque,
            (
                BodyCommand::JointTarget { .. }
                | BodyCommand::JointMotor { .. }
                | BodyCommand::JointEffort { .. }
                | BodyCommand::Attach { .. }
                | BodyCommand::Detach { .. },
                _,
            ) => {}
        }
    }

    fn step(&mut self, dt: f64) {
        self.step_on(dt, &ssx_core::parallel::Serial);
    }

    fn step_on(&mut self, dt: f64, par: &dyn Parallel) {
        self.contacts.clear();
        self.accelerate_all(dt, par);
        self.index_movers(dt, par);
        self.move_bodies(dt, par);
        // One entry per pair and body, in body order.
        self.contacts.sort_by_key(|(b, c)| (*b, c.other));
        self.contacts.dedup_by(|later, kept| {
            let same = later.0 == kept.0 && later.1.other == kept.1.other;
            if same {
                kept.1.force += later.1.force;
            }
            same
        });
    }

    fn read_state(&self, out: &mut [BodyState]) {
        for (state, slot) in out.iter_mut().zip(&self.slots) {
            *state = match (slot.as_mover(), slot.as_static()) {
                (Some(m), _) => self.motion.get_ref(m).state(),
                (_, Some(k)) => BodyState {
                    pose: self.statics.poses[k],
                    linvel: Vec3::zeros(),
                    angvel: Vec3::zeros(),
                },
                _ => unreachable!("a slot is a mover's or a static body's"),
            };
        }
    }

    fn commons(&self) -> Option<Arc<dyn Any + Send + Sync>> {
        Some(Arc::clone(&self.statics) as Arc<dyn Any + Send + Sync>)
    }

    /// Holds `part`'s static bodies in place of its own when they are equal (the same walls,
    /// ids, poses and prims): they never change in a step, so the world steps as before.
    fn share(&mut self, part: &Arc<dyn Any + Send + Sync>) -> bool {
        let Ok(other) = Arc::clone(part).downcast::<Statics>() else {
            return false;
        };
        if Arc::ptr_eq(&other, &self.statics) {
            return true;
        }
        if *other != *self.statics {
            return false;
        }
        self.statics = other;
        true
    }

    /// Only bodies that move (statics never do), and on the workers, each an id range with
    /// an even share of the movers: at 1000 robots the copy on one thread stalled on the lines
    /// the other worker's moves had written, and at 100 robots among 508 wall segments the walls
    /// were five sixths of the copy (BENCHMARKS.md, "Swarm speed, third round"). Below
    /// `motion::MIN_STRIPS` movers the hand-over costs more than the copy.
    fn update_state_on(&self, out: &mut [BodyState], par: &dyn Parallel) {
        let ids = &self.moving_ids;
        let parts = if self.moving < motion::MIN_STRIPS {
            1
        } else {
            par.workers().clamp(1, 4)
        };
        // Part k copies `ids[share(k)]` into the slice of `out` that begins at its first id.
        let mut chunks: SmallVec<[StatePart<'_>; 4]> = SmallVec::new();
        let mut rest = out;
        let mut at = 0;
        for k in (0..parts).rev() {
            let range = parallel::share(ids.len(), parts, k);
            let start = range.start;
            let mine = &ids[range];
            let first = mine.first().map_or(at, |&b| b as usize);
            let (head, tail) = rest.split_at_mut(first.min(rest.len()));
            chunks.push((mine, start, first, tail));
            rest = head;
            at = first;
        }
        chunks.reverse();
        let copy = |_: usize, (mine, start, first, slots): &mut StatePart<'_>| {
            for (m, &b) in (*start..).zip(mine.iter()) {
                slots[b as usize - *first] = self.motion.get_ref(m).state();
            }
        };
        if parts == 1 {
            copy(0, &mut chunks[0]);
        } else {
            parallel::for_each_mut(par, &mut chunks, &copy);
        }
    }

    fn cast_ray(
        &self,
        origin: Point3,
        direction: Vec3,
        max_distance: f64,
        exclude: &dyn Fn(BodyId) -> bool,
    ) -> Option<RayHit> {
        self.ray(origin, direction, max_distance, exclude)
    }

    /// As one ring query where that pays (ring.rs): the same hits as [`PhysicEngine::cast_ray`]
    /// for each ray, to the bit.
    fn cast_rays(
        &self,
        origin: Point3,
        directions: &[Vec3],
        max_distance: f64,
        exclude: &dyn Fn(BodyId) -> bool,
        out: &mut [Option<RayHit>],
    ) {
        self.rays(origin, directions, max_distance, exclude, out);
    }

    fn bodies_within(&self, center: Point3, radius: f64, out: &mut Vec<BodyId>) {
        let start = out.len();
        let c = center.coords;
        for &(body, h) in &self.planes {
            if c.z - h <= radius {
                out.push(BodyId(body));
            }
        }
        let b = [c.x - radius, c.y - radius, c.x + radius, c.y + radius];
        self.near(&b, |_, p| {
            if p.aabb[0] <= b[2]
                && p.aabb[2] >= b[0]
                && p.aabb[1] <= b[3]
                && p.aabb[3] >= b[1]
                && p.distance(&c) <= radius
            {
                out.push(BodyId(p.body));
            }
        });
        out[start..].sort_unstable();
        let mut tail = out.split_off(start);
        tail.dedup();
        out.extend(tail);
    }

    fn contacts(&self, body: BodyId, out: &mut Vec<Contact>) {
        let from = self.contacts.partition_point(|(b, _)| *b < body.0);
        out.extend(
            self.contacts[from..]
                .iter()
                .take_while(|(b, _)| *b == body.0)
                .map(|(_, c)| *c),
        );
    }
}

/// Registers this engine as `"kinematic"`.
pub fn register(registry: &mut ssx_core::PluginRegistry) {
    registry.add_engine("kinematic", |config| Box::new(KinematicEngine::new(config)));
}
