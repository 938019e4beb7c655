//! The `diffdrive` driver (`libssx_driver_ground.so`): a differential-drive ground robot; the
//! library's `holonomic` driver ([`holonomic`]) is VMAS's agent that moves along x and y at once.
//!
//! The robot is a planar body (`"planar": true` in its artifact: it moves in the horizontal
//! plane, as Stage's robots do). Each step the driver sets the body's velocity to its commanded
//! forward speed along its heading and its turn rate, after acceleration limits; it never slides
//! sideways. Contacts still stop it: the solver resolves them within the step.
//!
//! Behaviours (`behaviour` in the descriptor):
//! - `{"velocity": {"linear": v, "angular": w}}`: a constant body command (m/s, rad/s).
//! - `{"wheels": {"left": wl, "right": wr}}`: constant wheel speeds (rad/s), through
//!   `wheel_radius` and `wheel_base`.
//! - `{"dispersal": {...}}`: Stage's benchmark controller (Vaughan 2008, sec. 6.1): sum the range
//!   vectors; go forward when that sum points ahead and the way is free, else turn towards it;
//!   stop when nothing is within range.
//! - `{"waypoints": {"points": [[x, y], ...], ...}}`: drive to each point in turn, turning away
//!   from obstacles the range sensor sees closer than `avoid`.
//! - `{"script": {"steps": [{"for": s, "linear": v, "angular": w, "grip": b, "height": h}, ...]}}`:
//!   each segment's command for its duration, in turn, then a stop; `grip` and `height` act on
//!   the gripper as the segment starts.
//!
//! With a `"gripper": {...}` block the robot has Stage's gripper ([`gripper`]): it reads its
//! `gripper` sensor and closes on, lifts and releases what lies between its paddles.
//!
//! Behaviours that read ranges update their command when the `range` sensor publishes (its
//! `rate_divider` sets the controller rate) and hold it in between.
//!
//! With `"commands": {}` the robot also takes body commands from outside, through a messaging
//! extension (`zenoh` by default) on `artifacts/<name>/cmd`: `{"linear": v, "angular": w}`.
//! A command beyond `max_speed` or `max_turn_rate` is dropped by the extension as malformed. A
//! command overrides the behaviour for `timeout` seconds after it arrived; then the behaviour
//! drives again. A robot with a gripper also takes `{"grip": 0 or 1, "height": h}` on
//! `artifacts/<name>/gripper` (both fields; `height` up to the gripper's `max_height`).

pub mod behaviour;
pub mod gripper;
pub mod holonomic;
mod outside;

use serde::Deserialize;
use ssx_sdk::{Ctx, Driver, Init};

use behaviour::{Behaviour, Command};
use gripper::{Gripper, GripperParams};

/// The robot's limits and wheels.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffDriveParams {
    /// Distance between the wheels (m).
    #[serde(default = "d_base")]
    pub wheel_base: f64,
    /// Wheel radius (m).
    #[serde(default = "d_radius")]
    pub wheel_radius: f64,
    /// Largest forward speed (m/s).
    #[serde(default = "d_speed")]
    pub max_speed: f64,
    /// Largest turn rate (rad/s).
    #[serde(default = "d_turn")]
    pub max_turn_rate: f64,
    /// Largest forward acceleration (m/s²); none: speed changes at once.
    #[serde(default)]
    pub max_accel: Option<f64>,
    /// Largest angular acceleration (rad/s²); none: at once.
    #[serde(default)]
    pub max_angular_accel: Option<f64>,
    /// The range sensor behaviours read.
    #[serde(default = "d_range")]
    pub range: String,
    /// What it does.
    pub behaviour: Behaviour,
    /// Take body commands from a messaging extension.
    #[serde(default)]
    pub commands: Option<Remote>,
    /// A gripper at the front (boxed: a batch of small worlds holds a driver a robot, and most
    /// have none).
    #[serde(default)]
    pub gripper: Option<Box<GripperParams>>,
}

