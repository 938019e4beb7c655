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

mod live;
mod recording;

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
