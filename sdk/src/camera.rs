//! The `camera` sensor's geometry and reading (`libssx_sensors.so`), for the sensor and for
//! whoever shows or bridges its images. One model, written once.
//!
//! The reading is `width × height` depths (m), row by row from the top-left pixel, then, with
//! colour, `width × height` colours, each `0xRRGGBB` as a number ([`pack`], [`unpack`]).
//! Pixel (u, v)'s centre is at (u, v) on the image (OpenCV's and ROS CameraInfo's convention).
//! The camera looks along its mount's x axis; the image's right is the mount's −y and its down
//! the mount's −z, so the optical frame (z ahead, x right, y down) is the mount turned by
//! [`OPTICAL_IN_MOUNT`].

use std::f64::consts::PI;

/// The horizontal field of view when a descriptor gives neither `fov` nor `fx` (rad).
pub const DEFAULT_FOV: f64 = PI / 3.0;

/// Largest focal length or principal point coordinate (pixels).
const MAX_PIXELS_AWAY: f64 = 1e6;

/// The optical frame's orientation in the mount frame, w x y z: its z along the mount's x, its
/// x along the mount's −y, its y along the mount's −z.
pub const OPTICAL_IN_MOUNT: [f64; 4] = [0.5, -0.5, 0.5, -0.5];

/// The optical frame's orientation (w x y z) in the body frame, for a camera mounted at `rpy`
/// (roll, pitch, yaw about the body's fixed x, y, z axes, in that order: R = Rz·Ry·Rx).
pub fn optical_orientation([roll, pitch, yaw]: [f64; 3]) -> [f64; 4] {
    let (sr, cr) = (roll / 2.0).sin_cos();
    let (sp, cp) = (pitch / 2.0).sin_cos();
    let (sy, cy) = (yaw / 2.0).sin_cos();
    let mount = [
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    ];
    hamilton(mount, OPTICAL_IN_MOUNT)
}

/// The quaternion product a·b (w x y z): b's rotation, then a's.
fn hamilton(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let ([aw, ax, ay, az], [bw, bx, by, bz]) = (a, b);
    [
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    ]
}

/// Pinhole intrinsics (pixels).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pinhole {
    /// Focal lengths.
    pub fx: f64,
    /// See `fx`.
    pub fy: f64,
    /// Principal point.
    pub cx: f64,
    /// See `cx`.
    pub cy: f64,
}

impl Pinhole {
    /// The intrinsics a descriptor gives: either `fov` (horizontal, rad, in (0, π); square
    /// pixels) or `fx` with optional `fy` (default `fx`), `cx` and `cy` (default the image
    /// centre, `(width − 1)/2`, `(height − 1)/2`); neither is [`DEFAULT_FOV`]. The error is a
    /// descriptor error naming the field.
    pub fn new(
        width: u32,
        height: u32,
        fov: Option<f64>,
        fx: Option<f64>,
        fy: Option<f64>,
        cx: Option<f64>,
        cy: Option<f64>,
    ) -> Result<Self, String> {
        let (w, h) = (f64::from(width), f64::from(height));
        let centre = |key: &str, v: Option<f64>, default: f64| match v {
            None => Ok(default),
            Some(v) => crate::within(key, v, -MAX_PIXELS_AWAY, MAX_PIXELS_AWAY),
        };
        let fx = match (fov, fx) {
            (Some(_), Some(_)) => {
                return Err(
                    "invalid descriptor: give either 'fov' or 'fx' (with 'fy', 'cx', 'cy'), not both"
                        .into(),
                );
            }
            (None, None) if fy.is_some() => {
                return Err("invalid descriptor: 'fy' needs 'fx'".into());
            }
            (fov, None) => {
                let fov = fov.unwrap_or(DEFAULT_FOV);
                if !(fov > 0.0 && fov < PI) {
                    return Err(format!(
                        "invalid descriptor: 'fov' (the horizontal field of view) must be in (0, π) rad, under 180°, got {}",
                        crate::number(fov)
                    ));
                }
                (w / 2.0) / (fov / 2.0).tan()
            }
            (None, Some(fx)) => focal("fx", fx)?,
        };
        let fy = match fy {
            Some(fy) => focal("fy", fy)?,
            None => fx,
        };
        Ok(Pinhole {
            fx,
            fy,
            cx: centre("cx", cx, (w - 1.0) / 2.0)?,
            cy: centre("cy", cy, (h - 1.0) / 2.0)?,
        })
    }
    /// Where pixel (u, v)'s ray meets the image plane at unit distance ahead: (right, down).
    pub fn ray(&self, u: usize, v: usize) -> (f64, f64) {
        (
            (u as f64 - self.cx) / self.fx,
            (v as f64 - self.cy) / self.fy,
        )
    }
    /// The camera matrix K, row-major (as CameraInfo and Foxglove's calibration carry it).
    pub fn k(&self) -> [f64; 9] {
        [self.fx, 0.0, self.cx, 0.0, self.fy, self.cy, 0.0, 0.0, 1.0]
    }
}

