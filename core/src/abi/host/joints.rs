//! Host calls on joints and robot models: what each joint is and where it stands, its name,
//! the motor and effort commands drivers give their own joints, and an artifact's robot model.

use crate::engine::{JointId, JointKind};
use crate::world::{ArtifactId, World};
use ssx_sdk::abi::*;
use std::ffi::c_char;

use super::frame::*;
use super::refusal::Refusal;

/// The id of joint `joint` of `artifact`.
fn joint_of(world: &World<'_>, artifact: u32, joint: u32) -> Result<JointId, Refusal> {
    if artifact as usize >= world.artifact_count() {
        return Err(Refusal::OutOfRange);
    }
    let joints = &world.artifact(ArtifactId(artifact)).joints;
    let id = joints
        .start
        .checked_add(joint)
        .filter(|&id| id < joints.end)
        .ok_or(Refusal::OutOfRange)?;
    Ok(JointId(id))
}

pub(super) unsafe extern "C" fn host_joint_state(
    ctx: SsxCtx,
    artifact: u32,
    joint: u32,
    state: *mut SsxJointState,
) -> SsxStatus {
    host(ctx, |f| {
        let id = joint_of(f.world, artifact, joint)?;
        let spec = f.world.joint(id).ok_or(Refusal::OutOfRange)?;
        let reading = f.world.joint_reading(id).ok_or(Refusal::OutOfRange)?;
        let [lower, upper] = spec
            .kind
            .limits()
            .unwrap_or([f64::NEG_INFINITY, f64::INFINITY]);
        *out(state)? = SsxJointState {
            kind: match spec.kind {
                JointKind::Fixed => SSX_JOINT_FIXED,
                JointKind::Revolute { .. } => SSX_JOINT_REVOLUTE,
                JointKind::Prismatic { .. } => SSX_JOINT_PRISMATIC,
            },
            motorised: u32::from(spec.kind.motor().is_some()),
            position: reading.position,
            velocity: reading.velocity,
            limits: [lower, upper],
            max_effort: spec.dynamics.max_effort,
        };
        Ok(())
    })
}

pub(super) unsafe extern "C" fn host_joint_name(
    ctx: SsxCtx,
    artifact: u32,
    joint: u32,
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
            .joint_names
            .get(joint as usize)
            .ok_or(Refusal::OutOfRange)?;
        copy_name(name, buf, capacity, len)
    })
}

pub(super) unsafe extern "C" fn host_set_joint_motor(
    ctx: SsxCtx,
    joint: u32,
    position: f64,
    velocity: f64,
    stiffness: f64,
    damping: f64,
) -> SsxStatus {
    host(ctx, |f| {
        Ok(commands(f)?.joint_motor(joint as usize, position, velocity, stiffness, damping)?)
    })
}

pub(super) unsafe extern "C" fn host_add_joint_effort(
    ctx: SsxCtx,
    joint: u32,
    effort: f64,
) -> SsxStatus {
    host(ctx, |f| {
        Ok(commands(f)?.joint_effort(joint as usize, effort)?)
    })
}

pub(super) unsafe extern "C" fn host_robot_model(
    ctx: SsxCtx,
    artifact: u32,
    text: *mut *const c_char,
    len: *mut usize,
) -> SsxStatus {
    host(ctx, |f| {
        if artifact as usize >= f.world.artifact_count() {
            return Err(Refusal::OutOfRange);
        }
        let model = f
            .world
            .artifact(ArtifactId(artifact))
            .robot_model
            .as_deref()
            .ok_or(Refusal::NotFound)?;
        *out(text)? = model.as_ptr().cast();
        *out(len)? = model.len();
        Ok(())
    })
}
