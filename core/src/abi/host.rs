//! The host functions plugins call (the `SsxHostApi` table) and the frame of the call they
//! reach: which world, which artifact, and what the calling phase may touch.

use std::cell::Cell;
use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};

use ssx_sdk::abi::*;

use crate::engine::{BodyId, Contact, RayHit};
use crate::math::{Point3, Vec3};
use crate::plugin::{CommandBuffer, CommandError, Reading, ReadingSource, SwapDesk};
use crate::stats::StatsView;
use crate::world::{ArtifactId, World};

/// What the current call may touch.
pub(super) enum FrameKind<'a> {
    Sensor {
        out: &'a mut Reading,
    },
    Driver {
        commands: &'a mut CommandBuffer,
        readings: &'a dyn ReadingSource,
    },
    Extension {
        readings: &'a dyn ReadingSource,
        stats: StatsView<'a>,
        /// Where `metric` writes (after_step only).
        metrics: Option<&'a mut crate::plugin::Metrics>,
        /// Where `overlay` writes (after_step only), and whether anything shows it.
        overlays: Option<&'a mut Vec<crate::render::Overlay>>,
        overlays_wanted: bool,
        /// Library swaps: `swap` asks (control only), `swap_outcome` reads.
        swaps: Option<&'a dyn SwapDesk>,
        /// Whether this is the `control` entry (the one phase that may ask for a swap).
        control: bool,
    },
}

pub(super) struct Frame<'a> {
    pub(super) world: &'a World<'a>,
    /// The calling plugin's artifact (none for extensions).
    pub(super) artifact: Option<ArtifactId>,
    pub(super) kind: FrameKind<'a>,
}

thread_local! {
    /// The handle and frame of the plugin call running on this thread (0 / null: none).
    static CURRENT: Cell<(SsxCtx, *mut ())> = const { Cell::new((0, std::ptr::null_mut())) };
    /// Handles are unique across threads: a per-thread tag in the high bits, a counter below.
    static NEXT: Cell<u64> = Cell::new(THREAD_TAG.fetch_add(1, Ordering::Relaxed) << 40);
}
static THREAD_TAG: AtomicU64 = AtomicU64::new(1);

