//! A task's values in [`Worlds::act`]'s pass (`ssx_tasks`): each world's agents and the task's
//! own bodies read from its states, its agents' lidar from their range readings, then the
//! task's observations, rewards, episode end, metrics and state, while the world is still in
//! the caches.

use smallvec::SmallVec;
use ssx_core::Environment;
use ssx_tasks::{Body, Task, World};

use crate::error::WorldsError;

/// What [`crate::Worlds::act`] fills for a task (each buffer world after world). With a task, the
/// commands handed over act in the first of the steps that follow: the drivers decide again
/// before it (`Environment::redrive`), as VMAS applies an action in the step it is given.
#[derive(Debug)]
pub struct TaskAct<'a> {
    /// The task.
    pub task: &'a Task,
    /// Its own bodies (artifact indices, in the task's order); the agents are the act's
    /// artifacts.
    pub objects: &'a [usize],
    /// The range sensor that is each agent's lidar (None: the task has none).
    pub lidar: Option<&'a str>,
    /// A new episode in the worlds that stepped: the memory is set, the rewards are 0.
    pub start: bool,
    /// K × agents × [`Task::observation_width`].
    pub obs: &'a mut [f64],
    /// K × agents.
    pub reward: &'a mut [f64],
    /// K: 1 where the episode is over.
    pub done: &'a mut [f64],
    /// K × [`Task::memory`]: kept by the caller between calls.
    pub memory: &'a mut [f64],
    /// K × the task's metrics.
    pub metrics: &'a mut [f64],
    /// K × [`Task::state_width`].
    pub state: &'a mut [f64],
}

/// One world's share of a [`TaskAct`].
#[derive(Debug)]
pub(super) struct TaskRow<'a> {
    obs: &'a mut [f64],
    reward: &'a mut [f64],
    done: &'a mut f64,
    memory: &'a mut [f64],
    metrics: &'a mut [f64],
    state: &'a mut [f64],
}

/// What every world's row shares.
#[derive(Clone, Copy, Debug)]
pub(super) struct TaskCommon<'a> {
    task: &'a Task,
    objects: &'a [usize],
    /// Each agent's lidar sensor index (empty: none).
    lidar: &'a [usize],
    start: bool,
}

impl<'a> TaskAct<'a> {
    /// Checks the buffers' sizes for `k` worlds of `agents`, and cuts them into rows.
    pub(super) fn rows(
        self,
        k: usize,
        agents: usize,
        lidar: &'a [usize],
    ) -> Result<(TaskCommon<'a>, Vec<TaskRow<'a>>), WorldsError> {
        let t = self.task;
        if agents != t.agents() || self.objects.len() != t.objects() {
            return Err(WorldsError::Argument(format!(
                "the {} task reads {} agents and {} bodies of its own, not {agents} and {}",
                t.name(),
                t.agents(),
                t.objects(),
                self.objects.len()
            )));
        }
        let widths = [
            (
                "observations",
                agents * t.observation_width(),
                self.obs.len(),
            ),
            ("rewards", agents, self.reward.len()),
            ("episode ends", 1, self.done.len()),
            ("task memory", t.memory(), self.memory.len()),
            ("metrics", t.metric_names().len(), self.metrics.len()),
            ("states", t.state_width(), self.state.len()),
        ];
        for (what, per_world, got) in widths {
            if got != k * per_world {
                return Err(WorldsError::Argument(format!(
                    "the task's {what} need {} values ({k} worlds × {per_world}), the buffer has {got}",
                    k * per_world
                )));
            }
        }
        let cut = |b: &'a mut [f64], n: usize| -> Vec<&'a mut [f64]> {
            if n == 0 {
                (0..k).map(|_| &mut [][..]).collect()
            } else {
                b.chunks_exact_mut(n).collect()
            }
        };
        let rows = cut(self.obs, agents * t.observation_width())
            .into_iter()
            .zip(cut(self.reward, agents))
            .zip(self.done.iter_mut())
            .zip(cut(self.memory, t.memory()))
            .zip(cut(self.metrics, t.metric_names().len()))
            .zip(cut(self.state, t.state_width()))
            .map(
                |(((((obs, reward), done), memory), metrics), state)| TaskRow {
                    obs,
                    reward,
                    done,
                    memory,
                    metrics,
                    state,
                },
            )
            .collect();
        let common = TaskCommon {
            task: t,
            objects: self.objects,
            lidar,
            start: self.start,
        };
        Ok((common, rows))
    }
}

/// A body as the task reads it: the state of the artifact's first body.
fn body(env: &Environment, artifact: usize) -> Body {
    let s = &env.states()[env.artifacts()[artifact].bodies.start as usize];
    let (t, q) = (s.pose.translation.vector, s.pose.rotation.coords); // q: x, y, z, w
    Body::from_state(
        [t.x, t.y, t.z],
        [q[0], q[1], q[2], q[3]],
        [s.linvel.x, s.linvel.y, s.linvel.z],
        [s.angvel.x, s.angvel.y, s.angvel.z],
    )
}

/// One world's task values: after its steps, `stepped` when it took them.
pub(super) fn task_world(
    env: &Environment,
    agents: &[usize],
    c: &TaskCommon<'_>,
    stepped: bool,
    row: &mut TaskRow<'_>,
) {
    let t = c.task;
    let bodies: SmallVec<[Body; 32]> = agents
        .iter()
        .chain(c.objects)
        .map(|&a| body(env, a))
        .collect();
    let rays = t.lidar_rays();
    let mut lidar: SmallVec<[f64; 256]> = SmallVec::new();
    for (&a, &s) in agents.iter().zip(c.lidar) {
        let values = env.reading_at(a, s).map_or(&[][..], |r| r.values());
        ssx_tasks::lidar_values(values, rays, &mut lidar);
    }
    if c.lidar.is_empty() {
        lidar.resize(agents.len() * rays, 0.0);
    }
    let w = World {
        agents: &bodies[..agents.len()],
        objects: &bodies[agents.len()..],
        lidar: &lidar,
    };
    if stepped {
        if c.start {
            t.start(&w, row.memory);
            row.reward.fill(0.0);
            *row.done = 0.0;
        } else {
            let outcome = t.reward(&w, row.memory, row.reward);
            *row.done = f64::from(u8::from(outcome.done));
        }
    } else {
        row.reward.fill(0.0);
    }
    // After the reward, which may change what the agents see (dispersion's eaten food).
    t.observe(&w, row.memory, row.obs);
    t.measure(&w, row.memory, row.metrics);
    t.state(&w, row.memory, row.state);
}
