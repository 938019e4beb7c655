//! The bundled robots and sensors, loaded from their libraries and checked against physics.

use std::sync::{Arc, Mutex};

use ssx_core::{CommandBuffer, Driver, DriverContext, PluginRegistry};
use ssx_driver_quadrotor::attitude::{AttitudeInput, AttitudeLoop, AttitudeLoopF64};
use ssx_driver_quadrotor::reference::Reference;
use ssx_driver_quadrotor::{Flight, FlightInputs, FlightParams};
use ssx_tests::{Workspace, build_fast, build_fast_with, library, registry, state_of, step_n};

mod quadrotor;

const G: f64 = 9.81;

fn scene(ws: &Workspace, timestep: f64, artifacts: &str) -> std::path::PathBuf {
    ws.write(
        "scene.json",
        &format!(r#"{{ "timestep": {timestep}, "seed": 5, "artifacts": [ {artifacts} ] }}"#),
    )
}

/// A scene of the ground plane and `instances` (JSON objects, comma-separated).
fn on_ground(ws: &Workspace, timestep: f64, instances: &str) -> std::path::PathBuf {
    scene(
        ws,
        timestep,
        &format!(
            r#"{{ "name": "ground", "artifact": "{}" }}, {instances}"#,
            library("ground.json")
        ),
    )
}

/// A kinematic probe carrying the given sensors (JSON list).
fn probe(ws: &Workspace, sensors: &str) -> String {
    ws.write(
        "probe.json",
        &format!(
            r#"{{ "bodies": [ {{ "name": "probe", "kind": "kinematic",
                 "colliders": [ {{ "shape": {{ "sphere": {{ "radius": 0.05 }} }} }} ] }} ],
               "sensors": {sensors} }}"#
        ),
    )
    .display()
    .to_string()
}

fn values(env: &ssx_core::Environment, artifact: &str, sensor: &str) -> Vec<f64> {
    env.reading(artifact, sensor)
        .expect("reading exists")
        .values()
        .to_vec()
}

#[test]
fn an_imu_at_rest_reads_plus_g_and_zero_rate_exactly_without_noise() {
    let ws = Workspace::new();
    let p = probe(
        &ws,
        r#"[{ "name": "imu", "library": "libssx_sensors.so", "plugin": "imu" }]"#,
    );
    let s = scene(
        &ws,
        0.001,
        &format!(
            r#"{{ "name": "p", "artifact": "{p}", "pose": {{ "position": [0, 0, 1], "rpy": [0.3, -0.2, 1.0] }} }}"#
        ),
    );
    let mut env = build_fast(&s, 1).unwrap();
    step_n(&mut env, 10);
    let v = values(&env, "p", "imu");
    // Gravity seen in the tilted body frame: R^T (0, 0, g), with the orientation the engine
    // holds (single precision inside Rapier).
    let r = state_of(&env, "p").pose.rotation;
    let expect = r.inverse() * ssx_core::math::Vec3::new(0.0, 0.0, G);
    for k in 0..3 {
        assert!((v[k] - expect[k]).abs() < 1e-12, "{v:?} vs {expect:?}");
        assert_eq!(v[3 + k], 0.0, "{v:?}");
    }
}

