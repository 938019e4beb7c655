//! One call for many instances (the ABI's `step_many`, issue 60 item 2): where a step times no
//! artifact (fast mode), a plugin's consecutive instances step in one call, with the results of
//! one call each (real time, where each artifact is timed); a fault inside the call is named and
//! contained; a library built against the header before the entry loads and steps as before.

use std::path::PathBuf;
use std::sync::Arc;

use ssx_core::{Environment, Mode, VirtualClock};

use super::bits;
use ssx_tests::{Workspace, build_with, c_library, registry, state_of, step_n};

/// Five 1 kg balls in zero gravity, τ = 1 ms, each driven by `library`'s `shove` with a force
/// of k + 1 N along x (ball k); ball 2's descriptor also gets `extra`.
fn balls(ws: &Workspace, library: &str, extra: &str) -> PathBuf {
    let mut artifacts = Vec::new();
    for k in 0..5 {
        let more = if k == 2 { extra } else { "" };
        ws.write(
            &format!("b{k}.json"),
            &format!(
                r#"{{ "bodies": [ {{ "name": "b", "mass": 1.0, "colliders": [ {{ "shape": {{ "sphere": {{ "radius": 0.1 }} }} }} ] }} ],
                     "driver": {{ "library": "{}", "plugin": "shove", "descriptor": {{ "force": {}{more} }} }} }}"#,
                c_library(library).display(),
                k + 1
            ),
        );
        artifacts.push(format!(
            r#"{{ "name": "b{k}", "artifact": "b{k}.json", "pose": {{ "position": [0, {k}, 1] }} }}"#
        ));
    }
    ws.write(
        "s.json",
        &format!(
            r#"{{ "timestep": 0.001, "gravity": [0, 0, 0], "artifacts": [ {} ] }}"#,
            artifacts.join(", ")
        ),
    )
}

/// Runs `scene` for `steps` in `mode` on one worker (real time on a virtual clock, which never
/// waits); returns the world and what it logged.
fn run(scene: &std::path::Path, mode: Mode, steps: u64) -> (Environment, String) {
    let clock = Arc::new(VirtualClock::new());
    let mut env = build_with(scene, &registry(), 1, mode, false, clock).unwrap();
    let ((), text) = crate::logs::logged(|| step_n(&mut env, steps));
    (env, text)
}

const REAL_TIME: Mode = Mode::Realtime { factor: 1.0 };

#[test]
fn a_plugins_instances_step_in_one_call_with_the_results_of_one_call_each() {
    let ws = Workspace::new();
    let scene = balls(&ws, "many", "");
    let (fast, log) = run(&scene, Mode::Fast, 100);
    assert!(log.contains("many: 5 instances"), "{log}");
    let (timed, log) = run(&scene, REAL_TIME, 100);
    assert!(
        !log.contains("many:"),
        "real time calls each instance: {log}"
    );
    assert_eq!(bits(&fast), bits(&timed));
    // k + 1 N on 1 kg for 99 steps of 1 ms (a command acts in the next step's physics; within
    // Rapier's solver's 4e-6 relative, as the swap tests take it).
    for k in 0..5 {
        let v = state_of(&fast, &format!("b{k}")).linvel;
        assert!((v.x - 0.099 * (k + 1) as f64).abs() < 1e-5, "b{k}: {v:?}");
    }
    assert_eq!(fast.summary().plugin_faults, 0);
}

#[test]
fn a_fault_inside_a_batch_call_is_named_and_the_others_keep_stepping() {
    let ws = Workspace::new();
    let scene = balls(&ws, "many", r#", "fail_at": 10"#);
    let (fast, log) = run(&scene, Mode::Fast, 50);
    assert!(log.contains("many: 5 instances"), "{log}");
    let fault = "artifact 'b2': driver 'shove' failed at step 10: shove failed at its step 10; \
                 it is disabled, the simulation goes on";
    assert_eq!(log.matches(fault).count(), 1, "{log}");
    assert_eq!(log.matches("failed at step").count(), 1, "{log}");
    assert_eq!(fast.summary().plugin_faults, 1);
    assert_eq!(fast.driver_enabled("b2"), Some(false));
    // The balls after b2 in the call kept stepping: 49 pushes each, b2 nine.
    for k in 0..5 {
        let pushes = if k == 2 { 9.0 } else { 49.0 };
        let v = state_of(&fast, &format!("b{k}")).linvel;
        assert!(
            (v.x - 0.001 * pushes * (k + 1) as f64).abs() < 1e-5,
            "b{k}: {v:?}"
        );
    }
    // One call each meets the same fault at the same step, and leaves the same world.
    let (timed, log) = run(&scene, REAL_TIME, 50);
    assert_eq!(log.matches(fault).count(), 1, "{log}");
    assert_eq!(timed.summary().plugin_faults, 1);
    assert_eq!(bits(&fast), bits(&timed));
}

#[test]
fn libraries_without_the_entry_step_one_call_each_as_before() {
    let ws = Workspace::new();
    let batched = run(&balls(&ws, "many", ""), Mode::Fast, 100).0;
    // Built against the header before `step_many` (shorter entries), and without the entry.
    for library in ["many_v3", "many_single"] {
        let ws = Workspace::new();
        let (env, log) = run(&balls(&ws, library, ""), Mode::Fast, 100);
        assert!(!log.contains("many:"), "{library}: {log}");
        assert_eq!(bits(&env), bits(&batched), "{library}");
        assert_eq!(env.summary().plugin_faults, 0, "{library}");
    }
}

#[test]
fn a_crash_inside_a_batch_call_names_the_instance_it_was_stepping() {
    let ws = Workspace::new();
    // Ball 2 writes through a null pointer at its 5th step, after its host call.
    let scene = balls(&ws, "many", r#", "segv_at": 5"#);
    let r = ssx_tests::ssxd_bounded(
        &[
            "run",
            scene.to_str().unwrap(),
            "--mode",
            "fast",
            "--steps",
            "100",
        ],
        20,
        4 << 30,
    );
    assert_eq!((r.code, r.signal), (None, Some(11)), "{r:?}");
    assert!(r.stderr.contains("many: 5 instances"), "{}", r.stderr);
    let expected = format!(
        "ssxd: fatal signal SIGSEGV (invalid memory reference) while running driver 'shove' (library {}), artifact 'b2', phase drive, step 5\n",
        c_library("many").display()
    );
    assert!(r.stderr.contains(&expected), "{}", r.stderr);
}
