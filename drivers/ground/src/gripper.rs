//! The gripper of a ground robot (`"gripper": {...}` in the `diffdrive` descriptor), after
//! Stage's: two paddles near the floor at the robot's front close around a body that fits,
//! lift it, carry it and put it down.
//!
//! It acts on what its `gripper` sensor reads ([`ssx_sdk::gripper`]): closing (`grip: true`)
//! holds the body between the paddles when it fits, at the pose it lies in relative to the
//! robot; a body too heavy, too wide or nothing at all is not gripped, the paddles stay open and
//! the log says why. While it holds a body, `height` moves the body's lowest point towards that
//! height above the floor at `lift_speed` (up to `max_height`); opening (`grip: false`) lets the
//! body go, and it falls and rests on what is below. After a release the paddles go back down:
//! the next grip holds its body where it lies until a new `height` comes. The held body is
//! lifted along the robot's own z axis, which is the world's for a planar robot.

use serde::Deserialize;
use ssx_sdk::{Ctx, Pose, gripper};

/// The gripper block.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GripperParams {
    /// The `gripper` sensor it reads.
    #[serde(default = "d_sensor")]
    pub sensor: String,
    /// The body the paddles are on.
    #[serde(default)]
    pub body: u32,
    /// How fast it lifts and lowers (m/s).
    #[serde(default = "d_lift_speed")]
    pub lift_speed: f64,
    /// Highest lift (m).
    #[serde(default = "d_max_height")]
    pub max_height: f64,
}

fn d_sensor() -> String {
    "gripper".into()
}
fn d_lift_speed() -> f64 {
    0.1
}
fn d_max_height() -> f64 {
    0.5
}

impl GripperParams {
    /// Checks the numbers.
    pub fn validate(&self) -> Result<(), String> {
        ssx_sdk::within(
            "gripper.lift_speed",
            self.lift_speed,
            1e-6,
            ssx_sdk::limits::RATE,
        )?;
        ssx_sdk::within(
            "gripper.max_height",
            self.max_height,
            0.0,
            ssx_sdk::limits::DISTANCE,
        )?;
        Ok(())
    }
}

/// What the gripper holds: the body and where, in the paddles' frame.
#[derive(Clone, Copy, Debug)]
struct Holding {
    artifact: u32,
    body: u32,
    offset: Pose,
    /// Its lowest point above the floor, as the gripper last set it.
    height: f64,
}

/// The gripper's state.
#[derive(Debug)]
pub struct Gripper {
    p: GripperParams,
    sensor: Option<u32>,
    /// A grip (true) or release (false) to carry out at the next step.
    pending: Option<bool>,
    /// The height asked for, if any since the last release.
    target: Option<f64>,
    holding: Option<Holding>,
}

impl Gripper {
    /// A gripper with open paddles, holding nothing.
    pub fn new(p: GripperParams) -> Self {
        Gripper {
            p,
            sensor: None,
            pending: None,
            target: None,
            holding: None,
        }
    }

    /// Asks it to close (`Some(true)`), open (`Some(false)`) and move what it holds to a height.
    pub fn command(&mut self, grip: Option<bool>, height: Option<f64>) {
        if grip.is_some() {
            self.pending = grip;
        }
        if let Some(h) = height {
            self.target = Some(h.clamp(0.0, self.p.max_height));
        }
    }

    /// The largest height a command may ask for.
    pub fn max_height(&self) -> f64 {
        self.p.max_height
    }

    /// One step: carry out a pending grip or release, then lift or lower what it holds.
    pub fn step(&mut self, ctx: &Ctx<'_>, name: &str, dt: f64) -> Result<(), String> {
        let me = ctx.artifact();
        let sensor = match self.sensor {
            Some(i) => i,
            None => *self.sensor.insert(ctx.own_sensor(&self.p.sensor)?),
        };
        // What the engine says it holds is the truth (an attach the engine refused holds nothing).
        if let Some(h) = self.holding
            && ctx
                .attachment(h.artifact, h.body)?
                .is_none_or(|a| a.artifact != me || a.body != self.p.body)
        {
            self.holding = None;
        }
        // A body held without this instance knowing (a build swapped in while it held one, see
        // docs/plugins.md): take it over, so that opening releases it.
        if self.holding.is_none()
            && let Some(r) = self.read(ctx, sensor)?
            && let Some((artifact, body)) = r.held
            && let Some(a) = ctx.attachment(artifact, body)?
        {
            self.holding = Some(Holding {
                artifact,
                body,
                offset: a.pose,
                height: r.height,
            });
        }
        match self.pending.take() {
            Some(true) if self.holding.is_none() => self.grip(ctx, sensor, name)?,
            Some(false) => {
                if let Some(h) = self.holding.take() {
                    ctx.detach(h.artifact, h.body)?;
                }
                self.target = None;
            }
            _ => {}
        }
        let Some(h) = &mut self.holding else {
            return Ok(());
        };
        let Some(target) = self.target else {
            return Ok(());
        };
        let reach = self.p.lift_speed * dt;
        let next = h.height + (target - h.height).clamp(-reach, reach);
        if next != h.height {
            h.offset.position[2] += next - h.height;
            h.height = next;
            ctx.attach(self.p.body, h.artifact, h.body, h.offset)?;
        }
        Ok(())
    }

    /// The sensor's reading; `None` before its first.
    fn read(&self, ctx: &Ctx<'_>, sensor: u32) -> Result<Option<gripper::Reading>, String> {
        let (values, at) = ctx.reading(ctx.artifact(), sensor)?;
        if at == 0 {
            return Ok(None);
        }
        gripper::Reading::from_values(values)
            .map(Some)
            .ok_or_else(|| {
                format!(
                    "gripper: sensor '{}' does not give a gripper reading",
                    self.p.sensor
                )
            })
    }

    /// Closes on what lies between the paddles, if it fits.
    fn grip(&mut self, ctx: &Ctx<'_>, sensor: u32, name: &str) -> Result<(), String> {
        let me = ctx.artifact();
        let Some(reading) = self.read(ctx, sensor)? else {
            return Ok(());
        };
        let (artifact, body) = match (reading.fit, reading.between) {
            (gripper::Fit::Fits, Some(b)) => b,
            (fit, _) => {
                let why = match fit {
                    gripper::Fit::TooHeavy => format!("too heavy ({} kg)", reading.mass),
                    gripper::Fit::TooWide => format!("too wide ({:.3} m)", reading.width),
                    _ => "nothing between the paddles".into(),
                };
                ctx.log(
                    ssx_sdk::abi::SSX_LOG_INFO,
                    &format!("{name}: the gripper does not close: {why}"),
                );
                return Ok(());
            }
        };
        let paddles = Pose::of(&ctx.body_state(me, self.p.body)?);
        let held = Pose::of(&ctx.body_state(artifact, body)?);
        let offset = paddles.inverse().compose(&held);
        let bounds = ctx
            .body_bounds(artifact, body)?
            .ok_or("gripper: the body between the paddles has no bounds")?;
        let (bottom, _) = ssx_sdk::geometry::box_span(
            held.position,
            held.orientation,
            bounds.min,
            bounds.max,
            [0.0, 0.0, 1.0],
        );
        ctx.attach(self.p.body, artifact, body, offset)?;
        self.holding = Some(Holding {
            artifact,
            body,
            offset,
            height: bottom,
        });
        Ok(())
    }
}
