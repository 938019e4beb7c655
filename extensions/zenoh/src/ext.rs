//! The extension: one Zenoh session per daemon, the bridged streams, the services drivers use
//! (`subscribe`, `read`, `advertise`, `publish`) and the control queryable.
//!
//! Threads: the stepping thread (`after_step`, `control`) and the workers (`call`) never wait on
//! the network. Outbound payloads are written into reused buffers and handed to one publisher
//! thread through a bounded lock-free queue (full: dropped and counted). Inbound messages are
//! decoded on Zenoh's threads into lock-free inboxes. Registration (`subscribe`, `advertise`)
//! takes a mutex and talks to the network; drivers do it once, on their first step.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

use crossbeam::queue::ArrayQueue;
use ssx_sdk::abi::SSX_LOG_WARN;
use ssx_sdk::{Control, Ctx, Init};
use zenoh::Wait;
use zenoh::bytes::Encoding as ZEncoding;
use zenoh::qos::CongestionControl;
use zenoh::query::Query;

use crate::codec::{BinOut, JsonOut, SubSpec};
use crate::config::{Descriptor, Encoding, check_key};
use crate::mailbox::Inbox;

/// Most subscriptions and most advertised keys per daemon.
pub const MAX_KEYS: usize = 1024;

/// An outbound message: which key, and the payload in a reused buffer.
struct Out {
    key: u32,
    buf: Vec<u8>,
}

/// A key published on.
struct PubKey {
    key: String,
    encoding: Encoding,
}

/// What the stepping thread, the workers, Zenoh's threads and the publisher thread share.
struct Shared {
    prefix: String,
    session: zenoh::Session,
    inboxes: Box<[OnceLock<Arc<Inbox>>]>,
    subscribers: Mutex<Vec<zenoh::pubsub::Subscriber<()>>>,
    keys: Box<[OnceLock<PubKey>]>,
    /// Registration of inboxes and keys (never taken by `read` or `publish`).
    registry: Mutex<(usize, usize)>,
    out: ArrayQueue<Out>,
    free: ArrayQueue<Vec<u8>>,
    /// Outbound messages dropped because the queue was full.
    out_dropped: AtomicU64,
    /// Queries to the control queryable, answered by the stepping thread in order.
    queries: ArrayQueue<Query>,
    replies: ArrayQueue<(Query, String)>,
    /// Warnings from Zenoh's threads, logged through the host by the stepping thread.
    warnings: ArrayQueue<String>,
    running: AtomicBool,
}

impl Shared {
    fn full_key(&self, key: &str) -> Result<String, String> {
        let full = match key.strip_prefix('/') {
            Some(abs) => abs.to_string(),
            None => format!("{}/{key}", self.prefix),
        };
        check_key(&full, "a subscription or publication")?;
        Ok(full)
    }

    /// Hands a payload to the publisher thread; drops it (counted) when the queue is full.
    fn send(&self, key: u32, write: impl FnOnce(&mut Vec<u8>)) -> bool {
        let Some(mut buf) = self.free.pop() else {
            self.out_dropped.fetch_add(1, Ordering::Relaxed);
            return false;
        };
        buf.clear();
        write(&mut buf);
        match self.out.push(Out { key, buf }) {
            Ok(()) => true,
            Err(Out { buf, .. }) => {
                self.out_dropped.fetch_add(1, Ordering::Relaxed);
                let _ = self.free.push(buf);
                false
            }
        }
    }

    fn advertise(&self, key: &str, encoding: Encoding) -> Result<u32, String> {
        let full = self.full_key(key)?;
        let mut reg = self.registry.lock().map_err(|_| "registry poisoned")?;
        for (i, slot) in self.keys[..reg.1].iter().enumerate() {
            if let Some(k) = slot.get().filter(|k| k.key == full) {
                if k.encoding != encoding {
                    return Err(format!(
                        "advertise '{full}': already advertised with another encoding"
                    ));
                }
                return Ok(i as u32);
            }
        }
        if reg.1 == MAX_KEYS {
            return Err(format!("advertise '{full}': more than {MAX_KEYS} keys"));
        }
        let id = reg.1;
        let _ = self.keys[id].set(PubKey {
            key: full,
            encoding,
        });
        reg.1 += 1;
        Ok(id as u32)
    }