/// Makes `frame` current for the duration of `call`, which gets a fresh handle.
pub(super) fn with_frame(
    frame: &mut Frame<'_>,
    call: impl FnOnce(SsxCtx) -> SsxStatus,
) -> SsxStatus {
    let ctx = NEXT.with(|n| {
        let v = n.get() + 1;
        n.set(v);
        v
    });
    let previous = CURRENT.with(|c| c.replace((ctx, frame as *mut Frame<'_> as *mut ())));
    let status = call(ctx);
    CURRENT.with(|c| c.set(previous));
    status
}

/// Runs a host function's body against the current frame, checking the handle. Panics are
/// caught: a host function never unwinds into a plugin.
fn host<F>(ctx: SsxCtx, body: F) -> SsxStatus
where
    F: FnOnce(&mut Frame<'_>) -> Result<(), SsxStatus>,
{
    let (current, ptr) = CURRENT.with(Cell::get);
    if ctx == 0 || ctx != current || ptr.is_null() {
        return SSX_ERR_INVALID_HANDLE;
    }
    // SAFETY: `ptr` is the frame `with_frame` installed for this very handle on this thread; it
    // lives until that call returns, and host functions do not nest.
    let frame = unsafe { &mut *(ptr as *mut Frame<'_>) };
    match catch_unwind(AssertUnwindSafe(|| body(frame))) {
        Ok(Ok(())) => SSX_OK,
        Ok(Err(s)) => s,
        Err(_) => SSX_ERR_INVALID_ARGUMENT,
    }
}

/// `*mut T` to `&mut T`, null refused.
fn out<'p, T>(p: *mut T) -> Result<&'p mut T, SsxStatus> {
    // SAFETY: the caller promises a valid pointer or null.
    unsafe { p.as_mut() }.ok_or(SSX_ERR_INVALID_ARGUMENT)
}

/// A `double[3]`, null and non-finite refused.
fn vec3(p: *const f64) -> Result<Vec3, SsxStatus> {
    if p.is_null() {
        return Err(SSX_ERR_INVALID_ARGUMENT);
    }
    // SAFETY: a non-null `double[3]` per the ABI.
    let v = unsafe { std::slice::from_raw_parts(p, 3) };
    let v = Vec3::new(v[0], v[1], v[2]);
    if v.iter().all(|x| x.is_finite()) {
        Ok(v)
    } else {
        Err(SSX_ERR_INVALID_ARGUMENT)
    }
}

fn name<'p>(p: *const c_char) -> Result<&'p str, SsxStatus> {
    if p.is_null() {
        return Err(SSX_ERR_INVALID_ARGUMENT);
    }
    // SAFETY: NUL-terminated per the ABI.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| SSX_ERR_INVALID_ARGUMENT)
}

fn body_of(world: &World<'_>, artifact: u32, body: u32) -> Result<BodyId, SsxStatus> {
    if artifact as usize >= world.artifact_count() {
        return Err(SSX_ERR_OUT_OF_RANGE);
    }
    world
        .artifact(ArtifactId(artifact))
        .body(body as usize)
        .ok_or(SSX_ERR_OUT_OF_RANGE)
}

fn commands<'f>(frame: &'f mut Frame<'_>) -> Result<&'f mut CommandBuffer, SsxStatus> {
    match &mut frame.kind {
        FrameKind::Driver { commands, .. } => Ok(commands),
        FrameKind::Sensor { .. } | FrameKind::Extension { .. } => Err(SSX_ERR_WRONG_PHASE),
    }
}

fn command(r: Result<(), CommandError>) -> Result<(), SsxStatus> {
    r.map_err(|e| match e {
        CommandError::Body { .. } | CommandError::Joint { .. } | CommandError::NoBody(_) => {
            SSX_ERR_OUT_OF_RANGE
        }
        CommandError::NotHeld(_) => SSX_ERR_NOT_FOUND,
        CommandError::NoMotor(_)
        | CommandError::NotFinite { .. }
        | CommandError::NotDynamic { .. }
        | CommandError::OwnBody(_)
        | CommandError::HeldElsewhere { .. } => SSX_ERR_INVALID_ARGUMENT,
    })
}

unsafe extern "C" fn host_time(ctx: SsxCtx, time: *mut f64, step: *mut u64) -> SsxStatus {
    host(ctx, |f| {
        *out(time)? = f.world.time;
        *out(step)? = f.world.step;
        Ok(())
    })
}

unsafe extern "C" fn host_gravity(ctx: SsxCtx, gravity: *mut f64) -> SsxStatus {
    host(ctx, |f| {
        if gravity.is_null() {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // SAFETY: a `double[3]` per the ABI.
        unsafe { std::slice::from_raw_parts_mut(gravity, 3) }
            .copy_from_slice(f.world.gravity.as_slice());
        Ok(())
    })
}

unsafe extern "C" fn host_artifact_count(ctx: SsxCtx, count: *mut u32) -> SsxStatus {
    host(ctx, |f| {
        *out(count)? = f.world.artifact_count() as u32;
        Ok(())
    })
}

unsafe extern "C" fn host_artifact_by_name(
    ctx: SsxCtx,
    n: *const c_char,
    artifact: *mut u32,
) -> SsxStatus {
    host(ctx, |f| {
        *out(artifact)? = f
            .world
            .artifact_by_name(name(n)?)
            .ok_or(SSX_ERR_NOT_FOUND)?
            .0;
        Ok(())
    })
}

unsafe extern "C" fn host_artifact_name(
    ctx: SsxCtx,
    artifact: u32,
    buf: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        if artifact as usize >= f.world.artifact_count() {
            return Err(SSX_ERR_OUT_OF_RANGE);
        }
        copy_name(
            &f.world.artifact(ArtifactId(artifact)).name,
            buf,
            capacity,
            len,
        )
    })
}

unsafe extern "C" fn host_sensor_name(
    ctx: SsxCtx,
    artifact: u32,
    sensor: u32,
    buf: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        if artifact as usize >= f.world.artifact_count() {
            return Err(SSX_ERR_OUT_OF_RANGE);
        }
        let name = f
            .world
            .artifact(ArtifactId(artifact))
            .sensor_names
            .get(sensor as usize)
            .ok_or(SSX_ERR_OUT_OF_RANGE)?;
        copy_name(name, buf, capacity, len)
    })
}

/// Writes `name` and a NUL into the caller's `capacity` bytes at `buf`, and its length (NUL
/// excluded) into `len`; `SSX_ERR_OUT_OF_RANGE` when it does not fit.
fn copy_name(
    name: &str,
    buf: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> Result<(), SsxStatus> {
    let name = name.as_bytes();
    *out(len)? = name.len();
    if capacity < name.len() + 1 {
        return Err(SSX_ERR_OUT_OF_RANGE);
    }
    if buf.is_null() {
        return Err(SSX_ERR_INVALID_ARGUMENT);
    }
    // SAFETY: `capacity` bytes at `buf` per the ABI, and the name plus NUL fit.
    unsafe {
        std::ptr::copy_nonoverlapping(name.as_ptr(), buf.cast::<u8>(), name.len());
        *buf.add(name.len()) = 0;
    }
    Ok(())
}

unsafe extern "C" fn host_stats(ctx: SsxCtx, stats: *mut SsxStats) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Extension { stats: view, .. } = &f.kind else {
            return Err(SSX_ERR_WRONG_PHASE);
        };
        let l = view.live();
        *out(stats)? = SsxStats {
            struct_size: std::mem::size_of::<SsxStats>() as u32,
            paused: u32::from(l.paused),
            steps: l.steps,
            sim_time: l.sim_time,
            wall_time: l.wall_time,
            deadline_misses: l.deadline_misses,
            miss_bursts: l.miss_bursts,
            late_wakeups: l.late_wakeups,
            plugin_faults: l.plugin_faults,
            step_p50_us: l.step_p50_us,
            step_p99_us: l.step_p99_us,
            step_max_us: l.step_max_us,
            lateness_p99_us: l.lateness_p99_us,
            lateness_max_us: l.lateness_max_us,
        };
        Ok(())
    })
}

unsafe extern "C" fn host_body_count(ctx: SsxCtx, artifact: u32, count: *mut u32) -> SsxStatus {
    host(ctx, |f| {
        if artifact as usize >= f.world.artifact_count() {
            return Err(SSX_ERR_OUT_OF_RANGE);
        }
        *out(count)? = f.world.artifact(ArtifactId(artifact)).bodies.len() as u32;
        Ok(())
    })
}

unsafe extern "C" fn host_body_state(
    ctx: SsxCtx,
    artifact: u32,
    body: u32,
    state: *mut SsxBodyState,
) -> SsxStatus {
    host(ctx, |f| {
        let s = f.world.body(body_of(f.world, artifact, body)?);
        let p = s.pose.translation.vector;
        let q = s.pose.rotation.quaternion();
        *out(state)? = SsxBodyState {
            position: [p.x, p.y, p.z],
            orientation: [q.w, q.i, q.j, q.k],
            linear_velocity: [s.linvel.x, s.linvel.y, s.linvel.z],
            angular_velocity: [s.angvel.x, s.angvel.y, s.angvel.z],
        };
        Ok(())
    })
}

unsafe extern "C" fn host_body_mass(
    ctx: SsxCtx,
    artifact: u32,
    body: u32,
    mass: *mut f64,
) -> SsxStatus {
    host(ctx, |f| {
        *out(mass)? = f.world.mass(body_of(f.world, artifact, body)?);
        Ok(())
    })
}

unsafe extern "C" fn host_body_inertia(
    ctx: SsxCtx,
    artifact: u32,
    body: u32,
    inertia: *mut f64,
) -> SsxStatus {
    host(ctx, |f| {
        let i = f.world.inertia(body_of(f.world, artifact, body)?);
        if inertia.is_null() {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // SAFETY: `inertia` points at three doubles per the ABI, null checked above.
        unsafe { slice_mut(inertia, 3) }.copy_from_slice(i.as_slice());
        Ok(())
    })
}

unsafe extern "C" fn host_contacts(
    ctx: SsxCtx,
    artifact: u32,
    body: u32,
    contacts: *mut SsxContact,
    capacity: usize,
    count: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        let id = body_of(f.world, artifact, body)?;
        if contacts.is_null() && capacity > 0 {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // A per-thread scratch list, as for neighbours: no allocation once grown.
        thread_local! {
            static TOUCH: std::cell::RefCell<Vec<Contact>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let mut found = TOUCH.with(|slot| std::mem::take(&mut *slot.borrow_mut()));
        found.clear();
        f.world.contacts(id, &mut found);
        for (i, c) in found.iter().take(capacity).enumerate() {
            let entry = SsxContact {
                artifact: f.world.owner(c.other).0,
                body: f.world.local_index(c.other),
                point: [c.point.x, c.point.y, c.point.z],
                force: [c.force.x, c.force.y, c.force.z],
            };
            // SAFETY: `contacts` holds `capacity` slots per the ABI and `i < capacity`.
            unsafe { *contacts.add(i) = entry };
        }
        let n = found.len();
        TOUCH.with(|slot| *slot.borrow_mut() = found);
        *out(count)? = n;
        Ok(())
    })
}

unsafe extern "C" fn host_add_force(ctx: SsxCtx, body: u32, force: *const f64) -> SsxStatus {
    host(ctx, |f| {
        let force = vec3(force)?;
        command(commands(f)?.force(body as usize, force))
    })
}

unsafe extern "C" fn host_add_force_at_point(
    ctx: SsxCtx,
    body: u32,
    force: *const f64,
    point: *const f64,
) -> SsxStatus {
    host(ctx, |f| {
        let (force, point) = (vec3(force)?, Point3::from(vec3(point)?));
        command(commands(f)?.force_at_point(body as usize, force, point))
    })
}

unsafe extern "C" fn host_add_torque(ctx: SsxCtx, body: u32, torque: *const f64) -> SsxStatus {
    host(ctx, |f| {
        let torque = vec3(torque)?;
        command(commands(f)?.torque(body as usize, torque))
    })
}

unsafe extern "C" fn host_set_velocity(
    ctx: SsxCtx,
    body: u32,
    linear: *const f64,
    angular: *const f64,
) -> SsxStatus {
    host(ctx, |f| {
        let (l, a) = (vec3(linear)?, vec3(angular)?);
        command(commands(f)?.velocity(body as usize, l, a))
    })
}

unsafe extern "C" fn host_joint_index(ctx: SsxCtx, n: *const c_char, joint: *mut u32) -> SsxStatus {
    host(ctx, |f| {
        let artifact = f.artifact.ok_or(SSX_ERR_WRONG_PHASE)?;
        let idx = f
            .world
            .artifact(artifact)
            .joint_index(name(n)?)
            .ok_or(SSX_ERR_NOT_FOUND)?;
        *out(joint)? = idx as u32;
        Ok(())
    })
}

unsafe extern "C" fn host_set_joint_target(
    ctx: SsxCtx,
    joint: u32,
    position: f64,
    velocity: f64,
) -> SsxStatus {
    host(ctx, |f| {
        command(commands(f)?.joint_target(joint as usize, position, velocity))
    })
}

unsafe extern "C" fn host_ray_cast(
    ctx: SsxCtx,
    origin: *const f64,
    direction: *const f64,
    max_distance: f64,
    ignore_own: u32,
    hit: *mut SsxRayHit,
) -> SsxStatus {
    host(ctx, |f| {
        let (o, d) = (vec3(origin)?, vec3(direction)?);
        if !(max_distance.is_finite() && max_distance > 0.0) || d.norm() == 0.0 {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        let ignore = if ignore_own != 0 { f.artifact } else { None };
        let result = f.world.cast_ray(Point3::from(o), d, max_distance, ignore);
        *out(hit)? = ray_hit(f.world, result);
        Ok(())
    })
}

/// A ray's hit as plugins see it.
fn ray_hit(world: &World<'_>, hit: Option<RayHit>) -> SsxRayHit {
    match hit {
        None => SsxRayHit::default(),
        Some(h) => SsxRayHit {
            hit: 1,
            artifact: world.owner(h.body).0,
            body: world.local_index(h.body),
            distance: h.distance,
            normal: [h.normal.x, h.normal.y, h.normal.z],
        },
    }
}

unsafe extern "C" fn host_ray_cast_many(
    ctx: SsxCtx,
    origin: *const f64,
    directions: *const f64,
    count: usize,
    max_distance: f64,
    ignore_own: u32,
    hits: *mut SsxRayHit,
) -> SsxStatus {
    // Per-thread scratch lists: no allocation once they have grown to the largest batch.
    thread_local! {
        static RAYS: std::cell::RefCell<(Vec<Vec3>, Vec<Option<RayHit>>)> =
            const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    }
    host(ctx, |f| {
        let o = vec3(origin)?;
        if !(max_distance.is_finite() && max_distance > 0.0)
            || count > SSX_MAX_RAYS
            || (count > 0 && (directions.is_null() || hits.is_null()))
        {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // SAFETY: `3 × count` doubles at `directions` per the ABI, null checked above.
        let d = unsafe { slice(directions, 3 * count) };
        let usable =
            |c: &[f64]| c.iter().all(|x| x.is_finite()) && Vec3::new(c[0], c[1], c[2]).norm() > 0.0;
        if !d.chunks_exact(3).all(usable) {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        RAYS.with(|slot| {
            let (dirs, found) = &mut *slot.borrow_mut();
            dirs.clear();
            dirs.extend(d.chunks_exact(3).map(|c| Vec3::new(c[0], c[1], c[2])));
            found.clear();
            found.resize(count, None);
            let ignore = if ignore_own != 0 { f.artifact } else { None };
            f.world
                .cast_rays(Point3::from(o), dirs, max_distance, ignore, found);
            // SAFETY: `count` records at `hits` per the ABI, null checked above.
            let out = unsafe { slice_mut(hits, count) };
            for (slot, h) in out.iter_mut().zip(found.iter()) {
                *slot = ray_hit(f.world, *h);
            }
        });
        Ok(())
    })
}

unsafe extern "C" fn host_body_color(
    ctx: SsxCtx,
    artifact: u32,
    body: u32,
    rgba: *mut f32,
) -> SsxStatus {
    host(ctx, |f| {
        let c = f.world.color(body_of(f.world, artifact, body)?);
        if rgba.is_null() {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // SAFETY: a non-null `float[4]` per the ABI.
        unsafe { std::slice::from_raw_parts_mut(rgba, 4) }.copy_from_slice(&c);
        Ok(())
    })
}

unsafe extern "C" fn host_neighbours(
    ctx: SsxCtx,
    center: *const f64,
    radius: f64,
    artifacts: *mut u32,
    capacity: usize,
    count: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        let c = vec3(center)?;
        if !(radius.is_finite() && radius >= 0.0) || (artifacts.is_null() && capacity > 0) {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // A per-thread scratch list: no allocation once it has grown to the largest answer.
        thread_local! {
            static NEAR: std::cell::RefCell<Vec<BodyId>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let mut bodies = NEAR.with(|slot| std::mem::take(&mut *slot.borrow_mut()));
        bodies.clear();
        f.world.bodies_within(Point3::from(c), radius, &mut bodies);
        let mut n = 0usize;
        let mut last: Option<u32> = None;
        // An artifact's bodies have consecutive ids, so its bodies come together.
        for &b in &bodies {
            let a = f.world.owner(b).0;
            if Some(ArtifactId(a)) == f.artifact || last == Some(a) {
                continue;
            }
            last = Some(a);
            if n < capacity {
                // SAFETY: `artifacts` holds `capacity` slots per the ABI.
                unsafe { *artifacts.add(n) = a };
            }
            n += 1;
        }
        NEAR.with(|slot| *slot.borrow_mut() = bodies);
        *out(count)? = n;
        Ok(())
    })
}

unsafe extern "C" fn host_sensor_index(
    ctx: SsxCtx,
    artifact: u32,
    n: *const c_char,
    sensor: *mut u32,
) -> SsxStatus {
    host(ctx, |f| {
        if artifact as usize >= f.world.artifact_count() {
            return Err(SSX_ERR_OUT_OF_RANGE);
        }
        let idx = f
            .world
            .artifact(ArtifactId(artifact))
            .sensor_index(name(n)?)
            .ok_or(SSX_ERR_NOT_FOUND)?;
        *out(sensor)? = idx as u32;
        Ok(())
    })
}

unsafe extern "C" fn host_publish(ctx: SsxCtx, values: *const f64, len: usize) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Sensor { out } = &mut f.kind else {
            return Err(SSX_ERR_WRONG_PHASE);
        };
        if values.is_null() && len > 0 {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // SAFETY: `len` doubles at `values` per the ABI (or none), null checked above.
        let v = unsafe { slice(values, len) };
        out.set(v);
        Ok(())
    })
}

/// A sensor's reading as drivers and extensions may read it (sensors may not: their phase
/// writes readings). An index past the artifacts, or past an artifact's sensors, is out of
/// range, like every other index.
fn reading_of<'f>(f: &'f Frame<'_>, artifact: u32, sensor: u32) -> Result<&'f Reading, SsxStatus> {
    let readings = match &f.kind {
        FrameKind::Driver { readings, .. } | FrameKind::Extension { readings, .. } => *readings,
        FrameKind::Sensor { .. } => return Err(SSX_ERR_WRONG_PHASE),
    };
    if artifact as usize >= f.world.artifact_count() {
        return Err(SSX_ERR_OUT_OF_RANGE);
    }
    readings
        .reading(ArtifactId(artifact), sensor as usize)
        .ok_or(SSX_ERR_OUT_OF_RANGE)
}

unsafe extern "C" fn host_reading(
    ctx: SsxCtx,
    artifact: u32,
    sensor: u32,
    values: *mut *const f64,
    len: *mut usize,
    step: *mut u64,
) -> SsxStatus {
    host(ctx, |f| {
        let r = reading_of(f, artifact, sensor)?;
        *out(values)? = r.values().as_ptr();
        *out(len)? = r.values().len();
        *out(step)? = r.step();
        Ok(())
    })
}

unsafe extern "C" fn host_describe(ctx: SsxCtx, json: *const c_char) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Sensor { out } = &mut f.kind else {
            return Err(SSX_ERR_WRONG_PHASE);
        };
        let text = name(json)?;
        if text.len() > SSX_MAX_DESCRIPTION {
            return Err(SSX_ERR_OUT_OF_RANGE);
        }
        out.describe(text);
        Ok(())
    })
}

unsafe extern "C" fn host_idle(ctx: SsxCtx, steps: u32) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Sensor { out } = &mut f.kind else {
            return Err(SSX_ERR_WRONG_PHASE);
        };
        out.idle(f.world.step, steps);
        Ok(())
    })
}

