//! Exploration after MAES (issue 14): generated maps, the `explore` extension's communication,
//! tags, coverage and SLAM maps, and the two explorers on the shipped scene. Real plugins: the
//! extension and the sensors are the cdylibs ssxd loads; in-process test drivers call the
//! extension's services through the same ABI wrapper the daemon uses.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ssx_artifacts::Scene;
use ssx_artifacts::generate::all_free_reachable;
use ssx_core::math::Vec3;
use ssx_core::{CommandBuffer, Driver, DriverContext};
use ssx_sdk::explore::{Belief, Reader, SlamMap, service};
use ssx_tests::{Workspace, build_fast_with, library, registry, repo_root, ssxd_bounded, step_n};

fn explore_lib() -> String {
    "libssx_explore.so".into()
}

// ---------------------------------------------------------------------------------------------
// Generated maps

#[test]
fn a_generated_map_is_the_same_byte_for_byte_and_every_free_cell_is_reachable() {
    let ws = Workspace::new();
    for (name, map) in [
        (
            "cave",
            r#"{"cave": {"seed": 42, "size": [60, 40], "fill": 0.45, "smoothing": 5}}"#,
        ),
        (
            "building",
            r#"{"building": {"seed": 42, "size": [40, 30], "room_size": 5, "door_width": 1.0}, "resolution": 0.25}"#,
        ),
    ] {
        let scene = ws.write(
            &format!("{name}.json"),
            &format!(r#"{{"timestep": 0.01, "map": {map}, "artifacts": []}}"#),
        );
        let a = Scene::load(&scene, &registry()).unwrap().map.unwrap();
        let b = Scene::load(&scene, &registry()).unwrap().map.unwrap();
        assert_eq!(a, b, "{name}");
        // The spawn point (the centre by default) reaches every free cell.
        let o = &a.occupancy;
        assert!(all_free_reachable(o, [o.width / 2, o.height / 2]), "{name}");
        // `ssxd map` writes the same image twice, and it is the occupancy.
        let (p1, p2) = (ws.path().join("1.png"), ws.path().join("2.png"));
        for p in [&p1, &p2] {
            let run = ssxd_bounded(
                &["map", scene.to_str().unwrap(), p.to_str().unwrap()],
                60,
                1 << 30,
            );
            assert_eq!(run.code, Some(0), "{}", run.stderr);
            assert!(run.stdout.starts_with("wrote "), "{}", run.stdout);
        }
        let bytes = std::fs::read(&p1).unwrap();
        assert_eq!(bytes, std::fs::read(&p2).unwrap());
        assert_eq!(bytes, ssx_artifacts::map::png(o).unwrap());
    }
    // A scene asking for two sources at once is refused, saying where.
    let both = ws.write(
        "both.json",
        r#"{"timestep": 0.01, "map": {"cave": {"seed": 1, "size": [20, 20]}, "image": "x.png", "resolution": 0.1}, "artifacts": []}"#,
    );
    let e = Scene::load(&both, &registry()).unwrap_err().to_string();
    assert!(
        e.contains("a map needs exactly one of \"image\" (with \"resolution\"), \"yaml\" (a map_server file), \"cave\" or \"building\""),
        "{e}"
    );
    assert!(e.contains("both.json"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// In-process probes calling the extension

/// What the probes saw: per receiver, (sender, step sent) of each message; and tag reads.
#[derive(Default)]
struct Seen {
    messages: BTreeMap<String, Vec<(u32, u64)>>,
    tags: BTreeMap<String, Vec<(u32, u32)>>,
    map: Option<SlamMap>,
}

/// Sends its step number every step when `send`; records what it receives; drops tag `drop` at
/// step 1; reads tags within `read` from step 3; moves at `velocity`; fetches its SLAM map
/// into `Seen::map` when `map`.
struct Probe {
    name: String,
    send: bool,
    drop: Option<u32>,
    read: Option<f64>,
    velocity: [f64; 3],
    map: bool,
    seen: Arc<Mutex<Seen>>,
    buffer: Vec<u8>,
}

impl Driver for Probe {
    fn drive(&mut self, ctx: &DriverContext<'_>, out: &mut CommandBuffer) -> Result<(), String> {
        let ext = ctx.world.extension("explore").ok_or("no explore")?;
        let me = ctx.artifact.0;
        let step = ctx.world.step;
        if self.send {
            let mut req = me.to_le_bytes().to_vec();
            req.extend_from_slice(&step.to_le_bytes());
            ext.call(service::SEND, &req, &mut [])?;
        }
        self.buffer.resize(1 << 16, 0);
        let n = ext.call(service::RECEIVE, &me.to_le_bytes(), &mut self.buffer)?;
        let mut r = Reader::new(&self.buffer[..n]);
        let mut seen = self.seen.lock().unwrap();
        while !r.is_empty() {
            let from = r.u32("sender")?;
            let len = r.u32("length")? as usize;
            let sent = u64::from_le_bytes(r.take(len, "message")?.try_into().unwrap());
            seen.messages
                .entry(self.name.clone())
                .or_default()
                .push((from, sent));
        }
        if let (Some(id), 1) = (self.drop, step) {
            let mut req = me.to_le_bytes().to_vec();
            req.extend_from_slice(&id.to_le_bytes());
            req.extend_from_slice(b"here");
            ext.call(service::DROP, &req, &mut [])?;
        }
        let p = ctx.world.bodies()[ctx.info().bodies.start as usize]
            .pose
            .translation
            .vector;
        if let (Some(radius), 3) = (self.read, step) {
            let mut req = Vec::new();
            for v in [p.x, p.y, radius] {
                req.extend_from_slice(&v.to_le_bytes());
            }
            let n = ext.call(service::READ, &req, &mut self.buffer)?;
            let mut r = Reader::new(&self.buffer[..n]);
            let list = seen.tags.entry(self.name.clone()).or_default();
            while !r.is_empty() {
                let (id, artifact) = (r.u32("id")?, r.u32("artifact")?);
                let _ = (r.f64("x")?, r.f64("y")?);
                let len = r.u32("length")? as usize;
                assert_eq!(r.take(len, "bytes")?, b"here");
                list.push((id, artifact));
            }
        }
        if self.map {
            self.buffer.resize(1 << 22, 0);
            if let Ok(n) = ext.call(service::MAP, &me.to_le_bytes(), &mut self.buffer) {
                let mut m = SlamMap::default();
                m.decode(&self.buffer[..n])?;
                seen.map = Some(m);
            }
        }
        let [x, y, z] = self.velocity;
        if x != 0.0 || y != 0.0 || z != 0.0 {
            out.velocity(0, Vec3::new(x, y, z), Vec3::zeros())?;
        }
        Ok(())
    }
}

fn probe_registry(seen: &Arc<Mutex<Seen>>) -> ssx_core::PluginRegistry {
    let mut reg = registry();
    let seen = Arc::clone(seen);
    reg.add_driver("probe", move |d, init| {
        let num = |k: &str| d.get(k).and_then(|v| v.as_f64());
        let v = d.get("velocity").and_then(|v| v.as_array());
        Ok(Box::new(Probe {
            name: init.artifact.clone(),
            send: d.get("send").and_then(|v| v.as_bool()).unwrap_or(false),
            drop: num("drop").map(|v| v as u32),
            read: num("read"),
            velocity: v.map_or([0.0; 3], |v| {
                [0, 1, 2].map(|i| v[i].as_f64().unwrap_or(0.0))
            }),
            map: d.get("map").and_then(|v| v.as_bool()).unwrap_or(false),
            seen: Arc::clone(&seen),
            buffer: Vec::new(),
        }))
    });
    reg
}

/// A static probe robot at (x, y) with the given probe descriptor.
fn robot(name: &str, x: f64, y: f64, probe: &str) -> String {
    format!(
        r#"{{ "name": "{name}", "artifact": "robot.json", "pose": {{ "position": [{x}, {y}, 0.1] }},
             "overrides": {{ "driver": {probe} }} }}"#
    )
}

fn write_robot(ws: &Workspace, kind: &str, sensors: &str) {
    ws.write(
        "robot.json",
        &format!(
            r#"{{ "bodies": [ {{ "name": "b", "kind": "{kind}", "planar": {planar}, {mass}
                 "colliders": [ {{ "shape": {{ "box": {{ "size": [0.3, 0.3, 0.2] }} }} }} ] }} ],
                 "driver": {{ "plugin": "probe", "descriptor": {{}} }}, "sensors": [{sensors}] }}"#,
            planar = kind == "dynamic",
            mass = if kind == "dynamic" {
                r#""mass": 1.0,"#
            } else {
                ""
            },
        ),
    );
}

