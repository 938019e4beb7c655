//! Carrying (the gripper's attach and release), meshes and joints, on every engine that declares
//! them.

use super::*;

/// A carrier (a planar box, like a ground robot) and a cube resting in front of it.
fn carrier_and_cube(e: &mut dyn PhysicEngine) -> (BodyId, BodyId) {
    e.add_body(&ground()).unwrap();
    let mut robot = body(
        BodyKind::Dynamic,
        [0.0, 0.0, 0.1],
        Shape::Box {
            half_extents: Vec3::new(0.2, 0.2, 0.1),
        },
    );
    robot.planar = true;
    let robot = e.add_body(&robot).unwrap();
    let cube = e
        .add_body(&body(BodyKind::Dynamic, [0.35, 0.0, 0.1], cube(0.1)))
        .unwrap();
    (robot, cube)
}

/// Drives `robot` at `vx` for `steps` steps (a velocity command every step, as the ground
/// driver does).
fn drive(e: &mut dyn PhysicEngine, robot: BodyId, vx: f64, steps: usize) {
    for _ in 0..steps {
        e.apply(&BodyCommand::Velocity {
            body: robot,
            linear: Vec3::new(vx, 0.0, 0.0),
            angular: Vec3::zeros(),
        });
        e.step(DT);
    }
}

#[test]
fn an_attached_body_rides_at_its_offset_is_lifted_and_falls_when_released() {
    for (name, mut e) in engines(Vec3::new(0.0, 0.0, -9.81)) {
        if !e.capabilities().heights {
            continue; // Lifting and stacking need heights; planar.rs carries in the plane.
        }
        assert!(e.capabilities().attach, "{name}");
        let (robot, cube) = carrier_and_cube(&mut *e);
        let n = 4;
        e.step(DT);
        // Gripped where it stands, then lifted 0.3 m, and carried 1 m.
        let at = |z: f64| pose_from_xyz_rpy([0.35, 0.0, z], [0.0; 3]);
        e.attach(cube, robot, at(0.0)).unwrap();
        drive(&mut *e, robot, 0.0, 20);
        e.attach(cube, robot, at(0.3)).unwrap();
        // The engine says what holds the cube and where (in f32 on Rapier).
        let (carrier, held_at) = e.attachment(cube).expect("held");
        assert_eq!(carrier, robot, "{name}");
        assert!(
            (held_at.translation.vector - at(0.3).translation.vector).norm() < 1e-6,
            "{name}: held at {held_at:?}"
        );
        assert_eq!(e.attachment(robot), None, "{name}: the robot is not held");
        drive(&mut *e, robot, 0.5, 200);
        let (r, c) = (state(&*e, robot, n), state(&*e, cube, n));
        let expected = r.pose * at(0.3);
        let off = (c.pose.translation.vector - expected.translation.vector).norm();
        assert!(
            off < 0.02,
            "{name}: the cube is {off} m from where it is held: {c:?}"
        );
        assert!(
            r.pose.translation.vector.x > 0.9,
            "{name}: the robot moved {r:?}"
        );
        // The carrier does not collide with what it holds: the cube at offset 0 overlapped
        // nothing but the robot's reach, and lifting it did not push the robot.
        assert!(
            r.pose.translation.vector.z > 0.09 && r.pose.translation.vector.z < 0.11,
            "{name}"
        );
        // Released 0.4 m up, it falls and rests on the ground.
        e.detach(cube);
        assert_eq!(e.attachment(cube), None, "{name}: released");
        drive(&mut *e, robot, 0.0, 200);
        let c = state(&*e, cube, n);
        assert!(
            (c.pose.translation.vector.z - 0.1).abs() < 0.01 && c.linvel.norm() < 0.01,
            "{name}: the released cube rests on the ground: {c:?}"
        );
        // Detaching again does nothing; attaching to itself or a static body is refused.
        e.detach(cube);
        assert_eq!(
            e.attach(cube, cube, Pose::identity()).unwrap_err(),
            format!("body {} cannot carry itself", cube.0)
        );
        assert_eq!(
            e.attach(BodyId(0), robot, Pose::identity()).unwrap_err(),
            "body 0 is Static: only a dynamic body can be attached"
        );
    }
}

