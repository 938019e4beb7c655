//! The `hover` driver as a plugin library: PD on the first body's position plus gravity
//! compensation for the artifact's whole mass, applied as a force at the centre of mass.
//!
//! Descriptor: `height` (m; the horizontal position held is the start position) or `waypoints`
//! ([[x, y, z], ...], `dwell` seconds each, cycling); `kp` (1/s², 16), `kd` (1/s, 8), `max_accel`
//! (m/s², 20).

use serde::Deserialize;
use ssx_sdk::{Ctx, Driver, Init, limits};

fn default_kp() -> f64 {
    16.0
}
fn default_kd() -> f64 {
    8.0
}
fn default_dwell() -> f64 {
    3.0
}
fn default_max_accel() -> f64 {
    20.0
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    #[serde(default)]
    height: Option<f64>,
    #[serde(default)]
    waypoints: Vec<[f64; 3]>,
    #[serde(default = "default_dwell")]
    dwell: f64,
    #[serde(default = "default_kp")]
    kp: f64,
    #[serde(default = "default_kd")]
    kd: f64,
    #[serde(default = "default_max_accel")]
    max_accel: f64,
}

struct Hover {
    d: Descriptor,
    home: Option<[f64; 3]>,
}

impl Driver for Hover {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        init.root_body()?;
        let d: Descriptor = serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)?;
        if d.height.is_some() != d.waypoints.is_empty() {
            return Err("give either 'height' or 'waypoints'".into());
        }
        for (name, v) in [
            ("kp", d.kp),
            ("kd", d.kd),
            ("dwell", d.dwell),
            ("max_accel", d.max_accel),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("'{name}' must be a positive number, got {v}"));
            }
            ssx_sdk::within(name, v, 0.0, limits::RATE)?;
        }
        let c = limits::COORDINATE;
        if let Some(h) = d.height {
            ssx_sdk::within("height", h, -c, c)?;
        }
        for w in d.waypoints.iter().flatten() {
            ssx_sdk::within("waypoints", *w, -c, c)?;
        }
        Ok(Hover { d, home: None })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let me = ctx.artifact();
        let bodies = ctx.body_count(me)?;
        if bodies == 0 {
            return Err("the artifact has no body to hover".into());
        }
        let s = ctx.body_state(me, 0)?;
        let (time, _) = ctx.time()?;
        let target = match self.d.height {
            Some(h) => {
                let home = *self.home.get_or_insert(s.position);
                [home[0], home[1], h]
            }
            None => self.d.waypoints[(time / self.d.dwell) as usize % self.d.waypoints.len()],
        };
        let mut accel = [0.0; 3];
        for k in 0..3 {
            accel[k] = (target[k] - s.position[k]) * self.d.kp - s.linear_velocity[k] * self.d.kd;
        }
        let norm = accel.iter().map(|a| a * a).sum::<f64>().sqrt();
        if norm > self.d.max_accel {
            accel.iter_mut().for_each(|a| *a *= self.d.max_accel / norm);
        }
        let mut mass = 0.0;
        for b in 0..bodies {
            mass += ctx.body_mass(me, b)?;
        }
        let g = ctx.gravity()?;
        ctx.add_force(
            0,
            [
                (accel[0] - g[0]) * mass,
                (accel[1] - g[1]) * mass,
                (accel[2] - g[2]) * mass,
            ],
        )?;
        Ok(())
    }
}

ssx_sdk::export_plugins!(driver "hover" "holds a height or flies waypoints by force (PD plus gravity compensation)" => Hover);
