//! Quadrotor drivers (`libssx_driver_quadrotor.so`).
//!
//! - `quadrotor`: a rigid body lifted by four rotors ([`airframe`]) and flown by a cascaded
//!   controller as in SwarmSimX sec. 3.1: an outer position loop ([`position`], floating point,
//!   fed by the artifact's motion-capture `pose` sensor) gives roll, pitch, yaw rate and thrust to
//!   an inner attitude loop ([`attitude`], integer fixed point, fed by the artifact's `imu`
//!   sensor) that sets the rotor speeds. The target comes from a [`trajectory`].
//! - `formation`: the same quadrotor and controller, its reference set by SwarmSimX sec. 3.2's
//!   artificial-potential formation keeping and obstacle avoidance ([`formation`]), from a
//!   `neighbours` and a `range` sensor.
//!
//! The rotors' physics uses the body's true state (it is the airframe); the controllers see only
//! their sensors.

pub mod aero;
pub mod airframe;
pub mod attitude;
pub mod battery;
mod check;
pub mod commands;
pub mod firmware;
pub mod formation;
pub mod polynomial;
pub mod position;
pub mod randomise;
pub mod reference;
pub mod teleop;
pub mod trajectory;

use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use serde::Deserialize;
use ssx_sdk::{Ctx, Driver, Init};

use airframe::{Airframe, AirframeParams};
use attitude::{AttitudeGains, AttitudeInput, AttitudeLoop, gyro_counts};
use battery::Battery;
use commands::{Command, Commands};
use position::{AttitudeCommand, PositionGains, PositionLoop};
use reference::Reference;
use trajectory::Trajectory;

/// Settings of the flight stack shared by both drivers.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlightParams {
    /// The rotors.
    #[serde(default)]
    pub airframe: AirframeParams,
    /// The inner loop.
    #[serde(default)]
    pub attitude: AttitudeGains,
    /// The outer loop.
    #[serde(default)]
    pub position: PositionGains,
    /// The artifact's IMU sensor.
    #[serde(default = "d_imu")]
    pub imu: String,
    /// The artifact's motion-capture (pose) sensor.
    #[serde(default = "d_pose")]
    pub pose: String,
    /// False: the motors stay off and the body falls.
    #[serde(default = "d_true")]
    pub armed: bool,
    /// Which flight controller flies it.
    #[serde(default)]
    pub controller: Controller,
    /// Mellinger's parameters by the firmware's `ctrlMel` names (its defaults unless set); read
    /// when `controller` is `"mellinger"`.
    #[serde(default)]
    pub mellinger: firmware::mellinger::MellingerParams,
}

/// The flight controllers a quadrotor can fly with.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Controller {
    /// SwarmSimX's cascade: the [`position`] loop on each motion-capture sample, the
    /// fixed-point [`attitude`] loop on each IMU sample (`attitude` and `position` set its
    /// gains).
    #[default]
    Cascaded,
    /// The Crazyflie 2.x firmware's PID controller with its default gains, its power
    /// distribution and its battery-compensated motor commands ([`firmware`]); `attitude` and
    /// `position` are not read.
    Pid,
    /// Mellinger's controller as the Crazyflie 2.x firmware runs it, at 500 Hz with its
    /// default gains, through the same power distribution and motor commands
    /// ([`firmware::mellinger`]); Crazyswarm's controller for trajectories. `attitude` and
    /// `position` are not read.
    Mellinger,
}

impl Default for FlightParams {
    fn default() -> Self {
        serde_json::from_str("{}").expect("defaults parse")
    }
}

fn d_imu() -> String {
    "imu".into()
}
fn d_pose() -> String {
    "mocap".into()
}
fn d_true() -> bool {
    true
}

fn quat(q: &[f64]) -> UnitQuaternion<f64> {
    UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3]))
}

/// Sensor indices, found at the first step.
#[derive(Clone, Copy, Debug)]
struct Sensors {
    imu: u32,
    pose: u32,
    /// The `neighbours` sensor the downwash reads, when the airframe has downwash.
    neighbours: Option<u32>,
}

