//! Holding the wall clock: absolute deadlines t0 + (N+1)·period, a precise wait when ahead, a
//! recorded violation when behind, and catch-up by default (SSX sec. 2.1).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::clock::Clock;

/// How fast the simulation runs against the wall clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// Hold the wall clock scaled by `factor`: 1 is real time, 0.5 half speed, 2 double.
    Realtime {
        /// Simulated seconds per wall second.
        factor: f64,
    },
    /// As fast as possible: never wait.
    Fast,
}

impl Mode {
    /// `"realtime"` or `"fast"`, as the CLI and the stats JSON spell it.
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Realtime { .. } => "realtime",
            Mode::Fast => "fast",
        }
    }
}

/// What to do with the schedule after a missed deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LatePolicy {
    /// Keep the original schedule: later, faster steps win the offset back (SSX; the default).
    #[default]
    CatchUp,
    /// Shift the schedule so the late step's end is the new reference: the offset is forgiven,
    /// simulated time permanently falls behind wall time.
    Reanchor,
}

/// What happened at the end of one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaceOutcome {
    /// The deadline was ahead: waited `wait`, woke `lateness` after the deadline.
    OnTime {
        /// How long the pacer asked to wait.
        wait: Duration,
        /// How late the wait returned.
        lateness: Duration,
    },
    /// The deadline had passed by `lateness` when the step finished: a violation.
    Missed {
        /// Time past the deadline.
        lateness: Duration,
    },
    /// Fast mode: no deadline.
    Unpaced,
}

/// A wait longer than this checks the stop flag at least this often.
pub const WAIT_SLICE: Duration = Duration::from_millis(50);

/// The pacer. Call [`Pacer::start`] once, then [`Pacer::pace`] at the end of every step.
#[derive(Clone, Debug)]
pub struct Pacer {
    mode: Mode,
    policy: LatePolicy,
    period_s: f64,
    t0: Duration,
    paced: u64,
}

