//! Every malformed scene or artifact file gives one message naming the file, the JSON path and
//! line:column; nothing panics.

use ssx_artifacts::Scene;
use ssx_core::Shape;
use ssx_tests::{Workspace, registry};

const BALL: &str = r#"{ "bodies": [ { "name": "b", "mass": 1.0, "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ] }"#;

/// Loads `scene` (with `ball.json` beside it) and returns the error text, with the temporary
/// directory replaced by `$DIR`.
fn error_of(scene: &str, extra: &[(&str, &str)]) -> String {
    let ws = Workspace::new();
    ws.write("ball.json", BALL);
    for (name, text) in extra {
        ws.write(name, text);
    }
    let path = ws.write("scene.json", scene);
    let err = Scene::load(&path, &registry()).expect_err("the scene must be refused");
    err.to_string()
        .replace(&ws.path().display().to_string(), "$DIR")
}

#[test]
fn unknown_field() {
    assert_eq!(
        error_of(
            "{\n  \"timestep\": 0.01,\n  \"gravty\": [0, 0, -9.81]\n}",
            &[]
        ),
        "$DIR/scene.json:3:13 (at gravty): unknown field `gravty` (did you mean `gravity`?), expected one of `name`, `timestep`, `gravity`, `engine`, `seed`, `include`, `extensions`, `artifacts`, `watch`, `view`, `map`, `watchdog`"
    );
}

#[test]
fn a_close_misspelling_gets_did_you_mean() {
    assert_eq!(
        error_of(r#"{ "timestep": 0.01, "enigne": "kinematic" }"#, &[]),
        "$DIR/scene.json:1:31 (at enigne): unknown field `enigne` (did you mean `engine`?), expected one of `name`, `timestep`, `gravity`, `engine`, `seed`, `include`, `extensions`, `artifacts`, `watch`, `view`, `map`, `watchdog`"
    );
    let err = error_of(
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "b", "artifact": "ball.json", "pose": { "positon": [0, 0, 1] } } ] }"#,
        &[],
    );
    assert!(
        err.contains("(at artifacts[0].pose.positon): unknown field `positon` (did you mean `position`?), expected "),
        "{err}"
    );
    // Nothing close: no guess.
    let err = error_of(r#"{ "timestep": 0.01, "colour": 1 }"#, &[]);
    assert!(
        err.contains("unknown field `colour`, expected one of"),
        "{err}"
    );
    assert!(!err.contains("did you mean"), "{err}");
}

#[test]
fn a_view_rate_beyond_1000_hz_is_refused_where_it_is_written() {
    assert_eq!(
        error_of(
            "{\n  \"timestep\": 0.01,\n  \"view\": { \"rate\": 5000 }\n}",
            &[]
        ),
        "$DIR/scene.json:3:21 (at view.rate): the view rate must be at most 1000 Hz, got 5000"
    );
}

#[test]
fn unknown_field_in_an_artifact_file() {
    let err = error_of(
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "x.json" } ] }"#,
        &[(
            "x.json",
            "{ \"bodies\": [ { \"name\": \"b\", \"mas\": 1 } ] }",
        )],
    );
    assert!(
        err.starts_with("$DIR/x.json:1:37 (at bodies[0].mas): unknown field `mas`"),
        "{err}"
    );
}

