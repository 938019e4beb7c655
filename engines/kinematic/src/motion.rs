//! Moving the bodies over a step, strip by strip, on the Environment's workers.
//!
//! Bodies move one at a time, each seeing the moves made before it (Stage's rule). The order
//! comes from the grid: its rows are cut into strips [`STRIP`] cells high, and a mover belongs
//! to the strip of the lowest row that its bounds swept over the step meet. A planar mover whose
//! swept bounds meet at most [`STRIP`] rows (with what it carries, all of it where it is held)
//! *fits*: its move stays within those bounds (they allow for any turn about z; the test below
//! checks it), so it reads and writes only prims filed in the rows it meets, and every body filed
//! there belongs to its own strip or one beside it. So strips two apart never meet: the even
//! strips move at once, shared among the workers, each strip's movers in id order; then the odd
//! strips; then, one by one in id order, the movers that do not fit (not planar, whose tilts the
//! bounds do not cover; carrying cargo that jumps to its place on this move; taller than a
//! strip; partly outside the grid). A world with fewer than [`MIN_STRIPS`] movers moves them all
//! in id order. The order depends on the world alone, and contacts are kept in strip order, so
//! results do not depend on the number of workers.

use ssx_core::counters::{self, Work};
use ssx_core::engine::{BodyId, BodyKind, Contact};
use ssx_core::math::{Point3, Pose, Rotation, Vec3};
use ssx_core::parallel::{self, Parallel};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::shape::{self, Prim};
use crate::{KinematicEngine, Motion};

/// Strip height in grid rows. Cells are twice the median footprint, so nearly every robot fits.
/// Strips run along x because a scene's replicated grids number their robots along x first:
/// a strip's movers in id order then lie near each other in memory (column strips made each
/// move some 50% dearer at 10,000 robots).
const STRIP: usize = 2;

/// A pass with fewer movers than this runs on the calling thread (waking a worker costs more).
const MIN_SHARED: usize = 128;

/// A world with fewer movers than this moves them all in id order on the calling thread: too
/// few to share, and planning strips would cost more than it saves.
pub(crate) const MIN_STRIPS: usize = 2 * MIN_SHARED;

/// The movers in the order they move (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Strip `s`'s movers are `members[start[s]..start[s + 1]]`, in id order.
    start: Vec<u32>,
    members: Vec<u32>,
    /// Each body's strip, `u32::MAX` for none (scratch for building).
    strip_of: Vec<u32>,
    /// The movers that fit no strip, in id order.
    serial: Vec<u32>,
    /// Where each strip's next mover goes (scratch for building).
    next: Vec<u32>,
    /// A pass's non-empty strips, the most movers first: the order lanes claim them in.
    claims: Vec<u32>,
    /// Each strip's contacts in a pass: (strip, lane, first, end) (scratch for merging).
    spans: Vec<(u32, usize, usize, usize)>,
    /// Each body's prims' bounds swept over the step, and whether all lie inside the grid
    /// (scratch for building).
    sweeps: Vec<([f64; 4], bool)>,
}

impl Plan {
    fn strips(&self) -> usize {
        self.start.len().saturating_sub(1)
    }

    fn strip(&self, s: usize) -> &[u32] {
        &self.members[self.start[s] as usize..self.start[s + 1] as usize]
    }

    /// Lists the non-empty strips of one parity in `claims`, the most movers first (ties in
    /// strip order); returns their movers in all.
    fn order_claims(&mut self, parity: usize) -> usize {
        let strips = self.strips();
        let Plan { start, claims, .. } = self;
        let len = |s: u32| (start[s as usize + 1] - start[s as usize]) as usize;
        claims.clear();
        claims.extend((parity..strips).step_by(2).map(|s| s as u32));
        claims.retain(|&s| len(s) > 0);
        claims.sort_by_key(|&s| std::cmp::Reverse(len(s)));
        claims.iter().map(|&s| len(s)).sum()
    }
}

/// One worker's share of a pass: the contacts of the strips it moved, and scratch. Alone on its
/// cache lines (128 bytes: a line and the one the prefetcher pairs with it): the lanes sit side
/// by side in a `Vec`, and each writes its vectors' lengths at every move.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Lane {
    contacts: Vec<(u32, Contact)>,
    /// The strips it moved, in the order it moved them, each with where its contacts begin.
    strips: Vec<(u32, usize)>,
    scratch: Vec<Prim>,
    cargo_scratch: Vec<Prim>,
}

