//! `navigation`, after VMAS 1.5's `vmas/scenarios/navigation.py`: each agent drives to its own
//! goal, seeing the others with a lidar.
//!
//! VMAS's rules and defaults, kept: 4 agents of radius 0.1 (`agent_radius`); agents and goals
//! drawn in [-1, 1]² no two nearer than 2·0.1 + 0.05 (the scene's placement); a 12-ray lidar
//! (`n_lidar_rays`) of range 0.35 (`lidar_range`) that sees agents; the observation
//! (position, velocity, position − goal, then the lidar's range − distance for each ray: 18
//! values); the reward: the shaping term (distance to goal at the last step − now, times
//! `pos_shaping_factor` = 1), summed over the team when `shared_rew` (the default), plus
//! `final_reward` = 0.01 to everyone once every agent is on its goal (nearer than the goal's
//! radius, 0.05), plus `agent_collision_penalty` = −1 for each other agent whose surface is
//! within 0.005 m of its own; the episode ends when every agent is within its own radius of its
//! goal. VMAS's options `split_goals`, `agents_with_same_goal`, `enforce_bounds` and
//! `comms_range` are not offered.

use crate::{COLLISION_DISTANCE, Options, Outcome, Rules, World, distance};

/// The navigation task's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Navigation {
    /// Agents (`n_agents`).
    pub agents: usize,
    /// Agent radius (m).
    pub agent_radius: f64,
    /// Lidar rays an agent.
    pub n_lidar_rays: usize,
    /// Lidar range (m).
    pub lidar_range: f64,
    /// The team shares the shaping term.
    pub shared_rew: bool,
    /// Shaping factor.
    pub pos_shaping_factor: f64,
    /// The reward to all once all are on their goals.
    pub final_reward: f64,
    /// The penalty of a collision, to each of the two.
    pub agent_collision_penalty: f64,
    /// Each agent observes every goal (relative to itself), not its own alone.
    pub observe_all_goals: bool,
}

/// A goal's radius: VMAS's `Landmark` default shape, `Sphere()` of 0.05.
const GOAL_RADIUS: f64 = 0.05;

impl Navigation {
    /// Metrics, one value a world: agents on their goals, colliding pairs, mean distance to goal.
    pub const METRICS: &'static [&'static str] = &["goals_reached", "collisions", "distance"];

    /// The task for `agents` with VMAS's keyword `options`.
    pub fn new(agents: usize, options: &[(String, f64)]) -> Result<Self, String> {
        let mut o = Options::new("navigation", options);
        let t = Navigation {
            agents: agents.max(1),
            agent_radius: o.number("agent_radius", 0.1, 1e-3, 10.0)?,
            n_lidar_rays: o.count("n_lidar_rays", 12, 1, 1024)?,
            lidar_range: o.number("lidar_range", 0.35, 1e-3, 100.0)?,
            shared_rew: o.flag("shared_rew", true)?,
            pos_shaping_factor: o.number("pos_shaping_factor", 1.0, -1e6, 1e6)?,
            final_reward: o.number("final_reward", 0.01, -1e6, 1e6)?,
            agent_collision_penalty: o.number("agent_collision_penalty", -1.0, -1e6, 1e6)?,
            observe_all_goals: o.flag("observe_all_goals", false)?,
        };
        o.done()?;
        Ok(t)
    }

    fn to_goal(&self, w: &World<'_>, i: usize) -> f64 {
        distance(w.agents[i].pos, w.objects[i].pos)
    }

    /// Colliding pairs, each agent's penalty added to `out`.
    fn collisions(&self, w: &World<'_>, mut out: Option<&mut [f64]>) -> usize {
        let mut pairs = 0;
        let touch = 2.0 * self.agent_radius + COLLISION_DISTANCE;
        for i in 0..w.agents.len() {
            for j in 0..i {
                if distance(w.agents[i].pos, w.agents[j].pos) <= touch {
                    pairs += 1;
                    if let Some(out) = out.as_deref_mut() {
                        out[i] += self.agent_collision_penalty;
                        out[j] += self.agent_collision_penalty;
                    }
                }
            }
        }
        pairs
    }
}

impl Rules for Navigation {
    fn agents(&self) -> usize {
        self.agents
    }

    fn objects(&self) -> usize {
        self.agents
    }

    fn lidar_rays(&self) -> usize {
        self.n_lidar_rays
    }

    fn observation_width(&self) -> usize {
        let goals = if self.observe_all_goals {
            self.agents
        } else {
            1
        };
        4 + 2 * goals + self.n_lidar_rays
    }

    fn memory(&self) -> usize {
        self.agents
    }

