//! `flocking`, after VMAS 1.5's `vmas/scenarios/flocking.py`: the agents keep close to each
//! other and to a target that drives in a circle, among obstacles.
//!
//! VMAS's rules and defaults, kept: `n_agents` = 4 agents of radius 0.05 and a target agent
//! (radius 0.05, that collides) at (0, −1) whose scripted action u = (cos(t/30), sin(t/30)) turns
//! a little each step (the scene's `turning` driver); `n_obstacles` = 5 static discs of radius
//! 0.1; obstacles and agents drawn in [−1, 1]² no nearer than `min_dist_between_entities` =
//! 0.15 to each other or to the target (the scene's); no semidims. A 12-ray lidar
//! (`n_lidar_rays`) of range 0.2 that sees the obstacles only (rays from 0 rad; computed here from
//! the obstacles' discs). The observation: position, velocity, position − target's, then the
//! lidar's distances (18 values). The reward: the distance shaping term, the mean over the other
//! agents (the target included) of (distance − 0.1)², times `dist_shaping_factor` = 1, at the
//! last step less now; plus `collision_reward` = −0.1 for each other agent (the target
//! included) whose surface is within 0.005 m. No end but the episode's length.
//!
//! The objects are the target, then the obstacles.

use crate::{COLLISION_DISTANCE, Options, Outcome, Rules, World, distance};

/// The flocking task's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Flocking {
    /// Agents (`n_agents`), the target not counted.
    pub agents: usize,
    /// Obstacles.
    pub n_obstacles: usize,
    /// Lidar rays an agent.
    pub n_lidar_rays: usize,
    /// Added for each other agent touching.
    pub collision_reward: f64,
    /// The distance shaping term's factor.
    pub dist_shaping_factor: f64,
}

/// An agent's radius, and the target's (VMAS's `Agent` default, `Sphere()`).
pub const AGENT_RADIUS: f64 = 0.05;
/// An obstacle's radius (m).
pub const OBSTACLE_RADIUS: f64 = 0.1;
/// The lidar's range (m).
pub const LIDAR_RANGE: f64 = 0.2;
/// The distance each agent should keep from the others (m).
pub const DESIRED_DISTANCE: f64 = 0.1;

impl Flocking {
    /// Metrics, one value a world: touching pairs (the target included), the agents' mean
    /// distance to the target.
    pub const METRICS: &'static [&'static str] = &["collisions", "distance_to_target"];

    /// The task for `agents` with VMAS's keyword `options`.
    pub fn new(agents: usize, options: &[(String, f64)]) -> Result<Self, String> {
        let mut o = Options::new("flocking", options);
        let t = Flocking {
            agents: agents.max(1),
            n_obstacles: o.count("n_obstacles", 5, 0, 1000)?,
            n_lidar_rays: o.count("n_lidar_rays", 12, 1, 1024)?,
            collision_reward: o.number("collision_reward", -0.1, -1e6, 1e6)?,
            dist_shaping_factor: o.number("dist_shaping_factor", 1.0, -1e6, 1e6)?,
        };
        // The scene's: how far apart the obstacles and agents are drawn.
        o.number("min_dist_between_entities", 0.15, 0.0, 10.0)?;
        o.done()?;
        Ok(t)
    }

    /// Agent `i`'s distance shaping term now.
    fn shaping(&self, w: &World<'_>, i: usize) -> f64 {
        let me = w.agents[i].pos;
        let others = w.agents.iter().enumerate().filter(|&(j, _)| j != i);
        let sum: f64 = others
            .map(|(_, b)| b.pos)
            .chain([w.objects[0].pos])
            .map(|p| (distance(me, p) - DESIRED_DISTANCE).powi(2))
            .sum();
        sum / self.agents as f64 * self.dist_shaping_factor
    }

    /// Touching pairs among the agents and the target, each agent's reward for them added to
    /// `out` (the target, scripted, is paid nothing).
    fn collisions(&self, w: &World<'_>, mut out: Option<&mut [f64]>) -> usize {
        let touch = 2.0 * AGENT_RADIUS + COLLISION_DISTANCE;
        let c = self.collision_reward;
        let mut pairs = 0;
        for (i, a) in w.agents.iter().enumerate() {
            for (j, b) in w.agents[..i].iter().enumerate() {
                if distance(a.pos, b.pos) <= touch {
                    pairs += 1;
                    if let Some(out) = out.as_deref_mut() {
                        out[i] += c;
                        out[j] += c;
                    }
                }
            }
            if distance(a.pos, w.objects[0].pos) <= touch {
                pairs += 1;
                if let Some(out) = out.as_deref_mut() {
                    out[i] += c;
                }
            }
        }
        pairs
    }
}

impl Rules for Flocking {
    fn agents(&self) -> usize {
        self.agents
    }

    /// The target, then the obstacles.
    fn objects(&self) -> usize {
        1 + self.n_obstacles
    }

    fn observation_width(&self) -> usize {
        6 + self.n_lidar_rays
    }

    /// Each agent's distance shaping term.
    fn memory(&self) -> usize {
        self.agents
    }

