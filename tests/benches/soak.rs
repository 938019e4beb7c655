//! The soak (issue 39): the release daemon runs the quickstart at 1 kHz for 10 minutes (or
//! `-- --seconds N`) while every 200 ms a Zenoh client, a live-view client and a ROS 2 session
//! come and go; the daemon's memory, descriptors, threads and Zenoh subscriptions and ROS 2 graph are sampled once
//! a second (`ssx_tests::soak`). Asserts the growth after the first minute (< 1% memory, no
//! growth of the counts' floors) and writes target/bench/soak.json and target/bench/soak.csv.
//!
//! `cargo build --release --workspace && cargo bench -p ssx-tests --bench soak`

use std::time::Duration;

use ssx_tests::repo_root;

fn main() {
    let mut seconds = 600;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--seconds" {
            seconds = args
                .next()
                .and_then(|s| s.parse().ok())
                .expect("--seconds N");
        }
    }
    let release = repo_root().join("target/release");
    assert!(
        release.join("ssxd").is_file(),
        "build first: cargo build --release --workspace"
    );
    let report = ssx_tests::soak::run(&ssx_tests::soak::Options {
        ssxd: release.join("ssxd"),
        plugins: Some(release),
        seconds,
        python: ssx_tests::python_for_clients(),
        period: Duration::from_millis(200),
    });
    let warmup = if seconds >= 300 { 60.0 } else { 15.0 };
    let summary = report.summary(warmup);
    let out = repo_root().join("target/bench");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("soak.json"), format!("{summary:#}\n")).unwrap();
    ssx_tests::soak::write_csv(&out.join("soak.csv"), &report.samples).unwrap();
    println!("{summary:#}");
    // The quickstart's own misses on this VM, without any client: 0 to 24 in 10,000 steps
    // (BENCHMARKS.md, "Python (issue 38)": the VM's stalls). More than its worst, 0.25%, would be
    // a pattern of the soak's own.
    if let Err(e) = report.check(warmup, 30.0, 0.0025) {
        eprintln!("soak: {e}");
        std::process::exit(1);
    }
    println!("soak: ok");
}
