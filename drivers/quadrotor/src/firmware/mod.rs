//! The Crazyflie 2.x firmware's controllers: its PID controller (`"controller": "pid"` in the
//! flight settings, this module) and Mellinger's ([`mellinger`], `"mellinger"`), written from
//! their published structure and default numbers; the firmware
//! (github.com/bitcraze/crazyflie-firmware, GPL-3.0) is cited by file and parameter name, and
//! none of its code is copied.
//!
//! - **Position and velocity, 100 Hz** (`POSITION_RATE`, `stabilizer_types.h`;
//!   `position_controller_pid.c`): in the frame turned by the yaw, a position PID per axis gives
//!   a velocity set-point (at most 1 m/s, `PID_POS_VEL_*_MAX`, with the firmware's 10%
//!   overhead), and a velocity PID gives pitch and roll (±20°, `PID_VEL_ROLL_MAX`) and the
//!   thrust: `1000 · PID + 36000` (`thrustScale`, `PID_VEL_THRUST_BASE`), at least 20000
//!   (`PID_VEL_THRUST_MIN`), at most 65535. The trajectory's velocity is not fed forward: the
//!   firmware's position mode overwrites it.
//! - **Attitude and body rate, 500 Hz** (`ATTITUDE_RATE`; `attitude_pid_controller.c`):
//!   an angle PID per axis (degrees) gives a rate set-point (deg/s), a rate PID on the gyro
//!   gives the roll, pitch and yaw commands, each saturated to a 16-bit integer.
//! - **Power distribution** (`power_distribution_quadrotor.c`, the legacy mode the PID
//!   controller uses): each motor's command is the thrust ± half the roll and pitch commands ±
//!   the yaw command, lowered together so that none passes 65535. With battery compensation
//!   (on by default on the Crazyflie 2.x: `CONFIG_ENABLE_THRUST_BAT_COMPENSATED`) a command `c`
//!   asks a motor for `c / 65535 · 0.12 N` (`THRUST_MAX`, `platform_defaults_cf2.h`), none below
//!   0.0128 N (`THRUST_MIN`).
//! - Gains: `platform_defaults_cf2.h`, `PID_*`: see [`Gains`]'s constants.
//!
//! The loops run at their own rates whatever the world's timestep: a loop runs in the world
//! step in which its next period begins (both at once when they coincide, position first, as
//! the firmware's 1 kHz stabilizer runs them), with the firmware's fixed period as its `dt`.
//! With a timestep that is not a divisor of 2 ms a loop runs at the steps nearest its periods;
//! with one longer than 2 ms the attitude loop runs once a step, slower than the firmware's.
//!
//! The firmware estimates its state with a Kalman filter fed by the IMU and the motion-capture
//! pose; here [`estimate`] keeps the last motion-capture sample's position, velocity and
//! orientation and turns the orientation by the gyro between samples: simpler than the
//! firmware's filter.

pub mod estimate;
pub mod mellinger;
pub mod pid;
pub mod power;

use nalgebra::{UnitQuaternion, Vector3};

use crate::reference::Reference;
use pid::{Gains, Pid};
use power::Control;

/// The position loop's period (s): `POSITION_RATE` 100 Hz.
pub const POSITION_DT: f64 = 0.01;
/// The attitude and rate loops' period (s): `ATTITUDE_RATE` 500 Hz.
pub const ATTITUDE_DT: f64 = 0.002;