#[test]
fn a_carried_body_is_stacked_on_another_when_released_over_it() {
    for (name, mut e) in engines(Vec3::new(0.0, 0.0, -9.81)) {
        if !e.capabilities().heights {
            continue; // Lifting and stacking need heights; planar.rs carries in the plane.
        }
        let (robot, carried) = carrier_and_cube(&mut *e);
        let lower = e
            .add_body(&body(BodyKind::Dynamic, [1.35, 0.0, 0.15], cube(0.15)))
            .unwrap();
        let n = 5;
        e.step(DT);
        let held = pose_from_xyz_rpy([0.35, 0.0, 0.4], [0.0; 3]);
        e.attach(carried, robot, held).unwrap();
        drive(&mut *e, robot, 0.0, 30);
        // 1 m forward at 0.5 m/s puts the cube over the lower box (top at 0.3 m).
        drive(&mut *e, robot, 0.5, 200);
        drive(&mut *e, robot, 0.0, 50);
        e.detach(carried);
        drive(&mut *e, robot, 0.0, 300);
        let (c, l) = (state(&*e, carried, n), state(&*e, lower, n));
        let top = l.pose.translation.vector.z + 0.15;
        assert!(
            (c.pose.translation.vector.z - (top + 0.1)).abs() < 0.005,
            "{name}: the cube rests on the lower box: {c:?} on {l:?}"
        );
        assert!(
            c.linvel.norm() < 0.01 && l.linvel.norm() < 0.01,
            "{name}: at rest"
        );
    }
}

#[test]
fn a_carried_body_stops_its_carrier_at_a_wall_without_contact_dynamics() {
    for (name, mut e) in engines(Vec3::new(0.0, 0.0, -9.81)) {
        if e.capabilities().contact_dynamics {
            continue; // There the wall pushes back through the joint instead.
        }
        let (robot, cube) = carrier_and_cube(&mut *e);
        e.add_body(&body(
            BodyKind::Static,
            [1.5, 0.0, 0.5],
            Shape::Box {
                half_extents: Vec3::new(0.1, 1.0, 0.5),
            },
        ))
        .unwrap();
        e.step(DT);
        e.attach(cube, robot, pose_from_xyz_rpy([0.35, 0.0, 0.05], [0.0; 3]))
            .unwrap();
        drive(&mut *e, robot, 0.5, 400);
        let (r, c) = (state(&*e, robot, 4), state(&*e, cube, 4));
        // The cube's front (x + 0.1) stops at the wall's face (1.4), not the robot's (0.2 behind).
        let front = c.pose.translation.vector.x + 0.1;
        assert!(
            front <= 1.4 + 1e-9 && front > 1.4 - 0.5 * DT,
            "{name}: {c:?}"
        );
        assert!(
            (r.pose.translation.vector.x - (front - 0.1 - 0.35)).abs() < 1e-9,
            "{name}"
        );
    }
}

/// A closed cube mesh of half size `half` about its origin (12 triangles, outward).
fn mesh_cube(half: f32, fit: ssx_core::MeshFit) -> Shape {
    let h = half;
    let vertices: Vec<[f32; 3]> = (0..8)
        .map(|i| {
            [
                if i & 1 == 0 { -h } else { h },
                if i & 2 == 0 { -h } else { h },
                if i & 4 == 0 { -h } else { h },
            ]
        })
        .collect();
    let triangles = vec![
        [0, 2, 1],
        [1, 2, 3],
        [4, 5, 6],
        [5, 7, 6],
        [0, 1, 4],
        [1, 5, 4],
        [2, 6, 3],
        [3, 6, 7],
        [0, 4, 2],
        [2, 4, 6],
        [1, 3, 5],
        [3, 7, 5],
    ];
    let mesh = ssx_core::Mesh::new("cube".into(), vertices, triangles).unwrap();
    Shape::Mesh {
        mesh: std::sync::Arc::new(mesh),
        fit,
    }
}

