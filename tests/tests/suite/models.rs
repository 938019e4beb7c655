//! Robots from their owners' files: ROBOTIS's TurtleBot3 Burger URDF, a Franka Panda URDF
//! (pybullet_data's) and drone-models' Crazyflie MJCF, vendored under `artifacts/robots/`,
//! loaded with their meshes into both engines; and one clear error for each kind of bad model.

use ssx_core::BodyKind;
use ssx_core::math::Vec3;
use ssx_tests::{Workspace, build_fast, library, repo_root, step_n};

fn robot(path: &str) -> String {
    repo_root()
        .join("artifacts/robots")
        .join(path)
        .display()
        .to_string()
}

/// A scene of the ground and one artifact, on `engine`.
fn scene(ws: &Workspace, engine: &str, instance: &str) -> std::path::PathBuf {
    ws.write(
        "scene.json",
        &format!(
            r#"{{ "timestep": 0.001, "engine": "{engine}", "artifacts": [
                {{ "name": "ground", "artifact": "{}" }}, {instance} ] }}"#,
            library("ground.json")
        ),
    )
}

fn body_named(env: &ssx_core::Environment, artifact: &str, body: &str) -> ssx_core::BodyState {
    let info = env.artifact(artifact).expect("artifact");
    let k = info.body_index(body).expect("body");
    env.states()[info.bodies.start as usize + k]
}

#[test]
fn turtlebot3_loads_with_its_meshes_and_stands_on_its_wheels_and_caster() {
    let ws = Workspace::new();
    let s = scene(
        &ws,
        "rapier",
        &format!(
            r#"{{ "name": "tb3", "artifact": "{}" }}"#,
            robot("turtlebot3_description/urdf/turtlebot3_burger.urdf")
        ),
    );
    let mut env = build_fast(&s, 1).unwrap();
    let info = env.artifact("tb3").unwrap().clone();
    // base_footprint, base_link, the caster, the IMU and the scanner are one body (fixed
    // joints); each wheel is its own, on a continuous joint.
    assert_eq!(
        info.body_names,
        ["base_footprint", "wheel_left_link", "wheel_right_link"]
    );
    assert_eq!(info.joint_names, ["wheel_left_joint", "wheel_right_joint"]);
    let base = info.bodies.start as usize;
    // The URDF's masses, lumped: base 0.82573504 + caster 0.005 + scanner 0.114.
    let env_mass = |k: usize| env.body_facts(ssx_core::BodyId((base + k) as u32)).2;
    assert!((env_mass(0) - 0.94473504).abs() < 1e-5, "{}", env_mass(0));
    assert!((env_mass(1) - 0.028498940).abs() < 1e-6, "{}", env_mass(1));
    step_n(&mut env, 2000);
    // After 2 s it stands: the wheels (radius 0.033 m) rest on the ground, their axles
    // 0.023 m above base_link, which is 0.010 m above base_footprint; the caster holds the
    // back up, level within a few degrees.
    let b = body_named(&env, "tb3", "base_footprint");
    let w = body_named(&env, "tb3", "wheel_left_link");
    assert!((w.pose.translation.z - 0.033).abs() < 2e-3, "{:?}", w.pose);
    assert!(b.pose.translation.z.abs() < 0.01, "{:?}", b.pose);
    let up = b.pose.rotation * Vec3::z();
    assert!(up.z > 0.995, "tilted: {up:?}");
    assert!(b.linvel.norm() < 1e-3, "{:?}", b.linvel);
}

