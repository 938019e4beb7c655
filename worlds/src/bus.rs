//! The in-process bus: the Zenoh extension's four services (`ssx_sdk::bus`: subscribe, read,
//! advertise, publish) without a network, so that drivers built to take commands from Zenoh
//! take them from the Python program. Messages are checked by the Zenoh extension's own code
//! (`ssx_zenoh::codec`, `ssx_zenoh::mailbox`): the same fields, limits and messages.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use ssx_core::SimulationExtension;
use ssx_core::plugin::{ExtensionContext, ExtensionInit};
use ssx_sdk::intern::Interned;
use ssx_zenoh::codec::SubSpec;
use ssx_zenoh::mailbox::{Inbox, Message};

/// Most subscriptions and advertised keys, as for the Zenoh extension.
const MAX_KEYS: usize = 4096;

/// Inbox slots come in chunks that double: the first holds [`FIRST`] subscriptions, chunk `c`
/// holds `FIRST << c`, and [`CHUNKS`] of them hold [`MAX_KEYS`]. A world of a batch holds a few
/// subscriptions: 4096 slots made up front took 64 KiB of every world, and 64 fixed chunks of
/// 64 still took 2.5 KiB.
const FIRST: usize = 4;
const CHUNKS: usize = 11;
const _: () = assert!(FIRST * ((1 << CHUNKS) - 1) >= MAX_KEYS);

/// Up to this many subscriptions a key is found by reading the inboxes' own keys; beyond, in a
/// map. A world of a batch holds a few, and the map with its copies of the keys took 0.4 KiB
/// of every world (issue 60).
const SCAN: usize = 16;

/// The chunk that holds subscription `id`, and its place in it.
fn chunk_of(id: usize) -> (usize, usize) {
    // Chunk c starts at FIRST·(2^c − 1): c is the bit length of id / FIRST + 1, less one.
    let c = (usize::BITS - (id / FIRST + 1).leading_zeros() - 1) as usize;
    (c, id - FIRST * ((1 << c) - 1))
}

/// A message for a key that nobody has subscribed to yet (a driver subscribes on its first
/// step): handed over, checked, when the subscription comes.
enum Pending {
    Payload(Vec<u8>),
    Values(Vec<f64>),
}

#[derive(Default)]
struct Keys {
    /// Subscriptions so far (the first this many `inboxes` are set).
    count: usize,
    /// Each subscription's id by its key, once there are more than [`SCAN`].
    by_key: Option<HashMap<String, u32>>,
    pending: HashMap<String, Pending>,
    advertised: Vec<(String, Vec<u8>)>,
}

/// One chunk's inbox slots, made together.
type Chunk = Box<[OnceLock<Arc<Inbox>>]>;

/// The subscriptions' specs in use, by the request that asked for them.
static SPECS: Interned<Box<[u8]>, SubSpec> = Interned::new();

/// What the Sim and the bus extension share.
pub struct BusState {
    /// Read by drivers on the workers without a lock: [`CHUNKS`] chunks, each made on first
    /// use.
    inboxes: [OnceLock<Chunk>; CHUNKS],
    keys: Mutex<Keys>,
}

impl Default for BusState {
    fn default() -> Self {
        Self {
            inboxes: std::array::from_fn(|_| OnceLock::new()),
            keys: Mutex::default(),
        }
    }
}

/// What a command did: reached a subscriber, or waits for one.
pub enum Delivered {
    Now,
    Later,
}

impl BusState {
    fn keys(&self) -> MutexGuard<'_, Keys> {
        // A panic while holding it cannot leave the maps half-changed: keep going.
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands a message to the subscription on `key`; one that is malformed is refused with
    /// the reason. Before anyone subscribed, the newest message for the key waits.
    pub fn put(&self, key: &str, message: Message<'_>) -> Result<Delivered, String> {
        let mut k = self.keys();
        match self.id(&k, key) {
            Some(id) => {
                drop(k);
                self.inbox(id)
                    .expect("set before its key")
                    .put(message)
                    .map(|()| Delivered::Now)
            }
            None => {
                let p = match message {
                    Message::Payload(b) => Pending::Payload(b.to_vec()),
                    Message::Values(v) => Pending::Values(v.to_vec()),
                };
                k.pending.insert(key.to_string(), p);
                Ok(Delivered::Later)
            }
        }
    }

    /// The fields (name, values, largest magnitude) of the subscription on `key`, once a
    /// driver subscribed to it.
    pub fn fields(&self, key: &str) -> Option<Vec<(String, usize, f64)>> {
        let id = self.id(&self.keys(), key)?;
        self.inbox(id).map(|i| {
            i.spec
                .fields
                .iter()
                .map(|f| (f.name.clone(), f.len, f.max))
                .collect()
        })
    }

