//! A ROS 2 node inside the Zenoh extension, speaking rmw_zenoh's layout on the extension's own
//! session (`ssx_ros2` has the wire format): ROS 2 nodes with `RMW_IMPLEMENTATION=rmw_zenoh_cpp`
//! see it on their graph and use its topics and services with no bridge process.
//!
//! Why inside the Zenoh extension rather than a library of its own: one session is one
//! listening port (7447, where ROS 2 nodes look for their router) and one router; and the node
//! shares what the extension already has: the publisher thread and its bounded queue (so a
//! service's answer goes out after that step's messages), the drivers' command mailboxes (so
//! `cmd_vel` gets the same limits and timeout as Zenoh commands), and the control commands.
//!
//! Threads. Created with the extension: the node's token, `/clock`, `/tf` and the node's
//! services. On the first step (the stepping thread, once): the robots' topics, `/tf_static`
//! and `/map`. Every step the stepping thread copies plain numbers (time, states, readings) into
//! the extension's reused buffers; the publisher thread turns them into messages, CDR and
//! attachments ([`out::RosOut`]). Inbound `cmd_vel`, `step_n` and service calls are checked on
//! Zenoh's threads ([`input`]); refusals are counted and warned of at most once a second.

pub mod call;
pub mod config;
pub mod input;
pub mod out;
mod plan;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam::queue::ArrayQueue;
use ssx_ros2::graph::{Kind, Node, Qos, data_key, gid, qualify};
use ssx_ros2::msgs::*;
use ssx_ros2::types::{TypeDef, type_hash};
use zenoh::Wait;
use zenoh::qos::{CongestionControl, Reliability};
use zenoh_ext::{AdvancedPublisherBuilderExt, CacheConfig, MissDetectionConfig};

pub use call::Call;
pub use config::Ros2Spec;
pub use out::RosOut;
use out::{Sink, TopicOut, What};
pub use plan::Plan;

use crate::mailbox::RateLimit;

/// A declaration the publisher thread makes: a topic's token and publisher (the topic it
/// returns), or a subscription's.
pub type Declaration =
    Box<dyn FnOnce(&RosShared) -> Result<Option<(u32, TopicOut)>, String> + Send>;

/// What the node's threads share.
pub struct RosShared {
    /// The block from the descriptor.
    pub spec: Ros2Spec,
    node: Node,
    session: zenoh::Session,
    next_entity: AtomicU32,
    next_topic: AtomicU32,
    /// Declarations for the publisher thread to make (topics and subscriptions of the first
    /// step).
    pending: Mutex<Vec<Declaration>>,
    tokens: Mutex<Vec<zenoh::liveliness::LivelinessToken>>,
    hashes: Mutex<std::collections::HashMap<&'static str, String>>,
    subscribers: Mutex<Vec<zenoh::pubsub::Subscriber<()>>>,
    queryables: Mutex<Vec<zenoh::query::Queryable<()>>>,
    /// Messages put.
    pub published: AtomicU64,
    /// Inbound messages and calls refused: not CDR, too large, another type.
    pub refused: AtomicU64,
    /// `cmd_vel` messages no driver takes (the robot's driver takes no velocity commands, or
    /// has not subscribed yet).
    pub unrouted: AtomicU64,
    refused_warn: RateLimit,
    unrouted_warn: RateLimit,
    /// Warnings for the host's log, drained by the stepping thread.
    pub warnings: ArrayQueue<String>,
}

impl RosShared {
    /// The node on `session` (its token declared now).
    pub fn new(spec: Ros2Spec, session: &zenoh::Session) -> Result<Arc<RosShared>, String> {
        let node = Node {
            domain: spec.domain_id,
            zid: session.zid().to_string(),
            id: 0,
            namespace: spec.namespace.clone(),
            name: spec.node.clone(),
        };
        let shared = Arc::new(RosShared {
            spec,
            node,
            session: session.clone(),
            next_entity: AtomicU32::new(1),
            next_topic: AtomicU32::new(0),
            pending: Mutex::new(Vec::new()),
            tokens: Mutex::new(Vec::new()),
            hashes: Mutex::default(),
            subscribers: Mutex::new(Vec::new()),
            queryables: Mutex::new(Vec::new()),
            published: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            unrouted: AtomicU64::new(0),
            refused_warn: RateLimit::new(Duration::from_secs(1)),
            unrouted_warn: RateLimit::new(Duration::from_secs(1)),
            warnings: ArrayQueue::new(256),
        });
        shared.token(&shared.node.token())?;
        Ok(shared)
    }

