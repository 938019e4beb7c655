//! One step of the [`Environment`], phase by phase: swaps, commands, physics, sensors, drivers,
//! the frame for the render engine, extensions, pacing and accounting. `step_until` reads as the
//! loop it is; each phase is a function of its own.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::{
    ArtifactSensors, DriverSlot, Environment, ExtensionOverlays, Readings, Shard, StepReport,
};
use crate::clock::Clock;
use crate::engine::BodyCommand;
use crate::error::{PluginFault, SsxError};
use crate::guard::{self, Phase};
use crate::pacer::{Mode, PaceOutcome};
use crate::plugin::{ExtensionContext, ReadingSource, SwapDesk};
use crate::render::RenderFrame;
use crate::stats::{Miss, PhaseTimes, StatsView};
use crate::world::{ArtifactId, NoExtensions, World};

use super::calls::{drive_one, sense_one};
use super::swaps::Desk;
use super::world_at;

/// The slowest sensor and driver artifact of a step, for a miss report.
type Slowest = (
    Option<(ArtifactId, Duration)>,
    Option<(ArtifactId, Duration)>,
);

impl Environment {
    /// [`Environment::step`]; a long wait for the deadline ends early once `stop` is set.
    pub(super) fn step_until(&mut self, stop: Option<&AtomicBool>) -> Result<StepReport, SsxError> {
        let clock = std::sync::Arc::clone(&self.clock);
        let clock = &*clock;
        let start = self.begin(clock);
        // A world that keeps no step times and is not paced (a batch's) reads the clock once a
        // step, at its start: its phases read no time (the statistics' percentiles read 0, as
        // `Stats::untimed` says), and it misses nothing.
        let timed = self.stats.timed() || self.pacer.mode() != Mode::Fast;
        let now = || if timed { clock.now() } else { start };
        // 0. A library swap prepared since the last step switches now (counted in this step).
        self.switch_ready();
        // 1. The commands drivers wrote last step, then the physics.
        self.apply_commands();
        self.step_physics();
        let t_physics = now();
        self.last_physics = t_physics - start;
        // 2. Sensors measure the new state; 3. drivers read the readings and write commands.
        // Each artifact is timed for a miss report: not in fast mode, which misses nothing.
        let per_artifact = (self.pacer.mode() != Mode::Fast).then_some(clock);
        self.sense(per_artifact);
        let t_sensors = now();
        self.drive(per_artifact);
        let t_drivers = now();
        // The frame for the render engine, then the extensions' hooks.
        self.publish_frame(t_drivers);
        self.run_extensions(clock);
        self.refresh_metrics();
        let t_end = now();
        let times = PhaseTimes {
            physics: t_physics - start,
            sensors: t_sensors - t_physics,
            drivers: t_drivers - t_sensors,
            total: t_end - start,
        };
        let slowest = self.slowest_artifacts();
        self.retire_replaced();
        // 4. Pace, then account for the step.
        let outcome = self.pace(clock, stop);
        self.account(now(), times, outcome, slowest);
        // After the step is fully accounted for: a strict stop leaves consistent statistics.
        self.collect_faults()?;
        Ok(StepReport { times, outcome })
    }

    /// The step's start on the clock; the first step also starts the pacer.
    fn begin(&mut self, clock: &dyn Clock) -> Duration {
        let now = clock.now();
        if self.started_at.is_none() {
            self.started_at = Some(now);
            self.pacer.start(now);
        }
        now
    }

    /// Hands the commands drivers wrote last step to the engine, in artifact order.
    fn apply_commands(&mut self) {
        for shard in &mut self.driver_shards {
            for slot in &mut shard.items {
                for cmd in slot.commands.drain() {
                    match cmd {
                        BodyCommand::Attach {
                            body,
                            carrier,
                            offset,
                        } => {
                            if let Err(e) = self.engine.attach(body, carrier, offset) {
                                slot.attach_refusals += 1;
                                let n = slot.attach_refusals;
                                if n == 10u64.pow(n.ilog10()) {
                                    tracing::warn!(
                                        "{}: attach refused by the engine: {e} ({n} refused so far; logged at 1, 10, 100, ...)",
                                        slot.label.text()
                                    );
                                }
                            }
                        }
                        BodyCommand::Detach { body } => self.engine.detach(body),
                        cmd => self.engine.apply(&cmd),
                    }
                }
            }
        }
    }

    /// Steps the engine and reads its state back.
    fn step_physics(&mut self) {
        // The plugin phases come right after the physics, which runs on this thread alone:
        // keep the helper workers spinning through it rather than waking them from sleep.
        // Not beside an engine's own threads, whose cores the spinning would take.
        let parallel = self.sensor_shards.len() > 1 || self.driver_shards.len() > 1;
        if parallel && !self.engine.own_threads() {
            let budget =
                (self.last_physics * 2).clamp(Duration::from_micros(50), Duration::from_millis(5));
            self.pool.prewake(budget);
        }
        let _doing = guard::enter(self.engine_label, Phase::Physics, self.steps + 1);
        self.engine.step_on(self.config.timestep, &self.pool);
        // The engine may share the copy among the workers, which then read the states.
        self.engine.update_state_on(&mut self.states, &self.pool);
        self.steps += 1;
    }

