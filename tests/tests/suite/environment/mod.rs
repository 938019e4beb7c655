//! The Environment end to end with in-process plugins: determinism across worker counts,
//! readings shared between artifacts, misbehaving plugins, the extension lifecycle, and the
//! pacing of the whole loop on a virtual clock.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ssx_core::math::Vec3;
use ssx_core::plugin::{
    CommandBuffer, DriverContext, ExtensionInit, PluginInit, Reading, SensorContext,
};
use ssx_core::{Clock, Driver, Mode, Sensor, SimulationExtension, SsxError, VirtualClock};
use ssx_tests::{Workspace, build_fast, build_fast_with, build_with, registry, repo_root, step_n};

mod control;

fn bits(env: &ssx_core::Environment) -> Vec<u64> {
    ssx_tests::state_bits(env.states())
}

fn swarm_scene(ws: &Workspace) -> std::path::PathBuf {
    let lib = repo_root().join("artifacts/library");
    ws.write(
        "swarm.json",
        &format!(
            r#"{{ "timestep": 0.01, "seed": 3, "artifacts": [
                {{ "name": "ground", "artifact": "{lib}/ground.json" }},
                {{ "name": "drone", "artifact": "{lib}/hover-box.json", "replicate": {{ "random": {{ "count": 60, "min": [-3, -3, 0.1], "max": [3, 3, 2], "random_yaw": true }} }},
                   "overrides": {{ "driver": {{ "height": 1.5 }} }} }},
                {{ "name": "rubble", "artifact": "{lib}/crate.json", "replicate": {{ "grid": {{ "count": 30, "spacing": [0.5, 0.5] }} }}, "pose": {{ "position": [-1, -1, 3] }} }},
                {{ "name": "sweeper", "artifact": "{lib}/sweeper.json" }}
            ] }}"#,
            lib = lib.display()
        ),
    )
}

#[test]
fn fast_runs_are_bit_identical_whatever_the_number_of_workers() {
    let ws = Workspace::new();
    let scenes = [
        swarm_scene(&ws),
        repo_root().join("artifacts/scenes/quickstart.json"),
    ];
    for scene in &scenes {
        let run = |workers| {
            let mut env = build_fast(scene, workers).unwrap();
            step_n(&mut env, 600);
            bits(&env)
        };
        let reference = run(1);
        assert_eq!(
            reference,
            run(1),
            "{}: two runs with 1 worker differ",
            scene.display()
        );
        assert_eq!(
            reference,
            run(2),
            "{}: 1 and 2 workers differ",
            scene.display()
        );
        assert_eq!(
            reference,
            run(3),
            "{}: 1 and 3 workers differ",
            scene.display()
        );
    }
}

/// The same on the kinematic engine, which the swarm benchmarks use: dispersing swarms (100
/// and 1000 robots packed 0.6 m apart, rays and drivers on every worker; at 1000 the engine
/// shares its move passes among the workers too) and a robot that grips, lifts, carries and
/// stacks a cube, stepped on 1, 2 and 3 workers, end in the same bits.
#[test]
fn kinematic_runs_are_bit_identical_whatever_the_number_of_workers() {
    for (scene, steps) in [
        ("dispersal.json", 600),
        ("dispersal-1000.json", 150),
        ("stacking.json", 1500),
    ] {
        let path = repo_root().join("artifacts/scenes").join(scene);
        let run = |workers| {
            let mut env = build_on(&path, "kinematic", workers);
            step_n(&mut env, steps);
            bits(&env)
        };
        let reference = run(1);
        assert_eq!(reference, run(2), "{scene}: 1 and 2 workers differ");
        assert_eq!(reference, run(3), "{scene}: 1 and 3 workers differ");
    }
}

/// Drives towards another artifact, reading that artifact's pose sensor (no copy, read-only).
struct Follower {
    leader: String,
    seen: Arc<Mutex<Vec<(u64, u64)>>>,
}

