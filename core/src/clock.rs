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
}

/// The wall clock: [`Instant`] and a spin sleeper (sleep natively, spin the last stretch).
#[derive(Debug)]
pub struct MonotonicClock {
    origin: Instant,
    sleeper: spin_sleep::SpinSleeper,
}

impl MonotonicClock {
    /// A clock that sleeps natively until `spin_margin` before a deadline and spins the rest.
    /// A larger margin is more precise and burns more CPU while waiting.
    pub fn new(spin_margin: Duration) -> Self {
        let margin_ns = spin_margin.as_nanos().min(999_999_999) as u32;
        Self {
            origin: Instant::now(),
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
