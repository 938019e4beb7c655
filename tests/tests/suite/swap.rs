//! Swapping a driver library in a running world (docs/plugins.md "Swapping a library"): a C
//! driver built as v1 (pushes +x) and v2 (pushes +y) from tests/fixtures/c/swap.c, copied over
//! the file the scene names while the world runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ssx_core::environment::Environment;
use ssx_core::{Mode, MonotonicClock};
use ssx_tests::{Workspace, build_with, c_library, pusher_scene, registry, state_of};

/// A ball in zero gravity driven by `libpusher.so` (a copy of `build`), τ = 1 ms.
fn world(ws: &Workspace, build: &str, mode: Mode) -> (Environment, PathBuf) {
    let (scene, lib) = pusher_scene(ws, build, "", "");
    let clock = Arc::new(MonotonicClock::new(Duration::from_micros(500)));
    let env = build_with(&scene, &registry(), 1, mode, false, clock).unwrap();
    (env, lib)
}

/// Writes `build` over `lib` in place (`cp` keeps the inode, as a user's `cp` does).
fn overwrite(lib: &Path, build: &Path) {
    let bytes = std::fs::read(build).unwrap();
    std::fs::write(lib, bytes).unwrap();
}

/// Steps until the swap count reaches `n` (at most `limit` steps); returns the steps taken.
fn step_until_swaps(env: &mut Environment, n: usize, limit: u64, pause: Duration) -> u64 {
    for k in 1..=limit {
        env.step().unwrap();
        if env.swaps().len() >= n {
            return k;
        }
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
    }
    panic!(
        "{} swap(s) after {limit} steps, expected {n}",
        env.swaps().len()
    );
}

#[test]
fn a_new_build_copied_over_the_library_drives_from_the_step_after_the_switch() {
    let ws = Workspace::new();
    let (mut env, lib) = world(&ws, "swap_x", Mode::Realtime { factor: 1.0 });
    ssx_tests::step_n(&mut env, 200);
    let v = state_of(&env, "bot").linvel;
    // 2 N on 1 kg, 1 ms steps; a driver's command acts in the next step's physics, so 199
    // pushes: 0.398 m/s along x.
    assert!((v.x - 0.398).abs() < 1e-5 && v.y == 0.0, "{v:?}");

    overwrite(&lib, &c_library("swap_y"));
    env.request_swap(Path::new("libpusher.so")).unwrap();
    let waited = step_until_swaps(&mut env, 1, 5_000, Duration::ZERO);
    let event = env.swaps()[0].clone();
    let done = event.result.expect("the new build is taken");
    assert_eq!(done.instances, 1);
    assert_eq!(event.library, lib);
    // The switch ran at the start of the step that followed `event.step`; that step's physics
    // applied the old driver's last command, and the new driver's first one shows a step later.
    assert_eq!(env.steps(), 200 + waited);
    assert_eq!(event.step, env.steps() - 1);
    let at_switch = state_of(&env, "bot").linvel;
    env.step().unwrap();
    let after = state_of(&env, "bot").linvel;
    assert!(
        (after.y - at_switch.y - 0.002).abs() < 1e-5,
        "v2 pushes +y from its first step: {at_switch:?} -> {after:?}"
    );
    assert!(
        (after.x - at_switch.x).abs() < 1e-5,
        "{at_switch:?} -> {after:?}"
    );
    assert_eq!(env.summary().plugin_faults, 0);
}

#[test]
fn a_plugin_initialised_by_position_against_the_first_v3_layout_builds_and_drives() {
    // Built by tests/build.rs with -Wall -Wextra -Werror -Wno-missing-field-initializers.
    let ws = Workspace::new();
    let (mut env, _) = world(&ws, "swap_positional", Mode::Fast);
    ssx_tests::step_n(&mut env, 200);
    let v = state_of(&env, "bot").linvel;
    assert!((v.x - 0.398).abs() < 1e-5 && v.y == 0.0, "{v:?}");
    assert_eq!(env.summary().plugin_faults, 0);
}

