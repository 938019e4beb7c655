//! The live view and the recordings, with real components: ssxd serving the Foxglove WebSocket
//! protocol to a real WebSocket client, MCAP files read back with the `mcap` crate, and a
//! viewer that never reads on a virtual clock.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use foxglove::schemas::{FrameTransforms, SceneUpdate};
use prost::Message as _;
use ssx_core::{Mode, VirtualClock};
use ssx_tests::{Workspace, build_recorded, build_rendered, library, registry, repo_root, ssxd};
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket, stream::MaybeTlsStream};

fn quickstart() -> PathBuf {
    repo_root().join("artifacts/scenes/quickstart.json")
}

/// A box dropped from 20 m with nothing below it: free fall for the whole run.
fn falling_box(ws: &Workspace) -> PathBuf {
    ws.write(
        "drop.json",
        &format!(
            r#"{{ "timestep": 0.001, "artifacts": [
                {{ "name": "drop", "artifact": "{}", "pose": {{ "position": [0, 0, 20] }} }} ] }}"#,
            library("box.json")
        ),
    )
}

/// Starts ssxd and waits (bounded) until its log has a line containing `marker`; returns the
/// child (killed on drop) and that line.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `ssxd run SCENE --view` on free ports at 50 frames a second for at most 30 s, once it says
/// where the view is.
fn start_view(scene: &std::path::Path) -> (Daemon, String, BufReader<std::process::ChildStderr>) {
    let scene = scene.to_str().expect("a UTF-8 path");
    let args = [
        "run",
        scene,
        "--view",
        "--view-port",
        "0",
        "--view-rate",
        "50",
        "--duration",
        "30",
        "--quiet",
    ];
    start(&args, "live view: open")
}

fn start(args: &[&str], marker: &str) -> (Daemon, String, BufReader<std::process::ChildStderr>) {
    let mut child = Command::new(ssxd())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ssxd");
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let daemon = Daemon(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut line = String::new();
    loop {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "ssxd exited early");
        if line.contains(marker) {
            return (daemon, line, err);
        }
        assert!(Instant::now() < deadline, "ssxd did not log '{marker}'");
    }
}

