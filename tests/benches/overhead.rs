//! Core overhead: `Environment::step` in fast mode with N free bodies and no plugins, against a
//! bare rapier3d loop stepping the same bodies in the same process.
//!
//! `cargo bench -p ssx-tests --bench overhead` (release). Prints a markdown table.
//! SSX_BENCH_SIZES=1,100,1000 limits the sizes.

// Rapier allocates small per-body data; after a scene is loaded the system allocator hands it
// out scattered over a fragmented heap, which made stepping 10,000 bodies up to 2x slower.
// mimalloc's size-segregated pages keep it together.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::{Duration, Instant};

use rapier3d::prelude::*;
use ssx_tests::{Workspace, build_fast};

const DT: f64 = 0.01;
const SPACING: f64 = 2.0;

fn grid(i: usize, n: usize) -> (f64, f64) {
    let cols = (n as f64).sqrt().ceil() as usize;
    ((i % cols) as f64 * SPACING, (i / cols) as f64 * SPACING)
}

fn bare_world(n: usize) -> PhysicsWorld {
    let mut w = PhysicsWorld::new();
    w.gravity = Vector::new(0.0, 0.0, -9.81);
    w.integration_parameters.dt = DT as f32;
    let volume = 4.0 / 3.0 * std::f64::consts::PI * 0.1f64.powi(3);
    for i in 0..n {
        let (x, y) = grid(i, n);
        let h = w
            .bodies
            .insert(RigidBodyBuilder::dynamic().translation(Vector::new(x as f32, y as f32, 10.0)));
        let c = ColliderBuilder::ball(0.1).density((1.0 / volume) as f32);
        w.colliders.insert_with_parent(c, h, &mut w.bodies);
    }
    w
}

fn percentile(sorted: &[Duration], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e6
}

fn main() {
    let sizes: Vec<usize> = std::env::var("SSX_BENCH_SIZES")
        .map(|s| {
            s.split(',')
                .map(|x| x.trim().parse().expect("size"))
                .collect()
        })
        .unwrap_or_else(|_| vec![1, 100, 1000, 10_000]);
    let ws = Workspace::new();
    ws.write(
        "ball.json",
        r#"{ "bodies": [ { "name": "b", "mass": 1.0, "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ] }"#,
    );
    println!(
        "| N bodies | bare Rapier p50 (us) | Environment p50 (us) | bare mean (us) | Environment mean (us) | overhead (mean) |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for &n in &sizes {
        let cols = (n as f64).sqrt().ceil() as usize;
        let scene = ws.write(
            &format!("scene-{n}.json"),
            &format!(
                r#"{{ "timestep": {DT}, "artifacts": [ {{ "name": "b", "artifact": "ball.json", "pose": {{ "position": [0, 0, 10] }},
                     "replicate": {{ "grid": {{ "count": {n}, "columns": {cols}, "spacing": [{SPACING}, {SPACING}] }} }} }} ] }}"#
            ),
        );
        let steps = if n >= 10_000 { 100 } else { 400 };
        let rounds = 5;
        let (mut bare, mut env_t) = (Vec::new(), Vec::new());
        // Alternate the two in rounds so that drift of the machine hits both alike.
        for _ in 0..rounds {
            let mut w = bare_world(n);
            for _ in 0..10 {
                w.step();
            }
            for _ in 0..steps {
                let t = Instant::now();
                w.step();
                bare.push(t.elapsed());
            }
            let mut env = build_fast(&scene, 1).expect("scene");
            for _ in 0..10 {
                env.step().unwrap();
            }
            for _ in 0..steps {
                let t = Instant::now();
                env.step().unwrap();
                env_t.push(t.elapsed());
            }
        }
        let mean = |v: &[Duration]| v.iter().sum::<Duration>().as_secs_f64() * 1e6 / v.len() as f64;
        let (bm, em) = (mean(&bare), mean(&env_t));
        bare.sort();
        env_t.sort();
        println!(
            "| {n} | {:.1} | {:.1} | {bm:.1} | {em:.1} | {:+.1}% |",
            percentile(&bare, 0.5),
            percentile(&env_t, 0.5),
            (em / bm - 1.0) * 100.0
        );
    }
}