unsafe extern "C" fn host_reading_description(
    ctx: SsxCtx,
    artifact: u32,
    sensor: u32,
    text: *mut *const c_char,
    len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        let r = reading_of(f, artifact, sensor)?;
        *out(text)? = r.description().as_ptr().cast();
        *out(len)? = r.description().len();
        Ok(())
    })
}

unsafe extern "C" fn host_map(
    ctx: SsxCtx,
    info: *mut SsxMapInfo,
    cells: *mut u8,
    capacity: usize,
) -> SsxStatus {
    host(ctx, |f| {
        if matches!(f.kind, FrameKind::Sensor { .. }) {
            return Err(SSX_ERR_WRONG_PHASE);
        }
        let info = out(info)?;
        let map = f.world.map().ok_or(SSX_ERR_NOT_FOUND)?;
        *info = SsxMapInfo {
            width: map.width,
            height: map.height,
            resolution: map.resolution,
            origin: map.origin,
        };
        if cells.is_null() {
            return Ok(());
        }
        if capacity < map.cells.len() {
            return Err(SSX_ERR_OUT_OF_RANGE);
        }
        // SAFETY: `capacity` writable bytes at `cells` per the ABI, checked to hold them all.
        unsafe { std::ptr::copy_nonoverlapping(map.cells.as_ptr(), cells, map.cells.len()) };
        Ok(())
    })
}

