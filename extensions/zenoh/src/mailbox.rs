//! Inbound data: one [`Inbox`] per subscription, filled on Zenoh's threads and read by drivers
//! on worker threads, with counters and rate-limited warnings for what was dropped.
//!
//! A mailbox holds the newest message in a sequence lock of the subscription's width
//! ([`crate::latest`]: a read is an optimistic copy, taken again when it races a write); every
//! reader sees the newest message, so several drivers may share one subscription. A queue is a
//! crossbeam `ArrayQueue` (lock-free); each message goes to one reader.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam::queue::ArrayQueue;
use ssx_sdk::bus::MAX_VALUES;

use crate::codec::SubSpec;
use crate::latest::Latest;

/// A message from an embedding program ([`Inbox::put`]).
#[derive(Clone, Copy, Debug)]
pub enum Message<'a> {
    /// A payload in the subscription's encoding.
    Payload(&'a [u8]),
    /// The values in field order.
    Values(&'a [f64]),
}

/// One decoded message.
#[derive(Clone, Copy, Debug)]
pub struct Msg {
    /// Count of accepted messages on this subscription when this one arrived.
    pub seq: u64,
    /// The values (the spec's width of them).
    pub values: [f64; MAX_VALUES],
}

/// Where an inbox keeps its messages. The mailbox stays inline on purpose: drivers read it
/// every step, and a box would put a pointer chase in each read.
enum Store {
    /// The newest message (seq 0: nothing yet).
    Latest(Latest),
    /// The queue, boxed: its head and tail are each alone on a cache line pair, and inline
    /// they made every inbox a 1 KiB allocation, mailboxes too (issue 60's small worlds).
    Queue(Box<ArrayQueue<Msg>>),
}

/// A subscription's mailbox (the newest message, for every reader) or bounded queue (oldest
/// kept, newest dropped when full), and its counters.
pub struct Inbox {
    /// The full key.
    pub key: String,
    /// What messages must look like (shared: the worlds of a batch subscribe alike).
    pub spec: Arc<SubSpec>,
    /// The spec's values a message, kept here: a read then touches no line of the spec's
    /// fields (in a batch of 1024 worlds each read found them out of cache, which was nearly
    /// all of a read's time).
    width: usize,
    store: Store,
    /// Messages accepted into the inbox.
    pub accepted: AtomicU64,
    /// Messages dropped as malformed.
    pub malformed: AtomicU64,
    /// Messages dropped because the queue was full.
    pub overflow: AtomicU64,
    warn: RateLimit,
}

impl Inbox {
    /// An empty inbox for `spec` on `key`.
    pub fn new(key: String, spec: impl Into<Arc<SubSpec>>) -> Inbox {
        let spec = spec.into();
        let store = match spec.queue {
            0 => Store::Latest(Latest::new(spec.width())),
            n => Store::Queue(Box::new(ArrayQueue::new(n as usize))),
        };
        Inbox {
            key,
            width: spec.width(),
            store,
            spec,
            accepted: AtomicU64::new(0),
            malformed: AtomicU64::new(0),
            overflow: AtomicU64::new(0),
            warn: RateLimit::new(Duration::from_secs(1)),
        }
    }

    /// Takes one message off the network (a Zenoh thread). Returns a warning to log when one
    /// is due (at most one a second per key).
    pub fn receive(&self, payload: &[u8]) -> Option<String> {
        let mut values = [0.0; MAX_VALUES];
        let decoded = self.spec.decode(payload, &mut values);
        self.accept(decoded.map(|()| values), &self.key)
    }

    /// Takes one message whose fields arrive by name from another encoding (the ROS 2
    /// `cmd_vel` bridge: `linear` and `angular` from a Twist), checked against the spec like a
    /// JSON message; `from` names where it came from, for the warning.
    pub fn receive_named(&self, fields: &[(&str, f64)], from: &str) -> Option<String> {
        let mut values = [0.0; MAX_VALUES];
        let decoded = self.spec.from_named(fields, &mut values);
        self.accept(decoded.map(|()| values), from)
    }

    /// Takes a network message given as values in field order (a ROS 2 array); `from` names
    /// the source in a warning.
    pub fn receive_values(&self, values: &[f64], from: &str) -> Option<String> {
        let mut out = [0.0; MAX_VALUES];
        let decoded = self.spec.from_values(values, &mut out);
        self.accept(decoded.map(|()| out), from)
    }

    /// Takes one message from an embedding program (the Python package), as a payload in the
    /// subscription's encoding or (`values`) in field order; unlike a network message, one that
    /// is malformed is refused with the reason (and counted as malformed).
    pub fn put(&self, payload: Message<'_>) -> Result<(), String> {
        let mut values = [0.0; MAX_VALUES];
        let decoded = match payload {
            Message::Payload(p) => self.spec.decode(p, &mut values),
            Message::Values(v) => self.spec.from_values(v, &mut values),
        };
        if let Err(why) = decoded {
            self.malformed.fetch_add(1, Ordering::Relaxed);
            return Err(why);
        }
        // A full queue drops it and counts it, as for the network.
        let _ = self.accept(Ok(values), &self.key);
        Ok(())
    }

    /// The `read` service's answer (`ssx_sdk::bus`) for a driver, written into `response`:
    /// nothing (0 bytes) when there is no message; else the u64 sequence number, the u32 count
    /// of values, 4 bytes of padding and the values as f64, little-endian.
    pub fn read_into(&self, response: &mut [u8]) -> Result<usize, String> {
        let width = self.width;
        let need = 16 + 8 * width;
        if response.len() < need {
            return Err(format!("read: a {need}-byte answer needs more room"));
        }
        let Some(m) = self.take() else {
            return Ok(0);
        };
        response[..8].copy_from_slice(&m.seq.to_le_bytes());
        response[8..12].copy_from_slice(&(width as u32).to_le_bytes());
        response[12..16].fill(0);
        for (dst, v) in response[16..need].chunks_exact_mut(8).zip(&m.values) {
            dst.copy_from_slice(&v.to_le_bytes());
        }
        Ok(need)
    }

    /// Forgets every message held (a reset: what was sent before it is not read after it);
    /// the counters go on.
    pub fn clear(&self) {
        match &self.store {
            Store::Latest(latest) => latest.store(0, &[0.0; MAX_VALUES]),
            Store::Queue(queue) => while queue.pop().is_some() {},
        }
    }

    fn accept(&self, decoded: Result<[f64; MAX_VALUES], String>, from: &str) -> Option<String> {
        let values = match decoded {
            Ok(v) => v,
            Err(why) => {
                self.malformed.fetch_add(1, Ordering::Relaxed);
                return self.warn.due().map(|dropped| {
                    format!(
                        "zenoh: dropped a malformed message on '{from}': {why} ({dropped} dropped on this key in the last second{})",
                        self.totals()
                    )
                });
            }
        };
        let seq = self.accepted.fetch_add(1, Ordering::Relaxed) + 1;
        let queue = match &self.store {
            Store::Latest(latest) => {
                latest.store(seq, &values);
                return None;
            }
            Store::Queue(queue) => queue,
        };
        if queue.push(Msg { seq, values }).is_ok() {
            return None;
        }
        self.accepted.fetch_sub(1, Ordering::Relaxed);
        self.overflow.fetch_add(1, Ordering::Relaxed);
        self.warn.due().map(|dropped| {
            format!(
                "zenoh: queue of {} full on '{}', dropped the newest message ({dropped} dropped on this key in the last second{})",
                queue.capacity(),
                self.key,
                self.totals()
            )
        })
    }

    /// The warning a rate limit held back, once its interval has passed: the count of
    /// messages dropped on this key since the last warning (a burst that stopped is still
    /// reported). Called about once a second by the stepping thread.
    pub fn flush_warning(&self) -> Option<String> {
        self.warn.flush().map(|dropped| {
            format!(
                "zenoh: dropped {dropped} more message(s) on '{}' since the last warning{}",
                self.key,
                self.totals()
            )
        })
    }

    fn totals(&self) -> String {
        format!(
            "; {} malformed and {} overflowed in all",
            self.malformed.load(Ordering::Relaxed),
            self.overflow.load(Ordering::Relaxed)
        )
    }

    /// For a driver: the newest message (mailbox, the same again until a newer one arrives:
    /// compare `seq`) or the oldest unread one (queue). Never waits on the network, never
    /// allocates.
    pub fn take(&self) -> Option<Msg> {
        match &self.store {
            Store::Latest(latest) => {
                let mut values = [0.0; MAX_VALUES];
                let seq = latest.load(&mut values);
                Some(Msg { seq, values }).filter(|m| m.seq > 0)
            }
            Store::Queue(queue) => queue.pop(),
        }
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
        self.report(count)
    }

    /// Events counted but not yet reported, once the interval since the last report has
    /// passed: Some(count), and they count as reported.
    pub fn flush(&self) -> Option<u64> {
        match self.since.load(Ordering::Relaxed) {
            0 => None,
            count => self.report(count),
        }
    }

    /// Reports `count` events if the interval has passed (one caller wins a race).
    fn report(&self, count: u64) -> Option<u64> {
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
    fn a_mailbox_keeps_the_newest_for_every_reader_and_a_queue_the_oldest() {
        let m = inbox(0);
        assert!(m.take().is_none());
        for v in 1..=5 {
            assert_eq!(m.receive(format!(r#"{{"v":{v}}}"#).as_bytes()), None);
        }
        for _reader in 0..3 {
            let got = m.take().unwrap();
            assert_eq!((got.seq, got.values[0]), (5, 5.0));
        }

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
        assert!(m.take().is_none(), "nothing accepted");
        // The burst stopped: its count is reported once the second has passed, then nothing.
        assert_eq!(m.flush_warning(), None, "not within the second");
        m.warn.last_ns.fetch_sub(1_000_000_000, Ordering::Relaxed);
        assert_eq!(
            m.flush_warning().as_deref(),
            Some(
                "zenoh: dropped 1000 more message(s) on 'ssx/w/k' since the last warning; 1001 malformed and 0 overflowed in all"
            )
        );
        assert_eq!(m.flush_warning(), None);
    }
}
