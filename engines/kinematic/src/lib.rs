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
//!   sensor phase's workers query it concurrently.
//! - One thread moves the bodies in id order: results do not depend on the worker count.
//!
//! What it does not model is in docs/engines.md: joints, friction, restitution, pushing, and
//! contact forces other than the ones that stop a move or hold a body up.
#![warn(missing_docs)]

mod shape;

use shape::Prim;
use ssx_core::engine::{
    BodyCommand, BodyId, BodyKind, BodySpec, BodyState, Capabilities, Contact, EngineConfig,
    JointId, JointSpec, MassSpec, PhysicEngine, RayHit, Shape, check_attach,
};
use ssx_core::math::nalgebra::{Matrix3, SymmetricEigen};
use ssx_core::math::{Point3, Pose, Rotation, Vec3};
use ssx_core::spatial::{self as grid, Grid, Layout, ListGrid};

/// A body as the engine keeps it.
#[derive(Clone, Debug)]
struct Body {
    kind: BodyKind,
    pose: Pose,
    linvel: Vec3,
    angvel: Vec3,
    /// A kinematic body's commanded velocity, kept through stalls.
    command: (Vec3, Vec3),
    mass: f64,
    /// Inertia about the body origin, body frame (zero for non-dynamic bodies).
    inertia: Matrix3<f64>,
    principal: Vec3,
    linear_damping: f64,
    angular_damping: f64,
    planar: bool,
    /// Colliders other than planes, in the body frame.
    colliders: Vec<(Shape, Pose)>,
    /// Its prims: `prims[first..first + colliders.len()]`.
    first: usize,
    /// The farthest a collider reaches from the body origin in the plane (bounds how far a
    /// turn moves any point).
    reach: f64,
    force: Vec3,
    torque: Vec3,
    /// The body carrying this one and where (its pose in the carrier's frame).
    carrier: Option<(u32, Pose)>,
    /// The bodies this one carries.
    cargo: Vec<u32>,
}

impl Body {
    fn moves(&self) -> bool {
        self.kind != BodyKind::Static
    }
    fn prims(&self) -> std::ops::Range<usize> {
        self.first..self.first + self.colliders.len()
    }
}

/// The kinematic 2.5D [`PhysicEngine`].
pub struct KinematicEngine {
    gravity: Vec3,
    bodies: Vec<Body>,
    /// Every collider but planes, grouped by body.
    prims: Vec<Prim>,
    /// Horizontal planes: their body and height.
    planes: Vec<(u32, f64)>,
    /// The grid's cells; `None` until the first step (queries then test every prim).
    layout: Option<Layout>,
    /// Static bodies' prims.
    statics: Grid,
    /// Moving bodies' prims, each under its bounds swept over the step.
    movers: ListGrid,
    /// Moving prims whose bounds left the layout: tested one by one.
    outside: Vec<u32>,
    /// A static body was added since the static grid was built.
    static_dirty: bool,
    /// Contacts of the last step, sorted by body then other.
    contacts: Vec<(u32, Contact)>,
    scratch: Vec<Prim>,
    /// Carried bodies' prims at a candidate pose.
    cargo_scratch: Vec<Prim>,
    entries: Vec<(u32, [f64; 4])>,
}

impl KinematicEngine {
    /// An empty world.
    pub fn new(config: &EngineConfig) -> Self {
        Self {
            gravity: config.gravity,
            bodies: Vec::new(),
            prims: Vec::new(),
            planes: Vec::new(),
            layout: None,
            statics: Grid::default(),
            movers: ListGrid::default(),
            outside: Vec::new(),
            static_dirty: true,
            contacts: Vec::new(),
            scratch: Vec::new(),
            cargo_scratch: Vec::new(),
            entries: Vec::new(),
        }
    }

    /// Forgets the grid: queries test every collider until the next step rebuilds it. The
    /// tests use it to check the grid's answers against brute force on the same world.
    pub fn drop_index(&mut self) {
        self.layout = None;
        self.outside.clear();
    }

    /// The prims of a collider list at a pose.
    fn prims_at(colliders: &[(Shape, Pose)], pose: &Pose, body: u32, out: &mut Vec<Prim>) {
        out.clear();
        for (shape, local) in colliders {
            if let Some(p) = Prim::new(shape, &(pose * local), body) {
                out.push(p);
            }
        }
    }