#[test]
fn imu_noise_matches_its_densities_and_a_resting_box_reads_g() {
    let ws = Workspace::new();
    // A box resting on the ground, IMU at 500 Hz in a 1 kHz world with noise.
    let b = ws.write(
        "box.json",
        r#"{ "bodies": [ { "name": "b", "mass": 2.0,
              "colliders": [ { "shape": { "box": { "size": [0.4, 0.4, 0.2] } } } ] } ],
            "sensors": [ { "name": "imu", "library": "libssx_sensors.so", "plugin": "imu",
              "descriptor": { "rate_divider": 2, "accel_noise_density": 0.002, "gyro_noise_density": 0.0002 } } ] }"#,
    );
    let s = on_ground(
        &ws,
        0.001,
        &format!(
            r#"{{ "name": "b", "artifact": "{}", "pose": {{ "position": [0, 0, 0.1] }} }}"#,
            b.display()
        ),
    );
    let mut env = build_fast(&s, 1).unwrap();
    step_n(&mut env, 1000); // settle
    let (mut az, mut gx) = (Vec::new(), Vec::new());
    let mut last_step = 0;
    for _ in 0..20_000 {
        env.step().unwrap();
        let r = env.reading("b", "imu").unwrap();
        if r.step() != last_step {
            // A new sample every second step.
            assert!(last_step == 0 || r.step() - last_step == 2);
            last_step = r.step();
            az.push(r.values()[2]);
            gx.push(r.values()[3]);
        }
    }
    let stats = |x: &[f64]| {
        let m = x.iter().sum::<f64>() / x.len() as f64;
        let var = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() - 1) as f64;
        (m, var.sqrt())
    };
    let dt: f64 = 0.002;
    let (m, s) = stats(&az);
    let sigma = 0.002 / dt.sqrt();
    assert!((s / sigma - 1.0).abs() < 0.05, "accel std {s} vs {sigma}");
    assert!(
        (m - G).abs() < 4.0 * sigma / (az.len() as f64).sqrt() + 1e-3,
        "mean {m}"
    );
    let (m, s) = stats(&gx);
    let sigma = 0.0002 / dt.sqrt();
    assert!((s / sigma - 1.0).abs() < 0.05, "gyro std {s} vs {sigma}");
    assert!(
        m.abs() < 4.0 * sigma / (gx.len() as f64).sqrt() + 1e-4,
        "mean {m}"
    );
}

fn range_probe(ws: &Workspace, height: f64, obstacle: &str) -> ssx_core::Environment {
    let p = probe(
        ws,
        r#"[{ "name": "range", "library": "libssx_sensors.so", "plugin": "range",
              "descriptor": { "count": 1, "fov": 0.1, "max_range": 5.0 } }]"#,
    );
    let s = scene(
        ws,
        0.01,
        &format!(
            r#"{{ "name": "p", "artifact": "{p}", "pose": {{ "position": [0, 0, {height}] }} }}, {obstacle}"#
        ),
    );
    let mut env = build_fast(&s, 1).unwrap();
    step_n(&mut env, 2);
    env
}

#[test]
fn a_range_sensor_two_metres_from_a_wall_reads_two_metres() {
    let ws = Workspace::new();
    // The wall is 0.1 m thick: its near face is at x = 2.
    let wall = format!(
        r#"{{ "name": "wall", "artifact": "{}", "pose": {{ "position": [2.05, 0, 0], "rpy": [0, 0, 1.5707963267948966] }} }}"#,
        library("wall.json")
    );
    let env = range_probe(&ws, 0.25, &wall);
    let r = values(&env, "p", "range");
    assert!((r[0] - 2.0).abs() < 0.01, "{r:?}");
    // Above the wall (0.5 m high) nothing is hit: the maximum range.
    let env = range_probe(&Workspace::new(), 0.8, &wall);
    assert_eq!(values(&env, "p", "range"), vec![5.0]);
}

#[test]
fn a_range_sensor_below_a_table_top_sees_past_it_and_above_sees_it() {
    let table = format!(
        r#"{{ "name": "table", "artifact": "{}", "pose": {{ "position": [2.0, 0, 0] }} }}"#,
        library("table.json")
    );
    // The top spans x = 1.4..2.6 at 0.60..0.64 m; the ray at y = 0 passes between the legs.
    let below = range_probe(&Workspace::new(), 0.3, &table);
    assert_eq!(values(&below, "p", "range"), vec![5.0]);
    let level = range_probe(&Workspace::new(), 0.62, &table);
    let r = values(&level, "p", "range");
    assert!((r[0] - 1.4).abs() < 0.01, "{r:?}");
}

