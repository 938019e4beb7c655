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
    /// The world it is made in: the same number for every instance of one Environment, a
    /// different one for each Environment of the process (a batch's worlds), so that instances
    /// of one world can share work (the policy driver's one inference for its team); 0 for an
    /// extension.
    pub world: u64,
    /// The directory of the file its descriptor is written in, for the descriptor's relative
    /// paths (a policy's model file); `None` for a spec made in code.
    pub directory: Option<Arc<std::path::Path>>,
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
/// one, and the worlds' registries differ only in their bus, which each adds as an extension
/// of its own: [`PluginRegistry::add_own_extension`]).
#[derive(Clone, Default)]
pub struct PluginRegistry {
    engines: Arc<BTreeMap<String, EngineFactory>>,
    drivers: Arc<BTreeMap<String, DriverFactory>>,
    sensors: Arc<BTreeMap<String, SensorFactory>>,
    extensions: Arc<BTreeMap<String, ExtensionFactory>>,
    /// Extensions of this registry alone, found before the shared table's.
    own_extensions: Vec<(Box<str>, ExtensionFactory)>,
}

impl std::fmt::Debug for PluginRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginRegistry")
            .field("engines", &self.engines.keys().collect::<Vec<_>>())
            .field("drivers", &self.drivers.keys().collect::<Vec<_>>())
            .field("sensors", &self.sensors.keys().collect::<Vec<_>>())
            .field("extensions", &self.names(PluginKind::Extension))
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
    /// Registers an extension in this registry alone, in front of one of the same name in the
    /// shared table: a clone copies a short list, where [`PluginRegistry::add_extension`] on a
    /// clone copies the table (about 1 KiB, which each world of a batch paid for its bus).
    pub fn add_own_extension(&mut self, name: &str, f: ExtensionFactory) {
        match self.own_extensions.iter_mut().find(|(n, _)| **n == *name) {
            Some(entry) => entry.1 = f,
            None => {
                self.own_extensions.reserve_exact(1);
                self.own_extensions.push((name.into(), f));
            }
        }
    }
    /// Whether a name is registered for a kind.
    pub fn has(&self, kind: PluginKind, name: &str) -> bool {
        match kind {
            PluginKind::Engine => self.engines.contains_key(name),
            PluginKind::Driver => self.drivers.contains_key(name),
            PluginKind::Sensor => self.sensors.contains_key(name),
            PluginKind::Extension => self.extension(name).is_some(),
        }
    }
    /// The names registered for a kind, sorted.
    pub fn names(&self, kind: PluginKind) -> Vec<&str> {
        match kind {
            PluginKind::Engine => self.engines.keys().map(String::as_str).collect(),
            PluginKind::Driver => self.drivers.keys().map(String::as_str).collect(),
            PluginKind::Sensor => self.sensors.keys().map(String::as_str).collect(),
            PluginKind::Extension => {
                let mut names: Vec<&str> = (self.extensions.keys().map(String::as_str))
                    .chain(self.own_extensions.iter().map(|(n, _)| &**n))
                    .collect();
                names.sort_unstable();
                names.dedup();
                names
            }
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
        (self.own_extensions.iter())
            .find(|(n, _)| **n == *name)
            .map(|(_, f)| f)
            .or_else(|| self.extensions.get(name))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::ExtensionInit;

    /// An extension that says which factory made it.
    struct Named(&'static str);

    impl SimulationExtension for Named {
        fn init(&mut self, _init: &ExtensionInit) -> Result<(), String> {
            Ok(())
        }
        fn shutdown(&mut self) {}
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    fn made_by(registry: &PluginRegistry, name: &str) -> Option<&'static str> {
        let f = registry.extension(name)?;
        let e = f(&serde_json::Value::Null).ok()?;
        e.as_any().downcast_ref::<Named>().map(|n| n.0)
    }

    /// An extension of a registry's own is found before the shared table's of the same name,
    /// listed once, and not seen by the registry it was cloned from.
    #[test]
    fn an_own_extension_stays_with_its_registry() {
        let mut base = PluginRegistry::new();
        base.add_extension("bus", |_| Ok(Box::new(Named("shared"))));
        base.add_extension("zenoh", |_| Ok(Box::new(Named("zenoh"))));
        let mut world = base.clone();
        world.add_own_extension("bus", Arc::new(|_| Ok(Box::new(Named("first")))));
        world.add_own_extension("bus", Arc::new(|_| Ok(Box::new(Named("world's")))));
        world.add_own_extension("log", Arc::new(|_| Ok(Box::new(Named("log")))));
        assert_eq!(made_by(&world, "bus"), Some("world's"));
        assert_eq!(made_by(&world, "zenoh"), Some("zenoh"));
        assert_eq!(made_by(&base, "bus"), Some("shared"));
        assert!(!base.has(PluginKind::Extension, "log"));
        assert!(world.has(PluginKind::Extension, "log"));
        assert_eq!(world.names(PluginKind::Extension), ["bus", "log", "zenoh"]);
        assert!(Arc::ptr_eq(&world.extensions, &base.extensions));
    }
}
