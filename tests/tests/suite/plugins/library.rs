//! Libraries found, listed and built outside the workspace; extensions from libraries; joints,
//! queries and readings through the ABI.

use super::*;

#[test]
fn libraries_are_found_next_to_the_scene_then_in_ssx_plugin_path() {
    let ws = Workspace::new();
    let elsewhere = Workspace::new();
    // A copy under a name nothing else has, in a directory only SSX_PLUGIN_PATH names.
    std::fs::copy(
        lib("ssx_driver_hover"),
        elsewhere.path().join("libcopied_hover.so"),
    )
    .unwrap();
    let scene = box_scene(
        &ws,
        r#"{ "library": "libcopied_hover.so", "plugin": "hover", "descriptor": { "height": 1.0 } }"#,
        "",
    );
    let check = |plugin_path: Option<&Path>| {
        let mut cmd = std::process::Command::new(ssx_tests::ssxd());
        cmd.args(["check", scene.to_str().unwrap()])
            .env_remove("SSX_PLUGIN_PATH");
        if let Some(p) = plugin_path {
            cmd.env("SSX_PLUGIN_PATH", p);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = check(None);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("library 'libcopied_hover.so' not found (looked in: "),
        "{stderr}"
    );
    let (code, stderr) = check(Some(elsewhere.path()));
    assert_eq!(code, Some(0), "{stderr}");
    // Next to the scene wins over the search path.
    std::fs::copy(c_library("no_entry"), ws.path().join("libcopied_hover.so")).unwrap();
    let (code, stderr) = check(Some(elsewhere.path()));
    assert_eq!(code, Some(2));
    assert!(stderr.contains("has no entry symbol"), "{stderr}");
}

/// The box scene with the shipped hover driver and pose sensor (`mocap`), from their libraries.
fn hover_scene(ws: &Workspace) -> PathBuf {
    box_scene(
        ws,
        &format!(
            r#"{{ "library": "{}", "plugin": "hover", "descriptor": {{ "height": 1.0 }} }}"#,
            lib("ssx_driver_hover").display()
        ),
        &format!(
            r#"{{ "name": "mocap", "library": "{}", "plugin": "pose" }}"#,
            lib("ssx_sensors").display()
        ),
    )
}

#[test]
fn loading_running_and_unloading_many_times_is_clean() {
    let ws = Workspace::new();
    let scene = hover_scene(&ws);
    for _ in 0..20 {
        let mut env = build_fast(&scene, 2).unwrap();
        step_n(&mut env, 10);
        assert_eq!(env.reading("x", "mocap").unwrap().step(), 10);
    }
    let _ = repo_root();
}

/// The libraries of `loader`, by address.
fn opened(loader: &ssx_core::abi::PluginLoader) -> Vec<usize> {
    let mut v: Vec<usize> = loader
        .opened()
        .map(|l| std::sync::Arc::as_ptr(l) as usize)
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn a_scene_checked_again_and_a_world_reset_with_a_new_seed_open_no_library_again() {
    let ws = Workspace::new();
    hover_scene(&ws);
    // Placed at random from the seed: every world's scene is read (and checked) again.
    let scene = ws.write(
        "seeded.json",
        r#"{ "timestep": 0.01, "seed": 3, "artifacts": [ { "name": "ground", "artifact": "ground.json" },
             { "name": "x", "artifact": "box.json", "pose": { "position": [0, 0, 0.05] },
               "replicate": { "random": { "count": 3, "min": [-2, -2, 0], "max": [2, 2, 0], "clearance": 0.8 } } } ] }"#,
    );
    let registry = registry();
    let first = Scene::load(&scene, &registry).unwrap();
    let libraries = opened(&first.libraries);
    assert_eq!(libraries.len(), 2, "the driver's and the sensor's");
    // Checked against them with another seed: no library opened again.
    let again =
        Scene::load_sharing(&scene, None, &registry, Some(11), first.libraries.clone()).unwrap();
    assert_eq!(opened(&again.libraries), libraries);
    assert_ne!(
        again.artifacts[1].bodies[0].1.pose, first.artifacts[1].bodies[0].1.pose,
        "another seed, another start"
    );
    // Checked alone, a scene opens its own copies (what the two calls above avoid).
    let alone = Scene::load(&scene, &registry).unwrap();
    assert!(
        opened(&alone.libraries)
            .iter()
            .all(|l| !libraries.contains(l))
    );
    // A world built with them keeps exactly them across a reset with a new seed. (This part
    // guards the world's own loader; that the reset's check opens nothing is the
    // `load_sharing` property above, which is what the reset calls with them.)
    let config = again.config(1, Mode::Fast, ssx_core::LatePolicy::CatchUp, true);
    let mut env = ssx_core::Environment::build_sharing(
        config,
        &registry,
        &again.extensions,
        &again.artifacts,
        Box::new(ssx_core::NullRenderEngine::default()),
        std::sync::Arc::new(ssx_core::MonotonicClock::new(std::time::Duration::ZERO)),
        again.libraries.clone(),
    )
    .unwrap();
    env.set_scene_source(Box::new(again.source(None, &registry)));
    step_n(&mut env, 5);
    env.reset(Some(12)).unwrap();
    step_n(&mut env, 5);
    assert_eq!(opened(env.plugin_loader()), libraries);
}

