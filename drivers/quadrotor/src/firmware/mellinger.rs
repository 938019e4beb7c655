//! Mellinger's controller as the Crazyflie 2.x firmware runs it (`"controller": "mellinger"`),
//! written from the paper (Mellinger & Kumar, "Minimum snap trajectory generation and control
//! for quadrotors", ICRA 2011, section IV) and the firmware's published numbers
//! (`controller_mellinger.c`, github.com/bitcraze/crazyflie-firmware at 2a18fc29; no code
//! copied). Crazyswarm flies its trajectories with it.
//!
//! Every 2 ms (`ATTITUDE_RATE`, 500 Hz; position and attitude in the same period):
//! - **Force.** `F = m (a_ref + g e_z) + K_p e_p + K_d e_v + K_i ∫e_p`, the integrals clamped
//!   per axis; the thrust asked is `F · z_B` (the body's z axis now) in newtons, sent as
//!   `massThrust · F · z_B` 16-bit units.
//! - **Attitude wanted.** `z_d = F / |F|`, `y_d = z_d × x_c / |z_d × x_c|` with
//!   `x_c = (cos ψ, sin ψ, 0)`, `x_d = y_d × z_d`.
//! - **Errors.** `e_R = (R_dᵀ R − Rᵀ R_d)^∨` (the firmware leaves out the paper's ½, and its gains
//!   are set for that), `e_ω = ω_ref − ω` with `ω_ref` the trajectory's body rates (from its jerk
//!   and yaw rate, the paper's differential flatness, as the firmware's high-level commander
//!   hands them over) and `ω` the gyro.
//! - **Moments**, in 16-bit command units: `M = −K_R e_R + K_ω e_ω + K_iR ∫(−e_R)` plus, on
//!   roll and pitch, `k_dω` times the change of `e_ω` over the period (none on the first);
//!   each clamped to ±32000, then handed to the legacy power distribution (the firmware's
//!   pitch command is positive nose up: the negated moment about y; its yaw command the negated
//!   moment about z). A thrust of zero or less stops the motors and clears the integrals.
//!
//! The firmware computes in `float`; this in `f64`.

use nalgebra::{Matrix3, Rotation3, Vector3};
use serde::Deserialize;

use super::State;
use super::power::{self, Control};
use crate::reference::Reference;

/// `ATTITUDE_RATE`: the controller's one period (s).
pub const DT: f64 = super::ATTITUDE_DT;

/// `GRAVITY_MAGNITUDE` (`physicalConstants.h`, m/s²).
pub const GRAVITY: f64 = 9.81;
/// `clamp(M, -32000, 32000)`: the moment commands' limit.
pub const MOMENT_MAX: f64 = 32_000.0;

/// The controller's parameters by the firmware's `ctrlMel` parameter names, each defaulting
/// to the firmware's value (`controller_mellinger.c`, `g_self`): a Crazyflie user sets them as
/// on the vehicle (`"flight": {"mellinger": {"mass": 0.0319}}`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MellingerParams {
    /// `mass`: the mass the controller assumes (kg); `CF_MASS`, 0.029 without the thrust
    /// upgrade kit (`platform_defaults_cf2.h`). The real vehicle may weigh more (battery,
    /// decks): the integrals make up part of the difference, as on the real Crazyflie.
    pub mass: f64,
    /// `massThrust`: 16-bit thrust units a newton (132000).
    #[serde(rename = "massThrust")]
    pub mass_thrust: f64,
    /// `kp_xy` (0.4).
    pub kp_xy: f64,
    /// `kd_xy` (0.2).
    pub kd_xy: f64,
    /// `ki_xy` (0.05).
    pub ki_xy: f64,
    /// `i_range_xy` (2).
    pub i_range_xy: f64,
    /// `kp_z` (1.25).
    pub kp_z: f64,
    /// `kd_z` (0.4).
    pub kd_z: f64,
    /// `ki_z` (0.05).
    pub ki_z: f64,
    /// `i_range_z` (0.4).
    pub i_range_z: f64,
    /// `kR_xy` (70000).
    #[serde(rename = "kR_xy")]
    pub kr_xy: f64,
    /// `kw_xy` (20000).
    pub kw_xy: f64,
    /// `ki_m_xy` (0).
    pub ki_m_xy: f64,
    /// `i_range_m_xy` (1).
    pub i_range_m_xy: f64,
    /// `kR_z` (60000).
    #[serde(rename = "kR_z")]
    pub kr_z: f64,
    /// `kw_z` (12000).
    pub kw_z: f64,
    /// `ki_m_z` (500).
    pub ki_m_z: f64,
    /// `i_range_m_z` (1500).
    pub i_range_m_z: f64,
    /// `kd_omega_rp` (200): on the change of the roll and pitch rate errors.
    pub kd_omega_rp: f64,
}