    /// Calls `f` with the index of every prim whose (swept) bounds may meet `b`.
    fn near(&self, b: &[f64; 4], mut f: impl FnMut(u32)) {
        match &self.layout {
            None => (0..self.prims.len() as u32).for_each(f),
            Some(layout) => {
                self.statics.visit(layout, b, &mut f);
                self.movers.visit(layout, b, &mut f);
                self.outside.iter().copied().for_each(f);
            }
        }
    }

    /// Lays the grid out anew over everything (cells twice the median moving footprint).
    fn relayout(&mut self) {
        let mut bounds = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
        for p in &self.prims {
            bounds[0] = bounds[0].min(p.aabb[0]);
            bounds[1] = bounds[1].min(p.aabb[1]);
            bounds[2] = bounds[2].max(p.aabb[2]);
            bounds[3] = bounds[3].max(p.aabb[3]);
        }
        if self.prims.is_empty() {
            bounds = [-1.0, -1.0, 1.0, 1.0];
        }
        let margin = 1.0 + 0.1 * (bounds[2] - bounds[0]).max(bounds[3] - bounds[1]);
        let bounds = [
            bounds[0] - margin,
            bounds[1] - margin,
            bounds[2] + margin,
            bounds[3] + margin,
        ];
        let size = |p: &Prim| (p.aabb[2] - p.aabb[0]).max(p.aabb[3] - p.aabb[1]);
        let mut sizes: Vec<f64> = self
            .bodies
            .iter()
            .filter(|b| b.moves())
            .flat_map(|b| self.prims[b.prims()].iter().map(size))
            .collect();
        if sizes.is_empty() {
            sizes = self.prims.iter().map(size).collect();
        }
        let cell = if sizes.is_empty() {
            1.0
        } else {
            let mid = sizes.len() / 2;
            *sizes.select_nth_unstable_by(mid, f64::total_cmp).1 * 2.0
        };
        let layout = Layout::covering(bounds, cell.max(0.05));
        self.entries.clear();
        for b in self.bodies.iter().filter(|b| !b.moves()) {
            for i in b.prims() {
                self.entries.push((i as u32, self.prims[i].aabb));
            }
        }
        self.statics.build(&layout, &self.entries);
        self.layout = Some(layout);
        self.static_dirty = false;
    }

    /// Files every moving prim under its bounds swept over the coming step.
    fn index_movers(&mut self, dt: f64) {
        let outside_limit = 64.max(self.prims.len() / 10);
        if self.layout.is_none() || self.static_dirty || self.outside.len() > outside_limit {
            self.relayout();
        }
        let layout = self.layout.expect("laid out above");
        self.entries.clear();
        self.outside.clear();
        for b in self.bodies.iter().filter(|b| b.moves()) {
            // A carried body turns about its carrier: its reach counts from there.
            let arm = b
                .carrier
                .map_or(b.reach, |(_, o)| o.translation.vector.xy().norm() + b.reach);
            let reach = b.linvel.xy().norm() * dt + b.angvel.norm() * dt * arm + 1e-6;
            for i in b.prims() {
                let a = self.prims[i].aabb;
                let swept = [a[0] - reach, a[1] - reach, a[2] + reach, a[3] + reach];
                if layout.holds(&swept) {
                    self.entries.push((i as u32, swept));
                } else {
                    self.outside.push(i as u32);
                }
            }
        }
        self.movers.build(&layout, &self.entries);
    }

