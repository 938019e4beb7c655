//! One conformance suite for every registered physics engine (after gz-physics'
//! `common_test`): the same bodies, commands and queries, and the answers a user of either
//! engine relies on. Tolerances are the looser engine's (Rapier works in f32 and solves contacts
//! iteratively); properties only one kind of engine has are asked of it through its
//! capabilities.

use ssx_core::math::{Point3, Pose, Vec3, pose_from_xyz_rpy};
use ssx_core::{
    BodyCommand, BodyId, BodyKind, BodySpec, BodyState, ColliderSpec, EngineConfig, JointKind,
    JointSpec, MassSpec, PhysicEngine, PluginKind, Shape,
};

mod carrying;
mod planar;

/// The built-in engines (no plugin libraries needed).
fn registry() -> ssx_core::PluginRegistry {
    let mut r = ssx_core::PluginRegistry::new();
    ssx_engines::register(&mut r);
    r
}

const DT: f64 = 0.01;

/// Every registered engine, by name, with the given gravity.
fn engines(gravity: Vec3) -> Vec<(String, Box<dyn PhysicEngine>)> {
    let reg = registry();
    let names: Vec<String> = reg
        .names(PluginKind::Engine)
        .into_iter()
        .map(String::from)
        .collect();
    assert!(names.len() >= 2, "both engines are registered: {names:?}");
    names
        .into_iter()
        .map(|n| {
            let e = engine(&n, gravity);
            (n, e)
        })
        .collect()
}

/// Engine `name` with the given gravity and the tests' timestep.
fn engine(name: &str, gravity: Vec3) -> Box<dyn PhysicEngine> {
    registry()
        .create_engine(
            name,
            &EngineConfig {
                gravity,
                timestep: DT,
            },
        )
        .unwrap()
}

fn body(kind: BodyKind, xyz: [f64; 3], shape: Shape) -> BodySpec {
    BodySpec {
        kind,
        pose: pose_from_xyz_rpy(xyz, [0.0; 3]),
        mass: MassSpec::Mass(2.0),
        colliders: vec![ColliderSpec {
            shape,
            local_pose: Pose::identity(),
            friction: 0.5,
            restitution: 0.0,
        }],
        linear_damping: 0.0,
        angular_damping: 0.0,
        planar: false,
        group: 0,
    }
}

fn cube(half: f64) -> Shape {
    Shape::Box {
        half_extents: Vec3::repeat(half),
    }
}

fn state(e: &dyn PhysicEngine, id: BodyId, n: usize) -> BodyState {
    let mut out = vec![BodyState::default(); n];
    e.read_state(&mut out);
    out[id.index()]
}

fn ground() -> BodySpec {
    body(BodyKind::Static, [0.0; 3], Shape::Plane)
}

#[test]
fn ids_are_dense_and_poses_read_back() {
    for (name, mut e) in engines(Vec3::zeros()) {
        let a = e
            .add_body(&body(BodyKind::Static, [1.0, 2.0, 3.0], cube(0.5)))
            .unwrap();
        let b = e
            .add_body(&body(BodyKind::Dynamic, [-4.0, 0.5, 1.0], cube(0.2)))
            .unwrap();
        assert_eq!((a, b), (BodyId(0), BodyId(1)), "{name}");
        let s = state(&*e, b, 2);
        assert!(
            (s.pose.translation.vector - Vec3::new(-4.0, 0.5, 1.0)).norm() < 1e-6,
            "{name}"
        );
        // 2 kg spread over a 0.4 m cube: I = m (0.4² + 0.4²) / 12 about each axis.
        assert!((e.body_mass(b) - 2.0).abs() < 1e-4, "{name}");
        let want = 2.0 * 0.32 / 12.0;
        // A world without heights turns about the vertical alone.
        let want = if e.capabilities().heights {
            Vec3::repeat(want)
        } else {
            Vec3::new(0.0, 0.0, want)
        };
        assert!(
            (e.body_inertia(b) - want).norm() < 1e-5,
            "{name}: {}",
            e.body_inertia(b)
        );
        assert_eq!(e.body_mass(a), 0.0, "{name}: static bodies have no mass");
    }
}

#[test]
fn a_velocity_command_moves_a_body_for_two_seconds() {
    for (name, mut e) in engines(Vec3::zeros()) {
        let id = e
            .add_body(&body(BodyKind::Dynamic, [0.0, 0.0, 1.0], cube(0.1)))
            .unwrap();
        for _ in 0..200 {
            e.apply(&BodyCommand::Velocity {
                body: id,
                linear: Vec3::new(1.0, -0.5, 0.25),
                angular: Vec3::zeros(),
            });
            e.step(DT);
        }
        let p = state(&*e, id, 1).pose.translation.vector;
        // A world without heights keeps the body at its height.
        let z = if e.capabilities().heights { 1.5 } else { 1.0 };
        let want = Vec3::new(2.0, -1.0, z);
        // Rapier (3D and 2D) integrates in f32.
        let tol = if e.capabilities().contact_dynamics {
            1e-4
        } else {
            1e-12
        };
        assert!((p - want).norm() < tol, "{name}: {p} vs {want}");
    }
}

