//! Maps generated from a seed, after MAES 2.0 (reference/002): caves grown by a cellular
//! automaton and buildings made by splitting rooms recursively and joining them with doors.
//!
//! A generated map is an [`Occupancy`] like a bitmap's, so it becomes walls the same way. The
//! generator uses its own integer random numbers (SplitMix64) and integer arithmetic only, so
//! the same seed gives the same map, bit for bit, on every machine and with every build.
//!
//! Every free cell of a generated map is reachable from the spawn area (4-connected, the way a
//! robot the size of one cell moves): a cave's unreachable pockets are filled in; a building's
//! doors are never closed off by a later wall, and the result is checked all the same. A map
//! with too little free space reachable (less than [`MIN_FREE`] of its cells) is generated again
//! from a seed derived from the first, up to [`ATTEMPTS`] times, then refused with a message.

use std::collections::VecDeque;

use ssx_sdk::random::SplitMix;

use crate::occupancy::Occupancy;

/// Least share of a map's cells that must be free and reachable.
pub const MIN_FREE: f64 = 0.25;
/// Generations tried before a map is refused.
pub const ATTEMPTS: u32 = 8;
/// Most cells a side.
pub const MAX_CELLS: u32 = 4000;

/// The seed of attempt `k` (0 is the seed itself).
pub fn derived_seed(seed: u64, k: u32) -> u64 {
    if k == 0 {
        seed
    } else {
        SplitMix::new(seed ^ u64::from(k).wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64()
    }
}

/// A cave: `fill` of the cells start as rock, then `smoothing` rounds of the 4-5 rule (a cell
/// becomes rock with more than four rock neighbours of eight, free with fewer than four).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cave {
    /// The seed.
    pub seed: u64,
    /// Cells a side (columns, rows).
    pub cells: [u32; 2],
    /// Share of rock at the start.
    pub fill: f64,
    /// Rounds of the automaton.
    pub smoothing: u32,
}

/// A building: the floor is split along its longer side, wall by wall, until rooms are smaller
/// than twice `room`; every wall gets one door `door` cells wide.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Building {
    /// The seed.
    pub seed: u64,
    /// Cells a side (columns, rows).
    pub cells: [u32; 2],
    /// Least room side (cells).
    pub room: u32,
    /// Door width (cells).
    pub door: u32,
}

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A cave.
    Cave(Cave),
    /// A building.
    Building(Building),
}

/// Where robots start: a disc of cells kept free, and the place every free cell is reached from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spawn {
    /// Centre cell (column, row from the bottom).
    pub cell: [u32; 2],
    /// Radius (cells).
    pub radius: u32,
}

/// A generated map and the seed that made it (the given one, or a derived one after retries).
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    /// Rock and walls, row 0 at the top (as an image).
    pub occupancy: Occupancy,
    /// The seed of the accepted attempt.
    pub seed: u64,
    /// Attempts made (1 when the first was accepted).
    pub attempts: u32,
}

/// A grid with row 0 at the bottom, `true` for rock or wall.
struct Cells {
    w: u32,
    h: u32,
    rock: Vec<bool>,
}

impl Cells {
    fn at(&self, x: u32, y: u32) -> bool {
        self.rock[(y * self.w + x) as usize]
    }
    fn set(&mut self, x: u32, y: u32, v: bool) {
        self.rock[(y * self.w + x) as usize] = v;
    }
    fn border(&mut self) {
        for x in 0..self.w {
            self.set(x, 0, true);
            self.set(x, self.h - 1, true);
        }
        for y in 0..self.h {
            self.set(0, y, true);
            self.set(self.w - 1, y, true);
        }
    }
    fn into_occupancy(self) -> Occupancy {
        let (w, h) = (self.w as usize, self.h as usize);
        let mut cells = Vec::with_capacity(w * h);
        for row in (0..h).rev() {
            cells.extend_from_slice(&self.rock[row * w..(row + 1) * w]);
        }
        Occupancy {
            width: self.w,
            height: self.h,
            cells,
        }
    }
}