#[test]
fn wrong_type() {
    assert_eq!(
        error_of(r#"{ "timestep": "fast" }"#, &[]),
        "$DIR/scene.json:1:15 (at timestep): invalid type: string \"fast\", expected f64"
    );
}

#[test]
fn zero_and_negative_timestep() {
    assert_eq!(
        error_of(r#"{ "timestep": 0 }"#, &[]),
        "$DIR/scene.json:1:15 (at timestep): expected a timestep (s) from 1e-6 to 1, got 0"
    );
    assert_eq!(
        error_of(r#"{ "timestep": -0.01 }"#, &[]),
        "$DIR/scene.json:1:15 (at timestep): expected a timestep (s) from 1e-6 to 1, got -0.01"
    );
}

#[test]
fn missing_timestep() {
    assert_eq!(
        error_of(r#"{ "artifacts": [] }"#, &[]),
        "$DIR/scene.json:1:1: missing field `timestep` (seconds per step, e.g. 0.01)"
    );
}

#[test]
fn nan_and_infinite_numbers() {
    // JSON has no NaN; a bare NaN is a syntax error, and an overflowing literal is out of range
    // (serde_json reports that one at its last digit).
    assert_eq!(
        error_of(r#"{ "timestep": 0.01, "gravity": [0, 0, NaN] }"#, &[]),
        "$DIR/scene.json:1:39 (at gravity[2]): expected value"
    );
    assert_eq!(
        error_of(r#"{ "timestep": 0.01, "gravity": [0, 0, -1e999] }"#, &[]),
        "$DIR/scene.json:1:44 (at gravity[2]): number out of range"
    );
}

#[test]
fn mass_zero_or_negative() {
    let scene = r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "x.json" } ] }"#;
    let err = error_of(
        scene,
        &[("x.json", r#"{ "bodies": [ { "name": "b", "mass": 0 } ] }"#)],
    );
    assert_eq!(
        err,
        "$DIR/x.json:1:38 (at bodies[0].mass): expected a mass (kg) from 1e-6 to 1e9, got 0"
    );
    let err = error_of(
        scene,
        &[(
            "x.json",
            r#"{ "bodies": [ { "name": "b", "mass": -2.5 } ] }"#,
        )],
    );
    assert_eq!(
        err,
        "$DIR/x.json:1:38 (at bodies[0].mass): expected a mass (kg) from 1e-6 to 1e9, got -2.5"
    );
}

#[test]
fn a_dynamic_body_without_mass() {
    let err = error_of(
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "x.json" } ] }"#,
        &[("x.json", r#"{ "bodies": [ { "name": "ghost" } ] }"#)],
    );
    assert_eq!(
        err,
        "$DIR/x.json:1:15 (at bodies[0]): dynamic body 'ghost' has no mass: give it a collider with a volume, or 'mass' and 'inertia'"
    );
}

#[test]
fn missing_include() {
    assert_eq!(
        error_of(r#"{ "timestep": 0.01, "include": ["nowhere.json"] }"#, &[]),
        "$DIR/scene.json:1:33 (at include[0]): cannot read '$DIR/nowhere.json': No such file or directory (os error 2)"
    );
}

#[test]
fn missing_artifact_file() {
    assert_eq!(
        error_of(
            r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "lib/x.json" } ] }"#,
            &[]
        ),
        "$DIR/scene.json:1:63 (at artifacts[0].artifact): cannot read '$DIR/lib/x.json': No such file or directory (os error 2)"
    );
}

#[test]
fn cyclic_include() {
    let err = error_of(
        r#"{ "timestep": 0.01, "include": ["a.json"] }"#,
        &[
            ("a.json", r#"{ "include": ["b.json"] }"#),
            ("b.json", r#"{ "include": ["a.json"] }"#),
        ],
    );
    assert_eq!(
        err,
        "$DIR/b.json:1:15 (at include[0]): include cycle: $DIR/a.json -> $DIR/b.json -> $DIR/a.json"
    );
}

#[test]
fn a_scene_including_itself() {
    let err = error_of(r#"{ "timestep": 0.01, "include": ["scene.json"] }"#, &[]);
    assert_eq!(
        err,
        "$DIR/scene.json:1:33 (at include[0]): include cycle: $DIR/scene.json -> $DIR/scene.json"
    );
}

#[test]
fn included_files_bring_their_artifacts() {
    let ws = Workspace::new();
    ws.write("ball.json", BALL);
    ws.write(
        "more.json",
        r#"{ "artifacts": [ { "name": "b2", "artifact": "ball.json" } ] }"#,
    );
    let path = ws.write(
        "scene.json",
        r#"{ "timestep": 0.01, "include": ["more.json"], "artifacts": [ { "name": "b1", "artifact": "ball.json" } ] }"#,
    );
    let scene = Scene::load(&path, &registry()).unwrap();
    let names: Vec<&str> = scene.artifacts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["b2", "b1"]);
}

#[test]
fn unknown_engine() {
    assert_eq!(
        error_of(r#"{ "timestep": 0.01, "engine": "physx" }"#, &[]),
        "$DIR/scene.json:1:31 (at engine): unknown physics engine 'physx' (known: kinematic, planar, rapier)"
    );
}

#[test]
fn unknown_plugin() {
    let err = error_of(
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "x.json" } ] }"#,
        &[(
            "x.json",
            r#"{ "bodies": [], "driver": { "plugin": "hoover" } }"#,
        )],
    );
    assert_eq!(
        err,
        "$DIR/x.json:1:39 (at driver.plugin): unknown driver 'hoover': drivers come from plugin libraries; name one with \"library\""
    );
}

#[test]
fn duplicate_artifact_names() {
    let err = error_of(
        "{ \"timestep\": 0.01, \"artifacts\": [\n  { \"name\": \"a\", \"artifact\": \"ball.json\" },\n  { \"name\": \"a\", \"artifact\": \"ball.json\" } ] }",
        &[],
    );
    assert_eq!(
        err,
        "$DIR/scene.json:3:13 (at artifacts[1].name): duplicate artifact name 'a' (first at $DIR/scene.json:2:13 (at artifacts[0].name))"
    );
}

#[test]
fn duplicate_names_from_replication() {
    let err = error_of(
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "s_1", "artifact": "ball.json" }, { "name": "s", "artifact": "ball.json", "replicate": { "grid": { "count": 4, "spacing": [1, 1] } } } ] }"#,
        &[],
    );
    assert!(err.contains("duplicate artifact name 's_1'"), "{err}");
}

