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

/// The product `a·b` of two quaternions `[w, x, y, z]` (`b`'s rotation first, then `a`'s).
pub fn quat_mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [aw, ax, ay, az] = a;
    let [bw, bx, by, bz] = b;
    [
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    ]
}

/// The inverse of a unit quaternion.
pub fn quat_conj(q: [f64; 4]) -> [f64; 4] {
    [q[0], -q[1], -q[2], -q[3]]
}

/// `v` rotated by the unit quaternion `q`.
pub fn rotate(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
    let [_, x, y, z] = quat_mul(quat_mul(q, [0.0, v[0], v[1], v[2]]), quat_conj(q));
    [x, y, z]
}

/// How far the box `[min, max]` (in the frame of a body at `position`, `orientation`) reaches
/// along the unit world direction `dir`: its (least, greatest) projection.
pub fn box_span(
    position: [f64; 3],
    orientation: [f64; 4],
    min: [f64; 3],
    max: [f64; 3],
    dir: [f64; 3],
) -> (f64, f64) {
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let centre = [0, 1, 2].map(|i| (min[i] + max[i]) / 2.0);
    let mid = dot(rotate(orientation, centre), dir) + dot(position, dir);
    let axes = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    let half: f64 = (0..3)
        .map(|i| dot(rotate(orientation, axes[i]), dir).abs() * (max[i] - min[i]) / 2.0)
        .sum();
    (mid - half, mid + half)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quarter_turn_about_z_takes_x_to_y_and_spans_follow() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let q = [h, 0.0, 0.0, h];
        let v = rotate(q, [1.0, 0.0, 0.0]);
        assert!((v[0]).abs() < 1e-12 && (v[1] - 1.0).abs() < 1e-12);
        let back = rotate(quat_conj(q), v);
        assert!((back[0] - 1.0).abs() < 1e-12);
        // A 0.4 × 0.2 box turned a quarter: 0.2 wide along world x, 0.4 along y.
        let (lo, hi) = box_span(
            [1.0, 0.0, 0.0],
            q,
            [-0.2, -0.1, -0.1],
            [0.2, 0.1, 0.1],
            [1.0, 0.0, 0.0],
        );
        assert!(
            (lo - 0.9).abs() < 1e-12 && (hi - 1.1).abs() < 1e-12,
            "{lo} {hi}"
        );
        let (lo, hi) = box_span(
            [1.0, 0.0, 0.0],
            q,
            [-0.2, -0.1, -0.1],
            [0.2, 0.1, 0.1],
            [0.0, 1.0, 0.0],
        );
        assert!(
            (lo + 0.2).abs() < 1e-12 && (hi - 0.2).abs() < 1e-12,
            "{lo} {hi}"
        );
    }

    #[test]
    fn rings_are_evenly_spread_and_fans_include_both_ends() {
        assert_eq!(range_ray_yaw(2, 8, TAU, 0.0), TAU / 4.0);
        assert_eq!(range_ray_yaw(0, 3, 1.0, 0.5), 0.0);
        assert_eq!(range_ray_yaw(2, 3, 1.0, 0.5), 1.0);
        assert_eq!(range_ray_yaw(0, 1, 1.0, 0.25), 0.25);
    }
}