unsafe extern "C" fn host_log(
    ctx: SsxCtx,
    level: SsxLogLevel,
    message: *const c_char,
) -> SsxStatus {
    if ctx == 0 {
        // Outside a step (from `create` or `destroy`, or a plugin's own thread): no handle,
        // so the message is attributed to what the calling thread is running, if anything.
        let Ok(m) = name(message) else {
            return SSX_ERR_INVALID_ARGUMENT;
        };
        let m = crate::text::escape_controls(m);
        let who =
            crate::guard::running().map_or_else(|| "(no step)".to_string(), |b| b.to_string());
        match level {
            SSX_LOG_ERROR => tracing::error!(target: "ssx::plugin", plugin = %who, "{m}"),
            SSX_LOG_WARN => tracing::warn!(target: "ssx::plugin", plugin = %who, "{m}"),
            SSX_LOG_INFO => tracing::info!(target: "ssx::plugin", plugin = %who, "{m}"),
            _ => tracing::debug!(target: "ssx::plugin", plugin = %who, "{m}"),
        }
        return SSX_OK;
    }
    host(ctx, |f| {
        // Plugin text reaches terminals and logs: no escape sequences, no forged lines.
        let m = crate::text::escape_controls(name(message)?);
        let a = f
            .artifact
            .map_or("(extension)", |a| f.world.artifact(a).name.as_str());
        match level {
            SSX_LOG_ERROR => tracing::error!(target: "ssx::plugin", artifact = %a, "{m}"),
            SSX_LOG_WARN => tracing::warn!(target: "ssx::plugin", artifact = %a, "{m}"),
            SSX_LOG_INFO => tracing::info!(target: "ssx::plugin", artifact = %a, "{m}"),
            _ => tracing::debug!(target: "ssx::plugin", artifact = %a, "{m}"),
        }
        Ok(())
    })
}

