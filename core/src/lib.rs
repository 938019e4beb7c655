//! ssx-core: the Environment and everything it steps.
//!
//! The step (DESIGN.md, SSX sec. 2.1): apply the commands drivers wrote last step, step the
//! [`PhysicEngine`], run every artifact's sensors, run every artifact's driver, then wait for the
//! wall-clock deadline. Sensors and drivers of different artifacts run on a fixed [`WorkerPool`];
//! phases are separated by barriers, so a `fast` run is bit-for-bit repeatable whatever the
//! number of workers.
//!
//! Nothing here names a physics library: engines live behind [`PhysicEngine`].
#![warn(missing_docs)]

pub mod abi;
pub mod clock;
pub mod counters;
pub mod engine;
pub mod environment;
pub mod error;
pub mod files;
pub mod guard;
pub mod help;
pub mod math;
pub mod overlay;
pub mod pacer;
pub mod parallel;
pub mod plugin;
pub mod pool;
pub mod prefetch;
pub mod render;
pub mod spatial;
pub mod spec;
pub mod spelling;
pub mod stats;
pub mod swap;
pub mod tape;
pub mod wake;
pub mod world;

/// Text from outside on its way to a terminal (shared with the plugins, so it lives in the SDK).
pub use ssx_sdk::text;

pub use clock::{Clock, MonotonicClock, VirtualClock};
pub use engine::{
    BodyCommand, BodyId, BodyKind, BodySpec, BodyState, Capabilities, ColliderSpec, Contact,
    DEFAULT_ENGINE, EngineConfig, JointDynamics, JointId, JointKind, JointReading, JointSpec,
    MassSpec, Mesh, MeshFit, PhysicEngine, RayHit, Shape,
};
pub use environment::{
    ArtifactSpec, Commons, Environment, EnvironmentConfig, ExtensionSpec, PluginSpec, Rebuilt,
    SceneSource, SensorSpec, Shared, Status, StepReport,
};
pub use error::{Origin, PluginFault, SsxError};
pub use pacer::{LatePolicy, Mode, PaceOutcome, Pacer};
pub use parallel::{Parallel, Serial};
pub use plugin::{
    CommandBuffer, Driver, DriverContext, ExtensionContext, ExtensionInit, PluginKind,
    PluginRegistry, Reading, ReadingSource, RunRequest, Sensor, SensorContext, SimulationExtension,
};
pub use pool::WorkerPool;
pub use render::{
    NullRenderEngine, Overlay, OverlayKind, OverlaySource, RenderEngine, RenderFrame, RenderNode,
    RenderReset, RenderScene, SwappedBuild,
};
pub use stats::{LiveStats, Stats, StatsSummary, StatsView, write_atomic};
pub use world::{ArtifactId, ArtifactInfo, MapGrid, World};