/// A wall 0.5 m thick along y from -5 to 5 at x = 5, as the artifact `map`.
fn wall_artifact(ws: &Workspace) {
    ws.write(
        "wall.json",
        r#"{ "bodies": [ { "name": "w", "kind": "static",
             "colliders": [ { "shape": { "box": { "size": [0.5, 10, 1] } } } ] } ] }"#,
    );
}

fn comms_scene(ws: &Workspace, comms: &str, robots: &[String]) -> PathBuf {
    ws.write(
        "s.json",
        &format!(
            r#"{{ "timestep": 0.01, "seed": 4, "gravity": [0, 0, 0], "engine": "kinematic",
                 "extensions": [ {{ "name": "explore", "library": "{}", "plugin": "explore",
                   "descriptor": {{ "area": [[-12, -12], [12, 14]], "cell": 0.25, "robots": "r_",
                                    "comms": {comms}, "tags": {{}}, "log_every": 0 }} }} ],
                 "artifacts": [ {{ "name": "map", "artifact": "wall.json", "pose": {{ "position": [5, 0, 0.5] }} }},
                                {} ] }}"#,
            explore_lib(),
            robots.join(",\n")
        ),
    )
}

/// Which robots received r_0's messages, for a wall rule.
fn receivers(walls: &str) -> Vec<String> {
    let ws = Workspace::new();
    write_robot(&ws, "static", "");
    wall_artifact(&ws);
    let robots = [
        robot("r_0", 0.0, 0.0, r#"{"send": true}"#),
        robot("r_1", 3.0, 0.0, "{}"),  // 3 m, clear
        robot("r_2", 8.0, 0.0, "{}"),  // 8 m, behind the wall
        robot("r_3", 0.0, 10.5, "{}"), // 10.5 m: out of range
        robot("r_4", -9.5, 0.0, "{}"), // 9.5 m, clear
        robot("r_5", 3.0, 6.0, "{}"),  // 6.7 m, passes above the wall's end
        robot("r_6", 9.0, 4.0, "{}"),  // 9.8 m, behind the wall
    ];
    let scene = comms_scene(
        &ws,
        &format!(r#"{{ "range": 10, "walls": {walls} }}"#),
        &robots,
    );
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut env = build_fast_with(&scene, &probe_registry(&seen), 2, true).unwrap();
    step_n(&mut env, 20);
    drop(env);
    let seen = seen.lock().unwrap();
    for (to, got) in &seen.messages {
        // Sent at step k, read at step k + 1: each of steps 1..=19 once, from r_0 (artifact 1;
        // the wall is artifact 0).
        let want: Vec<(u32, u64)> = (1..20).map(|k| (1, k)).collect();
        assert_eq!(got, &want, "{to}");
    }
    seen.messages.keys().cloned().collect()
}

#[test]
fn comms_delivers_to_exactly_the_robots_in_range_and_line_of_sight() {
    assert_eq!(receivers(r#""block""#), ["r_1", "r_4", "r_5"]);
    assert_eq!(
        receivers(r#""ignore""#),
        ["r_1", "r_2", "r_4", "r_5", "r_6"]
    );
    // r_2 is 8 m away behind one wall: 8 + 1.5 is in range, 8 + 3 is not; r_6 (9.85 m) is
    // out with either.
    assert_eq!(
        receivers(r#"{"attenuate": 1.5}"#),
        ["r_1", "r_2", "r_4", "r_5"]
    );
    assert_eq!(receivers(r#"{"attenuate": 3}"#), ["r_1", "r_4", "r_5"]);
}

/// What r_1 received of r_0's 10 000 messages at `loss`, with `workers`.
fn lossy(workers: usize, loss: f64) -> Vec<u64> {
    let ws = Workspace::new();
    write_robot(&ws, "static", "");
    wall_artifact(&ws);
    let robots = [
        robot("r_0", 0.0, 0.0, r#"{"send": true}"#),
        robot("r_1", 2.0, 0.0, "{}"),
        robot("r_2", -2.0, 0.0, r#"{"send": true}"#),
    ];
    let scene = comms_scene(
        &ws,
        &format!(r#"{{ "range": 10, "loss": {loss}, "seed": 99 }}"#),
        &robots,
    );
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut env = build_fast_with(&scene, &probe_registry(&seen), workers, true).unwrap();
    step_n(&mut env, 10_001);
    drop(env);
    let seen = seen.lock().unwrap();
    seen.messages["r_1"]
        .iter()
        .filter(|(from, _)| *from == 1)
        .map(|(_, k)| *k)
        .collect()
}

#[test]
fn comms_drops_at_the_configured_rate_and_the_same_messages_for_any_worker_count() {
    let p = 0.3;
    let got = lossy(2, p);
    let n = 10_000.0;
    let kept = got.len() as f64;
    // Binomial(10 000, 0.7): σ = 45.8; four σ either way.
    let sigma = (n * p * (1.0 - p)).sqrt();
    assert!(
        (kept - n * (1.0 - p)).abs() < 4.0 * sigma,
        "kept {kept} of {n} at loss {p}"
    );
    // The same deliveries, message by message, with one and three workers.
    assert_eq!(lossy(1, p), got);
    assert_eq!(lossy(3, p), got);
}

#[test]
fn a_tag_is_found_within_its_radius_and_not_outside() {
    let ws = Workspace::new();
    write_robot(&ws, "static", "");
    wall_artifact(&ws);
    let robots = [
        robot("r_0", 0.0, 0.0, r#"{"drop": 42}"#),
        robot("r_1", 1.2, 0.0, r#"{"read": 1.5}"#),
        robot("r_2", 0.0, 1.6, r#"{"read": 1.5}"#),
        robot("r_3", 0.0, 1.6, r#"{"read": 1.7}"#),
    ];
    let scene = comms_scene(&ws, r#"{ "range": 10 }"#, &robots);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut env = build_fast_with(&scene, &probe_registry(&seen), 2, true).unwrap();
    step_n(&mut env, 5);
    drop(env);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.tags["r_1"], [(42, 1)]);
    assert_eq!(seen.tags["r_2"], []);
    assert_eq!(seen.tags["r_3"], [(42, 1)]);
}

// ---------------------------------------------------------------------------------------------
// Coverage and SLAM

#[test]
fn coverage_of_a_robot_driving_a_straight_line_is_the_area_it_swept() {
    let ws = Workspace::new();
    write_robot(&ws, "dynamic", "");
    let report = ws.path().join("report.json");
    let png = ws.path().join("cov");
    let (v, steps, dt, r, cell) = (0.5, 1001u64, 0.01, 0.25, 0.02);
    let scene = ws.write(
        "s.json",
        &format!(
            r#"{{ "timestep": {dt}, "gravity": [0, 0, 0], "engine": "kinematic",
                 "extensions": [ {{ "name": "explore", "library": "{}", "plugin": "explore",
                   "descriptor": {{ "area": [[-2, -2], [8, 2]], "cell": {cell}, "robots": "r_",
                                    "footprint": {r}, "report": "{}", "png": "{}", "png_scale": 3, "log_every": 0 }} }} ],
                 "artifacts": [ {} ] }}"#,
            explore_lib(),
            report.display(),
            png.display(),
            robot("r_0", 0.0, 0.0, &format!(r#"{{"velocity": [{v}, 0, 0]}}"#)),
        ),
    );
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut env = build_fast_with(&scene, &probe_registry(&seen), 2, true).unwrap();
    step_n(&mut env, steps);
    let end = ssx_tests::state_of(&env, "r_0").pose.translation.vector;
    let metrics = env.summary().metrics;
    drop(env);
    // Commands act from the next step: the centre went from 0 (steps 0 and 1) to `end`, a
    // stadium.
    let length = end.x;
    assert!(
        (length - v * dt * (steps - 1) as f64).abs() < 1e-6,
        "{length}"
    );
    let swept = 2.0 * r * length + std::f64::consts::PI * r * r;
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let free = j["free_cells"].as_f64().unwrap();
    assert_eq!(free, 500.0 * 200.0, "no walls: every cell is free");
    let share = j["covered"]["share"].as_f64().unwrap();
    // The run's summary carries the same figure, and the counts.
    assert_eq!(metrics["explore.covered"], share);
    assert_eq!(metrics["explore.messages_sent"], 0.0);
    assert!(
        !metrics.contains_key("explore.explored_50_s"),
        "{metrics:?}"
    );
    let covered = share * free * cell * cell;
    // Cells count by their centres: the error is at most half a cell along the outline.
    let outline = 2.0 * length + 2.0 * std::f64::consts::PI * r;
    assert!(
        (covered - swept).abs() < outline * cell / 2.0,
        "covered {covered} m², swept {swept} m²"
    );
    // 500 × 200 cells at 3 pixels a cell (the PNG header's width and height, big endian).
    for name in ["cov-covered.png", "cov-explored.png"] {
        let bytes = std::fs::read(ws.path().join(name)).unwrap();
        let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
        assert_eq!(
            (&bytes[12..16], be(16), be(20)),
            (&b"IHDR"[..], 1500, 600),
            "{name}"
        );
    }
}

#[test]
fn the_map_pictures_scale_within_limits() {
    let ws = Workspace::new();
    let scene = |descriptor: &str| {
        ws.write(
            "s.json",
            &format!(
                r#"{{ "timestep": 0.01, "extensions": [ {{ "name": "explore", "library": "{}", "plugin": "explore",
                     "descriptor": {descriptor} }} ], "artifacts": [] }}"#,
                explore_lib()
            ),
        )
    };
    let err = |descriptor: &str| match ssx_tests::build_fast(&scene(descriptor), 1) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{descriptor} must be refused"),
    };
    let e = err(
        r#"{ "area": [[0, 0], [10, 10]], "cell": 0.1, "robots": "r_", "png": "m", "png_scale": 0 }"#,
    );
    assert!(
        e.contains("invalid descriptor: 'png_scale' must be from 1 to 16 pixels per cell, got 0"),
        "{e}"
    );
    let e = err(
        r#"{ "area": [[0, 0], [100, 100]], "cell": 0.05, "robots": "r_", "png": "m", "png_scale": 16 }"#,
    );
    assert!(
        e.contains("invalid descriptor: 'png_scale' 16 makes the 2000 × 2000-cell map a picture of 32000 × 32000 pixels; the limit is 67108864 pixels"),
        "{e}"
    );
}

#[test]
fn a_slam_map_from_noiseless_poses_matches_the_walls_within_one_cell() {
    for engine in ["kinematic", "rapier"] {
        let ws = Workspace::new();
        write_robot(
            &ws,
            "dynamic",
            r#"{ "name": "slam", "library": "libssx_sensors.so", "plugin": "slam",
                 "descriptor": { "count": 720, "max_range": 30, "position": [0, 0, 0.05], "map_only": "map" } }"#,
        );
        let scene = ws.write(
            "s.json",
            &format!(
                r#"{{ "timestep": 0.01, "gravity": [0, 0, 0], "engine": "{engine}",
                     "map": {{ "building": {{ "seed": 5, "size": [20, 15], "room_size": 4, "door_width": 1.0 }}, "resolution": 0.25 }},
                     "extensions": [ {{ "name": "explore", "library": "{}", "plugin": "explore",
                       "descriptor": {{ "area": [[0, 0], [20, 15]], "cell": 0.25, "robots": "r_", "slam": {{}}, "log_every": 0 }} }} ],
                     "artifacts": [ {} ] }}"#,
                explore_lib(),
                robot("r_0", 10.0, 7.5, r#"{"map": true, "velocity": [0.3, 0.2, 0]}"#),
            ),
        );
        let seen = Arc::new(Mutex::new(Seen::default()));
        let truth = Scene::load(&scene, &probe_registry(&seen))
            .unwrap()
            .map
            .unwrap();
        let mut env = build_fast_with(&scene, &probe_registry(&seen), 2, true).unwrap();
        step_n(&mut env, 300);
        drop(env);
        let seen = seen.lock().unwrap();
        let m = seen.map.as_ref().expect("a SLAM map");
        let o = &truth.occupancy;
        assert_eq!((m.nx, m.ny), (o.width, o.height));
        // The truth, row 0 at the bottom like the SLAM map.
        let wall = |x: i64, y: i64| {
            x < 0
                || y < 0
                || x >= i64::from(o.width)
                || y >= i64::from(o.height)
                || o.cells[((i64::from(o.height) - 1 - y) * i64::from(o.width) + x) as usize]
        };
        let near = |x: i64, y: i64, want: bool| {
            (-1..=1).any(|dy| (-1..=1).any(|dx| wall(x + dx, y + dy) == want))
        };
        let (mut occupied, mut free) = (0, 0);
        for iy in 0..m.ny {
            for ix in 0..m.nx {
                let (x, y) = (i64::from(ix), i64::from(iy));
                match m.belief(ix, iy) {
                    Belief::Occupied => {
                        occupied += 1;
                        assert!(near(x, y, true), "{engine}: ({ix}, {iy}) believed a wall");
                    }
                    Belief::Free => {
                        free += 1;
                        assert!(near(x, y, false), "{engine}: ({ix}, {iy}) believed free");
                    }
                    Belief::Unknown => {}
                }
            }
        }
        // It saw its room and beyond: a good share of walls and floor.
        assert!(occupied > 80 && free > 400, "{engine}: {occupied} {free}");
    }
}

// ---------------------------------------------------------------------------------------------
// The explorers on the shipped scene

/// Runs the shipped exploration scene with `artifact` as the robots for `seconds`; the report.
fn explore_shipped(artifact: &str, seconds: f64) -> serde_json::Value {
    let ws = Workspace::new();
    let report = ws.path().join("report.json");
    let text = std::fs::read_to_string(repo_root().join("artifacts/scenes/exploration.json"))
        .unwrap()
        .replace("../library/explorer.json", &library(artifact))
        .replace(
            "../library/",
            &format!("{}/", Path::new(&library("x")).parent().unwrap().display()),
        );
    let mut scene: serde_json::Value = serde_json::from_str(&text).unwrap();
    let d = &mut scene["extensions"][0]["descriptor"];
    d["report"] = report.display().to_string().into();
    d["log_every"] = 0.into();
    let path = ws.write("scene.json", &scene.to_string());
    let reg = registry();
    let mut env = build_fast_with(&path, &reg, 2, true).unwrap();
    let steps = (seconds / 0.01).round() as u64;
    step_n(&mut env, steps);
    drop(env);
    serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap()
}

#[test]
fn the_frontier_explorer_covers_the_shipped_building_and_beats_the_random_walk() {
    let t = 240.0;
    let frontier = explore_shipped("explorer.json", t);
    let random = explore_shipped("explorer-random.json", t);
    let f90 = frontier["explored"]["time_to_90_s"].as_f64();
    assert!(
        f90.is_some_and(|s| s < 180.0),
        "frontier: 90% explored at {f90:?} (bound 180 s): {frontier}"
    );
    let (fs, rs) = (
        frontier["explored"]["share"].as_f64().unwrap(),
        random["explored"]["share"].as_f64().unwrap(),
    );
    assert!(fs > rs, "frontier explored {fs}, random walk {rs}");
    // And it got there first: the random walk had not reached 90% by then.
    let r90 = random["explored"]["time_to_90_s"].as_f64();
    assert!(r90.is_none_or(|r| r > f90.unwrap()), "{r90:?} vs {f90:?}");
    assert!(frontier["messages"]["delivered"].as_u64().unwrap() > 0);
    assert!(frontier["map_merges"].as_u64().unwrap() > 0);
}

/// The tags and the comms links of the last second, as the extension's shape overlays in a
/// recording: `/overlays/explore/tags` has one 0.15 m box per tag where it was dropped, and
/// `/overlays/explore/links` one segment per pair of robots a message passed between (not the
/// pair a wall blocks).
#[test]
fn a_recording_shows_the_tags_where_they_were_dropped_and_the_links_messages_took() {
    use foxglove::schemas::SceneUpdate;
    use prost::Message as _;
    let ws = Workspace::new();
    write_robot(&ws, "static", "");
    wall_artifact(&ws);
    let robots = [
        robot("r_0", 0.0, 0.0, r#"{"send": true, "drop": 7}"#),
        robot("r_1", 3.0, 0.0, r#"{"drop": 8}"#),
        robot("r_2", 8.0, 0.0, "{}"), // behind the wall
    ];
    let scene = comms_scene(&ws, r#"{ "range": 10 }"#, &robots);
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&scene).unwrap()).unwrap();
    s["extensions"][0]["descriptor"]["view"] = serde_json::json!({ "every": 0.1, "links": true });
    let scene = ws.write("s.json", &s.to_string());
    let file = ws.path().join("run.mcap");
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut env = ssx_tests::build_recorded(&scene, &probe_registry(&seen), true, &file).unwrap();
    step_n(&mut env, 30);
    drop(env);
    let bytes = std::fs::read(&file).unwrap();
    let last = |topic: &str| -> SceneUpdate {
        let data = mcap::MessageStream::new(&bytes)
            .unwrap()
            .map(Result::unwrap)
            .filter(|m| m.channel.topic == topic)
            .last()
            .unwrap_or_else(|| panic!("no {topic}"))
            .data
            .to_vec();
        SceneUpdate::decode(&data[..]).unwrap()
    };
    let tags = last("/overlays/explore/tags");
    let boxes: Vec<[f64; 6]> = tags.entities[0]
        .cubes
        .iter()
        .map(|c| {
            let (p, s) = (
                c.pose.as_ref().unwrap().position.as_ref().unwrap(),
                c.size.as_ref().unwrap(),
            );
            [p.x, p.y, p.z, s.x, s.y, s.z]
        })
        .collect();
    assert_eq!(
        boxes,
        [
            [0.0, 0.0, 0.075, 0.15, 0.15, 0.15],
            [3.0, 0.0, 0.075, 0.15, 0.15, 0.15]
        ]
    );
    let links = last("/overlays/explore/links");
    let points: Vec<[f64; 3]> = links.entities[0].lines[0]
        .points
        .iter()
        .map(|p| [p.x, p.y, p.z])
        .collect();
    assert_eq!(
        points,
        [[0.0, 0.0, 0.3], [3.0, 0.0, 0.3]],
        "r_0 to r_1 only"
    );
}
