//! A ring of rays from one origin as one query (issue 60): a range sensor's sweep, cast
//! together. The prims filed in the grid's cells near the origin (those within a cell's side of
//! it: the movers' lists and the baked walls, each prim once) are gathered once; each is mapped
//! to the rays its angular extent covers, seen from the origin (the angle to its bounding
//! circle's centre and the half-width that circle subtends), and only those rays get its cull
//! and exact test: a ring of 12 rays meets a neighbour with one or two of its rays, where ray by
//! ray each of the 12 culled everything filed along it. A ray whose best hit is then nearer than
//! the near cells' edge is done; the others (through a gap, or longer than the near cells) walk
//! on through the cells beyond, as a single ray walks.
//!
//! Every ray's hit is what [`KinematicEngine::ray`] finds for it alone, to the bit (nearest,
//! then the lower body id; the windows only ever take in more rays than can hit, never fewer):
//! the property tests in `tests/kinematic.rs` cast both on random worlds. Rays the window
//! cannot place (straight up or down) and rings of fewer than [`RING_MIN`] rays are cast one by
//! one.

use std::cell::RefCell;
use std::f64::consts::{FRAC_PI_2, PI, TAU};

use ssx_core::counters::{self, Work};
use ssx_core::engine::{BodyId, RayHit};
use ssx_core::math::{Point3, Vec3};
use ssx_core::spatial::Layout;

use crate::KinematicEngine;
use crate::rays::{Ray, SLACK, offer};
use crate::shape::Prim;

/// Rings of fewer rays are cast one by one: gathering costs more than it saves.
pub(crate) const RING_MIN: usize = 4;

/// At most this many prims met near the origin, the rest of the ring's square is gathered too;
/// more, and the rays left open walk on. Between the two ends measured with `cargo bench -p
/// ssx-tests --bench rays` (always gathering: slower than single rays at 1000 robots; always
/// walking: no faster at 100); other values were not tried.
const SPARSE: usize = 12;

/// Room on every angular window (rad): [`pseudo_atan2`]'s error (under 2e-5, a test checks it)
/// on the ray's angle and on the prim's, and more.
const ANGLE_SLACK: f64 = 1e-4;

/// How far a fan's consecutive rays may differ from one turn (their in-plane dot and cross
/// products, and squared lengths): an angle off by a few 1e-12 rad a ray, far inside the
/// windows' room ([`ANGLE_SLACK`]) for any number of rays a sensor casts.
const FAN_EPS: f64 = 1e-12;

/// A ray of the ring that the windows can place: its index and the ray.
struct Placed {
    index: u32,
    ray: Ray,
}

/// A ring whose placed rays' angles lie within `dev` of `a0 + k·step` (k = 0, 1, ... in their
/// sorted order), as a range sensor's evenly spaced rays do: a window's rays are then found by
/// arithmetic, not by search.
#[derive(Clone, Copy, Debug)]
struct Spacing {
    a0: f64,
    /// 1 / the step between angles: a window's ends are placed by multiplying (the rounding moves them by a few
    /// 1e-15 of a step, far inside `dev`'s 1e-12 rad of room).
    per_step: f64,
    dev: f64,
}

impl Spacing {
    /// The spacing of angles sorted in rising order, if they are evenly spaced to within a
    /// quarter of a step.
    fn of(angles: &[f64]) -> Option<Spacing> {
        let n = angles.len();
        if n < 2 {
            return None;
        }
        let a0 = angles[0];
        let step = (angles[n - 1] - a0) / (n - 1) as f64;
        if step.is_nan() || step <= 0.0 {
            return None;
        }
        let dev = (angles.iter().enumerate())
            .map(|(k, a)| (a - (a0 + k as f64 * step)).abs())
            .fold(0.0, f64::max);
        // Room for the rounding of the arithmetic in `range` too.
        let dev = dev + 1e-12;
        (dev < 0.25 * step).then_some(Spacing {
            a0,
            per_step: 1.0 / step,
            dev,
        })
    }