#[test]
fn neighbours_report_relative_state_within_radius_and_line_of_sight() {
    let ws = Workspace::new();
    let p = probe(
        &ws,
        r#"[{ "name": "all", "library": "libssx_sensors.so", "plugin": "neighbours", "descriptor": { "radius": 2.5 } },
            { "name": "seen", "library": "libssx_sensors.so", "plugin": "neighbours", "descriptor": { "radius": 2.5, "line_of_sight": true } }]"#,
    );
    let ball = library("ball.json");
    let s = ws.write(
        "scene.json",
        &format!(
            r#"{{ "timestep": 0.01, "gravity": [0, 0, 0], "artifacts": [
                {{ "name": "p", "artifact": "{p}", "pose": {{ "position": [0, 0, 1] }} }},
                {{ "name": "near", "artifact": "{ball}", "pose": {{ "position": [1, 0, 1] }} }},
                {{ "name": "hidden", "artifact": "{ball}", "pose": {{ "position": [0, -2, 1] }} }},
                {{ "name": "far", "artifact": "{ball}", "pose": {{ "position": [0, 4, 1] }} }},
                {{ "name": "wall", "artifact": "{}", "pose": {{ "position": [0, -1, 0.5] }} }} ] }}"#,
            library("wall.json")
        ),
    );
    let mut env = build_fast(&s, 1).unwrap();
    step_n(&mut env, 1);
    let id = |name: &str| env.artifacts().iter().position(|a| a.name == name).unwrap() as f64;
    let all = values(&env, "p", "all");
    assert_eq!(all[0], 2.0, "{all:?}");
    assert_eq!(all[1], id("near"));
    assert!(
        (all[2] - 1.0).abs() < 1e-6 && all[3].abs() < 1e-6 && all[4].abs() < 1e-6,
        "{all:?}"
    );
    assert_eq!(all[8], id("hidden"));
    assert!((all[10] + 2.0).abs() < 1e-6, "{all:?}");
    let seen = values(&env, "p", "seen");
    assert_eq!(seen.len(), 8, "{seen:?}");
    assert_eq!(seen[1], id("near"));
}

#[test]
fn a_contact_sensor_on_a_resting_box_feels_its_weight_on_the_ground() {
    let ws = Workspace::new();
    let b = ws.write(
        "box.json",
        r#"{ "bodies": [ { "name": "b", "mass": 3.0,
              "colliders": [ { "shape": { "box": { "size": [0.4, 0.4, 0.2] } } } ] } ],
            "sensors": [ { "name": "touch", "library": "libssx_sensors.so", "plugin": "contact" } ] }"#,
    );
    let s = on_ground(
        &ws,
        0.005,
        &format!(
            r#"{{ "name": "b", "artifact": "{}", "pose": {{ "position": [1, 2, 0.5] }} }}"#,
            b.display()
        ),
    );
    let mut env = build_fast(&s, 1).unwrap();
    step_n(&mut env, 10);
    assert_eq!(values(&env, "b", "touch")[0], 0.0, "in the air: no contact");
    step_n(&mut env, 400);
    let v = values(&env, "b", "touch");
    assert_eq!(v[0], 1.0, "{v:?}");
    assert_eq!(v[2], 0.0, "the ground is artifact 0");
    assert!((v[1] - 3.0 * G).abs() < 0.02 * 3.0 * G, "|F| {v:?}");
    assert!((v[9] - 3.0 * G).abs() < 0.02 * 3.0 * G, "upward {v:?}");
    assert!(
        (v[4] - 1.0).abs() < 0.05 && (v[5] - 2.0).abs() < 0.05 && v[6].abs() < 0.01,
        "point {v:?}"
    );
}