#[test]
fn ssxd_plugins_lists_every_bundled_library() {
    let run = |lib: &Path| {
        let out = std::process::Command::new(ssx_tests::ssxd())
            .arg("plugins")
            .arg(lib)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let expect = [
        (
            lib("ssx_driver_hover"),
            vec![
                "  driver  hover  holds a height or flies waypoints by force (PD plus gravity compensation)",
            ],
        ),
        (
            lib("ssx_driver_velocity"),
            vec!["  driver  velocity  moves a kinematic body at a constant velocity"],
        ),
        (
            lib("ssx_driver_joints"),
            vec![
                "  driver  joints  drives a robot model's joints by position, velocity or effort, from a schedule or from outside",
            ],
        ),
        (
            lib("ssx_sensors"),
            vec![
                "  sensor  pose        ground-truth pose and twist of one body (motion capture), optional noise and latency",
                "  sensor  clock       simulated time and step",
                "  sensor  imu         specific force and angular rate in the body frame, white noise and bias random walk",
                "  sensor  range       a fan or ring of range rays in the mount's plane (2.5D: rays pass under what is above them)",
                "  sensor  neighbours  relative position and velocity of the artifacts within a radius, optionally in line of sight",
                "  sensor  contact     the bodies touching a body: where and how hard",
                "  sensor  camera      a pinhole camera: a depth image and a colour image, ray-cast on the CPU",
                "  sensor  gripper     what a gripper's paddles hold and whether the body between them fits",
                "  sensor  joints      the positions and rates of a robot's revolute and prismatic joints (sensor_msgs/JointState)",
                "  sensor  slam        a range scanner whose scans at a noisy pose build the robot's occupancy grid in the explore extension",
            ],
        ),
        (
            lib("ssx_driver_quadrotor"),
            vec![
                "  driver  quadrotor  a quadrotor with a cascaded flight controller (fixed-point attitude loop) flying a trajectory",
                "  driver  formation  a quadrotor keeping formation and avoiding obstacles by artificial potentials (SwarmSimX sec. 3.2)",
                "  driver  teleop     a quadrotor of a group driven by a haptic handle over Zenoh, with force feedback (SwarmSimX sec. 3)",
            ],
        ),
        (
            lib("ssx_zenoh"),
            vec![
                "  extension  zenoh  Zenoh bridge: clock, stats, states, readings, driver pub/sub, control queryable",
                "  driver  proxy  a kinematic body following an external pose stream (motion capture)",
            ],
        ),
        (
            lib("ssx_driver_ground"),
            vec![
                "  driver  diffdrive  a differential-drive ground robot: velocity or wheel commands, Stage's dispersal, waypoints with obstacle avoidance, timed scripts, Stage's gripper",
                "  driver  holonomic  VMAS's holonomic agent: a force or velocity along x and y at once, from outside",
            ],
        ),
        (
            lib("ssx_driver_door"),
            vec![
                "  driver  door  an automatic sliding door: opens when a robot comes near, closes after a while without anyone",
            ],
        ),
        (
            lib("ssx_explore"),
            vec![
                "  extension  explore  multi-robot exploration after MAES: limited communication, tags, coverage and per-robot SLAM maps",
            ],
        ),
        (
            lib("ssx_driver_explore"),
            vec![
                "  driver  random_walk  MAES's random explorer: straight until blocked, then a random turn",
                "  driver  frontier     nearest-frontier explorer on the robot's own SLAM map, sharing goals over comms",
            ],
        ),
        (
            c_library("ssx_driver_hover_c"),
            vec!["  driver  hover_c  holds a height by a vertical force (written in C)"],
        ),
    ];
    for (path, lines) in expect {
        let (code, stdout, stderr) = run(&path);
        assert_eq!(code, Some(0), "{stderr}");
        let mut want = format!(
            "library      {}\nABI version  3 (this ssxd speaks 3)\nplugins      {}\n",
            path.display(),
            lines.len()
        );
        for l in lines {
            want.push_str(l);
            want.push('\n');
        }
        assert_eq!(stdout, want);
    }
    let (code, _, stderr) = run(&c_library("abi_future"));
    assert_eq!(code, Some(2));
    assert_eq!(
        stderr,
        format!(
            "error: '{}': plugin ABI version mismatch: host = 3, plugin = 99 (rebuild the plugin against this ssx-sdk)\n",
            c_library("abi_future").display()
        )
    );
}

#[test]
fn a_driver_built_outside_the_workspace_runs_without_rebuilding_ssxd() {
    let ws = Workspace::new();
    let root = repo_root();
    // A copy of the example hover crate with a manifest of its own, outside the workspace.
    let krate = ws.path().join("outside-hover");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::copy(
        root.join("drivers/hover/src/lib.rs"),
        krate.join("src/lib.rs"),
    )
    .unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            r#"[package]
name = "outside-hover"
version = "0.1.0"
edition = "2024"

[lib]
crate-type = ["cdylib"]

[dependencies]
ssx-sdk = {{ path = "{}" }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"

[workspace]
"#,
            root.join("sdk").display()
        ),
    )
    .unwrap();
    let status = std::process::Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--offline"])
        .current_dir(&krate)
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .unwrap();
    assert!(status.success(), "building the copied plugin failed");
    let built = krate.join("target/debug/liboutside_hover.so");
    std::fs::copy(&built, ws.path().join("liboutside_hover.so")).unwrap();

    let scene = box_scene(
        &ws,
        r#"{ "library": "liboutside_hover.so", "plugin": "hover", "descriptor": { "height": 1.25 } }"#,
        "",
    );
    let stats = ws.path().join("stats.json");
    let out = std::process::Command::new(ssx_tests::ssxd())
        .args([
            "run",
            scene.to_str().unwrap(),
            "--mode",
            "fast",
            "--steps",
            "400",
            "--strict",
            "--stats-json",
        ])
        .arg(&stats)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert_eq!(
        (v["steps"].as_u64(), v["plugin_faults"].as_u64()),
        (Some(400), Some(0))
    );
    // And its effect on the physics: the body holds the height the descriptor asks for.
    let mut env = build_fast(&scene, 1).unwrap();
    step_n(&mut env, 400);
    let z = env.states()[1].pose.translation.z;
    assert!((z - 1.25).abs() < 0.01, "z = {z}");
}

