//! The query index: every collider but the ground planes filed once per step in a uniform grid
//! over the plane ([`ssx_core::spatial`]), shared read-only by all the sensors and drivers of
//! that step.
//!
//! Rapier's own BVH answers the same queries exactly but, for the short rays and small balls of
//! a swarm's sensors, visits a hundred of its boxes per ray (16,000 rays of 2 m among 2000
//! quadrotors took 0.66 µs each; a ground plane's unbounded box made it 0.85 µs). The grid visits
//! the two or three cells a ray crosses and tests the few colliders listed there with the same
//! parry functions Rapier's query pipeline calls, so a hit is the same hit, to the bit. Ground
//! planes are met in closed form by the engine.
//!
//! The layout covers the bulk of the colliders: those whose centre lies more than one bulk's
//! width beyond the 5–95% span of all the centres (a body that fell off the world, a ground box
//! kilometres wide) are kept in a short list and tested one by one, so one of them cannot make
//! every cell huge.

use rapier3d::math::{Pose as RPose, Vec3};
use rapier3d::parry::bounding_volume::Aabb;
use rapier3d::parry::query::{QueryDispatcher, Ray, RayIntersection};
use rapier3d::parry::shape::{Ball, ShapeType, SharedShape};
use rapier3d::prelude::ColliderSet;
use ssx_core::engine::BodyId;
use ssx_core::spatial::{Grid, Layout, walk};

/// Colliders are filed under their box grown by this much (m), so that rounding between the
/// f64 walk and f32 geometry cannot leave a hit in a cell the walk skipped.
const PAD: f64 = 1e-3;

/// A collider as of the last step: its shape, its pose, its body, its box grown by [`PAD`].
struct Item {
    shape: SharedShape,
    pose: RPose,
    body: BodyId,
    aabb: Aabb,
    /// The box filed, in the plane: `[x0, y0, x1, y1]`.
    flat: [f64; 4],
    /// The first cell (column, row) it is filed in.
    first: (u32, u32),
}

/// See the module docs.
#[derive(Default)]
pub(crate) struct QueryIndex {
    layout: Option<Layout>,
    grid: Grid,
    items: Vec<Item>,
    /// Items left out of the layout, tested by every query.
    outside: Vec<u32>,
    /// The lowest and highest z of the filed items' (padded) boxes: a ray is walked through
    /// the grid only where it lies between them.
    heights: (f64, f64),
    /// Scratch lists kept between builds.
    scratch: (Vec<f64>, Vec<f64>),
    entries: Vec<(u32, [f64; 4])>,
    counts: Vec<u32>,
}

/// The `q`-quantile of `v` (reordering it).
fn quantile(v: &mut [f64], q: f64) -> f64 {
    let k = ((v.len() - 1) as f64 * q).round() as usize;
    *v.select_nth_unstable_by(k, f64::total_cmp).1
}

impl QueryIndex {
    /// Files every collider of the set except half-spaces, reusing this index's memory.
    pub(crate) fn rebuild(&mut self, colliders: &ColliderSet) {
        self.items.clear();
        self.outside.clear();
        self.layout = None;
        for (_, co) in colliders.iter() {
            if co.shape().shape_type() == ShapeType::HalfSpace {
                continue;
            }
            let tight = co.compute_aabb();
            let (lo, hi) = (tight.mins, tight.maxs);
            let aabb = Aabb::new(lo - Vec3::splat(PAD as f32), hi + Vec3::splat(PAD as f32));
            self.items.push(Item {
                shape: co.shared_shape().clone(),
                pose: *co.position(),
                body: BodyId(co.user_data as u32),
                aabb,
                flat: [
                    f64::from(lo.x) - PAD,
                    f64::from(lo.y) - PAD,
                    f64::from(hi.x) + PAD,
                    f64::from(hi.y) + PAD,
                ],
                first: (0, 0),
            });
        }
        self.file();
    }

