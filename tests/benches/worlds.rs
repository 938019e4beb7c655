//! A batch of worlds stepped from Rust (ssx-worlds), for profiles without Python in the way.
//!
//!     cargo build --release --workspace
//!     SSX_PLUGIN_PATH=target/release cargo bench --bench worlds -- SCENE WORLDS WORKERS SECONDS [STEPS_PER_CALL]
//!
//! Prints the build time, the heap a world takes once built and stepped (the batch's bytes in
//! use by glibc's count, `mallinfo2`, over the worlds: what they share is in it once),
//! world-steps a second of `Worlds::step`, and the time of a reset of one world in eight, with
//! their own seeds and with new ones. `SSX_BENCH_HEAP_ONLY=1` stops after the heap's figure,
//! the worlds left unfreed for a heap profiler's list of leaks.

use std::path::PathBuf;
use std::time::Instant;

use ssx_worlds::{BatchOptions, Worlds};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [scene, worlds, workers, seconds, rest @ ..] = args.as_slice() else {
        eprintln!("usage: worlds SCENE WORLDS WORKERS SECONDS [STEPS_PER_CALL]");
        std::process::exit(2);
    };
    let count: usize = worlds.parse().expect("WORLDS");
    let per_call: u64 = rest
        .first()
        .map_or(1, |s| s.parse().expect("STEPS_PER_CALL"));
    let o = BatchOptions {
        workers: workers.parse().expect("WORKERS"),
        ..BatchOptions::default()
    };
    let heap_before = heap_in_use();
    let t0 = Instant::now();
    let mut batch = Worlds::new(&PathBuf::from(scene), count, &o).expect("the batch builds");
    println!(
        "built {count} worlds in {:.3} s",
        t0.elapsed().as_secs_f64()
    );
    batch.step(5).unwrap();
    println!(
        "heap a world, built and stepped: {:.0} bytes",
        (heap_in_use() - heap_before) as f64 / count as f64
    );
    if std::env::var_os("SSX_BENCH_HEAP_ONLY").is_some() {
        // Out without freeing the worlds: heaptrack's list of what was never freed is then
        // what they hold (`heaptrack_print --print-leaks`).
        std::process::exit(0);
    }
    let limit: f64 = seconds.parse().expect("SECONDS");
    let t0 = Instant::now();
    let mut calls = 0u64;
    while t0.elapsed().as_secs_f64() < limit {
        batch.step(per_call).unwrap();
        calls += 1;
    }
    let rate = (calls * per_call) as f64 * count as f64 / t0.elapsed().as_secs_f64();
    println!("{rate:.0} world-steps/s ({} workers)", batch.workers());
    let which: Vec<usize> = (0..count).step_by(8).collect();
    let t0 = Instant::now();
    for _ in 0..10 {
        batch.reset(&which, None).unwrap();
    }
    println!(
        "reset of {} worlds: {:.2} ms",
        which.len(),
        t0.elapsed().as_secs_f64() * 100.0
    );
    // As a learner's episodes start: each world with a seed it has not had (a seeded scene is
    // read and checked again for each).
    let t0 = Instant::now();
    for round in 1..=10u64 {
        let seeds: Vec<u64> = which
            .iter()
            .map(|&k| (k as u64).wrapping_add(round * count as u64))
            .collect();
        batch.reset(&which, Some(&seeds)).unwrap();
    }
    println!(
        "reset of {} worlds with new seeds: {:.2} ms",
        which.len(),
        t0.elapsed().as_secs_f64() * 100.0
    );
}

/// The bytes the program's heap holds in use now (glibc's count, `mallinfo2().uordblks`).
fn heap_in_use() -> i64 {
    // SAFETY: `mallinfo2` only reads the allocator's counters.
    unsafe { libc::mallinfo2() }.uordblks as i64
}