#[test]
fn an_extension_from_a_library_runs_after_every_step_and_serves_drivers() {
    for (library, plugin) in [
        (c_library("counter_ext"), "counter"),
        (lib("ssx_test_plugins"), "rust_counter"),
    ] {
        let ws = Workspace::new();
        ws.write(
            "client.json",
            &format!(
                r#"{{ "bodies": [ {{ "name": "b", "kind": "kinematic", "colliders": [ {{ "shape": {{ "sphere": {{ "radius": 0.1 }} }} }} ] }} ],
                     "driver": {{ "library": "{}", "plugin": "ext_client", "descriptor": {{ "extension": "bridge" }} }} }}"#,
                lib("ssx_test_plugins").display()
            ),
        );
        let scene = ws.write(
            "scene.json",
            &format!(
                r#"{{ "timestep": 0.01, "extensions": [ {{ "name": "bridge", "library": "{}", "plugin": "{plugin}" }} ],
                     "artifacts": [ {{ "name": "c", "artifact": "client.json", "replicate": {{ "grid": {{ "count": 24, "spacing": [1, 1] }} }} }} ] }}"#,
                library.display()
            ),
        );
        // Strict: any failed check in the client (wrong count, command not refused to the
        // extension, unknown service not an error) stops the run with its message.
        let mut env = build_fast_with(&scene, &registry(), 2, true).unwrap();
        step_n(&mut env, 60);
        assert_eq!(env.summary().plugin_faults, 0, "{plugin}");
    }
    let out = std::process::Command::new(ssx_tests::ssxd())
        .arg("plugins")
        .arg(c_library("counter_ext"))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("  extension  counter  counts steps and serves the count\n")
    );
}

