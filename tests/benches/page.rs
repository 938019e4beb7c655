//! The live page at swarm scale (BENCHMARKS.md, "The live page at swarm scale"): the shipped
//! dispersal scenes with 100, 1000 and 10,000 robots on the kinematic engine in real time, each
//! run three ways: no view; `--view` with no client; `--view` with the page open in headless
//! Chromium (tests/browser/swarm.mjs, which measures the page's new states drawn a second, how far
//! its picture is behind the daemon and its status bar). Prints one row per run: the daemon's
//! achieved real-time factor, deadline misses and step compute from `--stats-json`, and the
//! page's figures.
//!
//! `cargo build --release --workspace && cargo bench -p ssx-tests --bench page`
//! (needs `npm ci` in tests/browser and /usr/bin/chromium; SSX_BENCH_SECONDS sets each run's
//! length, default 60, at least 45 for the page to be measured after 15 s; SSX_BENCH_ROUNDS the
//! rounds, default 1; SSX_BENCH_SIZES which of 100,1000,10000).

use std::path::PathBuf;
use std::process::{Command, Stdio};

use ssx_tests::bench::{finish, release_daemon_with};
use ssx_tests::{Workspace, repo_root};

/// The shipped scene with `n` robots and its arena's half side.
fn scene(n: u32) -> (PathBuf, f64) {
    let (file, half) = match n {
        100 => ("dispersal.json", 10.0),
        1000 => ("dispersal-1000.json", 63.5),
        10000 => ("dispersal-10000.json", 200.0),
        _ => panic!("no shipped dispersal scene with {n} robots"),
    };
    (repo_root().join("artifacts/scenes").join(file), half)
}

fn main() {
    let env = |k: &str| std::env::var(k).ok();
    let seconds: f64 = env("SSX_BENCH_SECONDS")
        .and_then(|s| s.parse().ok())
        .unwrap_or(60.0);
    let rounds: usize = env("SSX_BENCH_ROUNDS")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let sizes: Vec<u32> = env("SSX_BENCH_SIZES")
        .unwrap_or_else(|| "100,1000,10000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("SSX_BENCH_SIZES: numbers"))
        .collect();
    let ws = Workspace::new();
    println!(
        "| round | robots | variant | achieved RTF | misses | step p50 ms | step p99 ms | page states/s | page pictures/s | behind mean s | behind max s | status bar lag | rays |"
    );
    println!("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|");
    for round in 1..=rounds {
        for &n in &sizes {
            let (path, half) = scene(n);
            for variant in ["no view", "view, no client", "view + page"] {
                let stats = ws
                    .path()
                    .join(format!("{n}-{round}-{}.json", variant.len()));
                let figures = ws.path().join(format!("{n}-{round}-page.json"));
                let extra: &[&str] = match variant {
                    "no view" => &["--engine", "kinematic"],
                    _ => &["--engine", "kinematic", "--view", "--view-port", "18765"],
                };
                let daemon =
                    release_daemon_with(&path.display().to_string(), &stats, seconds, extra);
                let page = (variant == "view + page").then(|| {
                    // Thresholds out of reach of failing: this measures, swarm.mjs's CI run checks.
                    Command::new("node")
                        .args([
                            repo_root()
                                .join("tests/browser/swarm.mjs")
                                .display()
                                .to_string(),
                            "http://127.0.0.1:18766/".into(),
                            ws.path().join(format!("{n}.png")).display().to_string(),
                            half.to_string(),
                            "--min-fps".into(),
                            "0".into(),
                            "--max-behind".into(),
                            "1e9".into(),
                            "--rtf-tol".into(),
                            "1e9".into(),
                            "--json".into(),
                            figures.display().to_string(),
                        ])
                        .stdout(Stdio::null())
                        .stderr(Stdio::inherit())
                        .status()
                });
                let v = finish(daemon, &stats);
                let p: Option<serde_json::Value> = page.and_then(|_| {
                    std::fs::read(&figures)
                        .ok()
                        .and_then(|b| serde_json::from_slice(&b).ok())
                });
                let f = |k: &str, digits: usize| {
                    p.as_ref()
                        .and_then(|p| p[k].as_f64())
                        .map_or("–".into(), |x| format!("{x:.digits$}"))
                };
                let s = |k: &str| {
                    p.as_ref()
                        .and_then(|p| p[k].as_str().map(String::from))
                        .unwrap_or_else(|| "–".into())
                };
                println!(
                    "| {round} | {n} | {variant} | {:.2} | {} | {:.2} | {:.2} | {} | {} | {} | {} | {} | {} |",
                    v["achieved_rt_factor"].as_f64().unwrap(),
                    v["deadline_misses"].as_u64().unwrap(),
                    v["step_time_us"]["p50"].as_f64().unwrap() / 1000.0,
                    v["step_time_us"]["p99"].as_f64().unwrap() / 1000.0,
                    f("states_per_s", 1),
                    f("fps", 1),
                    f("behind_mean_s", 2),
                    f("behind_max_s", 2),
                    s("status_lag"),
                    s("rays"),
                );
            }
        }
    }
}
