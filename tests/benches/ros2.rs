//! The ROS 2 node's cost and latency (issue 23), release build, real time, on this machine's two
//! cores with the daemon, Zenoh and the client together:
//!
//! 1. 100 ground robots dispersing (Pioneers with 12-ray rings) and the rover, τ = 1 ms: with the
//!    node on, `/clock` every step, `/tf` at 50 Hz, every robot's odom and scan at 10 Hz (and the
//!    rover's IMU at 1 kHz and pose at 100 Hz); off, the same scene without the `ros2` block.
//!    Runs interleaved (off, on, off, on, ...); each `SECONDS` of real time. For each: deadline
//!    misses, late wake-ups and step p50/p99; with the node on, what an outside subscriber to
//!    `0/**` received per second, by topic.
//! 2. Command → odometry latency through ROS 2 topics: a `cmd_vel` Twist to the rover at rest,
//!    timed until the first `odom` whose twist shows it moving, 40 times, with odom at 10 Hz
//!    (the configuration above) and at 1 kHz (every step; then only the rover is a ROS robot).
//!
//! ```text
//! cargo build --release --workspace
//! cargo bench -p ssx-tests --bench ros2            # three pairs of runs (-- --pairs N)
//! ```
//!
//! Writes target/bench/ros2.json.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use ssx_ros2::graph::data_key;
use ssx_ros2::msgs::{ODOMETRY, Odometry, TWIST, Twist, Vector3};
use ssx_ros2::types::type_hash;
use ssx_ros2::{Attachment, cdr};
use ssx_tests::bench::{deadline, finish, percentiles, release_daemon_for, session};
use ssx_tests::{Workspace, free_port, library};
use zenoh::Wait;

const SECONDS: f64 = 20.0;
const ROBOTS: usize = 100;

/// The benchmark scene: `ROBOTS` dispersing Pioneers and the rover on the ground, τ = 1 ms.
fn scene(ws: &Workspace, name: &str, port: u16, ros2: Option<Value>) -> String {
    let mut descriptor = json!({
        "mode": "router",
        "prefix": format!("ssx/bench-{name}"),
        "listen": [format!("tcp/127.0.0.1:{port}")],
        "clock": { "every": 0 },
        "stats": { "period": 1.0 },
    });
    if let Some(r) = ros2 {
        descriptor["ros2"] = r;
    }
    let columns = (ROBOTS as f64).sqrt().ceil() as usize;
    let s = json!({
        "name": name,
        "timestep": 0.001,
        "seed": 11,
        "extensions": [ { "name": "zenoh", "library": "libssx_zenoh.so", "plugin": "zenoh",
                          "descriptor": descriptor } ],
        "artifacts": [
            { "name": "ground", "artifact": library("ground.json") },
            { "name": "rover", "artifact": library("rover.json"), "pose": { "position": [-4.0, -4.0, 0.12] },
              "overrides": { "sensors": { "laser": { "rate_divider": 100 }, "mocap": { "rate_divider": 10 } } } },
            { "name": "robot", "artifact": library("pioneer.json"), "pose": { "position": [0.0, 0.0, 0.12] },
              "replicate": { "grid": { "count": ROBOTS, "columns": columns, "spacing": [1.5, 1.5] } },
              "overrides": { "driver": { "behaviour": { "dispersal": {} } },
                             "sensors": { "range": { "count": 12, "max_range": 2.0, "rate_divider": 100, "stagger": true } } } }
        ]
    });
    let path = ws.path().join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&s).unwrap()).unwrap();
    path.display().to_string()
}

fn node(robots: &[&str], odom_rate: f64) -> Value {
    json!({ "node": "ssx", "robots": robots, "clock_every": 1, "tf_rate": 50.0,
            "odom_rate": odom_rate })
}

/// Counts what arrives on `0/**`, by the topic's name, for `seconds` after `wait`.
fn subscriber_rates(s: &zenoh::Session, warm_up: Duration, seconds: f64) -> Value {
    let counts: Arc<Mutex<BTreeMap<String, (u64, u64)>>> = Arc::default();
    let c = Arc::clone(&counts);
    std::thread::sleep(warm_up);
    let sub = s
        .declare_subscriber("0/**")
        .callback(move |sample| {
            // `0/<robot>/<topic>/<type>/<hash>` or `0/<topic>/<type>/<hash>`: by topic, robots
            // together.
            let key = sample.key_expr().as_str();
            let chunks: Vec<&str> = key.split('/').collect();
            let topic = chunks[chunks.len() - 3].to_string();
            let mut m = c.lock().unwrap();
            let e = m.entry(topic).or_default();
            e.0 += 1;
            e.1 += sample.payload().len() as u64;
        })
        .wait()
        .unwrap();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    drop(sub);
    let m = counts.lock().unwrap();
    let mut out = serde_json::Map::new();
    let (mut msgs, mut bytes) = (0, 0);
    for (topic, (n, b)) in m.iter() {
        msgs += n;
        bytes += b;
        out.insert(
            topic.clone(),
            json!({"per_s": *n as f64 / seconds, "bytes_per_s": *b as f64 / seconds}),
        );
    }
    out.insert(
        "all".into(),
        json!({"per_s": msgs as f64 / seconds, "bytes_per_s": bytes as f64 / seconds}),
    );
    Value::Object(out)
}