#[test]
fn a_cube_mesh_is_hit_by_rays_and_holds_a_box_up_on_every_engine() {
    use ssx_core::MeshFit;
    assert!((mesh_cube(0.5, MeshFit::TriMesh).volume() - 1.0).abs() < 1e-6);
    for (name, mut e) in engines(Vec3::new(0.0, 0.0, -9.81)) {
        if !e.capabilities().heights {
            continue; // Lifting and stacking need heights; planar.rs carries in the plane.
        }
        assert!(e.capabilities().meshes, "{name}");
        e.add_body(&ground()).unwrap();
        // A static 1 m mesh cube standing on the ground, and a dynamic convex-hull cube
        // dropped onto it.
        let table = e
            .add_body(&body(
                BodyKind::Static,
                [0.0, 0.0, 0.5],
                mesh_cube(0.5, MeshFit::TriMesh),
            ))
            .unwrap();
        let block = e
            .add_body(&body(
                BodyKind::Dynamic,
                [0.0, 0.0, 1.3],
                mesh_cube(0.1, MeshFit::ConvexHull),
            ))
            .unwrap();
        for _ in 0..150 {
            e.step(DT);
        }
        let z = state(&*e, block, 3).pose.translation.z;
        assert!(
            (z - 1.1).abs() < 0.01,
            "{name}: the block rests on the mesh at {z}"
        );
        // A ray from the side meets the mesh's face 2 m away.
        let hit = e
            .cast_ray(Point3::new(-2.5, 0.0, 0.5), Vec3::x(), 10.0, &|_| false)
            .expect("the ray hits the mesh");
        assert_eq!(hit.body, table, "{name}");
        assert!(
            (hit.distance - 2.0).abs() < 1e-4,
            "{name}: {}",
            hit.distance
        );
        assert!(
            (hit.normal + Vec3::x()).norm() < 1e-3,
            "{name}: {:?}",
            hit.normal
        );
    }
}

#[test]
fn rapier_refuses_a_mesh_without_a_hull_and_builds_no_body() {
    let mut e = engine("rapier", Vec3::zeros());
    // Three points on a line: no solid, no face.
    let flat = ssx_core::Mesh::new(
        "flat.stl".into(),
        vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]],
        vec![[0, 1, 2]],
    )
    .unwrap();
    let shape = Shape::Mesh {
        mesh: std::sync::Arc::new(flat),
        fit: ssx_core::MeshFit::ConvexHull,
    };
    let err = e
        .add_body(&body(BodyKind::Static, [0.0; 3], shape))
        .unwrap_err();
    assert_eq!(
        err,
        "mesh 'flat.stl' has no convex hull (its points are flat or too few)"
    );
    // Nothing was left behind: the next body is body 0.
    let id = e
        .add_body(&body(BodyKind::Dynamic, [0.0; 3], cube(0.1)))
        .unwrap();
    assert_eq!(id, BodyId(0));
}

/// A static base and a 1 kg cube on a joint of `kind` along world x (or about the vertical),
/// gravity off.
fn jointed(e: &mut dyn PhysicEngine, kind: JointKind, max_effort: f64) -> JointSpec {
    let base = e
        .add_body(&body(BodyKind::Static, [0.0; 3], cube(0.05)))
        .unwrap();
    let mut arm = body(BodyKind::Dynamic, [0.5, 0.0, 0.0], cube(0.05));
    arm.mass = MassSpec::Inertial {
        mass: 1.0,
        center: Vec3::zeros(),
        inertia: Vec3::repeat(0.01),
        frame: ssx_core::math::Rotation::identity(),
    };
    let arm = e.add_body(&arm).unwrap();
    // A revolute joint turns about the vertical (the joint frames' x axis turned onto z), as
    // an engine without heights requires; a prismatic one slides along world x.
    let turn = match kind {
        JointKind::Revolute { .. } => ssx_core::math::x_onto(&Vec3::z()),
        _ => ssx_core::math::Rotation::identity(),
    };
    let spec = JointSpec {
        kind,
        body1: base,
        body2: arm,
        frame1: Pose::from_parts(
            ssx_core::math::nalgebra::Translation3::new(0.5, 0.0, 0.0),
            turn,
        ),
        frame2: Pose::from_parts(Vec3::zeros().into(), turn),
        dynamics: ssx_core::JointDynamics {
            damping: 0.0,
            max_effort,
        },
    };
    e.add_joint(&spec).unwrap();
    spec
}

