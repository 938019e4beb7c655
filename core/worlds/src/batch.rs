//! [`Worlds`]: K copies of one scene in one program, stepped together on a pool of worker
//! threads that takes whole worlds (no barrier inside a small world's step), with their state,
//! readings and commands as flat arrays over the batch.
//!
//! Every world is the run a lone world of the same scene with its seed gives, bit for bit:
//! each is an ordinary [`Environment`] with one worker of its own, and nothing is shared
//! between worlds but the scene (read once when the seed does not change it) and the loaded
//! plugin libraries (opened once per process).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ssx_artifacts::Scene;
use ssx_core::abi::PluginLoader;
use ssx_core::parallel::share;
use ssx_core::{
    Environment, EnvironmentConfig, LatePolicy, MapGrid, Mode, NullRenderEngine, PluginRegistry,
    Rebuilt, SceneSource, SsxError, WorkerPool,
};
use ssx_zenoh::mailbox::{Inbox, Message};

use crate::bus::BusState;
use crate::error::WorldsError;
use crate::open;

/// Most worlds in a batch.
pub const MAX_WORLDS: usize = 1 << 20;

/// How to make a batch.
#[derive(Clone, Debug, Default)]
pub struct BatchOptions {
    /// The engine in place of the scene's.
    pub engine: Option<String>,
    /// Threads that step the worlds (the calling thread included); 0: one a core.
    pub workers: usize,
    /// World k's seed is `seed + k` (wrapping); None: the scene's seed + k.
    pub seed: Option<u64>,
    /// Every world's seed, in place of `seed + k`.
    pub seeds: Option<Vec<u64>>,
    /// A failing plugin stops the batch's step with an error naming the world.
    pub strict: bool,
    /// Where the scene's relative paths are found, in place of the scene file's directory.
    pub scene_dir: Option<PathBuf>,
}

/// How a world's scene is made for a seed.
enum Template {
    /// The scene does not depend on its seed (no random placement, no generated map without
    /// a seed of its own): read once; a world differs only in its plugins' seeds.
    Shared(Arc<SharedScene>),
    /// It does: read again for each seed, as a lone world's reset would.
    File {
        path: PathBuf,
        home: Option<PathBuf>,
        engine: Option<String>,
    },
}

/// A scene read once, for every world and every reset.
struct SharedScene {
    scene: Scene,
    map: Option<Arc<MapGrid>>,
}

/// A world's way back to its scene at a reset with a seed, when the seed changes nothing but
/// the plugins' seeds.
struct SharedSource(Arc<SharedScene>);

impl SceneSource for SharedSource {
    fn rebuild(&self, _seed: u64) -> Result<Rebuilt, SsxError> {
        Ok(Rebuilt {
            artifacts: self.0.scene.artifacts.clone(),
            map: self.0.map.clone(),
        })
    }
}

/// One world of the batch.
struct World {
    env: Environment,
    bus: Arc<BusState>,
    /// The inboxes of the last `command_many`'s keys, once their drivers subscribed.
    inboxes: Vec<Option<Arc<Inbox>>>,
}

/// A share of the batch for one worker: its first world's index and its worlds.
struct Part<'a, T> {
    first: usize,
    items: &'a mut [T],
    error: Option<WorldsError>,
}

/// Cuts `items` into at most `workers` contiguous parts of even size.
fn parts<T>(items: &mut [T], workers: usize) -> Vec<Part<'_, T>> {
    let n = items.len();
    let count = workers.min(n).max(1);
    let mut out = Vec::with_capacity(count);
    let mut rest = items;
    for k in 0..count {
        let r = share(n, count, k);
        let (mine, tail) = rest.split_at_mut(r.len());
        rest = tail;
        out.push(Part {
            first: r.start,
            items: mine,
            error: None,
        });
    }
    out
}

/// Many worlds of one scene. See the module docs.
pub struct Worlds {
    worlds: Vec<World>,
    pool: WorkerPool,
    template: Template,
    /// Artifact names, the same in every world, in scene order.
    names: Vec<String>,
    index: HashMap<String, usize>,
    timestep: f64,
    /// The keys of the last `command_many`, whose inboxes each world keeps.
    command_keys: Vec<String>,
}

