//! No allocation on the stepping threads in steady state, through every layer a hardware run
//! uses: the core, Rapier, the plugin ABI, the standard sensors, the teleop driver and the Zenoh
//! extension (its `after_step`, `control` and the `read`/`publish` services), with a real Zenoh
//! client feeding the handle at 1 kHz.
//!
//! This test binary interposes `malloc` and friends (an executable's definitions take precedence
//! over libc's for every shared library, the plugin libraries included) and records a backtrace
//! of every call made on threads that have switched counting on: the stepping thread and the
//! pool's workers.
//!
//! Rapier 0.36 itself allocates in its step (about three allocations and three frees a step
//! here: the solver's per-island `StageSync`, its modified-body list, and a debug-build
//! validation of the contact graph). That is outside ssx's reach; the test asserts that every
//! allocation and free on the stepping threads happens inside `rapier3d::`, and none anywhere
//! else, and it bounds Rapier's count so a regression there shows too.

use std::backtrace::Backtrace;
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ssx_core::{Mode, MonotonicClock};
use ssx_tests::{Workspace, build_with, free_port, hil_scene, registry, rust_plugin_dir};
use zenoh::Wait;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    /// Inside `note`: the backtrace's own allocations are not counted.
    static NOTING: Cell<bool> = const { Cell::new(false) };
}
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static FREES: AtomicU64 = AtomicU64::new(0);
static TRACES: Mutex<Vec<Backtrace>> = Mutex::new(Vec::new());

fn note(counter: &AtomicU64) {
    if COUNTING.with(Cell::get) && !NOTING.with(Cell::get) {
        NOTING.with(|n| n.set(true));
        counter.fetch_add(1, Ordering::Relaxed);
        let trace = Backtrace::force_capture();
        TRACES.lock().unwrap_or_else(|e| e.into_inner()).push(trace);
        NOTING.with(|n| n.set(false));
    }
}

unsafe extern "C" {
    fn __libc_malloc(size: usize) -> *mut c_void;
    fn __libc_calloc(n: usize, size: usize) -> *mut c_void;
    fn __libc_realloc(p: *mut c_void, size: usize) -> *mut c_void;
    fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
    fn __libc_free(p: *mut c_void);
}

// The C allocator's entry points, interposed. Each forwards to glibc's own implementation with
// the same arguments; the only addition is the counting in `note`.
/// # Safety
/// The C contract of `malloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    note(&ALLOCATIONS);
    unsafe { __libc_malloc(size) }
}
/// # Safety
/// The C contract of `calloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
    note(&ALLOCATIONS);
    unsafe { __libc_calloc(n, size) }
}
/// # Safety
/// The C contract of `realloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
    note(&ALLOCATIONS);
    unsafe { __libc_realloc(p, size) }
}
/// # Safety
/// The C contract of `memalign`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memalign(align: usize, size: usize) -> *mut c_void {
    note(&ALLOCATIONS);
    unsafe { __libc_memalign(align, size) }
}
/// # Safety
/// The C contract of `aligned_alloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aligned_alloc(align: usize, size: usize) -> *mut c_void {
    note(&ALLOCATIONS);
    unsafe { __libc_memalign(align, size) }
}
/// # Safety
/// The C contract of `posix_memalign`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> i32 {
    note(&ALLOCATIONS);
    let p = unsafe { __libc_memalign(align, size) };
    if p.is_null() {
        return 12; // ENOMEM
    }
    unsafe { *out = p };
    0
}
/// # Safety
/// The C contract of `free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn free(p: *mut c_void) {
    if !p.is_null() {
        note(&FREES);
    }
    unsafe { __libc_free(p) }
}