/// A static post with a 1 m arm on a hinge about z (gravity does not turn it), driven by `driver`.
fn arm_scene(ws: &Workspace, motor: &str, driver: &str) -> PathBuf {
    ws.write(
        "arm.json",
        &format!(
            r#"{{ "bodies": [
                 {{ "name": "post", "kind": "static", "colliders": [ {{ "shape": {{ "cylinder": {{ "radius": 0.05, "length": 1 }} }} }} ] }},
                 {{ "name": "arm", "parent": "post", "pose": {{ "position": [0.5, 0, 0.6] }}, "mass": 1.0,
                    "colliders": [ {{ "shape": {{ "box": {{ "size": [1, 0.05, 0.05] }} }} }} ] }} ],
               "joints": [ {{ "name": "hinge", "kind": "revolute", "parent": "post", "child": "arm", "anchor": [0, 0, 0.6], "axis": [0, 0, 1] {motor} }} ],
               "driver": {driver} }}"#
        ),
    );
    ws.write(
        "scene.json",
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "robot", "artifact": "arm.json" } ] }"#,
    )
}

/// Angle of the arm about z, from its position around the post.
fn arm_angle(env: &ssx_core::Environment) -> f64 {
    let p = env.states()[1].pose.translation.vector;
    p.y.atan2(p.x)
}

struct InProcessArm;

impl ssx_core::Driver for InProcessArm {
    fn drive(
        &mut self,
        _ctx: &ssx_core::DriverContext<'_>,
        out: &mut ssx_core::CommandBuffer,
    ) -> Result<(), String> {
        Ok(out.joint_target(0, 1.0, 0.0)?)
    }
}

#[test]
fn a_driver_moves_a_motorised_joint_to_its_target() {
    let motor = r#", "motor": { "stiffness": 20, "damping": 4 }"#;
    let mut reg = registry();
    reg.add_driver("inproc_arm", |_, _| Ok(Box::new(InProcessArm)));
    let abi = format!(
        r#"{{ "library": "{}", "plugin": "arm", "descriptor": {{ "joint": "hinge", "angle": 1.0 }} }}"#,
        lib("ssx_test_plugins").display()
    );
    for driver in [r#"{ "plugin": "inproc_arm" }"#.to_string(), abi] {
        let ws = Workspace::new();
        let mut env = build_fast_with(&arm_scene(&ws, motor, &driver), &reg, 1, true).unwrap();
        step_n(&mut env, 10);
        let early = arm_angle(&env);
        step_n(&mut env, 490);
        let angle = arm_angle(&env);
        assert!(
            early > 0.0 && early < 0.9,
            "the arm moves gradually: {early} rad after 0.1 s"
        );
        assert!(
            (angle - 1.0).abs() < 0.01,
            "{driver}: the arm settled at {angle} rad, target 1 rad"
        );
    }
}

