//! The quadrotor's physical model: four rotors with thrust `k_f·ω²` and drag torque `k_m·ω²`,
//! speed limits and a first-order motor lag, and the mixer that turns a collective thrust and a
//! body torque into rotor speeds.

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
    /// Motor time constant (s).
    #[serde(default = "d_motor_tau")]
    pub motor_tau: f64,
    /// Rotor layout.
    #[serde(default)]
    pub layout: Layout,
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
    /// Whether the motors run; when not, the rotors spin down to zero.
    pub armed: bool,
}

impl Airframe {
    /// An airframe at rest (rotors stopped).
    pub fn new(params: AirframeParams) -> Result<Self, String> {
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!(
                    "invalid descriptor: '{name}' must be a finite number > 0, got {v}"
                ))
            }
        };
        positive("arm", params.arm)?;
        positive("k_f", params.k_f)?;
        positive("k_m", params.k_m)?;
        positive("omega_max", params.omega_max)?;
        positive("motor_tau", params.motor_tau)?;
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
        let ratio = params.k_m / params.k_f;
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
            params,
            allocation,
            mixer,
            omega: [0.0; 4],
            armed: true,
        })
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
        std::array::from_fn(|i| {
            (f[i].max(0.0) / p.k_f)
                .sqrt()
                .clamp(p.omega_min, p.omega_max)
        })
    }

    /// Moves the rotor speeds towards `command` for `dt` seconds (first-order lag).
    pub fn spin(&mut self, command: &[f64; 4], dt: f64) {
        let a = 1.0 - (-dt / self.params.motor_tau).exp();
        for (w, &c) in self.omega.iter_mut().zip(command) {
            let target = if self.armed { c } else { 0.0 };
            *w += (target - *w) * a;
        }
    }

    /// Collective thrust (N, body z) and torque (N·m, body frame) of the rotors now.
    pub fn wrench(&self) -> (f64, Vector3<f64>) {
        let f = Vector4::from_fn(|i, _| self.params.k_f * self.omega[i] * self.omega[i]);
        let w = self.allocation * f;
        (w[0], Vector3::new(w[1], w[2], w[3]))
    }
}