impl Driver for Follower {
    fn drive(&mut self, ctx: &DriverContext<'_>, out: &mut CommandBuffer) -> Result<(), String> {
        let leader = ctx
            .world
            .artifact_by_name(&self.leader)
            .ok_or("no leader")?;
        let idx = ctx
            .world
            .artifact(leader)
            .sensor_index("mocap")
            .ok_or("leader has no mocap")?;
        let reading = ctx.reading(leader, idx).ok_or("no reading")?;
        self.seen
            .lock()
            .unwrap()
            .push((ctx.world.step, reading.step()));
        let target = Vec3::new(
            reading.values()[0],
            reading.values()[1],
            reading.values()[2],
        );
        let me = ctx.world.body(ctx.info().body(0).unwrap());
        let accel = (target + Vec3::new(1.0, 0.0, 0.0) - me.pose.translation.vector) * 9.0
            - me.linvel * 6.0;
        out.force(
            0,
            (accel - ctx.world.gravity) * ctx.world.mass(ctx.info().body(0).unwrap()),
        )?;
        Ok(())
    }
}

#[test]
fn a_driver_reads_another_artifacts_sensor_from_the_same_step() {
    let ws = Workspace::new();
    let lib = repo_root().join("artifacts/library");
    ws.write(
        "follower.json",
        r#"{ "bodies": [ { "name": "b", "mass": 1.0, "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ],
             "driver": { "plugin": "follow", "descriptor": { "leader": "leader_0" } } }"#,
    );
    let scene = ws.write(
        "s.json",
        &format!(
            r#"{{ "timestep": 0.01, "artifacts": [
                {{ "name": "leader", "artifact": "{}/hover-box.json", "replicate": {{ "circle": {{ "count": 1, "radius": 0.01 }} }} }},
                {{ "name": "f", "artifact": "follower.json", "pose": {{ "position": [-2, 0, 0] }} }} ] }}"#,
            lib.display()
        ),
    );
    let seen = Arc::new(Mutex::new(vec![]));
    let mut reg = registry();
    let s = Arc::clone(&seen);
    reg.add_driver("follow", move |d, _| {
        Ok(Box::new(Follower {
            leader: d["leader"].as_str().ok_or("leader missing")?.into(),
            seen: Arc::clone(&s),
        }))
    });
    for workers in [1, 2] {
        seen.lock().unwrap().clear();
        let mut env = build_fast_with(&scene, &reg, workers, true).unwrap();
        step_n(&mut env, 400);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 400);
        assert!(
            seen.iter().all(|(now, stamp)| now == stamp),
            "every reading is this step's"
        );
        let leader = env.states()[0].pose.translation.vector;
        let follower = env.states()[1].pose.translation.vector;
        assert!(
            (follower - leader - Vec3::new(1.0, 0.0, 0.0)).norm() < 0.02,
            "follower at {follower:?}, leader at {leader:?}"
        );
    }
}

struct Panicky {
    at: u64,
}

impl Driver for Panicky {
    fn drive(&mut self, ctx: &DriverContext<'_>, out: &mut CommandBuffer) -> Result<(), String> {
        if ctx.world.step == self.at {
            panic!("rotor controller lost its mind");
        }
        out.force(0, Vec3::new(0.0, 0.0, 0.0))?;
        Ok(())
    }
}

struct Failing;

impl Sensor for Failing {
    fn sense(&mut self, ctx: &SensorContext<'_>, _out: &mut Reading) -> Result<(), String> {
        if ctx.world.step >= 3 {
            Err("lidar disconnected".into())
        } else {
            Ok(())
        }
    }
}

fn faulty_scene(ws: &Workspace) -> std::path::PathBuf {
    let lib = repo_root().join("artifacts/library");
    ws.write(
        "bad.json",
        r#"{ "bodies": [ { "name": "b", "mass": 1.0, "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ],
             "driver": { "plugin": "panicky" }, "sensors": [ { "name": "lidar", "plugin": "failing" } ] }"#,
    );
    ws.write(
        "s.json",
        &format!(
            r#"{{ "timestep": 0.01, "artifacts": [
                {{ "name": "ground", "artifact": "{lib}/ground.json" }},
                {{ "name": "good", "artifact": "{lib}/hover-box.json" }},
                {{ "name": "bad", "artifact": "bad.json", "pose": {{ "position": [3, 0, 1] }} }} ] }}"#,
            lib = lib.display()
        ),
    )
}

