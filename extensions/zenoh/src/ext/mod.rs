//! The extension: one Zenoh session per daemon, the bridged streams, the services drivers use
//! (`subscribe`, `read`, `advertise`, `publish`) and the control queryable.
//!
//! Threads: the stepping thread (`after_step`, `control`) and the workers (`call`) never wait on
//! the network. Outbound payloads are written into reused buffers and handed to one publisher
//! thread through a bounded lock-free queue (full: dropped and counted; see [`crate::publisher`]).
//! Inbound messages are decoded on Zenoh's threads into lock-free inboxes. Control queries are
//! size-checked and parsed on Zenoh's threads too (refusals answered there), and wake a paused
//! run. Registration (`subscribe`, `advertise`) takes a mutex and talks to the network; drivers
//! do it once, on their first step.

mod serve;
mod shared;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

use crossbeam::queue::ArrayQueue;
use ssx_sdk::abi::SSX_LOG_WARN;
use ssx_sdk::{Ctx, Init, Waker};
use zenoh::Wait;
use zenoh::bytes::Encoding as ZEncoding;

use crate::codec::{BinOut, JsonOut, SubSpec};
use crate::config::{Descriptor, Encoding, check_key, matching};
use crate::control::{self, Command, Observed};
use crate::mailbox::{Inbox, RateLimit};
use crate::publisher::{
    Asker, JSON, Outbound, PubKey, write_metrics, write_reading, write_state, write_stats,
};

/// Most subscriptions and most advertised keys per daemon.
pub const MAX_KEYS: usize = 1024;

/// What the stepping thread, the workers, Zenoh's threads and the publisher thread share.
struct Shared {
    prefix: String,
    session: zenoh::Session,
    inboxes: Box<[OnceLock<Arc<Inbox>>]>,
    subscribers: Mutex<Vec<zenoh::pubsub::Subscriber<()>>>,
    keys: Box<[OnceLock<PubKey>]>,
    /// Registration of inboxes and keys (never taken by `read` or `publish`).
    registry: Mutex<(usize, usize)>,
    outbound: Outbound,
    /// Warns of outbound drops at most once a second.
    outbound_warn: RateLimit,
    /// Parsed control queries, answered by the stepping thread in order.
    queries: ArrayQueue<(Asker, Command)>,
    /// Control queries refused on Zenoh's threads, and their rate-limited warning.
    refused: AtomicU64,
    refused_warn: RateLimit,
    /// Wakes a paused run when a query arrives.
    waker: Waker,
    /// Warnings from Zenoh's threads, logged through the host by the stepping thread.
    warnings: ArrayQueue<String>,
    /// The ROS 2 node, if the descriptor has one.
    ros: Option<Arc<crate::ros2::RosShared>>,
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
    Paused(Asker),
    Running(Asker),
    /// Until the step count reaches the target; then answered with what it observes (in the
    /// binary layout when asked).
    Step(Asker, u64, Vec<Observed>, bool),
    /// Until the next poll: the run was reset (this extension's `reset` ran) or refused it.
    Reset(Asker),
}

