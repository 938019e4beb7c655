//! The `joints` driver: a robot's joints driven as ros2_control's forward command controllers
//! drive them, by position, velocity or effort, with the targets from a schedule in the
//! descriptor or from outside (Zenoh, ROS 2's `joint_commands`, Python's `Sim.command`).
//!
//! Descriptor:
//! - `joints`: the joints driven, by name, in command order (default: every revolute and
//!   prismatic joint of the artifact, in its file's order);
//! - `mode`: `"position"` (default), `"velocity"` or `"effort"`;
//! - `stiffness`, `damping`: the joint motors' gains (N·m/rad and N·m·s/rad, or N/m and
//!   N·s/m on prismatic joints): position mode uses both (defaults 1000 and 100), velocity
//!   mode the damping (default 100);
//! - `schedule`: `[{"time": t, "values": [...]}, ...]`, targets at simulated times, linearly
//!   interpolated (a position schedule also feeds the segment's rate forward), held after the
//!   last; times rising from 0;
//! - `commands`: `{"extension": "zenoh", "key": ..., "timeout": s}` takes commands on
//!   `artifacts/<name>/cmd` (or `key`): `{"values": [...]}` in command order; a command
//!   replaces the schedule until `timeout` (default: none) passes without one.
//!
//! Targets are checked against the joints' limits (clamped into them) and, for efforts, their
//! effort limits (the engine clamps too).

use serde::Deserialize;
use ssx_sdk::abi::{SSX_JOINT_FIXED, SsxJointState};
use ssx_sdk::{Ctx, Driver, Init};

