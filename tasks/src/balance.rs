//! `balance`, after VMAS 1.5's `vmas/scenarios/balance.py`: under gravity in the plane, the
//! team lifts a line with a package resting on it and carries the package to a goal above,
//! without letting the line or the package touch the floor.
//!
//! VMAS's rules and defaults, kept: `n_agents` = 3 agents of radius 0.03, their actions times
//! 0.7; gravity (0, −0.05) m/s² on every body; a line of 0.8 m and 5 kg that turns, and on it a
//! ball of radius 0.05 and `package_mass` = 5 kg (the scene's, with the placement: the line's
//! centre at x uniform in [−0.6, 0.6], y = −0.94, the agents evenly under it, the ball at x
//! uniform along the line with `random_package_pos_on_line`, else at its middle); a goal of
//! radius 0.05, uniform in [−1, 1] × [0, 1]; a floor, a 10 × 1 m box whose top is at
//! y = −1.03. The observation (position, velocity, agent − package, agent − line, package −
//! goal, the package's velocity, the line's velocity, its turn rate and its heading modulo π:
//! 16 values); the reward, the same for every agent: the package's distance to the goal at the
//! last step less now, times 100 (`shaping_factor`), and −10 (`fall_reward`) while the line or
//! the package touches the floor; the episode ends when either touches the floor or the package
//! overlaps the goal.
//!
//! Touching is VMAS's `is_overlapping`: the ball within its radius plus `LINE_MIN_DIST` of the
//! floor box; the line within `LINE_MIN_DIST` of it. ssx's line is a box `LINE_MIN_DIST` thick
//! each side of that line, which a rigid contact holds at about that distance, so the line's
//! test adds VMAS's `contact_margin` (1e-3 m).

use crate::{Body, LINE_MIN_DIST, Options, Outcome, Rules, World, distance};

/// The balance task's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Balance {
    /// Agents (`n_agents`, at least 2).
    pub agents: usize,
    /// The package's mass (kg): the scene's; here to be refused with the others when out of range.
    pub package_mass: f64,
    /// Whether the package starts anywhere along the line (the scene's placement).
    pub random_package_pos_on_line: bool,
}

/// The line's length (m).
pub const LINE_LENGTH: f64 = 0.8;
/// An agent's radius (m).
pub const AGENT_RADIUS: f64 = 0.03;
/// The package's and the goal's radius (VMAS's `Sphere()` default).
pub const BALL_RADIUS: f64 = 0.05;
/// The world's y semidim (VMAS's `y_semidim`).
pub const Y_SEMIDIM: f64 = 1.0;
/// The floor's top face (y, m): VMAS's floor box of width 1 centred at −y_semidim − 0.5 − the
/// agents' radius.
pub const FLOOR_TOP: f64 = -Y_SEMIDIM - AGENT_RADIUS;
/// Half the floor's length (m).
pub const FLOOR_HALF_LENGTH: f64 = 5.0;
/// The floor box's bottom face (y, m).
const FLOOR_BOTTOM: f64 = FLOOR_TOP - 1.0;
/// VMAS's `shaping_factor`.
const SHAPING: f64 = 100.0;
/// VMAS's `fall_reward`.
const FALL_REWARD: f64 = -10.0;
/// VMAS's World `contact_margin` (vmas/simulator/core.py).
const CONTACT_MARGIN: f64 = 1e-3;

impl Balance {
    /// Metrics, one value a world: the package on the goal, the line or package on the floor,
    /// the package's distance to the goal.
    pub const METRICS: &'static [&'static str] = &["on_goal", "fell", "distance"];

    /// The task for `agents` with VMAS's keyword `options`.
    pub fn new(agents: usize, options: &[(String, f64)]) -> Result<Self, String> {
        if agents < 2 {
            return Err(format!("balance: needs at least 2 agents, got {agents}"));
        }
        let mut o = Options::new("balance", options);
        let t = Balance {
            agents,
            package_mass: o.number("package_mass", 5.0, 1e-3, 1e6)?,
            random_package_pos_on_line: o.flag("random_package_pos_on_line", true)?,
        };
        o.done()?;
        Ok(t)
    }

    /// The goal, the package and the line.
    fn bodies<'a>(&self, w: &World<'a>) -> (&'a Body, &'a Body, &'a Body) {
        (&w.objects[0], &w.objects[1], &w.objects[2])
    }

    /// Whether the line or the package touches the floor (see the module's doc).
    pub fn on_the_ground(&self, package: &Body, line: &Body) -> bool {
        let half = LINE_LENGTH / 2.0;
        let (c, s) = (line.rot.cos(), line.rot.sin());
        let a = [line.pos[0] - half * c, line.pos[1] - half * s];
        let b = [line.pos[0] + half * c, line.pos[1] + half * s];
        box_distance(package.pos) < BALL_RADIUS + LINE_MIN_DIST
            || segment_box_distance(a, b) < LINE_MIN_DIST + CONTACT_MARGIN
    }

    /// Whether the package overlaps the goal (two discs of radius 0.05 m).
    pub fn on_goal(&self, package: &Body, goal: &Body) -> bool {
        distance(package.pos, goal.pos) < 2.0 * BALL_RADIUS
    }
}

