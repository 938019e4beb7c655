//! The Zenoh extension end to end: `ssxd` runs a shipped scene as a child process, and a real
//! Zenoh session in the test (client mode, 127.0.0.1 only) plays the hardware. Every test is
//! bounded: the daemon gets a `--duration`, every wait has a deadline, and the daemon is killed
//! if a test fails half-way.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use ssx_tests::daemon::{Daemon, collect, connect, control, input_of, one_at_a_time, wait_for};
use ssx_tests::{Workspace, build_fast, free_port, hil_scene as scene, ssxd, state_of, step_n};
use zenoh::Wait;

#[test]
fn teleop_handle_drives_the_group_feels_feedback_and_controls_the_run() {
    let _one = one_at_a_time();
    let ws = Workspace::new();
    let port = free_port();
    let prefix = "ssx/test-teleop";
    let scene = scene(&ws, "teleop", port, prefix, |_| {});
    let mut daemon = Daemon::start(&scene, 60);
    let session = connect(port, &mut daemon);
    let (force, _f) = collect(&session, &format!("{prefix}/teleop/force"));
    let (lead, _l) = collect(&session, &format!("{prefix}/artifacts/uav_lead/state"));
    wait_for("the leader's state", Duration::from_secs(20), || {
        lead.lock().unwrap().len() > 10
    });
    // Let it take off (1 m) before steering; no handle yet: the group hovers.
    wait_for("take-off", Duration::from_secs(20), || {
        lead.lock().unwrap().last().unwrap()["position"][2]
            .as_f64()
            .unwrap()
            > 0.9
    });
    let start_x = lead.lock().unwrap().last().unwrap()["position"][0]
        .as_f64()
        .unwrap();
    assert!(
        force
            .lock()
            .unwrap()
            .iter()
            .all(|f| f["handle_live"] == false),
        "no handle yet"
    );

    // The handle 5.5 cm to +x for 3 s at 1 kHz: a 0.5 m/s reference along x.
    let handle = session
        .declare_publisher(format!("{prefix}/teleop/handle"))
        .wait()
        .unwrap();
    let t0 = Instant::now();
    let mut sent = 0u32;
    while t0.elapsed() < Duration::from_secs(3) {
        handle
            .put(r#"{"position": [0.055, 0.0, 0.0], "velocity": [0, 0, 0]}"#)
            .wait()
            .unwrap();
        sent += 1;
        let next = t0 + Duration::from_micros(1000 * u64::from(sent));
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    let end_x = lead.lock().unwrap().last().unwrap()["position"][0]
        .as_f64()
        .unwrap();
    assert!(
        end_x - start_x > 0.5,
        "0.5 m/s for 3 s moves the group about 1.5 m (less the controller's lag), got {}",
        end_x - start_x
    );
    let live: Vec<Value> = force
        .lock()
        .unwrap()
        .iter()
        .filter(|f| f["handle_live"] == true)
        .cloned()
        .collect();
    assert!(
        live.len() > 1000,
        "feedback every step while the handle is live: {}",
        live.len()
    );
    for f in &live {
        assert!(
            (f["velocity_ref"][0].as_f64().unwrap() - 0.5).abs() < 1e-9,
            "{f}"
        );
    }
    // Accelerating from hover the group lags its reference: the handle is pushed back (-x).
    let first = &live[0];
    assert!(first["force"][0].as_f64().unwrap() < -0.5, "{first}");
    let last = live.last().unwrap();
    assert!(
        last["velocity_mean"][0].as_f64().unwrap() > 0.35,
        "the group flies at about the reference: {last}"
    );
    let steps: Vec<u64> = live.iter().map(|f| f["step"].as_u64().unwrap()).collect();
    assert!(
        steps.windows(2).all(|w| w[0] < w[1]),
        "feedback in step order"
    );

    // Run control: pause, step 10 while paused, resume; stats and list.
    let paused = control(&session, prefix, "pause");
    assert_eq!(paused["ok"], true, "{paused}");
    assert_eq!(paused["state"], "paused");
    let at = paused["step"].as_u64().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let still = control(&session, prefix, "stats");
    assert_eq!(
        (still["paused"].clone(), still["steps"].as_u64()),
        (json!(true), Some(at))
    );
    let stepped = control(&session, prefix, r#"{"cmd": "step", "n": 10}"#);
    assert_eq!(stepped["step"].as_u64(), Some(at + 10), "{stepped}");
    assert_eq!(stepped["state"], "paused");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        control(&session, prefix, "stats")["steps"].as_u64(),
        Some(at + 10)
    );
    let running = control(&session, prefix, "resume");
    assert_eq!(running["state"], "running", "{running}");
    let mut stats = Value::Null;
    wait_for("the resumed run's steps", Duration::from_secs(10), || {
        stats = control(&session, prefix, "stats");
        stats["steps"].as_u64().unwrap() > at + 100
    });
    assert_eq!(stats["paused"], false);
    let inputs = stats["inputs"].as_array().unwrap();
    assert_eq!(
        inputs.len(),
        1,
        "one handle subscription shared by the group: {stats}"
    );
    assert_eq!(inputs[0]["key"], format!("{prefix}/teleop/handle"));
    assert_eq!(inputs[0]["accepted"].as_u64(), Some(u64::from(sent)));
    assert_eq!(inputs[0]["malformed"].as_u64(), Some(0));
    let list = control(&session, prefix, "list");
    let names: Vec<&str> = list["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "ground", "uav_lead", "uav_0", "uav_1", "uav_2", "pillar_0", "pillar_1", "pillar_2",
            "pillar_3"
        ]
    );
    // Nothing but run state: a command to load a library is refused, by name.
    let refused = control(&session, prefix, "load /tmp/evil.so");
    assert_eq!(
        refused,
        json!({"ok": false, "error": "unknown command 'load'; known: pause, resume, step N [observe...] (N from 1 to 1000000, while paused), stats, list, reload LIBRARY, reset [SEED]"})
    );
    assert_eq!(control(&session, prefix, "stats")["control_refused"], 1);
    // Extensions' figures ride along, as of the previous step: here the extension's own, once
    // a step has run since the refusal.
    let mut stats = Value::Null;
    wait_for(
        "the refusal in the metrics",
        Duration::from_secs(10),
        || {
            stats = control(&session, prefix, "stats");
            stats["metrics"]["zenoh.control_refused"] == 1.0
        },
    );
    assert_eq!(stats["metrics"]["zenoh.outbound_dropped"], 0.0, "{stats}");
    let early = control(&session, prefix, "step 5");
    assert_eq!(early["error"], "step needs a paused run: pause first");

    drop(session);
    let (code, log) = daemon.interrupt();
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("paused at step"), "{log}");
    // Refusals are logged (rate-limited, counted): the first at once.
    assert!(
        log.contains(&format!("zenoh: refused a control command on '{prefix}/control': unknown command 'load'; known: pause, resume, step N [observe...] (N from 1 to 1000000, while paused), stats, list, reload LIBRARY, reset [SEED] (1 refused since the last warning; 1 in all)")),
        "{log}"
    );
}

