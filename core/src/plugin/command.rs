//! What drivers write during a step: forces, torques, velocities and joint targets, checked
//! and kept per artifact until the next step applies them.

use crate::engine::{BodyCommand, BodyId, BodyKind, JointId, JointKind};
use crate::math::{Point3, Pose, Vec3};
use crate::world::World;

/// Why a driver's command was refused: the host maps each kind to its own status code, so the
/// text never has to be read back.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CommandError {
    /// An index past the artifact's bodies.
    #[error("body index {index} out of range: the artifact has {count} bodies")]
    Body {
        /// The index given.
        index: usize,
        /// How many there are.
        count: u32,
    },
    /// An index past the artifact's joints.
    #[error("joint index {index} out of range: the artifact has {count} joints")]
    Joint {
        /// The index given.
        index: usize,
        /// How many there are.
        count: u32,
    },
    /// A joint target for a joint without a motor.
    #[error("joint {0} has no motor: give it \"motor\" in the artifact file")]
    NoMotor(usize),
    /// A motor or an effort for a fixed joint.
    #[error("joint {0} is fixed: only revolute and prismatic joints move")]
    Fixed(usize),
    /// A body id past the world's bodies.
    #[error("no body {0}")]
    NoBody(u32),
    /// Holding a body that is not dynamic.
    #[error("body {body} is {kind:?}: only a dynamic body can be held")]
    NotDynamic {
        /// The body.
        body: u32,
        /// What it is.
        kind: BodyKind,
    },
    /// Holding one of the artifact's own bodies.
    #[error("an artifact cannot hold its own body ({0})")]
    OwnBody(u32),
    /// Holding a body another artifact holds.
    #[error("body {body} is held by artifact '{by}'")]
    HeldElsewhere {
        /// The body.
        body: u32,
        /// The artifact holding it.
        by: String,
    },
    /// Releasing a body the artifact does not hold.
    #[error("body {0} is not held by this artifact")]
    NotHeld(u32),
    /// A value that is not finite.
    #[error("{what} is not finite: {value}")]
    NotFinite {
        /// What it is (`force`, `point`, ...).
        what: &'static str,
        /// The value, as written.
        value: String,
    },
}

impl From<CommandError> for String {
    fn from(e: CommandError) -> String {
        e.to_string()
    }
}

/// Where a driver writes its commands for the next step. Only the artifact's own bodies can be
/// commanded; every vector must be finite.
#[derive(Debug, Default)]
pub struct CommandBuffer {
    bodies: std::ops::Range<u32>,
    /// The artifact's joints, and what each is.
    joints: std::ops::Range<u32>,
    kinds: Vec<JointKind>,
    commands: Vec<BodyCommand>,
}

impl CommandBuffer {
    /// Hints the cache to fetch the commands' list (see [`crate::prefetch`]).
    pub(crate) fn prefetch(&self) {
        crate::prefetch::value(self.commands.as_slice());
    }

    pub(crate) fn new(
        bodies: std::ops::Range<u32>,
        joints: std::ops::Range<u32>,
        kinds: Vec<JointKind>,
    ) -> Self {
        Self {
            bodies,
            joints,
            kinds,
            commands: Vec::new(),
        }
    }

    /// Adds a command. The first takes room for one: most drivers give one command a step,
    /// and a batch of small worlds holds a buffer a driver (`Vec`'s first growth is four).
    fn push(&mut self, command: BodyCommand) {
        if self.commands.capacity() == 0 {
            self.commands.reserve_exact(1);
        }
        self.commands.push(command);
    }

    /// The id and kind of the artifact's `joint`-th joint.
    fn joint(&self, joint: usize) -> Result<(JointId, JointKind), CommandError> {
        let n = self.joints.end - self.joints.start;
        let local = u32::try_from(joint)
            .ok()
            .filter(|&l| l < n)
            .ok_or(CommandError::Joint {
                index: joint,
                count: n,
            })?;
        Ok((
            JointId(self.joints.start + local),
            self.kinds[local as usize],
        ))
    }