/// Where commands come from.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remote {
    /// The extension's name in the scene.
    #[serde(default = "d_ext")]
    pub extension: String,
    /// The key, relative to its prefix (default `artifacts/<name>/cmd`).
    #[serde(default)]
    pub key: Option<String>,
    /// Seconds a command holds.
    #[serde(default = "d_timeout")]
    pub timeout: f64,
}

fn d_ext() -> String {
    "zenoh".into()
}
fn d_timeout() -> f64 {
    0.5
}

fn d_base() -> f64 {
    0.33
}
fn d_radius() -> f64 {
    0.0975
}
fn d_speed() -> f64 {
    1.2
}
fn d_turn() -> f64 {
    5.24
}
fn d_range() -> String {
    "range".into()
}

/// The `diffdrive` driver.
pub struct DiffDrive {
    p: DiffDriveParams,
    name: String,
    /// The outside commands, when it takes them.
    outside: outside::Outside,
    /// The gripper's command subscription (on the commands' bus) and its last sequence number.
    remote_gripper: Option<u32>,
    gripper_seq: u64,
    /// Boxed: most robots have none, and a batch of small worlds holds a driver a robot.
    gripper: Option<Box<Gripper>>,
    range: Option<u32>,
    target: Command,
    now: Command,
    timestep: f64,
}

/// Moves `value` towards `target` by at most `limit·dt`.
fn ramp(value: f64, target: f64, limit: Option<f64>, dt: f64) -> f64 {
    match limit {
        Some(a) => value + (target - value).clamp(-a * dt, a * dt),
        None => target,
    }
}

impl Driver for DiffDrive {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        init.root_body()?;
        let p: DiffDriveParams =
            serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)?;
        let positive = [p.wheel_base, p.wheel_radius, p.max_speed, p.max_turn_rate]
            .into_iter()
            .chain(p.max_accel)
            .chain(p.max_angular_accel)
            .all(|x| x.is_finite() && x > 0.0);
        if !positive {
            return Err("invalid descriptor: wheel sizes, speed and acceleration limits must be finite numbers > 0".into());
        }
        p.behaviour.validate()?;
        if let Some(g) = &p.gripper {
            g.validate()?;
        }
        if let Behaviour::Script(script) = &p.behaviour
            && script.grips()
            && p.gripper.is_none()
        {
            return Err(
                "invalid descriptor: the script grips, but the robot has no 'gripper' block".into(),
            );
        }
        if p.commands
            .as_ref()
            .is_some_and(|r| !(r.timeout.is_finite() && r.timeout > 0.0))
        {
            return Err("invalid descriptor: commands.timeout must be a positive number".into());
        }
        Ok(DiffDrive {
            name: init.artifact_name.clone(),
            outside: outside::Outside::default(),
            remote_gripper: None,
            gripper_seq: 0,
            gripper: p
                .gripper
                .as_deref()
                .map(|g| Box::new(Gripper::new(g.clone()))),
            p,
            range: None,
            target: Command::default(),
            now: Command::default(),
            timestep: init.timestep,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let me = ctx.artifact();
        let state = ctx.body_state(me, 0)?;
        let [w, _, _, z] = state.orientation;
        // Planar: the orientation is a rotation about z by the heading θ, (w, z) = r·(cos θ/2,
        // sin θ/2); its cosine and sine follow without trigonometry, θ itself only when a
        // behaviour decides.
        let r2 = w * w + z * z;
        let (cos, sin) = if r2 > 0.0 {
            ((w * w - z * z) / r2, 2.0 * w * z / r2)
        } else {
            (1.0, 0.0)
        };
        let (time, step) = ctx.time()?;
        // Range behaviours decide when the range sensor has a fresh sample, the others every step.
        let mut ranges: &[f64] = &[];
        let mut fresh = true;
        if self.p.behaviour.needs_range() {
            let index = match self.range {
                Some(i) => i,
                None => *self.range.insert(ctx.own_sensor(&self.p.range)?),
            };
            let (values, at) = ctx.reading(me, index)?;
            ranges = values;
            fresh = at == step;
        }
        if fresh {
            let wheels = (self.p.wheel_radius, self.p.wheel_base);
            let position = [state.position[0], state.position[1]];
            self.target =
                self.p
                    .behaviour
                    .decide(wheels, ranges, (position, 2.0 * z.atan2(w)), time);
        }
        let target = match self.outside_command(ctx)? {
            Some(c) => c,
            None => self.target,
        };
        if let Some(g) = &mut self.gripper {
            if let Some((grip, height)) = self.p.behaviour.take_action() {
                g.command(grip, height);
            }
            self.outside_gripper_command(ctx)?;
        }
        if let Some(g) = &mut self.gripper {
            g.step(ctx, &self.name, self.timestep)?;
        }
        let p = &self.p;
        let linear = target.linear.clamp(-p.max_speed, p.max_speed);
        let angular = target.angular.clamp(-p.max_turn_rate, p.max_turn_rate);
        self.now.linear = ramp(self.now.linear, linear, p.max_accel, self.timestep);
        self.now.angular = ramp(
            self.now.angular,
            angular,
            p.max_angular_accel,
            self.timestep,
        );
        ctx.set_velocity(
            0,
            [cos * self.now.linear, sin * self.now.linear, 0.0],
            [0.0, 0.0, self.now.angular],
        )?;
        Ok(())
    }
}