impl Default for MellingerParams {
    fn default() -> Self {
        MellingerParams {
            mass: 0.029,
            mass_thrust: 132_000.0,
            kp_xy: 0.4,
            kd_xy: 0.2,
            ki_xy: 0.05,
            i_range_xy: 2.0,
            kp_z: 1.25,
            kd_z: 0.4,
            ki_z: 0.05,
            i_range_z: 0.4,
            kr_xy: 70_000.0,
            kw_xy: 20_000.0,
            ki_m_xy: 0.0,
            i_range_m_xy: 1.0,
            kr_z: 60_000.0,
            kw_z: 12_000.0,
            ki_m_z: 500.0,
            i_range_m_z: 1500.0,
            kd_omega_rp: 200.0,
        }
    }
}

impl MellingerParams {
    /// Checks the numbers: all finite and none negative, `mass` and `massThrust` above 0.
    pub fn validate(&self) -> Result<(), String> {
        let p = self;
        let all = [
            ("mass", p.mass),
            ("massThrust", p.mass_thrust),
            ("kp_xy", p.kp_xy),
            ("kd_xy", p.kd_xy),
            ("ki_xy", p.ki_xy),
            ("i_range_xy", p.i_range_xy),
            ("kp_z", p.kp_z),
            ("kd_z", p.kd_z),
            ("ki_z", p.ki_z),
            ("i_range_z", p.i_range_z),
            ("kR_xy", p.kr_xy),
            ("kw_xy", p.kw_xy),
            ("ki_m_xy", p.ki_m_xy),
            ("i_range_m_xy", p.i_range_m_xy),
            ("kR_z", p.kr_z),
            ("kw_z", p.kw_z),
            ("ki_m_z", p.ki_m_z),
            ("i_range_m_z", p.i_range_m_z),
            ("kd_omega_rp", p.kd_omega_rp),
        ];
        for (name, v) in all {
            let positive = matches!(name, "mass" | "massThrust");
            if !v.is_finite() || v < 0.0 || (positive && v == 0.0) {
                let want = if positive { "> 0" } else { ">= 0" };
                return Err(format!(
                    "invalid descriptor: flight.mellinger.{name} must be a finite number {want}, not {v}"
                ));
            }
        }
        Ok(())
    }
}

/// The controller's state between periods.
#[derive(Clone, Debug, Default)]
pub struct Mellinger {
    params: MellingerParams,
    /// ∫ position error (m·s), per axis.
    i_position: Vector3<f64>,
    /// ∫ −e_R (rad·s), per axis.
    i_attitude: Vector3<f64>,
    /// The last period's body-rate error, roll and pitch (none before the first).
    last_rate_error: Option<[f64; 2]>,
    control: Control,
    /// When the next period begins (µs of simulated time; `None`: not started).
    next: Option<u64>,
}

/// The body rates a trajectory asks for at `r`, in the body frame it asks for (Mellinger &
/// Kumar 2011, eq. 7–8): the jerk across the thrust axis over the thrust per mass gives roll
/// and pitch rates, the yaw rate projected on the body's z axis the yaw rate.
pub fn reference_rates(r: &Reference) -> Vector3<f64> {
    let thrust = r.acceleration + Vector3::new(0.0, 0.0, GRAVITY);
    let axes = desired_axes(&thrust, r.yaw);
    let [x_b, y_b, z_b] = axes;
    let across = (r.jerk - z_b * z_b.dot(&r.jerk)) / thrust.norm();
    Vector3::new(-across.dot(&y_b), across.dot(&x_b), r.yaw_rate * z_b.z)
}

