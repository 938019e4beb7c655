//! Bitmap maps on both engines, and Stage's dispersal on both: the same scenes with only
//! `"engine"` changed.

use std::time::Duration;

use ssx_artifacts::Scene;
use ssx_core::math::{Point3, Vec3};
use ssx_core::{BodyId, ColliderSpec};
use ssx_tests::{Workspace, build_fast, registry, repo_root, ssxd_bounded, step_n};

fn maps() -> String {
    repo_root().join("artifacts/maps").display().to_string()
}

fn map_colliders(scene: &std::path::Path) -> Vec<ColliderSpec> {
    let s = Scene::load(scene, &registry()).unwrap();
    let map = s.artifacts.iter().find(|a| a.name == "map").unwrap();
    assert_eq!(map.bodies.len(), 1);
    let walls = &map.bodies[0].1;
    walls
        .colliders
        .iter()
        .map(|c| ColliderSpec {
            local_pose: walls.pose * c.local_pose,
            ..c.clone()
        })
        .collect()
}

/// A scene of the shipped office map (as `map`) and the ground, on `engine`.
fn office(ws: &Workspace, name: &str, map: &str, engine: &str) -> std::path::PathBuf {
    ws.write(
        name,
        &format!(
            r#"{{ "timestep": 0.01, "engine": "{engine}", "map": {map},
                 "artifacts": [ {{ "name": "ground", "artifact": "{}" }} ] }}"#,
            ssx_tests::library("ground.json")
        ),
    )
}

#[test]
fn a_png_and_a_map_server_yaml_load_to_the_same_walls() {
    let ws = Workspace::new();
    let png = office(
        &ws,
        "png.json",
        &format!(
            r#"{{ "image": "{}/office.png", "resolution": 0.05, "origin": [-10, -7] }}"#,
            maps()
        ),
        "rapier",
    );
    let yaml = office(
        &ws,
        "yaml.json",
        &format!(r#"{{ "yaml": "{}/office.yaml" }}"#, maps()),
        "rapier",
    );
    let (a, b) = (map_colliders(&png), map_colliders(&yaml));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.shape, y.shape);
        assert!((x.local_pose.translation.vector - y.local_pose.translation.vector).norm() < 1e-9);
    }
    // Merged runs: the office's 112,000 pixels hold 8,480 wall pixels, which make 60 boxes
    // (counted independently by merging the PGM's runs in Python).
    assert_eq!(a.len(), 60);
    // Every wall is 0.5 m high by default.
    for c in &a {
        let ssx_core::Shape::Box { half_extents } = c.shape else {
            panic!("walls are boxes");
        };
        assert_eq!(half_extents.z, 0.25);
    }
}

