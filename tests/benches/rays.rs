//! Ray cost (issues 51 and 60): a shipped dispersal scene stepped for a while (the robots spread
//! as in the runs), then every robot's ring of range rays cast from where it is, round after
//! round, on one thread, with no sensor plugin, worker pool or physics step in the way: ray by
//! ray (`cast_ray`, "single") and as one ring query a robot (`cast_rays`, as the range sensor
//! casts, "ring"). Prints ns per ray (p10 / p50 / p90 over the rounds) and a checksum of the
//! hits of each, which two builds that cast alike print the same (and the ring's must equal the
//! single rays': the bench stops if not); and, for the floor under them, the p50 of the same
//! rays' cell walk alone (`ssx_core::spatial::walk` over a grid laid out as the engine lays it
//! out for these scenes, reading no cell) with the cells it crosses.
//!
//! `cargo bench -p ssx-tests --bench rays` (release); SSX_BENCH_SCENES=dispersal-1000 limits
//! the scenes, SSX_BENCH_SECONDS sets the simulated seconds stepped first (default 30),
//! SSX_BENCH_ROUNDS the rounds (default 40), SSX_BENCH_ENGINE the engine (default kinematic);
//! SSX_BENCH_RING_ONLY=1 times the rings alone (the single rays' columns then mean nothing).

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ssx_artifacts::Scene;
use ssx_core::engine::BodyId;
use ssx_core::math::{Point3, Vec3};
use ssx_core::spatial::{Layout, walk};
use ssx_core::{Environment, LatePolicy, Mode, MonotonicClock, NullRenderEngine};
use ssx_tests::{registry, repo_root};

/// The shipped scenes' range ring (`artifacts/scenes/dispersal*.json`): 12 rays of 2 m, 8 cm
/// over the robot's origin, evenly around it.
const RAYS: usize = 12;
const RANGE: f64 = 2.0;
const HEIGHT: f64 = 0.08;
/// The kinematic engine's cell for these scenes: twice the median moving footprint (the
/// Pioneer's 0.45 m), over the arena with its margin.
const CELL: f64 = 0.9;
const ARENA: f64 = 78.0;