/// `platform_defaults_cf2.h`'s default gains: `PID_POS_*` (position, kp 2, z ki 0.5),
/// `PID_VEL_*` (velocity: kp 25, ki 1; z ki 15), `PID_ROLL/PITCH/YAW_*` (attitude: kp 6, ki 3,
/// integral limit 20°; yaw ki 1, kd 0.35, limit 360°), `PID_*_RATE_*` (rates: roll and pitch kp
/// 250, ki 500, kd 2.5, limit 33.3; yaw kp 120, ki 16.7, limit 166.7). Position and velocity
/// loops keep the default integral limit, 5000 (`pid.h`).
pub mod gains {
    use super::Gains;
    /// `PID_POS_X_*`, `PID_POS_Y_*`.
    pub const POSITION_XY: Gains = Gains::pid(2.0, 0.0, 0.0);
    /// `PID_POS_Z_*`.
    pub const POSITION_Z: Gains = Gains::pid(2.0, 0.5, 0.0);
    /// `PID_VEL_X_*`, `PID_VEL_Y_*`.
    pub const VELOCITY_XY: Gains = Gains::pid(25.0, 1.0, 0.0);
    /// `PID_VEL_Z_*`.
    pub const VELOCITY_Z: Gains = Gains::pid(25.0, 15.0, 0.0);
    /// `PID_ROLL_*`, `PID_PITCH_*`.
    pub const ATTITUDE_RP: Gains = Gains::pid(6.0, 3.0, 0.0).limited(20.0);
    /// `PID_YAW_*`.
    pub const ATTITUDE_YAW: Gains = Gains::pid(6.0, 1.0, 0.35).limited(360.0);
    /// `PID_ROLL_RATE_*`, `PID_PITCH_RATE_*`.
    pub const RATE_RP: Gains = Gains::pid(250.0, 500.0, 2.5).limited(33.3);
    /// `PID_YAW_RATE_*`.
    pub const RATE_YAW: Gains = Gains::pid(120.0, 16.7, 0.0).limited(166.7);
}

/// `PID_POS_VEL_*_MAX` (m/s) and the 10% the firmware allows over it (`velMaxOverhead`).
const VELOCITY_MAX: f64 = 1.0 * 1.1;
/// `PID_VEL_ROLL_MAX`, `PID_VEL_PITCH_MAX` (degrees), and the PID's output limit over it
/// (`rpLimitOverhead`).
const TILT_MAX: f64 = 20.0;
const TILT_OVERHEAD: f64 = 1.1;
/// `thrustScale`, `PID_VEL_THRUST_BASE`, `PID_VEL_THRUST_MIN` (16-bit thrust units).
const THRUST_SCALE: f64 = 1000.0;
const THRUST_BASE: f64 = 36000.0;
const THRUST_MIN: f64 = 20000.0;

/// The state the controller reads, in the firmware's units: metres, m/s, degrees (roll, the
/// legacy pitch, which is positive nose up, and yaw) and deg/s (gyro, body frame).
#[derive(Clone, Copy, Debug)]
pub struct State {
    /// Position (m, world).
    pub position: Vector3<f64>,
    /// Velocity (m/s, world).
    pub velocity: Vector3<f64>,
    /// Roll, pitch (legacy: nose up positive) and yaw (degrees).
    pub attitude: [f64; 3],
    /// Body rates (deg/s) about x, y, z.
    pub gyro: Vector3<f64>,
    /// The orientation the attitude angles come from (Mellinger's controller reads it).
    pub orientation: UnitQuaternion<f64>,
}

/// A firmware controller, as the flight settings choose it.
#[derive(Clone, Debug)]
// The flight keeps it boxed: the PID's twelve loops make one variant larger, not the flight.
#[allow(clippy::large_enum_variant)]
pub enum Firmware {
    /// `controller_pid.c`'s cascade.
    Pid(FirmwarePid),
    /// `controller_mellinger.c`.
    Mellinger(mellinger::Mellinger),
}

impl Firmware {
    /// One world step at `now_us` (µs of simulated time): the controller's loops that begin by
    /// now run, asking `setpoint` for the reference once a position period, and the four motor
    /// thrusts (N, M1..M4) come back.
    pub fn step(
        &mut self,
        now_us: u64,
        s: &State,
        setpoint: impl FnOnce(&State) -> Reference,
    ) -> [f64; 4] {
        match self {
            Firmware::Pid(c) => c.step(now_us, s, setpoint),
            Firmware::Mellinger(c) => c.step(now_us, s, setpoint),
        }
    }

