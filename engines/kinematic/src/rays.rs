//! Ray casting: a ray walks the grid's cells in order along it (Amanatides and Woo), tests the
//! prims filed there, and stops at the first cell that ends beyond its best hit. The hit is the
//! nearest one the exact test finds (ties to the lower body id); every cull drops only prims
//! that cannot beat the best hit so far. A cell is read only where its bit says something is
//! filed there; its walls are the baked copies of `baked.rs`, its movers the grid's lists.
//!
//! A ring of rays from one origin is cast as one query where that pays (ring.rs); issue 40's
//! batch, every ray of a ring against every candidate gathered nearest first, was measured
//! and not kept: at 1000 robots it was slower than walking each ray (BENCHMARKS.md).

use ssx_core::counters::{self, Work};
use ssx_core::engine::{BodyId, RayHit};
use ssx_core::math::{Point3, Vec3};
use ssx_core::spatial as grid;

use crate::KinematicEngine;
use crate::shape::Prim;

/// Rounding room for the culls: a grazing hit is kept.
pub(crate) const SLACK: f64 = 1e-9;

/// One ray: origin, unit direction, its reciprocal in the plane, and how far it goes.
pub(crate) struct Ray {
    pub(crate) o: Vec3,
    pub(crate) d: Vec3,
    inv: (f64, f64),
    /// Neither in-plane component is zero (axis rays are culled exactly by bounds alone).
    slanted: bool,
    pub(crate) max: f64,
}

impl Ray {
    /// The ray along `direction` (any length but zero), or `None` when it cannot hit anything.
    pub(crate) fn new(origin: &Point3, direction: &Vec3, max: f64) -> Option<Ray> {
        let norm = direction.norm();
        if !(norm > 0.0 && norm.is_finite() && max > 0.0) {
            return None;
        }
        let d = direction / norm;
        Some(Ray {
            o: origin.coords,
            d,
            inv: (1.0 / d.x, 1.0 / d.y),
            slanted: d.x.abs() > 1e-9 && d.y.abs() > 1e-9,
            max,
        })
    }

    /// Whether bounds `a` (min x, min y, max x, max y) may hold a hit nearer than `reach`:
    /// the bounds of what is left of the ray, then (for a slanted ray) the slab test without
    /// divisions.
    #[inline]
    pub(crate) fn may_hit(&self, a: &[f64; 4], reach: f64) -> bool {
        let (o, d) = (&self.o, &self.d);
        let (ex, ey) = (o.x + d.x * reach, o.y + d.y * reach);
        if a[0] > o.x.max(ex) || a[2] < o.x.min(ex) || a[1] > o.y.max(ey) || a[3] < o.y.min(ey) {
            return false;
        }
        if self.slanted {
            let (x0, x1) = ((a[0] - o.x) * self.inv.0, (a[2] - o.x) * self.inv.0);
            let (y0, y1) = ((a[1] - o.y) * self.inv.1, (a[3] - o.y) * self.inv.1);
            let enter = x0.min(x1).max(y0.min(y1));
            let leave = x0.max(x1).min(y0.max(y1));
            if enter > leave + SLACK || leave < -SLACK || enter > reach + SLACK {
                return false;
            }
        }
        true
    }
}

/// The best hit so far: nearer wins, then the lower body id. The caller leaves excluded bodies
/// out.
#[inline]
pub(crate) fn offer(best: &mut Option<RayHit>, body: u32, distance: f64, normal: Vec3) {
    let better =
        best.is_none_or(|h| distance < h.distance || (distance == h.distance && body < h.body.0));
    if better {
        *best = Some(RayHit {
            body: BodyId(body),
            distance,
            normal,
        });
    }
}

impl KinematicEngine {
    /// Offers the planes' hits (horizontal planes, kept apart from the grid).
    pub(crate) fn hit_planes(
        &self,
        ray: &Ray,
        exclude: &dyn Fn(BodyId) -> bool,
        best: &mut Option<RayHit>,
    ) {
        for &(body, h) in &self.planes {
            if !exclude(BodyId(body)) {
                Self::hit_plane(ray, body, h, best);
            }
        }
    }