impl Lane {
    fn record(&mut self, b: u32, other: u32, point: Point3, force: Vec3) {
        let contact = |other: u32, force: Vec3| Contact {
            other: BodyId(other),
            point,
            force,
        };
        self.contacts.push((b, contact(other, force)));
        self.contacts.push((other, contact(b, -force)));
    }
}

impl KinematicEngine {
    /// Moves every body that moves on its own (carried ones go with their carrier), in the
    /// order of the module docs; `par`'s workers share the strips of a pass.
    pub(crate) fn move_bodies(&mut self, dt: f64, par: &dyn Parallel) {
        let mut lanes = std::mem::take(&mut self.lanes);
        let workers = par.workers().max(1);
        // As many as there are workers, no more: a batch's worlds each keep theirs (128 bytes a
        // lane, and `Vec`'s first growth is four).
        lanes.reserve_exact(workers.saturating_sub(lanes.len()));
        lanes.resize_with(workers, Lane::default);
        if self.moving < MIN_STRIPS {
            let lane = &mut lanes[0];
            lane.contacts.clear();
            for b in 0..self.bodies.len() {
                if self.bodies[b].carried_by.is_none() {
                    // SAFETY: this thread alone moves bodies in this world (no pass runs).
                    unsafe { self.advance(lane, b, dt) };
                }
            }
            self.contacts.extend_from_slice(&lane.contacts);
            self.lanes = lanes;
            return;
        }
        let mut plan = self.plan_moves();
        for parity in 0..2 {
            // Lanes claim whole strips, the largest first, as they come free: which lane moves
            // a strip does not change its result (strips of a parity never meet), only how
            // evenly the lanes share the pass.
            let total = plan.order_claims(parity);
            if total == 0 {
                continue;
            }
            let n = if total < MIN_SHARED { 1 } else { lanes.len() };
            let engine = &*self;
            let plan_ref = &plan;
            let claimed = AtomicUsize::new(0);
            parallel::for_each_mut(par, &mut lanes[..n], &|_, lane| {
                lane.contacts.clear();
                lane.strips.clear();
                while let Some(&s) = plan_ref.claims.get(claimed.fetch_add(1, Ordering::Relaxed)) {
                    lane.strips.push((s, lane.contacts.len()));
                    for &b in plan_ref.strip(s as usize) {
                        // SAFETY: `b` fits strip `s`, which this lane alone claimed; the
                        // strips of one parity never meet, so no other thread reads or writes
                        // anything `b`'s move touches (module docs) until `for_each_mut`
                        // returns.
                        unsafe { engine.advance(lane, b as usize, dt) };
                    }
                }
            });
            // Contacts in strip order, whichever lane moved each strip.
            plan.spans.clear();
            for (k, lane) in lanes[..n].iter().enumerate() {
                let ends = lane.strips.iter().skip(1).map(|&(_, at)| at);
                for (&(s, first), end) in lane.strips.iter().zip(ends.chain([lane.contacts.len()]))
                {
                    plan.spans.push((s, k, first, end));
                }
            }
            plan.spans.sort_unstable_by_key(|&(s, ..)| s);
            for &(_, k, first, end) in &plan.spans {
                self.contacts
                    .extend_from_slice(&lanes[k].contacts[first..end]);
            }
        }
        let lane = &mut lanes[0];
        lane.contacts.clear();
        for &b in &plan.serial {
            // SAFETY: this thread alone runs now (the passes above have returned).
            unsafe { self.advance(lane, b as usize, dt) };
        }
        self.contacts.extend_from_slice(&lane.contacts);
        self.plan = Some(plan);
        self.lanes = lanes;
    }