    /// One world step in the firmware's attitude mode: `[roll, pitch, yaw]` wanted (rad, the
    /// usual right-handed angles) and the collective thrust (N), as drone-models' identified
    /// `so_rpy` models take them; the position loop idles. The thrust goes to the motors as
    /// its share of four motors' [`power::THRUST_MAX`] in 16-bit units.
    pub fn step_attitude(&mut self, now_us: u64, s: &State, command: [f64; 4]) -> [f64; 4] {
        match self {
            Firmware::Pid(c) => c.step_attitude(now_us, s, command),
            Firmware::Mellinger(c) => c.step_attitude(now_us, s, command),
        }
    }

    /// How often it asks for the reference (s): its position loop's period.
    pub fn setpoint_period(&self) -> f64 {
        match self {
            Firmware::Pid(_) => POSITION_DT,
            Firmware::Mellinger(_) => mellinger::DT,
        }
    }
}

/// The cascaded controller's loops and what they hand each other.
#[derive(Clone, Debug)]
pub struct FirmwarePid {
    position: [Pid; 3],
    velocity: [Pid; 3],
    attitude: [Pid; 3],
    rate: [Pid; 3],
    /// The velocity loop's thrust (16-bit units).
    thrust: f64,
    /// Roll, pitch (legacy) and yaw wanted (degrees).
    desired: [f64; 3],
    control: Control,
    /// When each loop runs next (µs of simulated time; `None`: not started).
    next_position: Option<u64>,
    next_attitude: u64,
}

impl Default for FirmwarePid {
    fn default() -> Self {
        let pid = |g: Gains, dt: f64| Pid::new(g, dt);
        let mut position = [
            pid(gains::POSITION_XY, POSITION_DT),
            pid(gains::POSITION_XY, POSITION_DT),
            pid(gains::POSITION_Z, POSITION_DT),
        ];
        // The z limit is at least 0.5 m/s (the firmware's note: ROS's landing detector).
        for p in &mut position {
            p.output_limit = VELOCITY_MAX;
        }
        let mut velocity = [
            pid(gains::VELOCITY_XY, POSITION_DT),
            pid(gains::VELOCITY_XY, POSITION_DT),
            pid(gains::VELOCITY_Z, POSITION_DT),
        ];
        velocity[0].output_limit = TILT_MAX * TILT_OVERHEAD;
        velocity[1].output_limit = TILT_MAX * TILT_OVERHEAD;
        // The whole thrust range either way: 65535 / 2 / thrustScale.
        velocity[2].output_limit = 65535.0 / 2.0 / THRUST_SCALE;
        FirmwarePid {
            position,
            velocity,
            attitude: [
                pid(gains::ATTITUDE_RP, ATTITUDE_DT),
                pid(gains::ATTITUDE_RP, ATTITUDE_DT),
                pid(gains::ATTITUDE_YAW, ATTITUDE_DT),
            ],
            rate: [
                pid(gains::RATE_RP, ATTITUDE_DT),
                pid(gains::RATE_RP, ATTITUDE_DT),
                pid(gains::RATE_YAW, ATTITUDE_DT),
            ],
            thrust: 0.0,
            desired: [0.0; 3],
            control: Control::default(),
            next_position: None,
            next_attitude: 0,
        }
    }
}

/// An angle in degrees brought into ±180 (`capAngle`).
fn cap_angle(mut a: f64) -> f64 {
    while a > 180.0 {
        a -= 360.0;
    }
    while a < -180.0 {
        a += 360.0;
    }
    a
}

impl FirmwarePid {
    /// One world step at `now_us` (µs of simulated time) with the state estimate `s`: runs the
    /// loops whose periods begin by now, towards the set-point `setpoint` gives (asked once a
    /// position period), and returns the four motor thrusts (N) the power distribution asks
    /// for, in the firmware's motor order M1..M4 ([`power::HUBS`]).
    pub fn step(
        &mut self,
        now_us: u64,
        s: &State,
        setpoint: impl FnOnce(&State) -> Reference,
    ) -> [f64; 4] {
        let next_position = self.start(now_us, s);
        if now_us >= next_position {
            let r = setpoint(s);
            self.desired[2] = cap_angle(r.yaw.to_degrees());
            self.position_loop(&r.position, s);
            self.next_position = Some(after(next_position, now_us, POSITION_DT));
        }
        self.attitude_and_power(now_us, s)
    }