    /// Integrates a body's velocity over the step (forces, gravity, damping).
    fn accelerate(&mut self, b: usize, dt: f64) {
        let gravity = self.gravity;
        if let Some((c, _)) = self.bodies[b].carrier {
            // Carried: it moves as its carrier does (for the swept bounds), nothing else.
            let (v, w) = (
                self.bodies[c as usize].linvel,
                self.bodies[c as usize].angvel,
            );
            let body = &mut self.bodies[b];
            (body.linvel, body.angvel) = (v, w);
            body.force = Vec3::zeros();
            body.torque = Vec3::zeros();
            return;
        }
        let body = &mut self.bodies[b];
        match body.kind {
            BodyKind::Static => return,
            BodyKind::Kinematic => (body.linvel, body.angvel) = body.command,
            BodyKind::Dynamic => {
                let mut acc = body.force / body.mass;
                if !body.planar {
                    acc += gravity;
                }
                body.linvel += acc * dt;
                body.linvel *= 1.0 / (1.0 + dt * body.linear_damping);
                if body.planar {
                    if body.principal.z > 0.0 {
                        body.angvel.z += body.torque.z / body.inertia[(2, 2)] * dt;
                    }
                } else {
                    // Euler's equations in the world frame: I ω' = τ − ω × I ω.
                    let r = body.pose.rotation.to_rotation_matrix();
                    let world = r.matrix() * body.inertia * r.matrix().transpose();
                    if let Some(inv) = world.try_inverse() {
                        let w = body.angvel;
                        body.angvel += inv * (body.torque - w.cross(&(world * w))) * dt;
                    }
                }
                body.angvel *= 1.0 / (1.0 + dt * body.angular_damping);
            }
        }
        if body.planar {
            body.linvel.z = 0.0;
            body.angvel.x = 0.0;
            body.angvel.y = 0.0;
        }
        body.force = Vec3::zeros();
        body.torque = Vec3::zeros();
    }

    /// The first other body that `cand` (body `b`'s prims at a new pose) would overlap and its
    /// old pose does not: (other body, the other's prim, the own prim).
    fn blocker(&self, b: u32, cand: &[Prim]) -> Option<(u32, usize, usize)> {
        let group = |body: u32| body == b || self.bodies[b as usize].cargo.contains(&body);
        let old_overlaps = |q: &Prim| {
            std::iter::once(b)
                .chain(self.bodies[b as usize].cargo.iter().copied())
                .any(|m| {
                    self.prims[self.bodies[m as usize].prims()]
                        .iter()
                        .any(|o| o.overlaps(q))
                })
        };
        for (k, p) in cand.iter().enumerate() {
            let mut found = None;
            self.near(&p.aabb, |i| {
                let q = &self.prims[i as usize];
                if found.is_some() || group(q.body) || !p.overlaps(q) {
                    return;
                }
                // Leaving an overlap the body (or what it carries) is already in is allowed.
                if !old_overlaps(q) {
                    found = Some((q.body, i as usize, k));
                }
            });
            if found.is_some() {
                return found;
            }
        }
        None
    }

    fn record(&mut self, b: u32, other: u32, point: Point3, force: Vec3) {
        self.contacts.push((
            b,
            Contact {
                other: BodyId(other),
                point,
                force,
            },
        ));
        self.contacts.push((
            other,
            Contact {
                other: BodyId(b),
                point,
                force: -force,
            },
        ));
    }