#[test]
fn malformed_and_flooding_poses_are_dropped_counted_and_warned_about_by_key() {
    let _one = one_at_a_time();
    let ws = Workspace::new();
    let port = free_port();
    let prefix = "ssx/test-lab";
    let scene = scene(&ws, "virtual-obstacles", port, prefix, |s| {
        s["extensions"][0]["descriptor"]["artifacts"]["robot"]["state"]["every"] = json!(1);
    });
    let mut daemon = Daemon::start(&scene, 60);
    let session = connect(port, &mut daemon);
    let (state, _s) = collect(&session, &format!("{prefix}/artifacts/robot/state"));
    wait_for("the robot's state", Duration::from_secs(20), || {
        !state.lock().unwrap().is_empty()
    });
    // The proxy subscribes on its first step; wait until the daemon lists the subscription.
    wait_for("the proxy's subscription", Duration::from_secs(20), || {
        control(&session, prefix, "stats")["inputs"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
    });
    let key = format!("{prefix}/artifacts/robot/pose");
    let pose = session.declare_publisher(key.clone()).wait().unwrap();
    let bad: [&[u8]; 6] = [
        b"not json",
        br#"{"position": [1, 2]}"#,
        br#"{"position": [1e9, 0, 0.12]}"#,
        br#"{"position": [0, 0, 0.12], "colour": "red"}"#,
        br#"{"position": [0, "x", 0.12]}"#,
        b"\xff\xfe\x00garbage",
    ];
    for b in bad {
        pose.put(b).wait().unwrap();
    }
    pose.put(r#"{"position": [0.5, -1.0, 0.12]}"#)
        .wait()
        .unwrap();
    wait_for(
        "the robot at the good pose",
        Duration::from_secs(10),
        || {
            let p = state.lock().unwrap().last().unwrap()["position"].clone();
            (p[0].as_f64().unwrap() - 0.5).abs() < 1e-4
                && (p[1].as_f64().unwrap() + 1.0).abs() < 1e-4
        },
    );
    let stats = control(&session, prefix, "stats");
    let input = input_of(&stats, &key);
    assert_eq!(input["malformed"].as_u64(), Some(6), "{stats}");
    assert_eq!(input["accepted"].as_u64(), Some(1), "{stats}");

    // A flood: 50,000 poses as fast as the client can put them. The mailbox keeps the newest;
    // the step reads one per step; the run keeps stepping through it.
    let before = control(&session, prefix, "stats")["steps"]
        .as_u64()
        .unwrap();
    let n: u32 = 50_000;
    for i in 1..=n {
        let x = -1.0 + f64::from(i) * 2e-5;
        pose.put(format!(r#"{{"position": [{x}, 1.0, 0.12]}}"#))
            .wait()
            .unwrap();
    }
    // The last pose once more, on a publisher that waits instead of dropping when the link is
    // congested: under load Zenoh may drop any flooded sample, the last one included (seen once
    // in a full CI run on 2 cores), and the newest must be this one.
    let last = session
        .declare_publisher(key.clone())
        .congestion_control(zenoh::qos::CongestionControl::Block)
        .wait()
        .unwrap();
    last.put(r#"{"position": [0.0, 1.0, 0.12]}"#)
        .wait()
        .unwrap();
    wait_for(
        "the robot at the last flooded pose",
        Duration::from_secs(20),
        || {
            let p = state.lock().unwrap().last().unwrap()["position"].clone();
            (p[0].as_f64().unwrap() - 0.0).abs() < 1e-4
                && (p[1].as_f64().unwrap() - 1.0).abs() < 1e-4
        },
    );
    let after = control(&session, prefix, "stats");
    assert!(after["steps"].as_u64().unwrap() > before, "{after}");
    let input = input_of(&after, &key);
    let accepted = input["accepted"].as_u64().unwrap();
    assert!(accepted <= 2 + u64::from(n), "{after}");
    assert!(accepted > 1, "{after}");
    assert_eq!(input["malformed"].as_u64(), Some(6));

    // A simulated robot driven from outside: a command beyond the descriptor's max_speed (1.2)
    // is dropped; a good one drives it for its timeout (0.5 s), then the behaviour (stand
    // still) takes over again.
    let (rover, _r) = collect(&session, &format!("{prefix}/artifacts/rover/state"));
    let cmd_key = format!("{prefix}/artifacts/rover/cmd");
    let cmd = session.declare_publisher(cmd_key.clone()).wait().unwrap();
    cmd.put(r#"{"linear": 5.0, "angular": 0.0}"#)
        .wait()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        rover
            .lock()
            .unwrap()
            .iter()
            .all(|s| s["linear_velocity"][0].as_f64().unwrap().abs() < 1e-9),
        "the absurd command was dropped"
    );
    cmd.put(r#"{"linear": 0.5, "angular": 0.0}"#)
        .wait()
        .unwrap();
    wait_for("the rover at 0.5 m/s", Duration::from_secs(10), || {
        rover
            .lock()
            .unwrap()
            .last()
            .is_some_and(|s| (s["linear_velocity"][0].as_f64().unwrap() - 0.5).abs() < 1e-6)
    });
    wait_for(
        "the rover stopped after the command's timeout",
        Duration::from_secs(10),
        || {
            rover
                .lock()
                .unwrap()
                .last()
                .is_some_and(|s| s["linear_velocity"][0].as_f64().unwrap().abs() < 1e-9)
        },
    );
    let stats = control(&session, prefix, "stats");
    let rover_input = input_of(&stats, &cmd_key);
    assert_eq!(
        (
            rover_input["accepted"].as_u64(),
            rover_input["malformed"].as_u64()
        ),
        (Some(1), Some(1)),
        "{rover_input}"
    );

    drop(session);
    let (code, log) = daemon.interrupt();
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains(&format!("zenoh: dropped a malformed message on '{cmd_key}': field 'linear' = 5 is beyond its limit 1.2")),
        "{log}"
    );
    let warnings: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&format!("zenoh: dropped a malformed message on '{key}'")))
        .collect();
    // Six bad messages within a second: one warning, counting the first.
    assert_eq!(warnings.len(), 1, "{log}");
    assert!(
        warnings[0].contains(
            "(1 dropped on this key in the last second; 1 malformed and 0 overflowed in all)"
        ),
        "{}",
        warnings[0]
    );
}

#[test]
fn a_listening_endpoint_beyond_loopback_must_be_asked_for() {
    let ws = Workspace::new();
    let scene = scene(&ws, "virtual-obstacles", free_port(), "ssx/x", |s| {
        s["extensions"][0]["descriptor"]["listen"] = json!(["tcp/0.0.0.0:7447"]);
    });
    let out = Command::new(ssxd())
        .args(["check", &scene])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    // The one error line (an INFO line may come first, e.g. about plugin copies it removed).
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].starts_with("error: cannot create extension 'zenoh': zenoh listen endpoint 'tcp/0.0.0.0:7447' is not on loopback; set \"expose\": true to open it beyond this machine (descriptor at "),
        "{err}"
    );
}

/// The next JSON message on a FIFO subscriber, or a failed test after `timeout`.
fn next(
    sub: &zenoh::pubsub::Subscriber<zenoh::handlers::FifoChannelHandler<zenoh::sample::Sample>>,
    timeout: Duration,
    daemon: &Daemon,
) -> Value {
    match sub.recv_timeout(timeout) {
        Ok(Some(s)) => serde_json::from_slice(&s.payload().to_bytes()).unwrap(),
        other => panic!(
            "no message within {timeout:?} ({other:?}): {}",
            daemon.log()
        ),
    }
}

/// Distance in the plane from `p` to `to`.
fn plane_distance(p: &[f64], to: [f64; 2]) -> f64 {
    ((p[0] - to[0]).powi(2) + (p[1] - to[1]).powi(2)).sqrt()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// A controller in lockstep over Zenoh, as docs/zenoh.md describes it: the daemon starts
/// paused; each step the client publishes the rover's command, then `step 1 rover` on
/// `P/control/in`, and waits for the answer on `P/control/out`. Then, on the same daemon: a
/// `step 1000000` is cut short by `pause` while `stats` is answered meanwhile, and oversized
/// commands are refused with a short answer, counted and logged.
#[test]
fn lockstep_over_zenoh_is_exact_interruptible_bounded_and_matches_the_in_process_run() {
    let _one = one_at_a_time();
    let ws = Workspace::new();
    let port = free_port();
    let prefix = "ssx/test-lockstep";
    // The rover's behaviour is the command the client sends: step 1 (before the driver has
    // subscribed, see docs/zenoh.md) and every later step drive it the same way, so the
    // in-process run below with that behaviour alone is the reference.
    let scene = scene(&ws, "lockstep", port, prefix, |s| {
        for a in s["artifacts"].as_array_mut().unwrap() {
            if a["name"] == "rover" {
                a["overrides"]["driver"]["behaviour"] =
                    json!({ "velocity": { "linear": 0.4, "angular": 0.3 } });
            }
        }
    });
    let mut daemon = Daemon::start_with(&scene, 3600, &["--paused"]);
    let session = connect(port, &mut daemon);
    let answers = session
        .declare_subscriber(format!("{prefix}/control/out"))
        .wait()
        .unwrap();
    let states = session
        .declare_subscriber(format!("{prefix}/artifacts/rover/state"))
        .wait()
        .unwrap();
    // A lockstep client's requests must not be dropped when its transmit queue is full.
    let send = session
        .declare_publisher(format!("{prefix}/control/in"))
        .congestion_control(zenoh::qos::CongestionControl::Block)
        .express(true)
        .wait()
        .unwrap();
    let cmd_key = format!("{prefix}/artifacts/rover/cmd");
    let cmd = session
        .declare_publisher(cmd_key.clone())
        .express(true)
        .wait()
        .unwrap();
    // Until the daemon has our subscription: ask for stats until an answer comes back.
    let deadline = Instant::now() + Duration::from_secs(30);
    let first = loop {
        send.put("stats").wait().unwrap();
        if let Ok(Some(s)) = answers.recv_timeout(Duration::from_millis(200)) {
            break serde_json::from_slice::<Value>(&s.payload().to_bytes()).unwrap();
        }
        assert!(Instant::now() < deadline, "no answer: {}", daemon.log());
    };
    assert_eq!(
        (&first["paused"], &first["steps"]),
        (&json!(true), &json!(0))
    );
    while answers.try_recv().ok().flatten().is_some() {} // answers to the other tries

    const N: u64 = 10_000;
    let mut last = Value::Null;
    for k in 1..=N {
        if k > 1 {
            cmd.put(r#"{"linear": 0.4, "angular": 0.3}"#)
                .wait()
                .unwrap();
        }
        send.put("step 1 rover").wait().unwrap();
        let a = next(&answers, Duration::from_secs(10), &daemon);
        assert_eq!((&a["ok"], &a["step"]), (&json!(true), &json!(k)), "{a}");
        // The step's own publication went out before its answer.
        let mut newest = None;
        while let Ok(Some(s)) = states.try_recv() {
            newest = Some(serde_json::from_slice::<Value>(&s.payload().to_bytes()).unwrap());
        }
        let newest = newest.unwrap_or_else(|| panic!("answer {k} came before its state"));
        assert_eq!(newest["step"], json!(k));
        assert_eq!(newest["position"], a["observe"]["rover"]["position"]);
        last = a;
    }
    // Not read from here on: a full FIFO would hold up this session's receive thread.
    drop(states);
    let stats = control(&session, prefix, "stats");
    assert_eq!(stats["steps"], json!(N));
    assert_eq!(
        input_of(&stats, &cmd_key)["accepted"],
        json!(N - 1),
        "{stats}"
    );

    // The same world in-process, the rover driven by its behaviour alone: the same state, bit
    // for bit (JSON numbers round-trip f64 exactly).
    let mut reference: Value =
        serde_json::from_str(&std::fs::read_to_string(&scene).unwrap()).unwrap();
    reference.as_object_mut().unwrap().remove("extensions");
    for a in reference["artifacts"].as_array_mut().unwrap() {
        if a["name"] == "rover" {
            a["overrides"]["driver"] =
                json!({ "behaviour": { "velocity": { "linear": 0.4, "angular": 0.3 } } });
        }
    }
    let reference = ws.write("reference.json", &reference.to_string());
    let mut env = build_fast(&reference, 1).expect("reference builds");
    step_n(&mut env, N);
    let s = state_of(&env, "rover");
    let rover = &last["observe"]["rover"];
    let q = s.pose.rotation;
    assert_eq!(
        floats(&rover["position"]),
        s.pose.translation.vector.as_slice(),
        "{rover}"
    );
    assert_eq!(floats(&rover["orientation"]), [q.w, q.i, q.j, q.k]);
    assert_eq!(floats(&rover["linear_velocity"]), s.linvel.as_slice());
    assert_eq!(floats(&rover["angular_velocity"]), s.angvel.as_slice());
    let start = plane_distance(s.pose.translation.vector.as_slice(), [-3.5, 2.5]);
    assert!(
        start > 1.0,
        "the rover drove (a circle of radius 1.33 m): {rover}"
    );

    // Interruptible: a million steps run unpaced; stats are answered meanwhile; pause stops
    // them at the next step boundary and the step's answer says where.
    send.put("step 1000000").wait().unwrap();
    let mut before_pause = N;
    wait_for("steps under way", Duration::from_secs(30), || {
        before_pause = control(&session, prefix, "stats")["steps"]
            .as_u64()
            .unwrap();
        before_pause > N + 1000
    });
    let paused = control(&session, prefix, "pause");
    let at = paused["step"].as_u64().unwrap();
    assert_eq!(paused["state"], "paused", "{paused}");
    // The pause took effect where it arrived, before the million steps were done. How many
    // steps ran between the last stats answer and the pause is a matter of wall-clock time
    // (two round trips: 136 steps in a full test run, 562 beside `stress-ng --cpu 2`), not
    // asserted here.
    assert!(
        before_pause <= at && at < N + 1_000_000,
        "paused at step {at}, the last stats answer said {before_pause}"
    );
    let cut = next(&answers, Duration::from_secs(10), &daemon);
    assert_eq!(
        (&cut["step"], &cut["interrupted"], &cut["remaining"]),
        (&json!(at), &json!(true), &json!(N + 1_000_000 - at)),
        "{cut}"
    );
    assert_eq!(control(&session, prefix, "stats")["steps"], json!(at));

    // Bounded: a 4 MB command is refused unread, with a short answer, on either path; the run
    // is untouched.
    let big = "x".repeat(4 << 20);
    let reply = session
        .get(format!("{prefix}/control"))
        .payload(big.clone())
        .timeout(Duration::from_secs(10))
        .wait()
        .unwrap()
        .recv()
        .unwrap();
    let text =
        String::from_utf8(reply.result().unwrap().payload().to_bytes().into_owned()).unwrap();
    let expected = json!({"ok": false, "error": format!("command too long (4194304 bytes, at most 4096); {}", "known: pause, resume, step N [observe...] (N from 1 to 1000000, while paused), stats, list, reload LIBRARY, reset [SEED]")});
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), expected);
    assert!(text.len() < 200, "{text}");
    send.put(big).wait().unwrap();
    assert_eq!(next(&answers, Duration::from_secs(10), &daemon), expected);
    let stats = control(&session, prefix, "stats");
    assert_eq!(
        (&stats["steps"], &stats["control_refused"]),
        (&json!(at), &json!(2))
    );
    send.put("step 3").wait().unwrap();
    assert_eq!(
        next(&answers, Duration::from_secs(10), &daemon)["step"],
        json!(at + 3)
    );

    drop(session);
    let (code, log) = daemon.interrupt();
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("paused before step 1 (--paused)"), "{log}");
    // One warning with counts for the first refusal; the second within the same second is
    // reported by the flush once the second has passed (if the run lived that long).
    assert!(
        log.contains(&format!("zenoh: refused a control command on '{prefix}/control': command too long (4194304 bytes, at most 4096)")),
        "{log}"
    );
}

