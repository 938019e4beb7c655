//! The C ABI between the ssx host and plugin libraries. ABI version 3.
//!
//! Version 2 added `body_inertia` and `contacts` to [`SsxHostApi`] (for the IMU, the contact
//! sensor and the quadrotor and ground-robot drivers). Version 3 added `stats` and
//! `artifact_name` to [`SsxHostApi`] and an extension's `control` entry to [`SsxPluginDesc`] (for
//! extensions that report live statistics and pause, resume or step the run). Plugins of another
//! version must be rebuilt.
//!
//! Rules (they hold for every type and function here):
//! - A plugin library exports one symbol, `ssx_plugin_entry`, returning a pointer to a static
//!   [`SsxPluginTable`]. The host reads `abi_version` and `struct_size` first and refuses the
//!   library when the version differs or the struct is smaller than it expects.
//! - Whoever allocates frees. The host owns every buffer it hands to a plugin (error buffers,
//!   reading views); a plugin owns its instance and frees it in `destroy`. No allocator crosses.
//! - Strings are NUL-terminated UTF-8. Vectors are `double[3]`, quaternions `double[4]` as
//!   (w, x, y, z), world frame, SI units.
//! - Threads: `create` and `destroy` run on the host's main thread; `step` runs on a worker
//!   thread, never on two threads at once for one instance. An instance must not call the host
//!   from threads of its own.
//! - Phases: a sensor's `step` runs in the sensor phase (it may read the world and publish its
//!   reading); a driver's `step` runs in the driver phase (it may read the world and every
//!   reading, and write commands for its own artifact). Host functions called in the wrong phase
//!   return `SSX_ERR_WRONG_PHASE`.
//! - Every host function takes the `SsxCtx` handed to the current `step` call. It is valid only
//!   during that call and on that thread; any other value returns `SSX_ERR_INVALID_HANDLE`.
//!   Pointers a host function returns (reading views) are valid until that `step` returns.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

/// The ABI version this SDK speaks. A host refuses plugins of any other version.
pub const SSX_ABI_VERSION: u32 = 3;

/// A status code. 0 is success; the values never change meaning.
pub type SsxStatus = i32;
/// Success.
pub const SSX_OK: SsxStatus = 0;
/// An argument was null, not finite, or otherwise malformed.
pub const SSX_ERR_INVALID_ARGUMENT: SsxStatus = 1;
/// The context handle is not the one of the current call on this thread.
pub const SSX_ERR_INVALID_HANDLE: SsxStatus = 2;
/// The function may not be called in the current phase.
pub const SSX_ERR_WRONG_PHASE: SsxStatus = 3;
/// No such artifact, body, sensor, extension or plugin.
pub const SSX_ERR_NOT_FOUND: SsxStatus = 4;
/// An index is out of range.
pub const SSX_ERR_OUT_OF_RANGE: SsxStatus = 5;
/// The plugin failed; its message is in the error buffer.
pub const SSX_ERR_PLUGIN: SsxStatus = 6;
/// A Rust plugin panicked; the panic was caught at the boundary.
pub const SSX_ERR_PANIC: SsxStatus = 7;

/// The message of a status code, as a C string (what the host's `status_message` returns).
pub fn status_message_c(status: SsxStatus) -> &'static std::ffi::CStr {
    match status {
        SSX_OK => c"ok",
        SSX_ERR_INVALID_ARGUMENT => c"invalid argument",
        SSX_ERR_INVALID_HANDLE => {
            c"invalid context handle (not the current call's, or from another thread)"
        }
        SSX_ERR_WRONG_PHASE => c"not allowed in this phase",
        SSX_ERR_NOT_FOUND => c"not found",
        SSX_ERR_OUT_OF_RANGE => c"index out of range",
        SSX_ERR_PLUGIN => c"the plugin reported an error",
        SSX_ERR_PANIC => c"the plugin panicked",
        _ => c"unknown status",
    }
}

/// The message of a status code.
pub fn status_message(status: SsxStatus) -> &'static str {
    status_message_c(status)
        .to_str()
        .unwrap_or("unknown status")
}

/// What a plugin is.
pub type SsxPluginKind = u32;
/// Drives an artifact (one per artifact).
pub const SSX_KIND_DRIVER: SsxPluginKind = 1;
/// Measures for an artifact (any number per artifact).
pub const SSX_KIND_SENSOR: SsxPluginKind = 2;
/// Bridges the simulation to the outside: `create` runs before the engines start, `step` after
/// every step on the main thread (read the world and readings), `destroy` after the engines have
/// stopped. Drivers and sensors reach it by name and use its services through `call`.
pub const SSX_KIND_EXTENSION: SsxPluginKind = 3;

/// Log levels for [`SsxHostApi::log`].
pub type SsxLogLevel = u32;
/// Error.
pub const SSX_LOG_ERROR: SsxLogLevel = 1;
/// Warning.
pub const SSX_LOG_WARN: SsxLogLevel = 2;
/// Information.
pub const SSX_LOG_INFO: SsxLogLevel = 3;
/// Debugging.
pub const SSX_LOG_DEBUG: SsxLogLevel = 4;

/// What [`SsxHostApi::overlay_shapes`] draws.
pub type SsxOverlayKind = u32;
/// Boxes: 6 numbers each, centre and size (m, world frame).
pub const SSX_OVERLAY_BOXES: SsxOverlayKind = 1;
/// Line segments: 6 numbers each, the two ends (m, world frame).
pub const SSX_OVERLAY_LINES: SsxOverlayKind = 2;

/// The handle of the current call, passed to every host function.
pub type SsxCtx = u64;