/// The extension instance.
pub struct Zenoh {
    shared: Arc<Shared>,
    desc: Descriptor,
    publisher: Option<(Thread, JoinHandle<()>)>,
    _queryable: zenoh::query::Queryable<()>,
    _commands: zenoh::pubsub::Subscriber<()>,
    bridges: Option<Vec<Bridge>>,
    clock_key: u32,
    stats_key: u32,
    stats_every: u64,
    stats_wall: Instant,
    /// Every extension's figures as JSON, and scratch for their names (reused: no allocation
    /// per publication).
    metrics_json: Vec<u8>,
    metric_name: Vec<u8>,
    awaiting: Option<Awaiting>,
    /// `reload` requests waiting for their swap's outcome (ticket).
    reloads: Vec<(Asker, u64)>,
    /// The seed of the last reset, set by `reset` and taken by the `reset` command's answer.
    reset_seed: Option<u64>,
    /// Something was queued for the publisher since it was last woken.
    pending: bool,
    /// The run was paused when last seen (polls stay cheap while it runs).
    paused: bool,
    /// When held-back warnings were last flushed.
    flushed: Instant,
    /// The ROS 2 node's topic that exists from the start, and its plan from the first step on.
    ros_fixed: Option<crate::ros2::Fixed>,
    ros_plan: Option<crate::ros2::Plan>,
    /// While paused: the step whose `/clock` was last sent again, and when (see
    /// `Zenoh::clock_again`).
    clock_again: (u64, Instant),
    timestep: f64,
}

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
        let exposure = crate::config::exposure_warning(&config);
        let session = zenoh::open(config)
            .wait()
            .map_err(|e| format!("cannot open the zenoh session: {e}"))?;
        // Answers to commands on `P/control/in`. An answer must not be lost when the state
        // streams fill the transmit queue (a lockstep client waits for each one), so it waits for
        // room; it is sent from the publisher thread, never the stepping thread.
        let answers = session
            .declare_publisher(format!("{prefix}/control/out"))
            .encoding(ZEncoding::from(JSON))
            .congestion_control(zenoh::qos::CongestionControl::Block)
            .express(true)
            .wait()
            .map_err(|e| format!("cannot declare '{prefix}/control/out': {e}"))?;
        let ros = desc
            .ros2
            .clone()
            .map(|spec| crate::ros2::RosShared::new(spec, &session))
            .transpose()?;
        let ros_fixed = ros
            .as_ref()
            .map(|r| crate::ros2::Fixed::declare(r))
            .transpose()?;
        let ros_out = ros
            .as_ref()
            .map(|r| crate::ros2::RosOut::new(Arc::clone(r)));
        let shared = Arc::new(Shared {
            ros: ros.clone(),
            prefix: prefix.clone(),
            session: session.clone(),
            inboxes: (0..MAX_KEYS).map(|_| OnceLock::new()).collect(),
            subscribers: Mutex::new(Vec::new()),
            keys: (0..MAX_KEYS).map(|_| OnceLock::new()).collect(),
            registry: Mutex::new((0, 0)),
            outbound: Outbound::new(desc.outbound_queue, answers, ros_out),
            outbound_warn: RateLimit::new(Duration::from_secs(1)),
            queries: ArrayQueue::new(16),
            refused: AtomicU64::new(0),
            refused_warn: RateLimit::new(Duration::from_secs(1)),
            waker: init.waker,
            warnings: ArrayQueue::new(256),
        });
        // Logged with the first step's warnings.
        if let Some(w) = exposure {
            let _ = shared.warnings.push(w);
        }
        let q = Arc::downgrade(&shared);
        let queryable = session
            .declare_queryable(format!("{prefix}/control"))
            .callback(move |query| {
                if let Some(s) = q.upgrade() {
                    s.on_query(query);
                }
            })
            .wait()
            .map_err(|e| format!("cannot declare '{prefix}/control': {e}"))?;
        // Lockstep over plain messages: commands in on one key, answers out on another (a
        // query's own machinery costs a client more than a message each way).
        let m = Arc::downgrade(&shared);
        let commands = session
            .declare_subscriber(format!("{prefix}/control/in"))
            .callback(move |sample| {
                if let Some(s) = m.upgrade() {
                    s.on_message(sample.payload());
                }
            })
            .wait()
            .map_err(|e| format!("cannot subscribe to '{prefix}/control/in': {e}"))?;
        if let Some(ros) = &ros {
            // The node's services and step_n go into the same control queue as Zenoh's.
            let w = Arc::downgrade(&shared);
            let run: crate::ros2::input::OnCommand = Arc::new(move |asker, command| {
                if let Some(s) = w.upgrade() {
                    s.on_command(asker, Ok(command));
                }
            });
            crate::ros2::input::declare_control(ros, run)?;
        }
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
            .spawn(move || worker.outbound.run(&worker.session, &worker.keys))
            .map_err(|e| format!("cannot start the publisher thread: {e}"))?;
        Ok(Zenoh {
            publisher: Some((handle.thread().clone(), handle)),
            shared,
            desc,
            _queryable: queryable,
            _commands: commands,
            bridges: None,
            clock_key,
            stats_key,
            stats_every,
            stats_wall: Instant::now(),
            metrics_json: Vec::new(),
            metric_name: Vec::new(),
            awaiting: None,
            reloads: Vec::new(),
            reset_seed: None,
            pending: false,
            paused: false,
            flushed: Instant::now(),
            clock_again: (u64::MAX, Instant::now()),
            ros_fixed,
            ros_plan: None,
            timestep: init.timestep,
        })
    }

    /// The ROS 2 node's topics and subscriptions, resolved against the world on the first step.
    fn resolve_ros(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let (Some(ros), Some(fixed)) = (&self.shared.ros, &self.ros_fixed) else {
            return Ok(());
        };
        let shared = Arc::downgrade(&self.shared);
        let plan =
            crate::ros2::Plan::resolve(ros, fixed, ctx, self.timestep, |ros, robot, inputs| {
                let route = |key: String| -> crate::ros2::input::Route {
                    let s = shared.clone();
                    Arc::new(move || s.upgrade().and_then(|s| s.inbox_of(&key)))
                };
                crate::ros2::input::declare_cmd_vel(
                    ros,
                    robot,
                    route(format!("artifacts/{robot}/cmd")),
                );
                if inputs.joints {
                    crate::ros2::input::declare_joint_commands(
                        ros,
                        robot,
                        route(format!("artifacts/{robot}/cmd")),
                    );
                }
                if inputs.gripper {
                    crate::ros2::input::declare_gripper(
                        ros,
                        robot,
                        route(format!("artifacts/{robot}/gripper")),
                    );
                }
            })?;
        self.shared.outbound.grow(plan.largest);
        self.ros_plan = Some(plan);
        // The publisher thread makes the declarations now.
        self.pending = true;
        Ok(())
    }

    /// The bridged streams, resolved against the world on the first step.
    fn resolve(&self, ctx: &Ctx<'_>) -> Result<Vec<Bridge>, String> {
        let count = ctx.artifact_count()?;
        let names: Vec<String> = (0..count)
            .map(|a| ctx.artifact_name(a))
            .collect::<Result<_, _>>()?;
        let mut out = Vec::new();
        for (pattern, bridge) in &self.desc.artifacts {
            let matches = matching(&names, pattern);
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
            self.resolve_ros(ctx)?;
        }
        let (time, step) = ctx.time()?;
        // ROS 2 snapshots wait until the publisher thread has grown the buffers for them.
        if let Some(plan) = &mut self.ros_plan
            && self.shared.outbound.grown()
        {
            let out = &self.shared.outbound;
            let mut queued = false;
            plan.after_step(ctx, step, time, |topic, write| {
                queued |= out.send_ros(topic, write);
            })?;
            self.pending |= queued;
        }
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
        // The counters also go to the run's summary and stats JSON (`zenoh.outbound_dropped`).
        let c = self.shared.counters();
        ctx.metric("outbound_dropped", c.outbound_dropped as f64)?;
        ctx.metric("control_refused", c.control_refused as f64)?;
        if let Some(ros) = &self.shared.ros {
            ctx.metric(
                "ros2_published",
                ros.published.load(Ordering::Relaxed) as f64,
            )?;
            ctx.metric("ros2_refused", ros.refused.load(Ordering::Relaxed) as f64)?;
            ctx.metric("ros2_unrouted", ros.unrouted.load(Ordering::Relaxed) as f64)?;
        }
        if self.stats_every > 0 && step % self.stats_every == 0 {
            self.publish_stats(ctx)?;
        }
        self.log_warnings(ctx);
        self.answer_step_when_done(ctx, step, time);
        if self.pending {
            self.send_queued();
        }
        Ok(())
    }

    fn publish_stats(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let s = ctx.stats()?;
        let c = self.shared.counters();
        write_metrics(ctx, &mut self.metrics_json, &mut self.metric_name)?;
        let m = &self.metrics_json;
        self.pending |= self
            .shared
            .send(self.stats_key, |b| write_stats(b, &s, c, m));
        self.stats_wall = Instant::now();
        Ok(())
    }

    /// Into the host's log: warnings from Zenoh's threads, and once a wall second those that
    /// rate limits held back.
    fn log_warnings(&mut self, ctx: &Ctx<'_>) {
        if self.flushed.elapsed() >= Duration::from_secs(1) {
            self.flushed = Instant::now();
            self.shared.flush_warnings();
        }
        while let Some(w) = self.shared.warnings.pop() {
            ctx.log(SSX_LOG_WARN, &w);
        }
        if let Some(ros) = &self.shared.ros {
            while let Some(w) = ros.warnings.pop() {
                ctx.log(SSX_LOG_WARN, &w);
            }
        }
    }

    /// The run starts over (step 0): the session, subscriptions and keys stay; what was
    /// received before is dropped; the `reset` command that asked for it is answered at the
    /// next poll.
    pub fn reset(&mut self, seed: u64) {
        self.shared.clear_inboxes();
        self.reset_seed = Some(seed);
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
                let id = crate::codec::read_request(request)?;
                let inbox = self
                    .shared
                    .inbox(id)
                    .ok_or_else(|| format!("read: no subscription {id}"))?;
                inbox.read_into(response)
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
        self.shared.outbound.stop();
        if let Some((t, handle)) = self.publisher.take() {
            t.unpark();
            let _ = handle.join();
        }
        // Unanswered queries are answered, so clients are not left waiting for a timeout.
        let waiting = std::iter::from_fn(|| self.shared.queries.pop().map(|(q, _)| q));
        let awaiting = self.awaiting.take().map(|a| {
            let (Awaiting::Paused(q)
            | Awaiting::Running(q)
            | Awaiting::Step(q, _, _, _)
            | Awaiting::Reset(q)) = a;
            q
        });
        let unsent: Vec<Asker> = self.shared.outbound.unsent().collect();
        for q in waiting.chain(awaiting).chain(unsent) {
            match q {
                Asker::Query(q) => {
                    let _ = q
                        .reply_err(control::error("the daemon is shutting down"))
                        .wait();
                }
                Asker::Ros2(call) => {
                    crate::ros2::input::reply_now(*call, false, "the daemon is shutting down");
                }
                Asker::Topic | Asker::Quiet => {}
            }
        }
        if let Some(ros) = &self.shared.ros {
            ros.close();
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
