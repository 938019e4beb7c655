//! `neighbours`: the relative position and velocity of every other artifact within a radius of
//! one of the own bodies: the sensor a formation controller uses (inter-robot sensing or
//! communication).
//!
//! Descriptor: `radius` (m), `line_of_sight` (default false: when true a neighbour counts only
//! if a ray from the own body reaches it first), `include_static` (default false: artifacts whose
//! first body is static or kinematic, such as the ground, walls and doors, are left out), `body`
//! (default 0), `rate_divider`, `stagger`. A neighbour's position and velocity are those of its
//! first body. Reading: `[n, then n × (artifact, dx, dy, dz, dvx, dvy, dvz)]`, world frame, in
//! artifact order.

use nalgebra::Vector3;
use serde::Deserialize;
use ssx_sdk::{Ctx, Init, Rate, Sensor};

use crate::parse;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    radius: f64,
    #[serde(default)]
    line_of_sight: bool,
    #[serde(default)]
    include_static: bool,
    #[serde(default)]
    body: u32,
    #[serde(default = "crate::one")]
    rate_divider: u32,
    #[serde(default)]
    stagger: bool,
}

pub(crate) struct Neighbours {
    d: Descriptor,
    rate: Rate,
    near: Vec<u32>,
    /// Per artifact id: whether its first body has mass (0 unknown, 1 yes, 2 no). Masses do
    /// not change while a simulation runs, so each is asked once.
    moves: Vec<u8>,
    out: Vec<f64>,
}

/// Whether artifact `a`'s first body is dynamic (has mass), asked once per artifact.
fn moves(known: &mut Vec<u8>, ctx: &Ctx<'_>, a: u32) -> Result<bool, String> {
    let i = a as usize;
    if i >= known.len() {
        known.resize(i + 1, 0);
    }
    if known[i] == 0 {
        known[i] = if ctx.body_mass(a, 0)? > 0.0 { 1 } else { 2 };
    }
    Ok(known[i] == 1)
}

impl Sensor for Neighbours {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        let d: Descriptor = parse(descriptor)?;
        init.body_index("body", d.body)?;
        if !(d.radius.is_finite() && d.radius > 0.0) {
            return Err(format!(
                "invalid descriptor: 'radius' must be a finite number > 0, got {}",
                d.radius
            ));
        }
        ssx_sdk::within("radius", d.radius, 0.0, ssx_sdk::limits::DISTANCE)?;
        Ok(Neighbours {
            rate: crate::rate(d.rate_divider, d.stagger, init)?,
            near: Vec::new(),
            moves: Vec::new(),
            out: Vec::new(),
            d,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        if !self.rate.due_idle(ctx) {
            return Ok(());
        }
        let me = ctx.body_state(ctx.artifact(), self.d.body)?;
        let p = Vector3::from(me.position);
        let v = Vector3::from(me.linear_velocity);
        ctx.neighbours(me.position, self.d.radius, &mut self.near)?;
        self.out.clear();
        self.out.push(0.0);
        for &a in &self.near {
            if !self.d.include_static && !moves(&mut self.moves, ctx, a)? {
                continue;
            }
            let other = ctx.body_state(a, 0)?;
            let dp = Vector3::from(other.position) - p;
            if self.d.line_of_sight && dp.norm() > 0.0 {
                let hit = ctx.ray_cast(me.position, dp.into(), dp.norm(), true)?;
                if hit.is_some_and(|h| h.artifact != a) {
                    continue;
                }
            }
            let dv = Vector3::from(other.linear_velocity) - v;
            self.out
                .extend_from_slice(&[f64::from(a), dp.x, dp.y, dp.z, dv.x, dv.y, dv.z]);
            self.out[0] += 1.0;
        }
        ctx.publish(&self.out)?;
        Ok(())
    }
}
