//! Stage's gripper on a ground robot (`diffdrive`'s `gripper` block and the `gripper` sensor),
//! loaded from the shipped libraries and run on both engines that can attach bodies.

use ssx_sdk::gripper::{Fit, Reading};
use ssx_tests::{Workspace, build_fast, library, repo_root, state_of, step_n};

use std::path::PathBuf;

const ENGINES: [&str; 2] = ["rapier", "kinematic"];

fn position(env: &ssx_core::Environment, name: &str) -> [f64; 3] {
    let p = state_of(env, name).pose.translation.vector;
    [p.x, p.y, p.z]
}

fn speed(env: &ssx_core::Environment, name: &str) -> f64 {
    let s = state_of(env, name);
    s.linvel.norm() + s.angvel.norm()
}

/// An artifact's index in the scene.
fn index(env: &ssx_core::Environment, name: &str) -> u32 {
    env.artifacts()
        .iter()
        .position(|a| a.name == name)
        .expect("artifact") as u32
}

fn gripper(env: &ssx_core::Environment, robot: &str) -> Reading {
    let values = env
        .reading(robot, "gripper")
        .expect("a gripper reading")
        .values();
    Reading::from_values(values).expect("the gripper sensor's layout")
}

/// The shipped stacking scene on `engine`.
fn stacking(ws: &Workspace, engine: &str) -> ssx_core::Environment {
    let shipped = repo_root().join("artifacts/scenes/stacking.json");
    let scene = ws.write(
        &format!("stacking-{engine}.json"),
        &format!(
            r#"{{ "timestep": 0.002, "engine": "{engine}", "include": ["{}"] }}"#,
            shipped.display()
        ),
    );
    build_fast(&scene, 1).expect("the stacking scene builds")
}

#[test]
fn the_stacking_scene_puts_one_cube_on_the_other_on_both_engines() {
    let ws = Workspace::new();
    for engine in ENGINES {
        let mut env = stacking(&ws, engine);
        // The grip starts at 2.56 s and the lift to 0.25 m takes 1 s: by 3.7 s it is up.
        step_n(&mut env, 1850);
        let r = gripper(&env, "stacker");
        assert_eq!(r.held, Some((index(&env, "upper"), 0)), "{engine}: {r:?}");
        assert!(
            (r.height - 0.25).abs() < 0.005,
            "{engine}: lifted to {}",
            r.height
        );
        step_n(&mut env, 7000 - 1850);
        let (u, l) = (position(&env, "upper"), position(&env, "lower"));
        assert!(
            (u[2] - (l[2] + 0.1 + 0.1)).abs() < 0.005,
            "{engine}: upper at {u:?}, lower at {l:?}"
        );
        assert!(
            (u[0] - l[0]).abs() < 0.03 && (u[1] - l[1]).abs() < 0.03,
            "{engine}: {u:?} over {l:?}"
        );
        assert!(
            speed(&env, "upper") < 1e-3 && speed(&env, "lower") < 1e-3,
            "{engine}: at rest"
        );
        assert_eq!(gripper(&env, "stacker").held, None);
    }
}

/// A robot with the shipped gripper at the origin, playing `script` (segments, JSON), with a
/// box of `size` (m) and `mass` (kg) lying between its paddles, and `extra` instances.
fn before_the_paddles(
    ws: &Workspace,
    engine: &str,
    size: [f64; 3],
    mass: f64,
    script: &str,
    extra: &str,
) -> PathBuf {
    ws.write(
        "thing.json",
        &format!(
            r#"{{ "bodies": [ {{ "name": "b", "mass": {mass},
                 "colliders": [ {{ "shape": {{ "box": {{ "size": {size:?} }} }}, "friction": 0.6 }} ] }} ] }}"#
        ),
    );
    ws.write(
        "scene.json",
        &format!(
            r#"{{ "timestep": 0.002, "engine": "{engine}", "seed": 1, "artifacts": [
                 {{ "name": "ground", "artifact": "{ground}" }},
                 {{ "name": "thing", "artifact": "thing.json", "pose": {{ "position": [0.36, 0, {z}] }} }},
                 {{ "name": "bot", "artifact": "{robot}", "pose": {{ "position": [0, 0, 0.12] }},
                   "overrides": {{ "driver": {{ "behaviour": {{ "script": {{ "steps": {script} }} }} }} }} }}
                 {extra} ] }}"#,
            ground = library("ground.json"),
            robot = library("pioneer-gripper.json"),
            z = size[2] / 2.0,
        ),
    )
}

#[test]
fn a_box_too_heavy_or_too_wide_is_not_gripped_and_the_reading_says_why() {
    let ws = Workspace::new();
    let lift = r#"[ { "for": 1.0, "grip": true, "height": 0.2 } ]"#;
    for engine in ENGINES {
        for (size, mass, fit) in [
            ([0.2, 0.2, 0.2], 5.0, Fit::TooHeavy),
            ([0.2, 0.4, 0.2], 1.0, Fit::TooWide),
            ([0.2, 0.2, 0.2], 1.0, Fit::Fits),
        ] {
            let scene = before_the_paddles(&ws, engine, size, mass, lift, "");
            let mut env = build_fast(&scene, 1).unwrap();
            // The sensor reads before the driver closes in the same step.
            step_n(&mut env, 1);
            let r = gripper(&env, "bot");
            assert_eq!(
                (r.between, r.fit),
                (Some((index(&env, "thing"), 0)), fit),
                "{engine}: {r:?}"
            );
            assert!(
                (r.mass - mass).abs() < 1e-6 && (r.width - size[1]).abs() < 1e-6,
                "{engine}: {r:?}"
            );
            step_n(&mut env, 500);
            let r = gripper(&env, "bot");
            let z = position(&env, "thing")[2];
            if fit == Fit::Fits {
                assert_eq!(r.held, Some((index(&env, "thing"), 0)), "{engine}");
                assert!(
                    (r.height - 0.2).abs() < 0.005 && (z - 0.3).abs() < 0.005,
                    "{engine}: {r:?}, z {z}"
                );
            } else {
                assert_eq!((r.held, r.fit), (None, fit), "{engine}: {r:?}");
                assert!((z - 0.1).abs() < 0.005, "{engine}: not lifted, z {z}");
            }
        }
    }
}