    /// The attitude mode ([`Firmware::step_attitude`]): the angles wanted in degrees (the
    /// legacy pitch nose up) and the thrust in 16-bit units, the attitude and rate loops at
    /// their rate, the position loop idle.
    pub fn step_attitude(&mut self, now_us: u64, s: &State, command: [f64; 4]) -> [f64; 4] {
        self.start(now_us, s);
        let [roll, pitch, yaw, thrust] = command;
        self.desired = [
            roll.to_degrees(),
            -pitch.to_degrees(),
            cap_angle(yaw.to_degrees()),
        ];
        self.thrust = power::thrust_command(thrust);
        self.attitude_and_power(now_us, s)
    }

    /// At a flight's first step, the loops start from the state held (no derivative kick);
    /// returns when the position loop runs next.
    fn start(&mut self, now_us: u64, s: &State) -> u64 {
        *self.next_position.get_or_insert_with(|| {
            for (pid, &x) in self.position.iter_mut().zip(s.position.iter()) {
                pid.reset(x);
            }
            for k in 0..3 {
                self.velocity[k].reset(0.0);
                self.attitude[k].reset(s.attitude[k]);
                self.rate[k].reset(0.0);
            }
            self.desired = s.attitude;
            now_us
        })
    }

    /// The attitude and rate loops when their period begins, then the motors' thrusts.
    fn attitude_and_power(&mut self, now_us: u64, s: &State) -> [f64; 4] {
        if now_us >= self.next_attitude {
            self.attitude_loop(s);
            self.next_attitude = after(self.next_attitude, now_us, ATTITUDE_DT);
        }
        self.control.thrust = self.thrust;
        power::motor_thrusts(&self.control)
    }

    /// `positionController` and `velocityController`: velocity set-points, then tilt and thrust.
    fn position_loop(&mut self, target: &Vector3<f64>, s: &State) {
        let (sin, cos) = s.attitude[2].to_radians().sin_cos();
        let body = |v: &Vector3<f64>| (v.x * cos + v.y * sin, -v.x * sin + v.y * cos);
        let (tx, ty) = body(target);
        let (px, py) = body(&s.position);
        let vx = self.position[0].update(tx, px, false);
        let vy = self.position[1].update(ty, py, false);
        let vz = self.position[2].update(target.z, s.position.z, false);
        let (bvx, bvy) = body(&s.velocity);
        let pitch = -self.velocity[0].update(vx, bvx, false);
        let roll = -self.velocity[1].update(vy, bvy, false);
        self.desired[0] = roll.clamp(-TILT_MAX, TILT_MAX);
        self.desired[1] = pitch.clamp(-TILT_MAX, TILT_MAX);
        let raw = self.velocity[2].update(vz, s.velocity.z, false);
        self.thrust = (raw * THRUST_SCALE + THRUST_BASE)
            .max(THRUST_MIN)
            .clamp(0.0, 65535.0);
    }

    /// `attitudeControllerCorrectAttitudePID` then `...RatePID`: the commands, 16-bit.
    fn attitude_loop(&mut self, s: &State) {
        let mut rates = [0.0; 3];
        for (k, rate) in rates.iter_mut().enumerate() {
            *rate = self.attitude[k].update(self.desired[k], s.attitude[k], k == 2);
        }
        // The legacy pitch is nose up: its rate is minus the gyro's y.
        let gyro = [s.gyro.x, -s.gyro.y, s.gyro.z];
        let out: [i16; 3] =
            std::array::from_fn(|k| saturate_i16(self.rate[k].update(rates[k], gyro[k], false)));
        self.control.roll = out[0];
        self.control.pitch = out[1];
        // The yaw command is negated (`controller_pid.c`).
        self.control.yaw = -out[2];
    }