/// What an extension's `control` asks of the run. See [`SsxControl`].
pub type SsxControlCommand = u32;
/// Nothing: keep the run state.
pub const SSX_CONTROL_NONE: SsxControlCommand = 0;
/// Pause after the current step (no steps until resumed or stepped).
pub const SSX_CONTROL_PAUSE: SsxControlCommand = 1;
/// Resume a paused run (its deadlines restart from now).
pub const SSX_CONTROL_RESUME: SsxControlCommand = 2;
/// While paused: run `steps` more steps, then stay paused. Ignored while running.
pub const SSX_CONTROL_STEP: SsxControlCommand = 3;
/// Start the run over: the world as it was after loading, at step 0, with the scene's seed
/// (every extension's `reset` is called). Paused or running, the run keeps that state.
pub const SSX_CONTROL_RESET: SsxControlCommand = 4;
/// As `SSX_CONTROL_RESET`, with `steps` as the scene's new seed (seeded replica poses, plugin
/// seeds, generated maps without a seed of their own are made anew from it).
pub const SSX_CONTROL_RESET_SEED: SsxControlCommand = 5;

/// A request from an extension to change the run state, written by its `control` entry.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SsxControl {
    /// One of the `SSX_CONTROL_*` commands.
    pub command: SsxControlCommand,
    /// Steps to run, for `SSX_CONTROL_STEP`; the new seed, for `SSX_CONTROL_RESET_SEED`.
    pub steps: u64,
}

/// Live deadline statistics of the run so far, from [`SsxHostApi::stats`]. Times in µs.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SsxStats {
    /// `sizeof(SsxStats)` as the host knows it.
    pub struct_size: u32,
    /// 1 while the run is paused, else 0.
    pub paused: u32,
    /// Steps completed.
    pub steps: u64,
    /// Simulated time (s).
    pub sim_time: f64,
    /// Wall time since the first step started (s), pauses included.
    pub wall_time: f64,
    /// Steps that ended after their deadline.
    pub deadline_misses: u64,
    /// Runs of consecutive missed steps.
    pub miss_bursts: u64,
    /// Waits that returned more than a tenth of a period late while compute was on time.
    pub late_wakeups: u64,
    /// Plugins disabled after a failure.
    pub plugin_faults: u64,
    /// Step compute time: median, 99th percentile, largest.
    pub step_p50_us: f64,
    /// See `step_p50_us`.
    pub step_p99_us: f64,
    /// See `step_p50_us`.
    pub step_max_us: f64,
    /// Lateness past each deadline: 99th percentile and largest.
    pub lateness_p99_us: f64,
    /// See `lateness_p99_us`.
    pub lateness_max_us: f64,
}

/// Pose and velocity of a body, world frame.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SsxBodyState {
    /// Position (m).
    pub position: [f64; 3],
    /// Orientation as a unit quaternion (w, x, y, z).
    pub orientation: [f64; 4],
    /// Linear velocity (m/s).
    pub linear_velocity: [f64; 3],
    /// Angular velocity (rad/s).
    pub angular_velocity: [f64; 3],
}

/// The result of a ray cast.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SsxRayHit {
    /// 1 if something was hit, else 0 and the rest is unspecified.
    pub hit: u32,
    /// The artifact hit.
    pub artifact: u32,
    /// The body hit, as an index into that artifact's bodies.
    pub body: u32,
    /// Distance along the normalised direction (m).
    pub distance: f64,
    /// Surface normal at the hit.
    pub normal: [f64; 3],
}

/// One body touching another after the step.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SsxContact {
    /// The artifact touched.
    pub artifact: u32,
    /// The body touched, as an index into that artifact's bodies.
    pub body: u32,
    /// The mean of the touching points (world frame, m).
    pub point: [f64; 3],
    /// The contact force on the queried body (world frame, N).
    pub force: [f64; 3],
}

/// What a plugin instance is told when it is created.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SsxInit {
    /// `sizeof(SsxInit)` as the host knows it.
    pub struct_size: u32,
    /// The artifact the instance belongs to.
    pub artifact_name: *const c_char,
    /// Index of that artifact (for host functions taking an artifact).
    pub artifact: u32,
    /// A seed for repeatable noise, distinct per instance.
    pub seed: u64,
    /// The simulation timestep (s).
    pub timestep: f64,
    /// How many bodies the artifact has (body indexes run from 0 to `body_count - 1`), so that
    /// `create` can refuse an index a descriptor names past them. Appended: read it only when
    /// `struct_size` covers it (`offsetof(SsxInit, body_count) < struct_size`).
    pub body_count: u32,
    /// How many joints the artifact has. Appended with `body_count`.
    pub joint_count: u32,
    /// The world the instance is made in: one number for every instance of one world, another
    /// for each world of the process (a batch's), so that instances of one world can share work;
    /// 0 for an extension. Appended: read it only when `struct_size` covers it.
    pub world: u64,
    /// The directory of the file the descriptor is written in (empty: none), for a
    /// descriptor's relative paths. Appended with `world`; valid during `create` only.
    pub directory: *const c_char,
}

/// A host-owned buffer a plugin writes an error message into (NUL-terminated, truncated to fit).
#[repr(C)]
#[derive(Debug)]
pub struct SsxErrorBuf {
    /// The buffer.
    pub data: *mut c_char,
    /// Its size in bytes, NUL included.
    pub capacity: usize,
}

