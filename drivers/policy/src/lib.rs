//! The `policy` driver: a trained policy (an ONNX file, run by tract in pure Rust) drives the
//! agents of one of ssx's learning tasks, in real time under `ssxd run` or in a batch.
//!
//! Descriptor:
//! - `model`: the ONNX file, relative to the file the descriptor is written in. One input, the
//!   observations (agents × the task's observation width, float32), one output, the actions
//!   (agents × the drive's 2). `ssx.policy.export` writes it with metadata (`ssx.task`,
//!   `ssx.observation_width`, `ssx.action`, ...), which is checked here when present.
//! - `task`: the task whose observation the model reads (`navigation`, ...); `options`: its
//!   options (a map of numbers, the batched env's); `agents`: the task's agents' artifact names,
//!   in its order (this artifact among them); `objects`: its own bodies' artifact names;
//!   `lidar`: the agents' range sensor, if the task reads one.
//! - `drive`: `{"holonomic": {"mode", "u_range", "u_multiplier"}}` or `{"diffdrive":
//!   {"max_speed", "max_turn_rate"}}` (drive.rs), how the action moves the agent.
//! - `period`: steps between decisions (default 1), the batched env's `steps_per_action`; the
//!   action is held between.
//!
//! Every agent of a team carries this driver with the same descriptor; their instances share
//! one team (team.rs): one gather and one inference a decision for all of them. Each agent's
//! observation is `ssx_tasks::Task::observe`'s, the batched env's own code, so the two cannot
//! drift. An action that is not a finite number is refused: the agent holds still (its velocity set to
//! zero until the next decision), the refusal is counted and logged (the first, then at each power of two), and the
//! run goes on. Deterministic: the decision reads only the world.

mod drive;
mod model;
mod team;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use ssx_sdk::abi::SSX_LOG_WARN;
use ssx_sdk::{Ctx, Driver, Init};
use ssx_tasks::Task;

use drive::Drive;
use team::{Decision, Team};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    model: String,
    task: String,
    #[serde(default)]
    options: BTreeMap<String, f64>,
    agents: Vec<String>,
    #[serde(default)]
    objects: Vec<String>,
    #[serde(default)]
    lidar: Option<String>,
    drive: Drive,
    #[serde(default = "one")]
    period: u64,
}

fn one() -> u64 {
    1
}

struct Policy {
    team: Arc<Team>,
    /// This agent's index in the task.
    agent: usize,
    drive: Drive,
    period: u64,
    /// The action held between decisions (none: hold still).
    action: Option<[f64; 2]>,
}

impl Driver for Policy {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        let d: Descriptor = serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)?;
        init.root_body()?;
        d.drive.check()?;
        if !(1..=1_000_000).contains(&d.period) {
            return Err(format!(
                "invalid descriptor: 'period' must be from 1 to 1000000 steps, got {}",
                d.period
            ));
        }
        let agent = d
            .agents
            .iter()
            .position(|a| *a == init.artifact_name)
            .ok_or_else(|| {
                format!(
                    "invalid descriptor: 'agents' does not name this artifact, '{}'",
                    init.artifact_name
                )
            })?;
        let options: Vec<(String, f64)> = d.options.clone().into_iter().collect();
        let task = Task::new(&d.task, d.agents.len(), &options)?;
        if d.objects.len() != task.objects() {
            return Err(format!(
                "invalid descriptor: the {} task reads {} bodies of its own, 'objects' names {}",
                d.task,
                task.objects(),
                d.objects.len()
            ));
        }
        if task.lidar_rays() > 0 && d.lidar.is_none() {
            return Err(format!(
                "invalid descriptor: the {} task reads a lidar of {} rays: 'lidar' must name the agents' range sensor",
                d.task,
                task.lidar_rays()
            ));
        }
        let path = init.resolve(&d.model);
        // The members of one team are the instances of one world with this very descriptor.
        let team = Team::join(init.world, descriptor, || {
            let expected = model::Expected {
                task: &d.task,
                rows: task.agents(),
                width: task.observation_width(),
                actions: d.drive.width(),
                fields: d.drive.fields(),
                drive: d.drive.name(),
            };
            let m = model::load(&path, &expected)?;
            Ok(Team::new(
                task,
                m,
                d.agents.clone(),
                d.objects.clone(),
                d.lidar.clone(),
            ))
        })?;
        Ok(Policy {
            team,
            agent,
            drive: d.drive,
            period: d.period,
            action: None,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let (_, step) = ctx.time()?;
        if step % self.period == 0 {
            self.action = match self.team.decide(ctx, self.agent, step)? {
                Decision::Act(a) => Some(self.drive.clip(a)),
                Decision::Refused { refused } => {
                    if refused.is_power_of_two() {
                        ctx.log(
                            SSX_LOG_WARN,
                            &format!(
                                "policy '{}': agent {}'s action at step {step} is not a finite number; it holds still ({refused} refused so far)",
                                self.team.model.path.display(),
                                self.agent
                            ),
                        );
                    }
                    None
                }
            };
        }
        match self.action {
            Some(a) => self.drive.act(ctx, a),
            // Holding still: the body stopped, whatever the drive.
            None => Ok(ctx.set_velocity(0, [0.0; 3], [0.0; 3])?),
        }
    }
}

ssx_sdk::export_plugins!(driver "policy" "a trained policy (ONNX) drives the agents of a learning task, one inference a decision for the team" => Policy);
