//! `discovery`, after VMAS 1.5's `vmas/scenarios/discovery.py`: the agents find targets, each
//! covered when enough agents are near it at once, and a covered target appears elsewhere.
//!
//! VMAS's rules and defaults, kept: `n_agents` = 5 agents of radius 0.05; `n_targets` = 7
//! targets of radius 0.05; targets and agents drawn in [−`x_semidim`, `x_semidim`] ×
//! [−`y_semidim`, `y_semidim`] (1 × 1) no nearer than `min_dist_between_entities` = 0.2 to each
//! other (the scene's), the agents held within the semidims (the scene's walls). A target is
//! covered when `agents_per_target` = 2 agents are within `covering_range` = 0.25 of it. An
//! agent's covering reward is the number of covered targets within its range, times
//! `covering_rew_coeff` = 1; with `shared_reward` (VMAS's default off, BenchMARL's on) every
//! agent is paid the team's sum, halved; plus `agent_collision_penalty` = 0 for each other
//! agent whose surface is within 0.005 m, plus `time_penalty` = 0 every step. After the reward
//! each covered target is drawn again (`targets_respawn`, on) at least 0.2 from every agent and
//! every other target, or (off) is taken far outside the world and counts as found; the
//! episode ends when every target was found (never while they respawn). The observation:
//! position, velocity, then a 15-ray lidar (`n_lidar_rays_entities`) of `lidar_range` = 0.35
//! that sees the targets only (rays from 0 rad), and with `use_agent_lidar` a 12-ray lidar
//! (`n_lidar_rays_agents`, rays from 0.05 rad) that sees the other agents (19 values by
//! default).
//!
//! What differs: the targets are the task's, kept in each world's memory (the scene's marks
//! give their first places), so they move without a body to move, and their lidars are
//! computed here from their discs; nothing pushes an agent off a target, where VMAS's targets
//! collide. A target's new place is drawn from a generator (SplitMix64) seeded by the world's
//! start, so world k of a batch is a lone world seeded seed + k; VMAS draws until a place is
//! free, ssx gives up after 10,000 draws and keeps the last.

use crate::{Body, COLLISION_DISTANCE, Options, Outcome, Rules, World, distance};

/// The discovery task's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Discovery {
    /// Agents (`n_agents`).
    pub agents: usize,
    /// Targets.
    pub n_targets: usize,
    /// The world's half width (m).
    pub x_semidim: f64,
    /// The world's half height (m).
    pub y_semidim: f64,
    /// The least distance of a new target from every agent and other target (m).
    pub min_dist_between_entities: f64,
    /// Both lidars' range (m).
    pub lidar_range: f64,
    /// How near an agent covers a target (m).
    pub covering_range: f64,
    /// A second lidar that sees the agents.
    pub use_agent_lidar: bool,
    /// Rays of the targets' lidar.
    pub n_lidar_rays_entities: usize,
    /// Rays of the agents' lidar.
    pub n_lidar_rays_agents: usize,
    /// Agents a target needs at once.
    pub agents_per_target: usize,
    /// A covered target appears elsewhere (else it is found, and leaves).
    pub targets_respawn: bool,
    /// The team's covering sum, halved, paid to every agent.
    pub shared_reward: bool,
    /// Added for each other agent touching.
    pub agent_collision_penalty: f64,
    /// The covering reward's factor.
    pub covering_rew_coeff: f64,
    /// Added every step.
    pub time_penalty: f64,
}

/// An agent's radius, and a target's (m).
pub const RADIUS: f64 = 0.05;
/// Draws for a target's new place before the last is kept.
const DRAWS: usize = 10_000;
/// The memory: the generator's state (two 32-bit halves), targets covered at the last step,
/// targets found since the start, then each target's place, then each target's found flag.
const RNG: usize = 0;
const COVERED: usize = 2;
const FOUND: usize = 3;
const PLACES: usize = 4;

/// SplitMix64 (Steele, Lea and Flood 2014), its state kept in a world's memory as two whole
/// numbers below 2³² (exact in an f64).
struct Draws<'m>(&'m mut [f64]);

impl Draws<'_> {
    fn seed(memory: &mut [f64], seed: u64) {
        memory[RNG] = (seed >> 32) as f64;
        memory[RNG + 1] = (seed & 0xffff_ffff) as f64;
    }
    /// A number uniform in [lo, hi).
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let state = ((self.0[RNG] as u64) << 32 | self.0[RNG + 1] as u64)
            .wrapping_add(0x9e37_79b9_7f4a_7c15);
        Draws::seed(self.0, state);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        lo + (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64) * (hi - lo)
    }
}

