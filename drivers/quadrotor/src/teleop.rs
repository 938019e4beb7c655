//! `teleop`: a group of quadrotors driven by a haptic handle over a messaging extension
//! (SwarmSimX sec. 3, the first hardware-in-the-loop use).
//!
//! Every member subscribes to the handle (position, optional velocity). The handle's offset from
//! its centre, times a gain, is the group's velocity reference; each member integrates it into
//! its own position reference (so the group keeps its shape) and flies it with the same cascaded
//! controller as `quadrotor`. The leader (one member) also computes the force the operator
//! feels and publishes it every step: a damping term on the group's tracking error (the mean
//! velocity lagging the reference pushes the handle back) plus a repulsion from obstacles
//! within `safe_distance` of any member, found by horizontal ray casts. Without a handle
//! message for `timeout` seconds the reference falls to zero and the group hovers.

use std::io::Write;

use nalgebra::Vector3;
use serde::Deserialize;
use ssx_sdk::bus::{Bus, Field, Subscription};
use ssx_sdk::{Ctx, Driver, Init};

use crate::reference::Reference;
use crate::{Flight, FlightParams, apply};

/// The coupling's settings.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeleopParams {
    /// The messaging extension's name in the scene.
    #[serde(default = "d_ext")]
    pub extension: String,
    /// Key of the handle stream: `{"position": [x, y, z], "velocity": [vx, vy, vz]}` (m, m/s).
    #[serde(default = "d_handle")]
    pub handle_key: String,
    /// Key the leader publishes the force feedback on.
    #[serde(default = "d_feedback")]
    pub feedback_key: String,
    /// This member publishes the feedback.
    #[serde(default)]
    pub leader: bool,
    /// Name prefix of the group's members (the feedback averages over them).
    pub group: String,
    /// Group speed per handle offset ((m/s)/m).
    #[serde(default = "d_gain")]
    pub gain: f64,
    /// Handle offsets below this are zero (m).
    #[serde(default = "d_deadband")]
    pub deadband: f64,
    /// Largest handle coordinate accepted (m); beyond it a message is dropped as malformed.
    #[serde(default = "d_workspace")]
    pub workspace: f64,
    /// Fastest group speed (m/s).
    #[serde(default = "d_max_speed")]
    pub max_speed: f64,
    /// Lowest and highest reference altitude (m).
    #[serde(default = "d_altitude")]
    pub altitude: [f64; 2],
    /// Height the reference starts at (m), clamped to `altitude`.
    #[serde(default = "d_takeoff")]
    pub takeoff: f64,
    /// Seconds without a handle message before the reference falls to zero.
    #[serde(default = "d_timeout")]
    pub timeout: f64,
    /// Feedback damping (N per m/s of tracking error).
    #[serde(default = "d_k_v")]
    pub k_v: f64,
    /// Feedback repulsion at contact (N), falling linearly to 0 at `safe_distance`.
    #[serde(default = "d_k_o")]
    pub k_o: f64,
    /// Obstacle distance at which repulsion starts (m).
    #[serde(default = "d_safe")]
    pub safe_distance: f64,
    /// Rays start this far from a member's centre (clear of its own frame) (m).
    #[serde(default = "d_ray_offset")]
    pub ray_offset: f64,
    /// Largest feedback force (N).
    #[serde(default = "d_max_force")]
    pub max_force: f64,
}

fn d_ext() -> String {
    "zenoh".into()
}
fn d_handle() -> String {
    "teleop/handle".into()
}
fn d_feedback() -> String {
    "teleop/force".into()
}
fn d_gain() -> f64 {
    10.0
}
fn d_deadband() -> f64 {
    0.005
}
fn d_workspace() -> f64 {
    0.5
}
fn d_max_speed() -> f64 {
    1.5
}
fn d_altitude() -> [f64; 2] {
    [0.5, 3.0]
}
fn d_takeoff() -> f64 {
    1.0
}
fn d_timeout() -> f64 {
    0.1
}
fn d_k_v() -> f64 {
    2.0
}
fn d_k_o() -> f64 {
    3.0
}
fn d_safe() -> f64 {
    1.0
}
fn d_ray_offset() -> f64 {
    0.25
}
fn d_max_force() -> f64 {
    5.0
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    teleop: TeleopParams,
    #[serde(default)]
    flight: FlightParams,
}

/// The group velocity reference for a handle offset: gain times the offset beyond the deadband,
/// saturated at `max_speed`.
pub fn velocity_reference(p: &TeleopParams, handle: &Vector3<f64>) -> Vector3<f64> {
    let n = handle.norm();
    if n <= p.deadband {
        return Vector3::zeros();
    }
    let mut v = handle * ((n - p.deadband) / n) * p.gain;
    if v.norm() > p.max_speed {
        v *= p.max_speed / v.norm();
    }
    v
}