    /// Moves body `b` over the step: the turn and glide in the plane first (refused into other
    /// bodies), then up or down (stopped by what is under or over it).
    fn advance(&mut self, b: usize, dt: f64) {
        let body = &self.bodies[b];
        let (v, w) = (body.linvel, body.angvel);
        let id = b as u32;
        let mut cand = std::mem::take(&mut self.scratch);
        let free = body.kind == BodyKind::Kinematic;
        if v.x != 0.0 || v.y != 0.0 || w != Vec3::zeros() {
            let turn = if body.planar {
                Rotation::from_axis_angle(&Vec3::z_axis(), w.z * dt)
            } else {
                Rotation::from_scaled_axis(w * dt)
            };
            let rotation = Rotation::new_normalize((turn * body.pose.rotation).into_inner());
            let glide = Vec3::new(v.x * dt, v.y * dt, 0.0);
            let moved = Pose::from_parts((body.pose.translation.vector + glide).into(), rotation);
            let turned = Pose::from_parts(body.pose.translation, rotation);
            let mut accepted = None;
            let mut first_blocker = None;
            let tries: &[(Pose, bool)] = if glide == Vec3::zeros() {
                &[(turned, true)]
            } else {
                &[(moved, false), (turned, true)]
            };
            let mut cargo_prims = std::mem::take(&mut self.cargo_scratch);
            for (pose, turn_only) in tries.iter() {
                Self::prims_at(&body.colliders, pose, id, &mut cand);
                for &m in &body.cargo {
                    let carried = &self.bodies[m as usize];
                    let offset = carried.carrier.map_or(Pose::identity(), |(_, o)| o);
                    Self::prims_at(&carried.colliders, &(pose * offset), m, &mut cargo_prims);
                    cand.extend_from_slice(&cargo_prims);
                }
                // Nothing stops a kinematic body (as in Rapier); it blocks the others.
                let blocked = if free { None } else { self.blocker(id, &cand) };
                match blocked {
                    None => {
                        accepted = Some((*pose, *turn_only));
                        break;
                    }
                    Some((other, qi, k)) if first_blocker.is_none() => {
                        first_blocker = Some((other, qi, cand[k]));
                    }
                    Some(_) => {}
                }
            }
            if let Some((other, qi, p)) = first_blocker {
                // The contact that refused the move: on the other's outline nearest to the own
                // collider, halfway up where the two overlap in height.
                let q = self.prims[qi];
                let (px, py, _) = q.nearest_flat(p.x, p.y);
                let pz = 0.5 * (p.z0.max(q.z0) + p.z1.min(q.z1));
                // The glide is lost either way; the force is what stopped it.
                let body = &self.bodies[b];
                let force = if body.kind == BodyKind::Dynamic {
                    -Vec3::new(v.x, v.y, 0.0) * body.mass / dt
                } else {
                    Vec3::zeros()
                };
                self.record(id, other, Point3::new(px, py, pz), force);
                let body = &mut self.bodies[b];
                body.linvel.x = 0.0;
                body.linvel.y = 0.0;
                if accepted.is_none() {
                    body.angvel = Vec3::zeros();
                }
            }
            if let Some((pose, _)) = accepted {
                // `cand` holds the accepted pose's prims (the loop stopped there): the body's
                // own, then each carried body's in cargo order.
                self.bodies[b].pose = pose;
                let mut at = 0;
                for m in std::iter::once(id).chain(self.bodies[b].cargo.clone()) {
                    let range = self.bodies[m as usize].prims();
                    let n = range.len();
                    self.prims[range].copy_from_slice(&cand[at..at + n]);
                    at += n;
                }
            }
            self.cargo_scratch = cargo_prims;
        }
        self.scratch = cand;
        self.place_cargo(b);
        if self.bodies[b].planar || v.z == 0.0 {
            return;
        }
        if free {
            let rise = v.z * dt;
            let body = &mut self.bodies[b];
            body.pose.translation.vector.z += rise;
            for k in body.prims() {
                self.prims[k].z0 += rise;
                self.prims[k].z1 += rise;
            }
        } else {
            self.rise_or_fall(b, dt);
        }
        self.place_cargo(b);
    }

    /// Puts what body `b` carries where its offsets say, moving with it.
    fn place_cargo(&mut self, b: usize) {
        if self.bodies[b].cargo.is_empty() {
            return;
        }
        let (pose, v, w) = {
            let c = &self.bodies[b];
            (c.pose, c.linvel, c.angvel)
        };
        let mut scratch = std::mem::take(&mut self.cargo_scratch);
        for m in self.bodies[b].cargo.clone() {
            let carried = &mut self.bodies[m as usize];
            let offset = carried.carrier.map_or(Pose::identity(), |(_, o)| o);
            carried.pose = pose * offset;
            let arm = carried.pose.translation.vector - pose.translation.vector;
            carried.linvel = v + w.cross(&arm);
            carried.angvel = w;
            Self::prims_at(&carried.colliders, &carried.pose, m, &mut scratch);
            let range = carried.prims();
            self.prims[range].copy_from_slice(&scratch);
        }
        self.cargo_scratch = scratch;
    }

