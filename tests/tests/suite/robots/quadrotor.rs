//! Quadrotors and Crazyflies: hover, steps, free fall, the attitude loop's twins, formations on
//! any worker count, every effect on, figure-eights and downwash.

use super::*;

fn quad_scene(ws: &Workspace, start: [f64; 3], driver: &str) -> std::path::PathBuf {
    on_ground(
        ws,
        0.001,
        &format!(
            r#"{{ "name": "q", "artifact": "{}", "pose": {{ "position": {start:?} }}, "overrides": {{ "driver": {driver} }} }}"#,
            library("quadrotor.json"),
        ),
    )
}

#[test]
fn a_quadrotor_hovers_within_two_centimetres_of_its_set_point() {
    let ws = Workspace::new();
    let s = quad_scene(
        &ws,
        [0.5, -0.5, 1.0],
        r#"{ "trajectory": { "hover": { "position": [0.5, -0.5, 1.0] } } }"#,
    );
    let mut env = build_fast(&s, 1).unwrap();
    step_n(&mut env, 3000);
    for _ in 0..3000 {
        env.step().unwrap();
        let p = position(&env, "q");
        let e = ((p[0] - 0.5).powi(2) + (p[1] + 0.5).powi(2) + (p[2] - 1.0).powi(2)).sqrt();
        assert!(e < 0.02, "{p:?} at t = {}", env.sim_time());
    }
}

#[test]
fn a_one_metre_step_in_x_settles_within_five_percent_in_four_seconds_with_little_overshoot() {
    let ws = Workspace::new();
    let s = quad_scene(
        &ws,
        [0.0, 0.0, 1.0],
        r#"{ "trajectory": { "hover": { "position": [1.0, 0.0, 1.0] } } }"#,
    );
    let mut env = build_fast(&s, 1).unwrap();
    let mut peak: f64 = 0.0;
    for step in 1..=8000 {
        env.step().unwrap();
        let x = position(&env, "q")[0];
        peak = peak.max(x);
        if step >= 4000 {
            assert!((x - 1.0).abs() <= 0.05, "x = {x} at step {step}");
        }
    }
    assert!(peak <= 1.2, "overshoot: peak x = {peak}");
}

#[test]
fn with_its_rotors_stopped_a_quadrotor_falls_like_a_free_body() {
    let ws = Workspace::new();
    let s = quad_scene(
        &ws,
        [0.0, 0.0, 20.0],
        r#"{ "trajectory": { "hover": { "position": [0, 0, 20] } }, "flight": { "armed": false } }"#,
    );
    let mut env = build_fast(&s, 1).unwrap();
    step_n(&mut env, 1000);
    let z = position(&env, "q")[2];
    let expect = 20.0 - 0.5 * G * 1.0f64.powi(2);
    assert!(
        (z - expect).abs() < 0.002 * 0.5 * G,
        "z = {z}, free fall gives {expect}"
    );
}

/// The quadrotor's flight stack as an in-process driver, so the test can see its rotors and
/// record what its inner loop gets. The sensors still come from the library.
struct Observed {
    flight: Flight,
    target: Reference,
    log: FlightLog,
}

impl Driver for Observed {
    fn drive(&mut self, ctx: &DriverContext<'_>, out: &mut CommandBuffer) -> Result<(), String> {
        let body = ctx.info().body(0).unwrap();
        let (pose, imu) = (
            ctx.own_reading("mocap").unwrap(),
            ctx.own_reading("imu").unwrap(),
        );
        let state = ctx.world.body(body);
        let q = state.pose.rotation;
        let inputs = FlightInputs {
            pose: (pose.values(), pose.step()),
            imu: (imu.values(), imu.step()),
            orientation: q,
            position: state.pose.translation.vector,
            velocity: state.linvel,
            neighbours: &[],
            time: ctx.world.time,
            step: ctx.world.step,
            mass: ctx.world.mass(body),
            inertia: ctx.world.inertia(body),
            gravity: ctx.world.gravity,
        };
        let target = self.target;
        let (force, torque) = self.flight.step(&inputs, |_, _, _, _| target)?;
        out.force(0, force)?;
        out.torque(0, torque)?;
        self.log.lock().unwrap().push((
            self.flight.airframe().rotor_speeds(),
            self.flight.last_attitude_input(),
        ));
        Ok(())
    }
}

