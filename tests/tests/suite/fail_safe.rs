//! The daemon as an attacker and a careless plugin author would meet it: a plugin that crashes
//! the process or never returns is named, and every class of hostile scene, file and flag ends
//! in exit status 2 with one located message, within seconds and a bounded amount of memory.
//! Every run is a real ssxd under `prlimit`, killed (and the test failed) if it overstays.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ssx_tests::{Bounded, Workspace, c_library, repo_root, ssxd, ssxd_bounded};

/// Address space a refused input may take: far below what the bombs would allocate.
const MEMORY: u64 = 4 << 30;

fn bounded(args: &[&str]) -> Bounded {
    ssxd_bounded(args, 20, MEMORY)
}

/// `ssxd check` and `ssxd run` both refuse `scene` with exit status 2, quickly, with one
/// `error:` line that contains every part of `expect` and no panic.
fn refused(ws: &Workspace, scene: &str, expect: &[&str]) {
    let path = ws.path().join(scene);
    let path = path.to_str().unwrap();
    for args in [
        vec!["check", path],
        vec!["run", path, "--mode", "fast", "--steps", "3", "--quiet"],
    ] {
        let r = bounded(&args);
        assert_eq!(r.code, Some(2), "{args:?}: {r:?}");
        assert!(
            r.elapsed < Duration::from_secs(5),
            "{args:?} took {:?}",
            r.elapsed
        );
        assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
        let errors: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("error: "))
            .collect();
        assert_eq!(errors.len(), 1, "{args:?}: {}", r.stderr);
        for part in expect {
            assert!(
                errors[0].contains(part),
                "{args:?}: '{part}' not in {}",
                errors[0]
            );
        }
    }
}

const BOX: &str = r#"{ "bodies": [ { "name": "b", "colliders": [ { "shape": { "box": { "size": [0.2, 0.2, 0.2] } } } ] } ] }"#;

fn scene_with(ws: &Workspace, artifact: &str, extra: &str) -> String {
    ws.write("a.json", artifact);
    ws.write(
        "s.json",
        &format!(
            r#"{{ "timestep": 0.01{extra}, "artifacts": [ {{ "name": "x", "artifact": "a.json" }} ] }}"#
        ),
    );
    "s.json".into()
}