#[test]
fn a_build_that_cannot_run_is_refused_whole_and_the_old_driver_keeps_driving() {
    let ws = Workspace::new();
    let (mut env, lib) = world(&ws, "swap_x", Mode::Fast);
    let shown = lib.display().to_string();
    let truncated = ws.path().join("half.so");
    let whole = std::fs::read(c_library("swap_y")).unwrap();
    std::fs::write(&truncated, &whole[..whole.len() / 2]).unwrap();
    let text = ws.write("notes.txt", "not a library\n");
    let cases: Vec<(PathBuf, String)> = vec![
        (
            c_library("swap_fails"),
            "artifact 'bot': driver 'pusher' cannot be created from the new build: this build refuses to start".into(),
        ),
        (
            c_library("swap_renamed"),
            format!("artifact 'bot': driver 'pusher' cannot be created from the new build: no driver named 'pusher' in '{shown}' (it has: driver shover)"),
        ),
        (
            c_library("abi_past"),
            format!("'{shown}': plugin ABI version mismatch: host = {}, plugin = 1 (rebuild the plugin against this ssx-sdk)", ssx_sdk::abi::SSX_ABI_VERSION),
        ),
        (truncated, format!("'{shown}' is cut short: its ")),
        (text, format!("'{shown}' is not a loadable shared library: not ELF (14 bytes)")),
    ];
    ssx_tests::step_n(&mut env, 10);
    for (n, (build, expected)) in cases.iter().enumerate() {
        overwrite(&lib, build);
        env.request_swap(&lib).unwrap();
        step_until_swaps(&mut env, n + 1, 100_000, Duration::ZERO);
        let event = env.swaps()[n].clone();
        let reason = event.result.expect_err("refused");
        assert!(
            reason.starts_with(expected.as_str()),
            "{}:\n{reason}\nexpected to start with\n{expected}",
            build.display()
        );
        // Still v1: +x, nothing along y, no fault.
        let before = state_of(&env, "bot").linvel;
        env.step().unwrap();
        let after = state_of(&env, "bot").linvel;
        assert!(
            (after.x - before.x - 0.002).abs() < 1e-5 && after.y == 0.0,
            "{before:?} -> {after:?}"
        );
    }
    assert_eq!(env.summary().plugin_faults, 0);
    // A library no instance comes from is refused at the request.
    let err = env
        .request_swap(Path::new("libother.so"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "cannot swap: no driver or sensor of this run comes from 'libother.so' (swappable: {shown})"
        )
    );
    // And a good build still goes in after all that.
    overwrite(&lib, &c_library("swap_y"));
    env.request_swap(&lib).unwrap();
    step_until_swaps(&mut env, cases.len() + 1, 100_000, Duration::ZERO);
    assert!(env.swaps().last().unwrap().result.is_ok());
}

#[test]
fn watching_swaps_once_per_copy_over_the_file() {
    let ws = Workspace::new();
    let (mut env, lib) = world(&ws, "swap_x", Mode::Fast);
    env.watch_plugins().unwrap();
    ssx_tests::step_n(&mut env, 10);
    // Nothing changed: nothing swaps (the watcher polls every 100 ms, settles for 300 ms).
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_millis(800) {
        env.step().unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(env.swaps().is_empty());
    // A copy of the new build over the file: one swap, not two.
    std::fs::copy(c_library("swap_y"), &lib).unwrap();
    step_until_swaps(&mut env, 1, 10_000, Duration::from_millis(1));
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_millis(1500) {
        env.step().unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(env.swaps().len(), 1, "{:?}", env.swaps());
    assert!(env.swaps()[0].result.is_ok(), "{:?}", env.swaps());
    let before = state_of(&env, "bot").linvel;
    env.step().unwrap();
    let after = state_of(&env, "bot").linvel;
    assert!(
        (after.y - before.y - 0.002).abs() < 1e-5,
        "{before:?} -> {after:?}"
    );
}

/// Run under valgrind by CI (`.ci/run`): a hundred swaps back and forth, every old build
/// destroyed and unloaded.
#[test]
fn swapping_a_hundred_times_is_clean() {
    let ws = Workspace::new();
    let (mut env, lib) = world(&ws, "swap_x", Mode::Fast);
    for n in 0..100 {
        let build = if n % 2 == 0 { "swap_y" } else { "swap_x" };
        overwrite(&lib, &c_library(build));
        env.request_swap(&lib).unwrap();
        // Sleeping between steps lets the swap thread run (valgrind runs one thread at a time).
        step_until_swaps(&mut env, n + 1, 100_000, Duration::from_millis(1));
        assert!(env.swaps()[n].result.is_ok(), "{:?}", env.swaps()[n]);
    }
    // The old builds are unloaded (the swap thread destroys them soon after each switch):
    // at most the build in use and one on its way out are mapped.
    let mapped = || {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let mut copies: Vec<&str> = maps
            .lines()
            .filter_map(|l| l.split_whitespace().nth(5))
            .filter(|p| p.ends_with("-libpusher.so"))
            .collect();
        copies.sort();
        copies.dedup();
        copies.len()
    };
    let t0 = Instant::now();
    while mapped() > 1 && t0.elapsed() < Duration::from_secs(10) {
        env.step().unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(mapped(), 1, "old builds still mapped");
}

/// `reload <library>` on the Zenoh control queryable of a running ssxd: answered once the new
/// build runs (with the first step it drove) or with why it was refused.
#[test]
fn reload_over_zenoh_swaps_or_says_why_not() {
    use ssx_tests::daemon::{Daemon, connect, control};
    let _one = ssx_tests::daemon::one_at_a_time();
    let ws = Workspace::new();
    let port = ssx_tests::free_port();
    let prefix = "ssx/test-reload";
    let (scene, lib) = pusher_scene(
        &ws,
        "swap_x",
        &format!(
            r#""extensions": [ {{ "name": "zenoh", "library": "libssx_zenoh.so", "plugin": "zenoh",
      "descriptor": {{ "prefix": "{prefix}", "listen": ["tcp/127.0.0.1:{port}"], "clock": {{ "every": 0 }} }} }} ],"#
        ),
        "",
    );
    // ssxd finds libssx_zenoh.so next to itself.
    let mut daemon = Daemon::start(&scene.display().to_string(), 60);
    let session = connect(port, &mut daemon);
    // A bad build first: refused with the reason, the run goes on.
    overwrite(&lib, &c_library("swap_fails"));
    let answer = control(&session, prefix, "reload libpusher.so");
    assert_eq!(
        answer,
        serde_json::json!({"ok": false, "error": "reload refused: artifact 'bot': driver 'pusher' cannot be created from the new build: this build refuses to start"}),
        "the daemon's log:\n{}",
        daemon.log()
    );
    // A library the run does not use.
    let answer = control(&session, prefix, "reload libssx_sensors.so");
    assert_eq!(
        answer,
        serde_json::json!({"ok": false, "error": "reload: no driver or sensor of this run comes from 'libssx_sensors.so'"})
    );
    // The new build: swapped.
    overwrite(&lib, &c_library("swap_y"));
    let answer = control(
        &session,
        prefix,
        r#"{"cmd": "reload", "library": "libpusher.so"}"#,
    );
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(answer["swapped"], lib.display().to_string());
    assert!(answer["from_step"].as_u64().unwrap() > 0, "{answer}");
    drop(session);
    let (code, log) = daemon.interrupt();
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("library swap refused at step "), "{log}");
    assert!(log.contains("swapped library '"), "{log}");
}

