//! Range sensors' rays as the view draws them: which sensors are drawn when a swarm has more rays
//! than a page can show, and one reading's rays as a line list in the world frame.

use foxglove::schemas::{Color, KeyValuePair, LinePrimitive, Point3, SceneEntity, line_primitive};

use crate::convert::stamp;
use crate::frame::Frame;
use crate::scene::{SensorInfo, SensorKind, WORLD_FRAME};

/// Whose rays are drawn. A swarm has more rays than anyone can see or a page can draw 30 times a
/// second (10,000 robots with 12 rays each: 120,000): past `max` rays, the range sensors are
/// thinned evenly, one in `stride` in scene order, the smallest stride that keeps to `max`, so
/// the same sensors are drawn every frame and the picture spans the whole swarm. Thinned
/// entities say so in their metadata (`ssx.rays_drawn`, `ssx.rays_total`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RayPlan {
    /// By sensor slot: whether its rays are drawn.
    pub drawn: Vec<bool>,
    /// Every range sensor's rays.
    pub total: usize,
    /// The drawn sensors' rays.
    pub shown: usize,
    /// One range sensor in `stride` is drawn.
    pub stride: usize,
}

impl RayPlan {
    pub fn new(sensors: &[SensorInfo], max: usize) -> Self {
        let rays: Vec<Option<usize>> = sensors
            .iter()
            .map(|s| match &s.kind {
                SensorKind::Range(g) => Some(g.directions.len()),
                _ => None,
            })
            .collect();
        let total: usize = rays.iter().flatten().sum();
        if max == 0 {
            return Self {
                drawn: vec![false; rays.len()],
                total,
                shown: 0,
                stride: usize::MAX,
            };
        }
        // Rays drawn with one range sensor in `stride`.
        let shown = |stride: usize| -> usize {
            rays.iter()
                .flatten()
                .enumerate()
                .filter(|(k, _)| k % stride == 0)
                .map(|(_, &n)| n)
                .sum()
        };
        let mut stride = total.div_ceil(max).max(1);
        let count = rays.iter().flatten().count();
        while stride < count.max(1) && shown(stride) > max {
            stride += 1;
        }
        let mut k = 0;
        let drawn = rays
            .iter()
            .map(|r| {
                r.is_some_and(|_| {
                    k += 1;
                    (k - 1) % stride == 0
                })
            })
            .collect();
        Self {
            drawn,
            total,
            shown: shown(stride),
            stride,
        }
    }

    /// What a drawn entity says about thinning: nothing when every ray is drawn.
    pub fn metadata(&self) -> Vec<KeyValuePair> {
        if self.stride == 1 {
            return Vec::new();
        }
        let pair = |key: &str, value: usize| KeyValuePair {
            key: key.into(),
            value: value.to_string(),
        };
        vec![
            pair("ssx.rays_drawn", self.shown),
            pair("ssx.rays_total", self.total),
        ]
    }
}

pub(crate) fn rotate(q: &[f64], v: [f64; 3]) -> [f64; 3] {
    let (x, y, z, w) = (q[3], q[4], q[5], q[6]);
    // v' = v + 2w(u × v) + 2u × (u × v), u = (x, y, z)
    let (ux, uy, uz) = (x, y, z);
    let c1 = [
        uy * v[2] - uz * v[1],
        uz * v[0] - ux * v[2],
        ux * v[1] - uy * v[0],
    ];
    let c2 = [
        uy * c1[2] - uz * c1[1],
        uz * c1[0] - ux * c1[2],
        ux * c1[1] - uy * c1[0],
    ];
    [
        v[0] + 2.0 * (w * c1[0] + c2[0]),
        v[1] + 2.0 * (w * c1[1] + c2[1]),
        v[2] + 2.0 * (w * c1[2] + c2[2]),
    ]
}

const HIT: Color = Color {
    r: 1.0,
    g: 0.35,
    b: 0.1,
    a: 1.0,
};
const MISS: Color = Color {
    r: 0.45,
    g: 0.75,
    b: 0.45,
    a: 0.5,
};

