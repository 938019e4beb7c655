//! Drivers and sensors loaded from shared libraries through the C ABI: the shipped Rust and C
//! plugins, and every way a library or a plugin can be wrong.

use std::path::{Path, PathBuf};

use ssx_artifacts::Scene;
use ssx_core::{Mode, SsxError};
use ssx_sdk::abi as ssx_sdk_abi;
use ssx_tests::{
    Workspace, build_fast, build_fast_with, c_library, registry, repo_root, rust_plugin_dir, step_n,
};

mod batch;
mod library;

fn lib(name: &str) -> PathBuf {
    rust_plugin_dir().join(format!("lib{name}.so"))
}

const GROUND: &str = r#"{ "bodies": [ { "name": "plane", "kind": "static", "colliders": [ { "shape": { "plane": {} } } ] } ] }"#;

/// A scene with the ground and one box artifact whose driver (and sensor) JSON is given.
fn box_scene(ws: &Workspace, driver: &str, sensors: &str) -> PathBuf {
    ws.write("ground.json", GROUND);
    ws.write(
        "box.json",
        &format!(
            r#"{{ "bodies": [ {{ "name": "frame", "mass": 1.2, "colliders": [ {{ "shape": {{ "box": {{ "size": [0.5, 0.5, 0.1] }} }} }} ] }} ],
                 "driver": {driver}, "sensors": [ {sensors} ] }}"#
        ),
    );
    ws.write(
        "scene.json",
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "ground", "artifact": "ground.json" },
             { "name": "x", "artifact": "box.json", "pose": { "position": [0.5, -1, 0.05] } } ] }"#,
    )
}

fn error_of(path: &Path) -> String {
    let err = match Scene::load(path, &registry()) {
        Err(e) => e,
        Ok(scene) => match ssx_core::Environment::build(
            scene.config(1, Mode::Fast, ssx_core::LatePolicy::CatchUp, true),
            &registry(),
            &scene.extensions,
            &scene.artifacts,
            Box::new(ssx_core::NullRenderEngine::default()),
            std::sync::Arc::new(ssx_core::MonotonicClock::new(std::time::Duration::ZERO)),
        ) {
            Err(e) => e,
            Ok(_) => panic!("{} must be refused", path.display()),
        },
    };
    err.to_string()
}

fn bits(env: &ssx_core::Environment) -> Vec<u64> {
    env.states()
        .iter()
        .flat_map(|s| {
            [
                s.pose.translation.x,
                s.pose.translation.y,
                s.pose.translation.z,
                s.linvel.x,
                s.linvel.y,
                s.linvel.z,
            ]
        })
        .map(f64::to_bits)
        .collect()
}

#[test]
fn hover_and_pose_from_libraries_hold_the_height_and_report_the_state() {
    let ws = Workspace::new();
    let scene = box_scene(
        &ws,
        &format!(
            r#"{{ "library": "{}", "plugin": "hover", "descriptor": {{ "height": 1.0 }} }}"#,
            lib("ssx_driver_hover").display()
        ),
        &format!(
            r#"{{ "name": "mocap", "library": "{}", "plugin": "pose" }}, {{ "name": "clock", "library": "{}", "plugin": "clock" }}"#,
            lib("ssx_sensors").display(),
            lib("ssx_sensors").display()
        ),
    );
    let run = |workers| {
        let mut env = build_fast(&scene, workers).unwrap();
        step_n(&mut env, 400);
        env
    };
    let (one, two) = (run(1), run(2));
    assert_eq!(
        bits(&one),
        bits(&two),
        "library plugins keep runs repeatable across workers"
    );
    let s = one.states()[1];
    let p = s.pose.translation.vector;
    assert!(
        (p - ssx_core::math::Vec3::new(0.5, -1.0, 1.0)).norm() < 0.01,
        "hovering at {p:?}"
    );
    let r = one.reading("x", "mocap").unwrap();
    assert_eq!(r.step(), 400);
    let q = s.pose.rotation.quaternion();
    assert_eq!(
        r.values(),
        &[
            p.x, p.y, p.z, q.w, q.i, q.j, q.k, s.linvel.x, s.linvel.y, s.linvel.z, s.angvel.x,
            s.angvel.y, s.angvel.z
        ]
    );
    assert_eq!(one.reading("x", "clock").unwrap().values(), &[4.0, 400.0]);
}

