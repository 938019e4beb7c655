//! The `camera` sensor against closed forms, on both engines: depth per pixel, silhouettes,
//! colours, the rolling shutter's timing, determinism and refused descriptors.

use ssx_tests::{Workspace, build_fast, library, step_n};

/// A static box artifact of `size` in `color`.
fn block(ws: &Workspace, name: &str, size: [f64; 3], color: [f64; 3]) -> String {
    ws.write(
        &format!("{name}.json"),
        &format!(
            r#"{{ "bodies": [ {{ "name": "b", "kind": "static", "color": [{}, {}, {}, 1],
                 "colliders": [ {{ "shape": {{ "box": {{ "size": [{}, {}, {}] }} }} }} ] }} ] }}"#,
            color[0], color[1], color[2], size[0], size[1], size[2]
        ),
    )
    .display()
    .to_string()
}

/// A kinematic probe carrying one camera with `descriptor`, and optionally a velocity driver.
fn probe(ws: &Workspace, descriptor: &str, driver: &str) -> String {
    ws.write(
        "probe.json",
        &format!(
            r#"{{ "bodies": [ {{ "name": "probe", "kind": "kinematic",
                 "colliders": [ {{ "shape": {{ "sphere": {{ "radius": 0.05 }} }} }} ] }} ],
               {driver}
               "sensors": [ {{ "name": "cam", "library": "libssx_sensors.so", "plugin": "camera",
                 "descriptor": {descriptor} }} ] }}"#
        ),
    )
    .display()
    .to_string()
}

fn world(ws: &Workspace, engine: &str, artifacts: &str) -> std::path::PathBuf {
    ws.write(
        "scene.json",
        &format!(
            r#"{{ "timestep": 0.01, "gravity": [0, 0, 0], "engine": "{engine}", "seed": 3,
                 "artifacts": [ {artifacts} ] }}"#
        ),
    )
}

/// The probe at `at` (looking along +x) and `others`, stepped `steps` times; the reading.
fn shoot(engine: &str, descriptor: &str, at: [f64; 3], others: &str, steps: u64) -> Vec<f64> {
    let ws = Workspace::new();
    let p = probe(&ws, descriptor, "");
    let s = world(
        &ws,
        engine,
        &format!(
            r#"{{ "name": "p", "artifact": "{p}", "pose": {{ "position": [{}, {}, {}] }} }}{others}"#,
            at[0], at[1], at[2]
        ),
    );
    let mut env = build_fast(&s, 1).unwrap();
    step_n(&mut env, steps);
    env.reading("p", "cam").unwrap().values().to_vec()
}

