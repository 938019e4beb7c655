//! A mailbox's newest message as a sequence lock sized to its subscription's width: a read is
//! an optimistic copy of the values, taken again when it raced a write. crossbeam's
//! `AtomicCell<Msg>` held all of [`MAX_VALUES`] values, 264 bytes for a 2-value command, in each
//! inbox of each world of a batch (issue 60); this holds up to [`INLINE`] values in place.
//!
//! The orderings are Boehm's ("Can seqlocks get along with programming language memory
//! models?", MSPC 2012): a writer makes the count odd, fences, stores, and makes it even again
//! with a release store; a reader loads the count with acquire, the values relaxed, fences with
//! acquire and loads the count again. Every value is an atomic, so a torn read is only ever
//! thrown away, never undefined. Writers take turns on the odd count.

use std::sync::atomic::{AtomicU64, Ordering, fence};

use ssx_sdk::bus::MAX_VALUES;

/// Values held in place (a 6-axis velocity command); wider messages are boxed.
pub const INLINE: usize = 6;

enum Values {
    Inline([AtomicU64; INLINE]),
    Boxed(Box<[AtomicU64]>),
}

/// The newest message of a mailbox: its sequence number (0: nothing yet) and values.
pub struct Latest {
    /// Even: settled; odd: a write is under way. Counts up by 2 a write.
    count: AtomicU64,
    seq: AtomicU64,
    width: usize,
    values: Values,
}

impl Latest {
    /// Nothing yet, for messages of `width` values (at most [`MAX_VALUES`]).
    pub fn new(width: usize) -> Latest {
        let width = width.min(MAX_VALUES);
        let values = if width <= INLINE {
            Values::Inline(std::array::from_fn(|_| AtomicU64::new(0)))
        } else {
            Values::Boxed((0..width).map(|_| AtomicU64::new(0)).collect())
        };
        Latest {
            count: AtomicU64::new(0),
            seq: AtomicU64::new(0),
            width,
            values,
        }
    }

    fn slots(&self) -> &[AtomicU64] {
        match &self.values {
            Values::Inline(v) => &v[..self.width],
            Values::Boxed(v) => v,
        }
    }

    /// Makes `values` (the first `width` of them) the newest message, numbered `seq`.
    pub fn store(&self, seq: u64, values: &[f64]) {
        // Take the writer's turn: from an even count to the odd one after it.
        let mut count = self.count.load(Ordering::Relaxed);
        loop {
            if count & 1 == 1 {
                std::hint::spin_loop();
                count = self.count.load(Ordering::Relaxed);
                continue;
            }
            match self.count.compare_exchange_weak(
                count,
                count + 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => count = now,
            }
        }
        // The odd count is seen before any of the values below.
        fence(Ordering::Release);
        self.seq.store(seq, Ordering::Relaxed);
        for (slot, v) in self.slots().iter().zip(values) {
            slot.store(v.to_bits(), Ordering::Relaxed);
        }
        self.count.store(count + 2, Ordering::Release);
    }

    /// The newest message's number into the return value and its values into `out` (the first
    /// `width`), as one write left them.
    pub fn load(&self, out: &mut [f64]) -> u64 {
        let mut tries = 0u32;
        loop {
            let before = self.count.load(Ordering::Acquire);
            if before & 1 == 0 {
                let seq = self.seq.load(Ordering::Relaxed);
                for (o, slot) in out.iter_mut().zip(self.slots()) {
                    *o = f64::from_bits(slot.load(Ordering::Relaxed));
                }
                fence(Ordering::Acquire);
                if self.count.load(Ordering::Relaxed) == before {
                    return seq;
                }
            }
            // A write is under way: it takes a few stores, unless its thread was taken off
            // the processor.
            tries += 1;
            if tries < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader racing a writer sees only whole messages: each write stores `seq` in every
    /// value, and every read must find its values all equal to its number. Both widths: in
    /// place and boxed.
    #[test]
    fn a_read_racing_writes_sees_whole_messages() {
        for width in [2, INLINE + 3] {
            let latest = Latest::new(width);
            let writes = 1_000_000u64;
            std::thread::scope(|s| {
                s.spawn(|| {
                    for seq in 1..=writes {
                        latest.store(seq, &vec![seq as f64; width]);
                    }
                });
                let mut last = 0;
                let mut out = vec![0.0; width];
                while last < writes {
                    let seq = latest.load(&mut out);
                    assert!(
                        out.iter().all(|&v| v == seq as f64),
                        "width {width}: message {seq} read as {out:?}"
                    );
                    assert!(seq >= last, "went back from {last} to {seq}");
                    last = seq;
                }
            });
        }
    }

    /// Values beyond the width are neither stored nor read.
    #[test]
    fn only_the_width_is_kept() {
        let latest = Latest::new(2);
        latest.store(7, &[1.0, 2.0, 3.0]);
        let mut out = [9.0; 4];
        assert_eq!(latest.load(&mut out), 7);
        assert_eq!(out, [1.0, 2.0, 9.0, 9.0]);
    }
}