    /// The vertical part of a move: down to the nearest support (a plane or the top of a body
    /// under it), or up to the nearest ceiling.
    fn rise_or_fall(&mut self, b: usize, dt: f64) {
        let id = b as u32;
        let vz = self.bodies[b].linvel.z;
        let travel = vz * dt;
        let mut limit = travel;
        let mut stop: Option<(u32, usize)> = None;
        for k in self.bodies[b].prims() {
            let p = self.prims[k];
            if travel < 0.0 {
                for &(plane, h) in &self.planes {
                    let gap = p.z0 - h;
                    if -gap > limit {
                        limit = -gap;
                        stop = Some((plane, k));
                    }
                }
            }
            self.near(&p.aabb, |i| {
                let q = &self.prims[i as usize];
                if q.body == id || !p.overlaps_flat(q) {
                    return;
                }
                if travel < 0.0 && q.z1 <= p.z0 + shape::EPS {
                    let gap = (p.z0 - q.z1).max(0.0);
                    if -gap > limit {
                        limit = -gap;
                        stop = Some((q.body, k));
                    }
                } else if travel > 0.0 && q.z0 >= p.z1 - shape::EPS {
                    let gap = (q.z0 - p.z1).max(0.0);
                    if gap < limit {
                        limit = gap;
                        stop = Some((q.body, k));
                    }
                }
            });
        }
        let body = &mut self.bodies[b];
        body.pose.translation.vector.z += limit;
        for k in body.prims() {
            let p = &mut self.prims[k];
            p.z0 += limit;
            p.z1 += limit;
        }
        if let Some((other, k)) = stop {
            let force = if body.kind == BodyKind::Dynamic {
                Vec3::new(0.0, 0.0, -vz * body.mass / dt)
            } else {
                Vec3::zeros()
            };
            body.linvel.z = 0.0;
            let p = self.prims[k];
            let z = if travel < 0.0 { p.z0 } else { p.z1 };
            self.record(id, other, Point3::new(p.x, p.y, z), force);
        }
    }
}

