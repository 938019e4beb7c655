//! Publish and subscribe through a messaging extension (the Zenoh extension, `libssx_zenoh.so`),
//! from a driver or a sensor. The extension offers four services through
//! [`Ctx::call_extension`]; this module wraps them so a plugin neither formats requests nor
//! parses responses:
//!
//! | service     | request                                   | response                         |
//! |-------------|-------------------------------------------|----------------------------------|
//! | `subscribe` | a [`Subscription`] spec as JSON            | `u32` id, little-endian          |
//! | `read`      | `u32` id                                  | nothing (yet): empty; else `u64` sequence number, `u32` value count, 4 bytes padding, the values as `f64`, all little-endian |
//! | `advertise` | `{"key": K, "encoding": "json"\|"binary"}` | `u32` id                         |
//! | `publish`   | `u32` id, then the payload bytes          | empty                            |
//!
//! Inbound messages are decoded and checked (JSON fields, lengths, finite values within the
//! spec's bounds) on the extension's network threads; a driver only copies the newest values out
//! of a mailbox (a seqlock) or the oldest out of a lock-free queue, so a `read` never waits on
//! the network. `subscribe` and `advertise`
//! declare things on the network: call them once (the first step), not every step.

use crate::{Ctx, Error};

/// Most values one message may carry.
pub const MAX_VALUES: usize = 32;

/// A subscription: what the messages on a key must look like.
///
/// `fields` are decoded in order into one vector of values: `{"position": [x, y, z]}` with a
/// field `position` of length 3 gives `[x, y, z]`. A message that is not a JSON object, has a
/// field not in the spec, misses a required field, has the wrong length, or has a value that is
/// not finite or beyond `max` in magnitude is dropped and counted by the extension.
#[derive(Clone, Debug)]
pub struct Subscription<'a> {
    /// The key, relative to the extension's prefix (absolute when it starts with `/`).
    pub key: &'a str,
    /// The fields in order: name, length, largest magnitude, required (else 0 when missing).
    pub fields: &'a [Field<'a>],
    /// 0: a latest-value mailbox (every `read` returns the newest message, the same one again
    /// until a newer one arrives; several readers may share it); n > 0: a queue of n (each
    /// message read once; when full, new messages are dropped and counted).
    pub queue: u32,
    /// The payload is the values as little-endian `f64`s in field order instead of JSON.
    pub binary: bool,
}

/// One field of a [`Subscription`].
#[derive(Clone, Copy, Debug)]
pub struct Field<'a> {
    /// JSON name.
    pub name: &'a str,
    /// Number of values (1: a number, more: an array).
    pub len: usize,
    /// Largest magnitude accepted.
    pub max: f64,
    /// Must be present.
    pub required: bool,
}

impl Subscription<'_> {
    /// The JSON the `subscribe` service takes.
    pub fn to_json(&self) -> String {
        let fields: Vec<String> = self
            .fields
            .iter()
            .map(|f| {
                format!(
                    "{{\"name\":{},\"len\":{},\"max\":{:e},\"required\":{}}}",
                    json_string(f.name),
                    f.len,
                    f.max,
                    f.required
                )
            })
            .collect();
        format!(
            "{{\"key\":{},\"fields\":[{}],\"queue\":{},\"encoding\":\"{}\"}}",
            json_string(self.key),
            fields.join(","),
            self.queue,
            if self.binary { "binary" } else { "json" }
        )
    }
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A message read from a subscription.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Message {
    /// The subscription's count of accepted messages when this one arrived (1 for the first).
    pub seq: u64,
    /// Number of values.
    pub len: usize,
    /// The values, `len` of them.
    pub values: [f64; MAX_VALUES],
}

impl Message {
    /// The values.
    pub fn values(&self) -> &[f64] {
        &self.values[..self.len]
    }
}

/// A messaging extension, found by name.
#[derive(Clone, Copy, Debug)]
pub struct Bus {
    extension: u32,
}

fn to_string(e: Error, what: &str) -> String {
    format!("{what}: {e}")
}

impl Bus {
    /// The extension called `name` in the scene.
    pub fn find(ctx: &Ctx<'_>, name: &str) -> Result<Bus, String> {
        ctx.extension(name)
            .map(|extension| Bus { extension })
            .map_err(|e| format!("no extension '{name}' in the scene ({e})"))
    }