type FlightLog = Arc<Mutex<Vec<([f64; 4], Option<AttitudeInput>)>>>;

fn observed_flight(target: [f64; 3], seconds: u64) -> (FlightLog, ssx_core::Environment) {
    let log: FlightLog = Arc::default();
    let mut reg: PluginRegistry = registry();
    let sink = log.clone();
    reg.add_driver("observed", move |_, init| {
        Ok(Box::new(Observed {
            flight: Flight::new(FlightParams::default(), init.timestep)?,
            target: Reference::hold(target.into(), 0.0),
            log: sink.clone(),
        }))
    });
    let ws = Workspace::new();
    let quad: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(library("quadrotor.json")).unwrap()).unwrap();
    let mut quad = quad;
    quad["driver"] = serde_json::json!({ "plugin": "observed" });
    let q = ws.write("quad.json", &quad.to_string());
    let s = scene(
        &ws,
        0.001,
        &format!(
            r#"{{ "name": "q", "artifact": "{}", "pose": {{ "position": [0, 0, 1] }} }}"#,
            q.display()
        ),
    );
    let mut env = build_fast_with(&s, &reg, 1, true).unwrap();
    step_n(&mut env, seconds * 1000);
    (log, env)
}

#[test]
fn at_hover_the_rotor_speeds_balance_the_weight() {
    let (log, env) = observed_flight([0.0, 0.0, 1.0], 4);
    let airframe = ssx_driver_quadrotor::airframe::AirframeParams::default();
    let mass = 0.8;
    let log = log.lock().unwrap();
    // The mean of the last second's 4·k_f·ω².
    let last = &log[log.len() - 1000..];
    let thrust = last
        .iter()
        .map(|(w, _)| w.iter().map(|w| airframe.k_f * w * w).sum::<f64>())
        .sum::<f64>()
        / last.len() as f64;
    assert!(
        (thrust / (mass * G) - 1.0).abs() < 0.01,
        "thrust {thrust} N vs weight {} N",
        mass * G
    );
    let z = position(&env, "q")[2];
    assert!((z - 1.0).abs() < 0.02, "{z}");
}

#[test]
fn the_fixed_point_attitude_loop_agrees_with_its_floating_point_twin_on_a_recorded_flight() {
    // Record what the inner loop got while flying to a point 1 m away (tilting both ways).
    let (log, _) = observed_flight([1.0, -1.0, 1.5], 4);
    let inputs: Vec<AttitudeInput> = {
        let log = log.lock().unwrap();
        let mut v: Vec<AttitudeInput> = log.iter().filter_map(|(_, i)| *i).collect();
        v.dedup();
        v
    };
    assert!(inputs.len() > 1500, "{} samples", inputs.len());
    let gains = Default::default();
    let (mut fixed, mut float) = (AttitudeLoop::new(&gains), AttitudeLoopF64::new(&gains));
    let lsb = 1.0 / 65536.0;
    let mut worst: f64 = 0.0;
    let mut biggest: f64 = 0.0;
    for i in &inputs {
        let a = fixed.update(i);
        let b = float.update(i);
        for k in 0..3 {
            worst = worst.max((f64::from(a[k]) * lsb - b[k]).abs());
            biggest = biggest.max(b[k].abs());
        }
    }
    // The fixed-point loop rounds the gyro rate to 2⁻¹⁶ rad/s (half an LSB), which the damping
    // gain (24) multiplies: 12 LSB of output; estimate and output rounding add a few more.
    assert!(
        worst <= 16.0 * lsb,
        "worst difference {worst} rad/s² ({} LSB)",
        worst / lsb
    );
    assert!(
        biggest > 1.0,
        "the recorded flight exercised the loop ({biggest} rad/s²)"
    );
}