    /// Sorts the movers into strips, or the serial rest (from the grid's entries): the plan,
    /// taken out of the engine until the moves are done.
    fn plan_moves(&mut self) -> Box<Plan> {
        let mut boxed = self.plan.take().unwrap_or_default();
        let plan: &mut Plan = &mut boxed;
        // Each body's prims' bounds swept over the step, and whether all lie in the grid.
        let none = ([f64::MAX, f64::MAX, f64::MIN, f64::MIN], true);
        plan.sweeps.clear();
        plan.sweeps.resize(self.bodies.len(), none);
        // The movers' prims are filed under their numbers, walls first (statics.rs).
        let mover = |e: &Self, i: u32| {
            let id = e.mover_prim(i).body;
            e.slots[id as usize].as_mover().expect("a mover's prim")
        };
        for &(i, s) in &self.entries {
            let m = mover(self, i);
            let sweep = &mut plan.sweeps[m].0;
            *sweep = union(sweep, &s);
        }
        for &i in &self.outside {
            let m = mover(self, i);
            plan.sweeps[m].1 = false;
        }
        plan.serial.clear();
        plan.strip_of.clear();
        let layout = self.layout;
        let strips = layout.map_or(0, |l| l.ny.div_ceil(STRIP));
        plan.start.clear();
        plan.start.resize(strips + 1, 0);
        for (b, body) in self.bodies.iter().enumerate() {
            let mut strip = u32::MAX;
            if body.carried_by.is_none() {
                match layout.and_then(|layout| {
                    let (mut bounds, mut inside) = plan.sweeps[b];
                    let here = self.motion.get(b).pose;
                    for &m in &body.cargo {
                        let (s, i) = plan.sweeps[m as usize];
                        // Cargo just attached (or moved on its carrier) jumps to its place on
                        // this move, outside the bounds it was filed under.
                        inside &= i && placed(&self.bodies, &self.motion, m as usize, &here);
                        bounds = union(&bounds, &s);
                    }
                    let (_, y0, _, y1) = layout.span(&bounds);
                    // Only a planar body's move stays within its swept bounds (they allow for
                    // turns about z, not tilts); a body without prims has empty bounds.
                    let fits = body.planar && inside && bounds[1] <= bounds[3] && y1 - y0 < STRIP;
                    fits.then_some(y0 / STRIP)
                }) {
                    Some(s) => {
                        strip = s as u32;
                        plan.start[s + 1] += 1;
                    }
                    None => plan.serial.push(b as u32),
                }
            }
            plan.strip_of.push(strip);
        }
        for s in 0..strips {
            plan.start[s + 1] += plan.start[s];
        }
        plan.members.clear();
        plan.members.resize(plan.start[strips] as usize, 0);
        // Filled in id order, so each strip lists its movers in id order.
        plan.next.clear();
        plan.next.extend_from_slice(&plan.start);
        for (b, &s) in plan.strip_of.iter().enumerate() {
            if s != u32::MAX {
                let at = &mut plan.next[s as usize];
                plan.members[*at as usize] = b as u32;
                *at += 1;
            }
        }
        boxed
    }