unsafe extern "C" fn host_extension(
    ctx: SsxCtx,
    n: *const c_char,
    extension: *mut u32,
) -> SsxStatus {
    host(ctx, |f| {
        *out(extension)? = f.world.extension_index(name(n)?).ok_or(SSX_ERR_NOT_FOUND)? as u32;
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)] // the C signature
unsafe extern "C" fn host_call_extension(
    ctx: SsxCtx,
    extension: u32,
    service: *const c_char,
    request: *const u8,
    request_len: usize,
    response: *mut u8,
    capacity: usize,
    response_len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        let ext = f
            .world
            .extension_at(extension as usize)
            .ok_or(SSX_ERR_OUT_OF_RANGE)?;
        let service = name(service)?;
        if (request.is_null() && request_len > 0) || (response.is_null() && capacity > 0) {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // SAFETY: buffers of the given lengths per the ABI, null checked above.
        let (req, resp) = unsafe { (slice(request, request_len), slice_mut(response, capacity)) };
        let _doing = f
            .world
            .extensions
            .label(extension as usize)
            .map(|l| crate::guard::enter(l, crate::guard::Phase::Service, f.world.step));
        let len = ext.call(service, req, resp).map_err(|m| {
            tracing::debug!(target: "ssx::plugin", "extension service '{service}' failed: {m}");
            SSX_ERR_PLUGIN
        })?;
        *out(response_len)? = len;
        if len > capacity {
            Err(SSX_ERR_OUT_OF_RANGE)
        } else {
            Ok(())
        }
    })
}

