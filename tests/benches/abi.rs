//! The cost of the C ABI, and plugins at scale.
//!
//! 1. One driver step through the C ABI against the same driver as an in-process trait object:
//!    1000 artifacts, each with a driver that applies one force a step (`push`), fast mode, one
//!    worker; the driver phase's time divided by 1000 is the cost of one call.
//! 2. 1000 artifacts with the hover driver and the pose sensor from their libraries, fast mode,
//!    1 and 2 workers: step time and the parallel speed-up.
//!
//! `cargo bench -p ssx-tests --bench abi` (release).

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::Arc;
use std::time::Duration;

use ssx_core::math::Vec3;
use ssx_core::plugin::{CommandBuffer, DriverContext};
use ssx_core::{Driver, Mode, MonotonicClock};
use ssx_tests::{Workspace, build_with, registry, rust_plugin_dir};

struct Push;

impl Driver for Push {
    fn drive(&mut self, _ctx: &DriverContext<'_>, out: &mut CommandBuffer) -> Result<(), String> {
        Ok(out.force(0, Vec3::new(0.0, 0.0, 1.0))?)
    }
}

const N: usize = 1000;

fn run(
    scene: &std::path::Path,
    reg: &ssx_core::PluginRegistry,
    workers: usize,
    steps: u64,
) -> ssx_core::StatsSummary {
    let clock = Arc::new(MonotonicClock::new(Duration::ZERO));
    let mut env = build_with(scene, reg, workers, Mode::Fast, true, clock).expect("scene");
    for _ in 0..steps {
        env.step().unwrap();
    }
    env.summary()
}

fn main() {
    let lib = rust_plugin_dir();
    let ws = Workspace::new();
    // Kinematic boxes far apart: the physics is cheap and the same for both.
    for (file, driver) in [
        ("inproc.json", r#"{ "plugin": "push" }"#.to_string()),
        (
            "abi.json",
            format!(
                r#"{{ "library": "{}", "plugin": "push" }}"#,
                lib.join("libssx_test_plugins.so").display()
            ),
        ),
    ] {
        ws.write(
            file,
            &format!(
                r#"{{ "bodies": [ {{ "name": "b", "kind": "kinematic", "colliders": [ {{ "shape": {{ "sphere": {{ "radius": 0.1 }} }} }} ] }} ], "driver": {driver} }}"#
            ),
        );
    }
    let scene = |name: &str, artifact: &str| {
        ws.write(
            name,
            &format!(r#"{{ "timestep": 0.01, "artifacts": [ {{ "name": "a", "artifact": "{artifact}", "replicate": {{ "grid": {{ "count": {N}, "spacing": [1, 1] }} }} }} ] }}"#),
        )
    };
    let (inproc, abi) = (
        scene("s-inproc.json", "inproc.json"),
        scene("s-abi.json", "abi.json"),
    );
    let mut reg = registry();
    reg.add_driver("push", |_, _| Ok(Box::new(Push)));

    println!(
        "## One driver step: C ABI against an in-process trait object ({N} drivers, 1 worker, 2000 steps, 5 rounds)\n"
    );
    println!(
        "| round | in-process p50 per call (ns) | C ABI p50 per call (ns) | difference (ns) | in-process mean (ns) | C ABI mean (ns) |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for round in 1..=5 {
        let a = run(&inproc, &reg, 1, 2000);
        let b = run(&abi, &reg, 1, 2000);
        let per = |us: f64| us * 1000.0 / N as f64;
        println!(
            "| {round} | {:.1} | {:.1} | {:+.1} | {:.1} | {:.1} |",
            per(a.phase_time_us.drivers.p50),
            per(b.phase_time_us.drivers.p50),
            per(b.phase_time_us.drivers.p50) - per(a.phase_time_us.drivers.p50),
            per(a.phase_time_us.drivers.mean),
            per(b.phase_time_us.drivers.mean),
        );
    }

    let lib_dir = lib.display();
    ws.write("ground.json", r#"{ "bodies": [ { "name": "plane", "kind": "static", "colliders": [ { "shape": { "plane": {} } } ] } ] }"#);
    ws.write(
        "drone.json",
        &format!(
            r#"{{ "bodies": [ {{ "name": "frame", "mass": 1.2, "colliders": [ {{ "shape": {{ "box": {{ "size": [0.5, 0.5, 0.1] }} }} }} ] }} ],
                 "driver": {{ "library": "{lib_dir}/libssx_driver_hover.so", "plugin": "hover", "descriptor": {{ "height": 1.0 }} }},
                 "sensors": [ {{ "name": "mocap", "library": "{lib_dir}/libssx_sensors.so", "plugin": "pose" }} ] }}"#
        ),
    );
    let swarm = ws.write(
        "swarm.json",
        &format!(
            r#"{{ "timestep": 0.01, "artifacts": [ {{ "name": "ground", "artifact": "ground.json" }},
                {{ "name": "d", "artifact": "drone.json", "pose": {{ "position": [0, 0, 1] }}, "replicate": {{ "grid": {{ "count": {N}, "spacing": [1, 1] }} }} }} ] }}"#
        ),
    );
    println!(
        "\n## {N} hover drivers and {N} pose sensors from their libraries, fast mode, 1000 steps\n"
    );
    println!(
        "| workers | step p50 (us) | step p99 (us) | physics p50 | sensors p50 | drivers p50 | plugin phases p50 (sensors + drivers) |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut plugin_time = vec![];
    for workers in [1, 2] {
        let s = run(&swarm, &reg, workers, 1000);
        let p = s.phase_time_us;
        println!(
            "| {workers} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            s.step_time_us.p50,
            s.step_time_us.p99,
            p.physics.p50,
            p.sensors.p50,
            p.drivers.p50,
            p.sensors.p50 + p.drivers.p50
        );
        plugin_time.push((s.step_time_us.p50, p.sensors.p50 + p.drivers.p50));
    }
    println!(
        "\nspeed-up with 2 workers: whole step x{:.2}, plugin phases x{:.2}",
        plugin_time[0].0 / plugin_time[1].0,
        plugin_time[0].1 / plugin_time[1].1
    );
}
