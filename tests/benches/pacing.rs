//! Pacing precision: realtime runs at 1 kHz and 50 Hz, an empty world and 100 free bodies,
//! each for SSX_BENCH_SECONDS (default 10) of wall time. Lateness is how long after its
//! deadline the next step started. Prints a markdown table.
//!
//! `cargo bench -p ssx-tests --bench pacing` (release). SSX_SPIN_MARGIN_US sets the pacer's
//! spin margin (default 500, as ssxd).

// Rapier allocates small per-body data; after a scene is loaded the system allocator hands it
// out scattered over a fragmented heap, which made stepping 10,000 bodies up to 2x slower.
// mimalloc's size-segregated pages keep it together.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::Arc;
use std::time::Duration;

use ssx_core::{Mode, MonotonicClock};
use ssx_tests::{Workspace, build_with, registry};

fn main() {
    let seconds: f64 = std::env::var("SSX_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    let margin: u64 = std::env::var("SSX_SPIN_MARGIN_US")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500);
    let ws = Workspace::new();
    ws.write(
        "ball.json",
        r#"{ "bodies": [ { "name": "b", "mass": 1.0, "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ] }"#,
    );
    println!("spin margin {margin} us, {seconds} s per row");
    println!(
        "| rate | world | steps | lateness p50 (us) | p99 (us) | p99.9 (us) | max (us) | misses | missed % | late wake-ups | step p50 (us) | wall/sim |"
    );
    println!(
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for (rate, tau) in [(1000, 0.001), (50, 0.02)] {
        for (label, bodies) in [("empty", 0usize), ("100 free bodies", 100)] {
            let artifacts = if bodies == 0 {
                String::new()
            } else {
                format!(
                    r#"{{ "name": "b", "artifact": "ball.json", "pose": {{ "position": [0, 0, 1000] }}, "replicate": {{ "grid": {{ "count": {bodies}, "spacing": [2, 2] }} }} }}"#
                )
            };
            let scene = ws.write(
                &format!("s-{rate}-{bodies}.json"),
                &format!(r#"{{ "timestep": {tau}, "artifacts": [ {artifacts} ] }}"#),
            );
            let clock = Arc::new(MonotonicClock::new(Duration::from_micros(margin)));
            let mut env = build_with(
                &scene,
                &registry(),
                1,
                Mode::Realtime { factor: 1.0 },
                true,
                clock,
            )
            .expect("scene");
            let steps = (seconds / tau).round() as u64;
            let stop = std::sync::atomic::AtomicBool::new(false);
            env.run(Some(steps), &stop, |_, _| {}).unwrap();
            let s = env.summary();
            println!(
                "| {rate} Hz | {label} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {:.3}% | {} | {:.1} | {:.5} |",
                s.steps,
                s.lateness_us.p50,
                s.lateness_us.p99,
                s.lateness_us.p999,
                s.lateness_us.max,
                s.deadline_misses,
                100.0 * s.deadline_misses as f64 / s.steps as f64,
                s.late_wakeups,
                s.step_time_us.p50,
                s.wall_time_s / s.sim_time_s,
            );
        }
    }
}