#[test]
fn the_c_driver_runs_beside_the_rust_one_and_reaches_its_set_point() {
    let ws = Workspace::new();
    ws.write("ground.json", GROUND);
    let body = r#"{ "name": "frame", "mass": 1.2, "colliders": [ { "shape": { "box": { "size": [0.5, 0.5, 0.1] } } } ] }"#;
    ws.write(
        "c.json",
        &format!(
            r#"{{ "bodies": [ {body} ], "driver": {{ "library": "{}", "plugin": "hover_c", "descriptor": {{ "height": 1.5 }} }} }}"#,
            c_library("ssx_driver_hover_c").display()
        ),
    );
    ws.write(
        "rust.json",
        &format!(r#"{{ "bodies": [ {body} ], "driver": {{ "library": "{}", "plugin": "hover", "descriptor": {{ "height": 0.7 }} }} }}"#, lib("ssx_driver_hover").display()),
    );
    let scene = ws.write(
        "scene.json",
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "ground", "artifact": "ground.json" },
             { "name": "c", "artifact": "c.json", "pose": { "position": [0, 0, 0.05] } },
             { "name": "r", "artifact": "rust.json", "pose": { "position": [3, 0, 0.05] } } ] }"#,
    );
    let mut env = build_fast_with(&scene, &registry(), 2, true).unwrap();
    step_n(&mut env, 500);
    let c = env.states()[1].pose.translation.z;
    let r = env.states()[2].pose.translation.z;
    assert!((c - 1.5).abs() < 0.01, "the C driver's body is at z = {c}");
    assert!(
        (r - 0.7).abs() < 0.01,
        "the Rust driver's body is at z = {r}"
    );
}

fn driver_scene(ws: &Workspace, library: &Path, plugin: &str, descriptor: &str) -> PathBuf {
    box_scene(
        ws,
        &format!(
            r#"{{ "library": "{}", "plugin": "{plugin}", "descriptor": {descriptor} }}"#,
            library.display()
        ),
        "",
    )
}

#[test]
fn a_missing_library_names_where_it_looked() {
    let ws = Workspace::new();
    let scene = box_scene(
        &ws,
        r#"{ "library": "libnowhere.so", "plugin": "hover" }"#,
        "",
    );
    let err = error_of(&scene);
    let at = format!("{}:2:", ws.path().join("box.json").display());
    assert!(err.starts_with(&at), "{err}");
    assert!(
        err.contains("(at driver.library): library 'libnowhere.so' not found (looked in: "),
        "{err}"
    );
    assert!(err.contains(&ws.path().display().to_string()), "{err}");
}

#[test]
fn a_file_that_is_not_a_shared_library() {
    let ws = Workspace::new();
    let fake = ws.write("libfake.so", "this is not an ELF file\n");
    let err = error_of(&driver_scene(&ws, &fake, "hover", "{}"));
    assert!(
        err.contains(&format!(
            "(at driver.library): '{}' is not a loadable shared library: ",
            fake.display()
        )),
        "{err}"
    );
}

#[test]
fn a_library_without_the_entry_symbol() {
    let ws = Workspace::new();
    let l = c_library("no_entry");
    let err = error_of(&driver_scene(&ws, &l, "hover", "{}"));
    assert!(err.ends_with(&format!("(at driver.library): '{}' has no entry symbol 'ssx_plugin_entry': not an ssx plugin library", l.display())), "{err}");
}

#[test]
fn abi_versions_from_the_future_and_the_past_are_refused_naming_both() {
    for (name, version) in [("abi_future", 99), ("abi_past", 1)] {
        let ws = Workspace::new();
        let l = c_library(name);
        let err = error_of(&driver_scene(&ws, &l, "hover", "{}"));
        assert!(
            err.ends_with(&format!("'{}': plugin ABI version mismatch: host = 3, plugin = {version} (rebuild the plugin against this ssx-sdk)", l.display())),
            "{err}"
        );
    }
}

