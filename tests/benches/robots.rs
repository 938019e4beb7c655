//! The robot benchmarks of BENCHMARKS.md (release):
//!
//! - `formation`: SwarmSimX's Fig. 5 on this machine. N formation quadrotors (IMU, motion
//!   capture, neighbours, 8-ray range ring, flight and formation controllers) among pillars at
//!   tau = 0.02 s, realtime mode, 1000 steps per N: step compute time p50/p90/p99/max and deadline
//!   misses, a box plot (`target/bench/formation.png`), the largest N holding real time.
//! - `dispersal`: Stage's benchmark. N ground robots with a 12-ray, 2 m range ring and the
//!   dispersal controller at 10 Hz, tau = 0.01 s, packed in a walled arena, fast mode, 60 s of
//!   simulated time: simulated seconds per wall second.
//!
//! `cargo bench -p ssx-tests --bench robots [-- formation|dispersal]`; SSX_BENCH_SIZES=1,10
//! limits N; SSX_BENCH_STEPS sets the formation steps; SSX_BENCH_SERIES prints the formation's
//! step time per 50 steps (p50 and max) to stderr.

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::Arc;
use std::time::Instant;

use ssx_core::{Mode, MonotonicClock};
use ssx_tests::{Workspace, build_fast_with, build_with, library, registry};

fn sizes(default: &[usize]) -> Vec<usize> {
    std::env::var("SSX_BENCH_SIZES").map_or(default.to_vec(), |s| {
        s.split(',')
            .map(|x| x.trim().parse().expect("size"))
            .collect()
    })
}

fn formation_scene(ws: &Workspace, n: usize) -> std::path::PathBuf {
    let cols = (n as f64).sqrt().ceil() as usize;
    let half = (cols as f64 - 1.0) * 1.0;
    ws.write(
        "formation.json",
        &format!(
            r#"{{ "timestep": 0.02, "seed": 21, "artifacts": [
              {{ "name": "ground", "artifact": "{ground}" }},
              {{ "name": "quad", "artifact": "{quad}", "pose": {{ "position": [{x0}, {x0}, 0.031] }},
                "replicate": {{ "grid": {{ "count": {n}, "columns": {cols}, "spacing": [2, 2] }} }},
                "overrides": {{ "driver": {{ "formation": {{ "distance": 2.0, "altitude": 1.5, "goal": [{goal}, 0], "safe_distance": 1.2, "max_speed": 1.0 }} }} }} }},
              {{ "name": "pillar", "artifact": "{pillar}", "pose": {{ "position": [{px}, {x0}, 0] }},
                "replicate": {{ "grid": {{ "count": {pillars}, "columns": 3, "spacing": [4, 4] }} }} }} ] }}"#,
            ground = library("ground.json"),
            quad = library("formation-quadrotor.json"),
            pillar = library("pillar.json"),
            x0 = -half,
            goal = half + 20.0,
            px = half + 6.0,
            pillars = 3 * cols.div_ceil(2).max(1),
        ),
    )
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn formation() {
    let steps: usize = std::env::var("SSX_BENCH_STEPS").map_or(1000, |s| s.parse().expect("steps"));
    let reg = registry();
    println!("### Formation (SwarmSimX Fig. 5): tau = 0.02 s, realtime, {steps} steps\n");
    println!("| N | p50 ms | p90 ms | p99 ms | max ms | misses | missed % | holds real time |");
    println!("|---:|---:|---:|---:|---:|---:|---:|:---|");
    let mut boxes = Vec::new();
    let mut largest = None;
    for n in sizes(&[1, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]) {
        let ws = Workspace::new();
        let scene = formation_scene(&ws, n);
        let clock = Arc::new(MonotonicClock::new(std::time::Duration::from_micros(500)));
        let mut env = build_with(
            &scene,
            &reg,
            2,
            Mode::Realtime { factor: 1.0 },
            false,
            clock,
        )
        .expect("formation scene builds");
        let mut times = Vec::with_capacity(steps);
        for _ in 0..steps {
            let r = env.step().expect("step");
            times.push(r.times.total.as_secs_f64() * 1e3);
        }
        if std::env::var("SSX_BENCH_SERIES").is_ok() {
            for (k, c) in times.chunks(50).enumerate() {
                let mut c = c.to_vec();
                c.sort_by(f64::total_cmp);
                eprintln!(
                    "steps {:4}..: p50 {:.2} max {:.2}",
                    k * 50,
                    percentile(&c, 0.5),
                    c[c.len() - 1]
                );
            }
        }
        let misses = env.summary().deadline_misses;
        let mut sorted = times.clone();
        sorted.sort_by(f64::total_cmp);
        let p99 = percentile(&sorted, 0.99);
        let missed = 100.0 * misses as f64 / steps as f64;
        let holds = p99 < 20.0 && missed <= 0.1;
        if holds {
            largest = Some(n);
        }
        println!(
            "| {n} | {:.2} | {:.2} | {p99:.2} | {:.2} | {misses} | {missed:.2} | {} |",
            percentile(&sorted, 0.5),
            percentile(&sorted, 0.9),
            sorted[sorted.len() - 1],
            if holds { "yes" } else { "no" }
        );
        boxes.push((n, sorted));
    }
    println!("\nLargest N holding real time (p99 < 20 ms, <= 0.1% missed): {largest:?}");
    let out = ssx_tests::repo_root().join("target/bench");
    std::fs::create_dir_all(&out).expect("target/bench");
    let path = out.join("formation.png");
    box_plot(&boxes, &path);
    println!("Box plot: {}\n", path.display());
}