    /// What the loops last asked of the motors.
    pub fn control(&self) -> Control {
        self.control
    }
}

/// The first period start after `now_us`, counting from `from` by `period` seconds.
fn after(from: u64, now_us: u64, period: f64) -> u64 {
    let p = (period * 1e6).round() as u64;
    from + ((now_us - from.min(now_us)) / p + 1) * p
}

/// A float to a 16-bit command as the firmware saturates it (`saturateSignedInt16`: ±32767,
/// truncated towards zero).
fn saturate_i16(x: f64) -> i16 {
    if x > 32767.0 {
        32767
    } else if x < -32767.0 {
        -32767
    } else {
        x as i16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_loop_runs_at_its_own_rate_whatever_the_timestep() {
        let s = State {
            position: Vector3::zeros(),
            velocity: Vector3::zeros(),
            attitude: [0.0; 3],
            gyro: Vector3::zeros(),
            orientation: UnitQuaternion::identity(),
        };
        for step_us in [1000u64, 500, 3000] {
            let mut c = FirmwarePid::default();
            let mut asked = 0;
            let mut now = 0;
            while now < 100_000 {
                c.step(now, &s, |_| {
                    asked += 1;
                    Reference::hold(Vector3::new(0.0, 0.0, 1.0), 0.0)
                });
                now += step_us;
            }
            // 100 ms: ten position periods, at the steps where each begins (at 3 ms: 0, 12,
            // 21, 30, ... the first step at or after each 10 ms).
            assert_eq!(asked, 10, "{step_us} µs steps");
        }
    }

    #[test]
    fn in_attitude_mode_the_position_loop_idles_and_a_roll_asked_lifts_the_left_motors() {
        let s = State {
            position: Vector3::new(0.0, 0.0, 0.5),
            velocity: Vector3::zeros(),
            attitude: [0.0; 3],
            gyro: Vector3::zeros(),
            orientation: UnitQuaternion::identity(),
        };
        let mut c = FirmwarePid::default();
        // 0.5 m below where the position loop would want it, and it does not climb: the
        // thrust is the one asked, 0.3 N of four motors' 0.48 N.
        let f = c.step_attitude(0, &s, [0.0, 0.0, 0.0, 0.3]);
        assert_eq!(c.control().thrust, 0.3 / 0.48 * 65535.0);
        assert!(f.iter().all(|&t| (t - f[0]).abs() < 1e-15), "{f:?}");
        // A roll of 0.2 rad asked: the left motors (+y: M3, M4) push harder.
        let f = c.step_attitude(2000, &s, [0.2, 0.0, 0.0, 0.3]);
        assert!(f[2] > f[0] && f[3] > f[1] && c.control().roll > 0, "{f:?}");
    }

    #[test]
    fn below_its_target_it_asks_more_thrust_than_the_base_and_no_tilt() {
        let mut c = FirmwarePid::default();
        let s = State {
            position: Vector3::new(0.0, 0.0, 0.5),
            velocity: Vector3::zeros(),
            attitude: [0.0; 3],
            gyro: Vector3::zeros(),
            orientation: UnitQuaternion::identity(),
        };
        let f = c.step(0, &s, |_| Reference::hold(Vector3::new(0.0, 0.0, 1.0), 0.0));
        // 0.5 m low: z PID 2·0.5 + 0.5·0.5·0.01 = 1.0025 m/s, capped at 1.1 → not capped;
        // velocity z PID 25·1.0025 + 15·1.0025·0.01 = 25.2129 → 25212.9 + 36000 = 61212.9.
        let thrust = c.control().thrust;
        assert!((thrust - 61212.875).abs() < 0.01, "{thrust}");
        // Each motor's command is that, stored as an integer: 61212 of 65535 of 0.12 N.
        let each = 61212.0 / 65535.0 * power::THRUST_MAX;
        assert!(f.iter().all(|&t| (t - each).abs() < 1e-12), "{f:?}");
    }
}
