//! The secured link under stress (issue 49; eclipse-zenoh/zenoh issue 2557's pattern): two
//! Zenoh sessions on the shipped lab configuration (mutual TLS, access control by certificate
//! name) publish to each other at once, both ways, for long enough to pass TLS key updates:
//! 1 MB payloads (fragmented into 64 kB batches) and a stream of small express messages, each
//! a TLS record of its own, which is what brings the key updates within minutes.
//!
//! rustls updates a TLS 1.3 connection's keys after 2^24 records in one direction under
//! AES-GCM (`confidentiality_limit`, rustls 0.23 `crypto/ring/tls13.rs`): the writer sends a
//! KeyUpdate asking for one back, and the peer's reader replaces the peer's encrypter, the step
//! upstream's link raced with its writer. The client reaches the listener through a plain TCP
//! relay on loopback that counts the TLS records each way (a record is a 5-byte header and its
//! length), so the report says when each direction passed each 2^24 records.
//!
//! Every message carries a sequence number; the subscribers count gaps and reorderings
//! (reliable, blocking congestion control: there must be none), and the relay counts the
//! client's connections (a dropped link that Zenoh reconnects is a failure too). Used by
//! `tests/tests/suite/tls_stress.rs` (60 s in CI) and `tests/benches/tls_stress.rs` (10 minutes).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use zenoh::Wait;
use zenoh::qos::CongestionControl;

use crate::free_port;
use crate::lab::{certify, client, listener};

/// Records one direction of a TLS 1.3 connection carries under one key (AES-GCM suites).
pub const RECORDS_PER_KEY: u64 = 1 << 24;

/// How to stress.
#[derive(Clone, Debug)]
pub struct Options {
    /// Wall seconds of publishing.
    pub seconds: f64,
    /// Bytes of each large payload.
    pub large: usize,
    /// Bytes of each small payload (at least 8: its sequence number).
    pub small: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            seconds: 60.0,
            large: 1_000_000,
            small: 16,
        }
    }
}

/// What a subscriber saw of one publisher.
#[derive(Debug, Default)]
struct Seen {
    received: AtomicU64,
    bytes: AtomicU64,
    /// Messages whose sequence number skipped ahead (lost ones between).
    gaps: AtomicU64,
    /// Messages whose sequence number went back or repeated.
    reordered: AtomicU64,
    /// Messages of the wrong size.
    malformed: AtomicU64,
    /// The next sequence number expected (0: none seen yet).
    next: AtomicU64,
    /// Seconds since the start of the last arrival, in µs.
    last_us: AtomicU64,
}