#[test]
fn a_ray_reads_the_distance_to_a_drawn_wall_within_a_pixel_on_both_engines() {
    let ws = Workspace::new();
    for engine in ["rapier", "kinematic"] {
        let scene = office(
            &ws,
            &format!("{engine}.json"),
            &format!(r#"{{ "yaml": "{}/office.yaml" }}"#, maps()),
            engine,
        );
        let mut env = build_fast(&scene, 1).unwrap();
        step_n(&mut env, 1);
        let map = env.artifact("map").unwrap().bodies.start;
        let e = env.engine();
        let none = |_: BodyId| false;
        // From the hall's centre at sensor height: the east outer wall's inner face is drawn at
        // 19.8 m of the 20 m map (x = 9.8 in the world), the west offices' wall at 6.2 m (x =
        // -3.8).
        let origin = Point3::new(0.0, 0.5, 0.2);
        for (dir, want) in [(Vec3::x(), 9.8), (-Vec3::x(), 3.8)] {
            let hit = e.cast_ray(origin, dir, 20.0, &none).unwrap();
            assert_eq!(hit.body, BodyId(map), "{engine}");
            assert!(
                (hit.distance - want).abs() <= 0.05,
                "{engine}: {} vs {want}",
                hit.distance
            );
        }
        // Above the walls' 0.5 m the ray passes.
        let over = Point3::new(0.0, 0.5, 0.6);
        assert!(
            e.cast_ray(over, Vec3::x(), 20.0, &none).is_none(),
            "{engine}"
        );
    }
}

#[test]
fn bad_maps_are_refused_with_a_located_message_and_no_memory_blow_up() {
    let ws = Workspace::new();
    ws.write("notes.png", "these are not pixels\n");
    // A PNG whose header claims 100,000 × 100,000 pixels (40 GB as RGBA).
    let mut huge = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = b"IHDR".to_vec();
    ihdr.extend(100_000u32.to_be_bytes());
    ihdr.extend(100_000u32.to_be_bytes());
    ihdr.extend([8, 6, 0, 0, 0]);
    huge.extend((13u32).to_be_bytes());
    huge.extend(&ihdr);
    huge.extend(crc32(&ihdr).to_be_bytes());
    // A first data chunk (the header is read up to it) holding a little compressed data.
    let idat = b"IDAT\x78\x9c\x63\x00\x00\x00\x01\x00\x01";
    huge.extend(((idat.len() - 4) as u32).to_be_bytes());
    huge.extend(idat);
    huge.extend(crc32(idat).to_be_bytes());
    std::fs::write(ws.path().join("huge.png"), &huge).unwrap();
    let cases: [(&str, &[&str]); 5] = [
        (
            r#"{ "image": "missing.png", "resolution": 0.05 }"#,
            &[
                "(at map.image)",
                "cannot read",
                "missing.png",
                "No such file",
            ],
        ),
        (
            r#"{ "image": "notes.png", "resolution": 0.05 }"#,
            &["(at map.image)", "notes.png' is not an image ssx reads"],
        ),
        (
            r#"{ "image": "notes.png", "resolution": 0 }"#,
            &[
                "(at map.resolution)",
                "expected a map resolution (m per pixel) from 0.001 to 100, got 0",
            ],
        ),
        (
            r#"{ "image": "huge.png", "resolution": 0.05 }"#,
            &[
                "(at map.image)",
                "is 100000 × 100000 pixels; maps are limited to 20000 pixels a side",
            ],
        ),
        (
            r#"{ "resolution": 0.05 }"#,
            &["(at map)", "a map needs exactly one of \"image\""],
        ),
    ];
    for (i, (map, expect)) in cases.iter().enumerate() {
        let scene = ws.write(
            &format!("bad{i}.json"),
            &format!(r#"{{ "timestep": 0.01, "map": {map} }}"#),
        );
        let r = ssxd_bounded(&["check", scene.to_str().unwrap()], 20, 1 << 30);
        assert_eq!(r.code, Some(2), "{map}: {r:?}");
        assert!(r.elapsed < Duration::from_secs(5));
        let errors: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("error: "))
            .collect();
        assert_eq!(errors.len(), 1, "{}", r.stderr);
        assert!(
            errors[0].contains(&format!("bad{i}.json:1:")),
            "{}",
            errors[0]
        );
        for part in *expect {
            assert!(errors[0].contains(part), "'{part}' not in {}", errors[0]);
        }
    }
    // A YAML file with a zero resolution points into the YAML file.
    ws.write(
        "zero.yaml",
        "image: notes.png\nresolution: 0\norigin: [0, 0, 0]\n",
    );
    let scene = ws.write(
        "yaml.json",
        r#"{ "timestep": 0.01, "map": { "yaml": "zero.yaml" } }"#,
    );
    let r = ssxd_bounded(&["check", scene.to_str().unwrap()], 20, 1 << 30);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr
            .contains("zero.yaml:2:1: resolution: expected a map resolution"),
        "{}",
        r.stderr
    );
}

fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// The shipped dispersal scene (100 Pioneers packed 0.6 m apart) on `engine` with `workers`,
/// after 60 s: every robot's position.
fn disperse(engine: &str, workers: usize) -> Vec<Vec3> {
    let ws = Workspace::new();
    let text = std::fs::read_to_string(repo_root().join("artifacts/scenes/dispersal.json"))
        .unwrap()
        .replace(
            "\"../library/",
            &format!("\"{}/", repo_root().join("artifacts/library").display()),
        )
        .replacen(
            "\"timestep\"",
            &format!("\"engine\": \"{engine}\", \"timestep\""),
            1,
        );
    let scene = ws.write("dispersal.json", &text);
    let mut env = build_fast(&scene, workers).unwrap();
    step_n(&mut env, 6000);
    (0..100)
        .map(|i| {
            ssx_tests::state_of(&env, &format!("robot_{i}"))
                .pose
                .translation
                .vector
        })
        .collect()
}

#[test]
fn dispersal_spreads_100_robots_on_both_engines_whatever_the_workers() {
    for engine in ["kinematic", "rapier"] {
        let one = disperse(engine, 1);
        let mut closest = f64::MAX;
        for (i, a) in one.iter().enumerate() {
            for b in &one[i + 1..] {
                closest = closest.min((a.xy() - b.xy()).norm());
            }
        }
        assert!(
            closest > 1.0,
            "{engine}: two robots {closest:.3} m apart after 60 s"
        );
        for workers in [2, 3] {
            assert_eq!(
                disperse(engine, workers),
                one,
                "{engine} with {workers} workers"
            );
        }
    }
}
