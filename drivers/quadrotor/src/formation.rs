//! The `formation` driver: SwarmSimX sec. 3.2's reference swarm. Each quadrotor keeps a desired
//! distance to the neighbours it senses (a spring potential), is pushed away from obstacles its
//! range ring sees (a repulsive potential inside `safe_distance`), is drawn towards a goal, and
//! holds an altitude. The sum is a velocity reference, integrated into a position reference
//! (kept within a leash of the vehicle) that the quadrotor's own flight controller tracks.
//!
//! Sensors it reads on its artifact: the flight's `imu` and `pose` (see the crate docs), a
//! `neighbours` sensor and a `range` sensor that is a full ring starting at the body x axis.

use nalgebra::Vector3;
use serde::Deserialize;
use ssx_sdk::{Ctx, Driver, Init};

use crate::reference::Reference;
use crate::{Flight, FlightParams, apply};

/// Formation settings.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormationParams {
    /// Desired distance to each neighbour (m).
    pub distance: f64,
    /// Spring gain (1/s).
    #[serde(default = "d_k_form")]
    pub k_form: f64,
    /// Obstacle repulsion gain (m/s).
    #[serde(default = "d_k_obstacle")]
    pub k_obstacle: f64,
    /// Range below which obstacles repel (m).
    #[serde(default = "d_safe")]
    pub safe_distance: f64,
    /// Where the group goes (x, y), if anywhere.
    #[serde(default)]
    pub goal: Option<[f64; 2]>,
    /// Goal gain (1/s).
    #[serde(default = "d_k_goal")]
    pub k_goal: f64,
    /// Flight altitude (m).
    pub altitude: f64,
    /// Largest horizontal speed asked for (m/s).
    #[serde(default = "d_max_speed")]
    pub max_speed: f64,
    /// The artifact's neighbours sensor.
    #[serde(default = "d_neighbours")]
    pub neighbours: String,
    /// The artifact's range sensor.
    #[serde(default = "d_range")]
    pub range: String,
}

fn d_k_form() -> f64 {
    0.8
}
fn d_k_obstacle() -> f64 {
    2.5
}
fn d_safe() -> f64 {
    1.0
}
fn d_k_goal() -> f64 {
    0.3
}
fn d_max_speed() -> f64 {
    1.0
}
fn d_neighbours() -> String {
    "neighbours".into()
}
fn d_range() -> String {
    "range".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    formation: FormationParams,
    #[serde(default)]
    flight: FlightParams,
}

/// The velocity reference of the potentials: neighbours are `(dx, dy, dz, ...)` rows of the
/// neighbours reading, `ranges` a ring starting at `yaw`.
pub fn potential(
    p: &FormationParams,
    position: &Vector3<f64>,
    neighbours: &[f64],
    ranges: &[f64],
    yaw: f64,
) -> Vector3<f64> {
    let mut v = Vector3::zeros();
    let n = neighbours.first().map_or(0, |n| *n as usize);
    for row in neighbours.get(1..).unwrap_or(&[]).chunks_exact(7).take(n) {
        let d = Vector3::new(row[1], row[2], 0.0);
        let dist = d.norm();
        if dist > 1e-6 {
            v += d / dist * (p.k_form * (dist - p.distance));
        }
    }
    let count = ranges.len();
    for (i, &r) in ranges.iter().enumerate() {
        if r < p.safe_distance {
            let a = yaw + std::f64::consts::TAU * i as f64 / count as f64;
            let push = p.k_obstacle * (p.safe_distance - r) / p.safe_distance;
            v -= Vector3::new(a.cos(), a.sin(), 0.0) * push;
        }
    }
    if let Some([gx, gy]) = p.goal {
        // Saturated on its own, so that near an obstacle the repulsion can outweigh it.
        let mut pull = (Vector3::new(gx, gy, position.z) - position) * p.k_goal;
        if pull.norm() > p.max_speed {
            pull *= p.max_speed / pull.norm();
        }
        v += pull;
    }
    v.z = 0.0;
    let speed = v.norm();
    if speed > p.max_speed {
        v *= p.max_speed / speed;
    }
    v
}

/// The `formation` driver.
pub struct Formation {
    params: FormationParams,
    flight: Flight,
    sensors: Option<(u32, u32)>,
    /// The integrated position reference.
    target: Option<Vector3<f64>>,
}

impl Driver for Formation {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        init.root_body()?;
        let d: Descriptor = crate::parse_descriptor(descriptor, init)?;
        let f = &d.formation;
        let ok = [
            f.distance,
            f.k_form,
            f.k_obstacle,
            f.safe_distance,
            f.k_goal,
            f.max_speed,
        ]
        .iter()
        .all(|x| x.is_finite() && *x >= 0.0)
            && f.altitude.is_finite()
            && f.goal.is_none_or(|g| g.iter().all(|x| x.is_finite()));
        if !ok {
            return Err(
                "invalid descriptor: formation gains, distances and speeds must be finite and >= 0"
                    .into(),
            );
        }
        Ok(Formation {
            params: d.formation,
            flight: Flight::new(d.flight, init.timestep)?,
            sensors: None,
            target: None,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let me = ctx.artifact();
        let (neighbours, range) = match self.sensors {
            Some(s) => s,
            None => *self.sensors.insert((
                ctx.own_sensor(&self.params.neighbours)?,
                ctx.own_sensor(&self.params.range)?,
            )),
        };
        let (near, _) = ctx.reading(me, neighbours)?;
        let (ranges, _) = ctx.reading(me, range)?;
        let inputs = self.flight.read(ctx)?;
        let params = &self.params;
        let target = &mut self.target;
        let wrench = self.flight.step(&inputs, |p, _, q, dt| {
            let (_, _, yaw) = q.euler_angles();
            let v = potential(params, p, near, ranges, yaw);
            let t = target.get_or_insert(Vector3::new(p.x, p.y, params.altitude));
            *t += v * dt;
            t.z = params.altitude;
            // A leash: the reference never runs more than LEASH ahead of the vehicle.
            let mut lead = *t - p;
            lead.z = 0.0;
            if lead.norm() > LEASH {
                *t -= lead * (1.0 - LEASH / lead.norm());
            }
            let mut r = Reference::hold(*t, 0.0);
            r.velocity = v;
            r
        })?;
        apply(ctx, wrench)
    }
}

/// How far (m) the position reference may lead the vehicle.
const LEASH: f64 = 0.5;