/// Generates a map, retrying from derived seeds until enough of it is free and reachable.
pub fn generate(kind: Kind, spawn: Spawn) -> Result<Generated, String> {
    let ([w, h], seed) = match kind {
        Kind::Cave(c) => (c.cells, c.seed),
        Kind::Building(b) => (b.cells, b.seed),
    };
    if !(8..=MAX_CELLS).contains(&w) || !(8..=MAX_CELLS).contains(&h) {
        return Err(format!(
            "a generated map must be from 8 to {MAX_CELLS} cells a side, got {w} × {h} (size / resolution)"
        ));
    }
    let [sx, sy] = spawn.cell;
    if sx == 0 || sy == 0 || sx >= w - 1 || sy >= h - 1 {
        return Err(format!(
            "the spawn point (cell {sx}, {sy}) is not inside the map's border ({w} × {h} cells)"
        ));
    }
    let mut best = 0.0;
    for k in 0..ATTEMPTS {
        let s = derived_seed(seed, k);
        let mut cells = match kind {
            Kind::Cave(c) => cave(&Cave { seed: s, ..c }),
            Kind::Building(b) => building(&Building { seed: s, ..b }),
        };
        clear_disc(&mut cells, spawn);
        let reached = reachable(&cells, spawn.cell);
        let free = fill_unreached(&mut cells, &reached);
        let share = free as f64 / f64::from(w * h);
        if share >= MIN_FREE {
            return Ok(Generated {
                occupancy: cells.into_occupancy(),
                seed: s,
                attempts: k + 1,
            });
        }
        best = f64::max(best, share);
    }
    Err(format!(
        "no map with at least {:.0}% of its cells free and reachable from the spawn point in {ATTEMPTS} attempts (best {:.1}%); lower \"fill\", add \"smoothing\" or try another seed",
        MIN_FREE * 100.0,
        best * 100.0
    ))
}

fn cave(c: &Cave) -> Cells {
    let [w, h] = c.cells;
    let mut rng = SplitMix::new(c.seed);
    let mut cells = Cells {
        w,
        h,
        rock: (0..w * h).map(|_| rng.chance(c.fill)).collect(),
    };
    cells.border();
    let mut next = cells.rock.clone();
    for _ in 0..c.smoothing {
        for y in 1..h - 1 {
            for x in 1..w - 1 {
                let mut n = 0;
                for dy in 0..3 {
                    for dx in 0..3 {
                        if (dx, dy) != (1, 1) && cells.at(x + dx - 1, y + dy - 1) {
                            n += 1;
                        }
                    }
                }
                let i = (y * w + x) as usize;
                next[i] = match n {
                    0..=3 => false,
                    4 => cells.rock[i],
                    _ => true,
                };
            }
        }
        std::mem::swap(&mut cells.rock, &mut next);
    }
    cells
}

fn building(b: &Building) -> Cells {
    let [w, h] = b.cells;
    let mut rng = SplitMix::new(b.seed);
    let mut cells = Cells {
        w,
        h,
        rock: vec![false; (w * h) as usize],
    };
    cells.border();
    let mut door = vec![false; (w * h) as usize];
    // Rooms as inclusive free-cell ranges: x0, x1, y0, y1.
    let mut rooms = vec![(1, w - 2, 1, h - 2)];
    let room = b.room.max(1);
    while let Some((x0, x1, y0, y1)) = rooms.pop() {
        let (rw, rh) = (x1 - x0 + 1, y1 - y0 + 1);
        let vertical = rw >= rh;
        let (len, span) = if vertical { (rw, rh) } else { (rh, rw) };
        // A wall one cell thick leaves rooms of at least `room` on both sides.
        if len < 2 * room + 1 || span < b.door {
            continue;
        }
        let is_door = |x: u32, y: u32| door[(y * w + x) as usize];
        // Wall positions whose ends would not close a door of the walls around this room.
        let candidates: Vec<u32> = (room..=len - room - 1)
            .map(|k| if vertical { x0 + k } else { y0 + k })
            .filter(|&p| {
                if vertical {
                    !is_door(p, y0 - 1) && !is_door(p, y1 + 1)
                } else {
                    !is_door(x0 - 1, p) && !is_door(x1 + 1, p)
                }
            })
            .collect();
        if candidates.is_empty() {
            continue;
        }
        let p = candidates[rng.below(candidates.len() as u32) as usize];
        let d0 = rng.below(span - b.door + 1);
        for k in 0..span {
            let (x, y) = if vertical { (p, y0 + k) } else { (x0 + k, p) };
            if (d0..d0 + b.door).contains(&k) {
                door[(y * w + x) as usize] = true;
            } else {
                cells.set(x, y, true);
            }
        }
        if vertical {
            rooms.push((x0, p - 1, y0, y1));
            rooms.push((p + 1, x1, y0, y1));
        } else {
            rooms.push((x0, x1, y0, p - 1));
            rooms.push((x0, x1, p + 1, y1));
        }
    }
    cells
}

