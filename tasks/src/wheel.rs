//! `wheel`, after VMAS 1.5's `vmas/scenarios/wheel.py`: the team turns a bar pinned at its
//! centre at a desired speed.
//!
//! VMAS's rules and defaults, kept: 4 agents of radius 0.03, their forces 0.6 of their actions;
//! a bar of `line_length` = 2 m and `line_mass` = 30 kg that turns about its centre and does not
//! move (the scene's: a revolute joint to a fixed pivot), at a random heading from the seed; the
//! observation (position, velocity, bar centre − agent, each end − agent, the bar's heading
//! modulo π, |ω|, and ||ω| − `desired_velocity`|: 13 values); the reward, the same for every
//! agent, −||ω| − `desired_velocity`| with `desired_velocity` = 0.05 rad/s; no end but the
//! episode's length.

use crate::{Options, Outcome, Rules, World};

/// The wheel task's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Wheel {
    /// Agents (`n_agents`).
    pub agents: usize,
    /// The bar's length (m).
    pub line_length: f64,
    /// The bar's mass (kg): the scene's.
    pub line_mass: f64,
    /// The turn rate asked for (rad/s).
    pub desired_velocity: f64,
}

impl Wheel {
    /// Metrics, one value a world: the bar's turn rate |ω| and its error against the asked one.
    pub const METRICS: &'static [&'static str] = &["angular_speed", "error"];

    /// The task for `agents` with VMAS's keyword `options`.
    pub fn new(agents: usize, options: &[(String, f64)]) -> Result<Self, String> {
        let mut o = Options::new("wheel", options);
        let t = Wheel {
            agents: agents.max(1),
            line_length: o.number("line_length", 2.0, 1e-2, 100.0)?,
            line_mass: o.number("line_mass", 30.0, 1e-3, 1e6)?,
            desired_velocity: o.number("desired_velocity", 0.05, -1e3, 1e3)?,
        };
        o.done()?;
        Ok(t)
    }

    fn error(&self, w: &World<'_>) -> f64 {
        (w.objects[0].angvel.abs() - self.desired_velocity).abs()
    }
}

impl Rules for Wheel {
    fn agents(&self) -> usize {
        self.agents
    }

    /// The bar.
    fn objects(&self) -> usize {
        1
    }

    fn observation_width(&self) -> usize {
        13
    }

    fn memory(&self) -> usize {
        0
    }

    fn metric_names(&self) -> &'static [&'static str] {
        Self::METRICS
    }

    fn start(&self, _: &World<'_>, _: &mut [f64]) {}

    fn observe(&self, w: &World<'_>, _: &[f64], out: &mut [f64]) {
        let bar = &w.objects[0];
        let half = self.line_length / 2.0;
        // VMAS's ends are taken about the origin, where its bar's centre stays.
        let end = [half * bar.rot.cos(), half * bar.rot.sin()];
        let error = self.error(w);
        for (a, o) in w.agents.iter().zip(out.chunks_exact_mut(13)) {
            o.copy_from_slice(&[
                a.pos[0],
                a.pos[1],
                a.vel[0],
                a.vel[1],
                bar.pos[0] - a.pos[0],
                bar.pos[1] - a.pos[1],
                end[0] - a.pos[0],
                end[1] - a.pos[1],
                -end[0] - a.pos[0],
                -end[1] - a.pos[1],
                bar.rot.rem_euclid(std::f64::consts::PI),
                bar.angvel.abs(),
                error,
            ]);
        }
    }

    fn reward(&self, w: &World<'_>, _: &mut [f64], out: &mut [f64]) -> Outcome {
        out.fill(-self.error(w));
        Outcome { done: false }
    }

    fn measure(&self, w: &World<'_>, _: &[f64], out: &mut [f64]) {
        out[0] = w.objects[0].angvel.abs();
        out[1] = self.error(w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Body, Task};

    #[test]
    fn the_reward_and_observation_by_hand() {
        let t = Task::new("wheel", 1, &[]).unwrap();
        let agent = [Body {
            pos: [0.5, 0.5],
            ..Body::default()
        }];
        let bar = [Body {
            rot: -std::f64::consts::FRAC_PI_2,
            angvel: -0.2,
            ..Body::default()
        }];
        let w = World {
            agents: &agent,
            objects: &bar,
            lidar: &[],
        };
        let mut r = [0.0];
        assert!(!t.reward(&w, &mut [], &mut r).done);
        assert!((r[0] + 0.15).abs() < 1e-15, "{r:?}");
        let mut o = [0.0; 13];
        t.observe(&w, &[], &mut o);
        // Ends at (0, -1) and (0, 1); heading −π/2 is π/2 modulo π.
        let want = [0.5, 0.5, 0.0, 0.0, -0.5, -0.5, -0.5, -1.5, -0.5, 0.5];
        for (g, w) in o[..10].iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{o:?}");
        }
        assert!((o[10] - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert_eq!(&o[11..], &[0.2, 0.2 - 0.05]);
    }
}