#[test]
fn a_child_naming_a_missing_parent() {
    let err = error_of(
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "x.json" } ] }"#,
        &[(
            "x.json",
            r#"{ "bodies": [ { "name": "base", "mass": 1, "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] }, { "name": "arm", "parent": "bsae" } ] }"#,
        )],
    );
    assert_eq!(
        err,
        "$DIR/x.json:1:136 (at bodies[1].parent): no body named 'bsae' in this artifact (bodies: base, arm)"
    );
}

#[test]
fn a_parent_cycle() {
    let err = error_of(
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "x.json" } ] }"#,
        &[(
            "x.json",
            r#"{ "bodies": [ { "name": "a", "parent": "b", "kind": "static" }, { "name": "b", "parent": "a", "kind": "static" } ] }"#,
        )],
    );
    assert_eq!(
        err,
        "$DIR/x.json:1:40 (at bodies[0].parent): the parent chain of body 'a' loops back on itself"
    );
}

#[test]
fn a_joint_naming_a_missing_body() {
    let err = error_of(
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "x.json" } ] }"#,
        &[(
            "x.json",
            r#"{ "bodies": [ { "name": "a", "kind": "static" } ], "joints": [ { "name": "j", "kind": "revolute", "parent": "a", "child": "b", "axis": [0, 1, 0] } ] }"#,
        )],
    );
    assert_eq!(
        err,
        "$DIR/x.json:1:123 (at joints[0].child): no body named 'b' in this artifact (bodies: a)"
    );
}

#[test]
fn an_empty_file() {
    assert_eq!(
        error_of("", &[]).replace("$DIR/scene.json: ", ""),
        "'$DIR/scene.json' is empty, expected a JSON object"
    );
    let err = error_of(
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "x.json" } ] }"#,
        &[("x.json", "  \n")],
    );
    assert_eq!(
        err,
        "$DIR/scene.json:1:63 (at artifacts[0].artifact): '$DIR/x.json' is empty, expected a JSON object"
    );
}

#[test]
fn a_directory_instead_of_a_file() {
    let ws = Workspace::new();
    std::fs::create_dir(ws.path().join("dir.json")).unwrap();
    let err = Scene::load(&ws.path().join("dir.json"), &registry())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err.replace(&ws.path().display().to_string(), "$DIR"),
        "$DIR/dir.json: '$DIR/dir.json' is a directory, expected a JSON file"
    );
    let err = error_of(
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "." } ] }"#,
        &[],
    );
    assert_eq!(
        err,
        "$DIR/scene.json:1:63 (at artifacts[0].artifact): '$DIR/.' is a directory, expected a JSON file"
    );
}

#[test]
fn trailing_garbage() {
    assert_eq!(
        error_of(r#"{ "timestep": 0.01 } }"#, &[]),
        "$DIR/scene.json:1:22: trailing characters after the JSON object"
    );
}

#[test]
fn a_plane_on_a_dynamic_body() {
    let err = error_of(
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "x.json" } ] }"#,
        &[(
            "x.json",
            r#"{ "bodies": [ { "name": "a", "mass": 1, "colliders": [ { "shape": { "plane": {} } } ] } ] }"#,
        )],
    );
    assert_eq!(
        err,
        "$DIR/x.json:1:67 (at bodies[0].colliders[0].shape): a plane is infinite: only static bodies may have one"
    );
}