/// A paused daemon with a gripper robot `bot` taking commands and a cube before its paddles
/// (the Zenoh extension at `prefix`, with a ROS 2 node for `bot` when `ros2`), a session
/// connected to it, and the driver's first step done (it subscribes then).
fn gripper_daemon(ws: &Workspace, prefix: &str, ros2: bool) -> (Daemon, zenoh::Session) {
    let port = free_port();
    let mut descriptor = json!({ "prefix": prefix, "listen": [format!("tcp/127.0.0.1:{port}")] });
    if ros2 {
        descriptor["ros2"] = json!({ "robots": ["bot"] });
    }
    let scene = ws.write(
        "gripper.json",
        &json!({
            "timestep": 0.002,
            "extensions": [{ "name": "zenoh", "library": "libssx_zenoh.so", "plugin": "zenoh",
                "descriptor": descriptor }],
            "artifacts": [
                { "name": "ground", "artifact": ssx_tests::library("ground.json") },
                { "name": "cube", "artifact": ssx_tests::library("cube.json"),
                  "pose": { "position": [0.36, 0, 0.1] } },
                { "name": "bot", "artifact": ssx_tests::library("pioneer-gripper.json"),
                  "pose": { "position": [0, 0, 0.12] },
                  "overrides": { "driver": { "commands": {} } } }
            ]
        })
        .to_string(),
    );
    let mut daemon = Daemon::start_with(&scene.display().to_string(), 3600, &["--paused"]);
    let session = connect(port, &mut daemon);
    assert_eq!(control(&session, prefix, "step 1")["ok"], json!(true));
    (daemon, session)
}

