//! Built-in drivers and sensors, registered by name in [`PluginRegistry::with_builtins`].
//!
//! | kind | name | what it does |
//! | --- | --- | --- |
//! | driver | `hover` | holds the artifact at a height (or flies it through waypoints) by force, PD |
//! | driver | `velocity` | moves a kinematic body at a constant linear and angular velocity |
//! | sensor | `pose` | ground-truth pose and twist of one body (a motion-capture system) |
//! | sensor | `clock` | simulated time and step |

use serde::Deserialize;

use crate::math::Vec3;
use crate::plugin::{
    CommandBuffer, Driver, DriverContext, PluginRegistry, Reading, Sensor, SensorContext,
    parse_descriptor,
};

pub(crate) fn register(r: &mut PluginRegistry) {
    r.add_driver("hover", |d, _| {
        Ok(Box::new(Hover::new(parse_descriptor(d)?)?))
    });
    r.add_driver("velocity", |d, _| {
        Ok(Box::new(VelocityDriver(parse_descriptor(d)?)))
    });
    r.add_sensor("pose", |d, _| {
        Ok(Box::new(PoseSensor(parse_descriptor(d)?)))
    });
    r.add_sensor("clock", |d, _| {
        let _: Empty = parse_descriptor(d)?;
        Ok(Box::new(ClockSensor))
    });
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

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

/// Descriptor of the `hover` driver.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HoverDescriptor {
    /// Height to hold (m); the horizontal position held is the start position.
    #[serde(default)]
    pub height: Option<f64>,
    /// Instead of `height`: points to fly to in turn, `dwell` seconds each, cycling.
    #[serde(default)]
    pub waypoints: Vec<[f64; 3]>,
    /// Seconds at each waypoint.
    #[serde(default = "default_dwell")]
    pub dwell: f64,
    /// Position gain (1/s²): acceleration per metre of error.
    #[serde(default = "default_kp")]
    pub kp: f64,
    /// Velocity gain (1/s).
    #[serde(default = "default_kd")]
    pub kd: f64,
    /// Largest commanded acceleration besides gravity compensation (m/s²).
    #[serde(default = "default_max_accel")]
    pub max_accel: f64,
}

/// Holds an artifact's root body at a set point by a force on it: PD on position plus gravity
/// compensation for the artifact's whole dynamic mass.
pub struct Hover {
    d: HoverDescriptor,
    home: Option<Vec3>,
}

impl Hover {
    /// A hover driver from its descriptor.
    pub fn new(d: HoverDescriptor) -> Result<Self, String> {
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
        }
        Ok(Self { d, home: None })
    }

    fn target(&mut self, now: f64, here: &Vec3) -> Vec3 {
        if let Some(h) = self.d.height {
            let home = *self.home.get_or_insert(*here);
            Vec3::new(home.x, home.y, h)
        } else {
            let i = (now / self.d.dwell) as usize % self.d.waypoints.len();
            Vec3::from(self.d.waypoints[i])
        }
    }
}

impl Driver for Hover {
    fn drive(&mut self, ctx: &DriverContext<'_>, out: &mut CommandBuffer) -> Result<(), String> {
        let info = ctx.info();
        let root = info.body(0).ok_or("the artifact has no body to hover")?;
        let state = ctx.world.body(root);
        let here = state.pose.translation.vector;
        let target = self.target(ctx.world.time, &here);
        let mut accel = (target - here) * self.d.kp - state.linvel * self.d.kd;
        let norm = accel.norm();
        if norm > self.d.max_accel {
            accel *= self.d.max_accel / norm;
        }
        let mass: f64 = info
            .bodies
            .clone()
            .map(|b| ctx.world.mass(crate::engine::BodyId(b)))
            .sum();
        out.force(0, (accel - ctx.world.gravity) * mass)
    }
}

/// Descriptor of the `velocity` driver.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VelocityDescriptor {
    /// Linear velocity (m/s, world frame).
    #[serde(default)]
    pub linear: [f64; 3],
    /// Angular velocity (rad/s, world frame).
    #[serde(default)]
    pub angular: [f64; 3],
    /// Which body of the artifact (default the first).
    #[serde(default)]
    pub body: usize,
}

struct VelocityDriver(VelocityDescriptor);

impl Driver for VelocityDriver {
    fn drive(&mut self, _ctx: &DriverContext<'_>, out: &mut CommandBuffer) -> Result<(), String> {
        out.velocity(
            self.0.body,
            Vec3::from(self.0.linear),
            Vec3::from(self.0.angular),
        )
    }
}

/// Descriptor of the `pose` sensor.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseDescriptor {
    /// Which body of the artifact (default the first).
    #[serde(default)]
    pub body: usize,
}

/// Ground-truth pose and twist: `[x, y, z, qw, qx, qy, qz, vx, vy, vz, wx, wy, wz]`, world
/// frame.
struct PoseSensor(PoseDescriptor);

impl Sensor for PoseSensor {
    fn sense(&mut self, ctx: &SensorContext<'_>, out: &mut Reading) -> Result<(), String> {
        let body = ctx
            .info()
            .body(self.0.body)
            .ok_or_else(|| format!("body index {} out of range", self.0.body))?;
        let s = ctx.world.body(body);
        let p = s.pose.translation.vector;
        let q = s.pose.rotation.quaternion();
        out.set(&[
            p.x, p.y, p.z, q.w, q.i, q.j, q.k, s.linvel.x, s.linvel.y, s.linvel.z, s.angvel.x,
            s.angvel.y, s.angvel.z,
        ]);
        Ok(())
    }
}

/// `[time_s, step]`.
struct ClockSensor;

impl Sensor for ClockSensor {
    fn sense(&mut self, ctx: &SensorContext<'_>, out: &mut Reading) -> Result<(), String> {
        out.set(&[ctx.world.time, ctx.world.step as f64]);
        Ok(())
    }
}