impl Seen {
    fn take(&self, payload: &[u8], size: usize, t0: Instant) {
        self.received.fetch_add(1, Ordering::Relaxed);
        self.bytes
            .fetch_add(payload.len() as u64, Ordering::Relaxed);
        self.last_us
            .store(t0.elapsed().as_micros() as u64, Ordering::Relaxed);
        if payload.len() != size {
            self.malformed.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let seq = u64::from_le_bytes(payload[..8].try_into().unwrap());
        // One callback at a time per subscriber: load and store do not race.
        let next = self.next.load(Ordering::Relaxed);
        if next != 0 && seq > next {
            self.gaps.fetch_add(1, Ordering::Relaxed);
        } else if next != 0 && seq < next {
            self.reordered.fetch_add(1, Ordering::Relaxed);
        }
        self.next.store(seq + 1, Ordering::Relaxed);
    }
}

/// One direction's figures.
#[derive(Clone, Debug)]
pub struct Direction {
    /// `client -> listener` or `listener -> client`.
    pub name: &'static str,
    /// Large messages published.
    pub large_sent: u64,
    /// Large messages received.
    pub large_received: u64,
    /// Small messages published.
    pub small_sent: u64,
    /// Small messages received.
    pub small_received: u64,
    /// Payload bytes received, both streams.
    pub payload_bytes: u64,
    /// Gaps, reorderings and wrong sizes among all received messages.
    pub faults: u64,
    /// TLS records the relay counted.
    pub records: u64,
    /// TLS bytes the relay carried.
    pub tls_bytes: u64,
    /// Seconds from the start at which the relay had carried 2^24, 2·2^24, ... records: the key
    /// updates of this direction's writer.
    pub key_updates_s: Vec<f64>,
    /// Seconds since the last arrival of each stream when publishing stopped.
    pub silent_s: f64,
}

/// What a stress run saw.
#[derive(Clone, Debug)]
pub struct Report {
    /// Seconds of publishing.
    pub seconds: f64,
    /// TLS connections the client made (1: the link never dropped).
    pub links: u64,
    /// Both directions.
    pub directions: Vec<Direction>,
}

impl Report {
    /// The report as JSON.
    pub fn summary(&self) -> Value {
        json!({
            "seconds": self.seconds,
            "links": self.links,
            "records_per_key": RECORDS_PER_KEY,
            "directions": self.directions.iter().map(|d| json!({
                "name": d.name,
                "large_sent": d.large_sent,
                "large_received": d.large_received,
                "payload_MB_per_s": d.payload_bytes as f64 * 1e-6 / self.seconds,
                "small_sent": d.small_sent,
                "small_received": d.small_received,
                "records": d.records,
                "records_per_s": d.records as f64 / self.seconds,
                "tls_MB": d.tls_bytes as f64 * 1e-6,
                "key_updates_s": d.key_updates_s,
                "faults": d.faults,
                "silent_s": d.silent_s,
            })).collect::<Vec<_>>(),
        })
    }

