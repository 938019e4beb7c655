//! The artifacts a world keeps for its resets and swaps. In a batch, a robot that a seed places
//! is another world's robot but for where its bodies stand: the world keeps the other's spec
//! and its own bodies' poses, not a copy of the spec (issue 60: the four robots of a 4-robot
//! world were 2 KiB of its heap).

use std::sync::Arc;

use crate::math::Pose;
use crate::spec::{ArtifactSpec, share_artifacts};

/// An artifact as a world holds it.
#[derive(Clone, Debug)]
pub(super) enum Held {
    /// Its spec: its own, or another world's equal one.
    Whole(Arc<ArtifactSpec>),
    /// Another world's spec, equal to this world's but for its bodies' world poses, and those
    /// poses in body order.
    Placed {
        like: Arc<ArtifactSpec>,
        poses: Box<[Pose]>,
    },
}

impl Held {
    /// The spec it stands for (made anew when placed: at a reset only).
    pub(super) fn spec(&self) -> Arc<ArtifactSpec> {
        match self {
            Held::Whole(spec) => Arc::clone(spec),
            Held::Placed { like, poses } => {
                let mut spec = ArtifactSpec::clone(like);
                for ((_, body), pose) in spec.bodies.iter_mut().zip(poses) {
                    body.pose = *pose;
                }
                Arc::new(spec)
            }
        }
    }

    /// The spec it stands for, its own `Arc` when whole (so that a spec no one else holds
    /// stays unshared, for `share_artifacts` to change).
    pub(super) fn into_spec(self) -> Arc<ArtifactSpec> {
        match self {
            Held::Whole(spec) => spec,
            placed => placed.spec(),
        }
    }

    /// The spec as held: all of it but the bodies' poses is the artifact's (its name, plugins,
    /// shapes, visuals and body count).
    pub(super) fn like(&self) -> &Arc<ArtifactSpec> {
        match self {
            Held::Whole(spec) | Held::Placed { like: spec, .. } => spec,
        }
    }

    /// `specs` held as `like`'s where equal (the same memory), placed as `like`'s where equal
    /// but for their bodies' poses, else as their own (their plugin descriptors still shared
    /// where equal).
    pub(super) fn all(mut specs: Vec<Arc<ArtifactSpec>>, like: &[Arc<ArtifactSpec>]) -> Vec<Held> {
        share_artifacts(&mut specs, like);
        let mut held: Vec<Held> = Vec::with_capacity(specs.len());
        for (k, spec) in specs.into_iter().enumerate() {
            held.push(match like.get(k) {
                Some(theirs) if !Arc::ptr_eq(&spec, theirs) && placed_alike(&spec, theirs) => {
                    Held::Placed {
                        like: Arc::clone(theirs),
                        poses: spec.bodies.iter().map(|(_, b)| b.pose).collect(),
                    }
                }
                _ => Held::Whole(spec),
            });
        }
        held
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
        && (a.bodies.iter().zip(&b.bodies)).all(|((na, ba), (nb, bb))| {
            let mut moved = ba.clone();
            moved.pose = bb.pose;
            na == nb && moved == *bb
        })
}
