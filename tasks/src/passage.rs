//! `passage`, after VMAS 1.5's `vmas/scenarios/passage.py`: five agents in a cross formation
//! cross a wall through a gap to the same formation on the far side.
//!
//! VMAS's rules and defaults, kept: 5 agents of radius 0.03333 whose forces are 0.7 of their
//! actions, in a cross (a centre and four at 0.1 m along +x, +y, −x, −y) whose centre is drawn
//! at x in [−0.8, 0.8], y in [−0.8, −0.3]; each agent's goal at the same place of a cross
//! whose centre is drawn at x in [−0.8, 0.8], y in [0.3, 0.8]; a wall along y = 0 of 20 slots
//! of 0.103 × 0.2 m from x = −1.0333 on, `n_passages` = 1 of them left open, drawn (the scene's
//! grid with cells left out; the task reads the wall's boxes and finds the open slots at the
//! start); semidims of 1 (the scene's walls). The observation: position, velocity, goal −
//! position, then each open slot's centre − position (8 values with one passage). The reward:
//! the shaping term (distance to goal at the last step − now, times 100), the team's sum to
//! each with `shared_reward` (VMAS's default is off, BenchMARL's on), less 10 for each other
//! agent and each box it overlaps (with `shared_reward`, VMAS's way, agent i's reward less the
//! penalties of agents 0 to i: VMAS takes each agent's from the one shared tensor in turn). The
//! episode ends when every agent is within half its radius of its goal.
//!
//! What differs: VMAS shuffles which agent stands where in the cross; here agent i stands at
//! place i (the centre is agent 4), which a policy that shares its parameters cannot tell. With
//! several passages their order in the observation is the slots' from −x, where VMAS's is
//! drawn. "Overlapping" is read as surfaces within 0.005 m: ssx's contacts stop bodies at
//! touching where VMAS's penalty forces let them into each other.

use crate::{COLLISION_DISTANCE, Options, Outcome, Rules, World, distance};

/// The passage task's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Passage {
    /// Open slots in the wall.
    pub n_passages: usize,
    /// The team's shaping sum paid to every agent.
    pub shared_reward: bool,
}

/// Agents (VMAS's passage has five, not an option).
pub const AGENTS: usize = 5;
/// An agent's radius (m).
pub const AGENT_RADIUS: f64 = 0.03333;
/// A slot's extent along the wall (m): VMAS's `passage_length`.
pub const SLOT_LENGTH: f64 = 0.103;
/// A box's extent across the wall (m): VMAS's `passage_width`.
pub const SLOT_WIDTH: f64 = 0.2;
/// Slots in the wall: as many as fit across 2 + 2 radii.
pub const SLOTS: usize = 20;
/// The first slot's centre (x, m).
pub const FIRST_SLOT: f64 = -1.0 - AGENT_RADIUS + SLOT_LENGTH / 2.0;
const SHAPING: f64 = 100.0;
const PENALTY: f64 = -10.0;

impl Passage {
    /// Metrics, one value a world: agents on their goals, contacts (agent pairs and agents on
    /// boxes), mean distance to goal.
    pub const METRICS: &'static [&'static str] = &["goals_reached", "collisions", "distance"];

    /// The task for `agents` (5) with VMAS's keyword `options`.
    pub fn new(agents: usize, options: &[(String, f64)]) -> Result<Self, String> {
        if agents != AGENTS {
            return Err(format!("passage: has {AGENTS} agents, got {agents}"));
        }
        let mut o = Options::new("passage", options);
        let t = Passage {
            n_passages: o.count("n_passages", 1, 1, SLOTS)?,
            shared_reward: o.flag("shared_reward", false)?,
        };
        o.done()?;
        Ok(t)
    }

    /// The wall's boxes among the objects (after the goals).
    fn boxes<'w>(&self, w: &World<'w>) -> &'w [crate::Body] {
        &w.objects[AGENTS..]
    }

    /// Each agent's penalties for what it overlaps, added to `out`; the number of contacts.
    /// With `shared_reward` agent i's reward carries the penalties of agents 0 to i, as VMAS
    /// computes it: its shared reward is one tensor, kept across the agents' calls within a
    /// step, from which each agent's call takes its own penalties in turn.
    fn contacts(&self, w: &World<'_>, mut out: Option<&mut [f64]>) -> usize {
        let touch = 2.0 * AGENT_RADIUS + COLLISION_DISTANCE;
        let mut n = 0;
        let mut carried = 0.0;
        for (i, a) in w.agents.iter().enumerate() {
            let mut hits = 0;
            for (j, b) in w.agents.iter().enumerate() {
                if j != i && distance(a.pos, b.pos) <= touch {
                    hits += 1;
                    n += usize::from(j < i);
                }
            }
            for b in self.boxes(w) {
                // The nearest point of the box (axis-aligned: VMAS's boxes do not turn).
                let dx = (a.pos[0] - b.pos[0]).abs() - SLOT_LENGTH / 2.0;
                let dy = (a.pos[1] - b.pos[1]).abs() - SLOT_WIDTH / 2.0;
                let gap = dx.max(0.0).hypot(dy.max(0.0));
                if gap <= AGENT_RADIUS + COLLISION_DISTANCE {
                    hits += 1;
                    n += 1;
                }
            }
            if let Some(out) = out.as_deref_mut() {
                let mine = PENALTY * hits as f64;
                if self.shared_reward {
                    carried += mine;
                    out[i] += carried;
                } else {
                    out[i] += mine;
                }
            }
        }
        n
    }

    fn on_goal(&self, w: &World<'_>, i: usize) -> bool {
        distance(w.agents[i].pos, w.objects[i].pos) <= AGENT_RADIUS / 2.0
    }
}