    /// Err with what went wrong: a direction that carried nothing of a stream, lost or
    /// reordered a message, or had gone silent for more than `silent_s` when publishing
    /// stopped (a dead link).
    pub fn check(&self, silent_s: f64) -> Result<(), String> {
        if self.links != 1 {
            return Err(format!(
                "the client connected {} times: the link dropped (Zenoh's warnings above say why)",
                self.links
            ));
        }
        for d in &self.directions {
            if d.large_received == 0 || d.small_received == 0 {
                return Err(format!(
                    "{}: {} large and {} small messages arrived",
                    d.name, d.large_received, d.small_received
                ));
            }
            if d.faults > 0 {
                return Err(format!(
                    "{}: {} messages lost, reordered or malformed",
                    d.name, d.faults
                ));
            }
            if d.silent_s > silent_s {
                return Err(format!(
                    "{}: nothing arrived in the last {:.1} s of publishing",
                    d.name, d.silent_s
                ));
            }
        }
        Ok(())
    }
}

/// A TLS record counter for one direction of a byte stream.
#[derive(Default)]
struct Records {
    header: [u8; 5],
    have: usize,
    skip: usize,
}

impl Records {
    /// The records that begin in `data`.
    fn feed(&mut self, mut data: &[u8]) -> u64 {
        let mut n = 0;
        while !data.is_empty() {
            if self.skip > 0 {
                let k = self.skip.min(data.len());
                self.skip -= k;
                data = &data[k..];
                continue;
            }
            let k = (5 - self.have).min(data.len());
            self.header[self.have..self.have + k].copy_from_slice(&data[..k]);
            self.have += k;
            data = &data[k..];
            if self.have == 5 {
                self.skip = u16::from_be_bytes([self.header[3], self.header[4]]) as usize;
                self.have = 0;
                n += 1;
            }
        }
        n
    }
}

/// One direction's relay counters.
#[derive(Default)]
struct Relayed {
    records: AtomicU64,
    bytes: AtomicU64,
    key_updates_s: Mutex<Vec<f64>>,
}

/// Copies `from` to `to` until either closes, counting TLS records.
fn relay(mut from: TcpStream, mut to: TcpStream, counts: Arc<Relayed>, t0: Instant) {
    let mut records = Records::default();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let before = counts.records.load(Ordering::Relaxed);
        let after = before + records.feed(&buf[..n]);
        counts.records.store(after, Ordering::Relaxed);
        counts.bytes.fetch_add(n as u64, Ordering::Relaxed);
        if after / RECORDS_PER_KEY > before / RECORDS_PER_KEY {
            counts
                .key_updates_s
                .lock()
                .unwrap()
                .push(t0.elapsed().as_secs_f64());
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// Relays every connection to `port` to `target`, both ways, until `stop`; counts them.
fn start_relay(
    port: u16,
    target: u16,
    t0: Instant,
    stop: Arc<AtomicBool>,
) -> (
    Arc<Relayed>,
    Arc<Relayed>,
    Arc<AtomicU64>,
    std::thread::JoinHandle<()>,
) {
    let up = Arc::new(Relayed::default());
    let down = Arc::new(Relayed::default());
    let links = Arc::new(AtomicU64::new(0));
    let listener = TcpListener::bind(("127.0.0.1", port)).expect("the relay's port");
    listener.set_nonblocking(true).unwrap();
    let (u, d, n) = (up.clone(), down.clone(), links.clone());
    let handle = std::thread::spawn(move || {
        let mut pairs = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let near = match listener.accept() {
                Ok((near, _)) => near,
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            };
            n.fetch_add(1, Ordering::Relaxed);
            near.set_nonblocking(false).unwrap();
            let Ok(far) = TcpStream::connect(("127.0.0.1", target)) else {
                continue;
            };
            let _ = near.set_nodelay(true);
            let _ = far.set_nodelay(true);
            let (near2, far2) = (near.try_clone().unwrap(), far.try_clone().unwrap());
            let (u, d) = (u.clone(), d.clone());
            pairs.push(std::thread::spawn(move || relay(far2, near2, d, t0)));
            pairs.push(std::thread::spawn(move || relay(near, far, u, t0)));
        }
        for p in pairs {
            let _ = p.join();
        }
    });
    (up, down, links, handle)
}

/// Publishes `size`-byte messages with increasing sequence numbers on `key` until `stop`.
fn publish(
    session: &zenoh::Session,
    key: &str,
    size: usize,
    express: bool,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<u64> {
    let publisher = session
        .declare_publisher(key.to_string())
        .congestion_control(CongestionControl::Block)
        // Both streams at one priority: Zenoh serves priorities strictly, and a blocking
        // publisher that finds no batch for 5 s closes the link (its `wait_before_close`), so a
        // lower-priority stream starved by a higher one ends the session (seen: after 820 s).
        .express(express)
        .wait()
        .expect("a publisher");
    std::thread::spawn(move || {
        let mut seq = 1u64;
        let mut payload = vec![0x5au8; size];
        while !stop.load(Ordering::Relaxed) {
            payload[..8].copy_from_slice(&seq.to_le_bytes());
            if publisher.put(payload.clone()).wait().is_err() {
                break;
            }
            seq += 1;
        }
        seq - 1
    })
}

fn subscribe(
    session: &zenoh::Session,
    key: &str,
    size: usize,
    seen: Arc<Seen>,
    t0: Instant,
) -> zenoh::pubsub::Subscriber<()> {
    session
        .declare_subscriber(key.to_string())
        .callback(move |sample| seen.take(&sample.payload().to_bytes(), size, t0))
        .wait()
        .expect("a subscriber")
}

/// Runs the stress in `dir` (certificates go to `dir/certs`). Zenoh's warnings go to stderr
/// (`RUST_LOG` chooses others).
pub fn run(dir: &Path, options: &Options) -> Report {
    assert!(options.small >= 8 && options.large >= 8);
    zenoh::init_log_from_env_or("warn");
    certify(dir, "ssx lab CA", &["operator"]);
    let port = free_port();
    let relay_port = free_port();
    let t0 = Instant::now();
    let near = zenoh::open(listener(dir, port))
        .wait()
        .expect("the lab listener");
    let relay_stop = Arc::new(AtomicBool::new(false));
    let (up, down, links, relay_thread) = start_relay(relay_port, port, t0, relay_stop.clone());
    let mut far_config = client(dir, Some("operator"), relay_port);
    far_config
        .insert_json5(
            "connect/endpoints",
            &format!("[\"tls/127.0.0.1:{relay_port}\"]"),
        )
        .unwrap();
    let far = zenoh::open(far_config).wait().expect("the operator client");

    // Streams: (publishing session, subscribing session, key, size, express).
    let streams = [
        (
            "client -> listener",
            &far,
            &near,
            "ssx/stress/up/large",
            options.large,
            false,
        ),
        (
            "client -> listener",
            &far,
            &near,
            "ssx/stress/up/small",
            options.small,
            true,
        ),
        (
            "listener -> client",
            &near,
            &far,
            "ssx/stress/down/large",
            options.large,
            false,
        ),
        (
            "listener -> client",
            &near,
            &far,
            "ssx/stress/down/small",
            options.small,
            true,
        ),
    ];
    let seen: Vec<Arc<Seen>> = streams.iter().map(|_| Arc::new(Seen::default())).collect();
    let subscribers: Vec<_> = streams
        .iter()
        .zip(&seen)
        .map(|(s, seen)| subscribe(s.2, s.3, s.4, seen.clone(), t0))
        .collect();
    // Let the declarations reach the other side before anything is published.
    std::thread::sleep(Duration::from_millis(500));
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let publishers: Vec<_> = streams
        .iter()
        .map(|s| publish(s.1, s.3, s.4, s.5, stop.clone()))
        .collect();
    std::thread::sleep(Duration::from_secs_f64(options.seconds));
    stop.store(true, Ordering::Relaxed);
    let stopped_us = t0.elapsed().as_micros() as u64;
    let sent: Vec<u64> = publishers.into_iter().map(|p| p.join().unwrap()).collect();
    let elapsed = start.elapsed().as_secs_f64();
    // What is in flight arrives; then the sessions close and the relay ends.
    std::thread::sleep(Duration::from_millis(500));
    drop(subscribers);
    let _ = far.close().wait();
    let _ = near.close().wait();
    relay_stop.store(true, Ordering::Relaxed);
    let _ = relay_thread.join();

    let direction = |name: &'static str, large: usize, small: usize, relayed: &Relayed| {
        let silent =
            |s: &Seen| stopped_us.saturating_sub(s.last_us.load(Ordering::Relaxed)) as f64 * 1e-6;
        let faults = |s: &Seen| {
            s.gaps.load(Ordering::Relaxed)
                + s.reordered.load(Ordering::Relaxed)
                + s.malformed.load(Ordering::Relaxed)
        };
        Direction {
            name,
            large_sent: sent[large],
            large_received: seen[large].received.load(Ordering::Relaxed),
            small_sent: sent[small],
            small_received: seen[small].received.load(Ordering::Relaxed),
            payload_bytes: seen[large].bytes.load(Ordering::Relaxed)
                + seen[small].bytes.load(Ordering::Relaxed),
            faults: faults(&seen[large]) + faults(&seen[small]),
            records: relayed.records.load(Ordering::Relaxed),
            tls_bytes: relayed.bytes.load(Ordering::Relaxed),
            key_updates_s: relayed.key_updates_s.lock().unwrap().clone(),
            silent_s: silent(&seen[large]).max(silent(&seen[small])),
        }
    };
    Report {
        seconds: elapsed,
        links: links.load(Ordering::Relaxed),
        directions: vec![
            direction("client -> listener", 0, 1, &up),
            direction("listener -> client", 2, 3, &down),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::Records;

    #[test]
    fn records_are_counted_across_reads() {
        // Three records (lengths 3, 0, 2) cut at awkward places.
        let stream = [
            23u8, 3, 3, 0, 3, 1, 2, 3, 23, 3, 3, 0, 0, 23, 3, 3, 0, 2, 9, 9,
        ];
        for cut in 0..stream.len() {
            let mut r = Records::default();
            let n = r.feed(&stream[..cut]) + r.feed(&stream[cut..]);
            assert_eq!(n, 3, "cut at {cut}");
        }
    }
}
