//! Static geometry baked once (issue 51): when the grid is laid out, every static prim is copied
//! into the cells its bounds meet, in the static grid's order, so that a cell's walls lie
//! contiguous in memory and a query reads no index and no body; and every cell gets one bit,
//! set where a static prim is filed. A ray crossing open floor reads the bits (with the movers'
//! own, `ListGrid::bits`) instead of two offsets arrays per cell: ray casting went from 22% of
//! the run's samples to 15% at 10,000 robots, 25% to 21% at 1000 (BENCHMARKS.md, "Swarm speed,
//! fourth round").
//!
//! The copies are the prims themselves, so the exact tests of `shape.rs` give the same results
//! to the bit (the brute-force property tests in `tests/kinematic.rs`).

use ssx_core::spatial::{Grid, Layout};

use crate::shape::Prim;

/// The static prims by cell, and the cells that hold any.
#[derive(Debug, Default)]
pub(crate) struct Baked {
    /// Cell c's prims are `prims[offsets[c]..offsets[c + 1]]` (the static grid's offsets).
    offsets: Vec<u32>,
    prims: Vec<Prim>,
    /// One bit a cell, set where a static prim is filed.
    bits: Vec<u64>,
}

impl Baked {
    /// Bakes the static prims, filed in `grid` under `layout` by their indices into `prims`.
    pub fn bake(&mut self, layout: &Layout, grid: &Grid, prims: impl Fn(u32) -> Prim) {
        let cells = layout.nx * layout.ny;
        self.offsets.clear();
        self.offsets.extend_from_slice(grid.offsets());
        self.prims.clear();
        self.prims.extend(grid.items().iter().map(|&i| prims(i)));
        self.bits.clear();
        self.bits.resize(cells.div_ceil(64), 0);
        for c in 0..cells {
            if self.offsets[c] != self.offsets[c + 1] {
                self.bits[c / 64] |= 1 << (c % 64);
            }
        }
    }

    /// One bit a cell (cell c is bit c % 64 of word c / 64): set where a static prim is filed.
    #[inline]
    pub fn bits(&self) -> &[u64] {
        &self.bits
    }

    /// The static prims filed in cell `c`.
    #[inline]
    pub fn cell(&self, c: usize) -> &[Prim] {
        &self.prims[self.offsets[c] as usize..self.offsets[c + 1] as usize]
    }

    /// Calls `f` with the index (`grid`, the static grid these were baked from, holds them) and
    /// the copy's position (for [`Baked::prim`]) of each static prim filed in cell `c`.
    #[inline]
    pub fn cell_ids(&self, grid: &Grid, c: usize, mut f: impl FnMut(u32, u32)) {
        let (a, e) = (self.offsets[c], self.offsets[c + 1]);
        for (&i, at) in grid.items()[a as usize..e as usize].iter().zip(a..e) {
            f(i, at);
        }
    }

    /// The baked copy at `at` (from [`Baked::cell_ids`]).
    #[inline]
    pub fn prim(&self, at: u32) -> &Prim {
        &self.prims[at as usize]
    }

    /// Calls `f` with each static prim filed in a cell that bounds `b` meet, and its index
    /// (`grid`, the static grid these were baked from, holds them), in the grid's order.
    pub fn visit(&self, layout: &Layout, grid: &Grid, b: &[f64; 4], mut f: impl FnMut(u32, &Prim)) {
        if self.prims.is_empty() {
            return;
        }
        let items = grid.items();
        let (x0, y0, x1, y1) = layout.span(b);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let c = y * layout.nx + x;
                let (a, e) = (self.offsets[c] as usize, self.offsets[c + 1] as usize);
                for (&i, p) in items[a..e].iter().zip(&self.prims[a..e]) {
                    f(i, p);
                }
            }
        }
    }
}