/// The force the operator feels: `k_v` times (mean velocity − reference) plus, for every ray
/// closer than `safe_distance` (its direction and distance), a push away from the obstacle of
/// `k_o (safe − d) / safe`, saturated at `max_force`.
pub fn feedback(
    p: &TeleopParams,
    v_ref: &Vector3<f64>,
    v_mean: &Vector3<f64>,
    hits: impl Iterator<Item = (Vector3<f64>, f64)>,
) -> Vector3<f64> {
    let mut f = (v_mean - v_ref) * p.k_v;
    for (dir, d) in hits {
        if d < p.safe_distance {
            f -= dir * (p.k_o * (p.safe_distance - d) / p.safe_distance);
        }
    }
    if f.norm() > p.max_force {
        f *= p.max_force / f.norm();
    }
    f
}

/// Horizontal ray directions for the obstacle scan.
const RAYS: usize = 8;

struct Link {
    bus: Bus,
    handle: u32,
    /// The leader's feedback key and the group's artifacts.
    feedback: Option<(u32, Vec<u32>)>,
}

/// The driver.
pub struct Teleop {
    params: TeleopParams,
    flight: Flight,
    link: Option<Link>,
    handle: Vector3<f64>,
    /// Simulated time of the last new handle message, and its sequence number.
    last_handle: Option<f64>,
    seq: u64,
    target: Option<Vector3<f64>>,
    payload: Vec<u8>,
    scratch: Vec<u8>,
}

