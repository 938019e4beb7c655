//! Instancing a scene: its artifacts (each file prepared once, then placed, overridden and
//! named), its includes, and the plugins it names, checked against the registry and libraries.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use ssx_core::environment::ExtensionSpec;
use ssx_core::math::{Pose, pose_from_xyz_rpy};
use ssx_core::plugin::{PluginKind, PluginRegistry};
use ssx_core::{ArtifactSpec, BodySpec, Origin, PluginSpec, Shape, SsxError};

use crate::limits;
use crate::prepared::Prepared;
use crate::schema::*;
use crate::source::Source;

pub(crate) struct Loader<'r> {
    pub(crate) registry: &'r PluginRegistry,
    pub(crate) seed: u64,
    /// Whether anything read the seed (a random placement without a seed of its own).
    pub(crate) seed_used: std::cell::Cell<bool>,
    pub(crate) cache: HashMap<PathBuf, Rc<Prepared>>,
    /// Scene files being read, for include cycles.
    pub(crate) stack: Vec<PathBuf>,
    pub(crate) artifacts: Vec<ArtifactSpec>,
    pub(crate) names: HashMap<String, Origin>,
    pub(crate) extensions: Vec<ExtensionSpec>,
    pub(crate) extension_names: HashMap<String, Origin>,
    /// Libraries opened to check plugin names (each once).
    pub(crate) libraries: std::cell::RefCell<ssx_core::abi::PluginLoader>,
    /// Bytes the remaining files may take.
    pub(crate) budget: std::cell::Cell<u64>,
    /// Bodies instanced so far.
    pub(crate) bodies: usize,
    /// Collision groups handed to robot model instances so far (each instance its own).
    pub(crate) groups: u32,
    /// Robot models' meshes read so far.
    pub(crate) meshes: std::cell::RefCell<crate::model::MeshCache>,
    /// Where each instance's copies were placed, for a later `apart_from` or `relative_to`.
    pub(crate) placed: HashMap<String, Vec<Pose>>,
}

impl Loader<'_> {
    /// A robot model file, read and assembled into an artifact. `named` is where the scene or
    /// the JSON artifact named it.
    pub(crate) fn prepare_model(
        &self,
        path: &Path,
        named: (&Source, &str),
        options: &crate::model::ModelOptions,
    ) -> Result<Prepared, SsxError> {
        crate::model::prepare(
            path,
            named,
            options,
            &self.budget,
            &mut self.meshes.borrow_mut(),
        )
    }
}

/// "unknown driver 'x'", with what would fix it.
pub(crate) fn unknown_plugin(registry: &PluginRegistry, kind: PluginKind, name: &str) -> String {
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

pub(crate) fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

pub(crate) fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

pub(crate) fn xyz_rpy(p: &PoseFile) -> Pose {
    pose_from_xyz_rpy(p.position.map(|f| f.0), p.rpy.map(|f| f.0))
}

/// The radius of a sphere about the shape's origin that holds it (0 for a plane).
pub(crate) fn bounding_radius(shape: &Shape) -> f64 {
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

impl Loader<'_> {
    pub(crate) fn scene(&mut self, src: &Rc<Source>, scene: &SceneFile) -> Result<(), SsxError> {
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
                    plugin: e.plugin.as_str().into(),
                    library: library.map(Into::into),
                    descriptor: std::sync::Arc::new(e.descriptor.clone()),
                    origin: Some(src.origin(&format!("{at}.descriptor")).into()),
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
    pub(crate) fn check_plugin(
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
        match lib.plugin(kind.name(), name) {
            Ok(_) => Ok(Some(path)),
            Err(e) => Err(src.err(&format!("{at}.plugin"), e)),
        }
    }

    pub(crate) fn instance(
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
                let named = format!("{at}.artifact");
                let p = if crate::model::is_model(&path) {
                    Rc::new(self.prepare_model(&path, (src, &named), &Default::default())?)
                } else {
                    let file = Rc::new(Source::read(&path, Some((src, &named)), &self.budget)?);
                    let parsed: ArtifactFile = file.parse()?;
                    Rc::new(self.prepare(file, &parsed)?)
                };
                self.cache.insert(canon, Rc::clone(&p));
                p
            }
        };
        let (driver, sensors) = self.overrides(src, at, &prepared, &inst.overrides)?;
        let base = self.frame(src, at, inst)? * xyz_rpy(&inst.pose);
        // Checked before any placement is computed or any body copied.
        let copies = match inst.replicate {
            None => 1,
            Some(Replicate::Grid {
                count, leave_out, ..
            }) => count.0.saturating_sub(leave_out),
            Some(Replicate::Circle { count, .. }) | Some(Replicate::Random { count, .. }) => {
                count.0
            }
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
        let placements = self.placements(src, at, inst, base)?;
        self.placed.insert(
            inst.name.clone(),
            placements.iter().map(|(_, p)| *p).collect(),
        );
        for (name, pose) in placements {
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
            // A robot model's links do not touch each other; each copy is its own group.
            let group = if prepared.model.is_some() && prepared.bodies.len() > 1 {
                self.groups += 1;
                self.groups
            } else {
                0
            };
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
                                group,
                                ..b.clone()
                            },
                        )
                    })
                    .collect(),
                joints: prepared.joints.clone(),
                visuals: prepared.visuals.clone(),
                driver: driver.clone(),
                sensors: sensors.clone(),
                model: prepared.model.clone(),
            });
        }
        Ok(())
    }
}