#[test]
fn a_force_command_acts_for_exactly_one_step() {
    for (name, mut e) in engines(Vec3::zeros()) {
        let id = e
            .add_body(&body(
                BodyKind::Dynamic,
                [0.0; 3],
                Shape::Sphere { radius: 0.1 },
            ))
            .unwrap();
        e.apply(&BodyCommand::Force {
            body: id,
            force: Vec3::new(10.0, 0.0, 0.0),
        });
        e.step(DT);
        let v1 = state(&*e, id, 1).linvel.x;
        for _ in 0..10 {
            e.step(DT);
        }
        let v = state(&*e, id, 1).linvel.x;
        // 10 N on 2 kg for one step of 0.01 s: 0.05 m/s, then no more.
        assert!((v1 - 0.05).abs() < 1e-5, "{name}: {v1}");
        assert!(
            (v - v1).abs() < 1e-6,
            "{name}: force lingered ({v1} -> {v})"
        );
    }
}

#[test]
fn a_torque_about_z_turns_a_body() {
    for (name, mut e) in engines(Vec3::zeros()) {
        let id = e
            .add_body(&body(BodyKind::Dynamic, [0.0; 3], cube(0.5)))
            .unwrap();
        let izz = e.body_inertia(id).z;
        e.apply(&BodyCommand::Torque {
            body: id,
            torque: Vec3::new(0.0, 0.0, 1.0),
        });
        e.step(DT);
        let w = state(&*e, id, 1).angvel.z;
        assert!((w - DT / izz).abs() < 1e-4 * (DT / izz), "{name}: {w}");
    }
}

#[test]
fn rays_hit_faces_and_the_ground_and_honour_height() {
    for (name, mut e) in engines(Vec3::zeros()) {
        if !e.capabilities().heights {
            continue; // planar.rs: rays at any height, none down.
        }
        let g = e.add_body(&ground()).unwrap();
        // A box 0.1 m high at x = 5: faces at x = 4.5.
        let low = e
            .add_body(&body(
                BodyKind::Static,
                [5.0, 0.0, 0.05],
                Shape::Box {
                    half_extents: Vec3::new(0.5, 0.5, 0.05),
                },
            ))
            .unwrap();
        // Queries answer for the world as of the last step.
        e.step(DT);
        let none = |_: BodyId| false;
        let at = |z: f64| Point3::new(0.0, 0.0, z);
        let hit = e.cast_ray(at(0.05), Vec3::x(), 10.0, &none).unwrap();
        assert_eq!(hit.body, low, "{name}");
        assert!(
            (hit.distance - 4.5).abs() < 1e-5,
            "{name}: {}",
            hit.distance
        );
        assert!(
            (hit.normal - -Vec3::x()).norm() < 1e-5,
            "{name}: {}",
            hit.normal
        );
        // At 0.2 m the ray passes over it.
        assert!(
            e.cast_ray(at(0.2), Vec3::x(), 10.0, &none).is_none(),
            "{name}"
        );
        // Too short.
        assert!(
            e.cast_ray(at(0.05), Vec3::x(), 4.0, &none).is_none(),
            "{name}"
        );
        // Down onto the ground, and onto the box's top.
        let down = e.cast_ray(at(1.0), -Vec3::z(), 10.0, &none).unwrap();
        assert_eq!(down.body, g, "{name}");
        assert!((down.distance - 1.0).abs() < 1e-5, "{name}");
        let top = e
            .cast_ray(Point3::new(5.2, 0.1, 1.0), -Vec3::z(), 10.0, &none)
            .unwrap();
        assert_eq!(top.body, low, "{name}");
        assert!(
            (top.distance - 0.9).abs() < 1e-5,
            "{name}: {}",
            top.distance
        );
        // Excluding the box reaches the ground under it.
        let skip = |b: BodyId| b == low;
        let under = e
            .cast_ray(Point3::new(5.2, 0.1, 1.0), -Vec3::z(), 10.0, &skip)
            .unwrap();
        assert_eq!(under.body, g, "{name}");
    }
}

