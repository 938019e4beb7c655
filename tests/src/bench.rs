//! What the end-to-end benchmarks share: a release-build daemon run with its statistics file,
//! a client session to it, and the figures written down.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use zenoh::Wait;

use crate::repo_root;

/// `target/release/ssxd run SCENE --duration 16 --quiet --stats-json STATS`, plugins from the
/// release build.
pub fn release_daemon(scene: &str, stats: &Path) -> Child {
    release_daemon_for(scene, stats, 16.0)
}

/// [`release_daemon`] for `seconds` of simulated time.
pub fn release_daemon_for(scene: &str, stats: &Path, seconds: f64) -> Child {
    release_daemon_with(scene, stats, seconds, &[])
}

/// [`release_daemon_for`] with more arguments (`--engine kinematic`, `--view`, ...).
pub fn release_daemon_with(scene: &str, stats: &Path, seconds: f64, extra: &[&str]) -> Child {
    let ssxd = repo_root().join("target/release/ssxd");
    assert!(
        ssxd.is_file(),
        "build first: cargo build --release --workspace"
    );
    Command::new(ssxd)
        .args([
            "run",
            scene,
            "--duration",
            &seconds.to_string(),
            "--quiet",
            "--stats-json",
        ])
        .arg(stats)
        .args(extra)
        .env("SSX_PLUGIN_PATH", repo_root().join("target/release"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ssxd")
}

/// Waits for the daemon and reads its statistics.
pub fn finish(mut child: Child, stats: &Path) -> Value {
    let status = child.wait().unwrap();
    assert!(status.success(), "ssxd failed: {status}");
    serde_json::from_str(&std::fs::read_to_string(stats).unwrap()).unwrap()
}

/// A client session to the daemon on `port` (retried for up to 30 s while it starts).
pub fn session(port: u16) -> zenoh::Session {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(s) = zenoh::open(crate::daemon::client_config(port)).wait() {
            return s;
        }
        assert!(Instant::now() < deadline, "no daemon on {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `{"samples", "p50_us", "p99_us", "max_us"}` of a set of microseconds.
pub fn percentiles(mut v: Vec<f64>) -> Value {
    if v.is_empty() {
        return json!({"samples": 0});
    }
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    json!({"samples": v.len(), "p50_us": q(0.5), "p99_us": q(0.99), "max_us": q(1.0)})
}

/// The daemon's deadline figures from its statistics.
pub fn deadline(stats: &Value) -> Value {
    json!({
        "steps": stats["steps"],
        "deadline_misses": stats["deadline_misses"],
        "late_wakeups": stats["late_wakeups"],
        "max_lateness_us": stats["max_lateness_us"],
        "lateness_p99_us": stats["lateness_us"]["p99"],
        "step_p50_us": stats["step_time_us"]["p50"],
        "step_p99_us": stats["step_time_us"]["p99"],
    })
}
