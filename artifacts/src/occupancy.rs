//! Which cells of a map are occupied, and the rectangles that cover them: what a bitmap
//! (map.rs) and a generated cave or building (generate.rs) both become before they are walls.

/// A rectangle of occupied pixels: first column, first row (row 0 is the image's top), width
/// and height in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rect {
    /// First column.
    pub x: u32,
    /// First row (from the top).
    pub y: u32,
    /// Columns.
    pub w: u32,
    /// Rows.
    pub h: u32,
}

/// Which pixels are occupied, row by row from the top.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occupancy {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// `width × height` flags.
    pub cells: Vec<bool>,
}

impl Occupancy {
    /// The occupied pixels as rectangles: horizontal runs, merged downwards while a run below
    /// spans exactly the same columns. Every occupied pixel is in exactly one rectangle.
    pub fn rectangles(&self) -> Vec<Rect> {
        let (w, h) = (self.width as usize, self.height as usize);
        let mut done = Vec::new();
        // Open rectangles, sorted by first column: (x0, x1, first row).
        let mut open: Vec<(u32, u32, u32)> = Vec::new();
        let mut next = Vec::new();
        for row in 0..=h {
            let mut runs = Vec::new();
            if row < h {
                let line = &self.cells[row * w..(row + 1) * w];
                let mut x = 0;
                while x < w {
                    if line[x] {
                        let start = x;
                        while x < w && line[x] {
                            x += 1;
                        }
                        runs.push((start as u32, x as u32));
                    } else {
                        x += 1;
                    }
                }
            }
            next.clear();
            let mut k = 0;
            for &(x0, x1, r0) in &open {
                while k < runs.len() && runs[k].0 < x0 {
                    next.push((runs[k].0, runs[k].1, row as u32));
                    k += 1;
                }
                if k < runs.len() && runs[k] == (x0, x1) {
                    next.push((x0, x1, r0));
                    k += 1;
                } else {
                    done.push(Rect {
                        x: x0,
                        y: r0,
                        w: x1 - x0,
                        h: row as u32 - r0,
                    });
                }
            }
            next.extend(runs[k..].iter().map(|&(a, b)| (a, b, row as u32)));
            std::mem::swap(&mut open, &mut next);
        }
        done.sort_unstable_by_key(|r| (r.y, r.x));
        done
    }
}