#[test]
fn a_pose_sensor_with_latency_reports_the_state_that_many_steps_ago() {
    let ws = Workspace::new();
    let b = ws.write(
        "ball.json",
        r#"{ "bodies": [ { "name": "b", "mass": 1.0,
              "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ],
            "sensors": [ { "name": "late", "library": "libssx_sensors.so", "plugin": "pose", "descriptor": { "latency": 3 } },
                        { "name": "noisy", "library": "libssx_sensors.so", "plugin": "pose", "descriptor": { "position_noise": 0.01 } } ] }"#,
    );
    let s = scene(
        &ws,
        0.01,
        &format!(
            r#"{{ "name": "b", "artifact": "{}", "pose": {{ "position": [0, 0, 100] }} }}"#,
            b.display()
        ),
    );
    let mut env = build_fast(&s, 1).unwrap();
    let mut truth = Vec::new();
    let mut noise = Vec::new();
    for _ in 0..2000 {
        env.step().unwrap();
        truth.push(state_of(&env, "b").pose.translation.vector.z);
        noise.push(values(&env, "b", "noisy")[2] - truth.last().unwrap());
        if truth.len() > 3 {
            assert_eq!(values(&env, "b", "late")[2], truth[truth.len() - 4]);
        }
    }
    let sd = (noise.iter().map(|x| x * x).sum::<f64>() / noise.len() as f64).sqrt();
    assert!((sd / 0.01 - 1.0).abs() < 0.08, "noise std {sd}");
}

#[test]
fn a_diffdrive_robot_at_half_a_metre_per_second_for_two_seconds_travels_one_metre() {
    let ws = Workspace::new();
    let s = on_ground(
        &ws,
        0.01,
        &format!(
            r#"{{ "name": "r", "artifact": "{}", "pose": {{ "position": [1, 1, 0.12], "rpy": [0, 0, 0.7853981633974483] }},
                 "overrides": {{ "driver": {{ "behaviour": {{ "velocity": {{ "linear": 0.5, "angular": 0 }} }} }} }} }}"#,
            library("pioneer.json")
        ),
    );
    let mut env = build_fast(&s, 1).unwrap();
    let start = position(&env, "r");
    // The first command is applied before the second step: 2 s of driving takes 201 steps.
    step_n(&mut env, 201);
    let p = position(&env, "r");
    let d = ((p[0] - start[0]).powi(2) + (p[1] - start[1]).powi(2)).sqrt();
    assert!((d - 1.0).abs() < 0.02, "travelled {d} m to {p:?}");
    assert!(
        ((p[1] - start[1]) / (p[0] - start[0]) - 1.0).abs() < 0.01,
        "heading kept: {p:?}"
    );
    assert!((p[2] - 0.12).abs() < 1e-6, "planar: {p:?}");
}

#[test]
fn twenty_robots_dispersing_from_a_cluster_end_farther_apart_than_their_range() {
    let ws = Workspace::new();
    let range = 1.0;
    let s = on_ground(
        &ws,
        0.01,
        &format!(
            r#"{{ "name": "r", "artifact": "{}", "pose": {{ "position": [0, 0, 0.12] }},
                 "replicate": {{ "grid": {{ "count": 20, "columns": 5, "spacing": [0.6, 0.6] }} }},
                 "overrides": {{ "sensors": {{ "range": {{ "count": 24, "max_range": {range}, "rate_divider": 10, "stagger": true }} }} }} }}"#,
            library("pioneer.json")
        ),
    );
    let mut env = build_fast(&s, 2).unwrap();
    step_n(&mut env, 6000);
    let p: Vec<[f64; 3]> = (0..20).map(|i| position(&env, &format!("r_{i}"))).collect();
    let mut closest = f64::INFINITY;
    for i in 0..20 {
        for j in i + 1..20 {
            closest =
                closest.min(((p[i][0] - p[j][0]).powi(2) + (p[i][1] - p[j][1]).powi(2)).sqrt());
        }
    }
    assert!(closest > range, "closest pair {closest} m apart after 60 s");
}

