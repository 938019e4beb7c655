//! The batch as flat arrays: state rows, readings and observations written into the caller's
//! buffers, and commands for many worlds at once, each call shared among the workers.

use ssx_core::Environment;
use ssx_zenoh::mailbox::Message;

use super::{World, Worlds, parts};
use crate::error::WorldsError;
use crate::rows::{STATE_WIDTH, known_sensors, state_row};

impl Worlds {
    /// Body rows of world `k` for `artifacts` (each one's first body), or every body.
    fn rows(&self, k: usize, artifacts: Option<&[usize]>) -> Vec<usize> {
        let env = &self.worlds[k].env;
        match artifacts {
            Some(a) => a
                .iter()
                .map(|&i| env.artifacts()[i].bodies.start as usize)
                .collect(),
            None => (0..env.states().len()).collect(),
        }
    }

    /// Rows a world has in `states_into` (the same in every world, checked).
    pub fn state_rows(&self, artifacts: Option<&[usize]>) -> Result<usize, WorldsError> {
        let n = self.rows(0, artifacts).len();
        if artifacts.is_none()
            && let Some(k) = self.worlds.iter().position(|w| w.env.states().len() != n)
        {
            return Err(WorldsError::Argument(format!(
                "world {k} has {} bodies and world 0 has {n} (a map generated from the seed): name the artifacts whose states you want",
                self.worlds[k].env.states().len()
            )));
        }
        Ok(n)
    }

    /// Fills `out` (`per_world` values a world, world after world) on the workers, each its
    /// share of the worlds: `f(world, its values)`. `what` names the values in the error for a
    /// buffer of the wrong size.
    fn fill(
        &mut self,
        per_world: usize,
        out: &mut [f64],
        what: &str,
        f: &(dyn Fn(&Environment, &mut [f64]) + Sync),
    ) -> Result<(), WorldsError> {
        let need = self.worlds.len() * per_world;
        if out.len() != need {
            return Err(WorldsError::Argument(format!(
                "the {what} need {need} values ({} worlds × {per_world}), the buffer has {}",
                self.worlds.len(),
                out.len()
            )));
        }
        if per_world == 0 {
            return Ok(());
        }
        let mut pairs: Vec<(&mut World, &mut [f64])> = self
            .worlds
            .iter_mut()
            .zip(out.chunks_exact_mut(per_world))
            .collect();
        let mut work = parts(&mut pairs, self.pool.workers());
        self.pool.for_each_mut(&mut work, &|_, part| {
            for (w, dst) in part.items.iter_mut() {
                f(&w.env, dst);
            }
        });
        Ok(())
    }

    /// Fills `out` (K × rows × 13, row-major) with the body states: position, quaternion
    /// (x, y, z, w), linear and angular velocity; every body, or each of `artifacts`' first.
    pub fn states_into(
        &mut self,
        artifacts: Option<&[usize]>,
        out: &mut [f64],
    ) -> Result<(), WorldsError> {
        let n = self.state_rows(artifacts)?;
        self.fill(n * STATE_WIDTH, out, "states", &|env, dst| {
            let states = env.states();
            let rows = dst.chunks_exact_mut(STATE_WIDTH);
            match artifacts {
                None => rows.zip(states).for_each(|(row, s)| state_row(s, row)),
                Some(a) => rows.zip(a).for_each(|(row, &i)| {
                    state_row(&states[env.artifacts()[i].bodies.start as usize], row)
                }),
            }
        })
    }

    /// The widest reading of `sensor` among `artifacts` in any world (values a row needs).
    pub fn reading_width(
        &mut self,
        sensor: &str,
        artifacts: &[usize],
    ) -> Result<usize, WorldsError> {
        let index = self.sensor_indices(sensor, artifacts)?;
        let mut widths = vec![0.0; self.worlds.len()];
        self.fill(1, &mut widths, "widths", &|env, dst| {
            let widest = artifacts
                .iter()
                .zip(&index)
                .filter_map(|(&a, &s)| env.reading_at(a, s))
                .map(|r| r.values().len())
                .max()
                .unwrap_or(0);
            dst[0] = widest as f64;
        })?;
        Ok(widths.into_iter().fold(0.0, f64::max) as usize)
    }

    /// Each artifact's index of its sensor `sensor` (an error naming the sensors that exist).
    pub(super) fn sensor_indices(
        &self,
        sensor: &str,
        artifacts: &[usize],
    ) -> Result<Vec<usize>, WorldsError> {
        let env = &self.worlds[0].env;
        artifacts
            .iter()
            .map(|&a| {
                let info = &env.artifacts()[a];
                info.sensor_index(sensor).ok_or_else(|| {
                    WorldsError::Name(format!(
                        "artifact '{}' has no sensor '{sensor}'{}",
                        info.name,
                        known_sensors(std::slice::from_ref(info), sensor)
                    ))
                })
            })
            .collect()
    }

