//! Outbound: the bounded queue the stepping thread and the workers write into (never waiting on
//! the network), the one publisher thread that empties it onto Zenoh, and the payloads.
//!
//! Order: a control answer is sent only after every publication queued before it, so a client
//! that waits for `step`'s answer has already been sent that step's states and readings.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crossbeam::queue::ArrayQueue;
use zenoh::Wait;
use zenoh::bytes::Encoding as ZEncoding;
use zenoh::qos::CongestionControl;
use zenoh::query::Query;

use crate::codec::{BinOut, JsonOut};
use crate::config::Encoding;

/// The MIME type of JSON payloads.
pub const JSON: &str = "application/json";

/// A key published on.
/// A control answer: JSON (every command), or a `step`'s binary layout when it asked for it.
pub enum Answer {
    /// `{"ok": ...}`.
    Json(String),
    /// `control::step_answer_binary`.
    Binary(Vec<u8>),
}

pub struct PubKey {
    /// The full key.
    pub key: String,
    /// Its payloads' encoding.
    pub encoding: Encoding,
}

/// Who asked a control command, and where its answer goes.
pub enum Asker {
    /// A query on `P/control`: the answer is its reply.
    Query(Query),
    /// A message on `P/control/in`: the answer is published on `P/control/out`.
    Topic,
    /// A ROS 2 service call (`/ssx/pause`, ...): the answer is its `Trigger` response.
    Ros2(Box<crate::ros2::call::Call>),
    /// A command that wants no answer (`/ssx/step_n`); a refusal is logged.
    Quiet,
}

/// An outbound message: which key (index into the advertised keys, or into the ROS 2 topics),
/// and the payload in a reused buffer.
struct Out {
    key: u32,
    ros: bool,
    buf: Vec<u8>,
}

/// The outbound queues.
pub struct Outbound {
    out: ArrayQueue<Out>,
    free: ArrayQueue<Vec<u8>>,
    /// Messages dropped because the queue was full.
    pub dropped: AtomicU64,
    /// Answers on their way; when 16 wait, a new one is dropped (the client's get times out).
    replies: ArrayQueue<(Asker, Answer)>,
    running: AtomicBool,
    publishers: Mutex<Publishers>,
    /// A payload size every free buffer should hold, asked for by the stepping thread and
    /// done by the publisher thread (0: nothing asked).
    grow_to: std::sync::atomic::AtomicUsize,
    /// Whether the buffers have been grown as asked.
    grown: AtomicBool,
    /// The size last asked for: a buffer that was queued or in flight while the free ones grew
    /// is grown when it comes back, before it can be taken again.
    room: std::sync::atomic::AtomicUsize,
}

/// The publishers, held by whoever is sending.
struct Publishers {
    /// One per advertised key, declared on first use.
    keys: Vec<Option<zenoh::pubsub::Publisher<'static>>>,
    /// `P/control/out`.
    answers: Option<zenoh::pubsub::Publisher<'static>>,
    /// The ROS 2 node's publishers and encoders, if the extension has a node.
    ros: Option<crate::ros2::out::RosOut>,
}