fn wait_exit(d: &mut Daemon, limit: Duration) -> Option<i32> {
    let started = Instant::now();
    loop {
        if let Some(s) = d.0.try_wait().unwrap() {
            return s.code();
        }
        assert!(started.elapsed() < limit, "ssxd did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(d: &Daemon, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &d.0.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// The WebSocket URL the daemon's "live view: open" line names.
fn ws_url(line: &str) -> String {
    line.split_whitespace()
        .find(|w| w.starts_with("ws://"))
        .expect("the log names the WebSocket URL")
        .to_string()
}

/// A Foxglove WebSocket client (subprotocol foxglove.sdk.v1), with a read timeout.
fn connect(url: &str) -> WebSocket<MaybeTlsStream<TcpStream>> {
    let mut req = url.into_client_request().unwrap();
    req.headers_mut()
        .insert("Sec-WebSocket-Protocol", "foxglove.sdk.v1".parse().unwrap());
    let (ws, _) = tungstenite::connect(req).expect("connect to the view");
    if let MaybeTlsStream::Plain(s) = ws.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    }
    ws
}

/// Reads text messages until the advertisements of every channel in `want` are in; returns
/// topic -> (channel id, schema name).
fn advertised(
    ws: &mut WebSocket<MaybeTlsStream<TcpStream>>,
    want: &[&str],
) -> BTreeMap<String, (u64, String)> {
    let mut channels = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !want.iter().all(|t| channels.contains_key(*t)) {
        assert!(
            Instant::now() < deadline,
            "not advertised: {want:?}, got {channels:?}"
        );
        if let Message::Text(t) = ws.read().expect("read") {
            let v: serde_json::Value = serde_json::from_str(&t).unwrap();
            if v["op"] == "advertise" {
                for c in v["channels"].as_array().unwrap() {
                    channels.insert(
                        c["topic"].as_str().unwrap().to_string(),
                        (
                            c["id"].as_u64().unwrap(),
                            c["schemaName"].as_str().unwrap_or("").to_string(),
                        ),
                    );
                }
            }
        }
    }
    channels
}

fn subscribe(ws: &mut WebSocket<MaybeTlsStream<TcpStream>>, subs: &[(u32, u64)]) {
    let subs: Vec<_> = subs
        .iter()
        .map(|(id, ch)| serde_json::json!({"id": id, "channelId": ch}))
        .collect();
    let msg = serde_json::json!({"op": "subscribe", "subscriptions": subs});
    ws.send(Message::Text(msg.to_string().into())).unwrap();
}

/// The next message. A subscription in `subs` that the server refused as "Unknown channel ID"
/// is sent again first: the Foxglove SDK (0.30.3, `ConnectedClient::advertise_channels`) sends
/// a channel's advertisement before it records the channel as advertised, so a client that
/// subscribes at once can be refused when the server's thread is preempted in between (a CI run
/// lost `/scene` so). It is sent 50 ms later, not at once: a refusal answered at once would
/// be refused again while the server's thread is still preempted, as fast as the two can talk.
/// The refusal is returned too: the caller's deadline bounds the retries.
fn read(ws: &mut WebSocket<MaybeTlsStream<TcpStream>>, subs: &[(u32, u64)]) -> Message {
    let m = ws.read().expect("read");
    if let Some(channel) = refused_channel(&m)
        && let Some(&sub) = subs.iter().find(|s| s.1 == channel)
    {
        std::thread::sleep(Duration::from_millis(50));
        subscribe(ws, &[sub]);
    }
    m
}

/// The channel of an "Unknown channel ID" error status.
fn refused_channel(m: &Message) -> Option<u64> {
    let Message::Text(t) = m else { return None };
    let v: serde_json::Value = serde_json::from_str(t).ok()?;
    if v["op"] != "status" || v["level"] != 2 {
        return None;
    }
    v["message"]
        .as_str()?
        .strip_prefix("Unknown channel ID: ")?
        .parse()
        .ok()
}

/// (subscription id, log time ns, payload) of a binary message-data frame.
fn message_data(m: &Message) -> Option<(u32, u64, Vec<u8>)> {
    let Message::Binary(b) = m else { return None };
    (b.first() == Some(&1)).then(|| {
        (
            u32::from_le_bytes(b[1..5].try_into().unwrap()),
            u64::from_le_bytes(b[5..13].try_into().unwrap()),
            b[13..].to_vec(),
        )
    })
}

#[test]
fn a_websocket_client_sees_the_channels_the_scene_and_a_box_falling_as_free_fall_says() {
    let ws_dir = Workspace::new();
    let scene = falling_box(&ws_dir);
    let (mut d, line, _err) = start_view(&scene);
    let mut ws = connect(&ws_url(&line));
    let channels = advertised(
        &mut ws,
        &["/scene", "/tf", "/rays", "/clock", "/stats", "/log"],
    );
    assert_eq!(channels["/tf"].1, "foxglove.FrameTransforms");
    assert_eq!(channels["/scene"].1, "foxglove.SceneUpdate");
    assert_eq!(channels["/log"].1, "foxglove.Log");
    let subs = [(1, channels["/scene"].0), (2, channels["/tf"].0)];
    subscribe(&mut ws, &subs);

    let mut scene_seen = None;
    let mut falls = Vec::new(); // (simulated time, height)
    let deadline = Instant::now() + Duration::from_secs(20);
    while (scene_seen.is_none() || falls.len() < 20) && Instant::now() < deadline {
        let m = read(&mut ws, &subs);
        let Some((sub, t_ns, payload)) = message_data(&m) else {
            continue;
        };
        match sub {
            1 => scene_seen = Some(SceneUpdate::decode(&payload[..]).unwrap()),
            2 => {
                let tf = FrameTransforms::decode(&payload[..]).unwrap();
                let box_tf = tf
                    .transforms
                    .iter()
                    .find(|t| t.child_frame_id == "drop/box")
                    .expect("a transform for the box");
                assert_eq!(box_tf.parent_frame_id, "world");
                falls.push((t_ns as f64 * 1e-9, box_tf.translation.unwrap().z));
            }
            _ => {}
        }
    }
    // The scene: one entity for the box, frame-locked to its transform, a 0.5 m cube.
    let scene = scene_seen.expect("the scene arrives on subscribing");
    let e = &scene.entities[0];
    assert_eq!(
        (e.id.as_str(), e.frame_id.as_str(), e.frame_locked),
        ("drop/box", "drop/box", true)
    );
    let size = e.cubes[0].size.unwrap();
    assert_eq!((size.x, size.y, size.z), (0.5, 0.5, 0.5));
    // The poses: z = 20 - g t²/2, to within the integrator's O(g·dt·t) (Rapier's symplectic
    // Euler is 0.5·g·dt·t ≈ 0.015 m low at 3 s with dt = 1 ms).
    assert!(falls.len() >= 20, "only {} transforms", falls.len());
    for w in falls.windows(2) {
        assert!(w[1].0 > w[0].0 && w[1].1 < w[0].1, "not falling: {w:?}");
    }
    for &(t, z) in &falls {
        let expected = 20.0 - 0.5 * 9.81 * t * t;
        assert!(
            (z - expected).abs() < 0.01 + 0.5 * 9.81 * 0.001 * t,
            "t={t} z={z} expected {expected}"
        );
    }
    ws.close(None).ok();
    signal(&d, "-TERM");
    assert_eq!(wait_exit(&mut d, Duration::from_secs(10)), Some(0));
}

/// Every message in an MCAP file, by topic: (log time, payload); reads up to the first error
/// (a truncated file) and says whether it read to the end cleanly.
/// Messages by topic: (log time, payload).
type Topics = BTreeMap<String, Vec<(u64, Vec<u8>)>>;

fn read_mcap(path: &Path) -> (Topics, bool) {
    let bytes = std::fs::read(path).expect("the recording exists");
    let mut topics = Topics::new();
    let mut clean = true;
    for m in mcap::MessageStream::new(&bytes).expect("an MCAP file") {
        match m {
            Ok(m) => topics
                .entry(m.channel.topic.clone())
                .or_default()
                .push((m.log_time, m.data.to_vec())),
            Err(_) => {
                clean = false;
                break;
            }
        }
    }
    (topics, clean)
}

#[test]
fn a_recording_has_every_channel_a_pose_per_step_and_ends_at_the_runs_final_state() {
    let dir = Workspace::new();
    let file = dir.path().join("run.mcap");
    let mut env = build_recorded(&quickstart(), &registry(), false, &file).unwrap();
    let steps = 2000;
    ssx_tests::step_n(&mut env, steps);
    let last: Vec<_> = env.states().to_vec();
    let frames: Vec<String> = env
        .artifacts()
        .iter()
        .flat_map(|a| a.body_names.iter().map(move |b| format!("{}/{b}", a.name)))
        .collect();
    drop(env); // finishes the file

    let bytes = std::fs::read(&file).unwrap();
    let summary = mcap::Summary::read(&bytes)
        .unwrap()
        .expect("a finished file has a summary");
    let (topics, clean) = read_mcap(&file);
    assert!(clean);
    for t in [
        "/scene",
        "/tf",
        "/rays",
        "/clock",
        "/readings/quad/imu",
        "/readings/quad/mocap",
        "/readings/robot/range",
    ] {
        assert!(topics.contains_key(t), "no {t} in {:?}", topics.keys());
    }
    let total: usize = topics.values().map(Vec::len).sum();
    assert_eq!(summary.stats.unwrap().message_count as usize, total);
    let tf = &topics["/tf"];
    assert_eq!(tf.len() as u64, steps, "one pose message per step");
    assert_eq!(topics["/clock"].len() as u64, steps);
    // Log times are simulated time: step k at k·τ.
    assert_eq!(tf[0].0, 1_000_000);
    assert_eq!(tf.last().unwrap().0, steps * 1_000_000);
    // The last poses are the run's final state, bit for bit.
    let decoded = FrameTransforms::decode(&tf.last().unwrap().1[..]).unwrap();
    assert_eq!(decoded.transforms.len(), last.len());
    for ((t, s), name) in decoded.transforms.iter().zip(&last).zip(&frames) {
        assert_eq!(&t.child_frame_id, name);
        let p = t.translation.unwrap();
        let v = s.pose.translation.vector;
        assert_eq!((p.x, p.y, p.z), (v.x, v.y, v.z), "{name}");
        let q = t.rotation.unwrap();
        let r = s.pose.rotation.quaternion();
        assert_eq!((q.x, q.y, q.z, q.w), (r.i, r.j, r.k, r.w), "{name}");
    }
    // The quadrotor's IMU reads at its own rate, every reading once.
    let imu = &topics["/readings/quad/imu"];
    let v: serde_json::Value = serde_json::from_slice(&imu[0].1).unwrap();
    assert!(v["specific_force"]["z"].is_number() && v["values"].as_array().unwrap().len() == 6);
}

#[test]
fn a_recording_of_the_camera_scene_carries_its_images_calibration_and_optical_frame() {
    use foxglove::schemas::{CameraCalibration, RawImage};
    let dir = Workspace::new();
    let file = dir.path().join("camera.mcap");
    let scene = repo_root().join("artifacts/scenes/camera.json");
    let mut env = build_recorded(&scene, &registry(), false, &file).unwrap();
    // 30 frames a second at 100 steps a second: a frame every 3 steps, the 10th at step 30.
    ssx_tests::step_n(&mut env, 30);
    let reading = env.reading("rover", "camera").unwrap();
    assert_eq!(reading.step(), 30);
    let last = reading.values().to_vec();
    drop(env); // finishes the file

    let (topics, clean) = read_mcap(&file);
    assert!(clean);
    assert!(
        !topics.contains_key("/readings/rover/camera"),
        "images are not written out as JSON numbers"
    );
    let (w, h) = (320usize, 240usize);
    let images = |topic: &str| -> Vec<(u64, RawImage)> {
        topics[topic]
            .iter()
            .map(|(t, b)| (*t, RawImage::decode(&b[..]).unwrap()))
            .collect()
    };
    let depth = images("/cameras/rover/camera/depth");
    let colour = images("/cameras/rover/camera/image");
    // One message per frame, at the frame's step.
    let times: Vec<u64> = depth.iter().map(|(t, _)| *t).collect();
    assert_eq!(times, (1..=10).map(|k| k * 30_000_000).collect::<Vec<_>>());
    assert_eq!(colour.len(), 10);
    let (_, d) = depth.last().unwrap();
    assert_eq!(
        (d.width, d.height, d.encoding.as_str(), d.step, d.data.len()),
        (320, 240, "32FC1", 1280, w * h * 4)
    );
    assert_eq!(d.frame_id, "rover/camera/optical");
    // The image is the last reading, to the float.
    for (i, px) in d.data.chunks_exact(4).enumerate() {
        let v = f32::from_le_bytes(px.try_into().unwrap());
        let want = last[i] as f32;
        assert!(
            v == want || (v.is_nan() && want.is_nan()),
            "pixel {i}: {v} vs {want}"
        );
    }
    let (_, c) = colour.last().unwrap();
    assert_eq!(
        (c.width, c.height, c.encoding.as_str(), c.step, c.data.len()),
        (320, 240, "rgb8", 960, w * h * 3)
    );
    for (i, px) in c.data.chunks_exact(3).enumerate() {
        assert_eq!(px, ssx_sdk::camera::unpack(last[w * h + i]), "pixel {i}");
    }
    // The calibration: fx = 160 / tan(0.6), centred.
    let cal =
        CameraCalibration::decode(&topics["/cameras/rover/camera/calibration"][9].1[..]).unwrap();
    let fx = 160.0 / 0.6f64.tan();
    assert_eq!((cal.width, cal.height), (320, 240));
    assert!(
        (cal.k[0] - fx).abs() < 1e-9 && (cal.k[4] - fx).abs() < 1e-9,
        "{:?}",
        cal.k
    );
    assert_eq!((cal.k[2], cal.k[5], cal.k[8]), (159.5, 119.5, 1.0));
    assert_eq!(cal.frame_id, "rover/camera/optical");
    // /tf places the optical frame on the rover's body: 0.2 m ahead and 0.15 m up, looking
    // along the body's x tilted 0.15 rad down (its z axis is the mount's x).
    let tf = FrameTransforms::decode(&topics["/tf"].last().unwrap().1[..]).unwrap();
    let t = tf
        .transforms
        .iter()
        .find(|t| t.child_frame_id == "rover/camera/optical")
        .expect("the optical frame is in /tf");
    assert_eq!(t.parent_frame_id, "rover/base");
    let p = t.translation.unwrap();
    assert_eq!((p.x, p.y, p.z), (0.2, 0.0, 0.15));
    let q = t.rotation.unwrap();
    let r =
        nalgebra::UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(q.w, q.x, q.y, q.z));
    let ahead = r * nalgebra::Vector3::z();
    let want = nalgebra::Vector3::new(0.15f64.cos(), 0.0, -0.15f64.sin());
    assert!((ahead - want).norm() < 1e-12, "{ahead:?}");
}

fn count_tf(path: &Path) -> (usize, bool) {
    let (topics, clean) = read_mcap(path);
    (topics.get("/tf").map_or(0, Vec::len), clean)
}

/// The quickstart recorded into `file` in real time, sent `sig` `after` its run started; its
/// exit status (None: killed by the signal) and how long it ran.
fn record_until(file: &Path, after: Duration, sig: &str) -> (Option<i32>, f64) {
    let (mut d, _, _err) = start(
        &[
            "run",
            quickstart().to_str().unwrap(),
            "--record",
            file.to_str().unwrap(),
        ],
        "running scene",
    );
    let started = Instant::now();
    std::thread::sleep(after);
    let alive = started.elapsed().as_secs_f64();
    signal(&d, sig);
    (wait_exit(&mut d, Duration::from_secs(15)), alive)
}

#[test]
fn a_recording_is_finished_on_sigterm_and_still_reads_after_sigkill() {
    let dir = Workspace::new();
    for (sig, name) in [("-TERM", "term.mcap"), ("-KILL", "kill.mcap")] {
        let file = dir.path().join(name);
        // Past the writer's first one-second flush.
        let (code, _) = record_until(&file, Duration::from_millis(2500), sig);
        let bytes = std::fs::read(&file).unwrap();
        let (tf, clean) = count_tf(&file);
        if sig == "-TERM" {
            assert_eq!(code, Some(0));
            let s = mcap::Summary::read(&bytes)
                .unwrap()
                .expect("finished: a summary");
            assert!(clean);
            assert!(tf >= 1500, "{tf} poses after 2.5 s at 1 kHz");
            assert!(!s.chunk_indexes.is_empty());
        } else {
            assert_eq!(code, None, "killed");
            // No footer, but every chunk closed before the kill reads.
            assert!(
                mcap::Summary::read(&bytes).is_err()
                    || mcap::Summary::read(&bytes).unwrap().is_none()
            );
            assert!(!clean, "a killed recording ends mid-file");
            assert!(tf >= 900, "{tf} poses survived a kill after 2.5 s at 1 kHz");
        }
    }
}

/// A number in [0, 1) from a xorshift state.
fn uniform(state: &mut u64) -> f64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

#[test]
fn recordings_killed_at_ten_random_moments_read_back_to_within_a_second_of_the_kill() {
    let dir = Workspace::new();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rng = seed;
    let mut report = Vec::new();
    for k in 0..10 {
        let file = dir.path().join(format!("kill{k}.mcap"));
        let wait = Duration::from_secs_f64(0.05 + 2.95 * uniform(&mut rng));
        let (code, alive) = record_until(&file, wait, "-KILL");
        assert_eq!(code, None, "killed");
        // Readable: the magic, the header and every chunk closed before the kill, then an
        // error where the file was cut.
        let bytes = std::fs::read(&file).unwrap();
        let mut last = 0u64;
        let mut messages = 0;
        for m in mcap::MessageStream::new(&bytes).expect("an MCAP file") {
            match m {
                Ok(m) => {
                    last = last.max(m.log_time);
                    messages += 1;
                }
                Err(_) => break,
            }
        }
        let last = last as f64 / 1e9;
        report.push(format!(
            "kill {k}: {alive:.2} s after the start, {messages} messages, the last at t = {last:.3} s"
        ));
        // Simulated time runs with wall time (real time, x1): what was recorded reaches within
        // a second (the flush) and the scheduling slack of the moment of the kill.
        assert!(
            last >= alive - 1.5 && last <= alive + 0.1,
            "seed {seed}:\n{}",
            report.join("\n")
        );
    }
    eprintln!("{}", report.join("\n"));
}

#[test]
fn the_docs_recover_py_makes_a_complete_file_of_a_killed_recording() {
    let dir = Workspace::new();
    let killed = dir.path().join("killed.mcap");
    let (code, _) = record_until(&killed, Duration::from_millis(1700), "-KILL");
    assert_eq!(code, None, "killed");
    // recover.py as docs/view.md gives it.
    let page = std::fs::read_to_string(repo_root().join("docs/view.md")).unwrap();
    let start_at = page
        .find("```python\n# python3 recover.py")
        .expect("docs/view.md has recover.py");
    let code = &page[start_at + "```python\n".len()..];
    let code = &code[..code.find("```").unwrap()];
    let script = dir.write("recover.py", code);
    let recovered = dir.path().join("recovered.mcap");
    let out = Command::new(ssx_tests::python_for_clients())
        .arg(&script)
        .arg(&killed)
        .arg(&recovered)
        .output()
        .expect("run python");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same messages, in a file with a summary that counts them.
    let (original, clean) = read_mcap(&killed);
    assert!(!clean, "the killed file ends mid-chunk");
    let (copy, clean) = read_mcap(&recovered);
    assert!(clean, "the recovered file reads to its end");
    assert_eq!(original, copy);
    let n: usize = original.values().map(Vec::len).sum();
    assert!(n > 1000, "{n} messages");
    assert!(
        said.contains(&format!("recovered.mcap: {n} messages")),
        "{said}"
    );
    let bytes = std::fs::read(&recovered).unwrap();
    let summary = mcap::Summary::read(&bytes).unwrap().expect("a summary");
    assert_eq!(summary.stats.expect("statistics").message_count, n as u64);
}

#[test]
fn a_viewer_that_never_reads_costs_no_deadline_on_a_virtual_clock() {
    let hub = ssx_view::Hub::new();
    let out = ssx_view::Output::new(
        hub.clone(),
        Some(&ssx_view::ViewOptions {
            port: 0,
            page_port: 0,
            rate: 1000.0,
            backlog: 16,
            ..Default::default()
        }),
        None,
    )
    .unwrap();
    let (url, _) = out.endpoints().unwrap();
    let url = url.to_string();
    let clock = VirtualClock::new();
    let mut env = build_rendered(
        &quickstart(),
        &registry(),
        2,
        Mode::Realtime { factor: 1.0 },
        false,
        Arc::new(clock.clone()),
        Box::new(out),
    )
    .unwrap();
    // A client that subscribes to everything and then never reads again.
    let mut ws = connect(&url);
    let channels = advertised(&mut ws, &["/scene", "/tf", "/rays", "/clock"]);
    let subs: Vec<(u32, u64)> = channels
        .values()
        .enumerate()
        .map(|(i, c)| (i as u32 + 1, c.0))
        .collect();
    subscribe(&mut ws, &subs);
    std::thread::sleep(Duration::from_millis(200));

    let steps = 5000;
    let started = Instant::now();
    ssx_tests::step_n(&mut env, steps);
    assert!(started.elapsed() < Duration::from_secs(60));
    let s = env.summary();
    assert_eq!((s.steps, s.deadline_misses, s.late_wakeups), (steps, 0, 0));
    assert_eq!(s.max_lateness_us, 0.0);
    drop(env);
    // Every step was due at 1 kHz: each frame was either handed over or dropped and counted.
    let r = hub.report();
    assert_eq!(r.live_frames + r.live_dropped, steps);
    // The stuck client really lost messages: the server kept at most its backlog for it.
    if let MaybeTlsStream::Plain(s) = ws.get_ref() {
        s.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
    }
    let mut tf_received = 0;
    let tf_sub = subs
        .iter()
        .position(|&(_, c)| c == channels["/tf"].0)
        .unwrap() as u32
        + 1;
    while let Ok(m) = ws.read() {
        if message_data(&m).is_some_and(|(s, _, _)| s == tf_sub) {
            tf_received += 1;
        }
    }
    assert!(
        (tf_received as u64) < r.live_frames,
        "the client got {tf_received} of {} frames",
        r.live_frames
    );
}

#[test]
fn bad_view_and_record_flags_are_refused_with_one_message() {
    let dir = Workspace::new();
    let existing = dir.write("old.mcap", "keep me");
    let q = quickstart();
    let q = q.to_str().unwrap();
    for (args, message) in [
        (
            vec![
                "run",
                q,
                "--record",
                existing.to_str().unwrap(),
                "--steps",
                "1",
            ],
            format!(
                "--record '{}': the file exists; remove it or name another",
                existing.display()
            ),
        ),
        (
            vec!["run", q, "--view", "--view-rate", "0", "--steps", "1"],
            "view rate must be above 0 and at most 1000 Hz, got 0".to_string(),
        ),
        (
            vec![
                "run",
                q,
                "--record",
                dir.path().join("x.mcap").to_str().unwrap(),
                "--record-every",
                "0",
                "--steps",
                "1",
            ],
            "--record-every must be at least 1".to_string(),
        ),
    ] {
        let out = Command::new(ssxd()).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(&message), "{args:?}: {stderr}");
    }
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep me");
    assert!(!dir.path().join("x.mcap").exists());
    // A scene that loads but fails to build (a driver refuses its descriptor) leaves no
    // recording behind.
    let broken = dir.write(
        "broken.json",
        &format!(
            r#"{{ "timestep": 0.01, "artifacts": [ {{ "name": "x", "artifact": "{}",
                "overrides": {{ "driver": {{ "height": "high" }} }} }} ] }}"#,
            library("hover-box.json")
        ),
    );
    let out_file = dir.path().join("never.mcap");
    let out = Command::new(ssxd())
        .args([
            "run",
            broken.to_str().unwrap(),
            "--record",
            out_file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!out_file.exists());
}

