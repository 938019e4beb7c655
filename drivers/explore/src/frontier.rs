//! Nearest-frontier planning on an occupancy grid: a breadth-first search from the robot's cell
//! through free cells kept `clearance` away from occupied ones, to the nearest free cell next to
//! an unknown one that no other robot has claimed.

use std::collections::VecDeque;

use ssx_sdk::explore::{Belief, SlamMap};

/// A plan: the goal cell's centre and the path's cell centres from the start.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Where it ends.
    pub goal: [f64; 2],
    /// Cell centres from the robot to the goal.
    pub path: Vec<[f64; 2]>,
}

/// Scratch space kept between plans.
#[derive(Default)]
pub struct Planner {
    blocked: Vec<bool>,
    parent: Vec<u32>,
    queue: VecDeque<u32>,
}

const NONE: u32 = u32::MAX;

impl Planner {
    /// The nearest frontier from `from` (x, y) on `map`, avoiding cells within `clearance` of
    /// an occupied cell and goals within `spread` of any of `claimed`; `None` when none is left.
    pub fn plan(
        &mut self,
        map: &SlamMap,
        from: [f64; 2],
        clearance: f64,
        claimed: &[[f64; 2]],
        spread: f64,
    ) -> Option<Plan> {
        let (nx, ny) = (map.nx as i64, map.ny as i64);
        let n = map.cells.len();
        self.blocked.clear();
        self.blocked.resize(n, false);
        let r = (clearance / map.cell).ceil() as i64;
        for iy in 0..ny {
            for ix in 0..nx {
                if map.belief(ix as u32, iy as u32) != Belief::Occupied {
                    continue;
                }
                for dy in -r..=r {
                    for dx in -r..=r {
                        let (x, y) = (ix + dx, iy + dy);
                        if x >= 0 && y >= 0 && x < nx && y < ny && dx * dx + dy * dy <= r * r {
                            self.blocked[(y * nx + x) as usize] = true;
                        }
                    }
                }
            }
        }
        let (sx, sy) = map.cell_of(from[0], from[1])?;
        let start = sy * map.nx + sx;
        self.parent.clear();
        self.parent.resize(n, NONE);
        self.queue.clear();
        self.parent[start as usize] = start;
        self.queue.push_back(start);
        let free = |i: u32| map.cells[i as usize] < 0;
        let mut goal = None;
        while let Some(i) = self.queue.pop_front() {
            let (x, y) = (i64::from(i % map.nx), i64::from(i / map.nx));
            let near = [(x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)];
            let inside = |&(x, y): &(i64, i64)| x >= 0 && y >= 0 && x < nx && y < ny;
            let frontier = i != start
                && near
                    .iter()
                    .filter(|c| inside(c))
                    .any(|&(x, y)| map.cells[(y * nx + x) as usize] == 0);
            if frontier {
                let c = map.centre(x as u32, y as u32);
                let taken = claimed
                    .iter()
                    .any(|g| (g[0] - c[0]).powi(2) + (g[1] - c[1]).powi(2) < spread * spread);
                if !taken {
                    goal = Some(i);
                    break;
                }
            }
            for (x, y) in near.into_iter().filter(|c| inside(c)) {
                let j = (y * nx + x) as u32;
                if self.parent[j as usize] == NONE && free(j) && !self.blocked[j as usize] {
                    self.parent[j as usize] = i;
                    self.queue.push_back(j);
                }
            }
        }
        let goal = goal?;
        let mut path = Vec::new();
        let mut i = goal;
        while i != start {
            path.push(map.centre(i % map.nx, i / map.nx));
            i = self.parent[i as usize];
        }
        path.reverse();
        Some(Plan {
            goal: map.centre(goal % map.nx, goal / map.nx),
            path,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A map from rows drawn top first: '#' occupied, '.' free, ' ' unknown.
    fn map(rows: &[&str]) -> SlamMap {
        let ny = rows.len() as u32;
        let nx = rows[0].len() as u32;
        let mut cells = vec![0i8; (nx * ny) as usize];
        for (r, row) in rows.iter().enumerate() {
            let iy = ny - 1 - r as u32;
            for (ix, ch) in row.chars().enumerate() {
                cells[(iy * nx + ix as u32) as usize] = match ch {
                    '#' => 5,
                    '.' => -5,
                    _ => 0,
                };
            }
        }
        SlamMap {
            nx,
            ny,
            origin: [0.0, 0.0],
            cell: 1.0,
            pose: [0.0; 3],
            scans: 1,
            cells,
        }
    }

    #[test]
    fn the_nearest_reachable_unclaimed_frontier_is_chosen() {
        let m = map(&[
            "##########",
            "#........ ",
            "#.######.#",
            "#......#.#",
            "#####.##.#",
            "##### ####",
        ]);
        let mut p = Planner::default();
        // From (1.5, 2.5): the gap at the bottom (5, 1) is nearer than the right end (9, 4).
        let plan = p.plan(&m, [1.5, 2.5], 0.0, &[], 0.0).unwrap();
        assert_eq!(plan.goal, [5.5, 1.5]);
        assert_eq!(plan.path.first(), Some(&[2.5, 2.5]));
        assert_eq!(plan.path.len(), 5);
        // Claimed by another robot: the next one.
        let plan = p.plan(&m, [1.5, 2.5], 0.0, &[[5.5, 1.5]], 1.0).unwrap();
        assert_eq!(plan.goal, [8.5, 4.5]);
        // Nothing unknown reachable: no plan.
        let closed = map(&["#####", "#...#", "#####"]);
        assert_eq!(p.plan(&closed, [1.5, 1.5], 0.0, &[], 0.0), None);
    }
}
