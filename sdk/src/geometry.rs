//! Sensor geometry that the host and viewers need to agree on with the sensors themselves.

use std::f64::consts::TAU;

/// The yaw (rad, about the mount's z axis, in the body frame) of ray `i` of a `range` sensor with
/// `count` rays over `fov` (2π: a full ring, rays 2π/count apart; less: a fan from −fov/2 to
/// +fov/2 about the mount's x axis, ends included) mounted at `yaw`.
pub fn range_ray_yaw(i: u32, count: u32, fov: f64, yaw: f64) -> f64 {
    let full = (fov - TAU).abs() < 1e-9;
    if full {
        yaw + TAU * f64::from(i) / f64::from(count)
    } else if count <= 1 {
        yaw
    } else {
        yaw - fov / 2.0 + fov * f64::from(i) / f64::from(count - 1)
    }
}

/// The yaw (rad) of an orientation quaternion `[w, x, y, z]`: its rotation about the world z
/// axis (for a planar body, its heading).
pub fn yaw(q: [f64; 4]) -> f64 {
    let [w, x, y, z] = q;
    (2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_are_evenly_spread_and_fans_include_both_ends() {
        assert_eq!(range_ray_yaw(2, 8, TAU, 0.0), TAU / 4.0);
        assert_eq!(range_ray_yaw(0, 3, 1.0, 0.5), 0.0);
        assert_eq!(range_ray_yaw(2, 3, 1.0, 0.5), 1.0);
        assert_eq!(range_ray_yaw(0, 1, 1.0, 0.25), 0.25);
    }
}