#[test]
fn numbers_beyond_what_the_engine_or_the_clock_can_represent_are_refused_where_written() {
    let ws = Workspace::new();
    for (timestep, message) in [
        ("1e20", "expected a timestep (s) from 1e-6 to 1, got 1e20"),
        ("1e-9", "expected a timestep (s) from 1e-6 to 1, got 1e-9"),
    ] {
        ws.write("a.json", BOX);
        ws.write(
            "t.json",
            &format!(r#"{{ "timestep": {timestep}, "artifacts": [ {{ "name": "x", "artifact": "a.json" }} ] }}"#),
        );
        refused(&ws, "t.json", &["t.json:1:15 (at timestep)", message]);
    }
    let s = scene_with(&ws, BOX, r#", "gravity": [0, 0, -1e30]"#);
    refused(
        &ws,
        &s,
        &[
            "s.json:1:39 (at gravity[2])",
            "expected a gravity component (m/s²) from -1000 to 1000",
        ],
    );
    let far = r#"{ "bodies": [ { "name": "b", "pose": { "position": [1e39, 0, 0] }, "colliders": [ { "shape": { "sphere": { "radius": 1 } } } ] } ] }"#;
    let s = scene_with(&ws, far, "");
    refused(
        &ws,
        &s,
        &[
            "a.json:1:53 (at bodies[0].pose.position[0])",
            "expected a coordinate (m) from -100000 to 100000, got 1e39",
        ],
    );
    let huge = r#"{ "bodies": [ { "name": "b", "colliders": [ { "shape": { "box": { "size": [1e30, 1, 1] } } } ] } ] }"#;
    let s = scene_with(&ws, huge, "");
    refused(
        &ws,
        &s,
        &[
            "(at bodies[0].colliders[0].shape.box.size[0])",
            "expected a size (m) from 1e-4 to 10000, got 1e30",
        ],
    );
    let light = r#"{ "bodies": [ { "name": "b", "mass": 1e-300, "inertia": [1, 1, 1], "colliders": [] } ] }"#;
    let s = scene_with(&ws, light, "");
    refused(
        &ws,
        &s,
        &[
            "(at bodies[0].mass)",
            "expected a mass (kg) from 1e-6 to 1e9, got 1e-300",
        ],
    );
    let flat = r#"{ "bodies": [ { "name": "b", "mass": 1, "inertia": [1e-40, 1, 1] } ] }"#;
    let s = scene_with(&ws, flat, "");
    refused(
        &ws,
        &s,
        &["(at bodies[0].inertia[0])", "expected a moment of inertia"],
    );
    let dust = r#"{ "bodies": [ { "name": "b", "density": 0.001, "colliders": [ { "shape": { "sphere": { "radius": 0.0001 } } } ] } ] }"#;
    let s = scene_with(&ws, dust, "");
    refused(
        &ws,
        &s,
        &[
            "a.json:1:15 (at bodies[0])",
            "body 'b' would weigh 4.189e-15 kg (density x volume)",
        ],
    );
    // A grid whose replicas end up beyond the position limit.
    ws.write("a.json", BOX);
    ws.write(
        "g.json",
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "a.json", "replicate": { "grid": { "count": 100, "columns": 100, "spacing": [5000, 1] } } } ] }"#,
    );
    refused(
        &ws,
        "g.json",
        &[
            "(at artifacts[0].replicate)",
            "'x_21' would stand 1.050e5 m from the origin",
        ],
    );
    // Descriptor values a plugin would reject at step 1 are refused by check.
    let hover = r#"{ "bodies": [ { "name": "b", "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ],
        "driver": { "library": "libssx_driver_hover.so", "plugin": "hover", "descriptor": { "height": 1e308 } } }"#;
    let s = scene_with(&ws, hover, "");
    refused(
        &ws,
        &s,
        &[
            "(at driver.descriptor))",
            "invalid descriptor: 'height' must be from -100000 to 100000, got 1e308",
        ],
    );
}

