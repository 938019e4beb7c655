//! The joint commands every engine with motorised joints routes alike: [`route_command`].

use super::{BodyCommand, BodyId, JointId};

/// What an engine with motorised joints does with them: the three joint commands routed by
/// [`route_command`].
pub trait JointDrive {
    /// The gains of a joint's own motor, if its artifact gave it one.
    fn motor_gains(&self, joint: JointId) -> Option<[f64; 2]>;
    /// Drives a joint towards `position` and `velocity` with these gains.
    fn drive(&mut self, joint: JointId, position: f64, velocity: f64, stiffness: f64, damping: f64);
    /// An effort along (or about) a joint's axis for one step.
    fn effort(&mut self, joint: JointId, effort: f64);
}

/// Hands a command's joint part to `engine` (a target with the joint's own gains, where it has
/// a motor; a motor command; an effort) and returns the body a body command is for (None for a
/// joint command, and for `Attach` and `Detach`, which are not [`super::PhysicEngine::apply`]'s).
pub fn route_command(engine: &mut impl JointDrive, command: &BodyCommand) -> Option<BodyId> {
    match *command {
        BodyCommand::JointTarget {
            joint,
            position,
            velocity,
        } => {
            if let Some([stiffness, damping]) = engine.motor_gains(joint) {
                engine.drive(joint, position, velocity, stiffness, damping);
            }
            None
        }
        BodyCommand::JointMotor {
            joint,
            position,
            velocity,
            stiffness,
            damping,
        } => {
            engine.drive(joint, position, velocity, stiffness, damping);
            None
        }
        BodyCommand::JointEffort { joint, effort } => {
            engine.effort(joint, effort);
            None
        }
        BodyCommand::Attach { .. } | BodyCommand::Detach { .. } => None,
        BodyCommand::Force { body, .. }
        | BodyCommand::ForceAtPoint { body, .. }
        | BodyCommand::Torque { body, .. }
        | BodyCommand::Velocity { body, .. } => Some(body),
    }
}