/// The airframe and both loops, stepped once per world step.
pub struct Flight {
    params: FlightParams,
    airframe: Airframe,
    battery: Option<Battery>,
    inner: AttitudeLoop,
    outer: PositionLoop,
    sensors: Option<Sensors>,
    command: AttitudeCommand,
    /// Angular acceleration the inner loop asks for (rad/s², body frame).
    alpha: Vector3<f64>,
    last_imu: u64,
    last_pose: u64,
    fresh_mocap: Option<[i32; 2]>,
    last_input: Option<AttitudeInput>,
    /// The firmware's controller and its state estimate, when one flies.
    firmware: Option<Box<(firmware::Firmware, firmware::estimate::Estimate)>>,
    timestep: f64,
}

/// One step's view of the world a [`Flight`] needs, read through the ABI.
pub struct FlightInputs<'a> {
    /// Motion-capture reading and its step.
    pub pose: (&'a [f64], u64),
    /// IMU reading and its step.
    pub imu: (&'a [f64], u64),
    /// The body's true orientation (for the rotors' forces).
    pub orientation: UnitQuaternion<f64>,
    /// The body's true position (m, world; for the ground effect).
    pub position: Vector3<f64>,
    /// The body's true velocity (m/s, world; for the drag).
    pub velocity: Vector3<f64>,
    /// The `neighbours` reading the downwash reads (empty without downwash).
    pub neighbours: &'a [f64],
    /// Simulated time (s) and steps done.
    pub time: f64,
    /// Steps done.
    pub step: u64,
    /// Body mass and principal inertia.
    pub mass: f64,
    /// Principal inertia (kg·m²).
    pub inertia: Vector3<f64>,
    /// Gravity.
    pub gravity: Vector3<f64>,
}

impl Flight {
    /// A stack with these settings.
    pub fn new(params: FlightParams, timestep: f64) -> Result<Self, String> {
        params.mellinger.validate()?;
        let mut airframe = Airframe::new(params.airframe.clone(), timestep)?;
        airframe.armed = params.armed;
        let battery = params
            .airframe
            .battery
            .clone()
            .map(Battery::new)
            .transpose()?;
        Ok(Flight {
            battery,
            inner: AttitudeLoop::new(&params.attitude),
            outer: PositionLoop::new(params.position),
            airframe,
            sensors: None,
            command: AttitudeCommand::default(),
            alpha: Vector3::zeros(),
            last_imu: 0,
            last_pose: 0,
            fresh_mocap: None,
            last_input: None,
            firmware: match params.controller {
                Controller::Cascaded => None,
                Controller::Pid => Some(firmware::Firmware::Pid(Default::default())),
                Controller::Mellinger => Some(firmware::Firmware::Mellinger(
                    firmware::mellinger::Mellinger::new(params.mellinger.clone()),
                )),
            }
            .map(|c| Box::new((c, Default::default()))),
            timestep,
            params,
        })
    }

    /// The rotors.
    pub fn airframe(&self) -> &Airframe {
        &self.airframe
    }

    /// The battery, when the airframe has one.
    pub fn battery(&self) -> Option<&Battery> {
        self.battery.as_ref()
    }

    /// What the inner loop got at its last update (to record and replay it).
    pub fn last_attitude_input(&self) -> Option<AttitudeInput> {
        self.last_input
    }

    /// Reads the flight's sensors through the ABI.
    fn read<'c>(&mut self, ctx: &'c Ctx<'_>) -> Result<FlightInputs<'c>, String> {
        let me = ctx.artifact();
        let sensors = match self.sensors {
            Some(s) => s,
            None => *self.sensors.insert(Sensors {
                imu: ctx.own_sensor(&self.params.imu)?,
                pose: ctx.own_sensor(&self.params.pose)?,
                neighbours: match &self.params.airframe.downwash {
                    Some(d) => Some(ctx.own_sensor(&d.sensor)?),
                    None => None,
                },
            }),
        };
        let state = ctx.body_state(me, 0)?;
        let (time, step) = ctx.time()?;
        Ok(FlightInputs {
            pose: ctx.reading(me, sensors.pose)?,
            imu: ctx.reading(me, sensors.imu)?,
            orientation: quat(&state.orientation),
            position: state.position.into(),
            velocity: state.linear_velocity.into(),
            neighbours: match sensors.neighbours {
                Some(n) => ctx.reading(me, n)?.0,
                None => &[],
            },
            time,
            step,
            mass: ctx.body_mass(me, 0)?,
            inertia: ctx.body_inertia(me, 0)?.into(),
            gravity: ctx.gravity()?.into(),
        })
    }

    /// One world step towards `reference` (given the motion-capture state, it may depend on
    /// it and on the time since the last motion-capture update). Returns the force and torque on the body, world frame.
    pub fn step(
        &mut self,
        inputs: &FlightInputs<'_>,
        reference: impl FnOnce(&Vector3<f64>, &Vector3<f64>, &UnitQuaternion<f64>, f64) -> Reference,
    ) -> Result<(Vector3<f64>, Vector3<f64>), String> {
        if self.firmware.is_some() {
            let speeds = self.firmware_speeds(inputs, reference);
            return Ok(self.actuate(inputs, speeds));
        }
        if let Some(PoseSample { p, v, q, dt }) = self.sample_pose(inputs) {
            let r = reference(&p, &v, &q, dt);
            self.command = self
                .outer
                .update(&r, &p, &v, &q, (inputs.mass, &inputs.gravity), dt);
        }
        self.inner_loop(inputs);
        let speeds = self.mixed(inputs);
        Ok(self.actuate(inputs, speeds))
    }

    /// The firmware's controller: the estimate brought up to date from fresh samples, the
    /// loops run, and the motor thrusts it asks for turned into this airframe's rotor speeds
    /// (the same collective thrust and torques: the Crazyflie's motors spin the other way
    /// round from this airframe's numbering, so thrusts cannot be handed over motor by motor).
    fn firmware_speeds(
        &mut self,
        inputs: &FlightInputs<'_>,
        reference: impl FnOnce(&Vector3<f64>, &Vector3<f64>, &UnitQuaternion<f64>, f64) -> Reference,
    ) -> [f64; 4] {
        self.firmware_run(inputs, |controller, now_us, state| {
            let period = controller.setpoint_period();
            controller.step(now_us, state, |s| {
                reference(&s.position, &s.velocity, &s.orientation, period)
            })
        })
    }

    /// The firmware's controller run by `run` (given the controller, the time in µs and the
    /// state estimate) once the estimate is brought up to date, and the motor thrusts it
    /// returns turned into this airframe's rotor speeds (see [`Flight::firmware_speeds`]).
    fn firmware_run(
        &mut self,
        inputs: &FlightInputs<'_>,
        run: impl FnOnce(&mut firmware::Firmware, u64, &firmware::State) -> [f64; 4],
    ) -> [f64; 4] {
        let pose = self.sample_pose(inputs);
        let (imu, imu_step) = inputs.imu;
        let gyro = (imu_step == inputs.step && imu.len() >= 6).then(|| {
            (
                Vector3::new(imu[3], imu[4], imu[5]),
                self.imu_interval(imu_step),
            )
        });
        let Some(fw) = self.firmware.as_deref_mut() else {
            return [0.0; 4];
        };
        let (controller, estimate) = (&mut fw.0, &mut fw.1);
        if let Some(PoseSample { p, v, q, .. }) = &pose {
            estimate.pose(*p, *v, *q);
        }
        if let Some((w, dt)) = gyro {
            estimate.gyro(w, dt, pose.is_some());
        }
        let Some(state) = estimate.state() else {
            return [0.0; 4];
        };
        let now_us = (inputs.step as f64 * self.timestep * 1e6).round() as u64;
        let thrusts = run(controller, now_us, &state);
        let total: f64 = thrusts.iter().sum();
        if total == 0.0 {
            return [0.0; 4];
        }
        let d = self.airframe.params.arm / std::f64::consts::SQRT_2;
        let kappa = self.airframe.drag_ratio();
        let mut torque = Vector3::zeros();
        for (&(x, y, spin), f) in firmware::power::HUBS.iter().zip(thrusts) {
            torque += Vector3::new(y * d * f, -x * d * f, spin * kappa * f);
        }
        self.airframe.mix(total, &torque)
    }

    /// One world step of an open-loop [`Command`]: an attitude set-point for the inner loop
    /// (the outer loop idle; with a firmware controller, its attitude mode), or rotor speeds
    /// for the motors (both loops idle).
    pub fn step_commanded(
        &mut self,
        inputs: &FlightInputs<'_>,
        command: Command,
    ) -> Result<(Vector3<f64>, Vector3<f64>), String> {
        let speeds = match command {
            Command::Attitude(c) if self.firmware.is_some() => self
                .firmware_run(inputs, |controller, now_us, state| {
                    controller.step_attitude(now_us, state, c)
                }),
            Command::Attitude([roll, pitch, yaw, thrust]) => {
                if let Some(PoseSample { q, .. }) = self.sample_pose(inputs) {
                    let (_, _, now) = q.euler_angles();
                    let error = (yaw - now + std::f64::consts::PI)
                        .rem_euclid(std::f64::consts::TAU)
                        - std::f64::consts::PI;
                    self.command.yaw_rate = self.params.position.kyaw * error;
                }
                self.command.roll = roll;
                self.command.pitch = pitch;
                self.command.thrust = thrust;
                self.inner_loop(inputs);
                self.mixed(inputs)
            }
            Command::Rotors(w) => {
                let p = &self.airframe.params;
                w.map(|w| w.clamp(p.omega_min, p.omega_max))
            }
        };
        Ok(self.actuate(inputs, speeds))
    }

    /// The motion-capture sample when a fresh one arrived this step: position, velocity,
    /// orientation and the time since the last one; keeps its roll and pitch for the inner loop.
    fn sample_pose(&mut self, inputs: &FlightInputs<'_>) -> Option<PoseSample> {
        let (pose, pose_step) = inputs.pose;
        if pose_step != inputs.step || pose.len() < 13 {
            return None;
        }
        let p = Vector3::new(pose[0], pose[1], pose[2]);
        let v = Vector3::new(pose[7], pose[8], pose[9]);
        let q = quat(&pose[3..7]);
        let dt = if self.last_pose == 0 {
            self.timestep
        } else {
            (pose_step - self.last_pose) as f64 * self.timestep
        };
        self.last_pose = pose_step;
        let (roll, pitch, _) = q.euler_angles();
        self.fresh_mocap = Some([q16(roll), q16(pitch)]);
        Some(PoseSample { p, v, q, dt })
    }

    /// Seconds since the IMU sample before the one of step `imu_step` (one timestep for the
    /// first), which becomes the last.
    fn imu_interval(&mut self, imu_step: u64) -> f64 {
        let dt = if self.last_imu == 0 {
            self.timestep
        } else {
            (imu_step - self.last_imu) as f64 * self.timestep
        };
        self.last_imu = imu_step;
        dt
    }

    /// The inner loop on a fresh IMU sample, once motion capture has given it an attitude.
    fn inner_loop(&mut self, inputs: &FlightInputs<'_>) {
        let (imu, imu_step) = inputs.imu;
        if imu_step != inputs.step || imu.len() < 6 || self.last_pose == 0 {
            return;
        }
        let dt = self.imu_interval(imu_step);
        let input = AttitudeInput {
            gyro: [
                gyro_counts(imu[3]),
                gyro_counts(imu[4]),
                gyro_counts(imu[5]),
            ],
            attitude_sp: [q16(self.command.roll), q16(self.command.pitch)],
            yaw_rate_sp: q16(self.command.yaw_rate),
            mocap: self.fresh_mocap.take(),
            dt_us: (dt * 1e6).round() as u32,
        };
        let a = self.inner.update(&input);
        self.last_input = Some(input);
        self.alpha = Vector3::from(a.map(|x| f64::from(x) / 65536.0));
    }

    /// The rotor speeds for the command's thrust and the inner loop's angular acceleration.
    fn mixed(&self, inputs: &FlightInputs<'_>) -> [f64; 4] {
        let torque = inputs.inertia.component_mul(&self.alpha);
        self.airframe.mix(self.command.thrust, &torque)
    }

    /// Turns commanded rotor speeds into the body's force and torque (world frame): the
    /// battery's cap, the motors, ground effect and drag.
    fn actuate(
        &mut self,
        inputs: &FlightInputs<'_>,
        mut speeds: [f64; 4],
    ) -> (Vector3<f64>, Vector3<f64>) {
        let tau = self.timestep;
        let omega_max = self.airframe.params.omega_max;
        let cap = match &mut self.battery {
            Some(b) => {
                b.step(self.airframe.power_share(), tau);
                let share = b.speed_share();
                if !b.compensated() {
                    speeds = speeds.map(|w| w * share);
                }
                omega_max * share
            }
            None => f64::INFINITY,
        };
        self.airframe.spin(&speeds, tau, cap);
        let q = &inputs.orientation;
        let gains = match &self.airframe.params.ground_effect {
            Some(g) => g.gains(&self.airframe.hubs(), &inputs.position, q),
            None => [1.0; 4],
        };
        let (thrust, body_torque) = self.airframe.wrench(&gains);
        let air = q.inverse() * inputs.velocity;
        let drag = self
            .airframe
            .params
            .drag
            .force(&air, &self.airframe.rotor_speeds());
        let mut force = q * (Vector3::new(0.0, 0.0, thrust) + drag);
        if let Some(d) = &self.airframe.params.downwash {
            force.z += d.force(inputs.neighbours);
        }
        (force, q * body_torque)
    }
}

/// A fresh motion-capture sample: position, velocity, orientation and the seconds since the
/// sample before.
struct PoseSample {
    p: Vector3<f64>,
    v: Vector3<f64>,
    q: UnitQuaternion<f64>,
    dt: f64,
}

/// Radians (or rad/s) in Q16.
fn q16(x: f64) -> i32 {
    (x * 65536.0).round() as i32
}

/// Parses a driver's descriptor after drawing its randomised airframe parameters
/// ([`randomise`]) from the instance's seed.
pub fn parse_descriptor<T: serde::de::DeserializeOwned>(
    descriptor: &str,
    init: &Init,
) -> Result<T, String> {
    let mut v: serde_json::Value =
        serde_json::from_str(descriptor).map_err(ssx_sdk::descriptor_error)?;
    randomise::draw(&mut v, init.seed)?;
    serde_json::from_value(v).map_err(ssx_sdk::descriptor_error)
}

fn apply(ctx: &Ctx<'_>, (force, torque): (Vector3<f64>, Vector3<f64>)) -> Result<(), String> {
    ctx.add_force(0, force.into())?;
    ctx.add_torque(0, torque.into())?;
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QuadrotorDescriptor {
    /// What to fly (`null` where an override gives `commands` instead).
    #[serde(default)]
    trajectory: Option<Trajectory>,
    /// An open-loop schedule in place of the trajectory ([`commands`]).
    #[serde(default)]
    commands: Option<Commands>,
    #[serde(default)]
    flight: FlightParams,
}

/// What the `quadrotor` driver flies.
enum Plan {
    Trajectory(Trajectory),
    Commands(Commands),
}

/// The `quadrotor` driver: flies a [`Trajectory`], or an open-loop [`Commands`] schedule.
pub struct Quadrotor {
    plan: Plan,
    flight: Flight,
}

impl Driver for Quadrotor {
    fn create(descriptor: &str, init: &Init) -> Result<Self, String> {
        init.root_body()?;
        let d: QuadrotorDescriptor = parse_descriptor(descriptor, init)?;
        let plan = match (d.trajectory, d.commands) {
            (Some(t), None) => {
                t.validate()?;
                Plan::Trajectory(t)
            }
            (None, Some(c)) => {
                c.validate()?;
                Plan::Commands(c)
            }
            (Some(_), Some(_)) => {
                return Err("invalid descriptor: give 'trajectory' or 'commands', not both (an override that gives 'commands' sets 'trajectory' to null)".into());
            }
            (None, None) => return Err("invalid descriptor: missing field `trajectory`".into()),
        };
        Ok(Quadrotor {
            plan,
            flight: Flight::new(d.flight, init.timestep)?,
        })
    }

    fn step(&mut self, ctx: &Ctx<'_>) -> Result<(), String> {
        let inputs = self.flight.read(ctx)?;
        let t = inputs.time;
        let wrench = match &self.plan {
            Plan::Trajectory(trajectory) => {
                self.flight.step(&inputs, |_, _, _, _| trajectory.at(t))?
            }
            Plan::Commands(c) => self.flight.step_commanded(&inputs, c.at(t))?,
        };
        apply(ctx, wrench)
    }
}

ssx_sdk::export_plugins!(
    driver "quadrotor" "a quadrotor with a cascaded flight controller (fixed-point attitude loop) flying a trajectory" => Quadrotor,
    driver "formation" "a quadrotor keeping formation and avoiding obstacles by artificial potentials (SwarmSimX sec. 3.2)" => formation::Formation,
    driver "teleop" "a quadrotor of a group driven by a haptic handle over Zenoh, with force feedback (SwarmSimX sec. 3)" => teleop::Teleop,
);