unsafe extern "C" fn host_metric(ctx: SsxCtx, name: *const c_char, value: f64) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Extension {
            metrics: Some(metrics),
            ..
        } = &mut f.kind
        else {
            return Err(SSX_ERR_WRONG_PHASE);
        };
        crate::plugin::set_metric(metrics, self::name(name)?, value).map_err(|why| {
            tracing::debug!(target: "ssx::plugin", "metric refused: {why}");
            SSX_ERR_INVALID_ARGUMENT
        })
    })
}

unsafe extern "C" fn host_metric_at(
    ctx: SsxCtx,
    index: u32,
    name: *mut c_char,
    capacity: usize,
    len: *mut usize,
    value: *mut f64,
) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Extension { stats, .. } = &f.kind else {
            return Err(SSX_ERR_WRONG_PHASE);
        };
        let (key, v) = stats
            .metrics()
            .get(index as usize)
            .ok_or(SSX_ERR_NOT_FOUND)?;
        *out(value)? = *v;
        copy_name(key, name, capacity, len)
    })
}

unsafe extern "C" fn host_swap(ctx: SsxCtx, library: *const c_char, ticket: *mut u64) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Extension {
            swaps,
            control: true,
            ..
        } = &f.kind
        else {
            return Err(SSX_ERR_WRONG_PHASE);
        };
        let desk = swaps.ok_or(SSX_ERR_NOT_FOUND)?;
        let library = name(library)?;
        let t = desk.request(library).map_err(|m| {
            tracing::debug!(target: "ssx::plugin", "swap refused: {m}");
            SSX_ERR_NOT_FOUND
        })?;
        *out(ticket)? = t;
        Ok(())
    })
}

