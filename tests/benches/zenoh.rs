//! Latency through the Zenoh extension: from a client's publish of a pose to the first state the
//! daemon publishes that reflects it, at 1 kHz, with a Rust client (this process) and the Python
//! one (`extensions/zenoh/clients/latency.py`, when `import zenoh` works). Beside each, the
//! daemon's own deadline statistics, and those of the same scene with no client at all.
//!
//! Release build of everything: `cargo build --release --workspace` first, then
//! `cargo bench -p ssx-tests --bench zenoh` (add `-- --express` for clients that publish with
//! Zenoh's express flag). Writes target/bench/zenoh.json.

use std::collections::HashMap;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use ssx_tests::bench::{deadline, finish, percentiles, release_daemon as daemon, session};
use ssx_tests::{Workspace, free_port, hil_scene, repo_root};
use zenoh::Wait;

const SECONDS: f64 = 10.0;
const RATE: f64 = 1000.0;
const SPACING: f64 = 1e-4;
const START: f64 = -2.0;

/// The Rust client: latencies (µs) and how many poses were superseded.
fn rust_client(port: u16, prefix: &str, express: bool) -> (Vec<f64>, usize) {
    let s = session(port);
    let sent: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
    let got: Arc<Mutex<Vec<f64>>> = Arc::default();
    let (sent2, got2) = (Arc::clone(&sent), Arc::clone(&got));
    let _sub = s
        .declare_subscriber(format!("{prefix}/artifacts/robot/state"))
        .callback(move |sample| {
            let now = Instant::now();
            let v: Value = serde_json::from_slice(&sample.payload().to_bytes()).unwrap();
            let x = v["position"][0].as_f64().unwrap();
            let k = ((x - START) / SPACING).round();
            if (x - (START + k * SPACING)).abs() < SPACING / 4.0
                && let Some(t) = sent2.lock().unwrap().remove(&(k as u64))
            {
                got2.lock().unwrap().push((now - t).as_secs_f64() * 1e6);
            }
        })
        .wait()
        .unwrap();
    // Express: sent at once, not held back to fill a batch.
    let publisher = s
        .declare_publisher(format!("{prefix}/artifacts/robot/pose"))
        .express(express)
        .wait()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let n = (SECONDS * RATE) as u64;
    let t0 = Instant::now();
    for k in 1..=n {
        let payload = format!(
            r#"{{"position": [{}, -1.0, 0.12]}}"#,
            START + k as f64 * SPACING
        );
        sent.lock().unwrap().insert(k, Instant::now());
        publisher.put(payload).wait().unwrap();
        let next = t0 + Duration::from_secs_f64(k as f64 / RATE);
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    std::thread::sleep(Duration::from_millis(200));
    let got = got.lock().unwrap().clone();
    let superseded = n as usize - got.len();
    (got, superseded)
}

fn python_client(port: u16, prefix: &str, express: bool) -> Option<(Vec<f64>, usize)> {
    let ok = Command::new("python3")
        .args(["-c", "import zenoh"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("python3 with eclipse-zenoh not found: skipping the Python client");
        return None;
    }
    let out = Command::new("python3")
        .arg(repo_root().join("extensions/zenoh/clients/latency.py"))
        .args(express.then_some("--express"))
        .args([
            "--endpoint",
            &format!("tcp/127.0.0.1:{port}"),
            "--prefix",
            prefix,
            "--duration",
            &SECONDS.to_string(),
        ])
        .output()
        .expect("run latency.py");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let lat: Vec<f64> = v["latencies_us"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    Some((lat, v["superseded"].as_u64().unwrap() as usize))
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list`
    }
    // `-- --express`: the clients publish with Zenoh's express flag (no batching).
    let express = std::env::args().any(|a| a == "--express");
    let ws = Workspace::new();
    let mut rows = Vec::new();
    for client in ["none", "rust", "python"] {
        let port = free_port();
        let prefix = format!("ssx/bench-{client}");
        let scene = hil_scene(&ws, "virtual-obstacles", port, &prefix, |s| {
            s["extensions"][0]["descriptor"]["artifacts"]["robot"]["state"]["every"] = json!(1);
        });
        let stats_path = ws.path().join(format!("{client}.json"));
        let child = daemon(&scene, &stats_path);
        let measured = match client {
            "none" => None,
            "rust" => Some(rust_client(port, &prefix, express)),
            _ => python_client(port, &prefix, express),
        };
        let stats = finish(child, &stats_path);
        let mut row = json!({"client": client, "express": express, "daemon": deadline(&stats)});
        if let Some((lat, superseded)) = measured {
            row["latency"] = percentiles(lat);
            row["superseded"] = json!(superseded);
        } else if client != "none" {
            continue;
        }
        println!("{}", serde_json::to_string(&row).unwrap());
        rows.push(row);
    }
    let out = repo_root().join("target/bench/zenoh.json");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    ssx_core::write_atomic(
        &out,
        serde_json::to_string_pretty(&rows).unwrap().as_bytes(),
    )
    .unwrap();
    println!("written to {}", out.display());
}
