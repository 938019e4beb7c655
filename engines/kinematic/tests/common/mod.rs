//! What the kinematic engine's test files share: an engine, boxes and robots, states.

#![allow(dead_code)] // each test file uses its part

use ssx_core::math::{Pose, Vec3, pose_from_xyz_rpy};
use ssx_core::{
    BodyKind, BodySpec, BodyState, ColliderSpec, EngineConfig, MassSpec, PhysicEngine, Shape,
};
use ssx_engine_kinematic::KinematicEngine;

pub const DT: f64 = 0.01;

pub fn engine() -> KinematicEngine {
    KinematicEngine::new(&EngineConfig {
        gravity: Vec3::new(0.0, 0.0, -9.81),
        timestep: DT,
    })
}

pub fn boxed(kind: BodyKind, xyz: [f64; 3], yaw: f64, size: [f64; 3], planar: bool) -> BodySpec {
    BodySpec {
        kind,
        pose: pose_from_xyz_rpy(xyz, [0.0, 0.0, yaw]),
        mass: MassSpec::Mass(9.0),
        colliders: vec![ColliderSpec {
            shape: Shape::Box {
                half_extents: Vec3::new(size[0], size[1], size[2]) / 2.0,
            },
            local_pose: Pose::identity(),
            friction: 0.3,
            restitution: 0.0,
        }],
        linear_damping: 0.0,
        angular_damping: 0.0,
        planar,
        group: 0,
    }
}

/// A Pioneer-sized planar robot (0.45 × 0.38 × 0.22 m) with its origin at z = 0.12.
pub fn robot(x: f64, y: f64, yaw: f64) -> BodySpec {
    boxed(
        BodyKind::Dynamic,
        [x, y, 0.12],
        yaw,
        [0.45, 0.38, 0.22],
        true,
    )
}

pub fn states(e: &KinematicEngine, n: usize) -> Vec<BodyState> {
    let mut out = vec![BodyState::default(); n];
    e.read_state(&mut out);
    out
}
