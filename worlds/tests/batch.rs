//! A batch of worlds against lone worlds, bit for bit, on a scene that needs no plugin library:
//! crates dropped at random places drawn from the seed (so the scene is read again for each
//! seed and the worlds differ) beside a wall, on each engine. The Python tests
//! (python/tests/test_worlds.py) do the same with drivers, sensors and commands.

use std::path::{Path, PathBuf};

use ssx_core::Shared;
use ssx_worlds::open::{Options, open};
use ssx_worlds::{BatchOptions, Worlds, WorldsError};

fn scene(dir: &Path) -> PathBuf {
    scene_on(dir, "rapier")
}

fn scene_on(dir: &Path, engine: &str) -> PathBuf {
    let library = Path::new(env!("CARGO_MANIFEST_DIR")).join("../artifacts/library");
    let text = serde_json::json!({
        "name": "crates",
        "timestep": 0.01,
        "seed": 7,
        "engine": engine,
        "artifacts": [
            { "name": "ground", "artifact": library.join("ground.json") },
            { "name": "wall", "artifact": library.join("wall.json"), "pose": { "position": [0, 1.5, 0] } },
            { "name": "crate", "artifact": library.join("crate.json"),
              "replicate": { "random": { "count": 6, "min": [-1, -1, 0.5], "max": [1, 1, 2], "random_yaw": true } } }
        ]
    });
    let path = dir.join(format!("crates-{engine}.json"));
    std::fs::write(&path, text.to_string()).unwrap();
    path
}

fn bits(env: &ssx_core::Environment) -> Vec<u64> {
    env.states()
        .iter()
        .flat_map(|s| {
            let t = s.pose.translation.vector;
            let q = s.pose.rotation.coords;
            [
                t.x, t.y, t.z, q.x, q.y, q.z, q.w, s.linvel.x, s.linvel.z, s.angvel.y,
            ]
        })
        .map(f64::to_bits)
        .collect()
}

fn lone(path: &Path, seed: u64) -> ssx_core::Environment {
    let o = Options {
        seed: Some(seed),
        ..Options::default()
    };
    open(path, &o).expect("opens").env
}

fn step(env: &mut ssx_core::Environment, n: usize) {
    for _ in 0..n {
        env.step().unwrap();
    }
}

#[test]
fn each_world_equals_a_lone_world_with_its_seed_whatever_the_workers_and_resets() {
    let dir = tempfile::tempdir().unwrap();
    for (engine, workers) in [
        ("rapier", 1),
        ("rapier", 2),
        ("rapier", 3),
        ("kinematic", 2),
    ] {
        let path = scene_on(dir.path(), engine);
        let o = BatchOptions {
            workers,
            seed: Some(40),
            ..BatchOptions::default()
        };
        let mut batch = Worlds::new(&path, 4, &o).expect("builds");
        assert!(
            !batch.scene_shared(),
            "random places are drawn from the seed"
        );
        assert_eq!(batch.seeds(), [40, 41, 42, 43]);
        let mut alone: Vec<_> = (40..44).map(|s| lone(&path, s)).collect();
        batch.step(60).unwrap();
        alone.iter_mut().for_each(|e| step(e, 60));
        // World 1 starts over with seed 77 and world 3 with its own; 0 and 2 go on.
        batch.reset(&[1, 3], Some(&[77, 43])).unwrap();
        alone[1].reset(Some(77)).unwrap();
        alone[3].reset(Some(43)).unwrap();
        // Only worlds 0 and 1 step for a while.
        batch
            .step_some(25, Some(&[true, true, false, false]))
            .unwrap();
        step(&mut alone[0], 25);
        step(&mut alone[1], 25);
        batch.step(40).unwrap();
        alone.iter_mut().for_each(|e| step(e, 40));
        for (k, env) in alone.iter().enumerate() {
            assert_eq!(batch.world(k).steps(), env.steps(), "world {k}");
            assert_eq!(
                bits(batch.world(k)),
                bits(env),
                "world {k}, {workers} workers, {engine}"
            );
        }
        assert_ne!(
            bits(batch.world(0)),
            bits(batch.world(2)),
            "seeds 40 and 42 differ"
        );
        assert_eq!(batch.seeds(), [40, 77, 42, 43]);
        // What the worlds hold once between them, resets included: the ground, the wall and
        // the catalog are world 0's copies, and the kinematic engine's static bodies; the six
        // crates, placed by each seed, are world 0's but for their poses.
        let first = batch.world(0).commons();
        let shared = Shared {
            artifacts: 2,
            placed: 6,
            catalog: true,
            engine: engine == "kinematic",
        };
        for k in 1..4 {
            assert_eq!(
                batch.world(k).shared_with(&first),
                shared,
                "world {k}, {engine}"
            );
        }
        let nothing = Shared {
            artifacts: 0,
            placed: 0,
            catalog: false,
            engine: false,
        };
        assert_eq!(alone[0].shared_with(&first), nothing);
    }
}