#[test]
fn resource_bombs_are_refused_before_anything_is_allocated() {
    let ws = Workspace::new();
    ws.write("a.json", BOX);
    ws.write(
        "many.json",
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "a.json", "replicate": { "grid": { "count": 4000000000, "spacing": [1, 1] } } } ] }"#,
    );
    refused(
        &ws,
        "many.json",
        &[
            "(at artifacts[0].replicate.grid.count)",
            "expected a count from 1 to 250000, got 4000000000",
        ],
    );
    ws.write(
        "sum.json",
        r#"{ "timestep": 0.01, "artifacts": [
            { "name": "x", "artifact": "a.json", "replicate": { "grid": { "count": 200000, "spacing": [0.3, 0.3] } } },
            { "name": "y", "artifact": "a.json", "replicate": { "grid": { "count": 200000, "spacing": [0.3, 0.3] } } } ] }"#,
    );
    refused(
        &ws,
        "sum.json",
        &[
            "sum.json:3:63 (at artifacts[1].replicate)",
            "the scene would have 400000 bodies; the limit is 250000",
        ],
    );
    // 100,000 open brackets: refused at the 65th, not parsed.
    ws.write(
        "deep.json",
        &format!(r#"{{ "timestep": 0.01, "x": {}"#, "[".repeat(100_000)),
    );
    refused(
        &ws,
        "deep.json",
        &[
            "deep.json:1:89 (at x[0][0]",
            "arrays and objects nest deeper than 64 levels",
        ],
    );
    // 12,000 nested includes: the 16th file may not include another.
    for i in 0..12_000 {
        ws.write(
            &format!("inc{i}.json"),
            &format!(r#"{{ "include": ["inc{}.json"] }}"#, i + 1),
        );
    }
    ws.write(
        "inc.json",
        r#"{ "timestep": 0.01, "include": ["inc0.json"] }"#,
    );
    refused(
        &ws,
        "inc.json",
        &[
            "inc14.json:1:15 (at include[0])",
            "includes nest deeper than 16 files",
        ],
    );
    // A file larger than the limit.
    let big = format!(
        r#"{{ "timestep": 0.01, "name": "{}" }}"#,
        "x".repeat(17 << 20)
    );
    ws.write("big.json", &big);
    refused(
        &ws,
        "big.json",
        &["big.json", "is larger than 16777216 bytes"],
    );
    // Devices and FIFOs as a scene, an artifact and an include.
    let fifo = ws.path().join("fifo.json");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for (name, text) in [
        (
            "dev_artifact.json",
            r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "/dev/zero" } ] }"#,
        ),
        (
            "fifo_include.json",
            r#"{ "timestep": 0.01, "include": ["fifo.json"] }"#,
        ),
    ] {
        ws.write(name, text);
        refused(
            &ws,
            name,
            &[if name == "dev_artifact.json" {
                "'/dev/zero' is a character device, not a regular file; name a JSON file"
            } else {
                "fifo.json' is a FIFO, not a regular file; name a JSON file"
            }],
        );
    }
    for scene in ["/dev/zero", fifo.to_str().unwrap()] {
        let r = bounded(&["check", scene]);
        assert_eq!(r.code, Some(2), "{r:?}");
        assert!(
            r.stderr.contains(", not a regular file; name a JSON file"),
            "{}",
            r.stderr
        );
    }
    // Rays, latency buffers and name lengths.
    let rays = r#"{ "bodies": [ { "name": "b", "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ],
        "sensors": [ { "name": "r", "library": "libssx_sensors.so", "plugin": "range", "descriptor": { "count": 100000000, "max_range": 2 } } ] }"#;
    let s = scene_with(&ws, rays, "");
    refused(
        &ws,
        &s,
        &[
            "(at sensors[0].descriptor))",
            "'count' must be from 1 to 4096, got 100000000",
        ],
    );
    let late = r#"{ "bodies": [ { "name": "b", "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ],
        "sensors": [ { "name": "p", "library": "libssx_sensors.so", "plugin": "pose", "descriptor": { "latency": 4000000000 } } ] }"#;
    let s = scene_with(&ws, late, "");
    refused(
        &ws,
        &s,
        &[
            "(at sensors[0].descriptor))",
            "'latency' must be at most 10000 steps, got 4000000000",
        ],
    );
    ws.write(
        "long.json",
        &format!(
            r#"{{ "timestep": 0.01, "artifacts": [ {{ "name": "{}", "artifact": "a.json" }} ] }}"#,
            "n".repeat(100_000)
        ),
    );
    refused(
        &ws,
        "long.json",
        &[
            "(at artifacts[0].name)",
            "expected a name of at most 128 bytes, got 100000 bytes",
        ],
    );
}

#[test]
fn malformed_files_are_located_where_the_problem_is() {
    let ws = Workspace::new();
    ws.write("a.json", BOX);
    ws.write("bom.json", "\u{feff}{ \"timestep\": 0.01 }");
    refused(&ws, "bom.json", &["bom.json:1:1:", "byte order mark"]);
    ws.write("dup.json", "{ \"timestep\": 0.01,\n  \"timestep\": 0.02 }");
    refused(
        &ws,
        "dup.json",
        &[
            "dup.json:2:3 (at timestep)",
            "duplicate key 'timestep' (first at line 1, column 3)",
        ],
    );
    ws.write("dupd.json", r#"{ "bodies": [ { "name": "b", "colliders": [] } ], "driver": { "plugin": "hover", "library": "libssx_driver_hover.so", "descriptor": { "height": 1, "height": 2 } } }"#);
    ws.write(
        "d.json",
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "dupd.json" } ] }"#,
    );
    refused(
        &ws,
        "d.json",
        &[
            "dupd.json:1:148 (at driver.descriptor.height)",
            "duplicate key 'height' (first at line 1, column 135)",
        ],
    );
    ws.write("trail.json", "{ \"timestep\": 0.01 }\n\n  garbage");
    refused(
        &ws,
        "trail.json",
        &[
            "trail.json:3:3:",
            "trailing characters after the JSON object",
        ],
    );
    ws.write(
        "cut.json",
        "{ \"timestep\": 0.01,\n  \"artifacts\": [ { \"name\": \"x\",\n",
    );
    refused(
        &ws,
        "cut.json",
        &[
            "cut.json:3:1:",
            "the file ends inside the object opened at line 2, column 18 (truncated?)",
        ],
    );
    ws.write("arr.json", "\n  [ { \"timestep\": 0.01 } ]");
    refused(
        &ws,
        "arr.json",
        &[
            "arr.json:2:3:",
            "expected a JSON object ({ ... }) at the top of the file, found '['",
        ],
    );
}

