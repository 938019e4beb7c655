//! Scenes and artifacts: reading scene files and artifact description files, checking them,
//! resolving paths and includes, and instancing artifacts (one by one, or replicated over a grid,
//! a circle or seeded random poses) into the resolved [`ArtifactSpec`]s the Environment builds.
//!
//! Every problem becomes one [`SsxError::Input`] naming the file, the JSON path and line:column.
#![warn(missing_docs)]

pub mod generate;
pub mod limits;
pub mod locate;
pub mod map;
pub mod occupancy;
pub mod schema;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use rand::{Rng, SeedableRng};
use serde::de::DeserializeOwned;
use ssx_core::environment::{ArtifactJoint, ArtifactVisual, ExtensionSpec};
use ssx_core::math::{Pose, Rotation, Vec3, pose_from_xyz_rpy};
use ssx_core::plugin::{PluginKind, PluginRegistry};
use ssx_core::{
    ArtifactSpec, BodyKind, BodySpec, ColliderSpec, EnvironmentConfig, JointKind, LatePolicy,
    MassSpec, Mode, Origin, PluginSpec, SensorSpec, Shape, SsxError,
};

use locate::{PositionIndex, Problem};

/// The radius of a sphere about the shape's origin that holds it (0 for a plane).
fn bounding_radius(shape: &Shape) -> f64 {
    match *shape {
        Shape::Box { half_extents } => half_extents.norm(),
        Shape::Sphere { radius } => radius,
        Shape::Capsule {
            radius,
            half_length,
        } => radius + half_length,
        Shape::Cylinder {
            radius,
            half_length,
        } => radius.hypot(half_length),
        _ => 0.0,
    }
}

/// Reads a regular file of at most `max` bytes as UTF-8. Devices, FIFOs and sockets are refused
/// before a byte is read (the open does not block on a FIFO), and a file never takes more than
/// `max` bytes of memory, even if it grows while being read. Messages name the file as `shown`.
fn read_regular(path: &Path, shown: &str, max: u64) -> Result<String, String> {
    let bytes = read_regular_bytes(path, shown, max, "a JSON file")?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "'{shown}' is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// [`read_regular`]'s bytes; `want` says what the file should be, for the message.
fn read_regular_bytes(path: &Path, shown: &str, max: u64, want: &str) -> Result<Vec<u8>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let io = |e: std::io::Error| format!("cannot read '{shown}': {e}");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(format!(
            "{}; name {want}",
            ssx_core::files::not_regular(shown, &meta)
        ));
    }
    let too_big = || format!("'{shown}' is larger than {max} bytes, the limit for a scene's files");
    if meta.len() > max {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(too_big());
    }
    Ok(bytes)
}
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
            cache: HashMap::new(),
            stack: Vec::new(),
            artifacts: Vec::new(),
            names: HashMap::new(),
            extensions: Vec::new(),
            extension_names: HashMap::new(),
            libraries: Default::default(),
            budget,
            bodies: 0,
        };
        let top = Rc::new(top);
        loader.scene(&top, &scene)?;
        let mut layout = None;
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
            engine,
            extensions: loader.extensions,
            artifacts: loader.artifacts,
            watch: scene.watch,
            view: scene.view,
            watchdog: scene.watchdog.map(|w| w.0),
            map: layout,
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
    fn rebuild(&self, seed: u64) -> Result<ssx_core::Rebuilt, SsxError> {
        let scene =
            Scene::load_seeded(&self.file, self.home.as_deref(), &self.registry, Some(seed))?;
        Ok(ssx_core::Rebuilt {
            map: scene.map.as_ref().map(|l| std::sync::Arc::new(l.grid())),
            artifacts: scene.artifacts,
        })
    }
}

/// A JSON file read into memory with the positions of its values.
#[derive(Debug)]
struct Source {
    path: PathBuf,
    /// Where the paths it names are found (the file's directory, unless the scene is loaded
    /// from elsewhere: [`Scene::load_in`]).
    home: PathBuf,
    text: String,
    index: PositionIndex,
}