ssx_sdk::export_plugins!(
    driver "diffdrive" "a differential-drive ground robot: velocity or wheel commands, Stage's dispersal, waypoints with obstacle avoidance, timed scripts, Stage's gripper" => DiffDrive,
    driver "holonomic" "VMAS's holonomic agent: a force or velocity along x and y at once, from outside" => holonomic::Holonomic,
);

impl DiffDrive {
    /// The outside command in force, if any (reading the mailbox; subscribing on the first call).
    fn outside_command(&mut self, ctx: &Ctx<'_>) -> Result<Option<Command>, String> {
        let Some(r) = self.p.commands.as_ref() else {
            return Ok(None);
        };
        let fields = [
            ("linear", self.p.max_speed),
            ("angular", self.p.max_turn_rate),
        ];
        Ok(self
            .outside
            .read(ctx, r, &self.name, fields)?
            .map(|[linear, angular]| Command { linear, angular }))
    }

    /// Hands a new outside gripper command to the gripper (the robot takes commands and has a
    /// gripper; subscribing on the first call).
    fn outside_gripper_command(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let (Some(_), Some(g)) = (&self.p.commands, &mut self.gripper) else {
            return Ok(());
        };
        let Some(bus) = self.outside.bus() else {
            return Ok(());
        };
        let sub = match self.remote_gripper {
            Some(sub) => sub,
            None => {
                let key = format!("artifacts/{}/gripper", self.name);
                let fields = [("grip", 1.0), ("height", g.max_height())];
                *self
                    .remote_gripper
                    .insert(subscribe(ctx, bus, &key, &fields)?)
            }
        };
        if let Some(m) = bus.read(ctx, sub)?.filter(|m| m.seq != self.gripper_seq) {
            self.gripper_seq = m.seq;
            let v = m.values();
            g.command(Some(v[0] >= 0.5), Some(v[1]));
        }
        Ok(())
    }
}

/// Subscribes to `key` on `bus`: a JSON object of the required one-number `fields` (name,
/// largest magnitude).
fn subscribe(
    ctx: &Ctx<'_>,
    bus: ssx_sdk::bus::Bus,
    key: &str,
    fields: &[(&'static str, f64)],
) -> Result<u32, String> {
    use ssx_sdk::bus::{Field, Subscription};
    let fields: Vec<Field> = fields
        .iter()
        .map(|&(name, max)| Field {
            name,
            len: 1,
            max,
            required: true,
        })
        .collect();
    let spec = Subscription {
        key,
        fields: &fields,
        queue: 0,
        binary: false,
    };
    bus.subscribe(ctx, &spec)
}