    fn file(&mut self) {
        let finite = |b: &[f64; 4]| b.iter().all(|x| x.is_finite());
        let centre = |b: &[f64; 4], axis: usize| 0.5 * (b[axis] + b[axis + 2]);
        let (xs, ys) = (&mut self.scratch.0, &mut self.scratch.1);
        xs.clear();
        ys.clear();
        for it in self.items.iter().filter(|it| finite(&it.flat)) {
            xs.push(centre(&it.flat, 0));
            ys.push(centre(&it.flat, 1));
        }
        if xs.is_empty() {
            self.outside.extend(0..self.items.len() as u32);
            return;
        }
        let mut bulk = [0.0; 4];
        for (axis, v) in [(0, &mut *xs), (1, &mut *ys)] {
            let (lo, hi) = (quantile(v, 0.05), quantile(v, 0.95));
            let reach = (hi - lo).max(1.0);
            bulk[axis] = lo - reach;
            bulk[axis + 2] = hi + reach;
        }
        let within = |b: &[f64; 4]| {
            finite(b) && b[0] >= bulk[0] && b[1] >= bulk[1] && b[2] <= bulk[2] && b[3] <= bulk[3]
        };
        let mut bounds = [f64::INFINITY, f64::INFINITY, -f64::INFINITY, -f64::INFINITY];
        let mut heights = (f64::INFINITY, -f64::INFINITY);
        let sizes = &mut self.scratch.0;
        sizes.clear();
        let entries = &mut self.entries;
        entries.clear();
        for (i, it) in self.items.iter().enumerate() {
            let b = it.flat;
            if !within(&b) {
                self.outside.push(i as u32);
                continue;
            }
            bounds = [
                bounds[0].min(b[0]),
                bounds[1].min(b[1]),
                bounds[2].max(b[2]),
                bounds[3].max(b[3]),
            ];
            sizes.push((b[2] - b[0]).max(b[3] - b[1]));
            entries.push((i as u32, b));
            let z = (it.aabb.mins.z, it.aabb.maxs.z);
            heights = (heights.0.min(f64::from(z.0)), heights.1.max(f64::from(z.1)));
        }
        if entries.is_empty() {
            return;
        }
        // Cells about as large as the typical collider, and about one collider a cell where the
        // colliders are: a ray then crosses a few cells holding about one collider each. How
        // crowded a collider's cell is, on average over the colliders, on a first layout with
        // as many cells as colliders: Σc²/n, which is λ + 1 for colliders strewn evenly at λ a
        // cell. A swarm packed into part of a large arena (dispersal: 1000 robots on 19 m × 19 m
        // within 127 m × 127 m of walls) has λ ≈ 19 there, and cells shrink by √λ; without it,
        // its 3.3 m cells held 30 robots each and every ray tested them all.
        let typical = quantile(sizes, 0.5);
        let n = entries.len();
        let area = (bounds[2] - bounds[0]) * (bounds[3] - bounds[1]);
        let coarse = Layout::covering(bounds, (area / n as f64).sqrt().max(0.05));
        let counts = &mut self.counts;
        counts.clear();
        ssx_core::spatial::resize_roomy(counts, coarse.nx * coarse.ny, 0);
        let mut squares = 0u64;
        for (_, b) in entries.iter() {
            let c = [centre(b, 0), centre(b, 1), centre(b, 0), centre(b, 1)];
            let (x, y, _, _) = coarse.span(&c);
            let count = &mut counts[y * coarse.nx + x];
            squares += 2 * u64::from(*count) + 1;
            *count += 1;
        }
        // (At most 16: a side a quarter of the first layout's, so that the cells stay within
        // about sixteen a collider however tightly the colliders gather.)
        let crowd = (squares as f64 / n as f64 - 1.0).clamp(1.0, 16.0);
        let sparse = coarse.cell / crowd.sqrt();
        let layout = Layout::covering(bounds, typical.max(sparse).max(0.05));
        self.grid.build(&layout, entries);
        self.heights = heights;
        for &(i, b) in entries.iter() {
            let (x, y, _, _) = layout.span(&b);
            self.items[i as usize].first = (x as u32, y as u32);
        }
        self.layout = Some(layout);
    }