/// The exploration scene with the explore extension's overlays: `/overlays/explore/explored`
/// as a `foxglove.Grid` of RGBA cells (explored white, free but unexplored faint grey), `covered`
/// and, asked for, `heatmap`. Returns (explored cells, free cells) of a grid.
fn explored_cells(grid: &foxglove::schemas::Grid) -> (usize, usize) {
    assert_eq!(
        (grid.cell_stride, grid.row_stride),
        (4, grid.column_count * 4)
    );
    let names: Vec<_> = grid
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.offset))
        .collect();
    assert_eq!(names, [("red", 0), ("green", 1), ("blue", 2), ("alpha", 3)]);
    let cells = grid.data.chunks_exact(4);
    let explored = cells.clone().filter(|c| *c == [255, 255, 255, 110]).count();
    let free = cells.filter(|c| c[3] > 0).count();
    (explored, free)
}

#[test]
fn a_recording_of_an_exploration_carries_its_maps_and_they_agree_with_its_figures() {
    let dir = Workspace::new();
    let file = dir.path().join("explore.mcap");
    let shipped = repo_root().join("artifacts/scenes/exploration.json");
    let mut scene: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&shipped).unwrap()).unwrap();
    scene["extensions"][0]["descriptor"]["view"] =
        serde_json::json!({ "every": 1.0, "heatmap": true, "slam": "explorer_0" });
    let scene = dir.write("exploration.json", &scene.to_string());
    // Relative paths in the shipped scene resolve next to it: write it there under a new name.
    let scene_path =
        shipped.with_file_name(format!("exploration-view-test-{}.json", std::process::id()));
    std::fs::copy(&scene, &scene_path).unwrap();
    let built = build_recorded(&scene_path, &registry(), false, &file);
    std::fs::remove_file(&scene_path).unwrap();
    let mut env = built.unwrap();
    // 5 s at τ = 10 ms: the overlays are drawn at the first step and every second, the last at
    // step 500; a view gets what the extensions drew at the next step's frame.
    ssx_tests::step_n(&mut env, 500);
    let explored = env.summary().metrics["explore.explored"];
    ssx_tests::step_n(&mut env, 1);
    drop(env); // finishes the file

    let (topics, clean) = read_mcap(&file);
    assert!(clean);
    let grids = |topic: &str| -> Vec<(u64, foxglove::schemas::Grid)> {
        topics[topic]
            .iter()
            .map(|(t, b)| (*t, foxglove::schemas::Grid::decode(&b[..]).unwrap()))
            .collect()
    };
    let maps = grids("/overlays/explore/explored");
    // Drawn at 0.01 s, then at 1, 2, 3, 4 and 5 s.
    let times: Vec<u64> = maps.iter().map(|(t, _)| *t).collect();
    assert_eq!(
        times,
        [
            10_000_000,
            1_000_000_000,
            2_000_000_000,
            3_000_000_000,
            4_000_000_000,
            5_000_000_000
        ]
    );
    let (t, last) = maps.last().unwrap();
    assert_eq!(*t, 5_000_000_000);
    // The area is 30 × 20 m in cells of 0.25 m, placed at its corner.
    assert_eq!((last.column_count, last.data.len()), (120, 120 * 80 * 4));
    let corner = last.pose.as_ref().unwrap().position.as_ref().unwrap();
    assert_eq!(
        (corner.x, corner.y, last.cell_size.as_ref().unwrap().x),
        (0.0, 0.0, 0.25)
    );
    let (seen, free) = explored_cells(last);
    assert!(seen > 0 && free > seen, "{seen} of {free}");
    assert_eq!(
        seen as f64 / free as f64,
        explored,
        "the map's share is the extension's figure"
    );
    // The maps only grow.
    let shares: Vec<usize> = maps.iter().map(|(_, g)| explored_cells(g).0).collect();
    assert!(shares.windows(2).all(|w| w[0] <= w[1]), "{shares:?}");
    // explorer_0's SLAM map: walls it has seen (dark red) and floor (blue).
    let slam = grids("/overlays/explore/slam").pop().unwrap().1;
    let count = |colour: [u8; 4]| slam.data.chunks_exact(4).filter(|c| *c == colour).count();
    let (walls, floor) = (count([150, 30, 30, 220]), count([70, 130, 220, 110]));
    assert!(
        walls > 20 && floor > 10 * walls / 2,
        "{walls} wall and {floor} floor cells"
    );
    for topic in ["/overlays/explore/covered", "/overlays/explore/heatmap"] {
        let g = grids(topic);
        assert_eq!(g.len(), 6, "{topic}");
        assert!(
            g.last().unwrap().1.data.chunks_exact(4).any(|c| c[3] > 0),
            "{topic} draws something"
        );
    }
}