#[test]
fn a_table_smaller_than_the_host_expects_is_refused() {
    let ws = Workspace::new();
    let l = c_library("small_table");
    let err = error_of(&driver_scene(&ws, &l, "hover", "{}"));
    let expected = std::mem::size_of::<ssx_sdk_abi::SsxPluginTable>();
    assert!(
        err.ends_with(&format!(
            "'{}': plugin table too small: host = {expected} bytes, plugin = 8 bytes",
            l.display()
        )),
        "{err}"
    );
}

#[test]
fn an_unknown_plugin_name_lists_what_the_library_has() {
    let ws = Workspace::new();
    let l = lib("ssx_driver_hover");
    let err = error_of(&driver_scene(&ws, &l, "hoover", "{}"));
    assert!(
        err.ends_with(&format!(
            "(at driver.plugin): no driver named 'hoover' in '{}' (it has: driver hover)",
            l.display()
        )),
        "{err}"
    );
    let l = lib("ssx_sensors");
    let err = error_of(&driver_scene(&ws, &l, "pose", "{}"));
    assert!(
        err.ends_with(&format!(
            "(at driver.plugin): 'pose' in '{}' is a sensor, not a driver",
            l.display()
        )),
        "{err}"
    );
}

#[test]
fn a_failing_create_reaches_the_user_with_the_artifact_name() {
    let ws = Workspace::new();
    let err = error_of(&driver_scene(
        &ws,
        &c_library("misbehaving"),
        "refuses",
        r#"{ "fail_create": true }"#,
    ));
    assert!(err.starts_with("artifact 'x': cannot create driver 'refuses': refusing to start: fail_create was set (descriptor at "), "{err}");
    let err = error_of(&driver_scene(
        &ws,
        &lib("ssx_test_plugins"),
        "no_calibration",
        "{}",
    ));
    assert!(err.starts_with("artifact 'x': cannot create driver 'no_calibration': no calibration file for x (descriptor at "), "{err}");
    let err = error_of(&driver_scene(
        &ws,
        &lib("ssx_driver_hover"),
        "hover",
        r#"{ "hieght": 1 }"#,
    ));
    assert!(
        err.starts_with(
            "artifact 'x': cannot create driver 'hover': invalid descriptor: unknown field `hieght` (did you mean `height`?), expected one of "
        ),
        "{err}"
    );
}

#[test]
fn a_body_index_past_the_artifacts_bodies_is_refused_at_create() {
    let ws = Workspace::new();
    let sensors = lib("ssx_sensors");
    for plugin in ["pose", "imu", "contact", "neighbours", "range"] {
        let extra = match plugin {
            "neighbours" => r#", "radius": 1.0"#,
            "range" => r#", "count": 8, "max_range": 2.0"#,
            _ => "",
        };
        let scene = box_scene(
            &ws,
            "null",
            &format!(
                r#"{{ "name": "s", "library": "{}", "plugin": "{plugin}", "descriptor": {{ "body": 3{extra} }} }}"#,
                sensors.display()
            ),
        );
        let err = error_of(&scene);
        assert!(
            err.starts_with(&format!(
                "artifact 'x': cannot create sensor 's' ({plugin}): invalid descriptor: 'body' is 3, but artifact 'x' has 1 body (index 0) (descriptor at "
            )),
            "{plugin}: {err}"
        );
        // ssxd check refuses it too, before any step.
        let out = std::process::Command::new(ssx_tests::ssxd())
            .args(["check", scene.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .contains("'body' is 3, but artifact 'x' has 1 body"),
            "{plugin}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The last valid index is accepted.
    let scene = box_scene(
        &ws,
        "null",
        &format!(
            r#"{{ "name": "s", "library": "{}", "plugin": "pose", "descriptor": {{ "body": 0 }} }}"#,
            sensors.display()
        ),
    );
    let mut env = build_fast(&scene, 1).unwrap();
    step_n(&mut env, 2);
    assert_eq!(env.reading("x", "s").unwrap().step(), 2);
    // A driver on an artifact without bodies is refused at create, with the artifact named.
    ws.write(
        "empty.json",
        &format!(
            r#"{{ "bodies": [], "driver": {{ "library": "{}", "plugin": "hover", "descriptor": {{ "height": 1 }} }} }}"#,
            lib("ssx_driver_hover").display()
        ),
    );
    let scene = ws.write(
        "empty-scene.json",
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "ghost", "artifact": "empty.json" } ] }"#,
    );
    let err = error_of(&scene);
    assert!(
        err.starts_with(
            "artifact 'ghost': cannot create driver 'hover': artifact 'ghost' has no body to act on"
        ),
        "{err}"
    );
}

