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
use ssx_core::prefetch::LEVELS;
use ssx_core::spec::{ArtifactSpec, share_descriptors};
use ssx_core::{
    Commons, Environment, EnvironmentConfig, LatePolicy, MapGrid, Mode, NullRenderEngine,
    PluginRegistry, Rebuilt, SceneSource, SsxError, WorkerPool,
};
use ssx_zenoh::mailbox::Inbox;

use crate::bus::BusState;
use crate::error::WorldsError;
use crate::open;
use crate::rows::sensor_carriers;

mod act;
mod arrays;
mod task;

pub use act::{Act, Commands, Observe, Reward};
pub use task::TaskAct;

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
        /// The artifacts as the batch's check read them: each world's plugin descriptors
        /// share these copies where equal.
        like: Vec<ArtifactSpec>,
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
    fn rebuild(&self, _seed: u64, _libraries: &PluginLoader) -> Result<Rebuilt, SsxError> {
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
        let (mut scene, _) = open::load(
            scene,
            home,
            &base,
            o.seed,
            o.engine.as_deref(),
            false,
            PluginLoader::default(),
        )
        .map_err(WorldsError::Scene)?;
        // The libraries the scene's check opened: every world is built with them (and a seeded
        // scene checked against them), so each is copied and opened once for the batch.
        let loader = std::mem::take(&mut scene.libraries);
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
                like: std::mem::take(&mut scene.artifacts),
            }
        } else {
            let map = scene.map.as_ref().map(|l| Arc::new(l.grid()));
            Template::Shared(Arc::new(SharedScene { scene, map }))
        };
        // World 0 first, alone: the others hold its copy of whatever of theirs equals it (the
        // artifacts, the catalog), each as soon as it is built.
        let world_error = |k: usize, source| WorldsError::World {
            world: k,
            seed: seeds[k],
            source,
        };
        let first_world = build_world(&template, &base, seeds[0], o.strict, &loader, None)
            .map_err(|s| world_error(0, s))?;
        let commons = first_world.env.commons();
        let mut built: Vec<Option<World>> = (0..count).map(|_| None).collect();
        built[0] = Some(first_world);
        {
            let mut work = parts(&mut built[1..], pool.workers());
            let (template, base, loader, commons) = (&template, &base, &loader, &commons);
            pool.for_each_mut(&mut work, &|_, part| {
                for (i, slot) in part.items.iter_mut().enumerate() {
                    let k = 1 + part.first + i;
                    match build_world(template, base, seeds[k], o.strict, loader, Some(commons)) {
                        Ok(w) => *slot = Some(w),
                        Err(source) => {
                            part.error = Some(world_error(k, source));
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
            for i in 0..part.items.len() {
                fetch_ahead(part.items, i, |(w, _)| w);
                let (w, on) = &mut part.items[i];
                if *on && let Err(source) = step_world(&mut w.env, n) {
                    part.error.get_or_insert(WorldsError::Strict {
                        world: part.first + i,
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

    /// Whether the scene is read once for every world (its artifacts do not depend on the
    /// seed), or again for each seed.
    pub fn scene_shared(&self) -> bool {
        matches!(self.template, Template::Shared(_))
    }
}

/// Hints the cache to fetch the worlds after `items[i]` while it steps (`world` finds an item's
/// world): a level of blocks a world, the fields of the one [`LEVELS`] + 1 ahead, the blocks
/// they point to for the next nearer, and so on, each level's addresses fetched a world
/// before (`ssx_core::prefetch`). A batch's worlds are fetched from memory as each steps:
/// 4096 worlds of 4 robots took 2.2 times as long a world-step as 64.
fn fetch_ahead<T>(items: &[T], i: usize, world: impl Fn(&T) -> &World) {
    if let Some(t) = items.get(i + LEVELS + 1) {
        ssx_core::prefetch::value(world(t));
    }
    for level in 1..=LEVELS {
        if let Some(t) = items.get(i + LEVELS + 1 - level) {
            let w = world(t);
            w.env.prefetch(level);
            w.bus.prefetch(level);
        }
    }
}

/// Steps one world `n` times; stops at the first failure (strict mode).
fn step_world(env: &mut Environment, n: u64) -> Result<(), SsxError> {
    for _ in 0..n {
        env.step()?;
    }
    Ok(())
}

/// A world of the batch with seed `seed`, its step times not kept; `loader`: the libraries the
/// batch's scene opened; `like`: what world 0 holds, shared where equal.
fn build_world(
    template: &Template,
    base: &PluginRegistry,
    seed: u64,
    strict: bool,
    loader: &PluginLoader,
    like: Option<&Commons>,
) -> Result<World, SsxError> {
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
                Box::new(NullRenderEngine::counting()),
                loader.clone(),
            )?;
            env.set_scene_source(Box::new(SharedSource(Arc::clone(shared))));
            (env, bus)
        }
        Template::File {
            path,
            home,
            engine,
            like,
        } => {
            let (mut scene, _) = open::load(
                path,
                home.as_deref(),
                base,
                Some(seed),
                engine.as_deref(),
                false,
                loader.clone(),
            )?;
            share_descriptors(&mut scene.artifacts, like);
            let config = scene.config(1, Mode::Fast, LatePolicy::CatchUp, strict);
            let libraries = std::mem::take(&mut scene.libraries);
            let (mut env, bus) = open::build_loaded(
                &scene,
                config,
                base,
                Box::new(NullRenderEngine::counting()),
                libraries,
            )?;
            env.set_scene_source(Box::new(
                scene.source(home.as_deref(), &open::with_bus(base, &bus)),
            ));
            (env, bus)
        }
    };
    env.drop_step_times();
    if let Some(like) = like {
        env.share(like);
    }
    Ok(World {
        env,
        bus,
        inboxes: Vec::new(),
    })
}
