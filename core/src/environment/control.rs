//! Running: `step`, the `run` loop with its pause and control polling, and what a step
//! reports (faults, misses, late wake-ups) to the log.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::swaps::Desk;
use super::{Environment, PAUSE_POLL, Readings, Status, StepReport, world_at};
use crate::error::{PluginFault, SsxError};
use crate::guard::{self, Phase};
use crate::plugin::{ExtensionContext, RunRequest, SwapDesk};
use crate::stats::{DisplayFn, MissReport, StatsView};
use crate::wake;
use crate::world::NoExtensions;

impl Environment {
    /// The driver phase once more, as of the last step, for outside inputs that arrived since
    /// (a learning env's action): the commands the drivers wrote at the end of the last step
    /// are dropped and every driver decides again, so that the next step's physics acts on the
    /// new inputs. A batch's task step calls it, so that an action acts in the step it is given
    /// (VMAS's semantics; `ssxd` never does, its inputs act a step later). A driver called so
    /// must decide from its inputs alone, not from how often it is called (the holonomic
    /// driver); a fault is kept for the next step's end, as in the step.
    pub fn redrive(&mut self) {
        for shard in &mut self.driver_shards {
            for slot in &mut shard.items {
                slot.commands.drain().for_each(drop);
            }
        }
        self.drive_now();
    }

    /// One step: commands, physics, sensors, drivers, pace. Returns what it did; fails only in
    /// strict mode when a plugin failed.
    pub fn step(&mut self) -> Result<StepReport, SsxError> {
        self.step_until(None)
    }

    pub(super) fn collect_faults(&mut self) -> Result<(), SsxError> {
        for shard in &mut self.sensor_shards {
            self.faults.append(&mut shard.faults);
        }
        for shard in &mut self.driver_shards {
            self.faults.append(&mut shard.faults);
        }
        for fault in self.faults.drain(..) {
            self.stats.record_plugin_fault();
            if self.config.strict {
                return Err(SsxError::PluginFailed(Box::new(fault)));
            }
            tracing::error!("{fault}; it is disabled, the simulation goes on");
        }
        Ok(())
    }

    pub(super) fn log_late_wakeups(&self, r: &MissReport) {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let more = r.since_last("late wake-ups", "");
        tracing::warn!(
            target: "ssx::deadline",
            "late wake-up after step {}: the wait returned {:.3} ms after the deadline (compute was {:.3} ms, on time): the machine or the scheduler stalled{}",
            r.first.step,
            ms(r.first.lateness),
            ms(r.first.times.total),
            more
        );
    }