/// The rays of one range reading, in the world frame: origin to hit (orange) or to the maximum
/// range (faint green).
pub(crate) fn ray_entity(
    path: &str,
    g: &crate::scene::RangeGeometry,
    f: &Frame,
    values: &[f64],
    ns: u64,
) -> SceneEntity {
    let body = &f.poses[g.body as usize];
    let off = rotate(body, g.position);
    let origin = [body[0] + off[0], body[1] + off[1], body[2] + off[2]];
    let mut points = Vec::with_capacity(2 * values.len());
    let mut colors = Vec::with_capacity(2 * values.len());
    for (dir, &d) in g.directions.iter().zip(values) {
        let w = rotate(body, *dir);
        let d = if d.is_finite() { d } else { g.max_range };
        points.push(Point3 {
            x: origin[0],
            y: origin[1],
            z: origin[2],
        });
        points.push(Point3 {
            x: origin[0] + d * w[0],
            y: origin[1] + d * w[1],
            z: origin[2] + d * w[2],
        });
        let c = if d < g.max_range - 1e-9 { HIT } else { MISS };
        colors.push(c);
        colors.push(c);
    }
    SceneEntity {
        timestamp: stamp(ns),
        frame_id: WORLD_FRAME.into(),
        id: format!("rays/{path}"),
        lines: vec![LinePrimitive {
            r#type: line_primitive::Type::LineList as i32,
            thickness: 0.01,
            points,
            colors,
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sensors(rays: &[usize]) -> Vec<SensorInfo> {
        rays.iter()
            .enumerate()
            .map(|(i, &n)| SensorInfo {
                artifact: ssx_core::ArtifactId(i as u32),
                index: 0,
                path: format!("r{i}/range"),
                kind: if n == 0 {
                    SensorKind::Pose
                } else {
                    SensorKind::Range(crate::scene::RangeGeometry {
                        body: i as u32,
                        position: [0.0; 3],
                        directions: vec![[1.0, 0.0, 0.0]; n],
                        max_range: 2.0,
                    })
                },
            })
            .collect()
    }

    #[test]
    fn ten_thousand_twelve_ray_sensors_are_thinned_evenly_to_the_cap() {
        let plan = RayPlan::new(&sensors(&[12; 10_000]), 20_000);
        // 120,000 rays: one sensor in 7 (1429 sensors, 17,148 rays); one in 6 would draw 20,004.
        assert_eq!((plan.total, plan.stride, plan.shown), (120_000, 7, 17_148));
        assert_eq!(plan.drawn.iter().filter(|&&d| d).count(), 1429);
        assert!(plan.drawn[0] && plan.drawn[7] && !plan.drawn[1] && !plan.drawn[6]);
        let m = plan.metadata();
        assert_eq!(
            (m[0].key.as_str(), m[0].value.as_str()),
            ("ssx.rays_drawn", "17148")
        );
        assert_eq!(
            (m[1].key.as_str(), m[1].value.as_str()),
            ("ssx.rays_total", "120000")
        );
    }

    #[test]
    fn a_scene_under_the_cap_draws_every_ray_and_says_nothing() {
        // 1000 robots of 12 rays, a pose sensor between every two: all 12,000 rays drawn.
        let mut rays = vec![12; 1000];
        for k in (0..1000).step_by(2) {
            rays.insert(k + k / 2, 0);
        }
        let plan = RayPlan::new(&sensors(&rays), 20_000);
        assert_eq!((plan.total, plan.stride, plan.shown), (12_000, 1, 12_000));
        let drawn = plan.drawn.iter().filter(|&&d| d).count();
        assert_eq!(drawn, 1000);
        assert!(plan.metadata().is_empty());
        // Non-range sensors are never drawn, whatever the stride.
        let plan = RayPlan::new(&sensors(&rays), 6000);
        assert_eq!((plan.stride, plan.shown), (2, 6000));
        assert!(rays.iter().zip(&plan.drawn).all(|(&n, &d)| n > 0 || !d));
        // No rays at all.
        let plan = RayPlan::new(&sensors(&rays), 0);
        assert_eq!((plan.shown, plan.drawn.iter().any(|&d| d)), (0, false));
    }

    #[test]
    fn rotate_turns_x_into_y_by_a_quarter_turn_about_z() {
        let h = std::f64::consts::FRAC_PI_4;
        let q = [0.0, 0.0, 0.0, 0.0, 0.0, h.sin(), h.cos()];
        let r = rotate(&q, [1.0, 0.0, 0.0]);
        assert!((r[0]).abs() < 1e-12 && (r[1] - 1.0).abs() < 1e-12 && r[2].abs() < 1e-12);
    }
}
