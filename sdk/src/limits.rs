//! Limits for descriptor values that every built-in plugin shares (docs/plugins.md): beyond
//! them a value is not a physical setting but an overflow waiting to happen at step 1.

/// A coordinate or a height (m).
pub const COORDINATE: f64 = 1e5;
/// A distance, range or size (m).
pub const DISTANCE: f64 = 1e4;
/// A speed (m/s or rad/s), an acceleration or a gain.
pub const RATE: f64 = 1e6;
/// Rays of one range sensor.
pub const RAYS: u32 = 4096;
/// Steps of latency a sensor may buffer.
pub const LATENCY: u32 = 10_000;
/// A sensor's rate divider.
pub const DIVIDER: u32 = 1_000_000;