impl Driver for Teleop {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        init.root_body()?;
        let d: Descriptor = crate::parse_descriptor(descriptor, init)?;
        let t = &d.teleop;
        let positive = [
            t.gain,
            t.workspace,
            t.max_speed,
            t.timeout,
            t.safe_distance,
            t.max_force,
        ];
        let non_negative = [t.deadband, t.k_v, t.k_o, t.ray_offset];
        let ok = positive.iter().all(|x| x.is_finite() && *x > 0.0)
            && non_negative.iter().all(|x| x.is_finite() && *x >= 0.0)
            && t.altitude[0].is_finite()
            && t.altitude[1].is_finite()
            && t.altitude[0] <= t.altitude[1]
            && t.takeoff.is_finite();
        if !ok {
            return Err("invalid descriptor: teleop gains, limits and distances must be finite and positive, altitude [low, high]".into());
        }
        Ok(Teleop {
            flight: Flight::new(d.flight, init.timestep)?,
            params: d.teleop,
            link: None,
            handle: Vector3::zeros(),
            last_handle: None,
            seq: 0,
            target: None,
            payload: Vec::with_capacity(512),
            scratch: Vec::with_capacity(512),
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        if self.link.is_none() {
            self.link = Some(self.connect(ctx)?);
        }
        let link = self.link.as_ref().expect("connected");
        let (time, step) = ctx.time()?;
        // Only the newest handle sample matters: the mailbox keeps it, for every member.
        if let Some(m) = link.bus.read(ctx, link.handle)?
            && m.seq != self.seq
        {
            let v = m.values();
            self.seq = m.seq;
            self.handle = Vector3::new(v[0], v[1], v[2]);
            self.last_handle = Some(time);
        }
        let p = &self.params;
        let live = self.last_handle.is_some_and(|t| time - t <= p.timeout);
        let v_ref = if live {
            velocity_reference(p, &self.handle)
        } else {
            Vector3::zeros()
        };
        let inputs = self.flight.read(ctx)?;
        let target = &mut self.target;
        let wrench = self.flight.step(&inputs, |pos, _, _, dt| {
            let t = target.get_or_insert(Vector3::new(pos.x, pos.y, p.takeoff));
            *t += v_ref * dt;
            t.z = t.z.clamp(p.altitude[0], p.altitude[1]);
            // Stay on a horizontal leash: a blocked member does not wind up a far-away reference.
            let mut lead = *t - pos;
            lead.z = 0.0;
            if lead.norm() > LEASH {
                *t -= lead * (1.0 - LEASH / lead.norm());
            }
            let mut r = Reference::hold(*t, 0.0);
            r.velocity = v_ref;
            r
        })?;
        apply(ctx, wrench)?;

        let Some((key, group)) = &link.feedback else {
            return Ok(());
        };
        let mut v_mean = Vector3::zeros();
        let mut hits = [(Vector3::zeros(), f64::INFINITY); 64];
        let mut n_hits = 0;
        let mut nearest = f64::INFINITY;
        for &a in group {
            let s = ctx.body_state(a, 0)?;
            v_mean += Vector3::from(s.linear_velocity);
            let centre = Vector3::from(s.position);
            for i in 0..RAYS {
                let angle = std::f64::consts::TAU * i as f64 / RAYS as f64;
                let dir = Vector3::new(angle.cos(), angle.sin(), 0.0);
                let origin = centre + dir * p.ray_offset;
                let hit = ctx.ray_cast(origin.into(), dir.into(), p.safe_distance, false)?;
                if let Some(hit) = hit {
                    nearest = nearest.min(hit.distance + p.ray_offset);
                    if n_hits < hits.len() {
                        hits[n_hits] = (dir, hit.distance);
                        n_hits += 1;
                    }
                }
            }
        }
        v_mean /= group.len().max(1) as f64;
        let f = feedback(p, &v_ref, &v_mean, hits[..n_hits].iter().copied());
        self.payload.clear();
        let b = &mut self.payload;
        let _ = write!(
            b,
            "{{\"step\":{step},\"time\":{time:?},\"force\":[{:?},{:?},{:?}],\"velocity_ref\":[{:?},{:?},{:?}],\"velocity_mean\":[{:?},{:?},{:?}],\"handle_live\":{live},\"nearest\":",
            f.x, f.y, f.z, v_ref.x, v_ref.y, v_ref.z, v_mean.x, v_mean.y, v_mean.z
        );
        if nearest.is_finite() {
            let _ = write!(b, "{nearest:?}}}");
        } else {
            b.extend_from_slice(b"null}");
        }
        link.bus
            .publish(ctx, *key, &self.payload, &mut self.scratch)
    }
}

impl Teleop {
    fn connect(&self, ctx: &Ctx<'_>) -> Result<Link, String> {
        let p = &self.params;
        let bus = Bus::find(ctx, &p.extension)?;
        let fields = [
            Field {
                name: "position",
                len: 3,
                max: p.workspace,
                required: true,
            },
            Field {
                name: "velocity",
                len: 3,
                max: 100.0,
                required: false,
            },
        ];
        let handle = bus.subscribe(
            ctx,
            &Subscription {
                key: &p.handle_key,
                fields: &fields,
                queue: 0,
                binary: false,
            },
        )?;
        let feedback = if p.leader {
            let key = bus.advertise(ctx, &p.feedback_key, false)?;
            let mut group = Vec::new();
            for a in 0..ctx.artifact_count()? {
                if ctx.artifact_name(a)?.starts_with(&p.group) {
                    group.push(a);
                }
            }
            if group.is_empty() {
                return Err(format!(
                    "no artifact's name starts with group '{}'",
                    p.group
                ));
            }
            Some((key, group))
        } else {
            None
        };
        Ok(Link {
            bus,
            handle,
            feedback,
        })
    }
}

const LEASH: f64 = 0.5;

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> TeleopParams {
        serde_json::from_str(r#"{"group": "quad"}"#).unwrap()
    }

    #[test]
    fn the_handle_maps_to_a_saturated_velocity_past_a_deadband() {
        let p = params();
        assert_eq!(
            velocity_reference(&p, &Vector3::new(0.004, 0.0, 0.0)),
            Vector3::zeros()
        );
        let v = velocity_reference(&p, &Vector3::new(0.055, 0.0, 0.0));
        assert!((v - Vector3::new(0.5, 0.0, 0.0)).norm() < 1e-12, "{v}");
        let v = velocity_reference(&p, &Vector3::new(0.0, -0.4, 0.0));
        assert!((v - Vector3::new(0.0, -1.5, 0.0)).norm() < 1e-12, "{v}");
    }

    #[test]
    fn feedback_resists_lag_and_pushes_away_from_obstacles() {
        let p = params();
        let lag = feedback(
            &p,
            &Vector3::new(1.0, 0.0, 0.0),
            &Vector3::new(0.5, 0.0, 0.0),
            std::iter::empty(),
        );
        assert!((lag - Vector3::new(-1.0, 0.0, 0.0)).norm() < 1e-12);
        // An obstacle 0.25 m ahead in +y: 3 N · 0.75 pushes towards -y.
        let wall = feedback(
            &p,
            &Vector3::zeros(),
            &Vector3::zeros(),
            [(Vector3::new(0.0, 1.0, 0.0), 0.25)].into_iter(),
        );
        assert!(
            (wall - Vector3::new(0.0, -2.25, 0.0)).norm() < 1e-12,
            "{wall}"
        );
        let capped = feedback(
            &p,
            &Vector3::new(10.0, 0.0, 0.0),
            &Vector3::zeros(),
            std::iter::empty(),
        );
        assert!((capped.norm() - 5.0).abs() < 1e-12);
    }
}