#[test]
fn a_joint_without_a_motor_refuses_targets() {
    let ws = Workspace::new();
    let driver = format!(
        r#"{{ "library": "{}", "plugin": "arm", "descriptor": {{ "joint": "hinge", "angle": 1.0 }} }}"#,
        lib("ssx_test_plugins").display()
    );
    assert_eq!(
        strict_failure(&arm_scene(&ws, "", &driver)).to_string(),
        "artifact 'robot': driver 'arm' failed at step 1: invalid argument (status 1) (strict mode: stopping)"
    );
    let mut reg = registry();
    reg.add_driver("inproc_arm", |_, _| Ok(Box::new(InProcessArm)));
    let mut env = build_fast_with(
        &arm_scene(&ws, "", r#"{ "plugin": "inproc_arm" }"#),
        &reg,
        1,
        true,
    )
    .unwrap();
    assert_eq!(
        env.step().unwrap_err().to_string(),
        "artifact 'robot': driver 'inproc_arm' failed at step 1: joint 0 has no motor: give it \"motor\" in the artifact file (strict mode: stopping)"
    );
}

#[test]
fn a_library_driver_reads_another_artifacts_sensor_of_the_same_step() {
    let ws = Workspace::new();
    ws.write(
        "reader.json",
        &format!(
            r#"{{ "bodies": [ {{ "name": "b", "kind": "static", "colliders": [ {{ "shape": {{ "sphere": {{ "radius": 0.1 }} }} }} ] }} ],
                 "driver": {{ "library": "{}", "plugin": "reader", "descriptor": {{ "leader": "leader", "sensor": "mocap" }} }} }}"#,
            lib("ssx_test_plugins").display()
        ),
    );
    let scene = ws.write(
        "scene.json",
        &format!(
            r#"{{ "timestep": 0.01, "artifacts": [ {{ "name": "leader", "artifact": "{}/artifacts/library/hover-box.json" }},
                 {{ "name": "r", "artifact": "reader.json", "pose": {{ "position": [5, 0, 0] }}, "replicate": {{ "grid": {{ "count": 20, "spacing": [1, 1] }} }} }} ] }}"#,
            repo_root().display()
        ),
    );
    // Strict: a stale, short or wrong reading stops the run with the reader's message.
    let mut env = build_fast_with(&scene, &registry(), 2, true).unwrap();
    step_n(&mut env, 100);
}