impl Outbound {
    /// Room for `n` messages, every buffer allocated now: when all are queued or in flight the
    /// publisher is behind, and a new message is dropped rather than allocated.
    pub fn new(
        n: usize,
        answers: zenoh::pubsub::Publisher<'static>,
        ros: Option<crate::ros2::out::RosOut>,
    ) -> Outbound {
        let free = ArrayQueue::new(n);
        for _ in 0..n {
            let _ = free.push(Vec::with_capacity(1024));
        }
        Outbound {
            out: ArrayQueue::new(n),
            free,
            dropped: AtomicU64::new(0),
            replies: ArrayQueue::new(16),
            running: AtomicBool::new(true),
            publishers: Mutex::new(Publishers {
                keys: Vec::new(),
                answers: Some(answers),
                ros,
            }),
            grow_to: std::sync::atomic::AtomicUsize::new(0),
            grown: AtomicBool::new(false),
            room: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Asks the publisher thread to grow every buffer to hold `bytes` (the largest payload, once
    /// it is known), so that writing one never allocates on the stepping thread; [`grown`]
    /// says when it is done. (Growing 4096 buffers took milliseconds: not on the stepping
    /// thread.)
    ///
    /// [`grown`]: Outbound::grown
    pub fn grow(&self, bytes: usize) {
        self.grown.store(false, Ordering::Release);
        self.room.store(bytes, Ordering::Release);
        self.grow_to.store(bytes, Ordering::Release);
    }

    /// Whether the buffers hold what [`Outbound::grow`] asked for.
    pub fn grown(&self) -> bool {
        self.grown.load(Ordering::Acquire)
    }

    /// The publisher thread: grows every buffer, as asked.
    fn grow_buffers(&self) {
        let bytes = self.grow_to.swap(0, Ordering::AcqRel);
        if bytes == 0 {
            return;
        }
        for _ in 0..self.free.capacity() {
            let Some(mut b) = self.free.pop() else { break };
            b.reserve(bytes.saturating_sub(b.len()));
            let _ = self.free.push(b);
        }
        self.grown.store(true, Ordering::Release);
    }

    /// Queues a payload written by `write` for key `key`; drops it (counted) when the queue is
    /// full. Returns whether it was queued.
    pub fn send(&self, key: u32, write: impl FnOnce(&mut Vec<u8>)) -> bool {
        self.queue(key, false, write)
    }

    /// Queues a snapshot for ROS 2 topic `topic`, encoded by the publisher thread.
    pub fn send_ros(&self, topic: u32, write: impl FnOnce(&mut Vec<u8>)) -> bool {
        self.queue(topic, true, write)
    }

    fn queue(&self, key: u32, ros: bool, write: impl FnOnce(&mut Vec<u8>)) -> bool {
        let Some(mut buf) = self.free.pop() else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return false;
        };
        buf.clear();
        write(&mut buf);
        match self.out.push(Out { key, ros, buf }) {
            Ok(()) => true,
            Err(Out { buf, .. }) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                let _ = self.free.push(buf);
                false
            }
        }
    }

    /// Queues a control answer, to go after everything queued before it. With 16 answers
    /// waiting (a publisher thread held up by the network) it is dropped, and counted with the
    /// dropped messages (`outbound_dropped`) rather than lost without a trace.
    pub fn reply(&self, to: Asker, answer: Answer) {
        if self.replies.push((to, answer)).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Asks the publisher thread to finish (it drains what is queued first).
    pub fn stop(&self) {
        self.running.store(false, Ordering::Relaxed);
    }

    /// The publisher thread: sends what was queued and sleeps until woken (or 50 ms). Then
    /// undeclares the publishers.
    pub fn run(&self, session: &zenoh::Session, keys: &[OnceLock<PubKey>]) {
        loop {
            let any = self.flush(session, keys);
            if !self.running.load(Ordering::Relaxed) {
                break;
            }
            if !any {
                std::thread::park_timeout(Duration::from_millis(50));
            }
        }
        let mut p = self.publishers.lock().unwrap_or_else(|e| e.into_inner());
        for p in p.keys.drain(..).flatten() {
            let _ = p.undeclare().wait();
        }
        if let Some(a) = p.answers.take() {
            let _ = a.undeclare().wait();
        }
        if let Some(ros) = p.ros.take() {
            ros.close();
        }
    }

    /// Sends everything queued, in order, each control answer after the publications queued
    /// before it; returns whether there was anything. Whoever holds the lock sends, so order
    /// holds whichever thread calls it.
    pub fn flush(&self, session: &zenoh::Session, keys: &[OnceLock<PubKey>]) -> bool {
        let mut p = self.publishers.lock().unwrap_or_else(|e| e.into_inner());
        let p = &mut *p;
        if let Some(ros) = &mut p.ros {
            ros.adopt();
        }
        self.grow_buffers();
        let mut any = publish_queued(
            &self.out,
            (&self.free, self.room.load(Ordering::Acquire)),
            session,
            keys,
            &mut p.keys,
            &mut p.ros,
        );
        while let Some((to, answer)) = self.replies.pop() {
            any = true;
            // Everything the stepping thread queued before this answer goes first.
            publish_queued(
                &self.out,
                (&self.free, self.room.load(Ordering::Acquire)),
                session,
                keys,
                &mut p.keys,
                &mut p.ros,
            );
            let (bytes, encoding) = match answer {
                Answer::Json(text) => (text.into_bytes(), ZEncoding::from(JSON)),
                Answer::Binary(b) => (b, ZEncoding::APPLICATION_OCTET_STREAM),
            };
            match to {
                Asker::Ros2(call) => {
                    if let Some(ros) = &mut p.ros {
                        ros.answer(*call, &String::from_utf8_lossy(&bytes));
                    }
                }
                Asker::Quiet => {
                    if let Some(ros) = &p.ros {
                        ros.quiet_answer(&String::from_utf8_lossy(&bytes));
                    }
                }
                Asker::Query(q) => {
                    let key = q.key_expr().clone();
                    let _ = q.reply(key, bytes).encoding(encoding).express(true).wait();
                }
                Asker::Topic => {
                    if let Some(a) = &p.answers {
                        let _ = a.put(bytes).encoding(encoding).wait();
                    }
                }
            }
        }
        any
    }

    /// The queries whose answers were queued but not sent (at shutdown).
    pub fn unsent(&self) -> impl Iterator<Item = Asker> + '_ {
        std::iter::from_fn(|| self.replies.pop().map(|(q, _)| q))
    }
}

/// Puts every queued message; whether there was any.
fn publish_queued(
    out: &ArrayQueue<Out>,
    (free, room): (&ArrayQueue<Vec<u8>>, usize),
    session: &zenoh::Session,
    keys: &[OnceLock<PubKey>],
    publishers: &mut Vec<Option<zenoh::pubsub::Publisher<'static>>>,
    ros: &mut Option<crate::ros2::out::RosOut>,
) -> bool {
    let give_back = |mut buf: Vec<u8>| {
        if buf.capacity() < room {
            buf.reserve(room - buf.len());
        }
        let _ = free.push(buf);
    };
    let mut any = false;
    while let Some(Out {
        key,
        ros: to_ros,
        buf,
    }) = out.pop()
    {
        any = true;
        if to_ros {
            if let Some(r) = ros {
                r.publish(key, &buf);
            }
            give_back(buf);
            continue;
        }
        let k = key as usize;
        if publishers.len() <= k {
            publishers.resize_with(k + 1, || None);
        }
        if publishers[k].is_none()
            && let Some(pk) = keys.get(k).and_then(OnceLock::get)
        {
            let enc = match pk.encoding {
                Encoding::Json => ZEncoding::from(JSON),
                Encoding::Binary => ZEncoding::APPLICATION_OCTET_STREAM,
            };
            publishers[k] = session
                .declare_publisher(pk.key.clone())
                .encoding(enc)
                // State streams drop rather than block on a slow subscriber.
                .congestion_control(CongestionControl::Drop)
                .express(true)
                .wait()
                .ok();
        }
        if let Some(p) = &publishers[k] {
            let _ = p.put(buf.as_slice()).wait();
        }
        give_back(buf);
    }
    any
}

/// `state`: `{"step","time","position","orientation","linear_velocity","angular_velocity"}` or
/// binary u64 step, f64 time, 13 f64 (position, orientation w x y z, linear, angular velocity).
pub fn write_state(b: &mut Vec<u8>, enc: Encoding, step: u64, time: f64, s: &ssx_sdk::BodyState) {
    match enc {
        Encoding::Json => {
            let mut j = JsonOut(b);
            j.open();
            j.u64("step", step);
            j.f64("time", time);
            j.array("position", &s.position);
            j.array("orientation", &s.orientation);
            j.array("linear_velocity", &s.linear_velocity);
            j.array("angular_velocity", &s.angular_velocity);
            j.close();
        }
        Encoding::Binary => {
            let mut o = BinOut(b);
            o.u64(step);
            o.f64s(&[time]);
            o.f64s(&s.position);
            o.f64s(&s.orientation);
            o.f64s(&s.linear_velocity);
            o.f64s(&s.angular_velocity);
        }
    }
}

/// A sensor reading: `{"step","time","taken","values"}` or binary u64 step, f64 time, u64
/// taken, u32 count, u32 0, f64 values.
pub fn write_reading(b: &mut Vec<u8>, enc: Encoding, step: u64, time: f64, taken: u64, v: &[f64]) {
    match enc {
        Encoding::Json => {
            let mut j = JsonOut(b);
            j.open();
            j.u64("step", step);
            j.f64("time", time);
            j.u64("taken", taken);
            j.array("values", v);
            j.close();
        }
        Encoding::Binary => {
            let mut o = BinOut(b);
            o.u64(step);
            o.f64s(&[time]);
            o.u64(taken);
            o.u32(v.len() as u32);
            o.u32(0);
            o.f64s(v);
        }
    }
}

/// The counters the extension adds to the run's statistics.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    /// Outbound messages dropped (queue full).
    pub outbound_dropped: u64,
    /// Control queries refused (too long, malformed, or too many waiting).
    pub control_refused: u64,
}