/// The body axes that point z along `thrust` with the heading `yaw` (rad): x, y, z (a zero
/// thrust, or one lying in the plane across the heading, leaves them as the world's).
fn desired_axes(thrust: &Vector3<f64>, yaw: f64) -> [Vector3<f64>; 3] {
    let world = [Vector3::x(), Vector3::y(), Vector3::z()];
    let Some(z) = thrust.try_normalize(0.0) else {
        return world;
    };
    let heading = Vector3::new(yaw.cos(), yaw.sin(), 0.0);
    let Some(y) = z.cross(&heading).try_normalize(0.0) else {
        return world;
    };
    [y.cross(&z), y, z]
}

impl Mellinger {
    /// A controller with these parameters (checked by [`MellingerParams::validate`]).
    pub fn new(params: MellingerParams) -> Self {
        Mellinger {
            params,
            ..Default::default()
        }
    }

    /// One world step at `now_us` (µs of simulated time): runs the periods that begin by now
    /// towards the reference `setpoint` gives (asked once a period), and returns the four motor
    /// thrusts (N), M1..M4.
    pub fn step(
        &mut self,
        now_us: u64,
        s: &State,
        setpoint: impl FnOnce(&State) -> Reference,
    ) -> [f64; 4] {
        if self.due(now_us) {
            self.period(&setpoint(s), s);
        }
        power::motor_thrusts(&self.control)
    }

    /// Whether a period begins by `now_us` (the first call starts the count); if so, the next
    /// is set.
    fn due(&mut self, now_us: u64) -> bool {
        let next = *self.next.get_or_insert(now_us);
        let due = now_us >= next;
        if due {
            self.next = Some(super::after(next, now_us, DT));
        }
        due
    }

    /// One 2 ms period.
    fn period(&mut self, r: &Reference, s: &State) {
        let e_p = r.position - s.position;
        let e_v = r.velocity - s.velocity;
        let p = &self.params;
        let gain = |xy: f64, z: f64| Vector3::new(xy, xy, z);
        let range = gain(p.i_range_xy, p.i_range_z);
        self.i_position = (self.i_position + e_p * DT).zip_map(&range, |i, l| i.clamp(-l, l));
        let force = (r.acceleration + Vector3::new(0.0, 0.0, GRAVITY)) * p.mass
            + gain(p.kp_xy, p.kp_z).component_mul(&e_p)
            + gain(p.kd_xy, p.kd_z).component_mul(&e_v)
            + gain(p.ki_xy, p.ki_z).component_mul(&self.i_position);
        let rotation = s.orientation.to_rotation_matrix().into_inner();
        let thrust = p.mass_thrust * force.dot(&rotation.column(2));
        if thrust <= 0.0 {
            self.stop();
            return;
        }
        let axes = desired_axes(&force, r.yaw);
        self.turn(
            &Matrix3::from_columns(&axes),
            &reference_rates(r),
            thrust,
            s,
        );
    }

    /// One world step in the firmware's attitude mode ("manual, no assist": roll and pitch
    /// absolute, z disabled): the orientation wanted from `[roll, pitch, yaw]` (rad), no body
    /// rate fed forward, and the thrust (N) sent as [`power::thrust_command`] gives it, every
    /// 2 ms; the position terms idle.
    pub fn step_attitude(&mut self, now_us: u64, s: &State, command: [f64; 4]) -> [f64; 4] {
        if self.due(now_us) {
            let [roll, pitch, yaw, thrust] = command;
            let wanted = Rotation3::from_euler_angles(roll, pitch, yaw).into_inner();
            let units = power::thrust_command(thrust);
            if units <= 0.0 {
                self.stop();
            } else {
                self.turn(&wanted, &Vector3::zeros(), units, s);
            }
        }
        power::motor_thrusts(&self.control)
    }

