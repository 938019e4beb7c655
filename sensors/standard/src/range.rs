//! `range`: a fan or a full ring of rays in the plane of its mount, like a sonar ring or a planar
//! laser scanner. Rays are cast in 3-D from the mount's height, so a ray mounted below a table
//! top passes under it and one mounted above it sees it (Stage's 2.5D).
//!
//! Descriptor: `count` (rays, ≥ 1), `fov` (rad; 2π, the default, is a full ring with rays
//! 2π/count apart; less is a fan from −fov/2 to +fov/2 about the mount's x axis, ends included),
//! `min_range`, `max_range` (m), `position` (the mount in the body frame, m), `yaw` (the mount's
//! rotation about the body z axis, rad), `noise` (σ in m, then clamped to the range limits),
//! `body` (default 0), `rate_divider`, `stagger`. A ray that hits nothing reads `max_range`; a hit
//! nearer than `min_range` reads `min_range`. The own artifact is never hit.

use std::f64::consts::TAU;
use std::sync::Arc;

use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use serde::Deserialize;
use ssx_sdk::intern::Interned;
use ssx_sdk::{Ctx, Init, Rate, Sensor};

use crate::noise::{Noise, non_negative};
use crate::{Description, parse};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    count: u32,
    #[serde(default = "full_ring")]
    fov: f64,
    #[serde(default)]
    min_range: f64,
    max_range: f64,
    #[serde(default)]
    position: [f64; 3],
    #[serde(default)]
    yaw: f64,
    #[serde(default)]
    noise: f64,
    #[serde(default)]
    body: u32,
    #[serde(default = "crate::one")]
    rate_divider: u32,
    #[serde(default)]
    stagger: bool,
}

fn full_ring() -> f64 {
    TAU
}

/// A step's ray directions in the world frame and their hits.
type Scratch = (Vec<[f64; 3]>, Vec<ssx_sdk::RayHit>);

thread_local! {
    /// Scratch for every range sensor stepped on this thread, grown to the largest ring once
    /// and kept (no allocation in a step), instead of two buffers an instance (0.9 KiB a 12-ray
    /// ring, held by every world of a batch). The slot is a pointer (the scratch on the heap):
    /// a plugin library must take little of the process's static TLS.
    static SCRATCH: std::cell::Cell<Option<Box<Scratch>>> = const { std::cell::Cell::new(None) };
}

/// The fans in use, by count, fov and yaw (their bits).
static FANS: Interned<(u32, u64, u64), [Vector3<f64>]> = Interned::new();

/// The ray directions of a fan of `count` rays over `fov`, turned by `yaw`: one copy for every
/// instance with the same three (a batch of worlds holds one range sensor a robot a world).
fn fan(count: u32, fov: f64, yaw: f64) -> Arc<[Vector3<f64>]> {
    FANS.get((count, fov.to_bits(), yaw.to_bits()), |_| {
        (0..count)
            .map(|i| {
                let a = ssx_sdk::geometry::range_ray_yaw(i, count, fov, yaw);
                Vector3::new(a.cos(), a.sin(), 0.0)
            })
            .collect()
    })
}

pub(crate) struct Range {
    d: Descriptor,
    rate: Rate,
    noise: Noise,
    /// Ray directions in the body frame, shared by every instance of the same fan.
    rays: Arc<[Vector3<f64>]>,
    out: Vec<f64>,
    description: Description,
}

use ssx_sdk::limits;

impl Sensor for Range {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        let d: Descriptor = parse(descriptor)?;
        init.body_index("body", d.body)?;
        crate::check_rays(d.count, d.fov)?;
        ssx_sdk::within("max_range", d.max_range, 0.0, limits::DISTANCE)?;
        ssx_sdk::within("noise", d.noise, 0.0, limits::DISTANCE)?;
        for p in d.position {
            ssx_sdk::within("position", p, -limits::DISTANCE, limits::DISTANCE)?;
        }
        non_negative("min_range", d.min_range)?;
        non_negative("noise", d.noise)?;
        if !(d.max_range.is_finite() && d.max_range > d.min_range) {
            return Err(format!(
                "invalid descriptor: 'max_range' must be finite and above 'min_range' ({}), got {}",
                d.min_range, d.max_range
            ));
        }
        if d.position.iter().any(|x| !x.is_finite()) || !d.yaw.is_finite() {
            return Err("invalid descriptor: 'position' and 'yaw' must be finite".into());
        }
        let n = d.count as usize;
        let rays = fan(d.count, d.fov, d.yaw);
        // Ray i at angle_min + i · angle_increment in the mount's frame (yaw not included).
        let angle = |i| ssx_sdk::geometry::range_ray_yaw(i, d.count, d.fov, 0.0);
        let increment = if d.count > 1 {
            angle(1) - angle(0)
        } else {
            0.0
        };
        let description = Description::new(serde_json::json!({
            "kind": "range",
            "body": d.body,
            "position": d.position,
            "yaw": d.yaw,
            "count": d.count,
            "angle_min": angle(0),
            "angle_increment": increment,
            "min_range": d.min_range,
            "max_range": d.max_range,
            "no_hit": "max_range",
            "rate_divider": d.rate_divider,
        }));
        Ok(Range {
            rate: crate::rate(d.rate_divider, d.stagger, init)?,
            noise: Noise::new(init.seed),
            rays,
            out: vec![d.max_range; n],
            d,
            description,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        self.description.once(ctx)?;
        if !self.rate.due_idle(ctx) {
            return Ok(());
        }
        let s = ctx.body_state(ctx.artifact(), self.d.body)?;
        let [w, x, y, z] = s.orientation;
        let q = UnitQuaternion::from_quaternion(Quaternion::new(w, x, y, z));
        let origin = Vector3::from(s.position) + q * Vector3::from(self.d.position);
        let max = self.d.max_range;
        let mut scratch = SCRATCH.take().unwrap_or_default();
        let (directions, hits) = &mut *scratch;
        directions.clear();
        directions.extend(self.rays.iter().map(|ray| <[f64; 3]>::from(q * ray)));
        hits.resize(directions.len(), ssx_sdk::RayHit::default());
        let cast = ctx.ray_cast_many(origin.into(), directions, max, true, hits);
        if cast.is_ok() {
            for (hit, out) in hits.iter().zip(&mut self.out) {
                let reading = if hit.hit != 0 {
                    hit.distance + self.noise.gauss(self.d.noise)
                } else {
                    max
                };
                *out = reading.clamp(self.d.min_range, max);
            }
        }
        SCRATCH.set(Some(scratch));
        cast?;
        ctx.publish(&self.out)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Instances of one fan share its directions; another count, field of view or yaw gets its
    /// own, and a fan no instance holds is made anew (the same directions).
    #[test]
    fn instances_of_one_fan_share_its_directions() {
        let a = fan(12, TAU, 0.0);
        let b = fan(12, TAU, 0.0);
        assert!(Arc::ptr_eq(&a, &b));
        for other in [fan(16, TAU, 0.0), fan(12, 3.0, 0.0), fan(12, TAU, 0.5)] {
            assert!(!Arc::ptr_eq(&a, &other));
        }
        assert_eq!(fan(16, TAU, 0.0).len(), 16);
        let yawed = fan(12, TAU, 0.5);
        let angle = ssx_sdk::geometry::range_ray_yaw(3, 12, TAU, 0.5);
        assert_eq!(yawed[3], Vector3::new(angle.cos(), angle.sin(), 0.0));
        let kept: Vec<Vector3<f64>> = a.to_vec();
        drop((a, b));
        assert_eq!(*fan(12, TAU, 0.0), *kept);
    }
}
