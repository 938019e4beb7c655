//! The registry of engines and plugins by name, the factories it holds, what an instance is
//! told when it is created, and reading a descriptor.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::engine::{EngineConfig, PhysicEngine};

use super::{Driver, Sensor, SimulationExtension};

/// What a plugin is told when it is created.
#[derive(Clone, Debug)]
pub struct PluginInit {
    /// Its artifact's name.
    pub artifact: String,
    /// Its artifact's index in the scene.
    pub artifact_index: u32,
    /// A seed for repeatable noise, distinct per instance, derived from the scene seed.
    pub seed: u64,
    /// The timestep (s).
    pub timestep: f64,
    /// How many bodies its artifact has (0 for an extension).
    pub body_count: u32,
    /// How many joints its artifact has (0 for an extension).
    pub joint_count: u32,
}

/// Creates a driver from its JSON descriptor.
pub type DriverFactory =
    Arc<dyn Fn(&serde_json::Value, &PluginInit) -> Result<Box<dyn Driver>, String> + Send + Sync>;

/// Creates a sensor from its JSON descriptor.
pub type SensorFactory =
    Arc<dyn Fn(&serde_json::Value, &PluginInit) -> Result<Box<dyn Sensor>, String> + Send + Sync>;

/// Creates an extension from its JSON descriptor (and its instance name).
pub type ExtensionFactory =
    Arc<dyn Fn(&serde_json::Value) -> Result<Box<dyn SimulationExtension>, String> + Send + Sync>;

/// Creates a physics engine.
pub type EngineFactory = Arc<dyn Fn(&EngineConfig) -> Box<dyn PhysicEngine> + Send + Sync>;

/// Everything that can be created by name: engines, drivers, sensors, extensions.
///
/// A clone shares the tables until one of the two adds an entry (each world of a batch holds
/// one, and the worlds' registries differ only in their bus).
#[derive(Clone, Default)]
pub struct PluginRegistry {
    engines: Arc<BTreeMap<String, EngineFactory>>,
    drivers: Arc<BTreeMap<String, DriverFactory>>,
    sensors: Arc<BTreeMap<String, SensorFactory>>,
    extensions: Arc<BTreeMap<String, ExtensionFactory>>,
}

impl std::fmt::Debug for PluginRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginRegistry")
            .field("engines", &self.engines.keys().collect::<Vec<_>>())
            .field("drivers", &self.drivers.keys().collect::<Vec<_>>())
            .field("sensors", &self.sensors.keys().collect::<Vec<_>>())
            .field("extensions", &self.extensions.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The kinds of things a registry holds, for messages and lookups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginKind {
    /// A physics engine.
    Engine,
    /// A driver.
    Driver,
    /// A sensor.
    Sensor,
    /// An extension.
    Extension,
}

impl PluginKind {
    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            PluginKind::Engine => "engine",
            PluginKind::Driver => "driver",
            PluginKind::Sensor => "sensor",
            PluginKind::Extension => "extension",
        }
    }
}

impl PluginRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }
    /// Registers an engine.
    pub fn add_engine(
        &mut self,
        name: &str,
        f: impl Fn(&EngineConfig) -> Box<dyn PhysicEngine> + Send + Sync + 'static,
    ) {
        Arc::make_mut(&mut self.engines).insert(name.into(), Arc::new(f));
    }
    /// Registers a driver.
    pub fn add_driver(
        &mut self,
        name: &str,
        f: impl Fn(&serde_json::Value, &PluginInit) -> Result<Box<dyn Driver>, String>
        + Send
        + Sync
        + 'static,
    ) {
        Arc::make_mut(&mut self.drivers).insert(name.into(), Arc::new(f));
    }
    /// Registers a sensor.
    pub fn add_sensor(
        &mut self,
        name: &str,
        f: impl Fn(&serde_json::Value, &PluginInit) -> Result<Box<dyn Sensor>, String>
        + Send
        + Sync
        + 'static,
    ) {
        Arc::make_mut(&mut self.sensors).insert(name.into(), Arc::new(f));
    }
    /// Registers an extension.
    pub fn add_extension(
        &mut self,
        name: &str,
        f: impl Fn(&serde_json::Value) -> Result<Box<dyn SimulationExtension>, String>
        + Send
        + Sync
        + 'static,
    ) {
        Arc::make_mut(&mut self.extensions).insert(name.into(), Arc::new(f));
    }
    /// Whether a name is registered for a kind.
    pub fn has(&self, kind: PluginKind, name: &str) -> bool {
        match kind {
            PluginKind::Engine => self.engines.contains_key(name),
            PluginKind::Driver => self.drivers.contains_key(name),
            PluginKind::Sensor => self.sensors.contains_key(name),
            PluginKind::Extension => self.extensions.contains_key(name),
        }
    }
    /// The names registered for a kind, sorted.
    pub fn names(&self, kind: PluginKind) -> Vec<&str> {
        match kind {
            PluginKind::Engine => self.engines.keys().map(String::as_str).collect(),
            PluginKind::Driver => self.drivers.keys().map(String::as_str).collect(),
            PluginKind::Sensor => self.sensors.keys().map(String::as_str).collect(),
            PluginKind::Extension => self.extensions.keys().map(String::as_str).collect(),
        }
    }
    /// A new engine by registered name, or `None` if there is no such engine.
    pub fn create_engine(
        &self,
        name: &str,
        config: &EngineConfig,
    ) -> Option<Box<dyn PhysicEngine>> {
        self.engines.get(name).map(|f| f(config))
    }
    pub(crate) fn engine(&self, name: &str) -> Option<&EngineFactory> {
        self.engines.get(name)
    }
    pub(crate) fn driver(&self, name: &str) -> Option<&DriverFactory> {
        self.drivers.get(name)
    }
    pub(crate) fn sensor(&self, name: &str) -> Option<&SensorFactory> {
        self.sensors.get(name)
    }
    pub(crate) fn extension(&self, name: &str) -> Option<&ExtensionFactory> {
        self.extensions.get(name)
    }
}

/// Parses a descriptor into `T`, with the JSON path of the first problem in the message.
pub fn parse_descriptor<T: serde::de::DeserializeOwned>(
    descriptor: &serde_json::Value,
) -> Result<T, String> {
    serde_path_to_error::deserialize(descriptor).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            format!("invalid descriptor: {}", e.inner())
        } else {
            format!("invalid descriptor at {path}: {}", e.inner())
        }
    })
}
