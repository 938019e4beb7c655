//! The artifacts a world keeps for its resets and swaps. In a batch, a world holds world 0's
//! list of artifacts and, beside it, only where its own differ: a robot that a seed placed is
//! world 0's robot but for where its bodies stand, so the world keeps those poses alone
//! (issue 60: the four robots of a 4-robot world were 2 KiB of its heap, and the list 0.9).

use std::sync::Arc;

use crate::engine::BodySpec;
use crate::math::Pose;
use crate::spec::{ArtifactSpec, share_artifacts};

/// A world's artifacts: a list, perhaps another world's, and where this world's differ from it.
#[derive(Clone, Debug, Default)]
pub(super) struct Held {
    base: Arc<[Arc<ArtifactSpec>]>,
    /// By artifact index, rising: this world's own spec, or its own bodies' world poses (in
    /// body order) for a spec equal to the base's but for them.
    own: Vec<(u32, Differs)>,
}

#[derive(Clone, Debug)]
enum Differs {
    Whole(Arc<ArtifactSpec>),
    Poses(Box<[Pose]>),
}

impl Held {
    /// A world's own list.
    pub(super) fn new(specs: Vec<Arc<ArtifactSpec>>) -> Held {
        Held {
            base: specs.into(),
            own: Vec::new(),
        }
    }

    /// `specs` held against `like` (another world's list): its entries where equal (the same
    /// memory), their poses alone where equal but for their bodies' poses, else their own
    /// (their plugin descriptors still shared where equal). `like` of another length is not
    /// used.
    pub(super) fn against(
        mut specs: Vec<Arc<ArtifactSpec>>,
        like: &Arc<[Arc<ArtifactSpec>]>,
    ) -> Held {
        if specs.len() != like.len() {
            return Held::new(specs);
        }
        share_artifacts(&mut specs, like);
        let mut own = Vec::new();
        for (k, (spec, theirs)) in specs.into_iter().zip(like.iter()).enumerate() {
            if Arc::ptr_eq(&spec, theirs) {
                continue;
            }
            let differs = if placed_alike(&spec, theirs) {
                Differs::Poses(spec.bodies.iter().map(|(_, b)| b.pose).collect())
            } else {
                Differs::Whole(spec)
            };
            own.push((k as u32, differs));
        }
        own.shrink_to_fit();
        Held {
            base: Arc::clone(like),
            own,
        }
    }

    /// The list this world's is held against (for other worlds to be held against).
    pub(super) fn base(&self) -> &Arc<[Arc<ArtifactSpec>]> {
        &self.base
    }

    pub(super) fn len(&self) -> usize {
        self.base.len()
    }

    fn differs(&self, k: usize) -> Option<&Differs> {
        let at = self
            .own
            .binary_search_by_key(&(k as u32), |(i, _)| *i)
            .ok()?;
        Some(&self.own[at].1)
    }

    /// Artifact `k`'s spec as held: all of it but its bodies' poses is the artifact's (its
    /// name, plugins, shapes, visuals and body count).
    pub(super) fn like(&self, k: usize) -> &Arc<ArtifactSpec> {
        match self.differs(k) {
            Some(Differs::Whole(spec)) => spec,
            _ => &self.base[k],
        }
    }

    /// Artifact `k`'s spec (made anew where only its poses are held: at a reset only).
    pub(super) fn spec(&self, k: usize) -> Arc<ArtifactSpec> {
        match self.differs(k) {
            Some(Differs::Whole(spec)) => Arc::clone(spec),
            Some(Differs::Poses(poses)) => {
                let mut spec = ArtifactSpec::clone(&self.base[k]);
                for ((_, body), pose) in spec.bodies.iter_mut().zip(poses) {
                    body.pose = *pose;
                }
                Arc::new(spec)
            }
            None => Arc::clone(&self.base[k]),
        }
    }

    /// Every artifact's spec, in order.
    pub(super) fn specs(&self) -> Vec<Arc<ArtifactSpec>> {
        (0..self.len()).map(|k| self.spec(k)).collect()
    }

    /// How many artifacts are `base`'s (the same memory), and how many are `base`'s but for
    /// their poses.
    pub(super) fn shared_with(&self, base: &Arc<[Arc<ArtifactSpec>]>) -> (usize, usize) {
        if !Arc::ptr_eq(&self.base, base) {
            let same = (self.base.iter().zip(base.iter())).filter(|(a, b)| Arc::ptr_eq(a, b));
            return (same.count(), 0);
        }
        let placed = (self.own.iter())
            .filter(|(_, d)| matches!(d, Differs::Poses(_)))
            .count();
        (self.len() - self.own.len(), placed)
    }
}

/// Whether `a` and `b` are the same artifact but for their bodies' world poses.
fn placed_alike(a: &ArtifactSpec, b: &ArtifactSpec) -> bool {
    a.name == b.name
        && a.bodies.len() == b.bodies.len()
        && a.joints == b.joints
        && a.visuals == b.visuals
        && a.driver == b.driver
        && a.sensors == b.sensors
        && a.model == b.model
        && (a.bodies.iter().zip(&b.bodies)).all(|((na, ba), (nb, bb))| na == nb && alike(ba, bb))
}

/// Whether two bodies are the same but for their poses (every other field named, so that a
/// field added to `BodySpec` must be added here).
fn alike(a: &BodySpec, b: &BodySpec) -> bool {
    let BodySpec {
        kind,
        pose: _,
        mass,
        colliders,
        linear_damping,
        angular_damping,
        planar,
        group,
    } = a;
    *kind == b.kind
        && *mass == b.mass
        && *colliders == b.colliders
        && *linear_damping == b.linear_damping
        && *angular_damping == b.angular_damping
        && *planar == b.planar
        && *group == b.group
}