#[test]
fn control_characters_never_reach_the_terminal() {
    let ws = Workspace::new();
    ws.write("a.json", BOX);
    ws.write(
        "esc.json",
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "evil\u001b[2J\u0000", "artifact": "a.json" } ] }"#,
    );
    refused(
        &ws,
        "esc.json",
        &[
            "(at artifacts[0].name)",
            "a name may not contain control characters; 'evil\\u{1b}[2J\\u{0}' has U+001B",
        ],
    );
    // A path with an escape sequence, echoed in the message, is escaped too.
    ws.write("p.json", "{ \"timestep\": 0.01, \"artifacts\": [ { \"name\": \"x\", \"artifact\": \"\\u001b[31mred.json\" } ] }");
    let r = bounded(&["check", ws.path().join("p.json").to_str().unwrap()]);
    assert_eq!(r.code, Some(2));
    assert!(!r.stderr.contains('\u{1b}'), "{:?}", r.stderr);
    assert!(r.stderr.contains("\\u{1b}[31mred.json"), "{}", r.stderr);
}

#[test]
fn hostile_flags_are_refused_naming_the_flag() {
    let ws = Workspace::new();
    let scene = repo_root().join("artifacts/scenes/minimal.json");
    let scene = scene.to_str().unwrap();
    let fifo = ws.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let ro = ws.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let mut perm = std::fs::metadata(&ro).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o555);
    std::fs::set_permissions(&ro, perm).unwrap();
    let in_ro = ro.join("s.json");
    let root = unsafe_is_root();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--cpu-affinity", "0-4000000000"],
            "invalid CPU list '0-4000000000': CPUs are numbered 0 to 1023",
        ),
        (
            vec!["--rt-factor", "1e-300"],
            "--rt-factor must be from 0.001 to 1000 (simulated seconds per wall second), got 1e-300",
        ),
        (
            vec!["--rt-factor", "1e-12"],
            "--rt-factor must be from 0.001 to 1000",
        ),
        (
            vec!["--steps", "-1"],
            "expected a whole number of steps >= 0, got '-1'",
        ),
        (
            vec!["--workers", "1000000000"],
            "--workers must be from 1 to 256, got 1000000000",
        ),
        (
            vec!["--watchdog", "0"],
            "--watchdog must be from 0.01 to 3600 seconds, got 0",
        ),
        (
            vec!["--stats-json", fifo.to_str().unwrap()],
            "': is a FIFO, not a regular file; name a file",
        ),
        (
            vec!["--stats-json", "/dev/null"],
            "--stats-json '/dev/null': is a character device, not a regular file; name a file",
        ),
    ];
    let mut cases = cases;
    if !root {
        cases.push((
            vec!["--stats-json", in_ro.to_str().unwrap()],
            "cannot create a file in",
        ));
    }
    for (flags, message) in cases {
        let mut args = vec!["run", scene, "--mode", "fast", "--steps", "5"];
        if flags[0] == "--steps" || flags[0] == "--rt-factor" {
            // --steps is the flag under test; --rt-factor goes with the real-time mode.
            args.truncate(if flags[0] == "--steps" { 4 } else { 2 });
            args.extend(
                ["--steps", "5"]
                    .iter()
                    .filter(|_| flags[0] == "--rt-factor"),
            );
        }
        args.extend(flags.iter().copied());
        let r = bounded(&args);
        assert_eq!(r.code, Some(2), "{args:?}: {r:?}");
        assert!(r.stderr.contains(message), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        assert!(r.elapsed < Duration::from_secs(5));
    }
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo_like());
    assert!(!in_ro.exists());
}