    /// The first other body that `cand` (mover `b`'s prims at a new pose) would overlap and its
    /// old pose does not: (other body's id, the other's prim, the own prim).
    fn blocker(&self, b: u32, cand: &[Prim]) -> Option<(u32, u32, usize)> {
        let body = &self.bodies[b as usize];
        let cargo = &body.cargo;
        let group =
            |id: u32| id == body.id || cargo.iter().any(|&m| self.bodies[m as usize].id == id);
        let old_overlaps = |q: &Prim| {
            std::iter::once(b).chain(cargo.iter().copied()).any(|m| {
                self.bodies[m as usize]
                    .prims()
                    .any(|i| self.prims.get_ref(i).overlaps(q))
            })
        };
        for (k, p) in cand.iter().enumerate() {
            let mut found = None;
            self.near(&p.aabb, |i, q| {
                counters::add(Work::MoveCandidate, 1);
                if found.is_some() {
                    return;
                }
                if group(q.body) {
                    return;
                }
                counters::add(Work::OverlapTest, 1);
                if !p.overlaps(q) {
                    return;
                }
                // Leaving an overlap the body (or what it carries) is already in is allowed.
                if !old_overlaps(q) {
                    found = Some((q.body, i, k));
                }
            });
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// Moves body `b` over the step: the turn and glide in the plane first (refused into other
    /// bodies), then up or down (stopped by what is under or over it).
    ///
    /// # Safety
    /// Until it returns, no other thread may read or write body `b`, what it carries, or the
    /// prims filed in the grid cells that `b`'s and its cargo's bounds swept over the step meet.
    unsafe fn advance(&self, lane: &mut Lane, b: usize, dt: f64) {
        let body = &self.bodies[b];
        let mut motion = self.motion.get(b);
        let (v, w) = (motion.linvel, motion.angvel);
        let id = body.id;
        let free = body.kind == BodyKind::Kinematic;
        if v.x != 0.0 || v.y != 0.0 || w != Vec3::zeros() {
            counters::add(Work::Move, 1);
            let mut cand = std::mem::take(&mut lane.scratch);
            let mut cargo_prims = std::mem::take(&mut lane.cargo_scratch);
            let turn = if body.planar {
                Rotation::from_axis_angle(&Vec3::z_axis(), w.z * dt)
            } else {
                Rotation::from_scaled_axis(w * dt)
            };
            let rotation = Rotation::new_normalize((turn * motion.pose.rotation).into_inner());
            let glide = Vec3::new(v.x * dt, v.y * dt, 0.0);
            let moved = Pose::from_parts((motion.pose.translation.vector + glide).into(), rotation);
            let turned = Pose::from_parts(motion.pose.translation, rotation);
            let mut accepted = None;
            let mut first_blocker = None;
            let tries: &[Pose] = if glide == Vec3::zeros() {
                &[turned]
            } else {
                &[moved, turned]
            };
            for pose in tries {
                counters::add(Work::MoveTry, 1);
                Self::prims_at(&body.colliders, pose, id, &mut cand);
                for &m in &body.cargo {
                    let carried = &self.bodies[m as usize];
                    let offset = carried.carrier().map_or(Pose::identity(), |(_, o)| o);
                    let at = pose * offset;
                    Self::prims_at(&carried.colliders, &at, carried.id, &mut cargo_prims);
                    cand.extend_from_slice(&cargo_prims);
                }
                // Nothing stops a kinematic body (as in Rapier); it blocks the others.
                let blocked = if free {
                    None
                } else {
                    self.blocker(b as u32, &cand)
                };
                match blocked {
                    None => {
                        accepted = Some(*pose);
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
                let q = *self.prim(qi);
                let (px, py, _) = q.nearest_flat(p.x, p.y);
                let pz = 0.5 * (p.z0.max(q.z0) + p.z1.min(q.z1));
                // The glide is lost either way; the force is what stopped it.
                let force = if body.kind == BodyKind::Dynamic {
                    -Vec3::new(v.x, v.y, 0.0) * body.mass / dt
                } else {
                    Vec3::zeros()
                };
                lane.record(id, other, Point3::new(px, py, pz), force);
                motion.linvel.x = 0.0;
                motion.linvel.y = 0.0;
                if accepted.is_none() {
                    motion.angvel = Vec3::zeros();
                }
            }
            if let Some(pose) = accepted {
                // `cand` holds the accepted pose's prims (the loop stopped there): the body's
                // own, then each carried body's in cargo order.
                motion.pose = pose;
                let mut from = cand.iter();
                for m in std::iter::once(b as u32).chain(body.cargo.iter().copied()) {
                    for (i, p) in self.bodies[m as usize].prims().zip(&mut from) {
                        // SAFETY: a prim of `b` or its cargo (this function's contract).
                        unsafe { self.prims.set_shared(i, *p) };
                    }
                }
            }
            lane.scratch = cand;
            lane.cargo_scratch = cargo_prims;
        }
        // SAFETY (here and below): body `b` and its cargo are this call's (its contract).
        unsafe { self.put_motion(b, motion, lane) };
        if body.planar || v.z == 0.0 {
            return;
        }
        if free {
            let rise = v.z * dt;
            motion.pose.translation.vector.z += rise;
            unsafe { self.shift_up(b, rise) };
        } else {
            unsafe { self.rise_or_fall(lane, b, &mut motion, dt) };
        }
        unsafe { self.put_motion(b, motion, lane) };
    }

    /// Sets body `b`'s motion and puts what it carries where its offsets say, moving with it.
    ///
    /// # Safety
    /// As [`KinematicEngine::advance`] for `b`.
    #[inline]
    unsafe fn put_motion(&self, b: usize, motion: Motion, lane: &mut Lane) {
        // SAFETY: `b` is the caller's (contract).
        unsafe { self.motion.set_shared(b, motion) };
        if self.bodies[b].cargo.is_empty() {
            return;
        }
        let Motion {
            pose,
            linvel: v,
            angvel: w,
        } = motion;
        let mut scratch = std::mem::take(&mut lane.cargo_scratch);
        for &m in &self.bodies[b].cargo {
            let carried = &self.bodies[m as usize];
            let offset = carried.carrier().map_or(Pose::identity(), |(_, o)| o);
            let placed = pose * offset;
            let arm = placed.translation.vector - pose.translation.vector;
            let moved = Motion {
                pose: placed,
                linvel: v + w.cross(&arm),
                angvel: w,
            };
            Self::prims_at(&carried.colliders, &placed, carried.id, &mut scratch);
            // SAFETY: `m` is carried by `b`, so the caller's too (contract).
            unsafe {
                self.motion.set_shared(m as usize, moved);
                for (i, p) in carried.prims().zip(&scratch) {
                    self.prims.set_shared(i, *p);
                }
            }
        }
        lane.cargo_scratch = scratch;
    }

    /// Moves body `b`'s own prims up by `rise`.
    ///
    /// # Safety
    /// As [`KinematicEngine::advance`] for `b`.
    unsafe fn shift_up(&self, b: usize, rise: f64) {
        for i in self.bodies[b].prims() {
            let mut p = self.prims.get(i);
            p.z0 += rise;
            p.z1 += rise;
            // SAFETY: a prim of `b` (contract).
            unsafe { self.prims.set_shared(i, p) };
        }
    }

    /// The vertical part of a move: down to the nearest support (a plane or the top of a body
    /// under it), or up to the nearest ceiling.
    ///
    /// # Safety
    /// As [`KinematicEngine::advance`] for `b`.
    unsafe fn rise_or_fall(&self, lane: &mut Lane, b: usize, motion: &mut Motion, dt: f64) {
        let body = &self.bodies[b];
        let id = body.id;
        let vz = motion.linvel.z;
        let travel = vz * dt;
        let mut limit = travel;
        let mut stop: Option<(u32, usize)> = None;
        for k in body.prims() {
            let p = self.prims.get(k);
            if travel < 0.0 {
                for &(plane, h) in &self.planes {
                    let gap = p.z0 - h;
                    if -gap > limit {
                        limit = -gap;
                        stop = Some((plane, k));
                    }
                }
            }
            self.near(&p.aabb, |_, q| {
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
        motion.pose.translation.vector.z += limit;
        // SAFETY: `b` is the caller's (contract).
        unsafe { self.shift_up(b, limit) };
        if let Some((other, k)) = stop {
            let force = if body.kind == BodyKind::Dynamic {
                Vec3::new(0.0, 0.0, -vz * body.mass / dt)
            } else {
                Vec3::zeros()
            };
            motion.linvel.z = 0.0;
            let p = self.prims.get(k);
            let z = if travel < 0.0 { p.z0 } else { p.z1 };
            lane.record(id, other, Point3::new(p.x, p.y, z), force);
        }
    }
}

/// The smallest box holding both (min x, min y, max x, max y).
fn union(a: &[f64; 4], b: &[f64; 4]) -> [f64; 4] {
    [
        a[0].min(b[0]),
        a[1].min(b[1]),
        a[2].max(b[2]),
        a[3].max(b[3]),
    ]
}

/// Whether carried body `m` is where its carrier, at `carrier`, holds it.
fn placed(bodies: &[crate::Body], motion: &crate::Slots<Motion>, m: usize, carrier: &Pose) -> bool {
    let Some((_, offset)) = bodies[m].carrier() else {
        return false;
    };
    let want = carrier * offset;
    let at = motion.get(m).pose;
    (want.translation.vector - at.translation.vector).norm() <= 1e-9
        && want.rotation.angle_to(&at.rotation) <= 1e-9
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use ssx_core::engine::{BodyCommand, BodyKind, BodySpec, ColliderSpec, EngineConfig, MassSpec};
    use ssx_core::engine::{PhysicEngine, Shape};
    use ssx_core::math::{Pose, Rotation, Vec3, pose_from_xyz_rpy};
    use ssx_core::parallel::Serial;

    use crate::KinematicEngine;

    /// The invariant the strips' `unsafe` rests on: a body moved in a strip (a planar body, and
    /// what it carries) keeps every prim of its move inside the bounds its prims were filed under
    /// for the step. Random planar bodies: boxes and tilted cylinders, off-centre colliders,
    /// fast turns, some carrying a box where it holds it, some pushed hard while carrying a box
    /// of an earlier id; and some given cargo that jumps to them on this move, and tumbling
    /// boxes, which must move alone.
    #[test]
    fn a_planar_move_stays_within_its_swept_bounds() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let mut e = KinematicEngine::new(&EngineConfig {
            gravity: Vec3::new(0.0, 0.0, -9.81),
            timestep: 0.01,
        });
        let collider = |shape: Shape, at: Pose| ColliderSpec {
            shape,
            local_pose: at,
            friction: 0.5,
            restitution: 0.0,
        };
        // A free 20 cm cube of 1 kg.
        let box_at = |xyz: [f64; 3]| BodySpec {
            kind: BodyKind::Dynamic,
            pose: pose_from_xyz_rpy(xyz, [0.0, 0.0, 0.0]),
            mass: MassSpec::Mass(1.0),
            colliders: vec![collider(
                Shape::Box {
                    half_extents: Vec3::new(0.1, 0.1, 0.1),
                },
                Pose::identity(),
            )],
            linear_damping: 0.0,
            angular_damping: 0.0,
            planar: false,
            group: 0,
        };
        // Boxes that later bodies will carry (a carrier after its cargo in id order).
        let early: Vec<_> = (0..10)
            .map(|k| e.add_body(&box_at([k as f64, -45.0, 1.0])).unwrap())
            .collect();
        let mut movers = Vec::new();
        for i in 0..300 {
            let xyz = [
                rng.random_range(-30.0..30.0),
                rng.random_range(-30.0..30.0),
                0.3,
            ];
            let mut colliders = vec![collider(
                Shape::Box {
                    half_extents: Vec3::new(rng.random_range(0.05..0.6), 0.2, 0.1),
                },
                Pose::translation(rng.random_range(-0.3..0.3), 0.1, 0.0),
            )];
            if i % 3 == 0 {
                let tilt =
                    pose_from_xyz_rpy([0.0, 0.3, 0.1], [rng.random_range(0.2..1.4), 0.0, 0.0]);
                colliders.push(collider(
                    Shape::Cylinder {
                        radius: 0.1,
                        half_length: 0.3,
                    },
                    tilt,
                ));
            }
            let spec = BodySpec {
                pose: pose_from_xyz_rpy(xyz, [0.0, 0.0, rng.random_range(-3.0..3.0)]),
                mass: MassSpec::Mass(5.0),
                colliders,
                planar: true,
                group: 0,
                ..box_at(xyz)
            };
            let id = e.add_body(&spec).unwrap();
            if i % 5 == 0 {
                let cargo = e
                    .add_body(&BodySpec {
                        planar: false,
                        group: 0,
                        pose: pose_from_xyz_rpy([xyz[0], xyz[1], 1.0], [0.0, 0.0, 0.0]),
                        ..spec.clone()
                    })
                    .unwrap();
                e.attach(
                    cargo,
                    id,
                    pose_from_xyz_rpy([0.4, -0.2, 0.5], [0.0, 0.0, 0.7]),
                )
                .unwrap();
            }
            movers.push(id);
        }
        let pushed: Vec<_> = early
            .iter()
            .enumerate()
            .map(|(j, &cargo)| {
                let carrier = movers[j * 17 + 1];
                e.attach(
                    cargo,
                    carrier,
                    pose_from_xyz_rpy([0.3, 0.9, 0.5], [0.0, 0.0, 0.4]),
                )
                .unwrap();
                carrier
            })
            .collect();
        // One step places the cargo; then more is attached, which jumps on the next move.
        e.step(0.01);
        for (_, &id) in movers.iter().enumerate().filter(|(k, _)| k % 7 == 3) {
            // Half a metre from where it will be held: a jump within the carrier's rows.
            let p = e.motion.get(id.0 as usize).pose.translation.vector;
            let cargo = e.add_body(&box_at([p.x, p.y + 0.5, 1.0])).unwrap();
            e.attach(cargo, id, Pose::translation(0.0, 0.0, 0.6))
                .unwrap();
        }
        for &id in &movers {
            e.apply(&BodyCommand::Velocity {
                body: id,
                linear: Vec3::new(
                    rng.random_range(-3.0..3.0),
                    rng.random_range(-3.0..3.0),
                    0.0,
                ),
                angular: Vec3::new(0.0, 0.0, rng.random_range(-40.0..40.0)),
            });
        }
        // Carriers pushed hard (1 m/s more each step): their cargo, integrated before them,
        // must still be filed for where they take it.
        for &id in &pushed {
            e.apply(&BodyCommand::Velocity {
                body: id,
                linear: Vec3::new(0.5, 0.0, 0.0),
                angular: Vec3::zeros(),
            });
            e.apply(&BodyCommand::Force {
                body: id,
                force: Vec3::new(0.0, 500.0, 0.0),
            });
        }
        // Bodies that tumble: their tilts leave any bounds a turn about z allows for.
        let tumbling: Vec<_> = (0..20)
            .map(|k| {
                let id = e.add_body(&box_at([k as f64 - 10.0, 35.0, 2.0])).unwrap();
                e.apply(&BodyCommand::Velocity {
                    body: id,
                    linear: Vec3::zeros(),
                    angular: Vec3::new(30.0, 0.0, 0.0),
                });
                id
            })
            .collect();
        let dt = 0.01;
        e.accelerate_all(dt, &Serial);
        e.index_movers(dt, &Serial);
        let plan = e.plan_moves();
        let mut checked = 0;
        let mut cand = Vec::new();
        // The bodies in strips; the others move alone, after the passes.
        let serial = &plan.serial;
        let jumping = movers.iter().enumerate().filter(|(k, _)| k % 7 == 3);
        assert!(jumping.clone().all(|(_, id)| serial.contains(&id.0)));
        assert!(tumbling.iter().all(|id| serial.contains(&id.0)));
        assert!(pushed.iter().any(|id| !serial.contains(&id.0)));
        for &id in movers.iter().filter(|id| !serial.contains(&id.0)) {
            let b = id.0 as usize;
            let body = &e.bodies[b];
            let (mut bounds, _) = plan.sweeps[b];
            for &m in &body.cargo {
                bounds = super::union(&bounds, &plan.sweeps[m as usize].0);
            }
            let m = e.motion.get(b);
            let turn = Rotation::from_axis_angle(&Vec3::z_axis(), m.angvel.z * dt);
            let rotation = Rotation::new_normalize((turn * m.pose.rotation).into_inner());
            let glide = Vec3::new(m.linvel.x * dt, m.linvel.y * dt, 0.0);
            for pose in [
                Pose::from_parts((m.pose.translation.vector + glide).into(), rotation),
                Pose::from_parts(m.pose.translation, rotation),
            ] {
                KinematicEngine::prims_at(&body.colliders, &pose, id.0, &mut cand);
                for &c in &body.cargo {
                    let carried = &e.bodies[c as usize];
                    let offset = carried.carrier().map_or(Pose::identity(), |(_, o)| o);
                    let mut more = Vec::new();
                    KinematicEngine::prims_at(&carried.colliders, &(pose * offset), c, &mut more);
                    cand.extend(more);
                }
                for p in &cand {
                    let a = p.aabb;
                    assert!(
                        a[0] >= bounds[0]
                            && a[1] >= bounds[1]
                            && a[2] <= bounds[2]
                            && a[3] <= bounds[3],
                        "body {b}: prim {a:?} leaves its swept bounds {bounds:?}"
                    );
                    checked += 1;
                }
            }
        }
        // Most bodies were in strips (the others: jumping cargo, or bounds over two rows).
        let in_strips = movers.len() - movers.iter().filter(|id| serial.contains(&id.0)).count();
        assert!(
            in_strips > 200 && checked > 600,
            "{in_strips} bodies, {checked} prims"
        );
    }
}
