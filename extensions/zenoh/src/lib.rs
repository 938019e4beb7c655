//! ssx's Zenoh extension (`libssx_zenoh.so`): the bridge between a running simulation and real
//! devices and robots. See docs/zenoh.md for the key space and the payloads.
//!
//! - extension `zenoh`: one session per daemon; clock, statistics, artifact states and sensor
//!   readings out; the `subscribe`/`read`/`advertise`/`publish` services for drivers
//!   (`ssx_sdk::bus`); the `<prefix>/control` queryable (pause, resume, step N, stats, list).
//! - driver `proxy`: a kinematic body that follows an external pose stream.

pub mod codec;
pub mod config;
pub mod control;
pub mod ext;
pub mod latest;
pub mod mailbox;
pub mod proxy;
pub mod publisher;
pub mod ros2;

use ssx_sdk::{Control, Ctx, Extension, Init};

/// The extension as the SDK sees it.
pub struct ZenohExtension(ext::Zenoh);

impl Extension for ZenohExtension {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        ext::Zenoh::create(descriptor, init).map(ZenohExtension)
    }
    fn after_step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        self.0.after_step(ctx)
    }
    fn call(&self, service: &str, request: &[u8], response: &mut [u8]) -> Result<usize, String> {
        self.0.call(service, request, response)
    }
    fn control(&mut self, ctx: &Ctx<'_>) -> Result<Control, String> {
        self.0.control(ctx)
    }
    fn reset(&mut self, seed: u64) -> Option<Result<(), String>> {
        self.0.reset(seed);
        Some(Ok(()))
    }
}

ssx_sdk::export_plugins!(
    extension "zenoh" "Zenoh bridge: clock, stats, states, readings, driver pub/sub, control queryable" => ZenohExtension,
    driver "proxy" "a kinematic body following an external pose stream (motion capture)" => proxy::Proxy,
);
