//! The daemon exposed safely (docs/zenoh.md "Security"): the shipped lab configuration
//! (`artifacts/zenoh/lab.json5`, mutual TLS and an access-control list) on a real daemon, with
//! certificates made at test time (rcgen) for a CA, the daemon and two clients, `operator` and
//! `observer`, and a stranger certified by another CA. Real Zenoh sessions over TLS on loopback:
//! without a certificate of the lab's CA a client cannot connect; the observer gets states, and
//! its commands and control requests never reach the run; the operator drives the rover and
//! controls the run; the independent ROS 2 client works through the same configuration.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use ssx_tests::daemon::{Daemon, connect_with, control, one_at_a_time, wait_for};
use ssx_tests::lab::{certify, client};
use ssx_tests::{Workspace, free_port, hil_scene, repo_root};
use zenoh::Wait;

const PREFIX: &str = "ssx/lab";

/// The shipped ROS 2 scene behind the shipped lab configuration, listening on loopback only
/// (`tls/127.0.0.1:PORT`, which the scene's `listen` sets over the file's `0.0.0.0`).
fn lab_scene(ws: &Workspace, port: u16) -> String {
    hil_scene(ws, "ros2", port, PREFIX, |s| {
        let d = &mut s["extensions"][0]["descriptor"];
        d["config_file"] = json!(repo_root().join("artifacts/zenoh/lab.json5"));
        d["listen"] = json!([format!("tls/127.0.0.1:{port}")]);
        d["expose"] = json!(true);
        d["artifacts"] = json!({ "rover": { "state": { "every": 10 } } });
        // The rover's camera at one frame a second: the test is about the network.
        s["artifacts"][1]["overrides"] = json!({ "sensors": { "camera": { "rate": 1 } } });
    })
}

/// A session as `name`, retried until the daemon listens (≤ 60 s).
fn open_as(dir: &Path, name: &str, port: u16, daemon: &mut Daemon) -> zenoh::Session {
    connect_with(|| client(dir, Some(name), port), daemon)
}

fn input_of<'a>(stats: &'a Value, key: &str) -> &'a Value {
    stats["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["key"] == key)
        .unwrap_or_else(|| panic!("no input {key}: {stats}"))
}

fn position(state: &Value) -> (f64, f64) {
    (
        state["position"][0].as_f64().unwrap(),
        state["position"][1].as_f64().unwrap(),
    )
}

