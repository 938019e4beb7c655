//! `transport`, after VMAS 1.5's `vmas/scenarios/transport.py`: the team pushes heavy packages
//! onto a goal.
//!
//! VMAS's rules and defaults, kept: 4 agents of radius 0.03, their actions times 0.6
//! (`u_multiplier`, the scene's); `n_packages` = 1 box of `package_length` × `package_width` =
//! 0.15 × 0.15 m and `package_mass` = 50 kg (the scene's); a goal of radius 0.15 that nothing
//! touches; the observation (position, velocity, then for each package: package − goal,
//! package − agent, the package's velocity, whether it is on the goal: 4 + 7 a package); the
//! reward, the same for every agent: for each package not on the goal, its distance to the goal
//! at the last step less now, times 100 (`shaping_factor`); the episode ends when every package
//! is on the goal. A package is on the goal when the goal's centre is within the goal's radius
//! plus VMAS's `LINE_MIN_DIST` (4/600 m) of the package's box (VMAS's `is_overlapping` for a
//! box and a sphere).

use crate::{Body, LINE_MIN_DIST, Options, Outcome, Rules, World, distance};

/// The transport task's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Transport {
    /// Agents (`n_agents`).
    pub agents: usize,
    /// Packages.
    pub n_packages: usize,
    /// A package's side along its x axis (m).
    pub package_length: f64,
    /// A package's side along its y axis (m).
    pub package_width: f64,
    /// A package's mass (kg): the scene's; here to be refused with the others when out of range.
    pub package_mass: f64,
}

/// The goal's radius (VMAS's transport: `Sphere(radius=0.15)`).
pub const GOAL_RADIUS: f64 = 0.15;
/// The shaping factor (VMAS's `shaping_factor`).
const SHAPING: f64 = 100.0;

impl Transport {
    /// Metrics, one value a world: packages on the goal, mean distance of a package to it.
    pub const METRICS: &'static [&'static str] = &["on_goal", "distance"];

    /// The task for `agents` with VMAS's keyword `options`.
    pub fn new(agents: usize, options: &[(String, f64)]) -> Result<Self, String> {
        let mut o = Options::new("transport", options);
        let t = Transport {
            agents: agents.max(1),
            n_packages: o.count("n_packages", 1, 1, 64)?,
            package_length: o.number("package_length", 0.15, 1e-3, 10.0)?,
            package_width: o.number("package_width", 0.15, 1e-3, 10.0)?,
            package_mass: o.number("package_mass", 50.0, 1e-3, 1e6)?,
        };
        o.done()?;
        Ok(t)
    }

    /// The goal, then the packages.
    fn goal<'a>(&self, w: &World<'a>) -> &'a Body {
        &w.objects[0]
    }

    fn packages<'a>(&self, w: &World<'a>) -> &'a [Body] {
        &w.objects[1..1 + self.n_packages]
    }

    /// Whether a package is on the goal (see the module's doc).
    pub fn on_goal(&self, package: &Body, goal: &Body) -> bool {
        let (c, s) = (package.rot.cos(), package.rot.sin());
        let d = [goal.pos[0] - package.pos[0], goal.pos[1] - package.pos[1]];
        // The goal's centre in the package's frame, then its distance to the solid box.
        let local = [c * d[0] + s * d[1], -s * d[0] + c * d[1]];
        let half = [self.package_length / 2.0, self.package_width / 2.0];
        let out = [
            (local[0].abs() - half[0]).max(0.0),
            (local[1].abs() - half[1]).max(0.0),
        ];
        out[0].hypot(out[1]) < GOAL_RADIUS + LINE_MIN_DIST
    }
}

impl Rules for Transport {
    fn agents(&self) -> usize {
        self.agents
    }

    fn objects(&self) -> usize {
        1 + self.n_packages
    }

    fn observation_width(&self) -> usize {
        4 + 7 * self.n_packages
    }

    fn memory(&self) -> usize {
        self.n_packages
    }