    /// Fills `out` (K × artifacts × width) with the newest readings of `sensor`; values past a
    /// reading's length (not taken yet, fewer rays) are NaN.
    pub fn readings_into(
        &mut self,
        sensor: &str,
        artifacts: &[usize],
        width: usize,
        out: &mut [f64],
    ) -> Result<(), WorldsError> {
        let index = self.sensor_indices(sensor, artifacts)?;
        self.fill(artifacts.len() * width, out, "readings", &|env, dst| {
            for ((&a, &s), dst) in artifacts
                .iter()
                .zip(&index)
                .zip(dst.chunks_exact_mut(width))
            {
                let values = env.reading_at(a, s).map_or(&[][..], |r| r.values());
                let n = values.len().min(width);
                dst[..n].copy_from_slice(&values[..n]);
                dst[n..].fill(f64::NAN);
            }
        })
    }

    /// Fills `out` (K × artifacts × (width + 4)) with the observations a learning env gives:
    /// the newest `width` values of `sensor` (0 past a reading's end and for NaN: nothing
    /// seen), then x, y, cos yaw, sin yaw of each artifact's first body. The heading is the
    /// quaternion's (1 − 2(qy² + qz²), 2(qw qz + qx qy)) made unit length ((0, 0) for a body
    /// on its side), computed as `ssx.envs.single.observation` computes it, to the bit.
    pub fn observe_into(
        &mut self,
        sensor: &str,
        artifacts: &[usize],
        width: usize,
        out: &mut [f64],
    ) -> Result<(), WorldsError> {
        let index = self.sensor_indices(sensor, artifacts)?;
        let per_world = artifacts.len() * (width + 4);
        self.fill(per_world, out, "observations", &|env, dst| {
            observe_world(env, artifacts, &index, width, dst)
        })
    }

    /// Fills `out` (K × artifacts) with each artifact's distance in the plane to the nearest
    /// other of `artifacts` in its world (first bodies; infinity when alone): what the
    /// dispersal task rewards, every pair checked, on the workers. The same bits as
    /// `ssx.envs.single.nearest` (√(dx·dx + dy·dy), the smallest).
    pub fn nearest_into(
        &mut self,
        artifacts: &[usize],
        out: &mut [f64],
    ) -> Result<(), WorldsError> {
        self.fill(artifacts.len(), out, "distances", &|env, dst| {
            nearest_world(env, artifacts, dst)
        })
    }

    /// Hands row (k, j) of `values` (K × artifacts × width, in the order of the subscription's
    /// fields) to world k's driver of `artifacts[j]`, on `pattern` with `{}` for the artifact's
    /// name. Every row is checked as the Zenoh bridge checks a command before any is handed
    /// over: a refused one fails the whole call, naming world and robot, and the worlds go on
    /// as before it. Returns how many reached a driver now (the others wait for their driver's
    /// first step).
    pub fn command_many(
        &mut self,
        artifacts: &[usize],
        values: &[f64],
        width: usize,
        pattern: &str,
    ) -> Result<usize, WorldsError> {
        if !self.check_commands(artifacts, values, width, pattern)? {
            return Ok(0);
        }
        let n = artifacts.len();
        let mut rows: Vec<(&mut World, &[f64], usize)> = self
            .worlds
            .iter_mut()
            .zip(values.chunks_exact(n * width))
            .map(|(w, v)| (w, v, 0))
            .collect();
        let (keys, names) = (&self.command_keys, &self.names);
        let mut work = parts(&mut rows, self.pool.workers());
        self.pool.for_each_mut(&mut work, &|_, part| {
            for (i, (w, v, now)) in part.items.iter_mut().enumerate() {
                match hand_over(w, keys, v, width) {
                    Ok(sent) => *now = sent,
                    Err((j, m)) => {
                        let e = refused(names, keys, artifacts, part.first + i, j, m);
                        part.error.get_or_insert(e);
                    }
                }
            }
        });
        if let Some(e) = work.into_iter().find_map(|p| p.error) {
            return Err(e);
        }
        Ok(rows.iter().map(|r| r.2).sum())
    }