    /// Motors off, integrals cleared (a thrust of zero or less).
    fn stop(&mut self) {
        self.i_position = Vector3::zeros();
        self.i_attitude = Vector3::zeros();
        self.control = Control::default();
    }

    /// The attitude part of a period: the moments that turn the body towards `wanted` at the
    /// body rates `rates`, with the collective `thrust` (16-bit units).
    fn turn(&mut self, wanted: &Matrix3<f64>, rates: &Vector3<f64>, thrust: f64, s: &State) {
        let rotation = s.orientation.to_rotation_matrix().into_inner();
        let skew = wanted.transpose() * rotation - rotation.transpose() * wanted;
        let e_r = Vector3::new(skew[(2, 1)], skew[(0, 2)], skew[(1, 0)]);
        let gyro = s.gyro.map(f64::to_radians);
        let e_w = rates - gyro;
        let p = &self.params;
        let gain = |xy: f64, z: f64| Vector3::new(xy, xy, z);
        let range = gain(p.i_range_m_xy, p.i_range_m_z);
        self.i_attitude = (self.i_attitude - e_r * DT).zip_map(&range, |i, l| i.clamp(-l, l));
        let damping = match self.last_rate_error {
            Some([x, y]) => Vector3::new(e_w.x - x, e_w.y - y, 0.0) * (p.kd_omega_rp / DT),
            None => Vector3::zeros(),
        };
        self.last_rate_error = Some([e_w.x, e_w.y]);
        let moment = -gain(p.kr_xy, p.kr_z).component_mul(&e_r)
            + gain(p.kw_xy, p.kw_z).component_mul(&e_w)
            + gain(p.ki_m_xy, p.ki_m_z).component_mul(&self.i_attitude)
            + damping;
        // Clamped, then stored in 16 bits (truncated towards zero).
        let command = |m: f64| m.clamp(-MOMENT_MAX, MOMENT_MAX) as i16;
        self.control = Control {
            thrust,
            roll: command(moment.x),
            pitch: command(-moment.y),
            yaw: command(-moment.z),
        };
    }