#[test]
fn ray_casts_and_neighbours_work_through_the_abi_on_every_worker() {
    let ws = Workspace::new();
    ws.write("ground.json", GROUND);
    ws.write("ball.json", r#"{ "bodies": [ { "name": "b", "kind": "static", "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ] }"#);
    ws.write(
        "surveyor.json",
        &format!(
            r#"{{ "bodies": [ {{ "name": "b", "kind": "kinematic", "colliders": [ {{ "shape": {{ "sphere": {{ "radius": 0.1 }} }} }} ] }} ],
                 "driver": {{ "library": "{}", "plugin": "surveyor", "descriptor": {{ "down": 2.0, "radius": 1.5, "neighbours": 3 }} }} }}"#,
            lib("ssx_test_plugins").display()
        ),
    );
    // Sixteen surveyors 10 m apart at 2 m height, each with three balls within 1 m and one 3 m off.
    let mut artifacts = vec![r#"{ "name": "ground", "artifact": "ground.json" }"#.to_string()];
    for i in 0..16 {
        let (x, y) = ((i % 4) as f64 * 10.0, (i / 4) as f64 * 10.0);
        artifacts.push(format!(r#"{{ "name": "s{i}", "artifact": "surveyor.json", "pose": {{ "position": [{x}, {y}, 2] }} }}"#));
        for (k, (dx, dy)) in [(0.8, 0.0), (0.0, -0.9), (-0.5, 0.5), (3.0, 0.0)]
            .iter()
            .enumerate()
        {
            artifacts.push(format!(r#"{{ "name": "b{i}_{k}", "artifact": "ball.json", "pose": {{ "position": [{}, {}, 2] }} }}"#, x + dx, y + dy));
        }
    }
    let scene = ws.write(
        "scene.json",
        &format!(
            r#"{{ "timestep": 0.01, "artifacts": [ {} ] }}"#,
            artifacts.join(", ")
        ),
    );
    let mut env = build_fast_with(&scene, &registry(), 2, true).unwrap();
    step_n(&mut env, 5);
}

#[test]
fn reading_descriptions_and_the_map_reach_plugins_through_the_abi() {
    let ws = Workspace::new();
    // 4 × 3 pixels, dark = wall: the top row's first three and the bottom row's first.
    ws.write(
        "m.pgm",
        "P2\n4 3\n255\n0 0 0 255\n255 255 255 255\n0 255 255 255\n",
    );
    let description = format!(
        r#"{{ "kind": "range", "body": 0, "position": [0.0, 0.0, 0.1], "yaw": 0.5, "count": 8,
              "angle_min": 0.0, "angle_increment": {}, "min_range": 0.0, "max_range": 2.0,
              "no_hit": "max_range", "rate_divider": 1 }}"#,
        std::f64::consts::TAU / 8.0
    );
    let robot = |map: &str| {
        format!(
            r#"{{ "bodies": [ {{ "name": "b", "kind": "kinematic", "colliders": [ {{ "shape": {{ "sphere": {{ "radius": 0.1 }} }} }} ] }} ],
                 "sensors": [ {{ "name": "ring", "library": "{}", "plugin": "range",
                                "descriptor": {{ "count": 8, "max_range": 2.0, "position": [0, 0, 0.1], "yaw": 0.5 }} }} ],
                 "driver": {{ "library": "{}", "plugin": "inspector",
                              "descriptor": {{ "sensor": "ring", "description": {description}, "map": {map} }} }} }}"#,
            lib("ssx_sensors").display(),
            lib("ssx_test_plugins").display()
        )
    };
    ws.write(
        "with-map.json",
        &robot(
            r#"{ "width": 4, "height": 3, "resolution": 0.5, "origin": [-1.0, -2.0, 0.0],
                 "walls": [[0, 0], [0, 2], [1, 2], [2, 2]] }"#,
        ),
    );
    ws.write("no-map.json", &robot("null"));
    let scene = ws.write(
        "scene.json",
        r#"{ "timestep": 0.01, "map": { "image": "m.pgm", "resolution": 0.5, "origin": [-1, -2] },
             "artifacts": [ { "name": "r", "artifact": "with-map.json", "pose": { "position": [10, 10, 0] } } ] }"#,
    );
    // Strict: any mismatch the inspector finds stops the run with its message.
    let mut env = build_fast_with(&scene, &registry(), 2, true).unwrap();
    step_n(&mut env, 3);
    let bare = ws.write(
        "bare.json",
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "r", "artifact": "no-map.json" } ] }"#,
    );
    let mut env = build_fast_with(&bare, &registry(), 1, true).unwrap();
    step_n(&mut env, 3);
    // The inspector does fail when what it is told differs.
    ws.write("wrong.json", &robot("null"));
    let wrong = ws.write(
        "wrong-scene.json",
        r#"{ "timestep": 0.01, "map": { "image": "m.pgm", "resolution": 0.5, "origin": [-1, -2] },
             "artifacts": [ { "name": "r", "artifact": "wrong.json" } ] }"#,
    );
    let err = strict_failure(&wrong).to_string();
    assert!(
        err.contains("driver 'inspector' failed at step 1: map {\"height\":3,"),
        "{err}"
    );
}