#[test]
fn a_websocket_client_receives_the_explored_map_of_a_live_exploration() {
    let (_d, line, _err) = start(
        &[
            "run",
            repo_root()
                .join("artifacts/scenes/exploration.json")
                .to_str()
                .unwrap(),
            "--view",
            "--view-port",
            "0",
            "--duration",
            "60",
            "--quiet",
        ],
        "live view: open",
    );
    let mut ws = connect(&ws_url(&line));
    let topic = "/overlays/explore/explored";
    let channels = advertised(&mut ws, &[topic]);
    assert_eq!(channels[topic].1, "foxglove.Grid");
    let subs = [(1, channels[topic].0)];
    subscribe(&mut ws, &subs);
    let deadline = Instant::now() + Duration::from_secs(20);
    let grid = loop {
        assert!(Instant::now() < deadline, "no explored map in 20 s");
        if let Some((1, _, payload)) = message_data(&read(&mut ws, &subs)) {
            break foxglove::schemas::Grid::decode(&payload[..]).unwrap();
        }
    };
    assert_eq!((grid.column_count, grid.data.len()), (120, 120 * 80 * 4));
    let (seen, free) = explored_cells(&grid);
    assert!(free > 1000 && seen <= free, "{seen} of {free}");
}

/// Calls a Foxglove WebSocket service with a JSON request; returns the response's encoding and
/// payload, or the failure's message.
fn call_service(
    ws: &mut WebSocket<MaybeTlsStream<TcpStream>>,
    service: u32,
    call: u32,
    request: &[u8],
) -> Result<(String, Vec<u8>), String> {
    let mut b = vec![2u8];
    b.extend_from_slice(&service.to_le_bytes());
    b.extend_from_slice(&call.to_le_bytes());
    b.extend_from_slice(&4u32.to_le_bytes());
    b.extend_from_slice(b"json");
    b.extend_from_slice(request);
    ws.send(Message::Binary(b.into())).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(Instant::now() < deadline, "no answer to call {call}");
        match ws.read().expect("read") {
            Message::Binary(b) if b[0] == 3 => {
                let id = u32::from_le_bytes(b[5..9].try_into().unwrap());
                let n = u32::from_le_bytes(b[9..13].try_into().unwrap()) as usize;
                if id == call {
                    let encoding = String::from_utf8(b[13..13 + n].to_vec()).unwrap();
                    return Ok((encoding, b[13 + n..].to_vec()));
                }
            }
            Message::Text(t) => {
                let v: serde_json::Value = serde_json::from_str(&t).unwrap();
                if v["op"] == "serviceCallFailure" && v["callId"] == call {
                    return Err(v["message"].as_str().unwrap().to_string());
                }
            }
            _ => {}
        }
    }
}

