//! Library swaps in a running world: requests (by the API, an extension or the watcher), the
//! hand-over of state to the new build, and the switch at a step boundary (swap.rs prepares
//! the new instances off the stepping thread).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::Environment;
use crate::error::SsxError;
use crate::plugin::{Driver, Sensor, SwapDesk};
use crate::render::SwappedBuild;
use crate::spec::PluginSpec;
use crate::swap::{Fresh, Outcome, Recipe, Slot, Swapper};

/// Extensions' window on swaps: requests go to the swap thread, outcomes come from the record.
pub(super) struct Desk<'a> {
    pub(super) swapper: &'a Swapper,
    pub(super) events: &'a [SwapEvent],
}

impl SwapDesk for Desk<'_> {
    fn request(&self, library: &str) -> Result<u64, String> {
        self.swapper
            .request(std::path::Path::new(library))
            .map(|(_, ticket)| ticket)
    }
    fn outcome(&self, ticket: u64) -> Option<Result<String, String>> {
        let e = self.events.iter().rev().find(|e| e.ticket == ticket)?;
        Some(match &e.result {
            Ok(_) => Ok(e.library.display().to_string()),
            Err(reason) => Err(reason.clone()),
        })
    }
}

/// A library swap, done or refused ([`Environment::swaps`]).
#[derive(Clone, Debug)]
pub struct SwapEvent {
    /// The request's ticket (from [`Environment::request_swap`], an extension's `swap`, or
    /// the watcher), in the order requests were made.
    pub ticket: u64,
    /// The last step before the switch (the new plugins run from the next).
    pub step: u64,
    /// The library, as the scene names it.
    pub library: PathBuf,
    /// What happened: the switch, or why the new build was refused.
    pub result: Result<SwapDone, String>,
}

/// A switch to a new build.
#[derive(Clone, Copy, Debug)]
pub struct SwapDone {
    /// Instances exchanged.
    pub instances: usize,
    /// From the request to the switch: preparing the build off the stepping thread, then
    /// waiting for the next step boundary.
    pub after_request: Duration,
    /// The stepping thread's part: exchanging the instances.
    pub switch: Duration,
}

impl Environment {
    /// Asks for the drivers and sensors of `library` (as the scene names it, its absolute path,
    /// or its file name) to be swapped for a new build of that file while the run goes on (see
    /// [`crate::swap`]). The new build is loaded and instantiated off the stepping thread; the
    /// switch happens between two steps, in a later [`Environment::step`]; its outcome is in
    /// [`Environment::swaps`] and the log. Fails at once when no instance comes from `library`.
    /// Returns the request's ticket (its [`SwapEvent::ticket`]).
    pub fn request_swap(&mut self, library: &std::path::Path) -> Result<u64, SsxError> {
        self.swapper()?
            .request(library)
            .map(|(_, ticket)| ticket)
            .map_err(|m| SsxError::Config(format!("cannot swap: {m}")))
    }

    /// Watches the files of the run's swappable libraries: each change that settles is swapped
    /// in ([`crate::swap::SETTLE`]).
    pub fn watch_plugins(&mut self) -> Result<(), SsxError> {
        self.swapper()?
            .watch()
            .map_err(|e| SsxError::Config(format!("cannot start the plugin watcher: {e}")))
    }

    /// Swaps done and refused so far, in order.
    pub fn swaps(&self) -> &[SwapEvent] {
        &self.swaps
    }