/// Functions the host offers plugins. See the module rules for handles and phases.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SsxHostApi {
    /// `sizeof(SsxHostApi)` as the host knows it.
    pub struct_size: u32,
    /// The host's ABI version.
    pub abi_version: u32,
    /// Simulated time (s) and steps completed. Any phase.
    pub time: unsafe extern "C" fn(ctx: SsxCtx, time: *mut f64, step: *mut u64) -> SsxStatus,
    /// Gravity (m/s²). Any phase.
    pub gravity: unsafe extern "C" fn(ctx: SsxCtx, gravity: *mut f64) -> SsxStatus,
    /// Number of artifacts in the world. Any phase.
    pub artifact_count: unsafe extern "C" fn(ctx: SsxCtx, count: *mut u32) -> SsxStatus,
    /// Looks an artifact up by name. Any phase.
    pub artifact_by_name:
        unsafe extern "C" fn(ctx: SsxCtx, name: *const c_char, artifact: *mut u32) -> SsxStatus,
    /// Number of bodies of an artifact. Any phase.
    pub body_count: unsafe extern "C" fn(ctx: SsxCtx, artifact: u32, count: *mut u32) -> SsxStatus,
    /// State of body `body` of `artifact`. Any phase.
    pub body_state: unsafe extern "C" fn(
        ctx: SsxCtx,
        artifact: u32,
        body: u32,
        state: *mut SsxBodyState,
    ) -> SsxStatus,
    /// Mass (kg) of body `body` of `artifact` (0 for static and kinematic bodies). Any phase.
    pub body_mass:
        unsafe extern "C" fn(ctx: SsxCtx, artifact: u32, body: u32, mass: *mut f64) -> SsxStatus,
    /// A force (N, world frame) at the centre of mass of one of the caller's own bodies, for
    /// the next step. Driver phase.
    pub add_force: unsafe extern "C" fn(ctx: SsxCtx, body: u32, force: *const f64) -> SsxStatus,
    /// A force (N) at a point (m), both world frame, on one of the caller's own bodies. Driver
    /// phase.
    pub add_force_at_point: unsafe extern "C" fn(
        ctx: SsxCtx,
        body: u32,
        force: *const f64,
        point: *const f64,
    ) -> SsxStatus,
    /// A torque (N·m, world frame) on one of the caller's own bodies. Driver phase.
    pub add_torque: unsafe extern "C" fn(ctx: SsxCtx, body: u32, torque: *const f64) -> SsxStatus,
    /// The velocity of one of the caller's own kinematic bodies. Driver phase.
    pub set_velocity: unsafe extern "C" fn(
        ctx: SsxCtx,
        body: u32,
        linear: *const f64,
        angular: *const f64,
    ) -> SsxStatus,
    /// Index of the calling artifact's joint called `name`. Any phase.
    pub joint_index:
        unsafe extern "C" fn(ctx: SsxCtx, name: *const c_char, joint: *mut u32) -> SsxStatus,
    /// Drives one of the caller's own motorised revolute joints towards an angle (rad) and angular
    /// velocity (rad/s); the target holds until the next one. Driver phase.
    pub set_joint_target:
        unsafe extern "C" fn(ctx: SsxCtx, joint: u32, position: f64, velocity: f64) -> SsxStatus,
    /// Casts a ray; with `ignore_own` set the caller's own artifact is not hit. Any phase.
    pub ray_cast: unsafe extern "C" fn(
        ctx: SsxCtx,
        origin: *const f64,
        direction: *const f64,
        max_distance: f64,
        ignore_own: u32,
        hit: *mut SsxRayHit,
    ) -> SsxStatus,
    /// The artifacts with a body within `radius` of `center`, the caller's own excluded, in
    /// ascending order. Writes up to `capacity` and sets `count` to the total. Any phase.
    pub neighbours: unsafe extern "C" fn(
        ctx: SsxCtx,
        center: *const f64,
        radius: f64,
        artifacts: *mut u32,
        capacity: usize,
        count: *mut usize,
    ) -> SsxStatus,
    /// Index of `artifact`'s sensor called `name`. Any phase.
    pub sensor_index: unsafe extern "C" fn(
        ctx: SsxCtx,
        artifact: u32,
        name: *const c_char,
        sensor: *mut u32,
    ) -> SsxStatus,
    /// Publishes the calling sensor's reading for this step (copied). Sensor phase.
    pub publish: unsafe extern "C" fn(ctx: SsxCtx, values: *const f64, len: usize) -> SsxStatus,
    /// A read-only view of any artifact's sensor reading of this step: `values` points into the
    /// host's buffer until the current call returns; `step` is the step it was taken at (0:
    /// never). Driver phase.
    pub reading: unsafe extern "C" fn(
        ctx: SsxCtx,
        artifact: u32,
        sensor: u32,
        values: *mut *const f64,
        len: *mut usize,
        step: *mut u64,
    ) -> SsxStatus,
    /// Looks up a simulation extension by name (scene order index). Any phase.
    pub extension:
        unsafe extern "C" fn(ctx: SsxCtx, name: *const c_char, extension: *mut u32) -> SsxStatus,
    /// Calls an extension's service: `request` bytes in, up to `capacity` bytes written to
    /// `response` and the full length to `response_len` (SSX_ERR_OUT_OF_RANGE when it did not
    /// fit). Any phase; services may run on several worker threads at once.
    pub call_extension: unsafe extern "C" fn(
        ctx: SsxCtx,
        extension: u32,
        service: *const c_char,
        request: *const u8,
        request_len: usize,
        response: *mut u8,
        capacity: usize,
        response_len: *mut usize,
    ) -> SsxStatus,
    /// Logs a message. Any phase; with `ctx` 0 (from `create`, `destroy` or a plugin's own thread)
    /// the host attributes it to the plugin the calling thread is running.
    pub log:
        unsafe extern "C" fn(ctx: SsxCtx, level: SsxLogLevel, message: *const c_char) -> SsxStatus,
    /// The message of a status code (a static string). Needs no handle.
    pub status_message: unsafe extern "C" fn(status: SsxStatus) -> *const c_char,
    /// Principal moments of inertia of a body (kg·m², body frame; zero unless dynamic). Any
    /// phase. Since version 2.
    pub body_inertia:
        unsafe extern "C" fn(ctx: SsxCtx, artifact: u32, body: u32, inertia: *mut f64) -> SsxStatus,
    /// The bodies touching body `body` of `artifact` after this step's physics, one entry per
    /// touched body: writes up to `capacity` into `contacts` and the full count into `count`
    /// (call again with more room when `count > capacity`). Any phase. Since version 2.
    pub contacts: unsafe extern "C" fn(
        ctx: SsxCtx,
        artifact: u32,
        body: u32,
        contacts: *mut SsxContact,
        capacity: usize,
        count: *mut usize,
    ) -> SsxStatus,
    /// The run's live deadline statistics. Extensions only (`step` and `control`). Since
    /// version 3.
    pub stats: unsafe extern "C" fn(ctx: SsxCtx, stats: *mut SsxStats) -> SsxStatus,
    /// The name of an artifact: writes up to `capacity` bytes (NUL included) into `name` and the
    /// name's full length (NUL excluded) into `len`; `SSX_ERR_OUT_OF_RANGE` when it did not fit.
    /// Any phase. Since version 3.
    pub artifact_name: unsafe extern "C" fn(
        ctx: SsxCtx,
        artifact: u32,
        name: *mut c_char,
        capacity: usize,
        len: *mut usize,
    ) -> SsxStatus,
    /// Wakes a paused run: it calls every extension's `control` at once instead of at its next
    /// poll (50 ms). For an extension whose own thread has just received a control request.
    /// Needs no handle; any thread, the plugin's own included (the one exception to the rule
    /// against calling the host from them); not from a signal handler. Added to version 3 after
    /// its release: check `struct_size` covers it before calling (`ssx_sdk::Waker` does).
    pub wake: unsafe extern "C" fn(),
    /// Sets one of the calling extension's figures (an exploration share, a count): the run's
    /// summary and stats JSON report its last value as `<extension>.<name>` under `metrics`.
    /// `name`: 1 to 64 bytes of letters, digits, `_` and `.`; `value` finite. Extensions, in
    /// `after_step` only (`SSX_ERR_WRONG_PHASE` elsewhere); at most 64 names an extension.
    /// Added to version 3 after `wake`: check `struct_size` covers it before calling
    /// (`ssx_sdk::Ctx::metric` does).
    pub metric: unsafe extern "C" fn(ctx: SsxCtx, name: *const c_char, value: f64) -> SsxStatus,
    /// Reads figure `index` of every extension's, as of the end of the previous step: writes
    /// `<extension>.<name>` (up to `capacity` bytes, NUL included) into `name`, its full length
    /// into `len` and the value into `value`. `SSX_ERR_NOT_FOUND` when `index` is past the last;
    /// `SSX_ERR_OUT_OF_RANGE` when the name did not fit. Extensions (`after_step`, `control`).
    /// Added to version 3 after `metric`: check `struct_size` first (`ssx_sdk::Ctx::metrics`
    /// does).
    pub metric_at: unsafe extern "C" fn(
        ctx: SsxCtx,
        index: u32,
        name: *mut c_char,
        capacity: usize,
        len: *mut usize,
        value: *mut f64,
    ) -> SsxStatus,
    /// Describes the calling sensor's reading for whoever reads it: a JSON object (UTF-8, at most
    /// [`SSX_MAX_DESCRIPTION`] bytes), e.g. the `range` sensor's ray geometry, so that a bridge
    /// (ROS 2's LaserScan) or a view can interpret the numbers without knowing the sensor's
    /// descriptor. Kept until the sensor describes it again. Sensors, in the sensor phase
    /// (`SSX_ERR_WRONG_PHASE` elsewhere). Added to version 3 after `metric_at`: check
    /// `struct_size` covers it before calling (`ssx_sdk::Ctx::describe` does).
    pub describe: unsafe extern "C" fn(ctx: SsxCtx, json: *const c_char) -> SsxStatus,
    /// The description a sensor gave its reading (see `describe`): `text` points at `len` bytes
    /// of UTF-8 JSON (not NUL-terminated), valid until the current call returns; `len` 0 when the
    /// sensor gave none yet. Drivers and extensions; indexes as for `reading`. Added to version 3
    /// with `describe`.
    pub reading_description: unsafe extern "C" fn(
        ctx: SsxCtx,
        artifact: u32,
        sensor: u32,
        text: *mut *const c_char,
        len: *mut usize,
    ) -> SsxStatus,
    /// The scene's map (an image, a map_server YAML or a generated cave or building), as cells:
    /// writes its size, resolution and origin into `info`, and, when `cells` is not null, its
    /// `width × height` cells into `cells` (row 0 at the origin, rows going +y; 1 = wall,
    /// 0 = free). `SSX_ERR_NOT_FOUND` when the scene has no map; `SSX_ERR_OUT_OF_RANGE` when
    /// `capacity` is smaller than the cells (`info` is written all the same). Drivers and
    /// extensions. Added to version 3 with `describe`.
    pub map: unsafe extern "C" fn(
        ctx: SsxCtx,
        info: *mut SsxMapInfo,
        cells: *mut u8,
        capacity: usize,
    ) -> SsxStatus,
    /// The name of an artifact's sensor `sensor` (an index as for `reading`), as `artifact_name`
    /// writes names; `SSX_ERR_OUT_OF_RANGE` past the artifact's sensors (so counting up from 0
    /// finds how many it has) or when the name did not fit. Any phase. Added to version 3 with
    /// `describe`.
    pub sensor_name: unsafe extern "C" fn(
        ctx: SsxCtx,
        artifact: u32,
        sensor: u32,
        name: *mut c_char,
        capacity: usize,
        len: *mut usize,
    ) -> SsxStatus,
    /// Asks for the drivers and sensors the run created from `library` (as the scene names it,
    /// its absolute path or its file name) to be swapped for a new build of that file while the
    /// run goes on; writes the request's ticket for `swap_outcome`. The build is prepared off the
    /// stepping thread and switched in between two steps. `SSX_ERR_NOT_FOUND` when no driver or
    /// sensor of the run comes from `library`. Extensions' `control` only. Added to version 3.
    pub swap:
        unsafe extern "C" fn(ctx: SsxCtx, library: *const c_char, ticket: *mut u64) -> SsxStatus,
    /// The outcome of swap request `ticket`: `*swapped` 1 when the new build runs, 0 when it
    /// was refused, with the reason (or the library's path when swapped) written as
    /// `artifact_name` writes names. `SSX_ERR_NOT_FOUND` while it is not decided yet.
    /// Extensions. Added to version 3 with `swap`.
    pub swap_outcome: unsafe extern "C" fn(
        ctx: SsxCtx,
        ticket: u64,
        swapped: *mut u32,
        text: *mut c_char,
        capacity: usize,
        len: *mut usize,
    ) -> SsxStatus,
    /// The box around body `body` of `artifact`'s colliders, in the body's own frame: its least
    /// corner into `min` and its greatest into `max` (`double[3]` each; planes are left out).
    /// `SSX_ERR_NOT_FOUND` when the body has no collider with bounds. Any phase. Added to
    /// version 3 with `attach`: check `struct_size` covers it (`ssx_sdk::Ctx` does).
    pub body_bounds: unsafe extern "C" fn(
        ctx: SsxCtx,
        artifact: u32,
        body: u32,
        min: *mut f64,
        max: *mut f64,
    ) -> SsxStatus,
    /// Holds body `body` of `artifact` (a dynamic body, of any other artifact) with the calling
    /// artifact's `carrier`-th body from the next step on, at `position` (`double[3]`) and
    /// `orientation` (`double[4]`, w x y z) in the carrier's frame: it moves with the carrier
    /// and meets the world as part of it (a gripper's catch). Holding a body this artifact holds
    /// already moves it there (lifting). `SSX_ERR_INVALID_ARGUMENT` for a body that is not
    /// dynamic, is the artifact's own or is held by another artifact, or a value that is not
    /// finite; the engine must be able to attach (`docs/engines.md`; else the run logs the
    /// refusal). Driver phase. Added to version 3 with `body_bounds`.
    pub attach: unsafe extern "C" fn(
        ctx: SsxCtx,
        carrier: u32,
        artifact: u32,
        body: u32,
        position: *const f64,
        orientation: *const f64,
    ) -> SsxStatus,
    /// Releases body `body` of `artifact` from the next step on (it falls, and rests on what
    /// is below). `SSX_ERR_NOT_FOUND` when the calling artifact does not hold it. Driver phase.
    /// Added to version 3 with `body_bounds`.
    pub detach: unsafe extern "C" fn(ctx: SsxCtx, artifact: u32, body: u32) -> SsxStatus,
    /// What holds body `body` of `artifact`, as of this step's physics: the carrier's artifact
    /// and body index (within its artifact), and the held body's `position` (`double[3]`) and
    /// `orientation` (`double[4]`, w x y z) in the carrier's frame. `SSX_ERR_NOT_FOUND` when
    /// nothing holds it. Any phase. Added to version 3 with `body_bounds`.
    pub attachment: unsafe extern "C" fn(
        ctx: SsxCtx,
        artifact: u32,
        body: u32,
        carrier_artifact: *mut u32,
        carrier_body: *mut u32,
        position: *mut f64,
        orientation: *mut f64,
    ) -> SsxStatus,
    /// Lays a picture over the floor for views and recordings (an explored map, a heatmap):
    /// `info` gives its size, cell size and where cell (0, 0)'s corner lies (row 0 there, rows
    /// going +y), `rgba` its `width × height` cells of 4 bytes (`len` bytes, copied). Setting
    /// `name` again replaces it; views show it as the `foxglove.Grid` channel
    /// `/overlays/<extension>/<name>`. `name`: 1 to 64 letters, digits, `_`, `.`, `-`; at most
    /// 16 names and 16,777,216 cells; else `SSX_ERR_INVALID_ARGUMENT`. `SSX_ERR_NOT_FOUND` when
    /// nothing in the run shows or keeps overlays (no live view, no recording): an extension
    /// may stop drawing then. Extensions, in `after_step` only (`SSX_ERR_WRONG_PHASE`
    /// elsewhere). Added to version 3 with `body_bounds`.
    pub overlay: unsafe extern "C" fn(
        ctx: SsxCtx,
        name: *const c_char,
        info: *const SsxMapInfo,
        rgba: *const u8,
        len: usize,
    ) -> SsxStatus,
    /// Like `overlay`, shapes instead of cells: `kind` [`SSX_OVERLAY_BOXES`] or
    /// [`SSX_OVERLAY_LINES`], `values` 6 numbers a shape (`len` numbers, copied, up to 100,000
    /// shapes), all in `color` (`float[4]`, RGBA 0 to 1). Views carry it as a
    /// `foxglove.SceneUpdate` on `/overlays/<extension>/<name>`. Extensions, in `after_step`.
    /// Added to version 3 with `overlay`.
    pub overlay_shapes: unsafe extern "C" fn(
        ctx: SsxCtx,
        name: *const c_char,
        kind: SsxOverlayKind,
        values: *const f64,
        len: usize,
        color: *const f32,
    ) -> SsxStatus,
    /// The calling sensor has nothing to measure on the next `steps` steps (a rate divider's
    /// quiet steps): the host does not call its `step` on them, and the reading stays as it is.
    /// Saves a swarm's sensors a call each on every quiet step. Sensors, in the sensor phase
    /// (`SSX_ERR_WRONG_PHASE` elsewhere). Added to version 3 after `overlay_shapes`: check
    /// `struct_size` covers it (`ssx_sdk::Rate::due_idle` does).
    pub idle: unsafe extern "C" fn(ctx: SsxCtx, steps: u32) -> SsxStatus,
    /// Casts `count` rays from one `origin` (`double[3]`) along `directions` (`double[3]` each,
    /// `3 × count` numbers, not necessarily normalised), as `ray_cast` casts each, into `hits`
    /// (`count` records): a range ring's or a camera's rays in one call. With `ignore_own` set
    /// the caller's own artifact is not hit. `SSX_ERR_INVALID_ARGUMENT` when a direction is zero
    /// or not finite, `max_distance` is not finite and positive, or `count` is above
    /// [`SSX_MAX_RAYS`] (nothing is written then). Any phase. Added to version 3 after `idle`:
    /// check `struct_size` covers it (`ssx_sdk::Ctx::ray_cast_many` falls back to `ray_cast`).
    pub ray_cast_many: unsafe extern "C" fn(
        ctx: SsxCtx,
        origin: *const f64,
        directions: *const f64,
        count: usize,
        max_distance: f64,
        ignore_own: u32,
        hits: *mut SsxRayHit,
    ) -> SsxStatus,
    /// The colour body `body` of `artifact` is drawn in (`float[4]`, RGBA 0 to 1: its first
    /// visual's, or the scene's default grey when it has none), for cameras that shade what
    /// their rays hit. Any phase. Added to version 3 with `ray_cast_many`.
    pub body_color:
        unsafe extern "C" fn(ctx: SsxCtx, artifact: u32, body: u32, rgba: *mut f32) -> SsxStatus,
    /// What joint `joint` of `artifact` is and where it stands after this step's physics (see
    /// [`SsxJointState`]). `SSX_ERR_OUT_OF_RANGE` past the artifact's joints (counting up from 0
    /// finds how many it has). Any phase. Added to version 3 after `body_color`: check
    /// `struct_size` covers it (`ssx_sdk::Ctx::joint_state` does).
    pub joint_state: unsafe extern "C" fn(
        ctx: SsxCtx,
        artifact: u32,
        joint: u32,
        state: *mut SsxJointState,
    ) -> SsxStatus,
    /// The name of joint `joint` of `artifact`, as `artifact_name` writes names;
    /// `SSX_ERR_OUT_OF_RANGE` past the artifact's joints or when the name did not fit. Any
    /// phase. Added to version 3 with `joint_state`.
    pub joint_name: unsafe extern "C" fn(
        ctx: SsxCtx,
        artifact: u32,
        joint: u32,
        name: *mut c_char,
        capacity: usize,
        len: *mut usize,
    ) -> SsxStatus,
    /// Drives one of the caller's own revolute or prismatic joints, motor or not, with these
    /// gains (stiffness in N·m/rad or N/m, damping in N·m·s/rad or N·s/m, neither negative)
    /// towards `position` (rad or m) and `velocity`: stiffness 0 commands the rate alone. The
    /// effort stays within the joint's limit; the command holds until the next.
    /// `SSX_ERR_INVALID_ARGUMENT` for a fixed joint, a negative gain or a value that is not
    /// finite. Driver phase. Added to version 3 with `joint_state`.
    pub set_joint_motor: unsafe extern "C" fn(
        ctx: SsxCtx,
        joint: u32,
        position: f64,
        velocity: f64,
        stiffness: f64,
        damping: f64,
    ) -> SsxStatus,
    /// An effort (N·m for a revolute joint, N for a prismatic one) on one of the caller's own
    /// joints for the next step, within the joint's limit: the child is pushed along the axis and
    /// the parent back. `SSX_ERR_INVALID_ARGUMENT` for a fixed joint or a value that is not
    /// finite. Driver phase. Added to version 3 with `joint_state`.
    pub add_joint_effort: unsafe extern "C" fn(ctx: SsxCtx, joint: u32, effort: f64) -> SsxStatus,
    /// What `artifact`'s robot model file (URDF, MJCF) says beyond bodies and joints, as JSON:
    /// `{"urdf": text or null, "links": [{"name", "body", "position": [x, y, z], "orientation":
    /// [w, x, y, z]}]}`, every link with the body it is part of and its pose in that body's
    /// frame. `text` points at `len` bytes of UTF-8 (not NUL-terminated), valid until the
    /// current call returns; `SSX_ERR_NOT_FOUND` for an artifact not made from a model file.
    /// Any phase. Added to version 3 with `joint_state`.
    pub robot_model: unsafe extern "C" fn(
        ctx: SsxCtx,
        artifact: u32,
        text: *mut *const c_char,
        len: *mut usize,
    ) -> SsxStatus,
}

