//! Joints in the plane: a revolute joint turns about the vertical (its axis must be vertical),
//! a prismatic one slides along a horizontal axis, a fixed one holds; their motor commands and
//! efforts as the `rapier` engine drives them; and the links of one robot model kept from
//! touching each other.

use rapier2d::math::{Pose as RPose, Vector as RVec};
use rapier2d::prelude::*;
use ssx_core::engine::{BodyId, JointId, JointKind, JointSpec};
use ssx_core::math::{Pose, Vec3};

use crate::PlanarEngine;
use crate::convert::{heading, rot};

/// A joint as the engine drives it.
pub(crate) struct JointRecord {
    pub(crate) handle: ImpulseJointHandle,
    /// The axis it frees (`AngX` for a fixed joint, which frees none).
    axis: JointAxis,
    /// -1 for a revolute joint whose axis points down: its angles run the other way round.
    sign: f32,
    /// Its own motor's gains, if its artifact gave it one.
    pub(crate) motor: Option<[f64; 2]>,
    /// The largest effort a motor or an effort command may apply.
    max: f32,
}

impl PlanarEngine {
    /// A joint frame (in its body's frame as built, tilt included) in the body's plane frame,
    /// with the joint axis in world axes.
    fn joint_frame(&self, body: BodyId, frame: &Pose) -> Result<(RPose, Vec3), String> {
        let b = self.bodies.get(body.index()).ok_or("no such body")?;
        let f = Pose::from_parts(Vec3::zeros().into(), b.tilt) * frame;
        let axis = f.rotation * Vec3::x();
        let t = f.translation.vector;
        Ok((
            RPose::from_parts(RVec::new(t.x as f32, t.y as f32), rot(heading(&f.rotation))),
            axis,
        ))
    }

    /// Makes `spec`'s joint (see the module's doc).
    pub(crate) fn joint(&mut self, spec: &JointSpec) -> Result<JointId, String> {
        let h1 = self
            .bodies
            .get(spec.body1.index())
            .ok_or("no such parent body")?
            .handle;
        let h2 = self
            .bodies
            .get(spec.body2.index())
            .ok_or("no such child body")?
            .handle;
        let (mut f1, axis) = self.joint_frame(spec.body1, &spec.frame1)?;
        let (mut f2, _) = self.joint_frame(spec.body2, &spec.frame2)?;
        let (mask, free, sign) = match spec.kind {
            JointKind::Fixed => (JointAxesMask::LOCKED_FIXED_AXES, JointAxis::AngX, 1.0),
            JointKind::Revolute { .. } => {
                if axis.z.abs() < 1.0 - 1e-6 {
                    return Err(format!(
                        "the planar engine turns joints about the vertical only: this revolute joint's axis is ({:.3}, {:.3}, {:.3})",
                        axis.x, axis.y, axis.z
                    ));
                }
                (
                    JointAxesMask::LOCKED_REVOLUTE_AXES,
                    JointAxis::AngX,
                    axis.z.signum() as f32,
                )
            }
            JointKind::Prismatic { .. } => {
                if axis.z.abs() > 1e-6 {
                    return Err(format!(
                        "the planar engine slides joints in the plane only: this prismatic joint's axis is ({:.3}, {:.3}, {:.3})",
                        axis.x, axis.y, axis.z
                    ));
                }
                // The joint frames' x axes along the slide, as seen from above.
                let turn = |f: RPose, along: f64| RPose::from_parts(f.translation, rot(along));
                let b1 = &self.world.bodies[h1];
                let b2 = &self.world.bodies[h2];
                let world = axis.y.atan2(axis.x);
                // The slide's heading in each body's plane frame, from the world heading.
                f1 = turn(f1, world - b1.rotation().angle() as f64);
                f2 = turn(f2, world - b2.rotation().angle() as f64);
                (JointAxesMask::LOCKED_PRISMATIC_AXES, JointAxis::LinX, 1.0)
            }
        };
        let mut joint = GenericJointBuilder::new(mask)
            .local_frame1(f1)
            .local_frame2(f2)
            .contacts_enabled(false);
        let max = spec.dynamics.max_effort.min(f32::MAX as f64) as f32;
        if spec.kind.movable() {
            if let Some([lo, hi]) = spec.kind.limits() {
                let (lo, hi) = (lo as f32 * sign, hi as f32 * sign);
                joint = joint.limits(free, [lo.min(hi), lo.max(hi)]);
            }
            let [stiffness, damping] = spec.kind.motor().unwrap_or([0.0, spec.dynamics.damping]);
            if stiffness > 0.0 || damping > 0.0 {
                joint = joint
                    .motor_model(free, MotorModel::ForceBased)
                    .motor_position(free, 0.0, stiffness as f32, damping as f32)
                    .motor_max_force(free, max);
            }
        }
        let handle = self.world.impulse_joints.insert(h1, h2, joint, true);
        self.joints.push(JointRecord {
            handle,
            axis: free,
            sign,
            motor: spec.kind.motor(),
            max,
        });
        Ok(JointId(self.joints.len() as u32 - 1))
    }

    /// Sets a joint's motor: towards `position` and `velocity` with these gains.
    pub(crate) fn drive(
        &mut self,
        joint: JointId,
        position: f64,
        velocity: f64,
        stiffness: f64,
        damping: f64,
    ) {
        let Some(record) = self.joints.get(joint.0 as usize) else {
            return;
        };
        let (axis, max, sign) = (record.axis, record.max, record.sign);
        let Some(j) = self.world.impulse_joints.get_mut(record.handle, true) else {
            return;
        };
        for body in [j.body1(), j.body2()] {
            if let Some(rb) = self.world.bodies.get_mut(body)
                && rb.is_dynamic()
            {
                *rb.activation_mut() = RigidBodyActivation::cannot_sleep();
            }
        }
        j.data
            .set_motor_model(axis, MotorModel::ForceBased)
            .set_motor(
                axis,
                position as f32 * sign,
                velocity as f32 * sign,
                stiffness as f32,
                damping as f32,
            )
            .set_motor_max_force(axis, max);
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
        let effort = (effort as f32).clamp(-record.max, record.max) * record.sign;
        let (b1, b2) = (j.body1(), j.body2());
        let at = self.world.bodies[b1].position() * j.data.local_frame1;
        let angular = record.axis == JointAxis::AngX;
        let push = at.rotation.transform_vector(RVec::X) * effort;
        for (body, s) in [(b2, 1.0), (b1, -1.0)] {
            let rb = &mut self.world.bodies[body];
            if !rb.is_dynamic() {
                continue;
            }
            if angular {
                rb.add_torque(effort * s, true);
            } else {
                rb.add_force_at_point(push * s, at.translation, true);
            }
            self.forced.push(body);
        }
    }
}

/// A collider's user data: its body's id in the low 32 bits, its body's collision group in
/// bits 64 to 95 (as the `rapier` engine keeps them).
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
