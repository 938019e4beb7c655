//! The extension's grid over the explored area: cell arithmetic and the cells a segment crosses.

/// A grid of square cells over a rectangle of the plane; cell (0, 0) is at the lower left.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Raster {
    /// Lower-left corner.
    pub x0: f64,
    /// Lower-left corner.
    pub y0: f64,
    /// Cell side (m).
    pub cell: f64,
    /// Columns.
    pub nx: u32,
    /// Rows.
    pub ny: u32,
}

impl Raster {
    /// Cells in all.
    pub fn len(&self) -> usize {
        self.nx as usize * self.ny as usize
    }
    /// Whether it has no cells.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The index of the cell holding (x, y), if inside.
    pub fn index(&self, x: f64, y: f64) -> Option<usize> {
        let fx = ((x - self.x0) / self.cell).floor();
        let fy = ((y - self.y0) / self.cell).floor();
        (fx >= 0.0 && fy >= 0.0 && fx < f64::from(self.nx) && fy < f64::from(self.ny))
            .then(|| fy as usize * self.nx as usize + fx as usize)
    }
    /// The centre of cell `i`.
    pub fn centre(&self, i: usize) -> [f64; 2] {
        let (ix, iy) = (i % self.nx as usize, i / self.nx as usize);
        [
            self.x0 + (ix as f64 + 0.5) * self.cell,
            self.y0 + (iy as f64 + 0.5) * self.cell,
        ]
    }
    /// Calls `visit` with each cell index within `r` of (x, y) (by cell centre).
    pub fn disc(&self, x: f64, y: f64, r: f64, mut visit: impl FnMut(usize)) {
        let c = self.cell;
        let lo_x = (((x - r - self.x0) / c).floor().max(0.0)) as i64;
        let hi_x = (((x + r - self.x0) / c).floor()).min(f64::from(self.nx) - 1.0) as i64;
        let lo_y = (((y - r - self.y0) / c).floor().max(0.0)) as i64;
        let hi_y = (((y + r - self.y0) / c).floor()).min(f64::from(self.ny) - 1.0) as i64;
        for iy in lo_y..=hi_y {
            for ix in lo_x..=hi_x {
                let cx = self.x0 + (ix as f64 + 0.5) * c;
                let cy = self.y0 + (iy as f64 + 0.5) * c;
                if (cx - x).powi(2) + (cy - y).powi(2) <= r * r {
                    visit(iy as usize * self.nx as usize + ix as usize);
                }
            }
        }
    }

    /// Calls `visit(cell, entered_at)` with each cell the segment from `a` to `b` crosses, in
    /// order (Amanatides and Woo 1987), `entered_at` being the distance from `a` where the
    /// segment enters it (0 for the first); stops when `visit` returns false or the segment
    /// leaves the grid. Cells outside the grid are skipped up to the grid's edge.
    pub fn trace(&self, a: [f64; 2], b: [f64; 2], mut visit: impl FnMut(usize, f64) -> bool) {
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let len = (dx * dx + dy * dy).sqrt();
        if !len.is_finite() {
            return;
        }
        let (ux, uy) = if len > 0.0 {
            (dx / len, dy / len)
        } else {
            (0.0, 0.0)
        };
        // Clip to the grid (slab method) so a segment starting outside enters at its edge.
        let (w, h) = (
            f64::from(self.nx) * self.cell,
            f64::from(self.ny) * self.cell,
        );
        let (mut t0, mut t1) = (0.0f64, len);
        for (p, u, lo, hi) in [
            (a[0], ux, self.x0, self.x0 + w),
            (a[1], uy, self.y0, self.y0 + h),
        ] {
            if u == 0.0 {
                if p < lo || p >= hi {
                    return;
                }
            } else {
                let (s0, s1) = ((lo - p) / u, (hi - p) / u);
                t0 = t0.max(s0.min(s1));
                t1 = t1.min(s0.max(s1));
            }
        }
        if t0 > t1 {
            return;
        }
        let (px, py) = (a[0] + ux * t0, a[1] + uy * t0);
        let c = self.cell;
        let clamp = |v: f64, n: u32| (v.floor().max(0.0) as i64).min(i64::from(n) - 1);
        let mut ix = clamp((px - self.x0) / c, self.nx);
        let mut iy = clamp((py - self.y0) / c, self.ny);
        let step_x: i64 = if ux > 0.0 { 1 } else { -1 };
        let step_y: i64 = if uy > 0.0 { 1 } else { -1 };
        let next = |i: i64, s: i64, o: f64, p: f64, u: f64| {
            if u == 0.0 {
                f64::INFINITY
            } else {
                let edge = o + (i + i64::from(s > 0)) as f64 * c;
                t0 + (edge - p) / u
            }
        };
        let mut tx = next(ix, step_x, self.x0, px, ux);
        let mut ty = next(iy, step_y, self.y0, py, uy);
        let (dtx, dty) = (c / ux.abs(), c / uy.abs());
        let mut entered = t0;
        loop {
            if !visit(iy as usize * self.nx as usize + ix as usize, entered) {
                return;
            }
            if tx <= ty {
                if tx > t1 {
                    return;
                }
                entered = tx;
                ix += step_x;
                tx += dtx;
            } else {
                if ty > t1 {
                    return;
                }
                entered = ty;
                iy += step_y;
                ty += dty;
            }
            if ix < 0 || iy < 0 || ix >= i64::from(self.nx) || iy >= i64::from(self.ny) {
                return;
            }
        }
    }