#[test]
fn the_figure_eight_experiment_writes_its_error_series_distribution_summary_and_plot() {
    let scene = ssx_tests::repo_root().join("artifacts/scenes/figure8.json");
    let tracks = ssx_tests::fidelity::run(&scene, 2.0).unwrap();
    assert_eq!(
        tracks.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["horizontal", "vertical"]
    );
    let out = Workspace::new();
    let written = ssx_tests::fidelity::write(&tracks, out.path()).unwrap();
    assert_eq!(written.len(), 5);
    for t in &tracks {
        // Two periods of 10 s at 1 kHz.
        assert!(
            (t.samples.len() as i64 - 20_000).abs() <= 1,
            "{}",
            t.samples.len()
        );
        let csv =
            std::fs::read_to_string(out.path().join(format!("figure8_{}.csv", t.name))).unwrap();
        assert_eq!(csv.lines().count(), t.samples.len() + 1);
        // The error column is the distance between the desired and actual columns.
        for line in csv.lines().skip(1).step_by(997) {
            let v: Vec<f64> = line.split(',').map(|x| x.parse().unwrap()).collect();
            let d = ((v[1] - v[4]).powi(2) + (v[2] - v[5]).powi(2) + (v[3] - v[6]).powi(2)).sqrt();
            assert!((d - v[7]).abs() < 2e-5, "{line}");
        }
        let (mean, std) = t.mean_std();
        assert!(
            mean > 0.0 && mean < 0.3 && std > 0.0,
            "{}: {mean} {std}",
            t.name
        );
    }
    let cdf = std::fs::read_to_string(out.path().join("figure8_cdf.csv")).unwrap();
    let rows: Vec<Vec<f64>> = cdf
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    for w in rows.windows(2) {
        assert!(
            w[1][1] >= w[0][1] && w[1][2] >= w[0][2],
            "F is not decreasing"
        );
    }
    assert_eq!(&rows.last().unwrap()[1..], &[1.0, 1.0]);
    assert_eq!(&rows[0][1..], &[0.0, 0.0]);
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("figure8_summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary[0]["paper_simulated"]["mean_m"], 0.1245);
    assert_eq!(summary[1]["plane"], "vertical");
    let png = std::fs::read(out.path().join("figure8_cdf.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}

/// The shipped formation scene (20 quadrotors among pillars) after `steps`: every quadrotor's
/// position and the readings of its neighbours and range sensors.
fn fly_formation(workers: usize, steps: u64) -> (Vec<[f64; 3]>, Vec<Vec<f64>>) {
    let ws = Workspace::new();
    let text =
        std::fs::read_to_string(ssx_tests::repo_root().join("artifacts/scenes/formation.json"))
            .unwrap()
            .replace(
                "\"../library/",
                &format!(
                    "\"{}/",
                    ssx_tests::repo_root().join("artifacts/library").display()
                ),
            );
    let scene = ws.write("formation.json", &text);
    let mut env = build_fast(&scene, workers).unwrap();
    step_n(&mut env, steps);
    let names: Vec<String> = (0..20).map(|i| format!("quad_{i}")).collect();
    let positions = names.iter().map(|n| position(&env, n)).collect();
    let readings = names
        .iter()
        .flat_map(|n| [values(&env, n, "neighbours"), values(&env, n, "range")])
        .collect();
    (positions, readings)
}

#[test]
fn the_formation_flies_the_same_bits_with_one_two_and_three_workers() {
    // 12 s: take-off, the climb to 1.5 m, and the flight among the pillars, where the range
    // rings see them and the neighbours query finds the others.
    let (positions, readings) = fly_formation(1, 600);
    for p in &positions {
        assert!((p[2] - 1.5).abs() < 0.6, "flying near 1.5 m: {p:?}");
    }
    let mean_x = positions.iter().map(|p| p[0]).sum::<f64>() / 20.0;
    assert!(
        mean_x > 2.0,
        "the formation moved towards its goal: {mean_x}"
    );
    let seen: usize = readings
        .chunks(2)
        .filter(|r| r[0][0] > 0.0 && r[1].iter().any(|&d| d < 2.0))
        .count();
    assert!(seen > 0, "some quadrotor has neighbours and a range hit");
    for workers in [2, 3] {
        assert_eq!(
            fly_formation(workers, 600),
            (positions.clone(), readings.clone()),
            "{workers} workers"
        );
    }
}

/// The hover of an artifact from the library at (0, 0, `height`) for `seconds` with every
/// airframe effect it carries on: the largest distance from the hover point over the last 10 s.
fn hover_drift(artifact: &str, height: f64, seconds: u64) -> f64 {
    let ws = Workspace::new();
    let s = on_ground(
        &ws,
        0.001,
        &format!(
            r#"{{ "name": "q", "artifact": "{}", "pose": {{ "position": [0, 0, 0.03] }},
                  "overrides": {{ "driver": {{ "trajectory": {{ "hover": {{ "position": [0, 0, {height}] }} }} }} }} }}"#,
            library(artifact),
        ),
    );
    let mut env = build_fast(&s, 1).unwrap();
    step_n(&mut env, (seconds - 10) * 1000);
    let mut worst: f64 = 0.0;
    for _ in 0..10_000 {
        env.step().unwrap();
        let p = position(&env, "q");
        worst = worst.max((p[0].powi(2) + p[1].powi(2) + (p[2] - height).powi(2)).sqrt());
    }
    worst
}

#[test]
fn the_quadrotor_hovers_for_a_minute_with_every_effect_on() {
    let d = hover_drift("quadrotor.json", 1.0, 60);
    assert!(d < 0.02, "{d} m from the hover point");
}

#[test]
fn the_crazyflie_hovers_for_a_minute_with_every_effect_on_its_battery_included() {
    let d = hover_drift("crazyflie.json", 0.5, 60);
    assert!(d < 0.03, "{d} m from the hover point");
}

#[test]
fn the_crazyflie_on_its_firmwares_pid_takes_off_flies_to_a_point_and_holds_it() {
    // The firmware's default gains, loop rates and power distribution ("controller": "pid"),
    // from the ground to 0.5 m up, 0.5 m aside and turned by 0.8 rad: every loop's sign and
    // the yaw frame of the position loop take part.
    let ws = Workspace::new();
    let scene = |controller: &str| {
        on_ground(
            &ws,
            0.001,
            &format!(
                r#"{{ "name": "q", "artifact": "{}", "pose": {{ "position": [0, 0, 0.03] }},
                      "overrides": {{ "driver": {{
                          "trajectory": {{ "hover": {{ "position": [0.4, -0.3, 0.5], "yaw": 0.8 }} }},
                          "flight": {{ "controller": "{controller}" }} }} }} }}"#,
                library("crazyflie.json"),
            ),
        )
    };
    let Err(e) = build_fast(&scene("lee"), 1) else {
        panic!("an unknown controller was taken")
    };
    assert!(
        e.to_string()
            .contains("unknown variant `lee`, expected one of `cascaded`, `pid`, `mellinger`"),
        "{e}"
    );
    let mut cascaded = build_fast(&scene("cascaded"), 1).unwrap();
    let mut env = build_fast(&scene("pid"), 1).unwrap();
    let off = |env: &ssx_core::Environment| {
        let p = position(env, "q");
        (p[0] - 0.4).hypot(p[1] + 0.3)
    };
    step_n(&mut env, 2000);
    step_n(&mut cascaded, 2000);
    let (a, b) = (position(&env, "q"), position(&cascaded, "q"));
    let apart = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
    assert!(
        apart > 0.01,
        "the two controllers flew to within {apart} m of each other"
    );
    // The position loop (kp 2/s, velocities up to 1.1 m/s) has it over the point in 2 s.
    assert!(off(&env) < 0.1, "{} m aside after 2 s", off(&env));
    step_n(&mut env, 18_000);
    // Then the integrators take out what the thrust base (36000 of 65535, set for a lighter
    // Crazyflie than this one with its battery) leaves: held within a centimetre.
    let mut worst: f64 = 0.0;
    for _ in 0..5000 {
        env.step().unwrap();
        let z = position(&env, "q")[2];
        worst = worst.max(off(&env).hypot(z - 0.5));
    }
    assert!(worst < 0.01, "{worst} m from the point over the last 5 s");
    let (_, _, yaw) = state_of(&env, "q").pose.rotation.euler_angles();
    assert!((yaw - 0.8).abs() < 0.01, "yaw {yaw}");
}