#[test]
fn the_lab_configuration_lets_operators_drive_observers_watch_and_nobody_else_in() {
    let _one = one_at_a_time();
    let ws = Workspace::new();
    certify(ws.path(), "ssx lab CA", &["operator", "observer"]);
    // A stranger: a certificate named "operator", but by another CA.
    let elsewhere = ws.path().join("elsewhere");
    certify(&elsewhere, "another CA", &["operator"]);
    std::fs::copy(
        ws.path().join("certs/ca.pem"),
        elsewhere.join("certs/ca.pem"),
    )
    .unwrap();
    let port = free_port();
    let scene = lab_scene(&ws, port);
    let mut daemon = Daemon::start_in(Some(ws.path()), &scene, 600, &[]);
    let operator = open_as(ws.path(), "operator", port, &mut daemon);

    // Nobody else gets in: no certificate, a certificate of another CA, plain TCP.
    assert!(
        zenoh::open(client(ws.path(), None, port)).wait().is_err(),
        "a client without a certificate connected"
    );
    assert!(
        zenoh::open(client(&elsewhere, Some("operator"), port))
            .wait()
            .is_err(),
        "a client certified by another CA connected"
    );
    assert!(
        zenoh::open(ssx_tests::daemon::client_config(port))
            .wait()
            .is_err(),
        "a plain TCP client connected"
    );

    // The observer reads states ...
    let observer = open_as(ws.path(), "observer", port, &mut daemon);
    let state_key = format!("{PREFIX}/artifacts/rover/state");
    let states = observer.declare_subscriber(&state_key).wait().unwrap();
    let first = states
        .recv_timeout(Duration::from_secs(10))
        .unwrap()
        .expect("the observer gets the rover's state");
    let seen: Value = serde_json::from_slice(&first.payload().to_bytes()).unwrap();
    assert!(seen["step"].as_u64().unwrap() > 0, "{seen}");
    // ... and none of its commands or control requests reaches the run.
    let cmd_key = format!("{PREFIX}/artifacts/rover/cmd");
    let cmd = observer.declare_publisher(&cmd_key).wait().unwrap();
    let control_in = observer
        .declare_publisher(format!("{PREFIX}/control/in"))
        .wait()
        .unwrap();
    let sent = 50;
    for _ in 0..sent {
        cmd.put(r#"{"linear": 1.0, "angular": 0.0}"#)
            .wait()
            .unwrap();
        control_in.put("pause").wait().unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    let replies = observer
        .get(format!("{PREFIX}/control"))
        .payload("pause")
        .timeout(Duration::from_secs(2))
        .wait()
        .unwrap();
    let mut answered = 0;
    while let Ok(reply) = replies.recv_timeout(Duration::from_secs(3)) {
        match reply {
            Some(r) if r.result().is_ok() => answered += 1,
            Some(_) => {}
            None => break,
        }
    }
    assert_eq!(answered, 0, "the observer's pause query was answered");
    // Counted at the daemon: none of the 50 commands arrived, and the run was never paused.
    let stats = control(&operator, PREFIX, "stats");
    let input = input_of(&stats, &cmd_key);
    assert_eq!(
        (&input["accepted"], &input["malformed"]),
        (&json!(0), &json!(0)),
        "{stats}"
    );
    assert_eq!(stats["paused"], json!(false), "{stats}");
    assert_eq!(
        stats["control_refused"],
        json!(0),
        "nothing of the observer's reached the control either: {stats}"
    );

    // The operator drives the rover and controls the run.
    let before = position(&seen);
    let drive = operator.declare_publisher(&cmd_key).wait().unwrap();
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(1500) {
        drive
            .put(r#"{"linear": 0.5, "angular": 0.0}"#)
            .wait()
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    let stats = control(&operator, PREFIX, "stats");
    assert!(
        input_of(&stats, &cmd_key)["accepted"].as_u64().unwrap() > 10,
        "{stats}"
    );
    let mut now = Value::Null;
    while let Ok(Some(s)) = states.try_recv() {
        now = serde_json::from_slice(&s.payload().to_bytes()).unwrap();
    }
    let after = position(&now);
    assert!(
        (after.0 - before.0).hypot(after.1 - before.1) > 0.2,
        "the operator's commands drove the rover: {before:?} -> {after:?}"
    );
    let paused = control(&operator, PREFIX, "pause");
    assert_eq!(paused["state"], json!("paused"), "{paused}");
    let resumed = control(&operator, PREFIX, "resume");
    assert_eq!(resumed["state"], json!("running"), "{resumed}");

    drop((states, cmd, control_in, drive));
    drop((observer, operator));
    let (code, log) = daemon.interrupt();
    assert_eq!(code, Some(0), "{log}");
}

#[test]
fn the_independent_ros2_client_works_through_the_lab_configuration() {
    let _one = one_at_a_time();
    let python = ssx_tests::python_for_clients();
    let ws = Workspace::new();
    certify(ws.path(), "ssx lab CA", &["operator"]);
    let port = free_port();
    let scene = lab_scene(&ws, port);
    let mut daemon = Daemon::start_in(Some(ws.path()), &scene, 600, &[]);
    let operator = open_as(ws.path(), "operator", port, &mut daemon);
    // The shipped client file, its certificate paths made absolute for the client's directory.
    let config: PathBuf = ws.path().join("operator.json5");
    let text = std::fs::read_to_string(repo_root().join("artifacts/zenoh/client.json5"))
        .unwrap()
        .replace("certs/client.", "certs/operator.");
    std::fs::write(&config, text).unwrap();
    let t0 = Instant::now();
    let out = std::process::Command::new(&python)
        .current_dir(ws.path())
        .arg(repo_root().join("extensions/zenoh/clients/ros2_client.py"))
        .arg("--config")
        .arg(&config)
        .args(["--connect", &format!("tls/localhost:{port}")])
        .args(["--timeout", "30"])
        .output()
        .expect("run the ROS 2 client");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "the ROS 2 client failed:\n{stdout}\n{stderr}\n--- ssxd:\n{}",
        daemon.log()
    );
    assert!(stdout.contains("summary: node 'ssx' with "), "{stdout}");
    eprintln!(
        "{stdout}the client took {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    wait_for(
        "the ROS 2 messages to be counted",
        Duration::from_secs(10),
        || {
            control(&operator, PREFIX, "stats")["metrics"]["zenoh.ros2_published"]
                .as_f64()
                .unwrap_or(0.0)
                > 100.0
        },
    );
    drop(operator);
    let (code, log) = daemon.interrupt();
    assert_eq!(code, Some(0), "{log}");
}