    /// The inbox of the subscription on `key`, once a driver subscribed to it: a program that
    /// sends on the same keys every step keeps it and skips the lookup.
    pub fn inbox_for(&self, key: &str) -> Option<Arc<Inbox>> {
        let id = self.id(&self.keys(), key)?;
        self.inbox(id).cloned()
    }

    /// The id of the subscription on `key`, if any.
    fn id(&self, k: &Keys, key: &str) -> Option<u32> {
        match &k.by_key {
            Some(map) => map.get(key).copied(),
            None => (0..k.count as u32).find(|&id| self.inbox(id).is_some_and(|i| i.key == key)),
        }
    }

    fn inbox(&self, id: u32) -> Option<&Arc<Inbox>> {
        let (c, at) = chunk_of(id as usize);
        self.inboxes.get(c)?.get()?.get(at)?.get()
    }

    /// The slot of subscription `id`, its chunk made if needed.
    fn slot(&self, id: usize) -> &OnceLock<Arc<Inbox>> {
        let (c, at) = chunk_of(id);
        &self.inboxes[c].get_or_init(|| (0..FIRST << c).map(|_| OnceLock::new()).collect())[at]
    }

    /// Hints the cache to fetch the blocks `level` pointers away from the bus's own fields,
    /// as [`ssx_core::Environment::prefetch`] does for its own: 1, the bus itself (behind its
    /// `Arc`); 2, the inboxes' slots; 3, the inboxes.
    pub fn prefetch(&self, level: usize) {
        let made = self.inboxes.iter().map_while(|c| c.get());
        match level {
            1 => ssx_core::prefetch::value(self),
            2 => made.for_each(|chunk| ssx_core::prefetch::value(&**chunk)),
            3 => {
                for slot in made.flat_map(|chunk| chunk.iter()).map_while(|s| s.get()) {
                    ssx_core::prefetch::value(&**slot);
                }
            }
            _ => {}
        }
    }

    /// The last payload published on `key` by a driver or sensor, if any.
    pub fn published(&self, key: &str) -> Option<Vec<u8>> {
        self.keys()
            .advertised
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, p)| p.clone())
    }

    /// Drops every message held or waiting (a reset); subscriptions stay.
    pub fn clear(&self) {
        let mut k = self.keys();
        for id in 0..k.count {
            if let Some(inbox) = self.inbox(id as u32) {
                inbox.clear();
            }
        }
        k.pending.clear();
        for (_, p) in &mut k.advertised {
            p.clear();
        }
    }

    fn subscribe(&self, spec: Arc<SubSpec>) -> Result<u32, String> {
        let mut k = self.keys();
        let key = spec.key.clone();
        if let Some(id) = self.id(&k, &key) {
            if self.inbox(id).is_some_and(|i| i.spec != spec) {
                return Err(format!(
                    "subscribe '{key}': already subscribed with a different spec"
                ));
            }
            return Ok(id);
        }
        if k.count == MAX_KEYS {
            return Err(format!(
                "subscribe '{key}': more than {MAX_KEYS} subscriptions"
            ));
        }
        let inbox = Arc::new(Inbox::new(key.clone(), spec));
        let id = k.count as u32;
        let _ = self.slot(k.count).set(Arc::clone(&inbox));
        k.count += 1;
        if k.by_key.is_none() && k.count > SCAN {
            let ids = (0..k.count as u32).filter_map(|i| Some((self.inbox(i)?.key.clone(), i)));
            k.by_key = Some(ids.collect());
        } else if let Some(map) = &mut k.by_key {
            map.insert(key.clone(), id);
        }
        if let Some(p) = k.pending.remove(&key) {
            let put = match &p {
                Pending::Payload(b) => inbox.put(Message::Payload(b)),
                Pending::Values(v) => inbox.put(Message::Values(v)),
            };
            if let Err(why) = put {
                tracing::warn!(
                    "dropped a malformed command on '{key}' (sent before its driver subscribed): {why}"
                );
            }
        }
        Ok(id)
    }
}

/// The bus as the Environment's extension (named `zenoh`, where drivers look for it).
pub struct LocalBus(pub Arc<BusState>);

fn write_id(id: u32, response: &mut [u8]) -> Result<usize, String> {
    let out = response
        .get_mut(..4)
        .ok_or("the response needs 4 bytes for the id")?;
    out.copy_from_slice(&id.to_le_bytes());
    Ok(4)
}

impl SimulationExtension for LocalBus {
    fn init(&mut self, _init: &ExtensionInit) -> Result<(), String> {
        Ok(())
    }

    fn after_step(&mut self, _ctx: &ExtensionContext<'_>) -> Result<(), String> {
        Ok(())
    }