    /// Calls `f` with the index of every ray of `n` whose angle may lie in [a, b]: every one
    /// whose angle does, and perhaps a neighbour.
    #[inline]
    fn range(&self, n: usize, a: f64, b: f64, f: &mut impl FnMut(usize)) {
        // Ceiling and floor by truncation (the baseline x86-64 has no rounding instruction, and
        // libm's is a call): only non-negative values are truncated.
        let (x, y) = (
            (a - self.dev - self.a0) * self.per_step,
            (b + self.dev - self.a0) * self.per_step,
        );
        if y.is_nan() || y < 0.0 {
            return;
        }
        let first = if x > 0.0 {
            let t = x as usize;
            t + usize::from((t as f64) < x)
        } else {
            0
        };
        let last = (y as usize).min(n - 1);
        (first..=last).for_each(f);
    }
}

/// A ring's placed rays in angular order: their indices into the placed list, their angles,
/// and the angles' spacing when even. The placed rays themselves stay where they are (large,
/// they would cost more to move than to reach through the order).
#[derive(Default)]
struct Sorted {
    order: Vec<u32>,
    angles: Vec<f64>,
    spacing: Option<Spacing>,
    /// Each placed ray's angle, in the placed order (scratch for rings that are not fans).
    raw: Vec<f64>,
    /// The last fan's turn between neighbours (their dot and cross products) and its angle:
    /// the rings of one kind of sensor share it, and its arctangent is taken once.
    turn: Option<(f64, f64, f64)>,
}

impl Sorted {
    /// Puts `placed` in angular order: a fan's by arithmetic ([`Sorted::fan`]), any other's
    /// from each ray's angle.
    fn of(&mut self, placed: &[Placed]) {
        if !self.fan(placed) {
            self.raw.clear();
            (self.raw).extend(placed.iter().map(|p| pseudo_atan2(p.ray.d.y, p.ray.d.x)));
            self.sort();
        }
    }

    /// Whether `placed` is a fan, each ray turned from the one before by the same angle
    /// counter-clockwise, less than a whole turn in all (a range sensor's sweep, turned with
    /// its robot): if so, sorts it. Its angles are then the first ray's ([`pseudo_atan2`], as
    /// every ray's is otherwise) and whole steps after it (libm's arctangent, once for the
    /// rings of one kind of sensor), not one arctangent a ray; its order is the list turned
    /// where the angles pass +π.
    fn fan(&mut self, placed: &[Placed]) -> bool {
        let n = placed.len();
        if n < 2 {
            return false;
        }
        let d = |k: usize| (placed[k].ray.d.x, placed[k].ray.d.y);
        let (x0, y0) = d(0);
        let (x1, y1) = d(1);
        let r2 = x0 * x0 + y0 * y0;
        let (c, s) = (x0 * x1 + y0 * y1, x0 * y1 - y0 * x1);
        // Rays steeper than 60° from the plane would turn a small difference into a large
        // angle: not taken as a fan.
        if !(r2 >= 0.25 && s > 0.0) {
            return false;
        }
        let same = |a: f64, b: f64| (a - b).abs() <= FAN_EPS;
        let turned_alike = (1..n - 1).all(|k| {
            let ((xa, ya), (xb, yb)) = (d(k), d(k + 1));
            same(xa * xb + ya * yb, c) && same(xa * yb - ya * xb, s) && same(xb * xb + yb * yb, r2)
        });
        if !turned_alike {
            return false;
        }
        let step = match self.turn {
            Some((tc, ts, step)) if same(tc, c) && same(ts, s) => step,
            _ => {
                let step = s.atan2(c);
                self.turn = Some((c, s, step));
                step
            }
        };
        if (n - 1) as f64 * step >= TAU {
            return false;
        }
        let a0 = pseudo_atan2(y0, x0);
        // In [−π, π] as the arctangent's: those past +π taken once round. They rise with k,
        // so the first past +π is where the list turns.
        let unwrapped = |k: usize| a0 + k as f64 * step;
        let start = (0..n).find(|&k| unwrapped(k) > PI).unwrap_or(n);
        let angle = |k: usize| {
            let a = unwrapped(k);
            if k >= start { a - TAU } else { a }
        };
        self.order.clear();
        self.order
            .extend((start..n).chain(0..start).map(|k| k as u32));
        self.angles.clear();
        (self.angles).extend(self.order.iter().map(|&k| angle(k as usize)));
        self.spacing = Spacing::of(&self.angles);
        true
    }

