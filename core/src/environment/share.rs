//! What the worlds of a batch hold once between them: the artifacts they were built from, the
//! catalog and what the engine offers (the kinematic engine's static bodies), wherever a world's
//! equal another's (issue 60's small worlds: the walls of a 4-robot world were most of its
//! 100 KiB).

use std::any::Any;
use std::sync::Arc;

use super::Environment;
use super::held::Held;
use crate::spec::ArtifactSpec;
use crate::world::Catalog;

/// A world's artifacts, catalog and engine's part, for others to share
/// ([`Environment::commons`]). Sent to the threads that build a batch's other worlds.
#[derive(Clone, Debug)]
pub struct Commons {
    specs: Arc<[Arc<ArtifactSpec>]>,
    catalog: Arc<Catalog>,
    engine: Option<Arc<dyn Any + Send + Sync>>,
}

/// What a world holds as another's own copies ([`Environment::shared_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shared {
    /// How many of its artifacts.
    pub artifacts: usize,
    /// How many more of its artifacts, but for where their bodies stand (their poses are the
    /// world's own).
    pub placed: usize,
    /// Whether its catalog.
    pub catalog: bool,
    /// Whether its engine's part ([`crate::PhysicEngine::commons`]).
    pub engine: bool,
}

impl Environment {
    /// This world's artifacts and catalog, for [`Environment::share`].
    pub fn commons(&self) -> Commons {
        Commons {
            specs: Arc::clone(self.specs.base()),
            catalog: Arc::clone(&self.catalog),
            engine: self.engine.commons(),
        }
    }

    /// Holds `like`'s copy of every artifact equal to this world's own (the same body, visuals
    /// and plugins), and of every one equal but for its bodies' poses with those poses beside
    /// it (a robot a seed placed), of the catalog if it is equal (the same artifacts, names and
    /// bodies; poses are not in it), and of the engine's part if equal (the kinematic engine's
    /// walls), in place of its own. What differs stays the world's own, so the world steps as
    /// before; a reset keeps the sharing (it keeps what it finds alike).
    pub fn share(&mut self, like: &Commons) {
        // Taken out first: once the old holding is dropped, a spec no other world holds is
        // this one's alone, for `share_artifacts` to change in place.
        let mine = std::mem::take(&mut self.specs).specs();
        self.specs = Held::against(mine, &like.specs);
        if !Arc::ptr_eq(&self.catalog, &like.catalog) && *self.catalog == *like.catalog {
            self.catalog = Arc::clone(&like.catalog);
        }
        if let Some(part) = &like.engine {
            self.engine.share(part);
        }
    }

    /// What this world holds as `like`'s own copies (the same memory, not only equal values):
    /// what it shares with the world `like` came from.
    pub fn shared_with(&self, like: &Commons) -> Shared {
        let (artifacts, placed) = self.specs.shared_with(&like.specs);
        let engine = match (self.engine.commons(), &like.engine) {
            (Some(mine), Some(theirs)) => Arc::ptr_eq(&mine, theirs),
            _ => false,
        };
        Shared {
            artifacts,
            placed,
            catalog: Arc::ptr_eq(&self.catalog, &like.catalog),
            engine,
        }
    }
}