/// The library Crazyflie's descriptor `flight` (controller and airframe), as shipped.
fn crazyflie_flight() -> serde_json::Value {
    let path = ssx_tests::repo_root().join("artifacts/library/crazyflie.json");
    let artifact: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    artifact["driver"]["descriptor"]["flight"].clone()
}

/// The mean error (m) of `crazyswarm-figure8.json` flown with `flight` as its Crazyflie's
/// descriptor `flight`, the scene written into `ws` as `name`.json.
fn crazyswarm_eight_mean_error(ws: &Workspace, name: &str, flight: serde_json::Value) -> f64 {
    let root = ssx_tests::repo_root();
    let mut scene: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("artifacts/scenes/crazyswarm-figure8.json")).unwrap(),
    )
    .unwrap();
    for a in scene["artifacts"].as_array_mut().unwrap() {
        let path = root
            .join("artifacts/scenes")
            .join(a["artifact"].as_str().unwrap());
        a["artifact"] = serde_json::json!(path.display().to_string());
        if let Some(driver) = a.pointer_mut("/overrides/driver") {
            driver["flight"] = flight.clone();
        }
    }
    let path = ws.path().join(format!("{name}.json"));
    std::fs::write(&path, scene.to_string()).unwrap();
    let tracks = ssx_tests::fidelity::run(&path, 1.0).unwrap();
    tracks[0].mean_std().0
}