/// A sensor's state crosses the swap when both builds hand it over (`save` / `restore`), and
/// only then: a build without them starts fresh, and one whose `restore` fails is refused.
#[test]
fn a_counter_keeps_counting_across_a_swap_that_hands_its_state_over() {
    let ws = Workspace::new();
    let lib = ws.path().join("libcounter.so");
    std::fs::copy(c_library("counter_v1"), &lib).unwrap();
    ws.write(
        "c.json",
        r#"{ "bodies": [ { "name": "b", "mass": 1.0, "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ],
  "sensors": [ { "name": "n", "library": "libcounter.so", "plugin": "counter", "descriptor": {} } ] }"#,
    );
    let scene = ws.write(
        "s.json",
        r#"{ "timestep": 0.001, "gravity": [0, 0, 0], "artifacts": [ { "name": "c", "artifact": "c.json" } ] }"#,
    );
    let clock = Arc::new(MonotonicClock::new(Duration::ZERO));
    let mut env = build_with(&scene, &registry(), 1, Mode::Fast, false, clock).unwrap();
    let reading = |env: &Environment| -> (f64, f64) {
        let r = env.reading("c", "n").expect("a reading");
        (r.values()[0], r.values()[1])
    };
    ssx_tests::step_n(&mut env, 100);
    assert_eq!(reading(&env), (100.0, 1.0));

    // v2 takes the count over: the first step after the switch reads 1 more than the last.
    let swap_to = |env: &mut Environment, build: &str, n: usize| {
        overwrite(&lib, &c_library(build));
        env.request_swap(&lib).unwrap();
        loop {
            let before = reading(env);
            env.step().unwrap();
            if env.swaps().len() > n {
                return (before, reading(env), env.swaps()[n].result.clone());
            }
        }
    };
    let (before, after, result) = swap_to(&mut env, "counter_v2", 0);
    assert!(result.is_ok(), "{result:?}");
    assert_eq!((after.0, after.1), (before.0 + 1.0, 2.0));

    // A build whose restore fails: refused, v2 counts on.
    let (before, after, result) = swap_to(&mut env, "counter_bad", 1);
    assert_eq!(
        result.unwrap_err(),
        "artifact 'c': sensor 'n' (counter): the state hand-over failed: restore: this build cannot read the old state"
    );
    assert_eq!((after.0, after.1), (before.0 + 1.0, 2.0));

    // A build without save/restore starts from 0.
    let (_, after, result) = swap_to(&mut env, "counter_fresh", 2);
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(after, (1.0, 3.0));
}

