//! The `ssxd` binary as a user runs it: exit statuses, messages, the stats file, signals.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ssx_tests::{Workspace, repo_root, ssxd};

fn quickstart() -> std::path::PathBuf {
    repo_root().join("artifacts/scenes/quickstart.json")
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(ssxd()).args(args).output().expect("run ssxd");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn read_json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("stats file")).expect("stats JSON")
}

#[test]
fn run_fast_writes_the_stats_of_the_design() {
    let ws = Workspace::new();
    let stats = ws.path().join("s.json");
    let (code, stdout, stderr) = run(&[
        "run",
        quickstart().to_str().unwrap(),
        "--steps",
        "500",
        "--mode",
        "fast",
        "--stats-json",
        stats.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("ssx run summary"), "{stdout}");
    let v = read_json(&stats);
    assert_eq!(v["steps"], 500);
    assert_eq!(v["timestep_s"], 0.001);
    assert!((v["sim_time_s"].as_f64().unwrap() - 0.5).abs() < 1e-9);
    assert_eq!(v["mode"], "fast");
    assert_eq!(v["deadline_misses"], 0);
    assert!(v["wall_time_s"].as_f64().unwrap() > 0.0);
    for key in ["p50", "p90", "p99", "p999", "max"] {
        assert!(v["step_time_us"][key].as_f64().unwrap() > 0.0);
        for phase in ["physics", "sensors", "drivers"] {
            assert!(v["phase_time_us"][phase][key].is_number(), "{phase}.{key}");
        }
    }
}

#[test]
fn check_validates_without_running() {
    let (code, stdout, stderr) = run(&["check", quickstart().to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("ok: scene 'quickstart'"), "{stdout}");
    assert!(
        stdout.contains("17 artifacts, 17 bodies, 3 drivers, 3 sensors, 0 extensions"),
        "{stdout}"
    );
}

#[test]
fn a_bad_scene_is_one_message_and_exit_status_2_with_nothing_written() {
    let ws = Workspace::new();
    let scene = ws.write("bad.json", "{\n  \"timestep\": -1\n}\n");
    let stats = ws.path().join("s.json");
    for cmd in [
        vec!["check", scene.to_str().unwrap()],
        vec![
            "run",
            scene.to_str().unwrap(),
            "--stats-json",
            stats.to_str().unwrap(),
        ],
    ] {
        let (code, stdout, stderr) = run(&cmd);
        assert_eq!(code, 2);
        assert_eq!(
            stderr,
            format!(
                "error: {}:2:15 (at timestep): expected a timestep (s) from 1e-6 to 1, got -1\n",
                scene.display()
            )
        );
        assert!(stdout.is_empty());
    }
    assert!(
        !stats.exists(),
        "no stats file for a run that never started"
    );
}

#[test]
fn bad_flags_are_refused_before_running() {
    let q = quickstart();
    let q = q.to_str().unwrap();
    let (code, _, stderr) = run(&["run", q, "--rt-factor", "-2", "--steps", "1"]);
    assert_eq!(
        (code, stderr.as_str()),
        (
            2,
            "error: --rt-factor must be from 0.001 to 1000 (simulated seconds per wall second), got -2\n"
        )
    );
    let (code, _, stderr) = run(&[
        "run",
        q,
        "--steps",
        "1",
        "--stats-json",
        "/nonexistent-dir/s.json",
    ]);
    assert_eq!(
        (code, stderr.as_str()),
        (
            2,
            "error: --stats-json '/nonexistent-dir/s.json': directory '/nonexistent-dir' does not exist\n"
        )
    );
    let (code, _, stderr) = run(&["run", q, "--steps", "1", "--workers", "0"]);
    assert_eq!(
        (code, stderr.as_str()),
        (2, "error: --workers must be from 1 to 256, got 0\n")
    );
    let (code, _, stderr) = run(&["run", q, "--mode", "fast", "--rt-factor", "2"]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(
            "error: the argument '--mode <MODE>' cannot be used with '--rt-factor <RT_FACTOR>'"
        ),
        "{stderr}"
    );
}

/// A driver that panics at its first step (found next to ssxd, in the build's directory).
fn failing_driver_scene(ws: &Workspace) -> std::path::PathBuf {
    ws.write(
        "ghost.json",
        r#"{ "bodies": [ { "name": "b", "mass": 1.0, "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ],
             "driver": { "library": "libssx_test_plugins.so", "plugin": "panicky", "descriptor": { "at": 1 } } }"#,
    );
    ws.write(
        "s.json",
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "ghost", "artifact": "ghost.json" } ] }"#,
    )
}