fn var<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).map_or(default, |s| s.parse().unwrap_or_else(|_| panic!("{name}")))
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let scenes = std::env::var("SSX_BENCH_SCENES")
        .unwrap_or_else(|_| "dispersal,dispersal-1000,dispersal-10000".into());
    let seconds: f64 = var("SSX_BENCH_SECONDS", 30.0);
    let rounds: usize = var("SSX_BENCH_ROUNDS", 40);
    let engine = std::env::var("SSX_BENCH_ENGINE").unwrap_or_else(|_| "kinematic".into());
    let reg = registry();
    println!(
        "| scene | robots | rays a round | single ns/ray p10 | p50 | p90 | ring ns/ray p10 | p50 | p90 | hits | checksum | walk alone p50 | cells a ray |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|");
    for scene in scenes.split(',').map(str::trim) {
        let path = repo_root().join(format!("artifacts/scenes/{scene}.json"));
        let mut s = Scene::load(&path, &reg).expect("scene loads");
        s.engine = engine.clone();
        let mut env = Environment::build(
            s.config(1, Mode::Fast, LatePolicy::CatchUp, true),
            &reg,
            &s.extensions,
            &s.artifacts,
            Box::new(NullRenderEngine::default()),
            Arc::new(MonotonicClock::new(Duration::ZERO)),
        )
        .expect("scene builds");
        while env.sim_time() < seconds {
            env.step().expect("step");
        }
        // Each robot's rays: origin, directions, its bodies (left out of its own rays).
        let robots: Vec<_> = env
            .artifacts()
            .iter()
            .filter(|a| a.name.starts_with("robot"))
            .map(|a| {
                let pose = env.states()[a.bodies.start as usize].pose;
                let origin = pose * Point3::new(0.0, 0.0, HEIGHT);
                let dirs: Vec<Vec3> = (0..RAYS)
                    .map(|k| {
                        let a = k as f64 * std::f64::consts::TAU / RAYS as f64;
                        pose.rotation * Vec3::new(a.cos(), a.sin(), 0.0)
                    })
                    .collect();
                (origin, dirs, a.bodies.clone())
            })
            .collect();
        let physics = env.engine();
        let mut times = Vec::with_capacity(rounds);
        let mut ring_times = Vec::with_capacity(rounds);
        let (mut hits, mut sum, mut ring_sum) = (0usize, 0.0f64, 0.0f64);
        let mut found = vec![None; RAYS];
        // The two modes take turns round by round, so that a slow spell of the machine falls on
        // both. SSX_BENCH_RING_ONLY=1 casts the single rays in the first round only (for their
        // checksum): a profile of the run is then the rings'.
        let ring_only = std::env::var_os("SSX_BENCH_RING_ONLY").is_some();
        for round in 0..rounds {
            let start = Instant::now();
            for (origin, dirs, own) in &robots {
                if ring_only && round > 0 {
                    break;
                }
                let exclude = |b: BodyId| own.contains(&b.0);
                for d in dirs {
                    let hit = physics.cast_ray(*origin, *d, RANGE, &exclude);
                    if round == 0
                        && let Some(h) = hit
                    {
                        hits += 1;
                        sum += h.distance + h.body.0 as f64;
                    }
                    std::hint::black_box(hit);
                }
            }
            times.push(start.elapsed().as_secs_f64() * 1e9 / (robots.len() * RAYS) as f64);
            let start = Instant::now();
            for (origin, dirs, own) in &robots {
                let exclude = |b: BodyId| own.contains(&b.0);
                physics.cast_rays(*origin, dirs, RANGE, &exclude, &mut found);
                if round == 0 {
                    // Added hit by hit, in the single rays' order.
                    for h in found.iter().flatten() {
                        ring_sum += h.distance + h.body.0 as f64;
                    }
                }
                std::hint::black_box(&found);
            }
            ring_times.push(start.elapsed().as_secs_f64() * 1e9 / (robots.len() * RAYS) as f64);
        }
        assert_eq!(
            sum.to_bits(),
            ring_sum.to_bits(),
            "{scene}: the ring's hits differ from the single rays' ({ring_sum:e} against {sum:e})"
        );
        times.sort_by(f64::total_cmp);
        ring_times.sort_by(f64::total_cmp);
        let (walks, cells) = walk_alone(&robots, rounds);
        println!(
            "| {scene} | {} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {hits} | {sum:.9e} | {:.0} | {cells:.2} |",
            robots.len(),
            robots.len() * RAYS,
            percentile(&times, 0.1),
            percentile(&times, 0.5),
            percentile(&times, 0.9),
            percentile(&ring_times, 0.1),
            percentile(&ring_times, 0.5),
            percentile(&ring_times, 0.9),
            percentile(&walks, 0.5),
        );
    }
}

/// The same rays' cell walks with nothing read in the cells: ns a ray, sorted over the rounds,
/// and the cells a ray crosses.
fn walk_alone(
    robots: &[(Point3, Vec<Vec3>, std::ops::Range<u32>)],
    rounds: usize,
) -> (Vec<f64>, f64) {
    let layout = Layout::covering([-ARENA, -ARENA, ARENA, ARENA], CELL);
    let mut times = Vec::with_capacity(rounds);
    let mut cells = 0usize;
    for _ in 0..rounds {
        let start = Instant::now();
        for (origin, dirs, _) in robots {
            for d in dirs {
                walk(
                    &layout,
                    (origin.x, origin.y),
                    (d.x, d.y),
                    RANGE,
                    |x, y, leave| {
                        cells += 1;
                        std::hint::black_box((x, y, leave));
                        true
                    },
                );
            }
        }
        times.push(start.elapsed().as_secs_f64() * 1e9 / (robots.len() * RAYS) as f64);
    }
    times.sort_by(f64::total_cmp);
    (times, cells as f64 / (rounds * robots.len() * RAYS) as f64)
}