    /// The sensor phase: each worker measures for its own artifacts.
    fn sense(&mut self, clock: Option<&dyn Clock>) {
        if self.sensor_shards.iter().all(|s| s.items.is_empty()) {
            return;
        }
        let world = world_at(
            &*self.engine,
            &self.catalog,
            &self.states,
            &self.extensions,
            self.steps,
            &self.config,
        );
        self.pool
            .for_each_mut(&mut self.sensor_shards, &|_, shard| {
                run_sensors(shard, &world, clock)
            });
    }

    /// The driver phase: readings are now read-only, shared across workers.
    fn drive(&mut self, clock: Option<&dyn Clock>) {
        if self.driver_shards.iter().all(|s| s.items.is_empty()) {
            return;
        }
        let world = world_at(
            &*self.engine,
            &self.catalog,
            &self.states,
            &self.extensions,
            self.steps,
            &self.config,
        );
        let readings = Readings {
            index: &self.reading_index,
            shards: &self.sensor_shards,
        };
        self.pool
            .for_each_mut(&mut self.driver_shards, &|_, shard| {
                run_drivers(shard, &world, &readings, clock)
            });
    }

    /// The driver phase outside a step ([`Environment::redrive`]).
    pub(super) fn drive_now(&mut self) {
        self.drive(None);
    }

    /// Gives the render engine this step's frame (it keeps what it needs).
    pub(super) fn publish_frame(&mut self, at: Duration) {
        // What the extensions answered the plugins in this step, for a replay (tape.rs).
        if self.extensions.tape.keeps() {
            let answers = self.extensions.tape.take();
            if !answers.is_empty() {
                self.render.answers(self.steps, answers);
            }
        }
        let readings = Readings {
            index: &self.reading_index,
            shards: &self.sensor_shards,
        };
        let overlays = ExtensionOverlays(&self.extensions.list);
        let time = self.steps as f64 * self.config.timestep;
        self.render.sync(
            &RenderFrame::new(self.steps, time, at, &self.states, &readings)
                .with_overlays(&overlays),
        );
    }

    /// Calls every extension's `after_step`; one that fails is reported once and not called again.
    fn run_extensions(&mut self, clock: &dyn Clock) {
        let (time, step) = (self.steps as f64 * self.config.timestep, self.steps);
        let readings = Readings {
            index: &self.reading_index,
            shards: &self.sensor_shards,
        };
        let desk = self.swapper.as_ref().map(|swapper| Desk {
            swapper,
            events: &self.swaps,
        });
        // Extensions see each other through their services, not through the world.
        let world = world_at(
            &*self.engine,
            &self.catalog,
            &self.states,
            &NoExtensions,
            step,
            &self.config,
        );
        let ctx = ExtensionContext {
            world: &world,
            readings: &readings,
            stats: StatsView {
                stats: &self.stats,
                metrics: &self.metrics,
                paused: self.paused,
                sim_time: time,
                wall_time: (clock.now() - self.started_at.unwrap_or_default()).as_secs_f64(),
            },
            swaps: desk.as_ref().map(|d| d as &dyn SwapDesk),
            overlays_wanted: self.render.wants_overlays(),
        };
        for (i, (name, ext)) in self.extensions.list.iter_mut().enumerate() {
            if self.extension_failed[i] {
                continue;
            }
            let _doing = guard::enter(self.extensions.labels[i], Phase::AfterStep, step);
            if let Err(message) = ext.after_step(&ctx) {
                // Like a failing plugin: reported once, its per-step hook disabled (its services
                // stay reachable), and a strict run stops.
                self.extension_failed[i] = true;
                self.faults.push(PluginFault {
                    artifact: String::new(),
                    plugin: format!("extension '{name}'"),
                    step,
                    message,
                });
            }
        }
    }

    /// The slowest artifact of the sensor and of the driver phase.
    fn slowest_artifacts(&self) -> Slowest {
        let slowest = |shards: &mut dyn Iterator<Item = Option<(ArtifactId, Duration)>>| {
            shards.flatten().max_by_key(|(_, d)| *d)
        };
        (
            slowest(&mut self.sensor_shards.iter().map(|s| s.slowest)),
            slowest(&mut self.driver_shards.iter().map(|s| s.slowest)),
        )
    }

    /// Old instances of a swap are destroyed now, while this thread waits for the deadline,
    /// rather than beside the step's workers.
    fn retire_replaced(&mut self) {
        if let Some(old) = self.retiring.take()
            && let Some(s) = &self.swapper
        {
            s.retire(old);
        }
    }