#[test]
fn a_failing_driver_is_disabled_or_in_strict_mode_stops_the_run() {
    let ws = Workspace::new();
    let scene = failing_driver_scene(&ws);
    let stats = ws.path().join("stats.json");
    let args = [
        "run",
        scene.to_str().unwrap(),
        "--mode",
        "fast",
        "--steps",
        "50",
        "--stats-json",
        stats.to_str().unwrap(),
    ];
    let (code, _, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("artifact 'ghost': driver 'panicky' failed at step 1: panicked: rotor 1 lost; it is disabled, the simulation goes on"), "{stderr}");
    let v = read_json(&stats);
    assert_eq!(
        (v["steps"].as_u64(), v["plugin_faults"].as_u64()),
        (Some(50), Some(1))
    );

    std::fs::remove_file(&stats).unwrap();
    let mut strict = args.to_vec();
    strict.push("--strict");
    let (code, _, stderr) = run(&strict);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.ends_with("error: artifact 'ghost': driver 'panicky' failed at step 1: panicked: rotor 1 lost (strict mode: stopping)\n"), "{stderr}");
    assert_eq!(
        read_json(&stats)["plugin_faults"],
        1,
        "stats are written on a strict stop too"
    );
}

#[test]
fn sigint_and_sigterm_stop_cleanly_at_a_step_boundary_and_write_the_stats() {
    for signal in ["-INT", "-TERM"] {
        stops_cleanly_on(signal);
    }
}

