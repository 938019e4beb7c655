//! Robots from their model files (issue 50), release build:
//!
//! - `load`: the TurtleBot3 Burger scene (ground + ROBOTIS's URDF with its four STL meshes,
//!   4.5 MB, 92,230 triangles) read and built, cold each time (no mesh cache carried over):
//!   the scene load alone and the whole Environment, percentiles of 30 runs;
//! - `swarm`: 100 replicated TurtleBot3s on Rapier (convex hulls for mesh colliders; the Burger's
//!   own collisions are boxes and cylinders), every wheel driven at 4 rad/s by the joints
//!   driver, tau = 0.002 s (`SSX_BENCH_TAU` sets another), 2 workers, fast mode, 20 s
//!   simulated: simulated seconds per wall second;
//! - `arm`: a Panda (seven joints and two fingers) bolted in empty space (no floor for the hand
//!   to strike) tracking a 20 s joint trajectory (waypoints every 0.5 s through ±0.8 rad) with
//!   the joints driver at 1 kHz, one worker, fast mode: the
//!   step's compute time p50/p99/p99.9/max and each arm joint's largest tracking error after
//!   the first 3 s.
//!
//! `cargo bench -p ssx-tests --bench models [-- load|swarm|arm]`

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Instant;

use ssx_tests::{Workspace, build_fast_with, library, registry, repo_root};

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn robots(path: &str) -> String {
    repo_root()
        .join("artifacts/robots")
        .join(path)
        .display()
        .to_string()
}

fn load() {
    let reg = registry();
    let ws = Workspace::new();
    let scene = ws.write(
        "tb3.json",
        &format!(
            r#"{{ "timestep": 0.002, "artifacts": [ {{ "name": "ground", "artifact": "{}" }},
                {{ "name": "tb3", "artifact": "{}" }} ] }}"#,
            library("ground.json"),
            robots("turtlebot3_description/urdf/turtlebot3_burger.urdf")
        ),
    );
    let (mut scene_ms, mut env_ms) = (Vec::new(), Vec::new());
    for _ in 0..30 {
        let t = Instant::now();
        let s = ssx_artifacts::Scene::load(&scene, &reg).expect("loads");
        scene_ms.push(t.elapsed().as_secs_f64() * 1e3);
        drop(s);
        let t = Instant::now();
        let env = build_fast_with(&scene, &reg, 2, false).expect("builds");
        env_ms.push(t.elapsed().as_secs_f64() * 1e3);
        drop(env);
    }
    scene_ms.sort_by(f64::total_cmp);
    env_ms.sort_by(f64::total_cmp);
    println!("### Loading TurtleBot3 Burger (URDF + 4 STL meshes), 30 cold loads\n");
    println!("| what | p50 ms | p90 ms | max ms |");
    println!("|---|---:|---:|---:|");
    for (what, v) in [
        ("scene load (URDF, meshes, bodies)", &scene_ms),
        ("whole Environment (load + build + plugins)", &env_ms),
    ] {
        println!(
            "| {what} | {:.1} | {:.1} | {:.1} |",
            percentile(v, 0.5),
            percentile(v, 0.9),
            v[v.len() - 1]
        );
    }
    println!();
}

fn swarm() {
    let tau: f64 = std::env::var("SSX_BENCH_TAU").map_or(0.002, |s| s.parse().expect("tau"));
    let reg = registry();
    let ws = Workspace::new();
    let tb3 = ws.write(
        "tb3.json",
        &format!(
            r#"{{ "model": {{ "file": "{}" }},
                "driver": {{ "library": "libssx_driver_joints.so", "plugin": "joints",
                  "descriptor": {{ "mode": "velocity", "damping": 1.0, "schedule": [ {{ "time": 0, "values": [4.0, 4.0] }} ] }} }} }}"#,
            robots("turtlebot3_description/urdf/turtlebot3_burger.urdf")
        ),
    );
    let scene = ws.write(
        "swarm.json",
        &format!(
            r#"{{ "timestep": {tau}, "artifacts": [ {{ "name": "ground", "artifact": "{}" }},
                {{ "name": "tb3", "artifact": "{}", "pose": {{ "position": [-4.5, -4.5, 0] }},
                  "replicate": {{ "grid": {{ "count": 100, "columns": 10, "spacing": [1, 1] }} }} }} ] }}"#,
            library("ground.json"),
            tb3.display()
        ),
    );
    let mut env = build_fast_with(&scene, &reg, 2, false).expect("builds");
    let steps = (20.0 / tau).round() as usize;
    let t = Instant::now();
    let mut step_us = Vec::with_capacity(steps);
    for _ in 0..steps {
        let s = Instant::now();
        env.step().expect("step");
        step_us.push(s.elapsed().as_secs_f64() * 1e6);
    }
    let wall = t.elapsed().as_secs_f64();
    step_us.sort_by(f64::total_cmp);
    let x: f64 = (0..100)
        .map(|k| {
            let info = env.artifact(&format!("tb3_{k}")).expect("replica");
            env.states()[info.bodies.start as usize].pose.translation.x
        })
        .sum::<f64>()
        / 100.0;
    println!(
        "### 100 TurtleBot3s on Rapier, wheels at 4 rad/s, tau = {tau} s, 2 workers, {steps} steps\n"
    );
    println!(
        "| simulated s | wall s | real-time factor | step p50 us | step p99 us | mean x after (m, from -4.5 + column) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {:.1} | {wall:.2} | {:.1} | {:.0} | {:.0} | {x:.2} |\n",
        steps as f64 * tau,
        steps as f64 * tau / wall,
        percentile(&step_us, 0.5),
        percentile(&step_us, 0.99)
    );
}

