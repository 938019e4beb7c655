//! The doorbell of a paused run. A paused [`Environment::run`](crate::Environment::run) does
//! not poll its extensions in a loop: it asks them once, then sleeps until an extension rings
//! (a control query arrived on its own thread) or a backstop interval passes. Extensions ring
//! through [`ring`] (in-process) or the ABI's `wake` (plugins), from any thread.
//!
//! One bell per process: a ring wakes every paused run in it, and a run woken for another asks
//! its extensions once more and goes back to sleep. A condvar keeps the wake-up to one futex
//! wake, where a 1 ms poll cost a millisecond of latency per control round trip.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

static RUNG: Mutex<u64> = Mutex::new(0);
static BELL: Condvar = Condvar::new();

/// Rings the bell: every paused run in the process asks its extensions again now. Any thread;
/// not from a signal handler (it takes a lock).
pub fn ring() {
    let mut n = RUNG.lock().unwrap_or_else(|p| p.into_inner());
    *n = n.wrapping_add(1);
    BELL.notify_all();
}

/// How many times the bell has rung: read before asking the extensions, then passed to
/// [`wait`], so a ring in between is not lost.
pub fn rung() -> u64 {
    *RUNG.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sleeps until the bell rings after `seen` (at once if it already has) or `timeout` passes.
/// Returns whether it rang.
pub fn wait(seen: u64, timeout: Duration) -> bool {
    let n = RUNG.lock().unwrap_or_else(|p| p.into_inner());
    let (n, _) = BELL
        .wait_timeout_while(n, timeout, |n| *n == seen)
        .unwrap_or_else(|p| p.into_inner());
    *n != seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_between_reading_and_waiting_is_not_lost_and_a_silent_bell_times_out() {
        let seen = rung();
        ring();
        // Rung after `seen` was read: the wait returns at once (a lost wake-up would sleep out
        // the whole hour and hang the test).
        assert!(wait(seen, Duration::from_secs(3600)));
        let seen = rung();
        let waiter = std::thread::spawn(move || wait(seen, Duration::from_secs(3600)));
        // The waiter may or may not be asleep yet; either way it must see this ring.
        ring();
        assert!(waiter.join().unwrap());
        // Nobody rings (other tests in this process might: then it returns true early, which
        // is also correct); with nothing rung it returns false after the timeout.
        let seen = rung();
        let rang = wait(seen, Duration::from_millis(1));
        assert_eq!(rang, rung() != seen);
    }
}