fn stops_cleanly_on(signal: &str) {
    let ws = Workspace::new();
    let stats = ws.path().join("s.json");
    let mut child = Command::new(ssxd())
        .args([
            "run",
            quickstart().to_str().unwrap(),
            "--stats-json",
            stats.to_str().unwrap(),
            "--log-format",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ssxd");
    // Wait (bounded) for the daemon's first status line (a second of steps taken), then
    // interrupt it.
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !line.contains("steps=") {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "ssxd exited early"
        );
        assert!(Instant::now() < deadline, "ssxd did not start");
    }
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let started = Instant::now();
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "ssxd did not stop after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code, Some(0));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert!(rest.contains("stopped by signal at step"), "{rest}");
    let v = read_json(&stats);
    let steps = v["steps"].as_u64().unwrap();
    assert!(steps > 0);
    assert!((v["sim_time_s"].as_f64().unwrap() - steps as f64 * 0.001).abs() < 1e-9);
}

#[test]
fn real_time_settings_that_cannot_be_applied_warn_or_stop_under_strict_rt() {
    let scene = repo_root().join("artifacts/scenes/minimal.json");
    let scene = scene.to_str().unwrap();
    // CPU 1000 is within the kernel's set size but on no machine we run on: EINVAL.
    let args = [
        "run",
        scene,
        "--mode",
        "fast",
        "--steps",
        "10",
        "--quiet",
        "--cpu-affinity",
        "1000",
    ];
    let (code, _, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("--cpu-affinity: cannot pin thread 0 to CPU 1000: Invalid argument (os error 22); running without it"),
        "{err}"
    );
    let strict: Vec<&str> = args.iter().copied().chain(["--strict-rt"]).collect();
    let (code, _, err) = run(&strict);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("error: --cpu-affinity: cannot pin thread 0 to CPU 1000: Invalid argument (os error 22) (--strict-rt)"),
        "{err}"
    );
    let (code, _, err) = run(&["run", scene, "--rt-priority", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("invalid value '0' for '--rt-priority <RT_PRIORITY>': 0 is not in 1..=99"),
        "{err}"
    );
    let (code, _, err) = run(&["run", scene, "--cpu-affinity", "3-1"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("invalid CPU list '3-1': expected numbers and ranges like 0,2-3"),
        "{err}"
    );
}

/// The plugin copy folders in `tmp` (names).
fn copy_folders(tmp: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(tmp)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ssx-plugins-"))
        .collect();
    names.sort();
    names
}

/// `ssxd run` of the quickstart in real time with `TMPDIR=tmp`, its stderr into `log`; returns
/// once it runs (bounded), with the name of its plugin copy folder. The caller waits for it.
#[allow(clippy::zombie_processes)]
fn daemon_in(tmp: &std::path::Path, log: &std::path::Path) -> (std::process::Child, String) {
    let mut child = Command::new(ssxd())
        .args(["run", quickstart().to_str().unwrap(), "--duration", "60"])
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("spawn ssxd");
    let mine = format!("ssx-plugins-{}-", child.id());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let running = std::fs::read_to_string(log).is_ok_and(|l| l.contains("running scene"));
        if let Some(name) = copy_folders(tmp).into_iter().find(|n| n.starts_with(&mine))
            && running
        {
            return (child, name);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "no copy folder: {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_killed_daemons_plugin_copies_are_removed_by_the_next_and_a_live_ones_kept() {
    let ws = Workspace::new();
    let tmp = ws.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // Killed with SIGKILL: nothing of it runs to remove its copies.
    let (mut killed, killed_dir) = daemon_in(&tmp, &ws.path().join("a.log"));
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert_eq!(copy_folders(&tmp), vec![killed_dir.clone()]);
    let bytes: u64 = std::fs::read_dir(tmp.join(&killed_dir))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(bytes > 0, "the copies were made");

    // The next daemon removes them and says so once.
    let (mut live, live_dir) = daemon_in(&tmp, &ws.path().join("b.log"));
    assert_eq!(copy_folders(&tmp), vec![live_dir.clone()]);
    // The line is logged before the copies are made; the log file is written as it goes.
    let log = std::fs::read_to_string(ws.path().join("b.log")).unwrap();
    let said: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("plugin copy folder"))
        .collect();
    assert_eq!(said.len(), 1, "{log}");
    let expected = format!(
        "removed 1 plugin copy folder(s) left by processes that are gone ({:.1} MB freed, in {})",
        bytes as f64 / 1e6,
        tmp.display()
    );
    assert!(said[0].ends_with(&expected), "{log}");

    // A third daemon leaves the live one's folder alone.
    let (mut third, third_dir) = daemon_in(&tmp, &ws.path().join("c.log"));
    let mut both = vec![live_dir, third_dir];
    both.sort();
    assert_eq!(copy_folders(&tmp), both);
    let log = std::fs::read_to_string(ws.path().join("c.log")).unwrap();
    assert!(!log.contains("plugin copy folder"), "{log}");

    // Stopped by a signal, each removes its own.
    for child in [&mut live, &mut third] {
        let pid = child.id().to_string();
        Command::new("kill").args(["-INT", &pid]).status().unwrap();
    }
    let statuses: Vec<_> = [&mut live, &mut third]
        .into_iter()
        .map(|c| c.wait().unwrap())
        .collect();
    assert_eq!(
        copy_folders(&tmp),
        Vec::<String>::new(),
        "{statuses:?}\n{}\n{}",
        std::fs::read_to_string(ws.path().join("b.log")).unwrap(),
        std::fs::read_to_string(ws.path().join("c.log")).unwrap()
    );
}
