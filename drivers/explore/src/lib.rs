//! Explorers for differential-drive ground robots (`libssx_driver_explore.so`), after MAES
//! (reference/002). Both drive a planar body by setting its velocity (as `diffdrive` does) and
//! need a full-ring `range` sensor on the robot for their bumper.
//!
//! - `random_walk` (MAES's baseline): straight ahead until something is nearer than `avoid` in
//!   the front quarter, then turn on the spot by a random angle from 90° to 180°, either way.
//! - `frontier`: every `replan` seconds (and when its goal is reached) it reads its own SLAM map
//!   from the `explore` extension (merged with the robots it could talk to), plans to the nearest
//!   frontier (a free cell beside an unknown one) through cells `clearance` away from what it
//!   believes occupied, skipping goals within `spread` of those other robots announced over
//!   comms, and follows the path. It announces its own goal with each plan. A robot that makes
//!   no progress for `stuck` seconds gives its goal up for a while and plans again.
//!
//! Planning uses the map and the pose estimate the SLAM sensor took; driving uses the robot's
//! odometry (its true pose).

pub mod frontier;

use std::f64::consts::{FRAC_PI_4, PI};

use serde::Deserialize;
use ssx_sdk::explore::{Explore, SlamMap};
use ssx_sdk::geometry::yaw;
use ssx_sdk::random::SplitMix;
use ssx_sdk::{Ctx, Driver, Init};

use frontier::{Plan, Planner};

/// Speeds, shared by both.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Motion {
    #[serde(default = "d_speed")]
    speed: f64,
    #[serde(default = "d_turn")]
    turn_rate: f64,
}

fn d_speed() -> f64 {
    0.5
}
fn d_turn() -> f64 {
    1.5
}
fn d_avoid() -> f64 {
    0.5
}
fn d_range() -> String {
    "range".into()
}

fn check(motion: &Motion, extra: &[(&str, f64)]) -> Result<(), String> {
    for (k, v) in [("speed", motion.speed), ("turn_rate", motion.turn_rate)]
        .iter()
        .chain(extra)
    {
        if !(v.is_finite() && *v > 0.0 && *v <= ssx_sdk::limits::DISTANCE) {
            return Err(format!(
                "invalid descriptor: '{k}' must be a positive number up to {}, got {v}",
                ssx_sdk::limits::DISTANCE
            ));
        }
    }
    Ok(())
}

fn wrap(a: f64) -> f64 {
    (a + PI).rem_euclid(2.0 * PI) - PI
}

fn drive(ctx: &Ctx<'_>, yaw: f64, linear: f64, angular: f64) -> Result<(), String> {
    let (s, c) = yaw.sin_cos();
    ctx.set_velocity(0, [c * linear, s * linear, 0.0], [0.0, 0.0, angular])?;
    Ok(())
}

/// The nearest reading of a full ring within 45° of straight ahead.
fn nearest_ahead(ranges: &[f64]) -> f64 {
    let n = ranges.len();
    ranges
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            let a = wrap(2.0 * PI * *i as f64 / n as f64);
            a.abs() <= FRAC_PI_4
        })
        .map(|(_, &d)| d)
        .fold(f64::INFINITY, f64::min)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WalkDescriptor {
    #[serde(flatten)]
    motion: Motion,
    /// Turn when something is nearer than this ahead (m).
    #[serde(default = "d_avoid")]
    avoid: f64,
    #[serde(default = "d_range")]
    range: String,
}

/// MAES's random explorer.
pub struct RandomWalk {
    d: WalkDescriptor,
    rng: SplitMix,
    range: Option<u32>,
    /// Radians still to turn (signed); 0 when going straight.
    turning: f64,
    timestep: f64,
}