    /// The nearest hit of a ray (unit `dir`) within `max` among colliders whose body is not
    /// excluded: Rapier's ray cast on each candidate, nearer hits first, ties to the lower body
    /// id. As Rapier's query pipeline, a hit at exactly `max` does not count.
    pub(crate) fn cast_ray(
        &self,
        origin: [f64; 3],
        dir: [f64; 3],
        max: f64,
        exclude: &dyn Fn(BodyId) -> bool,
    ) -> Option<(BodyId, RayIntersection)> {
        let ray = Ray::new(
            Vec3::new(origin[0] as f32, origin[1] as f32, origin[2] as f32),
            Vec3::new(dir[0] as f32, dir[1] as f32, dir[2] as f32),
        );
        let mut best: Option<(BodyId, RayIntersection)> = None;
        let mut best_t = max as f32;
        let beats = |t: f32, body: BodyId, best: &Option<(BodyId, _)>, best_t| {
            t < best_t || (t == best_t && best.as_ref().is_some_and(|b| body < b.0))
        };
        let (o, d) = (ray.origin, ray.dir);
        let test = |i: u32, best: &mut Option<_>, best_t: &mut f32| {
            let it = &self.items[i as usize];
            let near = entry(&it.aabb, o, d, *best_t);
            if near.is_none_or(|t| !beats(t, it.body, best, *best_t)) || exclude(it.body) {
                return;
            }
            if let Some(hit) = it
                .shape
                .cast_ray_and_get_normal(&it.pose, &ray, *best_t, true)
                && beats(hit.time_of_impact, it.body, best, *best_t)
            {
                *best_t = hit.time_of_impact;
                *best = Some((it.body, hit));
            }
        };
        for &i in &self.outside {
            test(i, &mut best, &mut best_t);
        }
        // Only the part of the ray between the lowest and the highest filed box can meet one
        // (a camera's rays above every roof, or down to the ground).
        let (z0, z1) = self.heights;
        let (enter, exit) = if dir[2] == 0.0 {
            if (z0..=z1).contains(&origin[2]) {
                (0.0, max)
            } else {
                (1.0, 0.0)
            }
        } else {
            let (a, b) = ((z0 - origin[2]) / dir[2], (z1 - origin[2]) / dir[2]);
            (a.min(b).max(0.0), a.max(b).min(max))
        };
        if let Some(layout) = &self.layout
            && enter <= exit
        {
            walk(
                layout,
                (origin[0] + dir[0] * enter, origin[1] + dir[1] * enter),
                (dir[0], dir[1]),
                exit - enter,
                |x, y, leave| {
                    for &i in self.grid.cell(layout, x, y) {
                        test(i, &mut best, &mut best_t);
                    }
                    // Whatever lies beyond this cell is farther than its exit.
                    f64::from(best_t) > leave + enter
                },
            );
        }
        best
    }

    /// Appends the body of every collider that a ball meets (in no particular order, with
    /// repeats for bodies with several colliders): Rapier's intersection test on each candidate.
    pub(crate) fn bodies_within(
        &self,
        dispatcher: &dyn QueryDispatcher,
        center: [f64; 3],
        radius: f64,
        out: &mut Vec<BodyId>,
    ) {
        let ball = Ball::new(radius as f32);
        let c = Vec3::new(center[0] as f32, center[1] as f32, center[2] as f32);
        let at = RPose::from_translation(c);
        let r = ball.radius;
        let (r_out, r_in) = ((r * 1.0001).powi(2) + 1e-9, (r * 0.9999).powi(2));
        let test = |i: u32, out: &mut Vec<BodyId>| {
            let it = &self.items[i as usize];
            // The collider lies in its box: a box beyond the ball is beyond it too, and a box
            // inside the ball is met. Rounding margins leave every close call to the exact test.
            let (lo, hi) = (it.aabb.mins, it.aabb.maxs);
            let Vec3 { x, y, z } = c;
            let gap = Vec3::new(
                (lo.x - x).max(x - hi.x).max(0.0),
                (lo.y - y).max(y - hi.y).max(0.0),
                (lo.z - z).max(z - hi.z).max(0.0),
            );
            if gap.length_squared() > r_out {
                return;
            }
            let far = Vec3::new(
                (x - lo.x).max(hi.x - x),
                (y - lo.y).max(hi.y - y),
                (z - lo.z).max(hi.z - z),
            );
            if far.length_squared() < r_in {
                out.push(it.body);
                return;
            }
            let pos12 = at.inv_mul(&it.pose);
            if dispatcher
                .intersection_test(&pos12, &ball, &*it.shape)
                .is_ok_and(|hit| hit.intersecting)
            {
                out.push(it.body);
            }
        };
        for &i in &self.outside {
            test(i, out);
        }
        let Some(layout) = &self.layout else {
            return;
        };
        let b = [
            center[0] - radius,
            center[1] - radius,
            center[0] + radius,
            center[1] + radius,
        ];
        let (qx0, qy0, qx1, qy1) = layout.span(&b);
        for y in qy0..=qy1 {
            for x in qx0..=qx1 {
                for &i in self.grid.cell(layout, x, y) {
                    // A collider listed in several of these cells is tested in the first only.
                    let (ix0, iy0) = self.items[i as usize].first;
                    if (ix0 as usize).max(qx0) == x && (iy0 as usize).max(qy0) == y {
                        test(i, out);
                    }
                }
            }
        }
    }
}