impl Pacer {
    /// A pacer for steps of `timestep` simulated seconds.
    pub fn new(mode: Mode, timestep: f64, policy: LatePolicy) -> Self {
        let period_s = match mode {
            Mode::Realtime { factor } => timestep / factor,
            Mode::Fast => timestep,
        };
        Self {
            mode,
            policy,
            period_s,
            t0: Duration::ZERO,
            paced: 0,
        }
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Wall time between deadlines.
    pub fn period(&self) -> Duration {
        Duration::from_secs_f64(self.period_s)
    }

    /// Anchors the schedule: the first step's deadline is `now + period`.
    pub fn start(&mut self, now: Duration) {
        self.t0 = now;
        self.paced = 0;
    }

    /// Re-anchors after a pause so the paused time is not counted as lateness: the next
    /// deadline is `now + period`.
    pub fn resume(&mut self, now: Duration) {
        self.t0 = now.saturating_sub(self.offset(self.paced));
    }

    /// The deadline of the step being paced next.
    pub fn next_deadline(&self) -> Duration {
        self.t0.saturating_add(self.offset(self.paced + 1))
    }

    fn offset(&self, steps: u64) -> Duration {
        // Saturates instead of panicking on a schedule beyond Duration's range.
        Duration::try_from_secs_f64(steps as f64 * self.period_s).unwrap_or(Duration::MAX)
    }

    /// Ends a step: waits for its deadline if it is ahead, records a miss if it has passed.
    pub fn pace(&mut self, clock: &dyn Clock) -> PaceOutcome {
        self.pace_until(clock, None)
    }

    /// As [`Pacer::pace`], but a wait longer than [`WAIT_SLICE`] is cut into slices and ends
    /// early once `interrupt` is set (a stop asked for during a slow-motion run's long wait).
    pub fn pace_interruptible(&mut self, clock: &dyn Clock, interrupt: &AtomicBool) -> PaceOutcome {
        self.pace_until(clock, Some(interrupt))
    }

    fn pace_until(&mut self, clock: &dyn Clock, interrupt: Option<&AtomicBool>) -> PaceOutcome {
        if self.mode == Mode::Fast {
            self.paced += 1;
            return PaceOutcome::Unpaced;
        }
        let deadline = self.next_deadline();
        let now = clock.now();
        self.paced += 1;
        if now <= deadline {
            if let Some(stop) = interrupt {
                let mut t = now;
                while deadline - t > WAIT_SLICE {
                    clock.sleep_until(t + WAIT_SLICE);
                    if stop.load(Ordering::Relaxed) {
                        return PaceOutcome::OnTime {
                            wait: deadline - now,
                            lateness: Duration::ZERO,
                        };
                    }
                    t = clock.now().min(deadline);
                }
            }
            clock.sleep_until(deadline);
            let woke = clock.now();
            PaceOutcome::OnTime {
                wait: deadline - now,
                lateness: woke.saturating_sub(deadline),
            }
        } else {
            if self.policy == LatePolicy::Reanchor {
                self.t0 = now.saturating_sub(self.offset(self.paced));
            }
            PaceOutcome::Missed {
                lateness: now - deadline,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::VirtualClock;

    const MS: Duration = Duration::from_millis(1);

    fn pacer(mode: Mode, policy: LatePolicy) -> (Pacer, VirtualClock) {
        let clock = VirtualClock::new();
        let mut p = Pacer::new(mode, 0.001, policy);
        p.start(clock.now());
        (p, clock)
    }

    /// Runs one step that computes for `compute` and returns the outcome.
    fn step(p: &mut Pacer, clock: &VirtualClock, compute: Duration) -> PaceOutcome {
        clock.advance(compute);
        p.pace(clock)
    }

    #[test]
    fn on_time_steps_wait_exactly_the_remainder() {
        let (mut p, clock) = pacer(Mode::Realtime { factor: 1.0 }, LatePolicy::CatchUp);
        for n in 1..=5u32 {
            let out = step(&mut p, &clock, Duration::from_micros(300));
            assert_eq!(
                out,
                PaceOutcome::OnTime {
                    wait: Duration::from_micros(700),
                    lateness: Duration::ZERO
                }
            );
            assert_eq!(clock.now(), MS * n);
        }
    }

    #[test]
    fn a_late_wakeup_is_lateness_not_a_miss() {
        let (mut p, clock) = pacer(Mode::Realtime { factor: 1.0 }, LatePolicy::CatchUp);
        clock.set_oversleep(Duration::from_micros(40));
        let out = step(&mut p, &clock, Duration::from_micros(100));
        assert_eq!(
            out,
            PaceOutcome::OnTime {
                wait: Duration::from_micros(900),
                lateness: Duration::from_micros(40)
            }
        );
    }

    #[test]
    fn a_slow_step_is_one_violation_with_its_lateness_and_catch_up_recovers() {
        let (mut p, clock) = pacer(Mode::Realtime { factor: 1.0 }, LatePolicy::CatchUp);
        assert!(matches!(
            step(&mut p, &clock, Duration::from_micros(200)),
            PaceOutcome::OnTime { .. }
        ));
        // Step 1 takes 1.5 periods: it ends at 2.5 ms against a 2 ms deadline.
        assert_eq!(
            step(&mut p, &clock, Duration::from_micros(1500)),
            PaceOutcome::Missed {
                lateness: Duration::from_micros(500)
            }
        );
        // Step 2 is fast and starts at once: it ends at 2.6 ms and waits for its 3 ms deadline.
        assert_eq!(
            step(&mut p, &clock, Duration::from_micros(100)),
            PaceOutcome::OnTime {
                wait: Duration::from_micros(400),
                lateness: Duration::ZERO
            }
        );
        assert_eq!(
            clock.now(),
            MS * 3,
            "the offset is won back, the schedule unchanged"
        );
    }

    #[test]
    fn catch_up_after_a_long_stall_misses_until_the_offset_is_recovered() {
        let (mut p, clock) = pacer(Mode::Realtime { factor: 1.0 }, LatePolicy::CatchUp);
        // Step 0 stalls 3.5 periods: ends at 3.5 ms, 2.5 ms late.
        let mut misses = vec![];
        let mut compute = Duration::from_micros(3500);
        for _ in 0..10 {
            if let PaceOutcome::Missed { lateness } = step(&mut p, &clock, compute) {
                misses.push(lateness);
            }
            compute = Duration::from_micros(400);
        }
        // Ends against deadlines: 3.5 (dl 1), then fast steps of 0.4 ms gain 0.6 ms each:
        // 3.9 (dl 2), 4.3 (dl 3), 4.7 (dl 4), 5.1 (dl 5), then 5.5 <= 6 is on time.
        let us = |v: u64| Duration::from_micros(v);
        assert_eq!(misses, vec![us(2500), us(1900), us(1300), us(700), us(100)]);
        assert_eq!(clock.now(), MS * 10, "back on the original schedule");
    }

    #[test]
    fn reanchor_forgives_the_offset() {
        let (mut p, clock) = pacer(Mode::Realtime { factor: 1.0 }, LatePolicy::Reanchor);
        assert!(matches!(
            step(&mut p, &clock, Duration::from_micros(3500)),
            PaceOutcome::Missed { .. }
        ));
        // The next deadline is one period after the late step ended.
        assert_eq!(
            step(&mut p, &clock, Duration::from_micros(400)),
            PaceOutcome::OnTime {
                wait: Duration::from_micros(600),
                lateness: Duration::ZERO
            }
        );
        assert_eq!(clock.now(), Duration::from_micros(4500));
    }

    #[test]
    fn a_long_wait_ends_within_a_slice_of_a_stop() {
        // 1 ms steps at x0.001: each step waits 1 s of wall time.
        let (mut p, clock) = pacer(Mode::Realtime { factor: 1e-3 }, LatePolicy::CatchUp);
        let stop = AtomicBool::new(false);
        p.start(clock.now());
        let waited = |p: &mut Pacer, stop: &AtomicBool| {
            let before = clock.now();
            p.pace_interruptible(&clock, stop);
            clock.now() - before
        };
        assert_eq!(waited(&mut p, &stop), Duration::from_secs(1));
        stop.store(true, Ordering::Relaxed);
        assert_eq!(waited(&mut p, &stop), WAIT_SLICE);
    }

    #[test]
    fn a_schedule_beyond_the_range_of_duration_saturates() {
        let mut p = Pacer::new(Mode::Realtime { factor: 1e-300 }, 1e20, LatePolicy::CatchUp);
        p.start(Duration::from_secs(1));
        assert_eq!(p.next_deadline(), Duration::MAX);
    }

    #[test]
    fn fast_mode_never_waits() {
        let (mut p, clock) = pacer(Mode::Fast, LatePolicy::CatchUp);
        for _ in 0..100 {
            assert_eq!(
                step(&mut p, &clock, Duration::from_micros(5)),
                PaceOutcome::Unpaced
            );
        }
        assert_eq!(clock.now(), Duration::from_micros(500));
    }

    #[test]
    fn rt_factor_half_doubles_the_wall_period() {
        let (mut p, clock) = pacer(Mode::Realtime { factor: 0.5 }, LatePolicy::CatchUp);
        assert_eq!(p.period(), MS * 2);
        for n in 1..=4u32 {
            step(&mut p, &clock, Duration::from_micros(100));
            assert_eq!(clock.now(), MS * 2 * n);
        }
        // 1.5 ms of compute is on time at half speed.
        assert!(matches!(
            step(&mut p, &clock, Duration::from_micros(1500)),
            PaceOutcome::OnTime { .. }
        ));
    }

    #[test]
    fn resume_after_pause_does_not_count_the_pause() {
        let (mut p, clock) = pacer(Mode::Realtime { factor: 1.0 }, LatePolicy::CatchUp);
        step(&mut p, &clock, Duration::from_micros(100));
        clock.advance(Duration::from_secs(5));
        p.resume(clock.now());
        assert!(matches!(
            step(&mut p, &clock, Duration::from_micros(100)),
            PaceOutcome::OnTime { .. }
        ));
    }
}
