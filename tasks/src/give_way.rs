//! `give_way`, after VMAS 1.5's `vmas/scenarios/give_way.py`: two agents swap ends of a
//! corridor too narrow to pass in, one of them giving way in a nook halfway along.
//!
//! VMAS's rules and defaults, kept: two agents of radius 0.16 at (∓2, 0), each ±0.02 m at
//! random, their goals (radius 0.08, touching nothing) at (±2.29, 0): the other's end; the
//! corridor 5 × 0.4 m with a 0.4 × 0.48 m nook above its middle (the scene's walls); agents
//! driven by velocity (`v_range` 0.5 m/s; the scene's). The observation: position, velocity,
//! and with `observe_rel_pos` the position less the other's (4 or 6 values). The reward, the
//! same for both but for collisions: the two agents' distance to their goals at the last step
//! less now (times `pos_shaping_factor` = 1), summed; `final_reward` = 0.01 while both are within
//! their goal's radius; `agent_collision_penalty` (0) while the two are within 0.005 m of
//! touching. The episode ends once both are on their goals with `done_on_completion`, else only
//! at its length. VMAS's energy, passage and obstacle penalties are offered at 0 only, its
//! mirrored passage and box agents not at all.

use crate::{COLLISION_DISTANCE, Options, Outcome, Rules, World, distance};

/// The give_way task's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct GiveWay {
    /// The shaping factor.
    pub pos_shaping_factor: f64,
    /// Paid every step both agents are on their goals.
    pub final_reward: f64,
    /// Added while the agents (nearly) touch.
    pub agent_collision_penalty: f64,
    /// The observation has the position less the other agent's.
    pub observe_rel_pos: bool,
    /// The episode ends when both are on their goals.
    pub done_on_completion: bool,
}

/// An agent's radius (m).
pub const AGENT_RADIUS: f64 = 0.16;
/// A goal's radius (m): half an agent's.
pub const GOAL_RADIUS: f64 = AGENT_RADIUS / 2.0;

impl GiveWay {
    /// Metrics, one value a world: agents on their goals, their mean distance to them.
    pub const METRICS: &'static [&'static str] = &["on_goal", "distance"];

    /// The task for `agents` (2) with VMAS's keyword `options`.
    pub fn new(agents: usize, options: &[(String, f64)]) -> Result<Self, String> {
        if agents != 2 {
            return Err(format!("give_way: has 2 agents, got {agents}"));
        }
        let mut o = Options::new("give_way", options);
        let t = GiveWay {
            pos_shaping_factor: o.number("pos_shaping_factor", 1.0, -1e6, 1e6)?,
            final_reward: o.number("final_reward", 0.01, -1e6, 1e6)?,
            agent_collision_penalty: o.number("agent_collision_penalty", 0.0, -1e6, 1e6)?,
            observe_rel_pos: o.flag("observe_rel_pos", false)?,
            done_on_completion: o.flag("done_on_completion", false)?,
        };
        // The scene's (the agents' velocity range) and what ssx offers at VMAS's default only.
        o.number("v_range", 0.5, 1e-3, 100.0)?;
        for fixed in [
            "energy_rew_coeff",
            "passage_collision_penalty",
            "obstacle_collision_penalty",
            "obs_noise",
            "dt_delay",
        ] {
            o.number(fixed, 0.0, 0.0, 0.0)?;
        }
        o.number("mirror_passage", 0.0, 0.0, 0.0)?;
        o.number("box_agents", 0.0, 0.0, 0.0)?;
        o.number("use_velocity_controller", 1.0, 1.0, 1.0)?;
        o.done()?;
        Ok(t)
    }

    fn on_goal(&self, w: &World<'_>) -> [bool; 2] {
        [0, 1].map(|i| distance(w.agents[i].pos, w.objects[i].pos) < GOAL_RADIUS)
    }
}

impl Rules for GiveWay {
    fn agents(&self) -> usize {
        2
    }

    /// The two goals.
    fn objects(&self) -> usize {
        2
    }

    fn observation_width(&self) -> usize {
        if self.observe_rel_pos { 6 } else { 4 }
    }

    /// Each agent's shaping term at the last step.
    fn memory(&self) -> usize {
        2
    }