#[test]
fn replicate_with_zero_count() {
    let err = error_of(
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "s", "artifact": "ball.json", "replicate": { "circle": { "count": 0, "radius": 1 } } } ] }"#,
        &[],
    );
    assert_eq!(
        err,
        "$DIR/scene.json:1:112 (at artifacts[0].replicate.circle.count): expected a count from 1 to 250000, got 0"
    );
}

#[test]
fn a_swarm_of_a_thousand_is_one_line() {
    let ws = Workspace::new();
    ws.write("ball.json", BALL);
    let path = ws.write(
        "scene.json",
        r#"{ "timestep": 0.01, "seed": 9, "artifacts": [ { "name": "s", "artifact": "ball.json", "replicate": { "random": { "count": 1000, "min": [-50, -50, 1], "max": [50, 50, 20] } } } ] }"#,
    );
    let a = Scene::load(&path, &registry()).unwrap();
    let b = Scene::load(&path, &registry()).unwrap();
    assert_eq!(a.artifacts.len(), 1000);
    assert_eq!(a.artifacts[999].name, "s_999");
    let poses = |s: &Scene| {
        s.artifacts
            .iter()
            .map(|x| x.bodies[0].1.pose.translation.vector)
            .collect::<Vec<_>>()
    };
    assert_eq!(poses(&a), poses(&b), "seeded: the same poses every time");
    assert!(
        poses(&a)
            .iter()
            .all(|p| p.x.abs() <= 50.0 && p.y.abs() <= 50.0 && (1.0..=20.0).contains(&p.z))
    );
}

/// `random` with a clearance (issue 60: the tasks' seeded starts): no two copies nearer than it
/// in the plane, the same poses for the same seed and other ones for another (the scene's
/// `seed`, as a batch's world k takes `seed + k`), and a box too small for them refused with
/// the field named.
#[test]
fn random_copies_keep_their_clearance() {
    let scene = |seed: u64, clearance: f64, half: f64| {
        format!(
            r#"{{ "timestep": 0.01, "seed": {seed}, "artifacts": [ {{ "name": "s", "artifact": "ball.json", "replicate": {{ "random": {{ "count": 400, "min": [-{half}, -{half}, 1], "max": [{half}, {half}, 1], "clearance": {clearance} }} }} }} ] }}"#
        )
    };
    let poses = |seed: u64| {
        let ws = Workspace::new();
        ws.write("ball.json", BALL);
        let path = ws.write("scene.json", &scene(seed, 0.6, 9.0));
        let s = Scene::load(&path, &registry()).unwrap();
        s.artifacts
            .iter()
            .map(|x| x.bodies[0].1.pose.translation.vector)
            .collect::<Vec<_>>()
    };
    let (a, again, other) = (poses(5), poses(5), poses(6));
    assert_eq!(a, again);
    assert_ne!(a, other);
    for p in [&a, &other] {
        let nearest = (0..p.len())
            .flat_map(|i| (0..i).map(move |j| (i, j)))
            .map(|(i, j)| (p[i] - p[j]).xy().norm())
            .fold(f64::INFINITY, f64::min);
        // 400 copies in 18 × 18 m: a 0.6 m clearance binds (uniform draws alone come nearer).
        assert!((0.6..0.7).contains(&nearest), "nearest pair {nearest}");
        assert!(p.iter().all(|v| v.x.abs() <= 9.0 && v.y.abs() <= 9.0));
    }
    let err = error_of(&scene(5, 0.6, 2.0), &[]);
    assert!(
        err.starts_with("$DIR/scene.json:1:")
            && err.contains(
                "(at artifacts[0].replicate.random.clearance): no place for copy "
            )
            && err.ends_with(
                " of 400 at least 0.6 m from the others after 1000 draws: widen the box or lower the clearance"
            ),
        "{err}"
    );
}