    fn finite_all(what: &'static str, values: &[f64]) -> Result<(), CommandError> {
        if values.iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(CommandError::NotFinite {
                what,
                value: format!("{values:?}"),
            })
        }
    }

    /// Drives the artifact's `joint`-th joint (a revolute or prismatic joint with a motor)
    /// towards a position and rate with the motor's own gains; the target holds until the
    /// next one.
    pub fn joint_target(
        &mut self,
        joint: usize,
        position: f64,
        velocity: f64,
    ) -> Result<(), CommandError> {
        let (id, kind) = self.joint(joint)?;
        if kind.motor().is_none() {
            return Err(CommandError::NoMotor(joint));
        }
        Self::finite_all("joint target", &[position, velocity])?;
        self.push(BodyCommand::JointTarget {
            joint: id,
            position,
            velocity,
        });
        Ok(())
    }

    /// Drives the artifact's `joint`-th joint (revolute or prismatic, motor or not) with these
    /// gains towards a position and rate (stiffness 0: the rate alone); it holds until the next
    /// command. Gains must not be negative.
    pub fn joint_motor(
        &mut self,
        joint: usize,
        position: f64,
        velocity: f64,
        stiffness: f64,
        damping: f64,
    ) -> Result<(), CommandError> {
        let (id, kind) = self.joint(joint)?;
        if !kind.movable() {
            return Err(CommandError::Fixed(joint));
        }
        Self::finite_all("joint motor", &[position, velocity, stiffness, damping])?;
        if stiffness < 0.0 || damping < 0.0 {
            return Err(CommandError::NotFinite {
                what: "joint gains (they must be finite and not negative)",
                value: format!("{stiffness}, {damping}"),
            });
        }
        self.push(BodyCommand::JointMotor {
            joint: id,
            position,
            velocity,
            stiffness,
            damping,
        });
        Ok(())
    }

    /// An effort (N·m or N) on the artifact's `joint`-th joint (revolute or prismatic) for the
    /// next step.
    pub fn joint_effort(&mut self, joint: usize, effort: f64) -> Result<(), CommandError> {
        let (id, kind) = self.joint(joint)?;
        if !kind.movable() {
            return Err(CommandError::Fixed(joint));
        }
        Self::finite_all("joint effort", &[effort])?;
        self.commands
            .push(BodyCommand::JointEffort { joint: id, effort });
        Ok(())
    }

    pub(crate) fn drain(&mut self) -> std::vec::Drain<'_, BodyCommand> {
        self.commands.drain(..)
    }

    /// Commands queued so far this step.
    pub fn commands(&self) -> &[BodyCommand] {
        &self.commands
    }

    fn body(&self, local: usize) -> Result<BodyId, CommandError> {
        let n = self.bodies.end - self.bodies.start;
        u32::try_from(local)
            .ok()
            .filter(|&l| l < n)
            .map(|l| BodyId(self.bodies.start + l))
            .ok_or(CommandError::Body {
                index: local,
                count: n,
            })
    }

    fn finite(what: &'static str, v: &Vec3) -> Result<(), CommandError> {
        if v.iter().all(|x| x.is_finite()) {
            Ok(())
        } else {
            Err(CommandError::NotFinite {
                what,
                value: format!("{v:?}"),
            })
        }
    }

    /// A force (world frame, N) at the centre of mass of the artifact's `body`-th body.
    pub fn force(&mut self, body: usize, force: Vec3) -> Result<(), CommandError> {
        let body = self.body(body)?;
        Self::finite("force", &force)?;
        self.push(BodyCommand::Force { body, force });
        Ok(())
    }

    /// A force (world frame) at a point (world frame).
    pub fn force_at_point(
        &mut self,
        body: usize,
        force: Vec3,
        point: Point3,
    ) -> Result<(), CommandError> {
        let body = self.body(body)?;
        Self::finite("force", &force)?;
        Self::finite("point", &point.coords)?;
        self.commands
            .push(BodyCommand::ForceAtPoint { body, force, point });
        Ok(())
    }

    /// A torque (world frame, N·m).
    pub fn torque(&mut self, body: usize, torque: Vec3) -> Result<(), CommandError> {
        let body = self.body(body)?;
        Self::finite("torque", &torque)?;
        self.push(BodyCommand::Torque { body, torque });
        Ok(())
    }

    /// Holds `target` (a dynamic body, of any artifact) with the artifact's `carrier`-th body
    /// from the next step on, at `offset` (its pose in the carrier's frame); a body held already
    /// by this artifact is moved to the new offset. `world` checks the target: it must exist,
    /// be dynamic and not be held by another artifact. The engine must have
    /// [`crate::engine::Capabilities::attach`] (else the Environment logs the refusal).
    pub fn attach(
        &mut self,
        world: &World<'_>,
        carrier: usize,
        target: BodyId,
        offset: Pose,
    ) -> Result<(), CommandError> {
        let carrier = self.body(carrier)?;
        if target.index() >= world.bodies().len() {
            return Err(CommandError::NoBody(target.0));
        }
        let kind = world.kind(target);
        if kind != BodyKind::Dynamic {
            return Err(CommandError::NotDynamic {
                body: target.0,
                kind,
            });
        }
        if self.bodies.contains(&target.0) {
            return Err(CommandError::OwnBody(target.0));
        }
        if let Some((other, _)) = world.attachment(target)
            && !self.bodies.contains(&other.0)
        {
            return Err(CommandError::HeldElsewhere {
                body: target.0,
                by: world.artifact(world.owner(other)).name.clone(),
            });
        }
        Self::finite("offset", &offset.translation.vector)?;
        if !offset.rotation.coords.iter().all(|x| x.is_finite()) {
            return Err(CommandError::NotFinite {
                what: "offset rotation",
                value: format!("{:?}", offset.rotation.coords),
            });
        }
        self.push(BodyCommand::Attach {
            body: target,
            carrier,
            offset,
        });
        Ok(())
    }

    /// Releases `target` from the next step on; it must be held by one of the artifact's
    /// bodies (as of this step).
    pub fn detach(&mut self, world: &World<'_>, target: BodyId) -> Result<(), CommandError> {
        if target.index() >= world.bodies().len() {
            return Err(CommandError::NoBody(target.0));
        }
        match world.attachment(target) {
            Some((carrier, _)) if self.bodies.contains(&carrier.0) => {
                self.push(BodyCommand::Detach { body: target });
                Ok(())
            }
            _ => Err(CommandError::NotHeld(target.0)),
        }
    }

    /// The velocity of a kinematic body (world frame).
    pub fn velocity(
        &mut self,
        body: usize,
        linear: Vec3,
        angular: Vec3,
    ) -> Result<(), CommandError> {
        let body = self.body(body)?;
        Self::finite("linear velocity", &linear)?;
        Self::finite("angular velocity", &angular)?;
        self.push(BodyCommand::Velocity {
            body,
            linear,
            angular,
        });
        Ok(())
    }
}
