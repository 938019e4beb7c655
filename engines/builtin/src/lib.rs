//! The physics engines ssxd has built in, registered in one place for the daemon, the tests and
//! the benchmarks.
#![warn(missing_docs)]

/// Registers every built-in engine: `rapier` (the default, [`ssx_core::DEFAULT_ENGINE`]),
/// `kinematic` and `planar`.
pub fn register(registry: &mut ssx_core::PluginRegistry) {
    ssx_engine_rapier::register(registry);
    ssx_engine_kinematic::register(registry);
    ssx_engine_planar::register(registry);
}