    /// The node's graph identity.
    pub fn node(&self) -> &Node {
        &self.node
    }

    pub(crate) fn token(&self, key: &str) -> Result<(), String> {
        let t = self
            .session
            .liveliness()
            .declare_token(key.to_string())
            .wait()
            .map_err(|e| format!("ros2: cannot declare the liveliness token '{key}': {e}"))?;
        self.tokens.lock().map_err(|_| "ros2: poisoned")?.push(t);
        Ok(())
    }

    /// Names an entity (an id, its token, data key and GID) without declaring anything.
    pub(crate) fn name_entity(
        &self,
        kind: Kind,
        qualified: &str,
        ros_type: &str,
        hash: &str,
        qos: Qos,
    ) -> (String, String, [u8; 16]) {
        let id = self.next_entity.fetch_add(1, Ordering::Relaxed);
        let token = self
            .node
            .entity_token(id, kind, qualified, ros_type, hash, qos);
        let key = data_key(self.node.domain, qualified, ros_type, hash);
        let gid = gid(&token);
        (token, key, gid)
    }

    /// Keeps a subscriber for the node's life, then declares the token that puts it on the graph
    /// (the entity first, as rmw_zenoh: on the graph once it can receive).
    pub(crate) fn keep_subscriber(
        &self,
        subscriber: zenoh::pubsub::Subscriber<()>,
        token: &str,
    ) -> Result<(), String> {
        self.subscribers
            .lock()
            .map_err(|_| "ros2: poisoned")?
            .push(subscriber);
        self.token(token)
    }

    /// As [`RosShared::keep_subscriber`], for a service's queryable.
    pub(crate) fn keep_queryable(
        &self,
        queryable: zenoh::query::Queryable<()>,
        token: &str,
    ) -> Result<(), String> {
        self.queryables
            .lock()
            .map_err(|_| "ros2: poisoned")?
            .push(queryable);
        self.token(token)
    }

    /// A type's RIHS01 hash, computed once per type (a hundred robots' topics share a few).
    pub(crate) fn hash(&self, t: &'static TypeDef) -> String {
        let mut cache = self.hashes.lock().unwrap_or_else(|e| e.into_inner());
        cache.entry(t.name).or_insert_with(|| type_hash(t)).clone()
    }

    /// The fully qualified name of a name in the node's namespace.
    pub fn qualify(&self, name: &str) -> String {
        qualify(&self.node.namespace, name)
    }

    /// A publisher of type `t` on `name` (relative to the namespace, or absolute): its topic id
    /// for [`crate::publisher::Outbound::send_ros`] at once, its token and Zenoh publisher
    /// declared by the publisher thread (declarations talk to the network: the first step of a
    /// hundred robots took 20 ms when the stepping thread made them). Snapshots queued before
    /// then wait for it in order.
    pub fn publisher(&self, name: &str, t: &'static TypeDef, qos: Qos, what: What) -> u32 {
        let qualified = self.qualify(name);
        let (token, key, gid) =
            self.name_entity(Kind::Publisher, &qualified, t.name, &self.hash(t), qos);
        let id = self.next_topic.fetch_add(1, Ordering::Relaxed);
        self.defer(Box::new(move |ros| {
            // As rmw_zenoh: the publisher, then the token that puts it on the graph.
            let sink = ros.sink(&key, qos)?;
            ros.token(&token)?;
            Ok(Some((id, TopicOut::new(sink, gid, what))))
        }));
        id
    }