fn faulty_registry() -> ssx_core::PluginRegistry {
    let mut reg = registry();
    reg.add_driver("panicky", |_, _| Ok(Box::new(Panicky { at: 5 })));
    reg.add_sensor("failing", |_, _| Ok(Box::new(Failing)));
    reg
}

#[test]
fn a_panicking_driver_and_a_failing_sensor_are_disabled_and_the_simulation_goes_on() {
    let ws = Workspace::new();
    let scene = faulty_scene(&ws);
    let mut env = build_fast_with(&scene, &faulty_registry(), 2, false).unwrap();
    step_n(&mut env, 300);
    assert_eq!(env.driver_enabled("bad"), Some(false));
    assert_eq!(env.driver_enabled("good"), Some(true));
    assert_eq!(env.summary().plugin_faults, 2);
    // The healthy artifact still hovers; the broken one fell to the ground.
    let good = env.states()[1].pose.translation.z;
    let bad = env.states()[2].pose.translation.z;
    assert!((good - 1.0).abs() < 0.02, "good drone at z = {good}");
    assert!(bad < 0.2, "bad artifact at z = {bad}");
}

#[test]
fn strict_mode_stops_at_the_first_failure_naming_the_artifact() {
    let ws = Workspace::new();
    let scene = faulty_scene(&ws);
    let mut env = build_fast_with(&scene, &faulty_registry(), 2, true).unwrap();
    let mut err = None;
    for _ in 0..10 {
        if let Err(e) = env.step() {
            err = Some(e);
            break;
        }
    }
    let err = err.expect("strict mode stops");
    assert!(matches!(err, SsxError::PluginFailed(_)));
    assert_eq!(
        err.to_string(),
        "artifact 'bad': sensor 'lidar' (failing) failed at step 3: lidar disconnected (strict mode: stopping)"
    );
}

#[test]
fn a_bad_descriptor_names_the_artifact_the_plugin_and_where_it_is() {
    let ws = Workspace::new();
    ws.write(
        "a.json",
        "{ \"bodies\": [ { \"name\": \"b\", \"mass\": 1.0, \"colliders\": [ { \"shape\": { \"sphere\": { \"radius\": 0.1 } } } ] } ],\n  \"driver\": { \"library\": \"libssx_driver_hover.so\", \"plugin\": \"hover\", \"descriptor\": { \"hieght\": 2 } } }",
    );
    let scene = ws.write(
        "s.json",
        r#"{ "timestep": 0.01, "artifacts": [ { "name": "drone", "artifact": "a.json" } ] }"#,
    );
    let err = match build_fast(&scene, 1) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a bad descriptor must not build"),
    };
    let file = ws.path().join("a.json");
    assert!(err.starts_with("artifact 'drone': cannot create driver 'hover': invalid descriptor: unknown field `hieght` (did you mean `height`?), expected one of `height`, `waypoints`, `dwell`, `kp`, `kd`, `max_accel` (descriptor at "), "{err}");
    assert!(
        err.ends_with(&format!(
            "(descriptor at {}:2:85 (at driver.descriptor))",
            file.display()
        )),
        "{err}"
    );
}

/// Logs its life into a shared journal; drivers call its one service.
struct Journal {
    log: Arc<Mutex<Vec<String>>>,
    calls: std::sync::atomic::AtomicU64,
}

