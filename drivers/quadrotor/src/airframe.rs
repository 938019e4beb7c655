//! The quadrotor's rotors and motors: four rotors with thrust `k_f·ω²` (or a quadratic thrust
//! curve `c₀ + c₁·ω + c₂·ω²`, as identified models give it) and drag torque `k_m·ω²`, speed
//! limits, motor dynamics with separate spin-up and spin-down rates and a command delay, and the
//! mixer that turns a collective thrust and a body torque into rotor speeds.
//!
//! Motor dynamics, per rotor, towards the commanded speed `c` (utiasDSL drone-models' form):
//! `dω/dt = k₁·(c − ω) + k₂·(c² − ω²)`, with `(k₁, k₂)` = `spin_up` when `c > ω`, else
//! `spin_down`. A first-order lag of time constant τ is `[1/τ, 0]` (RotorS's `time_constant_up`
//! and `time_constant_down`); `motor_tau` sets both when neither is given. Integrated exactly
//! for the rate `k₁ + k₂·(c + ω)` held over the step, so it never overshoots `c`.
//!
//! A motor that speeds its rotor up turns the body the other way: with each rotor's moment of
//! inertia `J` about its spin axis (`rotor_inertia`), the rotors add `Σ sᵢ·J·dωᵢ/dt` to the yaw
//! torque, `sᵢ` the sign of rotor i's drag torque, `dωᵢ/dt` its mean over the step (the reaction
//! term of utiasDSL drone-models' `first_principles` model). It acts as the speed changes, before
//! the drag torque has followed. The rotors' gyroscopic torque in roll and pitch (their angular
//! momentum turned with the body) is left out.

use nalgebra::{Matrix4, Vector3, Vector4};
use serde::Deserialize;

/// Rotor layout.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Arms at ±45° and ±135° from the body x axis.
    #[default]
    X,
    /// Arms along ±x and ±y.
    Plus,
}

/// Rotor and motor parameters (SI units).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AirframeParams {
    /// Distance from the centre to each rotor axis (m).
    #[serde(default = "d_arm")]
    pub arm: f64,
    /// Thrust coefficient: thrust = k_f·ω² (N·s²/rad²).
    #[serde(default = "d_kf")]
    pub k_f: f64,
    /// Drag-torque coefficient: torque = k_m·ω² (N·m·s²/rad²).
    #[serde(default = "d_km")]
    pub k_m: f64,
    /// Rotor speed limits (rad/s).
    #[serde(default = "d_omega_min")]
    pub omega_min: f64,
    /// Maximum rotor speed (rad/s).
    #[serde(default = "d_omega_max")]
    pub omega_max: f64,
    /// Motor time constant (s): the first-order lag both ways unless `spin_up` or `spin_down`
    /// says otherwise.
    #[serde(default = "d_motor_tau")]
    pub motor_tau: f64,
    /// Spin-up rates `[k₁ (1/s), k₂ (1/(rad/s)/s)]` (module docs); default `[1/motor_tau, 0]`.
    #[serde(default)]
    pub spin_up: Option<[f64; 2]>,
    /// Spin-down rates, as `spin_up`.
    #[serde(default)]
    pub spin_down: Option<[f64; 2]>,
    /// Each rotor's moment of inertia about its spin axis, propeller and motor rotor (kg·m²; 0:
    /// none): the reaction torque of its speed changes (module docs).
    #[serde(default)]
    pub rotor_inertia: f64,
    /// Delay between a speed command and the motor starting towards it (s; rounded to whole
    /// steps); 0: none.
    #[serde(default)]
    pub motor_delay: f64,
    /// Thrust curve `[c₀, c₁, c₂]` (N, N/(rad/s), N/(rad/s)²) in place of `k_f·ω²`: thrust
    /// `c₀ + c₁·ω + c₂·ω²`. The mixer inverts it.
    #[serde(default)]
    pub thrust_curve: Option<[f64; 3]>,
    /// Rotor speed at the start (rad/s, every rotor; default 0: stopped): a flight that starts
    /// in hover, as an identified model's initial state does.
    #[serde(default)]
    pub start_speed: f64,
    /// Rotor layout.
    #[serde(default)]
    pub layout: Layout,
    /// Rotor and body drag ([`crate::aero`]; default none).
    #[serde(default)]
    pub drag: crate::aero::Drag,
    /// Ground effect ([`crate::aero`]; absent: none).
    #[serde(default)]
    pub ground_effect: Option<crate::aero::GroundEffect>,
    /// Downwash from the vehicles above ([`crate::aero`]; absent: none).
    #[serde(default)]
    pub downwash: Option<crate::aero::Downwash>,
    /// The battery ([`crate::battery`]; absent: an ideal supply).
    #[serde(default)]
    pub battery: Option<crate::battery::BatteryParams>,
}