impl Source {
    /// Reads a file; `named_at` is where another file named it, for the message. Takes its size
    /// from `budget`.
    fn read(
        path: &Path,
        named_at: Option<(&Source, &str)>,
        budget: &std::cell::Cell<u64>,
    ) -> Result<Self, SsxError> {
        let fail = |message: String| match named_at {
            Some((src, json_path)) => src.err(json_path, message),
            None => SsxError::Io {
                path: path.to_path_buf(),
                message,
            },
        };
        let shown = path.display();
        if path.is_dir() {
            return Err(fail(format!(
                "'{shown}' is a directory, expected a JSON file"
            )));
        }
        let limit = limits::MAX_FILE_BYTES.min(budget.get());
        let text = read_regular(path, &shown.to_string(), limit).map_err(fail)?;
        budget.set(budget.get() - text.len() as u64);
        if text.trim().is_empty() {
            return Err(fail(format!("'{shown}' is empty, expected a JSON object")));
        }
        let (index, problem) = PositionIndex::scan(&text, limits::MAX_DEPTH);
        let src = Self {
            path: path.to_path_buf(),
            home: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            text,
            index: PositionIndex::default(),
        };
        let at =
            |(line, column): (usize, usize), json_path: &str, message: String| SsxError::Input {
                origin: Box::new(Origin {
                    file: src.path.clone(),
                    json_path: json_path.trim_start_matches('.').to_string(),
                    line,
                    column,
                }),
                message,
            };
        if src.text.starts_with('\u{feff}') {
            return Err(at(
                (1, 1),
                "",
                "the file starts with a UTF-8 byte order mark (BOM); save it as UTF-8 without one"
                    .into(),
            ));
        }
        let first = src.text.trim_start();
        if !first.starts_with('{') {
            let skipped = &src.text[..src.text.len() - first.len()];
            let line = skipped.matches('\n').count() + 1;
            let column = skipped.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            let got = first.chars().next().map_or(String::new(), |c| {
                ssx_core::text::escape_controls(&c.to_string()).into_owned()
            });
            return Err(at(
                (line, column),
                "",
                format!("expected a JSON object ({{ ... }}) at the top of the file, found '{got}'"),
            ));
        }
        match problem {
            Some(Problem::TooDeep { at: pos, path }) => {
                return Err(at(
                    pos,
                    &path,
                    format!(
                        "arrays and objects nest deeper than {} levels",
                        limits::MAX_DEPTH
                    ),
                ));
            }
            Some(Problem::DuplicateKey {
                key,
                path,
                at: pos,
                first,
            }) => {
                return Err(at(
                    pos,
                    &path,
                    format!(
                        "duplicate key '{}' (first at line {}, column {})",
                        ssx_core::text::clip(&key, 64),
                        first.0,
                        first.1
                    ),
                ));
            }
            Some(Problem::Unclosed { open, opened, end }) => {
                let what = if open == '{' { "object" } else { "array" };
                return Err(at(
                    end,
                    "",
                    format!(
                        "the file ends inside the {what} opened at line {}, column {} (truncated?)",
                        opened.0, opened.1
                    ),
                ));
            }
            None => {}
        }
        Ok(Self { index, ..src })
    }

    fn parse<T: DeserializeOwned>(&self) -> Result<T, SsxError> {
        let de = &mut serde_json::Deserializer::from_str(&self.text);
        let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
            let json_path = e.path().to_string();
            let inner = e.into_inner();
            let full = inner.to_string();
            // serde_json places a data error just after the value; the index knows where the
            // value starts. Syntax errors keep serde's position: the index stops before them.
            let (line, column) = match inner.classify() {
                serde_json::error::Category::Data => self
                    .index
                    .get(&json_path)
                    .unwrap_or((inner.line(), inner.column())),
                _ => (inner.line(), inner.column()),
            };
            let message = ssx_core::spelling::suggest(match full.rfind(" at line ") {
                Some(i) => &full[..i],
                None => &full,
            });
            SsxError::Input {
                origin: Box::new(Origin {
                    file: self.path.clone(),
                    json_path: if json_path == "." {
                        String::new()
                    } else {
                        json_path
                    },
                    line,
                    column,
                }),
                message,
            }
        })?;
        de.end().map_err(|e| SsxError::Input {
            origin: Box::new(Origin {
                file: self.path.clone(),
                json_path: String::new(),
                line: e.line(),
                column: e.column(),
            }),
            message: "trailing characters after the JSON object".into(),
        })?;
        Ok(value)
    }

    fn origin(&self, json_path: &str) -> Origin {
        let (line, column) = self.index.locate(json_path);
        Origin {
            file: self.path.clone(),
            json_path: if json_path == "." {
                String::new()
            } else {
                json_path.to_string()
            },
            line,
            column,
        }
    }

    fn err(&self, json_path: &str, message: impl Into<String>) -> SsxError {
        SsxError::Input {
            origin: Box::new(self.origin(json_path)),
            message: message.into(),
        }
    }

    /// A path named in this file, resolved against the file's directory.
    fn resolve(&self, named: &Path) -> PathBuf {
        if named.is_relative() {
            self.home.join(named)
        } else {
            named.to_path_buf()
        }
    }
}