    fn metric_names(&self) -> &'static [&'static str] {
        Self::METRICS
    }

    fn start(&self, w: &World<'_>, memory: &mut [f64]) {
        for (i, m) in memory.iter_mut().enumerate() {
            *m = self.shaping(w, i);
        }
    }

    fn observe(&self, w: &World<'_>, _: &[f64], out: &mut [f64]) {
        let width = self.observation_width();
        let target = w.objects[0].pos;
        let obstacles = w.objects[1..].iter().map(|b| (b.pos, OBSTACLE_RADIUS));
        for (a, o) in w.agents.iter().zip(out.chunks_exact_mut(width)) {
            o[..6].copy_from_slice(&[
                a.pos[0],
                a.pos[1],
                a.vel[0],
                a.vel[1],
                a.pos[0] - target[0],
                a.pos[1] - target[1],
            ]);
            crate::ring(a, 0.0, LIDAR_RANGE, obstacles.clone(), &mut o[6..]);
        }
    }

    fn reward(&self, w: &World<'_>, memory: &mut [f64], out: &mut [f64]) -> Outcome {
        out.fill(0.0);
        self.collisions(w, Some(out));
        for (i, r) in out.iter_mut().enumerate() {
            let now = self.shaping(w, i);
            *r += memory[i] - now;
            memory[i] = now;
        }
        Outcome { done: false }
    }

    fn measure(&self, w: &World<'_>, _: &[f64], out: &mut [f64]) {
        out[0] = self.collisions(w, None) as f64;
        let target = w.objects[0].pos;
        out[1] = w
            .agents
            .iter()
            .map(|a| distance(a.pos, target))
            .sum::<f64>()
            / self.agents as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Body, Task, at, world};

    /// The observation in VMAS's order, its lidar meeting an obstacle straight ahead (+x) at
    /// its distance less the radius, and nothing beyond the range.
    #[test]
    fn the_observation_in_vmas_order() {
        let t = Task::new("flocking", 2, &[("n_obstacles".into(), 1.0)]).unwrap();
        assert_eq!(t.observation_width(), 18);
        let mut a0 = at(0.0, 0.0);
        a0.vel = [0.25, -0.5];
        let agents = [a0, at(0.5, 0.5)];
        let objects = [at(0.0, -1.0), at(0.25, 0.0)];
        let w = world(&agents, &objects);
        let mut obs = vec![0.0; 2 * 18];
        t.observe(&w, &[], &mut obs);
        assert_eq!(&obs[..6], &[0.0, 0.0, 0.25, -0.5, 0.0, 1.0]);
        assert!((obs[6] - 0.15).abs() < 1e-12, "{:?}", &obs[6..18]);
        // Ray 1 (30°) passes 0.125 m from the centre: beyond the radius.
        assert_eq!(&obs[7..18], &[LIDAR_RANGE; 11]);
        assert_eq!(&obs[24..36], &[LIDAR_RANGE; 12]);
    }

    /// The shaping term by hand: agent 0 moves from 0.3 m to 0.1 m of agent 1 (their surfaces
    /// touch: −0.1 to each), the target 1 m off; a touch with the target costs
    /// `collision_reward` to the agent alone.
    #[test]
    fn shaping_and_collisions_by_hand() {
        let t = Task::new("flocking", 2, &[("n_obstacles".into(), 0.0)]).unwrap();
        let target = at(0.0, -1.0);
        let start = [at(0.0, 0.0), at(0.3, 0.0)];
        let objects = [target];
        let w = world(&start, &objects);
        let mut memory = vec![0.0; 2];
        t.start(&w, &mut memory);
        let sq = |d: f64| (d - 0.1) * (d - 0.1);
        assert_eq!(memory[0], (sq(0.3) + sq(1.0)) / 2.0);
        let moved = [at(0.2, 0.0), at(0.3, 0.0)];
        let w = world(&moved, &objects);
        let mut r = vec![0.0; 2];
        t.reward(&w, &mut memory, &mut r);
        let now0 = (sq(0.1) + sq(0.2f64.hypot(1.0))) / 2.0;
        assert!(
            (r[0] - ((sq(0.3) + sq(1.0)) / 2.0 - now0 - 0.1)).abs() < 1e-12,
            "{r:?}"
        );
        assert!((r[1] - (sq(0.3) / 2.0 - 0.1)).abs() < 1e-12, "{r:?}");
        // Agent 1 touches the target (surfaces 0.004 m apart): −0.1 to it, none to the target.
        let touching = [at(0.0, 0.5), at(0.0, -1.0 + 0.104)];
        let w = world(&touching, &objects);
        let before = memory.clone();
        t.reward(&w, &mut memory, &mut r);
        assert!(
            (r[1] - (before[1] - memory[1] - 0.1)).abs() < 1e-12,
            "{r:?}"
        );
        assert!((r[0] - (before[0] - memory[0])).abs() < 1e-12, "{r:?}");
        let mut m = vec![0.0; 2];
        t.measure(&w, &memory, &mut m);
        assert_eq!(m[0], 1.0);
    }

    /// Two agents touching: each pays.
    #[test]
    fn a_touching_pair_costs_both() {
        let t = Task::new("flocking", 3, &[("n_obstacles".into(), 0.0)]).unwrap();
        let agents: Vec<Body> = vec![at(0.0, 0.0), at(0.5, 0.5), at(0.103, 0.0)];
        let objects = [at(0.0, -1.0)];
        let w = world(&agents, &objects);
        let Task::Flocking(f) = &t else { panic!() };
        let mut out = vec![0.0; 3];
        assert_eq!(f.collisions(&w, Some(&mut out)), 1);
        assert_eq!(out, vec![-0.1, 0.0, -0.1]);
    }
}