impl Rules for Passage {
    fn agents(&self) -> usize {
        AGENTS
    }

    /// The goals, then the wall's boxes (every slot but the open ones).
    fn objects(&self) -> usize {
        AGENTS + SLOTS - self.n_passages
    }

    fn observation_width(&self) -> usize {
        6 + 2 * self.n_passages
    }

    /// Each agent's shaping term, then each open slot's centre.
    fn memory(&self) -> usize {
        AGENTS + 2 * self.n_passages
    }

    fn metric_names(&self) -> &'static [&'static str] {
        Self::METRICS
    }

    fn start(&self, w: &World<'_>, memory: &mut [f64]) {
        for (i, m) in memory[..AGENTS].iter_mut().enumerate() {
            *m = distance(w.agents[i].pos, w.objects[i].pos) * SHAPING;
        }
        let boxes = self.boxes(w);
        let wall_y = boxes.first().map_or(0.0, |b| b.pos[1]);
        let open = (0..SLOTS)
            .map(|s| FIRST_SLOT + SLOT_LENGTH * s as f64)
            .filter(|&x| {
                !boxes
                    .iter()
                    .any(|b| (b.pos[0] - x).abs() < SLOT_LENGTH / 4.0)
            });
        for (x, m) in open.zip(memory[AGENTS..].chunks_exact_mut(2)) {
            m.copy_from_slice(&[x, wall_y]);
        }
    }

    fn observe(&self, w: &World<'_>, memory: &[f64], out: &mut [f64]) {
        let width = self.observation_width();
        for ((a, g), o) in w
            .agents
            .iter()
            .zip(w.objects)
            .zip(out.chunks_exact_mut(width))
        {
            o[..6].copy_from_slice(&[
                a.pos[0],
                a.pos[1],
                a.vel[0],
                a.vel[1],
                g.pos[0] - a.pos[0],
                g.pos[1] - a.pos[1],
            ]);
            for (p, v) in memory[AGENTS..]
                .chunks_exact(2)
                .zip(o[6..].chunks_exact_mut(2))
            {
                v.copy_from_slice(&[p[0] - a.pos[0], p[1] - a.pos[1]]);
            }
        }
    }

    fn reward(&self, w: &World<'_>, memory: &mut [f64], out: &mut [f64]) -> Outcome {
        for (i, r) in out.iter_mut().enumerate() {
            let now = distance(w.agents[i].pos, w.objects[i].pos) * SHAPING;
            *r = memory[i] - now;
            memory[i] = now;
        }
        if self.shared_reward {
            let team: f64 = out.iter().sum();
            out.fill(team);
        }
        self.contacts(w, Some(out));
        Outcome {
            done: (0..AGENTS).all(|i| self.on_goal(w, i)),
        }
    }

    fn measure(&self, w: &World<'_>, _: &[f64], out: &mut [f64]) {
        out[0] = (0..AGENTS).filter(|&i| self.on_goal(w, i)).count() as f64;
        out[1] = self.contacts(w, None) as f64;
        out[2] = (0..AGENTS)
            .map(|i| distance(w.agents[i].pos, w.objects[i].pos))
            .sum::<f64>()
            / AGENTS as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Body, Task, at, world};

    /// A wall of every slot but `open`, goals at `goals`.
    fn objects(goals: &[[f64; 2]], open: &[usize]) -> Vec<Body> {
        let mut v: Vec<Body> = goals.iter().map(|g| at(g[0], g[1])).collect();
        for s in (0..SLOTS).filter(|s| !open.contains(s)) {
            v.push(at(FIRST_SLOT + SLOT_LENGTH * s as f64, 0.0));
        }
        v
    }

    /// The slots VMAS's wall has: as many of 0.103 m as fit across 2 + 2 radii.
    #[test]
    fn twenty_slots_span_the_world() {
        assert_eq!(
            ((2.0 + 2.0 * AGENT_RADIUS) / SLOT_LENGTH).floor() as usize,
            SLOTS
        );
    }

    /// The open slot found from the boxes, in the observation relative to each agent; the
    /// shaping term on a hand-moved agent, and a penalty of 10 for touching a box and for
    /// touching another agent.
    #[test]
    fn the_gap_the_shaping_and_the_penalties() {
        let t = Task::new("passage", 5, &[]).unwrap();
        assert_eq!(t.observation_width(), 8);
        assert_eq!(t.objects(), 24);
        let agents: Vec<Body> = (0..5).map(|i| at(-0.5 + 0.2 * i as f64, -0.5)).collect();
        let goals: Vec<[f64; 2]> = (0..5).map(|i| [0.2 * i as f64, 0.5]).collect();
        let objs = objects(&goals, &[7]);
        let w = world(&agents, &objs);
        let mut memory = vec![0.0; t.memory()];
        t.start(&w, &mut memory);
        let gap = FIRST_SLOT + 7.0 * SLOT_LENGTH;
        assert_eq!(&memory[5..], &[gap, 0.0]);
        let mut obs = vec![0.0; 5 * 8];
        t.observe(&w, &memory, &mut obs);
        assert_eq!(
            &obs[8..16],
            &[-0.3, -0.5, 0.0, 0.0, 0.5, 1.0, gap + 0.3, 0.5]
        );
        // Agent 0 moves 0.1 toward its goal; agent 2 touches the box of slot 9 from below;
        // agents 3 and 4 touch each other.
        let mut moved = agents.clone();
        let d0 = distance(agents[0].pos, goals[0]);
        moved[0].pos = [
            agents[0].pos[0] + 0.1 * (goals[0][0] - agents[0].pos[0]) / d0,
            agents[0].pos[1] + 0.1 * (goals[0][1] - agents[0].pos[1]) / d0,
        ];
        let slot9 = FIRST_SLOT + 9.0 * SLOT_LENGTH;
        moved[2].pos = [slot9, -SLOT_WIDTH / 2.0 - AGENT_RADIUS - 0.001];
        moved[3].pos = [0.5, -0.5];
        moved[4].pos = [0.5 + 2.0 * AGENT_RADIUS + 0.004, -0.5];
        let w = world(&moved, &objs);
        let before = memory.clone();
        let mut r = vec![0.0; 5];
        assert!(!t.reward(&w, &mut memory, &mut r).done);
        assert!((r[0] - 10.0).abs() < 1e-9, "{r:?}");
        assert!(r[1].abs() < 1e-12, "{r:?}");
        let shaped = |i: usize| before[i] - distance(moved[i].pos, goals[i]) * SHAPING;
        assert_eq!(r[2], shaped(2) - 10.0);
        assert_eq!(r[3], shaped(3) - 10.0);
        assert_eq!(r[4], shaped(4) - 10.0);
        let mut m = vec![0.0; 3];
        t.measure(&w, &memory, &mut m);
        assert_eq!(&m[..2], &[0.0, 2.0]);
    }

    /// Shared: every agent is paid the team's shaping sum, less the penalties VMAS's shared
    /// tensor carries; the episode ends with every agent within half its radius of its goal.
    #[test]
    fn shared_reward_and_the_end() {
        let t = Task::new("passage", 5, &[("shared_reward".into(), 1.0)]).unwrap();
        let goals: Vec<[f64; 2]> = (0..5).map(|i| [-0.8 + 0.3 * i as f64, 0.5]).collect();
        let objs = objects(&goals, &[3]);
        let far: Vec<Body> = goals.iter().map(|g| at(g[0], -0.5)).collect();
        let w = world(&far, &objs);
        let mut memory = vec![0.0; t.memory()];
        t.start(&w, &mut memory);
        let near: Vec<Body> = goals.iter().map(|g| at(g[0] + 0.016, g[1])).collect();
        let w = world(&near, &objs);
        let mut r = vec![0.0; 5];
        assert!(t.reward(&w, &mut memory, &mut r).done);
        let each = 100.0 * (1.0 - 0.016);
        for v in &r {
            assert!((v - 5.0 * each).abs() < 1e-9, "{r:?}");
        }
        // Agents 1 and 2 touch: VMAS's shared tensor takes agent 1's 10, then agent 2's, so
        // agent 0 pays none, agent 1 10 and agents 2 to 4 20 each.
        let mut close = near.clone();
        close[2].pos = [
            close[1].pos[0] + 2.0 * AGENT_RADIUS + 0.001,
            close[1].pos[1],
        ];
        let w = world(&close, &objs);
        t.reward(&w, &mut memory, &mut r);
        let team: f64 = (0..5)
            .map(|i| 100.0 * (distance(near[i].pos, goals[i]) - distance(close[i].pos, goals[i])))
            .sum();
        for (v, paid) in r.iter().zip([0.0, 10.0, 20.0, 20.0, 20.0]) {
            assert!((v - (team - paid)).abs() < 1e-9, "{r:?}");
        }
    }

    #[test]
    fn five_agents_and_vmas_options_only() {
        assert_eq!(
            Task::new("passage", 4, &[]).unwrap_err(),
            "passage: has 5 agents, got 4"
        );
        assert_eq!(
            Task::new("passage", 5, &[("n_passages".into(), 21.0)]).unwrap_err(),
            "passage: option 'n_passages' must be from 1 to 20, got 21"
        );
        assert_eq!(
            Task::new("passage", 5, &[("passages".into(), 2.0)]).unwrap_err(),
            "passage: no option 'passages' (it has: n_passages, shared_reward)"
        );
    }
}