#[test]
fn the_crazyflie_on_the_firmwares_mellinger_flies_crazyswarms_figure_eight_within_two_centimetres_and_one_told_its_mass()
 {
    // Crazyswarm's controller for trajectories with the firmware's default gains, on the
    // Crazyflie's own rotors with the airframe's default 20 ms motor lag and no other effect;
    // Preiss et al. 2017 report under 2 cm for real Crazyflies on this eight. The firmware's
    // PID in its position mode does not feed the trajectory's velocity forward: it lags far
    // behind at these speeds (up to 1.2 m/s).
    let shipped = crazyflie_flight();
    let airframe = &shipped["airframe"];
    let rotors: serde_json::Map<String, serde_json::Value> = ssx_tests::ablation::ROTORS
        .iter()
        .map(|k| (k.to_string(), airframe[*k].clone()))
        .collect();
    let ws = Workspace::new();
    let mean = |controller: &str, mellinger: serde_json::Value| {
        let name = format!("{controller}{}", mellinger.to_string().len());
        let flight = serde_json::json!({
            "controller": controller, "airframe": rotors, "mellinger": mellinger });
        crazyswarm_eight_mean_error(&ws, &name, flight)
    };
    let none = serde_json::json!({});
    let (mellinger, pid) = (mean("mellinger", none.clone()), mean("pid", none));
    assert!(mellinger < 0.025, "Mellinger: {mellinger} m mean error");
    assert!(
        pid > 10.0 * mellinger,
        "PID {pid} m, Mellinger {mellinger} m"
    );
    // Told the vehicle's mass (the firmware's `ctrlMel.mass`; it assumes 29 g, this Crazyflie
    // weighs 31.9 g), it no longer flies low: under a centimetre.
    let told = mean("mellinger", serde_json::json!({ "mass": 0.0319 }));
    assert!(told < 0.01, "Mellinger told the mass: {told} m mean error");
}