    fn metric_names(&self) -> &'static [&'static str] {
        Self::METRICS
    }

    fn start(&self, w: &World<'_>, memory: &mut [f64]) {
        let goal = self.goal(w);
        for (m, p) in memory.iter_mut().zip(self.packages(w)) {
            *m = distance(p.pos, goal.pos) * SHAPING;
        }
    }

    fn observe(&self, w: &World<'_>, _: &[f64], out: &mut [f64]) {
        let goal = self.goal(w);
        for (a, o) in w
            .agents
            .iter()
            .zip(out.chunks_exact_mut(self.observation_width()))
        {
            o[..4].copy_from_slice(&[a.pos[0], a.pos[1], a.vel[0], a.vel[1]]);
            for (p, o) in self.packages(w).iter().zip(o[4..].chunks_exact_mut(7)) {
                let on = f64::from(u8::from(self.on_goal(p, goal)));
                o.copy_from_slice(&[
                    p.pos[0] - goal.pos[0],
                    p.pos[1] - goal.pos[1],
                    p.pos[0] - a.pos[0],
                    p.pos[1] - a.pos[1],
                    p.vel[0],
                    p.vel[1],
                    on,
                ]);
            }
        }
    }

    fn reward(&self, w: &World<'_>, memory: &mut [f64], out: &mut [f64]) -> Outcome {
        let goal = self.goal(w);
        let mut team = 0.0;
        let mut all = true;
        for (m, p) in memory.iter_mut().zip(self.packages(w)) {
            let shaping = distance(p.pos, goal.pos) * SHAPING;
            let on = self.on_goal(p, goal);
            if !on {
                team += *m - shaping;
            }
            all &= on;
            *m = shaping;
        }
        out.fill(team);
        Outcome { done: all }
    }

    fn measure(&self, w: &World<'_>, _: &[f64], out: &mut [f64]) {
        let goal = self.goal(w);
        let p = self.packages(w);
        out[0] = p.iter().filter(|p| self.on_goal(p, goal)).count() as f64;
        out[1] = p.iter().map(|p| distance(p.pos, goal.pos)).sum::<f64>() / p.len() as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Task, at};

    /// A package pushed 0.1 m toward the goal earns everyone 100 × 0.1; once on the goal it
    /// earns nothing and the episode ends.
    #[test]
    fn the_reward_by_hand() {
        let t = Task::new("transport", 2, &[]).unwrap();
        assert_eq!((t.objects(), t.observation_width()), (2, 11));
        let agents = [at(0.0, 0.0), at(0.5, 0.5)];
        let mut memory = vec![0.0];
        let mut out = vec![0.0; 2];
        let before = [at(1.0, 0.0), at(0.0, 0.0)];
        let w = World {
            agents: &agents,
            objects: &before,
            lidar: &[],
        };
        t.start(&w, &mut memory);
        let after = [at(1.0, 0.0), at(0.1, 0.0)];
        let w = World {
            objects: &after,
            ..w
        };
        assert!(!t.reward(&w, &mut memory, &mut out).done);
        let gain = 100.0 * 1.0 - 100.0 * 0.9;
        assert_eq!(out, vec![gain, gain]);
        // Its edge 0.075 m from its centre: on the goal from 0.075 + 0.15 + 4/600 m.
        let on = [at(1.0, 0.0), at(1.0 - 0.23, 0.0)];
        let w = World { objects: &on, ..w };
        assert!(t.reward(&w, &mut memory, &mut out).done);
        assert_eq!(out, vec![0.0, 0.0]);
        let off = [at(1.0, 0.0), at(1.0 - 0.232, 0.0)];
        let w = World { objects: &off, ..w };
        assert!(!t.reward(&w, &mut memory, &mut out).done);
    }

    #[test]
    fn a_turned_package_overlaps_by_its_corner() {
        let t = Transport::new(4, &[]).unwrap();
        let goal = at(0.0, 0.0);
        // The corner of a package turned 45°, 0.106 m from its centre, reaches further.
        let mut p = at(0.106 + 0.15, 0.0);
        assert!(!t.on_goal(&p, &goal));
        p.rot = std::f64::consts::FRAC_PI_4;
        assert!(t.on_goal(&p, &goal));
    }

    #[test]
    fn the_observation_in_vmas_order() {
        let t = Task::new("transport", 1, &[]).unwrap();
        let agent = [Body {
            pos: [0.5, 0.0],
            vel: [0.1, 0.0],
            ..Body::default()
        }];
        let objects = [
            at(-1.0, 0.0),
            Body {
                pos: [0.0, 0.2],
                vel: [0.0, -0.3],
                ..Body::default()
            },
        ];
        let w = World {
            agents: &agent,
            objects: &objects,
            lidar: &[],
        };
        let mut out = vec![0.0; 11];
        t.observe(&w, &[], &mut out);
        assert_eq!(
            out,
            vec![0.5, 0.0, 0.1, 0.0, 1.0, 0.2, -0.5, 0.2, 0.0, -0.3, 0.0]
        );
    }
}