fn d_arm() -> f64 {
    0.17
}
fn d_kf() -> f64 {
    6.0e-6
}
fn d_km() -> f64 {
    1.0e-7
}
fn d_omega_min() -> f64 {
    100.0
}
fn d_omega_max() -> f64 {
    1000.0
}
fn d_motor_tau() -> f64 {
    0.02
}

impl Default for AirframeParams {
    fn default() -> Self {
        serde_json::from_str("{}").expect("defaults parse")
    }
}

/// The four rotors and their motors.
#[derive(Clone, Debug)]
pub struct Airframe {
    /// The parameters.
    pub params: AirframeParams,
    /// From rotor thrusts to [collective, τx, τy, τz].
    allocation: Matrix4<f64>,
    /// Its inverse.
    mixer: Matrix4<f64>,
    /// Rotor speeds now (rad/s).
    omega: [f64; 4],
    /// Each rotor's mean acceleration over the last step (rad/s²).
    accel: [f64; 4],
    /// Whether the motors run; when not, the rotors spin down to zero.
    pub armed: bool,
    /// Thrust curve `[c₀, c₁, c₂]` (from `thrust_curve` or `k_f`).
    curve: [f64; 3],
    /// Spin-up and spin-down rates.
    rates: [[f64; 2]; 2],
    /// Commands not yet reaching the motors (the delay), oldest first.
    delayed: std::collections::VecDeque<[f64; 4]>,
    /// The delay in steps (0: the command acts at once).
    delay_steps: usize,
    /// Rotor hub positions (x, y) in the body frame.
    hubs: [[f64; 2]; 4],
    /// Spin signs (+1: the rotor's drag torque is +z).
    spins: [f64; 4],
}

