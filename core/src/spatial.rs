//! A uniform grid over the plane: each cell lists the items whose bounds meet it, stored flat
//! (one offsets array and one items array, filled by counting sort), so that building it for
//! 10,000 bodies is two passes and a query touches a few cache lines.

/// The grid's cells: where they are and how large.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    /// Lower corner.
    pub x0: f64,
    /// Lower corner.
    pub y0: f64,
    /// Cell side (m).
    pub cell: f64,
    /// Cells along x.
    pub nx: usize,
    /// Cells along y.
    pub ny: usize,
}

/// At most this many cells (4 million: 16 MiB of offsets).
pub const MAX_CELLS: usize = 1 << 22;

impl Layout {
    /// Cells of side `cell` (at least) over the bounds, grown where needed to stay within
    /// [`MAX_CELLS`].
    pub fn covering(bounds: [f64; 4], cell: f64) -> Layout {
        let (w, h) = (
            (bounds[2] - bounds[0]).max(0.0),
            (bounds[3] - bounds[1]).max(0.0),
        );
        let mut cell = cell.max(1e-3);
        while (w / cell + 1.0) * (h / cell + 1.0) > MAX_CELLS as f64 {
            cell *= 2.0;
        }
        Layout {
            x0: bounds[0],
            y0: bounds[1],
            cell,
            nx: (w / cell).floor() as usize + 1,
            ny: (h / cell).floor() as usize + 1,
        }
    }

    /// Whether bounds lie inside the grid.
    #[inline]
    pub fn holds(&self, b: &[f64; 4]) -> bool {
        b[0] >= self.x0
            && b[1] >= self.y0
            && b[2] < self.x0 + self.nx as f64 * self.cell
            && b[3] < self.y0 + self.ny as f64 * self.cell
    }

    /// The cell column or row of a coordinate, clamped into the grid.
    #[inline]
    fn index(&self, v: f64, origin: f64, n: usize) -> usize {
        // Truncation is the floor for the non-negative values kept; NaN goes to 0.
        let i = (v - origin) / self.cell;
        if i >= 1.0 { (i as usize).min(n - 1) } else { 0 }
    }

    /// The cells bounds meet: columns ix0..=ix1, rows iy0..=iy1 (clamped).
    #[inline]
    pub fn span(&self, b: &[f64; 4]) -> (usize, usize, usize, usize) {
        (
            self.index(b[0], self.x0, self.nx),
            self.index(b[1], self.y0, self.ny),
            self.index(b[2], self.x0, self.nx),
            self.index(b[3], self.y0, self.ny),
        )
    }
}

/// Items (u32 indices) by cell.
#[derive(Clone, Debug, Default)]
pub struct Grid {
    /// `start[c]..start[c + 1]` indexes `items` for cell c.
    start: Vec<u32>,
    items: Vec<u32>,
    /// Scratch for [`Grid::build`], kept so that rebuilding allocates nothing.
    fill: Vec<u32>,
}

impl Grid {
    /// Fills the grid with `(item, bounds)`; bounds outside the layout are clamped into its
    /// border cells (callers keep such items apart; see [`Layout::holds`]).
    pub fn build(&mut self, layout: &Layout, entries: &[(u32, [f64; 4])]) {
        let cells = layout.nx * layout.ny;
        self.start.clear();
        resize_roomy(&mut self.start, cells + 1, 0);
        for (_, b) in entries {
            let (x0, y0, x1, y1) = layout.span(b);
            for y in y0..=y1 {
                for x in x0..=x1 {
                    self.start[y * layout.nx + x + 1] += 1;
                }
            }
        }
        for c in 0..cells {
            self.start[c + 1] += self.start[c];
        }
        self.items.clear();
        resize_roomy(&mut self.items, self.start[cells] as usize, 0);
        // Fill from the back so each cell ends up in entry order (deterministic, ascending).
        let fill = &mut self.fill;
        fill.clear();
        reserve_roomy(fill, cells);
        fill.extend_from_slice(&self.start[1..]);
        for (item, b) in entries.iter().rev() {
            let (x0, y0, x1, y1) = layout.span(b);
            for y in y0..=y1 {
                for x in x0..=x1 {
                    let c = y * layout.nx + x;
                    fill[c] -= 1;
                    self.items[fill[c] as usize] = *item;
                }
            }
        }
    }

    /// Where each cell's items begin in [`Grid::items`] (one more than the cells: the last is
    /// the end); empty before the first build.
    pub fn offsets(&self) -> &[u32] {
        &self.start
    }