    /// Waits for the deadline. Steps run while paused (lockstep) have no deadline.
    fn pace(&mut self, clock: &dyn Clock, stop: Option<&AtomicBool>) -> PaceOutcome {
        match stop {
            _ if self.paused => PaceOutcome::Unpaced,
            Some(stop) => self.pacer.pace_interruptible(clock, stop),
            None => self.pacer.pace(clock),
        }
    }

    /// Records the step in the statistics and reports misses and late wake-ups (rate-limited).
    fn account(
        &mut self,
        end: Duration,
        times: PhaseTimes,
        outcome: PaceOutcome,
        (slow_sensor, slow_driver): Slowest,
    ) {
        let (lateness, missed) = match outcome {
            PaceOutcome::OnTime { lateness, .. } => (Some(lateness), false),
            PaceOutcome::Missed { lateness } => (Some(lateness), true),
            PaceOutcome::Unpaced => (None, false),
        };
        // Compute was on time but the wait itself returned late: the machine or the scheduler
        // stalled. Not a deadline miss by definition, but the next step starts late all the
        // same, so it is counted and reported too.
        let late_wakeup = !missed && lateness.is_some_and(|l| l > self.wake_tolerance);
        self.stats.record(&times, lateness, missed, late_wakeup);
        self.last_step_end = end;
        let woke = match (late_wakeup, lateness) {
            (true, Some(late)) => {
                let stall = Miss {
                    step: self.steps,
                    lateness: late,
                    times,
                    slowest_artifact: None,
                };
                self.late_wakeups.on_miss(self.last_step_end, stall)
            }
            _ => self.late_wakeups.poll(self.last_step_end),
        };
        if let Some(r) = woke {
            self.log_late_wakeups(&r);
        }
        let report = if let (true, Some(late)) = (missed, lateness) {
            let slowest_artifact = match times.slowest().0 {
                "sensors" => slow_sensor,
                "drivers" => slow_driver,
                _ => slow_sensor
                    .into_iter()
                    .chain(slow_driver)
                    .max_by_key(|(_, d)| *d),
            }
            .map(|(a, d)| (a.0, d));
            let miss = Miss {
                step: self.steps,
                lateness: late,
                times,
                slowest_artifact,
            };
            self.misses.on_miss(self.last_step_end, miss)
        } else {
            self.misses.poll(self.last_step_end)
        };
        if let Some(r) = report {
            self.log_misses(&r);
        }
    }
}

/// Times consecutive artifacts with one cheap clock read each ([`Clock::now_cheap`]) and keeps
/// the slowest; without a clock (fast mode), reads nothing and keeps nothing.
struct SlowestTracker<'c> {
    clock: Option<&'c dyn Clock>,
    last: Duration,
    best: Option<(ArtifactId, Duration)>,
}

impl<'c> SlowestTracker<'c> {
    fn new(clock: Option<&'c dyn Clock>) -> Self {
        Self {
            clock,
            last: clock.map_or(Duration::ZERO, |c| c.now_cheap()),
            best: None,
        }
    }
    fn done(&mut self, id: ArtifactId) {
        let Some(clock) = self.clock else {
            return;
        };
        let now = clock.now_cheap();
        let took = now - self.last;
        self.last = now;
        if self.best.is_none_or(|(_, d)| took > d) {
            self.best = Some((id, took));
        }
    }
}

fn run_sensors(shard: &mut Shard<ArtifactSensors>, world: &World<'_>, clock: Option<&dyn Clock>) {
    // Without per-artifact timing, a plugin's consecutive instances step in one call each.
    if clock.is_none() {
        super::batched::sense(shard, world);
        return;
    }
    let mut timer = SlowestTracker::new(clock);
    for item in &mut shard.items {
        let mut ran = false;
        for slot in &mut item.sensors {
            // Disabled (failed), or idle on this step (it said so).
            if !(slot.enabled && slot.reading.wanted_at(world.step)) {
                continue;
            }
            ran = true;
            sense_one(slot, item.id, world, &mut shard.faults);
        }
        // An artifact whose sensors were all idle took no time worth a clock read.
        if ran {
            timer.done(item.id);
        }
    }
    shard.slowest = timer.best;
}

fn run_drivers(
    shard: &mut Shard<DriverSlot>,
    world: &World<'_>,
    readings: &dyn ReadingSource,
    clock: Option<&dyn Clock>,
) {
    if clock.is_none() {
        super::batched::drive(shard, world, readings);
        return;
    }
    let mut timer = SlowestTracker::new(clock);
    for slot in shard.items.iter_mut().filter(|s| s.enabled) {
        drive_one(slot, world, readings, &mut shard.faults);
        timer.done(slot.id);
    }
    shard.slowest = timer.best;
}