impl Discovery {
    /// Metrics, one value a world: targets covered at this step, targets covered since the
    /// episode's start.
    pub const METRICS: &'static [&'static str] = &["targets_covered", "targets_found"];

    /// The task for `agents` with VMAS's keyword `options`.
    pub fn new(agents: usize, options: &[(String, f64)]) -> Result<Self, String> {
        let mut o = Options::new("discovery", options);
        let t = Discovery {
            agents: agents.max(1),
            n_targets: o.count("n_targets", 7, 1, 1000)?,
            x_semidim: o.number("x_semidim", 1.0, 0.1, 1e3)?,
            y_semidim: o.number("y_semidim", 1.0, 0.1, 1e3)?,
            min_dist_between_entities: o.number("min_dist_between_entities", 0.2, 0.0, 10.0)?,
            lidar_range: o.number("lidar_range", 0.35, 1e-3, 100.0)?,
            covering_range: o.number("covering_range", 0.25, 0.0, 100.0)?,
            use_agent_lidar: o.flag("use_agent_lidar", false)?,
            n_lidar_rays_entities: o.count("n_lidar_rays_entities", 15, 1, 1024)?,
            n_lidar_rays_agents: o.count("n_lidar_rays_agents", 12, 1, 1024)?,
            agents_per_target: o.count("agents_per_target", 2, 1, 1000)?,
            targets_respawn: o.flag("targets_respawn", true)?,
            shared_reward: o.flag("shared_reward", false)?,
            agent_collision_penalty: o.number("agent_collision_penalty", 0.0, -1e6, 1e6)?,
            covering_rew_coeff: o.number("covering_rew_coeff", 1.0, -1e6, 1e6)?,
            time_penalty: o.number("time_penalty", 0.0, -1e6, 1e6)?,
        };
        o.done()?;
        Ok(t)
    }

    fn target(memory: &[f64], t: usize) -> [f64; 2] {
        [memory[PLACES + 2 * t], memory[PLACES + 2 * t + 1]]
    }

    fn found_at(&self) -> usize {
        PLACES + 2 * self.n_targets
    }

    /// Whether target `t` has enough agents within range.
    fn is_covered(&self, w: &World<'_>, memory: &[f64], t: usize) -> bool {
        let p = Self::target(memory, t);
        let near = w
            .agents
            .iter()
            .filter(|a| distance(a.pos, p) < self.covering_range);
        near.count() >= self.agents_per_target
    }

    /// A new place for target `t`: at least the least distance from every agent and every
    /// other target.
    fn respawn(&self, w: &World<'_>, memory: &mut [f64], t: usize) {
        let (x, y) = (self.x_semidim, self.y_semidim);
        let d = self.min_dist_between_entities;
        let mut p = [0.0; 2];
        for _ in 0..DRAWS {
            let mut draws = Draws(memory);
            p = [draws.uniform(-x, x), draws.uniform(-y, y)];
            let clear_agents = w.agents.iter().all(|a| distance(a.pos, p) >= d);
            let clear_targets = (0..self.n_targets)
                .filter(|&u| u != t)
                .all(|u| distance(Self::target(memory, u), p) >= d);
            if clear_agents && clear_targets {
                break;
            }
        }
        memory[PLACES + 2 * t..PLACES + 2 * t + 2].copy_from_slice(&p);
    }
}

impl Rules for Discovery {
    fn agents(&self) -> usize {
        self.agents
    }

    /// The targets' first places.
    fn objects(&self) -> usize {
        self.n_targets
    }

    fn observation_width(&self) -> usize {
        4 + self.n_lidar_rays_entities
            + if self.use_agent_lidar {
                self.n_lidar_rays_agents
            } else {
                0
            }
    }

    fn memory(&self) -> usize {
        PLACES + 3 * self.n_targets
    }

