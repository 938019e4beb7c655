//! The loop's clock and control: misses and catch-up on a virtual clock, late wake-ups, an
//! extension that fails or pauses the run, and resets to the bit.

use super::*;

/// Burns a scripted amount of virtual time per step, to test the pacing of the whole loop.
struct Burner {
    clock: VirtualClock,
    script: Vec<u64>,
}

impl Driver for Burner {
    fn drive(&mut self, ctx: &DriverContext<'_>, _out: &mut CommandBuffer) -> Result<(), String> {
        let us = self
            .script
            .get(ctx.world.step as usize - 1)
            .copied()
            .unwrap_or(400);
        self.clock.advance(Duration::from_micros(us));
        Ok(())
    }
}

/// One static artifact at τ = 1 ms whose driver is the registry's `burner`.
fn burner_scene(ws: &Workspace) -> std::path::PathBuf {
    ws.write(
        "b.json",
        r#"{ "bodies": [ { "name": "b", "kind": "static", "colliders": [ { "shape": { "sphere": { "radius": 0.1 } } } ] } ],
             "driver": { "plugin": "burner" } }"#,
    );
    ws.write(
        "s.json",
        r#"{ "timestep": 0.001, "artifacts": [ { "name": "b", "artifact": "b.json" } ] }"#,
    )
}

/// `scene` in real time on one worker, strict, paced by `clock`.
fn realtime(
    scene: &std::path::Path,
    reg: &ssx_core::PluginRegistry,
    clock: &VirtualClock,
) -> ssx_core::Environment {
    let clock = Arc::new(clock.clone());
    build_with(scene, reg, 1, Mode::Realtime { factor: 1.0 }, true, clock).unwrap()
}

#[test]
fn the_loop_on_a_virtual_clock_counts_misses_and_catches_up() {
    let ws = Workspace::new();
    let scene = burner_scene(&ws);
    let clock = VirtualClock::new();
    let mut reg = registry();
    let c = clock.clone();
    // Step 3 takes 2.5 ms of a 1 ms period; the rest take 0.4 ms and win 0.6 ms back each.
    reg.add_driver("burner", move |_, _| {
        Ok(Box::new(Burner {
            clock: c.clone(),
            script: vec![400, 400, 2500],
        }))
    });
    let mut env = realtime(&scene, &reg, &clock);
    step_n(&mut env, 20);
    let s = env.summary();
    // Step 3 ends at 4.5 ms (deadline 3), step 4 at 4.9 (dl 4), step 5 at 5.3 (dl 5), then on time.
    assert_eq!(s.deadline_misses, 3);
    assert_eq!(s.miss_bursts, 1);
    assert_eq!(s.max_lateness_us, 1500.0);
    assert_eq!(clock.now(), Duration::from_millis(20), "back on schedule");
    assert!((s.wall_time_s - 0.020).abs() < 1e-12);
    assert!(
        (s.step_time_us.max - 2500.0).abs() < 3.0,
        "{:?}",
        s.step_time_us
    );
    assert!((s.phase_time_us.drivers.p50 - 400.0).abs() < 1.0);
}

#[test]
fn waits_that_return_late_are_counted_as_late_wakeups_not_misses() {
    let ws = Workspace::new();
    let scene = burner_scene(&ws);
    for (oversleep_us, expected) in [(50u64, 0u64), (300, 20)] {
        let clock = VirtualClock::new();
        clock.set_oversleep(Duration::from_micros(oversleep_us));
        let mut reg = registry();
        let c = clock.clone();
        reg.add_driver("burner", move |_, _| {
            Ok(Box::new(Burner {
                clock: c.clone(),
                script: vec![],
            }))
        });
        let mut env = realtime(&scene, &reg, &clock);
        step_n(&mut env, 20);
        let s = env.summary();
        // The tolerance is a tenth of the 1 ms period.
        assert_eq!(
            (s.late_wakeups, s.deadline_misses),
            (expected, 0),
            "oversleep {oversleep_us} us"
        );
        assert_eq!(s.max_lateness_us, oversleep_us as f64);
    }
}

