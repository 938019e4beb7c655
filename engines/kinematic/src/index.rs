//! Filing the prims for the queries and the moves: the statics baked with the grid's layout, the
//! movers filed each step under their bounds swept over it, or (a small world) nothing at all.

use ssx_core::parallel::{self, Parallel};
use ssx_core::spatial::{Grid, Layout, ListGrid};

use crate::baked::Baked;
use crate::shape::Prim;
use crate::{KinematicEngine, motion};

/// The grids a world files its prims in, laid out together.
#[derive(Debug, Default)]
pub(crate) struct Grids {
    /// Static bodies' prims.
    pub statics: Grid,
    /// Moving bodies' prims, each under its bounds swept over the step.
    pub movers: ListGrid,
    /// The static prims' copies by cell, and the cells holding any (baked with the layout).
    pub baked: Baked,
    /// The workers' shares of filing the movers.
    lanes: Vec<SweepLane>,
}

/// One worker's share of filing the movers in the grid: what it found, in id order. Alone on
/// its cache lines, as [`motion::Lane`] is.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct SweepLane {
    entries: Vec<(u32, [f64; 4])>,
    outside: Vec<u32>,
    moving: usize,
}

impl KinematicEngine {
    /// Forgets the grid: queries test every collider, rays without culling, until the next step
    /// rebuilds it. The tests use it to check the grid's answers against brute force on the
    /// same world.
    pub fn drop_index(&mut self) {
        self.layout = None;
        self.outside.clear();
        self.indexed = false;
        self.small = false;
    }

    /// Worlds of at most `prims` prims keep no grid from the next step on
    /// ([`crate::SMALL_WORLD`] unless set; 0 files every world): the tests compare the two ways
    /// on one world.
    pub fn set_small_world(&mut self, prims: usize) {
        self.small_limit = prims;
    }

    /// Calls `f` with every prim whose (swept) bounds may meet `b`, and its index: the statics'
    /// baked copies, then the movers as they are now.
    pub(crate) fn near(&self, b: &[f64; 4], mut f: impl FnMut(u32, &Prim)) {
        let prim = |i: u32| self.mover_prim(i);
        match self.index() {
            None => self.each_prim(f),
            Some(layout) => {
                let g = self.grids();
                g.baked.visit(layout, &g.statics, b, &mut f);
                g.movers.visit(layout, b, |i| f(i, prim(i)));
                self.outside.iter().for_each(|&i| f(i, prim(i)));
            }
        }
    }

    /// The grids' layout, when they file every prim.
    #[inline]
    pub(crate) fn index(&self) -> Option<&Layout> {
        self.layout.as_ref().filter(|_| self.indexed)
    }

    /// The grids (there are grids wherever there is a layout: they are made together).
    #[inline]
    pub(crate) fn grids(&self) -> &Grids {
        self.grids
            .as_deref()
            .expect("the grids are made with the layout")
    }

