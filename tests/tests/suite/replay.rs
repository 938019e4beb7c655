//! `ssxd replay`: recorded runs simulated again from the recording alone and checked against it
//! to the bit (resets with new seeds included, on any worker count); a changed artifact file
//! named at the first step where it shows; bad recordings refused with what is wrong. A
//! killed run's recording is replayed in view::recording.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ssx_core::{LatePolicy, Mode, MonotonicClock};
use ssx_tests::{Workspace, build_rendered, library, ssxd_bounded};

/// Robots placed at random from the seed, turning away from what their range rings see, in a
/// walled square: every step depends on the one before, the seed and the artifact files.
fn swarm(ws: &Workspace) -> std::path::PathBuf {
    let robot = std::fs::read_to_string(library("pioneer.json")).unwrap();
    ws.write("bot.json", &robot);
    let wall = |name: &str, x: f64, y: f64, yaw: f64| {
        serde_json::json!({
            "name": name, "artifact": library("wall.json"),
            "pose": {"position": [x, y, 0], "rpy": [0, 0, yaw]},
            "replicate": {"grid": {"count": 4, "columns": 4, "spacing": [1, 1]}}
        })
    };
    let h = std::f64::consts::FRAC_PI_2;
    let scene = serde_json::json!({
        "name": "swarm", "timestep": 0.05, "seed": 11, "engine": "kinematic",
        "artifacts": [
            {"name": "ground", "artifact": library("ground.json")},
            {"name": "robot", "artifact": "bot.json", "pose": {"position": [0, 0, 0.12]},
             "replicate": {"random": {"count": 5, "min": [-1.4, -1.4, 0], "max": [1.4, 1.4, 0],
                                      "clearance": 0.6}},
             "overrides": {"driver": {"behaviour": {"dispersal": {}}},
                           "sensors": {"range": {"count": 12, "max_range": 2.0}}}},
            wall("wall_s", -1.5, -2.0, 0.0), wall("wall_n", -1.5, 2.0, 0.0),
            wall("wall_w", -2.0, -1.5, h), wall("wall_e", 2.0, -1.5, h)
        ]
    });
    ws.write("swarm.json", &scene.to_string())
}

fn replay(args: &[&str]) -> ssx_tests::Bounded {
    let mut all = vec!["replay"];
    all.extend_from_slice(args);
    ssxd_bounded(&all, 60, 4 << 30)
}

