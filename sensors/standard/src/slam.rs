//! `slam`: a planar range scanner whose scans build the robot's own occupancy grid in the
//! `explore` extension (MAES's simulated SLAM map). Each sampling step it casts its rays like
//! `range`, estimates its pose as the true pose plus Gaussian noise (`pose_noise`: σ of x and y
//! in m, σ of yaw in rad), and sends both poses and the distances to the extension, which marks
//! the true-pose rays as explored and takes the estimated-pose rays into the robot's map.
//!
//! Descriptor: `count`, `fov`, `max_range`, `position`, `noise`, `rate_divider`, `stagger` as for
//! `range`; `pose_noise` ([σxy, σyaw], default [0, 0]); `extension` (default `explore`);
//! `map_only` (an artifact name, usually `map`: rays stopped by anything else, such as other
//! robots, are sent as free up to the stop and leave no obstacle in the map). It
//! publishes the estimated pose `[x, y, yaw]` of its last scan.

use std::f64::consts::TAU;

use serde::Deserialize;
use ssx_sdk::explore::{Explore, Scan};
use ssx_sdk::{Ctx, Init, Rate, Sensor, limits};

use crate::noise::{Noise, non_negative};
use crate::parse;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    count: u32,
    #[serde(default = "full_ring")]
    fov: f64,
    max_range: f64,
    #[serde(default)]
    position: [f64; 3],
    #[serde(default)]
    noise: f64,
    #[serde(default)]
    pose_noise: [f64; 2],
    #[serde(default = "crate::one")]
    rate_divider: u32,
    #[serde(default)]
    stagger: bool,
    #[serde(default = "d_extension")]
    extension: String,
    /// Map only what this artifact's rays hit (the scene's `map`); rays stopped by anything else
    /// count as free up to it.
    #[serde(default)]
    map_only: Option<String>,
}

fn full_ring() -> f64 {
    TAU
}
fn d_extension() -> String {
    "explore".into()
}

pub(crate) struct Slam {
    d: Descriptor,
    rate: Rate,
    noise: Noise,
    explore: Option<Explore>,
    walls: Option<u32>,
    scan: Scan,
    scratch: Vec<u8>,
}

impl Sensor for Slam {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        let d: Descriptor = parse(descriptor)?;
        init.root_body()?;
        crate::check_rays(d.count, d.fov)?;
        if !(d.max_range.is_finite() && d.max_range > 0.0 && d.max_range <= limits::DISTANCE) {
            return Err(format!(
                "invalid descriptor: 'max_range' must be above 0 and at most {}, got {}",
                limits::DISTANCE,
                d.max_range
            ));
        }
        non_negative("noise", d.noise)?;
        non_negative("pose_noise", d.pose_noise[0])?;
        non_negative("pose_noise", d.pose_noise[1])?;
        for p in d.position {
            ssx_sdk::within("position", p, -limits::DISTANCE, limits::DISTANCE)?;
        }
        let rays = (0..d.count)
            .map(|i| {
                [
                    ssx_sdk::geometry::range_ray_yaw(i, d.count, d.fov, 0.0),
                    0.0,
                ]
            })
            .collect();
        Ok(Slam {
            rate: crate::rate(d.rate_divider, d.stagger, init)?,
            noise: Noise::new(init.seed),
            explore: None,
            walls: None,
            scan: Scan {
                artifact: init.artifact,
                mount: [d.position[0], d.position[1]],
                max_range: d.max_range,
                rays,
                ..Scan::default()
            },
            scratch: Vec::new(),
            d,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        if !self.rate.due_idle(ctx) {
            return Ok(());
        }
        let explore = match self.explore {
            Some(e) => e,
            None => {
                if let Some(name) = &self.d.map_only {
                    self.walls = Some(ctx.artifact_by_name(name).map_err(|e| {
                        format!("'map_only' names '{name}', which is not an artifact: {e}")
                    })?);
                }
                *self.explore.insert(Explore::find(ctx, &self.d.extension)?)
            }
        };
        let s = ctx.body_state(ctx.artifact(), 0)?;
        let yaw = ssx_sdk::geometry::yaw(s.orientation);
        let (sn, cs) = yaw.sin_cos();
        let [mx, my, mz] = self.d.position;
        let origin = [
            s.position[0] + cs * mx - sn * my,
            s.position[1] + sn * mx + cs * my,
            s.position[2] + mz,
        ];
        let max = self.d.max_range;
        for ray in &mut self.scan.rays {
            let a = yaw + ray[0];
            let hit = ctx.ray_cast(origin, [a.cos(), a.sin(), 0.0], max, true)?;
            ray[1] = match hit {
                Some(h) => {
                    let d = (h.distance + self.noise.gauss(self.d.noise)).clamp(0.0, max);
                    // Other robots stop the ray but are not mapped.
                    if self.walls.is_none_or(|w| w == h.artifact) {
                        d
                    } else {
                        -d
                    }
                }
                None => max,
            };
        }
        let [sxy, syaw] = self.d.pose_noise;
        self.scan.truth = [s.position[0], s.position[1], yaw];
        self.scan.estimate = [
            s.position[0] + self.noise.gauss(sxy),
            s.position[1] + self.noise.gauss(sxy),
            yaw + self.noise.gauss(syaw),
        ];
        explore.scan(ctx, &self.scan, &mut self.scratch)?;
        ctx.publish(&self.scan.estimate)?;
        Ok(())
    }
}
