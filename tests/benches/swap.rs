//! Swapping a driver library in a running world (issue 24), release build, real time at 1 kHz
//! on this machine's two cores: for 1, 100 and 1000 instances of the swapped C driver
//! (tests/fixtures/c/swap.c, v1 and v2 copied over the file in turn), `SWAPS` swaps each:
//!
//! - from the request to the switch (copy, dlopen and every `create` on the swap thread, then
//!   the next step boundary);
//! - the stepping thread's part (exchanging the instances) and the compute time of the step
//!   that switched, against the median of the 50 steps before it;
//! - deadline misses in the swap step and the step after it.
//!
//! ```text
//! cargo bench -p ssx-tests --bench swap     # writes target/bench/swap.json
//! ```

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use ssx_core::{Mode, MonotonicClock, PaceOutcome};
use ssx_tests::bench::percentiles;
use ssx_tests::{Workspace, build_with, c_library, pusher_scene, registry, repo_root};

const SWAPS: usize = 20;

fn run(count: usize) -> Value {
    let ws = Workspace::new();
    let replicate =
        format!(r#", "replicate": {{ "grid": {{ "count": {count}, "spacing": [1, 1] }} }}"#);
    let (scene, lib) = pusher_scene(&ws, "swap_x", "", &replicate);
    let clock = Arc::new(MonotonicClock::new(Duration::from_micros(500)));
    let mut env = build_with(
        &scene,
        &registry(),
        2,
        Mode::Realtime { factor: 1.0 },
        false,
        clock,
    )
    .expect("build");
    let mut totals: Vec<f64> = Vec::new();
    let step = |env: &mut ssx_core::Environment, totals: &mut Vec<f64>| {
        let r = env.step().expect("step");
        totals.push(r.times.total.as_secs_f64() * 1e6);
        matches!(r.outcome, PaceOutcome::Missed { .. })
    };
    for _ in 0..500 {
        step(&mut env, &mut totals);
    }
    let (mut waited, mut switch, mut swap_step, mut before, mut missed) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), 0u64);
    for n in 0..SWAPS {
        let build = if n % 2 == 0 { "swap_y" } else { "swap_x" };
        std::fs::write(&lib, std::fs::read(c_library(build)).unwrap()).unwrap();
        for _ in 0..50 {
            step(&mut env, &mut totals);
        }
        let mut window: Vec<f64> = totals[totals.len() - 50..].to_vec();
        window.sort_by(f64::total_cmp);
        before.push(window[25]);
        env.request_swap(Path::new("libpusher.so")).unwrap();
        let mut misses = [false; 2];
        loop {
            misses[0] = step(&mut env, &mut totals);
            if env.swaps().len() > n {
                break;
            }
        }
        let event = env.swaps()[n].clone();
        let done = event.result.expect("swapped");
        assert_eq!(done.instances, count);
        swap_step.push(*totals.last().unwrap());
        misses[1] = step(&mut env, &mut totals);
        missed += misses.iter().filter(|m| **m).count() as u64;
        waited.push(done.after_request.as_secs_f64() * 1e6);
        switch.push(done.switch.as_secs_f64() * 1e6);
    }
    let summary = env.summary();
    json!({
        "instances": count,
        "swaps": SWAPS,
        "request_to_switch": percentiles(waited),
        "switch": percentiles(switch),
        "swap_step_compute": percentiles(swap_step),
        "median_step_before": percentiles(before),
        "misses_in_swap_and_next_step": missed,
        "run": {"steps": summary.steps, "deadline_misses": summary.deadline_misses},
    })
}

fn main() {
    let mut out = Vec::new();
    for count in [1, 100, 1000] {
        let r = run(count);
        println!("{r}");
        out.push(r);
    }
    let dir = repo_root().join("target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("swap.json");
    std::fs::write(&path, serde_json::to_string_pretty(&out).unwrap()).unwrap();
    println!("written to {}", path.display());
}