/// A miss in real time is attributed to its phase and the slowest artifact of that phase
/// (each artifact is timed in real time; fast mode, which cannot miss, times none).
#[test]
fn a_miss_names_its_slowest_phase_and_artifact() {
    let ws = Workspace::new();
    burner_scene(&ws);
    let scene = ws.write(
        "two.json",
        r#"{ "timestep": 0.001, "artifacts": [ { "name": "quick", "artifact": "b.json" },
                                              { "name": "slow", "artifact": "b.json" } ] }"#,
    );
    let clock = VirtualClock::new();
    let mut reg = registry();
    let c = clock.clone();
    // Step 3: "slow" takes 2.5 ms of the 1 ms period, "quick" 0.1 ms as on every step.
    reg.add_driver("burner", move |_, init| {
        let script = if init.artifact == "slow" {
            vec![100, 100, 2500]
        } else {
            vec![100; 20]
        };
        Ok(Box::new(Burner {
            clock: c.clone(),
            script,
        }))
    });
    let mut env = realtime(&scene, &reg, &clock);
    let ((), text) = crate::logs::logged(|| step_n(&mut env, 5));
    assert!(env.summary().deadline_misses >= 1, "{text}");
    assert!(
        text.contains("deadline missed at step 3")
            && text.contains("slowest phase drivers 2.600 ms, slowest artifact 'slow' 2.500 ms"),
        "{text}"
    );
}

/// An extension whose per-step hook fails from step 3 on.
struct Flaky {
    calls: Arc<Mutex<u64>>,
}