    /// The exact test of the horizontal plane of `body` at height `h`.
    #[inline]
    pub(crate) fn hit_plane(ray: &Ray, body: u32, h: f64, best: &mut Option<RayHit>) {
        if ray.o.z <= h {
            offer(best, body, 0.0, Vec3::zeros());
        } else if ray.d.z < 0.0 {
            let t = (h - ray.o.z) / ray.d.z;
            if t <= ray.max {
                offer(best, body, t, Vec3::z());
            }
        }
    }

    /// The exact test of a prim, culled first (with a grid) by what is left of the ray.
    #[inline(always)]
    fn hit_prim(
        ray: &Ray,
        p: &Prim,
        cull: bool,
        exclude: &dyn Fn(BodyId) -> bool,
        best: &mut Option<RayHit>,
    ) {
        counters::add(Work::WalkTest, 1);
        if cull && !ray.may_hit(&p.aabb, best.map_or(ray.max, |h| h.distance)) {
            return;
        }
        // Excluded bodies before the exact test: a sensor's ray starts inside its own robot,
        // whose prims pass every cull.
        if exclude(BodyId(p.body)) {
            return;
        }
        counters::add(Work::RayCast, 1);
        if let Some((t, n)) = p.cast(&ray.o, &ray.d, ray.max) {
            offer(best, p.body, t, n);
        }
    }

    /// One ray: the nearest hit within `max_distance`.
    pub(crate) fn ray(
        &self,
        origin: Point3,
        direction: Vec3,
        max_distance: f64,
        exclude: &dyn Fn(BodyId) -> bool,
    ) -> Option<RayHit> {
        counters::add(Work::Ray, 1);
        let ray = Ray::new(&origin, &direction, max_distance)?;
        let mut best = None;
        self.hit_planes(&ray, exclude, &mut best);
        let Some(layout) = self.index() else {
            // Without a grid every prim is offered: culled in a small world, else (the grid
            // dropped, or a body added since the step) unculled, the tests' brute force.
            self.each_prim(|_, p| Self::hit_prim(&ray, p, self.small, exclude, &mut best));
            return best;
        };
        for &i in &self.outside {
            Self::hit_prim(&ray, self.mover_prim(i), true, exclude, &mut best);
        }
        self.walk_cells(layout, &ray, exclude, &mut best, |_, _| false);
        best
    }

    /// Walks `ray` through the grid's cells, offering their walls' and movers' prims, until a
    /// cell ends beyond the best hit; cells for which `skip` is true are passed over (a ring's
    /// near cells, already offered to every ray).
    pub(crate) fn walk_cells(
        &self,
        layout: &ssx_core::spatial::Layout,
        ray: &Ray,
        exclude: &dyn Fn(BodyId) -> bool,
        best: &mut Option<RayHit>,
        skip: impl Fn(usize, usize) -> bool,
    ) {
        // A moving prim, read through its index (it moved in place this step).
        let mover = |i: u32, best: &mut Option<RayHit>| {
            Self::hit_prim(ray, self.mover_prim(i), true, exclude, best)
        };
        counters::add(Work::Walk, 1);
        let g = self.grids();
        let (statics, movers) = (g.baked.bits(), g.movers.bits());
        grid::walk(
            layout,
            (ray.o.x, ray.o.y),
            (ray.d.x, ray.d.y),
            ray.max,
            |x, y, leave| {
                if !skip(x, y) {
                    counters::add(Work::WalkCell, 1);
                    let c = y * layout.nx + x;
                    let bit = 1 << (c % 64);
                    if statics[c / 64] & bit != 0 {
                        for p in g.baked.cell(c) {
                            Self::hit_prim(ray, p, true, exclude, best);
                        }
                    }
                    if movers[c / 64] & bit != 0 {
                        g.movers.cell(layout, x, y, |i| mover(i, best));
                    }
                }
                // A hit before this cell's exit cannot be beaten further on.
                best.is_none_or(|h: RayHit| h.distance > leave)
            },
        );
    }
}
