//! Inbound data: one [`Inbox`] per subscription, filled on Zenoh's threads and emptied by
//! drivers on worker threads, lock-free (crossbeam's `ArrayQueue`), with counters and
//! rate-limited warnings for what was dropped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam::queue::ArrayQueue;
use ssx_sdk::bus::MAX_VALUES;

use crate::codec::SubSpec;

/// One decoded message.
#[derive(Clone, Copy, Debug)]
pub struct Msg {
    /// Count of accepted messages on this subscription when this one arrived.
    pub seq: u64,
    /// The values (the spec's width of them).
    pub values: [f64; MAX_VALUES],
}

/// A subscription's mailbox (capacity 1, newest wins) or bounded queue (oldest kept, newest
/// dropped when full), and its counters.
pub struct Inbox {
    /// The full key.
    pub key: String,
    /// What messages must look like.
    pub spec: SubSpec,
    queue: ArrayQueue<Msg>,
    latest: bool,
    /// Messages accepted into the inbox.
    pub accepted: AtomicU64,
    /// Messages dropped as malformed.
    pub malformed: AtomicU64,
    /// Messages dropped because the queue was full.
    pub overflow: AtomicU64,
    /// Unread messages a newer one replaced (mailbox only): not an error, the point of a mailbox.
    pub replaced: AtomicU64,
    warn: RateLimit,
}

impl Inbox {
    /// An empty inbox for `spec` on `key`.
    pub fn new(key: String, spec: SubSpec) -> Inbox {
        let latest = spec.queue == 0;
        Inbox {
            key,
            queue: ArrayQueue::new(spec.queue.max(1) as usize),
            latest,
            spec,
            accepted: AtomicU64::new(0),
            malformed: AtomicU64::new(0),
            overflow: AtomicU64::new(0),
            replaced: AtomicU64::new(0),
            warn: RateLimit::new(Duration::from_secs(1)),
        }
    }

    /// Takes one message off the network (a Zenoh thread). Returns a warning to log when one
    /// is due (at most one a second per key).
    pub fn receive(&self, payload: &[u8]) -> Option<String> {
        let mut values = [0.0; MAX_VALUES];
        if let Err(why) = self.spec.decode(payload, &mut values) {
            self.malformed.fetch_add(1, Ordering::Relaxed);
            return self.warn.due().map(|dropped| {
                format!(
                    "zenoh: dropped a malformed message on '{}': {why} ({dropped} dropped on this key in the last second{})",
                    self.key,
                    self.totals()
                )
            });
        }
        let seq = self.accepted.fetch_add(1, Ordering::Relaxed) + 1;
        let msg = Msg { seq, values };
        if self.latest {
            if self.queue.force_push(msg).is_some() {
                self.replaced.fetch_add(1, Ordering::Relaxed);
            }
            None
        } else if self.queue.push(msg).is_err() {
            self.accepted.fetch_sub(1, Ordering::Relaxed);
            self.overflow.fetch_add(1, Ordering::Relaxed);
            self.warn.due().map(|dropped| {
                format!(
                    "zenoh: queue of {} full on '{}', dropped the newest message ({dropped} dropped on this key in the last second{})",
                    self.queue.capacity(),
                    self.key,
                    self.totals()
                )
            })
        } else {
            None
        }
    }

    fn totals(&self) -> String {
        format!(
            "; {} malformed and {} overflowed in all",
            self.malformed.load(Ordering::Relaxed),
            self.overflow.load(Ordering::Relaxed)
        )
    }

    /// The next message for a driver: never blocks, never allocates.
    pub fn take(&self) -> Option<Msg> {
        self.queue.pop()
    }
}

/// At most one report per interval; counts what happened in between.
pub struct RateLimit {
    origin: Instant,
    interval_ns: u64,
    last_ns: AtomicU64,
    since: AtomicU64,
}

impl RateLimit {
    /// A limit of one report per `interval`.
    pub fn new(interval: Duration) -> Self {
        RateLimit {
            origin: Instant::now(),
            interval_ns: interval.as_nanos() as u64,
            last_ns: AtomicU64::new(0),
            since: AtomicU64::new(0),
        }
    }

    /// Counts one event; Some(events since the last report) when a report is due now.
    pub fn due(&self) -> Option<u64> {
        let count = self.since.fetch_add(1, Ordering::Relaxed) + 1;
        let now = self.origin.elapsed().as_nanos() as u64 + self.interval_ns;
        let last = self.last_ns.load(Ordering::Relaxed);
        if now.saturating_sub(last) < self.interval_ns {
            return None;
        }
        self.last_ns
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .ok()
            .map(|_| {
                self.since.fetch_sub(count, Ordering::Relaxed);
                count
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inbox(queue: u32) -> Inbox {
        let spec = SubSpec::parse(
            format!(r#"{{"key":"k","fields":[{{"name":"v","max":10}}],"queue":{queue}}}"#)
                .as_bytes(),
        )
        .unwrap();
        Inbox::new("ssx/w/k".into(), spec)
    }

    #[test]
    fn a_mailbox_keeps_the_newest_and_a_queue_the_oldest() {
        let m = inbox(0);
        for v in 1..=5 {
            assert_eq!(m.receive(format!(r#"{{"v":{v}}}"#).as_bytes()), None);
        }
        let got = m.take().unwrap();
        assert_eq!((got.seq, got.values[0]), (5, 5.0));
        assert!(m.take().is_none());
        assert_eq!(m.replaced.load(Ordering::Relaxed), 4);

        let q = inbox(3);
        let mut warnings = 0;
        for v in 1..=5 {
            warnings += q.receive(format!(r#"{{"v":{v}}}"#).as_bytes()).is_some() as u32;
        }
        let taken: Vec<f64> = std::iter::from_fn(|| q.take())
            .map(|m| m.values[0])
            .collect();
        assert_eq!(taken, [1.0, 2.0, 3.0]);
        assert_eq!(q.overflow.load(Ordering::Relaxed), 2);
        assert_eq!(q.accepted.load(Ordering::Relaxed), 3);
        assert_eq!(warnings, 1, "one warning a second per key");
    }

    #[test]
    fn malformed_messages_are_counted_and_warned_about_once_a_second() {
        let m = inbox(0);
        let first = m.receive(b"{\"v\": 11}").unwrap();
        assert_eq!(
            first,
            "zenoh: dropped a malformed message on 'ssx/w/k': field 'v' = 11 is beyond its limit 10 (1 dropped on this key in the last second; 1 malformed and 0 overflowed in all)"
        );
        for _ in 0..1000 {
            assert_eq!(m.receive(b"garbage"), None);
        }
        assert_eq!(m.malformed.load(Ordering::Relaxed), 1001);
        assert!(m.take().is_none());
    }
}