fn box_plot(boxes: &[(usize, Vec<f64>)], path: &std::path::Path) {
    use plotters::prelude::*;
    let labels = ssx_tests::fidelity::register_plot_font();
    let root = BitMapBackend::new(path, (1000, 600)).into_drawing_area();
    root.fill(&WHITE).unwrap();
    let y_max = boxes
        .iter()
        .map(|(_, s)| percentile(s, 0.99))
        .fold(25.0f64, f64::max)
        * 1.1;
    // The segmented axis keeps its labels for the chart's lifetime; a bench process draws once.
    let names: &'static [String] = Box::leak(
        boxes
            .iter()
            .map(|(n, _)| n.to_string())
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20);
    if labels {
        builder
            .caption(
                "Step compute time vs number of quadrotors (tau = 20 ms)",
                ("sans-serif", 22),
            )
            .x_label_area_size(40)
            .y_label_area_size(60);
    }
    let mut chart = builder
        .build_cartesian_2d(names.into_segmented(), 0.0f32..y_max as f32)
        .unwrap();
    let mut mesh = chart.configure_mesh();
    if labels {
        mesh.x_desc("quadrotors").y_desc("step compute time (ms)");
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().unwrap();
    for ((_, s), name) in boxes.iter().zip(names) {
        let q = Quartiles::new(&s.iter().map(|x| *x as f32).collect::<Vec<_>>());
        chart
            .draw_series(std::iter::once(Boxplot::new_vertical(
                SegmentValue::CenterOf(name),
                &q,
            )))
            .unwrap();
    }
    chart
        .draw_series(LineSeries::new(
            names.iter().map(|n| (SegmentValue::CenterOf(n), 20.0f32)),
            RED.stroke_width(2),
        ))
        .unwrap();
    root.present().unwrap();
}

fn dispersal_scene(ws: &Workspace, n: usize) -> std::path::PathBuf {
    let cols = (n as f64).sqrt().ceil() as usize;
    let cluster = (cols as f64 - 1.0) * 0.6;
    // The arena leaves each robot about 16 m² once dispersed.
    let side = ((n as f64 * 16.0).sqrt().ceil() as usize).max(8);
    let h = side as f64 / 2.0;
    let wall = library("wall.json");
    let walls = format!(
        r#"{{ "name": "wall_s", "artifact": "{wall}", "pose": {{ "position": [{a}, {m}, 0] }}, "replicate": {{ "grid": {{ "count": {side}, "columns": {side}, "spacing": [1, 1] }} }} }},
           {{ "name": "wall_n", "artifact": "{wall}", "pose": {{ "position": [{a}, {h}, 0] }}, "replicate": {{ "grid": {{ "count": {side}, "columns": {side}, "spacing": [1, 1] }} }} }},
           {{ "name": "wall_w", "artifact": "{wall}", "pose": {{ "position": [{m}, {a}, 0], "rpy": [0, 0, 1.5707963267948966] }}, "replicate": {{ "grid": {{ "count": {side}, "columns": {side}, "spacing": [1, 1] }} }} }},
           {{ "name": "wall_e", "artifact": "{wall}", "pose": {{ "position": [{h}, {a}, 0], "rpy": [0, 0, 1.5707963267948966] }}, "replicate": {{ "grid": {{ "count": {side}, "columns": {side}, "spacing": [1, 1] }} }} }}"#,
        a = -h + 0.5,
        m = -h,
    );
    ws.write(
        "dispersal.json",
        &format!(
            r#"{{ "timestep": 0.01, "seed": 3, "artifacts": [
              {{ "name": "ground", "artifact": "{ground}" }},
              {{ "name": "robot", "artifact": "{robot}", "pose": {{ "position": [{c}, {c}, 0.12] }},
                "replicate": {{ "grid": {{ "count": {n}, "columns": {cols}, "spacing": [0.6, 0.6] }} }},
                "overrides": {{ "driver": {{ "behaviour": {{ "dispersal": {{}} }} }},
                  "sensors": {{ "range": {{ "count": 12, "max_range": 2.0, "rate_divider": 10, "stagger": true }} }} }} }},
              {walls} ] }}"#,
            ground = library("ground.json"),
            robot = library("pioneer.json"),
            c = -cluster / 2.0,
        ),
    )
}

fn dispersal() {
    let reg = registry();
    println!(
        "### Dispersal (Stage's benchmark): 12 rays of 2 m at 10 Hz, tau = 0.01 s, fast mode, 60 s simulated\n"
    );
    println!("| N | wall time s | simulated s per wall s | step p50 ms | step p99 ms |");
    println!("|---:|---:|---:|---:|---:|");
    for n in sizes(&[1, 10, 100, 1000, 10000]) {
        let ws = Workspace::new();
        let scene = dispersal_scene(&ws, n);
        let mut env = build_fast_with(&scene, &reg, 2, false).expect("dispersal scene builds");
        let started = Instant::now();
        for _ in 0..6000 {
            env.step().expect("step");
        }
        let wall = started.elapsed().as_secs_f64();
        let s = env.summary();
        println!(
            "| {n} | {wall:.2} | {:.1} | {:.3} | {:.3} |",
            60.0 / wall,
            s.step_time_us.p50 / 1e3,
            s.step_time_us.p99 / 1e3
        );
    }
    println!();
}

fn main() {
    let which: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let all = which.is_empty();
    if all || which.iter().any(|w| w == "formation") {
        formation();
    }
    if all || which.iter().any(|w| w == "dispersal") {
        dispersal();
    }
}