/// A pulled frame (`ssx.frame.v1`, docs/view.md): step, time, poses, rays by sensor.
struct Pulled {
    step: u64,
    time: f64,
    poses: Vec<[f32; 7]>,
    rays: Vec<(u32, Vec<u16>)>,
}

fn read_pulled(b: &[u8]) -> Pulled {
    let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    let f64_at = |i: usize| f64::from_le_bytes(b[i..i + 8].try_into().unwrap());
    let f32_at = |i: usize| f32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    assert_eq!(u32_at(0), 2, "version");
    assert_eq!(u32_at(32), 0, "episode: no reset");
    let n = u32_at(4) as usize;
    let poses = (0..n)
        .map(|k| std::array::from_fn(|j| f32_at(40 + 28 * k + 4 * j)))
        .collect();
    let mut i = 40 + 28 * n;
    let m = u32_at(i);
    i += 4;
    let mut rays = Vec::new();
    for _ in 0..m {
        let (sensor, k) = (u32_at(i), u32_at(i + 4) as usize);
        let d = (0..k)
            .map(|r| u16::from_le_bytes(b[i + 8 + 2 * r..i + 10 + 2 * r].try_into().unwrap()))
            .collect();
        rays.push((sensor, d));
        i += 8 + (2 * k).next_multiple_of(4);
    }
    assert_eq!(i, b.len(), "every byte read");
    Pulled {
        step: f64_at(8) as u64,
        time: f64_at(16),
        poses,
        rays,
    }
}