    fn metric_names(&self) -> &'static [&'static str] {
        Self::METRICS
    }

    fn start(&self, w: &World<'_>, memory: &mut [f64]) {
        for (i, m) in memory.iter_mut().enumerate() {
            *m = distance(w.agents[i].pos, w.objects[i].pos) * self.pos_shaping_factor;
        }
    }

    fn observe(&self, w: &World<'_>, _: &[f64], out: &mut [f64]) {
        let width = self.observation_width();
        for (i, o) in out.chunks_exact_mut(width).enumerate() {
            let (a, b) = (&w.agents[i], &w.agents[1 - i]);
            o[..4].copy_from_slice(&[a.pos[0], a.pos[1], a.vel[0], a.vel[1]]);
            if self.observe_rel_pos {
                o[4] = a.pos[0] - b.pos[0];
                o[5] = a.pos[1] - b.pos[1];
            }
        }
    }

    fn reward(&self, w: &World<'_>, memory: &mut [f64], out: &mut [f64]) -> Outcome {
        let mut pos = 0.0;
        for (i, m) in memory.iter_mut().enumerate() {
            let shaping = distance(w.agents[i].pos, w.objects[i].pos) * self.pos_shaping_factor;
            pos += *m - shaping;
            *m = shaping;
        }
        let both = self.on_goal(w) == [true, true];
        let fin = if both { self.final_reward } else { 0.0 };
        let gap = distance(w.agents[0].pos, w.agents[1].pos) - 2.0 * AGENT_RADIUS;
        let hit = if gap <= COLLISION_DISTANCE {
            self.agent_collision_penalty
        } else {
            0.0
        };
        out.fill(pos + fin + hit);
        Outcome {
            done: self.done_on_completion && both,
        }
    }

    fn measure(&self, w: &World<'_>, _: &[f64], out: &mut [f64]) {
        out[0] = self.on_goal(w).iter().filter(|&&b| b).count() as f64;
        out[1] = (0..2)
            .map(|i| distance(w.agents[i].pos, w.objects[i].pos))
            .sum::<f64>()
            / 2.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Task, at};

    /// Both agents 0.1 m nearer their goals earn each 0.2; on their goals 0.01 more, and with
    /// `done_on_completion` the episode ends; touching costs the penalty asked for.
    #[test]
    fn the_reward_by_hand() {
        let opts = [
            ("agent_collision_penalty".to_string(), -1.0),
            ("done_on_completion".into(), 1.0),
        ];
        let t = Task::new("give_way", 2, &opts).unwrap();
        let goals = [at(2.29, 0.0), at(-2.29, 0.0)];
        let start = [at(-2.0, 0.0), at(2.0, 0.0)];
        let w = World {
            agents: &start,
            objects: &goals,
            lidar: &[],
        };
        let mut memory = [0.0; 2];
        t.start(&w, &mut memory);
        let mut r = [0.0; 2];
        let near = [at(-1.9, 0.0), at(1.9, 0.0)];
        let w = World { agents: &near, ..w };
        assert!(!t.reward(&w, &mut memory, &mut r).done);
        for v in r {
            assert!((v - 0.2).abs() < 1e-12, "{r:?}");
        }
        let there = [at(2.29 - 0.079, 0.0), at(-2.29, 0.05)];
        let w = World {
            agents: &there,
            objects: &goals,
            lidar: &[],
        };
        t.start(&w, &mut memory);
        assert!(t.reward(&w, &mut memory, &mut r).done);
        assert_eq!(r, [0.01, 0.01]);
        let touching = [at(0.0, 0.0), at(0.324, 0.0)];
        let w = World {
            agents: &touching,
            objects: &goals,
            lidar: &[],
        };
        t.start(&w, &mut memory);
        assert!(!t.reward(&w, &mut memory, &mut r).done);
        assert_eq!(r, [-1.0, -1.0]);
        let mut m = [0.0; 2];
        t.measure(&w, &memory, &mut m);
        assert_eq!(m[0], 0.0);
    }

    #[test]
    fn the_observation_and_what_is_refused() {
        let t = Task::new("give_way", 2, &[("observe_rel_pos".into(), 1.0)]).unwrap();
        let agents = [at(-1.0, 0.1), at(1.0, 0.0)];
        let goals = [at(2.29, 0.0), at(-2.29, 0.0)];
        let w = World {
            agents: &agents,
            objects: &goals,
            lidar: &[],
        };
        let mut o = [0.0; 12];
        t.observe(&w, &[], &mut o);
        assert_eq!(
            o,
            [
                -1.0, 0.1, 0.0, 0.0, -2.0, 0.1, 1.0, 0.0, 0.0, 0.0, 2.0, -0.1
            ]
        );
        assert_eq!(
            Task::new("give_way", 3, &[]).unwrap_err(),
            "give_way: has 2 agents, got 3"
        );
        assert_eq!(
            Task::new("give_way", 2, &[("mirror_passage".into(), 1.0)]).unwrap_err(),
            "give_way: option 'mirror_passage' must be from 0 to 0, got 1"
        );
    }
}
