//! `sampling`, after VMAS 1.5's `vmas/scenarios/sampling.py`: the team samples an unknown
//! density, a sum of Gaussians, each cell of a grid paying once.
//!
//! VMAS's rules and defaults, kept: `n_agents` = 3 agents of radius `agent_radius` = 0.025
//! drawn uniformly in [−`xdim`, `xdim`] × [−`ydim`, `ydim`] (1 × 1; the scene's), held within
//! the semidims `xdim` − radius (the scene's walls); `n_gaussians` = 3 Gaussians of covariance
//! `cov` · I (0.05), centred uniformly in the same box (the scene's landmarks, the task's
//! objects); a grid of `grid_spacing` = 0.05 m cells. A point's sample is the density there
//! (the point first clamped to the semidims, its cell the clamped point's), over its largest
//! value on the grid's points (`norm`), and 0 where the cell was sampled already or the point
//! lies outside the box. The reward: agent after agent, each takes its point's sample and marks
//! its cell sampled (a second agent in that cell gets 0); each agent is paid its own
//! (`shared_rew` off) or the team's sum. The observation: position, velocity, with `collisions`
//! a 12-ray lidar of `lidar_range` = 0.2 m that sees the other agents only (distances, the range
//! where nothing is met; rays from 0.05 rad, a ring), then the samples at the eight points one
//! cell away in VMAS's order (+x, −x, +y, −y, (−,−), (+,−), (−,+), (+,+)), none marked. No end
//! but the episode's length.
//!
//! The lidar is computed here from the agents' discs, as VMAS's `cast_rays` is for spheres, so
//! that it sees the agents only and not the scene's walls.

use crate::{Options, Outcome, Rules, World};

/// The sampling task's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampling {
    /// Agents (`n_agents`).
    pub agents: usize,
    /// The team's sum paid to every agent.
    pub shared_rew: bool,
    /// Lidar range (m).
    pub lidar_range: f64,
    /// An agent's radius (m).
    pub agent_radius: f64,
    /// The box's half width (m).
    pub xdim: f64,
    /// The box's half height (m).
    pub ydim: f64,
    /// A cell's side (m).
    pub grid_spacing: f64,
    /// Gaussians.
    pub n_gaussians: usize,
    /// Each Gaussian's variance along x and y (m²).
    pub cov: f64,
    /// Agents collide and have a lidar.
    pub collisions: bool,
    /// All agents start at the origin (only without collisions).
    pub spawn_same_pos: bool,
    /// Samples over the density's largest value on the grid.
    pub norm: bool,
}

/// VMAS's sampling lidar: 12 rays from 0.05 rad round a full turn.
pub const LIDAR_RAYS: usize = 12;
/// The first ray's angle (rad).
pub const LIDAR_START: f64 = 0.05;

/// Where the cells' flags start in a world's memory.
const CELLS: usize = 2;

/// The neighbouring points an agent observes, in cells, in VMAS's order.
const AROUND: [[f64; 2]; 8] = [
    [1.0, 0.0],
    [-1.0, 0.0],
    [0.0, 1.0],
    [0.0, -1.0],
    [-1.0, -1.0],
    [1.0, -1.0],
    [-1.0, 1.0],
    [1.0, 1.0],
];

