//! Driving joints: the motor commands (a position or rate with gains) and efforts (a torque
//! or force along the joint axis for one step), each bounded by the joint's effort limit; and
//! the links of one robot model kept from touching each other (its collision group).

use rapier3d::prelude::*;
use ssx_core::engine::{BodyId, JointId};

use crate::RapierEngine;

/// A joint as the engine drives it.
pub(crate) struct JointRecord {
    pub(crate) handle: ImpulseJointHandle,
    /// The axis it frees (`AngX` for a fixed joint, which frees none).
    pub(crate) axis: JointAxis,
    /// Its own motor's gains, if its artifact gave it one.
    pub(crate) motor: Option<[f64; 2]>,
    /// The largest effort a motor or an effort command may apply.
    pub(crate) max: f32,
    /// Its bodies were kept from sleeping by an earlier motor command.
    pub(crate) held: bool,
}

impl RapierEngine {
    /// Sets a joint's motor: towards `position` and `velocity` with these gains.
    pub(crate) fn drive(
        &mut self,
        joint: JointId,
        position: f64,
        velocity: f64,
        stiffness: f64,
        damping: f64,
    ) {
        let Some(record) = self.joints.get_mut(joint.0 as usize) else {
            return;
        };
        let (axis, max) = (record.axis, record.max);
        let wanted = [position, velocity, stiffness, damping].map(|x| x as f32);
        // The same command as the one in force (a constant rate, a held position) changes
        // nothing: Rapier's mutable joint access would mark the joint modified and make its
        // solver set up every joint's constraints afresh, each step.
        if record.held
            && let Some(j) = self.world.impulse_joints.get(record.handle)
        {
            let m = &j.data.motors[axis as usize];
            if j.data.motor_axes.contains(axis.into())
                && m.model == MotorModel::ForceBased
                && [m.target_pos, m.target_vel, m.stiffness, m.damping] == wanted
                && m.max_force == max
            {
                return;
            }
        }
        let hold = !record.held;
        record.held = true;
        if let Some(j) = self.world.impulse_joints.get_mut(record.handle, true) {
            // A driven joint's bodies never sleep: a motor does not wake a body that came to
            // rest on its way to a new target (a rate command through zero).
            if hold {
                for body in [j.body1(), j.body2()] {
                    if let Some(rb) = self.world.bodies.get_mut(body)
                        && rb.is_dynamic()
                    {
                        *rb.activation_mut() = RigidBodyActivation::cannot_sleep();
                    }
                }
            }
            let [position, velocity, stiffness, damping] = wanted;
            j.data
                .set_motor_model(axis, MotorModel::ForceBased)
                .set_motor(axis, position, velocity, stiffness, damping)
                .set_motor_max_force(axis, max);
        }
    }

    /// Pushes a joint's child along (or about) the joint axis and its parent back, for one
    /// step.
    pub(crate) fn joint_effort(&mut self, joint: JointId, effort: f64) {
        let Some(record) = self.joints.get(joint.0 as usize) else {
            return;
        };
        let Some(j) = self.world.impulse_joints.get(record.handle) else {
            return;
        };
        let effort = (effort as f32).clamp(-record.max, record.max);
        let (b1, b2) = (j.body1(), j.body2());
        let frame1 = j.data.local_frame1;
        let angular = record.axis == JointAxis::AngX;
        let at = self.world.bodies[b1].position() * frame1;
        let push = at.rotation * Vector::X * effort;
        let point = at.translation;
        for (body, sign) in [(b2, 1.0), (b1, -1.0)] {
            let rb = &mut self.world.bodies[body];
            if !rb.is_dynamic() {
                continue;
            }
            if angular {
                rb.add_torque(push * sign, true);
            } else {
                rb.add_force_at_point(push * sign, point, true);
            }
            self.forced.push(body);
        }
    }
}

/// A collider's user data: its body's id in the low 32 bits (what every query reads back with
/// `as u32`), its body's collision group in bits 64 to 95.
pub(crate) fn collider_data(body: BodyId, group: u32) -> u128 {
    u128::from(body.0) | (u128::from(group) << 64)
}

/// The hook that keeps colliders of one non-zero group apart (a robot model's links).
pub(crate) struct SelfCollision;

impl PhysicsHooks for SelfCollision {
    fn filter_contact_pair(&self, c: &PairFilterContext) -> Option<SolverFlags> {
        let group = |h: ColliderHandle| c.colliders.get(h).map_or(0, |co| co.user_data >> 64);
        let (a, b) = (group(c.collider1), group(c.collider2));
        if a != 0 && a == b {
            None
        } else {
            Some(SolverFlags::COMPUTE_RIGID_IMPULSES)
        }
    }
    fn filter_intersection_pair(&self, _: &PairFilterContext) -> bool {
        true
    }
    fn modify_solver_contacts(&self, _: &mut ContactModificationContext) {}
}