impl Airframe {
    /// An airframe at rest (rotors stopped), stepped every `timestep` seconds.
    pub fn new(params: AirframeParams, timestep: f64) -> Result<Self, String> {
        use crate::check::positive;
        positive("arm", params.arm)?;
        positive("k_f", params.k_f)?;
        positive("k_m", params.k_m)?;
        positive("omega_max", params.omega_max)?;
        positive("motor_tau", params.motor_tau)?;
        crate::check::non_negative("start_speed", params.start_speed)?;
        crate::check::non_negative("rotor_inertia", params.rotor_inertia)?;
        params.drag.validate()?;
        if let Some(g) = &params.ground_effect {
            g.validate()?;
        }
        if let Some(d) = &params.downwash {
            d.validate()?;
        }
        if !(params.omega_min >= 0.0 && params.omega_min < params.omega_max) {
            return Err(format!(
                "invalid descriptor: 'omega_min' must be in [0, omega_max), got {}",
                params.omega_min
            ));
        }
        let l = params.arm;
        let d = l / std::f64::consts::SQRT_2;
        // Rotor positions (x, y) in the body frame and spin signs (+1: its drag torque is +z);
        // diagonally opposite rotors spin the same way.
        let rotors = match params.layout {
            Layout::X => [(d, -d, 1.0), (d, d, -1.0), (-d, d, 1.0), (-d, -d, -1.0)],
            Layout::Plus => [
                (l, 0.0, 1.0),
                (0.0, l, -1.0),
                (-l, 0.0, 1.0),
                (0.0, -l, -1.0),
            ],
        };
        let curve = params.thrust_curve.unwrap_or([0.0, 0.0, params.k_f]);
        if !(curve.iter().all(|c| c.is_finite()) && curve[2] > 0.0) {
            return Err(format!(
                "invalid descriptor: 'thrust_curve' must be finite with c₂ > 0, got {curve:?}"
            ));
        }
        let first_order = [1.0 / params.motor_tau, 0.0];
        let rates = [
            params.spin_up.unwrap_or(first_order),
            params.spin_down.unwrap_or(first_order),
        ];
        for (name, r) in [("spin_up", rates[0]), ("spin_down", rates[1])] {
            if !(r.iter().all(|k| k.is_finite() && *k >= 0.0) && r[0] + r[1] > 0.0) {
                return Err(format!(
                    "invalid descriptor: '{name}' must be two finite rates >= 0, not both 0, got {r:?}"
                ));
            }
        }
        if !(params.motor_delay.is_finite() && (0.0..=1.0).contains(&params.motor_delay)) {
            return Err(format!(
                "invalid descriptor: 'motor_delay' must be in [0, 1] s, got {}",
                params.motor_delay
            ));
        }
        let delay_steps = (params.motor_delay / timestep).round() as usize;
        // The mixer's yaw row: drag torque over thrust at hover-like speeds, k_m / c₂.
        let ratio = params.k_m / curve[2];
        let mut allocation = Matrix4::zeros();
        for (i, &(x, y, s)) in rotors.iter().enumerate() {
            allocation[(0, i)] = 1.0;
            allocation[(1, i)] = y;
            allocation[(2, i)] = -x;
            allocation[(3, i)] = s * ratio;
        }
        let mixer = allocation
            .try_inverse()
            .ok_or("the rotor layout cannot produce every torque")?;
        Ok(Airframe {
            omega: [params.start_speed; 4],
            accel: [0.0; 4],
            params,
            allocation,
            mixer,
            armed: true,
            curve,
            rates,
            delayed: std::collections::VecDeque::with_capacity(delay_steps + 1),
            delay_steps,
            hubs: rotors.map(|(x, y, _)| [x, y]),
            spins: rotors.map(|(_, _, s)| s),
        })
    }

    /// Rotor hub positions (x, y) in the body frame (m).
    pub fn hubs(&self) -> [[f64; 2]; 4] {
        self.hubs
    }

    /// The thrust of one rotor at speed `omega` (N), never below 0.
    pub fn thrust_at(&self, omega: f64) -> f64 {
        let [c0, c1, c2] = self.curve;
        (c0 + c1 * omega + c2 * omega * omega).max(0.0)
    }

    /// The speed at which one rotor gives `thrust` (rad/s; 0 when even a stopped rotor gives
    /// more).
    pub fn speed_for(&self, thrust: f64) -> f64 {
        let [c0, c1, c2] = self.curve;
        let disc = c1 * c1 - 4.0 * c2 * (c0 - thrust);
        if disc <= 0.0 {
            return 0.0;
        }
        ((-c1 + disc.sqrt()) / (2.0 * c2)).max(0.0)
    }

    /// A rotor's drag torque over its thrust (m): the mixer's yaw row, `k_m / c₂`.
    pub fn drag_ratio(&self) -> f64 {
        self.params.k_m / self.curve[2]
    }

    /// Rotor speeds (rad/s).
    pub fn rotor_speeds(&self) -> [f64; 4] {
        self.omega
    }

    /// The rotor speeds that produce `thrust` (N, along body z) and `torque` (N·m, body frame),
    /// within the speed limits.
    pub fn mix(&self, thrust: f64, torque: &Vector3<f64>) -> [f64; 4] {
        let f = self.mixer * Vector4::new(thrust, torque.x, torque.y, torque.z);
        let p = &self.params;
        std::array::from_fn(|i| self.speed_for(f[i]).clamp(p.omega_min, p.omega_max))
    }

