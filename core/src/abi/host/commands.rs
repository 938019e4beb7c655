//! Host calls that act on the world: forces, torques, velocities, joint targets, and
//! attaching one body to another (the gripper).

use crate::math::Point3;
use ssx_sdk::abi::*;
use std::ffi::c_char;

use super::frame::*;
use super::refusal::Refusal;

pub(super) unsafe extern "C" fn host_add_force(
    ctx: SsxCtx,
    body: u32,
    force: *const f64,
) -> SsxStatus {
    host(ctx, |f| {
        let force = vec3(force)?;
        Ok(commands(f)?.force(body as usize, force)?)
    })
}

pub(super) unsafe extern "C" fn host_add_force_at_point(
    ctx: SsxCtx,
    body: u32,
    force: *const f64,
    point: *const f64,
) -> SsxStatus {
    host(ctx, |f| {
        let (force, point) = (vec3(force)?, Point3::from(vec3(point)?));
        Ok(commands(f)?.force_at_point(body as usize, force, point)?)
    })
}

pub(super) unsafe extern "C" fn host_add_torque(
    ctx: SsxCtx,
    body: u32,
    torque: *const f64,
) -> SsxStatus {
    host(ctx, |f| {
        let torque = vec3(torque)?;
        Ok(commands(f)?.torque(body as usize, torque)?)
    })
}

pub(super) unsafe extern "C" fn host_set_velocity(
    ctx: SsxCtx,
    body: u32,
    linear: *const f64,
    angular: *const f64,
) -> SsxStatus {
    host(ctx, |f| {
        let (l, a) = (vec3(linear)?, vec3(angular)?);
        Ok(commands(f)?.velocity(body as usize, l, a)?)
    })
}

pub(super) unsafe extern "C" fn host_joint_index(
    ctx: SsxCtx,
    n: *const c_char,
    joint: *mut u32,
) -> SsxStatus {
    host(ctx, |f| {
        let artifact = f.artifact.ok_or(Refusal::WrongPhase)?;
        let idx = f
            .world
            .artifact(artifact)
            .joint_index(name(n)?)
            .ok_or(Refusal::NotFound)?;
        *out(joint)? = idx as u32;
        Ok(())
    })
}

pub(super) unsafe extern "C" fn host_set_joint_target(
    ctx: SsxCtx,
    joint: u32,
    position: f64,
    velocity: f64,
) -> SsxStatus {
    host(ctx, |f| {
        Ok(commands(f)?.joint_target(joint as usize, position, velocity)?)
    })
}

pub(super) unsafe extern "C" fn host_attach(
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
            return Err(Refusal::InvalidArgument);
        }
        // SAFETY: a non-null `double[4]` per the ABI.
        let [w, i, j, k] = unsafe { *orientation.cast::<[f64; 4]>() };
        let q = crate::math::nalgebra::Quaternion::new(w, i, j, k);
        if !(q.coords.iter().all(|x| x.is_finite()) && q.norm() > 1e-9) {
            return Err(Refusal::InvalidArgument);
        }
        let offset = crate::math::Pose::from_parts(
            translation.into(),
            crate::math::Rotation::new_normalize(q),
        );
        let world = f.world;
        Ok(commands(f)?.attach(world, carrier as usize, target, offset)?)
    })
}

pub(super) unsafe extern "C" fn host_detach(ctx: SsxCtx, artifact: u32, body: u32) -> SsxStatus {
    host(ctx, |f| {
        let target = body_of(f.world, artifact, body)?;
        let world = f.world;
        Ok(commands(f)?.detach(world, target)?)
    })
}

pub(super) unsafe extern "C" fn host_attachment(
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
        let (carrier, offset) = f.world.attachment(held).ok_or(Refusal::NotFound)?;
        let owner = f.world.owner(carrier);
        *out(carrier_artifact)? = owner.0;
        *out(carrier_body)? = f.world.local_index(carrier);
        let p = offset.translation.vector;
        let q = offset.rotation.quaternion();
        write_array(position, [p.x, p.y, p.z])?;
        write_array(orientation, [q.w, q.i, q.j, q.k])
    })
}