impl Driver for RandomWalk {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        init.root_body()?;
        let d: WalkDescriptor =
            serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)?;
        check(&d.motion, &[("avoid", d.avoid)])?;
        Ok(RandomWalk {
            d,
            rng: SplitMix::new(init.seed),
            range: None,
            turning: 0.0,
            timestep: init.timestep,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let me = ctx.artifact();
        let range = match self.range {
            Some(r) => r,
            None => *self.range.insert(ctx.own_sensor(&self.d.range)?),
        };
        let yaw = yaw(ctx.body_state(me, 0)?.orientation);
        let m = self.d.motion;
        if self.turning == 0.0 {
            let (ranges, _) = ctx.reading(me, range)?;
            if nearest_ahead(ranges) < self.d.avoid {
                let angle = PI / 2.0 + self.rng.unit() * PI / 2.0;
                self.turning = if self.rng.unit() < 0.5 { angle } else { -angle };
            }
        }
        if self.turning != 0.0 {
            let w = m.turn_rate.copysign(self.turning);
            let left = self.turning - w * self.timestep;
            self.turning = if left * self.turning <= 0.0 {
                0.0
            } else {
                left
            };
            return drive(ctx, yaw, 0.0, w);
        }
        drive(ctx, yaw, m.speed, 0.0)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FrontierDescriptor {
    #[serde(flatten)]
    motion: Motion,
    /// Seconds between plans.
    #[serde(default = "d_replan")]
    replan: f64,
    /// Distance kept from occupied cells (m).
    #[serde(default = "d_clearance")]
    clearance: f64,
    /// Goals within this of another robot's announced goal are left to it (m).
    #[serde(default = "d_spread")]
    spread: f64,
    /// Give a goal up after this long without 0.25 m of progress (s).
    #[serde(default = "d_stuck")]
    stuck: f64,
    /// Back off when something is nearer than this ahead (m).
    #[serde(default = "d_bumper")]
    avoid: f64,
    #[serde(default = "d_range")]
    range: String,
    #[serde(default = "d_extension")]
    extension: String,
}

fn d_replan() -> f64 {
    1.0
}
fn d_clearance() -> f64 {
    0.3
}
fn d_spread() -> f64 {
    2.0
}
fn d_stuck() -> f64 {
    4.0
}
fn d_bumper() -> f64 {
    0.25
}
fn d_extension() -> String {
    "explore".into()
}

/// How long another robot's announced goal is respected, and a given-up goal avoided (s).
const CLAIM_S: f64 = 10.0;

/// The frontier explorer.
pub struct Frontier {
    d: FrontierDescriptor,
    explore: Option<Explore>,
    range: Option<u32>,
    planner: Planner,
    map: SlamMap,
    buffer: Vec<u8>,
    scratch: Vec<u8>,
    plan: Option<Plan>,
    along: usize,
    next_plan: f64,
    /// Goals to leave alone, whose (another robot's; none: given up), and until when.
    claimed: Vec<([f64; 2], Option<u32>, f64)>,
    goals: Vec<[f64; 2]>,
    /// Where and when progress was last made.
    progress: ([f64; 2], f64),
}

impl Driver for Frontier {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        init.root_body()?;
        let d: FrontierDescriptor =
            serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)?;
        check(
            &d.motion,
            &[
                ("replan", d.replan),
                ("clearance", d.clearance),
                ("spread", d.spread),
                ("stuck", d.stuck),
                ("avoid", d.avoid),
            ],
        )?;
        // Robots plan on different steps, not all on one.
        let phase = (init.seed % 1000) as f64 / 1000.0 * d.replan;
        Ok(Frontier {
            d,
            explore: None,
            range: None,
            planner: Planner::default(),
            map: SlamMap::default(),
            buffer: Vec::new(),
            scratch: Vec::new(),
            plan: None,
            along: 0,
            next_plan: phase,
            claimed: Vec::new(),
            goals: Vec::new(),
            progress: ([f64::NAN; 2], 0.0),
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let me = ctx.artifact();
        let explore = match self.explore {
            Some(e) => e,
            None => *self.explore.insert(Explore::find(ctx, &self.d.extension)?),
        };
        let range = match self.range {
            Some(r) => r,
            None => *self.range.insert(ctx.own_sensor(&self.d.range)?),
        };
        let (now, _) = ctx.time()?;
        let s = ctx.body_state(me, 0)?;
        let (pos, yaw) = ([s.position[0], s.position[1]], yaw(s.orientation));
        // Others' goals.
        for (from, msg) in explore.receive(ctx, &mut self.buffer)? {
            if let (Ok(x), Ok(y)) = (
                msg.get(..8)
                    .unwrap_or_default()
                    .try_into()
                    .map(f64::from_le_bytes),
                msg.get(8..16)
                    .unwrap_or_default()
                    .try_into()
                    .map(f64::from_le_bytes),
            ) {
                // A robot's newest goal replaces its older one.
                self.claimed.retain(|(_, who, _)| *who != Some(from));
                self.claimed.push(([x, y], Some(from), now + CLAIM_S));
            }
        }
        self.claimed.retain(|(_, _, until)| *until > now);
        // Stuck: give the goal up for a while.
        let moved = (pos[0] - self.progress.0[0]).hypot(pos[1] - self.progress.0[1]);
        // NaN (no progress point yet) counts as progress.
        if moved.is_nan() || moved >= 0.25 {
            self.progress = (pos, now);
        } else if now - self.progress.1 > self.d.stuck {
            if let Some(p) = self.plan.take() {
                self.claimed.push((p.goal, None, now + CLAIM_S));
            }
            self.progress = (pos, now);
            self.next_plan = now;
        }
        let reached = self
            .plan
            .as_ref()
            .is_some_and(|p| (p.goal[0] - pos[0]).hypot(p.goal[1] - pos[1]) < self.d.clearance);
        if now >= self.next_plan || reached {
            self.next_plan = now + self.d.replan;
            if explore.map(ctx, &mut self.map, &mut self.buffer).is_ok() {
                self.goals.clear();
                self.goals.extend(self.claimed.iter().map(|(g, _, _)| *g));
                let at = [self.map.pose[0], self.map.pose[1]];
                // Squeezed in (by walls or other robots seen as obstacles): plan without the
                // clearance rather than stand still.
                let (map, goals, spread) = (&self.map, &self.goals[..], self.d.spread);
                self.plan = self
                    .planner
                    .plan(map, at, self.d.clearance, goals, spread)
                    .or_else(|| self.planner.plan(map, at, 0.0, goals, spread))
                    // Every frontier left is someone else's: share one rather than idle.
                    .or_else(|| self.planner.plan(map, at, 0.0, &[], 0.0));
                self.along = 0;
                if let Some(p) = &self.plan {
                    let mut msg = [0u8; 16];
                    msg[..8].copy_from_slice(&p.goal[0].to_le_bytes());
                    msg[8..].copy_from_slice(&p.goal[1].to_le_bytes());
                    // A scene without comms still explores, alone.
                    let _ = explore.send(ctx, &msg, &mut self.scratch);
                }
            }
        }
        let Some(plan) = &self.plan else {
            return drive(ctx, yaw, 0.0, 0.0);
        };
        // Pure pursuit: aim a few cells ahead of the nearest path point not yet passed.
        while self.along + 1 < plan.path.len() {
            let p = plan.path[self.along];
            if (p[0] - pos[0]).hypot(p[1] - pos[1]) < 2.0 * self.map.cell {
                self.along += 1;
            } else {
                break;
            }
        }
        let target = plan
            .path
            .get((self.along + 2).min(plan.path.len().saturating_sub(1)))
            .copied()
            .unwrap_or(plan.goal);
        let error = wrap((target[1] - pos[1]).atan2(target[0] - pos[0]) - yaw);
        let m = self.d.motion;
        let angular = (2.0 * error).clamp(-m.turn_rate, m.turn_rate);
        let (ranges, _) = ctx.reading(me, range)?;
        let blocked = nearest_ahead(ranges) < self.d.avoid;
        let linear = if error.abs() > PI / 3.0 || blocked {
            0.0
        } else {
            m.speed * error.cos()
        };
        drive(ctx, yaw, linear, angular)
    }
}

ssx_sdk::export_plugins!(
    driver "random_walk" "MAES's random explorer: straight until blocked, then a random turn" => RandomWalk,
    driver "frontier" "nearest-frontier explorer on the robot's own SLAM map, sharing goals over comms" => Frontier,
);
