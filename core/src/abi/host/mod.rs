//! The host functions plugins call: the `SsxHostApi` table, its entries grouped by family of
//! calls (world, commands, joints, rays, readings, extensions), and the frame of the call they reach
//! (frame.rs).

use ssx_sdk::abi::*;

mod commands;
mod extensions;
mod frame;
mod joints;
mod rays;
mod readings;
mod refusal;
mod world;

use commands::*;
use extensions::*;
pub(super) use frame::{Frame, FrameKind, with_frame, with_frames};
use joints::*;
use rays::*;
use readings::*;
use world::*;

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
    joint_state: host_joint_state,
    joint_name: host_joint_name,
    set_joint_motor: host_set_joint_motor,
    add_joint_effort: host_add_joint_effort,
    robot_model: host_robot_model,
};
