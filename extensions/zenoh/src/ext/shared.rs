//! What the Zenoh threads (callbacks of queries, commands and subscriptions) and the stepping
//! thread share: keys, inboxes, subscriptions, refusals and their counts.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use zenoh::Wait;
use zenoh::bytes::Encoding as ZEncoding;
use zenoh::query::Query;

use super::{MAX_KEYS, Shared};
use crate::codec::SubSpec;
use crate::config::{Encoding, check_key};
use crate::control::{self, Command};
use crate::mailbox::Inbox;
use crate::publisher::{Asker, Counters, JSON, PubKey};

impl Shared {
    pub(super) fn full_key(&self, key: &str) -> Result<String, String> {
        let full = match key.strip_prefix('/') {
            Some(abs) => abs.to_string(),
            None => format!("{}/{key}", self.prefix),
        };
        check_key(&full, "a subscription or publication")?;
        Ok(full)
    }

    /// Hands a payload to the publisher thread; drops it (counted, warned of once a second)
    /// when the queue is full.
    pub(super) fn send(&self, key: u32, write: impl FnOnce(&mut Vec<u8>)) -> bool {
        let sent = self.outbound.send(key, write);
        if !sent && let Some(n) = self.outbound_warn.due() {
            self.warn_outbound(n);
        }
        sent
    }

    pub(super) fn warn_outbound(&self, n: u64) {
        let _ = self.warnings.push(format!(
            "zenoh: the outbound queue is full (the network is behind); dropped {n} message(s) since the last warning ({} in all)",
            self.outbound.dropped.load(Ordering::Relaxed)
        ));
    }

    /// A control query arrives (a Zenoh thread): checked and parsed here, queued for the
    /// stepping thread and the run woken, or refused here with a short answer.
    pub(super) fn on_query(&self, query: Query) {
        let command = control::parse_query(&query);
        self.on_command(Asker::Query(query), command);
    }

    /// A command on `P/control/in` (a Zenoh thread), answered on `P/control/out`.
    pub(super) fn on_message(&self, payload: &zenoh::bytes::ZBytes) {
        self.on_command(Asker::Topic, control::parse_bytes(payload));
    }

    pub(super) fn on_command(&self, asker: Asker, command: Result<Command, String>) {
        match command {
            Ok(command) => match self.queries.push((asker, command)) {
                Ok(()) => self.waker.wake(),
                Err((asker, _)) => self.refuse(asker, "busy: 16 control commands are waiting"),
            },
            Err(why) => self.refuse(asker, &why),
        }
    }

    pub(super) fn refuse(&self, asker: Asker, why: &str) {
        match asker {
            Asker::Query(query) => {
                let key = query.key_expr().clone();
                let _ = query
                    .reply(key, control::error(why))
                    .encoding(ZEncoding::from(JSON))
                    .wait();
                self.count_refusal(why, "control");
            }
            Asker::Topic => {
                // As the answers' own publisher: waits for room rather than being dropped.
                let _ = self
                    .session
                    .put(format!("{}/control/out", self.prefix), control::error(why))
                    .encoding(ZEncoding::from(JSON))
                    .congestion_control(zenoh::qos::CongestionControl::Block)
                    .wait();
                self.count_refusal(why, "control/in");
            }
            Asker::Ros2(call) => {
                crate::ros2::input::reply_now(*call, false, why);
                self.count_refusal(why, "ROS 2 services");
            }
            Asker::Quiet => self.count_refusal(why, "ROS 2 step_n"),
        }
    }

    /// Forgets every message waiting in a mailbox or queue (a reset: nothing sent before it is
    /// read after it); subscriptions stay, for the new drivers.
    pub(super) fn clear_inboxes(&self) {
        let reg = self.registry.lock().map(|r| r.0).unwrap_or(0);
        for inbox in self.inboxes[..reg].iter().filter_map(OnceLock::get) {
            inbox.clear();
        }
    }

    /// The mailbox a driver reads `key` (relative to the prefix) from, once it has subscribed.
    pub(super) fn inbox_of(&self, key: &str) -> Option<Arc<Inbox>> {
        let full = format!("{}/{key}", self.prefix);
        let reg = self.registry.lock().map(|r| r.0).unwrap_or(0);
        self.inboxes[..reg]
            .iter()
            .filter_map(OnceLock::get)
            .find(|b| b.key == full)
            .cloned()
    }

    pub(super) fn count_refusal(&self, why: &str, key: &str) {
        let total = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(n) = self.refused_warn.due() {
            let _ = self.warnings.push(format!(
                "zenoh: refused a control command on '{}/{key}': {} ({n} refused since the last warning; {total} in all)",
                self.prefix,
                ssx_sdk::text::clip(why, 160)
            ));
        }
    }

    /// Warnings that rate limits held back, once their interval has passed: a burst that
    /// stopped is still reported with its count.
    pub(super) fn flush_warnings(&self) {
        if let Some(n) = self.outbound_warn.flush() {
            self.warn_outbound(n);
        }
        if let Some(n) = self.refused_warn.flush() {
            let _ = self.warnings.push(format!(
                "zenoh: refused {n} more control command{} on '{}/control' since the last warning ({} in all)",
                if n == 1 { "" } else { "s" },
                self.prefix,
                self.refused.load(Ordering::Relaxed)
            ));
        }
        let reg = self.registry.lock().map(|r| r.0).unwrap_or(0);
        for inbox in self.inboxes[..reg].iter().filter_map(OnceLock::get) {
            if let Some(w) = inbox.flush_warning() {
                let _ = self.warnings.push(w);
            }
        }
        if let Some(ros) = &self.ros {
            ros.flush_warnings();
        }
    }

    pub(super) fn counters(&self) -> Counters {
        Counters {
            outbound_dropped: self.outbound.dropped.load(Ordering::Relaxed),
            control_refused: self.refused.load(Ordering::Relaxed),
        }
    }

    pub(super) fn advertise(&self, key: &str, encoding: Encoding) -> Result<u32, String> {
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

    pub(super) fn subscribe(self: &Arc<Self>, spec: SubSpec) -> Result<u32, String> {
        let full = self.full_key(&spec.key)?;
        let mut reg = self.registry.lock().map_err(|_| "registry poisoned")?;
        for (i, slot) in self.inboxes[..reg.0].iter().enumerate() {
            if let Some(inbox) = slot.get().filter(|b| b.key == full) {
                if *inbox.spec != spec {
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

    pub(super) fn inbox(&self, id: u32) -> Option<&Arc<Inbox>> {
        self.inboxes.get(id as usize).and_then(OnceLock::get)
    }
}
