//! The outer (position) loop: from the motion-capture state and a reference to the roll, pitch,
//! yaw rate and collective thrust the inner loop gets. Floating point: it runs off-board, as in
//! SSX's experiment.

use nalgebra::{UnitQuaternion, Vector3};
use serde::Deserialize;

use crate::reference::Reference;

/// Outer-loop gains.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PositionGains {
    /// Position gain (1/s²).
    #[serde(default = "d_kp")]
    pub kp: f64,
    /// Velocity gain (1/s).
    #[serde(default = "d_kd")]
    pub kd: f64,
    /// Integral gain (1/s³), clamped.
    #[serde(default = "d_ki")]
    pub ki: f64,
    /// Yaw gain (1/s).
    #[serde(default = "d_kyaw")]
    pub kyaw: f64,
    /// The largest tilt asked of the inner loop (rad).
    #[serde(default = "d_tilt")]
    pub max_tilt: f64,
}

fn d_kp() -> f64 {
    4.0
}
fn d_kd() -> f64 {
    3.6
}
fn d_ki() -> f64 {
    0.1
}
fn d_kyaw() -> f64 {
    2.0
}
fn d_tilt() -> f64 {
    0.6
}

impl Default for PositionGains {
    fn default() -> Self {
        serde_json::from_str("{}").expect("defaults parse")
    }
}

/// What the outer loop asks of the inner one.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AttitudeCommand {
    /// Roll (rad).
    pub roll: f64,
    /// Pitch (rad).
    pub pitch: f64,
    /// Yaw rate (rad/s).
    pub yaw_rate: f64,
    /// Collective thrust (N).
    pub thrust: f64,
}

/// The outer loop and its integral state.
#[derive(Clone, Debug)]
pub struct PositionLoop {
    gains: PositionGains,
    integral: Vector3<f64>,
}

impl PositionLoop {
    /// A loop with these gains.
    pub fn new(gains: PositionGains) -> Self {
        PositionLoop {
            gains,
            integral: Vector3::zeros(),
        }
    }

    /// One update, `dt` seconds after the last, for a vehicle of this mass under this gravity.
    pub fn update(
        &mut self,
        r: &Reference,
        position: &Vector3<f64>,
        velocity: &Vector3<f64>,
        orientation: &UnitQuaternion<f64>,
        (mass, gravity): (f64, &Vector3<f64>),
        dt: f64,
    ) -> AttitudeCommand {
        let g = &self.gains;
        let e = r.position - position;
        self.integral = (self.integral + e * dt).map(|x| x.clamp(-1.0, 1.0));
        let a = r.acceleration + e * g.kp + (r.velocity - velocity) * g.kd + self.integral * g.ki;
        // The specific force to produce, world frame.
        let f = a - gravity;
        let (_, _, yaw) = orientation.euler_angles();
        let (s, c) = yaw.sin_cos();
        // In the yaw-aligned frame.
        let fx = c * f.x + s * f.y;
        let fy = -s * f.x + c * f.y;
        let fz = f.z.max(0.1 * gravity.norm());
        let pitch = fx.atan2(fz).clamp(-g.max_tilt, g.max_tilt);
        let roll = (-fy)
            .atan2((fx * fx + fz * fz).sqrt())
            .clamp(-g.max_tilt, g.max_tilt);
        let body_z = orientation * Vector3::z();
        let thrust = (mass * f.dot(&body_z)).max(0.0);
        let yaw_error = (r.yaw - yaw + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU)
            - std::f64::consts::PI;
        AttitudeCommand {
            roll,
            pitch,
            yaw_rate: r.yaw_rate + g.kyaw * yaw_error,
            thrust,
        }
    }
}
