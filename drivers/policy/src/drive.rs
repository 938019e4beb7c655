//! How an agent moves on its action: the two drives the learning tasks' agents have
//! (`python/ssx/envs/vmas_parts.py`), with the same laws as the drivers that move them there,
//! so that a policy acts on the robot as it acted in training.

use serde::Deserialize;
use ssx_sdk::Ctx;

/// An agent's drive.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Drive {
    /// VMAS's holonomic agent (the ground library's `holonomic` driver): the action (ux, uy)
    /// within ±`u_range`, times `u_multiplier`, a force (N) or a velocity (m/s) in the plane.
    Holonomic(Holonomic),
    /// A differential drive (the ground library's `diffdrive` with a velocity command): the
    /// action (v, ω), the forward speed along the heading (m/s) within ±`max_speed` and the
    /// turn rate (rad/s) within ±`max_turn_rate`, set as the body's velocity.
    Diffdrive(Diffdrive),
}

/// Force or velocity.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A force on the body each step.
    #[default]
    Force,
    /// The body's velocity, set each step.
    Velocity,
}

/// [`Drive::Holonomic`]'s parameters.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Holonomic {
    #[serde(default)]
    pub mode: Mode,
    #[serde(default = "one")]
    pub u_range: f64,
    #[serde(default = "one")]
    pub u_multiplier: f64,
}

/// [`Drive::Diffdrive`]'s parameters.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Diffdrive {
    pub max_speed: f64,
    pub max_turn_rate: f64,
}

fn one() -> f64 {
    1.0
}

impl Drive {
    /// Its name, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Drive::Holonomic(_) => "holonomic",
            Drive::Diffdrive(_) => "diffdrive",
        }
    }

    /// The action's fields, as the model's metadata names them.
    pub fn fields(&self) -> &'static str {
        match self {
            Drive::Holonomic(_) => "ux,uy",
            Drive::Diffdrive(_) => "v,omega",
        }
    }

    /// Values an action.
    pub fn width(&self) -> usize {
        2
    }

    /// Refuses limits out of range.
    pub fn check(&self) -> Result<(), String> {
        let max = ssx_sdk::limits::DISTANCE;
        match self {
            Drive::Holonomic(h) => {
                ssx_sdk::within("drive.holonomic.u_range", h.u_range, 0.0, max)?;
                ssx_sdk::within("drive.holonomic.u_multiplier", h.u_multiplier, 0.0, max)?;
            }
            Drive::Diffdrive(d) => {
                ssx_sdk::within("drive.diffdrive.max_speed", d.max_speed, 0.0, max)?;
                ssx_sdk::within("drive.diffdrive.max_turn_rate", d.max_turn_rate, 0.0, max)?;
            }
        }
        Ok(())
    }

    /// `action` clipped to the drive's limits.
    pub fn clip(&self, action: [f64; 2]) -> [f64; 2] {
        let (a, b) = match self {
            Drive::Holonomic(h) => (h.u_range, h.u_range),
            Drive::Diffdrive(d) => (d.max_speed, d.max_turn_rate),
        };
        [action[0].clamp(-a, a), action[1].clamp(-b, b)]
    }

    /// Moves the artifact's first body on `action` (clipped) for this step.
    pub fn act(&self, ctx: &Ctx<'_>, action: [f64; 2]) -> Result<(), String> {
        match self {
            Drive::Holonomic(h) => {
                let k = h.u_multiplier;
                let out = [action[0] * k, action[1] * k, 0.0];
                match h.mode {
                    Mode::Force => ctx.add_force(0, out)?,
                    Mode::Velocity => ctx.set_velocity(0, out, [0.0; 3])?,
                }
            }
            Drive::Diffdrive(_) => {
                let me = ctx.artifact();
                let [w, _, _, z] = ctx.body_state(me, 0)?.orientation;
                // A rotation about z by θ: (w, z) = r (cos θ/2, sin θ/2), as the ground driver.
                let r2 = w * w + z * z;
                let (cos, sin) = if r2 > 0.0 {
                    ((w * w - z * z) / r2, 2.0 * w * z / r2)
                } else {
                    (1.0, 0.0)
                };
                ctx.set_velocity(
                    0,
                    [cos * action[0], sin * action[0], 0.0],
                    [0.0, 0.0, action[1]],
                )?;
            }
        }
        Ok(())
    }
}