/// A point's distance to the floor box (0 inside it).
fn box_distance(p: [f64; 2]) -> f64 {
    let dx = (p[0].abs() - FLOOR_HALF_LENGTH).max(0.0);
    let dy = (p[1] - FLOOR_TOP).max(FLOOR_BOTTOM - p[1]).max(0.0);
    dx.hypot(dy)
}

/// A point's distance to the segment a–b.
fn segment_distance(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    let ab = [b[0] - a[0], b[1] - a[1]];
    let len2 = ab[0] * ab[0] + ab[1] * ab[1];
    let t = if len2 > 0.0 {
        (((p[0] - a[0]) * ab[0] + (p[1] - a[1]) * ab[1]) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    distance(p, [a[0] + t * ab[0], a[1] + t * ab[1]])
}

/// The segment a–b's distance to the floor box: 0 where it crosses the box, else the nearest
/// of its ends to the box and the box's corners to it (two convex sets apart).
fn segment_box_distance(a: [f64; 2], b: [f64; 2]) -> f64 {
    let (lo, hi) = (
        [-FLOOR_HALF_LENGTH, FLOOR_BOTTOM],
        [FLOOR_HALF_LENGTH, FLOOR_TOP],
    );
    // Liang–Barsky: the part of the segment inside the box, if any.
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    let mut crosses = true;
    for k in 0..2 {
        let d = b[k] - a[k];
        if d == 0.0 {
            crosses &= a[k] >= lo[k] && a[k] <= hi[k];
        } else {
            let (u, v) = ((lo[k] - a[k]) / d, (hi[k] - a[k]) / d);
            t0 = t0.max(u.min(v));
            t1 = t1.min(u.max(v));
        }
    }
    if crosses && t0 <= t1 {
        return 0.0;
    }
    let corners = [lo, [hi[0], lo[1]], hi, [lo[0], hi[1]]];
    corners
        .iter()
        .map(|&c| segment_distance(c, a, b))
        .chain([box_distance(a), box_distance(b)])
        .fold(f64::INFINITY, f64::min)
}

impl Rules for Balance {
    fn agents(&self) -> usize {
        self.agents
    }

    /// The goal, the package and the line.
    fn objects(&self) -> usize {
        3
    }

    fn observation_width(&self) -> usize {
        16
    }

    /// The package's shaping term at the last step.
    fn memory(&self) -> usize {
        1
    }

    fn metric_names(&self) -> &'static [&'static str] {
        Self::METRICS
    }

    fn start(&self, w: &World<'_>, memory: &mut [f64]) {
        let (goal, package, _) = self.bodies(w);
        memory[0] = distance(package.pos, goal.pos) * SHAPING;
    }

    fn observe(&self, w: &World<'_>, _: &[f64], out: &mut [f64]) {
        let (goal, p, line) = self.bodies(w);
        for (a, o) in w.agents.iter().zip(out.chunks_exact_mut(16)) {
            o.copy_from_slice(&[
                a.pos[0],
                a.pos[1],
                a.vel[0],
                a.vel[1],
                a.pos[0] - p.pos[0],
                a.pos[1] - p.pos[1],
                a.pos[0] - line.pos[0],
                a.pos[1] - line.pos[1],
                p.pos[0] - goal.pos[0],
                p.pos[1] - goal.pos[1],
                p.vel[0],
                p.vel[1],
                line.vel[0],
                line.vel[1],
                line.angvel,
                line.rot.rem_euclid(std::f64::consts::PI),
            ]);
        }
    }

    fn reward(&self, w: &World<'_>, memory: &mut [f64], out: &mut [f64]) -> Outcome {
        let (goal, package, line) = self.bodies(w);
        let fell = self.on_the_ground(package, line);
        let shaping = distance(package.pos, goal.pos) * SHAPING;
        let ground = if fell { FALL_REWARD } else { 0.0 };
        out.fill(ground + (memory[0] - shaping));
        memory[0] = shaping;
        Outcome {
            done: fell || self.on_goal(package, goal),
        }
    }

    fn measure(&self, w: &World<'_>, _: &[f64], out: &mut [f64]) {
        let (goal, package, line) = self.bodies(w);
        out[0] = f64::from(u8::from(self.on_goal(package, goal)));
        out[1] = f64::from(u8::from(self.on_the_ground(package, line)));
        out[2] = distance(package.pos, goal.pos);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Task, at};

    fn line(x: f64, y: f64, rot: f64) -> Body {
        Body { rot, ..at(x, y) }
    }

    /// The package raised 0.1 m toward the goal earns everyone 100 × 0.1; the line's end on the
    /// floor costs 10 and ends the episode, as does the package on the goal.
    #[test]
    fn the_reward_by_hand() {
        let t = Task::new("balance", 3, &[]).unwrap();
        assert_eq!((t.objects(), t.observation_width(), t.memory()), (3, 16, 1));
        let agents = [at(-0.4, -1.0), at(0.0, -1.0), at(0.4, -1.0)];
        let goal = at(0.0, 0.5);
        let level = line(0.0, -0.94, 0.0);
        let mut memory = vec![0.0];
        let mut out = vec![0.0; 3];
        let w = World {
            agents: &agents,
            objects: &[goal, at(0.0, -0.89), level],
            lidar: &[],
        };
        t.start(&w, &mut memory);
        assert!((memory[0] - 139.0).abs() < 1e-9, "{memory:?}");
        let up = [goal, at(0.0, -0.79), line(0.0, -0.84, 0.0)];
        let w = World { objects: &up, ..w };
        assert!(!t.reward(&w, &mut memory, &mut out).done);
        for r in &out {
            assert!((r - 10.0).abs() < 1e-9, "{out:?}");
        }
        // Tilted so that its low end is 4/600 + 0.5e-3 m above the floor's top: touching.
        let tilt = (-0.84 - (FLOOR_TOP + LINE_MIN_DIST + 0.5e-3)) / (LINE_LENGTH / 2.0);
        let fallen = [goal, at(0.0, -0.79), line(0.0, -0.84, tilt.asin())];
        let w = World {
            objects: &fallen,
            ..w
        };
        assert!(t.reward(&w, &mut memory, &mut out).done);
        assert!((out[0] + 10.0).abs() < 1e-9, "{out:?}");
        let mut m = [0.0; 3];
        t.measure(&w, &memory, &mut m);
        assert_eq!(&m[..2], &[0.0, 1.0]);
        // 2 mm higher, it does not touch.
        let tilt = (-0.84 - (FLOOR_TOP + LINE_MIN_DIST + 2.5e-3)) / (LINE_LENGTH / 2.0);
        let held = [goal, at(0.0, -0.79), line(0.0, -0.84, tilt.asin())];
        let w = World {
            objects: &held,
            ..w
        };
        assert!(!t.reward(&w, &mut memory, &mut out).done);
        // The package within 0.1 m of the goal's centre is on it.
        let there = [goal, at(0.0, 0.41), level];
        let w = World {
            objects: &there,
            ..w
        };
        assert!(t.reward(&w, &mut memory, &mut out).done);
        t.measure(&w, &memory, &mut m);
        assert_eq!(&m[..2], &[1.0, 0.0]);
    }

    #[test]
    fn the_package_on_the_floor() {
        let t = Balance::new(3, &[]).unwrap();
        let level = line(0.0, 0.0, 0.0);
        assert!(t.on_the_ground(&at(1.0, FLOOR_TOP + 0.05 + 0.006), &level));
        assert!(!t.on_the_ground(&at(1.0, FLOOR_TOP + 0.05 + 0.007), &level));
        // Past the floor's end, nothing touches it.
        assert!(!t.on_the_ground(&at(5.06, FLOOR_TOP), &level));
        assert!(t.on_the_ground(&at(5.05, FLOOR_TOP), &level));
    }

    #[test]
    fn the_observation_in_vmas_order() {
        let t = Task::new("balance", 2, &[]).unwrap();
        let agents = [
            Body {
                pos: [0.5, -1.0],
                vel: [0.1, 0.2],
                ..Body::default()
            },
            at(0.0, -1.0),
        ];
        let objects = [
            at(0.0, 0.5),
            Body {
                pos: [0.1, -0.85],
                vel: [0.0, 0.3],
                ..Body::default()
            },
            Body {
                pos: [0.2, -0.9],
                vel: [0.01, 0.02],
                rot: -0.1,
                angvel: 0.4,
            },
        ];
        let w = World {
            agents: &agents,
            objects: &objects,
            lidar: &[],
        };
        let mut out = vec![0.0; 32];
        t.observe(&w, &[], &mut out);
        let want = [
            0.5,
            -1.0,
            0.1,
            0.2,
            0.4,
            -0.15,
            0.3,
            -0.1,
            0.1,
            -1.35,
            0.0,
            0.3,
            0.01,
            0.02,
            0.4,
            std::f64::consts::PI - 0.1,
        ];
        for (g, w) in out[..16].iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{out:?}");
        }
    }

    #[test]
    fn a_lone_agent_is_refused() {
        assert_eq!(
            Balance::new(1, &[]).unwrap_err(),
            "balance: needs at least 2 agents, got 1"
        );
        let err = Task::new("balance", 3, &[("package_mass".into(), 0.0)]).unwrap_err();
        assert_eq!(
            err,
            "balance: option 'package_mass' must be from 0.001 to 1000000, got 0"
        );
    }
}
