//! The `door` driver (`libssx_driver_door.so`): SwarmSimX's automatic door. A kinematic panel
//! slides along an axis: it opens when a moving thing (a body with mass: a robot, not a wall or
//! the floor) comes within `range` of where the panel stands closed, and closes once nothing has
//! been within range for `close_after` seconds.
//!
//! Descriptor: `axis` (the opening direction in the door's own frame, default [1, 0, 0]),
//! `travel` (m, default 1), `speed` (m/s, default 0.5), `range` (m, default 1.5), `close_after`
//! (s, default 3). The door artifact's first body must be kinematic.

use serde::Deserialize;
use ssx_sdk::{Ctx, Driver, Init};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    #[serde(default = "d_axis")]
    axis: [f64; 3],
    #[serde(default = "d_travel")]
    travel: f64,
    #[serde(default = "d_speed")]
    speed: f64,
    #[serde(default = "d_range")]
    range: f64,
    #[serde(default = "d_close")]
    close_after: f64,
}

fn d_axis() -> [f64; 3] {
    [1.0, 0.0, 0.0]
}
fn d_travel() -> f64 {
    1.0
}
fn d_speed() -> f64 {
    0.5
}
fn d_range() -> f64 {
    1.5
}
fn d_close() -> f64 {
    3.0
}

struct Door {
    d: Descriptor,
    /// Where the panel stands closed, and the opening direction (world frame): the first step.
    closed: Option<([f64; 3], [f64; 3])>,
    last_seen: Option<f64>,
    near: Vec<u32>,
    timestep: f64,
}

fn rotate(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
    let [w, x, y, z] = q;
    // v + 2w(u × v) + 2u × (u × v), u = (x, y, z).
    let c = [
        y * v[2] - z * v[1],
        z * v[0] - x * v[2],
        x * v[1] - y * v[0],
    ];
    let cc = [
        y * c[2] - z * c[1],
        z * c[0] - x * c[2],
        x * c[1] - y * c[0],
    ];
    std::array::from_fn(|i| v[i] + 2.0 * (w * c[i] + cc[i]))
}

impl Driver for Door {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        init.root_body()?;
        let mut d: Descriptor =
            serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)?;
        let norm = d.axis.iter().map(|x| x * x).sum::<f64>().sqrt();
        if !(norm.is_finite() && norm > 0.0) {
            return Err("invalid descriptor: 'axis' must be a non-zero vector".into());
        }
        d.axis = d.axis.map(|x| x / norm);
        let positive = [d.travel, d.speed, d.range, d.close_after]
            .iter()
            .all(|x| x.is_finite() && *x > 0.0);
        if !positive {
            return Err(
                "invalid descriptor: 'travel', 'speed', 'range' and 'close_after' must be finite numbers > 0"
                    .into(),
            );
        }
        Ok(Door {
            d,
            closed: None,
            last_seen: None,
            near: Vec::new(),
            timestep: init.timestep,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let me = ctx.artifact();
        let s = ctx.body_state(me, 0)?;
        let (closed, axis) = *self
            .closed
            .get_or_insert_with(|| (s.position, rotate(s.orientation, self.d.axis)));
        let (t, _) = ctx.time()?;
        ctx.neighbours(closed, self.d.range, &mut self.near)?;
        for &a in &self.near {
            if ctx.body_mass(a, 0)? > 0.0 {
                self.last_seen = Some(t);
                break;
            }
        }
        let open = self
            .last_seen
            .is_some_and(|seen| t - seen < self.d.close_after);
        let goal = if open { self.d.travel } else { 0.0 };
        let now: f64 = (0..3).map(|i| (s.position[i] - closed[i]) * axis[i]).sum();
        let v = ((goal - now) / self.timestep).clamp(-self.d.speed, self.d.speed);
        ctx.set_velocity(0, axis.map(|a| a * v), [0.0; 3])?;
        Ok(())
    }
}

ssx_sdk::export_plugins!(
    driver "door" "an automatic sliding door: opens when a robot comes near, closes after a while without anyone" => Door,
);