#[test]
fn the_page_pulls_the_newest_state_one_frame_at_a_time_with_its_rays_as_distances() {
    // A box falling from 50 m, and a Pioneer standing still 1.45 m from a wall's face along +x.
    let dir = Workspace::new();
    let scene = dir.write(
        "pull.json",
        &format!(
            r#"{{ "timestep": 0.001, "artifacts": [
                {{ "name": "ground", "artifact": "{ground}" }},
                {{ "name": "drop", "artifact": "{bx}", "pose": {{ "position": [0, 5, 50] }} }},
                {{ "name": "robot", "artifact": "{pioneer}", "pose": {{ "position": [0, 0, 0.12] }},
                  "overrides": {{ "driver": {{ "behaviour": {{ "velocity": {{ "linear": 0, "angular": 0 }} }} }} }} }},
                {{ "name": "wall", "artifact": "{wall}",
                  "pose": {{ "position": [1.5, 0, 0], "rpy": [0, 0, 1.5707963267948966] }} }} ] }}"#,
            ground = library("ground.json"),
            bx = library("box.json"),
            pioneer = library("pioneer.json"),
            wall = library("wall.json"),
        ),
    );
    let (mut d, line, _err) = start_view(&scene);
    let mut ws = connect(&ws_url(&line));
    // The services, as advertised.
    let mut services = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(services.contains_key("/ssx/layout") && services.contains_key("/ssx/frame")) {
        assert!(
            Instant::now() < deadline,
            "services not advertised: {services:?}"
        );
        if let Message::Text(t) = ws.read().expect("read") {
            let v: serde_json::Value = serde_json::from_str(&t).unwrap();
            if v["op"] == "advertiseServices" {
                for s in v["services"].as_array().unwrap() {
                    services.insert(
                        s["name"].as_str().unwrap().to_string(),
                        s["id"].as_u64().unwrap() as u32,
                    );
                }
            }
        }
    }
    let (layout, frame) = (services["/ssx/layout"], services["/ssx/frame"]);

    // The layout: frames by body index, the range sensor's mount and rays.
    let (_, l) = call_service(&mut ws, layout, 1, b"{}").unwrap();
    let l: serde_json::Value = serde_json::from_slice(&l).unwrap();
    let frames: Vec<&str> = l["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    let at = |name: &str| {
        frames
            .iter()
            .position(|f| *f == name)
            .unwrap_or_else(|| panic!("{name} in {frames:?}"))
    };
    let (bx, robot) = (at("drop/box"), at("robot/base"));
    assert_eq!(l["sensors"][0]["path"], "robot/range");
    assert_eq!(l["sensors"][0]["body"], robot);
    let g = &l["geometries"][l["sensors"][0]["geometry"].as_u64().unwrap() as usize];
    assert_eq!(
        (
            g["max_range"].as_f64(),
            g["directions"].as_array().unwrap().len()
        ),
        (Some(3.0), 16)
    );
    assert_eq!(
        (l["rays"]["total"].as_u64(), l["rays"]["shown"].as_u64()),
        (Some(16), Some(16))
    );
    let ahead = g["directions"]
        .as_array()
        .unwrap()
        .iter()
        .position(|v| (v[0].as_f64().unwrap() - 1.0).abs() < 1e-9)
        .expect("a ray along +x");

    // Frames: each newer than the caller's step, the box where free fall puts it, the ray ahead
    // on the wall's face.
    let mut last = 0u64;
    let mut pulled = 0;
    for call in 2..12 {
        let (encoding, b) = call_service(
            &mut ws,
            frame,
            call,
            format!(r#"{{"after": {last}}}"#).as_bytes(),
        )
        .unwrap();
        assert_eq!(encoding, "ssx.frame.v2");
        let f = read_pulled(&b);
        assert!(f.step > last, "step {} after {last}", f.step);
        assert_eq!(f.poses.len(), frames.len());
        assert!((f.time - f.step as f64 * 0.001).abs() < 1e-9);
        let z = f64::from(f.poses[bx][2]);
        let expected = 50.0 - 0.5 * 9.81 * f.time * f.time;
        assert!(
            (z - expected).abs() < 0.01 + 0.5 * 9.81 * 0.001 * f.time,
            "t={} z={z} expected {expected}",
            f.time
        );
        let p = f.poses[robot];
        assert!(
            p[0].abs() < 1e-3 && p[1].abs() < 1e-3,
            "the robot stands still: {p:?}"
        );
        if let Some((_, distances)) = f.rays.iter().find(|(s, _)| *s == 0) {
            assert_eq!(distances.len(), 16);
            let d = f64::from(distances[ahead]) * 3.0 / 65534.0;
            assert!(
                (d - 1.45).abs() < 0.005,
                "the ray ahead reads {d} m, the wall's face is 1.45 m away"
            );
            pulled += 1;
        }
        last = f.step;
    }
    // The first frame carries every sensor read so far; later ones those read since.
    assert!(pulled >= 1, "no rays in ten frames");

    // Bad requests get one message each; the stream goes on.
    assert_eq!(
        call_service(&mut ws, frame, 20, br#"{"after": -1}"#),
        Err(
            r#"/ssx/frame: "after" must be a step number (a whole number from 0), got -1"#
                .to_string()
        )
    );
    let err = call_service(&mut ws, frame, 21, b"after").unwrap_err();
    assert!(
        err.starts_with("/ssx/frame: the request is not JSON: "),
        "{err}"
    );
    let (_, b) = call_service(
        &mut ws,
        frame,
        22,
        format!(r#"{{"after": {last}}}"#).as_bytes(),
    )
    .unwrap();
    assert!(read_pulled(&b).step > last);
    ws.close(None).ok();
    signal(&d, "-TERM");
    assert_eq!(wait_exit(&mut d, Duration::from_secs(10)), Some(0));
}

/// A recording across three resets (issue 49): log times never go back in the file, each reset
/// is a message on `/reset` (episode, step, time, seed, log-time offset), each message's
/// simulated time is its log time less the last reset's offset, and a reset with a new seed (a
/// generated building of other rooms) puts the new world's bodies in the file.
#[test]
fn a_recording_with_three_resets_reads_in_order_and_splits_into_episodes() {
    let ws = Workspace::new();
    let scene = ws.write(
        "building.json",
        &format!(
            r#"{{ "timestep": 0.01, "seed": 3, "engine": "kinematic",
                 "map": {{ "building": {{ "size": [12, 8], "room_size": 4, "door_width": 1.2,
                                        "spawn": [6, 4], "spawn_radius": 1.0 }},
                          "resolution": 0.25, "height": 0.5 }},
                 "artifacts": [
                   {{ "name": "ground", "artifact": "{}" }},
                   {{ "name": "rover", "artifact": "{}", "pose": {{ "position": [6, 4, 0.12] }} }} ] }}"#,
            library("ground.json"),
            library("pioneer.json")
        ),
    );
    let file = ws.path().join("episodes.mcap");
    let mut env = build_recorded(&scene, &registry(), false, &file).unwrap();
    // (steps, then a reset with this seed; None: the scene's own).
    let plan: [(u64, Option<Option<u64>>); 4] = [
        (200, Some(Some(5))),
        (150, Some(None)),
        (100, Some(Some(9))),
        (120, None),
    ];
    let mut walls = Vec::new();
    for (steps, reset) in plan {
        ssx_tests::step_n(&mut env, steps);
        walls.push(env.artifact("map").map(|a| a.bodies.len()));
        if let Some(seed) = reset {
            env.reset(seed).unwrap();
        }
    }
    let last = env.states().to_vec();
    drop(env);

    let bytes = std::fs::read(&file).unwrap();
    let mut all: Vec<(String, u64, Vec<u8>)> = Vec::new();
    for m in mcap::MessageStream::new(&bytes).expect("an MCAP file") {
        let m = m.expect("a finished file reads to its end");
        all.push((m.channel.topic.clone(), m.log_time, m.data.to_vec()));
    }
    // In file order, log times never go back.
    for w in all.windows(2) {
        assert!(
            w[1].1 >= w[0].1,
            "{} at {} ns after {} at {} ns",
            w[1].0,
            w[1].1,
            w[0].0,
            w[0].1
        );
    }
    let json = |d: &[u8]| serde_json::from_slice::<serde_json::Value>(d).unwrap();
    let resets: Vec<serde_json::Value> = all
        .iter()
        .filter(|m| m.0 == "/reset")
        .map(|m| json(&m.2))
        .collect();
    assert_eq!(resets.len(), 3);
    let ns = |s: f64| (s * 1e9).round() as u64;
    let mut offset = 0.0;
    for (k, (r, (steps, seed))) in resets.iter().zip(plan).enumerate() {
        offset += steps as f64 * 0.01;
        assert_eq!(r["episode"], k as u64 + 1, "{r}");
        assert_eq!(r["step"], steps, "{r}");
        assert!(
            (r["time"].as_f64().unwrap() - steps as f64 * 0.01).abs() < 1e-9,
            "{r}"
        );
        // None: the scene's own seed, which the reset to 5 made 5.
        let expected_seed = seed.unwrap().unwrap_or(5);
        assert_eq!(r["seed"], expected_seed, "{r}");
        assert!(
            (r["log_time_offset"].as_f64().unwrap() - offset).abs() < 1e-9,
            "{r}"
        );
    }
    // Episodes by /reset: each clock message's simulated time is its log time less the offset,
    // and steps count from 0 again in each.
    let mut episode = 0usize;
    let mut offset_ns = 0u64;
    let mut clocks = [0u64; 4];
    for (topic, log, data) in &all {
        if topic == "/reset" {
            episode += 1;
            offset_ns = ns(json(data)["log_time_offset"].as_f64().unwrap());
            assert_eq!(*log, offset_ns);
        } else if topic == "/clock" {
            let c = json(data);
            assert_eq!(c["episode"], episode as u64);
            assert_eq!(*log - offset_ns, ns(c["time"].as_f64().unwrap()), "{c}");
            clocks[episode] += 1;
        }
    }
    // Every step of each episode, and the new world's step 0 after each reset.
    assert_eq!(clocks, [200, 151, 101, 121]);
    // The scene: the first, then one per reset deleting the old world's entities; seed 9's
    // building has other walls than seed 5's.
    let scenes: Vec<SceneUpdate> = all
        .iter()
        .filter(|m| m.0 == "/scene")
        .map(|m| SceneUpdate::decode(&m.2[..]).unwrap())
        .collect();
    assert_eq!(scenes.len(), 4);
    assert!(scenes[0].deletions.is_empty());
    for s in &scenes[1..] {
        assert_eq!(s.deletions.len(), scenes[0].entities.len());
    }
    let map_shapes = |s: &SceneUpdate| {
        s.entities
            .iter()
            .filter(|e| e.id.starts_with("map"))
            .map(|e| format!("{:?}", e.cubes))
            .collect::<Vec<_>>()
    };
    assert_ne!(
        map_shapes(&scenes[1]),
        map_shapes(&scenes[0]),
        "seed 5's walls"
    );
    assert_eq!(
        map_shapes(&scenes[2]),
        map_shapes(&scenes[1]),
        "seed 5 again"
    );
    assert_ne!(
        map_shapes(&scenes[3]),
        map_shapes(&scenes[2]),
        "seed 9's walls"
    );
    assert!(walls.iter().all(|w| w.is_some()), "{walls:?}");
    // The last transforms are the final world's, bit for bit.
    let tf = all.iter().rev().find(|m| m.0 == "/tf").unwrap();
    let decoded = FrameTransforms::decode(&tf.2[..]).unwrap();
    assert_eq!(decoded.transforms.len(), last.len());
    for (t, s) in decoded.transforms.iter().zip(&last) {
        let p = t.translation.unwrap();
        let v = s.pose.translation.vector;
        assert_eq!((p.x, p.y, p.z), (v.x, v.y, v.z), "{}", t.child_frame_id);
    }
}

