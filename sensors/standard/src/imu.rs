//! `imu`: an accelerometer and a gyroscope at a body's origin, axes along the body's.
//!
//! Specific force is the body's acceleration minus gravity, in the body frame: an IMU at rest
//! reads (0, 0, +g). The acceleration is the mean over the sampling interval (the velocity change
//! over it divided by its length), as an integrating MEMS accelerometer reports it; the rate is
//! the angular velocity at the sample.
//!
//! Descriptor: `body` (default 0); noise as continuous-time densities, the usual datasheet and
//! Kalibr numbers: `accel_noise_density` (m/s²/√Hz), `gyro_noise_density` (rad/s/√Hz),
//! `accel_random_walk` (m/s³/√Hz), `gyro_random_walk` (rad/s²/√Hz); initial biases
//! `accel_bias` and `gyro_bias` (3-vectors, default 0); `rate_divider`, `stagger`. With a sample
//! interval Δt the white noise has σ = density/√Δt and the bias takes a step of σ = walk·√Δt per
//! sample. Noise is seeded per instance.

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
    accel_noise_density: f64,
    #[serde(default)]
    gyro_noise_density: f64,
    #[serde(default)]
    accel_random_walk: f64,
    #[serde(default)]
    gyro_random_walk: f64,
    #[serde(default)]
    accel_bias: [f64; 3],
    #[serde(default)]
    gyro_bias: [f64; 3],
    #[serde(default = "crate::one")]
    rate_divider: u32,
    #[serde(default)]
    stagger: bool,
}

pub(crate) struct Imu {
    d: Descriptor,
    rate: Rate,
    noise: Noise,
    /// Sample interval (s).
    dt: f64,
    accel_bias: Vector3<f64>,
    gyro_bias: Vector3<f64>,
    /// Velocity at the last sample (none before the first step).
    last_velocity: Option<Vector3<f64>>,
    description: crate::Description,
}

impl Sensor for Imu {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        let d: Descriptor = parse(descriptor)?;
        init.body_index("body", d.body)?;
        for (name, v) in [
            ("accel_noise_density", d.accel_noise_density),
            ("gyro_noise_density", d.gyro_noise_density),
            ("accel_random_walk", d.accel_random_walk),
            ("gyro_random_walk", d.gyro_random_walk),
        ] {
            non_negative(name, v)?;
        }
        if d.accel_bias
            .iter()
            .chain(&d.gyro_bias)
            .any(|b| !b.is_finite())
        {
            return Err("invalid descriptor: biases must be finite".into());
        }
        let rate = crate::rate(d.rate_divider, d.stagger, init)?;
        let description = crate::Description::new(serde_json::json!({
            "kind": "imu",
            "body": d.body,
            "frame": "body",
            "rate_divider": d.rate_divider,
        }));
        Ok(Imu {
            description,
            dt: init.timestep * f64::from(rate.divider()),
            rate,
            noise: Noise::new(init.seed),
            accel_bias: d.accel_bias.into(),
            gyro_bias: d.gyro_bias.into(),
            last_velocity: None,
            d,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        self.description.once(ctx)?;
        if !self.rate.due_idle(ctx) {
            return Ok(());
        }
        let s = ctx.body_state(ctx.artifact(), self.d.body)?;
        let v = Vector3::from(s.linear_velocity);
        let accel = self
            .last_velocity
            .map_or(Vector3::zeros(), |last| (v - last) / self.dt);
        self.last_velocity = Some(v);
        let [w, x, y, z] = s.orientation;
        let q = UnitQuaternion::from_quaternion(Quaternion::new(w, x, y, z));
        let g = Vector3::from(ctx.gravity()?);
        let specific = q.inverse_transform_vector(&(accel - g));
        let rate = q.inverse_transform_vector(&Vector3::from(s.angular_velocity));

        let n = &mut self.noise;
        let sq = self.dt.sqrt();
        self.accel_bias += Vector3::from(n.gauss3(self.d.accel_random_walk * sq));
        self.gyro_bias += Vector3::from(n.gauss3(self.d.gyro_random_walk * sq));
        let fa =
            specific + self.accel_bias + Vector3::from(n.gauss3(self.d.accel_noise_density / sq));
        let fw = rate + self.gyro_bias + Vector3::from(n.gauss3(self.d.gyro_noise_density / sq));
        ctx.publish(&[fa.x, fa.y, fa.z, fw.x, fw.y, fw.z])?;
        Ok(())
    }
}