    pub(super) fn log_misses(&self, r: &MissReport) {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let t = r.first.times;
        let (phase, phase_time) = t.slowest();
        let slowest = r.first.slowest_artifact;
        let artifact = DisplayFn(move |f: &mut std::fmt::Formatter<'_>| match slowest {
            Some((a, d)) => write!(
                f,
                ", slowest artifact '{}' {:.3} ms",
                self.catalog.artifacts[a as usize].name,
                ms(d)
            ),
            None => Ok(()),
        });
        let more = r.since_last("misses", " late");
        tracing::warn!(
            target: "ssx::deadline",
            "deadline missed at step {}: {:.3} ms late, compute {:.3} ms (physics {:.3}, sensors {:.3}, drivers {:.3}); slowest phase {} {:.3} ms{}{}",
            r.first.step,
            ms(r.first.lateness),
            ms(t.total),
            ms(t.physics),
            ms(t.sensors),
            ms(t.drivers),
            phase,
            ms(phase_time),
            artifact,
            more
        );
    }

    /// Steps until `max_steps` are done (None: forever) or `stop` is set (checked at every step
    /// boundary). `on_status` is called about once a wall second, between steps.
    pub fn run(
        &mut self,
        max_steps: Option<u64>,
        stop: &AtomicBool,
        mut on_status: impl FnMut(&Status, &Environment),
    ) -> Result<(), SsxError> {
        let mut last = (self.clock.now(), self.steps);
        while max_steps.is_none_or(|n| self.steps < n) && !stop.load(Ordering::Relaxed) {
            if self.paused && self.pending_steps == 0 {
                // Paused: no steps, no deadlines. Ask the extensions, then sleep until one rings
                // (a control query arrived) or the backstop interval passes.
                let seen = wake::rung();
                self.poll_control()?;
                if self.paused && self.pending_steps == 0 && !stop.load(Ordering::Relaxed) {
                    wake::wait(seen, PAUSE_POLL);
                }
                continue;
            }
            if self.paused {
                self.pending_steps -= 1;
            }
            self.step_until(Some(stop))?;
            self.poll_control()?;
            let now = self.last_step_end;
            if self.steps < last.1 {
                // Reset: the status counts from the new step 0.
                last = (now, self.steps);
            }
            if now >= last.0 + Duration::from_secs(1) {
                let sim = (self.steps - last.1) as f64 * self.config.timestep;
                let status = Status {
                    sim_time: self.sim_time(),
                    steps: self.steps,
                    rt_factor: sim / (now - last.0).as_secs_f64(),
                    misses: self.stats.misses(),
                };
                on_status(&status, self);
                last = (now, self.steps);
            }
        }
        if let Some(r) = self.misses.flush() {
            self.log_misses(&r);
        }
        if let Some(r) = self.late_wakeups.flush() {
            self.log_late_wakeups(&r);
        }
        Ok(())
    }

    /// Asks every extension what the run should do next and applies it: pause, resume (the
    /// deadlines restart from now), or a number of steps while paused. Called by
    /// [`Environment::run`] after every step, and while paused whenever an extension rings
    /// [`wake`] (at least every 50 ms); a failing
    /// `control` is handled like a failing `after_step`.
    pub fn poll_control(&mut self) -> Result<(), SsxError> {
        if self.extensions.list.is_empty() {
            return Ok(());
        }
        // Extensions may ask for swaps: the swap thread must be there to take them.
        if self.swapper.is_none()
            && self.swappable
            && let Err(e) = self.swapper()
        {
            tracing::warn!("{e}");
            self.swappable = false;
        }
        let desk = self.swapper.as_ref().map(|swapper| Desk {
            swapper,
            events: &self.swaps,
        });
        let clock = Arc::clone(&self.clock);
        let now = clock.now();
        let world = world_at(
            &*self.engine,
            &self.catalog,
            &self.states,
            &NoExtensions,
            self.steps,
            &self.config,
        );
        let readings = Readings {
            index: &self.reading_index,
            shards: &self.sensor_shards,
        };
        let ctx = ExtensionContext {
            world: &world,
            readings: &readings,
            stats: StatsView {
                stats: &self.stats,
                metrics: &self.metrics,
                paused: self.paused,
                sim_time: self.steps as f64 * self.config.timestep,
                wall_time: (now - self.started_at.unwrap_or(now)).as_secs_f64(),
            },
            swaps: desk.as_ref().map(|d| d as &dyn SwapDesk),
            overlays_wanted: self.render.wants_overlays(),
        };
        let mut requests = [RunRequest::None; 4];
        let mut asked = 0;
        for (i, (name, ext)) in self.extensions.list.iter_mut().enumerate() {
            if self.extension_failed[i] {
                continue;
            }
            let doing = guard::enter(self.extensions.labels[i], Phase::Control, self.steps);
            let asked_for = ext.control(&ctx);
            drop(doing);
            match asked_for {
                Ok(RunRequest::None) => {}
                Ok(r) if asked < requests.len() => {
                    requests[asked] = r;
                    asked += 1;
                }
                Ok(_) => {}
                Err(message) => {
                    self.extension_failed[i] = true;
                    self.faults.push(PluginFault {
                        artifact: String::new(),
                        plugin: format!("extension '{name}' (control)"),
                        step: self.steps,
                        message,
                    });
                }
            }
        }
        for r in &requests[..asked] {
            match *r {
                RunRequest::Pause if !self.paused => {
                    self.pause();
                    tracing::info!("paused at step {} by an extension", self.steps);
                }
                // Paused already: cuts short the steps asked for (at this step boundary).
                RunRequest::Pause => self.pause(),
                RunRequest::Resume if self.paused => {
                    self.paused = false;
                    self.pending_steps = 0;
                    self.pacer.resume(clock.now());
                    tracing::info!("resumed at step {}", self.steps);
                }
                // Steps asked for while paused run back to back, unpaced (lockstep).
                RunRequest::Step(n) if self.paused => {
                    self.pending_steps = self.pending_steps.saturating_add(n);
                }
                // A seed whose scene cannot be made is refused before anything is torn down.
                RunRequest::Reset(seed) => match self.rebuild(seed) {
                    Err(e) => {
                        tracing::warn!("reset refused at step {}: {e}; the run goes on", self.steps)
                    }
                    Ok(rebuilt) => {
                        let from = self.steps;
                        self.start_over(rebuilt)?;
                        tracing::info!(
                            "reset by an extension at step {from}: step 0, seed {}",
                            self.config.seed
                        );
                    }
                },
                _ => {}
            }
        }
        self.collect_faults()
    }
}