/// Steps 50 times and says the cube's height.
fn cube_height(session: &zenoh::Session, prefix: &str) -> f64 {
    let a = control(session, prefix, "step 50 cube");
    assert_eq!(a["ok"], json!(true), "{a}");
    floats(&a["observe"]["cube"]["position"])[2]
}

/// The gripper takes commands from outside as the rover's velocity does: `{"grip": 1,
/// "height": h}` on `P/artifacts/<name>/gripper` closes on the cube before the paddles and
/// lifts it; `{"grip": 0, ...}` lets it fall back to the floor.
#[test]
fn a_gripper_closes_lifts_and_opens_on_zenoh_commands() {
    let _one = one_at_a_time();
    let ws = Workspace::new();
    let prefix = "ssx/test-gripper";
    let (daemon, session) = gripper_daemon(&ws, prefix, false);
    let gripper = session
        .declare_publisher(format!("{prefix}/artifacts/bot/gripper"))
        .express(true)
        .wait()
        .unwrap();
    for (command, z) in [
        (r#"{"grip": 1, "height": 0.2}"#, 0.3),
        (r#"{"grip": 0, "height": 0}"#, 0.1),
    ] {
        gripper.put(command).wait().unwrap();
        let mut tries = 0;
        while (cube_height(&session, prefix) - z).abs() > 0.005 {
            tries += 1;
            assert!(
                tries < 40,
                "the cube never reached z = {z}: {}",
                daemon.log()
            );
        }
    }
    let stats = control(&session, prefix, "stats");
    let input = input_of(&stats, &format!("{prefix}/artifacts/bot/gripper"));
    assert_eq!(input["accepted"], json!(2), "{stats}");
}

/// The same gripper from the ROS 2 side (docs/ros2.md): `/bot/gripper/grip` (std_msgs/msg/Bool)
/// and `/bot/gripper/height` (std_msgs/msg/Float64) under rmw_zenoh's key layout, with the type
/// hashes and CDR bytes `rosbags` wrote into the ROS 2 fixtures (not ssx's encoder).
#[test]
fn a_gripper_takes_ros2_bool_and_float64_topics() {
    let _one = one_at_a_time();
    let ws = Workspace::new();
    let prefix = "ssx/test-gripper-ros2";
    let fixtures: Value = serde_json::from_str(
        &std::fs::read_to_string(
            ssx_tests::repo_root().join("extensions/ros2/fixtures/fixtures.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let fixture = |t: &str| {
        let e = fixtures["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["type"] == t)
            .unwrap_or_else(|| panic!("no fixture for {t}"));
        let hex = e["cdr"].as_str().unwrap();
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        (e["hash"].as_str().unwrap().to_string(), bytes)
    };
    let (bool_hash, grip_true) = fixture("std_msgs/msg/Bool");
    let (f64_hash, height_quarter) = fixture("std_msgs/msg/Float64"); // 0.25
    let mut grip_false = grip_true.clone();
    *grip_false.last_mut().unwrap() = 0;
    let key = |topic: &str, dds: &str, hash: &str| format!("0/bot/gripper/{topic}/{dds}/{hash}");
    let grip_key = key("grip", "std_msgs::msg::dds_::Bool_", &bool_hash);
    let height_key = key("height", "std_msgs::msg::dds_::Float64_", &f64_hash);

    let (daemon, session) = gripper_daemon(&ws, prefix, true);
    for (puts, z) in [
        (
            vec![(&height_key, &height_quarter), (&grip_key, &grip_true)],
            0.35,
        ),
        (vec![(&grip_key, &grip_false)], 0.1),
    ] {
        let mut tries = 0;
        loop {
            // Published again each round: the subscriber may be declared a moment after step 1.
            for (k, bytes) in &puts {
                session.put(k.as_str(), bytes.to_vec()).wait().unwrap();
            }
            if (cube_height(&session, prefix) - z).abs() < 0.005 {
                break;
            }
            tries += 1;
            assert!(
                tries < 40,
                "the cube never reached z = {z}: {}",
                daemon.log()
            );
        }
    }
}
