//! A team: the agents of one task in one world that one policy drives. Its instances (one an
//! agent) share one `Team`, found by world and descriptor: at a decision step the first of them
//! to ask reads the world (every agent's and object's body, every lidar), builds every agent's
//! observation with `ssx-tasks` (the batched env's code), runs one inference for the whole team,
//! and keeps the actions; the others take their rows. So a team of N costs one gather and one
//! inference a decision, on whichever worker thread asks first, whatever the thread count, and
//! every instance reads the same world (drivers run after the step's sensors, before any
//! command acts), so the result does not depend on which one asks.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use ssx_sdk::Ctx;
use ssx_tasks::{Body, Task, World};

use crate::model::Model;

/// What a team's members agree on: the task, its bodies and the model.
pub struct Team {
    pub task: Task,
    pub model: Arc<Model>,
    agents: Vec<String>,
    objects: Vec<String>,
    lidar: Option<String>,
    state: Mutex<State>,
}

/// What a team computes, kept for its members.
#[derive(Default)]
struct State {
    /// The artifacts' indices, found at the first decision: agents, then objects.
    artifacts: Vec<u32>,
    /// Each agent's lidar sensor index.
    sensors: Vec<u32>,
    /// The step the actions are for (`None`: none yet).
    step: Option<u64>,
    /// Which agents took this step's action.
    taken: Vec<bool>,
    /// The task's memory (its reward's and observation's state), started at the first decision.
    memory: Vec<f64>,
    started: bool,
    bodies: Vec<Body>,
    lidar: Vec<f64>,
    obs: Vec<f64>,
    input: Vec<f32>,
    actions: Vec<f32>,
    rewards: Vec<f64>,
    /// Actions refused as not numbers, over the run.
    refused: u64,
}

/// An agent's share of a decision.
pub enum Decision {
    /// The action (the model's row; a drive's action has 2 values, checked at load).
    Act([f64; 2]),
    /// The model gave something that is not a finite number: the agent holds still. `refused`: how
    /// many actions the team refused so far.
    Refused { refused: u64 },
}

type Key = (u64, String);

/// The teams of this process while a member holds them, by world and descriptor.
static TEAMS: Mutex<Option<HashMap<Key, Weak<Team>>>> = Mutex::new(None);

impl Team {
    /// The team of world `world` that `descriptor` (the members' shared text) names, made by
    /// `make` when no member holds it yet.
    pub fn join(
        world: u64,
        descriptor: &str,
        make: impl FnOnce() -> Result<Team, String>,
    ) -> Result<Arc<Team>, String> {
        let key = (world, descriptor.to_string());
        let mut teams = TEAMS.lock().unwrap_or_else(|e| e.into_inner());
        let map = teams.get_or_insert_with(HashMap::new);
        if let Some(t) = map.get(&key).and_then(Weak::upgrade) {
            return Ok(t);
        }
        let t = Arc::new(make()?);
        map.retain(|_, w| w.strong_count() > 0);
        map.insert(key, Arc::downgrade(&t));
        Ok(t)
    }

    /// A team of `task` over the artifacts `agents` and `objects`, the agents' lidar the range
    /// sensor `lidar`.
    pub fn new(
        task: Task,
        model: Arc<Model>,
        agents: Vec<String>,
        objects: Vec<String>,
        lidar: Option<String>,
    ) -> Team {
        Team {
            task,
            model,
            agents,
            objects,
            lidar,
            state: Mutex::new(State::default()),
        }
    }

    /// Agent `agent`'s action for step `step`: the team's decision, made now if no member has
    /// asked for this step yet (or if this agent already took this step's: a world started over).
    pub fn decide(&self, ctx: &Ctx<'_>, agent: usize, step: u64) -> Result<Decision, String> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.step != Some(step) || s.taken[agent] {
            self.gather(ctx, &mut s)?;
            s.step = Some(step);
            s.taken.clear();
            s.taken.resize(self.agents.len(), false);
        }
        s.taken[agent] = true;
        let a = self.model.actions;
        let row = &s.actions[agent * a..(agent + 1) * a];
        if row.iter().all(|v| v.is_finite()) {
            return Ok(Decision::Act([f64::from(row[0]), f64::from(row[1])]));
        }
        s.refused += 1;
        Ok(Decision::Refused { refused: s.refused })
    }

    /// Reads the world, brings the task's memory up to date, builds the observations and runs
    /// the model.
    fn gather(&self, ctx: &Ctx<'_>, s: &mut State) -> Result<(), String> {
        let t = &self.task;
        if s.artifacts.is_empty() {
            // Found whole or not at all: a name that is missing leaves nothing half made.
            let mut artifacts = Vec::with_capacity(self.agents.len() + self.objects.len());
            for name in self.agents.iter().chain(&self.objects) {
                let a = ctx
                    .artifact_by_name(name)
                    .map_err(|e| format!("the task's artifact '{name}': {e}"))?;
                artifacts.push(a);
            }
            let mut sensors = Vec::with_capacity(self.agents.len());
            if let Some(l) = &self.lidar {
                for (name, &a) in self.agents.iter().zip(&artifacts) {
                    let i = ctx
                        .sensor_index(a, l)
                        .map_err(|e| format!("agent '{name}' has no sensor '{l}': {e}"))?;
                    sensors.push(i);
                }
            }
            (s.artifacts, s.sensors) = (artifacts, sensors);
            s.memory = vec![0.0; t.memory()];
            s.rewards = vec![0.0; t.agents()];
        }
        let State {
            artifacts,
            sensors,
            bodies,
            lidar,
            ..
        } = s;
        bodies.clear();
        for &a in artifacts.iter() {
            let b = ctx.body_state(a, 0).map_err(|e| e.to_string())?;
            bodies.push(Body::from_state(
                b.position,
                // The SDK's orientation is w, x, y, z; a task reads x, y, z, w.
                [
                    b.orientation[1],
                    b.orientation[2],
                    b.orientation[3],
                    b.orientation[0],
                ],
                b.linear_velocity,
                b.angular_velocity,
            ));
        }
        lidar.clear();
        let rays = t.lidar_rays();
        if sensors.is_empty() {
            lidar.resize(self.agents.len() * rays, 0.0);
        }
        for (&a, &i) in artifacts.iter().zip(sensors.iter()) {
            let (values, _) = ctx.reading(a, i).map_err(|e| e.to_string())?;
            ssx_tasks::lidar_values(values, rays, lidar);
        }
        let n = self.agents.len();
        let w = World {
            agents: &s.bodies[..n],
            objects: &s.bodies[n..],
            lidar: &s.lidar,
        };
        // The task's memory as the batched env keeps it: set at the episode's start, brought
        // up to date by each decision's reward (which may change what the agents see).
        if s.started {
            t.reward(&w, &mut s.memory, &mut s.rewards);
        } else {
            t.start(&w, &mut s.memory);
            s.started = true;
        }
        s.obs.resize(n * t.observation_width(), 0.0);
        t.observe(&w, &s.memory, &mut s.obs);
        s.input.clear();
        s.input.extend(s.obs.iter().map(|&v| v as f32));
        self.model.run(&s.input, &mut s.actions)
    }
}
