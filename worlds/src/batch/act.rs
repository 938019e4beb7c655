//! A learning env's step as one pass a world: the commands handed over, the steps, then the
//! observations, distances and the task's reward filled while the world is still in the
//! caches. The same values as [`Worlds::command_many`], [`Worlds::step_some`],
//! [`Worlds::observe_into`] and [`Worlds::nearest_into`] called one after the other (and the
//! task's Python reward on their arrays), to the bit; each of those visits every world once
//! more, and a batch of 1024 small worlds does not fit in the caches.

use super::arrays::{hand_over, nearest_world, observe_world, refused};
use super::task::{TaskAct, TaskRow, task_world};
use super::{World, Worlds, fetch_ahead, parts, step_world};
use crate::error::WorldsError;

/// Commands for [`Act`]: K × artifacts × `width` values, each row in the order of its
/// subscription's fields, on `pattern` (`{}` for the artifact's name).
#[derive(Clone, Copy, Debug)]
pub struct Commands<'a> {
    /// The values, world after world, robot after robot.
    pub values: &'a [f64],
    /// Values a command.
    pub width: usize,
    /// The key, `{}` for the artifact's name (`artifacts/{}/cmd`).
    pub pattern: &'a str,
}

/// Observations for [`Act`]: K × artifacts × (`width` + 4), as [`Worlds::observe_into`].
#[derive(Debug)]
pub struct Observe<'a> {
    /// The sensor read.
    pub sensor: &'a str,
    /// Its values kept a row.
    pub width: usize,
    /// Where they go.
    pub out: &'a mut [f64],
}

/// A shipped task's reward, one value a robot, computed in the pass from its observations and
/// distances as the task's Python function computes it from the same arrays, to the bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reward {
    /// `ssx.envs.dispersal_reward`: min(nearest / 2, 1), less 1 when a range in the
    /// observation is above 0 and below 0.3 (0 there: nothing seen).
    Dispersal,
}

impl Reward {
    /// Its name in Python (`reward="dispersal"`).
    pub fn name(self) -> &'static str {
        match self {
            Reward::Dispersal => "dispersal",
        }
    }

    /// One world's rewards from its observations (artifacts × (width + 4)) and distances.
    fn fill(self, obs: &[f64], nearest: &[f64], width: usize, out: &mut [f64]) {
        match self {
            Reward::Dispersal => {
                for ((o, &d), r) in obs.chunks_exact(width + 4).zip(nearest).zip(out) {
                    let near = o[..width].iter().any(|&v| v > 0.0 && v < 0.3);
                    // np.minimum's: NaN stays NaN (f64::min would give 1).
                    let half = d / 2.0;
                    let capped = if half.is_nan() || half < 1.0 {
                        half
                    } else {
                        1.0
                    };
                    *r = capped - if near { 1.0 } else { 0.0 };
                }
            }
        }
    }
}

/// What [`Worlds::act`] does for every world, in one pass.
#[derive(Debug)]
pub struct Act<'a> {
    /// The robots (artifact indices) that the commands, observations and distances are of.
    pub artifacts: &'a [usize],
    /// Commands handed over first, to every world (also those the mask leaves out, as
    /// [`Worlds::command_many`] does); checked, every row, before any is handed over.
    pub commands: Option<Commands<'a>>,
    /// Steps each world takes.
    pub steps: u64,
    /// The worlds that step (None: all).
    pub mask: Option<&'a [bool]>,
    /// Observations filled after the steps, for every world.
    pub observe: Option<Observe<'a>>,
    /// Each robot's distance to its world's nearest other (K × artifacts), after the steps.
    pub nearest: Option<&'a mut [f64]>,
    /// A task's reward (K × artifacts) from the observations and distances; needs both.
    pub reward: Option<(Reward, &'a mut [f64])>,
    /// A task of `ssx_tasks` (its observations, rewards, episode ends, metrics and states),
    /// the artifacts its agents.
    pub task: Option<TaskAct<'a>>,
}

/// One world's share of an [`Act`].
struct Row<'a> {
    world: &'a mut World,
    commands: &'a [f64],
    on: bool,
    observe: Option<&'a mut [f64]>,
    nearest: Option<&'a mut [f64]>,
    reward: Option<&'a mut [f64]>,
    task: Option<TaskRow<'a>>,
    sent: usize,
}

/// Cuts `out` into `k` rows of `per_world` values (`None` each when there is no buffer).
fn rows_of(out: Option<&mut [f64]>, k: usize, per_world: usize) -> Vec<Option<&mut [f64]>> {
    match out {
        Some(o) if per_world > 0 => o.chunks_exact_mut(per_world).map(Some).collect(),
        Some(_) => (0..k).map(|_| Some(&mut [][..])).collect(),
        None => (0..k).map(|_| None).collect(),
    }
}

/// An error for a buffer of `got` values where `need` were due.
fn size(what: &str, need: usize, got: usize, k: usize, per_world: usize) -> WorldsError {
    WorldsError::Argument(format!(
        "the {what} need {need} values ({k} worlds × {per_world}), the buffer has {got}"
    ))
}

