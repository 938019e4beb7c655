//! `pose`: ground-truth pose and twist of one body, as a motion-capture system reports it.
//!
//! Descriptor: `body` (default 0), `position_noise` (m), `orientation_noise` (rad, a random
//! rotation of that standard deviation per axis), `velocity_noise` (m/s),
//! `angular_velocity_noise` (rad/s), `latency` (steps: the reading published at step N is the
//! state at step N - latency, or the first state before that many steps have passed),
//! `jitter` (steps: each frame's latency is `latency` plus a whole number of steps drawn
//! uniformly from 0 to `jitter`, never so much that a frame is older than the one before it),
//! `drop` (the probability that a due frame is lost: nothing is published that step),
//! `rate_divider`, `stagger`.

use std::collections::VecDeque;

use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use serde::Deserialize;
use ssx_sdk::{Ctx, Init, Rate, Sensor};

use crate::noise::{Noise, non_negative};
use crate::parse;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    #[serde(default)]
    body: u32,
    #[serde(default)]
    position_noise: f64,
    #[serde(default)]
    orientation_noise: f64,
    #[serde(default)]
    velocity_noise: f64,
    #[serde(default)]
    angular_velocity_noise: f64,
    #[serde(default)]
    latency: u32,
    #[serde(default)]
    jitter: u32,
    #[serde(default)]
    drop: f64,
    #[serde(default = "crate::one")]
    rate_divider: u32,
    #[serde(default)]
    stagger: bool,
}

pub(crate) struct Pose {
    d: Descriptor,
    rate: Rate,
    noise: Noise,
    /// The last `latency + jitter + 1` true states, oldest first.
    history: VecDeque<[f64; 13]>,
    /// With jitter: the age (steps) of the last frame published and the step it was published at.
    last_sent: Option<(u32, u64)>,
    description: crate::Description,
}

impl Sensor for Pose {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        let d: Descriptor = parse(descriptor)?;
        init.body_index("body", d.body)?;
        for (name, v) in [
            ("position_noise", d.position_noise),
            ("orientation_noise", d.orientation_noise),
            ("velocity_noise", d.velocity_noise),
            ("angular_velocity_noise", d.angular_velocity_noise),
        ] {
            non_negative(name, v)?;
            ssx_sdk::within(name, v, 0.0, ssx_sdk::limits::DISTANCE)?;
        }
        if d.latency > ssx_sdk::limits::LATENCY {
            return Err(format!(
                "invalid descriptor: 'latency' must be at most {} steps, got {}",
                ssx_sdk::limits::LATENCY,
                d.latency
            ));
        }
        if d.latency.saturating_add(d.jitter) > ssx_sdk::limits::LATENCY {
            return Err(format!(
                "invalid descriptor: 'latency' + 'jitter' must be at most {} steps, got {} + {}",
                ssx_sdk::limits::LATENCY,
                d.latency,
                d.jitter
            ));
        }
        if !(d.drop.is_finite() && (0.0..1.0).contains(&d.drop)) {
            return Err(format!(
                "invalid descriptor: 'drop' must be a probability in [0, 1), got {}",
                d.drop
            ));
        }
        let description = crate::Description::new(serde_json::json!({
            "kind": "pose",
            "body": d.body,
            "frame": "world",
            "latency": d.latency,
            "jitter": d.jitter,
            "drop": d.drop,
            "rate_divider": d.rate_divider,
        }));
        Ok(Pose {
            description,
            rate: crate::rate(d.rate_divider, d.stagger, init)?,
            noise: Noise::new(init.seed),
            history: VecDeque::with_capacity((d.latency + d.jitter) as usize + 1),
            last_sent: None,
            d,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        self.description.once(ctx)?;
        let s = ctx.body_state(ctx.artifact(), self.d.body)?;
        let mut now = [0.0; 13];
        now[..3].copy_from_slice(&s.position);
        now[3..7].copy_from_slice(&s.orientation);
        now[7..10].copy_from_slice(&s.linear_velocity);
        now[10..].copy_from_slice(&s.angular_velocity);
        if self.history.len() > (self.d.latency + self.d.jitter) as usize {
            self.history.pop_front();
        }
        self.history.push_back(now);
        if !self.rate.due() {
            return Ok(());
        }
        let n = &mut self.noise;
        if self.d.drop > 0.0 && n.uniform() < self.d.drop {
            return Ok(());
        }
        let mut age = self.d.latency;
        if self.d.jitter > 0 {
            age += n.up_to(self.d.jitter);
            let (_, step) = ctx.time()?;
            if let Some((last_age, at)) = self.last_sent {
                // Not older than the frame before it.
                let since = u32::try_from(step - at).unwrap_or(u32::MAX);
                age = age.min(last_age.saturating_add(since));
            }
            self.last_sent = Some((age, step));
        }
        let newest = self.history.len() - 1;
        let mut out = self.history[newest.saturating_sub(age as usize)];
        for (i, e) in n.gauss3(self.d.position_noise).into_iter().enumerate() {
            out[i] += e;
        }
        if self.d.orientation_noise > 0.0 {
            let [a, b, c] = n.gauss3(self.d.orientation_noise);
            let q =
                UnitQuaternion::from_quaternion(Quaternion::new(out[3], out[4], out[5], out[6]));
            let q = q * UnitQuaternion::from_scaled_axis(Vector3::new(a, b, c));
            out[3..7].copy_from_slice(&[q.w, q.i, q.j, q.k]);
        }
        for (i, e) in n.gauss3(self.d.velocity_noise).into_iter().enumerate() {
            out[7 + i] += e;
        }
        for (i, e) in n
            .gauss3(self.d.angular_velocity_noise)
            .into_iter()
            .enumerate()
        {
            out[10 + i] += e;
        }
        ctx.publish(&out)?;
        Ok(())
    }
}