#[test]
fn the_kinematic_engine_takes_a_model_without_joints_and_refuses_one_with_them_by_name() {
    let ws = Workspace::new();
    let s = scene(
        &ws,
        "kinematic",
        &format!(
            r#"{{ "name": "tb3", "artifact": "{}" }}"#,
            robot("turtlebot3_description/urdf/turtlebot3_burger.urdf")
        ),
    );
    let e = build_fast(&s, 1).err().expect("refused").to_string();
    assert!(
        e.contains("joint 'wheel_left_joint': the kinematic engine has no joints"),
        "{e}"
    );
    // A URDF whose links are all fixed together is one body: the kinematic engine runs it
    // with its meshes as their footprints.
    let urdf = ws.write(
        "cart.urdf",
        &format!(
            r#"<robot name="cart">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1"/></inertial>
    <collision><geometry><mesh filename="{}" scale="0.001 0.001 0.001"/></geometry></collision></link>
  <link name="top"><collision><origin xyz="0 0 0.2"/><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <joint name="weld" type="fixed"><parent link="base"/><child link="top"/></joint>
</robot>"#,
            robot("turtlebot3_description/meshes/bases/burger_base.stl")
        ),
    );
    let s = scene(
        &ws,
        "kinematic",
        &format!(
            r#"{{ "name": "cart", "artifact": "{}", "pose": {{ "position": [0, 0, 0.5] }} }}"#,
            urdf.display()
        ),
    );
    let mut env = build_fast(&s, 1).unwrap();
    step_n(&mut env, 2000);
    let c = body_named(&env, "cart", "base");
    // It fell onto the ground: the lowest point of the base mesh (its own z = 0) rests there.
    let (lo, _) = env.body_facts(ssx_core::BodyId(1)).1.expect("bounds");
    assert!(
        (c.pose.translation.z + lo.z).abs() < 1e-6,
        "{:?} {lo:?}",
        c.pose
    );
}

