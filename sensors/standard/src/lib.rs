//! The standard sensors, as one plugin library (`libssx_sensors.so`).
//!
//! Every sensor reads its descriptor strictly (unknown fields are errors) and publishes a flat
//! vector of numbers. World-frame vectors unless said otherwise; SI units.
//!
//! | plugin | reading |
//! |---|---|
//! | `pose` | `[x, y, z, qw, qx, qy, qz, vx, vy, vz, wx, wy, wz]` of one body (motion capture), with optional noise and latency |
//! | `clock` | `[time_s, step]` |
//! | `imu` | `[fx, fy, fz, wx, wy, wz]`: specific force (m/s²) and angular rate (rad/s), body frame |
//! | `range` | `count` distances (m), ray 0 first, counter-clockwise; `max_range` when nothing is hit |
//! | `neighbours` | `[n, then per neighbour: artifact, dx, dy, dz, dvx, dvy, dvz]`, relative to the own body |
//! | `slam` | `[x, y, yaw]`: the estimated pose of its last scan (the map itself is served by the `explore` extension) |
//! | `contact` | `[n, |total force|, then per touched body: artifact, body, px, py, pz, fx, fy, fz]` |
//! | `camera` | `width × height` depths (m), then optionally `width × height` colours `0xRRGGBB`: a ray-cast pinhole camera (see `camera.rs`) |
//! | `gripper` | what a gripper holds and what lies between its paddles: [`ssx_sdk::gripper`] |
//!
//! Sensors with a `rate_divider` publish every that many steps; in between the last reading (and
//! the step it was taken at) stays. `stagger: true` offsets the sampling step by the instance
//! seed, so that a swarm's sensors do not all sample on the same step.

mod camera;
mod contact;
mod gripper;
mod imu;
mod joints;
mod noise;
mod pose;
mod range;
mod slam;
mod swarm;

use serde::Deserialize;
use ssx_sdk::{Ctx, Init, Sensor};

fn one() -> u32 {
    1
}

/// A ray sensor's `count` (1 to `limits::RAYS`) and `fov` (in (0, 2π]), or the descriptor error.
pub(crate) fn check_rays(count: u32, fov: f64) -> Result<(), String> {
    if !(1..=ssx_sdk::limits::RAYS).contains(&count) {
        return Err(format!(
            "invalid descriptor: 'count' must be from 1 to {}, got {count}",
            ssx_sdk::limits::RAYS
        ));
    }
    if !(fov > 0.0 && fov <= std::f64::consts::TAU) {
        return Err(format!(
            "invalid descriptor: 'fov' must be in (0, 2π], got {fov}"
        ));
    }
    Ok(())
}

/// The sampling schedule of `rate_divider` and `stagger`.
pub(crate) fn rate(divider: u32, stagger: bool, init: &Init) -> Result<ssx_sdk::Rate, String> {
    if !(1..=ssx_sdk::limits::DIVIDER).contains(&divider) {
        return Err(format!(
            "invalid descriptor: 'rate_divider' must be from 1 to {}, got {divider}",
            ssx_sdk::limits::DIVIDER
        ));
    }
    let phase = if stagger {
        (init.seed % u64::from(divider)) as u32
    } else {
        0
    };
    Ok(ssx_sdk::Rate::new(divider, phase))
}

/// A sensor's description of its reading (`Ctx::describe`), written at create and handed to
/// the host on the first step (the host keeps it).
pub(crate) struct Description(Option<String>);

impl Description {
    pub(crate) fn new(json: serde_json::Value) -> Self {
        Description(Some(json.to_string()))
    }
    /// Hands the description over, once.
    pub(crate) fn once(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        if let Some(text) = self.0.take() {
            ctx.describe(&text)?;
        }
        Ok(())
    }
}

/// Parses a descriptor strictly, with the SDK's error wording.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(descriptor: &str) -> Result<T, String> {
    serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Empty {}

struct Clock;

impl Sensor for Clock {
    fn create(descriptor: &str, _init: &Init) -> Result<Self, String> {
        let _: Empty = parse(descriptor)?;
        Ok(Clock)
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let (t, n) = ctx.time()?;
        ctx.publish(&[t, n as f64])?;
        Ok(())
    }
}

ssx_sdk::export_plugins!(
    sensor "pose" "ground-truth pose and twist of one body (motion capture), optional noise and latency" => pose::Pose,
    sensor "clock" "simulated time and step" => Clock,
    sensor "imu" "specific force and angular rate in the body frame, white noise and bias random walk" => imu::Imu,
    sensor "range" "a fan or ring of range rays in the mount's plane (2.5D: rays pass under what is above them)" => range::Range,
    sensor "neighbours" "relative position and velocity of the artifacts within a radius, optionally in line of sight" => swarm::Neighbours,
    sensor "contact" "the bodies touching a body: where and how hard" => contact::Contact,
    sensor "camera" "a pinhole camera: a depth image and a colour image, ray-cast on the CPU" => camera::Camera,
    sensor "gripper" "what a gripper's paddles hold and whether the body between them fits" => gripper::Gripper,
    sensor "joints" "the positions and rates of a robot's revolute and prismatic joints (sensor_msgs/JointState)" => joints::Joints,
    sensor "slam" "a range scanner whose scans at a noisy pose build the robot's occupancy grid in the explore extension" => slam::Slam,
);
