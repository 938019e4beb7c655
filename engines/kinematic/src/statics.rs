//! What never moves, kept apart from the movers so that the worlds of a batch hold it once
//! (issue 60's small worlds: the 24 wall sections of a 4-robot world were four fifths of its
//! engine). A world's bodies keep their ids in the order they were added; each id names either
//! a mover (an index into the engine's own lists) or a static body (an index here).
//!
//! Prims are numbered walls first: prim `i` is the static prim `i` below the number of static
//! prims, else the mover prim `i` less that number. The numbers are only kept within a step
//! (the grid is filed again after a body is added), so adding a static body, which shifts the
//! movers' numbers, changes nothing that outlives it.

use ssx_core::engine::{BodyId, BodyKind};
use ssx_core::math::{Pose, Vec3};

use crate::shape::Prim;
use crate::{KinematicEngine, Motion};

/// The static bodies' poses and prims. Equal in two worlds built from the same scene, so that
/// one copy serves both ([`crate::KinematicEngine`]'s `share`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Statics {
    /// Each static body's pose, by its index.
    pub poses: Vec<Pose>,
    /// Every static prim (planes apart), grouped by body.
    pub prims: Vec<Prim>,
}

/// Where a body id's data lies: a mover's index, or [`STATIC`] with a static body's index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot(u32);

/// The mark of a static body's slot.
const STATIC: u32 = 1 << 31;

impl Slot {
    pub fn mover(m: usize) -> Self {
        Slot(m as u32)
    }

    pub fn fixed(k: usize) -> Self {
        Slot(k as u32 | STATIC)
    }

    /// The mover's index, if it is one.
    #[inline]
    pub fn as_mover(self) -> Option<usize> {
        (self.0 & STATIC == 0).then_some(self.0 as usize)
    }

    /// The static body's index, if it is one.
    #[inline]
    pub fn as_static(self) -> Option<usize> {
        (self.0 & STATIC != 0).then_some((self.0 & !STATIC) as usize)
    }
}

impl KinematicEngine {
    /// Prim `i`, walls first (module docs).
    #[inline]
    pub(crate) fn prim(&self, i: u32) -> &Prim {
        let walls = self.statics.prims.len();
        match (i as usize).checked_sub(walls) {
            None => &self.statics.prims[i as usize],
            Some(m) => self.prims.get_ref(m),
        }
    }

    /// Prim `i`, known to be a mover's (as the movers' grid files them).
    #[inline]
    pub(crate) fn mover_prim(&self, i: u32) -> &Prim {
        self.prims.get_ref(i as usize - self.statics.prims.len())
    }

    /// How many prims there are, walls and movers.
    #[inline]
    pub(crate) fn prim_count(&self) -> usize {
        self.statics.prims.len() + self.prims.len()
    }

    /// Calls `f` with every prim and its number, walls first.
    #[inline]
    pub(crate) fn each_prim(&self, mut f: impl FnMut(u32, &Prim)) {
        for (i, p) in self.statics.prims.iter().enumerate() {
            f(i as u32, p);
        }
        let walls = self.statics.prims.len();
        for i in 0..self.prims.len() {
            f((walls + i) as u32, self.prims.get_ref(i));
        }
    }

    /// The mover index of body `id`, if it moves.
    #[inline]
    pub(crate) fn mover(&self, id: u32) -> Option<usize> {
        self.slots.get(id as usize).and_then(|s| s.as_mover())
    }

    /// Body `id`'s kind, if there is such a body.
    pub(crate) fn kind(&self, id: BodyId) -> Option<BodyKind> {
        let slot = self.slots.get(id.index())?;
        Some(
            slot.as_mover()
                .map_or(BodyKind::Static, |m| self.bodies[m].kind),
        )
    }

    /// Body `id`'s motion (a static body's is its pose at rest).
    #[inline]
    pub(crate) fn motion_of(&self, id: u32) -> Motion {
        match self.slots[id as usize].as_mover() {
            Some(m) => self.motion.get(m),
            None => Motion {
                pose: self.statics.poses[self.slots[id as usize].as_static().expect("static")],
                linvel: Vec3::zeros(),
                angvel: Vec3::zeros(),
            },
        }
    }
}