/// A focal length: above 0, at most a million pixels.
fn focal(key: &str, v: f64) -> Result<f64, String> {
    if v > 0.0 && v <= MAX_PIXELS_AWAY {
        Ok(v)
    } else {
        Err(format!(
            "invalid descriptor: '{key}' must be above 0 and at most {MAX_PIXELS_AWAY} pixels, got {}",
            crate::number(v)
        ))
    }
}

/// A colour as the reading carries it: `red × 65536 + green × 256 + blue`.
pub fn pack([r, g, b]: [u8; 3]) -> f64 {
    f64::from(u32::from(r) << 16 | u32::from(g) << 8 | u32::from(b))
}

/// A reading's colour number back to red, green, blue (0 for anything that is not one).
pub fn unpack(c: f64) -> [u8; 3] {
    let n = if (0.0..16_777_216.0).contains(&c) {
        c as u32
    } else {
        0
    };
    [(n >> 16) as u8, (n >> 8) as u8, n as u8]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::FRAC_PI_2;

    #[test]
    fn a_ninety_degree_camera_has_its_focal_length_at_half_the_width() {
        let p = Pinhole::new(33, 25, Some(PI / 2.0), None, None, None, None).unwrap();
        assert!((p.fx - 16.5).abs() < 1e-12 && p.fy == p.fx);
        assert_eq!((p.cx, p.cy), (16.0, 12.0));
        assert_eq!(p.ray(16, 12), (0.0, 0.0));
        let (x, y) = p.ray(0, 24);
        assert!((x + 16.0 / 16.5).abs() < 1e-12 && (y - 12.0 / 16.5).abs() < 1e-12);
    }

    #[test]
    fn colours_pack_and_unpack() {
        for c in [[0, 0, 0], [255, 255, 255], [12, 200, 7]] {
            assert_eq!(unpack(pack(c)), c);
        }
        assert_eq!(pack([1, 2, 3]), 66051.0);
        assert_eq!(unpack(f64::NAN), [0, 0, 0]);
    }

    /// `v` turned by `q` (w x y z).
    fn rotate(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
        let r = hamilton(
            hamilton(q, [0.0, v[0], v[1], v[2]]),
            [q[0], -q[1], -q[2], -q[3]],
        );
        [r[1], r[2], r[3]]
    }

    fn near(a: [f64; 3], b: [f64; 3]) -> bool {
        a.iter().zip(b).all(|(p, q)| (p - q).abs() < 1e-12)
    }

    #[test]
    fn the_optical_frame_looks_along_the_mount_x_with_x_right_and_y_down() {
        let q = OPTICAL_IN_MOUNT;
        assert!(near(rotate(q, [0.0, 0.0, 1.0]), [1.0, 0.0, 0.0]), "z ahead");
        assert!(
            near(rotate(q, [1.0, 0.0, 0.0]), [0.0, -1.0, 0.0]),
            "x right"
        );
        assert!(near(rotate(q, [0.0, 1.0, 0.0]), [0.0, 0.0, -1.0]), "y down");
        assert_eq!(optical_orientation([0.0; 3]), OPTICAL_IN_MOUNT);
    }

    #[test]
    fn a_mount_turned_and_tilted_looks_where_its_rpy_says() {
        // Pitched a quarter turn: looking straight down, the image's right still the body's −y.
        let q = optical_orientation([0.0, FRAC_PI_2, 0.0]);
        assert!(near(rotate(q, [0.0, 0.0, 1.0]), [0.0, 0.0, -1.0]));
        assert!(near(rotate(q, [1.0, 0.0, 0.0]), [0.0, -1.0, 0.0]));
        // Yawed a quarter turn: looking along the body's +y.
        let q = optical_orientation([0.0, 0.0, FRAC_PI_2]);
        assert!(near(rotate(q, [0.0, 0.0, 1.0]), [0.0, 1.0, 0.0]));
        // Tilted down by 0.15 rad and rolled: the axis ahead ignores the roll.
        let q = optical_orientation([0.3, 0.15, 0.0]);
        let ahead = rotate(q, [0.0, 0.0, 1.0]);
        assert!(
            near(ahead, [0.15f64.cos(), 0.0, -0.15f64.sin()]),
            "{ahead:?}"
        );
    }
}