    fn subscribe(self: &Arc<Self>, spec: SubSpec) -> Result<u32, String> {
        let full = self.full_key(&spec.key)?;
        let mut reg = self.registry.lock().map_err(|_| "registry poisoned")?;
        for (i, slot) in self.inboxes[..reg.0].iter().enumerate() {
            if let Some(inbox) = slot.get().filter(|b| b.key == full) {
                if inbox.spec != spec {
                    return Err(format!(
                        "subscribe '{full}': already subscribed with a different spec"
                    ));
                }
                return Ok(i as u32);
            }
        }
        if reg.0 == MAX_KEYS {
            return Err(format!(
                "subscribe '{full}': more than {MAX_KEYS} subscriptions"
            ));
        }
        let inbox = Arc::new(Inbox::new(full.clone(), spec));
        let (rx, shared) = (Arc::clone(&inbox), Arc::downgrade(self));
        let subscriber = self
            .session
            .declare_subscriber(full.clone())
            .callback(move |sample| {
                let payload = sample.payload().to_bytes();
                if let Some(w) = rx.receive(&payload)
                    && let Some(s) = shared.upgrade()
                {
                    let _ = s.warnings.push(w);
                }
            })
            .wait()
            .map_err(|e| format!("subscribe '{full}': {e}"))?;
        self.subscribers
            .lock()
            .map_err(|_| "subscribers poisoned")?
            .push(subscriber);
        let id = reg.0;
        let _ = self.inboxes[id].set(inbox);
        reg.0 += 1;
        Ok(id as u32)
    }

    fn inbox(&self, id: u32) -> Option<&Arc<Inbox>> {
        self.inboxes.get(id as usize).and_then(OnceLock::get)
    }
}

/// One bridged stream of one artifact.
struct Bridge {
    artifact: u32,
    /// None: the state; Some(i): sensor i.
    sensor: Option<u32>,
    every: u64,
    encoding: Encoding,
    key: u32,
    last_reading: u64,
}

/// A control query waiting for the run to reach a state.
enum Awaiting {
    Paused(Query),
    Running(Query),
    Step(Query, u64),
}

/// The extension instance.
pub struct Zenoh {
    shared: Arc<Shared>,
    desc: Descriptor,
    publisher: Option<(Thread, JoinHandle<()>)>,
    _queryable: zenoh::query::Queryable<()>,
    bridges: Option<Vec<Bridge>>,
    clock_key: u32,
    stats_key: u32,
    stats_every: u64,
    stats_wall: Instant,
    awaiting: Option<Awaiting>,
    /// Something was queued for the publisher since it was last woken.
    pending: bool,
    /// The run was paused when last seen (polls stay cheap while it runs).
    paused: bool,
}

const JSON: &str = "application/json";

