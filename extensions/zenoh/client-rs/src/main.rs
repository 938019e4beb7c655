//! Stand-in for a haptic device, in Rust: a handle moving on a circle at 1 kHz for
//! `artifacts/scenes/teleop.json`. Publishes `<prefix>/teleop/handle`, prints the force feedback
//! from `<prefix>/teleop/force` ten times a second and a summary at the end. The same as
//! `clients/teleop_handle.py`.
//!
//!     cargo build --release --workspace && ./target/release/ssx-teleop-handle --duration 10

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use zenoh::Wait;

#[derive(Parser)]
#[command(about = "A haptic-handle stand-in for ssxd's teleop scene")]
struct Args {
    #[arg(long, default_value = "tcp/127.0.0.1:7447")]
    endpoint: String,
    #[arg(long, default_value = "ssx/teleop")]
    prefix: String,
    /// Seconds to run.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Handle samples per second.
    #[arg(long, default_value_t = 1000.0)]
    rate: f64,
    /// Circle radius (m).
    #[arg(long, default_value_t = 0.05)]
    radius: f64,
    /// Seconds per turn.
    #[arg(long, default_value_t = 6.0)]
    period: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let a = Args::parse();
    // Retried for 30 s while the daemon starts.
    let deadline = Instant::now() + Duration::from_secs(30);
    let session = loop {
        let mut c = zenoh::Config::default();
        c.insert_json5("mode", r#""client""#)?;
        c.insert_json5("connect/endpoints", &serde_json::to_string(&[&a.endpoint])?)?;
        c.insert_json5("scouting/multicast/enabled", "false")?;
        match zenoh::open(c).wait() {
            Ok(s) => break s,
            Err(e) if Instant::now() > deadline => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    };

    let last: Arc<Mutex<(u64, Option<serde_json::Value>)>> = Arc::new(Mutex::new((0, None)));
    let sink = Arc::clone(&last);
    let _sub = session
        .declare_subscriber(format!("{}/teleop/force", a.prefix))
        .callback(move |s| {
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&s.payload().to_bytes()) {
                let mut l = sink.lock().unwrap();
                l.0 += 1;
                l.1 = Some(v);
            }
        })
        .wait()?;
    let publisher = session
        .declare_publisher(format!("{}/teleop/handle", a.prefix))
        .encoding(zenoh::bytes::Encoding::APPLICATION_JSON)
        .wait()?;
    let w = std::f64::consts::TAU / a.period;
    let start = Instant::now();
    let (mut sent, mut next_print) = (0u64, 0.1);
    loop {
        let t = start.elapsed().as_secs_f64();
        if t >= a.duration {
            break;
        }
        let (s, c) = (w * t).sin_cos();
        let p = [a.radius * c, a.radius * s, 0.0];
        let v = [-a.radius * w * s, a.radius * w * c, 0.0];
        publisher
            .put(serde_json::json!({"position": p, "velocity": v}).to_string())
            .wait()?;
        sent += 1;
        if t >= next_print {
            next_print += 0.1;
            if let Some(f) = &last.lock().unwrap().1 {
                println!(
                    "t={t:5.2} s  handle=({:+.3}, {:+.3})  force=({:+.2}, {:+.2}, {:+.2}) N  step={}",
                    p[0], p[1], f["force"][0], f["force"][1], f["force"][2], f["step"]
                );
            }
        }
        let next = start + Duration::from_secs_f64(sent as f64 / a.rate);
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    let received = last.lock().unwrap().0;
    println!("summary: sent {sent} handle samples, received {received} force messages");
    session.close().wait()?;
    if received == 0 {
        return Err("no force feedback received".into());
    }
    Ok(())
}