#[test]
fn radius_queries_find_bodies_in_reach_in_id_order() {
    for (name, mut e) in engines(Vec3::zeros()) {
        let far = e
            .add_body(&body(BodyKind::Static, [10.0, 0.0, 0.5], cube(0.5)))
            .unwrap();
        let near = e
            .add_body(&body(BodyKind::Static, [1.6, 0.0, 0.5], cube(0.5)))
            .unwrap();
        let ball = e
            .add_body(&body(
                BodyKind::Dynamic,
                [0.0, -1.3, 0.5],
                Shape::Sphere { radius: 0.25 },
            ))
            .unwrap();
        e.step(DT);
        let mut out = Vec::new();
        // The box's face is 1.1 m away, the ball's surface 1.05 m.
        e.bodies_within(Point3::new(0.0, 0.0, 0.5), 1.15, &mut out);
        assert_eq!(out, vec![near, ball], "{name}");
        out.clear();
        e.bodies_within(Point3::new(0.0, 0.0, 0.5), 1.0, &mut out);
        assert!(out.is_empty(), "{name}: {out:?}");
        let _ = far;
    }
}

#[test]
fn a_dropped_box_rests_on_the_ground_and_feels_its_weight() {
    for (name, mut e) in engines(Vec3::new(0.0, 0.0, -9.81)) {
        if !e.capabilities().heights {
            continue; // Nothing falls in a plane: planar.rs has its floor's friction.
        }
        let g = e.add_body(&ground()).unwrap();
        let b = e
            .add_body(&body(BodyKind::Dynamic, [0.0, 0.0, 1.0], cube(0.1)))
            .unwrap();
        for _ in 0..300 {
            e.step(DT);
        }
        let s = state(&*e, b, 2);
        let z = s.pose.translation.vector.z;
        assert!((z - 0.1).abs() < 0.01, "{name}: rests at {z}");
        assert!(s.linvel.norm() < 0.01, "{name}: {}", s.linvel);
        let mut c = Vec::new();
        e.contacts(b, &mut c);
        assert_eq!(c.len(), 1, "{name}: {c:?}");
        assert_eq!(c[0].other, g, "{name}");
        let weight = 2.0 * 9.81;
        assert!(
            (c[0].force - Vec3::new(0.0, 0.0, weight)).norm() < 0.05 * weight,
            "{name}: {}",
            c[0].force
        );
    }
}

#[test]
fn a_box_dropped_onto_another_rests_on_it() {
    for (name, mut e) in engines(Vec3::new(0.0, 0.0, -9.81)) {
        if !e.capabilities().heights {
            continue; // Nothing falls in a plane: planar.rs has its floor's friction.
        }
        e.add_body(&ground()).unwrap();
        let under = e
            .add_body(&body(BodyKind::Dynamic, [0.0, 0.0, 0.2], cube(0.2)))
            .unwrap();
        let over = e
            .add_body(&body(BodyKind::Dynamic, [0.05, 0.0, 1.5], cube(0.1)))
            .unwrap();
        for _ in 0..400 {
            e.step(DT);
        }
        let z = state(&*e, over, 3).pose.translation.vector.z;
        assert!((z - 0.5).abs() < 0.01, "{name}: the top box rests at {z}");
        let mut c = Vec::new();
        e.contacts(over, &mut c);
        assert!(c.iter().any(|c| c.other == under), "{name}: {c:?}");
    }
}

#[test]
fn the_same_world_steps_to_the_same_bits() {
    let run = |name: &str| {
        let mut e = engine(name, Vec3::new(0.0, 0.0, -9.81));
        e.add_body(&ground()).unwrap();
        for i in 0..20 {
            let x = (i % 5) as f64 * 0.3;
            let y = (i / 5) as f64 * 0.3;
            e.add_body(&body(
                BodyKind::Dynamic,
                [x, y, 0.3 + i as f64 * 0.05],
                cube(0.1),
            ))
            .unwrap();
        }
        for k in 0..200 {
            e.apply(&BodyCommand::Force {
                body: BodyId(1 + k % 20),
                force: Vec3::new(3.0, -2.0, 0.0),
            });
            e.step(DT);
        }
        let mut out = vec![BodyState::default(); 21];
        e.read_state(&mut out);
        out
    };
    for name in registry().names(PluginKind::Engine) {
        let (a, b) = (run(name), run(name));
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(
                x.pose.translation.vector, y.pose.translation.vector,
                "{name}"
            );
            assert_eq!(x.linvel, y.linvel, "{name}");
        }
    }
}

