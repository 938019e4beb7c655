//! `dispersion`, after VMAS 1.5's `vmas/scenarios/dispersion.py`: the agents start together and
//! spread out to eat the food, each item once.
//!
//! VMAS's rules and defaults, kept: 4 agents of radius 0.035 that touch nothing, all starting at
//! the origin; `n_food` = one item an agent, of radius `food_radius` = 0.05, drawn uniformly in
//! [-`pos_range`, `pos_range`]² = [-1, 1]² (the scene's); an agent is on an item when their centres
//! are nearer than the sum of their radii; the observation (position, velocity, then for each item:
//! item − agent and whether it is eaten: 4 + 3 an item); the reward, an uneaten item shared among
//! the agents on it (1 / how many), or with `share_reward` 1 to every agent for each item eaten in
//! the step; with `penalise_by_time`, −0.01 to an agent that earned nothing; an item is eaten at the
//! end of the step anyone is on it, and the episode ends when every item is eaten. VMAS clamps
//! positions to `pos_range`; ssx's agents, which touch nothing, are not held in.

use crate::{Body, Options, Outcome, Rules, World, distance};

/// The dispersion task's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Dispersion {
    /// Agents (`n_agents`).
    pub agents: usize,
    /// Food items.
    pub n_food: usize,
    /// An item's radius (m).
    pub food_radius: f64,
    /// The half side of the square the food is drawn in (m): the scene's.
    pub pos_range: f64,
    /// Every agent earns 1 for each item eaten.
    pub share_reward: bool,
    /// −0.01 to an agent that earned nothing in the step.
    pub penalise_by_time: bool,
}

/// An agent's radius (VMAS's dispersion: `Sphere(radius=0.035)`).
pub const AGENT_RADIUS: f64 = 0.035;

impl Dispersion {
    /// Metrics, one value a world: items eaten.
    pub const METRICS: &'static [&'static str] = &["eaten"];

    /// The task for `agents` with VMAS's keyword `options`.
    pub fn new(agents: usize, options: &[(String, f64)]) -> Result<Self, String> {
        let agents = agents.max(1);
        let mut o = Options::new("dispersion", options);
        let t = Dispersion {
            agents,
            n_food: o.count("n_food", agents, 1, 256)?,
            food_radius: o.number("food_radius", 0.05, 1e-3, 10.0)?,
            pos_range: o.number("pos_range", 1.0, 1e-3, 1e4)?,
            share_reward: o.flag("share_reward", false)?,
            penalise_by_time: o.flag("penalise_by_time", false)?,
        };
        o.done()?;
        Ok(t)
    }

    fn on(&self, a: &Body, food: &Body) -> bool {
        distance(a.pos, food.pos) < AGENT_RADIUS + self.food_radius
    }
}

impl Rules for Dispersion {
    fn agents(&self) -> usize {
        self.agents
    }

    fn objects(&self) -> usize {
        self.n_food
    }

    fn observation_width(&self) -> usize {
        4 + 3 * self.n_food
    }

    /// Whether each item is eaten (1) or not (0).
    fn memory(&self) -> usize {
        self.n_food
    }

    fn metric_names(&self) -> &'static [&'static str] {
        Self::METRICS
    }

    fn start(&self, _: &World<'_>, memory: &mut [f64]) {
        memory.fill(0.0);
    }

    fn observe(&self, w: &World<'_>, memory: &[f64], out: &mut [f64]) {
        for (a, o) in w
            .agents
            .iter()
            .zip(out.chunks_exact_mut(self.observation_width()))
        {
            o[..4].copy_from_slice(&[a.pos[0], a.pos[1], a.vel[0], a.vel[1]]);
            for ((f, o), &eaten) in w.objects.iter().zip(o[4..].chunks_exact_mut(3)).zip(memory) {
                o.copy_from_slice(&[f.pos[0] - a.pos[0], f.pos[1] - a.pos[1], eaten]);
            }
        }
    }

    fn reward(&self, w: &World<'_>, memory: &mut [f64], out: &mut [f64]) -> Outcome {
        out.fill(0.0);
        for (f, eaten) in w.objects.iter().zip(memory.iter_mut()) {
            if *eaten != 0.0 {
                continue;
            }
            let on = w.agents.iter().filter(|a| self.on(a, f)).count();
            if on == 0 {
                continue;
            }
            for (a, r) in w.agents.iter().zip(out.iter_mut()) {
                if self.share_reward {
                    *r += 1.0;
                } else if self.on(a, f) {
                    *r += 1.0 / on as f64;
                }
            }
            *eaten = 1.0;
        }
        if self.penalise_by_time {
            for r in out.iter_mut().filter(|r| **r == 0.0) {
                *r = -0.01;
            }
        }
        Outcome {
            done: memory.iter().all(|&e| e != 0.0),
        }
    }

    fn measure(&self, _: &World<'_>, memory: &[f64], out: &mut [f64]) {
        out[0] = memory.iter().filter(|&&e| e != 0.0).count() as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Task, at};

    /// Two agents on one item share it (1/2 each), a lone agent on another gets all of it, an
    /// eaten item gives nothing again, and the episode ends when all are eaten.
    #[test]
    fn the_reward_by_hand() {
        let t = Task::new("dispersion", 3, &[]).unwrap();
        assert_eq!((t.objects(), t.observation_width()), (3, 13));
        let food = [at(0.0, 0.0), at(1.0, 0.0), at(-1.0, 0.0)];
        // 0.084 apart: on it (0.035 + 0.05 = 0.085); 0.086: not.
        let agents = [at(0.084, 0.0), at(-0.05, 0.0), at(1.0, 0.086)];
        let w = World {
            agents: &agents,
            objects: &food,
            lidar: &[],
        };
        let mut memory = vec![0.0; 3];
        let mut out = vec![0.0; 3];
        t.start(&w, &mut memory);
        assert!(!t.reward(&w, &mut memory, &mut out).done);
        assert_eq!(out, vec![0.5, 0.5, 0.0]);
        assert_eq!(memory, vec![1.0, 0.0, 0.0]);
        let mut obs = vec![0.0; 39];
        t.observe(&w, &memory, &mut obs);
        assert_eq!(
            &obs[4..13],
            &[-0.084, 0.0, 1.0, 1.0 - 0.084, 0.0, 0.0, -1.084, 0.0, 0.0]
        );
        let agents = [at(0.0, 0.0), at(-1.0, 0.0), at(1.0, 0.0)];
        let w = World {
            agents: &agents,
            ..w
        };
        assert!(t.reward(&w, &mut memory, &mut out).done);
        assert_eq!(out, vec![0.0, 1.0, 1.0]);
        let mut m = [0.0];
        t.measure(&w, &memory, &mut m);
        assert_eq!(m, [3.0]);
    }

    #[test]
    fn shared_and_penalised() {
        let o = |k: &str| (k.to_string(), 1.0);
        let t = Task::new("dispersion", 2, &[o("share_reward"), o("penalise_by_time")]).unwrap();
        let food = [at(0.0, 0.0), at(5.0, 0.0)];
        let agents = [at(0.0, 0.0), at(2.0, 0.0)];
        let w = World {
            agents: &agents,
            objects: &food,
            lidar: &[],
        };
        let (mut memory, mut out) = (vec![0.0; 2], vec![0.0; 2]);
        t.reward(&w, &mut memory, &mut out);
        assert_eq!(out, vec![1.0, 1.0]);
        t.reward(&w, &mut memory, &mut out);
        assert_eq!(out, vec![-0.01, -0.01]);
    }
}
