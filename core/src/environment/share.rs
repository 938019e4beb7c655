//! What the worlds of a batch hold once between them: the artifacts they were built from and
//! the catalog, wherever a world's equal another's (issue 60's small worlds: the walls of a
//! 4-robot world were most of its 100 KiB).

use std::sync::Arc;

use super::Environment;
use crate::spec::{ArtifactSpec, share_artifacts};
use crate::world::Catalog;

/// A world's artifacts and catalog, for others to share ([`Environment::commons`]). Sent to the
/// threads that build a batch's other worlds.
#[derive(Clone, Debug)]
pub struct Commons {
    specs: Vec<Arc<ArtifactSpec>>,
    catalog: Arc<Catalog>,
}

impl Environment {
    /// This world's artifacts and catalog, for [`Environment::share`].
    pub fn commons(&self) -> Commons {
        Commons {
            specs: self.specs.clone(),
            catalog: Arc::clone(&self.catalog),
        }
    }

    /// Holds `like`'s copy of every artifact equal to this world's own (the same body, visuals
    /// and plugins), and of the catalog if it is equal (the same artifacts, names and bodies;
    /// poses are not in it), in place of its own. What differs stays the world's own, so the
    /// world steps as before; a reset keeps the sharing (it keeps what it finds equal).
    pub fn share(&mut self, like: &Commons) {
        share_artifacts(&mut self.specs, &like.specs);
        if !Arc::ptr_eq(&self.catalog, &like.catalog) && *self.catalog == *like.catalog {
            self.catalog = Arc::clone(&like.catalog);
        }
    }

    /// How many of its artifacts, and whether its catalog, this world holds as `like`'s own
    /// copies (the same memory, not only equal values): what it shares with the world `like`
    /// came from.
    pub fn shared_with(&self, like: &Commons) -> (usize, bool) {
        let artifacts = (self.specs.iter().zip(&like.specs))
            .filter(|(a, b)| Arc::ptr_eq(a, b))
            .count();
        (artifacts, Arc::ptr_eq(&self.catalog, &like.catalog))
    }
}