    /// Puts the placed rays in the order of their angles `raw`. A sensor's rays usually come
    /// in angular order, turned with the robot: then from the smallest angle on they rise all
    /// the way round, and the order is the list turned, no sort.
    fn sort(&mut self) {
        let raw = &self.raw;
        let n = raw.len();
        let angle = |k: usize| raw[k];
        let rises = |from: usize, to: usize| (from + 1..to).all(|k| angle(k - 1) <= angle(k));
        // Where the angles fall back, if anywhere: the smallest angle, if the list is turned.
        let start = (1..n).find(|&k| angle(k) < angle(k - 1)).unwrap_or(0);
        let turned = start == 0 || (rises(start, n) && angle(n - 1) <= angle(0) && rises(0, start));
        self.order.clear();
        if turned {
            self.order
                .extend((start..n).chain(0..start).map(|k| k as u32));
        } else {
            self.order.extend(0..n as u32);
            self.order
                .sort_unstable_by(|&a, &b| angle(a as usize).total_cmp(&angle(b as usize)));
        }
        self.angles.clear();
        self.angles
            .extend(self.order.iter().map(|&k| angle(k as usize)));
        self.spacing = Spacing::of(&self.angles);
    }
}

/// One thread's lists for a ring, kept so that a ring allocates nothing once they have grown.
#[derive(Default)]
struct Scratch {
    placed: Vec<Placed>,
    sorted: Sorted,
    best: Vec<Option<RayHit>>,
    /// The ring that last met each prim (by prim index, walls and movers alike), so that a prim
    /// filed in several of the cells gathered is tested once; rings count up in `ring`.
    seen: Vec<u32>,
    ring: u32,
}

impl Scratch {
    /// Starts a ring over prims `0..prims`.
    fn next_ring(&mut self, prims: usize) {
        if self.seen.len() < prims {
            self.seen.resize(prims, 0);
        }
        self.ring = self.ring.wrapping_add(1);
        if self.ring == 0 {
            // Every count used once: the marks start again.
            self.seen.fill(0);
            self.ring = 1;
        }
    }

