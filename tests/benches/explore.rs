//! The exploration benchmark of BENCHMARKS.md (release): N frontier explorers (the shipped
//! `explorer.json`: a 16-ray bumper ring, a 36-ray 4 m SLAM scanner at 10 Hz, frontier planning
//! once a second) on a 200 m × 200 m generated cave (1 m cells), with comms (8 m, walls cost
//! 2 m each, 5% loss) and map merging once a second, tau = 0.01 s, fast mode, 2 workers. Per N
//! and engine: simulated seconds per wall second, and the simulated time to 50% and 90%
//! explored, within a budget of simulated time.
//!
//! `cargo build --release --workspace && cargo bench -p ssx-tests --bench explore`;
//! SSX_BENCH_SIZES=10,100 limits N, SSX_BENCH_ENGINES=kinematic limits the engines,
//! SSX_BENCH_SECONDS sets the simulated budget (default 900 s; runs stop at 90% explored).

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Instant;

use ssx_tests::{Workspace, build_fast_with, library, registry};

fn list<T>(var: &str, default: &[T]) -> Vec<T>
where
    T: Clone + std::str::FromStr,
    T::Err: std::fmt::Debug,
{
    std::env::var(var).map_or(default.to_vec(), |s| {
        s.split(',').map(|x| x.trim().parse().expect(var)).collect()
    })
}

fn scene(ws: &Workspace, n: usize, engine: &str) -> std::path::PathBuf {
    let cols = (n as f64).sqrt().ceil() as usize;
    let spacing = 0.8;
    let half = (cols as f64 - 1.0) * spacing / 2.0;
    // The spawn disc holds the robots' square with a metre to spare.
    let radius = half * std::f64::consts::SQRT_2 + 1.0;
    ws.write(
        "cave.json",
        &format!(
            r#"{{ "timestep": 0.01, "seed": 8, "engine": "{engine}",
              "map": {{ "cave": {{ "seed": 2024, "size": [200, 200], "fill": 0.45, "smoothing": 5,
                                  "spawn": [100, 100], "spawn_radius": {radius} }},
                       "resolution": 1.0, "height": 0.5 }},
              "extensions": [ {{ "name": "explore", "library": "libssx_explore.so", "plugin": "explore",
                "descriptor": {{ "area": [[0, 0], [200, 200]], "cell": 1.0, "robots": "explorer",
                                 "comms": {{ "range": 8, "walls": {{ "attenuate": 2.0 }}, "loss": 0.05 }},
                                 "slam": {{ "merge_every": 1.0 }}, "log_every": 0 }} }} ],
              "artifacts": [
                {{ "name": "ground", "artifact": "{ground}" }},
                {{ "name": "explorer", "artifact": "{explorer}",
                  "pose": {{ "position": [{x0}, {x0}, 0.1] }},
                  "replicate": {{ "grid": {{ "count": {n}, "columns": {cols}, "spacing": [{spacing}, {spacing}] }} }},
                  "overrides": {{ "driver": {{ "clearance": 0.4 }} }} }} ] }}"#,
            ground = library("ground.json"),
            explorer = library("explorer.json"),
            x0 = 100.0 - half,
        ),
    )
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let budget: f64 =
        std::env::var("SSX_BENCH_SECONDS").map_or(900.0, |s| s.parse().expect("seconds"));
    let reg = registry();
    println!(
        "| engine | N | sim s / wall s | explored 50% at (sim s) | explored 90% at (sim s) | explored at the end | sim s run | wall s |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for engine in list(
        "SSX_BENCH_ENGINES",
        &["kinematic".to_string(), "rapier".to_string()],
    ) {
        for n in list("SSX_BENCH_SIZES", &[10usize, 100, 1000]) {
            let ws = Workspace::new();
            let path = scene(&ws, n, &engine);
            let mut env = build_fast_with(&path, &reg, 2, true).expect("scene builds");
            let start = Instant::now();
            let mut steps = 0u64;
            let metric =
                |env: &ssx_core::Environment, k: &str| env.summary().metrics.get(k).copied();
            while (steps as f64) * 0.01 < budget {
                for _ in 0..100 {
                    env.step().expect("step");
                }
                steps += 100;
                if metric(&env, "explore.explored_90_s").is_some() {
                    break;
                }
            }
            let wall = start.elapsed().as_secs_f64();
            let sim = steps as f64 * 0.01;
            let t = |k| metric(&env, k).map_or("-".to_string(), |v| format!("{v:.0}"));
            println!(
                "| {engine} | {n} | {:.2} | {} | {} | {:.1}% | {sim:.0} | {wall:.0} |",
                sim / wall,
                t("explore.explored_50_s"),
                t("explore.explored_90_s"),
                100.0 * metric(&env, "explore.explored").unwrap_or(0.0),
            );
        }
    }
}
