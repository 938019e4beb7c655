//! The physics checked against what it must be: real Rapier through the Environment.

use ssx_core::math::{Point3, Vec3};
use ssx_tests::{Workspace, build_fast, step_n};

const GROUND: &str = r#"{ "bodies": [ { "name": "plane", "kind": "static", "colliders": [ { "shape": { "plane": {} } } ] } ] }"#;

fn scene(ws: &Workspace, timestep: f64, gravity: [f64; 3], artifacts: &str) -> std::path::PathBuf {
    ws.write(
        "scene.json",
        &format!(
            r#"{{ "timestep": {timestep}, "gravity": {gravity:?}, "artifacts": [ {artifacts} ] }}"#
        ),
    )
}

#[test]
fn free_fall_for_one_second_matches_half_g_t_squared() {
    let ws = Workspace::new();
    ws.write(
        "ball.json",
        r#"{ "bodies": [ { "name": "b", "mass": 1.0, "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ] }"#,
    );
    let path = scene(
        &ws,
        0.001,
        [0.0, 0.0, -9.81],
        r#"{ "name": "ball", "artifact": "ball.json", "pose": { "position": [0, 0, 100] } }"#,
    );
    let mut env = build_fast(&path, 1).unwrap();
    step_n(&mut env, 1000);
    let z = env.states()[0].pose.translation.z;
    let expected = 100.0 - 9.81 * 1.0 * 1.0 / 2.0;
    let drop = 100.0 - z;
    let rel = (drop - (100.0 - expected)).abs() / (100.0 - expected);
    assert!(
        rel < 0.002,
        "fell {drop} m, expected {} m (rel. error {rel})",
        100.0 - expected
    );
    assert!((env.states()[0].linvel.z + 9.81).abs() < 0.01 * 9.81);
}

#[test]
fn a_box_resting_on_the_ground_stays_within_a_millimetre_for_ten_seconds() {
    let ws = Workspace::new();
    ws.write("ground.json", GROUND);
    ws.write(
        "box.json",
        r#"{ "bodies": [ { "name": "b", "mass": 5.0, "colliders": [ { "shape": { "box": { "size": [0.5, 0.5, 0.5] } } } ] } ] }"#,
    );
    let path = scene(
        &ws,
        0.01,
        [0.0, 0.0, -9.81],
        r#"{ "name": "ground", "artifact": "ground.json" }, { "name": "box", "artifact": "box.json", "pose": { "position": [0, 0, 0.25] } }"#,
    );
    let mut env = build_fast(&path, 1).unwrap();
    // Let the contact settle for one step, then watch it for 10 s.
    step_n(&mut env, 1);
    let start = env.states()[1].pose.translation.vector;
    let mut worst: f64 = 0.0;
    for _ in 0..1000 {
        env.step().unwrap();
        worst = worst.max((env.states()[1].pose.translation.vector - start).norm());
    }
    assert!(worst < 0.001, "the box moved {worst} m");
    assert!((start.z - 0.25).abs() < 0.005, "resting height {}", start.z);
}

#[test]
fn a_pendulum_has_the_small_angle_period() {
    let ws = Workspace::new();
    let pendulum =
        std::fs::read_to_string(ssx_tests::repo_root().join("artifacts/library/pendulum.json"))
            .unwrap();
    ws.write("pendulum.json", &pendulum);
    let path = scene(
        &ws,
        0.001,
        [0.0, 0.0, -9.81],
        r#"{ "name": "p", "artifact": "pendulum.json" }"#,
    );
    let mut env = build_fast(&path, 1).unwrap();
    // Period from successive upward zero crossings of the bob's x velocity.
    let mut crossings = vec![];
    let mut last_vx = 0.0;
    for n in 0..8000 {
        env.step().unwrap();
        let vx = env.states()[1].linvel.x;
        if last_vx < 0.0 && vx >= 0.0 {
            // Linear interpolation of the crossing time.
            let t = (n as f64 + last_vx / (last_vx - vx)) * 0.001;
            crossings.push(t);
        }
        last_vx = vx;
    }
    assert!(crossings.len() >= 3, "too few swings: {crossings:?}");
    let periods: Vec<f64> = crossings.windows(2).map(|w| w[1] - w[0]).collect();
    let measured = periods.iter().sum::<f64>() / periods.len() as f64;
    // 1 m to the bob's centre; the 5 cm sphere adds (2/5)r² to the moment of inertia.
    let (l, r, g) = (1.0f64, 0.05f64, 9.81f64);
    let small_angle = 2.0 * std::f64::consts::PI * (l / g).sqrt();
    let physical = 2.0 * std::f64::consts::PI * ((l * l + 0.4 * r * r) / (g * l)).sqrt();
    let rel = (measured - small_angle).abs() / small_angle;
    assert!(
        rel < 0.01,
        "period {measured} s against 2π√(L/g) = {small_angle} s (rel. {rel})"
    );
    assert!((measured - physical).abs() / physical < 0.01);
    // The joint holds: the bob stays 1 m from the pivot.
    let bob = env.states()[1].pose.translation.vector;
    let pivot = env.states()[0].pose.translation.vector;
    assert!(
        ((bob - pivot).norm() - 1.0).abs() < 0.005,
        "arm length {}",
        (bob - pivot).norm()
    );
}

