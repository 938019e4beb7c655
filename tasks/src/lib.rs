//! ssx's learning tasks after VMAS's scenarios (Bettini et al. 2022; VMAS 1.5,
//! `vmas/scenarios/`): for each task, the observation of every agent, the reward, the episode's
//! end and the task's metrics, as pure functions of one world's bodies (positions and
//! velocities in the plane) and its agents' lidar readings.
//!
//! This crate imports nothing: the batched env (`ssx-worlds`, in its one pass a world) and a
//! plugin that drives robots with a trained policy compute the same values with the same
//! code. Names, defaults and terms are VMAS's (each task's module cites its scenario file);
//! the code is ssx's own.
#![warn(missing_docs)]

mod balance;
mod discovery;
mod dispersion;
mod flocking;
mod give_way;
mod navigation;
mod passage;
mod sampling;
mod transport;
mod wheel;

pub use balance::Balance;
pub use discovery::Discovery;
pub use dispersion::Dispersion;
pub use flocking::Flocking;
pub use give_way::GiveWay;
pub use navigation::Navigation;
pub use passage::Passage;
pub use sampling::Sampling;
pub use transport::Transport;
pub use wheel::Wheel;

/// A body as a task reads it: its state in the plane.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Body {
    /// Position (m).
    pub pos: [f64; 2],
    /// Velocity (m/s).
    pub vel: [f64; 2],
    /// Heading about z (rad).
    pub rot: f64,
    /// Turn rate (rad/s).
    pub angvel: f64,
}

impl Body {
    /// A body as a task reads it from its state in space: its position and velocity in the
    /// plane, its heading the yaw of `orientation` (x, y, z, w) and its turn rate about z. The
    /// batched env and the policy driver read bodies through this one function.
    pub fn from_state(
        position: [f64; 3],
        orientation: [f64; 4],
        linear_velocity: [f64; 3],
        angular_velocity: [f64; 3],
    ) -> Body {
        let [x, y, z, w] = orientation;
        Body {
            pos: [position[0], position[1]],
            vel: [linear_velocity[0], linear_velocity[1]],
            rot: (2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z)),
            angvel: angular_velocity[2],
        }
    }
}

/// An agent's lidar as a task reads it from its range sensor's `values`: the first `rays`
/// values, a ray that read nothing (NaN) as 0, and 0 for each ray the reading lacks (a sensor
/// that has not read yet). The batched env and the policy driver read lidars through this.
pub fn lidar_values(values: &[f64], rays: usize, out: &mut impl Extend<f64>) {
    let got = values.len().min(rays);
    out.extend(
        values[..got]
            .iter()
            .map(|&v| if v.is_nan() { 0.0 } else { v }),
    );
    out.extend(std::iter::repeat_n(0.0, rays - got));
}

/// One world as a task reads it.
#[derive(Clone, Copy, Debug)]
pub struct World<'a> {
    /// The agents, in the task's order (`agent_0`, `agent_1`, ...).
    pub agents: &'a [Body],
    /// The task's own bodies, in the order of [`Task::objects`].
    pub objects: &'a [Body],
    /// Each agent's lidar, agent after agent: [`Task::lidar_rays`] distances (m) each, the
    /// range where a ray meets nothing.
    pub lidar: &'a [f64],
}

/// What a task's step gives beside the rewards.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The episode is over (VMAS's `done`).
    pub done: bool,
}

/// A task with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum Task {
    /// VMAS's `navigation`.
    Navigation(Navigation),
    /// VMAS's `transport`.
    Transport(Transport),
    /// VMAS's `dispersion`.
    Dispersion(Dispersion),
    /// VMAS's `wheel`.
    Wheel(Wheel),
    /// VMAS's `balance`.
    Balance(Balance),
    /// VMAS's `sampling`.
    Sampling(Sampling),
    /// VMAS's `give_way`.
    GiveWay(GiveWay),
    /// VMAS's `passage`.
    Passage(Passage),
    /// VMAS's `flocking`.
    Flocking(Flocking),
    /// VMAS's `discovery`.
    Discovery(Discovery),
}

/// Reads named options, VMAS's `check_kwargs_consumed`: every option must be taken by the
/// task, and one that is not is refused with the names the task knows.
pub struct Options<'a> {
    task: &'static str,
    given: &'a [(String, f64)],
    taken: Vec<&'static str>,
}

impl<'a> Options<'a> {
    /// `given` for `task`.
    pub fn new(task: &'static str, given: &'a [(String, f64)]) -> Self {
        Options {
            task,
            given,
            taken: Vec::new(),
        }
    }