impl Journal {
    fn note(&self) {
        self.calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl SimulationExtension for Journal {
    fn init(&mut self, init: &ExtensionInit) -> Result<(), String> {
        self.log
            .lock()
            .unwrap()
            .push(format!("extension init ({})", init.scene));
        Ok(())
    }
    fn after_step(&mut self, ctx: &ssx_core::plugin::ExtensionContext<'_>) -> Result<(), String> {
        if ctx.world.step == 1 {
            self.log.lock().unwrap().push("after first step".into());
        }
        Ok(())
    }
    fn shutdown(&mut self) {
        let calls = self.calls.load(std::sync::atomic::Ordering::Relaxed);
        self.log
            .lock()
            .unwrap()
            .push(format!("extension shutdown after {calls} service calls"));
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

struct Client {
    log: Arc<Mutex<Vec<String>>>,
}

impl Driver for Client {
    fn drive(&mut self, ctx: &DriverContext<'_>, _out: &mut CommandBuffer) -> Result<(), String> {
        let ext = ctx.world.extension("journal").ok_or("no journal")?;
        ext.as_any()
            .downcast_ref::<Journal>()
            .ok_or("not a journal")?
            .note();
        Ok(())
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.log.lock().unwrap().push("driver destroyed".into());
    }
}

#[test]
fn extensions_start_first_and_stop_last_and_serve_drivers_by_name() {
    let ws = Workspace::new();
    ws.write(
        "c.json",
        r#"{ "bodies": [ { "name": "b", "kind": "static", "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ],
             "driver": { "plugin": "client" } }"#,
    );
    let scene = ws.write(
        "s.json",
        r#"{ "name": "lifecycle", "timestep": 0.01, "extensions": [ { "name": "journal", "plugin": "journal" } ],
             "artifacts": [ { "name": "c", "artifact": "c.json", "replicate": { "grid": { "count": 3, "spacing": [1, 1] } } } ] }"#,
    );
    let log = Arc::new(Mutex::new(vec![]));
    let mut reg = registry();
    let (l1, l2) = (Arc::clone(&log), Arc::clone(&log));
    reg.add_extension("journal", move |_| {
        Ok(Box::new(Journal {
            log: Arc::clone(&l1),
            calls: Default::default(),
        }))
    });
    reg.add_driver("client", move |_, init: &PluginInit| {
        l2.lock()
            .unwrap()
            .push(format!("driver created for {}", init.artifact));
        Ok(Box::new(Client {
            log: Arc::clone(&l2),
        }))
    });
    let mut env = build_fast_with(&scene, &reg, 2, true).unwrap();
    step_n(&mut env, 10);
    drop(env);
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        vec![
            "extension init (lifecycle)",
            "driver created for c_0",
            "driver created for c_1",
            "driver created for c_2",
            "after first step",
            "driver destroyed",
            "driver destroyed",
            "driver destroyed",
            "extension shutdown after 30 service calls",
        ]
    );
}

#[test]
fn a_failed_build_still_shuts_the_extensions_down() {
    let ws = Workspace::new();
    ws.write(
        "c.json",
        r#"{ "bodies": [ { "name": "b", "kind": "static", "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ],
             "driver": { "library": "libssx_driver_hover.so", "plugin": "hover", "descriptor": { "height": -1, "kp": 0 } } }"#,
    );
    let scene = ws.write(
        "s.json",
        r#"{ "timestep": 0.01, "extensions": [ { "name": "journal", "plugin": "journal" } ], "artifacts": [ { "name": "c", "artifact": "c.json" } ] }"#,
    );
    let log = Arc::new(Mutex::new(vec![]));
    let mut reg = registry();
    let l1 = Arc::clone(&log);
    reg.add_extension("journal", move |_| {
        Ok(Box::new(Journal {
            log: Arc::clone(&l1),
            calls: Default::default(),
        }))
    });
    let err = build_fast_with(&scene, &reg, 1, true).err().unwrap();
    assert!(
        err.to_string()
            .contains("'kp' must be a positive number, got 0"),
        "{err}"
    );
    assert_eq!(
        *log.lock().unwrap(),
        vec![
            "extension init (s)".to_string(),
            "extension shutdown after 0 service calls".into()
        ]
    );
}

/// Measures its own height above whatever is below it, by a ray cast from the worker thread.
struct Altimeter;

impl Sensor for Altimeter {
    fn sense(&mut self, ctx: &SensorContext<'_>, out: &mut Reading) -> Result<(), String> {
        let me = ctx.world.body(ctx.info().body(0).ok_or("no body")?);
        let origin = ssx_core::math::Point3::from(me.pose.translation.vector);
        let hit = ctx
            .world
            .cast_ray(origin, Vec3::new(0.0, 0.0, -1.0), 100.0, Some(ctx.artifact))
            .ok_or("nothing below")?;
        let mut near = Vec::new();
        ctx.world.bodies_within(origin, 0.3, &mut near);
        out.set(&[hit.distance, near.len() as f64]);
        Ok(())
    }
}

