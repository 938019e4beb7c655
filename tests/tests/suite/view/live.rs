//! The live view: a real WebSocket client receiving the explored map, services that pull frames,
//! meshes fetched once from the page server, and a viewer that never reads.

use super::*;

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

/// `ssxd replay --view --mode realtime`: a recorded run shown live as a run is, at the run's
/// pace: the page served, the poses streamed, and the replay still verified to the bit.
#[test]
fn a_replay_is_shown_live_at_the_runs_pace() {
    let ws_dir = Workspace::new();
    let file = ws_dir.path().join("run.mcap");
    let file_arg = file.to_str().unwrap();
    let scene = quickstart();
    let run = ssx_tests::ssxd_bounded(
        &[
            "run",
            scene.to_str().unwrap(),
            "--mode",
            "fast",
            "--steps",
            "3000",
            "--record",
            file_arg,
            "--quiet",
        ],
        60,
        4 << 30,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let started = Instant::now();
    let args = [
        "replay",
        file_arg,
        "--verify",
        "--mode",
        "realtime",
        "--view",
        "--view-port",
        "0",
        "--view-rate",
        "50",
    ];
    let (mut d, line, _err) = start(&args, "live view: open");
    let page = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .expect("the log names the page");
    let (status, body) = http_get(page);
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(String::from_utf8_lossy(&body).contains("<title>ssx view</title>"));
    let mut ws = connect(&ws_url(&line));
    let channels = advertised(&mut ws, &["/tf"]);
    let subs = [(1, channels["/tf"].0)];
    subscribe(&mut ws, &subs);
    let mut poses = 0;
    let deadline = Instant::now() + Duration::from_secs(20);
    while poses < 5 {
        assert!(
            Instant::now() < deadline,
            "{poses} /tf messages within 20 s"
        );
        if let Some((1, _, payload)) = message_data(&read(&mut ws, &subs)) {
            assert!(
                !FrameTransforms::decode(&payload[..])
                    .unwrap()
                    .transforms
                    .is_empty()
            );
            poses += 1;
        }
    }
    ws.close(None).ok();
    assert_eq!(wait_exit(&mut d, Duration::from_secs(30)), Some(0));
    // 3000 steps of 1 ms at the run's pace: about 3 s, never the fraction of a second a fast
    // replay takes (a bound on the pacing, not a timing figure).
    assert!(
        started.elapsed() >= Duration::from_millis(2900),
        "{:?}",
        started.elapsed()
    );
    let mut out = String::new();
    std::io::Read::read_to_string(d.0.stdout.as_mut().unwrap(), &mut out).unwrap();
    assert!(
        out.contains("verified: 3000 snapshots equal to the bit"),
        "{out}"
    );
}