impl Zenoh {
    /// Opens the session and declares the control queryable and the static streams.
    pub fn create(descriptor: &str, init: &Init) -> Result<Zenoh, String> {
        let desc = Descriptor::parse(descriptor)?;
        let prefix = desc
            .prefix
            .clone()
            .unwrap_or_else(|| format!("ssx/{}", init.artifact_name));
        check_key(&prefix, "prefix")?;
        let config = desc.zenoh_config()?;
        let session = zenoh::open(config)
            .wait()
            .map_err(|e| format!("cannot open the zenoh session: {e}"))?;
        let n = desc.outbound_queue;
        // Every buffer there will ever be, allocated now: when all are queued or in flight the
        // publisher is behind, and a new message is dropped rather than allocated.
        let free = ArrayQueue::new(n);
        for _ in 0..n {
            let _ = free.push(Vec::with_capacity(1024));
        }
        let shared = Arc::new(Shared {
            prefix: prefix.clone(),
            session: session.clone(),
            inboxes: (0..MAX_KEYS).map(|_| OnceLock::new()).collect(),
            subscribers: Mutex::new(Vec::new()),
            keys: (0..MAX_KEYS).map(|_| OnceLock::new()).collect(),
            registry: Mutex::new((0, 0)),
            out: ArrayQueue::new(n),
            free,
            out_dropped: AtomicU64::new(0),
            queries: ArrayQueue::new(16),
            replies: ArrayQueue::new(16),
            warnings: ArrayQueue::new(256),
            running: AtomicBool::new(true),
        });
        let q = Arc::downgrade(&shared);
        let queryable = session
            .declare_queryable(format!("{prefix}/control"))
            .callback(move |query| {
                if let Some(s) = q.upgrade()
                    && let Err(query) = s.queries.push(query)
                {
                    let _ = query
                        .reply_err(r#"{"ok":false,"error":"busy: 16 control queries are waiting"}"#)
                        .wait();
                }
            })
            .wait()
            .map_err(|e| format!("cannot declare '{prefix}/control': {e}"))?;
        let clock_key = shared.advertise("clock", desc.clock.encoding)?;
        let stats_key = shared.advertise("stats", Encoding::Json)?;
        let stats_every = if desc.stats.period > 0.0 {
            ((desc.stats.period / init.timestep).round() as u64).max(1)
        } else {
            0
        };
        let worker = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("ssx-zenoh-pub".into())
            .spawn(move || publisher_loop(&worker))
            .map_err(|e| format!("cannot start the publisher thread: {e}"))?;
        Ok(Zenoh {
            publisher: Some((handle.thread().clone(), handle)),
            shared,
            desc,
            _queryable: queryable,
            bridges: None,
            clock_key,
            stats_key,
            stats_every,
            stats_wall: Instant::now(),
            awaiting: None,
            pending: false,
            paused: false,
        })
    }

    /// The bridged streams, resolved against the world on the first step.
    fn resolve(&self, ctx: &Ctx<'_>) -> Result<Vec<Bridge>, String> {
        let count = ctx.artifact_count()?;
        let names: Vec<String> = (0..count)
            .map(|a| ctx.artifact_name(a))
            .collect::<Result<_, _>>()?;
        let mut out = Vec::new();
        for (pattern, bridge) in &self.desc.artifacts {
            let matches: Vec<u32> = match pattern.strip_suffix('*') {
                Some(p) => (0..count)
                    .filter(|&a| names[a as usize].starts_with(p))
                    .collect(),
                None => (0..count)
                    .filter(|&a| names[a as usize] == *pattern)
                    .collect(),
            };
            if matches.is_empty() {
                return Err(format!(
                    "artifacts.{pattern}: no artifact in the scene is called that"
                ));
            }
            for a in matches {
                let name = &names[a as usize];
                if let Some(s) = bridge.state {
                    out.push(Bridge {
                        artifact: a,
                        sensor: None,
                        every: u64::from(s.every),
                        encoding: s.encoding,
                        key: self
                            .shared
                            .advertise(&format!("artifacts/{name}/state"), s.encoding)?,
                        last_reading: 0,
                    });
                }
                for (sensor, s) in &bridge.sensors {
                    let index = ctx.sensor_index(a, sensor).map_err(|_| {
                        format!("artifacts.{pattern}.sensors: '{name}' has no sensor '{sensor}'")
                    })?;
                    out.push(Bridge {
                        artifact: a,
                        sensor: Some(index),
                        every: u64::from(s.every),
                        encoding: s.encoding,
                        key: self
                            .shared
                            .advertise(&format!("artifacts/{name}/sensors/{sensor}"), s.encoding)?,
                        last_reading: 0,
                    });
                }
            }
        }
        Ok(out)
    }

    /// After every step: clock, states, fresh readings, statistics; warnings into the log.
    pub fn after_step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        if self.bridges.is_none() {
            self.bridges = Some(self.resolve(ctx)?);
        }
        let (time, step) = ctx.time()?;
        let shared = &*self.shared;
        let clock = &self.desc.clock;
        if clock.every > 0 && step % u64::from(clock.every) == 0 {
            self.pending |= shared.send(self.clock_key, |b| match clock.encoding {
                Encoding::Json => {
                    let mut j = JsonOut(b);
                    j.open();
                    j.u64("step", step);
                    j.f64("time", time);
                    j.close();
                }
                Encoding::Binary => {
                    let mut o = BinOut(b);
                    o.u64(step);
                    o.f64s(&[time]);
                }
            });
        }
        for br in self.bridges.iter_mut().flatten() {
            if step % br.every != 0 {
                continue;
            }
            match br.sensor {
                None => {
                    let s = ctx.body_state(br.artifact, 0)?;
                    self.pending |=
                        shared.send(br.key, |b| write_state(b, br.encoding, step, time, &s));
                }
                Some(sensor) => {
                    let (values, taken) = ctx.reading(br.artifact, sensor)?;
                    if taken == 0 || taken == br.last_reading {
                        continue;
                    }
                    br.last_reading = taken;
                    self.pending |= shared.send(br.key, |b| {
                        write_reading(b, br.encoding, step, time, taken, values)
                    });
                }
            }
        }
        if self.stats_every > 0 && step % self.stats_every == 0 {
            self.publish_stats(ctx)?;
        }
        self.log_warnings(ctx);
        self.reply_when_due(ctx)?;
        if self.pending {
            self.pending = false;
            if let Some((t, _)) = &self.publisher {
                t.unpark();
            }
        }
        Ok(())
    }