fn clear_disc(cells: &mut Cells, s: Spawn) {
    let r = i64::from(s.radius);
    for dy in -r..=r {
        for dx in -r..=r {
            if dx * dx + dy * dy > r * r {
                continue;
            }
            let (x, y) = (i64::from(s.cell[0]) + dx, i64::from(s.cell[1]) + dy);
            if x > 0 && y > 0 && x < i64::from(cells.w) - 1 && y < i64::from(cells.h) - 1 {
                cells.set(x as u32, y as u32, false);
            }
        }
    }
}

/// The cells reachable from `from` through free cells, 4-connected.
fn reachable(cells: &Cells, from: [u32; 2]) -> Vec<bool> {
    let (w, h) = (cells.w, cells.h);
    let mut seen = vec![false; (w * h) as usize];
    let mut queue = VecDeque::new();
    let start = (from[1] * w + from[0]) as usize;
    if !cells.rock[start] {
        seen[start] = true;
        queue.push_back(from);
    }
    while let Some([x, y]) = queue.pop_front() {
        for (nx, ny) in [
            (x + 1, y),
            (x.wrapping_sub(1), y),
            (x, y + 1),
            (x, y.wrapping_sub(1)),
        ] {
            if nx >= w || ny >= h {
                continue;
            }
            let i = (ny * w + nx) as usize;
            if !seen[i] && !cells.rock[i] {
                seen[i] = true;
                queue.push_back([nx, ny]);
            }
        }
    }
    seen
}

/// Turns free cells that were not reached into rock; returns the free cells left.
fn fill_unreached(cells: &mut Cells, reached: &[bool]) -> u32 {
    let mut free = 0;
    for (rock, &r) in cells.rock.iter_mut().zip(reached) {
        if !r {
            *rock = true;
        } else {
            free += 1;
        }
    }
    free
}