/// The tests share the counters: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Counts allocations on the stepping threads over `steps` steps; returns every trace taken.
fn count_allocations(env: &mut ssx_core::Environment, steps: u64) -> (u64, u64, Vec<Backtrace>) {
    ALLOCATIONS.store(0, Ordering::Relaxed);
    FREES.store(0, Ordering::Relaxed);
    TRACES.lock().unwrap_or_else(|e| e.into_inner()).clear();
    env.on_stepping_threads(&|_| COUNTING.with(|c| c.set(true)));
    for _ in 0..steps {
        env.step().expect("step");
        env.poll_control().expect("control");
    }
    env.on_stepping_threads(&|_| COUNTING.with(|c| c.set(false)));
    (
        ALLOCATIONS.load(Ordering::Relaxed),
        FREES.load(Ordering::Relaxed),
        std::mem::take(&mut *TRACES.lock().unwrap_or_else(|e| e.into_inner())),
    )
}

/// Every trace inside Rapier, and Rapier's own count bounded (`per_step` a step: its solver
/// allocates per awake island).
fn only_rapier(allocations: u64, frees: u64, traces: &[Backtrace], steps: u64, per_step: u64) {
    let outside: Vec<String> = traces
        .iter()
        .map(|t| t.to_string())
        // A frame of Rapier's by its function's path, or (for frames inlined into ours: the
        // dependencies keep line tables only) by its source file's.
        .filter(|t| !t.contains("rapier3d::") && !t.contains("/rapier3d-"))
        .collect();
    assert!(
        outside.is_empty(),
        "{} of {} allocations and frees on the stepping threads were outside Rapier; the first:\n{}",
        outside.len(),
        traces.len(),
        outside[0]
    );
    eprintln!(
        "{allocations} allocations and {frees} frees in {steps} steady-state steps, all inside rapier3d"
    );
    assert!(
        allocations <= per_step * steps && frees <= per_step * steps,
        "Rapier allocated more than before: {allocations} allocations, {frees} frees in {steps} steps"
    );
}

#[test]
fn a_teleoperated_run_allocates_nothing_on_the_stepping_threads_in_steady_state() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    rust_plugin_dir();
    let ws = Workspace::new();
    let port = free_port();
    let prefix = "ssx/test-hot";
    let scene = hil_scene(&ws, "teleop", port, prefix, |s| {
        // Every stream at every step: the most the stepping thread ever publishes.
        let d = &mut s["extensions"][0]["descriptor"];
        d["clock"]["every"] = serde_json::json!(1);
        d["artifacts"]["uav*"]["state"]["every"] = serde_json::json!(1);
        d["stats"]["period"] = serde_json::json!(0.25);
    });
    let clock = Arc::new(MonotonicClock::new(Duration::from_micros(500)));
    let mut env = build_with(
        std::path::Path::new(&scene),
        &registry(),
        2,
        Mode::Realtime { factor: 1.0 },
        true,
        clock,
    )
    .expect("build");

    // The handle, at 1 kHz from a client thread, for as long as the test steps.
    let done = Arc::new(AtomicBool::new(false));
    let stop = Arc::clone(&done);
    let client = std::thread::spawn(move || {
        let session = zenoh::open(ssx_tests::daemon::client_config(port))
            .wait()
            .expect("connect to the in-process extension");
        let force = Arc::new(AtomicU64::new(0));
        let f = Arc::clone(&force);
        let _sub = session
            .declare_subscriber(format!("{prefix}/teleop/force"))
            .callback(move |_| {
                f.fetch_add(1, Ordering::Relaxed);
            })
            .wait()
            .unwrap();
        let handle = session
            .declare_publisher(format!("{prefix}/teleop/handle"))
            .wait()
            .unwrap();
        let t0 = Instant::now();
        let mut k = 0u32;
        while !stop.load(Ordering::Relaxed) && t0.elapsed() < Duration::from_secs(60) {
            let t = t0.elapsed().as_secs_f64();
            let (s, c) = (t * 1.5).sin_cos();
            handle
                .put(format!(
                    r#"{{"position": [{}, {}, 0.0]}}"#,
                    0.05 * c,
                    0.05 * s
                ))
                .wait()
                .unwrap();
            k += 1;
            let next = t0 + Duration::from_millis(u64::from(k));
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        force.load(Ordering::Relaxed)
    });

    // Warm-up: take-off, first-step subscriptions, buffers grown to size.
    for _ in 0..3000 {
        env.step().expect("step");
        env.poll_control().expect("control");
    }
    let (allocations, frees, traces) = count_allocations(&mut env, STEPS);
    done.store(true, Ordering::Relaxed);
    let feedback = client.join().unwrap();
    let lead = ssx_tests::state_of(&env, "uav_lead");
    drop(env);

    assert!(
        feedback > 1000,
        "the leader published feedback every step: {feedback}"
    );
    assert!(
        lead.pose.translation.vector.z > 0.5,
        "the group flew: {:?}",
        lead.pose.translation.vector
    );
    only_rapier(allocations, frees, &traces, STEPS, 4);
}

