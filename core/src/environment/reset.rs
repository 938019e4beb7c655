//! Starting a run over ([`Environment::reset`]): the world as it was after loading, at step 0,
//! without loading a plugin library again.

use std::sync::Arc;
use std::time::Duration;

use super::build::{create_engine, create_extension, extension_init, render_nodes};
use super::held::Held;
use super::{ArtifactSpec, Environment};
use crate::abi::PluginLoader;
use crate::error::{PluginFault, SsxError};
use crate::guard::{self, Phase};
use crate::pacer::Pacer;
use crate::render::{RenderReset, RenderScene};
use crate::stats::MissReporter;
use crate::world::MapGrid;

/// Makes a scene's artifacts anew for another seed: the program that read the scene file knows
/// how (ssxd and the Python package hand [`Environment::set_scene_source`] one that loads it
/// with ssx-artifacts).
pub trait SceneSource: Send {
    /// The scene's artifacts and map with `seed` as its seed. `libraries`: the plugin
    /// libraries the world has open (after any swap), for checking the scene's plugin names
    /// without opening (and copying) a library again.
    fn rebuild(&self, seed: u64, libraries: &PluginLoader) -> Result<Rebuilt, SsxError>;
}

/// A scene made anew for a seed ([`SceneSource::rebuild`]).
pub struct Rebuilt {
    /// Artifact instances, in scene order.
    pub artifacts: Vec<ArtifactSpec>,
    /// The scene's map, if it has one.
    pub map: Option<Arc<MapGrid>>,
}

impl Environment {
    /// Where a reset with a new seed gets the scene's artifacts ([`Environment::reset`]).
    pub fn set_scene_source(&mut self, source: Box<dyn SceneSource>) {
        self.source = Some(source);
    }

    /// Starts the run over: every driver and sensor destroyed and created anew from its
    /// descriptor (their libraries stay loaded), a new physics engine with the bodies where the
    /// scene puts them, step 0, fresh statistics. Extensions are kept and told
    /// ([`crate::SimulationExtension::reset`]) or, when they keep nothing, created anew.
    ///
    /// `seed`: `None` keeps the scene's seed (the same world as after loading, to the bit);
    /// `Some(s)` makes the scene anew with seed `s` through the [`SceneSource`] (seeded replica
    /// poses, plugin seeds, generated maps without a seed of their own). A paused run stays
    /// paused. Fails before anything is torn down when the scene cannot be made for the seed;
    /// a plugin that fails to be created again leaves the Environment without artifacts (it
    /// must be dropped).
    pub fn reset(&mut self, seed: Option<u64>) -> Result<(), SsxError> {
        let rebuilt = self.rebuild(seed)?;
        self.start_over(rebuilt)
    }

    /// The scene made anew for `seed` (None: the one the world was built from).
    pub(super) fn rebuild(&self, seed: Option<u64>) -> Result<Option<(u64, Rebuilt)>, SsxError> {
        let Some(seed) = seed else {
            return Ok(None);
        };
        let source = self.source.as_ref().ok_or_else(|| {
            SsxError::Config(format!(
                "cannot reset with seed {seed}: this Environment was not given a scene source (only a reset with the scene's own seed is possible)"
            ))
        })?;
        Ok(Some((seed, source.rebuild(seed, &self.loader)?)))
    }

    /// [`Environment::reset`] once the scene for the seed is made.
    pub(super) fn start_over(&mut self, rebuilt: Option<(u64, Rebuilt)>) -> Result<(), SsxError> {
        let (steps_before, time_before) = (self.steps, self.sim_time());
        // The old instances first, and the swap thread that holds recipes for them.
        self.destroy_plugins();
        self.sensor_shards.clear();
        self.driver_shards.clear();
        self.swapper = None;
        self.retiring = None;
        self.swappable = false;
        if let Some((seed, r)) = rebuilt {
            self.config.seed = seed;
            self.config.map = r.map;
            // Held against the list the old ones were held against: another world's, or this
            // one's.
            let specs = r.artifacts.into_iter().map(Arc::new).collect();
            let base = Arc::clone(self.specs.base());
            self.specs = Held::against(specs, &base);
        }
        self.reset_extensions();
        // What the old engine shared with other worlds, to share again where still equal.
        let kept = self.engine.commons();
        self.engine = create_engine(&self.registry, &self.config)?;
        self.reading_index = vec![None; self.specs.len()];
        let specs = self.specs.specs();
        let registry = self.registry.clone();
        let building = guard::enter(self.engine_label, Phase::Build, 0);
        let built = self.add_bodies(&specs);
        drop(building);
        if let (Ok(()), Some(part)) = (&built, &kept) {
            self.engine.share(part);
        }
        let built = built.and_then(|()| self.add_plugins(&specs, &registry));
        built?;
        self.stats = self.stats.fresh();
        let paced = self.pacer.mode() != crate::pacer::Mode::Fast;
        self.misses = MissReporter::paced(Duration::from_secs(1), paced);
        self.late_wakeups = MissReporter::paced(Duration::from_secs(1), paced);
        self.pacer = Pacer::new(
            self.pacer.mode(),
            self.config.timestep,
            self.config.late_policy,
        );
        self.steps = 0;
        self.started_at = None;
        self.last_step_end = Duration::ZERO;
        self.last_physics = Duration::ZERO;
        self.pending_steps = 0;
        self.metrics.clear();
        self.show_reset(&specs, steps_before, time_before);
        tracing::debug!("reset to step 0 with seed {}", self.config.seed);
        self.collect_faults()
    }

    /// Tells the render engine (live view, recording) that the world started over, with the
    /// new world's nodes.
    fn show_reset(&mut self, specs: &[Arc<ArtifactSpec>], steps_before: u64, time_before: f64) {
        let nodes = render_nodes(specs);
        let libraries = self.swappable_libraries();
        self.render.reset(&RenderReset {
            scene: RenderScene {
                name: &self.config.scene,
                timestep: self.config.timestep,
                artifacts: &self.catalog.artifacts,
                specs,
                libraries: &libraries,
            },
            nodes: &nodes,
            seed: self.config.seed,
            steps_before,
            time_before,
        });
        // The new world as it stands at step 0, so that a viewer shows it before the first
        // step (a run paused across a reset too).
        let at = self.last_step_end;
        self.publish_frame(at);
    }

    /// Tells every extension that the run starts over; one that keeps nothing is shut down and
    /// created anew. One that fails is reported like a failing `after_step` and not called
    /// again.
    fn reset_extensions(&mut self) {
        let init = extension_init(&self.config);
        for i in 0..self.extensions.list.len() {
            let doing = guard::enter(self.extensions.labels[i], Phase::Init, 0);
            let outcome = self.extensions.list[i].1.reset(&init);
            drop(doing);
            let result = match outcome {
                Some(r) => r,
                None => {
                    let (_, old) = &mut self.extensions.list[i];
                    let doing = guard::enter(self.extensions.labels[i], Phase::Shutdown, 0);
                    old.shutdown();
                    drop(doing);
                    let spec = &self.extension_specs[i];
                    create_extension(spec, &mut self.loader, &self.registry, &self.config)
                        .map(|(new, label)| {
                            self.extensions.list[i].1 = new;
                            self.extensions.labels[i] = label;
                        })
                        .map_err(|e| e.to_string())
                }
            };
            self.extension_failed[i] = result.is_err();
            if let Err(message) = result {
                self.faults.push(PluginFault {
                    artifact: String::new(),
                    plugin: format!("extension '{}' (reset)", self.extensions.list[i].0),
                    step: 0,
                    message,
                });
            }
        }
    }
}