unsafe extern "C" fn host_swap_outcome(
    ctx: SsxCtx,
    ticket: u64,
    swapped: *mut u32,
    text: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Extension { swaps, .. } = &f.kind else {
            return Err(SSX_ERR_WRONG_PHASE);
        };
        let outcome = swaps
            .and_then(|d| d.outcome(ticket))
            .ok_or(SSX_ERR_NOT_FOUND)?;
        let (ok, message) = match &outcome {
            Ok(library) => (1, library.as_str()),
            Err(reason) => (0, reason.as_str()),
        };
        *out(swapped)? = ok;
        copy_name(message, text, capacity, len)
    })
}

/// Writes `v` into a caller's `double[N]`, null refused.
fn write_doubles<const N: usize>(p: *mut f64, v: [f64; N]) -> Result<(), SsxStatus> {
    if p.is_null() {
        return Err(SSX_ERR_INVALID_ARGUMENT);
    }
    // SAFETY: a non-null `double[N]` per the ABI.
    unsafe { std::slice::from_raw_parts_mut(p, N) }.copy_from_slice(&v);
    Ok(())
}

unsafe extern "C" fn host_body_bounds(
    ctx: SsxCtx,
    artifact: u32,
    body: u32,
    min: *mut f64,
    max: *mut f64,
) -> SsxStatus {
    host(ctx, |f| {
        let (lo, hi) = f
            .world
            .bounds(body_of(f.world, artifact, body)?)
            .ok_or(SSX_ERR_NOT_FOUND)?;
        write_doubles(min, [lo.x, lo.y, lo.z])?;
        write_doubles(max, [hi.x, hi.y, hi.z])
    })
}

unsafe extern "C" fn host_attach(
    ctx: SsxCtx,
    carrier: u32,
    artifact: u32,
    body: u32,
    position: *const f64,
    orientation: *const f64,
) -> SsxStatus {
    host(ctx, |f| {
        let target = body_of(f.world, artifact, body)?;
        let translation = vec3(position)?;
        if orientation.is_null() {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // SAFETY: a non-null `double[4]` per the ABI.
        let [w, i, j, k] = unsafe { *orientation.cast::<[f64; 4]>() };
        let q = crate::math::nalgebra::Quaternion::new(w, i, j, k);
        if !(q.coords.iter().all(|x| x.is_finite()) && q.norm() > 1e-9) {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        let offset = crate::math::Pose::from_parts(
            translation.into(),
            crate::math::Rotation::new_normalize(q),
        );
        let world = f.world;
        command(commands(f)?.attach(world, carrier as usize, target, offset))
    })
}

unsafe extern "C" fn host_detach(ctx: SsxCtx, artifact: u32, body: u32) -> SsxStatus {
    host(ctx, |f| {
        let target = body_of(f.world, artifact, body)?;
        let world = f.world;
        command(commands(f)?.detach(world, target))
    })
}

unsafe extern "C" fn host_attachment(
    ctx: SsxCtx,
    artifact: u32,
    body: u32,
    carrier_artifact: *mut u32,
    carrier_body: *mut u32,
    position: *mut f64,
    orientation: *mut f64,
) -> SsxStatus {
    host(ctx, |f| {
        let held = body_of(f.world, artifact, body)?;
        let (carrier, offset) = f.world.attachment(held).ok_or(SSX_ERR_NOT_FOUND)?;
        let owner = f.world.owner(carrier);
        *out(carrier_artifact)? = owner.0;
        *out(carrier_body)? = f.world.local_index(carrier);
        let p = offset.translation.vector;
        let q = offset.rotation.quaternion();
        write_doubles(position, [p.x, p.y, p.z])?;
        write_doubles(orientation, [q.w, q.i, q.j, q.k])
    })
}

/// The calling extension's overlays: `SSX_ERR_WRONG_PHASE` outside `after_step`,
/// `SSX_ERR_NOT_FOUND` when nothing in the run shows them.
fn overlay_list<'f>(
    kind: &'f mut FrameKind<'_>,
) -> Result<&'f mut Vec<crate::render::Overlay>, SsxStatus> {
    match kind {
        FrameKind::Extension {
            overlays: Some(list),
            overlays_wanted,
            ..
        } => match overlays_wanted {
            true => Ok(list),
            false => Err(SSX_ERR_NOT_FOUND),
        },
        _ => Err(SSX_ERR_WRONG_PHASE),
    }
}

