//! `gripper`: what a gripper's paddles hold and what lies between them (Stage's gripper beams).
//!
//! The paddles are a box in the frame of the artifact's `body`: from `reach` to `reach + depth`
//! ahead (x), `opening` wide (y, centred), from `low` to `high` (z). A body lies between them when
//! the centre of its box does. Only free dynamic bodies count (not static or kinematic ones, not
//! one another artifact holds); of those, the one nearest the paddles' middle (the first in
//! artifact order on a tie). It fits when its mass is at most `max_mass` and its width across
//! the paddles at most `opening`. What the artifact holds is found within `lift` above the
//! paddles. Reading: [`ssx_sdk::gripper`] (9 numbers).

use serde::Deserialize;
use ssx_sdk::gripper::{Fit, LEN, Reading};
use ssx_sdk::{Ctx, Init, Pose, Rate, Sensor, limits, within};

use crate::{Description, parse};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    #[serde(default)]
    body: u32,
    #[serde(default = "d_reach")]
    reach: f64,
    #[serde(default = "d_depth")]
    depth: f64,
    #[serde(default = "d_opening")]
    opening: f64,
    #[serde(default = "d_low")]
    low: f64,
    #[serde(default = "d_high")]
    high: f64,
    #[serde(default = "d_mass")]
    max_mass: f64,
    #[serde(default = "d_lift")]
    lift: f64,
    #[serde(default = "crate::one")]
    rate_divider: u32,
    #[serde(default)]
    stagger: bool,
}

fn d_reach() -> f64 {
    0.25
}
fn d_depth() -> f64 {
    0.25
}
fn d_opening() -> f64 {
    0.3
}
fn d_low() -> f64 {
    -0.15
}
fn d_high() -> f64 {
    0.15
}
fn d_mass() -> f64 {
    3.0
}
fn d_lift() -> f64 {
    0.5
}

pub(crate) struct Gripper {
    d: Descriptor,
    rate: Rate,
    description: Description,
    near: Vec<u32>,
}

impl Sensor for Gripper {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        let d: Descriptor = parse(descriptor)?;
        init.body_index("body", d.body)?;
        within("reach", d.reach, -limits::DISTANCE, limits::DISTANCE)?;
        within("low", d.low, -limits::DISTANCE, limits::DISTANCE)?;
        within("high", d.high, d.low, limits::DISTANCE)?;
        for (key, v) in [("depth", d.depth), ("opening", d.opening)] {
            within(key, v, 1e-3, limits::DISTANCE)?;
        }
        within("max_mass", d.max_mass, 0.0, 1e6)?;
        within("lift", d.lift, 0.0, limits::DISTANCE)?;
        let description = Description::new(serde_json::json!({
            "kind": "gripper",
            "fields": ["held", "height", "held_artifact", "held_body", "between_artifact",
                       "between_body", "fit", "mass", "width"],
            "fit": ["nothing", "fits", "too heavy", "too wide"],
        }));
        Ok(Gripper {
            rate: crate::rate(d.rate_divider, d.stagger, init)?,
            d,
            description,
            near: Vec::new(),
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        if !self.rate.due_idle(ctx) {
            return Ok(());
        }
        self.description.once(ctx)?;
        let reading = self.sense(ctx)?;
        let values: [f64; LEN] = reading.to_values();
        ctx.publish(&values)?;
        Ok(())
    }
}

/// A body near the paddles, as the sensor sees it.
struct Seen {
    at: (u32, u32),
    pose: Pose,
    min: [f64; 3],
    max: [f64; 3],
}

impl Gripper {
    fn sense(&mut self, ctx: &Ctx<'_>) -> Result<Reading, String> {
        let d = &self.d;
        let me = ctx.artifact();
        let paddles = Pose::of(&ctx.body_state(me, d.body)?);
        let middle = [d.reach + d.depth / 2.0, 0.0, (d.low + d.high) / 2.0];
        // One sphere around the paddles and everything up to `lift` above them.
        let half = [
            d.depth / 2.0,
            d.opening / 2.0,
            (d.high - d.low + d.lift) / 2.0,
        ];
        let centre = paddles.transform([middle[0], 0.0, middle[2] + d.lift / 2.0]);
        let radius = half.iter().map(|h| h * h).sum::<f64>().sqrt();
        ctx.neighbours(centre, radius, &mut self.near)?;
        let mut reading = Reading {
            held: None,
            height: 0.0,
            between: None,
            fit: Fit::Nothing,
            mass: 0.0,
            width: 0.0,
        };
        let mut nearest = f64::INFINITY;
        let to_paddles = paddles.inverse();
        for &artifact in &self.near {
            for body in 0..ctx.body_count(artifact)? {
                let Some(seen) = seen(ctx, artifact, body)? else {
                    continue;
                };
                match ctx.attachment(artifact, body)? {
                    Some(h) if h.artifact == me && h.body == d.body => {
                        reading.held = Some(seen.at);
                        reading.height = ssx_sdk::geometry::box_span(
                            seen.pose.position,
                            seen.pose.orientation,
                            seen.min,
                            seen.max,
                            [0.0, 0.0, 1.0],
                        )
                        .0;
                        continue;
                    }
                    Some(_) => continue,
                    None => {}
                }
                let mass = ctx.body_mass(artifact, body)?;
                if mass <= 0.0 {
                    continue;
                }
                let mid = [0, 1, 2].map(|i| (seen.min[i] + seen.max[i]) / 2.0);
                let p = to_paddles.transform(seen.pose.transform(mid));
                let inside = (d.reach..=d.reach + d.depth).contains(&p[0])
                    && p[1].abs() <= d.opening / 2.0
                    && (d.low..=d.high).contains(&p[2]);
                let off = [0, 1, 2].map(|i| p[i] - middle[i]);
                let distance = off.iter().map(|x| x * x).sum::<f64>();
                if !inside || distance >= nearest {
                    continue;
                }
                nearest = distance;
                let across = ssx_sdk::geometry::rotate(paddles.orientation, [0.0, 1.0, 0.0]);
                let (lo, hi) = ssx_sdk::geometry::box_span(
                    seen.pose.position,
                    seen.pose.orientation,
                    seen.min,
                    seen.max,
                    across,
                );
                reading.between = Some(seen.at);
                reading.mass = mass;
                reading.width = hi - lo;
                reading.fit = if mass > d.max_mass {
                    Fit::TooHeavy
                } else if hi - lo > d.opening {
                    Fit::TooWide
                } else {
                    Fit::Fits
                };
            }
        }
        Ok(reading)
    }
}

/// A body's pose and box, `None` when it has no box (a plane).
fn seen(ctx: &Ctx<'_>, artifact: u32, body: u32) -> Result<Option<Seen>, String> {
    let Some(bounds) = ctx.body_bounds(artifact, body)? else {
        return Ok(None);
    };
    Ok(Some(Seen {
        at: (artifact, body),
        pose: Pose::of(&ctx.body_state(artifact, body)?),
        min: bounds.min,
        max: bounds.max,
    }))
}