/// Where a ray `o + t·d` enters a box, if it does for some t in [0, max]: the slab test.
#[inline]
fn entry(b: &Aabb, o: Vec3, d: Vec3, max: f32) -> Option<f32> {
    let (mut t0, mut t1) = (0.0f32, max);
    for (lo, hi, o, d) in [
        (b.mins.x, b.maxs.x, o.x, d.x),
        (b.mins.y, b.maxs.y, o.y, d.y),
        (b.mins.z, b.maxs.z, o.z, d.z),
    ] {
        if d == 0.0 {
            if o < lo || o > hi {
                return None;
            }
            continue;
        }
        let (a, c) = ((lo - o) / d, (hi - o) / d);
        t0 = t0.max(a.min(c));
        t1 = t1.min(a.max(c));
        if t0 > t1 {
            return None;
        }
    }
    Some(t0)
}

#[cfg(test)]
mod tests {
    //! The index against Rapier's own query pipeline on random worlds: the same nearest hit (to
    //! the bit) for every ray and the same bodies for every ball.
    use super::*;
    use rand::{Rng, SeedableRng};
    use rapier3d::math::Rot3;
    use rapier3d::prelude::{
        Collider, ColliderBuilder, ColliderHandle, PhysicsWorld, QueryFilter, RigidBodyBuilder,
    };

    /// 600 random colliders within ±`spread` m of the origin (and ±30 m of wall boxes around
    /// them when packed closer), a far ball, a box off to the side and a slab under all.
    fn random_world(seed: u64, spread: f32) -> PhysicsWorld {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let mut w = PhysicsWorld::new();
        let add =
            |w: &mut PhysicsWorld, at: Vec3, shape: SharedShape, rng: &mut rand_pcg::Pcg64| {
                let id = w.bodies.len() as u128;
                let rot = Rot3::from_euler(
                    rapier3d::glamx::EulerRot::XYZ,
                    rng.random_range(-3.2..3.2),
                    rng.random_range(-3.2..3.2),
                    rng.random_range(-3.2..3.2),
                );
                let b = w.bodies.insert(
                    RigidBodyBuilder::fixed()
                        .pose(RPose::from_parts(at, rot))
                        .user_data(id),
                );
                w.colliders.insert_with_parent(
                    ColliderBuilder::new(shape).user_data(id),
                    b,
                    &mut w.bodies,
                );
            };
        for _ in 0..600 {
            let at = Vec3::new(
                rng.random_range(-spread..spread),
                rng.random_range(-spread..spread),
                rng.random_range(-2.0..4.0),
            );
            let s = |rng: &mut rand_pcg::Pcg64| rng.random_range(0.02f32..1.5 * spread / 30.0);
            let shape = match rng.random_range(0..4) {
                0 => SharedShape::cuboid(s(&mut rng), s(&mut rng), s(&mut rng)),
                1 => SharedShape::ball(s(&mut rng)),
                2 => SharedShape::capsule_z(s(&mut rng), s(&mut rng)),
                _ => SharedShape::cylinder(s(&mut rng), s(&mut rng)),
            };
            add(&mut w, at, shape, &mut rng);
        }
        // A swarm packed in an arena: its walls, 1 m boxes every metre around it.
        if spread < 30.0 {
            for k in -30..30 {
                let k = k as f32 + 0.5;
                for at in [(k, -30.0), (k, 30.0), (-30.0, k), (30.0, k)] {
                    add(
                        &mut w,
                        Vec3::new(at.0, at.1, 0.5),
                        SharedShape::cuboid(0.5, 0.05, 0.5),
                        &mut rng,
                    );
                }
            }
        }
        // Outliers: far away, and a slab kilometres wide under everything.
        add(
            &mut w,
            Vec3::new(5000.0, -3000.0, 1.0),
            SharedShape::ball(2.0),
            &mut rng,
        );
        add(
            &mut w,
            Vec3::new(-80.0, 10.0, 0.0),
            SharedShape::cuboid(1.0, 1.0, 1.0),
            &mut rng,
        );
        let slab = w.bodies.insert(
            RigidBodyBuilder::fixed()
                .translation(Vec3::new(0.0, 0.0, -10.0))
                .user_data(w.bodies.len() as u128),
        );
        let id = w.bodies.len() as u128 - 1;
        w.colliders.insert_with_parent(
            ColliderBuilder::cuboid(4000.0, 4000.0, 1.0).user_data(id),
            slab,
            &mut w.bodies,
        );
        w.step();
        w
    }