    /// A Zenoh publisher for `qos`: an advanced one with a cache for transient local, as
    /// rmw_zenoh makes them.
    fn sink(&self, key: &str, qos: Qos) -> Result<Sink, String> {
        let err = |e: zenoh::Error| format!("ros2: cannot declare a publisher on '{key}': {e}");
        Ok(match qos.durability {
            ssx_ros2::graph::Durability::TransientLocal => Sink::Latched(
                self.session
                    .declare_publisher(key.to_string())
                    .cache(CacheConfig::default().max_samples(qos.depth as usize))
                    .publisher_detection()
                    .sample_miss_detection(
                        MissDetectionConfig::default()
                            .sporadic_heartbeat(Duration::from_millis(500)),
                    )
                    .wait()
                    .map_err(err)?,
            ),
            ssx_ros2::graph::Durability::Volatile => Sink::Plain(
                self.session
                    .declare_publisher(key.to_string())
                    .congestion_control(CongestionControl::Drop)
                    .reliability(match qos.reliability {
                        ssx_ros2::graph::Reliability::Reliable => Reliability::Reliable,
                        ssx_ros2::graph::Reliability::BestEffort => Reliability::BestEffort,
                    })
                    .express(true)
                    .wait()
                    .map_err(err)?,
            ),
        })
    }

    /// Hands a declaration to the publisher thread.
    pub(crate) fn defer(&self, d: Declaration) {
        if let Ok(mut p) = self.pending.lock() {
            p.push(d);
        }
    }

    /// Makes the declarations handed over since the last call (the publisher thread): the
    /// topics they made; failures become warnings.
    fn declare_pending(&self) -> Vec<(u32, TopicOut)> {
        let pending = self
            .pending
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default();
        let mut topics = Vec::new();
        for d in pending {
            match d(self) {
                Ok(Some(t)) => topics.push(t),
                Ok(None) => {}
                Err(e) => self.warn(e),
            }
        }
        topics
    }

    /// Whether declarations wait for the publisher thread.
    fn has_pending(&self) -> bool {
        self.pending.lock().is_ok_and(|p| !p.is_empty())
    }

    fn count_published(&self) {
        self.published.fetch_add(1, Ordering::Relaxed);
    }

    /// Queues a warning for the host's log.
    pub fn warn(&self, text: String) {
        let _ = self.warnings.push(text);
    }

    /// Counts a refused inbound message or call, warning at most once a second.
    pub fn refuse(&self, on: &str, why: &str) {
        let total = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(n) = self.refused_warn.due() {
            self.warn(format!(
                "ros2: refused a message on '{on}': {why} ({n} refused since the last warning; {total} in all)"
            ));
        }
    }

    /// Counts a `cmd_vel` no driver takes, warning at most once a second.
    pub fn unrouted(&self, robot: &str) {
        let total = self.unrouted.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(n) = self.unrouted_warn.due() {
            self.warn(format!(
                "ros2: no driver of '{robot}' takes velocity commands (yet): its driver takes them when it subscribes to 'artifacts/{robot}/cmd' (diffdrive with \"commands\": {{}}), on its first step ({n} dropped since the last warning; {total} in all)"
            ));
        }
    }

    /// Warnings rate limits held back, once their interval has passed.
    pub fn flush_warnings(&self) {
        if let Some(n) = self.refused_warn.flush() {
            self.warn(format!(
                "ros2: refused {n} more message(s) since the last warning ({} in all)",
                self.refused.load(Ordering::Relaxed)
            ));
        }
        if let Some(n) = self.unrouted_warn.flush() {
            self.warn(format!(
                "ros2: dropped {n} more cmd_vel message(s) no driver takes ({} in all)",
                self.unrouted.load(Ordering::Relaxed)
            ));
        }
    }

    /// Undeclares the node's subscriptions, services and tokens (before the session closes).
    pub fn close(&self) {
        if let Ok(mut s) = self.subscribers.lock() {
            for s in s.drain(..) {
                let _ = s.undeclare().wait();
            }
        }
        if let Ok(mut q) = self.queryables.lock() {
            for q in q.drain(..) {
                let _ = q.undeclare().wait();
            }
        }
        if let Ok(mut t) = self.tokens.lock() {
            for t in t.drain(..) {
                let _ = t.undeclare().wait();
            }
        }
    }
}

/// The node's topic that exists from the start: `/clock` (the others need the world).
pub struct Fixed {
    clock: Option<u32>,
}

impl Fixed {
    /// Declares `/clock` (best effort, depth 1, as `rclcpp::ClockQoS`).
    pub fn declare(ros: &RosShared) -> Result<Fixed, String> {
        let clock = (ros.spec.clock_every > 0)
            .then(|| ros.publisher("/clock", &CLOCK, Qos::best_effort(1), What::Clock));
        Ok(Fixed { clock })
    }
}