unsafe extern "C" fn host_overlay(
    ctx: SsxCtx,
    n: *const c_char,
    info: *const SsxMapInfo,
    rgba: *const u8,
    len: usize,
) -> SsxStatus {
    host(ctx, |f| {
        let time = f.world.time;
        let list = overlay_list(&mut f.kind)?;
        // SAFETY: a readable `SsxMapInfo` or null, per the ABI.
        let info = unsafe { info.as_ref() }.ok_or(SSX_ERR_INVALID_ARGUMENT)?;
        if rgba.is_null() {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // SAFETY: `len` readable bytes at a non-null `rgba`, per the ABI.
        let cells = unsafe { std::slice::from_raw_parts(rgba, len) };
        let size = (info.width, info.height, info.resolution, info.origin);
        crate::render::set_overlay(list, name(n)?, size, cells, time)
            .map_err(|_| SSX_ERR_INVALID_ARGUMENT)
    })
}

unsafe extern "C" fn host_overlay_shapes(
    ctx: SsxCtx,
    n: *const c_char,
    kind: SsxOverlayKind,
    values: *const f64,
    len: usize,
    color: *const f32,
) -> SsxStatus {
    host(ctx, |f| {
        let time = f.world.time;
        let list = overlay_list(&mut f.kind)?;
        let kind = match kind {
            SSX_OVERLAY_BOXES => crate::render::OverlayKind::Boxes,
            SSX_OVERLAY_LINES => crate::render::OverlayKind::Lines,
            _ => return Err(SSX_ERR_INVALID_ARGUMENT),
        };
        if color.is_null() || (values.is_null() && len > 0) {
            return Err(SSX_ERR_INVALID_ARGUMENT);
        }
        // SAFETY: `len` readable doubles at `values` and a `float[4]` at `color`, per the ABI.
        let (values, color) = unsafe {
            let v = if len == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(values, len)
            };
            (v, *color.cast::<[f32; 4]>())
        };
        crate::render::set_shapes(list, name(n)?, kind, values, color, time)
            .map_err(|_| SSX_ERR_INVALID_ARGUMENT)
    })
}

unsafe extern "C" fn host_wake() {
    crate::wake::ring();
}

unsafe extern "C" fn host_status_message(status: SsxStatus) -> *const c_char {
    status_message_c(status).as_ptr()
}

/// The host functions, as plugins see them. Static: it outlives every instance.
pub static HOST_API: SsxHostApi = SsxHostApi {
    struct_size: std::mem::size_of::<SsxHostApi>() as u32,
    abi_version: SSX_ABI_VERSION,
    time: host_time,
    gravity: host_gravity,
    artifact_count: host_artifact_count,
    artifact_by_name: host_artifact_by_name,
    body_count: host_body_count,
    body_state: host_body_state,
    body_mass: host_body_mass,
    add_force: host_add_force,
    add_force_at_point: host_add_force_at_point,
    add_torque: host_add_torque,
    set_velocity: host_set_velocity,
    joint_index: host_joint_index,
    set_joint_target: host_set_joint_target,
    ray_cast: host_ray_cast,
    neighbours: host_neighbours,
    sensor_index: host_sensor_index,
    publish: host_publish,
    reading: host_reading,
    extension: host_extension,
    call_extension: host_call_extension,
    log: host_log,
    status_message: host_status_message,
    body_inertia: host_body_inertia,
    contacts: host_contacts,
    stats: host_stats,
    artifact_name: host_artifact_name,
    wake: host_wake,
    metric: host_metric,
    metric_at: host_metric_at,
    describe: host_describe,
    reading_description: host_reading_description,
    map: host_map,
    sensor_name: host_sensor_name,
    swap: host_swap,
    swap_outcome: host_swap_outcome,
    body_bounds: host_body_bounds,
    attach: host_attach,
    detach: host_detach,
    attachment: host_attachment,
    overlay: host_overlay,
    overlay_shapes: host_overlay_shapes,
    idle: host_idle,
    ray_cast_many: host_ray_cast_many,
    body_color: host_body_color,
};
