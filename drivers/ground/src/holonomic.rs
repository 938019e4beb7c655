//! The `holonomic` driver (`libssx_driver_ground.so`): VMAS's default agent, a body that moves
//! along x and y at once (Bettini et al. 2022, VMAS, sec. 4: "holonomic" dynamics; VMAS 1.5's
//! `vmas/simulator/dynamics/holonomic.py`). Its action u = (ux, uy), each in [-u_range,
//! u_range], times `u_multiplier`, is
//! - `"mode": "force"` (VMAS's default): a force (N) on the body, every step until the next
//!   action;
//! - `"mode": "velocity"`: the body's velocity (m/s), set every step.
//!
//! Actions come from outside on `artifacts/<name>/cmd` (`{"ux": .., "uy": ..}`) through a
//! messaging extension, as the diff-drive's commands do; an action beyond `u_range` is
//! dropped by the extension as malformed. Without one the body is left alone.
//!
//! Or the action is open loop, `"turning": {"rate": w, "after": t0}`: u = u_range (cos θ,
//! sin θ), θ = w (t − t0), from simulated time t0 on (nothing before): VMAS's flocking target,
//! whose scripted action turns 1/30 rad each 0.1 s step (`vmas/scenarios/flocking.py`,
//! `action_script_creator`). It takes no commands.

use serde::Deserialize;
use ssx_sdk::{Ctx, Driver, Init};

use crate::Remote;
use crate::outside::Outside;

/// What an action is.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A force (N).
    #[default]
    Force,
    /// A velocity (m/s).
    Velocity,
}

/// The descriptor.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HolonomicParams {
    /// Force or velocity.
    #[serde(default)]
    pub mode: Mode,
    /// The largest |u| an axis (VMAS's `u_range`, 1 by default).
    #[serde(default = "one")]
    pub u_range: f64,
    /// What u is multiplied by (VMAS's `u_multiplier`, 1 by default).
    #[serde(default = "one")]
    pub u_multiplier: f64,
    /// Where actions come from.
    #[serde(default)]
    pub commands: Option<Remote>,
    /// An open-loop action that turns at a constant rate, in place of commands.
    #[serde(default)]
    pub turning: Option<Turning>,
}

/// An open-loop action of magnitude `u_range` whose heading turns at `rate`.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turning {
    /// Turn rate of the heading (rad/s; negative: clockwise).
    pub rate: f64,
    /// The simulated time (s) it starts at, heading along +x.
    #[serde(default)]
    pub after: f64,
}

fn one() -> f64 {
    1.0
}

/// The `holonomic` driver.
pub struct Holonomic {
    p: HolonomicParams,
    name: String,
    outside: Outside,
}

impl Driver for Holonomic {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        init.root_body()?;
        let p: HolonomicParams =
            serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)?;
        let max = ssx_sdk::limits::DISTANCE;
        ssx_sdk::within("u_range", p.u_range, f64::MIN_POSITIVE, max)?;
        ssx_sdk::within("u_multiplier", p.u_multiplier, f64::MIN_POSITIVE, max)?;
        if p.commands
            .as_ref()
            .is_some_and(|r| !(r.timeout.is_finite() && r.timeout > 0.0))
        {
            return Err("invalid descriptor: commands.timeout must be a positive number".into());
        }
        if let Some(t) = p.turning {
            if p.commands.is_some() {
                return Err(
                    "invalid descriptor: 'turning' is an open-loop action and takes no 'commands'"
                        .into(),
                );
            }
            ssx_sdk::within("turning.rate", t.rate, -1e6, 1e6)?;
            ssx_sdk::within("turning.after", t.after, 0.0, 1e12)?;
        }
        Ok(Holonomic {
            p,
            name: init.artifact_name.clone(),
            outside: Outside::default(),
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let Some(u) = self.action(ctx)? else {
            return Ok(());
        };
        let k = self.p.u_multiplier;
        let out = [u[0] * k, u[1] * k, 0.0];
        match self.p.mode {
            Mode::Force => ctx.add_force(0, out)?,
            Mode::Velocity => ctx.set_velocity(0, out, [0.0; 3])?,
        }
        Ok(())
    }
}

impl Holonomic {
    /// The action in force, if any.
    fn action(&mut self, ctx: &Ctx<'_>) -> Result<Option<[f64; 2]>, String> {
        if let Some(t) = self.p.turning {
            let (time, _) = ctx.time()?;
            if time < t.after {
                return Ok(None);
            }
            let th = t.rate * (time - t.after);
            return Ok(Some([self.p.u_range * th.cos(), self.p.u_range * th.sin()]));
        }
        let Some(r) = self.p.commands.as_ref() else {
            return Ok(None);
        };
        let u = self.p.u_range;
        self.outside
            .read(ctx, r, &self.name, [("ux", u), ("uy", u)])
    }
}