/// A fixed joint, in [`SsxJointState::kind`].
pub const SSX_JOINT_FIXED: u32 = 0;
/// A revolute joint (positions in rad).
pub const SSX_JOINT_REVOLUTE: u32 = 1;
/// A prismatic joint (positions in m).
pub const SSX_JOINT_PRISMATIC: u32 = 2;

/// A joint and where it stands, from [`SsxHostApi::joint_state`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SsxJointState {
    /// [`SSX_JOINT_FIXED`], [`SSX_JOINT_REVOLUTE`] or [`SSX_JOINT_PRISMATIC`].
    pub kind: u32,
    /// 1 when its artifact's file gave it a motor (`set_joint_target` drives it), else 0.
    pub motorised: u32,
    /// Angle (rad, in (−π, π]) or travel (m) from the pose it was built in.
    pub position: f64,
    /// Its rate (rad/s or m/s).
    pub velocity: f64,
    /// Lower and upper limits; −∞ and +∞ when it has none.
    pub limits: [f64; 2],
    /// The largest effort a motor may apply (N·m or N); +∞ when unbounded.
    pub max_effort: f64,
}

/// Most rays one `ray_cast_many` call casts (a 4096 × 4096 image).
pub const SSX_MAX_RAYS: usize = 16_777_216;

