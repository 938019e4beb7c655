//! `proxy`: a kinematic body that follows a pose stream (a real robot under motion capture), so
//! simulated sensors see the real robot and its own sensors measure the simulated world.

use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use serde::Deserialize;
use ssx_sdk::bus::{Bus, Field, Subscription};
use ssx_sdk::{Ctx, Driver, Init};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    /// The messaging extension's name in the scene.
    #[serde(default = "d_ext")]
    extension: String,
    /// The pose key (default `artifacts/<name>/pose`, relative to the extension's prefix).
    #[serde(default)]
    key: Option<String>,
    /// Largest coordinate accepted (m); farther poses are dropped as malformed.
    #[serde(default = "d_bound")]
    bound: f64,
    /// Fastest the proxy moves to reach a new pose (m/s); a jump takes several steps.
    #[serde(default = "d_speed")]
    max_speed: f64,
    /// Fastest it turns (rad/s).
    #[serde(default = "d_turn")]
    max_turn_rate: f64,
}

fn d_ext() -> String {
    "zenoh".into()
}
fn d_bound() -> f64 {
    1000.0
}
fn d_speed() -> f64 {
    20.0
}
fn d_turn() -> f64 {
    20.0
}

/// The driver.
pub struct Proxy {
    d: Descriptor,
    key: String,
    dt: f64,
    link: Option<(Bus, u32)>,
    target: Option<(Vector3<f64>, Option<UnitQuaternion<f64>>)>,
}

impl Driver for Proxy {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        let d: Descriptor = serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)?;
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if ![d.bound, d.max_speed, d.max_turn_rate]
            .into_iter()
            .all(positive)
        {
            return Err(
                "invalid descriptor: bound, max_speed and max_turn_rate must be positive numbers"
                    .into(),
            );
        }
        let key = d
            .key
            .clone()
            .unwrap_or_else(|| format!("artifacts/{}/pose", init.artifact_name));
        Ok(Proxy {
            d,
            key,
            dt: init.timestep,
            link: None,
            target: None,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let (bus, sub) = match self.link {
            Some(l) => l,
            None => {
                let bus = Bus::find(ctx, &self.d.extension)?;
                let fields = [
                    Field {
                        name: "position",
                        len: 3,
                        max: self.d.bound,
                        required: true,
                    },
                    Field {
                        name: "orientation",
                        len: 4,
                        max: 1.5,
                        required: false,
                    },
                ];
                let sub = bus.subscribe(
                    ctx,
                    &Subscription {
                        key: &self.key,
                        fields: &fields,
                        queue: 0,
                        binary: false,
                    },
                )?;
                *self.link.insert((bus, sub))
            }
        };
        if let Some(m) = bus.read(ctx, sub)? {
            let v = m.values();
            let q = Quaternion::new(v[3], v[4], v[5], v[6]);
            // All zeros: no orientation given; anything not near unit length is ignored too.
            let q = (q.norm() > 0.5).then(|| UnitQuaternion::from_quaternion(q));
            self.target = Some((Vector3::new(v[0], v[1], v[2]), q));
        }
        let Some((p, q)) = self.target else {
            return Ok(());
        };
        let s = ctx.body_state(ctx.artifact(), 0)?;
        let now = Vector3::from(s.position);
        let mut v = (p - now) / self.dt;
        if v.norm() > self.d.max_speed {
            v *= self.d.max_speed / v.norm();
        }
        let mut w = Vector3::zeros();
        if let Some(q) = q {
            let [qw, qx, qy, qz] = s.orientation;
            let current = UnitQuaternion::from_quaternion(Quaternion::new(qw, qx, qy, qz));
            w = (q * current.inverse()).scaled_axis() / self.dt;
            if w.norm() > self.d.max_turn_rate {
                w *= self.d.max_turn_rate / w.norm();
            }
        }
        ctx.set_velocity(0, v.into(), w.into())?;
        Ok(())
    }
}