#[test]
fn a_run_with_resets_replays_to_the_bit_on_any_worker_count() {
    let ws = Workspace::new();
    let scene = swarm(&ws);
    let file = ws.path().join("run.mcap");
    // A run embedded in a program, recorded as ssx.Sim(record=...) records: 40 steps, a reset
    // with another seed (other places), 30 steps, a reset with that seed again, 20 steps.
    let registry = ssx_tests::registry();
    let loaded = ssx_artifacts::Scene::load(&scene, &registry).unwrap();
    let config = loaded.config(2, Mode::Fast, LatePolicy::CatchUp, false);
    let out = ssx_view::Output::new(
        ssx_view::Hub::new(),
        None,
        Some(&ssx_view::RecordOptions {
            path: file.clone(),
            every: 1,
            lossless: true,
            run: ssx_view::RunRecord::of(&scene, None, &config).unwrap(),
        }),
    )
    .unwrap();
    let clock = Arc::new(MonotonicClock::new(Duration::ZERO));
    let mut env = build_rendered(
        &scene,
        &registry,
        2,
        Mode::Fast,
        false,
        clock,
        Box::new(out),
    )
    .unwrap();
    ssx_tests::step_n(&mut env, 40);
    env.reset(Some(99)).unwrap();
    ssx_tests::step_n(&mut env, 30);
    env.reset(None).unwrap();
    ssx_tests::step_n(&mut env, 20);
    let last = ssx_tests::state_bits(env.states());
    drop(env); // finishes the file
    for workers in ["1", "2", "3"] {
        let r = replay(&[file.to_str().unwrap(), "--verify", "--workers", workers]);
        assert_eq!(r.code, Some(0), "{workers} workers: {}", r.stderr);
        assert!(
            r.stdout.contains("90 steps, 2 reset(s)"),
            "{workers} workers: {}",
            r.stdout
        );
        // Every step's snapshot, and the two worlds as they stood after each reset.
        assert!(
            r.stdout.contains("verified: 92 snapshots equal to the bit"),
            "{workers} workers: {}",
            r.stdout
        );
    }
    // --until stops early; --record keeps the replay, whose last pose is the run's.
    let again = ws.path().join("again.mcap");
    let r = replay(&[file.to_str().unwrap(), "--record", again.to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let p = ssx_view::Playback::read(&again).unwrap();
    let end = (p.events().unwrap())
        .filter_map(|e| match e.unwrap() {
            ssx_view::Event::Snapshot(s) => Some(s),
            _ => None,
        })
        .last()
        .unwrap();
    assert_eq!((end.episode, end.step), (2, 20));
    // state_bits: x, y, z, w, i, j, k, then velocities; a snapshot: x, y, z, i, j, k, w.
    let recorded: Vec<u64> = last
        .chunks(13)
        .flat_map(|s| [s[0], s[1], s[2], s[4], s[5], s[6], s[3]])
        .collect();
    let replayed: Vec<u64> = end.poses.iter().flat_map(|q| q.map(f64::to_bits)).collect();
    assert_eq!(replayed, recorded);
    let r = replay(&[file.to_str().unwrap(), "--verify", "--until", "55"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("55 steps, 1 reset(s)"), "{}", r.stdout);
}

#[test]
fn a_changed_artifact_file_is_named_at_the_first_step_it_shows() {
    let ws = Workspace::new();
    let scene = swarm(&ws);
    let file = ws.path().join("run.mcap");
    let scene_arg = scene.to_str().unwrap();
    let file_arg = file.to_str().unwrap();
    let run = ssxd_bounded(
        &[
            "run", scene_arg, "--mode", "fast", "--steps", "200", "--quiet", "--record", file_arg,
        ],
        60,
        4 << 30,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        replay(&[file_arg, "--verify"])
            .stdout
            .contains("verified: 200 snapshots")
    );
    // The robot's artifact file edited after the run: its box 5 cm longer. The scene file is in
    // the recording; the artifact files it names are read from where the run found them.
    let bot = ws.path().join("bot.json");
    let text = std::fs::read_to_string(&bot).unwrap();
    assert!(text.contains("[0.45, 0.38, 0.22]"));
    std::fs::write(
        &bot,
        text.replace("[0.45, 0.38, 0.22]", "[0.5, 0.38, 0.22]"),
    )
    .unwrap();
    let r = replay(&[file_arg, "--verify"]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    let line = r.stderr.lines().last().unwrap_or_default();
    assert!(
        line.starts_with("error: the replay differs from the recording at step ")
            && line.contains(" of episode 0 ")
            && line.contains("'robot_"),
        "{line}"
    );
}

#[test]
fn a_recording_that_cannot_be_replayed_says_why() {
    let ws = Workspace::new();
    let refused = |path: &Path| {
        let r = replay(&[path.to_str().unwrap(), "--verify"]);
        assert_eq!(r.code, Some(2), "{}", r.stdout);
        r.stderr.trim().to_string()
    };
    let missing = ws.path().join("missing.mcap");
    assert_eq!(
        refused(&missing),
        format!(
            "error: cannot replay '{}': No such file or directory (os error 2)",
            missing.display()
        )
    );
    // A recording whose scene file is named as a path out of the replay's own folder.
    let sly = ws.path().join("sly.mcap");
    {
        let mut w = mcap::Writer::new(std::io::BufWriter::new(
            std::fs::File::create(&sly).unwrap(),
        ))
        .unwrap();
        let run = [
            ("scene_file", "../sly.json"),
            ("scene_dir", "/tmp"),
            ("engine", "kinematic"),
        ];
        w.write_metadata(&mcap::records::Metadata {
            name: "ssx.run".into(),
            metadata: run
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        })
        .unwrap();
        w.attach(&mcap::Attachment {
            log_time: 0,
            create_time: 0,
            name: "../sly.json".into(),
            media_type: "application/json".into(),
            data: std::borrow::Cow::Borrowed(b"{}"),
        })
        .unwrap();
        w.finish().unwrap();
    }
    assert_eq!(
        refused(&sly),
        format!(
            "error: cannot replay '{}': its scene file's name '../sly.json' is not a plain file name",
            sly.display()
        )
    );
    let text = ws.write("notes.mcap", "not a recording");
    assert_eq!(
        refused(&text),
        format!(
            "error: cannot replay '{}': not an MCAP file (its first bytes are not MCAP's magic)",
            text.display()
        )
    );
}

/// The issue's session: the teleop scene run by `ssxd` in real time, driven over Zenoh on
/// loopback by a handle at 1 kHz, paused, stepped and resumed, reset with another seed, and
/// recorded; then replayed from the recording alone (no network), every snapshot equal to the
/// bit on 1 and 2 workers. One input altered in the file: the replay differs from the step
/// it was given at.
#[test]
fn a_teleop_session_over_zenoh_replays_to_the_bit_without_the_network() {
    use ssx_tests::daemon::{Daemon, collect, connect, control, one_at_a_time, wait_for};
    use std::time::Instant;
    use zenoh::Wait;
    let _one = one_at_a_time();
    let ws = Workspace::new();
    let port = ssx_tests::free_port();
    let prefix = "ssx/test-replay";
    let scene = ssx_tests::hil_scene(&ws, "teleop", port, prefix, |_| {});
    let file = ws.path().join("session.mcap");
    let mut daemon = Daemon::start_with(&scene, 60, &["--record", file.to_str().unwrap()]);
    let session = connect(port, &mut daemon);
    let (lead, _l) = collect(&session, &format!("{prefix}/artifacts/uav_lead/state"));
    wait_for("the leader's state", Duration::from_secs(20), || {
        lead.lock().unwrap().len() > 10
    });
    let handle = session
        .declare_publisher(format!("{prefix}/teleop/handle"))
        .wait()
        .unwrap();
    let push = |x: f64, seconds: f64| {
        let t0 = Instant::now();
        let mut sent = 0u64;
        while t0.elapsed().as_secs_f64() < seconds {
            let sample = format!(r#"{{"position": [{x}, 0.0, 0.0], "velocity": [0, 0, 0]}}"#);
            handle.put(sample).wait().unwrap();
            sent += 1;
            let next = t0 + Duration::from_micros(1000 * sent);
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
    };
    push(0.055, 1.0);
    let paused = control(&session, prefix, "pause");
    assert_eq!(paused["state"], "paused", "{paused}");
    let stepped = control(&session, prefix, "step 10");
    assert_eq!(stepped["state"], "paused", "{stepped}");
    assert_eq!(control(&session, prefix, "resume")["state"], "running");
    push(-0.03, 0.5);
    let reset = control(&session, prefix, "reset 5");
    assert_eq!(reset["ok"], true, "{reset}");
    push(0.04, 0.5);
    drop(session);
    let (code, log) = daemon.interrupt();
    assert_eq!(code, Some(0), "{log}");

    let file_arg = file.to_str().unwrap();
    for workers in ["1", "2"] {
        let r = replay(&[file_arg, "--verify", "--workers", workers]);
        assert_eq!(
            r.code,
            Some(0),
            "{workers} workers: {}\n{}",
            r.stdout,
            r.stderr
        );
        assert!(r.stdout.contains("1 reset(s)"), "{}", r.stdout);
        assert!(
            r.stdout.contains("the plugins given the recorded inputs"),
            "{}",
            r.stdout
        );
        let checked: usize = r
            .stdout
            .split("verified: ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(checked > 1000, "{workers} workers: {}", r.stdout);
    }

    // One of the handle's samples changed in the file (its x from 0.055 m to 0.155 m), where
    // a driver reads it first (a new sequence number: later reads of the same sample are
    // passed over): the replay goes its own way from the step that sample was read in.
    let altered = ws.path().join("altered.mcap");
    let mut at = None;
    let mut last_sequence = std::collections::HashMap::new();
    rewrite_recording(&file, &altered, |topic, data| {
        if topic != ssx_view::inputs::TOPIC || at.is_some() {
            return true;
        }
        let mut m: serde_json::Value = serde_json::from_slice(data).unwrap();
        let step = m["step"].as_u64().unwrap();
        for a in m["answers"].as_array_mut().unwrap() {
            let hex = a["response"].as_str().unwrap().to_string();
            // A read with a value: sequence (8 bytes), count (4), padding (4), then the values.
            if a["service"] != "read" || hex.len() < 48 || at.is_some() {
                continue;
            }
            let mut bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            let sequence = u64::from_le_bytes(bytes[0..8].try_into().unwrap());
            let reader = format!("{} {}", a["artifact"], a["request"]);
            let fresh = last_sequence.insert(reader, sequence) != Some(sequence);
            let x = f64::from_le_bytes(bytes[16..24].try_into().unwrap());
            if fresh && step > 300 && (x - 0.055).abs() < 1e-12 {
                bytes[16..24].copy_from_slice(&0.155f64.to_le_bytes());
                let altered: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                a["response"] = serde_json::json!(altered);
                at = Some(step);
            }
        }
        *data = serde_json::to_vec(&m).unwrap();
        true
    });
    let at = at.expect("a sample of the handle at 0.055 m in the recording");
    let r = replay(&[altered.to_str().unwrap(), "--verify"]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    // Either a pose differs first, or (sooner) what a driver then publishes: its feedback.
    let step: u64 = [
        "differs from the recording at step ",
        "(stopped there): at step ",
    ]
    .iter()
    .find_map(|m| r.stderr.split(m).nth(1))
    .and_then(|t| t.split([' ', ',']).next())
    .and_then(|n| n.parse().ok())
    .unwrap_or_else(|| panic!("{}", r.stderr));
    assert!(
        (at..=at + 5).contains(&step),
        "altered at step {at}, differs from step {step}: {}",
        r.stderr
    );
}

/// A run whose driver library is swapped for a new build while it runs (`--watch-plugins`, a
/// build copied over the file, as a user's rebuild does) replays with the build it started with
/// and the one swapped in at the step it came, both taken from the recording, though the file
/// holds only the new one by then. A library missing at replay, and one whose build is not the
/// run's (and not in the recording), are refused by name.
#[test]
fn a_run_with_a_library_swap_replays_with_the_builds_it_ran() {
    use ssx_tests::daemon::{Daemon, copy_build_and_wait_for_the_swap};
    use ssx_tests::{c_library, pusher_scene};
    let ws = Workspace::new();
    // A ball pushed along +x by the first build, +y by the second (τ 1 ms, real time).
    let (scene, lib) = pusher_scene(&ws, "swap_x", "", "");
    let file = ws.path().join("run.mcap");
    let daemon = Daemon::start_with(
        &scene.display().to_string(),
        60,
        &["--watch-plugins", "--record", file.to_str().unwrap()],
    );
    copy_build_and_wait_for_the_swap(&daemon, &lib, &c_library("swap_y"));
    std::thread::sleep(Duration::from_millis(500));
    let (code, log) = daemon.interrupt();
    assert_eq!(code, Some(0), "{log}");

    // The recording names the library with its first build's hash and holds both builds.
    let p = ssx_view::Playback::read(&file).unwrap();
    let sha = |path: &Path| {
        use sha2::Digest;
        ssx_core::text::hex(&sha2::Sha256::digest(std::fs::read(path).unwrap()))
    };
    let (x, y) = (sha(&c_library("swap_x")), sha(&c_library("swap_y")));
    assert_eq!(
        p.libraries.get(&lib.display().to_string()),
        Some(&x),
        "{:?}",
        p.libraries
    );
    let mut held: Vec<&String> = p.builds.keys().collect();
    held.sort();
    let mut both = vec![&x, &y];
    both.sort();
    assert_eq!(held, both);

    for workers in ["1", "2"] {
        let r = replay(&[file.to_str().unwrap(), "--verify", "--workers", workers]);
        assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
        assert!(r.stdout.contains("1 library swap(s)"), "{}", r.stdout);
        assert!(r.stdout.contains("verified: "), "{}", r.stdout);
    }

    // The library gone: named.
    std::fs::remove_file(&lib).unwrap();
    let r = replay(&[file.to_str().unwrap(), "--verify"]);
    assert_eq!(r.code, Some(2), "{}", r.stdout);
    assert!(
        r.stderr.contains("does not load: ")
            && r.stderr
                .contains("(at driver.library): library 'libpusher.so' not found"),
        "{}",
        r.stderr
    );

    // A run without swaps, of the second build; then the first build put back in its place:
    // the recording does not hold the run's build, so the replay refuses, naming both hashes.
    std::fs::copy(c_library("swap_y"), &lib).unwrap();
    let other = ws.path().join("other.mcap");
    let run = ssxd_bounded(
        &[
            "run",
            scene.to_str().unwrap(),
            "--mode",
            "fast",
            "--duration",
            "0.2",
            "--record",
            other.to_str().unwrap(),
            "--quiet",
        ],
        60,
        4 << 30,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    std::fs::copy(c_library("swap_x"), &lib).unwrap();
    let r = replay(&[other.to_str().unwrap(), "--verify"]);
    assert_eq!(r.code, Some(2), "{}", r.stdout);
    assert_eq!(
        r.stderr.trim(),
        format!(
            "error: cannot replay '{}': the library '{}' is not the build the run used ('{}'): its sha256 is {x}, the run's was {y}, and the recording does not hold that build; put the run's build there (or give --scene-dir where it is)",
            other.display(),
            lib.display(),
            lib.display()
        )
    );
}

/// Copies the recording `from` to `to`: its run record and attachments, then every message,
/// each first given to `edit` with its topic (false: left out). For tests that alter one.
fn rewrite_recording(
    from: &std::path::Path,
    to: &std::path::Path,
    mut edit: impl FnMut(&str, &mut Vec<u8>) -> bool,
) {
    let p = ssx_view::Playback::read(from).unwrap();
    let file = std::fs::File::create(to).unwrap();
    let mut w = mcap::Writer::new(std::io::BufWriter::new(file)).unwrap();
    w.write_metadata(&mcap::records::Metadata {
        name: "ssx.run".into(),
        metadata: p.run.clone(),
    })
    .unwrap();
    for (name, data) in &p.files {
        w.attach(&mcap::Attachment {
            log_time: 0,
            create_time: 0,
            name: name.clone(),
            media_type: "application/json".into(),
            data: std::borrow::Cow::Borrowed(data),
        })
        .unwrap();
    }
    let bytes = std::fs::read(from).unwrap();
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.unwrap();
        let mut data = m.data.into_owned();
        if edit(&m.channel.topic, &mut data) {
            w.write(&mcap::Message {
                data: std::borrow::Cow::Owned(data),
                ..m
            })
            .unwrap();
        }
    }
    w.finish().unwrap();
}
