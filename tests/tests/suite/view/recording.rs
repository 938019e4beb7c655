//! Recordings: every channel in the MCAP file, finished on SIGTERM and readable after SIGKILL,
//! cameras, explorations, resets and meshes carried in the file.

use std::collections::BTreeMap;

use super::*;

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

/// A recording's attachments: (name, bytes).
type Attached = Vec<(String, Vec<u8>)>;

/// The file's `ssx.run` metadata and its attachments, read record by record from the start (a
/// killed run's file has no summary to look them up in).
fn run_record(bytes: &[u8]) -> (BTreeMap<String, String>, Attached) {
    let (mut run, mut files) = (BTreeMap::new(), Vec::new());
    for r in mcap::read::LinearReader::new(bytes).expect("an MCAP file") {
        match r {
            Ok(mcap::records::Record::Metadata(m)) if m.name == "ssx.run" => run = m.metadata,
            Ok(mcap::records::Record::Attachment { header, data, .. }) => {
                files.push((header.name, data.into_owned()))
            }
            Ok(_) => {}
            Err(_) => break, // a killed run's last, unfinished record
        }
    }
    (run, files)
}

#[test]
fn a_recording_is_finished_on_sigterm_and_still_reads_after_sigkill() {
    let dir = Workspace::new();
    for (sig, name) in [("-TERM", "term.mcap"), ("-KILL", "kill.mcap")] {
        let file = dir.path().join(name);
        // Past the writer's first one-second flush.
        let (code, _) = record_until(&file, Duration::from_millis(2500), sig);
        let bytes = std::fs::read(&file).unwrap();
        // What made the run, at the start of the file (so also in a killed run's).
        let (run, files) = run_record(&bytes);
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let expected: BTreeMap<String, String> = [
            ("ssx_version", env!("CARGO_PKG_VERSION").to_string()),
            ("scene", "quickstart".into()),
            ("scene_file", "quickstart.json".into()),
            (
                "scene_dir",
                std::path::absolute(quickstart().parent().unwrap())
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            ),
            ("engine", "rapier".into()),
            ("seed", "7".into()),
            ("workers", workers.to_string()),
            ("timestep", "0.001".into()),
            ("gravity", "0 0 -9.81".into()),
            ("mode", "realtime x1".into()),
            ("late_policy", "catch-up".into()),
            ("strict", "false".into()),
            ("inputs", "/inputs".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(run, expected, "{sig}");
        assert_eq!(
            files,
            vec![(
                "quickstart.json".to_string(),
                std::fs::read(quickstart()).unwrap()
            )],
            "{sig}: the scene file, as it was read"
        );
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
        // Either file replays, a killed one up to its last complete snapshot, every snapshot
        // equal to the bit (docs/replay.md).
        let r = ssx_tests::ssxd_bounded(
            &[
                "replay",
                file.to_str().unwrap(),
                "--verify",
                "--workers",
                "1",
            ],
            60,
            4 << 30,
        );
        assert_eq!(r.code, Some(0), "{sig}: {}", r.stderr);
        let verified = format!("verified: {tf} snapshots equal to the bit");
        assert!(r.stdout.contains(&verified), "{sig}: {}", r.stdout);
        assert_eq!(
            r.stdout.contains("cut short"),
            sig == "-KILL",
            "{}",
            r.stdout
        );
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
    // What made the run comes along.
    let (run, files) = run_record(&bytes);
    assert_eq!((run, files), run_record(&std::fs::read(&killed).unwrap()));
    assert_eq!(run_record(&bytes).0["scene"], "quickstart");
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
