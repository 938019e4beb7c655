//! Ground planes kept out of Rapier's world until a body can touch them, and out of the pair
//! tests of every body that cannot reach one this step (see the fields `planes`,
//! `planes_wanted` and `fliers` of [`RapierEngine`]).

use rapier3d::prelude::*;
use ssx_core::engine::BodyId;
use ssx_core::math::Vec3;

use crate::RapierEngine;
use crate::convert::back_v;

/// A body that can touch a plane; see [`RapierEngine::plane_reach`].
pub(crate) struct Flier {
    pub handle: RigidBodyHandle,
    pub radius: f32,
    pub near: bool,
}

/// How far beyond what its velocity and forces can carry it in one step a body must be from
/// every plane to leave the planes out of its pair tests (m). Rapier's contact impulses are not
/// foreseen: a body knocked faster than this towards the ground in a single step meets it one
/// step late, and the solid half-space then pushes it back out.
const PLANE_MARGIN: f32 = 0.5;

/// A ground plane kept out of Rapier's world until a body can touch it.
pub(crate) struct Plane {
    pub body: BodyId,
    pub handle: RigidBodyHandle,
    pub collider: Option<ColliderBuilder>,
    /// A point on it and its normal, world frame.
    pub point: Vec3,
    pub normal: Vec3,
}

/// Collision groups: planes are in group 2; planar bodies (held in height) never touch them.
const PLANES: Group = Group::GROUP_2;

/// The groups of a dynamic body's colliders while it is out of reach of every plane.
pub(crate) fn far_from_planes() -> InteractionGroups {
    InteractionGroups::new(
        Group::GROUP_1,
        Group::ALL.difference(PLANES),
        InteractionTestMode::And,
    )
}

pub(crate) fn groups(planar: bool, plane: bool) -> InteractionGroups {
    let (member, filter) = match (planar, plane) {
        (_, true) => (PLANES, Group::ALL),
        (true, false) => (Group::GROUP_1, Group::ALL.difference(PLANES)),
        (false, false) => (Group::GROUP_1, Group::ALL),
    };
    InteractionGroups::new(member, filter, InteractionTestMode::And)
}

impl RapierEngine {
    /// Puts the ground planes into Rapier's world (once a body that can touch them exists).
    pub(crate) fn planes_into_world(&mut self) {
        if self.planes_in_world {
            return;
        }
        self.planes_in_world = true;
        for p in &mut self.planes {
            if let Some(c) = p.collider.take() {
                self.world
                    .colliders
                    .insert_with_parent(c, p.handle, &mut self.world.bodies);
            }
        }
    }

    /// Leaves the planes out of the pair tests of every body that cannot reach one this step
    /// (and puts them back for those that can), so that a swarm in the air does not pay for a
    /// contact test with the ground per body and step: a plane's unbounded box meets every
    /// body's box in Rapier's broad phase. Reach is what the body's velocity, applied force and
    /// gravity carry its centre of mass in one step, plus the radius holding its colliders,
    /// plus [`PLANE_MARGIN`].
    pub(crate) fn plane_reach(&mut self, dt: f32) {
        if !self.planes_in_world || !self.plane_culling {
            return;
        }
        let gravity = self.world.gravity;
        for f in &mut self.fliers {
            let rb = &self.world.bodies[f.handle];
            let mass = rb.mass();
            let accel = if mass > 0.0 {
                rb.user_force() / mass + gravity
            } else {
                gravity
            };
            let travel = rb.linvel().length() * dt + accel.length() * dt * dt;
            let com = back_v(rb.center_of_mass());
            let reach = f64::from(travel + f.radius + PLANE_MARGIN);
            let near = self
                .planes
                .iter()
                .any(|p| (com - p.point).dot(&p.normal) <= reach);
            if near == f.near {
                continue;
            }
            f.near = near;
            self.plane_flips += 1;
            let groups = if near {
                groups(false, false)
            } else {
                far_from_planes()
            };
            for &c in rb.colliders() {
                self.world.colliders[c].set_collision_groups(groups);
            }
        }
    }
}