impl Sampling {
    /// Metrics, one value a world: cells sampled so far, and the team's samples this step.
    pub const METRICS: &'static [&'static str] = &["cells_sampled", "team_sample"];

    /// The task for `agents` with VMAS's keyword `options`.
    pub fn new(agents: usize, options: &[(String, f64)]) -> Result<Self, String> {
        let mut o = Options::new("sampling", options);
        let t = Sampling {
            agents: agents.max(1),
            shared_rew: o.flag("shared_rew", true)?,
            lidar_range: o.number("lidar_range", 0.2, 1e-3, 100.0)?,
            agent_radius: o.number("agent_radius", 0.025, 1e-3, 1.0)?,
            xdim: o.number("xdim", 1.0, 1e-2, 100.0)?,
            ydim: o.number("ydim", 1.0, 1e-2, 100.0)?,
            grid_spacing: o.number("grid_spacing", 0.05, 1e-3, 10.0)?,
            n_gaussians: o.count("n_gaussians", 3, 1, 64)?,
            cov: o.number("cov", 0.05, 1e-6, 100.0)?,
            collisions: o.flag("collisions", true)?,
            spawn_same_pos: o.flag("spawn_same_pos", false)?,
            norm: o.flag("norm", true)?,
        };
        // VMAS's comms_range only draws lines between agents.
        o.number("comms_range", 0.0, 0.0, 0.0)?;
        o.done()?;
        if t.spawn_same_pos && t.collisions {
            return Err("sampling: spawn_same_pos needs collisions off".into());
        }
        for (name, dim) in [("xdim", t.xdim), ("ydim", t.ydim)] {
            let cells = dim / t.grid_spacing;
            if (cells - cells.round()).abs() > 1e-9 {
                return Err(format!(
                    "sampling: {name} ({dim}) must be a whole number of grid_spacing ({})",
                    t.grid_spacing
                ));
            }
        }
        if t.cells() > 1 << 20 {
            return Err(format!("sampling: {} cells are too many", t.cells()));
        }
        Ok(t)
    }

    fn cells_x(&self) -> usize {
        (2.0 * self.xdim / self.grid_spacing).round() as usize
    }

    fn cells_y(&self) -> usize {
        (2.0 * self.ydim / self.grid_spacing).round() as usize
    }

    fn cells(&self) -> usize {
        self.cells_x() * self.cells_y()
    }

    /// The density (the Gaussians' sum) at `p`.
    fn density(&self, w: &World<'_>, p: [f64; 2]) -> f64 {
        let scale = 1.0 / (std::f64::consts::TAU * self.cov);
        w.objects
            .iter()
            .map(|g| {
                let (dx, dy) = (p[0] - g.pos[0], p[1] - g.pos[1]);
                scale * (-(dx * dx + dy * dy) / (2.0 * self.cov)).exp()
            })
            .sum()
    }

    /// The sample at `p` (see the module's doc) and its cell, `None` outside the box or where
    /// sampled already. `memory`: the largest density, the last team sample, a flag a cell.
    fn sample(
        &self,
        w: &World<'_>,
        memory: &[f64],
        p: [f64; 2],
        norm: bool,
    ) -> (f64, Option<usize>) {
        let out = p[0] < -self.xdim || p[0] > self.xdim || p[1] < -self.ydim || p[1] > self.ydim;
        let (sx, sy) = (self.xdim - self.agent_radius, self.ydim - self.agent_radius);
        let q = [p[0].clamp(-sx, sx), p[1].clamp(-sy, sy)];
        let (nx, ny) = (self.cells_x(), self.cells_y());
        // VMAS's index: the clamped point over the spacing plus half the cells, truncated.
        let index =
            |v: f64, n: usize| ((v / self.grid_spacing + n as f64 / 2.0) as usize).min(n - 1);
        let cell = index(q[0], nx) * ny + index(q[1], ny);
        if out || memory[CELLS + cell] != 0.0 {
            return (0.0, None);
        }
        let v = self.density(w, q);
        (if norm { v / memory[0] } else { v }, Some(cell))
    }

    /// Each ray's distance to the nearest other agent's disc, or the range.
    fn lidar(&self, w: &World<'_>, i: usize, out: &mut [f64]) {
        let others = w.agents.iter().enumerate().filter(|&(j, _)| j != i);
        let discs = others.map(|(_, b)| (b.pos, self.agent_radius));
        crate::ring(&w.agents[i], LIDAR_START, self.lidar_range, discs, out);
    }
}

impl Rules for Sampling {
    fn agents(&self) -> usize {
        self.agents
    }

    /// The Gaussians' centres.
    fn objects(&self) -> usize {
        self.n_gaussians
    }

    fn observation_width(&self) -> usize {
        4 + if self.collisions { LIDAR_RAYS } else { 0 } + AROUND.len()
    }

    /// The largest density on the grid, the team's samples at the last step, then a flag a
    /// cell (sampled).
    fn memory(&self) -> usize {
        CELLS + self.cells()
    }