#[test]
fn the_door_opens_when_a_robot_comes_near_and_closes_after_the_timeout() {
    let ws = Workspace::new();
    // The robot drives along y = 0 from x = -4 at 0.5 m/s; the door stands beside its path at
    // (0, 1.2), opening along x. Range 1.5 m, closes 3 s after the robot left.
    let s = on_ground(
        &ws,
        0.01,
        &format!(
            r#"{{ "name": "r", "artifact": "{}", "pose": {{ "position": [-4, 0, 0.12] }},
                 "overrides": {{ "driver": {{ "behaviour": {{ "velocity": {{ "linear": 0.5, "angular": 0 }} }} }} }} }},
               {{ "name": "door", "artifact": "{}", "pose": {{ "position": [0, 1.2, 0] }} }}"#,
            library("pioneer.json"),
            library("door.json")
        ),
    );
    let mut env = build_fast(&s, 1).unwrap();
    let opening = |env: &ssx_core::Environment| position(env, "door")[0];
    let mut opened_at = None;
    let mut closed_at = None;
    let mut left_at = None;
    for step in 1..=4000 {
        env.step().unwrap();
        let t = step as f64 * 0.01;
        let r = position(&env, "r");
        // The robot's nearest point to the door's closed position (0, 1.2, 0.5).
        let near = (r[0].abs() - 0.225).max(0.0).hypot(1.2 - 0.19 - 0.5) < 1.5;
        if opened_at.is_none() {
            if opening(&env) > 0.99 {
                opened_at = Some(t);
            } else if t < 4.0 {
                assert!(opening(&env).abs() < 1e-6, "opened early at {t}");
            }
        }
        if opened_at.is_some() && !near && left_at.is_none() && r[0] > 0.0 {
            left_at = Some(t);
        }
        if left_at.is_some() && closed_at.is_none() && opening(&env).abs() < 0.01 {
            closed_at = Some(t);
        }
    }
    let (opened, left, closed) = (
        opened_at.unwrap(),
        left_at.unwrap(),
        closed_at.expect("closed"),
    );
    assert!(opened < 8.0, "opened at {opened}");
    // Closing starts 3 s after the robot left range and takes 2 s at 0.5 m/s.
    assert!(
        closed - left > 3.0 && closed - left < 5.3,
        "left {left}, closed {closed}"
    );
}

#[test]
fn a_pose_sensor_with_jitter_and_drops_reports_states_within_its_latency_window_in_order() {
    let ws = Workspace::new();
    let b = ws.write(
        "ball.json",
        r#"{ "bodies": [ { "name": "b", "mass": 1.0,
              "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ],
            "sensors": [ { "name": "jittery", "library": "libssx_sensors.so", "plugin": "pose", "descriptor": { "latency": 2, "jitter": 3 } },
                        { "name": "lossy", "library": "libssx_sensors.so", "plugin": "pose", "descriptor": { "drop": 0.3 } } ] }"#,
    );
    let s = scene(
        &ws,
        0.01,
        &format!(
            r#"{{ "name": "b", "artifact": "{}", "pose": {{ "position": [0, 0, 1000] }} }}"#,
            b.display()
        ),
    );
    let mut env = build_fast(&s, 1).unwrap();
    let mut truth: Vec<f64> = Vec::new();
    let (mut ages, mut fresh) = (Vec::new(), 0);
    let mut last_sample = 0usize;
    for step in 1..=2000u64 {
        env.step().unwrap();
        truth.push(state_of(&env, "b").pose.translation.vector.z);
        if step > 10 {
            // The falling ball's height names the step a reading was taken at.
            let z = values(&env, "b", "jittery")[2];
            let taken = truth.iter().rposition(|t| *t == z).expect("a true state");
            let age = truth.len() - 1 - taken;
            assert!((2..=5).contains(&age), "age {age} at step {step}");
            assert!(taken >= last_sample, "went back in time at step {step}");
            last_sample = taken;
            ages.push(age);
        }
        let lossy = env.reading("b", "lossy").unwrap();
        fresh += usize::from(lossy.step() == step);
    }
    // Every age from 2 to 5 occurs; about 70 % of the frames arrive (binomial σ ≈ 1 %).
    for a in 2..=5 {
        assert!(ages.contains(&a), "age {a} never seen");
    }
    let share = fresh as f64 / 2000.0;
    assert!((share - 0.7).abs() < 0.05, "{share} of frames arrived");
}

fn position(env: &ssx_core::Environment, name: &str) -> [f64; 3] {
    let p = state_of(env, name).pose.translation.vector;
    [p.x, p.y, p.z]
}