#[test]
fn a_library_that_is_a_device_or_a_directory_is_called_what_it_is() {
    let ws = Workspace::new();
    let scene = box_scene(&ws, r#"{ "library": "/dev/zero", "plugin": "hover" }"#, "");
    let err = error_of(&scene);
    assert!(
        err.ends_with(
            "(at driver.library): library '/dev/zero' is a character device, not a regular file"
        ),
        "{err}"
    );
    std::fs::create_dir(ws.path().join("libdir.so")).unwrap();
    let scene = box_scene(&ws, r#"{ "library": "libdir.so", "plugin": "hover" }"#, "");
    let err = error_of(&scene);
    assert!(
        err.ends_with(&format!(
            "(at driver.library): library '{}' is a directory, not a regular file",
            ws.path().join("libdir.so").display()
        )),
        "{err}"
    );
    for (arg, what) in [("/dev/zero", "a character device"), ("/tmp", "a directory")] {
        let out = std::process::Command::new(ssx_tests::ssxd())
            .args(["plugins", arg])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim(),
            format!("error: library '{arg}' is {what}, not a regular file")
        );
    }
}

/// Runs a scene until strict mode stops it; returns the error.
fn strict_failure(scene: &Path) -> SsxError {
    let mut env = build_fast_with(scene, &registry(), 2, true).unwrap();
    for _ in 0..50 {
        if let Err(e) = env.step() {
            return e;
        }
    }
    panic!("strict mode did not stop");
}

#[test]
fn a_panic_in_a_rust_plugin_is_caught_and_the_simulation_goes_on_unless_strict() {
    let ws = Workspace::new();
    let scene = driver_scene(&ws, &lib("ssx_test_plugins"), "panicky", r#"{ "at": 5 }"#);
    let mut env = build_fast(&scene, 2).unwrap();
    step_n(&mut env, 100);
    assert_eq!(env.driver_enabled("x"), Some(false));
    assert_eq!(env.summary().plugin_faults, 1);
    assert_eq!(env.steps(), 100);
    assert_eq!(
        strict_failure(&scene).to_string(),
        "artifact 'x': driver 'panicky' failed at step 5: panicked: rotor 5 lost (strict mode: stopping)"
    );
}

#[test]
fn a_c_plugin_returning_an_error_status_is_disabled_or_stops_a_strict_run() {
    let ws = Workspace::new();
    let scene = driver_scene(&ws, &c_library("misbehaving"), "fails_at_3", "{}");
    let mut env = build_fast(&scene, 1).unwrap();
    step_n(&mut env, 20);
    assert_eq!(env.driver_enabled("x"), Some(false));
    assert_eq!(
        strict_failure(&scene).to_string(),
        "artifact 'x': driver 'fails_at_3' failed at step 3: motor controller fault (strict mode: stopping)"
    );
}

#[test]
fn misusing_the_host_gets_status_codes_not_undefined_behaviour() {
    let ws = Workspace::new();
    let scene = driver_scene(&ws, &c_library("misbehaving"), "prober", "{}");
    assert_eq!(
        strict_failure(&scene).to_string(),
        "artifact 'x': driver 'prober' failed at step 2: bad_handle=2 null=1 wrong_phase=3 out_of_range=5 not_found=4 nan=1 stale=2 describe=3 map_null=1 no_map=4 description=5 rays_zero=1 rays_cap=1 rays_null=1 rays_ok=0 rays_kept=1 color=5 (strict mode: stopping)"
    );
}
