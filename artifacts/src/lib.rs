//! Scenes and artifacts: reading scene files and artifact description files, checking them,
//! resolving paths and includes, and instancing artifacts (one by one, or replicated over a grid,
//! a circle or seeded random poses) into the resolved [`ArtifactSpec`]s the Environment builds.
//!
//! Every problem becomes one [`SsxError::Input`] naming the file, the JSON path and line:column.
#![warn(missing_docs)]

mod artifact;
pub mod generate;
pub mod limits;
mod loader;
pub mod locate;
pub mod map;
mod model;
pub mod occupancy;
mod place;
mod prepared;
pub mod schema;
mod source;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use ssx_core::abi::PluginLoader;
use ssx_core::environment::ExtensionSpec;
use ssx_core::math::Vec3;
use ssx_core::plugin::{PluginKind, PluginRegistry};
use ssx_core::{ArtifactSpec, BodyKind, EnvironmentConfig, LatePolicy, Mode, SsxError};

use loader::{Loader, bounding_radius};
use source::Source;

use schema::*;

/// Default density of colliders (kg/m³): water.
pub const DEFAULT_DENSITY: f64 = 1000.0;

/// A loaded, checked scene, ready to build.
#[derive(Clone, Debug)]
pub struct Scene {
    /// The scene file.
    pub file: PathBuf,
    /// Its name.
    pub name: String,
    /// Seconds per step.
    pub timestep: f64,
    /// Gravity.
    pub gravity: Vec3,
    /// Seed.
    pub seed: u64,
    /// Engine name.
    pub engine: String,
    /// Extensions, in initialisation order.
    pub extensions: Vec<ExtensionSpec>,
    /// Artifact instances, in scene order.
    pub artifacts: Vec<ArtifactSpec>,
    /// Artifacts whose position the status line shows.
    pub watch: Vec<String>,
    /// The scene's live-view settings, if it has any.
    pub view: Option<ViewFile>,
    /// The watchdog's limit (s), if the scene sets one.
    pub watchdog: Option<f64>,
    /// The map's cells, when the scene has a map (its walls are the artifact `map`).
    pub map: Option<map::Layout>,
    /// Whether the artifacts or the map depend on the seed (a random placement or a generated
    /// map without a seed of its own). When not, a scene loaded with another seed differs only
    /// in `seed` (the plugins' seeds): a batch of worlds loads it once.
    pub seeded: bool,
    /// The plugin libraries opened to check the scene's plugin names (drivers' and sensors'
    /// from their private copies): building from this scene with them
    /// ([`ssx_core::Environment::build_sharing`]) opens and copies no library again.
    pub libraries: PluginLoader,
}

impl Scene {
    /// Reads and checks a scene and every file it names. Plugin and engine names are checked
    /// against `registry`; descriptors are checked by the plugins when they are created.
    pub fn load(path: &Path, registry: &PluginRegistry) -> Result<Scene, SsxError> {
        Self::load_in(path, None, registry)
    }

    /// [`Scene::load`], with the scene's relative paths (artifact files, maps, plugin
    /// libraries) found from `home` instead of the scene file's directory: a scene written
    /// elsewhere from another (a sweep's runs) names what the original names.
    pub fn load_in(
        path: &Path,
        home: Option<&Path>,
        registry: &PluginRegistry,
    ) -> Result<Scene, SsxError> {
        Self::load_seeded(path, home, registry, None)
    }

    /// [`Scene::load_in`] with `seed` in place of the file's `"seed"` (None: the file's): what a
    /// reset with a new seed builds.
    pub fn load_seeded(
        path: &Path,
        home: Option<&Path>,
        registry: &PluginRegistry,
        seed: Option<u64>,
    ) -> Result<Scene, SsxError> {
        Self::load_sharing(path, home, registry, seed, PluginLoader::default())
    }

