//! The `velocity` driver: sets a kinematic body's velocity every step.
//! Descriptor: `linear`, `angular` ([x, y, z], world frame, default zero), `body` (default 0).

use serde::Deserialize;
use ssx_sdk::{Ctx, Driver, Init};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Velocity {
    #[serde(default)]
    linear: [f64; 3],
    #[serde(default)]
    angular: [f64; 3],
    #[serde(default)]
    body: u32,
}

impl Driver for Velocity {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        let v: Velocity = serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)?;
        init.body_index("body", v.body)?;
        let max = ssx_sdk::limits::DISTANCE;
        for x in v.linear {
            ssx_sdk::within("linear", x, -max, max)?;
        }
        for x in v.angular {
            ssx_sdk::within("angular", x, -max, max)?;
        }
        Ok(v)
    }
    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        ctx.set_velocity(self.body, self.linear, self.angular)?;
        Ok(())
    }
}

ssx_sdk::export_plugins!(driver "velocity" "moves a kinematic body at a constant velocity" => Velocity);