#[test]
fn a_panda_arm_is_held_in_the_world_and_its_seven_joints_and_fingers_are_read() {
    let ws = Workspace::new();
    let arm = ws.write(
        "panda.json",
        &format!(
            r#"{{ "model": {{ "file": "{}", "base": "fixed" }} }}"#,
            robot("franka_panda/panda.urdf")
        ),
    );
    let s = scene(
        &ws,
        "rapier",
        &format!(r#"{{ "name": "arm", "artifact": "{}" }}"#, arm.display()),
    );
    let env = build_fast(&s, 1).unwrap();
    let info = env.artifact("arm").unwrap();
    assert_eq!(
        info.joint_names,
        [
            "panda_joint1",
            "panda_joint2",
            "panda_joint3",
            "panda_joint4",
            "panda_joint5",
            "panda_joint6",
            "panda_joint7",
            "panda_finger_joint1",
            "panda_finger_joint2"
        ]
    );
    let first = info.bodies.start;
    assert_eq!(env.body_facts(ssx_core::BodyId(first)).0, BodyKind::Static);
    // link7, link8, the hand and the grasp target are one body after the fixed joints.
    assert_eq!(info.body_names.len(), 10, "{:?}", info.body_names);
}

#[test]
fn a_crazyflie_from_its_mjcf_stands_free_and_weighs_27_grams() {
    let ws = Workspace::new();
    let cf = ws.write(
        "cf.json",
        &format!(
            r#"{{ "model": {{ "file": "{}", "base": "free" }} }}"#,
            robot("crazyflie/cf2x_L250.xml")
        ),
    );
    let s = scene(
        &ws,
        "rapier",
        &format!(r#"{{ "name": "cf", "artifact": "{}" }}"#, cf.display()),
    );
    let mut env = build_fast(&s, 1).unwrap();
    let info = env.artifact("cf").unwrap().clone();
    // The four propeller bodies have no joint: welded to the drone, one body.
    assert_eq!(info.body_names, ["drone"]);
    let id = ssx_core::BodyId(info.bodies.start);
    assert!((env.body_facts(id).2 - 0.027).abs() < 1e-9);
    let i = env.engine().body_inertia(id);
    assert!(
        (i - Vec3::new(2.3951e-5, 2.3951e-5, 3.2347e-5)).norm() < 1e-9,
        "{i:?}"
    );
    step_n(&mut env, 1000);
    // Its collision sphere (r 0.07 m, 5 mm above the origin) rests on the ground.
    let z = body_named(&env, "cf", "drone").pose.translation.z;
    assert!((z - 0.065).abs() < 2e-3, "{z}");
}

/// An MJCF robot's `robot_description` is its model written as URDF: loaded back, it is the
/// same robot (one welded body of the same mass and inertia, every MJCF body a link, the
/// meshes found by their `file://` paths).
#[test]
fn a_crazyflie_s_urdf_written_from_its_mjcf_loads_back_as_the_same_robot() {
    let ws = Workspace::new();
    let load = |name: &str, file: &str| {
        let a = ws.write(
            &format!("{name}.json"),
            &format!(r#"{{ "model": {{ "file": "{file}", "base": "free" }} }}"#),
        );
        let s = scene(
            &ws,
            "rapier",
            &format!(r#"{{ "name": "{name}", "artifact": "{}" }}"#, a.display()),
        );
        build_fast(&s, 1).unwrap()
    };
    let env = load("cf", &robot("crazyflie/cf2x_L250.xml"));
    let info = env.artifact("cf").unwrap().clone();
    let model: serde_json::Value =
        serde_json::from_str(info.robot_model.as_deref().expect("a robot model")).unwrap();
    let urdf = model["urdf"]
        .as_str()
        .expect("a URDF written from the MJCF");
    assert!(urdf.contains(r#"<robot name="cf2x">"#), "{urdf}");
    assert!(urdf.contains(r#"<mesh filename="file:///"#), "{urdf}");
    let link_names = |m: &serde_json::Value| -> Vec<String> {
        let links = m["links"].as_array().expect("links");
        links
            .iter()
            .map(|l| l["name"].as_str().unwrap().to_string())
            .collect()
    };
    let links = link_names(&model);
    let path = ws.write("cf.urdf", urdf);
    let back = load("back", &path.display().to_string());
    let again = back.artifact("back").unwrap().clone();
    assert_eq!(again.body_names, info.body_names);
    let relinked: serde_json::Value =
        serde_json::from_str(again.robot_model.as_deref().unwrap()).unwrap();
    assert_eq!(link_names(&relinked), links);
    let (a, b) = (
        ssx_core::BodyId(info.bodies.start),
        ssx_core::BodyId(again.bodies.start),
    );
    assert!((env.body_facts(a).2 - back.body_facts(b).2).abs() < 1e-12);
    let (ia, ib) = (env.engine().body_inertia(a), back.engine().body_inertia(b));
    assert!((ia - ib).norm() < 1e-12, "{ia:?} then {ib:?}");
}

/// The error a model file gives, loaded into a scene.
fn model_error(ws: &Workspace, name: &str, text: &str) -> String {
    let path = ws.write(name, text);
    let s = scene(
        ws,
        "rapier",
        &format!(r#"{{ "name": "m", "artifact": "{}" }}"#, path.display()),
    );
    build_fast(&s, 1).err().expect("refused").to_string()
}

#[test]
fn bad_models_get_one_error_each_naming_file_line_and_element() {
    let ws = Workspace::new();
    let dir = ws.path().display().to_string();
    let link = |name: &str| {
        format!(
            r#"<link name="{name}"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"/></inertial></link>"#
        )
    };
    let cases = [
        (
            "missing.urdf",
            "<robot name=\"r\">\n  <link name=\"a\"><visual><geometry><mesh filename=\"package://nowhere/m.stl\"/></geometry></visual></link>\n</robot>".to_string(),
            format!("{dir}/missing.urdf:2:36 (at link 'a' > visual[0] > geometry > mesh): 'package://nowhere/m.stl': no package 'nowhere'"),
        ),
        (
            "kind.urdf",
            format!("<robot name=\"r\">{}{}\n<joint name=\"j\" type=\"hinge\"><parent link=\"a\"/><child link=\"b\"/></joint></robot>", link("a"), link("b")),
            format!("{dir}/kind.urdf:2:1 (at joint 'j'): unknown joint type 'hinge' (URDF's are revolute, continuous, prismatic, fixed, floating and planar)"),
        ),
        (
            "mass.urdf",
            "<robot name=\"r\"><link name=\"a\">\n<inertial><mass value=\"-2\"/></inertial></link></robot>".to_string(),
            format!("{dir}/mass.urdf:2:11 (at link 'a' > inertial > mass): a mass cannot be negative, got -2 kg"),
        ),
        (
            "cycle.urdf",
            format!("<robot name=\"r\">{}{}{}\n<joint name=\"x\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/></joint>\n<joint name=\"y\" type=\"fixed\"><parent link=\"b\"/><child link=\"c\"/></joint>\n<joint name=\"z\" type=\"fixed\"><parent link=\"c\"/><child link=\"b\"/></joint></robot>", link("a"), link("b"), link("c")),
            format!("{dir}/cycle.urdf:4:1 (at joint 'z'): link 'b' is already the child of joint 'x': a link has one parent"),
        ),
        (
            "loop.urdf",
            format!("<robot name=\"r\">{}{}\n<joint name=\"x\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/></joint>\n<joint name=\"y\" type=\"fixed\"><parent link=\"b\"/><child link=\"a\"/></joint></robot>", link("a"), link("b")),
            format!("{dir}/loop.urdf:1:17 (at link 'a'): the joints form a cycle: no link is the root"),
        ),
        (
            "macro.urdf",
            "<robot name=\"r\" xmlns:xacro=\"http://www.ros.org/wiki/xacro\">\n  <xacro:macro name=\"wheel\"/>\n</robot>".to_string(),
            format!("{dir}/macro.urdf:2:3: <xacro:macro> is not expanded here: run `xacro` on the file first and name its output"),
        ),
        (
            "ball.xml",
            "<mujoco><worldbody><body name=\"a\"><freejoint/><geom size=\"0.1\"/>\n<body name=\"b\"><joint name=\"j\" type=\"ball\"/><geom size=\"0.1\"/></body></body></worldbody></mujoco>".to_string(),
            format!("{dir}/ball.xml:2:16 (at body 'b' > joint 'j'): a ball joint is not modelled: ssx joints are hinges (revolute) and slides (prismatic)"),
        ),
    ];
    for (name, text, want) in cases {
        let e = model_error(&ws, name, &text);
        assert!(e.starts_with(&want), "{name}:\n got {e}\nwant {want}");
    }
    // A mesh over the triangle limit: a 16 MiB file is refused by size first, so an ASCII
    // STL just under it with 1,000,001 degenerate triangles would be too big to write fast;
    // the limit on bytes is what a user meets.
    let big = ws.path().join("big.stl");
    std::fs::write(&big, vec![b' '; (16 << 20) + 1]).unwrap();
    let e = model_error(
        &ws,
        "big.urdf",
        "<robot name=\"r\"><link name=\"a\"><visual><geometry><mesh filename=\"big.stl\"/></geometry></visual></link></robot>",
    );
    assert!(
        e.contains("(at link 'a' > visual[0] > geometry > mesh): mesh 'big.stl': '")
            && e.ends_with("big.stl' is larger than 16777216 bytes, the limit for a scene's files"),
        "{e}"
    );
}

#[test]
fn the_panda_s_joints_reach_commanded_positions_and_the_joints_sensor_reads_them() {
    let ws = Workspace::new();
    let target = [0.3, -0.4, 0.2, -1.8, 0.1, 1.6, 0.5, 0.02, 0.02];
    let values = format!("{target:?}");
    let arm = ws.write(
        "panda.json",
        &format!(
            r#"{{ "model": {{ "file": "{}", "base": "fixed" }},
                 "driver": {{ "library": "libssx_driver_joints.so", "plugin": "joints",
                   "descriptor": {{ "stiffness": 10000, "damping": 600,
                     "schedule": [ {{ "time": 0, "values": [0,0,0,0,0,0,0,0,0] }}, {{ "time": 1.5, "values": {values} }} ] }} }},
                 "sensors": [ {{ "name": "joints", "library": "libssx_sensors.so", "plugin": "joints" }} ] }}"#,
            robot("franka_panda/panda.urdf")
        ),
    );
    let s = scene(
        &ws,
        "rapier",
        &format!(r#"{{ "name": "arm", "artifact": "{}" }}"#, arm.display()),
    );
    let mut env = build_fast(&s, 1).unwrap();
    step_n(&mut env, 2500);
    let before = env.reading("arm", "joints").unwrap().values().to_vec();
    step_n(&mut env, 500);
    let r = env.reading("arm", "joints").unwrap().values().to_vec();
    assert_eq!(r.len(), 18);
    for (k, want) in target.iter().enumerate() {
        let tol = if k < 7 { 0.01 } else { 1e-3 };
        assert!(
            (r[k] - want).abs() < tol,
            "joint {k}: {} for {want} ({r:?})",
            r[k]
        );
        // At rest: it stays put over the last 0.5 s. (The rates read back carry a residual
        // of about 0.01 rad/s from Rapier's joint solver under gravity.)
        assert!(
            (r[k] - before[k]).abs() < 1e-3,
            "joint {k} moves: {} then {}",
            before[k],
            r[k]
        );
        assert!(r[9 + k].abs() < 0.02, "joint {k} rate: {}", r[9 + k]);
    }
    // The sensor reads what the engine says.
    let info = env.artifact("arm").unwrap();
    let (_, reading) = env.joint(ssx_core::JointId(info.joints.start + 3)).unwrap();
    assert!((reading.position - r[3]).abs() < 1e-12);
}

#[test]
fn turtlebot3_drives_on_its_wheel_joints_at_wheel_rate_times_radius() {
    let ws = Workspace::new();
    let tb3 = ws.write(
        "tb3.json",
        &format!(
            r#"{{ "model": {{ "file": "{}" }},
                 "driver": {{ "library": "libssx_driver_joints.so", "plugin": "joints",
                   "descriptor": {{ "mode": "velocity", "damping": 1.0,
                     "joints": ["wheel_left_joint", "wheel_right_joint"],
                     "schedule": [ {{ "time": 0, "values": [4.0, 4.0] }} ] }} }},
                 "sensors": [ {{ "name": "joints", "library": "libssx_sensors.so", "plugin": "joints" }} ] }}"#,
            robot("turtlebot3_description/urdf/turtlebot3_burger.urdf")
        ),
    );
    let s = scene(
        &ws,
        "rapier",
        &format!(r#"{{ "name": "tb3", "artifact": "{}" }}"#, tb3.display()),
    );
    let mut env = build_fast(&s, 1).unwrap();
    step_n(&mut env, 2000);
    let x0 = body_named(&env, "tb3", "base_footprint")
        .pose
        .translation
        .vector;
    step_n(&mut env, 2000);
    let b = body_named(&env, "tb3", "base_footprint");
    let r = env.reading("tb3", "joints").unwrap().values().to_vec();
    // The wheels turn at 4 rad/s (about their axis: y turned by the URDF's -90° roll, so the
    // joint's +z spins the wheel forward), counted on past a turn.
    assert!(
        (r[2] - 4.0).abs() < 0.05 && (r[3] - 4.0).abs() < 0.05,
        "{r:?}"
    );
    assert!(r[0] > 2.0 * std::f64::consts::PI, "{r:?}");
    // The robot rolls straight at ω r = 4 × 0.033 = 0.132 m/s, to within slip.
    let travel = b.pose.translation.vector - x0;
    let speed = travel.norm() / 2.0;
    assert!(
        (speed - 0.132).abs() < 0.01,
        "{speed} m/s, moved {travel:?}"
    );
    assert!(travel.y.abs() < 0.02 * travel.norm(), "{travel:?}");
}