/// The arm's joints swing about these angles (rad), inside the Panda's limits (joint 4 runs
/// from -3.07 to -0.07, joint 6 from -0.02 to 3.75).
const MID: [f64; 7] = [0.0, 0.0, 0.0, -1.5, 0.0, 1.5, 0.0];

fn arm() {
    let reg = registry();
    let ws = Workspace::new();
    // Waypoints every 0.5 s: joint k swings ±0.8 rad about MID[k] (the fingers ±0.015 m about
    // 0.02 m) on a sine of period 4 + k s, growing in over the first 2 s.
    let points: Vec<String> = (0..=40)
        .map(|i| {
            let t = i as f64 * 0.5;
            let v: Vec<String> = (0..9)
                .map(|k| {
                    let (amp, mid) = if k < 7 { (0.8, MID[k]) } else { (0.015, 0.02) };
                    let w = std::f64::consts::TAU / (4.0 + k as f64);
                    format!("{:.6}", mid + amp * (w * t).sin() * (t / 2.0).min(1.0))
                })
                .collect();
            format!(r#"{{ "time": {t}, "values": [{}] }}"#, v.join(", "))
        })
        .collect();
    let arm = ws.write(
        "panda.json",
        &format!(
            r#"{{ "model": {{ "file": "{}", "base": "fixed" }},
                "driver": {{ "library": "libssx_driver_joints.so", "plugin": "joints",
                  "descriptor": {{ "stiffness": 10000, "damping": 600, "schedule": [{}] }} }},
                "sensors": [ {{ "name": "joints", "library": "libssx_sensors.so", "plugin": "joints" }} ] }}"#,
            robots("franka_panda/panda.urdf"),
            points.join(", ")
        ),
    );
    let scene = ws.write(
        "arm.json",
        &format!(
            r#"{{ "timestep": 0.001, "artifacts": [ {{ "name": "arm", "artifact": "{}" }} ] }}"#,
            arm.display()
        ),
    );
    let mut env = build_fast_with(&scene, &reg, 1, false).expect("builds");
    let steps = 20_000;
    let mut step_us = Vec::with_capacity(steps);
    let mut worst = [0.0f64; 7];
    let interp = |t: f64, k: usize| {
        let (amp, mid) = if k < 7 { (0.8, MID[k]) } else { (0.015, 0.02) };
        let w = std::f64::consts::TAU / (4.0 + k as f64);
        let at = |t: f64| mid + amp * (w * t).sin() * (t / 2.0).min(1.0);
        // The driver interpolates linearly between the 0.5 s waypoints.
        let (a, b) = ((t / 0.5).floor() * 0.5, (t / 0.5).floor() * 0.5 + 0.5);
        at(a) + (at(b) - at(a)) * (t - a) / 0.5
    };
    for i in 0..steps {
        let s = Instant::now();
        env.step().expect("step");
        step_us.push(s.elapsed().as_secs_f64() * 1e6);
        let t = (i + 1) as f64 * 0.001;
        if t > 3.0 {
            let r = env.reading("arm", "joints").expect("joints").values();
            for k in 0..7 {
                worst[k] = worst[k].max((r[k] - interp(t, k)).abs());
            }
        }
    }
    step_us.sort_by(f64::total_cmp);
    println!("### A Panda tracking a joint trajectory at 1 kHz (one worker, {steps} steps)\n");
    let worst: Vec<String> = worst.iter().map(|w| format!("{w:.3}")).collect();
    println!(
        "| step p50 us | p99 us | p99.9 us | max us | largest error after 3 s, joints 1-7 (rad) |"
    );
    println!("|---:|---:|---:|---:|---:|");
    println!(
        "| {:.1} | {:.1} | {:.1} | {:.1} | {} |\n",
        percentile(&step_us, 0.5),
        percentile(&step_us, 0.99),
        percentile(&step_us, 0.999),
        step_us[step_us.len() - 1],
        worst.join(" ")
    );
}

fn main() {
    let which: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let run = |name: &str| which.is_empty() || which.iter().any(|w| w == name);
    if run("load") {
        load();
    }
    if run("swarm") {
        swarm();
    }
    if run("arm") {
        arm();
    }
}
