//! Host calls that read the world: time, gravity, artifacts and their names, statistics,
//! bodies (state, mass, inertia, contacts, colour, bounds), neighbours and the map.

use crate::engine::{BodyId, Contact};
use crate::math::Point3;
use crate::world::ArtifactId;
use ssx_sdk::abi::*;
use std::ffi::c_char;

use super::frame::*;
use super::refusal::Refusal;

pub(super) unsafe extern "C" fn host_time(
    ctx: SsxCtx,
    time: *mut f64,
    step: *mut u64,
) -> SsxStatus {
    host(ctx, |f| {
        *out(time)? = f.world.time;
        *out(step)? = f.world.step;
        Ok(())
    })
}

pub(super) unsafe extern "C" fn host_gravity(ctx: SsxCtx, gravity: *mut f64) -> SsxStatus {
    host(ctx, |f| {
        let g = f.world.gravity;
        write_array(gravity, [g.x, g.y, g.z])
    })
}

pub(super) unsafe extern "C" fn host_artifact_count(ctx: SsxCtx, count: *mut u32) -> SsxStatus {
    host(ctx, |f| {
        *out(count)? = f.world.artifact_count() as u32;
        Ok(())
    })
}

pub(super) unsafe extern "C" fn host_artifact_by_name(
    ctx: SsxCtx,
    n: *const c_char,
    artifact: *mut u32,
) -> SsxStatus {
    host(ctx, |f| {
        *out(artifact)? = f
            .world
            .artifact_by_name(name(n)?)
            .ok_or(Refusal::NotFound)?
            .0;
        Ok(())
    })
}

pub(super) unsafe extern "C" fn host_artifact_name(
    ctx: SsxCtx,
    artifact: u32,
    buf: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        if artifact as usize >= f.world.artifact_count() {
            return Err(Refusal::OutOfRange);
        }
        copy_name(
            &f.world.artifact(ArtifactId(artifact)).name,
            buf,
            capacity,
            len,
        )
    })
}

pub(super) unsafe extern "C" fn host_sensor_name(
    ctx: SsxCtx,
    artifact: u32,
    sensor: u32,
    buf: *mut c_char,
    capacity: usize,
    len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        if artifact as usize >= f.world.artifact_count() {
            return Err(Refusal::OutOfRange);
        }
        let name = f
            .world
            .artifact(ArtifactId(artifact))
            .sensor_names
            .get(sensor as usize)
            .ok_or(Refusal::OutOfRange)?;
        copy_name(name, buf, capacity, len)
    })
}

pub(super) unsafe extern "C" fn host_stats(ctx: SsxCtx, stats: *mut SsxStats) -> SsxStatus {
    host(ctx, |f| {
        let FrameKind::Extension { stats: view, .. } = &f.kind else {
            return Err(Refusal::WrongPhase);
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

pub(super) unsafe extern "C" fn host_body_count(
    ctx: SsxCtx,
    artifact: u32,
    count: *mut u32,
) -> SsxStatus {
    host(ctx, |f| {
        if artifact as usize >= f.world.artifact_count() {
            return Err(Refusal::OutOfRange);
        }
        *out(count)? = f.world.artifact(ArtifactId(artifact)).bodies.len() as u32;
        Ok(())
    })
}

pub(super) unsafe extern "C" fn host_body_state(
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

pub(super) unsafe extern "C" fn host_body_mass(
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

pub(super) unsafe extern "C" fn host_body_inertia(
    ctx: SsxCtx,
    artifact: u32,
    body: u32,
    inertia: *mut f64,
) -> SsxStatus {
    host(ctx, |f| {
        let i = f.world.inertia(body_of(f.world, artifact, body)?);
        write_array(inertia, [i.x, i.y, i.z])
    })
}

pub(super) unsafe extern "C" fn host_contacts(
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
            return Err(Refusal::InvalidArgument);
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

pub(super) unsafe extern "C" fn host_body_color(
    ctx: SsxCtx,
    artifact: u32,
    body: u32,
    rgba: *mut f32,
) -> SsxStatus {
    host(ctx, |f| {
        let c = f.world.color(body_of(f.world, artifact, body)?);
        write_array(rgba, c)
    })
}

pub(super) unsafe extern "C" fn host_neighbours(
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
            return Err(Refusal::InvalidArgument);
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

pub(super) unsafe extern "C" fn host_map(
    ctx: SsxCtx,
    info: *mut SsxMapInfo,
    cells: *mut u8,
    capacity: usize,
) -> SsxStatus {
    host(ctx, |f| {
        if matches!(f.kind, FrameKind::Sensor { .. }) {
            return Err(Refusal::WrongPhase);
        }
        let info = out(info)?;
        let map = f.world.map().ok_or(Refusal::NotFound)?;
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
            return Err(Refusal::OutOfRange);
        }
        // SAFETY: `capacity` writable bytes at `cells` per the ABI, checked to hold them all.
        unsafe { std::ptr::copy_nonoverlapping(map.cells.as_ptr(), cells, map.cells.len()) };
        Ok(())
    })
}

pub(super) unsafe extern "C" fn host_body_bounds(
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
            .ok_or(Refusal::NotFound)?;
        write_array(min, [lo.x, lo.y, lo.z])?;
        write_array(max, [hi.x, hi.y, hi.z])
    })
}