    /// The extension called `name`, or `None` when the scene has none of that name. For a
    /// driver whose outside commands are optional (it also runs on its descriptor): when the
    /// extension is missing it warns, naming `artifact`, that commands have no way in and how to
    /// let them in, and the driver runs on. Call it once, not every step.
    pub fn find_or_warn(ctx: &Ctx<'_>, name: &str, artifact: &str) -> Result<Option<Bus>, String> {
        match ctx.extension(name) {
            Ok(extension) => Ok(Some(Bus { extension })),
            Err(Error(crate::abi::SSX_ERR_NOT_FOUND)) => {
                ctx.log(
                    crate::abi::SSX_LOG_WARN,
                    &format!(
                        "'{artifact}': its driver takes outside commands through the extension \
                         '{name}', which is not in the scene; it runs on its descriptor alone. \
                         To command it from outside, add the extension to the scene's \
                         \"extensions\" (docs/zenoh.md)"
                    ),
                );
                Ok(None)
            }
            Err(e) => Err(format!("no extension '{name}' in the scene ({e})")),
        }
    }

    fn call_id(&self, ctx: &Ctx<'_>, service: &str, request: &[u8]) -> Result<u32, String> {
        let mut id = [0u8; 4];
        let n = ctx
            .call_extension(self.extension, service, request, &mut id)
            .map_err(|e| to_string(e, service))?;
        if n != 4 {
            return Err(format!(
                "{service}: the extension answered {n} bytes, not 4"
            ));
        }
        Ok(u32::from_le_bytes(id))
    }

    /// Subscribes (once; the same spec again returns the same id).
    pub fn subscribe(&self, ctx: &Ctx<'_>, spec: &Subscription<'_>) -> Result<u32, String> {
        self.call_id(ctx, "subscribe", spec.to_json().as_bytes())
    }

    /// The newest message (mailbox: compare [`Message::seq`] with the last one seen to tell a
    /// new message) or the oldest unread one (queue); None when there is none yet (mailbox) or
    /// none left (queue). Never blocks.
    pub fn read(&self, ctx: &Ctx<'_>, subscription: u32) -> Result<Option<Message>, String> {
        let mut buf = [0u8; 16 + 8 * MAX_VALUES];
        let n = ctx
            .call_extension(
                self.extension,
                "read",
                &subscription.to_le_bytes(),
                &mut buf,
            )
            .map_err(|e| to_string(e, "read"))?;
        if n == 0 {
            return Ok(None);
        }
        if n < 16 {
            return Err(format!("read: a {n}-byte answer"));
        }
        let seq = u64::from_le_bytes(buf[..8].try_into().expect("8 bytes"));
        let len = u32::from_le_bytes(buf[8..12].try_into().expect("4 bytes")) as usize;
        if len > MAX_VALUES || n != 16 + 8 * len {
            return Err(format!("read: {len} values in a {n}-byte answer"));
        }
        let mut values = [0.0; MAX_VALUES];
        for (v, b) in values.iter_mut().zip(buf[16..n].chunks_exact(8)) {
            *v = f64::from_le_bytes(b.try_into().expect("8 bytes"));
        }
        Ok(Some(Message { seq, len, values }))
    }

    /// Declares a key to publish on (relative to the prefix, absolute with a leading `/`).
    pub fn advertise(&self, ctx: &Ctx<'_>, key: &str, binary: bool) -> Result<u32, String> {
        let request = format!(
            "{{\"key\":{},\"encoding\":\"{}\"}}",
            json_string(key),
            if binary { "binary" } else { "json" }
        );
        self.call_id(ctx, "advertise", request.as_bytes())
    }

    /// Publishes a payload on an advertised key. The extension copies it and sends it from its
    /// own thread; when its outbound queue is full the message is dropped and counted, never
    /// waited for. `scratch` must hold 4 + `payload.len()` bytes (kept by the caller so a
    /// publish allocates nothing).
    pub fn publish(
        &self,
        ctx: &Ctx<'_>,
        publisher: u32,
        payload: &[u8],
        scratch: &mut Vec<u8>,
    ) -> Result<(), String> {
        scratch.clear();
        scratch.extend_from_slice(&publisher.to_le_bytes());
        scratch.extend_from_slice(payload);
        ctx.call_extension(self.extension, "publish", scratch, &mut [])
            .map(|_| ())
            .map_err(|e| to_string(e, "publish"))
    }
}
