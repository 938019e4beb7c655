//! Time as the pacer and the step loop read it: a monotonic clock in production, a virtual one
//! in tests, so that the pacing logic is checked deterministically.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A monotonic clock. `now` is the time since the clock's own epoch.
pub trait Clock: Send + Sync {
    /// Time since the clock's epoch.
    fn now(&self) -> Duration;
    /// Returns no earlier than `deadline` (as precisely as the clock can).
    fn sleep_until(&self, deadline: Duration);
    /// Time since an epoch of its own, read as cheaply as the platform allows: for timing short
    /// spans (each artifact of a plugin phase), never to compare with [`Clock::now`], from which
    /// it may drift by parts per million.
    fn now_cheap(&self) -> Duration {
        self.now()
    }
}

/// The wall clock: [`Instant`] and a spin sleeper (sleep natively, spin the last stretch); for
/// [`Clock::now_cheap`], the TSC where CPUID says it is invariant (quanta, calibrated against the
/// monotonic clock once per process), else the monotonic clock too.
#[derive(Debug)]
pub struct MonotonicClock {
    origin: Instant,
    sleeper: spin_sleep::SpinSleeper,
    cheap: quanta::Clock,
    cheap_origin: quanta::Instant,
}

impl MonotonicClock {
    /// A clock that sleeps natively until `spin_margin` before a deadline and spins the rest.
    /// A larger margin is more precise and burns more CPU while waiting.
    pub fn new(spin_margin: Duration) -> Self {
        let margin_ns = spin_margin.as_nanos().min(999_999_999) as u32;
        let cheap = quanta::Clock::new();
        Self {
            origin: Instant::now(),
            cheap_origin: cheap.now(),
            cheap,
            sleeper: spin_sleep::SpinSleeper::new(margin_ns)
                .with_spin_strategy(spin_sleep::SpinStrategy::SpinLoopHint),
        }
    }
}

impl Clock for MonotonicClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
    fn sleep_until(&self, deadline: Duration) {
        self.sleeper.sleep_until(self.origin + deadline);
    }
    fn now_cheap(&self) -> Duration {
        // About 10 ns a read on this project's VM, against 25 ns for `Instant::now`
        // (BENCHMARKS.md, "Swarm speed, third round").
        self.cheap.now().duration_since(self.cheap_origin)
    }
}

/// A clock that moves only when told to. Clones share the same time.
///
/// `sleep_until` jumps to the deadline plus a configurable oversleep, so tests can model a
/// sleeper that wakes late.
#[derive(Clone, Debug, Default)]
pub struct VirtualClock {
    now_ns: Arc<AtomicU64>,
    oversleep_ns: Arc<AtomicU64>,
}

impl VirtualClock {
    /// A clock at time zero that wakes exactly on time.
    pub fn new() -> Self {
        Self::default()
    }
    /// Moves time forward.
    pub fn advance(&self, by: Duration) {
        self.now_ns
            .fetch_add(by.as_nanos() as u64, Ordering::SeqCst);
    }
    /// Every later `sleep_until` wakes this much after its deadline.
    pub fn set_oversleep(&self, by: Duration) {
        self.oversleep_ns
            .store(by.as_nanos() as u64, Ordering::SeqCst);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.now_ns.load(Ordering::SeqCst))
    }
    fn sleep_until(&self, deadline: Duration) {
        let target = deadline.as_nanos() as u64 + self.oversleep_ns.load(Ordering::SeqCst);
        self.now_ns.fetch_max(target, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cheap reads measure the same time as `now`: a span read with them lies within the
    /// span `now` read around it (up to the calibration's error), and covers the sleep inside.
    #[test]
    fn cheap_reads_measure_the_same_spans_as_now() {
        let clock = MonotonicClock::new(Duration::from_micros(100));
        for _ in 0..3 {
            let a0 = clock.now();
            let c0 = clock.now_cheap();
            std::thread::sleep(Duration::from_millis(20));
            let c1 = clock.now_cheap();
            let a1 = clock.now();
            let (cheap, outer) = (c1 - c0, a1 - a0);
            assert!(cheap >= Duration::from_millis(20) * 999 / 1000, "{cheap:?}");
            assert!(
                cheap <= outer * 1001 / 1000 + Duration::from_micros(1),
                "{cheap:?} against {outer:?}"
            );
        }
    }

    #[test]
    fn a_virtual_clocks_cheap_reads_are_its_time() {
        let clock = VirtualClock::new();
        clock.advance(Duration::from_micros(7));
        assert_eq!(clock.now_cheap(), Duration::from_micros(7));
    }
}
