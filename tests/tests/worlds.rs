//! A batch of worlds (ssx-worlds): every world is the run a lone world of the scene with its
//! seed gives, bit for bit, on one worker or two, with worlds reset around it.

use ssx_tests::{registry, repo_root, state_bits};
use ssx_worlds::open::{Options, open};
use ssx_worlds::{BatchOptions, Worlds, WorldsError};

fn dispersal() -> std::path::PathBuf {
    registry(); // the plugin libraries, built
    repo_root().join("artifacts/scenes/dispersal.json")
}

fn lone(seed: u64) -> ssx_core::Environment {
    let o = Options {
        seed: Some(seed),
        ..Options::default()
    };
    open(&dispersal(), &o).expect("opens").env
}

#[test]
fn each_world_of_a_batch_equals_a_lone_world_with_its_seed() {
    for workers in [1, 2] {
        let o = BatchOptions {
            workers,
            seed: Some(40),
            ..BatchOptions::default()
        };
        let mut batch = Worlds::new(&dispersal(), 3, &o).expect("builds");
        assert_eq!(batch.seeds(), [40, 41, 42]);
        assert!(
            batch.scene_shared(),
            "the grid's poses do not depend on the seed"
        );
        let mut alone: Vec<_> = (40..43).map(lone).collect();
        let step_all = |alone: &mut Vec<ssx_core::Environment>| {
            for env in alone {
                for _ in 0..150 {
                    env.step().unwrap();
                }
            }
        };
        batch.step(150).unwrap();
        step_all(&mut alone);
        // World 1 starts over with seed 77 while worlds 0 and 2 go on.
        batch.reset(&[1], Some(&[77])).unwrap();
        alone[1].reset(Some(77)).unwrap();
        batch.step(150).unwrap();
        step_all(&mut alone);
        for (k, env) in alone.iter().enumerate() {
            assert_eq!(batch.world(k).steps(), env.steps(), "world {k}");
            assert_eq!(
                state_bits(batch.world(k).states()),
                state_bits(env.states()),
                "world {k} with {workers} workers"
            );
        }
        // The worlds differ from one another (their sensors' noise is seeded).
        assert_ne!(
            state_bits(batch.world(0).states()),
            state_bits(batch.world(2).states())
        );
    }
}

#[test]
fn bad_arguments_name_what_is_wrong() {
    let o = BatchOptions::default();
    let mut batch = Worlds::new(&dispersal(), 2, &o).unwrap();
    let e = batch.reset(&[0, 0], None).unwrap_err();
    assert_eq!(e.to_string(), "world 0 is named twice in one reset");
    let e = batch.reset(&[5], None).unwrap_err();
    assert_eq!(e.to_string(), "no world 5 to reset: the batch has 2");
    let e = batch.artifact_index("robot_9x").unwrap_err();
    assert_eq!(
        e.to_string(),
        "no artifact named 'robot_9x' (did you mean 'robot_9'?)"
    );
    let e = batch.sensor_artifacts("rnage").unwrap_err();
    assert_eq!(
        e.to_string(),
        "no artifact carries a sensor 'rnage' (sensors: range; did you mean 'range'?)"
    );
    let robots: Vec<usize> = (0..2)
        .map(|i| batch.artifact_index(&format!("robot_{i}")).unwrap())
        .collect();
    let e = batch
        .command_many(&robots, &[0.0; 6], 2, "artifacts/{}/cmd")
        .unwrap_err();
    assert!(matches!(e, WorldsError::Argument(_)), "{e}");
    assert_eq!(
        e.to_string(),
        "values has 6 numbers; 2 worlds × 2 robots × 2 need 8"
    );
    assert!(matches!(
        Worlds::new(&dispersal(), 0, &o),
        Err(WorldsError::Argument(_))
    ));
}