/// A crowd that meets: 400 planar boxes on a tight grid (enough for the kinematic engine to
/// share its passes among the workers), some turned, a few carrying a cube and one carrying
/// another box, each driven by its own velocity command towards the middle, and a few boxes
/// dropped on them. Stepped with `par`; the final states.
fn crowd_run(name: &str, par: &dyn ssx_core::Parallel) -> Vec<BodyState> {
    let mut e = engine(name, Vec3::new(0.0, 0.0, -9.81));
    e.add_body(&ground()).unwrap();
    let mut movers = Vec::new();
    for i in 0..400 {
        let (x, y) = ((i % 20) as f64 * 0.45 - 4.3, (i / 20) as f64 * 0.45 - 4.3);
        let mut spec = body(
            BodyKind::Dynamic,
            [x, y, 0.1],
            Shape::Box {
                half_extents: Vec3::new(0.15, 0.1, 0.1),
            },
        );
        spec.pose = pose_from_xyz_rpy([x, y, 0.1], [0.0, 0.0, (i % 7) as f64 * 0.4]);
        spec.planar = true;
        movers.push((e.add_body(&spec).unwrap(), x, y));
    }
    if e.capabilities().attach {
        for &(carrier, x, y) in movers.iter().step_by(79) {
            let cube = e
                .add_body(&body(BodyKind::Dynamic, [x, y, 0.3], cube(0.05)))
                .unwrap();
            e.attach(cube, carrier, Pose::translation(0.0, 0.0, 0.2))
                .unwrap();
        }
        // And one carried by a body that comes after it (the kinematic engine takes the
        // carrier's velocity from before its integration, as in id order).
        e.attach(movers[5].0, movers[390].0, Pose::translation(0.0, 0.0, 0.3))
            .unwrap();
    }
    // A static wall off to one side: an engine may leave its state out of the updates.
    e.add_body(&body(BodyKind::Static, [7.0, 1.0, 0.5], cube(0.5)))
        .unwrap();
    let mut last = BodyId(0);
    for i in 0..6 {
        last = e
            .add_body(&body(
                BodyKind::Dynamic,
                [i as f64 * 0.5 - 1.2, 0.3, 0.6 + i as f64 * 0.1],
                cube(0.08),
            ))
            .unwrap();
    }
    // Read as the Environment does: in full once built, then brought up to date after each
    // step on the same workers.
    let n = last.index() + 1;
    let mut states = vec![BodyState::default(); n];
    e.read_state(&mut states);
    for k in 0..150u32 {
        for &(id, x, y) in &movers {
            let spin = if (id.0 + k / 30) % 3 == 0 { 1.5 } else { 0.0 };
            e.apply(&BodyCommand::Velocity {
                body: id,
                linear: Vec3::new(-x, -y, 0.0) * 0.8,
                angular: Vec3::new(0.0, 0.0, spin),
            });
        }
        e.step_on(DT, par);
        e.update_state_on(&mut states, par);
    }
    let mut alone = vec![BodyState::default(); n];
    e.read_state(&mut alone);
    assert_eq!(
        ssx_tests::state_bits(&states),
        ssx_tests::state_bits(&alone),
        "{name}: the updates on {} workers differ from a full read",
        par.workers()
    );
    alone
}

#[test]
fn a_crowd_steps_to_the_same_bits_on_one_two_and_three_workers() {
    let bits = ssx_tests::state_bits;
    for name in registry().names(PluginKind::Engine) {
        let reference = crowd_run(name, &ssx_core::Serial);
        // The crowd did meet: many movers ended away from where they would have glided to
        // alone (their start times 1 - 0.8 * 1.5).
        let held = reference[1..401]
            .iter()
            .enumerate()
            .filter(|(i, s)| {
                let start = Vec3::new(
                    (i % 20) as f64 * 0.45 - 4.3,
                    (i / 20) as f64 * 0.45 - 4.3,
                    0.0,
                );
                let alone = start * (1.0 - 0.8 * 1.5);
                (s.pose.translation.vector - alone).xy().norm() > 0.1
            })
            .count();
        assert!(held > 50, "{name}: only {held} movers were held up");
        for workers in [1, 2, 3] {
            let pool = ssx_core::WorkerPool::new(workers).unwrap();
            assert_eq!(
                bits(&reference),
                bits(&crowd_run(name, &pool)),
                "{name}: {workers} workers differ from stepping on one thread"
            );
        }
    }
}

#[test]
fn joints_exist_where_the_engine_says_so() {
    for (name, mut e) in engines(Vec3::zeros()) {
        let a = e
            .add_body(&body(BodyKind::Dynamic, [0.0; 3], cube(0.1)))
            .unwrap();
        let b = e
            .add_body(&body(BodyKind::Dynamic, [0.5, 0.0, 0.0], cube(0.1)))
            .unwrap();
        let made = e.add_joint(&JointSpec {
            kind: JointKind::Fixed,
            body1: a,
            body2: b,
            frame1: Pose::identity(),
            frame2: Pose::identity(),
            dynamics: Default::default(),
        });
        if e.capabilities().joints {
            assert!(made.is_ok(), "{name}");
        } else {
            assert_eq!(
                made.unwrap_err(),
                "the kinematic engine has no joints; run jointed artifacts with \"engine\": \"rapier\"",
                "{name}"
            );
        }
    }
}