    /// Option `name`, or `default`; refused outside `lo..=hi`.
    pub fn number(
        &mut self,
        name: &'static str,
        default: f64,
        lo: f64,
        hi: f64,
    ) -> Result<f64, String> {
        self.taken.push(name);
        let Some(&(_, v)) = self.given.iter().find(|(n, _)| n == name) else {
            return Ok(default);
        };
        if !(v >= lo && v <= hi) {
            return Err(format!(
                "{}: option '{name}' must be from {lo} to {hi}, got {v}",
                self.task
            ));
        }
        Ok(v)
    }

    /// A whole number option.
    pub fn count(
        &mut self,
        name: &'static str,
        default: usize,
        lo: usize,
        hi: usize,
    ) -> Result<usize, String> {
        let v = self.number(name, default as f64, lo as f64, hi as f64)?;
        if v.fract() != 0.0 {
            return Err(format!(
                "{}: option '{name}' must be a whole number, got {v}",
                self.task
            ));
        }
        Ok(v as usize)
    }

    /// A yes/no option (0 or 1).
    pub fn flag(&mut self, name: &'static str, default: bool) -> Result<bool, String> {
        let v = self.number(name, f64::from(u8::from(default)), 0.0, 1.0)?;
        Ok(v != 0.0)
    }

    /// Refuses an option no task parameter took.
    pub fn done(self) -> Result<(), String> {
        if let Some((name, _)) = self
            .given
            .iter()
            .find(|(n, _)| !self.taken.contains(&n.as_str()))
        {
            let mut known = self.taken.clone();
            known.sort_unstable();
            return Err(format!(
                "{}: no option '{name}' (it has: {})",
                self.task,
                known.join(", ")
            ));
        }
        Ok(())
    }
}

