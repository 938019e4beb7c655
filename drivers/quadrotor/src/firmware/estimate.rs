//! The state the firmware's controller reads, estimated from the artifact's sensors: the last
//! motion-capture sample's position, velocity and orientation, the orientation turned by the
//! gyro's rates between samples (the firmware fuses the two in a Kalman filter; this is the
//! simplest estimate that keeps the attitude loop's 500 Hz from a 100 Hz pose).

use nalgebra::{UnitQuaternion, Vector3};

use super::State;

/// The estimate; `None` until the first motion-capture sample.
#[derive(Clone, Copy, Debug, Default)]
pub struct Estimate {
    now: Option<(Vector3<f64>, Vector3<f64>, UnitQuaternion<f64>)>,
    /// The last gyro sample (rad/s, body frame).
    gyro: Vector3<f64>,
}

impl Estimate {
    /// A motion-capture sample: position and velocity (world), orientation.
    pub fn pose(&mut self, p: Vector3<f64>, v: Vector3<f64>, q: UnitQuaternion<f64>) {
        self.now = Some((p, v, q));
    }

    /// A gyro sample (rad/s, body frame) `dt` seconds after the last: the orientation turns by
    /// it, unless `fresh_pose` (a motion-capture sample came in the same step and is kept).
    pub fn gyro(&mut self, w: Vector3<f64>, dt: f64, fresh_pose: bool) {
        self.gyro = w;
        if let (Some((_, _, q)), false) = (&mut self.now, fresh_pose) {
            *q *= UnitQuaternion::from_scaled_axis(w * dt);
        }
    }

    /// The state in the controller's units, once there is one.
    pub fn state(&self) -> Option<State> {
        let (p, v, q) = self.now?;
        let (roll, pitch, yaw) = q.euler_angles();
        Some(State {
            position: p,
            velocity: v,
            attitude: [roll.to_degrees(), -pitch.to_degrees(), yaw.to_degrees()],
            gyro: self.gyro.map(f64::to_degrees),
            orientation: q,
        })
    }
}
