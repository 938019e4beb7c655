//! Per-robot occupancy grids built from scans at the robot's estimated pose, and their merging.

use ssx_sdk::explore::{Scan, SlamMap};

use crate::raster::Raster;

/// Evidence added by a ray ending in a cell.
pub const HIT: i8 = 3;
/// Evidence removed by a ray passing through a cell.
pub const MISS: i8 = 1;
/// Largest evidence either way.
pub const CLAMP: i8 = 20;

/// One robot's map.
#[derive(Clone, Debug)]
pub struct Slam {
    pub map: SlamMap,
}

impl Slam {
    /// An empty map over `r`.
    pub fn new(r: &Raster) -> Self {
        Slam {
            map: SlamMap {
                nx: r.nx,
                ny: r.ny,
                origin: [r.x0, r.y0],
                cell: r.cell,
                pose: [0.0; 3],
                scans: 0,
                cells: vec![0; r.len()],
            },
        }
    }

    /// Takes a scan at its estimated pose: cells a ray passes lose evidence, the cell it ends in
    /// (short of its maximum range) gains.
    pub fn take(&mut self, r: &Raster, scan: &Scan) {
        let [x, y, yaw] = scan.estimate;
        let (s, c) = yaw.sin_cos();
        let origin = [
            x + c * scan.mount[0] - s * scan.mount[1],
            y + s * scan.mount[0] + c * scan.mount[1],
        ];
        let cells = &mut self.map.cells;
        for &[angle, d] in &scan.rays {
            let hit = (0.0..scan.max_range).contains(&d);
            let d = d.abs().min(scan.max_range);
            let a = yaw + angle;
            let end = [origin[0] + d * a.cos(), origin[1] + d * a.sin()];
            let last = r.index(end[0], end[1]);
            r.trace(origin, end, |i, _| {
                if hit && Some(i) == last {
                    return false;
                }
                cells[i] = cells[i].saturating_sub(MISS).max(-CLAMP);
                true
            });
            if let (true, Some(i)) = (hit, last) {
                cells[i] = cells[i].saturating_add(HIT).min(CLAMP);
            }
        }
        self.map.pose = scan.estimate;
        self.map.scans += 1;
    }
}

/// Merges maps cell by cell: each cell takes the strongest evidence any of them holds (ties to
/// occupied). Idempotent and independent of order, so merging again changes nothing.
pub fn merge(maps: &mut [&mut Slam], scratch: &mut Vec<i8>) {
    let Some(first) = maps.first() else {
        return;
    };
    scratch.clear();
    scratch.extend_from_slice(&first.map.cells);
    for m in maps.iter().skip(1) {
        for (s, &v) in scratch.iter_mut().zip(&m.map.cells) {
            if v.unsigned_abs() > s.unsigned_abs()
                || (v.unsigned_abs() == s.unsigned_abs() && v > *s)
            {
                *s = v;
            }
        }
    }
    for m in maps.iter_mut() {
        m.map.cells.copy_from_slice(scratch);
    }
}
