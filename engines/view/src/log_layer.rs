//! A `tracing` layer that copies the daemon's warnings and errors (deadline violations among
//! them) to the view's and the recording's `/log` channel.

use std::fmt::Write as _;

use foxglove::schemas::log::Level;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

use crate::hub::Hub;

/// Forwards WARN and ERROR events to a [`Hub`]; costs one atomic load per event while no sink
/// runs.
pub struct LogLayer {
    hub: Hub,
}

impl LogLayer {
    /// A layer feeding `hub`.
    pub fn new(hub: Hub) -> Self {
        Self { hub }
    }
}

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

impl<S: Subscriber> Layer<S> for LogLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        let level = match *meta.level() {
            tracing::Level::ERROR => Level::Error,
            tracing::Level::WARN => Level::Warning,
            _ => return,
        };
        // The view's own dependencies log through tracing too; never feed them back.
        if !self.hub.active() || meta.target().starts_with("foxglove") {
            return;
        }
        let mut m = Message(String::new());
        event.record(&mut m);
        self.hub.log(level, meta.target(), m.0);
    }
}