/// What every task answers: [`Task`]'s methods, task by task.
pub(crate) trait Rules {
    fn agents(&self) -> usize;
    fn objects(&self) -> usize;
    fn lidar_rays(&self) -> usize {
        0
    }
    fn observation_width(&self) -> usize;
    fn memory(&self) -> usize;
    fn metric_names(&self) -> &'static [&'static str];
    fn start(&self, w: &World<'_>, memory: &mut [f64]);
    fn observe(&self, w: &World<'_>, memory: &[f64], out: &mut [f64]);
    fn reward(&self, w: &World<'_>, memory: &mut [f64], out: &mut [f64]) -> Outcome;
    fn measure(&self, w: &World<'_>, memory: &[f64], out: &mut [f64]);
    /// Every agent's position and velocity, then every object's (a task whose objects move in
    /// its memory writes them from there).
    fn state(&self, w: &World<'_>, _memory: &[f64], out: &mut [f64]) {
        for (b, o) in w
            .agents
            .iter()
            .chain(w.objects)
            .zip(out.chunks_exact_mut(4))
        {
            o.copy_from_slice(&[b.pos[0], b.pos[1], b.vel[0], b.vel[1]]);
        }
    }
}

impl Task {
    /// The task `name` for `agents` agents with `options` (VMAS's keyword arguments).
    pub fn new(name: &str, agents: usize, options: &[(String, f64)]) -> Result<Task, String> {
        match name {
            "navigation" => Ok(Task::Navigation(Navigation::new(agents, options)?)),
            "transport" => Ok(Task::Transport(Transport::new(agents, options)?)),
            "dispersion" => Ok(Task::Dispersion(Dispersion::new(agents, options)?)),
            "wheel" => Ok(Task::Wheel(Wheel::new(agents, options)?)),
            "balance" => Ok(Task::Balance(Balance::new(agents, options)?)),
            "sampling" => Ok(Task::Sampling(Sampling::new(agents, options)?)),
            "give_way" => Ok(Task::GiveWay(GiveWay::new(agents, options)?)),
            "passage" => Ok(Task::Passage(Passage::new(agents, options)?)),
            "flocking" => Ok(Task::Flocking(Flocking::new(agents, options)?)),
            "discovery" => Ok(Task::Discovery(Discovery::new(agents, options)?)),
            other => Err(format!(
                "no task '{other}' (there is: navigation, transport, dispersion, wheel, balance, sampling, give_way, passage, flocking, discovery)"
            )),
        }
    }

    fn rules(&self) -> &dyn Rules {
        match self {
            Task::Navigation(t) => t,
            Task::Transport(t) => t,
            Task::Dispersion(t) => t,
            Task::Wheel(t) => t,
            Task::Balance(t) => t,
            Task::Sampling(t) => t,
            Task::GiveWay(t) => t,
            Task::Passage(t) => t,
            Task::Flocking(t) => t,
            Task::Discovery(t) => t,
        }
    }

    /// Its name.
    pub fn name(&self) -> &'static str {
        match self {
            Task::Navigation(_) => "navigation",
            Task::Transport(_) => "transport",
            Task::Dispersion(_) => "dispersion",
            Task::Wheel(_) => "wheel",
            Task::Balance(_) => "balance",
            Task::Sampling(_) => "sampling",
            Task::GiveWay(_) => "give_way",
            Task::Passage(_) => "passage",
            Task::Flocking(_) => "flocking",
            Task::Discovery(_) => "discovery",
        }
    }

    /// How many agents.
    pub fn agents(&self) -> usize {
        self.rules().agents()
    }

    /// How many bodies of its own it reads, beside the agents (goals, packages).
    pub fn objects(&self) -> usize {
        self.rules().objects()
    }

    /// Rays of each agent's lidar (0: none).
    pub fn lidar_rays(&self) -> usize {
        self.rules().lidar_rays()
    }

    /// Values of one agent's observation.
    pub fn observation_width(&self) -> usize {
        self.rules().observation_width()
    }

    /// Values of a world's state, for a central critic.
    pub fn state_width(&self) -> usize {
        4 * self.agents() + 4 * self.objects()
    }

    /// Values a world keeps between steps (the reward's shaping terms).
    pub fn memory(&self) -> usize {
        self.rules().memory()
    }

    /// The names of its metrics, one value a world each.
    pub fn metric_names(&self) -> &'static [&'static str] {
        self.rules().metric_names()
    }

    /// A new episode: `memory` set from the world as it starts.
    pub fn start(&self, w: &World<'_>, memory: &mut [f64]) {
        self.rules().start(w, memory)
    }

    /// Every agent's observation, agent after agent ([`Task::observation_width`] each), with the
    /// world's `memory` as the last reward left it (a task whose observation reads what happened,
    /// as dispersion's eaten food).
    pub fn observe(&self, w: &World<'_>, memory: &[f64], out: &mut [f64]) {
        self.rules().observe(w, memory, out)
    }

    /// Every agent's reward for the step that led to `w`, `memory` brought up to date.
    pub fn reward(&self, w: &World<'_>, memory: &mut [f64], out: &mut [f64]) -> Outcome {
        self.rules().reward(w, memory, out)
    }

    /// The metrics of [`Task::metric_names`], with the world's `memory`.
    pub fn measure(&self, w: &World<'_>, memory: &[f64], out: &mut [f64]) {
        self.rules().measure(w, memory, out)
    }

    /// A world's state: every agent's position and velocity, then every object's, as the
    /// world's `memory` has them.
    pub fn state(&self, w: &World<'_>, memory: &[f64], out: &mut [f64]) {
        self.rules().state(w, memory, out)
    }
}

/// A body at rest at (x, y), for the tasks' tests.
#[cfg(test)]
pub(crate) fn at(x: f64, y: f64) -> Body {
    Body {
        pos: [x, y],
        ..Body::default()
    }
}

/// A world of `agents` and `objects` with no lidar readings, for the tasks' tests.
#[cfg(test)]
pub(crate) fn world<'a>(agents: &'a [Body], objects: &'a [Body]) -> World<'a> {
    World {
        agents,
        objects,
        lidar: &[],
    }
}

/// VMAS's `LINE_MIN_DIST` (vmas/simulator/utils.py): how near a line or box counts as touching.
pub(crate) const LINE_MIN_DIST: f64 = 4.0 / 600.0;

/// Surfaces this near count as a collision (VMAS's `min_collision_distance`, 0.005 m in
/// navigation, flocking and discovery; ssx's rigid contacts stop bodies at touching where VMAS's
/// penalty forces let them overlap, so VMAS's overlap tests read it too).
pub(crate) const COLLISION_DISTANCE: f64 = 0.005;

/// A lidar ring about `a` (VMAS's `Lidar`): `out.len()` rays, the first at `start` rad from the
/// body's heading, each the distance to the nearest of `discs` (centre, radius) it meets in
/// front of it, or `range` (VMAS's `_cast_ray_to_sphere`).
pub(crate) fn ring(
    a: &Body,
    start: f64,
    range: f64,
    discs: impl Iterator<Item = ([f64; 2], f64)> + Clone,
    out: &mut [f64],
) {
    let n = out.len() as f64;
    for (k, d) in out.iter_mut().enumerate() {
        let th = start + std::f64::consts::TAU * k as f64 / n + a.rot;
        let dir = [th.cos(), th.sin()];
        *d = range;
        for (c, r) in discs.clone() {
            let u = [c[0] - a.pos[0], c[1] - a.pos[1]];
            let along = u[0] * dir[0] + u[1] * dir[1];
            let off2 = (u[0] * u[0] + u[1] * u[1]) - along * along;
            // In front, within its radius of the ray, and met within the range.
            if along > 0.0 && off2 < r * r {
                let hit = along - (r * r - off2).sqrt();
                if hit < *d {
                    *d = hit;
                }
            }
        }
    }
}

/// The distance between two points of the plane.
pub(crate) fn distance(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}