    fn call(&self, service: &str, request: &[u8], response: &mut [u8]) -> Result<usize, String> {
        match service {
            "read" => {
                let id = ssx_zenoh::codec::read_request(request)?;
                let inbox = self
                    .0
                    .inbox(id)
                    .ok_or_else(|| format!("read: no subscription {id}"))?;
                inbox.read_into(response)
            }
            "subscribe" => {
                // The worlds of a batch subscribe alike: one spec for each request's text.
                let spec = SPECS.get_or_try(request.into(), |r| SubSpec::parse(r).map(Arc::new))?;
                write_id(self.0.subscribe(spec)?, response)
            }
            "advertise" => {
                #[derive(serde::Deserialize)]
                struct Ad {
                    key: String,
                }
                let ad: Ad = serde_json::from_slice(request)
                    .map_err(|e| format!("advertise: invalid request: {e}"))?;
                let mut k = self.0.keys();
                let id = match k.advertised.iter().position(|(key, _)| *key == ad.key) {
                    Some(i) => i,
                    None if k.advertised.len() == MAX_KEYS => {
                        return Err(format!("advertise '{}': more than {MAX_KEYS} keys", ad.key));
                    }
                    None => {
                        k.advertised.push((ad.key, Vec::new()));
                        k.advertised.len() - 1
                    }
                };
                write_id(id as u32, response)
            }
            "publish" => {
                let (id, payload) = request
                    .split_first_chunk::<4>()
                    .ok_or("publish: the request starts with a 4-byte id")?;
                let id = u32::from_le_bytes(*id) as usize;
                let mut k = self.0.keys();
                let slot = k
                    .advertised
                    .get_mut(id)
                    .ok_or_else(|| format!("publish: no advertised key {id}"))?;
                slot.1.clear();
                slot.1.extend_from_slice(payload);
                Ok(0)
            }
            other => Err(format!(
                "no service '{other}' (known: subscribe, read, advertise, publish)"
            )),
        }
    }

    fn reset(&mut self, _init: &ExtensionInit) -> Option<Result<(), String>> {
        self.0.clear();
        Some(Ok(()))
    }

    fn shutdown(&mut self) {}

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Subscriptions 0..MAX_KEYS fill the chunks in order, each slot once: chunk 0's four
    /// slots, then chunk 1's eight, and so on.
    #[test]
    fn subscriptions_fill_the_doubling_chunks_in_order() {
        let mut expected = (0, 0);
        for id in 0..MAX_KEYS {
            assert_eq!(chunk_of(id), expected, "subscription {id}");
            expected.1 += 1;
            if expected.1 == FIRST << expected.0 {
                expected = (expected.0 + 1, 0);
            }
        }
        assert!(chunk_of(MAX_KEYS - 1).0 < CHUNKS);
        assert_eq!(chunk_of(4), (1, 0));
        assert_eq!(chunk_of(11), (1, 7));
        assert_eq!(chunk_of(12), (2, 0));
    }

    fn spec(key: &str) -> Arc<SubSpec> {
        let request = format!(r#"{{"key":"{key}","fields":[{{"name":"v","max":1000}}]}}"#);
        Arc::new(SubSpec::parse(request.as_bytes()).unwrap())
    }

    /// Keys are found by scanning the inboxes up to [`SCAN`] subscriptions and in a map beyond:
    /// either way each message reaches its own key's inbox, one sent before its subscription
    /// waits for it, and a key subscribed again keeps its id.
    #[test]
    fn every_key_finds_its_inbox_below_and_above_the_scan() {
        let bus = BusState::default();
        let n = 3 * SCAN;
        let key = |i: usize| format!("artifacts/r{i}/cmd");
        assert!(matches!(
            bus.put(&key(n - 1), Message::Values(&[7.0])),
            Ok(Delivered::Later)
        ));
        for i in 0..n {
            assert_eq!(bus.subscribe(spec(&key(i))), Ok(i as u32));
            assert_eq!(
                bus.keys().by_key.is_some(),
                i >= SCAN,
                "after {} subscriptions",
                i + 1
            );
        }
        assert_eq!(bus.subscribe(spec(&key(5))), Ok(5));
        assert_eq!(
            bus.inbox_for(&key(n - 1)).unwrap().take().unwrap().values[0],
            7.0
        );
        for i in 0..n - 1 {
            assert!(matches!(
                bus.put(&key(i), Message::Values(&[i as f64])),
                Ok(Delivered::Now)
            ));
        }
        for i in 0..n - 1 {
            let inbox = bus.inbox_for(&key(i)).unwrap();
            assert_eq!(inbox.key, key(i));
            assert_eq!(inbox.take().unwrap().values[0], i as f64);
        }
        assert!(bus.inbox_for("artifacts/nobody/cmd").is_none());
    }
}