/// Largest gain taken.
const MAX_GAIN: f64 = 1e9;
/// Largest target magnitude taken (rad, m, rad/s, m/s, N·m, N).
const MAX_TARGET: f64 = 1e6;

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Mode {
    #[default]
    Position,
    Velocity,
    Effort,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Point {
    time: f64,
    values: Vec<f64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Remote {
    #[serde(default = "d_ext")]
    extension: String,
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    timeout: Option<f64>,
}

fn d_ext() -> String {
    "zenoh".into()
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    #[serde(default)]
    joints: Option<Vec<String>>,
    #[serde(default)]
    mode: Mode,
    #[serde(default)]
    stiffness: Option<f64>,
    #[serde(default)]
    damping: Option<f64>,
    #[serde(default)]
    schedule: Vec<Point>,
    #[serde(default)]
    commands: Option<Remote>,
}

/// A joint driven: its index in the artifact and limits.
#[derive(Clone, Copy, Debug)]
struct Driven {
    index: u32,
    state: SsxJointState,
}

pub struct Joints {
    d: Descriptor,
    name: String,
    /// Resolved on the first step (names need the host).
    driven: Option<Vec<Driven>>,
    remote: Option<(ssx_sdk::bus::Bus, u32)>,
    /// Whether the scene lacks the commands' extension (said once; the driver runs on).
    no_way_in: bool,
    /// When the outside command in force came (its values in `commanded`).
    commanded_at: Option<f64>,
    commanded: Vec<f64>,
    /// This step's targets and (positions along a schedule) rates: buffers made once, so a
    /// step does not allocate.
    targets: Vec<f64>,
    rates: Vec<f64>,
    seq: u64,
}

impl Driver for Joints {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        let d: Descriptor = serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)?;
        for (name, v) in [("stiffness", d.stiffness), ("damping", d.damping)] {
            if let Some(v) = v {
                ssx_sdk::within(name, v, 0.0, MAX_GAIN)?;
            }
        }
        if let Some(names) = &d.joints
            && names.is_empty()
        {
            return Err("invalid descriptor: 'joints' names no joint".into());
        }
        let mut last = None;
        for (k, p) in d.schedule.iter().enumerate() {
            ssx_sdk::within(&format!("schedule[{k}].time"), p.time, 0.0, 1e9)?;
            if last.is_some_and(|t| p.time <= t) {
                return Err(format!(
                    "invalid descriptor: schedule[{k}].time {} is not after the one before",
                    p.time
                ));
            }
            last = Some(p.time);
            for (i, v) in p.values.iter().enumerate() {
                ssx_sdk::within(
                    &format!("schedule[{k}].values[{i}]"),
                    *v,
                    -MAX_TARGET,
                    MAX_TARGET,
                )?;
            }
        }
        if let Some(r) = &d.commands
            && let Some(t) = r.timeout
        {
            ssx_sdk::within("commands.timeout", t, 0.0, 1e9)?;
        }
        if init.joint_count == Some(0) {
            return Err(format!(
                "artifact '{}' has no joints to drive",
                init.artifact_name
            ));
        }
        Ok(Joints {
            d,
            name: init.artifact_name.clone(),
            driven: None,
            remote: None,
            no_way_in: false,
            commanded_at: None,
            commanded: Vec::new(),
            targets: Vec::new(),
            rates: Vec::new(),
            seq: 0,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let me = ctx.artifact();
        if self.driven.is_none() {
            self.driven = Some(self.resolve(ctx, me)?);
        }
        let (time, _) = ctx.time()?;
        let n = self.driven.as_ref().map_or(0, Vec::len);
        let rates = if self.outside(ctx, n, time)? {
            self.targets.clone_from(&self.commanded);
            false
        } else {
            match self.scheduled(time) {
                Some(rates) => rates,
                None => return Ok(()),
            }
        };
        let (k, c) = self.gains();
        for (i, j) in self.driven.as_ref().expect("resolved").iter().enumerate() {
            let [lo, hi] = j.state.limits;
            let target = self.targets[i];
            match self.d.mode {
                Mode::Position => {
                    let rate = if rates { self.rates[i] } else { 0.0 };
                    ctx.set_joint_motor(j.index, target.clamp(lo, hi), rate, k, c)?;
                }
                Mode::Velocity => ctx.set_joint_motor(j.index, 0.0, target, 0.0, c)?,
                Mode::Effort => {
                    let m = j.state.max_effort;
                    ctx.add_joint_effort(j.index, target.clamp(-m, m))?
                }
            }
        }
        Ok(())
    }
}

impl Joints {
    fn gains(&self) -> (f64, f64) {
        (
            self.d.stiffness.unwrap_or(1000.0),
            self.d.damping.unwrap_or(100.0),
        )
    }

    /// The joints named (or every movable one), checked.
    fn resolve(&self, ctx: &Ctx<'_>, me: u32) -> Result<Vec<Driven>, String> {
        let mut all = Vec::new();
        let mut k = 0;
        while let Some(state) = ctx.joint_state(me, k)? {
            all.push((ctx.joint_name(me, k)?, Driven { index: k, state }));
            k += 1;
        }
        let driven: Vec<Driven> = match &self.d.joints {
            None => all
                .iter()
                .filter(|(_, j)| j.state.kind != SSX_JOINT_FIXED)
                .map(|(_, j)| *j)
                .collect(),
            Some(names) => names
                .iter()
                .map(|n| {
                    let (_, j) = all.iter().find(|(name, _)| name == n).ok_or_else(|| {
                        let movable: Vec<&str> = all
                            .iter()
                            .filter(|(_, j)| j.state.kind != SSX_JOINT_FIXED)
                            .map(|(n, _)| n.as_str())
                            .collect();
                        format!(
                            "invalid descriptor: 'joints' names '{n}', which '{}' does not have (its joints: {})",
                            self.name,
                            movable.join(", ")
                        )
                    })?;
                    if j.state.kind == SSX_JOINT_FIXED {
                        return Err(format!("invalid descriptor: joint '{n}' is fixed"));
                    }
                    Ok(*j)
                })
                .collect::<Result<_, String>>()?,
        };
        if driven.is_empty() {
            return Err(format!(
                "'{}' has no revolute or prismatic joint",
                self.name
            ));
        }
        if let Some((k, p)) = self
            .d
            .schedule
            .iter()
            .enumerate()
            .find(|(_, p)| p.values.len() != driven.len())
        {
            return Err(format!(
                "invalid descriptor: schedule[{k}] has {} values for {} joints",
                p.values.len(),
                driven.len()
            ));
        }
        if driven.len() > ssx_sdk::bus::MAX_VALUES && self.d.commands.is_some() {
            return Err(format!(
                "{} joints: commands carry at most {}",
                driven.len(),
                ssx_sdk::bus::MAX_VALUES
            ));
        }
        Ok(driven)
    }

    /// Whether an outside command is in force (its values in `commanded`; subscribing on the
    /// first call).
    fn outside(&mut self, ctx: &Ctx<'_>, n: usize, time: f64) -> Result<bool, String> {
        let Some(r) = self.d.commands.as_ref().filter(|_| !self.no_way_in) else {
            return Ok(false);
        };
        let (bus, sub) = match self.remote {
            Some(link) => link,
            None => {
                use ssx_sdk::bus::{Field, Subscription};
                let Some(bus) = ssx_sdk::bus::Bus::find_or_warn(ctx, &r.extension, &self.name)?
                else {
                    self.no_way_in = true;
                    return Ok(false);
                };
                let key = r
                    .key
                    .clone()
                    .unwrap_or_else(|| format!("artifacts/{}/cmd", self.name));
                let fields = [Field {
                    name: "values",
                    len: n,
                    max: MAX_TARGET,
                    required: true,
                }];
                let spec = Subscription {
                    key: &key,
                    fields: &fields,
                    queue: 0,
                    binary: false,
                };
                *self.remote.insert((bus, bus.subscribe(ctx, &spec)?))
            }
        };
        if let Some(m) = bus.read(ctx, sub)?.filter(|m| m.seq != self.seq) {
            self.seq = m.seq;
            self.commanded.clear();
            self.commanded.extend_from_slice(m.values());
            self.commanded_at = Some(time);
        }
        if let (Some(at), Some(timeout)) = (self.commanded_at, r.timeout)
            && time - at > timeout
        {
            self.commanded_at = None;
        }
        Ok(self.commanded_at.is_some())
    }

    /// The schedule's targets at `time` into `targets`; `None` without a schedule, else whether
    /// `rates` holds the segment's rates (positions between two points; before the first point
    /// and after the last the target is held with no rate).
    fn scheduled(&mut self, time: f64) -> Option<bool> {
        let s = &self.d.schedule;
        let first = s.first()?;
        let k = s
            .iter()
            .rposition(|p| p.time <= time)
            .filter(|_| time > first.time);
        let (a, b) = match k.and_then(|k| Some((&s[k], s.get(k + 1)?))) {
            Some(ab) => ab,
            None => {
                let held = k.map_or(first, |k| &s[k]);
                self.targets.clone_from(&held.values);
                return Some(false);
            }
        };
        let span = b.time - a.time;
        let f = (time - a.time) / span;
        self.targets.clear();
        self.targets
            .extend(a.values.iter().zip(&b.values).map(|(x, y)| x + (y - x) * f));
        if self.d.mode != Mode::Position {
            return Some(false);
        }
        self.rates.clear();
        self.rates
            .extend(a.values.iter().zip(&b.values).map(|(x, y)| (y - x) / span));
        Some(true)
    }
}

ssx_sdk::export_plugins!(
    driver "joints" "drives a robot model's joints by position, velocity or effort, from a schedule or from outside" => Joints,
);