/// Whether every free cell of `occ` is 4-connected to the free cell `from` (column, row from the
/// bottom): the property every generated map has.
pub fn all_free_reachable(occ: &Occupancy, from: [u32; 2]) -> bool {
    let (w, h) = (occ.width, occ.height);
    let mut rock = Vec::with_capacity(occ.cells.len());
    for row in (0..h as usize).rev() {
        rock.extend_from_slice(&occ.cells[row * w as usize..(row + 1) * w as usize]);
    }
    let cells = Cells { w, h, rock };
    let reached = reachable(&cells, from);
    cells.rock.iter().zip(&reached).all(|(&r, &s)| r || s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cave(seed: u64) -> Kind {
        Kind::Cave(Cave {
            seed,
            cells: [120, 80],
            fill: 0.45,
            smoothing: 5,
        })
    }
    fn building(seed: u64) -> Kind {
        Kind::Building(Building {
            seed,
            cells: [100, 70],
            room: 10,
            door: 2,
        })
    }
    const SPAWN: Spawn = Spawn {
        cell: [50, 35],
        radius: 3,
    };

    #[test]
    fn the_same_seed_makes_the_same_map_and_another_seed_another() {
        for kind in [cave as fn(u64) -> Kind, building] {
            let a = generate(kind(7), SPAWN).unwrap();
            let b = generate(kind(7), SPAWN).unwrap();
            let c = generate(kind(8), SPAWN).unwrap();
            assert_eq!(a, b);
            assert_ne!(a.occupancy.cells, c.occupancy.cells);
        }
    }

    #[test]
    fn every_free_cell_is_reachable_from_the_spawn_point_and_the_border_is_closed() {
        for seed in 0..20 {
            for kind in [cave(seed), building(seed)] {
                let g = generate(kind, SPAWN).unwrap();
                let o = &g.occupancy;
                assert!(all_free_reachable(o, SPAWN.cell), "{kind:?}");
                let free = o.cells.iter().filter(|&&c| !c).count() as f64;
                assert!(free >= MIN_FREE * o.cells.len() as f64);
                let (w, h) = (o.width as usize, o.height as usize);
                for x in 0..w {
                    assert!(o.cells[x] && o.cells[(h - 1) * w + x]);
                }
                for y in 0..h {
                    assert!(o.cells[y * w] && o.cells[y * w + w - 1]);
                }
            }
        }
    }

    #[test]
    fn a_building_has_rooms_at_least_room_size_wide() {
        let g = generate(building(3), SPAWN).unwrap();
        let o = &g.occupancy;
        let (w, h) = (o.width as usize, o.height as usize);
        let walls = o.cells.iter().filter(|&&c| c).count();
        let border = 2 * (w + h) - 4;
        // The floor was split: interior walls exist, and they are not the whole floor.
        assert!(walls > border + 100, "{walls}");
        assert!(walls < o.cells.len() / 4);
        // Along every row, two cells inside vertical walls (rock above and below) have at
        // least `room` (10) free cells between them: no room is narrower than asked.
        let rock = |x: usize, y: usize| o.cells[y * w + x];
        let mut narrowest = usize::MAX;
        for y in 1..h - 1 {
            let mut last = None;
            for x in 0..w {
                if rock(x, y) && rock(x, y - 1) && rock(x, y + 1) {
                    if let Some(l) = last
                        && x - l > 1
                    {
                        narrowest = narrowest.min(x - l - 1);
                    }
                    last = Some(x);
                }
            }
        }
        assert!(narrowest >= 10, "a room only {narrowest} cells wide");
        // No free cell is a one-cell pocket.
        for (i, &rock) in o.cells.iter().enumerate() {
            if !rock {
                let free_near = [i + 1, i - 1, i + w, i - w]
                    .into_iter()
                    .any(|j| !o.cells[j]);
                assert!(free_near);
            }
        }
    }

    #[test]
    fn a_cave_too_full_to_hold_enough_free_space_is_refused_with_a_message() {
        let kind = Kind::Cave(Cave {
            seed: 1,
            cells: [60, 60],
            fill: 0.9,
            smoothing: 4,
        });
        let spawn = Spawn {
            cell: [30, 30],
            radius: 2,
        };
        let e = generate(kind, spawn).unwrap_err();
        assert!(
            e.starts_with("no map with at least 25% of its cells free and reachable from the spawn point in 8 attempts (best "),
            "{e}"
        );
        // Fewer cells than the floor and a spawn point on the border are refused at once.
        let small = Kind::Cave(Cave {
            cells: [4, 60],
            ..match kind {
                Kind::Cave(c) => c,
                _ => unreachable!(),
            }
        });
        assert_eq!(
            generate(small, spawn).unwrap_err(),
            "a generated map must be from 8 to 4000 cells a side, got 4 × 60 (size / resolution)"
        );
        let edge = Spawn {
            cell: [0, 30],
            radius: 2,
        };
        assert_eq!(
            generate(kind, edge).unwrap_err(),
            "the spawn point (cell 0, 30) is not inside the map's border (60 × 60 cells)"
        );
    }
}

#[cfg(test)]
mod golden {
    use super::*;

    /// FNV-1a over the cells (1 rock, 0 free), row by row from the top.
    fn fnv(o: &Occupancy) -> u64 {
        o.cells.iter().fold(0xcbf2_9ce4_8422_2325, |h, &c| {
            (h ^ u64::from(c)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    /// The maps of two seeds, pinned: a change of generator, arithmetic or platform that
    /// changes one cell fails here (the scene files' maps would change with it).
    #[test]
    fn pinned_maps_have_not_changed() {
        let spawn = Spawn {
            cell: [50, 35],
            radius: 3,
        };
        let cave = generate(
            Kind::Cave(Cave {
                seed: 7,
                cells: [120, 80],
                fill: 0.45,
                smoothing: 5,
            }),
            spawn,
        )
        .unwrap();
        let building = generate(
            Kind::Building(Building {
                seed: 7,
                cells: [100, 70],
                room: 10,
                door: 2,
            }),
            spawn,
        )
        .unwrap();
        let got = (fnv(&cave.occupancy), fnv(&building.occupancy));
        assert_eq!(got, (0x3898_8b26_398b_f7f7, 0xd382_7fff_75fe_cb37));
    }
}