#[test]
fn the_crazyflie_with_every_effect_on_flies_crazyswarms_figure_eight_on_mellinger_within_four_centimetres()
 {
    // Issue 61's target: the artifact as shipped (drone-models' identified motors, drag, ground
    // effect, battery, sensor noise, 2 ms motion-capture latency) on the firmware's Mellinger,
    // under 4 cm mean error (twice the real robots' "under 2 cm"). The rotors' inertia is what
    // lets it: without the reaction torque of the motors' speed changes, the yaw loop cannot hold
    // through the identified 0.136 s motor lag, and the Crazyflie drops.
    let shipped = crazyflie_flight();
    assert!(shipped["airframe"]["rotor_inertia"].as_f64() > Some(0.0));
    let ws = Workspace::new();
    let mean =
        |name: &str, flight: serde_json::Value| crazyswarm_eight_mean_error(&ws, name, flight);
    let mut on = shipped;
    on["controller"] = serde_json::json!("mellinger");
    let mut without = on.clone();
    without["airframe"]
        .as_object_mut()
        .unwrap()
        .remove("rotor_inertia");
    let (with, without) = (mean("on", on), mean("without", without));
    assert!(with < 0.04, "every effect on: {with} m mean error");
    assert!(
        without > 0.1,
        "without the rotors' inertia: {without} m mean error"
    );
}

#[test]
fn the_figure_eight_tracks_worse_with_every_effect_on_than_with_all_off() {
    let root = ssx_tests::repo_root();
    let artifact = root.join("artifacts/library/quadrotor.json");
    let variants = ssx_tests::ablation::variants(&artifact).unwrap();
    let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "all off",
            "motors (spin-up/down, delay, rotor inertia)",
            "rotor drag",
            "quadratic body drag",
            "ground effect",
            "motion-capture latency (2 steps)",
            "all on"
        ]
    );
    let ws = Workspace::new();
    let scene = root.join("artifacts/scenes/figure8.json");
    let mean = |v: &ssx_tests::ablation::Variant| {
        let s = ssx_tests::ablation::scene_for(&scene, v, ws.path()).unwrap();
        ssx_tests::fidelity::run(&s, 1.0)
            .unwrap()
            .iter()
            .map(|t| t.mean_std().0)
            .collect::<Vec<f64>>()
    };
    let (off, on) = (mean(&variants[0]), mean(&variants[variants.len() - 1]));
    for (a, b) in off.iter().zip(&on) {
        assert!(b > a, "all on {on:?} vs all off {off:?}");
    }
}

#[test]
fn a_commanded_crazyflie_holds_the_attitude_asked_and_a_descriptor_gives_one_plan() {
    let ws = Workspace::new();
    let cf = |driver: &str| {
        on_ground(
            &ws,
            0.001,
            &format!(
                r#"{{ "name": "q", "artifact": "{}", "pose": {{ "position": [0, 0, 20] }},
                      "overrides": {{ "driver": {driver} }} }}"#,
                library("crazyflie.json"),
            ),
        )
    };
    // Hover thrust, then a 0.2 rad roll from 0.5 s: the inner loop holds it.
    let s = cf(
        r#"{ "trajectory": null, "commands": { "attitude": [[0, 0, 0, 0, 0.313], [0.5, 0.2, 0, 0, 0.319]] } }"#,
    );
    let mut env = build_fast(&s, 1).unwrap();
    step_n(&mut env, 2000);
    let (roll, pitch, _) = state_of(&env, "q").pose.rotation.euler_angles();
    assert!(
        (roll - 0.2).abs() < 0.01 && pitch.abs() < 0.01,
        "roll {roll}, pitch {pitch}"
    );
    let s = cf(r#"{ "commands": { "rotors": [[0, 2000, 2000, 2000, 2000]] } }"#);
    let Err(e) = build_fast(&s, 1) else {
        panic!("a descriptor with a trajectory and commands was taken")
    };
    let e = e.to_string();
    assert!(
        e.contains("invalid descriptor: give 'trajectory' or 'commands', not both"),
        "{e}"
    );
}