/// Longest reading description (bytes).
pub const SSX_MAX_DESCRIPTION: usize = 4096;

/// The scene's map, from [`SsxHostApi::map`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SsxMapInfo {
    /// Cells per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Metres per cell.
    pub resolution: f64,
    /// The world pose of cell (0, 0)'s outer corner: x, y (m) and yaw (rad).
    pub origin: [f64; 3],
}

/// Creates an instance from its JSON descriptor. On success stores it in `instance` and returns
/// `SSX_OK`; otherwise writes a message into `error` and returns an error status.
pub type SsxCreateFn = unsafe extern "C" fn(
    host: *const SsxHostApi,
    descriptor_json: *const c_char,
    init: *const SsxInit,
    instance: *mut *mut c_void,
    error: *mut SsxErrorBuf,
) -> SsxStatus;
/// Destroys an instance. Called exactly once per created instance; nothing is called after.
pub type SsxDestroyFn = unsafe extern "C" fn(instance: *mut c_void);
/// Runs one step of an instance (a driver's drive, a sensor's measurement). On failure writes a
/// message into `error` and returns an error status; the host then disables the instance.
pub type SsxStepFn =
    unsafe extern "C" fn(instance: *mut c_void, ctx: SsxCtx, error: *mut SsxErrorBuf) -> SsxStatus;