    #[test]
    fn rays_and_balls_answer_as_rapiers_own_pipeline() {
        // Two worlds spread over the arena, and one packed into a tenth of its width, whose
        // cells follow the crowd (less than half the side that one cell a collider over the
        // whole arena would give).
        for (seed, spread) in [(1, 30.0), (2, 30.0), (3, 3.0)] {
            let w = random_world(seed, spread);
            let mut index = QueryIndex::default();
            index.rebuild(&w.colliders);
            if spread < 30.0 {
                let cell = index.layout.map(|l| l.cell).unwrap_or(0.0);
                let whole = (60.0f64 * 60.0 / index.items.len() as f64).sqrt();
                assert!(cell > 0.0 && cell < whole / 2.0, "cells of {cell} m");
            }
            let reach = f64::from(spread) + 5.0;
            assert!(
                index.outside.len() >= 2 && index.outside.len() <= 3,
                "the far ball and the slab are kept apart: {}",
                index.outside.len()
            );
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed + 100);
            let (mut hits, mut found) = (0, 0);
            for _ in 0..20_000 {
                let o = [
                    rng.random_range(-reach..reach),
                    rng.random_range(-reach..reach),
                    rng.random_range(-3.0..5.0),
                ];
                let d = loop {
                    let d: [f64; 3] = std::array::from_fn(|_| rng.random_range(-1.0..1.0));
                    let n = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                    if n > 0.1 && n <= 1.0 {
                        break d.map(|x| x / n);
                    }
                };
                let max = rng.random_range(0.1..40.0);
                let skip = rng.random_range(0..600u32);
                let exclude = |b: BodyId| b.0 == skip;
                let ours = index.cast_ray(o, d, max, &exclude);
                let ray = Ray::new(
                    Vec3::new(o[0] as f32, o[1] as f32, o[2] as f32),
                    Vec3::new(d[0] as f32, d[1] as f32, d[2] as f32),
                );
                let keep = |_: ColliderHandle, c: &Collider| c.user_data as u32 != skip;
                let theirs = w.cast_ray_and_get_normal(
                    &ray,
                    max as f32,
                    true,
                    QueryFilter::default().predicate(&keep),
                );
                match (ours, theirs) {
                    (None, None) => {}
                    (Some((_, a)), Some((_, b))) => {
                        hits += 1;
                        assert_eq!(a.time_of_impact, b.time_of_impact, "ray {o:?} {d:?} {max}");
                    }
                    (a, b) => panic!("ray {o:?} {d:?} {max}: ours {a:?}, Rapier's {b:?}"),
                }
            }
            let dispatcher = w.narrow_phase.query_dispatcher();
            for _ in 0..5000 {
                let c = [
                    rng.random_range(-reach..reach),
                    rng.random_range(-reach..reach),
                    rng.random_range(-3.0..5.0),
                ];
                let r = rng.random_range(0.01..6.0);
                let mut ours = Vec::new();
                index.bodies_within(dispatcher, c, r, &mut ours);
                ours.sort_unstable();
                ours.dedup();
                let at = RPose::from_translation(Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32));
                let ball = Ball::new(r as f32);
                let mut theirs: Vec<BodyId> = w
                    .intersect_shape(at, &ball, QueryFilter::default())
                    .map(|(_, co)| BodyId(co.user_data as u32))
                    .collect();
                theirs.sort_unstable();
                theirs.dedup();
                found += ours.len();
                assert_eq!(ours, theirs, "ball at {c:?}, radius {r}");
            }
            assert!(
                hits > 2000 && found > 5000,
                "{hits} hits, {found} bodies found"
            );
        }
    }
}