#[test]
fn the_crazyflie_flies_crazyswarms_polynomial_figure_eight_once() {
    let scene = ssx_tests::repo_root().join("artifacts/scenes/crazyswarm-figure8.json");
    let tracks = ssx_tests::fidelity::run(&scene, 1.0).unwrap();
    assert_eq!(tracks.len(), 1);
    let t = &tracks[0];
    // Ten pieces, 7.283185 s in all, from 4 s.
    assert!((t.window.0 - 4.0).abs() < 1e-12 && (t.window.1 - 11.283185).abs() < 1e-9);
    assert!(
        (t.samples.len() as i64 - 7284).abs() <= 1,
        "{}",
        t.samples.len()
    );
    // As Crazyswarm flies it: the firmware's Mellinger on the library Crazyflie's airframe, which
    // the scene repeats (a scene's override replaces the whole `flight`) and must not let drift.
    let text = std::fs::read_to_string(&scene).unwrap();
    let s: serde_json::Value = serde_json::from_str(&text).unwrap();
    let flight = &s["artifacts"][1]["overrides"]["driver"]["flight"];
    assert_eq!(flight["controller"], "mellinger");
    assert_eq!(flight["airframe"], crazyflie_flight()["airframe"]);
    // It flies the eight, 2 m by 1.06 m at up to 1.22 m/s, with every effect on: within 4 cm on
    // average (issue 61's target; the documented figure is 3.45 cm, the real robots' under 2).
    let (mean, _) = t.mean_std();
    assert!(mean < 0.04, "{mean}");
    let xs: Vec<f64> = t.samples.iter().map(|s| s.2[0]).collect();
    let span =
        xs.iter().cloned().fold(f64::MIN, f64::max) - xs.iter().cloned().fold(f64::MAX, f64::min);
    assert!(span > 1.6, "the eight's x span was {span} m");
}

#[test]
fn a_crazyflie_below_another_sinks_in_its_downwash_and_one_beside_it_does_not() {
    let ws = Workspace::new();
    let cf = |name: &str, x: f64, z: f64| {
        format!(
            r#"{{ "name": "{name}", "artifact": "{}", "pose": {{ "position": [{x}, 0, {z}] }},
                  "overrides": {{ "driver": {{ "trajectory": {{ "hover": {{ "position": [{x}, 0, {z}] }} }},
                                              "flight": {} }} }} }}"#,
            library("crazyflie.json"),
            // Already spinning: both start in hover.
            {
                let a: serde_json::Value = serde_json::from_str(
                    &std::fs::read_to_string(library("crazyflie.json")).unwrap(),
                )
                .unwrap();
                let mut f = a["driver"]["descriptor"]["flight"].clone();
                f["airframe"]["start_speed"] = serde_json::json!(1986.3);
                f
            }
        )
    };
    let s = on_ground(
        &ws,
        0.001,
        &[
            cf("top", 0.0, 1.5),
            cf("below", 0.0, 1.0),
            cf("beside", 1.0, 1.0),
        ]
        .join(", "),
    );
    let mut env = build_fast(&s, 1).unwrap();
    let mut lowest = [f64::MAX; 2];
    for _ in 0..2000 {
        env.step().unwrap();
        for (i, name) in ["below", "beside"].iter().enumerate() {
            lowest[i] = lowest[i].min(position(&env, name)[2]);
        }
    }
    // 0.5 m under the top one its downwash is 2267.18·(0.0231348/2)² ≈ 0.30 N, about the
    // Crazyflie's weight: it sinks well below its set-point; 1 m aside it holds within 2 cm.
    assert!(
        lowest[0] < 0.9,
        "the one below went down to {} m",
        lowest[0]
    );
    assert!(
        lowest[1] > 0.98,
        "the one beside went down to {} m",
        lowest[1]
    );
}