    /// Moves the rotor speeds towards `command` for `dt` seconds (the motor dynamics of the
    /// module docs), after the delay, each at most `cap` (rad/s: what the battery allows).
    pub fn spin(&mut self, command: &[f64; 4], dt: f64, cap: f64) {
        self.delayed.push_back(*command);
        let acting = if self.delayed.len() > self.delay_steps {
            self.delayed.pop_front().unwrap_or(*command)
        } else {
            // The delay has not passed since the first command: the motors hold still.
            self.omega
        };
        for ((w, a), &c) in self.omega.iter_mut().zip(&mut self.accel).zip(&acting) {
            let target = if self.armed { c.min(cap) } else { 0.0 };
            let [k1, k2] = self.rates[usize::from(target <= *w)];
            let rate = k1 + k2 * (target + *w).max(0.0);
            let change = (target - *w) * (1.0 - (-rate * dt).exp());
            *w += change;
            *a = if dt > 0.0 { change / dt } else { 0.0 };
        }
    }

    /// Collective thrust (N, body z) and torque (N·m, body frame) of the rotors now, each
    /// rotor's thrust scaled by `gain[i]` (ground effect; 1 for none); the yaw torque with the
    /// reaction of the last step's speed changes (module docs).
    pub fn wrench(&self, gain: &[f64; 4]) -> (f64, Vector3<f64>) {
        let f = Vector4::from_fn(|i, _| self.thrust_at(self.omega[i]) * gain[i]);
        let w = self.allocation * f;
        // The drag torque follows the speed, not the ground effect's thrust gain.
        let (k_m, j) = (self.params.k_m, self.params.rotor_inertia);
        let yaw: f64 = (0..4)
            .map(|i| self.spins[i] * (k_m * self.omega[i].powi(2) + j * self.accel[i]))
            .sum();
        (w[0], Vector3::new(w[1], w[2], yaw))
    }