/// A 20 m green wall whose near face is at x = 2 (centred on y = 0, z = 0).
fn wall(ws: &Workspace) -> String {
    let w = block(ws, "wall", [0.2, 20.0, 20.0], [0.1, 0.8, 0.2]);
    format!(r#", {{ "name": "wall", "artifact": "{w}", "pose": {{ "position": [2.1, 0, 0] }} }}"#)
}

const ENGINES: [&str; 2] = ["rapier", "kinematic"];

#[test]
fn a_camera_two_metres_from_a_wall_reads_its_distance_per_pixel() {
    // 33 × 25 pixels, 90° across: fx = 16.5 / tan(45°) = 16.5, centre (16, 12).
    let (w, h, f, cx, cy) = (33usize, 25usize, 16.5, 16.0, 12.0);
    for engine in ENGINES {
        for depth in ["z", "range"] {
            let ws = Workspace::new();
            let d = format!(
                r#"{{ "width": {w}, "height": {h}, "fov": 1.5707963267948966, "depth": "{depth}", "color": false }}"#
            );
            let r = shoot(engine, &d, [0.0, 0.0, 1.0], &wall(&ws), 1);
            assert_eq!(r.len(), w * h, "{engine}: depth only");
            for v in 0..h {
                for u in 0..w {
                    let (x, y) = ((u as f64 - cx) / f, (v as f64 - cy) / f);
                    let expect = match depth {
                        "z" => 2.0,
                        _ => 2.0 * (1.0 + x * x + y * y).sqrt(),
                    };
                    let got = r[v * w + u];
                    assert!(
                        (got - expect).abs() < 1e-3,
                        "{engine} {depth}: pixel ({u}, {v}) reads {got}, expected {expect}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_spheres_silhouette_has_its_analytic_radius_in_pixels() {
    // A ball of radius 0.5 m, 3 m ahead on the optical axis, seen by a 101 × 101 camera with
    // fx = 200: its outline is a circle of fx · tan(asin(r / D)) = 33.80 pixels about (50, 50).
    let ws = Workspace::new();
    let ball = ws.write(
        "ball.json",
        r#"{ "bodies": [ { "name": "b", "kind": "static",
             "colliders": [ { "shape": { "sphere": { "radius": 0.5 } } } ] } ] }"#,
    );
    let others = format!(
        r#", {{ "name": "ball", "artifact": "{}", "pose": {{ "position": [3, 0, 1] }} }}"#,
        ball.display()
    );
    let d = r#"{ "width": 101, "height": 101, "fx": 200, "far": 10, "color": false }"#;
    let r = shoot("rapier", d, [0.0, 0.0, 1.0], &others, 1);
    let radius = 200.0 * (0.5f64 / 3.0).asin().tan();
    let mut seen = 0;
    for v in 0..101 {
        for u in 0..101 {
            let rho = ((u as f64 - 50.0).powi(2) + (v as f64 - 50.0).powi(2)).sqrt();
            let hit = r[v * 101 + u].is_finite();
            seen += usize::from(hit);
            // Within one pixel of the outline either answer is right.
            if rho < radius - 1.0 {
                assert!(hit, "pixel ({u}, {v}) at {rho:.2} px should see the ball");
            } else if rho > radius + 1.0 {
                assert_eq!(
                    r[v * 101 + u],
                    f64::INFINITY,
                    "pixel ({u}, {v}) at {rho:.2} px"
                );
            }
        }
    }
    // The area agrees too: π r² within a ring of one pixel.
    let area = std::f64::consts::PI * radius * radius;
    assert!(
        (seen as f64 - area).abs() < 2.0 * std::f64::consts::PI * radius,
        "{seen} pixels, expected about {area:.0}"
    );
}

#[test]
fn a_camera_below_a_table_top_sees_under_it_and_one_level_with_it_sees_its_edge() {
    // The table's top spans x = 1.4..2.6 at 0.60..0.64 m; the centre pixel's ray at y = 0
    // passes between the legs (as the range sensor's test has it).
    for engine in ENGINES {
        let table = format!(
            r#", {{ "name": "table", "artifact": "{}", "pose": {{ "position": [2.0, 0, 0] }} }}"#,
            library("table.json")
        );
        let d = r#"{ "width": 5, "height": 5, "fov": 0.2, "far": 10, "color": false }"#;
        let below = shoot(engine, d, [0.0, 0.0, 0.3], &table, 1);
        assert_eq!(below[2 * 5 + 2], f64::INFINITY, "{engine}: {below:?}");
        let level = shoot(engine, d, [0.0, 0.0, 0.62], &table, 1);
        assert!((level[2 * 5 + 2] - 1.4).abs() < 1e-3, "{engine}: {level:?}");
    }
}

#[test]
fn a_red_box_before_a_green_wall_is_red_where_it_projects_and_green_elsewhere() {
    // A 0.5 m red cube centred 1.5 m ahead (near face at 1.25 m) before the green wall at 2 m:
    // its face projects to |u − cx|, |v − cy| ≤ fx · 0.25 / 1.25 = 8 pixels.
    let (w, h, f, c) = (41usize, 41usize, 40.0, 20.0);
    for engine in ENGINES {
        let ws = Workspace::new();
        let b = block(&ws, "red", [0.5, 0.5, 0.5], [0.9, 0.1, 0.1]);
        let others = format!(
            r#"{}, {{ "name": "red", "artifact": "{b}", "pose": {{ "position": [1.5, 0, 1] }} }}"#,
            wall(&ws)
        );
        let d = format!(r#"{{ "width": {w}, "height": {h}, "fx": {f} }}"#);
        let r = shoot(engine, &d, [0.0, 0.0, 1.0], &others, 1);
        assert_eq!(r.len(), 2 * w * h, "{engine}: depth then colour");
        let half = f * 0.25 / 1.25;
        let (mut red, mut green) = (0, 0);
        for v in 0..h {
            for u in 0..w {
                let rgb = r[w * h + v * w + u] as u32;
                let (cr, cg, cb) = (rgb >> 16, (rgb >> 8) & 0xff, rgb & 0xff);
                let off = (u as f64 - c).abs().max((v as f64 - c).abs());
                if off < half - 0.5 {
                    assert!(cr > 2 * cg && cr > 2 * cb, "{engine}: ({u}, {v}) {rgb:06x}");
                    assert!((r[v * w + u] - 1.25).abs() < 1e-3, "{engine}: ({u}, {v})");
                    red += 1;
                } else if off > half + 0.5 {
                    assert!(cg > 2 * cr && cg > 2 * cb, "{engine}: ({u}, {v}) {rgb:06x}");
                    assert!((r[v * w + u] - 2.0).abs() < 1e-3, "{engine}: ({u}, {v})");
                    green += 1;
                }
            }
        }
        assert_eq!((red, green), (15 * 15, w * h - 17 * 17), "{engine}");
    }
}

#[test]
fn a_rolling_shutter_exposes_rows_step_by_step_and_a_global_one_at_once() {
    // The probe drives at the wall at 1 m/s (0.01 m a step); a camera of 8 rows with a rate
    // divider of 4 casts 2 rows a step and publishes on the frame's last step.
    for engine in ENGINES {
        // Rolling: rows 0-1 at a frame's first step, 6-7 at its last, published then; global:
        // every row at the frame's first step, published at once.
        for (shutter, rows_apart, steps) in
            [("rolling", 0.01, [4, 8, 12]), ("global", 0.0, [1, 5, 9])]
        {
            let ws = Workspace::new();
            let d = format!(
                r#"{{ "width": 3, "height": 8, "fov": 0.1, "rate_divider": 4, "shutter": "{shutter}", "color": false }}"#
            );
            let driver = r#""driver": { "library": "libssx_driver_velocity.so", "plugin": "velocity", "descriptor": { "linear": [1, 0, 0] } },"#;
            let p = probe(&ws, &d, driver);
            let s = world(
                &ws,
                engine,
                &format!(
                    r#"{{ "name": "p", "artifact": "{p}", "pose": {{ "position": [0, 0, 1] }} }}{}"#,
                    wall(&ws)
                ),
            );
            let mut env = build_fast(&s, 1).unwrap();
            let mut published = Vec::new();
            for _ in 0..12 {
                env.step().unwrap();
                let r = env.reading("p", "cam").unwrap();
                if published.last() != Some(&r.step()) && r.step() > 0 {
                    published.push(r.step());
                }
            }
            assert_eq!(published, steps, "{engine} {shutter}");
            let r = env.reading("p", "cam").unwrap().values().to_vec();
            // z depth: every pixel of a row reads alike; rows two apart were cast a step apart.
            for v in 0..8 {
                let row = r[v * 3 + 1];
                assert!(
                    (r[v * 3] - row).abs() < 1e-5 && (r[v * 3 + 2] - row).abs() < 1e-5,
                    "{engine} {shutter}: {r:?}"
                );
                let pair = (v / 2) as f64;
                let first = r[1];
                assert!(
                    (first - row - pair * rows_apart).abs() < 1e-6,
                    "{engine} {shutter}: row {v} reads {row}, row 0 {first}"
                );
            }
        }
    }
}

#[test]
fn camera_images_are_bit_identical_on_one_two_and_three_workers() {
    let ws = Workspace::new();
    let d = r#"{ "width": 48, "height": 32, "fov": 1.2, "noise": 0.01, "rate_divider": 3 }"#;
    let p = probe(&ws, d, "");
    let b = block(&ws, "red", [0.5, 0.5, 0.5], [0.9, 0.1, 0.1]);
    let mut artifacts = format!(
        r#"{{ "name": "red", "artifact": "{b}", "pose": {{ "position": [1.5, 0, 1] }} }}{}"#,
        wall(&ws)
    );
    for i in 0..6 {
        artifacts += &format!(
            r#", {{ "name": "p{i}", "artifact": "{p}", "pose": {{ "position": [0, {}, 1], "rpy": [0, 0, {}] }} }}"#,
            i as f64 * 0.3 - 0.75,
            i as f64 * 0.1 - 0.25
        );
    }
    let shots = |engine: &str, workers: usize| {
        let s = world(&ws, engine, &artifacts);
        let mut env = build_fast(&s, workers).unwrap();
        step_n(&mut env, 7);
        (0..6)
            .flat_map(|i| {
                let r = env.reading(&format!("p{i}"), "cam").unwrap();
                assert_eq!(r.step(), 6, "published on the frame's last step");
                r.values().iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            })
            .collect::<Vec<u64>>()
    };
    for engine in ENGINES {
        let one = shots(engine, 1);
        // Each instance sees its own view.
        assert_ne!(one[..48 * 32], one[2 * 48 * 32..3 * 48 * 32], "{engine}");
        for workers in [2, 3] {
            assert!(one == shots(engine, workers), "{engine}: {workers} workers");
        }
    }
}

#[test]
fn bad_camera_descriptors_are_refused_at_create_and_say_where() {
    let cases = [
        (
            r#"{ "width": 0, "height": 0 }"#,
            "invalid descriptor: 'width' must be from 1 to 4096 pixels, got 0",
        ),
        (
            r#"{ "width": 100000, "height": 100000 }"#,
            "invalid descriptor: 'width' must be from 1 to 4096 pixels, got 100000",
        ),
        (
            r#"{ "width": 4096, "height": 4096 }"#,
            "invalid descriptor: a camera has at most 2097152 pixels ('width' × 'height'), got 4096 × 4096 = 16777216",
        ),
        (
            r#"{ "width": 64, "height": 48, "fov": 3.1415926535897931 }"#,
            "invalid descriptor: 'fov' (the horizontal field of view) must be in (0, π) rad, under 180°, got 3.141592653589793",
        ),
        (
            r#"{ "width": 64, "height": 48, "near": 5, "far": 5 }"#,
            "invalid descriptor: 'near' (5) must be below 'far' (5)",
        ),
        (
            r#"{ "width": 64, "height": 48, "fov": 1, "fx": 30 }"#,
            "invalid descriptor: give either 'fov' or 'fx' (with 'fy', 'cx', 'cy'), not both",
        ),
    ];
    for (descriptor, message) in cases {
        let ws = Workspace::new();
        let p = probe(&ws, descriptor, "");
        let s = world(
            &ws,
            "kinematic",
            &format!(r#"{{ "name": "p", "artifact": "{p}" }}"#),
        );
        let e = build_fast(&s, 1).err().expect("refused").to_string();
        assert!(
            e.starts_with("artifact 'p': cannot create sensor 'cam' (camera): ")
                && e.contains(message)
                && e.contains("probe.json:5:"),
            "{e}"
        );
    }
}