/// Every extension's figures as a JSON object (`{"explore.explored":0.5,...}`), into `out`
/// (cleared first); `name` is scratch space for the host call.
pub fn write_metrics(
    ctx: &ssx_sdk::Ctx<'_>,
    out: &mut Vec<u8>,
    name: &mut Vec<u8>,
) -> Result<(), String> {
    out.clear();
    let mut j = JsonOut(out);
    j.open();
    ctx.metrics(name, |k, v| j.f64(k, v))?;
    j.close();
    Ok(())
}

/// `P/stats`: the run's statistics, the extension's counters, and every extension's figures
/// (`metrics`, a JSON object from [`write_metrics`]).
pub fn write_stats(b: &mut Vec<u8>, s: &ssx_sdk::Stats, c: Counters, metrics: &[u8]) {
    let mut j = JsonOut(b);
    j.open();
    j.bool("paused", s.paused != 0);
    j.u64("steps", s.steps);
    j.f64("sim_time_s", s.sim_time);
    j.f64("wall_time_s", s.wall_time);
    j.u64("deadline_misses", s.deadline_misses);
    j.u64("miss_bursts", s.miss_bursts);
    j.u64("late_wakeups", s.late_wakeups);
    j.u64("plugin_faults", s.plugin_faults);
    j.f64("step_p50_us", s.step_p50_us);
    j.f64("step_p99_us", s.step_p99_us);
    j.f64("step_max_us", s.step_max_us);
    j.f64("lateness_p99_us", s.lateness_p99_us);
    j.f64("lateness_max_us", s.lateness_max_us);
    j.u64("outbound_dropped", c.outbound_dropped);
    j.u64("control_refused", c.control_refused);
    j.key("metrics");
    j.0.extend_from_slice(if metrics.is_empty() { b"{}" } else { metrics });
    j.comma();
    j.close();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_streams_have_the_documented_little_endian_layout() {
        let s = ssx_sdk::BodyState {
            position: [1.0, 2.0, 3.0],
            orientation: [1.0, 0.0, 0.0, 0.0],
            linear_velocity: [0.5, 0.0, -0.5],
            angular_velocity: [0.0, 0.0, 0.25],
        };
        let mut b = Vec::new();
        write_state(&mut b, Encoding::Binary, 7, 0.007, &s);
        assert_eq!(b.len(), 8 + 8 + 13 * 8);
        let f = |i: usize| f64::from_le_bytes(b[16 + 8 * i..24 + 8 * i].try_into().unwrap());
        assert_eq!(u64::from_le_bytes(b[..8].try_into().unwrap()), 7);
        assert_eq!(f64::from_le_bytes(b[8..16].try_into().unwrap()), 0.007);
        let values: Vec<f64> = (0..13).map(f).collect();
        assert_eq!(
            values,
            [
                1.0, 2.0, 3.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.0, -0.5, 0.0, 0.0, 0.25
            ]
        );

        let mut r = Vec::new();
        write_reading(&mut r, Encoding::Binary, 9, 0.009, 8, &[4.0, 5.0]);
        assert_eq!(r.len(), 8 + 8 + 8 + 4 + 4 + 2 * 8);
        assert_eq!(u64::from_le_bytes(r[16..24].try_into().unwrap()), 8);
        assert_eq!(u32::from_le_bytes(r[24..28].try_into().unwrap()), 2);
        assert_eq!(f64::from_le_bytes(r[32..40].try_into().unwrap()), 4.0);

        let mut j = Vec::new();
        write_state(&mut j, Encoding::Json, 7, 0.007, &s);
        let v: serde_json::Value = serde_json::from_slice(&j).unwrap();
        assert_eq!(v["position"], serde_json::json!([1.0, 2.0, 3.0]));
        assert_eq!(v["orientation"], serde_json::json!([1.0, 0.0, 0.0, 0.0]));
        assert_eq!(v["step"], 7);
    }
}