/// `apart_from` (issue 79: VMAS's goals drawn apart from its agents): the second instance's
/// copies keep the clearance from the first's as well as from each other; a name that is not
/// an earlier instance, and `apart_from` without a clearance, are refused with the field named.
#[test]
fn random_copies_keep_apart_from_an_earlier_instance() {
    let scene = |apart: &str, clearance: &str| {
        format!(
            r#"{{ "timestep": 0.01, "seed": 3, "artifacts": [ {{ "name": "a", "artifact": "ball.json", "replicate": {{ "random": {{ "count": 60, "min": [-3, -3, 1], "max": [3, 3, 1], "clearance": 0.4 }} }} }}, {{ "name": "g", "artifact": "ball.json", "pose": {{ "position": [0.5, 0, 0] }}, "replicate": {{ "random": {{ "count": 60, "min": [-3.5, -3, 1], "max": [2.5, 3, 1]{clearance}, "apart_from": [{apart}] }} }} }} ] }}"#
        )
    };
    let ws = Workspace::new();
    ws.write("ball.json", BALL);
    let path = ws.write("scene.json", &scene(r#""a""#, r#", "clearance": 0.4"#));
    let s = Scene::load(&path, &registry()).unwrap();
    let p: Vec<_> = s
        .artifacts
        .iter()
        .map(|x| x.bodies[0].1.pose.translation.vector.xy())
        .collect();
    let (agents, goals) = p.split_at(60);
    let nearest = |a: &[ssx_core::math::nalgebra::Vector2<f64>],
                   b: &[ssx_core::math::nalgebra::Vector2<f64>]| {
        a.iter()
            .flat_map(|x| b.iter().map(move |y| (x - y).norm()))
            .filter(|d| *d > 0.0)
            .fold(f64::INFINITY, f64::min)
    };
    assert!(nearest(goals, agents) >= 0.4, "{}", nearest(goals, agents));
    assert!(nearest(goals, goals) >= 0.4);
    // 120 discs of 0.4 m in 6 × 6 m: uniform draws alone would come nearer.
    assert!(nearest(goals, agents) < 0.5);
    let err = error_of(&scene(r#""b""#, r#", "clearance": 0.4"#), &[]);
    assert!(
        err.ends_with("(at artifacts[1].replicate.random.apart_from[0]): no instance 'b' before this one to keep apart from"),
        "{err}"
    );
    let err = error_of(&scene(r#""a""#, ""), &[]);
    assert!(
        err.ends_with(
            "(at artifacts[1].replicate.random.apart_from[0]): apart_from needs a clearance"
        ),
        "{err}"
    );
}

/// `relative_to` (issue 79: VMAS's balance places its agents and package along a line drawn at
/// random): an instance's pose, and its pattern, in the frame of an earlier instance's one copy;
/// a name that is not earlier, or an instance of many copies, refused with the field named.
#[test]
fn an_instance_stands_relative_to_an_earlier_one() {
    let scene = |other: &str| {
        format!(
            r#"{{ "timestep": 0.01, "seed": 5, "artifacts": [ {{ "name": "line", "artifact": "ball.json", "replicate": {{ "random": {{ "count": 1, "min": [-3, -3, 1], "max": [3, 3, 1], "random_yaw": true }} }} }}, {{ "name": "many", "artifact": "ball.json", "replicate": {{ "grid": {{ "count": 2, "spacing": [1, 1] }} }} }}, {{ "name": "on", "artifact": "ball.json", "relative_to": "{other}", "pose": {{ "position": [0.5, 0, 0.25] }}, "replicate": {{ "grid": {{ "count": 2, "columns": 2, "spacing": [0.25, 1] }} }} }} ] }}"#
        )
    };
    let ws = Workspace::new();
    ws.write("ball.json", BALL);
    let s = Scene::load(&ws.write("scene.json", &scene("line")), &registry()).unwrap();
    let pose = |i: usize| s.artifacts[i].bodies[0].1.pose;
    let line = pose(0);
    assert!(line.translation.vector.xy().norm() > 0.1, "{line:?}");
    for (k, i) in [3, 4].into_iter().enumerate() {
        let local = line.inverse() * pose(i);
        let want = [0.5 + 0.25 * k as f64, 0.0, 0.25];
        for (g, w) in local.translation.vector.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "copy {k}: {local:?}");
        }
        assert!(local.rotation.angle() < 1e-12, "{local:?}");
    }
    let err = error_of(&scene("later"), &[]);
    assert!(
        err.ends_with("(at artifacts[2].relative_to): no instance 'later' before this one to stand relative to"),
        "{err}"
    );
    let err = error_of(&scene("many"), &[]);
    assert!(
        err.ends_with(
            "(at artifacts[2].relative_to): 'many' has 2 copies; relative_to needs an instance of one"
        ),
        "{err}"
    );
}

#[test]
fn a_grid_leaves_cells_out_drawn_from_the_seed() {
    let scene = |seed: u64, leave: usize| {
        format!(
            r#"{{ "timestep": 0.01, "seed": {seed}, "artifacts": [ {{ "name": "wall", "artifact": "ball.json", "replicate": {{ "grid": {{ "count": 20, "columns": 20, "spacing": [0.5, 1], "leave_out": {leave} }} }} }} ] }}"#
        )
    };
    let ws = Workspace::new();
    ws.write("ball.json", BALL);
    // The columns left empty, and the names: consecutive over the cells kept.
    let gaps = |seed: u64, leave: usize| {
        let s = Scene::load(&ws.write("scene.json", &scene(seed, leave)), &registry()).unwrap();
        assert_eq!(s.artifacts.len(), 20 - leave);
        let names: Vec<&str> = s.artifacts.iter().map(|a| a.name.as_str()).collect();
        let want: Vec<String> = (0..20 - leave).map(|i| format!("wall_{i}")).collect();
        assert_eq!(names, want);
        let cols: Vec<usize> = s
            .artifacts
            .iter()
            .map(|a| (a.bodies[0].1.pose.translation.x / 0.5).round() as usize)
            .collect();
        assert!(cols.windows(2).all(|w| w[0] < w[1]), "{cols:?}");
        (0..20).filter(|c| !cols.contains(c)).collect::<Vec<_>>()
    };
    let one = gaps(1, 1);
    assert_eq!(one.len(), 1);
    assert_eq!(gaps(1, 1), one, "the same seed leaves the same cell out");
    let drawn: std::collections::BTreeSet<Vec<usize>> = (0..40).map(|s| gaps(s, 1)).collect();
    assert!(drawn.len() > 10, "40 seeds left out only {drawn:?}");
    assert_eq!(gaps(3, 4).len(), 4);
    assert_eq!(gaps(3, 0), Vec::<usize>::new());
    let err = error_of(&scene(1, 20), &[]);
    assert!(
        err.ends_with(
            "(at artifacts[0].replicate.grid.leave_out): 20 cells left out of 20 leaves no copy: it must be below count"
        ),
        "{err}"
    );
}

#[test]
fn a_body_draws_a_visual_that_touches_nothing() {
    let goal = |shape: &str| {
        format!(
            r#"{{ "bodies": [ {{ "name": "mark", "kind": "kinematic", "color": [0.3, 0.7, 0.3, 1], "visuals": [ {{ "shape": {shape}, "pose": {{ "position": [0, 0, 0.005] }} }} ] }} ] }}"#
        )
    };
    let scene =
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "goal", "artifact": "goal.json" } ] }"#;
    let ws = Workspace::new();
    ws.write(
        "goal.json",
        &goal(r#"{ "cylinder": { "radius": 0.05, "length": 0.01 } }"#),
    );
    let s = Scene::load(&ws.write("scene.json", scene), &registry()).unwrap();
    let a = &s.artifacts[0];
    assert!(
        a.bodies[0].1.colliders.is_empty(),
        "a visual is no collider"
    );
    let [v] = &a.visuals[..] else {
        panic!("{:?}", a.visuals)
    };
    assert_eq!(
        v.shape,
        Shape::Cylinder {
            radius: 0.05,
            half_length: 0.005
        }
    );
    assert_eq!(v.color, [0.3, 0.7, 0.3, 1.0]);
    assert!((v.local_pose.translation.z - 0.005).abs() < 1e-15);
    let err = error_of(scene, &[("goal.json", &goal(r#"{ "plane": {} }"#))]);
    assert!(
        err.ends_with(
            "(at bodies[0].visuals[0].shape): a plane is infinite: only static bodies may have one"
        ),
        "{err}"
    );
}

#[test]
fn a_motor_on_a_fixed_joint() {
    let err = error_of(
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "x", "artifact": "x.json" } ] }"#,
        &[(
            "x.json",
            r#"{ "bodies": [ { "name": "a", "kind": "static" }, { "name": "b", "kind": "static" } ], "joints": [ { "name": "j", "kind": "fixed", "parent": "a", "child": "b", "motor": { "stiffness": 1, "damping": 1 } } ] }"#,
        )],
    );
    assert_eq!(
        err,
        "$DIR/x.json:1:99 (at joints[0]): only revolute joints take 'axis', 'limits' and 'motor'"
    );
}