/// Root may write into a read-only directory, so that case is skipped as root.
fn unsafe_is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

trait FifoLike {
    fn is_fifo_like(&self) -> bool;
}

impl FifoLike for std::fs::FileType {
    fn is_fifo_like(&self) -> bool {
        std::os::unix::fs::FileTypeExt::is_fifo(self)
    }
}

#[test]
fn logs_are_plain_text_when_not_on_a_terminal_and_quiet_is_quiet() {
    let scene = repo_root().join("artifacts/scenes/minimal.json");
    let r = bounded(&[
        "run",
        scene.to_str().unwrap(),
        "--mode",
        "fast",
        "--steps",
        "5",
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stderr.contains("running scene 'minimal'"), "{}", r.stderr);
    assert!(
        !r.stderr.contains('\u{1b}'),
        "colour codes on a pipe: {:?}",
        r.stderr
    );
    // Its plugin copies in a folder of its own: in the shared one, a copy folder that a killed
    // ssxd of another test left is swept and said at the info level (CI on 2026-11-29 failed
    // here so).
    let tmp = Workspace::new();
    let args = [
        "run",
        scene.to_str().unwrap(),
        "--mode",
        "fast",
        "--steps",
        "5",
        "--quiet",
    ];
    let r = ssx_tests::ssxd_bounded_in(&args, 20, MEMORY, Some(tmp.path()));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stderr, "", "--quiet printed: {}", r.stderr);
}

// ---------------------------------------------------------------------------------------------
// Plugins that crash or never return (tests/fixtures/c/faults.c).

fn fault_scene(ws: &Workspace, plugin: &str, at: u32) -> String {
    ws.write(
        "bot.json",
        &format!(
            r#"{{ "bodies": [ {{ "name": "b", "colliders": [ {{ "shape": {{ "box": {{ "size": [0.2, 0.2, 0.2] }} }} }} ] }} ],
                 "driver": {{ "library": "{}", "plugin": "{plugin}", "descriptor": {{ "at": {at} }} }} }}"#,
            c_library("faults").display()
        ),
    );
    ws.write(
        "s.json",
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "bot", "artifact": "bot.json" } ] }"#,
    )
    .display()
    .to_string()
}

fn stats(ws: &Workspace) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(ws.path().join("stats.json")).expect("stats file"))
        .expect("stats JSON")
}

#[test]
fn a_plugin_that_crashes_the_process_is_named_and_the_process_dies_of_the_signal() {
    for (plugin, signal, name) in [
        (
            "segv",
            libc_signal::SEGV,
            "SIGSEGV (invalid memory reference)",
        ),
        ("abort", libc_signal::ABRT, "SIGABRT (abort)"),
        ("fpe", libc_signal::FPE, "SIGFPE (arithmetic fault)"),
    ] {
        let ws = Workspace::new();
        let scene = fault_scene(&ws, plugin, 5);
        let st = ws.path().join("stats.json");
        let r = bounded(&[
            "run",
            &scene,
            "--mode",
            "fast",
            "--steps",
            "100",
            "--stats-json",
            st.to_str().unwrap(),
        ]);
        assert_eq!((r.code, r.signal), (None, Some(signal)), "{plugin}: {r:?}");
        let expected = format!(
            "ssxd: fatal signal {name} while running driver '{plugin}' (library {}), artifact 'bot', phase drive, step 5\n",
            c_library("faults").display()
        );
        assert!(r.stderr.contains(&expected), "{plugin}: {}", r.stderr);
        // The plugin logged from create with no step handle: attributed all the same.
        let created = format!(
            "INFO ssx::plugin: faults: created plugin=driver '{plugin}' (library {}), artifact 'bot', phase create\n",
            c_library("faults").display()
        );
        assert!(r.stderr.contains(&created), "{plugin}: {}", r.stderr);
        // The statistics written before the run started (no second had passed).
        let v = stats(&ws);
        assert_eq!(
            (v["complete"].as_bool(), v["steps"].as_u64()),
            (Some(false), Some(0))
        );
    }
}