    fn publish_stats(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let s = ctx.stats()?;
        let dropped = self.shared.out_dropped.load(Ordering::Relaxed);
        self.pending |= self
            .shared
            .send(self.stats_key, |b| write_stats(b, &s, dropped));
        self.stats_wall = Instant::now();
        Ok(())
    }

    fn log_warnings(&self, ctx: &Ctx<'_>) {
        while let Some(w) = self.shared.warnings.pop() {
            ctx.log(SSX_LOG_WARN, &w);
        }
    }

    /// Answers the control query waiting for a run state once the run has reached it.
    fn reply_when_due(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let Some(a) = self.awaiting.take() else {
            return Ok(());
        };
        let s = ctx.stats()?;
        let paused = s.paused != 0;
        let done = match &a {
            Awaiting::Paused(_) => paused,
            Awaiting::Running(_) => !paused,
            Awaiting::Step(_, target) => s.steps >= *target,
        };
        if !done {
            self.awaiting = Some(a);
            return Ok(());
        }
        let (Awaiting::Paused(q) | Awaiting::Running(q) | Awaiting::Step(q, _)) = a;
        self.reply(q, run_state_json(&s));
        Ok(())
    }

    fn reply(&mut self, q: Query, text: String) {
        // A full reply queue (16 unanswered) drops the query: the client's get times out.
        let _ = self.shared.replies.push((q, text));
        self.pending = true;
        if let Some((t, _)) = &self.publisher {
            t.unpark();
            self.pending = false;
        }
    }

    /// Between steps and while paused: the next control query, if the last one is answered.
    pub fn control(&mut self, ctx: &Ctx<'_>) -> Result<Control, String> {
        // Polled after every step: with nothing to do it costs one queue check (the statistics'
        // percentiles are not computed unless needed).
        if !self.paused && self.awaiting.is_none() && self.shared.queries.is_empty() {
            return Ok(Control::None);
        }
        self.reply_when_due(ctx)?;
        let s = ctx.stats()?;
        self.paused = s.paused != 0;
        if self.paused {
            // Paused: no steps publish anything, so the statistics go out from here.
            self.log_warnings(ctx);
            if self.stats_every > 0
                && self.stats_wall.elapsed().as_secs_f64() >= self.desc.stats.period
            {
                self.publish_stats(ctx)?;
                if let Some((t, _)) = &self.publisher {
                    t.unpark();
                }
            }
        }
        if self.awaiting.is_some() {
            return Ok(Control::None);
        }
        let Some(query) = self.shared.queries.pop() else {
            return Ok(Control::None);
        };
        let command = match parse_command(&query) {
            Ok(c) => c,
            Err(e) => {
                self.reply(query, error_json(&e));
                return Ok(Control::None);
            }
        };
        let paused = s.paused != 0;
        Ok(match command {
            Command::Pause => {
                self.awaiting = Some(Awaiting::Paused(query));
                Control::Pause
            }
            Command::Resume => {
                self.awaiting = Some(Awaiting::Running(query));
                Control::Resume
            }
            Command::Step(_) if !paused => {
                self.reply(query, error_json("step needs a paused run: pause first"));
                Control::None
            }
            Command::Step(n) => {
                self.awaiting = Some(Awaiting::Step(query, s.steps + n));
                Control::Step(n)
            }
            Command::Stats => {
                let text = self.stats_reply(&s);
                self.reply(query, text);
                Control::None
            }
            Command::List => {
                let text = list_json(ctx)?;
                self.reply(query, text);
                Control::None
            }
        })
    }