    /// Lays the grid out anew over everything (cells twice the median moving footprint).
    fn relayout(&mut self) {
        let mut bounds = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
        self.each_prim(|_, p| {
            bounds[0] = bounds[0].min(p.aabb[0]);
            bounds[1] = bounds[1].min(p.aabb[1]);
            bounds[2] = bounds[2].max(p.aabb[2]);
            bounds[3] = bounds[3].max(p.aabb[3]);
        });
        if self.prim_count() == 0 {
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
        let mut sizes: Vec<f64> = self.prims.iter().map(|p| size(&p)).collect();
        if sizes.is_empty() {
            sizes = self.statics.prims.iter().map(size).collect();
        }
        let cell = if sizes.is_empty() {
            1.0
        } else {
            let mid = sizes.len() / 2;
            *sizes.select_nth_unstable_by(mid, f64::total_cmp).1 * 2.0
        };
        let layout = Layout::covering(bounds, cell.max(0.05));
        self.entries.clear();
        let walls = &self.statics.prims;
        (self.entries).extend((0..).zip(walls).map(|(i, p)| (i, p.aabb)));
        let g = self.grids.get_or_insert_default();
        g.statics.build(&layout, &self.entries);
        g.baked.bake(&layout, &g.statics, |i| walls[i as usize]);
        self.layout = Some(layout);
        self.static_dirty = false;
    }

    /// Files every moving prim under its bounds swept over the coming step.
    pub(crate) fn index_movers(&mut self, dt: f64, par: &dyn Parallel) {
        if std::mem::take(&mut self.grown) {
            // The world is built (bodies come before the first step): the lists grown by
            // doubling keep only what they hold, which is most of a small world's memory in a
            // batch of thousands (issue 60).
            self.slots.shrink_to_fit();
            self.bodies.shrink_to_fit();
            self.motion.shrink_to_fit();
            self.prims.shrink_to_fit();
            self.planes.shrink_to_fit();
            self.moving_ids.shrink_to_fit();
            if let Some(statics) = std::sync::Arc::get_mut(&mut self.statics) {
                statics.poses.shrink_to_fit();
                statics.prims.shrink_to_fit();
            }
        }
        self.small = self.prim_count() <= self.small_limit;
        if self.small {
            self.indexed = false;
            self.entries.clear();
            self.outside.clear();
            self.moving = (self.bodies.iter())
                .filter(|b| b.carried_by.is_none())
                .count();
            return;
        }
        let outside_limit = 64.max(self.prim_count() / 10);
        if self.layout.is_none() || self.static_dirty || self.outside.len() > outside_limit {
            self.relayout();
        }
        let layout = self.layout.expect("laid out above");
        // Each lane sweeps an id range of bodies; the lanes' lists, joined in order, are what one
        // thread would have listed, so the grid is the same whatever the workers.
        let n = self.bodies.len();
        let lanes = if n >= motion::MIN_STRIPS {
            par.workers().max(1)
        } else {
            1
        };
        let mut sweeps = std::mem::take(&mut self.grids.as_mut().expect("laid out above").lanes);
        sweeps.reserve_exact(lanes.saturating_sub(sweeps.len()));
        sweeps.resize_with(lanes, SweepLane::default);
        let engine = &*self;
        parallel::for_each_mut(par, &mut sweeps, &|k, lane| {
            lane.entries.clear();
            lane.outside.clear();
            lane.moving = 0;
            for b in parallel::share(n, lanes, k) {
                engine.sweep(b, dt, &layout, lane);
            }
        });
        self.entries.clear();
        self.outside.clear();
        self.moving = 0;
        for lane in &sweeps {
            self.entries.extend_from_slice(&lane.entries);
            self.outside.extend_from_slice(&lane.outside);
            self.moving += lane.moving;
        }
        ssx_core::counters::add(ssx_core::counters::Work::Filed, self.entries.len() as u64);
        let g = self.grids.as_mut().expect("laid out above");
        g.lanes = sweeps;
        g.movers.build(&layout, &self.entries);
        self.indexed = true;
    }

    /// Files mover `b`'s prims under their bounds swept over the step into `lane` (or its
    /// outside list when they leave the grid), by their numbers (walls first: statics.rs).
    fn sweep(&self, b: usize, dt: f64, layout: &Layout, lane: &mut SweepLane) {
        let body = &self.bodies[b];
        lane.moving += usize::from(body.carried_by.is_none());
        // A carried body turns about its carrier: its reach counts from there.
        let arm = body.carrier().map_or(body.reach, |(_, o)| {
            o.translation.vector.xy().norm() + body.reach
        });
        // It moves as its carrier does now: the carrier's integrated velocity, not the copy
        // it took when its own turn came (before a carrier of a later id was integrated).
        let m = body
            .carrier()
            .map_or_else(|| self.motion.get(b), |(c, _)| self.motion_of(c));
        let reach = m.linvel.xy().norm() * dt + m.angvel.norm() * dt * arm + 1e-6;
        let walls = self.statics.prims.len();
        for i in body.prims() {
            let a = self.prims.get_ref(i).aabb;
            let swept = [a[0] - reach, a[1] - reach, a[2] + reach, a[3] + reach];
            let number = (walls + i) as u32;
            if layout.holds(&swept) {
                lane.entries.push((number, swept));
            } else {
                lane.outside.push(number);
            }
        }
    }
}