    /// Wall crossings along the segment: the times it passes from a free cell into a wall.
    pub fn crossings(&self, walls: &[bool], a: [f64; 2], b: [f64; 2]) -> u32 {
        let (mut n, mut inside) = (0, None);
        self.trace(a, b, |i, _| {
            let wall = walls[i];
            if wall && inside == Some(false) {
                n += 1;
            }
            inside = Some(wall);
            true
        });
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Raster = Raster {
        x0: -1.0,
        y0: 0.0,
        cell: 0.5,
        nx: 8,
        ny: 4,
    };

    #[test]
    fn a_trace_visits_the_cells_a_segment_crosses_in_order() {
        let mut cells = Vec::new();
        R.trace([-0.9, 0.1], [1.1, 1.2], |i, _| {
            cells.push((i % 8, i / 8));
            true
        });
        assert_eq!(
            cells,
            [(0, 0), (1, 0), (1, 1), (2, 1), (3, 1), (3, 2), (4, 2)]
        );
        // Every crossed cell is met by the segment, and its neighbours are.
        let mut back = Vec::new();
        R.trace([1.1, 1.2], [-0.9, 0.1], |i, _| {
            back.push((i % 8, i / 8));
            true
        });
        back.reverse();
        assert_eq!(back, cells);
        // A segment starting outside enters at the edge; one outside entirely visits nothing.
        let mut first = None;
        R.trace([-3.0, 0.25], [0.0, 0.25], |i, t| {
            first.get_or_insert((i, t));
            true
        });
        assert_eq!(first, Some((0, 2.0)));
        let mut any = false;
        R.trace([-3.0, 5.0], [5.0, 5.0], |_, _| {
            any = true;
            true
        });
        assert!(!any);
    }

    #[test]
    fn crossings_count_entries_into_walls() {
        let mut walls = vec![false; R.len()];
        for iy in 0..4 {
            walls[iy * 8 + 2] = true;
            walls[iy * 8 + 5] = true;
            walls[iy * 8 + 6] = true;
        }
        assert_eq!(R.crossings(&walls, [-0.9, 1.0], [2.9, 1.0]), 2);
        assert_eq!(R.crossings(&walls, [-0.9, 1.0], [-0.6, 1.0]), 0);
        // Starting inside a wall is not a crossing.
        assert_eq!(R.crossings(&walls, [0.1, 1.0], [0.9, 1.0]), 0);
    }

    #[test]
    fn a_disc_holds_the_cells_whose_centres_are_within_its_radius() {
        let mut n = 0;
        R.disc(0.0, 1.0, 0.5, |_| n += 1);
        // Centres at (±0.25, ±0.25) and (±0.25, ±0.75)... within 0.5: the four nearest.
        assert_eq!(n, 4);
    }
}