fn reading(e: &dyn PhysicEngine, spec: &JointSpec) -> ssx_core::JointReading {
    let mut out = vec![BodyState::default(); 2];
    e.read_state(&mut out);
    ssx_core::engine::joint_reading(spec, &out[0], &out[1])
}

#[test]
fn a_prismatic_joint_slides_to_its_motor_target_and_stops_at_its_limit() {
    for (name, mut e) in engines(Vec3::zeros()) {
        if !e.capabilities().joints {
            continue;
        }
        let kind = JointKind::Prismatic {
            limits: Some([-0.1, 0.2]),
            motor: None,
        };
        let spec = jointed(&mut *e, kind, f64::INFINITY);
        assert_eq!(e.body_mass(BodyId(1)), 1.0, "{name}");
        let command = |position| BodyCommand::JointMotor {
            joint: ssx_core::JointId(0),
            position,
            velocity: 0.0,
            stiffness: 200.0,
            damping: 40.0,
        };
        e.apply(&command(0.1));
        for _ in 0..300 {
            e.step(DT);
        }
        let r = reading(&*e, &spec);
        assert!((r.position - 0.1).abs() < 1e-3, "{name}: at {}", r.position);
        assert!(r.velocity.abs() < 1e-3, "{name}: {}", r.velocity);
        // The child moved along x only.
        let p = state(&*e, BodyId(1), 2).pose.translation.vector;
        assert!(
            (p - Vec3::new(0.6, 0.0, 0.0)).norm() < 2e-3,
            "{name}: {p:?}"
        );
        // A target past the limit stops at the limit.
        e.apply(&command(0.5));
        for _ in 0..300 {
            e.step(DT);
        }
        let r = reading(&*e, &spec);
        assert!((r.position - 0.2).abs() < 5e-3, "{name}: at {}", r.position);
    }
}

#[test]
fn an_effort_on_a_revolute_joint_accelerates_it_as_torque_over_inertia() {
    for (name, mut e) in engines(Vec3::zeros()) {
        if !e.capabilities().joints {
            continue;
        }
        let kind = JointKind::Revolute {
            limits: None,
            motor: None,
        };
        // 0.05 N·m asked, at most 0.02 N·m allowed: α = 0.02 / 0.01 = 2 rad/s².
        let spec = jointed(&mut *e, kind, 0.02);
        let steps = 50;
        for _ in 0..steps {
            e.apply(&BodyCommand::JointEffort {
                joint: ssx_core::JointId(0),
                effort: 0.05,
            });
            e.step(DT);
        }
        let t = steps as f64 * DT;
        let r = reading(&*e, &spec);
        assert!(
            (r.velocity - 2.0 * t).abs() < 0.02,
            "{name}: ω = {}",
            r.velocity
        );
        assert!(
            (r.position - 0.5 * 2.0 * t * t).abs() < 0.01,
            "{name}: θ = {}",
            r.position
        );
        // A velocity command (no stiffness) turns it at the asked rate.
        e.apply(&BodyCommand::JointMotor {
            joint: ssx_core::JointId(0),
            position: 0.0,
            velocity: -0.5,
            stiffness: 0.0,
            damping: 10.0,
        });
        for _ in 0..200 {
            e.step(DT);
        }
        let r = reading(&*e, &spec);
        assert!(
            (r.velocity + 0.5).abs() < 1e-3,
            "{name}: ω = {}",
            r.velocity
        );
    }
}