    fn metric_names(&self) -> &'static [&'static str] {
        Self::METRICS
    }

    fn start(&self, w: &World<'_>, memory: &mut [f64]) {
        memory.fill(0.0);
        let mut top = 0.0f64;
        for i in 0..self.cells_x() {
            for j in 0..self.cells_y() {
                let p = [
                    -self.xdim + i as f64 * self.grid_spacing,
                    -self.ydim + j as f64 * self.grid_spacing,
                ];
                top = top.max(self.sample(w, memory, p, false).0);
            }
        }
        memory[0] = top;
    }

    fn observe(&self, w: &World<'_>, memory: &[f64], out: &mut [f64]) {
        let width = self.observation_width();
        for (i, (a, o)) in w.agents.iter().zip(out.chunks_exact_mut(width)).enumerate() {
            o[..4].copy_from_slice(&[a.pos[0], a.pos[1], a.vel[0], a.vel[1]]);
            let mut k = 4;
            if self.collisions {
                self.lidar(w, i, &mut o[4..4 + LIDAR_RAYS]);
                k += LIDAR_RAYS;
            }
            for (d, v) in AROUND.iter().zip(&mut o[k..]) {
                let p = [
                    a.pos[0] + d[0] * self.grid_spacing,
                    a.pos[1] + d[1] * self.grid_spacing,
                ];
                *v = self.sample(w, memory, p, self.norm).0;
            }
        }
    }

    fn reward(&self, w: &World<'_>, memory: &mut [f64], out: &mut [f64]) -> Outcome {
        for (a, r) in w.agents.iter().zip(out.iter_mut()) {
            let (v, cell) = self.sample(w, memory, a.pos, self.norm);
            if let Some(c) = cell {
                memory[CELLS + c] = 1.0;
            }
            *r = v;
        }
        let team: f64 = out.iter().sum();
        memory[1] = team;
        if self.shared_rew {
            out.fill(team);
        }
        Outcome { done: false }
    }

    fn measure(&self, _: &World<'_>, memory: &[f64], out: &mut [f64]) {
        out[0] = memory[CELLS..].iter().sum();
        out[1] = memory[1];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Task, at};

    /// One Gaussian at the origin: its centre is a grid point, so an agent there samples 1; a
    /// second agent in the same cell gets 0, as does the first next step; a point outside the
    /// box gets 0.
    #[test]
    fn each_cell_pays_once_agent_after_agent() {
        let opts = [("n_gaussians".to_string(), 1.0), ("shared_rew".into(), 0.0)];
        let t = Task::new("sampling", 3, &opts).unwrap();
        assert_eq!(
            (t.objects(), t.observation_width(), t.memory()),
            (1, 24, 2 + 1600)
        );
        let agents = [at(0.0, 0.0), at(0.01, 0.01), at(1.2, 0.0)];
        let gauss = [at(0.0, 0.0)];
        let w = World {
            agents: &agents,
            objects: &gauss,
            lidar: &[],
        };
        let mut memory = vec![0.0; t.memory()];
        t.start(&w, &mut memory);
        assert_eq!(memory[0], 1.0 / (std::f64::consts::TAU * 0.05));
        let mut r = [0.0; 3];
        t.reward(&w, &mut memory, &mut r);
        assert_eq!(r, [1.0, 0.0, 0.0]);
        let mut m = [0.0; 2];
        t.measure(&w, &memory, &mut m);
        assert_eq!(m, [1.0, 1.0]);
        t.reward(&w, &mut memory, &mut r);
        assert_eq!(r, [0.0; 3]);
        // Shared: the team's sum to all.
        let t = Task::new("sampling", 3, &opts[..1]).unwrap();
        t.start(&w, &mut memory);
        t.reward(&w, &mut memory, &mut r);
        assert_eq!(r, [1.0; 3]);
    }

    /// The lidar meets another agent's disc where VMAS's ray-sphere cast does; the samples around
    /// read the cells one away, a cell another agent sampled as 0.
    #[test]
    fn the_observation_in_vmas_order() {
        let t = Task::new("sampling", 2, &[("n_gaussians".into(), 1.0)]).unwrap();
        let agents = [
            crate::Body {
                vel: [0.1, -0.1],
                ..at(0.0, 0.0)
            },
            at(0.05, 0.0),
        ];
        let gauss = [at(0.0, 0.0)];
        let w = World {
            agents: &agents,
            objects: &gauss,
            lidar: &[],
        };
        let mut memory = vec![0.0; t.memory()];
        t.start(&w, &mut memory);
        let mut r = [0.0; 2];
        t.reward(&w, &mut memory, &mut r);
        let mut o = vec![0.0; 48];
        t.observe(&w, &memory, &mut o);
        assert_eq!(&o[..4], &[0.0, 0.0, 0.1, -0.1]);
        // The other disc (radius 0.025) 0.05 m along +x: the rays at 0.05 and 0.05 − π/6 meet it.
        for (k, &d) in o[4..16].iter().enumerate() {
            let th = 0.05 + std::f64::consts::TAU * k as f64 / 12.0;
            let (along, off) = (0.05 * th.cos(), 0.05 * th.sin());
            let want = if along > 0.0 && off.abs() < 0.025 {
                along - (0.025f64.powi(2) - off * off).sqrt()
            } else {
                0.2
            };
            assert!((d - want).abs() < 1e-12, "ray {k}: {:?}", &o[4..16]);
        }
        assert!(o[4] < 0.2 && o[15] < 0.2);
        // +x is the other agent's cell, sampled; the others one cell off the centre, or two.
        let e1 = (-0.0025f64 / 0.1).exp();
        let e2 = (-0.005f64 / 0.1).exp();
        let want = [0.0, e1, e1, e1, e2, e2, e2, e2];
        for (g, w) in o[16..24].iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{:?}", &o[16..24]);
        }
        // The other agent's −x is this agent's cell: 0.
        assert_eq!(o[24 + 17], 0.0);
    }

    #[test]
    fn options_vmas_refuses_are_refused() {
        let err = Task::new("sampling", 3, &[("spawn_same_pos".into(), 1.0)]).unwrap_err();
        assert_eq!(err, "sampling: spawn_same_pos needs collisions off");
        let err = Task::new("sampling", 3, &[("grid_spacing".into(), 0.3)]).unwrap_err();
        assert_eq!(
            err,
            "sampling: xdim (1) must be a whole number of grid_spacing (0.3)"
        );
        let t = Task::new(
            "sampling",
            3,
            &[("collisions".into(), 0.0), ("spawn_same_pos".into(), 1.0)],
        )
        .unwrap();
        assert_eq!(t.observation_width(), 12);
    }
}