/// Runs one step of `count` instances of one plugin, as `step` would one after another in the
/// order given: `instances[k]` with the handle `ctxs[k]`, each handle valid for host calls made
/// for that instance during this call. Returns `SSX_OK` when every instance stepped; otherwise
/// stops at the first instance that failed, writes its position (0-based) into `failed` and its
/// message into `error`, and returns its status. The host disables that instance as it would
/// after `step`, and calls again with the instances after it.
pub type SsxStepManyFn = unsafe extern "C" fn(
    instances: *const *mut c_void,
    ctxs: *const SsxCtx,
    count: usize,
    failed: *mut usize,
    error: *mut SsxErrorBuf,
) -> SsxStatus;

/// Serves an extension request; writes up to `capacity` bytes of the response and its full
/// length. Thread-safe: drivers and sensors on several workers may call it at once.
pub type SsxCallFn = unsafe extern "C" fn(
    instance: *mut c_void,
    service: *const c_char,
    request: *const u8,
    request_len: usize,
    response: *mut u8,
    capacity: usize,
    response_len: *mut usize,
    error: *mut SsxErrorBuf,
) -> SsxStatus;

/// An extension's run-control poll: writes a [`SsxControl`] (`SSX_CONTROL_NONE` for no change).
/// Runs on the main thread with a context valid for the host's read functions and `stats`.
pub type SsxControlFn = unsafe extern "C" fn(
    instance: *mut c_void,
    ctx: SsxCtx,
    control: *mut SsxControl,
    error: *mut SsxErrorBuf,
) -> SsxStatus;