impl Worlds {
    /// `count` worlds of `scene`, built on the batch's workers.
    pub fn new(scene: &Path, count: usize, o: &BatchOptions) -> Result<Self, WorldsError> {
        if !(1..=MAX_WORLDS).contains(&count) {
            return Err(WorldsError::Argument(format!(
                "count must be from 1 to {MAX_WORLDS} worlds, got {count}"
            )));
        }
        if let Some(s) = &o.seeds
            && s.len() != count
        {
            return Err(WorldsError::Argument(format!(
                "seeds has {} values for {count} worlds",
                s.len()
            )));
        }
        let workers = match o.workers {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let pool = WorkerPool::new(workers).map_err(|e| {
            WorldsError::Scene(SsxError::Config(format!(
                "cannot start worker threads: {e}"
            )))
        })?;
        let base = open::registry();
        let home = o.scene_dir.as_deref();
        let (scene, _) = open::load(scene, home, &base, o.seed, o.engine.as_deref(), false)
            .map_err(WorldsError::Scene)?;
        let first = scene.seed;
        let seeds: Vec<u64> = match &o.seeds {
            Some(s) => s.clone(),
            None => (0..count as u64).map(|k| first.wrapping_add(k)).collect(),
        };
        let timestep = scene.timestep;
        let template = if scene.seeded {
            Template::File {
                path: scene.file.clone(),
                home: home.map(Path::to_path_buf),
                engine: o.engine.clone(),
            }
        } else {
            let map = scene.map.as_ref().map(|l| Arc::new(l.grid()));
            Template::Shared(Arc::new(SharedScene { scene, map }))
        };
        // World 0 opens the plugin libraries; the others share them.
        let first_world =
            build_world(&template, &base, seeds[0], o.strict, None).map_err(|source| {
                WorldsError::World {
                    world: 0,
                    seed: seeds[0],
                    source,
                }
            })?;
        let loader = first_world.env.plugin_loader().clone();
        let mut built: Vec<Option<World>> = (0..count).map(|_| None).collect();
        built[0] = Some(first_world);
        {
            let mut work = parts(&mut built[1..], pool.workers());
            let (template, base, seeds, loader) = (&template, &base, &seeds, &loader);
            pool.for_each_mut(&mut work, &|_, part| {
                for (i, slot) in part.items.iter_mut().enumerate() {
                    let k = 1 + part.first + i;
                    match build_world(template, base, seeds[k], o.strict, Some(loader)) {
                        Ok(w) => *slot = Some(w),
                        Err(source) => {
                            part.error = Some(WorldsError::World {
                                world: k,
                                seed: seeds[k],
                                source,
                            });
                            return;
                        }
                    }
                }
            });
            if let Some(e) = work.into_iter().find_map(|p| p.error) {
                return Err(e);
            }
        }
        let worlds: Vec<World> = built.into_iter().map(|w| w.expect("built")).collect();
        let names: Vec<String> = worlds[0]
            .env
            .artifacts()
            .iter()
            .map(|a| a.name.clone())
            .collect();
        for (k, w) in worlds.iter().enumerate() {
            let same = w.env.artifacts().len() == names.len()
                && w.env
                    .artifacts()
                    .iter()
                    .zip(&names)
                    .all(|(a, n)| a.name == *n);
            if !same {
                return Err(WorldsError::Argument(format!(
                    "world {k} has other artifacts than world 0: a batch needs one scene whose artifacts do not depend on the seed"
                )));
            }
        }
        let index = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        Ok(Self {
            worlds,
            pool,
            template,
            names,
            index,
            timestep,
            command_keys: Vec::new(),
        })
    }

    /// Number of worlds.
    pub fn len(&self) -> usize {
        self.worlds.len()
    }

    /// Never: a batch has at least one world.
    pub fn is_empty(&self) -> bool {
        self.worlds.is_empty()
    }

    /// Threads that step the batch.
    pub fn workers(&self) -> usize {
        self.pool.workers()
    }

    /// Seconds per step.
    pub fn timestep(&self) -> f64 {
        self.timestep
    }

    /// World `k` (its artifacts, states, readings, statistics).
    pub fn world(&self, k: usize) -> &Environment {
        &self.worlds[k].env
    }

    /// World `k`'s command bus (what its drivers subscribed to and published).
    pub fn bus(&self, k: usize) -> &BusState {
        &self.worlds[k].bus
    }

    /// Each world's seed (as built, or its last reset's).
    pub fn seeds(&self) -> Vec<u64> {
        self.worlds.iter().map(|w| w.env.config().seed).collect()
    }

    /// Artifact names, in scene order (the same in every world).
    pub fn artifact_names(&self) -> &[String] {
        &self.names
    }

    /// An artifact's index by name; the error names the closest one when it looks misspelt.
    pub fn artifact_index(&self, name: &str) -> Result<usize, WorldsError> {
        self.index.get(name).copied().ok_or_else(|| {
            let hint = ssx_core::spelling::closest(name, self.names.iter().map(String::as_str))
                .map(|c| format!(" (did you mean '{c}'?)"))
                .unwrap_or_default();
            WorldsError::Name(format!("no artifact named '{name}'{hint}"))
        })
    }

    /// The artifacts that carry a sensor named `sensor`, in scene order; an error naming the
    /// sensors that exist when none does.
    pub fn sensor_artifacts(&self, sensor: &str) -> Result<Vec<usize>, WorldsError> {
        sensor_carriers(&self.worlds[0].env, sensor)
    }

    /// Steps every world `n` times, on the workers; each worker steps its worlds one after
    /// the other. Fails (in strict mode) naming the first world whose plugin failed; the
    /// other worlds have done their steps.
    pub fn step(&mut self, n: u64) -> Result<(), WorldsError> {
        self.step_some(n, None)
    }

    /// [`Worlds::step`] for the worlds where `mask` is true (None: all); the others keep
    /// their state and time.
    pub fn step_some(&mut self, n: u64, mask: Option<&[bool]>) -> Result<(), WorldsError> {
        let k = self.worlds.len();
        if let Some(m) = mask
            && m.len() != k
        {
            return Err(WorldsError::Argument(format!(
                "mask has {} values for {k} worlds",
                m.len()
            )));
        }
        let mut zipped: Vec<(&mut World, bool)> = self
            .worlds
            .iter_mut()
            .enumerate()
            .map(|(i, w)| (w, mask.is_none_or(|m| m[i])))
            .collect();
        let mut work = parts(&mut zipped, self.pool.workers());
        self.pool.for_each_mut(&mut work, &|_, part| {
            for (i, (w, on)) in part.items.iter_mut().enumerate() {
                if !*on {
                    continue;
                }
                for _ in 0..n {
                    if let Err(source) = w.env.step() {
                        part.error.get_or_insert(WorldsError::Strict {
                            world: part.first + i,
                            source,
                        });
                        break;
                    }
                }
            }
        });
        match work.into_iter().find_map(|p| p.error) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Resets the worlds in `which` (indices, each at most once) on the workers while the
    /// others keep their state: each to step 0, with `seeds[i]` for `which[i]` when given,
    /// else with its own seed (the same world as after its last start).
    pub fn reset(&mut self, which: &[usize], seeds: Option<&[u64]>) -> Result<(), WorldsError> {
        let k = self.worlds.len();
        if let Some(s) = seeds
            && s.len() != which.len()
        {
            return Err(WorldsError::Argument(format!(
                "{} seeds for {} worlds to reset",
                s.len(),
                which.len()
            )));
        }
        // What each world does: None, not reset; Some(seed) reset (Some(None): its own seed).
        let mut plan: Vec<Option<Option<u64>>> = vec![None; k];
        for (i, &w) in which.iter().enumerate() {
            let slot = plan.get_mut(w).ok_or_else(|| {
                WorldsError::Argument(format!("no world {w} to reset: the batch has {k}"))
            })?;
            if slot.is_some() {
                return Err(WorldsError::Argument(format!(
                    "world {w} is named twice in one reset"
                )));
            }
            *slot = Some(seeds.map(|s| s[i]));
        }
        let mut zipped: Vec<(&mut World, Option<Option<u64>>)> =
            self.worlds.iter_mut().zip(plan).collect();
        let mut work = parts(&mut zipped, self.pool.workers());
        self.pool.for_each_mut(&mut work, &|_, part| {
            for (i, (w, plan)) in part.items.iter_mut().enumerate() {
                let Some(seed) = *plan else { continue };
                if let Err(source) = w.env.reset(seed) {
                    part.error.get_or_insert(WorldsError::World {
                        world: part.first + i,
                        seed: seed.unwrap_or(w.env.config().seed),
                        source,
                    });
                }
            }
        });
        match work.into_iter().find_map(|p| p.error) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

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

    fn sensor_indices(&self, sensor: &str, artifacts: &[usize]) -> Result<Vec<usize>, WorldsError> {
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
        let row = width + 4;
        self.fill(artifacts.len() * row, out, "observations", &|env, dst| {
            let states = env.states();
            for ((&a, &s), dst) in artifacts.iter().zip(&index).zip(dst.chunks_exact_mut(row)) {
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
            let states = env.states();
            let xy: Vec<(f64, f64)> = artifacts
                .iter()
                .map(|&a| {
                    let t = states[env.artifacts()[a].bodies.start as usize]
                        .pose
                        .translation
                        .vector;
                    (t.x, t.y)
                })
                .collect();
            for (i, d) in dst.iter_mut().enumerate() {
                let (x, y) = xy[i];
                let mut best = f64::INFINITY;
                for (j, &(u, v)) in xy.iter().enumerate() {
                    let (dx, dy) = (x - u, y - v);
                    let d2 = dx * dx + dy * dy;
                    if j != i && d2 < best {
                        best = d2;
                    }
                }
                *d = best.sqrt();
            }
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
            return Ok(0);
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
        // On the workers, each its share of the worlds: first every row is checked, then (if
        // none was refused) every row is handed over.
        let (keys, names) = (&self.command_keys, &self.names);
        let refused = |world: usize, j: usize, message: String| WorldsError::Command {
            world,
            robot: names[artifacts[j]].clone(),
            key: keys[j].clone(),
            message,
        };
        let mut rows: Vec<(&mut World, &[f64], usize)> = self
            .worlds
            .iter_mut()
            .zip(values.chunks_exact(n * width))
            .map(|(w, v)| (w, v, 0))
            .collect();
        let mut work = parts(&mut rows, self.pool.workers());
        self.pool.for_each_mut(&mut work, &|_, part| {
            let mut scratch = [0.0; ssx_sdk::bus::MAX_VALUES];
            for (i, (w, v, _)) in part.items.iter_mut().enumerate() {
                for (j, row) in v.chunks_exact(width).enumerate() {
                    if w.inboxes[j].is_none() {
                        w.inboxes[j] = w.bus.inbox_for(&keys[j]);
                    }
                    if let Some(inbox) = &w.inboxes[j]
                        && let Err(m) = inbox.spec.from_values(row, &mut scratch)
                    {
                        part.error.get_or_insert(refused(part.first + i, j, m));
                        return;
                    }
                }
            }
        });
        if let Some(e) = work.into_iter().find_map(|p| p.error) {
            return Err(e);
        }
        let mut work = parts(&mut rows, self.pool.workers());
        self.pool.for_each_mut(&mut work, &|_, part| {
            for (i, (w, v, now)) in part.items.iter_mut().enumerate() {
                for (j, row) in v.chunks_exact(width).enumerate() {
                    let row = Message::Values(row);
                    let sent = match &w.inboxes[j] {
                        Some(inbox) => inbox.put(row).map(|()| true),
                        None => w
                            .bus
                            .put(&keys[j], row)
                            .map(|d| matches!(d, crate::bus::Delivered::Now)),
                    };
                    match sent {
                        Ok(true) => *now += 1,
                        Ok(false) => {}
                        Err(m) => {
                            part.error.get_or_insert(refused(part.first + i, j, m));
                        }
                    }
                }
            }
        });
        if let Some(e) = work.into_iter().find_map(|p| p.error) {
            return Err(e);
        }
        Ok(rows.iter().map(|r| r.2).sum())
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

    /// Whether the scene is read once for every world (its artifacts do not depend on the
    /// seed), or again for each seed.
    pub fn scene_shared(&self) -> bool {
        matches!(self.template, Template::Shared(_))
    }
}

/// Columns of a state row.
pub const STATE_WIDTH: usize = 13;

/// A state row: position, quaternion (x, y, z, w), linear and angular velocity.
pub fn state_row(s: &ssx_core::BodyState, out: &mut [f64]) {
    let t = s.pose.translation.vector;
    let q = s.pose.rotation.coords;
    out[..3].copy_from_slice(t.as_slice());
    out[3..7].copy_from_slice(q.as_slice());
    out[7..10].copy_from_slice(s.linvel.as_slice());
    out[10..13].copy_from_slice(s.angvel.as_slice());
}

/// The artifacts of `env` that carry `sensor`; when none does, an error that names the sensors
/// there are (and the closest).
pub fn sensor_carriers(env: &Environment, sensor: &str) -> Result<Vec<usize>, WorldsError> {
    let found: Vec<usize> = env
        .artifacts()
        .iter()
        .enumerate()
        .filter(|(_, a)| a.sensor_index(sensor).is_some())
        .map(|(i, _)| i)
        .collect();
    if found.is_empty() {
        return Err(WorldsError::Name(format!(
            "no artifact carries a sensor '{sensor}'{}",
            known_sensors(env.artifacts(), sensor)
        )));
    }
    Ok(found)
}

/// " (sensors: a, b; did you mean 'a'?)", or " (no artifact has a sensor)".
fn known_sensors(artifacts: &[ssx_core::ArtifactInfo], sensor: &str) -> String {
    let mut names: Vec<&str> = artifacts
        .iter()
        .flat_map(|a| a.sensor_names.iter().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return " (no artifact has a sensor)".into();
    }
    let hint = ssx_core::spelling::closest(sensor, names.iter().copied())
        .map(|c| format!("; did you mean '{c}'?"))
        .unwrap_or_default();
    format!(" (sensors: {}{hint})", names.join(", "))
}

/// A world of the batch with seed `seed`, its step times not kept; `loader`: the libraries the
/// batch's first world opened.
fn build_world(
    template: &Template,
    base: &PluginRegistry,
    seed: u64,
    strict: bool,
    loader: Option<&PluginLoader>,
) -> Result<World, SsxError> {
    let loader = || loader.cloned().unwrap_or_default();
    let (mut env, bus) = match template {
        Template::Shared(shared) => {
            let config = EnvironmentConfig {
                seed,
                ..shared
                    .scene
                    .config(1, Mode::Fast, LatePolicy::CatchUp, strict)
            };
            let (mut env, bus) = open::build_loaded(
                &shared.scene,
                config,
                base,
                Box::new(NullRenderEngine::default()),
                loader(),
            )?;
            env.set_scene_source(Box::new(SharedSource(Arc::clone(shared))));
            (env, bus)
        }
        Template::File { path, home, engine } => {
            let (scene, _) = open::load(
                path,
                home.as_deref(),
                base,
                Some(seed),
                engine.as_deref(),
                false,
            )?;
            let config = scene.config(1, Mode::Fast, LatePolicy::CatchUp, strict);
            let (mut env, bus) = open::build_loaded(
                &scene,
                config,
                base,
                Box::new(NullRenderEngine::default()),
                loader(),
            )?;
            env.set_scene_source(Box::new(
                scene.source(home.as_deref(), &open::with_bus(base, &bus)),
            ));
            (env, bus)
        }
    };
    env.drop_step_times();
    Ok(World {
        env,
        bus,
        inboxes: Vec::new(),
    })
}