/// An artifact description file, checked and resolved in its own frame, ready to instance.
struct Prepared {
    src: Rc<Source>,
    bodies: Vec<(String, BodySpec)>,
    joints: Vec<ArtifactJoint>,
    visuals: Vec<ArtifactVisual>,
    driver: Option<PluginSpec>,
    sensors: Vec<SensorSpec>,
}

struct Loader<'r> {
    registry: &'r PluginRegistry,
    seed: u64,
    cache: HashMap<PathBuf, Rc<Prepared>>,
    /// Scene files being read, for include cycles.
    stack: Vec<PathBuf>,
    artifacts: Vec<ArtifactSpec>,
    names: HashMap<String, Origin>,
    extensions: Vec<ExtensionSpec>,
    extension_names: HashMap<String, Origin>,
    /// Libraries opened to check plugin names (each once).
    libraries: std::cell::RefCell<ssx_core::abi::PluginLoader>,
    /// Bytes the remaining files may take.
    budget: std::cell::Cell<u64>,
    /// Bodies instanced so far.
    bodies: usize,
}

/// "unknown driver 'x'", with what would fix it.
fn unknown_plugin(registry: &PluginRegistry, kind: PluginKind, name: &str) -> String {
    let known = registry.names(kind);
    if known.is_empty() {
        format!(
            "unknown {k} '{name}': {k}s come from plugin libraries; name one with \"library\"",
            k = kind.name()
        )
    } else {
        format!(
            "unknown {} '{name}' (registered in-process: {}; or name a plugin library with \"library\")",
            kind.name(),
            known.join(", ")
        )
    }
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn xyz_rpy(p: &PoseFile) -> Pose {
    pose_from_xyz_rpy(p.position.map(|f| f.0), p.rpy.map(|f| f.0))
}

impl Loader<'_> {
    fn scene(&mut self, src: &Rc<Source>, scene: &SceneFile) -> Result<(), SsxError> {
        self.stack.push(canonical(&src.path));
        for (i, inc) in scene.include.iter().enumerate() {
            let at = format!("include[{i}]");
            let path = src.resolve(inc);
            let canon = canonical(&path);
            if let Some(pos) = self.stack.iter().position(|p| *p == canon) {
                let chain: Vec<String> = self.stack[pos..]
                    .iter()
                    .chain(std::iter::once(&canon))
                    .map(|p| p.display().to_string())
                    .collect();
                return Err(src.err(&at, format!("include cycle: {}", chain.join(" -> "))));
            }
            if self.stack.len() >= limits::MAX_INCLUDE_DEPTH {
                return Err(src.err(
                    &at,
                    format!(
                        "includes nest deeper than {} files",
                        limits::MAX_INCLUDE_DEPTH
                    ),
                ));
            }
            let inner = Rc::new(Source::read(&path, Some((src, &at)), &self.budget)?);
            let parsed: SceneFile = inner.parse()?;
            self.scene(&inner, &parsed)?;
        }
        for (i, e) in scene.extensions.iter().enumerate() {
            let at = format!("extensions[{i}]");
            let library = self.check_plugin(
                src,
                &at,
                PluginKind::Extension,
                &e.plugin,
                e.library.as_deref(),
            )?;
            if let Some(first) = self.extension_names.insert(e.name.clone(), src.origin(&at)) {
                return Err(src.err(
                    &format!("{at}.name"),
                    format!("duplicate extension name '{}' (first at {first})", e.name),
                ));
            }
            self.extensions.push(ExtensionSpec {
                name: e.name.clone(),
                plugin: PluginSpec {
                    plugin: e.plugin.clone(),
                    library,
                    descriptor: e.descriptor.clone(),
                    origin: Some(src.origin(&format!("{at}.descriptor"))),
                },
            });
        }
        for (i, inst) in scene.artifacts.iter().enumerate() {
            self.instance(src, &format!("artifacts[{i}]"), inst)?;
        }
        self.stack.pop();
        Ok(())
    }

    /// Checks a plugin reference: a built-in name, or a library that can be found and opened
    /// and that has a plugin of that name and kind. Returns the located library, if any.
    fn check_plugin(
        &self,
        src: &Source,
        at: &str,
        kind: PluginKind,
        name: &str,
        library: Option<&Path>,
    ) -> Result<Option<PathBuf>, SsxError> {
        let Some(named) = library else {
            return if self.registry.has(kind, name) {
                Ok(None)
            } else {
                Err(src.err(
                    &format!("{at}.plugin"),
                    unknown_plugin(self.registry, kind, name),
                ))
            };
        };
        let lib_at = format!("{at}.library");
        let path =
            ssx_core::abi::find_library(named, &src.home).map_err(|m| src.err(&lib_at, m))?;
        // Driver and sensor libraries from a private copy, as the run opens them: a library
        // that is pinned (it also exports an extension) must never stay mapped from a file a
        // new build may be written over.
        let mut libraries = self.libraries.borrow_mut();
        let lib = match kind {
            PluginKind::Extension => libraries.library(&path),
            _ => libraries.swappable(&path),
        }
        .map_err(|m| src.err(&lib_at, m))?;
        drop(libraries);
        let found = lib.plugins().find(|p| p.name == name);
        match found {
            Some(p) if p.kind == kind.name() => Ok(Some(path)),
            Some(p) => Err(src.err(
                &format!("{at}.plugin"),
                format!(
                    "'{name}' in '{}' is a {}, not a {}",
                    path.display(),
                    p.kind,
                    kind.name()
                ),
            )),
            None => {
                let names: Vec<String> = lib
                    .plugins()
                    .map(|p| format!("{} {}", p.kind, p.name))
                    .collect();
                Err(src.err(
                    &format!("{at}.plugin"),
                    format!(
                        "no {} named '{name}' in '{}' (it has: {})",
                        kind.name(),
                        path.display(),
                        names.join(", ")
                    ),
                ))
            }
        }
    }

    fn instance(
        &mut self,
        src: &Rc<Source>,
        at: &str,
        inst: &InstanceFile,
    ) -> Result<(), SsxError> {
        let path = src.resolve(&inst.artifact);
        let canon = canonical(&path);
        let prepared = match self.cache.get(&canon) {
            Some(p) => Rc::clone(p),
            None => {
                let file = Rc::new(Source::read(
                    &path,
                    Some((src, &format!("{at}.artifact"))),
                    &self.budget,
                )?);
                let parsed: ArtifactFile = file.parse()?;
                let p = Rc::new(self.prepare(file, &parsed)?);
                self.cache.insert(canon, Rc::clone(&p));
                p
            }
        };
        let (driver, sensors) = self.overrides(src, at, &prepared, &inst.overrides)?;
        let base = xyz_rpy(&inst.pose);
        // Checked before any placement is computed or any body copied.
        let copies = match inst.replicate {
            None => 1,
            Some(Replicate::Grid { count, .. })
            | Some(Replicate::Circle { count, .. })
            | Some(Replicate::Random { count, .. }) => count.0,
        };
        let adds = copies.saturating_mul(prepared.bodies.len());
        if self.bodies.saturating_add(adds) > limits::MAX_BODIES {
            return Err(src.err(
                &format!(
                    "{at}{}",
                    if inst.replicate.is_some() {
                        ".replicate"
                    } else {
                        ""
                    }
                ),
                format!(
                    "the scene would have {} bodies; the limit is {}",
                    self.bodies.saturating_add(adds),
                    limits::MAX_BODIES
                ),
            ));
        }
        self.bodies += adds;
        for (name, pose) in self.placements(src, at, inst, base)? {
            let far = prepared
                .bodies
                .iter()
                .map(|(_, b)| (pose * b.pose).translation.vector.norm())
                .fold(0.0, f64::max);
            if far > limits::MAX_POSITION {
                return Err(src.err(
                    &format!("{at}{}", if inst.replicate.is_some() { ".replicate" } else { ".pose" }),
                    format!(
                        "'{name}' would stand {far:.3e} m from the origin; positions are limited to {:.0e} m (single-precision physics)",
                        limits::MAX_POSITION
                    ),
                ));
            }
            let origin = src.origin(&format!("{at}.name"));
            if let Some(first) = self.names.insert(name.clone(), origin) {
                return Err(src.err(
                    &format!("{at}.name"),
                    format!("duplicate artifact name '{name}' (first at {first})"),
                ));
            }
            self.artifacts.push(ArtifactSpec {
                name,
                bodies: prepared
                    .bodies
                    .iter()
                    .map(|(n, b)| {
                        (
                            n.clone(),
                            BodySpec {
                                pose: pose * b.pose,
                                ..b.clone()
                            },
                        )
                    })
                    .collect(),
                joints: prepared.joints.clone(),
                visuals: prepared.visuals.clone(),
                driver: driver.clone(),
                sensors: sensors.clone(),
            });
        }
        Ok(())
    }

    fn placements(
        &self,
        src: &Source,
        at: &str,
        inst: &InstanceFile,
        base: Pose,
    ) -> Result<Vec<(String, Pose)>, SsxError> {
        let Some(rep) = inst.replicate else {
            return Ok(vec![(inst.name.clone(), base)]);
        };
        let named = |i: usize, local: Pose| (format!("{}_{i}", inst.name), base * local);
        Ok(match rep {
            Replicate::Grid {
                count,
                columns,
                spacing,
            } => {
                let cols = columns.map_or((count.0 as f64).sqrt().ceil() as usize, |c| c.0);
                (0..count.0)
                    .map(|i| {
                        let (row, col) = (i / cols, i % cols);
                        named(
                            i,
                            pose_from_xyz_rpy(
                                [col as f64 * spacing[0].0, row as f64 * spacing[1].0, 0.0],
                                [0.0; 3],
                            ),
                        )
                    })
                    .collect()
            }
            Replicate::Circle { count, radius } => (0..count.0)
                .map(|i| {
                    let th = std::f64::consts::TAU * i as f64 / count.0 as f64;
                    named(
                        i,
                        pose_from_xyz_rpy(
                            [radius.0 * th.cos(), radius.0 * th.sin(), 0.0],
                            [0.0, 0.0, th],
                        ),
                    )
                })
                .collect(),
            Replicate::Random {
                count,
                min,
                max,
                random_yaw,
                seed,
            } => {
                for k in 0..3 {
                    if min[k].0 > max[k].0 {
                        return Err(src.err(
                            &format!("{at}.replicate.random.min[{k}]"),
                            format!("min {} is above max {}", min[k].0, max[k].0),
                        ));
                    }
                }
                let seed = seed.unwrap_or(self.seed ^ fnv1a(&inst.name));
                let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
                (0..count.0)
                    .map(|i| {
                        let mut p = [0.0; 3];
                        for k in 0..3 {
                            p[k] = min[k].0 + rng.random::<f64>() * (max[k].0 - min[k].0);
                        }
                        let yaw = if random_yaw {
                            rng.random::<f64>() * std::f64::consts::TAU - std::f64::consts::PI
                        } else {
                            0.0
                        };
                        named(i, pose_from_xyz_rpy(p, [0.0, 0.0, yaw]))
                    })
                    .collect()
            }
        })
    }

    fn overrides(
        &self,
        src: &Source,
        at: &str,
        p: &Prepared,
        o: &OverridesFile,
    ) -> Result<(Option<PluginSpec>, Vec<SensorSpec>), SsxError> {
        let merge = |spec: &PluginSpec,
                     keys: &serde_json::Map<String, serde_json::Value>,
                     json_at: String| {
            let mut spec = spec.clone();
            let serde_json::Value::Object(obj) = &mut spec.descriptor else {
                return Err(src.err(&json_at, format!("cannot override keys of a descriptor that is not a JSON object (plugin '{}')", spec.plugin)));
            };
            for (k, v) in keys {
                obj.insert(k.clone(), v.clone());
            }
            spec.origin = Some(src.origin(&json_at));
            Ok(spec)
        };
        let driver = match (&o.driver, &p.driver) {
            (None, d) => d.clone(),
            (Some(keys), Some(d)) => Some(merge(d, keys, format!("{at}.overrides.driver"))?),
            (Some(_), None) => {
                return Err(src.err(
                    &format!("{at}.overrides.driver"),
                    format!("'{}' has no driver to override", p.src.path.display()),
                ));
            }
        };
        let mut sensors = p.sensors.clone();
        for (name, keys) in &o.sensors {
            let json_at = format!("{at}.overrides.sensors.{name}");
            let Some(s) = sensors.iter_mut().find(|s| &s.name == name) else {
                let known: Vec<&str> = p.sensors.iter().map(|s| s.name.as_str()).collect();
                return Err(src.err(
                    &json_at,
                    format!(
                        "no sensor named '{name}' in '{}' (sensors: {})",
                        p.src.path.display(),
                        known.join(", ")
                    ),
                ));
            };
            s.plugin = merge(&s.plugin, keys, json_at)?;
        }
        Ok((driver, sensors))
    }

    fn prepare(&self, src: Rc<Source>, a: &ArtifactFile) -> Result<Prepared, SsxError> {
        let mut index: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, b) in a.bodies.iter().enumerate() {
            if let Some(first) = index.insert(&b.name, i) {
                return Err(src.err(
                    &format!("bodies[{i}].name"),
                    format!(
                        "duplicate body name '{}' (first at bodies[{first}])",
                        b.name
                    ),
                ));
            }
        }
        let known = || {
            a.bodies
                .iter()
                .map(|b| b.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let lookup = |name: &str, at: String| {
            index.get(name).copied().ok_or_else(|| {
                src.err(
                    &at,
                    format!(
                        "no body named '{name}' in this artifact (bodies: {})",
                        known()
                    ),
                )
            })
        };
        let parents: Vec<Option<usize>> = a
            .bodies
            .iter()
            .enumerate()
            .map(|(i, b)| {
                b.parent
                    .as_deref()
                    .map(|p| lookup(p, format!("bodies[{i}].parent")))
                    .transpose()
            })
            .collect::<Result<_, _>>()?;

        // Each body's pose in the artifact frame: its parent's pose times its own.
        let mut rel: Vec<Option<Pose>> = vec![None; a.bodies.len()];
        for i in 0..a.bodies.len() {
            let mut chain = vec![i];
            while let Some(p) = parents[*chain.last().unwrap()] {
                if rel[p].is_some() {
                    break;
                }
                if chain.contains(&p) {
                    return Err(src.err(
                        &format!("bodies[{i}].parent"),
                        format!(
                            "the parent chain of body '{}' loops back on itself",
                            a.bodies[i].name
                        ),
                    ));
                }
                chain.push(p);
            }
            for &k in chain.iter().rev() {
                if rel[k].is_none() {
                    let own = xyz_rpy(&a.bodies[k].pose);
                    rel[k] = Some(match parents[k] {
                        Some(p) => rel[p].expect("parents resolved first") * own,
                        None => own,
                    });
                }
            }
        }
        let rel: Vec<Pose> = rel
            .into_iter()
            .map(|p| p.expect("every body resolved"))
            .collect();

        let mut bodies = Vec::with_capacity(a.bodies.len());
        let mut visuals = Vec::new();
        for (i, b) in a.bodies.iter().enumerate() {
            let at = format!("bodies[{i}]");
            let kind = match b.kind {
                KindFile::Dynamic => BodyKind::Dynamic,
                KindFile::Static => BodyKind::Static,
                KindFile::Kinematic => BodyKind::Kinematic,
            };
            let mut colliders = Vec::with_capacity(b.colliders.len());
            for (j, c) in b.colliders.iter().enumerate() {
                let shape = match c.shape {
                    ShapeFile::Box { size } => Shape::Box {
                        half_extents: Vec3::new(size[0].0, size[1].0, size[2].0) / 2.0,
                    },
                    ShapeFile::Sphere { radius } => Shape::Sphere { radius: radius.0 },
                    ShapeFile::Capsule { radius, length } => Shape::Capsule {
                        radius: radius.0,
                        half_length: length.0 / 2.0,
                    },
                    ShapeFile::Cylinder { radius, length } => Shape::Cylinder {
                        radius: radius.0,
                        half_length: length.0 / 2.0,
                    },
                    ShapeFile::Plane {} => {
                        if kind != BodyKind::Static {
                            return Err(src.err(
                                &format!("{at}.colliders[{j}].shape"),
                                "a plane is infinite: only static bodies may have one",
                            ));
                        }
                        Shape::Plane
                    }
                };
                colliders.push(ColliderSpec {
                    shape,
                    local_pose: xyz_rpy(&c.pose),
                    friction: c.friction.map_or(0.5, |f| f.0),
                    restitution: c.restitution.map_or(0.0, |r| r.0),
                });
            }
            let volume: f64 = colliders
                .iter()
                .map(|c| c.shape.volume())
                .filter(|v| v.is_finite())
                .sum();
            let mass = match (kind, b.mass, b.density, b.inertia) {
                (BodyKind::Dynamic, Some(_), Some(_), _) => {
                    return Err(src.err(
                        &format!("{at}.density"),
                        "give either 'mass' or 'density', not both",
                    ));
                }
                (BodyKind::Dynamic, None, _, Some(_)) => {
                    return Err(src.err(&format!("{at}.inertia"), "'inertia' needs 'mass'"));
                }
                (BodyKind::Dynamic, Some(m), None, Some(inertia)) => MassSpec::Explicit {
                    mass: m.0,
                    inertia: Vec3::new(inertia[0].0, inertia[1].0, inertia[2].0),
                },
                (BodyKind::Dynamic, Some(m), None, None) => {
                    if volume <= 0.0 {
                        return Err(src.err(&format!("{at}.mass"), "'mass' is spread over the colliders by volume: give a collider with a volume, or 'inertia'"));
                    }
                    MassSpec::Mass(m.0)
                }
                (BodyKind::Dynamic, None, d, None) => {
                    if volume <= 0.0 {
                        return Err(src.err(&at, format!("dynamic body '{}' has no mass: give it a collider with a volume, or 'mass' and 'inertia'", b.name)));
                    }
                    let density = d.map_or(DEFAULT_DENSITY, |d| d.0);
                    let mass = density * volume;
                    if !(Mass::MIN..=Mass::MAX).contains(&mass) {
                        return Err(src.err(&at, format!("body '{}' would weigh {mass:.3e} kg (density x volume); masses run from {} to {} kg", b.name, ssx_sdk::number(Mass::MIN), ssx_sdk::number(Mass::MAX))));
                    }
                    MassSpec::Density(density)
                }
                (_, m, d, i) => {
                    let field = if m.is_some() {
                        "mass"
                    } else if d.is_some() {
                        "density"
                    } else if i.is_some() {
                        "inertia"
                    } else {
                        ""
                    };
                    if !field.is_empty() {
                        return Err(src.err(
                            &format!("{at}.{field}"),
                            format!(
                                "a {} body has no mass: remove '{field}'",
                                match kind {
                                    BodyKind::Static => "static",
                                    _ => "kinematic",
                                }
                            ),
                        ));
                    }
                    MassSpec::Density(0.0)
                }
            };
            let color = match b.color {
                None => ssx_core::world::DEFAULT_BODY_COLOR,
                Some(c) => {
                    if let Some(k) = c.iter().position(|x| x.0 > 1.0) {
                        return Err(src.err(
                            &format!("{at}.color[{k}]"),
                            format!("colour components run from 0 to 1, got {}", c[k].0),
                        ));
                    }
                    c.map(|x| x.0 as f32)
                }
            };
            for c in &colliders {
                visuals.push(ArtifactVisual {
                    body: i,
                    local_pose: c.local_pose,
                    shape: c.shape,
                    color,
                });
            }
            bodies.push((
                b.name.clone(),
                BodySpec {
                    kind,
                    pose: rel[i],
                    mass,
                    colliders,
                    linear_damping: b.linear_damping.map_or(0.0, |d| d.0),
                    angular_damping: b.angular_damping.map_or(0.0, |d| d.0),
                    planar: b.planar,
                },
            ));
        }

        let mut joints = Vec::new();
        let mut joint_names: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, j) in a.joints.iter().enumerate() {
            let at = format!("joints[{i}]");
            if let Some(first) = joint_names.insert(&j.name, i) {
                return Err(src.err(
                    &format!("{at}.name"),
                    format!(
                        "duplicate joint name '{}' (first at joints[{first}])",
                        j.name
                    ),
                ));
            }
            let parent = lookup(&j.parent, format!("{at}.parent"))?;
            let child = lookup(&j.child, format!("{at}.child"))?;
            if parent == child {
                return Err(src.err(
                    &format!("{at}.child"),
                    format!("a joint links two different bodies; both are '{}'", j.child),
                ));
            }
            let (kind, axis) = match j.kind {
                JointKindFile::Fixed => {
                    if j.axis.is_some() || j.limits.is_some() || j.motor.is_some() {
                        return Err(src.err(
                            &at,
                            "only revolute joints take 'axis', 'limits' and 'motor'",
                        ));
                    }
                    (JointKind::Fixed, Vec3::x())
                }
                JointKindFile::Revolute => {
                    let axis = j
                        .axis
                        .ok_or_else(|| src.err(&at, "a revolute joint needs 'axis'"))?;
                    let axis = Vec3::new(axis[0].0, axis[1].0, axis[2].0);
                    if axis.norm() < 1e-9 {
                        return Err(src.err(&format!("{at}.axis"), "the axis must not be zero"));
                    }
                    let limits = match j.limits {
                        Some([lo, hi]) if lo.0 >= hi.0 => {
                            return Err(src.err(
                                &format!("{at}.limits"),
                                format!("lower limit {} must be below upper limit {}", lo.0, hi.0),
                            ));
                        }
                        l => l.map(|[lo, hi]| [lo.0, hi.0]),
                    };
                    (
                        JointKind::Revolute {
                            limits,
                            motor: j.motor.map(|m| [m.stiffness.0, m.damping.0]),
                        },
                        axis.normalize(),
                    )
                }
            };
            // The joint frame's x axis is the rotation axis; the child's frame follows from the
            // bodies' initial relative pose.
            let turn = Rotation::rotation_between(&Vec3::x(), &axis).unwrap_or_else(|| {
                Rotation::from_axis_angle(&Vec3::z_axis(), std::f64::consts::PI)
            });
            let frame1 = Pose::from_parts(
                Vec3::new(j.anchor[0].0, j.anchor[1].0, j.anchor[2].0).into(),
                turn,
            );
            let frame2 = rel[child].inverse() * rel[parent] * frame1;
            joints.push(ArtifactJoint {
                name: j.name.clone(),
                kind,
                parent,
                child,
                frame1,
                frame2,
            });
        }
        // A child with no joint to its parent is welded to it.
        for (i, p) in parents.iter().enumerate() {
            let Some(p) = *p else { continue };
            let linked = joints
                .iter()
                .any(|j| (j.parent, j.child) == (p, i) || (j.parent, j.child) == (i, p));
            if !linked {
                joints.push(ArtifactJoint {
                    name: format!("weld:{}", a.bodies[i].name),
                    kind: JointKind::Fixed,
                    parent: p,
                    child: i,
                    frame1: rel[p].inverse() * rel[i],
                    frame2: Pose::identity(),
                });
            }
        }

        let driver = match &a.driver {
            None => None,
            Some(d) => {
                let library = self.check_plugin(
                    &src,
                    "driver",
                    PluginKind::Driver,
                    &d.plugin,
                    d.library.as_deref(),
                )?;
                Some(PluginSpec {
                    plugin: d.plugin.clone(),
                    library,
                    descriptor: d.descriptor.clone(),
                    origin: Some(src.origin("driver.descriptor")),
                })
            }
        };
        let mut sensors = Vec::with_capacity(a.sensors.len());
        for (i, s) in a.sensors.iter().enumerate() {
            let at = format!("sensors[{i}]");
            if let Some(first) = a.sensors[..i].iter().position(|o| o.name == s.name) {
                return Err(src.err(
                    &format!("{at}.name"),
                    format!(
                        "duplicate sensor name '{}' (first at sensors[{first}])",
                        s.name
                    ),
                ));
            }
            let library = self.check_plugin(
                &src,
                &at,
                PluginKind::Sensor,
                &s.plugin,
                s.library.as_deref(),
            )?;
            sensors.push(SensorSpec {
                name: s.name.clone(),
                plugin: PluginSpec {
                    plugin: s.plugin.clone(),
                    library,
                    descriptor: s.descriptor.clone(),
                    origin: Some(src.origin(&format!("{at}.descriptor"))),
                },
            });
        }
        Ok(Prepared {
            src,
            bodies,
            joints,
            visuals,
            driver,
            sensors,
        })
    }
}