#[test]
fn a_box_released_in_mid_air_falls_and_rests_on_the_floor() {
    let ws = Workspace::new();
    let script =
        r#"[ { "for": 2.0, "grip": true, "height": 0.3 }, { "for": 0.001, "grip": false } ]"#;
    for engine in ENGINES {
        let scene = before_the_paddles(&ws, engine, [0.2, 0.2, 0.2], 1.0, script, "");
        let mut env = build_fast(&scene, 1).unwrap();
        step_n(&mut env, 1000);
        assert!(
            (position(&env, "thing")[2] - 0.4).abs() < 0.005,
            "{engine}: lifted to 0.3 m"
        );
        // A 0.3 m fall takes 0.25 s; give it a second to land and settle.
        step_n(&mut env, 50);
        let falling = position(&env, "thing")[2];
        assert!(
            falling < 0.39 && falling > 0.1,
            "{engine}: falling, z {falling}"
        );
        step_n(&mut env, 500);
        let p = position(&env, "thing");
        assert!(
            (p[2] - 0.1).abs() < 0.005,
            "{engine}: rests on the floor, {p:?}"
        );
        assert!(
            (p[0] - 0.36).abs() < 0.02 && p[1].abs() < 0.02,
            "{engine}: fell straight, {p:?}"
        );
        assert!(speed(&env, "thing") < 1e-3, "{engine}: at rest");
        assert_eq!(gripper(&env, "bot").held, None);
    }
}

#[test]
fn on_the_kinematic_engine_a_carried_box_stops_the_robot_at_a_wall() {
    let ws = Workspace::new();
    // Lift the box 5 cm and drive at a wall 1.5 m ahead: the box (front face 0.46 m ahead of
    // the robot's centre) meets it first, while the robot's own front (0.225 m) is still clear.
    let script =
        r#"[ { "for": 0.5, "grip": true, "height": 0.05 }, { "for": 8.0, "linear": 0.3 } ]"#;
    let wall = format!(
        r#", {{ "name": "wall", "artifact": "{}", "pose": {{ "position": [1.6, 0, 0], "rpy": [0, 0, 1.5707963267948966] }} }}"#,
        library("wall.json")
    );
    let scene = before_the_paddles(&ws, "kinematic", [0.2, 0.2, 0.2], 1.0, script, &wall);
    let mut env = build_fast(&scene, 1).unwrap();
    step_n(&mut env, 4250);
    let wall_face = 1.6 - wall_half_thickness();
    let (bot, thing) = (position(&env, "bot"), position(&env, "thing"));
    assert!(
        (thing[0] + 0.1 - wall_face).abs() < 0.01,
        "the box's front at the wall's face {wall_face}: box {thing:?}"
    );
    assert!(
        bot[0] + 0.225 < wall_face - 0.1,
        "the robot stopped short: {bot:?}"
    );
    assert!(speed(&env, "bot") < 1e-9, "stopped");
    assert_eq!(gripper(&env, "bot").held, Some((index(&env, "thing"), 0)));
}

/// Half the shipped wall's thickness (m), from its file.
fn wall_half_thickness() -> f64 {
    let text = std::fs::read_to_string(library("wall.json")).unwrap();
    let wall: serde_json::Value = serde_json::from_str(&text).unwrap();
    let size = &wall["bodies"][0]["colliders"][0]["shape"]["box"]["size"];
    size[1].as_f64().unwrap() / 2.0
}

#[test]
fn a_script_that_grips_needs_a_gripper_and_gripper_numbers_are_checked() {
    let ws = Workspace::new();
    let script = r#"[ { "for": 1.0, "grip": true } ]"#;
    let scene = ws.write(
        "scene.json",
        &format!(
            r#"{{ "timestep": 0.01, "artifacts": [ {{ "name": "bot", "artifact": "{}",
                 "overrides": {{ "driver": {{ "behaviour": {{ "script": {{ "steps": {script} }} }} }} }} }} ] }}"#,
            library("pioneer.json")
        ),
    );
    let e = build_fast(&scene, 1).err().expect("refused").to_string();
    assert!(
        e.contains("invalid descriptor: the script grips, but the robot has no 'gripper' block"),
        "{e}"
    );
    let scene = ws.write(
        "scene.json",
        &format!(
            r#"{{ "timestep": 0.01, "artifacts": [ {{ "name": "bot", "artifact": "{}",
                 "overrides": {{ "driver": {{ "gripper": {{ "lift_speed": 0 }} }} }} }} ] }}"#,
            library("pioneer-gripper.json")
        ),
    );
    let e = build_fast(&scene, 1).err().expect("refused").to_string();
    assert!(
        e.contains("invalid descriptor: 'gripper.lift_speed' must be from 1e-6 to 1e6, got 0"),
        "{e}"
    );
}