    /// Whether prim `i` is met for the first time in this ring (it is marked met).
    #[inline]
    fn first(&mut self, i: u32) -> bool {
        let mark = &mut self.seen[i as usize];
        let first = *mark != self.ring;
        *mark = self.ring;
        first
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// atan2(y, x) within 2e-5 rad (Abramowitz and Stegun 4.4.49's odd polynomial on [0, 1], then
/// the octants), in [−π, π]: a third of libm's cost, and the windows allow for its error.
#[inline]
pub(crate) fn pseudo_atan2(y: f64, x: f64) -> f64 {
    let (ax, ay) = (x.abs(), y.abs());
    let (num, den) = if ay > ax { (ax, ay) } else { (ay, ax) };
    if den == 0.0 {
        return 0.0;
    }
    let z = num / den;
    let z2 = z * z;
    let mut a = z
        * (0.999_866_0
            + z2 * (-0.330_299_5 + z2 * (0.180_141_0 + z2 * (-0.085_133_0 + z2 * 0.020_835_1))));
    if ay > ax {
        a = FRAC_PI_2 - a;
    }
    if x < 0.0 {
        a = PI - a;
    }
    if y < 0.0 { -a } else { a }
}

/// The half-width (rad) a circle of radius `rho` subtends from `dist` > `rho` away, or more:
/// asin(x) <= x + (π/2 − 1)·x³ on [0, 1] (asin's series has no negative term, and the two
/// agree at 1).
#[inline]
fn half_width(rho: f64, dist: f64) -> f64 {
    let x = (rho / dist).min(1.0);
    x + (FRAC_PI_2 - 1.0) * x * x * x
}

/// Calls `f` with the place in angular order (an index into `angles`, which rise) of every
/// ray whose angle lies in [lo, hi], the window taken round the circle across ±π (evenly
/// spaced rays: those and perhaps a neighbour, found by arithmetic).
#[inline]
fn each_in(angles: &[f64], spacing: Option<Spacing>, lo: f64, hi: f64, mut f: impl FnMut(usize)) {
    if hi - lo >= TAU {
        (0..angles.len()).for_each(f);
        return;
    }
    let mut range = |a: f64, b: f64| match spacing {
        Some(s) => s.range(angles.len(), a, b, &mut f),
        None => {
            let start = angles.partition_point(|&r| r < a);
            for (k, &r) in angles.iter().enumerate().skip(start) {
                if r > b {
                    break;
                }
                f(k);
            }
        }
    };
    if lo < -PI {
        range(lo + TAU, PI);
        range(-PI, hi);
    } else if hi > PI {
        range(lo, PI);
        range(-PI, hi - TAU);
    } else {
        range(lo, hi);
    }
}

/// The exact test of `p` on one placed ray, culled first by what is left of it.
#[inline]
fn test(r: &Placed, p: &Prim, best: &mut Option<RayHit>) {
    counters::add(Work::RingTest, 1);
    let ray = &r.ray;
    if !ray.may_hit(&p.aabb, best.map_or(ray.max, |h| h.distance)) {
        return;
    }
    counters::add(Work::RayCast, 1);
    if let Some((t, n)) = p.cast(&ray.o, &ray.d, ray.max) {
        offer(best, p.body, t, n);
    }
}

/// Offers `p` to the rays whose angles its bounding circle's window covers (every ray when the
/// origin lies in that circle); `best` is indexed as `placed`.
#[inline]
fn offer_to_ring(
    placed: &[Placed],
    sorted: &Sorted,
    o: &Vec3,
    max: f64,
    p: &Prim,
    best: &mut [Option<RayHit>],
) {
    let (dx, dy) = (p.x - o.x, p.y - o.y);
    let rho = p.rho;
    let d2 = dx * dx + dy * dy;
    let reach = rho + SLACK;
    if d2 <= reach * reach {
        for (r, b) in placed.iter().zip(best.iter_mut()) {
            test(r, p, b);
        }
        return;
    }
    // Nearer than `max` in the plane, or no ray reaches it (the exact test's `enter <= max`):
    // most prims of a ring are further, and are dropped before the square root.
    let far = max + SLACK + rho;
    if d2 > far * far {
        return;
    }
    let dist = d2.sqrt();
    let phi = pseudo_atan2(dy, dx);
    let w = half_width(rho, dist) + ANGLE_SLACK;
    each_in(&sorted.angles, sorted.spacing, phi - w, phi + w, |k| {
        let i = sorted.order[k] as usize;
        test(&placed[i], p, &mut best[i])
    });
}

impl KinematicEngine {
    /// Calls `f` with every prim filed in the cells of `span` (columns x0..=x1, rows y0..=y1)
    /// but those `skip` names: each cell's walls, then its movers.
    fn gather(
        &self,
        layout: &Layout,
        (x0, y0, x1, y1): (usize, usize, usize, usize),
        skip: impl Fn(usize, usize) -> bool,
        f: &mut dyn FnMut(u32, &Prim),
    ) {
        let g = self.grids();
        let (walls, movers) = (g.baked.bits(), g.movers.bits());
        for y in y0..=y1 {
            for x in x0..=x1 {
                let c = y * layout.nx + x;
                let bit = 1 << (c % 64);
                if skip(x, y) {
                    continue;
                }
                if walls[c / 64] & bit != 0 {
                    (g.baked).cell_ids(&g.statics, c, |i, at| f(i, g.baked.prim(at)));
                }
                if movers[c / 64] & bit != 0 {
                    g.movers.cell(layout, x, y, |i| f(i, self.mover_prim(i)));
                }
            }
        }
    }

    /// [`KinematicEngine::ray`] for each of `directions` from `origin`, into `out`: as one ring
    /// from [`RING_MIN`] rays up (see the module's text), else ray by ray.
    pub(crate) fn rays(
        &self,
        origin: Point3,
        directions: &[Vec3],
        max: f64,
        exclude: &dyn Fn(BodyId) -> bool,
        out: &mut [Option<RayHit>],
    ) {
        let one_by_one = |out: &mut [Option<RayHit>]| {
            for (d, slot) in directions.iter().zip(out.iter_mut()) {
                *slot = self.ray(origin, *d, max, exclude);
            }
        };
        let layout = self.index();
        // Without a grid, only a small world's rings are rings (the other case is the tests'
        // brute force).
        if (layout.is_none() && !self.small)
            || directions.len() < RING_MIN
            || !(max > 0.0 && max.is_finite())
        {
            return one_by_one(out);
        }
        SCRATCH.with(|scratch| {
            let s = &mut *scratch.borrow_mut();
            self.ring(layout, origin, directions, max, exclude, out, s);
        });
    }

    /// The ring query proper (`rays`), on one thread's scratch lists: through the grid's
    /// cells, or (no `layout`: a small world) over every prim.
    #[allow(clippy::too_many_arguments)]
    fn ring(
        &self,
        layout: Option<&Layout>,
        origin: Point3,
        directions: &[Vec3],
        max: f64,
        exclude: &dyn Fn(BodyId) -> bool,
        out: &mut [Option<RayHit>],
        s: &mut Scratch,
    ) {
        counters::add(Work::Ring, 1);
        s.placed.clear();
        for (i, (d, slot)) in directions.iter().zip(out.iter_mut()).enumerate() {
            *slot = None;
            let Some(ray) = Ray::new(&origin, d, max) else {
                continue;
            };
            // A ray (nearly) along z has no angle in the plane worth placing: alone.
            if ray.d.x.abs() < 1e-6 && ray.d.y.abs() < 1e-6 {
                *slot = self.ray(origin, *d, max, exclude);
                continue;
            }
            s.placed.push(Placed {
                index: i as u32,
                ray,
            });
        }
        if s.placed.is_empty() {
            return;
        }
        s.sorted.of(&s.placed);
        s.best.clear();
        s.best.resize(s.placed.len(), None);
        // Each plane asked once whether it is left out, not once a ray.
        for &(body, h) in &self.planes {
            if !exclude(BodyId(body)) {
                for (r, best) in s.placed.iter().zip(s.best.iter_mut()) {
                    Self::hit_plane(&r.ray, body, h, best);
                }
            }
        }
        let o = origin.coords;
        match layout {
            Some(layout) => self.ring_in_cells(layout, &o, max, exclude, s),
            None => {
                // A small world: every prim once, the sensor's own body before any test.
                counters::add(Work::RingPrim, self.prim_count() as u64);
                self.each_prim(|_, p| {
                    if !exclude(BodyId(p.body)) {
                        offer_to_ring(&s.placed, &s.sorted, &o, max, p, &mut s.best);
                    }
                });
            }
        }
        for (r, best) in s.placed.iter().zip(&s.best) {
            out[r.index as usize] = *best;
        }
    }

    /// The ring's prims from the grid: the near cells, then the square or the walks beyond.
    fn ring_in_cells(
        &self,
        layout: &Layout,
        o: &Vec3,
        max: f64,
        exclude: &dyn Fn(BodyId) -> bool,
        s: &mut Scratch,
    ) {
        // The near cells, the block of those within a cell's side of the origin (all within
        // reach when the rays are shorter), each prim filed there met once (the scratch lists
        // serve any engine on this thread: the marks are by ring).
        s.next_ring(self.prim_count());
        let near = max.min(layout.cell);
        let block = layout.span(&[o.x - near, o.y - near, o.x + near, o.y + near]);
        let (x0, y0, x1, y1) = block;
        let met = std::cell::Cell::new(0usize);
        let meet = |s: &mut Scratch, i: u32, p: &Prim| {
            // The sensor's own body before any test: its rays start inside it.
            if s.first(i) {
                counters::add(Work::RingPrim, 1);
                met.set(met.get() + 1);
                if !exclude(BodyId(p.body)) {
                    offer_to_ring(&s.placed, &s.sorted, o, max, p, &mut s.best);
                }
            }
        };
        self.gather(layout, block, |_, _| false, &mut |i, p| meet(s, i, p));
        for &i in &self.outside {
            meet(s, i, self.mover_prim(i));
        }
        // A ray whose best hit lies nearer than the block's edge is done: whatever is filed
        // only beyond the edge lies further (the grid's own edges bound nothing: beyond them
        // is only the outside list, met above).
        let edge = |at_edge: bool, d: f64| if at_edge { f64::INFINITY } else { d };
        let (gx, gy, c) = (layout.x0, layout.y0, layout.cell);
        let reach = edge(x0 == 0, o.x - (gx + x0 as f64 * c))
            .min(edge(y0 == 0, o.y - (gy + y0 as f64 * c)))
            .min(edge(x1 + 1 == layout.nx, gx + (x1 + 1) as f64 * c - o.x))
            .min(edge(y1 + 1 == layout.ny, gy + (y1 + 1) as f64 * c - o.y));
        let inside = |x: usize, y: usize| (x0..=x1).contains(&x) && (y0..=y1).contains(&y);
        if reach >= max {
            // The block holds all the rays reach.
        } else if met.get() <= SPARSE {
            // Few prims near: likely few further out; the rest of the square about the origin
            // is gathered as the block was.
            let square = layout.span(&[o.x - max, o.y - max, o.x + max, o.y + max]);
            self.gather(layout, square, inside, &mut |i, p| meet(s, i, p));
        } else {
            // A crowd near: the rays it leaves open walk on past the block, ray by ray.
            for (r, best) in s.placed.iter().zip(s.best.iter_mut()) {
                if best.is_none_or(|h| h.distance >= reach) {
                    self.walk_cells(layout, &r.ray, exclude, best, inside);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The approximate arctangent stays within 2e-5 rad of libm's all round the circle (a
    /// fifth of the windows' slack, which covers it twice), and its seam is libm's: +π for a
    /// ray along −x.
    #[test]
    fn pseudo_atan2_is_within_its_bound() {
        let mut worst = 0.0f64;
        for k in 0..1_000_000 {
            let a = -PI + TAU * k as f64 / 1_000_000.0;
            for scale in [1e-3, 1.0, 7e2] {
                let (y, x) = (scale * a.sin(), scale * a.cos());
                let err = (pseudo_atan2(y, x) - y.atan2(x)).abs();
                // Across the seam both are right.
                worst = worst.max(err.min((err - TAU).abs()));
            }
        }
        assert!(worst < 2e-5, "worst error {worst:e}");
        assert!(worst * 5.0 < ANGLE_SLACK);
        assert_eq!(pseudo_atan2(0.0, -1.0), PI);
        assert_eq!(pseudo_atan2(0.0, 1.0), 0.0);
        assert_eq!(pseudo_atan2(0.0, 0.0), 0.0);
    }

    /// A ring of `n` rays turned by `phase`, placed as `ring` places them, and their order.
    fn placed(n: usize, phase: f64, uneven: bool) -> (Vec<Placed>, Sorted) {
        let o = Point3::origin();
        let placed: Vec<Placed> = (0..n)
            .map(|k| {
                let mut a = phase + TAU * k as f64 / n as f64;
                if uneven && k % 3 == 1 {
                    a += 0.4 * TAU / n as f64;
                }
                let d = Vec3::new(a.cos(), a.sin(), 0.0);
                let ray = Ray::new(&o, &d, 2.0).expect("a ray");
                Placed {
                    index: k as u32,
                    ray,
                }
            })
            .collect();
        let mut sorted = Sorted::default();
        sorted.of(&placed);
        (placed, sorted)
    }

    /// A turned ring's order is the list turned, as a sort would order it; a list out of
    /// order is sorted.
    #[test]
    fn a_turned_ring_is_in_angular_order() {
        for phase in [0.0, 0.3, -2.9, PI, 5.0] {
            let (p, sorted) = placed(12, phase, false);
            assert!(sorted.angles.windows(2).all(|w| w[0] <= w[1]), "{phase}");
            let angle = |k: u32| pseudo_atan2(p[k as usize].ray.d.y, p[k as usize].ray.d.x);
            let mut by_sort: Vec<u32> = (0..12).collect();
            by_sort.sort_by(|&a, &b| angle(a).total_cmp(&angle(b)));
            assert_eq!(sorted.order, by_sort);
            let mut shuffled = p;
            shuffled.swap(2, 7);
            let mut again = Sorted::default();
            again.of(&shuffled);
            let indices = |s: &Sorted| {
                (s.order.iter())
                    .map(|&k| shuffled[k as usize].index)
                    .collect::<Vec<_>>()
            };
            assert_eq!(indices(&again), by_sort);
        }
    }

    /// A fan's angles, found by arithmetic from its first ray's and the step, are each ray's
    /// own (libm's arctangent) to within [`pseudo_atan2`]'s bound and 1e-9 rad, rising in
    /// [−π, π], each ray once: whole rings and part rings, from either side of the seam,
    /// tilted out of the plane, one kind after another on one scratch (the step kept from the
    /// fan before is another kind's). Rays turned clockwise, more than once round or too steep
    /// are no fan, and are sorted from each ray's angle as before.
    #[test]
    fn a_fan_is_placed_by_arithmetic_as_each_ray_would_be() {
        let o = Point3::origin();
        let fan = |n: usize, first: f64, step: f64, tilt: f64| -> Vec<Placed> {
            (0..n)
                .map(|k| {
                    let a = first + step * k as f64;
                    let d = Vec3::new(a.cos(), a.sin(), tilt);
                    let ray = Ray::new(&o, &d, 2.0).expect("a ray");
                    Placed {
                        index: k as u32,
                        ray,
                    }
                })
                .collect()
        };
        let mut fans = 0;
        let mut sorted = Sorted::default();
        for k in 0..3000 {
            let first = -PI + TAU * k as f64 / 3000.0;
            let n = [4, 12, 64, 360, 5][k % 5];
            let whole = TAU / n as f64;
            let (step, tilt, is_fan) = match k % 6 {
                0 => (whole, 0.0, true),
                1 => (0.5 * whole, 0.4, true),
                2 => (0.013, -0.2, true),
                3 => (-whole, 0.0, false),
                4 => (1.5 * whole, 0.0, false),
                _ => (whole, 2.0, false),
            };
            let p = fan(n, first, step, tilt);
            assert_eq!(
                Sorted::default().fan(&p),
                is_fan,
                "{n} rays from {first} by {step}, tilt {tilt}"
            );
            // Twice on the scratch the fans before used: the second time with this fan's step.
            sorted.of(&p);
            sorted.of(&p);
            fans += usize::from(is_fan);
            let own = |i: u32| p[i as usize].ray.d.y.atan2(p[i as usize].ray.d.x);
            // A fan's first angle is pseudo_atan2's, its steps exact but for rounding.
            let bound = if is_fan { 2e-5 + 1e-9 } else { 2e-5 };
            assert!(sorted.angles.windows(2).all(|w| w[0] <= w[1]));
            assert!(sorted.angles.iter().all(|a| (-PI..=PI).contains(a)));
            for (&i, &a) in sorted.order.iter().zip(&sorted.angles) {
                let err = (a - own(i)).abs();
                assert!(
                    err.min((err - TAU).abs()) < bound,
                    "ray {i}: {a} against {}",
                    own(i)
                );
            }
            let mut seen = sorted.order.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..n as u32).collect::<Vec<_>>());
        }
        assert_eq!(fans, 1500);
    }

    /// With even spacing, a window's rays found by arithmetic hold every ray the search
    /// finds, and at most one more on each side; uneven rings keep the search.
    #[test]
    fn evenly_spaced_windows_hold_every_ray_in_them() {
        assert!(placed(12, 0.7, true).1.spacing.is_none());
        let mut extra = 0usize;
        for (n, phase) in [(12, 0.0), (12, 0.37), (8, -3.0), (64, 1.1), (5, PI)] {
            let (_, sorted) = placed(n, phase, false);
            let spacing = sorted.spacing.expect("evenly spaced");
            for k in 0..4000 {
                let centre = -PI + TAU * k as f64 / 4000.0;
                let width = [0.0, 1e-4, 0.05, 0.3, 1.0, 3.5][k % 6];
                let (lo, hi) = (centre - width, centre + width);
                let mut searched = Vec::new();
                each_in(&sorted.angles, None, lo, hi, |i| searched.push(i));
                let mut counted = Vec::new();
                each_in(&sorted.angles, Some(spacing), lo, hi, |i| counted.push(i));
                assert!(
                    searched.iter().all(|i| counted.contains(i)),
                    "{n} rays at {phase}: window [{lo}, {hi}] lost {searched:?} -> {counted:?}"
                );
                assert!(
                    counted.len() <= searched.len() + 2,
                    "{searched:?} {counted:?}"
                );
                let mut unique = counted.clone();
                unique.sort_unstable();
                unique.dedup();
                assert_eq!(unique.len(), counted.len(), "a ray twice: {counted:?}");
                extra += counted.len() - searched.len();
            }
        }
        // The arithmetic is tight: it adds a ray only where an angle lies near a window's edge.
        assert!(extra < 200, "{extra} extra rays");
    }

    /// The half-width bound is never below the true half-width.
    #[test]
    fn half_width_bounds_the_subtended_angle() {
        for k in 1..=10_000 {
            let x = k as f64 / 10_000.0;
            assert!(half_width(x, 1.0) >= x.asin(), "{x}");
        }
        assert!((half_width(1.0, 1.0) - FRAC_PI_2).abs() < 1e-15);
    }
}
