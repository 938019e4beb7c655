//! Embedding ssx in a program of your own (docs/embedding.md): load a scene as `ssxd run`
//! does, step it, read its bodies and readings, start it over.
//!
//! `cargo run --release --example embed -- artifacts/scenes/dispersal.json 500`

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ssx_artifacts::Scene;
use ssx_core::{
    Environment, LatePolicy, Mode, MonotonicClock, NullRenderEngine, PluginRegistry, SsxError,
};

/// Runs `steps` steps of `scene`, starts over and runs them again; returns robot_0's position
/// after each run (the same to the bit).
fn run(scene: &Path, steps: u64) -> Result<[[f64; 3]; 2], SsxError> {
    let mut registry = PluginRegistry::new();
    ssx_engines::register(&mut registry); // the engines; plugins come from their libraries
    let scene = Scene::load(scene, &registry)?;
    let mut env = Environment::build(
        scene.config(2, Mode::Fast, LatePolicy::CatchUp, false),
        &registry,
        &scene.extensions,
        &scene.artifacts,
        Box::new(NullRenderEngine::default()),
        Arc::new(MonotonicClock::new(Duration::from_micros(500))),
    )?;
    // A reset with a new seed reads the scene again: tell the Environment where it is.
    env.set_scene_source(Box::new(scene.source(None, &registry)));
    let mut out = [[0.0; 3]; 2];
    for slot in &mut out {
        for _ in 0..steps {
            env.step()?;
        }
        let body = env
            .artifact("robot_0")
            .expect("the scene has robot_0")
            .bodies
            .start;
        let p = env.states()[body as usize].pose.translation.vector;
        *slot = [p.x, p.y, p.z];
        if let Some(r) = env.reading("robot_0", "range") {
            println!(
                "t = {:.2} s: robot_0 at {:.3?}, range ring {:.2?}",
                env.sim_time(),
                p,
                r.values()
            );
        }
        env.reset(None)?;
    }
    Ok(out)
}

fn main() -> Result<(), SsxError> {
    let args: Vec<String> = std::env::args().collect();
    let scene = args
        .get(1)
        .map_or("artifacts/scenes/dispersal.json", String::as_str);
    let steps = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(500);
    let [a, b] = run(Path::new(scene), steps)?;
    assert_eq!(a, b, "a reset world runs the same again");
    println!("the same after a reset: {a:?}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn the_example_runs_and_repeats_itself_after_a_reset() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        // The plugin libraries are the workspace's build, not next to this test's executable.
        ssx_core::abi::set_program_dir(ssx_tests::rust_plugin_dir());
        let [a, b] = super::run(&root.join("artifacts/scenes/dispersal.json"), 200).unwrap();
        assert_eq!(a, b);
        // The robot moved from its place on the grid (-2.7, -2.7).
        assert!((a[0] + 2.7).hypot(a[1] + 2.7) > 0.05, "{a:?}");
    }
}