#[test]
fn mass_is_spread_by_volume_and_reported() {
    let ws = Workspace::new();
    ws.write(
        "two.json",
        r#"{ "bodies": [ { "name": "b", "mass": 3.0, "colliders": [
            { "shape": { "box": { "size": [1, 1, 1] } } },
            { "shape": { "sphere": { "radius": 0.5 } }, "pose": { "position": [2, 0, 0] } } ] } ] }"#,
    );
    let path = scene(
        &ws,
        0.01,
        [0.0, 0.0, 0.0],
        r#"{ "name": "t", "artifact": "two.json" }"#,
    );
    let env = build_fast(&path, 1).unwrap();
    let mass = env.engine().body_mass(ssx_core::BodyId(0));
    assert!((mass - 3.0).abs() < 1e-4, "mass {mass}");
}

#[test]
fn ray_casts_and_radius_queries_see_the_world() {
    let ws = Workspace::new();
    ws.write("ground.json", GROUND);
    ws.write(
        "wall.json",
        r#"{ "bodies": [ { "name": "w", "kind": "static", "colliders": [ { "shape": { "box": { "size": [0.2, 4, 2] } } } ] } ] }"#,
    );
    let path = scene(
        &ws,
        0.01,
        [0.0, 0.0, -9.81],
        r#"{ "name": "ground", "artifact": "ground.json" }, { "name": "wall", "artifact": "wall.json", "pose": { "position": [2.1, 0, 1] } }"#,
    );
    let mut env = build_fast(&path, 1).unwrap();
    env.step().unwrap();
    let e = env.engine();
    let hit = e
        .cast_ray(
            Point3::new(0.0, 0.0, 0.5),
            Vec3::new(1.0, 0.0, 0.0),
            10.0,
            &|_| false,
        )
        .expect("hits the wall");
    assert_eq!(hit.body.0, 1);
    assert!(
        (hit.distance - 2.0).abs() < 1e-4,
        "distance {}",
        hit.distance
    );
    assert!((hit.normal - Vec3::new(-1.0, 0.0, 0.0)).norm() < 1e-4);
    let down = e
        .cast_ray(
            Point3::new(0.0, 0.0, 0.5),
            Vec3::new(0.0, 0.0, -1.0),
            10.0,
            &|_| false,
        )
        .unwrap();
    assert_eq!(down.body.0, 0);
    assert!((down.distance - 0.5).abs() < 1e-4);
    assert!(
        e.cast_ray(
            Point3::new(0.0, 0.0, 0.5),
            Vec3::new(1.0, 0.0, 0.0),
            10.0,
            &|b| b.0 == 1
        )
        .is_none()
    );
    let mut near = vec![];
    e.bodies_within(Point3::new(0.0, 0.0, 0.5), 1.0, &mut near);
    assert_eq!(
        near,
        vec![ssx_core::BodyId(0)],
        "only the ground is within 1 m"
    );
    near.clear();
    e.bodies_within(Point3::new(1.5, 0.0, 1.0), 0.9, &mut near);
    assert_eq!(
        near,
        vec![ssx_core::BodyId(1)],
        "only the wall is within 0.9 m of a point 1 m above ground"
    );
}

#[test]
fn a_hover_driver_holds_its_height() {
    let ws = Workspace::new();
    ws.write("ground.json", GROUND);
    let hover =
        std::fs::read_to_string(ssx_tests::repo_root().join("artifacts/library/hover-box.json"))
            .unwrap();
    ws.write("hover.json", &hover);
    let path = scene(
        &ws,
        0.01,
        [0.0, 0.0, -9.81],
        r#"{ "name": "ground", "artifact": "ground.json" }, { "name": "drone", "artifact": "hover.json", "pose": { "position": [1, 2, 0.05] } }"#,
    );
    let mut env = build_fast(&path, 2).unwrap();
    step_n(&mut env, 500);
    let p = env.states()[1].pose.translation.vector;
    assert!(
        (p - Vec3::new(1.0, 2.0, 1.0)).norm() < 0.01,
        "hovering at {p:?}"
    );
    // Its pose sensor reports the same position.
    let r = env.reading("drone", "mocap").unwrap();
    assert_eq!(r.step(), 500);
    assert_eq!(&r.values()[..3], &[p.x, p.y, p.z]);
}

#[test]
fn a_kinematic_body_follows_its_commanded_velocity() {
    let ws = Workspace::new();
    ws.write(
        "k.json",
        r#"{ "bodies": [ { "name": "k", "kind": "kinematic", "colliders": [ { "shape": { "box": { "size": [1, 1, 1] } } } ] } ],
             "driver": { "library": "libssx_driver_velocity.so", "plugin": "velocity", "descriptor": { "linear": [0.5, 0, 0], "angular": [0, 0, 1] } } }"#,
    );
    let path = scene(
        &ws,
        0.01,
        [0.0, 0.0, -9.81],
        r#"{ "name": "k", "artifact": "k.json" }"#,
    );
    let mut env = build_fast(&path, 1).unwrap();
    // The first step applies no command yet (drivers run after physics).
    step_n(&mut env, 201);
    let s = env.states()[0];
    assert!(
        (s.pose.translation.x - 1.0).abs() < 1e-3,
        "x = {}",
        s.pose.translation.x
    );
    assert!(
        (s.pose.rotation.angle() - 2.0).abs() < 1e-3,
        "yaw = {}",
        s.pose.rotation.angle()
    );
}