    /// What the last period asked of the motors.
    pub fn control(&self) -> Control {
        self.control
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::UnitQuaternion;

    fn level_at(z: f64) -> State {
        State {
            position: Vector3::new(0.0, 0.0, z),
            velocity: Vector3::zeros(),
            attitude: [0.0; 3],
            gyro: Vector3::zeros(),
            orientation: UnitQuaternion::identity(),
        }
    }

    #[test]
    fn level_on_its_target_it_asks_the_weight_it_assumes_and_no_moment() {
        let mut c = Mellinger::default();
        let f = c.step(0, &level_at(1.0), |_| {
            Reference::hold(Vector3::new(0.0, 0.0, 1.0), 0.0)
        });
        // 132000 · 0.029 · 9.81 = 37552.68 units; each motor gets 37552 of 65535 of 0.12 N.
        let c = c.control();
        assert!((c.thrust - 37_552.68).abs() < 1e-6, "{c:?}");
        assert_eq!((c.roll, c.pitch, c.yaw), (0, 0, 0));
        let each = 37_552.0 / 65_535.0 * power::THRUST_MAX;
        assert!(f.iter().all(|&t| (t - each).abs() < 1e-12), "{f:?}");
    }

    #[test]
    fn a_point_ahead_tilts_it_nose_down_and_a_roll_is_pushed_back() {
        // 0.5 m ahead (+x): the force leans forward, the wanted attitude pitches nose down
        // (positive about y), and the firmware's legacy pitch command is negative.
        let mut c = Mellinger::default();
        c.step(0, &level_at(1.0), |_| {
            Reference::hold(Vector3::new(0.5, 0.0, 1.0), 0.0)
        });
        assert!(
            c.control().pitch < 0 && c.control().roll == 0,
            "{:?}",
            c.control()
        );
        // Rolled right wing down (positive about x) over its target: a negative roll command.
        let mut c = Mellinger::default();
        let mut s = level_at(1.0);
        s.orientation = UnitQuaternion::from_euler_angles(0.1, 0.0, 0.0);
        c.step(0, &s, |_| Reference::hold(Vector3::new(0.0, 0.0, 1.0), 0.0));
        // e_R.x = 2 sin 0.1 (no ½): −70000 · 0.1997 = −13979.
        let roll = c.control().roll;
        assert_eq!(roll, (-70_000.0 * 2.0 * 0.1f64.sin()) as i16, "{roll}");
    }

    #[test]
    fn a_level_turn_asks_its_yaw_rate_and_a_jerk_across_the_thrust_tilts_the_rates() {
        let mut r = Reference::hold(Vector3::zeros(), 0.0);
        r.yaw_rate = 0.3;
        assert!((reference_rates(&r) - Vector3::new(0.0, 0.0, 0.3)).norm() < 1e-15);
        // A jerk along +x at hover: the thrust axis leans forward at j / g rad/s, a pitch rate.
        r.yaw_rate = 0.0;
        r.jerk = Vector3::new(GRAVITY * 0.5, 0.0, 0.0);
        assert!((reference_rates(&r) - Vector3::new(0.0, 0.5, 0.0)).norm() < 1e-12);
        // Along +y: a roll to the left is negative about x.
        r.jerk = Vector3::new(0.0, GRAVITY * 0.5, 0.0);
        assert!((reference_rates(&r) - Vector3::new(-0.5, 0.0, 0.0)).norm() < 1e-12);
    }

    #[test]
    fn in_attitude_mode_it_sends_the_thrust_asked_and_rolls_with_the_left_motors() {
        // Level and asked to stay level: 0.3 N in all, 40959.375 units, each motor 40959 of
        // 65535 of its 0.12 N.
        let mut c = Mellinger::default();
        let f = c.step_attitude(0, &level_at(1.0), [0.0, 0.0, 0.0, 0.3]);
        let each = 40_959.0 / 65_535.0 * power::THRUST_MAX;
        assert!(f.iter().all(|&t| (t - each).abs() < 1e-12), "{f:?}");
        // A roll of 0.2 rad asked: positive about x, so the motors on the left (+y: M3, M4)
        // push harder than those on the right.
        let mut c = Mellinger::default();
        let f = c.step_attitude(0, &level_at(1.0), [0.2, 0.0, 0.0, 0.3]);
        assert!(f[2] > f[0] && f[3] > f[1] && c.control().roll > 0, "{f:?}");
    }

    #[test]
    fn parameters_go_by_the_firmwares_names_and_a_bad_one_is_named() {
        let p: MellingerParams =
            serde_json::from_str(r#"{ "mass": 0.0319, "kR_z": 50000, "massThrust": 130000 }"#)
                .unwrap();
        assert_eq!(
            (p.mass, p.kr_z, p.mass_thrust),
            (0.0319, 50_000.0, 130_000.0)
        );
        assert_eq!(p.kw_z, MellingerParams::default().kw_z);
        assert!(serde_json::from_str::<MellingerParams>(r#"{ "kRz": 1 }"#).is_err());
        let zero = MellingerParams {
            mass: 0.0,
            ..Default::default()
        };
        assert_eq!(
            zero.validate().unwrap_err(),
            "invalid descriptor: flight.mellinger.mass must be a finite number > 0, not 0"
        );
        let negative = MellingerParams {
            kd_omega_rp: -1.0,
            ..Default::default()
        };
        assert_eq!(
            negative.validate().unwrap_err(),
            "invalid descriptor: flight.mellinger.kd_omega_rp must be a finite number >= 0, not -1"
        );
    }

    #[test]
    fn it_runs_every_two_milliseconds_whatever_the_timestep() {
        for step_us in [1000u64, 500, 3000] {
            let mut c = Mellinger::default();
            let mut asked = 0;
            let mut now = 0;
            while now < 100_000 {
                c.step(now, &level_at(1.0), |_| {
                    asked += 1;
                    Reference::hold(Vector3::new(0.0, 0.0, 1.0), 0.0)
                });
                now += step_us;
            }
            // 100 ms: 50 periods, or one a step when the step is longer.
            let want = if step_us == 3000 { 34 } else { 50 };
            assert_eq!(asked, want, "{step_us} µs steps");
        }
    }
}