#[test]
fn a_run_with_the_ros2_node_allocates_nothing_on_the_stepping_threads_in_steady_state() {
    use ssx_ros2::graph::data_key;
    use ssx_ros2::msgs::{TWIST, Twist, Vector3};
    use ssx_ros2::{Attachment, cdr, types::type_hash};
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    rust_plugin_dir();
    let ws = Workspace::new();
    let port = free_port();
    let scene = hil_scene(&ws, "ros2", port, "ssx/test-hot-ros2", |s| {
        // Every ROS stream at every step: clock, tf and odometry at 100 Hz.
        let r = &mut s["extensions"][0]["descriptor"]["ros2"];
        r["tf_rate"] = serde_json::json!(100);
        r["odom_rate"] = serde_json::json!(100);
    });
    let clock = Arc::new(MonotonicClock::new(Duration::from_micros(500)));
    let mut env = build_with(
        std::path::Path::new(&scene),
        &registry(),
        2,
        Mode::Realtime { factor: 1.0 },
        true,
        clock,
    )
    .expect("build");
    // A ROS 2 controller: cmd_vel at 50 Hz, /clock counted.
    let done = Arc::new(AtomicBool::new(false));
    let stop = Arc::clone(&done);
    let client = std::thread::spawn(move || {
        let session = zenoh::open(ssx_tests::daemon::client_config(port))
            .wait()
            .expect("connect");
        let ticks = Arc::new(AtomicU64::new(0));
        let t = Arc::clone(&ticks);
        let _sub = session
            .declare_subscriber("0/clock/**")
            .callback(move |_| {
                t.fetch_add(1, Ordering::Relaxed);
            })
            .wait()
            .unwrap();
        let key = data_key(0, "/rover/cmd_vel", TWIST.name, &type_hash(&TWIST));
        let t0 = Instant::now();
        let mut n = 0;
        while !stop.load(Ordering::Relaxed) && t0.elapsed() < Duration::from_secs(60) {
            n += 1;
            let mut payload = Vec::new();
            let angular = 0.3 * (n as f64 * 0.05).sin();
            cdr::encode(
                &Twist {
                    linear: Vector3 {
                        x: 0.2,
                        y: 0.0,
                        z: 0.0,
                    },
                    angular: Vector3 {
                        x: 0.0,
                        y: 0.0,
                        z: angular,
                    },
                },
                &mut payload,
            );
            let attachment = Attachment {
                sequence_number: n,
                source_timestamp: 0,
                source_gid: [1; 16],
            };
            session
                .put(&key, payload)
                .attachment(attachment.encode().to_vec())
                .wait()
                .unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
        ticks.load(Ordering::Relaxed)
    });
    // Warm-up: the first step's topics, subscriptions and reserved buffers.
    for _ in 0..300 {
        env.step().expect("step");
        env.poll_control().expect("control");
    }
    let steps = 500;
    let (allocations, frees, traces) = count_allocations(&mut env, steps);
    done.store(true, Ordering::Relaxed);
    let ticks = client.join().unwrap();
    let rover = ssx_tests::state_of(&env, "rover");
    drop(env);
    assert!(ticks > 400, "the client got /clock: {ticks}");
    assert!(
        rover.pose.translation.x > -1.4,
        "cmd_vel drove the rover: {:?}",
        rover.pose.translation
    );
    // Five robots drive apart (five islands); 4 a step measured.
    only_rapier(allocations, frees, &traces, steps, 8);
}

/// Steady-state steps counted.
const STEPS: u64 = 1000;