    /// How to make each library instance again, for the swap thread: from its artifact's spec
    /// and its slot, sensors then drivers in slot order. Made when the swap thread starts, not
    /// kept by every world (a batch's worlds never swap: about 2 KiB a world).
    pub(super) fn recipes(&self) -> Vec<Recipe> {
        let mut recipes = Vec::new();
        // A library plugin's recipe; built-in plugins have none.
        let mut add = |spec: &PluginSpec, init, slot, guard| {
            if let Some(lib) = &spec.library {
                recipes.push(Recipe {
                    library: crate::files::absolute(lib),
                    plugin: spec.plugin.to_string(),
                    descriptor: spec.descriptor.clone(),
                    init,
                    slot,
                    guard,
                });
            }
        };
        for (k, shard) in self.sensor_shards.iter().enumerate() {
            for (index, a) in shard.items.iter().enumerate() {
                let (ai, art) = (a.id.index(), self.specs.like(a.id.index()));
                for (si, (spec, slot)) in art.sensors.iter().zip(&a.sensors).enumerate() {
                    let at = Slot::Sensor {
                        shard: k as u32,
                        index: index as u32,
                        sensor: si as u32,
                    };
                    let init = self.plugin_init(art, ai, si as u32 + 1);
                    add(&spec.plugin, init, at, slot.guard);
                }
            }
        }
        for (k, shard) in self.driver_shards.iter().enumerate() {
            for (index, d) in shard.items.iter().enumerate() {
                let (ai, art) = (d.id.index(), self.specs.like(d.id.index()));
                if let Some(spec) = &art.driver {
                    let at = Slot::Driver {
                        shard: k as u32,
                        index: index as u32,
                    };
                    add(spec, self.plugin_init(art, ai, 0), at, d.guard);
                }
            }
        }
        recipes
    }

    pub(super) fn swapper(&mut self) -> Result<&mut Swapper, SsxError> {
        if self.swapper.is_none() {
            let copies = self.loader.copy_dir()?;
            let swapper = Swapper::start(self.recipes(), copies)
                .map_err(|e| SsxError::Config(format!("cannot start the swap thread: {e}")))?;
            self.swapper = Some(Box::new(swapper));
        }
        Ok(self.swapper.as_mut().expect("just made"))
    }

    /// Hands each old instance's state (its `save`) to its successor (`restore`); the first
    /// failure refuses the swap, naming the artifact and plugin. Nothing is exchanged here.
    pub(super) fn hand_over(&mut self, instances: &mut [(Slot, Fresh)]) -> Result<(), String> {
        for (slot, fresh) in instances.iter_mut() {
            let (id, label, state) = match (*slot, fresh) {
                (Slot::Driver { shard, index }, Fresh::Driver(new)) => {
                    let s = &mut self.driver_shards[shard as usize].items[index as usize];
                    let state = s.plugin.save_state();
                    let state = state.and_then(|st| match st {
                        Some(bytes) => new.restore_state(&bytes),
                        None => Ok(()),
                    });
                    (s.id, s.label.text(), state)
                }
                (
                    Slot::Sensor {
                        shard,
                        index,
                        sensor,
                    },
                    Fresh::Sensor(new),
                ) => {
                    let a = &mut self.sensor_shards[shard as usize].items[index as usize];
                    let s = &mut a.sensors[sensor as usize];
                    let state = s.plugin.get_mut().save_state();
                    let state = state.and_then(|st| match st {
                        Some(bytes) => new.restore_state(&bytes),
                        None => Ok(()),
                    });
                    (a.id, s.label.text(), state)
                }
                _ => unreachable!("recipes pair drivers with driver slots"),
            };
            if let Err(m) = state {
                let artifact = &self.catalog.artifacts[id.0 as usize].name;
                return Err(format!(
                    "artifact '{artifact}': {label}: the state hand-over failed: {m}"
                ));
            }
        }
        Ok(())
    }

    /// Swaps `library` (as the scene names it, its path, or its file name) for the build in
    /// the file `build` now, between two steps, waiting for the new build to be prepared: a
    /// replay's way to make a recorded swap at the step the run made it. The new plugins run
    /// from the next step, as after a requested swap's switch. Fails, changing nothing, when
    /// the build is refused.
    pub fn swap_in(
        &mut self,
        library: &std::path::Path,
        build: &std::path::Path,
    ) -> Result<(), SsxError> {
        let swapper = self.swapper()?;
        let (_, ticket) = swapper
            .request_build(library, Some(build))
            .map_err(|m| SsxError::Config(format!("cannot swap: {m}")))?;
        loop {
            let Some(outcome) = self.swapper.as_deref().and_then(Swapper::wait) else {
                return Err(SsxError::Config(
                    "cannot swap: the swap thread is gone".into(),
                ));
            };
            let done = match &outcome {
                Outcome::Ready(p) => p.ticket,
                Outcome::Refused { ticket, .. } => *ticket,
            } == ticket;
            self.switch(outcome);
            if done {
                break;
            }
        }
        match self.swaps.last() {
            Some(SwapEvent {
                result: Err(reason),
                ..
            }) => Err(SsxError::Config(format!("cannot swap: {reason}"))),
            _ => Ok(()),
        }
    }