impl Worlds {
    /// A learning env's step in one pass a world (see [`Act`]): returns how many commands
    /// reached a driver now. A refused command fails the whole call before anything is handed
    /// over or stepped, naming world and robot; a plugin failing in strict mode names the
    /// first world it failed in, and the others have done their steps.
    pub fn act(&mut self, act: Act<'_>) -> Result<usize, WorldsError> {
        let Act {
            artifacts,
            commands,
            steps,
            mask,
            observe,
            nearest,
            reward,
            task: task_act,
        } = act;
        let k = self.worlds.len();
        let n = artifacts.len();
        if let Some(m) = mask
            && m.len() != k
        {
            return Err(WorldsError::Argument(format!(
                "mask has {} values for {k} worlds",
                m.len()
            )));
        }
        if let Some(&a) = artifacts.iter().find(|&&a| a >= self.names.len()) {
            return Err(WorldsError::Argument(format!(
                "no artifact {a}: the scene has {}",
                self.names.len()
            )));
        }
        let (sensor, width, observe) = match observe {
            Some(o) => {
                let per_world = n * (o.width + 4);
                if o.out.len() != k * per_world {
                    return Err(size(
                        "observations",
                        k * per_world,
                        o.out.len(),
                        k,
                        per_world,
                    ));
                }
                (Some(o.sensor), o.width, Some(o.out))
            }
            None => (None, 0, None),
        };
        if let Some(d) = &nearest
            && d.len() != k * n
        {
            return Err(size("distances", k * n, d.len(), k, n));
        }
        let (task, reward) = match reward {
            Some((task, out)) => {
                if observe.is_none() || nearest.is_none() {
                    return Err(WorldsError::Argument(format!(
                        "the {} reward reads the observations and the distances: ask for both",
                        task.name()
                    )));
                }
                if out.len() != k * n {
                    return Err(size("rewards", k * n, out.len(), k, n));
                }
                (Some(task), Some(out))
            }
            None => (None, None),
        };
        let index = match sensor {
            Some(s) => self.sensor_indices(s, artifacts)?,
            None => Vec::new(),
        };
        let (values, cwidth) = match commands {
            Some(c) if self.check_commands(artifacts, c.values, c.width, c.pattern)? => {
                (c.values, c.width)
            }
            _ => (&[][..], 0),
        };
        let lidar = match task_act.as_ref().and_then(|t| t.lidar) {
            Some(s) => self.sensor_indices(s, artifacts)?,
            None => Vec::new(),
        };
        let (task_common, task_rows) = match task_act {
            Some(t) => {
                let (common, rows) = t.rows(k, n, &lidar)?;
                (Some(common), rows.into_iter().map(Some).collect())
            }
            None => (None, (0..k).map(|_| None).collect::<Vec<_>>()),
        };
        let per_world_commands = n * cwidth;
        let observe = rows_of(observe, k, n * (width + 4));
        let nearest = rows_of(nearest, k, n);
        let reward = rows_of(reward, k, n);
        let mut rows: Vec<Row<'_>> = self
            .worlds
            .iter_mut()
            .zip(observe)
            .zip(nearest)
            .zip(reward)
            .zip(task_rows)
            .enumerate()
            .map(|(i, ((((world, observe), nearest), reward), task))| Row {
                world,
                commands: if cwidth == 0 {
                    &[]
                } else {
                    &values[i * per_world_commands..(i + 1) * per_world_commands]
                },
                on: mask.is_none_or(|m| m[i]),
                observe,
                nearest,
                reward,
                task,
                sent: 0,
            })
            .collect();
        let (keys, names) = (&self.command_keys, &self.names);
        let mut work = parts(&mut rows, self.pool.workers());
        self.pool.for_each_mut(&mut work, &|_, part| {
            for i in 0..part.items.len() {
                fetch_ahead(part.items, i, |row| &*row.world);
                let row = &mut part.items[i];
                let world = part.first + i;
                if cwidth > 0 {
                    match hand_over(row.world, keys, row.commands, cwidth) {
                        Ok(sent) => row.sent = sent,
                        Err((j, m)) => {
                            part.error
                                .get_or_insert(refused(names, keys, artifacts, world, j, m));
                            continue;
                        }
                    }
                }
                // A task's action acts in the step it is given (Environment::redrive).
                if row.on && cwidth > 0 && task_common.is_some() {
                    row.world.env.redrive();
                }
                if row.on
                    && let Err(source) = step_world(&mut row.world.env, steps)
                {
                    part.error
                        .get_or_insert(WorldsError::Strict { world, source });
                }
                let env = &row.world.env;
                if let Some(dst) = row.observe.as_deref_mut() {
                    observe_world(env, artifacts, &index, width, dst);
                }
                if let Some(dst) = row.nearest.as_deref_mut() {
                    nearest_world(env, artifacts, dst);
                }
                if let (Some(task), Some(out), Some(obs), Some(near)) = (
                    task,
                    row.reward.as_deref_mut(),
                    row.observe.as_deref(),
                    row.nearest.as_deref(),
                ) {
                    task.fill(obs, near, width, out);
                }
                if let (Some(c), Some(t)) = (&task_common, row.task.as_mut()) {
                    task_world(env, artifacts, c, row.on, t);
                }
            }
        });
        if let Some(e) = work.into_iter().find_map(|p| p.error) {
            return Err(e);
        }
        Ok(rows.iter().map(|r| r.sent).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::Reward;

    /// The dispersal reward of three robots, by hand: the distance halved and capped at 1, less
    /// 1 where a range above 0 (0: nothing seen) is below 0.3; the pose columns are not ranges.
    #[test]
    fn the_dispersal_reward_by_hand() {
        let width = 3;
        #[rustfmt::skip]
        let obs = [
            0.0, 0.5, 2.0,   0.1, 0.2, 0.0, 0.0,  // nothing within 0.3 (the x of 0.1 is a pose)
            0.0, 0.29, 0.0,  5.0, 5.0, 1.0, 0.0,  // 0.29 seen
            0.3, 0.0, 0.0,   0.0, 0.0, 1.0, 0.0,  // 0.3 is not below 0.3
        ];
        let nearest = [0.8, 3.0, f64::INFINITY];
        let mut out = [0.0; 3];
        Reward::Dispersal.fill(&obs, &nearest, width, &mut out);
        assert_eq!(out, [0.4, 0.0, 1.0]);
    }
}