#[test]
fn bad_arguments_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let path = scene(dir.path());
    let o = BatchOptions::default();
    let mut batch = Worlds::new(&path, 2, &o).unwrap();
    let e = batch.reset(&[0, 0], None).unwrap_err();
    assert_eq!(e.to_string(), "world 0 is named twice in one reset");
    let e = batch.reset(&[5], None).unwrap_err();
    assert_eq!(e.to_string(), "no world 5 to reset: the batch has 2");
    let e = batch.reset(&[0], Some(&[1, 2])).unwrap_err();
    assert_eq!(e.to_string(), "2 seeds for 1 worlds to reset");
    let e = batch.step_some(1, Some(&[true])).unwrap_err();
    assert_eq!(e.to_string(), "mask has 1 values for 2 worlds");
    let e = batch.artifact_index("crate_9").unwrap_err();
    assert_eq!(
        e.to_string(),
        "no artifact named 'crate_9' (did you mean 'crate_0'?)"
    );
    let e = batch.sensor_artifacts("range").unwrap_err();
    assert_eq!(
        e.to_string(),
        "no artifact carries a sensor 'range' (no artifact has a sensor)"
    );
    let crates: Vec<usize> = (0..2)
        .map(|i| batch.artifact_index(&format!("crate_{i}")).unwrap())
        .collect();
    let e = batch
        .command_many(&crates, &[0.0; 6], 2, "artifacts/{}/cmd")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "values has 6 numbers; 2 worlds × 2 robots × 2 need 8"
    );
    let mut out = vec![0.0; 5];
    let e = batch.states_into(None, &mut out).unwrap_err();
    assert!(matches!(e, WorldsError::Argument(_)));
    assert_eq!(
        e.to_string(),
        "the states need 208 values (2 worlds × 104), the buffer has 5"
    );
    assert!(matches!(
        Worlds::new(&path, 0, &o),
        Err(WorldsError::Argument(_))
    ));
}

/// `act` without commands or sensors (the scene has none): its steps with a mask and its
/// distances are `step_some` and `nearest_into`'s, to the bit; bad buffers are named. The
/// Python tests check it with commands and observations.
#[test]
fn act_steps_and_measures_as_the_separate_calls_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = scene(dir.path());
    let o = BatchOptions {
        workers: 2,
        seed: Some(3),
        ..BatchOptions::default()
    };
    let (mut a, mut b) = (
        Worlds::new(&path, 5, &o).unwrap(),
        Worlds::new(&path, 5, &o).unwrap(),
    );
    let crates: Vec<usize> = (0..6)
        .map(|i| a.artifact_index(&format!("crate_{i}")).unwrap())
        .collect();
    let mask = [true, false, true, true, false];
    let (mut near_a, mut near_b) = (vec![0.0; 30], vec![0.0; 30]);
    for round in 0..4 {
        let act = ssx_worlds::Act {
            artifacts: &crates,
            commands: None,
            steps: 7,
            mask: (round % 2 == 0).then_some(&mask[..]),
            observe: None,
            nearest: Some(&mut near_a),
            reward: None,
            task: None,
        };
        assert_eq!(a.act(act).unwrap(), 0);
        b.step_some(7, (round % 2 == 0).then_some(&mask[..]))
            .unwrap();
        b.nearest_into(&crates, &mut near_b).unwrap();
        let as_bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(as_bits(&near_a), as_bits(&near_b), "round {round}");
        for k in 0..5 {
            assert_eq!(bits(a.world(k)), bits(b.world(k)), "world {k}");
        }
    }
    assert_eq!(a.world(1).steps(), 14);
    assert_eq!(a.world(0).steps(), 28);
    // One step of every world, measured as asked: each call below is refused before it steps.
    let once = |observe, nearest, reward| ssx_worlds::Act {
        artifacts: &crates,
        commands: None,
        steps: 1,
        mask: None,
        observe,
        nearest,
        reward,
        task: None,
    };
    let mut short = vec![0.0; 29];
    let e = a.act(once(None, Some(&mut short), None)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the distances need 30 values (5 worlds × 6), the buffer has 29"
    );
    let mut obs = vec![0.0; 5 * 6 * 16];
    let observe = ssx_worlds::Observe {
        sensor: "range",
        width: 12,
        out: &mut obs,
    };
    let e = a.act(once(Some(observe), None, None)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "artifact 'crate_0' has no sensor 'range' (no artifact has a sensor)"
    );
    let mut rewards = vec![0.0; 30];
    let dispersal = Some((ssx_worlds::Reward::Dispersal, &mut rewards[..]));
    let e = a.act(once(None, Some(&mut near_a), dispersal)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the dispersal reward reads the observations and the distances: ask for both"
    );
    assert_eq!(a.world(0).steps(), 28, "nothing stepped");
}