#[test]
fn sensors_on_several_workers_query_the_world_concurrently() {
    let ws = Workspace::new();
    let lib = repo_root().join("artifacts/library");
    ws.write(
        "probe.json",
        r#"{ "bodies": [ { "name": "b", "kind": "kinematic", "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ],
             "sensors": [ { "name": "alt", "plugin": "altimeter" } ] }"#,
    );
    let scene = ws.write(
        "s.json",
        &format!(
            r#"{{ "timestep": 0.01, "artifacts": [ {{ "name": "ground", "artifact": "{}/ground.json" }},
                {{ "name": "p", "artifact": "probe.json", "pose": {{ "position": [0, 0, 0.5] }},
                   "replicate": {{ "random": {{ "count": 64, "min": [-20, -20, 0.5], "max": [20, 20, 9] }} }} }} ] }}"#,
            lib.display()
        ),
    );
    let mut reg = registry();
    reg.add_sensor("altimeter", |_, _| Ok(Box::new(Altimeter)));
    let mut env = build_fast_with(&scene, &reg, 2, true).unwrap();
    step_n(&mut env, 3);
    for i in 0..64 {
        let name = format!("p_{i}");
        let z = env.states()[env.artifact(&name).unwrap().bodies.start as usize]
            .pose
            .translation
            .z;
        let r = env.reading(&name, "alt").unwrap();
        assert!(
            (r.values()[0] - z).abs() < 1e-4,
            "{name}: ray says {} m, body at z = {z}",
            r.values()[0]
        );
        // Within 0.3 m: only itself, and the ground for the probes lower than 0.3 m (none).
        assert_eq!(r.values()[1], 1.0, "{name}");
    }
}

#[test]
fn render_nodes_mirror_the_colliders_of_every_body() {
    let scene = repo_root().join("artifacts/scenes/quickstart.json");
    let s = ssx_artifacts::Scene::load(&scene, &registry()).unwrap();
    let colliders: usize = s
        .artifacts
        .iter()
        .flat_map(|a| &a.bodies)
        .map(|(_, b)| b.colliders.len())
        .sum();
    let mut env = build_fast(&scene, 1).unwrap();
    step_n(&mut env, 3);
    let render = env
        .render()
        .as_any()
        .downcast_ref::<ssx_core::NullRenderEngine>()
        .unwrap();
    assert_eq!(render.nodes().len(), colliders);
    assert_eq!(render.last_synced_step(), Some(3));
    // The quadrotor's frame: a 0.3 x 0.3 x 0.06 box in its colour, on its body.
    let quad = env.artifact("quad").unwrap().bodies.start;
    let nodes: Vec<_> = render.nodes().iter().filter(|n| n.body.0 == quad).collect();
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0].color, [0.15, 0.15, 0.2, 1.0]);
    assert!(
        matches!(nodes[0].shape, ssx_core::Shape::Box { half_extents } if (half_extents - Vec3::new(0.15, 0.15, 0.03)).norm() < 1e-12)
    );
    // The table: one body, five nodes (top and four legs).
    let table = env.artifact("table").unwrap().bodies.start;
    assert_eq!(
        render.nodes().iter().filter(|n| n.body.0 == table).count(),
        5
    );
}

/// Builds `scene` on `engine` with `workers`, fast, with the scene as its reset source.
fn build_on(scene: &std::path::Path, engine: &str, workers: usize) -> ssx_core::Environment {
    let mut env = build_without_source(scene, engine, workers);
    let registry = registry();
    let s = ssx_artifacts::Scene::load(scene, &registry).unwrap();
    env.set_scene_source(Box::new(s.source(None, &registry)));
    env
}

/// [`build_on`] without a reset source.
fn build_without_source(
    scene: &std::path::Path,
    engine: &str,
    workers: usize,
) -> ssx_core::Environment {
    let registry = registry();
    let mut s = ssx_artifacts::Scene::load(scene, &registry).unwrap();
    s.engine = engine.into();
    ssx_core::Environment::build(
        s.config(workers, Mode::Fast, ssx_core::LatePolicy::CatchUp, false),
        &registry,
        &s.extensions,
        &s.artifacts,
        Box::new(ssx_core::NullRenderEngine::default()),
        Arc::new(ssx_core::MonotonicClock::new(Duration::ZERO)),
    )
    .unwrap()
}