/// One plugin of a library.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SsxPluginDesc {
    /// `sizeof(SsxPluginDesc)` as the plugin knows it.
    pub struct_size: u32,
    /// `SSX_KIND_DRIVER`, `SSX_KIND_SENSOR` or `SSX_KIND_EXTENSION`.
    pub kind: SsxPluginKind,
    /// Name scenes use (unique in the library).
    pub name: *const c_char,
    /// One line for `ssxd plugins`.
    pub description: *const c_char,
    // The function types are spelled out (they are SsxCreateFn, SsxDestroyFn, SsxStepFn, ...):
    // cbindgen maps `Option<fn>` to a nullable C function pointer only when written inline.
    /// Creates an instance (an [`SsxCreateFn`]).
    pub create: Option<
        unsafe extern "C" fn(
            host: *const SsxHostApi,
            descriptor_json: *const c_char,
            init: *const SsxInit,
            instance: *mut *mut c_void,
            error: *mut SsxErrorBuf,
        ) -> SsxStatus,
    >,
    /// Destroys an instance (an [`SsxDestroyFn`]).
    pub destroy: Option<unsafe extern "C" fn(instance: *mut c_void)>,
    /// Runs a step (an [`SsxStepFn`]).
    pub step: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            ctx: SsxCtx,
            error: *mut SsxErrorBuf,
        ) -> SsxStatus,
    >,
    /// Extensions only (null for drivers and sensors): serves a request (an [`SsxCallFn`]).
    /// Called from worker threads, possibly several at once: it must be thread-safe.
    pub call: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            service: *const c_char,
            request: *const u8,
            request_len: usize,
            response: *mut u8,
            capacity: usize,
            response_len: *mut usize,
            error: *mut SsxErrorBuf,
        ) -> SsxStatus,
    >,
    /// Extensions only (may be null): asks what the run should do next (an
    /// [`SsxControlFn`]). Called on the main thread after every step's `step`; while the run
    /// is paused, right after any plugin calls the host's `wake` and at least every 50 ms.
    /// Steps asked for while paused run back to back, unpaced. Since version 3.
    pub control: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            ctx: SsxCtx,
            control: *mut SsxControl,
            error: *mut SsxErrorBuf,
        ) -> SsxStatus,
    >,
    /// Drivers and sensors (may be null): when the run swaps this library for a new build,
    /// writes the state the new build's instance continues from (its format is the plugin's:
    /// version it) into `state` and its size into `len`; `SSX_ERR_OUT_OF_RANGE` (with `len`
    /// the size needed) when `capacity` is short, `SSX_ERR_NOT_FOUND` for nothing to hand over.
    /// Called on the main thread between two steps. Appended to version 3: the host reads it
    /// only when `struct_size` covers it.
    pub save: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            state: *mut u8,
            capacity: usize,
            len: *mut usize,
            error: *mut SsxErrorBuf,
        ) -> SsxStatus,
    >,
    /// Drivers and sensors (may be null): a new instance continues from what the previous
    /// build's `save` wrote (called on the main thread at the switch, before the new
    /// instance's first step). An error refuses the whole swap: the old build keeps running.
    /// Appended to version 3 with `save`.
    pub restore: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            state: *const u8,
            len: usize,
            error: *mut SsxErrorBuf,
        ) -> SsxStatus,
    >,
    /// Extensions only (may be null): the run starts over (an [`SsxResetFn`]); null, or
    /// `SSX_ERR_NOT_FOUND`, has the host destroy the instance and create it anew from its
    /// descriptor. Called on the main thread between two steps, after every driver and sensor
    /// was destroyed and before the new ones are created. Appended to version 3 after `restore`.
    pub reset: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            seed: u64,
            error: *mut SsxErrorBuf,
        ) -> SsxStatus,
    >,
    /// Drivers and sensors (may be null): steps many instances of this plugin in one call (an
    /// [`SsxStepManyFn`]); the host passes only instances this entry's `create` made, all of one
    /// world and phase, on one thread. Where a step runs without per-artifact timing (fast
    /// mode, batches of worlds), the host steps consecutive instances of the plugin through it
    /// instead of calling `step` once each; null: `step` once each. Appended to version 3 after
    /// `reset`.
    pub step_many: Option<
        unsafe extern "C" fn(
            instances: *const *mut c_void,
            ctxs: *const SsxCtx,
            count: usize,
            failed: *mut usize,
            error: *mut SsxErrorBuf,
        ) -> SsxStatus,
    >,
}