    /// The rotors' mechanical power as a share of all four at `omega_max` (ω³ scaling).
    pub fn power_share(&self) -> f64 {
        let max = self.params.omega_max.powi(3) * 4.0;
        self.omega.iter().map(|w| w.powi(3)).sum::<f64>() / max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(json: &str) -> AirframeParams {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn motors_spin_up_and_down_with_their_own_time_constants_after_the_delay() {
        // RotorS's Hummingbird: up 0.0125 s, down 0.025 s; a 3 ms delay at a 1 ms step.
        let p =
            params(r#"{ "spin_up": [80.0, 0.0], "spin_down": [40.0, 0.0], "motor_delay": 0.003 }"#);
        let mut a = Airframe::new(p, 0.001).unwrap();
        let up = [800.0; 4];
        for _ in 0..3 {
            a.spin(&up, 0.001, f64::INFINITY);
            assert_eq!(a.rotor_speeds(), [0.0; 4], "moved within the delay");
        }
        // 12.5 ms of spinning after the delay: 1 − 1/e of the step.
        for _ in 0..13 {
            a.spin(&up, 0.001, f64::INFINITY);
        }
        let w = a.rotor_speeds()[0];
        let want = 800.0 * (1.0 - (-80.0_f64 * 0.013).exp());
        assert!((w - want).abs() < 1e-9, "{w} vs {want}");
        // Settle, then down to 400: the slower constant.
        for _ in 0..2000 {
            a.spin(&up, 0.001, f64::INFINITY);
        }
        let down = [400.0; 4];
        for _ in 0..3 + 25 {
            a.spin(&down, 0.001, f64::INFINITY);
        }
        let w = a.rotor_speeds()[0];
        let want = 400.0 + 400.0 * (-40.0_f64 * 0.025).exp();
        assert!((w - want).abs() < 1e-6, "{w} vs {want}");
    }

    #[test]
    fn a_motor_speeding_up_turns_the_body_the_other_way_at_once() {
        // Rotor 0 (drag torque +z) asked 100 rad/s more with a 0.1 s lag, the others held: over
        // one 1 ms step its speed rises by 100·(1 − e^(−0.01)), and the yaw torque gains that
        // change's reaction, J·Δω/Δt, beside the drag torque of the new speeds.
        let json = |j: f64| {
            format!(r#"{{ "motor_tau": 0.1, "start_speed": 500.0, "rotor_inertia": {j} }}"#)
        };
        let dt = 0.001;
        let mut with = Airframe::new(params(&json(3.0e-8)), dt).unwrap();
        let mut without = Airframe::new(params(&json(0.0)), dt).unwrap();
        let command = [600.0, 500.0, 500.0, 500.0];
        with.spin(&command, dt, f64::INFINITY);
        without.spin(&command, dt, f64::INFINITY);
        let rise = 100.0 * (1.0 - (-dt / 0.1_f64).exp());
        assert!((with.rotor_speeds()[0] - (500.0 + rise)).abs() < 1e-9);
        let (_, t_with) = with.wrench(&[1.0; 4]);
        let (_, t_without) = without.wrench(&[1.0; 4]);
        let reaction = 3.0e-8 * rise / dt;
        assert!(
            (t_with.z - t_without.z - reaction).abs() < 1e-15,
            "{} vs {reaction}",
            t_with.z - t_without.z
        );
        assert_eq!((t_with.x, t_with.y), (t_without.x, t_without.y));
        // Once the speeds hold, the reaction is gone.
        for _ in 0..5000 {
            with.spin(&command, dt, f64::INFINITY);
            without.spin(&command, dt, f64::INFINITY);
        }
        let (_, held) = with.wrench(&[1.0; 4]);
        assert!((held.z - without.wrench(&[1.0; 4]).1.z).abs() < 1e-15);
        // A negative inertia is refused by name.
        let err = Airframe::new(params(&json(-1.0)), dt).unwrap_err();
        assert!(err.contains("rotor_inertia"), "{err}");
    }

    #[test]
    fn the_quadratic_motor_rate_is_drone_models_form() {
        // dω/dt = k₂(c² − ω²) = k₂(c − ω)(c + ω): over a short step, the rate k₂(c + ω).
        let p =
            params(r#"{ "spin_up": [0.0, 0.002], "spin_down": [0.0, 0.002], "omega_max": 3000 }"#);
        let mut a = Airframe::new(p, 1e-5).unwrap();
        a.spin(&[1000.0; 4], 1e-5, f64::INFINITY);
        // From 0: the rate is k₂·c = 2/s, so ω ≈ c·(1 − e^(−2·1e-5)).
        let w = a.rotor_speeds()[0];
        assert!(
            (w - 1000.0 * (1.0 - (-2.0e-5_f64).exp())).abs() < 1e-9,
            "{w}"
        );
    }

    #[test]
    fn the_thrust_curve_is_inverted_by_the_mixer_and_a_battery_cap_holds_the_speed() {
        // drone-models' cf2x_L250 thrust in rad/s units.
        let c = 60.0 / std::f64::consts::TAU;
        let curve = [
            0.0,
            -5.382196214637237e-7 * c,
            2.4582929831265485e-10 * c * c,
        ];
        let p = AirframeParams {
            thrust_curve: Some(curve),
            arm: 0.046,
            omega_min: 0.0,
            omega_max: 2500.0,
            ..AirframeParams::default()
        };
        let mut a = Airframe::new(p, 0.001).unwrap();
        let hover = 0.0319 * 9.81;
        let speeds = a.mix(hover, &Vector3::zeros());
        let each = a.thrust_at(speeds[0]);
        assert!((4.0 * each - hover).abs() < 1e-12, "{each}");
        // ~19,000 rpm at hover.
        assert!(
            (speeds[0] * c - 18_960.0).abs() < 100.0,
            "{} rpm",
            speeds[0] * c
        );
        for _ in 0..3000 {
            a.spin(&speeds, 0.001, 1500.0);
        }
        assert!((a.rotor_speeds()[0] - 1500.0).abs() < 1e-6);
        let (thrust, _) = a.wrench(&[1.0; 4]);
        assert!((thrust - 4.0 * a.thrust_at(1500.0)).abs() < 1e-12);
    }
}