    fn metric_names(&self) -> &'static [&'static str] {
        Self::METRICS
    }

    fn start(&self, w: &World<'_>, memory: &mut [f64]) {
        for (i, m) in memory.iter_mut().enumerate() {
            *m = self.to_goal(w, i) * self.pos_shaping_factor;
        }
    }

    fn observe(&self, w: &World<'_>, _: &[f64], out: &mut [f64]) {
        let width = self.observation_width();
        let rays = self.n_lidar_rays;
        for (i, o) in out.chunks_exact_mut(width).enumerate() {
            let a = &w.agents[i];
            o[..4].copy_from_slice(&[a.pos[0], a.pos[1], a.vel[0], a.vel[1]]);
            let mut k = 4;
            let own = [&w.objects[i]];
            let goals: &mut dyn Iterator<Item = _> = if self.observe_all_goals {
                &mut w.objects.iter()
            } else {
                &mut own.into_iter()
            };
            for g in goals {
                o[k] = a.pos[0] - g.pos[0];
                o[k + 1] = a.pos[1] - g.pos[1];
                k += 2;
            }
            for (d, &r) in o[k..].iter_mut().zip(&w.lidar[i * rays..(i + 1) * rays]) {
                *d = self.lidar_range - r;
            }
        }
    }

    fn reward(&self, w: &World<'_>, memory: &mut [f64], out: &mut [f64]) -> Outcome {
        let n = self.agents;
        let mut team = 0.0;
        let mut all_on_goal = true;
        let mut all_within_radius = true;
        for i in 0..n {
            let d = self.to_goal(w, i);
            all_on_goal &= d < GOAL_RADIUS;
            all_within_radius &= d < self.agent_radius;
            let shaping = d * self.pos_shaping_factor;
            out[i] = memory[i] - shaping;
            team += out[i];
            memory[i] = shaping;
        }
        let last = if all_on_goal { self.final_reward } else { 0.0 };
        for r in out.iter_mut().take(n) {
            *r = if self.shared_rew { team } else { *r } + last;
        }
        self.collisions(w, Some(out));
        Outcome {
            done: all_within_radius,
        }
    }

    fn measure(&self, w: &World<'_>, _: &[f64], out: &mut [f64]) {
        let n = self.agents;
        let (mut reached, mut sum) = (0, 0.0);
        for i in 0..n {
            let d = self.to_goal(w, i);
            reached += usize::from(d < GOAL_RADIUS);
            sum += d;
        }
        out[0] = reached as f64;
        out[1] = self.collisions(w, None) as f64;
        out[2] = sum / n as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Body, Task, at};

    /// Two agents on a hand-placed world: one moved 0.1 m toward its goal gains exactly the
    /// shaping difference (shared by both), and two whose surfaces touch both pay the penalty.
    #[test]
    fn the_reward_by_hand() {
        let t = Task::new("navigation", 2, &[]).unwrap();
        let goals = [at(1.0, 0.0), at(-1.0, 1.0)];
        let before = [at(0.0, 0.0), at(-1.0, 0.0)];
        let lidar = vec![0.35; 24];
        let mut memory = vec![0.0; 2];
        let w = World {
            agents: &before,
            objects: &goals,
            lidar: &lidar,
        };
        t.start(&w, &mut memory);
        assert_eq!(memory, vec![1.0, 1.0]);
        let after = [at(0.1, 0.0), at(-1.0, 0.0)];
        let mut out = vec![0.0; 2];
        let w = World {
            agents: &after,
            ..w
        };
        let done = t.reward(&w, &mut memory, &mut out);
        assert!(!done.done);
        let gain = 1.0 - 0.9_f64.hypot(0.0);
        assert_eq!(out, vec![gain, gain]);
        // Surfaces 0.004 m apart: a collision; 0.006 apart: none.
        for (gap, penalty) in [(0.004, -1.0), (0.006, 0.0)] {
            let near = [at(0.0, 0.0), at(0.2 + gap, 0.0)];
            let w = World { agents: &near, ..w };
            t.start(&w, &mut memory);
            t.reward(&w, &mut memory, &mut out);
            assert_eq!(out, vec![penalty, penalty], "gap {gap}");
        }
    }

    /// The observation's terms in VMAS's order, the lidar as range − distance.
    #[test]
    fn the_observation_in_vmas_order() {
        let t = Task::new("navigation", 1, &[("n_lidar_rays".into(), 2.0)]).unwrap();
        assert_eq!(t.observation_width(), 8);
        let agent = [Body {
            pos: [0.5, -0.25],
            vel: [0.1, 0.2],
            ..Body::default()
        }];
        let goal = [at(1.0, 1.0)];
        let w = World {
            agents: &agent,
            objects: &goal,
            lidar: &[0.35, 0.1],
        };
        let mut out = vec![0.0; 8];
        t.observe(&w, &[], &mut out);
        assert_eq!(
            out,
            vec![0.5, -0.25, 0.1, 0.2, -0.5, -1.25, 0.0, 0.35 - 0.1]
        );
    }

    #[test]
    fn unknown_options_are_refused_by_name() {
        let err = Task::new("navigation", 4, &[("lidar_rang".into(), 1.0)]).unwrap_err();
        assert_eq!(
            err,
            "navigation: no option 'lidar_rang' (it has: agent_collision_penalty, agent_radius, final_reward, lidar_range, n_lidar_rays, observe_all_goals, pos_shaping_factor, shared_rew)"
        );
        let err = Task::new("navigation", 4, &[("lidar_range".into(), -1.0)]).unwrap_err();
        assert_eq!(
            err,
            "navigation: option 'lidar_range' must be from 0.001 to 100, got -1"
        );
    }

    /// The episode ends when every agent is within its own radius of its goal, and the final
    /// reward comes when every agent is within the goal's radius.
    #[test]
    fn done_and_the_final_reward() {
        let t = Task::new("navigation", 1, &[]).unwrap();
        let goal = [at(0.0, 0.0)];
        let lidar = vec![0.35; 12];
        let mut memory = vec![0.0];
        let mut out = vec![0.0];
        for (x, done, last) in [(0.2, false, 0.0), (0.08, true, 0.0), (0.03, true, 0.01)] {
            let agent = [at(x, 0.0)];
            let w = World {
                agents: &agent,
                objects: &goal,
                lidar: &lidar,
            };
            t.start(&w, &mut memory);
            assert_eq!(t.reward(&w, &mut memory, &mut out).done, done, "at {x}");
            assert_eq!(out[0], last, "at {x}");
        }
    }
}