    /// Every cell's items, cell after cell.
    pub fn items(&self) -> &[u32] {
        &self.items
    }

    /// The items of one cell.
    #[inline]
    pub fn cell(&self, layout: &Layout, x: usize, y: usize) -> &[u32] {
        let c = y * layout.nx + x;
        match (self.start.get(c), self.start.get(c + 1)) {
            (Some(&a), Some(&b)) => &self.items[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Calls `f` for every item in a cell that the bounds meet (an item may come more than
    /// once when it spans cells).
    pub fn visit(&self, layout: &Layout, b: &[f64; 4], mut f: impl FnMut(u32)) {
        if self.start.is_empty() {
            return;
        }
        let (x0, y0, x1, y1) = layout.span(b);
        for y in y0..=y1 {
            for x in x0..=x1 {
                for &i in self.cell(layout, x, y) {
                    f(i);
                }
            }
        }
    }
}

/// Resizes `v` to `len`; when that outgrows it, it reserves twice `len`, so that a grid whose
/// layout varies a little from step to step (cells sized to the crowd) stops allocating after
/// its first steps.
pub fn resize_roomy<T: Clone>(v: &mut Vec<T>, len: usize, value: T) {
    reserve_roomy(v, len);
    v.resize(len, value);
}

/// Makes room for `len` elements in all, twice that when it must grow (see [`resize_roomy`]).
fn reserve_roomy<T>(v: &mut Vec<T>, len: usize) {
    if v.capacity() < len {
        v.reserve(2 * len - v.len());
    }
}

/// Items by cell as linked lists, for what moves: rebuilding costs the items and the cells they
/// touched last time, not the whole grid (a 400 m arena has 200,000 cells and 10,000 robots).
#[derive(Clone, Debug, Default)]
pub struct ListGrid {
    /// First link of each cell, `u32::MAX` for none.
    head: Vec<u32>,
    /// (item, next link).
    links: Vec<(u32, u32)>,
    touched: Vec<u32>,
    /// One bit a cell, set where an item is filed (see [`ListGrid::bits`]).
    bits: Vec<u64>,
}

impl ListGrid {
    /// Fills the grid with `(item, bounds)`, clamped into the layout; a cell lists its items in
    /// reverse entry order.
    pub fn build(&mut self, layout: &Layout, entries: &[(u32, [f64; 4])]) {
        let cells = layout.nx * layout.ny;
        if self.head.len() != cells {
            self.head.clear();
            self.head.resize(cells, u32::MAX);
            self.bits.clear();
            self.bits.resize(cells.div_ceil(64), 0);
        } else {
            for &c in &self.touched {
                self.head[c as usize] = u32::MAX;
                self.bits[c as usize / 64] = 0;
            }
        }
        self.touched.clear();
        self.links.clear();
        for (item, b) in entries {
            let (x0, y0, x1, y1) = layout.span(b);
            for y in y0..=y1 {
                for x in x0..=x1 {
                    let c = y * layout.nx + x;
                    if self.head[c] == u32::MAX {
                        self.touched.push(c as u32);
                        self.bits[c / 64] |= 1 << (c % 64);
                    }
                    self.links.push((*item, self.head[c]));
                    self.head[c] = self.links.len() as u32 - 1;
                }
            }
        }
    }

    /// One bit a cell (cell c is bit c % 64 of word c / 64), set where an item is filed: a walk
    /// over mostly empty cells reads these few words rather than the heads. Empty before the
    /// first build.
    #[inline]
    pub fn bits(&self) -> &[u64] {
        &self.bits
    }

    /// Calls `f` for every item of one cell.
    #[inline]
    pub fn cell(&self, layout: &Layout, x: usize, y: usize, mut f: impl FnMut(u32)) {
        let mut at = self
            .head
            .get(y * layout.nx + x)
            .copied()
            .unwrap_or(u32::MAX);
        while let Some(&(item, next)) = self.links.get(at as usize) {
            f(item);
            at = next;
        }
    }

    /// Calls `f` for every item in a cell that the bounds meet.
    pub fn visit(&self, layout: &Layout, b: &[f64; 4], mut f: impl FnMut(u32)) {
        if self.head.is_empty() {
            return;
        }
        let (x0, y0, x1, y1) = layout.span(b);
        for y in y0..=y1 {
            for x in x0..=x1 {
                self.cell(layout, x, y, &mut f);
            }
        }
    }
}

/// The cells a segment in the plane crosses, in order along it, each with the parameter at
/// which the segment leaves it: Amanatides and Woo's traversal. The segment is `o + t·d` for
/// t in [0, tmax]; `visit` returns false to stop.
pub fn walk(
    layout: &Layout,
    o: (f64, f64),
    d: (f64, f64),
    tmax: f64,
    mut visit: impl FnMut(usize, usize, f64) -> bool,
) {
    let gx1 = layout.x0 + layout.nx as f64 * layout.cell;
    let gy1 = layout.y0 + layout.ny as f64 * layout.cell;
    // Clip to the grid's rectangle.
    let (mut t0, mut t1) = (0.0f64, tmax);
    for (oc, dc, lo, hi) in [(o.0, d.0, layout.x0, gx1), (o.1, d.1, layout.y0, gy1)] {
        if dc.abs() < 1e-300 {
            if oc < lo || oc > hi {
                return;
            }
        } else {
            let (a, b) = ((lo - oc) / dc, (hi - oc) / dc);
            t0 = t0.max(a.min(b));
            t1 = t1.min(a.max(b));
        }
    }
    if t0 > t1 {
        return;
    }
    let (sx, sy) = (o.0 + d.0 * t0, o.1 + d.1 * t0);
    let mut ix = layout.index(sx, layout.x0, layout.nx);
    let mut iy = layout.index(sy, layout.y0, layout.ny);
    let step = |dc: f64| -> (i64, f64) {
        if dc > 0.0 {
            (1, layout.cell / dc)
        } else if dc < 0.0 {
            (-1, -layout.cell / dc)
        } else {
            (0, f64::INFINITY)
        }
    };
    let (stepx, dtx) = step(d.0);
    let (stepy, dty) = step(d.1);
    let boundary = |i: usize, s: i64, origin: f64, oc: f64, dc: f64| -> f64 {
        if s == 0 {
            return f64::INFINITY;
        }
        let edge = origin + (i as f64 + if s > 0 { 1.0 } else { 0.0 }) * layout.cell;
        (edge - oc) / dc
    };
    let mut tx = boundary(ix, stepx, layout.x0, o.0, d.0);
    let mut ty = boundary(iy, stepy, layout.y0, o.1, d.1);
    loop {
        let leave = tx.min(ty).min(t1);
        if !visit(ix, iy, leave) || leave >= t1 {
            return;
        }
        if tx < ty {
            let next = ix as i64 + stepx;
            if next < 0 || next >= layout.nx as i64 {
                return;
            }
            ix = next as usize;
            tx += dtx;
        } else {
            let next = iy as i64 + stepy;
            if next < 0 || next >= layout.ny as i64 {
                return;
            }
            iy = next as usize;
            ty += dty;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cells holding anything, read from the bits.
    fn flagged(grid: &ListGrid, cells: usize) -> Vec<usize> {
        (0..cells)
            .filter(|c| grid.bits()[c / 64] & (1 << (c % 64)) != 0)
            .collect()
    }

    /// A list grid's bits say exactly which cells hold items, after a rebuild that moves the
    /// items too (the cells left behind are cleared, also where a word holds cells still used).
    #[test]
    fn list_grid_bits_flag_exactly_the_cells_that_hold_items() {
        let layout = Layout::covering([0.0, 0.0, 19.9, 9.9], 1.0);
        assert_eq!((layout.nx, layout.ny), (20, 10));
        let cells = layout.nx * layout.ny;
        let mut grid = ListGrid::default();
        grid.build(
            &layout,
            &[(0, [0.5, 0.5, 1.5, 0.7]), (1, [12.2, 3.1, 12.4, 3.3])],
        );
        // Item 0 spans cells (0, 0) and (1, 0); item 1 sits in (12, 3).
        assert_eq!(flagged(&grid, cells), vec![0, 1, 3 * 20 + 12]);
        grid.build(
            &layout,
            &[(0, [1.2, 0.2, 1.4, 0.4]), (1, [19.5, 9.5, 19.6, 9.6])],
        );
        assert_eq!(flagged(&grid, cells), vec![1, cells - 1]);
        let mut items = Vec::new();
        grid.cell(&layout, 1, 0, |i| items.push(i));
        assert_eq!(items, vec![0]);
        grid.build(&layout, &[]);
        assert_eq!(flagged(&grid, cells), Vec::<usize>::new());
    }
}