    /// Between two steps: switches to a prepared build, or records a refusal.
    pub(super) fn switch_ready(&mut self) {
        if let Some(outcome) = self.swapper.as_deref().and_then(Swapper::ready) {
            self.switch(outcome);
        }
    }

    /// Switches to a prepared build, or records a refusal.
    fn switch(&mut self, outcome: Outcome) {
        let step = self.steps;
        match outcome {
            Outcome::Refused {
                ticket,
                library,
                reason,
            } => {
                tracing::warn!(
                    "library swap refused at step {step}: {reason}; the run keeps the plugins of '{}'",
                    library.display()
                );
                self.swaps.push(SwapEvent {
                    ticket,
                    step,
                    library,
                    result: Err(reason),
                });
            }
            Outcome::Ready(mut p) => {
                let t0 = std::time::Instant::now();
                let waited = t0 - p.requested;
                if let Err(reason) = self.hand_over(&mut p.instances) {
                    tracing::warn!(
                        "library swap refused at step {step}: {reason}; the run keeps the plugins of '{}'",
                        p.library.display()
                    );
                    self.swaps.push(SwapEvent {
                        ticket: p.ticket,
                        step,
                        library: p.library.clone(),
                        result: Err(reason),
                    });
                    // The new build's instances go the way old ones do: off this thread.
                    if let Some(s) = &self.swapper {
                        s.retire(vec![Box::new(p)]);
                    }
                    return;
                }
                // The old instances in two vectors (not one box each): the switch allocates twice.
                let mut drivers: Vec<Box<dyn Driver>> = Vec::with_capacity(p.instances.len());
                let mut sensors: Vec<Box<dyn Sensor>> = Vec::with_capacity(p.instances.len());
                let count = p.instances.len();
                for (slot, fresh) in p.instances {
                    match (slot, fresh) {
                        (Slot::Driver { shard, index }, Fresh::Driver(d)) => {
                            let s = &mut self.driver_shards[shard as usize].items[index as usize];
                            let mut d = d;
                            s.member = d.batch_member();
                            drivers.push(std::mem::replace(&mut s.plugin, d));
                            s.enabled = true;
                        }
                        (
                            Slot::Sensor {
                                shard,
                                index,
                                sensor,
                            },
                            Fresh::Sensor(n),
                        ) => {
                            let s = &mut self.sensor_shards[shard as usize].items[index as usize]
                                .sensors[sensor as usize];
                            let mut n = n;
                            s.member = n.batch_member();
                            sensors.push(std::mem::replace(s.plugin.get_mut(), n));
                            s.enabled = true;
                            // The new build keeps its own count of quiet steps.
                            s.reading.wake();
                        }
                        _ => unreachable!("recipes pair drivers with driver slots"),
                    }
                }
                // Instances first, then the library they came from.
                let mut old: Vec<Box<dyn Send>> = vec![Box::new(drivers), Box::new(sensors)];
                let build = Arc::clone(&p.lib);
                if let Some(previous) = self.loader.replace(&p.library, p.lib) {
                    // A recording keeps the swap, and the builds, for a replay.
                    if self.extensions.tape.keeps() {
                        let swap = SwappedBuild {
                            library: p.library.clone(),
                            build,
                            replaced: Arc::clone(&previous),
                        };
                        self.render.swapped(step + 1, swap);
                    }
                    old.push(Box::new(previous));
                }
                let switch = t0.elapsed();
                // Handed to the swap thread at the end of this step's compute (see step_until);
                // a replay's second swap before one step hands the first's over now.
                if let Some(earlier) = self.retiring.replace(old)
                    && let Some(s) = &self.swapper
                {
                    s.retire(earlier);
                }
                tracing::info!(
                    "swapped library '{}' before step {}: {count} instance(s), {:.1} ms after the request, switched in {:.1} us",
                    p.library.display(),
                    step + 1,
                    waited.as_secs_f64() * 1e3,
                    switch.as_secs_f64() * 1e6
                );
                self.swaps.push(SwapEvent {
                    ticket: p.ticket,
                    step,
                    library: p.library,
                    result: Ok(SwapDone {
                        instances: count,
                        after_request: waited,
                        switch,
                    }),
                });
            }
        }
    }
}