/// Starts a real-time run, waits (bounded) for a stderr line containing `wait_for`, sends
/// SIGTERM, and returns the exit status, the time from the signal to the exit, and stderr.
fn stop_while(args: &[&str], wait_for: &str) -> (Option<i32>, Duration, String) {
    let mut child = Command::new(ssxd())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ssxd");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let wait_for = wait_for.to_string();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        let mut line = String::new();
        let mut told = false;
        while stderr.read_line(&mut line).unwrap_or(0) > 0 {
            if !told && line.contains(&wait_for) {
                let _ = tx.send(());
                told = true;
            }
            all.push_str(&line);
            line.clear();
        }
        all
    });
    let seen = rx.recv_timeout(Duration::from_secs(30)).is_ok();
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let signalled = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if signalled.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("ssxd did not stop within 30 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = signalled.elapsed();
    let text = reader.join().unwrap();
    assert!(seen, "never saw '{}': {text}", args.join(" "));
    (status.code(), took, text)
}

#[test]
fn a_step_that_never_returns_is_reported_and_a_sigterm_ends_the_daemon_with_status_3() {
    let ws = Workspace::new();
    let scene = fault_scene(&ws, "hang", 5);
    let st = ws.path().join("stats.json");
    let (code, took, text) = stop_while(
        &[
            "run",
            &scene,
            "--watchdog",
            "0.3",
            "--stats-json",
            st.to_str().unwrap(),
        ],
        "has not returned",
    );
    let who = format!(
        "driver 'hang' (library {}), artifact 'bot', phase drive, step 5",
        c_library("faults").display()
    );
    assert_eq!(code, Some(3), "{text}");
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(4),
        "{took:?}"
    );
    assert!(
        text.contains(&format!(
            "ERROR ssx::watchdog: {who} has not returned for 0.3 s (watchdog limit 0.3 s)"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "stopping without finishing the step: {who} has not returned for"
        )),
        "{text}"
    );
    assert!(text.contains("(exit status 3)"), "{text}");
    assert_eq!(stats(&ws)["complete"].as_bool(), Some(false));
}

#[test]
fn a_destroy_that_never_returns_is_named_too() {
    let ws = Workspace::new();
    let scene = fault_scene(&ws, "hang_destroy", 0);
    let (code, _, text) = stop_while(
        &["run", &scene, "--steps", "20", "--watchdog", "0.2"],
        "has not returned",
    );
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("driver 'hang_destroy' (library "), "{text}");
    assert!(
        text.contains("artifact 'bot', phase destroy, step 20 has not returned"),
        "{text}"
    );
}

#[test]
fn a_world_whose_first_step_takes_long_is_watched_and_stops_on_sigterm() {
    // 1500 boxes in one spot: the first steps push them apart and take far longer than the
    // 10 ms timestep. `check` warns; a SIGTERM stops the run within the grace period.
    let ws = Workspace::new();
    ws.write("a.json", BOX);
    let scene = ws.write(
        "pile.json",
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "c", "artifact": "a.json", "replicate": { "random": { "count": 1500, "min": [0, 0, 1], "max": [0.01, 0.01, 1.01] } } } ] }"#,
    );
    let scene = scene.to_str().unwrap();
    let r = bounded(&["check", scene]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stderr.contains("WARN"), "{}", r.stderr);
    assert!(
        r.stderr.contains("bodies overlap at the start"),
        "{}",
        r.stderr
    );
    let (code, took, text) = stop_while(&["run", scene, "--watchdog", "0.05"], "running scene");
    assert!(took < Duration::from_secs(4), "{took:?}: {text}");
    match code {
        Some(0) => assert!(text.contains("stopped by signal"), "{text}"),
        Some(3) => assert!(text.contains("physics engine 'rapier'"), "{text}"),
        other => panic!("exit {other:?}: {text}"),
    }
}

mod libc_signal {
    pub const SEGV: i32 = 11;
    pub const ABRT: i32 = 6;
    pub const FPE: i32 = 8;
}