impl SimulationExtension for Flaky {
    fn init(&mut self, _: &ExtensionInit) -> Result<(), String> {
        Ok(())
    }
    fn after_step(&mut self, ctx: &ssx_core::plugin::ExtensionContext<'_>) -> Result<(), String> {
        *self.calls.lock().unwrap() += 1;
        if ctx.world.step >= 3 {
            Err("link down".into())
        } else {
            Ok(())
        }
    }
    fn shutdown(&mut self) {}
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn a_failing_extension_is_reported_once_and_no_longer_stepped() {
    let ws = Workspace::new();
    let scene = ws.write(
        "s.json",
        r#"{ "timestep": 0.01, "extensions": [ { "name": "link", "plugin": "flaky" } ], "artifacts": [] }"#,
    );
    let calls = Arc::new(Mutex::new(0));
    let mut reg = registry();
    let c = Arc::clone(&calls);
    reg.add_extension("flaky", move |_| {
        Ok(Box::new(Flaky {
            calls: Arc::clone(&c),
        }))
    });
    let mut env = build_fast_with(&scene, &reg, 1, false).unwrap();
    step_n(&mut env, 20);
    assert_eq!(env.summary().plugin_faults, 1);
    assert_eq!(
        *calls.lock().unwrap(),
        3,
        "stepped until it failed, then not again"
    );
    let mut strict = build_fast_with(&scene, &reg, 1, true).unwrap();
    step_n(&mut strict, 2);
    assert_eq!(
        strict.step().unwrap_err().to_string(),
        "extension 'link' failed at step 3: link down (strict mode: stopping)"
    );
}

/// Pauses the run after step 5, asks for 3 steps after 50 paused polls, resumes 20 polls later;
/// records (steps, paused) at every poll.
struct Remote {
    seen: Arc<Mutex<Vec<(u64, bool)>>>,
    polls_paused: u32,
}

impl SimulationExtension for Remote {
    fn init(&mut self, _: &ExtensionInit) -> Result<(), String> {
        Ok(())
    }
    fn control(
        &mut self,
        ctx: &ssx_core::plugin::ExtensionContext<'_>,
    ) -> Result<ssx_core::RunRequest, String> {
        let live = ctx.stats.live();
        self.seen.lock().unwrap().push((live.steps, live.paused));
        if !live.paused {
            return Ok(if live.steps == 5 {
                ssx_core::RunRequest::Pause
            } else {
                ssx_core::RunRequest::None
            });
        }
        self.polls_paused += 1;
        Ok(match self.polls_paused {
            50 => ssx_core::RunRequest::Step(3),
            70 => ssx_core::RunRequest::Resume,
            _ => ssx_core::RunRequest::None,
        })
    }
    fn shutdown(&mut self) {}
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn an_extension_pauses_steps_and_resumes_the_run_without_counting_the_pause_as_lateness() {
    let ws = Workspace::new();
    burner_scene(&ws);
    let scene = ws.write(
        "s.json",
        r#"{ "timestep": 0.001, "extensions": [ { "name": "remote", "plugin": "remote" } ],
             "artifacts": [ { "name": "b", "artifact": "b.json" } ] }"#,
    );
    let clock = VirtualClock::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut reg = registry();
    let c = clock.clone();
    reg.add_driver("burner", move |_, _| {
        Ok(Box::new(Burner {
            clock: c.clone(),
            script: vec![],
        }))
    });
    let s = Arc::clone(&seen);
    reg.add_extension("remote", move |_| {
        Ok(Box::new(Remote {
            seen: Arc::clone(&s),
            polls_paused: 0,
        }))
    });
    let mut env = realtime(&scene, &reg, &clock);
    let stop = std::sync::atomic::AtomicBool::new(false);
    env.run(Some(20), &stop, |_, _| {}).unwrap();
    let seen = seen.lock().unwrap().clone();
    // Running: one poll after each of steps 1..=5; then paused at 5 for 50 polls;
    // three steps (polls 51-53, still paused); polls 54-70 at step 8, the last one resumes; then
    // running to 20.
    let mut want: Vec<(u64, bool)> = (1..=5).map(|s| (s, false)).collect();
    want.extend(std::iter::repeat_n((5, true), 50));
    want.extend((6..=8).map(|s| (s, true)));
    want.extend(std::iter::repeat_n((8, true), 17));
    want.extend((9..=20).map(|s| (s, false)));
    assert_eq!(seen, want);
    let summary = env.summary();
    assert_eq!(summary.steps, 20);
    assert_eq!(summary.deadline_misses, 0, "the pause is not lateness");
    assert_eq!(summary.max_lateness_us, 0.0);
    // A paused run waits on the doorbell (wall time), not on the run's clock: the 67 paused
    // polls took none of it, only the 20 steps of 1 ms did.
    assert!(
        clock.now() <= Duration::from_millis(20),
        "{:?}",
        clock.now()
    );
}

#[test]
fn a_reset_world_runs_the_first_run_again_to_the_bit_on_both_engines() {
    let scene = repo_root().join("artifacts/scenes/dispersal.json");
    for engine in ["kinematic", "rapier"] {
        let mut env = build_on(&scene, engine, 2);
        let start = bits(&env);
        step_n(&mut env, 150);
        let first = bits(&env);
        let range = env.reading("robot_7", "range").unwrap().values().to_vec();
        assert_ne!(first, start, "{engine}: the robots moved");
        env.reset(None).unwrap();
        assert_eq!(env.steps(), 0, "{engine}");
        assert_eq!(env.sim_time(), 0.0, "{engine}");
        assert_eq!(
            env.summary().steps,
            0,
            "{engine}: the statistics start over"
        );
        assert_eq!(
            bits(&env),
            start,
            "{engine}: the bodies where the scene puts them"
        );
        assert!(env.reading("robot_7", "range").unwrap().values().is_empty());
        step_n(&mut env, 150);
        assert_eq!(bits(&env), first, "{engine}: the same run again");
        assert_eq!(
            env.reading("robot_7", "range").unwrap().values(),
            &range[..],
            "{engine}: the same readings"
        );
        assert_eq!(env.summary().steps, 150, "{engine}");
    }
}

#[test]
fn a_reset_with_another_seed_moves_the_seeded_replicas_and_the_first_seed_brings_them_back() {
    let ws = Workspace::new();
    let scene = swarm_scene(&ws);
    let mut env = build_on(&scene, "rapier", 2);
    let start = bits(&env);
    step_n(&mut env, 20);
    env.reset(Some(4)).unwrap();
    assert_eq!(env.config().seed, 4);
    assert_ne!(bits(&env), start, "the random replicas moved with the seed");
    step_n(&mut env, 20);
    env.reset(Some(3)).unwrap();
    assert_eq!(bits(&env), start, "seed 3 is the scene's own");
    // Without a source, only the scene's own seed can be had again.
    let mut plain = build_without_source(&scene, "rapier", 1);
    let e = plain.reset(Some(4)).unwrap_err().to_string();
    assert_eq!(
        e,
        "cannot reset with seed 4: this Environment was not given a scene source (only a reset with the scene's own seed is possible)"
    );
    plain.reset(None).unwrap();
}