    /// Checks `values` (K × artifacts × width) as commands on `pattern` before any is handed
    /// over: the shapes, then every row on the workers as the Zenoh bridge checks a command.
    /// Keeps the keys' inboxes for [`hand_over`]. False when there is nothing to hand over
    /// (no artifact).
    pub(super) fn check_commands(
        &mut self,
        artifacts: &[usize],
        values: &[f64],
        width: usize,
        pattern: &str,
    ) -> Result<bool, WorldsError> {
        let n = artifacts.len();
        let need = self.worlds.len() * n * width;
        if values.len() != need {
            return Err(WorldsError::Argument(format!(
                "values has {} numbers; {} worlds × {n} robots × {width} need {need}",
                values.len(),
                self.worlds.len()
            )));
        }
        if width == 0 {
            return Err(WorldsError::Argument(
                "values has no column: a command has at least one value".into(),
            ));
        }
        if n == 0 {
            return Ok(false);
        }
        let keys: Vec<String> = artifacts
            .iter()
            .map(|&a| pattern.replace("{}", &self.names[a]))
            .collect();
        if keys != self.command_keys {
            for w in &mut self.worlds {
                w.inboxes = vec![None; n];
            }
            self.command_keys = keys;
        }
        let (keys, names) = (&self.command_keys, &self.names);
        let mut rows: Vec<(&mut World, &[f64])> = self
            .worlds
            .iter_mut()
            .zip(values.chunks_exact(n * width))
            .collect();
        let mut work = parts(&mut rows, self.pool.workers());
        self.pool.for_each_mut(&mut work, &|_, part| {
            let mut scratch = [0.0; ssx_sdk::bus::MAX_VALUES];
            for (i, (w, v)) in part.items.iter_mut().enumerate() {
                for (j, row) in v.chunks_exact(width).enumerate() {
                    if w.inboxes[j].is_none() {
                        w.inboxes[j] = w.bus.inbox_for(&keys[j]);
                    }
                    if let Some(inbox) = &w.inboxes[j]
                        && let Err(m) = inbox.spec.from_values(row, &mut scratch)
                    {
                        let e = refused(names, keys, artifacts, part.first + i, j, m);
                        part.error.get_or_insert(e);
                        return;
                    }
                }
            }
        });
        match work.into_iter().find_map(|p| p.error) {
            Some(e) => Err(e),
            None => Ok(true),
        }
    }

    /// Each world's figure `name` as its extensions report it (`explore.explored`), NaN where
    /// a world has none.
    pub fn metric(&self, name: &str) -> Vec<f64> {
        self.worlds
            .iter()
            .map(|w| {
                w.env
                    .metrics()
                    .iter()
                    .find(|(k, _)| k == name)
                    .map_or(f64::NAN, |(_, v)| *v)
            })
            .collect()
    }
}

/// A command refused for world `world`'s `artifacts[j]`.
pub(super) fn refused(
    names: &[String],
    keys: &[String],
    artifacts: &[usize],
    world: usize,
    j: usize,
    message: String,
) -> WorldsError {
    WorldsError::Command {
        world,
        robot: names[artifacts[j]].clone(),
        key: keys[j].clone(),
        message,
    }
}

/// Hands world `w` its rows of checked commands (`values`: artifacts × width, on `keys`):
/// how many reached a driver now, or the row refused and why.
pub(super) fn hand_over(
    w: &mut World,
    keys: &[String],
    values: &[f64],
    width: usize,
) -> Result<usize, (usize, String)> {
    let mut now = 0;
    for (j, row) in values.chunks_exact(width).enumerate() {
        let row = Message::Values(row);
        let sent = match &w.inboxes[j] {
            Some(inbox) => inbox.put(row).map(|()| true),
            None => w
                .bus
                .put(&keys[j], row)
                .map(|d| matches!(d, crate::bus::Delivered::Now)),
        };
        match sent {
            Ok(true) => now += 1,
            Ok(false) => {}
            Err(m) => return Err((j, m)),
        }
    }
    Ok(now)
}

/// One world's observations (artifacts × (width + 4)): see [`Worlds::observe_into`].
pub(super) fn observe_world(
    env: &Environment,
    artifacts: &[usize],
    index: &[usize],
    width: usize,
    dst: &mut [f64],
) {
    let states = env.states();
    let rows = dst.chunks_exact_mut(width + 4);
    for ((&a, &s), dst) in artifacts.iter().zip(index).zip(rows) {
        let values = env.reading_at(a, s).map_or(&[][..], |r| r.values());
        let n = values.len().min(width);
        for (d, &v) in dst[..n].iter_mut().zip(&values[..n]) {
            *d = if v.is_nan() { 0.0 } else { v };
        }
        dst[n..width].fill(0.0);
        let b = &states[env.artifacts()[a].bodies.start as usize];
        let t = b.pose.translation.vector;
        let q = b.pose.rotation.coords; // x, y, z, w
        let c = 1.0 - 2.0 * (q[1] * q[1] + q[2] * q[2]);
        let s = 2.0 * (q[3] * q[2] + q[0] * q[1]);
        let mut r = c.hypot(s);
        if r == 0.0 {
            r = 1.0;
        }
        dst[width..].copy_from_slice(&[t.x, t.y, c / r, s / r]);
    }
}

/// One world's distances to the nearest other artifact (one value an artifact): see
/// [`Worlds::nearest_into`].
pub(super) fn nearest_world(env: &Environment, artifacts: &[usize], dst: &mut [f64]) {
    let states = env.states();
    let xy = |a: usize| {
        let t = states[env.artifacts()[a].bodies.start as usize]
            .pose
            .translation
            .vector;
        (t.x, t.y)
    };
    for (i, d) in dst.iter_mut().enumerate() {
        let (x, y) = xy(artifacts[i]);
        let mut best = f64::INFINITY;
        for (j, &a) in artifacts.iter().enumerate() {
            let (u, v) = xy(a);
            let (dx, dy) = (x - u, y - v);
            let d2 = dx * dx + dy * dy;
            if j != i && d2 < best {
                best = d2;
            }
        }
        *d = best.sqrt();
    }
}
