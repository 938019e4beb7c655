//! What the live view and the recorder cost the real-time loop (BENCHMARKS.md, "Live view and
//! recordings"). Runs the release ssxd on the quickstart (1 kHz) and on 1000 dispersing robots at
//! 50 Hz, each with no view, with `--view` and one page open in Debian's chromium, and with
//! `--record`; prints step compute p50/p99/mean and misses from `--stats-json`, and the MCAP size
//! per simulated minute.
//!
//! `cargo build --release --workspace && cargo bench -p ssx-tests --bench view`
//! (needs `npm ci` in tests/browser and /usr/bin/chromium for the page rows; SSX_BENCH_SECONDS sets
//! the length of each run, default 20; SSX_BENCH_ROUNDS the rounds, default 2).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ssx_tests::{Workspace, repo_root};

fn release_ssxd() -> PathBuf {
    let p = repo_root().join("target/release/ssxd");
    assert!(
        p.is_file(),
        "build first: cargo build --release --workspace"
    );
    p
}

fn dispersal_1000(ws: &Workspace) -> PathBuf {
    let text =
        std::fs::read_to_string(repo_root().join("artifacts/scenes/dispersal.json")).unwrap();
    let lib = repo_root().join("artifacts/library");
    let text = text
        .replace("\"timestep\": 0.01", "\"timestep\": 0.02")
        .replace(
            "\"count\": 100, \"columns\": 10",
            "\"count\": 1000, \"columns\": 32",
        )
        .replace("../library/", &format!("{}/", lib.display()));
    // A wider arena for 1000 robots: about 16 m² each.
    let text = text
        .replace("[-9.5, -10, 0]", "[-63.5, -64, 0]")
        .replace("[-9.5, 10, 0]", "[-63.5, 64, 0]")
        .replace("[-10, -9.5, 0]", "[-64, -63.5, 0]")
        .replace("[10, -9.5, 0]", "[64, -63.5, 0]")
        .replace(
            "\"count\": 20, \"columns\": 20",
            "\"count\": 128, \"columns\": 128",
        )
        .replace("[-2.7, -2.7, 0.12]", "[-9.3, -9.3, 0.12]");
    ws.write("dispersal-1000.json", &text)
}

struct Row {
    scene: &'static str,
    variant: &'static str,
    steps: u64,
    p50: f64,
    p99: f64,
    mean: f64,
    misses: u64,
    mcap_mb_per_min: Option<f64>,
}

fn run(
    scene: &Path,
    name: &'static str,
    variant: &'static str,
    seconds: f64,
    ws: &Workspace,
    round: usize,
) -> Row {
    let stats = ws.path().join(format!("{name}-{variant}-{round}.json"));
    let mcap = ws.path().join(format!("{name}-{variant}-{round}.mcap"));
    let mut args: Vec<String> = vec![
        "run".into(),
        scene.display().to_string(),
        "--duration".into(),
        seconds.to_string(),
        "--stats-json".into(),
        stats.display().to_string(),
        "--quiet".into(),
    ];
    match variant {
        "view + page" => args.extend(["--view".into(), "--view-port".into(), "18765".into()]),
        "record" => args.extend(["--record".into(), mcap.display().to_string()]),
        _ => {}
    }
    let mut daemon = Command::new(release_ssxd())
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let page = (variant == "view + page").then(|| {
        Command::new("node")
            .args([
                repo_root()
                    .join("tests/browser/hold.mjs")
                    .display()
                    .to_string(),
                "http://127.0.0.1:18766/".into(),
                (seconds + 5.0).to_string(),
            ])
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node")
    });
    let status = daemon.wait().unwrap();
    assert!(status.success());
    if let Some(mut p) = page {
        let _ = p.kill();
        let _ = p.wait();
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    let sim = v["sim_time_s"].as_f64().unwrap();
    Row {
        scene: name,
        variant,
        steps: v["steps"].as_u64().unwrap(),
        p50: v["step_time_us"]["p50"].as_f64().unwrap(),
        p99: v["step_time_us"]["p99"].as_f64().unwrap(),
        mean: v["step_time_us"]["mean"].as_f64().unwrap(),
        misses: v["deadline_misses"].as_u64().unwrap(),
        mcap_mb_per_min: (variant == "record")
            .then(|| std::fs::metadata(&mcap).unwrap().len() as f64 / 1e6 / (sim / 60.0)),
    }
}

fn main() {
    let seconds: f64 = std::env::var("SSX_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20.0);
    let rounds: usize = std::env::var("SSX_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let ws = Workspace::new();
    let quick = repo_root().join("artifacts/scenes/quickstart.json");
    let disp = dispersal_1000(&ws);
    println!(
        "| round | scene | variant | steps | step p50 µs | step p99 µs | step mean µs | misses | MCAP MB per simulated minute |"
    );
    println!("|---:|---|---|---:|---:|---:|---:|---:|---:|");
    for round in 1..=rounds {
        for (scene, name) in [(&quick, "quickstart 1 kHz"), (&disp, "1000 robots 50 Hz")] {
            for variant in ["none", "view + page", "record"] {
                let r = run(scene, name, variant, seconds, &ws, round);
                println!(
                    "| {round} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {} | {} |",
                    r.scene,
                    r.variant,
                    r.steps,
                    r.p50,
                    r.p99,
                    r.mean,
                    r.misses,
                    r.mcap_mb_per_min.map_or("–".into(), |m| format!("{m:.1}"))
                );
            }
        }
    }
}