    fn metric_names(&self) -> &'static [&'static str] {
        Self::METRICS
    }

    fn start(&self, w: &World<'_>, memory: &mut [f64]) {
        memory.fill(0.0);
        // FNV-1a over the start's places: the world's seed, as its draws made them.
        let mut seed: u64 = 0xcbf2_9ce4_8422_2325;
        for b in w.agents.iter().chain(w.objects) {
            for byte in b.pos.iter().flat_map(|v| v.to_bits().to_le_bytes()) {
                seed = (seed ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        Draws::seed(memory, seed);
        for (o, m) in w.objects.iter().zip(memory[PLACES..].chunks_exact_mut(2)) {
            m.copy_from_slice(&o.pos);
        }
    }

    fn observe(&self, w: &World<'_>, memory: &[f64], out: &mut [f64]) {
        let width = self.observation_width();
        let targets = (0..self.n_targets).map(|t| (Self::target(memory, t), RADIUS));
        for (i, (a, o)) in w.agents.iter().zip(out.chunks_exact_mut(width)).enumerate() {
            o[..4].copy_from_slice(&[a.pos[0], a.pos[1], a.vel[0], a.vel[1]]);
            let (seen, rest) = o[4..].split_at_mut(self.n_lidar_rays_entities);
            crate::ring(a, 0.0, self.lidar_range, targets.clone(), seen);
            if self.use_agent_lidar {
                let others = w.agents.iter().enumerate().filter(|&(j, _)| j != i);
                let discs = others.map(|(_, b)| (b.pos, RADIUS));
                crate::ring(a, 0.05, self.lidar_range, discs, rest);
            }
        }
    }

    fn reward(&self, w: &World<'_>, memory: &mut [f64], out: &mut [f64]) -> Outcome {
        for (a, r) in w.agents.iter().zip(out.iter_mut()) {
            let mine = (0..self.n_targets).filter(|&t| {
                distance(a.pos, Self::target(memory, t)) < self.covering_range
                    && self.is_covered(w, memory, t)
            });
            *r = mine.count() as f64 * self.covering_rew_coeff;
        }
        if self.shared_reward {
            let team: f64 = out.iter().sum();
            out.fill(if team != 0.0 { team / 2.0 } else { team });
        }
        let touch = 2.0 * RADIUS + COLLISION_DISTANCE;
        for (i, (a, r)) in w.agents.iter().zip(out.iter_mut()).enumerate() {
            let others = w.agents.iter().enumerate().filter(|&(j, _)| j != i);
            let touching = others.filter(|(_, b)| distance(a.pos, b.pos) < touch);
            *r += touching.count() as f64 * self.agent_collision_penalty + self.time_penalty;
        }
        let found = self.found_at();
        let mut n = 0.0;
        for t in 0..self.n_targets {
            // Covered as the reward found it: moving a target leaves every other's cover as it
            // was (a cover reads the agents and that target alone).
            if !self.is_covered(w, memory, t) {
                continue;
            }
            n += 1.0;
            if self.targets_respawn {
                self.respawn(w, memory, t);
            } else {
                memory[found + t] = 1.0;
                let far = (-1000.0 * self.x_semidim, -10.0 * self.x_semidim);
                let mut draws = Draws(memory);
                let p = [draws.uniform(far.0, far.1), draws.uniform(far.0, far.1)];
                memory[PLACES + 2 * t..PLACES + 2 * t + 2].copy_from_slice(&p);
            }
        }
        memory[COVERED] = n;
        memory[FOUND] += n;
        Outcome {
            done: memory[found..].iter().all(|&f| f == 1.0),
        }
    }

    fn measure(&self, _: &World<'_>, memory: &[f64], out: &mut [f64]) {
        out[0] = memory[COVERED];
        out[1] = memory[FOUND];
    }

    /// The agents, then the targets where they are now (at rest).
    fn state(&self, w: &World<'_>, memory: &[f64], out: &mut [f64]) {
        let targets = (0..self.n_targets).map(|t| Body {
            pos: Self::target(memory, t),
            ..Body::default()
        });
        for (b, o) in w
            .agents
            .iter()
            .copied()
            .chain(targets)
            .zip(out.chunks_exact_mut(4))
        {
            o.copy_from_slice(&[b.pos[0], b.pos[1], b.vel[0], b.vel[1]]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Task, at, world};

    /// Two agents near target 0 cover it, one near target 1 does not; each of the two is paid
    /// 1 (the team's 2, halved, when shared); target 0 moves at least 0.2 from everything and
    /// inside the box, target 1 stays; the lidar sees the target where it is now.
    #[test]
    fn covering_pays_and_the_target_moves() {
        let opts = [("n_targets".to_string(), 2.0)];
        let t = Task::new("discovery", 3, &opts).unwrap();
        let agents = [at(0.0, 0.1), at(0.0, -0.1), at(0.6, 0.6)];
        let targets = [at(0.0, 0.0), at(0.6, 0.75)];
        let w = world(&agents, &targets);
        let mut memory = vec![0.0; t.memory()];
        t.start(&w, &mut memory);
        let mut r = vec![0.0; 3];
        assert!(!t.reward(&w, &mut memory, &mut r).done);
        assert_eq!(r, vec![1.0, 1.0, 0.0]);
        let moved = Discovery::target(&memory, 0);
        assert_ne!(moved, [0.0, 0.0]);
        assert!(moved.iter().all(|v| v.abs() <= 1.0), "{moved:?}");
        for p in agents.iter().map(|a| a.pos).chain([[0.6, 0.75]]) {
            assert!(distance(p, moved) >= 0.2, "{moved:?} near {p:?}");
        }
        assert_eq!(Discovery::target(&memory, 1), [0.6, 0.75]);
        let mut m = vec![0.0; 2];
        t.measure(&w, &memory, &mut m);
        assert_eq!(m, vec![1.0, 1.0]);
        // Agent 2 sees target 1 straight up (+y is ray 15/4 of 15: none exactly; its nearest
        // ray meets it no nearer than 0.15 − 0.05).
        let mut obs = vec![0.0; 3 * t.observation_width()];
        t.observe(&w, &memory, &mut obs);
        let ring = &obs[2 * 19 + 4..3 * 19];
        let nearest = ring.iter().cloned().fold(f64::INFINITY, f64::min);
        assert!((0.1..0.35).contains(&nearest), "{ring:?}");
        // Shared: the team's 2, halved, to everyone.
        let t = Task::new(
            "discovery",
            3,
            &[("n_targets".into(), 2.0), ("shared_reward".into(), 1.0)],
        )
        .unwrap();
        t.start(&w, &mut memory);
        t.reward(&w, &mut memory, &mut r);
        assert_eq!(r, vec![1.0, 1.0, 1.0]);
    }

    /// The same start draws the same new places; another start, others.
    #[test]
    fn the_draws_follow_the_start() {
        let t = Task::new("discovery", 2, &[("n_targets".into(), 1.0)]).unwrap();
        let place = |y: f64| {
            let agents = [at(0.0, y), at(0.0, -0.1)];
            let targets = [at(0.0, 0.0)];
            let w = world(&agents, &targets);
            let mut memory = vec![0.0; t.memory()];
            t.start(&w, &mut memory);
            t.reward(&w, &mut memory, &mut [0.0; 2]);
            Discovery::target(&memory, 0)
        };
        assert_eq!(place(0.1), place(0.1));
        assert_ne!(place(0.1), place(0.11));
    }

    /// Without respawning a covered target leaves the world and counts as found; once every
    /// target is found the episode ends.
    #[test]
    fn found_targets_leave_and_the_episode_ends() {
        let opts = [
            ("n_targets".to_string(), 2.0),
            ("targets_respawn".into(), 0.0),
        ];
        let t = Task::new("discovery", 2, &opts).unwrap();
        let targets = [at(0.0, 0.0), at(0.8, 0.8)];
        let first = [at(0.0, 0.1), at(0.0, -0.1)];
        let mut memory = vec![0.0; t.memory()];
        t.start(&world(&first, &targets), &mut memory);
        let mut r = vec![0.0; 2];
        assert!(!t.reward(&world(&first, &targets), &mut memory, &mut r).done);
        let gone = Discovery::target(&memory, 0);
        assert!(
            gone.iter().all(|&v| (-1000.0..=-10.0).contains(&v)),
            "{gone:?}"
        );
        let second = [at(0.8, 0.9), at(0.8, 0.7)];
        assert!(
            t.reward(&world(&second, &targets), &mut memory, &mut r)
                .done
        );
        let mut state = vec![0.0; t.state_width()];
        t.state(&world(&second, &targets), &memory, &mut state);
        assert_eq!(&state[8..10], &gone);
    }

    #[test]
    fn the_observation_width_and_options() {
        let t = Task::new("discovery", 5, &[]).unwrap();
        assert_eq!(t.observation_width(), 19);
        let t = Task::new("discovery", 5, &[("use_agent_lidar".into(), 1.0)]).unwrap();
        assert_eq!(t.observation_width(), 31);
        assert_eq!(
            Task::new("discovery", 5, &[("agents_per_target".into(), 0.0)]).unwrap_err(),
            "discovery: option 'agents_per_target' must be from 1 to 1000, got 0"
        );
    }
}