/// The TurtleBot3 Burger's visual meshes on disk: (distinct files by content, triangles of
/// every visual: two tires share nothing but their size).
fn turtlebot3_meshes() -> (Vec<Vec<u8>>, usize) {
    let dir = repo_root().join("artifacts/robots/turtlebot3_description/meshes");
    let files = [
        "bases/burger_base.stl",
        "wheels/left_tire.stl",
        "wheels/right_tire.stl",
        "sensors/lds.stl",
    ];
    let mut distinct: Vec<Vec<u8>> = Vec::new();
    let mut triangles = 0;
    for f in files {
        let b = std::fs::read(dir.join(f)).unwrap();
        triangles += u32::from_le_bytes(b[80..84].try_into().unwrap()) as usize;
        if !distinct.contains(&b) {
            distinct.push(b);
        }
    }
    (distinct, triangles)
}

/// Triangles in a binary STL, checked to be one (its length is its count's).
fn stl_triangles(b: &[u8]) -> usize {
    let n = u32::from_le_bytes(b[80..84].try_into().unwrap()) as usize;
    assert_eq!(b.len(), 84 + 50 * n, "a binary STL");
    n
}

/// The model primitives of a scene message.
fn models(scene: &SceneUpdate) -> Vec<&foxglove::schemas::ModelPrimitive> {
    scene.entities.iter().flat_map(|e| &e.models).collect()
}

