//! `contact`: whether, where and how hard one body touches something.
//!
//! Descriptor: `body` (default 0), `rate_divider`, `stagger`. Reading: `[n, |F|, then n ×
//! (artifact, body, px, py, pz, fx, fy, fz)]`: the number of bodies touched, the magnitude of
//! the total contact force on the body (N), and per touched body the mean contact point and the
//! force it exerts on this body (world frame). `n = 0` means no contact.

use serde::Deserialize;
use ssx_sdk::{Ctx, Init, Rate, Sensor};

use crate::parse;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    #[serde(default)]
    body: u32,
    #[serde(default = "crate::one")]
    rate_divider: u32,
    #[serde(default)]
    stagger: bool,
}

pub(crate) struct Contact {
    d: Descriptor,
    rate: Rate,
    touching: Vec<ssx_sdk::Contact>,
    out: Vec<f64>,
}

impl Sensor for Contact {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        let d: Descriptor = parse(descriptor)?;
        init.body_index("body", d.body)?;
        Ok(Contact {
            rate: crate::rate(d.rate_divider, d.stagger, init)?,
            touching: Vec::new(),
            out: Vec::new(),
            d,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        if !self.rate.due_idle(ctx) {
            return Ok(());
        }
        ctx.contacts(ctx.artifact(), self.d.body, &mut self.touching)?;
        self.out.clear();
        self.out
            .extend_from_slice(&[self.touching.len() as f64, 0.0]);
        let mut total = [0.0; 3];
        for c in &self.touching {
            self.out
                .extend_from_slice(&[f64::from(c.artifact), f64::from(c.body)]);
            self.out.extend_from_slice(&c.point);
            self.out.extend_from_slice(&c.force);
            for (t, f) in total.iter_mut().zip(c.force) {
                *t += f;
            }
        }
        self.out[1] = total.iter().map(|x| x * x).sum::<f64>().sqrt();
        ctx.publish(&self.out)?;
        Ok(())
    }
}
