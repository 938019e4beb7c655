//! Poses as plugins see them (position and w-x-y-z quaternion), boxes in a body's frame, and
//! where a held body is.

use crate::BodyState;
use crate::geometry;

/// A box in a body's own frame: least and greatest corner (m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// Least corner.
    pub min: [f64; 3],
    /// Greatest corner.
    pub max: [f64; 3],
}

/// A pose: position (m) and orientation (unit quaternion, w x y z), as body states give them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Position.
    pub position: [f64; 3],
    /// Orientation, w x y z.
    pub orientation: [f64; 4],
}

impl Default for Pose {
    fn default() -> Self {
        Pose {
            position: [0.0; 3],
            orientation: [1.0, 0.0, 0.0, 0.0],
        }
    }
}

impl Pose {
    /// A body's pose from its state.
    pub fn of(state: &BodyState) -> Pose {
        Pose {
            position: state.position,
            orientation: state.orientation,
        }
    }
    /// `self · other`: `other` (given in this pose's frame) in the frame this pose is given in.
    pub fn compose(&self, other: &Pose) -> Pose {
        let p = geometry::rotate(self.orientation, other.position);
        Pose {
            position: [0, 1, 2].map(|i| self.position[i] + p[i]),
            orientation: geometry::quat_mul(self.orientation, other.orientation),
        }
    }
    /// The inverse pose.
    pub fn inverse(&self) -> Pose {
        let q = geometry::quat_conj(self.orientation);
        let p = geometry::rotate(q, self.position);
        Pose {
            position: p.map(|x| -x),
            orientation: q,
        }
    }
    /// A point given in this pose's frame, in the frame the pose is given in.
    pub fn transform(&self, point: [f64; 3]) -> [f64; 3] {
        self.compose(&Pose {
            position: point,
            ..Pose::default()
        })
        .position
    }
}

/// Where a held body is: which artifact's body holds it, and its pose in that body's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Held {
    /// The carrier's artifact.
    pub artifact: u32,
    /// The carrier's body index within its artifact.
    pub body: u32,
    /// The held body's pose in the carrier's frame.
    pub pose: Pose,
}