#[test]
fn a_recording_of_turtlebot3_carries_its_meshes_as_stl_in_millimetres_scaled_to_metres() {
    let dir = Workspace::new();
    let file = dir.path().join("tb3.mcap");
    let scene = repo_root().join("artifacts/scenes/turtlebot3.json");
    let mut env = build_recorded(&scene, &registry(), false, &file).unwrap();
    ssx_tests::step_n(&mut env, 10);
    drop(env);
    let (topics, clean) = read_mcap(&file);
    assert!(clean);
    let scene = SceneUpdate::decode(&topics["/scene"][0].1[..]).unwrap();
    let models = models(&scene);
    // Four visuals (base, two tires, the lidar), each embedded whole: the recording stands
    // alone.
    assert_eq!(models.len(), 4);
    let (_, triangles) = turtlebot3_meshes();
    let mut seen = 0;
    for m in &models {
        assert_eq!((m.media_type.as_str(), m.url.as_str()), ("model/stl", ""));
        seen += stl_triangles(&m.data);
        // The files are in millimetres and the URDF scales them by 0.001: every corner of the
        // recorded mesh lies within 20 cm of its frame.
        for t in 0..stl_triangles(&m.data) {
            for k in 0..9 {
                let o = 84 + 50 * t + 12 + 4 * k;
                let x = f32::from_le_bytes(m.data[o..o + 4].try_into().unwrap());
                assert!(x.abs() < 0.2, "a corner at {x} m");
            }
        }
    }
    assert_eq!(seen, triangles);
    assert_eq!(triangles, 92_230);
}

/// `GET` over plain HTTP/1.1: the status line and the body.
fn http_get(url: &str) -> (String, Vec<u8>) {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, path) = rest.split_at(rest.find('/').expect("a path"));
    let mut s = TcpStream::connect(host).expect("connect to the page server");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).unwrap();
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("headers end");
    let head = String::from_utf8_lossy(&answer[..split]).to_string();
    (
        head.lines().next().unwrap_or_default().to_string(),
        answer[split + 4..].to_vec(),
    )
}

#[test]
fn a_live_client_gets_each_mesh_once_by_url_from_the_page_server() {
    let scene = repo_root().join("artifacts/scenes/turtlebot3.json");
    let (mut d, line, _err) = start_view(&scene);
    let mut ws = connect(&ws_url(&line));
    let channels = advertised(&mut ws, &["/scene"]);
    let subs = [(1, channels["/scene"].0)];
    subscribe(&mut ws, &subs);
    let deadline = Instant::now() + Duration::from_secs(20);
    let scene = loop {
        assert!(Instant::now() < deadline, "no scene within 20 s");
        let m = read(&mut ws, &subs);
        if let Some((1, _, payload)) = message_data(&m) {
            break SceneUpdate::decode(&payload[..]).unwrap();
        }
    };
    let models = models(&scene);
    assert_eq!(models.len(), 4);
    // Linked, not embedded: the two tires differ, so four files, each fetched from the page
    // server at the address in the URL.
    let (distinct, triangles) = turtlebot3_meshes();
    let mut urls: Vec<&str> = models.iter().map(|m| m.url.as_str()).collect();
    urls.sort();
    urls.dedup();
    assert_eq!(urls.len(), distinct.len());
    let mut seen = 0;
    for m in &models {
        assert!(m.data.is_empty() && m.media_type == "model/stl");
        assert!(m.url.starts_with("http://127.0.0.1:"), "{}", m.url);
        let (status, body) = http_get(&m.url);
        assert_eq!(status, "HTTP/1.1 200 OK");
        seen += stl_triangles(&body);
    }
    assert_eq!(seen, triangles);
    ws.close(None).ok();
    signal(&d, "-TERM");
    assert_eq!(wait_exit(&mut d, Duration::from_secs(10)), Some(0));
}
