//! Ground-truth sensors as a plugin library.
//!
//! - `pose`: `[x, y, z, qw, qx, qy, qz, vx, vy, vz, wx, wy, wz]` of one body (descriptor `body`,
//!   default 0), world frame: a motion-capture system.
//! - `clock`: `[time_s, step]`.

use serde::Deserialize;
use ssx_sdk::{Ctx, Init, Sensor};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PoseDescriptor {
    #[serde(default)]
    body: u32,
}

struct Pose {
    body: u32,
    out: [f64; 13],
}

impl Sensor for Pose {
    fn create(descriptor: &str, _init: &Init) -> Result<Self, String> {
        let d: PoseDescriptor =
            serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)?;
        Ok(Pose {
            body: d.body,
            out: [0.0; 13],
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let s = ctx.body_state(ctx.artifact(), self.body)?;
        self.out[..3].copy_from_slice(&s.position);
        self.out[3..7].copy_from_slice(&s.orientation);
        self.out[7..10].copy_from_slice(&s.linear_velocity);
        self.out[10..].copy_from_slice(&s.angular_velocity);
        ctx.publish(&self.out)?;
        Ok(())
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Empty {}

struct Clock;

impl Sensor for Clock {
    fn create(descriptor: &str, _init: &Init) -> Result<Self, String> {
        let _: Empty = serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)?;
        Ok(Clock)
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let (t, n) = ctx.time()?;
        ctx.publish(&[t, n as f64])?;
        Ok(())
    }
}

ssx_sdk::export_plugins!(
    sensor "pose" "ground-truth pose and twist of one body (motion capture)" => Pose,
    sensor "clock" "simulated time and step" => Clock,
);
