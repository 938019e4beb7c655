//! ssx's own math: nalgebra in f64. Engines convert at their boundary.

pub use nalgebra;

/// A 3-vector in metres, newtons, radians per second, ... (SI throughout).
pub type Vec3 = nalgebra::Vector3<f64>;
/// A point in the world frame.
pub type Point3 = nalgebra::Point3<f64>;
/// A rigid transform: rotation then translation.
pub type Pose = nalgebra::Isometry3<f64>;
/// A unit quaternion.
pub type Rotation = nalgebra::UnitQuaternion<f64>;

/// A pose from a position and roll, pitch, yaw (radians, applied as yaw * pitch * roll).
pub fn pose_from_xyz_rpy(xyz: [f64; 3], rpy: [f64; 3]) -> Pose {
    Pose::from_parts(
        nalgebra::Translation3::new(xyz[0], xyz[1], xyz[2]),
        Rotation::from_euler_angles(rpy[0], rpy[1], rpy[2]),
    )
}

/// The rotation that turns the x axis onto `axis` (a joint frame's x axis is its joint's axis);
/// half a turn about z when `axis` points along -x, where the shortest arc is not unique.
pub fn x_onto(axis: &Vec3) -> Rotation {
    Rotation::rotation_between(&Vec3::x(), axis)
        .unwrap_or_else(|| Rotation::from_axis_angle(&Vec3::z_axis(), std::f64::consts::PI))
}
