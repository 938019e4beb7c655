//! Where the quadrotor should be at one instant: what every trajectory (waypoints, figure-eight,
//! polynomial) and the formation and teleop modes hand the position controller.

use nalgebra::Vector3;

/// A reference at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reference {
    /// Position (m).
    pub position: Vector3<f64>,
    /// Velocity (m/s).
    pub velocity: Vector3<f64>,
    /// Acceleration (m/s²).
    pub acceleration: Vector3<f64>,
    /// Jerk (m/s³): what the body rates a trajectory asks for follow from (Mellinger's
    /// controller feeds them forward).
    pub jerk: Vector3<f64>,
    /// Yaw (rad).
    pub yaw: f64,
    /// Yaw rate (rad/s).
    pub yaw_rate: f64,
}

impl Reference {
    /// Holding still at a point.
    pub fn hold(position: Vector3<f64>, yaw: f64) -> Self {
        Reference {
            position,
            velocity: Vector3::zeros(),
            acceleration: Vector3::zeros(),
            jerk: Vector3::zeros(),
            yaw,
            yaw_rate: 0.0,
        }
    }
}