    /// [`Scene::load_seeded`], checking plugin names against the libraries `libraries` has
    /// open (a clone of a world's [`ssx_core::Environment::plugin_loader`]) and opening only
    /// those it lacks: another world of a batch, or a reset, copies no library again.
    pub fn load_sharing(
        path: &Path,
        home: Option<&Path>,
        registry: &PluginRegistry,
        seed: Option<u64>,
        libraries: PluginLoader,
    ) -> Result<Scene, SsxError> {
        let budget = std::cell::Cell::new(limits::MAX_TOTAL_BYTES);
        let mut top = Source::read(path, None, &budget)?;
        if let Some(home) = home {
            top.home = home.to_path_buf();
        }
        let scene: SceneFile = top.parse()?;
        let timestep = scene
            .timestep
            .ok_or_else(|| {
                top.err(
                    ".",
                    "missing field `timestep` (seconds per step, e.g. 0.01)",
                )
            })?
            .0;
        let engine = scene
            .engine
            .clone()
            .unwrap_or_else(|| ssx_core::engine::DEFAULT_ENGINE.into());
        if !registry.has(PluginKind::Engine, &engine) {
            return Err(top.err(
                "engine",
                format!(
                    "unknown physics engine '{engine}' (known: {})",
                    registry.names(PluginKind::Engine).join(", ")
                ),
            ));
        }
        if let Some(rate) = scene.view.and_then(|v| v.rate)
            && rate.0 > 1000.0
        {
            return Err(top.err(
                "view.rate",
                format!("the view rate must be at most 1000 Hz, got {}", rate.0),
            ));
        }
        let name = scene.name.clone().unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "scene".into())
        });
        let mut loader = Loader {
            registry,
            seed: seed.or(scene.seed).unwrap_or(0),
            seed_used: std::cell::Cell::new(false),
            cache: HashMap::new(),
            stack: Vec::new(),
            artifacts: Vec::new(),
            names: HashMap::new(),
            extensions: Vec::new(),
            extension_names: HashMap::new(),
            libraries: std::cell::RefCell::new(libraries),
            budget,
            bodies: 0,
            groups: 0,
            placed: Default::default(),
            meshes: Default::default(),
        };
        let top = Rc::new(top);
        loader.scene(&top, &scene)?;
        let mut layout = None;
        let map_seeded = scene.map.as_ref().is_some_and(|m| {
            m.cave.as_ref().is_some_and(|c| c.seed.is_none())
                || m.building.as_ref().is_some_and(|b| b.seed.is_none())
        });
        if let Some(map) = &scene.map {
            let cells = map::layout(map, loader.seed, |p| top.resolve(p), |at, m| top.err(at, m))?;
            let walls = map::artifact(map, &cells, |at, m| top.err(at, m))?;
            layout = Some(cells);
            if let Some(first) = loader.names.get("map") {
                return Err(top.err(
                    "map",
                    format!("the map is the artifact 'map', and another artifact has that name (at {first})"),
                ));
            }
            loader.artifacts.push(walls);
        }
        for (i, w) in scene.watch.iter().enumerate() {
            if !loader.names.contains_key(w) {
                return Err(top.err(
                    &format!("watch[{i}]"),
                    format!("no artifact named '{w}' in the scene"),
                ));
            }
        }
        Ok(Scene {
            file: path.to_path_buf(),
            name,
            timestep,
            gravity: scene.gravity.map_or(Vec3::new(0.0, 0.0, -9.81), |g| {
                Vec3::new(g[0].0, g[1].0, g[2].0)
            }),
            seed: loader.seed,
            seeded: map_seeded || loader.seed_used.get(),
            engine,
            extensions: loader.extensions,
            artifacts: loader.artifacts,
            watch: scene.watch,
            view: scene.view,
            watchdog: scene.watchdog.map(|w| w.0),
            map: layout,
            libraries: loader.libraries.into_inner(),
        })
    }

    /// The Environment configuration for this scene.
    pub fn config(
        &self,
        workers: usize,
        mode: Mode,
        late_policy: LatePolicy,
        strict: bool,
    ) -> EnvironmentConfig {
        EnvironmentConfig {
            scene: self.name.clone(),
            engine: self.engine.clone(),
            timestep: self.timestep,
            gravity: self.gravity,
            seed: self.seed,
            workers,
            mode,
            late_policy,
            strict,
            map: self.map.as_ref().map(|l| std::sync::Arc::new(l.grid())),
        }
    }

    /// What an Environment built from this scene makes its artifacts anew from at a reset with
    /// another seed ([`ssx_core::Environment::set_scene_source`]): the same file, read again
    /// with the new seed (the run keeps its engine and everything else).
    pub fn source(&self, home: Option<&Path>, registry: &PluginRegistry) -> SceneFromFile {
        SceneFromFile {
            file: self.file.clone(),
            home: home.map(Path::to_path_buf),
            registry: registry.clone(),
        }
    }

    /// Number of bodies in all artifacts.
    pub fn body_count(&self) -> usize {
        self.artifacts.iter().map(|a| a.bodies.len()).sum()
    }

    /// A warning when dynamic bodies of different artifacts start grossly overlapping (centres
    /// closer than half the smaller one's bounding radius): the first steps then push them
    /// apart with huge contact forces and can take seconds each. Counts up to 10,000 pairs.
    pub fn overlap_warning(&self) -> Option<String> {
        const ENOUGH: usize = 10_000;
        let mut spheres: Vec<(Vec3, f64, usize, &str)> = Vec::new();
        for (ai, a) in self.artifacts.iter().enumerate() {
            for (_, b) in &a.bodies {
                if b.kind != BodyKind::Dynamic {
                    continue;
                }
                let r = b
                    .colliders
                    .iter()
                    .map(|c| c.local_pose.translation.vector.norm() + bounding_radius(&c.shape))
                    .fold(0.0, f64::max);
                if r > 0.0 {
                    spheres.push((b.pose.translation.vector, r, ai, &a.name));
                }
            }
        }
        let cell = spheres.iter().map(|s| s.1).fold(0.0, f64::max) * 2.0;
        if spheres.len() < 2 || cell <= 0.0 {
            return None;
        }
        let key = |p: &Vec3| {
            (
                (p.x / cell).floor() as i64,
                (p.y / cell).floor() as i64,
                (p.z / cell).floor() as i64,
            )
        };
        let mut grid: HashMap<(i64, i64, i64), Vec<usize>> = HashMap::new();
        for (i, s) in spheres.iter().enumerate() {
            grid.entry(key(&s.0)).or_default().push(i);
        }
        let (mut pairs, mut example) = (0usize, None);
        'all: for (i, a) in spheres.iter().enumerate() {
            let (x, y, z) = key(&a.0);
            for dx in -1..=1 {
                for dy in -1..=1 {
                    for dz in -1..=1 {
                        let Some(near) = grid.get(&(x + dx, y + dy, z + dz)) else {
                            continue;
                        };
                        for &j in near.iter().filter(|&&j| j > i) {
                            let b = &spheres[j];
                            if a.2 != b.2 && (a.0 - b.0).norm() < 0.5 * a.1.min(b.1) {
                                pairs += 1;
                                example.get_or_insert((a.3, b.3, a.0));
                                if pairs >= ENOUGH {
                                    break 'all;
                                }
                            }
                        }
                    }
                }
            }
        }
        let (a, b, p) = example?;
        Some(format!(
            "{}{pairs} pairs of bodies overlap at the start (e.g. '{a}' and '{b}' near ({:.2}, {:.2}, {:.2})): the first steps push them apart and may take seconds each",
            if pairs >= ENOUGH { "at least " } else { "" },
            p.x,
            p.y,
            p.z
        ))
    }
}

/// A scene file to read again for a reset with a new seed ([`Scene::source`]).
pub struct SceneFromFile {
    file: PathBuf,
    home: Option<PathBuf>,
    registry: PluginRegistry,
}

impl ssx_core::SceneSource for SceneFromFile {
    fn rebuild(&self, seed: u64, libraries: &PluginLoader) -> Result<ssx_core::Rebuilt, SsxError> {
        let scene = Scene::load_sharing(
            &self.file,
            self.home.as_deref(),
            &self.registry,
            Some(seed),
            libraries.clone(),
        )?;
        Ok(ssx_core::Rebuilt {
            map: scene.map.as_ref().map(|l| std::sync::Arc::new(l.grid())),
            artifacts: scene.artifacts,
        })
    }
}