/// Mass, inertia about the body origin (body frame) and principal moments of a body.
fn mass_properties(spec: &BodySpec) -> Result<(f64, Matrix3<f64>, Vec3), String> {
    if spec.kind != BodyKind::Dynamic {
        return Ok((0.0, Matrix3::zeros(), Vec3::zeros()));
    }
    if let MassSpec::Explicit { mass, inertia } = spec.mass {
        return Ok((mass, Matrix3::from_diagonal(&inertia), inertia));
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

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            joints: false,
            contact_dynamics: false,
            friction: false,
            exact_shapes: false,
            attach: true,
        }
    }

    fn add_body(&mut self, spec: &BodySpec) -> Result<BodyId, String> {
        let id = self.bodies.len() as u32;
        let (mass, inertia, principal) = mass_properties(spec)?;
        let mut colliders = Vec::new();
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
                colliders.push((c.shape, c.local_pose));
            }
        }
        let first = self.prims.len();
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
        self.prims.extend(prims);
        if spec.kind == BodyKind::Static {
            self.static_dirty = true;
        }
        self.bodies.push(Body {
            kind: spec.kind,
            pose: spec.pose,
            linvel: Vec3::zeros(),
            angvel: Vec3::zeros(),
            command: (Vec3::zeros(), Vec3::zeros()),
            mass,
            inertia,
            principal,
            linear_damping: spec.linear_damping,
            angular_damping: spec.angular_damping,
            planar: spec.planar,
            colliders,
            first,
            reach,
            force: Vec3::zeros(),
            torque: Vec3::zeros(),
            carrier: None,
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
        check_attach(
            body,
            carrier,
            |id| self.bodies.get(id.index()).map(|b| b.kind),
            &offset,
        )?;
        if !self.bodies[body.index()].cargo.is_empty() {
            return Err(format!(
                "body {} carries others: it cannot be carried itself",
                body.0
            ));
        }
        if self.bodies[carrier.index()].carrier.is_some() {
            return Err(format!("body {} is carried: it cannot carry", carrier.0));
        }
        if self.bodies[body.index()].carrier.map(|(c, _)| c) != Some(carrier.0) {
            self.detach(body);
            self.bodies[carrier.index()].cargo.push(body.0);
        }
        self.bodies[body.index()].carrier = Some((carrier.0, offset));
        Ok(())
    }

    fn detach(&mut self, body: BodyId) {
        let Some(b) = self.bodies.get_mut(body.index()) else {
            return;
        };
        let Some((c, _)) = b.carrier.take() else {
            return;
        };
        // Nothing here would ever slow a glide (no friction): a released body drops straight
        // down, as Stage's gripper puts things down.
        (b.linvel.x, b.linvel.y, b.angvel) = (0.0, 0.0, Vec3::zeros());
        self.bodies[c as usize].cargo.retain(|&m| m != body.0);
    }

    fn attachment(&self, body: BodyId) -> Option<(BodyId, Pose)> {
        let (c, offset) = self.bodies.get(body.index())?.carrier?;
        Some((BodyId(c), offset))
    }

    fn body_mass(&self, body: BodyId) -> f64 {
        self.bodies.get(body.index()).map_or(0.0, |b| b.mass)
    }

    fn body_inertia(&self, body: BodyId) -> Vec3 {
        self.bodies
            .get(body.index())
            .map_or(Vec3::zeros(), |b| b.principal)
    }

    fn apply(&mut self, command: &BodyCommand) {
        let body = match *command {
            BodyCommand::JointTarget { .. }
            | BodyCommand::Attach { .. }
            | BodyCommand::Detach { .. } => return,
            BodyCommand::Force { body, .. }
            | BodyCommand::ForceAtPoint { body, .. }
            | BodyCommand::Torque { body, .. }
            | BodyCommand::Velocity { body, .. } => body,
        };
        let Some(b) = self.bodies.get_mut(body.index()) else {
            return;
        };
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
                b.linvel = linear;
                b.angvel = angular;
            }
            (_, BodyKind::Kinematic) => {}
            (BodyCommand::Force { force, .. }, _) => b.force += force,
            (BodyCommand::ForceAtPoint { force, point, .. }, _) => {
                b.force += force;
                b.torque += (point.coords - b.pose.translation.vector).cross(&force);
            }
            (BodyCommand::Torque { torque, .. }, _) => b.torque += torque,
            (
                BodyCommand::JointTarget { .. }
                | BodyCommand::Attach { .. }
                | BodyCommand::Detach { .. },
                _,
            ) => {}
        }
    }

    fn step(&mut self, dt: f64) {
        self.contacts.clear();
        for b in 0..self.bodies.len() {
            self.accelerate(b, dt);
        }
        self.index_movers(dt);
        for b in 0..self.bodies.len() {
            // A carried body moves with its carrier (`place_cargo`), not on its own.
            if self.bodies[b].moves() && self.bodies[b].carrier.is_none() {
                self.advance(b, dt);
            }
        }
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
        for (slot, b) in out.iter_mut().zip(&self.bodies) {
            *slot = BodyState {
                pose: b.pose,
                linvel: b.linvel,
                angvel: b.angvel,
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
        let norm = direction.norm();
        if !(norm > 0.0 && norm.is_finite() && max_distance > 0.0) {
            return None;
        }
        let (o, d) = (origin.coords, direction / norm);
        let offer = |best: &mut Option<RayHit>, body: u32, distance: f64, normal: Vec3| {
            let better = best.is_none_or(|h| {
                distance < h.distance || (distance == h.distance && body < h.body.0)
            });
            if better && !exclude(BodyId(body)) {
                *best = Some(RayHit {
                    body: BodyId(body),
                    distance,
                    normal,
                });
            }
        };
        let test = |best: &mut Option<RayHit>, i: u32| {
            let p = &self.prims[i as usize];
            // Cull by the bounds of what is left of the ray (most candidates in a crowd).
            let reach = best.map_or(max_distance, |h| h.distance);
            let (ex, ey) = (o.x + d.x * reach, o.y + d.y * reach);
            if p.aabb[0] > o.x.max(ex)
                || p.aabb[2] < o.x.min(ex)
                || p.aabb[1] > o.y.max(ey)
                || p.aabb[3] < o.y.min(ey)
            {
                return;
            }
            if let Some((t, n)) = p.cast(&o, &d, max_distance) {
                offer(best, p.body, t, n);
            }
        };
        let mut best = None;
        for &(body, h) in &self.planes {
            if o.z <= h {
                offer(&mut best, body, 0.0, Vec3::zeros());
            } else if d.z < 0.0 {
                let t = (h - o.z) / d.z;
                if t <= max_distance {
                    offer(&mut best, body, t, Vec3::z());
                }
            }
        }
        match &self.layout {
            None => (0..self.prims.len() as u32).for_each(|i| test(&mut best, i)),
            Some(layout) => {
                for &i in &self.outside {
                    test(&mut best, i);
                }
                grid::walk(
                    layout,
                    (o.x, o.y),
                    (d.x, d.y),
                    max_distance,
                    |x, y, leave| {
                        for &i in self.statics.cell(layout, x, y) {
                            test(&mut best, i);
                        }
                        self.movers.cell(layout, x, y, |i| test(&mut best, i));
                        // A hit before this cell's exit cannot be beaten further on.
                        best.is_none_or(|h: RayHit| h.distance > leave)
                    },
                );
            }
        }
        best
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
        self.near(&b, |i| {
            let p = &self.prims[i as usize];
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