    fn stats_reply(&self, s: &ssx_sdk::Stats) -> String {
        let mut b = Vec::with_capacity(1024);
        write_stats(&mut b, s, self.shared.out_dropped.load(Ordering::Relaxed));
        b.pop(); // the closing brace: add the inputs
        let reg = self.shared.registry.lock().map(|r| r.0).unwrap_or(0);
        b.extend_from_slice(b",\"ok\":true,\"inputs\":[");
        for (i, inbox) in self.shared.inboxes[..reg]
            .iter()
            .filter_map(OnceLock::get)
            .enumerate()
        {
            if i > 0 {
                b.push(b',');
            }
            let mut j = JsonOut(&mut b);
            j.open();
            j.str("key", &inbox.key);
            j.u64("accepted", inbox.accepted.load(Ordering::Relaxed));
            j.u64("malformed", inbox.malformed.load(Ordering::Relaxed));
            j.u64("overflow", inbox.overflow.load(Ordering::Relaxed));
            j.close();
        }
        b.extend_from_slice(b"]}");
        String::from_utf8(b).expect("JSON is UTF-8")
    }

    /// The services drivers and sensors call (see `ssx_sdk::bus`).
    pub fn call(
        &self,
        service: &str,
        request: &[u8],
        response: &mut [u8],
    ) -> Result<usize, String> {
        match service {
            "read" => {
                let id = u32::from_le_bytes(
                    request
                        .try_into()
                        .map_err(|_| "read: the request is a 4-byte id")?,
                );
                let inbox = self
                    .shared
                    .inbox(id)
                    .ok_or_else(|| format!("read: no subscription {id}"))?;
                let width = inbox.spec.width();
                let need = 16 + 8 * width;
                if response.len() < need {
                    return Err(format!("read: a {need}-byte answer needs more room"));
                }
                let Some(m) = inbox.take() else {
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
            "publish" => {
                if request.len() < 4 {
                    return Err("publish: the request starts with a 4-byte id".into());
                }
                let id = u32::from_le_bytes(request[..4].try_into().expect("4 bytes"));
                if self
                    .shared
                    .keys
                    .get(id as usize)
                    .and_then(OnceLock::get)
                    .is_none()
                {
                    return Err(format!("publish: no advertised key {id}"));
                }
                // Woken at the end of the step by `after_step`.
                self.shared.send(id, |b| b.extend_from_slice(&request[4..]));
                Ok(0)
            }
            "subscribe" => {
                let id = self.shared.subscribe(SubSpec::parse(request)?)?;
                write_id(id, response)
            }
            "advertise" => {
                #[derive(serde::Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Ad {
                    key: String,
                    #[serde(default)]
                    encoding: Encoding,
                }
                let ad: Ad = serde_json::from_slice(request)
                    .map_err(|e| format!("advertise: invalid request: {e}"))?;
                let id = self.shared.advertise(&ad.key, ad.encoding)?;
                write_id(id, response)
            }
            other => Err(format!(
                "no service '{other}' (known: subscribe, read, advertise, publish)"
            )),
        }
    }
}

impl Drop for Zenoh {
    fn drop(&mut self) {
        self.shared.running.store(false, Ordering::Relaxed);
        if let Some((t, handle)) = self.publisher.take() {
            t.unpark();
            let _ = handle.join();
        }
        // Unanswered queries are answered, so clients are not left waiting for a timeout.
        while let Some(q) = self.shared.queries.pop() {
            let _ = q
                .reply_err(error_json("the daemon is shutting down"))
                .wait();
        }
        if let Some(a) = self.awaiting.take() {
            let (Awaiting::Paused(q) | Awaiting::Running(q) | Awaiting::Step(q, _)) = a;
            let _ = q
                .reply_err(error_json("the daemon is shutting down"))
                .wait();
        }
        if let Ok(mut subs) = self.shared.subscribers.lock() {
            for s in subs.drain(..) {
                let _ = s.undeclare().wait();
            }
        }
        let _ = self.shared.session.close().wait();
    }
}

fn write_id(id: u32, response: &mut [u8]) -> Result<usize, String> {
    if response.len() < 4 {
        return Err("the answer is a 4-byte id: give 4 bytes of room".into());
    }
    response[..4].copy_from_slice(&id.to_le_bytes());
    Ok(4)
}

/// The publisher thread: sends what the stepping thread and the workers queued, answers control
/// queries, and sleeps until woken (or 50 ms).
fn publisher_loop(shared: &Shared) {
    let mut publishers: Vec<Option<zenoh::pubsub::Publisher<'static>>> = Vec::new();
    loop {
        let mut idle = true;
        while let Some(Out { key, buf }) = shared.out.pop() {
            idle = false;
            let k = key as usize;
            if publishers.len() <= k {
                publishers.resize_with(k + 1, || None);
            }
            if publishers[k].is_none()
                && let Some(pk) = shared.keys[k].get()
            {
                let enc = match pk.encoding {
                    Encoding::Json => ZEncoding::from(JSON),
                    Encoding::Binary => ZEncoding::APPLICATION_OCTET_STREAM,
                };
                publishers[k] = shared
                    .session
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
            let _ = shared.free.push(buf);
        }
        while let Some((q, text)) = shared.replies.pop() {
            idle = false;
            let key = q.key_expr().clone();
            let _ = q.reply(key, text).encoding(ZEncoding::from(JSON)).wait();
        }
        if !shared.running.load(Ordering::Relaxed) {
            break;
        }
        if idle {
            std::thread::park_timeout(Duration::from_millis(50));
        }
    }
    for p in publishers.into_iter().flatten() {
        let _ = p.undeclare().wait();
    }
}

/// `state`: `{"step","time","position","orientation","linear_velocity","angular_velocity"}` or
/// binary u64 step, f64 time, 13 f64 (position, orientation w x y z, linear, angular velocity).
fn write_state(b: &mut Vec<u8>, enc: Encoding, step: u64, time: f64, s: &ssx_sdk::BodyState) {
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
fn write_reading(b: &mut Vec<u8>, enc: Encoding, step: u64, time: f64, taken: u64, v: &[f64]) {
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

fn write_stats(b: &mut Vec<u8>, s: &ssx_sdk::Stats, outbound_dropped: u64) {
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
    j.u64("outbound_dropped", outbound_dropped);
    j.close();
}

fn run_state_json(s: &ssx_sdk::Stats) -> String {
    let mut b = Vec::with_capacity(96);
    let mut j = JsonOut(&mut b);
    j.open();
    j.bool("ok", true);
    j.str("state", if s.paused != 0 { "paused" } else { "running" });
    j.u64("step", s.steps);
    j.f64("time", s.sim_time);
    j.close();
    String::from_utf8(b).expect("JSON is UTF-8")
}

fn error_json(e: &str) -> String {
    let mut b = Vec::new();
    let mut j = JsonOut(&mut b);
    j.open();
    j.bool("ok", false);
    j.str("error", e);
    j.close();
    String::from_utf8(b).expect("JSON is UTF-8")
}

fn list_json(ctx: &Ctx<'_>) -> Result<String, String> {
    let mut b = Vec::new();
    b.extend_from_slice(b"{\"ok\":true,\"artifacts\":[");
    for a in 0..ctx.artifact_count()? {
        if a > 0 {
            b.push(b',');
        }
        let mut j = JsonOut(&mut b);
        j.open();
        j.str("name", &ctx.artifact_name(a)?);
        j.u64("bodies", u64::from(ctx.body_count(a)?));
        j.close();
    }
    b.extend_from_slice(b"]}");
    Ok(String::from_utf8(b).expect("JSON is UTF-8"))
}

/// What the control queryable accepts. Nothing else: it cannot load, read or write anything.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    Pause,
    Resume,
    Step(u64),
    Stats,
    List,
}

const KNOWN: &str = "known: pause, resume, step N (1 to 1000000, while paused), stats, list";

/// A command from the query's payload, as text (`step 10`) or JSON (`{"cmd":"step","n":10}`),
/// or from its selector parameters (`?cmd=step;n=10`).
fn parse_command(q: &Query) -> Result<Command, String> {
    let text = match q.payload() {
        Some(p) => String::from_utf8(p.to_bytes().into_owned())
            .map_err(|_| format!("the command is not UTF-8 text; {KNOWN}"))?,
        None => {
            let params = q.parameters();
            match (params.get("cmd"), params.get("n")) {
                (Some(c), Some(n)) => format!("{c} {n}"),
                (Some(c), None) => c.to_string(),
                _ => String::new(),
            }
        }
    };
    parse_command_text(&text)
}

/// Longest control command read; anything longer is refused without being echoed.
const MAX_COMMAND: usize = 4096;

fn parse_command_text(text: &str) -> Result<Command, String> {
    let text = text.trim();
    if text.len() > MAX_COMMAND {
        return Err(format!(
            "command too long ({} bytes, at most {MAX_COMMAND}); {KNOWN}",
            text.len()
        ));
    }
    let clip = |s: &str| ssx_sdk::text::clip(s, 64);
    let (cmd, n) = if text.starts_with('{') {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct J {
            cmd: String,
            #[serde(default)]
            n: Option<u64>,
        }
        let j: J = serde_json::from_str(text)
            .map_err(|e| format!("invalid command JSON ({e}); {KNOWN}"))?;
        (j.cmd, j.n.map(|n| n.to_string()))
    } else {
        let mut words = text.split_whitespace();
        let cmd = words.next().unwrap_or("").to_string();
        let n = words.next().map(str::to_string);
        if words.next().is_some() {
            return Err(format!("too many words in '{}'; {KNOWN}", clip(text)));
        }
        (cmd, n)
    };
    let no_arg = |c: Command| match &n {
        None => Ok(c),
        Some(_) => Err(format!("'{}' takes no argument; {KNOWN}", clip(&cmd))),
    };
    match cmd.as_str() {
        "pause" => no_arg(Command::Pause),
        "resume" => no_arg(Command::Resume),
        "stats" => no_arg(Command::Stats),
        "list" => no_arg(Command::List),
        "step" => match n.as_deref().map(str::parse::<u64>) {
            Some(Ok(n)) if (1..=1_000_000).contains(&n) => Ok(Command::Step(n)),
            _ => Err(format!("step needs a count from 1 to 1000000; {KNOWN}")),
        },
        "" => Err(format!("empty command; {KNOWN}")),
        other => Err(format!("unknown command '{}'; {KNOWN}", clip(other))),
    }
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

    #[test]
    fn the_control_language_is_small_and_closed() {
        assert_eq!(parse_command_text("pause"), Ok(Command::Pause));
        assert_eq!(parse_command_text(" step 10 "), Ok(Command::Step(10)));
        assert_eq!(
            parse_command_text(r#"{"cmd":"step","n":3}"#),
            Ok(Command::Step(3))
        );
        assert_eq!(parse_command_text("list"), Ok(Command::List));
        assert_eq!(
            parse_command_text("load /tmp/evil.so"),
            Err(format!("unknown command 'load'; {KNOWN}"))
        );
        assert_eq!(
            parse_command_text("step 0"),
            Err(format!("step needs a count from 1 to 1000000; {KNOWN}"))
        );
        assert_eq!(
            parse_command_text("pause now"),
            Err(format!("'pause' takes no argument; {KNOWN}"))
        );
        assert!(
            parse_command_text(r#"{"cmd":"pause","file":"/etc/passwd"}"#)
                .unwrap_err()
                .starts_with("invalid command JSON (unknown field `file`")
        );
        // Long or hostile commands are never echoed whole or raw.
        let long = "x".repeat(1 << 20);
        assert_eq!(
            parse_command_text(&long),
            Err(format!(
                "command too long (1048576 bytes, at most 4096); {KNOWN}"
            ))
        );
        assert_eq!(
            parse_command_text(&format!("\u{1b}[2J{}", "y".repeat(100))),
            Err(format!(
                "unknown command '\\u{{1b}}[2J{}... (104 bytes)'; {KNOWN}",
                "y".repeat(60)
            ))
        );
    }
}