/// A world of one body with the Rust fixture's `tally` sensor (`descriptor`) from a copy of the
/// library in `ws`: the environment, the built library and the copy.
fn tally_world(ws: &Workspace, descriptor: &str) -> (Environment, PathBuf, PathBuf) {
    let built = ssx_tests::rust_plugin_dir().join("libssx_test_plugins.so");
    let lib = ws.path().join("libtally.so");
    std::fs::copy(&built, &lib).unwrap();
    ws.write(
        "t.json",
        &format!(
            r#"{{ "bodies": [ {{ "name": "b", "mass": 1.0, "colliders": [ {{ "shape": {{ "sphere": {{ "radius": 0.1 }} }} }} ] }} ],
  "sensors": [ {{ "name": "n", "library": "libtally.so", "plugin": "tally", "descriptor": {descriptor} }} ] }}"#
        ),
    );
    let scene = ws.write(
        "s.json",
        r#"{ "timestep": 0.001, "gravity": [0, 0, 0], "artifacts": [ { "name": "t", "artifact": "t.json" } ] }"#,
    );
    let clock = Arc::new(MonotonicClock::new(Duration::ZERO));
    let env = build_with(&scene, &registry(), 1, Mode::Fast, false, clock).unwrap();
    (env, built, lib)
}

/// The Rust SDK's side of the hand-over (`Sensor::save` / `Sensor::restore`): the `tally` sensor
/// of the Rust fixture library, swapped for the same build, continues its count.
#[test]
fn a_rust_sensor_hands_its_count_over_through_the_sdk() {
    let ws = Workspace::new();
    let (mut env, built, lib) = tally_world(&ws, "{}");
    ssx_tests::step_n(&mut env, 50);
    let reading = |env: &Environment| env.reading("t", "n").unwrap().values().to_vec();
    assert_eq!(reading(&env), [50.0, 0.0]);
    std::fs::copy(&built, &lib).unwrap();
    env.request_swap(&lib).unwrap();
    let mut before = reading(&env);
    while env.swaps().is_empty() {
        before = reading(&env);
        env.step().unwrap();
    }
    assert!(env.swaps()[0].result.is_ok(), "{:?}", env.swaps());
    assert_eq!(reading(&env), [before[0] + 1.0, 1.0]);
}

/// A sensor that samples every 4 steps tells the host it is idle in between (`Ctx::idle`): the
/// host calls it on its sampling steps only, the reading keeps its step in between, and a new
/// build swapped in is called at once and keeps the rhythm.
#[test]
fn an_idle_sensor_is_called_on_its_sampling_steps_only() {
    let ws = Workspace::new();
    let (mut env, built, lib) = tally_world(&ws, r#"{ "every": 4 }"#);
    let reading = |env: &Environment| {
        let r = env.reading("t", "n").unwrap();
        (r.values().to_vec(), r.step())
    };
    for step in 1..=20u64 {
        env.step().unwrap();
        // Sampling steps 1, 5, 9, ...: the k-th call of `step` is on the k-th of them.
        let last = (step - 1) / 4 * 4 + 1;
        assert_eq!(
            reading(&env),
            (vec![(last / 4 + 1) as f64, 0.0], last),
            "after step {step}"
        );
    }
    // A swap between sampling steps: the new build is called on the next step (it samples at
    // once, its count handed over) and idles from there.
    std::fs::copy(&built, &lib).unwrap();
    env.request_swap(&lib).unwrap();
    while env.swaps().is_empty() {
        env.step().unwrap();
    }
    assert!(env.swaps()[0].result.is_ok(), "{:?}", env.swaps());
    let (values, at) = reading(&env);
    assert_eq!(
        at,
        env.steps(),
        "the new build samples on the step it came in"
    );
    assert_eq!(values[1], 1.0, "it continued from the old build's state");
    let calls = values[0];
    for _ in 0..4 {
        env.step().unwrap();
    }
    assert_eq!(reading(&env), (vec![calls + 1.0, 1.0], at + 4));
}

/// `ssxd run --watch-plugins`: a new build copied over the library while the daemon runs is
/// swapped in once, and the log says so.
#[test]
fn ssxd_watch_plugins_swaps_a_build_copied_over_the_file() {
    use ssx_tests::daemon::{Daemon, copy_build_and_wait_for_the_swap};
    let ws = Workspace::new();
    let (scene, lib) = pusher_scene(&ws, "swap_x", "", "");
    let daemon = Daemon::start_with(&scene.display().to_string(), 60, &["--watch-plugins"]);
    copy_build_and_wait_for_the_swap(&daemon, &lib, &c_library("swap_y"));
    std::thread::sleep(Duration::from_millis(1000));
    let (code, log) = daemon.interrupt();
    assert_eq!(code, Some(0), "{log}");
    assert_eq!(
        log.matches("swapped library '").count(),
        1,
        "one copy, one swap:\n{log}"
    );
    assert!(
        log.contains("the library changed on disk: swapping it in"),
        "{log}"
    );
}