/// An extension's reset: the run starts over from step 0 with `seed` as the scene's seed (its
/// drivers and sensors are created anew). `SSX_OK`: the instance started over itself and is
/// kept (a network session stays open); `SSX_ERR_NOT_FOUND`: it keeps nothing worth keeping,
/// and the host destroys it and creates it anew from its descriptor (as for a null entry).
pub type SsxResetFn =
    unsafe extern "C" fn(instance: *mut c_void, seed: u64, error: *mut SsxErrorBuf) -> SsxStatus;

/// The size of an [`SsxPluginDesc`] before `save` and `restore` were appended: the smallest
/// entry a version-3 host takes.
pub const SSX_PLUGIN_DESC_V3_SIZE: usize = std::mem::offset_of!(SsxPluginDesc, save);

/// What `ssx_plugin_entry` returns: every plugin in the library. Static, never freed.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SsxPluginTable {
    /// Must equal the host's `SSX_ABI_VERSION`.
    pub abi_version: u32,
    /// `sizeof(SsxPluginTable)` as the plugin knows it.
    pub struct_size: u32,
    /// Number of entries in `plugins`.
    pub plugin_count: u32,
    /// The plugins.
    pub plugins: *const SsxPluginDesc,
}

/// The entry symbol's name, NUL-terminated.
pub const SSX_ENTRY_SYMBOL: &[u8] = b"ssx_plugin_entry\0";

/// The entry symbol's type.
pub type SsxEntryFn = unsafe extern "C" fn() -> *const SsxPluginTable;

/// `len` values at `ptr` as a slice; empty when `len` is 0 (then `ptr` may be null).
///
/// # Safety
/// Unless `len` is 0, `ptr` must point at `len` initialised values that outlive `'a`.
#[doc(hidden)]
pub unsafe fn slice<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    if len == 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// As [`slice`], mutable.
///
/// # Safety
/// Unless `len` is 0, `ptr` must point at `len` values, not aliased, that outlive `'a`.
#[doc(hidden)]
pub unsafe fn slice_mut<'a, T>(ptr: *mut T, len: usize) -> &'a mut [T] {
    if len == 0 {
        &mut []
    } else {
        unsafe { std::slice::from_raw_parts_mut(ptr, len) }
    }
}

/// Lets a plugin's static table, which holds raw pointers to static strings, be a `static`.
#[repr(transparent)]
pub struct SyncStatic<T>(pub T);
// SAFETY: used only for tables of pointers to immutable statics (strings, functions).
unsafe impl<T> Sync for SyncStatic<T> {}