/// `cmd_vel` to the rover at rest, timed until the first odom that shows it moving; 40 times.
fn latency(s: &zenoh::Session, odom_rate: f64) -> Value {
    let moving: Arc<Mutex<Option<Instant>>> = Arc::default();
    let m = Arc::clone(&moving);
    let _sub = s
        .declare_subscriber(data_key(
            0,
            "/rover/odom",
            ODOMETRY.name,
            &type_hash(&ODOMETRY),
        ))
        .callback(move |sample| {
            if let Ok(o) = cdr::decode::<Odometry>(&sample.payload().to_bytes(), 1 << 16)
                && o.twist.twist.linear.x > 1e-3
            {
                m.lock().unwrap().get_or_insert_with(Instant::now);
            }
        })
        .wait()
        .unwrap();
    let cmd = s
        .declare_publisher(data_key(
            0,
            "/rover/cmd_vel",
            TWIST.name,
            &type_hash(&TWIST),
        ))
        .express(true)
        .wait()
        .unwrap();
    let mut payload = Vec::new();
    cdr::encode(
        &Twist {
            linear: Vector3 {
                x: 0.2,
                ..Vector3::default()
            },
            ..Twist::default()
        },
        &mut payload,
    );
    let mut samples = Vec::new();
    std::thread::sleep(Duration::from_secs(2));
    for n in 1..=40 {
        *moving.lock().unwrap() = None;
        let attachment = Attachment {
            sequence_number: n,
            source_timestamp: 0,
            source_gid: [9; 16],
        };
        let sent = Instant::now();
        cmd.put(payload.clone())
            .attachment(attachment.encode().to_vec())
            .wait()
            .unwrap();
        let deadline = sent + Duration::from_secs(1);
        while Instant::now() < deadline && moving.lock().unwrap().is_none() {
            std::thread::sleep(Duration::from_micros(100));
        }
        if let Some(t) = *moving.lock().unwrap() {
            samples.push((t - sent).as_secs_f64() * 1e6);
        }
        // The command holds 0.5 s; then the rover stops and its odom reads zero again. The
        // pause varies (by a fixed sequence), so that commands do not keep one phase against
        // the odometry's period.
        let jitter = (n as u64 * 37) % 100;
        std::thread::sleep(Duration::from_millis(900 + jitter));
    }
    json!({"odom_rate_hz": odom_rate, "latency": percentiles(samples)})
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let pairs: usize = std::env::args()
        .skip_while(|a| a != "--pairs")
        .nth(1)
        .map_or(3, |n| n.parse().expect("--pairs N"));
    let ws = Workspace::new();
    let mut rows = Vec::new();
    for pair in 0..pairs {
        for on in [false, true] {
            let port = free_port();
            let name = format!("{}-{pair}", if on { "on" } else { "off" });
            let path = scene(
                &ws,
                &name,
                port,
                on.then(|| node(&["rover", "robot*"], 10.0)),
            );
            let stats_path = ws.path().join(format!("{name}-stats.json"));
            let child = release_daemon_for(&path, &stats_path, SECONDS);
            let received = on.then(|| {
                let s = session(port);
                subscriber_rates(&s, Duration::from_secs(3), SECONDS - 6.0)
            });
            let stats = finish(child, &stats_path);
            let mut row = json!({"run": name, "ros2": on, "daemon": deadline(&stats)});
            if let Some(r) = received {
                row["received"] = r;
                row["ros2_published"] = stats["metrics"]["zenoh.ros2_published"].clone();
            }
            println!("{}", serde_json::to_string(&row).unwrap());
            rows.push(row);
        }
    }
    // At 1 kHz only the rover is a ROS robot (101 odometries at 1 kHz would be the benchmark).
    for (odom_rate, robots) in [(10.0, &["rover", "robot*"][..]), (1000.0, &["rover"][..])] {
        let port = free_port();
        let name = format!("latency-{odom_rate}");
        let path = scene(&ws, &name, port, Some(node(robots, odom_rate)));
        let stats_path = ws.path().join(format!("{name}-stats.json"));
        let child = release_daemon_for(&path, &stats_path, 45.0);
        let s = session(port);
        let mut row = latency(&s, odom_rate);
        row["robots"] = json!(robots);
        drop(s);
        let stats = finish(child, &stats_path);
        row["daemon"] = deadline(&stats);
        println!("{}", serde_json::to_string(&row).unwrap());
        rows.push(row);
    }
    let out = ssx_tests::repo_root().join("target/bench/ros2.json");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    ssx_core::write_atomic(
        &out,
        serde_json::to_string_pretty(&rows).unwrap().as_bytes(),
    )
    .unwrap();
    println!("written to {}", out.display());
}
